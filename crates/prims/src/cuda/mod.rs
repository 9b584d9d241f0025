//! The CUDA backend of the device-level primitives.

pub(crate) mod device;
pub(crate) mod sort;

pub use sort::SortScratch;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use warpmc_gpu::{DeviceBuffer, Gpu, KernelSource, Module};

use crate::Primitives;
use crate::element::{Element, Op, Predicate, SortKey};
use crate::error::Result;

/// Primitives on a CUDA device, over [`DeviceBuffer`]s. Work is issued on
/// the device's one stream; results that come back to the host (a
/// reduction's value) synchronise.
///
/// Modules are compiled on first use, one per kernel family and element
/// type, and cached (in memory here, on disk by warpmc-gpu).
#[derive(Clone, Debug)]
pub struct CudaPrims {
    gpu: Gpu,
    modules: Arc<Mutex<HashMap<String, Module>>>,
    lookback: Arc<Mutex<Option<device::LookbackScratch>>>,
}

impl CudaPrims {
    /// Primitives on `gpu`.
    pub fn new(gpu: Gpu) -> Self {
        CudaPrims { gpu, modules: Arc::new(Mutex::new(HashMap::new())), lookback: Arc::new(Mutex::new(None)) }
    }

    /// The device.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// The module built from `source`, compiled once per `CudaPrims`.
    pub(crate) fn module(&self, source: impl FnOnce() -> KernelSource, key: &str) -> Result<Module> {
        let mut modules = self.modules.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(m) = modules.get(key) {
            return Ok(m.clone());
        }
        let m = self.gpu.module(&source())?;
        modules.insert(key.to_string(), m.clone());
        Ok(m)
    }
}

impl Primitives for CudaPrims {
    type Buffer<T: Element> = DeviceBuffer<T>;

    fn upload<T: Element>(&self, host: &[T]) -> Result<DeviceBuffer<T>> {
        Ok(self.gpu.upload(host)?)
    }

    fn download<T: Element>(&self, buf: &DeviceBuffer<T>) -> Result<Vec<T>> {
        Ok(self.gpu.download(buf)?)
    }

    fn reduce<T: Element>(&self, x: &DeviceBuffer<T>, op: Op) -> Result<T> {
        self.reduce_value(x, op)
    }

    fn inclusive_scan<T: Element>(&self, x: &DeviceBuffer<T>, op: Op) -> Result<DeviceBuffer<T>> {
        let mut out = self.gpu.alloc_zeros::<T>(x.len())?;
        self.scan_into(x, &mut out, op, true)?;
        Ok(out)
    }

    fn exclusive_scan<T: Element>(&self, x: &DeviceBuffer<T>, op: Op) -> Result<DeviceBuffer<T>> {
        let mut out = self.gpu.alloc_zeros::<T>(x.len())?;
        self.scan_into(x, &mut out, op, false)?;
        Ok(out)
    }

    fn segmented_reduce<T: Element>(
        &self,
        x: &DeviceBuffer<T>,
        offsets: &DeviceBuffer<u32>,
        op: Op,
    ) -> Result<DeviceBuffer<T>> {
        self.segmented_reduce_impl(x, offsets, op)
    }

    fn sort_keys<K: SortKey>(&self, keys: &mut DeviceBuffer<K>) -> Result<()> {
        self.sort_impl::<K, u32>(keys, None)
    }

    fn sort_pairs<K: SortKey, V: Element>(
        &self,
        keys: &mut DeviceBuffer<K>,
        values: &mut DeviceBuffer<V>,
    ) -> Result<()> {
        self.sort_impl(keys, Some(values))
    }

    fn select_if<T: Element>(&self, x: &DeviceBuffer<T>, pred: Predicate<T>) -> Result<DeviceBuffer<T>> {
        self.select_if_impl(x, pred)
    }
}
