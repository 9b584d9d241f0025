// Checkerboard Metropolis for the q-state Potts model, colour-split layout.
// Bit-identical with crates/potts/src/cpu.rs: see algorithm.rs for the rule
// and layout.rs for the indexing.
#include "warpmc_rng.cuh"

using warpmc::rng::u32;
using warpmc::rng::u64;
using warpmc::rng::Words4;
typedef unsigned char u8;

#define TABLE_LEN 27

__device__ __forceinline__ u8 metropolis_site(u8 old, u8 a, u8 b, u8 c, u8 d, u32 w0, u32 w1, u32 q,
                                              const u64* table) {
    u32 nw = (u32)old + 1u + (u32)(((u64)w0 * (u64)(q - 1u)) >> 32);
    if (nw >= q) nw -= q;
    u8 s = (u8)nw;
    int n_old = (a == old) + (b == old) + (c == old) + (d == old);
    int n_new = (a == s) + (b == s) + (c == s) + (d == s);
    int d0 = (s == 0) - (old == 0);
    return ((u64)w1 < table[(n_new - n_old + 4) * 3 + (d0 + 1)]) ? s : old;
}

// One colour of one sweep. Thread k (grid-stride) serves pair k: sites
// j = 2k and 2k + 1 of this colour, from one Philox block.
extern "C" __global__ void potts_metropolis_colour(u8* __restrict__ mine, const u8* __restrict__ other, u32 hw,
                                                   u32 h, u32 q, u64 seed, u64 stream, u64 sweep, u32 colour,
                                                   const u64* __restrict__ table_g, u64 pairs) {
    __shared__ u64 table[TABLE_LEN];
    if (threadIdx.x < TABLE_LEN) table[threadIdx.x] = table_g[threadIdx.x];
    __syncthreads();
    const u64 step = (2ull * sweep + colour) << 32;
    for (u64 k = (u64)blockIdx.x * blockDim.x + threadIdx.x; k < pairs; k += (u64)gridDim.x * blockDim.x) {
        Words4 r = warpmc::rng::philox_block(seed, stream, step | k);
        u32 w[4] = {r.w0, r.w1, r.w2, r.w3};
#pragma unroll
        for (int e = 0; e < 2; ++e) {
            u64 j = 2 * k + e;
            u64 y = j / hw;
            u32 xh = (u32)(j - y * hw);
            u32 o = (u32)((y + colour) & 1);
            u32 left = (xh + o == 0) ? hw - 1 : xh + o - 1;
            u32 right = (xh + o == hw) ? 0 : xh + o;
            u64 up = (y == 0 ? (u64)h - 1 : y - 1) * hw;
            u64 down = (y + 1 == h ? 0 : y + 1) * hw;
            const u8* row = other + y * hw;
            mine[j] = metropolis_site(mine[j], row[left], row[right], other[up + xh], other[down + xh], w[2 * e],
                                      w[2 * e + 1], q, table);
        }
    }
}

// Equal-neighbour bonds and state counts. out[0] = bonds, out[1 + s] = sites
// in state s; out must be zeroed before the launch. Only these q + 1 numbers
// leave the device.
extern "C" __global__ void potts_census(const u8* __restrict__ c0, const u8* __restrict__ c1, u32 hw, u32 h, u32 q,
                                        unsigned long long* out) {
    __shared__ unsigned int hist[256];
    __shared__ unsigned long long bonds_block;
    for (u32 i = threadIdx.x; i < 256; i += blockDim.x) hist[i] = 0;
    if (threadIdx.x == 0) bonds_block = 0;
    __syncthreads();
    const u64 n = (u64)hw * h;
    unsigned long long bonds = 0;
    for (u64 j = (u64)blockIdx.x * blockDim.x + threadIdx.x; j < n; j += (u64)gridDim.x * blockDim.x) {
        u64 y = j / hw;
        u32 xh = (u32)(j - y * hw);
        u32 o = (u32)(y & 1);
        u32 left = (xh + o == 0) ? hw - 1 : xh + o - 1;
        u32 right = (xh + o == hw) ? 0 : xh + o;
        u64 up = (y == 0 ? (u64)h - 1 : y - 1) * hw;
        u64 down = (y + 1 == h ? 0 : y + 1) * hw;
        u8 s = c0[j];
        const u8* row = c1 + y * hw;
        bonds += (s == row[left]) + (s == row[right]) + (s == c1[up + xh]) + (s == c1[down + xh]);
        atomicAdd(&hist[s], 1u);
        atomicAdd(&hist[c1[j]], 1u);
    }
    // Warp sum first, one shared atomic per warp.
    for (int off = 16; off > 0; off >>= 1) bonds += __shfl_down_sync(0xffffffffu, bonds, off);
    if ((threadIdx.x & 31) == 0) atomicAdd(&bonds_block, bonds);
    __syncthreads();
    if (threadIdx.x == 0) atomicAdd(&out[0], bonds_block);
    for (u32 i = threadIdx.x; i < q; i += blockDim.x)
        if (hist[i]) atomicAdd(&out[1 + i], (unsigned long long)hist[i]);
}
