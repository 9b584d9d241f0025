//! `warpmc flame` as a user meets it: renders, determinism, errors.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> PathBuf {
    std::env::var_os("WARPMC_BIN").map(PathBuf::from).unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_warpmc")))
}

fn warpmc(args: &[&str]) -> Output {
    Command::new(bin()).args(args).output().expect("warpmc runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn example(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/flames").join(name).to_string_lossy().into_owned()
}

fn temp_dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("warpmc-cli-flame-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn renders_an_electric_sheep_genome_deterministically() {
    let dir = temp_dir();
    let genome = example("electricsheep.244.80692.flam3");
    let a = dir.join("a.png");
    let b = dir.join("b.png");
    for (out, threads) in [(&a, "1"), (&b, "2")] {
        let o = warpmc(&[
            "--threads",
            threads,
            "flame",
            "render",
            &genome,
            "-o",
            out.to_str().unwrap(),
            "-q",
            "0.002",
            "-s",
            "0.25",
            "--seed",
            "9",
            "--backend",
            "cpu",
            "--quiet",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    // Same seed, different thread counts: the same file content (the text
    // chunk with the render time aside, the pixels are compared by PSNR).
    let o = warpmc(&["flame", "compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "inf");
    // The PNG has flam3's size scaled by 0.25 and carries the sample count.
    let o = warpmc(&["flame", "compare", "--text", "flam3_samples", a.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let samples: f64 = String::from_utf8_lossy(&o.stdout).trim().parse().unwrap();
    assert_eq!(samples, (2000.0f64 * 0.002 * 200.0 * 148.0).round());
}

#[test]
fn info_lists_flames_and_unsupported_variations() {
    let o = warpmc(&["flame", "info", &example("test.flam3")]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("2 flame(s)"), "{out}");
    assert!(out.contains("spherical"), "{out}");
    assert!(out.contains("supported: yes"), "{out}");
    let o = warpmc(&["flame", "info", &example("fractorium-bench-zy0rg_six_bigcomplexcode.flame")]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("supported: no"));
}

#[test]
fn unknown_variations_are_one_clear_error() {
    let dir = temp_dir();
    let o = warpmc(&[
        "flame",
        "render",
        &example("fractorium-bench-zy0rg_six_bigcomplexcode.flame"),
        "-o",
        dir.join("x.png").to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert!(e.contains("unknown variation"), "{e}");
    assert!(e.contains("fractorium-bench-zy0rg_six_bigcomplexcode.flame"), "{e}");
    // The command line names its own way out.
    assert!(e.contains("--skip-unknown-variations"), "{e}");
}

/// A missing file is named once, with the system's reason once.
#[test]
fn a_missing_genome_is_one_message_said_once() {
    let o = warpmc(&["flame", "render", "/nonexistent/genome.flam3", "--backend", "cpu"]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert_eq!(e.matches("/nonexistent/genome.flam3").count(), 1, "{e}");
    assert_eq!(e.matches("(os error").count(), 1, "{e}");
}

/// The backend is resolved as every command resolves it: WARPMC_DEVICE
/// names the GPU for auto and cuda (a value that is not an ordinal is an
/// error, not a silent fallback), and does not matter for cpu.
#[test]
fn backend_selection_honours_warpmc_device() {
    let dir = temp_dir();
    let out = dir.join("device.png");
    let genome = example("electricsheep.244.80692.flam3");
    let render = |backend: &str| {
        Command::new(bin())
            .args(["flame", "render", &genome, "--backend", backend, "-q", "0.01", "-s", "0.1", "--quiet", "-o"])
            .arg(&out)
            .env("WARPMC_DEVICE", "first")
            .output()
            .expect("warpmc runs")
    };
    for backend in ["auto", "cuda"] {
        let o = render(backend);
        assert!(!o.status.success(), "{backend}");
        let e = stderr(&o);
        assert!(e.contains("WARPMC_DEVICE=first"), "{backend}: {e}");
        assert_eq!(e.trim().lines().count(), 1, "{e}");
    }
    let o = render("cpu");
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn bad_input_is_one_line_and_a_failure() {
    let dir = temp_dir();
    let bad = dir.join("bad.flam3");
    std::fs::write(&bad, "<flame size=\"10 10\"><xform weight=\"1\" coefs=\"1 0 0 1 0\"/></flame>").unwrap();
    for args in [
        vec!["flame", "render", bad.to_str().unwrap()],
        vec!["flame", "render", "/nonexistent/genome.flam3"],
        vec!["flame", "render", &example("test.flam3"), "--flame", "7"],
        vec!["flame", "render", &example("test.flam3"), "--bits", "12"],
        vec!["flame", "compare", "/nonexistent/a.png", "/nonexistent/b.png"],
    ] {
        let o = warpmc(&args);
        assert!(!o.status.success(), "{args:?} should fail");
        let e = stderr(&o);
        assert!(!e.contains("panicked"), "{args:?}: {e}");
        assert!(!e.trim().is_empty(), "{args:?}: no message");
    }
}

/// `--backend cuda` renders where a GPU is, and says in one line why not
/// where there is none.
#[test]
fn cuda_backend_renders_or_says_why() {
    let dir = temp_dir();
    let out = dir.join("cuda.png");
    let o = warpmc(&[
        "flame",
        "render",
        &example("test.flam3"),
        "--flame",
        "0",
        "--backend",
        "cuda",
        "-q",
        "0.05",
        "-s",
        "0.25",
        "--quiet",
        "-o",
        out.to_str().unwrap(),
    ]);
    let e = stderr(&o);
    assert!(!e.contains("panicked"), "{e}");
    match warpmc_gpu::probe().unusable_reason() {
        Some(why) => {
            assert!(!o.status.success(), "no GPU ({why}) but the render succeeded");
            assert!(e.contains("no CUDA device"), "{e}");
            assert_eq!(e.trim().lines().count(), 1, "{e}");
        }
        None => {
            assert!(o.status.success(), "{e}");
            assert!(out.exists());
        }
    }
}
