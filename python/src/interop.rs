//! Other libraries' GPU arrays: reading a DLPack capsule, finding the
//! device of an address, and ordering their streams with warpmc's.
//!
//! DLPack (dmlc/dlpack, `dlpack.h`) hands over a `DLManagedTensor` in a
//! capsule named "dltensor". warpmc only reads it: the capsule stays
//! unconsumed, so its producer's destructor releases the tensor when the
//! capsule is dropped, after warpmc's work on the memory has finished.

use std::ffi::c_void;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyCapsuleMethods};

use crate::devices;
use crate::errors;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(dlpack_view, m)?)?;
    m.add_function(wrap_pyfunction!(stream_handle, m)?)?;
    m.add_function(wrap_pyfunction!(wait_for_stream, m)?)?;
    m.add_function(wrap_pyfunction!(pointer_device, m)?)?;
    Ok(())
}

/// `DLDevice`.
#[repr(C)]
struct DlDevice {
    device_type: i32,
    device_id: i32,
}

/// `DLDataType`.
#[repr(C)]
struct DlDataType {
    code: u8,
    bits: u8,
    lanes: u16,
}

/// `DLTensor`.
#[repr(C)]
struct DlTensor {
    data: *mut c_void,
    device: DlDevice,
    ndim: i32,
    dtype: DlDataType,
    shape: *const i64,
    strides: *const i64,
    byte_offset: u64,
}

/// The start of `DLManagedTensor`: its tensor, the one member read (the
/// context and deleter after it are the producer's).
#[repr(C)]
struct DlManagedTensor {
    dl_tensor: DlTensor,
}

/// numpy's name of a DLPack element type, or "bfloat16" (DLPack's
/// `kDLBfloat`, which numpy lacks: PyTorch's name for it), which only a
/// transpose takes (it moves 2-byte elements whatever they mean).
fn dtype_name(t: &DlDataType) -> PyResult<String> {
    let kind = match t.code {
        0 => "int",
        1 => "uint",
        2 => "float",
        4 if t.bits == 16 => "bfloat",
        5 => "complex",
        6 => "bool",
        4 => return Err(PyValueError::new_err(format!("DLPack bfloat elements of {} bits are not supported", t.bits))),
        c => return Err(PyValueError::new_err(format!("DLPack element type code {c} has no numpy equivalent"))),
    };
    if t.lanes != 1 {
        return Err(PyValueError::new_err(format!("DLPack vector elements ({} lanes) are not supported", t.lanes)));
    }
    Ok(if kind == "bool" { kind.to_string() } else { format!("{kind}{}", t.bits) })
}

/// What a DLPack capsule describes: (address of the first element, shape,
/// strides in elements or None for C order, numpy dtype name, (device
/// type, device id)).
#[pyfunction]
#[allow(clippy::type_complexity)]
fn dlpack_view(capsule: &Bound<'_, PyCapsule>) -> PyResult<(u64, Vec<i64>, Option<Vec<i64>>, String, (i32, i32))> {
    let managed = capsule.pointer_checked(Some(c"dltensor"))?.cast::<DlManagedTensor>();
    // SAFETY: a capsule named "dltensor" holds a DLManagedTensor, which
    // stays valid while the capsule is alive (it is, borrowed here) and
    // unconsumed (warpmc never renames it).
    let t = unsafe { &managed.as_ref().dl_tensor };
    let ndim = usize::try_from(t.ndim).map_err(|_| PyValueError::new_err("DLPack tensor of negative rank"))?;
    // SAFETY: `shape` has `ndim` entries, and `strides` too when not null
    // (dlpack.h); both live as long as the tensor.
    let shape = if ndim == 0 { Vec::new() } else { unsafe { std::slice::from_raw_parts(t.shape, ndim) }.to_vec() };
    let strides = (!t.strides.is_null() && ndim > 0)
        // SAFETY: as above.
        .then(|| unsafe { std::slice::from_raw_parts(t.strides, ndim) }.to_vec());
    let address = (t.data as u64).wrapping_add(t.byte_offset);
    Ok((address, shape, strides, dtype_name(&t.dtype)?, (t.device.device_type, t.device.device_id)))
}

/// The stream warpmc's work on GPU `ordinal` goes to, for DLPack's
/// `__dlpack__(stream=…)`: the producer makes it wait for its own work.
#[pyfunction]
fn stream_handle(ordinal: usize) -> PyResult<usize> {
    Ok(devices::gpu(ordinal).map_err(errors::gpu)?.stream_handle())
}

/// Blocks until the work on another library's stream `handle` (the
/// `stream` of `__cuda_array_interface__` version 3: 1 the legacy default
/// stream, 2 the per-thread default stream) has finished.
#[pyfunction]
fn wait_for_stream(py: Python<'_>, ordinal: usize, handle: usize) -> PyResult<()> {
    if handle == 0 {
        return Err(PyValueError::new_err("stream 0 is ambiguous in __cuda_array_interface__ and not allowed"));
    }
    let gpu = devices::gpu(ordinal).map_err(errors::gpu)?;
    // SAFETY: the handle comes from the array's own interface, which names
    // the stream its producer last used on it (live while the array is).
    py.detach(|| unsafe { gpu.wait_for_stream(handle) }).map_err(errors::gpu)
}

/// The ordinal of the GPU whose memory `address` is (an error for host
/// memory and for addresses the driver does not know).
#[pyfunction]
fn pointer_device(address: u64) -> PyResult<usize> {
    let any = devices::select(warpmc_gpu::BackendChoice::Cuda).map_err(errors::gpu)?;
    let gpu = any.gpu().expect("a CUDA choice gives a GPU");
    Ok(gpu.pointer_info(address).map_err(errors::gpu)?.ordinal)
}
