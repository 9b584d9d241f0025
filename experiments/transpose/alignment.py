#!/usr/bin/env python3
"""What misaligned rows cost on this GPU, then transpose.cu's kernels on
shapes that are not multiples of 32. Run with CuPy on a GPU machine:

    python3 experiments/transpose/alignment.py

Flat copies of 1 GiB: aligned, reads shifted by one element, writes shifted
by one element, and writes shifted with the two halves of each shared
sector written far apart in time (skip with --no-flat). Then transpose.cu's
best and sector kernels (proto.py): every output checked against
CuPy's own transpose on awkward shapes, speed at 16384^2 and 16383^2
(SIZES=... and ELEMS=... to choose).
"""
import os
import sys

import cupy as cp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from proto import timeit  # noqa: E402

FLAT = r"""
extern "C" __global__ void copy32(const float* in, float* out, long long n, int roff, int woff) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride)
        out[i + woff] = in[i + roff];
}
extern "C" __global__ void copy128(const uint4* in, uint4* out, long long n) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride)
        out[i] = in[i];
}
// Writes shifted by one element; segment s (128 B, one warp) is processed
// at position perm(s): even segments in the first half of the run, odd
// ones in the second, so each sector shared by two segments gets its
// halves ~0.5 GiB of traffic apart.
extern "C" __global__ void copy32_far(const float* in, float* out, long long nseg) {
    long long warps = (long long)gridDim.x * blockDim.x / 32;
    long long w0 = (blockIdx.x * (long long)blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x & 31;
    long long half = (nseg + 1) / 2;
    for (long long p = w0; p < nseg; p += warps) {
        long long s = p < half ? 2 * p : 2 * (p - half) + 1;
        long long i = s * 32 + lane;
        out[i + 1] = in[i];
    }
}
"""


def flat():
    m = cp.RawModule(code=FLAT, options=("-arch=sm_90",))
    n = 1 << 28
    a = cp.random.random(n + 64, dtype=cp.float32)
    b = cp.zeros(n + 64, dtype=cp.float32)
    grid, block = 132 * 16, 256
    gb = 2 * n * 4 / 1e9
    k32, k128, kfar = m.get_function("copy32"), m.get_function("copy128"), m.get_function("copy32_far")
    rows = []
    for name, ro, wo in [("aligned", 0, 0), ("read +1", 1, 0), ("write +1", 0, 1), ("both +1", 1, 1), ("write +2", 0, 2), ("write +4", 0, 4), ("write +8", 0, 8)]:
        t = timeit(lambda: k32((grid,), (block,), (a, b, cp.int64(n), cp.int32(ro), cp.int32(wo))))
        rows.append((f"copy32 {name}", gb / t))
    t = timeit(lambda: k128((grid,), (block,), (a, b, cp.int64(n // 4))))
    rows.append(("copy128 aligned", gb / t))
    t = timeit(lambda: kfar((grid,), (block,), (a, b, cp.int64(n // 32))))
    rows.append(("copy32 write +1, sector halves far apart", gb / t))
    t = timeit(lambda: b.__setitem__(slice(0, n), a[:n]))
    rows.append(("cupy copy", gb / t))
    for r in rows:
        print(f"{r[0]:45s} {r[1]:8.1f} GB/s")
    sys.stdout.flush()


def main():
    print(cp.cuda.runtime.getDeviceProperties(0)["name"].decode())
    if "--no-flat" not in sys.argv:
        flat()
    import proto

    proto.run()


if __name__ == "__main__":
    main()
