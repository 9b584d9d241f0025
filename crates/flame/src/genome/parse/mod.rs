//! Reading flam3 XML the way flam3 3.1.1 does (`flam3_parse_xml2`,
//! `parse_flame_element`, `parse_xform_xml`), with clear errors where flam3
//! would print a warning and render something else.
//!
//! What is reproduced from flam3:
//!
//! - every `<flame>` element of the file counts, at any depth (inside
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
//! Unknown xform attributes (variations warpmc does not implement, their
//! parameters) are dropped with one warning per name and file, as
//! flam3-render drops the variations it does not know;
//! [`ParseOptions::strict`] makes them errors. Fractorium's and Apophysis's
//! own xform attributes that mean nothing in flam3's plane (`var_color`,
//! `name`, the z terms of waves2) are ignored quietly. Where flam3 warns and
//! renders something else (a keyword it does not know, a numbered palette
//! its palette file lacks, which it makes all white), this reader warns and
//! does the same, and [`ParseOptions::strict`] makes it an error; other
//! values flam3 cannot use fail with one line naming the file, the flame,
//! the xform and the attribute.
//! Fractorium's 3-D camera (`cam_pitch`, `cam_yaw`, `cam_persp`, `cam_zpos`,
//! `cam_dof`, `blur_curve`) is ignored quietly at zero; set, it is listed in
//! [`ParsedGenome::skipped`] with a warning (the flame is drawn flat), and
//! is the error under [`ParseOptions::strict`].
//! Flame attributes flam3 does not read are ignored with one warning per
//! file (the ones flam3's own tools and Electric Sheep write, `version`,
//! `nick`, `url`, `id` and `gen`, silently, as are Fractorium's
//! `logscale_k2="0"` and the `source_colors` its palette editor puts on
//! `<palette>`); another unknown `<palette>` attribute is ignored with a
//! warning, and is the error under [`ParseOptions::strict`]. `<motion>` elements are read
//! into [`XForm::motion`](crate::genome::XForm::motion), with a warning:
//! renders ignore them, as flam3-render and flam3-animate do, and the
//! genome tools' loops and transitions apply them, as flam3-genome's do.

mod apophysis;
mod flame;
mod palette;
mod values;
mod xform;

pub(crate) use xform::{symmetry_xforms, symmetry_xforms_before_final};

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use roxmltree::Node;

use super::{AffineInterpolation, Flame, Interpolation};
use crate::error::{FlameError, Result};
use crate::palette::PaletteLibrary;

/// Options for reading genomes.
#[derive(Clone, Debug, Default)]
pub struct ParseOptions {
    /// Fail on an xform attribute warpmc does not know (a variation it does
    /// not implement, or a parameter or attribute of one) instead of
    /// dropping it with a warning. By default such an attribute is dropped,
    /// as flam3-render drops the variations it does not know: the xform
    /// keeps its other variations, and the dropped variation's weight is
    /// simply gone (the other weights are not rescaled). Also fail on a
    /// keyword flam3 does not know (`filter_shape="sinc"`), where flam3 and
    /// the default reader warn and keep the default, and, as flam3 does, on a
    /// `<palette>` of more than 256 colours (Fractorium's), which the default
    /// reader averages to flam3's 256 entries with a warning, and on a chaos
    /// row that gives every xform zero weight (the default reader warns; the
    /// renderers then take xform 0 after it, as Fractorium does), and on a
    /// numbered palette the palette file lacks (the default reader warns
    /// and makes it all white, as flam3 does).
    pub strict: bool,
    /// Where flam3-palettes.xml is, for numbered palettes; `None` searches the
    /// usual places (see [`crate::palette::PaletteLibrary::locate`]).
    pub palette_file: Option<PathBuf>,
}

/// The flames of one file and the warnings produced while reading them.
#[derive(Clone, Debug)]
pub struct ParsedGenome {
    /// The `<flame>` elements, in file order.
    pub flames: Vec<Flame>,
    /// Warnings (skipped variations and similar), one line each: at most
    /// [`MAX_WARNINGS`] and the summaries of what was ignored, then a line
    /// that counts the rest.
    pub warnings: Vec<String>,
    /// The xform attributes dropped because warpmc does not know them
    /// (variations it does not implement, their parameters and other
    /// attributes), each name once, in the order first met. Each unknown
    /// variation, and each unknown attribute that is not a parameter of one,
    /// also has a warning. Fractorium's 3-D camera attributes (`cam_pitch`,
    /// `cam_persp`, …), where set, are listed too: the flame is drawn flat.
    /// Empty means every variation of the file renders.
    pub skipped: Vec<String>,
    /// The same names for each flame of [`flames`](Self::flames), in order.
    pub skipped_by_flame: Vec<Vec<String>>,
    /// Attributes read without a warning, because they change nothing a
    /// flam3 render draws, that a genome written from these flames does not
    /// carry (as flam3-genome's output does not): Fractorium's xform labels
    /// (`name`), `var_color`, `plugins`, `new_linear`, its 3-D camera at
    /// zero, `nick`, `url` and similar. Each name once, in the order first
    /// met; the genome tools say so when they write.
    pub not_written: Vec<String>,
}

/// Reads a genome file (of at most [`MAX_GENOME_BYTES`](crate::input::MAX_GENOME_BYTES)).
///
/// The file should be UTF-8; a file that is not, but declares an ISO-8859-1
/// or Windows-1252 encoding (as some Windows editors write), is decoded as
/// Latin-1.
pub fn parse_file(path: &Path, opts: &ParseOptions) -> Result<ParsedGenome> {
    let source = path.display().to_string();
    let bytes = crate::input::read_file(path, crate::input::MAX_GENOME_BYTES, "genome file")?;
    let text = decode(bytes).map_err(|m| FlameError::Genome(format!("{source}: {m}")))?;
    parse_str(&text, &source, opts)
}

/// Reads genome XML from a string; `source` names it in messages.
///
/// ```
/// use warpmc_flame::genome::{ParseOptions, parse_str};
///
/// let xml = r#"<flame name="two" size="64 48"><xform weight="1" linear="1"/></flame>"#;
/// let parsed = parse_str(xml, "example.flam3", &ParseOptions::default())?;
/// assert_eq!(parsed.flames[0].name.as_deref(), Some("two"));
/// assert_eq!((parsed.flames[0].width, parsed.flames[0].height), (64, 48));
///
/// // Errors are one line naming the source, the flame and the attribute.
/// let e = parse_str(r#"<flame size="64"/>"#, "bad.flam3", &ParseOptions::default()).unwrap_err();
/// assert!(e.to_string().starts_with("bad.flam3: flame #0: attribute 'size': "));
/// # Ok::<(), warpmc_flame::FlameError>(())
/// ```
pub fn parse_str(xml: &str, source: &str, opts: &ParseOptions) -> Result<ParsedGenome> {
    let doc = crate::xml::parse(xml).map_err(|e| FlameError::Genome(format!("{source}: {e}")))?;
    check_flames_fit(&doc, source)?;

    let mut r = Reader::new(source, opts);
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
    r.summarise_ignored();
    let skipped_by_flame = r.skipped_by_flame.into_iter().map(|l| l.names).collect();
    Ok(ParsedGenome {
        flames,
        warnings: r.warnings.finish(source),
        skipped: r.skipped.names,
        skipped_by_flame,
        not_written: r.not_written.names,
    })
}

/// Checks that the flames of `doc` fit in memory once read: a flame holds
/// a palette of 8 KiB whatever its text, so a file of a million empty
/// `<flame>` elements (19 MB) would need 9 GB.
fn check_flames_fit(doc: &roxmltree::Document<'_>, source: &str) -> Result<()> {
    let (mut flames, mut xforms) = (0u64, 0u64);
    for node in doc.descendants().filter(Node::is_element) {
        match node.tag_name().name() {
            "flame" => flames += 1,
            "xform" | "finalxform" => xforms += 1,
            _ => {}
        }
    }
    let palette = std::mem::size_of::<[f64; 4]>() * crate::palette::PALETTE_SIZE;
    let bytes = flames * (std::mem::size_of::<Flame>() + palette) as u64
        + xforms * (std::mem::size_of::<super::XForm>() as u64 + 64);
    warpmc_host::memory::check_allocation(&format!("{source}: reading its {flames} flames"), bytes)
        .map_err(FlameError::OutOfHostMemory)
}

/// The text of a file: UTF-8, or Latin-1 when the XML declaration says so.
fn decode(bytes: Vec<u8>) -> std::result::Result<String, values::ValueError> {
    // By value: a genome near the size limit is not copied once more.
    match String::from_utf8(bytes) {
        Ok(s) => Ok(s),
        Err(e) => {
            let (e, bytes) = (e.utf8_error(), e.into_bytes());
            let head: String = bytes.iter().take(200).map(|&b| b as char).collect::<String>().to_ascii_lowercase();
            let decl = head.split("?>").next().unwrap_or("");
            let latin = ["iso-8859-1", "iso8859-1", "latin1", "latin-1", "windows-1252", "cp1252"];
            if decl.starts_with("<?xml") && latin.iter().any(|l| decl.contains(l)) {
                Ok(bytes.iter().map(|&b| b as char).collect())
            } else {
                Err(format!(
                    "not UTF-8 (invalid byte at offset {}) and no ISO-8859-1 encoding declared",
                    e.valid_up_to()
                )
                .into())
            }
        }
    }
}

/// What flam3 does to a sequence after reading it: no smooth interpolation
/// on the first and the second-to-last flame, and rotations unwound.
fn finish_sequence(flames: &mut [Flame], warnings: &mut Warnings, source: &str) {
    let n = flames.len();
    let mut reset = |i: usize, warnings: &mut Warnings| {
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

/// Warnings a file may give before the rest are only counted: a file
/// that repeats one fault in thousands of xforms or flames gets a
/// readable message, and its warnings cannot outgrow memory.
pub const MAX_WARNINGS: usize = 100;

/// The warnings of one file: the first [`MAX_WARNINGS`] kept, the rest
/// counted.
#[derive(Default)]
struct Warnings {
    kept: Vec<String>,
    more: usize,
}

impl Warnings {
    fn push(&mut self, w: String) {
        if self.kept.len() < MAX_WARNINGS {
            self.kept.push(w);
        } else {
            self.more += 1;
        }
    }

    /// A warning that sums up the file (one of a few), kept past the limit.
    fn summary(&mut self, w: String) {
        self.kept.push(w);
    }

    fn finish(mut self, source: &str) -> Vec<String> {
        if self.more > 0 {
            self.kept.push(format!("{source}: {} more warnings not shown", self.more));
        }
        self.kept
    }
}

/// State of one `parse_str` call.
struct Reader<'a> {
    source: &'a str,
    opts: &'a ParseOptions,
    warnings: Warnings,
    skipped: NameList,
    /// [`ParsedGenome::skipped_by_flame`], the last entry the flame being read.
    skipped_by_flame: Vec<NameList>,
    ignored_attributes: NameList,
    ignored_elements: NameList,
    /// Variations beyond flam3's used by flames Fractorium did not write:
    /// flam3-render drops them.
    beyond_flam3: NameList,
    /// [`ParsedGenome::not_written`].
    not_written: NameList,
    motion_seen: bool,
    /// Whether the flame being read was written by Fractorium, whose own
    /// names need no correction ([`apophysis`]).
    fractorium_names: bool,
    /// Loaded when the first numbered palette is needed.
    library: Option<Arc<PaletteLibrary>>,
}

impl<'a> Reader<'a> {
    fn new(source: &'a str, opts: &'a ParseOptions) -> Self {
        Reader {
            source,
            opts,
            warnings: Warnings::default(),
            skipped: NameList::default(),
            skipped_by_flame: Vec::new(),
            ignored_attributes: NameList::default(),
            ignored_elements: NameList::default(),
            beyond_flam3: NameList::default(),
            not_written: NameList::default(),
            motion_seen: false,
            fractorium_names: false,
            library: None,
        }
    }

    /// One warning per file for what was read and ignored.
    fn summarise_ignored(&mut self) {
        let source = self.source;
        if !self.ignored_attributes.is_empty() {
            self.warnings.summary(format!(
                "{source}: flame attributes flam3 does not read, ignored: {}",
                self.ignored_attributes.join(", ")
            ));
        }
        if !self.ignored_elements.is_empty() {
            let names: Vec<String> = self.ignored_elements.names.iter().map(|n| format!("<{n}>")).collect();
            self.warnings.summary(format!("{source}: elements flam3 does not read, ignored: {}", names.join(", ")));
        }
        if !self.beyond_flam3.is_empty() {
            self.warnings.summary(format!(
                "{source}: variations beyond flam3's 99 ({}): rendered with Fractorium's formulas, where \
                 flam3-render drops them (as unknown), so its image of this genome differs",
                self.beyond_flam3.join(", ")
            ));
        }
        if self.motion_seen {
            self.warnings.summary(format!(
                "{source}: <motion> elements: renders ignore them, as flam3-render and flam3-animate do; `flame \
                 genome rotate`, `inter` and `sequence` apply them, as flam3-genome's loops and transitions do"
            ));
        }
    }
}

/// A genome error at `at` (file, flame, element).
fn genome_err(at: &str, msg: impl std::fmt::Display) -> FlameError {
    FlameError::Genome(format!("{at}: {msg}"))
}

/// One-line error `{at}: attribute '{name}': {msg}`.
fn attr_err(at: &str, name: &str, msg: impl std::fmt::Display) -> FlameError {
    FlameError::Genome(format!("{at}: attribute '{name}': {msg}"))
}

/// Names in the order first met, each once. Membership takes constant
/// time: one element may carry tens of thousands of distinct unknown
/// attributes, and a list searched for each would take minutes.
#[derive(Debug, Default)]
struct NameList {
    names: Vec<String>,
    seen: HashSet<String>,
}

impl NameList {
    /// Adds `name` unless it is there already; whether it was new.
    fn insert(&mut self, name: &str) -> bool {
        if self.seen.contains(name) {
            return false;
        }
        self.seen.insert(name.to_string());
        self.names.push(name.to_string());
        true
    }

    fn contains(&self, name: &str) -> bool {
        self.seen.contains(name)
    }

    fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    fn join(&self, separator: &str) -> String {
        self.names.join(separator)
    }
}
