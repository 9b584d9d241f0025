//! Typed device buffers.

use cudarc::driver::{CudaSlice, DeviceRepr, ValidAsZeroBits};

use crate::Gpu;
use crate::error::{DriverContext, GpuError, Result};

/// `len` elements of `T` in device memory (plain `cuMemAlloc`-style memory,
/// never managed memory), freed when dropped.
#[derive(Debug)]
pub struct DeviceBuffer<T> {
    pub(crate) slice: CudaSlice<T>,
}

impl<T> DeviceBuffer<T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.slice.len()
    }

    /// Whether the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.slice.len() == 0
    }

    /// The device address of the first element, for handing the buffer to
    /// other CUDA libraries (it stays owned here).
    pub fn address(&self) -> u64 {
        use cudarc::driver::DevicePtr;
        // No event to wait for: warpmc's GPUs order all work on one stream
        // (event tracking is off), so the guard this returns does nothing.
        let (ptr, _guard) = self.slice.device_ptr(self.slice.stream());
        ptr
    }

    /// The underlying cudarc slice, for code that needs cudarc directly.
    pub fn as_cudarc(&self) -> &CudaSlice<T> {
        &self.slice
    }
}

impl Gpu {
    /// A zero-filled buffer of `len` elements.
    pub fn alloc_zeros<T: DeviceRepr + ValidAsZeroBits>(&self, len: usize) -> Result<DeviceBuffer<T>> {
        Ok(DeviceBuffer { slice: self.stream.alloc_zeros(len).during("allocating device memory")? })
    }

    /// A buffer of `len` elements with unspecified contents: scratch space
    /// that a kernel fills before anything reads it, without the cost of
    /// zeroing (a memset of a gigabyte takes a quarter of a millisecond).
    ///
    /// # Safety
    ///
    /// Every element must be written (by a kernel or a copy) before it is
    /// read, by the host or by a kernel that relies on its value.
    pub unsafe fn alloc_uninit<T: DeviceRepr>(&self, len: usize) -> Result<DeviceBuffer<T>> {
        // SAFETY: forwarded to the caller (see # Safety).
        let slice = unsafe { self.stream.alloc::<T>(len) }.during("allocating device memory")?;
        Ok(DeviceBuffer { slice })
    }

    /// A buffer holding a copy of `host`.
    pub fn upload<T: DeviceRepr>(&self, host: &[T]) -> Result<DeviceBuffer<T>> {
        Ok(DeviceBuffer { slice: self.stream.clone_htod(host).during("copying to the device")? })
    }

    /// Overwrites `buf` with `host`, which must have the same length.
    pub fn copy_to_device<T: DeviceRepr>(&self, host: &[T], buf: &mut DeviceBuffer<T>) -> Result<()> {
        if host.len() != buf.len() {
            return Err(GpuError::InvalidArgument(format!(
                "copy of {} elements into a device buffer of {}",
                host.len(),
                buf.len()
            )));
        }
        self.stream.memcpy_htod(host, &mut buf.slice).during("copying to the device")
    }

    /// The contents of `buf`, after all work issued before this call.
    pub fn download<T: DeviceRepr + Default + Clone>(&self, buf: &DeviceBuffer<T>) -> Result<Vec<T>> {
        self.stream.clone_dtoh(&buf.slice).during("copying from the device")
    }

    /// Fills `buf` with the byte `value` in every byte (0xff poisons a
    /// buffer so unwritten elements stand out in tests).
    pub fn memset_bytes<T: DeviceRepr>(&self, buf: &mut DeviceBuffer<T>, value: u8) -> Result<()> {
        use cudarc::driver::DevicePtrMut;
        let bytes = buf.slice.num_bytes();
        let (ptr, _sync) = buf.slice.device_ptr_mut(&self.stream);
        // SAFETY: `ptr` addresses `bytes` bytes of live device memory owned by
        // `buf`, which is borrowed mutably for the call; the memset is issued
        // on the buffer's stream.
        unsafe { cudarc::driver::result::memset_d8_async(ptr, value, bytes, self.stream.cu_stream()) }
            .during("cuMemsetD8Async")
    }

    /// Copies `src` into `dst` on the device (both the same length): the
    /// driver's device-to-device copy, the yardstick benchmarks compare
    /// bandwidth against.
    pub fn copy_device<T: DeviceRepr>(&self, src: &DeviceBuffer<T>, dst: &mut DeviceBuffer<T>) -> Result<()> {
        if src.len() != dst.len() {
            return Err(GpuError::InvalidArgument(format!(
                "device copy of {} elements into a buffer of {}",
                src.len(),
                dst.len()
            )));
        }
        self.stream.memcpy_dtod(&src.slice, &mut dst.slice).during("cuMemcpyDtoDAsync")
    }

    /// Copies `len` elements from `src[src_start..]` to `dst[dst_start..]`
    /// on the device.
    pub fn copy_device_range<T: DeviceRepr>(
        &self,
        src: &DeviceBuffer<T>,
        src_start: usize,
        dst: &mut DeviceBuffer<T>,
        dst_start: usize,
        len: usize,
    ) -> Result<()> {
        let fits = |start: usize, total: usize| start.checked_add(len).is_some_and(|end| end <= total);
        if !fits(src_start, src.len()) || !fits(dst_start, dst.len()) {
            return Err(GpuError::InvalidArgument(format!(
                "device copy of {len} elements from {src_start} of {} to {dst_start} of {}",
                src.len(),
                dst.len()
            )));
        }
        if len == 0 {
            return Ok(());
        }
        let from = src.slice.slice(src_start..src_start + len);
        let mut to = dst.slice.slice_mut(dst_start..dst_start + len);
        self.stream.memcpy_dtod(&from, &mut to).during("cuMemcpyDtoDAsync")
    }
}
