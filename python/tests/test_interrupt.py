"""Ctrl-C: a long call stops soon after SIGINT with KeyboardInterrupt, and the
process goes on (no abort, nothing left running)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

LONG_CALLS = {
    "potts.run": "potts.run(q=2, size=512, temps=[1.0, 1.1], therm=10**6, sweeps=10**6, backend='cpu')",
    "Simulation.sweeps": "potts.Simulation(q=2, size=1024, temp=1.0, backend='cpu').sweeps(10**7)",
    # Wolff measures its cluster size as a simulation is made, and at each
    # temperature of a run: about 30 N sites of clusters on one thread.
    "Simulation (wolff)": "potts.Simulation(q=2, size=4096, temp=1.0, backend='cpu', algorithm='wolff')",
    "potts.run (wolff)": (
        "potts.run(q=2, size=4096, temps=[1.0, 1.01], therm=10, sweeps=10**6, backend='cpu', algorithm='wolff')"
    ),
    # A quarter of a million chains: groups small enough that the first
    # look at Ctrl-C comes soon.
    "potts.run (many samples)": "potts.run(q=2, size=256, temps=[2.0], therm=5, sweeps=20, samples=2**18, backend='cpu')",
    # Seconds per temperature, in one long sum: Ctrl-C is heard inside it.
    "potts.exact": "potts.exact(size=2**24, temps=[1.0] * 33)",
    "flame.render": (
        "flame.render('''<flame size=\"64 64\" center=\"0 0\" scale=\"30\" quality=\"1e7\">"
        "<xform weight=\"1\" coefs=\"0.5 0 0 0.5 0 0\" linear=\"1\" color=\"0\"/>"
        "<xform weight=\"1\" coefs=\"0.5 0 0 0.5 0.5 0\" linear=\"1\" color=\"1\"/></flame>''', backend='cpu')"
    ),
    # A moment of chaos game, then a minute of spatial filter (no progress
    # hook runs there): Ctrl-C is heard by the thread watching the render.
    "flame.render (filter)": (
        "flame.render('''<flame size=\"1000 1000\" center=\"0 0\" scale=\"300\" quality=\"0.05\" filter=\"80\">"
        "<xform weight=\"1\" coefs=\"0.5 0 0 0.5 0 0\" linear=\"1\" color=\"0\"/>"
        "<xform weight=\"1\" coefs=\"0.5 0 0 0.5 0.5 0\" linear=\"1\" color=\"1\"/></flame>''', backend='cpu')"
    ),
}


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT is a POSIX signal")
@pytest.mark.parametrize("call", LONG_CALLS)
def test_ctrl_c_stops_a_long_call(call):
    script = textwrap.dedent(
        f"""
        import signal, sys, time
        # A shell's background jobs start with SIGINT ignored; Python's own
        # handler is what turns it into KeyboardInterrupt.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        from warpmc import flame, potts
        print("ready", flush=True)
        try:
            {LONG_CALLS[call]}
        except KeyboardInterrupt:
            print("interrupted", flush=True)
            sys.exit(0)
        print("finished", flush=True)
        """
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "ready"
        time.sleep(1.0)
        assert child.poll() is None, "the call ended before it could be interrupted"
        sent = time.monotonic()
        os.kill(child.pid, signal.SIGINT)
        out, err = child.communicate(timeout=30)
        waited = time.monotonic() - sent
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 0, err
    assert out.strip() == "interrupted", (out, err)
    assert waited < 10, f"{waited:.1f} s from Ctrl-C to the end"
