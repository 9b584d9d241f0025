//! Potts runs split across MPI processes, with the bits of one process.
//!
//! A `warpmc potts run` started by `mpirun -np N` runs the same protocol in
//! every process: each holds the run's state and makes the same calls in
//! the same order, and the lattices live where an `MpiOpener` puts them:
//!
//! - `StripEnsemble`: each lattice cut into horizontal strips of whole
//!   random-number row-blocks ([`warpmc_potts::strip`]), one per process,
//!   each on its process's CPU or its own GPU; halo rows are traded after
//!   every half-sweep, while the interior rows are updated, and the census
//!   is summed with an all-reduce — through host memory and MPI, or
//!   device to device through NCCL ([`HaloTransport`]);
//! - `SpreadEnsemble`: the lattices of an ensemble (temperatures,
//!   samples, tempering replicas) dealt out to the processes, each running
//!   its share on its own backend (CPU, or its own GPU); censuses are
//!   gathered by every process.
//!
//! Random numbers are named by (seed, stream, sweep, colour, site), so
//! neither placement changes a bit, and every process computes the same
//! measurements, exchange decisions and results from the gathered
//! censuses; only the first process writes them. See docs/mpi.md.
//!
//! # Features
//!
//! `mpi` adds everything that talks to MPI (rsmpi over the system's MPI
//! library). Without it the crate only reads a launcher's environment
//! ([`Launch`]), so that a build without MPI can say so when mpirun
//! starts it. `cuda` (on by default) lets processes run their strips or
//! their share of an ensemble on their own GPU; without it the crate has no CUDA library in
//! its dependency tree.

#![deny(missing_docs)]

mod error;
mod launch;
#[cfg(feature = "mpi")]
mod opener;
#[cfg(feature = "mpi")]
mod processes;
#[cfg(feature = "mpi")]
mod spread;
#[cfg(feature = "mpi")]
mod strips;

pub use error::{MpiError, Result};
pub use launch::{Decompose, HaloTransport, Launch};
#[cfg(feature = "mpi")]
pub use opener::MpiOpener;
#[cfg(feature = "mpi")]
pub use processes::{FailureNotice, Processes, failed_elsewhere};
#[cfg(feature = "mpi")]
pub use spread::SpreadEnsemble;
#[cfg(feature = "mpi")]
pub use strips::StripEnsemble;
