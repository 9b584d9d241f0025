//! The simulation protocol of the Potts document as a first-class run: a
//! list of temperatures; at each, `samples` independent chains, each
//! thermalised for `therm` sweeps and then measured every `measure_every`
//! sweeps for `sweeps` sweeps; chains start ordered or random, or continue
//! from the state they reached at the previous temperature.
//!
//! [`ProtocolConfig`] is the validated description; [`ConfigFile`] is its
//! TOML form (every key optional so the command line can fill in or
//! override); [`Runner`] executes it on a [`Backend`], reporting to a
//! [`Observer`] and stopping cleanly at any sweep for a checkpoint.

use std::path::Path;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::algorithm::{AcceptanceTable, MAX_CHAIN_INDEX, MAX_SWEEPS_PER_CHAIN, chain_stream};
use crate::backend::{Backend, BackendChoice};
use crate::error::{PottsError, Result};
use crate::lattice::{InitialState, Lattice};
use crate::model::{PottsModel, check_temperature};
use crate::observables::{Measurement, TemperatureResult, analyze};

/// Temperatures of a run: a single value, an inclusive range with a step,
/// or an explicit list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Temperatures {
    /// `"T0:T1:dT"`: T0, T0 + dT, … up to T1 (inclusive, with a tolerance of
    /// 10⁻⁹·dT for rounding).
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
            Temperatures::Range(s) => {
                let parts: Vec<&str> = s.split(':').collect();
                let bad = || {
                    PottsError::InvalidInput(format!(
                        "temperature range '{s}' must be T0:T1:DT with T0 ≤ T1 and DT > 0 (e.g. 0.7:0.8:0.01)"
                    ))
                };
                let [a, b, d] = parts.as_slice() else { return Err(bad()) };
                let (a, b, d): (f64, f64, f64) = (
                    a.trim().parse().map_err(|_| bad())?,
                    b.trim().parse().map_err(|_| bad())?,
                    d.trim().parse().map_err(|_| bad())?,
                );
                if !(d > 0.0 && b >= a && a.is_finite() && b.is_finite()) {
                    return Err(bad());
                }
                let n = ((b - a) / d + 1e-9).floor() as u64 + 1;
                if n >= MAX_CHAIN_INDEX as u64 {
                    return Err(PottsError::InvalidInput(format!("temperature range '{s}' has too many points")));
                }
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

/// A complete, validated run description.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProtocolConfig {
    /// Number of states.
    pub q: u32,
    /// Columns L.
    pub size: usize,
    /// Rows L' (= L when not given).
    pub height: usize,
    /// J.
    pub coupling: f64,
    /// h (favours state 0).
    pub field: f64,
    /// Temperatures in run order.
    pub temperatures: Vec<f64>,
    /// Start state.
    pub init: InitialState,
    /// Thermalisation sweeps per temperature.
    pub therm: u64,
    /// Measurement sweeps per temperature.
    pub sweeps: u64,
    /// Sweeps between measurements.
    pub measure_every: u64,
    /// Independent chains per temperature.
    pub samples: u32,
    /// Seed of every random number of the run.
    pub seed: u64,
    /// Start each temperature from the state the same sample reached at the
    /// previous temperature (the document's protocol) instead of afresh.
    pub continue_from_previous: bool,
    /// Where to run.
    pub backend: BackendChoice,
}

impl ProtocolConfig {
    /// The model this protocol simulates.
    pub fn model(&self) -> Result<PottsModel> {
        PottsModel::new(self.q, self.size, self.height)?.with_coupling(self.coupling)?.with_field(self.field)
    }

    /// Checks every field; the first problem is returned as one line.
    pub fn validate(&self) -> Result<()> {
        self.model()?;
        if self.temperatures.is_empty() {
            return Err(PottsError::InvalidInput("no temperatures given".into()));
        }
        for &t in &self.temperatures {
            check_temperature(t)?;
        }
        if self.measure_every == 0 {
            return Err(PottsError::InvalidInput("--measure-every must be at least 1".into()));
        }
        if self.sweeps < self.measure_every {
            return Err(PottsError::InvalidInput(format!(
                "--sweeps ({}) must be at least --measure-every ({}) to take any measurement",
                self.sweeps, self.measure_every
            )));
        }
        if self.therm.saturating_add(self.sweeps) > MAX_SWEEPS_PER_CHAIN {
            return Err(PottsError::InvalidInput(format!(
                "therm + sweeps must be at most {MAX_SWEEPS_PER_CHAIN} per temperature"
            )));
        }
        if self.samples == 0 || self.samples >= MAX_CHAIN_INDEX {
            return Err(PottsError::InvalidInput(format!(
                "--samples must be between 1 and {}, got {}",
                MAX_CHAIN_INDEX - 1,
                self.samples
            )));
        }
        Ok(())
    }

    /// Sweeps of the whole run, all samples and temperatures.
    pub fn total_sweeps(&self) -> u64 {
        self.temperatures.len() as u64 * self.samples as u64 * (self.therm + self.sweeps)
    }

    /// Measurements per sample and temperature.
    pub fn measurements_per_chain(&self) -> u64 {
        self.sweeps / self.measure_every
    }
}

/// The TOML form of a run. Every key is optional here; missing ones come
/// from the command line or defaults. Unknown keys are an error.
///
/// ```toml
/// q = 9
/// size = 2048
/// temps = "0.7212:0.721347:0.00001"   # or temps = [0.70, 0.72], or temp = 0.72
/// init = "ordered"
/// therm = 100000
/// sweeps = 10000
/// measure_every = 500
/// samples = 1
/// seed = 1
/// continue = true
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// q.
    pub q: Option<u32>,
    /// L.
    pub size: Option<usize>,
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
}

impl ConfigFile {
    /// Parses TOML text (`path` only names the file in errors).
    pub fn parse(text: &str, path: &Path) -> Result<Self> {
        toml::from_str(text).map_err(|e| PottsError::Config {
            path: path.to_path_buf(),
            message: e.message().to_string() + &e.span().map(|s| format!(" (at byte {})", s.start)).unwrap_or_default(),
        })
    }

    /// Reads and parses a TOML file.
    pub fn read(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| PottsError::io(path, e))?;
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
        ConfigFile {
            q: self.q.or(other.q),
            size: self.size.or(other.size),
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
        }
    }

    /// The validated protocol. `q`, `size` and a temperature are required;
    /// the rest defaults to: J = 1, h = 0, ordered start, therm = 1000,
    /// sweeps = 1000, measure_every = 10, samples = 1, seed = 1, no
    /// continuation, backend auto.
    pub fn resolve(&self) -> Result<ProtocolConfig> {
        let need = |what: &str| PottsError::InvalidInput(format!("missing {what} (give it as a flag or in --config)"));
        let size = self.size.ok_or_else(|| need("--size"))?;
        let temperatures = match (&self.temp, &self.temps) {
            (Some(_), Some(_)) => {
                return Err(PottsError::InvalidInput("give either --temp or --temps, not both".into()));
            }
            (Some(t), None) => vec![check_temperature(*t)?],
            (None, Some(ts)) => ts.expand()?,
            (None, None) => return Err(need("--temp or --temps")),
        };
        let cfg = ProtocolConfig {
            q: self.q.ok_or_else(|| need("--q"))?,
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
        };
        cfg.validate()?;
        Ok(cfg)
    }
}

/// Where a run stands: everything needed to continue it bit for bit.
#[derive(Clone, Debug, PartialEq)]
pub struct RunState {
    /// Temperature being run.
    pub temp_index: usize,
    /// Sample being run at that temperature.
    pub sample: u32,
    /// Sweeps the current chain has done at this temperature (0: not started).
    pub sweep: u64,
    /// The current chain's lattice when `sweep > 0` (filled in for checkpoints).
    pub current: Option<Lattice>,
    /// With continuation: each sample's state at the end of its last
    /// finished temperature.
    pub saved: Vec<Option<Lattice>>,
    /// Measurements: per temperature begun, per sample.
    pub series: Vec<Vec<Vec<Measurement>>>,
    /// Per temperature begun: seconds spent and site updates done.
    pub timing: Vec<(f64, u64)>,
    /// Backend name used per temperature begun.
    pub backends: Vec<String>,
}

impl RunState {
    /// The state of a run that has not started.
    pub fn new(cfg: &ProtocolConfig) -> Self {
        RunState {
            temp_index: 0,
            sample: 0,
            sweep: 0,
            current: None,
            saved: vec![None; if cfg.continue_from_previous { cfg.samples as usize } else { 0 }],
            series: Vec::new(),
            timing: Vec::new(),
            backends: Vec::new(),
        }
    }

    /// Whether every temperature is done.
    pub fn finished(&self, cfg: &ProtocolConfig) -> bool {
        self.temp_index >= cfg.temperatures.len()
    }

    /// Results of the temperatures finished so far.
    pub fn results(&self, cfg: &ProtocolConfig) -> Result<Vec<TemperatureResult>> {
        let model = cfg.model()?;
        Ok((0..self.temp_index.min(cfg.temperatures.len())).map(|t| self.result(cfg, &model, t)).collect())
    }

    fn result(&self, cfg: &ProtocolConfig, model: &PottsModel, t: usize) -> TemperatureResult {
        let temp = cfg.temperatures[t];
        let (secs, updates) = self.timing[t];
        let rate = if secs > 0.0 { updates as f64 / (secs * 1e9) } else { 0.0 };
        analyze(model, temp, &self.series[t], cfg.measure_every).into_result(
            temp,
            cfg.therm + cfg.sweeps,
            cfg.samples,
            rate,
            &self.backends[t],
        )
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

/// Runs a protocol on a backend.
pub struct Runner<'a> {
    cfg: ProtocolConfig,
    model: PottsModel,
    backend: &'a mut dyn Backend,
}

impl std::fmt::Debug for Runner<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runner").field("cfg", &self.cfg).field("backend", &self.backend.name()).finish()
    }
}

impl<'a> Runner<'a> {
    /// A runner for `cfg` (validated here) on `backend`.
    pub fn new(cfg: ProtocolConfig, backend: &'a mut dyn Backend) -> Result<Self> {
        cfg.validate()?;
        let model = cfg.model()?;
        Ok(Runner { cfg, model, backend })
    }

    /// Runs from `state` to the end, returning every temperature's result.
    pub fn run(&mut self, state: &mut RunState, observer: &mut dyn Observer) -> Result<Vec<TemperatureResult>> {
        let cfg = self.cfg.clone();
        let n = self.model.sites() as u64;
        let per_chain = cfg.therm + cfg.sweeps;
        let total = cfg.total_sweeps();
        let mut sweeps_per_chunk = 1u64;
        let mut results = state.results(&cfg)?;
        while !state.finished(&cfg) {
            let t = state.temp_index;
            let temp = cfg.temperatures[t];
            if state.series.len() <= t {
                state.series.push(vec![Vec::new(); cfg.samples as usize]);
                state.timing.push((0.0, 0));
                state.backends.push(self.backend.name().to_string());
            }
            self.backend.set_table(&AcceptanceTable::metropolis(&self.model, temp))?;
            while state.sample < cfg.samples {
                let s = state.sample;
                let stream = chain_stream(s, t as u32);
                if state.sweep == 0 {
                    let start = match state.saved.get(s as usize).and_then(|l| l.as_ref()) {
                        Some(l) => l.clone(),
                        None => Lattice::new(&self.model, cfg.init, cfg.seed, stream),
                    };
                    self.backend.load(&start)?;
                } else {
                    let current = state.current.take().ok_or_else(|| PottsError::Checkpoint {
                        path: "".into(),
                        message: "a chain is under way but its lattice is missing".into(),
                    })?;
                    self.backend.load(&current)?;
                }
                while state.sweep < per_chain {
                    // Next stop: a measurement, the end of thermalisation, or a chunk limit.
                    let next_stop = if state.sweep < cfg.therm {
                        cfg.therm
                    } else {
                        let k = (state.sweep - cfg.therm) / cfg.measure_every + 1;
                        cfg.therm + k * cfg.measure_every
                    }
                    .min(per_chain);
                    let count = (next_stop - state.sweep).min(sweeps_per_chunk);
                    let started = Instant::now();
                    self.backend.sweeps(cfg.seed, stream, state.sweep, count)?;
                    state.sweep += count;
                    if state.sweep > cfg.therm && (state.sweep - cfg.therm) % cfg.measure_every == 0 {
                        let census = self.backend.census()?;
                        state.series[t][s as usize].push(Measurement::from_census(&self.model, &census));
                    }
                    self.backend.synchronize()?;
                    let secs = started.elapsed().as_secs_f64();
                    state.timing[t].0 += secs;
                    state.timing[t].1 += count * n;
                    // Aim for chunks of about CHUNK_SECONDS.
                    let per_sweep = secs / count as f64;
                    sweeps_per_chunk = ((CHUNK_SECONDS / per_sweep.max(1e-9)) as u64).clamp(1, 1 << 20);
                    let done = (t as u64 * cfg.samples as u64 + s as u64) * per_chain + state.sweep;
                    observer.progress(done, total);
                    let control = observer.control();
                    if control != Control::Continue {
                        state.current = Some(self.backend.lattice()?);
                        observer.checkpoint(&cfg, state)?;
                        state.current = None;
                        if control == Control::CheckpointAndStop {
                            return Err(PottsError::Interrupted);
                        }
                    }
                }
                self.finish_chain(state)?;
            }
            // Every sample of temperature t is done.
            let result = state.result(&cfg, &self.model, t);
            results.push(result.clone());
            state.temp_index += 1;
            state.sample = 0;
            observer.temperature_done(&result, &results)?;
        }
        Ok(results)
    }

    /// The current chain reached its last sweep: keep its state if the next
    /// temperature continues from it, and move to the next sample.
    fn finish_chain(&mut self, state: &mut RunState) -> Result<()> {
        if self.cfg.continue_from_previous && state.temp_index + 1 < self.cfg.temperatures.len() {
            state.saved[state.sample as usize] = Some(self.backend.lattice()?);
        }
        state.sample += 1;
        state.sweep = 0;
        Ok(())
    }

    /// The backend's current lattice (e.g. for a snapshot after the run).
    pub fn lattice(&mut self) -> Result<Lattice> {
        self.backend.lattice()
    }
}
