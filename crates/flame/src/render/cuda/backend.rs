//! The GPU's [`FrameBackend`]: histogram, accumulation buffer and the
//! chaos game's points in device memory, one strip of the frame.

use std::collections::HashMap;

use warpmc_gpu::{DeviceBuffer, Gpu, GpuError, Kernel, LaunchConfig};
use warpmc_rng::RandomSource;

use super::codegen::{GeneratedKernel, KERNEL_NAME, generate, pack_params, point_bytes, point_state, to_real_bytes};
use super::finish::{Finisher, GpuBucket};
use super::{CudaRenderer, IterationOptions, Strip};
use crate::error::{FlameError, Result};
use crate::genome::Flame;
use crate::render::chaos::FUSE;
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
struct CompiledKernel {
    kernel: Kernel,
    generated: GeneratedKernel,
}

/// The chaos game's points at the start of a render: one per thread, each
/// as a sub-batch starts on the CPU (flam3): at random in [-1, 1]² with a
/// random colour, discarded for FUSE iterations, then plotted for
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
    fn new(threads: usize, seed: u64, real: Precision, sub_batch: i32) -> Self {
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
            at[3 * rb..3 * rb + 4].copy_from_slice(&point_state(FUSE, 0).to_le_bytes());
            at[3 * rb + 4..3 * rb + 8].copy_from_slice(&sub_batch.to_le_bytes());
            rng_state.push(rng.state());
            rng_a.push(rng.multiplier());
        }
        InitialPoints { points, rng_state, rng_a }
    }
}

/// Histogram, accumulation buffer and points of one strip of a frame in
/// device memory.
pub(super) struct GpuBackend<'a, T: GpuBucket> {
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
    /// Kept iterations and bad values of the current job.
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
    /// Compiled kernels by generated source (animation frames share them;
    /// the renderer's options are the same for all).
    kernels: HashMap<String, CompiledKernel>,
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
    pub(super) fn new(
        r: &'a CudaRenderer,
        flames: &[Flame],
        g: &FrameGeometry,
        settings: &RenderSettings,
        strip: Strip,
    ) -> Result<Self> {
        let gpu = &r.gpu;
        let o = &r.options;
        let rows = strip.hist_rows.len();
        let cells = g.hw * rows;
        let finisher = Finisher::new(gpu, T::PRECISION)?;
        let hist = alloc::<T>(gpu, cells * 4, "the histogram of a strip")?;
        let count = if needs_count(flames) { Some(alloc::<T>(gpu, cells, "the hit counts of a strip")?) } else { None };
        let acc = alloc::<T>(gpu, cells * 4, "the accumulation buffer of a strip")?;

        let threads = (gpu.info().sm_count.max(1) * o.blocks_per_sm * o.block) as usize;
        let sub_batch = i32::try_from(settings.sub_batch_size.max(1)).unwrap_or(i32::MAX);
        let init = InitialPoints::new(threads, settings.seed, o.real, sub_batch);
        Ok(GpuBackend {
            gpu,
            options: o,
            finisher,
            hist,
            count,
            acc,
            points: gpu.upload(&init.points)?,
            rng_state: gpu.upload(&init.rng_state)?,
            rng_a: gpu.upload(&init.rng_a)?,
            counters: gpu.alloc_zeros::<u64>(2)?,
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

    /// The chaos-game kernel of `cp`'s structure, compiled once.
    fn kernel(&mut self, cp: &Flame) -> Result<CompiledKernel> {
        let generated = generate(cp, self.options, T::PRECISION, self.count.is_some());
        if let Some(k) = self.kernels.get(&generated.code) {
            return Ok(k.clone());
        }
        let module = self.gpu.module(&generated.source)?;
        let kernel = module.kernel(KERNEL_NAME)?;
        let compiled = CompiledKernel { kernel, generated };
        self.kernels.insert(compiled.generated.code.clone(), compiled.clone());
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
}

impl<T: GpuBucket> FrameBackend for GpuBackend<'_, T> {
    fn begin_pass(&mut self) -> Result<()> {
        self.gpu.memset_bytes(&mut self.hist, 0)?;
        if let Some(c) = self.count.as_mut() {
            self.gpu.memset_bytes(c, 0)?;
        }
        Ok(())
    }

    fn iterate(
        &mut self,
        job: &IterationJob<'_>,
        progress: &mut dyn FnMut(u64) -> Result<()>,
    ) -> Result<IterationCount> {
        let compiled = self.kernel(job.cp)?;
        let values = pack_params(job.cp, &compiled.generated.layout, job.camera);
        let params = self.gpu.upload(&to_real_bytes(&values, self.options.real))?;
        let tables = self.gpu.upload(job.game.tables())?;
        let palette: Vec<f32> = job.cmap.entries.iter().flat_map(|e| e.map(|v| v as f32)).collect();
        let palette = self.gpu.upload(&palette)?;
        self.gpu.memset_bytes(&mut self.counters, 0)?;

        let block = self.options.block as usize;
        let blocks = self.blocks_for(job.n_iter);
        let threads = (blocks * block) as u64;
        let per_launch = u64::from(self.options.iters_per_launch);
        let (width, height, row0) = (self.hw as u32, self.hh as u32, self.row0 as u32);
        let unused_count;
        let count = match self.count.as_ref() {
            Some(c) => c,
            None => {
                unused_count = alloc::<T>(self.gpu, 1, "a placeholder")?;
                &unused_count
            }
        };
        let cfg =
            LaunchConfig { grid_dim: (blocks as u32, 1, 1), block_dim: (block as u32, 1, 1), shared_mem_bytes: 0 };
        let mut done = IterationCount::default();
        while done.kept < job.n_iter {
            let iters = (job.n_iter - done.kept).div_ceil(threads).clamp(1, per_launch) as i32;
            // SAFETY: the arguments match flame_iterate's parameters in
            // order and type (codegen.rs, KERNEL_ENTRY); every buffer is at
            // least as long as the kernel reads: params (layout.len()
            // reals), tables (rows × CHOOSE_GRAIN), palette (PALETTE_SIZE ×
            // 4), points/rng (one per thread of the grid, `threads` ≤
            // allocated), hist (hw·hh·4), count (hw·hh or unused),
            // counters (2).
            unsafe {
                self.gpu
                    .launch(&compiled.kernel)
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
                    .run(cfg)?;
            }
            let c = self.gpu.download(&self.counters)?;
            done = IterationCount { kept: c[0], bad: c[1] };
            progress(done.kept.min(job.n_iter))?;
        }
        Ok(done)
    }

    fn end_pass(&mut self, de: Option<&DensityFilters>, scale: LogScale) -> Result<()> {
        let (hw, hh, ss) = (self.hw, self.hh, self.ss);
        self.finisher.accumulate_pass(
            self.gpu,
            &self.hist,
            self.count.as_ref(),
            &mut self.acc,
            hw,
            hh,
            ss,
            de,
            scale,
        )?;
        Ok(())
    }

    fn finish(&mut self, g: &FrameGeometry, tone: &ToneMap) -> Result<Vec<[f64; 4]>> {
        // The filter reads from row de_offset + r·ss of the whole
        // accumulation buffer for output row r; a strip holds rows from
        // row0 on and produces its out_rows.
        let rows = self.strip.out_rows.clone();
        let first_row = rows.start * g.ss - self.row0;
        let px = self.finisher.filter_and_map(
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
        )?;
        Ok(px.into_iter().map(|p| p.map(f64::from)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::genome::{Affine, XForm};
    use crate::render::camera::Camera;
    use crate::render::chaos::ChaosGame;
    use crate::render::cuda::Accumulation;
    use crate::render::frame::frame_geometry;
    use crate::render::histogram::ColorMap;
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

    fn every_sample_counted<T: GpuBucket + Into<f64>>(gpu: &Gpu, accumulation: Accumulation) {
        let options = IterationOptions { accumulation, ..IterationOptions::default() };
        let r = CudaRenderer::new(gpu.clone()).with_options(options).unwrap();
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
        let IterationCount { kept, bad } = b.iterate(&job, &mut |_| Ok(())).unwrap();
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
    fn no_sample_is_lost() {
        let Some(gpu) = warpmc_testkit::gpu_or_skip("no_sample_is_lost") else { return };
        for a in [Accumulation::Plain, Accumulation::WarpAggregated, Accumulation::SharedCache] {
            every_sample_counted::<f32>(&gpu, a);
            every_sample_counted::<f64>(&gpu, a);
        }
    }
}
