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

use numpy::{PyArrayMethods, PyReadonlyArrayDyn, PyReadwriteArrayDyn, PyUntypedArrayMethods};
use pyo3::exceptions::{PyMemoryError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use warpmc_gpu::{BackendChoice, Device};
use warpmc_prims::{
    Bytes16, CpuPrims, CudaPrims, MatrixShape, Op, Pod, Primitives, PrimsError, as_bytes, as_bytes_mut, from_bytes,
    from_bytes_mut,
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
/// `auto` and `cpu` work in the array's own memory.
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

/// Runs `work` on warpmc's CPU threads, the GIL released.
fn on_cpu<T: Send>(py: Python<'_>, work: impl FnOnce() -> Result<T, PrimsError> + Send) -> PyResult<T> {
    crate::fork::check_threads()?;
    py.detach(work).map_err(errors::prims)
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

/// An array argument to read: numpy's borrow checks refuse one that
/// another call is writing (another thread's sort in place), which is a
/// RuntimeError, not the TypeError of an argument of the wrong type.
fn readable<'py, T: numpy::Element>(x: &Bound<'py, PyAny>) -> PyResult<PyReadonlyArrayDyn<'py, T>> {
    x.cast::<numpy::PyArrayDyn<T>>()?.try_readonly().map_err(in_use)
}

/// An array argument to write, as [`readable`].
fn writable<'py, T: numpy::Element>(x: &Bound<'py, PyAny>) -> PyResult<PyReadwriteArrayDyn<'py, T>> {
    x.cast::<numpy::PyArrayDyn<T>>()?.try_readwrite().map_err(in_use)
}

fn in_use(e: numpy::BorrowError) -> PyErr {
    PyRuntimeError::new_err(format!(
        "the array is in use by another call (one running in another thread): {e}; wait for it, or give a copy"
    ))
}

/// A numpy array's elements, read in its own memory.
fn elements<'a, T: numpy::Element>(array: &'a PyReadonlyArrayDyn<'_, T>) -> PyResult<&'a [T]> {
    array.as_slice().map_err(|_| not_a_slice(array.is_aligned()))
}

/// A numpy array's elements, written in its own memory.
fn elements_mut<'a, T: numpy::Element>(array: &'a mut PyReadwriteArrayDyn<'_, T>) -> PyResult<&'a mut [T]> {
    let aligned = array.is_aligned();
    array.as_slice_mut().map_err(|_| not_a_slice(aligned))
}

/// A `MemoryError`, not an abort, when `bytes` of host memory for `what`
/// would not fit.
fn room_for(what: &str, bytes: u64) -> PyResult<()> {
    let size = warpmc_host::memory::human_bytes(bytes);
    warpmc_host::check_allocation(&format!("{what} ({size})"), bytes).map_err(PyMemoryError::new_err)
}

/// A `ValueError` when two arrays given to one call share memory (arrays
/// of distinct base objects over one buffer, which numpy's borrow checks
/// do not see): writing one while reading the other would mix them up.
fn apart<A, B>(a: &[A], b: &[B], what: &str) -> PyResult<()> {
    let (a0, b0) = (a.as_ptr() as usize, b.as_ptr() as usize);
    let (a1, b1) = (a0 + size_of_val(a), b0 + size_of_val(b));
    if a0 < b1 && b0 < a1 {
        return Err(PyValueError::new_err(format!("{what} share memory: give arrays of their own")));
    }
    Ok(())
}

/// Bytes of `n` elements of `T`.
fn bytes_of<T>(n: usize) -> u64 {
    (n as u64).saturating_mul(size_of::<T>() as u64)
}

/// Sorts a numpy array of keys in place (and the values with them, stably).
/// On the CPU the keys are sorted where they are (pairs are sorted in one
/// vector of pairs, then written back); the GPU sorts a copy and the
/// result is read back through one host copy.
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
        let mut key_array = writable::<K>(keys)?;
        let ks = elements_mut(&mut key_array)?;
        match (values, value_dtype) {
            (Some(values), Some(vd)) => with_number!(vd, V => {
                let mut value_array = writable::<V>(values)?;
                let vs = elements_mut(&mut value_array)?;
                if vs.len() != ks.len() {
                    return Err(PyValueError::new_err(format!("{} values for {} keys", vs.len(), ks.len())));
                }
                apart(ks, vs, "the keys and the values")?;
                match &host {
                    Host::Cpu => {
                        // The pairs, and the stable sort's buffer beside them.
                        room_for("the key-value pairs being sorted", bytes_of::<(K, V)>(ks.len()).saturating_mul(2))?;
                        on_cpu(py, || CpuPrims::sort_pairs_slice(ks, vs))
                    }
                    Host::Cuda(p) => {
                        room_for("the sorted keys read back", bytes_of::<K>(ks.len()).max(bytes_of::<V>(vs.len())))?;
                        on_gpu(py, p, |p| {
                            let (mut k, mut v) = (p.upload(ks)?, p.upload(vs)?);
                            p.sort_pairs(&mut k, &mut v)?;
                            ks.copy_from_slice(&p.download(&k)?);
                            vs.copy_from_slice(&p.download(&v)?);
                            Ok(())
                        })
                    }
                }
            }),
            _ => match &host {
                Host::Cpu => on_cpu(py, || {
                    CpuPrims::sort_keys_slice(ks);
                    Ok(())
                }),
                Host::Cuda(p) => {
                    room_for("the sorted keys read back", bytes_of::<K>(ks.len()))?;
                    on_gpu(py, p, |p| {
                        let mut k = p.upload(ks)?;
                        p.sort_keys(&mut k)?;
                        ks.copy_from_slice(&p.download(&k)?);
                        Ok(())
                    })
                }
            },
        }
    })
}

/// The inclusive or exclusive scan of a numpy array into `out`, an array
/// of the same length.
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
        let x_array = readable::<T>(x)?;
        let xs = elements(&x_array)?;
        let mut out_array = writable::<T>(out)?;
        let os = elements_mut(&mut out_array)?;
        if os.len() != xs.len() {
            return Err(PyValueError::new_err(format!("{} elements scanned into {} places", xs.len(), os.len())));
        }
        apart(xs, os, "the array and the scan's output")?;
        match &host {
            Host::Cpu => on_cpu(py, || CpuPrims::scan_into(xs, os, op, inclusive)),
            Host::Cuda(p) => {
                room_for("the scan read back", bytes_of::<T>(xs.len()))?;
                on_gpu(py, p, |p| {
                    let x = p.upload(xs)?;
                    let r = if inclusive { p.inclusive_scan(&x, op)? } else { p.exclusive_scan(&x, op)? };
                    os.copy_from_slice(&p.download(&r)?);
                    Ok(())
                })
            }
        }
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
        let x_array = readable::<T>(x)?;
        let xs = elements(&x_array)?;
        let r = match &host {
            Host::Cpu => on_cpu(py, || Ok(CpuPrims::reduce_slice(xs, op)))?,
            Host::Cuda(p) => on_gpu(py, p, |p| p.reduce(&p.upload(xs)?, op))?,
        };
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
    let x_array = readable::<u8>(x)?;
    let xs = elements(&x_array)?;
    let mut out_array = writable::<u8>(out)?;
    let os = elements_mut(&mut out_array)?;
    if os.len() != xs.len() {
        return Err(PyValueError::new_err(format!("{} bytes transposed into {} bytes", xs.len(), os.len())));
    }
    apart(xs, os, "the matrices and the transposes")?;
    with_width!(itemsize, T => {
        if xs.len() % size_of::<T>() != 0 {
            return Err(PyValueError::new_err(format!("{} bytes are not elements of {itemsize}", xs.len())));
        }
        // Elements at addresses their type cannot be read at (numpy aligns
        // new arrays, so this is rare) are worked on in an aligned copy.
        let aligned_copy: Vec<T>;
        let src: &[T] = match from_bytes::<T>(xs) {
            Some(src) => src,
            None => {
                room_for("an aligned copy of the matrices", bytes_of::<u8>(xs.len()))?;
                let mut v = vec![T::default(); xs.len() / size_of::<T>()];
                as_bytes_mut(&mut v).copy_from_slice(xs);
                aligned_copy = v;
                &aligned_copy
            }
        };
        let read_back: Option<Vec<T>> = match (&host, from_bytes_mut::<T>(os)) {
            (Host::Cpu, Some(dst)) => {
                on_cpu(py, || CpuPrims::transpose_slice(src, dst, shape))?;
                None
            }
            (Host::Cpu, None) => {
                room_for("the transposes", bytes_of::<T>(src.len()))?;
                let mut v = vec![T::default(); src.len()];
                on_cpu(py, || CpuPrims::transpose_slice(src, &mut v, shape))?;
                Some(v)
            }
            (Host::Cuda(p), _) => {
                room_for("the transposes read back", bytes_of::<T>(src.len()))?;
                Some(on_gpu(py, p, |p| p.download(&p.transpose(&p.upload(src)?, shape)?))?)
            }
        };
        if let Some(v) = read_back {
            elements_mut(&mut out_array)?.copy_from_slice(as_bytes(&v));
        }
        Ok(())
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
