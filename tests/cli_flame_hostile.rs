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

// ---- Outputs that would replace an input or another output ---------------

/// Runs warpmc in `dir`.
fn warpmc_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(bin()).args(args).current_dir(dir).output().expect("warpmc runs")
}

/// The names of the files in `dir`, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

#[test]
fn render_never_writes_over_its_genome() {
    let dir = fresh_dir("render-over-genome");
    // A genome named like an image: its default output is itself.
    write(&dir.join("g.png"), QUICK);
    let o = warpmc_in(&dir, &["flame", "render", "g.png", "--backend", "cpu", "--quiet"]);
    assert_one_line_error(&o, &["default output", "GENOME", "g.png"]);
    assert_eq!(std::fs::read_to_string(dir.join("g.png")).unwrap(), QUICK);
    // Named outright, through another path to it, a symlink or a hard link.
    write(&dir.join("g.flam3"), QUICK);
    std::os::unix::fs::symlink("g.flam3", dir.join("link.png")).unwrap();
    std::fs::hard_link(dir.join("g.flam3"), dir.join("hard.png")).unwrap();
    for (genome, out) in [("g.png", "./g.png"), ("g.flam3", "link.png"), ("g.flam3", "hard.png")] {
        let o = warpmc_in(&dir, &["flame", "render", genome, "-o", out, "--backend", "cpu", "--quiet"]);
        assert_one_line_error(&o, &["--out", "GENOME"]);
        assert_eq!(std::fs::read_to_string(dir.join(genome)).unwrap(), QUICK, "-o {out}");
    }
    assert_eq!(std::fs::read_to_string(dir.join("g.flam3")).unwrap(), QUICK);
    // Nor over the palette file it reads.
    let palettes = dir.join("palettes.png");
    std::fs::copy("/usr/share/flam3/flam3-palettes.xml", &palettes).ok();
    if palettes.exists() {
        let o = warpmc_in(
            &dir,
            &["flame", "render", "g.flam3", "--palettes", "palettes.png", "-o", "palettes.png", "--backend", "cpu"],
        );
        assert_one_line_error(&o, &["--out", "palette file"]);
    }
}

#[test]
fn an_image_output_named_dash_is_refused_not_a_file_named_dash() {
    let dir = fresh_dir("dash");
    write(&dir.join("g.flam3"), QUICK);
    let o = warpmc_in(&dir, &["flame", "render", "g.flam3", "-o", "-", "--backend", "cpu", "--quiet"]);
    assert_one_line_error(&o, &["--out -", "standard output"]);
    let o = warpmc_in(&dir, &["flame", "render", "g.flam3", "-o", "a.png", "--backend", "cpu", "--quiet"]);
    assert!(o.status.success(), "{}", stderr(&o));
    for args in [
        &["flame", "compare", "a.png", "a.png", "--montage", "-"][..],
        &["flame", "animate", "g.flam3", "--contact-sheet", "-", "--backend", "cpu", "--quiet"][..],
        &["flame", "animate", "g.flam3", "--video", "-", "--backend", "cpu", "--quiet"][..],
    ] {
        let o = warpmc_in(&dir, args);
        assert_one_line_error(&o, &["standard output"]);
    }
    assert_eq!(listing(&dir), ["a.png", "g.flam3"]);
    // A genome is text: -o - is standard output.
    let o = warpmc_in(&dir, &["flame", "genome", "clone", "g.flam3", "-o", "-"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("<flame "));
    assert_eq!(listing(&dir), ["a.png", "g.flam3"]);
}

#[test]
fn animate_outputs_never_land_on_the_genome_or_a_frame() {
    let dir = fresh_dir("animate-outputs");
    // Named as an image, so that only the check of distinct files stops
    // an output onto it.
    let genome = write(&dir.join("g.png"), QUICK);
    let args = |extra: &[&str]| {
        let mut a = vec!["flame", "animate", "g.png", "--backend", "cpu", "--quiet", "-o", "f"];
        a.extend_from_slice(extra);
        a.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    let run = |extra: &[&str]| {
        let a = args(extra);
        warpmc_in(&dir, &a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    assert_one_line_error(&run(&["--contact-sheet", "g.png"]), &["--contact-sheet", "GENOME"]);
    assert_one_line_error(&run(&["--contact-sheet", "f00000.png"]), &["--contact-sheet", "frame at time 0"]);
    assert_one_line_error(&run(&["--contact-sheet", "sheet.jpg"]), &["--contact-sheet", ".png"]);
    assert_one_line_error(&run(&["--video", "./g.png"]), &["GENOME"]);
    // A genome named as frame 7 of 0 to 20000 (more frames than are
    // checked one by one).
    std::fs::rename(&genome, dir.join("f07000.png")).unwrap();
    let o = warpmc_in(
        &dir,
        &["flame", "animate", "f07000.png", "--begin", "0", "--end", "20000", "-o", "f", "--backend", "cpu"],
    );
    assert_one_line_error(&o, &["frame at time 7000", "GENOME"]);
    assert_eq!(std::fs::read_to_string(dir.join("f07000.png")).unwrap(), QUICK);
    assert_eq!(listing(&dir), ["f07000.png"]);
}

#[test]
fn a_montage_never_lands_on_an_image_it_compares() {
    let dir = fresh_dir("montage");
    write(&dir.join("g.flam3"), QUICK);
    let o = warpmc_in(&dir, &["flame", "render", "g.flam3", "-o", "a.png", "--backend", "cpu", "--quiet"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let before = std::fs::read(dir.join("a.png")).unwrap();
    std::fs::copy(dir.join("a.png"), dir.join("b.png")).unwrap();
    for (montage, needles) in [
        ("a.png", &["--montage", "A"][..]),
        ("b.png", &["--montage", "B"][..]),
        ("m.jpg", &["--montage", ".png"][..]),
        ("m.txt", &["--montage", ".png"][..]),
    ] {
        let o = warpmc_in(&dir, &["flame", "compare", "a.png", "b.png", "--montage", montage]);
        assert_one_line_error(&o, needles);
        assert!(o.stdout.is_empty(), "{montage}: printed before refusing");
    }
    assert_eq!(std::fs::read(dir.join("a.png")).unwrap(), before);
    assert_eq!(std::fs::read(dir.join("b.png")).unwrap(), before);
    let o = warpmc_in(&dir, &["flame", "compare", "a.png", "b.png", "--montage", "m.png"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn genome_tools_never_write_over_what_they_read() {
    let dir = fresh_dir("genome-tools");
    write(&dir.join("g.flam3"), QUICK);
    write(&dir.join("t.flam3"), r#"<flame size="40 32" quality="20"/>"#);
    for args in [
        &["flame", "genome", "clone", "g.flam3", "-o", "g.flam3"][..],
        &["flame", "genome", "clone", "g.flam3", "-o", "./g.flam3"][..],
        &["flame", "genome", "strip", "g.flam3", "-o", "g.flam3"][..],
        &["flame", "genome", "cross", "t.flam3", "g.flam3", "-o", "g.flam3"][..],
        &["flame", "genome", "random", "--template", "t.flam3", "-o", "t.flam3", "--tries", "0"][..],
    ] {
        let o = warpmc_in(&dir, args);
        assert_one_line_error(&o, &["--out", "choose another output"]);
    }
    assert_eq!(std::fs::read_to_string(dir.join("g.flam3")).unwrap(), QUICK);
    assert_eq!(listing(&dir), ["g.flam3", "t.flam3"]);
}
