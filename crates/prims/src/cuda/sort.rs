//! Radix sort on the GPU. (Being written: see kernels/sort.cu.)

use warpmc_gpu::{DeviceBuffer, KernelSource};

use super::CudaPrims;
use crate::element::{Element, SortKey};
use crate::error::{PrimsError, Result};

/// The sort kernel sources, for compile checks.
pub(crate) fn sources() -> Vec<KernelSource> {
    Vec::new()
}

impl CudaPrims {
    pub(crate) fn sort_impl<K: SortKey, V: Element>(
        &self,
        _keys: &mut DeviceBuffer<K>,
        _values: Option<&mut DeviceBuffer<V>>,
    ) -> Result<()> {
        Err(PrimsError::InvalidArgument("the GPU radix sort is not written yet".into()))
    }
}
