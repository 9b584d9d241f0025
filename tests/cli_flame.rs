//! `warpmc flame` as a user meets it: renders, determinism, errors.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{bin, stderr, warpmc, warpmc_within};

fn example(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/flames").join(name).to_string_lossy().into_owned()
}

fn temp_dir() -> PathBuf {
    let d = warpmc_testkit::scratch_dir("cli-flame");
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
    // --text prints and compares nothing: a montage beside it is refused.
    let m = a.with_extension("montage.png");
    let o =
        warpmc(&["flame", "compare", "--text", "flam3_samples", a.to_str().unwrap(), "--montage", m.to_str().unwrap()]);
    assert!(!o.status.success() && stderr(&o).contains("cannot be used with"), "{}", stderr(&o));
    assert!(!m.exists());
}

#[test]
fn info_lists_flames_and_unsupported_variations() {
    let o = warpmc(&["flame", "info", &example("test.flam3")]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("2 flame(s)"), "{out}");
    assert!(out.contains("spherical"), "{out}");
    assert!(out.contains("supported: yes"), "{out}");
    // Fractorium's plugin variations (crop and its forms, pre_disc, …).
    let o = warpmc(&["flame", "info", &example("fractorium-bench-zy0rg_six_bigcomplexcode.flame")]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("supported: yes") && out.contains("renders: yes"), "{out}");
    assert!(out.contains("beyond flam3's (flam3-render drops them): flatten, crop"), "{out}");
    // Fractorium's colour curves, which flam3 ignores, are listed with them
    // where they change the image.
    let curved = temp_dir().join("curved.flame");
    for (curve, listed) in [("0 0 0.5 0.8 1 1", true), ("0 0 0.25 0.25 0.5 0.5 0.75 0.75 1 1", false)] {
        std::fs::write(
            &curved,
            format!(
                r#"<flame size="8 8" overall_curve="{curve}"><xform weight="1" linear="1" coefs="1 0 0 1 0 0"/></flame>"#
            ),
        )
        .unwrap();
        let o = warpmc(&["flame", "info", curved.to_str().unwrap()]);
        let out = String::from_utf8_lossy(&o.stdout);
        assert_eq!(out.contains("drops them): colour curves"), listed, "{curve}: {out}");
    }
    // A variation warpmc does not implement: listed, and the file renders.
    let o = warpmc(&["flame", "info", &unknown_variation_genome()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("unsupported, dropped: synth, synth_a, synth_mode"), "{out}");
    assert!(out.contains("renders: yes") && out.contains("supported: no"), "{out}");
    let o = warpmc(&["flame", "info", "--strict", &unknown_variation_genome()]);
    assert!(!o.status.success());
}

/// `flame info --strict` fails where `flame render --strict` does: on a
/// keyword flam3 does not know as well as on an unknown variation, read
/// from a file or from standard input.
#[test]
fn info_strict_refuses_what_render_strict_refuses() {
    let text = std::fs::read_to_string(example("test.flam3")).unwrap();
    assert!(text.contains("<flame "));
    let sinc = text.replacen("<flame ", "<flame filter_shape=\"sinc\" ", 1);
    let path = temp_dir().join("sinc.flam3");
    std::fs::write(&path, &sinc).unwrap();
    let path = path.to_str().unwrap();
    let o = warpmc(&["flame", "info", path]);
    assert!(o.status.success(), "{}", stderr(&o));
    let rendered = warpmc(&["flame", "render", path, "--strict", "-o", "/dev/null"]);
    assert!(!rendered.status.success());
    let o = warpmc(&["flame", "info", "--strict", path]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.lines().filter(|l| l.starts_with("error")).count() == 1 && e.contains("sinc"), "{e}");
    let mut child = Command::new(bin())
        .args(["flame", "info", "--strict", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(sinc.as_bytes()).unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("sinc") && String::from_utf8_lossy(&o.stdout).contains("2 flame(s)"), "{}", stderr(&o));
}

/// A genome with a variation warpmc does not implement (synth).
fn unknown_variation_genome() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("crates/flame/tests/data/genomes/fractorium-synth.flame")
        .display()
        .to_string()
}

#[test]
fn unknown_variations_warn_once_and_strict_makes_them_one_clear_error() {
    let dir = temp_dir();
    let out = dir.join("x.png");
    let args = ["flame", "render", &unknown_variation_genome(), "-o", out.to_str().unwrap(), "--backend", "cpu"];
    let o = warpmc(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    let warnings: Vec<&str> = e.lines().filter(|l| l.starts_with("warning:")).collect();
    assert_eq!(warnings.len(), 1, "{e}");
    assert!(warnings[0].contains("'synth'") && warnings[0].contains("dropped"), "{e}");
    assert!(out.exists());

    let strict_out = dir.join("strict.png");
    let o = warpmc(&["flame", "render", &unknown_variation_genome(), "-o", strict_out.to_str().unwrap(), "--strict"]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert!(e.contains("unknown variation") && e.contains("fractorium-synth.flame"), "{e}");
    // The command line names the way back.
    assert!(e.contains("without --strict"), "{e}");
    assert!(!strict_out.exists());
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

#[test]
fn a_name_two_flames_share_is_refused() {
    let flame = |q: u32| {
        format!(r#"<flame name="g" size="8 6" scale="4" quality="{q}"><xform weight="1" linear="1"/></flame>"#)
    };
    let g = genome_file("twins.flam3", &format!("<flames>{}{}</flames>", flame(5), flame(6)));
    let out = temp_dir().join("twins.png");
    let o = warpmc(&[
        "flame",
        "render",
        g.to_str().unwrap(),
        "--name",
        "g",
        "-o",
        out.to_str().unwrap(),
        "--backend",
        "cpu",
    ]);
    let e = stderr(&o);
    assert!(!o.status.success() && e.lines().count() == 1, "{e}");
    assert!(e.contains("2 flames are named 'g' (flames 0, 1); choose one with --flame"), "{e}");
    assert!(!out.exists());
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

// ---- Regression tests: outputs that destroyed what was at their path ------

/// A genome that renders in milliseconds.
const QUICK: &str = r#"<flame size="24 16" scale="10" quality="2"><xform weight="1" linear="1" coefs="0.5 0 0 0.5 0 0"/>
<xform weight="1" linear="1" coefs="0.5 0 0 0.5 0.5 0"/></flame>"#;

/// A genome that would take hours: quality 10⁹ on 64 × 48 pixels.
const EXPENSIVE: &str = r#"<flame size="64 48" scale="20" quality="1e9"><xform weight="1" linear="1" coefs="0.5 0 0 0.5 0 0"/>
<xform weight="1" linear="1" coefs="0.5 0 0 0.5 0.5 0"/></flame>"#;

/// `text` as a genome file in the test's directory, under a name of its
/// own (tests run in parallel).
fn genome_file(name: &str, text: &str) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = temp_dir().join(format!("{n}-{name}"));
    std::fs::write(&path, text).unwrap();
    path
}

/// `flame render GENOME -o OUT` on the CPU, quietly.
fn render_quick(out: &Path) -> Output {
    let g = genome_file("quick.flam3", QUICK);
    Command::new(bin())
        .args(["flame", "render", "--backend", "cpu", "--quiet"])
        .arg(&g)
        .arg("-o")
        .arg(out)
        .output()
        .expect("warpmc runs")
}

fn is_png(bytes: &[u8]) -> bool {
    bytes.starts_with(b"\x89PNG\r\n\x1a\n")
}

/// Runs warpmc for at most `limit`, killing it then; the output, how long
/// it ran, and whether it had to be killed.
fn run_at_most(args: &[&str], limit: Duration) -> (Output, Duration, bool) {
    let start = Instant::now();
    let mut child = Command::new(bin()).args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut killed = false;
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            child.kill().unwrap();
            killed = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = child.wait_with_output().unwrap();
    (out, start.elapsed(), killed)
}

#[test]
fn a_genome_redirected_into_standard_input_is_not_overwritten() {
    // `warpmc flame render - -o gen.png < gen.png`: the output is the file
    // being read.
    let g = genome_file("stdin-gen.png", QUICK);
    let o = Command::new(bin())
        .args(["flame", "render", "-", "-o", g.to_str().unwrap(), "--backend", "cpu", "--quiet"])
        .stdin(std::fs::File::open(&g).unwrap())
        .output()
        .unwrap();
    let e = stderr(&o);
    assert!(!o.status.success() && e.contains("--out would overwrite GENOME"), "{e}");
    assert_eq!(std::fs::read_to_string(&g).unwrap(), QUICK);
    // From a pipe, or from another file, it renders.
    let out = temp_dir().join("from-stdin.png");
    let o = Command::new(bin())
        .args(["flame", "render", "-", "-o", out.to_str().unwrap(), "--backend", "cpu", "--quiet"])
        .stdin(std::fs::File::open(&g).unwrap())
        .output()
        .unwrap();
    assert!(o.status.success() && is_png(&std::fs::read(&out).unwrap()), "{}", stderr(&o));
}

#[test]
fn render_output_through_a_symlink_keeps_the_link() {
    let dir = temp_dir().join("symlink");
    std::fs::create_dir_all(dir.join("real")).unwrap();
    let target = dir.join("real/image.png");
    std::fs::write(&target, b"old").unwrap();
    let link = dir.join("link.png");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let o = render_quick(&link);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link was replaced");
    assert!(is_png(&std::fs::read(&target).unwrap()), "the file the link names was not written");
}

#[test]
fn render_output_keeps_mode_600() {
    use std::os::unix::fs::PermissionsExt;
    let out = temp_dir().join("private.png");
    std::fs::write(&out, b"old").unwrap();
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o600)).unwrap();
    let o = render_quick(&out);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(is_png(&std::fs::read(&out).unwrap()));
    assert_eq!(std::fs::metadata(&out).unwrap().permissions().mode() & 0o777, 0o600);
}

/// The character device `major:minor` (/dev/null is 1:3, /dev/full 1:7):
/// as root, a node of its own in the test's directory, so that an output
/// that replaces what it writes to could only replace that node; otherwise
/// the system's, which a user cannot replace.
fn device(name: &str, minor: u32) -> Option<PathBuf> {
    use std::os::unix::fs::FileTypeExt;
    let system = Path::new("/dev").join(name);
    let private = temp_dir().join(format!("dev-{name}"));
    let _ = std::fs::remove_file(&private);
    let made = Command::new("mknod").arg(&private).args(["c", "1", &minor.to_string()]).stderr(Stdio::null()).status();
    let path = if made.is_ok_and(|s| s.success()) { private } else { system };
    std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_char_device()).then_some(path)
}

#[test]
fn render_to_dev_full_reports_no_space() {
    use std::os::unix::fs::FileTypeExt;
    let Some(full) = device("full", 7) else { return };
    let o = render_quick(&full);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert!(e.to_lowercase().contains("no space"), "{e}");
    assert!(!e.contains("panicked"), "{e}");
    assert!(std::fs::symlink_metadata(&full).unwrap().file_type().is_char_device(), "the device was replaced");
}

#[test]
fn render_to_dev_null_and_a_fifo_writes_in_place() {
    use std::os::unix::fs::FileTypeExt;
    if let Some(null) = device("null", 3) {
        let o = render_quick(&null);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(std::fs::symlink_metadata(&null).unwrap().file_type().is_char_device(), "the device was replaced");
    }

    let fifo = temp_dir().join("pipe.png");
    let _ = std::fs::remove_file(&fifo);
    if !Command::new("mkfifo").arg(&fifo).status().is_ok_and(|s| s.success()) {
        return; // no mkfifo here
    }
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            use std::io::Read;
            let mut got = Vec::new();
            std::fs::File::open(&fifo).unwrap().read_to_end(&mut got).unwrap();
            got
        })
    };
    let o = render_quick(&fifo);
    assert!(o.status.success(), "{}", stderr(&o));
    // Still a FIFO (a rename would have put a regular file in its place),
    // and the reader got the image through it.
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(), "the FIFO was replaced");
    assert!(is_png(&reader.join().unwrap()));
}

/// An image is never written over a Potts run's checkpoint (named .png,
/// or reached through a link), as the Potts outputs refuse it.
#[test]
fn images_do_not_replace_a_checkpoint() {
    let dir = temp_dir().join("over-checkpoint");
    std::fs::create_dir_all(&dir).unwrap();
    let ckpt = dir.join("run.png");
    let _ = std::fs::remove_file(&ckpt);
    let o = warpmc(&[
        "potts",
        "run",
        "--backend",
        "cpu",
        "--q",
        "2",
        "--size",
        "4",
        "--temp",
        "1",
        "--therm",
        "1",
        "--sweeps",
        "10",
        "--checkpoint",
        ckpt.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let before = std::fs::read(&ckpt).unwrap();
    let link = dir.join("link.png");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(&ckpt, &link).unwrap();
    for out in [&ckpt, &link] {
        let o = render_quick(out);
        assert!(!o.status.success(), "rendered over {out:?}");
        assert!(stderr(&o).contains("holds a potts run's checkpoint"), "{}", stderr(&o));
    }
    assert_eq!(std::fs::read(&ckpt).unwrap(), before);
}

#[test]
fn render_and_montage_names_of_250_bytes_are_written() {
    let dir = temp_dir().join("long-names");
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join(format!("{}.png", "r".repeat(246)));
    let o = render_quick(&out);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(is_png(&std::fs::read(&out).unwrap()));
    let montage = dir.join(format!("{}.png", "m".repeat(246)));
    let o = Command::new(bin()).args(["flame", "compare"]).arg(&out).arg(&out).arg("--montage").arg(&montage).output();
    let o = o.unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(is_png(&std::fs::read(&montage).unwrap()));
}

#[test]
fn a_missing_output_directory_fails_before_any_rendering() {
    let g = genome_file("expensive.flam3", EXPENSIVE);
    let g = g.to_str().unwrap();
    let render = ["flame", "render", g, "--backend", "cpu", "--quiet", "-o", "/nonexistent/dir/x.png"];
    let animate = ["flame", "animate", g, "--backend", "cpu", "--quiet", "-o", "/nonexistent/dir/frame"];
    for args in [&render[..], &animate[..]] {
        let (o, took, killed) = run_at_most(args, Duration::from_secs(20));
        assert!(!killed, "{args:?}: still rendering after {took:?}");
        assert!(!o.status.success());
        let e = stderr(&o);
        assert_eq!(e.trim().lines().count(), 1, "{e}");
        assert!(e.contains("/nonexistent/dir"), "{e}");
        assert!(took < Duration::from_secs(1), "{args:?}: the error came after {took:?}");
    }
}

/// A directory given as --out holds the images under their default names,
/// one flame or several (numbered beside it, they would land outside it).
#[test]
fn an_output_directory_takes_the_default_names() {
    let dir = temp_dir().join("render-into");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let two = genome_file(
        "two-flames.flam3",
        r#"<flames><flame size="8 6" scale="4" quality="1"><xform weight="1" linear="1"/></flame>
        <flame size="8 6" scale="4" quality="1"><xform weight="1" linear="1"/></flame></flames>"#,
    );
    let (g, d) = (two.to_str().unwrap(), dir.to_str().unwrap());
    let all = warpmc(&["flame", "render", g, "--backend", "cpu", "--quiet", "-o", d]);
    assert!(all.status.success(), "{}", stderr(&all));
    let one = warpmc(&["flame", "render", g, "--backend", "cpu", "--quiet", "--flame", "1", "-o", d]);
    assert!(one.status.success(), "{}", stderr(&one));
    let stem = two.file_stem().unwrap().to_string_lossy().into_owned();
    let mut names: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    assert_eq!(names, [format!("{stem}.00000.png"), format!("{stem}.00001.png"), format!("{stem}.png")]);
    assert!(!dir.with_file_name("render-into.00000.png").exists());
}

// ---- Regression tests: settings that were silently ignored ----------------

#[test]
fn a_palette_file_that_is_missing_or_a_directory_is_an_error_not_a_fallback() {
    let genome = example("test.flam3"); // numbered palettes
    let dir = temp_dir().join("palette-dir");
    std::fs::create_dir_all(&dir).unwrap();
    let dir = dir.to_str().unwrap().to_string();
    let out = temp_dir().join("palettes.png");
    let out = out.to_str().unwrap();
    let render = ["flame", "render", &genome, "--backend", "cpu", "--quiet", "-q", "0.001", "-s", "0.05", "-o", out];
    for named in ["/nonexistent/flam3-palettes.xml", dir.as_str()] {
        for how in ["--palettes", "FLAM3_PALETTES", "flam3_palettes"] {
            for base in [&["flame", "info", &genome][..], &render[..]] {
                let mut c = Command::new(bin());
                c.args(base).env_remove("FLAM3_PALETTES").env_remove("flam3_palettes");
                if how == "--palettes" {
                    c.args(["--palettes", named]);
                } else {
                    c.env(how, named);
                }
                let o = c.output().unwrap();
                let e = stderr(&o);
                assert!(!o.status.success(), "{how} {named} {base:?}: succeeded");
                assert_eq!(e.trim().lines().count(), 1, "{e}");
                assert!(e.contains(named), "{e}");
                if how != "--palettes" {
                    assert!(e.contains(&format!("${how}")), "{e}");
                }
            }
        }
    }
}

#[test]
fn info_on_a_file_without_flames_is_an_error() {
    for (name, text) in [("empty.flam3", "<flames></flames>"), ("other.flam3", r#"<svg><g/></svg>"#)] {
        let path = genome_file(name, text);
        let o = warpmc(&["flame", "info", path.to_str().unwrap()]);
        assert!(!o.status.success(), "{name}: {}", String::from_utf8_lossy(&o.stdout));
        let e = stderr(&o);
        assert_eq!(e.trim().lines().count(), 1, "{e}");
        assert!(e.contains("no <flame> elements") && e.contains(path.to_str().unwrap()), "{e}");
        assert!(!String::from_utf8_lossy(&o.stdout).contains("supported"));
    }
}

// ---- Regression tests: sizes checked before allocation, enormous work -----

#[test]
fn a_30000_square_frame_beyond_memory_is_refused_up_front() {
    let g = genome_file(
        "30000.flam3",
        r#"<flame size="30000 30000" scale="10000" quality="1e-6"><xform weight="1" linear="1" coefs="0.5 0 0 0.5 0 0"/></flame>"#,
    );
    let out = temp_dir().join("30000.png");
    let start = Instant::now();
    let o = warpmc_within(
        4 << 20,
        &["flame", "render", g.to_str().unwrap(), "--backend", "cpu", "--quiet", "-o", out.to_str().unwrap()],
    );
    let e = stderr(&o);
    assert!(!o.status.success(), "{e}");
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert!(e.contains("a 30000 × 30000 frame (histogram and accumulation buffer of 9"), "{e}");
    assert!(e.contains(" of host memory but only ") && e.contains("ulimit -v"), "{e}");
    assert!(start.elapsed() < Duration::from_secs(5), "refused after {:?}", start.elapsed());
    assert!(!out.exists());
}

#[test]
fn a_zoom_of_1e308_is_one_line_not_an_endless_render() {
    let g = genome_file("zoom.flam3", &QUICK.replace("quality=\"2\"", "quality=\"2\" zoom=\"1e308\""));
    let out = temp_dir().join("zoom.png");
    let args = ["flame", "render", g.to_str().unwrap(), "--backend", "cpu", "--quiet", "-o", out.to_str().unwrap()];
    let (o, took, killed) = run_at_most(&args, Duration::from_secs(20));
    assert!(!killed, "still rendering after {took:?}");
    let e = stderr(&o);
    assert!(!o.status.success(), "{e}");
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert!(e.contains("inf chaos-game iterations") && e.contains("2^53"), "{e}");
}

#[test]
fn compare_refuses_a_png_declaring_100000_square_before_allocating() {
    // 370 bytes whose header declares 10¹⁰ pixels.
    fn crc(bytes: &[u8]) -> u32 {
        let mut c = 0xffff_ffffu32;
        for &b in bytes {
            c ^= u32::from(b);
            for _ in 0..8 {
                c = if c & 1 == 1 { 0xedb8_8320 ^ (c >> 1) } else { c >> 1 };
            }
        }
        !c
    }
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    for (kind, data) in [
        (&b"IHDR"[..], [&100_000u32.to_be_bytes()[..], &100_000u32.to_be_bytes(), &[8, 2, 0, 0, 0]].concat()),
        (b"IDAT", [&[0x78u8, 0x9c][..], &[0; 311]].concat()),
        (b"IEND", Vec::new()),
    ] {
        png.extend_from_slice(&(data.len() as u32).to_be_bytes());
        let start = png.len();
        png.extend_from_slice(kind);
        png.extend_from_slice(&data);
        let c = crc(&png[start..]);
        png.extend_from_slice(&c.to_be_bytes());
    }
    assert_eq!(png.len(), 370);
    let path = temp_dir().join("declares-huge.png");
    std::fs::write(&path, &png).unwrap();
    let p = path.to_str().unwrap();
    let o = warpmc(&["flame", "compare", p, p]);
    let e = stderr(&o);
    assert!(!o.status.success(), "{e}");
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert!(e.contains("declares-huge.png: a 100000 × 100000 image needs "), "{e}");
    assert!(e.contains(" of host memory but only "), "{e}");
}

/// Runs `args` with stderr read line by line into a shared buffer.
fn spawn_reading_stderr(args: &[&str]) -> (std::process::Child, std::sync::Arc<std::sync::Mutex<String>>) {
    let mut child = Command::new(bin()).args(args).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let text = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let err = child.stderr.take().unwrap();
    let t = text.clone();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(err).lines().map_while(Result::ok) {
            let mut t = t.lock().unwrap();
            t.push_str(&line);
            t.push('\n');
        }
    });
    (child, text)
}

#[test]
fn enormous_work_is_estimated_and_ctrl_c_stops_it_leaving_the_output_untouched() {
    // Quality 10¹² on 64 × 48 pixels: 3·10¹⁵ iterations, years on a CPU.
    let g = genome_file("quality-1e12.flam3", &EXPENSIVE.replace("1e9", "1e12"));
    let dir = temp_dir().join("ctrl-c");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("kept.png");
    std::fs::write(&out, b"precious").unwrap();
    let (mut child, text) = spawn_reading_stderr(&[
        "flame",
        "render",
        g.to_str().unwrap(),
        "--backend",
        "cpu",
        "-o",
        out.to_str().unwrap(),
    ]);
    let started = Instant::now();
    while !text.lock().unwrap().contains("iterations") {
        if started.elapsed() > Duration::from_secs(20) || child.try_wait().unwrap().is_some() {
            let _ = child.kill();
            panic!("no estimate on stderr: {}", text.lock().unwrap());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_secs(1));
    assert!(child.try_wait().unwrap().is_none(), "the render ended by itself: {}", text.lock().unwrap());
    Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    let stopping = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if stopping.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            panic!("still running 10 s after Ctrl-C: {}", text.lock().unwrap());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    std::thread::sleep(Duration::from_millis(100)); // the last lines
    let e = text.lock().unwrap().clone();
    assert_eq!(status.code(), Some(130), "{e}");
    assert!(e.contains("3.072e15 iterations"), "{e}");
    assert!(e.lines().any(|l| l.starts_with("interrupted")), "{e}");
    assert!(!e.contains("panicked"), "{e}");
    assert_eq!(std::fs::read(&out).unwrap(), b"precious", "the output was touched");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1, "files left behind");
}

#[test]
fn the_progress_bar_and_its_eta_are_shown_on_a_terminal() {
    // script(1) gives the command a terminal; without it there is nothing
    // to test here.
    if !Command::new("script").arg("--version").output().is_ok_and(|o| o.status.success()) {
        return;
    }
    let g = genome_file("bar.flam3", &EXPENSIVE.replace("1e9", "3000"));
    let out = temp_dir().join("bar.png");
    let cmd = format!("{} flame render {} --backend cpu -o {}", bin().display(), g.display(), out.display());
    let o = Command::new("script").args(["-qec", &cmd, "/dev/null"]).output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{text}");
    assert!(text.contains("eta") && text.contains('%'), "no progress bar: {text}");
}

/// PSNR of two PNGs as `warpmc flame compare` prints it.
fn psnr(a: &Path, b: &Path) -> f64 {
    let o = warpmc(&["flame", "compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    String::from_utf8_lossy(&o.stdout).trim().parse().unwrap()
}

#[test]
fn spatial_filters_and_tone_mapping_match_flam3_render() {
    // flam3-render 3.1.1 draws another shape's kernel for seven of its
    // filter names, shows white specks where a kernel's sample lands a
    // hair below 0 (its -ffast-math build), and keeps colours for a
    // negative vibrancy: each case against flam3's own seed-to-seed noise.
    if Command::new("flam3-render").stdin(Stdio::null()).output().is_err() {
        println!("SKIPPED: flam3-render is not installed (Debian: flam3-utils)");
        return;
    }
    let dir = temp_dir().join("flam3-filters");
    std::fs::create_dir_all(&dir).unwrap();
    let genome = |attrs: &str| {
        format!(
            r#"<flame size="64 48" center="0.5 0.45" scale="40" quality="300" estimator_radius="0" palette="17" {attrs}>
  <xform weight="1" color="0" linear="1" coefs="0.5 0 0 0.5 0 0"/>
  <xform weight="1" color="1" linear="1" coefs="0.5 0 0 0.5 0.5 0"/>
  <xform weight="1" color="0.5" linear="1" coefs="0.5 0 0 0.5 0.25 0.5"/>
</flame>"#
        )
    };
    let cases = [
        ("mitchell", r#"filter="1" filter_shape="mitchell""#),
        ("lanczos2", r#"filter="1" filter_shape="lanczos2""#),
        ("hamming", r#"filter="1.2" filter_shape="hamming""#),
        ("catrom", r#"filter="0.5" supersample="2" filter_shape="catrom""#),
        ("vibrancy", r#"vibrancy="-0.5""#),
        // A shape flam3 does not know: it warns and filters with a gaussian.
        ("unknown-shape", r#"filter="1.5" filter_shape="Sinc""#),
    ];
    for (name, attrs) in cases {
        let g = dir.join(format!("{name}.flam3"));
        std::fs::write(&g, genome(attrs)).unwrap();
        let flam3: Vec<PathBuf> = ["a", "b"]
            .iter()
            .map(|seed| {
                let out = dir.join(format!("{name}.flam3-{seed}.png"));
                let o = Command::new("flam3-render")
                    .env("in", &g)
                    .env("out", &out)
                    .env("isaac_seed", seed)
                    .env("nthreads", "1")
                    .env("verbose", "0")
                    .stdin(Stdio::null())
                    .output()
                    .unwrap();
                assert!(o.status.success() && out.exists(), "flam3-render {name}: {}", stderr(&o));
                out
            })
            .collect();
        let ours = dir.join(format!("{name}.warpmc.png"));
        let o = warpmc(&["flame", "render", g.to_str().unwrap(), "-o", ours.to_str().unwrap(), "--backend", "cpu"]);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        if name == "unknown-shape" {
            let e = stderr(&o);
            assert!(
                e.contains("attribute 'filter_shape': unknown value \"Sinc\"") && e.contains("using gaussian"),
                "{e}"
            );
        }
        let floor = psnr(&flam3[0], &flam3[1]);
        let against = (psnr(&ours, &flam3[0]) + psnr(&ours, &flam3[1])) / 2.0;
        assert!(against > floor - 2.0, "{name}: {against:.2} dB against flam3, whose seeds differ by {floor:.2} dB");
    }
}

#[test]
fn colour_coordinates_beyond_int_range_take_the_first_entry_as_in_flam3_render() {
    // flam3 indexes the palette with C's (int) of the coordinate × 256; on
    // x86 a value beyond int's range gives INT_MIN, so entry 0 (here red),
    // while one just inside the range takes the last (blue).
    if Command::new("flam3-render").stdin(Stdio::null()).output().is_err() {
        println!("SKIPPED: flam3-render is not installed (Debian: flam3-utils)");
        return;
    }
    let dir = temp_dir().join("flam3-colour-range");
    std::fs::create_dir_all(&dir).unwrap();
    let mean = |png: &Path| {
        let img = warpmc_flame::image::read_png(png).unwrap();
        let mut m = [0.0; 3];
        for p in &img.pixels {
            for c in 0..3 {
                m[c] += p[c] / img.pixels.len() as f64;
            }
        }
        m
    };
    for mode in ["linear", "step"] {
        for (colour, red) in [("1e7", true), ("3e6", false), ("1e300", true), ("-1e300", true)] {
            let g = dir.join(format!("{mode}-{colour}.flam3"));
            std::fs::write(
                &g,
                format!(
                    r#"<flame size="64 48" center="0 0" scale="20" quality="100" estimator_radius="0" palette_mode="{mode}">
  <xform weight="1" color="{colour}" color_speed="1" linear="1" coefs="0.5 0 0 0.5 0 0"/>
  <xform weight="1" color="{colour}" color_speed="1" linear="1" coefs="0.5 0 0 0.5 0.5 0.5"/>
  <color index="0" rgb="200 0 0"/>
  <color index="128" rgb="100 100 100"/>
  <color index="255" rgb="0 0 200"/>
</flame>"#
                ),
            )
            .unwrap();
            let theirs = dir.join(format!("{mode}-{colour}.flam3.png"));
            let o = Command::new("flam3-render")
                .env("in", &g)
                .env("out", &theirs)
                .env("nthreads", "1")
                .env("verbose", "0")
                .stdin(Stdio::null())
                .output()
                .unwrap();
            assert!(o.status.success() && theirs.exists(), "flam3-render {mode} {colour}: {}", stderr(&o));
            let ours = dir.join(format!("{mode}-{colour}.warpmc.png"));
            let o = warpmc(&["flame", "render", g.to_str().unwrap(), "-o", ours.to_str().unwrap(), "--backend", "cpu"]);
            assert!(o.status.success(), "{mode} {colour}: {}", stderr(&o));
            let (f, w) = (mean(&theirs), mean(&ours));
            let (lit, dark) = if red { (0, 2) } else { (2, 0) };
            for m in [f, w] {
                assert!(m[lit] > 0.0 && m[dark] == 0.0 && m[1] == 0.0, "{mode} {colour}: flam3 {f:?}, warpmc {w:?}");
            }
            assert!((w[lit] / f[lit] - 1.0).abs() < 0.1, "{mode} {colour}: flam3 {f:?}, warpmc {w:?}");
        }
    }
}

#[test]
fn early_clip_matches_flam3_render_with_earlyclip() {
    // flam3-render's earlyclip=1 tone-maps every supersampled cell before
    // the spatial filter. A bright genome with a kernel of negative lobes
    // tells the orders apart by 9 dB; opaque and transparent.
    if Command::new("flam3-render").stdin(Stdio::null()).output().is_err() {
        println!("SKIPPED: flam3-render is not installed (Debian: flam3-utils)");
        return;
    }
    let dir = temp_dir().join("flam3-early-clip");
    std::fs::create_dir_all(&dir).unwrap();
    let g = dir.join("bright.flam3");
    std::fs::write(
        &g,
        r#"<flame size="64 48" center="0.5 0.45" scale="40" quality="300" estimator_radius="0" filter="1"
       filter_shape="mitchell" supersample="2" brightness="8" background="0.2 0.1 0.4">
  <xform weight="1" color="0" linear="1" coefs="0.5 0 0 0.5 0 0"/>
  <xform weight="1" color="1" linear="1" coefs="0.5 0 0 0.5 0.5 0"/>
  <xform weight="1" color="0.5" linear="1" coefs="0.5 0 0 0.5 0.25 0.5"/>
  <color index="0" rgb="255 40 0"/><color index="255" rgb="20 90 255"/>
</flame>"#,
    )
    .unwrap();
    for transparent in [false, true] {
        let name = if transparent { "transparent" } else { "opaque" };
        let flam3 = |seed: &str, early: bool| {
            let out = dir.join(format!("{name}-{seed}-{early}.flam3.png"));
            let o = Command::new("flam3-render")
                .env("in", &g)
                .env("out", &out)
                .env("isaac_seed", seed)
                .env("nthreads", "1")
                .env("verbose", "0")
                .env("earlyclip", if early { "1" } else { "0" })
                .env("transparency", if transparent { "1" } else { "0" })
                .stdin(Stdio::null())
                .output()
                .unwrap();
            assert!(o.status.success() && out.exists(), "flam3-render: {}", stderr(&o));
            out
        };
        let (a, b, late) = (flam3("a", true), flam3("b", true), flam3("a", false));
        let ours = dir.join(format!("{name}.warpmc.png"));
        let mut args = vec!["flame", "render", g.to_str().unwrap(), "-o", ours.to_str().unwrap(), "--backend", "cpu"];
        args.push("--early-clip");
        if transparent {
            args.push("--transparent");
        }
        let o = warpmc(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        let floor = psnr(&a, &b);
        let against = (psnr(&ours, &a) + psnr(&ours, &b)) / 2.0;
        assert!(against > floor - 1.0, "{name}: {against:.2} dB against flam3, whose seeds differ by {floor:.2} dB");
        // The test can tell: flam3's own orders differ far beyond its noise.
        let orders = psnr(&a, &late);
        assert!(orders < floor - 10.0, "{name}: the two orders differ by only {orders:.2} dB");
    }
}

#[test]
fn gpu_tuning_flags_on_the_cpu_say_they_change_nothing() {
    let dir = temp_dir();
    let out = dir.join("tuned.png");
    let render = |extra: &[&str]| {
        let mut args = vec!["flame", "render", "--backend", "cpu", "-q", "0.001", "-s", "0.1", "--quiet"];
        args.extend_from_slice(extra);
        let genome = example("test.flam3");
        args.extend_from_slice(&[genome.as_str(), "--flame", "0", "-o", out.to_str().unwrap()]);
        let o = warpmc(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        stderr(&o)
    };
    let err = render(&["--selection", "warp", "--gpu-arithmetic", "f64"]);
    assert!(
        err.contains(
            "warning: --selection, --gpu-arithmetic tune the GPU's chaos game; the CPU renders as without them"
        ),
        "{err}"
    );
    let err = render(&["--accumulation", "plain"]);
    assert!(err.contains("warning: --accumulation tunes the GPU's chaos game"), "{err}");
    // Their defaults (what the CPU does anyway) say nothing.
    let err = render(&["--selection", "thread"]);
    assert!(!err.contains("warning"), "{err}");
}
