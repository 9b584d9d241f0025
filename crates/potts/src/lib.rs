//! q-state Potts and Ising Monte Carlo on a periodic lattice: checkerboard
//! Metropolis and heat-bath, Swendsen–Wang and Wolff clusters, on the CPU
//! and on CUDA devices, bit-identical between the two (Wolff on the CPU).
//!
//! The crate keeps three things apart:
//!
//! - the **model** ([`PottsModel`]): q, J, h and the lattice size;
//! - the **algorithm** ([`Algorithm`], [`update`]): checkerboard Metropolis
//!   with integer acceptance thresholds ([`algorithm`], [`sliced`]),
//!   heat-bath with integer weights ([`heat_bath`]), Swendsen–Wang
//!   ([`swendsen_wang`]) and Wolff ([`wolff`]), each with the assignment of
//!   its random numbers;
//! - the **backends** ([`CpuBackend`], `CudaBackend`) that run it, chosen
//!   at run time ([`select`], [`open_backend_for`]).
//!
//! On top of them: [`Simulation`] (one chain on one backend), [`Ensemble`]s
//! (many chains of one model advanced together: [`CpuEnsemble`] over the
//! host's cores, `CudaEnsemble` in the same GPU launches, each member in
//! the bits it would reach alone; [`open_ensemble`]), [`observables`]
//! and [`stats`] (moments, Binder cumulant, specific heat, susceptibility,
//! their errors and autocorrelation times), the temperature-sweep
//! [`protocol`] of Ferrero, De Francesco, Wolovick and Cannas (2012)
//! (thermalisation, measurements, samples), its results as JSON
//! ([`report`]), [`checkpoint`]s, [`snapshot`]s
//! and [`exact`] results used for validation.
//!
//! # Examples
//!
//! One chain, from a model to numbers:
//!
//! ```
//! use warpmc_potts::{PottsModel, Simulation};
//!
//! let m = Simulation::on_cpu(PottsModel::new(2, 16, 16)?, 0.8)?.sweeps(200)?.measure()?;
//! // Well below T_c = 1/ln(1+√2) ≈ 1.13: nearly ordered.
//! assert!(m.magnetization > 0.9);
//! # Ok::<(), warpmc_potts::PottsError>(())
//! ```
//!
//! A temperature sweep with error bars: [`protocol`].
//!
//! # Features
//!
//! `cuda` (on by default) adds [`CudaBackend`] and the GPU side of
//! [`select`]; without it the crate has no CUDA library in its dependency
//! tree and runs on the CPU.

#![deny(missing_docs)]

pub mod algorithm;
pub mod backend;
pub mod checkpoint;
pub mod cpu;
pub mod cpu_ensemble;
#[cfg(target_arch = "x86_64")]
mod cpu_simd;
#[cfg(feature = "cuda")]
pub mod cuda;
#[cfg(feature = "cuda")]
pub mod cuda_cluster;
#[cfg(feature = "cuda")]
pub mod cuda_ensemble;
#[cfg(feature = "cuda")]
pub mod cuda_strip;
#[cfg(feature = "cuda")]
pub mod cuda_sw;
pub mod ensemble;
pub mod error;
pub mod exact;
pub mod heat_bath;
pub mod interrupt;
pub mod lattice;
pub mod layout;
pub mod model;
pub mod observables;
pub mod protocol;
pub mod provenance;
pub mod report;
pub mod simulation;
pub mod sliced;
pub mod snapshot;
pub mod stats;
pub mod strip;
pub mod swendsen_wang;
pub mod tempering;
pub mod update;
pub mod wolff;

pub use algorithm::{AcceptanceTable, Scheme};
pub use backend::{Backend, open_backend, open_backend_for};
pub use cpu::CpuBackend;
pub use cpu_ensemble::CpuEnsemble;
#[cfg(feature = "cuda")]
pub use cuda::{CudaBackend, CudaKernel};
#[cfg(feature = "cuda")]
pub use cuda_ensemble::CudaEnsemble;
#[cfg(feature = "cuda")]
pub use cuda_strip::CudaStripBackend;
pub use ensemble::{Ensemble, EnsembleOpener, Independent, open_ensemble, open_ensemble_for};
pub use error::{PottsError, Result};
pub use lattice::{Census, InitialState, Lattice};
pub use model::PottsModel;
pub use observables::{Measurement, TemperatureResult};
pub use protocol::{
    ConfigFile, Control, Observer, ProtocolConfig, Quiet, RunState, Runner, Temperatures, Timing, describe_value_error,
    next_stretch, slowest_sweep_secs,
};
pub use provenance::Provenance;
pub use simulation::{Chain, Simulation};
pub use strip::{Strip, StripBackend, open_strip};
pub use update::{Algorithm, Update};
pub use warpmc_gpu::{BackendChoice, Device, select};
