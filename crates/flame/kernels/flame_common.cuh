// flame_common.cuh: what every flame kernel shares.
//
// `real` is the type of the chaos-game arithmetic: float unless the source
// is compiled with -DFLAME_REAL=double. Write device code with `real` and
// the overloaded math functions (sin, cos, atan2, sqrt, exp, log, pow,
// fabs, floor, ...), which CUDA provides for float and double alike, and
// with constants as `(real)1.5`, so one source serves both precisions.
#pragma once

#ifndef FLAME_REAL
#define FLAME_REAL float
#endif
typedef FLAME_REAL real;

// flam3's EPS, the guard added to denominators.
#define FLAME_EPS ((real)1e-10)

// Per-thread multiply-with-carry generator (warpmc-rng's Mwc): state
// c << 32 | x, multiplier a from warpmc-rng's table. One step:
// t = a*x + c, x = t mod 2^32, c = t / 2^32; output the new x.
struct FlameRng {
    unsigned long long state;
    unsigned a;

    __device__ __forceinline__ unsigned next_u32() {
        state = (state & 0xffffffffull) * (unsigned long long)a + (state >> 32);
        return (unsigned)state;
    }
    // Uniform in [0, 1): the top 24 bits of one word (float resolution; the
    // double build uses all 32).
    __device__ __forceinline__ real uniform() {
#if defined(FLAME_REAL_IS_DOUBLE)
        return (real)next_u32() * (real)2.3283064365386963e-10;
#else
        return (real)(next_u32() >> 8) * (real)5.9604644775390625e-8;
#endif
    }
    // A fair bit: the low bit of one word (flam3's flam3_random_isaac_bit).
    __device__ __forceinline__ unsigned bit() { return next_u32() & 1u; }
};
