"""q-state Potts and Ising lattices (q = 2 is the Ising model at T_Ising = 2T).

- :func:`run`: a temperature sweep with error bars, the protocol of Ferrero,
  De Francesco, Wolovick and Cannas (2012). Its results are the objects
  ``warpmc potts run --json`` prints for the same arguments, bit for bit.
- :func:`resume`: continues a run whose state :func:`run` saved in a
  checkpoint file.
- :func:`dataframe`: those results as a pandas DataFrame.
- :class:`Simulation`: one lattice and one Markov chain, sweep by sweep.
- :func:`exact`: the exact energy and specific heat of finite tori, which
  a run on the same torus must reproduce within its error bars.
- :func:`analyze`: the error analysis of :func:`run` applied to measurement
  series (a ``series`` file's, or two runs' together).

>>> from warpmc import potts
>>> rows = potts.run(q=2, size=16, temps=[0.8, 3.0], therm=200, sweeps=400, backend="cpu")
>>> [round(r["temperature"], 1) for r in rows]
[0.8, 3.0]
>>> rows[0]["magnetization"] > 0.9 > rows[1]["magnetization"]
True
"""

from __future__ import annotations

import copy
import json
import math
import numbers
import os
import sys
import warnings
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING, Any, Callable, Union

from . import _native
from ._numbers import as_float, shown

if TYPE_CHECKING:
    import pandas

Simulation = _native.Simulation

__all__ = ["run", "rerun", "resume", "dataframe", "Simulation", "exact", "analyze"]


def _simulation_from_state(state: dict[str, Any]) -> Simulation:
    """A Simulation made again from what ``Simulation.__reduce__`` keeps
    (pickling, ``copy.deepcopy``): the same chain, continued bit for bit."""
    sim = Simulation(state["q"], state["size"], state["temp"], seed=state["seed"], backend=state["backend"],
                     height=state["height"], coupling=state["coupling"], field=state["field"],
                     algorithm=state["algorithm"])
    sim.spins = state["spins"]
    sim.sweeps_done = state["sweeps_done"]
    return sim

Temperatures = Union[float, str, Sequence[float]]
Sizes = Union[int, Sequence[int]]


def _plain(key: str, value: Any) -> Any:
    """A keyword argument's value as JSON: numbers, strings, booleans and
    lists of them (numpy scalars and arrays included)."""
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        value = value.tolist()
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, numbers.Integral) and key not in _REAL_KEYS:
        v = int(value)
        if not -(2**63) <= v < 2**64:
            raise ValueError(f"{key} = {shown(v)}: out of range (warpmc's whole numbers run from -2^63 to 2^64 - 1)")
        return v
    if isinstance(value, numbers.Real):
        value = as_float(key, value)
        if not math.isfinite(value):
            raise ValueError(f"{key}: {value} is not a finite number")
        return value
    if isinstance(value, (Mapping, AbstractSet)):
        # Their iteration gives keys, or no order: never what a list means.
        raise TypeError(f"{key}: a {type(value).__name__} is not a list; give the values as a list")
    if isinstance(value, (bytes, bytearray, memoryview)):
        # Their iteration gives byte values: b"1.0" would be [49, 46, 48].
        raise TypeError(f"{key}: {type(value).__name__} is not a number, string or list; decode it first")
    if isinstance(value, Iterable):
        return [_plain(key, v) for v in value]
    raise TypeError(f"{key}: {type(value).__name__} is not a number, string, boolean or list")


# The kind of value each key of run() takes: a wrong kind is a TypeError
# naming the argument, before the value's own checks (ValueError).
_WHOLE = ("q", "therm", "sweeps", "measure_every", "samples", "seed", "height", "exchange_every")
_WORDS = {
    "init": "'ordered' or 'random'",
    "backend": "'auto', 'cpu' or 'cuda'",
    "algorithm": "'metropolis', 'heat-bath', 'swendsen-wang' or 'wolff'",
}
_FLAGS = ("tempering", "continue")
_REALS = ("coupling", "field")
# Keys whose values are real numbers: a whole number given for one is a
# float, however large (10**20 is a temperature like 1e20).
_REAL_KEYS = (*_REALS, "temp", "temps")


def _is_bool(value: Any) -> bool:
    """Python's bool or numpy's."""
    return isinstance(value, bool) or (type(value).__module__ == "numpy" and type(value).__name__ in ("bool_", "bool"))


def _is_whole(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not _is_bool(value)


def _item(value: Any) -> Any:
    """A 0-d numpy array as its number; anything else as it is."""
    return value.item() if getattr(value, "ndim", None) == 0 and hasattr(value, "item") else value


def _check_kinds(options: dict[str, Any]) -> None:
    """A TypeError for an argument of the wrong kind (a string for q, a
    number for init, …), in Python's words. A size or temperature list
    given as any iterable (a range, a generator) is made a list here,
    once."""
    for key in list(options):
        value = _item(options[key])
        if value is None:
            continue
        name = "continue_" if key == "continue" else key
        kind = type(value).__name__
        if key in _WHOLE and not _is_whole(value):
            raise TypeError(f"{name} must be a whole number (int), not {kind}")
        if key == "size" and not isinstance(value, (bytes, bytearray, memoryview, Mapping, AbstractSet)):
            # (Bytes, dicts and sets get _plain's own words.)
            many = isinstance(value, Iterable) and not isinstance(value, str)
            sizes = [_item(v) for v in value] if many else [value]
            if not all(_is_whole(v) for v in sizes):
                raise TypeError(f"size must be a whole number or a list of them, not {value!r}")
            options[key] = sizes if many else value
        if key == "temps" and not isinstance(value, (str, bytes, bytearray, memoryview, Mapping, AbstractSet)):
            # A single number is a list of one by now; an array is its list.
            items = value.tolist() if hasattr(value, "tolist") else value
            listed = [_item(v) for v in items] if isinstance(items, Iterable) else [items]
            if not all(isinstance(v, numbers.Real) and not _is_bool(v) for v in listed):
                raise TypeError(f"temps must be a number, a list of numbers or a range 'T0:T1:DT', not {value!r}")
            options[key] = listed
        if key in _WORDS and not isinstance(value, str):
            raise TypeError(f"{name} must be a string: {_WORDS[key]}, not {kind}")
        if key in _FLAGS and not _is_bool(value):
            raise TypeError(f"{name} must be True or False, not {kind}")
        if key in _REALS and (_is_bool(value) or not isinstance(value, numbers.Real)):
            raise TypeError(f"{name} must be a number, not {kind}")


def _one_or_many(value: Any) -> Any:
    """A single number (a numpy scalar or 0-d array too) as a list of one;
    anything else as it is."""
    if getattr(value, "ndim", None) == 0 and hasattr(value, "item"):
        value = value.item()
    return [value] if isinstance(value, numbers.Real) and not isinstance(value, bool) else value


def run(
    q: int,
    size: Sizes,
    temps: Temperatures,
    therm: int,
    sweeps: int,
    measure_every: int = 1,
    samples: int = 1,
    seed: Union[int, None] = 0,
    init: str = "random",
    backend: str = "auto",
    algorithm: str = "metropolis",
    tempering: bool = False,
    *,
    checkpoint: Union[str, "os.PathLike[str]", None] = None,
    checkpoint_every: Union[float, None] = None,
    force: bool = False,
    series: Union[str, "os.PathLike[str]", None] = None,
    progress: Union[Callable[[int, int], Any], None] = None,
    **more: Any,
) -> list[dict[str, Any]]:
    """Runs a temperature sweep and returns one dict per temperature (and
    size): the objects ``warpmc potts run --json`` prints for the same
    arguments, with the same keys and the same numbers, bit for bit, except
    ``flips_per_ns``, the speed, which is measured anew.

    Each dict holds ``L``, ``temperature``, ``energy``, ``magnetization``,
    ``binder``, ``specific_heat``, ``susceptibility`` (each with ``_err``),
    their moments, the integrated autocorrelation times ``tau_int_energy``
    and ``tau_int_magnetization``, ``measurements``, ``too_short`` (True
    when the run was too short for its error bars), ``slow_mode`` (True when
    its batch means spread more than its autocorrelation allows; the errors
    were widened to that spread), ``transient`` (True when the first
    sixteenth of its measurements differs from the rest by more than 5
    errors: the chain was still leaving its start; more ``therm`` cures
    it), ``backend``,
    ``flips_per_ns``; with ``tempering``, ``exchange_acceptance`` and
    ``round_trips`` (of the exchange rounds after thermalisation), and
    ``replica_tau_int`` (the integrated autocorrelation
    time, in sweeps, of the replicas' summed energy, which swaps do not
    change: a run that measured fewer than 100 of it has every row
    ``too_short``); and, under ``run``, the provenance: warpmc's version
    and commit, the model, the seed, the algorithm, the backend and the
    whole resolved configuration.

    Arguments are those of ``warpmc potts run``:

    - ``q``: states, 2 … 255. ``size``: the lattice width L (even), or a list
      of widths run one after another (a finite-size-scaling study).
    - ``temps``: a temperature, a list of them, or a range ``"T0:T1:DT"``.
    - ``therm``, ``sweeps``: thermalisation and measurement sweeps per
      temperature; ``measure_every``: sweeps between measurements;
      ``samples``: independent chains per temperature.
    - ``seed``: the seed of every random number (the same seed gives the
      same lattices on every backend; each chain's numbers are keyed by the
      seed, q, J, h, the size and the temperature, so sizes and separate
      runs at other temperatures, couplings or fields are independent, and
      drawn on the stream of its sample and of the temperature's place in
      the list, so a temperature listed twice gives two chains and the
      same temperature at another place in another list gives other
      numbers);
      ``None`` draws a fresh one from the
      operating system, as :class:`Simulation` does without a seed (each
      row's ``run`` records it); ``init``: ``"random"`` or ``"ordered"``
      start.
    - ``backend``: ``"auto"`` (a GPU if usable, else the CPU), ``"cpu"`` or
      ``"cuda"``.
    - ``algorithm``: the update rule: ``"metropolis"``, ``"heat-bath"``,
      ``"swendsen-wang"`` or ``"wolff"`` (``warpmc potts run --help`` says
      when to use which).
    - ``tempering``: parallel tempering, replicas exchanged between
      neighbouring temperatures every 10 sweeps (``exchange_every=N``).
    - ``checkpoint``: a file to save the run's state in (``--checkpoint``):
      every ``checkpoint_every`` seconds (default 300; less often once a
      save takes more than a tenth of that, as the measurements it holds
      grow), on Ctrl-C, and at the end. :func:`resume` continues the run
      from it, with the results of a run never stopped, bit for bit; the
      ``warpmc potts run --resume`` command reads the same file. A file
      that already holds a checkpoint or anything else is refused unless
      ``force=True``. A periodic save that fails (a full disk) warns once
      and is tried again, the previous checkpoint kept whole. A batch
      system's SIGTERM saves too once the script makes it a
      KeyboardInterrupt:
      ``signal.signal(signal.SIGTERM, signal.default_int_handler)``.
    - ``series``: a ``.npy`` file to write every measurement to
      (``--series``): a float64 array of shape (sizes, temperatures,
      samples, measurements, 2), ``a[l, t, s, m] = [energy per site, order
      parameter]`` of measurement m of sample s at temperature t of the
      l-th size, for histograms and reweighting (``numpy.load``). A file
      already at that path is replaced, as ``numpy.save`` replaces one,
      unless it holds a run's checkpoint (a ``FileExistsError``). Written
      when the run ends, and when Ctrl-C or an error stops it (measurements
      not taken are NaN; a file already there is left as it was when no
      temperature finished; a series that cannot be written then is said
      in a note on the exception).
    - ``progress``: a function called as ``progress(done, total)`` with the
      sweeps done and to do (all sizes, temperatures and samples) a few
      times a second, and once with ``done == total`` at the end, on the
      thread that called ``run``: for a progress bar (``bar.update(done -
      bar.n)`` of ``tqdm(total=...)``). An exception it raises stops the run
      as Ctrl-C does (the state saved, ``results`` attached) and is raised
      by ``run``: the way to stop a run on a thread other than the main
      one, where Ctrl-C does not reach.
    - ``**more``: the other keys of a ``--config`` TOML file, by their
      names: ``height``, ``coupling`` (J), ``field`` (h),
      ``exchange_every``, and ``continue`` (give it as
      ``**{"continue": True}`` or ``continue_=True``). An unknown key, or
      a value of the wrong kind (a string for ``q``, a number for
      ``init``), is a TypeError; a bad value a ValueError with the command
      line's message.

    The defaults here (``measure_every=1``, ``seed=0``, random start)
    differ from the command line's (10, 1, ordered): the two agree when
    given the same values.

    Runs with the GIL released; Ctrl-C stops it between sweeps with
    KeyboardInterrupt, whose ``results`` attribute holds the rows of the
    temperatures finished before, so that an interrupted study keeps what
    it measured (and, with ``checkpoint``, whose ``checkpoint`` attribute
    names the file that holds the rest: give it to :func:`resume`). Other
    errors during the run carry the same ``results``. Temperatures that
    run together (an ensemble of independent chains, a tempering run)
    finish together: until then ``results`` is empty.

    >>> rows = run(q=3, size=8, temps="2.0:2.2:0.1", therm=20, sweeps=400, backend="cpu")
    >>> len(rows), rows[0]["run"]["q"]
    (3, 3)
    """
    if "continue_" in more:
        if "continue" in more:
            raise TypeError("give continue or continue_, not both")
        more["continue"] = more.pop("continue_")
    for name, value in (("q", q), ("size", size), ("temps", temps), ("therm", therm), ("sweeps", sweeps)):
        if value is None:
            raise TypeError(f"{name} has no default: give it")
    # A seed of None is a fresh one (so chains of separate calls differ, as
    # Simulation's do); any other None means this function's default (not
    # the command line's).
    if seed is None:
        seed = int.from_bytes(os.urandom(8), "little")
    given = {"measure_every": measure_every, "samples": samples, "seed": seed, "init": init, "backend": backend,
             "algorithm": algorithm, "tempering": tempering}
    defaults = {"measure_every": 1, "samples": 1, "seed": 0, "init": "random", "backend": "auto",
                "algorithm": "metropolis", "tempering": False}
    options: dict[str, Any] = {
        "q": q,
        "size": size,
        "temps": _one_or_many(temps),
        "therm": therm,
        "sweeps": sweeps,
        **{key: defaults[key] if value is None else value for key, value in given.items()},
        **more,
    }
    _check_kinds(options)
    text = json.dumps({key: _plain(key, value) for key, value in options.items()})
    saving = _saving(checkpoint, checkpoint_every, force)
    series_path = _path("series", series)
    _check_progress(progress)
    return _rows(lambda: _native.potts_run(text, *saving, series_path, progress))


def rerun(results: Union[str, "os.PathLike[str]"], **changes: Any) -> list[dict[str, Any]]:
    """Runs again the study that a results file records: a CSV file
    ``warpmc potts run --out`` wrote, or the JSON lines of ``--json`` (the
    configuration in its provenance, as ``warpmc potts run --config
    FILE`` reads it). Without ``changes`` it gives the same rows (but
    ``flips_per_ns``); ``changes`` are any of :func:`run`'s arguments, laid
    over the recorded ones: ``seed=2`` for another sample of the same
    study, ``sweeps=10**6`` for a longer one, ``size`` (which replaces the
    recorded sizes and height), ``checkpoint``, ``series``, ``progress``.

    >>> import os, tempfile
    >>> out = os.path.join(tempfile.mkdtemp(), "rows.jsonl")
    >>> rows = run(q=2, size=8, temps=[2.0, 2.5], therm=50, sweeps=200, backend="cpu")
    >>> with open(out, "w") as f:
    ...     _ = f.write("\\n".join(json.dumps(r) for r in rows))
    >>> [r["energy"] for r in rerun(out)] == [r["energy"] for r in rows]
    True
    """
    recorded = json.loads(_native.potts_recorded(_path("results", results)))
    # A size given replaces the recorded sizes and their height, as on the
    # command line; a temperature replaces the list.
    if "size" in changes:
        recorded.pop("height", None)
    if "temp" in changes:
        recorded.pop("temps")
    if "continue_" in changes:
        recorded.pop("continue")
    if not changes.get("tempering", recorded["tempering"]):
        recorded.pop("exchange_every", None)
    recorded.update(changes)
    return run(**recorded)


def resume(
    path: Union[str, "os.PathLike[str]"],
    *,
    checkpoint: Union[str, "os.PathLike[str]", None] = None,
    checkpoint_every: Union[float, None] = None,
    backend: Union[str, None] = None,
    force: bool = False,
    series: Union[str, "os.PathLike[str]", None] = None,
    progress: Union[Callable[[int, int], Any], None] = None,
) -> list[dict[str, Any]]:
    """Continues the run whose state :func:`run` (or ``warpmc potts run
    --checkpoint``) saved in the file ``path``, and returns the rows of the
    whole run, those finished before it stopped included: the rows of a
    run never stopped, bit for bit (but ``flips_per_ns``). A finished run's
    checkpoint gives its rows without sweeping again, and is left as it
    is (it may be read-only).

    - ``checkpoint``: where to go on saving the state (default ``path``
      itself), every ``checkpoint_every`` seconds (default: the interval
      the run was given, else 300), on Ctrl-C and at the end; another file that holds something is refused unless
      ``force=True``.
    - ``series``: a ``.npy`` file for every measurement of the whole run,
      as in :func:`run` (a finished run's checkpoint gives it too).
    - ``backend``: ``"auto"``, ``"cpu"`` or ``"cuda"`` instead of the run's
      own (the numbers do not depend on it; the rows' provenance and the
      checkpoint then name it).
    - ``progress``: as in :func:`run`, counting the whole run's sweeps
      (those done before it stopped included).

    The protocol comes whole from the checkpoint. Ctrl-C and errors behave
    as in :func:`run`.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "study.ckpt")
    >>> rows = run(q=2, size=8, temps=[2.0, 2.5], therm=50, sweeps=200, backend="cpu", checkpoint=path)
    >>> again = resume(path)                  # a finished run: its rows again
    >>> [r["energy"] for r in again] == [r["energy"] for r in rows]
    True
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path: {type(path).__name__} is not a path (a str or os.PathLike)")
    if backend is not None and not isinstance(backend, str):
        raise TypeError(f"backend: {type(backend).__name__} is not a string (auto, cpu or cuda)")
    saving = _saving(checkpoint, checkpoint_every, force)
    series_path = _path("series", series)
    _check_progress(progress)
    return _rows(
        lambda: _native.potts_resume(os.fsdecode(os.fspath(path)), saving[0], saving[1], backend, saving[2],
                                     series_path, progress)
    )


def _check_progress(progress: Any) -> None:
    """A progress argument is None or a function."""
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be a function, not {type(progress).__name__}")


def _path(name: str, value: Union[str, "os.PathLike[str]", None]) -> Union[str, None]:
    """An optional path argument as a string."""
    if value is None:
        return None
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{name}: {type(value).__name__} is not a path (a str or os.PathLike)")
    # A path object may give bytes (os.PathLike[bytes]).
    return os.fsdecode(os.fspath(value))


def _saving(
    checkpoint: Union[str, "os.PathLike[str]", None], every: Union[float, None], force: bool
) -> tuple[Union[str, None], Union[float, None], bool]:
    """The checkpoint arguments as the native module takes them."""
    if checkpoint is not None and not isinstance(checkpoint, (str, os.PathLike)):
        raise TypeError(f"checkpoint: {type(checkpoint).__name__} is not a path (a str or os.PathLike)")
    # Python's bool, or numpy's (numpy.bool_, numpy.bool).
    numpy_bool = type(force).__module__ == "numpy" and type(force).__name__ in ("bool_", "bool")
    if not (isinstance(force, bool) or numpy_bool):
        raise TypeError(f"force: {type(force).__name__} is not a boolean (True or False)")
    force = bool(force)
    if every is not None and (isinstance(every, bool) or not isinstance(every, numbers.Real)):
        raise TypeError(f"checkpoint_every: {type(every).__name__} is not a number of seconds")
    seconds = None if every is None else as_float("checkpoint_every", every)
    return (None if checkpoint is None else os.fsdecode(os.fspath(checkpoint)), seconds, force)


def _rows(call: Any) -> list[dict[str, Any]]:
    """The rows a native run returns, with the too-short warnings; an
    exception carries the rows finished before it (``results``) and the
    file that holds the run's state (``checkpoint``), if any."""
    try:
        lines = call()
    except BaseException as e:
        finished = getattr(e, "_warpmc_rows", None)
        notes = []
        if finished is not None:
            del e._warpmc_rows
            e.results = [json.loads(line) for line in finished]
            if finished:
                notes.append(f"warpmc: the {len(finished)} rows the run finished are in .results")
        note = getattr(e, "_warpmc_note", None)
        if note is not None:
            del e._warpmc_note
            notes.append(note)
        saved = getattr(e, "_warpmc_checkpoint", None)
        if saved is not None:
            del e._warpmc_checkpoint
            e.checkpoint = saved
            if isinstance(e, KeyboardInterrupt) and note is None:
                notes.append(f"warpmc: the run's state is saved in {saved}; continue: warpmc.potts.resume({saved!r})")
            elif isinstance(e, KeyboardInterrupt):
                notes.append(f"warpmc: continue from it with warpmc.potts.resume({saved!r})")
        if hasattr(e, "add_note"):
            for n in notes:
                e.add_note(n)
        raise
    try:
        rows = [json.loads(line) for line in lines]
    except KeyboardInterrupt as e:
        # Ctrl-C while the rows were read: they go with it.
        e.results = [json.loads(line) for line in lines]
        raise
    try:
        _warn_too_short(rows)
    except Exception as e:
        # Warnings made errors (python -W error, pytest's filterwarnings):
        # the finished rows go with the error, as with Ctrl-C.
        e.results = rows
        raise
    return rows


def _outside_level() -> int:
    """The ``stacklevel`` that makes a warning raised by the caller of this
    function point at the first frame outside the package (the user's call
    of run, rerun or resume, however deep inside the package it was
    raised)."""
    frame = sys._getframe(1)
    level = 1
    while frame is not None and (frame.f_globals.get("__name__") or "").split(".")[0] == "warpmc":
        frame = frame.f_back
        level += 1
    return level


def _warn_too_short(rows: list[dict[str, Any]]) -> None:
    """A RuntimeWarning for each row too short to trust."""
    level = _outside_level()
    for r in rows:
        if r.get("transient"):
            warnings.warn(
                f"L = {r['L']}, T = {r['temperature']}: the first sixteenth of its measurements differs from the "
                "rest (e or m more than 5 error bars apart): most likely the chain was still leaving its start when "
                "measuring began, and its means, the specific heat, susceptibility and Binder cumulant most of all, "
                "carry that start: run more therm sweeps (or start nearer equilibrium, init)",
                RuntimeWarning,
                stacklevel=level,
            )
        # The reason left when no other holds: too few excursions (q = 2
        # Metropolis that rejects too seldom was warned of before the run).
        if r.get("too_short") and not r.get("transient") and not _too_short_otherwise(r):
            if not _alternating(r):
                warnings.warn(
                    f"L = {r['L']}, T = {r['temperature']}: e or m made fewer than 10 excursions to one side of its "
                    f"mean in {r['measurements']} measurements (rare excitations): its errors are a count of a few "
                    "events, not to be trusted: run more sweeps or samples",
                    RuntimeWarning,
                    stacklevel=level,
                )
        # Said beside it when another reason flagged the row too.
        elif r.get("too_short") and (not r.get("transient") or _too_short_otherwise(r)):
            warnings.warn(
                f"L = {r['L']}, T = {r['temperature']}: its {r['measurements']} measurements span too few "
                "autocorrelation times"
                + (" (its batch means show a slow mode the run has not resolved)" if r.get("slow_mode") else "")
                + (
                    " (its e or m never changed: the error of 0 is no error bar)"
                    if r.get("energy_err") == 0 or r.get("magnetization_err") == 0
                    else ""
                )
                + (
                    f" (those of the tempered replicas' summed energy: τ_int = {r['replica_tau_int']:.0f} sweeps)"
                    if _replicas_too_short(r)
                    else ""
                )
                + "; its error bars are not to be trusted: run more sweeps or samples",
                RuntimeWarning,
                stacklevel=level,
            )


def _too_short_otherwise(row: dict[str, Any]) -> bool:
    """Whether a row flagged too short is so for one of these reasons (a
    transient row: as well): a slow mode, e or m never changing, too few
    τ_int, or tempered replicas that have not relaxed."""
    every = row.get("run", {}).get("config", {}).get("measure_every", row.get("measure_every"))
    # None (JSON's null) where τ_int could not be estimated.
    taus = [row.get(key) for key in ("tau_int_energy", "tau_int_magnetization")]
    taus = [math.nan if t is None else t for t in taus]
    tau = math.nan if any(math.isnan(t) for t in taus) else max(taus)
    too_few = every is not None and (not math.isfinite(tau) or row["measurements"] * every < 100 * tau)
    frozen = row.get("energy_err") == 0 or row.get("magnetization_err") == 0
    return bool(row.get("slow_mode")) or frozen or too_few or _replicas_too_short(row)


def _alternating(row: dict[str, Any]) -> bool:
    """Whether a row was flagged because q = 2 Metropolis rejects too
    seldom at its temperature to leave its alternation of two states."""
    config = row.get("run", {}).get("config")
    return config is not None and _native.potts_too_short_to_alternate(json.dumps(config), row["temperature"])


def _replicas_too_short(row: dict[str, Any]) -> bool:
    """Whether a tempering row's measurements span fewer than 100 τ_int of
    the replicas' summed energy (what flags every row of such a run)."""
    tau = row.get("replica_tau_int")
    every = row.get("run", {}).get("config", {}).get("measure_every")
    if tau is None or every is None:
        return False
    return not math.isfinite(tau) or row["measurements"] * every < 100 * tau


def dataframe(rows: list[dict[str, Any]]) -> "pandas.DataFrame":
    """The results of :func:`run` as a pandas DataFrame: one row per
    temperature (and size), one column per number, named as the columns
    of the command line's ``--out`` CSV (the moments ``energy_moment2`` …
    ``energy_moment4``, ``magnetization_moment2`` … and their ``_err``),
    so that the two concatenate; a number no row has is a column of NaN;
    and the
    provenance goes to ``DataFrame.attrs``: ``attrs["runs"]`` lists each
    distinct one in row order (one per size in a study of several sizes,
    whose provenances differ in the size), and ``attrs["run"]`` holds it
    where every row has the same.

    Needs pandas (``pip install pandas``).
    """
    try:
        import pandas
    except ImportError as e:
        raise ImportError("warpmc.potts.dataframe needs pandas: pip install pandas") from e
    if isinstance(rows, Mapping) or not isinstance(rows, (list, tuple)):
        raise TypeError(f"dataframe takes the list of rows potts.run returned, not {type(rows).__name__}")
    for i, r in enumerate(rows):
        if not isinstance(r, Mapping) or "run" not in r:
            raise ValueError(f"rows[{i}] is not a row of potts.run (a dict with a 'run' entry)")
    flat = []
    for r in rows:
        row: dict[str, Any] = {}
        for key, value in r.items():
            if key == "run":
                continue
            if key.endswith("_moments") and isinstance(value, list):
                # The command line's CSV columns: energy_moment2,
                # energy_moment2_err, … energy_moment4_err (the first
                # moment is the energy column itself).
                errors = r.get(key + "_err") or [None] * len(value)
                for i, (v, e) in enumerate(zip(value, errors), start=1):
                    if i > 1:
                        row[f"{key[:-1]}{i}"] = v
                        row[f"{key[:-1]}{i}_err"] = e
            elif key.endswith("_moments_err") and isinstance(value, list):
                continue
            elif isinstance(value, list):
                base, err = (key[:-4], "_err") if key.endswith("_err") else (key, "")
                for i, v in enumerate(value, start=1):
                    row[f"{base}_{i}{err}"] = v
            else:
                row[key] = value
        flat.append(row)
    df = pandas.DataFrame(flat)
    # A number that some rows lack (the last temperature's
    # exchange_acceptance: no pair above it), or every row (an error bar
    # of one measurement), is NaN in a float column, not None in an object
    # one.
    for column in df.columns:
        if df[column].dtype == object:
            given = [v for v in df[column] if v is not None]
            if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in given):
                df[column] = df[column].astype("float64")
    # Copies: editing the frame's attrs must not change the rows.
    runs: list[Any] = []
    for r in rows:
        if r["run"] not in runs:
            runs.append(copy.deepcopy(r["run"]))
    df.attrs["runs"] = runs
    if len(runs) == 1:
        df.attrs["run"] = runs[0]
    return df


def exact(
    size: Sizes,
    temps: Temperatures,
    q: int = 2,
    height: Union[int, None] = None,
    coupling: float = 1.0,
) -> list[dict[str, Any]]:
    """The exact energy and specific heat per site of periodic tori, one
    dict per size and temperature with ``L``, ``height``, ``temperature``,
    ``energy``, ``specific_heat``, ``q``, ``coupling`` and ``method``: the
    objects ``warpmc potts exact --json`` prints (less its version keys).

    q = 2 (Ising): Kaufman's solution (Kaufman 1949, in the torus form of
    Ferdinand and Fisher 1969), sides up to 2**24. Other q: the configurations
    counted exactly, on small tori only (7×7 for q = 3, 6×6 for q = 4, 5×5
    for q = 5); larger ones are a ValueError saying how far it reaches.

    ``size`` and ``temps`` as in :func:`run`; ``height`` defaults to
    ``size``; ``coupling`` is J. More rows than fit in memory are a
    MemoryError before any is computed. Runs with the GIL released (a
    torus of side 2**24 takes seconds per temperature); Ctrl-C stops it
    with KeyboardInterrupt.

    >>> e = exact(size=[16, 32], temps=[1.0, 1.2])
    >>> [(r["L"], r["temperature"]) for r in e]
    [(16, 1.0), (16, 1.2), (32, 1.0), (32, 1.2)]
    >>> round(exact(size=4, temps=1.0, q=3)[0]["energy"], 6)
    -1.702421
    """
    for name, value in (("size", size), ("temps", temps), ("q", q)):
        if value is None:
            raise TypeError(f"{name} has no default: give it")
    sizes = _plain("size", size)
    sizes = sizes if isinstance(sizes, list) else [sizes]
    for name, value in (("q", q), *(("size", s) for s in sizes), ("height", height)):
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise TypeError(f"{name} must be a whole number, not {value!r}")
        if not 0 <= value < (2**32 if name == "q" else 2**64):
            raise ValueError(f"{name} = {value}: out of range")
    repeated = sorted({s for s in sizes if sizes.count(s) > 1})
    if repeated:
        raise ValueError(f"the size {repeated[0]} is given twice")
    if isinstance(coupling, bool) or not isinstance(coupling, numbers.Real):
        raise TypeError(f"coupling must be a number, not {coupling!r}")
    if isinstance(temps, str):
        text = temps
    else:
        values = _plain("temps", _one_or_many(temps))
        numeric = isinstance(values, list) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
        if not numeric:
            raise TypeError("temps: give a number, a list of numbers or a range 'T0:T1:DT'")
        if not values:
            raise ValueError("temps: give at least one temperature")
        text = ",".join(repr(as_float("temps", v)) for v in values)
    lines = _native.potts_exact(int(q), [int(s) for s in sizes], None if height is None else int(height), text,
                                as_float("coupling", coupling))
    return [json.loads(line) for line in lines]


def analyze(
    series: Any,
    *,
    temperature: float,
    size: int,
    height: Union[int, None] = None,
    measure_every: int = 1,
) -> dict[str, Any]:
    """The error analysis of :func:`run` applied to measurements: the
    Γ-method's means, specific heat, susceptibility, Binder cumulant and
    moments with their errors, τ_int, and the ``too_short``, ``slow_mode``
    and ``transient`` flags (with their RuntimeWarnings), as the keys of a
    :func:`run` row. Not given (a series does not tell): ``sweeps``,
    ``flips_per_ns``, ``backend``, and the tempering keys; added:
    ``height`` and ``measure_every``.

    ``series`` has shape (samples, measurements, 2) or (measurements, 2):
    (energy per site, order parameter) of each measurement, as a ``series``
    file holds them for one size and temperature (``np.load(f)[l, t]``).
    Each sample's last rows may be NaN (measurements an interrupted run did
    not take); any other NaN or infinity, or a value whose fourth power
    overflows, is a ValueError; a sample of NaN alone is left out of
    ``samples``. Samples of
    different lengths go in as a list of arrays. ``size`` × ``height`` is
    the lattice (sites per measurement), ``measure_every`` the sweeps
    between measurements (τ_int comes out in sweeps).

    For more statistics than one run gave, give another run of the same
    model and protocol its own seed, and analyse both runs' samples
    together, as one run with their samples would be:

    >>> import numpy as np
    >>> from warpmc import potts
    >>> cfg = dict(q=2, size=8, temps=[1.5], therm=500, sweeps=4000, measure_every=2, backend="cpu")
    >>> a = potts.run(**cfg, seed=1, series="a.npy")  # doctest: +SKIP
    >>> b = potts.run(**cfg, seed=2, series="b.npy")  # doctest: +SKIP
    >>> both = np.concatenate([np.load("a.npy")[0, 0], np.load("b.npy")[0, 0]])  # doctest: +SKIP
    >>> row = potts.analyze(both, temperature=1.5, size=8, measure_every=2)  # doctest: +SKIP

    A run's own series gives back its rows, bit for bit (tempering runs
    aside: their errors also weigh the replicas' summed energy). Rows of
    q = 2 Metropolis at temperatures where it hardly ever rejects are not
    flagged here as :func:`run` flags them.

    >>> rng = np.random.default_rng(1)
    >>> e = -1.0 + 0.01 * rng.standard_normal((2, 1000))
    >>> m = 0.5 + 0.01 * rng.standard_normal((2, 1000))
    >>> row = potts.analyze(np.stack([e, m], axis=-1), temperature=2.0, size=16)
    >>> row["samples"], row["measurements"], round(row["energy"], 3)
    (2, 2000, -1.0)
    """
    import numpy as np

    for name, value in (("size", size), ("height", height), ("measure_every", measure_every)):
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise TypeError(f"{name} must be a whole number, not {value!r}")
        if not 0 <= value < 2**64:
            raise ValueError(f"{name} = {value}: out of range")
    if isinstance(temperature, bool) or not isinstance(temperature, numbers.Real):
        raise TypeError(f"temperature must be a number, not {temperature!r}")

    def as_numbers(value: Any) -> Any:
        # Masks and imaginary parts would be dropped without a word.
        if isinstance(value, np.ma.MaskedArray):
            raise TypeError("series: a masked array; give NaN for measurements not taken (at a sample's end)")
        try:
            a = np.asarray(value)
            boolean = a.dtype == np.bool_
            real = None if np.iscomplexobj(a) or boolean else a.astype(np.float64, copy=False)
        except (TypeError, ValueError) as e:
            raise TypeError(f"series: give an array of numbers of shape (samples, measurements, 2): {e}") from None
        if real is None:
            kind = "booleans" if boolean else "complex numbers"
            raise TypeError(f"series: {kind}; give real (energy, order parameter) pairs")
        return real

    if isinstance(series, (list, tuple)) and series and all(np.ndim(s) == 2 for s in series):
        # Samples of different lengths: each padded with NaN at its end.
        parts = [as_numbers(s) for s in series]
        for i, p in enumerate(parts):
            if p.shape[1] != 2:
                raise ValueError(f"series[{i}] has shape {p.shape}; each sample is (measurements, 2)")
        array = np.full((len(parts), max(len(p) for p in parts), 2), np.nan)
        for i, p in enumerate(parts):
            array[i, : len(p)] = p
    else:
        array = as_numbers(series)
    if array.ndim == 2:
        array = array[np.newaxis]
    if array.ndim != 3 or array.shape[-1] != 2:
        raise ValueError(
            f"series has shape {array.shape}; give (samples, measurements, 2) or (measurements, 2) of "
            "(energy per site, order parameter)"
        )
    line = _native.potts_analyze(
        np.ascontiguousarray(array),
        as_float("temperature", temperature),
        int(size),
        int(size if height is None else height),
        int(measure_every),
    )
    row = json.loads(line)
    _warn_too_short([row])
    return row
