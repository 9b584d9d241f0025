#!/bin/bash
# Builds and runs the tiled-kernel prototype on a GPU machine: bit checks
# against potts_sliced_resident, then timings. Logs under ${OUT:-.}.
set -e
cd "$(dirname "$0")"
out=${OUT:-.}
nvcc -O3 -arch=sm_90 -std=c++17 -lineinfo -I../../crates/rng/kernels -DPOTTS_Q=${Q:-9} -DPOTTS_TABLE_LEN=27 \
    -DPOTTS_UNIT_ROWS=8 -DPOTTS_UNIT_COLS=8 -DPOTTS_MWC_A=4278189678u -DPOTTS_HB_ENTRIES=10 \
    -Xptxas -v -o tiled tiled.cu 2> "$out/ptxas.txt" || { cat "$out/ptxas.txt"; exit 1; }
grep -A1 "potts_sliced_tiled\|potts_sliced_resident" "$out/ptxas.txt" | grep -i "registers\|Compiling" | head -40
cuobjdump -sass tiled > "$out/sass.txt" 2>/dev/null || true
./tiled 256 21 0
./tiled 1024 21 0
./tiled 2048 ${SWEEPS_CHECK:-37} ${SWEEPS_TIME:-20000}
