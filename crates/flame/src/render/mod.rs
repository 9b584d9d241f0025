//! The renderer: flam3 3.1.1's pipeline on every CPU core ([`render`]) or
//! on a CUDA device (`cuda::CudaRenderer`, with the `cuda` feature).
//!
//! For each pass (`passes`), for each temporal sample: interpolate the
//! flame at that time, run the chaos game, and add each sample's palette
//! colour into a histogram of RGBA + count cells (supersampled, with a
//! gutter for the filters). After each pass the histogram is log-density
//! scaled (with density estimation when `estimator_radius` > 0) into an
//! accumulation buffer. Finally the spatial filter takes cells to pixels and
//! the tone mapping (gamma, vibrancy, highlight power, background) gives
//! display values (with [`RenderSettings::early_clip`], the other way
//! round).
//!
//! The CPU's result depends only on the genome, the settings and the seed:
//! every sub-batch of iterations has its own random stream, keyed by its
//! index, and all sums are taken in a fixed order whatever the thread count.
//!
//! ```
//! use warpmc_flame::genome::{ParseOptions, parse_str};
//! use warpmc_flame::render::{RenderSettings, render};
//!
//! let xml = r#"<flame size="32 24" center="0.5 0.5" scale="20" quality="4">
//!   <xform weight="1" coefs="0.5 0 0 0.5 0 0" linear="1" color="0"/>
//!   <xform weight="1" coefs="0.5 0 0 0.5 0.5 0" linear="1" color="1"/>
//!   <color index="0" rgb="255 0 0"/><color index="255" rgb="0 0 255"/>
//! </flame>"#;
//! let flames = parse_str(xml, "example", &ParseOptions::default())?.flames;
//! let settings = RenderSettings { seed: 7, ..RenderSettings::default() };
//! let frame = render(&flames, 0.0, &settings)?;
//! assert_eq!((frame.width, frame.height), (32, 24));
//! assert_eq!(frame.stats.iterations, 4 * 32 * 24);
//! // The same seed gives the same image.
//! assert_eq!(render(&flames, 0.0, &settings)?.pixels, frame.pixels);
//! # Ok::<(), warpmc_flame::FlameError>(())
//! ```

mod camera;
mod chaos;
mod cost;
mod cpu;
#[cfg(feature = "cuda")]
pub mod cuda;
mod curves;
mod density;
mod filters;
mod frame;
mod histogram;
mod tonemap;

/// Flames the renderer's unit tests share.
#[cfg(test)]
pub(crate) mod test_flames {
    use crate::genome::{Affine, Flame, XForm};
    use crate::variations::{VariationKind, VariationSpec};

    /// The Sierpinski triangle on 64 × 48 pixels, wholly inside the view.
    pub(crate) fn sierpinski() -> Flame {
        let mut f = Flame { width: 64, height: 48, center: [0.5, 0.5], scale: 40.0, quality: 1.0, ..Flame::default() };
        let linear = VariationKind::from_name("linear").unwrap();
        for (i, (cx, cy)) in [(0.0, 0.0), (0.5, 0.0), (0.0, 0.5)].into_iter().enumerate() {
            let mut x = XForm::flam3_default(i);
            x.weight = 1.0;
            x.coefs = Affine::from_xml_order([0.5, 0.0, 0.0, 0.5, cx, cy]);
            x.variations = vec![VariationSpec::new(linear, 1.0)];
            f.xforms.push(x);
        }
        f
    }
}

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

pub use cost::FrameCost;
pub use frame::with_scales;

use crate::error::{FlameError, Result};
use crate::genome::Flame;

/// Precision of the histogram and accumulation buffers (and, on the GPU, of
/// the chaos game's arithmetic, see `cuda::IterationOptions::real`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Precision {
    /// Half the memory of `F64`. On the CPU the histogram holds
    /// flam3-render's default cells, unsigned 32-bit counts (exact, held
    /// at 2³² − 1 as flam3's single-threaded additions hold them), and the
    /// accumulation buffer 32-bit floats;
    /// on the GPU both are 32-bit floats, whose counts are exact up to
    /// 2²⁴/255 (about 66,000) hits per cell, and read held at 2³² − 1 as
    /// flam3's.
    #[default]
    F32,
    /// 64-bit floats, each addition truncated and each channel read held
    /// at 2³² − 1 as flam3-render's default histogram does (its `bits=64`
    /// keeps the fraction and has no ceiling).
    F64,
}

impl Precision {
    /// Bytes of one value.
    pub fn bytes(self) -> usize {
        match self {
            Precision::F32 => 4,
            Precision::F64 => 8,
        }
    }
}

/// What to render and how, beyond what the genome says.
#[derive(Clone, Debug)]
pub struct RenderSettings {
    /// Multiplies the genome's quality (samples per pixel), like
    /// flam3-render's `qs`.
    pub quality_scale: f64,
    /// Multiplies width, height and scale, like flam3-render's `ss`.
    pub size_scale: f64,
    /// Seed of all random streams.
    pub seed: u64,
    /// Histogram precision.
    pub precision: Precision,
    /// Transparent background (alpha from density) instead of the
    /// genome's background colour.
    pub transparent: bool,
    /// Temporal samples per pass; `None` uses 1 as flam3-render does for
    /// still images (flam3-animate uses the genome's value).
    pub temporal_samples: Option<u32>,
    /// Iterations per sub-batch: each starts from a fresh random point and
    /// discards 15 fuse iterations (100 with `early_clip`). flam3's default
    /// is 10000.
    pub sub_batch_size: usize,
    /// flam3's `earlyclip=1`: tone-map and clip every accumulation cell
    /// before the spatial filter (instead of each filtered pixel), and
    /// discard 100 fuse iterations per sub-batch instead of 15, as
    /// flam3-render and flam3-animate do with that setting.
    pub early_clip: bool,
    /// When set, the render stops with [`FlameError::Interrupted`] soon
    /// after the flag becomes true (it is looked at between rounds of
    /// sub-batches on the CPU, between launches on the GPU, and between
    /// passes): a Ctrl-C handler sets it.
    pub cancel: Option<Arc<AtomicBool>>,
    /// Width over height of each output pixel, flam3-render's and
    /// flam3-animate's `pixel_aspect` (e.g. 0.90909 for NTSC video): the
    /// flame is drawn stretched so that it looks right on such pixels.
    /// Default 1 (square pixels).
    pub pixel_aspect: f64,
    /// The whole frame, or one field of an interlaced frame
    /// (flam3-animate's `fields=1`).
    pub field: Field,
}

/// The rows a render draws: the whole frame, or one field of an interlaced
/// video frame, as flam3-animate renders with `fields=1`. A field is an
/// image of half the frame's height (rounded down) covering the whole
/// frame's view: its rows are twice as tall, its spatial filter half as
/// high in rows, and its samples those of half the pixels. Each field is
/// moved half a pixel's width up (even) or down (odd), as flam3 moves it,
/// which for square pixels centres its rows on the frame rows they
/// become. flam3-animate renders the even field at the frame's time and
/// the odd one half a frame later, and interleaves their rows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Field {
    /// Every row.
    #[default]
    Both,
    /// Rows 0, 2, 4, … of the frame.
    Even,
    /// Rows 1, 3, 5, … of the frame.
    Odd,
}

impl Field {
    /// The vertical shift of the view, in plane units, for `ppux`
    /// horizontal pixels per unit (flam3's `shift`).
    pub(crate) fn shift(self, ppux: f64) -> f64 {
        match self {
            Field::Both => 0.0,
            Field::Even => -0.5 / ppux,
            Field::Odd => 0.5 / ppux,
        }
    }
}

impl Default for RenderSettings {
    fn default() -> Self {
        RenderSettings {
            quality_scale: 1.0,
            size_scale: 1.0,
            seed: 0,
            precision: Precision::F32,
            transparent: false,
            temporal_samples: None,
            sub_batch_size: 10_000,
            early_clip: false,
            cancel: None,
            pixel_aspect: 1.0,
            field: Field::Both,
        }
    }
}

/// Counts and timings of one render.
#[derive(Clone, Debug, Default)]
pub struct RenderStats {
    /// Chaos-game iterations kept (fuse iterations not counted), as flam3
    /// reports in `flam3_samples`.
    pub iterations: u64,
    /// Transforms that produced NaN or huge values and were restarted.
    pub bad_values: u64,
    /// Seconds spent in the chaos game and accumulation.
    pub iterate_seconds: f64,
    /// Seconds spent in density estimation, filtering and tone mapping.
    pub filter_seconds: f64,
    /// Horizontal strips the frame was rendered in, each running the whole
    /// chaos game (1 unless the histogram did not fit in GPU memory; 0
    /// from the CPU backend, which never splits).
    pub strips: u32,
}

/// A rendered frame before quantisation: RGB in [0, 255], alpha in [0, 1].
#[derive(Clone, Debug)]
pub struct RenderedFrame {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Row-major pixels, `[r, g, b, alpha]`.
    pub pixels: Vec<[f64; 4]>,
    /// Whether alpha carries transparency (otherwise the background is
    /// composited and alpha is only informative).
    pub transparent: bool,
    /// Counts and timings.
    pub stats: RenderStats,
}

impl RenderedFrame {
    /// The frame of `height` rows whose even rows are `even`'s and odd
    /// rows `odd`'s: the two fields of an interlaced frame, each of
    /// `height / 2` rows (rounded down), rendered with [`Field::Even`] and
    /// [`Field::Odd`]. Rows a field lacks (the last row of an odd height)
    /// stay transparent black, as in flam3-animate's frames. Counts and
    /// timings are the two renders' together.
    ///
    /// An error unless both fields have one width, `height / 2` rows and
    /// the pixels their size says.
    pub fn interlace(even: &RenderedFrame, odd: &RenderedFrame, height: u32) -> Result<RenderedFrame> {
        for (name, field) in [("even", even), ("odd", odd)] {
            let pixels = field.width as u64 * field.height as u64;
            if field.width != even.width || field.height != height / 2 || field.pixels.len() as u64 != pixels {
                return Err(FlameError::invalid(format!(
                    "interlacing a frame of {} × {height} pixels: its {name} field is {} × {} with {} pixels, not \
                     {} × {}",
                    even.width,
                    field.width,
                    field.height,
                    field.pixels.len(),
                    even.width,
                    height / 2
                )));
            }
        }
        let width = even.width as usize;
        let mut pixels = vec![[0.0; 4]; width * height as usize];
        if width > 0 {
            for (y, row) in pixels.chunks_exact_mut(width).enumerate() {
                let (field, k) = (if y % 2 == 0 { even } else { odd }, y / 2);
                if k < field.height as usize {
                    row.copy_from_slice(&field.pixels[k * width..][..width]);
                }
            }
        }
        let (e, o) = (&even.stats, &odd.stats);
        Ok(RenderedFrame {
            width: even.width,
            height,
            pixels,
            transparent: even.transparent,
            stats: RenderStats {
                iterations: e.iterations + o.iterations,
                bad_values: e.bad_values + o.bad_values,
                iterate_seconds: e.iterate_seconds + o.iterate_seconds,
                filter_seconds: e.filter_seconds + o.filter_seconds,
                strips: e.strips.max(o.strips),
            },
        })
    }
}

/// Renders the frame at `time` of the sequence `flames` (one flame for a
/// still image) on every CPU core.
///
/// `flames` are the control points of an animation, interpolated at
/// `time`: a file's flames are not rendered one by one. To render flame
/// `k` of a file of several as a still, pass it alone at its own time:
/// `render(std::slice::from_ref(&flames[k]), flames[k].time, settings)`.
pub fn render(flames: &[Flame], time: f64, settings: &RenderSettings) -> Result<RenderedFrame> {
    render_with_progress(flames, time, settings, &|_| {})
}

/// [`render`], calling `progress` with the fraction done (0 to 1) as the
/// work goes on.
///
/// Before anything is allocated the frame's cost is checked
/// ([`frame_cost`]): a frame whose iterations cannot be counted, or whose
/// buffers do not fit in the host memory the process may still allocate,
/// is an error naming the sizes.
pub fn render_with_progress(
    flames: &[Flame],
    time: f64,
    settings: &RenderSettings,
    progress: &(dyn Fn(f64) + Sync),
) -> Result<RenderedFrame> {
    let flames = frame::scaled(flames, settings)?;
    match settings.precision {
        Precision::F32 => cpu::render::<f32>(&flames, time, settings, progress),
        Precision::F64 => cpu::render::<f64>(&flames, time, settings, progress),
    }
}

/// What [`render`] takes for the frame at `time` of `flames`: iterations,
/// passes, histogram cells and the host memory it holds at its peak,
/// worked out without allocating. An error for settings no renderer can
/// render (a negative spatial filter radius, iterations beyond 2^53, …);
/// whether the memory is there is [`FrameCost::check_host_memory`]'s
/// question.
pub fn frame_cost(flames: &[Flame], time: f64, settings: &RenderSettings) -> Result<FrameCost> {
    let flames = frame::scaled(flames, settings)?;
    let sizing = cost::Sizing::new(&flames, time, settings)?;
    Ok(sizing.cpu_cost(settings.precision, rayon::current_num_threads(), settings.sub_batch_size))
}

/// Whether the chaos game can iterate `flame` as the renderers check it:
/// every weight and chaos entry non-negative and some xform of positive
/// weight. (A chaos row that leaves no xform to choose leads to xform 0,
/// as in Fractorium; flam3 refuses it.) The error says which xform fails.
pub fn check_iterable(flame: &Flame) -> Result<()> {
    chaos::check(flame).map_err(|e| FlameError::invalid(e.to_string()))
}

/// A number for messages: as written for ordinary magnitudes, in
/// scientific notation for huge or tiny ones (1e308, not 309 digits).
///
/// ```
/// assert_eq!(warpmc_flame::render::shown(0.25), "0.25");
/// assert_eq!(warpmc_flame::render::shown(-1e308), "-1e308");
/// ```
pub fn shown(x: f64) -> String {
    if x == 0.0 || !x.is_finite() || (1e-4..1e15).contains(&x.abs()) { format!("{x}") } else { format!("{x:e}") }
}

/// A vector of `n` copies of `value`, or [`FlameError::OutOfHostMemory`]
/// naming `what` when the allocation fails (sizes are checked before
/// rendering starts; this catches what the estimate missed).
fn try_buffer<T: Clone>(n: usize, value: T, what: &str) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| {
        let size = n as f64 * std::mem::size_of::<T>() as f64;
        FlameError::OutOfHostMemory(format!("{what}: cannot allocate {}", cost::bytes(size)))
    })?;
    v.resize(n, value);
    Ok(v)
}
