//! The processes of one run: MPI started, who is who, and the few
//! collective steps the run needs besides its ensembles'.

use mpi::Threading;
use mpi::collective::SystemOperation;
use mpi::environment::Universe;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use crate::error::{MpiError, Result};

/// Largest piece of one broadcast: MPI counts are C ints.
const PIECE: usize = 1 << 30;

/// MPI, started for this process, and its place among the run's processes.
///
/// Dropping it ends MPI (`MPI_Finalize`), which every process must reach;
/// [`abort`](Processes::abort) ends every process at once instead.
pub struct Processes {
    /// Dropping it ends MPI.
    universe: Option<Universe>,
    world: SimpleCommunicator,
    rank: usize,
    size: usize,
    local_rank: usize,
    local_size: usize,
}

impl std::fmt::Debug for Processes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Processes")
            .field("rank", &self.rank)
            .field("size", &self.size)
            .field("local_rank", &self.local_rank)
            .field("local_size", &self.local_size)
            .finish()
    }
}

impl Processes {
    /// Starts MPI. Only the calling thread talks to MPI (the CPU threads of
    /// an update never do), so the funneled level of thread support is
    /// enough.
    pub fn init() -> Result<Self> {
        let (universe, _level) = mpi::initialize_with_threading(Threading::Funneled).ok_or(MpiError::Init)?;
        let world = universe.world();
        let (rank, size) = (world.rank() as usize, world.size() as usize);
        // The processes sharing this machine's memory, in world-rank order.
        let local = world.split_shared(world.rank());
        let (local_rank, local_size) = (local.rank() as usize, local.size() as usize);
        Ok(Processes { universe: Some(universe), world, rank, size, local_rank, local_size })
    }

    /// This process's rank, 0 … [`size`](Processes::size) − 1.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// Processes in the run.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Whether this is the first process, the one that writes the run's
    /// output.
    pub fn is_first(&self) -> bool {
        self.rank == 0
    }

    /// This process's rank among those on its machine (which GPU it uses).
    pub fn local_rank(&self) -> usize {
        self.local_rank
    }

    /// Processes on this machine (how many share its cores).
    pub fn local_size(&self) -> usize {
        self.local_size
    }

    /// A communicator of the run's processes of its own, so that its
    /// messages cannot meet anyone else's. Every process must call it.
    pub fn communicator(&self) -> SimpleCommunicator {
        self.world.duplicate()
    }

    /// Whether every process got through a step: `None` when all did, else
    /// the lowest rank that did not. Every process must call it.
    pub fn first_failure(&self, ok: bool) -> Option<usize> {
        let mine = if ok { self.size as u64 } else { self.rank as u64 };
        let mut lowest = 0u64;
        self.world.all_reduce_into(&mine, &mut lowest, SystemOperation::min());
        (lowest < self.size as u64).then_some(lowest as usize)
    }

    /// The first process's `value`, on every process.
    pub fn first_says(&self, value: u8) -> u8 {
        let mut v = value;
        self.world.process_at_rank(0).broadcast_into(&mut v);
        v
    }

    /// The first process's `bytes` (ignored elsewhere), on every process.
    pub fn first_sends(&self, bytes: Vec<u8>) -> Vec<u8> {
        let mut len = bytes.len() as u64;
        let root = self.world.process_at_rank(0);
        root.broadcast_into(&mut len);
        let mut buf = if self.is_first() { bytes } else { vec![0u8; len as usize] };
        broadcast_pieces(&self.world, 0, &mut buf);
        buf
    }

    /// Ends every process of the run at once, with exit status `code`
    /// (`MPI_Abort`): the way out for a process that fails while others may
    /// be waiting for it in a collective step.
    pub fn abort(&self, code: i32) -> ! {
        self.world.abort(code)
    }

    /// Ends MPI here (every process must do so) and exits with `code`,
    /// without running the destructors of anything still holding a
    /// communicator.
    pub fn finish_and_exit(mut self, code: i32) -> ! {
        drop(self.universe.take());
        std::process::exit(code)
    }
}

/// Broadcasts `buf` from `root` in pieces MPI's int counts can hold.
pub(crate) fn broadcast_pieces(comm: &SimpleCommunicator, root: usize, buf: &mut [u8]) {
    let root = comm.process_at_rank(root as i32);
    for piece in buf.chunks_mut(PIECE) {
        root.broadcast_into(piece);
    }
}

/// The largest of every process's `value`.
pub(crate) fn all_max(comm: &SimpleCommunicator, value: f64) -> f64 {
    let mut out = 0.0;
    comm.all_reduce_into(&value, &mut out, SystemOperation::max());
    out
}
