// Host helpers shared by the Potts kernel experiments (potts-tiled,
// potts-registers): CUDA error checks, the Metropolis thresholds and
// lattices packed as bit planes. Included after crates/potts/kernels/potts.cu
// (u32, SL_P, POTTS_Q).
#pragma once

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

#define CK(x)                                                                                  \
    do {                                                                                       \
        cudaError_t e = (x);                                                                   \
        if (e != cudaSuccess) {                                                                \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e)); \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

// A threshold of the bit-sliced rule: floor(e^{-d/T} 2^32), kept below
// 2^32 - 1.
static u32 threshold(double d, double T) {
    const double v = floor(exp(-d / T) * 4294967296.0);
    return v >= 4294967295.0 ? 4294967294u : (u32)v;
}

// A lattice of h rows of wr words as SL_P bit planes per word: all 0, or
// uniform states from rand() seeded with seed.
static void pack(std::vector<u32>& a, u32 wr, u32 h, unsigned seed, bool ordered) {
    srand(seed);
    for (u32 y = 0; y < h; ++y)
        for (u32 w = 0; w < wr; ++w) {
            u32 pl[SL_P] = {0};
            for (int bit = 0; bit < 32; ++bit) {
                const u32 v = ordered ? 0 : (u32)(rand() % POTTS_Q);
                for (int p = 0; p < SL_P; ++p) pl[p] |= ((v >> p) & 1u) << bit;
            }
            for (int p = 0; p < SL_P; ++p) a[((size_t)y * wr + w) * SL_P + p] = pl[p];
        }
}
