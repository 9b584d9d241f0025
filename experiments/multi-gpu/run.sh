#!/usr/bin/env bash
# Potts strips on every GPU of one machine under mpirun, one process per GPU,
# edge rows and census through NCCL (`--decompose strips --halo nccl`):
#
# 1. identity: the raw series and final lattice of 2 processes on 2 GPUs
#    (NCCL, then MPI through host memory) against one process on the CPU,
#    byte for byte, for four protocols (both random-number rules, a field,
#    continued temperatures, two lattices in strips one after another);
# 2. scaling: weak (32768² per GPU) and strong (65536²), q = 2 and q = 9,
#    on 1 … N GPUs, beside one GPU running the whole lattice with its best
#    single-lattice kernel (no MPI) in the same run.
#
#   experiments/multi-gpu/run.sh DIR OUT          # both parts
#   ONLY=identity experiments/multi-gpu/run.sh DIR OUT   # or ONLY=scaling
#
# DIR holds `warpmc` built with `--features mpi` and root.tgz (Open MPI's
# launcher, see experiments/mpi-on-gpu/README.md); OUT receives the logs,
# and scaling.csv with one row per run.
set -u
D=$(cd "${1:?usage: run.sh DIR OUT}" && pwd)
OUT=${2:?usage: run.sh DIR OUT}
mkdir -p "$OUT"
if ! command -v orterun >/dev/null; then
    mkdir -p /tmp/ompiroot && tar xzf "$D/root.tgz" -C /tmp/ompiroot && (cd /tmp/ompiroot && cp -an . /)
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1 OMPI_MCA_btl_vader_single_copy_mechanism=none
W=$D/warpmc
NG=$(nvidia-smi -L | wc -l)
T=$(mktemp -d)
{ nvidia-smi -L; nvidia-smi topo -m; orterun --version | head -1; } > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"
fail=0

# --- 1. identity ---------------------------------------------------------
if [ "${ONLY:-all}" != scaling ]; then
# run TAG PROCESSES BACKEND HALO ARGS...: 0 processes is one process without mpirun.
run() {
    local tag=$1 n=$2 b=$3 h=$4
    shift 4
    local f="$T/$tag-$n-$b-$h"
    local cmd=("$W" potts run --backend "$b" --json --series "$f.npy" --snapshot "$f-lattice.npy" "$@")
    if [ "$n" = 0 ]; then
        "${cmd[@]}" >"$f.json" 2>"$f.err"
    else
        orterun --bind-to none -np "$n" "${cmd[@]}" --decompose strips --halo "$h" >"$f.json" 2>"$f.err"
    fi || { echo "$tag, $n processes, $b, $h: failed: $(tail -3 "$f.err")"; fail=1; }
}
same() {
    local f="$T/$1-$2-$3-$4"
    if cmp -s "$T/$1-0-cpu-none.npy" "$f.npy" && cmp -s "$T/$1-0-cpu-none-lattice.npy" "$f-lattice.npy"; then
        echo "$1: $2 processes, $3, halo $4: same series and lattice"
    else
        echo "$1: $2 processes, $3, halo $4: DIFFERENT"
        fail=1
    fi
}
A="--q 3 --size 22 --height 26 --field 0.3 --temps 0.9,1.0 --continue --init random --therm 40 --sweeps 200 --measure-every 4"
B="--q 9 --size 128 --height 40 --temp 0.72 --init random --therm 40 --sweeps 200 --measure-every 4"
C="--q 2 --size 1024 --height 520 --field -0.1 --temp 1.2 --init random --therm 100 --sweeps 400 --measure-every 10"
E="--q 10 --size 576 --height 64 --temps 0.69,0.71 --init random --therm 50 --sweeps 200 --measure-every 5"
for t in A B C E; do
    eval "args=\$$t"
    # shellcheck disable=SC2086
    run $t 0 cpu none $args
    for n in $(seq 1 "$NG"); do
        for h in nccl mpi; do
            # shellcheck disable=SC2086
            run $t "$n" cuda $h $args
            same $t "$n" cuda $h
        done
    done
done
grep -h "edge rows" "$T"/B-*-cuda-nccl.err "$T"/B-*-cuda-mpi.err 2>/dev/null | head -4
cat "$T"/*.err > "$OUT/identity-stderr.txt" 2>/dev/null
fi

# --- 2. scaling ----------------------------------------------------------
echo "q,gpus,width,height,how,flips_per_ns,wall_s" > "$OUT/scaling.csv"
# scale Q GPUS WIDTH HEIGHT HOW SWEEPS: HOW is whole (one process, no MPI),
# nccl or mpi (strips under mpirun).
scale() {
    local q=$1 n=$2 w=$3 h=$4 how=$5 sweeps=$6
    local tc
    tc=$(python3 -c "import math; print(1/math.log(1+math.sqrt($q)))")
    local f="$T/scale-q$q-$n-$w-$h-$how"
    local args=(potts run --backend cuda --q "$q" --size "$w" --height "$h" --temp "$tc" --init random
        --therm 10 --sweeps "$sweeps" --measure-every "$sweeps" --out "$f.csv")
    local t0 t1
    t0=$(date +%s.%N)
    if [ "$how" = whole ]; then
        "$W" "${args[@]}" >"$f.log" 2>&1
    else
        orterun --bind-to none -np "$n" "$W" "${args[@]}" --decompose strips --halo "$how" >"$f.log" 2>&1
    fi || { echo "scaling q=$q $n GPUs $w×$h $how: failed: $(tail -2 "$f.log")"; cp "$f.log" "$OUT/"; fail=1; return; }
    t1=$(date +%s.%N)
    local rate
    rate=$(python3 -c "
import csv
rows = [r for r in csv.DictReader(l for l in open('$f.csv') if not l.startswith('#'))]
print(rows[-1]['flips_per_ns'])")
    echo "$q,$n,$w,$h,$how,$rate,$(python3 -c "print(round($t1 - $t0, 2))")" | tee -a "$OUT/scaling.csv"
    grep -h "^potts:" "$f.log" | head -1 >> "$OUT/scaling-runs.txt"
}
[ "${ONLY:-all}" = identity ] && exit $fail
# Weak scaling for q = 2 and 9 (and q = 2 with edge rows through MPI and
# host memory), then strong scaling for q = 2. (mpirun binds one or two
# processes to one core each by default, which slows every half-sweep down
# several times: --bind-to none.)
for q in 2 9; do
    scale $q 1 32768 32768 whole 3000
    for n in $(seq 1 "$NG"); do
        scale $q "$n" 32768 $((32768 * n)) nccl 3000
    done
    scale $q "$NG" 32768 $((32768 * NG)) mpi 3000
done
for n in $(seq 1 "$NG"); do
    scale 2 "$n" 65536 65536 nccl 1000
done
exit $fail
