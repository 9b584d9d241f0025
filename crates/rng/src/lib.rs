//! Random streams for warpmc, identical on the CPU and in CUDA kernels.
//!
//! Two generators, one naming scheme:
//!
//! - [`philox`]: Philox4x32-10 (Salmon et al., SC'11), a counter-based
//!   generator. Streams are named by (seed, stream id, counter) — see
//!   [`stream`] — so any lattice site or work unit computes its numbers with
//!   no sequential state.
//! - [`mwc`]: the multiply-with-carry generator of Ferrero et al. (2012), one
//!   per work unit, each with its own "good" multiplier from the table in
//!   [`multipliers`], seeded from the same naming scheme.
//! - [`convert`]: raw words to floats with documented exact ranges and to
//!   unbiased integers in [0, n).
//!
//! [`CUDA_HEADER`] is the same code as CUDA C++ (`kernels/warpmc_rng.cuh`);
//! the tests compare the two bit for bit on a GPU.
//!
//! # Examples
//!
//! ```
//! use warpmc_rng::{Domain, Mwc, PhiloxStream, RandomSource};
//!
//! // Site 12 of a run with seed 2026: its own Philox stream.
//! let mut site = PhiloxStream::new(2026, Domain::User.stream(12));
//! let u = site.next_f32();
//! assert!((0.0..1.0).contains(&u));
//!
//! // Work unit 3's multiply-with-carry generator.
//! let mut unit = Mwc::for_unit(2026, 3);
//! let k = unit.below(9);
//! assert!(k < 9);
//! ```

#![deny(missing_docs)]

pub mod convert;
pub mod multipliers;
pub mod mwc;
pub mod philox;
pub mod stream;

pub use convert::RandomSource;
pub use mwc::Mwc;
pub use stream::{Domain, PhiloxStream, philox_block};

/// File name under which [`CUDA_HEADER`] is given to NVRTC, so kernels write
/// `#include "warpmc_rng.cuh"`.
#[cfg(feature = "cuda")]
pub const CUDA_HEADER_NAME: &str = "warpmc_rng.cuh";

/// The CUDA C++ version of this crate's generators and conversions: the
/// only device implementation of Philox and of the multiply-with-carry step
/// in warpmc.
#[cfg(feature = "cuda")]
pub const CUDA_HEADER: &str = include_str!("../kernels/warpmc_rng.cuh");
