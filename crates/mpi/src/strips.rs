//! Lattices cut into strips, one strip per process.

use std::rc::Rc;

use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use warpmc_gpu::Device;
use warpmc_potts::ensemble::{check_chains, check_member};
use warpmc_potts::strip::{Halo, HaloExchange, Strip, open_strip, strip_rows};
use warpmc_potts::{AcceptanceTable, Census, Chain, Ensemble, Lattice, PottsError, PottsModel};

use crate::launch::HaloTransport;
use crate::processes::{FAIL_SWEEPS, all_max, broadcast_pieces, failing_sweeps_call, lowest_failing};

/// Tag of a strip's first row (the strip above keeps it as its lower halo).
const FIRST_ROW: i32 = 1;
/// Tag of a strip's last row (the strip below keeps it as its upper halo).
const LAST_ROW: i32 = 2;

/// Halo rows between neighbouring processes, sent and received without
/// blocking while the strip's interior is updated.
struct Neighbours<'a> {
    comm: &'a SimpleCommunicator,
    up: i32,
    down: i32,
}

impl HaloExchange for Neighbours<'_> {
    fn exchange(&mut self, halo: Halo<'_>, interior: &mut dyn FnMut()) -> warpmc_potts::Result<()> {
        let (up, down) = (self.comm.process_at_rank(self.up), self.comm.process_at_rank(self.down));
        mpi::request::scope(|scope| {
            // Two strips are each other's upper and lower neighbours, and a
            // lone strip its own: the tags say which row is which.
            let from_up = up.immediate_receive_into_with_tag(scope, halo.from_up, LAST_ROW);
            let from_down = down.immediate_receive_into_with_tag(scope, halo.from_down, FIRST_ROW);
            let to_up = up.immediate_send_with_tag(scope, halo.send_up, FIRST_ROW);
            let to_down = down.immediate_send_with_tag(scope, halo.send_down, LAST_ROW);
            interior();
            from_up.wait();
            from_down.wait();
            to_up.wait();
            to_down.wait();
        });
        Ok(())
    }
}

/// An ensemble whose every member is cut into horizontal strips, process r
/// holding strip r ([`strip_rows`]: whole random-number row-blocks, so the
/// bits are those of the whole lattice on one process). A lattice of fewer
/// row-blocks than processes is cut into one strip per row-block and the
/// remaining processes hold nothing of it. Members are advanced one after
/// another, all processes together. Each process runs its strips on its
/// own device, the CPU or its GPU ([`open_strip`]); strips on either give
/// the same bits, so processes of one run may mix them.
pub struct StripEnsemble {
    comm: Rc<SimpleCommunicator>,
    model: PottsModel,
    members: usize,
    /// Strips of each member (the same for all), in process order.
    strips: usize,
    rank: usize,
    /// This process's strip of each member (none past the last strip).
    mine: Held,
    /// Calls of `sweeps` so far ([`FAIL_SWEEPS`]).
    sweeps_calls: u64,
}

/// This process's strips, and how they trade edge rows.
enum Held {
    /// On the CPU or a GPU, edge rows through host memory and MPI.
    Host(Vec<Box<dyn Strip>>),
    /// On this process's own GPU, edge rows and census through NCCL (every
    /// process holds a strip; NCCL rank = MPI rank).
    #[cfg(feature = "cuda")]
    Nccl { strips: Vec<warpmc_potts::CudaStripBackend>, comm: warpmc_gpu::nccl::Communicator },
}

impl Held {
    fn get_mut(&mut self, i: usize) -> Option<&mut dyn Strip> {
        match self {
            Held::Host(v) => v.get_mut(i).map(|s| &mut **s as &mut dyn Strip),
            #[cfg(feature = "cuda")]
            Held::Nccl { strips, .. } => strips.get_mut(i).map(|s| s as &mut dyn Strip),
        }
    }

    fn first(&self) -> Option<&dyn Strip> {
        match self {
            Held::Host(v) => v.first().map(|s| &**s),
            #[cfg(feature = "cuda")]
            Held::Nccl { strips, .. } => strips.first().map(|s| s as &dyn Strip),
        }
    }

    fn len(&self) -> usize {
        match self {
            Held::Host(v) => v.len(),
            #[cfg(feature = "cuda")]
            Held::Nccl { strips, .. } => strips.len(),
        }
    }
}

impl std::fmt::Debug for StripEnsemble {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StripEnsemble")
            .field("members", &self.members)
            .field("strips", &self.strips)
            .field("rank", &self.rank)
            .finish()
    }
}

impl StripEnsemble {
    /// `members` lattices of `model`, each cut into one strip per process of
    /// `comm` (or per row-block, when there are fewer), this process's
    /// strips on `device`, their edge rows traded as `transport` says.
    /// Every process must call it.
    pub fn new(
        comm: Rc<SimpleCommunicator>,
        device: &Device,
        model: &PottsModel,
        members: usize,
        transport: HaloTransport,
    ) -> warpmc_potts::Result<Self> {
        if members == 0 {
            return Err(PottsError::InvalidInput("an ensemble needs at least one lattice".into()));
        }
        let (rank, size) = (comm.rank() as usize, comm.size() as usize);
        let rows = strip_rows(model.height(), size);
        let nccl = match transport {
            HaloTransport::Mpi => false,
            HaloTransport::Nccl => {
                let why_not = nccl_unfit(&comm, device, rows.len());
                match lowest_failing(&comm, why_not.is_none()) {
                    None => true,
                    Some(p) => {
                        let mut reason = [0u8; 1024];
                        if let Some(w) = &why_not {
                            let n = w.len().min(reason.len());
                            reason[..n].copy_from_slice(&w.as_bytes()[..n]);
                        }
                        broadcast_pieces(&comm, p, &mut reason);
                        let text = String::from_utf8_lossy(&reason);
                        return Err(PottsError::InvalidInput(format!(
                            "--halo nccl: process {p} cannot trade edge rows through NCCL: {}",
                            text.trim_end_matches('\0')
                        )));
                    }
                }
            }
        };
        #[cfg(not(feature = "cuda"))]
        let _ = nccl;
        let mine = match rows.get(rank) {
            #[cfg(feature = "cuda")]
            Some(r) if nccl => open_nccl(&comm, device, model, r.clone(), members)?,
            Some(r) => {
                Held::Host((0..members).map(|_| open_strip(device, model, r.clone())).collect::<Result<_, _>>()?)
            }
            None => Held::Host(Vec::new()),
        };
        Ok(StripEnsemble { comm, model: model.clone(), members, strips: rows.len(), rank, mine, sweeps_calls: 0 })
    }

    /// Strips each lattice is cut into (processes holding a part of it).
    pub fn strips(&self) -> usize {
        self.strips
    }
}

/// Why this process cannot trade edge rows through NCCL (`None`: it can):
/// its strip must be on a GPU, every process must hold one, each on a GPU
/// no other process of its machine uses, and the NCCL library must load.
/// Every process must call it (it gathers every process's GPU).
fn nccl_unfit(comm: &SimpleCommunicator, device: &Device, strips: usize) -> Option<String> {
    // Which GPU of which machine (by PCI bus where the driver says, so
    // that processes each shown one GPU as device 0 differ), u64::MAX for
    // none.
    #[cfg(feature = "cuda")]
    let here = match device {
        Device::Cuda(gpu) => {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            mpi::environment::processor_name().unwrap_or_default().hash(&mut h);
            let info = gpu.info();
            info.pci_bus.map_or((1u8, info.ordinal as u64), |b| (0u8, b as u64)).hash(&mut h);
            h.finish().min(u64::MAX - 1)
        }
        _ => u64::MAX,
    };
    #[cfg(not(feature = "cuda"))]
    let here = u64::MAX;
    let mut why = None;
    let mut all = vec![0u64; comm.size() as usize];
    comm.all_gather_into(&here, &mut all[..]);
    if here == u64::MAX {
        why = Some(format!("its strips run on the {}, not a GPU", device.name()));
    } else if strips < comm.size() as usize {
        why = Some(format!("the lattice makes {strips} strips for {} processes", comm.size()));
    } else if let Some(other) = all.iter().enumerate().position(|(p, &g)| g == here && p != comm.rank() as usize) {
        why = Some(format!("it shares its GPU with process {other}"));
    } else {
        #[cfg(feature = "cuda")]
        if let Err(e) = warpmc_gpu::nccl::library() {
            why = Some(e.to_string());
        }
    }
    why
}

/// This process's strips of `members` lattices on its GPU, joined by an
/// NCCL communicator whose ranks are the MPI ranks (made by the first
/// process, its id sent by MPI). Every process must call it; each step
/// that can fail on one process is agreed on before the next collective
/// step, so that a failure ends every process instead of leaving the
/// others waiting in NCCL.
#[cfg(feature = "cuda")]
fn open_nccl(
    comm: &SimpleCommunicator,
    device: &Device,
    model: &PottsModel,
    rows: std::ops::Range<usize>,
    members: usize,
) -> warpmc_potts::Result<Held> {
    use warpmc_gpu::nccl::{Communicator, UniqueId, library};
    let Device::Cuda(gpu) = device else {
        return Err(PottsError::InvalidInput("NCCL strips need a GPU".into()));
    };
    let (rank, size) = (comm.rank() as usize, comm.size() as usize);
    // Fails on every process when `mine` fails on any: its own error where
    // it failed, a line naming the process elsewhere.
    let agree = |mine: warpmc_potts::Result<()>, what: &str| -> warpmc_potts::Result<()> {
        match (lowest_failing(comm, mine.is_ok()), mine) {
            (None, _) => Ok(()),
            (Some(_), Err(e)) => Err(e),
            (Some(p), Ok(())) => {
                Err(PottsError::InvalidInput(format!("process {p} could not {what} (its own message says why)")))
            }
        }
    };
    let strips: warpmc_potts::Result<Vec<warpmc_potts::CudaStripBackend>> =
        (0..members).map(|_| warpmc_potts::CudaStripBackend::new(gpu.clone(), model, rows.clone())).collect();
    let made = strips.as_ref().map(|_| ()).map_err(|e| PottsError::InvalidInput(e.to_string()));
    agree(made, "open its strips")?;
    let mut strips = strips?;
    // The id, and after it whether the first process could make one.
    let mut id = [0u8; 129];
    let made = if rank == 0 {
        library().and_then(|l| l.unique_id()).map(|u| {
            id[..128].copy_from_slice(&u.0);
            id[128] = 1;
        })
    } else {
        Ok(())
    };
    comm.process_at_rank(0).broadcast_into(&mut id[..]);
    made?;
    if id[128] != 1 {
        return Err(PottsError::InvalidInput("process 0 could not make an NCCL communicator".into()));
    }
    let mut unique = [0u8; 128];
    unique.copy_from_slice(&id[..128]);
    let nccl = Communicator::new(gpu, &UniqueId(unique), rank, size);
    let joined = nccl.as_ref().map(|_| ()).map_err(|e| PottsError::InvalidInput(e.to_string()));
    agree(joined, "join the NCCL communicator")?;
    let nccl = nccl?;
    // NCCL's connections now, not during the first timed sweeps.
    strips[0].connect_nccl(&nccl, ((rank + size - 1) % size, (rank + 1) % size))?;
    Ok(Held::Nccl { strips, comm: nccl })
}

impl Ensemble for StripEnsemble {
    fn name(&self) -> &'static str {
        self.mine.first().map_or("cpu", |s| s.name())
    }

    fn description(&self) -> String {
        let (w, h) = (self.model.width(), self.model.height());
        let size = self.comm.size() as usize;
        let on = if self.strips < size {
            format!("{} of {size} MPI processes (a strip is at least 8 rows)", self.strips)
        } else {
            format!("{size} MPI processes")
        };
        let lattices = match self.members {
            1 => format!("one {w} × {h} lattice"),
            n => format!("{n} lattices of {w} × {h}, one after another, each"),
        };
        let here = self.mine.first().map_or_else(|| "none here".to_string(), |s| s.description());
        let trade = match self.mine {
            Held::Host(_) => "edge rows through MPI",
            #[cfg(feature = "cuda")]
            Held::Nccl { .. } => "edge rows GPU to GPU through NCCL",
        };
        let strips = if self.strips == 1 { "1 strip".to_string() } else { format!("{} strips", self.strips) };
        format!("{lattices} in {strips} on {on}, {trade}; process {}: {here}", self.rank)
    }

    fn len(&self) -> usize {
        self.members
    }

    fn load(&mut self, index: usize, lattice: &Lattice) -> warpmc_potts::Result<()> {
        check_member(self.members, index)?;
        match self.mine.get_mut(index) {
            Some(s) => s.load(lattice),
            None => Ok(()),
        }
    }

    fn lattice(&mut self, index: usize) -> warpmc_potts::Result<Lattice> {
        check_member(self.members, index)?;
        let (w, h, q) = (self.model.width(), self.model.height(), self.model.q());
        let mut spins = vec![0u8; w * h];
        if let Some(s) = self.mine.get_mut(index) {
            let r = s.rows();
            spins[r.start * w..r.end * w].copy_from_slice(&s.spins()?);
        }
        // Each strip from its process, to every process.
        for (p, r) in strip_rows(h, self.strips).into_iter().enumerate() {
            broadcast_pieces(&self.comm, p, &mut spins[r.start * w..r.end * w]);
        }
        Lattice::from_spins(w, h, q, spins)
            .ok_or_else(|| PottsError::InvalidInput("a process sent a strip with spins of q or more".into()))
    }

    fn set_table(&mut self, index: usize, table: &AcceptanceTable) -> warpmc_potts::Result<()> {
        check_member(self.members, index)?;
        match self.mine.get_mut(index) {
            Some(s) => s.set_table(table),
            None => Ok(()),
        }
    }

    fn sweeps(&mut self, chains: &[Chain], first: u64, count: u64) -> warpmc_potts::Result<()> {
        check_chains(self.members, chains)?;
        let k = self.strips as i32;
        let r = self.rank as i32;
        self.sweeps_calls += 1;
        if failing_sweeps_call(self.rank).is_some_and(|n| self.sweeps_calls >= n) {
            return Err(PottsError::InvalidInput(format!("failing on purpose ({FAIL_SWEEPS} is set)")));
        }
        let (up, down) = ((r + k - 1) % k, (r + 1) % k);
        match &mut self.mine {
            Held::Host(strips) => {
                let mut neighbours = Neighbours { comm: &self.comm, up, down };
                for (strip, chain) in strips.iter_mut().zip(chains) {
                    strip.sweeps(chain.seed, chain.stream, first, count, &mut neighbours)?;
                }
            }
            #[cfg(feature = "cuda")]
            Held::Nccl { strips, comm } => {
                for (strip, chain) in strips.iter_mut().zip(chains) {
                    strip.sweeps_nccl(chain.seed, chain.stream, first, count, comm, (up as usize, down as usize))?;
                }
            }
        }
        Ok(())
    }

    fn census(&mut self) -> warpmc_potts::Result<Vec<Census>> {
        #[cfg(feature = "cuda")]
        if let Held::Nccl { strips, comm } = &mut self.mine {
            return strips.iter_mut().map(|s| s.census_nccl(comm)).collect();
        }
        // Each member's part as q + 1 integers (equal bonds, then counts),
        // summed over the processes: integers, so the sum is exact.
        let per = self.model.q() as usize + 1;
        let mut mine = vec![0u64; self.members * per];
        for (i, part) in mine.chunks_exact_mut(per).enumerate().take(self.mine.len()) {
            let Some(strip) = self.mine.get_mut(i) else { break };
            let c = strip.census()?;
            part[0] = c.equal_bonds();
            part[1..].copy_from_slice(c.counts());
        }
        let mut all = vec![0u64; mine.len()];
        self.comm.all_reduce_into(&mine[..], &mut all[..], SystemOperation::sum());
        Ok(all.chunks_exact(per).map(|c| Census::new(c[0], c[1..].to_vec())).collect())
    }

    fn synchronize(&mut self) -> warpmc_potts::Result<()> {
        #[cfg(feature = "cuda")]
        if let Held::Nccl { strips, comm } = &self.mine {
            for s in strips {
                s.gpu().synchronize()?;
            }
            comm.async_error()?;
        }
        Ok(())
    }

    fn agreed_seconds(&mut self, local: f64) -> warpmc_potts::Result<f64> {
        Ok(all_max(&self.comm, local))
    }
}
