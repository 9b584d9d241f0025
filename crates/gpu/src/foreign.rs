//! Device memory and streams of other CUDA libraries (CuPy, PyTorch, Numba,
//! …), used in place.
//!
//! Those libraries allocate through the CUDA runtime, in each device's
//! primary context, which is the context [`Gpu`] retains too, so their
//! addresses are valid in warpmc's kernels. A [`BorrowedBuffer`] lends such
//! memory to any function that takes a [`DeviceBuffer`]; it is never freed
//! here. Their work is ordered with warpmc's by waiting on their stream
//! ([`Gpu::wait_for_stream`]) or by handing them warpmc's
//! ([`Gpu::stream_handle`]).

use std::mem::ManuallyDrop;
use std::ops::{Deref, DerefMut};

use cudarc::driver::{DeviceRepr, sys};

use crate::Gpu;
use crate::buffer::DeviceBuffer;
use crate::error::{DriverContext, GpuError, Result};

/// `len` elements of device memory that another library owns, seen as a
/// [`DeviceBuffer`] for as long as this value lives. Dropping it leaves the
/// memory alone.
#[derive(Debug)]
pub struct BorrowedBuffer<T> {
    buffer: ManuallyDrop<DeviceBuffer<T>>,
}

impl<T> Deref for BorrowedBuffer<T> {
    type Target = DeviceBuffer<T>;
    fn deref(&self) -> &DeviceBuffer<T> {
        &self.buffer
    }
}

impl<T> DerefMut for BorrowedBuffer<T> {
    fn deref_mut(&mut self) -> &mut DeviceBuffer<T> {
        &mut self.buffer
    }
}

impl<T> Drop for BorrowedBuffer<T> {
    fn drop(&mut self) {
        // SAFETY: `buffer` is not used after this; leaking its slice gives
        // the address back without freeing it (its owner frees it).
        let buffer = unsafe { ManuallyDrop::take(&mut self.buffer) };
        buffer.slice.leak();
    }
}

/// What the driver knows of a device address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PointerInfo {
    /// The device whose memory it is.
    pub ordinal: usize,
    /// Managed (unified) memory rather than plain device memory.
    pub managed: bool,
    /// The allocation it lies in: first address and size in bytes.
    pub range: (u64, u64),
}

/// One pointer attribute, as the integer type the driver writes.
///
/// # Safety
///
/// `T` must be the type the driver writes for `attribute` (an int, an
/// unsigned int, a pointer or a size).
unsafe fn attribute<T: Default>(ptr: u64, attribute: sys::CUpointer_attribute) -> Result<T> {
    let mut value = T::default();
    // SAFETY: the driver writes one value of the attribute's type into
    // `value`, which the caller guarantees `T` is.
    unsafe { sys::cuPointerGetAttribute((&mut value as *mut T).cast(), attribute, ptr) }
        .result()
        .map(|()| value)
        .map_err(|_| GpuError::InvalidArgument(format!("address {ptr:#x} is not CUDA device memory")))
}

impl Gpu {
    /// The device's ordinal.
    pub fn ordinal(&self) -> usize {
        self.info().ordinal
    }

    /// The raw `CUstream` of this GPU's one stream, for libraries that
    /// order their work with it (DLPack's `stream` argument).
    pub fn stream_handle(&self) -> usize {
        self.stream.cu_stream() as usize
    }

    /// Blocks until the work queued so far on another library's stream
    /// `handle` has finished: 1 names the legacy default stream, 2 the
    /// per-thread default stream, as in CUDA's runtime and the
    /// `__cuda_array_interface__` protocol.
    ///
    /// # Safety
    ///
    /// `handle` must be 1, 2, or a live stream of this device's primary
    /// context.
    pub unsafe fn wait_for_stream(&self, handle: usize) -> Result<()> {
        self.ctx.bind_to_thread().during("cuCtxSetCurrent")?;
        // SAFETY: a valid stream handle, by the caller's guarantee.
        unsafe { cudarc::driver::result::stream::synchronize(handle as sys::CUstream) }.during("cuStreamSynchronize")
    }

    /// Where `ptr` lives: an error if the driver does not know it as device
    /// or managed memory (a host address, a freed allocation).
    pub fn pointer_info(&self, ptr: u64) -> Result<PointerInfo> {
        use sys::CUpointer_attribute::*;
        self.ctx.bind_to_thread().during("cuCtxSetCurrent")?;
        // The driver writes CUmemorytype, the managed flag and the ordinal
        // as 32-bit integers, the range as an address and a size.
        // SAFETY: read as the driver's type for the attribute (above).
        let memory_type: u32 = unsafe { attribute(ptr, CU_POINTER_ATTRIBUTE_MEMORY_TYPE)? };
        // SAFETY: as above.
        let managed: u32 = unsafe { attribute(ptr, CU_POINTER_ATTRIBUTE_IS_MANAGED)? };
        if memory_type != sys::CUmemorytype::CU_MEMORYTYPE_DEVICE as u32 && managed == 0 {
            return Err(GpuError::InvalidArgument(format!("address {ptr:#x} is host memory, not CUDA device memory")));
        }
        // SAFETY: as above.
        let ordinal: i32 = unsafe { attribute(ptr, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL)? };
        // SAFETY: as above.
        let start: u64 = unsafe { attribute(ptr, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR)? };
        // SAFETY: as above.
        let size: usize = unsafe { attribute(ptr, CU_POINTER_ATTRIBUTE_RANGE_SIZE)? };
        Ok(PointerInfo { ordinal: ordinal.max(0) as usize, managed: managed != 0, range: (start, size as u64) })
    }

    /// `len` elements of `T` at device address `ptr`, which another library
    /// allocated, as a buffer warpmc's functions take. Checked first: the
    /// address is device (or managed) memory of this GPU, aligned for `T`,
    /// and the elements lie inside its allocation. An empty buffer is not
    /// checked (its address may be null).
    ///
    /// # Safety
    ///
    /// The memory must stay allocated while the returned buffer lives, and
    /// nothing else may write it while warpmc reads it, or touch it while
    /// warpmc writes it (wait for the owner's stream first:
    /// [`Gpu::wait_for_stream`]). Any bits must be a valid `T` (true of the
    /// numbers).
    pub unsafe fn borrow_device_memory<T: DeviceRepr>(&self, ptr: u64, len: usize) -> Result<BorrowedBuffer<T>> {
        let bytes = (len as u64).checked_mul(size_of::<T>() as u64);
        if len > 0 {
            if !ptr.is_multiple_of(align_of::<T>() as u64) {
                return Err(GpuError::InvalidArgument(format!(
                    "address {ptr:#x} is not aligned for {}-byte elements",
                    align_of::<T>()
                )));
            }
            let info = self.pointer_info(ptr)?;
            if info.ordinal != self.ordinal() {
                return Err(GpuError::InvalidArgument(format!(
                    "address {ptr:#x} is memory of CUDA device {}, not of device {}",
                    info.ordinal,
                    self.ordinal()
                )));
            }
            let (start, size) = info.range;
            let end = bytes.and_then(|b| ptr.checked_add(b));
            if end.is_none_or(|end| start.checked_add(size).is_none_or(|limit| end > limit)) {
                return Err(GpuError::InvalidArgument(format!(
                    "{len} elements of {} bytes at {ptr:#x} run past the end of their allocation ({size} bytes \
                     from {start:#x})",
                    size_of::<T>()
                )));
            }
        }
        // SAFETY: the address holds `len` elements of this device's memory
        // (checked above), which stays allocated and unshared as the caller
        // guarantees; the slice is leaked, never freed, when the
        // BorrowedBuffer drops.
        let slice = unsafe { self.stream.upgrade_device_ptr::<T>(ptr, len) };
        Ok(BorrowedBuffer { buffer: ManuallyDrop::new(DeviceBuffer { slice }) })
    }
}
