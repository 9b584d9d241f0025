#!/usr/bin/env python3
"""Does the sector kernel's speed depend on where its buffers lie? The same
transpose (transpose.cu through CuPy, as proto.py builds it) timed
with the input and output placed after spacer allocations of several sizes,
within one run. On a GPU machine with CuPy:

    ELEMS=1,4 SHAPE=16383x16383 python3 experiments/transpose/placement.py

SPACERS= (MiB allocated before each pair of buffers), DISTS= (the output
that many MiB after the input, in one allocation), SLEEP= (seconds idle
before each timing) and SUSTAIN= (seconds of back-to-back launches, GB/s
per 100 ms) choose the cases. Its answer (docs/benchmarks/transpose.md, part 3):
placement did not matter; the GPU's power cap did.
"""
import os
import sys
import time

import cupy as cp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import proto as tp  # noqa: E402


def main():
    print(cp.cuda.runtime.getDeviceProperties(0)["name"].decode())
    rows, cols = (int(v) for v in os.environ.get("SHAPE", "16383x16383").split("x"))
    cp.cuda.set_allocator(None)  # plain cudaMalloc per array: placement follows the spacers
    for e in [int(x) for x in os.environ.get("ELEMS", "1,4").split(",")]:
        m = cp.RawModule(code=tp.SRC, options=tp.options(e))
        (name, fn, grid, smem, halo), = tp.sector_cands(e, rows, cols)
        gb = 2 * rows * cols * e / 1e9
        for spacer_mib in [int(x) for x in os.environ.get("SPACERS", "0,2,6,64,200,1000,1002").split(",")]:
            spacer = cp.empty(spacer_mib << 20, dtype=cp.uint8) if spacer_mib else None
            a = cp.random.randint(0, 256, size=rows * cols * e, dtype=cp.uint8)
            out = cp.zeros_like(a)
            f = tp.launch(m, fn, grid, smem, halo, a, out, rows, cols, 1, e)
            time.sleep(float(os.environ.get("SLEEP", "0")))  # an idle GPU before the timing
            t = tp.timeit(f)
            print(f"E={e} {rows}x{cols} spacer {spacer_mib:5d} MiB  in @ {a.data.ptr:#x} out @ {out.data.ptr:#x}: {gb / t:8.1f} GB/s")
            sys.stdout.flush()
            del a, out, spacer
        # SUSTAIN seconds of back-to-back launches: GB/s per 100 ms.
        sustain = float(os.environ.get("SUSTAIN", "0"))
        if sustain:
            a = cp.random.randint(0, 256, size=rows * cols * e, dtype=cp.uint8)
            out = cp.zeros_like(a)
            f = tp.launch(m, fn, grid, smem, halo, a, out, rows, cols, 1, e)
            time.sleep(float(os.environ.get("SLEEP", "0")))
            t0 = time.time()
            line = []
            while time.time() - t0 < sustain:
                b0, b1 = cp.cuda.Event(), cp.cuda.Event()
                n = 0
                b0.record()
                t1 = time.time()
                while time.time() - t1 < 0.1:
                    f()
                    n += 1
                    if n % 20 == 0:
                        cp.cuda.runtime.deviceSynchronize()
                b1.record()
                b1.synchronize()
                line.append(f"{gb * n / (cp.cuda.get_elapsed_time(b0, b1) * 1e-3):.0f}")
            print(f"E={e} {rows}x{cols} sustained, GB/s per 100 ms: {' '.join(line)}")
            sys.stdout.flush()
            del a, out
        # One allocation, the output DIST MiB after the input.
        nbytes = rows * cols * e
        for dist_mib in [int(x) for x in os.environ.get("DISTS", "").split(",") if x]:
            dist = dist_mib << 20
            if dist < nbytes:
                continue
            big = cp.empty(dist + nbytes, dtype=cp.uint8)
            a, out = big[:nbytes], big[dist : dist + nbytes]
            a[...] = cp.random.randint(0, 256, size=nbytes, dtype=cp.uint8)
            f = tp.launch(m, fn, grid, smem, halo, a, out, rows, cols, 1, e)
            t = tp.timeit(f)
            print(f"E={e} {rows}x{cols} output {dist_mib:5d} MiB after the input (one allocation at {big.data.ptr:#x}): {gb / t:8.1f} GB/s")
            sys.stdout.flush()
            del a, out, big


if __name__ == "__main__":
    main()
