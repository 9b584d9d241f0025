//! Ctrl-C during long work. The work runs with the GIL released, so
//! Python's signal handlers cannot run; the work's own hooks (the Potts
//! protocol's observer, the renderer's progress) call [`Signals::stop`],
//! which takes the GIL for a moment every [`POLL`] and runs them. When a
//! handler raises (`KeyboardInterrupt` for Ctrl-C), the work is told to
//! stop at its next clean point and the exception is raised afterwards.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use pyo3::exceptions::PyKeyboardInterrupt;
use pyo3::{PyErr, Python};

/// How often the signal handlers run during long work.
const POLL: Duration = Duration::from_millis(50);

/// Rounds of [`Signals::settle`]: each runs the handlers of every signal
/// pending, until one raises.
const SETTLE_ROUNDS: usize = 64;

/// How often [`Signals::watch`] looks whether its work has finished.
const WATCH: Duration = Duration::from_millis(5);

/// What the signal handlers said during one call.
#[derive(Debug)]
pub(crate) struct Signals {
    last: Mutex<Instant>,
    raised: Mutex<Option<PyErr>>,
}

impl Signals {
    pub(crate) fn new() -> Self {
        Signals { last: Mutex::new(Instant::now()), raised: Mutex::new(None) }
    }

    /// Whether the work should stop: a signal handler raised, now or
    /// before. Runs the handlers at most every [`POLL`].
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
        if let Err(e) = Python::attach(|py| py.check_signals()) {
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
