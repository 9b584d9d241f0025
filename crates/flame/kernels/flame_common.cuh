// flame_common.cuh: what every flame kernel shares.
//
// `real` is the type of the chaos-game arithmetic: FLAME_REAL, float or
// double, passed by the Rust code that builds the source (codegen.rs,
// from its `Precision`). Write device code with `real` and the overloaded
// math functions (sin, cos, atan2, sqrt, exp, log, pow, fabs, floor, ...),
// which CUDA provides for float and double alike, and with constants as
// `(real)1.5`, so one source serves both precisions.
#pragma once

#include "warpmc_rng.cuh"

#ifndef FLAME_REAL
#error "FLAME_REAL (float or double) must be defined: the type of the chaos game's arithmetic"
#endif
typedef FLAME_REAL real;

// flam3's EPS, the guard added to denominators.
#define FLAME_EPS ((real)1e-10)

// flam3's badvalue: NaN or beyond ±1e10.
__device__ __forceinline__ bool flame_bad_value(real v) {
    return !(v >= (real)(-1e10) && v <= (real)(1e10));
}

// Uniform in [0, 1) from one 32-bit word, as the CPU's replay of the GPU
// stream draws it (render/cuda/varcode/tests.rs): float resolution from the
// top 24 bits (warpmc-rng's u32_to_f32), all 32 bits in double.
template <class R>
struct UniformReal;

template <>
struct UniformReal<float> {
    __device__ static __forceinline__ float from_word(unsigned w) { return warpmc::rng::u32_to_f32(w); }
};

template <>
struct UniformReal<double> {
    __device__ static __forceinline__ double from_word(unsigned w) { return (double)w * 2.3283064365386963e-10; }
};

// A thread's generator: warpmc-rng's multiply-with-carry (state c << 32 | x,
// multiplier a from warpmc-rng's table), with the draws the chaos game and
// the variations take from it. Each draw takes exactly one word.
struct FlameRng : warpmc::rng::Mwc {
    // Uniform in [0, 1).
    __device__ __forceinline__ real uniform() { return UniformReal<real>::from_word(next_u32()); }
    // A fair bit: the low bit of one word (flam3's flam3_random_isaac_bit).
    __device__ __forceinline__ unsigned bit() { return next_u32() & 1u; }
};
