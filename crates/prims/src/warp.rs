//! Host harness for the warp-level functions of `warp.cuh`. (Being written.)

use warpmc_gpu::KernelSource;

/// The warp test-kernel sources, for compile checks.
pub fn sources() -> Vec<KernelSource> {
    Vec::new()
}
