# Sourced by the Potts kernel experiments' run.sh: potts_build SRC Q LOG
# compiles SRC (a .cu beside the caller) for q = Q into SRC's name with
# -qQ, with the constants the library's kernels are compiled with
# (crates/potts/src/cuda.rs) and ptxas's register report in LOG. Those
# constants are copied here by hand: when cuda.rs changes one, change it
# here too, or the experiments measure another kernel than the library's.
potts_build() {
    local src=$1 q=$2 log=$3
    nvcc -O3 -arch=sm_90 -std=c++17 -lineinfo -I../../crates/rng/kernels -DPOTTS_Q=$q -DPOTTS_TABLE_LEN=27 \
        -DPOTTS_UNIT_ROWS=8 -DPOTTS_UNIT_COLS=8 -DPOTTS_MWC_A=4278189678u -DPOTTS_HB_ENTRIES=10 \
        -DPOTTS_TILED_HALO=4 -DPOTTS_TILED_THREADS=1024 -DPOTTS_TILED_DRAWS=4 \
        -Xptxas -v -o "${src%.cu}-q$q" "$src" 2> "$log" || { cat "$log"; return 1; }
}
