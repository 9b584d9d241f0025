//! Property tests that feed the genome reader and the palette reader
//! hostile input: arbitrary bytes, markup built from genome pieces, and
//! the project's real genomes with bytes and attribute values mutated.
//! Every input must give an error or a value, never a panic; every genome
//! that parses must, shrunk to a tiny frame, either render or be refused
//! with an error. A few thousand cases run with every `cargo test` (about
//! ten seconds); for a deeper run (the test profile keeps overflow checks,
//! which `--release` drops, and builds this crate fully optimised anyway):
//!
//!     PROPTEST_CASES=1000000 cargo test -p warpmc-flame --test fuzz

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use proptest::prelude::*;
use warpmc_flame::Flame;
use warpmc_flame::genome::{ParseOptions, parse_file, parse_str};
use warpmc_flame::palette::PaletteLibrary;
use warpmc_flame::render::{RenderSettings, frame_cost, render};

/// `default` cases, or `$PROPTEST_CASES` when set.
fn cases(default: u32) -> ProptestConfig {
    ProptestConfig { cases: warpmc_testkit::fuzz_cases(default), ..ProptestConfig::default() }
}

/// The real genomes: examples/flames and ../shared/genomes beside the
/// checkout, each text once.
fn seed_genomes() -> &'static [String] {
    static SEEDS: OnceLock<Vec<String>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut texts: Vec<String> = Vec::new();
        for dir in [root.join("examples/flames"), root.join("../shared/genomes")] {
            let Ok(entries) = std::fs::read_dir(&dir) else { continue };
            let mut paths: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
            paths.sort();
            for p in paths {
                if let Ok(t) = std::fs::read_to_string(&p)
                    && !texts.contains(&t)
                {
                    texts.push(t);
                }
            }
        }
        assert!(texts.len() >= 5, "the example genomes are missing");
        texts
    })
}

/// The palette file when there is one, else none (numbered palettes are
/// then an error, which is fine for these tests).
fn options() -> &'static [ParseOptions] {
    static OPTIONS: OnceLock<Vec<ParseOptions>> = OnceLock::new();
    OPTIONS.get_or_init(|| {
        let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/palettes/flam3-palettes.xml");
        let file =
            PaletteLibrary::locate(shared.exists().then_some(shared.as_path())).ok().map(|l| l.path().to_owned());
        vec![
            ParseOptions { strict: false, palette_file: file.clone() },
            ParseOptions { strict: true, palette_file: file },
        ]
    })
}

/// The first palettes of flam3's palette file, or a made-up one: the seed
/// of the palette reader's mutations.
fn seed_palettes() -> &'static str {
    static SEED: OnceLock<String> = OnceLock::new();
    SEED.get_or_init(|| {
        let made_up = format!(
            "<palettes>\n<palette number=\"0\" name=\"grey\" data=\"{}\"/>\n<palette number=\"1\" data=\"{}\"/>\n</palettes>",
            (0..256).map(|i| format!("00{i:02x}{i:02x}{i:02x}")).collect::<String>(),
            "00ff0000".repeat(256)
        );
        let Ok(lib) = PaletteLibrary::locate(None) else { return made_up };
        let Ok(text) = std::fs::read_to_string(lib.path()) else { return made_up };
        // Up to the end of the fourth palette.
        let end = text.match_indices("/>").nth(3).map(|(i, _)| i + 2);
        end.map_or(made_up, |e| format!("{}\n</palettes>", &text[..e]))
    })
}

/// Attribute values that broke, or could break, a reader or a renderer.
const HOSTILE_VALUES: &[&str] = &[
    "",
    "0",
    "-0",
    "1",
    "-1",
    "-2",
    "0.5",
    "1e-320",
    "1e308",
    "-1e308",
    "1e999",
    "nan",
    "inf",
    "-inf",
    "2147483647",
    "4294967295",
    "4294967296",
    "65536",
    "30000 30000",
    "1 1",
    "0 0",
    "8 8 8",
    "x",
    "1 2 3 4 5 6",
    "0 0 0 0 0 0",
    "1e12",
    "40",
    "-40",
    "255",
    "256",
    "-256",
    "00",
    "ff",
];

/// Pieces of genomes for markup built from scratch.
const SNIPPETS: &[&str] = &[
    "<flame ",
    "<flames>",
    "</flames>",
    "</flame>",
    "<xform ",
    "</xform>",
    "<finalxform ",
    "<color ",
    "<colors ",
    "<palette ",
    "</palette>",
    "<symmetry ",
    "<motion ",
    "<edit ",
    "/>",
    ">",
    "\"",
    "'",
    " size=\"8 8\"",
    " size=\"30000 30000\"",
    " quality=\"1\"",
    " quality=\"1e12\"",
    " zoom=\"1e308\"",
    " filter=\"-2\"",
    " filter=\"65536\"",
    " passes=\"4000000000\"",
    " temporal_samples=\"3\"",
    " supersample=\"64\"",
    " estimator_radius=\"1e300\"",
    " estimator_curve=\"0\"",
    " weight=\"1\"",
    " weight=\"-1\"",
    " linear=\"1\"",
    " spherical=\"1\"",
    " julian=\"1\" julian_power=\"0\"",
    " coefs=\"1 0 0 1 0 0\"",
    " chaos=\"0 1e308\"",
    " palette=\"3\"",
    " index=\"255\" rgb=\"1 2 3\"",
    " count=\"2\" data=\"00ff00ff\"",
    " kind=\"-30000\"",
    " number=\"1\" data=\"00\"",
    "<!DOCTYPE f [<!ENTITY e \"<xform/>\">]>",
    "&e;",
    "<!-- x -->",
    "<![CDATA[<]]>",
    "&amp;",
    "&#0;",
    "\u{feff}",
    "é",
];

/// Flame attributes whose values size the render, for targeted edits.
const FLAME_ATTRIBUTES: &[&str] = &[
    "size",
    "quality",
    "zoom",
    "scale",
    "filter",
    "filter_shape",
    "passes",
    "temporal_samples",
    "supersample",
    "estimator_radius",
    "estimator_minimum",
    "estimator_curve",
    "rotate",
    "center",
    "brightness",
    "gamma",
    "gamma_threshold",
    "vibrancy",
    "highlight_power",
    "hue",
    "temporal_filter_width",
    "temporal_filter_exp",
    "temporal_filter_type",
    "palette_mode",
    "interpolation",
    "time",
    "background",
    "palette",
];

/// Values for those attributes: flam3's limits, overflows, degenerate
/// cases and shapes that parse.
const FLAME_VALUES: &[&str] = &[
    "0",
    "-0",
    "1",
    "-1",
    "-2",
    "0.5",
    "3",
    "1e-320",
    "1e308",
    "-1e308",
    "2147483647",
    "4294967295",
    "65536",
    "1e12",
    "40",
    "-40",
    "1023",
    "64",
    "65",
    "1 1",
    "30000 30000",
    "4294967295 1",
    "0 1",
    "8 6",
    "0 0 0",
    "gaussian",
    "box",
    "lanczos3",
    "exp",
    "linear",
    "smooth",
    "step",
];

/// What a strategy of edits does to a text.
#[derive(Clone, Debug)]
enum Edit {
    /// Set an attribute of the n-th `<flame>` to a value.
    Set(usize, usize, usize),
    /// Replace the value of the n-th attribute with a hostile value.
    Value(usize, usize),
    /// Flip one bit of the byte at a position.
    Flip(usize, u8),
    /// Cut a run of bytes.
    Cut(usize, usize),
    /// Insert a snippet.
    Insert(usize, usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        8 => (any::<usize>(), 0..FLAME_ATTRIBUTES.len(), 0..FLAME_VALUES.len()).prop_map(|(f, a, v)| Edit::Set(f, a, v)),
        2 => (any::<usize>(), 0..HOSTILE_VALUES.len()).prop_map(|(a, v)| Edit::Value(a, v)),
        1 => (any::<usize>(), 0u8..8).prop_map(|(p, b)| Edit::Flip(p, b)),
        1 => (any::<usize>(), 0usize..64).prop_map(|(p, n)| Edit::Cut(p, n)),
        1 => (any::<usize>(), 0..SNIPPETS.len()).prop_map(|(p, s)| Edit::Insert(p, s)),
    ]
}

/// `text` with `edits` applied, as bytes (a flipped bit may leave UTF-8).
fn mutate(text: &str, edits: &[Edit]) -> Vec<u8> {
    let mut b = text.as_bytes().to_vec();
    for e in edits {
        let len = b.len();
        match *e {
            Edit::Set(f, a, v) => {
                let flames: Vec<usize> = (0..len).filter(|&i| b[i..].starts_with(b"<flame ")).collect();
                if flames.is_empty() {
                    continue;
                }
                let at = flames[f % flames.len()] + b"<flame".len();
                let tag_end = b[at..].iter().position(|&c| c == b'>').map_or(len, |k| at + k);
                let key = format!(" {}=\"", FLAME_ATTRIBUTES[a]);
                let value = FLAME_VALUES[v].as_bytes();
                match b[at..tag_end].windows(key.len()).position(|w| w == key.as_bytes()) {
                    Some(k) => {
                        let s = at + k + key.len();
                        let end = b[s..].iter().position(|&c| c == b'"').map_or(len, |q| s + q);
                        b.splice(s..end, value.iter().copied());
                    }
                    None => {
                        let attr = format!("{key}{}\"", FLAME_VALUES[v]);
                        b.splice(at..at, attr.bytes());
                    }
                }
            }
            Edit::Value(a, v) => {
                let starts: Vec<usize> =
                    (1..len).filter(|&i| b[i - 1] == b'=' && b[i] == b'"').map(|i| i + 1).collect();
                if starts.is_empty() {
                    continue;
                }
                let s = starts[a % starts.len()];
                let end = b[s..].iter().position(|&c| c == b'"').map_or(len, |k| s + k);
                b.splice(s..end, HOSTILE_VALUES[v].bytes());
            }
            Edit::Flip(p, bit) if len > 0 => b[p % len] ^= 1 << bit,
            Edit::Cut(p, n) if len > 0 => {
                let s = p % len;
                b.drain(s..(s + n).min(len));
            }
            Edit::Insert(p, s) => {
                let at = p % (len + 1);
                b.splice(at..at, SNIPPETS[s].bytes());
            }
            _ => {}
        }
    }
    b
}

/// Parses `bytes` as a file and as a string with every option; whatever
/// parses is costed as it is and rendered shrunk to a tiny frame.
fn parse_and_render(bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    for o in options() {
        if let Ok(parsed) = parse_str(&text, "fuzz", o) {
            render_tiny(parsed.flames);
        }
    }
    // The file reader decodes bytes that are not UTF-8 (Latin-1 when
    // declared) before parsing.
    let path = std::env::temp_dir().join(format!(
        "warpmc-fuzz-{}-{:?}.flam3",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::write(&path, bytes).unwrap();
    let _ = parse_file(&path, &options()[0]);
    let _ = std::fs::remove_file(&path);
}

/// The cost of the flames as they are (nothing is allocated), then a
/// render of them shrunk to at most 12 × 12 pixels, quality 1, 2 passes,
/// when its cost is small: an error is fine, a panic is not.
fn render_tiny(mut flames: Vec<Flame>) {
    if flames.is_empty() {
        return;
    }
    flames.truncate(3);
    let settings = RenderSettings { sub_batch_size: 500, ..RenderSettings::default() };
    let t = flames[0].time;
    let _ = frame_cost(&flames, t, &settings);
    for f in &mut flames {
        f.width = f.width.min(12);
        f.height = f.height.min(12);
        if f.quality > 1.0 {
            f.quality = 1.0;
        }
        f.passes = f.passes.min(2);
    }
    let temporal = RenderSettings { temporal_samples: Some(2), ..settings.clone() };
    for s in [settings, temporal] {
        match frame_cost(&flames, t, &s) {
            Ok(c) if c.host_bytes < 64 << 20 && c.iterations <= 100_000 && c.cells <= 1_000_000 => {
                let _ = render(&flames, t, &s);
                let _ = render(&flames[..1], t, &s);
            }
            _ => {}
        }
    }
}

proptest! {
    #![proptest_config(cases(1000))]

    #[test]
    fn arbitrary_bytes_never_panic_the_genome_reader(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        parse_and_render(&bytes);
    }

    #[test]
    fn markup_from_genome_pieces_never_panics_the_reader_or_the_renderer(
        parts in proptest::collection::vec(0..SNIPPETS.len(), 0..40),
        wrap in any::<bool>(),
    ) {
        let body: String = parts.iter().map(|&i| SNIPPETS[i]).collect();
        let xml = if wrap {
            format!(r#"<flame size="8 6" scale="4" quality="1"><xform weight="1" linear="1"/>{body}</flame>"#)
        } else {
            body
        };
        parse_and_render(xml.as_bytes());
    }

    #[test]
    fn arbitrary_bytes_never_panic_the_palette_reader(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let text = String::from_utf8_lossy(&bytes);
        let _ = PaletteLibrary::from_xml(&text, Path::new("fuzz.xml"));
        let _ = PaletteLibrary::from_xml(&format!("<palettes><palette number=\"1\" data=\"{text}\"/></palettes>"), Path::new("fuzz.xml"));
    }
}

proptest! {
    #![proptest_config(cases(1000))]

    #[test]
    fn mutated_real_genomes_never_panic_the_reader_or_the_renderer(
        which in any::<prop::sample::Index>(),
        edits in proptest::collection::vec(edit(), 1..4),
    ) {
        let seeds = seed_genomes();
        parse_and_render(&mutate(&seeds[which.index(seeds.len())], &edits));
    }

    #[test]
    fn mutated_palette_files_never_panic_the_palette_reader(edits in proptest::collection::vec(edit(), 1..6)) {
        let bytes = mutate(seed_palettes(), &edits);
        if let Ok(lib) = PaletteLibrary::from_xml(&String::from_utf8_lossy(&bytes), Path::new("fuzz.xml")) {
            for n in lib.numbers().take(4).collect::<Vec<_>>() {
                let _ = lib.get(n).map(|p| p.rotate_hue(0.3));
            }
        }
    }
}
