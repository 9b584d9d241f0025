// One 2048² bit-sliced lattice held in registers: each warp keeps RPW rows
// of both colours (one 32-site word per lane and row: a colour-row of a
// 2048-wide lattice is exactly 32 words), takes its side neighbours' edge
// bits from the next lane by shuffle, its up and down neighbours from its
// own registers, and only its first and last rows' outer neighbours from
// the warps beside it (shared memory) or, at a strip's edges, from the
// neighbouring block (64-bit words tagged with their colour step, as
// tiled_sweeps_inline trades them). The rule is the library's
// (sliced_word's steps, row_generators' seeding), so every variant is
// compared bit for bit with potts_sliced_resident, then timed beside it
// and beside the library's tiled kernel with edge rows inside the update.
//
//   registers check_sweeps time_sweeps
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

#include "../../crates/potts/kernels/potts.cu"
#include "../potts-common/host.cuh"

// Words per colour-row: the lattice is 2048 sites wide.
constexpr u32 WR = 32;

// A colour as a type, so that a generic lambda can take it as a constant.
template <u32 V>
struct Colour {
    static constexpr u32 value = V;
};

// The rows of one thread (RPW words, one per row, of the colour being
// updated): proposals, energy classes and the bit-serial acceptance test,
// exactly as sliced_word draws and decides them, with the test's loop
// shared by the rows (a row's generator advancing past the point where its
// sites have all decided changes nothing: the generator is not used again).
// Stores v's SL_P words at dst, each tagged with `tag` in its upper half
// (read by request_words and await_words).
__device__ __forceinline__ void store_tagged(unsigned long long* dst, unsigned long long tag, const u32 (&v)[SL_P]) {
#pragma unroll
    for (int q = 0; q < SL_P; ++q)
        asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(dst + q), "l"(tag | v[q]) : "memory");
}

// Asks for the SL_P tagged words at src (relaxed loads, an L2 round trip);
// await_words waits for them later.
__device__ __forceinline__ void request_words(bool ask, const unsigned long long* src, unsigned long long (&v)[SL_P]) {
    if (ask)
#pragma unroll
        for (int q = 0; q < SL_P; ++q)
            asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v[q]) : "l"(src + q) : "memory");
}

// The words request_words asked for, polled until each shows the tag
// `want` (WAIT = false takes them as they are: wrong bits, for timing what
// the wait costs), into out.
template <bool WAIT = true>
__device__ __forceinline__ void await_words(bool ask, const unsigned long long* src, unsigned long long (&v)[SL_P],
                                            unsigned long long want, u32 (&out)[SL_P]) {
    if (ask)
#pragma unroll
        for (int q = 0; q < SL_P; ++q) {
            while (WAIT && (v[q] & ~0xffffffffull) != want)
                asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v[q]) : "l"(src + q) : "memory");
            out[q] = (u32)v[q];
        }
}

// The neighbour words (up, down, same row, side) of a warp's RPW rows of
// colour C, all from its registers: side bits by shuffle from the next
// lane; the first row's up and the last row's down words are left for the
// caller (they come from beyond the warp).
template <u32 C, int RPW>
__device__ __forceinline__ void row_neighbours(const u32 (&lat)[2][RPW][SL_P], u32 y0, u32 lane,
                                               u32 (&nb)[RPW][4][SL_P]) {
#pragma unroll
    for (int j = 0; j < RPW; ++j) {
        const u32 o = (y0 + j + C) & 1u;
        u32 beside[SL_P];
#pragma unroll
        for (int q = 0; q < SL_P; ++q) {
            nb[j][2][q] = lat[C ^ 1][j][q];
            beside[q] = __shfl_sync(~0u, lat[C ^ 1][j][q], o ? (lane + 1) & 31 : (lane - 1) & 31);
            if (j > 0) nb[j][0][q] = lat[C ^ 1][j > 0 ? j - 1 : 0][q];
            if (j + 1 < RPW) nb[j][1][q] = lat[C ^ 1][j + 1 < RPW ? j + 1 : j][q];
        }
        side_shift(nb[j][3], nb[j][2], beside, o);
    }
}

template <int RPW, int SG>
__device__ __forceinline__ void update_rows(u32 (&s)[RPW][SL_P], const u32 (&nb)[RPW][4][SL_P], u64 (&gen)[RPW],
                                            const uint4* __restrict__ masks) {
    u32 p[RPW][SL_P], acc[RPW];
#pragma unroll
    for (int j = 0; j < RPW; ++j) {
        u32 k[SL_KW];
        proposal_words(gen[j], k);
        propose(s[j], k, p[j]);
        acc[j] = ~0u;
    }
    if (SG != 0) {
        u32 und[RPW], code0[RPW], code1[RPW], gx[RPW], gc[RPW];
#pragma unroll
        for (int j = 0; j < RPW; ++j) {
            und[j] = classify(s[j], p[j], nb[j], SG, code0[j], code1[j]);
            acc[j] = ~und[j];
            gx[j] = (u32)gen[j];
            gc[j] = (u32)(gen[j] >> 32);
        }
#pragma unroll 4
        for (int bit = 31; bit >= 0; --bit) {
            u32 any = 0;
#pragma unroll
            for (int j = 0; j < RPW; ++j) any |= und[j];
            if (any == 0) break;
            const uint4 m = masks[bit + 1];
#pragma unroll
            for (int j = 0; j < RPW; ++j)
                accept_step(warpmc::rng::mwc_step(gx[j], gc[j], MWC_A), m, code0[j], code1[j], und[j], acc[j]);
        }
    }
#pragma unroll
    for (int j = 0; j < RPW; ++j)
#pragma unroll
        for (int i = 0; i < SL_P; ++i) s[j][i] ^= (s[j][i] ^ p[j][i]) & acc[j];
}

// The lattice's 2048 columns as 32 words per colour-row; the grid's G blocks
// hold strips of R = NW * RPW rows (h = G R), warp w of a block rows
// w RPW ... w RPW + RPW - 1 of its strip. xbuf: 2 (step parity) x G x 2
// (side) slots of WR SL_P 64-bit tagged words, zeroed; flags: G zeroed
// words (1 once block b has read its rows, so that its neighbours may
// write theirs back).
template <int NW, int RPW, int SG>
__device__ __forceinline__ void register_sweeps(u32* __restrict__ c0, u32* __restrict__ c1, u32 h, u64 seed,
                                                u64 stream, u64 first_sweep, u32 sweeps, const uint4* masks,
                                                u32 (*edge)[NW][2][SL_P][32], unsigned long long* __restrict__ xbuf,
                                                u32* flags) {
    constexpr u32 R = NW * RPW;
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5, b = blockIdx.x, G = gridDim.x;
    const u32 up = b == 0 ? G - 1 : b - 1, down = b + 1 == G ? 0 : b + 1;
    const u32 y0 = b * R + warp * RPW;
    auto slot = [&](u32 i, u32 blk, u32 side) {
        return xbuf + ((u64)((i & 1) * G + blk) * 2 + side) * (WR * SL_P) + lane * SL_P;
    };
    u32 lat[2][RPW][SL_P];
#pragma unroll
    for (int j = 0; j < RPW; ++j) {
        load_planes<true>(lat[0][j], c0, y0 + j, lane, WR);
        load_planes<true>(lat[1][j], c1, y0 + j, lane, WR);
    }
    // The first step's halo rows (colour 1) from the lattice.
    u32 hu[SL_P], hd[SL_P];
    load_planes<true>(hu, c1, y0 == 0 ? h - 1 : y0 - 1, lane, WR);
    load_planes<true>(hd, c1, y0 + RPW == h ? 0 : y0 + RPW, lane, WR);
    __syncthreads();
    if (threadIdx.x == 0) asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(flags + b), "r"(1u) : "memory");
    const u32 steps = 2 * sweeps;
    auto step = [&](auto colour_tag, u32 i) {
        constexpr u32 C = decltype(colour_tag)::value;
        const u64 sweep = first_sweep + (i >> 1);
        // The neighbouring blocks' edge words of the previous step, asked
        // for first (an L2 round trip), waited for after the work that
        // does not need them.
        const bool poll_up = warp == 0 && i > 0, poll_dn = warp == NW - 1 && i > 0;
        unsigned long long vu[SL_P], vd[SL_P];
        const unsigned long long* su = slot(i - 1, up, 1);
        const unsigned long long* sd = slot(i - 1, down, 0);
        request_words(poll_up, su, vu);
        request_words(poll_dn, sd, vd);
        // The generators: one Philox block per pair of rows.
        u64 gen[RPW];
#pragma unroll
        for (int j = 0; j < RPW; ++j) {
            const u32 y = y0 + j;
            const u64 k = (u64)(y / UNIT_ROWS) * WR + lane;
            if (RPW % 2 == 0) {
                if (j % 2 == 0) row_generators<2>(seed, stream, sweep, C, k, y % UNIT_ROWS, gen + j);
            } else {
                row_generators<1>(seed, stream, sweep, C, k, y % UNIT_ROWS, gen + j);
            }
        }
        // Neighbours: up, down, same row, side.
        u32 nb[RPW][4][SL_P];
        row_neighbours<C, RPW>(lat, y0, lane, nb);
        if (i > 0) {
            const u32 pp = (i - 1) & 1;
            if (warp > 0)
#pragma unroll
                for (int q = 0; q < SL_P; ++q) hu[q] = edge[pp][warp - 1][1][q][lane];
            if (warp + 1 < NW)
#pragma unroll
                for (int q = 0; q < SL_P; ++q) hd[q] = edge[pp][warp + 1][0][q][lane];
            const unsigned long long want = (unsigned long long)i << 32;
            await_words(poll_up, su, vu, want, hu);
            await_words(poll_dn, sd, vd, want, hd);
        }
#pragma unroll
        for (int q = 0; q < SL_P; ++q) {
            nb[0][0][q] = hu[q];
            nb[RPW - 1][1][q] = hd[q];
        }
        update_rows<RPW, SG>(lat[C], nb, gen, masks);
        // Publish the first and last rows: to the warps beside (shared
        // memory) and, at the strip's edges, to the neighbouring blocks.
#pragma unroll
        for (int q = 0; q < SL_P; ++q) {
            edge[i & 1][warp][0][q][lane] = lat[C][0][q];
            edge[i & 1][warp][1][q][lane] = lat[C][RPW - 1][q];
        }
        if (i + 1 < steps) {
            const unsigned long long tag = (unsigned long long)(i + 1) << 32;
            if (warp == 0) store_tagged(slot(i, b, 0), tag, lat[C][0]);
            if (warp == NW - 1) store_tagged(slot(i, b, 1), tag, lat[C][RPW - 1]);
        }
        __syncthreads();
    };
    for (u32 i = 0; i < steps; i += 2) {
        step(Colour<0>{}, i);
        step(Colour<1>{}, i + 1);
    }
    // Back to the lattice once the neighbours have read their first halo rows.
    if (threadIdx.x == 0) wait_at_least(flags + up, 1);
    if (threadIdx.x == 32 % (NW * 32)) wait_at_least(flags + down, 1);
    __syncthreads();
#pragma unroll
    for (int j = 0; j < RPW; ++j) {
        store_planes(c0, lat[0][j], y0 + j, lane, WR);
        store_planes(c1, lat[1][j], y0 + j, lane, WR);
    }
}

template <int NW, int RPW>
__global__ void __launch_bounds__(NW * 32, 1)
    potts_sliced_registers(u32* __restrict__ c0, u32* __restrict__ c1, u32 h, u64 seed, u64 stream, u64 first_sweep,
                           u32 sweeps, int sigma, u32 th0, u32 th1, u32 th2, u32 th3,
                           unsigned long long* __restrict__ xbuf, u32* flags) {
    __shared__ uint4 masks[33];
    // The warps' first and last rows: step parity, warp, side, plane, lane.
    __shared__ u32 edge[2][NW][2][SL_P][32];
    if (threadIdx.x < 33) {
        const u32 bit = threadIdx.x - 1;
        masks[threadIdx.x] = threadIdx.x == 0 ? make_uint4(0, 0, 0, 0)
                                              : make_uint4(0u - ((th0 >> bit) & 1u), 0u - ((th1 >> bit) & 1u),
                                                           0u - ((th2 >> bit) & 1u), 0u - ((th3 >> bit) & 1u));
    }
    __syncthreads();
    if (sigma > 0)
        register_sweeps<NW, RPW, 1>(c0, c1, h, seed, stream, first_sweep, sweeps, masks, edge, xbuf, flags);
    else if (sigma < 0)
        register_sweeps<NW, RPW, -1>(c0, c1, h, seed, stream, first_sweep, sweeps, masks, edge, xbuf, flags);
    else
        register_sweeps<NW, RPW, 0>(c0, c1, h, seed, stream, first_sweep, sweeps, masks, edge, xbuf, flags);
}

// update_rows with the rows' random words drawn ahead by other warps
// (draw_row_pair's layout: row j's field f at wd[(j << 5) + f * fs]): the
// proposal words and the first E acceptance words from shared memory, then
// the generator state left after them.
template <int RPW, int E, int SG>
__device__ __forceinline__ void update_rows_drawn(u32 (&s)[RPW][SL_P], const u32 (&nb)[RPW][4][SL_P],
                                                  const u32* __restrict__ wd, u32 fs,
                                                  const uint4* __restrict__ masks) {
    u32 p[RPW][SL_P], acc[RPW];
#pragma unroll
    for (int j = 0; j < RPW; ++j) {
        u32 k[SL_KW];
#pragma unroll
        for (int f = 0; f < SL_KW; ++f) k[f] = f < SL_B ? wd[(j << 5) + f * fs] : 0u;
        propose(s[j], k, p[j]);
        acc[j] = ~0u;
    }
    if (SG != 0) {
        u32 und[RPW], code0[RPW], code1[RPW], gx[RPW], gc[RPW];
#pragma unroll
        for (int j = 0; j < RPW; ++j) {
            und[j] = classify(s[j], p[j], nb[j], SG, code0[j], code1[j]);
            acc[j] = ~und[j];
        }
#pragma unroll
        for (int e = 0; e < E; ++e)
#pragma unroll
            for (int j = 0; j < RPW; ++j)
                accept_step(wd[(j << 5) + (SL_B + e) * fs], masks[32 - e], code0[j], code1[j], und[j], acc[j]);
#pragma unroll
        for (int j = 0; j < RPW; ++j) {
            gx[j] = wd[(j << 5) + (SL_B + E) * fs];
            gc[j] = wd[(j << 5) + (SL_B + E + 1) * fs];
        }
        for (int bit = 31 - E; bit >= 0; bit -= 4) {
            u32 any = 0;
#pragma unroll
            for (int j = 0; j < RPW; ++j) any |= und[j];
            if (any == 0) break;
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const uint4 m = masks[bit - i + 1];
#pragma unroll
                for (int j = 0; j < RPW; ++j)
                    accept_step(warpmc::rng::mwc_step(gx[j], gc[j], MWC_A), m, code0[j], code1[j], und[j], acc[j]);
            }
        }
    }
#pragma unroll
    for (int j = 0; j < RPW; ++j)
#pragma unroll
        for (int i = 0; i < SL_P; ++i) s[j][i] ^= (s[j][i] ^ p[j][i]) & acc[j];
}

// register_sweeps with ND more warps that draw the next colour step's
// random words (draw_row_pair, E acceptance words ahead) while the NW
// warps holding the lattice update this one.
// Per block and warp: cycles from a colour step's start to the end of the
// warp's work in it, summed (MODE 2).
__device__ unsigned long long g_probe[256][32];

// MODE: 0 the rule; 1 edge words taken without waiting for their step
// (wrong bits, timing only); 2 the rule, timing each warp's work per step
// into g_probe.
template <int NW, int RPW, int ND, int E, int SG, int MODE = 0, int ORDER = 0>
__device__ __forceinline__ void register_sweeps_drawn(u32* __restrict__ c0, u32* __restrict__ c1, u32 h, u64 seed,
                                                      u64 stream, u64 first_sweep, u32 sweeps,
                                                      const uint4* masks, u32 (*edge)[NW][2][SL_P][32], u32* words,
                                                      unsigned long long* __restrict__ xbuf, u32* flags) {
    constexpr u32 R = NW * RPW, F = SL_B + E + 2, fs = R * 32;
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5, b = blockIdx.x, G = gridDim.x;
    const u32 up = b == 0 ? G - 1 : b - 1, down = b + 1 == G ? 0 : b + 1;
    const bool updater = warp < NW;
    // The warp's slab of RPW rows: ORDER 1 puts the strip's edge slabs on
    // warps 0 and 1 (the oldest, first scheduled), so that they publish
    // their edge rows early in each step.
    const u32 slab = ORDER == 0 || warp >= NW ? warp : warp == 0 ? 0 : warp == 1 ? NW - 1 : warp - 1;
    const u32 y0 = b * R + slab * RPW;
    const u64 n0 = 2 * first_sweep;
    auto slot = [&](u32 i, u32 blk, u32 side) {
        return xbuf + ((u64)((i & 1) * G + blk) * 2 + side) * (WR * SL_P) + lane * SL_P;
    };
    // Step i's words, as threads first ... first + stride - 1.
    auto draw = [&](u32 i, u32 first, u32 stride) {
        for (u32 t = threadIdx.x - first; t < (R / 2) * 32; t += stride) {
            const u32 pair = t >> 5, w = t & 31;
            draw_row_pair<E>(seed, stream, n0 + i, b * R + 2 * pair, w, 5, words + (i & 1) * F * fs + (2 * pair << 5) + w,
                             -1, fs, masks);
        }
    };
    u32 lat[2][RPW][SL_P], hu[SL_P], hd[SL_P];
    if (updater) {
#pragma unroll
        for (int j = 0; j < RPW; ++j) {
            load_planes<true>(lat[0][j], c0, y0 + j, lane, WR);
            load_planes<true>(lat[1][j], c1, y0 + j, lane, WR);
        }
        load_planes<true>(hu, c1, y0 == 0 ? h - 1 : y0 - 1, lane, WR);
        load_planes<true>(hd, c1, y0 + RPW == h ? 0 : y0 + RPW, lane, WR);
    }
    draw(0, 0, blockDim.x);
    __syncthreads();
    if (threadIdx.x == 0) asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(flags + b), "r"(1u) : "memory");
    const u32 steps = 2 * sweeps;
    auto step = [&](auto colour_tag, u32 i) {
        constexpr u32 C = decltype(colour_tag)::value;
        const bool poll_up = slab == 0 && i > 0, poll_dn = slab == NW - 1 && i > 0;
        unsigned long long vu[SL_P], vd[SL_P];
        const unsigned long long* su = slot(i - 1, up, 1);
        const unsigned long long* sd = slot(i - 1, down, 0);
        request_words(poll_up, su, vu);
        request_words(poll_dn, sd, vd);
        u32 nb[RPW][4][SL_P];
        row_neighbours<C, RPW>(lat, y0, lane, nb);
        if (i > 0) {
            const u32 pp = (i - 1) & 1;
            if (slab > 0)
#pragma unroll
                for (int q = 0; q < SL_P; ++q) hu[q] = edge[pp][slab - 1][1][q][lane];
            if (slab + 1 < NW)
#pragma unroll
                for (int q = 0; q < SL_P; ++q) hd[q] = edge[pp][slab + 1][0][q][lane];
            const unsigned long long want = (unsigned long long)i << 32;
            await_words<MODE != 1>(poll_up, su, vu, want, hu);
            await_words<MODE != 1>(poll_dn, sd, vd, want, hd);
        }
#pragma unroll
        for (int q = 0; q < SL_P; ++q) {
            nb[0][0][q] = hu[q];
            nb[RPW - 1][1][q] = hd[q];
        }
        update_rows_drawn<RPW, E, SG>(lat[C], nb, words + (i & 1) * F * fs + ((slab * RPW) << 5) + lane, fs, masks);
#pragma unroll
        for (int q = 0; q < SL_P; ++q) {
            edge[i & 1][slab][0][q][lane] = lat[C][0][q];
            edge[i & 1][slab][1][q][lane] = lat[C][RPW - 1][q];
        }
        if (i + 1 < steps) {
            const unsigned long long tag = (unsigned long long)(i + 1) << 32;
            if (slab == 0) store_tagged(slot(i, b, 0), tag, lat[C][0]);
            if (slab == NW - 1) store_tagged(slot(i, b, 1), tag, lat[C][RPW - 1]);
        }
    };
    unsigned long long busy = 0, t0 = 0;
    for (u32 i = 0; i < steps; i += 2) {
        if (MODE == 2) t0 = clock64();
        if (updater)
            step(Colour<0>{}, i);
        else
            draw(i + 1, NW * 32, ND * 32);
        if (MODE == 2) busy += clock64() - t0;
        __syncthreads();
        if (MODE == 2) t0 = clock64();
        if (updater)
            step(Colour<1>{}, i + 1);
        else if (i + 2 < steps)
            draw(i + 2, NW * 32, ND * 32);
        if (MODE == 2) busy += clock64() - t0;
        __syncthreads();
    }
    if (MODE == 2 && lane == 0) g_probe[b][warp] = busy;
    if (threadIdx.x == 0) wait_at_least(flags + up, 1);
    if (threadIdx.x == 32) wait_at_least(flags + down, 1);
    __syncthreads();
    if (updater)
#pragma unroll
        for (int j = 0; j < RPW; ++j) {
            store_planes(c0, lat[0][j], y0 + j, lane, WR);
            store_planes(c1, lat[1][j], y0 + j, lane, WR);
        }
}

template <int NW, int RPW, int ND, int E, int MODE = 0, int ORDER = 0>
__global__ void __launch_bounds__((NW + ND) * 32, 1)
    potts_sliced_registers_drawn(u32* __restrict__ c0, u32* __restrict__ c1, u32 h, u64 seed, u64 stream,
                                 u64 first_sweep, u32 sweeps, int sigma, u32 th0, u32 th1, u32 th2, u32 th3,
                                 unsigned long long* __restrict__ xbuf, u32* flags) {
    __shared__ uint4 masks[33];
    __shared__ u32 edge[2][NW][2][SL_P][32];
    extern __shared__ u32 words[];  // 2 (step parity) x F fields x R rows x 32 words
    if (threadIdx.x < 33) {
        const u32 bit = threadIdx.x - 1;
        masks[threadIdx.x] = threadIdx.x == 0 ? make_uint4(0, 0, 0, 0)
                                              : make_uint4(0u - ((th0 >> bit) & 1u), 0u - ((th1 >> bit) & 1u),
                                                           0u - ((th2 >> bit) & 1u), 0u - ((th3 >> bit) & 1u));
    }
    __syncthreads();
    if (sigma > 0)
        register_sweeps_drawn<NW, RPW, ND, E, 1, MODE, ORDER>(c0, c1, h, seed, stream, first_sweep, sweeps, masks, edge, words,
                                                 xbuf, flags);
    else if (sigma < 0)
        register_sweeps_drawn<NW, RPW, ND, E, -1, MODE, ORDER>(c0, c1, h, seed, stream, first_sweep, sweeps, masks, edge, words,
                                                  xbuf, flags);
    else
        register_sweeps_drawn<NW, RPW, ND, E, 0, MODE, ORDER>(c0, c1, h, seed, stream, first_sweep, sweeps, masks, edge, words,
                                                 xbuf, flags);
}

// register_sweeps_drawn without a block-wide barrier: update warp u and
// drawing warp NW + u form a pair that meets at its own named barrier u
// (after one block-wide barrier at the start) once a step, and the update
// warps trade their first and last rows through shared memory as 64-bit words tagged with the step (as the
// blocks trade theirs through L2), so that a warp waits only for the rows
// it reads and the warps drift within a step of their neighbours instead
// of all waiting for the slowest. Dynamic shared memory: the tagged rows
// (2 x NW x 2 x SL_P x 32 u64), then the drawn words (2 x F fields x R
// rows x 32).
template <int NW, int RPW, int E, int SG>
__device__ __forceinline__ void register_sweeps_flow(u32* __restrict__ c0, u32* __restrict__ c1, u32 h, u64 seed,
                                                     u64 stream, u64 first_sweep, u32 sweeps, const uint4* masks,
                                                     u32* words, unsigned long long* xe,
                                                     unsigned long long* __restrict__ xbuf, u32* flags) {
    constexpr u32 R = NW * RPW, F = SL_B + E + 2, fs = R * 32;
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5, b = blockIdx.x, G = gridDim.x;
    const u32 up = b == 0 ? G - 1 : b - 1, down = b + 1 == G ? 0 : b + 1;
    const bool updater = warp < NW;
    const u32 u = updater ? warp : warp - NW;  // the pair
    const u32 y0 = b * R + u * RPW;
    const u64 n0 = 2 * first_sweep;
    const u32 steps = 2 * sweeps;
    auto slot = [&](u32 i, u32 blk, u32 side) {
        return xbuf + ((u64)((i & 1) * G + blk) * 2 + side) * (WR * SL_P) + lane * SL_P;
    };
    // Tagged row word: step parity, warp, side, plane, lane.
    auto xe_at = [&](u32 i, u32 w, u32 side, u32 q) { return xe + ((((i & 1) * NW + w) * 2 + side) * SL_P + q) * 32 + lane; };
    auto pair_sync = [&]() { asm volatile("bar.sync %0, 64;" ::"r"(u) : "memory"); };
    u32 lat[2][RPW][SL_P], hu[SL_P], hd[SL_P];
    if (updater) {
#pragma unroll
        for (int j = 0; j < RPW; ++j) {
            load_planes<true>(lat[0][j], c0, y0 + j, lane, WR);
            load_planes<true>(lat[1][j], c1, y0 + j, lane, WR);
        }
        load_planes<true>(hu, c1, y0 == 0 ? h - 1 : y0 - 1, lane, WR);
        load_planes<true>(hd, c1, y0 + RPW == h ? 0 : y0 + RPW, lane, WR);
    }
    __syncthreads();
    if (threadIdx.x == 0) asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(flags + b), "r"(1u) : "memory");
    if (!updater) {
        // The pair's rows' words of step i: one row pair per lane and word.
        auto draw = [&](u32 i) {
            if (RPW == 1) {
                const u32 y = y0, ye = y & ~1u;
                draw_row_pair<E>(seed, stream, n0 + i, ye, lane, 5,
                                 words + (i & 1) * F * fs + (((u * RPW) & ~1u) << 5) + lane, (int)(1 - (y & 1)), fs,
                                 masks);
            } else {
#pragma unroll
                for (u32 m = 0; m < RPW / 2; ++m)
                    draw_row_pair<E>(seed, stream, n0 + i, y0 + 2 * m, lane, 5,
                                     words + (i & 1) * F * fs + ((u * RPW + 2 * m) << 5) + lane, -1, fs, masks);
            }
        };
        draw(0);
        pair_sync();
        for (u32 i = 0; i < steps; ++i) {
            if (i + 1 < steps) draw(i + 1);
            pair_sync();
        }
    } else {
        pair_sync();
        auto step = [&](auto colour_tag, u32 i) {
            constexpr u32 C = decltype(colour_tag)::value;
            const bool poll_up = u == 0 && i > 0, poll_dn = u == NW - 1 && i > 0;
            unsigned long long vu[SL_P], vd[SL_P];
            const unsigned long long* su = slot(i - 1, up, 1);
            const unsigned long long* sd = slot(i - 1, down, 0);
            request_words(poll_up, su, vu);
            request_words(poll_dn, sd, vd);
            u32 nb[RPW][4][SL_P];
            row_neighbours<C, RPW>(lat, y0, lane, nb);
            if (i > 0) {
                const unsigned long long want = (unsigned long long)i << 32;
                if (u > 0)
#pragma unroll
                    for (int q = 0; q < SL_P; ++q) {
                        const volatile unsigned long long* src = xe_at(i - 1, u - 1, 1, q);
                        unsigned long long v = *src;
                        while ((v & ~0xffffffffull) != want) v = *src;
                        hu[q] = (u32)v;
                    }
                if (u + 1 < NW)
#pragma unroll
                    for (int q = 0; q < SL_P; ++q) {
                        const volatile unsigned long long* src = xe_at(i - 1, u + 1, 0, q);
                        unsigned long long v = *src;
                        while ((v & ~0xffffffffull) != want) v = *src;
                        hd[q] = (u32)v;
                    }
                await_words(poll_up, su, vu, want, hu);
                await_words(poll_dn, sd, vd, want, hd);
            }
#pragma unroll
            for (int q = 0; q < SL_P; ++q) {
                nb[0][0][q] = hu[q];
                nb[RPW - 1][1][q] = hd[q];
            }
            update_rows_drawn<RPW, E, SG>(lat[C], nb, words + (i & 1) * F * fs + ((u * RPW) << 5) + lane, fs, masks);
            const unsigned long long tag = (unsigned long long)(i + 1) << 32;
#pragma unroll
            for (int q = 0; q < SL_P; ++q) {
                *(volatile unsigned long long*)xe_at(i, u, 0, q) = tag | lat[C][0][q];
                *(volatile unsigned long long*)xe_at(i, u, 1, q) = tag | lat[C][RPW - 1][q];
            }
            if (i + 1 < steps) {
                if (u == 0) store_tagged(slot(i, b, 0), tag, lat[C][0]);
                if (u == NW - 1) store_tagged(slot(i, b, 1), tag, lat[C][RPW - 1]);
            }
            pair_sync();
        };
        for (u32 i = 0; i < steps; i += 2) {
            step(Colour<0>{}, i);
            step(Colour<1>{}, i + 1);
        }
        // Back to the lattice once the neighbouring blocks have read their
        // first halo rows (the block's own warps have: they published step 0).
        if (u == 0) wait_at_least(flags + up, 1);
        if (u == NW - 1) wait_at_least(flags + down, 1);
        __syncwarp();
#pragma unroll
        for (int j = 0; j < RPW; ++j) {
            store_planes(c0, lat[0][j], y0 + j, lane, WR);
            store_planes(c1, lat[1][j], y0 + j, lane, WR);
        }
    }
}

template <int NW, int RPW, int E>
__global__ void __launch_bounds__(2 * NW * 32, 1)
    potts_sliced_registers_flow(u32* __restrict__ c0, u32* __restrict__ c1, u32 h, u64 seed, u64 stream,
                                u64 first_sweep, u32 sweeps, int sigma, u32 th0, u32 th1, u32 th2, u32 th3,
                                unsigned long long* __restrict__ xbuf, u32* flags) {
    constexpr u32 R = NW * RPW, F = SL_B + E + 2;
    __shared__ uint4 masks[33];
    extern __shared__ unsigned long long flow_raw[];
    unsigned long long* const xe = flow_raw;  // 2 x NW x 2 x SL_P x 32 tagged words
    u32* const words = (u32*)(flow_raw + 2 * NW * 2 * SL_P * 32);  // 2 x F x R x 32
    (void)F;
    (void)R;
    if (threadIdx.x < 33) {
        const u32 bit = threadIdx.x - 1;
        masks[threadIdx.x] = threadIdx.x == 0 ? make_uint4(0, 0, 0, 0)
                                              : make_uint4(0u - ((th0 >> bit) & 1u), 0u - ((th1 >> bit) & 1u),
                                                           0u - ((th2 >> bit) & 1u), 0u - ((th3 >> bit) & 1u));
    }
    for (u32 t = threadIdx.x; t < 2 * NW * 2 * SL_P * 32; t += blockDim.x) xe[t] = 0;
    __syncthreads();
    if (sigma > 0)
        register_sweeps_flow<NW, RPW, E, 1>(c0, c1, h, seed, stream, first_sweep, sweeps, masks, words, xe, xbuf,
                                            flags);
    else if (sigma < 0)
        register_sweeps_flow<NW, RPW, E, -1>(c0, c1, h, seed, stream, first_sweep, sweeps, masks, words, xe, xbuf,
                                             flags);
    else
        register_sweeps_flow<NW, RPW, E, 0>(c0, c1, h, seed, stream, first_sweep, sweeps, masks, words, xe, xbuf,
                                            flags);
}

// The library's tiled kernel with edge rows inside the update; MODE 1:
// edge words taken without waiting for their step (wrong bits, timing only).
template <int MODE>
__global__ void __launch_bounds__(TILED_THREADS, 1)
    inline_mode(u32* __restrict__ c0, u32* __restrict__ c1, u32 wr_shift, u32 h, u32 R, u64 seed, u64 stream,
                u64 first_sweep, u32 sweeps, int sigma, u32 th0, u32 th1, u32 th2, u32 th3, u32* __restrict__ xbuf,
                u32* flags) {
    tiled_sweeps_inline<TILED_DRAWS, LazyBitSerial, MODE != 1>(c0, c1, wr_shift, h, R, seed, stream, first_sweep,
                                                               sweeps, sigma, th0, th1, th2, th3, xbuf, flags);
}

struct Variant {
    const void* kernel;
    u32 nw, rpw, nd, e;
    const char* name;
    bool flow = false;
    // Dynamic shared memory: the drawn words of two colour steps (and the
    // flow kernels' tagged rows).
    size_t shared() const {
        return (nd ? 2 * (size_t)(SL_B + e + 2) * nw * rpw * 32 * 4 : 0) + (flow ? 2 * nw * 2 * SL_P * 32 * 8 : 0);
    }
};
#define REG(NW, RPW) Variant{(const void*)potts_sliced_registers<NW, RPW>, NW, RPW, 0, 0, "registers NW=" #NW " RPW=" #RPW}
#define DRAWN(NW, RPW, ND, E)                                                                 \
    Variant{(const void*)potts_sliced_registers_drawn<NW, RPW, ND, E>, NW, RPW, ND, E,        \
            "drawn NW=" #NW " RPW=" #RPW " ND=" #ND " E=" #E}
#define DRAWN_EDGE_FIRST(NW, RPW, ND, E)                                                      \
    Variant{(const void*)potts_sliced_registers_drawn<NW, RPW, ND, E, 0, 1>, NW, RPW, ND, E,  \
            "edge first NW=" #NW " RPW=" #RPW " ND=" #ND " E=" #E}
#define FLOW(NW, RPW, E)                                                                      \
    Variant{(const void*)potts_sliced_registers_flow<NW, RPW, E>, NW, RPW, NW, E,              \
            "flow NW=" #NW " RPW=" #RPW " E=" #E, true}

int main(int argc, char** argv) {
    const u32 check_sweeps = argc > 1 ? atoi(argv[1]) : 37;
    const u32 time_sweeps = argc > 2 ? atoi(argv[2]) : 10000;
    const u32 L = 2048, h = L, wr = WR;
    u32 wr_shift = 5;
    const double T = POTTS_Q == 2 ? 1.0 / log(1.0 + sqrt(2.0)) : 0.7212;
    const size_t words = (size_t)h * wr * SL_P;
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("device %s, %d SMs, L=%u q=%d T=%.6f\n", prop.name, prop.multiProcessorCount, L, POTTS_Q, T);
    u32 th[4] = {threshold(1, T), threshold(2, T), threshold(3, T), threshold(4, T)};
    int sigma = 1;
    const u64 seed = 0x1234567887654321ull, stream = 77;
    std::vector<u32> h0(words), h1(words), r0(words), r1(words), t0(words), t1(words);
    u32 *c0, *c1, *flags;
    unsigned long long* xbuf;
    CK(cudaMalloc(&c0, words * 4));
    CK(cudaMalloc(&c1, words * 4));
    CK(cudaMalloc(&flags, 4096 * 4));
    CK(cudaMalloc(&xbuf, 64 << 20));
    const u32 units = (u32)((size_t)h * wr / UNIT_ROWS);
    auto run_resident = [&](u64 first, u32 sweeps) {
        CK(cudaMemset(flags, 0, 4096 * 4));
        const u32 blocks = 2 * ((units + 31) / 32);
        u64 units64 = units;
        void* args[] = {&c0, &c1, (void*)&wr, (void*)&h, (void*)&seed, (void*)&stream, &first, &sweeps,
                        &sigma, (void*)&th[0], (void*)&th[1], (void*)&th[2], (void*)&th[3], &units64, &flags};
        CK(cudaLaunchCooperativeKernel((void*)potts_sliced_resident, blocks, 128, args, 0, 0));
    };
    // The library's tiled kernel with edge rows inside the update, 128
    // strips of 16 rows (CudaKernel::Auto's choice at 2048²).
    auto run_inline_k = [&](const void* kernel, u64 first, u32 sweeps) {
        const u32 G = 128, R = h / G, rows = R + 2;
        CK(cudaMemset(flags, 0, 4096 * 4));
        CK(cudaMemset(xbuf, 0, 64 << 20));
        const size_t shm = (rows * wr * SL_P * 2 + 2 * (size_t)(SL_B + TILED_DRAWS + 2) * rows * wr) * 4;
        CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shm));
        void* args[] = {&c0, &c1, &wr_shift, (void*)&h, (void*)&R, (void*)&seed, (void*)&stream, &first, &sweeps,
                        &sigma, (void*)&th[0], (void*)&th[1], (void*)&th[2], (void*)&th[3], &xbuf, &flags};
        CK(cudaLaunchCooperativeKernel(kernel, G, TILED_THREADS, args, shm, 0));
    };
    auto run_inline = [&](u64 first, u32 sweeps) {
        const u32 G = 128, R = h / G, rows = R + 2;
        CK(cudaMemset(flags, 0, 4096 * 4));
        CK(cudaMemset(xbuf, 0, 64 << 20));
        const size_t shm = (rows * wr * SL_P * 2 + 2 * (size_t)(SL_B + TILED_DRAWS + 2) * rows * wr) * 4;
        CK(cudaFuncSetAttribute((const void*)potts_sliced_tiled_inline, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                (int)shm));
        void* args[] = {&c0, &c1, &wr_shift, (void*)&h, (void*)&R, (void*)&seed, (void*)&stream, &first, &sweeps,
                        &sigma, (void*)&th[0], (void*)&th[1], (void*)&th[2], (void*)&th[3], &xbuf, &flags};
        CK(cudaLaunchCooperativeKernel((const void*)potts_sliced_tiled_inline, G, TILED_THREADS, args, shm, 0));
    };
    // Whether all of a variant's blocks fit on the GPU at once.
    auto fits = [&](const Variant& v) {
        int per_sm = 0;
        CK(cudaFuncSetAttribute(v.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)v.shared()));
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, v.kernel, (v.nw + v.nd) * 32, v.shared()));
        return (u64)per_sm * prop.multiProcessorCount >= h / (v.nw * v.rpw);
    };
    auto run_reg = [&](const Variant& v, u64 first, u32 sweeps) {
        const u32 G = h / (v.nw * v.rpw);
        CK(cudaMemset(flags, 0, 4096 * 4));
        CK(cudaMemset(xbuf, 0, 64 << 20));
        void* args[] = {&c0, &c1, (void*)&h, (void*)&seed, (void*)&stream, &first, &sweeps,
                        &sigma, (void*)&th[0], (void*)&th[1], (void*)&th[2], (void*)&th[3], &xbuf, &flags};
        CK(cudaLaunchCooperativeKernel(v.kernel, G, (v.nw + v.nd) * 32, args, v.shared(), 0));
    };
    int failures = 0;
    auto check = [&](const char* name, auto launch, u64 first, u32 sweeps, bool ordered) {
        pack(h0, wr, h, 5, ordered);
        pack(h1, wr, h, 6, ordered);
        CK(cudaMemcpy(c0, h0.data(), words * 4, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(c1, h1.data(), words * 4, cudaMemcpyHostToDevice));
        run_resident(first, sweeps);
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(r0.data(), c0, words * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(r1.data(), c1, words * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(c0, h0.data(), words * 4, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(c1, h1.data(), words * 4, cudaMemcpyHostToDevice));
        launch(first, sweeps);
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(t0.data(), c0, words * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(t1.data(), c1, words * 4, cudaMemcpyDeviceToHost));
        size_t diff = 0, changed = 0;
        for (size_t i = 0; i < words; ++i) {
            diff += (r0[i] != t0[i]) + (r1[i] != t1[i]);
            changed += (r0[i] != h0[i]) + (r1[i] != h1[i]);
        }
        failures += diff != 0 || changed == 0;
        printf("check %-24s first=%llu sweeps=%u %s: %zu words differ (%zu changed by the run)%s\n", name,
               (unsigned long long)first, sweeps, ordered ? "ordered" : "random", diff, changed,
               diff || !changed ? "  FAIL" : "");
    };
    auto timeit = [&](const char* name, auto launch) {
        pack(h0, wr, h, 5, true);
        CK(cudaMemcpy(c0, h0.data(), words * 4, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(c1, h0.data(), words * 4, cudaMemcpyHostToDevice));
        launch(0, 200);
        CK(cudaDeviceSynchronize());
        cudaEvent_t a, b;
        cudaEventCreate(&a);
        cudaEventCreate(&b);
        float best = 1e30f;
        for (int rep = 0; rep < 3; ++rep) {
            cudaEventRecord(a);
            launch(0, time_sweeps);
            cudaEventRecord(b);
            CK(cudaEventSynchronize(b));
            float ms;
            cudaEventElapsedTime(&ms, a, b);
            best = fminf(best, ms);
        }
        printf("time %-44s %8.3f ms for %u sweeps: %7.1f flips/ns, %.3f us/sweep\n", name, best, time_sweeps,
               (double)L * L * time_sweeps / (best * 1e6), best * 1e3 / time_sweeps);
    };
    const Variant variants[] = {
        REG(16, 1),         REG(8, 2),          REG(4, 4),     DRAWN(16, 1, 16, 4), DRAWN(16, 1, 8, 4),
        DRAWN(8, 2, 8, 4),  DRAWN(8, 2, 8, 8),  DRAWN(4, 4, 4, 4), DRAWN_EDGE_FIRST(16, 1, 16, 4),
        DRAWN_EDGE_FIRST(8, 2, 8, 4), FLOW(16, 1, 4), FLOW(8, 2, 4),
    };
    if (argc > 3) {  // one launch of each for a profiler
        CK(cudaMemset(c0, 0, words * 4));
        CK(cudaMemset(c1, 0, words * 4));
        run_inline(0, time_sweeps);
        for (const Variant& v : variants)
            if (fits(v)) run_reg(v, 0, time_sweeps);
        CK(cudaDeviceSynchronize());
        return 0;
    }
    check("library inline", run_inline, 12345, check_sweeps, false);
    for (const Variant& v : variants) {
        if (!fits(v)) {
            printf("%s: its %u blocks do not fit at once\n", v.name, h / (v.nw * v.rpw));
            continue;
        }
        auto launch = [&](u64 f, u32 s) { run_reg(v, f, s); };
        check(v.name, launch, 12345, check_sweeps, false);
        check(v.name, launch, 7, check_sweeps + 1, true);
        check(v.name, launch, 3, 1, false);
    }
    if (time_sweeps == 0) return failures != 0;
    timeit("resident", run_resident);
    timeit("library tiled inline", run_inline);
    for (const Variant& v : variants)
        if (fits(v)) timeit(v.name, [&](u64 f, u32 s) { run_reg(v, f, s); });
    {
        const Variant nowait{(const void*)potts_sliced_registers_drawn<16, 1, 16, 4, 1>, 16, 1, 16, 4,
                             "drawn 16/1/16/4, edge words unwaited (wrong bits)"};
        if (fits(nowait)) timeit(nowait.name, [&](u64 f, u32 s) { run_reg(nowait, f, s); });
        timeit("library inline, instantiated here", [&](u64 f, u32 s) { run_inline_k((const void*)inline_mode<0>, f, s); });
        timeit("library inline, edge words unwaited (wrong bits)",
               [&](u64 f, u32 s) { run_inline_k((const void*)inline_mode<1>, f, s); });
        const Variant probe{(const void*)potts_sliced_registers_drawn<16, 1, 16, 4, 2>, 16, 1, 16, 4, "probe"};
        if (fits(probe)) {
            float ms;
            cudaEvent_t a, b;
            cudaEventCreate(&a);
            cudaEventCreate(&b);
            cudaEventRecord(a);
            run_reg(probe, 0, 2000);
            cudaEventRecord(b);
            CK(cudaEventSynchronize(b));
            cudaEventElapsedTime(&ms, a, b);
            static unsigned long long pr[256][32];
            CK(cudaMemcpyFromSymbol(pr, g_probe, sizeof pr));
            // Mean busy cycles per step of each warp, averaged over blocks.
            printf("probe: %.3f us/sweep; busy cycles per colour step by warp (mean over blocks):\n", ms * 1e3 / 2000);
            for (int w = 0; w < 32; ++w) {
                double m = 0;
                for (int bk = 0; bk < 128; ++bk) m += pr[bk][w];
                printf(" %d:%.0f", w, m / 128 / 4000);
            }
            printf("\n");
        }
    }
    sigma = 0;
    timeit("library tiled inline, every move accepted", run_inline);
    for (const Variant& v : variants) {
        if (!fits(v)) continue;
        char name[96];
        snprintf(name, sizeof name, "%s, every move accepted", v.name);
        timeit(name, [&](u64 f, u32 s) { run_reg(v, f, s); });
    }
    return failures != 0;
}
