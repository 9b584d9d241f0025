//! Regression tests for the defects a hostile-input campaign found in the
//! genome reader, the palette reader, the renderer and the image reader:
//! each input must give one clear error (or a correct result), never a
//! panic, an abort, a stack overflow or an out-of-memory kill.

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use warpmc_flame::genome::{ParseOptions, parse_file, parse_str};
use warpmc_flame::image::{decode_png, read_png};
use warpmc_flame::palette::PaletteLibrary;
use warpmc_flame::render::{RenderSettings, RenderedFrame, render};
use warpmc_flame::{Flame, FlameError};

fn temp(name: &str) -> PathBuf {
    let dir = warpmc_testkit::scratch_dir("flame-hostile");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Runs `f` on a thread with a 2 MiB stack (Rust's default for spawned
/// threads, smaller than a main thread's), as a library user's worker
/// thread would.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new().stack_size(2 << 20).spawn(f).unwrap().join().unwrap()
}

/// XML elements nested `depth` deep around `inner`.
fn nested(depth: usize, tag: &str, inner: &str) -> String {
    format!("{}{inner}{}", format!("<{tag}>").repeat(depth), format!("</{tag}>").repeat(depth))
}

// ---- Deep XML -------------------------------------------------------------

#[test]
fn a_genome_nested_30000_deep_is_an_error_not_a_stack_overflow() {
    let flame = r#"<flame size="8 8"><xform weight="1" linear="1"/></flame>"#;
    let path = temp("deep.flam3");
    std::fs::write(&path, nested(30_000, "flames", flame)).unwrap();
    let e = on_small_stack(move || parse_file(&path, &ParseOptions::default())).unwrap_err();
    assert!(matches!(e, FlameError::Genome(_)), "{e}");
    let e = e.to_string();
    assert!(e.contains("deep.flam3") && e.contains("nested more than"), "{e}");
    // Through the string reader too, and with the depth inside the flame.
    let inside = nested(30_000, "xform", "");
    let xml = format!(r#"<flame size="8 8">{inside}</flame>"#);
    let e = on_small_stack(move || parse_str(&xml, "inside.flam3", &ParseOptions::default())).unwrap_err();
    assert!(e.to_string().contains("nested more than"), "{e}");
    // Ordinary nesting is fine.
    let ok = nested(20, "flames", flame);
    assert_eq!(on_small_stack(move || parse_str(&ok, "ok", &ParseOptions::default())).unwrap().flames.len(), 1);
}

#[test]
fn a_palette_file_nested_30000_deep_is_an_error_not_a_stack_overflow() {
    let path = temp("deep-palettes.xml");
    std::fs::write(&path, nested(30_000, "palettes", "")).unwrap();
    let p = path.clone();
    let e = on_small_stack(move || PaletteLibrary::load(&p)).unwrap_err();
    assert!(matches!(e, FlameError::Palette(_)), "{e}");
    let e = e.to_string();
    assert!(e.contains("deep-palettes.xml") && e.contains("nested more than"), "{e}");
    // A genome with a numbered palette names the palette file's problem.
    let opts = ParseOptions { palette_file: Some(path), ..ParseOptions::default() };
    let xml = r#"<flame size="8 8" palette="3"><xform weight="1" linear="1"/></flame>"#;
    let e = on_small_stack(move || parse_str(xml, "numbered.flam3", &opts)).unwrap_err();
    assert!(e.to_string().contains("nested more than"), "{e}");
}

#[test]
fn deep_nesting_through_entities_is_an_error_not_a_stack_overflow() {
    // Nine entities inside one another, each adding 3000 levels of
    // elements: 27 000 levels that no stretch of the text shows.
    let mut dtd = String::from("<!DOCTYPE flames [\n<!ENTITY e0 \"x\">\n");
    for k in 1..=9 {
        dtd += &format!("<!ENTITY e{k} \"{}\">\n", nested(3000, "a", &format!("&e{};", k - 1)));
    }
    dtd += "]>\n";
    let xml = format!(r#"{dtd}<flames><flame size="8 8"><xform weight="1" linear="1"/></flame>&e9;</flames>"#);
    let r = on_small_stack(move || parse_str(&xml, "entities.flam3", &ParseOptions::default()).map(|p| p.flames.len()));
    let e = r.unwrap_err().to_string();
    assert!(e.contains("more than 257 levels deep"), "{e}");
}

// ---- Sizes checked before they are allocated ------------------------------

/// One flame: a linear map on a small frame, with `attrs` added (or
/// replacing its size).
fn flame_with(attrs: &str) -> Vec<Flame> {
    let size = if attrs.contains("size=") { "" } else { r#"size="32 24""# };
    let xml = format!(
        r#"<flame {size} scale="10" quality="1" {attrs}><xform weight="1" linear="1" coefs="0.5 0 0 0.5 0 0"/>
        <xform weight="1" linear="1" coefs="0.5 0 0 0.5 0.5 0"/></flame>"#
    );
    parse_str(&xml, "t.flam3", &ParseOptions::default()).unwrap_or_else(|e| panic!("{attrs}: {e}")).flames
}

/// Renders on the CPU on a thread of its own, waiting at most `limit`:
/// `None` when it was still running (the thread is left behind), else
/// what the render returned, or the message of its panic as an error.
fn render_within(
    flames: Vec<Flame>,
    settings: RenderSettings,
    limit: Duration,
) -> Option<Result<RenderedFrame, String>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let r = std::panic::catch_unwind(|| render(&flames, 0.0, &settings));
        let _ = tx.send(r);
    });
    match rx.recv_timeout(limit) {
        Ok(Ok(r)) => Some(r.map_err(|e| e.to_string())),
        Ok(Err(panic)) => {
            let m = panic.downcast_ref::<String>().cloned().or(panic.downcast_ref::<&str>().map(|s| s.to_string()));
            panic!("the render panicked: {}", m.unwrap_or_default())
        }
        Err(_) => None,
    }
}

/// The error a render must give, quickly.
fn refused(attrs: &str, settings: RenderSettings) -> String {
    let start = Instant::now();
    let r = render_within(flame_with(attrs), settings, Duration::from_secs(30));
    let r = r.unwrap_or_else(|| panic!("{attrs}: still rendering after 30 s"));
    let e = r.err().unwrap_or_else(|| panic!("{attrs}: rendered"));
    assert!(start.elapsed() < Duration::from_secs(5), "{attrs}: refused only after {:?}", start.elapsed());
    assert!(!e.contains('\n'), "{e}");
    e
}

fn tiny() -> RenderSettings {
    RenderSettings { quality_scale: 1e-3, ..RenderSettings::default() }
}

#[test]
fn a_30000_square_frame_is_refused_up_front_with_the_memory_it_needs() {
    // 9·10⁸ cells: inside the CPU renderer's 2^32-cell index, but with the
    // accumulation buffer and the finished pixels some 43 GB.
    let budget = warpmc_host::available_memory();
    if budget.as_ref().is_none_or(|b| b.bytes >= 43_000_000_000) {
        println!("SKIPPED a_30000_square_frame_is_refused_up_front: {budget:?} holds the frame");
        return;
    }
    let e = refused(r#"size="30000 30000""#, tiny());
    assert!(e.starts_with("a 30000 × 30000 frame (histogram and accumulation buffer of 9"), "{e}");
    assert!(e.contains(" of host memory but only ") && e.contains(" is free"), "{e}");
}

#[test]
fn filter_2147483647_is_refused_not_a_capacity_overflow() {
    let e = refused(r#"filter="2147483647""#, tiny());
    assert!(e.contains("spatial filter radius 2147483647 is too large"), "{e}");
}

#[test]
fn filter_65536_is_refused_before_its_kernel_is_allocated() {
    // A kernel 196 609 cells wide: 309 GB of coefficients, and a
    // histogram gutter to match.
    let e = refused(r#"filter="65536""#, tiny());
    assert!(e.contains("filter kernels: ") && e.contains(" of host memory but only "), "{e}");
}

#[test]
fn a_negative_filter_radius_is_refused_as_flam3_refuses_it() {
    let e = refused(r#"filter="-2""#, tiny());
    assert_eq!(e, "spatial filter radius -2 is too small to give a kernel (flam3 refuses it too)");
    // flam3 takes a radius just below zero as a one-cell kernel.
    let r = render_within(flame_with(r#"filter="-0.1""#), tiny(), Duration::from_secs(30)).unwrap();
    assert!(r.is_ok(), "{r:?}");
}

#[test]
fn filter_1e308_does_not_wrap_to_a_one_pixel_kernel() {
    let e = refused(r#"filter="1e308""#, tiny());
    assert!(e.contains("spatial filter radius 1e308 is too large: its kernel would be inf cells wide"), "{e}");
}

#[test]
fn an_estimator_radius_of_1e300_is_refused_not_an_overflow() {
    let e = refused(r#"estimator_radius="1e300""#, tiny());
    assert!(e.contains("estimator_radius 1e300 is too large"), "{e}");
}

#[test]
fn passes_and_temporal_samples_beyond_memory_are_refused() {
    // 1.6·10¹⁹ temporal samples in all: their times and weights alone
    // would be 2.6·10²⁰ bytes. The quality gives each pass some
    // iterations (7.7·10⁹ in all).
    let settings = RenderSettings { temporal_samples: Some(4_000_000_000), quality_scale: 1e7, ..tiny() };
    let e = refused(r#"passes="4000000000""#, settings);
    assert!(e.contains("temporal samples: ") && e.contains(" of host memory but only "), "{e}");
}

#[test]
fn a_size_scale_beyond_the_largest_image_is_refused_not_saturated() {
    let e = refused("", RenderSettings { size_scale: 1e9, ..tiny() });
    assert!(e.contains("the output image would be 32000000000 × 24000000000 pixels"), "{e}");
}

#[test]
fn a_zoom_of_1e308_is_refused_not_an_endless_render() {
    let e = refused(r#"zoom="1e308""#, tiny());
    assert!(e.contains("asks for inf chaos-game iterations") && e.contains("2^53"), "{e}");
    let e = refused(r#"zoom="40""#, tiny());
    assert!(e.contains("more than the 2^53 (9.0e15) a frame may take"), "{e}");
}

/// A PNG of a few hundred bytes whose header declares `width × height`
/// RGB pixels (the data is whatever fills it).
fn png_declaring(width: u32, height: u32) -> Vec<u8> {
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
    fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
        out.extend_from_slice(&(data.len() as u32).to_be_bytes());
        let start = out.len();
        out.extend_from_slice(kind);
        out.extend_from_slice(data);
        let c = crc(&out[start..]);
        out.extend_from_slice(&c.to_be_bytes());
    }
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = Vec::new();
    ihdr.extend_from_slice(&width.to_be_bytes());
    ihdr.extend_from_slice(&height.to_be_bytes());
    ihdr.extend_from_slice(&[8, 2, 0, 0, 0]);
    chunk(&mut png, b"IHDR", &ihdr);
    chunk(&mut png, b"IDAT", &[0x78, 0x9c].iter().chain([0u8; 300].iter()).copied().collect::<Vec<u8>>());
    chunk(&mut png, b"IEND", &[]);
    png
}

#[test]
fn a_png_declaring_100000_square_is_refused_before_allocating() {
    let png = png_declaring(100_000, 100_000);
    assert!(png.len() < 400);
    let e = on_small_stack(move || decode_png(&png).map(|i| i.width)).unwrap_err();
    assert!(matches!(e, FlameError::OutOfHostMemory(_)), "{e}");
    let e = e.to_string();
    assert!(e.starts_with("a 100000 × 100000 image needs ") && e.contains(" of host memory but only "), "{e}");
    // Through a file, the message names it.
    let path = temp("huge.png");
    std::fs::write(&path, png_declaring(100_000, 100_000)).unwrap();
    let e = read_png(&path).unwrap_err().to_string();
    assert!(e.contains("huge.png: a 100000 × 100000 image needs "), "{e}");
}

/// A long flame name repeated in a warning per xform made a 1.4 MB genome
/// need gigabytes: labels quote the name's first characters, and a file's
/// warnings stop at `MAX_WARNINGS` and count the rest.
#[test]
fn a_long_name_and_a_warning_per_xform_stay_small() {
    use warpmc_flame::genome::MAX_WARNINGS;
    let name = "n".repeat(100_000);
    let xforms = r#"<xform weight="1" linear="1" opacity="-1" coefs="0.5 0 0 0.5 0 0"/>"#.repeat(3 * MAX_WARNINGS);
    let xml = format!(r#"<flame name="{name}" size="64 48">{xforms}<xform weight="1" linear="1"/></flame>"#);
    let parsed = parse_str(&xml, "long.flam3", &ParseOptions::default()).unwrap();
    assert_eq!(parsed.warnings.len(), MAX_WARNINGS + 1);
    assert!(parsed.warnings.iter().all(|w| w.len() < 400), "{}", parsed.warnings[0]);
    assert!(parsed.warnings[0].contains(&format!("'{}…': xform 0: opacity -1", &name[..60])), "{}", parsed.warnings[0]);
    let last = parsed.warnings.last().unwrap();
    assert_eq!(last, &format!("long.flam3: {} more warnings not shown", 2 * MAX_WARNINGS));
    // Errors quote the same label.
    let e = parse_str(&format!(r#"<flame name="{name}" size="64"/>"#), "bad.flam3", &ParseOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.len() < 300 && e.starts_with(&format!("bad.flam3: flame '{}…'", &name[..60])), "{e}");
}

/// The genome tools given the edges of their arguments: an error, never a
/// panic, an abort on a failed allocation, or a loop without end.
#[test]
fn genome_tools_refuse_arguments_beyond_their_bounds() {
    use warpmc_flame::genome::tools::{GenomeRng, Operation, RandomOptions, inter, random, rotate, strip};
    let f = parse_str(
        r#"<flame size="16 16"><xform weight="1" linear="1" coefs="1 0 0 1 0 0"/></flame>"#,
        "edges",
        &ParseOptions::default(),
    )
    .unwrap()
    .flames
    .remove(0);
    let tall = Flame { height: u32::MAX, ..f.clone() };
    assert!(matches!(strip(&tall, u32::MAX), Err(FlameError::OutOfHostMemory(_))));
    let mut rng = GenomeRng::new(1, Operation::Random, 0);
    for opts in [
        RandomOptions { symmetry: i64::MIN, tries: 0, ..RandomOptions::default() },
        RandomOptions { symmetry: i64::MAX, tries: 0, ..RandomOptions::default() },
        RandomOptions { xforms: Some(usize::MAX), tries: 0, ..RandomOptions::default() },
    ] {
        assert!(random(&f, &opts, None, &mut rng).is_err(), "{opts:?}");
    }
    for frame in [i64::MIN, i64::MAX] {
        assert!(rotate(&f, frame, 1, None).is_err());
        assert!(inter(&f, &f, frame, 1, 0.0, None).is_err());
    }
    assert_eq!(rotate(&f, i64::MAX - 1, 1, None).unwrap().len(), 3);
}
