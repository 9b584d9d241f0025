//! The CPU ensemble: every member is a [`CpuBackend`], and the members of a
//! call are spread over rayon's pool, so a run of many small lattices keeps
//! every core busy (a lone small lattice is updated on one thread). Each
//! member runs the CPU backend's own update, so its bits are those of the
//! same chain run alone.

use rayon::prelude::*;

use crate::algorithm::AcceptanceTable;
use crate::backend::Backend;
use crate::cpu::CpuBackend;
use crate::ensemble::{Ensemble, check_chains, check_member, check_tables};
use crate::error::Result;
use crate::lattice::{Census, Lattice};
use crate::model::PottsModel;
use crate::simulation::Chain;
use crate::update::{Algorithm, Update};

/// What a member holds besides its lattice, in bytes, as an upper bound:
/// the backend itself (under 1 KiB), its tables and small buffers. With
/// it, an ensemble of millions of tiny lattices is refused up front
/// instead of by the allocator, which would abort the process.
const MEMBER_BYTES: u64 = 4096;

/// Many lattices of one model on the host's cores.
#[derive(Debug)]
pub struct CpuEnsemble {
    members: Vec<CpuBackend>,
    /// Which members have been given a table.
    table_set: Vec<bool>,
}

impl CpuEnsemble {
    /// `members` lattices of `model`, each in the ordered state until
    /// [`Ensemble::load`]; sweeps are refused until every member has a
    /// table ([`Ensemble::set_table`]).
    pub fn new(model: &PottsModel, members: usize) -> Result<Self> {
        Self::for_algorithm(model, Algorithm::Metropolis, members)
    }

    /// An error unless `members` lattices of `model` fit in the host memory
    /// the process may still allocate; nothing is allocated.
    pub fn check_host_memory(model: &PottsModel, members: usize) -> Result<()> {
        model.check_host_memory(0)?;
        let total = (model.sites() as u64 + MEMBER_BYTES).saturating_mul(members as u64);
        warpmc_host::check_allocation(&format!("{members} lattices of {} sites", model.sites()), total)
            .map_err(crate::error::PottsError::OutOfHostMemory)
    }

    /// `members` lattices of `model` running `algorithm` (each a
    /// [`CpuBackend::for_algorithm`]); sweeps are refused until every
    /// member has its [`Update`] ([`Ensemble::set_update`]).
    pub fn for_algorithm(model: &PottsModel, algorithm: Algorithm, members: usize) -> Result<Self> {
        Self::check_host_memory(model, members)?;
        Ok(CpuEnsemble {
            members: (0..members).map(|_| CpuBackend::for_algorithm(model, algorithm)).collect::<Result<_>>()?,
            table_set: vec![false; members],
        })
    }
}

impl Ensemble for CpuEnsemble {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn description(&self) -> String {
        match self.members.first() {
            Some(b) => format!("{} lattices side by side on {}", self.members.len(), b.description()),
            None => "no lattices".into(),
        }
    }

    fn len(&self) -> usize {
        self.members.len()
    }

    fn load(&mut self, index: usize, lattice: &Lattice) -> Result<()> {
        check_member(self.members.len(), index)?;
        self.members[index].load(lattice)
    }

    fn lattice(&mut self, index: usize) -> Result<Lattice> {
        check_member(self.members.len(), index)?;
        self.members[index].lattice()
    }

    fn set_table(&mut self, index: usize, table: &AcceptanceTable) -> Result<()> {
        check_member(self.members.len(), index)?;
        self.members[index].set_table(table)?;
        self.table_set[index] = true;
        Ok(())
    }

    fn set_update(&mut self, index: usize, update: &Update) -> Result<()> {
        check_member(self.members.len(), index)?;
        self.members[index].set_update(update)?;
        self.table_set[index] = true;
        Ok(())
    }

    fn sweeps(&mut self, chains: &[Chain], first: u64, count: u64) -> Result<()> {
        crate::backend::check_sweep_range(first, count)?;
        check_chains(self.members.len(), chains)?;
        check_tables(&self.table_set)?;
        // One member per task: a member's own update decides whether it
        // splits further (large lattices do, small ones run on one thread).
        self.members
            .par_iter_mut()
            .with_max_len(1)
            .zip(chains.par_iter())
            .try_for_each(|(m, c)| m.sweeps(c.seed, c.stream, first, count))
    }

    fn census(&mut self) -> Result<Vec<Census>> {
        self.members.par_iter_mut().with_max_len(1).map(|m| m.census()).collect()
    }

    fn synchronize(&mut self) -> Result<()> {
        Ok(())
    }
}
