// Ensembles: many lattices of one model in the same launches (ensemble.rs,
// cuda_ensemble.rs). Each member has its own chain (seed, stream) and its
// own acceptance rule, and draws exactly the random numbers it would draw
// alone: the update code is potts.cu's, included here, so every member
// ends in the same bits as the same chain on CudaBackend or the CPU.
//
// Storage, member m: colour c at lattices + (2m + c) * words (words per
// colour: hw * h bytes for the byte-per-spin rule, wr * h * SL_P u32 for
// the bit-sliced rule), in potts.cu's layout.
//
//   *_shared   one block per member, the whole lattice in shared memory
//              for every sweep of the call (small lattices);
//   *_colour   one colour of one sweep, a grid over (tile, member) reading
//              global memory (lattices too large for shared memory).
#include "potts.cu"

// ---- Bit planes --------------------------------------------------------------

// Per-member rule: sigma and the four thresholds (sliced.rs, SlicedRule).
struct SlicedMember {
    int sigma;
    u32 th[4];
};

__device__ __forceinline__ SlicedMember sliced_member(const int* sigmas, const u32* ths, u32 m) {
    SlicedMember r;
    r.sigma = sigmas[m];
#pragma unroll
    for (int i = 0; i < 4; ++i) r.th[i] = ths[4 * m + i];
    return r;
}

// Every sweep of the call for member blockIdx.x, its lattice in shared
// memory (2 * words u32, dynamic). Thread i serves row-words i, i +
// blockDim.x, ...: row y = j / wr, word w = j mod wr, i.e. row y mod 8 of
// unit (y / 8) * wr + w, as potts_sliced_colour_split8 does.
extern "C" __global__ void __launch_bounds__(1024)
    potts_ens_sliced_shared(u32* __restrict__ lattices, u32 wr, u32 h, const u64* __restrict__ seeds,
                            const u64* __restrict__ streams, const int* __restrict__ sigmas,
                            const u32* __restrict__ ths, u64 first_sweep, u32 sweeps) {
    extern __shared__ uint4 lat_words[];  // 16-byte aligned for load_planes
    u32* lat = (u32*)lat_words;
    __shared__ uint4 masks[33];
    const u32 m = blockIdx.x;
    const SlicedMember r = sliced_member(sigmas, ths, m);
    fill_masks(masks, r.th[0], r.th[1], r.th[2], r.th[3]);
    const u32 words = wr * h * SL_P;
    u32* g = lattices + (u64)m * 2 * words;
    for (u32 i = threadIdx.x; i < 2 * words; i += blockDim.x) lat[i] = g[i];
    __syncthreads();
    const u64 seed = seeds[m], stream = streams[m];
    const u32 items = wr * h;
    for (u32 s = 0; s < sweeps; ++s) {
        for (u32 colour = 0; colour < 2; ++colour) {
            u32* mine = lat + colour * words;
            const u32* other = lat + (colour ^ 1u) * words;
            for (u32 j = threadIdx.x; j < items; j += blockDim.x) {
                const u32 y = j / wr, w = j - (j / wr) * wr;
                const u64 k = (u64)(y / UNIT_ROWS) * wr + w;
                sliced_unit<8>(mine, other, wr, h, seed, stream, first_sweep + s, colour, r.sigma, masks, k,
                               y % UNIT_ROWS);
            }
            __syncthreads();
        }
    }
    for (u32 i = threadIdx.x; i < 2 * words; i += blockDim.x) g[i] = lat[i];
}

// One colour of sweep *sweep_base + sweep_add of every member (the base in
// device memory, so that a recorded graph of sweeps replays at any
// position): blockIdx.y is the member; in x the threads map to units as
// potts_sliced_colour[_splitN].
template <int PAR>
__device__ __forceinline__ void ens_sliced_colour(u32* __restrict__ lattices, u32 wr, u32 h,
                                                  const u64* __restrict__ seeds, const u64* __restrict__ streams,
                                                  const int* __restrict__ sigmas, const u32* __restrict__ ths,
                                                  const u64* __restrict__ sweep_base, u64 sweep_add, u32 colour,
                                                  u64 units) {
    __shared__ uint4 masks[33];
    const u32 m = blockIdx.y;
    const SlicedMember r = sliced_member(sigmas, ths, m);
    fill_masks(masks, r.th[0], r.th[1], r.th[2], r.th[3]);
    const u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    const u64 k = (t / (32 * PAR)) * 32 + (t & 31);
    const u32 part = (u32)(t >> 5) % PAR;
    if (k >= units) return;
    const u64 words = (u64)wr * h * SL_P;
    u32* base = lattices + (u64)m * 2 * words;
    sliced_unit<PAR>(base + colour * words, base + (colour ^ 1u) * words, wr, h, seeds[m], streams[m],
                     *sweep_base + sweep_add, colour, r.sigma, masks, k, part);
}

#define ENS_SLICED_KERNEL(NAME, PAR)                                                                              \
    extern "C" __global__ void __launch_bounds__(128)                                                             \
        NAME(u32* __restrict__ lattices, u32 wr, u32 h, const u64* __restrict__ seeds,                            \
             const u64* __restrict__ streams, const int* __restrict__ sigmas, const u32* __restrict__ ths,         \
             const u64* __restrict__ sweep_base, u64 sweep_add, u32 colour, u64 units) {                          \
        ens_sliced_colour<PAR>(lattices, wr, h, seeds, streams, sigmas, ths, sweep_base, sweep_add, colour,       \
                               units);                                                                            \
    }
ENS_SLICED_KERNEL(potts_ens_sliced_colour, 1)
ENS_SLICED_KERNEL(potts_ens_sliced_colour_split, 2)
ENS_SLICED_KERNEL(potts_ens_sliced_colour_split4, 4)
ENS_SLICED_KERNEL(potts_ens_sliced_colour_split8, 8)

// Census of every member: out[m * (q + 1)] equal bonds, out[m * (q + 1) + 1 + v]
// sites in state v; blockIdx.y is the member; out zeroed before the launch.
extern "C" __global__ void potts_ens_sliced_census(const u32* __restrict__ lattices, u32 wr, u32 h,
                                                   unsigned long long* out) {
    const u32 m = blockIdx.y;
    const u64 words = (u64)wr * h * SL_P;
    const u32* c0 = lattices + (u64)m * 2 * words;
    sliced_census_into<false>(c0, c0 + words, wr, h, out + (u64)m * (POTTS_Q + 1));
}

// ---- One byte per spin -------------------------------------------------------
//
// Metropolis (potts.cu's MetropolisSite, TABLE_LEN words per member) or
// heat-bath (HeatBathSite, HB_TABLE_WORDS words per member): the same
// storage, units and generators, one template per site rule.

// The rows of one parity (even or odd) of unit k of one colour: the unit's
// generator of that parity gives one word to each site, row by row, left to
// right, as potts_generic_colour does for the whole unit.
template <class Site>
__device__ __forceinline__ void generic_unit_rows(u8* __restrict__ mine, const u8* __restrict__ other, u32 hw, u32 h,
                                                  u64 seed, u64 stream, u64 sweep, u32 colour, const Site& site,
                                                  u32 units_per_row, u64 k, u32 parity) {
    u64 g[2];
    unit_generators(seed, stream, sweep, colour, k, g[0], g[1]);
    u64 gen = g[parity];
    const u32 ub = (u32)(k / units_per_row);
    const u32 x0 = (u32)(k - (u64)ub * units_per_row) * UNIT_COLS;
    const u32 y0 = ub * UNIT_ROWS;
    const u32 y1 = min(y0 + UNIT_ROWS, h);
    const u32 x1 = min(x0 + UNIT_COLS, hw);
    for (u32 y = y0 + parity; y < y1; y += 2) {
        const u32 o = (y + colour) & 1u;
        const u8* row = other + (u64)y * hw;
        const u8* up = other + (u64)(y == 0 ? h - 1 : y - 1) * hw;
        const u8* down = other + (u64)(y + 1 == h ? 0 : y + 1) * hw;
        for (u32 xh = x0; xh < x1; ++xh) {
            const u32 r = mwc_step(gen);
            const u32 left = (xh + o == 0) ? hw - 1 : xh + o - 1;
            const u32 right = (xh + o == hw) ? 0 : xh + o;
            u8* s = mine + (u64)y * hw + xh;
            *s = site(*s, row[left], row[right], up[xh], down[xh], r);
        }
    }
}

// Every sweep of the call for member blockIdx.x in shared memory (2 * hw * h
// bytes, dynamic); tables: WORDS entries per member. Thread i serves
// (unit, parity) pairs i, i + blockDim.x, ...
template <int WORDS, class Site>
__device__ __forceinline__ void ens_generic_shared(u8* __restrict__ lattices, u32 hw, u32 h, u32 q,
                                                   const u64* __restrict__ seeds, const u64* __restrict__ streams,
                                                   const u64* __restrict__ tables, u32 units_per_row, u64 units,
                                                   u64 first_sweep, u32 sweeps) {
    extern __shared__ u8 bytes[];
    __shared__ u64 table[WORDS];
    const u32 m = blockIdx.x;
    for (u32 i = threadIdx.x; i < WORDS; i += blockDim.x) table[i] = tables[(u64)m * WORDS + i];
    const u64 n = (u64)hw * h;
    u8* g = lattices + (u64)m * 2 * n;
    for (u64 i = threadIdx.x; i < 2 * n; i += blockDim.x) bytes[i] = g[i];
    __syncthreads();
    const u64 seed = seeds[m], stream = streams[m];
    const Site site{table, q};
    for (u32 s = 0; s < sweeps; ++s) {
        for (u32 colour = 0; colour < 2; ++colour) {
            u8* mine = bytes + colour * n;
            const u8* other = bytes + (colour ^ 1u) * n;
            for (u64 j = threadIdx.x; j < 2 * units; j += blockDim.x)
                generic_unit_rows(mine, other, hw, h, seed, stream, first_sweep + s, colour, site, units_per_row, j >> 1,
                                  (u32)(j & 1));
            __syncthreads();
        }
    }
    for (u64 i = threadIdx.x; i < 2 * n; i += blockDim.x) g[i] = bytes[i];
}

// One colour of sweep *sweep_base + sweep_add of every member (blockIdx.y),
// a grid-stride loop over (unit, parity) pairs in x.
template <int WORDS, class Site>
__device__ __forceinline__ void ens_generic_colour(u8* __restrict__ lattices, u32 hw, u32 h, u32 q,
                                                   const u64* __restrict__ seeds, const u64* __restrict__ streams,
                                                   const u64* __restrict__ tables, u32 units_per_row, u64 units,
                                                   const u64* __restrict__ sweep_base, u64 sweep_add, u32 colour) {
    __shared__ u64 table[WORDS];
    const u32 m = blockIdx.y;
    for (u32 i = threadIdx.x; i < WORDS; i += blockDim.x) table[i] = tables[(u64)m * WORDS + i];
    __syncthreads();
    const u64 n = (u64)hw * h;
    const u64 sweep = *sweep_base + sweep_add;
    u8* base = lattices + (u64)m * 2 * n;
    const Site site{table, q};
    for (u64 j = (u64)blockIdx.x * blockDim.x + threadIdx.x; j < 2 * units; j += (u64)gridDim.x * blockDim.x)
        generic_unit_rows(base + colour * n, base + (colour ^ 1u) * n, hw, h, seeds[m], streams[m], sweep, colour,
                          site, units_per_row, j >> 1, (u32)(j & 1));
}

#define ENS_GENERIC_KERNELS(NAME, WORDS, SITE)                                                                     \
    extern "C" __global__ void __launch_bounds__(1024)                                                             \
        potts_ens_##NAME##_shared(u8* __restrict__ lattices, u32 hw, u32 h, u32 q, const u64* __restrict__ seeds,   \
                                  const u64* __restrict__ streams, const u64* __restrict__ tables,                  \
                                  u32 units_per_row, u64 units, u64 first_sweep, u32 sweeps) {                      \
        ens_generic_shared<WORDS, SITE>(lattices, hw, h, q, seeds, streams, tables, units_per_row, units,           \
                                        first_sweep, sweeps);                                                      \
    }                                                                                                              \
    extern "C" __global__ void potts_ens_##NAME##_colour(                                                          \
        u8* __restrict__ lattices, u32 hw, u32 h, u32 q, const u64* __restrict__ seeds,                            \
        const u64* __restrict__ streams, const u64* __restrict__ tables, u32 units_per_row, u64 units,             \
        const u64* __restrict__ sweep_base, u64 sweep_add, u32 colour) {                                            \
        ens_generic_colour<WORDS, SITE>(lattices, hw, h, q, seeds, streams, tables, units_per_row, units,          \
                                        sweep_base, sweep_add, colour);                                            \
    }
ENS_GENERIC_KERNELS(generic, TABLE_LEN, MetropolisSite)
ENS_GENERIC_KERNELS(heat_bath, HB_TABLE_WORDS, HeatBathSite)

// Census of every member (blockIdx.y), as potts_generic_census: out[m * (q + 1)]
// bonds, out[m * (q + 1) + 1 + s] sites in state s; out zeroed before.
extern "C" __global__ void potts_ens_generic_census(const u8* __restrict__ lattices, u32 hw, u32 h, u32 q,
                                                    unsigned long long* out) {
    const u32 m = blockIdx.y;
    const u64 n = (u64)hw * h;
    const u8* c0 = lattices + (u64)m * 2 * n;
    generic_census_into<false>(c0, c0 + n, hw, h, q, out + (u64)m * (q + 1));
}
