//! The renderer on a CUDA device, after Steven Robertson's cuburn: the
//! chaos game with per-thread xform choice (the default) or warp-uniform
//! choice with a point shuffle between warps, histogram accumulation with
//! atomics (through a per-block cache of hot cells in shared memory by
//! default), and density estimation, filtering and tone mapping on the GPU.
//!
//! The frame logic (passes, temporal samples, brightness constants) is the
//! CPU renderer's; this module supplies a backend whose histogram and
//! accumulation buffer live in device memory. The chaos-game kernel is
//! generated per genome structure (`codegen.rs`), so only the variations a
//! flame uses are compiled; its variants are C++ policy types of
//! `kernels/iterate.cuh` chosen from [`IterationOptions`].
//!
//! Results agree with the CPU backend within the Monte Carlo noise, not bit
//! for bit: the GPU iterates in f32 (f64 on request), draws its random
//! numbers from one stream per thread rather than per sub-batch, and its
//! atomics add in an unpredictable order. Its sampling is flam3's: every
//! point plots one sub-batch (10000 iterations by default, or a temporal
//! sample's share when that is smaller) after a 15-iteration fuse, then
//! restarts from a random point, and a job smaller than the grid plots on
//! one thread per sub-batch; genomes whose points take long to reach the
//! attractor show those transients in flam3 and must show them here too,
//! in the same proportion.
//!
//! Measurements of the variants: docs/benchmarks/flame.md.
//!
//! ```
//! use warpmc_flame::genome::{ParseOptions, parse_str};
//! use warpmc_flame::render::cuda::CudaRenderer;
//! use warpmc_flame::render::{RenderSettings, render};
//! use warpmc_gpu::{BackendChoice, select};
//!
//! let xml = r#"<flame size="32 24" scale="10" quality="2"><xform weight="1" spherical="1"/></flame>"#;
//! let flames = parse_str(xml, "example", &ParseOptions::default())?.flames;
//! let settings = RenderSettings::default();
//! // The GPU WARPMC_DEVICE names, or the CPU where there is none.
//! let frame = match select(BackendChoice::Auto)?.gpu() {
//!     Some(gpu) => CudaRenderer::new(gpu.clone()).render(&flames, 0.0, &settings)?,
//!     None => render(&flames, 0.0, &settings)?,
//! };
//! assert_eq!((frame.width, frame.height), (32, 24));
//! # Ok::<(), warpmc_flame::FlameError>(())
//! ```

mod backend;
mod codegen;
#[cfg(test)]
mod compile_tests;
mod finish;
mod varcode;

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Mutex;

use warpmc_gpu::Gpu;

use super::cost::{Sizing, bytes, host_budget, parts_of};
use super::frame::{FrameGeometry, FrameSizes, render_frame, scaled};
use super::{FrameCost, Precision, RenderSettings, RenderStats, RenderedFrame};
use crate::error::{FlameError, Result};
use crate::genome::Flame;
use backend::{CompiledKernel, GpuBackend, KeepBuffers, KeptBuffers, StripBuffers, needs_count};
use codegen::point_bytes;

/// How each iteration's xform is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Selection {
    /// One random number per warp: every lane applies the same xform, so
    /// the xform's code runs without divergence (cuburn). Faster on some
    /// genomes, but noisier at equal sample counts even with the shuffle,
    /// since the warp's points share their transforms. Flames with chaos
    /// (xaos) rows fall back to [`Selection::PerThread`].
    WarpUniform,
    /// Every thread draws its own xform, as the CPU does: the default, as
    /// it matches the CPU within the noise floor on every sample genome.
    #[default]
    PerThread,
}

/// How points move between warps after each iteration (with warp-uniform
/// selection, points that stay together converge; with per-thread
/// selection there is no shuffle).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Shuffle {
    /// Points stay in their thread.
    None,
    /// cuburn's exchange through shared memory: lane l of warp n moves to
    /// slot (l + (n + l)·32) mod block.
    Simple,
    /// A random rotation of each warp's lanes, then the simple exchange.
    #[default]
    Better,
}

/// How samples are added into the histogram.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Accumulation {
    /// One (vector) atomic per run of samples: a thread sums consecutive
    /// samples that land in one cell in registers, and adds the sum when
    /// its point moves to another cell (points converging on a fixed
    /// point would otherwise make every thread hit one address).
    Plain,
    /// Lanes of a warp that hit the same cell add their colours first
    /// (match_any and a tree over the peers, from warpmc-prims), then one
    /// atomic per cell.
    WarpAggregated,
    /// As `Plain`, through a cache of cells in shared memory: the first
    /// cells a block's samples reach in a launch claim its slots, later
    /// samples of those cells add into shared memory, and the block adds
    /// the slots to the histogram when the launch ends. Hot cells (a point
    /// converging on a fixed point) then cost shared-memory atomics
    /// instead of global ones on one address from every block: the
    /// default, the fastest on the sample genomes.
    #[default]
    SharedCache,
}

/// Knobs of the GPU chaos game.
#[derive(Clone, Debug, PartialEq)]
pub struct IterationOptions {
    /// Xform choice per warp or per thread.
    pub selection: Selection,
    /// Point exchange between warps.
    pub shuffle: Shuffle,
    /// Histogram accumulation strategy.
    pub accumulation: Accumulation,
    /// Threads per block (a multiple of 32, at most 1024).
    pub block: u32,
    /// Arithmetic of the chaos game (`real` in the kernels).
    pub real: Precision,
    /// Iterations per thread per launch.
    pub iters_per_launch: u32,
    /// Blocks per SM (the grid is this × the SM count, fewer for small jobs).
    pub blocks_per_sm: u32,
    /// Most device memory the histogram and accumulation buffers may take;
    /// larger frames render in horizontal strips (`None`: 70 % of the free
    /// memory).
    pub max_buffer_bytes: Option<u64>,
}

impl Default for IterationOptions {
    fn default() -> Self {
        IterationOptions {
            selection: Selection::default(),
            shuffle: Shuffle::default(),
            accumulation: Accumulation::default(),
            block: 256,
            real: Precision::F32,
            iters_per_launch: 256,
            blocks_per_sm: 8,
            max_buffer_bytes: None,
        }
    }
}

impl IterationOptions {
    /// An [`FlameError::Invalid`] unless the options can run.
    pub fn validate(&self) -> Result<()> {
        if self.block == 0 || self.block > 1024 || !self.block.is_multiple_of(32) {
            return Err(FlameError::invalid(format!(
                "block size must be a multiple of 32 up to 1024, not {}",
                self.block
            )));
        }
        if self.iters_per_launch == 0 || self.blocks_per_sm == 0 {
            return Err(FlameError::invalid("iterations per launch and blocks per SM must be positive"));
        }
        Ok(())
    }
}

/// Renders flames on a CUDA device.
///
/// Chaos-game kernels compiled for one frame serve every later frame of
/// the same genome structure. With [`CudaRenderer::keeping_buffers`] the
/// device buffers of a frame (histogram, accumulation buffer, points) are
/// kept for the next frame of the same size too, as an animation wants.
pub struct CudaRenderer {
    gpu: Gpu,
    options: IterationOptions,
    kernels: Mutex<HashMap<String, CompiledKernel>>,
    /// `Some` when buffers are kept between frames: those of the last
    /// frame rendered in one strip.
    kept: Option<Mutex<Option<KeptBuffers>>>,
}

impl std::fmt::Debug for CudaRenderer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaRenderer")
            .field("gpu", &self.gpu)
            .field("options", &self.options)
            .field("keeps_buffers", &self.kept.is_some())
            .finish_non_exhaustive()
    }
}

impl CudaRenderer {
    /// A renderer on `gpu` (from [`warpmc_gpu::select`] or
    /// [`Gpu::open`]) with the default [`IterationOptions`].
    pub fn new(gpu: Gpu) -> Self {
        CudaRenderer { gpu, options: IterationOptions::default(), kernels: Mutex::default(), kept: None }
    }

    /// Keeps the device buffers of each frame rendered in one strip for
    /// the next frame of the same size and seed, which then starts
    /// without allocating or uploading: for animations. The buffers stay
    /// allocated until the renderer is dropped or
    /// [`CudaRenderer::release_buffers`] is called.
    pub fn keeping_buffers(mut self) -> Self {
        self.kept = Some(Mutex::default());
        self
    }

    /// Frees the buffers kept from the last frame (if any).
    pub fn release_buffers(&self) {
        if let Some(k) = &self.kept {
            *k.lock().unwrap_or_else(|e| e.into_inner()) = None;
        }
    }

    /// The kept buffers, taken out of the renderer (a frame of another
    /// size or bucket type drops them).
    fn take_kept<T: KeepBuffers>(&self) -> Option<StripBuffers<T>> {
        let k = self.kept.as_ref()?;
        let taken = k.lock().unwrap_or_else(|e| e.into_inner()).take()?;
        T::take(taken)
    }

    /// Keeps `b` for the next frame, when the renderer keeps buffers.
    fn put_kept<T: KeepBuffers>(&self, b: StripBuffers<T>) {
        if let Some(k) = &self.kept {
            *k.lock().unwrap_or_else(|e| e.into_inner()) = Some(T::keep(b));
        }
    }

    /// Device bytes of the kept buffers (free to the next frame).
    fn kept_bytes(&self) -> u64 {
        let Some(k) = &self.kept else { return 0 };
        match &*k.lock().unwrap_or_else(|e| e.into_inner()) {
            Some(KeptBuffers::F32(b)) => b.device_bytes(),
            Some(KeptBuffers::F64(b)) => b.device_bytes(),
            None => 0,
        }
    }

    /// Replaces the chaos-game options; an error when they cannot run.
    pub fn with_options(mut self, options: IterationOptions) -> Result<Self> {
        options.validate()?;
        self.options = options;
        Ok(self)
    }

    /// The chaos-game options.
    pub fn options(&self) -> &IterationOptions {
        &self.options
    }

    /// The device.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// Renders the frame at `time` of the sequence `flames` (one flame for
    /// a still image), as [`super::render`] does on the CPU.
    pub fn render(&self, flames: &[Flame], time: f64, settings: &RenderSettings) -> Result<RenderedFrame> {
        self.render_with_progress(flames, time, settings, &|_| {})
    }

    /// [`CudaRenderer::render`], calling `progress` with the fraction done
    /// (0 to 1) as the work goes on.
    ///
    /// Before anything is allocated the frame's cost is checked
    /// ([`CudaRenderer::frame_cost`]): device memory decides the strips,
    /// and a frame of which not even one strip fits in the GPU's free
    /// memory, or whose pixels do not fit in host memory, is an error
    /// naming the sizes.
    pub fn render_with_progress(
        &self,
        flames: &[Flame],
        time: f64,
        settings: &RenderSettings,
        progress: &(dyn Fn(f64) + Sync),
    ) -> Result<RenderedFrame> {
        let flames = scaled(flames, settings)?;
        let sizing = Sizing::new(&flames, time, settings)?;
        let plan = self.plan(&flames, &sizing, settings)?;
        plan.cost.check_host_memory()?;
        let geometry = sizing.sizes.geometry(&flames)?;
        match settings.precision {
            Precision::F32 => self.render_strips::<f32>(&flames, time, settings, &geometry, plan.strips, progress),
            Precision::F64 => self.render_strips::<f64>(&flames, time, settings, &geometry, plan.strips, progress),
        }
    }

    /// What [`CudaRenderer::render`] takes for the frame at `time` of
    /// `flames` on this device now: iterations, strips, the device memory
    /// of a strip and the host memory at the peak, worked out without
    /// allocating. An error for settings no renderer can render, and
    /// [`FlameError::OutOfDeviceMemory`] when not even one strip fits in
    /// the GPU's free memory; whether the host memory is there is
    /// [`FrameCost::check_host_memory`]'s question.
    pub fn frame_cost(&self, flames: &[Flame], time: f64, settings: &RenderSettings) -> Result<FrameCost> {
        let flames = scaled(flames, settings)?;
        let sizing = Sizing::new(&flames, time, settings)?;
        Ok(self.plan(&flames, &sizing, settings)?.cost)
    }

    /// The strips of the frame and what they cost, from the device's free
    /// memory now.
    fn plan(&self, flames: &[Flame], sizing: &Sizing, settings: &RenderSettings) -> Result<StripPlan> {
        let g = &sizing.sizes;
        let b = settings.precision.bytes() as f64;
        // Per histogram row: r, g, b, a of the histogram and the
        // accumulation buffer, and the hit counts where the palette has
        // transparent entries (backend.rs).
        let row_bytes = g.hw as f64 * (8 + usize::from(needs_count(flames))) as f64 * b;
        // The finished pixels (four f32) of the output rows a histogram
        // row stands for (finish.rs).
        let out_row_bytes = g.width as f64 * 16.0 / g.ss as f64;
        // Besides the rows: each thread's point and generator, the
        // kernels and tables, the palette and parameters.
        let threads = self.threads() as f64;
        let points = threads * (point_bytes(self.options.real) as f64 + 12.0);
        let fixed = points + sizing.kernel_bytes + sizing.table_bytes + 65536.0;

        let mut memory = self.gpu.memory_info()?;
        // Buffers kept from the last frame are reused or freed first.
        memory.free = memory.free.saturating_add(self.kept_bytes());
        let budget = match self.options.max_buffer_bytes {
            Some(b) => b,
            None => (memory.free as f64 * 0.7) as u64,
        };
        let by_budget = budget as f64 / row_bytes.max(1.0);
        // Everything a strip holds must fit in what is free.
        let by_free = (memory.free as f64 - fixed).max(0.0) / (row_bytes + out_row_bytes);
        // The kernels index a strip's cells in 32 bits.
        let by_index = f64::from(u32::MAX) / g.hw.max(1) as f64;
        let max_rows = by_budget.min(by_free).min(by_index).floor() as u64;
        let strips = strip_plan(g, max_rows).ok_or_else(|| {
            let rows = (fixed_rows(g) + g.ss).min(g.hh) as f64;
            let needed = rows * (row_bytes + out_row_bytes) + fixed;
            let within = match self.options.max_buffer_bytes {
                Some(b) if (b as f64) < rows * row_bytes => {
                    format!(" within IterationOptions::max_buffer_bytes ({})", bytes(b as f64))
                }
                _ => String::new(),
            };
            FlameError::OutOfDeviceMemory {
                what: format!(
                    "one strip of the {} × {} frame ({rows} histogram rows of {} cells with the filters' margins){within}",
                    g.width, g.height, g.hw
                ),
                needed: needed as u64,
                free: memory.free,
                total: memory.total,
            }
        })?;
        let tallest = strips.iter().map(|s| s.hist_rows.len()).max().unwrap_or(0) as f64;
        let tallest_out = strips.iter().map(|s| s.out_rows.len()).max().unwrap_or(0) as f64;
        let device = tallest * row_bytes + tallest_out * g.width as f64 * 16.0 + fixed;
        // Host: the frame's pixels (four f64), and while a strip finishes
        // its pixels as f32 and as f64; the kernels, tables and temporal
        // samples; the points before they are uploaded.
        let pixels = sizing.pixels() * 32.0;
        let finishing = if strips.len() == 1 { pixels * 1.5 } else { pixels + tallest_out * g.width as f64 * 48.0 };
        let host = finishing + sizing.kernel_bytes + sizing.table_bytes + sizing.temporal_bytes + points;
        let parts = [
            ("finished pixels".to_string(), finishing),
            ("filter kernels".to_string(), sizing.kernel_bytes),
            ("temporal samples".to_string(), sizing.temporal_bytes),
            ("chaos-game tables".to_string(), sizing.table_bytes),
            ("the chaos game's points".to_string(), points),
        ];
        let cost = sizing.cost(host, device, strips.len(), parts_of(host, &parts), true);
        Ok(StripPlan { strips, cost })
    }

    /// Threads of the chaos game's grid (one point each).
    fn threads(&self) -> usize {
        (self.gpu.info().sm_count.max(1) * self.options.blocks_per_sm * self.options.block) as usize
    }

    /// The frame in `strips`, as flam3's `nstrips` does. Every strip runs
    /// the whole chaos game and keeps the samples that land in its rows
    /// (plus margins for density estimation and the filter), so each strip
    /// has the sample density of an unsplit render and the seams do not
    /// show.
    fn render_strips<T: KeepBuffers>(
        &self,
        flames: &[Flame],
        time: f64,
        settings: &RenderSettings,
        g: &FrameGeometry,
        strips: Vec<Strip>,
        progress: &(dyn Fn(f64) + Sync),
    ) -> Result<RenderedFrame> {
        let n = strips.len();
        let mut frame: Option<RenderedFrame> = None;
        // Kept buffers serve a frame of one strip; any other frame frees
        // them first.
        let kept = self.take_kept::<T>();
        let mut kept = if n == 1 { kept } else { None };
        for (k, strip) in strips.into_iter().enumerate() {
            let mut b = GpuBackend::<T>::new(self, flames, g, settings, strip, kept.take())?;
            let sub = |f: f64| progress((k as f64 + f) / n as f64);
            let part = render_frame(flames, time, settings, g, &mut b, &sub)?;
            if n == 1 {
                self.put_kept(b.into_buffers());
            }
            frame = Some(match frame {
                None if n == 1 => part,
                None => {
                    // The whole frame's pixels, allocated once.
                    let mut pixels = Vec::new();
                    pixels.try_reserve_exact(g.width * g.height).map_err(|_| {
                        FlameError::OutOfHostMemory(format!(
                            "the finished pixels of a {} × {} frame: cannot allocate {} ({} free)",
                            g.width,
                            g.height,
                            bytes(g.width as f64 * g.height as f64 * 32.0),
                            host_budget()
                        ))
                    })?;
                    let stats = RenderStats { iterate_seconds: 0.0, filter_seconds: 0.0, ..part.stats.clone() };
                    let whole = RenderedFrame {
                        width: part.width,
                        height: part.height,
                        pixels,
                        transparent: part.transparent,
                        stats,
                    };
                    append_strip(whole, part)
                }
                Some(f) => append_strip(f, part),
            });
        }
        let mut frame = frame.expect("at least one strip");
        frame.height = g.height as u32;
        frame.stats.strips = n as u32;
        Ok(frame)
    }
}

/// The strips of a frame and what they cost.
struct StripPlan {
    strips: Vec<Strip>,
    cost: FrameCost,
}

/// The frame rendered so far with the next strip's rows below it. Every
/// strip ran the frame's whole chaos game: the frame's sample count is one
/// strip's, its times the sum.
fn append_strip(mut frame: RenderedFrame, part: RenderedFrame) -> RenderedFrame {
    frame.pixels.extend_from_slice(&part.pixels);
    frame.stats.iterate_seconds += part.stats.iterate_seconds;
    frame.stats.filter_seconds += part.stats.filter_seconds;
    frame
}

/// The part of a frame one backend renders: output rows `out_rows` and the
/// histogram rows `hist_rows` it needs for them.
#[derive(Clone, Debug, PartialEq)]
struct Strip {
    out_rows: Range<usize>,
    hist_rows: Range<usize>,
}

/// Splits the frame into strips whose histograms have at most `max_rows`
/// rows (one strip when the whole histogram fits); `None` when not even
/// one output row fits with its margins.
fn strip_plan(g: &FrameSizes, max_rows: u64) -> Option<Vec<Strip>> {
    if g.hh as u64 <= max_rows {
        return Some(vec![Strip { out_rows: 0..g.height, hist_rows: 0..g.hh }]);
    }
    let per_strip = (max_rows as usize).saturating_sub(fixed_rows(g)) / g.ss;
    if per_strip == 0 {
        return None;
    }
    let margin = strip_margin(g);
    let mut out = Vec::new();
    let mut r0 = 0;
    while r0 < g.height {
        let r1 = (r0 + per_strip).min(g.height);
        let start = (r0 * g.ss).saturating_sub(margin);
        let end = (g.de_offset + (r1 - 1) * g.ss + g.filter_width + margin).min(g.hh);
        out.push(Strip { out_rows: r0..r1, hist_rows: start..end });
        r0 = r1;
    }
    Some(out)
}

/// Histogram rows kept on each side of a strip's own: output rows r0..r1
/// read accumulation rows de_offset + r·ss up to de_offset + (r1 − 1)·ss +
/// filter width, and density estimation spreads every histogram row over
/// at most the gutter (and reads ss/2 rows around it).
fn strip_margin(g: &FrameSizes) -> usize {
    g.gutter + 2 * g.ss
}

/// Histogram rows a strip holds besides ss per output row.
fn fixed_rows(g: &FrameSizes) -> usize {
    g.de_offset + g.filter_width + 2 * strip_margin(g)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::frame::frame_sizes;

    use crate::render::test_flames::sierpinski;

    #[test]
    fn strips_cover_the_frame_with_their_margins() {
        let mut f = sierpinski();
        f.height = 301;
        f.supersample = 2;
        f.estimator_radius = 9.0;
        let flames = [f];
        let g = frame_sizes(&flames, &flames[0], 1.0, crate::render::Field::Both).unwrap();
        assert_eq!(strip_plan(&g, g.hh as u64).unwrap().len(), 1);
        for max_rows in [150u64, 200, 333] {
            let strips = strip_plan(&g, max_rows).unwrap();
            assert!(strips.len() > 1);
            let mut next = 0;
            for s in &strips {
                assert_eq!(s.out_rows.start, next);
                next = s.out_rows.end;
                assert!(s.hist_rows.len() as u64 <= max_rows, "{s:?}");
                // Every accumulation row the filter reads, and the margin
                // density estimation scatters from, is held.
                let need0 = g.de_offset + s.out_rows.start * g.ss;
                let need1 = g.de_offset + (s.out_rows.end - 1) * g.ss + g.filter_width;
                assert!(s.hist_rows.start + g.gutter <= need0 || s.hist_rows.start == 0, "{s:?}");
                assert!(need1 + g.gutter <= s.hist_rows.end || s.hist_rows.end == g.hh, "{s:?}");
                assert!(s.hist_rows.start <= s.out_rows.start * g.ss);
            }
            assert_eq!(next, g.height);
        }
        assert!(strip_plan(&g, 10).is_none());
    }

    #[test]
    fn options_are_checked() {
        for o in [
            IterationOptions { block: 48, ..IterationOptions::default() },
            IterationOptions { block: 2048, ..IterationOptions::default() },
            IterationOptions { block: 0, ..IterationOptions::default() },
            IterationOptions { iters_per_launch: 0, ..IterationOptions::default() },
            IterationOptions { blocks_per_sm: 0, ..IterationOptions::default() },
        ] {
            let e = o.validate().unwrap_err();
            assert!(matches!(e, FlameError::Invalid(_)), "{o:?}: {e}");
        }
        assert!(IterationOptions::default().validate().is_ok());
        assert!(IterationOptions { block: 1024, ..IterationOptions::default() }.validate().is_ok());
    }
}
