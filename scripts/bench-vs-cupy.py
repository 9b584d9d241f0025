#!/usr/bin/env python3
"""warpmc's device primitives beside CuPy's (CUB underneath), in one run on
one GPU: radix sort of 2^28 random u32 keys, inclusive scan and reduction
of 2^28 floats.

    python3 scripts/bench-vs-cupy.py [--warpmc PATH] [--n N] [--runs R]

Prints both timings and the ratio warpmc / CuPy (below 1: warpmc faster).
CuPy is told to use CUB for reductions and scans (CUPY_ACCELERATORS=cub);
cupy.sort uses CUB's radix sort already. Needs cupy and a CUDA GPU.
"""
import argparse
import json
import os
import subprocess
import sys

os.environ.setdefault("CUPY_ACCELERATORS", "cub")


def warpmc_rows(exe, args):
    out = subprocess.run([exe, "bench", *args, "--json"], check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def cupy_ms(fn, runs):
    import cupy as cp

    fn()
    cp.cuda.Device().synchronize()
    times = []
    for _ in range(runs):
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop))
    times.sort()
    return times[len(times) // 2]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--warpmc", default="target/release/warpmc", help="the warpmc binary")
    ap.add_argument("--n", type=int, default=1 << 28, help="elements (default 2^28)")
    ap.add_argument("--runs", type=int, default=10, help="timed runs, median reported")
    a = ap.parse_args()
    try:
        import cupy as cp
    except ImportError:
        sys.exit("bench-vs-cupy: cupy is not installed")

    print(f"device: {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}, cupy {cp.__version__}, n = {a.n}")
    rows = []
    n, runs = str(a.n), str(a.runs)
    ours = warpmc_rows(a.warpmc, ["sort", "--n", n, "--runs", runs, "--keys", "u32"])[0]
    keys = cp.random.randint(0, 2**32, size=a.n, dtype=cp.uint64).astype(cp.uint32)
    rows.append(("sort u32 keys", ours["ms"], cupy_ms(lambda: cp.sort(keys), a.runs)))
    del keys
    x = cp.random.randint(0, 16, size=a.n).astype(cp.float32)
    ours = warpmc_rows(a.warpmc, ["scan", "--n", n, "--runs", runs, "--types", "f32"])[0]
    rows.append(("inclusive scan sum f32", ours["ms"], cupy_ms(lambda: cp.cumsum(x), a.runs)))
    ours = warpmc_rows(a.warpmc, ["reduce", "--n", n, "--runs", runs, "--types", "f32"])[0]
    rows.append(("reduce sum f32", ours["ms"], cupy_ms(lambda: x.sum(), a.runs)))
    print(f"{'operation':<26} {'warpmc ms':>10} {'CuPy ms':>10} {'warpmc/CuPy':>12}")
    for name, ours_ms, theirs_ms in rows:
        print(f"{name:<26} {ours_ms:>10.3f} {theirs_ms:>10.3f} {ours_ms / theirs_ms:>12.2f}")


if __name__ == "__main__":
    main()
