//! The CPU renderer: flam3 3.1.1's pipeline on every core.
//!
//! For each pass (`passes`), for each temporal sample: interpolate the
//! flame at that time, run the chaos game, and add each sample's palette
//! colour into a histogram of RGBA + count cells (supersampled, with a
//! gutter for the filters). After each pass the histogram is log-density
//! scaled (with density estimation when `estimator_radius` > 0) into an
//! accumulation buffer. Finally the spatial filter takes cells to pixels and
//! the tone mapping (gamma, vibrancy, highlight power, background) gives
//! display values.
//!
//! The result depends only on the genome, the settings and the seed: every
//! sub-batch of iterations has its own random stream, keyed by its index,
//! and all sums are taken in a fixed order whatever the thread count.

mod chaos;
pub mod cuda;
mod density;
mod filters;
mod histogram;
mod tonemap;

use std::time::Instant;

use rayon::prelude::*;
use warpmc_rng::{Domain, Mwc, multipliers, mwc::seed_state, philox_block};

pub use histogram::Bucket;

use crate::genome::{Flame, PaletteMode};
use crate::interpolate::interpolate;
use chaos::ChaosGame;
use filters::{DensityFilters, SpatialFilter, TemporalSamples};
use histogram::{BandedSamples, ColorMap, Sample};
use tonemap::ToneMap;

/// Precision of the histogram and accumulation buffers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Precision {
    /// 32-bit floats (half the memory; exact counts up to 2²⁴/255 hits).
    #[default]
    F32,
    /// 64-bit floats.
    F64,
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
    /// discards 15 fuse iterations. flam3's default is 10000.
    pub sub_batch_size: usize,
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

/// Why a frame could not be rendered.
#[derive(Clone, Debug, thiserror::Error)]
pub enum RenderError {
    /// A setting of the genome or of the render is out of range.
    #[error("{0}")]
    Invalid(String),
    /// The GPU backend failed (no device, a driver or compiler error).
    #[error("GPU: {0}")]
    Gpu(String),
    /// The buffers do not fit in memory.
    #[error("the histogram needs {bytes} bytes ({cells} cells); reduce the size, the supersampling or the size scale")]
    OutOfMemory {
        /// Bytes requested.
        bytes: u64,
        /// Histogram cells.
        cells: u64,
    },
}

fn invalid(msg: impl Into<String>) -> RenderError {
    RenderError::Invalid(msg.into())
}

/// Maps plane coordinates to histogram cells (flam3's camera).
#[derive(Clone, Debug)]
pub(crate) struct Camera {
    rot: Option<[[f64; 2]; 2]>,
    rot_center: [f64; 2],
    bounds: [f64; 4],
    ws0: f64,
    wb0s0: f64,
    hs1: f64,
    hb1s1: f64,
    width: usize,
    height: usize,
}

impl Camera {
    fn new(cp: &Flame, gutter: usize, supersample: usize, width: usize, height: usize) -> Self {
        let zoom = 2f64.powf(cp.zoom);
        let ppux = cp.scale * zoom;
        let ppuy = ppux;
        let t0 = gutter as f64 / (supersample as f64 * ppux);
        let t1 = gutter as f64 / (supersample as f64 * ppuy);
        let corner0 = cp.center[0] - f64::from(cp.width) / ppux / 2.0;
        let corner1 = cp.center[1] - f64::from(cp.height) / ppuy / 2.0;
        let bounds = [
            corner0 - t0,
            corner1 - t1,
            corner0 + f64::from(cp.width) / ppux + t0,
            corner1 + f64::from(cp.height) / ppuy + t1,
        ];
        let size0 = 1.0 / (bounds[2] - bounds[0]);
        let size1 = 1.0 / (bounds[3] - bounds[1]);
        let th = cp.rotate * 2.0 * std::f64::consts::PI / 360.0;
        let rot = (cp.rotate != 0.0).then(|| [[th.cos(), -th.sin()], [th.sin(), th.cos()]]);
        let ws0 = width as f64 * size0;
        let hs1 = height as f64 * size1;
        Camera {
            rot,
            rot_center: cp.center,
            bounds,
            ws0,
            wb0s0: ws0 * bounds[0],
            hs1,
            hb1s1: hs1 * bounds[1],
            width,
            height,
        }
    }

    #[inline(always)]
    fn cell(&self, x: f64, y: f64) -> Option<u32> {
        let (p0, p1) = match &self.rot {
            Some(r) => {
                let dx = x - self.rot_center[0];
                let dy = y - self.rot_center[1];
                (dx * r[0][0] + dy * r[0][1] + self.rot_center[0], dx * r[1][0] + dy * r[1][1] + self.rot_center[1])
            }
            None => (x, y),
        };
        if p0 >= self.bounds[0] && p1 >= self.bounds[1] && p0 <= self.bounds[2] && p1 <= self.bounds[3] {
            // A point exactly on the far edge would index one past the end.
            let ix = ((self.ws0 * p0 - self.wb0s0) as usize).min(self.width - 1);
            let iy = ((self.hs1 * p1 - self.hb1s1) as usize).min(self.height - 1);
            Some((ix + self.width * iy) as u32)
        } else {
            None
        }
    }
}

/// The generator of sub-batch `unit` of a render seeded with `seed`.
fn sub_batch_rng(seed: u64, unit: u64) -> Mwc {
    let table = multipliers::table();
    let a = table[(unit % table.len() as u64) as usize];
    let w = philox_block(seed, Domain::Flame.stream(unit & warpmc_rng::stream::MAX_STREAM_INDEX), 0);
    Mwc::from_state(a, seed_state(a, w[0], w[1])).expect("seed_state gives valid states")
}

/// Applies the size and quality scales to a copy of the sequence.
fn scaled(flames: &[Flame], s: &RenderSettings) -> Result<Vec<Flame>, RenderError> {
    if !(s.quality_scale > 0.0 && s.quality_scale.is_finite()) {
        return Err(invalid(format!("quality scale must be positive, not {}", s.quality_scale)));
    }
    if !(s.size_scale > 0.0 && s.size_scale.is_finite()) {
        return Err(invalid(format!("size scale must be positive, not {}", s.size_scale)));
    }
    flames
        .iter()
        .map(|f| {
            let mut f = f.clone();
            f.quality *= s.quality_scale;
            f.width = (f64::from(f.width) * s.size_scale) as u32;
            f.height = (f64::from(f.height) * s.size_scale) as u32;
            f.scale *= s.size_scale;
            if f.width == 0 || f.height == 0 {
                return Err(invalid("the output image would have no pixels"));
            }
            Ok(f)
        })
        .collect()
}

/// Renders the frame at `time` of the sequence `flames` (one flame for a
/// still image). `progress` receives the fraction done, from 0 to 1.
pub fn render(
    flames: &[Flame],
    time: f64,
    settings: &RenderSettings,
    progress: &(dyn Fn(f64) + Sync),
) -> Result<RenderedFrame, RenderError> {
    if flames.is_empty() {
        return Err(invalid("no flame to render"));
    }
    let flames = scaled(flames, settings)?;
    match settings.precision {
        Precision::F32 => render_with::<f32>(&flames, time, settings, progress),
        Precision::F64 => render_with::<f64>(&flames, time, settings, progress),
    }
}

fn try_buffer<T: Clone>(n: usize, value: T, cells: u64) -> Result<Vec<T>, RenderError> {
    let mut v = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| RenderError::OutOfMemory { bytes: (n * std::mem::size_of::<T>()) as u64, cells })?;
    v.resize(n, value);
    Ok(v)
}

/// One chaos-game job: a flame (one temporal sample, or all of them at
/// once for a still) to iterate `n_iter` times into the histogram.
pub(crate) struct IterationJob<'a> {
    pub(crate) cp: &'a Flame,
    pub(crate) game: &'a ChaosGame,
    pub(crate) cmap: &'a ColorMap,
    pub(crate) camera: &'a Camera,
    /// Iterations to keep (after fuse).
    pub(crate) n_iter: u64,
}

/// Where the histogram lives and how it is filled and finished: the CPU
/// (here) or the GPU (`cuda`). The frame logic (passes, temporal samples,
/// constants) is shared in [`render_frame`].
pub(crate) trait FrameBackend {
    /// Clears the histogram for a new pass.
    fn begin_pass(&mut self) -> Result<(), RenderError>;
    /// Runs `job`; `progress` receives the iterations done so far in it.
    /// Returns (iterations kept, bad values).
    fn iterate(&mut self, job: &IterationJob<'_>, progress: &mut dyn FnMut(u64)) -> Result<(u64, u64), RenderError>;
    /// Log-scales the pass's histogram (with density estimation when `de`
    /// is given) into the accumulation buffer.
    fn end_pass(&mut self, de: Option<&DensityFilters>, k1: f64, k2: f64) -> Result<(), RenderError>;
    /// Filters and tone-maps the accumulation buffer into pixels.
    fn finish(&mut self, geometry: &FrameGeometry, tone: &ToneMap) -> Result<Vec<[f64; 4]>, RenderError>;
}

/// Sizes of one frame's buffers, shared by the backends.
#[derive(Clone, Debug)]
pub(crate) struct FrameGeometry {
    /// Supersampling factor.
    pub(crate) ss: usize,
    /// Output size in pixels.
    pub(crate) width: usize,
    pub(crate) height: usize,
    /// Histogram size in cells (supersampled, with the gutter).
    pub(crate) hw: usize,
    pub(crate) hh: usize,
    /// Gutter cells on each side.
    pub(crate) gutter: usize,
    /// Corner of the spatial filter window of pixel (0, 0).
    pub(crate) de_offset: usize,
    pub(crate) filter: SpatialFilter,
}

impl FrameGeometry {
    /// Histogram cells.
    pub(crate) fn cells(&self) -> u64 {
        self.hw as u64 * self.hh as u64
    }
}

/// Validates the frame's settings and works out its buffer sizes.
pub(crate) fn frame_geometry(flames: &[Flame], cp0: &Flame) -> Result<FrameGeometry, RenderError> {
    let first = &flames[0];
    if first.supersample < 1 || first.supersample > 64 {
        return Err(invalid(format!("supersample must be 1 to 64, not {}", first.supersample)));
    }
    let ss = first.supersample as usize;
    if cp0.passes < 1 {
        return Err(invalid("passes must be at least 1"));
    }
    let (width, height) = (cp0.width as usize, cp0.height as usize);
    let filter = SpatialFilter::new(first.filter_shape, first.filter_radius, first.supersample).ok_or_else(|| {
        invalid(format!("spatial filter radius {} is too small to give a kernel", first.filter_radius))
    })?;

    // Gutter: room for the spatial filter and the density kernels.
    let mut gutter = ((filter.width as i64 - ss as i64) / 2).max(0) as usize;
    let mut de_gutter = 0usize;
    for f in flames {
        if f.estimator_radius.is_nan() || f.estimator_radius < 0.0 {
            return Err(invalid(format!("estimator_radius must be >= 0, not {}", f.estimator_radius)));
        }
        de_gutter = de_gutter.max(f.estimator_radius.ceil() as usize * ss);
    }
    if de_gutter > 0 {
        de_gutter += ss - 1;
    }
    let de_offset = if de_gutter > gutter {
        let off = de_gutter - gutter;
        gutter = de_gutter;
        off
    } else {
        0
    };
    let hw = ss * width + 2 * gutter;
    let hh = ss * height + 2 * gutter;
    Ok(FrameGeometry { ss, width, height, hw, hh, gutter, de_offset, filter })
}

/// The frame at `time` through `backend`: flam3's passes and temporal
/// samples, the brightness constants, the tone mapping.
pub(crate) fn render_frame<B: FrameBackend>(
    flames: &[Flame],
    time: f64,
    settings: &RenderSettings,
    geometry: &FrameGeometry,
    backend: &mut B,
    progress: &(dyn Fn(f64) + Sync),
) -> Result<RenderedFrame, RenderError> {
    let start = Instant::now();
    let cp0 = interpolate(flames, time);
    let first = &flames[0];
    let passes = cp0.passes.max(1) as usize;
    let ntemporal = settings.temporal_samples.unwrap_or(1).max(1) as usize;
    let FrameGeometry { ss, width, height, gutter, hw, hh, .. } = *geometry;
    let temporal = TemporalSamples::new(
        passes * ntemporal,
        cp0.temporal_filter,
        cp0.temporal_filter_exp,
        cp0.temporal_filter_width,
    );

    let mut stats = RenderStats::default();
    let mut vib_sum = 0.0;
    let mut gamma_sum = 0.0;
    let mut bg_sum = [0.0; 3];
    let mut tone_n = 0.0;
    let single = flames.len() == 1;
    let mut last_cp = cp0.clone();

    // Total work, for progress.
    let per_pass_samples = |cp: &Flame| {
        let zoom = 2f64.powf(cp.zoom);
        cp.quality * zoom * zoom * f64::from(cp.width) * f64::from(cp.height)
    };
    let total_iters = per_pass_samples(&cp0).max(1.0);
    let mut done_iters = 0.0;

    for pass in 0..passes {
        backend.begin_pass()?;
        let de_cp = interpolate(flames, time + temporal.deltas[pass * ntemporal]);
        if de_cp.estimator_minimum.is_nan() || de_cp.estimator_minimum < 0.0 {
            return Err(invalid("estimator_minimum must be >= 0"));
        }
        let de = if de_cp.estimator_radius > 0.0 {
            Some(
                DensityFilters::new(
                    de_cp.estimator_radius,
                    de_cp.estimator_minimum,
                    de_cp.estimator_curve,
                    first.supersample,
                )
                .map_err(invalid)?,
            )
        } else {
            None
        };

        // With one control point all temporal samples are the same flame:
        // run them as one batch weighted by their mean.
        let groups: Vec<(f64, f64, usize)> = if single {
            let w = &temporal.weights[pass * ntemporal..(pass + 1) * ntemporal];
            vec![(time, w.iter().sum::<f64>() / ntemporal as f64, ntemporal)]
        } else {
            (0..ntemporal)
                .map(|t| {
                    let k = pass * ntemporal + t;
                    (time + temporal.deltas[k], temporal.weights[k], 1)
                })
                .collect()
        };

        let mut sample_density = 0.0;
        let mut ppu = 0.0;
        // Iterations asked for and done: a backend may do a few more than
        // asked (the GPU finishes its last launch), which the brightness
        // constant takes into account.
        let (mut asked, mut done) = (0u64, 0u64);
        for (t, color_scalar, reps) in groups {
            let cp = if single { cp0.clone() } else { interpolate(flames, t) };
            if cp.quality.is_nan() || cp.quality <= 0.0 {
                return Err(invalid(format!("quality must be greater than zero, not {}", cp.quality)));
            }
            let game = ChaosGame::new(&cp).map_err(|e| invalid(e.to_string()))?;
            let mut entries = Box::new([[0.0; 4]; 256]);
            for (e, p) in entries.iter_mut().zip(cp.palette.entries.iter()) {
                for k in 0..4 {
                    e[k] = p[k] * 255.0 * color_scalar;
                }
            }
            let cmap = ColorMap { entries, linear: cp.palette_mode == PaletteMode::Linear };
            let camera = Camera::new(&cp, gutter, ss, hw, hh);
            let zoom = 2f64.powf(cp.zoom);
            sample_density = cp.quality * zoom * zoom;
            ppu = cp.scale * zoom;
            let nsamples = sample_density * width as f64 * height as f64;
            let n_iter = (nsamples / (passes * ntemporal) as f64 * reps as f64).round() as u64;
            let job = IterationJob { cp: &cp, game: &game, cmap: &cmap, camera: &camera, n_iter };
            let before = done_iters;
            let (kept, bad) = backend.iterate(&job, &mut |done| {
                progress(((before + done as f64) / total_iters).min(1.0) * 0.95);
            })?;
            done_iters += kept as f64;
            asked += n_iter;
            done += kept;
            stats.iterations += kept;
            stats.bad_values += bad;
            vib_sum += cp.vibrancy * reps as f64;
            gamma_sum += cp.gamma * reps as f64;
            for (sum, bg) in bg_sum.iter_mut().zip(cp.background) {
                *sum += bg * reps as f64;
            }
            tone_n += reps as f64;
            last_cp = cp;
        }

        let cp = &last_cp;
        let k1 = cp.contrast * cp.brightness * 255.0 * 268.0 / passes as f64 / 256.0;
        let area = (width * height) as f64 / (ppu * ppu);
        let done_ratio = if asked > 0 && done > 0 { done as f64 / asked as f64 } else { 1.0 };
        let k2 = (ss * ss * passes) as f64 / (cp.contrast * area * 255.0 * sample_density * done_ratio * temporal.mean);
        let filter_start = Instant::now();
        backend.end_pass(de.as_ref(), k1, k2)?;
        stats.filter_seconds += filter_start.elapsed().as_secs_f64();
    }

    let filter_start = Instant::now();
    let tone = ToneMap {
        inv_gamma: 1.0 / (gamma_sum / tone_n),
        vibrancy: vib_sum / tone_n,
        gamma_threshold: last_cp.gamma_threshold,
        highlight_power: cp0.highlight_power,
        background: [bg_sum[0] / tone_n * 256.0, bg_sum[1] / tone_n * 256.0, bg_sum[2] / tone_n * 256.0],
        transparent: settings.transparent,
    };
    let pixels = backend.finish(geometry, &tone)?;
    stats.filter_seconds += filter_start.elapsed().as_secs_f64();
    stats.iterate_seconds = start.elapsed().as_secs_f64() - stats.filter_seconds;
    progress(1.0);
    Ok(RenderedFrame { width: width as u32, height: height as u32, pixels, transparent: settings.transparent, stats })
}

/// The CPU backend: histogram and accumulation buffer in host memory,
/// sub-batches on every core, deterministic sums.
struct CpuBackend<T: Bucket> {
    hist: Vec<[T; 5]>,
    acc: Vec<[T; 4]>,
    hw: usize,
    hh: usize,
    ss: usize,
    seed: u64,
    sub_batch_size: u64,
    /// Next sub-batch index (its random stream).
    unit: u64,
    threads: usize,
    bands: usize,
    cells_per_band: u32,
}

impl<T: Bucket> CpuBackend<T> {
    fn new(g: &FrameGeometry, settings: &RenderSettings) -> Result<Self, RenderError> {
        let cells = g.cells();
        let hist: Vec<[T; 5]> = try_buffer(g.hw * g.hh, [T::default(); 5], cells)?;
        let acc: Vec<[T; 4]> = try_buffer(g.hw * g.hh, [T::default(); 4], cells)?;
        // Bands for deterministic parallel accumulation.
        let threads = rayon::current_num_threads().max(1);
        let band_rows = g.hh.div_ceil(threads * 4).max(1);
        Ok(CpuBackend {
            hist,
            acc,
            hw: g.hw,
            hh: g.hh,
            ss: g.ss,
            seed: settings.seed,
            sub_batch_size: settings.sub_batch_size.max(1) as u64,
            unit: 0,
            threads,
            bands: g.hh.div_ceil(band_rows),
            cells_per_band: (band_rows * g.hw) as u32,
        })
    }
}

impl<T: Bucket> FrameBackend for CpuBackend<T> {
    fn begin_pass(&mut self) -> Result<(), RenderError> {
        self.hist.par_iter_mut().for_each(|c| *c = [T::default(); 5]);
        Ok(())
    }

    fn iterate(&mut self, job: &IterationJob<'_>, progress: &mut dyn FnMut(u64)) -> Result<(u64, u64), RenderError> {
        let (n_iter, sbs) = (job.n_iter, self.sub_batch_size);
        let n_sub = n_iter.div_ceil(sbs);
        let round = (self.threads * 4) as u64;
        let (cells_per_band, bands, seed, unit) = (self.cells_per_band, self.bands, self.seed, self.unit);
        let mut bad_total = 0;
        let mut s0 = 0;
        while s0 < n_sub {
            let s1 = (s0 + round).min(n_sub);
            let results: Vec<(BandedSamples, u64)> = (s0..s1)
                .into_par_iter()
                .map(|s| {
                    let n = sbs.min(n_iter - s * sbs) as usize;
                    let mut rng = sub_batch_rng(seed, unit + s);
                    let mut raw = Vec::with_capacity(n);
                    let bad = job.game.run(n, &mut rng, |p| {
                        if p[3] == 0.0 {
                            return;
                        }
                        if let Some(cell) = job.camera.cell(p[0], p[1]) {
                            raw.push(Sample { cell, color: p[2] as f32, visibility: p[3] as f32 });
                        }
                    });
                    let mut banded = BandedSamples::default();
                    BandedSamples::from_raw(&raw, cells_per_band, bands, &mut banded);
                    (banded, bad)
                })
                .collect();
            let batches: Vec<BandedSamples> = results
                .into_iter()
                .map(|(b, bad)| {
                    bad_total += bad;
                    b
                })
                .collect();
            self.hist.par_chunks_mut(cells_per_band as usize).enumerate().for_each(|(b, chunk)| {
                histogram::accumulate_band(chunk, b as u32 * cells_per_band, b, &batches, job.cmap);
            });
            progress((s1 * sbs).min(n_iter));
            s0 = s1;
        }
        self.unit += n_sub;
        Ok((n_iter, bad_total))
    }

    fn end_pass(&mut self, de: Option<&DensityFilters>, k1: f64, k2: f64) -> Result<(), RenderError> {
        match de {
            Some(de) => density::density_estimate(&self.hist, &mut self.acc, self.hw, self.hh, self.ss, de, k1, k2),
            None => density::log_scale(&self.hist, &mut self.acc, self.hw, k1, k2),
        }
        Ok(())
    }

    fn finish(&mut self, g: &FrameGeometry, tone: &ToneMap) -> Result<Vec<[f64; 4]>, RenderError> {
        self.hist = Vec::new();
        let mut pixels = vec![[0.0; 4]; g.width * g.height];
        tonemap::filter_and_map(&self.acc, self.hw, &g.filter, g.de_offset, g.ss, tone, g.width, &mut pixels);
        Ok(pixels)
    }
}

fn render_with<T: Bucket>(
    flames: &[Flame],
    time: f64,
    settings: &RenderSettings,
    progress: &(dyn Fn(f64) + Sync),
) -> Result<RenderedFrame, RenderError> {
    let cp0 = interpolate(flames, time);
    let geometry = frame_geometry(flames, &cp0)?;
    // The CPU holds the whole histogram, indexed in 32 bits (the GPU
    // renders larger frames in strips).
    if geometry.cells() > u64::from(u32::MAX) {
        return Err(RenderError::OutOfMemory { bytes: geometry.cells() * 36, cells: geometry.cells() });
    }
    let mut backend = CpuBackend::<T>::new(&geometry, settings)?;
    render_frame(flames, time, settings, &geometry, &mut backend, progress)
}
