//! The frame logic both backends share: flam3's passes and temporal
//! samples, the iterations each needs, the brightness constants and the
//! tone mapping. Where the histogram lives and how it is filled and
//! finished is a [`FrameBackend`]'s business (the CPU's in `cpu.rs`, the
//! GPU's in `cuda/`).

use std::borrow::Cow;
use std::sync::atomic::Ordering;
use std::time::Instant;

use super::camera::Camera;
use super::chaos::ChaosGame;
use super::filters::{DensityFilters, MAX_KERNEL_CELLS, SpatialFilter, TemporalSamples};
use super::histogram::ColorMap;
use super::tonemap::ToneMap;
use super::{Field, RenderSettings, RenderStats, RenderedFrame, shown};
use crate::error::{FlameError, Result};
use crate::genome::{Flame, PaletteMode};
use crate::interpolate::interpolate;
use crate::palette::PALETTE_SIZE;

/// Applies the size and quality scales to a copy of the sequence, and
/// halves the height for a field of interlaced rows; the sequence itself
/// where neither changes it.
pub(crate) fn scaled<'a>(flames: &'a [Flame], s: &RenderSettings) -> Result<Cow<'a, [Flame]>> {
    let mut flames = with_scales(flames, s)?;
    if s.field != Field::Both {
        for f in flames.to_mut() {
            if f.height < 2 {
                return Err(FlameError::invalid("an image one pixel high has no field of interlaced rows"));
            }
            // flam3's image_height = cp.height / 2; the camera draws the
            // whole view into it.
            f.height /= 2;
        }
    }
    Ok(flames)
}

/// The sequence as it is rendered under `s`: each flame's quality times
/// the quality scale, its image size (truncated to whole pixels) and camera
/// scale times the size scale, as flam3-render applies `qs` and `ss`, and
/// as it writes the genome into its PNGs, so that the embedded genome
/// renders the same image again.
///
/// Scales of exactly 1 change nothing, and the sequence is then borrowed,
/// not copied: an animation of thousands of keyframes (flam3-genome's
/// sequences have one per frame) would otherwise copy them all for each
/// frame.
pub fn with_scales<'a>(flames: &'a [Flame], s: &RenderSettings) -> Result<Cow<'a, [Flame]>> {
    if flames.is_empty() {
        return Err(FlameError::invalid("no flame to render"));
    }
    if !(s.quality_scale > 0.0 && s.quality_scale.is_finite()) {
        return Err(FlameError::invalid(format!(
            "quality scale must be positive and finite, not {}",
            shown(s.quality_scale)
        )));
    }
    if !(s.size_scale > 0.0 && s.size_scale.is_finite()) {
        return Err(FlameError::invalid(format!(
            "size scale must be positive and finite, not {}",
            shown(s.size_scale)
        )));
    }
    if s.quality_scale == 1.0 && s.size_scale == 1.0 {
        if flames.iter().any(|f| f.width == 0 || f.height == 0) {
            return Err(FlameError::invalid("the output image would have no pixels"));
        }
        return Ok(Cow::Borrowed(flames));
    }
    flames
        .iter()
        .map(|f| {
            let mut f = f.clone();
            f.quality *= s.quality_scale;
            let (w, h) = (f64::from(f.width) * s.size_scale, f64::from(f.height) * s.size_scale);
            if w >= 4294967296.0 || h >= 4294967296.0 {
                return Err(FlameError::invalid(format!(
                    "the output image would be {} × {} pixels; a side has at most 2^32 − 1",
                    w.trunc(),
                    h.trunc()
                )));
            }
            f.width = w as u32;
            f.height = h as u32;
            f.scale *= s.size_scale;
            if f.width == 0 || f.height == 0 {
                return Err(FlameError::invalid("the output image would have no pixels"));
            }
            Ok(f)
        })
        .collect::<Result<Vec<Flame>>>()
        .map(Cow::Owned)
}

/// One chaos-game job: a flame (one temporal sample, or all of them at
/// once for a still) to iterate `n_iter` times into the histogram.
pub(crate) struct IterationJob<'a> {
    /// The flame (the CUDA backend generates its kernel from it).
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    pub(crate) cp: &'a Flame,
    pub(crate) game: &'a ChaosGame,
    pub(crate) cmap: &'a ColorMap,
    pub(crate) camera: &'a Camera,
    /// Iterations to keep (after fuse).
    pub(crate) n_iter: u64,
}

/// What a chaos-game job did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct IterationCount {
    /// Iterations kept (fuse iterations not counted); the GPU may do a few
    /// more than asked (it finishes its last launch).
    pub(crate) kept: u64,
    /// Transforms that produced a bad value and were restarted.
    pub(crate) bad: u64,
}

/// The log-density scaling of one pass: each cell's colour is multiplied
/// by `k1·ln(1 + a·k2)/a`, a being its alpha sum (flam3's k1 and k2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct LogScale {
    pub(crate) k1: f64,
    pub(crate) k2: f64,
}

/// Where the histogram lives and how it is filled and finished: the CPU
/// or the GPU. The frame logic is [`render_frame`]'s.
pub(crate) trait FrameBackend {
    /// Clears the histogram for a new pass of `jobs` chaos-game jobs.
    fn begin_pass(&mut self, jobs: usize) -> Result<()>;
    /// Runs `job`; `progress` receives the iterations done so far in it,
    /// and an error from it (the render was cancelled) ends the job with
    /// that error.
    fn iterate(
        &mut self,
        job: &IterationJob<'_>,
        progress: &mut dyn FnMut(u64) -> Result<()>,
    ) -> Result<IterationCount>;
    /// The exact counts of the pass's jobs, for a backend whose
    /// [`FrameBackend::iterate`] returned planned counts (it launched
    /// without waiting for them); `None` when those were exact.
    fn pass_counts(&mut self) -> Result<Option<IterationCount>> {
        Ok(None)
    }
    /// Log-scales the pass's histogram (with density estimation when `de`
    /// is given) into the accumulation buffer.
    fn end_pass(&mut self, de: Option<&DensityFilters>, scale: LogScale) -> Result<()>;
    /// Filters and tone-maps the accumulation buffer into pixels.
    fn finish(&mut self, geometry: &FrameGeometry, tone: &ToneMap) -> Result<Vec<[f64; 4]>>;
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
    /// Width over height of a pixel ([`RenderSettings::pixel_aspect`]).
    pub(crate) pixel_aspect: f64,
    /// The rows drawn ([`RenderSettings::field`]).
    pub(crate) field: Field,
}

/// The sizes of a frame's buffers, worked out without allocating any.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct FrameSizes {
    pub(crate) ss: usize,
    pub(crate) width: usize,
    pub(crate) height: usize,
    pub(crate) hw: usize,
    pub(crate) hh: usize,
    pub(crate) gutter: usize,
    pub(crate) de_offset: usize,
    /// Side of the spatial filter kernel, in cells.
    pub(crate) filter_width: usize,
    /// Width over height of a pixel ([`RenderSettings::pixel_aspect`]).
    pub(crate) pixel_aspect: f64,
    /// The rows drawn ([`RenderSettings::field`]).
    pub(crate) field: Field,
}

impl FrameSizes {
    /// Histogram cells.
    pub(crate) fn cells(&self) -> u64 {
        (self.hw as u64).saturating_mul(self.hh as u64)
    }

    /// The geometry, with the spatial filter kernel of the first flame of
    /// `flames` (whose sizes these are) built: as in flam3, the kernel's
    /// shape, radius and supersampling are the first flame's, while the
    /// cells it steps over are the frame's (see [`frame_sizes`]).
    pub(crate) fn geometry(&self, flames: &[Flame]) -> Result<FrameGeometry> {
        let first = &flames[0];
        let filter = SpatialFilter::new(
            first.filter_shape,
            first.filter_radius,
            first.supersample,
            self.pixel_aspect,
            self.field != Field::Both,
        )?;
        debug_assert_eq!(filter.width, self.filter_width);
        let FrameSizes { ss, width, height, hw, hh, gutter, de_offset, pixel_aspect, field, .. } = *self;
        Ok(FrameGeometry { ss, width, height, hw, hh, gutter, de_offset, filter, pixel_aspect, field })
    }
}

/// Validates the frame's settings and works out its buffer sizes, without
/// allocating. `cp0` is the flame at the frame's time: its supersampling
/// sets the histogram's cells per pixel, the density estimation and the
/// step of the spatial filter, as flam3 takes them from the interpolated
/// flame; the filter kernel itself is the first flame's. `pixel_aspect`:
/// width over height of a pixel ([`RenderSettings::pixel_aspect`]);
/// `field`: the rows drawn ([`RenderSettings::field`]; the flames are
/// already a field's height, see [`scaled`]).
pub(crate) fn frame_sizes(flames: &[Flame], cp0: &Flame, pixel_aspect: f64, field: Field) -> Result<FrameSizes> {
    check_pixel_aspect(pixel_aspect)?;
    let first = &flames[0];
    for f in [first, cp0] {
        if f.supersample < 1 || f.supersample > 64 {
            return Err(FlameError::invalid(format!(
                "supersample (or oversample) must be 1 to 64, not {}",
                f.supersample
            )));
        }
    }
    let ss = cp0.supersample as usize;
    if cp0.passes < 1 {
        return Err(FlameError::invalid("passes must be at least 1"));
    }
    let (width, height) = (cp0.width as usize, cp0.height as usize);
    let filter_width = SpatialFilter::width(first.filter_shape, first.filter_radius, first.supersample, pixel_aspect)?;

    // Gutter: room for the spatial filter and the density kernels. flam3
    // counts the filter's part as (filter width − supersample) / 2, which
    // is −1 when the filter is narrower than a pixel's cells (supersample
    // 3 with filter below about 0.22, for instance). The density kernels'
    // part, at least 0, then wins, and each pixel's filter window starts
    // one cell further in: for a one-cell filter at supersample 3, on the
    // pixel's middle cell.
    let filter_gutter = (filter_width as i64 - ss as i64) / 2;
    let mut de_gutter = 0usize;
    for f in flames {
        if f.estimator_radius.is_nan() || f.estimator_radius < 0.0 {
            return Err(FlameError::invalid(format!(
                "estimator_radius must be >= 0, not {}",
                shown(f.estimator_radius)
            )));
        }
        let reach = f.estimator_radius.ceil() * ss as f64;
        if reach >= MAX_KERNEL_CELLS {
            return Err(FlameError::invalid(format!(
                "estimator_radius {} is too large: density estimation would reach {reach:.3e} cells",
                shown(f.estimator_radius)
            )));
        }
        de_gutter = de_gutter.max(reach as usize);
    }
    if de_gutter > 0 {
        de_gutter += ss - 1;
    }
    let (mut gutter, mut de_offset) = if de_gutter as i64 > filter_gutter {
        (de_gutter, (de_gutter as i64 - filter_gutter) as usize)
    } else {
        (filter_gutter as usize, 0)
    };
    // A kernel built for the first flame's supersampling can be one cell
    // wider than the gutter holds at the frame's (their parities differ):
    // flam3 then reads past the end of the histogram's rows. Here the
    // gutter grows by what the last window would overrun, and the windows
    // move with it, so they cover the same cells of the image.
    // (The last window of a row ends at de_offset + ss·(width − 1) +
    // filter_width; the row holds ss·width + 2·gutter cells.)
    let overrun = (de_offset + filter_width).saturating_sub(ss + 2 * gutter);
    gutter += overrun;
    de_offset += overrun;
    let hw = ss * width + 2 * gutter;
    let hh = ss * height + 2 * gutter;
    Ok(FrameSizes { ss, width, height, hw, hh, gutter, de_offset, filter_width, pixel_aspect, field })
}

/// flam3-render's check of `pixel_aspect`.
fn check_pixel_aspect(pixel_aspect: f64) -> Result<()> {
    if pixel_aspect > 0.0 && pixel_aspect.is_finite() {
        Ok(())
    } else {
        Err(FlameError::invalid(format!("pixel aspect ratio must be positive and finite, not {}", shown(pixel_aspect))))
    }
}

/// Validates the frame's settings and works out its buffer sizes; builds
/// the spatial filter kernel.
#[cfg(all(test, feature = "cuda"))]
pub(crate) fn frame_geometry(flames: &[Flame], cp0: &Flame) -> Result<FrameGeometry> {
    frame_sizes(flames, cp0, 1.0, Field::Both)?.geometry(flames)
}

/// Temporal samples iterated as one job: at `time`, colours weighted by
/// `color_scalar`, standing for `reps` temporal samples.
#[derive(Clone, Copy, Debug)]
struct TemporalGroup {
    time: f64,
    color_scalar: f64,
    reps: usize,
}

/// The passes and temporal samples of a frame (flam3's `render_rectangle`
/// loop structure).
struct FramePlan<'a> {
    flames: &'a [Flame],
    time: f64,
    /// The flame at the frame's time.
    cp0: Flame,
    passes: usize,
    /// Temporal samples per pass.
    ntemporal: usize,
    temporal: TemporalSamples,
}

impl<'a> FramePlan<'a> {
    fn new(flames: &'a [Flame], time: f64, settings: &RenderSettings) -> Self {
        let cp0 = interpolate(flames, time);
        let passes = cp0.passes.max(1) as usize;
        let ntemporal = settings.temporal_samples.unwrap_or(1).max(1) as usize;
        let temporal = TemporalSamples::new(
            passes * ntemporal,
            cp0.temporal_filter,
            cp0.temporal_filter_exp,
            cp0.temporal_filter_width,
        );
        FramePlan { flames, time, cp0, passes, ntemporal, temporal }
    }

    /// Iterations the whole frame takes, for progress.
    fn total_iterations(&self) -> f64 {
        frame_iterations(&self.cp0).max(1.0)
    }

    /// The density-estimation kernels of `pass` (`None` without density
    /// estimation), from the flame at the pass's first temporal sample.
    fn density_filters(&self, pass: usize) -> Result<Option<DensityFilters>> {
        let de_cp = interpolate(self.flames, self.time + self.temporal.deltas[pass * self.ntemporal]);
        if de_cp.estimator_minimum.is_nan() || de_cp.estimator_minimum < 0.0 {
            return Err(FlameError::invalid("estimator_minimum must be >= 0"));
        }
        if de_cp.estimator_radius > 0.0 {
            let filters = DensityFilters::new(
                de_cp.estimator_radius,
                de_cp.estimator_minimum,
                de_cp.estimator_curve,
                self.cp0.supersample,
            )?;
            Ok(filters.estimates().then_some(filters))
        } else {
            Ok(None)
        }
    }

    /// The jobs of `pass`. With one control point all temporal samples are
    /// the same flame: they run as one job weighted by their mean.
    fn groups(&self, pass: usize) -> Vec<TemporalGroup> {
        let n = self.ntemporal;
        if self.flames.len() == 1 {
            let w = &self.temporal.weights[pass * n..(pass + 1) * n];
            vec![TemporalGroup { time: self.time, color_scalar: w.iter().sum::<f64>() / n as f64, reps: n }]
        } else {
            (0..n)
                .map(|t| {
                    let k = pass * n + t;
                    TemporalGroup {
                        time: self.time + self.temporal.deltas[k],
                        color_scalar: self.temporal.weights[k],
                        reps: 1,
                    }
                })
                .collect()
        }
    }

    /// The flame of `group`.
    fn flame(&self, group: &TemporalGroup) -> Flame {
        if self.flames.len() == 1 { self.cp0.clone() } else { interpolate(self.flames, group.time) }
    }
}

/// Chaos-game iterations of a frame of `cp` (every pass and temporal
/// sample together): flam3's samples per pixel, `quality · 2^(2·zoom)`,
/// times the pixels.
pub(crate) fn frame_iterations(cp: &Flame) -> f64 {
    let zoom = 2f64.powf(cp.zoom);
    cp.quality * zoom * zoom * f64::from(cp.width) * f64::from(cp.height)
}

/// The most chaos-game iterations a frame may take: 2^53 (9.0·10¹⁵), the
/// largest count an f64 holds exactly, and a week of the fastest GPU
/// (years of a CPU). Artists' renders stay far below: quality 5000 on an
/// 8K frame is 1.7·10¹¹.
pub(crate) const MAX_ITERATIONS: f64 = 9007199254740992.0;

/// An error unless `n` iterations (of a frame of `cp`) is a count that can
/// be run: finite and at most [`MAX_ITERATIONS`].
pub(crate) fn check_iterations(n: f64, cp: &Flame) -> Result<()> {
    if n.is_finite() && n <= MAX_ITERATIONS {
        return Ok(());
    }
    Err(FlameError::invalid(format!(
        "the frame asks for {n:.3e} chaos-game iterations (quality {} × 2^(2·zoom), zoom {}, × {} × {} pixels), \
         more than the 2^53 (9.0e15) a frame may take, years of rendering; lower the quality, the quality scale or \
         the zoom",
        shown(cp.quality),
        shown(cp.zoom),
        cp.width,
        cp.height
    )))
}

/// The palette of `cp` premultiplied by 255 and the temporal weight.
fn color_map(cp: &Flame, color_scalar: f64) -> ColorMap {
    let mut entries = Box::new([[0.0; 4]; PALETTE_SIZE]);
    for (e, p) in entries.iter_mut().zip(cp.palette.entries.iter()) {
        for k in 0..4 {
            e[k] = p[k] * 255.0 * color_scalar;
        }
    }
    ColorMap { entries, linear: cp.palette_mode == PaletteMode::Linear }
}

/// The tone-mapping values of a frame, summed over its temporal samples
/// (weighted by the samples each job stands for).
#[derive(Default)]
struct ToneSums {
    vibrancy: f64,
    gamma: f64,
    background: [f64; 3],
    n: f64,
}

impl ToneSums {
    fn add(&mut self, cp: &Flame, reps: usize) {
        self.vibrancy += cp.vibrancy * reps as f64;
        self.gamma += cp.gamma * reps as f64;
        for (sum, bg) in self.background.iter_mut().zip(cp.background) {
            *sum += bg * reps as f64;
        }
        self.n += reps as f64;
    }

    /// The means as a tone map; the remaining values come from `last`
    /// (the flame of the last job) and `cp0` (the flame at the frame's
    /// time), as flam3 takes them.
    fn tone_map(&self, last: &Flame, cp0: &Flame, transparent: bool) -> ToneMap {
        let n = self.n;
        let bg = self.background;
        ToneMap {
            inv_gamma: 1.0 / (self.gamma / n),
            vibrancy: self.vibrancy / n,
            gamma_threshold: last.gamma_threshold,
            highlight_power: cp0.highlight_power,
            background: [bg[0] / n * 256.0, bg[1] / n * 256.0, bg[2] / n * 256.0],
            transparent,
            early_clip: false,
            cell_scale: 1.0,
        }
    }
}

/// What the jobs of one pass add up to, for its brightness constants.
#[derive(Default)]
struct PassTotals {
    /// Samples per unit area and pixels per unit of the pass's last job.
    sample_density: f64,
    ppu: f64,
    /// Iterations asked for and done (a backend may do a few more than
    /// asked, which the brightness constant takes into account).
    asked: u64,
    done: u64,
}

impl PassTotals {
    /// flam3's k1 and k2 for the pass, k1 divided by `acc_scale` (see
    /// [`accumulation_scale`]).
    fn log_scale(
        &self,
        cp: &Flame,
        geometry: &FrameGeometry,
        passes: usize,
        temporal_mean: f64,
        acc_scale: f64,
    ) -> LogScale {
        let FrameGeometry { ss, width, height, pixel_aspect, field, .. } = *geometry;
        let k1 = cp.contrast * (cp.brightness / acc_scale) * 255.0 * 268.0 / passes as f64 / 256.0;
        // flam3: W·H / (ppux·ppuy), ppux = ppu / pixel_aspect, and ppuy =
        // ppu / 2 for a field (whose H is half the frame's).
        let ppuy = if field == Field::Both { self.ppu } else { self.ppu / 2.0 };
        let area = (width * height) as f64 / (self.ppu / pixel_aspect * ppuy);
        let done_ratio = if self.asked > 0 && self.done > 0 { self.done as f64 / self.asked as f64 } else { 1.0 };
        let k2 =
            (ss * ss * passes) as f64 / (cp.contrast * area * 255.0 * self.sample_density * done_ratio * temporal_mean);
        LogScale { k1, k2 }
    }
}

/// The largest k1 (the brightness constant) whose log-scaled cells the
/// accumulation buffer holds as they are. A cell holds about k1 × 10⁴ at
/// most, and f32 reaches 3.4·10³⁸; flam3's brightness 4 gives k1 ≈ 1000.
const K1_STORED: f64 = 1e20;

/// What the accumulation buffer's values are divided by: 1, except for a
/// brightness so large (1e100) that k1 exceeds [`K1_STORED`]. Its cells
/// would overflow f32 to infinity, and the tone mapping would turn them to
/// NaN, a black image, where flam3 draws saturated colours. The spatial
/// filter multiplies the values back in f64, so the pixels are those of an
/// f64 accumulation.
fn accumulation_scale(cp: &Flame, passes: usize) -> f64 {
    let over = cp.contrast.abs() * (cp.brightness.abs() / K1_STORED) * 255.0 * 268.0 / passes as f64 / 256.0;
    if over > 1.0 && over.is_finite() { over } else { 1.0 }
}

/// What a chaos-game job needs besides its iteration count.
struct PreparedJob {
    cp: Flame,
    game: ChaosGame,
    cmap: ColorMap,
    camera: Camera,
}

impl PreparedJob {
    fn new(plan: &FramePlan<'_>, group: &TemporalGroup, geometry: &FrameGeometry) -> Result<Self> {
        let FrameGeometry { gutter, ss, hw, hh, pixel_aspect, field, .. } = *geometry;
        let cp = plan.flame(group);
        if cp.quality.is_nan() || cp.quality <= 0.0 {
            // A temporal sample far from the frame extrapolates the
            // keyframes (a huge temporal_filter_width): said as such.
            let sample = if group.time == plan.time {
                String::new()
            } else {
                format!(
                    " at time {}, a temporal sample of the frame at time {} (temporal_filter_width {})",
                    shown(group.time),
                    shown(plan.time),
                    shown(plan.cp0.temporal_filter_width)
                )
            };
            return Err(FlameError::invalid(format!(
                "quality must be greater than zero, not {}{sample}",
                shown(cp.quality)
            )));
        }
        let game = ChaosGame::new(&cp).map_err(|e| FlameError::invalid(e.to_string()))?;
        let cmap = color_map(&cp, group.color_scalar);
        let camera = Camera::new(&cp, gutter, ss, hw, hh, pixel_aspect, field);
        Ok(PreparedJob { cp, game, cmap, camera })
    }
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
) -> Result<RenderedFrame> {
    let start = Instant::now();
    let plan = FramePlan::new(flames, time, settings);
    let FrameGeometry { width, height, .. } = *geometry;
    let mut stats = RenderStats::default();
    let mut tone = ToneSums::default();
    let mut last_cp = plan.cp0.clone();
    let total_iters = plan.total_iterations();
    let mut done_iters = 0.0;
    let acc_scale = accumulation_scale(&plan.cp0, plan.passes);
    let go_on = || match &settings.cancel {
        Some(flag) if flag.load(Ordering::Relaxed) => Err(FlameError::Interrupted),
        _ => Ok(()),
    };

    for pass in 0..plan.passes {
        go_on()?;
        let groups = plan.groups(pass);
        backend.begin_pass(groups.len())?;
        let de = plan.density_filters(pass)?;
        let mut totals = PassTotals::default();
        let (iterations_before, bad_before) = (stats.iterations, stats.bad_values);
        for group in groups {
            let PreparedJob { cp, game, cmap, camera } = PreparedJob::new(&plan, &group, geometry)?;
            let zoom = 2f64.powf(cp.zoom);
            totals.sample_density = cp.quality * zoom * zoom;
            totals.ppu = cp.scale * zoom;
            let nsamples = totals.sample_density * width as f64 * height as f64;
            check_iterations(nsamples, &cp)?;
            let n_iter = (nsamples / (plan.passes * plan.ntemporal) as f64 * group.reps as f64).round() as u64;
            let job = IterationJob { cp: &cp, game: &game, cmap: &cmap, camera: &camera, n_iter };
            let before = done_iters;
            go_on()?;
            let count = backend.iterate(&job, &mut |done| {
                progress(((before + done as f64) / total_iters).min(1.0) * 0.95);
                go_on()
            })?;
            done_iters += count.kept as f64;
            totals.asked += n_iter;
            totals.done += count.kept;
            stats.iterations += count.kept;
            stats.bad_values += count.bad;
            tone.add(&cp, group.reps);
            last_cp = cp;
        }

        if let Some(count) = backend.pass_counts()? {
            totals.done = count.kept;
            stats.iterations = iterations_before + count.kept;
            stats.bad_values = bad_before + count.bad;
        }
        let scale = totals.log_scale(&last_cp, geometry, plan.passes, plan.temporal.mean, acc_scale);
        let filter_start = Instant::now();
        go_on()?;
        backend.end_pass(de.as_ref(), scale)?;
        stats.filter_seconds += filter_start.elapsed().as_secs_f64();
    }

    let filter_start = Instant::now();
    go_on()?;
    let mut tone = tone.tone_map(&last_cp, &plan.cp0, settings.transparent);
    let mut pixels = if settings.early_clip {
        // The cells are mapped one by one: the scale goes to them.
        tone.early_clip = true;
        tone.cell_scale = acc_scale;
        backend.finish(geometry, &tone)?
    } else if acc_scale == 1.0 {
        backend.finish(geometry, &tone)?
    } else {
        let mut scaled = geometry.clone();
        scaled.filter.coefs.iter_mut().for_each(|c| *c *= acc_scale);
        backend.finish(&scaled, &tone)?
    };
    // Fractorium's colour curves, on the finished values of either backend.
    if let Some(curves) = &last_cp.curves {
        super::curves::CurveTables::new(curves).apply(&mut pixels);
    }
    stats.filter_seconds += filter_start.elapsed().as_secs_f64();
    stats.iterate_seconds = start.elapsed().as_secs_f64() - stats.filter_seconds;
    // A frame finished after Ctrl-C is not handed on as if nothing had
    // happened: the caller stops as it would have a moment earlier.
    go_on()?;
    progress(1.0);
    Ok(RenderedFrame { width: width as u32, height: height as u32, pixels, transparent: settings.transparent, stats })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::test_flames::sierpinski;

    /// flam3's filter gutter, (filter width − supersample) / 2 in C's
    /// integer division, is −1 when the filter is narrower than a pixel's
    /// cells: the density gutter (0 without estimation) is then the
    /// larger, and each window starts one cell further in (rect.c).
    #[test]
    fn a_filter_narrower_than_a_pixel_moves_its_window_as_in_flam3() {
        let mut f = sierpinski();
        f.estimator_radius = 0.0;
        f.supersample = 3;
        f.filter_radius = 0.1;
        let flames = [f];
        let g = frame_sizes(&flames, &flames[0], 1.0, Field::Both).unwrap();
        assert_eq!((g.filter_width, g.gutter, g.de_offset), (1, 0, 1));
        assert_eq!((g.hw, g.hh), (3 * 64, 3 * 48));
        // With density estimation its gutter, counted from flam3's −1.
        let mut f = flames[0].clone();
        f.estimator_radius = 9.0;
        let flames = [f];
        let g = frame_sizes(&flames, &flames[0], 1.0, Field::Both).unwrap();
        assert_eq!((g.gutter, g.de_offset), (29, 30));
        // A filter as wide as the pixel's cells leaves no gutter.
        let mut f = flames[0].clone();
        f.estimator_radius = 0.0;
        f.supersample = 1;
        f.filter_radius = 0.2;
        let flames = [f];
        let g = frame_sizes(&flames, &flames[0], 1.0, Field::Both).unwrap();
        assert_eq!((g.filter_width, g.gutter, g.hw), (1, 0, 64));
    }
}
