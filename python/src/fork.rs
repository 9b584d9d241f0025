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
             (multiprocessing.get_context('spawn').Pool(...), or \
             concurrent.futures.ProcessPoolExecutor(mp_context=multiprocessing.get_context('spawn'))), or start \
             using warpmc only in the children",
        )),
    }
}

/// [`check_threads`]'s error in a child forked after warpmc's threads
/// started, without marking this process as having started them (for a
/// call that starts none).
pub(crate) fn check_not_forked() -> PyResult<()> {
    match THREADS_STARTED_IN.load(Ordering::SeqCst) {
        0 => Ok(()),
        _ => check_threads(),
    }
}

/// The threads warpmc's CPU work runs on, without starting them: rayon's
/// pool once this process has started it, else the count it would start
/// with (`RAYON_NUM_THREADS`, or every core). Asking rayon itself would
/// start its pool, and a child forked afterwards would hang in its first
/// call instead of getting [`check_threads`]'s error.
pub(crate) fn cpu_threads() -> usize {
    if THREADS_STARTED_IN.load(Ordering::SeqCst) == std::process::id() {
        return rayon::current_num_threads();
    }
    std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from))
}

/// Starts warpmc's CPU threads, `threads` of them (`warpmc.set_threads`):
/// refused once they have started, as rayon's pool is made only once.
#[pyo3::pyfunction]
pub(crate) fn set_threads(threads: usize) -> PyResult<()> {
    if threads == 0 {
        return Err(pyo3::exceptions::PyValueError::new_err("threads = 0: give at least 1"));
    }
    check_not_forked()?;
    let started = || {
        PyRuntimeError::new_err(format!(
            "warpmc's CPU threads have started already ({} of them): call set_threads before anything that \
             computes, or set RAYON_NUM_THREADS before Python starts",
            rayon::current_num_threads()
        ))
    };
    if THREADS_STARTED_IN.load(Ordering::SeqCst) == std::process::id() {
        return Err(started());
    }
    rayon::ThreadPoolBuilder::new().num_threads(threads).build_global().map_err(|_| started())?;
    check_threads()
}
