//! A temperature sweep as a first-class run, the protocol of Ferrero, De
//! Francesco, Wolovick and Cannas (2012): a list of temperatures; at each,
//! `samples` independent chains, each thermalised for `therm` sweeps and
//! then measured every `measure_every` sweeps for `sweeps` sweeps; chains
//! start ordered or random, or continue from the state they reached at the
//! previous temperature.
//!
//! [`ProtocolConfig`] is the validated description; [`ConfigFile`] is its
//! TOML form (every key optional so the command line can fill in or
//! override); [`Runner`] executes it on a [`Simulation`](crate::Simulation), reporting to an
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

mod config;
mod config_file;
mod runner;
mod state;
mod warnings;

pub use config::*;
pub use config_file::*;
pub use runner::*;
pub use state::*;
pub use warnings::*;
