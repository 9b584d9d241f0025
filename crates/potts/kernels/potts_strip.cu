// One strip of a lattice (strip.rs, cuda_strip.rs): n rows of each colour
// array, starting at a lattice row that is a multiple of UNIT_ROWS, with
// a halo row above and one below (array rows 0 and n + 1; strip row j is
// array row j + 1). Periodic in x, halo rows in y. Units are numbered as
// in the whole lattice (the strip's first unit is first_unit), so each
// draws the Philox-seeded generators it draws in potts.cu's whole-lattice
// kernels and ends in the same bits; the site and word updates are
// potts.cu's, included here.
//
// A launch updates `count` of the strip's row-blocks: the i-th is
// row-block b0 + i * step (the first and last: b0 = 0, step = B - 1; the
// interior: b0 = 1, step = 1), so the edge rows can be sent while the
// interior is updated on another stream.
#include "potts.cu"

// ---- One byte per spin: the one-word-per-site rule ---------------------------

// One colour of one Metropolis sweep over the launch's row-blocks; thread
// (grid-stride) i serves unit i of them: units_per_row units per row-block.
extern "C" __global__ void potts_strip_generic(u8* __restrict__ mine, const u8* __restrict__ other, u32 hw, u32 n,
                                               u32 q, u64 seed, u64 stream, u64 sweep, u32 colour,
                                               const u64* __restrict__ table_g, u32 units_per_row, u64 first_unit,
                                               u32 b0, u32 step, u64 units) {
    __shared__ u64 table[TABLE_LEN];
    if (threadIdx.x < TABLE_LEN) table[threadIdx.x] = table_g[threadIdx.x];
    __syncthreads();
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < units; i += (u64)gridDim.x * blockDim.x) {
        const u32 nth = (u32)(i / units_per_row);
        const u32 ux = (u32)(i - (u64)nth * units_per_row);
        const u32 b = b0 + nth * step;
        u64 g[2];
        unit_generators(seed, stream, sweep, colour, first_unit + (u64)b * units_per_row + ux, g[0], g[1]);
        const u32 x0 = ux * UNIT_COLS;
        const u32 y0 = b * UNIT_ROWS;
        const u32 y1 = min(y0 + UNIT_ROWS, n);
        const u32 x1 = min(x0 + UNIT_COLS, hw);
        for (u32 y = y0; y < y1; ++y) {
            // The strip starts at an even lattice row: y's parity is the lattice row's.
            const u32 o = (y + colour) & 1u;
            const u8* row = other + (u64)(y + 1) * hw;
            const u8* up = other + (u64)y * hw;
            const u8* down = other + (u64)(y + 2) * hw;
            u64& gen = g[(y - y0) & 1u];
            for (u32 xh = x0; xh < x1; ++xh) {
                const u32 r = mwc_step(gen);
                const u32 left = (xh + o == 0) ? hw - 1 : xh + o - 1;
                const u32 right = (xh + o == hw) ? 0 : xh + o;
                u8* s = mine + (u64)(y + 1) * hw + xh;
                *s = metropolis_site(*s, row[left], row[right], up[xh], down[xh], r, q, table);
            }
        }
    }
}

// The strip's part of the census: equal bonds of its colour-0 sites with
// their four neighbours (halo rows included) in out[0], sites in state s
// (both colours, strip rows only) in out[1 + s]; out must be zeroed before
// the launch. The parts of all strips add up to the lattice's census.
extern "C" __global__ void potts_strip_generic_census(const u8* __restrict__ c0, const u8* __restrict__ c1, u32 hw,
                                                      u32 n, u32 q, unsigned long long* out) {
    generic_census_into<true>(c0, c1, hw, n, q, out);
}

// ---- Bit planes: the bit-sliced rule -----------------------------------------

// One colour of one sweep over the launch's row-blocks, one row of a unit
// per thread: thread t serves row (t / 32) mod 8 of unit (t / 256) * 32 +
// t mod 32 of the launch (neighbouring lanes take neighbouring units:
// coalesced rows), wr units per row-block. sigma, th0..th3: the rule
// (sliced.rs, SlicedRule).
extern "C" __global__ void __launch_bounds__(128)
    potts_strip_sliced(u32* __restrict__ mine, const u32* __restrict__ other, u32 wr, u64 seed, u64 stream,
                       u64 sweep, u32 colour, int sigma, u32 th0, u32 th1, u32 th2, u32 th3, u64 first_unit, u32 b0,
                       u32 step, u64 units) {
    __shared__ uint4 masks[33];
    fill_masks(masks, th0, th1, th2, th3);
    const u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    const u64 i = (t / (32 * UNIT_ROWS)) * 32 + (t & 31);
    const u32 part = (u32)(t >> 5) % UNIT_ROWS;
    if (i >= units) return;
    const u32 nth = (u32)(i / wr);
    const u32 wx = (u32)(i - (u64)nth * wr);
    const u32 b = b0 + nth * step;
    const u64 k = first_unit + (u64)b * wr + wx;
    const u32 y = b * UNIT_ROWS + part;  // strip row; array row y + 1
    u32 s[SL_P], nb[4][SL_P];            // up, down, same row, side
    load_planes(nb[0], other, y, wx, wr);
    load_planes(nb[1], other, y + 2, wx, wr);
    load_planes(nb[2], other, y + 1, wx, wr);
    side_planes(nb[3], nb[2], other, y + 1, wx, wr, (y + colour) & 1u);
    load_planes(s, mine, y + 1, wx, wr);
    u64 g = row_generator(seed, stream, sweep, colour, k, part);
    sliced_word<true>(s, nb, g, sigma, masks);
    store_planes(mine, s, y + 1, wx, wr);
}

// The same update, one thread per unit (its eight rows in turn, as
// potts_sliced_colour): for launches of enough units to fill the GPU that
// way, where it issues fewer instructions per site. The bits are those of
// potts_strip_sliced (each row's generator is drawn as there).
extern "C" __global__ void __launch_bounds__(128)
    potts_strip_sliced_unit(u32* __restrict__ mine, const u32* __restrict__ other, u32 wr, u64 seed, u64 stream,
                            u64 sweep, u32 colour, int sigma, u32 th0, u32 th1, u32 th2, u32 th3, u64 first_unit,
                            u32 b0, u32 step, u64 units) {
    __shared__ uint4 masks[33];
    fill_masks(masks, th0, th1, th2, th3);
    const u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= units) return;
    const u32 nth = (u32)(i / wr);
    const u32 wx = (u32)(i - (u64)nth * wr);
    const u32 b = b0 + nth * step;
    const u64 k = first_unit + (u64)b * wr + wx;
    const u32 y0 = b * UNIT_ROWS;  // strip row; array row y0 + 1
    u32 nb[4][SL_P];               // up, down, same row, side
    load_planes(nb[0], other, y0, wx, wr);
    load_planes(nb[2], other, y0 + 1, wx, wr);
    u64 g[UNIT_ROWS];
#pragma unroll
    for (int r = 0; r < UNIT_ROWS; ++r) {
        const u32 y = y0 + r;
        // One Philox block per pair of rows, as row_generator draws them.
        if (r % 2 == 0) row_generators<2>(seed, stream, sweep, colour, k, r, g + r);
        u32 s[SL_P];
        load_planes(nb[1], other, y + 2, wx, wr);
        load_planes(s, mine, y + 1, wx, wr);
        side_planes(nb[3], nb[2], other, y + 1, wx, wr, (y + colour) & 1u);
        sliced_word<false>(s, nb, g[r], sigma, masks);
        store_planes(mine, s, y + 1, wx, wr);
#pragma unroll
        for (int p = 0; p < SL_P; ++p) {
            nb[0][p] = nb[2][p];
            nb[2][p] = nb[1][p];
        }
    }
}

// The strip's part of the census on bit planes (as
// potts_strip_generic_census): out[0] equal bonds, out[1 + v] sites in
// state v; out must be zeroed before the launch.
extern "C" __global__ void potts_strip_sliced_census(const u32* __restrict__ c0, const u32* __restrict__ c1, u32 wr,
                                                     u32 n, unsigned long long* out) {
    sliced_census_into<true>(c0, c1, wr, n, out);
}
