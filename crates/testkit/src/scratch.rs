//! Directories for a test binary's files that do not outlive it.
//!
//! Tests of the command-line program and of file output write real files.
//! Each test binary gets one directory per name under the system's temporary
//! directory, tagged with its process id (tests of one binary run in
//! parallel, so the files inside must have names of their own), and the
//! directories are removed when the process exits, whether its tests passed
//! or failed. `WARPMC_KEEP_TEST_FILES=1` keeps them, to look at what a
//! failing test wrote; a process killed by a signal leaves them behind.

use std::path::PathBuf;
use std::sync::Mutex;

/// The directories made so far, removed at exit.
static MADE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// `$TMPDIR/warpmc-{name}-{pid}`, made if it does not exist yet, and removed
/// (with everything in it) when this process exits.
///
/// # Panics
/// If the directory cannot be made: the test cannot run without it.
pub fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("warpmc-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("cannot make {}: {e}", dir.display()));
    let mut made = MADE.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if made.is_empty() && std::env::var_os("WARPMC_KEEP_TEST_FILES").is_none_or(|v| v.is_empty() || v == "0") {
        // SAFETY: `atexit` only stores the pointer of a function with the C
        // ABI that takes nothing and returns nothing, as it asks; the
        // function stays valid for the life of the process.
        unsafe { atexit(remove_scratch_dirs) };
    }
    if !made.iter().any(|d| d == &dir) {
        made.push(dir.clone());
    }
    dir
}

/// A fresh, empty directory `sub` inside [`scratch_dir`]`(name)`, for a test
/// that lists what a command left behind.
pub fn fresh_scratch_dir(name: &str, sub: &str) -> PathBuf {
    let dir = scratch_dir(name).join(sub);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("cannot make {}: {e}", dir.display()));
    dir
}

extern "C" fn remove_scratch_dirs() {
    // A test thread still running at exit may hold the lock: then the
    // directories stay rather than the exit waiting.
    if let Ok(made) = MADE.try_lock() {
        for dir in made.iter() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

unsafe extern "C" {
    /// C's `atexit`: runs `f` when the process exits through `exit` or by
    /// returning from `main`, as the test harness does.
    fn atexit(f: extern "C" fn()) -> std::ffi::c_int;
}
