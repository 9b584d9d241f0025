//! One Markov chain on one backend: the short path from a model to numbers.
//!
//! ```
//! use warpmc_potts::{PottsModel, Simulation};
//!
//! // The Ising model on 16 × 16 well below T_c = 1/ln(1 + √2) ≈ 1.13.
//! let m = Simulation::on_cpu(PottsModel::new(2, 16, 16)?, 0.8)?.sweeps(200)?.measure()?;
//! assert!(m.magnetization > 0.9 && m.energy < -1.9);
//! # Ok::<(), warpmc_potts::PottsError>(())
//! ```
//!
//! The same on a GPU when one is usable, with the backend chosen the way
//! every warpmc command chooses it (`auto`, `cpu` or `cuda`, and
//! `WARPMC_DEVICE`):
//!
//! ```
//! use warpmc_potts::{BackendChoice, PottsModel, Simulation, select};
//!
//! let device = select(BackendChoice::Auto)?;
//! let mut sim = Simulation::new(PottsModel::new(9, 64, 64)?, 0.7, &device)?.with_seed(7);
//! let e = sim.sweeps(100)?.energy()?;
//! assert!(e < 0.0);
//! # Ok::<(), warpmc_potts::PottsError>(())
//! ```
//!
//! A simulation's random numbers are named by its [`Chain`] (seed and
//! stream) and by the number of sweeps the chain has done, so two
//! simulations with the same model, temperatures, chain and start state
//! hold the same lattice after the same sweeps on every backend.

use crate::algorithm::{MAX_SWEEPS_PER_CHAIN, chain_stream};
use crate::backend::{Backend, open_backend_for};
use crate::cpu::CpuBackend;
use crate::error::{PottsError, Result};
use crate::lattice::{Census, InitialState, Lattice};
use crate::model::{PottsModel, check_temperature};
use crate::observables::Measurement;
use crate::protocol::check_metropolis_rejects;
use crate::update::{Algorithm, Update};
use warpmc_gpu::Device;

/// The random numbers of one Markov chain: its Philox key and stream (see
/// [`chain_stream`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chain {
    /// The Philox key of the chain's random numbers (a protocol run's
    /// chains mix theirs from the run's seed: [`crate::ProtocolConfig::chain`]).
    pub seed: u64,
    /// The Philox stream of this chain.
    pub stream: u64,
}

impl Chain {
    /// The chain on the stream of repetition `sample` at temperature
    /// number `temp_index` ([`chain_stream`]) under the key `seed` as given.
    /// The protocol keys each chain by the model, the lattice's size and
    /// the temperature too: [`crate::ProtocolConfig::chain`].
    pub fn new(seed: u64, sample: u32, temp_index: u32) -> Self {
        Chain { seed, stream: chain_stream(sample, temp_index) }
    }

    /// The chain of key `seed` on the first stream: the same numbers at
    /// any size or temperature (what [`Simulation::with_seed`] gives; a
    /// protocol run's chains are keyed otherwise).
    pub fn of_seed(seed: u64) -> Self {
        Chain::new(seed, 0, 0)
    }
}

/// A lattice on a backend at a temperature, advanced one chain of random
/// numbers at a time.
///
/// `B` is the backend's type: any backend by default (`Simulation` holds a
/// `Box<dyn Backend>`, which may hold a GPU's buffers and so is not
/// `Send`), or a known one such as [`CpuBackend`]
/// ([`Simulation::on_cpu_with`]), with which the simulation is `Send`.
pub struct Simulation<B: Backend + ?Sized = dyn Backend> {
    model: PottsModel,
    algorithm: Algorithm,
    backend: Box<B>,
    temperature: f64,
    chain: Chain,
    /// Sweeps the chain has done: the next sweep's number.
    sweep: u64,
}

impl<B: Backend + ?Sized> std::fmt::Debug for Simulation<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Simulation")
            .field("model", &self.model)
            .field("algorithm", &self.algorithm)
            .field("backend", &self.backend.name())
            .field("temperature", &self.temperature)
            .field("chain", &self.chain)
            .field("sweep", &self.sweep)
            .finish()
    }
}

impl Simulation {
    /// `model` at `temperature` on `device` (see [`crate::select`]), in the
    /// ordered start state, on the chain of seed 0, updated by Metropolis.
    pub fn new(model: PottsModel, temperature: f64, device: &Device) -> Result<Self> {
        Self::with_algorithm(model, Algorithm::Metropolis, temperature, device)
    }

    /// As [`Simulation::new`], updated by `algorithm` (Wolff runs on the
    /// CPU whatever the device).
    ///
    /// ```
    /// use warpmc_potts::{Algorithm, Device, PottsModel, Simulation};
    ///
    /// let model = PottsModel::new(2, 32, 32)?;
    /// let mut sim = Simulation::with_algorithm(model, Algorithm::Wolff, 1.0, &Device::CPU)?.with_seed(3);
    /// assert!(sim.sweeps(50)?.magnetization()? > 0.8);
    /// # Ok::<(), warpmc_potts::PottsError>(())
    /// ```
    pub fn with_algorithm(model: PottsModel, algorithm: Algorithm, temperature: f64, device: &Device) -> Result<Self> {
        algorithm.check_ergodic(&model)?;
        let backend = open_backend_for(device, &model, algorithm)?;
        Self::with_backend_running(model, algorithm, temperature, backend)
    }

    /// `model` at `temperature` on the host's cores.
    pub fn on_cpu(model: PottsModel, temperature: f64) -> Result<Self> {
        Self::new(model, temperature, &Device::CPU)
    }

    /// `model` at `temperature` on a backend made by the caller (a
    /// [`CpuBackend`] without AVX2, a chosen CUDA
    /// kernel, …), which must have been made for `model`. Its lattice is
    /// replaced by the ordered start state.
    pub fn with_backend(model: PottsModel, temperature: f64, backend: Box<dyn Backend>) -> Result<Self> {
        Self::with_backend_running(model, Algorithm::Metropolis, temperature, backend)
    }

    /// As [`Simulation::with_backend`], updated by `algorithm` (the backend
    /// must run it: [`open_backend_for`]).
    pub fn with_backend_running(
        model: PottsModel,
        algorithm: Algorithm,
        temperature: f64,
        backend: Box<dyn Backend>,
    ) -> Result<Self> {
        Self::running(model, algorithm, temperature, backend)
    }
}

impl Simulation<CpuBackend> {
    /// As [`Simulation::with_algorithm`] on the host's cores, with the
    /// backend's type kept: this simulation is `Send` (it holds no GPU
    /// state), so another thread may take it or drop it.
    ///
    /// ```
    /// use warpmc_potts::{Algorithm, PottsModel, Simulation};
    ///
    /// let sim = Simulation::on_cpu_with(PottsModel::new(2, 16, 16)?, Algorithm::HeatBath, 1.0)?;
    /// let e = std::thread::spawn(move || sim.with_seed(1).sweeps(10).and_then(|s| s.energy())).join().unwrap()?;
    /// assert!(e < 0.0);
    /// # Ok::<(), warpmc_potts::PottsError>(())
    /// ```
    pub fn on_cpu_with(model: PottsModel, algorithm: Algorithm, temperature: f64) -> Result<Self> {
        algorithm.check_ergodic(&model)?;
        // What `open_backend_for` checks before it opens a CPU backend.
        model.check_host_memory(0)?;
        let backend = Box::new(CpuBackend::for_algorithm(&model, algorithm)?);
        Self::running(model, algorithm, temperature, backend)
    }
}

impl<B: Backend + ?Sized> Simulation<B> {
    /// The simulation of `backend` at `temperature`, in the ordered start
    /// state on the chain of seed 0.
    fn running(model: PottsModel, algorithm: Algorithm, temperature: f64, backend: Box<B>) -> Result<Self> {
        let mut sim = Simulation { model, algorithm, backend, temperature: 1.0, chain: Chain::of_seed(0), sweep: 0 };
        sim.set_temperature(temperature)?;
        sim.start(InitialState::Ordered)?;
        Ok(sim)
    }

    /// The same simulation on the chain of `seed`, from sweep 0. The chain
    /// depends on `seed` alone: simulations meant to be independent (other
    /// sizes or temperatures among them) need seeds of their own.
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.set_chain(Chain::of_seed(seed), 0);
        self
    }

    /// The model.
    pub fn model(&self) -> &PottsModel {
        &self.model
    }

    /// The update algorithm.
    pub fn algorithm(&self) -> Algorithm {
        self.algorithm
    }

    /// The temperature the next sweeps run at.
    pub fn temperature(&self) -> f64 {
        self.temperature
    }

    /// Sets the temperature of the following sweeps. Refused, as by a run,
    /// where q = 2 Metropolis would reject even its costliest flip too
    /// seldom to leave the alternation of two states
    /// ([`ProtocolConfig::metropolis_rejection`](crate::ProtocolConfig::metropolis_rejection)).
    pub fn set_temperature(&mut self, temperature: f64) -> Result<&mut Self> {
        let t = check_temperature(temperature)?;
        check_metropolis_rejects(&self.model, self.algorithm, t)?;
        self.backend.set_update(&Update::new(self.algorithm, &self.model, t)?)?;
        self.temperature = t;
        Ok(self)
    }

    /// The chain the next sweeps draw from.
    pub fn chain(&self) -> Chain {
        self.chain
    }

    /// Sweeps done on the current chain: the number of the next sweep.
    pub fn sweeps_done(&self) -> u64 {
        self.sweep
    }

    /// Continues `chain` from sweep number `sweep` (the lattice stays).
    pub fn set_chain(&mut self, chain: Chain, sweep: u64) -> &mut Self {
        self.chain = chain;
        self.sweep = sweep;
        self
    }

    /// Replaces the lattice by a start state: every spin in a state the
    /// field favours (0, or 1 when h < 0), or random ones drawn from the
    /// chain's own start-state numbers.
    pub fn start(&mut self, init: InitialState) -> Result<&mut Self> {
        let lattice = Lattice::new(&self.model, init, self.chain.seed, self.chain.stream);
        self.set_lattice(&lattice)
    }

    /// Replaces the lattice (its size and q must be the model's).
    pub fn set_lattice(&mut self, lattice: &Lattice) -> Result<&mut Self> {
        self.backend.load(lattice)?;
        Ok(self)
    }

    /// A copy of the lattice.
    pub fn lattice(&mut self) -> Result<Lattice> {
        self.backend.lattice()
    }

    /// Runs `count` sweeps (one update attempt per site each; for Wolff,
    /// a fixed number of clusters that flip as many sites on average:
    /// [`crate::wolff`]).
    pub fn sweeps(&mut self, count: u64) -> Result<&mut Self> {
        let end = self.sweep.checked_add(count).filter(|&e| e <= MAX_SWEEPS_PER_CHAIN).ok_or_else(|| {
            PottsError::InvalidInput(format!(
                "a chain runs at most {MAX_SWEEPS_PER_CHAIN} sweeps; {} done and {count} more asked",
                self.sweep
            ))
        })?;
        self.backend.sweeps(self.chain.seed, self.chain.stream, self.sweep, count)?;
        self.sweep = end;
        Ok(self)
    }

    /// Equal-neighbour bonds and state populations of the lattice.
    pub fn census(&mut self) -> Result<Census> {
        self.backend.census()
    }

    /// Energy per site and order parameter of the lattice.
    pub fn measure(&mut self) -> Result<Measurement> {
        let census = self.census()?;
        Ok(Measurement::from_census(&self.model, &census))
    }

    /// Energy per site, H/N.
    pub fn energy(&mut self) -> Result<f64> {
        Ok(self.measure()?.energy)
    }

    /// The order parameter (q·N_max/N − 1)/(q − 1).
    pub fn magnetization(&mut self) -> Result<f64> {
        Ok(self.measure()?.magnetization)
    }

    /// Waits for the work queued on the backend (for timing).
    pub fn synchronize(&mut self) -> Result<()> {
        self.backend.synchronize()
    }

    /// "cpu" or "cuda".
    pub fn backend_name(&self) -> &'static str {
        self.backend.name()
    }

    /// One line saying where the chain runs (CPU threads, GPU and kernel).
    pub fn backend_description(&self) -> String {
        self.backend.description()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CpuBackend;

    #[test]
    fn the_same_chain_gives_the_same_lattice() {
        let model = PottsModel::new(3, 12, 6).unwrap();
        let run = |seed| {
            let mut s = Simulation::on_cpu(model.clone(), 1.0).unwrap().with_seed(seed);
            s.start(InitialState::Random).unwrap().sweeps(20).unwrap();
            s.lattice().unwrap()
        };
        assert_eq!(run(5), run(5));
        assert_ne!(run(5), run(6));
    }

    #[test]
    fn sweeps_in_pieces_equal_sweeps_at_once() {
        let model = PottsModel::new(2, 64, 8).unwrap();
        let mut a = Simulation::on_cpu(model.clone(), 2.0).unwrap().with_seed(3);
        let mut b = Simulation::with_backend(model.clone(), 2.0, Box::new(CpuBackend::new(&model))).unwrap();
        b.set_chain(Chain::of_seed(3), 0);
        a.sweeps(10).unwrap();
        b.sweeps(4).unwrap().sweeps(6).unwrap();
        assert_eq!(a.sweeps_done(), 10);
        assert_eq!(a.lattice().unwrap(), b.lattice().unwrap());
    }

    #[test]
    fn bad_temperatures_and_endless_chains_are_errors() {
        let model = PottsModel::new(2, 4, 4).unwrap();
        assert!(Simulation::on_cpu(model.clone(), 0.0).is_err());
        assert!(Simulation::on_cpu(model.clone(), f64::NAN).is_err());
        let mut s = Simulation::on_cpu(model, 1.0).unwrap();
        s.set_chain(Chain::of_seed(1), MAX_SWEEPS_PER_CHAIN);
        let e = s.sweeps(1).unwrap_err().to_string();
        assert!(e.contains("at most"), "{e}");
    }
}
