"""warpmc.prims on numpy arrays: every operation against a numpy reference
on random inputs of awkward sizes, degenerate values included."""

from __future__ import annotations

import ctypes
import sys

import numpy as np
import pytest

from warpmc import _native, prims

NUMBERS = ["int32", "uint32", "int64", "uint64", "float32", "float64"]
SIZES = [0, 1, 2, 31, 32, 33, 1000, 4099, 65537]


def random_array(rng: np.random.Generator, n: int, dtype: str, special: bool = True) -> np.ndarray:
    """Random values over the type's whole range, with its extremes (and for
    floats ±0, ±inf and NaNs of both signs) mixed in."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        x = (rng.standard_normal(n) * 10.0 ** rng.integers(-30, 30, n)).astype(dt)
        if special and n:
            extremes = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, np.finfo(dt).max, np.finfo(dt).tiny])
            at = rng.integers(0, n, min(n, len(extremes)))
            x[at] = extremes[: len(at)].astype(dt)
        return x
    info = np.iinfo(dt)
    x = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
    if n:
        x[rng.integers(0, n, min(n, 4))] = np.array([info.min, info.max, 0, 1], dtype=dt)[: min(n, 4)]
    return x


def total_order(x: np.ndarray) -> np.ndarray:
    """Keys whose unsigned order is IEEE 754's total order of `x`."""
    bits = x.view(np.uint32 if x.dtype == np.float32 else np.uint64)
    sign = bits >> (bits.dtype.itemsize * 8 - 1)
    return np.where(sign == 1, ~bits, bits | (bits.dtype.type(1) << (bits.dtype.itemsize * 8 - 1)))


def reference_sort(x: np.ndarray) -> np.ndarray:
    if x.dtype.kind == "f":
        return x[np.argsort(total_order(x), kind="stable")]
    return np.sort(x, kind="stable")


@pytest.mark.parametrize("dtype", NUMBERS)
@pytest.mark.parametrize("n", SIZES)
def test_sort_orders_keys_as_the_reference(dtype, n):
    rng = np.random.default_rng(n * 7 + len(dtype))
    x = random_array(rng, n, dtype)
    got = prims.sort(x)
    assert got.dtype == x.dtype and got is not x
    assert got.tobytes() == reference_sort(x).tobytes()


@pytest.mark.parametrize("dtype", ["uint32", "float64", "int64"])
def test_sort_pairs_is_stable(dtype):
    rng = np.random.default_rng(1)
    keys = random_array(rng, 5001, dtype)
    keys[::3] = keys[0]  # many equal keys
    values = np.arange(5001, dtype=np.int32)
    k, v = prims.sort(keys, values)
    order = np.argsort(total_order(keys) if keys.dtype.kind == "f" else keys, kind="stable")
    assert k.tobytes() == keys[order].tobytes()
    assert np.array_equal(v, values[order])


def test_sort_in_place_sorts_the_array_itself():
    x = np.array([5, -1, 3, 3, 0], dtype=np.int64)
    y = prims.sort(x, inplace=True)
    assert y is x and list(x) == [-1, 0, 3, 3, 5]
    keys = np.array([2.0, 1.0], dtype=np.float32)
    values = np.array([10, 20], dtype=np.uint64)
    k, v = prims.sort(keys, values, inplace=True)
    assert k is keys and v is values and list(values) == [20, 10]
    untouched = np.array([3, 1, 2], dtype=np.uint32)
    prims.sort(untouched)
    assert list(untouched) == [3, 1, 2]
    # Keys and values that overlap cannot both be sorted in place.
    a = np.array([5, 3, 1, 2], dtype=np.uint32)
    with pytest.raises(ValueError, match="share memory"):
        prims.sort(a[:3], a[1:4], inplace=True, backend="cpu")
    assert list(a) == [5, 3, 1, 2]
    assert [list(x) for x in prims.sort(a[:3], a[1:4], backend="cpu")] == [[1, 3, 5], [2, 1, 3]]


def wrapping_cumsum(x: np.ndarray) -> np.ndarray:
    return np.cumsum(x, dtype=x.dtype)


@pytest.mark.parametrize("dtype", NUMBERS)
@pytest.mark.parametrize("n", SIZES)
def test_scan_equals_the_reference(dtype, n):
    rng = np.random.default_rng(n + 100 * len(dtype))
    x = random_array(rng, n, dtype, special=False)
    if x.dtype.kind == "f":
        x = rng.standard_normal(n).astype(x.dtype)
    with np.errstate(over="ignore"):
        for op, ref in [("sum", wrapping_cumsum), ("min", np.minimum.accumulate), ("max", np.maximum.accumulate)]:
            got = prims.scan(x, op)
            expected = ref(x) if n else x.copy()
            assert got.dtype == x.dtype and got.shape == x.shape
            if x.dtype.kind == "f" and op == "sum":
                # Floating-point sums round by the order of their additions:
                # within a few units of the rounding per term of the float64
                # prefix sums.
                assert_sums_close(got, np.cumsum(x, dtype=np.float64), np.cumsum(np.abs(x), dtype=np.float64))
            else:
                assert got.tobytes() == expected.tobytes(), op
            exclusive = prims.scan(x, op, inclusive=False)
            if n:
                identity = {"sum": 0, "min": _max(x.dtype), "max": _min(x.dtype)}[op]
                assert exclusive[0] == identity
                if x.dtype.kind == "f" and op == "sum":
                    exact = np.concatenate([[0.0], np.cumsum(x, dtype=np.float64)[:-1]])
                    scale = np.concatenate([[0.0], np.cumsum(np.abs(x), dtype=np.float64)[:-1]])
                    assert_sums_close(exclusive, exact, scale)
                else:
                    np.testing.assert_array_equal(exclusive[1:], got[:-1])


def assert_sums_close(got: np.ndarray, exact: np.ndarray, scale: np.ndarray) -> None:
    """Sums within 64 rounding units of the sum of magnitudes."""
    bound = 64 * np.finfo(got.dtype).eps * scale + np.finfo(got.dtype).tiny
    assert np.all(np.abs(got.astype(np.float64) - exact) <= bound)


def _max(dt: np.dtype):
    return np.inf if dt.kind == "f" else np.iinfo(dt).max


def _min(dt: np.dtype):
    return -np.inf if dt.kind == "f" else np.iinfo(dt).min


@pytest.mark.parametrize("dtype", NUMBERS)
@pytest.mark.parametrize("n", SIZES)
def test_reduce_equals_the_reference(dtype, n):
    rng = np.random.default_rng(n + 1000 * len(dtype))
    x = random_array(rng, n, dtype, special=False)
    if x.dtype.kind == "f":
        x = rng.standard_normal(n).astype(x.dtype)
    total = prims.reduce(x)
    assert type(total) is x.dtype.type
    if x.dtype.kind == "f":
        exact = np.sum(x, dtype=np.float64)
        assert_sums_close(np.array([total]), np.array([exact]), np.array([np.sum(np.abs(x), dtype=np.float64)]))
    else:
        with np.errstate(over="ignore"):
            assert total == np.sum(x, dtype=x.dtype)
    assert prims.reduce(x, "min") == (x.min() if n else _max(x.dtype))
    assert prims.reduce(x, "max") == (x.max() if n else _min(x.dtype))


def test_reduce_takes_every_element_of_any_shape_and_skips_nans_in_min_max():
    x = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    assert prims.reduce(x) == 276
    f = np.array([np.nan, 2.0, -1.0, np.nan], dtype=np.float64)
    assert prims.reduce(f, "min") == -1.0 and prims.reduce(f, "max") == 2.0


@pytest.mark.parametrize("dtype", ["uint8", "int16", "float32", "float64", "complex128", "bool"])
@pytest.mark.parametrize("shape", [(1, 1), (1, 37), (37, 1), (33, 65), (64, 64), (0, 5), (3, 17, 9), (4, 32, 32)])
def test_transpose_equals_numpys(dtype, shape):
    rng = np.random.default_rng(sum(shape))
    x = rng.integers(0, 250, shape).astype(dtype)
    if dtype == "complex128":
        x = x + 1j * rng.standard_normal(shape)
    got = prims.transpose(x)
    expected = np.ascontiguousarray(np.swapaxes(x, -1, -2))
    assert got.shape == expected.shape and got.dtype == x.dtype
    assert got.tobytes() == expected.tobytes()


def test_non_contiguous_and_foreign_byte_order_inputs_are_read_correctly():
    x = np.arange(40, dtype=np.int32)[::-2]
    assert list(prims.sort(x)) == sorted(x.tolist())
    big = np.arange(6, dtype=">u4")
    assert list(prims.scan(big)) == [0, 1, 3, 6, 10, 15]
    m = np.arange(12, dtype=np.float32).reshape(3, 4).T  # a transposed view
    assert np.array_equal(prims.transpose(m), np.ascontiguousarray(m.T))


def test_bad_inputs_are_clear_errors():
    with pytest.raises(TypeError, match="dtype float16 is not supported"):
        prims.sort(np.zeros(3, dtype=np.float16))
    with pytest.raises(TypeError, match="dtype bool"):
        prims.scan(np.zeros(3, dtype=bool))
    with pytest.raises(ValueError, match="1-D"):
        prims.sort(np.zeros((2, 2), dtype=np.int32))
    with pytest.raises(ValueError, match="2-D or 3-D"):
        prims.transpose(np.zeros(4, dtype=np.int32))
    with pytest.raises(ValueError, match="values of shape"):
        prims.sort(np.zeros(3, dtype=np.int32), np.zeros(4, dtype=np.int32))
    with pytest.raises(ValueError, match="unknown"):
        prims.reduce(np.zeros(3, dtype=np.int32), "product")
    with pytest.raises(ValueError, match="backend"):
        prims.reduce(np.zeros(3, dtype=np.int32), backend="tpu")
    read_only = np.zeros(3, dtype=np.int32)
    read_only.flags.writeable = False
    with pytest.raises(ValueError, match="writable array; this one is read-only"):
        prims.sort(read_only, inplace=True)
    with pytest.raises(TypeError, match="numpy array"):
        prims.sort([3, 1, 2], inplace=True)


def test_numpy_arrays_on_the_gpu_give_the_cpus_results(gpu):
    rng = np.random.default_rng(3)
    for dtype in NUMBERS:
        x = random_array(rng, 100_003, dtype)
        assert prims.sort(x, backend="cuda").tobytes() == prims.sort(x).tobytes()
        assert prims.reduce(x, "max", backend="cuda").tobytes() == prims.reduce(x, "max").tobytes()
        if x.dtype.kind != "f":
            assert prims.scan(x, backend="cuda").tobytes() == prims.scan(x).tobytes()
    m = rng.integers(0, 1000, (3, 129, 67)).astype(np.uint16)
    assert np.array_equal(prims.transpose(m, backend="cuda"), prims.transpose(m))


class EmptyOnGpu:
    """A GPU array without elements, as libraries describe them: any
    strides, no address. Nothing is asked of the driver for it."""

    __cuda_array_interface__ = {
        "shape": (0,),
        "strides": (0,),
        "typestr": "<u4",
        "data": (0, False),
        "version": 3,
        "stream": None,
    }


def test_an_empty_gpu_array_sorts_without_touching_a_device():
    x = EmptyOnGpu()
    assert prims.sort(x, inplace=True) is x


def test_host_arrays_are_worked_on_in_their_own_memory_and_copies_that_do_not_fit_are_a_memory_error():
    import subprocess
    import sys

    # The arrays (1 GiB, then 2 x 512 MiB) are made, and warpmc's threads
    # started (their stacks and allocator arenas are address space too),
    # before the address space is limited to what the process holds plus
    # 600 MiB: a reduce and an in-place sort make no copy and run; sorting
    # the pairs in place needs 2 GiB of pairs beside them, which is a
    # MemoryError (not an abort) that leaves the arrays as they were.
    code = (
        "import resource, numpy as np\n"
        "from warpmc import prims\n"
        "prims.sort(np.arange(1 << 20, 0, -1), np.arange(1 << 20), inplace=True, backend='cpu')\n"
        "x = np.arange(2**27, dtype=np.int64)\n"
        "k = np.arange(2**26, 0, -1, dtype=np.int64)\n"
        "v = np.arange(2**26, dtype=np.int64)\n"
        "vm = next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmSize:')) * 1024\n"
        "resource.setrlimit(resource.RLIMIT_AS, (vm + (600 << 20), resource.RLIM_INFINITY))\n"
        "assert prims.reduce(x, backend='cpu') == (2**27 - 1) * 2**26\n"
        "x[::2] *= -1\n"
        "prims.sort(x, inplace=True, backend='cpu')\n"
        "assert x[0] == -(2**27 - 2) and x[-1] == 2**27 - 1\n"
        "chunks = (x[i:i + (1 << 20) + 1] for i in range(0, 2**27, 1 << 20))\n"
        "assert all(bool(np.all(c[1:] >= c[:-1])) for c in chunks)\n"
        "try:\n"
        "    prims.sort(k, v, inplace=True, backend='cpu')\n"
        "except MemoryError as e:\n"
        "    assert k[0] == 2**26 and v[0] == 0\n"
        "    print('MemoryError', e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.startswith("MemoryError"), (out.returncode, out.stdout, out.stderr)


def test_masked_arrays_are_refused_not_unmasked():
    x = np.ma.array([3, 2, 1], mask=[0, 1, 0])
    for call in (prims.sort, prims.scan, prims.reduce, lambda a: prims.sort(a, inplace=True)):
        with pytest.raises(TypeError, match="masked arrays are not supported"):
            call(x)
    with pytest.raises(TypeError, match="masked arrays are not supported"):
        prims.transpose(np.ma.array(np.ones((2, 3)), mask=np.eye(2, 3, dtype=bool)))
    with pytest.raises(TypeError, match="masked arrays are not supported"):
        prims.sort(np.array([2, 1]), np.ma.array([1, 2], mask=[1, 0]))
    assert list(x.data) == [3, 2, 1]


def unaligned(values, dtype) -> np.ndarray:
    """A C-contiguous view whose elements start one byte past an aligned
    address (numpy allows it; the elements are not aligned)."""
    dtype = np.dtype(dtype)
    buffer = bytearray(len(values) * dtype.itemsize + 1)
    x = np.frombuffer(buffer, dtype, offset=1, count=len(values))
    x[:] = values
    assert x.flags.c_contiguous and not x.flags.aligned
    return x


@pytest.mark.parametrize("dtype", ["int64", "float32", "uint32"])
def test_unaligned_arrays_are_worked_on_in_an_aligned_copy(dtype):
    values = [5, 3, 4, 1, 2]
    x = unaligned(values, dtype)
    assert list(prims.sort(x)) == sorted(values) and list(x) == values
    assert list(prims.scan(x)) == list(np.cumsum(values))
    assert prims.reduce(x, "max") == 5
    m = unaligned(range(6), dtype).reshape(2, 3)
    assert np.array_equal(prims.transpose(m), np.arange(6, dtype=dtype).reshape(2, 3).T)
    # In place: sorted in an aligned copy and copied back.
    keys, payload = unaligned(values, dtype), unaligned([10, 30, 40, 50, 20], "int32")
    k, v = prims.sort(keys, payload, inplace=True)
    assert k is keys and v is payload
    assert list(keys) == [1, 2, 3, 4, 5] and list(payload) == [50, 20, 30, 40, 10]
    # The native module tells misalignment from a gap between elements.
    with pytest.raises(ValueError, match="aligned"):
        _native.prims_reduce_host(x, dtype, "sum", "cpu")
    with pytest.raises(ValueError, match="C-contiguous"):
        _native.prims_reduce_host(np.arange(10, dtype=dtype)[::2], dtype, "sum", "cpu")


def test_strided_and_byte_swapped_arrays_sort_in_place_as_numpy_s_do():
    rng = np.random.default_rng(11)
    base = rng.integers(-1000, 1000, 37).astype(np.int32)
    for view in (lambda a: a[::-1], lambda a: a[1::3], lambda a: a.astype(">i4")):
        x = view(base.copy())
        expected = np.sort(x)
        assert prims.sort(x, inplace=True) is x
        assert np.array_equal(x, expected)
    # Keys and values in one array's two columns: each a strided view.
    pairs = np.stack([base, np.arange(37, dtype=np.int32)], axis=1)
    k, v = prims.sort(pairs[:, 0], pairs[:, 1], inplace=True)
    order = np.argsort(base, kind="stable")
    assert np.array_equal(pairs[:, 0], base[order]) and np.array_equal(pairs[:, 1], order)
    # Only the view is sorted: the elements between stay.
    x = base.copy()
    prims.sort(x[::2], inplace=True)
    assert np.array_equal(x[1::2], base[1::2]) and np.array_equal(x[::2], np.sort(base[::2]))


def test_zero_dimensional_arrays_are_not_taken_as_one_dimensional():
    with pytest.raises(ValueError, match=r"sort takes a 1-D array, not one of shape \(\)"):
        prims.sort(np.float64(3))
    with pytest.raises(ValueError, match=r"sort takes a 1-D array, not one of shape \(\)"):
        prims.sort(np.array(3, dtype=np.int64), inplace=True)
    with pytest.raises(ValueError, match=r"scan takes a 1-D array, not one of shape \(\)"):
        prims.scan(np.int64(5))
    with pytest.raises(ValueError, match=r"transpose takes a 2-D or 3-D array, not one of shape \(\)"):
        prims.transpose(np.int32(3))
    # A reduction of every element, as numpy's, takes a 0-d array.
    assert prims.reduce(np.float64(3)) == 3.0 and prims.reduce(np.array(7, dtype=np.int32), "min") == 7


def test_true_or_false_arguments_take_only_booleans():
    x = np.array([3, 1, 2], dtype=np.int32)
    with pytest.raises(TypeError, match="inplace must be True or False, not str"):
        prims.sort(x, inplace="no")
    with pytest.raises(TypeError, match="inclusive must be True or False, not int"):
        prims.scan(x, inclusive=0)
    assert list(x) == [3, 1, 2]
    assert list(prims.scan(x, inclusive=np.False_)) == [0, 3, 4]
    assert prims.sort(x, inplace=np.True_) is x and list(x) == [1, 2, 3]


def test_gpu_arrays_of_other_libraries_need_cupy_for_their_copies(monkeypatch):
    # Without CuPy (an import of it fails), a sorted copy of a GPU array
    # that is neither CuPy's nor PyTorch's has no library to live in.
    monkeypatch.setitem(sys.modules, "cupy", None)
    for call in (prims.sort, prims.scan, prims.reduce):
        with pytest.raises(TypeError, match="EmptyOnGpu arrays are CuPy arrays, and CuPy is not installed"):
            call(EmptyOnGpu())


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


class DLPackOnGpu:
    """A GPU tensor seen only through DLPack (as JAX's and PyTorch's are),
    of the DLPack element type `code` and `bits`, at a made-up address
    (nothing here reads it)."""

    def __init__(self, shape: tuple[int, ...], code: int, bits: int) -> None:
        self.shape = (ctypes.c_int64 * len(shape))(*shape)
        self.managed = DLManagedTensor(
            DLTensor(0x7F0000000000, DLDevice(2, 0), len(shape), DLDataType(code, bits, 1), self.shape, None, 0)
        )
        self.name = b"dltensor"

    def __dlpack_device__(self) -> tuple[int, int]:
        return (2, 0)

    def __dlpack__(self, stream=None):
        new = ctypes.pythonapi.PyCapsule_New
        new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        return new(ctypes.addressof(self.managed), self.name, None)


def test_bfloat16_gpu_tensors_are_transposed_as_two_byte_elements_and_refused_elsewhere(monkeypatch):
    x = DLPackOnGpu((3, 5), code=4, bits=16)  # kDLBfloat
    assert _native.dlpack_view(x.__dlpack__())[3] == "bfloat16"
    # What transpose asks of the native module, without a GPU.
    calls = []
    monkeypatch.setattr(_native, "stream_handle", lambda ordinal: 0)
    monkeypatch.setattr(_native, "prims_transpose_device", lambda *args: calls.append(args))
    monkeypatch.setattr(prims, "_empty_gpu", lambda like, ordinal, shape, dtype: DLPackOnGpu(shape, 4, 16))
    out = prims.transpose(x)
    assert bytes(out.shape) == bytes((ctypes.c_int64 * 2)(5, 3))
    (ordinal, src, dst, itemsize, batch, rows, cols), = calls
    assert (src[1:], dst[1:], itemsize, batch, rows, cols) == ((15, "bfloat16"), (15, "bfloat16"), 2, 1, 3, 5)
    for call in (lambda a: prims.sort(a, inplace=True), prims.scan, prims.reduce):
        with pytest.raises(TypeError, match="dtype bfloat16 is not supported: sort, scan and reduce take"):
            call(x)
    with pytest.raises(ValueError, match="bfloat elements of 32 bits are not supported"):
        _native.dlpack_view(DLPackOnGpu((4,), code=4, bits=32).__dlpack__())


def test_arrays_over_one_buffer_are_refused_not_mixed_up():
    # Two arrays over one buffer through distinct base objects: numpy's
    # borrow tracking sees two arrays, the native call sees shared memory.
    from warpmc import _native

    buf = bytearray(8 * 16)
    a = np.frombuffer(memoryview(buf), dtype=np.int64)
    b = np.frombuffer(memoryview(buf), dtype=np.int64)
    a[:] = np.arange(16)[::-1]
    with pytest.raises(ValueError, match="share memory"):
        _native.prims_scan_host(a, b, "int64", "sum", True, "cpu")
    with pytest.raises(ValueError, match="share memory"):
        _native.prims_sort_host(a, "int64", b, "int64", "cpu")
    with pytest.raises(ValueError, match="share memory"):
        _native.prims_transpose_host(a.view(np.uint8), b.view(np.uint8), 8, 1, 4, 4, "cpu")
    assert list(a) == list(range(16))[::-1]


def test_an_array_another_thread_is_sorting_in_place_is_a_runtime_error():
    import threading

    x = np.random.default_rng(5).random(4_000_000)
    seen = []
    for _ in range(5):
        t = threading.Thread(target=prims.sort, args=(x,), kwargs={"inplace": True, "backend": "cpu"})
        t.start()
        while t.is_alive():
            try:
                prims.reduce(x, backend="cpu")
            except Exception as e:  # noqa: BLE001 - the kind is what is tested
                seen.append(e)
        t.join()
        x = np.random.default_rng(len(seen) + 6).random(4_000_000)
        if seen:
            break
    assert seen, "no call met the sort under way; make the array larger"
    assert all(isinstance(e, RuntimeError) and "in use by another call" in str(e) for e in seen), seen


def test_arguments_of_the_wrong_kind_name_themselves():
    x = np.arange(5, dtype=np.float64)
    for call, words in (
        (lambda: prims.scan(x, 3), "op must be a string"),
        (lambda: prims.reduce(x, None), "op must be a string"),
        (lambda: prims.sort(x, backend=None), "backend must be a string"),
        (lambda: prims.transpose(np.zeros((3, 5), object)), "holds Python objects"),
    ):
        with pytest.raises(TypeError, match=words):
            call()
