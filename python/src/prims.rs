//! `warpmc.prims`: sort, scan, reduce and transpose over numpy arrays (on
//! the CPU, or a GPU when asked) and in place over GPU arrays of other
//! libraries (CuPy, PyTorch), given as (address, length, dtype).
//!
//! GPU arrays are borrowed, never copied to the host: the work runs on
//! warpmc's stream of the array's device, after the owner's stream has
//! been waited for (the Python side arranges that), and this stream is
//! synchronised before returning, so the owner may use the results at once.

use std::collections::HashMap;
use std::sync::Mutex;

use numpy::{PyReadonlyArrayDyn, PyReadwriteArrayDyn, PyUntypedArrayMethods};
use pyo3::exceptions::{PyMemoryError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use warpmc_gpu::{BackendChoice, Device};
use warpmc_prims::{
    Bytes16, CpuPrims, CudaPrims, Element, MatrixShape, Op, Pod, Primitives, PrimsError, SortKey, as_bytes,
    as_bytes_mut,
};

use crate::devices;
use crate::errors;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(prims_sort_host, m)?)?;
    m.add_function(wrap_pyfunction!(prims_scan_host, m)?)?;
    m.add_function(wrap_pyfunction!(prims_reduce_host, m)?)?;
    m.add_function(wrap_pyfunction!(prims_transpose_host, m)?)?;
    m.add_function(wrap_pyfunction!(prims_sort_device, m)?)?;
    m.add_function(wrap_pyfunction!(prims_scan_device, m)?)?;
    m.add_function(wrap_pyfunction!(prims_reduce_device, m)?)?;
    m.add_function(wrap_pyfunction!(prims_transpose_device, m)?)?;
    Ok(())
}

fn unsupported(dtype: &str) -> PyErr {
    PyTypeError::new_err(format!(
        "dtype {dtype} is not supported: sort, scan and reduce take int32, uint32, int64, uint64, float32 or float64"
    ))
}

/// Runs `$body` with `$T` the element type numpy calls `$dtype`.
macro_rules! with_number {
    ($dtype:expr, $T:ident => $body:expr) => {
        match $dtype {
            "int32" => {
                type $T = i32;
                $body
            }
            "uint32" => {
                type $T = u32;
                $body
            }
            "int64" => {
                type $T = i64;
                $body
            }
            "uint64" => {
                type $T = u64;
                $body
            }
            "float32" => {
                type $T = f32;
                $body
            }
            "float64" => {
                type $T = f64;
                $body
            }
            other => Err(unsupported(other)),
        }
    };
}

/// Runs `$body` with `$T` a plain type of `$bytes` bytes (a transpose
/// moves bits, whatever they mean).
macro_rules! with_width {
    ($bytes:expr, $T:ident => $body:expr) => {
        match $bytes {
            1 => {
                type $T = u8;
                $body
            }
            2 => {
                type $T = u16;
                $body
            }
            4 => {
                type $T = u32;
                $body
            }
            8 => {
                type $T = u64;
                $body
            }
            16 => {
                type $T = Bytes16;
                $body
            }
            other => Err(PyTypeError::new_err(format!(
                "elements of {other} bytes cannot be transposed (1, 2, 4, 8 or 16 bytes)"
            ))),
        }
    };
}

fn parse_op(op: &str) -> PyResult<Op> {
    op.parse::<Op>().map_err(errors::prims)
}

/// The primitives of GPU `ordinal`, made once per process (their compiled
/// kernels and scratch are kept).
static CUDA_PRIMS: Mutex<Option<HashMap<usize, CudaPrims>>> = Mutex::new(None);

fn cuda_prims(ordinal: usize) -> PyResult<CudaPrims> {
    let mut all = CUDA_PRIMS.lock().unwrap_or_else(|p| p.into_inner());
    let all = all.get_or_insert_with(HashMap::new);
    if let Some(p) = all.get(&ordinal) {
        return Ok(p.clone());
    }
    let p = CudaPrims::new(devices::gpu(ordinal).map_err(errors::gpu)?);
    all.insert(ordinal, p.clone());
    Ok(p)
}

/// Where a numpy array's work runs: `cuda` copies it to the GPU and back;
/// `auto` and `cpu` stay on the host.
enum Host {
    Cpu,
    Cuda(CudaPrims),
}

fn host_backend(backend: &str) -> PyResult<Host> {
    match backend.parse::<BackendChoice>().map_err(errors::gpu)? {
        BackendChoice::Auto | BackendChoice::Cpu => Ok(Host::Cpu),
        BackendChoice::Cuda => match devices::select(BackendChoice::Cuda).map_err(errors::gpu)? {
            Device::Cuda(g) => Ok(Host::Cuda(cuda_prims(g.ordinal())?)),
            Device::Cpu { .. } => unreachable!("a CUDA choice gives a GPU or an error"),
        },
    }
}

/// Runs `work` on the backend's primitives, the GIL released.
macro_rules! on_host {
    ($py:expr, $host:expr, |$p:ident| $work:expr) => {
        match $host {
            Host::Cpu => {
                crate::fork::check_threads()?;
                $py.detach(|| {
                    let $p = &CpuPrims;
                    $work
                })
            }
            Host::Cuda(cuda) => $py.detach(|| {
                let $p = cuda;
                $work
            }),
        }
        .map_err(errors::prims)
    };
}

fn sort_on<P: Primitives, K: SortKey, V: Element>(
    p: &P,
    keys: &mut [K],
    values: Option<&mut [V]>,
) -> Result<(), PrimsError> {
    let mut k = p.upload(keys)?;
    match values {
        Some(values) => {
            let mut v = p.upload(values)?;
            p.sort_pairs(&mut k, &mut v)?;
            values.copy_from_slice(&p.download(&v)?);
        }
        None => p.sort_keys(&mut k)?,
    }
    keys.copy_from_slice(&p.download(&k)?);
    Ok(())
}

fn scan_on<P: Primitives, T: Element>(p: &P, x: &[T], op: Op, inclusive: bool) -> Result<Vec<T>, PrimsError> {
    let x = p.upload(x)?;
    let out = if inclusive { p.inclusive_scan(&x, op)? } else { p.exclusive_scan(&x, op)? };
    p.download(&out)
}

fn reduce_on<P: Primitives, T: Element>(p: &P, x: &[T], op: Op) -> Result<T, PrimsError> {
    p.reduce(&p.upload(x)?, op)
}

fn transpose_on<P: Primitives, T: Pod>(p: &P, x: &[T], shape: MatrixShape) -> Result<Vec<T>, PrimsError> {
    p.download(&p.transpose(&p.upload(x)?, shape)?)
}

/// Why a numpy array's elements cannot be taken as one slice: they are
/// not in one block, or not at addresses of their type's alignment (a view
/// into bytes at an odd offset, which numpy allows).
fn not_a_slice(aligned: bool) -> PyErr {
    if aligned {
        PyValueError::new_err("the array must be C-contiguous")
    } else {
        PyValueError::new_err(
            "the array's elements must be aligned in memory (this one is a view at an offset that is not a \
             multiple of its element size): np.require(x, requirements='A') makes an aligned copy",
        )
    }
}

/// Copies of an array a host primitive holds at once: this copy, the
/// backend's input, its output and the output read back (a transpose
/// holds one more, its typed view of the bytes).
const HOST_COPIES: u64 = 5;

/// A copy of a numpy array's elements, once the copies the primitive will
/// make of it are known to fit in host memory (a `MemoryError` otherwise,
/// not an abort).
fn host_elements<T: Pod + numpy::Element>(array: &Bound<'_, PyAny>) -> PyResult<Vec<T>> {
    let a: PyReadonlyArrayDyn<'_, T> = array.extract()?;
    let slice = a.as_slice().map_err(|_| not_a_slice(a.is_aligned()))?;
    let bytes = (size_of_val(slice) as u64).saturating_mul(HOST_COPIES);
    let size = warpmc_host::memory::human_bytes(size_of_val(slice) as u64);
    warpmc_host::check_allocation(&format!("copies of an array of {size}"), bytes).map_err(PyMemoryError::new_err)?;
    Ok(slice.to_vec())
}

/// Writes `values` into a numpy array of the same length.
fn write_host<T: Pod + numpy::Element>(array: &Bound<'_, PyAny>, values: &[T]) -> PyResult<()> {
    let mut a: PyReadwriteArrayDyn<'_, T> = array.extract()?;
    let aligned = a.is_aligned();
    let slice = a.as_slice_mut().map_err(|_| not_a_slice(aligned))?;
    if slice.len() != values.len() {
        return Err(PyValueError::new_err(format!("{} results for an array of {}", values.len(), slice.len())));
    }
    slice.copy_from_slice(values);
    Ok(())
}

/// Sorts a numpy array of keys in place (and the values with them, stably).
#[pyfunction]
#[pyo3(signature = (keys, key_dtype, values, value_dtype, backend))]
fn prims_sort_host(
    py: Python<'_>,
    keys: &Bound<'_, PyAny>,
    key_dtype: &str,
    values: Option<&Bound<'_, PyAny>>,
    value_dtype: Option<&str>,
    backend: &str,
) -> PyResult<()> {
    let host = host_backend(backend)?;
    with_number!(key_dtype, K => {
        let mut k: Vec<K> = host_elements(keys)?;
        match (values, value_dtype) {
            (Some(values), Some(vd)) => with_number!(vd, V => {
                let mut v: Vec<V> = host_elements(values)?;
                on_host!(py, &host, |p| sort_on(p, &mut k, Some(&mut v)))?;
                write_host(values, &v)?;
                write_host(keys, &k)
            }),
            _ => {
                on_host!(py, &host, |p| sort_on::<_, K, u32>(p, &mut k, None))?;
                write_host(keys, &k)
            }
        }
    })
}

/// The inclusive or exclusive scan of a numpy array into `out`.
#[pyfunction]
fn prims_scan_host(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    out: &Bound<'_, PyAny>,
    dtype: &str,
    op: &str,
    inclusive: bool,
    backend: &str,
) -> PyResult<()> {
    let (host, op) = (host_backend(backend)?, parse_op(op)?);
    with_number!(dtype, T => {
        let v: Vec<T> = host_elements(x)?;
        let r = on_host!(py, &host, |p| scan_on(p, &v, op, inclusive))?;
        write_host(out, &r)
    })
}

/// The reduction of a numpy array, as a Python number.
#[pyfunction]
fn prims_reduce_host<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    dtype: &str,
    op: &str,
    backend: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let (host, op) = (host_backend(backend)?, parse_op(op)?);
    with_number!(dtype, T => {
        let v: Vec<T> = host_elements(x)?;
        let r = on_host!(py, &host, |p| reduce_on(p, &v, op))?;
        r.into_pyobject(py).map(|o| o.into_any()).map_err(Into::into)
    })
}

/// The transposes of `batch` matrices of `rows × cols` elements of
/// `itemsize` bytes, from the bytes of one C-contiguous numpy array into
/// those of another (both viewed as `uint8`: a transpose moves bits,
/// whatever they mean).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn prims_transpose_host(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    out: &Bound<'_, PyAny>,
    itemsize: usize,
    batch: usize,
    rows: usize,
    cols: usize,
    backend: &str,
) -> PyResult<()> {
    let host = host_backend(backend)?;
    let shape = MatrixShape::new(rows, cols).batched(batch);
    let bytes: Vec<u8> = host_elements(x)?;
    with_width!(itemsize, T => {
        let mut v = vec![T::default(); bytes.len() / size_of::<T>()];
        let whole = size_of_val(v.as_slice());
        if whole != bytes.len() {
            return Err(PyValueError::new_err(format!("{} bytes are not elements of {itemsize}", bytes.len())));
        }
        as_bytes_mut(&mut v).copy_from_slice(&bytes);
        let r = on_host!(py, &host, |p| transpose_on(p, &v, shape))?;
        write_host(out, as_bytes(&r))
    })
}

/// A GPU array of another library: its address, elements and dtype.
type Foreign<'a> = (u64, usize, &'a str);

/// Runs `work` on GPU `ordinal`'s primitives, the GIL released, and waits
/// for it: the borrowed arrays are the owner's again when this returns.
fn on_gpu<T: Send>(
    py: Python<'_>,
    p: &CudaPrims,
    work: impl FnOnce(&CudaPrims) -> Result<T, PrimsError> + Send,
) -> PyResult<T> {
    py.detach(|| {
        let r = work(p)?;
        p.gpu().synchronize()?;
        Ok(r)
    })
    .map_err(errors::prims)
}

/// Borrows another library's device memory for one call.
///
/// # Safety
///
/// As [`warpmc_gpu::Gpu::borrow_device_memory`]: the array is alive for
/// the call (its Python object is held by the caller) and its owner's
/// stream was waited for.
unsafe fn borrow<T: Pod>(p: &CudaPrims, (address, len, _): Foreign<'_>) -> PyResult<warpmc_gpu::BorrowedBuffer<T>> {
    // SAFETY: forwarded to the caller.
    unsafe { p.gpu().borrow_device_memory::<T>(address, len) }.map_err(errors::gpu)
}

/// Sorts a GPU array of keys in place (and the values with them, stably).
#[pyfunction]
#[pyo3(signature = (ordinal, keys, values))]
fn prims_sort_device(py: Python<'_>, ordinal: usize, keys: Foreign<'_>, values: Option<Foreign<'_>>) -> PyResult<()> {
    let p = cuda_prims(ordinal)?;
    with_number!(keys.2, K => {
        // SAFETY: the Python caller holds the arrays and waited for their
        // streams (warpmc.prims).
        let mut k = unsafe { borrow::<K>(&p, keys)? };
        match values {
            Some(values) => with_number!(values.2, V => {
                // SAFETY: as for the keys.
                let mut v = unsafe { borrow::<V>(&p, values)? };
                on_gpu(py, &p, |p| p.sort_pairs(&mut k, &mut v))
            }),
            None => on_gpu(py, &p, |p| p.sort_keys(&mut k)),
        }
    })
}

/// The inclusive or exclusive scan of a GPU array into another.
#[pyfunction]
fn prims_scan_device(
    py: Python<'_>,
    ordinal: usize,
    x: Foreign<'_>,
    out: Foreign<'_>,
    op: &str,
    inclusive: bool,
) -> PyResult<()> {
    let (p, op) = (cuda_prims(ordinal)?, parse_op(op)?);
    with_number!(x.2, T => {
        // SAFETY: the Python caller holds both arrays and waited for their
        // streams (warpmc.prims).
        let (x, mut out) = unsafe { (borrow::<T>(&p, x)?, borrow::<T>(&p, out)?) };
        on_gpu(py, &p, |p| {
            if inclusive { p.inclusive_scan_into(&x, &mut out, op) } else { p.exclusive_scan_into(&x, &mut out, op) }
        })
    })
}

/// The reduction of a GPU array into the one element of another.
#[pyfunction]
fn prims_reduce_device(py: Python<'_>, ordinal: usize, x: Foreign<'_>, out: Foreign<'_>, op: &str) -> PyResult<()> {
    let (p, op) = (cuda_prims(ordinal)?, parse_op(op)?);
    with_number!(x.2, T => {
        // SAFETY: the Python caller holds both arrays and waited for their
        // streams (warpmc.prims).
        let (x, mut out) = unsafe { (borrow::<T>(&p, x)?, borrow::<T>(&p, out)?) };
        on_gpu(py, &p, |p| p.reduce_into(&x, &mut out, op))
    })
}

/// The transposes of `batch` matrices of `rows × cols` elements of
/// `itemsize` bytes, from one GPU array into another.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn prims_transpose_device(
    py: Python<'_>,
    ordinal: usize,
    x: Foreign<'_>,
    out: Foreign<'_>,
    itemsize: usize,
    batch: usize,
    rows: usize,
    cols: usize,
) -> PyResult<()> {
    let p = cuda_prims(ordinal)?;
    let shape = MatrixShape::new(rows, cols).batched(batch);
    with_width!(itemsize, T => {
        // SAFETY: the Python caller holds both arrays and waited for their
        // streams (warpmc.prims).
        let (x, mut out) = unsafe { (borrow::<T>(&p, x)?, borrow::<T>(&p, out)?) };
        on_gpu(py, &p, |p| p.transpose_into(&x, &mut out, shape, Default::default()))
    })
}
