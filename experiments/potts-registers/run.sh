#!/bin/bash
# Builds registers.cu for q = 9 and q = 2 and runs it on a GPU machine: bit
# checks of each variant against potts_sliced_resident at L = 2048, then
# timings beside the library's tiled kernel. Logs under ${OUT:-.}.
set -e
cd "$(dirname "$0")"
out=${OUT:-.}
. ../potts-common/build.sh
build() { potts_build registers.cu $1 "$out/ptxas-q$1.txt"; }
build 9 &
build 2 &
wait
grep -A2 "Compiling entry.*registers" "$out/ptxas-q9.txt" | grep -v "^--" | paste - - - |
    sed -E 's/ptxas (info|) *:? *//g' | cut -c1-240
if [ -n "$PROFILE" ]; then
    # One launch of each kernel (q = $PROFILE, 200 sweeps) under Nsight
    # Compute: warp states, scheduler and instruction statistics.
    ncu --clock-control none --kernel-name 'regex:potts_sliced_(tiled_inline|registers)' \
        --section WarpStateStats --section SchedulerStats --section LaunchStats --section Occupancy \
        --section InstructionStats --section SpeedOfLight ./registers-q$PROFILE 0 200 profile > "$out/ncu-q$PROFILE.txt" 2>&1 || true
fi
if [ -n "$SASS" ]; then
    # Per SASS instruction: executed count and stall samples, for the
    # library's kernel and the kernels matching $SASS (q = 9, 200 sweeps).
    ncu --clock-control none --kernel-name "regex:potts_sliced_(tiled_inline|$SASS)" --set full --import-source yes \
        -o "$out/prof" ./registers-q9 0 200 profile > "$out/ncu-sass.log" 2>&1 || true
    ncu --import "$out/prof.ncu-rep" --page source --csv --print-source sass > "$out/sass.csv" 2>&1 || true
    ncu --import "$out/prof.ncu-rep" --print-summary none --page details > "$out/details.txt" 2>&1 || true
    rm -f "$out/prof.ncu-rep"
    exit 0
fi
status=0
for q in ${QS:-9 2}; do
    ./registers-q$q ${SWEEPS_CHECK:-37} ${SWEEPS_TIME:-10000} || status=1
done
exit $status
