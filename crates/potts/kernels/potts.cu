// Checkerboard Metropolis for the q-state Potts model, colour-split layout.
// Bit-identical with crates/potts/src/cpu.rs under each of the two rules
// that assign random numbers (algorithm.rs, Scheme), layout.rs the indexing:
//
//   potts_generic_*   one byte per spin, the one-word-per-site rule
//                     (algorithm.rs): any q, any even lattice, a field;
//   potts_heat_bath_* the same storage and random numbers, heat-bath
//                     (Gibbs) updates (heat_bath.rs);
//   potts_sliced_*    bit planes, 32 sites per word, the bit-sliced rule
//                     (sliced.rs): q <= 16, width % 64 = 0, height % 8 = 0,
//                     no field. Compiled per q (-DPOTTS_Q=q) so that the
//                     bit-sliced arithmetic folds.
#include "warpmc_rng.cuh"

using warpmc::rng::u32;
using warpmc::rng::u64;
using warpmc::rng::Words4;
typedef unsigned char u8;

// The constants this file shares with the Rust side come from it as -D
// options (cuda.rs, kernel_source), never as copies.
#if !defined(POTTS_Q) || !defined(POTTS_TABLE_LEN) || !defined(POTTS_UNIT_ROWS) || !defined(POTTS_UNIT_COLS) || \
    !defined(POTTS_MWC_A) || !defined(POTTS_HB_ENTRIES) || !defined(POTTS_TILED_HALO) || !defined(POTTS_TILED_THREADS) || \
    !defined(POTTS_TILED_DRAWS)
#error "potts.cu is compiled through warpmc_potts::cuda::kernel_source, which defines POTTS_*"
#endif
#define TABLE_LEN POTTS_TABLE_LEN
#define UNIT_ROWS POTTS_UNIT_ROWS
#define UNIT_COLS POTTS_UNIT_COLS
#define MWC_A POTTS_MWC_A
#define HB_ENTRIES POTTS_HB_ENTRIES
#define HB_TABLE_WORDS (HB_ENTRIES + HB_ENTRIES * HB_ENTRIES)

// The kernels to compile: POTTS_KERNELS is a mask of the groups POTTS_K_*
// (cuda.rs, KernelSet: the byte-per-spin kernels, the per-colour, resident,
// tiled and tiled-inline bit-plane kernels, the bit-plane census, the sweep
// advance), so that a backend compiles only what it launches (NVRTC takes
// seconds for the whole file). Without it, every kernel compiles.
#ifdef POTTS_KERNELS
#if !defined(POTTS_K_GENERIC) || !defined(POTTS_K_SLICED) || !defined(POTTS_K_RESIDENT) || !defined(POTTS_K_TILED) || \
    !defined(POTTS_K_TILED_INLINE) || !defined(POTTS_K_SLICED_CENSUS) || !defined(POTTS_K_ADVANCE)
#error "POTTS_KERNELS needs the POTTS_K_* groups (cuda.rs, with_potts_constants)"
#endif
#define POTTS_WANT(group) ((POTTS_KERNELS) & (group))
#else
#define POTTS_WANT(group) 1
#endif

// One step of a unit's multiply-with-carry generator (the multiplier is
// fixed, see algorithm.rs); returns the new x.
__device__ __forceinline__ u32 mwc_step(u64& g) { return warpmc::rng::mwc_step(g, MWC_A); }

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

// The Metropolis rule of one site with the acceptance table in shared memory.
struct MetropolisSite {
    const u64* table;
    u32 q;
    __device__ __forceinline__ u8 operator()(u8 old, u8 a, u8 b, u8 c, u8 d, u32 r) const {
        return metropolis_site(old, a, b, c, d, r, q, table);
    }
};

// ---- Heat-bath (crates/potts/src/heat_bath.rs) ------------------------------
//
// The table (HeatBathTable::words): hb[e] is the rank of entry e = 2n + z (n
// neighbours hold the state, z = [state is 0]); hb[HB_ENTRIES + R *
// HB_ENTRIES + e] the weight of entry e when the top entry present has rank
// R. The slots: the distinct neighbour states in order of first appearance
// (left, right, up, down), state 0 if no neighbour holds it, then the other
// states in increasing order; x = floor(r * Z / 2^32) picks one.

// The m-th smallest state (from 0) neither 0 nor a neighbour's: the least
// fixed point of s = m + #{taken states <= s}, at most five steps away.
__device__ __forceinline__ u32 nth_free_state(u32 m, const u8 (&nb)[4], const bool (&first)[4]) {
    u32 s = m;
#pragma unroll
    for (int it = 0; it < 5; ++it) {
        u32 taken = 1;
#pragma unroll
        for (int i = 0; i < 4; ++i) taken += (first[i] && nb[i] != 0 && (u32)nb[i] <= s);
        s = m + taken;
    }
    return s;
}

// Every slot's weight is computed and the slot found by counting the
// cumulative weights at or below x, so the neighbour slots and state 0's
// are chosen without divergent branches (an absent slot weighs nothing).
__device__ __forceinline__ u8 heat_bath_site(u8 a, u8 b, u8 c, u8 d, u32 r, u32 q, const u64* hb) {
    const u8 nb[4] = {a, b, c, d};
    const u32 ab = a == b, ac = a == c, ad = a == d, bc = b == c, bd = b == d, cd = c == d;
    const u32 held[4] = {1u + ab + ac + ad, 1u + ab + bc + bd, 1u + ac + bc + cd, 1u + ad + bd + cd};
    const bool first[4] = {true, !ab, !ac && !bc, !ad && !bd && !cd};
    u32 e[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) e[i] = 2u * held[i] + (nb[i] == 0);
    const u32 zero_free = a != 0 && b != 0 && c != 0 && d != 0;
    const u32 distinct = 1u + first[1] + first[2] + first[3];
    const u32 plain = q - distinct - zero_free;
    // The top entry present (rank 0 is no higher than any entry's).
    u32 top = (u32)hb[e[0]];
#pragma unroll
    for (int i = 1; i < 4; ++i) top = max(top, (u32)hb[e[i]] * (u32)first[i]);
    top = max(top, (u32)hb[1] * zero_free);
    top = max(top, (u32)hb[0] * (u32)(plain > 0));
    const u64* w = hb + HB_ENTRIES + top * HB_ENTRIES;
    // Cumulative weights of the neighbour slots and state 0's.
    u64 acc = 0;
    u32 k = 0;
    u64 cum[5];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        acc += first[i] ? w[e[i]] : 0;
        cum[i] = acc;
    }
    acc += zero_free ? w[1] : 0;
    cum[4] = acc;
    const u64 z = acc + (u64)plain * w[0];
    // floor(r * z / 2^32): the high word of (r * 2^32) * z.
    const u64 x = __umul64hi((u64)r << 32, z);
#pragma unroll
    for (int i = 0; i < 5; ++i) k += cum[i] <= x;
    // Selects rather than nb[k]: a dynamic index would put nb in local memory.
    if (k < 4) return k == 0 ? a : k == 1 ? b : k == 2 ? c : d;
    if (k == 4) return 0;
    const u64 w0 = w[0] ? w[0] : 1;
    return (u8)nth_free_state((u32)((x - acc) / w0), nb, first);
}

// The heat-bath rule of one site with the table in shared memory.
struct HeatBathSite {
    const u64* table;
    u32 q;
    __device__ __forceinline__ u8 operator()(u8, u8 a, u8 b, u8 c, u8 d, u32 r) const {
        return heat_bath_site(a, b, c, d, r, q, table);
    }
};

// One colour of one sweep under the one-word-per-site rule; thread k
// (grid-stride) serves unit k, each site taking site(old, left, right, up,
// down, word).
template <class Site>
__device__ __forceinline__ void generic_units(u8* __restrict__ mine, const u8* __restrict__ other, u32 hw, u32 h,
                                              u64 seed, u64 stream, u64 sweep, u32 colour, u32 units_per_row,
                                              u64 units, const Site& site) {
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
                *s = site(*s, row[left], row[right], up[xh], down[xh], r);
            }
        }
    }
}

#if POTTS_WANT(POTTS_K_GENERIC)
// One colour of one Metropolis sweep; thread k (grid-stride) serves unit k.
extern "C" __global__ void potts_generic_colour(u8* __restrict__ mine, const u8* __restrict__ other, u32 hw, u32 h,
                                                u32 q, u64 seed, u64 stream, u64 sweep, u32 colour,
                                                const u64* __restrict__ table_g, u32 units_per_row, u64 units) {
    __shared__ u64 table[TABLE_LEN];
    if (threadIdx.x < TABLE_LEN) table[threadIdx.x] = table_g[threadIdx.x];
    __syncthreads();
    generic_units(mine, other, hw, h, seed, stream, sweep, colour, units_per_row, units, MetropolisSite{table, q});
}

// One colour of one heat-bath sweep, as potts_generic_colour; table_g holds
// HB_TABLE_WORDS words.
extern "C" __global__ void potts_heat_bath_colour(u8* __restrict__ mine, const u8* __restrict__ other, u32 hw,
                                                  u32 h, u32 q, u64 seed, u64 stream, u64 sweep, u32 colour,
                                                  const u64* __restrict__ table_g, u32 units_per_row, u64 units) {
    __shared__ u64 table[HB_TABLE_WORDS];
    for (u32 i = threadIdx.x; i < HB_TABLE_WORDS; i += blockDim.x) table[i] = table_g[i];
    __syncthreads();
    generic_units(mine, other, hw, h, seed, stream, sweep, colour, units_per_row, units, HeatBathSite{table, q});
}
#endif

// Equal-neighbour bonds and state counts of the byte-per-spin lattice (c0,
// c1), added to out[0] (bonds) and out[1 + s] (sites in state s) by the
// block's threads (the grid strides over the lattice). Shared by the
// one-lattice census below, the ensemble's (potts_ensemble.cu) and a
// strip's (potts_strip.cu). Without HALOS the h rows are a torus; with
// them rows 1 … h are a strip's and rows 0 and h + 1 its halo rows, which
// count as neighbours only.
template <bool HALOS>
__device__ __forceinline__ void generic_census_into(const u8* __restrict__ c0, const u8* __restrict__ c1, u32 hw,
                                                    u32 h, u32 q, unsigned long long* out) {
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
        // A strip's rows start at an even row of the lattice: the parity
        // of y is the lattice's.
        const u64 own = HALOS ? y + 1 : y;
        u64 up = (HALOS ? y : (y == 0 ? (u64)h - 1 : y - 1)) * hw;
        u64 down = (HALOS ? y + 2 : (y + 1 == h ? 0 : y + 1)) * hw;
        const u64 at = own * hw + xh;
        u8 s = c0[at];
        const u8* row = c1 + own * hw;
        bonds += (s == row[left]) + (s == row[right]) + (s == c1[up + xh]) + (s == c1[down + xh]);
        atomicAdd(&hist[s], 1u);
        atomicAdd(&hist[c1[at]], 1u);
    }
    // Warp sum first, one shared atomic per warp.
    for (int off = 16; off > 0; off >>= 1) bonds += __shfl_down_sync(0xffffffffu, bonds, off);
    if ((threadIdx.x & 31) == 0) atomicAdd(&bonds_block, bonds);
    __syncthreads();
    if (threadIdx.x == 0 && bonds_block) atomicAdd(&out[0], bonds_block);
    for (u32 i = threadIdx.x; i < q; i += blockDim.x)
        if (hist[i]) atomicAdd(&out[1 + i], (unsigned long long)hist[i]);
}

#if POTTS_WANT(POTTS_K_GENERIC)
// Equal-neighbour bonds and state counts. out[0] = bonds, out[1 + s] = sites
// in state s; out must be zeroed before the launch. Only these q + 1 numbers
// leave the device.
extern "C" __global__ void potts_generic_census(const u8* __restrict__ c0, const u8* __restrict__ c1, u32 hw, u32 h,
                                                u32 q, unsigned long long* out) {
    generic_census_into<false>(c0, c1, hw, h, q, out);
}
#endif

// ---- Bit planes: the bit-sliced rule (crates/potts/src/sliced.rs) ----------
//
// Words of 32 sites (column x_h of a row is bit x_h mod 32 of word x_h / 32),
// SL_P = ceil(log2 q) plane words per word; row y, plane p, word w at index
// (y * wr + w) * SL_P + p. A unit is one word column of 8 rows; each row
// has its own generator (row_generators). Compiled per q
// (-DPOTTS_Q=q) so that every loop over planes and bits unrolls and the
// modular arithmetic folds into constants.


__host__ __device__ constexpr int bit_len(u32 v) { return v ? 1 + bit_len(v >> 1) : 0; }
constexpr int SL_P = bit_len(POTTS_Q - 1);   // planes
constexpr int SL_B = bit_len(POTTS_Q - 2);   // proposal bits per round
constexpr u32 SL_M = POTTS_Q - 1;            // proposals per site
constexpr bool SL_M_POW2 = (SL_M & (SL_M - 1)) == 0;

// Per site: all ones where x (N bits, least significant first) >= c.
template <int N>
__device__ __forceinline__ u32 ge_const(const u32* x, u32 c) {
    u32 gt = 0, eq = ~0u;
#pragma unroll
    for (int i = N - 1; i >= 0; --i) {
        if ((c >> i) & 1u) {
            eq &= x[i];
        } else {
            gt |= eq & x[i];
            eq &= ~x[i];
        }
    }
    return gt | eq;
}

// x += c modulo 2^N on the sites in mask.
template <int N>
__device__ __forceinline__ void add_const_masked(u32* x, u32 c, u32 mask) {
    u32 carry = 0;
#pragma unroll
    for (int i = 0; i < N; ++i) {
        const u32 a = ((c >> i) & 1u) ? mask : 0u;
        const u32 s = x[i] ^ a ^ carry;
        carry = (x[i] & a) | (carry & (x[i] ^ a));
        x[i] = s;
    }
}

// Per site: all ones where the spins a and b differ.
__device__ __forceinline__ u32 differ(const u32* a, const u32* b) {
    u32 x = a[0] ^ b[0];
#pragma unroll
    for (int p = 1; p < SL_P; ++p) x |= a[p] ^ b[p];
    return x;
}

// Bit-sliced sum of four one-bit numbers.
__device__ __forceinline__ void count4(u32 e0, u32 e1, u32 e2, u32 e3, u32* n) {
    const u32 s1 = e0 ^ e1, k1 = e0 & e1, s2 = e2 ^ e3, k2 = e2 & e3, k3 = s1 & s2;
    n[0] = s1 ^ s2;
    n[1] = k1 ^ k2 ^ k3;
    n[2] = k1 & k2;
}

// The rule's steps (sliced.rs), each a function so that the kernels which
// draw a row's random words apart from its update (potts_sliced_tiled) run
// the same code as those which draw them as they go (sliced_word).

// Proposal words per row, as an array length (Ising draws none).
constexpr int SL_KW = SL_B > 0 ? SL_B : 1;

// Step 1, its random part: the SL_B proposal words k, after the rounds that
// redraw the sites whose step is out of range (those rounds depend on k
// alone, never on the lattice).
__device__ __forceinline__ void proposal_words(u64& gen, u32* k) {
#if POTTS_Q != 2
#pragma unroll
    for (int i = 0; i < SL_B; ++i) k[i] = mwc_step(gen);
    if (!SL_M_POW2) {
        u32 rej = ge_const<SL_B>(k, SL_M);
        for (int round = 1; rej != 0 && round < 32; ++round) {
#pragma unroll
            for (int i = 0; i < SL_B; ++i) {
                const u32 w = mwc_step(gen);
                k[i] = (k[i] & ~rej) | (w & rej);
            }
            rej = ge_const<SL_B>(k, SL_M);
        }
        add_const_masked<SL_B>(k, (1u << SL_B) - SL_M, rej);
    }
#else
    (void)gen;
    (void)k;
#endif
}

// Step 1: the proposals p = (s + 1 + k) mod q (Ising: the other state).
__device__ __forceinline__ void propose(const u32* s, const u32* k, u32* p) {
#if POTTS_Q == 2
    (void)k;
    p[0] = ~s[0];
#else
    // t = s + 1 + k (at most 2q - 2), then t - q where t >= q.
    u32 t[SL_P + 1];
    u32 carry = ~0u;
#pragma unroll
    for (int i = 0; i <= SL_P; ++i) {
        const u32 a = i < SL_P ? s[i < SL_P ? i : 0] : 0u;
        const u32 kk = i < SL_B ? k[i < SL_B ? i : 0] : 0u;
        t[i] = a ^ kk ^ carry;
        carry = (a & kk) | (carry & (a ^ kk));
    }
    const u32 ge = ge_const<SL_P + 1>(t, POTTS_Q);
    add_const_masked<SL_P + 1>(t, (1u << (SL_P + 1)) - POTTS_Q, ge);
#pragma unroll
    for (int i = 0; i < SL_P; ++i) p[i] = t[i];
#endif
}

// Step 2: the sites whose move is uncertain (returned) and, for them,
// |d| - 1 = (code1 code0); sigma != 0. nb[0..3]: the neighbour words (up,
// down, same row, side).
__device__ __forceinline__ u32 classify(const u32* s, const u32* p, const u32 (*nb)[SL_P], int sigma, u32& code0,
                                        u32& code1) {
#if POTTS_Q == 2
    // n_new = 4 - n_old: count the equal (sigma > 0) or unequal
    // neighbours n; uncertain iff n >= 3, |d| - 1 = 1 or 3 (n = 4).
    (void)p;
    const u32 flip = sigma > 0 ? 0u : ~0u;
    u32 n[3];
    count4(~(s[0] ^ nb[0][0]) ^ flip, ~(s[0] ^ nb[1][0]) ^ flip, ~(s[0] ^ nb[2][0]) ^ flip, ~(s[0] ^ nb[3][0]) ^ flip,
           n);
    code0 = ~0u;
    code1 = n[2];
    return n[2] | (n[1] & n[0]);
#else
    u32 no[3], nn[3];
    count4(~differ(s, nb[0]), ~differ(s, nb[1]), ~differ(s, nb[2]), ~differ(s, nb[3]), no);
    count4(~differ(p, nb[0]), ~differ(p, nb[1]), ~differ(p, nb[2]), ~differ(p, nb[3]), nn);
    if (sigma < 0) {
#pragma unroll
        for (int i = 0; i < 3; ++i) {
            const u32 x = no[i];
            no[i] = nn[i];
            nn[i] = x;
        }
    }
    // E = n_old + ~n_new in 4 bits = d - 1; uncertain (1 <= d <= 4) iff
    // the carry out of bit 2 is set, and then bits 0, 1 are |d| - 1.
    const u32 b0 = ~nn[0], b1 = ~nn[1], b2 = ~nn[2];
    code0 = no[0] ^ b0;
    const u32 c0 = no[0] & b0;
    code1 = no[1] ^ b1 ^ c0;
    const u32 c1 = (no[1] & b1) | (c0 & (no[1] ^ b1));
    return (no[2] & b2) | (c1 & (no[2] ^ b2));
#endif
}

// Step 3, one word of it: U = 0.u1 u2 ... against each site's threshold,
// most significant bit first. u is the next drawn word, a the masks of the
// threshold bit it meets (masks[b + 1], see fill_masks). Decided now: the
// undecided sites whose bit differs from their threshold's; accepted among
// them: those where the threshold's bit is 1 (so theirs is 0).
__device__ __forceinline__ void accept_step(u32 u, const uint4 a, u32 code0, u32 code1, u32& und, u32& acc) {
#if POTTS_Q == 2
    (void)code0;
    const u32 t = a.y ^ ((a.y ^ a.w) & code1);
#else
    // Select by |d| - 1 = code1 code0 (xor form: one LOP3 each).
    const u32 x0 = a.x ^ ((a.x ^ a.y) & code0);
    const u32 x1 = a.z ^ ((a.z ^ a.w) & code0);
    const u32 t = x0 ^ ((x0 ^ x1) & code1);
#endif
    const u32 dec = und & (t ^ u);
    acc |= dec & t;
    und ^= dec;
}

// The update of one row's word (sliced.rs, update_word): s holds the SL_P
// plane words of 32 sites and receives the new ones; nb[0..3] are the
// neighbour words (up, down, same row, side); masks[b + 1] holds, for
// |d| - 1 = 0..3, all ones where bit b of that threshold is set.
// EARLY: load the masks of the first four bits before the row's other work
// (shorter latency, four more registers: for the kernels of small lattices).
template <bool EARLY>
__device__ __forceinline__ void sliced_word(u32* s, const u32 (*nb)[SL_P], u64& gen, int sigma,
                                            const uint4* __restrict__ masks) {
    // The masks of the threshold's top four bits, loaded first (they are
    // needed at the end of a long dependency chain).
    uint4 m_first[4];
    if (EARLY) {
#pragma unroll
        for (int j = 0; j < 4; ++j) m_first[j] = masks[32 - j];
    }
    u32 k[SL_KW], p[SL_P];
    proposal_words(gen, k);
    propose(s, k, p);
    u32 acc = ~0u;
    if (sigma != 0) {
        u32 code0, code1;
        u32 und = classify(s, p, nb, sigma, code0, code1);
        acc = ~und;
        // The generator as two words in the loop (fewer register moves).
        u32 gx = (u32)gen, gc = (u32)(gen >> 32);
        // One word per threshold bit while any site is undecided, at most 32.
        auto step = [&](const uint4 a) {
            accept_step(warpmc::rng::mwc_step(gx, gc, MWC_A), a, code0, code1, und, acc);
        };
        // The first four bits (most rows need them all) from masks loaded
        // before the row's other work, off the critical path; then the rest
        // unrolled by four (straight-line steps keep the generator in place).
        if (EARLY) {
#pragma unroll
            for (int j = 0; j < 4; ++j)
                if (und != 0) step(m_first[j]);
        }
#pragma unroll 4
        for (int bit = EARLY ? 27 : 31; bit >= 0; --bit) {
            if (und == 0) break;
            step(masks[bit + 1]);
        }
        gen = ((u64)gc << 32) | gx;
    }
#pragma unroll
    for (int i = 0; i < SL_P; ++i) s[i] ^= (s[i] ^ p[i]) & acc;
}

// Plane words of word w of row y: SL_P consecutive u32 at (y * wr + w) * SL_P
// (one 16-byte load for four planes). CG: through L2 only (__ldcg), for the
// resident kernel, whose blocks read what other blocks wrote in the same
// launch (the L1 caches are not coherent).
template <bool CG = false>
__device__ __forceinline__ void load_planes(u32* dst, const u32* __restrict__ a, u32 y, u32 w, u32 wr) {
    const u32* src = a + ((u64)y * wr + w) * SL_P;
    if (SL_P == 4) {
        const uint4 v = CG ? __ldcg((const uint4*)src) : *(const uint4*)src;
        dst[0] = v.x;
        dst[1] = v.y;
        dst[2 % SL_P] = v.z;
        dst[3 % SL_P] = v.w;
    } else if (SL_P == 2) {
        const uint2 v = CG ? __ldcg((const uint2*)src) : *(const uint2*)src;
        dst[0] = v.x;
        dst[1 % SL_P] = v.y;
    } else {
#pragma unroll
        for (int p = 0; p < SL_P; ++p) dst[p] = CG ? __ldcg(src + p) : src[p];
    }
}

__device__ __forceinline__ void store_planes(u32* __restrict__ a, const u32* v, u32 y, u32 w, u32 wr) {
    u32* dst = a + ((u64)y * wr + w) * SL_P;
    if (SL_P == 4) {
        *(uint4*)dst = make_uint4(v[0], v[1 % SL_P], v[2 % SL_P], v[3 % SL_P]);
    } else if (SL_P == 2) {
        *(uint2*)dst = make_uint2(v[0], v[1 % SL_P]);
    } else {
#pragma unroll
        for (int p = 0; p < SL_P; ++p) dst[p] = v[p];
    }
}

// The word beside word w of row y holding its side neighbours' edge bit
// (right for offset o = 1, left for o = 0).
__device__ __forceinline__ u32 side_word(u32 w, u32 wr, u32 o) {
    return o ? (w + 1 == wr ? 0 : w + 1) : (w == 0 ? wr - 1 : w - 1);
}

// The side neighbours of word cur (offset o), lined up with it, from cur and
// the word beside it.
__device__ __forceinline__ void side_shift(u32* dst, const u32* cur, const u32* beside, u32 o) {
#pragma unroll
    for (int p = 0; p < SL_P; ++p) dst[p] = o ? (cur[p] >> 1) | (beside[p] << 31) : (cur[p] << 1) | (beside[p] >> 31);
}

// The side neighbours of word w of row y (offset o), lined up with it.
template <bool CG = false>
__device__ __forceinline__ void side_planes(u32* dst, const u32* cur, const u32* __restrict__ other, u32 y, u32 w,
                                            u32 wr, u32 o) {
    u32 nbw[SL_P];
    load_planes<CG>(nbw, other, y, side_word(w, wr, o), wr);
    side_shift(dst, cur, nbw, o);
}

// The generators of rows first ... first + N - 1 of unit k (N = 1 or 2;
// first + N - 1 within the pair first / 2): row r's generator is pair
// r mod 2 of the Philox block 4k + r / 2, seeded as unit_generators seeds
// a pair (sliced.rs, unit_generators).
template <int N>
__device__ __forceinline__ void row_generators(u64 seed, u64 stream, u64 sweep, u32 colour, u64 k, u32 first,
                                               u64* g) {
    u64 a, b;
    unit_generators(seed, stream, sweep, colour, 4 * k + first / 2, a, b);
    if (N == 2) {
        g[0] = a;
        g[1 % N] = b;
    } else {
        g[0] = (first & 1) ? b : a;
    }
}

// Row r's generator alone.
__device__ __forceinline__ u64 row_generator(u64 seed, u64 stream, u64 sweep, u32 colour, u64 k, u32 r) {
    u64 g;
    row_generators<1>(seed, stream, sweep, colour, k, r, &g);
    return g;
}

// The rows of unit k that one thread updates: 8 / PAR consecutive rows,
// part `part` of the unit, each with its own generator. GIVEN: the caller
// computed the generator (PAR = 8 only) and passes it in g8.
template <int PAR, bool CG = false, bool GIVEN = false>
__device__ __forceinline__ void sliced_unit(u32* __restrict__ mine, const u32* __restrict__ other, u32 wr, u32 h,
                                            u64 seed, u64 stream, u64 sweep, u32 colour, int sigma,
                                            const uint4* masks, u64 k, u32 part, u64 g8 = 0) {
    constexpr int ROWS = UNIT_ROWS / PAR;
    // Units number below 2^32 (at most 2^25): 32-bit division.
    const u32 ub = (u32)k / wr;
    const u32 wx = (u32)k - ub * wr;
    const u32 y0 = ub * UNIT_ROWS + part * ROWS;
    u32 nb[4][SL_P];  // up, down, same row, side
    load_planes<CG>(nb[0], other, y0 == 0 ? h - 1 : y0 - 1, wx, wr);
    load_planes<CG>(nb[2], other, y0, wx, wr);
    // Split kernels (2 or 4 rows per thread) load all their rows first: one
    // memory latency per thread instead of one per row, which matters on
    // the small lattices they run.
    constexpr int PRE = PAR == 1 ? 1 : ROWS;
    u32 pre_down[PRE][SL_P], pre_side[PRE][SL_P], pre_s[PRE][SL_P];
    if (PAR > 1) {
#pragma unroll
        for (int i = 0; i < ROWS; ++i) {
            const u32 y = y0 + i;
            load_planes<CG>(pre_down[i % PRE], other, y + 1 == h ? 0 : y + 1, wx, wr);
            load_planes<CG>(pre_side[i % PRE], other, y, side_word(wx, wr, (y + colour) & 1u), wr);
            load_planes<CG>(pre_s[i % PRE], mine, y, wx, wr);
        }
    }
    // One Philox block per pair of rows, drawn when the pair begins (fewer
    // live registers); the resident kernel passes its one generator in.
    u64 g[ROWS];
    if (PAR == 8 && GIVEN) g[0] = g8;
#pragma unroll
    for (int i = 0; i < ROWS; ++i) {
        const u32 y = y0 + i;
        if (PAR == 8 && !GIVEN) row_generators<1>(seed, stream, sweep, colour, k, part, g);
        if (PAR < 8 && i % 2 == 0) row_generators<2>(seed, stream, sweep, colour, k, part * ROWS + i, g + i);
        u32 s[SL_P];
        if (PAR > 1) {
#pragma unroll
            for (int p = 0; p < SL_P; ++p) {
                nb[1][p] = pre_down[i % PRE][p];
                s[p] = pre_s[i % PRE][p];
            }
        } else {
            load_planes<CG>(nb[1], other, y + 1 == h ? 0 : y + 1, wx, wr);
            load_planes<CG>(s, mine, y, wx, wr);
        }
        if (PAR > 1)
            side_shift(nb[3], nb[2], pre_side[i % PRE], (y + colour) & 1u);
        else
            side_planes<CG>(nb[3], nb[2], other, y, wx, wr, (y + colour) & 1u);
        sliced_word<(PAR >= 4)>(s, nb, g[i], sigma, masks);
        store_planes(mine, s, y, wx, wr);
#pragma unroll
        for (int p = 0; p < SL_P; ++p) {
            nb[0][p] = nb[2][p];
            nb[2][p] = nb[1][p];
        }
    }
}

// The per-block table of threshold bits: masks[b + 1] = all ones where bit b
// of the threshold for |d| = 1, 2, 3, 4 is set (masks[0]: a pad, zeros).
__device__ __forceinline__ void fill_masks(uint4* masks, u32 th0, u32 th1, u32 th2, u32 th3) {
    const u32 b = threadIdx.x;
    if (b < 32)
        masks[b + 1] = make_uint4(0u - ((th0 >> b) & 1u), 0u - ((th1 >> b) & 1u), 0u - ((th2 >> b) & 1u),
                                  0u - ((th3 >> b) & 1u));
    if (b == 32) masks[0] = make_uint4(0, 0, 0, 0);
    __syncthreads();
}

// One colour of one sweep. Thread t serves part (t / 32) mod PAR of unit
// (t / (32 PAR)) * 32 + t mod 32 (neighbouring lanes take neighbouring
// units: coalesced rows). The sweep number is *sweep_base + sweep_add, so
// that a recorded CUDA graph of many sweeps can be replayed at any position.
// sigma, th0..th3: the rule (sliced.rs, SlicedRule).
template <int PAR>
__device__ __forceinline__ void sliced_colour(u32* __restrict__ mine, const u32* __restrict__ other, u32 wr, u32 h,
                                              u64 seed, u64 stream, const u64* __restrict__ sweep_base,
                                              u64 sweep_add, u32 colour, int sigma, u32 th0, u32 th1, u32 th2,
                                              u32 th3, u64 units) {
    __shared__ uint4 masks[33];
    fill_masks(masks, th0, th1, th2, th3);
    const u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    const u64 k = (t / (32 * PAR)) * 32 + (t & 31);
    const u32 part = (u32)(t >> 5) % PAR;
    if (k >= units) return;
    sliced_unit<PAR>(mine, other, wr, h, seed, stream, *sweep_base + sweep_add, colour, sigma, masks, k, part);
}

#define SLICED_KERNEL(NAME, PAR)                                                                               \
    extern "C" __global__ void __launch_bounds__(128)                                                          \
        NAME(u32* __restrict__ mine, const u32* __restrict__ other, u32 wr, u32 h, u64 seed, u64 stream,       \
             const u64* __restrict__ sweep_base, u64 sweep_add, u32 colour, int sigma, u32 th0, u32 th1,       \
             u32 th2, u32 th3, u64 units) {                                                                    \
        sliced_colour<PAR>(mine, other, wr, h, seed, stream, sweep_base, sweep_add, colour, sigma, th0, th1, \
                           th2, th3, units);                                                                   \
    }
#if POTTS_WANT(POTTS_K_SLICED)
// One thread per unit; two, four and eight (four, two rows, one row each)
// per unit for lattices too small to fill the GPU otherwise.
SLICED_KERNEL(potts_sliced_colour, 1)
SLICED_KERNEL(potts_sliced_colour_split, 2)
SLICED_KERNEL(potts_sliced_colour_split4, 4)
SLICED_KERNEL(potts_sliced_colour_split8, 8)
#endif

#if POTTS_WANT(POTTS_K_RESIDENT)
// Many sweeps in one launch, for lattices whose threads all fit on the GPU
// at once (launched cooperatively, so every block is resident). Thread
// mapping as potts_sliced_colour_split8: blocks 2m and 2m + 1 serve units
// 32m ... 32m + 31, i.e. row-blocks rb_lo ... rb_hi. Before a colour, a block waits only
// for the blocks serving the row-blocks next to its own (whose rows its
// updates read, and which read the rows it is about to write) to have
// finished the previous colour: flags[b] counts the colours block b has
// finished (zeroed before the launch). Saves two kernel launches and starts
// per sweep, and no block waits for the whole grid. Its next generator is
// computed before it waits; the lattice is read through L2 only (other
// blocks write it during the launch).
extern "C" __global__ void __launch_bounds__(128) potts_sliced_resident(
    u32* __restrict__ c0, u32* __restrict__ c1, u32 wr, u32 h, u64 seed, u64 stream, u64 first_sweep, u32 sweeps,
    int sigma, u32 th0, u32 th1, u32 th2, u32 th3, u64 units, u32* flags) {
    __shared__ uint4 masks[33];
    fill_masks(masks, th0, th1, th2, th3);
    const u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    const u64 k = (t / (32 * 8)) * 32 + (t & 31);
    const u32 part = (u32)(t >> 5) % 8;
    const bool active = k < units;
    // The blocks to wait for: those serving row-blocks rb_lo - 1 ... rb_hi + 1
    // (cyclically); thread j watches the j-th, j + 128-th, ...
    const u32 rbs = h / UNIT_ROWS;
    // Blocks 2m and 2m + 1 serve units 32m ... 32m + 31 (rows 0-3 and 4-7).
    const u64 first_unit = (u64)(blockIdx.x / 2) * 32;
    const u64 last_unit = min(first_unit + 31, units - 1);
    const u32 rb_lo = (u32)(first_unit / wr), rb_hi = (u32)(last_unit / wr);
    // Row-blocks rb_lo - 1 ... rb_hi + 1, as blocks: a contiguous cyclic range.
    const u32 lo_rb = rb_lo == 0 ? rbs - 1 : rb_lo - 1;
    const u32 hi_rb = rb_hi + 1 == rbs ? 0 : rb_hi + 1;
    const u32 blocks = gridDim.x;
    const u32 lo_block = 2 * (u32)(((u64)lo_rb * wr) / 32);
    const u32 hi_block = 2 * (u32)(((u64)hi_rb * wr + wr - 1) / 32) + 1;
    // Cyclic distance lo_block -> hi_block, capped at the grid.
    const u32 span = min(blocks, (hi_block + blocks - lo_block) % blocks + 1);
    u64 g = active ? row_generator(seed, stream, first_sweep, 0, k, part) : 0;
    u32 done = 0;  // colours finished
    for (u32 s = 0; s < sweeps; ++s) {
        for (u32 colour = 0; colour < 2; ++colour) {
            if (done > 0) {
                // Wait for the neighbouring blocks to finish colour done - 1:
                // an acquire load of each flag, then the block barrier,
                // which carries the ordering to the block's other threads.
                for (u32 j = threadIdx.x; j < span; j += blockDim.x) {
                    const u32* f = flags + (lo_block + j) % blocks;
                    u32 v;
                    do {
                        asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(f) : "memory");
                    } while (v < done);
                }
                __syncthreads();
            }
            if (active)
                sliced_unit<8, true, true>(colour ? c1 : c0, colour ? c0 : c1, wr, h, seed, stream, first_sweep + s,
                                           colour, sigma, masks, k, part, g);
            // Signal as soon as the block's rows are written (the barrier
            // makes thread 0's release cover every thread's stores) ...
            __syncthreads();
            ++done;
            if (threadIdx.x == 0)
                asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(flags + blockIdx.x), "r"(done) : "memory");
            // ... and draw the next colour's generator while others catch up.
            const u64 ns = first_sweep + s + colour;
            if (active) g = row_generator(seed, stream, ns, colour ^ 1u, k, part);
        }
    }
}
#endif

// ---- One lattice in shared memory: strips, halo rows, random words drawn ahead
//
// For lattices whose strips fit in shared memory (cuda.rs, TiledPlan), where
// one colour step is too little work to hide the latency of a word update.
// Block b of the cooperative grid keeps rows bR ... bR + R - 1 of both colour
// arrays in shared memory, with K halo rows above and below that it updates
// as well, so that blocks trade edge rows through global memory only once
// every K colour steps (temporal blocking): colour step j of a round
// updates rows -K + 1 + j ... R + K - 2 - j, those whose neighbours are still
// valid.
//
// A row's random words do not depend on the lattice (sliced.rs): its
// generator comes from a Philox block of (seed, stream, step, unit), then
// gives the proposal words and the acceptance words, of which the lattice
// decides only how many are used. So while some warps update a colour
// step, the block's other warps draw the next step's words into shared
// memory: per row word the proposal words, the first E acceptance words
// and the generator's state after them (one Philox block serves the two
// rows of a pair). The update then starts from shared memory instead of a
// chain of some 150 dependent instructions. The same rows, random numbers
// and rule as the other bit-sliced kernels, bit for bit (tests/backends.rs;
// measured in experiments/potts-tiled).

#define TILED_HALO POTTS_TILED_HALO
#define TILED_THREADS POTTS_TILED_THREADS
#define TILED_DRAWS POTTS_TILED_DRAWS

// Words kept per row word and colour step: SL_B proposal words, E
// acceptance words, the generator state (x, c) after them.
template <int E>
__host__ __device__ constexpr int tiled_fields() {
    return SL_B + E + 2;
}

// Planes of one word in shared memory (SL_P consecutive u32).
__device__ __forceinline__ void shared_planes_load(u32* dst, const u32* src) {
    if (SL_P == 4) {
        const uint4 v = *(const uint4*)src;
        dst[0] = v.x;
        dst[1 % SL_P] = v.y;
        dst[2 % SL_P] = v.z;
        dst[3 % SL_P] = v.w;
    } else if (SL_P == 2) {
        const uint2 v = *(const uint2*)src;
        dst[0] = v.x;
        dst[1 % SL_P] = v.y;
    } else {
#pragma unroll
        for (int p = 0; p < SL_P; ++p) dst[p] = src[p];
    }
}

__device__ __forceinline__ void shared_planes_store(u32* dst, const u32* v) {
    if (SL_P == 4) {
        *(uint4*)dst = make_uint4(v[0], v[1 % SL_P], v[2 % SL_P], v[3 % SL_P]);
    } else if (SL_P == 2) {
        *(uint2*)dst = make_uint2(v[0], v[1 % SL_P]);
    } else {
#pragma unroll
        for (int p = 0; p < SL_P; ++p) dst[p] = v[p];
    }
}

__device__ __forceinline__ void wait_at_least(const u32* flag, u32 target) {
    u32 v;
    do {
        asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(flag) : "memory");
    } while (v < target);
}

// Copies n rows of row_len = SL_P 2^wr_shift u32: row i of dst from row i
// of src, where dst_row(i) and src_row(i) give the rows' first u32, in
// pieces of V = 2^V_SHIFT u32. LOAD_CG reads through L2 only (rows other
// blocks wrote during the launch), STORE_CG writes past L1.
template <class V, u32 V_SHIFT, bool LOAD_CG, bool STORE_CG, class Dst, class Src>
__device__ __forceinline__ void copy_pieces(u32 n, u32 wr_shift, Dst dst_row, Src src_row) {
    const u32 per_row = (u32)SL_P << (wr_shift - V_SHIFT);
    const u32 total = n * per_row;
    for (u32 i = threadIdx.x; i < total; i += blockDim.x) {
        const u32 row = i / per_row;
        const u32 off = (i - row * per_row) << V_SHIFT;
        const V* src = (const V*)(src_row(row) + off);
        V* dst = (V*)(dst_row(row) + off);
        const V v = LOAD_CG ? __ldcg(src) : *src;
        if (STORE_CG)
            __stcg(dst, v);
        else
            *dst = v;
    }
}

// copy_pieces in 16-byte pieces where a row holds whole ones.
template <bool LOAD_CG, bool STORE_CG, class Dst, class Src>
__device__ __forceinline__ void copy_rows(u32 n, u32 wr_shift, Dst dst_row, Src src_row) {
    if (wr_shift >= 2)
        copy_pieces<uint4, 2, LOAD_CG, STORE_CG>(n, wr_shift, dst_row, src_row);
    else
        copy_pieces<u32, 0, LOAD_CG, STORE_CG>(n, wr_shift, dst_row, src_row);
}

// The acceptance words after the first E of a row word: from the generator
// state (gx, gc) left after them, threshold bits 31 - E down to 0, in rounds
// of four while any site is undecided (a word drawn once every site is
// decided changes nothing, and the generator is dropped after the row).
template <int E>
__device__ __forceinline__ void accept_rest(u32 gx, u32 gc, const uint4* __restrict__ masks, u32 code0, u32 code1,
                                            u32& und, u32& acc) {
    static_assert((32 - E) % 4 == 0, "E leaves whole rounds of four threshold bits");
    for (int bit = 31 - E; bit >= 0 && und != 0; bit -= 4) {
#pragma unroll
        for (int i = 0; i < 4; ++i)
            accept_step(warpmc::rng::mwc_step(gx, gc, MWC_A), masks[bit - i + 1], code0, code1, und, acc);
    }
}

// The trade of edge rows between neighbouring strips after a round of K
// colour steps: this block's rows 0 ... K - 1 (side 0) and R - K ... R - 1
// (side 1) of both colours go to its slot of xbuf (slots by round parity,
// then block, side * 2 + colour, K rows each); the block above's side 1
// becomes rows -K ... -1 here, the block below's side 0 rows R ... R + K - 1.
// A slot is rewritten in round r + 2 only after this block has taken its
// neighbours' round r + 1 rows, which they published after taking round r's.

// Each u32 travels as a 64-bit word whose upper half is the round's tag
// (round + 1; xbuf is zeroed before each launch). Aligned 64-bit relaxed
// accesses are single-copy atomic, so a word that shows the tag carries that
// round's data: the reader polls the words themselves, with no barrier,
// fence or flag between the writer's stores and its loads. (Rewriting a slot
// cannot race with a neighbour's load of its previous round: that load had
// returned, its value stored to shared memory before the barrier that
// preceded the neighbour's next publication.) xbuf holds 2 u32 per u32 of
// the flagged layout.
template <int K, class SharedRow>
__device__ __forceinline__ void exchange_tagged(u32* xbuf, u32 round, u32 G, u32 b, u32 up, u32 down, u32 R,
                                                u32 row_len, SharedRow shared_row) {
    unsigned long long* const x = (unsigned long long*)xbuf;
    const u32 slot = K * row_len, n = 4 * slot, tid = threadIdx.x, T = blockDim.x;
    const unsigned long long tag = (unsigned long long)(round + 1) << 32;
    unsigned long long* const mine = x + (u64)((round & 1) * G + b) * n;
    for (u32 i = tid; i < n; i += T) {
        const u32 sc = i / slot, r = (i - sc * slot) / row_len, off = i - sc * slot - r * row_len;
        const int y = ((sc >> 1) ? (int)R - K : 0) + (int)r;
        const unsigned long long v = tag | shared_row(sc & 1, y)[off];
        asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(mine + i), "l"(v) : "memory");
    }
    const unsigned long long* const from_up = x + (u64)((round & 1) * G + up) * n;
    const unsigned long long* const from_down = x + (u64)((round & 1) * G + down) * n;
    // Part p = i / (2 slot): 0 from above (its side 1), 1 from below (its
    // side 0); colour c within. Four words in flight per thread, then each
    // polled until its tag shows.
    constexpr int BATCH = 4;
    for (u32 i0 = tid; i0 < n; i0 += BATCH * T) {
        unsigned long long v[BATCH];
        const unsigned long long* src[BATCH];
#pragma unroll
        for (int j = 0; j < BATCH; ++j) {
            const u32 i = i0 + j * T;
            const u32 part = i / (2 * slot), within = i - part * 2 * slot;
            src[j] = part == 0 ? from_up + 2 * slot + within : from_down + within;
            if (i < n) asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v[j]) : "l"(src[j]) : "memory");
        }
#pragma unroll
        for (int j = 0; j < BATCH; ++j) {
            const u32 i = i0 + j * T;
            if (i >= n) break;
            while ((v[j] & ~0xffffffffull) != tag)
                asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v[j]) : "l"(src[j]) : "memory");
            const u32 part = i / (2 * slot), within = i - part * 2 * slot;
            const u32 c = within / slot, r = (within - c * slot) / row_len, off = within - c * slot - r * row_len;
            const int y = part == 0 ? (int)r - K : (int)R + (int)r;
            shared_row(c, y)[off] = (u32)v[j];
        }
    }
}

// The exchange tiled_sweeps runs by default; the experiments
// (experiments/potts-tiled) pass others with the same call.
struct TaggedExchange {
    template <int K, class SharedRow>
    __device__ __forceinline__ static void run(u32* xbuf, u32* /*flags*/, u32 round, u32 G, u32 b, u32 up, u32 down,
                                               u32 R, u32 /*wr_shift*/, u32 row_len, SharedRow shared_row) {
        exchange_tagged<K>(xbuf, round, G, b, up, down, R, row_len, shared_row);
    }
};

// The random words and the acceptance test of the bit-sliced rule
// (sliced.rs) for words drawn ahead: generators seeds a unit's two row
// generators (unit_generators), fill sets up the test's table in shared
// memory (the threshold masks, fill_masks), draw stores what the test
// needs of a row word's acceptance words, from the generator state (gx,
// gc) after its proposal words, at d[(SL_B + f) * fs] (f < E + 2), and
// accept decides the uncertain sites und of a word from them, setting the
// accepted ones in acc. SPLIT_ROWS: the drawing threads take one row each
// (two threads draw a pair's Philox block) instead of a pair. A template
// parameter of the tiled inline kernel so that experiments
// (experiments/potts-tiled) can time other rules in the same kernel.
//
// LazyBitSerial stores the first E acceptance words and the generator
// state after them; accept goes on drawing while a site is undecided.
struct LazyBitSerial {
    static constexpr bool SPLIT_ROWS = false;
    template <int E>
    __device__ __forceinline__ static void draw(u32 gx, u32 gc, u32* d, u32 fs, const uint4* __restrict__ /*masks*/) {
#pragma unroll
        for (int e = 0; e < E; ++e) d[(SL_B + e) * fs] = warpmc::rng::mwc_step(gx, gc, MWC_A);
        d[(SL_B + E) * fs] = gx;
        d[(SL_B + E + 1) * fs] = gc;
    }
    __device__ __forceinline__ static void generators(u64 seed, u64 stream, u64 sweep, u32 colour, u64 unit, u64& g0,
                                                      u64& g1) {
        unit_generators(seed, stream, sweep, colour, unit, g0, g1);
    }
    __device__ __forceinline__ static void fill(uint4* table, u32 th0, u32 th1, u32 th2, u32 th3) {
        fill_masks(table, th0, th1, th2, th3);
    }
    template <int E>
    __device__ __forceinline__ static void accept(const u32* wd, u32 fs, const uint4* __restrict__ masks, u32 code0,
                                                  u32 code1, u32& und, u32& acc) {
        // Threshold bit 31 - e meets acceptance word e (masks[b + 1] holds
        // bit b).
#pragma unroll
        for (int e = 0; e < E; ++e) accept_step(wd[(SL_B + e) * fs], masks[32 - e], code0, code1, und, acc);
        if (und != 0) accept_rest<E>(wd[(SL_B + E) * fs], wd[(SL_B + E + 1) * fs], masks, code0, code1, und, acc);
    }
};

// The random words of a row pair for colour step n (sweep n >> 1, colour
// n & 1): strip rows y0, y0 + 1 at lattice rows yg, yg + 1 (yg even), word
// w, one Philox block for both, as row_generators seeds them. Row y0 + r's
// words go to wd + r * wr (field f at [f * fs]) unless r is skip (-1: none).
template <int E, class Rule = LazyBitSerial>
__device__ __forceinline__ void draw_row_pair(u64 seed, u64 stream, u64 n, u32 yg, u32 w, u32 wr_shift, u32* wd,
                                              int skip, u32 fs, const uint4* __restrict__ masks) {
    const u64 k = ((u64)(yg / UNIT_ROWS) << wr_shift) + w;
    u64 g[2];
    Rule::generators(seed, stream, n >> 1, (u32)(n & 1), 4 * k + (yg % UNIT_ROWS) / 2, g[0], g[1]);
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        if (r == skip) continue;
        u32* const d = wd + (r << wr_shift);
        u32 kw[SL_KW];
        proposal_words(g[r], kw);
#pragma unroll
        for (int f = 0; f < SL_B; ++f) d[f * fs] = kw[f < SL_B ? f : 0];
        Rule::template draw<E>((u32)g[r], (u32)(g[r] >> 32), d, fs, masks);
    }
}

// The update of one word s (sliced_word's rule) from its words drawn ahead
// (field f at wd[f * fs]); sg: the rule's sigma, a literal at the call.
template <int E, class Rule = LazyBitSerial>
__device__ __forceinline__ void drawn_word_update(u32* s, const u32 (*nb)[SL_P], const u32* wd, u32 fs, int sg,
                                                  const uint4* __restrict__ masks) {
    u32 kw[SL_KW], p[SL_P];
#pragma unroll
    for (int f = 0; f < SL_KW; ++f) kw[f] = f < SL_B ? wd[f * fs] : 0u;
    propose(s, kw, p);
    u32 acc = ~0u;
    if (sg != 0) {
        u32 code0, code1;
        u32 und = classify(s, p, nb, sg, code0, code1);
        acc = ~und;
        Rule::template accept<E>(wd, fs, masks, code0, code1, und, acc);
    }
#pragma unroll
    for (int q = 0; q < SL_P; ++q) s[q] ^= (s[q] ^ p[q]) & acc;
}

// A block's strip in a tiled kernel: R lattice rows from row blockIdx.x R
// with K halo rows above and below, both colours, in dynamic shared memory
// (cuda.rs, TiledPlan): both colours' R + 2K rows of SL_P 2^wr_shift u32,
// then two sets (by the parity of the step) of F planes of random words,
// R + 2K rows of 2^wr_shift words each. Strip row y runs from -K to
// R + K - 1; strips start at even lattice rows, so y and its lattice row
// have the same parity.
template <int K, int F>
struct TiledStrip {
    u32* tile;
    u32* words;
    u32* c0;
    u32* c1;
    u32 wr_shift, R, row_len, rows, colour_len, fs;
    int base, height;

    __device__ __forceinline__ TiledStrip(u32* tile_, u32* c0_, u32* c1_, u32 wr_shift_, u32 h, u32 R_)
        : tile(tile_),
          c0(c0_),
          c1(c1_),
          wr_shift(wr_shift_),
          R(R_),
          row_len(SL_P << wr_shift_),
          rows(R_ + 2 * K),
          colour_len((R_ + 2 * K) * (SL_P << wr_shift_)),
          fs((R_ + 2 * K) << wr_shift_),
          base((int)(blockIdx.x * R_)),
          height((int)h) {
        words = tile + 2 * colour_len;
    }
    // The lattice row of strip row y (one wrap at most, as K <= R <= h).
    __device__ __forceinline__ u32 lattice_row(int y) const {
        int g = base + y;
        g += g < 0 ? height : 0;
        g -= g >= height ? height : 0;
        return (u32)g;
    }
    // Word w of strip row y within a colour's rows, in u32.
    __device__ __forceinline__ u32 at(int y, u32 w) const { return ((((u32)(y + K)) << wr_shift) + w) * SL_P; }
    __device__ __forceinline__ u32* shared_row(u32 c, int y) const {
        return tile + c * colour_len + (u32)(y + K) * row_len;
    }
    __device__ __forceinline__ u32* global_row(u32 c, u32 yg) const { return (c ? c1 : c0) + (u64)yg * row_len; }
    // The random words of step i of the launch for row y, word w: field f
    // at [f * fs].
    __device__ __forceinline__ u32* words_at(u32 i, int y, u32 w) const {
        return words + (i & 1) * F * fs + ((u32)(y + K) << wr_shift) + w;
    }
    // Both colours' strip and halo rows from the lattice.
    __device__ __forceinline__ void load() const {
        for (u32 c = 0; c < 2; ++c)
            copy_rows<true, false>(
                rows, wr_shift, [&](u32 r) { return shared_row(c, (int)r - K); },
                [&](u32 r) { return (const u32*)global_row(c, lattice_row((int)r - K)); });
    }
    // Both colours' strip rows back to the lattice, once the strips above
    // and below have read their halo rows from it (their flags are 1).
    __device__ __forceinline__ void store(const u32* flags, u32 up, u32 down) const {
        if (threadIdx.x == 0) wait_at_least(flags + up, 1);
        if (threadIdx.x == 32) wait_at_least(flags + down, 1);
        __syncthreads();
        for (u32 c = 0; c < 2; ++c)
            copy_rows<false, false>(
                R, wr_shift, [&](u32 r) { return global_row(c, lattice_row((int)r)); },
                [&](u32 r) { return (const u32*)shared_row(c, (int)r); });
    }
};

// sweeps (at most 2^24) sweeps from first_sweep with K halo rows and E
// acceptance words drawn ahead. The grid's G blocks hold strips of R = h / G
// rows (R even, at least K); the lattice rows have 2^wr_shift words. xbuf:
// what Exchange needs (exchange_tagged: 2 G 4 K rows of tagged words,
// zeroed); flags: G zeroed words, 1 once block b has read its rows (an
// Exchange may use them too). Dynamic shared memory: a
// TiledStrip<K, tiled_fields<E>()>.
template <int K, int E, class Exchange = TaggedExchange>
__device__ __forceinline__ void tiled_sweeps(u32* __restrict__ c0, u32* __restrict__ c1, u32 wr_shift, u32 h,
                                             u32 R, u64 seed, u64 stream, u64 first_sweep, u32 sweeps, int sigma,
                                             u32 th0, u32 th1, u32 th2, u32 th3, u32* __restrict__ xbuf,
                                             u32* flags) {
    constexpr int F = tiled_fields<E>();
    extern __shared__ uint4 tile_raw[];
    __shared__ uint4 masks[33];
    fill_masks(masks, th0, th1, th2, th3);
    const TiledStrip<K, F> S((u32*)tile_raw, c0, c1, wr_shift, h, R);
    const u32 G = gridDim.x, b = blockIdx.x, tid = threadIdx.x, T = blockDim.x;
    const u32 wr = 1u << wr_shift;
    const u32 fs = S.fs;
    // The rows colour step j of a round updates: lo ... hi - 1.
    auto row_lo = [&](u32 j) { return -K + 1 + (int)j; };
    auto row_hi = [&](u32 j) { return (int)R + K - 1 - (int)j; };
    const u64 n0 = 2ull * first_sweep;
    // Draws the words of step i (step j of its round), as threads first ...
    // first + stride - 1 of the block: one Philox block per row pair and
    // word, as row_generators seeds them.
    auto draw = [&](u32 i, u32 j, u32 first, u32 stride) {
        const u64 n = n0 + i;
        const int lo = row_lo(j), hi = row_hi(j);
        const int pair_lo = lo >> 1, pair_hi = (hi - 1) >> 1;  // floor: lo may be negative
        const u32 tasks = (u32)(pair_hi - pair_lo + 1) << wr_shift;
        for (u32 t = tid - first; t < tasks; t += stride) {
            const int y0 = 2 * (pair_lo + (int)(t >> wr_shift));
            const u32 w = t & (wr - 1);
            const int skip = y0 < lo ? 0 : y0 + 1 >= hi ? 1 : -1;
            draw_row_pair<E>(seed, stream, n, S.lattice_row(y0), w, wr_shift, S.words_at(i, y0, w), skip, fs, masks);
        }
    };
    // Updates step i (step j of its round), as threads 0 ... stride - 1 of
    // the block; sg: the rule's sigma, passed as a literal so that the
    // inlined loop knows it.
    auto update = [&](const int sg, u32 i, u32 j, u32 stride) {
        const u32 colour = i & 1;  // n0 is even
        u32* mine = S.tile + colour * S.colour_len;
        const u32* other = S.tile + (colour ^ 1) * S.colour_len;
        const int lo = row_lo(j);
        const u32 tasks = (u32)(row_hi(j) - lo) << wr_shift;
        for (u32 t = tid; t < tasks; t += stride) {
            const int y = lo + (int)(t >> wr_shift);
            const u32 w = t & (wr - 1);
            u32 s[SL_P], nb[4][SL_P], side[SL_P];
            shared_planes_load(s, mine + S.at(y, w));
            shared_planes_load(nb[0], other + S.at(y - 1, w));
            shared_planes_load(nb[1], other + S.at(y + 1, w));
            shared_planes_load(nb[2], other + S.at(y, w));
            const u32 o = ((u32)y + colour) & 1u;
            shared_planes_load(side, other + S.at(y, o ? (w + 1) & (wr - 1) : (w - 1) & (wr - 1)));
            side_shift(nb[3], nb[2], side, o);
            drawn_word_update<E>(s, nb, S.words_at(i, y, w), fs, sg, masks);
            shared_planes_store(mine + S.at(y, w), s);
        }
    };
    // The strip and its halo rows, both colours, and the first step's words.
    S.load();
    const u32 steps = 2 * sweeps;
    draw(0, 0, 0, T);
    __syncthreads();
    // 1: this block has read its rows (the neighbours may write theirs back).
    if (tid == 0) asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(flags + b), "r"(1u) : "memory");
    const u32 up = b == 0 ? G - 1 : b - 1, down = b + 1 == G ? 0 : b + 1;
    u32 round = 0;
    for (u32 done = 0; done < steps; done += K, ++round) {
        const u32 kr = min((u32)K, steps - done);
        for (u32 j = 0; j < kr; ++j) {
            // Step i = done + j. Its updates take whole warps from the
            // first; the warps left over draw step i + 1's words (or, when
            // the updates take every thread, all threads do after their
            // updates).
            const u32 i = done + j;
            const u32 tasks = (u32)(row_hi(j) - row_lo(j)) << wr_shift;
            const u32 updaters = min((tasks + 31u) & ~31u, T);
            if (tid < updaters) {
                if (sigma > 0)
                    update(1, i, j, updaters);
                else if (sigma < 0)
                    update(-1, i, j, updaters);
                else
                    update(0, i, j, updaters);
            }
            if (i + 1 < steps) {
                const u32 first = updaters < T ? updaters : 0;
                if (tid >= first) draw(i + 1, j + 1 == K ? 0 : j + 1, first, T - first);
            }
            __syncthreads();
        }
        if (done + kr >= steps) break;
        // Publish rows 0 ... K - 1 (side 0) and R - K ... R - 1 (side 1) of
        // both colours, then take the neighbours' into the halo rows.
        Exchange::template run<K>(xbuf, flags, round, G, b, up, down, R, wr_shift, S.row_len,
                                  [&](u32 c, int y) { return S.shared_row(c, y); });
        __syncthreads();
    }
    // The strip back to the lattice, once the neighbours have read their
    // halo rows from it.
    S.store(flags, up, down);
}

// sweeps (at most 2^24) sweeps from first_sweep as tiled_sweeps<1, E>
// does, with the edge rows traded inside the update instead of in a phase
// of their own: rows 0 and R - 1 are a colour step's first tasks; each of
// their threads takes the one word of the neighbouring strip it reads (that
// strip's edge word of the previous step) from the neighbour's tagged slot,
// updates, and publishes its own new word tagged with the step, while the
// rows between, which read no halo, update beside them. One barrier per
// colour step, no halo rows updated twice, and no block waits for a whole
// exchange: only an edge word waits for the one word it reads.
//
// xbuf: 2 (step parity) x G x 2 (side: row 0, row R - 1) slots of a row's
// SL_P 2^wr_shift u32, each as a 64-bit word whose upper half is the tag
// (step + 1; zeroed before the launch; exchange_tagged explains why the
// words need no flag or fence). A slot is rewritten two steps later, by
// the thread that has meanwhile seen the neighbour's word of the step
// between, which the neighbour computed from this slot's word. The halo
// rows in shared memory serve the first step only. flags and shared memory
// as tiled_sweeps<1, E>; Rule: the acceptance test (LazyBitSerial).
// WAIT = false takes the edge words without waiting for their step (wrong
// bits: experiments/potts-registers times what the wait costs).
template <int E, class Rule = LazyBitSerial, bool WAIT = true>
__device__ __forceinline__ void tiled_sweeps_inline(u32* __restrict__ c0, u32* __restrict__ c1, u32 wr_shift, u32 h,
                                                    u32 R, u64 seed, u64 stream, u64 first_sweep, u32 sweeps,
                                                    int sigma, u32 th0, u32 th1, u32 th2, u32 th3,
                                                    u32* __restrict__ xbuf, u32* flags) {
    constexpr int K = 1;
    constexpr int F = tiled_fields<E>();
    extern __shared__ uint4 tile_raw[];
    __shared__ uint4 masks[33];
    Rule::fill(masks, th0, th1, th2, th3);
    const TiledStrip<K, F> S((u32*)tile_raw, c0, c1, wr_shift, h, R);
    const u32 G = gridDim.x, b = blockIdx.x, tid = threadIdx.x, T = blockDim.x;
    const u32 wr = 1u << wr_shift;
    const u32 row_len = S.row_len;
    const u32 fs = S.fs;
    const u32 up = b == 0 ? G - 1 : b - 1, down = b + 1 == G ? 0 : b + 1;
    unsigned long long* const x = (unsigned long long*)xbuf;
    auto slot = [&](u32 i, u32 blk, u32 side) { return x + ((u64)((i & 1) * G + blk) * 2 + side) * row_len; };
    const u64 n0 = 2ull * first_sweep;
    // Draws the words of step i (every strip row), as threads first ...
    // first + stride - 1 of the block.
    auto draw = [&](u32 i, u32 first, u32 stride) {
        if (Rule::SPLIT_ROWS) {
            // A row each: the thread of row y0 + r skips row y0 + 1 - r.
            const u32 tasks = R << wr_shift;
            for (u32 t = tid - first; t < tasks; t += stride) {
                const int y = (int)(t >> wr_shift), y0 = y & ~1;
                const u32 w = t & (wr - 1);
                draw_row_pair<E, Rule>(seed, stream, n0 + i, S.lattice_row(y0), w, wr_shift, S.words_at(i, y0, w),
                                       (y & 1) ^ 1, fs, masks);
            }
            return;
        }
        const u32 tasks = (R >> 1) << wr_shift;
        for (u32 t = tid - first; t < tasks; t += stride) {
            const int y0 = 2 * (int)(t >> wr_shift);
            const u32 w = t & (wr - 1);
            draw_row_pair<E, Rule>(seed, stream, n0 + i, S.lattice_row(y0), w, wr_shift, S.words_at(i, y0, w), -1,
                                   fs, masks);
        }
    };
    const u32 steps = 2 * sweeps;
    // Updates step i as threads 0 ... stride - 1; sg as in tiled_sweeps.
    auto update = [&](const int sg, u32 i, u32 stride) {
        const u32 colour = i & 1;  // n0 is even
        u32* mine = S.tile + colour * S.colour_len;
        const u32* other = S.tile + (colour ^ 1) * S.colour_len;
        const u32 tasks = R << wr_shift;
        const unsigned long long want = (unsigned long long)i << 32;
        for (u32 t = tid; t < tasks; t += stride) {
            // Tasks: row 0 (side 0), row R - 1 (side 1), then rows 1 ... R - 2.
            const u32 r = t >> wr_shift, w = t & (wr - 1);
            const int y = r == 0 ? 0 : r == 1 ? (int)R - 1 : (int)r - 1;
            const bool edge = r < 2;
            // The neighbour's edge word this one reads (the block above's
            // row R - 1 for row 0, the block below's row 0 for row R - 1),
            // requested before the shared loads; from step 1 on.
            const bool poll = edge && i > 0;
            unsigned long long hv[SL_P];
            const unsigned long long* src = nullptr;
            if (poll) {
                src = slot(i - 1, r == 0 ? up : down, r ^ 1) + w * SL_P;
#pragma unroll
                for (int q = 0; q < SL_P; ++q)
                    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(hv[q]) : "l"(src + q) : "memory");
            }
            u32 s[SL_P], nb[4][SL_P], side[SL_P];
            shared_planes_load(s, mine + S.at(y, w));
            shared_planes_load(nb[2], other + S.at(y, w));
            const u32 o = ((u32)y + colour) & 1u;
            shared_planes_load(side, other + S.at(y, o ? (w + 1) & (wr - 1) : (w - 1) & (wr - 1)));
            side_shift(nb[3], nb[2], side, o);
            if (poll) {
#pragma unroll
                for (int q = 0; q < SL_P; ++q)
                    while (WAIT && (hv[q] & ~0xffffffffull) != want)
                        asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(hv[q]) : "l"(src + q) : "memory");
            }
            if (poll && r == 0) {
#pragma unroll
                for (int q = 0; q < SL_P; ++q) nb[0][q] = (u32)hv[q];
            } else {
                shared_planes_load(nb[0], other + S.at(y - 1, w));
            }
            if (poll && r == 1) {
#pragma unroll
                for (int q = 0; q < SL_P; ++q) nb[1][q] = (u32)hv[q];
            } else {
                shared_planes_load(nb[1], other + S.at(y + 1, w));
            }
            drawn_word_update<E, Rule>(s, nb, S.words_at(i, y, w), fs, sg, masks);
            shared_planes_store(mine + S.at(y, w), s);
            if (edge && i + 1 < steps) {
                unsigned long long* const dst = slot(i, b, r) + w * SL_P;
                const unsigned long long tag = (unsigned long long)(i + 1) << 32;
#pragma unroll
                for (int q = 0; q < SL_P; ++q)
                    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(dst + q), "l"(tag | s[q]) : "memory");
            }
        }
    };
    // The strip and its halo rows (for the first step), both colours, and
    // the first step's words.
    S.load();
    draw(0, 0, T);
    __syncthreads();
    // 1: this block has read its rows (the neighbours may write theirs back).
    if (tid == 0) asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(flags + b), "r"(1u) : "memory");
    // The updates take whole warps from the first; the warps left over draw
    // the next step's words (or all threads after their updates).
    const u32 updaters = min(((R << wr_shift) + 31u) & ~31u, T);
    const u32 first_drawer = updaters < T ? updaters : 0;
    for (u32 i = 0; i < steps; ++i) {
        if (tid < updaters) {
            if (sigma > 0)
                update(1, i, updaters);
            else if (sigma < 0)
                update(-1, i, updaters);
            else
                update(0, i, updaters);
        }
        if (i + 1 < steps && tid >= first_drawer) draw(i + 1, first_drawer, T - first_drawer);
        __syncthreads();
    }
    // The strip back to the lattice, once the neighbours have read their
    // halo rows from it.
    S.store(flags, up, down);
}

#if POTTS_WANT(POTTS_K_TILED)
// The tiled kernel: TILED_HALO halo rows, TILED_DRAWS acceptance words
// drawn ahead (cuda.rs, TiledPlan).
extern "C" __global__ void __launch_bounds__(TILED_THREADS, 1)
    potts_sliced_tiled(u32* __restrict__ c0, u32* __restrict__ c1, u32 wr_shift, u32 h, u32 R, u64 seed, u64 stream,
                       u64 first_sweep, u32 sweeps, int sigma, u32 th0, u32 th1, u32 th2, u32 th3,
                       u32* __restrict__ xbuf, u32* flags) {
    tiled_sweeps<TILED_HALO, TILED_DRAWS>(c0, c1, wr_shift, h, R, seed, stream, first_sweep, sweeps, sigma, th0, th1,
                                          th2, th3, xbuf, flags);
}
#endif

#if POTTS_WANT(POTTS_K_TILED_INLINE)
// The tiled kernel with edge rows traded inside the update (one halo row,
// TILED_DRAWS acceptance words drawn ahead; cuda.rs, TiledPlan).
extern "C" __global__ void __launch_bounds__(TILED_THREADS, 1)
    potts_sliced_tiled_inline(u32* __restrict__ c0, u32* __restrict__ c1, u32 wr_shift, u32 h, u32 R, u64 seed,
                              u64 stream, u64 first_sweep, u32 sweeps, int sigma, u32 th0, u32 th1, u32 th2, u32 th3,
                              u32* __restrict__ xbuf, u32* flags) {
    tiled_sweeps_inline<TILED_DRAWS>(c0, c1, wr_shift, h, R, seed, stream, first_sweep, sweeps, sigma, th0, th1, th2,
                                     th3, xbuf, flags);
}
#endif

// The census of the planes storage (c0, c1), added to out[0] (equal bonds)
// and out[1 + v] (sites in state v) by the block's threads (the grid
// strides over the lattice). Shared by the one-lattice census below, the
// ensemble's (potts_ensemble.cu) and a strip's (potts_strip.cu); HALOS as
// for generic_census_into.
template <bool HALOS>
__device__ __forceinline__ void sliced_census_into(const u32* __restrict__ c0, const u32* __restrict__ c1, u32 wr,
                                                   u32 h, unsigned long long* out) {
    const u64 n = (u64)wr * h;
    u32 bonds = 0;
    u32 counts[POTTS_Q];
#pragma unroll
    for (int v = 0; v < POTTS_Q; ++v) counts[v] = 0;
    for (u64 k = (u64)blockIdx.x * blockDim.x + threadIdx.x; k < n; k += (u64)gridDim.x * blockDim.x) {
        const u32 y = (u32)(k / wr);
        const u32 wx = (u32)(k - (u64)y * wr);
        u32 s[SL_P], nb[4][SL_P];
        const u32 own = HALOS ? y + 1 : y;
        load_planes(s, c0, own, wx, wr);
        load_planes(nb[0], c1, HALOS ? y : (y == 0 ? h - 1 : y - 1), wx, wr);
        load_planes(nb[1], c1, HALOS ? y + 2 : (y + 1 == h ? 0 : y + 1), wx, wr);
        load_planes(nb[2], c1, own, wx, wr);
        side_planes(nb[3], nb[2], c1, own, wx, wr, y & 1u);
#pragma unroll
        for (int i = 0; i < 4; ++i) bonds += __popc(~differ(s, nb[i]));
#pragma unroll
        for (int v = 0; v < POTTS_Q; ++v) {
            u32 a = ~0u, b = ~0u;
#pragma unroll
            for (int p = 0; p < SL_P; ++p) {
                a &= ((v >> p) & 1) ? s[p] : ~s[p];
                b &= ((v >> p) & 1) ? nb[2][p] : ~nb[2][p];
            }
            counts[v] += __popc(a) + __popc(b);
        }
    }
    // Per-thread sums are small (a grid-stride loop visits few words);
    // reduce over the warp, one global atomic per warp and value.
    bonds = __reduce_add_sync(0xffffffffu, bonds);
    if ((threadIdx.x & 31) == 0 && bonds) atomicAdd(&out[0], (unsigned long long)bonds);
#pragma unroll
    for (int v = 0; v < POTTS_Q; ++v) {
        const u32 c = __reduce_add_sync(0xffffffffu, counts[v]);
        if ((threadIdx.x & 31) == 0 && c) atomicAdd(&out[1 + v], (unsigned long long)c);
    }
}

#if POTTS_WANT(POTTS_K_SLICED_CENSUS)
// The census of the planes storage: out[0] equal bonds, out[1 + v] sites in
// state v; out must be zeroed before the launch.
extern "C" __global__ void potts_sliced_census(const u32* __restrict__ c0, const u32* __restrict__ c1, u32 wr,
                                               u32 h, unsigned long long* out) {
    sliced_census_into<false>(c0, c1, wr, h, out);
}
#endif

#if POTTS_WANT(POTTS_K_ADVANCE)
// Moves the sweep base of a recorded graph on by n.
extern "C" __global__ void potts_advance(u64* base, u64 n) {
    if (threadIdx.x == 0 && blockIdx.x == 0) *base += n;
}
#endif

