#!/bin/bash
# ncu on the prototype's kernels (one launch each of 200 sweeps).
set -e
cd "$(dirname "$0")"
out=${OUT:-.}
nvcc -O3 -arch=sm_90 -std=c++17 -lineinfo -I../../crates/rng/kernels -DPOTTS_Q=${Q:-9} -DPOTTS_TABLE_LEN=27 \
    -DPOTTS_UNIT_ROWS=8 -DPOTTS_UNIT_COLS=8 -DPOTTS_MWC_A=4278189678u -DPOTTS_HB_ENTRIES=10 -o tiled tiled.cu
ncu --clock-control none --section SpeedOfLight --section SchedulerStats --section WarpStateStats \
    --section InstructionStats --section ComputeWorkloadAnalysis --section LaunchStats --section Occupancy \
    --metrics smsp__inst_executed.sum,smsp__thread_inst_executed.sum,sm__cycles_elapsed.avg \
    --import-source yes --set full -o "$out/prof" ./tiled 2048 5 200 profile > "$out/ncu.log" 2>&1 || true
ncu --import "$out/prof.ncu-rep" --print-summary none --page details > "$out/details.txt" 2>&1 || true
ncu --import "$out/prof.ncu-rep" --page raw --csv --metrics smsp__inst_executed.sum,smsp__thread_inst_executed.sum,sm__cycles_elapsed.avg,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio > "$out/raw.csv" 2>&1 || true
tail -5 "$out/ncu.log"
grep -E "Duration|Executed Ipc|Issue Slots Busy|No Eligible|Active Warps Per|Warp Cycles Per Issued|Executed Instructions |Stall|Registers|Achieved Occ" "$out/details.txt" | head -80
