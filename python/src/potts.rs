//! `warpmc.potts`: temperature sweeps (`run`), whose results are the JSON
//! lines of `warpmc potts run --json`, and one chain at a time
//! (`Simulation`).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError, TryLockError};
use std::time::{Duration, Instant};

use numpy::{PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray2, PyReadonlyArray3, PyUntypedArrayMethods};
use pyo3::exceptions::{
    PyFileExistsError, PyMemoryError, PyOSError, PyOverflowError, PyRuntimeError, PyRuntimeWarning, PyTypeError,
    PyValueError,
};
use pyo3::prelude::*;
use pyo3::types::PyBool;
use warpmc_gpu::Device;
use warpmc_host::output::same_file;
use warpmc_potts::algorithm::MAX_SWEEPS_PER_CHAIN;
use warpmc_potts::interrupt::with_stop;
use warpmc_potts::protocol::check_study_memory;
use warpmc_potts::report::JsonLines;
use warpmc_potts::snapshot::{study_series_file_is_further, write_study_series};
use warpmc_potts::{
    Algorithm, BackendChoice, ConfigFile, Control, CpuBackend, InitialState, Lattice, Observer, PottsError, PottsModel,
    ProtocolConfig, Provenance, RunState, Runner, Simulation, checkpoint, describe_value_error,
};

use crate::devices;
use crate::errors;
use crate::signals::{Done, Signals};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(potts_run, m)?)?;
    m.add_function(wrap_pyfunction!(potts_resume, m)?)?;
    m.add_function(wrap_pyfunction!(potts_exact, m)?)?;
    m.add_function(wrap_pyfunction!(potts_recorded, m)?)?;
    m.add_function(wrap_pyfunction!(potts_analyze, m)?)?;
    m.add_function(wrap_pyfunction!(potts_too_short_to_alternate, m)?)?;
    m.add_class::<PySimulation>()?;
    Ok(())
}

/// `--temps` as the command line reads it: `T0:T1:DT` is a range, anything
/// else a comma list of numbers.
fn temperature_list(text: &str) -> PyResult<serde_json::Value> {
    if text.contains(':') {
        return Ok(text.into());
    }
    let list = text
        .split(',')
        .map(|t| {
            // JSON, the way to the configuration reader, holds no NaN or
            // infinity: refused here with the value named.
            t.trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| PyValueError::new_err(format!("temps: '{t}' is not a finite number")))
        })
        .collect::<PyResult<Vec<f64>>>()?;
    Ok(list.into())
}

/// A configuration the reader refused: a key it does not know is a
/// `TypeError`, as for any unexpected keyword argument; a bad value is a
/// `ValueError`.
fn config_error(message: &str) -> PyErr {
    let unknown = message.strip_prefix("unknown field `").and_then(|rest| rest.split_once('`')).map(|(key, _)| key);
    match unknown {
        Some(key) => PyTypeError::new_err(format!("run() got an unexpected keyword argument '{key}'")),
        None => PyValueError::new_err(message.to_string()),
    }
}

/// The protocol of each size of `options` (a JSON object of configuration
/// keys), through the TOML configuration's own reader, so that names,
/// defaults and checks are those of `warpmc potts run`.
fn study(options: &str) -> PyResult<Vec<ProtocolConfig>> {
    let mut map: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(options).map_err(|e| PyValueError::new_err(e.to_string()))?;
    // The words of the command line's flags for the values they parse.
    if let Some(serde_json::Value::String(s)) = map.get("init") {
        s.parse::<InitialState>().map_err(errors::potts)?;
    }
    if let Some(serde_json::Value::String(s)) = map.get("backend") {
        s.parse::<BackendChoice>().map_err(errors::gpu)?;
    }
    if let Some(serde_json::Value::String(s)) = map.get("algorithm") {
        s.parse::<Algorithm>().map_err(errors::potts)?;
    }
    if let Some(serde_json::Value::String(s)) = map.get("temps") {
        let list = temperature_list(s)?;
        map.insert("temps".into(), list);
    }
    // Each key on its own first, so that an error can name it.
    for (key, value) in &map {
        let one = serde_json::Map::from_iter([(key.clone(), value.clone())]);
        if let Err(e) = serde_json::from_value::<ConfigFile>(one.into()) {
            return Err(config_error(&describe_value_error(key, &e.to_string())));
        }
    }
    let file: ConfigFile = serde_json::from_value(map.into()).map_err(|e| config_error(&e.to_string()))?;
    file.resolve_sizes().map_err(|e| match e {
        PottsError::Missing(key) => PyTypeError::new_err(format!("missing {key}")),
        e => errors::potts(e),
    })
}

/// Where a run saves its state, and how often.
struct Saving {
    path: PathBuf,
    every: Duration,
    /// The seconds given for `every`, if not the default: kept in the
    /// checkpoint for a resumed run.
    given: Option<f64>,
    /// Whether the file holds an earlier state of this run before it
    /// starts (a run resumed from the same file).
    holds_earlier: bool,
    /// The file's claim against other runs, held to the end of the run.
    _claim: Option<warpmc_host::output::Claim>,
}

/// Seconds between checkpoints unless `checkpoint_every` says otherwise
/// (as on the command line).
const DEFAULT_CHECKPOINT_SECONDS: f64 = 300.0;

/// Checks `checkpoint` as a new run's or a resumed run's file before any
/// sweep: a regular file or nothing, not another run's checkpoint or
/// another file unless `force` (or it is the checkpoint being resumed,
/// `resumed_from`), writable, and claimed against other runs.
fn saving(
    checkpoint: Option<PathBuf>,
    every: Option<f64>,
    force: bool,
    resumed_from: Option<&Path>,
) -> PyResult<Option<Saving>> {
    let given = every;
    let every = match every {
        Some(s) if !s.is_finite() || s <= 0.0 => {
            return Err(PyValueError::new_err(format!("checkpoint_every = {s}: give a positive number of seconds")));
        }
        Some(_) if checkpoint.is_none() => {
            return Err(PyValueError::new_err("checkpoint_every needs a checkpoint to write: give checkpoint=FILE"));
        }
        Some(s) => s,
        None => DEFAULT_CHECKPOINT_SECONDS,
    };
    let Some(path) = checkpoint else { return Ok(None) };
    if path.as_os_str().is_empty() {
        return Err(PyValueError::new_err("checkpoint: an empty path names no file; give a file name"));
    }
    // Claimed before it is looked at: two runs started together cannot
    // both find it free.
    let claim = warpmc_host::output::Claim::take(&path, "checkpoint file").map_err(|e| errors::potts(e.into()))?;
    // A device or a FIFO would take the state and never give it back.
    if std::fs::metadata(&path).is_ok_and(|m| !m.is_file()) {
        return Err(PyOSError::new_err(format!(
            "{}: a checkpoint must be a regular file, to be read back by resume() (this is a device, a FIFO or a \
             directory)",
            path.display()
        )));
    }
    let resuming_here = resumed_from.is_some_and(|from| same_file(from, &path));
    if !resuming_here && !force {
        let p = path.display();
        match checkpoint::probe(&path).map_err(errors::potts)? {
            checkpoint::FileContents::Nothing => {}
            checkpoint::FileContents::Checkpoint => {
                return Err(PyFileExistsError::new_err(format!(
                    "{p} already holds a run's checkpoint; continue that run with warpmc.potts.resume('{p}') (a \
                     finished run's checkpoint gives its results again), or pass force=True to start a new run \
                     over it"
                )));
            }
            checkpoint::FileContents::Other => {
                return Err(PyFileExistsError::new_err(format!(
                    "{p} exists and is not a warpmc checkpoint; choose another checkpoint file, or pass force=True \
                     to overwrite it"
                )));
            }
        }
    }
    warpmc_host::output::check_writable(&path).map_err(|e| errors::potts(e.into()))?;
    // Beyond Duration's range means "never on a timer".
    let every = Duration::try_from_secs_f64(every).unwrap_or(Duration::MAX);
    Ok(Some(Saving { path, every, given, holds_earlier: resuming_here, _claim: claim }))
}

/// Looks for Ctrl-C between stretches of sweeps and saves the run's state
/// every so often.
struct Watch<'a> {
    signals: &'a Signals,
    /// Sweeps of the study's sizes before the one running, and of all of
    /// them: the progress callback counts the whole study's sweeps.
    sweeps_before: u64,
    sweeps_in_all: u64,
    saving: Option<&'a Saving>,
    last_saved: Instant,
    /// Time from the last periodic checkpoint to the next
    /// ([`checkpoint::next_interval`]).
    gap: Duration,
    /// Set when the last periodic checkpoint could not be written (warned
    /// once until one is written again).
    failing: bool,
    /// Whether a checkpoint was written during the run.
    saved: bool,
    /// Why the state could not be saved when the run was stopped.
    failed_on_stop: Option<String>,
    /// Why the series could not be written when the run stopped early.
    series_failed: Option<String>,
}

impl<'a> Watch<'a> {
    fn new(signals: &'a Signals, saving: Option<&'a Saving>, study: &[ProtocolConfig]) -> Self {
        let gap = saving.map_or(Duration::MAX, |s| s.every);
        Watch {
            signals,
            sweeps_before: 0,
            sweeps_in_all: study_sweeps(study),
            saving,
            last_saved: Instant::now(),
            gap,
            failing: false,
            saved: false,
            failed_on_stop: None,
            series_failed: None,
        }
    }
}

/// The sweeps of every size of `study`, all temperatures and samples.
fn study_sweeps(study: &[ProtocolConfig]) -> u64 {
    study.iter().fold(0u64, |n, cfg| n.saturating_add(cfg.total_sweeps()))
}

impl Observer for Watch<'_> {
    fn progress(&mut self, done: u64, _total: u64) {
        let done = self.sweeps_before.saturating_add(done);
        self.signals.set_progress(Done::Sweeps { done, total: self.sweeps_in_all });
    }

    fn control(&mut self) -> Control {
        if self.signals.stop() {
            Control::CheckpointAndStop
        } else if self.saving.is_some() && self.last_saved.elapsed() >= self.gap {
            Control::Checkpoint
        } else {
            Control::Continue
        }
    }

    fn checkpoint(&mut self, cfg: &ProtocolConfig, state: &RunState) -> warpmc_potts::Result<()> {
        let Some(saving) = self.saving else { return Ok(()) };
        let started = Instant::now();
        let written = checkpoint::write(&saving.path, cfg, state);
        self.gap = checkpoint::next_interval(saving.every, started.elapsed());
        match written {
            Ok(()) => {
                self.failing = false;
                self.saved = true;
            }
            // On the way out the state must be saved: the run ends, and
            // the exception says it could not be.
            Err(e) if self.signals.stop() => {
                self.failed_on_stop = Some(e.to_string());
                return Err(e);
            }
            // On the way (a full disk for a while): the previous checkpoint
            // is left whole, the run goes on and tries again next time. A
            // warnings filter that makes the warning an error ends the run
            // with the write's error.
            Err(e) => {
                if !self.failing {
                    let text = format!(
                        "{e}; the previous checkpoint, if any, is kept, and the run goes on and tries again \
                         every {} s",
                        self.gap.as_secs_f64()
                    );
                    let text = std::ffi::CString::new(text.replace('\0', "")).unwrap_or_default();
                    let warned = Python::attach(|py| PyErr::warn(py, &py.get_type::<PyRuntimeWarning>(), &text, 1));
                    if warned.is_err() {
                        return Err(e);
                    }
                    self.failing = true;
                }
            }
        }
        self.last_saved = Instant::now();
        Ok(())
    }
}

/// Runs the study's sizes from `first` on, from `state` (fresh, or read
/// from a checkpoint), one after another (as `warpmc potts run` does), and
/// returns the JSON line of each result, those a resumed run had finished
/// first; the finished run's state goes to the checkpoint file, if any.
/// Stopped by Ctrl-C or failing, it hands back the lines of the
/// temperatures finished before.
fn run_study(
    study: &[ProtocolConfig],
    first: usize,
    mut state: RunState,
    device: &Device,
    watch: &mut Watch<'_>,
    series: Option<&Path>,
) -> Result<Vec<String>, (PottsError, Vec<String>)> {
    // Every measurement of every size, as `potts run --series` writes it
    // (measurements not taken are NaN).
    let write_series = |state: &RunState, path: &Path| write_study_series(path, study, state);
    let mut lines = Vec::new();
    for (i, cfg) in study.iter().enumerate().skip(first) {
        watch.sweeps_before = study_sweeps(&study[..i]);
        let failed = |e: PottsError, lines: &mut Vec<String>| (e, std::mem::take(lines));
        let mut runner = Runner::on(cfg.clone(), device).map_err(|e| failed(e, &mut lines))?;
        // Each size's rows carry its own lattice and backend.
        let backend = state.size_backend(cfg, runner.backend_description());
        let provenance = Provenance::new(&study[0], backend.clone(), option_env!("WARPMC_COMMIT"))
            .map_err(|e| failed(e, &mut lines))?;
        let json = provenance.at_size(cfg.size(), Some(&backend)).map(|p| JsonLines::new(&p));
        let json = json.map_err(|e| failed(e, &mut lines))?;
        if i == first {
            // What a resumed run had finished of the sizes before this one.
            for r in state.earlier_results(cfg).map_err(|e| failed(e, &mut lines))? {
                // The backend its record names (checkpoints before it was
                // recorded name none: this run's is given).
                let ran = state.earlier_backends().find(|&(l, _)| l == r.size).map(|(_, b)| b);
                let earlier = provenance.at_size(r.size, ran).map_err(|e| failed(e, &mut lines))?;
                lines.push(JsonLines::new(&earlier).line(&r));
            }
        }
        match runner.run(&mut state, watch) {
            Ok(results) => lines.extend(results.iter().map(|r| json.line(r))),
            Err(e) => {
                if let Ok(done) = state.results(cfg) {
                    lines.extend(done.iter().map(|r| json.line(r)));
                }
                // Stopped early: the measurements taken are kept, as the
                // command line keeps them (a file already there is left as
                // it was when no temperature finished, or when it holds
                // more of this run's measurements).
                if let Some(path) = series
                    && (!lines.is_empty() || std::fs::symlink_metadata(path).is_err())
                    && !study_series_file_is_further(path, study, &state)
                    && let Err(written) = write_series(&state, path)
                {
                    watch.series_failed = Some(written.to_string());
                }
                return Err((e, lines));
            }
        }
        match study.get(i + 1) {
            Some(next) => state = state.next_size(cfg, next).map_err(|e| failed(e, &mut lines))?,
            // A finished run's checkpoint holds its end: resuming it gives
            // the results at once, without sweeping again.
            None => {
                if let Some(saving) = watch.saving {
                    checkpoint::write(&saving.path, cfg, &state).map_err(|e| failed(e, &mut lines))?;
                }
                if let Some(path) = series {
                    write_series(&state, path).map_err(|e| failed(e, &mut lines))?;
                }
            }
        }
    }
    Ok(lines)
}

/// Runs a study from `first` on and turns its outcome into Python's: the
/// lines, or the exception with the rows finished before (and, where the
/// state was saved, the checkpoint's path) attached for the package.
fn run_and_report(
    py: Python<'_>,
    study: &[ProtocolConfig],
    first: usize,
    mut state: RunState,
    saving: Option<Saving>,
    series: Option<Series>,
    progress: Option<Py<PyAny>>,
) -> PyResult<Vec<String>> {
    if let Some(s) = &saving {
        state.set_checkpoint_every(s.given);
    }
    // The results come back as JSON lines, then dicts: a few KiB each in
    // Python, checked before the run rather than after it; the
    // measurements (and their copies in each checkpoint) likewise.
    let results = study.iter().fold(0u64, |n, cfg| n.saturating_add(cfg.temperatures().len() as u64));
    warpmc_host::check_allocation(&format!("keeping the {results} results"), results.saturating_mul(RESULT_BYTES))
        .map_err(PyMemoryError::new_err)?;
    check_study_memory(study, saving.is_some()).map_err(errors::potts)?;
    let device = devices::select(study[first].backend()).map_err(errors::gpu)?;
    let signals = Signals::with_progress(progress);
    crate::fork::check_threads()?;
    let (outcome, saved, failed_on_stop, series_failed) = py.detach(|| {
        let mut watch = Watch::new(&signals, saving.as_ref(), study);
        let outcome = run_study(study, first, state, &device, &mut watch, series.as_ref().map(|s| s.path.as_path()));
        (outcome, watch.saved, watch.failed_on_stop, watch.series_failed)
    });
    if outcome.is_ok() {
        let total = study_sweeps(study);
        signals.finish(py, Done::Sweeps { done: total, total });
    }
    // A Ctrl-C during the run's last steps (its analysis, its last save),
    // or a second one, is raised here with what the run finished, not by
    // Python at its next instruction with nothing.
    signals.settle(py);
    let path = saving.as_ref().map(|s| s.path.to_string_lossy().into_owned());
    let earlier = saving.as_ref().is_some_and(|s| s.holds_earlier) || saved;
    let (e, finished, state_in, note) = match outcome {
        Ok(lines) if !signals.was_raised() => return Ok(lines),
        // Finished, and its state saved, before the interruption was seen.
        Ok(lines) => (signals.raised(), lines, path, None),
        Err((PottsError::Interrupted, finished)) => (signals.raised(), finished, path, None),
        // Stopped, but its state could not be saved: the file holds an
        // earlier one, or none.
        Err((_, finished)) if signals.was_raised() && failed_on_stop.is_some() => {
            let why = failed_on_stop.unwrap_or_default();
            let note = match &path {
                Some(p) if earlier => {
                    format!("warpmc: the run's state could not be saved ({why}); {p} holds an earlier one")
                }
                _ => format!("warpmc: the run's state could not be saved ({why})"),
            };
            (signals.raised(), finished, path.filter(|_| earlier), Some(note))
        }
        Err((e, finished)) => (errors::potts(e), finished, None, None),
    };
    // The rows finished travel with the exception (the package reads them
    // into its `results`), and so does the file that holds the run's state
    // (plain strings: making them runs no Python code, where a signal
    // could raise).
    let value = e.value(py);
    let _ = value.setattr("_warpmc_rows", finished);
    if let Some(path) = state_in {
        let _ = value.setattr("_warpmc_checkpoint", path);
    }
    let note = match (note, series_failed) {
        (note, None) => note,
        (None, Some(why)) => Some(format!("warpmc: the series could not be written ({why})")),
        (Some(note), Some(why)) => Some(format!("{note}; the series could not be written ({why})")),
    };
    if let Some(note) = note {
        let _ = value.setattr("_warpmc_note", note);
    }
    Err(e)
}

/// Runs the protocol `options` describes (a JSON object of configuration
/// keys) and returns one JSON line per temperature and size; with
/// `checkpoint`, saves its state there every `checkpoint_every` seconds,
/// on Ctrl-C and at the end.
#[pyfunction]
#[pyo3(signature = (options, checkpoint=None, checkpoint_every=None, force=false, series=None, progress=None))]
fn potts_run(
    py: Python<'_>,
    options: &str,
    checkpoint: Option<PathBuf>,
    checkpoint_every: Option<f64>,
    force: bool,
    series: Option<PathBuf>,
    progress: Option<Py<PyAny>>,
) -> PyResult<Vec<String>> {
    let study = study(options)?;
    let series = series_file(series, &[checkpoint.as_deref()])?;
    let saving = saving(checkpoint, checkpoint_every, force, None)?;
    let state = RunState::new(&study[0]);
    warn_all(py, study[0].start_warnings(false))?;
    run_and_report(py, &study, 0, state, saving, series, progress)
}

/// Raises each of `warnings` as a `RuntimeWarning` at the line of the
/// caller's code that called into the package (a warnings filter that
/// makes them errors stops the call here).
fn warn_all(py: Python<'_>, warnings: impl IntoIterator<Item = String>) -> PyResult<()> {
    let mut level = None;
    for w in warnings {
        let level = *level.get_or_insert_with(|| callers_level(py));
        let text = std::ffi::CString::new(w.replace('\0', "")).unwrap_or_default();
        PyErr::warn(py, &py.get_type::<PyRuntimeWarning>(), &text, level)?;
    }
    Ok(())
}

/// The `stacklevel` of the first frame outside the `warpmc` package, for
/// a warning raised from native code (1: the frame that called it).
fn callers_level(py: Python<'_>) -> i32 {
    let in_package = |frame: &Bound<'_, PyAny>| -> Option<bool> {
        let name = frame.getattr("f_globals").ok()?.get_item("__name__").ok()?;
        let name: String = name.extract().ok()?;
        Some(name == "warpmc" || name.starts_with("warpmc."))
    };
    let Ok(mut frame) = py.import("sys").and_then(|sys| sys.call_method1("_getframe", (0,))) else { return 1 };
    let mut level = 1;
    while in_package(&frame) == Some(true) {
        match frame.getattr("f_back") {
            Ok(back) if !back.is_none() => frame = back,
            _ => break,
        }
        level += 1;
    }
    level
}

/// Where a run writes every measurement (`series=`, the command line's
/// `--series`), checked before any sweep: a `.npy` name, not a checkpoint
/// nor the file of another of the run's outputs or inputs, writable, and
/// claimed against other runs.
struct Series {
    path: PathBuf,
    _claim: Option<warpmc_host::output::Claim>,
}

fn series_file(series: Option<PathBuf>, others: &[Option<&Path>]) -> PyResult<Option<Series>> {
    let Some(path) = series else { return Ok(None) };
    if path.is_dir() {
        return Err(pyo3::exceptions::PyIsADirectoryError::new_err(format!(
            "series: {} is a directory, not a file",
            path.display()
        )));
    }
    if !path.extension().and_then(|e| e.to_str()).is_some_and(|e| e.eq_ignore_ascii_case("npy")) {
        return Err(PyValueError::new_err(format!("series: the file must end in .npy: {}", path.display())));
    }
    if others.iter().flatten().any(|o| same_file(o, &path) || *o == path) {
        return Err(PyValueError::new_err(format!(
            "series: {} is also the run's checkpoint; give another file",
            path.display()
        )));
    }
    if matches!(checkpoint::probe(&path).map_err(errors::potts)?, checkpoint::FileContents::Checkpoint) {
        return Err(PyFileExistsError::new_err(format!(
            "series: {} holds a run's checkpoint; give another file",
            path.display()
        )));
    }
    let claim = warpmc_host::output::Claim::take(&path, "series file").map_err(|e| errors::potts(e.into()))?;
    warpmc_host::output::check_writable(&path).map_err(|e| errors::potts(e.into()))?;
    Ok(Some(Series { path, _claim: claim }))
}

/// Continues the run saved in the checkpoint `path` (on `backend`, if
/// given, else the run's own) and returns every line the whole run gives,
/// bit for bit those of a run never stopped; keeps saving its state to
/// `path`, or to `checkpoint` if given.
#[pyfunction]
#[pyo3(signature = (path, checkpoint=None, checkpoint_every=None, backend=None, force=false, series=None, progress=None))]
#[allow(clippy::too_many_arguments)]
fn potts_resume(
    py: Python<'_>,
    path: PathBuf,
    checkpoint: Option<PathBuf>,
    checkpoint_every: Option<f64>,
    backend: Option<&str>,
    force: bool,
    series: Option<PathBuf>,
    progress: Option<Py<PyAny>>,
) -> PyResult<Vec<String>> {
    if path.as_os_str().is_empty() {
        return Err(PyValueError::new_err("path: an empty path names no file; give the checkpoint file"));
    }
    if path.is_dir() {
        return Err(pyo3::exceptions::PyIsADirectoryError::new_err(format!(
            "{}: is a directory, not a checkpoint file",
            path.display()
        )));
    }
    // A long series is a large file: read without the GIL.
    let read = py.detach(|| checkpoint::read(&path));
    let checkpoint::Checkpoint { config: mut cfg, state } = read.map_err(errors::potts)?;
    if let Some(b) = backend {
        cfg = cfg.with_backend(b.parse::<BackendChoice>().map_err(errors::gpu)?);
    }
    let sizes = cfg.study_sizes();
    let study = sizes.iter().map(|&l| cfg.for_size(l)).collect::<Result<Vec<_>, _>>().map_err(errors::potts)?;
    let first = sizes.iter().position(|&l| l == cfg.size()).unwrap_or(0);
    // A finished run's checkpoint gives its rows again without being
    // written (it may be an archived, read-only file), unless another file
    // is named to take it.
    let finished = state.finished(&cfg) && sizes.last() == Some(&cfg.size());
    let target = checkpoint.or_else(|| (!finished).then(|| path.clone()));
    // As often as the run was saved before, unless told otherwise.
    // Checked even where nothing is written (a finished run's results).
    if let Some(s) = checkpoint_every.filter(|s| !s.is_finite() || *s <= 0.0) {
        return Err(PyValueError::new_err(format!("checkpoint_every = {s}: give a positive number of seconds")));
    }
    let every = checkpoint_every.or(state.checkpoint_every()).filter(|_| target.is_some());
    let series = series_file(series, &[Some(&path), target.as_deref()])?;
    let saving = saving(target, every, force, Some(&path))?;
    if !finished {
        warn_all(py, study[first].start_warnings(true))?;
    }
    run_and_report(py, &study, first, state, saving, series, progress)
}

/// The study the results file `path` records (a CSV file `potts run
/// --out` wrote, or the JSON lines of `--json`), as a JSON object of
/// `potts.run`'s keyword arguments.
#[pyfunction]
fn potts_recorded(py: Python<'_>, path: PathBuf) -> PyResult<String> {
    let bytes = py.detach(|| warpmc_potts::protocol::read_config_bytes(&path)).map_err(errors::potts)?;
    let text = String::from_utf8(bytes).map_err(|_| {
        PyValueError::new_err(format!("{}: not a results file warpmc wrote (not text)", path.display()))
    })?;
    let recorded = ConfigFile::recorded_in(&text, &path).ok_or_else(|| {
        PyValueError::new_err(format!(
            "{}: not a results file warpmc wrote (no '# provenance:' line, and no JSON lines)",
            path.display()
        ))
    })?;
    let c = recorded.map_err(errors::potts)?;
    let name = |v: serde_json::Result<serde_json::Value>| v.unwrap_or(serde_json::Value::Null);
    let mut args = serde_json::json!({
        "q": c.q,
        "size": match &c.sizes {
            Some(list) => serde_json::json!(list),
            None => serde_json::json!(c.size),
        },
        "coupling": c.coupling,
        "field": c.field,
        "temps": c.temps,
        "init": name(serde_json::to_value(c.init)),
        "therm": c.therm,
        "sweeps": c.sweeps,
        "measure_every": c.measure_every,
        "samples": c.samples,
        "seed": c.seed,
        "continue": c.continue_from_previous,
        "backend": name(serde_json::to_value(c.backend)),
        "algorithm": name(serde_json::to_value(c.algorithm)),
        "tempering": c.tempering,
    });
    if let Some(h) = c.height {
        args["height"] = h.into();
    }
    if let Some(n) = c.exchange_every {
        args["exchange_every"] = n.into();
    }
    Ok(args.to_string())
}

/// The exact values of `warpmc potts exact` as its JSON lines (without the
/// version, which the package adds): `temps` is `T0:T1:DT` or a comma list.
#[pyfunction]
fn potts_exact(
    py: Python<'_>,
    q: u32,
    sizes: Vec<usize>,
    height: Option<usize>,
    temps: &str,
    coupling: f64,
) -> PyResult<Vec<String>> {
    let temperatures = match temperature_list(temps)? {
        serde_json::Value::String(range) => warpmc_potts::Temperatures::Range(range),
        list => warpmc_potts::Temperatures::List(
            list.as_array().map(|v| v.iter().filter_map(serde_json::Value::as_f64).collect()).unwrap_or_default(),
        ),
    }
    .expand()
    .map_err(errors::potts)?;
    if sizes.is_empty() {
        return Err(PyValueError::new_err("size: give at least one lattice size"));
    }
    let tori: Vec<(usize, usize)> = sizes.iter().map(|&l| (l, height.unwrap_or(l))).collect();
    // q ≥ 3 counts on the CPU threads.
    crate::fork::check_threads()?;
    let signals = Signals::new();
    let rows = py.detach(|| {
        warpmc_potts::exact::exact_rows_or_stop(q, &tori, &temperatures, coupling, EXACT_ROW_BYTES, &mut || {
            signals.stop()
        })
    });
    match rows {
        Ok(rows) => Ok(rows.iter().map(|r| serde_json::to_string(r).expect("plain fields serialize")).collect()),
        Err(PottsError::Interrupted) => Err(signals.raised()),
        Err(e) => Err(errors::potts(e)),
    }
}

/// Whether a row of the run `config` (a row's `run.config`, as JSON) at
/// `temperature` was flagged because q = 2 Metropolis rejects too seldom
/// there to leave its alternation of two states (warned of before the run,
/// as on the command line); false where the configuration cannot be read.
#[pyfunction]
fn potts_too_short_to_alternate(config: &str, temperature: f64) -> bool {
    serde_json::from_str::<warpmc_potts::ProtocolConfig>(config).is_ok_and(|c| c.too_short_to_alternate(temperature))
}

/// The error analysis of `run` (the Γ-method with its checks) applied to
/// measurements given as an array of shape (samples, measurements, 2) of
/// (energy per site, order parameter), as a JSON row without the fields a
/// series does not tell (sweeps, timing, backend). Each sample's trailing
/// rows of NaN (measurements an interrupted run did not take) are left out;
/// any other NaN or infinity is refused.
#[pyfunction]
fn potts_analyze(
    py: Python<'_>,
    series: PyReadonlyArray3<'_, f64>,
    temperature: f64,
    size: usize,
    height: usize,
    measure_every: u64,
) -> PyResult<String> {
    use warpmc_potts::observables::{Measurement, RunFacts, analyze};
    if !(temperature.is_finite() && temperature > 0.0) {
        return Err(PyValueError::new_err(format!("temperature = {temperature}: give a positive, finite number")));
    }
    if measure_every == 0 {
        return Err(PyValueError::new_err("measure_every = 0: give the sweeps between measurements, at least 1"));
    }
    // The analysis reads only the number of sites from the model.
    let model = PottsModel::new(2, size, height).map_err(errors::potts)?;
    let array = series.as_array();
    if array.shape()[2] != 2 {
        return Err(PyValueError::new_err(format!(
            "series: the last axis holds (energy, order parameter), so its length is 2, not {}",
            array.shape()[2]
        )));
    }
    let measurements = (array.shape()[0] as u64).saturating_mul(array.shape()[1] as u64);
    warpmc_host::memory::check_allocation(
        &format!("analysing {measurements} measurements"),
        measurements.saturating_mul(ANALYSIS_BYTES_PER_MEASUREMENT),
    )
    .map_err(PyMemoryError::new_err)?;
    let mut samples = Vec::with_capacity(array.shape()[0]);
    for (s, sample) in array.outer_iter().enumerate() {
        let mut measured = Vec::with_capacity(sample.shape()[0]);
        let mut ended = None;
        for (i, row) in sample.outer_iter().enumerate() {
            let (e, m) = (row[0], row[1]);
            match (e.is_nan() && m.is_nan(), ended) {
                (true, _) => ended = ended.or(Some(i)),
                // The moments go up to the fourth power.
                (false, None) if fourth_power_finite(e) && fourth_power_finite(m) => {
                    measured.push(Measurement { energy: e, magnetization: m })
                }
                (false, None) if e.is_finite() && m.is_finite() => {
                    return Err(PyValueError::new_err(format!(
                        "series[{s}, {i}] = ({e:e}, {m:e}): beyond the range of the moments (the fourth power of \
                         a measurement must be finite; a run's energies stay far below)"
                    )));
                }
                (false, None) => {
                    return Err(PyValueError::new_err(format!(
                        "series[{s}, {i}] = ({e}, {m}): a measurement is two finite numbers, or two NaN where it \
                         was not taken"
                    )));
                }
                (false, Some(first)) => {
                    return Err(PyValueError::new_err(format!(
                        "series[{s}, {i}]: a measurement after the measurements not taken (NaN from series[{s}, \
                         {first}]); only a sample's last rows may be NaN"
                    )));
                }
            }
        }
        // A sample with no measurement taken adds nothing, and is not
        // counted.
        if !measured.is_empty() {
            samples.push(measured);
        }
    }
    let count = u32::try_from(samples.len())
        .map_err(|_| PyValueError::new_err(format!("series: {} samples, more than 2^32 - 1", samples.len())))?;
    let result = py.detach(|| {
        analyze(&model, temperature, &samples, measure_every).into_result(&RunFacts {
            size,
            temperature,
            sweeps: 0,
            samples: count,
            flips_per_ns: f64::NAN,
            backend: "",
        })
    });
    let mut value = serde_json::to_value(&result).expect("plain fields serialize");
    if let Some(fields) = value.as_object_mut() {
        for unknown in ["sweeps", "flips_per_ns", "backend"] {
            fields.remove(unknown);
        }
        fields.insert("height".into(), height.into());
        fields.insert("measure_every".into(), measure_every.into());
    }
    Ok(value.to_string())
}

/// Whether x⁴, the highest moment the analysis takes, is finite.
fn fourth_power_finite(x: f64) -> bool {
    (x * x * x * x).is_finite()
}

/// Host bytes the analysis of one measurement may take at most: its copy
/// (16), the Γ-method's ten columns (80), and the transforms of a padded
/// series (32 bytes a point, padded up to four times over).
const ANALYSIS_BYTES_PER_MEASUREMENT: u64 = 16 + 80 + 4 * 32;

/// Host bytes one exact row takes besides the library's own: its JSON line
/// in Rust and in Python and its dict (about 1.3 KiB measured with CPython
/// 3.11).
const EXACT_ROW_BYTES: u64 = 3 << 10;

/// Host bytes one result takes at most: its JSON line in Rust and its dict
/// in Python (about 8.4 KiB measured with CPython 3.11).
const RESULT_BYTES: u64 = 16 << 10;

/// Lends a value to [`Python::detach`], whose closure must be `Send`
/// although it runs on the calling thread: the backends of a simulation
/// are not `Send` (they may hold a GPU's buffers), but they hold no Python
/// object and never leave this thread.
struct OnThisThread<T>(T);

// SAFETY: `Python::detach` runs its closure on the thread that calls it;
// the value is only moved into that closure and back, never to another
// thread.
unsafe impl<T> Send for OnThisThread<T> {}

/// Each stretch of sweeps between looks for Ctrl-C lasts about this long.
const STRETCH: Duration = Duration::from_millis(100);

/// A Potts lattice at a temperature on a backend, advanced one sweep at a
/// time: one Markov chain of warpmc's checkerboard Metropolis update, the
/// same bits on the CPU and on a GPU. `algorithm` picks another update, as
/// in `run`: "heat-bath", "swendsen-wang" or "wolff" (which runs on the
/// CPU whatever the backend). Temperatures at which q = 2 Metropolis would
/// hardly ever reject a flip ((4|J| + |h|)/T below about 2.3e-10, one
/// rejection in 2^32 tries) are refused, as `run` refuses them: there the
/// chain only alternates between two states. Where even the costliest flip
/// is made with probability above 0.8, `sweeps` warns (RuntimeWarning,
/// once per temperature): the chain mixes very slowly there.
///
/// The model is H = -J sum_<ij> delta(s_i, s_j) - h sum_i delta(s_i, 0) on
/// a `size` × `height` torus (`height` defaults to `size`), with the
/// keyword arguments `coupling` J (1.0) and `field` h (0.0). `init` is the
/// start state: "ordered" (every spin 0, or 1 where h < 0, the state the
/// field favours; the default) or "random" (note that `run` starts random
/// by default). `backend` is "auto" (a usable GPU, else the CPU; the
/// default), "cpu" or "cuda" ("gpu" is taken for "cuda"). Arguments given
/// as None take these defaults.
///
/// `seed` names the chain's random numbers: the same seed gives the same
/// chain on every backend, and the same numbers at any size or
/// temperature, so simulations meant to be independent need seeds of
/// their own (`potts.run` keys each chain by the size and temperature
/// itself). Without one, a fresh seed is drawn from the operating system,
/// so that simulations made alike are independent chains; `sim.seed`
/// tells it, to run the chain again.
///
/// One on the CPU may be used by any thread, and may come back from
/// another process (pickled by `multiprocessing`): calls from several
/// threads take turns (a call waits, with the GIL released, while another
/// thread's call runs; `sweeps` lets others in between its stretches of
/// about 0.1 s, so a thread may watch `energy()` while another sweeps). One on a GPU
/// belongs to the thread that made it (its buffers and CUDA graphs belong
/// to that thread): another thread that uses it gets a `RuntimeError`, and
/// one dropped by another thread keeps its memory until the process ends;
/// an unpickled one belongs to the thread that unpickled it. `close()`,
/// or a `with` block, frees it at once. Pickling or `copy.deepcopy` makes
/// an independent copy that continues the same chain bit for bit.
///
/// Example:
///
/// >>> from warpmc.potts import Simulation
/// >>> sim = Simulation(q=2, size=64, temp=1.0, seed=1, backend="cpu")
/// >>> sim.sweeps(500).magnetization() > 0.9    # ordered below T_c ≈ 1.13
/// True
/// >>> sim.spins.shape, sim.spins.dtype
/// ((64, 64), dtype('uint8'))
#[pyclass(module = "warpmc.potts", name = "Simulation", weakref, frozen)]
pub(crate) struct PySimulation {
    /// Taken by one call at a time ([`PySimulation::lock`]).
    sim: Mutex<Held>,
    /// The thread whose call holds `sim` ([`this_thread`]; 0: none): a
    /// second call it makes before the first returns (from a signal
    /// handler run inside it) is refused rather than left waiting for
    /// itself.
    holder: AtomicU64,
    /// Calls of other threads waiting for `sim`, and the times it was
    /// taken: `sweeps` lets a waiting call in between its stretches
    /// (`std::sync::Mutex` is not fair: the sweeping thread would take it
    /// back before the waiting one woke).
    waiting: AtomicUsize,
    taken: AtomicU64,
    seed: u64,
    /// The temperature (its bits) whose alternation warning `sweeps` gave
    /// last: one warning per temperature swept at, not one per call.
    warned_at: std::sync::Mutex<Option<u64>>,
}

/// A number for the calling thread, never 0 (`ThreadId::as_u64` is not
/// stable Rust).
fn this_thread() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    thread_local!(static ME: u64 = NEXT.fetch_add(1, Ordering::Relaxed));
    ME.with(|me| *me)
}

/// The simulation taken by one call: gives `sim` back, and says no thread
/// holds it, when dropped.
struct Locked<'a> {
    held: MutexGuard<'a, Held>,
    holder: &'a AtomicU64,
}

impl std::ops::Deref for Locked<'_> {
    type Target = Held;
    fn deref(&self) -> &Held {
        &self.held
    }
}

impl std::ops::DerefMut for Locked<'_> {
    fn deref_mut(&mut self) -> &mut Held {
        &mut self.held
    }
}

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        self.holder.store(0, Ordering::SeqCst);
    }
}

/// A simulation as its Python object holds it.
enum Held {
    /// On the host's cores: `Send`, so any thread may use it (one call at
    /// a time, through the object's lock) and free it.
    Cpu(Simulation<CpuBackend>),
    /// On a GPU (or any backend whose type is not known).
    Device(OwnedByThread<Simulation>),
    /// Closed: its memory given back ([`PySimulation::close`]).
    Closed,
}

/// The simulation `$held` holds as `$s` in `$body`, whatever its backend's
/// type, once this thread is known to be its owner (`$get`: `get` or
/// `get_mut`, as `$held` is borrowed).
macro_rules! with_sim {
    ($held:expr, $get:ident, $s:ident => $body:expr) => {
        match $held {
            Held::Cpu($s) => $body,
            Held::Device(owned) => {
                let $s = owned.$get()?;
                $body
            }
            Held::Closed => return Err(closed()),
        }
    };
}

fn closed() -> PyErr {
    PyValueError::new_err("the Simulation is closed")
}

fn check_owner(owner: std::thread::ThreadId) -> PyResult<()> {
    if std::thread::current().id() == owner {
        Ok(())
    } else {
        Err(PyRuntimeError::new_err(
            "a Simulation can be used only by the thread that made it (make one in each thread)",
        ))
    }
}

/// A value only the thread that made it may use: a simulation's backend
/// may hold a GPU's buffers and CUDA graphs, which belong to that thread.
/// Another thread gets a `RuntimeError` (not pyo3's panic for unsendable
/// classes); a value dropped on another thread is leaked rather than freed
/// there.
struct OwnedByThread<T> {
    owner: std::thread::ThreadId,
    value: std::mem::ManuallyDrop<T>,
}

// SAFETY: the value is reached only through `get` and `get_mut`, which
// refuse every thread but the owner, and `drop` frees it only on the owner
// thread; moving the wrapper between threads moves no access to the value.
unsafe impl<T> Send for OwnedByThread<T> {}
// SAFETY: as for `Send`: no thread but the owner reaches the value.
unsafe impl<T> Sync for OwnedByThread<T> {}

impl<T> OwnedByThread<T> {
    fn new(value: T) -> Self {
        OwnedByThread { owner: std::thread::current().id(), value: std::mem::ManuallyDrop::new(value) }
    }

    fn get(&self) -> PyResult<&T> {
        check_owner(self.owner)?;
        Ok(&self.value)
    }

    fn get_mut(&mut self) -> PyResult<&mut T> {
        check_owner(self.owner)?;
        Ok(&mut self.value)
    }
}

impl<T> Drop for OwnedByThread<T> {
    fn drop(&mut self) {
        if std::thread::current().id() == self.owner {
            // SAFETY: dropped once, here, on the owner thread.
            unsafe { std::mem::ManuallyDrop::drop(&mut self.value) }
        }
    }
}

/// A seed from the operating system's randomness (std's hasher keys come
/// from it).
/// The outcome of work that lent `signals` as its stop hook
/// ([`with_stop`]): the exception a signal handler raised meanwhile (the
/// work gave up, or finished before it looked again), else the work's own
/// result.
fn heard<T>(py: Python<'_>, signals: &Signals, made: Result<T, PottsError>) -> PyResult<T> {
    signals.settle(py);
    if signals.was_raised() {
        return Err(signals.raised());
    }
    made.map_err(invalid)
}

fn fresh_seed() -> u64 {
    use std::hash::BuildHasher;
    std::collections::hash_map::RandomState::new().hash_one(std::process::id())
}

fn invalid(e: PottsError) -> PyErr {
    errors::potts(e)
}

/// The integer argument `name` within `min ..= max`: a `ValueError` that
/// names the argument and the range otherwise, a `TypeError` for anything
/// but an integer (a bool included). pyo3's own conversion names neither
/// and raises `OverflowError` for a negative or huge value.
fn whole(name: &str, value: &Bound<'_, PyAny>, min: i128, max: i128) -> PyResult<i128> {
    if is_bool(value) {
        return Err(PyTypeError::new_err(format!("{name} must be an integer, not bool")));
    }
    let Ok(index) = value.call_method0("__index__") else {
        return Err(PyTypeError::new_err(format!("{name} must be an integer, not {}", type_name(value))));
    };
    match index.extract::<i128>() {
        Ok(v) if (min..=max).contains(&v) => Ok(v),
        _ => Err(PyValueError::new_err(format!("{name} = {index}: expected a whole number from {min} to {max}"))),
    }
}

/// The real argument `name`: a `TypeError` naming it for a bool (Python's
/// or numpy's, which would pass as 1.0 or 0.0) or anything but a number,
/// and a `ValueError` naming it for an integer beyond a float's range
/// (where Python's float() says only "int too large to convert to float").
fn real(name: &str, value: &Bound<'_, PyAny>) -> PyResult<f64> {
    if is_bool(value) {
        return Err(PyTypeError::new_err(format!("{name} must be a number, not bool")));
    }
    match value.extract::<f64>() {
        Ok(v) => Ok(v),
        Err(e) if e.is_instance_of::<PyOverflowError>(value.py()) => {
            let digits = value.str().map(|s| s.to_string()).unwrap_or_default();
            let shown = if digits.len() <= 24 {
                digits
            } else {
                format!("{}… ({} digits)", &digits[..8], digits.trim_start_matches('-').len())
            };
            Err(PyValueError::new_err(format!("{name} = {shown}: out of range (beyond the largest float)")))
        }
        Err(_) => Err(PyTypeError::new_err(format!("{name} must be a number, not {}", type_name(value)))),
    }
}

/// The string argument `name` (`default` for None): a `TypeError` naming
/// it and its `words` for anything else.
fn word(name: &str, value: Option<&Bound<'_, PyAny>>, default: &str, words: &str) -> PyResult<String> {
    match value {
        None => Ok(default.to_string()),
        Some(v) if v.is_none() => Ok(default.to_string()),
        Some(v) => v
            .extract::<String>()
            .map_err(|_| PyTypeError::new_err(format!("{name} must be a string, {words}, not {}", type_name(v)))),
    }
}

/// Whether `value` is a bool, Python's or numpy's.
fn is_bool(value: &Bound<'_, PyAny>) -> bool {
    value.is_instance_of::<PyBool>() || value.get_type().name().is_ok_and(|n| n == "bool_" || n == "bool")
}

fn type_name(value: &Bound<'_, PyAny>) -> String {
    value.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "object".into())
}

#[pymethods]
impl PySimulation {
    #[new]
    #[pyo3(signature = (
        q, size, temp, seed=None, backend=None, *, height=None, coupling=None, field=None, init=None,
        algorithm=None
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        q: &Bound<'_, PyAny>,
        size: &Bound<'_, PyAny>,
        temp: &Bound<'_, PyAny>,
        seed: Option<&Bound<'_, PyAny>>,
        backend: Option<&Bound<'_, PyAny>>,
        height: Option<&Bound<'_, PyAny>>,
        coupling: Option<&Bound<'_, PyAny>>,
        field: Option<&Bound<'_, PyAny>>,
        init: Option<&Bound<'_, PyAny>>,
        algorithm: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        // None: the default, as for the numbers.
        let backend = word("backend", backend, "auto", "'auto', 'cpu' or 'cuda'")?;
        let init = word("init", init, "ordered", "'ordered' or 'random'")?;
        let algorithm =
            word("algorithm", algorithm, "metropolis", "'metropolis', 'heat-bath', 'swendsen-wang' or 'wolff'")?;
        let (backend, init, algorithm) = (backend.as_str(), init.as_str(), algorithm.as_str());
        let q = whole("q", q, 2, warpmc_potts::model::MAX_Q.into())? as u32;
        let size = whole("size", size, 0, i64::MAX.into())? as usize;
        let temp = real("temp", temp)?;
        // Without a seed, a fresh one: chains made alike must not share
        // their random numbers (their error bars would come out too small).
        let seed = match seed {
            Some(s) => whole("seed", s, 0, u64::MAX.into())? as u64,
            None => fresh_seed(),
        };
        let height = height.map(|h| whole("height", h, 0, i64::MAX.into())).transpose()?.map(|h| h as usize);
        // None: the defaults, J = 1 and no field.
        let coupling = coupling.map(|j| real("coupling", j)).transpose()?.unwrap_or(1.0);
        let field = field.map(|h| real("field", h)).transpose()?.unwrap_or(0.0);
        let model = PottsModel::new(q, size, height.unwrap_or(size))
            .and_then(|m| m.with_coupling(coupling))
            .and_then(|m| m.with_field(field))
            .map_err(invalid)?;
        // Sizes are checked before anything is allocated.
        model.check_host_memory(0).map_err(invalid)?;
        let init: InitialState = init.parse().map_err(invalid)?;
        let algorithm: Algorithm = algorithm.parse().map_err(invalid)?;
        let device = devices::select(backend.parse().map_err(errors::gpu)?).map_err(errors::gpu)?;
        crate::fork::check_threads()?;
        // Making a large lattice, and Wolff's measurement of its cluster
        // size, take seconds: Ctrl-C is heard meanwhile.
        let signals = Signals::new();
        let sim = match device {
            // With its backend's type known, a CPU simulation is `Send`:
            // any thread may use and free it.
            Device::Cpu { .. } => {
                let sim = py.detach(|| {
                    with_stop(&mut || signals.stop(), || -> Result<Simulation<CpuBackend>, PottsError> {
                        let mut sim = Simulation::on_cpu_with(model, algorithm, temp)?.with_seed(seed);
                        sim.start(init)?;
                        Ok(sim)
                    })
                });
                Held::Cpu(heard(py, &signals, sim)?)
            }
            device => {
                let made = py.detach(|| {
                    with_stop(&mut || signals.stop(), || -> Result<OnThisThread<Simulation>, PottsError> {
                        let mut sim = Simulation::with_algorithm(model, algorithm, temp, &device)?.with_seed(seed);
                        sim.start(init)?;
                        Ok(OnThisThread(sim))
                    })
                });
                Held::Device(OwnedByThread::new(heard(py, &signals, made)?.0))
            }
        };
        Ok(PySimulation {
            sim: Mutex::new(sim),
            holder: AtomicU64::new(0),
            waiting: AtomicUsize::new(0),
            taken: AtomicU64::new(0),
            seed,
            warned_at: Mutex::new(None),
        })
    }

    /// Runs `n` sweeps (Metropolis and heat-bath: one update per site;
    /// Swendsen–Wang: one flip of every cluster; Wolff: as many clusters as
    /// flip about N sites in equilibrium, far fewer sites from a random
    /// start below T_c, whose clusters are small: start such a chain with
    /// init="ordered") and returns the
    /// simulation, so that calls chain. Ctrl-C stops it between sweeps with
    /// `KeyboardInterrupt` (Python hears signals on its main thread only:
    /// on the CPU, a call on another thread is stopped by `close()` from
    /// any thread, and then raises ValueError); the sweeps done so far are
    /// kept. A
    /// chain runs at most 2^31 - 1 sweeps in all (its random numbers are
    /// numbered by sweep); more are refused before the first.
    fn sweeps<'py>(slf: Bound<'py, Self>, py: Python<'py>, n: &Bound<'py, PyAny>) -> PyResult<Bound<'py, Self>> {
        let n = whole("n", n, 0, u64::MAX.into())? as u64;
        // The chain's limit, checked before the first sweep rather than
        // when it is reached.
        let this = slf.get();
        let (done, slowest) = with_sim!(&*this.lock(py)?, get, s => (
            s.sweeps_done(),
            warpmc_potts::slowest_sweep_secs(s.algorithm(), s.model().sites() as u64, 1, 1)
        ));
        if done.checked_add(n).is_none_or(|end| end > MAX_SWEEPS_PER_CHAIN) {
            return Err(PyValueError::new_err(format!(
                "a chain runs at most {MAX_SWEEPS_PER_CHAIN} sweeps; {done} done and {n} more asked"
            )));
        }
        // Before the first sweep at a temperature where q = 2 Metropolis
        // alternates (once per temperature; a filter that makes it an
        // error stops the call before it sweeps).
        let (temp, warning) = with_sim!(&*this.lock(py)?, get, s => (
            s.temperature(),
            warpmc_potts::protocol::alternation_warning(
                s.algorithm(), s.model().q(), s.model().coupling(), s.model().field(), &[s.temperature()]
            )
        ));
        if n > 0 && warning.is_some() {
            // Neither the lock nor a borrow is held while the warning runs
            // Python code (a `showwarning` may use the simulation).
            let warned_at = |set: Option<u64>| -> Option<u64> {
                let mut at = this.warned_at.lock().unwrap_or_else(PoisonError::into_inner);
                match set {
                    Some(bits) => at.replace(bits),
                    None => *at,
                }
            };
            if warned_at(None) != Some(temp.to_bits()) {
                warn_all(py, warning)?;
                warned_at(Some(temp.to_bits()));
            }
        }
        crate::fork::check_threads()?;
        let mut left = n;
        let mut stretch = 1u64;
        while left > 0 {
            let count = stretch.min(left);
            let started;
            {
                // Held for the stretch only: a signal handler run between
                // stretches, or another thread, may use (or close) the
                // simulation.
                let mut held = this.lock(py)?;
                started = Instant::now();
                with_sim!(&mut *held, get_mut, s => {
                    // Another thread may have swept the chain meanwhile.
                    let done = s.sweeps_done();
                    if done.saturating_add(left) > MAX_SWEEPS_PER_CHAIN {
                        return Err(PyValueError::new_err(format!(
                            "a chain runs at most {MAX_SWEEPS_PER_CHAIN} sweeps; {done} done (other threads swept \
                             it during this call) and {left} more of the {n} asked"
                        )));
                    }
                    let sim = OnThisThread(s);
                    py.detach(move || {
                        let sim = sim;
                        sim.0.sweeps(count)?;
                        sim.0.synchronize()
                    })
                    .map_err(invalid)?
                });
            }
            left -= count;
            py.check_signals()?;
            stretch = warpmc_potts::next_stretch(
                stretch,
                count,
                started.elapsed().as_secs_f64(),
                STRETCH.as_secs_f64(),
                slowest,
            );
            if left > 0 {
                this.let_others_in(py);
            }
        }
        Ok(slf)
    }

    /// Energy per site, H/N.
    fn energy(&self, py: Python<'_>) -> PyResult<f64> {
        crate::fork::check_threads()?;
        with_sim!(&mut *self.lock(py)?, get_mut, s => {
            let sim = OnThisThread(s);
            py.detach(move || {
                let sim = sim;
                sim.0.energy()
            })
            .map_err(invalid)
        })
    }

    /// The order parameter (q·N_max/N − 1)/(q − 1): 1 when every spin is
    /// in one state, about 0 when the states are mixed.
    fn magnetization(&self, py: Python<'_>) -> PyResult<f64> {
        crate::fork::check_threads()?;
        with_sim!(&mut *self.lock(py)?, get_mut, s => {
            let sim = OnThisThread(s);
            py.detach(move || {
                let sim = sim;
                sim.0.magnetization()
            })
            .map_err(invalid)
        })
    }

    /// The spins, a new numpy `uint8` array of shape (height, size) with
    /// values 0 … q − 1. Assigning an integer array of that shape loads it
    /// as the lattice (a masked array is refused: its masked elements hold
    /// no spin).
    #[getter]
    fn spins<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<u8>>> {
        crate::fork::check_threads()?;
        // The array is made with the simulation given back: making it may
        // run Python code (a garbage collection's finalizers).
        let lattice = lattice_of(&mut *self.lock(py)?)?;
        spins_array(py, &lattice)
    }

    #[setter]
    fn set_spins(&self, spins: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::fork::check_threads()?;
        let py = spins.py();
        let (w, h, q) = with_sim!(&*self.lock(py)?, get, s => {
            let model = s.model();
            (model.width(), model.height(), model.q())
        });
        let numpy = spins.py().import("numpy")?;
        // numpy.asarray would drop the mask and load whatever the masked
        // elements hold.
        if spins.is_instance(&numpy.getattr("ma")?.getattr("MaskedArray")?)? {
            return Err(PyTypeError::new_err(
                "spins cannot be a masked array (a masked element holds no spin): fill it first, e.g. \
                 spins.filled(0)",
            ));
        }
        let shape_error = || PyValueError::new_err(format!("spins must be an integer array of shape ({h}, {w})"));
        let bad = || PyValueError::new_err(format!("spins must be states 0 … {} (q = {q})", q - 1));
        let array = numpy.call_method1("asarray", (spins,))?;
        let dtype = array.getattr("dtype")?;
        let kind: String = dtype.getattr("kind")?.extract()?;
        if !matches!(kind.as_str(), "i" | "u") {
            // The wrong kind of value (floats, booleans, None, strings) is a
            // type error, as numpy's own integer-only functions say it.
            let name: String = dtype.str()?.extract()?;
            let what = if spins.is_none() { "None".to_string() } else { format!("an array of dtype {name}") };
            return Err(PyTypeError::new_err(format!(
                "spins must be an integer array of shape ({h}, {w}), not {what}"
            )));
        }
        // The shape before any conversion: a broadcast view of a huge shape
        // is refused, not copied.
        if array.getattr("shape")?.extract::<Vec<usize>>().ok().as_deref() != Some(&[h, w][..]) {
            return Err(shape_error());
        }
        // Contiguous and aligned (a view at an odd byte offset is copied).
        let require = |dtype: &str| numpy.call_method1("require", (&array, dtype, ["C", "A"]));
        let sites = (w as u64).saturating_mul(h as u64);
        let bytes = if dtype.getattr("itemsize")?.extract::<usize>()? == 1 && kind == "u" {
            // Bytes already (the dtype `spins` gives): copied as they are.
            warpmc_host::check_allocation(&format!("loading a {w} × {h} lattice"), sites.saturating_mul(3))
                .map_err(PyMemoryError::new_err)?;
            let array = require("uint8")?;
            let array: PyReadonlyArray2<'_, u8> = array.extract().map_err(|_| shape_error())?;
            if array.shape() != [h, w] {
                return Err(shape_error());
            }
            array.as_slice().map_err(|_| shape_error())?.to_vec()
        } else {
            // Any other integers through int64, each checked to be a state.
            warpmc_host::check_allocation(&format!("loading a {w} × {h} lattice"), sites.saturating_mul(10))
                .map_err(PyMemoryError::new_err)?;
            let array = require("int64")?;
            let array: PyReadonlyArray2<'_, i64> = array.extract().map_err(|_| shape_error())?;
            if array.shape() != [h, w] {
                return Err(shape_error());
            }
            let values = array.as_slice().map_err(|_| shape_error())?;
            values.iter().map(|&s| u8::try_from(s).map_err(|_| bad())).collect::<PyResult<Vec<u8>>>()?
        };
        let lattice = Lattice::from_spins(w, h, q, bytes).ok_or_else(bad)?;
        with_sim!(&mut *self.lock(py)?, get_mut, s => {
            s.set_lattice(&lattice).map_err(invalid)?;
        });
        Ok(())
    }

    /// The temperature of the next sweeps (assignable; refused, as by
    /// `run`, where q = 2 Metropolis would hardly ever reject a flip).
    #[getter]
    fn temperature(&self, py: Python<'_>) -> PyResult<f64> {
        Ok(with_sim!(&*self.lock(py)?, get, s => s.temperature()))
    }

    #[setter]
    fn set_temperature(&self, py: Python<'_>, temp: &Bound<'_, PyAny>) -> PyResult<()> {
        let temp = real("temperature", temp)?;
        // Wolff's calibration above T_c fills a random lattice on warpmc's
        // threads.
        crate::fork::check_threads()?;
        // Wolff measures its clusters anew at each temperature (seconds on
        // large lattices): other Python threads run meanwhile, and Ctrl-C
        // is heard.
        let signals = Signals::new();
        let set = with_sim!(&mut *self.lock(py)?, get_mut, s => {
            let sim = OnThisThread(s);
            let signals = &signals;
            py.detach(move || {
                let sim = sim;
                with_stop(&mut || signals.stop(), || sim.0.set_temperature(temp).map(|_| ()))
            })
        });
        // Signal handlers run with the simulation given back.
        heard(py, &signals, set)
    }

    /// The coupling J.
    #[getter]
    fn coupling(&self, py: Python<'_>) -> PyResult<f64> {
        Ok(with_sim!(&*self.lock(py)?, get, s => s.model().coupling()))
    }

    /// The field h (favouring state 0).
    #[getter]
    fn field(&self, py: Python<'_>) -> PyResult<f64> {
        Ok(with_sim!(&*self.lock(py)?, get, s => s.model().field()))
    }

    /// Pickling and `copy.copy`/`copy.deepcopy`: the model, temperature,
    /// algorithm, seed, backend, spins and sweeps done, from which the
    /// copy continues the same chain bit for bit (an independent object,
    /// one on a GPU owned by the thread that makes it).
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyAny>,))> {
        crate::fork::check_threads()?;
        // Taken once for the whole state, every value from the same moment,
        // and given back before any Python object is made.
        let (model, temp, algorithm, backend, sweeps_done, lattice) = {
            let mut held = self.lock(py)?;
            let values = with_sim!(&*held, get, s => (
                s.model().clone(), s.temperature(), s.algorithm().name(), s.backend_name(), s.sweeps_done()
            ));
            let lattice = lattice_of(&mut held)?;
            (values.0, values.1, values.2, values.3, values.4, lattice)
        };
        let state = pyo3::types::PyDict::new(py);
        state.set_item("q", model.q())?;
        state.set_item("size", model.width())?;
        state.set_item("height", model.height())?;
        state.set_item("temp", temp)?;
        state.set_item("coupling", model.coupling())?;
        state.set_item("field", model.field())?;
        state.set_item("algorithm", algorithm)?;
        state.set_item("backend", backend)?;
        state.set_item("sweeps_done", sweeps_done)?;
        state.set_item("seed", self.seed)?;
        state.set_item("spins", spins_array(py, &lattice)?)?;
        let remake = py.import("warpmc.potts")?.getattr("_simulation_from_state")?;
        Ok((remake, (state.into_any(),)))
    }

    /// Number of states.
    #[getter]
    fn q(&self, py: Python<'_>) -> PyResult<u32> {
        Ok(with_sim!(&*self.lock(py)?, get, s => s.model().q()))
    }

    /// Lattice width L.
    #[getter]
    fn size(&self, py: Python<'_>) -> PyResult<usize> {
        Ok(with_sim!(&*self.lock(py)?, get, s => s.model().width()))
    }

    /// Lattice height L'.
    #[getter]
    fn height(&self, py: Python<'_>) -> PyResult<usize> {
        Ok(with_sim!(&*self.lock(py)?, get, s => s.model().height()))
    }

    /// The seed of the chain's random numbers.
    #[getter]
    fn seed(&self) -> u64 {
        self.seed
    }

    /// The update algorithm: "metropolis", "heat-bath", "swendsen-wang"
    /// or "wolff".
    #[getter]
    fn algorithm(&self, py: Python<'_>) -> PyResult<&'static str> {
        Ok(with_sim!(&*self.lock(py)?, get, s => s.algorithm().name()))
    }

    /// Sweeps done: the number of the next sweep. Sweep n's random numbers
    /// depend only on the seed and n, so a simulation saved as its
    /// arguments, seed, spins and sweeps_done continues exactly: made anew
    /// with the same arguments and seed, given the spins, and assigned the
    /// sweeps_done, its next sweeps are those the saved one would have run.
    #[getter]
    fn sweeps_done(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(with_sim!(&*self.lock(py)?, get, s => s.sweeps_done()))
    }

    #[setter]
    fn set_sweeps_done(&self, n: &Bound<'_, PyAny>) -> PyResult<()> {
        let py = n.py();
        let n = whole("sweeps_done", n, 0, MAX_SWEEPS_PER_CHAIN.into())? as u64;
        with_sim!(&mut *self.lock(py)?, get_mut, s => {
            let chain = s.chain();
            s.set_chain(chain, n);
        });
        Ok(())
    }

    /// Where the chain runs: "cpu" or "cuda", as the ``backend`` argument
    /// takes it (a simulation made with "auto" says which it got).
    #[getter]
    fn backend(&self, py: Python<'_>) -> PyResult<String> {
        Ok(with_sim!(&*self.lock(py)?, get, s => s.backend_name().to_string()))
    }

    /// Where the chain runs, in words: CPU threads and storage, or the GPU
    /// and its kernel.
    #[getter]
    fn backend_description(&self, py: Python<'_>) -> PyResult<String> {
        Ok(with_sim!(&*self.lock(py)?, get, s => s.backend_description()))
    }

    /// Frees the lattice and its buffers now (GPU memory included) rather
    /// than when the object is collected; the simulation is then closed,
    /// and using it raises ValueError. Closing twice is allowed. ``with
    /// Simulation(...) as sim:`` closes it at the end of the block.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let mut held = self.lock(py)?;
        match &*held {
            Held::Closed => return Ok(()),
            Held::Cpu(_) => {}
            Held::Device(owned) => {
                owned.get()?;
            }
        }
        *held = Held::Closed;
        Ok(())
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    #[pyo3(signature = (*exc))]
    fn __exit__(&self, exc: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        // An exception leaving the block goes on: the simulation is closed
        // whatever `exc` holds.
        self.close(exc.py())?;
        Ok(false)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        // Shown anywhere (a debugger, a list printed by another thread, a
        // signal handler inside one of its own calls, which would wait for
        // itself). Another thread's call is waited for; Ctrl-C meanwhile is
        // raised, not swallowed.
        if self.holder.load(Ordering::SeqCst) == this_thread() {
            return Ok(format!("Simulation(in use by a call of this thread, seed={})", self.seed));
        }
        let held = self.lock(py)?;
        if matches!(*held, Held::Closed) {
            return Ok(format!("Simulation(closed, seed={})", self.seed));
        }
        // Only the owner may look inside one on a GPU.
        Ok(self.describe(&held).unwrap_or_else(|_| format!("Simulation(owned by another thread, seed={})", self.seed)))
    }
}

/// The lattice of the simulation `held` holds.
fn lattice_of(held: &mut Held) -> PyResult<Lattice> {
    Ok(with_sim!(held, get_mut, s => s.lattice().map_err(invalid)?))
}

/// `lattice` as a new numpy array of shape (height, width).
fn spins_array<'py>(py: Python<'py>, lattice: &Lattice) -> PyResult<Bound<'py, PyArray2<u8>>> {
    let (w, h) = (lattice.width(), lattice.height());
    PyArray1::from_slice(py, lattice.spins()).reshape([h, w])
}

impl PySimulation {
    /// The simulation, taken for one call. Another thread's call waits,
    /// with the GIL released (on the main thread, Ctrl-C is heard
    /// meanwhile), until this one gives it back; a second call by the
    /// thread that holds it (a signal handler run inside the first) is
    /// refused, since it would wait for itself.
    fn lock(&self, py: Python<'_>) -> PyResult<Locked<'_>> {
        let me = this_thread();
        let held = match self.sim.try_lock() {
            Ok(held) => Ok(held),
            Err(TryLockError::WouldBlock) => {
                if self.holder.load(Ordering::SeqCst) == me {
                    return Err(PyRuntimeError::new_err(
                        "the Simulation is in use by a call of this same thread that has not returned (a \
                         signal handler or a finalizer run inside that call used it): use it once that call \
                         is over",
                    ));
                }
                // In a child forked while another thread of its parent held
                // the simulation, no thread will give it back.
                crate::fork::check_not_forked()?;
                self.waiting.fetch_add(1, Ordering::SeqCst);
                let held = self.wait_for_sim(py);
                self.waiting.fetch_sub(1, Ordering::SeqCst);
                held?
            }
            Err(TryLockError::Poisoned(p)) => Err(p.into_inner()),
        };
        // A panic inside warpmc while the simulation was taken (pyo3 raised
        // it as a PanicException) may have left it half updated.
        let held = held.map_err(|_| {
            PyRuntimeError::new_err(
                "the Simulation stopped in an internal error of warpmc and cannot be used again; make a new one",
            )
        })?;
        self.holder.store(me, Ordering::SeqCst);
        self.taken.fetch_add(1, Ordering::SeqCst);
        Ok(Locked { held, holder: &self.holder })
    }

    /// Waits for another thread's call to give the simulation back: with
    /// the GIL released, looking every 50 ms for signals (a waiting main
    /// thread hears Ctrl-C). `Ok(Err(_))` is a poisoned simulation.
    fn wait_for_sim(&self, py: Python<'_>) -> PyResult<Result<MutexGuard<'_, Held>, MutexGuard<'_, Held>>> {
        loop {
            let sim = &self.sim;
            let got = py.detach(move || {
                let start = Instant::now();
                let mut nap = Duration::from_micros(50);
                loop {
                    match sim.try_lock() {
                        Ok(held) => return Some(OnThisThread(Ok(held))),
                        Err(TryLockError::Poisoned(p)) => return Some(OnThisThread(Err(p.into_inner()))),
                        Err(TryLockError::WouldBlock) if start.elapsed() >= Duration::from_millis(50) => return None,
                        Err(TryLockError::WouldBlock) => {
                            std::thread::sleep(nap);
                            nap = (nap * 2).min(Duration::from_millis(2));
                        }
                    }
                }
            });
            match got {
                Some(held) => return Ok(held.0),
                None => py.check_signals()?,
            }
        }
    }

    /// Between two stretches of `sweeps` (the simulation given back): if
    /// another thread's call is waiting for it, waits (GIL released, at
    /// most 50 ms) until that call has taken it.
    fn let_others_in(&self, py: Python<'_>) {
        if self.waiting.load(Ordering::SeqCst) == 0 {
            return;
        }
        let before = self.taken.load(Ordering::SeqCst);
        py.detach(|| {
            let start = Instant::now();
            while self.taken.load(Ordering::SeqCst) == before
                && self.waiting.load(Ordering::SeqCst) > 0
                && start.elapsed() < Duration::from_millis(50)
            {
                std::thread::sleep(Duration::from_micros(100));
            }
        });
    }

    fn describe(&self, held: &Held) -> PyResult<String> {
        with_sim!(held, get, sim => {
            let m = sim.model();
            Ok(format!(
                "Simulation(q={}, size={}, height={}, temp={:?}, seed={}, sweeps_done={}, backend={:?}, \
                 algorithm={:?})",
                m.q(),
                m.width(),
                m.height(),
                sim.temperature(),
                self.seed,
                sim.sweeps_done(),
                sim.backend_name(),
                sim.algorithm().name()
            ))
        })
    }
}
