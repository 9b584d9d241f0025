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
    let d = warpmc_testkit::scratch_dir("cli-flame-hostile");
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

#[test]
fn a_full_standard_error_still_writes_the_image() {
    let dir = fresh_dir("full-stderr");
    let Some(full) = dev_full() else {
        println!("SKIPPED: no /dev/full on this system");
        return;
    };
    let genome = write(&dir.join("g.flam3"), QUICK);
    // Not --quiet: the render prints its backend and cost to standard error.
    let o = Command::new(bin())
        .args(["flame", "render", &genome, "-o", "g.png", "--backend", "cpu"])
        .current_dir(&dir)
        .stderr(full)
        .output()
        .unwrap();
    assert!(o.status.success(), "{:?}", o.status);
    assert!(std::fs::read(dir.join("g.png")).unwrap().starts_with(b"\x89PNG"));
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

/// A flame that cannot be iterated (every weight zero) is found before the
/// first frame is written: the images of a file's other flames, and an
/// animation's earlier frames, are left as they were.
#[test]
fn a_flame_with_nothing_to_iterate_fails_before_any_image_is_written() {
    let dir = fresh_dir("zero-weights");
    let flame = |time: u32, weight: u32| {
        format!(
            r#"<flame time="{time}" size="16 16" scale="4" quality="2"><xform weight="{weight}" linear="1" coefs="0.5 0 0 0.5 0 0"/></flame>"#
        )
    };
    write(&dir.join("mix.flam3"), &format!("<f>{}{}</f>", flame(0, 1), flame(1, 0)));
    write(&dir.join("mix.00000.png"), "earlier work");
    let o = warpmc_in(&dir, &["flame", "render", "mix.flam3", "--backend", "cpu", "--quiet"]);
    assert_one_line_error(&o, &["flame #1", "weights are zero"]);
    assert_eq!(std::fs::read_to_string(dir.join("mix.00000.png")).unwrap(), "earlier work");

    write(&dir.join("anim.flam3"), &format!("<f>{}{}{}</f>", flame(0, 1), flame(4, 0), flame(8, 1)));
    let o = warpmc_in(&dir, &["flame", "animate", "anim.flam3", "--backend", "cpu", "--quiet", "-o", "f"]);
    assert_one_line_error(&o, &["time 4", "weights are zero"]);
    assert_eq!(listing(&dir), ["anim.flam3", "mix.00000.png", "mix.flam3"]);
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
        let example = if args.contains(&"--video") { "out.mp4" } else { "out.png" };
        assert_one_line_error(&o, &["standard output", example]);
    }
    // Options out of range are blamed on the option, not on the genome.
    for (option, value) in [("--pixel-aspect", "0"), ("-s", "inf"), ("-q", "-1"), ("--pixel-aspect", "nan")] {
        let o = warpmc_in(&dir, &["flame", "animate", "g.flam3", option, value, "--backend", "cpu", "--quiet"]);
        assert_one_line_error(&o, &["invalid value", "must be positive and finite"]);
        assert!(!stderr(&o).contains("g.flam3"), "{}", stderr(&o));
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

// ---- Sizes from the input: memory, file sizes, years of rendering ---------

/// Four GiB of address space: what an unchecked allocation of the sizes
/// below would exceed at once.
const FOUR_GIB_KIB: u64 = 4 << 20;

#[test]
fn genome_tools_refuse_outputs_beyond_memory_before_making_them() {
    let dir = fresh_dir("genome-sizes");
    let g = write(&dir.join("g.flam3"), QUICK);
    // A sequence is written frame by frame, in little memory; its frame
    // times are flam3's C ints.
    for args in [
        &["flame", "genome", "sequence", &g, "--loops", "1000000000"][..],
        &["flame", "genome", "sequence", &g, "--nframes", "4294967295"][..],
    ] {
        let o = common::warpmc_within(FOUR_GIB_KIB, args);
        assert_one_line_error(&o, &["frame times beyond flam3's"]);
        assert!(o.stdout.is_empty(), "{args:?}");
    }
    for args in [
        &["flame", "genome", "random", "--repeat", "4294967295", "--tries", "0"][..],
        &["flame", "genome", "mutate", &g, "--repeat", "4294967295"][..],
        &["flame", "genome", "cross", &g, &g, "--repeat", "4294967295"][..],
    ] {
        let o = common::warpmc_within(FOUR_GIB_KIB, args);
        assert_one_line_error(&o, &["needs", "host memory"]);
        assert!(o.stdout.is_empty(), "{args:?}");
    }
}

/// A flame holds an 8 KiB palette whatever its text: a 19 MB file of a
/// million empty flames would need 9 GB once read, and a flame 100,000
/// rows high cut into 100,000 strips 5 GB. Both are refused before.
#[test]
fn many_small_flames_are_refused_before_they_fill_memory() {
    let dir = fresh_dir("many-flames");
    let many = dir.join("many.flam3");
    std::fs::write(&many, format!("<f>{}</f>", "<flame size=\"1 1\"/>".repeat(1_000_000))).unwrap();
    let tall = write(
        &dir.join("tall.flam3"),
        r#"<flame size="10 100000" scale="10"><xform weight="1" linear="1" coefs="0.5 0 0 0.5 0 0"/></flame>"#,
    );
    let many = many.to_str().unwrap();
    for (args, needles) in [
        (&["flame", "info", many][..], &["1000000 flames", "host memory"][..]),
        (&["flame", "genome", "clone", many][..], &["1000000 flames", "host memory"][..]),
        (&["flame", "render", many, "--flame", "0", "-o", "/dev/null"][..], &["1000000 flames", "host memory"][..]),
        (&["flame", "genome", "strip", &tall, "--nstrips", "100000"][..], &["100000 strips", "host memory"][..]),
    ] {
        let o = common::warpmc_within(FOUR_GIB_KIB, args);
        assert_one_line_error(&o, needles);
        assert!(o.stdout.is_empty(), "{args:?}");
    }
}

/// Interpolated flames carry a chaos row only where an entry is not 1,
/// and only up to the last such entry, as flam3-genome prints them: full
/// rows made the output of two 3,000-xform flames 55 MB and that of two
/// 10,000-xform flames more than 4 GiB of memory.
#[test]
fn interpolated_chaos_rows_stay_as_short_as_flam3_writes_them() {
    let dir = fresh_dir("chaos-rows");
    let xform = |chaos: &str| format!(r#"<xform weight="0.5" linear="1" coefs="0.5 0 0 0.5 0.5 0"{chaos}/>"#);
    let flame = |t: u32, chaos: &str| {
        format!(r#"<flame time="{t}" size="8 8" scale="4">{}{}{}</flame>"#, xform(""), xform(chaos), xform(""))
    };
    let pair = write(&dir.join("pair.flam3"), &format!("<p>{}{}</p>", flame(0, r#" chaos="1 0.5""#), flame(1, "")));
    let o = common::warpmc_within(FOUR_GIB_KIB, &["flame", "genome", "inter", &pair, "--frame", "1", "--nframes", "2"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    let rows: Vec<&str> = text.split("chaos=\"").skip(1).map(|r| r.split('"').next().unwrap()).collect();
    // Three frames (before, at and after --frame, for motion blur): the
    // first two have one row, without its trailing 1; at the second
    // flame every entry is 1 and no row is written (flam3-genome prints
    // "1 0.5 ", "1 0.75 " and none).
    assert_eq!(rows, ["1 0.5", "1 0.75"], "{text}");

    let big = |t: u32| {
        let xforms: String = (0..10_000)
            .map(|i| format!(r#"<xform weight="1" linear="1" coefs="0.5 0 0 0.5 {} 0"/>"#, f64::from(i) / 1e4))
            .collect();
        format!(r#"<flame time="{t}" size="8 8" scale="1">{xforms}</flame>"#)
    };
    let wide = write(&dir.join("wide.flam3"), &format!("<p>{}{}</p>", big(0), big(1)));
    let o = common::warpmc_within(FOUR_GIB_KIB, &["flame", "genome", "inter", &wide, "--frame", "1", "--nframes", "2"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!String::from_utf8_lossy(&o.stdout).contains("chaos"));
}

#[test]
fn inputs_that_never_end_are_refused_at_a_bound() {
    let Ok(zero) = std::fs::File::open("/dev/zero") else {
        println!("SKIPPED: no /dev/zero on this system");
        return;
    };
    drop(zero);
    for (args, needles) in [
        (&["flame", "info", "/dev/zero"][..], &["/dev/zero", "256", "genome"][..]),
        (&["flame", "render", "/dev/zero", "-o", "/dev/null"][..], &["/dev/zero", "256"][..]),
        (&["flame", "info", "x.flam3", "--palettes", "/dev/zero"][..], &["/dev/zero", "256", "palette"][..]),
        (&["flame", "genome", "random", "--template", "/dev/zero"][..], &["/dev/zero", "256", "template"][..]),
        (&["flame", "compare", "/dev/zero", "/dev/zero"][..], &["/dev/zero", "GiB", "PNG"][..]),
    ] {
        let dir = fresh_dir("endless");
        // A genome with a numbered palette, for the palette file to be read.
        write(&dir.join("x.flam3"), &QUICK.replace("quality=\"2\"", "quality=\"2\" palette=\"3\""));
        let o = Command::new("sh")
            .arg("-c")
            .arg(format!("ulimit -v {FOUR_GIB_KIB} && exec \"$0\" \"$@\""))
            .arg(bin())
            .args(args)
            .current_dir(&dir)
            .output()
            .unwrap();
        assert_one_line_error(&o, needles);
    }
    // Standard input too.
    let o = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {FOUR_GIB_KIB} && exec \"$0\" flame genome clone - < /dev/zero"))
        .arg(bin())
        .output()
        .unwrap();
    assert_one_line_error(&o, &["standard input", "256"]);
}

#[test]
fn thousands_of_attributes_read_in_linear_time_and_an_absurd_number_is_refused() {
    let dir = fresh_dir("attributes");
    // 20 000 distinct unknown attributes, 4000 on each of 5 xforms.
    let xform = |k: usize| {
        let attrs: String = (0..4000).map(|i| format!(" u{k}_{i}x=\"1\"")).collect();
        format!("<xform weight=\"1\" linear=\"1\" coefs=\"0.5 0 0 0.5 0 0\"{attrs}/>")
    };
    let many = (0..5).map(xform).collect::<String>();
    let g = write(&dir.join("many.flam3"), &format!("<flame size=\"24 16\" quality=\"1\">{many}</flame>"));
    let start = std::time::Instant::now();
    let o = warpmc(&["flame", "info", &g]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(start.elapsed().as_secs_f64() < 5.0, "took {:?}", start.elapsed());
    assert!(String::from_utf8_lossy(&o.stdout).contains("u4_3999x"));
    // 100 000 attributes on one element: refused, quickly.
    let attrs: String = (0..100_000).map(|i| format!(" v{i}=\"1\"")).collect();
    let g = write(&dir.join("absurd.flam3"), &format!("<flame size=\"24 16\">\n<xform weight=\"1\"{attrs}/></flame>"));
    let start = std::time::Instant::now();
    let o = warpmc(&["flame", "info", &g]);
    assert_one_line_error(&o, &["absurd.flam3", "more than 4096 attributes (line 2)"]);
    assert!(start.elapsed().as_secs_f64() < 5.0, "took {:?}", start.elapsed());
}

#[test]
fn a_quality_that_would_take_years_is_refused_with_the_limit() {
    let dir = fresh_dir("years");
    let g = write(&dir.join("g.flam3"), QUICK);
    let out = dir.join("g.png");
    let needles = ["2^53", "quality 200000000000000", "lower the quality"];
    for command in ["render", "animate"] {
        let o = warpmc(&["flame", command, &g, "-q", "1e14", "-o", out.to_str().unwrap(), "--backend", "cpu"]);
        assert_one_line_error(&o, &needles);
    }
    assert_eq!(listing(&dir), ["g.flam3"]);
}

// ---- Values that succeeded with a wrong result -----------------------------

#[test]
fn a_quality_that_rounds_to_no_samples_is_refused_not_an_empty_image() {
    let dir = fresh_dir("no-samples");
    let g = write(&dir.join("g.flam3"), QUICK);
    let out = dir.join("g.png");
    let o = warpmc(&["flame", "render", &g, "-q", "1e-6", "-o", out.to_str().unwrap(), "--backend", "cpu"]);
    assert_one_line_error(&o, &["round to none", "raise the quality"]);
    // A far negative zoom takes the samples away: it is named.
    let zoomed = write(&dir.join("zoomed.flam3"), &QUICK.replacen("<flame ", "<flame zoom=\"-50\" ", 1));
    let o = warpmc(&["flame", "render", &zoomed, "-o", out.to_str().unwrap(), "--backend", "cpu"]);
    assert_one_line_error(&o, &["round to none", "at zoom -50", "raise the zoom"]);
    // An animation shares each frame's iterations among its temporal
    // samples: 0.38 iterations for each of 2 samples round to none.
    let two = write(
        &dir.join("two.flam3"),
        &format!("<flames>{}{}</flames>", QUICK, QUICK.replace("<flame ", "<flame time=\"1\" ")),
    );
    let o = warpmc(&[
        "flame",
        "animate",
        &two,
        "-q",
        "0.001",
        "--temporal-samples",
        "2",
        "-o",
        out.to_str().unwrap(),
        "--backend",
        "cpu",
    ]);
    assert_one_line_error(&o, &["round to none", "temporal samples"]);
    assert_eq!(listing(&dir), ["g.flam3", "two.flam3", "zoomed.flam3"]);
}

#[test]
fn genome_tools_refuse_settings_whose_genomes_no_renderer_draws() {
    let dir = fresh_dir("tool-settings");
    let g = write(&dir.join("g.flam3"), QUICK);
    for speed in ["nan", "inf", "-inf"] {
        let speed = format!("--speed={speed}");
        let o = warpmc(&["flame", "genome", "mutate", &g, "--method", "all-coefs", &speed]);
        assert_one_line_error(&o, &["--speed", "finite"]);
        assert!(o.stdout.is_empty());
    }
    for at in ["2", "-0.5", "nan", "inf"] {
        let at = format!("--at={at}");
        let o = warpmc(&["flame", "genome", "cross", &g, &g, "--method", "interpolate", &at]);
        assert_one_line_error(&o, &["--at", "between 0", "and 1"]);
        assert!(o.stdout.is_empty());
    }
    let o = warpmc(&["flame", "genome", "cross", &g, &g, "--method", "interpolate", "--at", "0.25"]);
    assert!(o.status.success(), "{}", stderr(&o));
    // A parent that `flame render` refuses is refused as a parent.
    let weightless = write(&dir.join("weightless.flam3"), &QUICK.replace("weight=\"1\"", "weight=\"0\""));
    for args in [
        &["flame", "genome", "mutate", &weightless, "--seed", "1"][..],
        &["flame", "genome", "cross", &g, &weightless][..],
    ] {
        let o = warpmc(args);
        assert_one_line_error(&o, &["weightless.flam3", "cannot be a parent", "weights are zero"]);
        assert!(o.stdout.is_empty());
    }
}

#[test]
fn the_palette_file_is_needed_only_by_numbered_palettes() {
    let dir = fresh_dir("palette-needed");
    let inline =
        write(&dir.join("inline.flam3"), &QUICK.replace("</flame>", "<color index=\"0\" rgb=\"255 0 0\"/></flame>"));
    let numbered = write(&dir.join("numbered.flam3"), &QUICK.replace("quality=\"2\"", "quality=\"2\" palette=\"3\""));
    let missing = "/nonexistent-warpmc/flam3-palettes.xml";
    let run = |args: &[&str]| Command::new(bin()).args(args).env("FLAM3_PALETTES", missing).output().unwrap();
    let out = dir.join("out.png");
    let out = out.to_str().unwrap();
    // flam3-render too renders such a genome with no palette file.
    let o = run(&["flame", "render", &inline, "-o", out, "--backend", "cpu", "--quiet"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&["flame", "info", &inline]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&["flame", "render", &numbered, "-o", out, "--backend", "cpu", "--quiet"]);
    assert_one_line_error(&o, &["numbered.flam3", missing, "$FLAM3_PALETTES"]);
}

#[test]
fn a_palette_file_without_palettes_is_an_error_for_random_palettes() {
    let dir = fresh_dir("no-palettes");
    let empty = write(&dir.join("empty.xml"), "<palettes></palettes>");
    for palettes in ["/dev/null", empty.as_str()] {
        let o = warpmc(&["flame", "genome", "random", "--tries", "0", "--palettes", palettes]);
        assert_one_line_error(&o, &[palettes]);
        assert!(o.stdout.is_empty());
    }
}

#[test]
fn an_enormous_brightness_saturates_as_in_flam3_not_black() {
    let dir = fresh_dir("brightness");
    let g = write(
        &dir.join("bright.flam3"),
        &QUICK
            .replace("quality=\"2\"", "quality=\"20\" brightness=\"1e100\"")
            .replace("</flame>", "<color index=\"0\" rgb=\"255 0 0\"/><color index=\"255\" rgb=\"0 0 255\"/></flame>"),
    );
    let mut means = Vec::new();
    for precision in ["f32", "f64"] {
        let out = dir.join(format!("{precision}.png"));
        let o = warpmc(&[
            "flame",
            "render",
            &g,
            "-o",
            out.to_str().unwrap(),
            "--precision",
            precision,
            "--backend",
            "cpu",
            "--quiet",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let img = warpmc_flame::image::read_png(&out).unwrap();
        let mean = img.pixels.iter().map(|p| p[0] + p[1] + p[2]).sum::<f64>() / (3 * img.pixels.len()) as f64;
        means.push(mean);
    }
    // flam3-render draws this genome with a third of its pixels saturated.
    assert!(means[0] > 20.0, "an all-black image: {means:?}");
    let o = warpmc(&["flame", "compare", dir.join("f32.png").to_str().unwrap(), dir.join("f64.png").to_str().unwrap()]);
    let psnr: f64 = String::from_utf8_lossy(&o.stdout).trim().parse().unwrap();
    assert!(psnr > 40.0, "f32 and f64 differ: PSNR {psnr}");
}

// ---- Messages that name what is wrong ---------------------------------------

#[test]
fn render_errors_name_the_file_the_flame_and_the_attribute_written() {
    let dir = fresh_dir("messages");
    let out = dir.join("out.png");
    let out = out.to_str().unwrap();
    let render = |g: &str| warpmc(&["flame", "render", g, "-o", out, "--backend", "cpu", "--quiet"]);
    let g = write(&dir.join("over.flam3"), &QUICK.replace("quality=\"2\"", "quality=\"2\" oversample=\"1000\""));
    assert_one_line_error(&render(&g), &["over.flam3", "flame #0", "oversample", "1000"]);
    // Only a final xform: nothing to iterate, said as such.
    let g = write(
        &dir.join("final.flam3"),
        r#"<flame size="24 16" scale="10" quality="2"><finalxform linear="1" coefs="0.5 0 0 0.5 0 0"/></flame>"#,
    );
    let e = assert_one_line_error(&render(&g), &["final.flam3", "no <xform>", "finalxform"]);
    assert!(!e.contains("weights are zero"), "{e}");
    let o = warpmc(&["flame", "info", &g]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("renders: no (flame 0: no <xform>"), "{}", stderr(&o));
    // Huge numbers are shown in scientific notation, not in 309 digits.
    let g = write(&dir.join("weight.flam3"), &QUICK.replacen("weight=\"1\"", "weight=\"-1e308\"", 1));
    let e = assert_one_line_error(&render(&g), &["negative weight -1e308"]);
    assert!(e.len() < 200, "{e}");
    // flame info says "renders: no" wherever flame render refuses the
    // frame: a filter too small for a kernel, years of iterations.
    for (name, attribute, why) in
        [("filter.flam3", "filter=\"-1\"", "spatial filter radius -1"), ("q.flam3", "quality=\"1e308\"", "2^53")]
    {
        let g = write(&dir.join(name), &QUICK.replace("quality=\"2\"", attribute));
        assert_one_line_error(&render(&g), &[why]);
        let o = warpmc(&["flame", "info", &g]);
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(out.contains("renders: no (flame 0: ") && out.contains(why), "{name}: {out}");
    }
    let g = write(&dir.join("named.flam3"), &QUICK.replace("<flame ", "<flame name=\"sheep\" "));
    let o = warpmc(&["flame", "render", &g, "-q", "1e14", "-o", out, "--backend", "cpu"]);
    assert_one_line_error(&o, &["named.flam3: flame 'sheep': ", "2^53"]);
}

#[test]
fn memory_taken_by_temporal_samples_gets_advice_on_temporal_samples() {
    let dir = fresh_dir("temporal-advice");
    // 10⁸ passes: 1.6 GB of temporal sample times and weights.
    let g = write(&dir.join("passes.flam3"), &QUICK.replace("quality=\"2\"", "quality=\"2\" passes=\"100000000\""));
    let out = dir.join("out.png");
    let o = common::warpmc_within(
        1 << 20,
        &["flame", "render", &g, "-q", "1e6", "-o", out.to_str().unwrap(), "--backend", "cpu", "--quiet"],
    );
    let e =
        assert_one_line_error(&o, &["passes.flam3", "temporal samples", "lower the passes or the temporal samples"]);
    assert!(!e.contains("reduce the size"), "{e}");
}
