#!/bin/bash
# ncu on the prototype's N=1, 1024-thread kernel; per-instruction counts.
set -e
cd "$(dirname "$0")"
out=${OUT:-.}
nvcc -O3 -arch=sm_90 -std=c++17 -lineinfo -I../../crates/rng/kernels -DPOTTS_Q=${Q:-9} -DPOTTS_TABLE_LEN=27 \
    -DPOTTS_UNIT_ROWS=8 -DPOTTS_UNIT_COLS=8 -DPOTTS_MWC_A=4278189678u -DPOTTS_HB_ENTRIES=10 -o tiled tiled.cu
ncu --clock-control none --kernel-name regex:tiled2 --launch-skip 1 --launch-count 1 --set full --import-source yes \
    -o "$out/prof2" ./tiled 2048 5 200 profile > "$out/ncu2.log" 2>&1 || true
ncu --import "$out/prof2.ncu-rep" --print-summary none --page details > "$out/details2.txt" 2>&1 || true
ncu --import "$out/prof2.ncu-rep" --page source --csv --print-source sass > "$out/sass2.csv" 2>&1 || true
grep -E "Duration|Executed Ipc|Issue Slots|Eligible Warps|Warp Cycles Per Issued|Executed Instructions |Registers Per|Achieved Active|highest-utilized|pipeline" "$out/details2.txt" | head -30
rm -f "$out/prof2.ncu-rep"
