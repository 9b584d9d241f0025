"""The ``progress`` callbacks of potts.run, potts.resume and flame.render: what
they are given, and an exception from them stopping the call (on the main
thread and on another, where Ctrl-C does not reach)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from warpmc import flame, potts

# Two temperatures, two samples, of two sizes: 4 × (therm + sweeps) sweeps
# per size.
STUDY = dict(q=3, size=[8, 12], temps=[1.0, 1.2], therm=200, sweeps=3000, samples=2, backend="cpu", seed=5)
STUDY_SWEEPS = 2 * 2 * 2 * (200 + 3000)

GENOME = """<flame size="96 64" center="0 0" scale="30" quality="200">
  <xform weight="1" coefs="0.5 0 0 0.5 0 0" linear="1" color="0"/>
  <xform weight="1" coefs="0.5 0 0 0.5 0.5 0" linear="1" color="1"/>
  <xform weight="1" coefs="0.5 0 0 0.5 0 0.5" spherical="1" color="0.5"/>
</flame>"""


class Stop(Exception):
    """What a callback raises to stop the call."""


def test_run_reports_the_whole_studys_sweeps_and_ends_at_the_total():
    seen = []
    rows = potts.run(**STUDY, progress=lambda done, total: seen.append((done, total)))
    assert seen, "the callback was never called"
    assert {total for _, total in seen} == {STUDY_SWEEPS}
    dones = [done for done, _ in seen]
    assert dones == sorted(dones), "sweeps done went backwards"
    assert seen[-1] == (STUDY_SWEEPS, STUDY_SWEEPS)
    assert seen.count(seen[-1]) == 1, "the end was reported twice"
    # The callback changes nothing of the results.
    plain = potts.run(**STUDY)
    assert [r["energy"] for r in rows] == [r["energy"] for r in plain]


def test_an_exception_from_progress_stops_the_run_and_resume_continues_it(tmp_path):
    path = tmp_path / "study.ckpt"
    long = dict(STUDY, sweeps=200_000)

    def stop_half_way(done, total):
        if done > total // 2:
            raise Stop(done)

    with pytest.raises(Stop) as stopped:
        potts.run(**long, checkpoint=path, progress=stop_half_way)
    assert stopped.value.checkpoint == str(path)
    assert len(stopped.value.results) == 2, "the first size's rows travel with the exception"
    seen = []
    resumed = potts.resume(path, progress=lambda done, total: seen.append((done, total)))
    assert seen[0][0] > seen[0][1] // 2, "resume counts the sweeps done before it stopped"
    assert seen[-1][0] == seen[-1][1]
    never_stopped = potts.run(**long)
    assert [r["energy"] for r in resumed] == [r["energy"] for r in never_stopped]


def test_progress_stops_a_run_on_another_thread():
    stop = threading.Event()
    outcome = {}

    def watched(done, total):
        if stop.is_set():
            raise Stop("asked to stop")

    def work():
        try:
            potts.run(q=2, size=256, temps=[1.0], therm=10**7, sweeps=10, backend="cpu", progress=watched)
            outcome["finished"] = True
        except Stop as e:
            outcome["stopped"] = e

    worker = threading.Thread(target=work)
    worker.start()
    stop.set()
    worker.join(timeout=60)
    assert not worker.is_alive(), "the run went on after its callback raised"
    assert "stopped" in outcome


def test_render_reports_fractions_up_to_one_and_the_same_pixels():
    seen = []
    image = flame.render(GENOME, backend="cpu", progress=seen.append)
    assert seen and seen[-1] == 1.0
    assert all(0.0 <= f <= 1.0 for f in seen)
    assert np.array_equal(image, flame.render(GENOME, backend="cpu"))


def test_an_exception_from_progress_stops_a_render_on_another_thread():
    big = GENOME.replace('quality="200"', 'quality="1e8"')
    outcome = {}

    def stop(fraction):
        raise Stop(fraction)

    def work():
        try:
            flame.render(big, backend="cpu", progress=stop)
            outcome["finished"] = True
        except Stop as e:
            outcome["stopped"] = e

    worker = threading.Thread(target=work)
    worker.start()
    worker.join(timeout=60)
    assert not worker.is_alive(), "the render went on after its callback raised"
    assert "stopped" in outcome


@pytest.mark.parametrize("call", ["run", "resume", "render"])
def test_progress_must_be_a_function(call, tmp_path):
    with pytest.raises(TypeError, match="progress must be a function"):
        if call == "run":
            potts.run(**STUDY, progress=5)
        elif call == "resume":
            potts.resume(tmp_path / "none.ckpt", progress="bar")
        else:
            flame.render(GENOME, backend="cpu", progress=1.0)
