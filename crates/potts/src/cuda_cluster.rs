//! Swendsen–Wang on a CUDA device behind the [`Backend`] trait, so that
//! simulations, ensembles (one backend per member), runners and tempering
//! run it like any other algorithm. The sweeps are
//! [`CudaSwendsenWang`]'s, bit-identical with the CPU reference.

use warpmc_gpu::Gpu;

use crate::algorithm::AcceptanceTable;
use crate::backend::Backend;
use crate::cuda_sw::CudaSwendsenWang;
use crate::error::{PottsError, Result};
use crate::lattice::{Census, Lattice};
use crate::model::PottsModel;
use crate::update::{Algorithm, Update};

/// A lattice on a CUDA device updated by Swendsen–Wang.
#[derive(Debug)]
pub struct SwendsenWangBackend {
    inner: CudaSwendsenWang,
    width: usize,
    height: usize,
    q: u32,
    /// The bond threshold of the current temperature, once set.
    threshold: Option<u32>,
}

impl SwendsenWangBackend {
    /// A backend for `model` (J > 0, no field) on `gpu`, holding the
    /// ordered state.
    pub fn new(gpu: Gpu, model: &PottsModel) -> Result<Self> {
        Algorithm::SwendsenWang.check(model)?;
        Ok(SwendsenWangBackend {
            inner: CudaSwendsenWang::new(gpu, model)?,
            width: model.width(),
            height: model.height(),
            q: model.q(),
            threshold: None,
        })
    }
}

impl Backend for SwendsenWangBackend {
    fn name(&self) -> &'static str {
        "cuda"
    }

    fn description(&self) -> String {
        self.inner.description()
    }

    fn load(&mut self, lattice: &Lattice) -> Result<()> {
        if (lattice.width(), lattice.height(), lattice.q()) != (self.width, self.height, self.q) {
            return Err(PottsError::InvalidInput("lattice does not match the backend's model".into()));
        }
        self.inner.load(lattice)
    }

    fn lattice(&mut self) -> Result<Lattice> {
        self.inner.lattice()
    }

    fn set_table(&mut self, _table: &AcceptanceTable) -> Result<()> {
        Err(PottsError::InvalidInput("a Swendsen–Wang backend does not run metropolis".into()))
    }

    fn set_update(&mut self, update: &Update) -> Result<()> {
        match update {
            Update::SwendsenWang { bond_threshold } => {
                self.threshold = Some(*bond_threshold);
                Ok(())
            }
            other => {
                Err(PottsError::InvalidInput(format!("a Swendsen–Wang backend does not run {}", other.algorithm())))
            }
        }
    }

    fn sweeps(&mut self, seed: u64, stream: u64, first: u64, count: u64) -> Result<()> {
        crate::backend::check_sweep_range(first, count)?;
        let threshold = self.threshold.ok_or_else(|| {
            PottsError::InvalidInput("the Swendsen–Wang backend has no temperature yet (set_update)".into())
        })?;
        self.inner.sweeps(threshold, seed, stream, first, count)
    }

    fn census(&mut self) -> Result<Census> {
        self.inner.census()
    }

    fn synchronize(&mut self) -> Result<()> {
        self.inner.synchronize()
    }
}
