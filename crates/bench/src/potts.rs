//! `warpmc potts bench`: every Potts kernel that fits a model, the CPU
//! backend, heat-bath beside them (the generic byte-per-spin storage and
//! random numbers, another site rule), and the baseline kernel of Ferrero
//! et al. (2012), each timed
//! end to end (launches, synchronisation) after a warm-up, at the
//! transition temperature from a random start. Rows report nanoseconds per
//! site update, updates per nanosecond, and the least memory traffic a
//! sweep needs per second, for comparison with the device's copy bandwidth
//! measured in the same run.

use std::time::Instant;

use serde::Serialize;
use warpmc_gpu::Gpu;

use warpmc_potts::{
    Algorithm, Backend, CpuBackend, CudaBackend, CudaKernel, InitialState, Lattice, PottsModel, Update,
};

use crate::error::Result;
use crate::potts_baseline::BaselineGpu;

/// What to time.
#[derive(Clone, Debug)]
pub struct PottsBenchConfig {
    /// Values of q.
    pub qs: Vec<u32>,
    /// Square lattice sizes L.
    pub sizes: Vec<usize>,
    /// Time the CPU backend (up to `cpu_max_size`).
    pub cpu: bool,
    /// Largest L timed on the CPU.
    pub cpu_max_size: usize,
    /// The GPU for the CUDA kernels and the baseline (none: CPU only).
    pub gpu: Option<Gpu>,
    /// Seconds of timing per row, after a warm-up.
    pub seconds: f64,
}

/// The CUDA kernels a bench times, with their row labels.
const CUDA_KERNELS: [(CudaKernel, &str); 8] = [
    (CudaKernel::Generic, "cuda-generic"),
    (CudaKernel::Sliced, "cuda-sliced"),
    (CudaKernel::SlicedSplit, "cuda-sliced-split"),
    (CudaKernel::SlicedSplit4, "cuda-sliced-split4"),
    (CudaKernel::SlicedSplit8, "cuda-sliced-split8"),
    (CudaKernel::SlicedResident, "cuda-sliced-resident"),
    (CudaKernel::SlicedTiled, "cuda-sliced-tiled"),
    (CudaKernel::SlicedTiledInline, "cuda-sliced-tiled-inline"),
];

/// Largest L of the CPU heat-bath rows: a heat-bath sweep on the CPU takes
/// several times a Metropolis one, and the largest lattices would spend
/// minutes in the warm-up alone.
pub const CPU_HEAT_BATH_MAX_SIZE: usize = 4096;

/// Times every (q, L) of `cfg`: the baseline, each CUDA kernel that fits
/// the model (the resident kernel only where the GPU holds all its
/// threads) and the CUDA heat-bath kernel, then the CPU with Metropolis
/// and heat-bath. Each (q, L) group is handed to `report` as soon as it is
/// measured.
pub fn run_potts_bench<E: From<crate::BenchError>>(
    cfg: &PottsBenchConfig,
    mut report: impl FnMut(&[BenchRow]) -> std::result::Result<(), E>,
) -> std::result::Result<(), E> {
    // Every model and its memory (the lattice, its copies and a backend's
    // storage) is checked before the first is timed: a size that cannot
    // run fails the bench at once, not after the sizes before it.
    let mut models = Vec::new();
    for &q in &cfg.qs {
        for &l in &cfg.sizes {
            let model = PottsModel::new(q, l, l).map_err(crate::BenchError::from)?;
            model.check_host_memory(0).map_err(crate::BenchError::from)?;
            models.push(model);
        }
    }
    for model in &models {
        let rows = time_model(cfg, model)?;
        report(&rows)?;
    }
    Ok(())
}

fn time_model(cfg: &PottsBenchConfig, model: &PottsModel) -> Result<Vec<BenchRow>> {
    let mut rows = Vec::new();
    if let Some(g) = &cfg.gpu {
        rows.push(time_baseline(g.clone(), model, cfg.seconds)?);
        for (kernel, label) in CUDA_KERNELS {
            if !kernel.fits(model) {
                continue;
            }
            let mut b = match CudaBackend::with_kernel(g.clone(), model, kernel) {
                Ok(b) => b,
                // Too large to be resident, or for the tiled kernel's
                // shared memory, on this GPU: not a row.
                Err(_)
                    if matches!(
                        kernel,
                        CudaKernel::SlicedResident | CudaKernel::SlicedTiled | CudaKernel::SlicedTiledInline
                    ) =>
                {
                    continue;
                }
                Err(e) => return Err(e.into()),
            };
            let bytes = b.bytes_per_spin();
            rows.push(time_backend(&mut b, label, bytes, model, cfg.seconds)?);
        }
        let mut b = CudaBackend::for_algorithm(g.clone(), model, Algorithm::HeatBath)?;
        rows.push(time_algorithm(&mut b, Algorithm::HeatBath, "cuda-heat-bath", 1.0, model, cfg.seconds)?);
    }
    if cfg.cpu && model.width() <= cfg.cpu_max_size {
        let mut b = CpuBackend::new(model);
        let (label, bytes) = (format!("cpu-{}", b.storage_name()), b.bytes_per_spin());
        rows.push(time_backend(&mut b, &label, bytes, model, cfg.seconds)?);
        if model.width() <= CPU_HEAT_BATH_MAX_SIZE {
            let mut b = CpuBackend::for_algorithm(model, Algorithm::HeatBath)?;
            rows.push(time_algorithm(&mut b, Algorithm::HeatBath, "cpu-heat-bath", 1.0, model, cfg.seconds)?);
        }
    }
    Ok(rows)
}

/// One measured configuration.
#[derive(Clone, Debug, Serialize)]
pub struct BenchRow {
    /// "cpu", "cuda" or "cuda-baseline".
    pub kernel: String,
    /// q.
    pub q: u32,
    /// L (square lattice).
    pub size: usize,
    /// Sweeps timed.
    pub sweeps: u64,
    /// Seconds for them.
    pub seconds: f64,
    /// Nanoseconds per site update.
    pub ns_per_flip: f64,
    /// Site updates per nanosecond.
    pub flips_per_ns: f64,
    /// Bytes one spin occupies in this kernel's storage.
    pub bytes_per_spin: f64,
    /// The least traffic a sweep needs (each colour: read and write itself,
    /// read the other once: 3 lattice passes), per second, in GB/s.
    pub gbs: f64,
}

impl BenchRow {
    /// A row for `sweeps` sweeps of `model` in `seconds` with a storage of
    /// `bytes_per_spin`.
    pub fn new(kernel: &str, model: &PottsModel, bytes_per_spin: f64, sweeps: u64, seconds: f64) -> Self {
        let updates = sweeps as f64 * model.sites() as f64;
        BenchRow {
            kernel: kernel.into(),
            q: model.q(),
            size: model.width(),
            sweeps,
            seconds,
            ns_per_flip: seconds * 1e9 / updates,
            flips_per_ns: updates / (seconds * 1e9),
            bytes_per_spin,
            gbs: 3.0 * bytes_per_spin * updates / seconds / 1e9,
        }
    }
}

/// The temperature benchmarks run at: the transition point 1/ln(1 + √q),
/// where both accepted and rejected moves are common.
pub fn bench_temperature(q: u32) -> f64 {
    1.0 / (1.0 + (q as f64).sqrt()).ln()
}

/// Runs `f(count)` once to warm up and estimate, then enough times to last
/// about `target_seconds`; returns (sweeps, seconds).
fn timed(mut f: impl FnMut(u64) -> Result<()>, target_seconds: f64, max_sweeps: u64) -> Result<(u64, f64)> {
    let t0 = Instant::now();
    f(2)?;
    let per_sweep = t0.elapsed().as_secs_f64() / 2.0;
    let sweeps = ((target_seconds / per_sweep.max(1e-9)) as u64).clamp(2, max_sweeps);
    let t1 = Instant::now();
    f(sweeps)?;
    Ok((sweeps, t1.elapsed().as_secs_f64()))
}

/// Times Metropolis on a backend on a random start at the transition
/// temperature; the row is labelled `kernel`, storing `bytes_per_spin`.
pub fn time_backend(
    backend: &mut dyn Backend,
    kernel: &str,
    bytes_per_spin: f64,
    model: &PottsModel,
    target_seconds: f64,
) -> Result<BenchRow> {
    time_algorithm(backend, Algorithm::Metropolis, kernel, bytes_per_spin, model, target_seconds)
}

/// Times `algorithm` on a backend opened for it, as [`time_backend`].
pub fn time_algorithm(
    backend: &mut dyn Backend,
    algorithm: Algorithm,
    kernel: &str,
    bytes_per_spin: f64,
    model: &PottsModel,
    target_seconds: f64,
) -> Result<BenchRow> {
    let t = bench_temperature(model.q());
    backend.load(&Lattice::new(model, InitialState::Random, 1, 0))?;
    backend.set_update(&Update::new(algorithm, model, t)?)?;
    let mut next = 0u64;
    let (sweeps, secs) = timed(
        |count| {
            backend.sweeps(1, 0, next, count)?;
            next += count;
            Ok(backend.synchronize()?)
        },
        target_seconds,
        1 << 20,
    )?;
    Ok(BenchRow::new(kernel, model, bytes_per_spin, sweeps, secs))
}

/// Times the baseline kernel ([`crate::potts_baseline`]) the same way.
pub fn time_baseline(gpu: Gpu, model: &PottsModel, target_seconds: f64) -> Result<BenchRow> {
    let lattice = Lattice::new(model, InitialState::Random, 1, 0);
    let mut base = BaselineGpu::new(gpu, &lattice, 1)?;
    base.set_temperature(bench_temperature(model.q()))?;
    let (sweeps, secs) = timed(
        |count| {
            base.sweeps(count)?;
            Ok(base.gpu().synchronize()?)
        },
        target_seconds,
        1 << 20,
    )?;
    Ok(BenchRow::new("cuda-baseline", model, 1.0, sweeps, secs))
}
