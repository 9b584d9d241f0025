"""Device-level primitives: sort, scan, reduce and transpose.

numpy arrays are worked on by the CPU backend in their own memory (a
C-contiguous, aligned array is not copied: a reduce of an array that fills
half of memory runs; sorting keys with values holds the pairs, and the
stable sort's buffer of as many, beside them), or copied to a GPU and back
with ``backend="cuda"``; the results are numpy arrays. The work runs with
the GIL released: do not change an array from another thread while a call
works on it. A second warpmc call given the same C-contiguous array
meanwhile is refused with "already borrowed", but one given a view of it,
or an array it copies first (``sort`` without ``inplace``, a strided or
byte-swapped one), reads whatever the first call has left in it, as numpy
would.

GPU arrays (CuPy arrays, PyTorch CUDA tensors, and any object with
``__dlpack__`` on a CUDA device or with ``__cuda_array_interface__``) are
worked on where they are, with no copy through the host: warpmc borrows
their memory, orders its work after the work their library queued
(DLPack's stream argument, or the interface's ``stream``), and has
finished when the call returns. Results are arrays of the input's library
(PyTorch tensors for tensors; CuPy arrays otherwise), allocated by that
library on the input's device.

Sort, scan and reduce take ``int32``, ``uint32``, ``int64``, ``uint64``,
``float32`` and ``float64``; transpose any element of 1, 2, 4, 8 or 16
bytes (``bfloat16`` GPU tensors included). Integer sums wrap. Results equal
the CPU's bit for bit, except floating-point sums, whose rounding depends
on the order of the additions. Of zeros of both signs, min gives -0 and
max +0 (IEEE 754-2008's minNum and maxNum leave it open, and numpy's min
gives either).

Masked arrays are refused (a TypeError): their masked elements would be
taken as data. Sort and scan take 1-D arrays, transpose 2-D or 3-D ones;
reduce takes any shape, a 0-d array included.

>>> import numpy as np
>>> from warpmc import prims
>>> prims.sort(np.array([3, 1, 2], dtype=np.uint32))
array([1, 2, 3], dtype=uint32)
>>> prims.scan(np.array([1, 2, 3, 4], dtype=np.int64))
array([ 1,  3,  6, 10])
>>> int(prims.reduce(np.arange(10, dtype=np.int32), "max"))
9
>>> prims.transpose(np.arange(6, dtype=np.uint16).reshape(2, 3))
array([[0, 3],
       [1, 4],
       [2, 5]], dtype=uint16)

On a GPU (with CuPy), the same calls work in place of the data:

>>> import cupy  # doctest: +SKIP
>>> x = cupy.random.rand(1 << 20, dtype=cupy.float32)  # doctest: +SKIP
>>> prims.sort(x, inplace=True) is x  # doctest: +SKIP
True
"""

from __future__ import annotations

import math
from typing import Any, Optional, Union, overload

import numpy as np

from . import _native

__all__ = ["sort", "scan", "reduce", "transpose"]

Array = Any
"""A numpy array, a CuPy array, a PyTorch tensor or another GPU array."""

_NUMBERS = ("int32", "uint32", "int64", "uint64", "float32", "float64")
_DLPACK_CUDA = 2
_DLPACK_CUDA_MANAGED = 13


def _library(x: Any) -> str:
    return type(x).__module__.split(".")[0]


def _on_gpu(x: Any) -> bool:
    """Whether `x` is an array in GPU memory."""
    if isinstance(x, np.ndarray):
        return False
    if hasattr(x, "__dlpack_device__"):
        kind, _ = x.__dlpack_device__()
        if kind in (_DLPACK_CUDA, _DLPACK_CUDA_MANAGED):
            return True
    return hasattr(x, "__cuda_array_interface__")


class _Lent:
    """A GPU array lent to warpmc for one call: where its elements are, how
    many, their type and device, and what keeps the loan valid."""

    def __init__(self, x: Any, writable: bool) -> None:
        self.array = x
        self.capsule = None
        if hasattr(x, "__dlpack_device__") and x.__dlpack_device__()[0] in (_DLPACK_CUDA, _DLPACK_CUDA_MANAGED):
            self.ordinal = int(x.__dlpack_device__()[1])
            # The producer makes warpmc's stream wait for its own work on x.
            self.capsule = x.__dlpack__(stream=_native.stream_handle(self.ordinal))
            self.address, shape, strides, self.dtype, _ = _native.dlpack_view(self.capsule)
            self.shape = tuple(int(n) for n in shape)
            itemsize = 1
            readonly = False
        else:
            cai = x.__cuda_array_interface__
            self.address, readonly = int(cai["data"][0]), bool(cai["data"][1])
            self.shape = tuple(int(n) for n in cai["shape"])
            dtype = np.dtype(cai["typestr"])
            if not dtype.isnative:
                raise ValueError(f"{dtype.str}: elements must be in the machine's byte order")
            self.dtype = dtype.name
            strides = cai.get("strides")
            itemsize = dtype.itemsize
            if cai.get("mask") is not None:
                raise ValueError("masked GPU arrays are not supported")
            self.ordinal = _native.pointer_device(self.address) if self.size else 0
            stream = cai.get("stream") if int(cai.get("version", 0)) >= 3 else None
            if stream is not None and self.size:
                _native.wait_for_stream(self.ordinal, int(stream))
        if strides is not None and not _c_order(self.shape, tuple(strides), itemsize):
            raise ValueError("the GPU array must be C-contiguous")
        if writable and readonly:
            raise ValueError("the GPU array is read-only")

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def native(self) -> tuple[int, int, str]:
        """(address, elements, dtype) as the native module takes them."""
        return (self.address, self.size, self.dtype)


def _c_order(shape: tuple[int, ...], strides: tuple[int, ...], itemsize: int) -> bool:
    """Whether `strides` (in units of `itemsize`) are C order for `shape`
    (an array without elements always is, whatever strides it reports)."""
    if 0 in shape:
        return True
    expected = itemsize
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1 and s != expected:
            return False
        expected *= n
    return True


def _contiguous_gpu(x: Any) -> Any:
    """`x` in C order, copied on its device when it is not."""
    lib = _library(x)
    if lib == "torch":
        return x.contiguous()
    if lib == "cupy":
        import cupy

        return cupy.ascontiguousarray(x)
    return x


def _empty_gpu(like: Any, ordinal: int, shape: tuple[int, ...], dtype: str) -> Any:
    """A new array of `like`'s library (CuPy for other GPU arrays) on GPU
    `ordinal`."""
    if _library(like) == "torch":
        import torch

        return torch.empty(shape, dtype=getattr(torch, dtype), device=like.device)
    cupy = _cupy(like, "results")
    if dtype == "bfloat16":
        raise TypeError(f"results for {type(like).__name__} arrays are CuPy arrays, and CuPy has no bfloat16")
    with cupy.cuda.Device(ordinal):
        return cupy.empty(shape, dtype=dtype)


def _copy_gpu(x: Any) -> Any:
    """A copy of `x` on its device, in C order."""
    lib = _library(x)
    if lib == "torch":
        import torch

        return x.clone(memory_format=torch.contiguous_format)
    cupy = _cupy(x, "copies")
    return cupy.array(x, copy=True, order="C")


def _cupy(like: Any, what: str) -> Any:
    """The cupy module, which makes the new GPU arrays for inputs of
    libraries other than PyTorch: a TypeError naming `like`'s type when it
    is not installed."""
    try:
        import cupy
    except ImportError as e:
        raise TypeError(f"{what} of {type(like).__name__} arrays are CuPy arrays, and CuPy is not installed") from e
    return cupy


def _gpu_backend(backend: str) -> None:
    if backend not in ("auto", "cuda", "gpu"):
        raise ValueError(f"backend '{backend}': a GPU array is worked on by its GPU (backend 'auto' or 'cuda')")


def _host(x: Any) -> np.ndarray:
    """`x` as a C-ordered, aligned numpy array in the machine's byte order,
    of its own shape (0-d included: np.ascontiguousarray would make that
    1-D)."""
    _not_masked(x)
    a = np.asarray(x)
    if not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))
    if not (a.flags.c_contiguous and a.flags.aligned):
        a = np.array(a, order="C", copy=True)
    return a


def _not_masked(x: Any) -> None:
    """A TypeError for a masked array, whose mask np.asarray would drop."""
    if isinstance(x, np.ma.MaskedArray):
        raise TypeError(
            "masked arrays are not supported (their masked elements would be taken as data): "
            "give x.filled(value) or x.compressed()"
        )


def _flag(name: str, value: Any) -> bool:
    """A True/False argument: a TypeError for anything else (a string
    such as "no" would be true)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, not {type(value).__name__}")
    return bool(value)


def _word(name: str, value: Any, words: str) -> str:
    """A string argument: a TypeError naming it for anything else."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, {words}, not {type(value).__name__}")
    return value


def _number(dtype: str) -> None:
    if dtype not in _NUMBERS:
        raise TypeError(f"dtype {dtype} is not supported: sort, scan and reduce take {', '.join(_NUMBERS)}")


def _one_dimensional(shape: tuple[int, ...], what: str) -> None:
    if len(shape) != 1:
        raise ValueError(f"{what} takes a 1-D array, not one of shape {shape}")


@overload
def sort(keys: Array, values: None = None, *, inplace: bool = False, backend: str = "auto") -> Array: ...


@overload
def sort(keys: Array, values: Array, *, inplace: bool = False, backend: str = "auto") -> tuple[Array, Array]: ...


def sort(
    keys: Array, values: Optional[Array] = None, *, inplace: bool = False, backend: str = "auto"
) -> Union[Array, tuple[Array, Array]]:
    """Sorts 1-D ``keys`` into ascending order (radix sort; floats in IEEE
    754's total order, -NaN < -inf < … < -0 < +0 < … < inf < NaN). With
    ``values`` (the same length), a stable sort by key that moves the
    values with their keys; returns (keys, values).

    A NaN's sign bit decides its end: the NaN that x86 arithmetic makes
    (``np.zeros(1) / 0``, ``inf - inf``) is negative and sorts first, where
    ``np.sort`` puts every NaN last (``np.nan`` itself is positive).

    ``inplace=True`` sorts the given arrays themselves (writable; a numpy
    array that is strided, unaligned or in the other byte order is sorted
    in a copy and copied back; a GPU array must be C-contiguous) and
    returns them; otherwise sorted copies are returned and the inputs are
    left alone.
    """
    backend = _word("backend", backend, "'auto', 'cpu' or 'cuda'")
    inplace = _flag("inplace", inplace)
    if _on_gpu(keys):
        _gpu_backend(backend)
        if values is not None and not _on_gpu(values):
            raise TypeError("keys on a GPU need values on the GPU too")
        if not inplace:
            keys = _copy_gpu(keys)
            values = None if values is None else _copy_gpu(values)
        k = _Lent(keys, writable=True)
        _number(k.dtype)
        _one_dimensional(k.shape, "sort")
        v = None if values is None else _Lent(values, writable=True)
        if v is not None:
            _number(v.dtype)
            if v.shape != k.shape or v.ordinal != k.ordinal:
                raise ValueError(f"values of shape {v.shape} on GPU {v.ordinal} for keys of {k.shape} on GPU {k.ordinal}")
        if k.size:
            _native.prims_sort_device(k.ordinal, k.native(), None if v is None else v.native())
        return keys if values is None else (keys, values)
    if values is not None and _on_gpu(values):
        raise TypeError("keys on the host need values on the host too")
    k_host = _inplace_host(keys) if inplace else _host(keys).copy()
    _number(k_host.dtype.name)
    _one_dimensional(k_host.shape, "sort")
    v_host = None
    if values is not None:
        v_host = _inplace_host(values) if inplace else _host(values).copy()
        _number(v_host.dtype.name)
        if v_host.shape != k_host.shape:
            raise ValueError(f"values of shape {v_host.shape} for keys of shape {k_host.shape}")
        if inplace and np.shares_memory(k_host, v_host):
            raise ValueError("keys and values share memory: sorting them in place would mix them up")
    # An array the native sort cannot take as it is (strided, unaligned or
    # in the other byte order) is sorted in a copy, then copied back.
    k_work = _workable(k_host)
    v_work = None if v_host is None else _workable(v_host)
    _native.prims_sort_host(
        k_work, k_work.dtype.name, v_work, None if v_work is None else v_work.dtype.name, backend
    )
    for work, given in ((k_work, k_host), (v_work, v_host)):
        if work is not given:
            given[...] = work
    return k_host if v_host is None else (k_host, v_host)


def _workable(x: np.ndarray) -> np.ndarray:
    """`x` itself where the native code can work in it (C-contiguous,
    aligned, in the machine's byte order), else a copy that is."""
    if x.flags.c_contiguous and x.flags.aligned and x.dtype.isnative:
        return x
    # A copy always: ascontiguousarray would return an unaligned array as
    # it is.
    return np.array(x, dtype=x.dtype.newbyteorder("="), order="C", copy=True)


def _inplace_host(x: Any) -> np.ndarray:
    _not_masked(x)
    if not isinstance(x, np.ndarray):
        raise TypeError(f"inplace=True needs a numpy array, not {type(x).__name__}")
    if not x.flags.writeable:
        raise ValueError("inplace=True needs a writable array; this one is read-only")
    return x


def scan(x: Array, op: str = "sum", *, inclusive: bool = True, backend: str = "auto") -> Array:
    """The prefix ``op`` (``"sum"``, ``"min"`` or ``"max"``) of a 1-D array:
    ``out[i] = x[0] op … op x[i]`` (inclusive), or with ``out[0]`` the
    identity and ``x[i]`` left out (``inclusive=False``).

    For floats, ``"min"`` and ``"max"`` skip NaN (IEEE 754 minNum and
    maxNum, as numpy's ``nanmin``/``nanmax``, not ``min``/``max``): where
    every element so far is NaN the result is the identity (+inf for min,
    -inf for max). ``"sum"`` carries NaN on, and starts from its identity
    +0: where every element so far is -0.0 the sum is +0.0 (numpy's
    ``cumsum`` keeps -0.0 there). On the CPU a floating-point sum adds the
    elements in order, as ``np.cumsum`` does, to the same bits but for
    that zero; on the GPU it adds in a tree, with another rounding.
    """
    op = _word("op", op, "'sum', 'min' or 'max'")
    backend = _word("backend", backend, "'auto', 'cpu' or 'cuda'")
    inclusive = _flag("inclusive", inclusive)
    if _on_gpu(x):
        _gpu_backend(backend)
        src = _Lent(_contiguous_gpu(x), writable=False)
        _number(src.dtype)
        _one_dimensional(src.shape, "scan")
        out = _empty_gpu(x, src.ordinal, src.shape, src.dtype)
        if src.size:
            dst = _Lent(out, writable=True)
            _native.prims_scan_device(src.ordinal, src.native(), dst.native(), op, inclusive)
        return out
    a = _host(x)
    _number(a.dtype.name)
    _one_dimensional(a.shape, "scan")
    out = np.empty_like(a)
    _native.prims_scan_host(a, out, a.dtype.name, op, inclusive, backend)
    return out


def reduce(x: Array, op: str = "sum", *, backend: str = "auto") -> Array:
    """``x[0] op x[1] op …`` over every element (``"sum"``, ``"min"`` or
    ``"max"``; the identity for an empty array): a numpy scalar for a numpy
    array, a 0-d array of the input's library for a GPU array (the value
    stays on the GPU). NaN as in :func:`scan`: min and max skip it (all
    NaN gives the identity), sum carries it. Among zeros of both signs, min
    gives -0 and max +0 (numpy's may give either). A floating-point sum on
    the CPU adds pairwise, as numpy's does (its error grows with the
    logarithm of the length), but in blocks of its own, so its last bits
    may differ from ``np.sum``'s; on the GPU it adds in a tree, with
    another rounding. A sum of zeros that are all -0.0 gives +0.0, as in
    :func:`scan` (numpy's gives -0.0). Integer sums wrap in the input's type (an int32 sum past
    2**31 - 1 comes out negative; numpy's ``.sum()`` widens to int64):
    give int64 for large sums.
    """
    op = _word("op", op, "'sum', 'min' or 'max'")
    backend = _word("backend", backend, "'auto', 'cpu' or 'cuda'")
    if _on_gpu(x):
        _gpu_backend(backend)
        src = _Lent(_contiguous_gpu(x), writable=False)
        _number(src.dtype)
        out = _empty_gpu(x, src.ordinal, (), src.dtype)
        dst = _Lent(out, writable=True)
        if src.size:
            _native.prims_reduce_device(src.ordinal, src.native(), dst.native(), op)
        else:
            out[...] = _native.prims_reduce_host(np.empty(0, dtype=src.dtype), src.dtype, op, "cpu")
        return out
    a = _host(x).reshape(-1)
    _number(a.dtype.name)
    return a.dtype.type(_native.prims_reduce_host(a, a.dtype.name, op, backend))


def transpose(x: Array, *, backend: str = "auto") -> Array:
    """The transpose of a 2-D array (rows, cols) → (cols, rows), or of each
    matrix of a 3-D array (batch, rows, cols) → (batch, cols, rows): a new
    array in C order.
    """
    backend = _word("backend", backend, "'auto', 'cpu' or 'cuda'")
    if _on_gpu(x):
        _gpu_backend(backend)
        src = _Lent(_contiguous_gpu(x), writable=False)
        batch, rows, cols = _matrices(src.shape)
        shape = src.shape[:-2] + (cols, rows)
        out = _empty_gpu(x, src.ordinal, shape, src.dtype)
        if src.size:
            dst = _Lent(out, writable=True)
            itemsize = _itemsize(src.dtype)
            _native.prims_transpose_device(src.ordinal, src.native(), dst.native(), itemsize, batch, rows, cols)
        return out
    a = _host(x)
    if a.dtype.hasobject:
        # Python objects are references: moving their bytes would not
        # count the references.
        raise TypeError(f"transpose moves plain data; an array of dtype {a.dtype} holds Python objects")
    batch, rows, cols = _matrices(a.shape)
    out = np.empty(a.shape[:-2] + (cols, rows), dtype=a.dtype)
    _native.prims_transpose_host(
        a.reshape(-1).view(np.uint8),
        out.reshape(-1).view(np.uint8),
        a.dtype.itemsize,
        batch,
        rows,
        cols,
        backend,
    )
    return out


def _itemsize(dtype: str) -> int:
    """Bytes per element of a GPU array's dtype (bfloat16, which numpy
    lacks, included)."""
    return 2 if dtype == "bfloat16" else np.dtype(dtype).itemsize


def _matrices(shape: tuple[int, ...]) -> tuple[int, int, int]:
    """(batch, rows, cols) of a 2-D or 3-D shape."""
    if len(shape) == 2:
        return 1, shape[0], shape[1]
    if len(shape) == 3:
        return shape[0], shape[1], shape[2]
    raise ValueError(f"transpose takes a 2-D or 3-D array, not one of shape {shape}")
