#!/usr/bin/env python3
"""The f32 sector transpose's memory patterns for two tile shapes, without
the transpose: TR input rows x TC input columns per tile, 128 x 64 (the
kernel's: 256-byte row loads, 512-byte output segments) against 64 x 128
(512-byte row loads, 256-byte output segments). Blocks in column-major
tile order, output segments on sector boundaries, a halo of 8 rows. Run
with CuPy on a GPU machine:

    python3 experiments/transpose/shape_patterns.py
"""
import os
import sys

import cupy as cp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from proto import timeit  # noqa: E402

SRC = r"""
typedef unsigned long long u64;

__device__ void col_major(unsigned& bx, unsigned& by) {
    const unsigned bid = blockIdx.x + gridDim.x * blockIdx.y;
    by = bid % gridDim.y;
    bx = bid / gridDim.y;
}

// Block (bx, t) writes output rows TC bx .. TC bx + TC - 1, elements
// [t TR - d, t TR - d + TR) of each (d: the row's misalignment in elements
// modulo a sector), 8 bytes per lane and word.
template <int TR, int TC>
__device__ void store_pattern(float* out, unsigned nrows, unsigned rowlen) {
    unsigned bx, t;
    col_major(bx, t);
    const unsigned lane = threadIdx.x;
    constexpr int K = TR / 64;  // words per lane and row
#pragma unroll 1
    for (unsigned j = threadIdx.y; j < TC; j += 8) {
        const unsigned o = bx * TC + j;
        if (o >= nrows) break;
        const u64 f = (u64)o * rowlen + (u64)t * TR;
        const unsigned d = (unsigned)(f & 7);
#pragma unroll
        for (int k = 0; k < K; ++k) {
            const long long j0 = (long long)t * TR - d + 2 * (lane + 32 * k);
            if (j0 >= 0 && j0 + 2 <= rowlen)
                *reinterpret_cast<float2*>(out + (f - d) + 2 * (lane + 32 * k)) = make_float2(1.f, 2.f);
            else
                for (int e = 0; e < 2; ++e)
                    if (j0 + e >= 0 && j0 + e < rowlen) out[(u64)o * rowlen + j0 + e] = 1.f;
        }
    }
}

// Block (bx, t) reads rows t TR - 8 .. t TR + TR - 1 (those inside),
// columns TC bx .. TC bx + TC - 1, as aligned words of TC / 8 bytes per
// lane, realigned with the next lane's.
template <int TR, int TC>
__device__ void load_pattern(const float* in, float* sink, unsigned nrows, unsigned rowlen) {
    unsigned bx, t;
    col_major(bx, t);
    const unsigned lane = threadIdx.x;
    constexpr int N = TC / 32;  // floats per lane
    float acc = 0.f;
#pragma unroll 4
    for (int x = (int)threadIdx.y - 8; x < TR; x += 8) {
        const long long r = (long long)t * TR + x;
        if (r < 0 || r >= nrows) continue;
        const u64 e0 = (u64)r * rowlen + bx * TC;
        const unsigned m = (unsigned)(e0 & (N - 1));
        const u64 a = (e0 - m) + N * lane;
        float lo[N], hi[N];
        if constexpr (N == 2) {
            const float2 v = *reinterpret_cast<const float2*>(in + a);
            lo[0] = v.x; lo[1] = v.y;
        } else {
            const float4 v = *reinterpret_cast<const float4*>(in + a);
            lo[0] = v.x; lo[1] = v.y; lo[2] = v.z; lo[3] = v.w;
        }
#pragma unroll
        for (int i = 0; i < N; ++i) hi[i] = __shfl_down_sync(0xffffffffu, lo[i], 1);
        if (lane == 31 && m != 0) {
            if constexpr (N == 2) {
                const float2 v = *reinterpret_cast<const float2*>(in + a + N);
                hi[0] = v.x; hi[1] = v.y;
            } else {
                const float4 v = *reinterpret_cast<const float4*>(in + a + N);
                hi[0] = v.x; hi[1] = v.y; hi[2] = v.z; hi[3] = v.w;
            }
        }
#pragma unroll
        for (int i = 0; i < N; ++i) acc += (i + m < N) ? lo[i + m] : hi[i + m - N];
    }
    if (acc == 12345.f) sink[bx] = acc;
}

extern "C" __global__ void store_128x64(float* out, unsigned nrows, unsigned rowlen) { store_pattern<128, 64>(out, nrows, rowlen); }
extern "C" __global__ void store_64x128(float* out, unsigned nrows, unsigned rowlen) { store_pattern<64, 128>(out, nrows, rowlen); }
extern "C" __global__ void load_128x64(const float* in, float* sink, unsigned nrows, unsigned rowlen) { load_pattern<128, 64>(in, sink, nrows, rowlen); }
extern "C" __global__ void load_64x128(const float* in, float* sink, unsigned nrows, unsigned rowlen) { load_pattern<64, 128>(in, sink, nrows, rowlen); }
"""


def main():
    print(cp.cuda.runtime.getDeviceProperties(0)["name"].decode())
    m = cp.RawModule(code=SRC, options=("-arch=sm_90", "-std=c++17"))
    n = 16384
    buf = cp.zeros(n * n + 64, dtype=cp.float32)
    sink = cp.zeros(1024, dtype=cp.float32)
    for rowlen in [int(x) for x in os.environ.get("ROWLENS", "16384,16383").split(",")]:
        gb = rowlen * rowlen * 4 / 1e9
        for tr, tc in ((128, 64), (64, 128)):
            st, ld = m.get_function(f"store_{tr}x{tc}"), m.get_function(f"load_{tr}x{tc}")
            ts = timeit(lambda: st(((rowlen + tc - 1) // tc, (rowlen + 7 + tr - 1) // tr), (32, 8), (buf, cp.uint32(rowlen), cp.uint32(rowlen))))
            tl = timeit(lambda: ld(((rowlen + tc - 1) // tc, (rowlen + tr - 1) // tr), (32, 8), (buf, sink, cp.uint32(rowlen), cp.uint32(rowlen))))
            print(f"rows of {rowlen}, tiles {tr} x {tc}: stores {gb / ts:7.1f} GB/s, loads {gb / tl:7.1f} GB/s, "
                  f"both {2 * gb / (ts + tl):7.1f} GB/s (one after the other)")


if __name__ == "__main__":
    main()
