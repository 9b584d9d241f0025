//! `warpmc potts run`: the Potts protocol from flags, a TOML file or a
//! checkpoint, its outputs and progress (`potts bench` is in potts_bench.rs,
//! `potts exact` in potts_exact.rs).

use std::io::{ErrorKind, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use warpmc_host::output::NamedFile;
use warpmc_potts::observables::{
    CSV_COLUMNS, MIN_EXCURSIONS, TEMPERING_CSV_COLUMNS, TOO_SHORT_TAUS, TRANSIENT_Z, spans_too_few_taus,
};
use warpmc_potts::protocol::{sci, temperature_text};
use warpmc_potts::report::JsonLines;
use warpmc_potts::{
    Algorithm, BackendChoice, ConfigFile, Control, InitialState, Observer, PottsError, ProtocolConfig, Provenance,
    RunState, TemperatureResult, Temperatures, checkpoint, snapshot,
};

use super::potts_mpi::{Team, TeamObserver};

/// The quick example, run when `warpmc potts run` gets no parameters.
const QUICK_EXAMPLE: &str = include_str!("../../examples/potts-quick.toml");

#[derive(Debug, Args)]
pub(crate) struct PottsArgs {
    #[command(subcommand)]
    command: PottsCommand,
}

#[derive(Debug, Subcommand)]
enum PottsCommand {
    /// Run a temperature sweep and print energy, order parameter, Binder
    /// cumulant, specific heat and susceptibility with error bars.
    ///
    /// With no parameters it runs the quick example (examples/potts-quick.toml:
    /// the Ising model on 64×64 across its transition, seconds on a CPU).
    /// Parameters come from flags, from a TOML file (--config; flags win), or
    /// from a checkpoint (--resume).
    ///
    /// The model: H = -J sum_<ij> delta(s_i, s_j) - h sum_i delta(s_i, 0) on an
    /// L x L' torus (L' = --height, default L; N sites, 2N bonds), k_B = 1.
    /// Reported per site: the energy e = H/N;
    /// the order parameter m = (q N_max/N - 1)/(q - 1), N_max the count of the
    /// largest state (|M|/N for q = 2; a ferromagnetic order parameter, with
    /// no staggered one for J < 0); c = N var(e)/T^2; chi = N var(m)/T
    /// (both with a correction of the small bias of a variance estimated
    /// from a finite run); Binder U = 1 - <m^4>/(3 <m^2>^2), which for
    /// q > 2 does not go to 0 at high T; the crossings of U across L still
    /// mark T_c. For q = 2 (Ising):
    /// T_Ising = 2T, e_Ising = 2e + 2, chi_Ising = chi/2, c the same.
    /// How errors are estimated, and what the too_short, slow_mode and
    /// transient flags of each row mean: docs/statistics.md.
    ///
    /// A row whose error bars cannot be trusted (too few measurements for
    /// its autocorrelation, too few excursions from its mean, or
    /// measurements that still drift from the start) gets a warning line
    /// and too_short = true. An
    /// error printed as (?) could not be estimated: one measurement, or a
    /// series that never changed.
    ///
    /// Examples (seconds each on a CPU):
    ///   warpmc potts run --q 9 --size 256 --temp 0.7 --therm 2000 --sweeps 20000
    ///   warpmc potts run --q 2 --size 128 --temps 1.0:1.3:0.02 --algorithm wolff --sweeps 2000 \
    ///     --json > ising.jsonl
    ///   warpmc potts run --q 3 --size 128 --temp 0.995 --algorithm swendsen-wang --sweeps 5000
    ///   warpmc potts run --q 2 --size 16,32,64 --temps 1.05:1.25:0.02 --algorithm wolff --samples 8 \
    ///     --out fss.csv --series fss.npy
    /// The published protocol of Ferrero et al. (2012), from a clone of the
    /// repository (a GPU job of seconds; hours on a CPU), stopped and resumed:
    ///   warpmc potts run --config examples/potts-seed-protocol.toml --out seed.csv --checkpoint seed.ckpt
    ///   warpmc potts run --resume seed.ckpt --out seed.csv
    #[command(verbatim_doc_comment)]
    Run(Box<RunArgs>),
    /// Time the CPU and every CUDA kernel that fits beside the baseline
    /// kernel (Ferrero et al. 2012) and the device's copy bandwidth.
    ///
    /// Kernels: generic (a byte per spin, one random word per site: any
    /// model); sliced (bit planes, 32 sites per word, random bits only for
    /// sites still undecided: q ≤ 16, no field, width a multiple of 64),
    /// with -split, -split4, -split8 (2, 4, 8 threads per unit, for small
    /// lattices), -resident (all sweeps in one launch, for lattices that
    /// fit on the GPU at once), -tiled (all sweeps in one launch with the
    /// lattice in shared memory, one strip per multiprocessor, for lattices
    /// such as 1024²) and -tiled-inline (the same with edge rows traded
    /// inside the update, for lattices such as 2048²). Kernels of one rule
    /// give the same lattice.
    /// Heat-bath rows beside them: the generic storage and random numbers
    /// with the heat-bath rule, on the GPU and (L ≤ 4096) on the CPU.
    ///
    /// Prints ns per flip, flips per ns, the ratio to the baseline, the least
    /// traffic a sweep needs per second (3 lattice passes at the kernel's
    /// bytes per spin) and its fraction of the copy bandwidth, and for the CPU
    /// ns per flip per core. L = 512 … 32768 and q = 2, 9 by default.
    ///
    /// Then the ensemble rows: 1,024 lattices of 64² advanced together on
    /// the GPU beside one 64² lattice, 16 lattices of 2048² beside one
    /// 16384² lattice, and the 64² ensemble on the CPU beside one lattice
    /// there (--ensembles, --ensemble-small, --ensemble-large).
    #[command(verbatim_doc_comment)]
    Bench(Box<super::potts_bench::BenchArgs>),
    /// Exact energy and specific heat per site of finite periodic tori, the
    /// values a run on the same torus must reproduce within its error bars.
    ///
    /// q = 2 (Ising): Kaufman's solution (Kaufman 1949, in the torus form of
    /// Ferdinand and Fisher 1969), sides up to 2^24; J < 0 with an odd side
    /// (frustrated, no Kaufman solution) is counted. Other q: the configurations
    /// counted exactly by a transfer matrix, on small tori only (rows of
    /// at most 4,096 states, q^min(L, L'): 7×7 for q = 3, 6×6 for q = 4,
    /// 5×5 for q = 5, 4×4 for q ≤ 8, 3×3 for q ≤ 16).
    ///
    /// Precision: at least 10 significant digits where the specific heat
    /// exceeds about 1e-6. Below that (q = 2 under T ≈ 0.2|J|) Kaufman's
    /// four sums cancel, and only the absolute error stays small (under
    /// 1e-15). Near T_c, where Kaufman's four products compete, the
    /// rounding of their 2L terms each costs the specific heat digits on
    /// the largest tori: 2e-13 of it at 4096², 2e-11 at 65536² (against
    /// 30-digit sums), growing about as L^1.5 beyond.
    ///
    /// Each value is printed as soon as it is computed (a side near 2^24
    /// takes seconds per temperature; a bar shows how far it is on a
    /// terminal). Ctrl-C or SIGTERM stops: the values computed so far are
    /// kept, in --out too, marked as interrupted.
    ///
    /// Examples:
    ///   warpmc potts exact --size 16,32,64 --temps 1.0:1.3:0.02
    ///   warpmc potts exact --q 3 --size 6 --temp 0.99 --json
    ///   warpmc potts exact --size 32 --temps 1.1,1.13,1.16 --out exact32.csv
    #[command(verbatim_doc_comment)]
    Exact(Box<super::potts_exact::ExactArgs>),
    /// What a checkpoint holds and how far its run has got (the model, the
    /// protocol, the temperatures finished, the chains under way, the
    /// backend that ran it, whether it is finished), read without running
    /// anything or changing the file.
    ///
    /// Examples:
    ///   warpmc potts inspect seed.ckpt
    ///   warpmc potts inspect seed.ckpt --json | jq .finished
    #[command(verbatim_doc_comment)]
    Inspect(super::potts_inspect::InspectArgs),
}

#[derive(Debug, Args)]
struct RunArgs {
    /// Number of states q (2…255; 2 is the Ising model at T_Ising = 2T/J).
    /// Required, as are --size and --temp or --temps, unless --config or
    /// --resume gives them.
    #[arg(long, value_name = "Q", help_heading = "Model")]
    q: Option<u32>,
    /// Lattice width L (even), or a comma list L1,L2,… of square lattices
    /// run one after another (a finite-size-scaling study: the output gains
    /// their L, the --series file one slice per size).
    #[arg(long, value_name = "L", value_delimiter = ',', action = clap::ArgAction::Set, help_heading = "Model")]
    size: Vec<usize>,
    /// Lattice height L' (even; default L).
    #[arg(long, value_name = "L2", help_heading = "Model")]
    height: Option<usize>,
    /// Coupling J (default 1; J > 0 ferromagnetic).
    #[arg(long, value_name = "J", allow_negative_numbers = true, help_heading = "Model")]
    coupling: Option<f64>,
    /// Field h favouring state 0 (default 0).
    #[arg(long, value_name = "H", allow_negative_numbers = true, help_heading = "Model")]
    field: Option<f64>,

    /// A single temperature.
    #[arg(long, value_name = "T", conflicts_with = "temps", allow_negative_numbers = true, help_heading = "Protocol")]
    temp: Option<f64>,
    /// Temperatures: T0:T1:DT (inclusive range; DT < 0 runs down, T0 ≥ T1)
    /// or a comma list T1,T2,….
    #[arg(long, value_name = "T0:T1:DT", allow_hyphen_values = true, help_heading = "Protocol")]
    temps: Option<String>,
    /// Start state: ordered (every site in state 0, or in state 1 when
    /// the field h < 0 disfavours 0) or random (default ordered).
    #[arg(long, value_name = "STATE", help_heading = "Protocol")]
    init: Option<InitialState>,
    /// Start each temperature from the previous one's final state (as in
    /// Ferrero et al. 2012) instead of from --init.
    #[arg(long = "continue", help_heading = "Protocol")]
    continue_from_previous: bool,
    /// Thermalisation sweeps per temperature (default 1000).
    #[arg(long, value_name = "N", help_heading = "Protocol")]
    therm: Option<u64>,
    /// Measurement sweeps per temperature (default 1000).
    #[arg(long, value_name = "N", help_heading = "Protocol")]
    sweeps: Option<u64>,
    /// Sweeps between measurements (default 10).
    #[arg(long, value_name = "N", help_heading = "Protocol")]
    measure_every: Option<u64>,
    /// Independent repetitions per temperature (default 1).
    #[arg(long, value_name = "N", help_heading = "Protocol")]
    samples: Option<u32>,
    /// Seed of all random numbers (default 1); the same seed gives the same
    /// lattices on every backend. Each chain's numbers are keyed by the
    /// seed, q, J, h, the lattice size and the temperature, so sizes and
    /// separate runs at other temperatures, couplings or fields are
    /// independent (runs that differ only in --algorithm or --init are
    /// not), on the stream of its sample and of the temperature's place in
    /// the list (a temperature listed twice gives two chains; one at
    /// another place in another list, other numbers); repeat a run under
    /// other seeds (or use --samples) for independent repetitions.
    #[arg(long, value_name = "S", value_parser = super::parse_u64, help_heading = "Protocol")]
    seed: Option<u64>,
    /// Parallel tempering: one replica per temperature and sample, all run
    /// at once, neighbouring temperatures offering to swap their replicas
    /// every --exchange-every sweeps (temperatures strictly increasing or
    /// decreasing; not with --continue). Adds the swap acceptance of each
    /// pair and the replicas' round trips, both counted after
    /// thermalisation, and the τ_int of their summed energy
    /// (replica_tau_int: a run shorter than 100 of it is flagged too_short)
    /// to the output (docs/tempering.md).
    #[arg(long, help_heading = "Protocol")]
    tempering: bool,
    /// Sweeps between replica-exchange rounds (default 10).
    #[arg(long, value_name = "N", help_heading = "Protocol")]
    exchange_every: Option<u64>,
    /// Where to run: auto (CUDA if a device is usable, else the CPU), cpu
    /// or cuda (default auto).
    #[arg(long, value_name = "B", help_heading = "Protocol")]
    backend: Option<BackendChoice>,
    /// Update algorithm (default metropolis); a sweep is one update per
    /// site, and every algorithm gives the same bits on every backend:
    ///   metropolis     the fastest sweep (bit-sliced where q ≤ 16, h = 0, L a
    ///                  multiple of 64 and L' of 8; elsewhere about 7 times
    ///                  slower per site: choose such sizes for a study); any q, J, h,
    ///                  except q = 2 without a field on a torus of 8 sites or
    ///                  fewer (not ergodic there: use heat-bath). Use it away
    ///                  from critical points, and with --tempering for
    ///                  first-order transitions (q ≥ 5).
    ///   heat-bath      each site drawn from its Boltzmann distribution given
    ///                  its neighbours; any q, J, h. Decorrelates in fewer
    ///                  sweeps than metropolis for large q, where most
    ///                  metropolis proposals are refused.
    ///   swendsen-wang  clusters of the whole lattice: near the continuous
    ///                  transitions (q ≤ 4), where local updates slow down
    ///                  as L^2.17; J > 0, no field.
    ///   wolff          single clusters, as many per sweep as flip L × L' sites
    ///                  on average; on the CPU whatever --backend says. The
    ///                  fewest sweeps per independent sample at T_c; J > 0,
    ///                  no field.
    /// docs/algorithms.md compares their autocorrelation times.
    #[arg(long, value_name = "A", help_heading = "Protocol", verbatim_doc_comment)]
    algorithm: Option<Algorithm>,
    /// Under mpirun (a build with the mpi feature), where the lattices go:
    /// strips (every lattice cut into horizontal strips, one per process,
    /// each on its CPU or its own GPU), ensemble (the lattices of each
    /// group dealt out whole, likewise), or auto (strips for a lone
    /// metropolis lattice unless every process has a GPU and --halo is mpi,
    /// ensemble otherwise: a lone heat-bath, Swendsen–Wang or Wolff lattice
    /// then runs on one process while the others wait, so run it without
    /// mpirun). Results are the same bits as one process's either way
    /// (docs/mpi.md).
    // Hidden from a build without MPI (where they only warn).
    #[arg(long, value_name = "HOW", default_value = "auto", help_heading = "Protocol", hide = !cfg!(feature = "mpi"))]
    decompose: warpmc_mpi::Decompose,
    /// Under mpirun, how strips trade their edge rows after each
    /// half-sweep: mpi (through page-locked host memory and MPI, beside the
    /// interior's update) or nccl (GPU to GPU through NVIDIA's NCCL
    /// library, queued beside the interior's update, and the energy and
    /// state counts summed by NCCL; needs every process on a GPU of its own; a lone lattice is
    /// then cut into strips under --decompose auto). mpi was the faster on
    /// two NVLink-joined H200s (BENCHMARKS.md). The same bits either way
    /// (docs/mpi.md).
    #[arg(long, value_name = "HOW", default_value = "mpi", help_heading = "Protocol", hide = !cfg!(feature = "mpi"))]
    halo: warpmc_mpi::HaloTransport,
    /// Read parameters from a TOML file (the model and protocol flags' names
    /// with _ for - (measure_every = 10), `temps` as a range string or list,
    /// `continue = true`; output files are flags only; `-` reads standard
    /// input); flags override it. A results file of an earlier run (its
    /// --out CSV file or its --json lines) gives the whole study it
    /// records: the same rows again, or, with flags, the same study changed
    /// (--seed 2 for another sample, --sweeps for a longer run).
    #[arg(long, value_name = "FILE", help_heading = "Protocol")]
    config: Option<PathBuf>,

    /// Write results as CSV (rewritten after each temperature; a write that
    /// fails, as on a full disk, is warned of and tried again, and the
    /// run goes on to its end and its checkpoint). It opens
    /// with `#` lines recording how the results were made (warpmc version
    /// and commit, model, seed, start, algorithm, backend and the whole
    /// configuration as JSON, of the first size in a study of several,
    /// with every size in `sizes`; --config FILE runs it again), and
    /// `# incomplete: N of M rows` while the
    /// run has not finished them all; pandas reads it with
    /// `read_csv(FILE, comment="#")`. Columns as --json's keys (the moment
    /// arrays as energy_moment2 … 4 and magnetization_moment2 … 4): `sweeps`
    /// counts each sample's sweeps, thermalisation included; `measurements`
    /// those of all samples together. As with --checkpoint, a lock beside
    /// each output file (.FILE.lock) keeps a second run from writing the
    /// same file, and no output replaces a checkpoint without --force.
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    out: Option<PathBuf>,
    /// Print one JSON object per temperature on stdout instead of a table,
    /// each with the run's provenance under `run`. Keys: L, temperature,
    /// energy, magnetization (the order parameter m above), binder,
    /// specific_heat, susceptibility, each with its _err; energy_moments
    /// and magnetization_moments (⟨e^k⟩, ⟨m^k⟩ for k = 1 … 4, and their
    /// _err); tau_int_energy and
    /// tau_int_magnetization (in sweeps), measurements, sweeps, samples,
    /// the too_short, slow_mode and transient flags, flips_per_ns and
    /// backend.
    #[arg(long, help_heading = "Output")]
    json: bool,
    /// Save the final lattice (of the last size, temperature and sample) as
    /// a picture (.png, with the run's provenance in a text chunk named
    /// warpmc-provenance) or NumPy array (.npy). With --checkpoint, the
    /// finished run's checkpoint keeps that lattice too: `--resume FILE
    /// --snapshot OTHER` writes it again, in either format.
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    snapshot: Option<PathBuf>,
    /// Write every measurement (energy per site and order parameter) as a
    /// NumPy float64 array of shape (sizes, temperatures, samples,
    /// measurements, 2): a[l, t, s, m] = [energy per site, order parameter]
    /// of measurement m of sample s at temperature t of the l-th --size, in
    /// the order given. For histograms and reweighting in temperature (the
    /// energy per site holds the bonds and the field together, so the series
    /// does not reweight in J or h). Written when the run ends, after the
    /// last row is printed (the file is complete when warpmc exits), also
    /// when it stops early (measurements not taken are NaN).
    #[arg(long, value_name = "FILE.npy", help_heading = "Output")]
    series: Option<PathBuf>,

    /// Save the run's state to FILE every --checkpoint-every seconds, on
    /// Ctrl-C and when the run finishes (written atomically; resuming a
    /// finished run gives its results without sweeping again; a second
    /// Ctrl-C stops at once, without saving). SIGTERM, SIGHUP, SIGXCPU (a
    /// soft CPU-time limit) and SIGUSR1/SIGUSR2 (sent by batch systems
    /// ahead of a time limit) save and stop as Ctrl-C does, unless ignored
    /// when the run started (under nohup, SIGHUP is); sent again, they
    /// do not cut the saving short (batch systems and mpirun send SIGTERM
    /// more than once); a checkpoint
    /// that cannot be written on the way (a full disk) is warned of and
    /// tried again, the previous one kept. While a run writes FILE it
    /// holds a lock beside it (.FILE.lock): a second run given the same
    /// FILE is refused. A FILE that
    /// already holds something (a run's checkpoint) is refused
    /// unless --force is given.
    #[arg(long, value_name = "FILE", help_heading = "Checkpoints")]
    checkpoint: Option<PathBuf>,
    /// Let a new run's --checkpoint replace an existing file, and --out,
    /// --snapshot or --series replace a file that holds a checkpoint.
    #[arg(long, help_heading = "Checkpoints")]
    force: bool,
    /// Seconds between checkpoints [default: 300; a resumed run keeps the
    /// interval its checkpoint was written with]. Each holds every
    /// measurement so far; once one takes more than a tenth of this to
    /// write, they come at ten times its writing time instead, so that
    /// saving never takes more than about a tenth of the run.
    #[arg(long, value_name = "SECS", help_heading = "Checkpoints")]
    checkpoint_every: Option<f64>,
    /// Continue a run from its checkpoint; results equal an uninterrupted
    /// run's bit for bit. Keeps checkpointing to the same file unless
    /// --checkpoint names another (a finished run's checkpoint only gives
    /// its results, and is not written again). The run's protocol, its
    /// length included, is the checkpoint's: for more statistics, start
    /// another run with its own --seed, and analyse both runs' --series
    /// together (warpmc.potts.analyze in Python; a finished run's
    /// checkpoint with --resume gives its --series again). --backend may
    /// be given: any backend continues the run with the same bits.
    #[arg(long, value_name = "FILE", help_heading = "Checkpoints")]
    resume: Option<PathBuf>,
    /// With --checkpoint FILE: continue the run FILE holds, as --resume
    /// FILE would, when it holds this run's checkpoint (the same model and
    /// protocol, seed included; --backend may differ), and start the run
    /// when FILE does not exist or is empty. One command line for a batch
    /// job that may be stopped and requeued: the first start runs, a
    /// requeued one continues, and one after the end gives the results
    /// again. A FILE that holds another run's checkpoint, or something
    /// else, is refused, never replaced.
    #[arg(long, help_heading = "Checkpoints", requires = "checkpoint", conflicts_with_all = ["resume", "force"])]
    resume_existing: bool,
}

impl RunArgs {
    fn physics_given(&self) -> bool {
        self.q.is_some()
            || !self.size.is_empty()
            || self.height.is_some()
            || self.coupling.is_some()
            || self.field.is_some()
            || self.temp.is_some()
            || self.temps.is_some()
            || self.init.is_some()
            || self.continue_from_previous
            || self.therm.is_some()
            || self.sweeps.is_some()
            || self.measure_every.is_some()
            || self.samples.is_some()
            || self.seed.is_some()
            || self.tempering
            || self.exchange_every.is_some()
            || self.algorithm.is_some()
    }

    fn as_config(&self) -> anyhow::Result<ConfigFile> {
        let temps = self.temps.as_deref().map(temperatures_flag).transpose()?;
        let (size, sizes) = match self.size.as_slice() {
            [] => (None, None),
            [l] => (Some(*l), None),
            list => (None, Some(list.to_vec())),
        };
        Ok(ConfigFile {
            q: self.q,
            size,
            sizes,
            height: self.height,
            coupling: self.coupling,
            field: self.field,
            temp: self.temp,
            temps,
            init: self.init,
            therm: self.therm,
            sweeps: self.sweeps,
            measure_every: self.measure_every,
            samples: self.samples,
            seed: self.seed,
            continue_from_previous: self.continue_from_previous.then_some(true),
            backend: self.backend,
            algorithm: self.algorithm,
            tempering: self.tempering.then_some(true),
            exchange_every: self.exchange_every,
        })
    }
}

/// `--temps` as given: `T0:T1:DT` is a range, anything else a comma list.
pub(super) fn temperatures_flag(text: &str) -> anyhow::Result<Temperatures> {
    if text.contains(':') {
        return Ok(Temperatures::Range(text.to_string()));
    }
    let list = text
        .split(',')
        .map(|t| t.trim().parse::<f64>().with_context(|| format!("--temps: '{t}' is not a number")))
        .collect::<anyhow::Result<_>>()?;
    Ok(Temperatures::List(list))
}

impl PottsArgs {
    /// Whether the command shares its work among MPI processes.
    pub(crate) fn splits_across_processes(&self) -> bool {
        matches!(self.command, PottsCommand::Run(_))
    }
}

pub(crate) fn run(args: PottsArgs) -> anyhow::Result<()> {
    match args.command {
        PottsCommand::Run(a) => run_protocol(*a),
        PottsCommand::Bench(a) => super::potts_bench::run_bench(*a),
        PottsCommand::Exact(a) => super::potts_exact::run(*a),
        PottsCommand::Inspect(a) => super::potts_inspect::run(a),
    }
}

/// A library error in the words of this command's flags.
fn as_flags(e: PottsError) -> anyhow::Error {
    match e {
        PottsError::Missing(key) => {
            let flag = if key == "temp" { "--temp or --temps".to_string() } else { format!("--{key}") };
            anyhow::anyhow!("missing {flag} (give it as a flag or in --config)")
        }
        other => other.into(),
    }
}

/// Where a run starts: its protocol for each size of the study, the size
/// it starts at, its state (fresh or from a checkpoint) and where it keeps
/// checkpointing.
struct Start {
    study: Vec<ProtocolConfig>,
    first: usize,
    state: RunState,
    checkpoint: Option<PathBuf>,
    /// The checkpoint the run continues (--resume, or --checkpoint with
    /// --resume-existing when the file held this run).
    resumed_from: Option<PathBuf>,
}

/// The protocol from --resume, or from flags over --config over the quick
/// example (files read by the team's first process).
fn starting_point(args: &RunArgs, team: &Team) -> anyhow::Result<Start> {
    if let Some(path) = &args.resume {
        if args.sweeps.is_some() || args.samples.is_some() {
            bail!(
                "--resume continues the run as it was set up, its --sweeps and --samples included; for more \
                 statistics, start another run with its own --seed (and --series), then analyse both runs' series together \
                 (warpmc.potts.analyze in Python)"
            );
        }
        if args.physics_given() || args.config.is_some() {
            bail!(
                "--resume takes the whole protocol from the checkpoint; drop the model and protocol flags (--backend \
                 may stay: any backend continues the run with the same bits)"
            );
        }
        if path.as_os_str() == "-" {
            bail!(
                "--resume -: a run continues writing the checkpoint it read, so it reads it from a file, not from \
                 standard input; name the file"
            );
        }
        let bytes = team.read(path, checkpoint::read_bytes).context("--resume")?;
        let checkpoint = decode_checkpoint(&bytes, path)?;
        return resumed(args, path, checkpoint);
    }
    let file = match &args.config {
        Some(path) => {
            let text =
                String::from_utf8(team.read(path, warpmc_potts::protocol::read_config_bytes)?).map_err(|_| {
                    PottsError::io(
                        path,
                        std::io::Error::new(ErrorKind::InvalidData, "stream did not contain valid UTF-8"),
                    )
                })?;
            let named = if path.as_os_str() == "-" { Path::new("standard input") } else { path.as_path() };
            ConfigFile::parse_or_results(&text, named)?
        }
        None if !args.physics_given() => {
            if team.is_first() {
                noteln!("note: no parameters given, running the quick example (examples/potts-quick.toml)");
            }
            ConfigFile::parse(QUICK_EXAMPLE, Path::new("examples/potts-quick.toml"))?
        }
        None => ConfigFile::default(),
    };
    let study = args.as_config()?.or(file).resolve_sizes().map_err(as_flags)?;
    if args.resume_existing
        && let Some(path) = &args.checkpoint
    {
        let bytes = team.read(path, bytes_of_existing_checkpoint).context("--resume-existing")?;
        if !bytes.is_empty() {
            let found = decode_checkpoint(&bytes, path)?;
            check_same_run(&study, &found.config, path)?;
            // The command line's backend, as --backend with --resume.
            let checkpoint::Checkpoint { config, state } = found;
            let config = config.with_backend(study[0].backend());
            return resumed(args, path, checkpoint::Checkpoint { config, state });
        }
        // Another run that holds the file and has not saved it yet: its
        // claim refuses this run below, in so many words.
        if team.is_first() && warpmc_host::output::claimed_elsewhere(path).is_none() {
            noteln!("note: {} holds no checkpoint yet: starting the run", path.display());
        }
    }
    let state = RunState::new(&study[0]);
    Ok(Start { study, first: 0, state, checkpoint: args.checkpoint.clone(), resumed_from: None })
}

/// A checkpoint's bytes decoded, an error naming `path`.
fn decode_checkpoint(bytes: &[u8], path: &Path) -> anyhow::Result<checkpoint::Checkpoint> {
    Ok(checkpoint::decode(bytes).map_err(|e| match e {
        PottsError::BadCheckpoint(message) => PottsError::Checkpoint { path: path.to_path_buf(), message },
        other => other,
    })?)
}

/// The bytes of the checkpoint at `path`, or none where there is nothing
/// there yet (no file, or an empty one); a file holding something else is
/// refused.
fn bytes_of_existing_checkpoint(path: &Path) -> Result<Vec<u8>, PottsError> {
    match checkpoint::probe(path)? {
        checkpoint::FileContents::Nothing if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) => {
            Err(PottsError::Checkpoint {
                path: path.to_path_buf(),
                message: "not a regular file, as warpmc writes checkpoints (a device, a FIFO or a directory)".into(),
            })
        }
        checkpoint::FileContents::Nothing => Ok(Vec::new()),
        checkpoint::FileContents::Checkpoint => checkpoint::read_bytes(path),
        checkpoint::FileContents::Other => Err(PottsError::Checkpoint {
            path: path.to_path_buf(),
            message: "exists and is not a warpmc checkpoint; choose another --checkpoint file".into(),
        }),
    }
}

/// Refuses a checkpoint at `path` that is not of the run `study` describes
/// (the same model and protocol, seed included, whatever the backend),
/// naming what differs.
fn check_same_run(study: &[ProtocolConfig], found: &ProtocolConfig, path: &Path) -> anyhow::Result<()> {
    let found = found.clone().with_backend(study[0].backend());
    let ours = study.iter().find(|c| c.size() == found.size()).unwrap_or(&study[0]);
    if *ours == found {
        return Ok(());
    }
    let (ours, theirs) = (serde_json::to_value(ours)?, serde_json::to_value(&found)?);
    let mut keys: Vec<&String> = ours
        .as_object()
        .into_iter()
        .chain(theirs.as_object())
        .flat_map(|o| o.keys())
        .filter(|k| ours.get(k.as_str()) != theirs.get(k.as_str()))
        .collect();
    keys.sort();
    keys.dedup();
    let shown = |v: Option<&serde_json::Value>| v.map_or_else(|| "none".to_string(), |v| v.to_string());
    let differences = keys
        .iter()
        .map(|k| format!("{k} {} here, {} there", shown(ours.get(k.as_str())), shown(theirs.get(k.as_str()))))
        .collect::<Vec<_>>()
        .join("; ");
    bail!(
        "--resume-existing: {} holds the checkpoint of another run ({differences}); name another --checkpoint file, \
         or continue that run with --resume {}",
        path.display(),
        path.display()
    )
}

/// Where a run read back from `path` starts again: the checkpoint's own
/// protocol (with --backend's backend, if given), writing on to `path`
/// unless the run has finished or --checkpoint names another file.
fn resumed(args: &RunArgs, path: &Path, found: checkpoint::Checkpoint) -> anyhow::Result<Start> {
    let checkpoint::Checkpoint { config: mut cfg, state } = found;
    if let Some(b) = args.backend {
        cfg = cfg.with_backend(b);
    }
    // A finished run's checkpoint holds its results, and its last
    // lattice only where the run wrote a snapshot: without it, refused,
    // not a snapshot of a lattice never swept.
    let finished = state.finished(&cfg) && cfg.study_sizes().last() == Some(&cfg.size());
    if let Some(snapshot) = &args.snapshot
        && finished
        && state.last_lattice().is_none()
    {
        bail!(
            "--snapshot {}: {} is the checkpoint of a finished run that wrote no snapshot, so it keeps its \
             results but not its lattices; only running again writes one (run it again with --snapshot)",
            snapshot.display(),
            path.display()
        );
    }
    // A finished run's checkpoint gives its results again without being
    // written (it may be an archived, read-only file), unless another
    // file is named to take it.
    let keep_writing = match &args.checkpoint {
        // The file --checkpoint names, as named (a hard link to the one read
        // is written under its own name); the very path read, as
        // --resume-existing gives it, is written only while the run is
        // unfinished.
        Some(other) if other != path => Some(other.clone()),
        _ => (!finished).then(|| path.to_path_buf()),
    };
    let sizes = cfg.study_sizes();
    let study = sizes.iter().map(|&l| cfg.for_size(l)).collect::<Result<Vec<_>, _>>()?;
    let first = sizes.iter().position(|&l| l == cfg.size()).unwrap_or(0);
    Ok(Start { study, first, state, checkpoint: keep_writing, resumed_from: Some(path.to_path_buf()) })
}

/// Every output path checked before any work starts: a snapshot's format,
/// that each file can be written, and that a new run's checkpoint file does
/// not hold another run's state.
fn check_outputs(
    args: &RunArgs,
    checkpoint: Option<&Path>,
    resumed_from: Option<&Path>,
) -> anyhow::Result<Vec<warpmc_host::output::Claim>> {
    // "-" would be a file of that name in the working directory; the
    // results table goes to standard output when --out is left out.
    for (option, path) in [
        ("--out", args.out.as_deref()),
        ("--snapshot", args.snapshot.as_deref()),
        ("--series", args.series.as_deref()),
        ("--checkpoint", args.checkpoint.as_deref()),
    ] {
        if path.is_some_and(|p| p.as_os_str() == "-") {
            bail!(
                "{option} -: this output is written to a file; name one (without --out the results go to standard output)"
            );
        }
    }
    if let Some(s) = &args.snapshot {
        let ext = s.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
        if !matches!(ext.as_deref(), Some("png" | "npy")) {
            bail!("snapshot file must end in .png or .npy: {}", s.display());
        }
    }
    if let Some(s) = &args.series
        && !s.extension().and_then(|e| e.to_str()).is_some_and(|e| e.eq_ignore_ascii_case("npy"))
    {
        bail!("the series file must end in .npy: {}", s.display());
    }
    // Resuming continues writing the checkpoint it read; any other output
    // at the path of an input or of another output would destroy it.
    // Standard output redirected to a file (`> r.csv`) is written too: an
    // output renamed over that file would take the printed results with it.
    let mut files: Vec<NamedFile<'_>> = warpmc_host::output::standard_output().into_iter().collect();
    if let Some(p) = &args.config {
        files.push(NamedFile::input("--config", p));
    }
    let resuming_in_place = |r: &Path| checkpoint.is_some_and(|c| warpmc_host::output::same_file(r, c));
    if let Some(p) = resumed_from.filter(|r| !resuming_in_place(r)) {
        files.push(NamedFile::input("--resume", p));
    }
    for (option, path) in
        [("--out", args.out.as_deref()), ("--snapshot", args.snapshot.as_deref()), ("--series", args.series.as_deref())]
    {
        if let Some(p) = path {
            files.push(NamedFile::output(option, p));
        }
    }
    if let Some(p) = checkpoint {
        let option = if args.checkpoint.is_some() { "--checkpoint" } else { "--resume" };
        files.push(NamedFile::output(option, p));
    }
    warpmc_host::output::check_distinct(&files).map_err(anyhow::Error::msg)?;
    // Claimed before they are looked at: two runs started together cannot
    // both find them free, and a run cannot replace a file another run is
    // writing (a job array whose file names forgot the task).
    let mut claims = Vec::new();
    for (what, path) in [
        ("--checkpoint file", checkpoint),
        ("--out file", args.out.as_deref()),
        ("--snapshot file", args.snapshot.as_deref()),
        ("--series file", args.series.as_deref()),
    ] {
        if let Some(path) = path {
            claims.extend(warpmc_host::output::Claim::take(path, what)?);
        }
    }
    if let Some(path) = checkpoint {
        // A device or a FIFO would take the state and never give it back.
        if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
            bail!(
                "{}: a checkpoint must be a regular file, to be read back with --resume (this is a device, a FIFO or \
                 a directory)",
                path.display()
            );
        }
        let resuming_here = resumed_from.is_some_and(|r| warpmc_host::output::same_file(r, path));
        if !resuming_here && !args.force {
            match checkpoint::probe(path)? {
                checkpoint::FileContents::Nothing => {}
                checkpoint::FileContents::Checkpoint => bail!(
                    "{p} already holds a run's checkpoint; continue that run with --resume {p} (a finished run's \
                     checkpoint gives its results again), or pass --force to start a new run over it",
                    p = path.display()
                ),
                checkpoint::FileContents::Other => bail!(
                    "{p} exists and is not a warpmc checkpoint; choose another --checkpoint file, or pass --force \
                     to overwrite it",
                    p = path.display()
                ),
            }
        }
    }
    // A run's checkpoint is the one thing a run cannot give back: no other
    // output replaces one (an --out that names the checkpoint file of
    // another run) unless asked to.
    for (option, path) in
        [("--out", args.out.as_deref()), ("--snapshot", args.snapshot.as_deref()), ("--series", args.series.as_deref())]
    {
        if let Some(path) = path {
            refuse_checkpoint(option, path, args.force)?;
        }
    }
    for path in
        [args.out.as_deref(), args.snapshot.as_deref(), args.series.as_deref(), checkpoint].into_iter().flatten()
    {
        warpmc_host::output::check_writable(path)?;
    }
    Ok(claims)
}

/// An output (`option` names it) must not replace a run's checkpoint
/// unless `force`: a checkpoint is the one thing a run cannot give back.
pub(crate) fn refuse_checkpoint(option: &str, path: &Path, force: bool) -> anyhow::Result<()> {
    if !force && matches!(checkpoint::probe(path), Ok(checkpoint::FileContents::Checkpoint)) {
        bail!(
            "{option} {p}: the file holds a run's checkpoint; name another file, or pass --force to replace it",
            p = path.display()
        );
    }
    Ok(())
}

/// What a run needs before its processes set off: where it starts, the
/// device, the Ctrl-C flag.
struct Prepared {
    start: Start,
    device: warpmc_gpu::Device,
    interrupted: Arc<AtomicBool>,
    /// The claims on the checkpoint and the other output files, held to
    /// the end of the run.
    claims: Vec<warpmc_host::output::Claim>,
}

/// Seconds between checkpoints unless --checkpoint-every says otherwise.
const DEFAULT_CHECKPOINT_SECONDS: f64 = 300.0;

/// Everything checked and opened before the first sweep (output paths by
/// the first process only: it alone writes them).
fn prepare(args: &RunArgs, team: &Team) -> anyhow::Result<Prepared> {
    if let Some(every) = args.checkpoint_every {
        if !every.is_finite() || every <= 0.0 {
            bail!("--checkpoint-every must be a positive number of seconds");
        }
        if args.checkpoint.is_none() && args.resume.is_none() {
            bail!("--checkpoint-every needs a checkpoint to write: give --checkpoint FILE (or --resume FILE)");
        }
    }
    let start = starting_point(args, team)?;
    warpmc_potts::protocol::check_study_memory_shared(
        &start.study,
        start.checkpoint.is_some(),
        team.processes_here() as u64,
    )?;
    let cfg = &start.study[start.first];
    // Exchanges come after sweeps every, 2·every, … before the last.
    if let Some(every) = cfg.exchange_every()
        && every >= cfg.sweeps_per_chain()
    {
        bail!(
            "--exchange-every {every} is not less than the run's {} sweeps (therm + sweeps): no replicas would ever \
             be exchanged",
            cfg.sweeps_per_chain()
        );
    }
    let mut claims = Vec::new();
    if team.is_first() {
        claims = check_outputs(args, start.checkpoint.as_deref(), start.resumed_from.as_deref())?;
        if let Some(series) = &args.series {
            // Written once, at the end: room for it is checked now, not
            // after the run (two numbers of 8 bytes a measurement).
            let measurements = start.study.iter().fold(0u64, |n, c| n.saturating_add(c.stored_measurements()));
            warpmc_host::output::check_space(series, measurements.saturating_mul(16).saturating_add(4096))?;
        }
    }
    let algorithm = start.study[start.first].algorithm();
    let backend = start.study[start.first].backend();
    // An update that only the CPU runs needs no GPU, even where one is
    // asked for (and missing).
    let device = if !algorithm.runs_on_gpu() && backend == BackendChoice::Cuda {
        team.device(BackendChoice::Cpu)?
    } else {
        // A checkpoint's backend may not be on this machine: another gives
        // the same bits.
        match (team.device(backend), &start.resumed_from) {
            (Err(e), Some(c)) if args.backend.is_none() => {
                return Err(e.context(format!(
                    "the run in {} asks for backend {backend} (--backend cpu continues it on the CPU, with the same \
                     bits)",
                    c.display()
                )));
            }
            (device, _) => device?,
        }
    };
    if !algorithm.runs_on_gpu() && (device.name() == "cuda" || backend == BackendChoice::Cuda) && team.is_first() {
        noteln!("note: {algorithm} updates run on the CPU, whatever the backend");
    }
    if team.is_first() {
        for w in cfg.start_warnings(start.resumed_from.is_some()) {
            noteln!("warning: {w}");
        }
    }
    // Ctrl-C (and SIGTERM from a batch system) stop the run at the next
    // sweep boundary, so that the checkpoint and the series are written
    // before the process ends. A second Ctrl-C ends the process at once: for
    // a stretch that takes long to end (a Wolff calibration on a large
    // lattice) or an output that blocks (a FIFO nobody reads).
    let interrupted = Arc::new(AtomicBool::new(false));
    super::stop_on_signals(interrupted.clone(), || {
        noteln!(
            "interrupted again: stopping at once (outputs not yet written are lost; files are replaced whole or not \
             at all)"
        );
        warpmc_host::output::remove_unfinished();
        std::process::exit(super::interrupted_status());
    })?;
    Ok(Prepared { start, device, interrupted, claims })
}

/// A temperature for the table's column: six decimals for ordinary values
/// (more where six would not tell it apart from its neighbours: all its
/// digits), scientific notation where they would show nothing (1e-7) or
/// too much.
fn temperature_column(t: f64) -> String {
    if !(1e-3..1e5).contains(&t.abs()) {
        return format!("{t:.4e}");
    }
    let six = format!("{t:.6}");
    if six.parse::<f64>() == Ok(t) { six } else { format!("{t}") }
}

fn run_protocol(args: RunArgs) -> anyhow::Result<()> {
    let team = Team::join(args.decompose, args.halo)?;
    if matches!(team, Team::Alone) && args.decompose != warpmc_mpi::Decompose::Auto {
        noteln!("warning: --decompose applies only under mpirun; this run is one process and ignores it");
    }
    if matches!(team, Team::Alone) && args.halo != warpmc_mpi::HaloTransport::Mpi {
        noteln!("warning: --halo applies only under mpirun; this run is one process and ignores it");
    } else if args.halo != warpmc_mpi::HaloTransport::Mpi
        && args.decompose == warpmc_mpi::Decompose::Ensemble
        && team.is_first()
    {
        noteln!("warning: --halo applies only to lattices cut into strips; --decompose ensemble deals them out whole");
    }
    let prepared = team.agree(prepare(&args, &team))?;
    match run_study(&args, &team, prepared) {
        Ok(Ended::Finished) => Ok(()),
        Ok(Ended::Interrupted) => team.exit(super::interrupted_status()),
        Err(e) => Err(team.fail(e)),
    }
}

/// How a run that did not fail ended.
enum Ended {
    /// Every temperature of every size is done, or whoever read stdout went
    /// away.
    Finished,
    /// Ctrl-C: the temperatures finished and the checkpoint are saved.
    Interrupted,
}

/// The exchange statistics of a tempering run's size, on stderr (`size`:
/// the lattice size, named when the study has several). They are those of
/// the rounds after thermalisation.
fn print_tempering_summary(cfg: &ProtocolConfig, state: &RunState, size: Option<usize>) {
    let Some(t) = state.tempering() else { return };
    let stats = t.replicas().stats();
    let thermalising = cfg.therm() / cfg.exchange_every().unwrap_or(u64::MAX).max(1);
    let acceptance = stats.acceptance();
    // A pair offered no swap yet (a run stopped before its first exchange)
    // has no rate: "-".
    let lowest = acceptance.iter().copied().filter(|a| !a.is_nan()).reduce(f64::min);
    noteln!(
        "tempering{}: {} exchange rounds after thermalisation, {} round trips; swap acceptance per pair {}{}",
        size.map(|l| format!(" (L = {l})")).unwrap_or_default(),
        stats.rounds.saturating_sub(thermalising),
        stats.round_trips,
        acceptance
            .iter()
            .map(|a| if a.is_nan() { "-".into() } else { format!("{a:.2}") })
            .collect::<Vec<_>>()
            .join(" "),
        lowest.map(|l| format!(" (lowest {l:.3})")).unwrap_or_default()
    );
    if stats.round_trips == 0 {
        noteln!(
            "warning: no replica went from the first temperature to the last and back: the replicas did not mix; \
             run longer or put the temperatures closer"
        );
    }
}

/// The run: every size of the study, then the series, the snapshot and the
/// summary lines (written and printed by the team's first process).
fn run_study(args: &RunArgs, team: &Team, prepared: Prepared) -> anyhow::Result<Ended> {
    let Prepared {
        start: Start { study, first, mut state, checkpoint: checkpoint_path, resumed_from },
        device,
        interrupted,
        claims: _claims,
    } = prepared;
    // A resumed run saves as often as the run it continues was given,
    // unless given another interval.
    state.set_checkpoint_every(args.checkpoint_every.or(state.checkpoint_every()));
    let checkpoint_every = state.checkpoint_every();
    let mut out: Option<Output> = None;
    let mut at = first;
    // The sizes of a study one after another, each on its own ensemble.
    let (result, mut runner) = loop {
        let cfg = &study[at];
        let mut r = team.agree(team.runner(cfg.clone(), &device))?;
        let updates = cfg.total_sweeps() as f64 * (cfg.size() * cfg.height()) as f64;
        if team.is_first() {
            noteln!(
                "potts: q = {}, {} × {}, {} temperature(s), {} sample(s), {} + {} {} sweeps each ({} site updates), {}",
                cfg.q(),
                cfg.size(),
                cfg.height(),
                cfg.temperatures().len(),
                cfg.samples(),
                cfg.therm(),
                cfg.sweeps(),
                cfg.algorithm(),
                sci(updates),
                if state.finished(cfg) {
                    "finished before: its results come from the checkpoint".to_string()
                } else {
                    format!("on {}", r.backend_description())
                }
            );
        }
        // A finished size (a finished run's checkpoint read back) is
        // described by the backend that ran it.
        let backend = state.size_backend(cfg, r.backend_description());
        let o = match out.as_mut() {
            Some(o) => o,
            None => {
                // The header's backend is the first size's: on resuming a
                // later size, the one its record names.
                let first_backend = state
                    .earlier_backends()
                    .find(|&(l, _)| l == study[0].size())
                    .map_or_else(|| backend.clone(), |(_, b)| b.to_string());
                let provenance = Provenance::new(&study[0], first_backend, option_env!("WARPMC_COMMIT"))?;
                let o = Output::new(
                    args,
                    provenance,
                    (checkpoint_path.clone(), checkpoint_every),
                    resumed_from.as_deref(),
                    interrupted.clone(),
                    team.is_first(),
                    study[0].measure_every(),
                )?;
                // What a resumed run had finished, with the backends that
                // ran its sizes.
                let o = out.insert(o);
                o.study = study.clone();
                for (l, b) in state.earlier_backends() {
                    o.backends.push((l, b.to_string()));
                }
                o.backends.push((cfg.size(), backend.clone()));
                for r in state.study_results(cfg)? {
                    match o.print(&r) {
                        Ok(()) => {}
                        // Whoever read them (`| head -1`) has gone. Only a
                        // lone process stops here: in a team only the first
                        // prints, and the others are already on their way
                        // to the sweeps, so it fails the team instead.
                        Err(PottsError::Interrupted) if o.reader_gone && team.processes() == 1 => {
                            return Ok(Ended::Finished);
                        }
                        Err(e) => {
                            return Err(anyhow::Error::new(e).context("printing the results the checkpoint holds"));
                        }
                    }
                }
                o
            }
        };
        o.begin_size(cfg, &state, backend)?;
        let result = r.run(&mut state, &mut TeamObserver::new(team, o));
        if result.is_ok() && team.is_first() {
            print_tempering_summary(cfg, &state, (study.len() > 1).then_some(cfg.size()));
        }
        if result.is_err() || at + 1 == study.len() {
            break (result, r);
        }
        state = state.next_size(cfg, &study[at + 1])?;
        at += 1;
    };
    let mut out = out.expect("the first size made the output");
    out.bar.finish_and_clear();
    // A finished run's checkpoint holds its end, not a state from before
    // it: resuming it gives the results at once, without sweeping again.
    // Every process holds the whole state (results, and any lattice kept
    // for a later temperature, gathered), so the first writes it; every
    // process then learns whether it could, so that a failure ends them
    // together, once the first has written the results below.
    let swept = result.is_ok();
    // The last lattice of a run that swept to its end (or, read back from a
    // finished run's checkpoint, the one it kept) is written first, and
    // kept in the finished run's checkpoint: when the snapshot fails,
    // `--resume --snapshot` writes it from there without running again.
    // Every process takes part in gathering it.
    let snapshot_error = match &args.snapshot {
        Some(path) if swept => {
            let lattice = match state.last_lattice() {
                Some(kept) => Ok(kept.clone()),
                None => runner.lattice(),
            };
            let written = lattice.map_err(anyhow::Error::from).and_then(|lattice| {
                if state.last_lattice().is_none() {
                    state.keep_last_lattice(&study[at], lattice.clone())?;
                }
                if !team.is_first() {
                    return Ok(());
                }
                // The lattice of the study's last size.
                let provenance = out.provenance_of(lattice.width())?;
                snapshot::write_snapshot(&lattice, path, &provenance.text_chunks())?;
                noteln!("snapshot: {}", path.display());
                Ok(())
            });
            team.agree(written).err()
        }
        _ => None,
    };
    // A lattice that could not be had (a device's or a gather's failure)
    // is not kept: a checkpoint this run saved on the way is then left as
    // it is rather than replaced by the finished run's, so that --resume
    // can run again what came after it and write the snapshot. Every
    // process takes the same branch: the snapshot's outcome is agreed.
    let keep_earlier =
        snapshot_error.is_some() && team.first_says(out.checkpoint_ours && state.last_lattice().is_none());
    let final_checkpoint = swept && checkpoint_path.is_some() && !keep_earlier;
    let result = match (result, &out.checkpoint_path) {
        (Ok(_), Some(path)) if team.is_first() && final_checkpoint => checkpoint::write(path, &study[at], &state),
        (result, _) => result.map(drop),
    };
    let result = if final_checkpoint { team.settle(result) } else { result };
    // The snapshot's failure, with what the checkpoint now holds.
    let kept = state.last_lattice().is_some();
    let snapshot_error = snapshot_error.map(|e| match &checkpoint_path {
        Some(c) if team.is_first() && final_checkpoint && result.is_ok() && kept => anyhow::anyhow!(
            "{e}; the checkpoint {c} keeps the finished run's last lattice: `--resume {c} --snapshot OTHER.png` \
             writes the snapshot without running again",
            c = c.display()
        ),
        Some(c) if team.is_first() && keep_earlier => anyhow::anyhow!(
            "{e}; the checkpoint {c} holds the state it last saved, not the finished run: `--resume {c} --snapshot \
             OTHER.png` runs again what came after it and writes the snapshot",
            c = c.display()
        ),
        Some(c) if team.is_first() && final_checkpoint && result.is_ok() => anyhow::anyhow!(
            "{e}; no checkpoint was saved before the run ended, so {c} takes the finished run's results, which do \
             not hold the lattice: only running again writes the snapshot",
            c = c.display()
        ),
        _ => e,
    });
    // The run's own failure, as said: the final checkpoint's with what the
    // file then holds.
    let run_error = |e: PottsError| -> anyhow::Error {
        // The first process wrote it; the others hear of its failure.
        match (&checkpoint_path, final_checkpoint && team.is_first()) {
            (Some(path), true) if path.exists() => anyhow::anyhow!(
                "{e}: the finished run's checkpoint was not written, and {p} holds the state it last saved (a \
                 --resume would run again what came after it; the results are in the table above)",
                p = path.display()
            ),
            (Some(_), true) => anyhow::anyhow!(
                "{e}: the finished run's checkpoint was not written, nor any before it (the results are in the \
                 table above)"
            ),
            // As it is: another process's failure is told apart by its type.
            _ => e.into(),
        }
    };
    // Before an error is returned, the other failures to keep what the run
    // made are said too.
    let say_also = |others: &[Option<&anyhow::Error>], run: &Result<_, PottsError>| {
        if !team.is_first() {
            return;
        }
        // A failure another process reported ends this one quietly.
        for e in others.iter().flatten().filter(|e| e.downcast_ref::<super::QuietExit>().is_none()) {
            noteln!("error: {e}");
        }
        if let Err(e) = run
            && !matches!(e, PottsError::Interrupted)
        {
            noteln!("error: {}", run_error(PottsError::InvalidInput(e.to_string())));
        }
    };
    // The checkpoint holds the run as far as it went: written just now at
    // its end, or on the way out of an interruption.
    let saved_in = out
        .checkpoint_path
        .clone()
        .filter(|_| matches!(result, Ok(_) | Err(PottsError::Interrupted)) && team.is_first());
    let elsewhere = |e: &dyn std::fmt::Display, flag: &str| match &saved_in {
        Some(c) => anyhow::anyhow!(
            "{e}; the checkpoint {c} holds the measurements: `--resume {c} {flag}` writes them elsewhere, running \
             again only what came after it",
            c = c.display()
        ),
        None => anyhow::anyhow!("{e}"),
    };
    // Results that came since the CSV was last written. Failing that is the
    // run's error unless it already has another.
    let csv_error = match (&result, out.write_csv()) {
        (Ok(_) | Err(PottsError::Interrupted), Err(e)) => Some(elsewhere(&e, "--out OTHER.csv")),
        (Err(_), Err(e)) => Some(anyhow::anyhow!("{e}")),
        _ => None,
    };
    // The first process alone writes files: every process learns whether
    // it could (a failure then ends them together, quietly but for the
    // first, instead of through MPI_Abort), unless some may be waiting for
    // a process that failed alone (which then ends them all).
    let together = team.knows_outcome(&result);
    let agree = |r: anyhow::Result<()>| if together { team.agree(r) } else { r };
    let csv_error = agree(csv_error.map_or(Ok(()), Err)).err();
    // Whatever ended the run, the measurements taken are kept, except that
    // a run stopped before any temperature finished leaves a file already
    // at the path as it was, as it leaves --out (the checkpoint, if any,
    // holds its measurements).
    let finished_any = result.is_ok() || !out.earlier.is_empty() || !out.current.is_empty();
    let series = args.series.as_deref().filter(|p| finished_any || std::fs::symlink_metadata(p).is_err());
    // A run stopped before it has taken what its series file already holds
    // of the same run (resumed from a checkpoint older than the file, or
    // the same command run again) leaves the file as it is, as it leaves
    // the CSV.
    let further = result.is_err()
        && team.is_first()
        && series.is_some_and(|path| snapshot::study_series_file_is_further(path, &study, &state));
    // Every process takes part in agreeing on the outcome, whatever it
    // sees of the file (processes may run in other directories).
    let written = match series {
        Some(path) if team.is_first() && !further => {
            snapshot::write_study_series(path, &study, &state).map_err(|e| elsewhere(&e, "--series OTHER.npy"))
        }
        _ => Ok(()),
    };
    if let Err(e) = agree(written) {
        say_also(&[csv_error.as_ref(), snapshot_error.as_ref()], &result);
        return Err(e);
    }
    let series_written = series.is_some() && !further;
    match (series, &args.series) {
        _ if !team.is_first() => {}
        (Some(path), _) if further => noteln!(
            "series: {} is as it was: it holds more of this run's measurements than this run has taken so far",
            path.display()
        ),
        (Some(path), _) => noteln!("series: {}", path.display()),
        (None, Some(path)) => noteln!(
            "series: {} is as it was: no temperature finished{}",
            path.display(),
            if saved_in.is_some() { " (the checkpoint holds the measurements taken)" } else { "" }
        ),
        (None, None) => {}
    }
    if let Some(e) = csv_error {
        say_also(&[snapshot_error.as_ref()], &result);
        return Err(e);
    }
    match result {
        Ok(_) => {}
        // Whoever read the results (`| head`) has gone: stop as quietly as
        // they did.
        Err(PottsError::Interrupted) if team.first_says(out.reader_gone) => return Ok(Ended::Finished),
        Err(PottsError::Interrupted) => {
            if team.is_first() {
                match &out.checkpoint_path {
                    Some(path) if args.resume_existing => noteln!(
                        "interrupted: state saved to {}; the same command (with --resume-existing) continues the run",
                        path.display()
                    ),
                    Some(path) => noteln!(
                        "interrupted: state saved to {p}; continue with: {launcher}warpmc potts run --resume {p}{outputs}",
                        p = path.display(),
                        launcher = if team.processes() > 1 { "mpirun … " } else { "" },
                        outputs = resume_outputs(args)
                    ),
                    None if !finished_any => noteln!(
                        "interrupted before any temperature finished: no temperature's results were written{}{series}; run with \
                         --checkpoint FILE to be able to continue a run",
                        args.out.as_ref().map(|p| format!(" ({} is as it was)", p.display())).unwrap_or_default(),
                        series = series_note(args, series_written)
                    ),
                    None => noteln!(
                        "interrupted: the temperatures finished so far are reported above{}{series}; run with \
                         --checkpoint FILE to be able to continue a run",
                        args.out.as_ref().map(|p| format!(" and in {}", p.display())).unwrap_or_default(),
                        series = series_note(args, series_written)
                    ),
                }
            }
            return Ok(Ended::Interrupted);
        }
        Err(e) => {
            say_also(&[snapshot_error.as_ref()], &Ok(()));
            return Err(run_error(e));
        }
    }
    if let Some(e) = snapshot_error {
        return Err(e);
    }
    if let Some(path) = &args.out
        && team.is_first()
    {
        noteln!("results: {}", path.display());
    }
    // Standard output that failed (a full disk under `--json > FILE`) lost
    // results a script may take as complete: the run ends in an error,
    // after everything else was written.
    if let Some(why) = &out.stdout_failure
        && team.is_first()
    {
        let kept = match (&args.out, &out.checkpoint_path) {
            (Some(csv), _) => format!("; {} holds them", csv.display()),
            (None, Some(c)) => format!(
                "; `warpmc potts run --resume {}{}` prints them again",
                c.display(),
                if args.json { " --json" } else { "" }
            ),
            (None, None) => String::new(),
        };
        bail!("standard output failed ({why}): the results printed there are incomplete{kept}");
    }
    Ok(Ended::Finished)
}

/// The output options a resumed run needs to write what this one would
/// have (the checkpoint does not hold them), shell-quoted where needed.
fn resume_outputs(args: &RunArgs) -> String {
    let quote = |p: &std::path::Path| {
        let t = p.display().to_string();
        if !t.is_empty() && t.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+,:=@%".contains(c)) {
            t
        } else {
            format!("'{}'", t.replace('\'', "'\\''"))
        }
    };
    let mut s = String::new();
    for (flag, path) in [("--out", &args.out), ("--series", &args.series), ("--snapshot", &args.snapshot)] {
        if let Some(p) = path {
            s += &format!(" {flag} {}", quote(p));
        }
    }
    if args.json {
        s += " --json";
    }
    // A setting the checkpoint does not hold (it holds
    // --checkpoint-every), as this run was given it.
    if let Some(n) = super::THREADS_GIVEN.get() {
        s += &format!(" --threads {n}");
    }
    s
}

/// What an interrupted run's message says of its `--series` file where
/// it was `written`: it holds the measurements taken (NaN for the rest).
/// (One left as it was has been named already.)
fn series_note(args: &RunArgs, written: bool) -> String {
    match &args.series {
        Some(p) if written => format!("; {} holds the measurements taken, NaN for the rest", p.display()),
        _ => String::new(),
    }
}

/// Progress bar, result printing, CSV, checkpoints: the run's observer.
struct Output {
    json: bool,
    /// Written with every result: CSV comment lines, a JSON `run` object.
    provenance: Provenance,
    /// Makes the JSON lines (`--json`) of the size `json_size`, whose
    /// width, height and backend the `run` object gives.
    json_lines: JsonLines,
    json_size: usize,
    /// The backend that ran each size of the study so far.
    backends: Vec<(usize, String)>,
    csv: Option<PathBuf>,
    bar: ProgressBar,
    /// Where standard error is no terminal (a batch job's log): a
    /// progress line now and then in place of the terminal's progress bar.
    log_progress: Option<LogProgress>,
    checkpoint_path: Option<PathBuf>,
    every: Duration,
    /// Time from the last periodic checkpoint to the next
    /// ([`checkpoint::next_interval`]).
    gap: Duration,
    last_checkpoint: Instant,
    /// Results of the study's sizes before the one running (CSV rows).
    earlier: Vec<TemperatureResult>,
    /// Results of the size running, as last reported.
    current: Vec<TemperatureResult>,
    /// The CSV rows of `earlier` and `current`, grown as results come in
    /// (rebuilding them per result made 10⁶ temperatures quadratic in time).
    csv_rows: String,
    /// How many results `csv_rows` holds.
    csv_rows_of: usize,
    /// Rows the CSV file already held, from this run, when it was resumed:
    /// the file is not written with fewer.
    csv_kept_rows: usize,
    /// When the CSV file was last written; rows since then are `csv_due`.
    csv_written: Option<Instant>,
    csv_due: bool,
    /// Whether the last write of the CSV failed (warned of once until a
    /// write succeeds).
    csv_failed: bool,
    /// Whether the rows have a tempering run's columns.
    csv_tempering: bool,
    /// Whether a size has begun.
    begun: bool,
    interrupted: Arc<AtomicBool>,
    printed_header: bool,
    /// Set when the last periodic checkpoint could not be written (warned
    /// of once until one is written again).
    checkpoint_failed: bool,
    /// Whether the checkpoint file holds a state of this run: it was
    /// resumed from it, or has saved one (a new run given --force over
    /// another run's file has not yet).
    checkpoint_ours: bool,
    /// Set when writing to stdout failed: nothing more is printed.
    stdout_closed: bool,
    /// Set when that ended the run (it writes no files): it ends quietly.
    reader_gone: bool,
    /// Why standard output failed, other than by its reader going away
    /// (which is not an error).
    stdout_failure: Option<String>,
    /// Whether the run writes files (`--out`, `--series`, `--snapshot`,
    /// `--checkpoint`): then a closed stdout does not end it.
    writes_files: bool,
    /// Prints and writes nothing: another process of an MPI team does.
    quiet: bool,
    /// Sweeps between measurements (the same for every size of a study).
    measure_every: u64,
    /// The lattice size whose warning about the tempered replicas' summed
    /// energy was printed last.
    replicas_warned: Option<usize>,
    /// Rows flagged too_short so far, each warned of up to
    /// [`MAX_ROW_WARNINGS`].
    rows_flagged: u64,
    /// The protocol of each size, for telling why a row was flagged.
    study: Vec<ProtocolConfig>,
}

/// Rows whose too_short warning is printed; beyond them one line says the
/// rest are flagged in the output only (a list of a million temperatures
/// would otherwise print a million warnings).
const MAX_ROW_WARNINGS: u64 = 100;

/// Progress for a log: a line after the first minute of each size's
/// sweeps, then every [`LOG_PROGRESS_EVERY`], with the share done and the
/// time left at the pace so far.
#[derive(Debug)]
struct LogProgress {
    size: usize,
    /// Which size of the study it is (from 1), and how many there are.
    of: (usize, usize),
    since: Instant,
    from: u64,
    next: Instant,
}

/// How often a log gets a progress line.
const LOG_PROGRESS_EVERY: Duration = Duration::from_secs(600);

impl Default for LogProgress {
    fn default() -> Self {
        let now = Instant::now();
        LogProgress { size: 0, of: (1, 1), since: now, from: 0, next: now + Duration::from_secs(60) }
    }
}

impl LogProgress {
    fn begin(&mut self, size: usize, of: (usize, usize), done: u64) {
        *self = LogProgress { size, of, from: done, ..LogProgress::default() };
    }

    fn report(&mut self, done: u64, total: u64) {
        let now = Instant::now();
        if now < self.next || total == 0 || done >= total {
            return;
        }
        self.next = now + LOG_PROGRESS_EVERY;
        let secs = now.duration_since(self.since).as_secs_f64();
        let rate = done.saturating_sub(self.from) as f64 / secs.max(1e-9);
        // The time left is this size's: later sizes run at other rates.
        let (which, this_size) = match self.of {
            (k, n) if n > 1 => (format!(" (size {k} of {n})"), if k < n { " for this size" } else { "" }),
            _ => (String::new(), ""),
        };
        let left = if rate > 0.0 {
            format!(", {} left{this_size}", super::about((total - done) as f64 / rate))
        } else {
            String::new()
        };
        noteln!(
            "progress: L = {}{which}: {:.1} % of {} sweeps, {} so far{left}",
            self.size,
            100.0 * done as f64 / total as f64,
            sci(total as f64),
            super::duration(secs)
        );
    }
}

impl Output {
    /// The output of a run; `writes` is false for the processes of an MPI
    /// team but the first. `checkpoint` is the file the run saves its
    /// state to, if any, and the seconds between saves, if not the
    /// default; `resumed_from` the checkpoint the run continues.
    fn new(
        args: &RunArgs,
        provenance: Provenance,
        (checkpoint_path, checkpoint_every): (Option<PathBuf>, Option<f64>),
        resumed_from: Option<&Path>,
        interrupted: Arc<AtomicBool>,
        writes: bool,
        measure_every: u64,
    ) -> anyhow::Result<Self> {
        // Beyond Duration's range means "never on a timer".
        let every = Duration::try_from_secs_f64(checkpoint_every.unwrap_or(DEFAULT_CHECKPOINT_SECONDS))
            .unwrap_or(Duration::MAX);
        let terminal = std::io::stderr().is_terminal();
        let log_progress = (writes && !terminal).then(LogProgress::default);
        let bar = if writes && terminal {
            let b = ProgressBar::new(0);
            b.set_style(
                ProgressStyle::with_template("{prefix}{bar:40} {pos}/{len} sweeps  {per_sec}  eta {eta}")
                    .expect("valid template"),
            );
            b
        } else {
            ProgressBar::hidden()
        };
        // A resumed run may start from a checkpoint older than its CSV
        // (stopped by kill -9 after a temperature finished): that file's
        // rows are kept until the run has as many again.
        let csv_kept_rows = match (&args.out, resumed_from) {
            (Some(path), Some(_)) if writes => rows_of_this_run(path, &provenance.to_json()),
            _ => 0,
        };
        Ok(Output {
            csv_kept_rows,
            json: args.json,
            json_lines: JsonLines::new(&provenance),
            json_size: provenance.width,
            backends: Vec::new(),
            provenance,
            csv: args.out.clone().filter(|_| writes),
            bar,
            log_progress,
            checkpoint_path: checkpoint_path.clone().filter(|_| writes),
            every,
            gap: every,
            last_checkpoint: Instant::now(),
            earlier: Vec::new(),
            current: Vec::new(),
            csv_rows: String::new(),
            csv_rows_of: 0,
            csv_written: None,
            csv_due: false,
            csv_failed: false,
            csv_tempering: false,
            begun: false,
            interrupted,
            printed_header: false,
            checkpoint_failed: false,
            checkpoint_ours: match (resumed_from, &checkpoint_path) {
                (Some(r), Some(c)) => warpmc_host::output::same_file(r, c),
                _ => false,
            },
            stdout_closed: false,
            reader_gone: false,
            stdout_failure: None,
            writes_files: args.out.is_some()
                || args.series.is_some()
                || args.snapshot.is_some()
                || checkpoint_path.is_some(),
            quiet: !writes,
            measure_every,
            replicas_warned: None,
            rows_flagged: 0,
            study: Vec::new(),
        })
    }

    /// A size of the study starts (or resumes at `state`): the progress bar
    /// counts its sweeps, and the CSV keeps the results of the sizes before
    /// it (those of the size just finished, or on resuming those the
    /// checkpoint holds).
    fn begin_size(&mut self, cfg: &ProtocolConfig, state: &RunState, backend: String) -> anyhow::Result<()> {
        self.backends.retain(|(l, _)| *l != cfg.size());
        self.backends.push((cfg.size(), backend));
        // The CSV's header names this size's backend from now on: the
        // file is written again with it, even if the run stops before
        // this size's first row.
        self.csv_due |= self.csv_rows_of > 0;
        self.json_for(cfg.size())?;
        if self.begun {
            let done = std::mem::take(&mut self.current);
            self.earlier.extend(done);
        } else {
            // On resuming, those of this size the checkpoint holds too; the
            // CSV gets them whether or not another temperature finishes
            // (a finished run's checkpoint has nothing left to run).
            self.earlier = state.earlier_results(cfg)?;
            self.current = state.results(cfg)?;
            self.begun = true;
            if !self.earlier.is_empty() || !self.current.is_empty() {
                let all = self.current.clone();
                self.set_csv_rows(&all);
            }
        }
        self.bar.set_length(cfg.total_sweeps());
        self.bar.set_position(state.sweeps_done(cfg));
        let sizes = &self.provenance.sizes;
        let which = (sizes.iter().position(|&l| l == cfg.size()).map_or(1, |i| i + 1), sizes.len());
        if which.1 > 1 {
            self.bar.set_prefix(format!("L = {} ({} of {}) ", cfg.size(), which.0, which.1));
        }
        if let Some(p) = &mut self.log_progress {
            p.begin(cfg.size(), which, state.sweeps_done(cfg));
        }
        Ok(())
    }

    /// The provenance of the results of size `l`: its lattice and, where
    /// it has run, its backend.
    fn provenance_of(&self, l: usize) -> anyhow::Result<Provenance> {
        let backend = self.backends.iter().find(|(size, _)| *size == l).map(|(_, b)| b.as_str());
        Ok(self.provenance.at_size(l, backend)?)
    }

    /// Makes the JSON lines carry the provenance of size `l`.
    fn json_for(&mut self, l: usize) -> anyhow::Result<()> {
        self.json_lines = JsonLines::new(&self.provenance_of(l)?);
        self.json_size = l;
        Ok(())
    }

    /// Prints a row ([`Output::emit`]). Its files are what a run is for:
    /// it goes on without printing, whatever stopped the printing (a
    /// closed pipe, a full disk under a log). Without any, a closed pipe
    /// ends it as quietly as `cat` ([`PottsError::Interrupted`] with
    /// `reader_gone` set).
    fn print(&mut self, result: &TemperatureResult) -> Result<(), PottsError> {
        let Err(e) = self.emit(result) else { return Ok(()) };
        let Some(io) = e.downcast_ref::<std::io::Error>() else {
            return Err(PottsError::InvalidInput(format!("writing results: {e:#}")));
        };
        if !self.writes_files {
            if io.kind() == ErrorKind::BrokenPipe {
                (self.stdout_closed, self.reader_gone) = (true, true);
                return Err(PottsError::Interrupted);
            }
            return Err(PottsError::InvalidInput(format!("writing results: {e:#}")));
        }
        self.stdout_closed = true;
        let why = if io.kind() == ErrorKind::BrokenPipe {
            "was closed".to_string()
        } else {
            self.stdout_failure = Some(io.to_string());
            format!("failed ({io})")
        };
        self.bar.suspend(|| noteln!("note: standard output {why}; the run goes on and writes its files"));
        Ok(())
    }

    fn emit(&mut self, r: &TemperatureResult) -> anyhow::Result<()> {
        if r.size != self.json_size {
            self.json_for(r.size)?;
        }
        if self.quiet {
            return Ok(());
        }
        // The replicas' relaxation holds for every row of the size: said
        // once, before the first row, whatever else flagged the rows (their
        // own τ_int can be far shorter than the replicas').
        if let Some(tau) = r.replica_tau_int
            && spans_too_few_taus(r.measurements, self.measure_every, tau)
            && self.replicas_warned != Some(r.size)
        {
            self.replicas_warned = Some(r.size);
            self.bar.suspend(|| {
                noteln!(
                    "warning: L = {}: the replicas' summed energy, which swaps do not change, has τ_int = {tau:.1} \
                     sweeps, and the {} measurements per temperature span fewer than {TOO_SHORT_TAUS} of it: the \
                     replicas themselves have not relaxed (at a first-order transition, the share of them in each \
                     phase), so the error bars may be several times too small; every row is flagged too_short: run \
                     more --sweeps or --samples",
                    r.size,
                    r.measurements,
                )
            });
        }
        if r.too_short {
            self.rows_flagged += 1;
        }
        if r.too_short && self.rows_flagged == MAX_ROW_WARNINGS + 1 {
            self.bar.suspend(|| {
                noteln!(
                    "warning: more rows are too short to trust; their warnings are not printed, but the too_short, \
                     slow_mode and transient fields (--json, --out) flag each"
                )
            });
        }
        if r.too_short && self.rows_flagged <= MAX_ROW_WARNINGS {
            let replicas_unrelaxed =
                r.replica_tau_int.is_some_and(|tau| spans_too_few_taus(r.measurements, self.measure_every, tau));
            // q = 2 Metropolis far above T_c, warned of before the run.
            let alternating =
                self.study.iter().find(|c| c.size() == r.size).is_some_and(|c| c.too_short_to_alternate(r.temperature));
            let tau_sweeps = r.tau_int_energy.max(r.tau_int_magnetization);
            let tau = if tau_sweeps.is_finite() {
                format!("τ_int = {tau_sweeps:.1} sweeps")
            } else {
                "τ_int unknown".to_string()
            };
            // "L = 16, T = 1.1" in a study of several sizes.
            let at = match self.provenance.sizes.len() {
                1 => format!("T = {}", temperature_text(r.temperature)),
                _ => format!("L = {}, T = {}", r.size, temperature_text(r.temperature)),
            };
            self.bar.suspend(|| {
                // Said beside any other reason: more --therm cures this one.
                if r.transient {
                    noteln!(
                        "warning: {at}: the first sixteenth of its measurements differs from the rest (e or m more \
                         than {TRANSIENT_Z} error bars apart): most likely the chain was still leaving its start \
                         when measuring began, and its means, the specific heat, susceptibility and Binder cumulant \
                         most of all, carry that start: run more --therm sweeps (or start nearer equilibrium, --init)"
                    )
                }
                if r.slow_mode {
                    noteln!(
                        "warning: {at}: its batch means spread more than its autocorrelation (τ_int) allows: a slow \
                         mode (metastable phases, replicas crossing a first-order transition) the run has not \
                         resolved. Its error bars were widened to that spread ({tau}) and may still be low: run \
                         more --sweeps or --samples"
                    )
                } else if r.energy_err == 0.0 || r.magnetization_err == 0.0 {
                    noteln!(
                        "warning: {at}: its {} measurements of e or m never changed, so the run has no error bar to \
                         give (the 0 reported is not one): run more --sweeps or --samples, or check that the lattice \
                         can move at this temperature",
                        r.measurements,
                    )
                } else if r.measurements < 2 {
                    noteln!(
                        "warning: {at}: a single measurement has no error bar (and no τ_int): run more --sweeps or \
                         --samples"
                    )
                } else if spans_too_few_taus(r.measurements, self.measure_every, tau_sweeps) {
                    noteln!(
                        "warning: {at}: its {} measurements, {} sweeps apart, span fewer than {TOO_SHORT_TAUS} τ_int \
                         ({tau}); its error bars are not to be trusted: run more --sweeps or --samples",
                        r.measurements,
                        self.measure_every,
                    )
                } else if !r.transient && !replicas_unrelaxed && !alternating {
                    noteln!(
                        "warning: {at}: e or m made fewer than {MIN_EXCURSIONS} excursions to one side of its mean in \
                         {} measurements (rare excitations): its errors are a count of a few events, not to be \
                         trusted: run more --sweeps or --samples",
                        r.measurements,
                    )
                }
                // Otherwise the replicas' summed energy or the transient
                // check alone flagged it.
            });
        }
        if self.stdout_closed {
            return Ok(());
        }
        let mut stdout = std::io::stdout().lock();
        if self.json {
            writeln!(stdout, "{}", self.json_lines.line(r))?;
        } else {
            if !self.printed_header {
                self.bar.suspend(|| {
                    writeln!(
                        stdout,
                        "{:>6} {:>10} {:>22} {:>20} {:>17} {:>17} {:>17} {:>9}",
                        "L", "T", "energy", "order parameter", "binder", "specific heat", "susceptibility", "flips/ns"
                    )
                })?;
                self.printed_header = true;
            }
            let pm = |v: f64, e: f64, w: usize| format!("{:>w$}", with_error(v, e));
            self.bar.suspend(|| {
                writeln!(
                    stdout,
                    "{:>6} {:>10} {} {} {} {} {} {:>9.3}",
                    r.size,
                    temperature_column(r.temperature),
                    pm(r.energy, r.energy_err, 22),
                    pm(r.magnetization, r.magnetization_err, 20),
                    pm(r.binder, r.binder_err, 17),
                    pm(r.specific_heat, r.specific_heat_err, 17),
                    pm(r.susceptibility, r.susceptibility_err, 17),
                    r.flips_per_ns
                )
            })?;
        }
        stdout.flush()?;
        Ok(())
    }
}

/// A value with its error in the last two digits, as in -1.9288(32), or in
/// scientific notation where either is very small or very large, as in
/// -3.12(45)e-71. An error that is zero, or at the rounding noise of a
/// series that never changed (below 10⁻¹² of the value, or below 5·10⁻¹³
/// of a value that is zero), is not an error bar: "(?)".
pub(crate) fn with_error(v: f64, e: f64) -> String {
    let noise = if v == 0.0 || !v.is_finite() { 5e-13 } else { v.abs() * 1e-12 };
    let plain = |x: f64| x == 0.0 || (1e-4..1e7).contains(&x.abs()) || !x.is_finite();
    if !(e.is_finite() && e > 0.0 && e >= noise) {
        return if plain(v) { format!("{v:.6}(?)") } else { format!("{v:.6e}(?)") };
    }
    // The error's second significant digit is the last one printed.
    let last = e.log10().floor() as i32 - 1;
    if plain(v) && e < 1e7 && last >= -12 {
        let decimals = (-last).max(0) as usize;
        let digits = (e * 10f64.powi(decimals as i32)).round();
        return format!("{v:.decimals$}({digits})");
    }
    let lead = if v.is_finite() && v.abs() > e { v.abs().log10().floor() as i32 } else { last + 1 };
    let decimals = (lead - last) as usize;
    let digits = (e / 10f64.powi(last)).round();
    format!("{:.decimals$}({digits})e{lead}", v / 10f64.powi(lead))
}

/// Results that come faster than this are written to the CSV together
/// (and all of them when the run ends, however it ends).
const CSV_EVERY: Duration = Duration::from_secs(1);

/// The rows of results in the CSV file at `path` when it was written by the
/// run whose provenance (as JSON) is `provenance`, on any backend (a run
/// resumed on another node or with other `--threads` is the same run: the
/// backends give the same bits); 0 when it was not, or cannot be read.
fn rows_of_this_run(path: &Path, provenance: &str) -> usize {
    use std::io::BufRead;
    // Only a regular file holds rows to count: opening a FIFO to read waits
    // for a writer, and reading /dev/stdout (a pipe, a terminal) would read
    // this run's own output or the keyboard.
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return 0;
    }
    let Ok(file) = std::fs::File::open(path) else { return 0 };
    let mut reader = std::io::BufReader::new(file);
    // The comment lines come first, the provenance last among them; a file
    // whose first lines are not short comments is another file.
    let mut line = String::new();
    let file_provenance = loop {
        line.clear();
        match std::io::Read::take(&mut reader, 1 << 20).read_line(&mut line) {
            Ok(n) if n > 0 && line.ends_with('\n') && line.starts_with('#') => {}
            _ => return 0,
        }
        if let Some(json) = line.trim_end().strip_prefix("# provenance: ") {
            break json.to_string();
        }
    };
    if !same_run_on_any_backend(&file_provenance, provenance) {
        return 0;
    }
    // After the comment: perhaps "# incomplete", the column names, the rows.
    let lines = reader.lines().map_while(Result::ok).filter(|l| !l.starts_with('#') && !l.is_empty()).count();
    lines.saturating_sub(1)
}

/// Whether two provenances (as JSON) are of the same run but for the
/// backend that ran it and the one asked for.
fn same_run_on_any_backend(a: &str, b: &str) -> bool {
    let without_backend = |text: &str| {
        let mut v: serde_json::Value = serde_json::from_str(text).ok()?;
        let run = v.as_object_mut()?;
        run.remove("backend");
        run.get_mut("config")?.as_object_mut()?.remove("backend");
        Some(v)
    };
    matches!((without_backend(a), without_backend(b)), (Some(x), Some(y)) if x == y)
}

impl Output {
    /// The CSV rows: the earlier sizes' results, then `all` of the size
    /// running.
    fn set_csv_rows(&mut self, all: &[TemperatureResult]) {
        self.csv_rows.clear();
        for r in self.earlier.iter().chain(all) {
            self.csv_rows += &r.csv_row();
            self.csv_rows.push('\n');
        }
        self.csv_rows_of = self.earlier.len() + all.len();
        self.csv_tempering = self.earlier.first().or(all.first()).is_some_and(|r| r.round_trips.is_some());
        self.csv_due = true;
    }

    /// Writes the CSV while the run goes on. A failure (a full disk, a
    /// directory gone) does not stop the run: the rows stay due and the
    /// next result, and the run's end, try again; the run's end reports
    /// the error if the last try fails too.
    fn write_csv_or_warn(&mut self) {
        if let Err(e) = self.write_csv() {
            if !self.csv_failed {
                self.bar
                    .suspend(|| noteln!("warning: {e}; the run goes on and writes the results file again when it can"));
                self.csv_failed = true;
            }
        } else {
            self.csv_failed = false;
        }
    }

    /// Writes the CSV file with every result so far, if any came since the
    /// last write.
    fn write_csv(&mut self) -> warpmc_potts::Result<()> {
        let Some(path) = self.csv.as_ref().filter(|_| self.csv_due && self.csv_rows_of >= self.csv_kept_rows) else {
            return Ok(());
        };
        let mut columns = CSV_COLUMNS.to_vec();
        if self.csv_tempering {
            columns.extend(TEMPERING_CSV_COLUMNS);
        }
        // A file of fewer rows than the study has says so (the run is still
        // going, or stopped), so that it is not taken for the whole study.
        let total = self.provenance.sizes.len() * self.provenance.config.temperatures().len();
        let incomplete = if self.csv_rows_of < total {
            let go_on = match &self.checkpoint_path {
                Some(c) => format!("--resume {} continues it", c.display()),
                None => "it has no checkpoint: a run with --checkpoint can be continued".to_string(),
            };
            format!(
                "# incomplete: {} of {total} rows (the run is going on or was stopped; {go_on})\n",
                self.csv_rows_of
            )
        } else {
            String::new()
        };
        let header = self.provenance.study_comment_lines(&self.backends);
        let text = header + &incomplete + &columns.join(",") + "\n" + &self.csv_rows;
        warpmc_host::output::write_bytes(path, text.as_bytes())?;
        self.csv_written = Some(Instant::now());
        self.csv_due = false;
        Ok(())
    }
}

impl Observer for Output {
    fn progress(&mut self, done: u64, total: u64) {
        self.bar.set_position(done);
        if let Some(p) = &mut self.log_progress {
            p.report(done, total);
        }
    }

    fn temperature_done(&mut self, result: &TemperatureResult, all: &[TemperatureResult]) -> warpmc_potts::Result<()> {
        self.temperatures_done(std::slice::from_ref(result), all)
    }

    fn temperatures_done(&mut self, new: &[TemperatureResult], all: &[TemperatureResult]) -> warpmc_potts::Result<()> {
        // Usually the new results extend those of the size so far.
        let extends = self.current.len() + new.len() == all.len();
        // The file first: it must hold every finished temperature even when
        // stdout has gone (and a run whose first result cannot be written
        // has finished none).
        if self.csv.is_some() {
            let held = self.earlier.len() + all.len();
            if extends && self.csv_rows_of + new.len() == held {
                for r in new {
                    self.csv_rows += &r.csv_row();
                    self.csv_rows.push('\n');
                }
                self.csv_rows_of = held;
                self.csv_due = true;
            } else {
                self.set_csv_rows(all);
            }
            self.csv_tempering = self.earlier.first().or(all.first()).is_some_and(|r| r.round_trips.is_some());
            if self.csv_written.is_none_or(|t| t.elapsed() >= CSV_EVERY) {
                self.write_csv_or_warn();
            }
        }
        if extends {
            self.current.extend_from_slice(new);
        } else {
            self.current = all.to_vec();
        }
        for result in new {
            self.print(result)?;
        }
        Ok(())
    }

    fn control(&mut self) -> Control {
        // Without a checkpoint file, "checkpoint and stop" only stops.
        if self.interrupted.load(Ordering::SeqCst) {
            Control::CheckpointAndStop
        } else if self.checkpoint_path.is_some() && self.last_checkpoint.elapsed() >= self.gap {
            Control::Checkpoint
        } else {
            Control::Continue
        }
    }

    fn checkpoint(&mut self, cfg: &ProtocolConfig, state: &RunState) -> warpmc_potts::Result<()> {
        let Some(path) = &self.checkpoint_path else { return Ok(()) };
        let started = Instant::now();
        let written = checkpoint::write(path, cfg, state);
        self.gap = checkpoint::next_interval(self.every, started.elapsed());
        match written {
            Ok(()) => {
                self.checkpoint_failed = false;
                self.checkpoint_ours = true;
            }
            // On the way out the state must be saved: the error ends the
            // run and says so, and what the file still holds.
            Err(e) if self.interrupted.load(Ordering::SeqCst) => {
                let held = if self.checkpoint_ours
                    && checkpoint::probe(path).is_ok_and(|c| c == checkpoint::FileContents::Checkpoint)
                {
                    format!(
                        "{p} still holds the checkpoint saved before (`--resume {p}` runs again what came after it)",
                        p = path.display()
                    )
                } else {
                    "this run saved no checkpoint before it".to_string()
                };
                return Err(PottsError::InvalidInput(format!("{e}: the state at the stop was not saved; {held}")));
            }
            // On the way (a full disk for a while): the previous checkpoint
            // is left whole, the run goes on and tries again next time.
            Err(e) => {
                if !self.checkpoint_failed {
                    self.bar.suspend(|| {
                        noteln!(
                            "warning: {e}; the previous checkpoint is kept, and the run goes on and tries again every {} s",
                            self.gap.as_secs_f64()
                        )
                    });
                    self.checkpoint_failed = true;
                }
            }
        }
        self.last_checkpoint = Instant::now();
        Ok(())
    }
}

/// Refuses a list that names a value twice (it would be timed twice).
pub(crate) fn no_repeats<T: PartialEq + std::fmt::Display>(flag: &str, values: &[T]) -> anyhow::Result<()> {
    match values.iter().enumerate().find(|(i, v)| values[..*i].contains(v)) {
        Some((_, v)) => bail!("{flag} lists {v} twice"),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::with_error;

    #[test]
    fn error_bars_print_in_the_last_two_digits_or_as_unknown() {
        assert_eq!(with_error(-1.92881, 0.00032), "-1.92881(32)");
        assert_eq!(with_error(148.0, 145.0), "148(145)");
        // Zero, rounding noise, NaN and infinity are no error bars.
        for e in [0.0, 3e-13, f64::NAN, f64::INFINITY] {
            assert_eq!(with_error(0.5625, e), "0.562500(?)", "{e}");
        }
        assert_eq!(with_error(0.0, 1e-13), "0.000000(?)");
        // Very small and very large values and errors in scientific notation.
        assert_eq!(with_error(-3.1234e-71, 4.5e-72), "-3.12(45)e-71");
        assert_eq!(with_error(3.523e68, 1.6465e68), "3.5(16)e68");
        assert_eq!(with_error(2.0e-9, 3.0e-8), "0.2(30)e-8");
        assert_eq!(with_error(1.2345e9, 120.0), "1.23450000(12)e9");
        assert_eq!(with_error(-3.1e-71, 0.0), "-3.100000e-71(?)");
        assert_eq!(with_error(-3.1e-71, 1e-90), "-3.100000e-71(?)");
        // Moderate values with tiny errors keep the fixed form up to 12 decimals.
        assert_eq!(with_error(0.25, 1.2e-11), "0.250000000000(12)");
    }
}
