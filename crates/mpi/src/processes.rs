//! The processes of one run: MPI started, who is who, and the few
//! collective steps the run needs besides its ensembles'.

use std::cell::Cell;
use std::rc::Rc;

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
    sharing_cores: usize,
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
        // How many of them may run on this process's cores: mpirun may have
        // bound each to cores of its own (Open MPI binds one or two
        // processes to a core each by default), or to none.
        let mine = cpu_mask();
        let mut all = vec![0u8; CPU_MASK_BYTES * local_size];
        local.all_gather_into(&mine[..], &mut all[..]);
        let sharing_cores = all.chunks(CPU_MASK_BYTES).filter(|other| overlap(other, &mine)).count().max(1);
        Ok(Processes { universe: Some(universe), world, rank, size, local_rank, local_size, sharing_cores })
    }

    /// Processes on this machine that may run on this process's cores
    /// (itself included): all of them when mpirun bound none, 1 when it
    /// gave each process cores of its own. The cores this process may use
    /// are `std::thread::available_parallelism`'s.
    pub fn sharing_cores(&self) -> usize {
        self.sharing_cores
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
        lowest_failing(&self.world, ok)
    }

    /// The first process's `value`, on every process.
    pub fn first_says(&self, value: u8) -> u8 {
        let mut v = value;
        self.world.process_at_rank(0).broadcast_into(&mut v);
        v
    }

    /// The largest of every process's `value`, on every process.
    pub fn largest(&self, value: u8) -> u8 {
        let mut out = 0u8;
        self.world.all_reduce_into(&value, &mut out, SystemOperation::max());
        out
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

/// Which process failed, once every process knows ([`SpreadEnsemble`]
/// holds a process's failure back until its next collective step, where
/// every process learns of it together and returns an error, so that the
/// first process can still write what was measured before the run ends).
/// Clones share one notice.
///
/// [`SpreadEnsemble`]: crate::SpreadEnsemble
#[derive(Clone, Debug, Default)]
pub struct FailureNotice(Rc<Cell<Option<usize>>>);

impl FailureNotice {
    /// The lowest rank among the processes that failed, once every process
    /// knows; `None` while none has.
    pub fn process(&self) -> Option<usize> {
        self.0.get()
    }

    /// Records that every process knows that `rank` failed.
    pub fn set(&self, rank: usize) {
        self.0.set(Some(rank));
    }
}

/// The error of the processes that learn that process `failed` of `size`
/// failed: they can end quietly, the failed process saying why.
pub fn failed_elsewhere(failed: usize, size: usize) -> String {
    format!("process {failed} of {size} failed")
}

/// `R` or `R@N`: makes process R's sweeps fail from its N-th call of a
/// run's ensemble on (the first by default), so that tests can check how a
/// run ends when one process fails in the middle of it. Only the tests set
/// it.
pub(crate) const FAIL_SWEEPS: &str = "WARPMC_MPI_TEST_FAIL_SWEEPS";

/// The call of its sweeps from which process `rank` must fail
/// ([`FAIL_SWEEPS`]), counted from 1; `None` for every other process.
pub(crate) fn failing_sweeps_call(rank: usize) -> Option<u64> {
    let value = std::env::var(FAIL_SWEEPS).ok()?;
    let (r, n) = value.split_once('@').unwrap_or((&value, "1"));
    (r.parse::<usize>().ok()? == rank).then_some(n.parse().ok()?)
}

/// The lowest rank whose `ok` is false, on every process (`None` when all
/// are true).
pub(crate) fn lowest_failing(comm: &SimpleCommunicator, ok: bool) -> Option<usize> {
    let size = comm.size() as u64;
    let mine = if ok { size } else { comm.rank() as u64 };
    let mut lowest = 0u64;
    comm.all_reduce_into(&mine, &mut lowest, SystemOperation::min());
    (lowest < size).then_some(lowest as usize)
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

/// Bytes of a CPU mask: `cpu_set_t`'s 1024 CPUs.
const CPU_MASK_BYTES: usize = 128;

/// The CPUs this process may run on, a bit each (all of them where the
/// system does not say).
fn cpu_mask() -> [u8; CPU_MASK_BYTES] {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: a zeroed cpu_set_t (plain bits) is an empty set.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // SAFETY: sched_getaffinity writes at most the size given into it.
        let got = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
        if got == 0 {
            // SAFETY: cpu_set_t is plain bits, CPU_MASK_BYTES of them
            // (transmute checks the size when it compiles).
            return unsafe { std::mem::transmute::<libc::cpu_set_t, [u8; CPU_MASK_BYTES]>(set) };
        }
    }
    [0xff; CPU_MASK_BYTES]
}

/// Whether two CPU masks share a CPU.
fn overlap(a: &[u8], b: &[u8]) -> bool {
    a.iter().zip(b).any(|(x, y)| x & y != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_may_run_on_some_cpu_of_its_mask() {
        let mine = cpu_mask();
        assert!(overlap(&mine, &mine));
        let cpus: u32 = mine.iter().map(|b| b.count_ones()).sum();
        let parallelism = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
        // The mask counts the CPUs the scheduler allows; a cgroup's quota
        // may allow fewer to run at once.
        assert!(cpus >= parallelism || cpus == 8 * CPU_MASK_BYTES as u32, "{cpus} CPUs, {parallelism}");
        let mut other = [0u8; CPU_MASK_BYTES];
        assert!(!overlap(&mine, &other));
        other[0] = 0b100;
        assert!(overlap(&[0b110], &other));
        assert!(!overlap(&[0b011], &other));
    }
}
