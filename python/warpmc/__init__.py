"""warpmc: Monte Carlo on NVIDIA GPUs, with a CPU backend that gives the same
answers bit for bit.

- :mod:`warpmc.potts`: q-state Potts and Ising lattices: temperature sweeps
  with error bars (:func:`warpmc.potts.run`, the numbers of
  ``warpmc potts run --json``) and single chains
  (:class:`warpmc.potts.Simulation`).
- :mod:`warpmc.flame`: flam3 fractal flames rendered into numpy arrays.
- :mod:`warpmc.prims`: sort, scan, reduce and transpose on numpy arrays, and
  in place on CuPy arrays and PyTorch CUDA tensors.

CUDA is loaded when first needed: without a GPU (or without NVRTC) every
call with ``backend="auto"`` runs on the CPU cores.

>>> import warpmc
>>> warpmc.__version__ == warpmc._native.__version__
True
>>> warpmc.devices()[-1]["backend"]
'cpu'
"""

from __future__ import annotations

import json
from typing import Any

from . import _native
from ._native import WarpmcError

__version__: str = _native.__version__


def devices() -> list[dict[str, Any]]:
    """What this machine offers, as ``warpmc devices`` reports it.

    One dict per usable CUDA device (``backend`` ``"cuda"``, ``ordinal``,
    ``name``, ``compute_capability``, ``sm_count``, ``total_memory``, …,
    the ``driver`` and ``nvrtc`` versions and the kernels' ``target``), then
    one for the CPU (``backend`` ``"cpu"``, ``threads``, and ``cuda``: why
    CUDA cannot be used, or None).

    >>> import warpmc
    >>> cpu = warpmc.devices()[-1]
    >>> cpu["threads"] >= 1
    True
    """
    return json.loads(_native.devices_json())


def set_threads(threads: int) -> None:
    """Runs warpmc's CPU work on ``threads`` threads instead of one per
    core (what ``--threads`` does on the command line, and
    ``RAYON_NUM_THREADS`` in the environment). The threads are started
    once per process: call it before anything that computes; afterwards it
    is a RuntimeError.
    """
    import numbers

    if isinstance(threads, bool) or not isinstance(threads, numbers.Integral):
        raise TypeError(f"threads must be a whole number, not {threads!r}")
    if not 1 <= threads <= 4096:
        raise ValueError(f"threads = {threads}: give 1 to 4096")
    _native.set_threads(int(threads))


from . import flame, potts, prims  # noqa: E402  (they use the names above)

__all__ = ["__version__", "devices", "set_threads", "WarpmcError", "potts", "flame", "prims"]
