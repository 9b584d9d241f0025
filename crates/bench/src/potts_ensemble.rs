//! The ensemble rows of `warpmc potts bench`: many lattices advanced
//! together (a finite-size-scaling study's temperatures and samples), each
//! beside a single lattice timed in the same run:
//!
//! - many small lattices (1,024 of 64² by default) on the CUDA ensemble,
//!   against one lattice of the same size on the CUDA backend;
//! - a few large ones (16 of 2048²) on the CUDA ensemble, against one
//!   large lattice (16384², where a single lattice runs fastest);
//! - the same small-lattice ensemble on the CPU, against one lattice on
//!   the CPU backend.
//!
//! Every member has its own chain and its own temperature (spread around
//! the transition), from a random start; rates are site updates of all
//! members per nanosecond, timed end to end.

use std::time::Instant;

use serde::Serialize;
use warpmc_gpu::Gpu;
use warpmc_potts::{
    AcceptanceTable, Chain, CpuBackend, CpuEnsemble, CudaBackend, CudaEnsemble, Ensemble, InitialState, Lattice,
    PottsModel,
};

use crate::error::Result;
use crate::potts::{bench_temperature, time_backend};

/// What to time.
#[derive(Clone, Debug)]
pub struct EnsembleBenchConfig {
    /// Values of q.
    pub qs: Vec<u32>,
    /// (L, members) of the small-lattice ensembles.
    pub small: (usize, usize),
    /// (L, members) of the large-lattice ensemble.
    pub large: (usize, usize),
    /// L of the single large lattice the large ensemble is compared with.
    pub single: usize,
    /// Time the CPU ensemble.
    pub cpu: bool,
    /// The GPU (none: CPU rows only).
    pub gpu: Option<Gpu>,
    /// Seconds of timing per row, after a warm-up.
    pub seconds: f64,
}

/// One ensemble measured beside its single-lattice reference.
#[derive(Clone, Debug, Serialize)]
pub struct EnsembleRow {
    /// "cuda-ensemble" or "cpu-ensemble", with the kernel family.
    pub kernel: String,
    /// q.
    pub q: u32,
    /// L of each member.
    pub size: usize,
    /// Members.
    pub members: usize,
    /// Sweeps of every member timed.
    pub sweeps: u64,
    /// Seconds for them.
    pub seconds: f64,
    /// Site updates of all members per nanosecond.
    pub flips_per_ns: f64,
    /// What the row is compared with, e.g. "cuda-backend 16384²".
    pub reference: String,
    /// The reference's site updates per nanosecond, measured in this run.
    pub reference_flips_per_ns: f64,
    /// flips_per_ns / reference_flips_per_ns.
    pub ratio: f64,
}

/// Times every ensemble row of `cfg`, handing each to `report` as soon as
/// it is measured.
pub fn run_ensemble_bench<E: From<crate::BenchError>>(
    cfg: &EnsembleBenchConfig,
    mut report: impl FnMut(&EnsembleRow) -> std::result::Result<(), E>,
) -> std::result::Result<(), E> {
    for &q in &cfg.qs {
        if let Some(gpu) = &cfg.gpu {
            for ((l, n), single) in [(cfg.small, cfg.small.0), (cfg.large, cfg.single)] {
                let alone = square(q, single)?;
                let mut backend = CudaBackend::new(gpu.clone(), &alone).map_err(crate::BenchError::from)?;
                let reference = time_backend(&mut backend, "single", 0.0, &alone, cfg.seconds)?;
                drop(backend);
                let model = square(q, l)?;
                let ens = CudaEnsemble::new(gpu.clone(), &model, n).map_err(crate::BenchError::from)?;
                let label = format!("cuda-ensemble-{}", ens.kernel_name());
                let row = time_ensemble(Box::new(ens), &label, &model, cfg.seconds)?;
                report(&row.beside(&format!("cuda-backend {single}²"), reference.flips_per_ns))?;
            }
        }
        if cfg.cpu {
            let (l, n) = cfg.small;
            let model = square(q, l)?;
            let reference = time_backend(&mut CpuBackend::new(&model), "single", 0.0, &model, cfg.seconds)?;
            let ens = CpuEnsemble::new(&model, n).map_err(crate::BenchError::from)?;
            let row = time_ensemble(Box::new(ens), "cpu-ensemble", &model, cfg.seconds)?;
            report(&row.beside(&format!("cpu-backend {l}²"), reference.flips_per_ns))?;
        }
    }
    Ok(())
}

impl EnsembleRow {
    fn beside(mut self, reference: &str, flips_per_ns: f64) -> Self {
        self.reference = reference.into();
        self.reference_flips_per_ns = flips_per_ns;
        self.ratio = self.flips_per_ns / flips_per_ns;
        self
    }
}

fn square(q: u32, l: usize) -> Result<PottsModel> {
    Ok(PottsModel::new(q, l, l)?)
}

/// Times the members of `ens` (made for `model`): member i at a temperature within ±5 % of the transition, from a random
/// start, on its own chain.
fn time_ensemble(
    mut ens: Box<dyn Ensemble>,
    kernel: &str,
    model: &PottsModel,
    target_seconds: f64,
) -> Result<EnsembleRow> {
    let members = ens.len();
    let tc = bench_temperature(model.q());
    let chains: Vec<Chain> = (0..members).map(|i| Chain::new(1, i as u32, 0)).collect();
    for (i, c) in chains.iter().enumerate() {
        ens.load(i, &Lattice::new(model, InitialState::Random, c.seed, c.stream))?;
        let t = tc * (0.95 + 0.1 * i as f64 / members as f64);
        ens.set_table(i, &AcceptanceTable::metropolis(model, t))?;
    }
    let mut next = 0u64;
    let mut run = |ens: &mut Box<dyn Ensemble>, count: u64| -> Result<()> {
        ens.sweeps(&chains, next, count)?;
        next += count;
        Ok(ens.synchronize()?)
    };
    let t0 = Instant::now();
    run(&mut ens, 2)?;
    let per_sweep = t0.elapsed().as_secs_f64() / 2.0;
    let sweeps = ((target_seconds / per_sweep.max(1e-9)) as u64).clamp(2, 1 << 20);
    let t1 = Instant::now();
    run(&mut ens, sweeps)?;
    let seconds = t1.elapsed().as_secs_f64();
    let updates = sweeps as f64 * model.sites() as f64 * members as f64;
    Ok(EnsembleRow {
        kernel: kernel.into(),
        q: model.q(),
        size: model.width(),
        members,
        sweeps,
        seconds,
        flips_per_ns: updates / (seconds * 1e9),
        reference: String::new(),
        reference_flips_per_ns: f64::NAN,
        ratio: f64::NAN,
    })
}
