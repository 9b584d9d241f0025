//! The genome writer: what it writes reads back as the same flames, for
//! the example genomes and for random genomes made by flam3-genome, and
//! flam3-render accepts it.

use std::path::{Path, PathBuf};
use std::process::Command;

use warpmc_flame::Flame;
use warpmc_flame::genome::{ParseOptions, parse_file, parse_str, write_genome};
use warpmc_flame::palette::PaletteLibrary;

fn palette_file() -> Option<PathBuf> {
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/palettes/flam3-palettes.xml");
    PaletteLibrary::locate(shared.exists().then_some(shared.as_path())).ok().map(|l| l.path().to_owned())
}

fn opts() -> ParseOptions {
    ParseOptions { strict: false, palette_file: palette_file() }
}

/// Equal flames, except that palette entries may differ in the last bit:
/// the reader divides by 255 (and multiplies by alpha), so not every value
/// has a decimal that reads back exactly.
fn assert_same(a: &[Flame], b: &[Flame], what: &str) {
    assert_eq!(a.len(), b.len(), "{what}: flame count");
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        for (p, q) in x.palette.entries.iter().zip(y.palette.entries.iter()) {
            for c in 0..4 {
                let ok = (p[c] - q[c]).abs() <= 4.0 * f64::EPSILON * p[c].abs();
                assert!(ok, "{what}: flame {i}: palette entry {p:?} read back as {q:?}");
            }
        }
        let mut y = y.clone();
        y.palette = x.palette.clone();
        // hue is not written: it was applied to the (numbered) palette when
        // read, and the palette is written out as colours.
        y.hue_rotation = x.hue_rotation;
        // A final xform's animate is not written, as flam3 never writes it
        // (a <finalxform symmetry="1"> reads as animate 0 and comes back as
        // the default 1, in flam3 too); nothing warpmc draws or animates
        // depends on it (final xforms are never turned).
        if let (Some(xf), Some(yf)) = (&x.final_xform, &mut y.final_xform) {
            yf.animate = xf.animate;
        }
        assert!(*x == y, "{what}: flame {i} differs after writing and reading");
    }
}

/// The example genomes (and ../shared/genomes beside the checkout).
fn example_genomes() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut out = Vec::new();
    for dir in [root.join("examples/flames"), root.join("../shared/genomes")] {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        let mut paths: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
        paths.sort();
        out.extend(paths);
    }
    assert!(out.len() >= 5, "the example genomes are missing");
    out
}

/// Each example genome, written and read again, is the same; flam3-render
/// renders what was written.
#[test]
fn every_example_genome_round_trips() {
    let mut read = 0;
    for path in example_genomes() {
        let parsed = match parse_file(&path, &opts()) {
            Ok(p) => p,
            // A genome this reader refuses has nothing to write.
            Err(e) => {
                println!("not read: {e}");
                continue;
            }
        };
        let text = write_genome(&parsed.flames, "flames", None);
        let again = parse_str(&text, "written", &opts()).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(again.skipped.is_empty(), "{}: the writer wrote unknown attributes", path.display());
        assert_same(&parsed.flames, &again.flames, &path.display().to_string());
        flam3_renders(&parsed.flames, &path.display().to_string());
        read += 1;
    }
    assert!(read >= 5, "only {read} example genomes were read");
}

fn have(program: &str) -> bool {
    Command::new("sh").arg("-c").arg(format!("command -v {program}")).output().is_ok_and(|o| o.status.success())
}

/// flam3-render renders `flames` as written (made small and quick)
/// without a warning; nothing is checked without flam3-render.
fn flam3_renders(flames: &[Flame], what: &str) {
    if !have("flam3-render") {
        println!("SKIPPED the flam3-render check of {what}: flam3-render not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let small: Vec<Flame> = flames
        .iter()
        .map(|f| Flame {
            width: 24,
            height: 16,
            quality: 1.0,
            supersample: 1,
            passes: 1,
            temporal_samples: 1,
            ..f.clone()
        })
        .collect();
    let file = dir.path().join("g.flam3");
    std::fs::write(&file, write_genome(&small, "pick", None)).unwrap();
    let r = Command::new("flam3-render")
        .env("in", &file)
        .env("prefix", dir.path().join("r."))
        .env("isaac_seed", "1")
        .output()
        .expect("flam3-render runs");
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(r.status.success(), "flam3-render refused {what}: {err}");
    // flam3 knows its own 99 variations only: it warns about Fractorium's
    // (and their parameters) and renders without them, as warpmc does
    // with a variation it does not know. Any other warning is a fault of
    // the writer.
    let beyond_flam3: Vec<&str> = flames
        .iter()
        .flat_map(|f| f.xforms.iter().chain(f.final_xform.iter()))
        .flat_map(|x| x.variations.iter())
        .filter(|v| !v.kind.is_flam3())
        .map(|v| v.kind.name())
        .collect();
    let expected = |line: &str| {
        line.strip_prefix("Warning: unrecognized variation ")
            .and_then(|rest| rest.split('.').next())
            .is_some_and(|name| beyond_flam3.iter().any(|v| name == *v || name.starts_with(&format!("{v}_"))))
    };
    let unexpected: Vec<&str> =
        err.lines().filter(|l| l.to_lowercase().contains("warning") && !expected(l.trim())).collect();
    assert!(unexpected.is_empty(), "flam3-render warned on {what}: {unexpected:?}");
}

/// Random genomes from flam3-genome (fixed seeds) read, written, read
/// again; then flam3-render renders what was written without a warning.
#[test]
fn flam3_genome_randoms_round_trip_and_render_in_flam3() {
    if !have("flam3-genome") || !have("flam3-render") {
        println!(
            "SKIPPED flam3_genome_randoms_round_trip_and_render_in_flam3: flam3-genome/flam3-render not installed"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for seed in 1..=12 {
        let out = Command::new("flam3-genome")
            .env("seed", seed.to_string())
            .env("isaac_seed", format!("warpmc{seed}"))
            .env("repeat", "1")
            .output()
            .expect("flam3-genome runs");
        assert!(out.status.success(), "flam3-genome seed {seed} failed");
        let xml = String::from_utf8(out.stdout).unwrap();
        let first = parse_str(&xml, "flam3-genome", &opts()).unwrap().flames;
        // Small and quick for flam3-render.
        let small: Vec<Flame> =
            first.iter().map(|f| Flame { width: 32, height: 24, quality: 2.0, supersample: 1, ..f.clone() }).collect();
        let written = write_genome(&small, "pick", None);
        let again = parse_str(&written, "written", &opts()).unwrap();
        assert_same(&small, &again.flames, &format!("flam3-genome seed {seed}"));

        let file = dir.path().join(format!("g{seed}.flam3"));
        std::fs::write(&file, &written).unwrap();
        let r = Command::new("flam3-render")
            .env("in", &file)
            .env("prefix", dir.path().join(format!("r{seed}.")))
            .env("isaac_seed", "1")
            .output()
            .expect("flam3-render runs");
        let err = String::from_utf8_lossy(&r.stderr);
        assert!(r.status.success(), "flam3-render refused seed {seed}: {err}");
        assert!(!err.to_lowercase().contains("warning"), "flam3-render warned on seed {seed}: {err}");
        assert!(dir.path().join(format!("r{seed}.00000.png")).exists(), "no image for seed {seed}: {err}");
    }
}

/// Fractorium's log_base is written when it is not flam3's base e, so that
/// the file reads back as the same flame, and left out at e, so that
/// flam3-render reads flam3's log without a warning.
#[test]
fn log_base_written_only_when_not_e() {
    let read = |xml: &str| parse_str(xml, "t", &opts()).unwrap().flames;
    let based =
        read(r#"<flame size="8 8"><xform weight="1" log="1" log_base="3.5" pre_log="0.5" pre_log_base="2"/></flame>"#);
    let text = write_genome(&based, "flames", None);
    assert!(text.contains(r#"log_base="3.5""#) && text.contains(r#"pre_log_base="2""#), "{text}");
    assert_same(&based, &read(&text), "log_base");
    let plain = read(r#"<flame size="8 8"><xform weight="1" log="1"/></flame>"#);
    let text = write_genome(&plain, "flames", None);
    assert!(!text.contains("log_base"), "{text}");
    assert_same(&plain, &read(&text), "log");
    flam3_renders(&plain, "log");
}

#[test]
fn the_edit_history_is_kept() {
    let xml = r#"<!DOCTYPE flame [<!ENTITY who "me &amp; you">]>
<flame size="8 8"><xform weight="1" coefs="1 0 0 1 0 0" linear="1" color="0"/>
  <edit date="today" nick="&who;" comm="a &lt; b"><!-- dropped --><edit date="earlier" action="random"/>
    <comm>first "try"</comm></edit></flame>"#;
    let p = parse_str(xml, "t.flam3", &ParseOptions::default()).unwrap();
    let edits = p.flames[0].edits.clone().unwrap();
    assert_eq!(
        edits,
        r#"<edit date="today" nick="me &amp; you" comm="a &lt; b"><edit date="earlier" action="random"/><comm>first "try"</comm></edit>"#
    );
    // Written back after the palette, as flam3 prints it, and read again.
    let written = write_genome(&p.flames, "flames", None);
    assert!(written.contains(&edits), "{written}");
    let again = parse_str(&written, "again.flam3", &ParseOptions::default()).unwrap();
    assert_eq!(again.flames[0].edits.as_deref(), Some(edits.as_str()));
    // A genome without one gets none.
    let plain = parse_str(r#"<flame size="8 8"><xform weight="1" linear="1"/></flame>"#, "p", &ParseOptions::default());
    assert_eq!(plain.unwrap().flames[0].edits, None);
}
