//! Regression tests for the defects a hostile-input campaign found in the
//! genome reader, the palette reader, the renderer and the image reader:
//! each input must give one clear error (or a correct result), never a
//! panic, an abort, a stack overflow or an out-of-memory kill.

use std::path::PathBuf;

use warpmc_flame::FlameError;
use warpmc_flame::genome::{ParseOptions, parse_file, parse_str};
use warpmc_flame::palette::PaletteLibrary;

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("warpmc-flame-hostile-{}", std::process::id()));
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
    assert!(e.contains("more than 256 levels deep"), "{e}");
}
