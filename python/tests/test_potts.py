"""warpmc.potts: run() against `warpmc potts run --json`, and Simulation."""

from __future__ import annotations

import copy
import json
import math
import os
import pickle
import signal
import subprocess
import sys
import threading
import time
import warnings
import weakref

import numpy as np
import pytest

import warpmc
from warpmc import potts


def cli_rows(cli, args: list[str]) -> list[dict]:
    out = cli("potts", "run", "--json", *args)
    return [json.loads(line) for line in out.stdout.splitlines()]


def same_build(cli_rows: list[dict]) -> None:
    """The program and the package record the commit they were built from;
    results can only be equal when it is the same one."""
    commit = cli_rows[0]["run"]["commit"]
    assert commit == warpmc._native.commit, (
        f"the warpmc program was built from commit {commit} and the package from {warpmc._native.commit}: "
        "rebuild the one that is behind"
    )


def without_speed(rows: list[dict]) -> list[dict]:
    """Everything but the speed, the one field measured anew each run."""
    return [{k: v for k, v in r.items() if k != "flips_per_ns"} for r in rows]


COMMON = dict(therm=30, sweeps=60, measure_every=2, samples=2, seed=11, init="random")

CASES = {
    "range": (
        dict(q=2, size=16, temps="1.0:1.3:0.1"),
        ["--q", "2", "--size", "16", "--temps", "1.0:1.3:0.1"],
    ),
    "list, field, height, continue": (
        dict(q=5, size=10, temps=[0.9, 0.7], height=6, coupling=1.5, field=-0.25, **{"continue": True}),
        ["--q", "5", "--size", "10", "--temps", "0.9,0.7", "--height", "6", "--coupling", "1.5", "--field=-0.25",
         "--continue"],
    ),
    "sizes": (
        dict(q=3, size=[8, 12], temps=1.05),
        ["--q", "3", "--size", "8,12", "--temps", "1.05"],
    ),
    "heat-bath": (
        dict(q=4, size=12, temps=[0.8, 0.95], algorithm="heat-bath"),
        ["--q", "4", "--size", "12", "--temps", "0.8,0.95", "--algorithm", "heat-bath"],
    ),
    "swendsen-wang": (
        dict(q=3, size=10, temps=[0.9, 1.1], algorithm="swendsen-wang"),
        ["--q", "3", "--size", "10", "--temps", "0.9,1.1", "--algorithm", "swendsen-wang"],
    ),
    "wolff": (
        dict(q=2, size=8, temps="1.0:1.2:0.2", algorithm="wolff"),
        ["--q", "2", "--size", "8", "--temps", "1.0:1.2:0.2", "--algorithm", "wolff"],
    ),
    "tempering": (
        dict(q=2, size=8, temps=[1.0, 1.1, 1.2], tempering=True, exchange_every=3),
        ["--q", "2", "--size", "8", "--temps", "1.0,1.1,1.2", "--tempering", "--exchange-every", "3"],
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_run_equals_the_cli_json_bit_for_bit(cli, case):
    kwargs, args = CASES[case]
    common = ["--therm", "30", "--sweeps", "60", "--measure-every", "2", "--samples", "2", "--seed", "11",
              "--init", "random", "--backend", "cpu"]
    expected = cli_rows(cli, args + common)
    same_build(expected)
    with warnings.catch_warnings():
        # The CLI warned of the same start (Wolff from a random lattice).
        warnings.simplefilter("ignore", RuntimeWarning)
        got = potts.run(**kwargs, **COMMON, backend="cpu")
    assert len(got) == len(expected) > 0
    # Parsed floats compared exactly: the same bits, not merely close ones.
    assert without_speed(got) == without_speed(expected)
    assert all(r["flips_per_ns"] > 0 for r in got)


def test_run_results_carry_the_documented_keys_and_provenance():
    rows = potts.run(q=2, size=8, temps=[1.0, 2.0], therm=10, sweeps=20, seed=3, backend="cpu")
    assert [r["temperature"] for r in rows] == [1.0, 2.0]
    for key in ("L", "energy", "energy_err", "magnetization", "binder", "specific_heat", "susceptibility",
                "tau_int_energy", "measurements", "too_short", "backend", "flips_per_ns", "run"):
        assert key in rows[0], key
    run = rows[0]["run"]
    assert run["warpmc"] == warpmc.__version__
    assert run["seed"] == 3 and run["q"] == 2 and run["start"] == "random"
    assert run["config"]["measure_every"] == 1


def test_numpy_values_are_taken_as_numbers():
    a = potts.run(q=np.int64(2), size=np.int32(8), temps=np.array([1.0, 1.5]), therm=5, sweeps=10, backend="cpu")
    b = potts.run(q=2, size=8, temps=[1.0, 1.5], therm=5, sweeps=10, backend="cpu")
    assert without_speed(a) == without_speed(b)
    # A 0-d array is one temperature, as a number is.
    c = potts.run(q=2, size=8, temps=np.array(1.5), therm=5, sweeps=10, backend="cpu")
    d = potts.run(q=2, size=8, temps=1.5, therm=5, sweeps=10, backend="cpu")
    assert without_speed(c) == without_speed(d)
    assert potts.exact(size=4, temps=np.array(1.0)) == potts.exact(size=4, temps=1.0)


def test_temperatures_of_the_wrong_kind_are_type_errors_as_in_exact():
    for temps in (True, [True], [1.0, "2.0"], np.array([[1.5, 2.0]]), None.__class__):
        with pytest.raises(TypeError, match="temps must be a number, a list of numbers or a range"):
            potts.run(q=2, size=8, temps=temps, therm=1, sweeps=1, backend="cpu")
        with pytest.raises(TypeError, match="temps"):
            potts.exact(size=4, temps=temps)
    # Any iterable of numbers is a list of them, read once.
    rows = potts.run(q=2, size=8, temps=(t for t in (1.5, 2.0)), therm=1, sweeps=4, measure_every=1, backend="cpu")
    assert [r["temperature"] for r in rows] == [1.5, 2.0]


def test_unknown_keywords_are_type_errors():
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'"):
        potts.run(q=2, size=8, temps=1.0, therm=1, sweeps=1, colour="red")
    with pytest.raises(TypeError, match="'sizes'"):
        potts.run(q=2, size=8, temps=1.0, therm=1, sweeps=1, sizes=[8])
    # A dict or a set iterates as keys or in no order: not taken as a list.
    for temps in ({1.0: 2.0}, {1.0, 2.0}):
        with pytest.raises(TypeError, match="temps: a .* is not a list"):
            potts.run(q=2, size=8, temps=temps, therm=1, sweeps=1, backend="cpu")
    # Bytes iterate as byte values: b"1.0" is not the temperatures 49, 46, 48.
    for key, value in (("temps", b"1.0"), ("temps", bytearray(b"\x01\x02")), ("size", b"\x08")):
        kwargs = {"q": 2, "size": 8, "temps": 1.0, "therm": 1, "sweeps": 1, "backend": "cpu", key: value}
        with pytest.raises(TypeError, match=f"{key}: .* decode it first"):
            potts.run(**kwargs)
        with pytest.raises(TypeError, match=f"{key}: .* decode it first"):
            potts.exact(**{k: kwargs[k] for k in ("q", "size", "temps")})


@pytest.mark.parametrize(
    "kwargs, flags",
    [
        (dict(q=1), ["--q", "1"]),
        (dict(size=7), ["--size", "7"]),
        (dict(temps="1.3:1.0:0.1"), ["--temps", "1.3:1.0:0.1"]),
        (dict(init="hot"), ["--init", "hot"]),
        (dict(backend="tpu"), ["--backend", "tpu"]),
        (dict(exchange_every=5), ["--exchange-every", "5"]),
    ],
)
def test_bad_values_raise_with_the_cli_message(cli, kwargs, flags):
    base = dict(q=2, size=8, temps=1.0, therm=1, sweeps=1, backend="cpu")
    with pytest.raises(ValueError) as e:
        potts.run(**{**base, **kwargs})
    args = {"--q": "2", "--size": "8", "--temps": "1.0", "--therm": "1", "--sweeps": "1", "--backend": "cpu"}
    args.update(dict(zip(flags[::2], flags[1::2])))
    out = cli("potts", "run", *[x for kv in args.items() for x in kv], check=False)
    assert out.returncode != 0
    line = next(l for l in out.stderr.splitlines() if l.startswith("error: "))
    # The library's message, which the command line prints whole (after
    # clap's "invalid value 'X' for '--flag'" where clap parsed the flag).
    assert line == f"error: {e.value}" or line.endswith(f": {e.value}"), (line, str(e.value))


@pytest.mark.parametrize(
    "kwargs, error, words",
    [
        (dict(q=-1), ValueError, "q = -1: expected a whole number from 2 to 255"),
        (dict(seed=2**64), ValueError, "seed = 18446744073709551616: out of range (warpmc's whole numbers run from"),
        # The wrong kind of value is a TypeError in Python's words.
        (dict(q=2.5), TypeError, "q must be a whole number (int), not float"),
        (dict(q=True), TypeError, "q must be a whole number (int), not bool"),
        (dict(q="3"), TypeError, "q must be a whole number (int), not str"),
        (dict(size=[8, "x"]), TypeError, "size must be a whole number or a list of them"),
        (dict(tempering=3), TypeError, "tempering must be True or False, not int"),
        (dict(height="tall"), TypeError, "height must be a whole number (int), not str"),
        (dict(init=3), TypeError, "init must be a string: 'ordered' or 'random', not int"),
        (dict(algorithm=["wolff"]), TypeError, "algorithm must be a string"),
        (dict(field="strong"), TypeError, "field must be a number, not str"),
        (dict(continue_=1), TypeError, "continue_ must be True or False, not int"),
    ],
)
def test_a_value_of_the_wrong_kind_names_its_key(kwargs, error, words):
    base = dict(q=2, size=8, temps=1.0, therm=1, sweeps=1, backend="cpu")
    with pytest.raises(error) as e:
        potts.run(**{**base, **kwargs})
    assert words in str(e.value)
    assert "invalid type" not in str(e.value) and "untagged" not in str(e.value)
    # numpy's kinds are the same kinds, 0-d arrays too, and sizes come in
    # any iterable.
    rows = potts.run(**{**base, "q": np.int16(2), "tempering": np.bool_(False), "field": np.float32(0.5)})
    assert rows[0]["run"]["config"]["q"] == 2
    rows = potts.run(**{**base, "q": np.array(2), "size": range(8, 17, 8)})
    assert [r["L"] for r in rows] == [8, 16]
    rows = potts.run(**{**base, "size": (s for s in (8, 12)), "temps": [1.0]})
    assert [r["L"] for r in rows] == [8, 12]


def test_runs_too_short_for_their_error_bars_warn():
    with pytest.warns(RuntimeWarning, match="too few autocorrelation times") as record:
        rows = potts.run(q=2, size=16, temps=1.13, therm=10, sweeps=20, backend="cpu")
    assert rows[0]["too_short"] is True
    assert record[0].filename == __file__, "the warning names the caller's line"
    # Warnings made errors (python -W error) keep the finished rows.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(RuntimeWarning) as e:
            potts.run(q=2, size=16, temps=1.13, therm=10, sweeps=20, backend="cpu")
    assert [r["energy"] for r in e.value.results] == [r["energy"] for r in rows]


def test_a_run_still_leaving_its_start_is_flagged():
    # The ordered start is metastable above q = 16's first-order T_c
    # (0.6213): its first few hundred measured sweeps still melt.
    with pytest.warns(RuntimeWarning, match="still leaving its start") as record:
        rows = potts.run(q=16, size=64, temps=0.65, therm=1000, sweeps=20000, seed=6, init="ordered", backend="cpu")
    assert rows[0]["transient"] is True and rows[0]["too_short"] is True
    assert record[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rows = potts.run(q=16, size=64, temps=0.65, therm=5000, sweeps=20000, seed=6, init="ordered", backend="cpu")
    assert rows[0]["transient"] is False


def test_a_frozen_run_is_flagged_its_zero_error_no_error_bar():
    with pytest.warns(RuntimeWarning, match="never changed"):
        rows = potts.run(q=2, size=16, temps=0.25, therm=100, sweeps=2000, init="ordered", backend="cpu")
    assert rows[0]["energy_err"] == 0 and rows[0]["too_short"] is True


def test_tempered_replicas_that_have_not_relaxed_are_named_in_the_warning():
    # q = 10 across its first-order transition: every row is flagged by the
    # replicas' summed energy, and the warning says so.
    with pytest.warns(RuntimeWarning, match="replicas' summed energy") as record:
        rows = potts.run(q=10, size=16, temps=[0.704, 0.706, 0.708, 0.71, 0.712, 0.714], therm=1000, sweeps=5000,
                         init="ordered", measure_every=10, tempering=True, exchange_every=5, backend="cpu")
    assert all(r["too_short"] and r["replica_tau_int"] > 50 for r in rows)
    # One each (beside rows whose first measurements also drift: transient).
    assert sum("replicas' summed energy" in str(w.message) for w in record) == len(rows)
    # Ising: the replicas relax in a few sweeps, and nothing is flagged.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rows = potts.run(q=2, size=8, temps=[2.0, 2.2], therm=100, sweeps=2000, tempering=True, backend="cpu")
    assert all(r["replica_tau_int"] < 20 and not r["too_short"] for r in rows)


def test_an_unknown_algorithm_is_the_librarys_error(cli):
    with pytest.raises(ValueError) as e:
        potts.run(q=2, size=8, temps=1.0, therm=1, sweeps=10, algorithm="glauber", backend="cpu")
    assert "glauber" in str(e.value)
    out = cli("potts", "run", "--q", "2", "--size", "8", "--temp", "1", "--algorithm", "glauber", check=False)
    line = next(l for l in out.stderr.splitlines() if l.startswith("error: "))
    assert line.endswith(str(e.value)), (line, str(e.value))


def test_dataframe_columns_of_numbers_some_rows_lack_are_float_with_nan():
    pytest.importorskip("pandas")
    rows = potts.run(q=2, size=8, temps=[1.0, 1.1, 1.2], therm=10, sweeps=60, tempering=True, exchange_every=3,
                     backend="cpu")
    assert rows[-1]["exchange_acceptance"] is None
    df = potts.dataframe(rows)
    assert df["exchange_acceptance"].dtype == "float64"
    assert np.isnan(df["exchange_acceptance"].iloc[-1])
    assert list(df["exchange_acceptance"].iloc[:-1]) == [r["exchange_acceptance"] for r in rows[:-1]]


def test_dataframe_columns_are_the_command_lines_csv_columns(cli, tmp_path):
    pandas = pytest.importorskip("pandas")
    out = tmp_path / "rows.csv"
    args = dict(q=3, size=[6, 8], temps=[1.0, 1.1], therm=5, sweeps=20, seed=2, init="random", measure_every=1)
    cli("potts", "run", "--q", "3", "--size", "6,8", "--temps", "1.0,1.1", "--therm", "5", "--sweeps", "20",
        "--seed", "2", "--measure-every", "1", "--init", "random", "--backend", "cpu", "--out", str(out))
    csv = pandas.read_csv(out, comment="#")
    df = potts.dataframe(potts.run(backend="cpu", **args))
    assert list(df.columns) == list(csv.columns)
    both = pandas.concat([csv, df])
    assert len(both) == 8 and list(both.columns) == list(csv.columns)


def test_dataframe_has_a_row_per_temperature():
    pandas = pytest.importorskip("pandas")
    rows = potts.run(q=2, size=8, temps=[1.0, 1.2, 1.4], therm=5, sweeps=10, backend="cpu")
    df = potts.dataframe(rows)
    assert isinstance(df, pandas.DataFrame)
    assert list(df["temperature"]) == [1.0, 1.2, 1.4]
    assert list(df["energy_moment2"]) == [r["energy_moments"][1] for r in rows]
    assert list(df["energy_moment2_err"]) == [r["energy_moments_err"][1] for r in rows]
    assert list(df["magnetization_moment4"]) == [r["magnetization_moments"][3] for r in rows]
    # The first moment is the energy itself: no column of its own.
    assert [r["energy_moments"][0] for r in rows] == list(df["energy"])
    assert "energy_moment1" not in df.columns
    # One measurement per temperature: no error bars, columns of NaN.
    single = potts.dataframe(potts.run(q=2, size=8, temps=[1.0, 2.0], therm=0, sweeps=1, backend="cpu"))
    assert single["energy_err"].dtype == "float64" and single["energy_err"].isna().all()
    assert df.attrs["run"]["q"] == 2 and df.attrs["runs"] == [df.attrs["run"]]
    # The frame's provenance is its own copy.
    df.attrs["runs"][0]["q"] = 99
    assert rows[0]["run"]["q"] == 2
    assert len(potts.dataframe([])) == 0
    # A study of several sizes: one provenance per size, none said to be
    # every row's.
    study = potts.dataframe(potts.run(q=2, size=[4, 6], temps=1.5, therm=5, sweeps=10, backend="cpu"))
    assert [r["config"]["size"] for r in study.attrs["runs"]] == [4, 6] and "run" not in study.attrs
    # Anything else is named, not a KeyError from deep inside.
    for bad in ([{}], [rows[0], 3]):
        with pytest.raises(ValueError, match=r"is not a row of potts.run"):
            potts.dataframe(bad)
    with pytest.raises(TypeError, match="list of rows"):
        potts.dataframe(rows[0])


def test_long_runs_release_the_gil():
    inside, done, took = threading.Event(), threading.Event(), []

    def work():
        inside.set()
        start = time.perf_counter()
        potts.run(q=2, size=256, temps=1.0, therm=4000, sweeps=4000, backend="cpu")
        took.append(time.perf_counter() - start)
        done.set()

    t = threading.Thread(target=work)
    t.start()
    inside.wait()
    ticks = []
    while not done.is_set():
        ticks.append(time.perf_counter())
        time.sleep(0.002)
    t.join()
    # Were the GIL held during the run, this thread would only tick after it.
    assert took[0] > 0.05
    assert ticks[-1] - ticks[0] > 0.5 * took[0]


def test_a_simulation_starts_ordered_and_measures_its_lattice():
    sim = potts.Simulation(q=3, size=16, temp=1.0, seed=5, backend="cpu")
    assert sim.spins.shape == (16, 16) and sim.spins.dtype == np.uint8
    assert not sim.spins.any()
    assert sim.energy() == -2.0 and sim.magnetization() == 1.0
    checkerboard = np.indices((16, 16)).sum(axis=0) % 2
    sim.spins = checkerboard
    assert np.array_equal(sim.spins, checkerboard)
    assert sim.energy() == 0.0
    assert sim.magnetization() == pytest.approx((3 * 0.5 - 1) / 2)


def test_sweeps_in_pieces_equal_sweeps_at_once():
    a = potts.Simulation(2, 32, 1.2, seed=9, backend="cpu", init="random")
    b = potts.Simulation(2, 32, 1.2, seed=9, backend="cpu", init="random")
    assert np.array_equal(a.spins, b.spins)
    a.sweeps(60)
    for _ in range(6):
        b.sweeps(10)
    assert a.sweeps_done == b.sweeps_done == 60
    assert np.array_equal(a.spins, b.spins)
    assert a.energy() == b.energy()


def test_different_seeds_give_different_chains():
    a = potts.Simulation(2, 32, 2.0, seed=1, backend="cpu").sweeps(20)
    b = potts.Simulation(2, 32, 2.0, seed=2, backend="cpu").sweeps(20)
    assert not np.array_equal(a.spins, b.spins)


def test_run_without_a_seed_draws_a_fresh_one_and_records_it():
    # seed=None meant seed 0: "unseeded" runs were one chain over and over.
    kw = dict(q=2, size=8, temps=[2.0], therm=10, sweeps=100, backend="cpu")
    a = potts.run(seed=None, **kw)
    b = potts.run(seed=None, **kw)
    assert a[0]["run"]["seed"] != b[0]["run"]["seed"]
    assert a[0]["energy"] != b[0]["energy"] or a[0]["magnetization"] != b[0]["magnetization"]
    again = potts.run(seed=a[0]["run"]["seed"], **kw)
    assert again[0]["energy"] == a[0]["energy"]
    assert potts.run(**kw)[0]["run"]["seed"] == 0


def test_simulation_rejects_bad_input():
    with pytest.raises(ValueError, match="q"):
        potts.Simulation(q=1, size=8, temp=1.0)
    with pytest.raises(ValueError):
        potts.Simulation(q=2, size=7, temp=1.0)
    with pytest.raises(ValueError):
        potts.Simulation(q=2, size=8, temp=-1.0)
    # Integers out of range name the argument (pyo3 alone raised a bare
    # OverflowError); other types are TypeErrors.
    with pytest.raises(ValueError, match="q = -1: expected a whole number from 2 to 255"):
        potts.Simulation(q=-1, size=8, temp=1.0)
    with pytest.raises(ValueError, match="seed = 18446744073709551616: expected"):
        potts.Simulation(q=2, size=8, temp=1.0, seed=2**64)
    with pytest.raises(ValueError, match="size = -8"):
        potts.Simulation(q=2, size=-8, temp=1.0)
    with pytest.raises(TypeError, match="q must be an integer, not float"):
        potts.Simulation(q=2.0, size=8, temp=1.0)
    with pytest.raises(TypeError, match="height must be an integer, not bool"):
        potts.Simulation(q=2, size=8, temp=1.0, height=True)
    assert potts.Simulation(q=np.uint8(3), size=np.int64(8), temp=1.0, seed=np.uint64(7), backend="cpu").q == 3
    sim = potts.Simulation(q=2, size=8, temp=1.0, backend="cpu")
    with pytest.raises(ValueError, match="n = -1: expected a whole number"):
        sim.sweeps(-1)
    with pytest.raises(TypeError, match="n must be an integer, not str"):
        sim.sweeps("10")
    with pytest.raises(ValueError, match="shape"):
        sim.spins = np.zeros((8, 6), dtype=np.uint8)
    with pytest.raises(ValueError, match="states 0"):
        sim.spins = np.full((8, 8), 2)
    with pytest.raises(TypeError, match=r"integer array of shape \(8, 8\), not an array of dtype float32"):
        sim.spins = np.zeros((8, 8), dtype=np.float32)
    with pytest.raises(TypeError, match=r"not None"):
        sim.spins = None
    with pytest.raises(TypeError, match=r"not an array of dtype bool"):
        sim.spins = np.zeros((8, 8), dtype=bool)
    assert not sim.spins.any()
    # A huge broadcast view is refused by its shape, not copied.
    with pytest.raises(ValueError, match="shape"):
        sim.spins = np.broadcast_to(np.int32(1), (2**40, 8))
    # Views at an odd byte offset (not aligned) load as their copies do.
    for dtype in (np.int64, np.uint8, np.int16):
        odd = np.ndarray((8, 8), dtype, buffer=bytearray(64 * np.dtype(dtype).itemsize + 1), offset=1)
        odd[:] = np.arange(64).reshape(8, 8) % 2
        sim.spins = odd
        assert np.array_equal(sim.spins, odd)
    # Numbers beyond any float name their argument.
    with pytest.raises(ValueError, match="coupling = 10000000… .401 digits.: out of range"):
        potts.exact(q=2, size=4, temps=1.0, coupling=10**400)
    with pytest.raises(ValueError, match="temps = .*: out of range"):
        potts.exact(q=2, size=4, temps=[1.0, 10**400])
    # Whole numbers beyond 2^64 are real numbers like any other for the
    # real-valued arguments.
    assert potts.exact(q=2, size=4, temps=[10**20])[0]["temperature"] == 1e20
    assert potts.run(q=3, size=8, temps=[10**20], therm=5, sweeps=20, backend="cpu")[0]["temperature"] == 1e20


def test_a_simulation_runs_on_the_gpu_with_the_cpus_bits(gpu):
    a = potts.Simulation(q=9, size=128, temp=0.7, seed=4, backend="cpu", init="random").sweeps(50)
    b = potts.Simulation(q=9, size=128, temp=0.7, seed=4, backend="cuda", init="random").sweeps(50)
    assert (a.backend, b.backend) == ("cpu", "cuda") and 'backend="cuda"' in repr(b)
    assert "device 0" in b.backend_description and "kernel" in b.backend_description, b.backend_description
    # The backend given back makes the same chain.
    c = potts.Simulation(q=9, size=128, temp=0.7, seed=4, backend=b.backend, init="random").sweeps(50)
    assert np.array_equal(b.spins, c.spins)
    assert np.array_equal(a.spins, b.spins)
    assert a.energy() == b.energy()


def test_run_on_the_gpu_equals_the_cli_on_the_gpu(cli, gpu):
    args = ["--q", "2", "--size", "64", "--temps", "1.0:1.2:0.1", "--therm", "50", "--sweeps", "100",
            "--measure-every", "1", "--samples", "3", "--seed", "0", "--init", "random", "--backend", "cuda"]
    expected = cli_rows(cli, args)
    same_build(expected)
    got = potts.run(q=2, size=64, temps="1.0:1.2:0.1", therm=50, sweeps=100, samples=3, backend="cuda")
    assert without_speed(got) == without_speed(expected)
    cpu = potts.run(q=2, size=64, temps="1.0:1.2:0.1", therm=50, sweeps=100, samples=3, backend="cpu")
    physics = ("energy", "magnetization", "binder", "specific_heat", "energy_moments", "tau_int_energy")
    assert [[r[k] for k in physics] for r in got] == [[r[k] for k in physics] for r in cpu]


def raised_in_another_thread(call) -> list[BaseException]:
    """What `call()` raises when another thread makes it (a PanicException
    is a BaseException, so every kind is caught)."""
    caught: list[BaseException] = []

    def use() -> None:
        try:
            call()
        except BaseException as e:  # noqa: BLE001
            caught.append(e)

    t = threading.Thread(target=use)
    t.start()
    t.join()
    return caught


def test_a_cpu_simulation_serves_any_thread():
    sim = potts.Simulation(2, 16, 1.0, seed=5, backend="cpu")
    twin = potts.Simulation(2, 16, 1.0, seed=5, backend="cpu").sweeps(3)
    assert raised_in_another_thread(lambda: sim.sweeps(3)) == [] and sim.sweeps_done == 3
    assert np.array_equal(sim.spins, twin.spins)


def test_threads_take_turns_with_a_cpu_simulation():
    # One thread sweeps for about a second while another watches the
    # energy: the watcher waits for a stretch to end, not for the whole
    # call, and the chain is the one a single thread would have run.
    sim = potts.Simulation(3, 96, 1.0, seed=11, backend="cpu")
    twin = potts.Simulation(3, 96, 1.0, seed=11, backend="cpu")
    start = time.perf_counter()
    sim.sweeps(200)
    per_sweep = (time.perf_counter() - start) / 200
    n = max(400, int(1.0 / per_sweep))
    seen: list[float] = []
    caught: list[BaseException] = []
    sweeping = threading.Event()
    finished = threading.Event()

    def watch() -> None:
        try:
            sweeping.wait()
            while not finished.is_set():
                seen.append(sim.energy())
                assert sim.q == 3 and "seed=11" in repr(sim)
                time.sleep(0.01)
        except BaseException as e:  # noqa: BLE001
            caught.append(e)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        sweeping.set()
        sim.sweeps(n)
    finally:
        finished.set()
        watcher.join()
    assert caught == []
    assert len(seen) >= 3, (n, per_sweep, seen)
    assert np.array_equal(sim.spins, twin.sweeps(200 + n).spins)


def test_two_threads_sweeping_one_cpu_simulation_run_its_chain_once():
    # Sweep k's random numbers depend only on the seed and k: however the
    # two threads' stretches interleave, the chain is 2n sweeps long.
    sim = potts.Simulation(2, 32, 1.2, seed=4, backend="cpu")
    caught: list[BaseException] = []

    def sweep() -> None:
        try:
            sim.sweeps(3000)
        except BaseException as e:  # noqa: BLE001
            caught.append(e)

    threads = [threading.Thread(target=sweep) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert caught == [] and sim.sweeps_done == 6000
    twin = potts.Simulation(2, 32, 1.2, seed=4, backend="cpu").sweeps(6000)
    assert np.array_equal(sim.spins, twin.spins)


def test_a_cpu_simulation_comes_back_from_a_process_pool():
    import concurrent.futures
    import multiprocessing

    with concurrent.futures.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        back = pool.submit(_advanced, potts.Simulation(2, 8, 1.0, seed=9, backend="cpu")).result()
    # Unpickled by a thread of the pool, used by this one.
    here = potts.Simulation(2, 8, 1.0, seed=9, backend="cpu").sweeps(10)
    assert back.sweeps_done == 10 and np.array_equal(back.sweeps(5).spins, here.sweeps(5).spins)


def _advanced(sim: potts.Simulation) -> potts.Simulation:
    return sim.sweeps(10)


def test_a_gpu_simulation_refuses_other_threads_with_a_runtime_error(gpu):
    sim = potts.Simulation(2, 64, 1.0, backend="cuda")
    caught = raised_in_another_thread(lambda: sim.sweeps(1))
    assert len(caught) == 1 and type(caught[0]) is RuntimeError, caught
    assert "thread that made it" in str(caught[0])
    assert sim.sweeps(2).sweeps_done == 2
    # Shown by another thread (a debugger, a printed list), it says whose it is.
    shown: list[str] = []
    t = threading.Thread(target=lambda: shown.append(repr(sim)))
    t.start()
    t.join()
    assert shown == [f"Simulation(owned by another thread, seed={sim.seed})"]


def test_sweeps_beyond_a_chains_limit_are_refused_before_the_first():
    sim = potts.Simulation(2, 8, 1.0, backend="cpu")
    started = time.monotonic()
    with pytest.raises(ValueError, match="at most 2147483647 sweeps"):
        sim.sweeps(2**31)
    assert time.monotonic() - started < 5 and sim.sweeps_done == 0


def test_init_none_is_the_documented_random_start():
    args = dict(q=2, size=8, temps=[1.0], therm=0, sweeps=4, seed=3, backend="cpu")
    assert without_speed(potts.run(**args, init=None)) == without_speed(potts.run(**args, init="random"))
    # None is this function's default, never the command line's.
    nones = dict(measure_every=None, samples=None, algorithm=None, tempering=None)
    assert without_speed(potts.run(**args, **nones)) == without_speed(potts.run(**args))
    # (seed=None is a fresh seed, as Simulation's: see the test of that.)
    with pytest.raises(TypeError, match="therm has no default"):
        potts.run(**{**args, "therm": None})
    # Integers beyond any value are named, not a JSON parser's message.
    for key, value in (("temps", 10**400), ("seed", 2**64), ("therm", -(2**63) - 1)):
        with pytest.raises(ValueError, match=f"^{key} = .*: out of range"):
            potts.run(**{**args, key: value})


@pytest.mark.parametrize("temps", ["1,nan", "1,inf", "1,x"])
def test_a_temperature_list_names_the_value_that_is_not_a_number(temps):
    with pytest.raises(ValueError, match="is not a finite number"):
        potts.run(q=2, size=8, temps=temps, therm=1, sweeps=1, backend="cpu")


def test_exact_equals_the_cli_json_and_a_run_reproduces_it(cli):
    args = ["potts", "exact", "--size", "6,16", "--temps", "0.9,1.3", "--json"]
    expected = [json.loads(line) for line in cli(*args).stdout.splitlines()]
    for row in expected:
        assert row.pop("warpmc") == warpmc.__version__
        row.pop("commit")
    assert potts.exact(size=[6, 16], temps=[0.9, 1.3]) == expected
    # A run of the same torus agrees within its error bars.
    (exact,) = potts.exact(size=6, temps=1.3, q=3)
    (row,) = potts.run(q=3, size=6, temps=1.3, therm=1000, sweeps=40000, measure_every=4, backend="cpu")
    for key in ("energy", "specific_heat"):
        assert abs(row[key] - exact[key]) < 4.5 * row[f"{key}_err"], (key, row[key], row[f"{key}_err"], exact[key])


@pytest.mark.parametrize(
    "kwargs, error, words",
    [
        (dict(size=9, temps=1.0, q=3), ValueError, "reaches 7 × 7 for q = 3"),
        (dict(size=8, temps=[]), ValueError, "at least one temperature"),
        (dict(size=8, temps=-1.0), ValueError, "positive and finite"),
        (dict(size=-1, temps=1.0), ValueError, "size = -1"),
        (dict(size=8, temps=1.0, coupling=float("nan")), ValueError, "finite"),
        (dict(size=8, temps=1.0, q=True), TypeError, "q must be a whole number"),
        (dict(size=8, temps=[1.0, "x"]), TypeError, "temps"),
        (dict(size=15, temps=1.0, coupling=-1.0), ValueError, "both sides even"),
        (dict(size=None, temps=1.0), TypeError, "size has no default"),
        (dict(size=[8, 8.5], temps=1.0), TypeError, "size must be a whole number"),
        (dict(size=8, temps={1.0: 2}), TypeError, "not a list"),
    ],
)
def test_exact_refuses_what_it_cannot_answer(kwargs, error, words):
    with pytest.raises(error, match=words):
        potts.exact(**kwargs)


@pytest.mark.parametrize(
    "kwargs",
    [dict(temp=1e300), dict(temp=1.0, coupling=1e-60), dict(temp=1e11, field=0.5)],
)
def test_a_simulation_refuses_the_frozen_metropolis_that_run_refuses(kwargs):
    # There q = 2 Metropolis flips every site every sweep: a chain of it
    # reported e = -2 (the frozen pair of states it started in).
    with pytest.raises(ValueError) as run_error:
        potts.run(q=2, size=8, temps=kwargs["temp"], therm=10, sweeps=10, backend="cpu",
                  **{k: v for k, v in kwargs.items() if k != "temp"})
    assert "use the heat-bath algorithm" in str(run_error.value)
    with pytest.raises(ValueError) as e:
        potts.Simulation(2, 8, backend="cpu", **kwargs)
    assert str(e.value) == str(run_error.value)
    # An assigned temperature likewise; the simulation keeps its own.
    sim = potts.Simulation(2, 8, 1.0 if "coupling" not in kwargs else 1e-59, backend="cpu",
                           **{k: v for k, v in kwargs.items() if k != "temp"})
    before = sim.temperature
    with pytest.raises(ValueError) as e:
        sim.temperature = kwargs["temp"]
    assert str(e.value) == str(run_error.value) and sim.temperature == before
    # The algorithm the message names takes it (without a field, as the
    # cluster algorithms need).
    if "field" not in kwargs:
        for algorithm in ("heat-bath", "swendsen-wang", "wolff"):
            s = potts.Simulation(2, 8, backend="cpu", algorithm=algorithm, **kwargs)
            assert s.algorithm == algorithm and -2.0 <= s.sweeps(20).energy() <= 0.0


def test_simulation_arguments_are_checked_by_kind_and_named():
    for name in ("temp", "coupling", "field"):
        args = {"temp": 1.0, name: True}
        with pytest.raises(TypeError, match=f"^{name} must be a number, not bool"):
            potts.Simulation(2, 8, backend="cpu", **args)
        args = {"temp": 1.0, name: np.True_}
        with pytest.raises(TypeError, match=f"^{name} must be a number, not bool"):
            potts.Simulation(2, 8, backend="cpu", **args)
        args = {"temp": 1.0, name: "1"}
        with pytest.raises(TypeError, match=f"^{name} must be a number, not str"):
            potts.Simulation(2, 8, backend="cpu", **args)
        args = {"temp": 1.0, name: 10**400}
        with pytest.raises(ValueError, match=rf"^{name} = 10000000… \(401 digits\): out of range"):
            potts.Simulation(2, 8, backend="cpu", **args)
    sim = potts.Simulation(2, 8, np.float32(1.5), coupling=np.int64(2), field=0, backend="cpu")
    assert sim.temperature == 1.5
    with pytest.raises(TypeError, match="temperature must be a number, not bool"):
        sim.temperature = True
    with pytest.raises(ValueError, match="^temperature = 10000000… .*: out of range"):
        sim.temperature = 10**400
    with pytest.raises(ValueError, match="glauber"):
        potts.Simulation(2, 8, 1.0, backend="cpu", algorithm="glauber")
    assert sim.temperature == 1.5 and sim.algorithm == "metropolis"


def test_a_masked_array_is_not_loaded_as_spins():
    sim = potts.Simulation(2, 8, 1.0, backend="cpu")
    spins = np.ma.array(np.ones((8, 8), dtype=np.int64), mask=np.eye(8, dtype=bool))
    with pytest.raises(TypeError, match="masked array"):
        sim.spins = spins
    assert not sim.spins.any()
    sim.spins = spins.filled(1)
    assert sim.spins.all()


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="reads the resident size from /proc")
def test_a_cpu_simulation_dropped_by_another_thread_is_freed():
    def made_here_dropped_there() -> None:
        # 4096² heat-bath: a byte a site, 16 MiB of lattice.
        sims = [potts.Simulation(2, 4096, 1.0, backend="cpu", algorithm="heat-bath")]
        t = threading.Thread(target=sims.clear)
        t.start()
        t.join()
        assert not sims

    made_here_dropped_there()
    before = rss_bytes()
    for _ in range(8):
        made_here_dropped_there()
    # Kept, the eight lattices would hold 128 MiB.
    assert rss_bytes() - before < 48 << 20


def test_exact_rows_that_do_not_fit_in_memory_are_a_memory_error():
    # 16.7 million temperatures: the rows and their dicts would take tens of
    # GiB. Under a 3 GiB address-space limit, refused before any is
    # computed (the temperatures themselves, 128 MiB, fit).
    code = (
        "import resource\n"
        "resource.setrlimit(resource.RLIMIT_AS, (3 << 30, resource.RLIM_INFINITY))\n"
        "from warpmc import potts\n"
        "try:\n"
        "    potts.exact(size=2, temps='1:2:6e-8')\n"
        "except MemoryError as e:\n"
        "    print('MemoryError', e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.startswith("MemoryError"), (out.returncode, out.stdout, out.stderr)
    assert "exact values needs" in out.stdout and "fewer temperatures" in out.stdout, out.stdout


def test_simulations_without_a_seed_are_independent_chains_and_tell_their_seed():
    a = potts.Simulation(q=2, size=16, temp=2.5, backend="cpu", init="random")
    b = potts.Simulation(q=2, size=16, temp=2.5, backend="cpu", init="random")
    assert a.seed != b.seed
    assert not np.array_equal(a.sweeps(20).spins, b.sweeps(20).spins)
    again = potts.Simulation(q=2, size=16, temp=2.5, seed=a.seed, backend="cpu", init="random")
    assert np.array_equal(again.sweeps(20).spins, a.spins)


def test_an_interrupted_run_hands_over_the_temperatures_it_finished():
    # A chain of temperatures (continue): Ctrl-C, here an alarm raising
    # KeyboardInterrupt, after about two and a half of ten.
    args = dict(q=2, size=32, therm=1000, sweeps=20000, seed=5, backend="cpu", **{"continue": True})
    started = time.monotonic()
    potts.run(temps=1.0, **args)
    one = time.monotonic() - started

    def interrupt(*_):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 2.5 * one)
        with pytest.raises(KeyboardInterrupt) as e:
            potts.run(temps="1.0:1.45:0.05", **args)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    finished = e.value.results
    assert 1 <= len(finished) < 10
    # The rows a run of just those temperatures gives.
    temps = [r["temperature"] for r in finished]
    alone = potts.run(temps=temps, **args)
    fields = ("temperature", "energy", "energy_err", "magnetization", "specific_heat", "susceptibility")
    assert [[r[k] for k in fields] for r in finished] == [[r[k] for k in fields] for r in alone]


_FORK_CALLS = {
    "sweeps": 'potts.Simulation(q=2, size=16, temp=1.0, seed=1, backend="cpu").sweeps(1)',
    "run": 'potts.run(q=2, size=16, temps=1.0, therm=1, sweeps=4, backend="cpu")',
    "exact q=3": "potts.exact(q=3, size=4, temps=1.0)",
    "devices": "warpmc.devices()",
}


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork() on this system")
@pytest.mark.parametrize("parent", list(_FORK_CALLS))
@pytest.mark.parametrize("child", ["sweeps", "run", "exact q=3"])
def test_a_child_forked_after_warpmc_started_its_threads_is_told_how_to_go_on(parent, child):
    # The parent's worker threads do not exist in a forked child: a call
    # there would wait for them forever. It raises instead; and asking what
    # the machine offers starts no threads, so a child may use them then.
    code = f"""
import os, sys
import warpmc
from warpmc import potts
{_FORK_CALLS[parent]}
pid = os.fork()
if pid == 0:
    try:
        {_FORK_CALLS[child]}
        os._exit(0 if {parent == "devices"} else 3)
    except RuntimeError as e:
        os._exit(0 if "spawn" in str(e) and not {parent == "devices"} else 4)
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
"""
    done = subprocess.run([sys.executable, "-c", code], timeout=60)
    assert done.returncode == 0


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork() on this system")
@pytest.mark.parametrize("use", ["sim.spins", "sim.spins = numpy.zeros((16, 16), numpy.uint8)"])
def test_a_forked_child_is_told_how_to_go_on_for_a_simulations_spins(use):
    # A simulation made before the fork: its lattice is read and loaded by
    # the parent's worker threads, which the child does not have.
    code = f"""
import os, sys
import numpy
from warpmc import potts
sim = potts.Simulation(q=2, size=16, temp=1.0, seed=1, backend="cpu")
sim.sweeps(10)
pid = os.fork()
if pid == 0:
    try:
        {use}
        os._exit(3)
    except RuntimeError as e:
        os._exit(0 if "spawn" in str(e) else 4)
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
"""
    done = subprocess.run([sys.executable, "-c", code], timeout=60)
    assert done.returncode == 0


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork() on this system")
def test_a_child_forked_while_another_thread_sweeps_is_told_how_to_go_on():
    # The fork copies the simulation as taken by the sweeping thread, which
    # the child does not have: even a plain getter would wait forever.
    code = """
import os, sys, threading, time
from warpmc import potts
sim = potts.Simulation(q=2, size=256, temp=1.2, seed=1, backend="cpu")
threading.Thread(target=lambda: sim.sweeps(10**7), daemon=True).start()
time.sleep(0.3)
pid = os.fork()
if pid == 0:
    signal_alarm = __import__("signal").alarm(20)
    try:
        sim.temperature
        os._exit(3)
    except RuntimeError as e:
        os._exit(0 if "spawn" in str(e) else 4)
_, status = os.waitpid(pid, 0)
sim.close()
os._exit(os.waitstatus_to_exitcode(status))
"""
    done = subprocess.run([sys.executable, "-c", code], timeout=60)
    assert done.returncode == 0


def test_a_child_forked_after_warpmc_started_its_threads_is_told_so_by_a_wolff_temperature():
    # Above T_c Wolff measures its clusters from a random lattice, which
    # warpmc's threads fill: the child would wait for them forever.
    code = """
import os
from warpmc import potts
sim = potts.Simulation(q=10, size=64, temp=0.6, seed=1, backend="cpu", algorithm="wolff")
sim.sweeps(2)
pid = os.fork()
if pid == 0:
    __import__("signal").alarm(20)
    try:
        sim.temperature = 0.8
        os._exit(3)
    except RuntimeError as e:
        os._exit(0 if "spawn" in str(e) else 4)
_, status = os.waitpid(pid, 0)
os._exit(os.waitstatus_to_exitcode(status))
"""
    if not hasattr(os, "fork"):
        pytest.skip("no fork() on this system")
    done = subprocess.run([sys.executable, "-c", code], timeout=60)
    assert done.returncode == 0


@pytest.mark.parametrize("call", [lambda sim: sim.energy(), repr])
def test_a_thread_waiting_for_a_simulation_hears_ctrl_c(call):
    # Wolff measures its clusters anew at each temperature: seconds on a
    # 2048² lattice, all of them with the simulation taken by that thread.
    sim = potts.Simulation(q=2, size=2048, temp=1.0, seed=1, backend="cpu", algorithm="wolff")
    started = time.monotonic()
    sim.temperature = 1.05
    holds = time.monotonic() - started
    setter = threading.Thread(target=lambda: setattr(sim, "temperature", 1.1))
    # A shell's background jobs start with SIGINT ignored; Python's own
    # handler makes it a KeyboardInterrupt.
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    setter.start()
    try:
        time.sleep(0.1)
        timer = threading.Timer(0.2, lambda: signal.raise_signal(signal.SIGINT))
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            call(sim)
        heard = time.monotonic() - started - holds - 0.3
    finally:
        setter.join()
        signal.signal(signal.SIGINT, before)
    assert sim.temperature == 1.1
    # Heard while waiting (every 50 ms), not once the setter was done.
    assert heard < holds / 2, (heard, holds)


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="no interval timers on this system")
def test_a_signal_handler_may_look_at_the_simulation_during_its_sweeps():
    sim = potts.Simulation(q=2, size=64, temp=2.0, seed=1, backend="cpu")
    seen = []

    def look(*_):
        seen.append((repr(sim), sim.energy(), sim.sweeps_done))

    previous = signal.signal(signal.SIGALRM, look)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.01, 0.01)
        deadline = time.monotonic() + 60
        while not seen and time.monotonic() < deadline:
            sim.sweeps(2000)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert seen, "no signal came during the sweeps"
    assert all(text.startswith("Simulation(") and -2.0 <= e <= 0.0 for text, e, _ in seen)


def test_a_closed_simulation_gives_back_its_memory_and_refuses_use():
    with potts.Simulation(q=3, size=16, temp=1.0, seed=3, backend="cpu") as sim:
        sim.sweeps(5)
        e = sim.energy()
    assert math.isfinite(e)
    assert repr(sim) == "Simulation(closed, seed=3)" and sim.seed == 3
    for use in (lambda: sim.sweeps(1), sim.energy, lambda: sim.spins, lambda: setattr(sim, "temperature", 1.1)):
        with pytest.raises(ValueError, match="the Simulation is closed"):
            use()
    sim.close()  # again: nothing to do
    # An exception inside the block still closes it, and is not swallowed.
    with pytest.raises(KeyError):
        with potts.Simulation(q=2, size=8, temp=2.0, seed=1, backend="cpu") as other:
            raise KeyError("x")
    with pytest.raises(ValueError, match="closed"):
        other.energy()


@pytest.mark.parametrize("algorithm", ["metropolis", "heat-bath", "swendsen-wang", "wolff"])
def test_a_saved_simulation_made_anew_continues_the_same_chain(algorithm, tmp_path):
    args = dict(q=3, size=12, temp=1.0, seed=21, backend="cpu", algorithm=algorithm, init="random")
    first = potts.Simulation(**args).sweeps(40)
    np.save(tmp_path / "spins.npy", first.spins)
    saved_at = first.sweeps_done
    first.sweeps(30)
    again = potts.Simulation(**args)
    again.spins = np.load(tmp_path / "spins.npy")
    again.sweeps_done = saved_at
    assert again.sweeps(30).sweeps_done == first.sweeps_done == 70
    assert np.array_equal(again.spins, first.spins)
    # Without the sweep number it would replay sweeps 0, 1, … on the saved
    # lattice: another chain.
    replay = potts.Simulation(**args)
    replay.spins = np.load(tmp_path / "spins.npy")
    assert not np.array_equal(replay.sweeps(30).spins, first.spins)
    with pytest.raises(ValueError, match="sweeps_done = -1"):
        again.sweeps_done = -1
    with pytest.raises(TypeError, match="sweeps_done must be an integer"):
        again.sweeps_done = 2.5


def test_a_saved_gpu_simulation_made_anew_continues_the_cpus_chain(gpu):
    args = dict(q=9, size=64, temp=0.7, seed=4, init="random")
    cpu = potts.Simulation(**args, backend="cpu").sweeps(25)
    saved, saved_at = cpu.spins, cpu.sweeps_done
    cpu.sweeps(75)
    again = potts.Simulation(**args, backend="cuda")
    again.spins = saved
    again.sweeps_done = saved_at
    assert np.array_equal(again.sweeps(75).spins, cpu.spins)


def test_a_simulation_names_its_backend_as_the_argument_takes_it(tmp_path):
    s = potts.Simulation(q=2, size=8, temp=1.0, seed=1, backend="cpu")
    assert s.backend == "cpu" and "CPU" in s.backend_description
    t = potts.Simulation(q=2, size=8, temp=1.0, seed=1, backend=s.backend)
    assert np.array_equal(s.sweeps(5).spins, t.sweeps(5).spins)
    with pytest.raises(IsADirectoryError):
        potts.resume(tmp_path)


def test_series_is_the_command_lines(cli, tmp_path):
    args = dict(q=3, size=[6, 8], temps=[1.0, 1.2], therm=5, sweeps=40, seed=2, init="random", measure_every=2,
                samples=2)
    mine, theirs = tmp_path / "py.npy", tmp_path / "cli.npy"
    potts.run(backend="cpu", series=mine, **args)
    cli("potts", "run", "--q", "3", "--size", "6,8", "--temps", "1.0,1.2", "--therm", "5", "--sweeps", "40",
        "--seed", "2", "--init", "random", "--measure-every", "2", "--samples", "2", "--backend", "cpu",
        "--series", str(theirs))
    a, b = np.load(mine), np.load(theirs)
    assert a.shape == (2, 2, 2, 20, 2) and not np.isnan(a).any()
    assert np.array_equal(a, b)
    # A finished run's checkpoint gives the series again.
    ckpt, again = tmp_path / "run.ckpt", tmp_path / "again.npy"
    potts.run(backend="cpu", checkpoint=ckpt, **args)
    potts.resume(ckpt, series=again)
    assert np.array_equal(np.load(again), a)
    # A checkpoint, even one named .npy, is never replaced by a series.
    held = tmp_path / "held.npy"
    potts.run(backend="cpu", checkpoint=held, **args)
    for bad, error in ((tmp_path / "x.csv", ValueError), (tmp_path, IsADirectoryError), (held, FileExistsError),
                       (3, TypeError)):
        with pytest.raises(error):
            potts.run(backend="cpu", series=bad, **args)


def test_analyze_gives_a_runs_rows_from_its_series(tmp_path):
    temps, sizes = [0.9, 1.0, 1.1], [8, 12]
    series = tmp_path / "s.npy"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        rows = potts.run(q=3, size=sizes, temps=temps, therm=100, sweeps=1500, measure_every=3, samples=2,
                         seed=5, backend="cpu", series=series)
        a = np.load(series)
        for r in rows:
            got = potts.analyze(a[sizes.index(r["L"]), temps.index(r["temperature"])],
                                temperature=r["temperature"], size=r["L"], measure_every=3)
            assert got.pop("height") == r["L"] and got.pop("measure_every") == 3
            assert got == {k: r[k] for k in got}, r["temperature"]
            assert set(r) - set(got) == {"sweeps", "flips_per_ns", "backend", "run"}
        # Samples of different lengths: as a list, or NaN-padded as an
        # interrupted run's series holds them.
        one = a[0, 1]
        padded = one.copy()
        padded[1, -100:] = np.nan
        ragged = [one[0], one[1, :-100]]
        assert potts.analyze(padded, temperature=1.0, size=8) == potts.analyze(ragged, temperature=1.0, size=8)
        assert potts.analyze(padded, temperature=1.0, size=8)["measurements"] == 2 * 500 - 100
        # A sample with no measurement taken is not one of the samples.
        unmeasured = np.concatenate([one, np.full((1, 500, 2), np.nan)])
        assert potts.analyze(unmeasured, temperature=1.0, size=8) == potts.analyze(one, temperature=1.0, size=8)
    for bad, error in ((np.zeros(3), ValueError), (np.zeros((2, 5, 3)), ValueError),
                       (np.array([[1.0, np.inf]]), ValueError), (np.array([[np.nan, np.nan], [1.0, 0.5]]), ValueError),
                       (np.array([[np.nan, 0.5]]), ValueError), ("many", TypeError),
                       (a[0, 0] + 0j, TypeError), (np.ma.masked_invalid(a[0, 0]), TypeError),
                       (a[0, 0] > 0, TypeError), (np.array([[1e80, 0.5]]), ValueError)):
        with pytest.raises(error):
            potts.analyze(bad, temperature=1.0, size=8)
    for kwargs, error in ((dict(temperature=0.0, size=8), ValueError), (dict(temperature=1.0, size=7), ValueError),
                          (dict(temperature=1.0, size=8, measure_every=0), ValueError),
                          (dict(temperature="1", size=8), TypeError), (dict(temperature=1.0, size=8.0), TypeError)):
        with pytest.raises(error):
            potts.analyze(a[0, 0], **kwargs)
    # A series that left its value in a few bursts only is flagged, with the
    # warning that says so; samples of one measurement each are not.
    bursts = np.tile([-2.0, 1.0], (100_000, 1))
    for start in (10_000, 40_000, 70_000, 90_000):
        bursts[start : start + 3] = (-1.5, 0.9)
    with pytest.warns(RuntimeWarning, match="fewer than 10 excursions to one side of its mean"):
        assert potts.analyze(bursts, temperature=0.3, size=8)["too_short"]
    draws = np.random.default_rng(3).normal(size=(400, 1, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        one_each = potts.analyze(draws, temperature=1.0, size=8)
    assert not one_each["too_short"] and one_each["samples"] == 400
    # No measurement at all: no values, and the warning that says so.
    with pytest.warns(RuntimeWarning, match="too few"):
        empty = potts.analyze(np.zeros((0, 2)), temperature=1.0, size=8)
    assert empty["measurements"] == 0 and empty["energy"] is None and empty["too_short"]


def test_a_simulation_can_be_weakly_referenced():
    sim = potts.Simulation(q=2, size=8, temp=1.0, seed=1, backend="cpu")
    ref = weakref.ref(sim)
    assert ref() is sim
    del sim
    assert ref() is None


@pytest.mark.parametrize("algorithm", ["metropolis", "heat-bath", "swendsen-wang", "wolff"])
def test_a_pickled_or_copied_simulation_continues_the_same_chain(algorithm):
    import copy
    import pickle

    field = 0.0 if algorithm in ("swendsen-wang", "wolff") else 0.1
    a = potts.Simulation(q=3, size=8, height=6, temp=0.9, seed=7, backend="cpu", field=field, algorithm=algorithm)
    a.sweeps(13)
    copies = [pickle.loads(pickle.dumps(a)), copy.deepcopy(a), copy.copy(a)]
    a.sweeps(9)
    for b in copies:
        assert b is not a and (b.q, b.size, b.height, b.field, b.algorithm) == (3, 8, 6, field, algorithm)
        assert b.sweeps_done == 13
        b.sweeps(9)
        assert np.array_equal(a.spins, b.spins) and a.energy() == b.energy()


def test_word_arguments_of_the_wrong_kind_name_themselves():
    for key in ("init", "algorithm", "backend"):
        with pytest.raises(TypeError, match=f"{key} must be a string"):
            potts.Simulation(q=2, size=8, temp=1.0, **{key: 3})
    # None is the default, as in run.
    s = potts.Simulation(q=2, size=8, temp=1.0, seed=1, init=None, algorithm=None, backend=None)
    assert s.algorithm == "metropolis"


def test_run_and_simulation_warn_as_the_command_line_does():
    quick = dict(size=8, therm=5, sweeps=20, backend="cpu")
    with pytest.warns(RuntimeWarning, match="wolff from a random start below T_c") as seen:
        potts.run(q=2, temps=[0.9], algorithm="wolff", init="random", **quick)
    # Said at the caller's line, not inside the package.
    assert [w.filename for w in seen if "wolff" in str(w.message)] == [__file__]
    with pytest.warns(RuntimeWarning, match="q = 2 Metropolis makes even the costliest flip"):
        potts.run(q=2, temps=[1.0, 50.0], **quick)
    with pytest.warns(RuntimeWarning, match="temperature 1 is listed more than once"):
        potts.run(q=3, temps=[1.0, 1.0], **quick)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        potts.run(q=2, temps=[1.0], algorithm="wolff", init="ordered", **quick)
        sim = potts.Simulation(2, 8, 1.0, backend="cpu")
    assert not [w for w in seen if "random start" in str(w.message) or "costliest" in str(w.message)], seen
    # A Simulation warns when it first sweeps at such a temperature, once
    # per temperature; made, copied or unpickled, it says nothing.
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        hot = potts.Simulation(2, 8, 50.0, seed=3, backend="cpu")
        copy.deepcopy(hot)
        pickle.loads(pickle.dumps(hot))
        # A filter that makes it an error stops the call before it sweeps.
        with pytest.raises(RuntimeWarning, match="T = 50: q = 2 Metropolis"):
            hot.sweeps(5)
        assert hot.sweeps_done == 0
        with pytest.raises(RuntimeWarning):
            potts.run(q=2, temps=[50.0], **quick)
    with pytest.warns(RuntimeWarning, match="T = 50: q = 2 Metropolis") as seen:
        hot.sweeps(5)
    assert [w.filename for w in seen if "Metropolis" in str(w.message)] == [__file__]
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        assert hot.sweeps(5).sweeps_done == 10
    sim.temperature = 1e4
    with pytest.warns(RuntimeWarning, match="T = 10000: q = 2 Metropolis"):
        sim.sweeps(1)


def test_exact_and_resume_refuse_what_run_refuses(tmp_path):
    with pytest.raises(ValueError, match="the size 8 is given twice"):
        potts.exact(q=2, size=[8, 8], temps=[1.0])
    ckpt = str(tmp_path / "done.ckpt")
    potts.run(q=2, size=8, temps=[1.0], therm=5, sweeps=20, backend="cpu", checkpoint=ckpt)
    # Checked for a finished run too, which writes nothing.
    with pytest.raises(ValueError, match="checkpoint_every = NaN"):
        potts.resume(ckpt, checkpoint_every=float("nan"))
    assert len(potts.resume(ckpt)) == 1
