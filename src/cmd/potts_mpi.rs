//! `potts run` as one of several processes started by mpirun.
//!
//! Every process runs the whole protocol: the same flags, the same state,
//! the same calls in the same order. The lattices are placed by
//! warpmc-mpi's opener; the checks and files that must happen once happen
//! on the first process (rank 0), which alone prints and writes; its
//! decision to checkpoint, and any process's decision to stop, reach the
//! others.

#[cfg(feature = "mpi")]
use std::cell::Cell;
use std::path::Path;

use warpmc_potts::{BackendChoice, Control, Observer, ProtocolConfig, RunState, Runner, TemperatureResult};

#[cfg(feature = "mpi")]
use super::QuietExit;

use warpmc_mpi::{Decompose, HaloTransport};
#[cfg(feature = "mpi")]
use warpmc_mpi::{FailureNotice, MpiOpener, Processes};

/// Makes process R (a rank) fail at its first finished temperature, so
/// that tests can check that one failing process ends the whole job with
/// one message instead of leaving the others waiting. Only the tests set it.
#[cfg(feature = "mpi")]
const FAIL_RANK: &str = "WARPMC_MPI_TEST_FAIL_RANK";

/// The processes of a `potts run`: this one alone, or MPI's.
pub(crate) enum Team {
    /// One process.
    Alone,
    /// One of the processes mpirun started, MPI running. `agreed` is set
    /// once every process knows that a step before the run failed
    /// ([`Team::agree`]), `failed` once every process knows which process
    /// failed during the run.
    #[cfg(feature = "mpi")]
    Mpi { processes: Processes, decompose: Decompose, halo: HaloTransport, agreed: Cell<bool>, failed: FailureNotice },
}

impl Team {
    /// The team this process belongs to: MPI's when a launcher started it
    /// (and this build has MPI), else this process alone. `decompose` says
    /// where the lattices go, `halo` how strips trade their edge rows.
    pub(crate) fn join(decompose: Decompose, halo: HaloTransport) -> anyhow::Result<Team> {
        let Some(launch) = warpmc_mpi::Launch::from_env() else { return Ok(Team::Alone) };
        #[cfg(feature = "mpi")]
        {
            let _ = launch;
            let processes = Processes::init()?;
            share_cores(processes.sharing_cores());
            let team =
                Team::Mpi { processes, decompose, halo, agreed: Cell::new(false), failed: FailureNotice::default() };
            team.agree(team.same_command())?;
            Ok(team)
        }
        #[cfg(not(feature = "mpi"))]
        {
            let _ = (decompose, halo);
            without_mpi(launch)?;
            Ok(Team::Alone)
        }
    }

    /// Fails on each process started with other arguments, or by another
    /// warpmc build, than the first: every process parses its own command
    /// line, and processes that disagree about the run would give wrong
    /// results or wait for each other for ever.
    #[cfg(feature = "mpi")]
    fn same_command(&self) -> anyhow::Result<()> {
        let Team::Mpi { processes, .. } = self else { return Ok(()) };
        let mine = command_fingerprint().to_le_bytes();
        let first = processes.first_sends(mine.to_vec());
        anyhow::ensure!(
            first == mine,
            "this process was started with other arguments than process 0, or by another warpmc build; every \
             process of a run must be started with the same command (the same `warpmc potts run …` after mpirun's \
             own options)"
        );
        Ok(())
    }

    /// Whether every process knows how the run went: it finished or was
    /// interrupted (decisions every process takes together), or it failed
    /// and every process learnt of it ([`Team::settle`], [`Team::agree`],
    /// an ensemble's own). Then the processes can still take steps
    /// together; otherwise some may be waiting for a failed one.
    pub(crate) fn knows_outcome(&self, result: &warpmc_potts::Result<()>) -> bool {
        if matches!(result, Ok(()) | Err(warpmc_potts::PottsError::Interrupted)) {
            return true;
        }
        match self {
            Team::Alone => true,
            #[cfg(feature = "mpi")]
            Team::Mpi { agreed, failed, .. } => agreed.get() || failed.process().is_some(),
        }
    }

    /// The processes of the team (1 without MPI).
    pub(crate) fn processes(&self) -> usize {
        match self {
            Team::Alone => 1,
            #[cfg(feature = "mpi")]
            Team::Mpi { processes, .. } => processes.size(),
        }
    }

    /// The processes of the team on this machine (this one included),
    /// which share its memory and cores.
    pub(crate) fn processes_here(&self) -> usize {
        match self {
            Team::Alone => 1,
            #[cfg(feature = "mpi")]
            Team::Mpi { processes, .. } => processes.local_size(),
        }
    }

    /// Whether this process prints and writes the run's output.
    pub(crate) fn is_first(&self) -> bool {
        match self {
            Team::Alone => true,
            #[cfg(feature = "mpi")]
            Team::Mpi { processes, .. } => processes.is_first(),
        }
    }

    /// The outcome of a step every process took: `r` when every process got
    /// through, else an error that the first failing process prints (with
    /// its rank when it is not the first) and the others keep quiet.
    pub(crate) fn agree<T>(&self, r: anyhow::Result<T>) -> anyhow::Result<T> {
        match self {
            Team::Alone => r,
            #[cfg(feature = "mpi")]
            Team::Mpi { processes, agreed, .. } => {
                let first_failure = processes.first_failure(r.is_ok());
                if first_failure.is_some() {
                    agreed.set(true);
                }
                match (first_failure, r) {
                    (None, r) => r,
                    (Some(0), Err(e)) if processes.is_first() => Err(e),
                    (Some(f), Err(e)) if f == processes.rank() => {
                        Err(e.context(format!("process {f} of {}", processes.size())))
                    }
                    // Status 0: mpirun ends every process as soon as one
                    // exits with another, maybe before the error is out.
                    (Some(_), _) => Err(QuietExit(0).into()),
                }
            }
        }
    }

    /// A file every process needs (a configuration, a checkpoint), read by
    /// the first process with `reader` (which bounds what it reads) and
    /// sent to the others.
    pub(crate) fn read(
        &self,
        path: &Path,
        reader: fn(&Path) -> Result<Vec<u8>, warpmc_potts::PottsError>,
    ) -> anyhow::Result<Vec<u8>> {
        match self {
            Team::Alone => Ok(reader(path)?),
            #[cfg(feature = "mpi")]
            Team::Mpi { processes, .. } => {
                let mine = if processes.is_first() { reader(path) } else { Ok(Vec::new()) };
                let bytes = self.agree(mine.map_err(anyhow::Error::from))?;
                Ok(processes.first_sends(bytes))
            }
        }
    }

    /// The device this process runs on: `choice` resolved on this process's
    /// GPU (the one `WARPMC_DEVICE` names, else the process's rank on its
    /// machine, modulo the GPUs there), with one line on stderr when `auto`
    /// falls back to the CPU.
    pub(crate) fn device(&self, choice: BackendChoice) -> anyhow::Result<warpmc_gpu::Device> {
        let device = match self {
            Team::Alone => warpmc_gpu::select(choice)?,
            #[cfg(feature = "mpi")]
            Team::Mpi { .. } if choice == BackendChoice::Cpu => warpmc_gpu::Device::CPU,
            #[cfg(feature = "mpi")]
            Team::Mpi { processes, .. } => {
                let ordinal = match std::env::var_os("WARPMC_DEVICE") {
                    Some(_) => warpmc_gpu::device_ordinal()?,
                    None => match warpmc_gpu::probe().devices {
                        Ok(d) if !d.is_empty() => processes.local_rank() % d.len(),
                        _ => 0,
                    },
                };
                warpmc_gpu::select_ordinal(choice, ordinal)?
            }
        };
        if let Some(why) = device.fallback()
            && self.is_first()
        {
            noteln!("note: {why}; running on the CPU");
        }
        // mpirun binds each of one or two processes to a single core by
        // default: the process's threads (NCCL's proxy among them) then take
        // turns on it, and every half-sweep of a GPU strip waits for them.
        #[cfg(feature = "mpi")]
        if let Team::Mpi { processes, .. } = self
            && device.name() == "cuda"
            && processes.is_first()
            && std::thread::available_parallelism().is_ok_and(|n| n.get() == 1)
        {
            noteln!(
                "note: mpirun bound this process to one CPU core, which slows GPU strips down several times; \
                 start it with --bind-to none (or --map-by slot:PE=4)"
            );
        }
        // On the CPU the same binding leaves each process one thread of a
        // machine that may have dozens of cores.
        #[cfg(feature = "mpi")]
        if let Team::Mpi { processes, .. } = self
            && device.name() == "cpu"
            && processes.is_first()
            && std::env::var_os("RAYON_NUM_THREADS").is_none()
            && super::THREADS_GIVEN.get().is_none()
            && std::thread::available_parallelism().is_ok_and(|n| n.get() == 1)
        {
            // SAFETY: sysconf reads a system value; no memory is passed.
            let online = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
            if online > processes.local_size() as libc::c_long {
                noteln!(
                    "note: mpirun bound this process to one CPU core, so it runs one thread where this machine \
                     has {online}; start mpirun with --bind-to none (the processes then share the cores) or \
                     --map-by slot:PE=N (N cores each)"
                );
            }
        }
        Ok(device)
    }

    /// A runner for `cfg`: on `device`, or across the processes.
    pub(crate) fn runner(&self, cfg: ProtocolConfig, device: &warpmc_gpu::Device) -> anyhow::Result<Runner> {
        match self {
            Team::Alone => Ok(Runner::on(cfg, device)?),
            #[cfg(feature = "mpi")]
            Team::Mpi { processes, decompose, halo, failed, .. } => {
                let opener = MpiOpener::new(processes, device.clone(), *decompose)?
                    .reporting_to(failed.clone())
                    .with_halo(*halo);
                Ok(Runner::with_opener(cfg, Box::new(opener))?)
            }
        }
    }

    /// The weightiest of every process's decisions, on every process:
    /// whichever process was sent Ctrl-C or SIGTERM stops them all.
    fn control(&self, mine: Control) -> Control {
        match self {
            Team::Alone => mine,
            #[cfg(feature = "mpi")]
            Team::Mpi { processes, .. } => {
                let code = match mine {
                    Control::Continue => 0,
                    Control::Checkpoint => 1,
                    Control::CheckpointAndStop => 2,
                };
                match processes.largest(code) {
                    0 => Control::Continue,
                    1 => Control::Checkpoint,
                    _ => Control::CheckpointAndStop,
                }
            }
        }
    }

    /// The first process's `flag`, on every process.
    pub(crate) fn first_says(&self, flag: bool) -> bool {
        match self {
            Team::Alone => flag,
            #[cfg(feature = "mpi")]
            Team::Mpi { processes, .. } => processes.first_says(u8::from(flag)) != 0,
        }
    }

    /// Whether every process got through a step of the run, all processes
    /// together: `r` when all did; otherwise every process returns an
    /// error, the lowest failing process its own, and
    /// [`fail`](Team::fail) later ends each process as it should.
    pub(crate) fn settle(&self, r: warpmc_potts::Result<()>) -> warpmc_potts::Result<()> {
        match self {
            Team::Alone => r,
            #[cfg(feature = "mpi")]
            Team::Mpi { processes, failed, .. } => {
                let Some(f) = processes.first_failure(r.is_ok()) else { return r };
                failed.set(f);
                match r {
                    Err(e) if f == processes.rank() => Err(e),
                    _ => Err(warpmc_potts::PottsError::InvalidInput(warpmc_mpi::failed_elsewhere(f, processes.size()))),
                }
            }
        }
    }

    /// Ends the run after an error that struck once the processes had set
    /// off together: alone, or when every process knows of the failure
    /// ([`Team::agree`], [`Team::settle`], or an ensemble's own), the error
    /// goes back to be printed, by the failed process alone, once the first
    /// process has written its files; otherwise this process prints it with
    /// its rank and ends every process (MPI_Abort), since the others may be
    /// waiting for it.
    pub(crate) fn fail(&self, e: anyhow::Error) -> anyhow::Error {
        match self {
            Team::Alone => e,
            #[cfg(feature = "mpi")]
            Team::Mpi { agreed, .. } if agreed.get() => e,
            #[cfg(feature = "mpi")]
            Team::Mpi { processes, failed, .. } if failed.process().is_some() => {
                // Every process is here: the first has written what was
                // measured, and no process ends before it has.
                processes.first_failure(true);
                let f = failed.process().unwrap_or(0);
                let only_news = matches!(
                    e.downcast_ref::<warpmc_potts::PottsError>(),
                    Some(warpmc_potts::PottsError::InvalidInput(m)) if *m == warpmc_mpi::failed_elsewhere(f, processes.size())
                );
                if only_news {
                    // Status 0, as in `agree`.
                    QuietExit(0).into()
                } else {
                    // The failed process's error, or one of this process's
                    // own since (writing the series, say).
                    e.context(format!("process {} of {}", processes.rank(), processes.size()))
                }
            }
            #[cfg(feature = "mpi")]
            Team::Mpi { processes, .. } => {
                super::print_error(&format!("process {} of {}: {e:#}", processes.rank(), processes.size()));
                processes.abort(1)
            }
        }
    }

    /// Exits with `code`, ending MPI first where it runs.
    pub(crate) fn exit(self, code: i32) -> ! {
        match self {
            Team::Alone => std::process::exit(code),
            #[cfg(feature = "mpi")]
            Team::Mpi { processes, .. } => processes.finish_and_exit(code),
        }
    }
}

/// `--help` or `--version` (clap's answer, `shown`) on a process of an
/// mpirun job of several. The process joins MPI and compares commands as a
/// run's processes do, so that one given the help beside processes that
/// run `potts run` ends the job with one line instead of leaving them
/// waiting in MPI for ever; when every process was given the same command,
/// the first prints the answer and all end with clap's status for it.
#[cfg(feature = "mpi")]
pub(crate) fn help_under_mpirun(shown: clap::Error) -> ! {
    match Team::join(Decompose::Auto, HaloTransport::Mpi) {
        Ok(team) => {
            let status = if team.is_first() { super::print_clap_answer(&shown) } else { shown.exit_code() };
            team.exit(status)
        }
        Err(e) => match e.downcast_ref::<QuietExit>() {
            Some(q) => std::process::exit(q.0),
            None => {
                super::print_error(&format!("{e:#}"));
                std::process::exit(1)
            }
        },
    }
}

/// A fingerprint of this process's command line (all but the program's
/// path, which may differ between machines) and of the build: 64-bit
/// FNV-1a over each argument's bytes, each preceded by its length.
#[cfg(feature = "mpi")]
fn command_fingerprint() -> u64 {
    use std::os::unix::ffi::OsStrExt;
    let build = format!("{} {}", env!("CARGO_PKG_VERSION"), option_env!("WARPMC_COMMIT").unwrap_or(""));
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let pieces = std::iter::once(build.as_bytes()).chain(args.iter().map(|a| a.as_bytes()));
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for piece in pieces {
        for &b in (piece.len() as u64).to_le_bytes().iter().chain(piece) {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// Gives this process its share of the cores it may run on, which
/// `local` processes of this machine (itself included) may run on too,
/// unless the user chose the threads (`--threads` builds the pool first;
/// `RAYON_NUM_THREADS` is rayon's own).
#[cfg(feature = "mpi")]
fn share_cores(local: usize) {
    if std::env::var_os("RAYON_NUM_THREADS").is_some() {
        return;
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    // Fails only when the pool exists already: --threads was given.
    let _ = rayon::ThreadPoolBuilder::new().num_threads((cores / local.max(1)).max(1)).build_global();
}

/// A build without MPI started by mpirun: one process says so (and exits
/// with status 1); every process stops unless it is alone.
#[cfg(not(feature = "mpi"))]
fn without_mpi(launch: warpmc_mpi::Launch) -> anyhow::Result<()> {
    if launch.size == 1 {
        return Ok(());
    }
    let e = anyhow::anyhow!(
        "this warpmc was built without MPI, so each of the {} processes mpirun started would run the whole job \
         alone; build it with `cargo build --release --features mpi` (needs an MPI library and libclang), or run it \
         without mpirun",
        launch.size
    );
    // A first process built with MPI waits for this one: see
    // `later_process_fails`.
    if launch.rank != 0 {
        super::later_process_fails(launch.rank, launch.size, &e);
    }
    Err(e)
}

/// The run's observer as a member of the team: the first process's
/// decisions reach every process, and a process whose own output fails
/// (stdout closed) stops the whole team at the next stretch instead of
/// leaving it alone.
pub(crate) struct TeamObserver<'a, O: Observer> {
    team: &'a Team,
    inner: &'a mut O,
    /// Set when the output asked to stop (its reader went away).
    stop: bool,
    /// This process must fail at its first result ([`FAIL_RANK`]).
    #[cfg(feature = "mpi")]
    fail_here: bool,
}

impl<'a, O: Observer> TeamObserver<'a, O> {
    pub(crate) fn new(team: &'a Team, inner: &'a mut O) -> Self {
        #[cfg(feature = "mpi")]
        let fail_here = match team {
            Team::Mpi { processes, .. } => {
                std::env::var(FAIL_RANK).ok().and_then(|r| r.parse::<usize>().ok()) == Some(processes.rank())
            }
            Team::Alone => false,
        };
        TeamObserver {
            team,
            inner,
            stop: false,
            #[cfg(feature = "mpi")]
            fail_here,
        }
    }
}

impl<O: Observer> Observer for TeamObserver<'_, O> {
    fn progress(&mut self, done: u64, total: u64) {
        self.inner.progress(done, total);
    }

    fn temperature_done(&mut self, result: &TemperatureResult, all: &[TemperatureResult]) -> warpmc_potts::Result<()> {
        self.temperatures_done(std::slice::from_ref(result), all)
    }

    fn temperatures_done(&mut self, new: &[TemperatureResult], all: &[TemperatureResult]) -> warpmc_potts::Result<()> {
        #[cfg(feature = "mpi")]
        let mine = if self.fail_here {
            Err(warpmc_potts::PottsError::InvalidInput(format!("failing on purpose ({FAIL_RANK} is set)")))
        } else {
            self.inner.temperatures_done(new, all)
        };
        #[cfg(not(feature = "mpi"))]
        let mine = self.inner.temperatures_done(new, all);
        let mine = match mine {
            Err(warpmc_potts::PottsError::Interrupted) if !matches!(self.team, Team::Alone) => {
                self.stop = true;
                Ok(())
            }
            other => other,
        };
        // A process that cannot take its results (the first, its disk full)
        // ends every process together with it.
        self.team.settle(mine)
    }

    fn control(&mut self) -> Control {
        let mine = if self.stop { Control::CheckpointAndStop } else { self.inner.control() };
        self.team.control(mine)
    }

    fn checkpoint(&mut self, cfg: &ProtocolConfig, state: &RunState) -> warpmc_potts::Result<()> {
        self.inner.checkpoint(cfg, state)
    }
}
