"""Shared fixtures: the command-line program built from the same tree (for
comparisons with `warpmc … --json`), and GPU tests that skip with their
reason where no CUDA device is usable (WARPMC_REQUIRE_GPU=1 makes that a
failure, as in the Rust tests)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

import warpmc

REPO = Path(__file__).resolve().parents[2]


def _cli() -> Path | None:
    given = os.environ.get("WARPMC_BIN")
    if given:
        return Path(given)
    for profile in ("release", "debug"):
        p = REPO / "target" / profile / "warpmc"
        if p.is_file():
            return p
    found = shutil.which("warpmc")
    return Path(found) if found else None


@pytest.fixture(scope="session")
def cli():
    """Runs the `warpmc` program: cli(*args) -> CompletedProcess (text)."""
    path = _cli()
    if path is None or not path.is_file():
        pytest.skip("no warpmc program: build it (cargo build --release) or set WARPMC_BIN")

    def run(*args: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run([str(path), *args], capture_output=True, text=True, check=check)

    return run


def _cuda_reason() -> str | None:
    devices = warpmc.devices()
    if any(d["backend"] == "cuda" for d in devices):
        return None
    return devices[-1]["cuda"] or "no CUDA device"


@pytest.fixture
def gpu():
    """The ordinal of a usable GPU; the test skips (or fails under
    WARPMC_REQUIRE_GPU=1) without one."""
    reason = _cuda_reason()
    if reason is not None:
        if os.environ.get("WARPMC_REQUIRE_GPU") == "1":
            pytest.fail(f"WARPMC_REQUIRE_GPU=1 but no GPU is usable: {reason}")
        pytest.skip(f"no GPU: {reason}")
    return next(d["ordinal"] for d in warpmc.devices() if d["backend"] == "cuda")
