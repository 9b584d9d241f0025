//! Backends run the algorithm on a lattice they hold: the CPU backend on the
//! host's cores, the CUDA backend on a GPU. Both keep the lattice split by
//! colour (see [`layout`](crate::layout)) and give bit-identical states for
//! the same seed, chain and sweep numbers.

use warpmc_gpu::Device;

use crate::algorithm::AcceptanceTable;
use crate::cpu::CpuBackend;
use crate::error::{PottsError, Result};
use crate::lattice::{Census, Lattice};
use crate::model::PottsModel;
use crate::update::{Algorithm, Update};

/// The Metropolis backend for `model` on `device` (see [`crate::select`]):
/// the CPU backend, or the CUDA backend with the fastest kernel for the
/// model.
pub fn open_backend(device: &Device, model: &PottsModel) -> Result<Box<dyn Backend>> {
    open_backend_for(device, model, Algorithm::Metropolis)
}

/// The backend for `model` running `algorithm` on `device`. Wolff's single
/// clusters run on the CPU whatever the device (the backend's
/// [`name`](Backend::name) says "cpu").
pub fn open_backend_for(device: &Device, model: &PottsModel, algorithm: Algorithm) -> Result<Box<dyn Backend>> {
    model.check_host_memory(0)?;
    algorithm.check(model)?;
    match (device, algorithm) {
        // (Without the cuda feature every device is the CPU.)
        #[allow(unreachable_patterns)]
        (Device::Cpu { .. }, _) | (_, Algorithm::Wolff) => Ok(Box::new(CpuBackend::for_algorithm(model, algorithm)?)),
        #[cfg(feature = "cuda")]
        (Device::Cuda(gpu), Algorithm::Metropolis) => Ok(Box::new(crate::cuda::CudaBackend::new(gpu.clone(), model)?)),
        #[cfg(feature = "cuda")]
        (Device::Cuda(gpu), Algorithm::HeatBath) => {
            Ok(Box::new(crate::cuda::CudaBackend::for_algorithm(gpu.clone(), model, algorithm)?))
        }
        #[cfg(feature = "cuda")]
        (Device::Cuda(gpu), Algorithm::SwendsenWang) => {
            Ok(Box::new(crate::cuda_cluster::SwendsenWangBackend::new(gpu.clone(), model)?))
        }
        // A GPU from a warpmc-gpu built with CUDA for another crate, while
        // this one was built without its `cuda` feature.
        #[allow(unreachable_patterns)]
        _ => Err(PottsError::Gpu(warpmc_gpu::GpuError::NoDevice(
            "warpmc-potts was built without its cuda feature".into(),
        ))),
    }
}

/// A lattice held by a backend, and the operations a protocol needs.
///
/// Most code reaches a backend through [`Simulation`](crate::Simulation);
/// the trait is public for code that picks a backend or kernel itself.
pub trait Backend {
    /// "cpu" or "cuda".
    fn name(&self) -> &'static str;
    /// One line describing where it runs (CPU threads, GPU name).
    fn description(&self) -> String;
    /// Replaces the held lattice (its size and q must match the model the
    /// backend was made for).
    fn load(&mut self, lattice: &Lattice) -> Result<()>;
    /// A copy of the held lattice.
    fn lattice(&mut self) -> Result<Lattice>;
    /// Sets the Metropolis acceptance table used by the following sweeps.
    fn set_table(&mut self, table: &AcceptanceTable) -> Result<()>;
    /// Sets the algorithm and tables of the following sweeps. A backend
    /// runs the algorithms it was opened for ([`open_backend_for`]); by
    /// default only Metropolis.
    fn set_update(&mut self, update: &Update) -> Result<()> {
        match update {
            Update::Metropolis(table) => self.set_table(table),
            other => Err(PottsError::InvalidInput(format!(
                "this {} backend runs only the metropolis algorithm, not {}",
                self.name(),
                other.algorithm()
            ))),
        }
    }
    /// Runs sweeps `first`, `first + 1`, …, `first + count − 1` of the chain
    /// whose random numbers come from (`seed`, `stream`) (a sweep of each
    /// algorithm: [`crate::update`]). Sweeps beyond
    /// [`MAX_SWEEPS_PER_CHAIN`](crate::algorithm::MAX_SWEEPS_PER_CHAIN) are
    /// refused ([`check_sweep_range`]).
    fn sweeps(&mut self, seed: u64, stream: u64, first: u64, count: u64) -> Result<()>;
    /// Counts equal bonds and states of the held lattice (on the device for
    /// CUDA: only q + 1 integers come back).
    fn census(&mut self) -> Result<Census>;
    /// Waits for queued work (for timing).
    fn synchronize(&mut self) -> Result<()>;
}

/// Refuses sweeps `first` … `first + count − 1` where they go beyond
/// [`MAX_SWEEPS_PER_CHAIN`](crate::algorithm::MAX_SWEEPS_PER_CHAIN) (the
/// random numbers of a sweep are keyed by its number in 31 bits).
pub fn check_sweep_range(first: u64, count: u64) -> Result<()> {
    use crate::algorithm::MAX_SWEEPS_PER_CHAIN;
    if first.checked_add(count).is_none_or(|end| end > MAX_SWEEPS_PER_CHAIN) {
        return Err(PottsError::InvalidInput(format!(
            "sweeps {first} to {first} + {count} go beyond the {MAX_SWEEPS_PER_CHAIN} sweeps a chain may run"
        )));
    }
    Ok(())
}
