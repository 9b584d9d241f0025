//! Palettes: 256 RGBA colours, from a genome's own colour elements or from
//! flam3's numbered palette file (`flam3-palettes.xml`).
//!
//! The palette file is not embedded (it is part of flam3, under the GPL):
//! it is looked up at run time, see [`PaletteLibrary`].
//!
//! Colour conversions follow flam3's `rgb2hsv`/`hsv2rgb` exactly (hue in
//! sixths of a turn, 0 ≤ h < 6), so that palettes built from the library
//! match flam3's bit for bit.

use std::path::{Path, PathBuf};

use crate::error::{FlameError, Result};

/// 256 RGBA entries, each channel in [0, 1].
#[derive(Clone, Debug, PartialEq)]
pub struct Palette {
    /// The entries, `[r, g, b, a]`.
    pub entries: Box<[[f64; 4]; PALETTE_SIZE]>,
}

impl Palette {
    /// All entries opaque black.
    pub fn black() -> Self {
        Palette { entries: Box::new([[0.0, 0.0, 0.0, 1.0]; PALETTE_SIZE]) }
    }

    /// The palette with every entry's hue turned by `rotation` turns, as
    /// flam3 applies a flame's `hue` attribute to a numbered palette: each
    /// entry goes through [`rgb_to_hsv`], gets `6·rotation` added to its hue
    /// and comes back through [`hsv_to_rgb`]. Alpha is kept.
    ///
    /// flam3 does this round trip even for a rotation of 0, and the round
    /// trip is not always the identity in the last bit; call this with 0 to
    /// get flam3's numbered palettes exactly.
    pub fn rotate_hue(&self, rotation: f64) -> Palette {
        let mut out = self.clone();
        for e in out.entries.iter_mut() {
            let mut hsv = rgb_to_hsv([e[0], e[1], e[2]]);
            hsv[0] += rotation * 6.0;
            let rgb = hsv_to_rgb(hsv);
            e[..3].copy_from_slice(&rgb);
        }
        out
    }
}

/// flam3's `rgb2hsv`: RGB in [0, 1] to `[h, s, v]` with the hue `h` in
/// [0, 6) (sixths of a turn; 0 for greys), saturation and value in [0, 1].
pub fn rgb_to_hsv(rgb: [f64; 3]) -> [f64; 3] {
    let [r, g, b] = rgb;
    let max = if r >= g {
        if r >= b { r } else { b }
    } else if g >= b {
        g
    } else {
        b
    };
    let min = if r <= g {
        if r <= b { r } else { b }
    } else if g <= b {
        g
    } else {
        b
    };
    let del = max - min;
    let s = if max != 0.0 { del / max } else { 0.0 };
    let mut h = 0.0;
    if s != 0.0 {
        let rc = (max - r) / del;
        let gc = (max - g) / del;
        let bc = (max - b) / del;
        if r == max {
            h = bc - gc;
        } else if g == max {
            h = 2.0 + rc - bc;
        } else if b == max {
            h = 4.0 + gc - rc;
        }
        if h < 0.0 {
            h += 6.0;
        }
    }
    [h, s, max]
}

/// flam3's `hsv2rgb`: `[h, s, v]` (hue in sixths of a turn, brought into
/// [0, 6) by whole turns first) to RGB.
///
/// An infinite hue (on which flam3 would loop for ever) is taken as 0.
pub fn hsv_to_rgb(hsv: [f64; 3]) -> [f64; 3] {
    let [mut h, s, v] = hsv;
    if h.is_infinite() {
        h = 0.0;
    } else if h.abs() > 600.0 {
        // flam3 adds or subtracts whole turns one at a time. Each such step
        // is exact below 2^53, so the remainder is the same number, without
        // a loop of up to 10^15 steps (a flame interpolated far outside its
        // control points has such hues).
        h = h.rem_euclid(6.0);
    }
    while h >= 6.0 {
        h -= 6.0;
    }
    while h < 0.0 {
        h += 6.0;
    }
    let j = h.floor();
    let f = h - j;
    let p = v * (1.0 - s);
    let q = v * (1.0 - s * f);
    let t = v * (1.0 - s * (1.0 - f));
    // `as i32` maps NaN to 0, which takes the same branch as flam3's
    // default case.
    match j as i32 {
        1 => [q, v, p],
        2 => [p, v, t],
        3 => [p, q, v],
        4 => [t, p, v],
        5 => [v, p, q],
        _ => [v, t, p],
    }
}

/// Entries of a palette (flam3's `CMAP_SIZE`); the GPU kernels are given
/// this size too.
pub const PALETTE_SIZE: usize = 256;

/// The environment variable naming the palette file.
pub const PALETTES_ENV: &str = "FLAM3_PALETTES";

/// The environment variable flam3 itself reads (lower case), also honoured.
pub const FLAM3_PALETTES_ENV: &str = "flam3_palettes";

/// Where Debian's flam3 installs the palette file.
pub const SYSTEM_PALETTES: &str = "/usr/share/flam3/flam3-palettes.xml";

/// The error of a search that found none of `candidates`.
fn not_found(candidates: &[PathBuf]) -> FlameError {
    let looked: Vec<String> = candidates.iter().map(|p| p.display().to_string()).collect();
    FlameError::PaletteFile {
        text: format!(
            "flam3-palettes.xml not found (looked at {}; name it in ${PALETTES_ENV}, or install flam3, e.g. Debian's \
             flam3-utils)",
            looked.join(", ")
        ),
        kind: std::io::ErrorKind::NotFound,
    }
}

/// One palette of the file.
#[derive(Clone, Debug)]
struct LibPalette {
    number: i64,
    name: String,
    rgb: Box<[[u8; 3]; PALETTE_SIZE]>,
}

/// flam3's numbered palettes (`flam3-palettes.xml`): `<palette number
/// name data>` elements, each with 256 colours as `00RRGGBB` hex groups.
///
/// As in flam3, a `<palette>` whose data cannot be read is left out, and when
/// two palettes share a number the first one counts.
#[derive(Clone, Debug)]
pub struct PaletteLibrary {
    path: PathBuf,
    palettes: Vec<LibPalette>,
    /// The palettes left out, by number, with why their data was unreadable.
    unreadable: Vec<(i64, String)>,
}

impl PaletteLibrary {
    /// Reads the palette file at `path`.
    pub fn load(path: &Path) -> Result<Self> {
        let bytes =
            crate::input::read_file(path, crate::input::MAX_GENOME_BYTES, "palette file").map_err(|e| match e {
                FlameError::Io { error, .. } => FlameError::PaletteFile {
                    text: format!("{}: cannot read the palette file: {error}", path.display()),
                    kind: error.kind(),
                },
                e => e,
            })?;
        let text = String::from_utf8_lossy(&bytes);
        Self::from_xml(&text, path)
    }

    /// Reads palettes from XML text; `path` is recorded as where they came
    /// from (see [`PaletteLibrary::path`]).
    pub fn from_xml(xml: &str, path: &Path) -> Result<Self> {
        let doc = crate::xml::parse(xml).map_err(|e| FlameError::Palette(format!("{}: {e}", path.display())))?;
        let mut palettes = Vec::new();
        let mut unreadable = Vec::new();
        // flam3 looks at every <palette> element of the document (but not
        // inside another <palette>).
        let mut stack = vec![doc.root()];
        while let Some(node) = stack.pop() {
            if node.is_element() && node.tag_name().name() == "palette" {
                match read_lib_palette(node) {
                    Ok(p) => palettes.push(p),
                    Err(bad) => unreadable.push(bad),
                }
                continue;
            }
            let children: Vec<_> = node.children().collect();
            stack.extend(children.into_iter().rev());
        }
        Ok(PaletteLibrary { path: path.to_path_buf(), palettes, unreadable })
    }

    /// The places [`PaletteLibrary::locate`] considers, in order: `explicit`,
    /// `$FLAM3_PALETTES`, `$flam3_palettes` (flam3's own variable) and
    /// [`SYSTEM_PALETTES`]. Unset or empty variables are left out. The
    /// first place named by the caller or a variable is the only one read
    /// (see [`PaletteLibrary::locate_path`]).
    pub fn search_path(explicit: Option<&Path>) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = explicit.map(Path::to_path_buf).into_iter().collect();
        out.extend(Self::from_environment().map(|(p, _)| p));
        out.push(PathBuf::from(SYSTEM_PALETTES));
        out
    }

    /// The files the environment names, in order, with the variable that
    /// names each.
    fn from_environment() -> impl Iterator<Item = (PathBuf, &'static str)> {
        [PALETTES_ENV, FLAM3_PALETTES_ENV]
            .into_iter()
            .filter_map(|var| std::env::var_os(var).filter(|v| !v.is_empty()).map(|v| (PathBuf::from(v), var)))
    }

    /// The palette file named by the caller (`explicit`) or else by the
    /// environment, with the variable that named it (`None` for
    /// `explicit`).
    fn named(explicit: Option<&Path>) -> Option<(PathBuf, Option<&'static str>)> {
        match explicit {
            Some(p) => Some((p.to_path_buf(), None)),
            None => Self::from_environment().next().map(|(p, var)| (p, Some(var))),
        }
    }

    /// The file [`PaletteLibrary::locate`] reads, without reading it.
    ///
    /// A file named by the caller (`explicit`), or else by
    /// `$FLAM3_PALETTES` or `$flam3_palettes`, is the only candidate: when
    /// it is missing or a directory that is the error, not a reason to
    /// look elsewhere (flam3 too reads the file `$flam3_palettes` names and
    /// no other). Only when none is named is [`SYSTEM_PALETTES`] read, and
    /// the error then names it.
    pub fn locate_path(explicit: Option<&Path>) -> Result<PathBuf> {
        match Self::named(explicit) {
            Some((path, var)) => {
                let by = var.map(|v| format!(" (named by ${v})")).unwrap_or_default();
                match std::fs::metadata(&path) {
                    Ok(m) if m.is_dir() => Err(FlameError::PaletteFile {
                        text: format!("{}{by}: is a directory, not the palette file", path.display()),
                        kind: std::io::ErrorKind::IsADirectory,
                    }),
                    Ok(_) => Ok(path),
                    Err(e) => Err(FlameError::PaletteFile {
                        text: format!("{}{by}: cannot read the palette file: {e}", path.display()),
                        kind: e.kind(),
                    }),
                }
            }
            None => {
                let defaults = [PathBuf::from(SYSTEM_PALETTES)];
                match defaults.iter().find(|p| p.is_file()) {
                    Some(p) => Ok(p.clone()),
                    None => Err(not_found(&defaults)),
                }
            }
        }
    }

    /// An error when a palette file is named (by the caller or the
    /// environment, as [`PaletteLibrary::locate_path`] reads them) but is
    /// missing or a directory; nothing is read. For checking a setting
    /// before work starts, whether or not a genome needs the file.
    pub fn check_named(explicit: Option<&Path>) -> Result<()> {
        match Self::named(explicit) {
            Some(_) => Self::locate_path(explicit).map(drop),
            None => Ok(()),
        }
    }

    /// Finds and reads the palette file ([`PaletteLibrary::locate_path`]).
    pub fn locate(explicit: Option<&Path>) -> Result<Self> {
        Self::load(&Self::locate_path(explicit)?)
    }

    /// Reads the first of `candidates` that is an existing file (a file
    /// that exists but cannot be read or parsed is an error, not skipped).
    /// The error lists every candidate.
    pub fn locate_among(candidates: &[PathBuf]) -> Result<Self> {
        match candidates.iter().find(|p| p.is_file()) {
            Some(p) => Self::load(p),
            None => Err(not_found(candidates)),
        }
    }

    /// The file the palettes were read from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How many palettes were read.
    pub fn len(&self) -> usize {
        self.palettes.len()
    }

    /// Whether no palette was read.
    pub fn is_empty(&self) -> bool {
        self.palettes.is_empty()
    }

    /// The palette numbers, in file order.
    pub fn numbers(&self) -> impl Iterator<Item = i64> + '_ {
        self.palettes.iter().map(|p| p.number)
    }

    /// The name of palette `number`, if there is such a palette.
    pub fn name(&self, number: i64) -> Option<&str> {
        self.find(number).map(|p| p.name.as_str())
    }

    /// Palette `number` as stored: each channel `byte / 255`, alpha 1, no
    /// hue round trip. For the palette a flame with `palette="n" hue="h"`
    /// gets, use `get(n)?.rotate_hue(h)` (flam3 applies the round trip even
    /// for `h = 0`).
    pub fn get(&self, number: i64) -> Option<Palette> {
        let p = self.find(number)?;
        let mut out = Palette::black();
        for (e, c) in out.entries.iter_mut().zip(p.rgb.iter()) {
            *e = [f64::from(c[0]) / 255.0, f64::from(c[1]) / 255.0, f64::from(c[2]) / 255.0, 1.0];
        }
        Some(out)
    }

    fn find(&self, number: i64) -> Option<&LibPalette> {
        self.palettes.iter().find(|p| p.number == number)
    }

    /// Why the file's palette `number` was left out, when the file has one
    /// with that number whose data could not be read (and no readable one).
    pub fn unreadable(&self, number: i64) -> Option<&str> {
        if self.find(number).is_some() {
            return None;
        }
        self.unreadable.iter().find(|(n, _)| *n == number).map(|(_, why)| why.as_str())
    }
}

/// One `<palette>` of the library, or its number and what is wrong with its
/// data (flam3 skips such palettes).
fn read_lib_palette(node: roxmltree::Node<'_, '_>) -> std::result::Result<LibPalette, (i64, String)> {
    // flam3 reads `number` with atoi and leaves it 0 when absent.
    let number = node.attribute("number").map(atoi).unwrap_or(0);
    let bad = |why: String| (number, why);
    let name = node.attribute("name").unwrap_or("").to_string();
    let data = node.attribute("data").ok_or_else(|| bad("it has no data attribute".into()))?;
    let hex: Vec<u8> = data.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    let mut rgb = Box::new([[0u8; 3]; PALETTE_SIZE]);
    // 256 groups of 00RRGGBB; anything after them is ignored, as in flam3.
    for (i, entry) in rgb.iter_mut().enumerate() {
        let group = hex.get(8 * i..8 * i + 8).ok_or_else(|| {
            bad(format!(
                "its data holds {} of the {PALETTE_SIZE} colours (8 hex digits, 00RRGGBB, each)",
                hex.len() / 8
            ))
        })?;
        let entry_err = || bad(format!("colour {i} of its data, {}, is not 00RRGGBB", String::from_utf8_lossy(group)));
        if &group[..2] != b"00" {
            return Err(entry_err());
        }
        for (k, c) in entry.iter_mut().enumerate() {
            *c = hex_byte(group[2 + 2 * k], group[3 + 2 * k]).ok_or_else(entry_err)?;
        }
    }
    Ok(LibPalette { number, name, rgb })
}

/// Two hex digits to a byte.
pub(crate) fn hex_byte(hi: u8, lo: u8) -> Option<u8> {
    let d = |c: u8| (c as char).to_digit(16);
    Some((d(hi)? * 16 + d(lo)?) as u8)
}

/// C's `atoi`: optional whitespace and sign, then the leading digits; 0 when
/// there are none (saturating instead of overflowing).
fn atoi(s: &str) -> i64 {
    let s = s.trim_start();
    let (neg, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let mut v: i64 = 0;
    for c in digits.bytes().take_while(u8::is_ascii_digit) {
        v = v.saturating_mul(10).saturating_add(i64::from(c - b'0'));
    }
    if neg { -v } else { v }
}
