//! The workloads behind `warpmc bench …` and `warpmc potts bench`, kept out
//! of the library crates: each function sets up its inputs, times the
//! library (or a baseline kernel written as the paper or article that
//! introduced the method wrote it), checks the result where a check is
//! cheap, and returns typed rows. The binary parses flags and prints the
//! rows; nothing here prints.
//!
//! Every speed is reported beside a yardstick measured in the same run:
//! the device's copy bandwidth, a baseline kernel, or a peer.
//!
//! - [`potts`]: Potts backends and kernels beside [`potts_baseline`], the
//!   `updateCUDA` kernel of Ferrero, De Francesco, Wolovick and Cannas
//!   (2012) as Wolovick's course notes give it; [`potts_ensemble`]: many
//!   lattices at once beside a single lattice; [`potts_autocorrelation`]:
//!   the autocorrelation times of the update algorithms at T_c and their
//!   dynamic exponents; [`potts_cluster`]:
//!   Swendsen–Wang cluster sweeps beside Metropolis;
//! - [`prims`]: device reduce, scan and sort beside the copy bandwidth;
//! - [`transpose`]: the transpose table of Harris, "An Efficient Matrix
//!   Transpose in CUDA C/C++" (NVIDIA, 2013), every kernel and element type;
//! - [`timing`]: the device timing these share;
//! - [`shuffle`]: the shared-memory-versus-shuffle experiments of Demouth,
//!   "Shuffle: Tips and Tricks" (GTC 2013);
//! - [`atomics`]: reduce-by-key and histogram workloads for every
//!   aggregation strategy (Westphal, "Voting and Shuffling to Optimize
//!   Atomic Operations", 2015);
//! - [`point_shuffle`]: the point-shuffle diversity experiment of Steven
//!   Robertson's cuburn;
//! - [`flame`]: the GPU flame renderer beside the CPU backend, and the
//!   image noise of each chaos-game variant.

#![deny(missing_docs)]

pub mod atomics;
mod error;
pub mod flame;
pub mod point_shuffle;
pub mod potts;
pub mod potts_autocorrelation;
pub mod potts_baseline;
pub mod potts_cluster;
pub mod potts_ensemble;
pub mod prims;
pub mod shuffle;
pub mod timing;
pub mod transpose;

pub use error::{BenchError, Result};
