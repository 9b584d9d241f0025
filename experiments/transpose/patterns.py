#!/usr/bin/env python3
"""The f32 sector transpose's memory traffic without the transpose: its
store pattern alone (each block writes 64 output rows' 128-element
segments, shifted onto sectors, 8 bytes per lane) and its load pattern
alone (each block reads 136 rows of 64 elements, 8-byte words realigned
by a shuffle funnel), for rows of 16384 (aligned) and 16383 (misaligned)
elements. CuPy, on the GPU machine:

    python3 experiments/transpose/patterns.py

ROWLENS= (row lengths), ALIGNS= (elements the store segments align to:
8 = a sector, 32 = a 128-byte line, 64 = 256 bytes) and COLMAJOR=0,1 (the
blocks' tile order: row-major, or column-major as the sector kernel runs
f32) choose the cases.
"""
import os
import sys

import cupy as cp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from proto import timeit  # noqa: E402

SRC = r"""
typedef unsigned long long u64;
// Stores of the sector kernel: block (bx, by) writes output rows
// o = 64 bx .. 64 bx + 63, elements [by * 128 - d, by * 128 - d + 128) of each
// (d = the row's misalignment in elements, 0 when aligned), clipped to the row.
// With colmajor, consecutive blocks take the tiles of one strip of output
// rows (the sector kernel's column-major order).
extern "C" __global__ void store_pattern(float* out, unsigned nrows, unsigned rowlen, int shift, int colmajor) {
    const unsigned lane = threadIdx.x;
    const unsigned tiles = (rowlen + (shift ? shift - 1 : 0) + 127) / 128;
    unsigned bx = blockIdx.x, by = blockIdx.y;
    if (colmajor) {
        const unsigned bid = blockIdx.x + gridDim.x * blockIdx.y;
        by = bid % gridDim.y;
        bx = bid / gridDim.y;
    }
    for (unsigned t = by; t < tiles; t += gridDim.y)
    for (unsigned j = threadIdx.y; j < 64; j += 8) {
        const unsigned o = bx * 64 + j;
        if (o >= nrows) break;
        const u64 f = (u64)o * rowlen + (u64)t * 128;
        const unsigned d = shift ? (unsigned)(f & (shift - 1)) : 0;  // shift: elements of alignment
        for (int k = 0; k < 2; ++k) {
            const long long j0 = (long long)t * 128 - d + 2 * (lane + 32 * k);
            if (j0 >= 0 && j0 + 2 <= rowlen)
                *reinterpret_cast<float2*>(out + (f - d) + 2 * (lane + 32 * k)) = make_float2(1.f, 2.f);
            else
                for (int e = 0; e < 2; ++e)
                    if (j0 + e >= 0 && j0 + e < rowlen) out[(u64)o * rowlen + j0 + e] = 1.f;
        }
    }
}
// Loads of the sector kernel: block (bx, by) reads rows by * 128 - halo ..
// by * 128 + 127 (those inside), columns 64 bx .. 64 bx + 63, as aligned
// 8-byte words realigned with the next lane's; sums into one word per block.
extern "C" __global__ void load_pattern(const float* in, float* sink, unsigned nrows, unsigned rowlen, unsigned halo,
                                        int colmajor) {
    const unsigned lane = threadIdx.x;
    const unsigned tiles = (nrows + 127) / 128;
    unsigned bx = blockIdx.x, by = blockIdx.y;
    if (colmajor) {
        const unsigned bid = blockIdx.x + gridDim.x * blockIdx.y;
        by = bid % gridDim.y;
        bx = bid / gridDim.y;
    }
    float acc = 0.f;
    for (unsigned t = by; t < tiles; t += gridDim.y)
    for (int x = (int)threadIdx.y - (int)halo; x < 128; x += 8) {
        const long long r = (long long)t * 128 + x;
        if (r < 0 || r >= nrows) continue;
        const u64 e0 = (u64)r * rowlen + bx * 64;
        const u64 a = (e0 & ~1ull) + 2 * lane;
        const float2 lo = *reinterpret_cast<const float2*>(in + a);
        float2 hi;
        hi.x = __shfl_down_sync(0xffffffffu, lo.x, 1);
        hi.y = __shfl_down_sync(0xffffffffu, lo.y, 1);
        if (lane == 31 && (e0 & 1)) hi = *reinterpret_cast<const float2*>(in + a + 2);
        acc += (e0 & 1) ? lo.y + hi.x : lo.x + lo.y;
    }
    if (acc == 12345.f) sink[bx] = acc;
}
"""


def main():
    print(cp.cuda.runtime.getDeviceProperties(0)["name"].decode())
    m = cp.RawModule(code=SRC, options=("-arch=sm_90",))
    st, ld = m.get_function("store_pattern"), m.get_function("load_pattern")
    n = 16384
    buf = cp.zeros(n * n + 64, dtype=cp.float32)
    sink = cp.zeros(1024, dtype=cp.float32)
    for rowlen in [int(x) for x in os.environ.get("ROWLENS", "16384,16383").split(",")]:
        gb = rowlen * rowlen * 4 / 1e9
        tiles = (rowlen + 7 + 127) // 128
        for shift in [int(x) for x in os.environ.get("ALIGNS", "8").split(",")]:
            tiles = (rowlen + max(shift - 1, 0) + 127) // 128
            for cm in [int(x) for x in os.environ.get("COLMAJOR", "0").split(",")]:
                t = timeit(lambda: st(((rowlen + 63) // 64, tiles), (32, 8), (buf, cp.uint32(rowlen), cp.uint32(rowlen), cp.int32(shift), cp.int32(cm))))
                order = "column-major" if cm else "row-major"
                print(f"store pattern, rows of {rowlen}, segments on {4 * shift or 4}-byte boundaries, {order}: {gb / t:8.1f} GB/s of writes")
        for halo in (0, 8):
            for cm in [int(x) for x in os.environ.get("COLMAJOR", "0").split(",")]:
                t = timeit(lambda: ld(((rowlen + 63) // 64, (rowlen + 127) // 128), (32, 8), (buf, sink, cp.uint32(rowlen), cp.uint32(rowlen), cp.uint32(halo), cp.int32(cm))))
                order = "column-major" if cm else "row-major"
                print(f"load pattern, rows of {rowlen}, halo {halo}, {order}: {gb / t:8.1f} GB/s of reads")
        t = timeit(lambda: cp.copyto(buf[: rowlen * rowlen // 2], buf[rowlen * rowlen // 2 : rowlen * rowlen // 2 * 2]))
        print(f"cupy copy of half the bytes: {gb / t:8.1f} GB/s of reads + writes")


if __name__ == "__main__":
    main()
