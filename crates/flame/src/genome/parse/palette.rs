//! Palette elements as flam3 reads them: `<color>`, `<colors>`,
//! `<palette>` (hex data or the old blend of two numbered palettes), the
//! numbered palettes of flam3's palette file, and the entries no element
//! set, interpolated from their neighbours. Fractorium's palettes of more
//! than 256 colours are averaged to 256 entries ([`average_to_256`]).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use roxmltree::Node;

use super::values::{ValueError, ValueResult, int_in, integer, keyword, real, reals};
use super::{Reader, attr_err, genome_err};
use crate::error::Result;
use crate::genome::PaletteMode;
use crate::palette::{PALETTE_SIZE, Palette, PaletteLibrary, hex_byte, hsv_to_rgb, rgb_to_hsv};

/// The palette being assembled from `<color>`, `<colors>` and `<palette>`:
/// entries and whether an element set them (flam3's `index >= 0`).
pub(super) struct PaletteBuild {
    entries: [[f64; 4]; PALETTE_SIZE],
    set: [bool; PALETTE_SIZE],
    /// The flame's `palette_mode`: how Fractorium would look up a palette
    /// of more than 256 colours, which decides how it is averaged.
    mode: PaletteMode,
}

/// Most colours a `<palette>` element may give. flam3 reads at most 256;
/// Fractorium writes larger palettes (512 and 1024 colours in its examples).
pub(super) const MAX_HEX_COLOURS: usize = 65_536;

impl PaletteBuild {
    /// No entry set yet; `mode` is the flame's `palette_mode`.
    pub(super) fn new(mode: PaletteMode) -> Self {
        PaletteBuild { entries: [[0.0; 4]; PALETTE_SIZE], set: [false; PALETTE_SIZE], mode }
    }

    /// The palette: `numbered` (a `palette="n"` attribute) replaces every
    /// entry; otherwise the entries no element set are interpolated.
    pub(super) fn finish(mut self, numbered: Option<Palette>) -> Palette {
        if let Some(p) = numbered {
            self.entries = *p.entries;
            self.set = [true; PALETTE_SIZE];
        }
        interpolate_missing(&mut self);
        Palette { entries: Box::new(self.entries) }
    }
}

/// The palette file found as [`PaletteLibrary::locate`] finds it, read once
/// per process and path.
fn cached_library(explicit: Option<&Path>) -> Result<Arc<PaletteLibrary>> {
    static CACHE: Mutex<Vec<(PathBuf, Arc<PaletteLibrary>)>> = Mutex::new(Vec::new());
    let path = PaletteLibrary::locate_path(explicit)?;
    let mut cache = CACHE.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((_, lib)) = cache.iter().find(|(p, _)| *p == path) {
        return Ok(Arc::clone(lib));
    }
    let lib = Arc::new(PaletteLibrary::load(&path)?);
    cache.push((path, Arc::clone(&lib)));
    Ok(lib)
}

impl Reader<'_> {
    /// The palette file, read when the first numbered palette needs it.
    fn library(&mut self, at: &str, attr: &str) -> Result<&PaletteLibrary> {
        if self.library.is_none() {
            let lib = cached_library(self.opts.palette_file.as_deref())
                .map_err(|e| attr_err(at, attr, format!("a numbered palette needs the palette file: {e}")))?;
            self.library = Some(lib);
        }
        Ok(self.library.as_deref().expect("just loaded"))
    }

    /// flam3's `flam3_get_palette(n, hue)`: library palette `n` through the
    /// HSV round trip with the hue rotated by `hue` turns.
    pub(super) fn numbered_palette(&mut self, at: &str, attr: &str, n: i64, hue: f64) -> Result<Palette> {
        let lib = self.library(at, attr)?;
        match lib.get(n) {
            Some(p) => Ok(p.rotate_hue(hue)),
            None => {
                if let Some(why) = lib.unreadable(n) {
                    let file = lib.path().display();
                    return Err(attr_err(at, attr, format!("palette {n} of {file} cannot be read: {why}")));
                }
                let (lo, hi) = lib.numbers().fold((i64::MAX, i64::MIN), |(lo, hi), k| (lo.min(k), hi.max(k)));
                let range = if lib.is_empty() { "it has none".to_string() } else { format!("numbers {lo} to {hi}") };
                let missing = format!("no palette {n} in {} ({range})", lib.path().display());
                if self.opts.strict {
                    return Err(attr_err(at, attr, missing));
                }
                self.warnings.push(format!("{at}: attribute '{attr}': {missing}; all white, as flam3 does"));
                Ok(Palette { entries: Box::new([[1.0; 4]; PALETTE_SIZE]) })
            }
        }
    }

    /// `<color index rgb|rgba [a]>`: values 0–255, premultiplied by alpha.
    pub(super) fn read_color(&mut self, node: Node<'_, '_>, at: &str, pal: &mut PaletteBuild) -> Result<()> {
        let cat = format!("{at}: <color>");
        if node.attributes().len() == 0 {
            return Err(genome_err(&cat, "no attributes"));
        }
        let mut index: Option<i64> = None;
        let (mut r, mut g, mut b, mut a) = (0.0, 0.0, 0.0, 255.0);
        for att in node.attributes() {
            let (name, v) = (att.name(), att.value());
            let e = |m: ValueError| attr_err(&cat, name, m);
            // flam3 resets alpha to opaque before looking at each attribute:
            // only an `rgba` or `a` that comes last keeps its alpha.
            a = 255.0;
            match name {
                "index" => index = Some(integer(v).map_err(e)?),
                "rgb" => [r, g, b] = reals::<3>(v).map_err(e)?,
                "rgba" => [r, g, b, a] = reals::<4>(v).map_err(e)?,
                "a" => a = real(v).map_err(e)?,
                _ => return Err(attr_err(&cat, name, "unknown <color> attribute (flam3 knows index, rgb, rgba, a)")),
            }
        }
        let i = match index {
            Some(i) if (0..PALETTE_SIZE as i64).contains(&i) => i as usize,
            Some(i) => return Err(attr_err(&cat, "index", format!("{i} is out of range (0 to 255)"))),
            None => return Err(attr_err(&cat, "index", "missing")),
        };
        let alpha = a / 255.0;
        pal.entries[i] = [alpha * r / 255.0, alpha * g / 255.0, alpha * b / 255.0, alpha];
        pal.set[i] = true;
        Ok(())
    }

    /// `<colors count data>`: `00RRGGBB` hex groups.
    pub(super) fn read_colors(&mut self, node: Node<'_, '_>, at: &str, pal: &mut PaletteBuild) -> Result<()> {
        let cat = format!("{at}: <colors>");
        if node.attributes().len() == 0 {
            return Err(genome_err(&cat, "no attributes"));
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
            let colours = read_hex(d, n, HexFormat::ZeroRgb).map_err(|m| attr_err(&cat, "data", m))?;
            pal.set_first(&colours);
        }
        Ok(())
    }

    /// `<palette count format>HEX</palette>` or the old blend form
    /// `<palette index0 hue0 index1 hue1 blend/>`.
    pub(super) fn read_palette_element(&mut self, node: Node<'_, '_>, at: &str, pal: &mut PaletteBuild) -> Result<()> {
        let cat = format!("{at}: <palette>");
        if node.attributes().len() == 0 {
            return Err(genome_err(&cat, "no attributes"));
        }
        let attrs = PaletteAttributes::read(node, &cat)?;
        if let Some(first) = attrs.unknown.first() {
            let known = "flam3 knows count and format, or index0, hue0, index1, hue1 and blend";
            if self.opts.strict {
                return Err(attr_err(&cat, first, format!("unknown <palette> attribute ({known})")));
            }
            self.warnings.push(format!("{cat}: unknown attributes ignored ({known}): {}", attrs.unknown.join(", ")));
        }
        if attrs.old_form && attrs.new_form {
            return Err(genome_err(
                &cat,
                "mixes the count/format form with the index0/index1 blend form (flam3 refuses this)",
            ));
        }
        if attrs.old_form {
            // An index left out means a random palette in flam3: not
            // reproducible, so it is an error here.
            let random = "missing or -1 (flam3 would pick a random palette)";
            // -1 asks flam3 for a random palette too.
            let i0 = attrs.index0.filter(|&i| i != -1).ok_or_else(|| attr_err(&cat, "index0", random))?;
            let i1 = attrs.index1.filter(|&i| i != -1).ok_or_else(|| attr_err(&cat, "index1", random))?;
            let p0 = self.numbered_palette(&cat, "index0", i0, attrs.hue0)?;
            let p1 = self.numbered_palette(&cat, "index1", i1, attrs.hue1)?;
            blend_cmap(&p0, &p1, attrs.blend, pal);
            return Ok(());
        }
        let n = attrs.count.ok_or_else(|| attr_err(&cat, "count", "missing"))?;
        let fmt = attrs.format.ok_or_else(|| attr_err(&cat, "format", "missing (RGB or RGBA)"))?;
        if n > PALETTE_SIZE && self.opts.strict {
            return Err(attr_err(
                &cat,
                "count",
                format!(
                    "{n} colours: flam3 reads at most {PALETTE_SIZE} (without --strict, Fractorium's larger palettes \
                     are averaged to {PALETTE_SIZE} entries)"
                ),
            ));
        }
        // flam3 reads the whole text content of the element.
        let text: String = node.descendants().filter(Node::is_text).filter_map(|t| t.text()).collect();
        let colours = read_hex(&text, n, fmt).map_err(|m| genome_err(&cat, format!("hex colour data: {m}")))?;
        if n < PALETTE_SIZE {
            pal.set_first(&colours);
            self.warnings.push(format!(
                "{cat}: {n} colours for {PALETTE_SIZE} entries; as in flam3, entries {n} to {} blend from the last \
                 colour back to the first (a palette of {PALETTE_SIZE} colours gives every entry)",
                PALETTE_SIZE - 1
            ));
        } else if n == PALETTE_SIZE {
            pal.set_first(&colours);
        } else {
            pal.entries = average_to_256(&colours, pal.mode);
            pal.set = [true; PALETTE_SIZE];
            self.warnings.push(format!(
                "{cat}: {n} colours (Fractorium's; flam3 reads {PALETTE_SIZE}), averaged to {PALETTE_SIZE} entries"
            ));
        }
        Ok(())
    }
}

/// The attributes of a `<palette>` element: `count` and `format` (the hex
/// form), or `index0`, `hue0`, `index1`, `hue1` and `blend` (the blend of
/// two numbered palettes).
struct PaletteAttributes {
    /// Whether an attribute of the blend form was given.
    old_form: bool,
    /// Whether an attribute of the hex form was given.
    new_form: bool,
    index0: Option<i64>,
    index1: Option<i64>,
    hue0: f64,
    hue1: f64,
    blend: f64,
    count: Option<usize>,
    format: Option<HexFormat>,
    /// Attributes neither flam3 nor Fractorium writes.
    unknown: Vec<String>,
}

impl PaletteAttributes {
    fn read(node: Node<'_, '_>, cat: &str) -> Result<Self> {
        let mut p = PaletteAttributes {
            old_form: false,
            new_form: false,
            index0: None,
            index1: None,
            hue0: 0.0,
            hue1: 0.0,
            blend: 0.5,
            count: None,
            format: None,
            unknown: Vec::new(),
        };
        for att in node.attributes() {
            let (name, v) = (att.name(), att.value());
            let e = |m: ValueError| attr_err(cat, name, m);
            match name {
                "index0" => (p.old_form, p.index0) = (true, Some(integer(v).map_err(e)?)),
                "index1" => (p.old_form, p.index1) = (true, Some(integer(v).map_err(e)?)),
                "hue0" => (p.old_form, p.hue0) = (true, real(v).map_err(e)?),
                "hue1" => (p.old_form, p.hue1) = (true, real(v).map_err(e)?),
                "blend" => (p.old_form, p.blend) = (true, real(v).map_err(e)?),
                "count" => {
                    (p.new_form, p.count) = (true, Some(int_in(v, 1, MAX_HEX_COLOURS as i64).map_err(e)? as usize));
                }
                "format" => {
                    p.new_form = true;
                    p.format = Some(keyword(v, &[("RGB", HexFormat::Rgb), ("RGBA", HexFormat::Rgba)]).map_err(e)?);
                }
                // Fractorium's palette editor keeps the control points it
                // made the colours from; the colours themselves are the
                // element's hex data.
                "source_colors" => {}
                _ => p.unknown.push(name.to_string()),
            }
        }
        Ok(p)
    }
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

impl PaletteBuild {
    /// Sets the first entries to `colours` (at most 256).
    fn set_first(&mut self, colours: &[[f64; 4]]) {
        for (i, c) in colours.iter().enumerate().take(PALETTE_SIZE) {
            self.entries[i] = *c;
            self.set[i] = true;
        }
    }
}

/// Reads `count` colours of hex data (not premultiplied, as in flam3).
/// White space between the digits is ignored; exactly `count` colours must
/// be there.
fn read_hex(data: &str, count: usize, format: HexFormat) -> ValueResult<Vec<[f64; 4]>> {
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
        )
        .into());
    }
    let mut colours = Vec::with_capacity(count);
    for (i, group) in digits.chunks_exact(width).enumerate() {
        let bad = || ValueError(format!("colour {i}: {:?} is not {width} hex digits", String::from_utf8_lossy(group)));
        let bytes: Vec<u8> =
            group.chunks_exact(2).map(|h| hex_byte(h[0], h[1])).collect::<Option<Vec<u8>>>().ok_or_else(bad)?;
        let (rgb, a) = match format {
            HexFormat::ZeroRgb => {
                if bytes[0] != 0 || group[0] != b'0' || group[1] != b'0' {
                    let group = String::from_utf8_lossy(group);
                    return Err(format!("colour {i}: {group:?} does not start with 00").into());
                }
                (&bytes[1..4], 255)
            }
            HexFormat::Rgb => (&bytes[0..3], 255),
            HexFormat::Rgba => (&bytes[0..3], bytes[3]),
        };
        colours.push([
            f64::from(rgb[0]) / 255.0,
            f64::from(rgb[1]) / 255.0,
            f64::from(rgb[2]) / 255.0,
            f64::from(a) / 255.0,
        ]);
    }
    Ok(colours)
}

/// The colour Fractorium looks up at colour coordinate `c` in a palette of
/// `e.len()` entries (`Renderer::Accumulate`): position c·(n − 1), the
/// entry below it in step mode, linear interpolation to the next in linear
/// mode, the last entry from the end on.
fn fractorium_lookup(e: &[[f64; 4]], mode: PaletteMode, c: f64) -> [f64; 4] {
    let last = e.len() - 1;
    let pos = c * last as f64;
    let i = pos as usize;
    if i >= last {
        return e[last];
    }
    match mode {
        PaletteMode::Step => e[i],
        PaletteMode::Linear => {
            let f = pos - i as f64;
            std::array::from_fn(|k| e[i][k] * (1.0 - f) + e[i + 1][k] * f)
        }
    }
}

/// A palette of more than 256 colours (Fractorium's) as 256 entries for
/// flam3's lookup: each entry the mean of Fractorium's colour over the
/// coordinates that entry stands for. In step mode entry k is used for
/// c in [k/256, (k+1)/256); in linear mode it is the knot at c = k/256, and
/// the mean is over [(k − ½)/256, (k + ½)/256] within [0, 1]. Fractorium's
/// colour is constant (step) or linear (linear mode) between the positions
/// j/(n − 1) of its entries, so the midpoint of each piece between them
/// gives the piece's mean exactly.
fn average_to_256(colours: &[[f64; 4]], mode: PaletteMode) -> [[f64; 4]; PALETTE_SIZE] {
    let last = (colours.len() - 1) as f64;
    let cell = 1.0 / PALETTE_SIZE as f64;
    let centre_offset = if mode == PaletteMode::Linear { 0.5 } else { 0.0 };
    std::array::from_fn(|k| {
        let lo = ((k as f64 - centre_offset) * cell).max(0.0);
        let hi = ((k as f64 + 1.0 - centre_offset) * cell).min(1.0);
        // The pieces: from lo to each entry position inside, then to hi.
        let inside = ((lo * last).floor() as usize + 1..).map(|j| j as f64 / last).take_while(|&c| c < hi);
        let mut sum = [0.0; 4];
        let mut from = lo;
        for to in inside.chain(std::iter::once(hi)) {
            let v = fractorium_lookup(colours, mode, 0.5 * (from + to));
            for (s, x) in sum.iter_mut().zip(v) {
                *s += x * (to - from);
            }
            from = to;
        }
        sum.map(|s| s / (hi - lo))
    })
}

/// flam3's `interpolate_cmap`: two (hue-rotated) library palettes blended
/// in HSV, the first hue moved by a turn where that is shorter.
fn blend_cmap(p0: &Palette, p1: &Palette, blend: f64, pal: &mut PaletteBuild) {
    for i in 0..PALETTE_SIZE {
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
