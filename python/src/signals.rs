//! Ctrl-C during long work. The work runs with the GIL released, so
//! Python's signal handlers cannot run; the work's own hooks (the Potts
//! protocol's observer, the renderer's progress) call [`Signals::stop`],
//! which takes the GIL for a moment every [`POLL`] and runs them. When a
//! handler raises (`KeyboardInterrupt` for Ctrl-C), the work is told to
//! stop at its next clean point and the exception is raised afterwards.
//!
//! The same look also calls the caller's `progress` callback, if any, with
//! what the work last said it has done; an exception the callback raises
//! stops the work as Ctrl-C does. The callback runs on the calling thread,
//! so a render or a run on a worker thread, where no signal handler runs,
//! can still be stopped: by raising from it.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use pyo3::exceptions::PyKeyboardInterrupt;
use pyo3::prelude::*;

/// How often the signal handlers run during long work.
const POLL: Duration = Duration::from_millis(50);

/// Rounds of [`Signals::settle`]: each runs the handlers of every signal
/// pending, until one raises.
const SETTLE_ROUNDS: usize = 64;

/// How often [`Signals::watch`] looks whether its work has finished.
const WATCH: Duration = Duration::from_millis(5);

/// How far the work has come, as the progress callback is given it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Done {
    /// `done` of `total` sweeps (a Potts run): `progress(done, total)`.
    Sweeps { done: u64, total: u64 },
    /// The fraction of a render, 0 to 1: `progress(fraction)`.
    Fraction(f64),
}

/// The caller's progress callback, and what it was last given.
#[derive(Debug)]
struct Progress {
    callback: Py<PyAny>,
    latest: Mutex<Option<Done>>,
    shown: Mutex<Option<Done>>,
}

/// What the signal handlers (and the progress callback) said during one
/// call.
#[derive(Debug)]
pub(crate) struct Signals {
    last: Mutex<Instant>,
    raised: Mutex<Option<PyErr>>,
    progress: Option<Progress>,
}

impl Signals {
    pub(crate) fn new() -> Self {
        Self::with_progress(None)
    }

    /// Signals that also call `callback` (when given) as the work reports
    /// how far it has come ([`Signals::set_progress`]).
    pub(crate) fn with_progress(callback: Option<Py<PyAny>>) -> Self {
        let progress =
            callback.map(|callback| Progress { callback, latest: Mutex::new(None), shown: Mutex::new(None) });
        Signals { last: Mutex::new(Instant::now()), raised: Mutex::new(None), progress }
    }

    /// The work has come this far; the callback is told at the next look
    /// ([`Signals::stop`]). Cheap, and callable from any thread.
    pub(crate) fn set_progress(&self, done: Done) {
        if let Some(p) = &self.progress {
            *p.latest.lock().unwrap_or_else(|p| p.into_inner()) = Some(done);
        }
    }

    /// Calls the progress callback if the work has reported something it
    /// was not given yet; the exception it raises, if any.
    fn show_progress(&self, py: Python<'_>) -> PyResult<()> {
        let Some(p) = &self.progress else { return Ok(()) };
        let latest = *p.latest.lock().unwrap_or_else(|p| p.into_inner());
        let mut shown = p.shown.lock().unwrap_or_else(|p| p.into_inner());
        let Some(done) = latest.filter(|&d| Some(d) != *shown) else { return Ok(()) };
        *shown = Some(done);
        match done {
            Done::Sweeps { done, total } => p.callback.call1(py, (done, total))?,
            Done::Fraction(f) => p.callback.call1(py, (f,))?,
        };
        Ok(())
    }

    /// The work finished at `done`: the callback is given it, if it was
    /// not given it already (an exception it raises is kept, as one raised
    /// during the work is).
    pub(crate) fn finish(&self, py: Python<'_>, done: Done) {
        if self.progress.is_none() || self.was_raised() {
            return;
        }
        self.set_progress(done);
        if let Err(e) = self.show_progress(py) {
            self.raised.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
        }
    }

    /// Whether the work should stop: a signal handler or the progress
    /// callback raised, now or before. Runs the handlers, then the
    /// callback, at most every [`POLL`].
    pub(crate) fn stop(&self) -> bool {
        let mut raised = self.raised.lock().unwrap_or_else(|p| p.into_inner());
        if raised.is_some() {
            return true;
        }
        {
            let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
            if last.elapsed() < POLL {
                return false;
            }
            *last = Instant::now();
        }
        if let Err(e) = Python::attach(|py| py.check_signals().and_then(|()| self.show_progress(py))) {
            *raised = Some(e);
        }
        raised.is_some()
    }

    /// Runs `work` on a thread of its own while this thread (Python's main
    /// thread, where the signal handlers run) calls [`Signals::stop`] every
    /// few milliseconds and sets `cancel` once it says stop: for work whose
    /// long steps call no hook but read `cancel`.
    pub(crate) fn watch<T: Send>(&self, cancel: &AtomicBool, work: impl FnOnce() -> T + Send) -> T {
        std::thread::scope(|s| {
            let worker = s.spawn(work);
            while !worker.is_finished() {
                std::thread::sleep(WATCH);
                if self.stop() {
                    cancel.store(true, Ordering::Relaxed);
                }
            }
            worker.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })
    }

    /// Runs the handlers of the signals that came since the work last
    /// looked (during its last steps, or a second Ctrl-C) and keeps the
    /// first exception raised, so that the call reports that one, with
    /// what it finished, instead of Python raising another at its next
    /// instruction.
    pub(crate) fn settle(&self, py: Python<'_>) {
        for _ in 0..SETTLE_ROUNDS {
            match py.check_signals() {
                Ok(()) => return,
                Err(e) => {
                    let mut raised = self.raised.lock().unwrap_or_else(|p| p.into_inner());
                    if raised.is_none() {
                        *raised = Some(e);
                    }
                }
            }
        }
    }

    /// Whether a signal handler raised during the call.
    pub(crate) fn was_raised(&self) -> bool {
        self.raised.lock().unwrap_or_else(|p| p.into_inner()).is_some()
    }

    /// The exception for work that stopped because [`Signals::stop`] said
    /// so: the handler's (or a plain `KeyboardInterrupt`).
    pub(crate) fn raised(&self) -> PyErr {
        self.raised
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
            .unwrap_or_else(|| PyKeyboardInterrupt::new_err("interrupted"))
    }
}
