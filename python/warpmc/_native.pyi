# Types of warpmc's compiled module (python/src). Its functions are reached
# through warpmc.potts, warpmc.flame and warpmc.prims, which document them.

from typing import Any, Callable, Optional

import numpy as np
import numpy.typing as npt

__version__: str
commit: Optional[str]

class WarpmcError(RuntimeError):
    """A failure that is not the caller's input: no usable GPU, a driver or
    compiler error."""

def devices_json() -> str: ...
def set_threads(threads: int) -> None: ...

# warpmc.potts
def potts_run(
    options: str,
    checkpoint: Optional[str] = None,
    checkpoint_every: Optional[float] = None,
    force: bool = False,
    series: Optional[str] = None,
    progress: Optional[Callable[[int, int], object]] = None,
) -> list[str]: ...
def potts_resume(
    path: str,
    checkpoint: Optional[str] = None,
    checkpoint_every: Optional[float] = None,
    backend: Optional[str] = None,
    force: bool = False,
    series: Optional[str] = None,
    progress: Optional[Callable[[int, int], object]] = None,
) -> list[str]: ...
def potts_recorded(path: str) -> str: ...
def potts_exact(q: int, sizes: list[int], height: Optional[int], temps: str, coupling: float) -> list[str]: ...
def potts_too_short_to_alternate(config: str, temperature: float) -> bool: ...
def potts_analyze(series: Any, temperature: float, size: int, height: int, measure_every: int) -> str: ...

class Simulation:
    """A Potts lattice at a temperature on a backend, advanced one sweep at
    a time: one Markov chain, the same bits on the CPU and on a GPU.

    Without a seed, a fresh one is drawn from the operating system (``seed``
    tells it), so that simulations made alike are independent chains.

    One on the CPU may be used by any thread, and may come back from
    another process (pickled by ``multiprocessing``): calls from several
    threads take turns (a call waits, with the GIL released, while another
    thread's call runs; ``sweeps`` lets others in between its stretches of
    about 0.1 s, so a thread may watch ``energy()`` while another sweeps). One on a GPU
    belongs to the thread that made it: another thread that uses it gets a
    RuntimeError, and one dropped by another thread keeps its memory until
    the process ends; an unpickled one belongs to the thread that
    unpickled it. ``close()``, or a ``with`` block, frees it at once.
    Pickling or ``copy.deepcopy`` makes an independent copy that continues
    the same chain bit for bit."""

    def __init__(
        self,
        q: int,
        size: int,
        temp: float,
        seed: Optional[int] = None,
        backend: Optional[str] = "auto",
        *,
        height: Optional[int] = None,
        coupling: Optional[float] = 1.0,
        field: Optional[float] = 0.0,
        init: Optional[str] = "ordered",
        algorithm: Optional[str] = "metropolis",
    ) -> None: ...
    def __reduce__(self) -> tuple[Any, tuple[dict[str, Any]]]:
        """Pickling and copy.deepcopy: a copy that continues the same chain
        bit for bit."""
    @property
    def coupling(self) -> float: ...
    @property
    def field(self) -> float: ...
    def sweeps(self, n: int) -> "Simulation":
        """Runs `n` sweeps and returns the simulation (Ctrl-C stops between
        sweeps with KeyboardInterrupt, on the main thread; on the CPU, a
        call on another thread is stopped by ``close()`` with ValueError). A
        chain runs at most
        2**31 - 1 sweeps in all."""
    def energy(self) -> float:
        """Energy per site, H/N."""
    def magnetization(self) -> float:
        """The order parameter (q·N_max/N − 1)/(q − 1)."""
    @property
    def spins(self) -> npt.NDArray[np.uint8]:
        """The lattice, shape (height, size), values 0 … q − 1; assigning
        an integer array of that shape (not a masked one) loads it."""
    @spins.setter
    def spins(self, value: npt.ArrayLike) -> None: ...
    @property
    def temperature(self) -> float:
        """The temperature of the next sweeps; assigning one that q = 2
        Metropolis cannot mix at (as potts.run refuses) is a ValueError."""
    @temperature.setter
    def temperature(self, value: float) -> None: ...
    @property
    def q(self) -> int: ...
    @property
    def size(self) -> int: ...
    @property
    def height(self) -> int: ...
    @property
    def seed(self) -> int: ...
    @property
    def algorithm(self) -> str: ...
    @property
    def sweeps_done(self) -> int:
        """Sweeps done: the number of the next sweep. Assigning it, with the
        spins and seed of a saved simulation made anew alike, continues that
        chain exactly."""
    @sweeps_done.setter
    def sweeps_done(self, value: int) -> None: ...
    @property
    def backend(self) -> str:
        """"cpu" or "cuda", as the backend argument takes it."""
    @property
    def backend_description(self) -> str:
        """Where the chain runs, in words (CPU threads, or the GPU's kernel)."""
    def close(self) -> None:
        """Frees the lattice and its buffers (GPU memory included) now; the
        simulation is then closed, and using it raises ValueError."""
    def __enter__(self) -> "Simulation": ...
    def __exit__(self, *exc: object) -> bool: ...

# warpmc.flame
def flame_render(
    source: str,
    is_xml: bool,
    index: int,
    name: Optional[str],
    quality_scale: float,
    size_scale: float,
    seed: int,
    backend: str,
    bits: int,
    transparent: bool,
    early_clip: bool,
    pixel_aspect: float,
    palettes: Optional[str],
    strict: bool,
    time: Optional[float] = None,
    progress: Optional[Callable[[float], object]] = None,
) -> tuple[npt.NDArray[Any], list[str]]: ...
def flame_info(source: str, is_xml: bool, palettes: Optional[str], strict: bool) -> str: ...

# warpmc.prims: numpy arrays
def prims_sort_host(
    keys: np.ndarray, key_dtype: str, values: Optional[np.ndarray], value_dtype: Optional[str], backend: str
) -> None: ...
def prims_scan_host(x: np.ndarray, out: np.ndarray, dtype: str, op: str, inclusive: bool, backend: str) -> None: ...
def prims_reduce_host(x: np.ndarray, dtype: str, op: str, backend: str) -> Any: ...
def prims_transpose_host(
    x: np.ndarray, out: np.ndarray, itemsize: int, batch: int, rows: int, cols: int, backend: str
) -> None: ...

# warpmc.prims: GPU arrays as (address, elements, dtype)
Foreign = tuple[int, int, str]

def prims_sort_device(ordinal: int, keys: Foreign, values: Optional[Foreign]) -> None: ...
def prims_scan_device(ordinal: int, x: Foreign, out: Foreign, op: str, inclusive: bool) -> None: ...
def prims_reduce_device(ordinal: int, x: Foreign, out: Foreign, op: str) -> None: ...
def prims_transpose_device(
    ordinal: int, x: Foreign, out: Foreign, itemsize: int, batch: int, rows: int, cols: int
) -> None: ...

# Other libraries' GPU arrays
def dlpack_view(capsule: Any) -> tuple[int, list[int], Optional[list[int]], str, tuple[int, int]]: ...
def stream_handle(ordinal: int) -> int: ...
def wait_for_stream(ordinal: int, handle: int) -> None: ...
def pointer_device(address: int) -> int: ...
