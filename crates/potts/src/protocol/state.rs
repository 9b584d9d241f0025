//! [`RunState`], where a run stands: everything a checkpoint needs to
//! continue it bit for bit, and the results it turns into.

use serde::{Deserialize, Serialize};

use crate::error::{PottsError, Result};
use crate::lattice::Lattice;
use crate::model::PottsModel;
use crate::observables::{Measurement, RunFacts, TemperatureResult, analyze, spans_too_few_taus};
use crate::tempering::{ExchangeStats, TemperingState, summed_energy_tau_int};

use super::ProtocolConfig;

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
    /// The backend that ran this size, as [`Runner::backend_description`]
    /// says it, once a runner has run it in this process (kept with the
    /// size when the study moves on; not saved with the size under way).
    ///
    /// [`Runner::backend_description`]: super::Runner::backend_description
    pub(crate) backend_description: Option<String>,
    /// Seconds between periodic checkpoints that the run was given, kept
    /// in its checkpoint so that a resumed run saves as often (`None`: the
    /// driver's default).
    pub(crate) checkpoint_every: Option<f64>,
    /// A finished run's last lattice (its last chain's), kept where the run
    /// wrote a snapshot of it so that the snapshot can be written again
    /// from the checkpoint ([`RunState::keep_last_lattice`]).
    pub(crate) last_lattice: Option<Lattice>,
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
    /// The backend that ran the size (its end, if it was resumed), as
    /// [`RunState::backend_description`]; absent from checkpoints written
    /// before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) backend_description: Option<String>,
}

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
            backend_description: None,
            checkpoint_every: None,
            last_lattice: None,
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
            backend_description: self.backend_description.clone(),
        });
        state.checkpoint_every = self.checkpoint_every;
        Ok(state)
    }

    /// Seconds between periodic checkpoints that the run was given
    /// (`--checkpoint-every`, Python's `checkpoint_every`), as its
    /// checkpoint keeps them; `None` for the default.
    pub fn checkpoint_every(&self) -> Option<f64> {
        self.checkpoint_every
    }

    /// Records the seconds between periodic checkpoints, for the
    /// checkpoints written from here on (see [`RunState::checkpoint_every`]).
    /// A value that is not a positive number is recorded as `None`.
    pub fn set_checkpoint_every(&mut self, seconds: Option<f64>) {
        self.checkpoint_every = seconds.filter(|s| s.is_finite() && *s > 0.0);
    }

    /// Keeps `lattice`, the last lattice of this finished run (the study's
    /// last size), in the state and so in its checkpoint: a snapshot that
    /// could not be written, or another one, can then be made from the
    /// checkpoint without running again. Refused unless the run is
    /// finished (the last size of its study too) and the lattice is of its
    /// size and q.
    pub fn keep_last_lattice(&mut self, cfg: &ProtocolConfig, lattice: Lattice) -> Result<()> {
        let fits = lattice.width() == cfg.size() && lattice.height() == cfg.height() && lattice.q() == cfg.q();
        let last_size = cfg.study_sizes().last() == Some(&cfg.size());
        if !self.finished(cfg) || !last_size || !fits {
            return Err(PottsError::InvalidInput(
                "only a finished run keeps a last lattice, one of its own size and q".into(),
            ));
        }
        self.last_lattice = Some(lattice);
        Ok(())
    }

    /// The finished run's last lattice, if it was kept
    /// ([`RunState::keep_last_lattice`]).
    pub fn last_lattice(&self) -> Option<&Lattice> {
        self.last_lattice.as_ref()
    }

    /// The backend that describes this size's results: for a finished
    /// size, the one its state records as having run it (a checkpoint read
    /// back on another machine names the machine that ran the run), else
    /// `running`, the backend about to run it.
    pub fn size_backend(&self, cfg: &ProtocolConfig, running: String) -> String {
        match &self.backend_description {
            Some(ran) if self.finished(cfg) => ran.clone(),
            _ => running,
        }
    }

    /// The backend that ran each of the study's finished sizes, as
    /// [`Runner::backend_description`] said it: `(L, description)` for
    /// those whose record has one (checkpoints written before warpmc
    /// recorded it have none).
    ///
    /// [`Runner::backend_description`]: super::Runner::backend_description
    pub fn earlier_backends(&self) -> impl Iterator<Item = (usize, &str)> {
        self.earlier.iter().filter_map(|r| Some((r.size, r.backend_description.as_deref()?)))
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

    /// Temperatures of this size finished (a tempering run finishes them
    /// all at once, at its end).
    pub fn temperatures_finished(&self, cfg: &ProtocolConfig) -> usize {
        self.temp_index.min(cfg.temperatures.len())
    }

    /// The chains under way and the sweeps each has done at its
    /// temperature (a tempering run: every replica, at the run's sweep);
    /// `(0, 0)` between chains.
    pub fn under_way(&self) -> (usize, u64) {
        match &self.tempering {
            Some(t) if !t.lattices.is_empty() => (t.replicas().members(), t.sweep()),
            _ if self.sweep > 0 => (self.group.max(1), self.sweep),
            _ => (0, 0),
        }
    }

    /// The backend that ran this size so far (its end, if it was resumed),
    /// as the state records it; `None` before a runner has run it.
    pub fn recorded_backend(&self) -> Option<&str> {
        self.backend_description.as_deref()
    }

    /// The sizes of the study finished before this one.
    pub fn sizes_finished(&self) -> usize {
        self.earlier.len()
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
    pub(super) fn chain_index(&self, cfg: &ProtocolConfig) -> u64 {
        self.temp_index as u64 * cfg.samples as u64 + self.sample as u64
    }

    /// Moves the position to run-order chain `index`, at its sweep 0.
    pub(super) fn go_to_chain(&mut self, cfg: &ProtocolConfig, index: u64) {
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

    pub(super) fn result(&self, cfg: &ProtocolConfig, model: &PottsModel, t: usize) -> TemperatureResult {
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
    pub(super) fn begin_temperature(&mut self, cfg: &ProtocolConfig, backend: &str) {
        self.begin_temperatures(cfg, self.temp_index, backend);
    }

    /// Opens the books of every temperature up to `last`.
    pub(super) fn begin_temperatures(&mut self, cfg: &ProtocolConfig, last: usize, backend: &str) {
        while self.series.len() <= last {
            self.series.push(vec![Vec::new(); cfg.samples as usize]);
            self.timing.push(Timing::default());
            self.backends.push(backend.to_string());
        }
    }
}
