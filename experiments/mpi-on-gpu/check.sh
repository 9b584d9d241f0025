#!/usr/bin/env bash
# One lattice in strips on 1, 2 and 4 MPI processes sharing one GPU, against
# one process on the CPU: the raw series and the final lattice must be equal
# byte for byte. Meant for a GPU machine that has Open MPI 4.1's libraries
# but no launcher: DIR holds `warpmc` (built with --features mpi) and
# root.tgz, a tree of Open MPI's launcher and help files (usr/bin/orterun,
# usr/bin/orted, usr/share/openmpi, etc/openmpi) unpacked over / where
# orterun is missing (never replacing a file).
#
#   experiments/mpi-on-gpu/check.sh DIR
set -u
D=$(cd "${1:?usage: check.sh DIR}" && pwd)
if ! command -v orterun >/dev/null; then
    mkdir -p /tmp/ompiroot && tar xzf "$D/root.tgz" -C /tmp/ompiroot && (cd /tmp/ompiroot && cp -an . /)
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1 OMPI_MCA_btl_vader_single_copy_mechanism=none
W=$D/warpmc
T=$(mktemp -d)
orterun --version | head -1
nvidia-smi -L
fail=0
# run TAG PROCESSES BACKEND ARGS...: 0 processes is one process without mpirun.
run() {
    local tag=$1 n=$2 b=$3
    shift 3
    local cmd=("$W" potts run --backend "$b" --json --series "$T/$tag-$n-$b.npy" --snapshot "$T/$tag-$n-$b-lattice.npy" "$@")
    if [ "$n" = 0 ]; then
        "${cmd[@]}" >"$T/$tag-$n-$b.json" 2>"$T/$tag-$n-$b.err"
    else
        orterun --oversubscribe -np "$n" "${cmd[@]}" >"$T/$tag-$n-$b.json" 2>"$T/$tag-$n-$b.err"
    fi || { echo "$tag, $n processes, $b: failed: $(tail -1 "$T/$tag-$n-$b.err")"; fail=1; }
}
# same TAG PROCESSES BACKEND: against one process on the CPU.
same() {
    if cmp -s "$T/$1-0-cpu.npy" "$T/$1-$2-$3.npy" && cmp -s "$T/$1-0-cpu-lattice.npy" "$T/$1-$2-$3-lattice.npy"; then
        echo "$1: $2 processes, $3: same series and lattice"
    else
        echo "$1: $2 processes, $3: DIFFERENT"
        fail=1
    fi
}
# The one-word-per-site rule with a field and a continued chain, the
# bit-sliced rule, and a larger lattice with real strip interiors.
A="--q 3 --size 22 --height 26 --field 0.3 --temps 0.9,1.0 --continue --init random --therm 40 --sweeps 200 --measure-every 4"
B="--q 9 --size 128 --height 40 --temp 0.72 --init random --therm 40 --sweeps 200 --measure-every 4"
C="--q 2 --size 1024 --height 520 --field -0.1 --temp 1.2 --init random --therm 100 --sweeps 400 --measure-every 10"
for t in A B C; do
    eval "args=\$$t"
    # shellcheck disable=SC2086
    run $t 0 cpu $args --decompose strips
    for n in 1 2 4; do
        # shellcheck disable=SC2086
        run $t $n cuda $args --decompose strips
        same $t $n cuda
    done
    # shellcheck disable=SC2086
    run $t 2 cpu $args --decompose strips
    same $t 2 cpu
done
exit $fail
