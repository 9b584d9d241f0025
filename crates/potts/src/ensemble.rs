//! Ensembles: many independent lattices of one model, advanced together.
//!
//! A finite-size-scaling study runs dozens of temperatures and samples of
//! small lattices. One lattice at a time leaves a GPU idle (a 64² lattice is
//! 2,048 sites per colour) and a many-core CPU mostly idle too. An
//! [`Ensemble`] holds every lattice of a run and advances all of them in
//! the same calls.
//!
//! Each member has its own chain of random numbers ([`Chain`]) and its own
//! acceptance table, and all members stand at the same sweep number. A
//! member's random numbers are those of [`algorithm`](crate::algorithm) or
//! [`sliced`](crate::sliced) for its (seed, stream, sweep, colour, site), so
//! a member ends in the same bits as the same chain run alone on a
//! [`Backend`]: the ensemble changes how the work is scheduled, never what
//! is computed.

use warpmc_gpu::Device;

use crate::algorithm::AcceptanceTable;
use crate::backend::{Backend, open_backend_for};
use crate::error::{PottsError, Result};
use crate::lattice::{Census, Lattice};
use crate::model::PottsModel;
use crate::simulation::Chain;
use crate::update::{Algorithm, Update};

/// The fastest Metropolis ensemble of `members` lattices of `model` on
/// `device`: the CPU ensemble
/// ([`CpuEnsemble`](crate::cpu_ensemble::CpuEnsemble)), or on a GPU the
/// CUDA ensemble, whose launches advance every member together. A single
/// member runs on the plain backend (with its fastest kernel for one
/// lattice). Every member starts in the ordered state; set every member's
/// table before the first sweeps.
pub fn open_ensemble(device: &Device, model: &PottsModel, members: usize) -> Result<Box<dyn Ensemble>> {
    open_ensemble_for(device, model, Algorithm::Metropolis, members)
}

/// The fastest ensemble of `members` lattices of `model` running
/// `algorithm` on `device`: the CPU ensemble for every algorithm on the
/// CPU (and for Wolff anywhere: it runs on the CPU); on a GPU the CUDA
/// ensemble for Metropolis and heat-bath, and one backend per member
/// ([`Independent`]) for Swendsen–Wang, which has no many-lattice kernel.
/// Every member starts in the ordered state; give every member its
/// [`Update`] before the first sweeps.
pub fn open_ensemble_for(
    device: &Device,
    model: &PottsModel,
    algorithm: Algorithm,
    members: usize,
) -> Result<Box<dyn Ensemble>> {
    if members == 0 {
        return Err(PottsError::InvalidInput("an ensemble needs at least one lattice".into()));
    }
    algorithm.check(model)?;
    if members == 1 {
        return Ok(Box::new(Independent::new(vec![open_backend_for(device, model, algorithm)?])));
    }
    match (device, algorithm) {
        // (Without the cuda feature every device is the CPU.)
        #[allow(unreachable_patterns)]
        (Device::Cpu { .. }, _) | (_, Algorithm::Wolff) => {
            Ok(Box::new(crate::cpu_ensemble::CpuEnsemble::for_algorithm(model, algorithm, members)?))
        }
        #[cfg(feature = "cuda")]
        (Device::Cuda(gpu), Algorithm::Metropolis | Algorithm::HeatBath) => {
            Ok(Box::new(crate::cuda_ensemble::CudaEnsemble::running(
                gpu.clone(),
                model,
                members,
                algorithm,
                crate::cuda_ensemble::EnsembleLayout::Auto,
            )?))
        }
        #[cfg(feature = "cuda")]
        (Device::Cuda(_), _) => {
            model.check_host_memory(0)?;
            let backends = (0..members).map(|_| open_backend_for(device, model, algorithm)).collect::<Result<_>>()?;
            Ok(Box::new(Independent::new(backends)))
        }
        #[allow(unreachable_patterns)]
        _ => Err(PottsError::Gpu(warpmc_gpu::GpuError::NoDevice(
            "warpmc-potts was built without its cuda feature".into(),
        ))),
    }
}

/// Where a [`Runner`](crate::Runner) gets its ensembles: a [`Device`]
/// opens them with [`open_ensemble_for`]; other openers place the lattices
/// elsewhere (split across processes, for instance) under the same
/// contract, every member in the bits it would reach alone.
pub trait EnsembleOpener {
    /// An ensemble of `members` lattices of `model` running `algorithm`,
    /// each in the ordered state until loaded.
    fn open(&mut self, model: &PottsModel, algorithm: Algorithm, members: usize) -> Result<Box<dyn Ensemble>>;

    /// Most sites the lattices of one group of chains hold together (a
    /// group's lattices are held on the host at checkpoints, one byte per
    /// site). The runner looks at its observer only between stretches of
    /// the whole group, so a group's first sweep should take a fraction of
    /// a second.
    fn group_sites(&self) -> u64 {
        GPU_GROUP_SITES
    }
}

/// [`EnsembleOpener::group_sites`] on a GPU: 2^28 sites fill a GPU with
/// small lattices, and take it a few tenths of a second a sweep.
pub const GPU_GROUP_SITES: u64 = 1 << 28;

/// [`EnsembleOpener::group_sites`] on the host's cores, which sweep 2^24
/// sites in about a tenth of a second.
pub const CPU_GROUP_SITES: u64 = 1 << 24;

impl EnsembleOpener for Device {
    fn open(&mut self, model: &PottsModel, algorithm: Algorithm, members: usize) -> Result<Box<dyn Ensemble>> {
        open_ensemble_for(self, model, algorithm, members)
    }

    fn group_sites(&self) -> u64 {
        match self {
            Device::Cpu { .. } => CPU_GROUP_SITES,
            #[allow(unreachable_patterns)]
            _ => GPU_GROUP_SITES,
        }
    }
}

/// Many lattices of one model (q, J, h, size) held by one backend and
/// advanced together.
pub trait Ensemble {
    /// "cpu" or "cuda".
    fn name(&self) -> &'static str;
    /// One line describing where it runs.
    fn description(&self) -> String;
    /// Number of members.
    fn len(&self) -> usize;
    /// Whether the ensemble has no members.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Replaces the lattice of member `index`.
    fn load(&mut self, index: usize, lattice: &Lattice) -> Result<()>;
    /// A copy of the lattice of member `index`.
    fn lattice(&mut self, index: usize) -> Result<Lattice>;
    /// Sets the Metropolis acceptance table member `index` uses from the
    /// next sweep on.
    fn set_table(&mut self, index: usize, table: &AcceptanceTable) -> Result<()>;
    /// Sets the algorithm and tables member `index` uses from the next sweep
    /// on. An ensemble runs the algorithm it was opened for
    /// ([`open_ensemble_for`]); by default only Metropolis.
    fn set_update(&mut self, index: usize, update: &Update) -> Result<()> {
        match update {
            Update::Metropolis(table) => self.set_table(index, table),
            other => Err(PottsError::InvalidInput(format!(
                "this {} ensemble runs only the metropolis algorithm, not {}",
                self.name(),
                other.algorithm()
            ))),
        }
    }
    /// Runs sweeps `first`, …, `first + count − 1` of every member; member
    /// `i` draws its random numbers from `chains[i]` (`chains.len()` equals
    /// [`len`](Ensemble::len)).
    fn sweeps(&mut self, chains: &[Chain], first: u64, count: u64) -> Result<()>;
    /// The census of every member, in member order.
    fn census(&mut self) -> Result<Vec<Census>>;
    /// Waits for queued work (for timing).
    fn synchronize(&mut self) -> Result<()>;
    /// The seconds a stretch of work took, as every process holding part of
    /// this ensemble counts them, given this process's `local` count. A
    /// runner sizes its next stretch by them, so processes that share an
    /// ensemble must get the same number (the slowest one's); an ensemble
    /// in one process returns `local`.
    fn agreed_seconds(&mut self, local: f64) -> Result<f64> {
        Ok(local)
    }
}

/// The reference ensemble: one [`Backend`] per member, run one after the
/// other. It defines what every faster ensemble must reproduce bit for bit.
pub struct Independent {
    members: Vec<Box<dyn Backend>>,
}

impl std::fmt::Debug for Independent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Independent").field("members", &self.members.len()).finish()
    }
}

impl Independent {
    /// An ensemble of the given backends (all made for the same model).
    pub fn new(members: Vec<Box<dyn Backend>>) -> Self {
        Independent { members }
    }

    fn member(&mut self, index: usize) -> Result<&mut Box<dyn Backend>> {
        check_member(self.members.len(), index)?;
        Ok(&mut self.members[index])
    }
}

impl Ensemble for Independent {
    fn name(&self) -> &'static str {
        self.members.first().map_or("cpu", |b| b.name())
    }

    fn description(&self) -> String {
        match (self.members.first(), self.members.len()) {
            (Some(b), 1) => b.description(),
            (Some(b), n) => format!("{n} lattices, one at a time on {}", b.description()),
            (None, _) => "no lattices".into(),
        }
    }

    fn len(&self) -> usize {
        self.members.len()
    }

    fn load(&mut self, index: usize, lattice: &Lattice) -> Result<()> {
        self.member(index)?.load(lattice)
    }

    fn lattice(&mut self, index: usize) -> Result<Lattice> {
        self.member(index)?.lattice()
    }

    fn set_table(&mut self, index: usize, table: &AcceptanceTable) -> Result<()> {
        self.member(index)?.set_table(table)
    }

    fn set_update(&mut self, index: usize, update: &Update) -> Result<()> {
        self.member(index)?.set_update(update)
    }

    fn sweeps(&mut self, chains: &[Chain], first: u64, count: u64) -> Result<()> {
        check_chains(self.members.len(), chains)?;
        for (backend, chain) in self.members.iter_mut().zip(chains) {
            backend.sweeps(chain.seed, chain.stream, first, count)?;
        }
        Ok(())
    }

    fn census(&mut self) -> Result<Vec<Census>> {
        self.members.iter_mut().map(|b| b.census()).collect()
    }

    fn synchronize(&mut self) -> Result<()> {
        self.members.iter_mut().try_for_each(|b| b.synchronize())
    }
}

/// Checks that an ensemble of `len` members got one chain per member.
pub fn check_chains(len: usize, chains: &[Chain]) -> Result<()> {
    if chains.len() == len {
        Ok(())
    } else {
        Err(PottsError::InvalidInput(format!("an ensemble of {len} lattices was given {} chains", chains.len())))
    }
}

/// Checks that member `index` exists in an ensemble of `len` members.
pub fn check_member(len: usize, index: usize) -> Result<()> {
    if index < len {
        Ok(())
    } else {
        Err(PottsError::InvalidInput(format!("ensemble member {index} does not exist (there are {len})")))
    }
}

/// Checks that every member has been given an acceptance table.
pub fn check_tables(set: &[bool]) -> Result<()> {
    match set.iter().position(|s| !s) {
        None => Ok(()),
        Some(i) => Err(PottsError::InvalidInput(format!("ensemble member {i} has no acceptance table yet"))),
    }
}
