//! The genome reader and the palettes against flam3 3.1.1's reading rules.
//!
//! Tests that need flam3-palettes.xml find it with
//! `PaletteLibrary::locate` (the repository's `shared/` copy or
//! /usr/share/flam3) and print a SKIPPED line when it is not there.

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use warpmc_flame::FlameError;
use warpmc_flame::genome::{
    AffineInterpolation, Curves, FilterShape, Flame, Interpolation, PaletteInterpolation, PaletteMode, ParseOptions,
    ParsedGenome, TemporalFilter, parse_file, parse_str,
};
use warpmc_flame::palette::{Palette, PaletteLibrary, hsv_to_rgb, rgb_to_hsv};
use warpmc_flame::variations::VariationKind;

/// The sample genomes shipped with the project (the same files as
/// shared/genomes next to a checkout).
const GENOMES: &str = "../../examples/flames";

/// The palette file next to the checkout, if any (CI has /usr/share/flam3).
const SHARED_PALETTES: &str = "../../../shared/palettes/flam3-palettes.xml";

/// The shared copy when the checkout has one beside it, else the usual
/// places.
fn shared_palettes() -> Option<&'static Path> {
    Some(Path::new(SHARED_PALETTES)).filter(|p| p.exists())
}

fn library() -> Option<PaletteLibrary> {
    match PaletteLibrary::locate(shared_palettes()) {
        Ok(l) => Some(l),
        Err(e) => {
            println!("SKIPPED (no flam3-palettes.xml): {e}");
            None
        }
    }
}

fn genome(name: &str) -> PathBuf {
    Path::new(GENOMES).join(name)
}

fn opts() -> ParseOptions {
    ParseOptions::default()
}

fn strict_opts() -> ParseOptions {
    ParseOptions { strict: true, palette_file: None }
}

fn lib_opts(lib: &PaletteLibrary) -> ParseOptions {
    ParseOptions { strict: true, palette_file: Some(lib.path().to_path_buf()) }
}

/// Parses a string that must be accepted.
fn ok(xml: &str) -> ParsedGenome {
    parse_str(xml, "t.flam3", &opts()).unwrap_or_else(|e| panic!("should parse: {e}"))
}

/// The only flame of a string that must be accepted.
fn one(xml: &str) -> Flame {
    let p = ok(xml);
    assert_eq!(p.flames.len(), 1);
    p.flames.into_iter().next().unwrap()
}

/// The error message of a string that must be refused.
fn err(xml: &str) -> String {
    err_with(xml, &opts())
}

fn err_with(xml: &str, o: &ParseOptions) -> String {
    match parse_str(xml, "t.flam3", o) {
        Ok(_) => panic!("should be refused: {xml}"),
        Err(e) => {
            let m = e.to_string();
            assert!(!m.contains('\n'), "one line: {m}");
            assert!(m.starts_with("t.flam3: "), "names the source: {m}");
            m
        }
    }
}

fn kind(name: &str) -> VariationKind {
    VariationKind::from_name(name).unwrap_or_else(|| panic!("{name} is a flam3 variation"))
}

/// `(name, weight)` of an xform's variations.
fn vars(x: &warpmc_flame::XForm) -> Vec<(&'static str, f64)> {
    x.variations.iter().map(|v| (v.kind.name(), v.weight)).collect()
}

fn param(x: &warpmc_flame::XForm, var: &str, p: &str) -> f64 {
    let v = x.variations.iter().find(|v| v.kind.name() == var).unwrap_or_else(|| panic!("{var} in xform"));
    let i = v.kind.params().iter().position(|s| s.name == p).unwrap_or_else(|| panic!("{var} has {p}"));
    v.params[i]
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12
}

fn close4(a: [f64; 4], b: [f64; 4]) -> bool {
    a.iter().zip(&b).all(|(x, y)| close(*x, *y))
}

// ---------------------------------------------------------------- files

#[test]
fn electricsheep_00216() {
    let p = parse_file(&genome("electricsheep.244.00216.flam3"), &opts()).unwrap();
    assert!(p.warnings.is_empty(), "url/nick are flam3 ecosystem attributes: {:?}", p.warnings);
    assert!(p.skipped.is_empty());
    assert_eq!(p.flames.len(), 1);
    let f = &p.flames[0];
    assert_eq!(f.name.as_deref(), Some("electricsheep.244.00216"));
    assert_eq!((f.width, f.height), (800, 592));
    assert_eq!(f.center, [0.0751921, 0.0418514]);
    assert_eq!(f.scale, 240.0);
    assert_eq!(f.rotate, 42.46);
    assert_eq!(f.supersample, 4);
    assert_eq!(f.filter_radius, 1.0);
    assert_eq!(f.filter_shape, FilterShape::Gaussian);
    assert_eq!(f.temporal_filter, TemporalFilter::Box);
    assert_eq!(f.quality, 2000.0);
    assert_eq!(f.passes, 1);
    assert_eq!(f.temporal_samples, 1000);
    assert_eq!(f.brightness, 1.94783);
    assert_eq!(f.gamma, 1.0);
    assert_eq!(f.estimator_radius, 11.0);
    assert_eq!(f.estimator_curve, 0.6);
    assert_eq!(f.palette_mode, PaletteMode::Step);
    assert_eq!(f.affine_interpolation, AffineInterpolation::Log);
    assert_eq!(f.xforms.len(), 3);
    assert!(f.final_xform.is_none());

    let x0 = &f.xforms[0];
    assert_eq!(x0.weight, 0.0575);
    assert_eq!((x0.color, x0.color_speed, x0.animate), (0.0, 0.5, 1.0));
    assert_eq!(vars(x0), vec![("swirl", 0.15), ("rings2", 0.03), ("gaussian_blur", 0.03)]);
    assert_eq!(param(x0, "rings2", "rings2_val"), 0.100452);
    assert_eq!(x0.coefs.c, [[-0.938163, -2.71923], [-0.087253, -0.260622], [0.375984, -1.51018]]);
    assert!(x0.post.is_identity());

    let x1 = &f.xforms[1];
    // symmetry −0.87: colour speed (1 + 0.87)/2, still animated.
    assert!(close(x1.color_speed, 0.935));
    assert_eq!((x1.color, x1.animate), (0.818, 1.0));
    assert_eq!(vars(x1), vec![("julia", 0.01), ("fisheye", 0.544)]);
    assert_eq!(x1.post.c, [[1.0, -0.1], [0.0, 1.0], [0.0, 0.0]]);

    let x2 = &f.xforms[2];
    // symmetry 0.1 > 0: colour speed 0.45, not animated.
    assert!(close(x2.color_speed, 0.45));
    assert_eq!(x2.animate, 0.0);
    assert_eq!(vars(x2), vec![("sinusoidal", 1.0)]);
    for x in &f.xforms {
        assert!(x.chaos.is_empty(), "no chaos attribute");
        assert_eq!((x.chaos_to(0), x.chaos_to(2)), (1.0, 1.0));
        assert_eq!(x.opacity, 1.0);
    }

    // <color index="0" rgb="39 87 123"/>, opaque.
    assert_eq!(f.palette.entries[0], [39.0 / 255.0, 87.0 / 255.0, 123.0 / 255.0, 1.0]);
    assert!(f.palette.entries.iter().all(|e| e[3] == 1.0));
}

#[test]
fn electricsheep_others() {
    let p = parse_file(&genome("electricsheep.244.80674.flam3"), &opts()).unwrap();
    let f = &p.flames[0];
    assert_eq!(f.xforms.len(), 5);
    assert_eq!(f.palette_mode, PaletteMode::Linear);
    assert_eq!(f.scale, 944.941);
    assert_eq!(vars(&f.xforms[4]), vec![("linear", 1.0)]);
    assert_eq!(f.xforms[4].weight, 1.5);
    assert!(close(f.xforms[0].color_speed, (1.0 - 0.015) / 2.0));
    assert_eq!(f.palette.entries[0], [214.0 / 255.0, 128.0 / 255.0, 6.0 / 255.0, 1.0]);

    let p = parse_file(&genome("electricsheep.244.80692.flam3"), &opts()).unwrap();
    let f = &p.flames[0];
    assert_eq!(f.xforms.len(), 3);
    assert_eq!(f.rotate, -169.0);
    let fx = f.final_xform.as_ref().expect("finalxform");
    assert_eq!(vars(fx), vec![("spherical", 1.0)]);
    // symmetry="1" on the final xform: colour speed 0, not animated.
    assert_eq!((fx.color_speed, fx.animate, fx.weight), (0.0, 0.0, 0.0));
    assert!(fx.chaos.is_empty());
    assert_eq!(vars(&f.xforms[1]), vec![("spherical", 0.25), ("julia", 1.0)]);
    assert_eq!(f.xforms[1].color_speed, 1.0);

    let p = parse_file(&genome("electricsheep.244.80725.flam3"), &opts()).unwrap();
    let f = &p.flames[0];
    assert_eq!(f.xforms.len(), 2);
    assert_eq!(f.brightness, 25.0);
    assert_eq!(vars(&f.xforms[0]), vec![("linear", 0.028), ("spherical", 1.0), ("eyefish", 0.02)]);
    assert!(p.warnings.is_empty());
}

#[test]
fn test_flam3_two_flames_numbered_palettes() {
    let Some(lib) = library() else { return };
    let p = parse_file(&genome("test.flam3"), &lib_opts(&lib)).unwrap();
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    assert_eq!(p.flames.len(), 2, "flames inside <test>");
    let (a, b) = (&p.flames[0], &p.flames[1]);
    assert_eq!((a.time, b.time), (0.0, 100.0));
    assert_eq!(a.name, None);
    assert_eq!((a.width, a.height, a.supersample), (640, 480, 1), "oversample is supersample");
    assert_eq!(a.quality, 10.0);
    assert_eq!(a.hue_rotation, 0.22851);
    assert_eq!(b.hue_rotation, 0.147038);
    assert_eq!(a.xforms.len(), 4);
    assert_eq!(a.xforms[1].color, 0.66);
    assert_eq!(vars(&a.xforms[3]), vec![("spherical", 1.0)]);
    assert_eq!(a.palette, lib.get(15).unwrap().rotate_hue(0.22851));
    assert_eq!(b.palette, lib.get(29).unwrap().rotate_hue(0.147038));
    // Against an independent hue rotation in degrees.
    let raw = lib.get(15).unwrap();
    for i in [0, 17, 128, 255] {
        let want = reference_rotate(raw.entries[i], 0.22851);
        assert!(close4(a.palette.entries[i], want), "entry {i}: {:?} vs {want:?}", a.palette.entries[i]);
    }
}

#[test]
fn fractorium_files_read_by_default_and_refused_when_strict() {
    // (file, flames' xform count, final?, names dropped)
    let cases: [(&str, usize, bool, &[&str]); 6] = [
        ("fractorium-bench-golubaja_rippingfrominside_complexcode.flame", 3, true, &[]),
        ("fractorium-bench-mfeemster_basicmemory.flame", 1, false, &[]),
        ("fractorium-bench-tatasz_springcrown_manysimplexforms.flame", 52, false, &[]),
        ("fractorium-bench-tyrantwave_flippeddisc_normal.flame", 4, false, &[]),
        ("fractorium-bench-zy0rg_six_bigcomplexcode.flame", 45, true, &[]),
        // A variation warpmc does not implement, with its parameters.
        ("../../crates/flame/tests/data/genomes/fractorium-synth.flame", 2, false, &["synth", "synth_a", "synth_mode"]),
    ];
    for (file, n, fin, dropped) in cases {
        let path = genome(file);
        let p = parse_file(&path, &opts()).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(p.flames.len(), 1, "{file}");
        let f = &p.flames[0];
        assert_eq!(f.xforms.len(), n, "{file}");
        assert_eq!(f.final_xform.is_some(), fin, "{file}");
        assert_eq!(p.skipped, dropped, "{file}");
        assert_eq!(p.skipped_by_flame, vec![dropped.to_vec()], "{file}");
        // One warning per dropped variation (none for its parameters), and
        // Fractorium's own flame attributes (identity curves, a 3-D camera
        // at zero, plugins, new_linear, …) ignored quietly.
        let per_variation = p.warnings.iter().filter(|w| w.contains("dropped")).count();
        assert_eq!(per_variation, usize::from(!dropped.is_empty()), "{file}: {:?}", p.warnings);
        assert!(p.warnings.iter().all(|w| !w.contains("flame attributes")), "{file}: {:?}", p.warnings);

        if dropped.is_empty() {
            parse_file(&path, &strict_opts()).unwrap_or_else(|e| panic!("{file} (strict): {e}"));
            continue;
        }
        let e = parse_file(&path, &strict_opts()).expect_err(file);
        assert!(matches!(e, FlameError::UnknownVariation(_)), "{e}");
        let e = e.to_string();
        assert!(e.starts_with(&path.display().to_string()), "{e}");
        assert!(e.contains("unknown variation"), "{e}");
        assert!(e.contains(": xform 0: attribute '"), "{e}");
        assert!(!e.contains("--"), "no command-line flags in library messages: {e}");
        assert!(!e.contains('\n'));
    }

    let p = parse_file(&genome(cases[0].0), &opts()).unwrap();
    let f = &p.flames[0];
    assert_eq!(f.name.as_deref(), Some("golubaja_rippingfrominside_complexcode"));
    assert_eq!(f.highlight_power, 1.0);
    assert_eq!(f.interpolation, Interpolation::Linear);
    assert_eq!(vars(&f.xforms[0]), vec![("flatten", 1.0), ("crackle", 1.0)]);
    assert_eq!(vars(&f.xforms[1]), vec![("spherical", 1.0), ("eyefish", 0.5), ("elliptic", 0.1), ("flatten", 1.0)]);
    // Fractorium's hex palette.
    let mfee = parse_file(&genome(cases[1].0), &opts()).unwrap();
    assert_eq!(mfee.flames[0].palette.entries[0], [241.0 / 255.0, 223.0 / 255.0, 221.0 / 255.0, 1.0]);
    assert_eq!(mfee.flames[0].palette.entries[255], [5.0 / 255.0, 1.0 / 255.0, 0.0, 1.0]);
    // Chaos rows as written.
    let tat = parse_file(&genome(cases[2].0), &opts()).unwrap();
    let row = &tat.flames[0].xforms[0].chaos;
    assert_eq!(row.len(), 52, "the last entry is 0");
    assert_eq!(&row[18..22], &[1.0, 1.0, 0.0, 0.0]);
    let zy = parse_file(&genome(cases[4].0), &opts()).unwrap();
    assert_eq!(zy.flames[0].xforms[0].chaos.len(), 45);
    assert_eq!(&zy.flames[0].xforms[0].chaos[..4], &[1.0, 0.0, 1.0, 0.0]);
    // interpolation="smooth" on a single flame becomes linear, silently.
    assert_eq!(zy.flames[0].interpolation, Interpolation::Linear);
    assert_eq!(zy.flames[0].xforms[0].opacity, 0.2);
    assert!(zy.warnings.iter().all(|w| !w.contains("smooth")));
}

#[test]
fn unknown_variation_message() {
    let xml = r#"<flame name="electricsheep.244.00216"><xform weight="1" linear="1"/><xform weight="1" linear="1"/>
        <xform weight="0.5" synth="1" synth_a="3"/></flame>"#;
    let e = parse_str(xml, "genome.flam3", &strict_opts()).unwrap_err().to_string();
    assert_eq!(
        e,
        "genome.flam3: flame 'electricsheep.244.00216': xform 2: attribute 'synth': unknown variation (not \
         one of the variations warpmc implements, their parameters or xform attributes); also unknown in this \
         element: 'synth_a'"
    );
    let p = parse_str(xml, "genome.flam3", &opts()).unwrap();
    assert_eq!(p.skipped, vec!["synth", "synth_a"]);
    assert_eq!(p.warnings.iter().filter(|w| w.contains("dropped")).count(), 1, "{:?}", p.warnings);
    assert!(p.flames[0].xforms[2].variations.is_empty());
    assert_eq!(p.flames[0].xforms[2].weight, 0.5);
    // Unnamed flames are named by index; the final xform by name.
    let e = err(r#"<flames><flame/><flame time="1"><finalxform foo="1"/></flame></flames>"#);
    assert!(e.starts_with("t.flam3: flame #0: the <flame> element has no attributes"), "{e}");
    let e =
        err_with(r#"<flames><flame time="0"/><flame time="1"><finalxform foo="1"/></flame></flames>"#, &strict_opts());
    assert!(e.starts_with("t.flam3: flame #1: finalxform: attribute 'foo': unknown variation"), "{e}");
}

/// Settings of an implemented variation that warpmc cannot apply
/// (post_smartcrop's cropmode 2 keeps state between iterations) drop the
/// variation as an unknown one is dropped: one warning, listed as skipped,
/// the error under --strict.
#[test]
fn unsupported_settings_drop_the_variation() {
    let xml = r#"<flame time="0"><xform weight="1" linear="1" post_smartcrop="1" post_smartcrop_cropmode="2"
        post_smartcrop_static="2"/><xform weight="1" linear="1" post_smartcrop="1" post_smartcrop_cropmode="1"/>
        <xform weight="1" linear="1" post_smartcrop="0.5" post_smartcrop_cropmode="2"/></flame>"#;
    let p = parse_str(xml, "t", &opts()).unwrap();
    assert_eq!(p.skipped, vec!["post_smartcrop"]);
    assert_eq!(p.skipped_by_flame, vec![vec!["post_smartcrop".to_string()]]);
    // The dropped one's warning, and the one for a variation flam3 lacks
    // (the kept post_smartcrop).
    assert_eq!(p.warnings.len(), 2, "{:?}", p.warnings);
    assert!(p.warnings[1].contains("beyond flam3's 99 (post_smartcrop)"), "{:?}", p.warnings);
    assert!(p.warnings[0].contains("xform 0: variation 'post_smartcrop'") && p.warnings[0].contains("cropmode 2"));
    assert_eq!(vars(&p.flames[0].xforms[0]), vec![("linear", 1.0)]);
    assert_eq!(vars(&p.flames[0].xforms[1]), vec![("linear", 1.0), ("post_smartcrop", 1.0)]);
    assert_eq!(vars(&p.flames[0].xforms[2]), vec![("linear", 1.0)]);
    let e = parse_str(xml, "t", &strict_opts()).unwrap_err().to_string();
    assert!(
        e.starts_with("t: flame #0: xform 0: variation 'post_smartcrop': these settings are not implemented"),
        "{e}"
    );
    assert!(!e.contains('\n'));
}

#[test]
fn skipped_names_warned_once() {
    let xml = r#"<flame time="0"><xform weight="1" synth="1"/><xform weight="1" synth="2" linear="1"/>
        <finalxform synth="1"/></flame>"#;
    let p = parse_str(xml, "t", &opts()).unwrap();
    assert_eq!(p.skipped, vec!["synth"]);
    assert_eq!(p.warnings.len(), 1, "{:?}", p.warnings);
    assert!(p.warnings[0].contains("flame #0: xform 0: attribute 'synth'"), "{}", p.warnings[0]);
    assert_eq!(vars(&p.flames[0].xforms[1]), vec![("linear", 1.0)]);
}

/// A palette index and the entry flam3 printed for it.
type PrintedEntry = (usize, [f64; 4]);

/// Palette entries (0–255 scale, premultiplied, as flam3 prints them) and
/// xform values that flam3-genome 3.1.1 printed for
/// tests/data/genomes/flam3-edge-cases.flam3 (`clone_all`, `%.6g`).
#[test]
fn flam3_printed_values() {
    let path = Path::new("tests/data/genomes/flam3-edge-cases.flam3");
    let lib = library();
    let o = match &lib {
        Some(l) => lib_opts(l),
        None => opts(),
    };
    let text = std::fs::read_to_string(path).unwrap();
    // Without the palette file, read only the flames with their own colours.
    let p = match &lib {
        Some(_) => parse_file(path, &o).unwrap(),
        None => {
            let e = parse_file(path, &o).unwrap_err().to_string();
            assert!(e.contains("flame 'edge2': attribute 'palette'"), "{e}");
            let kept: String = text.replace(r#"palette="12""#, "").replace(
                r#"<palette index0="3" hue0="0.25" index1="9" hue1="0.1" blend="0.3"/>"#,
                r#"<color index="0" rgb="1 1 1"/>"#,
            );
            parse_str(&kept, "edge", &o).unwrap()
        }
    };
    let printed: &[(&str, &[PrintedEntry])] = &[
        (
            "edge1",
            &[
                (0, [242.034, 0.0, 127.0, 248.492]),
                (3, [255.0, 0.0, 127.0, 255.0]),
                (5, [196.714, 14.5714, 90.7143, 196.714]),
                (10, [51.0, 51.0, 0.0, 51.0]),
                (15, [25.5, 153.0, 127.5, 153.0]),
                (20, [0.0, 255.0, 255.0, 255.0]),
                (100, [0.0, 141.667, 198.111, 198.111]),
                (200, [0.0, 0.0, 127.0, 127.0]),
                (255, [237.712, 0.0, 127.0, 246.322]),
            ],
        ),
        (
            "edge2",
            &[
                (0, [3.0, 43.0, 88.0, 255.0]),
                (5, [4.0, 13.8, 16.0, 255.0]),
                (15, [0.0, 9.0, 4.4, 255.0]),
                (255, [0.0, 11.2, 28.0, 255.0]),
            ],
        ),
        (
            "edge3",
            &[
                (0, [14.7549, 16.3, 9.58224, 255.0]),
                (5, [42.7828, 103.2, 38.7374, 255.0]),
                (100, [16.5, 88.0, 17.675, 255.0]),
                (255, [101.594, 152.3, 97.8333, 255.0]),
            ],
        ),
        (
            "edge4",
            &[
                (0, [255.0, 0.0, 0.0, 128.0]),
                (3, [255.0, 255.0, 255.0, 0.0]),
                (5, [255.0, 252.984, 252.984, 1.01186]),
                (200, [255.0, 56.4427, 56.4427, 99.668]),
                (255, [255.0, 1.00791, 1.00791, 127.494]),
            ],
        ),
        (
            "edge5",
            &[
                (0, [255.0, 0.0, 0.0, 255.0]),
                (3, [1.00394, 0.0, 253.996, 255.0]),
                (100, [98.3858, 0.0, 156.614, 255.0]),
                (255, [253.996, 0.0, 1.00394, 255.0]),
            ],
        ),
    ];
    for (name, entries) in printed {
        let Some(f) = p.flames.iter().find(|f| f.name.as_deref() == Some(name)) else { panic!("{name}") };
        if lib.is_none() && (*name == "edge2" || *name == "edge3") {
            continue;
        }
        for (i, want) in entries.iter() {
            let got = f.palette.entries[*i].map(|c| c * 255.0);
            let ok = got.iter().zip(want).all(|(g, w)| (g - w).abs() <= 1e-5 * w.abs().max(1.0) + 1e-9);
            assert!(ok, "{name} entry {i}: {got:?} vs flam3 {want:?}");
        }
    }
    let find = |n: &str| p.flames.iter().find(|f| f.name.as_deref() == Some(n)).unwrap();
    // edge1: soloxform 1, chaos from the final xform filed under xform 0,
    // colours, the xform after the final one.
    let e1 = find("edge1");
    let op: Vec<f64> = e1.xforms.iter().map(|x| x.opacity).collect();
    assert_eq!(op, [0.0, 1.0, 0.0, 0.0]);
    assert_eq!(e1.xforms[0].chaos, [0.5, 3.0]);
    let colors: Vec<f64> = e1.xforms.iter().map(|x| x.color).collect();
    assert_eq!(colors, [0.0, 0.3, 1.0, 0.0]);
    assert_eq!(e1.final_xform.as_ref().unwrap().color, 1.0);
    assert!(e1.xforms[3].variations.is_empty());
    // edge2: rotate unwound to 190; the symmetry xforms and the chaos row
    // of the xform after them.
    let e2 = find("edge2");
    assert_eq!(e2.rotate, 190.0);
    let colors: Vec<f64> = e2.xforms.iter().map(|x| x.color).collect();
    assert_eq!(colors, [1.0, 0.0, 1.0, 1.0]);
    assert_eq!(e2.xforms[3].chaos, [0.0, 1.0, 0.0, 0.5]);
    // edge5: kind 5 symmetry after an xform.
    let e5 = find("edge5");
    let c: Vec<[f64; 2]> = e5.xforms.iter().map(|x| x.coefs.c[0]).collect();
    let r = |v: f64| (v * 1e6).round() / 1e6;
    let c: Vec<[f64; 2]> = c.iter().map(|p| [r(p[0]), r(p[1])]).collect();
    assert_eq!(
        c,
        [[1.0, 0.0], [-0.809017, 0.587785], [-0.809017, -0.587785], [0.309017, 0.951057], [0.309017, -0.951057]]
    );
    let colors: Vec<f64> = e5.xforms.iter().map(|x| x.color).collect();
    assert_eq!(colors, [0.0, 1.0 / 3.0, 2.0 / 3.0, 0.0, 1.0]);
}

// ---------------------------------------------------------------- flame attributes

#[test]
fn flame_defaults_and_every_attribute() {
    let f = one(r#"<flame time="0"/>"#.replace("/>", "><xform weight=\"1\" linear=\"1\"/></flame>").as_str());
    let d = Flame::default();
    assert_eq!(f.width, d.width);
    assert_eq!(f.quality, 1.0);
    assert_eq!(f.estimator_radius, 9.0);
    assert_eq!(f.gamma_threshold, 0.01);
    assert_eq!(f.palette_interpolation, PaletteInterpolation::HsvCircular);
    assert_eq!(f.affine_interpolation, AffineInterpolation::Log);

    let f = one(r#"<flame name="all" time="3.5" size="320 200" center="1 -2" scale="77" rotate="30" zoom="1.5"
        supersample="3" filter="0.75" filter_shape="mitchell" quality="50" passes="2" temporal_samples="7"
        temporal_filter_type="exp" temporal_filter_width="1.5" temporal_filter_exp="-0.5" background="0.1 0.2 0.3"
        brightness="5" gamma="2.5" gamma_threshold="0.05" highlight_power="0.7" vibrancy="0.8" hue="1.25"
        estimator_radius="5" estimator_minimum="1" estimator_curve="0.3" palette_mode="linear"
        interpolation="smooth" interpolation_type="older" palette_interpolation="sweep" hsv_rgb_palette_blend="0.4">
        <xform weight="1" linear="1"/></flame>"#);
    assert_eq!(f.name.as_deref(), Some("all"));
    assert_eq!(f.time, 3.5);
    assert_eq!((f.width, f.height), (320, 200));
    assert_eq!(f.center, [1.0, -2.0]);
    assert_eq!((f.scale, f.rotate, f.zoom), (77.0, 30.0, 1.5));
    assert_eq!(f.supersample, 3);
    assert_eq!(f.filter_radius, 0.75);
    assert_eq!(f.filter_shape, FilterShape::Mitchell);
    assert_eq!((f.quality, f.passes, f.temporal_samples), (50.0, 2, 7));
    assert_eq!(f.temporal_filter, TemporalFilter::Exp);
    assert_eq!((f.temporal_filter_width, f.temporal_filter_exp), (1.5, -0.5));
    assert_eq!(f.background, [0.1, 0.2, 0.3]);
    assert_eq!((f.brightness, f.gamma, f.gamma_threshold), (5.0, 2.5, 0.05));
    assert_eq!((f.highlight_power, f.vibrancy), (0.7, 0.8));
    assert_eq!(f.hue_rotation, 0.25, "hue is taken modulo 1");
    assert_eq!((f.estimator_radius, f.estimator_minimum, f.estimator_curve), (5.0, 1.0, 0.3));
    assert_eq!(f.palette_mode, PaletteMode::Linear);
    // smooth on the first (only) flame becomes linear, as in flam3.
    assert_eq!(f.interpolation, Interpolation::Linear);
    assert_eq!(f.affine_interpolation, AffineInterpolation::Older);
    assert_eq!(f.palette_interpolation, PaletteInterpolation::Sweep);
    assert_eq!(f.hsv_rgb_palette_blend, 0.4);

    // Negative hue keeps its sign (C fmod); "old" is the compat type;
    // interpolation_space is the older name.
    let f = one(r#"<flame hue="-0.25" interpolation_space="old"><xform weight="1" linear="1"/></flame>"#);
    assert_eq!(f.hue_rotation, -0.25);
    assert_eq!(f.affine_interpolation, AffineInterpolation::Compat);

    for shape in FilterShape::ALL {
        let f = one(&format!(r#"<flame filter_shape="{}"><xform weight="1" linear="1"/></flame>"#, shape.name()));
        assert_eq!(f.filter_shape, shape);
    }
    for (v, t) in [("box", TemporalFilter::Box), ("gaussian", TemporalFilter::Gaussian)] {
        let f = one(&format!(r#"<flame temporal_filter_type="{v}"><xform weight="1" linear="1"/></flame>"#));
        assert_eq!(f.temporal_filter, t);
    }
    for (v, t) in [("hsv", PaletteInterpolation::Hsv), ("rgb", PaletteInterpolation::Rgb)] {
        let f = one(&format!(r#"<flame palette_interpolation="{v}"><xform weight="1" linear="1"/></flame>"#));
        assert_eq!(f.palette_interpolation, t);
    }
    let f = one(r#"<flame interpolation_type="linear"><xform weight="1" linear="1"/></flame>"#);
    assert_eq!(f.affine_interpolation, AffineInterpolation::Linear);
}

#[test]
fn fractorium_palette_sources_are_quiet_and_unknown_palette_attributes_warn() {
    // Fractorium's palette editor writes the control points it made the
    // colours from (source_colors), and every Fractorium file carries
    // logscale_k2="0": both read without a word, even when strict.
    let xml = |palette_attrs: &str, flame_attrs: &str| {
        let red = "FF0000".repeat(256);
        format!(
            r#"<flame name="p" {flame_attrs}><xform weight="1" linear="1"/><palette count="256" format="RGB" {palette_attrs}>{red}</palette></flame>"#
        )
    };
    let quiet = parse_str(&xml(r#"source_colors="0,1,0,0 1,0,0,1 ""#, r#"logscale_k2="0""#), "t.flame", &strict_opts())
        .unwrap();
    assert!(quiet.warnings.is_empty(), "{:?}", quiet.warnings);
    assert_eq!(quiet.flames[0].palette.entries[0], [1.0, 0.0, 0.0, 1.0]);
    // Another attribute is a warning, and the error when strict.
    let p = parse_str(&xml(r#"foo="1" bar="2""#, ""), "t.flame", &opts()).unwrap();
    assert_eq!(p.warnings.len(), 1, "{:?}", p.warnings);
    assert!(p.warnings[0].contains("<palette>: unknown attributes ignored") && p.warnings[0].ends_with("foo, bar"));
    assert_eq!(p.flames[0].palette.entries[0], [1.0, 0.0, 0.0, 1.0]);
    let e = err_with(&xml(r#"foo="1""#, ""), &strict_opts());
    assert!(e.contains("attribute 'foo': unknown <palette> attribute"), "{e}");
    // A fixed log-density scale that is set changes Fractorium's image:
    // it is named among the attributes ignored.
    let k2 = parse_str(&xml("", r#"logscale_k2="0.5""#), "t.flame", &opts()).unwrap();
    assert_eq!(k2.warnings, ["t.flame: flame attributes flam3 does not read, ignored: logscale_k2"]);
}

#[test]
fn unknown_flame_attributes_warn_and_contrast_is_ignored() {
    // Fractorium's attributes that change nothing in the plane are quiet
    // (fuse, cam_zpos="0"); a 3-D camera that is not at zero is not.
    // Its colour curves are read (a malformed one is left out with a
    // warning of its own).
    let p = ok(r#"<flame version="FLAM3-3.1.1" nick="me" url="x" id="3" gen="4" contrast="2" fuse="15"
        cam_zpos="0" cam_pitch="0.5" curves="0 0 1 1 1 1" overall_curve="0 0 1 0.5 0.7 1"
        plugins="linear" new_linear="1"><xform weight="1" linear="1"/><foo/><edit><flame time="9"/></edit></flame>"#);
    let f = &p.flames[0];
    assert_eq!(f.contrast, 1.0, "flam3 3.1.1 does not read contrast");
    assert_eq!(f.curves.as_ref().unwrap().points[0], vec![[0.0, 0.0], [0.7, 1.0], [1.0, 0.5]]);
    assert_eq!(p.warnings.len(), 4, "{:?}", p.warnings);
    assert!(p.warnings[0].contains("attribute 'cam_pitch': Fractorium's 3-D camera"), "{:?}", p.warnings);
    assert!(p.warnings[1].contains("attribute 'curves': expected 48 numbers"), "{:?}", p.warnings);
    assert_eq!(p.warnings[2], "t.flam3: flame attributes flam3 does not read, ignored: contrast");
    assert_eq!(p.warnings[3], "t.flam3: elements flam3 does not read, ignored: <foo>");
    assert_eq!(p.skipped, ["cam_pitch"], "the flat render is a dropped feature");
}

#[test]
fn flames_anywhere_but_not_inside_a_flame() {
    let p = ok(r#"<?xml version="1.0" encoding="ISO-8859-1"?>
        <!DOCTYPE flames>
        <!-- comment -->
        <a><b><flame name="one"><xform weight="1" linear="1"/></flame></b>
        <flames><flame name="two" time="1"><xform weight="1" linear="1"/></flame></flames>
        <flame name="three" time="2"><xform weight="1" linear="1"/></flame></a>"#);
    let names: Vec<_> = p.flames.iter().map(|f| f.name.clone().unwrap()).collect();
    assert_eq!(names, ["one", "two", "three"]);
    // No flame at all is not an error here (the caller decides).
    assert!(ok("<nothing/>").flames.is_empty());
}

#[test]
fn latin1_file_with_declaration() {
    // A directory of its own: tests run in parallel, and this one removes it.
    let dir = warpmc_testkit::fresh_scratch_dir("genome-parse", "latin1");
    let path = dir.join("latin1.flame");
    let mut bytes = br#"<?xml version="1.0" encoding="ISO-8859-1"?><flame name="caf"#.to_vec();
    bytes.push(0xe9);
    bytes.extend_from_slice(br#""><xform weight="1" linear="1"/></flame>"#);
    std::fs::write(&path, &bytes).unwrap();
    let p = parse_file(&path, &opts()).unwrap();
    assert_eq!(p.flames[0].name.as_deref(), Some("café"));
    // Without the declaration the bytes are refused.
    std::fs::write(&path, &bytes[44..]).unwrap();
    let e = parse_file(&path, &opts()).unwrap_err().to_string();
    assert!(e.contains("not UTF-8"), "{e}");
    let e = parse_file(&dir.join("missing.flame"), &opts()).unwrap_err().to_string();
    assert!(e.contains("missing.flame: cannot read"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn sequence_fixups() {
    let p = ok(r#"<s><flame time="0" rotate="170" interpolation="smooth"><xform weight="1" linear="1"/></flame>
        <flame time="1" rotate="-170" interpolation="smooth"><xform weight="1" linear="1"/></flame>
        <flame time="2" rotate="-100" interpolation="smooth"><xform weight="1" linear="1"/></flame>
        <flame time="3" rotate="5000"><xform weight="1" linear="1"/></flame></s>"#);
    let f = &p.flames;
    assert_eq!(f[0].interpolation, Interpolation::Linear);
    assert_eq!(f[1].interpolation, Interpolation::Smooth);
    assert_eq!(f[2].interpolation, Interpolation::Linear, "second-to-last");
    assert_eq!(p.warnings.len(), 2, "{:?}", p.warnings);
    // Rotations unwound to within 180° of the previous flame's.
    assert_eq!(f[1].rotate, 190.0);
    assert_eq!(f[2].rotate, 260.0);
    assert_eq!(f[3].rotate, 5000.0 - 13.0 * 360.0);
    // Not after a compat-interpolated flame.
    let p = ok(r#"<s><flame time="0" rotate="170" interpolation_type="old"><xform weight="1" linear="1"/></flame>
        <flame time="1" rotate="-170"><xform weight="1" linear="1"/></flame></s>"#);
    assert_eq!(p.flames[1].rotate, -170.0);
}

// ---------------------------------------------------------------- xforms

#[test]
fn xform_defaults_and_no_variation_rule() {
    let f = one(r#"<flame time="0"><xform weight="1"/><xform weight="2" coefs="1 0 0 1 0 0"/>
        <finalxform color="0.5"/><xform weight="3"/></flame>"#);
    // No variation attribute: flam3's parser clears the default linear.
    for x in &f.xforms {
        assert!(x.variations.is_empty());
        assert_eq!((x.color_speed, x.animate, x.opacity), (0.5, 1.0, 1.0));
        assert!(x.coefs.is_identity() && x.post.is_identity());
    }
    // Default colour: parity of the position where flam3 created the xform;
    // the one after the final xform was created one further on.
    let colors: Vec<f64> = f.xforms.iter().map(|x| x.color).collect();
    assert_eq!(colors, [0.0, 1.0, 1.0]);
    assert_eq!(f.final_xform.as_ref().unwrap().color, 0.5);
    let f = one(r#"<flame time="0"><xform weight="1"/><finalxform linear="1"/></flame>"#);
    assert_eq!(f.final_xform.unwrap().color, 1.0, "final created at position 1");
}

#[test]
fn symmetry_attribute_and_order() {
    let x = &one(r#"<flame time="0"><xform weight="1" symmetry="0.5" linear="1"/></flame>"#).xforms[0];
    assert_eq!((x.color_speed, x.animate), (0.25, 0.0));
    let x = &one(r#"<flame time="0"><xform weight="1" symmetry="-1" linear="1"/></flame>"#).xforms[0];
    assert_eq!((x.color_speed, x.animate), (1.0, 1.0));
    let x = &one(r#"<flame time="0"><xform weight="1" symmetry="0" linear="1"/></flame>"#).xforms[0];
    assert_eq!((x.color_speed, x.animate), (0.5, 1.0));
    // Attributes apply in order: a later color_speed or animate wins.
    let x =
        &one(r#"<flame time="0"><xform weight="1" symmetry="0.5" color_speed="0.9" linear="1"/></flame>"#).xforms[0];
    assert_eq!((x.color_speed, x.animate), (0.9, 0.0));
    let x = &one(r#"<flame time="0"><xform weight="1" animate="1" symmetry="0.9" linear="1"/></flame>"#).xforms[0];
    assert_eq!(x.animate, 0.0);
    let x = &one(
        r#"<flame time="0"><xform weight="1" color_speed="0.9" symmetry="0.5" animate="0.5" linear="1"/></flame>"#,
    )
    .xforms[0];
    assert_eq!((x.color_speed, x.animate), (0.25, 0.5));
}

#[test]
fn color_opacity_plotmode_post() {
    let f = one(r#"<flame time="0">
        <xform weight="1" color="0.25 0.75" linear="1"/>
        <xform weight="1" color="0.5" plotmode="off" linear="1"/>
        <xform weight="1" plotmode="on" opacity="0.3" linear="1"/>
        <xform weight="1" opacity="0.3" plotmode="off" post="1 2 3 4 5 6" linear="1"/></flame>"#);
    assert_eq!(f.xforms[0].color, 0.25, "second colour coordinate ignored");
    assert_eq!(f.xforms[1].opacity, 0.0);
    assert_eq!(f.xforms[2].opacity, 0.3);
    assert_eq!(f.xforms[3].opacity, 0.0);
    assert_eq!(f.xforms[3].post.c, [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]);
    assert_eq!(f.xforms[3].post.apply(1.0, 1.0), (9.0, 12.0));
}

#[test]
fn chaos_rows() {
    let f = one(r#"<flame time="0"><xform weight="1" linear="1"/><xform weight="1" linear="1" chaos="0 2"/>
        <xform weight="1" linear="1" chaos="1 1 0.5"/></flame>"#);
    assert!(f.xforms[0].chaos.is_empty(), "no chaos attribute: all 1");
    assert_eq!(f.xforms[1].chaos, [0.0, 2.0], "rows end at their last entry that is not 1");
    assert_eq!(f.xforms[2].chaos, [1.0, 1.0, 0.5]);
    assert_eq!((f.xforms[1].chaos_to(0), f.xforms[1].chaos_to(2)), (0.0, 1.0));
    let f =
        one(r#"<flame time="0"><xform weight="1" linear="1" chaos="0.5 1 1"/><xform weight="1" linear="1"/></flame>"#);
    assert_eq!(f.xforms[0].chaos, [0.5]);
    // Entries beyond the xforms are dropped with a warning.
    let p = ok(r#"<flame time="0"><xform weight="1" linear="1" chaos="1 0 3"/></flame>"#);
    assert!(p.flames[0].xforms[0].chaos.is_empty());
    assert_eq!(p.warnings.len(), 1, "{:?}", p.warnings);
    // flam3 files a final xform's chaos under the xform before it.
    let p = ok(r#"<flame time="0"><xform weight="1" linear="1"/><xform weight="1" linear="1"/>
        <finalxform linear="1" chaos="0.5"/></flame>"#);
    assert_eq!(p.flames[0].xforms[1].chaos, [0.5]);
    assert!(p.flames[0].final_xform.as_ref().unwrap().chaos.is_empty());
    assert!(p.warnings[0].contains("finalxform: attribute 'chaos'"), "{:?}", p.warnings);
    // Negative entries are refused.
    let e = err(r#"<flame time="0"><xform weight="1" linear="1" chaos="1 -1"/></flame>"#);
    assert!(e.contains("xform 0: attribute 'chaos': negative"), "{e}");
}

#[test]
fn a_chaos_row_that_reaches_no_xform_warns_and_strict_refuses_it() {
    // xform 1's row reaches only xform 1... of weight 0 here: every product
    // is zero. flam3 refuses the flame; Fractorium goes on with xform 0.
    let xml = r#"<flame name="dead" time="0"><xform weight="1" linear="1"/><xform weight="0" linear="1" chaos="0 1"/>
        <xform weight="1" linear="1" chaos="0 1 0"/></flame>"#;
    let p = ok(xml);
    assert_eq!(p.warnings.len(), 1, "{:?}", p.warnings);
    assert!(
        p.warnings[0].contains(
            "flame 'dead': xform 2: its chaos row gives every xform zero weight; xform 0 follows it, as in Fractorium"
        ),
        "{:?}",
        p.warnings
    );
    let e = err_with(xml, &strict_opts());
    assert!(e.contains("xform 2: its chaos row gives every xform zero weight (flam3 refuses"), "{e}");
    // A row of zeros where every weight is zero anyway is the flame's own
    // emptiness, not the row's: no warning (rendering refuses it).
    let p = ok(r#"<flame time="0"><xform weight="0" linear="1" chaos="0"/></flame>"#);
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
}

#[test]
fn variation_forms_and_parameters() {
    let f = one(r#"<flame time="0">
        <xform weight="1" var1="2"/>
        <xform weight="1" linear="0.5" var1="3"/>
        <xform weight="1" var1="3" linear="0.5"/>
        <xform weight="1" linear="0" julian="0.5" julian_power="3" julian_dist="-1" />
        <xform weight="1" julian_power="3" spherical="1"/>
        <xform weight="1" super_shape="1" super_shape_rnd="7" super_shape_m="4"/>
        <xform weight="1" linear="-0.5" swirl="0.25"/></flame>"#);
    assert_eq!(vars(&f.xforms[0]), vec![("spherical", 1.0)]);
    assert_eq!(vars(&f.xforms[1]), vec![("swirl", 1.0)], "var1 clears what came before");
    assert_eq!(vars(&f.xforms[2]), vec![("linear", 0.5), ("swirl", 1.0)]);
    assert_eq!(vars(&f.xforms[3]), vec![("julian", 0.5)], "zero weights are left out");
    assert_eq!(param(&f.xforms[3], "julian", "julian_power"), 3.0);
    assert_eq!(param(&f.xforms[3], "julian", "julian_dist"), -1.0);
    assert_eq!(vars(&f.xforms[4]), vec![("spherical", 1.0)], "parameter without its variation");
    assert_eq!(param(&f.xforms[5], "super_shape", "super_shape_rnd"), 1.0, "clamped to [0, 1]");
    assert_eq!(param(&f.xforms[5], "super_shape", "super_shape_m"), 4.0);
    assert_eq!(vars(&f.xforms[6]), vec![("linear", -0.5), ("swirl", 0.25)], "negative variation weights are fine");
    // Defaults are filled in for parameters not given.
    let spec = &f.xforms[5].variations[0];
    for (p, s) in spec.params.iter().zip(spec.kind.params()) {
        if s.name != "super_shape_rnd" && s.name != "super_shape_m" {
            assert_eq!(*p, s.default, "{}", s.name);
        }
    }

    // var: all 99 weights.
    let mut w = vec!["0"; 99];
    w[1] = "0.5";
    w[98] = "2";
    let f = one(&format!(r#"<flame time="0"><xform weight="1" var="{}"/></flame>"#, w.join(" ")));
    assert_eq!(vars(&f.xforms[0]), vec![("sinusoidal", 0.5), ("mobius", 2.0)]);
    let e = err(r#"<flame time="0"><xform weight="1" var="1 0 0"/></flame>"#);
    assert!(e.contains("attribute 'var': expected 99 numbers, found 3"), "{e}");
    let e = err(r#"<flame time="0"><xform weight="1" var1="99"/></flame>"#);
    assert!(e.contains("attribute 'var1': 99 is out of range"), "{e}");
}

#[test]
fn parameter_aliases() {
    let f = one(r#"<flame time="0"><xform weight="1" oscilloscope="1" oscilloscope_frequency="2"
        oscope_damping="0.5" mobius="1" Re_A="0.25" mobius_im_b="0.75" Im_D="-1"/></flame>"#);
    let x = &f.xforms[0];
    let osc = x.variations.iter().find(|v| v.kind == kind("oscilloscope")).unwrap();
    let names: Vec<&str> = osc.kind.params().iter().map(|p| p.name).collect();
    let get = |v: &warpmc_flame::variations::VariationSpec, suffix: &str| {
        let i = v.kind.params().iter().position(|p| p.name.ends_with(suffix)).unwrap();
        v.params[i]
    };
    assert_eq!(get(osc, "frequency"), 2.0, "{names:?}");
    assert_eq!(get(osc, "damping"), 0.5, "{names:?}");
    let mob = x.variations.iter().find(|v| v.kind == kind("mobius")).unwrap();
    assert_eq!(get(mob, "re_a"), 0.25);
    assert_eq!(get(mob, "im_b"), 0.75);
    assert_eq!(get(mob, "im_d"), -1.0);
    // Written as flam3 writes them: oscilloscope's parameters by their long
    // names.
    let written = warpmc_flame::genome::write_flame(&f);
    assert!(written.contains(r#"oscilloscope_frequency="2""#) && written.contains(r#"oscilloscope_damping="0.5""#));
    assert!(!written.contains(" oscope_"), "{written}");
}

#[test]
fn symmetry_element() {
    // kind 3: two rotations by ±120°, rounded to 6 digits.
    let f = one(r#"<flame time="0"><xform weight="1" linear="1"/><symmetry kind="3"/>
        <xform weight="1" linear="1" chaos="0"/></flame>"#);
    assert_eq!(f.xforms.len(), 4);
    let (s1, s2) = (&f.xforms[1], &f.xforms[2]);
    for s in [s1, s2] {
        assert_eq!((s.weight, s.color_speed, s.animate), (1.0, 0.0, 0.0));
        assert_eq!(vars(s), vec![("linear", 1.0)]);
    }
    // flam3's round6: 1e-6 times the rounded integer.
    let r = 1e-6 * 866025.0;
    assert_eq!(s1.coefs.c, [[-0.5, r], [-r, -0.5], [0.0, 0.0]]);
    assert_eq!(s2.coefs.c, [[-0.5, -r], [r, -0.5], [0.0, 0.0]]);
    assert_eq!((s1.color, s2.color), (0.0, 1.0));
    // The chaos row of the xform after them is filed under its index.
    assert_eq!(f.xforms[3].chaos, [0.0]);
    // kind −2: the reflection (colour 1) and a half turn, sorted by
    // determinant (the reflection's −1 first).
    let f = one(r#"<flame time="0"><symmetry kind="-2"/></flame>"#);
    assert_eq!(f.xforms.len(), 2);
    assert_eq!(f.xforms[0].coefs.c, [[-1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]);
    assert_eq!(f.xforms[0].color, 1.0);
    assert_eq!(f.xforms[1].coefs.c[0], [-1.0, 0.0]);
    assert_eq!(one(r#"<flame time="0"><symmetry kind="1"/></flame>"#).xforms.len(), 0);
    // After a final xform flam3 sorts all the added xforms but the first,
    // with the final one (which stays last at a colour speed above 0): the
    // order flam3-genome writes for this flame.
    let f = one(r#"<flame time="0"><xform weight="1" linear="1"/><finalxform swirl="1"/><symmetry kind="5"/></flame>"#);
    let firsts: Vec<f64> = f.xforms[1..].iter().map(|x| x.coefs.c[0][0]).collect();
    assert_eq!(firsts, [0.309017, -0.809017, -0.809017, 0.309017]);
    assert_eq!(f.xforms[1].coefs.c[0][1], 1e-6 * 951057.0);
    assert_eq!(vars(f.final_xform.as_ref().unwrap()), vec![("swirl", 1.0)]);
    // Before it: all of them sorted.
    let f = one(r#"<flame time="0"><xform weight="1" linear="1"/><symmetry kind="5"/><finalxform swirl="1"/></flame>"#);
    let firsts: Vec<f64> = f.xforms[1..].iter().map(|x| x.coefs.c[0][0]).collect();
    assert_eq!(firsts, [-0.809017, -0.809017, 0.309017, 0.309017]);
    let e = err(r#"<flame time="0"><symmetry kind="0"/></flame>"#);
    assert!(e.contains("<symmetry>: attribute 'kind': 0 asks flam3 for a random symmetry"), "{e}");
}

#[test]
fn soloxform() {
    let f = one(r#"<flame time="0" soloxform="1"><xform weight="1" linear="1"/><xform weight="1" linear="1"/>
        <xform weight="1" opacity="0.5" linear="1"/><finalxform linear="1"/></flame>"#);
    let op: Vec<f64> = f.xforms.iter().map(|x| x.opacity).collect();
    assert_eq!(op, [0.0, 1.0, 0.0]);
    assert_eq!(f.final_xform.unwrap().opacity, 1.0);
    let f = one(r#"<flame time="0" soloxform="-1"><xform weight="1" linear="1"/></flame>"#);
    assert_eq!(f.xforms[0].opacity, 1.0);
}

#[test]
fn motion_elements() {
    let p = ok(r#"<flame time="0"><xform weight="1" linear="1">
        <motion motion_frequency="2" motion_function="sin" weight="-0.5" julian_power="1"/></xform></flame>"#);
    assert_eq!(vars(&p.flames[0].xforms[0]), vec![("linear", 1.0)]);
    assert_eq!(p.warnings.len(), 1);
    assert!(p.warnings[0].contains("<motion> elements: renders ignore them"), "{}", p.warnings[0]);
    let m = &p.flames[0].xforms[0].motion;
    assert_eq!((m.len(), m[0].frequency, m[0].weight), (1, 2, -0.5));
    assert_eq!((m[0].variations[0].kind.name(), m[0].variations[0].params[0]), ("julian", 1.0));
    let e = err(r#"<flame time="0"><xform weight="1" motion_frequency="2" linear="1"/></flame>"#);
    assert!(e.contains("xform 0: motion_frequency/motion_function belong in a <motion>"), "{e}");
    let e = err(r#"<flame time="0"><xform weight="1" linear="1"><motion chaos="1"/></xform></flame>"#);
    assert!(e.contains("xform 0: <motion> 0: attribute 'chaos': not allowed"), "{e}");
    let e = err(r#"<flame time="0"><xform weight="1" linear="1"><motion motion_function="cos"/></xform></flame>"#);
    assert!(e.contains("attribute 'motion_function': unknown value \"cos\""), "{e}");
}

// ---------------------------------------------------------------- palettes in genomes

#[test]
fn color_elements() {
    let f = one(r#"<flame time="0"><xform weight="1" linear="1"/>
        <color index="0" rgb="255 0 127.5"/>
        <color index="1" rgba="255 255 0 51"/>
        <color rgba="255 255 0 51" index="2"/>
        <color index="3" rgb="100 100 100" a="127.5"/>
        <color index="255" rgb="0 0 255"/></flame>"#);
    let e = &f.palette.entries;
    assert_eq!(e[0], [1.0, 0.0, 0.5, 1.0]);
    // Premultiplied by alpha 0.2.
    assert!(close4(e[1], [0.2, 0.2, 0.0, 0.2]));
    // flam3 resets alpha while reading each attribute: rgba before index
    // loses its alpha.
    assert_eq!(e[2], [1.0, 1.0, 0.0, 1.0]);
    assert!(close4(e[3], [0.5 * 100.0 / 255.0, 0.5 * 100.0 / 255.0, 0.5 * 100.0 / 255.0, 0.5]));
    assert_eq!(e[255], [0.0, 0.0, 1.0, 1.0]);
    // Entries 4..=254 lie between entry 3 and entry 255.
    let t = (128.0 - 3.0) / (255.0 - 3.0);
    for k in 0..4 {
        assert!(close(e[128][k], e[3][k] * (1.0 - t) + e[255][k] * t));
    }
}

#[test]
fn missing_entries_interpolated_cyclically() {
    let f = one(r#"<flame time="0"><xform weight="1" linear="1"/>
        <color index="10" rgb="255 0 0"/><color index="20" rgb="0 0 255"/></flame>"#);
    let e = &f.palette.entries;
    assert_eq!(e[10], [1.0, 0.0, 0.0, 1.0]);
    assert!(close4(e[15], [0.5, 0.0, 0.5, 1.0]));
    // Entry 0: between entry 20 (at 20 − 256) and entry 10.
    let t = (0.0 - (20.0 - 256.0)) / (10.0 - (20.0 - 256.0));
    assert!(close4(e[0], [t, 0.0, 1.0 - t, 1.0]));
    // Entry 255: between entry 20 and entry 10 (at 10 + 256).
    let t = (255.0 - 20.0) / (266.0 - 20.0);
    assert!(close4(e[255], [t, 0.0, 1.0 - t, 1.0]));
    // A single colour fills the palette.
    let f = one(r#"<flame time="0"><xform weight="1" linear="1"/><color index="7" rgb="51 102 153"/></flame>"#);
    for x in f.palette.entries.iter() {
        assert!(close4(*x, [0.2, 0.4, 0.6, 1.0]));
    }
    // No colour at all: all zero, alpha included (flam3 draws nothing).
    let f = one(r#"<flame time="0"><xform weight="1" linear="1"/></flame>"#);
    assert!(f.palette.entries.iter().all(|x| *x == [0.0; 4]));
}

#[test]
fn hex_palettes() {
    let rgb: String = (0..256).map(|i| format!("{:02X}{:02x}{:02X}", i, 255 - i, 7)).collect();
    let lines: Vec<String> = rgb.as_bytes().chunks(48).map(|c| String::from_utf8(c.to_vec()).unwrap()).collect();
    let f = one(&format!(
        "<flame time=\"0\"><xform weight=\"1\" linear=\"1\"/><palette count=\"256\" format=\"RGB\">\n{}\n</palette></flame>",
        lines.join("\n      ")
    ));
    for i in [0usize, 1, 100, 255] {
        assert_eq!(f.palette.entries[i], [i as f64 / 255.0, (255 - i) as f64 / 255.0, 7.0 / 255.0, 1.0]);
    }
    // RGBA: not premultiplied.
    let f = one(
        r#"<flame time="0"><xform weight="1" linear="1"/><palette count="2" format="RGBA">FF000080 0000FFFF</palette></flame>"#,
    );
    assert_eq!(f.palette.entries[0], [1.0, 0.0, 0.0, 128.0 / 255.0]);
    assert_eq!(f.palette.entries[1], [0.0, 0.0, 1.0, 1.0]);
    // Entries past the count are interpolated (here back to entry 0).
    assert!(close(f.palette.entries[2][2], 1.0 - 1.0 / 255.0));
    // <colors count data>: 00RRGGBB.
    let f =
        one(r#"<flame time="0"><xform weight="1" linear="1"/><colors count="2" data="00ff8000 000080ff"/></flame>"#);
    assert_eq!(f.palette.entries[0], [1.0, 128.0 / 255.0, 0.0, 1.0]);
    assert_eq!(f.palette.entries[1], [0.0, 128.0 / 255.0, 1.0, 1.0]);

    for (xml, want) in [
        (r#"<palette count="2" format="RGB">FF0000</palette>"#, "expected 2 colours of 6 hex digits"),
        (r#"<palette count="1" format="RGB">FF0000 00</palette>"#, "found 8 digits"),
        (r#"<palette count="1" format="RGB">FF00GG</palette>"#, "colour 0: \"FF00GG\" is not 6 hex digits"),
        (r#"<palette count="1" format="BGR">FF0000</palette>"#, "attribute 'format': unknown value \"BGR\""),
        (r#"<palette count="1">FF0000</palette>"#, "attribute 'format': missing"),
        (r#"<palette count="300" format="RGB">FF0000</palette>"#, "expected 300 colours of 6 hex digits"),
        (r#"<palette count="65537" format="RGB">FF0000</palette>"#, "attribute 'count': 65537 is out of range"),
        (r#"<colors count="257" data="00ff8000"/>"#, "attribute 'count': 257 is out of range"),
        (r#"<palette count="1" format="RGB" index0="3">FF0000</palette>"#, "mixes the count/format form"),
        (r#"<colors count="1" data="11ff8000"/>"#, "does not start with 00"),
        (r#"<colors data="00ff8000"/>"#, "attribute 'count': missing"),
        (r#"<color index="256" rgb="1 2 3"/>"#, "attribute 'index': 256 is out of range"),
        (r#"<color rgb="1 2 3"/>"#, "attribute 'index': missing"),
        (r#"<color index="1" rgb="1 2"/>"#, "attribute 'rgb': expected 3 numbers, found 2"),
        (r#"<color index="1" hsv="1 2 3"/>"#, "unknown <color> attribute"),
        (r#"<color/>"#, "<color>: no attributes"),
    ] {
        let e = err(&format!(r#"<flame name="p"><xform weight="1" linear="1"/>{xml}</flame>"#));
        assert!(e.starts_with("t.flam3: flame 'p': <"), "{e}");
        assert!(e.contains(want), "{xml}: {e}");
    }
}

/// A `<palette>` of `n` colours, the first `split` red and the rest blue,
/// in a flame with the given `palette_mode`.
fn two_colour_palette(mode: &str, n: usize, split: usize) -> String {
    let hex: String = (0..n).map(|j| if j < split { "FF0000" } else { "0000FF" }).collect();
    format!(
        r#"<flame name="big" time="0" palette_mode="{mode}"><xform weight="1" linear="1"/><palette count="{n}" format="RGB">{hex}</palette></flame>"#
    )
}

#[test]
fn palettes_of_fewer_than_256_colours_blend_back_to_the_first_with_a_warning() {
    // 16 colours: red, then blue; entries 16 to 255 run from blue (entry 15)
    // back to red (entry 0 after wrapping), as flam3 fills them.
    let parsed = ok(&two_colour_palette("step", 16, 8));
    let e = &parsed.flames[0].palette.entries;
    assert!(close4(e[0], [1.0, 0.0, 0.0, 1.0]) && close4(e[15], [0.0, 0.0, 1.0, 1.0]));
    let t = (200.0 - 15.0) / 241.0;
    assert!(close4(e[200], [t, 0.0, 1.0 - t, 1.0]), "{:?}", e[200]);
    assert_eq!(parsed.warnings.len(), 1, "{:?}", parsed.warnings);
    assert!(parsed.warnings[0].contains("16 colours for 256 entries"), "{:?}", parsed.warnings);
    assert!(ok(&two_colour_palette("step", 256, 8)).warnings.is_empty());
}

#[test]
fn fractorium_palettes_of_more_than_256_colours_are_averaged_to_256() {
    let (red, blue) = ([1.0, 0.0, 0.0, 1.0], [0.0, 0.0, 1.0, 1.0]);
    // 512 colours, red up to entry 255. Fractorium's step lookup takes entry
    // floor(511 c): red below c = 256/511, which is 128.2505 entries of 256,
    // so entry 128 is a quarter (and a little) red and the rest blue.
    let parsed = ok(&two_colour_palette("step", 512, 256));
    let e = &parsed.flames[0].palette.entries;
    let share = 256.0 * 256.0 / 511.0 - 128.0;
    assert!(close4(e[0], red) && close4(e[127], red), "{:?} {:?}", e[0], e[127]);
    assert!(close4(e[128], [share, 0.0, 1.0 - share, 1.0]), "{:?}", e[128]);
    assert!(close4(e[129], blue) && close4(e[255], blue), "{:?} {:?}", e[129], e[255]);
    assert_eq!(parsed.warnings.len(), 1, "{:?}", parsed.warnings);
    assert!(
        parsed.warnings[0].contains("512 colours (Fractorium's; flam3 reads 256), averaged to 256 entries"),
        "{:?}",
        parsed.warnings
    );
    // Linear mode: red to position 255 of 511, a ramp to blue at 256, so
    // from 127.75 to 128.25 entries of 256 (to 3 decimals). Entry 128 is the
    // knot at 128/256, the mean over 127.5 to 128.5: as much red as blue on
    // either side of the ramp, which is symmetric about 128.
    let e = one(&two_colour_palette("linear", 512, 256)).palette.entries;
    assert!(close4(e[0], red) && close4(e[127], red), "{:?} {:?}", e[0], e[127]);
    assert!(close4(e[128], [0.5, 0.0, 0.5, 1.0]), "{:?}", e[128]);
    assert!(close4(e[129], blue) && close4(e[255], blue), "{:?} {:?}", e[129], e[255]);
    // 1024 colours of one value stay that value; the split lands where the
    // entries put it (red below 700/1023 = 175.17 of 256).
    let e = one(&two_colour_palette("step", 1024, 1024)).palette.entries;
    assert!(e.iter().all(|c| close4(*c, red)));
    let e = one(&two_colour_palette("step", 1024, 700)).palette.entries;
    let share = 700.0 / 1023.0 * 256.0 - 175.0;
    assert!(close4(e[174], red) && close4(e[176], blue));
    assert!(close4(e[175], [share, 0.0, 1.0 - share, 1.0]), "{:?}", e[175]);
    // --strict: flam3 reads at most 256 colours.
    let m = err_with(&two_colour_palette("step", 512, 256), &strict_opts());
    assert!(m.contains("attribute 'count': 512 colours: flam3 reads at most 256"), "{m}");
}

#[test]
fn numbered_palette_and_blend_form() {
    let Some(lib) = library() else { return };
    let o = lib_opts(&lib);
    let read = |xml: &str| parse_str(xml, "t.flam3", &o).unwrap().flames.remove(0);
    // A numbered palette replaces colour elements, through the HSV round
    // trip even for hue 0.
    let f = read(r#"<flame palette="7"><xform weight="1" linear="1"/><color index="0" rgb="1 2 3"/></flame>"#);
    assert_eq!(f.palette, lib.get(7).unwrap().rotate_hue(0.0));
    for (a, b) in f.palette.entries.iter().zip(lib.get(7).unwrap().entries.iter()) {
        assert!(close4(*a, *b));
    }
    // palette="-1" means none (flam3's "random" marker is only used when
    // the attribute is absent).
    let f = read(r#"<flame palette="-1"><xform weight="1" linear="1"/><color index="0" rgb="255 0 0"/></flame>"#);
    assert_eq!(f.palette.entries[100], [1.0, 0.0, 0.0, 1.0]);

    // Blend form: blend 0 is the first palette (hue-rotated), blend 1 the
    // second, 0.5 in between in HSV.
    let f = read(
        r#"<flame time="0"><xform weight="1" linear="1"/>
        <palette index0="3" hue0="0.25" index1="9" hue1="0" blend="0"/></flame>"#,
    );
    let p3 = lib.get(3).unwrap().rotate_hue(0.25);
    for (a, b) in f.palette.entries.iter().zip(p3.entries.iter()) {
        assert!(close4(*a, *b), "{a:?} {b:?}");
    }
    let f =
        read(r#"<flame time="0"><xform weight="1" linear="1"/><palette index0="3" index1="9" blend="0.5"/></flame>"#);
    let (p3, p9) = (lib.get(3).unwrap().rotate_hue(0.0), lib.get(9).unwrap().rotate_hue(0.0));
    for i in [0, 100, 255] {
        let (s, t) = (rgb_to_hsv(first3(p3.entries[i])), rgb_to_hsv(first3(p9.entries[i])));
        let mut h0 = s[0];
        if h0 - t[0] > 3.0 {
            h0 -= 6.0;
        }
        if h0 - t[0] < -3.0 {
            h0 += 6.0;
        }
        let want = hsv_to_rgb([(h0 + t[0]) / 2.0, (s[1] + t[1]) / 2.0, (s[2] + t[2]) / 2.0]);
        assert!(close4(f.palette.entries[i], [want[0], want[1], want[2], 1.0]));
    }

    let e = parse_str(r#"<flame name="x" palette="100000"><xform weight="1" linear="1"/></flame>"#, "t.flam3", &o)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("t.flam3: flame 'x': attribute 'palette': no palette 100000 in "), "{e}");
    // By default, as flam3: a warning and an all-white palette.
    let lenient = ParseOptions { strict: false, ..o.clone() };
    for xml in [
        r#"<flame name="x" palette="701"><xform weight="1" linear="1"/></flame>"#,
        r#"<flame name="x" palette="-5"><xform weight="1" linear="1"/></flame>"#,
    ] {
        let p = parse_str(xml, "t.flam3", &lenient).unwrap();
        assert!(p.flames[0].palette.entries.iter().all(|&e| e == [1.0; 4]), "{xml}");
        assert!(p.warnings.iter().any(|w| w.contains("all white, as flam3 does")), "{:?}", p.warnings);
    }
    let e = parse_str(r#"<flame palette="1.5"><xform weight="1" linear="1"/></flame>"#, "t.flam3", &o)
        .unwrap_err()
        .to_string();
    assert!(e.contains("attribute 'palette': \"1.5\" is not an integer"), "{e}");
    let e = parse_str(r#"<flame time="0"><palette index0="3" blend="0.5"/></flame>"#, "t.flam3", &o)
        .unwrap_err()
        .to_string();
    assert!(e.contains("<palette>: attribute 'index1': missing or -1 (flam3 would pick a random palette)"), "{e}");
    let e = parse_str(r#"<flame time="0"><palette index0="-1" index1="3" blend="0.5"/></flame>"#, "t.flam3", &lenient)
        .unwrap_err()
        .to_string();
    assert!(e.contains("attribute 'index0': missing or -1 (flam3 would pick a random palette)"), "{e}");
}

#[test]
fn palette_file_missing_or_broken() {
    // A palette file that exists but is not XML is an error, not skipped.
    let dir = warpmc_testkit::fresh_scratch_dir("genome-parse", "palettes");
    let bad = dir.join("bad.xml");
    std::fs::write(&bad, "not xml <").unwrap();
    let o = ParseOptions { strict: true, palette_file: Some(bad.clone()) };
    let e = parse_str(r#"<flame name="n" palette="3"><xform weight="1" linear="1"/></flame>"#, "t.flam3", &o)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("t.flam3: flame 'n': attribute 'palette': a numbered palette needs the palette file: "),
        "{e}"
    );
    assert!(e.contains("bad.xml: malformed XML"), "{e}");
    // A palette whose data cannot be read is named as such, not as missing.
    let short = dir.join("short.xml");
    std::fs::write(&short, r#"<palettes><palette number="3" data="00ff0000 00ff00"/></palettes>"#).unwrap();
    let o = ParseOptions { strict: true, palette_file: Some(short.clone()) };
    let e = parse_str(r#"<flame name="n" palette="3"><xform weight="1" linear="1"/></flame>"#, "t.flam3", &o)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("t.flam3: flame 'n': attribute 'palette': palette 3 of "), "{e}");
    assert!(
        e.ends_with("short.xml cannot be read: its data holds 1 of the 256 colours (8 hex digits, 00RRGGBB, each)"),
        "{e}"
    );
    // Not found anywhere: the error lists the places looked at.
    let nowhere = [dir.join("a.xml"), dir.join("b.xml")];
    let e = PaletteLibrary::locate_among(&nowhere).unwrap_err();
    assert!(matches!(e, FlameError::PaletteFile { kind: std::io::ErrorKind::NotFound, .. }), "{e:?}");
    let e = e.to_string();
    assert!(e.contains("flam3-palettes.xml not found"), "{e}");
    assert!(e.contains("a.xml") && e.contains("b.xml"), "{e}");
    // The search order.
    let explicit = dir.join("explicit.xml");
    let path = PaletteLibrary::search_path(Some(&explicit));
    assert_eq!(path[0], explicit);
    assert_eq!(path.last().unwrap(), &PathBuf::from("/usr/share/flam3/flam3-palettes.xml"));
    // A palette file named but missing is the error, whatever else exists:
    // the genome error names it.
    let o = ParseOptions { strict: true, palette_file: Some(explicit.clone()) };
    let e = parse_str(r#"<flame palette="3"><xform weight="1" linear="1"/></flame>"#, "t.flam3", &o)
        .unwrap_err()
        .to_string();
    assert!(e.contains("explicit.xml: cannot read the palette file: "), "{e}");
    // So is a directory.
    let e = PaletteLibrary::locate(Some(&dir)).unwrap_err();
    assert!(matches!(e, FlameError::PaletteFile { kind: std::io::ErrorKind::IsADirectory, .. }), "{e:?}");
    let e = e.to_string();
    assert!(e.ends_with("is a directory, not the palette file"), "{e}");
    let e = PaletteLibrary::check_named(Some(&dir.join("missing.xml"))).unwrap_err();
    assert!(matches!(e, FlameError::PaletteFile { kind: std::io::ErrorKind::NotFound, .. }), "{e:?}");
    assert!(PaletteLibrary::check_named(Some(&dir)).is_err());
    std::fs::remove_dir_all(&dir).ok();
}

// ---------------------------------------------------------------- palette library

#[test]
fn library_contents() {
    let Some(lib) = library() else { return };
    // 701 palettes, numbered 0 to 700.
    assert_eq!(lib.len(), 701);
    assert_eq!(lib.numbers().min(), Some(0));
    assert_eq!(lib.numbers().max(), Some(700));
    assert_eq!(lib.name(0), Some("south-sea-bather"));
    // Palette 0 starts 00b9eaeb.
    let p = lib.get(0).unwrap();
    assert_eq!(p.entries[0], [0xb9 as f64 / 255.0, 0xea as f64 / 255.0, 0xeb as f64 / 255.0, 1.0]);
    assert!(lib.get(-5).is_none());
    assert!(lib.numbers().all(|n| lib.get(n).is_some()));
    // A small library from text, with an unreadable palette left out and
    // the first of two equal numbers kept.
    let data: String = (0..256).map(|i| format!("00{:02x}0000 ", i)).collect();
    let xml = format!(
        r#"<palettes><palette number="4" name="a" data="{data}"/><palette number="5" name="short" data="00ff0000"/>
        <palette number="4" name="b" data="{data}"/></palettes>"#
    );
    let small = PaletteLibrary::from_xml(&xml, Path::new("mem")).unwrap();
    assert_eq!(small.len(), 2);
    assert_eq!(small.name(4), Some("a"));
    assert!(small.get(5).is_none());
    assert_eq!(small.get(4).unwrap().entries[255], [1.0, 0.0, 0.0, 1.0]);
    // What was wrong with a palette left out is kept for the error.
    assert!(small.unreadable(5).unwrap().contains("1 of the 256 colours"), "{:?}", small.unreadable(5));
    assert_eq!(small.unreadable(4), None);
    assert_eq!(small.unreadable(6), None);
    let bad_digit = data.replacen("0007", "00zz", 1);
    let xml = format!(r#"<palettes><palette number="3" data="{bad_digit}"/></palettes>"#);
    let lib = PaletteLibrary::from_xml(&xml, Path::new("mem")).unwrap();
    assert!(lib.unreadable(3).unwrap().contains("colour 7 of its data, 00zz0000, is not 00RRGGBB"));
    let lib = PaletteLibrary::from_xml(r#"<palette number="2"/>"#, Path::new("mem")).unwrap();
    assert_eq!(lib.unreadable(2), Some("it has no data attribute"));
}

#[test]
fn hsv_conversions_hand_computed() {
    // rgb2hsv: hue in sixths of a turn.
    assert_eq!(rgb_to_hsv([1.0, 0.0, 0.0]), [0.0, 1.0, 1.0]);
    assert_eq!(rgb_to_hsv([0.0, 1.0, 0.0]), [2.0, 1.0, 1.0]);
    assert_eq!(rgb_to_hsv([0.0, 0.0, 1.0]), [4.0, 1.0, 1.0]);
    assert_eq!(rgb_to_hsv([1.0, 0.0, 1.0]), [5.0, 1.0, 1.0]);
    assert_eq!(rgb_to_hsv([0.5, 0.5, 0.5]), [0.0, 0.0, 0.5]);
    assert_eq!(rgb_to_hsv([0.0, 0.0, 0.0]), [0.0, 0.0, 0.0]);
    let hsv = rgb_to_hsv([0.2, 0.4, 0.8]);
    assert!(close(hsv[0], 4.0 - 1.0 / 3.0) && close(hsv[1], 0.75) && hsv[2] == 0.8);
    // hsv2rgb wraps the hue by whole turns.
    assert_eq!(hsv_to_rgb([2.0, 1.0, 1.0]), [0.0, 1.0, 0.0]);
    assert_eq!(hsv_to_rgb([8.0, 1.0, 1.0]), [0.0, 1.0, 0.0]);
    assert_eq!(hsv_to_rgb([-4.0, 1.0, 1.0]), [0.0, 1.0, 0.0]);
    assert_eq!(hsv_to_rgb([3.0, 0.0, 0.25]), [0.25, 0.25, 0.25]);
    // Far-away hues (a flame interpolated far outside its control points)
    // take whole turns off at once: the same value, without 10^8 steps.
    assert_eq!(hsv_to_rgb([6.0 * 1e8 + 2.0, 1.0, 1.0]), [0.0, 1.0, 0.0]);
    assert_eq!(hsv_to_rgb([-6.0 * 1e8 + 4.0, 1.0, 1.0]), [0.0, 0.0, 1.0]);
    assert_eq!(hsv_to_rgb([700.25, 1.0, 1.0]), hsv_to_rgb([700.25 - 696.0, 1.0, 1.0]));
    // No endless loop on an infinite hue.
    let _ = hsv_to_rgb([f64::INFINITY, 1.0, 1.0]);
    let _ = hsv_to_rgb([1e300, 1.0, 1.0]);
}

#[test]
fn hue_rotation_hand_computed() {
    let mut p = Palette::black();
    p.entries[0] = [1.0, 0.5, 0.0, 1.0]; // 30°
    p.entries[1] = [0.2, 0.4, 0.8, 0.5]; // 220°, alpha kept
    p.entries[2] = [1.0, 0.0, 0.0, 1.0]; // 0°
    p.entries[3] = [0.3, 0.3, 0.3, 1.0]; // grey: unchanged
    let q = p.rotate_hue(0.1); // +36°
    assert!(close4(q.entries[0], [0.9, 1.0, 0.0, 1.0]), "66°: {:?}", q.entries[0]);
    assert!(close4(q.entries[3], [0.3, 0.3, 0.3, 1.0]));
    let q = p.rotate_hue(0.5); // +180°
    assert!(close4(q.entries[1], [0.8, 0.6, 0.2, 0.5]), "40°: {:?}", q.entries[1]);
    assert!(close4(q.entries[2], [0.0, 1.0, 1.0, 1.0]));
    let q = p.rotate_hue(-0.25); // −90°
    assert!(close4(q.entries[2], [0.5, 0.0, 1.0, 1.0]), "270°: {:?}", q.entries[2]);
    let q = p.rotate_hue(1.0 / 3.0);
    assert!(close4(q.entries[2], [0.0, 1.0, 0.0, 1.0]));
    // The independent reference agrees on arbitrary colours.
    for (i, c) in [[0.9, 0.1, 0.35, 1.0], [0.05, 0.6, 0.58, 1.0], [0.7, 0.7, 0.1, 1.0]].iter().enumerate() {
        p.entries[i] = *c;
        for r in [0.0, 0.22851, -0.7, 0.999] {
            let got = p.rotate_hue(r).entries[i];
            assert!(close4(got, reference_rotate(*c, r)), "{c:?} by {r}: {got:?}");
        }
    }
}

fn first3(c: [f64; 4]) -> [f64; 3] {
    [c[0], c[1], c[2]]
}

/// Hue rotation by `turns`, computed the textbook way in degrees.
fn reference_rotate(c: [f64; 4], turns: f64) -> [f64; 4] {
    let [r, g, b, a] = c;
    let max = r.max(g).max(b);
    let min = r.min(g).min(b);
    let d = max - min;
    if d == 0.0 {
        return c;
    }
    let hue = if max == r {
        60.0 * ((g - b) / d)
    } else if max == g {
        60.0 * ((b - r) / d + 2.0)
    } else {
        60.0 * ((r - g) / d + 4.0)
    };
    let h = (hue + 360.0 * turns).rem_euclid(360.0);
    let (s, v) = (d / max, max);
    let chroma = v * s;
    let x = chroma * (1.0 - ((h / 60.0) % 2.0 - 1.0).abs());
    let m = v - chroma;
    let (r1, g1, b1) = match (h / 60.0).floor() as i32 {
        0 => (chroma, x, 0.0),
        1 => (x, chroma, 0.0),
        2 => (0.0, chroma, x),
        3 => (0.0, x, chroma),
        4 => (x, 0.0, chroma),
        _ => (chroma, 0.0, x),
    };
    [r1 + m, g1 + m, b1 + m, a]
}

// ---------------------------------------------------------------- errors

/// flam3 warns about a keyword value it does not know and renders with the
/// default; the reader does the same, and refuses it under `strict`.
#[test]
fn unknown_keywords_warn_and_keep_the_default_as_flam3_does() {
    let x = r#"<xform weight="1" linear="1"/>"#;
    let cases = [
        ("filter_shape", "sinc", "using gaussian"),
        ("filter_shape", "Gaussian", "using gaussian"),
        ("palette_mode", "cubic", "using step"),
        ("interpolation", "cubic", "using linear"),
        ("interpolation_type", "compat", "using log"),
        ("temporal_filter_type", "sinc", "using box"),
        ("palette_interpolation", "lab", "using hsv_circular"),
    ];
    for (attr, value, kept) in cases {
        let xml = format!(r#"<flame name="f" {attr}="{value}">{x}</flame>"#);
        let p = ok(&xml);
        let f = &p.flames[0];
        let d = Flame::default();
        assert_eq!(
            (f.filter_shape, f.palette_mode, f.interpolation, f.affine_interpolation),
            (d.filter_shape, d.palette_mode, d.interpolation, d.affine_interpolation),
            "{xml}"
        );
        assert_eq!((f.temporal_filter, f.palette_interpolation), (d.temporal_filter, d.palette_interpolation));
        assert_eq!(p.warnings.len(), 1, "{xml}: {:?}", p.warnings);
        let w = &p.warnings[0];
        assert!(w.contains(&format!("flame 'f': attribute '{attr}': unknown value \"{value}\"")), "{w}");
        assert!(w.contains(kept) && !w.contains('\n'), "{w}");
        let e = err_with(&xml, &strict_opts());
        assert!(e.contains(&format!("attribute '{attr}': unknown value \"{value}\"")), "{e}");
    }
    // A known keyword still sets its field, with no warning.
    let p = ok(&format!(r#"<flame name="f" filter_shape="mitchell" palette_mode="linear">{x}</flame>"#));
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    assert_eq!(p.flames[0].filter_shape, FilterShape::Mitchell);
    assert_eq!(p.flames[0].palette_mode, PaletteMode::Linear);
}

#[test]
fn error_classes() {
    let x = r#"<xform weight="1" linear="1"/>"#;
    let cases: Vec<(String, &str)> = vec![
        ("<flame time=\"0\"><xform".into(), "t.flam3: malformed XML: "),
        ("".into(), "t.flam3: malformed XML: "),
        (format!(r#"<flame name="f" size="800">{x}</flame>"#), "flame 'f': attribute 'size': expected 2 integers"),
        (format!(r#"<flame name="f" size="800 0">{x}</flame>"#), "attribute 'size': 0 is out of range"),
        (format!(r#"<flame name="f" size="800.5 600">{x}</flame>"#), "attribute 'size': \"800.5\" is not an integer"),
        (format!(r#"<flame name="f" scale="nan">{x}</flame>"#), "attribute 'scale': \"nan\" is not a finite number"),
        (format!(r#"<flame name="f" gamma="inf">{x}</flame>"#), "attribute 'gamma': \"inf\" is not a finite number"),
        (format!(r#"<flame name="f" brightness="1e400">{x}</flame>"#), "not a finite number"),
        (format!(r#"<flame name="f" brightness="">{x}</flame>"#), "attribute 'brightness': empty value"),
        (format!(r#"<flame name="f" quality="2x">{x}</flame>"#), "attribute 'quality': \"2x\" is not a number"),
        (format!(r#"<flame name="f" center="1 2 3">{x}</flame>"#), "attribute 'center': expected 2 numbers, found 3"),
        (format!(r#"<flame name="f" background="0 0">{x}</flame>"#), "attribute 'background': expected 3 numbers"),
        (format!(r#"<flame name="f" supersample="0">{x}</flame>"#), "attribute 'supersample': 0 is out of range"),
        (format!(r#"<flame name="f" passes="-1">{x}</flame>"#), "attribute 'passes': -1 is out of range"),
        (
            r#"<flame name="f"><xform weight="-1" linear="1"/></flame>"#.into(),
            "flame 'f': xform 0: attribute 'weight': negative weight -1",
        ),
        (
            r#"<flame name="f"><xform weight="1" coefs="1 0 0 1 0"/></flame>"#.into(),
            "xform 0: attribute 'coefs': expected 6 numbers, found 5",
        ),
        (
            r#"<flame name="f"><xform weight="1" post="1 0 0 1 0 0 0"/></flame>"#.into(),
            "attribute 'post': expected 6 numbers, found 7",
        ),
        (
            r#"<flame name="f"><xform weight="1" coefs="1 0 0 1 0 nan"/></flame>"#.into(),
            "attribute 'coefs': \"nan\" is not a finite number",
        ),
        (
            r#"<flame name="f"><xform weight="1" linear="abc"/></flame>"#.into(),
            "xform 0: attribute 'linear': \"abc\" is not a number",
        ),
        (
            r#"<flame name="f"><xform weight="1" julian="1" julian_power="x"/></flame>"#.into(),
            "attribute 'julian_power': \"x\" is not a number",
        ),
        (
            r#"<flame name="f"><xform weight="1" color="1 2 3"/></flame>"#.into(),
            "attribute 'color': expected 1 or 2 numbers, found 3",
        ),
        (
            r#"<flame name="f"><xform weight="1" color=""/></flame>"#.into(),
            "attribute 'color': expected 1 or 2 numbers, found 0",
        ),
        (r#"<flame name="f"><xform/></flame>"#.into(), "flame 'f': xform 0: the element has no attributes"),
        (
            r#"<flame name="f"><xform weight="1" linear="1"/><xform weight="1" Linear="1"/></flame>"#.into(),
            "xform 1: attribute 'Linear': unknown variation",
        ),
        (
            r#"<flame name="f"><finalxform weight="1" linear="1"/></flame>"#.into(),
            "finalxform: attribute 'weight': a final xform takes no weight",
        ),
        (
            r#"<flame name="f"><finalxform linear="1"/><finalxform linear="1"/></flame>"#.into(),
            "more than one <finalxform>",
        ),
        (
            r#"<flame name="f"><finalxform color_speed="-0.5" linear="1"/><symmetry kind="-4"/></flame>"#.into(),
            "a <symmetry> after a <finalxform> whose color_speed is not above 0",
        ),
        (r#"<flame name="f"><symmetry/></flame>"#.into(), "<symmetry>: no attributes"),
        (format!(r#"<flame name="f">{}</flame>"#, r#"<symmetry kind="1000"/>"#.repeat(11)), "more than 10000 xforms"),
    ];
    for (xml, want) in &cases {
        let e = err_with(xml, &strict_opts());
        assert!(e.contains(want), "{xml}\n  gave: {e}\n  want: {want}");
        // Only an unknown attribute is read past by default.
        if !want.contains("unknown variation") {
            let e = err(xml);
            assert!(e.contains(want), "{xml}\n  gave: {e}\n  want: {want}");
        }
    }
}

#[test]
fn whitespace_around_numbers_is_accepted() {
    let f = one(r#"<flame time=" 1 " size=" 10  20 " center="
        1 2"><xform weight=" 0.5" coefs=" 1 0
        0 1 0 0 " linear="1 "/></flame>"#);
    assert_eq!((f.time, f.width, f.height), (1.0, 10, 20));
    assert_eq!(f.center, [1.0, 2.0]);
    assert_eq!(f.xforms[0].weight, 0.5);
}

// ---------------------------------------------------------------- no panics

/// Snippets that tend to reach unusual paths when spliced into a genome.
const SNIPPETS: &[&str] = &[
    "<",
    ">",
    "\"",
    "/>",
    "</flame>",
    "<flame>",
    "<xform ",
    "<finalxform ",
    "<symmetry kind=\"-7\"/>",
    "<symmetry kind=\"1000\"/>",
    " chaos=\"0 0 -0 2\"",
    " palette=\"3\"",
    " hue=\"1e308\"",
    " rotate=\"1e300\"",
    " var1=\"98\"",
    " weight=\"1e-320\"",
    "nan",
    "-1",
    "1e999",
    "&amp;",
    "&#0;",
    "<![CDATA[x]]>",
    "<color index=\"255\" rgba=\"1 2 3 4\"/>",
    "<colors count=\"256\" data=\"00\"/>",
    "<palette index0=\"1\" index1=\"2\" blend=\"0.3\"/>",
    "<palette count=\"1\" format=\"RGBA\">00</palette>",
    " soloxform=\"1e300\"",
    "<motion weight=\"1\"/>",
    " super_shape_rnd=\"-3\"",
    " Re_A=\"2\"",
    " var=\"1\"",
    "\u{feff}",
    "é",
    " size=\"4294967296 1\"",
    "<edit/>",
    "<flames>",
    " crackle=\"1\"",
    " hypertile1=\"1\"",
];

fn seed_texts() -> Vec<String> {
    let mut v: Vec<String> =
        ["test.flam3", "electricsheep.244.80692.flam3", "fractorium-bench-tyrantwave_flippeddisc_normal.flame"]
            .iter()
            .map(|n| std::fs::read_to_string(genome(n)).unwrap())
            .collect();
    v.push(
        r#"<flames><flame name="s" palette="5" hue="0.3"><xform weight="1" linear="1" chaos="0 1"/>
        <symmetry kind="-3"/><xform weight="2" julian="1" julian_power="3" color="0.2 0.4" symmetry="0.5"/>
        <finalxform linear="1"/><color index="3" rgb="1 2 3"/></flame></flames>"#
            .to_string(),
    );
    v
}

fn fuzz_opts() -> Vec<ParseOptions> {
    // The palette file when there is one (loaded once, then cached), and a
    // missing one otherwise.
    let file = PaletteLibrary::locate(shared_palettes()).ok().map(|l| l.path().to_path_buf());
    vec![ParseOptions { strict: true, palette_file: file.clone() }, ParseOptions { strict: false, palette_file: file }]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// Random text: an error or a result, never a panic.
    #[test]
    fn random_text_does_not_panic(s in "\\PC{0,300}") {
        for o in fuzz_opts() {
            let _ = parse_str(&s, "fuzz", &o);
        }
    }

    /// Random markup-like text built from genome pieces.
    #[test]
    fn random_markup_does_not_panic(parts in proptest::collection::vec(0..SNIPPETS.len(), 0..40),
                                    wrap in any::<bool>()) {
        let body: String = parts.iter().map(|&i| SNIPPETS[i]).collect();
        let xml = if wrap { format!("<flame name=\"z\">{body}</flame>") } else { body };
        for o in fuzz_opts() {
            let _ = parse_str(&xml, "fuzz", &o);
        }
    }

    /// Real genomes with pieces cut out, replaced and inserted.
    #[test]
    fn mutated_genomes_do_not_panic(which in 0usize..4,
                                    edits in proptest::collection::vec((any::<u32>(), 0usize..40, 0..SNIPPETS.len() + 1), 1..6)) {
        let mut text = seed_texts()[which].clone();
        for (at, cut, snip) in edits {
            let mut i = at as usize % (text.len() + 1);
            while !text.is_char_boundary(i) {
                i -= 1;
            }
            let mut j = (i + cut).min(text.len());
            while !text.is_char_boundary(j) {
                j += 1;
            }
            let ins = if snip < SNIPPETS.len() { SNIPPETS[snip] } else { "" };
            text.replace_range(i..j, ins);
        }
        for o in fuzz_opts() {
            let _ = parse_str(&text, "fuzz", &o);
        }
    }
}

#[test]
fn attribute_values_swapped_do_not_panic() {
    // Every attribute value of the seed genomes replaced in turn by awkward
    // values.
    let awkward = ["", "nan", "-inf", "1e400", "-1", "0", "300", "1 2 3 4 5 6 7", "x", "-0", "4294967296", "0.5 0.5"];
    let o = fuzz_opts();
    for text in seed_texts() {
        let mut starts = Vec::new();
        let b = text.as_bytes();
        for i in 1..b.len() {
            if b[i - 1] == b'=' && b[i] == b'"' {
                starts.push(i + 1);
            }
        }
        for &s in starts.iter().step_by(3) {
            let Some(len) = text[s..].find('"') else { continue };
            for v in awkward {
                let mut t = text.clone();
                t.replace_range(s..s + len, v);
                for opt in &o {
                    let _ = parse_str(&t, "fuzz", opt);
                }
            }
        }
    }
}

#[test]
fn fractorium_curves_are_read_as_fractorium_reads_them() {
    let flame = |attrs: &str| format!(r#"<flame name="c" {attrs}><xform weight="1" linear="1"/></flame>"#);
    // The per-channel form; the others keep the default.
    let f = one(&flame(r#"red_curve="0 0 0.3 0.6 1 1" overall_curve="1 1 0 0 0.5 0.4""#));
    let c = f.curves.expect("set");
    assert_eq!(c.points[0], vec![[0.0, 0.0], [0.5, 0.4], [1.0, 1.0]], "sorted by x");
    assert_eq!(c.points[1], vec![[0.0, 0.0], [0.3, 0.6], [1.0, 1.0]]);
    assert_eq!(c.points[2], Curves::DEFAULT.to_vec());
    // Two points on y = x are not Fractorium's default five: set (and the
    // identity when applied).
    let f = one(&flame(r#"blue_curve="0 0 1 1""#));
    assert_eq!(f.curves.expect("set").points[3], vec![[0.0, 0.0], [1.0, 1.0]]);
    // Coordinates clamped to [0, 1].
    let f = one(&flame(r#"green_curve="-1 0.2 2 3""#));
    assert_eq!(f.curves.unwrap().points[2], vec![[0.0, 0.2], [1.0, 1.0]]);
    // A later attribute replaces an earlier one (Fractorium writes the older
    // `curves` first, then the per-channel ones).
    let older = "0 0 1 0.2 0.6 1 0.5 0.5 1 1 1 1 ".repeat(4);
    let f = one(&flame(&format!(r#"curves="{older}" red_curve="0 0 0.4 0.5 1 1""#)));
    let c = f.curves.unwrap();
    assert_eq!(c.points[1], vec![[0.0, 0.0], [0.4, 0.5], [1.0, 1.0]]);
    assert_eq!(c.points[0], vec![[0.0, 0.0], [0.2, 0.6], [0.5, 0.5], [1.0, 1.0]]);
    // The older form: 4 curves of 4 (x, y, weight) points, with
    // Fractorium's fix-ups of doubled end points: (0,0),(0,0),(1,1),(1,1)
    // becomes (0,0),(¼,¼),(¾,¾),(1,1), the line y = x.
    let doubled = "0 0 1 0 0 1 1 1 1 1 1 1 ".repeat(4);
    let f = one(&flame(&format!(r#"curves="{doubled}""#)));
    let c = f.curves.expect("four points are not Fractorium's default five");
    assert_eq!(c.points[3], vec![[0.0, 0.0], [0.25, 0.25], [0.75, 0.75], [1.0, 1.0]]);
    // Only the defaults: no curves.
    let five = "0 0 0.25 0.25 0.5 0.5 0.75 0.75 1 1";
    let f = one(&flame(&format!(r#"overall_curve="{five}" red_curve="{five}""#)));
    assert!(f.curves.is_none());
    for (attrs, want) in [
        (r#"red_curve="0 0 1""#, "expected points of 2 numbers, found 3"),
        (r#"red_curve="0.5 0.5""#, "at least two points with different x"),
        (r#"red_curve="0.5 0.1 0.5 0.9""#, "at least two points with different x"),
        (r#"red_curve="0 x 1 1""#, "is not a number"),
        (r#"curves="0 0 1 1 1 1""#, "expected 48 numbers"),
    ] {
        // Left out with a warning (that curve keeps its default), as
        // Fractorium renders past it; --strict refuses it.
        let p = ok(&flame(attrs));
        assert!(p.flames[0].curves.is_none(), "{attrs}");
        assert_eq!(p.warnings.len(), 1, "{attrs}: {:?}", p.warnings);
        assert!(p.warnings[0].contains(want) && p.warnings[0].contains("ignored"), "{attrs}: {:?}", p.warnings);
        let e = err_with(&flame(attrs), &strict_opts());
        assert!(e.contains(want), "{attrs}: {e}");
    }
}

#[test]
fn a_negative_opacity_is_kept_with_a_warning_and_refused_when_strict() {
    let xml = r#"<flame size="8 8"><xform weight="1" color="0" linear="1" coefs="1 0 0 1 0 0" opacity="-0.5"/><color index="0" rgb="255 0 0"/></flame>"#;
    let p = ok(xml);
    assert_eq!(p.flames[0].xforms[0].opacity, -0.5, "kept as written, for the genome tools");
    assert!(p.warnings.iter().any(|w| w.contains("opacity -0.5 is negative")), "{:?}", p.warnings);
    let e = parse_str(xml, "t.flam3", &strict_opts()).unwrap_err().to_string();
    assert!(e.contains("opacity -0.5 is negative"), "{e}");
}

/// Fractorium's 3-D camera, set, is drawn flat: listed as dropped with a
/// warning, and the error under strict reading; at zero it means nothing.
#[test]
fn a_set_3d_camera_is_dropped_and_strict_refuses_it() {
    let xml = |attrs: &str| {
        format!(
            r#"<flame size="16 16" scale="8" {attrs}><xform weight="1" coefs="0.5 0 0 0.5 0 0" linear="1"/></flame>"#
        )
    };
    let flat = parse_str(&xml(r#"cam_pitch="0" cam_zpos="0""#), "t.flame", &strict_opts()).unwrap();
    assert!(flat.skipped.is_empty() && flat.warnings.is_empty(), "{:?}", flat.warnings);
    let tilted = parse_str(&xml(r#"cam_pitch="0.8" cam_persp="0.3""#), "t.flame", &opts()).unwrap();
    assert_eq!(tilted.skipped, ["cam_pitch", "cam_persp"]);
    assert_eq!(tilted.skipped_by_flame, vec![vec!["cam_pitch".to_string(), "cam_persp".to_string()]]);
    assert_eq!(tilted.warnings.iter().filter(|w| w.contains("3-D camera")).count(), 2, "{:?}", tilted.warnings);
    assert!(tilted.warnings.iter().all(|w| !w.contains("flame attributes")), "{:?}", tilted.warnings);
    let e = parse_str(&xml(r#"cam_yaw="0.1""#), "t.flame", &strict_opts()).unwrap_err().to_string();
    assert!(e.contains("cam_yaw") && e.contains("3-D camera") && !e.contains('\n'), "{e}");
}

#[test]
fn attributes_read_silently_that_a_written_genome_lacks_are_listed() {
    let p = ok(
        r#"<flame version="Fractorium 23" plugins="linear" new_linear="1" cam_zpos="0" size="8 8" scale="1" nick="me">
  <xform weight="1" name="spiral arm" var_color="1" linear="1" waves2_freqz="2" auger_half_scale="0.5" coefs="1 0 0 1 0 0"/>
</flame>"#,
    );
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    assert_eq!(p.not_written, ["plugins", "new_linear", "cam_zpos", "nick", "name", "var_color", "waves2_freqz"]);
    // A file of flam3's own attributes loses nothing.
    let plain = ok(
        r#"<flame version="flam3 3.1.1" size="8 8" scale="1"><xform weight="1" linear="1" coefs="1 0 0 1 0 0"/></flame>"#,
    );
    assert!(plain.not_written.is_empty(), "{:?}", plain.not_written);
}

/// Fractorium applies an xform's ordinary variations in the file's order,
/// which matters for circlecrop and mirror_x (they replace the sum of
/// those before them): such an xform keeps the file's order; any other
/// keeps flam3's index order, whatever the file's.
#[test]
fn variations_keep_the_file_order_where_circlecrop_or_mirror_x_make_it_matter() {
    let names = |xml: &str| -> Vec<Vec<&'static str>> {
        ok(xml).flames[0].xforms.iter().map(|x| x.variations.iter().map(|v| v.kind.name()).collect()).collect()
    };
    let xml = r#"<flame size="8 8">
      <xform weight="1" circlecrop="1" linear="0.5" coefs="1 0 0 1 0 0"/>
      <xform weight="1" spherical="0.3" mirror_x="1" linear="0.5" coefs="1 0 0 1 0 0"/>
      <xform weight="1" spherical="0.3" linear="0.5" coefs="1 0 0 1 0 0"/>
      <xform weight="1" mirror_x="0" spherical="0.3" linear="0.5" coefs="1 0 0 1 0 0"/>
      <color index="0" rgb="255 0 0"/></flame>"#;
    assert_eq!(
        names(xml),
        [
            vec!["circlecrop", "linear"],
            vec!["spherical", "mirror_x", "linear"],
            vec!["linear", "spherical"],
            vec!["linear", "spherical"]
        ]
    );
    // Written and read again, the order stays.
    let f = ok(xml).flames.remove(0);
    let written = warpmc_flame::genome::write_flame(&f);
    assert_eq!(names(&written)[..2], names(xml)[..2]);
}

/// An xform with no variation: flam3 sends its points to the origin, as
/// Fractorium has since 1.0.0.7; Fractorium before it passed them through
/// the affine map, and a genome it wrote (version="EMBER-WIN-1.0.0.6") is
/// read with a linear of weight 1, which does the same.
#[test]
fn an_xform_without_variations_passes_through_in_an_early_fractorium_genome() {
    let xml = |version: &str| {
        format!(
            r#"<flame size="8 8" {version}>
      <xform weight="1" coefs="0.5 0 0 0.5 0 0"/>
      <xform weight="1" linear="0" coefs="0.5 0 0 0.5 0.5 0"/>
      <xform weight="1" spherical="1" coefs="0.5 0 0 0.5 0 0.5"/>
      <xform weight="1" post_exponential="0.5" coefs="0.5 0 0 0.5 0 0.5"/>
      <finalxform coefs="1 0 0 1 0 0"/>
      <color index="0" rgb="255 0 0"/></flame>"#
        )
    };
    let counts = |xml: &str| -> Vec<Vec<(&'static str, f64)>> {
        let f = ok(xml).flames.remove(0);
        f.xforms
            .iter()
            .chain(f.final_xform.as_ref())
            .map(|x| x.variations.iter().map(|v| (v.kind.name(), v.weight)).collect())
            .collect()
    };
    let empty: Vec<(&str, f64)> = Vec::new();
    let post = vec![("post_exponential", 0.5)];
    assert_eq!(counts(&xml("")), [empty.clone(), empty.clone(), vec![("spherical", 1.0)], post.clone(), empty.clone()]);
    assert_eq!(counts(&xml(r#"version="flam3-3.1.1""#)), counts(&xml("")));
    // Only post_ forms: that Fractorium gave them the affine map's point.
    let linear = vec![("linear", 1.0)];
    let linear_then_post = vec![("linear", 1.0), ("post_exponential", 0.5)];
    let early_versions = [
        "EMBER-WIN-1.0.0.6",
        "EMBER-0.4.1.3",
        "ember-lnx-1.0.0.2",
        "EMBER-WIN-1.0.0.6 beta",
        "Fractorium EMBER 1.0.0.6a",
    ];
    for early in early_versions {
        assert_eq!(
            counts(&xml(&format!(r#"version="{early}""#))),
            [linear.clone(), linear.clone(), vec![("spherical", 1.0)], linear_then_post.clone(), linear.clone()],
            "{early}"
        );
    }
    for later in
        ["EMBER-WIN-1.0.0.7", "EMBER-LNX-23.23.8.101", "EMBER-1.0.0.19", "EMBER", "EMBER-WIN-x", "EMBER 1.0.0.10"]
    {
        assert_eq!(counts(&xml(&format!(r#"version="{later}""#))), counts(&xml("")), "{later}");
    }
}

/// pre_blur alone: Fractorium counts it among the pre_ forms, which pass
/// the point on (a linear of weight 1 does that); flam3 among the ordinary
/// variations, which add nothing (the origin).
#[test]
fn pre_blur_alone_passes_the_point_on_in_a_fractorium_genome() {
    let names = |version: &str| -> Vec<(&'static str, f64)> {
        let xml = format!(
            r#"<flame size="8 8" {version}><xform weight="1" pre_blur="0.3" coefs="0.5 0 0 0.5 0 0"/>
               <xform weight="1" pre_blur="0.3" spherical="1" coefs="0.5 0 0 0.5 0 0"/></flame>"#
        );
        let f = ok(&xml).flames.remove(0);
        f.xforms[0].variations.iter().chain(&f.xforms[1].variations).map(|v| (v.kind.name(), v.weight)).collect()
    };
    let blur_only = vec![("pre_blur", 0.3), ("spherical", 1.0), ("pre_blur", 0.3)];
    assert_eq!(names(""), blur_only);
    assert_eq!(names(r#"version="flam3-3.1.1""#), blur_only);
    let passed_on = vec![("linear", 1.0), ("pre_blur", 0.3), ("spherical", 1.0), ("pre_blur", 0.3)];
    for version in ["EMBER-WIN-1.0.0.6", "EMBER-LNX-23.23.8.101"] {
        assert_eq!(names(&format!(r#"version="{version}""#)), passed_on, "{version}");
    }
}

/// Apophysis's names for Fractorium's bwraps, smartshape and
/// post_smartcrop are read as Fractorium reads them in files it did not
/// write; in Fractorium's own files they stay unknown names.
#[test]
fn apophysis_plugin_names_are_read_as_fractoriums() {
    let xml = |version: &str, names: [&str; 3]| {
        let [bwraps, sshape, scrop] = names;
        format!(
            r#"<flame size="8 8" {version}>
      <xform weight="1" {bwraps}="0.7" {bwraps}_cellsize="0.4" {bwraps}_gain="1.5" linear="0.2" coefs="1 0 0 1 0 0"/>
      <xform weight="1" {sshape}="1" {sshape}_power="3" {scrop}="1" {scrop}_radius="0.8" coefs="0.5 0 0 0.5 0 0"/>
      <color index="0" rgb="255 0 0"/></flame>"#
        )
    };
    let fractorium = ok(&xml("", ["bwraps", "smartshape", "post_smartcrop"])).flames.remove(0);
    for names in [["bwraps7", "sshape", "post_scrop"], ["BWraps2", "SShape", "Post_Scrop"]] {
        let apophysis = ok(&xml(r#"version="Apophysis 7X""#, names)).flames.remove(0);
        assert_eq!(apophysis.xforms, fractorium.xforms, "{names:?}");
    }
    // Fractorium renames a variation only where one of its parameters
    // follows it, and keeps the first of two that become one.
    let renamed = |attrs: &str| -> Vec<(&'static str, f64, Vec<f64>)> {
        let xml = format!(r#"<flame size="8 8"><xform weight="1" {attrs} coefs="1 0 0 1 0 0"/></flame>"#);
        let f = ok(&xml).flames.remove(0);
        f.xforms[0].variations.iter().map(|v| (v.kind.name(), v.weight, v.params.clone())).collect()
    };
    let bwraps_with = |w: f64, cellsize: f64| ("bwraps", w, vec![cellsize, 0.0, 1.0, 0.0, 0.0]);
    assert_eq!(renamed(r#"bwraps7_cellsize="0.5" linear="1""#), [("linear", 1.0, vec![])]);
    assert_eq!(renamed(r#"bwraps7_cellsize="0.5" bwraps7="1""#).len(), 0, "bwraps7 stays unknown");
    assert_eq!(renamed(r#"bwraps="1" bwraps7="0.5" bwraps7_cellsize="0.25""#), [bwraps_with(1.0, 0.25)]);
    assert_eq!(renamed(r#"bwraps7="0.5" bwraps7_cellsize="0.25" bwraps="1""#), [bwraps_with(0.5, 0.25)]);
    assert_eq!(renamed(r#"bwraps="0" bwraps7="0.5" bwraps7_cellsize="0.25""#), [bwraps_with(0.5, 0.25)]);
    // radial_gaussian is flam3's radial_blur; the mobius strip plugin's
    // mobius is not flam3's mobius, and is dropped with a warning.
    assert_eq!(renamed(r#"radial_gaussian="0.5" radial_gaussian_angle="0.3""#), [("radial_blur", 0.5, vec![0.3])]);
    let strip =
        r#"<flame size="8 8"><xform weight="1" linear="1" mobius="1" mobius_width="0.3" coefs="1 0 0 1 0 0"/></flame>"#;
    let p = ok(strip);
    assert_eq!(p.flames[0].xforms[0].variations.len(), 1);
    assert_eq!(p.skipped, ["mobius", "mobius_width"]);
    assert!(p.warnings.iter().any(|w| w.contains("'mobius': read as Fractorium's 'mobius_strip'")), "{:?}", p.warnings);
    assert_eq!(renamed(r#"mobius="1" mobius_re_a="0.3""#)[0].0, "mobius");

    let ember = parse_str(
        &xml(r#"version="EMBER-1.0.0.19""#, ["bwraps7", "sshape", "post_scrop"]),
        "e.flame",
        &ParseOptions::default(),
    )
    .unwrap();
    assert!(ember.flames[0].xforms.iter().all(|x| x.variations.iter().all(|v| v.kind.name() == "linear")));
}

/// A genome that Fractorium did not write but that uses its variations:
/// one warning per file that flam3-render drops them; none for Fractorium's
/// own genomes.
#[test]
fn variations_beyond_flam3_in_a_flam3_genome_are_warned_of() {
    let xml = |version: &str| {
        format!(
            r#"<flames><flame size="8 8" {version}>
      <xform weight="1" crackle="0.3" linear="1" coefs="0.5 0 0 0.5 0 0"/>
      <xform weight="1" spherical="1" coefs="0.5 0 0 0.5 0 0.5"/>
      <finalxform pre_crop="1" coefs="1 0 0 1 0 0"/>
      <color index="0" rgb="255 0 0"/></flame>
      <flame size="8 8" {version}><xform weight="1" crackle="1" coefs="1 0 0 1 0 0"/></flame></flames>"#
        )
    };
    let beyond = |xml: &str| -> Vec<String> {
        ok(xml).warnings.into_iter().filter(|w| w.contains("beyond flam3's 99")).collect()
    };
    let w = beyond(&xml(""));
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].contains("(crackle, pre_crop)") && w[0].contains("flam3-render drops them"), "{w:?}");
    assert!(beyond(&xml(r#"version="EMBER-WIN-1.0.0.7""#)).is_empty());
    // flam3's own variations, pre_blur among them, are not.
    let plain = r#"<flame size="8 8"><xform weight="1" pre_blur="0.1" julian="1" coefs="1 0 0 1 0 0"/></flame>"#;
    assert!(beyond(plain).is_empty());
}
