//! What every CLI test file needs: the binary under test and its output as
//! text.

// Each test file uses its own subset of these helpers.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};

/// The binary under test: Cargo's build of it, or `WARPMC_BIN` (used when
/// the packed tests run on a GPU machine next to a packed binary).
///
/// The first call also gives the stop signals their default action in this
/// process, so that the programs it starts inherit them: warpmc keeps a
/// stop signal ignored if it was at its start (as under `nohup`), and the
/// tests that send one must not depend on how the test run was started.
pub(crate) fn bin() -> PathBuf {
    static DEFAULT_SIGNALS: std::sync::Once = std::sync::Once::new();
    DEFAULT_SIGNALS.call_once(|| {
        for signal in [libc::SIGHUP, libc::SIGINT, libc::SIGTERM, libc::SIGXCPU, libc::SIGUSR1, libc::SIGUSR2] {
            // SAFETY: setting a signal's disposition to SIG_DFL installs no
            // handler; nothing in the test harness relies on these signals.
            unsafe {
                libc::signal(signal, libc::SIG_DFL);
            }
        }
    });
    std::env::var_os("WARPMC_BIN").map(PathBuf::from).unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_warpmc")))
}

/// Runs warpmc with `args` to completion.
pub(crate) fn warpmc(args: &[&str]) -> Output {
    Command::new(bin()).args(args).output().expect("warpmc runs")
}

/// Standard error as text.
pub(crate) fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Standard output as text.
pub(crate) fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Runs warpmc with `args` under `ulimit -v kib` (an address-space limit
/// the memory checks read), with two threads and two malloc arenas so that
/// the limit is the program's, not the thread stacks'. Memory tests mean the
/// same under it on a laptop and on a 128 GiB GPU host.
pub(crate) fn warpmc_within(kib: u64, args: &[&str]) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {kib} && exec \"$0\" \"$@\""))
        .arg(bin())
        .args(["--threads", "2"])
        .args(args)
        .env("MALLOC_ARENA_MAX", "2")
        .output()
        .expect("sh runs")
}

/// The CSV rows of a `potts run --out` file without its `#` lines and the
/// columns that name how they were computed (rate, backend).
pub(crate) fn csv_physics(path: &std::path::Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut rows = text.lines().filter(|l| !l.starts_with('#'));
    let header: Vec<&str> = rows.next().expect("a header").split(',').collect();
    let keep: Vec<usize> = (0..header.len()).filter(|&i| !matches!(header[i], "flips_per_ns" | "backend")).collect();
    rows.map(|r| {
        let fields: Vec<&str> = r.split(',').collect();
        keep.iter().map(|&i| fields[i]).collect::<Vec<_>>().join(",")
    })
    .collect()
}
