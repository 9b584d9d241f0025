//! `warpmc flame …` given what breaks naive tools: a standard output that
//! is closed or full, outputs that name an input, sizes that would take
//! all the memory or years, values that render nothing. Each is refused
//! (or ends quietly) in one line, never with a panic, an abort or a file
//! lost.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

mod common;
use common::{bin, stderr, warpmc};

fn example(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/flames").join(name).to_string_lossy().into_owned()
}

fn temp_dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("warpmc-cli-flame-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A directory of the test's own (tests run in parallel).
fn fresh_dir(name: &str) -> PathBuf {
    let d = temp_dir().join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A quick genome: 24 × 16 pixels, quality 2, inline palette-free (its
/// colours are the default palette's zeros, so no palette file is read).
const QUICK: &str = r#"<flame size="24 16" scale="10" quality="2"><xform weight="1" linear="1" coefs="0.5 0 0 0.5 0 0"/>
<xform weight="1" linear="1" coefs="0.5 0 0 0.5 0.5 0"/></flame>"#;

fn write(path: &Path, text: &str) -> String {
    std::fs::write(path, text).unwrap();
    path.to_str().unwrap().to_string()
}

/// Asserts a failure with exactly one line on stderr, no panic, that
/// contains every one of `needles`; returns the line.
#[track_caller]
fn assert_one_line_error(o: &Output, needles: &[&str]) -> String {
    let e = stderr(o);
    assert!(!o.status.success(), "succeeded: {e}");
    assert_ne!(o.status.code(), Some(101), "panicked: {e}");
    assert!(!e.contains("panicked") && !e.contains("memory allocation"), "{e}");
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    for n in needles {
        assert!(e.contains(n), "'{n}' not in: {e}");
    }
    e
}

/// The system's /dev/full, where there is one.
fn dev_full() -> Option<std::fs::File> {
    std::fs::OpenOptions::new().write(true).open("/dev/full").ok()
}

// ---- Standard output closed or full ----------------------------------------

/// Runs warpmc with its standard output a pipe whose reader is gone
/// before anything is written (as `| head -1` is by the time a command
/// that prints at the end writes).
fn with_stdout_closed(args: &[&str]) -> Output {
    let mut child = Command::new(bin()).args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    drop(child.stdout.take());
    child.wait_with_output().unwrap()
}

fn stdout_commands(dir: &Path) -> Vec<Vec<String>> {
    let g = write(&dir.join("q.flam3"), QUICK);
    let png = dir.join("q.png").to_str().unwrap().to_string();
    let o = warpmc(&["flame", "render", &g, "-o", &png, "--backend", "cpu", "--quiet"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = |v: &[&str]| v.iter().map(|a| a.to_string()).collect::<Vec<_>>();
    vec![
        s(&["flame", "info", &g]),
        s(&["flame", "info", &example("test.flam3")]),
        s(&["flame", "compare", &png, &png]),
        s(&["flame", "compare", "--text", "flam3_samples", &png]),
        s(&["flame", "genome", "random", "--tries", "0"]),
        s(&["flame", "genome", "clone", &g]),
    ]
}

#[test]
fn a_reader_that_goes_away_ends_the_output_quietly() {
    let dir = fresh_dir("closed-stdout");
    for args in stdout_commands(&dir) {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = with_stdout_closed(&args);
        let e = stderr(&o);
        assert!(o.status.success(), "{args:?}: {:?} {e}", o.status);
        assert!(e.trim().is_empty(), "{args:?}: {e}");
    }
}

#[test]
fn a_full_standard_output_is_one_error_line() {
    let dir = fresh_dir("full-stdout");
    if dev_full().is_none() {
        println!("SKIPPED: no /dev/full on this system");
        return;
    }
    for args in stdout_commands(&dir) {
        let o = Command::new(bin()).args(&args).stdout(dev_full().unwrap()).output().unwrap();
        let e = assert_one_line_error(&o, &["standard output"]);
        assert!(e.to_lowercase().contains("no space"), "{args:?}: {e}");
    }
}
