//! rayon's worker threads do not survive `fork()`: a child forked after
//! warpmc started them (multiprocessing's default start method on Linux)
//! would wait forever for threads that exist only in its parent. Such a
//! child gets a `RuntimeError` naming the way out instead.

use std::sync::atomic::{AtomicU32, Ordering};

use pyo3::PyResult;
use pyo3::exceptions::PyRuntimeError;

/// The process that first ran work on warpmc's threads (0: none yet).
static THREADS_STARTED_IN: AtomicU32 = AtomicU32::new(0);

/// Call before work that may run on warpmc's CPU threads.
pub(crate) fn check_threads() -> PyResult<()> {
    let pid = std::process::id();
    match THREADS_STARTED_IN.compare_exchange(0, pid, Ordering::SeqCst, Ordering::SeqCst) {
        Ok(_) => Ok(()),
        Err(started) if started == pid => Ok(()),
        Err(_) => Err(PyRuntimeError::new_err(
            "warpmc's threads were started before this process was forked, and a forked child has none of \
             them: use multiprocessing with the 'spawn' or 'forkserver' start method \
             (multiprocessing.get_context('spawn').Pool(...)), or start using warpmc only in the children",
        )),
    }
}
