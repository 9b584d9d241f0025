//! Device timing shared by the primitive benchmarks: the median of single
//! calls, or the median of batches of back-to-back calls over a minimum
//! time (for kernels fast enough that power management shows).

use warpmc_gpu::Gpu;

use crate::error::Result;

/// Median device time of `f` in ms over `runs` calls, after one untimed
/// call (compilation, memory-pool growth).
pub fn median_ms(gpu: &Gpu, runs: usize, mut f: impl FnMut() -> Result<()>) -> Result<f64> {
    f()?;
    gpu.synchronize()?;
    let mut times = Vec::with_capacity(runs.max(1));
    for _ in 0..runs.max(1) {
        let timer = gpu.start_timer()?;
        f()?;
        times.push(timer.stop_ms()?);
    }
    Ok(median(&mut times))
}

/// Calls of at least this many milliseconds in all make one timed batch
/// of [`sustained_ms`].
const BATCH_MS: f64 = 4.0;

/// What [`sustained_ms`] measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sustained {
    /// Median device time per call, in ms.
    pub ms: f64,
    /// Calls made in all (some operations, such as an in-place transpose,
    /// leave a result that depends on it).
    pub calls: usize,
}

/// Median device time per call of `f` under sustained load.
///
/// After one untimed call (compilation, memory-pool growth) and one that
/// sizes the batches, calls run back to back in batches of at least
/// `BATCH_MS` (4 ms), each batch timed by events around it, until there
/// are at least `batches` batches and `min_ms` of device time in all; the
/// result is the median batch divided by its calls. Why: under full
/// memory traffic a GPU at its power cap lowers its clocks in cycles of
/// about a second, and a short timing lands in one phase or the other; a
/// median over a whole second of batches lands in the common phase
/// (docs/benchmarks/transpose.md, "sustained timing").
pub fn sustained_ms(gpu: &Gpu, batches: usize, min_ms: f64, mut f: impl FnMut() -> Result<()>) -> Result<Sustained> {
    f()?;
    gpu.synchronize()?;
    let timer = gpu.start_timer()?;
    f()?;
    let one = timer.stop_ms()?;
    let per_batch = (BATCH_MS / one.max(1e-4)).ceil().clamp(1.0, 100_000.0) as usize;
    let mut calls = 2;
    let mut times = Vec::new();
    let mut total = 0.0;
    while times.len() < batches.max(1) || total < min_ms {
        let timer = gpu.start_timer()?;
        for _ in 0..per_batch {
            f()?;
        }
        let ms = timer.stop_ms()?;
        calls += per_batch;
        total += ms;
        times.push(ms / per_batch as f64);
    }
    Ok(Sustained { ms: median(&mut times), calls })
}

/// The median (the upper one of an even count) of a non-empty sample.
pub(crate) fn median(times: &mut [f64]) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}
