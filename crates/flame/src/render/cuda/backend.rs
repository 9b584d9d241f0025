//! The GPU's [`FrameBackend`]: histogram, accumulation buffer and the
//! chaos game's points in device memory, one strip of the frame.

use std::collections::HashMap;
use std::sync::Mutex;

use rayon::prelude::*;

use warpmc_gpu::{DeviceBuffer, Gpu, GpuError, Kernel, LaunchConfig};
use warpmc_rng::RandomSource;

use super::codegen::{GeneratedKernel, KERNEL_NAME, generate, pack_params, point_bytes, point_state, to_real_bytes};
use super::finish::{Finisher, GpuBucket};
use super::{CudaRenderer, IterationOptions, Strip};
use crate::error::{FlameError, Result};
use crate::genome::Flame;
use crate::render::chaos;
use crate::render::cpu::sub_batch_rng;
use crate::render::filters::DensityFilters;
use crate::render::frame::{FrameBackend, FrameGeometry, IterationCount, IterationJob, LogScale};
use crate::render::tonemap::ToneMap;
use crate::render::{Precision, RenderSettings};

/// Whether the flames keep hit counts apart from alpha: flam3 does, and
/// they differ only where a palette has transparent entries.
pub(super) fn needs_count(flames: &[Flame]) -> bool {
    flames.iter().any(|f| f.palette.entries.iter().any(|e| e[3] != 1.0))
}

/// A kernel compiled for one genome structure.
#[derive(Clone)]
pub(super) struct CompiledKernel {
    kernel: Kernel,
    generated: GeneratedKernel,
}

/// The chaos game's points at the start of a render: one per thread, each
/// as a sub-batch starts on the CPU (flam3): at random in [-1, 1]² with a
/// random colour, discarded for `fuse` iterations, then plotted for
/// `sub_batch` iterations before it restarts. Thread `t` draws from the
/// CPU's stream of sub-batch `t`, and goes on with that generator.
struct InitialPoints {
    /// `ChaosPoint`s (iterate.cuh) as bytes.
    points: Vec<u8>,
    /// Each thread's generator: state and multiplier.
    rng_state: Vec<u64>,
    rng_a: Vec<u32>,
}

impl InitialPoints {
    fn new(threads: usize, seed: u64, real: Precision, sub_batch: i32, fuse: usize) -> Self {
        let size = point_bytes(real);
        let rb = real.bytes();
        let mut points = vec![0u8; threads * size];
        let mut rng_state = Vec::with_capacity(threads);
        let mut rng_a = Vec::with_capacity(threads);
        for (t, at) in points.chunks_exact_mut(size).enumerate() {
            let mut rng = sub_batch_rng(seed, t as u64);
            let p = [2.0 * rng.next_f64() - 1.0, 2.0 * rng.next_f64() - 1.0, rng.next_f64()];
            for (k, v) in p.iter().enumerate() {
                match real {
                    Precision::F64 => at[k * rb..(k + 1) * rb].copy_from_slice(&v.to_le_bytes()),
                    Precision::F32 => at[k * rb..(k + 1) * rb].copy_from_slice(&(*v as f32).to_le_bytes()),
                }
            }
            // No previous xform: chaos row 0.
            at[3 * rb..3 * rb + 4].copy_from_slice(&point_state(fuse, 0).to_le_bytes());
            at[3 * rb + 4..3 * rb + 8].copy_from_slice(&sub_batch.to_le_bytes());
            rng_state.push(rng.state());
            rng_a.push(rng.multiplier());
        }
        InitialPoints { points, rng_state, rng_a }
    }
}

/// The f32 nearest `v` whose floor is `v`'s: the kernels truncate each
/// sample's colour as flam3's integer histogram does
/// ([`histogram::Count`](crate::render::histogram::Count)), and
/// a colour such as 99.99999999999999 (from a palette's HSV round trip)
/// must not round up to 100 on the way to f32.
pub(crate) fn f32_flooring_as(v: f64) -> f32 {
    let x = v as f32;
    if f64::from(x).floor() <= v.floor() {
        return x;
    }
    // The f32 just below x (x > v, so neither NaN nor -inf; f32::next_down
    // is newer than this crate's MSRV).
    match x {
        0.0 => -f32::from_bits(1),
        _ if x > 0.0 => f32::from_bits(x.to_bits() - 1),
        _ => f32::from_bits(x.to_bits() + 1),
    }
}

/// What the device buffers of a strip were made for: buffers of one key
/// serve any frame of that key.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct BufferKey {
    hw: usize,
    rows: usize,
    count: bool,
    seed: u64,
    sub_batch: i32,
    /// Iterations discarded after each restart.
    fuse: usize,
    threads: usize,
    real: Precision,
}

/// The device buffers of one strip: histogram, hit counts, accumulation
/// buffer, the chaos game's points and generators, and the points as a
/// frame starts them (so the next frame of the same key starts with a
/// device-to-device copy instead of an upload).
pub(crate) struct StripBuffers<T: GpuBucket> {
    key: BufferKey,
    hist: DeviceBuffer<T>,
    count: Option<DeviceBuffer<T>>,
    acc: DeviceBuffer<T>,
    /// One point per thread (`ChaosPoint` in iterate.cuh), as bytes.
    points: DeviceBuffer<u8>,
    rng_state: DeviceBuffer<u64>,
    rng_a: DeviceBuffer<u32>,
    start_points: DeviceBuffer<u8>,
    start_rng_state: DeviceBuffer<u64>,
    /// Kept iterations and bad values of the current job (or pass, when
    /// its counts are read once at its end).
    counters: DeviceBuffer<u64>,
}

impl<T: GpuBucket> StripBuffers<T> {
    fn new(gpu: &Gpu, key: BufferKey) -> Result<Self> {
        let cells = key.hw * key.rows;
        let hist = alloc::<T>(gpu, cells * 4, "the histogram of a strip")?;
        let count = if key.count { Some(alloc::<T>(gpu, cells, "the hit counts of a strip")?) } else { None };
        let acc = alloc::<T>(gpu, cells * 4, "the accumulation buffer of a strip")?;
        let init = InitialPoints::new(key.threads, key.seed, key.real, key.sub_batch, key.fuse);
        let start_points = gpu.upload(&init.points)?;
        let start_rng_state = gpu.upload(&init.rng_state)?;
        Ok(StripBuffers {
            hist,
            count,
            acc,
            points: gpu.upload(&init.points)?,
            rng_state: gpu.upload(&init.rng_state)?,
            rng_a: gpu.upload(&init.rng_a)?,
            start_points,
            start_rng_state,
            counters: gpu.alloc_zeros::<u64>(2)?,
            key,
        })
    }

    /// Device memory the buffers take.
    pub(super) fn device_bytes(&self) -> u64 {
        let t = std::mem::size_of::<T>();
        let bufs = [
            self.hist.len() * t,
            self.count.as_ref().map_or(0, |c| c.len() * t),
            self.acc.len() * t,
            self.points.len() + self.start_points.len(),
            (self.rng_state.len() + self.start_rng_state.len()) * 8,
            self.rng_a.len() * 4,
        ];
        bufs.iter().sum::<usize>() as u64
    }

    /// Ready for a new frame: the accumulation buffer cleared and the
    /// points as a frame starts them (the histogram is cleared by each
    /// pass).
    fn restart(&mut self, gpu: &Gpu) -> Result<()> {
        gpu.memset_bytes(&mut self.acc, 0)?;
        gpu.copy_device(&self.start_points, &mut self.points)?;
        gpu.copy_device(&self.start_rng_state, &mut self.rng_state)?;
        Ok(())
    }
}

/// The strip buffers a renderer keeps between frames, of either bucket
/// type.
pub(super) enum KeptBuffers {
    F32(StripBuffers<f32>),
    F64(StripBuffers<f64>),
}

/// Bucket types whose strip buffers a renderer can keep.
pub(super) trait KeepBuffers: GpuBucket {
    fn keep(b: StripBuffers<Self>) -> KeptBuffers;
    fn take(k: KeptBuffers) -> Option<StripBuffers<Self>>;
}

impl KeepBuffers for f32 {
    fn keep(b: StripBuffers<f32>) -> KeptBuffers {
        KeptBuffers::F32(b)
    }
    fn take(k: KeptBuffers) -> Option<StripBuffers<f32>> {
        match k {
            KeptBuffers::F32(b) => Some(b),
            KeptBuffers::F64(_) => None,
        }
    }
}

impl KeepBuffers for f64 {
    fn keep(b: StripBuffers<f64>) -> KeptBuffers {
        KeptBuffers::F64(b)
    }
    fn take(k: KeptBuffers) -> Option<StripBuffers<f64>> {
        match k {
            KeptBuffers::F64(b) => Some(b),
            KeptBuffers::F32(_) => None,
        }
    }
}

/// Chaos-game iterations each thread does at least per job when a pass has
/// many jobs (temporal samples): below this the per-launch work (the
/// parameter block and palette copied into shared memory) dominates.
const MIN_ITERS_PER_THREAD: u64 = 8;

/// Iterations each thread does at least over a pass of many jobs: every
/// point's first fuse iterations (15) are not plotted, so this keeps the
/// unplotted share of a pass under 1.5 % (flam3's is 15 per 10000).
const MIN_ITERS_PER_PASS: u64 = 1000;

/// One strip of a frame rendered on the device: its buffers, and the
/// renderer's kernels and options.
pub(super) struct GpuBackend<'a, T: GpuBucket> {
    gpu: &'a Gpu,
    options: &'a IterationOptions,
    kernels: &'a Mutex<HashMap<String, CompiledKernel>>,
    finisher: Finisher,
    buffers: StripBuffers<T>,
    threads: usize,
    /// Plotted iterations of a point before it restarts (flam3's
    /// sub-batch, the longest; a job of few iterations restarts its points
    /// sooner: [`GpuBackend::job_sub_batch`]).
    sub_batch: i32,
    hw: usize,
    /// Rows of the histogram held (the strip's), and the first one's index
    /// in the whole histogram.
    hh: usize,
    row0: usize,
    strip: Strip,
    ss: usize,
    /// Whether the current pass runs several jobs: then each job launches
    /// without waiting for the device, and the pass's exact counts are
    /// read once at its end ([`FrameBackend::pass_counts`]).
    open_loop: bool,
    /// Jobs of the current pass.
    pass_jobs: usize,
}

/// `n` zeroed values of `what`, or [`FlameError::OutOfDeviceMemory`] when
/// the device has no room (the frame's cost is checked before; this
/// catches what the estimate missed, or memory taken meanwhile).
fn alloc<T: GpuBucket>(gpu: &Gpu, n: usize, what: &str) -> Result<DeviceBuffer<T>> {
    gpu.alloc_zeros::<T>(n).map_err(|e| match e {
        GpuError::Driver { .. } => {
            let memory = gpu.memory_info().unwrap_or(warpmc_gpu::MemoryInfo { free: 0, total: 0 });
            FlameError::OutOfDeviceMemory {
                what: what.to_string(),
                needed: (n * std::mem::size_of::<T>()) as u64,
                free: memory.free,
                total: memory.total,
            }
        }
        e => FlameError::Gpu(e),
    })
}

impl<'a, T: GpuBucket> GpuBackend<'a, T> {
    /// The backend of `strip`, with `kept` buffers when they were made for
    /// a frame of the same key (else new ones).
    pub(super) fn new(
        r: &'a CudaRenderer,
        flames: &[Flame],
        g: &FrameGeometry,
        settings: &RenderSettings,
        strip: Strip,
        kept: Option<StripBuffers<T>>,
    ) -> Result<Self> {
        let gpu = &r.gpu;
        let o = &r.options;
        let rows = strip.hist_rows.len();
        let finisher = Finisher::new(gpu, T::PRECISION)?;
        let threads = (gpu.info().sm_count.max(1) * o.blocks_per_sm * o.block) as usize;
        let sub_batch = i32::try_from(settings.sub_batch_size.max(1)).unwrap_or(i32::MAX);
        let key = BufferKey {
            hw: g.hw,
            rows,
            count: needs_count(flames),
            seed: settings.seed,
            sub_batch,
            fuse: chaos::fuse(settings.early_clip),
            threads,
            real: o.real,
        };
        let buffers = match kept {
            Some(mut b) if b.key == key => {
                b.restart(gpu)?;
                b
            }
            other => {
                // Buffers of another size go before the new ones are made.
                drop(other);
                StripBuffers::new(gpu, key)?
            }
        };
        Ok(GpuBackend {
            gpu,
            options: o,
            kernels: &r.kernels,
            finisher,
            buffers,
            threads,
            sub_batch,
            hw: g.hw,
            hh: rows,
            row0: strip.hist_rows.start,
            strip,
            ss: g.ss,
            open_loop: false,
            pass_jobs: 1,
        })
    }

    /// The strip's buffers, for the next frame.
    pub(super) fn into_buffers(self) -> StripBuffers<T> {
        self.buffers
    }

    /// The chaos-game kernel of `cp`'s structure, compiled once.
    fn kernel(&mut self, cp: &Flame) -> Result<CompiledKernel> {
        let generated = generate(cp, self.options, T::PRECISION, self.buffers.count.is_some());
        let mut kernels = self.kernels.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(k) = kernels.get(&generated.code) {
            return Ok(k.clone());
        }
        let module = self.gpu.module(&generated.source)?;
        let kernel = module.kernel(KERNEL_NAME)?;
        let compiled = CompiledKernel { kernel, generated };
        kernels.insert(compiled.generated.code.clone(), compiled.clone());
        Ok(compiled)
    }

    /// Blocks for a job of `n_iter` iterations: one thread per sub-batch of
    /// the job, up to the threads held. A small job runs on few threads,
    /// so its points plot whole sub-batches as flam3's do (and the last
    /// launch's overshoot stays small).
    fn blocks_for(&self, n_iter: u64) -> usize {
        let block = self.options.block as usize;
        let max_blocks = self.threads / block;
        let per_block = block as u64 * self.sub_batch as u64;
        n_iter.div_ceil(per_block).clamp(1, max_blocks as u64) as usize
    }

    /// Plotted iterations per point in a job of `n_iter` iterations. flam3
    /// iterates a job (one temporal sample) in ⌈n_iter / sub_batch⌉
    /// sub-batches, each from a fresh random point, so a genome of 1000
    /// temporal samples at preview quality restarts every few hundred
    /// samples; the device's points restart after as many plotted
    /// iterations on average, whichever thread plots them. Then the share
    /// of samples plotted k iterations after a restart (the transients of
    /// a genome whose points reach the attractor slowly) is flam3's.
    fn job_sub_batch(&self, n_iter: u64) -> i32 {
        let longest = self.sub_batch.max(1) as u64;
        let batches = n_iter.div_ceil(longest).max(1);
        n_iter.div_ceil(batches).clamp(1, longest) as i32
    }
}

impl<T: GpuBucket> GpuBackend<'_, T> {
    /// One launch of the chaos game.
    fn launch(&mut self, compiled: &CompiledKernel, args: &JobArgs<T>, l: Launch) -> Result<()> {
        let block = self.options.block;
        let cfg = LaunchConfig { grid_dim: (l.blocks as u32, 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 };
        let Launch { iters, sub_batch, plotting, .. } = l;
        let fuse = self.buffers.key.fuse as i32;
        let (width, height, row0) = (self.hw as u32, self.hh as u32, self.row0 as u32);
        let b = &mut self.buffers;
        let count = match (&b.count, &args.no_count) {
            (Some(c), _) | (None, Some(c)) => c,
            (None, None) => return Err(FlameError::invalid("no hit-count buffer for the chaos-game kernel")),
        };
        // SAFETY: the arguments match flame_iterate's parameters in order
        // and type (codegen.rs, KERNEL_ENTRY); every buffer is at least as
        // long as the kernel reads: params (layout.len() reals), tables
        // (rows × CHOOSE_GRAIN), palette (PALETTE_SIZE × 4), points/rng
        // (one per thread of the grid, blocks × block ≤ the threads they
        // were made for), hist (hw·hh·4), count (hw·hh or unused),
        // counters (2).
        unsafe {
            self.gpu
                .launch(&compiled.kernel)
                .buf(&args.params)
                .buf(&args.tables)
                .buf(&args.palette)
                .buf_mut(&mut b.points)
                .buf_mut(&mut b.rng_state)
                .buf(&b.rng_a)
                .buf_mut(&mut b.hist)
                .buf(count)
                .arg(&width)
                .arg(&height)
                .arg(&row0)
                .arg(&iters)
                .arg(&sub_batch)
                .arg(&fuse)
                .arg(&plotting)
                .buf_mut(&mut b.counters)
                .run(cfg)?;
        }
        Ok(())
    }
}

/// What one launch runs: `iters` iterations of every thread of the first
/// `blocks` blocks, whose points restart after `sub_batch` plotted
/// iterations; the first `plotting` threads plot, the others only iterate.
#[derive(Clone, Copy, Debug)]
struct Launch {
    blocks: usize,
    iters: i32,
    sub_batch: i32,
    plotting: u32,
}

/// A job's values on the device.
struct JobArgs<T: GpuBucket> {
    params: DeviceBuffer<u8>,
    tables: DeviceBuffer<u16>,
    palette: DeviceBuffer<f32>,
    /// Stands in for the hit counts where the histogram keeps none (never
    /// read then).
    no_count: Option<DeviceBuffer<T>>,
}

impl<T: GpuBucket> FrameBackend for GpuBackend<'_, T> {
    fn begin_pass(&mut self, jobs: usize) -> Result<()> {
        self.open_loop = jobs > 1;
        self.pass_jobs = jobs.max(1);
        let b = &mut self.buffers;
        self.gpu.memset_bytes(&mut b.hist, 0)?;
        if let Some(c) = b.count.as_mut() {
            self.gpu.memset_bytes(c, 0)?;
        }
        self.gpu.memset_bytes(&mut b.counters, 0)?;
        Ok(())
    }

    fn iterate(
        &mut self,
        job: &IterationJob<'_>,
        progress: &mut dyn FnMut(u64) -> Result<()>,
    ) -> Result<IterationCount> {
        let compiled = self.kernel(job.cp)?;
        let values = pack_params(job.cp, &compiled.generated.layout, job.camera);
        let palette: Vec<f32> = job.cmap.entries.iter().flat_map(|e| e.map(f32_flooring_as)).collect();
        let no_count =
            if self.buffers.count.is_some() { None } else { Some(alloc::<T>(self.gpu, 1, "a placeholder")?) };
        let args = JobArgs::<T> {
            params: self.gpu.upload(&to_real_bytes(&values, self.options.real))?,
            tables: self.gpu.upload(job.game.tables())?,
            palette: self.gpu.upload(&palette)?,
            no_count,
        };
        let block = self.options.block as usize;
        let per_launch = u64::from(self.options.iters_per_launch);
        let sub_batch = self.job_sub_batch(job.n_iter);

        if self.open_loop {
            // As many threads as keep MIN_ITERS_PER_THREAD iterations each
            // (and MIN_ITERS_PER_PASS over the pass),
            // launched without waiting: the pass's counts are read at its
            // end, and the host prepares the next job meanwhile.
            // The iterations that do not divide evenly run as one more
            // iteration of the first threads (the rest of their blocks
            // iterate without plotting). The fuses of the job's restarts
            // plot nothing, so they run on top of its samples.
            let n_run = job.n_iter + job.n_iter.div_ceil(sub_batch as u64) * self.buffers.key.fuse as u64;
            let block = block as u64;
            let max_blocks = (self.threads as u64 / block).max(1);
            let least = n_run
                .div_ceil(max_blocks * block)
                .max(MIN_ITERS_PER_THREAD)
                .max(MIN_ITERS_PER_PASS.div_ceil(self.pass_jobs as u64));
            let blocks = (n_run / (block * least)).clamp(1, max_blocks);
            let threads = blocks * block;
            let mut left = n_run / threads;
            let extra = n_run - left * threads;
            let extra_blocks = extra.div_ceil(block);
            while left > 0 {
                let iters = left.min(per_launch);
                let l = Launch { blocks: blocks as usize, iters: iters as i32, sub_batch, plotting: u32::MAX };
                self.launch(&compiled, &args, l)?;
                left -= iters;
            }
            if extra_blocks > 0 {
                let l = Launch { blocks: extra_blocks as usize, iters: 1, sub_batch, plotting: extra as u32 };
                self.launch(&compiled, &args, l)?;
            }
            // The pass's exact counts come from pass_counts.
            progress(job.n_iter)?;
            return Ok(IterationCount { kept: job.n_iter, bad: 0 });
        }

        self.gpu.memset_bytes(&mut self.buffers.counters, 0)?;
        let blocks = self.blocks_for(job.n_iter);
        // One plotting point per sub-batch, as flam3 and the CPU start one
        // fresh point per sub-batch: the blocks round up, and a point that
        // plotted fewer samples would restart (and show its transient)
        // more often than theirs.
        let threads = (blocks * block) as u64;
        let plotting = job.n_iter.div_ceil(self.sub_batch.max(1) as u64).clamp(1, threads);
        let mut done = IterationCount::default();
        while done.kept < job.n_iter {
            let iters = (job.n_iter - done.kept).div_ceil(plotting).clamp(1, per_launch) as i32;
            let l = Launch { blocks, iters, sub_batch, plotting: plotting as u32 };
            self.launch(&compiled, &args, l)?;
            let c = self.gpu.download(&self.buffers.counters)?;
            done = IterationCount { kept: c[0], bad: c[1] };
            progress(done.kept.min(job.n_iter))?;
        }
        Ok(done)
    }

    fn pass_counts(&mut self) -> Result<Option<IterationCount>> {
        if !self.open_loop {
            return Ok(None);
        }
        let c = self.gpu.download(&self.buffers.counters)?;
        Ok(Some(IterationCount { kept: c[0], bad: c[1] }))
    }

    fn end_pass(&mut self, de: Option<&DensityFilters>, scale: LogScale) -> Result<()> {
        let (hw, hh, ss) = (self.hw, self.hh, self.ss);
        let b = &mut self.buffers;
        self.finisher.accumulate_pass(self.gpu, &b.hist, b.count.as_ref(), &mut b.acc, hw, hh, ss, de, scale)?;
        Ok(())
    }

    fn finish(&mut self, g: &FrameGeometry, tone: &ToneMap) -> Result<Vec<[f64; 4]>> {
        // The filter reads from row de_offset + r·ss of the whole
        // accumulation buffer for output row r; a strip holds rows from
        // row0 on and produces its out_rows.
        let rows = self.strip.out_rows.clone();
        let first_row = rows.start * g.ss - self.row0;
        if tone.early_clip {
            self.finisher.clip_early(self.gpu, &mut self.buffers.acc, self.hw * self.hh, tone)?;
        }
        let px = self.finisher.filter_and_map_flat(
            self.gpu,
            &self.buffers.acc,
            self.hw,
            first_row,
            &g.filter,
            g.de_offset,
            g.ss,
            tone,
            g.width,
            rows.len(),
        )?;
        // Widened on every core: for a 1080p frame this is 66 MB written.
        Ok(px.par_chunks_exact(4).map(|v| [v[0], v[1], v[2], v[3]].map(f64::from)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::camera::Camera;
    use crate::render::chaos::ChaosGame;
    use crate::render::cuda::Accumulation;
    use crate::render::frame::frame_geometry;
    use crate::render::histogram::ColorMap;
    use crate::render::test_flames::sierpinski;

    /// `jobs` jobs of one pass (more than one: launched without waiting,
    /// counted at the pass's end), every sample adding a known colour.
    fn every_sample_counted<T: GpuBucket + Into<f64>>(gpu: &Gpu, accumulation: Accumulation, jobs: usize) {
        let options = IterationOptions { accumulation, ..IterationOptions::default() };
        let r = CudaRenderer::new(gpu.clone()).with_options(options).unwrap();
        let flames = [sierpinski()];
        let cp = &flames[0];
        let g = frame_geometry(&flames, cp).unwrap();
        let settings = RenderSettings { precision: T::PRECISION, ..RenderSettings::default() };
        let strip = Strip { out_rows: 0..g.height, hist_rows: 0..g.hh };
        let mut b = GpuBackend::<T>::new(&r, &flames, &g, &settings, strip, None).unwrap();
        b.begin_pass(jobs).unwrap();
        let game = ChaosGame::new(cp).unwrap();
        // Every sample adds exactly 255 to alpha and 1, 2, 3 to r, g, b:
        // the fractions go, as in flam3's integer histogram (and
        // 3.99999999999 stays below 4 on its way to f32).
        let entries = [1.7, 2.25, 3.99999999999, 255.0];
        let cmap = ColorMap { entries: Box::new([entries; 256]), linear: false };
        let camera = Camera::new(cp, g.gutter, g.ss, g.hw, g.hh, g.pixel_aspect, g.field);
        // Awkward sizes: a job smaller than the grid, one larger.
        let sizes = [3_000_017u64, 70_001, 1_234_567];
        let mut asked = 0;
        let mut counted = IterationCount::default();
        for &n_iter in sizes.iter().cycle().take(jobs) {
            let job = IterationJob { cp, game: &game, cmap: &cmap, camera: &camera, n_iter };
            let c = b.iterate(&job, &mut |_| Ok(())).unwrap();
            asked += n_iter;
            counted.kept += c.kept;
            counted.bad += c.bad;
        }
        let IterationCount { kept, bad } = b.pass_counts().unwrap().unwrap_or(counted);
        assert_eq!(bad, 0);
        if jobs == 1 {
            // Launches until the job's samples are plotted.
            assert!(kept >= asked && kept < asked + b.threads as u64, "{kept} for {asked}");
        } else {
            // Launched without waiting: each job runs its restarts' fuses
            // on top of its samples; every point's first fuse, and the
            // restarts that fall in another job than planned, are off by at
            // most a fuse per point.
            let fuse = (chaos::FUSE * b.threads) as u64;
            assert!(kept + fuse >= asked && kept <= asked + fuse, "{kept} for {asked}");
        }
        let hist = gpu.download(&b.buffers.hist).unwrap();
        let mut sums = [0.0f64; 4];
        for cell in hist.chunks(4) {
            for k in 0..4 {
                sums[k] += cell[k].into();
            }
        }
        // Per-cell sums stay far below 2^24, so f32 adds them exactly: any
        // lost update shows.
        assert_eq!(
            sums,
            [kept as f64, 2.0 * kept as f64, 3.0 * kept as f64, 255.0 * kept as f64],
            "{accumulation:?}, {jobs} job(s)"
        );
    }

    #[test]
    fn f32_palette_values_floor_as_their_f64() {
        for v in [0.0, 0.5, 99.99999999999999, 100.0, 100.9, 254.99999999, 255.0, 1e-300, -1e-300, -0.99999999999] {
            let x = f32_flooring_as(v);
            assert_eq!(f64::from(x).floor(), v.floor(), "{v}");
            assert!((f64::from(x) - v).abs() <= 2.0 * f64::from(f32::EPSILON) * v.max(1.0), "{v}: {x}");
        }
        // Rounded to the nearest f32 it would be 100.
        assert_eq!(99.99999999999999f64 as f32, 100.0);
        assert!(f32_flooring_as(99.99999999999999) < 100.0);
    }

    #[test]
    fn no_sample_is_lost() {
        let Some(gpu) = warpmc_testkit::gpu_or_skip("no_sample_is_lost") else { return };
        for a in [Accumulation::Plain, Accumulation::WarpAggregated, Accumulation::SharedCache] {
            for jobs in [1, 3] {
                every_sample_counted::<f32>(&gpu, a, jobs);
                every_sample_counted::<f64>(&gpu, a, jobs);
            }
        }
    }
}
