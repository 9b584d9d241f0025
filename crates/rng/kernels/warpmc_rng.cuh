// warpmc_rng.cuh: the CUDA twin of the warpmc-rng crate.
//
// Philox4x32-10 with warpmc's stream naming, the multiply-with-carry
// generator of Ferrero et al. (2012) and the shared conversions. Every function
// here computes exactly what the Rust function of the same name computes;
// crates/rng/tests/gpu_bit_identity.rs checks that on a GPU, bit for bit.
// Keep the two in step: change one, change the other, run that test.
//
// Usable from NVRTC (no system headers) and from nvcc, on device and host.
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define WARPMC_HD __host__ __device__ __forceinline__
#define WARPMC_UNROLL _Pragma("unroll")
#else
#define WARPMC_HD inline
#define WARPMC_UNROLL
#endif

// Stream domains: the top 16 bits of a stream id (see stream.rs, enum Domain).
#define WARPMC_DOMAIN_USER 0ull
#define WARPMC_DOMAIN_MWC_SEEDING 1ull
#define WARPMC_DOMAIN_POTTS 2ull
#define WARPMC_DOMAIN_FLAME 3ull
#define WARPMC_DOMAIN_PRIMS 4ull
#define WARPMC_DOMAIN_TEST 0xffffull
#define WARPMC_STREAM_INDEX_BITS 48

namespace warpmc {
namespace rng {

typedef unsigned int u32;
typedef unsigned long long u64;

// Philox round constants (Random123).
#define WARPMC_PHILOX_M0 0xD2511F53u
#define WARPMC_PHILOX_M1 0xCD9E8D57u
#define WARPMC_PHILOX_W0 0x9E3779B9u
#define WARPMC_PHILOX_W1 0xBB67AE85u

// Four 32-bit words: a Philox counter or output block.
struct Words4 {
    u32 w0, w1, w2, w3;
};

WARPMC_HD u32 mulhi32(u32 a, u32 b) {
#if defined(__CUDA_ARCH__)
    return __umulhi(a, b);
#else
    return (u32)(((u64)a * (u64)b) >> 32);
#endif
}

// Philox4x32-10 of counter `c` under key (k0, k1).
WARPMC_HD Words4 philox4x32_10(Words4 c, u32 k0, u32 k1) {
    WARPMC_UNROLL
    for (int r = 0; r < 10; ++r) {
        if (r > 0) {
            k0 += WARPMC_PHILOX_W0;
            k1 += WARPMC_PHILOX_W1;
        }
        const u32 hi0 = mulhi32(WARPMC_PHILOX_M0, c.w0);
        const u32 lo0 = WARPMC_PHILOX_M0 * c.w0;
        const u32 hi1 = mulhi32(WARPMC_PHILOX_M1, c.w2);
        const u32 lo1 = WARPMC_PHILOX_M1 * c.w2;
        Words4 n;
        n.w0 = hi1 ^ c.w1 ^ k0;
        n.w1 = lo1;
        n.w2 = hi0 ^ c.w3 ^ k1;
        n.w3 = lo0;
        c = n;
    }
    return c;
}

// The stream id of `index` in `domain`.
WARPMC_HD u64 stream_id(u64 domain, u64 index) {
    return (domain << WARPMC_STREAM_INDEX_BITS) | index;
}

// Block `counter` of stream `stream` under `seed`: words 4*counter .. +3.
WARPMC_HD Words4 philox_block(u64 seed, u64 stream, u64 counter) {
    Words4 c;
    c.w0 = (u32)counter;
    c.w1 = (u32)(counter >> 32);
    c.w2 = (u32)stream;
    c.w3 = (u32)(stream >> 32);
    return philox4x32_10(c, (u32)seed, (u32)(seed >> 32));
}

// ---- Conversions (convert.rs) ----------------------------------------------

// [0, 1 - 2^-24]
WARPMC_HD float u32_to_f32(u32 x) {
    return (float)(x >> 8) * 5.9604644775390625e-08f;  // 2^-24
}
// [2^-24, 1 - 2^-24], odd multiples of 2^-24
WARPMC_HD float u32_to_f32_open(u32 x) {
    return (float)((x >> 9) * 2u + 1u) * 5.9604644775390625e-08f;
}
// [0, 1 - 2^-53]
WARPMC_HD double u64_to_f64(u64 x) {
    return (double)(x >> 11) * 1.1102230246251565404236316680908203125e-16;  // 2^-53
}
// [2^-53, 1 - 2^-53], odd multiples of 2^-53
WARPMC_HD double u64_to_f64_open(u64 x) {
    return (double)((x >> 12) * 2ull + 1ull) * 1.1102230246251565404236316680908203125e-16;
}

// The shared draws of every source S with `u32 next_u32()`.
template <class S>
WARPMC_HD u64 next_u64(S& s) {
    const u64 lo = s.next_u32();
    const u64 hi = s.next_u32();
    return lo | (hi << 32);
}
template <class S>
WARPMC_HD float next_f32(S& s) { return u32_to_f32(s.next_u32()); }
template <class S>
WARPMC_HD float next_f32_open(S& s) { return u32_to_f32_open(s.next_u32()); }
template <class S>
WARPMC_HD double next_f64(S& s) { return u64_to_f64(next_u64(s)); }
template <class S>
WARPMC_HD double next_f64_open(S& s) { return u64_to_f64_open(next_u64(s)); }

// Exactly uniform in [0, n) by Lemire's multiply-and-reject; n = 0 means 2^32.
template <class S>
WARPMC_HD u32 below(S& s, u32 n) {
    if (n == 0) return s.next_u32();
    u64 m = (u64)s.next_u32() * (u64)n;
    if ((u32)m < n) {
        const u32 threshold = (0u - n) % n;
        while ((u32)m < threshold) m = (u64)s.next_u32() * (u64)n;
    }
    return (u32)(m >> 32);
}

// ---- Philox streams (stream.rs, PhiloxStream) ------------------------------

struct PhiloxStream {
    u32 k0, k1;
    u64 stream;
    u64 position;  // index of the next word
    Words4 buf;    // block position/4 when position % 4 != 0

    WARPMC_HD PhiloxStream(u64 seed, u64 stream_, u64 position_ = 0)
        : k0((u32)seed), k1((u32)(seed >> 32)), stream(stream_), position(position_) {
        buf.w0 = buf.w1 = buf.w2 = buf.w3 = 0;
        if (position & 3ull) buf = philox_block(seed, stream, position >> 2);
    }

    WARPMC_HD u32 next_u32() {
        const u32 lane = (u32)(position & 3ull);
        if (lane == 0) {
            Words4 c;
            const u64 block = position >> 2;
            c.w0 = (u32)block;
            c.w1 = (u32)(block >> 32);
            c.w2 = (u32)stream;
            c.w3 = (u32)(stream >> 32);
            buf = philox4x32_10(c, k0, k1);
        }
        position += 1;
        return lane == 0 ? buf.w0 : lane == 1 ? buf.w1 : lane == 2 ? buf.w2 : buf.w3;
    }
};

// ---- Multiply-with-carry (mwc.rs) ------------------------------------------

// One step of the generator with state c << 32 | x and multiplier a:
// t = a*x + c; the new state is t (x = t mod 2^32, c = t / 2^32), and the
// output is the new x. This is the only device implementation of the step;
// potts.cu and the flame kernels call it.
WARPMC_HD u32 mwc_step(u64& state, u32 a) {
    // Both factors and the addend as u32: the compiler then knows the
    // product-plus-carry needs one 32x32->64 multiply-add.
    state = (u64)(u32)state * (u64)a + (u64)(u32)(state >> 32);
    return (u32)state;
}

// The same step on a state held as two words, x and c (the form a
// register-tight loop keeps, with fewer moves).
WARPMC_HD u32 mwc_step(u32& x, u32& c, u32 a) {
    const u64 t = (u64)x * (u64)a + (u64)c;
    x = (u32)t;
    c = (u32)(t >> 32);
    return x;
}

// A generator: state c << 32 | x and its multiplier a.
struct Mwc {
    u64 state;
    u32 a;

    WARPMC_HD u32 next_u32() { return mwc_step(state, a); }
};

// Start state from two seed words, off the fixed points 0 and a*2^32-1.
WARPMC_HD u64 mwc_seed_state(u32 a, u32 w0, u32 w1) {
    const u64 c = ((u64)w1 * (u64)a) >> 32;
    u64 x = w0;
    if (c == 0 && x == 0) {
        x = 1;
    } else if (c == (u64)a - 1 && x == 0xffffffffull) {
        x -= 1;
    }
    return (c << 32) | x;
}

// The generator of work unit `unit` under `seed`; `table` is the multiplier
// table (warpmc_rng::multipliers::table()) in device memory.
WARPMC_HD Mwc mwc_for_unit(u64 seed, u64 unit, const u32* table, u32 table_len) {
    Mwc g;
    g.a = table[unit % table_len];
    const Words4 w = philox_block(seed, stream_id(WARPMC_DOMAIN_MWC_SEEDING, unit), 0);
    g.state = mwc_seed_state(g.a, w.w0, w.w1);
    return g;
}

}  // namespace rng
}  // namespace warpmc
