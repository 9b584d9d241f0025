//! Lattice snapshots: pictures (PNG) and arrays (NumPy `.npy`).
//!
//! A PNG shows a configuration at a glance (domains, droplets, stripes) with
//! one pixel per site and one colour per state from [`palette`]; an `.npy`
//! file keeps the exact spins for analysis in Python
//! (`numpy.load(path)` gives a `uint8` array of shape (height, width)).
//! [`write_snapshot`] picks the format from the file name.
//!
//! Files are written through [`warpmc_host::output`]: a regular file is
//! replaced only once the new one is complete and synced (a crash or a full
//! disk never leaves a truncated snapshot under the requested name), a
//! symlink is written through, and a device or FIFO is written in place.
//! Both writers stream: the PNG is encoded one image row at a time (memory
//! O(width), whatever the lattice size) and the `.npy` body is the spin
//! buffer itself.

use std::io::{self, Write};
use std::path::Path;

use crate::error::{PottsError, Result};
use crate::lattice::Lattice;
use crate::observables::Measurement;
use crate::protocol::{ProtocolConfig, RunState};

/// The hand-picked leading colours: state 0 a near-black navy (the ordered
/// start's state, so an ordered background stays dark), then well separated
/// categorical colours (the Okabe–Ito colour-blind-safe set first).
const FIXED: [[u8; 3]; 12] = [
    [18, 22, 48],    // near-black navy
    [230, 159, 0],   // orange
    [86, 180, 233],  // sky blue
    [0, 158, 115],   // bluish green
    [240, 228, 66],  // yellow
    [213, 94, 0],    // vermillion
    [204, 121, 167], // reddish purple
    [0, 114, 178],   // blue
    [236, 236, 236], // near white
    [140, 86, 60],   // brown
    [150, 205, 80],  // yellow-green
    [150, 90, 220],  // violet
];

/// Colours for states 0..q: `palette(q)[s]` is the RGB colour of state s.
///
/// The first 12 are a fixed categorical palette (state 0 a near-black navy);
/// further states get golden-angle hues with cycling lightness and
/// saturation. The sequence does not depend on q (`palette(q)` is a prefix of
/// `palette(q + 1)`), so a state has the same colour in every run, and all q
/// colours are distinct for any q up to 256 (the most a byte spin can take;
/// a larger q gives those 256).
///
/// ```
/// let p = warpmc_potts::snapshot::palette(3);
/// assert_eq!(p.len(), 3);
/// assert_ne!(p[1], p[2]);
/// ```
pub fn palette(q: u32) -> Vec<[u8; 3]> {
    let q = q.min(256);
    let mut colours: Vec<[u8; 3]> = Vec::with_capacity(q as usize);
    let mut taken = std::collections::HashSet::with_capacity(q as usize);
    for s in 0..q as usize {
        let mut c = if let Some(&fixed) = FIXED.get(s) {
            fixed
        } else {
            let i = s - FIXED.len();
            let hue = (20.0 + i as f64 * 137.507_764_050_037_85) % 360.0;
            let lightness = [0.55, 0.38, 0.72, 0.47, 0.63][i % 5];
            let saturation = [0.80, 0.60, 0.92][i % 3];
            hsl_to_rgb(hue, saturation, lightness)
        };
        // Guarantee distinctness: nudge a (rare) exact repeat until unique.
        // The nudges visit 768 different colours, more than the at most 255
        // taken ones of a byte-spin palette.
        for step in 0..768usize {
            if !taken.contains(&c) {
                break;
            }
            c[step % 3] = c[step % 3].wrapping_add(7);
        }
        taken.insert(c);
        colours.push(c);
    }
    colours
}

/// HSL (hue in degrees, saturation and lightness in [0, 1]) to 8-bit RGB.
fn hsl_to_rgb(hue: f64, saturation: f64, lightness: f64) -> [u8; 3] {
    let chroma = (1.0 - (2.0 * lightness - 1.0).abs()) * saturation;
    let h = hue / 60.0;
    let x = chroma * (1.0 - (h % 2.0 - 1.0).abs());
    let (r, g, b) = match h as u32 {
        0 => (chroma, x, 0.0),
        1 => (x, chroma, 0.0),
        2 => (0.0, chroma, x),
        3 => (0.0, x, chroma),
        4 => (x, 0.0, chroma),
        _ => (chroma, 0.0, x),
    };
    let m = lightness - chroma / 2.0;
    let to_byte = |v: f64| ((v + m) * 255.0).round().clamp(0.0, 255.0) as u8;
    [to_byte(r), to_byte(g), to_byte(b)]
}

/// An encoder error as an I/O error, keeping the underlying I/O error if any.
fn png_error(err: png::EncodingError) -> io::Error {
    match err {
        png::EncodingError::IoError(e) => e,
        other => io::Error::other(other.to_string()),
    }
}

/// Writes the lattice as an 8-bit RGB PNG: one pixel per site, pixel (x, y)
/// = site (x, y) (image row y is lattice row y), coloured by [`palette`].
///
/// Rows are streamed through the encoder one at a time, so memory stays
/// O(width) for any lattice; compression is png's fast (fdeflate) mode,
/// which is quick on gigapixel lattices and compresses domain pictures well.
/// Each `(key, value)` of `text` becomes a text chunk (UTF-8 `iTXt`), e.g.
/// a run's [`Provenance::text_chunks`](crate::Provenance::text_chunks).
/// Written through [`warpmc_host::output::write`].
///
/// # Errors
///
/// [`PottsError::InvalidInput`] if a dimension is 0 or above 2³¹ − 1 (the
/// PNG limit) or a key is not 1–79 characters long; [`PottsError::Io`]
/// if the file cannot be written.
pub fn write_png(lattice: &Lattice, path: &Path, text: &[(String, String)]) -> Result<()> {
    let (w, h) = (lattice.width(), lattice.height());
    let dim = |d: usize| u32::try_from(d).ok().filter(|&d| d >= 1 && d <= i32::MAX as u32);
    let (Some(pw), Some(ph)) = (dim(w), dim(h)) else {
        return Err(PottsError::InvalidInput(format!(
            "a PNG snapshot needs width and height between 1 and 2^31 - 1, the lattice is {w} x {h}"
        )));
    };
    if let Some((key, _)) = text.iter().find(|(k, _)| k.is_empty() || k.chars().count() > 79) {
        return Err(PottsError::InvalidInput(format!("a PNG text key must have 1 to 79 characters: '{key}'")));
    }
    let colours = palette(lattice.q());
    warpmc_host::output::write(path, |out| {
        let mut encoder = png::Encoder::new(out, pw, ph);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        encoder.set_compression(png::Compression::Fast);
        for (key, value) in text {
            encoder.add_itxt_chunk(key.clone(), value.clone()).map_err(png_error)?;
        }
        let mut writer = encoder.write_header().map_err(png_error)?;
        let mut stream = writer.stream_writer_with_size(1 << 20).map_err(png_error)?;
        let mut rgb = vec![0u8; 3 * w];
        for row in lattice.spins().chunks_exact(w) {
            for (px, &s) in rgb.chunks_exact_mut(3).zip(row) {
                px.copy_from_slice(&colours[s as usize]);
            }
            stream.write_all(&rgb)?;
        }
        stream.finish().map_err(png_error)?;
        writer.finish().map_err(png_error)
    })?;
    Ok(())
}

/// The magic string that opens every `.npy` file.
const NPY_MAGIC: &[u8; 6] = b"\x93NUMPY";

/// The complete `.npy` v1.0 preamble (magic, version, header length, header
/// dict padded with spaces and ending in a newline to a multiple of 64 bytes)
/// for a C-order array of dtype `descr` (e.g. `|u1`, `<f8`) and a shape of
/// two or more axes.
fn npy_header(descr: &str, shape: &[usize]) -> Vec<u8> {
    let axes: Vec<String> = shape.iter().map(usize::to_string).collect();
    let dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': ({}), }}", axes.join(", "));
    let unpadded = NPY_MAGIC.len() + 2 + 2 + dict.len() + 1;
    let total = unpadded.div_ceil(64) * 64;
    let header_len = total - (NPY_MAGIC.len() + 4);
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(NPY_MAGIC);
    out.extend_from_slice(&[1, 0]);
    // The dict of a shape of a few axes is well under 200 bytes: always fits
    // in u16.
    out.extend_from_slice(&(header_len as u16).to_le_bytes());
    out.extend_from_slice(dict.as_bytes());
    out.resize(total - 1, b' ');
    out.push(b'\n');
    out
}

/// Writes the spins as a NumPy `.npy` file (format version 1.0): dtype
/// `|u1`, C order, shape (height, width), so `numpy.load(path)[y, x]` is the
/// spin at column x, row y. The header is padded so that the data starts at
/// a multiple of 64 bytes. Written through [`warpmc_host::output::write`].
///
/// # Errors
///
/// [`PottsError::Io`] if the file cannot be written.
pub fn write_npy(lattice: &Lattice, path: &Path) -> Result<()> {
    let header = npy_header("|u1", &[lattice.height(), lattice.width()]);
    Ok(warpmc_host::output::write(path, |out| {
        out.write_all(&header)?;
        out.write_all(lattice.spins())
    })?)
}

/// Writes the series of a whole study as [`write_series_npy`] lays it out:
/// one slice per size of `study`, in its order, from `state` (sizes not
/// reached yet, and measurements not taken yet, are NaN). `potts run
/// --series` and the Python `series=` both write through here, so their
/// files agree byte for byte.
///
/// # Errors
///
/// [`PottsError::Io`] if the file cannot be written.
///
/// # Panics
///
/// If `study` is empty (a study has at least one size).
pub fn write_study_series(path: &Path, study: &[ProtocolConfig], state: &RunState) -> Result<()> {
    let (runs, shape) = study_series(study, state);
    write_series_npy(path, &runs, shape)
}

/// Whether the file at `path` holds this study's series further along than
/// `state` has it: what [`write_study_series`] would write, but with more
/// measurements taken (see [`series_file_is_further`]).
pub fn study_series_file_is_further(path: &Path, study: &[ProtocolConfig], state: &RunState) -> bool {
    let (runs, shape) = study_series(study, state);
    series_file_is_further(path, &runs, shape)
}

/// A study's series, one per size (sizes not begun empty), and their shape.
fn study_series<'a>(study: &[ProtocolConfig], state: &'a RunState) -> (Vec<&'a [Vec<Vec<Measurement>>]>, SeriesShape) {
    let cfg = study.first().expect("a study has a size");
    let shape = SeriesShape {
        temperatures: cfg.temperatures().len(),
        samples: cfg.samples() as usize,
        measurements: cfg.measurements_per_chain() as usize,
    };
    let mut runs = state.study_series();
    runs.resize(study.len(), &[]);
    (runs, shape)
}

/// Writes the raw measurement series of a run as a NumPy `.npy` file of
/// little-endian float64 (`<f8`), C order, shape
/// `(sizes, temperatures, samples, measurements, 2)`:
/// `a[l, t, s, m] = [energy per site, order parameter]` of measurement `m`
/// of sample `s` at temperature `t` (in run order, as in the results) of
/// lattice size `l` (in the order given). `runs` holds one series per size,
/// as [`RunState::series`](crate::RunState::series) returns it (a study's
/// sizes: [`RunState::study_series`](crate::RunState::study_series); every
/// size of a study has the same temperatures, samples and measurements);
/// measurements not taken yet (a run still going or interrupted) are NaN.
/// Histograms and reweighting start from here.
///
/// # Errors
///
/// [`PottsError::Io`] if the file cannot be written.
pub fn write_series_npy(path: &Path, runs: &[&[Vec<Vec<Measurement>>]], shape: SeriesShape) -> Result<()> {
    let header = series_header(runs, shape);
    Ok(warpmc_host::output::write(path, |out| {
        out.write_all(&header)?;
        series_rows(runs, shape, |row| out.write_all(row))
    })?)
}

/// Whether the file at `path` holds the series `runs` further along: the
/// same header, every measurement taken in `runs` there bit for bit, and
/// more measurements taken besides. A run resumed from a checkpoint older
/// than its series file (a backup, or a last save that failed on a full
/// disk) and stopped again leaves such a file as it is, as it leaves a CSV
/// with more of its rows. Reads the file through once; false for any other
/// file, or one that cannot be read.
pub fn series_file_is_further(path: &Path, runs: &[&[Vec<Vec<Measurement>>]], shape: SeriesShape) -> bool {
    use std::io::Read;
    let header = series_header(runs, shape);
    let SeriesShape { temperatures, samples, measurements } = shape;
    let values = runs.len() as u128 * temperatures as u128 * samples as u128 * measurements as u128 * 2;
    // Only a regular file of exactly this length can be one.
    let expected = header.len() as u128 + values * 8;
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file() && u128::from(m.len()) == expected) {
        return false;
    }
    let Ok(file) = std::fs::File::open(path) else { return false };
    let mut file = std::io::BufReader::with_capacity(1 << 20, file);
    let mut theirs = vec![0u8; header.len()];
    if file.read_exact(&mut theirs).is_err() || theirs != header {
        return false;
    }
    let missing = |pair: &[u8]| pair.chunks_exact(8).all(|v| f64::from_le_bytes(v.try_into().unwrap()).is_nan());
    let mut more = false;
    let compared = series_rows(runs, shape, |ours| {
        theirs.resize(ours.len(), 0);
        file.read_exact(&mut theirs)?;
        for (a, b) in ours.chunks_exact(16).zip(theirs.chunks_exact(16)) {
            if !missing(a) && a != b {
                return Err(std::io::Error::other("another series"));
            }
            more |= missing(a) && !missing(b);
        }
        Ok(())
    });
    compared.is_ok() && more
}

/// The `.npy` preamble of a series file.
fn series_header(runs: &[&[Vec<Vec<Measurement>>]], shape: SeriesShape) -> Vec<u8> {
    npy_header("<f8", &[runs.len(), shape.temperatures, shape.samples, shape.measurements, 2])
}

/// Gives `each` the bytes of a series file after its preamble, a chain's
/// measurements at a time, in file order (NaN for those not taken).
fn series_rows(
    runs: &[&[Vec<Vec<Measurement>>]],
    shape: SeriesShape,
    mut each: impl FnMut(&[u8]) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let SeriesShape { temperatures, samples, measurements } = shape;
    let missing: Vec<u8> = [f64::NAN, f64::NAN].iter().flat_map(|v| v.to_le_bytes()).collect();
    let mut row = Vec::with_capacity(measurements * 16);
    for series in runs {
        for t in 0..temperatures {
            for s in 0..samples {
                row.clear();
                let taken = series.get(t).and_then(|per_sample| per_sample.get(s)).map_or(&[][..], Vec::as_slice);
                for m in 0..measurements {
                    match taken.get(m) {
                        Some(x) => {
                            row.extend_from_slice(&x.energy.to_le_bytes());
                            row.extend_from_slice(&x.magnetization.to_le_bytes());
                        }
                        None => row.extend_from_slice(&missing),
                    }
                }
                each(&row)?;
            }
        }
    }
    Ok(())
}

/// The axes of a series file after the size axis: the run's temperatures,
/// its samples per temperature and the measurements of each chain
/// ([`ProtocolConfig::measurements_per_chain`](crate::ProtocolConfig::measurements_per_chain)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeriesShape {
    /// Temperatures of the run.
    pub temperatures: usize,
    /// Samples per temperature.
    pub samples: usize,
    /// Measurements per chain.
    pub measurements: usize,
}

/// The fields of an `.npy` header dict this module understands.
#[derive(Debug, Default)]
struct NpyHeader {
    descr: Option<String>,
    fortran_order: Option<bool>,
    shape: Option<Vec<usize>>,
}

/// A minimal parser for the Python dict literal of an `.npy` header, e.g.
/// `{'descr': '|u1', 'fortran_order': False, 'shape': (4, 6), }`: string
/// keys, values a string, `True`/`False` or a tuple of integers.
struct DictParser<'a> {
    text: &'a [u8],
    pos: usize,
}

impl DictParser<'_> {
    fn skip_space(&mut self) {
        while self.pos < self.text.len() && self.text[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    /// Consumes `c` (after optional whitespace) if it is next.
    fn eat(&mut self, c: u8) -> bool {
        self.skip_space();
        let found = self.text.get(self.pos) == Some(&c);
        if found {
            self.pos += 1;
        }
        found
    }

    fn expect(&mut self, c: u8) -> std::result::Result<(), String> {
        if self.eat(c) { Ok(()) } else { Err(format!("expected '{}' at byte {} of the header", c as char, self.pos)) }
    }

    fn string(&mut self) -> std::result::Result<String, String> {
        self.skip_space();
        let quote = match self.text.get(self.pos) {
            Some(&q @ (b'\'' | b'"')) => q,
            _ => return Err(format!("expected a string at byte {} of the header", self.pos)),
        };
        let start = self.pos + 1;
        let len = self.text[start..]
            .iter()
            .position(|&c| c == quote)
            .ok_or_else(|| "unterminated string in the header".to_string())?;
        self.pos = start + len + 1;
        Ok(String::from_utf8_lossy(&self.text[start..start + len]).into_owned())
    }

    fn word(&mut self) -> &[u8] {
        self.skip_space();
        let start = self.pos;
        while self.pos < self.text.len() && (self.text[self.pos].is_ascii_alphanumeric() || self.text[self.pos] == b'_')
        {
            self.pos += 1;
        }
        &self.text[start..self.pos]
    }

    fn boolean(&mut self) -> std::result::Result<bool, String> {
        match self.word() {
            b"True" => Ok(true),
            b"False" => Ok(false),
            other => Err(format!("expected True or False, found '{}'", String::from_utf8_lossy(other))),
        }
    }

    fn tuple(&mut self) -> std::result::Result<Vec<usize>, String> {
        self.expect(b'(')?;
        let mut items = Vec::new();
        while !self.eat(b')') {
            let word = self.word();
            let text = String::from_utf8_lossy(word).into_owned();
            let value = text.trim_end_matches('L').parse::<usize>().map_err(|_| format!("bad shape entry '{text}'"))?;
            items.push(value);
            if !self.eat(b',') {
                self.expect(b')')?;
                break;
            }
        }
        Ok(items)
    }

    fn parse(mut self) -> std::result::Result<NpyHeader, String> {
        let mut header = NpyHeader::default();
        self.expect(b'{')?;
        while !self.eat(b'}') {
            let key = self.string()?;
            self.expect(b':')?;
            match key.as_str() {
                "descr" => header.descr = Some(self.string()?),
                "fortran_order" => header.fortran_order = Some(self.boolean()?),
                "shape" => header.shape = Some(self.tuple()?),
                other => return Err(format!("unexpected key '{other}' in the header")),
            }
            if !self.eat(b',') {
                self.expect(b'}')?;
                break;
            }
        }
        self.skip_space();
        if self.pos != self.text.len() {
            return Err("trailing text after the header dict".into());
        }
        Ok(header)
    }
}

/// Reads a file written by [`write_npy`]: returns `(width, height, spins)`
/// (the argument order of `Lattice::from_spins`; the array's shape is
/// (height, width)) with the spins row-major.
///
/// Accepts `.npy` format versions 1.0, 2.0 and 3.0 holding a 2-D, C-ordered
/// array of unsigned bytes (dtype `|u1`, `u1`, `<u1`, `>u1` or `=u1`), which
/// is what `numpy.save` writes for a `uint8` array; anything else is refused
/// with a message saying why.
///
/// # Errors
///
/// [`PottsError::Io`] if the file cannot be read or is not such an array
/// (bad magic, other dtype, Fortran order, not 2-D, wrong data length).
pub fn read_npy(path: &Path) -> Result<SpinArray> {
    let bytes = std::fs::read(path).map_err(|e| PottsError::io(path, e))?;
    let (width, height, spins) =
        parse_npy(bytes).map_err(|msg| PottsError::io(path, io::Error::new(io::ErrorKind::InvalidData, msg)))?;
    Ok(SpinArray { width, height, spins })
}

/// A 2-D array of spins read from a `.npy` file (q is not stored there:
/// see [`Lattice::from_spins`](crate::Lattice::from_spins)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpinArray {
    /// Columns.
    pub width: usize,
    /// Rows.
    pub height: usize,
    /// Row-major spins.
    pub spins: Vec<u8>,
}

/// The body of [`read_npy`], errors as messages.
fn parse_npy(mut bytes: Vec<u8>) -> std::result::Result<(usize, usize, Vec<u8>), String> {
    if bytes.len() < 10 || &bytes[..6] != NPY_MAGIC {
        return Err("not a NumPy .npy file (bad magic)".into());
    }
    let (header_len, start): (usize, usize) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 if bytes.len() >= 12 => (u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize, 12),
        major => return Err(format!("unsupported .npy format version {major}.{}", bytes[7])),
    };
    let end = start.checked_add(header_len).filter(|&e| e <= bytes.len()).ok_or("truncated .npy header")?;
    let header =
        DictParser { text: &bytes[start..end], pos: 0 }.parse().map_err(|e| format!("bad .npy header: {e}"))?;
    let descr = header.descr.ok_or("the .npy header has no 'descr'")?;
    if !matches!(descr.as_str(), "|u1" | "u1" | "<u1" | ">u1" | "=u1") {
        return Err(format!("dtype '{descr}' is not supported: expected unsigned bytes ('|u1')"));
    }
    if header.fortran_order.ok_or("the .npy header has no 'fortran_order'")? {
        return Err("Fortran-ordered arrays are not supported: save with fortran_order False (C order)".into());
    }
    let shape = header.shape.ok_or("the .npy header has no 'shape'")?;
    let &[height, width] = shape.as_slice() else {
        return Err(format!("expected a 2-D array (height, width), found shape {shape:?}"));
    };
    let expected = height.checked_mul(width).ok_or("array shape too large")?;
    let data_len = bytes.len() - end;
    if data_len != expected {
        return Err(format!("shape ({height}, {width}) needs {expected} data bytes but the file has {data_len}"));
    }
    bytes.drain(..end);
    Ok((width, height, bytes))
}

/// Writes a snapshot in the format named by the file extension: `.png`
/// ([`write_png`], with `text` as text chunks) or `.npy` ([`write_npy`]:
/// the format has no place for `text`, which numpy's reader would refuse),
/// case-insensitive.
///
/// # Errors
///
/// [`PottsError::InvalidInput`] for any other extension; otherwise as the
/// writer it dispatches to.
pub fn write_snapshot(lattice: &Lattice, path: &Path, text: &[(String, String)]) -> Result<()> {
    let extension = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    match extension.as_deref() {
        Some("png") => write_png(lattice, path, text),
        Some("npy") => write_npy(lattice, path),
        _ => Err(PottsError::InvalidInput(format!("snapshot file must end in .png or .npy: {}", path.display()))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::File;
    use std::path::PathBuf;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Files in `path`'s directory other than `path` whose names start with
    /// the temporary prefix: what a failed or finished write left behind.
    fn leftovers(path: &Path) -> usize {
        let dir = path.parent().unwrap();
        std::fs::read_dir(dir)
            .map_or(0, |d| d.flatten().filter(|e| e.file_name().to_string_lossy().starts_with(".warpmc-")).count())
    }

    /// A fresh path `name` in a directory of its own.
    fn temp_file(name: &str) -> PathBuf {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = warpmc_testkit::scratch_dir("snapshot").join(n.to_string());
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(name)
    }

    /// A 6 × 4 lattice whose spins differ along both axes.
    fn awkward() -> Lattice {
        let spins: Vec<u8> = (0..24u32).map(|i| ((i * 7 + i / 6) % 5) as u8).collect();
        Lattice::from_spins(6, 4, 5, spins).unwrap()
    }

    #[test]
    fn palette_is_distinct_and_stable() {
        for q in [0u32, 1, 2, 3, 12, 13, 64, 255, 256] {
            let p = palette(q);
            assert_eq!(p.len(), q as usize);
            for i in 0..p.len() {
                for j in 0..i {
                    assert_ne!(p[i], p[j], "q={q}: states {j} and {i} share a colour");
                }
            }
        }
        let big = palette(256);
        assert_eq!(palette(20)[..], big[..20]);
        let dark = big[0].iter().map(|&c| c as u32).sum::<u32>();
        assert!(dark < 120);
        // The hand-picked colours are well separated.
        let p = palette(12);
        for i in 0..12 {
            for j in 0..i {
                let d: i32 = (0..3).map(|c| (p[i][c] as i32 - p[j][c] as i32).abs()).sum();
                assert!(d > 60, "{i} and {j}: {d}");
            }
        }
    }

    #[test]
    fn npy_round_trip_and_header() {
        let lattice = awkward();
        let path = temp_file("round.npy");
        write_npy(&lattice, &path).unwrap();
        assert_eq!(leftovers(&path), 0);
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00");
        let header_len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
        assert_eq!((10 + header_len) % 64, 0);
        assert_eq!(bytes.len(), 10 + header_len + 24);
        let text = std::str::from_utf8(&bytes[10..10 + header_len]).unwrap();
        assert!(text.ends_with('\n'));
        assert_eq!(text.trim_end(), "{'descr': '|u1', 'fortran_order': False, 'shape': (4, 6), }");
        assert_eq!(&bytes[10 + header_len..], lattice.spins());

        let SpinArray { width: w, height: h, spins } = read_npy(&path).unwrap();
        assert_eq!((w, h), (6, 4));
        assert_eq!(Lattice::from_spins(w, h, 5, spins).unwrap(), lattice);

        // Overwriting an existing snapshot works.
        let other = Lattice::from_spins(2, 2, 2, vec![1, 0, 0, 1]).unwrap();
        write_npy(&other, &path).unwrap();
        assert_eq!(read_npy(&path).unwrap(), SpinArray { width: 2, height: 2, spins: vec![1, 0, 0, 1] });
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn npy_header_lengths() {
        for (w, h) in [(1, 1), (6, 4), (123_456_789, 987_654_321), (usize::MAX, usize::MAX)] {
            let header = npy_header("|u1", &[h, w]);
            assert_eq!(header.len() % 64, 0);
            assert_eq!(*header.last().unwrap(), b'\n');
            assert_eq!(u16::from_le_bytes([header[8], header[9]]) as usize, header.len() - 10);
        }
    }

    /// Builds an .npy file from a header dict and data, version 1.0.
    fn handmade(dict: &str, data: &[u8]) -> Vec<u8> {
        let mut text = dict.to_string();
        while !(10 + text.len() + 1).is_multiple_of(64) {
            text.push(' ');
        }
        text.push('\n');
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend_from_slice(&(text.len() as u16).to_le_bytes());
        out.extend_from_slice(text.as_bytes());
        out.extend_from_slice(data);
        out
    }

    #[test]
    fn npy_reader_accepts_variants_and_refuses_the_rest() {
        // Other key order, double quotes, no trailing comma, version 2.0.
        let ok = handmade(r#"{"shape": (2, 3), "fortran_order": False, "descr": "<u1"}"#, &[1, 2, 3, 4, 5, 6]);
        assert_eq!(parse_npy(ok.clone()).unwrap(), (3, 2, vec![1, 2, 3, 4, 5, 6]));
        let mut v2 = b"\x93NUMPY\x02\x00".to_vec();
        v2.extend_from_slice(&((ok.len() - 10 - 6) as u32).to_le_bytes());
        v2.extend_from_slice(&ok[10..]);
        assert_eq!(parse_npy(v2).unwrap(), (3, 2, vec![1, 2, 3, 4, 5, 6]));

        let cases: [(Vec<u8>, &str); 8] = [
            (b"PK\x03\x04 not numpy".to_vec(), "magic"),
            (handmade("{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1), }", &[0; 8]), "dtype '<f8'"),
            (handmade("{'descr': '|u1', 'fortran_order': True, 'shape': (2, 2), }", &[0; 4]), "Fortran"),
            (handmade("{'descr': '|u1', 'fortran_order': False, 'shape': (2, 2, 2), }", &[0; 8]), "2-D"),
            (handmade("{'descr': '|u1', 'fortran_order': False, 'shape': (2, 2), }", &[0; 3]), "needs 4 data bytes"),
            (handmade("{'descr': '|u1', 'fortran_order': False, 'shape': (2, 2), }", &[0; 5]), "has 5"),
            (handmade("{'descr': '|u1', 'shape': (2, 2), }", &[0; 4]), "no 'fortran_order'"),
            (handmade("{'descr': '|u1', 'fortran_order': False, 'shape': (2, x), }", &[0; 4]), "bad shape entry"),
        ];
        for (bytes, expected) in cases {
            let err = parse_npy(bytes).unwrap_err();
            assert!(err.contains(expected), "'{err}' should mention '{expected}'");
        }

        let path = temp_file("bad.npy");
        std::fs::write(&path, b"hello").unwrap();
        let err = read_npy(&path).unwrap_err();
        assert!(matches!(err, PottsError::Io { .. }));
        assert!(err.to_string().contains("bad.npy") && err.to_string().contains("magic"), "{err}");
        std::fs::remove_file(&path).unwrap();
        assert!(read_npy(&path).is_err());
    }

    #[test]
    fn png_decodes_to_the_palette() {
        let lattice = awkward();
        let path = temp_file("picture.png");
        write_png(&lattice, &path, &[]).unwrap();
        assert_eq!(leftovers(&path), 0);
        let decoder = png::Decoder::new(io::BufReader::new(File::open(&path).unwrap()));
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0u8; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!((info.width, info.height), (6, 4));
        assert_eq!((info.color_type, info.bit_depth), (png::ColorType::Rgb, png::BitDepth::Eight));
        let colours = palette(5);
        for y in 0..4 {
            for x in 0..6 {
                let i = y * info.line_size + 3 * x;
                assert_eq!(buf[i..i + 3], colours[lattice.get(x, y) as usize], "pixel ({x}, {y})");
            }
        }
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn png_streams_many_rows() {
        // Rows spanning several stream buffers; q = 200 uses generated colours.
        let (w, h) = (1500usize, 700usize);
        let spins: Vec<u8> = (0..w * h).map(|i| ((i / 7 + i / w) % 200) as u8).collect();
        let lattice = Lattice::from_spins(w, h, 200, spins).unwrap();
        let path = temp_file("big.PNG");
        write_snapshot(&lattice, &path, &[]).unwrap();
        let decoder = png::Decoder::new(io::BufReader::new(File::open(&path).unwrap()));
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0u8; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!((info.width as usize, info.height as usize), (w, h));
        let colours = palette(200);
        let expected: Vec<u8> = lattice.spins().iter().flat_map(|&s| colours[s as usize]).collect();
        assert_eq!(buf, expected);
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn snapshot_dispatches_on_extension() {
        let lattice = awkward();
        let npy = temp_file("upper.NPY");
        write_snapshot(&lattice, &npy, &[]).unwrap();
        assert_eq!(read_npy(&npy).unwrap().spins, lattice.spins());
        std::fs::remove_file(&npy).unwrap();

        for name in ["picture.jpg", "no_extension", "archive.npz"] {
            let path = temp_file(name);
            let err = write_snapshot(&lattice, &path, &[]).unwrap_err();
            assert!(matches!(err, PottsError::InvalidInput(_)));
            assert!(err.to_string().starts_with("snapshot file must end in .png or .npy: "), "{err}");
            assert!(err.to_string().contains(name));
            assert!(!path.exists());
        }
    }

    #[test]
    fn failed_write_leaves_nothing_behind() {
        let dir = temp_file("missing-dir");
        let path = dir.join("x.npy");
        let err = write_npy(&awkward(), &path).unwrap_err();
        assert!(matches!(err, PottsError::Output(_)), "{err:?}");
        assert!(!dir.exists());
        let empty = Lattice::from_spins(0, 3, 2, vec![]).unwrap();
        assert!(matches!(write_png(&empty, &temp_file("empty.png"), &[]), Err(PottsError::InvalidInput(_))));
    }
}
