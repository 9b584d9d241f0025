#!/bin/bash
# Builds tiled.cu for q = 9 and q = 2 and runs it on a GPU machine: bit
# checks of the library's tiled kernel and its variants against
# potts_sliced_resident at L = 256, 1024 and 2048, then timings at L = 1024
# and 2048. Logs under ${OUT:-.}.
set -e
cd "$(dirname "$0")"
out=${OUT:-.}
. ../potts-common/build.sh
build() { potts_build tiled.cu $1 "$out/ptxas-q$1.txt"; }
build 9 &
build 2 &
wait
grep -A2 "Compiling entry.*tiled\|Compiling entry.*resident" "$out/ptxas-q9.txt" | grep -v "^--" | paste - - - |
    sed -E 's/ptxas (info|) *:? *//g' | cut -c1-220
if [ -n "$PROFILE" ]; then
    # One launch of each kernel (q = $PROFILE, L = 2048, 200 sweeps: the
    # resident kernel, the library's tiled kernel, the geometric skip) under
    # Nsight Compute: details.txt, and per SASS line the stall reasons
    # (sass.csv).
    ncu --clock-control none --kernel-name 'regex:potts_sliced|tiled_inline_rule' --set full --import-source yes \
        -o "$out/prof" ./tiled-q$PROFILE 2048 0 200 profile > "$out/ncu.log" 2>&1
    ncu --import "$out/prof.ncu-rep" --print-summary none --page details > "$out/details.txt"
    ncu --import "$out/prof.ncu-rep" --page source --csv --print-source sass > "$out/sass.csv"
    rm -f "$out/prof.ncu-rep"
    grep -E "potts_sliced|Duration|Executed Ipc Active|Executed Instructions  |Warp Cycles Per Issued|Registers Per" \
        "$out/details.txt"
    exit 0
fi
# A failed check prints FAIL and makes the run's status non-zero; the
# other sizes still run.
status=0
for q in 9 2; do
    ./tiled-q$q 256 21 0 || status=1
    ./tiled-q$q 1024 21 ${SWEEPS_TIME:-20000} || status=1
    ./tiled-q$q 2048 ${SWEEPS_CHECK:-37} ${SWEEPS_TIME:-20000} || status=1
done
exit $status
