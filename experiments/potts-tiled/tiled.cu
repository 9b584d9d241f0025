// Prototype: one bit-sliced lattice (the bit-sliced rule of
// crates/potts/src/sliced.rs) in strips held in shared memory, one block
// per SM, with halo rows K deep recomputed so that blocks exchange edges
// once per K colours (temporal blocking). Every variant is compared bit for
// bit with potts_sliced_resident, the library's kernel for such lattices,
// and timed beside it. Built and run by run.sh (README.md).
//
//   potts_sliced_tiled   first version: one row or one row pair per task
//   potts_sliced_tiled2  shifts instead of divisions, Philox round keys as
//                        kernel arguments, N rows per task, 512 or 1024
//                        threads per block
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <vector>
#include <cuda_runtime.h>

#include "../../crates/potts/kernels/potts.cu"

#define CK(x)                                                                            \
    do {                                                                                 \
        cudaError_t e = (x);                                                             \
        if (e != cudaSuccess) {                                                          \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e)); \
            exit(1);                                                                     \
        }                                                                                \
    } while (0)

__device__ __forceinline__ void lds_planes(u32* dst, const u32* src) {
    if (SL_P == 4) {
        const uint4 v = *(const uint4*)src;
        dst[0] = v.x;
        dst[1 % SL_P] = v.y;
        dst[2 % SL_P] = v.z;
        dst[3 % SL_P] = v.w;
    } else {
#pragma unroll
        for (int p = 0; p < SL_P; ++p) dst[p] = src[p];
    }
}
__device__ __forceinline__ void sts_planes(u32* dst, const u32* v) {
    if (SL_P == 4) {
        *(uint4*)dst = make_uint4(v[0], v[1 % SL_P], v[2 % SL_P], v[3 % SL_P]);
    } else {
#pragma unroll
        for (int p = 0; p < SL_P; ++p) dst[p] = v[p];
    }
}

__device__ __forceinline__ void wait_flag(const u32* f, u32 target) {
    u32 v;
    do {
        asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(f) : "memory");
    } while (v < target);
}

// Block b owns rows b*R ... b*R + R - 1 of both colour arrays (wr words of
// SL_P planes per row). Shared: rows -K ... R + K - 1 of each colour.
// MODE 0: exact; MODE 1: no waits between blocks (timing only, wrong bits).
template <int K, bool PAIR, int MODE>
__global__ void __launch_bounds__(512, 1)
    potts_sliced_tiled(u32* __restrict__ c0, u32* __restrict__ c1, u32 wr, u32 h, u32 R, u64 seed, u64 stream,
                       u64 first_sweep, u32 sweeps, int sigma, u32 th0, u32 th1, u32 th2, u32 th3,
                       u32* __restrict__ xbuf, u32* flags) {
    extern __shared__ uint4 smem_raw[];
    __shared__ uint4 masks[33];
    fill_masks(masks, th0, th1, th2, th3);
    const u32 G = gridDim.x, b = blockIdx.x, tid = threadIdx.x, nt = blockDim.x;
    const u32 rows = R + 2 * K;
    const u32 row_u32 = wr * SL_P;
    u32* sm[2] = {(u32*)smem_raw, (u32*)smem_raw + rows * row_u32};
    u32* gl[2] = {c0, c1};
    const u32 base = b * R;
    auto grow = [&](int y) -> u32 { return (u32)(((int)base + y + (int)h) % (int)h); };
    auto sidx = [&](int y, u32 w) -> u32 { return ((u32)(y + K) * wr + w) * SL_P; };
    // Initial state: rows -K .. R + K - 1 of both colours.
    for (u32 c = 0; c < 2; ++c)
        for (u32 i = tid; i < rows * wr; i += nt) {
            const int y = (int)(i / wr) - K;
            const u32 w = i % wr;
            const uint4 v = __ldcg((const uint4*)(gl[c] + ((u64)grow(y) * wr + w) * SL_P));
            *(uint4*)(sm[c] + sidx(y, w)) = v;
        }
    __syncthreads();
    if (tid == 0) asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(flags + b), "r"(1u) : "memory");
    const u32 up = (b + G - 1) % G, down = (b + 1) % G;
    const u64 steps = 2ull * sweeps;
    const u64 n0 = 2ull * first_sweep;
    const u32 chunk = K * wr * SL_P;  // u32 per (side, colour) slot
    u32 round = 0;
    for (u64 done = 0; done < steps; done += K, ++round) {
        const u32 kr = (u32)min((u64)K, steps - done);
        for (u32 j = 0; j < kr; ++j) {
            const u64 n = n0 + done + j;
            const u32 colour = (u32)(n & 1);
            const u64 sweep = n >> 1;
            u32* mine = sm[colour];
            const u32* other = sm[colour ^ 1];
            const int lo = -K + 1 + (int)j, hi = (int)R + K - 1 - (int)j;
            if (PAIR) {
                const int p_lo = lo >> 1, p_hi = (hi - 1) >> 1;
                const u32 tasks = (u32)(p_hi - p_lo + 1) * wr;
                for (u32 t = tid; t < tasks; t += nt) {
                    const int y0 = 2 * (p_lo + (int)(t / wr));
                    const u32 w = t % wr;
                    const u32 yg = grow(y0);
                    const u64 k = (u64)(yg / UNIT_ROWS) * wr + w;
                    u64 g[2];
                    row_generators<2>(seed, stream, sweep, colour, k, yg % UNIT_ROWS, g);
#pragma unroll
                    for (int i = 0; i < 2; ++i) {
                        const int y = y0 + i;
                        if (y < lo || y >= hi) continue;
                        u32 nb[4][SL_P], s[SL_P], sw[SL_P];
                        lds_planes(s, mine + sidx(y, w));
                        lds_planes(nb[0], other + sidx(y - 1, w));
                        lds_planes(nb[1], other + sidx(y + 1, w));
                        lds_planes(nb[2], other + sidx(y, w));
                        const u32 o = (yg + i + colour) & 1u;
                        lds_planes(sw, other + sidx(y, side_word(w, wr, o)));
                        side_shift(nb[3], nb[2], sw, o);
                        sliced_word<true>(s, nb, g[i], sigma, masks);
                        sts_planes(mine + sidx(y, w), s);
                    }
                }
            } else {
                const u32 tasks = (u32)(hi - lo) * wr;
                for (u32 t = tid; t < tasks; t += nt) {
                    const int y = lo + (int)(t / wr);
                    const u32 w = t % wr;
                    const u32 yg = grow(y);
                    const u64 k = (u64)(yg / UNIT_ROWS) * wr + w;
                    u64 g = row_generator(seed, stream, sweep, colour, k, yg % UNIT_ROWS);
                    u32 nb[4][SL_P], s[SL_P], sw[SL_P];
                    lds_planes(s, mine + sidx(y, w));
                    lds_planes(nb[0], other + sidx(y - 1, w));
                    lds_planes(nb[1], other + sidx(y + 1, w));
                    lds_planes(nb[2], other + sidx(y, w));
                    const u32 o = (yg + colour) & 1u;
                    lds_planes(sw, other + sidx(y, side_word(w, wr, o)));
                    side_shift(nb[3], nb[2], sw, o);
                    sliced_word<true>(s, nb, g, sigma, masks);
                    sts_planes(mine + sidx(y, w), s);
                }
            }
            __syncthreads();
        }
        if (done + kr >= steps) break;
        // Exchange: publish rows 0..K-1 (top) and R-K..R-1 (bottom) of both
        // colours, then take the neighbours' into the halos.
        u32* slot = xbuf + (u64)((round & 1) * G + b) * 4 * chunk;
        for (u32 i = tid; i < 4 * K * wr; i += nt) {
            const u32 sc = i / (K * wr);  // side * 2 + colour
            const u32 r = i % (K * wr);
            const int y = (sc >> 1) ? (int)(R - K + r / wr) : (int)(r / wr);
            __stcg((uint4*)(slot + sc * chunk + r * SL_P), *(const uint4*)(sm[sc & 1] + sidx(y, r % wr)));
        }
        __syncthreads();
        if (tid == 0) asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(flags + b), "r"(round + 2) : "memory");
        if (MODE == 0) {
            if (tid == 0) wait_flag(flags + up, round + 2);
            if (tid == 32) wait_flag(flags + down, round + 2);
        }
        __syncthreads();
        const u32* s_up = xbuf + (u64)((round & 1) * G + up) * 4 * chunk;
        const u32* s_dn = xbuf + (u64)((round & 1) * G + down) * 4 * chunk;
        for (u32 i = tid; i < 4 * K * wr; i += nt) {
            const u32 sc = i / (K * wr);
            const u32 r = i % (K * wr);
            const u32 side = sc >> 1, c = sc & 1;
            // From above: its bottom slot -> rows -K..-1; from below: its top slot -> rows R..R+K-1.
            const u32* src = side ? s_dn + (0 * 2 + c) * chunk : s_up + (1 * 2 + c) * chunk;
            const int y = side ? (int)(R + r / wr) : (int)(r / wr) - K;
            *(uint4*)(sm[c] + sidx(y, r % wr)) = __ldcg((const uint4*)(src + r * SL_P));
        }
        __syncthreads();
    }
    // The neighbours must have read their initial state before rows change.
    if (MODE == 0) {
        if (tid == 0) wait_flag(flags + up, 1);
        if (tid == 32) wait_flag(flags + down, 1);
    }
    __syncthreads();
    for (u32 c = 0; c < 2; ++c)
        for (u32 i = tid; i < R * wr; i += nt) {
            const int y = (int)(i / wr);
            const u32 w = i % wr;
            *(uint4*)(gl[c] + ((u64)grow(y) * wr + w) * SL_P) = *(const uint4*)(sm[c] + sidx(y, w));
        }
}


// ---- v2: shifts instead of divisions, Philox round keys as kernel
// arguments, both rows of a pair updated together with one acceptance loop.

struct RoundKeys {
    u32 k0[10], k1[10];
};

static RoundKeys round_keys(u64 seed) {
    RoundKeys r;
    u32 k0 = (u32)seed, k1 = (u32)(seed >> 32);
    for (int i = 0; i < 10; ++i) {
        if (i > 0) {
            k0 += WARPMC_PHILOX_W0;
            k1 += WARPMC_PHILOX_W1;
        }
        r.k0[i] = k0;
        r.k1[i] = k1;
    }
    return r;
}

__device__ __forceinline__ Words4 philox_keyed(Words4 c, const RoundKeys& keys) {
#pragma unroll
    for (int r = 0; r < 10; ++r) {
        const u32 hi0 = __umulhi(WARPMC_PHILOX_M0, c.w0);
        const u32 lo0 = WARPMC_PHILOX_M0 * c.w0;
        const u32 hi1 = __umulhi(WARPMC_PHILOX_M1, c.w2);
        const u32 lo1 = WARPMC_PHILOX_M1 * c.w2;
        Words4 n;
        n.w0 = hi1 ^ c.w1 ^ keys.k0[r];
        n.w1 = lo1;
        n.w2 = hi0 ^ c.w3 ^ keys.k1[r];
        n.w3 = lo0;
        c = n;
    }
    return c;
}

// sliced_word for N words at once (one acceptance loop for all of them:
// drawing past a word's last undecided site changes nothing, as each
// word's generator is dropped after its word).
template <bool EARLY, int N>
__device__ __forceinline__ void sliced_words(u32 (*s)[SL_P], const u32 (*nb)[4][SL_P], u64* gen, int sigma,
                                             const uint4* __restrict__ masks) {
    uint4 m_first[4];
    if (EARLY) {
#pragma unroll
        for (int j = 0; j < 4; ++j) m_first[j] = masks[32 - j];
    }
    u32 p[N][SL_P];
#pragma unroll
    for (int n = 0; n < N; ++n) {
#if POTTS_Q == 2
        p[n][0] = ~s[n][0];
#else
        u32 k[SL_B];
#pragma unroll
        for (int i = 0; i < SL_B; ++i) k[i] = mwc_step(gen[n]);
        if (!SL_M_POW2) {
            u32 rej = ge_const<SL_B>(k, SL_M);
            for (int round = 1; rej != 0 && round < 32; ++round) {
#pragma unroll
                for (int i = 0; i < SL_B; ++i) {
                    const u32 w = mwc_step(gen[n]);
                    k[i] = (k[i] & ~rej) | (w & rej);
                }
                rej = ge_const<SL_B>(k, SL_M);
            }
            add_const_masked<SL_B>(k, (1u << SL_B) - SL_M, rej);
        }
        u32 t[SL_P + 1];
        u32 carry = ~0u;
#pragma unroll
        for (int i = 0; i <= SL_P; ++i) {
            const u32 a = i < SL_P ? s[n][i < SL_P ? i : 0] : 0u;
            const u32 kk = i < SL_B ? k[i < SL_B ? i : 0] : 0u;
            t[i] = a ^ kk ^ carry;
            carry = (a & kk) | (carry & (a ^ kk));
        }
        const u32 ge = ge_const<SL_P + 1>(t, POTTS_Q);
        add_const_masked<SL_P + 1>(t, (1u << (SL_P + 1)) - POTTS_Q, ge);
#pragma unroll
        for (int i = 0; i < SL_P; ++i) p[n][i] = t[i];
#endif
    }
    u32 acc[N];
#pragma unroll
    for (int n = 0; n < N; ++n) acc[n] = ~0u;
    if (sigma != 0) {
        u32 und[N], code0[N], code1[N], gx[N], gc[N];
#pragma unroll
        for (int n = 0; n < N; ++n) {
            u32 uncertain;
#if POTTS_Q == 2
            const u32 flip = sigma > 0 ? 0u : ~0u;
            u32 c[3];
            count4(~(s[n][0] ^ nb[n][0][0]) ^ flip, ~(s[n][0] ^ nb[n][1][0]) ^ flip, ~(s[n][0] ^ nb[n][2][0]) ^ flip,
                   ~(s[n][0] ^ nb[n][3][0]) ^ flip, c);
            uncertain = c[2] | (c[1] & c[0]);
            code0[n] = ~0u;
            code1[n] = c[2];
#else
            u32 no[3], nn[3];
            count4(~differ(s[n], nb[n][0]), ~differ(s[n], nb[n][1]), ~differ(s[n], nb[n][2]), ~differ(s[n], nb[n][3]),
                   no);
            count4(~differ(p[n], nb[n][0]), ~differ(p[n], nb[n][1]), ~differ(p[n], nb[n][2]), ~differ(p[n], nb[n][3]),
                   nn);
            if (sigma < 0) {
#pragma unroll
                for (int i = 0; i < 3; ++i) {
                    const u32 x = no[i];
                    no[i] = nn[i];
                    nn[i] = x;
                }
            }
            const u32 b0 = ~nn[0], b1 = ~nn[1], b2 = ~nn[2];
            code0[n] = no[0] ^ b0;
            const u32 c0 = no[0] & b0;
            code1[n] = no[1] ^ b1 ^ c0;
            const u32 c1 = (no[1] & b1) | (c0 & (no[1] ^ b1));
            uncertain = (no[2] & b2) | (c1 & (no[2] ^ b2));
#endif
            und[n] = uncertain;
            acc[n] = ~uncertain;
            gx[n] = (u32)gen[n];
            gc[n] = (u32)(gen[n] >> 32);
        }
        auto step = [&](const uint4 a) {
#pragma unroll
            for (int n = 0; n < N; ++n) {
                const u32 u = warpmc::rng::mwc_step(gx[n], gc[n], MWC_A);
#if POTTS_Q == 2
                const u32 t = a.y ^ ((a.y ^ a.w) & code1[n]);
#else
                const u32 x0 = a.x ^ ((a.x ^ a.y) & code0[n]);
                const u32 x1 = a.z ^ ((a.z ^ a.w) & code0[n]);
                const u32 t = x0 ^ ((x0 ^ x1) & code1[n]);
#endif
                const u32 dec = und[n] & (t ^ u);
                acc[n] |= dec & t;
                und[n] ^= dec;
            }
        };
        auto any = [&]() {
            u32 x = 0;
#pragma unroll
            for (int n = 0; n < N; ++n) x |= und[n];
            return x != 0;
        };
        if (EARLY) {
#pragma unroll
            for (int j = 0; j < 4; ++j)
                if (any()) step(m_first[j]);
        }
#pragma unroll 2
        for (int bit = EARLY ? 27 : 31; bit >= 0; --bit) {
            if (!any()) break;
            step(masks[bit + 1]);
        }
    }
#pragma unroll
    for (int n = 0; n < N; ++n)
#pragma unroll
        for (int i = 0; i < SL_P; ++i) s[n][i] ^= (s[n][i] ^ p[n][i]) & acc[n];
}

template <int K, int MODE, int N = 2, int THREADS = 512>
__global__ void __launch_bounds__(THREADS, 1)
    potts_sliced_tiled2(u32* __restrict__ c0, u32* __restrict__ c1, u32 wr_shift, u32 h, u32 R, u64 stream,
                        u64 first_sweep, u32 sweeps, int sigma, u32 th0, u32 th1, u32 th2, u32 th3,
                        const RoundKeys keys, u32* __restrict__ xbuf, u32* flags) {
    extern __shared__ uint4 smem_raw[];
    __shared__ uint4 masks[33];
    fill_masks(masks, th0, th1, th2, th3);
    const u32 G = gridDim.x, b = blockIdx.x, tid = threadIdx.x, nt = blockDim.x;
    const u32 wr = 1u << wr_shift;
    const u32 rows = R + 2 * K;
    u32* const smem = (u32*)smem_raw;
    const u32 coff = (rows << wr_shift) * SL_P;  // u32 per colour
    const int base = (int)(b * R);
    const int hh = (int)h;
    auto grow = [&](int y) -> u32 {
        int g = base + y;
        g += g < 0 ? hh : 0;
        g -= g >= hh ? hh : 0;
        return (u32)g;
    };
    auto sidx = [&](int y, u32 w) -> u32 { return ((((u32)(y + K)) << wr_shift) + w) * SL_P; };
    auto gidx = [&](u32 yg, u32 w) -> u64 { return (((u64)yg << wr_shift) + w) * SL_P; };
    for (u32 i = tid; i < 2 * (rows << wr_shift); i += nt) {
        const u32 c = i >= (rows << wr_shift);
        const u32 j = i - c * (rows << wr_shift);
        const int y = (int)(j >> wr_shift) - K;
        const u32 w = j & (wr - 1);
        const uint4 v = __ldcg((const uint4*)((c ? c1 : c0) + gidx(grow(y), w)));
        *(uint4*)(smem + c * coff + sidx(y, w)) = v;
    }
    __syncthreads();
    if (tid == 0) asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(flags + b), "r"(1u) : "memory");
    const u32 up = b == 0 ? G - 1 : b - 1, down = b + 1 == G ? 0 : b + 1;
    const u64 steps = 2ull * sweeps;
    const u64 n0 = 2ull * first_sweep;
    const u32 slot_rows = K << wr_shift;      // words per (side, colour) slot
    const u32 chunk = slot_rows * SL_P;       // u32 per slot
    const Words4 zero4 = {0, 0, (u32)stream, (u32)(stream >> 32)};
    u32 round = 0;
    for (u64 done = 0; done < steps; done += K, ++round) {
        const u32 kr = (u32)min((u64)K, steps - done);
        for (u32 j = 0; j < kr; ++j) {
            const u64 n = n0 + done + j;
            const u32 colour = (u32)(n & 1);
            u32* mine = smem + colour * coff;
            const u32* other = smem + (colour ^ 1) * coff;
            const int lo = -K + 1 + (int)j, hi = (int)R + K - 1 - (int)j;
            Words4 ctr = zero4;
            ctr.w1 = (u32)n;  // 2 * sweep + colour
            if (N == 2) {
            const int p_lo = lo >> 1, p_hi = (hi - 1) >> 1;
            const u32 tasks = (u32)(p_hi - p_lo + 1) << wr_shift;
            for (u32 t = tid; t < tasks; t += nt) {
                const int y0 = 2 * (p_lo + (int)(t >> wr_shift));
                const u32 w = t & (wr - 1);
                const u32 yg = grow(y0);
                ctr.w0 = (((yg >> 3) << wr_shift) + w) * 4 + ((yg & 7) >> 1);
                const Words4 r = philox_keyed(ctr, keys);
                u64 g[2] = {warpmc::rng::mwc_seed_state(MWC_A, r.w0, r.w1), warpmc::rng::mwc_seed_state(MWC_A, r.w2, r.w3)};
                u32 s[2][SL_P], nb[2][4][SL_P];
#pragma unroll
                for (int i = 0; i < 2; ++i) {
                    // A row outside the range (stored back unchanged) reads
                    // a row inside, to stay within the shared rows.
                    const int y = min(max(y0 + i, lo), hi - 1);
                    u32 sw[SL_P];
                    lds_planes(s[i], mine + sidx(y, w));
                    lds_planes(nb[i][0], other + sidx(y - 1, w));
                    lds_planes(nb[i][1], other + sidx(y + 1, w));
                    lds_planes(nb[i][2], other + sidx(y, w));
                    const u32 o = (yg + i + colour) & 1u;
                    lds_planes(sw, other + sidx(y, o ? (w + 1) & (wr - 1) : (w - 1) & (wr - 1)));
                    side_shift(nb[i][3], nb[i][2], sw, o);
                }
                sliced_words<true, 2>(s, nb, g, sigma, masks);
                if (y0 >= lo) sts_planes(mine + sidx(y0, w), s[0]);
                if (y0 + 1 < hi) sts_planes(mine + sidx(y0 + 1, w), s[1]);
            }
            } else {
            const u32 tasks = (u32)(hi - lo) << wr_shift;
            for (u32 t = tid; t < tasks; t += nt) {
                const int y = lo + (int)(t >> wr_shift);
                const u32 w = t & (wr - 1);
                const u32 yg = grow(y);
                ctr.w0 = (((yg >> 3) << wr_shift) + w) * 4 + ((yg & 7) >> 1);
                // MODE 2 (timing only): a cheap stand-in for the Philox block.
                const Words4 r = MODE == 2 ? Words4{ctr.w0 * 0x9E3779B9u, ctr.w0 ^ ctr.w1, ctr.w0 + 7u, ctr.w0 ^ 0x55u}
                                           : philox_keyed(ctr, keys);
                u64 g[1] = {warpmc::rng::mwc_seed_state(MWC_A, (yg & 1) ? r.w2 : r.w0, (yg & 1) ? r.w3 : r.w1)};
                u32 s[1][SL_P], nb[1][4][SL_P], sw[SL_P];
                lds_planes(s[0], mine + sidx(y, w));
                lds_planes(nb[0][0], other + sidx(y - 1, w));
                lds_planes(nb[0][1], other + sidx(y + 1, w));
                lds_planes(nb[0][2], other + sidx(y, w));
                const u32 o = (yg + colour) & 1u;
                lds_planes(sw, other + sidx(y, o ? (w + 1) & (wr - 1) : (w - 1) & (wr - 1)));
                side_shift(nb[0][3], nb[0][2], sw, o);
                sliced_words<true, 1>(s, nb, g, sigma, masks);
                sts_planes(mine + sidx(y, w), s[0]);
            }
            }
            __syncthreads();
        }
        if (done + kr >= steps) break;
        u32* slot = xbuf + (u64)((round & 1) * G + b) * 4 * chunk;
        for (u32 i = tid; i < 4 * slot_rows; i += nt) {
            const u32 sc = i / slot_rows;  // side * 2 + colour
            const u32 r = i - sc * slot_rows;
            const int y = (int)(r >> wr_shift) + ((sc >> 1) ? (int)(R - K) : 0);
            __stcg((uint4*)(slot + sc * chunk + r * SL_P),
                   *(const uint4*)(smem + (sc & 1) * coff + sidx(y, r & (wr - 1))));
        }
        __syncthreads();
        if (tid == 0) asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(flags + b), "r"(round + 2) : "memory");
        if (MODE == 0) {
            if (tid == 0) wait_flag(flags + up, round + 2);
            if (tid == 32) wait_flag(flags + down, round + 2);
        }
        __syncthreads();
        const u32* s_up = xbuf + (u64)((round & 1) * G + up) * 4 * chunk;
        const u32* s_dn = xbuf + (u64)((round & 1) * G + down) * 4 * chunk;
        for (u32 i = tid; i < 4 * slot_rows; i += nt) {
            const u32 sc = i / slot_rows;
            const u32 r = i - sc * slot_rows;
            const u32 side = sc >> 1, c = sc & 1;
            const u32* src = side ? s_dn + c * chunk : s_up + (2 + c) * chunk;
            const int y = (int)(r >> wr_shift) + (side ? (int)R : -K);
            *(uint4*)(smem + c * coff + sidx(y, r & (wr - 1))) = __ldcg((const uint4*)(src + r * SL_P));
        }
        __syncthreads();
    }
    if (MODE == 0) {
        if (tid == 0) wait_flag(flags + up, 1);
        if (tid == 32) wait_flag(flags + down, 1);
    }
    __syncthreads();
    for (u32 i = tid; i < 2 * (R << wr_shift); i += nt) {
        const u32 c = i >= (R << wr_shift);
        const u32 j = i - c * (R << wr_shift);
        const int y = (int)(j >> wr_shift);
        const u32 w = j & (wr - 1);
        *(uint4*)((c ? c1 : c0) + gidx(grow(y), w)) = *(const uint4*)(smem + c * coff + sidx(y, w));
    }
}

static u32 thr(double d, double T) {
    double p = exp(-d / T);
    double v = floor(p * 4294967296.0);
    return v >= 4294967295.0 ? 4294967294u : (u32)v;
}

struct Lat {
    u32 *c0, *c1;
    size_t words;
};

static void pack_random(std::vector<u32>& a, u32 wr, u32 h, unsigned seed, bool ordered) {
    srand(seed);
    for (u32 y = 0; y < h; ++y)
        for (u32 w = 0; w < wr; ++w) {
            u32 pl[SL_P] = {0};
            for (int bit = 0; bit < 32; ++bit) {
                u32 v = ordered ? 0 : (u32)(rand() % POTTS_Q);
                for (int p = 0; p < SL_P; ++p) pl[p] |= ((v >> p) & 1u) << bit;
            }
            for (int p = 0; p < SL_P; ++p) a[((size_t)y * wr + w) * SL_P + p] = pl[p];
        }
}

int main(int argc, char** argv) {
    const u32 L = argc > 1 ? atoi(argv[1]) : 2048;
    const u32 test_sweeps = argc > 2 ? atoi(argv[2]) : 37;
    const u32 time_sweeps = argc > 3 ? atoi(argv[3]) : 2000;
    const double T = 0.7212;
    const u32 h = L, wr = L / 2 / 32;
    const size_t words = (size_t)h * wr * SL_P;
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("device %s, %d SMs, L=%u q=%d\n", prop.name, prop.multiProcessorCount, L, POTTS_Q);
    const u32 th[4] = {thr(1, T), thr(2, T), thr(3, T), thr(4, T)};
    const int sigma = 1;
    int sigma_used = sigma;
    const u64 seed = 0x1234567887654321ull, stream = 77;
    std::vector<u32> h0(words), h1(words), r0(words), r1(words), t0(words), t1(words);
    u32 *c0, *c1, *flags, *xbuf;
    CK(cudaMalloc(&c0, words * 4));
    CK(cudaMalloc(&c1, words * 4));
    CK(cudaMalloc(&flags, 4096 * 4));
    CK(cudaMalloc(&xbuf, 64 << 20));
    const u32 units = (u32)((size_t)h * wr / UNIT_ROWS);
    auto run_resident = [&](u64 first, u32 sweeps) {
        CK(cudaMemset(flags, 0, 4096 * 4));
        u32 blocks = 2 * ((units + 31) / 32);
        u64 units64 = units;
        void* args[] = {&c0, &c1, (void*)&wr, (void*)&h, (void*)&seed, (void*)&stream, &first, &sweeps,
                        (void*)&sigma_used, (void*)&th[0], (void*)&th[1], (void*)&th[2], (void*)&th[3], &units64, &flags};
        CK(cudaLaunchCooperativeKernel((void*)potts_sliced_resident, blocks, 128, args, 0, 0));
    };
    auto run_tiled = [&](auto kern, u32 K, u64 first, u32 sweeps, u32 G) {
        u32 R = h / G;
        CK(cudaMemset(flags, 0, 4096 * 4));
        size_t shm = (size_t)2 * (R + 2 * K) * wr * SL_P * 4;
        CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shm));
        void* args[] = {&c0, &c1, (void*)&wr, (void*)&h, &R, (void*)&seed, (void*)&stream, &first, &sweeps,
                        (void*)&sigma, (void*)&th[0], (void*)&th[1], (void*)&th[2], (void*)&th[3], &xbuf, &flags};
        CK(cudaLaunchCooperativeKernel((void*)kern, G, 512, args, shm, 0));
    };
    u32 G = 1;
    u32 wr_shift = 0;
    while ((1u << wr_shift) < wr) ++wr_shift;
    const RoundKeys keys = round_keys(seed);
    auto run_tiled2 = [&](auto kern, u32 K, u64 first, u32 sweeps, u32 G, u32 threads = 512) {
        u32 R = h / G;
        CK(cudaMemset(flags, 0, 4096 * 4));
        size_t shm = (size_t)2 * (R + 2 * K) * wr * SL_P * 4;
        CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shm));
        void* args[] = {&c0, &c1, &wr_shift, (void*)&h, &R, (void*)&stream, &first, &sweeps,
                        (void*)&sigma_used, (void*)&th[0], (void*)&th[1], (void*)&th[2], (void*)&th[3], (void*)&keys, &xbuf, &flags};
        CK(cudaLaunchCooperativeKernel((void*)kern, G, threads, args, shm, 0));
    };
    auto check = [&](const char* name, auto kern, u32 K, u32 Gx, u64 first, u32 sweeps, bool ordered, bool v2 = false) {
        pack_random(h0, wr, h, 5, ordered);
        pack_random(h1, wr, h, 6, ordered);
        CK(cudaMemcpy(c0, h0.data(), words * 4, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(c1, h1.data(), words * 4, cudaMemcpyHostToDevice));
        run_resident(first, sweeps);
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(r0.data(), c0, words * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(r1.data(), c1, words * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(c0, h0.data(), words * 4, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(c1, h1.data(), words * 4, cudaMemcpyHostToDevice));
        if (v2) run_tiled2(kern, K, first, sweeps, Gx); else run_tiled(kern, K, first, sweeps, Gx);
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(t0.data(), c0, words * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(t1.data(), c1, words * 4, cudaMemcpyDeviceToHost));
        size_t diff = 0, changed = 0;
        for (size_t i = 0; i < words; ++i) {
            diff += (r0[i] != t0[i]) + (r1[i] != t1[i]);
            changed += (r0[i] != h0[i]) + (r1[i] != h1[i]);
        }
        printf("check %-14s K=%u G=%u first=%llu sweeps=%u %s: %zu words differ (%zu changed by the run)\n", name, K,
               Gx, (unsigned long long)first, sweeps, ordered ? "ordered" : "random", diff, changed);
    };
    auto timeit = [&](const char* name, auto launch) {
        pack_random(h0, wr, h, 5, true);
        CK(cudaMemcpy(c0, h0.data(), words * 4, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(c1, h0.data(), words * 4, cudaMemcpyHostToDevice));
        launch(200);
        CK(cudaDeviceSynchronize());
        cudaEvent_t a, bq;
        cudaEventCreate(&a);
        cudaEventCreate(&bq);
        float best = 1e30f;
        for (int rep = 0; rep < 3; ++rep) {
            cudaEventRecord(a);
            launch(time_sweeps);
            cudaEventRecord(bq);
            CK(cudaEventSynchronize(bq));
            float ms;
            cudaEventElapsedTime(&ms, a, bq);
            best = fminf(best, ms);
        }
        printf("time %-28s %8.3f ms for %u sweeps: %7.1f flips/ns, %.3f us/sweep\n", name, best, time_sweeps,
               (double)L * L * time_sweeps / (best * 1e6), best * 1e3 / time_sweeps);
    };
#define TILED(K, PAIR, MODE) potts_sliced_tiled<K, PAIR, MODE>
    // The largest grid of at most `most` blocks whose strips are even and at
    // least K rows, with the shared memory it needs within the SM's.
    auto pick = [&](u32 K, u32 most) -> u32 {
        for (u32 g = most; g >= 1; --g)
            if (h % g == 0 && (h / g) % 2 == 0 && h / g >= K &&
                (size_t)2 * (h / g + 2 * K) * wr * SL_P * 4 <= 200 * 1024)
                return g;
        return 0;
    };
    const u32 sms = prop.multiProcessorCount;
#define CHECK(NAME, K, PAIR, MOST, FIRST, SWEEPS, ORD)                                     \
    if (u32 g = pick(K, MOST)) check(NAME, TILED(K, PAIR, 0), K, g, FIRST, SWEEPS, ORD); \
    else printf("check %s K=%d: no grid fits\n", NAME, K);
    if (argc <= 4) {
    CHECK("pair", 4, true, sms, 12345, test_sweeps, false)
    CHECK("pair", 4, true, sms, 3, test_sweeps + 1, false)
    CHECK("single", 4, false, sms, 12345, test_sweeps, false)
    CHECK("pair", 2, true, sms, 7, test_sweeps, false)
    CHECK("pair", 6, true, sms, 7, test_sweeps, false)
    CHECK("pair", 8, true, sms, 7, test_sweeps, true)
    CHECK("pair", 16, true, sms, 7, test_sweeps, false)
    CHECK("pair G<=2", 4, true, 2, 7, test_sweeps, false)
    CHECK("pair G=1", 4, true, 1, 7, 5, false)
#define CHECK2(NAME, K, MOST, FIRST, SWEEPS, ORD)                                              \
    if (u32 g = pick(K, MOST)) check(NAME, potts_sliced_tiled2<K, 0>, K, g, FIRST, SWEEPS, ORD, true); \
    else printf("check %s K=%d: no grid fits\n", NAME, K);
    CHECK2("v2", 4, sms, 12345, test_sweeps, false)
    CHECK2("v2", 4, sms, 3, test_sweeps + 1, false)
    CHECK2("v2", 2, sms, 7, test_sweeps, false)
    CHECK2("v2", 6, sms, 7, test_sweeps, true)
    CHECK2("v2", 8, sms, 7, test_sweeps, false)
    CHECK2("v2 G<=2", 4, 2, 7, test_sweeps, false)
    CHECK2("v2 G=1", 4, 1, 7, 5, false)
#define CHECK3(NAME, K, MOST, FIRST, SWEEPS, ORD, N, TH)                                              \
    if (u32 g = pick(K, MOST)) { \
        auto kk = potts_sliced_tiled2<K, 0, N, TH>; \
        pack_random(h0, wr, h, 5, ORD); pack_random(h1, wr, h, 6, ORD); \
        CK(cudaMemcpy(c0, h0.data(), words * 4, cudaMemcpyHostToDevice)); \
        CK(cudaMemcpy(c1, h1.data(), words * 4, cudaMemcpyHostToDevice)); \
        run_resident(FIRST, SWEEPS); CK(cudaDeviceSynchronize()); \
        CK(cudaMemcpy(r0.data(), c0, words * 4, cudaMemcpyDeviceToHost)); \
        CK(cudaMemcpy(r1.data(), c1, words * 4, cudaMemcpyDeviceToHost)); \
        CK(cudaMemcpy(c0, h0.data(), words * 4, cudaMemcpyHostToDevice)); \
        CK(cudaMemcpy(c1, h1.data(), words * 4, cudaMemcpyHostToDevice)); \
        run_tiled2(kk, K, FIRST, SWEEPS, g, TH); CK(cudaDeviceSynchronize()); \
        CK(cudaMemcpy(t0.data(), c0, words * 4, cudaMemcpyDeviceToHost)); \
        CK(cudaMemcpy(t1.data(), c1, words * 4, cudaMemcpyDeviceToHost)); \
        size_t diff = 0; for (size_t i = 0; i < words; ++i) diff += (r0[i] != t0[i]) + (r1[i] != t1[i]); \
        printf("check %s K=%d N=%d threads=%d G=%u: %zu words differ\n", NAME, K, N, TH, g, diff); }
    CHECK3("v2", 4, sms, 12345, test_sweeps, false, 1, 1024)
    CHECK3("v2", 4, sms, 3, test_sweeps + 1, false, 1, 512)
    CHECK3("v2", 6, sms, 3, test_sweeps, true, 1, 1024)
    CHECK3("v2", 4, 2, 3, test_sweeps, false, 1, 1024)
    }
    if (time_sweeps == 0) return 0;
    G = pick(16, sms);
    if (argc > 4) {  // one launch of each, for a profiler, ordered start
        CK(cudaMemset(c0, 0, words * 4));
        CK(cudaMemset(c1, 0, words * 4));
        run_resident(0, time_sweeps);
        run_tiled(TILED(4, true, 1), 4, 0, time_sweeps, G);
        run_tiled(TILED(4, true, 0), 4, 0, time_sweeps, G);
        run_tiled2(potts_sliced_tiled2<4, 0>, 4, 0, time_sweeps, G);
        run_tiled2(potts_sliced_tiled2<4, 0, 1, 1024>, 4, 0, time_sweeps, G, 1024);
        CK(cudaDeviceSynchronize());
        return 0;
    }
    printf("timing with %u blocks of %u rows\n", G, h / G);
    timeit("resident", [&](u32 s) { run_resident(0, s); });
#define T1(K, PAIR, MODE)                                                                         \
    timeit("tiled K=" #K " pair=" #PAIR " mode=" #MODE,                                            \
           [&](u32 s) { run_tiled(TILED(K, PAIR, MODE), K, 0, s, G); });
    T1(4, true, 0)
#define T2(K, MODE)                                                                         \
    timeit("tiled2 K=" #K " mode=" #MODE,                                            \
           [&](u32 s) { run_tiled2(potts_sliced_tiled2<K, MODE>, K, 0, s, G); });
    T2(4, 0) T2(4, 1)
#define T3(K, MODE, N, TH)                                                                         \
    timeit("tiled2 K=" #K " mode=" #MODE " N=" #N " threads=" #TH,                                \
           [&](u32 s) { run_tiled2(potts_sliced_tiled2<K, MODE, N, TH>, K, 0, s, G, TH); });
    T3(4, 0, 1, 512) T3(4, 0, 1, 1024) T3(6, 0, 1, 1024) T3(8, 0, 1, 1024) T3(4, 1, 1, 1024) T3(4, 0, 2, 1024)
    // Cost breakdown of the best variant (timing only, wrong bits): the
    // Philox block replaced by a hash; then every move accepted (no
    // acceptance loop); then both.
    T3(4, 2, 1, 1024)
    sigma_used = 0;
    T3(4, 0, 1, 1024)
    T3(4, 2, 1, 1024)
    timeit("resident, every move accepted", [&](u32 s) { run_resident(0, s); });
    sigma_used = 1;
    return 0;
}
