"""transpose.cu's best and sector kernels through CuPy: a correctness sweep
over awkward shapes and batches, then speed at large shapes beside the copy
kernel of Harris's transpose article. Run on a GPU machine with CuPy:

    python3 experiments/transpose/proto.py

SIZES= (square sizes, default 16384,16383), SHAPES= (more ROWSxCOLS),
ELEMS= (element sizes) and CONFIGS= (name=extra NVRTC options;
";"-separated, e.g. "lean=-maxrregcount=64", each built and timed) choose
the cases; SECTOR_ORDER=0/1/2 overrides the sector kernel's tile order,
FORCE_HALO=1 also times aligned shapes with a halo. The other scripts here
build the kernels with `options()` and launch them with `launch()`."""
import os
import sys

import cupy as cp

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = open(os.path.join(HERE, "..", "..", "crates", "prims", "kernels", "transpose.cu")).read()
SIZES = [int(x) for x in os.environ.get("SIZES", "16384,16383").split(",") if x]
# Extra compile-option sets (name=opt opt ...; ";"-separated), each timed.
CONFIGS = [c.split("=", 1) for c in os.environ.get("CONFIGS", "default=").split(";")]
ELEMS = [int(x) for x in os.environ.get("ELEMS", "1,2,4,8,16").split(",")]
SMALL = [(1, 1), (1, 37), (37, 1), (33, 31), (4097, 3), (3, 4097), (100, 7), (257, 129), (130, 66), (64, 64), (1000, 999),
         (2049, 1031), (1200, 700), (1536, 512), (577, 2500)]


def timeit(fn, runs=10):
    """Median seconds of `runs` timed calls of fn, after one untimed."""
    fn()
    cp.cuda.runtime.deviceSynchronize()
    ts = []
    for _ in range(runs):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(cp.cuda.get_elapsed_time(a, b) * 1e-3)
    return float(sorted(ts)[len(ts) // 2])


def words(e):
    return [w for w in (4, 8, 16) if w >= e and not (e < 4 and w > 4)]


# The sector kernel's word size and words per lane for each element size
# (crates/prims/src/transpose/mod.rs, sector_params, which the library
# passes to transpose.cu).
SECTOR_PARAMS = {1: (4, 2), 2: (4, 4), 4: (8, 2), 8: (16, 1), 16: (16, 1)}
# The sector kernel's tile orders (the library's SECTOR_ORDER_*).
ORDER_DIAGONAL, ORDER_COLUMN_MAJOR = 1, 2


def sector_params(e):
    """W and K of the sector kernel for e-byte elements."""
    return SECTOR_PARAMS[e]


def sector_pitch(e):
    """Words of shared memory per column of the sector kernel's tile
    (transpose.cu's SectorTile::P, which checks the value it is given)."""
    w, k = sector_params(e)
    v, sect = w // e, 32 // e
    ur = (32 * k * v + sect) // v
    return (-(-ur // v) * v + v) | 1


def options(e, extra=""):
    """The NVRTC options the library builds transpose.cu with for e-byte
    elements (crates/prims/src/transpose/cuda.rs), plus `extra`."""
    w, k = sector_params(e)
    return (
        "-arch=sm_90",
        "-std=c++17",
        f"-DPRIMS_TRANSPOSE_ELEM_BYTES={e}",
        "-DPRIMS_TRANSPOSE_TILE=32",
        "-DPRIMS_TRANSPOSE_BLOCK_ROWS=8",
        f"-DPRIMS_TRANSPOSE_SECTOR_WORD={w}",
        f"-DPRIMS_TRANSPOSE_SECTOR_WORDS={k}",
        f"-DPRIMS_TRANSPOSE_SECTOR_PITCH={sector_pitch(e)}",
        f"-DPRIMS_TRANSPOSE_ORDER_DIAGONAL={ORDER_DIAGONAL}",
        f"-DPRIMS_TRANSPOSE_ORDER_COLUMN_MAJOR={ORDER_COLUMN_MAJOR}",
    ) + tuple(extra.split())


def sector_cands(e, rows, cols):
    sect = 32 // e
    halo = 0 if (rows * e) % 32 == 0 else sect
    span = sect - 1 if halo else 0
    w, k = sector_params(e)
    v = w // e
    tr, tc = 32 * k * v, 32 * v
    smem = tc * sector_pitch(e) * w
    grid = (-(-cols // tc), min(-(-(rows + span) // tr), 65535), 1)
    out = [(f"sector w{w} k{k}", "tr_sector", grid, smem, halo)]
    if halo == 0 and os.environ.get("FORCE_HALO"):
        grid = (-(-cols // tc), min(-(-(rows + sect - 1) // tr), 65535), 1)
        out.append((f"sector w{w} k{k} +halo", "tr_sector", grid, smem, sect))
    return out


def best_cands(e, rows, cols):
    out = []
    for w in words(e):
        v = w // e
        if e >= 4 and w > e and (rows % v or cols % v):
            continue
        side = 32 * v
        out.append((f"best w{w}", f"tr_best_w{w}", (-(-cols // side), min(-(-rows // side), 65535), 1), v * 32 * 33 * w, None))
    return out


def sector_order(e, rows, cols):
    """The sector kernel's tile order (transpose/mod.rs, sector_block_order);
    SECTOR_ORDER=0/1/2 overrides it."""
    if "SECTOR_ORDER" in os.environ:
        return int(os.environ["SECTOR_ORDER"])
    return ORDER_COLUMN_MAJOR if e >= 4 else ORDER_DIAGONAL


def launch(m, fn, grid, smem, halo, a, out, rows, cols, batch, e):
    k = m.get_function(fn)
    if smem > 48 * 1024:
        k.max_dynamic_shared_size_bytes = smem
    g = (grid[0], grid[1], min(batch, 65535))
    args = [a, out, cp.uint32(rows), cp.uint32(cols), cp.uint32(batch)]
    if halo is not None:
        args += [cp.uint32(halo), cp.uint32(sector_order(e, rows, cols))]
    return lambda: k(g, (32, 8, 1), tuple(args), shared_mem=smem)


def run():
    bad = 0
    for e in ELEMS:
        mods = [(cname, cp.RawModule(code=SRC, options=options(e, opts))) for cname, opts in CONFIGS]
        m = mods[0][1]
        for rows, cols in SMALL:
            for batch in (1, 3):
                a = cp.random.randint(0, 256, size=batch * rows * cols * e, dtype=cp.uint8)
                want = cp.ascontiguousarray(a.reshape(batch, rows, cols, e).transpose(0, 2, 1, 3)).reshape(-1)
                cands = [(m, c) for c in best_cands(e, rows, cols)]
                cands += [(cm, c) for cname, cm in mods for c in sector_cands(e, rows, cols)]
                for m_, (name, fn, grid, smem, halo) in cands:
                    out = cp.zeros_like(a)
                    launch(m_, fn, grid, smem, halo, a, out, rows, cols, batch, e)()
                    if not bool(cp.array_equal(out, want)):
                        bad += 1
                        print(f"WRONG E={e} {batch}x{rows}x{cols} {name} {[k for k, v in mods if v is m_]}")
        print(f"E={e}: small shapes checked")
        sys.stdout.flush()
        shapes = [(n, n) for n in SIZES] + [tuple(int(v) for v in x.split("x")) for x in os.environ.get("SHAPES", "").split(",") if x]
        for rows, cols in shapes:
            n = f"{rows}x{cols}"
            a = cp.random.randint(0, 256, size=rows * cols * e, dtype=cp.uint8)
            want = cp.ascontiguousarray(a.reshape(rows, cols, e).transpose(1, 0, 2)).reshape(-1)
            out = cp.zeros_like(a)
            gb = 2 * rows * cols * e / 1e9
            cands = [(m, "copy", "tr_copy", (-(-cols // 32), min(-(-rows // 32), 65535), 1), 0, None)]
            for cname, cm in mods:
                word = best_cands(e, rows, cols) if (cm is m or os.environ.get("WORD_ALL")) else []
                cands += [(cm, c[0] + " " + cname) + c[1:] for c in word + sector_cands(e, rows, cols)]
            for m_, name, fn, grid, smem, halo in cands:
                f = launch(m_, fn, grid, smem, halo, a, out, rows, cols, 1, e)
                out.fill(0)
                f()
                ok = bool(cp.array_equal(out, a if fn == "tr_copy" else want))
                bad += not ok
                t = timeit(f)
                print(f"E={e:2d} {n} {name:26s} {gb / t:8.1f} GB/s {'ok' if ok else 'WRONG'}")
                sys.stdout.flush()
            del a, out, want
            cp.get_default_memory_pool().free_all_blocks()
    print("ALL OK" if bad == 0 else f"{bad} WRONG")
