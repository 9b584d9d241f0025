//! [`Runner`], which executes a [`ProtocolConfig`] on lattices, ensembles
//! or a tempering ensemble, reporting to an [`Observer`] between stretches
//! of sweeps sized to keep it responsive.

use std::time::Instant;

use crate::backend::{Backend, open_backend_for};
use crate::ensemble::{Ensemble, EnsembleOpener};
use crate::error::{PottsError, Result};
use crate::lattice::Lattice;
use crate::model::PottsModel;
use crate::observables::{Measurement, TemperatureResult};
use crate::simulation::{Chain, Simulation};
use crate::tempering::{Stop, TemperingState};
use crate::update::{Algorithm, Update};

use super::{ProtocolConfig, RunState};

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
        let group_sites = opener.group_sites();
        let first = if cfg.exchange_every.is_some() {
            replicas as usize
        } else {
            group_len(&cfg, &RunState::new(&cfg), group_sites)
        };
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
        // A finished state keeps the backend that ran it.
        if !state.finished(&self.cfg) || state.backend_description.is_none() {
            state.backend_description = Some(self.backend_description());
        }
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
        // Made once for the whole run, before its state changes.
        let tables = preparing(cfg, state, observer, || crate::tempering::tables(cfg))?;
        loop {
            let tempering = state.tempering.as_mut().expect("set above");
            let stop = crate::tempering::advance(cfg, every, &tables, ensemble.as_mut(), tempering, observer)?;
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
        let Engine::Ensemble { opener, ensemble } = &mut self.engine else {
            return Err(PottsError::InvalidInput("internal error: a group run on a sequential runner".into()));
        };
        let n = group_len(cfg, state, opener.group_sites());
        if ensemble.len() != n {
            *ensemble = opener.open(model, cfg.algorithm, n)?;
        }
        let first = state.chain_index(cfg);
        let samples = cfg.samples as u64;
        // (temperature, sample) of each member.
        let members: Vec<(usize, u32)> =
            (first..first + n as u64).map(|c| ((c / samples) as usize, (c % samples) as u32)).collect();
        let chains: Vec<Chain> = members.iter().map(|&(t, s)| cfg.chain(s, t)).collect();
        if state.sweep > 0 && state.current.len() != n {
            return Err(PottsError::BadCheckpoint(format!(
                "{n} chains are under way but {} lattices were saved",
                state.current.len()
            )));
        }
        // One update per temperature (Wolff's measures its cluster size:
        // seconds on a large lattice), made before the state changes.
        let updates = preparing(cfg, state, observer, || {
            let mut updates = std::collections::BTreeMap::new();
            for &(t, _) in &members {
                if let std::collections::btree_map::Entry::Vacant(e) = updates.entry(t) {
                    e.insert(Update::new(cfg.algorithm, model, cfg.temperatures[t])?);
                }
            }
            Ok(updates)
        })?;
        let current = std::mem::take(&mut state.current);
        for (i, (&(t, s), chain)) in members.iter().zip(&chains).enumerate() {
            let lattice = match current.get(i) {
                Some(l) => l.clone(),
                None => match state.saved.get(s as usize).and_then(Option::as_ref) {
                    Some(l) => l.clone(),
                    None => Lattice::new(model, cfg.init, chain.seed, chain.stream),
                },
            };
            ensemble.load(i, &lattice)?;
            ensemble.set_update(i, &updates[&t])?;
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
            let temperature = self.cfg.temperatures[state.temp_index];
            let Runner { cfg, engine, .. } = self;
            let Engine::Sequential(sim) = engine else {
                return Err(PottsError::InvalidInput("internal error: a sequential run on an ensemble runner".into()));
            };
            // Before the state changes: Wolff measures its cluster size.
            preparing(cfg, state, observer, || sim.set_temperature(temperature).map(drop))?;
            let backend = self.backend_name();
            state.begin_temperature(&self.cfg, backend);
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
        let chain = self.cfg.chain(state.sample, state.temp_index);
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

/// Runs `work`, a step before a stretch of sweeps that may take seconds
/// (Wolff's measurement of its cluster size), with the observer's
/// [`control`](Observer::control) as its stop hook
/// ([`crate::interrupt`]). `state` is where the run stands, unchanged by
/// `work`: asked to stop, the step gives up and the observer gets a
/// checkpoint of that state before [`PottsError::Interrupted`] ends the
/// run. (A periodic checkpoint asked meanwhile waits for the observer's
/// next look.)
pub(crate) fn preparing<T>(
    cfg: &ProtocolConfig,
    state: &RunState,
    observer: &mut dyn Observer,
    work: impl FnOnce() -> Result<T>,
) -> Result<T> {
    let mut stopped = false;
    let made = crate::interrupt::with_stop(
        &mut || {
            stopped = observer.control() == Control::CheckpointAndStop;
            stopped
        },
        work,
    );
    if stopped {
        observer.checkpoint(cfg, state)?;
        return Err(PottsError::Interrupted);
    }
    made
}

/// Chains in the group that starts at `state`'s position: those already
/// under way (after a checkpoint), or else as many as fit in `group_sites`
/// ([`EnsembleOpener::group_sites`]) and in one ensemble of the chains
/// left: the rest of the run without continuation, the rest of the
/// temperature's samples with it (each temperature starts from the one
/// before).
pub(crate) fn group_len(cfg: &ProtocolConfig, state: &RunState, group_sites: u64) -> usize {
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
    let room = (group_sites / (cfg.size as u64 * cfg.height as u64)).clamp(1, MAX_GROUP as u64);
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
