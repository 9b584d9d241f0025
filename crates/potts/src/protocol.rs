//! A temperature sweep as a first-class run, the protocol of Ferrero, De
//! Francesco, Wolovick and Cannas (2012): a list of temperatures; at each,
//! `samples` independent chains, each thermalised for `therm` sweeps and
//! then measured every `measure_every` sweeps for `sweeps` sweeps; chains
//! start ordered or random, or continue from the state they reached at the
//! previous temperature.
//!
//! [`ProtocolConfig`] is the validated description; [`ConfigFile`] is its
//! TOML form (every key optional so the command line can fill in or
//! override); [`Runner`] executes it on a [`Simulation`], reporting to an
//! [`Observer`] and stopping cleanly at any sweep for a checkpoint.
//!
//! ```
//! use warpmc_potts::{ConfigFile, Runner, Temperatures};
//!
//! let cfg = ConfigFile {
//!     q: Some(2),
//!     size: Some(16),
//!     temps: Some(Temperatures::List(vec![0.8, 3.0])),
//!     therm: Some(200),
//!     sweeps: Some(400),
//!     backend: Some(warpmc_potts::BackendChoice::Cpu),
//!     ..Default::default()
//! }
//! .resolve()?;
//! let results = Runner::new(cfg)?.run_all()?;
//! assert!(results[0].magnetization > 0.9); // ordered below T_c ≈ 1.13
//! assert!(results[1].magnetization < 0.5); // disordered above
//! # Ok::<(), warpmc_potts::PottsError>(())
//! ```

use std::path::Path;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use warpmc_gpu::BackendChoice;

use crate::algorithm::{ALWAYS, MAX_CHAIN_INDEX, MAX_SWEEPS_PER_CHAIN};
use crate::backend::{Backend, open_backend_for};
use crate::ensemble::{Ensemble, EnsembleOpener};
use crate::error::{PottsError, Result};
use crate::lattice::{InitialState, Lattice};
use crate::model::{PottsModel, check_temperature};
use crate::observables::{Measurement, RunFacts, TemperatureResult, analyze, spans_too_few_taus};
use crate::simulation::{Chain, Simulation};
use crate::tempering::{ExchangeStats, Stop, TemperingState, summed_energy_tau_int};
use crate::update::{Algorithm, Update};

/// Host bytes one stored measurement may take: two f64 in a vector whose
/// capacity may have doubled.
pub const MEASUREMENT_HOST_BYTES: u64 = 2 * std::mem::size_of::<Measurement>() as u64;

/// What a user can do when the measurements do not fit.
pub const MEASURE_LESS: &str = "measure less often, run fewer sweeps or samples, or split the run";

/// Temperatures of a run: a single value, an inclusive range with a step,
/// or an explicit list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Temperatures {
    /// `"T0:T1:dT"`: T0, T0 + dT, … up to T1 (inclusive, with a tolerance of
    /// 10⁻⁹·dT for rounding), going down when dT < 0 (T1 ≤ T0); a string
    /// without a colon is a comma list, `"1.0,1.1"` (as `--temps` takes it).
    Range(String),
    /// An explicit list, in run order.
    List(Vec<f64>),
}

impl Temperatures {
    /// The temperatures in run order, validated.
    ///
    /// ```
    /// use warpmc_potts::Temperatures;
    /// let t = Temperatures::Range("0.7212:0.721347:0.00001".into()).expand().unwrap();
    /// assert_eq!(t.len(), 15);
    /// assert_eq!(t[1], 0.72121);
    /// assert_eq!(t[14], 0.72134);
    /// ```
    pub fn expand(&self) -> Result<Vec<f64>> {
        let temps = match self {
            Temperatures::List(v) => v.clone(),
            Temperatures::Range(s) if !s.contains(':') => s
                .split(',')
                .map(|t| {
                    t.trim().parse::<f64>().map_err(|_| {
                        PottsError::InvalidInput(format!(
                            "temperatures '{s}': '{t}' is not a number (a list is T1,T2,…; a range T0:T1:DT)"
                        ))
                    })
                })
                .collect::<Result<Vec<f64>>>()?,
            Temperatures::Range(s) => {
                let parts: Vec<&str> = s.split(':').collect();
                let bad = || {
                    PottsError::InvalidInput(format!(
                        "temperature range '{s}' must be T0:T1:DT with DT > 0 going up (T0 ≤ T1) or DT < 0 going \
                         down (T1 ≤ T0), e.g. 0.7:0.8:0.01 or 0.8:0.7:-0.01"
                    ))
                };
                let [a, b, d] = parts.as_slice() else { return Err(bad()) };
                let (a, b, d): (f64, f64, f64) = (
                    a.trim().parse().map_err(|_| bad())?,
                    b.trim().parse().map_err(|_| bad())?,
                    d.trim().parse().map_err(|_| bad())?,
                );
                let up = d > 0.0 && b >= a;
                let down = d < 0.0 && b <= a;
                if !((up || down) && d.is_finite() && a.is_finite() && b.is_finite()) {
                    return Err(bad());
                }
                // Counted in f64 first (a tiny DT gives a huge or infinite count,
                // which would overflow the integer; never NaN, as (b - a)/d ≥ 0).
                let steps = ((b - a) / d + 1e-9).floor();
                if steps >= (MAX_CHAIN_INDEX - 1) as f64 {
                    return Err(PottsError::InvalidInput(format!(
                        "temperature range '{s}' has too many points (at most {})",
                        MAX_CHAIN_INDEX - 1
                    )));
                }
                let n = steps as u64 + 1;
                // T0 + i·dT rounded to the decimals the user wrote, so
                // 0.7212:0.7213:0.00001 gives 0.72121, not 0.7212099999999999.
                let decimals = parts
                    .iter()
                    .map(|p| p.trim())
                    .map(|p| if p.contains(['e', 'E']) { None } else { Some(p.split('.').nth(1).map_or(0, str::len)) })
                    .try_fold(0usize, |m, d| d.map(|d| m.max(d)));
                let round = |t: f64| match decimals {
                    Some(k) if k <= 15 => {
                        let scale = 10f64.powi(k as i32);
                        (t * scale).round() / scale
                    }
                    _ => t,
                };
                (0..n).map(|i| round(a + i as f64 * d)).collect()
            }
        };
        if temps.is_empty() {
            return Err(PottsError::InvalidInput("no temperatures given".into()));
        }
        if temps.len() >= MAX_CHAIN_INDEX as usize {
            return Err(PottsError::InvalidInput("too many temperatures".into()));
        }
        for &t in &temps {
            check_temperature(t)?;
        }
        Ok(temps)
    }
}

/// A complete, validated run description. Made by [`ConfigFile::resolve`]
/// (or read back from a checkpoint), so every value in it has been checked.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProtocolConfig {
    q: u32,
    size: usize,
    height: usize,
    coupling: f64,
    field: f64,
    temperatures: Vec<f64>,
    init: InitialState,
    therm: u64,
    sweeps: u64,
    measure_every: u64,
    samples: u32,
    seed: u64,
    continue_from_previous: bool,
    backend: BackendChoice,
    /// The update algorithm (Metropolis in checkpoints written before
    /// there was a choice).
    #[serde(default)]
    algorithm: Algorithm,
    /// Sweeps between replica-exchange rounds of parallel tempering
    /// ([`crate::tempering`]); `None`: no tempering.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    exchange_every: Option<u64>,
    /// Every size of the finite-size-scaling study this protocol is one
    /// size of, in run order (empty: a run of one size).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    sizes: Vec<usize>,
}

impl ProtocolConfig {
    /// Refuses a temperature at which the field is all that lets
    /// checkerboard Metropolis reach every state (q = 2 on a torus of at
    /// most [`crate::update::METROPOLIS_NON_ERGODIC_SITES`] sites, or with
    /// J = 0: [`Algorithm::check_ergodic`]) and the run is too short for the
    /// field to do it: the chain leaves the cycles of flips that cost no
    /// coupling energy only where it rejects a flip that costs the field
    /// alone (probability 1 − e^(−|h|/T)), and a site needs about
    /// [`FIELD_REJECTIONS_NEEDED`] such rejections in a temperature's
    /// sweeps. With fewer, the averages are those of the cycles the chain
    /// started in (34 standard errors off on a 2 × 2 torus at h = 10⁻⁴), and
    /// the error analysis cannot tell, as the chain moves fast within them.
    fn check_field_breaks_cycles(&self, model: &PottsModel, temperature: f64) -> Result<()> {
        let Some(rejection) = field_flip_rejection(model, self.algorithm, temperature) else {
            return Ok(());
        };
        let sweeps = self.therm.saturating_add(self.sweeps);
        let expected = sweeps as f64 * rejection;
        if expected < FIELD_REJECTIONS_NEEDED {
            let why = if model.coupling() == 0.0 {
                "with J = 0".to_string()
            } else {
                format!("on a {} × {} torus", model.width(), model.height())
            };
            return Err(PottsError::InvalidInput(format!(
                "at T = {temperature:?} and h = {:?}, checkerboard Metropolis with q = 2 {why} reaches every state \
                 only through flips that cost the field alone, rejected once in {} tries: each site sees about \
                 {expected:.1} such rejections in {sweeps} sweeps, too few for the averages to count every state \
                 (about {FIELD_REJECTIONS_NEEDED} are needed): use the heat-bath algorithm, a stronger field, or \
                 at least {} sweeps",
                model.field(),
                sci(1.0 / rejection),
                sci((FIELD_REJECTIONS_NEEDED / rejection).ceil())
            )));
        }
        Ok(())
    }

    /// The model this protocol simulates.
    pub fn model(&self) -> Result<PottsModel> {
        PottsModel::new(self.q, self.size, self.height)?.with_coupling(self.coupling)?.with_field(self.field)
    }

    /// Checks every field; the first problem is returned as one line.
    pub(crate) fn validate(&self) -> Result<()> {
        self.algorithm.check(&self.model()?)?;
        self.algorithm.check_ergodic(&self.model()?)?;
        let model = self.model()?;
        for &t in &self.temperatures {
            check_metropolis_rejects(&model, self.algorithm, t)?;
            self.check_field_breaks_cycles(&model, t)?;
        }
        if !self.sizes.is_empty() {
            if !self.sizes.contains(&self.size) {
                return Err(PottsError::InvalidInput(format!(
                    "the size {} is not one of the study's sizes {:?}",
                    self.size, self.sizes
                )));
            }
            if self.height != self.size {
                return Err(PottsError::InvalidInput(
                    "a study of several sizes runs square lattices; give no separate height".into(),
                ));
            }
            for (i, &l) in self.sizes.iter().enumerate() {
                PottsModel::new(self.q, l, l)?;
                if self.sizes[..i].contains(&l) {
                    return Err(PottsError::InvalidInput(format!("the size {l} is given twice")));
                }
            }
        }
        if self.temperatures.is_empty() {
            return Err(PottsError::InvalidInput("no temperatures given".into()));
        }
        for &t in &self.temperatures {
            check_temperature(t)?;
        }
        if self.measure_every == 0 {
            return Err(PottsError::InvalidInput("the sweeps between measurements must be at least 1".into()));
        }
        if self.sweeps < self.measure_every {
            return Err(PottsError::InvalidInput(format!(
                "the measurement sweeps ({}) must be at least the sweeps between measurements ({}) to take any \
                 measurement",
                self.sweeps, self.measure_every
            )));
        }
        if self.therm.saturating_add(self.sweeps) > MAX_SWEEPS_PER_CHAIN {
            return Err(PottsError::InvalidInput(format!(
                "thermalisation plus measurement sweeps must be at most {MAX_SWEEPS_PER_CHAIN} per temperature"
            )));
        }
        if self.samples == 0 || self.samples >= MAX_CHAIN_INDEX {
            return Err(PottsError::InvalidInput(format!(
                "the samples per temperature must be between 1 and {}, got {}",
                MAX_CHAIN_INDEX - 1,
                self.samples
            )));
        }
        if let Some(every) = self.exchange_every {
            if every == 0 {
                return Err(PottsError::InvalidInput("the sweeps between replica exchanges must be at least 1".into()));
            }
            if self.temperatures.len() < 2 {
                return Err(PottsError::InvalidInput(
                    "parallel tempering needs at least two temperatures to exchange replicas between".into(),
                ));
            }
            if self.continue_from_previous {
                return Err(PottsError::InvalidInput(
                    "parallel tempering runs every temperature at once; it cannot also continue each temperature \
                     from the previous one's state"
                        .into(),
                ));
            }
            crate::tempering::Replicas::check(&self.temperatures, self.samples)?;
        }
        Ok(())
    }

    /// Sweeps between replica-exchange rounds when the run uses parallel
    /// tempering ([`crate::tempering`]).
    pub fn exchange_every(&self) -> Option<u64> {
        self.exchange_every
    }

    /// Number of states q.
    pub fn q(&self) -> u32 {
        self.q
    }
    /// Columns L.
    pub fn size(&self) -> usize {
        self.size
    }
    /// Rows L'.
    pub fn height(&self) -> usize {
        self.height
    }
    /// J.
    pub fn coupling(&self) -> f64 {
        self.coupling
    }
    /// h (favours state 0).
    pub fn field(&self) -> f64 {
        self.field
    }
    /// Temperatures in run order.
    pub fn temperatures(&self) -> &[f64] {
        &self.temperatures
    }
    /// Start state.
    pub fn init(&self) -> InitialState {
        self.init
    }
    /// Thermalisation sweeps per temperature.
    pub fn therm(&self) -> u64 {
        self.therm
    }
    /// Measurement sweeps per temperature.
    pub fn sweeps(&self) -> u64 {
        self.sweeps
    }
    /// Sweeps between measurements.
    pub fn measure_every(&self) -> u64 {
        self.measure_every
    }
    /// Independent chains per temperature.
    pub fn samples(&self) -> u32 {
        self.samples
    }
    /// Seed of every random number of the run.
    pub fn seed(&self) -> u64 {
        self.seed
    }
    /// Whether each temperature starts from the state the same sample
    /// reached at the previous temperature instead of afresh.
    pub fn continue_from_previous(&self) -> bool {
        self.continue_from_previous
    }
    /// Where to run.
    pub fn backend(&self) -> BackendChoice {
        self.backend
    }
    /// The update algorithm.
    pub fn algorithm(&self) -> Algorithm {
        self.algorithm
    }
    /// The sizes L of the study this protocol belongs to, in run order
    /// (just [`size`](ProtocolConfig::size) for a run of one size).
    pub fn study_sizes(&self) -> Vec<usize> {
        if self.sizes.is_empty() { vec![self.size] } else { self.sizes.clone() }
    }

    /// The same protocol (the same study) at size `l`, which must be one of
    /// the study's sizes: the protocol itself at its own size (whose height
    /// may differ), `l` × `l` at another (a study of several sizes runs
    /// square lattices).
    pub fn for_size(&self, l: usize) -> Result<Self> {
        let height = if l == self.size { self.height } else { l };
        let cfg = ProtocolConfig { size: l, height, ..self.clone() };
        cfg.validate()?;
        Ok(cfg)
    }

    /// The same protocol on another backend (a resumed run may move between
    /// CPU and GPU: both give the same numbers).
    pub fn with_backend(mut self, backend: BackendChoice) -> Self {
        self.backend = backend;
        self
    }

    /// Sweeps of the whole run, all samples and temperatures.
    pub fn total_sweeps(&self) -> u64 {
        self.temperatures.len() as u64 * self.samples as u64 * self.sweeps_per_chain()
    }

    /// Sweeps of one chain at one temperature: thermalisation and
    /// measurement.
    pub fn sweeps_per_chain(&self) -> u64 {
        self.therm + self.sweeps
    }

    /// For q = 2 Metropolis: the probability that the 32-bit acceptance
    /// test rejects the costliest flip (four equal neighbours made unequal,
    /// against the field) at `temperature`; 1 for other models and
    /// algorithms. Near 0 each sweep flips almost every site and the next
    /// flips them back: the chain leaves that alternation only through
    /// rejections, so it needs many times 1/rejection sweeps to mix.
    pub fn metropolis_rejection(&self, temperature: f64) -> f64 {
        costliest_flip_rejection(self.algorithm, self.q, self.coupling, self.field, temperature)
    }

    /// Whether a chain at `temperature` is too short for its q = 2
    /// Metropolis alternation ([`ProtocolConfig::metropolis_rejection`]):
    /// fewer than [`MIN_ALTERNATION_REJECTIONS`] rejections per site over
    /// all its sweeps.
    pub(crate) fn too_short_to_alternate(&self, temperature: f64) -> bool {
        self.sweeps_per_chain() as f64 * self.metropolis_rejection(temperature) < MIN_ALTERNATION_REJECTIONS
    }

    /// Measurements per sample and temperature.
    pub fn measurements_per_chain(&self) -> u64 {
        self.sweeps / self.measure_every
    }

    /// Measurements the run keeps in memory once it is done: every
    /// temperature's, sample's and chain's (they give the averages, the
    /// error bars and the series).
    pub fn stored_measurements(&self) -> u64 {
        (self.temperatures.len() as u64)
            .saturating_mul(self.samples as u64)
            .saturating_mul(self.measurements_per_chain())
    }

    /// Fails with [`PottsError::OutOfHostMemory`] unless the lattices the
    /// run holds on the host (`saved` besides the working one, see
    /// [`PottsModel::host_bytes`]) and its [stored
    /// measurements](Self::stored_measurements) fit in what the process may
    /// still allocate.
    pub fn check_host_memory(&self, saved: u64) -> Result<()> {
        let model = self.model()?;
        model.check_host_memory(saved)?;
        let kept = self.stored_measurements();
        let bytes = model.host_bytes(saved).saturating_add(kept.saturating_mul(MEASUREMENT_HOST_BYTES));
        warpmc_host::check_allocation(
            &format!("a {} × {} lattice and {kept} measurements", self.size, self.height),
            bytes,
        )
        .map_err(|e| PottsError::OutOfHostMemory(format!("{e}; {MEASURE_LESS}")))
    }

    /// Whether the chain stands at a measurement after `sweep` sweeps.
    pub(crate) fn measures_after(&self, sweep: u64) -> bool {
        sweep > self.therm && (sweep - self.therm).is_multiple_of(self.measure_every)
    }

    /// The next sweep count after `sweep` at which the chain must stop: the
    /// end of thermalisation, a measurement, or the end of the chain.
    pub(crate) fn next_stop(&self, sweep: u64) -> u64 {
        let stop = if sweep < self.therm {
            self.therm
        } else {
            let k = (sweep - self.therm) / self.measure_every + 1;
            self.therm + k * self.measure_every
        };
        stop.min(self.sweeps_per_chain())
    }
}

/// Host bytes a stored measurement may take while a checkpoint is written:
/// a copy, and its JSON text (at most 77 bytes) in a buffer whose capacity
/// may have doubled.
pub const CHECKPOINT_BYTES_PER_MEASUREMENT: u64 = 16 + 2 * 77;

/// Host bytes each row of results (a temperature of a size) may take: its
/// result, kept twice, its CSV and JSON text (about 1.4 KiB measured with a
/// million temperatures).
pub const ROW_HOST_BYTES: u64 = 2048;

/// Fails with [`PottsError::OutOfHostMemory`] unless the measurements of
/// every size of `study`, all kept until the end (and copied into each
/// checkpoint when `checkpoints`), fit in host memory beside its largest
/// lattice: checked before the first sweep rather than met as an abort
/// hours later. A lattice too large on its own is named as such.
pub fn check_study_memory(study: &[ProtocolConfig], checkpoints: bool) -> Result<()> {
    check_study_memory_shared(study, checkpoints, 1)
}

/// [`check_study_memory`] for `processes` processes on this machine that
/// each keep the whole of it (the MPI processes of a run: every one holds
/// every measurement, and gathers whole lattices for checkpoints and
/// snapshots), which all see the same free memory.
pub fn check_study_memory_shared(study: &[ProtocolConfig], checkpoints: bool, processes: u64) -> Result<()> {
    for cfg in study {
        cfg.model()?.check_host_memory(0)?;
    }
    let kept = study.iter().fold(0u64, |n, cfg| n.saturating_add(cfg.stored_measurements()));
    let per_measurement = MEASUREMENT_HOST_BYTES + if checkpoints { CHECKPOINT_BYTES_PER_MEASUREMENT } else { 0 };
    let rows = study.iter().fold(0u64, |n, cfg| n.saturating_add(cfg.temperatures().len() as u64));
    let lattice =
        study.iter().map(|cfg| cfg.model().map(|m| m.host_bytes(0))).try_fold(0u64, |a, b| b.map(|b| a.max(b)))?;
    let bytes = kept
        .saturating_mul(per_measurement)
        .saturating_add(rows.saturating_mul(ROW_HOST_BYTES))
        .saturating_add(lattice)
        .saturating_mul(processes.max(1));
    let what = format!(
        "keeping the run's {} rows of results and {} measurements{}{}",
        sci(rows as f64),
        sci(kept as f64),
        if checkpoints { " and checkpointing them" } else { "" },
        if processes > 1 { format!(" in each of the {processes} processes on this machine") } else { String::new() },
    );
    let advice = if processes > 1 {
        format!("{MEASURE_LESS}, or run fewer processes on each machine")
    } else {
        MEASURE_LESS.to_string()
    };
    warpmc_host::check_allocation(&what, bytes).map_err(|e| PottsError::OutOfHostMemory(format!("{e}; {advice}")))
}

/// A count in scientific notation with three digits: 1.65e+12.
pub fn sci(x: f64) -> String {
    format!("{x:.2e}").replace('e', "e+").replace("e+-", "e-")
}

/// [`ProtocolConfig::metropolis_rejection`] of `algorithm` on a model of
/// `q` states, coupling J and field h.
fn costliest_flip_rejection(algorithm: Algorithm, q: u32, coupling: f64, field: f64, temperature: f64) -> f64 {
    if algorithm != Algorithm::Metropolis || q != 2 {
        return 1.0;
    }
    let cost = 4.0 * coupling.abs() + field.abs();
    1.0 - crate::algorithm::threshold(cost, temperature) as f64 / ALWAYS as f64
}

/// Rejections of field-only flips per site that a run of q = 2
/// checkerboard Metropolis needs where the field alone breaks its cycles
/// (a torus of at most [`crate::update::METROPOLIS_NON_ERGODIC_SITES`]
/// sites, or J = 0); a run with fewer is refused. On a 2 × 2 torus at T =
/// 1, 20,500 sweeps at h = 10⁻² (about 200 per site) gave the exact
/// energy and specific heat within their error bars; h = 10⁻³ (about 20)
/// gave τ_int jumping to hundreds of sweeps, h = 10⁻⁴ results 34 standard
/// errors off.
pub const FIELD_REJECTIONS_NEEDED: f64 = 100.0;

/// Where checkerboard Metropolis with q = 2 on `model` cannot reach every
/// state without a field ([`Algorithm::check_ergodic`]) but has one: the
/// probability that a flip costing the field alone (|h|) is rejected, the
/// only way its chain leaves the cycles of free flips. `None` elsewhere.
fn field_flip_rejection(model: &PottsModel, algorithm: Algorithm, temperature: f64) -> Option<f64> {
    let cycles = algorithm == Algorithm::Metropolis
        && model.q() == 2
        && (model.sites() <= crate::update::METROPOLIS_NON_ERGODIC_SITES || model.coupling() == 0.0);
    (cycles && model.field() != 0.0)
        .then(|| 1.0 - crate::algorithm::threshold(model.field().abs(), temperature) as f64 / ALWAYS as f64)
}

/// Refuses a temperature at which `algorithm` on `model` is q = 2
/// Metropolis that rejects even its costliest flip less than 1.5 times in
/// 2^32 tries ([`ProtocolConfig::metropolis_rejection`]): every sweep then
/// flips every site and the next flips them back, and no run or
/// simulation is long enough to leave that alternation. A run checks every
/// temperature of its protocol, a [`crate::Simulation`] each temperature
/// it is given.
pub(crate) fn check_metropolis_rejects(model: &PottsModel, algorithm: Algorithm, temperature: f64) -> Result<()> {
    let rejection = costliest_flip_rejection(algorithm, model.q(), model.coupling(), model.field(), temperature);
    if rejection < 1.5 / ALWAYS as f64 {
        return Err(PottsError::InvalidInput(format!(
            "at T = {temperature:?} checkerboard Metropolis with q = 2 rejects even the costliest flip \
             (e^(-{:?}/T)) only once in 2^32 tries, so every sweep flips every site and the chain never leaves \
             the pair of states it starts in: use the heat-bath algorithm",
            4.0 * model.coupling().abs() + model.field().abs()
        )));
    }
    Ok(())
}

/// The largest configuration file read: a list of a million temperatures
/// is about 10 MiB.
pub const MAX_CONFIG_BYTES: u64 = 64 << 20;

/// The bytes of the configuration file `path`: an error naming it when it
/// cannot be read or holds more than [`MAX_CONFIG_BYTES`] (a device such as
/// /dev/zero is one error, not a process that grows until it is killed).
/// `-` is standard input.
pub fn read_config_bytes(path: &Path) -> Result<Vec<u8>> {
    use std::io::Read;
    let io = |e| PottsError::io(path, e);
    let too_large = || PottsError::Config {
        path: path.to_path_buf(),
        message: format!(
            "more than {}, the most warpmc reads as a configuration file; is this the right file?",
            warpmc_host::memory::human_bytes(MAX_CONFIG_BYTES)
        ),
    };
    let mut bytes = Vec::new();
    if path.as_os_str() == "-" {
        std::io::stdin().lock().take(MAX_CONFIG_BYTES + 1).read_to_end(&mut bytes).map_err(io)?;
    } else {
        let file = std::fs::File::open(path).map_err(io)?;
        // A regular file too large is refused before it is read; a device
        // or a pipe says its size only by being read.
        if file.metadata().is_ok_and(|m| m.is_file() && m.len() > MAX_CONFIG_BYTES) {
            return Err(too_large());
        }
        file.take(MAX_CONFIG_BYTES + 1).read_to_end(&mut bytes).map_err(io)?;
    }
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(too_large());
    }
    Ok(bytes)
}

/// The TOML form of a run. Every key is optional here; missing ones come
/// from the command line or defaults. Unknown keys are an error.
///
/// ```toml
/// q = 9
/// size = 2048                         # or size = [16, 32, 64]: one run per size
/// temps = "0.7212:0.721347:0.00001"   # or temps = [0.70, 0.72], or temp = 0.72
/// init = "ordered"
/// therm = 100000
/// sweeps = 10000
/// measure_every = 500
/// samples = 1
/// seed = 1
/// continue = true
/// algorithm = "metropolis"            # or "heat-bath", "swendsen-wang", "wolff"
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "TomlConfig")]
pub struct ConfigFile {
    /// q.
    pub q: Option<u32>,
    /// L.
    pub size: Option<usize>,
    /// Several sizes L, run one after another (a finite-size-scaling study
    /// of square lattices; `size = [16, 32]` in TOML). Resolve it with
    /// [`ConfigFile::resolve_sizes`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sizes: Option<Vec<usize>>,
    /// L'.
    pub height: Option<usize>,
    /// J.
    pub coupling: Option<f64>,
    /// h.
    pub field: Option<f64>,
    /// A single temperature.
    pub temp: Option<f64>,
    /// A range string or a list.
    pub temps: Option<Temperatures>,
    /// "ordered" or "random".
    pub init: Option<InitialState>,
    /// Thermalisation sweeps.
    pub therm: Option<u64>,
    /// Measurement sweeps.
    pub sweeps: Option<u64>,
    /// Sweeps between measurements.
    pub measure_every: Option<u64>,
    /// Independent repetitions.
    pub samples: Option<u32>,
    /// Seed.
    pub seed: Option<u64>,
    /// Continue from the previous temperature's state.
    #[serde(rename = "continue")]
    pub continue_from_previous: Option<bool>,
    /// "auto", "cpu" or "cuda".
    pub backend: Option<BackendChoice>,
    /// "metropolis", "heat-bath", "swendsen-wang" or "wolff".
    pub algorithm: Option<Algorithm>,
    /// Parallel tempering: replica exchange between neighbouring
    /// temperatures.
    pub tempering: Option<bool>,
    /// Sweeps between exchange rounds (with `tempering`; default 10).
    pub exchange_every: Option<u64>,
}

/// `size = L` or `size = [L1, L2, …]`.
#[derive(Deserialize)]
#[serde(untagged)]
enum SizeOrSizes {
    One(usize),
    Many(Vec<usize>),
}

/// What a TOML file holds: [`ConfigFile`] with `size` a number or a list.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TomlConfig {
    q: Option<u32>,
    size: Option<SizeOrSizes>,
    height: Option<usize>,
    coupling: Option<f64>,
    field: Option<f64>,
    temp: Option<f64>,
    temps: Option<Temperatures>,
    init: Option<InitialState>,
    therm: Option<u64>,
    sweeps: Option<u64>,
    measure_every: Option<u64>,
    samples: Option<u32>,
    seed: Option<u64>,
    #[serde(rename = "continue")]
    continue_from_previous: Option<bool>,
    backend: Option<BackendChoice>,
    algorithm: Option<Algorithm>,
    tempering: Option<bool>,
    exchange_every: Option<u64>,
}

impl TryFrom<TomlConfig> for ConfigFile {
    type Error = String;
    fn try_from(t: TomlConfig) -> std::result::Result<Self, String> {
        let (size, sizes) = match t.size {
            None => (None, None),
            Some(SizeOrSizes::One(l)) => (Some(l), None),
            Some(SizeOrSizes::Many(v)) if v.is_empty() => return Err("size = [] lists no size".into()),
            Some(SizeOrSizes::Many(v)) if v.len() == 1 => (Some(v[0]), None),
            Some(SizeOrSizes::Many(v)) => (None, Some(v)),
        };
        Ok(ConfigFile {
            q: t.q,
            size,
            sizes,
            height: t.height,
            coupling: t.coupling,
            field: t.field,
            temp: t.temp,
            temps: t.temps,
            init: t.init,
            therm: t.therm,
            sweeps: t.sweeps,
            measure_every: t.measure_every,
            samples: t.samples,
            seed: t.seed,
            continue_from_previous: t.continue_from_previous,
            backend: t.backend,
            algorithm: t.algorithm,
            tempering: t.tempering,
            exchange_every: t.exchange_every,
        })
    }
}

/// serde's message about the value of `key` in words for a user, e.g.
/// "q = -1: expected a whole number from 0 to 4294967295" for "invalid
/// value: integer `-1`, expected u32". Messages it does not know (an unknown
/// key or variant, a range check) keep their words, after the key.
pub fn describe_value_error(key: &str, message: &str) -> String {
    if message.starts_with("unknown field") || message.starts_with(key) {
        return message.to_string();
    }
    // The keys that take a word: serde's message for a number, boolean or
    // list there ("invalid type: unit variant, expected string only") names
    // no word.
    const WORDS: [(&str, &str); 3] = [
        ("init", "\"ordered\" or \"random\""),
        ("backend", "\"auto\", \"cpu\" or \"cuda\""),
        ("algorithm", "\"metropolis\", \"heat-bath\", \"swendsen-wang\" or \"wolff\""),
    ];
    if let Some((_, words)) = WORDS.iter().find(|(k, _)| *k == key)
        && message.contains("invalid type")
    {
        return format!("{key}: expected {words} (a string)");
    }
    const EXPECTED: [(&str, &str); 8] = [
        ("expected u32", "a whole number from 0 to 4294967295"),
        ("expected u64", "a whole number from 0 to 18446744073709551615"),
        ("expected usize", "a whole number from 0 to 18446744073709551615"),
        ("expected f64", "a number"),
        ("expected a boolean", "true or false"),
        ("expected a string", "a string"),
        ("untagged enum SizeOrSizes", "a width or a list of widths (whole numbers)"),
        ("untagged enum Temperatures", "a list of numbers or a range \"T0:T1:DT\""),
    ];
    let Some((_, what)) = EXPECTED.iter().find(|(pattern, _)| message.contains(pattern)) else {
        return format!("{key}: {message}");
    };
    // The type's range would mislead where the key's own is narrower.
    let own_range = match key {
        "q" => Some(format!("a whole number from 2 to {}", crate::model::MAX_Q)),
        "samples" => Some(format!("a whole number from 1 to {}", MAX_CHAIN_INDEX - 1)),
        _ => None,
    };
    let what = own_range.as_deref().unwrap_or(what);
    // serde names the value it got as `value` (numbers) or "value" (strings).
    let got =
        message.split_once('`').and_then(|(_, rest)| rest.split_once('`')).map(|(v, _)| v.to_string()).or_else(|| {
            message
                .split_once("string \"")
                .and_then(|(_, rest)| rest.rsplit_once("\", "))
                .map(|(v, _)| format!("\"{v}\""))
        });
    match got {
        Some(v) => format!("{key} = {v}: expected {what}"),
        None => format!("{key}: expected {what}"),
    }
}

/// Where byte `at` of `text` is, for a syntax error: " at line N: the
/// line" (the line shortened when long).
fn at_line(text: &str, at: usize) -> String {
    let at = at.min(text.len());
    let Some(before) = text.get(..at) else { return format!(" (at byte {at})") };
    let number = before.matches('\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    let line = text[start..].lines().next().unwrap_or("").trim();
    let line: String =
        if line.chars().count() > 60 { line.chars().take(60).collect::<String>() + "…" } else { line.into() };
    format!(" at line {number}: {line}")
}

/// The message for an integer beyond TOML's (signed 64-bit) range, e.g.
/// `seed = 18446744073709551615`, which toml reports at the value as "value
/// was too large" or, beyond u64, as an i128 of invalid type; `None` for any
/// other error.
fn integer_too_large(text: &str, message: &str, at: usize) -> Option<String> {
    if !["too large", "too small", "as i128"].iter().any(|m| message.contains(m)) {
        return None;
    }
    let line_start = text.get(..at)?.rfind('\n').map_or(0, |i| i + 1);
    let line = text[line_start..].lines().next()?;
    let (key, value) = line.split_once('=')?;
    let (key, value) = (key.trim(), value.split('#').next()?.trim());
    let seed = if key == "seed" { " (a larger seed can be given as --seed)" } else { "" };
    Some(format!("{key} = {value}: TOML integers run from -2^63 to 2^63 - 1 = 9223372036854775807{seed}"))
}

impl ConfigFile {
    /// Parses TOML text (`path` only names the file in errors). A value of
    /// the wrong kind is reported with its key, in words
    /// ([`describe_value_error`]).
    pub fn parse(text: &str, path: &Path) -> Result<Self> {
        let config_error = |message: String| PottsError::Config { path: path.to_path_buf(), message };
        let syntax = |e: toml::de::Error| {
            if let Some(m) = e.span().and_then(|span| integer_too_large(text, e.message(), span.start)) {
                return config_error(m);
            }
            config_error(e.message().to_string() + &e.span().map(|s| at_line(text, s.start)).unwrap_or_default())
        };
        let table: toml::Table = toml::from_str(text).map_err(syntax)?;
        // Each key on its own first, so that an error can name it (every
        // key is optional, so a table of one key is a configuration).
        for (key, value) in &table {
            let one = toml::Table::from_iter([(key.clone(), value.clone())]);
            if let Err(e) = toml::Value::Table(one).try_into::<ConfigFile>() {
                return Err(config_error(describe_value_error(key, e.message())));
            }
        }
        toml::Value::Table(table).try_into().map_err(syntax)
    }

    /// Reads and parses a TOML file (of at most [`MAX_CONFIG_BYTES`]).
    pub fn read(path: &Path) -> Result<Self> {
        let text = String::from_utf8(read_config_bytes(path)?).map_err(|_| {
            PottsError::io(
                path,
                std::io::Error::new(std::io::ErrorKind::InvalidData, "stream did not contain valid UTF-8"),
            )
        })?;
        Self::parse(&text, path)
    }

    /// Fills every key missing here from `other` (the command line wins by
    /// being `self`).
    pub fn or(self, other: ConfigFile) -> ConfigFile {
        // A temperature given on one side replaces both forms on the other.
        let (temp, temps) = if self.temp.is_some() || self.temps.is_some() {
            (self.temp, self.temps)
        } else {
            (other.temp, other.temps)
        };
        // So does a size or a list of sizes.
        let (size, sizes) = if self.size.is_some() || self.sizes.is_some() {
            (self.size, self.sizes)
        } else {
            (other.size, other.sizes)
        };
        ConfigFile {
            q: self.q.or(other.q),
            size,
            sizes,
            height: self.height.or(other.height),
            coupling: self.coupling.or(other.coupling),
            field: self.field.or(other.field),
            temp,
            temps,
            init: self.init.or(other.init),
            therm: self.therm.or(other.therm),
            sweeps: self.sweeps.or(other.sweeps),
            measure_every: self.measure_every.or(other.measure_every),
            samples: self.samples.or(other.samples),
            seed: self.seed.or(other.seed),
            continue_from_previous: self.continue_from_previous.or(other.continue_from_previous),
            backend: self.backend.or(other.backend),
            algorithm: self.algorithm.or(other.algorithm),
            tempering: self.tempering.or(other.tempering),
            exchange_every: self.exchange_every.or(other.exchange_every),
        }
    }

    /// The validated protocol. `q`, `size` and a temperature are required
    /// ([`PottsError::Missing`] names the key otherwise); the rest defaults
    /// to: J = 1, h = 0, ordered start, therm = 1000, sweeps = 1000,
    /// measure_every = 10, samples = 1, seed = 1, no continuation, backend
    /// auto, Metropolis, no tempering (exchanges every 10 sweeps with it).
    pub fn resolve(&self) -> Result<ProtocolConfig> {
        let size = match (&self.size, self.sizes.as_deref()) {
            (_, Some([l])) => *l,
            (_, Some(list)) if !list.is_empty() => {
                return Err(PottsError::InvalidInput(format!(
                    "{} lattice sizes given: a study of several sizes is one protocol per size \
                     (ConfigFile::resolve_sizes)",
                    list.len()
                )));
            }
            (Some(l), _) => *l,
            (None, _) => return Err(PottsError::Missing("size")),
        };
        let temperatures = match (&self.temp, &self.temps) {
            (Some(_), Some(_)) => {
                return Err(PottsError::InvalidInput("give either temp or temps, not both".into()));
            }
            (Some(t), None) => vec![check_temperature(*t)?],
            (None, Some(ts)) => ts.expand()?,
            (None, None) => return Err(PottsError::Missing("temp")),
        };
        let cfg = ProtocolConfig {
            q: self.q.ok_or(PottsError::Missing("q"))?,
            size,
            height: self.height.unwrap_or(size),
            coupling: self.coupling.unwrap_or(1.0),
            field: self.field.unwrap_or(0.0),
            temperatures,
            init: self.init.unwrap_or(InitialState::Ordered),
            therm: self.therm.unwrap_or(1000),
            sweeps: self.sweeps.unwrap_or(1000),
            measure_every: self.measure_every.unwrap_or(10),
            samples: self.samples.unwrap_or(1),
            seed: self.seed.unwrap_or(1),
            continue_from_previous: self.continue_from_previous.unwrap_or(false),
            backend: self.backend.unwrap_or(BackendChoice::Auto),
            algorithm: self.algorithm.unwrap_or_default(),
            exchange_every: match (self.tempering.unwrap_or(false), self.exchange_every) {
                (true, every) => Some(every.unwrap_or(10)),
                (false, None) => None,
                (false, Some(_)) => {
                    return Err(PottsError::InvalidInput(
                        "the sweeps between replica exchanges (exchange_every, --exchange-every) are given but tempering (--tempering) is not on".into(),
                    ));
                }
            },
            sizes: Vec::new(),
        };
        cfg.validate()?;
        Ok(cfg)
    }

    /// One validated protocol per size, in run order: the list of sizes
    /// (square lattices, so no height), or the one size. Each records the
    /// whole list ([`ProtocolConfig::study_sizes`]).
    ///
    /// ```
    /// use warpmc_potts::{ConfigFile, Temperatures};
    /// let study = ConfigFile {
    ///     q: Some(2),
    ///     sizes: Some(vec![16, 32]),
    ///     temp: Some(1.0),
    ///     ..Default::default()
    /// }
    /// .resolve_sizes()?;
    /// assert_eq!(study.iter().map(|c| c.size()).collect::<Vec<_>>(), [16, 32]);
    /// assert_eq!(study[1].study_sizes(), [16, 32]);
    /// # Ok::<(), warpmc_potts::PottsError>(())
    /// ```
    pub fn resolve_sizes(&self) -> Result<Vec<ProtocolConfig>> {
        let list = match self.sizes.as_deref() {
            Some(list) if list.len() > 1 => list.to_vec(),
            _ => return Ok(vec![self.resolve()?]),
        };
        if self.height.is_some() {
            return Err(PottsError::InvalidInput(
                "a study of several sizes runs square lattices; give no separate height".into(),
            ));
        }
        list.iter()
            .map(|&l| {
                let mut cfg = ConfigFile { size: Some(l), sizes: None, ..self.clone() }.resolve()?;
                cfg.sizes = list.clone();
                cfg.validate()?;
                Ok(cfg)
            })
            .collect()
    }
}

/// Time spent and site updates done at one temperature (for the
/// `flips_per_ns` column; the only part of a run that differs between
/// identical runs). Stored in checkpoints as a pair.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(from = "(f64, u64)", into = "(f64, u64)")]
pub struct Timing {
    /// Seconds spent sweeping and measuring.
    pub seconds: f64,
    /// Site updates done.
    pub updates: u64,
}

impl From<(f64, u64)> for Timing {
    fn from((seconds, updates): (f64, u64)) -> Self {
        Timing { seconds, updates }
    }
}

impl From<Timing> for (f64, u64) {
    fn from(t: Timing) -> Self {
        (t.seconds, t.updates)
    }
}

impl Timing {
    /// Site updates per nanosecond (0 before any time was spent).
    pub fn flips_per_ns(&self) -> f64 {
        if self.seconds > 0.0 { self.updates as f64 / (self.seconds * 1e9) } else { 0.0 }
    }
}

/// Where a run stands: everything needed to continue it bit for bit.
#[derive(Clone, Debug, PartialEq)]
pub struct RunState {
    /// Temperature being run.
    pub(crate) temp_index: usize,
    /// Sample being run at that temperature.
    pub(crate) sample: u32,
    /// Sweeps the chains under way have done at their temperature (0: not
    /// started).
    pub(crate) sweep: u64,
    /// The lattices of the chains under way when `sweep > 0`, in run order
    /// from (`temp_index`, `sample`) on (filled in for checkpoints).
    pub(crate) current: Vec<Lattice>,
    /// Chains under way together (from (`temp_index`, `sample`) on, in run
    /// order), 0 between groups.
    pub(crate) group: usize,
    /// With continuation: each sample's state at the end of its last
    /// finished temperature.
    pub(crate) saved: Vec<Option<Lattice>>,
    /// Measurements: per temperature begun, per sample.
    pub(crate) series: Vec<Vec<Vec<Measurement>>>,
    /// Per temperature begun.
    pub(crate) timing: Vec<Timing>,
    /// Backend name used per temperature begun.
    pub(crate) backends: Vec<String>,
    /// A tempering run's replicas, statistics and measurements (all
    /// temperatures run at once; the fields above fill in when it ends).
    pub(crate) tempering: Option<TemperingState>,
    /// The sizes of the study finished before this one, in run order.
    pub(crate) earlier: Vec<SizeRecord>,
}

/// What a finished size of a study leaves for its results and series.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct SizeRecord {
    /// L.
    pub(crate) size: usize,
    /// As [`RunState::series`].
    pub(crate) series: Vec<Vec<Vec<Measurement>>>,
    /// Per temperature.
    pub(crate) timing: Vec<Timing>,
    /// Per temperature.
    pub(crate) backends: Vec<String>,
    /// A tempering run's exchange statistics.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) exchange: Option<ExchangeStats>,
}

/// The rejections per site a q = 2 Metropolis chain needs over its sweeps
/// ([`ProtocolConfig::metropolis_rejection`] each sweep) before its results
/// count; fewer flag its rows `too_short`:
/// its alternation between a configuration and its near-inverse breaks
/// only through rejections, so its relaxation takes about 1/rejection
/// sweeps, and a run is trusted with about 100 relaxation times.
pub const MIN_ALTERNATION_REJECTIONS: f64 = 100.0;

/// Adds a tempering run's exchange statistics to its results (each
/// temperature's swap acceptance with the next, and the round trips) and
/// the τ_int of its replicas' summed energy; a run that measured too few
/// of the latter has every row `too_short`.
pub(crate) fn add_exchange(
    results: &mut [TemperatureResult],
    stats: &ExchangeStats,
    replica_tau_int: f64,
    measure_every: u64,
) {
    let acceptance = stats.acceptance();
    for (t, r) in results.iter_mut().enumerate() {
        r.exchange_acceptance = acceptance.get(t).copied();
        r.round_trips = Some(stats.round_trips);
        r.replica_tau_int = Some(replica_tau_int);
        r.too_short |= spans_too_few_taus(r.measurements, measure_every, replica_tau_int);
    }
}

impl RunState {
    /// The measurements so far: per temperature begun, per sample, in
    /// measurement order (see [`crate::snapshot::write_series_npy`]).
    pub fn series(&self) -> &[Vec<Vec<Measurement>>] {
        match &self.tempering {
            Some(t) if self.series.is_empty() => t.series(),
            _ => &self.series,
        }
    }

    /// A tempering run's replicas and exchange statistics.
    pub fn tempering(&self) -> Option<&TemperingState> {
        self.tempering.as_ref()
    }

    /// The state of a run that has not started.
    pub fn new(cfg: &ProtocolConfig) -> Self {
        RunState {
            temp_index: 0,
            sample: 0,
            sweep: 0,
            current: Vec::new(),
            group: 0,
            saved: vec![None; if cfg.continue_from_previous { cfg.samples as usize } else { 0 }],
            series: Vec::new(),
            timing: Vec::new(),
            backends: Vec::new(),
            tempering: None,
            earlier: Vec::new(),
        }
    }

    /// The state of a study at the start of its next size, `next` (this
    /// size must be finished): the measurements of every size so far are
    /// kept for the results and the series.
    pub fn next_size(&self, cfg: &ProtocolConfig, next: &ProtocolConfig) -> Result<RunState> {
        if !self.finished(cfg) {
            return Err(PottsError::InvalidInput(format!("the size {} is not finished", cfg.size)));
        }
        let mut state = RunState::new(next);
        state.earlier = self.earlier.clone();
        state.earlier.push(SizeRecord {
            size: cfg.size,
            series: self.series.clone(),
            timing: self.timing.clone(),
            backends: self.backends.clone(),
            exchange: self.tempering.as_ref().map(|t| t.replicas().stats().clone()),
        });
        Ok(state)
    }

    /// The measurements of every size of the study so far, earlier sizes
    /// first (the leading axis of [`crate::snapshot::write_series_npy`]).
    pub fn study_series(&self) -> Vec<&[Vec<Vec<Measurement>>]> {
        self.earlier.iter().map(|r| r.series.as_slice()).chain([self.series()]).collect()
    }

    /// The results of every finished temperature of the study so far,
    /// earlier sizes first.
    pub fn study_results(&self, cfg: &ProtocolConfig) -> Result<Vec<TemperatureResult>> {
        let mut all = self.earlier_results(cfg)?;
        all.extend(self.results(cfg)?);
        Ok(all)
    }

    /// The results of the study's sizes finished before this one.
    pub fn earlier_results(&self, cfg: &ProtocolConfig) -> Result<Vec<TemperatureResult>> {
        let mut all = Vec::new();
        for r in &self.earlier {
            let at = cfg.for_size(r.size)?;
            let model = at.model()?;
            let done = RunState {
                temp_index: at.temperatures.len(),
                series: r.series.clone(),
                timing: r.timing.clone(),
                backends: r.backends.clone(),
                ..RunState::new(&at)
            };
            let mut results: Vec<_> = (0..at.temperatures.len()).map(|t| done.result(&at, &model, t)).collect();
            if let Some(stats) = &r.exchange {
                let tau = summed_energy_tau_int(&r.series, at.measure_every);
                add_exchange(&mut results, stats, tau, at.measure_every);
            }
            all.extend(results);
        }
        Ok(all)
    }

    /// Whether every temperature is done.
    pub fn finished(&self, cfg: &ProtocolConfig) -> bool {
        self.temp_index >= cfg.temperatures.len()
    }

    /// Sweeps done so far, all samples and temperatures.
    pub fn sweeps_done(&self, cfg: &ProtocolConfig) -> u64 {
        if let Some(t) = &self.tempering
            && !self.finished(cfg)
        {
            return t.sweep() * t.replicas().members() as u64;
        }
        self.chain_index(cfg) * cfg.sweeps_per_chain() + self.sweep * self.group.max(1) as u64
    }

    /// The run-order number of the chain at (`temp_index`, `sample`):
    /// temperature-major, samples within a temperature.
    fn chain_index(&self, cfg: &ProtocolConfig) -> u64 {
        self.temp_index as u64 * cfg.samples as u64 + self.sample as u64
    }

    /// Moves the position to run-order chain `index`, at its sweep 0.
    fn go_to_chain(&mut self, cfg: &ProtocolConfig, index: u64) {
        self.temp_index = (index / cfg.samples as u64) as usize;
        self.sample = (index % cfg.samples as u64) as u32;
        self.sweep = 0;
        self.group = 0;
    }

    /// Results of the temperatures finished so far.
    pub fn results(&self, cfg: &ProtocolConfig) -> Result<Vec<TemperatureResult>> {
        let model = cfg.model()?;
        let mut results: Vec<_> =
            (0..self.temp_index.min(cfg.temperatures.len())).map(|t| self.result(cfg, &model, t)).collect();
        if let Some(t) = self.tempering.as_ref().filter(|_| !results.is_empty()) {
            let tau = summed_energy_tau_int(&self.series, cfg.measure_every);
            add_exchange(&mut results, t.replicas().stats(), tau, cfg.measure_every);
        }
        Ok(results)
    }

    fn result(&self, cfg: &ProtocolConfig, model: &PottsModel, t: usize) -> TemperatureResult {
        let temperature = cfg.temperatures[t];
        let mut r = analyze(model, temperature, &self.series[t], cfg.measure_every).into_result(&RunFacts {
            size: cfg.size,
            temperature,
            sweeps: cfg.sweeps_per_chain(),
            samples: cfg.samples,
            flips_per_ns: self.timing[t].flips_per_ns(),
            backend: &self.backends[t],
        });
        r.too_short |= cfg.too_short_to_alternate(temperature);
        r
    }

    /// Opens the books of temperature `t` (on first reaching it).
    fn begin_temperature(&mut self, cfg: &ProtocolConfig, backend: &str) {
        self.begin_temperatures(cfg, self.temp_index, backend);
    }

    /// Opens the books of every temperature up to `last`.
    fn begin_temperatures(&mut self, cfg: &ProtocolConfig, last: usize, backend: &str) {
        while self.series.len() <= last {
            self.series.push(vec![Vec::new(); cfg.samples as usize]);
            self.timing.push(Timing::default());
            self.backends.push(backend.to_string());
        }
    }
}

/// What a runner asks its observer between chunks of sweeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    /// Go on.
    Continue,
    /// Hand over a checkpoint (see [`Observer::checkpoint`]) and go on.
    Checkpoint,
    /// Hand over a checkpoint and stop with [`PottsError::Interrupted`].
    CheckpointAndStop,
}

/// Receives a run's progress, results and checkpoints.
pub trait Observer {
    /// `done` of `total` sweeps are finished (all samples and temperatures).
    fn progress(&mut self, _done: u64, _total: u64) {}
    /// A temperature finished; `all` holds every result so far, in order.
    fn temperature_done(&mut self, _result: &TemperatureResult, _all: &[TemperatureResult]) -> Result<()> {
        Ok(())
    }
    /// Several temperatures finished at once (a group of chains spanning
    /// them ended): `new` are the last results of `all`. By default
    /// [`temperature_done`](Observer::temperature_done) for each; an
    /// observer that rewrites a file per call can write it once here.
    fn temperatures_done(&mut self, new: &[TemperatureResult], all: &[TemperatureResult]) -> Result<()> {
        let before = all.len() - new.len();
        for (i, r) in new.iter().enumerate() {
            self.temperature_done(r, &all[..before + i + 1])?;
        }
        Ok(())
    }
    /// Asked between chunks of sweeps.
    fn control(&mut self) -> Control {
        Control::Continue
    }
    /// A complete state to save (the lattice of the current chain included).
    fn checkpoint(&mut self, _cfg: &ProtocolConfig, _state: &RunState) -> Result<()> {
        Ok(())
    }
}

/// An observer that ignores everything.
#[derive(Debug, Default)]
pub struct Quiet;
impl Observer for Quiet {}

/// Longest stretch of sweeps between two looks at the observer, in seconds.
const CHUNK_SECONDS: f64 = 0.25;

/// Most sweeps in one stretch between looks at the observer.
const MAX_STRETCH: u64 = 1 << 20;

/// The sweeps the next stretch may run, after one of `count` sweeps (of at
/// most `chunk` allowed) took `secs`: as many as fit in `target_secs` at
/// that pace, or at `slowest_secs` a sweep where that is slower
/// ([`slowest_sweep_secs`]), and beyond `chunk` at most twice `count`.
/// Sweeps can grow much slower as a run goes on (Wolff from a random
/// start: microseconds while the clusters are small, then about N site
/// visits each once the lattice orders); sized from the first sweeps
/// alone, a stretch would leave Ctrl-C and checkpoints waiting for
/// minutes. A stretch cut short by a measurement leaves the allowance as
/// it was.
pub fn next_stretch(chunk: u64, count: u64, secs: f64, target_secs: f64, slowest_secs: f64) -> u64 {
    let per_sweep = (secs / count.max(1) as f64).max(slowest_secs).max(1e-9);
    let at_pace = (target_secs / per_sweep) as u64;
    at_pace.min(chunk.max(count.saturating_mul(2))).clamp(1, MAX_STRETCH)
}

/// The most a Wolff cluster costs per site it adds, in seconds: 13–24 ns
/// were measured on one 2.7 GHz Xeon core (q = 2, 512², ordered and at
/// T_c), with room for slower cores.
const WOLFF_SECONDS_PER_SITE: f64 = 5e-8;

/// How long one sweep of `chains` chains of `sites` sites each, run on
/// `threads` threads, may take once the chains are in equilibrium, where
/// that is far longer than their first sweeps can show: a Wolff sweep adds
/// about N sites to its clusters in equilibrium, but only a few from a
/// random start below T_c, whose clusters are small. 0 for the other
/// algorithms, whose sweeps cost the same throughout. For
/// [`next_stretch`].
pub fn slowest_sweep_secs(algorithm: Algorithm, sites: u64, chains: usize, threads: usize) -> f64 {
    match algorithm {
        Algorithm::Wolff => {
            let rounds = chains.div_ceil(threads.max(1)).max(1);
            sites as f64 * rounds as f64 * WOLFF_SECONDS_PER_SITE
        }
        _ => 0.0,
    }
}

/// Most spins the chains of one group hold together (a group's lattices
/// are held on the host at checkpoints, one byte per spin).
const GROUP_SITES: u64 = 1 << 28;

/// How a [`Runner`] advances its chains.
enum Engine {
    /// One chain after another on one backend.
    Sequential(Simulation),
    /// Groups of chains advanced together on an ensemble from `opener`
    /// (opened again when a group's size differs from the last one's).
    Ensemble { opener: Box<dyn EnsembleOpener>, ensemble: Box<dyn Ensemble> },
}

/// Runs a protocol: its chains in groups on an [`Ensemble`] (every
/// temperature and sample at once without continuation; the samples of a
/// temperature at once with it), or one after another on a [`Simulation`].
/// Both give the same results bit for bit: a chain's random numbers do not
/// depend on what runs beside it.
pub struct Runner {
    cfg: ProtocolConfig,
    engine: Engine,
    /// Sweeps per stretch between looks at the observer, adapted to last
    /// about [`CHUNK_SECONDS`].
    chunk: u64,
}

impl std::fmt::Debug for Runner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runner")
            .field("cfg", &self.cfg)
            .field("backend", &self.backend_description())
            .field("chunk", &self.chunk)
            .finish()
    }
}

impl Runner {
    /// A runner for `cfg` on the backend its `backend` choice selects (see
    /// [`crate::select`]).
    pub fn new(cfg: ProtocolConfig) -> Result<Self> {
        let device = warpmc_gpu::select(cfg.backend)?;
        Self::on(cfg, &device)
    }

    /// A runner for `cfg` on `device`, running its chains in groups on an
    /// ensemble.
    pub fn on(cfg: ProtocolConfig, device: &warpmc_gpu::Device) -> Result<Self> {
        Self::with_opener(cfg, Box::new(device.clone()))
    }

    /// A runner for `cfg` running its chains in groups on the ensembles
    /// `opener` opens.
    pub fn with_opener(cfg: ProtocolConfig, mut opener: Box<dyn EnsembleOpener>) -> Result<Self> {
        cfg.validate()?;
        let replicas = cfg.temperatures.len() as u64 * cfg.samples as u64;
        // Lattices held on the host at once: each sample's saved state with
        // continuation, every replica at a tempering run's checkpoints.
        let saved = match (cfg.continue_from_previous, cfg.exchange_every) {
            (true, _) => cfg.samples as u64,
            (false, Some(_)) => replicas,
            (false, None) => 0,
        };
        cfg.check_host_memory(saved)?;
        let model = cfg.model()?;
        let first =
            if cfg.exchange_every.is_some() { replicas as usize } else { group_len(&cfg, &RunState::new(&cfg)) };
        let ensemble = opener.open(&model, cfg.algorithm, first)?;
        Ok(Runner { cfg, engine: Engine::Ensemble { opener, ensemble }, chunk: 1 })
    }

    /// A runner for `cfg` on `device` running one chain after another (the
    /// reference order; slower for many small lattices).
    pub fn sequential(cfg: ProtocolConfig, device: &warpmc_gpu::Device) -> Result<Self> {
        let saved = if cfg.continue_from_previous { cfg.samples as u64 } else { 0 };
        cfg.check_host_memory(saved)?;
        let backend = open_backend_for(device, &cfg.model()?, cfg.algorithm)?;
        Self::with_backend(cfg, backend)
    }

    /// A runner for `cfg` running one chain after another on a backend made
    /// by the caller for `cfg`'s model and algorithm.
    pub fn with_backend(cfg: ProtocolConfig, backend: Box<dyn Backend>) -> Result<Self> {
        cfg.validate()?;
        let sim = Simulation::with_backend_running(cfg.model()?, cfg.algorithm, cfg.temperatures[0], backend)?;
        Ok(Runner { cfg, engine: Engine::Sequential(sim), chunk: 1 })
    }

    /// The protocol.
    pub fn config(&self) -> &ProtocolConfig {
        &self.cfg
    }

    /// The simulation the chains run on, for a runner that runs one chain
    /// after another (its lattice is the last chain's); `None` for an
    /// ensemble runner.
    pub fn simulation(&mut self) -> Option<&mut Simulation> {
        match &mut self.engine {
            Engine::Sequential(sim) => Some(sim),
            Engine::Ensemble { .. } => None,
        }
    }

    /// One line saying where the chains run.
    pub fn backend_description(&self) -> String {
        match &self.engine {
            Engine::Sequential(sim) => sim.backend_description(),
            Engine::Ensemble { ensemble, .. } => ensemble.description(),
        }
    }

    fn backend_name(&self) -> &'static str {
        match &self.engine {
            Engine::Sequential(sim) => sim.backend_name(),
            Engine::Ensemble { ensemble, .. } => ensemble.name(),
        }
    }

    /// The lattice of the last chain run (e.g. for a snapshot after the run).
    pub fn lattice(&mut self) -> Result<Lattice> {
        match &mut self.engine {
            Engine::Sequential(sim) => sim.lattice(),
            Engine::Ensemble { ensemble, .. } => {
                let last = ensemble.len() - 1;
                ensemble.lattice(last)
            }
        }
    }

    /// The whole run from the start, with no observer.
    pub fn run_all(&mut self) -> Result<Vec<TemperatureResult>> {
        let mut state = RunState::new(&self.cfg);
        self.run(&mut state, &mut Quiet)
    }

    /// Runs from `state` to the end, returning every temperature's result.
    pub fn run(&mut self, state: &mut RunState, observer: &mut dyn Observer) -> Result<Vec<TemperatureResult>> {
        if let Some(every) = self.cfg.exchange_every {
            return self.run_tempering(every, state, observer);
        }
        match self.engine {
            Engine::Sequential(_) => self.run_sequential(state, observer),
            Engine::Ensemble { .. } => self.run_groups(state, observer),
        }
    }

    /// Runs every replica of a tempering run at once to the end, then
    /// reports every temperature.
    fn run_tempering(
        &mut self,
        every: u64,
        state: &mut RunState,
        observer: &mut dyn Observer,
    ) -> Result<Vec<TemperatureResult>> {
        let cfg = &self.cfg;
        if state.finished(cfg) {
            return state.results(cfg);
        }
        let model = cfg.model()?;
        let Engine::Ensemble { opener, ensemble } = &mut self.engine else {
            return Err(PottsError::InvalidInput(
                "parallel tempering runs on an ensemble; open the runner with Runner::on".into(),
            ));
        };
        if state.tempering.is_none() {
            state.tempering = Some(TemperingState::new(cfg)?);
        }
        let members = state.tempering.as_ref().map_or(0, |t| t.replicas().members());
        if ensemble.len() != members {
            *ensemble = opener.open(&model, cfg.algorithm, members)?;
        }
        let backend = ensemble.name();
        loop {
            let tempering = state.tempering.as_mut().expect("set above");
            let stop = crate::tempering::advance(cfg, every, ensemble.as_mut(), tempering, observer)?;
            match stop {
                Stop::Finished => break,
                Stop::Asked(control) => {
                    observer.checkpoint(cfg, state)?;
                    if control == Control::CheckpointAndStop {
                        return Err(PottsError::Interrupted);
                    }
                }
            }
        }
        let tempering = state.tempering.as_ref().expect("set above");
        state.series = tempering.series().to_vec();
        state.timing = vec![tempering.timing(); cfg.temperatures.len()];
        state.backends = vec![backend.to_string(); cfg.temperatures.len()];
        state.temp_index = cfg.temperatures.len();
        let results = state.results(cfg)?;
        observer.temperatures_done(&results, &results)?;
        Ok(results)
    }

    /// Runs the chains in groups ([`group_len`]), reporting each
    /// temperature once all its samples are done.
    fn run_groups(&mut self, state: &mut RunState, observer: &mut dyn Observer) -> Result<Vec<TemperatureResult>> {
        let mut results = state.results(&self.cfg)?;
        let model = self.cfg.model()?;
        while !state.finished(&self.cfg) {
            self.run_group(state, observer, &model)?;
            let before = results.len();
            while results.len() < state.temp_index.min(self.cfg.temperatures.len()) {
                results.push(state.result(&self.cfg, &model, results.len()));
            }
            match results.len() - before {
                0 => {}
                1 => observer.temperature_done(&results[before], &results)?,
                _ => observer.temperatures_done(&results[before..], &results)?,
            }
        }
        Ok(results)
    }

    /// Runs the group of chains that starts at the state's position to its
    /// last sweep, and moves the position past it.
    fn run_group(&mut self, state: &mut RunState, observer: &mut dyn Observer, model: &PottsModel) -> Result<()> {
        let cfg = &self.cfg;
        let n = group_len(cfg, state);
        let Engine::Ensemble { opener, ensemble } = &mut self.engine else {
            return Err(PottsError::InvalidInput("internal error: a group run on a sequential runner".into()));
        };
        if ensemble.len() != n {
            *ensemble = opener.open(model, cfg.algorithm, n)?;
        }
        let first = state.chain_index(cfg);
        let samples = cfg.samples as u64;
        // (temperature, sample) of each member.
        let members: Vec<(usize, u32)> =
            (first..first + n as u64).map(|c| ((c / samples) as usize, (c % samples) as u32)).collect();
        let chains: Vec<Chain> = members.iter().map(|&(t, s)| Chain::new(cfg.seed, s, t as u32)).collect();
        let current = std::mem::take(&mut state.current);
        if state.sweep > 0 && current.len() != n {
            return Err(PottsError::BadCheckpoint(format!(
                "{n} chains are under way but {} lattices were saved",
                current.len()
            )));
        }
        // One update per temperature (Wolff's measures its cluster size).
        let mut updates: std::collections::BTreeMap<usize, Update> = std::collections::BTreeMap::new();
        for (i, (&(t, s), chain)) in members.iter().zip(&chains).enumerate() {
            let lattice = match current.get(i) {
                Some(l) => l.clone(),
                None => match state.saved.get(s as usize).and_then(Option::as_ref) {
                    Some(l) => l.clone(),
                    None => Lattice::new(model, cfg.init, chain.seed, chain.stream),
                },
            };
            ensemble.load(i, &lattice)?;
            let update = match updates.entry(t) {
                std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::btree_map::Entry::Vacant(e) => {
                    e.insert(Update::new(cfg.algorithm, model, cfg.temperatures[t])?)
                }
            };
            ensemble.set_update(i, update)?;
        }
        drop(current);
        state.group = n;
        state.begin_temperatures(cfg, members[n - 1].0, ensemble.name());
        let sites = model.sites() as u64;
        while state.sweep < cfg.sweeps_per_chain() {
            let count = (cfg.next_stop(state.sweep) - state.sweep).min(self.chunk);
            let started = Instant::now();
            ensemble.sweeps(&chains, state.sweep, count)?;
            state.sweep += count;
            if cfg.measures_after(state.sweep) {
                for (census, &(t, s)) in ensemble.census()?.iter().zip(&members) {
                    state.series[t][s as usize].push(Measurement::from_census(model, census));
                }
            }
            ensemble.synchronize()?;
            let secs = ensemble.agreed_seconds(started.elapsed().as_secs_f64())?;
            // The time of a stretch is shared among the members' temperatures.
            for &(t, _) in &members {
                state.timing[t].seconds += secs / n as f64;
                state.timing[t].updates += count * sites;
            }
            let slowest = slowest_sweep_secs(cfg.algorithm, sites, n, rayon::current_num_threads());
            self.chunk = next_stretch(self.chunk, count, secs, CHUNK_SECONDS, slowest);
            observer.progress(state.sweeps_done(cfg), cfg.total_sweeps());
            let control = observer.control();
            if control != Control::Continue {
                state.current = (0..n).map(|i| ensemble.lattice(i)).collect::<Result<_>>()?;
                observer.checkpoint(cfg, state)?;
                state.current.clear();
                if control == Control::CheckpointAndStop {
                    return Err(PottsError::Interrupted);
                }
            }
        }
        if cfg.continue_from_previous {
            for (i, &(t, s)) in members.iter().enumerate() {
                if t + 1 < cfg.temperatures.len() {
                    state.saved[s as usize] = Some(ensemble.lattice(i)?);
                }
            }
        }
        state.go_to_chain(cfg, first + n as u64);
        Ok(())
    }

    /// One chain after another.
    fn run_sequential(&mut self, state: &mut RunState, observer: &mut dyn Observer) -> Result<Vec<TemperatureResult>> {
        let mut results = state.results(&self.cfg)?;
        let model = self.cfg.model()?;
        while !state.finished(&self.cfg) {
            let backend = self.backend_name();
            state.begin_temperature(&self.cfg, backend);
            let temperature = self.cfg.temperatures[state.temp_index];
            self.sim()?.set_temperature(temperature)?;
            while state.sample < self.cfg.samples {
                self.start_chain(state)?;
                self.run_chain(state, observer)?;
                self.finish_chain(state)?;
            }
            let result = state.result(&self.cfg, &model, state.temp_index);
            results.push(result.clone());
            state.temp_index += 1;
            state.sample = 0;
            observer.temperature_done(&result, &results)?;
        }
        Ok(results)
    }

    fn sim(&mut self) -> Result<&mut Simulation> {
        match &mut self.engine {
            Engine::Sequential(sim) => Ok(sim),
            Engine::Ensemble { .. } => {
                Err(PottsError::InvalidInput("internal error: a sequential run on an ensemble runner".into()))
            }
        }
    }

    /// Loads the lattice the current chain starts from, or continues from
    /// (after a checkpoint), and positions its random numbers.
    fn start_chain(&mut self, state: &mut RunState) -> Result<()> {
        let chain = Chain::new(self.cfg.seed, state.sample, state.temp_index as u32);
        let init = self.cfg.init;
        let sim = self.sim()?;
        let lattice = if state.sweep == 0 {
            match state.saved.get(state.sample as usize).and_then(Option::as_ref) {
                Some(l) => l.clone(),
                None => Lattice::new(sim.model(), init, chain.seed, chain.stream),
            }
        } else {
            if state.current.len() != 1 {
                return Err(PottsError::BadCheckpoint(format!(
                    "{} chains are under way together; continue this run with the ensemble runner",
                    state.current.len()
                )));
            }
            state.current.pop().expect("one lattice")
        };
        sim.set_lattice(&lattice)?;
        sim.set_chain(chain, state.sweep);
        state.group = 1;
        Ok(())
    }

    /// Runs the current chain to its last sweep in stretches that end at
    /// each measurement and at least every [`CHUNK_SECONDS`], looking at
    /// the observer between them.
    fn run_chain(&mut self, state: &mut RunState, observer: &mut dyn Observer) -> Result<()> {
        let (t, s) = (state.temp_index, state.sample as usize);
        let sites = self.sim()?.model().sites() as u64;
        while state.sweep < self.cfg.sweeps_per_chain() {
            let count = (self.cfg.next_stop(state.sweep) - state.sweep).min(self.chunk);
            let started = Instant::now();
            let measures = self.cfg.measures_after(state.sweep + count);
            let sim = self.sim()?;
            sim.sweeps(count)?;
            if measures {
                let m = sim.measure()?;
                state.series[t][s].push(m);
            }
            sim.synchronize()?;
            state.sweep += count;
            let secs = started.elapsed().as_secs_f64();
            state.timing[t].seconds += secs;
            state.timing[t].updates += count * sites;
            let slowest = slowest_sweep_secs(self.cfg.algorithm, sites, 1, 1);
            self.chunk = next_stretch(self.chunk, count, secs, CHUNK_SECONDS, slowest);
            observer.progress(state.sweeps_done(&self.cfg), self.cfg.total_sweeps());
            let control = observer.control();
            if control != Control::Continue {
                state.current = vec![self.sim()?.lattice()?];
                observer.checkpoint(&self.cfg, state)?;
                state.current.clear();
                if control == Control::CheckpointAndStop {
                    return Err(PottsError::Interrupted);
                }
            }
        }
        Ok(())
    }

    /// The current chain reached its last sweep: keep its state if the next
    /// temperature continues from it, and move to the next sample.
    fn finish_chain(&mut self, state: &mut RunState) -> Result<()> {
        if self.cfg.continue_from_previous && state.temp_index + 1 < self.cfg.temperatures.len() {
            state.saved[state.sample as usize] = Some(self.sim()?.lattice()?);
        }
        state.sample += 1;
        state.sweep = 0;
        state.group = 0;
        Ok(())
    }
}

/// Chains in the group that starts at `state`'s position: those already
/// under way (after a checkpoint), or else as many as fit in
/// [`GROUP_SITES`] (and in one ensemble) of the chains left: the rest of
/// the run without continuation, the rest of the temperature's samples
/// with it (each temperature starts from the one before).
pub(crate) fn group_len(cfg: &ProtocolConfig, state: &RunState) -> usize {
    if state.sweep > 0 && !state.current.is_empty() {
        return state.current.len();
    }
    let samples = cfg.samples as u64;
    let first = state.chain_index(cfg);
    let end = if cfg.continue_from_previous {
        (state.temp_index as u64 + 1) * samples
    } else {
        cfg.temperatures.len() as u64 * samples
    };
    let room = (GROUP_SITES / (cfg.size as u64 * cfg.height as u64)).clamp(1, MAX_GROUP as u64);
    end.saturating_sub(first).clamp(1, room) as usize
}

/// Most chains of one group: enough to fill a GPU with small lattices,
/// few enough that results keep coming while a run of very many
/// temperatures goes on.
const MAX_GROUP: usize = 4096;

#[cfg(test)]
mod tests {
    use super::{Algorithm, next_stretch, slowest_sweep_secs};

    #[test]
    fn stretches_grow_at_most_twofold_and_shrink_at_once() {
        // Fast first sweeps (1 µs each) do not buy a stretch of 2^18 sweeps
        // at once: sweeps may slow down a thousandfold as the run goes on.
        assert_eq!(next_stretch(1, 1, 1e-6, 0.25, 0.0), 2);
        assert_eq!(next_stretch(1024, 1024, 1024e-6, 0.25, 0.0), 2048);
        // A stretch cut short (by a measurement) keeps the allowance.
        assert_eq!(next_stretch(4096, 100, 100e-6, 0.25, 0.0), 4096);
        // Slow sweeps shrink the next stretch to the target at once.
        assert_eq!(next_stretch(2048, 2048, 2048.0 * 0.01, 0.25, 0.0), 25);
        assert_eq!(next_stretch(4096, 10, 100.0, 0.25, 0.0), 1);
        // Bounds: at least one sweep, at most 2^20; zero time and zero
        // counts are no trouble.
        assert_eq!(next_stretch(1 << 20, 1 << 20, 0.0, 0.25, 0.0), 1 << 20);
        assert_eq!(next_stretch(0, 0, 0.0, 0.25, 0.0), 1);
        assert_eq!(next_stretch(u64::MAX, u64::MAX, 1.0, 0.25, 0.0), 1 << 20);
    }

    /// Wolff sweeps from a random start below T_c take microseconds, and
    /// N site visits once the lattice orders: a 1024² lattice's stretches
    /// stay a few sweeps long however fast its first sweeps were.
    #[test]
    fn wolff_stretches_are_sized_for_equilibrium_sweeps() {
        let slowest = slowest_sweep_secs(Algorithm::Wolff, 1 << 20, 1, 1);
        let mut chunk = 1;
        for _ in 0..40 {
            chunk = next_stretch(chunk, chunk, chunk as f64 * 2e-6, 0.25, slowest);
        }
        assert!(chunk <= 5, "{chunk}");
        // Chains side by side on several threads: rounds of the threads.
        assert_eq!(
            slowest_sweep_secs(Algorithm::Wolff, 100, 10, 4),
            3.0 * slowest_sweep_secs(Algorithm::Wolff, 100, 1, 1)
        );
        assert_eq!(slowest_sweep_secs(Algorithm::Metropolis, 1 << 20, 1, 1), 0.0);
    }
}
