//! A second stream on one device, and page-locked host memory: for work
//! that overlaps copies between host and device with kernels (a strip of a
//! lattice sending its edge rows while its interior is updated).

use cudarc::driver::{CudaEvent, DeviceRepr, PinnedHostSlice, ValidAsZeroBits};

use crate::Gpu;
use crate::buffer::DeviceBuffer;
use crate::error::{DriverContext, GpuError, Result};

/// `len` elements of `T` in page-locked host memory, which the device
/// copies to and from asynchronously. Reading or writing it from the host
/// waits for the copies issued on it first.
#[derive(Debug)]
pub struct PinnedBuffer<T> {
    slice: PinnedHostSlice<T>,
    /// Recorded after each copy into or out of the buffer. (cudarc's own
    /// event in the slice is recorded only where it tracks events, which
    /// warpmc's GPUs do not: see Gpu::open.)
    copied: CudaEvent,
}

impl<T> Drop for PinnedBuffer<T> {
    fn drop(&mut self) {
        // The memory is freed when `slice` drops: not under a copy.
        let _ = self.copied.synchronize();
    }
}

impl<T: ValidAsZeroBits> PinnedBuffer<T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.slice.len()
    }

    /// Whether the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.slice.is_empty()
    }

    /// The contents, once every copy issued into the buffer has finished.
    pub fn as_slice(&self) -> Result<&[T]> {
        self.copied.synchronize().during("cuEventSynchronize")?;
        self.slice.as_slice().during("cuEventSynchronize")
    }

    /// The contents to write, once every copy issued into or out of the
    /// buffer has finished.
    pub fn as_mut_slice(&mut self) -> Result<&mut [T]> {
        self.copied.synchronize().during("cuEventSynchronize")?;
        self.slice.as_mut_slice().during("cuEventSynchronize")
    }
}

/// The range `start .. start + len` of a buffer of `total` elements, or the
/// error that it does not fit.
fn check_range(start: usize, len: usize, total: usize, what: &str) -> Result<()> {
    if start.checked_add(len).is_none_or(|end| end > total) {
        return Err(GpuError::InvalidArgument(format!(
            "{what} of {len} elements at {start} of a device buffer of {total}"
        )));
    }
    Ok(())
}

impl Gpu {
    /// A handle on the same device, context and kernel cache whose work
    /// goes to a stream of its own; that stream starts after the work
    /// issued so far on this one. Work on the two streams is not ordered
    /// otherwise: [`Gpu::wait_for`] orders it where a buffer is shared.
    pub fn fork_stream(&self) -> Result<Gpu> {
        let mut forked = self.clone();
        forked.stream = self.stream.fork().during("cuStreamCreate")?;
        Ok(forked)
    }

    /// As [`fork_stream`](Gpu::fork_stream), on a stream of the device's
    /// highest priority: as multiprocessors free up, the blocks of its
    /// kernels are started before those of kernels queued on ordinary
    /// streams (for short work, such as a trade between GPUs, that must not
    /// wait behind a long kernel beside it).
    pub fn fork_urgent_stream(&self) -> Result<Gpu> {
        self.ctx.bind_to_thread().during("cuCtxSetCurrent")?;
        let (_least, greatest) =
            cudarc::driver::result::stream::get_priority_range().during("cuCtxGetStreamPriorityRange")?;
        let stream = self.ctx.new_stream_with_priority(greatest).during("cuStreamCreateWithPriority")?;
        stream.join(&self.stream).during("cuStreamWaitEvent")?;
        let mut forked = self.clone();
        forked.stream = stream;
        Ok(forked)
    }

    /// Makes the work issued on this handle's stream from now on wait for
    /// the work issued so far on `other`'s (a handle on the same device),
    /// without blocking the host.
    pub fn wait_for(&self, other: &Gpu) -> Result<()> {
        self.stream.join(&other.stream).during("cuStreamWaitEvent")
    }

    /// A zero-filled page-locked host buffer of `len` elements.
    pub fn alloc_pinned<T: DeviceRepr + ValidAsZeroBits>(&self, len: usize) -> Result<PinnedBuffer<T>> {
        // Cached (not write-combined) memory: the host reads what the
        // device writes into it.
        // SAFETY: the memory is zeroed below before anything reads it, and
        // zero bits are a valid T (ValidAsZeroBits).
        let mut slice = unsafe { self.ctx.alloc_pinned_with_flags::<T>(len, 0) }.during("cuMemHostAlloc")?;
        let bytes = slice.num_bytes();
        let ptr = slice.as_mut_ptr().during("cuEventSynchronize")?;
        // SAFETY: `ptr` addresses the `bytes` bytes just allocated, owned by
        // `slice` and used by nothing else yet.
        unsafe { std::ptr::write_bytes(ptr.cast::<u8>(), 0, bytes) };
        let copied = self.ctx.new_event(None).during("cuEventCreate")?;
        Ok(PinnedBuffer { slice, copied })
    }

    /// Copies `dst.len()` elements of `src` from `start` on into `dst`,
    /// asynchronously on this handle's stream ([`PinnedBuffer::as_slice`]
    /// waits for it).
    pub fn copy_to_pinned<T: DeviceRepr>(
        &self,
        src: &DeviceBuffer<T>,
        start: usize,
        dst: &mut PinnedBuffer<T>,
    ) -> Result<()> {
        let len = dst.slice.len();
        check_range(start, len, src.len(), "copy to the host")?;
        if len == 0 {
            return Ok(());
        }
        let from = src.slice.slice(start..start + len);
        self.stream.memcpy_dtoh(&from, &mut dst.slice).during("cuMemcpyDtoHAsync")?;
        dst.copied.record(&self.stream).during("cuEventRecord")
    }

    /// Copies `src` into `dst` from element `start` on, asynchronously on
    /// this handle's stream (a later [`PinnedBuffer::as_mut_slice`] waits
    /// for it).
    pub fn copy_from_pinned<T: DeviceRepr>(
        &self,
        src: &PinnedBuffer<T>,
        dst: &mut DeviceBuffer<T>,
        start: usize,
    ) -> Result<()> {
        let len = src.slice.len();
        check_range(start, len, dst.len(), "copy to the device")?;
        if len == 0 {
            return Ok(());
        }
        let mut to = dst.slice.slice_mut(start..start + len);
        self.stream.memcpy_htod(&src.slice, &mut to).during("cuMemcpyHtoDAsync")?;
        src.copied.record(&self.stream).during("cuEventRecord")
    }
}
