// The library's tiled kernel (potts.cu, tiled_sweeps: one bit-sliced
// lattice in strips held in shared memory, halo rows K deep, random words
// drawn ahead by the warps an update step leaves idle) beside
// potts_sliced_resident, the library's kernel for lattices whose threads
// all fit on the GPU. Every variant is compared bit for bit with the
// resident kernel, then timed beside it. Built and run by run.sh
// (README.md).
//
//   tiled L check_sweeps time_sweeps
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cuda_runtime.h>

#include "../../crates/potts/kernels/potts.cu"
#include "../potts-common/host.cuh"

// The library's exchange before edge rows travelled as tagged words: store
// the rows, a barrier, release a flag with the round (a fence), wait for the
// neighbours' flags, a barrier, load their rows (three trips through L2).
struct FlaggedExchange {
    template <int K, class SharedRow>
    __device__ __forceinline__ static void run(u32* xbuf, u32* flags, u32 round, u32 G, u32 b, u32 up, u32 down,
                                               u32 R, u32 wr_shift, u32 row_len, SharedRow shared_row) {
        const u32 slot = K * row_len, tid = threadIdx.x;
        u32* mine_x = xbuf + (u64)((round & 1) * G + b) * 4 * slot;
        for (u32 sc = 0; sc < 4; ++sc) {  // side * 2 + colour
            const int first = (sc >> 1) ? (int)R - K : 0;
            copy_rows<false, true>(
                K, wr_shift, [&](u32 r) { return mine_x + sc * slot + r * row_len; },
                [&](u32 r) { return (const u32*)shared_row(sc & 1, first + (int)r); });
        }
        __syncthreads();
        if (tid == 0)
            asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(flags + b), "r"(round + 2) : "memory");
        if (tid == 0) wait_at_least(flags + up, round + 2);
        if (tid == 32) wait_at_least(flags + down, round + 2);
        __syncthreads();
        const u32* from_up = xbuf + (u64)((round & 1) * G + up) * 4 * slot;
        const u32* from_down = xbuf + (u64)((round & 1) * G + down) * 4 * slot;
        for (u32 c = 0; c < 2; ++c) {
            copy_rows<true, false>(
                K, wr_shift, [&](u32 r) { return shared_row(c, (int)r - K); },
                [&](u32 r) { return from_up + (2 + c) * slot + r * row_len; });
            copy_rows<true, false>(
                K, wr_shift, [&](u32 r) { return shared_row(c, (int)R + (int)r); },
                [&](u32 r) { return from_down + c * slot + r * row_len; });
        }
    }
};

// The library's tiled_sweeps_inline with E acceptance words drawn ahead
// and THREADS per block.
template <int E, int THREADS>
__global__ void __launch_bounds__(THREADS, 1)
    tiled_inline_variant(u32* __restrict__ c0, u32* __restrict__ c1, u32 wr_shift, u32 h, u32 R, u64 seed,
                         u64 stream, u64 first_sweep, u32 sweeps, int sigma, u32 th0, u32 th1, u32 th2, u32 th3,
                         u32* __restrict__ xbuf, u32* flags) {
    tiled_sweeps_inline<E>(c0, c1, wr_shift, h, R, seed, stream, first_sweep, sweeps, sigma, th0, th1, th2, th3,
                           xbuf, flags);
}

// K halo rows, E acceptance words drawn ahead, THREADS per block, edge
// rows traded by Exchange.
template <int K, int E, int THREADS, class Exchange>
__global__ void __launch_bounds__(THREADS, 1)
    tiled_variant(u32* __restrict__ c0, u32* __restrict__ c1, u32 wr_shift, u32 h, u32 R, u64 seed, u64 stream,
                  u64 first_sweep, u32 sweeps, int sigma, u32 th0, u32 th1, u32 th2, u32 th3, u32* __restrict__ xbuf,
                  u32* flags) {
    tiled_sweeps<K, E, Exchange>(c0, c1, wr_shift, h, R, seed, stream, first_sweep, sweeps, sigma, th0, th1, th2,
                                 th3, xbuf, flags);
}

// Another acceptance test for the same proposals (different bits from the
// library's rule; timed here to see what a change of rule would buy). The
// uncertain sites of a word fall into four classes by |ΔE| (code1 code0),
// each accepted with its own probability t_c. Instead of one random bit per
// site and word until every site is decided (LazyBitSerial), each class
// draws the gap to its next accepted site: with n candidates left, one
// word U says "none of them" when U < T_c(n) = floor(2^32 (1 - t_c)^n),
// and otherwise the first accepted candidate k, T_c(k + 1) <= U < T_c(k)
// (T_c(0) = 2^32), after which the candidates beyond k start afresh
// (the gaps of independent Bernoulli trials are geometric). Most words of
// an ordered lattice need one random word per class present, and the four
// classes' first words (drawn ahead) are tested side by side; k is
// estimated from a logarithm and then fixed by comparing U with the
// table, so the result is integer-exact whatever the logarithm's error.
// SLOW = false accepts a class's lowest candidate where its first test
// says some are accepted, instead of searching and drawing on (wrong bits
// and statistics; timing only).
template <bool SLOW = true>
struct GeometricSkip : LazyBitSerial {  // its random words, its own test
    // 1 / log2(1 - t_c), for the estimate of k.
    __device__ __forceinline__ static float* inv_log2() {
        __shared__ float v[4];
        return v;
    }
    // table[n] = (T_0(n), T_1(n), T_2(n), T_3(n)) for n = 0 ... 32.
    __device__ static void fill(uint4* table, u32 th0, u32 th1, u32 th2, u32 th3) {
        const u32 n = threadIdx.x;
        const u32 th[4] = {th0, th1, th2, th3};
        u32 v[4];
        for (int c = 0; c < 4; ++c) {
            const double t = th[c] * 0x1p-32;
            const double x = floor(ldexp(pow(1.0 - t, (double)n), 32));
            v[c] = x >= 4294967295.0 ? 4294967295u : (u32)x;
            if (n == 33) inv_log2()[c] = (float)(1.0 / log2(1.0 - t));
        }
        if (n < 33) table[n] = make_uint4(v[0], v[1], v[2], v[3]);
        __syncthreads();
    }
    template <int C>
    __device__ __forceinline__ static u32 at(const uint4& a) {
        return C == 0 ? a.x : C == 1 ? a.y : C == 2 ? a.z : a.w;
    }
    // Class C's candidates m after its first word u was not below T_C(n):
    // the accepted ones set in acc, further words from the generator.
    template <int C>
    __device__ __forceinline__ static void accept_class(u32 u, u32 m, const uint4* __restrict__ table, u32& gx,
                                                        u32& gc, u32& acc) {
        for (;;) {
            const u32 n = __popc(m);
            const float r = fminf(__log2f((float)u * 0x1p-32f) * inv_log2()[C], 31.0f);
            u32 k = min((u32)fmaxf(r, 0.0f), n - 1);
            while (k > 0 && u >= at<C>(table[k])) --k;
            while (k + 1 < n && u < at<C>(table[k + 1])) ++k;
            const u32 pos = __fns(m, 0, (int)k + 1);
            acc |= 1u << pos;
            m &= pos == 31 ? 0u : ~0u << (pos + 1);
            if (m == 0) return;
            u = warpmc::rng::mwc_step(gx, gc, MWC_A);
            if (u < at<C>(table[__popc(m)])) return;
        }
    }
    template <int E>
    __device__ __forceinline__ static void accept(const u32* wd, u32 fs, const uint4* __restrict__ table, u32 code0,
                                                  u32 code1, u32& und, u32& acc) {
        static_assert(E >= 4, "one word drawn ahead per class");
        const u32 m[4] = {und & ~code1 & ~code0, und & ~code1 & code0, und & code1 & ~code0, und & code1 & code0};
        u32 u[4];
        bool more[4];
#pragma unroll
        for (int c = 0; c < 4; ++c) {
            u[c] = wd[(SL_B + c) * fs];
            const uint4 t = table[__popc(m[c])];
            more[c] = m[c] != 0 && u[c] >= (c == 0 ? t.x : c == 1 ? t.y : c == 2 ? t.z : t.w);
        }
        und = 0;
        if (!SLOW) {  // the lowest candidate instead of the search: timing only
#pragma unroll
            for (int c = 0; c < 4; ++c) acc |= more[c] ? m[c] & (0u - m[c]) : 0u;
            return;
        }
        if (!(more[0] | more[1] | more[2] | more[3])) return;
        u32 gx = wd[(SL_B + E) * fs], gc = wd[(SL_B + E + 1) * fs];
        if (more[0]) accept_class<0>(u[0], m[0], table, gx, gc, acc);
        if (more[1]) accept_class<1>(u[1], m[1], table, gx, gc, acc);
        if (more[2]) accept_class<2>(u[2], m[2], table, gx, gc, acc);
        if (more[3]) accept_class<3>(u[3], m[3], table, gx, gc, acc);
    }
};

// The same rule (the same bits) with the whole test drawn ahead: for each
// of the four thresholds t_c (|d| = c + 1), the drawing thread compares
// every site's U = 0.u1 u2 ... with t_c, most significant bit first, until
// all 32 sites have decided against all four thresholds (at most 32
// words), and stores the sites where U < t_c, word A_c. The update then
// only picks, site by site, the A_c of its |d|: its chain of dependent
// steps loses the acceptance words, and the warps that draw are those a
// colour step leaves idle. SPLIT_ROWS: the comparisons take longer than
// a pair of rows leaves time for. Word-exact with the library's rule, and
// slower at L = 2048 (README.md: the drawing warps' four comparisons per
// site cost more than the update saves).
struct DecisionsAhead : LazyBitSerial {
    static constexpr bool SPLIT_ROWS = true;
    // One threshold bit t (all ones or zeros) met by the word u.
    __device__ __forceinline__ static void compare(u32 u, u32 t, u32& und, u32& acc) {
        const u32 dec = und & (t ^ u);
        acc |= dec & t;
        und ^= dec;
    }
    template <int E>
    __device__ __forceinline__ static void draw(u32 gx, u32 gc, u32* d, u32 fs, const uint4* __restrict__ masks) {
        static_assert(E + 2 >= 4, "four decision words in the fields of the acceptance words");
        // Ising's |d| is 2 or 4 (classes 1 and 3) only.
        constexpr bool ALL = POTTS_Q != 2;
        u32 u0 = ALL ? ~0u : 0u, u1 = ~0u, u2 = ALL ? ~0u : 0u, u3 = ~0u;
        u32 a0 = 0, a1 = 0, a2 = 0, a3 = 0;
        for (int bit = 31; bit >= 0 && (u0 | u1 | u2 | u3) != 0; bit -= 4) {
#pragma unroll
            for (int k = 0; k < 4; ++k) {
                const u32 u = warpmc::rng::mwc_step(gx, gc, MWC_A);
                const uint4 m = masks[bit - k + 1];
                if (ALL) compare(u, m.x, u0, a0);
                compare(u, m.y, u1, a1);
                if (ALL) compare(u, m.z, u2, a2);
                compare(u, m.w, u3, a3);
            }
        }
        d[SL_B * fs] = a0;
        d[(SL_B + 1) * fs] = a1;
        d[(SL_B + 2) * fs] = a2;
        d[(SL_B + 3) * fs] = a3;
    }
    template <int E>
    __device__ __forceinline__ static void accept(const u32* wd, u32 fs, const uint4* __restrict__ /*masks*/,
                                                  u32 code0, u32 code1, u32& und, u32& acc) {
#if POTTS_Q == 2
        (void)code0;
        const u32 a1 = wd[(SL_B + 1) * fs], a3 = wd[(SL_B + 3) * fs];
        const u32 t = a1 ^ ((a1 ^ a3) & code1);
#else
        const u32 a0 = wd[SL_B * fs], a1 = wd[(SL_B + 1) * fs], a2 = wd[(SL_B + 2) * fs], a3 = wd[(SL_B + 3) * fs];
        const u32 x0 = a0 ^ ((a0 ^ a1) & code0);
        const u32 x1 = a2 ^ ((a2 ^ a3) & code0);
        const u32 t = x0 ^ ((x0 ^ x1) & code1);
#endif
        acc |= und & t;
        und = 0;
    }
};

// The library's rule (the same bits) with the threshold bits that all
// classes share taken as such: where bit b of every class's threshold is 0,
// a site whose acceptance word has a 1 there is rejected (und &= ~u); where
// it is 1 for every class, one with a 0 is accepted. Those steps need no
// per-site selection of the threshold bit (three logic operations and a
// shared-memory load); g_kinds[0] and g_kinds[1] hold, per threshold bit,
// whether it is 0 (resp. 1) for every class, in constant memory so that
// the test of a step is a uniform branch.
__constant__ u32 g_kinds[2];
struct UniformSteps : LazyBitSerial {
    __device__ __forceinline__ static void step(u32 u, int bit, const uint4* __restrict__ masks, u32 code0, u32 code1,
                                                u32& und, u32& acc) {
        if ((g_kinds[0] >> bit) & 1u) {
            und &= ~u;
        } else if ((g_kinds[1] >> bit) & 1u) {
            acc |= und & ~u;
            und &= u;
        } else {
            accept_step(u, masks[bit + 1], code0, code1, und, acc);
        }
    }
    template <int E>
    __device__ __forceinline__ static void accept(const u32* wd, u32 fs, const uint4* __restrict__ masks, u32 code0,
                                                  u32 code1, u32& und, u32& acc) {
#pragma unroll
        for (int e = 0; e < E; ++e) step(wd[(SL_B + e) * fs], 31 - e, masks, code0, code1, und, acc);
        if (und == 0) return;
        u32 gx = wd[(SL_B + E) * fs], gc = wd[(SL_B + E + 1) * fs];
        for (int bit = 31 - E; bit >= 0 && und != 0; bit -= 4) {
#pragma unroll
            for (int i = 0; i < 4; ++i)
                step(warpmc::rng::mwc_step(gx, gc, MWC_A), bit - i, masks, code0, code1, und, acc);
        }
    }
};

// The library's acceptance test with Steps::step deciding each word, every
// step unrolled (so that a step whose threshold bits are constants
// compiles to their logic alone).
template <class Steps>
struct Unrolled : LazyBitSerial {
    template <int E>
    __device__ __forceinline__ static void accept(const u32* wd, u32 fs, const uint4* __restrict__ masks, u32 code0,
                                                  u32 code1, u32& und, u32& acc) {
#pragma unroll
        for (int e = 0; e < E; ++e) Steps::step(wd[(SL_B + e) * fs], 31 - e, masks, code0, code1, und, acc);
        if (und == 0) return;
        u32 gx = wd[(SL_B + E) * fs], gc = wd[(SL_B + E + 1) * fs];
#pragma unroll
        for (int r = 0; r < (32 - E) / 4; ++r) {
            if (und == 0) break;
#pragma unroll
            for (int i = 0; i < 4; ++i)
                Steps::step(warpmc::rng::mwc_step(gx, gc, MWC_A), 31 - E - 4 * r - i, masks, code0, code1, und,
                            acc);
        }
    }
};

// UniformSteps with the kinds of step as compile-time constants (ZERO,
// ONE: bits 0, resp. 1, for every class), so that the steps compile without
// branches: what a kernel specialised for its temperature's thresholds
// could gain. Right only for thresholds with those kinds (the timing runs
// at q = 9, T = 0.7212: ZERO = 0xc0000000, ONE = 0x00f90010).
template <u32 ZERO, u32 ONE>
struct ConstSteps : Unrolled<ConstSteps<ZERO, ONE>> {
    __device__ __forceinline__ static void step(u32 u, int bit, const uint4* __restrict__ masks, u32 code0, u32 code1,
                                                u32& und, u32& acc) {
        if ((ZERO >> bit) & 1u) {
            und &= ~u;
        } else if ((ONE >> bit) & 1u) {
            acc |= und & ~u;
            und &= u;
        } else {
            accept_step(u, masks[bit + 1], code0, code1, und, acc);
        }
    }
};

// The library's rule with the leading PREFIX bits of the four thresholds
// T0..T3 as compile-time constants, so that each of those steps compiles to
// the logic its threshold bits need (the selection folds away): what a
// kernel compiled for its temperature's thresholds could gain. Right only
// for thresholds with that prefix (the timing runs at q = 9, T = 0.7212).
template <u32 T0, u32 T1, u32 T2, u32 T3, int PREFIX>
struct ConstThresholds : Unrolled<ConstThresholds<T0, T1, T2, T3, PREFIX>> {
    __device__ __forceinline__ static void step(u32 u, int bit, const uint4* __restrict__ masks, u32 code0, u32 code1,
                                                u32& und, u32& acc) {
        if (bit >= 32 - PREFIX) {
            const uint4 a = make_uint4(0u - ((T0 >> bit) & 1u), 0u - ((T1 >> bit) & 1u), 0u - ((T2 >> bit) & 1u),
                                       0u - ((T3 >> bit) & 1u));
            accept_step(u, a, code0, code1, und, acc);
        } else {
            accept_step(u, masks[bit + 1], code0, code1, und, acc);
        }
    }
};
using ProtocolThresholds32 = ConstThresholds<0x3ffb5ad0u, 0x0ffdad7du, 0x03ff2117u, 0x00ffb5b5u, 32>;
using ProtocolThresholds12 = ConstThresholds<0x3ffb5ad0u, 0x0ffdad7du, 0x03ff2117u, 0x00ffb5b5u, 12>;

using ProtocolSteps = ConstSteps<0xc0000000u, 0x00f90010u>;

// Base's rule with a cheap hash instead of the Philox block that seeds a
// unit's two generators for each colour step (wrong bits: timing only; it
// bounds what keeping generator states between sweeps could save).
template <class Base>
struct HashedGenerators : Base {
    __device__ __forceinline__ static u64 mix(u64 x) {
        x ^= x >> 31;
        x *= 0x94d049bb133111ebull;
        return x ^ (x >> 29);
    }
    __device__ __forceinline__ static void generators(u64 seed, u64 stream, u64 sweep, u32 colour, u64 unit, u64& g0,
                                                      u64& g1) {
        const u64 step = ((2 * sweep + colour) << 32) | unit;
        const u64 z = seed ^ stream * 0x9e3779b97f4a7c15ull ^ step * 0xbf58476d1ce4e5b9ull;
        const u64 a = mix(z), b = mix(z + 0x9e3779b97f4a7c15ull);
        g0 = warpmc::rng::mwc_seed_state(MWC_A, (u32)a, (u32)(a >> 32));
        g1 = warpmc::rng::mwc_seed_state(MWC_A, (u32)b, (u32)(b >> 32));
    }
};

// tiled_sweeps_inline with the acceptance test Rule.
template <int E, class Rule>
__global__ void __launch_bounds__(1024, 1)
    tiled_inline_rule(u32* __restrict__ c0, u32* __restrict__ c1, u32 wr_shift, u32 h, u32 R, u64 seed, u64 stream,
                      u64 first_sweep, u32 sweeps, int sigma, u32 th0, u32 th1, u32 th2, u32 th3,
                      u32* __restrict__ xbuf, u32* flags) {
    tiled_sweeps_inline<E, Rule>(c0, c1, wr_shift, h, R, seed, stream, first_sweep, sweeps, sigma, th0, th1, th2,
                                 th3, xbuf, flags);
}

struct Variant {
    const void* kernel;
    int K, E, threads;
    const char* name;
};

#define VARIANT(K, E, T) \
    Variant{(const void*)tiled_variant<K, E, T, TaggedExchange>, K, E, T, "K=" #K " E=" #E " threads=" #T}
#define INLINE(E, T) \
    Variant{(const void*)tiled_inline_variant<E, T>, 1, E, T, "K=1 E=" #E " threads=" #T " inline"}
#define SKIP(E) \
    Variant{(const void*)tiled_inline_rule<E, GeometricSkip<>>, 1, E, 1024, "K=1 E=" #E " inline, geometric skip"}
#define SKIP_FIRST(E)                                                                         \
    Variant{(const void*)tiled_inline_rule<E, GeometricSkip<false>>, 1, E, 1024,               \
            "K=1 E=" #E " inline, geometric skip's first tests only"}
#define RULE(E, R, NAME) Variant{(const void*)tiled_inline_rule<E, R>, 1, E, 1024, "K=1 E=" #E " inline, " NAME}
#define FLAGGED(K, E, T) \
    Variant{(const void*)tiled_variant<K, E, T, FlaggedExchange>, K, E, T, "K=" #K " E=" #E " threads=" #T " flagged"}

int main(int argc, char** argv) {
    const u32 L = argc > 1 ? atoi(argv[1]) : 2048;
    const u32 check_sweeps = argc > 2 ? atoi(argv[2]) : 37;
    const u32 time_sweeps = argc > 3 ? atoi(argv[3]) : 2000;
    // T_c of q = 9 (and a low temperature for Ising's ordered phase).
    double T = POTTS_Q == 2 ? 1.0 / log(1.0 + sqrt(2.0)) : 0.7212;
    const u32 h = L, wr = L / 2 / 32;
    u32 wr_shift = 0;
    while ((1u << wr_shift) < wr) ++wr_shift;
    const size_t words = (size_t)h * wr * SL_P;
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("device %s, %d SMs, L=%u q=%d T=%.6f\n", prop.name, prop.multiProcessorCount, L, POTTS_Q, T);
    u32 th[4] = {threshold(1, T), threshold(2, T), threshold(3, T), threshold(4, T)};
    auto set_kinds = [&]() {
        const u32 any = POTTS_Q == 2 ? th[1] | th[3] : th[0] | th[1] | th[2] | th[3];
        const u32 all = POTTS_Q == 2 ? th[1] & th[3] : th[0] & th[1] & th[2] & th[3];
        const u32 kinds[2] = {~any, all};
        CK(cudaMemcpyToSymbol(g_kinds, kinds, sizeof kinds));
        printf("thresholds %08x %08x %08x %08x: bits 0 for all %08x, 1 for all %08x\n", th[0], th[1], th[2], th[3],
               kinds[0], kinds[1]);
    };
    set_kinds();
    int sigma = 1;  // 0: every move accepted (timing only)
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
        const u32 blocks = 2 * ((units + 31) / 32);
        u64 units64 = units;
        void* args[] = {&c0, &c1, (void*)&wr, (void*)&h, (void*)&seed, (void*)&stream, &first, &sweeps,
                        &sigma, (void*)&th[0], (void*)&th[1], (void*)&th[2], (void*)&th[3], &units64, &flags};
        CK(cudaLaunchCooperativeKernel((void*)potts_sliced_resident, blocks, 128, args, 0, 0));
    };
    auto shared_bytes = [&](const Variant& v, u32 R) {
        const size_t rows = R + 2 * v.K;
        return (rows * wr * SL_P * 2 + 2 * (size_t)(SL_B + v.E + 2) * rows * wr) * 4;
    };
    // The most blocks (at most `most`) whose strips are even, at least K
    // rows, and fit in shared memory.
    auto pick = [&](const Variant& v, u32 most) -> u32 {
        for (u32 g = most; g >= 1; --g)
            if (h % g == 0 && (h / g) % 2 == 0 && h / g >= (u32)v.K &&
                shared_bytes(v, h / g) + 1024 <= prop.sharedMemPerBlockOptin)
                return g;
        return 0;
    };
    auto run_tiled = [&](const Variant& v, u64 first, u32 sweeps, u32 G) {
        u32 R = h / G;
        CK(cudaMemset(flags, 0, 4096 * 4));
        CK(cudaMemset(xbuf, 0, 64 << 20));  // the tags of exchange_tagged
        const size_t shm = shared_bytes(v, R);
        CK(cudaFuncSetAttribute(v.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shm));
        void* args[] = {&c0, &c1, &wr_shift, (void*)&h, &R, (void*)&seed, (void*)&stream, &first, &sweeps,
                        &sigma, (void*)&th[0], (void*)&th[1], (void*)&th[2], (void*)&th[3], &xbuf, &flags};
        CK(cudaLaunchCooperativeKernel(v.kernel, G, v.threads, args, shm, 0));
    };
    int failures = 0;
    auto check = [&](const Variant& v, u32 most, u64 first, u32 sweeps, bool ordered) {
        const u32 G = pick(v, most);
        if (G == 0) {
            printf("check %s, at most %u blocks: no grid fits\n", v.name, most);
            return;
        }
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
        run_tiled(v, first, sweeps, G);
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(t0.data(), c0, words * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(t1.data(), c1, words * 4, cudaMemcpyDeviceToHost));
        size_t diff = 0, changed = 0;
        for (size_t i = 0; i < words; ++i) {
            diff += (r0[i] != t0[i]) + (r1[i] != t1[i]);
            changed += (r0[i] != h0[i]) + (r1[i] != h1[i]);
        }
        failures += diff != 0 || changed == 0;
        printf("check %-26s G=%u first=%llu sweeps=%u %s: %zu words differ (%zu changed by the run)%s\n", v.name, G,
               (unsigned long long)first, sweeps, ordered ? "ordered" : "random", diff, changed,
               diff || !changed ? "  FAIL" : "");
    };
    auto timeit = [&](const char* name, auto launch) {
        pack(h0, wr, h, 5, true);
        CK(cudaMemcpy(c0, h0.data(), words * 4, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(c1, h0.data(), words * 4, cudaMemcpyHostToDevice));
        launch(200);
        CK(cudaDeviceSynchronize());
        cudaEvent_t a, b;
        cudaEventCreate(&a);
        cudaEventCreate(&b);
        float best = 1e30f;
        for (int rep = 0; rep < 3; ++rep) {
            cudaEventRecord(a);
            launch(time_sweeps);
            cudaEventRecord(b);
            CK(cudaEventSynchronize(b));
            float ms;
            cudaEventElapsedTime(&ms, a, b);
            best = fminf(best, ms);
        }
        printf("time %-52s %8.3f ms for %u sweeps: %7.1f flips/ns, %.3f us/sweep\n", name, best, time_sweeps,
               (double)L * L * time_sweeps / (best * 1e6), best * 1e3 / time_sweeps);
    };
    const u32 sms = prop.multiProcessorCount;
    const Variant library{(const void*)potts_sliced_tiled, TILED_HALO, TILED_DRAWS, TILED_THREADS, "library"};
    const Variant variants[] = {
        library,          INLINE(4, 1024), INLINE(4, 512), INLINE(8, 1024), VARIANT(1, 4, 1024),
        VARIANT(8, 4, 1024), FLAGGED(4, 4, 1024), VARIANT(2, 4, 1024),
        RULE(4, DecisionsAhead, "decisions drawn ahead"),
        RULE(4, UniformSteps, "uniform steps"),
#if POTTS_Q != 2
        RULE(4, ProtocolSteps, "constant steps"),
        RULE(4, ProtocolThresholds32, "constant thresholds"),
        RULE(4, ProtocolThresholds12, "constant 12-bit prefix"),
#endif
    };
    if (argc > 4) {  // one launch of each for a profiler, ordered start
        CK(cudaMemset(c0, 0, words * 4));
        CK(cudaMemset(c1, 0, words * 4));
        run_resident(0, time_sweeps);
        run_tiled(library, 0, time_sweeps, pick(library, sms));
        CK(cudaMemset(c0, 0, words * 4));
        CK(cudaMemset(c1, 0, words * 4));
        const Variant skip = SKIP(4);
        run_tiled(skip, 0, time_sweeps, pick(skip, sms));
        CK(cudaDeviceSynchronize());
        return 0;
    }
    check(library, sms, 12345, check_sweeps, false);
    check(library, sms, 3, check_sweeps + 1, false);
    check(library, sms, 7, check_sweeps, true);
    check(library, 2, 7, check_sweeps, false);
    check(library, 1, 7, 5, false);
    const Variant inline4 = INLINE(4, 1024);
    check(inline4, sms, 12345, check_sweeps, false);
    check(inline4, sms, 7, check_sweeps, true);
    check(inline4, 3, 7, check_sweeps, false);
    check(inline4, 2, 7, check_sweeps, false);
    check(inline4, 1, 7, 5, false);
    const Variant ahead = RULE(4, DecisionsAhead, "decisions ahead");
    check(ahead, sms, 12345, check_sweeps, false);
    check(ahead, sms, 7, check_sweeps, true);
    check(ahead, 3, 7, check_sweeps, false);
    check(ahead, 1, 7, 5, false);
    const Variant uniform = RULE(4, UniformSteps, "uniform steps");
#if POTTS_Q != 2
    const Variant constant = RULE(4, ProtocolSteps, "constant steps");
    if (L > 256) {  // T = 0.7212 only
        check(constant, sms, 12345, check_sweeps, false);
        check(constant, sms, 7, check_sweeps, true);
        check(RULE(4, ProtocolThresholds32, "constant thresholds"), sms, 7, check_sweeps, true);
        check(RULE(4, ProtocolThresholds12, "constant 12-bit prefix"), sms, 7, check_sweeps, true);
    }
#endif
    check(uniform, sms, 12345, check_sweeps, false);
    check(uniform, sms, 7, check_sweeps, true);
    check(uniform, 3, 7, check_sweeps, false);
    check(uniform, 1, 7, 5, false);
    for (const Variant& v : variants) check(v, sms, 11, check_sweeps, false);
    // The geometric skip gives other bits than the library's rule but must
    // sample the same distribution: the mean energy per site of both rules,
    // from the same start, at one temperature in each phase (on small
    // lattices only: many short launches with a census after each).
    if (L <= 256) {
        unsigned long long* census;
        CK(cudaMalloc(&census, (1 + POTTS_Q) * 8));
        auto mean_energy = [&](const Variant& v, bool ordered, double& mean, double& err) {
            const u32 G = pick(v, sms);
            pack(h0, wr, h, 5, ordered);
            pack(h1, wr, h, 6, ordered);
            CK(cudaMemcpy(c0, h0.data(), words * 4, cudaMemcpyHostToDevice));
            CK(cudaMemcpy(c1, h1.data(), words * 4, cudaMemcpyHostToDevice));
            const u32 warm = 2000, every = 10, blocks = 25, per_block = 40;
            run_tiled(v, 0, warm, G);
            double sum = 0, sum2 = 0;
            for (u32 bk = 0; bk < blocks; ++bk) {
                double block = 0;
                for (u32 m = 0; m < per_block; ++m) {
                    run_tiled(v, warm + (u64)(bk * per_block + m) * every, every, G);
                    CK(cudaMemset(census, 0, (1 + POTTS_Q) * 8));
                    potts_sliced_census<<<64, 256>>>(c0, c1, wr, h, census);
                    unsigned long long bonds;
                    CK(cudaMemcpy(&bonds, census, 8, cudaMemcpyDeviceToHost));
                    block += -(double)bonds / ((double)L * L);
                }
                block /= per_block;
                sum += block;
                sum2 += block * block;
            }
            mean = sum / blocks;
            err = sqrt(fmax(sum2 / blocks - mean * mean, 0.0) / (blocks - 1));
        };
        const double temps[2] = {POTTS_Q == 2 ? 1.0 : 0.70, POTTS_Q == 2 ? 1.3 : 0.74};
        const Variant lazy = INLINE(4, 1024), skip = SKIP(4);
        for (int k = 0; k < 2; ++k) {
            T = temps[k];
            for (int d = 0; d < 4; ++d) th[d] = threshold(d + 1, T);
            set_kinds();
            double m1, e1, m2, e2;
            mean_energy(lazy, k == 0, m1, e1);
            mean_energy(skip, k == 0, m2, e2);
            const double z = (m2 - m1) / sqrt(e1 * e1 + e2 * e2);
            const bool bad = !(fabs(z) < 4.0);
            failures += bad;
            printf("energy T=%.4f %s start: library rule %.6f(%.6f), geometric skip %.6f(%.6f), z=%+.2f%s\n", T,
                   k == 0 ? "ordered" : "random", m1, e1, m2, e2, z, bad ? "  FAIL" : "");
        }
        T = POTTS_Q == 2 ? 1.0 / log(1.0 + sqrt(2.0)) : 0.7212;
        for (int d = 0; d < 4; ++d) th[d] = threshold(d + 1, T);
        set_kinds();
        CK(cudaFree(census));
    }
    if (time_sweeps == 0) return failures != 0;
    timeit("resident", [&](u32 s) { run_resident(0, s); });
    for (const Variant& v : variants) {
        const u32 G = pick(v, sms);
        if (G == 0) continue;
        char name[96];
        snprintf(name, sizeof name, "tiled %s, %u blocks of %u rows", v.name, G, h / G);
        timeit(name, [&](u32 s) { run_tiled(v, 0, s, G); });
    }
    // Another acceptance test (other bits, same distribution: see above).
    const Variant others[] = {
        SKIP(4),
        SKIP(8),
        SKIP_FIRST(4),
        RULE(4, HashedGenerators<LazyBitSerial>, "library rule, hashed generators"),
        RULE(4, HashedGenerators<GeometricSkip<false>>, "skip's first tests, hashed generators"),
        RULE(4, HashedGenerators<DecisionsAhead>, "decisions drawn ahead, hashed generators"),
    };
    for (const Variant& v : others) {
        char name[96];
        snprintf(name, sizeof name, "tiled %s (other bits)", v.name);
        if (!pick(v, sms)) continue;
        timeit(name, [&](u32 s) { run_tiled(v, 0, s, pick(v, sms)); });
    }
    // Fewer, taller strips (more rows per block, fewer halo rows in all).
    for (u32 most : {sms / 2, sms / 4}) {
        const u32 G = pick(library, most);
        if (G == 0) continue;
        char name[96];
        snprintf(name, sizeof name, "tiled library, %u blocks of %u rows", G, h / G);
        timeit(name, [&](u32 s) { run_tiled(library, 0, s, G); });
    }
    // What the update costs beyond its random words: every move accepted
    // (no energy change or acceptance test; wrong bits, timing only).
    sigma = 0;
    timeit("tiled library, every move accepted (wrong bits)",
           [&](u32 s) { run_tiled(library, 0, s, pick(library, sms)); });
    timeit("tiled inline K=1, every move accepted (wrong bits)",
           [&](u32 s) { run_tiled(inline4, 0, s, pick(inline4, sms)); });
    timeit("resident, every move accepted (wrong bits)", [&](u32 s) { run_resident(0, s); });
    const Variant hashed = RULE(4, HashedGenerators<LazyBitSerial>, "hashed generators");
    timeit("tiled inline K=1, hashed generators, every move accepted (wrong bits)",
           [&](u32 s) { run_tiled(hashed, 0, s, pick(hashed, sms)); });
    return failures != 0;
}
