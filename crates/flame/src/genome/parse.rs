//! Reading flam3 XML the way flam3 3.1.1 does (`flam3_parse_xml2`,
//! `parse_flame_element`, `parse_xform_xml`), with clear errors where flam3
//! would print a warning and render something else.
//!
//! What is reproduced from flam3:
//!
//! - every `<flame>` element of the document counts, at any depth (inside
//!   `<flames>`, `<test>`, …), but not one inside another `<flame>`;
//! - flame attributes, xform attributes and palette elements with flam3's
//!   names, defaults and conversions (`hue` taken modulo 1, `symmetry` on an
//!   xform → `color_speed = (1 − symmetry)/2` and `animate = 0` when
//!   `symmetry > 0`, `plotmode="off"` → opacity 0, `var`/`var1`, mobius's
//!   `Re_A`… aliases, `super_shape_rnd` clamped to [0, 1], `soloxform`);
//! - attributes are applied in document order, so a later one overrides an
//!   earlier one (`var1` clears the variations given before it);
//! - an xform with no variation attribute has no variation at all (flam3's
//!   parser clears the default `linear`), so it maps every point to the
//!   origin before its post map;
//! - the default `color` of an xform is its position parity at creation in
//!   flam3's xform array (an xform after the `<finalxform>` is shifted by
//!   one);
//! - `<color>` entries are premultiplied by their alpha, and the alpha is
//!   only kept when `rgba`/`a` is the element's last attribute (flam3 resets
//!   it while reading each attribute); hex palettes are not premultiplied;
//! - palette entries no element set are interpolated from their neighbours
//!   (cyclically), and a flame with no colour at all gets all-zero entries,
//!   alpha included; `palette="n"` replaces everything with library palette
//!   `n` through flam3's HSV round trip with the flame's hue rotation;
//! - `<symmetry kind>` adds flam3's symmetry xforms (rounded to 6 digits,
//!   sorted as flam3 sorts them);
//! - `chaos` rows (entries not given are 1, and rows are kept only up to
//!   their last entry that is not 1; a `chaos` on the final xform is applied
//!   to the row of the standard xform before it, as flam3 does);
//! - after reading: `interpolation="smooth"` on the first and the
//!   second-to-last flame becomes linear, and each flame's `rotate` is moved
//!   by whole turns to within 180° of the previous one's.
//!
//! Where flam3 only warns and renders something else (unknown variations,
//! filter shapes, enumeration values, missing palettes), this reader fails
//! with one line naming the file, the flame, the xform and the attribute.
//! Flame attributes flam3 does not read are ignored with one warning per
//! file (the ones flam3's own tools and Electric Sheep write, `version`,
//! `nick`, `url`, `id` and `gen`, silently). `<motion>` elements are checked
//! and then ignored with a warning: flam3-render and flam3-animate ignore
//! them too (only flam3-genome's loops and sequences use them).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use roxmltree::Node;

use super::{
    Affine, AffineInterpolation, FilterShape, Flame, Interpolation, PaletteInterpolation, PaletteMode, TemporalFilter,
    XForm,
};
use crate::palette::{Palette, PaletteError, PaletteLibrary, hex_byte, hsv_to_rgb, rgb_to_hsv};
use crate::variations::{VARIATION_COUNT, VariationKind, VariationSpec, param_owner};

/// Options for reading genomes.
#[derive(Clone, Debug, Default)]
pub struct ParseOptions {
    /// Render xforms that use variations outside flam3's 99 by dropping those
    /// variations (with a warning) instead of failing.
    pub skip_unknown_variations: bool,
    /// Where flam3-palettes.xml is, for numbered palettes; `None` searches the
    /// usual places (see [`crate::palette::PaletteLibrary::locate`]).
    pub palette_file: Option<PathBuf>,
}

/// The flames of one file and the warnings produced while reading them.
#[derive(Clone, Debug)]
pub struct ParsedGenome {
    /// The `<flame>` elements, in file order.
    pub flames: Vec<Flame>,
    /// Warnings (skipped variations and similar), one line each.
    pub warnings: Vec<String>,
    /// The xform attributes dropped under
    /// [`ParseOptions::skip_unknown_variations`] (variations outside flam3's
    /// 99, their parameters and other attributes flam3 does not know), each
    /// name once, in the order first met. Each also has a warning. Empty
    /// means every variation of the file is one of flam3's.
    pub skipped: Vec<String>,
}

/// Why a genome could not be read: one line naming the file, the flame and
/// the attribute.
#[derive(Clone, Debug, thiserror::Error)]
#[error("{0}")]
pub struct GenomeError(pub String);

/// Reads a genome file.
///
/// The file should be UTF-8; a file that is not, but declares an ISO-8859-1
/// or Windows-1252 encoding (as some Windows editors write), is decoded as
/// Latin-1.
pub fn parse_file(path: &Path, opts: &ParseOptions) -> Result<ParsedGenome, GenomeError> {
    let source = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| GenomeError(format!("{source}: cannot read: {e}")))?;
    let text = decode(&bytes).map_err(|m| GenomeError(format!("{source}: {m}")))?;
    parse_str(&text, &source, opts)
}

/// Reads genome XML from a string; `source` names it in messages.
pub fn parse_str(xml: &str, source: &str, opts: &ParseOptions) -> Result<ParsedGenome, GenomeError> {
    let text = xml.strip_prefix('\u{feff}').unwrap_or(xml);
    let xml_opts = roxmltree::ParsingOptions { allow_dtd: true, ..Default::default() };
    let doc = roxmltree::Document::parse_with_options(text, xml_opts)
        .map_err(|e| GenomeError(format!("{source}: malformed XML: {e}")))?;

    let mut r = Reader {
        source,
        opts,
        warnings: Vec::new(),
        skipped: Vec::new(),
        ignored_attributes: Vec::new(),
        ignored_elements: Vec::new(),
        motion_seen: false,
        library: None,
    };

    // flam3 starts at the root element and descends into everything that is
    // not a <flame>.
    let mut flames = Vec::new();
    let mut stack = vec![doc.root_element()];
    while let Some(node) = stack.pop() {
        if node.is_element() && node.tag_name().name() == "flame" {
            let f = r.read_flame(node, flames.len())?;
            flames.push(f);
            continue;
        }
        let children: Vec<Node<'_, '_>> = node.children().filter(Node::is_element).collect();
        stack.extend(children.into_iter().rev());
    }

    finish_sequence(&mut flames, &mut r.warnings, source);

    if !r.ignored_attributes.is_empty() {
        r.warnings.push(format!(
            "{source}: flame attributes flam3 does not read, ignored: {}",
            r.ignored_attributes.join(", ")
        ));
    }
    if !r.ignored_elements.is_empty() {
        let names: Vec<String> = r.ignored_elements.iter().map(|n| format!("<{n}>")).collect();
        r.warnings.push(format!("{source}: elements flam3 does not read, ignored: {}", names.join(", ")));
    }
    if r.motion_seen {
        r.warnings.push(format!(
            "{source}: <motion> elements ignored (flam3-render and flam3-animate ignore them too; \
             only flam3-genome's loops and sequences use them)"
        ));
    }
    Ok(ParsedGenome { flames, warnings: r.warnings, skipped: r.skipped })
}

/// The text of a file: UTF-8, or Latin-1 when the XML declaration says so.
fn decode(bytes: &[u8]) -> Result<String, String> {
    match std::str::from_utf8(bytes) {
        Ok(s) => Ok(s.to_string()),
        Err(e) => {
            let head: String = bytes.iter().take(200).map(|&b| b as char).collect::<String>().to_ascii_lowercase();
            let decl = head.split("?>").next().unwrap_or("");
            let latin = ["iso-8859-1", "iso8859-1", "latin1", "latin-1", "windows-1252", "cp1252"];
            if decl.starts_with("<?xml") && latin.iter().any(|l| decl.contains(l)) {
                Ok(bytes.iter().map(|&b| b as char).collect())
            } else {
                Err(format!(
                    "not UTF-8 (invalid byte at offset {}) and no ISO-8859-1 encoding declared",
                    e.valid_up_to()
                ))
            }
        }
    }
}

/// What flam3 does to a sequence after reading it: no smooth interpolation
/// on the first and the second-to-last flame, and rotations unwound.
fn finish_sequence(flames: &mut [Flame], warnings: &mut Vec<String>, source: &str) {
    let n = flames.len();
    let mut reset = |i: usize, warnings: &mut Vec<String>| {
        if flames[i].interpolation == Interpolation::Smooth {
            flames[i].interpolation = Interpolation::Linear;
            // With a single flame there is nothing to interpolate: no warning.
            if n >= 2 {
                warnings.push(format!(
                    "{source}: flame {}: interpolation=\"smooth\" cannot be used for the {} segment; using linear, \
                     as flam3 does",
                    flames[i].label(i),
                    if i == 0 { "first" } else { "last" }
                ));
            }
        }
    };
    if n >= 1 {
        reset(0, warnings);
    }
    if n >= 2 {
        reset(n - 2, warnings);
    }
    for i in 1..n {
        let prev = &flames[i - 1];
        if matches!(prev.affine_interpolation, AffineInterpolation::Compat | AffineInterpolation::Older) {
            continue;
        }
        let p = prev.rotate;
        let r = &mut flames[i].rotate;
        // Far-away angles are first brought near in one step (flam3 would
        // loop a very long time); the loops then do exactly flam3's steps.
        if (*r - p).abs() > 360.0 * 1e6 {
            *r = p + (*r - p).rem_euclid(360.0);
        }
        while *r < p - 180.0 {
            *r += 360.0;
        }
        while *r > p + 180.0 {
            *r -= 360.0;
        }
    }
}

/// State of one `parse_str` call.
struct Reader<'a> {
    source: &'a str,
    opts: &'a ParseOptions,
    warnings: Vec<String>,
    skipped: Vec<String>,
    ignored_attributes: Vec<String>,
    ignored_elements: Vec<String>,
    motion_seen: bool,
    /// Loaded when the first numbered palette is needed.
    library: Option<Arc<PaletteLibrary>>,
}

/// The palette file found as [`PaletteLibrary::locate`] finds it, read once
/// per process and path.
fn cached_library(explicit: Option<&Path>) -> Result<Arc<PaletteLibrary>, PaletteError> {
    static CACHE: Mutex<Vec<(PathBuf, Arc<PaletteLibrary>)>> = Mutex::new(Vec::new());
    let candidates = PaletteLibrary::search_path(explicit);
    let Some(path) = candidates.iter().find(|p| p.is_file()) else {
        // Fails, listing the candidates.
        return PaletteLibrary::locate_among(&candidates).map(Arc::new);
    };
    let mut cache = CACHE.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((_, lib)) = cache.iter().find(|(p, _)| p == path) {
        return Ok(Arc::clone(lib));
    }
    let lib = Arc::new(PaletteLibrary::load(path)?);
    cache.push((path.clone(), Arc::clone(&lib)));
    Ok(lib)
}

/// One-line error `{at}: attribute '{name}': {msg}`.
fn attr_err(at: &str, name: &str, msg: impl std::fmt::Display) -> GenomeError {
    GenomeError(format!("{at}: attribute '{name}': {msg}"))
}

/// The value, shortened for messages.
fn shown(v: &str) -> String {
    let mut s: String = v.chars().take(60).collect();
    if s.len() < v.len() {
        s.push('…');
    }
    format!("{s:?}")
}

/// A finite real number (flam3's `flam3_atof`; surrounding white space is
/// allowed).
fn real(v: &str) -> Result<f64, String> {
    let t = v.trim();
    match t.parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(x),
        Ok(_) => Err(format!("{} is not a finite number", shown(v))),
        Err(_) if t.is_empty() => Err("empty value, a number is needed".into()),
        Err(_) => Err(format!("{} is not a number", shown(v))),
    }
}

/// An integer (flam3's `flam3_atoi`).
fn integer(v: &str) -> Result<i64, String> {
    let t = v.trim();
    t.parse::<i64>().map_err(|_| {
        if t.is_empty() {
            "empty value, an integer is needed".into()
        } else {
            format!("{} is not an integer", shown(v))
        }
    })
}

/// Exactly `N` real numbers separated by white space.
fn reals<const N: usize>(v: &str) -> Result<[f64; N], String> {
    let words: Vec<&str> = v.split_whitespace().collect();
    if words.len() != N {
        return Err(format!("expected {N} numbers, found {} in {}", words.len(), shown(v)));
    }
    let mut out = [0.0; N];
    for (o, w) in out.iter_mut().zip(&words) {
        *o = real(w)?;
    }
    Ok(out)
}

/// An integer in `lo..=hi`.
fn int_in(v: &str, lo: i64, hi: i64) -> Result<i64, String> {
    let x = integer(v)?;
    if x < lo || x > hi {
        return Err(format!("{x} is out of range ({lo} to {hi})"));
    }
    Ok(x)
}

/// A keyword among `options` (case-sensitive, as in flam3).
fn keyword<T: Copy>(v: &str, options: &[(&str, T)]) -> Result<T, String> {
    options.iter().find(|(k, _)| *k == v).map(|&(_, t)| t).ok_or_else(|| {
        let names: Vec<&str> = options.iter().map(|(k, _)| *k).collect();
        format!("unknown value {} (flam3 knows {})", shown(v), names.join(", "))
    })
}

/// The most standard xforms a flame may have (real genomes have tens; the
/// limit keeps memory proportional to the input).
const MAX_XFORMS: usize = 10_000;

/// Flame attributes written by flam3's own tools or Electric Sheep that do
/// not affect rendering: ignored silently, as flam3 does.
const SILENT_FLAME_ATTRIBUTES: [&str; 5] = ["version", "nick", "url", "id", "gen"];

/// The palette being assembled from `<color>`, `<colors>` and `<palette>`:
/// entries and whether an element set them (flam3's `index >= 0`).
struct PaletteBuild {
    entries: [[f64; 4]; 256],
    set: [bool; 256],
}

/// flam3's `round6`.
fn round6(x: f64) -> f64 {
    let mut x = x * 1e6;
    if x < 0.0 {
        x -= 1.0;
    }
    1e-6 * (x + 0.5).trunc()
}

impl Reader<'_> {
    fn library(&mut self, at: &str, attr: &str) -> Result<&PaletteLibrary, GenomeError> {
        if self.library.is_none() {
            let lib = cached_library(self.opts.palette_file.as_deref())
                .map_err(|e| attr_err(at, attr, format!("a numbered palette needs the palette file: {e}")))?;
            self.library = Some(lib);
        }
        Ok(self.library.as_deref().expect("just loaded"))
    }

    /// flam3's `flam3_get_palette(n, hue)`: library palette `n` through the
    /// HSV round trip with the hue rotated by `hue` turns.
    fn numbered_palette(&mut self, at: &str, attr: &str, n: i64, hue: f64) -> Result<Palette, GenomeError> {
        let lib = self.library(at, attr)?;
        match lib.get(n) {
            Some(p) => Ok(p.rotate_hue(hue)),
            None => {
                let (lo, hi) = lib.numbers().fold((i64::MAX, i64::MIN), |(lo, hi), k| (lo.min(k), hi.max(k)));
                let range = if lib.is_empty() { "it has none".to_string() } else { format!("numbers {lo} to {hi}") };
                Err(attr_err(at, attr, format!("no palette {n} in {} ({range})", lib.path().display())))
            }
        }
    }

    fn read_flame(&mut self, node: Node<'_, '_>, index: usize) -> Result<Flame, GenomeError> {
        let label = match node.attribute("name") {
            Some(n) => format!("'{n}'"),
            None => format!("#{index}"),
        };
        let at = format!("{}: flame {label}", self.source);
        if node.attributes().len() == 0 {
            return Err(GenomeError(format!("{at}: the <flame> element has no attributes")));
        }

        let mut f = Flame::default();
        let mut palette_number: i64 = -1;
        let mut solo: Option<f64> = None;
        for a in node.attributes() {
            let (name, v) = (a.name(), a.value());
            let e = |m: String| attr_err(&at, name, m);
            match name {
                "time" => f.time = real(v).map_err(e)?,
                "hsv_rgb_palette_blend" => f.hsv_rgb_palette_blend = real(v).map_err(e)?,
                "interpolation" => {
                    f.interpolation =
                        keyword(v, &[("linear", Interpolation::Linear), ("smooth", Interpolation::Smooth)])
                            .map_err(e)?
                }
                "palette_interpolation" => {
                    f.palette_interpolation = keyword(
                        v,
                        &[
                            ("hsv", PaletteInterpolation::Hsv),
                            ("sweep", PaletteInterpolation::Sweep),
                            ("hsv_circular", PaletteInterpolation::HsvCircular),
                            ("rgb", PaletteInterpolation::Rgb),
                        ],
                    )
                    .map_err(e)?
                }
                "interpolation_space" | "interpolation_type" => {
                    f.affine_interpolation = keyword(
                        v,
                        &[
                            ("linear", AffineInterpolation::Linear),
                            ("log", AffineInterpolation::Log),
                            ("old", AffineInterpolation::Compat),
                            ("older", AffineInterpolation::Older),
                        ],
                    )
                    .map_err(e)?
                }
                "name" => f.name = Some(v.to_string()),
                "palette" => palette_number = integer(v).map_err(e)?,
                "size" => {
                    let words: Vec<&str> = v.split_whitespace().collect();
                    if words.len() != 2 {
                        return Err(e(format!(
                            "expected 2 integers (width height), found {} in {}",
                            words.len(),
                            shown(v)
                        )));
                    }
                    f.width = int_in(words[0], 1, i64::from(u32::MAX)).map_err(e)? as u32;
                    f.height = int_in(words[1], 1, i64::from(u32::MAX)).map_err(e)? as u32;
                }
                "center" => f.center = reals::<2>(v).map_err(e)?,
                "scale" => f.scale = real(v).map_err(e)?,
                "rotate" => f.rotate = real(v).map_err(e)?,
                "zoom" => f.zoom = real(v).map_err(e)?,
                "oversample" | "supersample" => f.supersample = int_in(v, 1, 1 << 16).map_err(e)? as u32,
                "filter" => f.filter_radius = real(v).map_err(e)?,
                "filter_shape" => {
                    f.filter_shape = FilterShape::ALL.into_iter().find(|s| s.name() == v).ok_or_else(|| {
                        let names: Vec<&str> = FilterShape::ALL.iter().map(|s| s.name()).collect();
                        e(format!("unknown filter shape {} (flam3 knows {})", shown(v), names.join(", ")))
                    })?
                }
                "temporal_filter_type" => {
                    f.temporal_filter = keyword(
                        v,
                        &[
                            ("box", TemporalFilter::Box),
                            ("gaussian", TemporalFilter::Gaussian),
                            ("exp", TemporalFilter::Exp),
                        ],
                    )
                    .map_err(e)?
                }
                "temporal_filter_width" => f.temporal_filter_width = real(v).map_err(e)?,
                "temporal_filter_exp" => f.temporal_filter_exp = real(v).map_err(e)?,
                "palette_mode" => {
                    f.palette_mode =
                        keyword(v, &[("step", PaletteMode::Step), ("linear", PaletteMode::Linear)]).map_err(e)?
                }
                "quality" => f.quality = real(v).map_err(e)?,
                "passes" => f.passes = int_in(v, 1, i64::from(u32::MAX)).map_err(e)? as u32,
                "temporal_samples" => f.temporal_samples = int_in(v, 0, i64::from(u32::MAX)).map_err(e)? as u32,
                "background" => f.background = reals::<3>(v).map_err(e)?,
                "brightness" => f.brightness = real(v).map_err(e)?,
                "gamma" => f.gamma = real(v).map_err(e)?,
                "highlight_power" => f.highlight_power = real(v).map_err(e)?,
                "vibrancy" => f.vibrancy = real(v).map_err(e)?,
                // C's fmod: the sign of the value is kept.
                "hue" => f.hue_rotation = real(v).map_err(e)? % 1.0,
                "estimator_radius" => f.estimator_radius = real(v).map_err(e)?,
                "estimator_minimum" => f.estimator_minimum = real(v).map_err(e)?,
                "estimator_curve" => f.estimator_curve = real(v).map_err(e)?,
                "gamma_threshold" => f.gamma_threshold = real(v).map_err(e)?,
                "soloxform" => solo = Some(real(v).map_err(e)?),
                _ if SILENT_FLAME_ATTRIBUTES.contains(&name) => {}
                // Everything else, `contrast` included (flam3 3.1.1 no
                // longer reads it), is ignored with one warning per file.
                _ => {
                    if !self.ignored_attributes.iter().any(|n| n == name) {
                        self.ignored_attributes.push(name.to_string());
                    }
                }
            }
        }

        // Children: palette elements, xforms, symmetry; <edit> is skipped.
        let mut pal = PaletteBuild { entries: [[0.0; 4]; 256], set: [false; 256] };
        let mut xforms: Vec<XForm> = Vec::new();
        let mut final_xform: Option<XForm> = None;
        // flam3's `num_std_xforms`: the index of the last standard xform, −1
        // before the first. Chaos rows are filed under it.
        let mut num_std: i64 = -1;
        let mut xaos: Vec<(i64, usize, f64, bool)> = Vec::new();
        for child in node.children().filter(Node::is_element) {
            match child.tag_name().name() {
                "color" => self.read_color(child, &at, &mut pal)?,
                "colors" => self.read_colors(child, &at, &mut pal)?,
                "palette" => self.read_palette_element(child, &at, &mut pal)?,
                "symmetry" => {
                    let added = self.read_symmetry(child, &at, &mut xforms, final_xform.is_some())?;
                    num_std += added as i64;
                }
                "xform" => {
                    if xforms.len() >= MAX_XFORMS {
                        return Err(GenomeError(format!("{at}: more than {MAX_XFORMS} xforms (not supported)")));
                    }
                    // flam3 initialises a new xform at the end of its array
                    // (after the final xform, if any) and then moves it before
                    // the final one: the default colour follows the first
                    // position.
                    let created_at = xforms.len() + usize::from(final_xform.is_some());
                    num_std += 1;
                    let xat = format!("{at}: xform {}", xforms.len());
                    let (xf, chaos) = self.read_xform(child, &xat, created_at, false)?;
                    if let Some(row) = chaos {
                        xaos.extend(row.into_iter().enumerate().map(|(to, s)| (num_std, to, s, false)));
                    }
                    xforms.push(xf);
                }
                "finalxform" => {
                    let xat = format!("{at}: finalxform");
                    if final_xform.is_some() {
                        return Err(GenomeError(format!("{xat}: more than one <finalxform>")));
                    }
                    let (xf, chaos) = self.read_xform(child, &xat, xforms.len(), false)?;
                    if xf.weight != 0.0 {
                        return Err(attr_err(&xat, "weight", "a final xform takes no weight (flam3 refuses it)"));
                    }
                    if let Some(row) = chaos {
                        xaos.extend(row.into_iter().enumerate().map(|(to, s)| (num_std, to, s, true)));
                    }
                    final_xform = Some(xf);
                }
                "edit" => {}
                other => {
                    if !self.ignored_elements.iter().any(|n| n == other) {
                        self.ignored_elements.push(other.to_string());
                    }
                }
            }
        }

        // soloxform: every other standard xform becomes invisible.
        if let Some(s) = solo {
            let s = s.trunc();
            if s >= 0.0 {
                for (i, x) in xforms.iter_mut().enumerate() {
                    if i as f64 != s {
                        x.opacity = 0.0;
                    }
                }
            }
        }

        // Chaos rows: what the file gave, up to the last entry that is not 1
        // (entries past the end of a row are 1, see `XForm::chaos_to`).
        let n = xforms.len();
        let mut final_chaos_warned = false;
        let mut dropped = 0usize;
        for (from, to, s, from_final) in xaos {
            // flam3 skips entries equal to 1.
            if s == 1.0 {
                continue;
            }
            if from_final && !final_chaos_warned {
                final_chaos_warned = true;
                let target = if from >= 0 { format!("xform {from}'s row") } else { "nothing".to_string() };
                self.warnings.push(format!(
                    "{at}: finalxform: attribute 'chaos': a final xform has no chaos row; flam3 applies it to {target}, \
                     and so does this reader"
                ));
            }
            if from < 0 || to >= n {
                dropped += 1;
                continue;
            }
            let row = &mut xforms[from as usize].chaos;
            if row.len() <= to {
                row.resize(to + 1, 1.0);
            }
            row[to] = s;
        }
        if dropped > 0 {
            self.warnings.push(format!(
                "{at}: {dropped} chaos entr{} beyond the {n} xforms ignored",
                if dropped == 1 { "y" } else { "ies" }
            ));
        }

        f.xforms = xforms;
        f.final_xform = final_xform;

        // The palette: a numbered one replaces whatever the elements gave.
        if palette_number != -1 {
            let p = self.numbered_palette(&at, "palette", palette_number, f.hue_rotation)?;
            pal.entries = *p.entries;
            pal.set = [true; 256];
        }
        interpolate_missing(&mut pal);
        f.palette = Palette { entries: Box::new(pal.entries) };
        Ok(f)
    }

    /// `<color index rgb|rgba [a]>`: values 0–255, premultiplied by alpha.
    fn read_color(&mut self, node: Node<'_, '_>, at: &str, pal: &mut PaletteBuild) -> Result<(), GenomeError> {
        let cat = format!("{at}: <color>");
        if node.attributes().len() == 0 {
            return Err(GenomeError(format!("{cat}: no attributes")));
        }
        let mut index: Option<i64> = None;
        let (mut r, mut g, mut b, mut a) = (0.0, 0.0, 0.0, 255.0);
        for att in node.attributes() {
            let (name, v) = (att.name(), att.value());
            let e = |m: String| attr_err(&cat, name, m);
            // flam3 resets alpha to opaque before looking at each attribute:
            // only an `rgba` or `a` that comes last keeps its alpha.
            a = 255.0;
            match name {
                "index" => index = Some(integer(v).map_err(e)?),
                "rgb" => [r, g, b] = reals::<3>(v).map_err(e)?,
                "rgba" => [r, g, b, a] = reals::<4>(v).map_err(e)?,
                "a" => a = real(v).map_err(e)?,
                _ => return Err(e("unknown <color> attribute (flam3 knows index, rgb, rgba, a)".into())),
            }
        }
        let i = match index {
            Some(i) if (0..=255).contains(&i) => i as usize,
            Some(i) => return Err(attr_err(&cat, "index", format!("{i} is out of range (0 to 255)"))),
            None => return Err(attr_err(&cat, "index", "missing")),
        };
        let alpha = a / 255.0;
        pal.entries[i] = [alpha * r / 255.0, alpha * g / 255.0, alpha * b / 255.0, alpha];
        pal.set[i] = true;
        Ok(())
    }

    /// `<colors count data>`: `00RRGGBB` hex groups.
    fn read_colors(&mut self, node: Node<'_, '_>, at: &str, pal: &mut PaletteBuild) -> Result<(), GenomeError> {
        let cat = format!("{at}: <colors>");
        if node.attributes().len() == 0 {
            return Err(GenomeError(format!("{cat}: no attributes")));
        }
        let mut count: Option<usize> = None;
        let mut data: Option<&str> = None;
        for att in node.attributes() {
            let (name, v) = (att.name(), att.value());
            match name {
                "count" => count = Some(int_in(v, 1, 256).map_err(|m| attr_err(&cat, name, m))? as usize),
                "data" => data = Some(v),
                _ => return Err(attr_err(&cat, name, "unknown <colors> attribute (flam3 knows count, data)")),
            }
        }
        if let Some(d) = data {
            let n = count.ok_or_else(|| attr_err(&cat, "count", "missing (needed with data)"))?;
            read_hex(d, n, HexFormat::ZeroRgb, pal).map_err(|m| attr_err(&cat, "data", m))?;
        }
        Ok(())
    }

    /// `<palette count format>HEX</palette>` or the old blend form
    /// `<palette index0 hue0 index1 hue1 blend/>`.
    fn read_palette_element(
        &mut self,
        node: Node<'_, '_>,
        at: &str,
        pal: &mut PaletteBuild,
    ) -> Result<(), GenomeError> {
        let cat = format!("{at}: <palette>");
        if node.attributes().len() == 0 {
            return Err(GenomeError(format!("{cat}: no attributes")));
        }
        let (mut old_form, mut new_form) = (false, false);
        let (mut index0, mut index1) = (None, None);
        let (mut hue0, mut hue1, mut blend) = (0.0, 0.0, 0.5);
        let mut count: Option<usize> = None;
        let mut format: Option<HexFormat> = None;
        for att in node.attributes() {
            let (name, v) = (att.name(), att.value());
            let e = |m: String| attr_err(&cat, name, m);
            match name {
                "index0" => (old_form, index0) = (true, Some(integer(v).map_err(e)?)),
                "index1" => (old_form, index1) = (true, Some(integer(v).map_err(e)?)),
                "hue0" => (old_form, hue0) = (true, real(v).map_err(e)?),
                "hue1" => (old_form, hue1) = (true, real(v).map_err(e)?),
                "blend" => (old_form, blend) = (true, real(v).map_err(e)?),
                "count" => (new_form, count) = (true, Some(int_in(v, 1, 256).map_err(e)? as usize)),
                "format" => {
                    new_form = true;
                    format = Some(keyword(v, &[("RGB", HexFormat::Rgb), ("RGBA", HexFormat::Rgba)]).map_err(e)?);
                }
                _ => {
                    return Err(e(
                        "unknown <palette> attribute (flam3 knows count and format, or index0, hue0, index1, hue1 and blend)"
                            .into(),
                    ));
                }
            }
        }
        if old_form && new_form {
            return Err(GenomeError(format!(
                "{cat}: mixes the count/format form with the index0/index1 blend form (flam3 refuses this)"
            )));
        }
        if old_form {
            // An index left out means a random palette in flam3: not
            // reproducible, so it is an error here.
            let i0 = index0.ok_or_else(|| attr_err(&cat, "index0", "missing (flam3 would pick a random palette)"))?;
            let i1 = index1.ok_or_else(|| attr_err(&cat, "index1", "missing (flam3 would pick a random palette)"))?;
            let p0 = self.numbered_palette(&cat, "index0", i0, hue0)?;
            let p1 = self.numbered_palette(&cat, "index1", i1, hue1)?;
            blend_cmap(&p0, &p1, blend, pal);
            return Ok(());
        }
        let n = count.ok_or_else(|| attr_err(&cat, "count", "missing"))?;
        let fmt = format.ok_or_else(|| attr_err(&cat, "format", "missing (RGB or RGBA)"))?;
        // flam3 reads the whole text content of the element.
        let text: String = node.descendants().filter(Node::is_text).filter_map(|t| t.text()).collect();
        read_hex(&text, n, fmt, pal).map_err(|m| GenomeError(format!("{cat}: hex colour data: {m}")))
    }

    /// `<symmetry kind>`: flam3's `flam3_add_symmetry`. Returns how many
    /// xforms were added.
    fn read_symmetry(
        &mut self,
        node: Node<'_, '_>,
        at: &str,
        xforms: &mut Vec<XForm>,
        has_final: bool,
    ) -> Result<usize, GenomeError> {
        let cat = format!("{at}: <symmetry>");
        if node.attributes().len() == 0 {
            return Err(GenomeError(format!("{cat}: no attributes")));
        }
        let mut kind = 0i64;
        for att in node.attributes() {
            let (name, v) = (att.name(), att.value());
            match name {
                "kind" => kind = int_in(v, -1000, 1000).map_err(|m| attr_err(&cat, name, m))?,
                _ => return Err(attr_err(&cat, name, "unknown <symmetry> attribute (flam3 knows kind)")),
            }
        }
        if kind == 0 {
            return Err(attr_err(&cat, "kind", "0 asks flam3 for a random symmetry, which cannot be reproduced"));
        }
        if kind == 1 {
            return Ok(0);
        }
        if has_final {
            return Err(GenomeError(format!(
                "{cat}: a <symmetry> after the <finalxform> is not supported (flam3 mixes the final xform into the \
                 symmetry xforms)"
            )));
        }
        let linear = VariationKind::from_index(0).expect("linear is variation 0");
        let symmetry_xform = |color: f64, c: [[f64; 2]; 3]| XForm {
            weight: 1.0,
            color,
            color_speed: 0.0,
            animate: 0.0,
            coefs: Affine { c },
            variations: vec![VariationSpec::new(linear, 1.0)],
            ..XForm::flam3_default(0)
        };
        let mut added = Vec::new();
        let mut sym = kind;
        if sym < 0 {
            added.push(symmetry_xform(1.0, [[-1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]));
            sym = -sym;
        }
        let a = 2.0 * std::f64::consts::PI / sym as f64;
        for k in 1..sym {
            let kf = k as f64;
            let color = if sym < 3 { 0.0 } else { (kf - 1.0) / (sym as f64 - 2.0) };
            let c00 = round6((kf * a).cos());
            let c01 = round6((kf * a).sin());
            added.push(symmetry_xform(color, [[c00, c01], [round6(-c01), c00], [0.0, 0.0]]));
        }
        // flam3 sorts the new xforms (all with colour speed 0) by the
        // determinant of their linear part; glibc's qsort keeps equal ones
        // in order here, as this stable sort does.
        let det = |x: &XForm| x.coefs.c[0][0] * x.coefs.c[1][1] - x.coefs.c[0][1] * x.coefs.c[1][0];
        added.sort_by(|p, q| det(p).partial_cmp(&det(q)).unwrap_or(std::cmp::Ordering::Equal));
        let n = added.len();
        if xforms.len() + n > MAX_XFORMS {
            return Err(GenomeError(format!("{cat}: more than {MAX_XFORMS} xforms (not supported)")));
        }
        xforms.extend(added);
        Ok(n)
    }

    /// One `<xform>`, `<finalxform>` or (with `motion`) `<motion>` element.
    /// `created_at` is the position in flam3's array where the xform was
    /// initialised (its default colour is that parity). Returns the xform and
    /// its `chaos` row as given.
    fn read_xform(
        &mut self,
        node: Node<'_, '_>,
        at: &str,
        created_at: usize,
        motion: bool,
    ) -> Result<(XForm, Option<Vec<f64>>), GenomeError> {
        if node.attributes().len() == 0 {
            return Err(GenomeError(format!("{at}: the element has no attributes")));
        }
        let mut xf = XForm::flam3_default(created_at);
        let mut weights = [0.0f64; VARIATION_COUNT];
        let mut params: Vec<Option<Vec<f64>>> = vec![None; VARIATION_COUNT];
        let mut chaos = None;
        let mut motion_params = false;
        let attrs: Vec<roxmltree::Attribute<'_, '_>> = node.attributes().collect();
        for (ai, att) in attrs.iter().enumerate() {
            let (name, v) = (att.name(), att.value());
            let e = |m: String| attr_err(at, name, m);
            match name {
                "weight" => {
                    xf.weight = real(v).map_err(e)?;
                    // In a <motion> element the weight is a change, which may
                    // be negative.
                    if xf.weight < 0.0 && !motion {
                        return Err(e(format!("negative weight {}", xf.weight)));
                    }
                }
                "symmetry" => {
                    let s = real(v).map_err(e)?;
                    xf.color_speed = (1.0 - s) / 2.0;
                    xf.animate = if s > 0.0 { 0.0 } else { 1.0 };
                }
                "color_speed" => xf.color_speed = real(v).map_err(e)?,
                "animate" => xf.animate = real(v).map_err(e)?,
                "motion_frequency" => motion_params |= integer(v).map_err(e)? != 0,
                "motion_function" => {
                    keyword(v, &[("sin", ()), ("triangle", ()), ("hill", ())]).map_err(e)?;
                    motion_params = true;
                }
                "color" => {
                    // One number, or two (flam3 2's second colour coordinate,
                    // ignored).
                    let words: Vec<&str> = v.split_whitespace().collect();
                    if words.is_empty() || words.len() > 2 {
                        return Err(e(format!("expected 1 or 2 numbers, found {} in {}", words.len(), shown(v))));
                    }
                    xf.color = real(words[0]).map_err(e)?;
                    if let Some(w) = words.get(1) {
                        real(w).map_err(e)?;
                    }
                }
                "var1" => {
                    let j = int_in(v, 0, VARIATION_COUNT as i64 - 1).map_err(e)?;
                    weights = [0.0; VARIATION_COUNT];
                    weights[j as usize] = 1.0;
                }
                "var" => weights = reals::<VARIATION_COUNT>(v).map_err(e)?,
                "chaos" => {
                    if motion {
                        return Err(e("not allowed in a <motion> element".into()));
                    }
                    let row = v.split_whitespace().map(real).collect::<Result<Vec<f64>, String>>().map_err(e)?;
                    if let Some(bad) = row.iter().find(|&&s| s < 0.0) {
                        return Err(e(format!("negative chaos weight {bad}")));
                    }
                    chaos = Some(row);
                }
                "plotmode" => {
                    if motion {
                        return Err(e("not allowed in a <motion> element".into()));
                    }
                    if v == "off" {
                        xf.opacity = 0.0;
                    }
                }
                "opacity" => xf.opacity = real(v).map_err(e)?,
                "coefs" => xf.coefs = Affine::from_xml_order(reals::<6>(v).map_err(e)?),
                "post" => xf.post = Affine::from_xml_order(reals::<6>(v).map_err(e)?),
                _ => {
                    if let Some(kind) = VariationKind::from_name(name) {
                        weights[kind.index()] = real(v).map_err(e)?;
                    } else if let Some((kind, pi)) = param_attribute(name) {
                        let mut x = real(v).map_err(e)?;
                        let specs = kind.params();
                        if specs.get(pi).is_some_and(|p| p.name == "super_shape_rnd") {
                            x = x.clamp(0.0, 1.0);
                        }
                        let slot =
                            params[kind.index()].get_or_insert_with(|| specs.iter().map(|p| p.default).collect());
                        if let Some(p) = slot.get_mut(pi) {
                            *p = x;
                        }
                    } else if self.opts.skip_unknown_variations {
                        if !self.skipped.iter().any(|s| s == name) {
                            self.skipped.push(name.to_string());
                            self.warnings.push(format!(
                                "{at}: attribute '{name}': unknown variation or attribute dropped (not one of flam3's \
                                 99 variations, their parameters or xform attributes); the render will differ from \
                                 the program that wrote the file"
                            ));
                        }
                    } else {
                        return Err(unknown_attribute(at, name, &attrs[ai + 1..]));
                    }
                }
            }
        }
        if motion_params && !motion {
            return Err(GenomeError(format!(
                "{at}: motion_frequency/motion_function belong in a <motion> child element, not on the xform \
                 (flam3 refuses this)"
            )));
        }

        for (k, &w) in weights.iter().enumerate() {
            if w == 0.0 {
                continue;
            }
            let kind = VariationKind::from_index(k).expect("index below VARIATION_COUNT");
            let mut spec = VariationSpec::new(kind, w);
            if let Some(p) = params[k].take() {
                spec.params = p;
            }
            xf.variations.push(spec);
        }

        // <motion> children: checked as flam3 reads them, then ignored.
        if !motion {
            for (mi, m) in node.children().filter(|c| c.is_element() && c.tag_name().name() == "motion").enumerate() {
                let mat = format!("{at}: <motion> {mi}");
                self.read_xform(m, &mat, 0, true)?;
                self.motion_seen = true;
            }
        }
        Ok((xf, chaos))
    }
}

/// The variation parameter an xform attribute sets; `param_owner` also
/// knows flam3's aliases (`oscilloscope_*`, mobius's `Re_A` … `Im_D`).
fn param_attribute(name: &str) -> Option<(VariationKind, usize)> {
    param_owner(name)
}

/// The error for an unknown xform attribute, naming the other unknown ones
/// of the same element.
fn unknown_attribute(at: &str, name: &str, rest: &[roxmltree::Attribute<'_, '_>]) -> GenomeError {
    let others: Vec<String> =
        rest.iter().map(|a| a.name()).filter(|n| !is_known_xform_attribute(n)).map(|n| format!("'{n}'")).collect();
    let mut msg = format!(
        "{at}: attribute '{name}': unknown variation (not one of flam3's 99 variations, their parameters or xform \
         attributes; --skip-unknown-variations renders without it)"
    );
    if !others.is_empty() {
        let shown: Vec<&str> = others.iter().take(8).map(String::as_str).collect();
        msg.push_str(&format!(
            "; also unknown in this element: {}{}",
            shown.join(", "),
            if others.len() > 8 { ", …" } else { "" }
        ));
    }
    GenomeError(msg)
}

/// Whether flam3 reads an xform attribute of this name.
fn is_known_xform_attribute(name: &str) -> bool {
    const FIXED: [&str; 14] = [
        "weight",
        "symmetry",
        "color_speed",
        "animate",
        "motion_frequency",
        "motion_function",
        "color",
        "var1",
        "var",
        "chaos",
        "plotmode",
        "opacity",
        "coefs",
        "post",
    ];
    FIXED.contains(&name) || VariationKind::from_name(name).is_some() || param_attribute(name).is_some()
}

/// The layouts of hex colour data.
#[derive(Clone, Copy, Debug)]
enum HexFormat {
    /// `<colors data>`: `00RRGGBB`.
    ZeroRgb,
    /// `<palette format="RGB">`: `RRGGBB`.
    Rgb,
    /// `<palette format="RGBA">`: `RRGGBBAA`.
    Rgba,
}

/// Reads `count` colours of hex data into the first entries of the palette
/// (not premultiplied, as in flam3). White space between the digits is
/// ignored; exactly `count` colours must be there.
fn read_hex(data: &str, count: usize, format: HexFormat, pal: &mut PaletteBuild) -> Result<(), String> {
    let digits: Vec<u8> = data.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    let width = match format {
        HexFormat::Rgb => 6,
        HexFormat::ZeroRgb | HexFormat::Rgba => 8,
    };
    if digits.len() != count * width {
        return Err(format!(
            "expected {count} colours of {width} hex digits ({} digits), found {} digits",
            count * width,
            digits.len()
        ));
    }
    for (i, group) in digits.chunks_exact(width).enumerate() {
        let bad = || format!("colour {i}: {:?} is not {width} hex digits", String::from_utf8_lossy(group));
        let bytes: Vec<u8> =
            group.chunks_exact(2).map(|h| hex_byte(h[0], h[1])).collect::<Option<Vec<u8>>>().ok_or_else(bad)?;
        let (rgb, a) = match format {
            HexFormat::ZeroRgb => {
                if bytes[0] != 0 || group[0] != b'0' || group[1] != b'0' {
                    return Err(format!("colour {i}: {:?} does not start with 00", String::from_utf8_lossy(group)));
                }
                (&bytes[1..4], 255)
            }
            HexFormat::Rgb => (&bytes[0..3], 255),
            HexFormat::Rgba => (&bytes[0..3], bytes[3]),
        };
        pal.entries[i] =
            [f64::from(rgb[0]) / 255.0, f64::from(rgb[1]) / 255.0, f64::from(rgb[2]) / 255.0, f64::from(a) / 255.0];
        pal.set[i] = true;
    }
    Ok(())
}

/// flam3's `interpolate_cmap`: two (hue-rotated) library palettes blended
/// in HSV, the first hue moved by a turn where that is shorter.
fn blend_cmap(p0: &Palette, p1: &Palette, blend: f64, pal: &mut PaletteBuild) {
    for i in 0..256 {
        let (c0, c1) = (p0.entries[i], p1.entries[i]);
        let mut s = rgb_to_hsv([c0[0], c0[1], c0[2]]);
        let t = rgb_to_hsv([c1[0], c1[1], c1[2]]);
        if s[0] - t[0] > 3.0 {
            s[0] -= 6.0;
        }
        if s[0] - t[0] < -3.0 {
            s[0] += 6.0;
        }
        let mix = |x: f64, y: f64| (1.0 - blend) * x + blend * y;
        let rgb = hsv_to_rgb([mix(s[0], t[0]), mix(s[1], t[1]), mix(s[2], t[2])]);
        pal.entries[i] = [rgb[0], rgb[1], rgb[2], mix(c0[3], c1[3])];
        pal.set[i] = true;
    }
}

/// flam3's `flam3_interp_missing_colors`: entries no element set are
/// interpolated linearly (all four channels) between the nearest set
/// entries, wrapping round the ends. With no entry set, all stay zero.
fn interpolate_missing(pal: &mut PaletteBuild) {
    let Some(minix) = pal.set.iter().position(|&s| s) else {
        return;
    };
    let maxix = pal.set.iter().rposition(|&s| s).expect("some entry is set");
    let mut i = 0usize;
    while i < 256 {
        if pal.set[i] {
            i += 1;
            continue;
        }
        // A run of unset entries start..=end, between set entries left and
        // right (as positions, possibly beyond the ends).
        let start = i;
        while i < 256 && !pal.set[i] {
            i += 1;
        }
        let end = i - 1;
        let (left_pos, left) = if start == 0 { (maxix as i64 - 256, maxix) } else { (start as i64 - 1, start - 1) };
        let (right_pos, right) = if end == 255 { (minix as i64 + 256, minix) } else { (end as i64 + 1, end + 1) };
        for j in start..=end {
            let t = (j as i64 - left_pos) as f64 / (right_pos - left_pos) as f64;
            let (cl, cr) = (pal.entries[left], pal.entries[right]);
            for k in 0..4 {
                pal.entries[j][k] = cl[k] * (1.0 - t) + cr[k] * t;
            }
            pal.set[j] = true;
        }
        i = right + 1;
    }
}
