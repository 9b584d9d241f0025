"""The package itself: version, devices, stubs, docstrings."""

from __future__ import annotations

import json
from pathlib import Path

import warpmc


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
    from warpmc import flame, potts, prims

    for f in (warpmc.devices, potts.run, potts.dataframe, flame.render, flame.info, prims.sort, prims.scan,
              prims.reduce, prims.transpose):
        assert f.__doc__ and len(f.__doc__) > 80, f.__name__
    assert "Markov chain" in potts.Simulation.__doc__
    assert potts.Simulation.sweeps.__doc__ and potts.Simulation.spins.__doc__
    assert issubclass(warpmc.WarpmcError, RuntimeError)
