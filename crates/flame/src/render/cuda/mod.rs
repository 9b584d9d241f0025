//! The CUDA backend of the renderer (cuburn's design): the chaos game with
//! warp-uniform xform choice and a point shuffle between warps, histogram
//! accumulation with atomics, and density estimation, filtering and tone
//! mapping on the GPU.

/// The flame kernels' shared header: `real`, `FlameRng`.
#[allow(dead_code)] // used by the kernels being built
pub(crate) const FLAME_COMMON_CUH: &str = include_str!("../../../kernels/flame_common.cuh");

pub(crate) mod varcode;
