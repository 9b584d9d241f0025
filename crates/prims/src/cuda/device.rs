//! Reduce, scan, segmented reduce and compaction on the GPU
//! (`kernels/device.cu`, one module per element type).

use warpmc_gpu::{DeviceBuffer, KernelSource, LaunchConfig};

use super::CudaPrims;
use crate::element::{Element, Op, PREDICATE_KINDS, Predicate};
use crate::error::{Result, ensure};
use crate::kernels::LOOKBACK_CUH;

/// Threads per block of device.cu's reduce, segmented-reduce and compaction
/// kernels.
const BLOCK: u32 = 256;
/// Input bytes per thread of a compaction tile: enough independent loads in
/// flight to cover memory latency.
const THREAD_BYTES: usize = 64;
/// Resident blocks per SM the reduction grid aims for (2048 threads).
const REDUCE_BLOCKS_PER_SM: u32 = 8;

/// Elements per tile of the compaction kernel.
fn tile_elems<T: Element>() -> usize {
    BLOCK as usize * (THREAD_BYTES / size_of::<T>())
}

/// Input bytes per thread of a scan tile: 32 KB tiles. Each tile pays fixed
/// latencies (its ticket, its look-back), so fewer, larger tiles go faster
/// (docs/benchmarks/prims.md, "the scan"); six 32 KB tiles and their
/// padding fill an SM's shared memory.
const SCAN_THREAD_BYTES: usize = 128;

/// Threads per scan block (512 measured slower).
const SCAN_BLOCK: u32 = 256;

/// Elements per scan tile.
fn scan_tile_elems<T: Element>() -> usize {
    SCAN_BLOCK as usize * (SCAN_THREAD_BYTES / size_of::<T>())
}

/// Dynamic shared memory of a scan block: the tile with 16 bytes of padding
/// per 128 (device.cu checks it against its own).
const SCAN_STAGE_BYTES: usize = SCAN_BLOCK as usize * SCAN_THREAD_BYTES * 9 / 8;

/// The device.cu module source for `T`.
pub(crate) fn source<T: Element>() -> KernelSource {
    let mut src =
        crate::kernels::with_warp_header(KernelSource::new("device.cu", include_str!("../../kernels/device.cu")))
            .header("lookback.cuh", LOOKBACK_CUH)
            .option(format!("-DPRIMS_DEVICE_ELEM={}", T::CUDA))
            .option(format!("-DPRIMS_DEVICE_BLOCK={BLOCK}"))
            .option(format!("-DPRIMS_DEVICE_THREAD_BYTES={THREAD_BYTES}"))
            .option(format!("-DPRIMS_SCAN_THREAD_BYTES={SCAN_THREAD_BYTES}"))
            .option(format!("-DPRIMS_SCAN_BLOCK={SCAN_BLOCK}"))
            .option(format!("-DPRIMS_SCAN_STAGE_BYTES={SCAN_STAGE_BYTES}"));
    for (name, value) in PREDICATE_KINDS {
        src = src.option(format!("-D{name}={value}"));
    }
    src
}

/// Every element type's device.cu source, for compile checks.
pub(crate) fn sources() -> Vec<KernelSource> {
    vec![source::<i32>(), source::<u32>(), source::<i64>(), source::<u64>(), source::<f32>(), source::<f64>()]
}

fn one_block_per(blocks: usize) -> LaunchConfig {
    LaunchConfig { grid_dim: (blocks as u32, 1, 1), block_dim: (BLOCK, 1, 1), shared_mem_bytes: 0 }
}

/// Scratch of the single-pass (look-back) kernels, kept between calls so a
/// launch needs neither an allocation nor a memset: the ticket counter and
/// 16 bytes of status per tile, whose flags carry the launch's epoch (see
/// kernels/lookback.cuh). Zeroed only when allocated or when a counter
/// would wrap.
#[derive(Debug)]
pub(crate) struct LookbackScratch {
    ticket: DeviceBuffer<u32>,
    status: DeviceBuffer<u64>,
    /// Tickets handed out by earlier launches.
    tickets: u64,
    /// The last launch's epoch (0: none since the zeroing).
    epoch: u32,
}

/// What a look-back launch passes its kernel besides the buffers.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LookbackLaunch {
    ticket_base: u32,
    epoch: u32,
}

impl CudaPrims {
    fn device_module<T: Element>(&self) -> Result<warpmc_gpu::Module> {
        self.module(source::<T>, &format!("device-{}", T::NAME))
    }

    /// Runs `launch` with look-back scratch for `tiles` tiles (one block,
    /// so one ticket, per tile).
    fn with_lookback<R>(
        &self,
        tiles: usize,
        launch: impl FnOnce(&mut DeviceBuffer<u32>, &mut DeviceBuffer<u64>, LookbackLaunch) -> Result<R>,
    ) -> Result<R> {
        let mut guard = self.lookback.lock().unwrap_or_else(|p| p.into_inner());
        if guard.as_ref().is_none_or(|s| s.status.len() < 2 * tiles) {
            // Grown to at least twice the last size, so a series of
            // growing calls allocates rarely.
            let cap = (2 * tiles).max(guard.as_ref().map_or(0, |s| 2 * s.status.len()));
            *guard = Some(LookbackScratch {
                ticket: self.gpu.alloc_zeros(1)?,
                status: self.gpu.alloc_zeros(cap)?,
                tickets: 0,
                epoch: 0,
            });
        }
        let s = guard.as_mut().expect("allocated above");
        // Epochs live in 30 bits of a flag, tickets in 32: start afresh
        // before either wraps.
        if s.epoch >= (1 << 30) - 1 || s.tickets + tiles as u64 >= 1 << 32 {
            self.gpu.memset_bytes(&mut s.ticket, 0)?;
            self.gpu.memset_bytes(&mut s.status, 0)?;
            s.tickets = 0;
            s.epoch = 0;
        }
        s.epoch += 1;
        let at = LookbackLaunch { ticket_base: s.tickets as u32, epoch: s.epoch };
        let result = launch(&mut s.ticket, &mut s.status, at);
        // A launch the driver accepted takes exactly one ticket per tile; one
        // it refused took none.
        if result.is_ok() {
            s.tickets += tiles as u64;
        }
        result
    }

    /// Reduces `x` with `op` into `out[0]` on the device, without waiting
    /// ([`crate::Primitives::reduce`] returns the value to the host).
    pub fn reduce_into<T: Element>(&self, x: &DeviceBuffer<T>, out: &mut DeviceBuffer<T>, op: Op) -> Result<()> {
        ensure(!out.is_empty(), || "a reduction needs an output buffer of at least one element".into())?;
        let mut copy = None;
        let x = self.aligned_input(x, &mut copy)?;
        let m = self.device_module::<T>()?;
        let n = x.len() as u64;
        let vec = (16 / size_of::<T>()) as u64;
        let wanted = (n / vec).div_ceil(u64::from(BLOCK)).max(1);
        let blocks = wanted.min(u64::from(self.gpu.info().sm_count * REDUCE_BLOCKS_PER_SM)) as usize;
        // SAFETY: reduce_partial writes partials[0..blocks) before
        // reduce_final reads them, on the same stream.
        let mut partials = unsafe { self.gpu.alloc_uninit::<T>(blocks)? };
        let partial = m.kernel(&format!("reduce_partial_{}", op.name()))?;
        let fin = m.kernel(&format!("reduce_final_{}", op.name()))?;
        let count = blocks as u32;
        // SAFETY: reduce_partial_<op>(const T* x, u64 n, T* partials): x has n
        // elements (aligned: KERNEL_ALIGNMENT), partials one per block of
        // this grid.
        unsafe { self.gpu.launch(&partial).buf(x).arg(&n).buf_mut(&mut partials).run(one_block_per(blocks))? };
        // SAFETY: reduce_final_<op>(const T* partials, u32 count, T* out):
        // `count` partials, one output element (out is not empty).
        unsafe { self.gpu.launch(&fin).buf(&partials).arg(&count).buf_mut(out).run(one_block_per(1))? };
        Ok(())
    }

    /// The inclusive scan of `x` into `out` (the same length), in one pass
    /// over the data, without waiting.
    pub fn inclusive_scan_into<T: Element>(
        &self,
        x: &DeviceBuffer<T>,
        out: &mut DeviceBuffer<T>,
        op: Op,
    ) -> Result<()> {
        self.scan_into(x, out, op, true)
    }

    /// The exclusive scan of `x` into `out` (the same length), in one pass
    /// over the data, without waiting.
    pub fn exclusive_scan_into<T: Element>(
        &self,
        x: &DeviceBuffer<T>,
        out: &mut DeviceBuffer<T>,
        op: Op,
    ) -> Result<()> {
        self.scan_into(x, out, op, false)
    }

    fn scan_into<T: Element>(
        &self,
        x: &DeviceBuffer<T>,
        out: &mut DeviceBuffer<T>,
        op: Op,
        inclusive: bool,
    ) -> Result<()> {
        ensure(x.len() == out.len(), || format!("scan of {} elements into a buffer of {}", x.len(), out.len()))?;
        if x.is_empty() {
            return Ok(());
        }
        let mut copy = None;
        let x = self.aligned_input(x, &mut copy)?;
        self.with_aligned_output(out, false, |out| self.scan_aligned(x, out, op, inclusive))
    }

    /// [`Self::scan_into`] of buffers that start on [`super::KERNEL_ALIGNMENT`].
    fn scan_aligned<T: Element>(
        &self,
        x: &DeviceBuffer<T>,
        out: &mut DeviceBuffer<T>,
        op: Op,
        inclusive: bool,
    ) -> Result<()> {
        let tiles = x.len().div_ceil(scan_tile_elems::<T>());
        ensure(tiles < u32::MAX as usize, || format!("scan of {} elements: too many tiles", x.len()))?;
        let m = self.device_module::<T>()?;
        let k = m.kernel(&format!("scan_{}", op.name()))?;
        let stage = SCAN_STAGE_BYTES as u32;
        k.set_max_dynamic_shared_bytes(stage)?;
        let config =
            LaunchConfig { grid_dim: (tiles as u32, 1, 1), block_dim: (SCAN_BLOCK, 1, 1), shared_mem_bytes: stage };

        let n = x.len() as u64;
        let inc = i32::from(inclusive);
        self.with_lookback(tiles, |ticket, status, at| {
            // SAFETY: scan_<op>(const T* x, T* y, u64 n, int inclusive,
            // unsigned* ticket, void* status, unsigned ticket_base,
            // unsigned epoch): x and y have n elements; status has at least
            // 16 bytes per tile, none of them flagged with this epoch; the
            // ticket counter stands at ticket_base; one block per tile; the
            // dynamic shared memory is the stage the kernel expects (opted
            // in above).
            unsafe {
                self.gpu
                    .launch(&k)
                    .buf(x)
                    .buf_mut(out)
                    .arg(&n)
                    .arg(&inc)
                    .buf_mut(ticket)
                    .buf_mut(status)
                    .arg(&at.ticket_base)
                    .arg(&at.epoch)
                    .run(config)?
            };
            Ok(())
        })?;
        Ok(())
    }

    pub(crate) fn segmented_reduce_new<T: Element>(
        &self,
        x: &DeviceBuffer<T>,
        offsets: &DeviceBuffer<u32>,
        op: Op,
    ) -> Result<DeviceBuffer<T>> {
        // The offsets are checked on the host: a bad offset would make the
        // kernel read outside x.
        let host_offsets = self.gpu.download(offsets)?;
        crate::cpu::check_offsets(&host_offsets, x.len())?;
        let nseg = host_offsets.len() - 1;
        let mut out = self.gpu.alloc_zeros::<T>(nseg)?;
        if nseg == 0 {
            return Ok(out);
        }
        let m = self.device_module::<T>()?;
        let k = m.kernel(&format!("segmented_reduce_{}", op.name()))?;
        let warps_per_block = (BLOCK / 32) as usize;
        let blocks = nseg.div_ceil(warps_per_block).min((self.gpu.info().sm_count * 16) as usize);
        let nseg32 = nseg as u32;
        // SAFETY: segmented_reduce_<op>(const T* x, const unsigned* offsets,
        // unsigned nseg, T* out): offsets has nseg + 1 non-decreasing entries
        // ending within x (checked above), out has nseg elements.
        unsafe { self.gpu.launch(&k).buf(x).buf(offsets).arg(&nseg32).buf_mut(&mut out).run(one_block_per(blocks))? };
        Ok(out)
    }

    pub(crate) fn select_if_new<T: Element>(&self, x: &DeviceBuffer<T>, pred: Predicate<T>) -> Result<DeviceBuffer<T>> {
        if x.is_empty() {
            return Ok(self.gpu.alloc_zeros::<T>(0)?);
        }
        let tiles = x.len().div_ceil(tile_elems::<T>());
        ensure(x.len() < u32::MAX as usize, || format!("select_if of {} elements: at most 2^32 - 1", x.len()))?;
        let m = self.device_module::<T>()?;
        let k = m.kernel("select_if_kernel")?;
        let mut total = self.gpu.alloc_zeros::<u32>(1)?;
        // SAFETY: the kernel writes out[0..total) only, which it then reads
        // back below through the count.
        let mut staged = unsafe { self.gpu.alloc_uninit::<T>(x.len())? };
        let (kind, threshold) = pred.encode();
        let n = x.len() as u64;
        let ntiles = tiles as u64;
        self.with_lookback(tiles, |ticket, status, at| {
            // SAFETY: select_if_kernel(const T* x, u64 n, unsigned kind, T
            // threshold, T* out, unsigned* ticket, void* status, unsigned
            // ticket_base, unsigned epoch, u64 ntiles, unsigned* total): x
            // and out have n elements; status has at least 16 bytes per
            // tile, none flagged with this epoch; the ticket counter stands
            // at ticket_base; one block per tile.
            unsafe {
                self.gpu
                    .launch(&k)
                    .buf(x)
                    .arg(&n)
                    .arg(&kind)
                    .arg(&threshold)
                    .buf_mut(&mut staged)
                    .buf_mut(ticket)
                    .buf_mut(status)
                    .arg(&at.ticket_base)
                    .arg(&at.epoch)
                    .arg(&ntiles)
                    .buf_mut(&mut total)
                    .run(one_block_per(tiles))?
            };
            Ok(())
        })?;
        let count = self.gpu.download(&total)?[0] as usize;
        ensure(count <= x.len(), || format!("select_if: the kernel reported {count} of {} elements", x.len()))?;
        let mut out = self.gpu.alloc_zeros::<T>(count)?;
        self.gpu.copy_device_range(&staged, 0, &mut out, 0, count)?;
        Ok(out)
    }
}
