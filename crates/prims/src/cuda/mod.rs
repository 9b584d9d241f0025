//! The CUDA backend: [`CudaPrims`], [`crate::Primitives`] over device
//! buffers, and what only a GPU needs.
//!
//! Besides the trait, [`CudaPrims`] has variants for pipelines and
//! benchmarks, named alike:
//!
//! - `…_into` writes into a buffer the caller owns instead of allocating,
//!   and does not wait for the device:
//!   [`CudaPrims::reduce_into`], [`CudaPrims::inclusive_scan_into`],
//!   [`CudaPrims::exclusive_scan_into`], [`CudaPrims::transpose_into`]
//!   (which also takes the [`crate::TransposeKernel`] to run),
//!   [`CudaPrims::reduce_by_key_dense_into`] and
//!   [`CudaPrims::histogram_into`] (which add into the bins and return the
//!   strategy that ran);
//! - `…_with` sorts with scratch made once by
//!   [`CudaPrims::sort_keys_scratch`] or [`CudaPrims::sort_pairs_scratch`]:
//!   [`CudaPrims::sort_keys_with`], [`CudaPrims::sort_pairs_with`];
//! - [`CudaPrims::atomics_strategy`] says what [`crate::atomics::AtomicStrategy::Auto`]
//!   resolves to, [`CudaPrims::peer_masks`] shows how the kernels group a
//!   warp's keys.

pub(crate) mod device;
pub(crate) mod sort;

pub use sort::SortScratch;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use warpmc_gpu::{DeviceBuffer, Gpu, KernelSource, Module};

use crate::Primitives;
use crate::atomics::{AtomicValue, AtomicsConfig};
use crate::element::{Element, Op, Pod, Predicate, SortKey};
use crate::error::Result;
use crate::transpose::MatrixShape;

/// Where the kernels need a buffer to start: the reduction, the scans and
/// the sort load 16 bytes at a time, and the transposes count their rows'
/// alignment from the start. `cuMemAlloc` gives 256 bytes; memory borrowed
/// from another library ([`warpmc_gpu::Gpu::borrow_device_memory`]: a CuPy
/// view `x[1:]`) can start anywhere, and such a buffer is copied to an
/// aligned one first (and an output copied back).
pub const KERNEL_ALIGNMENT: u64 = 256;

/// Primitives on a CUDA device, over [`DeviceBuffer`]s. Work is issued on
/// the device's one stream; results that come back to the host (a
/// reduction's value, a compaction's count) synchronise.
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

    /// `x` itself when it starts on [`KERNEL_ALIGNMENT`], else an aligned
    /// copy of it, kept in `copy`.
    pub(crate) fn aligned_input<'a, T: Pod>(
        &self,
        x: &'a DeviceBuffer<T>,
        copy: &'a mut Option<DeviceBuffer<T>>,
    ) -> Result<&'a DeviceBuffer<T>> {
        if x.is_empty() || x.address().is_multiple_of(KERNEL_ALIGNMENT) {
            return Ok(x);
        }
        // SAFETY: every element is copied from `x` before a kernel reads it.
        let mut c = unsafe { self.gpu.alloc_uninit::<T>(x.len())? };
        self.gpu.copy_device(x, &mut c)?;
        Ok(copy.insert(c))
    }

    /// Runs `work` on `out` when it starts on [`KERNEL_ALIGNMENT`], else on
    /// an aligned buffer (holding `out`'s elements first when `read`) that
    /// is copied into `out` once `work` succeeds; `out` is left as it was
    /// when `work` fails.
    pub(crate) fn with_aligned_output<T: Pod, R>(
        &self,
        out: &mut DeviceBuffer<T>,
        read: bool,
        work: impl FnOnce(&mut DeviceBuffer<T>) -> Result<R>,
    ) -> Result<R> {
        if out.is_empty() || out.address().is_multiple_of(KERNEL_ALIGNMENT) {
            return work(out);
        }
        // SAFETY: `read` copies every element in before `work` runs;
        // otherwise `work` writes every element it reads (each operation
        // here writes its whole output).
        let mut c = unsafe { self.gpu.alloc_uninit::<T>(out.len())? };
        if read {
            self.gpu.copy_device(out, &mut c)?;
        }
        let r = work(&mut c)?;
        self.gpu.copy_device(&c, out)?;
        Ok(r)
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
    type Buffer<T: Pod> = DeviceBuffer<T>;

    fn upload<T: Pod>(&self, host: &[T]) -> Result<DeviceBuffer<T>> {
        Ok(self.gpu.upload(host)?)
    }

    fn download<T: Pod>(&self, buf: &DeviceBuffer<T>) -> Result<Vec<T>> {
        Ok(self.gpu.download(buf)?)
    }

    fn reduce<T: Element>(&self, x: &DeviceBuffer<T>, op: Op) -> Result<T> {
        let mut out = self.gpu.alloc_zeros::<T>(1)?;
        self.reduce_into(x, &mut out, op)?;
        Ok(self.gpu.download(&out)?[0])
    }

    fn inclusive_scan<T: Element>(&self, x: &DeviceBuffer<T>, op: Op) -> Result<DeviceBuffer<T>> {
        let mut out = self.gpu.alloc_zeros::<T>(x.len())?;
        self.inclusive_scan_into(x, &mut out, op)?;
        Ok(out)
    }

    fn exclusive_scan<T: Element>(&self, x: &DeviceBuffer<T>, op: Op) -> Result<DeviceBuffer<T>> {
        let mut out = self.gpu.alloc_zeros::<T>(x.len())?;
        self.exclusive_scan_into(x, &mut out, op)?;
        Ok(out)
    }

    fn segmented_reduce<T: Element>(
        &self,
        x: &DeviceBuffer<T>,
        offsets: &DeviceBuffer<u32>,
        op: Op,
    ) -> Result<DeviceBuffer<T>> {
        self.segmented_reduce_new(x, offsets, op)
    }

    fn sort_keys<K: SortKey>(&self, keys: &mut DeviceBuffer<K>) -> Result<()> {
        self.sort_allocating::<K, u32>(keys, None)
    }

    fn sort_pairs<K: SortKey, V: Element>(
        &self,
        keys: &mut DeviceBuffer<K>,
        values: &mut DeviceBuffer<V>,
    ) -> Result<()> {
        self.sort_allocating(keys, Some(values))
    }

    fn select_if<T: Element>(&self, x: &DeviceBuffer<T>, pred: Predicate<T>) -> Result<DeviceBuffer<T>> {
        self.select_if_new(x, pred)
    }

    fn transpose<T: Pod>(&self, src: &DeviceBuffer<T>, shape: MatrixShape) -> Result<DeviceBuffer<T>> {
        self.transpose_new(src, shape)
    }

    fn transpose_in_place<T: Pod>(&self, data: &mut DeviceBuffer<T>, shape: MatrixShape) -> Result<()> {
        self.transpose_square_in_place(data, shape)
    }

    fn reduce_by_key_dense<V: AtomicValue>(
        &self,
        keys: &DeviceBuffer<u32>,
        values: &DeviceBuffer<V>,
        nbins: usize,
        config: impl Into<AtomicsConfig>,
    ) -> Result<DeviceBuffer<V>> {
        crate::atomics::check_nbins(nbins)?;
        let mut bins = self.gpu.alloc_zeros::<V>(nbins)?;
        self.reduce_by_key_dense_into(keys, values, &mut bins, config)?;
        Ok(bins)
    }

    fn histogram(
        &self,
        keys: &DeviceBuffer<u32>,
        nbins: usize,
        config: impl Into<AtomicsConfig>,
    ) -> Result<DeviceBuffer<u32>> {
        crate::atomics::check_nbins(nbins)?;
        let mut bins = self.gpu.alloc_zeros::<u32>(nbins)?;
        self.histogram_into(keys, &mut bins, config)?;
        Ok(bins)
    }
}
