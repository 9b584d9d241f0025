//! What every CLI test file needs: the binary under test and its output as
//! text.

// Each test file uses its own subset of these helpers.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};

/// The binary under test: Cargo's build of it, or `WARPMC_BIN` (used when
/// the packed tests run on a GPU machine next to a packed binary).
pub(crate) fn bin() -> PathBuf {
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
