#!/usr/bin/env python3
"""One launch of each transpose kernel of interest, for Nsight Compute:

    ncu --section SpeedOfLight ... python3 experiments/transpose/ncu.py

ELEMS, SIZES and CONFIGS as in proto.py; KERNELS (comma-separated
prefixes of the candidate names: "best w8", "sector") chooses which run."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cupy as cp  # noqa: E402
import proto as tp  # noqa: E402

WANT = [k for k in os.environ.get("KERNELS", "best,sector").split(",") if k]
for e in tp.ELEMS:
    mods = [(n, cp.RawModule(code=tp.SRC, options=tp.options(e, "-lineinfo " + o))) for n, o in tp.CONFIGS]
    for n in tp.SIZES:
        a = cp.random.randint(0, 256, size=n * n * e, dtype=cp.uint8)
        out = cp.zeros_like(a)
        for cname, m in mods:
            for name, fn, grid, smem, halo in tp.best_cands(e, n, n) + tp.sector_cands(e, n, n):
                if any(name.startswith(w) for w in WANT):
                    print(f"E={e} {n}^2 {name} {cname}", flush=True)
                    tp.launch(m, fn, grid, smem, halo, a, out, n, n, 1, e)()
                    cp.cuda.runtime.deviceSynchronize()
