//! `warpmc potts bench --swendsen-wang`: Swendsen–Wang cluster sweeps
//! (`warpmc_potts::cuda_sw`, `warpmc_potts::swendsen_wang`) at the
//! transition temperature, each beside yardsticks measured in the same
//! run: checkerboard Metropolis on the same lattice and backend, and on the
//! GPU the time the device takes to copy the Swendsen–Wang storage (a byte
//! of spin and a label per site) once.
//!
//! A site update is one site of one sweep, so updates per nanosecond are
//! sites × sweeps / time for both algorithms (a cluster sweep decorrelates
//! far more per update near T_c; this measures cost only). Each row starts
//! from a random lattice, runs [`WARM_UP_SWEEPS`] sweeps untimed (the
//! clusters grow to their size at T_c), then is timed end to end
//! (launches and synchronisation) for about the requested seconds.

use std::time::Instant;

use serde::Serialize;
use warpmc_gpu::Gpu;
use warpmc_potts::cuda_sw::CudaSwendsenWang;
use warpmc_potts::swendsen_wang::{bond_threshold, sweeps_cpu};
use warpmc_potts::{Census, CpuBackend, CudaBackend, InitialState, Lattice, PottsModel};

use crate::error::Result;
use crate::potts::{bench_temperature, time_backend};

/// Sweeps run before the timing starts.
pub const WARM_UP_SWEEPS: u64 = 20;

/// What to time.
#[derive(Clone, Debug)]
pub struct ClusterBenchConfig {
    /// Values of q.
    pub qs: Vec<u32>,
    /// Square lattice sizes L.
    pub sizes: Vec<usize>,
    /// Time the CPU (up to `cpu_max_size`).
    pub cpu: bool,
    /// Largest L timed on the CPU.
    pub cpu_max_size: usize,
    /// The GPU (none: CPU rows only).
    pub gpu: Option<Gpu>,
    /// Seconds of timing per row, after the warm-up.
    pub seconds: f64,
}

/// Swendsen–Wang on one backend beside Metropolis on the same one.
#[derive(Clone, Debug, Serialize)]
pub struct ClusterRow {
    /// "cuda" or "cpu".
    pub backend: String,
    /// q.
    pub q: u32,
    /// L (square lattice).
    pub size: usize,
    /// The temperature, 1/ln(1 + √q).
    pub temperature: f64,
    /// Swendsen–Wang sweeps timed.
    pub sweeps: u64,
    /// Seconds for them.
    pub seconds: f64,
    /// Milliseconds per sweep.
    pub ms_per_sweep: f64,
    /// Site updates (sites × sweeps) per nanosecond.
    pub updates_per_ns: f64,
    /// Energy per site after the timed sweeps (−J · equal bonds / N): a
    /// check that the chain sits at the transition.
    pub energy_per_site: f64,
    /// Checkerboard Metropolis on the same lattice and backend, timed in
    /// the same run (its fastest kernel), in site updates per nanosecond.
    pub metropolis_updates_per_ns: f64,
    /// Swendsen–Wang's rate over Metropolis'.
    pub vs_metropolis: f64,
    /// GPU: the device's copy bandwidth measured now (GB/s, 2·bytes/time).
    pub copy_gbs: Option<f64>,
    /// GPU: a sweep's time in copies of the Swendsen–Wang storage (spins
    /// and labels, read once and written once at the copy bandwidth).
    pub sweep_in_copies: Option<f64>,
}

/// Times every (q, L) of `cfg`, handing each row to `report` as soon as it
/// is measured.
pub fn run_cluster_bench<E: From<crate::BenchError>>(
    cfg: &ClusterBenchConfig,
    mut report: impl FnMut(&ClusterRow) -> std::result::Result<(), E>,
) -> std::result::Result<(), E> {
    let copy_gbs = match &cfg.gpu {
        Some(g) => Some(g.copy_bandwidth_gbs(1 << 30).map_err(crate::BenchError::from)?),
        None => None,
    };
    for &q in &cfg.qs {
        for &l in &cfg.sizes {
            let model = PottsModel::new(q, l, l).map_err(crate::BenchError::from)?;
            if let (Some(g), Some(bw)) = (&cfg.gpu, copy_gbs) {
                report(&time_cuda(g, &model, cfg.seconds, bw)?)?;
            }
            if cfg.cpu && l <= cfg.cpu_max_size {
                report(&time_cpu(&model, cfg.seconds)?)?;
            }
        }
    }
    Ok(())
}

/// Runs `f(count)` once for [`WARM_UP_SWEEPS`], once more to estimate the
/// time per sweep, then for about `target_seconds`; returns (sweeps,
/// seconds) of the last.
fn timed(mut f: impl FnMut(u64) -> Result<()>, target_seconds: f64) -> Result<(u64, f64)> {
    f(WARM_UP_SWEEPS)?;
    let t0 = Instant::now();
    f(2)?;
    let per_sweep = t0.elapsed().as_secs_f64() / 2.0;
    let sweeps = ((target_seconds / per_sweep.max(1e-9)) as u64).clamp(2, 1 << 24);
    let t1 = Instant::now();
    f(sweeps)?;
    Ok((sweeps, t1.elapsed().as_secs_f64()))
}

fn energy_per_site(model: &PottsModel, census: &Census) -> f64 {
    model.energy(census.equal_bonds(), 0) / model.sites() as f64
}

fn row(backend: &str, model: &PottsModel, sweeps: u64, seconds: f64, energy: f64, metropolis: f64) -> ClusterRow {
    let updates = sweeps as f64 * model.sites() as f64;
    let rate = updates / (seconds * 1e9);
    ClusterRow {
        backend: backend.into(),
        q: model.q(),
        size: model.width(),
        temperature: bench_temperature(model.q()),
        sweeps,
        seconds,
        ms_per_sweep: seconds * 1e3 / sweeps as f64,
        updates_per_ns: rate,
        energy_per_site: energy,
        metropolis_updates_per_ns: metropolis,
        vs_metropolis: rate / metropolis,
        copy_gbs: None,
        sweep_in_copies: None,
    }
}

/// Swendsen–Wang on the GPU, then the CUDA Metropolis backend.
fn time_cuda(gpu: &Gpu, model: &PottsModel, seconds: f64, copy_gbs: f64) -> Result<ClusterRow> {
    let th = bond_threshold(model, bench_temperature(model.q()))?;
    let (sweeps, secs, energy) = {
        let mut sw = CudaSwendsenWang::new(gpu.clone(), model)?;
        sw.load(&Lattice::new(model, InitialState::Random, 1, 0))?;
        let mut next = 0u64;
        let (sweeps, secs) = timed(
            |count| {
                sw.sweeps(th, 1, 0, next, count)?;
                next += count;
                Ok(sw.synchronize()?)
            },
            seconds,
        )?;
        (sweeps, secs, energy_per_site(model, &sw.census()?))
    };
    let mut metropolis = CudaBackend::new(gpu.clone(), model)?;
    let bytes = metropolis.bytes_per_spin();
    let m = time_backend(&mut metropolis, "cuda", bytes, model, seconds)?;
    let mut r = row("cuda", model, sweeps, secs, energy, m.flips_per_ns);
    let storage = warpmc_potts::cuda_sw::device_bytes(model.sites()) as f64;
    let copy_ms = 2.0 * storage / (copy_gbs * 1e9) * 1e3;
    r.copy_gbs = Some(copy_gbs);
    r.sweep_in_copies = Some(r.ms_per_sweep / copy_ms);
    Ok(r)
}

/// Swendsen–Wang on the CPU, then the CPU Metropolis backend.
fn time_cpu(model: &PottsModel, seconds: f64) -> Result<ClusterRow> {
    let th = bond_threshold(model, bench_temperature(model.q()))?;
    let mut lattice = Lattice::new(model, InitialState::Random, 1, 0);
    let mut next = 0u64;
    let (sweeps, secs) = timed(
        |count| {
            sweeps_cpu(&mut lattice, model, th, 1, 0, next, count)?;
            next += count;
            Ok(())
        },
        seconds,
    )?;
    let energy = energy_per_site(model, &lattice.census());
    let mut metropolis = CpuBackend::new(model);
    let bytes = metropolis.bytes_per_spin();
    let m = time_backend(&mut metropolis, "cpu", bytes, model, seconds)?;
    Ok(row("cpu", model, sweeps, secs, energy, m.flips_per_ns))
}
