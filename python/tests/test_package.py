"""The package itself: version, devices, stubs, docstrings."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import warpmc
from warpmc import flame, potts, prims


def test_version_is_the_programs(cli):
    assert cli("--version").stdout.split() == ["warpmc", warpmc.__version__]


def test_devices_mirror_the_programs_report(cli):
    report = json.loads(cli("devices", "--json").stdout)
    devices = warpmc.devices()
    cpu = devices[-1]
    assert cpu["backend"] == "cpu" and cpu["threads"] >= 1
    cuda = [d for d in devices if d["backend"] == "cuda"]
    if report["cuda_usable"]:
        assert cpu["cuda"] is None
        assert [d["name"] for d in cuda] == [d["name"] for d in report["devices"]]
        assert all(d["sm_count"] > 0 and d["total_memory"] > 0 for d in cuda)
    else:
        assert cuda == [] and cpu["cuda"] == report["reason"]


def test_the_package_ships_stubs_and_documents_its_api():
    root = Path(warpmc.__file__).parent
    assert (root / "py.typed").is_file() and (root / "_native.pyi").is_file()

    for f in (warpmc.devices, potts.run, potts.dataframe, flame.render, flame.info, prims.sort, prims.scan,
              prims.reduce, prims.transpose):
        assert f.__doc__ and len(f.__doc__) > 80, f.__name__
    assert "Markov chain" in potts.Simulation.__doc__
    assert potts.Simulation.sweeps.__doc__ and potts.Simulation.spins.__doc__
    assert issubclass(warpmc.WarpmcError, RuntimeError)


def test_asking_for_a_missing_gpu_is_a_warpmc_error():
    if any(d["backend"] == "cuda" for d in warpmc.devices()):
        pytest.skip("a GPU is usable here")
    with pytest.raises(warpmc.WarpmcError, match="no CUDA device"):
        potts.run(q=2, size=8, temps=1.0, therm=1, sweeps=10, backend="cuda")
    with pytest.raises(warpmc.WarpmcError, match="no CUDA device"):
        potts.Simulation(q=2, size=8, temp=1.0, backend="cuda")
    with pytest.raises(warpmc.WarpmcError, match="no CUDA device"):
        flame.render('<flame size="8 8"><xform weight="1" linear="1"/></flame>', backend="cuda")
    with pytest.raises(warpmc.WarpmcError, match="no CUDA device"):
        prims.sort(np.arange(3, dtype=np.int32), backend="cuda")


def test_sizes_beyond_memory_are_refused_before_allocating():
    # 2^34 sites, the most warpmc addresses: 64 GiB of host memory.
    available = next(int(l.split()[1]) * 1024 for l in open("/proc/meminfo") if l.startswith("MemAvailable"))
    if available > 64 << 30:
        pytest.skip("this machine has the memory for the largest lattice")
    with pytest.raises(MemoryError, match="lattice"):
        potts.Simulation(q=2, size=1 << 17, temp=1.0, backend="cpu")
