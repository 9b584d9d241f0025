"""warpmc.prims on CuPy arrays and PyTorch CUDA tensors: zero-copy (the data
stays where it is: in-place sorts keep the input's address, views are
sorted inside their base), ordered with the libraries' streams, and equal
to the numpy reference. Skipped without a GPU."""

from __future__ import annotations

import numpy as np
import pytest

from warpmc import prims

from test_prims import NUMBERS, SIZES, assert_sums_close, random_array, reference_sort


@pytest.fixture
def cupy(gpu):
    return pytest.importorskip("cupy")


@pytest.fixture
def torch(gpu):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no CUDA device")
    return torch


class InterfaceOnly:
    """A GPU array seen only through __cuda_array_interface__ (as Numba's
    and other libraries' arrays are)."""

    def __init__(self, array):
        self.array = array

    @property
    def __cuda_array_interface__(self):
        return self.array.__cuda_array_interface__


@pytest.mark.parametrize("dtype", NUMBERS)
@pytest.mark.parametrize("n", SIZES)
def test_cupy_sort_in_place_keeps_the_memory(cupy, dtype, n):
    host = random_array(np.random.default_rng(n), n, dtype)
    x = cupy.asarray(host)
    address = x.data.ptr
    y = prims.sort(x, inplace=True)
    assert y is x and x.data.ptr == address
    assert cupy.asnumpy(x).tobytes() == reference_sort(host).tobytes()


def test_cupy_sort_of_a_view_sorts_inside_its_base(cupy):
    host = np.random.default_rng(0).integers(0, 1 << 30, 10_000).astype(np.uint32)
    base = cupy.asarray(host)
    view = base[100:9_000]
    assert view.data.ptr == base.data.ptr + 400
    prims.sort(view, inplace=True)
    got = cupy.asnumpy(base)
    assert np.array_equal(got[:100], host[:100]) and np.array_equal(got[9_000:], host[9_000:])
    assert np.array_equal(got[100:9_000], np.sort(host[100:9_000]))


def test_cupy_views_at_any_offset_give_the_cpus_results(cupy):
    # x[1:] starts 4 bytes into its allocation; the kernels read 16 bytes
    # at a time, so such a view goes through an aligned copy.
    host = np.random.default_rng(2).integers(-8, 8, 100_001).astype(np.float32)
    base = cupy.asarray(host)
    for offset in (1, 3, 17):
        view = base[offset:]
        assert view.data.ptr % 16 != 0
        for op in ("sum", "min", "max"):
            assert float(prims.reduce(view, op)) == float(prims.reduce(host[offset:], op)), (offset, op)
        assert cupy.asnumpy(prims.scan(view)).tobytes() == prims.scan(host[offset:]).tobytes()
    keys = cupy.asarray(host.view(np.uint32))
    prims.sort(keys[5:], inplace=True)
    got = cupy.asnumpy(keys)
    assert np.array_equal(got[:5], host.view(np.uint32)[:5])
    assert np.array_equal(got[5:], np.sort(host.view(np.uint32)[5:]))
    # The context is still sound afterwards.
    assert float(cupy.ones(4).sum()) == 4.0


def test_cupy_results_are_cupy_arrays_on_the_inputs_device(cupy):
    rng = np.random.default_rng(1)
    for dtype in NUMBERS:
        host = random_array(rng, 70_001, dtype, special=False)
        if host.dtype.kind == "f":
            host = rng.standard_normal(70_001).astype(dtype)
        x = cupy.asarray(host)
        before = cupy.asnumpy(x)
        s = prims.sort(x)
        assert isinstance(s, cupy.ndarray) and s.data.ptr != x.data.ptr
        assert np.array_equal(cupy.asnumpy(x), before), "a sort that is not in place left its input alone"
        assert cupy.asnumpy(s).tobytes() == reference_sort(host).tobytes()
        for op in ("min", "max"):
            assert cupy.asnumpy(prims.scan(x, op)).tobytes() == prims.scan(host, op).tobytes()
            r = prims.reduce(x, op)
            assert isinstance(r, cupy.ndarray) and r.shape == () and r.dtype == x.dtype
            assert r.item() == prims.reduce(host, op)
        if host.dtype.kind != "f":
            assert cupy.asnumpy(prims.scan(x)).tobytes() == prims.scan(host).tobytes()
            assert cupy.asnumpy(prims.scan(x, inclusive=False)).tobytes() == prims.scan(host, inclusive=False).tobytes()
            assert prims.reduce(x).item() == prims.reduce(host)
        else:
            scale = np.cumsum(np.abs(host), dtype=np.float64)
            assert_sums_close(cupy.asnumpy(prims.scan(x)), np.cumsum(host, dtype=np.float64), scale)


def test_cupy_sort_pairs_is_stable(cupy):
    keys = np.random.default_rng(2).integers(0, 50, 100_000).astype(np.int64)
    values = np.arange(100_000, dtype=np.float32)
    k, v = cupy.asarray(keys), cupy.asarray(values)
    out = prims.sort(k, v, inplace=True)
    assert out[0] is k and out[1] is v
    order = np.argsort(keys, kind="stable")
    assert np.array_equal(cupy.asnumpy(k), keys[order]) and np.array_equal(cupy.asnumpy(v), values[order])


@pytest.mark.parametrize("dtype", ["uint8", "int16", "float32", "float64", "complex128"])
@pytest.mark.parametrize("shape", [(1, 1), (1, 37), (37, 1), (33, 65), (1024, 768), (0, 5), (3, 17, 9), (4, 32, 32)])
def test_cupy_transpose_equals_numpys(cupy, dtype, shape):
    rng = np.random.default_rng(sum(shape))
    host = rng.integers(0, 250, shape).astype(dtype)
    t = prims.transpose(cupy.asarray(host))
    assert isinstance(t, cupy.ndarray) and t.flags.c_contiguous
    assert cupy.asnumpy(t).tobytes() == np.ascontiguousarray(np.swapaxes(host, -1, -2)).tobytes()


def test_cupy_work_on_another_stream_is_waited_for(cupy):
    n = 1 << 24
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        # Queued on `stream`, likely still running when the sort starts.
        x = cupy.arange(n, dtype=cupy.float32)[::-1] * 2
        x = cupy.sqrt(x * x) - 1
        prims.sort(x, inplace=True)
        total = prims.reduce(cupy.ones(n, dtype=cupy.uint32))
    assert cupy.asnumpy(x[:3]).tolist() == [-1.0, 1.0, 3.0]
    assert int(total) == n


def test_interface_only_arrays_work_in_place_and_give_cupy_results(cupy):
    host = np.random.default_rng(3).standard_normal(12_345).astype(np.float64)
    x = cupy.asarray(host)
    wrapped = InterfaceOnly(x)
    assert prims.sort(wrapped, inplace=True) is wrapped
    assert np.array_equal(cupy.asnumpy(x), np.sort(host))
    s = prims.scan(InterfaceOnly(x), "max")
    assert isinstance(s, cupy.ndarray) and np.array_equal(cupy.asnumpy(s), np.maximum.accumulate(np.sort(host)))


def test_torch_sort_in_place_keeps_the_memory(torch):
    for dtype in (torch.int32, torch.int64, torch.float32, torch.float64):
        x = (torch.randn(1_000_003, device="cuda") * 1000).to(dtype)
        expected = torch.sort(x.cpu()).values.numpy()
        address = x.data_ptr()
        y = prims.sort(x, inplace=True)
        assert y is x and x.data_ptr() == address
        assert np.array_equal(x.cpu().numpy(), expected)


def test_torch_results_are_tensors_on_the_inputs_device(torch):
    x = torch.randint(-(1 << 30), 1 << 30, (300_001,), device="cuda", dtype=torch.int64)
    host = x.cpu().numpy()
    s = prims.sort(x)
    assert isinstance(s, torch.Tensor) and s.device == x.device and s.data_ptr() != x.data_ptr()
    assert np.array_equal(s.cpu().numpy(), np.sort(host))
    assert np.array_equal(prims.scan(x).cpu().numpy(), np.cumsum(host))
    r = prims.reduce(x, "max")
    assert isinstance(r, torch.Tensor) and r.dim() == 0 and r.item() == host.max()
    m = torch.arange(5 * 33 * 70, device="cuda", dtype=torch.float32).reshape(5, 33, 70)
    t = prims.transpose(m)
    assert t.shape == (5, 70, 33) and t.is_contiguous()
    assert torch.equal(t, m.transpose(1, 2).contiguous())
    k = torch.randint(0, 10, (50_000,), device="cuda", dtype=torch.int32)
    v = torch.arange(50_000, device="cuda", dtype=torch.float64)
    sk, sv = prims.sort(k, v)
    order = np.argsort(k.cpu().numpy(), kind="stable")
    assert np.array_equal(sk.cpu().numpy(), k.cpu().numpy()[order])
    assert np.array_equal(sv.cpu().numpy(), v.cpu().numpy()[order])


def test_torch_work_on_a_side_stream_is_waited_for(torch):
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        x = torch.ones(1 << 24, device="cuda", dtype=torch.float32)
        x = (x * 3).sqrt() ** 2  # queued on `side`
        total = prims.reduce(x.to(torch.float64))
        y = torch.arange(1 << 22, device="cuda", dtype=torch.int64).flip(0)
        prims.sort(y, inplace=True)
    torch.cuda.synchronize()
    assert abs(total.item() - 3 * (1 << 24)) < 1e-3 * (1 << 24)
    assert torch.equal(y, torch.arange(1 << 22, device="cuda", dtype=torch.int64))


def test_gpu_arrays_refuse_what_cannot_work(cupy, torch):
    x = cupy.arange(10, dtype=cupy.int32)
    with pytest.raises(ValueError, match="backend"):
        prims.sort(x, backend="cpu")
    with pytest.raises(ValueError, match="C-contiguous"):
        prims.sort(x[::2], inplace=True)
    with pytest.raises(TypeError, match="float16"):
        prims.sort(cupy.zeros(4, dtype=cupy.float16))
    with pytest.raises(TypeError, match="values on the GPU"):
        prims.sort(x, np.arange(10, dtype=np.int32))
    assert prims.reduce(cupy.zeros(0, dtype=cupy.float32), "min").item() == np.inf
    assert prims.sort(cupy.zeros(0, dtype=cupy.uint64)).size == 0
    t = torch.zeros(4, device="cuda", requires_grad=True)
    with pytest.raises((BufferError, RuntimeError), match="gradient"):
        prims.sort(t)  # PyTorch will not lend a tensor that requires grad
    # Non-contiguous inputs of read-only operations are made contiguous on
    # the GPU.
    assert np.array_equal(cupy.asnumpy(prims.scan(x[::2])), np.cumsum(np.arange(0, 10, 2)))


def test_torch_bfloat16_is_transposed_as_two_byte_elements_and_refused_elsewhere(torch):
    x = torch.randn(3, 33, 65, device="cuda").to(torch.bfloat16)
    t = prims.transpose(x)
    assert t.dtype == torch.bfloat16 and t.shape == (3, 65, 33)
    assert torch.equal(t.cpu(), x.transpose(-1, -2).contiguous().cpu())
    with pytest.raises(TypeError, match="dtype bfloat16 is not supported"):
        prims.sort(x[0, 0], inplace=True)
