//! The shuffle document's timing experiments. (Being written.)

use warpmc_gpu::KernelSource;

/// The experiment kernel sources, for compile checks.
pub fn sources() -> Vec<KernelSource> {
    Vec::new()
}
