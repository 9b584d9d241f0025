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

/// The backend for `model` on `device` (see [`crate::select`]): the CPU
/// backend, or the CUDA backend with the fastest kernel for the model.
pub fn open_backend(device: &Device, model: &PottsModel) -> Result<Box<dyn Backend>> {
    model.check_host_memory(0)?;
    match device {
        Device::Cpu { .. } => Ok(Box::new(CpuBackend::new(model))),
        #[cfg(feature = "cuda")]
        Device::Cuda(gpu) => Ok(Box::new(crate::cuda::CudaBackend::new(gpu.clone(), model)?)),
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
    /// Sets the acceptance table used by the following sweeps.
    fn set_table(&mut self, table: &AcceptanceTable) -> Result<()>;
    /// Runs sweeps `first`, `first + 1`, …, `first + count − 1` of the chain
    /// whose random numbers come from (`seed`, `stream`).
    fn sweeps(&mut self, seed: u64, stream: u64, first: u64, count: u64) -> Result<()>;
    /// Counts equal bonds and states of the held lattice (on the device for
    /// CUDA: only q + 1 integers come back).
    fn census(&mut self) -> Result<Census>;
    /// Waits for queued work (for timing).
    fn synchronize(&mut self) -> Result<()>;
}
