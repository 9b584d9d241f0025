//! Helpers for warpmc's tests; a dev-dependency only, never part of a
//! library's API.
//!
//! - [`gpu_or_skip`]: the GPU for a test, or a printed `SKIPPED` line
//!   (`WARPMC_REQUIRE_GPU=1` turns the skip into a failure);
//! - [`test_device!`]: one test body run on the CPU and on the GPU;
//! - [`SplitMix64`], [`pseudo_random`], [`AWKWARD_SIZES`], [`SPECIAL_F32`],
//!   [`SPECIAL_F64`]: deterministic inputs that do not depend on the crate
//!   under test, of sizes around warp and tile boundaries, degenerate
//!   values included;
//! - [`atomics::Reference`]: the check a GPU's sums by key are held to;
//! - [`warp`]: runs the warp-level functions of `warp.cuh` one launch per
//!   call, and their CPU references;
//! - [`scratch_dir`]: a directory for a test's files, removed when the test
//!   binary exits.

#![deny(missing_docs)]

pub mod atomics;
mod scratch;
pub mod warp;

pub use scratch::{fresh_scratch_dir, scratch_dir};

use std::io::Write;

use rayon::prelude::*;
pub use warpmc_gpu::Device;
use warpmc_gpu::Gpu;
use warpmc_prims::{Pod, as_bytes_mut};

/// Input lengths around warp (32) and tile (1024, 4096) boundaries, and one
/// of many tiles: 0, 1, 31, 33, 1023, 4097, 2²⁰ + 7.
pub const AWKWARD_SIZES: [usize; 7] = [0, 1, 31, 33, 1023, 4097, (1 << 20) + 7];

/// f32 values every kernel must survive: both zeros, infinities, NaN,
/// subnormals, the extremes and ordinary values.
pub const SPECIAL_F32: [f32; 12] = [
    0.0,
    -0.0,
    f32::INFINITY,
    f32::NEG_INFINITY,
    f32::NAN,
    f32::MIN_POSITIVE,
    1e-45,
    -1e-45,
    f32::MAX,
    f32::MIN,
    1.0,
    -2.5,
];

/// f64 values every kernel must survive (as [`SPECIAL_F32`]).
pub const SPECIAL_F64: [f64; 12] = [
    0.0,
    -0.0,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::NAN,
    f64::MIN_POSITIVE,
    5e-324,
    -5e-324,
    f64::MAX,
    f64::MIN,
    1.0,
    -2.5,
];

/// The number of cases a property test runs: `default`, or
/// `$PROPTEST_CASES` when set. (An explicit count in a proptest config wins
/// over the variable, so the long fuzz runs the READMEs document need this.)
pub fn fuzz_cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// `n` elements whose bits are a fixed pseudo-random function of `seed` and
/// of their index (splitmix64 per 8 bytes): every element differs from its
/// neighbours, so a misplaced one shows.
pub fn pseudo_random<T: Pod>(n: usize, seed: u64) -> Vec<T> {
    let mut v = vec![T::default(); n];
    as_bytes_mut(&mut v).par_chunks_mut(8).enumerate().for_each(|(i, chunk)| {
        let mut z = seed.wrapping_add((i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        chunk.copy_from_slice(&z.to_le_bytes()[..chunk.len()]);
    });
    v
}

/// The GPU for a test, or `None` after printing why the test is skipped.
///
/// With `WARPMC_REQUIRE_GPU=1` a missing GPU fails the test instead, so a run
/// on a GPU machine cannot pass by skipping.
///
/// ```
/// let Some(gpu) = warpmc_testkit::gpu_or_skip("doc example") else { return };
/// println!("running on {}", gpu.info().name);
/// ```
pub fn gpu_or_skip(test: &str) -> Option<Gpu> {
    match Gpu::open_default() {
        Ok(gpu) => Some(gpu),
        Err(e) => {
            let required = std::env::var("WARPMC_REQUIRE_GPU").is_ok_and(|v| v == "1");
            assert!(!required, "{test}: WARPMC_REQUIRE_GPU=1 but {e}");
            // Written to the stderr handle directly rather than with
            // eprintln!, which the test harness captures: a skip must be
            // visible in a plain `cargo test` run.
            let _ = writeln!(std::io::stderr().lock(), "SKIPPED {test}: {e}");
            None
        }
    }
}

/// Runs one test body on each backend, in the spirit of candle's
/// `test_device!`: `test_device!(body, body_cpu, body_cuda)` defines the
/// tests `body_cpu`, which calls `body(&Device::CPU)`, and `body_cuda`,
/// which calls `body(&Device::Cuda(gpu))` where a GPU is usable and prints
/// `SKIPPED` otherwise (see [`gpu_or_skip`]).
///
/// ```
/// use warpmc_testkit::{Device, test_device};
///
/// fn runs_anywhere(device: &Device) {
///     assert!(matches!(device.name(), "cpu" | "cuda"));
/// }
/// test_device!(runs_anywhere, runs_anywhere_cpu, runs_anywhere_cuda);
/// # fn main() {}
/// ```
#[macro_export]
macro_rules! test_device {
    ($body:ident, $cpu:ident, $cuda:ident) => {
        #[test]
        fn $cpu() {
            $body(&$crate::Device::CPU)
        }

        #[test]
        fn $cuda() {
            if let Some(gpu) = $crate::gpu_or_skip(stringify!($cuda)) {
                $body(&$crate::Device::Cuda(gpu))
            }
        }
    };
}

/// splitmix64 (Steele, Lea and Flood 2014): deterministic test inputs
/// without a dependency on warpmc-rng, the crate some tests check.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator starting from `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform-ish in `[0, n)` (modulo bias is irrelevant for test inputs).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// Uniform in [0, 1), 53 bits.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pseudo_random_bits_differ_between_neighbours() {
        let v: Vec<u16> = pseudo_random(1000, 3);
        assert!(v.windows(2).filter(|w| w[0] == w[1]).count() < 5);
        assert_eq!(v, pseudo_random::<u16>(1000, 3));
    }

    #[test]
    fn splitmix_matches_the_published_sequence() {
        // First outputs for seed 1234567 (Vigna's reference implementation).
        let mut r = SplitMix64::new(1234567);
        assert_eq!(r.next_u64(), 6457827717110365317);
        assert_eq!(r.next_u64(), 3203168211198807973);
    }

    fn the_cpu_always_runs(device: &Device) {
        assert!(matches!(device.name(), "cpu" | "cuda"));
    }
    test_device!(the_cpu_always_runs, the_cpu_always_runs_cpu, the_cpu_always_runs_cuda);
}
