// Checkerboard Metropolis for the q-state Potts model, colour-split layout.
// Bit-identical with crates/potts/src/cpu.rs: algorithm.rs states the rule
// and the assignment of random numbers (units of 8 rows x 8 columns, one
// Philox block seeding two multiply-with-carry generators), layout.rs the
// indexing. Two storage formats:
//
//   potts_generic_colour  one byte per spin: any q, any even lattice, a field;
//   potts_packed4_colour  4 bits per spin (8 sites per 32-bit word, site x_h
//                         in nibble x_h mod 8): q <= 16, width/2 and height
//                         multiples of 8, no field. Compiled per q
//                         (-DPOTTS_Q=q) so the modular arithmetic folds.
#include "warpmc_rng.cuh"

using warpmc::rng::u32;
using warpmc::rng::u64;
using warpmc::rng::Words4;
typedef unsigned char u8;

#define TABLE_LEN 27
#define UNIT_ROWS 8
#define UNIT_COLS 8
#define MWC_A 4278189678u

// One multiply-with-carry step (state c << 32 | x); returns the new x.
__device__ __forceinline__ u32 mwc_step(u64& g) {
    g = (g & 0xffffffffull) * (u64)MWC_A + (g >> 32);
    return (u32)g;
}

// The two generators of a unit (even rows, odd rows).
__device__ __forceinline__ void unit_generators(u64 seed, u64 stream, u64 sweep, u32 colour, u64 unit, u64& g0,
                                                u64& g1) {
    const Words4 w = warpmc::rng::philox_block(seed, stream, ((2ull * sweep + colour) << 32) | unit);
    g0 = warpmc::rng::mwc_seed_state(MWC_A, w.w0, w.w1);
    g1 = warpmc::rng::mwc_seed_state(MWC_A, w.w2, w.w3);
}

// ---- One byte per spin ------------------------------------------------------

__device__ __forceinline__ u8 metropolis_site(u8 old, u8 a, u8 b, u8 c, u8 d, u32 r, u32 q, const u64* table) {
    const u64 p = (u64)r * (u64)(q - 1u);
    u32 nw = (u32)old + 1u + (u32)(p >> 32);
    if (nw >= q) nw -= q;
    const u8 s = (u8)nw;
    const int n_old = (a == old) + (b == old) + (c == old) + (d == old);
    const int n_new = (a == s) + (b == s) + (c == s) + (d == s);
    const int d0 = (s == 0) - (old == 0);
    return ((u64)(u32)p < table[(n_new - n_old + 4) * 3 + (d0 + 1)]) ? s : old;
}

// One colour of one sweep; thread k (grid-stride) serves unit k.
extern "C" __global__ void potts_generic_colour(u8* __restrict__ mine, const u8* __restrict__ other, u32 hw, u32 h,
                                                u32 q, u64 seed, u64 stream, u64 sweep, u32 colour,
                                                const u64* __restrict__ table_g, u32 units_per_row, u64 units) {
    __shared__ u64 table[TABLE_LEN];
    if (threadIdx.x < TABLE_LEN) table[threadIdx.x] = table_g[threadIdx.x];
    __syncthreads();
    for (u64 k = (u64)blockIdx.x * blockDim.x + threadIdx.x; k < units; k += (u64)gridDim.x * blockDim.x) {
        u64 g[2];
        unit_generators(seed, stream, sweep, colour, k, g[0], g[1]);
        const u32 ub = (u32)(k / units_per_row);
        const u32 x0 = (u32)(k - (u64)ub * units_per_row) * UNIT_COLS;
        const u32 y0 = ub * UNIT_ROWS;
        const u32 y1 = min(y0 + UNIT_ROWS, h);
        const u32 x1 = min(x0 + UNIT_COLS, hw);
        for (u32 y = y0; y < y1; ++y) {
            const u32 o = (y + colour) & 1u;
            const u8* row = other + (u64)y * hw;
            const u8* up = other + (u64)(y == 0 ? h - 1 : y - 1) * hw;
            const u8* down = other + (u64)(y + 1 == h ? 0 : y + 1) * hw;
            u64& gen = g[(y - y0) & 1u];
            for (u32 xh = x0; xh < x1; ++xh) {
                const u32 r = mwc_step(gen);
                const u32 left = (xh + o == 0) ? hw - 1 : xh + o - 1;
                const u32 right = (xh + o == hw) ? 0 : xh + o;
                u8* s = mine + (u64)y * hw + xh;
                *s = metropolis_site(*s, row[left], row[right], up[xh], down[xh], r, q, table);
            }
        }
    }
}

// Equal-neighbour bonds and state counts. out[0] = bonds, out[1 + s] = sites
// in state s; out must be zeroed before the launch. Only these q + 1 numbers
// leave the device.
extern "C" __global__ void potts_generic_census(const u8* __restrict__ c0, const u8* __restrict__ c1, u32 hw, u32 h,
                                                u32 q, unsigned long long* out) {
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

// ---- Four bits per spin -----------------------------------------------------

#ifndef POTTS_Q
#define POTTS_Q 16
#endif
#define NIB1 0x11111111u

// Per nibble: 1 where a and b differ, else 0 (SWAR: a nonzero nibble of
// a ^ b carries its low three bits into bit 3 when 7 is added).
__device__ __forceinline__ u32 ne4(u32 a, u32 b) {
    const u32 x = a ^ b;
    const u32 t = (x & 0x77777777u) + 0x77777777u;
    return ((t | x) >> 3) & NIB1;
}

// Per nibble: (s + 1 + k) mod q, where k's even nibbles come in the bytes of
// ke and its odd nibbles in the bytes of ko (each k < q - 1).
__device__ __forceinline__ u32 propose4(u32 s, u32 ke, u32 ko) {
#if POTTS_Q == 2
    (void)ke;
    (void)ko;
    return s ^ NIB1;
#elif POTTS_Q <= 8
    // s + 1 + k <= 2q - 2 fits in a nibble: compare with q in place.
    const u32 t = s + (ke | (ko << 4)) + NIB1;
    const u32 ge = (t + (8u - POTTS_Q) * NIB1) & 0x88888888u;
    return t - (ge >> 3) * POTTS_Q;
#else
    // Up to 30: work in bytes, even and odd nibbles apart.
    u32 e = (s & 0x0f0f0f0fu) + ke + 0x01010101u;
    u32 o = ((s >> 4) & 0x0f0f0f0fu) + ko + 0x01010101u;
    e -= (((e + (0x80u - POTTS_Q) * 0x01010101u) & 0x80808080u) >> 7) * POTTS_Q;
    o -= (((o + (0x80u - POTTS_Q) * 0x01010101u) & 0x80808080u) >> 7) * POTTS_Q;
    return e | (o << 4);
#endif
}

// Accept mask of one site: all ones iff f < threshold, where neg_th holds
// 2^64 - threshold. f + neg_th overflows 64 bits exactly when f >= threshold,
// so its high word is 0xffffffff (accept) or 0 (reject). Written as a
// multiply-add by `one` (a kernel argument equal to 1) so that it runs on the
// multiply pipe: the integer ALU pipe is what limits this kernel.
__device__ __forceinline__ u32 accept_word(u32 f, u64 neg_th, u32 one) {
    // (Inline PTX mad.wide.u32 here sent NVCC 13.0's front end into an
    // endless loop; a multiply by the unknown `one` gives the same SASS.
    // So did collecting the 1-bit kernel's accept bits with
    // __funnelshift_l + __brev. NVRTC compiles this file at run time: after
    // any change, check that `nvcc -ptx` of it finishes.)
    return (u32)(((u64)f * one + neg_th) >> 32);
}

// The rows of unit k that one thread updates: all 8 (PAR = 1, generators
// alternating) or those of one parity (PAR = 2, one generator; two threads
// per unit, for lattices too small to fill the GPU otherwise).
template <int PAR>
__device__ __forceinline__ void packed4_unit(u32* __restrict__ mine, const u32* __restrict__ other, u32 wr, u32 h,
                                             u64 seed, u64 stream, u64 sweep, u32 colour, const u64* th, u32 one,
                                             u64 k, u32 parity) {
    u64 g[2];
    unit_generators(seed, stream, sweep, colour, k, g[0], g[1]);
    if (PAR == 2) g[0] = parity ? g[1] : g[0];
    const u32 ub = (u32)(k / wr);
    const u32 wx = (u32)(k - (u64)ub * wr);
    const u32 wl = wx == 0 ? wr - 1 : wx - 1;
    const u32 wrt = wx + 1 == wr ? 0 : wx + 1;
    const u32 y0 = ub * UNIT_ROWS + (PAR == 2 ? parity : 0);
    u32 up = other[(u64)(y0 == 0 ? h - 1 : y0 - 1) * wr + wx];
    u32 cur = other[(u64)y0 * wr + wx];
#pragma unroll
    for (int i = 0; i < UNIT_ROWS / PAR; ++i) {
        const u32 y = y0 + PAR * i;
        const u64 row = (u64)y * wr;
        const u32 down = other[(u64)(y + 1 == h ? 0 : y + 1) * wr + wx];
        // Row offset o = (y + colour) mod 2.
        const u32 side = ((y + colour) & 1u) ? ((cur >> 4) | (other[row + wrt] << 28))
                                             : ((cur << 4) | (other[row + wl] >> 28));
        const u32 s = mine[row + wx];
        u64& gen = (PAR == 1 && (i & 1)) ? g[1] : g[0];
        u32 f[8];
        u32 ke = 0, ko = 0;
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            const u32 r = mwc_step(gen);
#if POTTS_Q == 2
            f[j] = r;
#else
            const u64 p = (u64)r * (POTTS_Q - 1u);
            f[j] = (u32)p;
            // Fields do not overlap: add (multiply pipe) rather than or.
            if (j & 1)
                ko += (u32)(p >> 32) << (4 * (j - 1));
            else
                ke += (u32)(p >> 32) << (4 * j);
#endif
        }
        const u32 p = propose4(s, ke, ko);
        // delta_n + 4 per nibble: (differ before) + 4 - (differ after).
        const u32 d = ne4(s, up) + ne4(s, down) + ne4(s, cur) + ne4(s, side) + 4u * NIB1 -
                      (ne4(p, up) + ne4(p, down) + ne4(p, cur) + ne4(p, side));
        u32 accept = 0;
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            // Byte offset of entry (d >> 4j) & 15 in the 8-byte table.
            const u32 off = j == 0 ? (d << 3) & 0x78u : (d >> (4 * j - 3)) & 0x78u;
            const u32 m = accept_word(f[j], *(const u64*)((const char*)th + off), one);
            accept -= m * (0xfu << (4 * j));  // m is 0 or -1: adds the nibble mask
        }
        mine[row + wx] = s ^ ((s ^ p) & accept);
        if (PAR == 1) {
            up = cur;
            cur = down;
        } else if (i + 1 < UNIT_ROWS / PAR) {
            up = down;
            cur = other[(u64)(y + 2 == h ? 0 : y + 2) * wr + wx];
        }
    }
}

// One colour of one sweep; thread k serves unit k (one word column x 8 rows).
// The sweep number is *sweep_base + sweep_add, so that a recorded CUDA graph
// of many sweeps can be replayed at any position. neg_th: 2^64 - threshold
// for delta_n + 4 = 0..8 (no field); one = 1.
extern "C" __global__ void __launch_bounds__(128) potts_packed4_colour(
    u32* __restrict__ mine, const u32* __restrict__ other, u32 wr, u32 h, u64 seed, u64 stream,
    const u64* __restrict__ sweep_base, u64 sweep_add, u32 colour, const u64* __restrict__ neg_th, u32 one,
    u64 units) {
    __shared__ u64 th[16];
    if (threadIdx.x < 9) th[threadIdx.x] = neg_th[threadIdx.x];
    __syncthreads();
    const u64 k = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= units) return;
    const u64 sweep = *sweep_base + sweep_add;
    packed4_unit<1>(mine, other, wr, h, seed, stream, sweep, colour, th, one, k, 0);
}

// The same with two threads per unit (thread 2k + p: unit k, rows of parity p).
extern "C" __global__ void __launch_bounds__(128) potts_packed4_colour_split(
    u32* __restrict__ mine, const u32* __restrict__ other, u32 wr, u32 h, u64 seed, u64 stream,
    const u64* __restrict__ sweep_base, u64 sweep_add, u32 colour, const u64* __restrict__ neg_th, u32 one,
    u64 units) {
    __shared__ u64 th[16];
    if (threadIdx.x < 9) th[threadIdx.x] = neg_th[threadIdx.x];
    __syncthreads();
    const u64 sweep = *sweep_base + sweep_add;
    const u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    // Neighbouring lanes take neighbouring units of one parity (coalesced
    // rows): lane bit 5 of the thread index picks the parity.
    const u64 k = (t >> 6) * 32 + (t & 31);
    const u32 parity = (u32)(t >> 5) & 1u;
    if (k >= units) return;
    packed4_unit<2>(mine, other, wr, h, seed, stream, sweep, colour, th, one, k, parity);
}

// ---- One bit per spin (q = 2, no field) ------------------------------------
//
// Bit j of word w of a row is column 32w + j, so a word spans four units.
// With no field, the acceptance threshold depends only on u, the number of
// unequal neighbours (delta_n + 4 = 2u), and at most two values of u can
// have a threshold below 2^32 (u = 0, 1 for J > 0; 3, 4 for J < 0): the host
// passes them as classes ca, cb with xa = 2^64 - threshold. Every other
// class is accepted outright.

// Mask of the sites whose bit-sliced count (c0, c1, c2) equals c.
__device__ __forceinline__ u32 class_mask(u32 c0, u32 c1, u32 c2, u32 c) {
    return (c0 ^ ((c & 1u) ? 0u : ~0u)) & (c1 ^ ((c & 2u) ? 0u : ~0u)) & (c2 ^ ((c & 4u) ? 0u : ~0u));
}

template <int PAR>
__device__ __forceinline__ void packed1_word(u32* __restrict__ mine, const u32* __restrict__ other, u32 wr, u32 h,
                                             u64 seed, u64 stream, u64 sweep, u32 colour, u32 ca, u32 cb, u64 xa,
                                             u64 xb, u32 one, u32 ub, u32 wx, u32 parity) {
    // Generators of the four units of this word: g[2u + row parity].
    u64 g[8];
#pragma unroll
    for (int u = 0; u < 4; ++u) {
        const u64 unit = (u64)ub * (4u * wr) + 4u * wx + u;
        unit_generators(seed, stream, sweep, colour, unit, g[2 * u], g[2 * u + 1]);
    }
    if (PAR == 2 && parity) {
#pragma unroll
        for (int u = 0; u < 4; ++u) g[2 * u] = g[2 * u + 1];
    }
    const u32 wl = wx == 0 ? wr - 1 : wx - 1;
    const u32 wrt = wx + 1 == wr ? 0 : wx + 1;
    const u32 y0 = ub * UNIT_ROWS + (PAR == 2 ? parity : 0);
    u32 up = other[(u64)(y0 == 0 ? h - 1 : y0 - 1) * wr + wx];
    u32 cur = other[(u64)y0 * wr + wx];
#pragma unroll
    for (int i = 0; i < UNIT_ROWS / PAR; ++i) {
        const u32 y = y0 + PAR * i;
        const u64 row = (u64)y * wr;
        const u32 down = other[(u64)(y + 1 == h ? 0 : y + 1) * wr + wx];
        const u32 side = ((y + colour) & 1u) ? ((cur >> 1) | (other[row + wrt] << 31))
                                             : ((cur << 1) | (other[row + wl] >> 31));
        const u32 s = mine[row + wx];
        // u = number of unequal neighbours, bit-sliced: c0 + 2 c1 + 4 c2.
        const u32 a = s ^ up, b = s ^ down, c = s ^ cur, d = s ^ side;
        const u32 x1 = a ^ b, x2 = c ^ d;
        const u32 k1 = a & b, k2 = c & d, k3 = x1 & x2;
        const u32 c0 = x1 ^ x2;
        const u32 c1 = k1 ^ k2 ^ k3;
        const u32 c2 = (k1 & k2) | (k3 & (k1 | k2));
        u32 ka = 0, kb = 0;
        const int par = (PAR == 1) ? (i & 1) : 0;
#pragma unroll
        for (int j = 0; j < 32; ++j) {
            u64& gen = g[2 * (j >> 3) + par];
            const u32 r = mwc_step(gen);
            // m = all ones iff r < threshold (see accept_word); adds bit j.
            ka -= accept_word(r, xa, one) * (1u << j);
            kb -= accept_word(r, xb, one) * (1u << j);
        }
        const u32 ma = class_mask(c0, c1, c2, ca), mb = class_mask(c0, c1, c2, cb);
        const u32 flip = (~(ma | mb)) | (ma & ka) | (mb & kb);
        mine[row + wx] = s ^ flip;
        if (PAR == 1) {
            up = cur;
            cur = down;
        } else if (i + 1 < UNIT_ROWS / PAR) {
            up = down;
            cur = other[(u64)(y + 2 == h ? 0 : y + 2) * wr + wx];
        }
    }
}

// One colour of one sweep; thread t serves word column t mod wr of row
// block t / wr (PAR = 1). Arguments as potts_packed4_colour, plus the two
// classes and their 2^64 - threshold.
extern "C" __global__ void __launch_bounds__(128) potts_packed1_colour(
    u32* __restrict__ mine, const u32* __restrict__ other, u32 wr, u32 h, u64 seed, u64 stream,
    const u64* __restrict__ sweep_base, u64 sweep_add, u32 colour, u32 ca, u32 cb, u64 xa, u64 xb, u32 one,
    u64 words) {
    const u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= words) return;
    const u32 ub = (u32)(t / wr);
    packed1_word<1>(mine, other, wr, h, seed, stream, *sweep_base + sweep_add, colour, ca, cb, xa, xb, one, ub,
                    (u32)(t - (u64)ub * wr), 0);
}

// Two threads per word column (one per row parity), for small lattices.
extern "C" __global__ void __launch_bounds__(128) potts_packed1_colour_split(
    u32* __restrict__ mine, const u32* __restrict__ other, u32 wr, u32 h, u64 seed, u64 stream,
    const u64* __restrict__ sweep_base, u64 sweep_add, u32 colour, u32 ca, u32 cb, u64 xa, u64 xb, u32 one,
    u64 words) {
    const u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    const u64 k = (t >> 6) * 32 + (t & 31);
    const u32 parity = (u32)(t >> 5) & 1u;
    if (k >= words) return;
    const u32 ub = (u32)(k / wr);
    packed1_word<2>(mine, other, wr, h, seed, stream, *sweep_base + sweep_add, colour, ca, cb, xa, xb, one, ub,
                    (u32)(k - (u64)ub * wr), parity);
}

// The census of a 1-bit lattice: out[0] bonds, out[1] state 0, out[2] state 1.
extern "C" __global__ void potts_packed1_census(const u32* __restrict__ c0, const u32* __restrict__ c1, u32 wr, u32 h,
                                                unsigned long long* out) {
    const u64 n = (u64)wr * h;
    u32 unequal = 0, ones = 0, words = 0;
    for (u64 k = (u64)blockIdx.x * blockDim.x + threadIdx.x; k < n; k += (u64)gridDim.x * blockDim.x) {
        const u32 y = (u32)(k / wr);
        const u32 wx = (u32)(k - (u64)y * wr);
        const u64 row = (u64)y * wr;
        const u32 s = c0[k];
        const u32 cur = c1[k];
        const u32 up = c1[(u64)(y == 0 ? h - 1 : y - 1) * wr + wx];
        const u32 down = c1[(u64)(y + 1 == h ? 0 : y + 1) * wr + wx];
        const u32 side = (y & 1u) ? ((cur >> 1) | (c1[row + (wx + 1 == wr ? 0 : wx + 1)] << 31))
                                  : ((cur << 1) | (c1[row + (wx == 0 ? wr - 1 : wx - 1)] >> 31));
        unequal += __popc(s ^ up) + __popc(s ^ down) + __popc(s ^ cur) + __popc(s ^ side);
        ones += __popc(s) + __popc(cur);
        words += 1;
    }
    const u32 bonds = 128u * words - unequal;
    const u32 zeros = 64u * words - ones;
    const u32 rb = __reduce_add_sync(0xffffffffu, bonds);
    const u32 r0 = __reduce_add_sync(0xffffffffu, zeros);
    const u32 r1 = __reduce_add_sync(0xffffffffu, ones);
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(&out[0], (unsigned long long)rb);
        atomicAdd(&out[1], (unsigned long long)r0);
        atomicAdd(&out[2], (unsigned long long)r1);
    }
}

// Moves the sweep base of a recorded graph on by n.
extern "C" __global__ void potts_advance(u64* base, u64 n) {
    if (threadIdx.x == 0 && blockIdx.x == 0) *base += n;
}

// Sum of the eight nibbles of x (each at most 15).
__device__ __forceinline__ u32 nibble_sum(u32 x) {
    return (((x & 0x0f0f0f0fu) + ((x >> 4) & 0x0f0f0f0fu)) * 0x01010101u) >> 24;
}

// The census of a packed lattice: as potts_generic_census, out zeroed.
extern "C" __global__ void potts_packed4_census(const u32* __restrict__ c0, const u32* __restrict__ c1, u32 wr, u32 h,
                                                unsigned long long* out) {
    const u64 n = (u64)wr * h;
    u32 bonds = 0;
    u32 counts[POTTS_Q];
#pragma unroll
    for (int v = 0; v < POTTS_Q; ++v) counts[v] = 0;
    for (u64 k = (u64)blockIdx.x * blockDim.x + threadIdx.x; k < n; k += (u64)gridDim.x * blockDim.x) {
        const u32 y = (u32)(k / wr);
        const u32 wx = (u32)(k - (u64)y * wr);
        const u64 row = (u64)y * wr;
        const u32 s = c0[k];
        const u32 cur = c1[k];
        const u32 up = c1[(u64)(y == 0 ? h - 1 : y - 1) * wr + wx];
        const u32 down = c1[(u64)(y + 1 == h ? 0 : y + 1) * wr + wx];
        const u32 side = (y & 1u) ? ((cur >> 4) | (c1[row + (wx + 1 == wr ? 0 : wx + 1)] << 28))
                                  : ((cur << 4) | (c1[row + (wx == 0 ? wr - 1 : wx - 1)] >> 28));
        bonds += 32u - nibble_sum(ne4(s, up) + ne4(s, down) + ne4(s, cur) + ne4(s, side));
#pragma unroll
        for (int v = 0; v < POTTS_Q; ++v)
            counts[v] += 16u - nibble_sum(ne4(s, v * NIB1)) - nibble_sum(ne4(cur, v * NIB1));
    }
    // Per-thread sums are small (a grid-stride loop visits few words);
    // reduce over the warp, one global atomic per warp and value.
    bonds = __reduce_add_sync(0xffffffffu, bonds);
    if ((threadIdx.x & 31) == 0) atomicAdd(&out[0], (unsigned long long)bonds);
#pragma unroll
    for (int v = 0; v < POTTS_Q; ++v) {
        const u32 c = __reduce_add_sync(0xffffffffu, counts[v]);
        if ((threadIdx.x & 31) == 0 && c) atomicAdd(&out[1 + v], (unsigned long long)c);
    }
}
