"""Checkpoints from Python: run(checkpoint=…) saves a run's state, resume()
continues it to the rows of a run never stopped, and the files are those of
`warpmc potts run --checkpoint/--resume`, read by either."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
import warnings

import pytest

from warpmc import potts

# A chain of temperatures over two sizes: an interruption leaves a size
# finished, a size begun and a lattice carried to the next temperature.
STUDY = dict(q=3, size=[8, 16], temps="1.0:1.3:0.1", therm=2000, sweeps=40000, seed=7, backend="cpu",
             **{"continue": True})
STUDY_FLAGS = ["--q", "3", "--size", "8,16", "--temps", "1.0:1.3:0.1", "--therm", "2000", "--sweeps", "40000",
               "--seed", "7", "--backend", "cpu", "--continue", "--measure-every", "1", "--init", "random"]


def without_speed(rows: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k != "flips_per_ns"} for r in rows]


def stopped_after(seconds: float, call):
    """Runs call() with Ctrl-C (an alarm raising KeyboardInterrupt) after
    `seconds`; returns call()'s value where it finished first, else the
    KeyboardInterrupt."""

    def interrupt(*_):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, seconds)
        return call()
    except KeyboardInterrupt as e:
        return e
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def interrupted_after(seconds: float, call):
    """stopped_after(seconds, call) for a call that must still be running
    then: the KeyboardInterrupt."""
    stop = stopped_after(seconds, call)
    assert isinstance(stop, KeyboardInterrupt), "the call ended before the interruption"
    return stop


def signalled(script: str, after: float, signals: list, gap: float = 0.0) -> tuple[int, str, str]:
    """Runs `script` in a new Python process; once it prints "ready" and
    `after` more seconds have passed, sends it `signals`, `gap` seconds
    apart. Returns its exit status, standard output and standard error."""
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "ready"
        time.sleep(after)
        assert child.poll() is None, "the run ended before the signal"
        for i, sig in enumerate(signals):
            if i > 0:
                time.sleep(gap)
            child.send_signal(sig)
        out, err = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    return child.returncode, out, err


@pytest.fixture(scope="module")
def uninterrupted():
    """The study's rows and how long it takes."""
    started = time.monotonic()
    rows = potts.run(**STUDY)
    return rows, time.monotonic() - started


def test_an_interrupted_run_resumes_to_the_rows_of_a_run_never_stopped(tmp_path, uninterrupted, cli):
    rows, seconds = uninterrupted
    path = tmp_path / "study.ckpt"
    stop = interrupted_after(0.6 * seconds, lambda: potts.run(**STUDY, checkpoint=path))
    assert stop.checkpoint == str(path)
    assert any("potts.resume" in note for note in getattr(stop, "__notes__", [])) or not hasattr(stop, "add_note")
    assert 0 < len(stop.results) < len(rows), "the interruption came before or after the run"
    assert without_speed(stop.results) == without_speed(rows[: len(stop.results)])
    # The command line continues the same file to the same rows.
    copy = tmp_path / "copy.ckpt"
    shutil.copyfile(path, copy)
    out = cli("potts", "run", "--json", "--resume", str(copy))
    assert without_speed([json.loads(line) for line in out.stdout.splitlines()]) == without_speed(rows)
    # And so does Python: every row, those finished before the stop first.
    assert without_speed(potts.resume(path)) == without_speed(rows)
    # The finished run's checkpoint gives its rows again, untouched (it may
    # be an archived, read-only file).
    held = path.read_bytes()
    os.utime(path, (1e9, 1e9))
    assert without_speed(potts.resume(path, checkpoint_every=1)) == without_speed(rows)
    assert path.read_bytes() == held
    assert path.stat().st_mtime == 1e9, "the finished checkpoint was written again"


def test_a_checkpoint_of_the_command_line_resumes_in_python(tmp_path, cli):
    args = ["--q", "2", "--size", "12", "--temps", "1.0,1.2", "--therm", "50", "--sweeps", "300", "--seed", "3",
            "--backend", "cpu"]
    path = tmp_path / "cli.ckpt"
    out = cli("potts", "run", "--json", "--checkpoint", str(path), *args)
    expected = [json.loads(line) for line in out.stdout.splitlines()]
    assert without_speed(potts.resume(str(path), backend="cpu")) == without_speed(expected)


def test_a_new_run_leaves_a_file_in_the_way_alone_unless_forced(tmp_path):
    small = dict(q=2, size=8, temps=[1.5], therm=10, sweeps=50, backend="cpu")
    path = tmp_path / "study.ckpt"
    potts.run(**small, checkpoint=path)
    held = path.read_bytes()
    with pytest.raises(FileExistsError, match=r"already holds a run's checkpoint.*potts\.resume.*force=True"):
        potts.run(**small, checkpoint=path)
    assert path.read_bytes() == held
    other = tmp_path / "notes.txt"
    other.write_text("a week of notes")
    with pytest.raises(FileExistsError, match="is not a warpmc checkpoint"):
        potts.run(**small, checkpoint=other)
    assert other.read_text() == "a week of notes"
    # force=True starts a new run over it.
    rows = potts.run(**small, checkpoint=other, force=True)
    assert without_speed(potts.resume(other)) == without_speed(rows)
    # resume() writing elsewhere is held to the same rule.
    notes = tmp_path / "more-notes.txt"
    notes.write_text("keep me")
    with pytest.raises(FileExistsError, match="is not a warpmc checkpoint"):
        potts.resume(path, checkpoint=notes)
    assert notes.read_text() == "keep me"
    assert without_speed(potts.resume(path, checkpoint=notes, force=True)) == without_speed(potts.resume(path))


@pytest.mark.parametrize(
    "kwargs, error, words",
    [
        (dict(checkpoint_every=10), ValueError, "needs a checkpoint to write"),
        (dict(checkpoint="X", checkpoint_every=0), ValueError, "positive number of seconds"),
        (dict(checkpoint="X", checkpoint_every=float("nan")), ValueError, "positive number of seconds"),
        (dict(checkpoint="X", checkpoint_every="often"), TypeError, "checkpoint_every: str is not a number"),
        (dict(checkpoint=3), TypeError, "checkpoint: int is not a path"),
        (dict(checkpoint="X", force="yes"), TypeError, "force: str is not a boolean"),
        (dict(checkpoint=""), ValueError, "an empty path names no file"),
        (dict(checkpoint="/dev/null"), OSError, "a checkpoint must be a regular file"),
        (dict(checkpoint="."), OSError, "is a directory"),
    ],
)
def test_bad_checkpoint_arguments_are_refused_before_the_run(tmp_path, monkeypatch, kwargs, error, words):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(error, match=words):
        potts.run(q=2, size=8, temps=[1.5], therm=10, sweeps=50, backend="cpu", **kwargs)
    assert not (tmp_path / "X").exists()


def test_resume_names_a_file_it_cannot_continue(tmp_path):
    with pytest.raises(FileNotFoundError, match="missing.ckpt"):
        potts.resume(tmp_path / "missing.ckpt")
    with pytest.raises(ValueError, match="an empty path names no file"):
        potts.resume("")
    with pytest.raises(TypeError, match="path: bytes is not a path"):
        potts.resume(b"/tmp/x.ckpt")
    junk = tmp_path / "junk.ckpt"
    junk.write_bytes(b"not a checkpoint at all")
    with pytest.raises(ValueError, match="junk.ckpt"):
        potts.resume(junk)
    assert junk.read_bytes() == b"not a checkpoint at all"
    with pytest.raises(TypeError, match="backend"):
        potts.resume(junk, backend=1)


def test_periodic_saves_come_during_the_run_and_a_failing_one_warns_and_goes_on(tmp_path, uninterrupted):
    rows, seconds = uninterrupted
    folder = tmp_path / "gone"
    folder.mkdir()
    path = folder / "study.ckpt"
    seen = threading.Event()
    done = threading.Event()

    def remove_the_folder_after_the_first_save():
        while not done.is_set():
            if path.exists():
                seen.set()
                shutil.rmtree(folder)
                return
            time.sleep(0.005)

    watcher = threading.Thread(target=remove_the_folder_after_the_first_save)
    watcher.start()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with pytest.raises(OSError) as e:
                potts.run(**STUDY, checkpoint=path, checkpoint_every=0.05 * seconds)
    finally:
        done.set()
        watcher.join()
    assert seen.is_set(), "no checkpoint was written during the run"
    failed = [w for w in caught if "the previous checkpoint, if any, is kept" in str(w.message)]
    assert len(failed) == 1, [str(w.message) for w in caught]
    # The run went on to its end; only the finished state could not be
    # saved, and the rows travel with the error.
    assert without_speed(e.value.results) == without_speed(rows)
    assert not hasattr(e.value, "checkpoint")


@pytest.mark.skipif(sys.platform == "win32", reason="SIGTERM is a POSIX signal")
def test_a_batch_systems_sigterm_saves_the_state_when_the_script_asks(tmp_path, uninterrupted):
    rows, seconds = uninterrupted
    path = tmp_path / "study.ckpt"
    script = textwrap.dedent(
        f"""
        import signal, sys
        signal.signal(signal.SIGTERM, signal.default_int_handler)
        from warpmc import potts
        print("ready", flush=True)
        try:
            potts.run(**{STUDY!r}, checkpoint={str(path)!r})
        except KeyboardInterrupt as e:
            print(e.checkpoint, flush=True)
            sys.exit(0)
        """
    )
    status, out, err = signalled(script, 0.3 * seconds, [signal.SIGTERM])
    assert status == 0, err
    assert out.strip() == str(path)
    assert without_speed(potts.resume(path)) == without_speed(rows)


def test_a_run_stopped_on_the_gpu_resumes_on_the_cpu_to_the_same_rows(tmp_path, gpu):
    study = dict(STUDY, backend="cuda")
    # Kernels compiled first, so that the timed run is as long as the next.
    potts.run(q=3, size=8, temps=1.0, therm=1, sweeps=2, backend="cuda")
    started = time.monotonic()
    rows = potts.run(**study)
    seconds = time.monotonic() - started
    path = tmp_path / "study.ckpt"
    stop = interrupted_after(0.6 * seconds, lambda: potts.run(**study, checkpoint=path))
    assert stop.checkpoint == str(path)
    assert 0 < len(stop.results) < len(rows), "the interruption came before or after the run"

    def numbers(rows):
        return [{k: v for k, v in r.items() if k not in ("flips_per_ns", "backend", "run")} for r in rows]

    assert numbers(potts.resume(path, backend="cpu")) == numbers(rows)


def test_checkpoint_every_beyond_any_run_means_no_periodic_saves_and_numpy_booleans_are_booleans(tmp_path):
    import numpy as np

    path = tmp_path / "study.ckpt"
    small = dict(q=2, size=8, temps=[1.5], therm=10, sweeps=50, backend="cpu")
    rows = potts.run(**small, checkpoint=path, checkpoint_every=1e300)
    assert without_speed(potts.resume(path)) == without_speed(rows)
    assert without_speed(potts.run(**small, checkpoint=path, force=np.bool_(True))) == without_speed(rows)
    with pytest.raises(FileExistsError):
        potts.run(**small, checkpoint=path, force=np.bool_(False))


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT is a POSIX signal")
@pytest.mark.parametrize("gap", [0.0, 0.01, 0.05])
def test_a_second_ctrl_c_soon_after_the_first_keeps_what_the_first_saved(tmp_path, gap):
    # A study whose save on the way out takes a while (a million
    # measurements), so that the second Ctrl-C comes during it.
    path = tmp_path / "study.ckpt"
    study = dict(q=3, size=[8, 64], temps=[0.9, 1.0, 1.1], therm=100, sweeps=30000, seed=2, backend="cpu")
    script = textwrap.dedent(
        f"""
        import signal, sys, warnings
        warnings.simplefilter("ignore")
        signal.signal(signal.SIGINT, signal.default_int_handler)
        from warpmc import potts
        print("ready", flush=True)
        try:
            potts.run(**{study!r}, checkpoint={str(path)!r})
        except KeyboardInterrupt as e:
            print(len(e.results) if hasattr(e, "results") else -1, getattr(e, "checkpoint", None), flush=True)
            sys.exit(0)
        """
    )
    status, out, err = signalled(script, 1.5, [signal.SIGINT, signal.SIGINT], gap)
    # A second Ctrl-C that comes once the script has printed and is ending
    # (Python gives SIGINT back its default there) ends the process by the
    # signal, with everything already said.
    assert status == 0 or (status == -signal.SIGINT and len(out.split()) == 2), (status, err)
    finished, saved = out.split()
    assert saved == str(path), out
    # The rows finished so far (none where the first size's temperatures,
    # which finish together, were still running).
    assert int(finished) >= 0, out
    # What was saved continues (resumed elsewhere for at most half a
    # second: the rest of the run may take longer, or, on a busy machine
    # that interrupted it late, less).
    stop = stopped_after(0.5, lambda: potts.resume(path, checkpoint=tmp_path / "next.ckpt"))
    rows = stop.results if isinstance(stop, KeyboardInterrupt) else stop
    assert len(rows) >= int(finished)


def header(path) -> dict:
    """The JSON header of a checkpoint (after the magic, the version and
    the header's length)."""
    data = path.read_bytes()
    length = int.from_bytes(data[12:20], "little")
    return json.loads(data[20 : 20 + length])


def test_the_checkpoint_keeps_the_interval_between_saves(tmp_path):
    small = dict(q=2, size=8, temps=[2.0], therm=20, sweeps=100, backend="cpu")
    path = tmp_path / "every.ckpt"
    potts.run(**small, checkpoint=path, checkpoint_every=0.5)
    assert header(path)["checkpoint_every"] == 0.5
    # Resumed into another file, the interval goes with it unless another
    # is given.
    kept, other = tmp_path / "kept.ckpt", tmp_path / "other.ckpt"
    potts.resume(path, checkpoint=kept)
    assert header(kept)["checkpoint_every"] == 0.5
    potts.resume(path, checkpoint=other, checkpoint_every=2)
    assert header(other)["checkpoint_every"] == 2
    # The default is not written down.
    plain = tmp_path / "plain.ckpt"
    potts.run(**small, checkpoint=plain)
    assert "checkpoint_every" not in header(plain)


def test_rerun_runs_the_study_a_results_file_records(tmp_path, cli):
    study = dict(q=3, size=[8, 12], temps=[1.0, 1.1], therm=50, sweeps=300, samples=2, backend="cpu",
                 tempering=True, exchange_every=3, coupling=0.9, seed=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        rows = potts.run(**study)
        lines = tmp_path / "rows.jsonl"
        lines.write_text("\n".join(json.dumps(r) for r in rows))
        assert without_speed(potts.rerun(lines)) == without_speed(rows)
        # Changes laid over the recorded study.
        other = potts.rerun(lines, seed=5, size=16)
        assert [r["L"] for r in other] == [16, 16] and other[0]["run"]["seed"] == 5
        assert other[0]["run"]["config"]["exchange_every"] == 3
        # The command line's CSV file, read by Python, and the other way round.
        csv = tmp_path / "rows.csv"
        cli("potts", "run", "--config", str(lines), "--out", str(csv))
        assert without_speed(potts.rerun(csv)) == without_speed(rows)
    not_results = tmp_path / "study.toml"
    not_results.write_text("q = 2\nsize = 8\ntemp = 1.0\n")
    with pytest.raises(ValueError, match="not a results file"):
        potts.rerun(not_results)
