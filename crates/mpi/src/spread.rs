//! An ensemble's lattices dealt out to the processes.

use std::ops::Range;
use std::rc::Rc;

use mpi::Count;
use mpi::datatype::PartitionMut;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use warpmc_gpu::Device;
use warpmc_potts::ensemble::{check_chains, check_member};
use warpmc_potts::{
    AcceptanceTable, Algorithm, Census, Chain, Ensemble, Lattice, PottsError, PottsModel, Update, open_ensemble_for,
};

use crate::processes::{all_max, broadcast_pieces};

/// The members each of `size` processes holds when `members` lattices are
/// dealt out: consecutive runs, the first processes taking one more where
/// the division is not even, so the first process always holds one.
pub(crate) fn deal(members: usize, size: usize) -> Vec<Range<usize>> {
    let (base, extra) = (members / size, members % size);
    (0..size)
        .map(|r| {
            let start = r * base + r.min(extra);
            start..start + base + usize::from(r < extra)
        })
        .collect()
}

/// The members of an ensemble dealt out to the processes, each process
/// running its share on its own device ([`open_ensemble_for`]: the CPU
/// ensemble, or its GPU's). Every process holds the whole ensemble's
/// bookkeeping and makes every call; a member's lattice moves only when it
/// is asked for ([`Ensemble::lattice`]: its holder broadcasts it) and its
/// census reaches every process ([`Ensemble::census`]: an all-gather), so
/// tempering decisions and measurements are made alike everywhere.
pub struct SpreadEnsemble {
    comm: Rc<SimpleCommunicator>,
    /// Members held by each process.
    shares: Vec<Range<usize>>,
    rank: usize,
    mine: Option<Box<dyn Ensemble>>,
    model: PottsModel,
}

impl std::fmt::Debug for SpreadEnsemble {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpreadEnsemble").field("shares", &self.shares).field("rank", &self.rank).finish()
    }
}

impl SpreadEnsemble {
    /// `members` lattices of `model` running `algorithm`, dealt out to the
    /// processes of `comm`; this process opens its share on `device`. Every
    /// process must call it.
    pub fn new(
        comm: Rc<SimpleCommunicator>,
        device: &Device,
        model: &PottsModel,
        algorithm: Algorithm,
        members: usize,
    ) -> warpmc_potts::Result<Self> {
        if members == 0 {
            return Err(PottsError::InvalidInput("an ensemble needs at least one lattice".into()));
        }
        let (rank, size) = (comm.rank() as usize, comm.size() as usize);
        let shares = deal(members, size);
        let mine = match shares[rank].len() {
            0 => None,
            n => Some(open_ensemble_for(device, model, algorithm, n)?),
        };
        Ok(SpreadEnsemble { comm, shares, rank, mine, model: model.clone() })
    }

    /// The process holding member `index`, and the member's place there.
    fn holder(&self, index: usize) -> warpmc_potts::Result<(usize, usize)> {
        check_member(self.len(), index)?;
        let r = self.shares.iter().position(|s| s.contains(&index)).expect("every member is dealt");
        Ok((r, index - self.shares[r].start))
    }

    /// This process's share, when `index` is one of its members.
    fn local(&mut self, index: usize) -> warpmc_potts::Result<Option<(&mut Box<dyn Ensemble>, usize)>> {
        let (r, at) = self.holder(index)?;
        Ok(if r == self.rank { self.mine.as_mut().map(|e| (e, at)) } else { None })
    }
}

impl Ensemble for SpreadEnsemble {
    fn name(&self) -> &'static str {
        self.mine.as_ref().map_or("cpu", |e| e.name())
    }

    fn description(&self) -> String {
        let used = self.shares.iter().filter(|s| !s.is_empty()).count();
        let most = self.shares.iter().map(|s| s.len()).max().unwrap_or(0);
        let here = self.mine.as_ref().map_or_else(|| "none here".to_string(), |e| e.description());
        format!(
            "{} lattices dealt to {used} MPI processes (at most {most} each); process {}: {here}",
            self.len(),
            self.rank
        )
    }

    fn len(&self) -> usize {
        self.shares.last().map_or(0, |s| s.end)
    }

    fn load(&mut self, index: usize, lattice: &Lattice) -> warpmc_potts::Result<()> {
        match self.local(index)? {
            Some((e, at)) => e.load(at, lattice),
            None => Ok(()),
        }
    }

    fn lattice(&mut self, index: usize) -> warpmc_potts::Result<Lattice> {
        let (holder, _) = self.holder(index)?;
        let (w, h, q) = (self.model.width(), self.model.height(), self.model.q());
        let mut spins = match self.local(index)? {
            Some((e, at)) => e.lattice(at)?.spins().to_vec(),
            None => vec![0u8; w * h],
        };
        broadcast_pieces(&self.comm, holder, &mut spins);
        Lattice::from_spins(w, h, q, spins)
            .ok_or_else(|| PottsError::InvalidInput(format!("process {holder} sent a lattice with spins of q or more")))
    }

    fn set_table(&mut self, index: usize, table: &AcceptanceTable) -> warpmc_potts::Result<()> {
        match self.local(index)? {
            Some((e, at)) => e.set_table(at, table),
            None => Ok(()),
        }
    }

    fn set_update(&mut self, index: usize, update: &Update) -> warpmc_potts::Result<()> {
        match self.local(index)? {
            Some((e, at)) => e.set_update(at, update),
            None => Ok(()),
        }
    }

    fn sweeps(&mut self, chains: &[Chain], first: u64, count: u64) -> warpmc_potts::Result<()> {
        check_chains(self.len(), chains)?;
        let share = self.shares[self.rank].clone();
        match &mut self.mine {
            Some(e) => e.sweeps(&chains[share], first, count),
            None => Ok(()),
        }
    }

    fn census(&mut self) -> warpmc_potts::Result<Vec<Census>> {
        // Each member's census as q + 1 integers: equal bonds, then counts.
        let per = self.model.q() as usize + 1;
        let mine: Vec<u64> = match &mut self.mine {
            Some(e) => e
                .census()?
                .iter()
                .flat_map(|c| std::iter::once(c.equal_bonds()).chain(c.counts().iter().copied()))
                .collect(),
            None => Vec::new(),
        };
        let counts: Vec<Count> = self.shares.iter().map(|s| (s.len() * per) as Count).collect();
        let displs: Vec<Count> = self.shares.iter().map(|s| (s.start * per) as Count).collect();
        let mut all = vec![0u64; self.len() * per];
        {
            let mut partition = PartitionMut::new(&mut all[..], counts, &displs[..]);
            self.comm.all_gather_varcount_into(&mine[..], &mut partition);
        }
        Ok(all.chunks_exact(per).map(|c| Census::new(c[0], c[1..].to_vec())).collect())
    }

    fn synchronize(&mut self) -> warpmc_potts::Result<()> {
        match &mut self.mine {
            Some(e) => e.synchronize(),
            None => Ok(()),
        }
    }

    fn agreed_seconds(&mut self, local: f64) -> warpmc_potts::Result<f64> {
        Ok(all_max(&self.comm, local))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_are_dealt_in_runs_the_first_process_never_empty() {
        for size in 1..9 {
            for members in 1..40 {
                let d = deal(members, size);
                assert_eq!(d.len(), size);
                assert_eq!(d[0].start, 0);
                assert!(!d[0].is_empty());
                assert_eq!(d[size - 1].end, members);
                for w in d.windows(2) {
                    assert_eq!(w[0].end, w[1].start);
                    assert!(w[0].len() >= w[1].len() && w[0].len() - w[1].len() <= 1);
                }
            }
        }
    }
}
