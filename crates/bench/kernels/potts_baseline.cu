// The updateCUDA kernel of Ferrero et al. (2012), as Wolovick's course notes
// give it, as a benchmark baseline: one byte per
// spin in colour-compacted arrays, a fixed set of 512 x 256 threads each
// owning one multiply-with-carry generator held in registers and updating
// one site per 512 x 512 frame, two random floats per update (proposal and
// acceptance) compared against e^{-dE/T}. The exponential is tabulated on the
// host (the notes observe this changes nothing on the GPU) so the CPU
// reference in potts_baseline.rs reproduces it exactly; float operations are
// written with explicit rounding so NVRTC cannot contract them.
#include "warpmc_rng.cuh"

using warpmc::rng::u32;
using warpmc::rng::u64;
typedef unsigned char u8;

// The frame shape comes from potts_baseline.rs (FRAME_ROWS, FRAME_COLS).
#if !defined(BENCH_FRAME_ROWS) || !defined(BENCH_FRAME_COLS)
#error "potts_baseline.cu is compiled by warpmc_bench::potts_baseline, which defines BENCH_FRAME_*"
#endif
#define FRAME_ROWS BENCH_FRAME_ROWS
#define FRAME_COLS BENCH_FRAME_COLS

extern "C" __global__ void baseline_seed(u64* state, u32* mult, const u32* table, u32 table_len, u64 seed) {
    u32 tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= FRAME_ROWS * FRAME_COLS) return;
    warpmc::rng::Mwc g = warpmc::rng::mwc_for_unit(seed, tid, table, table_len);
    state[tid] = g.state;
    mult[tid] = g.a;
}

// Block (FRAME_COLS, 1), grid (1, FRAME_ROWS): thread (tx, ty).
extern "C" __global__ void baseline_update(u8* write, const u8* read, u32 hw, u32 h, u32 q, u32 colour,
                                           const float* boltz /* e^{-dE/T}, dE = 1..4 */, u64* state,
                                           const u32* mult) {
    const u32 tx = threadIdx.x, ty = blockIdx.y;
    const u32 tid = ty * FRAME_COLS + tx;
    warpmc::rng::Mwc g;
    g.state = state[tid];
    g.a = mult[tid];
    const float qm1 = (float)(q - 1);
    for (u32 y = ty; y < h; y += FRAME_ROWS) {
        const u32 o = (y + colour) & 1;
        const u8* row = read + (u64)y * hw;
        const u8* up = read + (u64)(y == 0 ? h - 1 : y - 1) * hw;
        const u8* down = read + (u64)(y + 1 == h ? 0 : y + 1) * hw;
        for (u32 xh = tx; xh < hw; xh += FRAME_COLS) {
            const u32 left = (xh + o == 0) ? hw - 1 : xh + o - 1;
            const u32 right = (xh + o == hw) ? 0 : xh + o;
            const u8 old = write[(u64)y * hw + xh];
            const u8 a = row[left], b = row[right], c = up[xh], d = down[xh];
            const int before = -(old == a) - (old == b) - (old == c) - (old == d);
            const float u = warpmc::rng::u32_to_f32(g.next_u32());
            const u8 nw = (u8)(((u32)old + (u32)(u8)__fadd_rn(1.0f, __fmul_rn(u, qm1))) % q);
            const int after = -(nw == a) - (nw == b) - (nw == c) - (nw == d);
            const int de = after - before;
            const float p = warpmc::rng::u32_to_f32(g.next_u32());
            if (de <= 0 || p <= boltz[de - 1]) write[(u64)y * hw + xh] = nw;
        }
    }
    state[tid] = g.state;
}
