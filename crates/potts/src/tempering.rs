//! Parallel tempering (replica exchange; Swendsen and Wang 1986, Geyer
//! 1991, Hukushima and Nemoto 1996).
//!
//! A run of n temperatures T₀, T₁, …, T_{n−1} (strictly monotonic, in the
//! order given) holds n replicas per sample, all in one [`Ensemble`]. Every
//! `exchange_every` sweeps, neighbouring temperatures offer to swap their
//! replicas: the pair (t, t + 1), holding replicas a and b with energies
//! E_a and E_b, swaps with probability
//!
//! min(1, exp((1/T_t − 1/T_{t+1})·(E_a − E_b))),
//!
//! which keeps every temperature's Boltzmann distribution. There is no round
//! after the run's last sweep, where a swap would change nothing measured:
//! S sweeps in all (thermalization included) give ⌊(S − 1)/exchange_every⌋
//! rounds. Rounds alternate
//! between the pairs with even t and those with odd t, so each round's
//! decisions are independent of one another.
//!
//! # What stays bit-identical
//!
//! A replica keeps its chain of random numbers for the whole run: replica
//! r of sample s uses [`ProtocolConfig::chain`]`(s, r)`, the chain of
//! temperature r in a run without tempering, whatever temperature it
//! holds. The decision of pair t in exchange round k of sample s compares
//! exp(Δ) with the 32-bit word `t mod 4` of the Philox block (the run's
//! key [`ProtocolConfig::model_key`], stream [`Domain::Tempering`] s,
//! counter k·2²² + ⌊t/4⌋), read as
//! (w + ½)/2³². Energies come from the integer census, so the decisions,
//! made on the host, are the same on every backend, and the run is
//! bit-identical between the CPU and the GPU. A checkpoint stores the
//! permutation, the round count and the statistics; nothing else is needed
//! to continue.
//!
//! # What is reported
//!
//! Results are per temperature (the measurements of whichever replica held
//! it). [`ExchangeStats`] gives the acceptance rate of each neighbouring
//! pair and the round trips: a replica completes one when it has travelled
//! from the lowest-index temperature to the highest and back
//! (Katzgraber, Trebst, Huse and Troyer 2006). [`summed_energy_tau_int`]
//! gives how fast the replicas themselves relax, which round trips do not
//! show at a first-order transition; a run shorter than 100 of it has
//! every row `too_short`.

use std::time::Instant;

use serde::{Deserialize, Serialize};
use warpmc_rng::{Domain, philox_block};

use crate::ensemble::Ensemble;
use crate::error::{PottsError, Result};
use crate::lattice::{Census, Lattice};
use crate::model::PottsModel;
use crate::observables::{Measurement, RunFacts, TemperatureResult, analyze};
use crate::protocol::{Control, Observer, ProtocolConfig, Timing, add_exchange};
use crate::simulation::Chain;
use crate::stats::GammaMethod;
use crate::update::Update;

/// Where a replica last stood among the two ends of the temperature list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
enum End {
    /// It has visited neither end yet.
    Neither,
    /// It last visited the first temperature.
    First,
    /// It last visited the last temperature, having come from the first.
    LastFromFirst,
    /// It last visited the last temperature and never the first before.
    Last,
}

/// Exchange statistics of a tempering run, summed over samples. In a run
/// driven by [`advance`] the offers, acceptances and round trips are
/// those of the rounds after thermalisation (a round trip counts when it
/// ends there); `rounds` counts every round.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExchangeStats {
    /// Offers made to the pair (T_t, T_{t+1}), per t.
    pub attempts: Vec<u64>,
    /// Offers accepted, per pair.
    pub accepted: Vec<u64>,
    /// Completed round trips first → last → first temperature, all
    /// replicas of all samples.
    pub round_trips: u64,
    /// Exchange rounds done, thermalisation included.
    pub rounds: u64,
}

impl ExchangeStats {
    /// Acceptance rate of each neighbouring pair (NaN before any offer).
    pub fn acceptance(&self) -> Vec<f64> {
        self.attempts.iter().zip(&self.accepted).map(|(&n, &a)| a as f64 / n as f64).collect()
    }
}

/// The replica bookkeeping of one tempering run: which replica holds which
/// temperature in each sample, and the exchange statistics.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Replicas {
    seed: u64,
    /// 1/T of each temperature.
    betas: Vec<f64>,
    /// `replica_at[s][t]`: the replica of sample s at temperature t.
    replica_at: Vec<Vec<u32>>,
    /// `ends[s][r]`: where replica r of sample s last stood.
    ends: Vec<Vec<End>>,
    stats: ExchangeStats,
}

impl Replicas {
    /// Replicas of `samples` samples at `temperatures` (strictly increasing
    /// or strictly decreasing), replica r starting at temperature r.
    /// Refused, before anything is allocated, when the temperatures or
    /// the samples cannot be tempered ([`Replicas::check`]) or the
    /// bookkeeping (5 bytes per sample and temperature) does not fit in
    /// memory. `seed` keys the exchange decisions: a run's
    /// [`ProtocolConfig::model_key`].
    pub fn new(temperatures: &[f64], samples: u32, seed: u64) -> Result<Self> {
        Self::check(temperatures, samples)?;
        let n = temperatures.len();
        let bytes = (samples as u64).saturating_mul(n as u64).saturating_mul(5);
        warpmc_host::check_allocation("the replicas' bookkeeping", bytes)
            .map_err(|e| PottsError::OutOfHostMemory(format!("{e}; ask for fewer temperatures or samples")))?;
        let mut ends = vec![vec![End::Neither; n]; samples as usize];
        for e in &mut ends {
            e[0] = End::First;
            if n > 1 {
                e[n - 1] = End::Last;
            }
        }
        Ok(Replicas {
            seed,
            betas: temperatures.iter().map(|t| 1.0 / t).collect(),
            replica_at: vec![(0..n as u32).collect(); samples as usize],
            ends,
            stats: ExchangeStats {
                attempts: vec![0; n.saturating_sub(1)],
                accepted: vec![0; n.saturating_sub(1)],
                round_trips: 0,
                rounds: 0,
            },
        })
    }

    /// Whether `samples` samples at `temperatures` can be tempered: at
    /// least one temperature, all strictly increasing or strictly
    /// decreasing, and at least one sample; fewer than 2²⁴ of each.
    /// Allocates nothing.
    pub fn check(temperatures: &[f64], samples: u32) -> Result<()> {
        let n = temperatures.len();
        if n == 0 {
            return Err(PottsError::InvalidInput("parallel tempering needs at least one temperature".into()));
        }
        let increasing = temperatures.windows(2).all(|w| w[0] < w[1]);
        let decreasing = temperatures.windows(2).all(|w| w[0] > w[1]);
        if !(increasing || decreasing) {
            return Err(PottsError::InvalidInput(
                "parallel tempering needs strictly increasing or strictly decreasing temperatures".into(),
            ));
        }
        if n >= 1 << 24 || samples as u64 >= 1 << 24 {
            return Err(PottsError::InvalidInput("too many temperatures or samples for parallel tempering".into()));
        }
        if samples == 0 {
            return Err(PottsError::InvalidInput("parallel tempering needs at least one sample".into()));
        }
        Ok(())
    }

    /// Whether this bookkeeping belongs to `cfg` (as read from a
    /// checkpoint): its temperatures and samples, permutations that are
    /// permutations, statistics of the right length.
    pub(crate) fn fits(&self, cfg: &ProtocolConfig) -> bool {
        let n = cfg.temperatures().len();
        let betas_match =
            self.betas.len() == n && cfg.temperatures().iter().zip(&self.betas).all(|(t, b)| 1.0 / t == *b);
        let permutation = |p: &Vec<u32>| {
            let mut seen = vec![false; n];
            p.len() == n && p.iter().all(|&r| (r as usize) < n && !std::mem::replace(&mut seen[r as usize], true))
        };
        betas_match
            && self.seed == cfg.model_key()
            && self.replica_at.len() == cfg.samples() as usize
            && self.replica_at.iter().all(permutation)
            && self.ends.len() == self.replica_at.len()
            && self.ends.iter().all(|e| e.len() == n)
            && self.stats.attempts.len() == n.saturating_sub(1)
            && self.stats.accepted.len() == n.saturating_sub(1)
            && self.stats.accepted.iter().zip(&self.stats.attempts).all(|(a, n)| a <= n)
    }

    /// Temperatures per sample.
    pub fn temperatures(&self) -> usize {
        self.betas.len()
    }

    /// Samples.
    pub fn samples(&self) -> usize {
        self.replica_at.len()
    }

    /// Ensemble members: samples × temperatures.
    pub fn members(&self) -> usize {
        self.samples() * self.temperatures()
    }

    /// The ensemble member of replica `replica` of sample `sample`.
    pub fn member(&self, sample: usize, replica: usize) -> usize {
        sample * self.temperatures() + replica
    }

    /// The replica of sample `sample` at temperature `t`.
    pub fn replica_at(&self, sample: usize, t: usize) -> usize {
        self.replica_at[sample][t] as usize
    }

    /// `replica_at` of every sample: `[sample][temperature]` (what a
    /// checkpoint stores).
    pub fn permutation(&self) -> &[Vec<u32>] {
        &self.replica_at
    }

    /// The exchange statistics so far.
    pub fn stats(&self) -> &ExchangeStats {
        &self.stats
    }

    /// The same replicas with their exchange decisions keyed by `seed` (a
    /// finished run read from an earlier checkpoint format, which keyed
    /// them otherwise and makes no more).
    pub(crate) fn rekeyed(self, seed: u64) -> Self {
        Replicas { seed, ..self }
    }

    /// Each member's chain, in member order: replica r of sample s uses the
    /// chain of temperature r of `cfg` (the run these replicas belong to)
    /// without tempering.
    pub fn chains(&self, cfg: &ProtocolConfig) -> Vec<Chain> {
        let n = self.temperatures();
        (0..self.members()).map(|m| cfg.chain((m / n) as u32, m % n)).collect()
    }

    /// Gives each member the update of the temperature its replica holds
    /// (`updates[t]` for temperature t).
    pub fn apply_tables(&self, ensemble: &mut dyn Ensemble, updates: &[Update]) -> Result<()> {
        for s in 0..self.samples() {
            for (t, update) in updates.iter().enumerate() {
                ensemble.set_update(self.member(s, self.replica_at(s, t)), update)?;
            }
        }
        Ok(())
    }

    /// One exchange round from the members' censuses (in member order).
    /// Returns whether any replica changed temperature.
    pub fn exchange(&mut self, model: &PottsModel, censuses: &[Census]) -> Result<bool> {
        if censuses.len() != self.members() {
            return Err(PottsError::InvalidInput(format!(
                "an exchange round needs {} censuses, got {}",
                self.members(),
                censuses.len()
            )));
        }
        if let Some(c) = censuses.iter().find(|c| c.counts().len() != model.q() as usize) {
            return Err(PottsError::InvalidInput(format!(
                "a census of {} states where the model has q = {}",
                c.counts().len(),
                model.q()
            )));
        }
        let n = self.temperatures();
        let round = self.stats.rounds;
        let parity = (round % 2) as usize;
        let mut changed = false;
        for s in 0..self.samples() {
            let stream = Domain::Tempering.stream(s as u64);
            let mut block = None;
            for t in (parity..n.saturating_sub(1)).step_by(2) {
                let (a, b) = (self.replica_at[s][t] as usize, self.replica_at[s][t + 1] as usize);
                let energy = |r: usize| {
                    let c = &censuses[self.member(s, r)];
                    model.energy(c.equal_bonds(), c.counts()[0])
                };
                let delta = (self.betas[t] - self.betas[t + 1]) * (energy(a) - energy(b));
                let counter = (round << 22) | (t as u64 >> 2);
                let words = match block {
                    Some((c, w)) if c == counter => w,
                    _ => {
                        let w = philox_block(self.seed, stream, counter);
                        block = Some((counter, w));
                        w
                    }
                };
                let u = (words[t % 4] as f64 + 0.5) / 4_294_967_296.0;
                self.stats.attempts[t] += 1;
                if delta >= 0.0 || u < delta.exp() {
                    self.stats.accepted[t] += 1;
                    self.replica_at[s].swap(t, t + 1);
                    changed = true;
                }
            }
            self.track_ends(s);
        }
        self.stats.rounds += 1;
        Ok(changed)
    }

    /// Starts the acceptance counts and the round trips afresh, as the
    /// run's measurements begin: they describe the measured part of the
    /// run, not the approach to equilibrium. The rounds, which number the
    /// random words, and where each replica last stood go on.
    fn restart_stats(&mut self) {
        self.stats.attempts.iter_mut().for_each(|a| *a = 0);
        self.stats.accepted.iter_mut().for_each(|a| *a = 0);
        self.stats.round_trips = 0;
    }

    /// Updates where the replicas at the two ends last stood, counting the
    /// round trips completed.
    fn track_ends(&mut self, s: usize) {
        let n = self.temperatures();
        if n < 2 {
            return;
        }
        let first = self.replica_at[s][0] as usize;
        if self.ends[s][first] == End::LastFromFirst {
            self.stats.round_trips += 1;
        }
        self.ends[s][first] = End::First;
        let last = self.replica_at[s][n - 1] as usize;
        self.ends[s][last] = match self.ends[s][last] {
            End::First | End::LastFromFirst => End::LastFromFirst,
            End::Neither | End::Last => End::Last,
        };
    }
}

/// Where a tempering run stands: everything needed to continue it bit for
/// bit (see [`crate::checkpoint`]).
#[derive(Clone, Debug, PartialEq)]
pub struct TemperingState {
    /// Sweeps every replica has done.
    pub(crate) sweep: u64,
    /// The permutation and statistics.
    pub(crate) replicas: Replicas,
    /// Every member's lattice, in member order (filled in for checkpoints;
    /// empty while the ensemble holds them).
    pub(crate) lattices: Vec<Lattice>,
    /// Measurements: `[temperature][sample]`.
    pub(crate) series: Vec<Vec<Vec<Measurement>>>,
    /// Time and updates of the whole run.
    pub(crate) timing: Timing,
    /// Whether the ensemble holds the members' lattices (false before the
    /// first stretch and after a resume).
    loaded: bool,
}

impl TemperingState {
    /// The state of a run that has not started.
    pub fn new(cfg: &ProtocolConfig) -> Result<Self> {
        let replicas = Replicas::new(cfg.temperatures(), cfg.samples(), cfg.model_key())?;
        let series_bytes = (cfg.samples() as u64)
            .saturating_mul(cfg.temperatures().len() as u64)
            .saturating_mul(size_of::<Vec<Measurement>>() as u64);
        warpmc_host::check_allocation("the measurement series' lists", series_bytes)
            .map_err(|e| PottsError::OutOfHostMemory(format!("{e}; ask for fewer temperatures or samples")))?;
        Ok(TemperingState {
            sweep: 0,
            replicas,
            lattices: Vec::new(),
            series: vec![vec![Vec::new(); cfg.samples() as usize]; cfg.temperatures().len()],
            timing: Timing::default(),
            loaded: false,
        })
    }

    /// A state read back from a checkpoint (its lattices load into the
    /// ensemble on the next [`advance`]).
    pub(crate) fn restored(
        sweep: u64,
        replicas: Replicas,
        lattices: Vec<Lattice>,
        series: Vec<Vec<Vec<Measurement>>>,
        timing: Timing,
    ) -> Self {
        TemperingState { sweep, replicas, lattices, series, timing, loaded: false }
    }

    /// The state as a checkpoint keeps it, to continue on a fresh
    /// ensemble: the next [`advance`] loads the saved lattices. Call it on
    /// a state that [`advance`] left after [`Stop::Asked`].
    pub fn resumed(self) -> Self {
        TemperingState { loaded: false, ..self }
    }

    /// The permutation and exchange statistics.
    pub fn replicas(&self) -> &Replicas {
        &self.replicas
    }

    /// Measurements so far: `[temperature][sample]`.
    pub fn series(&self) -> &[Vec<Vec<Measurement>>] {
        &self.series
    }

    /// Time and site updates of the whole run so far.
    pub fn timing(&self) -> Timing {
        self.timing
    }

    /// Sweeps every replica has done.
    pub fn sweep(&self) -> u64 {
        self.sweep
    }

    /// Whether the run has done all its sweeps.
    pub fn finished(&self, cfg: &ProtocolConfig) -> bool {
        self.sweep >= cfg.sweeps_per_chain()
    }

    /// The result of every temperature (meaningful once finished), with the
    /// exchange statistics and the replicas' relaxation
    /// ([`TemperatureResult::replica_tau_int`]).
    pub fn results(&self, cfg: &ProtocolConfig, backend: &str) -> Result<Vec<TemperatureResult>> {
        let model = cfg.model()?;
        let mut results: Vec<_> = cfg
            .temperatures()
            .iter()
            .enumerate()
            .map(|(t, &temperature)| {
                let mut r = analyze(&model, temperature, &self.series[t], cfg.measure_every()).into_result(&RunFacts {
                    size: cfg.size(),
                    temperature,
                    sweeps: cfg.sweeps_per_chain(),
                    samples: cfg.samples(),
                    flips_per_ns: self.timing.flips_per_ns(),
                    backend,
                });
                r.too_short |= cfg.too_short_to_alternate(temperature);
                r
            })
            .collect();
        let tau = summed_energy_tau_int(&self.series, cfg.measure_every());
        add_exchange(&mut results, self.replicas.stats(), tau, cfg.measure_every());
        Ok(results)
    }
}

/// τ_int, in sweeps, of the replicas' summed energy Σ_t e_t of each sample
/// (`series[t][sample]`, measurements `measure_every` sweeps apart), by the
/// Γ-method with its batch-means check ([`stats`](crate::stats)).
///
/// A swap moves two replicas between temperatures and leaves the sum
/// unchanged: it changes only as the replicas themselves relax. Each
/// temperature's own series hides that relaxation when it is slow and
/// small: at a first-order transition the replicas travel between
/// temperatures within their phase in a few sweeps, while the share of
/// them in the ordered phase changes over thousands, and the per-temperature
/// Γ-method reports errors several times too small (docs/statistics.md).
/// The sum carries that share with the full latent heat of each replica.
pub fn summed_energy_tau_int(series: &[Vec<Vec<Measurement>>], measure_every: u64) -> f64 {
    let samples = series.first().map_or(0, Vec::len);
    let sums: Vec<Vec<Vec<f64>>> = (0..samples)
        .map(|s| {
            let len = series.iter().map(|t| t[s].len()).min().unwrap_or(0);
            vec![(0..len).map(|i| series.iter().map(|t| t[s][i].energy).sum()).collect()]
        })
        .collect();
    GammaMethod::new(sums).analyze(|v| v[0]).tau_int * measure_every as f64
}

/// What [`advance`] stopped for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// Every sweep is done.
    Finished,
    /// The observer asked for a checkpoint ([`Control::Checkpoint`] or
    /// [`Control::CheckpointAndStop`]); the state's lattices are filled in.
    Asked(Control),
}

/// The update of each of `cfg`'s temperatures, in order, for [`advance`].
/// Wolff's measure their cluster sizes (seconds each on a large lattice;
/// see [`crate::interrupt`]).
pub fn tables(cfg: &ProtocolConfig) -> Result<Vec<Update>> {
    let model = cfg.model()?;
    cfg.temperatures().iter().map(|&t| Update::new(cfg.algorithm(), &model, t)).collect()
}

/// Advances a tempering run on `ensemble` (of `cfg`'s model, with
/// samples × temperatures members, each temperature's update in `tables`:
/// [`tables`]) until it finishes or the observer's
/// [`control`](Observer::control) asks for a checkpoint; reports
/// [`progress`](Observer::progress) between stretches.
pub fn advance(
    cfg: &ProtocolConfig,
    exchange_every: u64,
    tables: &[Update],
    ensemble: &mut dyn Ensemble,
    state: &mut TemperingState,
    observer: &mut dyn Observer,
) -> Result<Stop> {
    if exchange_every == 0 {
        return Err(PottsError::InvalidInput("replicas must be offered exchanges every 1 or more sweeps".into()));
    }
    let model = cfg.model()?;
    if ensemble.len() != state.replicas.members() {
        return Err(PottsError::InvalidInput(format!(
            "tempering needs an ensemble of {} lattices, got {}",
            state.replicas.members(),
            ensemble.len()
        )));
    }
    if tables.len() != cfg.temperatures().len() {
        return Err(PottsError::InvalidInput(format!(
            "tempering over {} temperatures was given {} update tables",
            cfg.temperatures().len(),
            tables.len()
        )));
    }
    let chains = state.replicas.chains(cfg);
    if !state.loaded && !state.lattices.is_empty() && state.lattices.len() != chains.len() {
        return Err(PottsError::BadCheckpoint(format!(
            "a tempering run of {} lattices was saved with {}",
            chains.len(),
            state.lattices.len()
        )));
    }
    if !state.loaded {
        for (m, chain) in chains.iter().enumerate() {
            match state.lattices.get(m) {
                Some(l) => ensemble.load(m, l)?,
                None => ensemble.load(m, &Lattice::new(&model, cfg.init(), chain.seed, chain.stream))?,
            }
        }
        state.loaded = true;
    }
    state.lattices.clear();
    state.replicas.apply_tables(ensemble, tables)?;
    let sites = model.sites() as u64 * ensemble.len() as u64;
    let total = cfg.sweeps_per_chain();
    let mut chunk = 1u64;
    while state.sweep < total {
        let next_exchange = (state.sweep / exchange_every + 1) * exchange_every;
        let count = (cfg.next_stop(state.sweep).min(next_exchange) - state.sweep).min(chunk);
        let started = Instant::now();
        ensemble.sweeps(&chains, state.sweep, count)?;
        state.sweep += count;
        let measure = cfg.measures_after(state.sweep);
        let exchange = state.sweep.is_multiple_of(exchange_every) && state.sweep < total;
        if measure || exchange {
            let censuses = ensemble.census()?;
            if measure {
                for s in 0..state.replicas.samples() {
                    for t in 0..state.replicas.temperatures() {
                        let c = &censuses[state.replicas.member(s, state.replicas.replica_at(s, t))];
                        state.series[t][s].push(Measurement::from_census(&model, c));
                    }
                }
            }
            if exchange && state.replicas.exchange(&model, &censuses)? {
                state.replicas.apply_tables(ensemble, tables)?;
            }
        }
        // Thermalisation ends here (every stretch stops at its last sweep),
        // and the statistics start afresh: decided by the sweep alone, so a
        // resumed run does the same, and a run with no round after it
        // reports none rather than thermalisation's.
        if state.sweep == cfg.therm() {
            state.replicas.restart_stats();
        }
        ensemble.synchronize()?;
        let secs = ensemble.agreed_seconds(started.elapsed().as_secs_f64())?;
        state.timing.seconds += secs;
        state.timing.updates += count * sites;
        let slowest =
            crate::protocol::slowest_sweep_secs(cfg.algorithm(), sites, ensemble.len(), rayon::current_num_threads());
        chunk = crate::protocol::next_stretch(chunk, count, secs, 0.25, slowest);
        observer.progress(state.sweep * ensemble.len() as u64, total * ensemble.len() as u64);
        let asked = observer.control();
        if asked != Control::Continue {
            state.lattices = (0..ensemble.len()).map(|m| ensemble.lattice(m)).collect::<Result<_>>()?;
            return Ok(Stop::Asked(asked));
        }
    }
    Ok(Stop::Finished)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn census(model: &PottsModel, equal_bonds: u64) -> Census {
        let mut counts = vec![0; model.q() as usize];
        counts[0] = model.sites() as u64;
        Census::new(equal_bonds, counts)
    }

    /// Three temperatures whose series are dominated by fast noise that
    /// cancels in their sum (replicas trading energy as they swap), plus a
    /// shared slow AR(1) mode of φ = 0.99 (τ_int = 99.5 measurements, under
    /// 1 % of each temperature's variance): each temperature's own τ_int is
    /// a small fraction of the slow mode's, the summed energy's is the slow
    /// mode's.
    #[test]
    fn the_summed_energy_shows_the_mode_each_temperature_hides() {
        use warpmc_rng::{PhiloxStream, RandomSource};
        let mut r = PhiloxStream::new(5, Domain::Test.stream(7));
        let mut gauss = || (-2.0 * r.next_f64_open().ln()).sqrt() * (std::f64::consts::TAU * r.next_f64()).cos();
        let (n, phi) = (200_000, 0.99);
        let mut slow = gauss() / (1.0f64 - phi * phi).sqrt();
        let mut series = vec![vec![Vec::with_capacity(n)]; 3];
        for _ in 0..n {
            let (a, b) = (30.0 * gauss(), 30.0 * gauss());
            for (t, fast) in [a, b, -a - b].into_iter().enumerate() {
                series[t][0].push(Measurement { energy: fast + slow / 3.0, magnetization: 0.0 });
            }
            slow = phi * slow + gauss();
        }
        let exact = (1.0 + phi) / (2.0 * (1.0 - phi));
        let tau = summed_energy_tau_int(&series, 10) / 10.0;
        println!("summed energy: τ_int {tau:.1} measurements, exact {exact:.1}");
        assert!((tau - exact).abs() < 0.2 * exact, "summed energy: τ_int {tau} measurements, exact {exact}");
        for t in &series {
            let own = GammaMethod::new(vec![vec![t[0].iter().map(|m| m.energy).collect()]]).analyze(|v| v[0]);
            println!("one temperature: τ_int {:.2}", own.tau_int);
            assert!(own.tau_int < 0.1 * exact, "one temperature's τ_int {}", own.tau_int);
        }
    }

    #[test]
    fn temperatures_must_be_monotonic() {
        assert!(Replicas::new(&[1.0, 2.0, 1.5], 1, 0).is_err());
        assert!(Replicas::new(&[1.0, 1.0], 1, 0).is_err());
        assert!(Replicas::new(&[3.0, 2.0, 1.0], 2, 0).is_ok());
        assert!(Replicas::new(&[1.0], 1, 0).is_ok());
        assert!(Replicas::check(&[1.0, 2.0, 1.5], 1).is_err());
    }

    /// Bookkeeping beyond memory is refused before it is allocated (an
    /// abort, "memory allocation failed", before); the check that a
    /// configuration makes allocates nothing.
    #[test]
    fn bookkeeping_beyond_memory_is_refused() {
        let temperatures: Vec<f64> = (0..1 << 20).map(|k| 1.0 + k as f64).collect();
        let samples = (1 << 24) - 1;
        assert!(Replicas::check(&temperatures, samples).is_ok());
        let e = Replicas::new(&temperatures, samples, 0).unwrap_err();
        assert!(matches!(e, PottsError::OutOfHostMemory(_)), "{e}");
        assert!(e.to_string().contains("fewer temperatures or samples"), "{e}");
    }

    #[test]
    fn a_favourable_swap_is_always_taken_and_rounds_alternate() {
        // The colder temperature (index 0) holds the higher energy (fewer
        // equal bonds): swapping lowers the total free energy, Δ > 0.
        let model = PottsModel::new(2, 4, 4).unwrap();
        let mut r = Replicas::new(&[1.0, 2.0, 3.0], 1, 7).unwrap();
        let c = [census(&model, 0), census(&model, 32), census(&model, 16)];
        assert!(r.exchange(&model, &c).unwrap());
        assert_eq!(r.permutation()[0], vec![1, 0, 2]);
        assert_eq!(r.stats().attempts, vec![1, 0]);
        // Round 1 offers only the pair (1, 2).
        r.exchange(&model, &c).unwrap();
        assert_eq!(r.stats().attempts, vec![1, 1]);
    }

    #[test]
    fn acceptance_follows_the_metropolis_ratio() {
        // One pair, a fixed unfavourable energy difference: over many
        // rounds (even rounds only offer pair 0) the acceptance rate is
        // exp(Δ) within binomial error.
        let model = PottsModel::new(2, 4, 4).unwrap();
        let temps = [1.0, 1.25];
        let c = [census(&model, 32), census(&model, 31)];
        let delta: f64 = (1.0 - 0.8) * (-32.0 - -31.0);
        let mut r = Replicas::new(&temps, 1, 99).unwrap();
        let rounds = 40_000;
        for _ in 0..rounds {
            // Restore the order so the same offer is made each round.
            r.replica_at[0] = vec![0, 1];
            r.exchange(&model, &c).unwrap();
        }
        let offered = r.stats().attempts[0] as f64;
        assert_eq!(offered, (rounds / 2) as f64);
        let rate = r.stats().accepted[0] as f64 / offered;
        let p = delta.exp();
        let sigma = (p * (1.0 - p) / offered).sqrt();
        assert!((rate - p).abs() < 5.0 * sigma, "rate {rate}, expected {p} ± {sigma}");
    }

    #[test]
    fn round_trips_are_counted_first_last_first() {
        let mut r = Replicas::new(&[1.0, 2.0], 1, 0).unwrap();
        // Replica 0 at the first temperature; move it to the last and back.
        r.replica_at[0] = vec![1, 0];
        r.track_ends(0);
        assert_eq!(r.stats().round_trips, 0);
        r.replica_at[0] = vec![0, 1];
        r.track_ends(0);
        assert_eq!(r.stats().round_trips, 1);
        // Replica 1 started at the last temperature, so its first arrival
        // at the first (step one) was half a trip; since then it went to
        // the last (step two) and now returns: its first round trip.
        r.replica_at[0] = vec![1, 0];
        r.track_ends(0);
        assert_eq!(r.stats().round_trips, 2);
    }
}
