"""warpmc.set_threads: the CPU threads a process starts, chosen once."""

from __future__ import annotations

import subprocess
import sys

import pytest


def run_python(code: str) -> subprocess.CompletedProcess:
    # A fresh process: this one's threads may have started already.
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)


def test_set_threads_before_work_sets_them_and_after_is_refused():
    out = run_python(
        "import warpmc\n"
        "from warpmc import flame\n"
        "warpmc.set_threads(3)\n"
        "print(warpmc.devices()[-1]['threads'])\n"
        "flame.info('<flame size=\"8 8\"><xform weight=\"1\" linear=\"1\" coefs=\"1 0 0 1 0 0\"/></flame>')\n"
        "try:\n"
        "    warpmc.set_threads(2)\n"
        "except RuntimeError as e:\n"
        "    print('refused:', e)\n"
    )
    lines = out.stdout.splitlines()
    assert lines[0] == "3", out
    assert lines[1].startswith("refused: warpmc's CPU threads have started already (3 of them)"), out


def test_set_threads_takes_a_whole_number_of_at_least_one():
    import warpmc

    for bad, error in ((0, ValueError), (-1, ValueError), (2.0, TypeError), (True, TypeError), ("2", TypeError)):
        with pytest.raises(error):
            warpmc.set_threads(bad)
