//! The CPU backend: histogram and accumulation buffer in host memory,
//! sub-batches on every core, sums in an order that does not depend on the
//! thread count.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;
use warpmc_rng::{Domain, Mwc, multipliers, mwc::seed_state, philox_block};

use super::cost::Sizing;
use super::filters::DensityFilters;
use super::frame::{FrameBackend, FrameGeometry, IterationCount, IterationJob, LogScale, render_frame};
use super::histogram::{self, BandedSamples, Bucket, Sample, palette_coordinate};
use super::tonemap::{self, ToneMap};
use super::{RenderSettings, RenderedFrame, chaos, density, try_buffer};
use crate::error::{FlameError, Result};
use crate::genome::Flame;

/// The generator of sub-batch `unit` of a render seeded with `seed`: as
/// [`Mwc::for_unit`] builds one (multiplier `unit` mod the table length,
/// start state from the first Philox block of the unit's stream), but in
/// the flame renderer's own stream domain.
pub(crate) fn sub_batch_rng(seed: u64, unit: u64) -> Mwc {
    let table = multipliers::table();
    let a = table[(unit % table.len() as u64) as usize];
    let w = philox_block(seed, Domain::Flame.stream(unit & warpmc_rng::stream::MAX_STREAM_INDEX), 0);
    Mwc::from_state(a, seed_state(a, w[0], w[1])).expect("seed_state gives valid states")
}

/// Renders the frame at `time` of `flames` (already scaled) with buckets
/// of type `T`.
pub(super) fn render<T: Bucket>(
    flames: &[Flame],
    time: f64,
    settings: &RenderSettings,
    progress: &(dyn Fn(f64) + Sync),
) -> Result<RenderedFrame> {
    let sizing = Sizing::new(flames, time, settings)?;
    let threads = rayon::current_num_threads();
    sizing.cpu_cost(settings.precision, threads, settings.sub_batch_size).check_host_memory()?;
    // The CPU holds the whole histogram, indexed in 32 bits (the GPU
    // renders larger frames in strips).
    let cells = sizing.sizes.cells();
    if cells > u64::from(u32::MAX) {
        return Err(FlameError::invalid(format!(
            "the histogram would have {cells} cells; the CPU renderer indexes at most 2^32 (the CUDA renderer renders \
             such frames in strips)"
        )));
    }
    let geometry = sizing.sizes.geometry(flames)?;
    let mut backend = CpuBackend::<T>::new(&geometry, settings)?;
    render_frame(flames, time, settings, &geometry, &mut backend, progress)
}

/// Histogram and accumulation buffer of one frame in host memory.
pub(super) struct CpuBackend<T: Bucket> {
    hist: Vec<[T::Count; 5]>,
    acc: Vec<[T; 4]>,
    hw: usize,
    hh: usize,
    ss: usize,
    seed: u64,
    sub_batch_size: u64,
    /// Iterations discarded at the start of each sub-batch.
    fuse: usize,
    /// Next sub-batch index (its random stream).
    unit: u64,
    threads: usize,
    /// Row bands for deterministic parallel accumulation.
    bands: usize,
    cells_per_band: u32,
    /// The render's cancel flag: density estimation and the spatial filter
    /// stop early once it is set.
    cancel: Option<Arc<AtomicBool>>,
}

/// The samples one sub-batch put in the histogram, by band, and the bad
/// values it met.
struct SubBatch {
    samples: BandedSamples,
    bad: u64,
}

impl<T: Bucket> CpuBackend<T> {
    pub(super) fn new(g: &FrameGeometry, settings: &RenderSettings) -> Result<Self> {
        let hist: Vec<[T::Count; 5]> = try_buffer(g.hw * g.hh, [T::Count::default(); 5], "the histogram")?;
        let acc: Vec<[T; 4]> = try_buffer(g.hw * g.hh, [T::default(); 4], "the accumulation buffer")?;
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
            fuse: chaos::fuse(settings.early_clip),
            unit: 0,
            threads,
            bands: g.hh.div_ceil(band_rows),
            cells_per_band: (band_rows * g.hw) as u32,
            cancel: settings.cancel.clone(),
        })
    }

    /// An error once the render was cancelled: what the last step made is
    /// incomplete.
    fn check_cancel(&self) -> Result<()> {
        match &self.cancel {
            Some(c) if c.load(Ordering::Relaxed) => Err(FlameError::Interrupted),
            _ => Ok(()),
        }
    }

    /// Bytes of the histogram and the accumulation buffer.
    #[cfg(test)]
    pub(super) fn buffer_bytes(&self) -> usize {
        std::mem::size_of_val(&self.hist[..]) + std::mem::size_of_val(&self.acc[..])
    }

    /// Sub-batch `s` of `job` (its random stream is unit `self.unit + s`).
    fn sub_batch(&self, job: &IterationJob<'_>, s: u64) -> SubBatch {
        let n = self.sub_batch_size.min(job.n_iter - s * self.sub_batch_size) as usize;
        let mut rng = sub_batch_rng(self.seed, self.unit + s);
        let mut raw = Vec::with_capacity(n);
        let bad = job.game.run(n, self.fuse, &mut rng, |p| {
            if p[3] == 0.0 {
                return;
            }
            if let Some(cell) = job.camera.cell(p[0], p[1]) {
                raw.push(Sample { cell, color: palette_coordinate(p[2]), visibility: p[3] as f32 });
            }
        });
        let mut samples = BandedSamples::default();
        BandedSamples::from_raw(&raw, self.cells_per_band, self.bands, &mut samples);
        SubBatch { samples, bad }
    }
}

impl<T: Bucket> FrameBackend for CpuBackend<T> {
    fn begin_pass(&mut self, _jobs: usize) -> Result<()> {
        self.hist.par_iter_mut().for_each(|c| *c = [T::Count::default(); 5]);
        Ok(())
    }

    fn iterate(
        &mut self,
        job: &IterationJob<'_>,
        progress: &mut dyn FnMut(u64) -> Result<()>,
    ) -> Result<IterationCount> {
        let (n_iter, sbs) = (job.n_iter, self.sub_batch_size);
        let n_sub = n_iter.div_ceil(sbs);
        // Rounds of a few sub-batches per thread: each round's samples are
        // added, band by band, before the next round is drawn.
        let round = (self.threads * 4) as u64;
        let cells_per_band = self.cells_per_band;
        let mut bad = 0;
        let mut s0 = 0;
        while s0 < n_sub {
            let s1 = (s0 + round).min(n_sub);
            let batches: Vec<SubBatch> = (s0..s1).into_par_iter().map(|s| self.sub_batch(job, s)).collect();
            bad += batches.iter().map(|b| b.bad).sum::<u64>();
            let banded: Vec<BandedSamples> = batches.into_iter().map(|b| b.samples).collect();
            self.hist.par_chunks_mut(cells_per_band as usize).enumerate().for_each(|(b, chunk)| {
                histogram::accumulate_band(chunk, b as u32 * cells_per_band, b, &banded, job.cmap);
            });
            progress((s1 * sbs).min(n_iter))?;
            s0 = s1;
        }
        self.unit += n_sub;
        Ok(IterationCount { kept: n_iter, bad })
    }

    fn end_pass(&mut self, de: Option<&DensityFilters>, scale: LogScale) -> Result<()> {
        let LogScale { k1, k2 } = scale;
        match de {
            Some(de) => {
                let cancel = self.cancel.as_deref();
                density::density_estimate(&self.hist, &mut self.acc, self.hw, self.hh, self.ss, de, k1, k2, cancel)
            }
            None => density::log_scale(&self.hist, &mut self.acc, self.hw, k1, k2),
        }
        self.check_cancel()
    }

    fn finish(&mut self, g: &FrameGeometry, tone: &ToneMap) -> Result<Vec<[f64; 4]>> {
        self.hist = Vec::new();
        if tone.early_clip {
            tonemap::clip_early(&mut self.acc, tone);
        }
        let mut pixels = try_buffer(g.width * g.height, [0.0; 4], "the finished pixels")?;
        let cancel = self.cancel.as_deref();
        tonemap::filter_and_map(&self.acc, self.hw, &g.filter, g.de_offset, g.ss, tone, g.width, &mut pixels, cancel);
        self.check_cancel()?;
        Ok(pixels)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::frame::IterationCount;
    use crate::render::test_flames::sierpinski;

    /// The CPU backend, with Ctrl-C arriving as a chosen step begins.
    struct CtrlCAt {
        inner: CpuBackend<f64>,
        flag: Arc<AtomicBool>,
        step: &'static str,
    }

    impl CtrlCAt {
        fn arrive(&self, step: &str) {
            if step == self.step {
                self.flag.store(true, Ordering::SeqCst);
            }
        }
    }

    impl FrameBackend for CtrlCAt {
        fn begin_pass(&mut self, jobs: usize) -> Result<()> {
            self.inner.begin_pass(jobs)
        }
        fn iterate(
            &mut self,
            job: &IterationJob<'_>,
            progress: &mut dyn FnMut(u64) -> Result<()>,
        ) -> Result<IterationCount> {
            self.inner.iterate(job, progress)
        }
        fn end_pass(&mut self, de: Option<&DensityFilters>, scale: LogScale) -> Result<()> {
            self.arrive("density");
            self.inner.end_pass(de, scale)
        }
        fn finish(&mut self, g: &FrameGeometry, tone: &ToneMap) -> Result<Vec<[f64; 4]>> {
            self.arrive("filter");
            self.inner.finish(g, tone)
        }
    }

    #[test]
    fn ctrl_c_during_density_estimation_or_the_filter_stops_the_frame() {
        let mut f = sierpinski();
        f.quality = 5.0;
        f.estimator_radius = 9.0;
        let flames = [f];
        for step in ["density", "filter", "never"] {
            let flag = Arc::new(AtomicBool::new(false));
            let settings = RenderSettings { cancel: Some(flag.clone()), ..RenderSettings::default() };
            let sizing = Sizing::new(&flames, 0.0, &settings).unwrap();
            let geometry = sizing.sizes.geometry(&flames).unwrap();
            let inner = CpuBackend::<f64>::new(&geometry, &settings).unwrap();
            let mut backend = CtrlCAt { inner, flag, step };
            let r = render_frame(&flames, 0.0, &settings, &geometry, &mut backend, &|_| {});
            match step {
                "never" => assert!(r.is_ok()),
                _ => assert!(matches!(r, Err(FlameError::Interrupted)), "Ctrl-C in the {step} step"),
            }
        }
    }
}
