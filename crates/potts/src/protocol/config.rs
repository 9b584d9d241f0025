//! [`ProtocolConfig`], the validated description of a run, with the
//! checks made before its first sweep: memory for every measurement, and
//! a Metropolis rule that can still reject at every temperature.

use serde::{Deserialize, Serialize};

use warpmc_gpu::BackendChoice;

use crate::algorithm::{ALWAYS, MAX_CHAIN_INDEX, MAX_SWEEPS_PER_CHAIN, chain_stream, mix_key};
use crate::error::{PottsError, Result};
use crate::lattice::InitialState;
use crate::model::{PottsModel, check_temperature};
use crate::observables::Measurement;
use crate::update::Algorithm;

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
                let number = |p: &str| -> Result<f64> {
                    let what = match p.trim() {
                        "" => "a part is empty".to_string(),
                        p => match p.parse::<f64>() {
                            Ok(x) if x.is_finite() => return Ok(x),
                            _ => format!("'{p}' is not a finite number"),
                        },
                    };
                    Err(PottsError::InvalidInput(format!(
                        "temperature range '{s}': {what} (a range is T0:T1:DT, e.g. 0.7:0.8:0.01)"
                    )))
                };
                let (a, b, d) = (number(a)?, number(b)?, number(d)?);
                let up = d > 0.0 && b >= a;
                let down = d < 0.0 && b <= a;
                if !(up || down) {
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

/// A complete, validated run description. Made by
/// [`ConfigFile::resolve`](super::ConfigFile::resolve) (or read back from a
/// checkpoint), so every value in it has been checked; deserialized, it is
/// checked as it is read.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "UncheckedConfig")]
pub struct ProtocolConfig {
    pub(super) q: u32,
    pub(super) size: usize,
    pub(super) height: usize,
    pub(super) coupling: f64,
    pub(super) field: f64,
    pub(super) temperatures: Vec<f64>,
    pub(super) init: InitialState,
    pub(super) therm: u64,
    pub(super) sweeps: u64,
    pub(super) measure_every: u64,
    pub(super) samples: u32,
    pub(super) seed: u64,
    pub(super) continue_from_previous: bool,
    pub(super) backend: BackendChoice,
    /// The update algorithm (Metropolis in checkpoints written before
    /// there was a choice).
    pub(super) algorithm: Algorithm,
    /// Sweeps between replica-exchange rounds of parallel tempering
    /// ([`crate::tempering`]); `None`: no tempering.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) exchange_every: Option<u64>,
    /// Every size of the finite-size-scaling study this protocol is one
    /// size of, in run order (empty: a run of one size).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(super) sizes: Vec<usize>,
}

/// A [`ProtocolConfig`] as serialized, before its values are checked:
/// what every deserialization reads first ([`ProtocolConfig`]'s own then
/// validates it; a checkpoint's reader validates it itself, to name the
/// problem as the protocol's rather than as the file's).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct UncheckedConfig {
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
    #[serde(default)]
    algorithm: Algorithm,
    #[serde(default)]
    exchange_every: Option<u64>,
    #[serde(default)]
    sizes: Vec<usize>,
}

impl UncheckedConfig {
    /// The configuration, its values not checked.
    pub(crate) fn unchecked(self) -> ProtocolConfig {
        let UncheckedConfig {
            q,
            size,
            height,
            coupling,
            field,
            temperatures,
            init,
            therm,
            sweeps,
            measure_every,
            samples,
            seed,
            continue_from_previous,
            backend,
            algorithm,
            exchange_every,
            sizes,
        } = self;
        ProtocolConfig {
            q,
            size,
            height,
            coupling,
            field,
            temperatures,
            init,
            therm,
            sweeps,
            measure_every,
            samples,
            seed,
            continue_from_previous,
            backend,
            algorithm,
            exchange_every,
            sizes,
        }
    }
}

impl TryFrom<UncheckedConfig> for ProtocolConfig {
    type Error = PottsError;

    fn try_from(raw: UncheckedConfig) -> Result<Self> {
        let config = raw.unchecked();
        config.validate()?;
        Ok(config)
    }
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

    /// The key of this lattice's random numbers: the seed mixed with q,
    /// J, h and the lattice's width and height, so that the sizes of a
    /// study, and runs of another size or model (a coupling or field scan)
    /// under the same seed, draw unrelated numbers. A tempering run's
    /// exchange decisions use it.
    pub fn model_key(&self) -> u64 {
        let words =
            [self.q as u64, value_bits(self.coupling), value_bits(self.field), self.size as u64, self.height as u64];
        mix_key(self.seed, &words)
    }

    /// The random numbers of sample `sample` at temperature number
    /// `temp_index`: keyed by [`Self::model_key`] and the temperature's
    /// value, so that separate runs at other temperatures under the same
    /// seed draw unrelated numbers, on the stream
    /// [`chain_stream`]`(sample, temp_index)`, so that a temperature
    /// listed twice gives two chains. `temp_index` must be one of the run's.
    pub fn chain(&self, sample: u32, temp_index: usize) -> crate::Chain {
        let t = self.temperatures[temp_index];
        crate::Chain {
            seed: mix_key(self.model_key(), &[value_bits(t)]),
            stream: chain_stream(sample, temp_index as u32),
        }
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
    pub fn too_short_to_alternate(&self, temperature: f64) -> bool {
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

/// The rejections per site a q = 2 Metropolis chain needs over its sweeps
/// ([`ProtocolConfig::metropolis_rejection`] each sweep) before its results
/// count; fewer flag its rows `too_short`:
/// its alternation between a configuration and its near-inverse breaks
/// only through rejections, so its relaxation takes about 1/rejection
/// sweeps, and a run is trusted with about 100 relaxation times.
pub const MIN_ALTERNATION_REJECTIONS: f64 = 100.0;

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
    let mut largest = (0u64, 0usize, 0usize);
    for cfg in study {
        let model = cfg.model()?;
        if model.host_bytes(0) > largest.0 {
            largest = (model.host_bytes(0), model.width(), model.height());
        }
    }
    let (lattice, width, height) = largest;
    let per_process = kept
        .saturating_mul(per_measurement)
        .saturating_add(rows.saturating_mul(ROW_HOST_BYTES))
        .saturating_add(lattice);
    let bytes = per_process.saturating_mul(processes.max(1));
    let what = format!(
        "keeping the run's {width} × {height} lattice, its {} of results and {}{}{}",
        count(rows, "row"),
        count(kept, "measurement"),
        if checkpoints { " and checkpointing them" } else { "" },
        if processes > 1 { format!(" in each of the {processes} processes on this machine") } else { String::new() },
    );
    // Mostly the lattice: under MPI each process gathers whole lattices
    // (checkpoints, snapshots), so measuring less would not help.
    let advice = match (processes > 1, lattice.saturating_mul(2) >= per_process) {
        (true, true) => "run fewer processes on each machine (each holds a whole lattice)".to_string(),
        (true, false) => format!("{MEASURE_LESS}, or run fewer processes on each machine"),
        (false, _) => MEASURE_LESS.to_string(),
    };
    warpmc_host::check_allocation(&what, bytes).map_err(|e| PottsError::OutOfHostMemory(format!("{e}; {advice}")))
}

/// A count in scientific notation with three digits: 1.65e+12.
pub fn sci(x: f64) -> String {
    format!("{x:.2e}").replace('e', "e+").replace("e+-", "e-")
}

/// `n` things in words: "1 row", "20 rows", "1.65e+12 measurements" (in
/// scientific notation from a million on).
fn count(n: u64, thing: &str) -> String {
    let plural = if n == 1 { "" } else { "s" };
    if n < 1_000_000 { format!("{n} {thing}{plural}") } else { format!("{} {thing}s", sci(n as f64)) }
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

/// A number's bits for a key, with −0 read as 0 (the same model).
fn value_bits(x: f64) -> u64 {
    if x == 0.0 { 0 } else { x.to_bits() }
}
