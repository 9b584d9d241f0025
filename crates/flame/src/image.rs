//! PNG output (8 or 16 bits per channel, RGB or RGBA, with flam3-style text
//! chunks), PNG input, and image comparison (PSNR) for fidelity checks.
//!
//! ```
//! use warpmc_flame::image::{Bits, decode_png, encode_png, psnr};
//! use warpmc_flame::render::{RenderStats, RenderedFrame};
//!
//! let frame = RenderedFrame {
//!     width: 2,
//!     height: 1,
//!     pixels: vec![[255.0, 128.0, 0.0, 1.0], [0.0, 0.0, 0.0, 1.0]],
//!     transparent: false,
//!     stats: RenderStats::default(),
//! };
//! let text = [("flam3_samples".to_string(), "2".to_string())];
//! let png = encode_png(&frame, Bits::Eight, &text)?;
//! let image = decode_png(&png)?;
//! assert_eq!(image.pixels[0], [255.0, 128.0, 0.0, 1.0]);
//! assert_eq!(image.text, text);
//! assert_eq!(psnr(&image, &image)?, f64::INFINITY);
//! # Ok::<(), warpmc_flame::FlameError>(())
//! ```

use std::io;
use std::path::Path;

use crate::error::{FlameError, Result};
use crate::render::RenderedFrame;

/// Bits per channel of an output PNG.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Bits {
    /// 8 bits (flam3's default).
    #[default]
    Eight,
    /// 16 bits; values are 256× the 8-bit scale, as flam3 writes them.
    Sixteen,
}

/// A frame quantised for a PNG: interleaved samples, `channels` per pixel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Quantized {
    /// Row-major samples, `channels` per pixel, on the scale of the
    /// [`Bits`] asked for.
    pub samples: Vec<u16>,
    /// 3 (RGB), or 4 (RGBA) when the frame is transparent.
    pub channels: usize,
}

/// Quantises a rendered frame as flam3 does (truncation; 16-bit values are
/// 256× the 8-bit scale): 3 channels, or 4 when the frame is transparent.
pub fn quantize(frame: &RenderedFrame, bits: Bits) -> Quantized {
    let channels = if frame.transparent { 4 } else { 3 };
    let mut samples = Vec::with_capacity(frame.pixels.len() * channels);
    for p in &frame.pixels {
        samples.extend((0..channels).map(|c| sample(p, c, bits)));
    }
    Quantized { samples, channels }
}

/// Quantises a rendered frame to 4 samples per pixel (RGBA) on the scale
/// of `bits`, the values [`quantize`] gives; an opaque frame (not
/// transparent) gets alpha at its maximum, as its PNG is shown.
pub fn quantize_rgba(frame: &RenderedFrame, bits: Bits) -> Vec<u16> {
    let opaque = match bits {
        Bits::Eight => u16::from(u8::MAX),
        Bits::Sixteen => u16::MAX,
    };
    let mut samples = Vec::with_capacity(frame.pixels.len() * 4);
    for p in &frame.pixels {
        samples.extend((0..3).map(|c| sample(p, c, bits)));
        samples.push(if frame.transparent { sample(p, 3, bits) } else { opaque });
    }
    samples
}

/// Channel `c` of pixel `p` quantised as flam3 does.
#[inline]
fn sample(p: &[f64; 4], c: usize, bits: Bits) -> u16 {
    if c < 3 {
        let v = p[c].clamp(0.0, 255.0);
        match bits {
            Bits::Eight => v as u8 as u16,
            Bits::Sixteen => (v * 256.0) as u16,
        }
    } else {
        let a = p[3].clamp(0.0, 1.0);
        match bits {
            Bits::Eight => (a * 255.0) as u16,
            Bits::Sixteen => (a * 65535.0) as u16,
        }
    }
}

/// Host memory [`encode_png`] takes for a `width × height` image of
/// `channels` channels: the image data, and at worst twice as much each
/// for the compressed stream and the PNG as their buffers grow.
pub fn encoding_bytes(width: u32, height: u32, channels: usize, bits: Bits) -> u64 {
    let depth = match bits {
        Bits::Eight => 1,
        Bits::Sixteen => 2,
    };
    let raw = (u64::from(width) * channels as u64 * depth + 1).saturating_mul(u64::from(height));
    raw.saturating_mul(5).saturating_add(1 << 16)
}

/// An [`FlameError::OutOfHostMemory`] naming `what` unless `bytes` fit
/// in what the process may still allocate.
fn check_memory(what: &str, bytes: u64) -> Result<()> {
    warpmc_host::check_allocation(what, bytes).map_err(FlameError::OutOfHostMemory)
}

/// A vector of `n` bytes, or an [`FlameError::OutOfHostMemory`] naming
/// `what`.
fn try_bytes(n: usize, what: &str) -> Result<Vec<u8>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| {
        FlameError::OutOfHostMemory(format!("{what}: cannot allocate {}", warpmc_host::memory::human_bytes(n as u64)))
    })?;
    v.resize(n, 0);
    Ok(v)
}

fn encoding_error(e: png::EncodingError) -> FlameError {
    FlameError::Png(format!("cannot encode the PNG: {e}"))
}

/// How hard a PNG's data is compressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PngCompression {
    /// zlib-style deflate (the png crate's balanced level): the smallest
    /// files of the two, about half a second for a 1080p frame on one core.
    #[default]
    Balanced,
    /// A fast deflate: files about a third larger, written some forty
    /// times faster (for animation frames).
    Fast,
}

/// Encodes `frame` as a PNG in memory, with `text` as tEXt chunks (key,
/// value). The memory it takes ([`encoding_bytes`]) is checked first.
pub fn encode_png(frame: &RenderedFrame, bits: Bits, text: &[(String, String)]) -> Result<Vec<u8>> {
    encode_png_with(frame, bits, text, &[], PngCompression::Balanced)
}

/// [`encode_png`] with `compressed` as compressed text chunks too (zTXt,
/// as flam3 stores its `flam3_genome`, or compressed iTXt for text that is
/// not Latin-1), and the given compression of the image data.
pub fn encode_png_with(
    frame: &RenderedFrame,
    bits: Bits,
    text: &[(String, String)],
    compressed: &[(String, String)],
    compression: PngCompression,
) -> Result<Vec<u8>> {
    let channels = if frame.transparent { 4 } else { 3 };
    let what = format!("encoding a {} × {} PNG", frame.width, frame.height);
    check_memory(&what, encoding_bytes(frame.width, frame.height, channels, bits))?;
    let mut out = Vec::new();
    let mut enc = png::Encoder::new(&mut out, frame.width, frame.height);
    enc.set_color(if channels == 4 { png::ColorType::Rgba } else { png::ColorType::Rgb });
    enc.set_depth(match bits {
        Bits::Eight => png::BitDepth::Eight,
        Bits::Sixteen => png::BitDepth::Sixteen,
    });
    enc.set_compression(match compression {
        PngCompression::Balanced => png::Compression::Balanced,
        PngCompression::Fast => png::Compression::Fast,
    });
    for (k, v) in text {
        enc.add_text_chunk(k.clone(), v.clone()).map_err(encoding_error)?;
    }
    for (k, v) in compressed {
        if v.chars().all(|c| u32::from(c) < 256) {
            enc.add_ztxt_chunk(k.clone(), v.clone()).map_err(encoding_error)?;
        } else {
            enc.add_itxt_chunk(k.clone(), v.clone()).map_err(encoding_error)?;
        }
    }
    let mut w = enc.write_header().map_err(encoding_error)?;
    // The samples straight into the image data, as `quantize` gives them.
    let depth = if bits == Bits::Sixteen { 2 } else { 1 };
    let mut bytes = try_bytes(frame.pixels.len() * channels * depth, &what)?;
    for (p, out) in frame.pixels.iter().zip(bytes.chunks_exact_mut(channels * depth)) {
        for c in 0..channels {
            let v = sample(p, c, bits);
            match bits {
                Bits::Eight => out[c] = v as u8,
                Bits::Sixteen => out[2 * c..2 * c + 2].copy_from_slice(&v.to_be_bytes()),
            }
        }
    }
    w.write_image_data(&bytes).map_err(encoding_error)?;
    w.finish().map_err(encoding_error)?;
    Ok(out)
}

/// Writes `frame` as a PNG at `path` ([`encode_png`]) through
/// [`warpmc_host::output::write_bytes`]: a regular file is replaced
/// atomically and keeps its permissions, a symlink is written through, a
/// device or FIFO is written in place.
pub fn write_png(frame: &RenderedFrame, bits: Bits, path: &Path, text: &[(String, String)]) -> Result<()> {
    let png = encode_png(frame, bits, text)?;
    Ok(warpmc_host::output::write_bytes(path, &png)?)
}

/// The image formats written, chosen by the output's extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageFormat {
    /// `.png`, or a path without an extension (a device, a FIFO).
    Png,
    /// `.jpg` or `.jpeg`: 8-bit RGB.
    Jpeg,
    /// `.ppm`: binary Netpbm RGB (P6), 8 or 16 bits, as flam3-render's
    /// `format=ppm` writes it (8 bits there).
    Ppm,
}

impl ImageFormat {
    /// The format `path`'s extension names (case-insensitive); an error
    /// for an extension that is neither.
    pub fn from_path(path: &Path) -> Result<Self> {
        match path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase()) {
            None => Ok(ImageFormat::Png),
            Some(e) if e == "png" => Ok(ImageFormat::Png),
            Some(e) if e == "jpg" || e == "jpeg" => Ok(ImageFormat::Jpeg),
            Some(e) if e == "ppm" => Ok(ImageFormat::Ppm),
            Some(e) => Err(FlameError::invalid(format!(
                "{}: unknown image extension '.{e}' (warpmc writes .png, .jpg, .jpeg and .ppm)",
                path.display()
            ))),
        }
    }
}

/// The largest side of a JPEG image.
pub const JPEG_MAX_SIDE: u32 = u16::MAX as u32;

/// flam3's JPEG quality when none is asked for (libjpeg's default; the
/// `jpeg` environment variable of flam3-render changes it).
pub const JPEG_DEFAULT_QUALITY: u8 = 75;

/// Encodes `frame` as a baseline JPEG of `quality` (1 to 100), 8-bit
/// RGB, quantised as for a PNG, as flam3 writes it through libjpeg: the
/// standard quantisation tables scaled to `quality` (flam3's default is
/// libjpeg's 75, [`JPEG_DEFAULT_QUALITY`]) and chroma sampled at half
/// resolution both ways (4:2:0). A transparent frame's colours are written
/// without their alpha.
pub fn encode_jpeg(frame: &RenderedFrame, quality: u8) -> Result<Vec<u8>> {
    encode_jpeg_with(frame, quality, &[])
}

/// The most bytes of one JPEG comment segment.
pub const JPEG_MAX_COMMENT: usize = u16::MAX as usize - 2;

/// [`encode_jpeg`] with a comment segment `key: value` for each of
/// `comments`, as flam3 writes `flam3_genome`, `flam3_samples`, … into its
/// JPEGs. A comment longer than [`JPEG_MAX_COMMENT`] bytes is left out
/// (a cut genome would not read).
pub fn encode_jpeg_with(frame: &RenderedFrame, quality: u8, comments: &[(String, String)]) -> Result<Vec<u8>> {
    let image = encode_jpeg_plain(frame, quality)?;
    let mut segments = Vec::new();
    for (k, v) in comments {
        let body = format!("{k}: {v}");
        if body.len() > JPEG_MAX_COMMENT {
            continue;
        }
        segments.extend_from_slice(&[0xff, 0xfe]);
        segments.extend_from_slice(&((body.len() + 2) as u16).to_be_bytes());
        segments.extend_from_slice(body.as_bytes());
    }
    // The comments go right after the start-of-image marker.
    let mut out = Vec::with_capacity(image.len() + segments.len());
    out.extend_from_slice(&image[..2]);
    out.extend_from_slice(&segments);
    out.extend_from_slice(&image[2..]);
    Ok(out)
}

/// The JPEG without comments.
fn encode_jpeg_plain(frame: &RenderedFrame, quality: u8) -> Result<Vec<u8>> {
    let (w, h) = (frame.width, frame.height);
    if w > JPEG_MAX_SIDE || h > JPEG_MAX_SIDE {
        return Err(FlameError::invalid(format!(
            "a {w} × {h} image is larger than a JPEG can be ({JPEG_MAX_SIDE} pixels a side)"
        )));
    }
    let what = format!("encoding a {w} × {h} JPEG");
    check_memory(&what, encoding_bytes(w, h, 3, Bits::Eight))?;
    let mut rgb = try_bytes(frame.pixels.len() * 3, &what)?;
    for (p, out) in frame.pixels.iter().zip(rgb.chunks_exact_mut(3)) {
        for (c, o) in out.iter_mut().enumerate() {
            *o = sample(p, c, Bits::Eight) as u8;
        }
    }
    let mut out = Vec::new();
    let mut enc = jpeg_encoder::Encoder::new(&mut out, quality.clamp(1, 100));
    enc.set_sampling_factor(jpeg_encoder::SamplingFactor::R_4_2_0);
    enc.encode(&rgb, w as u16, h as u16, jpeg_encoder::ColorType::Rgb)
        .map_err(|e| FlameError::Png(format!("cannot encode the JPEG: {e}")))?;
    Ok(out)
}

/// Encodes `frame` as a binary PPM (P6): RGB samples quantised as for a
/// PNG of `bits`, 16-bit samples most significant byte first (maxval
/// 65535), as Netpbm defines it. A transparent frame's colours are written
/// without their alpha; PPM has no comments that flam3 reads, so no genome
/// is stored.
pub fn encode_ppm(frame: &RenderedFrame, bits: Bits) -> Result<Vec<u8>> {
    let (w, h) = (frame.width, frame.height);
    let what = format!("encoding a {w} × {h} PPM");
    if frame.pixels.len() as u64 != w as u64 * h as u64 {
        return Err(FlameError::Png(format!("{what}: the frame holds {} pixels, not {w} × {h}", frame.pixels.len())));
    }
    check_memory(&what, encoding_bytes(w, h, 3, bits))?;
    let (maxval, depth) = match bits {
        Bits::Eight => (255, 1),
        Bits::Sixteen => (65535, 2),
    };
    let header = format!("P6\n{w} {h}\n{maxval}\n");
    let mut out = try_bytes(header.len() + frame.pixels.len() * 3 * depth, &what)?;
    out[..header.len()].copy_from_slice(header.as_bytes());
    for (p, px) in frame.pixels.iter().zip(out[header.len()..].chunks_exact_mut(3 * depth)) {
        for c in 0..3 {
            let v = sample(p, c, bits);
            match bits {
                Bits::Eight => px[c] = v as u8,
                Bits::Sixteen => px[2 * c..2 * c + 2].copy_from_slice(&v.to_be_bytes()),
            }
        }
    }
    Ok(out)
}

/// [`write_png`] with the given compression and compressed text chunks
/// ([`encode_png_with`]).
pub fn write_png_with(
    frame: &RenderedFrame,
    bits: Bits,
    path: &Path,
    text: &[(String, String)],
    compressed: &[(String, String)],
    compression: PngCompression,
) -> Result<()> {
    let png = encode_png_with(frame, bits, text, compressed, compression)?;
    Ok(warpmc_host::output::write_bytes(path, &png)?)
}

/// A decoded image: RGB on the 8-bit scale (16-bit files divided by 256),
/// alpha in [0, 1] (1 when the file has none), and the text chunks.
#[derive(Clone, Debug)]
pub struct LoadedImage {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Row-major `[r, g, b, alpha]`.
    pub pixels: Vec<[f64; 4]>,
    /// tEXt / zTXt / iTXt chunks, (key, value).
    pub text: Vec<(String, String)>,
}

/// Reads a PNG file (gray, gray+alpha, RGB, RGBA, palette; 8 or 16 bits).
pub fn read_png(path: &Path) -> Result<LoadedImage> {
    let bytes = crate::input::read_file(path, crate::input::MAX_IMAGE_BYTES, "PNG image")?;
    decode_png(&bytes).map_err(|e| match e {
        FlameError::Png(msg) => FlameError::Png(format!("{}: {msg}", path.display())),
        FlameError::OutOfHostMemory(msg) => FlameError::OutOfHostMemory(format!("{}: {msg}", path.display())),
        e => e,
    })
}

/// A PNG file opened and read up to its pixel data, its text chunks (a
/// frame's genome) skipped.
fn png_reader(path: &Path) -> Result<png::Reader<io::BufReader<std::fs::File>>> {
    let file = std::fs::File::open(path).map_err(|error| FlameError::Io {
        path: path.to_path_buf(),
        action: "read",
        error,
    })?;
    let mut dec = png::Decoder::new(io::BufReader::new(file));
    dec.set_ignore_text_chunk(true);
    dec.read_info().map_err(|e| FlameError::Png(format!("{}: not a readable PNG ({e})", path.display())))
}

/// What a PNG file holds: its size, samples per pixel and bits per sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PngLayout {
    /// Pixels per row.
    pub width: u32,
    /// Rows.
    pub height: u32,
    /// 1 (grey), 2 (grey and alpha), 3 (RGB) or 4 (RGBA); 1 for a
    /// palette image.
    pub channels: usize,
    /// 1, 2, 4, 8 or 16.
    pub bits: u8,
}

/// The layout of a PNG file that is whole: its pixel data decompresses
/// completely, every chunk's checksum is right and its end marker is there
/// (a file cut short or damaged in a copy is an error, as is one that is
/// no PNG). The pixels are decoded but not kept.
pub fn whole_png_layout(path: &Path) -> Result<PngLayout> {
    let mut reader = png_reader(path)?;
    let info = reader.info();
    let (width, height) = info.size();
    let layout = PngLayout { width, height, channels: info.color_type.samples(), bits: info.bit_depth as u8 };
    let size = reader.output_buffer_size().ok_or_else(|| FlameError::Png("image too large".into()))?;
    let what = format!("a {width} × {height} image");
    check_memory(&what, size as u64)?;
    let mut buf = try_bytes(size, &what)?;
    let damaged = |e: png::DecodingError| FlameError::Png(format!("{}: a damaged PNG ({e})", path.display()));
    reader.next_frame(&mut buf).map_err(damaged)?;
    reader.finish().map_err(damaged)?;
    Ok(layout)
}

/// The most text, in bytes, a PNG read here may hold in all its text
/// chunks once inflated: room for the genome of a frame of tens of
/// thousands of xforms, far short of what a small file can inflate to.
pub const MAX_PNG_TEXT_BYTES: usize = 64 << 20;

/// Decodes a PNG held in memory, as [`read_png`] reads a file.
pub fn decode_png(bytes: &[u8]) -> Result<LoadedImage> {
    decode_png_within(bytes, MAX_PNG_TEXT_BYTES)
}

/// [`decode_png`] with at most `max_text` bytes of text.
fn decode_png_within(bytes: &[u8], max_text: usize) -> Result<LoadedImage> {
    let mut dec = png::Decoder::new(io::Cursor::new(bytes));
    dec.set_transformations(png::Transformations::EXPAND);
    let mut reader = dec.read_info().map_err(|e| FlameError::Png(format!("not a readable PNG ({e})")))?;
    // The size the header declares is checked before anything of that size
    // is allocated: the decoded data and the pixels (four f64 each).
    let (width, height) = reader.info().size();
    let size = reader.output_buffer_size().ok_or_else(|| FlameError::Png("image too large".into()))?;
    let what = format!("a {width} × {height} image");
    check_memory(&what, (size as u64).saturating_add((u64::from(width) * u64::from(height)).saturating_mul(32)))?;
    let mut buf = try_bytes(size, &what)?;
    let info = reader.next_frame(&mut buf).map_err(|e| FlameError::Png(format!("corrupt PNG data ({e})")))?;
    let channels = info.color_type.samples();
    let sixteen = info.bit_depth == png::BitDepth::Sixteen;
    let (w, h) = (info.width as usize, info.height as usize);
    let mut pixels = Vec::new();
    pixels
        .try_reserve_exact(w * h)
        .map_err(|_| FlameError::OutOfHostMemory(format!("{what}: cannot allocate {} for its pixels", w * h * 32)))?;
    for y in 0..h {
        let line = &buf[y * info.line_size..];
        for x in 0..w {
            let sample = |c: usize| -> f64 {
                let i = x * channels + c;
                if sixteen {
                    f64::from(u16::from_be_bytes([line[2 * i], line[2 * i + 1]])) / 256.0
                } else {
                    f64::from(line[i])
                }
            };
            let alpha_max = 255.0;
            let px = match channels {
                1 => [sample(0), sample(0), sample(0), 1.0],
                2 => [sample(0), sample(0), sample(0), sample(1) / alpha_max],
                3 => [sample(0), sample(1), sample(2), 1.0],
                _ => [sample(0), sample(1), sample(2), sample(3) / alpha_max],
            };
            pixels.push(px);
        }
    }
    let meta = reader.info();
    let mut text: Vec<(String, String)> =
        meta.uncompressed_latin1_text.iter().map(|t| (t.keyword.clone(), t.text.clone())).collect();
    // Compressed text is inflated within what is left of a budget for all
    // of it: a few kilobytes of zTXt can inflate to gigabytes.
    let mut left = max_text.saturating_sub(text.iter().map(|(_, t)| t.len()).sum());
    let too_much = |k: &str| {
        FlameError::Png(format!(
            "compressed text chunk '{k}' is corrupt, or inflates past the {} of text a PNG may hold here",
            warpmc_host::memory::human_bytes(max_text as u64)
        ))
    };
    for t in &meta.compressed_latin1_text {
        let mut t = t.clone();
        let inflated = t.decompress_text_with_limit(left).ok().and_then(|()| t.get_text().ok());
        let inflated = inflated.ok_or_else(|| too_much(&t.keyword))?;
        left -= inflated.len().min(left);
        text.push((t.keyword.clone(), inflated));
    }
    for t in &meta.utf8_text {
        let mut t = t.clone();
        let inflated = t.decompress_text_with_limit(left).ok().and_then(|()| t.get_text().ok());
        let inflated = inflated.ok_or_else(|| too_much(&t.keyword))?;
        left -= inflated.len().min(left);
        text.push((t.keyword.clone(), inflated));
    }
    Ok(LoadedImage { width: info.width, height: info.height, pixels, text })
}

/// Peak signal-to-noise ratio in dB between two images of equal size, over
/// the RGB channels on the 8-bit scale (peak 255), of the images as they
/// show over black: each channel times its pixel's alpha, so that opaque
/// images are compared as they are and a transparent render's noisy colour
/// where it is nearly transparent counts as little as it shows. Identical
/// images give infinity.
pub fn psnr(a: &LoadedImage, b: &LoadedImage) -> Result<f64> {
    if (a.width, a.height) != (b.width, b.height) {
        return Err(FlameError::SizeMismatch { first: (a.width, a.height), second: (b.width, b.height) });
    }
    let shown = |p: &[f64; 4]| [p[0] * p[3], p[1] * p[3], p[2] * p[3]];
    Ok(psnr_rgb(a.pixels.iter().zip(&b.pixels).map(|(p, q)| (shown(p), shown(q))), a.pixels.len()))
}

/// The 8-bit image a frame's PNG holds, as pixels for [`psnr_pixels`]
/// (alpha left at 0: the PSNR reads RGB only).
pub fn quantized_pixels(frame: &RenderedFrame) -> Vec<[f64; 4]> {
    let q = quantize(frame, Bits::Eight);
    q.samples.chunks(q.channels).map(|c| [f64::from(c[0]), f64::from(c[1]), f64::from(c[2]), 0.0]).collect()
}

/// PSNR over the RGB channels of two equally long pixel lists (alpha
/// ignored).
///
/// # Errors
///
/// [`FlameError::Invalid`] if the lists differ in length.
pub fn psnr_pixels(a: &[[f64; 4]], b: &[[f64; 4]]) -> Result<f64> {
    if a.len() != b.len() {
        return Err(FlameError::Invalid(format!(
            "PSNR of {} pixels against {}: the images must have as many pixels",
            a.len(),
            b.len()
        )));
    }
    Ok(psnr_rgb(a.iter().zip(b).map(|(p, q)| ([p[0], p[1], p[2]], [q[0], q[1], q[2]])), a.len()))
}

/// PSNR of `n` pairs of RGB values on the 8-bit scale.
fn psnr_rgb(pairs: impl Iterator<Item = ([f64; 3], [f64; 3])>, n: usize) -> f64 {
    let mut se = 0.0;
    for (p, q) in pairs {
        for k in 0..3 {
            let d = p[k] - q[k];
            se += d * d;
        }
    }
    let mse = se / (3 * n.max(1)) as f64;
    if mse == 0.0 { f64::INFINITY } else { 10.0 * (255.0 * 255.0 / mse).log10() }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::render::RenderStats;

    #[test]
    fn rgba_samples_are_the_png_samples_with_alpha() {
        let pixels: Vec<[f64; 4]> =
            [[-3.0, 0.5, 254.99, 0.25], [255.0, 300.0, 17.2, 1.5], [12.7, 128.0, 0.0, -0.1]].to_vec();
        for transparent in [false, true] {
            let frame = RenderedFrame {
                width: 3,
                height: 1,
                pixels: pixels.clone(),
                transparent,
                stats: RenderStats::default(),
            };
            for bits in [Bits::Eight, Bits::Sixteen] {
                let rgba = quantize_rgba(&frame, bits);
                let png = quantize(&frame, bits);
                assert_eq!(rgba.len(), 12);
                for (i, px) in rgba.chunks(4).enumerate() {
                    let q = &png.samples[i * png.channels..(i + 1) * png.channels];
                    assert_eq!(&px[..3], &q[..3]);
                    let max = if bits == Bits::Eight { 255 } else { 65535 };
                    assert_eq!(px[3], if transparent { q[3] } else { max });
                }
            }
        }
    }

    #[test]
    fn image_formats_follow_the_extension() {
        assert_eq!(ImageFormat::from_path(Path::new("a.PNG")).unwrap(), ImageFormat::Png);
        assert_eq!(ImageFormat::from_path(Path::new("a.jpg")).unwrap(), ImageFormat::Jpeg);
        assert_eq!(ImageFormat::from_path(Path::new("a.Jpeg")).unwrap(), ImageFormat::Jpeg);
        assert_eq!(ImageFormat::from_path(Path::new("/dev/null")).unwrap(), ImageFormat::Png);
        assert_eq!(ImageFormat::from_path(Path::new("a.PPM")).unwrap(), ImageFormat::Ppm);
        let e = ImageFormat::from_path(Path::new("a.tiff")).unwrap_err().to_string();
        assert!(e.contains("unknown image extension '.tiff'"), "{e}");
    }

    #[test]
    fn compressed_text_inflates_only_within_its_budget() {
        let big = "A".repeat(5000);
        // A 1 × 1 PNG with a tEXt, a zTXt and a compressed iTXt chunk.
        let png = |ztxt: &str, itxt: &str| {
            let mut out = Vec::new();
            let mut enc = png::Encoder::new(&mut out, 1, 1);
            enc.set_color(png::ColorType::Rgb);
            enc.add_text_chunk("plain".into(), "tEXt".into()).unwrap();
            enc.add_ztxt_chunk("z".into(), ztxt.into()).unwrap();
            let mut w = enc.write_header().unwrap();
            let mut chunk = png::text_metadata::ITXtChunk::new("i", itxt);
            chunk.compressed = true;
            w.write_text_chunk(&chunk).unwrap();
            w.write_image_data(&[1, 2, 3]).unwrap();
            w.finish().unwrap();
            out
        };
        for (ztxt, itxt) in [(big.as_str(), "x\u{263a}"), ("x", big.as_str())] {
            let png = png(ztxt, itxt);
            let all = decode_png_within(&png, 6000).unwrap();
            assert_eq!(all.pixels, [[1.0, 2.0, 3.0, 1.0]]);
            assert_eq!(all.text.len(), 3);
            assert!(all.text.contains(&("z".into(), ztxt.into())) && all.text.contains(&("i".into(), itxt.into())));
            let e = decode_png_within(&png, 4000).unwrap_err().to_string();
            assert!(e.contains("inflates past") && e.contains("3.906 KiB"), "{e}");
        }
    }

    #[test]
    fn ppm_samples_are_the_png_samples_without_alpha() {
        // Awkward values: out of range, fractions, NaN, infinities.
        let pixels: Vec<[f64; 4]> = [
            [-3.0, 0.5, 254.99, 0.25],
            [255.0, 300.0, 17.2, 1.5],
            [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 0.0],
            [12.7, 128.0, 0.0, -0.1],
            [1.0, 2.0, 3.0, 1.0],
            [0.0, 0.0, 0.0, 0.0],
        ]
        .to_vec();
        for transparent in [false, true] {
            let frame = RenderedFrame {
                width: 3,
                height: 2,
                pixels: pixels.clone(),
                transparent,
                stats: RenderStats::default(),
            };
            for (bits, maxval, depth) in [(Bits::Eight, 255, 1), (Bits::Sixteen, 65535, 2)] {
                let ppm = encode_ppm(&frame, bits).unwrap();
                let header = format!("P6\n3 2\n{maxval}\n");
                assert_eq!(&ppm[..header.len()], header.as_bytes());
                let body = &ppm[header.len()..];
                assert_eq!(body.len(), 6 * 3 * depth);
                let png = quantize(&frame, bits);
                for (i, px) in body.chunks(3 * depth).enumerate() {
                    for c in 0..3 {
                        let v =
                            if depth == 1 { u16::from(px[c]) } else { u16::from_be_bytes([px[2 * c], px[2 * c + 1]]) };
                        assert_eq!(v, png.samples[i * png.channels + c], "pixel {i}, channel {c}");
                    }
                }
            }
        }
        // An empty frame is a header alone.
        let empty = RenderedFrame {
            width: 0,
            height: 0,
            pixels: Vec::new(),
            transparent: false,
            stats: RenderStats::default(),
        };
        assert_eq!(encode_ppm(&empty, Bits::Eight).unwrap(), b"P6\n0 0\n255\n");
        // A frame whose pixels are not the size it says (built in code) is
        // an error in every format, not a file whose header lies.
        let short = RenderedFrame { width: 4, height: 4, pixels: vec![[1.0; 4]; 3], ..empty };
        assert!(encode_ppm(&short, Bits::Eight).unwrap_err().to_string().contains("holds 3 pixels"));
        assert!(encode_png(&short, Bits::Eight, &[]).is_err());
        assert!(encode_jpeg(&short, 90).is_err());
    }

    /// An opaque `w × h` frame of colours that change from pixel to pixel.
    fn striped(w: u32, h: u32) -> RenderedFrame {
        RenderedFrame {
            width: w,
            height: h,
            pixels: (0..w * h).map(|i| [(i * 7 % 256) as f64, (i % 256) as f64, 128.0, 1.0]).collect(),
            transparent: false,
            stats: RenderStats::default(),
        }
    }

    #[test]
    fn jpeg_comments_follow_the_start_marker_and_the_image_stays_valid() {
        let frame = striped(17, 9);
        let plain = encode_jpeg(&frame, 90).unwrap();
        let genome = "<flame size=\"17 9\"/>".to_string();
        let with = encode_jpeg_with(
            &frame,
            90,
            &[("flam3_genome".into(), genome.clone()), ("big".into(), "x".repeat(70_000))],
        )
        .unwrap();
        assert_eq!(&with[..2], &[0xff, 0xd8]);
        let body = format!("flam3_genome: {genome}");
        assert_eq!(&with[2..4], &[0xff, 0xfe]);
        assert_eq!(usize::from(u16::from_be_bytes([with[4], with[5]])), body.len() + 2);
        assert_eq!(&with[6..6 + body.len()], body.as_bytes());
        // The over-long comment is left out; the rest is the plain image.
        assert_eq!(&with[6 + body.len()..], &plain[2..]);
        assert_eq!(plain.len() + 4 + body.len(), with.len());
    }

    /// The segment after `marker` (its length bytes excluded).
    fn jpeg_segment(jpeg: &[u8], marker: u8) -> &[u8] {
        let mut i = 2;
        while i + 4 <= jpeg.len() {
            assert_eq!(jpeg[i], 0xff, "segment boundary at byte {i}");
            let len = usize::from(u16::from_be_bytes([jpeg[i + 2], jpeg[i + 3]]));
            if jpeg[i + 1] == marker {
                return &jpeg[i + 4..i + 2 + len];
            }
            i += 2 + len;
        }
        panic!("no segment 0xff{marker:02x}");
    }

    #[test]
    fn jpeg_tables_and_chroma_sampling_are_libjpegs_as_flam3_writes_them() {
        let frame = striped(33, 17);
        // ITU T.81 Annex K's luminance table, in zig-zag order.
        const LUMA: [u32; 64] = [
            16, 11, 12, 14, 12, 10, 16, 14, 13, 14, 18, 17, 16, 19, 24, 40, 26, 24, 22, 22, 24, 49, 35, 37, 29, 40, 58,
            51, 61, 60, 57, 51, 56, 55, 64, 72, 92, 78, 64, 68, 87, 69, 55, 56, 80, 109, 81, 87, 95, 98, 103, 104, 103,
            62, 77, 113, 121, 112, 100, 120, 92, 101, 103, 99,
        ];
        for quality in [JPEG_DEFAULT_QUALITY, 95, 30] {
            let jpeg = encode_jpeg(&frame, quality).unwrap();
            // libjpeg's scaling (jpeg_quality_scaling, jpeg_add_quant_table).
            let q = u32::from(quality);
            let scale = if q < 50 { 5000 / q } else { 200 - 2 * q };
            let dqt = jpeg_segment(&jpeg, 0xdb);
            assert_eq!(dqt[0], 0, "table 0, 8-bit entries");
            for (k, &base) in LUMA.iter().enumerate() {
                assert_eq!(u32::from(dqt[1 + k]), ((base * scale + 50) / 100).clamp(1, 255), "quality {q}, entry {k}");
            }
            // SOF0: precision, height, width, 3 components; Y sampled 2×2,
            // Cb and Cr 1×1.
            let sof = jpeg_segment(&jpeg, 0xc0);
            assert_eq!(sof[5], 3);
            assert_eq!([sof[7], sof[10], sof[13]], [0x22, 0x11, 0x11]);
        }
    }

    fn frame(transparent: bool) -> RenderedFrame {
        RenderedFrame {
            width: 3,
            height: 2,
            pixels: vec![
                [0.0, 127.9, 255.0, 1.0],
                [300.0, -2.0, 1.5, 0.5],
                [10.0, 20.0, 30.0, 0.0],
                [255.0, 255.0, 255.0, 1.0],
                [64.0, 128.0, 192.0, 0.25],
                [1.0, 2.0, 3.0, 1.0],
            ],
            transparent,
            stats: RenderStats::default(),
        }
    }

    /// A fresh, empty directory.
    fn tempfile_dir() -> PathBuf {
        let dir = warpmc_testkit::scratch_dir("flame-image").join("alone");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn temp(name: &str) -> PathBuf {
        let dir = warpmc_testkit::scratch_dir("flame-image");
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(name)
    }

    #[test]
    fn quantisation_truncates_like_flam3() {
        let q = quantize(&frame(false), Bits::Eight);
        assert_eq!(q.channels, 3);
        assert_eq!(&q.samples[..6], &[0, 127, 255, 255, 0, 1]);
        let q = quantize(&frame(true), Bits::Sixteen);
        assert_eq!(q.channels, 4);
        assert_eq!(&q.samples[..8], &[0, 32742, 65280, 65535, 65280, 0, 384, 32767]);
    }

    #[test]
    fn fast_compression_decodes_to_the_same_samples() {
        for (bits, transparent) in [(Bits::Eight, false), (Bits::Sixteen, true)] {
            let f = frame(transparent);
            let text = [("flam3_samples".to_string(), "6".to_string())];
            let fast = decode_png(&encode_png_with(&f, bits, &text, &[], PngCompression::Fast).unwrap()).unwrap();
            let balanced = decode_png(&encode_png(&f, bits, &text).unwrap()).unwrap();
            assert_eq!(fast.pixels, balanced.pixels, "{bits:?}");
            assert_eq!(fast.text, text);
        }
    }

    #[test]
    fn png_round_trip_8_and_16_bits() {
        for (bits, transparent) in [(Bits::Eight, false), (Bits::Sixteen, true)] {
            let path = temp(&format!("rt-{bits:?}-{transparent}.png"));
            let f = frame(transparent);
            let text = vec![("flam3_samples".to_string(), "12345".to_string())];
            write_png(&f, bits, &path, &text).unwrap();
            let back = read_png(&path).unwrap();
            assert_eq!((back.width, back.height), (3, 2));
            assert_eq!(back.text, text);
            let Quantized { samples: q, channels: c } = quantize(&f, bits);
            for (i, p) in back.pixels.iter().enumerate() {
                for k in 0..3 {
                    let want = match bits {
                        Bits::Eight => f64::from(q[i * c + k]),
                        Bits::Sixteen => f64::from(q[i * c + k]) / 256.0,
                    };
                    assert_eq!(p[k], want);
                }
            }
            // Identical images: infinite PSNR; one changed pixel: finite.
            assert_eq!(psnr(&back, &back).unwrap(), f64::INFINITY);
            let mut other = back.clone();
            other.pixels[0][0] += 10.0;
            let p = psnr(&back, &other).unwrap();
            // The change as it shows over black: times the pixel's alpha.
            let alpha = back.pixels[0][3];
            let want = 10.0 * (255.0f64 * 255.0 / (100.0 * alpha * alpha / 18.0)).log10();
            assert!((p - want).abs() < 1e-9, "{p} {want}");
        }
    }

    #[test]
    fn psnr_compares_images_as_they_show_over_black() {
        let image = |pixels: Vec<[f64; 4]>| LoadedImage { width: 2, height: 1, pixels, text: Vec::new() };
        // Colour where nothing shows (alpha 0) does not count.
        let a = image(vec![[10.0, 20.0, 30.0, 1.0], [200.0, 0.0, 0.0, 0.0]]);
        let b = image(vec![[10.0, 20.0, 30.0, 1.0], [0.0, 90.0, 255.0, 0.0]]);
        assert_eq!(psnr(&a, &b).unwrap(), f64::INFINITY);
        // Half-transparent: half the difference; opaque: all of it.
        let c = image(vec![[10.0, 20.0, 30.0, 1.0], [100.0, 0.0, 0.0, 0.5]]);
        let d = image(vec![[10.0, 20.0, 30.0, 1.0], [120.0, 0.0, 0.0, 0.5]]);
        let want = 10.0 * (255.0f64 * 255.0 / (100.0 / 6.0)).log10();
        assert!((psnr(&c, &d).unwrap() - want).abs() < 1e-9);
        let opaque = |v: f64| image(vec![[10.0, 20.0, 30.0, 1.0], [v, 0.0, 0.0, 1.0]]);
        let want = 10.0 * (255.0f64 * 255.0 / (400.0 / 6.0)).log10();
        assert!((psnr(&opaque(100.0), &opaque(120.0)).unwrap() - want).abs() < 1e-9);
    }

    #[test]
    fn psnr_of_pixel_lists_needs_as_many_pixels() {
        let px = |v: f64| [v, 0.0, 0.0, 0.0];
        let a = [px(10.0), px(20.0)];
        assert_eq!(psnr_pixels(&a, &a).unwrap(), f64::INFINITY);
        let want = 10.0 * (255.0f64 * 255.0 / (100.0 / 6.0)).log10();
        assert!((psnr_pixels(&a, &[px(10.0), px(30.0)]).unwrap() - want).abs() < 1e-9);
        // A shorter list is not compared over its length alone.
        let err = psnr_pixels(&a, &a[..1]).unwrap_err().to_string();
        assert!(err.contains("2 pixels against 1"), "{err}");
        assert!(psnr_pixels(&[], &a).is_err());
    }

    #[test]
    fn unreadable_files_are_errors() {
        let path = temp("not-a.png");
        std::fs::write(&path, b"hello").unwrap();
        let e = read_png(&path).unwrap_err().to_string();
        assert!(e.contains("not-a.png") && e.contains("not a readable PNG"), "{e}");
        // The I/O error's text is in the message, once, and not again as
        // the source (a chain printer would show it twice).
        let e = read_png(&temp("missing.png")).unwrap_err();
        assert!(matches!(e, FlameError::Io { action: "read", .. }), "{e}");
        assert!(std::error::Error::source(&e).is_none());
        assert_eq!(e.to_string().matches("missing.png").count(), 1, "{e}");
        let e = write_png(&frame(false), Bits::Eight, &temp("no-such-dir").join("x.png"), &[]).unwrap_err();
        assert!(matches!(e, FlameError::Output(_)) && e.to_string().contains("no-such-dir"), "{e}");
        // Images of different sizes cannot be compared.
        let a = decode_png(&encode_png(&frame(false), Bits::Eight, &[]).unwrap()).unwrap();
        let mut b = a.clone();
        b.width = 2;
        assert_eq!(psnr(&a, &b).unwrap_err().to_string(), "images differ in size: 3x2 and 2x2");
    }

    #[test]
    fn the_file_holds_the_encoded_bytes() {
        let f = frame(true);
        let text = vec![("warpmc_seed".to_string(), "7".to_string())];
        let path = temp("same.png");
        write_png(&f, Bits::Sixteen, &path, &text).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), encode_png(&f, Bits::Sixteen, &text).unwrap());
        // Nothing but the file is left in its directory.
        let dir = tempfile_dir();
        let path = dir.join("alone.png");
        write_png(&f, Bits::Eight, &path, &text).unwrap();
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
