//! The CUDA sources of this crate, embedded, and helpers to build kernels
//! that use the warp-level header.

use warpmc_gpu::KernelSource;

/// Warp-level device functions (`warp.cuh`): broadcast, reduce,
/// scans, bitonic sorts, register transposes, ballot compaction.
pub const WARP_CUH: &str = include_str!("../kernels/warp.cuh");

/// Tile-level building blocks of the single-pass device kernels
/// (`lookback.cuh`): the decoupled look-back prefix between tiles.
/// It includes `warp.cuh`.
pub const LOOKBACK_CUH: &str = include_str!("../kernels/lookback.cuh");

/// `src` with `#include "warp.cuh"` available.
///
/// ```
/// use warpmc_gpu::KernelSource;
/// let src = warpmc_prims::kernels::with_warp_header(KernelSource::new(
///     "mine.cu",
///     "#include \"warp.cuh\"\n\
///      extern \"C\" __global__ void total(const float *x, float *out) {\n\
///          float s = warpmc::warp_reduce(x[threadIdx.x], warpmc::Sum());\n\
///          if (threadIdx.x == 0) *out = s;\n\
///      }",
/// ));
/// assert_eq!(src.name(), "mine.cu");
/// ```
pub fn with_warp_header(src: KernelSource) -> KernelSource {
    src.header("warp.cuh", WARP_CUH)
}

/// Every kernel source of the crate, as the backends build them (one per
/// element type where the kernels are specialised), for compile checks.
pub fn all_sources() -> Vec<KernelSource> {
    let mut v = crate::cuda::device::sources();
    v.extend(crate::cuda::sort::sources());
    v.extend(crate::transpose::cuda::sources());
    v.extend(crate::atomics::sources());
    v
}
