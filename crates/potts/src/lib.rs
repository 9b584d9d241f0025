//! q-state Potts and Ising Monte Carlo: checkerboard Metropolis on a periodic
//! lattice, on the CPU and on CUDA devices, bit-identical between the two.
//!
//! The crate keeps three things apart:
//!
//! - the **model** ([`PottsModel`]): q, J, h and the lattice size;
//! - the **algorithm** ([`algorithm`]): checkerboard Metropolis with integer
//!   acceptance thresholds and the assignment of random numbers to sites;
//! - the **backends** ([`CpuBackend`], [`CudaBackend`]) that run it.
//!
//! On top of them: [`observables`] and [`stats`] (moments, Binder cumulant,
//! specific heat, susceptibility, jackknife errors, autocorrelation times),
//! the document's [`protocol`] (temperature sweeps, thermalisation,
//! measurements, samples), [`checkpoint`]s, [`snapshot`]s and [`exact`]
//! results used for validation.
//!
//! # Examples
//!
//! ```
//! use warpmc_potts::{Backend, CpuBackend, ConfigFile, Quiet, RunState, Runner};
//!
//! let cfg = ConfigFile { q: Some(2), size: Some(16), temp: Some(1.0), therm: Some(100),
//!                        sweeps: Some(200), ..Default::default() }.resolve().unwrap();
//! let mut cpu = CpuBackend::new(&cfg.model().unwrap());
//! let mut state = RunState::new(&cfg);
//! let results = Runner::new(cfg.clone(), &mut cpu).unwrap().run(&mut state, &mut Quiet).unwrap();
//! // Well below T_c = 1/ln(1+√2) ≈ 1.13: nearly ordered.
//! assert!(results[0].magnetization > 0.9);
//! ```

#![deny(missing_docs)]

pub mod algorithm;
pub mod backend;
pub mod checkpoint;
pub mod cpu;
#[cfg(target_arch = "x86_64")]
mod cpu_simd;
pub mod cuda;
pub mod error;
pub mod exact;
pub mod lattice;
pub mod layout;
pub mod model;
pub mod observables;
pub mod protocol;
pub mod sliced;
pub mod snapshot;
pub mod stats;

pub use algorithm::{AcceptanceTable, Scheme};
pub use backend::{Backend, BackendChoice};
pub use cpu::CpuBackend;
pub use cuda::{CudaBackend, CudaKernel};
pub use error::{PottsError, Result};
pub use lattice::{Census, InitialState, Lattice};
pub use model::PottsModel;
pub use observables::{Measurement, TemperatureResult};
pub use protocol::{ConfigFile, Control, Observer, ProtocolConfig, Quiet, RunState, Runner, Temperatures};
