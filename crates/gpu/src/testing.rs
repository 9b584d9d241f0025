//! Helpers for tests that need a GPU.

use crate::Gpu;

/// The GPU for a test, or `None` after printing why the test is skipped.
///
/// With `WARPMC_REQUIRE_GPU=1` a missing GPU fails the test instead, so a run
/// on a GPU machine cannot pass by skipping.
///
/// ```
/// let Some(gpu) = warpmc_gpu::testing::gpu_or_skip("doc example") else { return };
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
            use std::io::Write;
            let _ = writeln!(std::io::stderr().lock(), "SKIPPED {test}: {e}");
            None
        }
    }
}
