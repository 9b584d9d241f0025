//! The CUDA backend of the renderer (cuburn's design, measured): the chaos
//! game with per-thread xform choice (the default) or warp-uniform choice
//! with a point shuffle between warps, histogram accumulation with atomics
//! (through a per-block cache of hot cells in shared memory by default),
//! and density estimation, filtering and tone mapping on the GPU.
//!
//! The frame logic (passes, temporal samples, brightness constants) is the
//! CPU renderer's ([`super::render_frame`]); this module supplies a
//! [`super::FrameBackend`] whose histogram and accumulation buffer live in
//! device memory. The chaos-game kernel is generated per genome structure
//! (`codegen.rs`), so only the variations a flame uses are compiled.
//!
//! Results agree with the CPU backend within the Monte Carlo noise, not bit
//! for bit: the GPU iterates in f32 (f64 on request), draws its random
//! numbers from one stream per thread rather than per sub-batch, and its
//! atomics add in an unpredictable order. Its sampling is flam3's: every
//! point plots one sub-batch (10000 iterations by default) after a
//! 15-iteration fuse, then restarts from a random point; genomes whose
//! points take long to reach the attractor show those transients in flam3
//! and must show them here too.

mod codegen;
mod finish;
mod varcode;

use std::collections::HashMap;

use warpmc_gpu::{DeviceBuffer, Gpu, GpuError, Kernel, LaunchConfig};
use warpmc_rng::RandomSource;

use super::{
    Bucket, FrameBackend, FrameGeometry, IterationJob, Precision, RenderError, RenderSettings, RenderedFrame, ToneMap,
    filters::DensityFilters, frame_geometry, render_frame, scaled,
};
use crate::genome::Flame;
use crate::interpolate::interpolate;
use crate::render::chaos::FUSE;
use codegen::{CameraParams, GeneratedKernel, generate, pack_params};
pub(crate) use finish::{Finisher, GpuBucket};

/// The flame kernels' shared header: `real`, `FlameRng`.
pub(crate) const FLAME_COMMON_CUH: &str = include_str!("../../../kernels/flame_common.cuh");

/// How each iteration's xform is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Selection {
    /// One random number per warp: every lane applies the same xform, so
    /// the xform's code runs without divergence (cuburn). Flames with chaos
    /// (xaos) rows fall back to [`Selection::PerThread`]. Measured on an
    /// H200 (BENCHMARKS.md): up to 23 % faster on some genomes, but noisier
    /// at equal sample counts (1.5 dB on test.flam3) even with the shuffle.
    WarpUniform,
    /// Every thread draws its own xform, as the CPU does: the default, as
    /// it matches the CPU within the noise floor on every sample genome.
    #[default]
    PerThread,
}

/// How points move between warps after each iteration (with warp-uniform
/// selection, points that stay together converge).
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
    /// instead of global ones on one address from every block. The
    /// default: the fastest on the sample genomes, and the only one at
    /// ≥ 10¹⁰ iterations/s on all of them (BENCHMARKS.md).
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

/// Whether the flame's xforms have chaos (xaos) rows other than all ones.
pub(crate) fn has_chaos(cp: &Flame) -> bool {
    let n = cp.xforms.len();
    cp.xforms.iter().any(|x| (0..n).any(|j| (x.chaos_to(j) - 1.0).abs() > 1e-10))
}

fn gpu_err(e: GpuError) -> RenderError {
    RenderError::Gpu(e.to_string())
}

/// Renders flames on a CUDA device.
#[derive(Debug)]
pub struct CudaRenderer {
    gpu: Gpu,
    options: IterationOptions,
}

impl CudaRenderer {
    /// Opens device `ordinal`; a machine without a usable GPU gives
    /// [`RenderError::Gpu`] with the reason.
    pub fn open(ordinal: usize) -> Result<Self, RenderError> {
        Ok(CudaRenderer { gpu: Gpu::open(ordinal).map_err(gpu_err)?, options: IterationOptions::default() })
    }

    /// Uses an opened device.
    pub fn with_gpu(gpu: Gpu) -> Self {
        CudaRenderer { gpu, options: IterationOptions::default() }
    }

    /// Replaces the chaos-game options.
    pub fn with_options(mut self, options: IterationOptions) -> Result<Self, RenderError> {
        if options.block == 0 || options.block > 1024 || options.block % 32 != 0 {
            return Err(RenderError::Invalid(format!(
                "block size must be a multiple of 32 up to 1024, not {}",
                options.block
            )));
        }
        if options.iters_per_launch == 0 || options.blocks_per_sm == 0 {
            return Err(RenderError::Invalid("iterations per launch and blocks per SM must be positive".into()));
        }
        self.options = options;
        Ok(self)
    }

    /// The device.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// Renders the frame at `time` of `flames`, as [`super::render`] does on
    /// the CPU.
    pub fn render(
        &self,
        flames: &[Flame],
        time: f64,
        settings: &RenderSettings,
        progress: &(dyn Fn(f64) + Sync),
    ) -> Result<RenderedFrame, RenderError> {
        if flames.is_empty() {
            return Err(RenderError::Invalid("no flame to render".into()));
        }
        let flames = scaled(flames, settings)?;
        let cp0 = interpolate(&flames, time);
        let geometry = frame_geometry(&flames, &cp0)?;
        match settings.precision {
            Precision::F32 => self.render_strips::<f32>(&flames, time, settings, &geometry, progress),
            Precision::F64 => self.render_strips::<f64>(&flames, time, settings, &geometry, progress),
        }
    }

    /// The frame in as many horizontal strips as device memory needs, as
    /// flam3's `nstrips` does. Every strip runs the whole chaos game and
    /// keeps the samples that land in its rows (plus margins for density
    /// estimation and the filter), so each strip has the sample density of
    /// an unsplit render and the seams do not show.
    fn render_strips<T: GpuBucket + PrecisionOf>(
        &self,
        flames: &[Flame],
        time: f64,
        settings: &RenderSettings,
        g: &FrameGeometry,
        progress: &(dyn Fn(f64) + Sync),
    ) -> Result<RenderedFrame, RenderError> {
        let needs_count = flames.iter().any(|f| f.palette.entries.iter().any(|e| e[3] != 1.0));
        let row_bytes = (g.hw * (8 + usize::from(needs_count)) * std::mem::size_of::<T>()) as u64;
        let budget = match self.options.max_buffer_bytes {
            Some(b) => b,
            None => (self.gpu.memory_info().map_err(gpu_err)?.free as f64 * 0.7) as u64,
        };
        // The kernels index a strip's cells in 32 bits.
        let max_rows = (budget / row_bytes.max(1)).min(u64::from(u32::MAX) / g.hw.max(1) as u64);
        let strips = strip_plan(g, max_rows, row_bytes)?;
        let n = strips.len();
        let mut frame: Option<RenderedFrame> = None;
        for (k, strip) in strips.into_iter().enumerate() {
            let mut b = GpuBackend::<T>::new(self, flames, g, settings, strip)?;
            let sub = |f: f64| progress((k as f64 + f) / n as f64);
            let part = render_frame(flames, time, settings, g, &mut b, &sub)?;
            frame = Some(match frame {
                None => part,
                Some(mut f) => {
                    // Every strip ran the frame's whole chaos game: the
                    // frame's sample count is one strip's.
                    f.pixels.extend_from_slice(&part.pixels);
                    f.stats.iterate_seconds += part.stats.iterate_seconds;
                    f.stats.filter_seconds += part.stats.filter_seconds;
                    f
                }
            });
        }
        let mut frame = frame.expect("at least one strip");
        frame.height = g.height as u32;
        frame.stats.strips = n as u32;
        Ok(frame)
    }
}

/// The part of a frame one backend renders: output rows `out_rows` and the
/// histogram rows `hist_rows` it needs for them.
#[derive(Clone, Debug, PartialEq)]
struct Strip {
    out_rows: std::ops::Range<usize>,
    hist_rows: std::ops::Range<usize>,
}

/// Splits the frame into strips whose histograms have at most `max_rows`
/// rows (one strip when the whole histogram fits).
fn strip_plan(g: &FrameGeometry, max_rows: u64, row_bytes: u64) -> Result<Vec<Strip>, RenderError> {
    if g.hh as u64 <= max_rows {
        return Ok(vec![Strip { out_rows: 0..g.height, hist_rows: 0..g.hh }]);
    }
    // Output rows r0..r1 read accumulation rows de_offset + r·ss up to
    // de_offset + (r1 − 1)·ss + filter width; density estimation spreads
    // every histogram row over at most the gutter (and reads ss/2 rows
    // around it), so that margin of histogram rows is kept on each side.
    let margin = g.gutter + 2 * g.ss;
    let fixed = g.de_offset + g.filter.width + 2 * margin;
    let per_strip = (max_rows as usize).saturating_sub(fixed) / g.ss;
    if per_strip == 0 {
        // Not even one output row fits with its margins.
        let rows = (fixed + g.ss).min(g.hh) as u64;
        return Err(RenderError::OutOfMemory { bytes: rows * row_bytes, cells: rows * g.hw as u64 });
    }
    let mut out = Vec::new();
    let mut r0 = 0;
    while r0 < g.height {
        let r1 = (r0 + per_strip).min(g.height);
        let start = (r0 * g.ss).saturating_sub(margin);
        let end = (g.de_offset + (r1 - 1) * g.ss + g.filter.width + margin).min(g.hh);
        out.push(Strip { out_rows: r0..r1, hist_rows: start..end });
        r0 = r1;
    }
    Ok(out)
}

/// Bytes of one `ChaosPoint` (iterate.cuh): x, y, c in the chaos-game
/// real type, then `state` and `left` (i32 each).
fn point_bytes(real_bytes: usize) -> usize {
    3 * real_bytes + 8
}

/// Histogram, accumulation buffer and points of one frame in device memory.
struct GpuBackend<'a, T: GpuBucket + PrecisionOf> {
    gpu: &'a Gpu,
    options: &'a IterationOptions,
    finisher: Finisher,
    hist: DeviceBuffer<T>,
    count: Option<DeviceBuffer<T>>,
    acc: DeviceBuffer<T>,
    /// One point per thread (`ChaosPoint` in iterate.cuh), as bytes.
    points: DeviceBuffer<u8>,
    rng_state: DeviceBuffer<u64>,
    rng_a: DeviceBuffer<u32>,
    counters: DeviceBuffer<u64>,
    threads: usize,
    /// Plotted iterations of a point before it restarts (flam3's
    /// sub-batch).
    sub_batch: i32,
    hw: usize,
    /// Rows of the histogram held (the strip's), and the first one's index
    /// in the whole histogram.
    hh: usize,
    row0: usize,
    strip: Strip,
    ss: usize,
    /// Compiled kernels by source (animation frames share them).
    kernels: HashMap<String, (Kernel, GeneratedKernel)>,
}

fn alloc<T: GpuBucket + PrecisionOf>(gpu: &Gpu, n: usize) -> Result<DeviceBuffer<T>, RenderError> {
    gpu.alloc_zeros::<T>(n).map_err(|e| match e {
        GpuError::Driver { .. } => {
            RenderError::OutOfMemory { bytes: (n * std::mem::size_of::<T>()) as u64, cells: (n / 4) as u64 }
        }
        e => gpu_err(e),
    })
}

impl<'a, T: GpuBucket + PrecisionOf> GpuBackend<'a, T> {
    fn new(
        r: &'a CudaRenderer,
        flames: &[Flame],
        g: &FrameGeometry,
        settings: &RenderSettings,
        strip: Strip,
    ) -> Result<Self, RenderError> {
        let gpu = &r.gpu;
        let o = &r.options;
        let rows = strip.hist_rows.len();
        let cells = g.hw * rows;
        let finisher = Finisher::new(gpu, settings.precision).map_err(gpu_err)?;
        let hist = alloc::<T>(gpu, cells * 4)?;
        // flam3 keeps the hit count apart from alpha; they differ only when
        // the palette has transparent entries.
        let needs_count = flames.iter().any(|f| f.palette.entries.iter().any(|e| e[3] != 1.0));
        let count = if needs_count { Some(alloc::<T>(gpu, cells)?) } else { None };
        let acc = alloc::<T>(gpu, cells * 4)?;

        let threads = (gpu.info().sm_count.max(1) * o.blocks_per_sm * o.block) as usize;
        let real_bytes = if o.real == Precision::F64 { 8 } else { 4 };
        let point_bytes = point_bytes(real_bytes);
        let mut pts = vec![0u8; threads * point_bytes];
        let mut states = Vec::with_capacity(threads);
        let mut mults = Vec::with_capacity(threads);
        let sub_batch = i32::try_from(settings.sub_batch_size.max(1)).unwrap_or(i32::MAX);
        for t in 0..threads {
            let mut rng = super::sub_batch_rng(settings.seed, t as u64);
            // Every point starts as a sub-batch does on the CPU (flam3): at
            // random in [-1, 1]² with a random colour, discarded for FUSE
            // iterations, then plotted for sub_batch_size iterations before
            // it restarts.
            let p = [2.0 * rng.next_f64() - 1.0, 2.0 * rng.next_f64() - 1.0, rng.next_f64()];
            let at = &mut pts[t * point_bytes..(t + 1) * point_bytes];
            for (k, v) in p.iter().enumerate() {
                if real_bytes == 8 {
                    at[k * 8..k * 8 + 8].copy_from_slice(&v.to_le_bytes());
                } else {
                    at[k * 4..k * 4 + 4].copy_from_slice(&(*v as f32).to_le_bytes());
                }
            }
            // state: fuse, chaos row 0 (no previous xform).
            at[3 * real_bytes..3 * real_bytes + 4].copy_from_slice(&(FUSE as i32).to_le_bytes());
            at[3 * real_bytes + 4..3 * real_bytes + 8].copy_from_slice(&sub_batch.to_le_bytes());
            states.push(rng.state());
            mults.push(rng.multiplier());
        }
        Ok(GpuBackend {
            gpu,
            options: o,
            finisher,
            hist,
            count,
            acc,
            points: gpu.upload(&pts).map_err(gpu_err)?,
            rng_state: gpu.upload(&states).map_err(gpu_err)?,
            rng_a: gpu.upload(&mults).map_err(gpu_err)?,
            counters: gpu.alloc_zeros::<u64>(2).map_err(gpu_err)?,
            threads,
            sub_batch,
            hw: g.hw,
            hh: rows,
            row0: strip.hist_rows.start,
            strip,
            ss: g.ss,
            kernels: HashMap::new(),
        })
    }

    fn kernel(&mut self, cp: &Flame) -> Result<(Kernel, GeneratedKernel), RenderError> {
        let generated = generate(cp, self.options, T::PRECISION, self.count.is_some());
        let key = generated.code.clone();
        if let Some(k) = self.kernels.get(&key) {
            return Ok(k.clone());
        }
        let module = self.gpu.module(&generated.source).map_err(gpu_err)?;
        let kernel = module.kernel("flame_iterate").map_err(gpu_err)?;
        self.kernels.insert(key, (kernel.clone(), generated.clone()));
        Ok((kernel, generated))
    }
}

fn to_real_bytes(values: &[f64], double: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(values.len() * 8);
    for v in values {
        if double {
            out.extend_from_slice(&v.to_le_bytes());
        } else {
            out.extend_from_slice(&(*v as f32).to_le_bytes());
        }
    }
    out
}

impl<T: GpuBucket + PrecisionOf> FrameBackend for GpuBackend<'_, T> {
    fn begin_pass(&mut self) -> Result<(), RenderError> {
        self.gpu.memset_bytes(&mut self.hist, 0).map_err(gpu_err)?;
        if let Some(c) = self.count.as_mut() {
            self.gpu.memset_bytes(c, 0).map_err(gpu_err)?;
        }
        Ok(())
    }

    fn iterate(&mut self, job: &IterationJob<'_>, progress: &mut dyn FnMut(u64)) -> Result<(u64, u64), RenderError> {
        let (kernel, generated) = self.kernel(job.cp)?;
        let cam = job.camera;
        let camera = CameraParams {
            rot: cam.rot.unwrap_or([[1.0, 0.0], [0.0, 1.0]]),
            rot_center: cam.rot_center,
            bounds: cam.bounds,
            ws0: cam.ws0,
            wb0s0: cam.wb0s0,
            hs1: cam.hs1,
            hb1s1: cam.hb1s1,
            width: cam.width as f64,
            height: cam.height as f64,
        };
        let double = self.options.real == Precision::F64;
        let params = self.gpu.upload(&to_real_bytes(&pack_params(job.cp, &generated.layout, &camera), double));
        let params = params.map_err(gpu_err)?;
        let tables = self.gpu.upload(job.game.tables()).map_err(gpu_err)?;
        let palette: Vec<f32> = job.cmap.entries.iter().flat_map(|e| e.map(|v| v as f32)).collect();
        let palette = self.gpu.upload(&palette).map_err(gpu_err)?;
        self.gpu.memset_bytes(&mut self.counters, 0).map_err(gpu_err)?;

        // One thread per sub-batch of the job, up to the threads held: a
        // small job runs on few threads, so its points plot whole
        // sub-batches as flam3's do (and the last launch's overshoot stays
        // small).
        let block = self.options.block as usize;
        let max_blocks = self.threads / block;
        let per_block = block as u64 * self.sub_batch as u64;
        let blocks = job.n_iter.div_ceil(per_block).clamp(1, max_blocks as u64) as usize;
        let threads = (blocks * block) as u64;
        let per_launch = u64::from(self.options.iters_per_launch);
        let (width, height, row0) = (self.hw as u32, self.hh as u32, self.row0 as u32);
        let mut kept = 0u64;
        let mut bad = 0u64;
        let dummy;
        let count = match self.count.as_ref() {
            Some(c) => c,
            None => {
                dummy = alloc::<T>(self.gpu, 1)?;
                &dummy
            }
        };
        while kept < job.n_iter {
            let iters = (job.n_iter - kept).div_ceil(threads).clamp(1, per_launch) as i32;
            let cfg =
                LaunchConfig { grid_dim: (blocks as u32, 1, 1), block_dim: (block as u32, 1, 1), shared_mem_bytes: 0 };
            // SAFETY: the arguments match flame_iterate's parameters in
            // order and type; every buffer is at least as long as the
            // kernel reads: params (layout.len() reals), tables (rows ×
            // 16384), palette (256 × 4), points/rng (one per thread of the
            // grid, `threads` ≤ allocated), hist (hw·hh·4), count (hw·hh or
            // unused), counters (2).
            unsafe {
                self.gpu
                    .launch(&kernel)
                    .buf(&params)
                    .buf(&tables)
                    .buf(&palette)
                    .buf_mut(&mut self.points)
                    .buf_mut(&mut self.rng_state)
                    .buf(&self.rng_a)
                    .buf_mut(&mut self.hist)
                    .buf(count)
                    .arg(&width)
                    .arg(&height)
                    .arg(&row0)
                    .arg(&iters)
                    .arg(&self.sub_batch)
                    .buf_mut(&mut self.counters)
                    .run(cfg)
                    .map_err(gpu_err)?;
            }
            let c = self.gpu.download(&self.counters).map_err(gpu_err)?;
            kept = c[0];
            bad = c[1];
            progress(kept.min(job.n_iter));
        }
        Ok((kept, bad))
    }

    fn end_pass(&mut self, de: Option<&DensityFilters>, k1: f64, k2: f64) -> Result<(), RenderError> {
        self.finisher
            .accumulate_pass(
                self.gpu,
                &self.hist,
                self.count.as_ref(),
                &mut self.acc,
                self.hw,
                self.hh,
                self.ss,
                de,
                k1,
                k2,
            )
            .map_err(gpu_err)
    }

    fn finish(&mut self, g: &FrameGeometry, tone: &ToneMap) -> Result<Vec<[f64; 4]>, RenderError> {
        // The filter reads from row de_offset + r·ss of the whole
        // accumulation buffer for output row r; a strip holds rows from
        // row0 on and produces its out_rows.
        let rows = self.strip.out_rows.clone();
        let first_row = rows.start * g.ss - self.row0;
        let px = self
            .finisher
            .filter_and_map(
                self.gpu,
                &self.acc,
                self.hw,
                first_row,
                &g.filter,
                g.de_offset,
                g.ss,
                tone,
                g.width,
                rows.len(),
            )
            .map_err(gpu_err)?;
        Ok(px.into_iter().map(|p| p.map(f64::from)).collect())
    }
}

/// Bucket types with their precision tag.
pub(crate) trait PrecisionOf: Bucket {
    const PRECISION: Precision;
}
impl PrecisionOf for f32 {
    const PRECISION: Precision = Precision::F32;
}
impl PrecisionOf for f64 {
    const PRECISION: Precision = Precision::F64;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::genome::{Affine, XForm};
    use crate::render::{Camera, chaos::ChaosGame, histogram::ColorMap};
    use crate::variations::{VariationKind, VariationSpec};

    /// The Sierpinski triangle, wholly inside the view.
    fn sierpinski() -> Flame {
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

    fn every_sample_counted<T: GpuBucket + PrecisionOf + Into<f64>>(gpu: &Gpu, accumulation: Accumulation) {
        let options = IterationOptions { accumulation, ..IterationOptions::default() };
        let r = CudaRenderer::with_gpu(gpu.clone()).with_options(options).unwrap();
        let flames = [sierpinski()];
        let cp = &flames[0];
        let g = frame_geometry(&flames, cp).unwrap();
        let settings = RenderSettings { precision: T::PRECISION, ..RenderSettings::default() };
        let strip = Strip { out_rows: 0..g.height, hist_rows: 0..g.hh };
        let mut b = GpuBackend::<T>::new(&r, &flames, &g, &settings, strip).unwrap();
        b.begin_pass().unwrap();
        let game = ChaosGame::new(cp).unwrap();
        // Every sample adds exactly 255 to alpha and 1, 2, 3 to r, g, b.
        let cmap = ColorMap { entries: Box::new([[1.0, 2.0, 3.0, 255.0]; 256]), linear: false };
        let camera = Camera::new(cp, g.gutter, g.ss, g.hw, g.hh);
        let n_iter = 3_000_017;
        let job = IterationJob { cp, game: &game, cmap: &cmap, camera: &camera, n_iter };
        let (kept, bad) = b.iterate(&job, &mut |_| {}).unwrap();
        assert_eq!(bad, 0);
        assert!(kept >= n_iter && kept < n_iter + b.threads as u64, "{kept}");
        let hist = gpu.download(&b.hist).unwrap();
        let mut sums = [0.0f64; 4];
        for cell in hist.chunks(4) {
            for k in 0..4 {
                sums[k] += cell[k].into();
            }
        }
        // Per-cell sums stay far below 2^24, so f32 adds them exactly: any
        // lost update shows.
        assert_eq!(sums, [kept as f64, 2.0 * kept as f64, 3.0 * kept as f64, 255.0 * kept as f64], "{accumulation:?}");
    }

    #[test]
    fn strips_cover_the_frame_with_their_margins() {
        let mut f = sierpinski();
        f.height = 301;
        f.supersample = 2;
        f.estimator_radius = 9.0;
        let flames = [f];
        let g = frame_geometry(&flames, &flames[0]).unwrap();
        assert_eq!(strip_plan(&g, g.hh as u64, 32).unwrap().len(), 1);
        for max_rows in [150u64, 200, 333] {
            let strips = strip_plan(&g, max_rows, 32).unwrap();
            assert!(strips.len() > 1);
            let mut next = 0;
            for s in &strips {
                assert_eq!(s.out_rows.start, next);
                next = s.out_rows.end;
                assert!(s.hist_rows.len() as u64 <= max_rows, "{s:?}");
                // Every accumulation row the filter reads, and the margin
                // density estimation scatters from, is held.
                let need0 = g.de_offset + s.out_rows.start * g.ss;
                let need1 = g.de_offset + (s.out_rows.end - 1) * g.ss + g.filter.width;
                assert!(s.hist_rows.start + g.gutter <= need0 || s.hist_rows.start == 0, "{s:?}");
                assert!(need1 + g.gutter <= s.hist_rows.end || s.hist_rows.end == g.hh, "{s:?}");
                assert!(s.hist_rows.start <= s.out_rows.start * g.ss);
            }
            assert_eq!(next, g.height);
        }
        assert!(strip_plan(&g, 10, 32).is_err());
    }

    #[test]
    fn no_sample_is_lost() {
        let Some(gpu) = warpmc_testkit::gpu_or_skip("no_sample_is_lost") else { return };
        for a in [Accumulation::Plain, Accumulation::WarpAggregated, Accumulation::SharedCache] {
            every_sample_counted::<f32>(&gpu, a);
            every_sample_counted::<f64>(&gpu, a);
        }
    }
}
