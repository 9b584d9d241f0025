//! Where a run's ensembles go: strips or dealt out.

use std::rc::Rc;

use mpi::topology::SimpleCommunicator;
use warpmc_gpu::Device;
use warpmc_potts::{Algorithm, Ensemble, EnsembleOpener, PottsError, PottsModel};

use crate::launch::{Decompose, HaloTransport};
use crate::processes::{FailureNotice, Processes};
use crate::spread::SpreadEnsemble;
use crate::strips::StripEnsemble;

/// Opens a [`Runner`](warpmc_potts::Runner)'s ensembles across the
/// processes: [`StripEnsemble`] or [`SpreadEnsemble`] as the
/// [`Decompose`] choice says. `auto` cuts a lone lattice into strips unless
/// every process has a GPU (and the halo transport is not NCCL), and deals
/// out the lattices otherwise (a lone lattice then runs whole on the first
/// process's GPU). Each process runs
/// its strips on its own device, CPU or GPU.
pub struct MpiOpener {
    comm: Rc<SimpleCommunicator>,
    device: Device,
    decompose: Decompose,
    halo: HaloTransport,
    all_gpus: bool,
    notice: FailureNotice,
}

impl std::fmt::Debug for MpiOpener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MpiOpener").field("device", &self.device.name()).field("decompose", &self.decompose).finish()
    }
}

impl MpiOpener {
    /// An opener for `processes`, this process running its lattices on
    /// `device`. Every process must call it (it asks whether every process
    /// has a GPU, so that all decide alike).
    pub fn new(processes: &Processes, device: Device, decompose: Decompose) -> warpmc_potts::Result<Self> {
        let gpu_here = device.name() == "cuda";
        let all_gpus = processes.first_failure(gpu_here).is_none();
        let notice = FailureNotice::default();
        Ok(MpiOpener {
            comm: Rc::new(processes.communicator()),
            device,
            decompose,
            halo: HaloTransport::Mpi,
            all_gpus,
            notice,
        })
    }

    /// Where the ensembles this opener deals out record a process's failure
    /// once every process knows of it (lattices cut into strips end every
    /// process instead: their neighbours would wait for the failed strip).
    pub fn reporting_to(mut self, notice: FailureNotice) -> Self {
        self.notice = notice;
        self
    }

    /// How strips trade their edge rows (through MPI unless set).
    pub fn with_halo(mut self, halo: HaloTransport) -> Self {
        self.halo = halo;
        self
    }

    /// Whether an ensemble of `members` lattices is cut into strips.
    pub fn strips(&self, members: usize) -> bool {
        match self.decompose {
            Decompose::Strips => true,
            Decompose::Ensemble => false,
            Decompose::Auto => members == 1 && (!self.all_gpus || self.halo == HaloTransport::Nccl),
        }
    }
}

impl EnsembleOpener for MpiOpener {
    fn open(
        &mut self,
        model: &PottsModel,
        algorithm: Algorithm,
        members: usize,
    ) -> warpmc_potts::Result<Box<dyn Ensemble>> {
        // `auto` deals out lone lattices of the algorithms strips lack.
        let strips = self.strips(members) && (self.decompose != Decompose::Auto || algorithm == Algorithm::Metropolis);
        if strips {
            // Strips trade halo rows between the colour halves of a
            // checkerboard sweep; cluster updates and heat-bath have no
            // strip form yet.
            if algorithm != Algorithm::Metropolis {
                return Err(PottsError::InvalidInput(format!(
                    "a lattice cut into strips runs metropolis only, not {algorithm}: run {algorithm} with \
                     --decompose ensemble (whole lattices dealt out to the processes)"
                )));
            }
            Ok(Box::new(StripEnsemble::new(self.comm.clone(), &self.device, model, members, self.halo)?))
        } else {
            let spread = SpreadEnsemble::new(self.comm.clone(), &self.device, model, algorithm, members)?;
            Ok(Box::new(spread.reporting_to(self.notice.clone())))
        }
    }
}
