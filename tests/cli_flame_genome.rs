//! `warpmc flame genome …` and the image formats of `flame render`.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{bin, stderr, stdout, warpmc};
use warpmc_flame::genome::{ParseOptions, parse_file, parse_str};
use warpmc_flame::image::{LoadedImage, psnr_pixels, read_png};

fn temp_dir() -> PathBuf {
    let d = warpmc_testkit::scratch_dir("cli-genome");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A template that keeps renders small and quick.
fn small_template(dir: &Path) -> PathBuf {
    // One file per call: the tests run in parallel.
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let t = dir.join(format!("small-{n}.flam3"));
    std::fs::write(&t, r#"<flame size="40 32" quality="20" supersample="1"/>"#).unwrap();
    t
}

fn genome(args: &[&str]) -> String {
    let mut all = vec!["flame", "genome"];
    all.extend_from_slice(args);
    let o = warpmc(&all);
    assert!(o.status.success(), "warpmc {all:?}: {}", stderr(&o));
    stdout(&o)
}

fn lenient() -> ParseOptions {
    ParseOptions { strict: false, palette_file: None }
}

fn render(genome: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["flame", "render", genome.to_str().unwrap(), "-o", out.to_str().unwrap()];
    args.extend_from_slice(&["--backend", "cpu", "--quiet"]);
    args.extend_from_slice(extra);
    warpmc(&args)
}

#[test]
fn random_is_deterministic_given_the_seed() {
    let a = genome(&["random", "--seed", "5", "--repeat", "2", "--tries", "2"]);
    let b = genome(&["random", "--seed", "5", "--repeat", "2", "--tries", "2"]);
    let c = genome(&["random", "--seed", "6", "--repeat", "2", "--tries", "2"]);
    assert_eq!(a, b);
    assert_ne!(a, c);
    let flames = parse_str(&a, "random", &lenient()).unwrap().flames;
    assert_eq!(flames.len(), 2);
    for op in [&["mutate"][..], &["cross"][..]] {
        let dir = temp_dir();
        let parent = dir.join(format!("parent-{}.flam3", op[0]));
        std::fs::write(&parent, &a).unwrap();
        let p = parent.to_str().unwrap();
        let args = |seed: &'static str| {
            let mut v: Vec<&str> = op.to_vec();
            v.push(p);
            if op[0] == "cross" {
                v.push(p);
            }
            v.extend_from_slice(&["--seed", seed, "--repeat", "3"]);
            v
        };
        assert_eq!(genome(&args("1")), genome(&args("1")), "{op:?}");
        assert_ne!(genome(&args("1")), genome(&args("2")), "{op:?}");
    }
}

#[test]
fn every_operation_writes_genomes_that_render() {
    let dir = temp_dir();
    let t = small_template(&dir);
    let t = t.to_str().unwrap();
    let keys = dir.join("keys.flam3");
    std::fs::write(&keys, genome(&["random", "--seed", "2", "--repeat", "2", "--template", t, "--tries", "0"]))
        .unwrap();
    let one = dir.join("one.flam3");
    std::fs::write(&one, genome(&["random", "--seed", "3", "--template", t, "--tries", "0"])).unwrap();
    let k = keys.to_str().unwrap();
    let o = one.to_str().unwrap();
    let cases: Vec<(&str, Vec<&str>, usize)> = vec![
        ("mutate", vec!["mutate", k, "--repeat", "3"], 3),
        // flam3-genome's spelling of the method, as README shows it.
        ("mutate-post", vec!["mutate", k, "--method", "post_xforms", "--repeat", "2"], 2),
        ("cross", vec!["cross", k, k, "--method", "alternate"], 1),
        ("sequence", vec!["sequence", k, "--nframes", "3"], 2 * 3 + 3 + 1),
        ("rotate", vec!["rotate", o, "--frame", "4", "--nframes", "8"], 3),
        ("inter", vec!["inter", k, "--frame", "2", "--nframes", "5"], 3),
        ("clone", vec!["clone", k, "--template", t], 2),
        ("strip", vec!["strip", o, "--nstrips", "2"], 2),
    ];
    for (name, args, count) in cases {
        let text = genome(&args);
        let parsed = parse_str(&text, name, &lenient()).unwrap();
        assert_eq!(parsed.flames.len(), count, "{name}");
        let file = dir.join(format!("{name}.flam3"));
        std::fs::write(&file, &text).unwrap();
        let out = dir.join(format!("{name}.png"));
        let r = render(&file, &out, &["--flame", "0"]);
        assert!(r.status.success(), "{name}: {}", stderr(&r));
        assert!(read_png(&out).is_ok(), "{name}");
    }
    // Frame times are flam3's C ints: the last frame whose neighbours fit
    // is written, one further is refused rather than wrapped around.
    let text = genome(&["rotate", o, "--frame", "2147483646"]);
    let times: Vec<f64> = parse_str(&text, "rotate", &lenient()).unwrap().flames.iter().map(|f| f.time).collect();
    assert_eq!(times, [2147483645.0, 2147483646.0, 2147483647.0]);
    for (tool, input, frame) in
        [("rotate", o, "2147483647"), ("inter", k, "-2147483648"), ("rotate", o, "9223372036854775807")]
    {
        let r = warpmc(&["flame", "genome", tool, input, "--frame", frame]);
        assert!(!r.status.success() && stderr(&r).contains("2147483646"), "{tool} {frame}: {}", stderr(&r));
        assert!(r.stdout.is_empty());
    }
}

#[test]
fn sequence_starts_at_its_first_keyframe() {
    let dir = temp_dir();
    let keys = dir.join("seq-keys.flam3");
    std::fs::write(&keys, genome(&["random", "--seed", "9", "--repeat", "2", "--tries", "0"])).unwrap();
    let first = parse_file(&keys, &lenient()).unwrap().flames.remove(0);
    let text = genome(&["sequence", keys.to_str().unwrap(), "--nframes", "4"]);
    let seq = parse_str(&text, "seq", &lenient()).unwrap().flames;
    assert_eq!(seq.len(), 4 + 4 + 4 + 1);
    assert_eq!(seq[0].xforms, first.xforms);
    assert_eq!(seq[0].palette, first.palette);
    let times: Vec<f64> = seq.iter().map(|f| f.time).collect();
    assert_eq!(times, (0..13).map(f64::from).collect::<Vec<_>>());
}

fn crop(img: &LoadedImage, top: u32, rows: u32) -> Vec<[f64; 4]> {
    let w = img.width as usize;
    img.pixels[top as usize * w..(top + rows) as usize * w].to_vec()
}

/// Strips rendered one by one give the full image: each strip matches its
/// rows of the full render as closely as two full renders with different
/// seeds match each other (within 3 dB), and far better than other rows.
#[test]
fn strips_tile_the_full_image() {
    let dir = temp_dir();
    let full = dir.join("poster.flam3");
    let xml = r#"<flame size="48 48" center="0.4 0.3" scale="40" rotate="30" quality="400" estimator_radius="0">
      <xform weight="1" coefs="0.5 0 0 0.5 0 0" linear="1" color="0"/>
      <xform weight="1" coefs="0.5 0 0 0.5 0.5 0" linear="1" color="0.5"/>
      <xform weight="1" coefs="0.5 0 0 0.5 0 0.5" linear="1" spherical="0.1" color="1"/>
      <color index="0" rgb="255 60 0"/><color index="255" rgb="0 90 255"/></flame>"#;
    std::fs::write(&full, xml).unwrap();
    let (a, b) = (dir.join("full-a.png"), dir.join("full-b.png"));
    assert!(render(&full, &a, &["--seed", "1"]).status.success());
    assert!(render(&full, &b, &["--seed", "2"]).status.success());
    let (a, b) = (read_png(&a).unwrap(), read_png(&b).unwrap());
    let strips = dir.join("strips.flam3");
    std::fs::write(&strips, genome(&["strip", full.to_str().unwrap(), "--nstrips", "4"])).unwrap();
    let noise = psnr_pixels(&a.pixels, &b.pixels).unwrap();
    for k in 0..4u32 {
        let out = dir.join(format!("strip{k}.png"));
        // A strip's samples spread over the whole attractor: four times the
        // quality puts as many in its rows as the full render does.
        let r = render(&strips, &out, &["--flame", &k.to_string(), "--seed", "3", "--quality-scale", "4"]);
        assert!(r.status.success(), "{}", stderr(&r));
        let s = read_png(&out).unwrap();
        assert_eq!((s.width, s.height), (48, 12));
        let p = psnr_pixels(&s.pixels, &crop(&a, 12 * k, 12)).unwrap();
        let floor = psnr_pixels(&crop(&b, 12 * k, 12), &crop(&a, 12 * k, 12)).unwrap();
        assert!(p > floor - 3.0, "strip {k}: {p:.2} dB against its rows, seed noise {floor:.2} dB (whole {noise:.2})");
        // And not by accident: another strip's rows do not match.
        let other = psnr_pixels(&s.pixels, &crop(&a, 12 * ((k + 2) % 4), 12)).unwrap();
        assert!(other < p - 3.0, "strip {k}: {other:.2} dB against other rows, {p:.2} against its own");
    }
}

#[test]
fn png_carries_the_genome_seed_and_samples() {
    let dir = temp_dir();
    let g = dir.join("carry.flam3");
    std::fs::write(
        &g,
        genome(&["random", "--seed", "4", "--tries", "0", "--template", small_template(&dir).to_str().unwrap()]),
    )
    .unwrap();
    let out = dir.join("carry.png");
    let r = render(&g, &out, &["--seed", "77"]);
    assert!(r.status.success(), "{}", stderr(&r));
    let img = read_png(&out).unwrap();
    let get = |k: &str| img.text.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone());
    let embedded = get("flam3_genome").expect("a flam3_genome chunk");
    let written = parse_file(&g, &lenient()).unwrap().flames;
    let back = parse_str(&embedded, "png", &lenient()).unwrap().flames;
    assert_eq!(back, written);
    assert_eq!(get("warpmc_seed").as_deref(), Some("77"));
    assert!(get("flam3_samples").is_some_and(|s| s.parse::<f64>().unwrap() > 0.0));
    // `flame compare --text` prints it.
    let o = warpmc(&["flame", "compare", out.to_str().unwrap(), "--text", "flam3_genome"]);
    assert!(stdout(&o).starts_with("<flame"));
}

/// With --size-scale and --quality-scale the PNG carries the genome as it
/// was rendered (flam3-render writes `ss` and `qs` into it too): rendering
/// that genome again gives the same image.
#[test]
fn png_genome_is_the_scaled_one_and_renders_the_same_image() {
    let dir = temp_dir();
    let g = dir.join("scaled.flam3");
    std::fs::write(
        &g,
        genome(&["random", "--seed", "5", "--tries", "0", "--template", small_template(&dir).to_str().unwrap()]),
    )
    .unwrap();
    let out = dir.join("scaled.png");
    let r = render(&g, &out, &["--seed", "9", "--size-scale", "0.75", "--quality-scale", "0.5"]);
    assert!(r.status.success(), "{}", stderr(&r));
    let img = read_png(&out).unwrap();
    let embedded = img.text.iter().find(|(k, _)| k == "flam3_genome").map(|(_, v)| v.clone()).unwrap();
    let written = &parse_file(&g, &lenient()).unwrap().flames[0];
    let back = &parse_str(&embedded, "png", &lenient()).unwrap().flames[0];
    assert_eq!(
        (back.width, back.height),
        ((written.width as f64 * 0.75) as u32, (written.height as f64 * 0.75) as u32)
    );
    assert_eq!((img.width, img.height), (back.width, back.height));
    assert_eq!(back.scale, written.scale * 0.75);
    assert_eq!(back.quality, written.quality * 0.5);
    let again = dir.join("embedded.flam3");
    std::fs::write(&again, &embedded).unwrap();
    let out2 = dir.join("again.png");
    let r = render(&again, &out2, &["--seed", "9"]);
    assert!(r.status.success(), "{}", stderr(&r));
    assert_eq!(read_png(&out2).unwrap().pixels, img.pixels);
}

#[test]
fn jpeg_extension_writes_jpeg_and_unknown_extensions_fail_first() {
    let dir = temp_dir();
    let g = dir.join("fmt.flam3");
    std::fs::write(
        &g,
        genome(&["random", "--seed", "4", "--tries", "0", "--template", small_template(&dir).to_str().unwrap()]),
    )
    .unwrap();
    for ext in ["jpg", "JPEG"] {
        let out = dir.join(format!("fmt.{ext}"));
        let r = render(&g, &out, &["--jpeg-quality", "80"]);
        assert!(r.status.success(), "{}", stderr(&r));
        let bytes = std::fs::read(&out).unwrap();
        assert_eq!(&bytes[..3], &[0xff, 0xd8, 0xff], ".{ext} is not a JPEG");
        let genome = b"flam3_genome: <flame";
        assert!(bytes.windows(genome.len()).any(|w| w == genome), ".{ext}: no genome comment");
    }
    let bad = dir.join("fmt.bmp");
    let r = render(&g, &bad, &[]);
    assert!(!r.status.success());
    let e = stderr(&r);
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert!(e.contains("unknown image extension '.bmp'"), "{e}");
    assert!(!bad.exists());
    let r = render(&g, &dir.join("fmt16.jpg"), &["--bits", "16"]);
    assert!(!r.status.success() && stderr(&r).contains("8 bits"), "{}", stderr(&r));
    // A JPEG quality for another format is a mistake, not silently dropped.
    let png = dir.join("fmt-quality.png");
    let r = render(&g, &png, &["--jpeg-quality", "90"]);
    assert!(!r.status.success() && stderr(&r).contains("--jpeg-quality is for JPEG output"), "{}", stderr(&r));
    assert!(!png.exists());
    let prefix = dir.join("anim").to_string_lossy().into_owned();
    let r = warpmc(&["flame", "animate", g.to_str().unwrap(), "--jpeg-quality", "90", "-o", &prefix]);
    assert!(!r.status.success() && stderr(&r).contains("an animation writes PNG frames"), "{}", stderr(&r));
}

/// .ppm writes flam3-render's format=ppm: P6, the PNG's samples without a
/// genome (8 or 16 bits); it has no alpha, so --transparent is refused.
#[test]
fn ppm_extension_writes_the_png_samples() {
    let dir = temp_dir();
    let g = dir.join("ppm.flam3");
    std::fs::write(
        &g,
        genome(&["random", "--seed", "5", "--tries", "0", "--template", small_template(&dir).to_str().unwrap()]),
    )
    .unwrap();
    let png = dir.join("ppm.png");
    assert!(render(&g, &png, &["--bits", "16", "--seed", "3"]).status.success());
    let png = read_png(&png).unwrap();
    for (name, bits) in [("ppm8.ppm", "8"), ("ppm16.PPM", "16")] {
        let out = dir.join(name);
        let r = render(&g, &out, &["--bits", bits, "--seed", "3"]);
        assert!(r.status.success(), "{}", stderr(&r));
        let bytes = std::fs::read(&out).unwrap();
        let header = format!("P6\n{} {}\n{}\n", png.width, png.height, if bits == "8" { 255 } else { 65535 });
        assert_eq!(&bytes[..header.len()], header.as_bytes(), "{name}");
        let body = &bytes[header.len()..];
        assert_eq!(body.len(), png.pixels.len() * 3 * if bits == "8" { 1 } else { 2 }, "{name}");
        // read_png gives 16-bit samples divided by 256: the 8-bit ones are
        // their whole part, the 16-bit ones exact.
        for (i, p) in png.pixels.iter().enumerate() {
            for c in 0..3 {
                let v = if bits == "8" {
                    f64::from(body[3 * i + c])
                } else {
                    f64::from(u16::from_be_bytes([body[6 * i + 2 * c], body[6 * i + 2 * c + 1]])) / 256.0
                };
                let expected = if bits == "8" { p[c].floor() } else { p[c] };
                assert_eq!(v, expected, "{name}: pixel {i}, channel {c}");
            }
        }
    }
    let out = dir.join("alpha.ppm");
    let r = render(&g, &out, &["--transparent"]);
    assert!(!r.status.success() && stderr(&r).contains("PPM has no transparency"), "{}", stderr(&r));
    assert_eq!(stderr(&r).trim().lines().count(), 1);
    assert!(!out.exists());
}

#[test]
fn dash_reads_the_genome_from_standard_input() {
    let dir = temp_dir();
    let text = genome(&["random", "--seed", "8", "--tries", "0", "--template", small_template(&dir).to_str().unwrap()]);
    let out = dir.join("stdin.png");
    let mut child = Command::new(bin())
        .args(["flame", "render", "-", "-o", out.to_str().unwrap(), "--backend", "cpu", "--quiet"])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(read_png(&out).unwrap().width, 40);
    // The genome tools read standard input the same way.
    let mut child = Command::new(bin())
        .args(["flame", "genome", "clone", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success());
    assert_eq!(
        parse_str(&stdout(&o), "c", &lenient()).unwrap().flames,
        parse_str(&text, "t", &lenient()).unwrap().flames
    );
}

#[test]
fn a_palette_file_that_does_not_exist_is_an_error() {
    let dir = temp_dir();
    let g = dir.join("pal.flam3");
    std::fs::write(
        &g,
        genome(&["random", "--seed", "4", "--tries", "0", "--template", small_template(&dir).to_str().unwrap()]),
    )
    .unwrap();
    let missing = dir.join("no-such-palettes.xml");
    let r = render(&g, &dir.join("pal.png"), &["--palettes", missing.to_str().unwrap()]);
    assert!(!r.status.success());
    assert_eq!(stderr(&r).trim().lines().count(), 1, "{}", stderr(&r));
    assert!(stderr(&r).contains("no-such-palettes.xml"), "{}", stderr(&r));
    let o = warpmc(&["flame", "genome", "random", "--palettes", missing.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(stdout(&o).is_empty());
}

/// As flam3-genome, each mutant and child is made again (its parents
/// picked anew) until its test render passes, up to --tries times (50):
/// rendered again with other random numbers, nearly all pass. (Made once
/// each, 13 of 30 mutants of this sheep and 18 of 30 children failed
/// flam3-genome's test; flam3-genome's own failed 3 of 30 and 0 of 30.)
#[test]
fn mutants_and_children_pass_flam3_genomes_test_render() {
    use warpmc_flame::genome::tools::{GenomeRng, Operation, passes_test_render};
    let sheep = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/flames/electricsheep.244.80692.flam3");
    let other = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/flames/electricsheep.244.00216.flam3");
    for (op, args) in [
        ("mutate", vec!["mutate", sheep, "--seed", "1", "--repeat", "20"]),
        ("cross", vec!["cross", sheep, other, "--seed", "1", "--repeat", "20"]),
    ] {
        let flames = parse_str(&genome(&args), op, &lenient()).unwrap().flames;
        assert_eq!(flames.len(), 20);
        let passed = (0..)
            .zip(&flames)
            .filter(|&(i, f)| passes_test_render(f, &mut GenomeRng::new(99, Operation::Pick, i)).unwrap())
            .count();
        assert!(passed >= 17, "{op}: {passed} of 20 pass the test render again");
    }
}

/// When no try passes, the last flame is kept with a warning, as
/// flam3-genome keeps it; --tries 0 keeps the first without a test.
#[test]
fn a_flame_that_never_passes_the_test_is_kept_with_a_warning() {
    let dir = temp_dir();
    let dark = dir.join("dark.flam3");
    // No colours: a palette of transparent black, whose renders are black.
    std::fs::write(
        &dark,
        r#"<flame size="32 32" scale="16"><xform weight="1" coefs="0.5 0 0 0.5 0 0" linear="1"/>
        <xform weight="1" coefs="0.5 0 0 0.5 0.5 0" linear="1"/></flame>"#,
    )
    .unwrap();
    let d = dark.to_str().unwrap();
    for (args, warning) in [
        (vec!["mutate", d, "--method", "post_xforms", "--tries", "3"], Some("mutation 0: none of 3 tries passed")),
        (vec!["cross", d, d, "--method", "union", "--tries", "2", "--repeat", "2"], Some("child 1: none of 2 tries")),
        (vec!["mutate", d, "--method", "post_xforms", "--tries", "0"], None),
    ] {
        let mut all = vec!["flame", "genome"];
        all.extend_from_slice(&args);
        let o = warpmc(&all);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        assert!(!parse_str(&stdout(&o), "kept", &lenient()).unwrap().flames.is_empty());
        match warning {
            Some(w) => assert!(stderr(&o).contains(w), "{args:?}: {}", stderr(&o)),
            None => assert!(!stderr(&o).contains("tries"), "{args:?}: {}", stderr(&o)),
        }
    }
}

#[test]
fn bad_genome_tool_input_is_one_line() {
    for args in [
        &["flame", "genome", "random", "--vars", "nosuchvariation"][..],
        // flam3 numbers 0 to 98.
        &["flame", "genome", "random", "--vars", "linear,99"][..],
        &["flame", "genome", "random", "--vars", "-1"][..],
        &["flame", "genome", "random", "--no-vars", "200"][..],
        &["flame", "genome", "rotate", "/no/such/file.flam3"][..],
        &["flame", "genome", "strip", "/no/such/file.flam3", "--nstrips", "0"][..],
        // A transition needs exactly two flames.
        &[
            "flame",
            "genome",
            "inter",
            concat!(env!("CARGO_MANIFEST_DIR"), "/examples/flames/electricsheep.244.80692.flam3"),
        ][..],
    ] {
        let o = warpmc(args);
        assert!(!o.status.success(), "{args:?}");
        let e = stderr(&o);
        assert!(!e.contains("panicked"), "{e}");
    }
}

#[test]
fn a_result_the_reader_would_refuse_is_not_written() {
    let dir = temp_dir();
    // Turning coefficients near the largest f64 overflows them; cutting a
    // flame of scale 0 into strips divides by zero.
    let huge = dir.join("huge-coefs.flam3");
    std::fs::write(
        &huge,
        r#"<flame size="64 48" scale="20"><xform weight="1" linear="1" coefs="1.7e308 1.7e308 1.7e308 -1.7e308 0 0"/></flame>"#,
    )
    .unwrap();
    let flat = dir.join("scale-0.flam3");
    std::fs::write(
        &flat,
        r#"<flame size="64 48" scale="0"><xform weight="1" linear="1" coefs="1 0 0 1 0 0"/></flame>"#,
    )
    .unwrap();
    let out = dir.join("kept.flam3");
    let (huge, flat, out_s) = (huge.to_str().unwrap(), flat.to_str().unwrap(), out.to_str().unwrap());
    for args in [
        &["flame", "genome", "rotate", huge, "--frame", "5", "--nframes", "40", "-o", out_s][..],
        &["flame", "genome", "strip", flat, "--nstrips", "2", "-o", out_s][..],
        // A sequence is written frame by frame; its second frame overflows.
        &["flame", "genome", "sequence", huge, "--nframes", "8", "-o", out_s][..],
    ] {
        std::fs::write(&out, "earlier work").unwrap();
        let o = warpmc(args);
        let e = stderr(&o);
        assert!(!o.status.success(), "{args:?} exited 0");
        assert!(e.contains("is not a finite number") && e.contains("nothing was written"), "{args:?}: {e}");
        assert_eq!(e.trim().lines().count(), 1, "{args:?}: {e}");
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "earlier work", "{args:?}");
    }
    // An unnamed flame the reader refuses is named by its place in the
    // result: here the first strip of the second flame.
    let two = dir.join("second-scale-0.flam3");
    std::fs::write(
        &two,
        r#"<flames><flame size="64 48" scale="20"><xform weight="1" linear="1" coefs="1 0 0 1 0 0"/></flame><flame size="64 48" scale="0"><xform weight="1" linear="1" coefs="1 0 0 1 0 0"/></flame></flames>"#,
    )
    .unwrap();
    let o = warpmc(&["flame", "genome", "strip", two.to_str().unwrap(), "--nstrips", "2", "-o", out_s]);
    let e = stderr(&o);
    assert!(!o.status.success());
    assert!(e.starts_with("error: the result: flame #2: ") && e.contains("nothing was written"), "{e}");
    // To standard output the frames before the bad one are out already:
    // the error says where the output ends, and the status is not 0.
    let o = warpmc(&["flame", "genome", "sequence", huge, "--nframes", "8"]);
    let e = stderr(&o);
    assert!(!o.status.success());
    assert!(e.contains("is not a finite number") && e.contains("the output ends before this flame"), "{e}");
    assert_eq!(String::from_utf8_lossy(&o.stdout).matches("<flame ").count(), 1);
}

fn have(program: &str) -> bool {
    Command::new("sh").arg("-c").arg(format!("command -v {program}")).output().is_ok_and(|o| o.status.success())
}

#[test]
fn genome_tool_output_renders_in_flam3() {
    if !have("flam3-render") {
        println!("SKIPPED genome_tool_output_renders_in_flam3: flam3-render not installed");
        return;
    }
    let dir = temp_dir();
    let t = small_template(&dir);
    let keys = dir.join("f3keys.flam3");
    let text = genome(&["random", "--seed", "12", "--repeat", "2", "--template", t.to_str().unwrap(), "--tries", "0"]);
    std::fs::write(&keys, text).unwrap();
    let k = keys.to_str().unwrap();
    for (name, args) in [
        ("random", vec!["random", "--seed", "13", "--repeat", "3", "--template", t.to_str().unwrap(), "--tries", "0"]),
        ("mutate", vec!["mutate", k, "--repeat", "3"]),
        ("cross", vec!["cross", k, k, "--repeat", "2"]),
        ("sequence", vec!["sequence", k, "--nframes", "2"]),
        ("inter", vec!["inter", k, "--frame", "1", "--nframes", "3"]),
    ] {
        let file = dir.join(format!("f3-{name}.flam3"));
        std::fs::write(&file, genome(&args)).unwrap();
        let r = Command::new("flam3-render")
            .env("in", &file)
            .env("prefix", dir.join(format!("f3-{name}.")))
            .env("isaac_seed", "1")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&r.stderr);
        assert!(r.status.success(), "{name}: {err}");
        assert!(!err.to_lowercase().contains("warning"), "{name}: {err}");
        assert!(dir.join(format!("f3-{name}.00000.png")).exists(), "{name}: {err}");
    }
}

/// `inter` writes the same three genomes as flam3-genome's `inter=` (times,
/// xform count and affine coefficients, to flam3's six printed digits).
#[test]
fn inter_matches_flam3_genome() {
    if !have("flam3-genome") {
        println!("SKIPPED inter_matches_flam3_genome: flam3-genome not installed");
        return;
    }
    let keys = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/flames/test.flam3");
    for frame in ["0", "7", "19", "20"] {
        let r =
            Command::new("flam3-genome").env("inter", &keys).env("frame", frame).env("nframes", "20").output().unwrap();
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        let theirs = parse_str(&String::from_utf8_lossy(&r.stdout), "flam3", &lenient()).unwrap().flames;
        let text = genome(&["inter", keys.to_str().unwrap(), "--frame", frame, "--nframes", "20"]);
        let ours = parse_str(&text, "warpmc", &lenient()).unwrap().flames;
        assert_eq!(ours.len(), 3);
        assert_eq!(theirs.len(), 3);
        for (a, b) in ours.iter().zip(&theirs) {
            assert_eq!(a.time, b.time, "frame {frame}");
            assert_eq!(a.xforms.len(), b.xforms.len(), "frame {frame}");
            for (xa, xb) in a.xforms.iter().zip(&b.xforms) {
                for (ra, rb) in xa.coefs.c.iter().zip(&xb.coefs.c) {
                    for (u, v) in ra.iter().zip(rb) {
                        assert!((u - v).abs() < 2e-5, "frame {frame}: {u} vs flam3's {v}");
                    }
                }
            }
        }
    }
}

/// flam3-genome applies a template to each loop frame before the loop's
/// own settings (linear interpolation, hsv_circular palettes with no RGB
/// blend), and cuts a strip before the template (a template's size is the
/// strip's size); a strip has no motion elements. Compared with
/// flam3-genome's output where it is installed.
#[test]
fn templates_and_strips_follow_flam3_genome() {
    let dir = temp_dir();
    let flame = dir.join("tmpl-one.flam3");
    std::fs::write(
        &flame,
        r#"<flame size="200 160" center="0.1 0.2" scale="40" rotate="20" zoom="0.5">
        <xform weight="1" linear="1" coefs="0.5 0 0 0.5 0 0"><motion motion_frequency="1" color="0.5"/></xform>
        <xform weight="1" spherical="1" coefs="0.5 0.1 -0.1 0.5 0.5 0"/></flame>"#,
    )
    .unwrap();
    let template = dir.join("tmpl-settings.flam3");
    std::fs::write(
        &template,
        r#"<flame size="100 80" palette_interpolation="sweep" hsv_rgb_palette_blend="0.25" interpolation="smooth"/>"#,
    )
    .unwrap();
    let (f, t) = (flame.to_str().unwrap(), template.to_str().unwrap());
    let rotated = genome(&["rotate", f, "--frame", "3", "--nframes", "10", "--template", t]);
    let rotated = parse_str(&rotated, "rotate", &lenient()).unwrap().flames;
    for g in &rotated {
        assert_eq!(g.palette_interpolation, warpmc_flame::genome::PaletteInterpolation::HsvCircular);
        assert_eq!(g.hsv_rgb_palette_blend, 0.0);
        assert_eq!(g.interpolation, warpmc_flame::genome::Interpolation::Linear);
        assert_eq!((g.width, g.height), (100, 80));
    }
    let strip = genome(&["strip", f, "--nstrips", "4", "--strip", "1", "--template", t]);
    let strip = parse_str(&strip, "strip", &lenient()).unwrap().flames.remove(0);
    assert_eq!((strip.width, strip.height), (100, 80), "the template's size, not 200×40");
    assert!(strip.xforms.iter().all(|x| x.motion.is_empty()));
    // The strip's camera: cut from the 200×160 flame (rows 40 to 79, centre
    // 0.5 rows of 40 above the middle, turned by 20°), then the template's
    // height rescales the scale by 80/40.
    let ppu = 40.0 * 2f64.powf(0.5);
    let dy = -20.0 / ppu;
    let th = 20f64.to_radians();
    let want = [0.1 + th.sin() * dy, 0.2 + th.cos() * dy];
    assert!(
        (strip.center[0] - want[0]).abs() < 1e-12 && (strip.center[1] - want[1]).abs() < 1e-12,
        "{:?}",
        strip.center
    );
    assert!((strip.scale - 80.0).abs() < 1e-12, "{}", strip.scale);
    if !have("flam3-genome") {
        println!("SKIPPED the comparison with flam3-genome: not installed");
        return;
    }
    for (mode, env, ours) in [
        ("rotate", vec![("rotate", f), ("frame", "3"), ("nframes", "10")], &rotated[..]),
        ("strip", vec![("strip", f), ("nframes", "4"), ("frame", "1")], std::slice::from_ref(&strip)),
    ] {
        let mut c = Command::new("flam3-genome");
        c.env("template", t);
        for (k, v) in env {
            c.env(k, v);
        }
        let r = c.output().unwrap();
        assert!(r.status.success(), "{mode}: {}", String::from_utf8_lossy(&r.stderr));
        let theirs = parse_str(&String::from_utf8_lossy(&r.stdout), "flam3", &lenient()).unwrap().flames;
        assert_eq!(theirs.len(), ours.len(), "{mode}");
        for (a, b) in ours.iter().zip(&theirs) {
            assert_eq!((a.width, a.height, a.palette_interpolation), (b.width, b.height, b.palette_interpolation));
            assert_eq!(a.interpolation, b.interpolation);
            // flam3 writes the blend only where it is used (hsv_circular).
            if a.palette_interpolation == warpmc_flame::genome::PaletteInterpolation::HsvCircular {
                assert_eq!(a.hsv_rgb_palette_blend, b.hsv_rgb_palette_blend, "{mode}");
            }
            let close = |u: f64, v: f64| (u - v).abs() <= 1e-5 * u.abs().max(1.0);
            assert!(close(a.scale, b.scale) && close(a.center[0], b.center[0]) && close(a.center[1], b.center[1]));
            assert_eq!(a.xforms.len(), b.xforms.len());
            for (xa, xb) in a.xforms.iter().zip(&b.xforms) {
                assert!(close(xa.color, xb.color), "{mode}: colour {} vs flam3's {}", xa.color, xb.color);
                assert_eq!(xa.motion.len(), xb.motion.len(), "{mode}");
            }
        }
    }
}

/// clone --pick is flam3-genome's clone=: a flame picked at random loses
/// its xforms of weight below 0.001 and all but its 5 strongest variations
/// per xform, and the picks are timed 0, 1, … (checked against
/// flam3-genome where it is installed).
#[test]
fn picked_clones_are_truncated_as_flam3_genome_does() {
    let dir = temp_dir();
    let g = dir.join("clone-pick.flam3");
    let seven = r#"linear="0.1" swirl="0.05" sinusoidal="0.3" spherical="0.4" horseshoe="0.5" polar="0.6" julia="0.7""#;
    std::fs::write(
        &g,
        format!(
            r#"<flame time="7" size="40 32" scale="10">
            <xform weight="1" coefs="0.5 0 0 0.5 0 0" color="0" {seven}/>
            <xform weight="0.5" coefs="0.5 0 0 0.5 0.5 0" color="1" linear="1" bubble="0.2"/>
            <finalxform color="0" coefs="1 0 0 1 0 0" {seven}/>
            <color index="0" rgb="255 0 0"/><color index="255" rgb="0 0 255"/></flame>"#
        ),
    )
    .unwrap();
    let f = g.to_str().unwrap();
    let ours = parse_str(&genome(&["clone", f, "--pick", "--repeat", "2"]), "ours", &lenient()).unwrap().flames;
    assert_eq!(ours.len(), 2);
    for (rep, c) in ours.iter().enumerate() {
        assert_eq!(c.time, rep as f64);
        assert_eq!(c.xforms.len(), 2);
        // The seven-variation xforms keep their five strongest.
        for x in [&c.xforms[0], c.final_xform.as_ref().unwrap()] {
            assert_eq!(x.variations.len(), 5);
            assert!(x.variations.iter().all(|v| !["linear", "swirl"].contains(&v.kind.name())), "{x:?}");
        }
        assert_eq!(c.xforms[1].variations.len(), 2);
    }
    // An xform too light to matter is dropped.
    let light = dir.join("clone-light.flam3");
    std::fs::write(
        &light,
        r#"<flame size="40 32" scale="10"><xform weight="1" coefs="0.5 0 0 0.5 0 0" linear="1"/>
        <xform weight="0.0005" coefs="0.5 0 0 0.5 0.5 0" linear="1"/></flame>"#,
    )
    .unwrap();
    let picked = genome(&["clone", light.to_str().unwrap(), "--pick"]);
    assert_eq!(parse_str(&picked, "light", &lenient()).unwrap().flames[0].xforms.len(), 1);
    // Without --pick the flames are copied whole.
    let whole = parse_str(&genome(&["clone", f]), "whole", &lenient()).unwrap().flames;
    assert_eq!((whole[0].time, whole[0].xforms[0].variations.len()), (7.0, 7));
    // flam3 does not look again at the place of a removed xform: the final
    // xform that moves into it keeps its seven variations, and of two light
    // xforms in a row the second stays. The edit record names each cut.
    let skipped = dir.join("clone-skipped.flam3");
    std::fs::write(
        &skipped,
        format!(
            r#"<flame size="40 32" scale="10">
            <xform weight="0.0005" coefs="0.5 0 0 0.5 0 0" linear="1"/>
            <xform weight="0.0005" coefs="0.5 0 0 0.5 0.5 0" linear="1"/>
            <xform weight="1" coefs="0.5 0 0 0.5 0 0.5" color="1" {seven}/>
            <xform weight="0.0002" coefs="0.5 0 0 0.5 0.5 0.5" linear="1"/>
            <finalxform color="0" coefs="1 0 0 1 0 0" {seven}/></flame>"#
        ),
    )
    .unwrap();
    let s = skipped.to_str().unwrap();
    let picked = genome(&["clone", s, "--pick", "--edits"]);
    let c = parse_str(&picked, "skipped", &lenient()).unwrap().flames.remove(0);
    assert_eq!(c.xforms.iter().map(|x| x.variations.len()).collect::<Vec<_>>(), [1, 5]);
    assert_eq!(c.final_xform.as_ref().unwrap().variations.len(), 7);
    assert!(picked.contains(r#"action="clone trunc_density 0 trunc 1 3 trunc 1 0 trunc_density 2""#), "{picked}");
    if !have("flam3-genome") {
        println!("SKIPPED the comparison with flam3-genome: not installed");
        return;
    }
    for (file, repeat) in [(f, "2"), (s, "1")] {
        let ours =
            parse_str(&genome(&["clone", file, "--pick", "--repeat", repeat]), "ours", &lenient()).unwrap().flames;
        let r = Command::new("flam3-genome").env("clone", file).env("repeat", repeat).output().unwrap();
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        let theirs = parse_str(&String::from_utf8_lossy(&r.stdout), "flam3", &lenient()).unwrap().flames;
        assert_eq!(theirs.len(), ours.len());
        for (a, b) in ours.iter().zip(&theirs) {
            assert_eq!(a.time, b.time);
            assert_eq!(a.xforms.len(), b.xforms.len(), "{file}");
            for (xa, xb) in a.xforms.iter().chain(&a.final_xform).zip(b.xforms.iter().chain(&b.final_xform)) {
                let names =
                    |x: &warpmc_flame::genome::XForm| x.variations.iter().map(|v| v.kind.name()).collect::<Vec<_>>();
                assert_eq!(names(xa), names(xb), "{file}");
            }
        }
    }
}

#[test]
fn strips_that_leave_rows_out_say_so() {
    let dir = temp_dir();
    let g = dir.join("tall.flam3");
    std::fs::write(&g, r#"<flame size="8 47"><xform weight="1" coefs="1 0 0 1 0 0" linear="1" color="0"/></flame>"#)
        .unwrap();
    let o = warpmc(&["flame", "genome", "strip", g.to_str().unwrap(), "--nstrips", "3"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o).matches("size=\"8 15\"").count(), 3, "{}", stdout(&o));
    assert!(stderr(&o).contains("leave 2 rows out, half at the top and half at the bottom"), "{}", stderr(&o));
    let o = warpmc(&["flame", "genome", "strip", g.to_str().unwrap(), "--nstrips", "47"]);
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
}

#[test]
fn strips_too_thin_to_cut_are_one_error_line_without_the_rows_warning() {
    let dir = temp_dir();
    let g = dir.join("short.flam3");
    std::fs::write(&g, r#"<flame size="8 5"><xform weight="1" coefs="1 0 0 1 0 0" linear="1" color="0"/></flame>"#)
        .unwrap();
    let o = warpmc(&["flame", "genome", "strip", g.to_str().unwrap(), "--nstrips", "7"]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert!(e.contains("5 pixels high cannot be cut into 7 strips"), "{e}");
    // A count too large for memory too: the height is what is wrong.
    let o = warpmc(&["flame", "genome", "strip", g.to_str().unwrap(), "--nstrips", "4000000000"]);
    let e = stderr(&o);
    assert!(!o.status.success() && e.contains("5 pixels high cannot be cut into 4000000000 strips"), "{e}");
}

#[test]
fn an_output_onto_the_file_standard_input_reads_is_refused() {
    let dir = temp_dir();
    let g = dir.join("own.flam3");
    let xml =
        r#"<flame size="8 8"><xform weight="1" coefs="1 0 0 1 0 0" linear="1" color="0"/><edit nick="alice"/></flame>"#;
    std::fs::write(&g, xml).unwrap();
    for tool in ["clone", "strip", "mutate"] {
        let o = Command::new(bin())
            .args(["flame", "genome", tool, "-", "-o", g.to_str().unwrap()])
            .stdin(std::fs::File::open(&g).unwrap())
            .output()
            .unwrap();
        assert!(!o.status.success(), "{tool}: {}", stderr(&o));
        assert!(stderr(&o).contains("which this command reads"), "{tool}: {}", stderr(&o));
        assert_eq!(std::fs::read_to_string(&g).unwrap(), xml, "{tool} replaced its input");
    }
}

#[test]
fn genome_tools_keep_the_edit_history() {
    let dir = temp_dir();
    let g = dir.join("history.flam3");
    let xml = r#"<flame size="16 16" scale="8"><xform weight="1" coefs="0.5 0 0 0.5 0 0" linear="1" color="0"/>
      <xform weight="1" coefs="0.5 0 0 0.5 0.5 0" linear="1" color="1"/>
      <edit date="today" nick="alice"><edit date="earlier" action="random"/></edit></flame>"#;
    std::fs::write(&g, xml).unwrap();
    let history = r#"<edit date="today" nick="alice"><edit date="earlier" action="random"/></edit>"#;
    let f = g.to_str().unwrap();
    // A clone or a strip is the flame itself, with its record.
    for args in [vec!["clone", f], vec!["strip", f, "--nstrips", "2"]] {
        let out = genome(&args);
        assert!(out.contains(history), "{args:?}: {out}");
    }
    // A flame made from it has a history of its own: with --edits its
    // record holds the parent's; without, it has none (the parent's
    // record, copied, would say the parent's story was the child's, and a
    // file where only some flames have a record makes flam3-render fail).
    for args in [vec!["mutate", f, "--seed", "3"], vec!["rotate", f, "--frame", "3", "--nframes", "10"]] {
        let out = genome(&args);
        assert!(!out.contains("<edit"), "{args:?}: {out}");
        let out = genome(&[args.as_slice(), &["--edits"]].concat());
        let nested = history.replacen("<edit ", r#"<edit filename="history.flam3" index="0" "#, 1);
        assert!(out.contains(&nested) && !out.contains(&format!(">{history}")), "{args:?}: {out}");
    }
}

/// The `action` and `filename`/`index` attributes of every `<edit>` in
/// `xml`, in order (the dates differ from run to run).
fn edit_marks(xml: &str) -> Vec<String> {
    let attr = |tag: &str, name: &str| {
        tag.split(&format!(" {name}=\"")).nth(1).and_then(|r| r.split('"').next()).unwrap_or("").to_string()
    };
    xml.split("<edit")
        .skip(1)
        .map(|t| t.split('>').next().unwrap())
        .map(|t| format!("{}|{}|{}", attr(t, "action"), attr(t, "filename"), attr(t, "index")))
        .collect()
}

/// With --edits each flame gets flam3-genome's record of how it was made,
/// holding its parents' records marked with their file and index: the same
/// actions and marks as flam3-genome's. Without it the output stays the
/// same bytes for the same seed.
#[test]
fn edits_record_what_each_tool_did_as_flam3_genome_does() {
    let dir = temp_dir();
    let keys = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/flames/test.flam3");
    let k = keys.to_str().unwrap();
    let with_epoch = |args: &[&str]| {
        let mut all = vec!["flame", "genome"];
        all.extend_from_slice(args);
        let o = Command::new(bin()).args(&all).env("SOURCE_DATE_EPOCH", "0").output().unwrap();
        assert!(o.status.success(), "{all:?}: {}", stderr(&o));
        stdout(&o)
    };
    let random = with_epoch(&["random", "--seed", "4", "--tries", "0", "--edits"]);
    // "random", then flam3's notes of the variations truncation dropped.
    let action = random.split(r#"<edit date="Thu Jan  1 00:00:00 +0000 1970" action=""#).nth(1).unwrap();
    let action = &action[..action.find('"').unwrap()];
    let notes = action.strip_prefix("random").unwrap_or_else(|| panic!("{action}"));
    assert!(notes.is_empty() || notes.starts_with(" trunc "), "{action}");
    assert!(notes.split(" trunc ").skip(1).all(|n| n.split(' ').count() == 2), "{action}");
    let between = with_epoch(&["inter", k, "--frame", "5", "--nframes", "20", "--edits"]);
    assert_eq!(edit_marks(&between)[..3], ["interpolate 72||", "|test.flam3|0", "|test.flam3|1"]);
    assert!(between.contains(r#"<edit date="Thu Jan  1 00:00:00 +0000 1970" action="interpolate 90">"#));
    let seq = with_epoch(&["sequence", k, "--nframes", "2", "--edits"]);
    let actions: Vec<String> = edit_marks(&seq)
        .into_iter()
        .filter(|m| !m.starts_with('|'))
        .map(|m| m.split('|').next().unwrap().into())
        .collect();
    assert_eq!(
        actions,
        ["rotate 0", "rotate 180", "interpolate 0", "interpolate 180", "rotate 0", "rotate 180", "rotate 0"]
    );
    // A crossing by interpolation names its point, drawn or given, as
    // flam3-genome's "%7.5g" writes it.
    for (at, expect) in [(None, None), (Some("0.5"), Some("cross interpolate     0.5"))] {
        let mut args = vec!["cross", k, k, "--method", "interpolate", "--edits"];
        args.extend(at.iter().flat_map(|a| ["--at", *a]));
        let crossed = with_epoch(&args);
        let action = edit_marks(&crossed)[0].split('|').next().unwrap().to_string();
        match expect {
            Some(e) => assert_eq!(action, e),
            None => {
                let point = action.strip_prefix("cross interpolate ").unwrap_or_else(|| panic!("{action}"));
                assert!(point.len() >= 7, "{action}");
                assert!(point.trim().parse::<f64>().is_ok_and(|t| t > 0.0 && t < 1.0), "{action}");
            }
        }
    }
    // What every result holds reads back, and renders.
    for text in [&random, &between, &seq] {
        parse_str(text, "edits", &lenient()).unwrap();
    }
    // Without --edits: no record added, and the same bytes twice.
    let plain = with_epoch(&["inter", k, "--frame", "5", "--nframes", "20"]);
    assert!(!plain.contains("action=\"interpolate"), "{plain}");
    assert_eq!(plain, genome(&["inter", k, "--frame", "5", "--nframes", "20"]));
    // A date that is no date is one line.
    let o = Command::new(bin())
        .args(["flame", "genome", "random", "--edits", "--tries", "0"])
        .env("SOURCE_DATE_EPOCH", "yesterday")
        .output()
        .unwrap();
    assert!(!o.status.success() && stderr(&o).contains("SOURCE_DATE_EPOCH"), "{}", stderr(&o));
    if !have("flam3-genome") {
        println!("SKIPPED the comparison with flam3-genome's records: not installed");
        return;
    }
    for (ours, env) in [
        (
            vec!["inter", k, "--frame", "5", "--nframes", "20", "--edits"],
            [("inter", k), ("frame", "5"), ("nframes", "20")],
        ),
        (
            vec!["rotate", k, "--frame", "3", "--nframes", "10", "--edits"],
            [("rotate", k), ("frame", "3"), ("nframes", "10")],
        ),
    ] {
        if ours[0] == "rotate" {
            // rotate= takes a file of one flame.
            let one = dir.join("one.flam3");
            let first = parse_file(&keys, &lenient()).unwrap().flames.remove(0);
            std::fs::write(&one, warpmc_flame::genome::write_genome(&[first], "pick", None)).unwrap();
            let o = one.to_str().unwrap();
            let mut ours = ours.clone();
            ours[1] = o;
            let r =
                Command::new("flam3-genome").env("rotate", o).env("frame", "3").env("nframes", "10").output().unwrap();
            assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
            assert_eq!(edit_marks(&with_epoch(&ours)), edit_marks(&String::from_utf8_lossy(&r.stdout)), "rotate");
            continue;
        }
        let r = Command::new("flam3-genome").envs(env).output().unwrap();
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        assert_eq!(edit_marks(&with_epoch(&ours)), edit_marks(&String::from_utf8_lossy(&r.stdout)), "{}", ours[0]);
    }
}

/// Standard input can be read once: two inputs naming `-` are refused
/// with that reason, not with the second read's empty document.
#[test]
fn standard_input_named_twice_is_refused_with_the_reason() {
    let o = Command::new(bin())
        .args(["flame", "genome", "cross", "-", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
        .wait_with_output()
        .unwrap();
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("FIRST and SECOND both read standard input"), "{e}");
    assert_eq!(e.trim().lines().count(), 1, "{e}");
}

#[test]
fn a_template_of_several_flames_is_read_for_its_first_with_a_warning() {
    let dir = temp_dir();
    let template = dir.join("two-templates.flam3");
    std::fs::write(&template, r#"<flames><flame size="100 80"/><flame size="60 50"/></flames>"#).unwrap();
    let g = dir.join("for-two-templates.flam3");
    std::fs::write(&g, r#"<flame size="8 8"><xform weight="1" coefs="1 0 0 1 0 0" linear="1" color="0"/></flame>"#)
        .unwrap();
    let o = warpmc(&["flame", "genome", "clone", g.to_str().unwrap(), "--template", template.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains(r#"size="100 80""#), "{}", stdout(&o));
    assert!(stderr(&o).contains("the template has 2 flames; the first is used"), "{}", stderr(&o));
}

/// `genome animate` writes the flame at each whole time between control
/// points, as flam3-genome's animate= does (checked against it where it is
/// installed): the control points themselves at their times, interpolated
/// flames between, extrapolated beyond.
#[test]
fn animate_writes_a_flame_per_frame_as_flam3_genome_does() {
    let keys = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/flames/test.flam3");
    let k = keys.to_str().unwrap();
    let parsed = |text: &str| parse_str(text, "warpmc", &lenient()).unwrap().flames;
    let originals = parse_str(&std::fs::read_to_string(&keys).unwrap(), "keys", &lenient()).unwrap().flames;
    let ours = parsed(&genome(&["animate", k, "--begin", "-2", "--end", "102", "--stagger", "0.4"]));
    assert_eq!(ours.len(), 105);
    assert_eq!(ours.iter().map(|f| f.time).collect::<Vec<_>>(), (-2..=102).map(f64::from).collect::<Vec<_>>());
    // At a control point's time, the control point.
    for (frame, key) in [(&ours[2], &originals[0]), (&ours[102], &originals[1])] {
        assert_eq!(frame.xforms.len(), key.xforms.len());
        assert_eq!(frame.xforms[0].coefs.c, key.xforms[0].coefs.c);
    }
    // By default from the first control point's time to the last's; an end
    // before the beginning gives the beginning alone.
    assert_eq!(parsed(&genome(&["animate", k])).len(), 101);
    assert_eq!(parsed(&genome(&["animate", k, "--begin", "10", "--end", "5"])).len(), 1);
    // Control points out of time order are refused, as flam3-genome refuses them.
    let dir = temp_dir();
    let unordered = dir.join("animate-unordered.flam3");
    std::fs::write(&unordered, std::fs::read_to_string(&keys).unwrap().replace("time=\"100\"", "time=\"0\"")).unwrap();
    let o = warpmc(&["flame", "genome", "animate", unordered.to_str().unwrap()]);
    assert!(!o.status.success() && stderr(&o).contains("must be in time order"), "{}", stderr(&o));
    // A frame between control points has the name of the last frame that
    // was one (none before the first), as in flam3-genome.
    let named = dir.join("animate-named.flam3");
    let key = |name: &str, t: u32, dy: f64| {
        format!(
            r#"<flame {name} time="{t}" size="16 16" scale="8"><xform weight="1" coefs="0.5 0 0 0.5 0 {dy}" linear="1" color="0"/><xform weight="1" coefs="0.5 0 0 0.5 0.5 0" linear="1" color="1"/></flame>"#
        )
    };
    let text =
        format!("<k>{}{}{}</k>", key(r#"name="alpha""#, 0, 0.0), key("", 2, 0.2), key(r#"name="gamma""#, 4, 0.1));
    std::fs::write(&named, text).unwrap();
    let frames = parsed(&genome(&["animate", named.to_str().unwrap(), "--begin", "-1", "--end", "6"]));
    let names: Vec<Option<&str>> = frames.iter().map(|f| f.name.as_deref()).collect();
    let (a, g) = (Some("alpha"), Some("gamma"));
    assert_eq!(names, [None, a, a, None, None, g, g, g]);
    if !have("flam3-genome") {
        println!("SKIPPED the comparison with flam3-genome: not installed");
        return;
    }
    let r = Command::new("flam3-genome").env("animate", &named).env("begin", "-1").env("end", "6").output().unwrap();
    let theirs = parsed(&String::from_utf8_lossy(&r.stdout));
    assert_eq!(theirs.iter().map(|f| f.name.as_deref()).collect::<Vec<_>>(), names);
    let r = Command::new("flam3-genome")
        .env("animate", &keys)
        .env("begin", "-2")
        .env("end", "102")
        .env("stagger", "0.4")
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let theirs = parsed(&String::from_utf8_lossy(&r.stdout));
    assert_eq!(theirs.len(), ours.len());
    for (a, b) in ours.iter().zip(&theirs) {
        let t = a.time;
        assert_eq!((a.time, a.xforms.len(), a.affine_interpolation), (b.time, b.xforms.len(), b.affine_interpolation));
        assert_eq!(a.name, b.name, "t = {t}");
        assert!((a.center[0] - b.center[0]).abs() < 1e-5 && (a.scale - b.scale).abs() < 1e-4 * b.scale, "t = {t}");
        for (xa, xb) in a.xforms.iter().zip(&b.xforms) {
            assert!((xa.weight - xb.weight).abs() < 1e-5, "t = {t}");
            for (ra, rb) in xa.coefs.c.iter().zip(&xb.coefs.c) {
                for (u, v) in ra.iter().zip(rb) {
                    assert!((u - v).abs() < 2e-5, "t = {t}: {u} vs flam3's {v}");
                }
            }
        }
    }
}

/// A random flame is framed before the template's settings are applied, as
/// flam3-genome frames it: its scale then follows the template's height.
#[test]
fn random_flames_take_the_template_after_framing() {
    let dir = temp_dir();
    let scale_with = |w: u32, h: u32| {
        let t = dir.join(format!("random-template-{w}x{h}.flam3"));
        std::fs::write(&t, format!(r#"<flame size="{w} {h}" quality="1"/>"#)).unwrap();
        let text = genome(&["random", "--seed", "7", "--tries", "0", "--template", t.to_str().unwrap()]);
        let f = parse_str(&text, "random", &lenient()).unwrap().flames.remove(0);
        assert_eq!((f.width, f.height), (w, h));
        f.scale
    };
    let square = scale_with(100, 100);
    assert!((scale_with(100, 50) / square - 0.5).abs() < 1e-12);
    assert!((scale_with(300, 100) / square - 1.0).abs() < 1e-12);
}

/// Ctrl-C while flames are made one after another: the flames made so far
/// are written, whole, and the message says how many (flam3-genome, which
/// prints each flame as it is made, leaves them too).
#[test]
fn an_interrupted_tool_writes_the_flames_it_made() {
    let child = Command::new(bin())
        .args(["flame", "genome", "random", "--repeat", "5000", "--seed", "5"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_secs(2));
    Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    let e = stderr(&o);
    let written = stdout(&o);
    if e.contains("before the first") {
        assert!(written.is_empty(), "{written}");
    } else {
        let n: usize = e
            .split("interrupted: the first ")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{e}"));
        assert!(e.contains("of 5000 flames were written to standard output"), "{e}");
        assert_eq!(parse_str(&written, "interrupted", &lenient()).unwrap().flames.len(), n);
    }
}

/// What the genome tools leave out of what they write is named: an xform's
/// label as such (the flame's own name is kept), and what warpmc does not
/// implement (a variation, Fractorium's 3-D camera).
#[test]
fn what_a_tool_does_not_write_is_named() {
    let dir = temp_dir();
    let g = dir.join("dropped.flame");
    std::fs::write(
        &g,
        r#"<flame name="keep me" size="16 16" scale="8" cam_zpos="0.5">
  <xform name="arm" weight="1" coefs="0.5 0 0 0.5 0 0" linear="1" julia3D="0.2" julia3D_power="2" color="0"/>
  <xform weight="1" coefs="0.5 0 0 0.5 0.5 0" linear="1" color="1"/>
</flame>"#,
    )
    .unwrap();
    let o = warpmc(&["flame", "genome", "clone", g.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("as in flam3-genome's: xform name"), "{e}");
    let left_out =
        e.lines().find(|l| l.contains("not carried into the output either")).unwrap_or_else(|| panic!("{e}"));
    assert!(left_out.contains("julia3D") && left_out.contains("cam_zpos"), "{e}");
    let written = stdout(&o);
    assert!(written.contains(r#"name="keep me""#) && !written.contains("julia3D") && !written.contains("cam_zpos"));
}

/// flam3-genome's signature of its records (nick=, url=, id=, comment=)
/// and its subpixel jitter (offset=): --nick, --url, --id, --comment and
/// --offset.
#[test]
fn records_are_signed_and_flames_jittered_as_flam3_genome_does() {
    let keys = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/flames/test.flam3");
    let k = keys.to_str().unwrap();
    let inter = ["inter", k, "--frame", "5", "--nframes", "20"];
    let signed = genome(
        &[
            &inter[..],
            &["--edits", "--nick", "spot", "--url", "https://x.org/?a=1&b=2", "--id", "42"],
            &["--comment", "made <b>by</b> hand", "--offset", "0.5:-0.25"],
        ]
        .concat(),
    );
    let flames = parse_str(&signed, "signed", &lenient()).unwrap().flames;
    let plain = parse_str(&genome(&inter), "plain", &lenient()).unwrap().flames;
    assert_eq!(flames.len(), 3);
    for (f, p) in flames.iter().zip(&plain) {
        let e = f.edits.as_deref().unwrap();
        let tag = &e[..e.find('>').unwrap()];
        let after_date = &tag[tag.find(" nick=").unwrap_or_else(|| panic!("{tag}"))..];
        assert!(after_date.starts_with(r#" nick="spot" url="https://x.org/?a=1&amp;b=2" id="42" action="interpolate"#));
        assert!(e.ends_with("made <b>by</b> hand</edit>"), "{e}");
        // Half a pixel across and a quarter back, at 240 pixels per unit.
        assert!((f.center[0] - p.center[0] - 0.5 / 240.0).abs() < 1e-15, "{:?} {:?}", f.center, p.center);
        assert!((f.center[1] - p.center[1] + 0.25 / 240.0).abs() < 1e-15, "{:?} {:?}", f.center, p.center);
    }
    // Each tool that jitters: the same move.
    let one = |args: &[&str]| parse_str(&genome(args), "out", &lenient()).unwrap().flames[0].center;
    for tool in [&["clone", k][..], &["strip", k, "--nstrips", "2", "--strip", "1"], &["sequence", k, "--nframes", "2"]]
    {
        let moved = one(&[tool, &["--offset", "2:0"]].concat());
        let still = one(tool);
        assert!((moved[0] - still[0] - 2.0 / 240.0).abs() < 1e-12 && moved[1] == still[1], "{tool:?}");
    }
    // Refused, each with one line.
    for (args, says) in [
        (vec!["--edits", "--comment", "a & b"], "--comment is not XML content"),
        (vec!["--edits", "--comment", "</edit>"], "--comment is not XML content"),
        (vec!["--nick", "spot"], "--edits"),
        (vec!["--offset", "1"], "X:Y"),
        (vec!["--offset", "1:nan"], "X:Y"),
    ] {
        let all = [&["flame", "genome"][..], &inter, &args].concat();
        let o = warpmc(&all);
        assert!(!o.status.success(), "{args:?}");
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
    }
    if !have("flam3-genome") {
        println!("SKIPPED the comparison with flam3-genome's offset=: not installed");
        return;
    }
    let r = Command::new("flam3-genome")
        .envs([("inter", k), ("frame", "5"), ("nframes", "20"), ("offset", "0.5:-0.25"), ("nick", "spot")])
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let theirs = String::from_utf8_lossy(&r.stdout);
    assert!(theirs.contains(r#" nick="spot" action="interpolate 72""#), "{theirs}");
    for (ours, theirs) in flames.iter().zip(parse_str(&theirs, "flam3-genome", &lenient()).unwrap().flames) {
        for i in 0..2 {
            // flam3-genome writes six significant digits.
            assert!((ours.center[i] - theirs.center[i]).abs() <= 1e-5 * ours.center[i].abs().max(1e-3));
        }
    }
}
