//! Ctrl-C during long work. The work runs with the GIL released, so
//! Python's signal handlers cannot run; the work's own hooks (the Potts
//! protocol's observer, the renderer's progress) call [`Signals::stop`],
//! which takes the GIL for a moment every [`POLL`] and runs them. When a
//! handler raises (`KeyboardInterrupt` for Ctrl-C), the work is told to
//! stop at its next clean point and the exception is raised afterwards.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use pyo3::exceptions::PyKeyboardInterrupt;
use pyo3::{PyErr, Python};

/// How often the signal handlers run during long work.
const POLL: Duration = Duration::from_millis(50);

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
