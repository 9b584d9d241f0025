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

use crate::processes::{
    FAIL_SWEEPS, FailureNotice, all_max, broadcast_pieces, failed_elsewhere, failing_sweeps_call, lowest_failing,
};

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
///
/// A step that fails on one process (its GPU, say) is held back until the
/// next collective step, where every process learns of it and returns an
/// error together: the run then ends on every process as it ends on one,
/// the first process writing what was measured.
pub struct SpreadEnsemble {
    comm: Rc<SimpleCommunicator>,
    /// Members held by each process.
    shares: Vec<Range<usize>>,
    rank: usize,
    mine: Option<Box<dyn Ensemble>>,
    model: PottsModel,
    /// This process's failure, until the next collective step.
    held: Option<PottsError>,
    notice: FailureNotice,
    /// Calls of `sweeps` so far, and the one from which they fail
    /// ([`FAIL_SWEEPS`]).
    sweeps_calls: u64,
    fail_from: Option<u64>,
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
        let fail_from = failing_sweeps_call(rank);
        Ok(SpreadEnsemble {
            comm,
            shares,
            rank,
            mine,
            model: model.clone(),
            held: None,
            notice: FailureNotice::default(),
            sweeps_calls: 0,
            fail_from,
        })
    }

    /// Records in `notice` which process failed, once every process knows.
    pub fn reporting_to(mut self, notice: FailureNotice) -> Self {
        self.notice = notice;
        self
    }

    /// Holds back the error of a step this process took alone. After one,
    /// its later steps are skipped until the next collective step ends the
    /// run.
    fn hold(&mut self, r: warpmc_potts::Result<()>) {
        if let Err(e) = r
            && self.held.is_none()
        {
            self.held = Some(e);
        }
    }

    /// Every process learns whether any holds a failure back (an
    /// all-reduce); if one does, every process returns an error: the lowest
    /// failing process its own, the others one that names it. Every process
    /// must call it.
    fn settle(&mut self) -> warpmc_potts::Result<()> {
        let Some(failed) = lowest_failing(&self.comm, self.held.is_none()) else { return Ok(()) };
        self.notice.set(failed);
        match self.held.take() {
            Some(e) if failed == self.rank => Err(e),
            _ => Err(PottsError::InvalidInput(failed_elsewhere(failed, self.shares.len()))),
        }
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
        let lattices = match self.len() {
            1 => "1 lattice".to_string(),
            n => format!("{n} lattices"),
        };
        let size = self.shares.len();
        let on = match (used < size, size) {
            (true, _) => format!("{used} of {size} MPI processes, {} with none", size - used),
            (false, 1) => "1 MPI process".to_string(),
            (false, _) => format!("{size} MPI processes"),
        };
        format!("{lattices} dealt to {on} (at most {most} each); process {}: {here}", self.rank)
    }

    fn len(&self) -> usize {
        self.shares.last().map_or(0, |s| s.end)
    }

    fn load(&mut self, index: usize, lattice: &Lattice) -> warpmc_potts::Result<()> {
        if self.held.is_some() {
            return Ok(());
        }
        let r = match self.local(index)? {
            Some((e, at)) => e.load(at, lattice),
            None => Ok(()),
        };
        self.hold(r);
        Ok(())
    }

    fn lattice(&mut self, index: usize) -> warpmc_potts::Result<Lattice> {
        let (holder, _) = self.holder(index)?;
        let (w, h, q) = (self.model.width(), self.model.height(), self.model.q());
        let healthy = self.held.is_none();
        let mine = match self.local(index)? {
            Some((e, at)) if healthy => Some(e.lattice(at)),
            _ => None,
        };
        let mut spins = match mine {
            Some(Ok(l)) => l.spins().to_vec(),
            Some(Err(e)) => {
                self.hold(Err(e));
                Vec::new()
            }
            None => vec![0u8; w * h],
        };
        self.settle()?;
        broadcast_pieces(&self.comm, holder, &mut spins);
        Lattice::from_spins(w, h, q, spins)
            .ok_or_else(|| PottsError::InvalidInput(format!("process {holder} sent a lattice with spins of q or more")))
    }

    fn set_table(&mut self, index: usize, table: &AcceptanceTable) -> warpmc_potts::Result<()> {
        if self.held.is_some() {
            return Ok(());
        }
        let r = match self.local(index)? {
            Some((e, at)) => e.set_table(at, table),
            None => Ok(()),
        };
        self.hold(r);
        Ok(())
    }

    fn set_update(&mut self, index: usize, update: &Update) -> warpmc_potts::Result<()> {
        if self.held.is_some() {
            return Ok(());
        }
        let r = match self.local(index)? {
            Some((e, at)) => e.set_update(at, update),
            None => Ok(()),
        };
        self.hold(r);
        Ok(())
    }

    fn sweeps(&mut self, chains: &[Chain], first: u64, count: u64) -> warpmc_potts::Result<()> {
        check_chains(self.len(), chains)?;
        if self.held.is_some() {
            return Ok(());
        }
        let share = self.shares[self.rank].clone();
        self.sweeps_calls += 1;
        let r = match &mut self.mine {
            Some(_) if self.fail_from.is_some_and(|n| self.sweeps_calls >= n) => {
                Err(PottsError::InvalidInput(format!("failing on purpose ({FAIL_SWEEPS} is set)")))
            }
            Some(e) => e.sweeps(&chains[share], first, count),
            None => Ok(()),
        };
        self.hold(r);
        Ok(())
    }

    fn census(&mut self) -> warpmc_potts::Result<Vec<Census>> {
        // Each member's census as q + 1 integers: equal bonds, then counts.
        let per = self.model.q() as usize + 1;
        let mine = match &mut self.mine {
            Some(e) if self.held.is_none() => e.census(),
            _ => Ok(Vec::new()),
        };
        let mine: Vec<u64> = match mine {
            Ok(censuses) => censuses
                .iter()
                .flat_map(|c| std::iter::once(c.equal_bonds()).chain(c.counts().iter().copied()))
                .collect(),
            Err(e) => {
                self.hold(Err(e));
                Vec::new()
            }
        };
        self.settle()?;
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
        let r = match &mut self.mine {
            Some(e) if self.held.is_none() => e.synchronize(),
            _ => Ok(()),
        };
        self.hold(r);
        Ok(())
    }

    fn agreed_seconds(&mut self, local: f64) -> warpmc_potts::Result<f64> {
        self.settle()?;
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
