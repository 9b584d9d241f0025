//! NCCL, NVIDIA's collective library, loaded at run time: point-to-point
//! sends and receives and all-reduce between GPUs, queued on a [`Gpu`]'s
//! stream like any other work.
//!
//! warpmc loads `libnccl.so.2` itself rather than through cudarc's `nccl`
//! bindings: cudarc looks for library names NCCL does not ship (its soname
//! is `libnccl.so.2`) and panics when the library or a symbol is missing,
//! where warpmc must say in one line that NCCL is not there. The library is
//! looked for as `WARPMC_NCCL` names it (a file or a directory), then by
//! name through the dynamic loader, then in the `nvidia/nccl/lib` directory
//! of NVIDIA's Python wheels (where PyTorch's NCCL lives).
//!
//! NVLink SHARP (multicast objects) stays off: `NCCL_NVLS_ENABLE=0`. The
//! warpmc binary sets it first thing in `main`; a program that uses this
//! module itself and starts threads before loading NCCL should set it
//! before those threads start too, since otherwise [`library`] sets it
//! while they may be reading the environment.
//!
//! # One process per GPU
//!
//! ```no_run
//! # fn main() -> warpmc_gpu::Result<()> {
//! use warpmc_gpu::{Gpu, nccl};
//! let gpu = Gpu::open(0)?;
//! // The first process makes the id and sends it to the others (over MPI, say).
//! let id = nccl::library()?.unique_id()?;
//! let comm = nccl::Communicator::new(&gpu, &id, 0, 1)?;
//! let mut counts = gpu.upload(&[1u64, 2, 3])?;
//! comm.all_reduce_sum(&gpu, &mut counts)?;
//! # Ok(()) }
//! ```

use std::ffi::{CStr, c_char, c_int, c_void};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use cudarc::driver::DeviceRepr;

use crate::error::DriverContext;
use crate::{DeviceBuffer, Gpu, GpuError, Result};

type RawResult = c_int;
type RawComm = *mut c_void;
type RawStream = *mut c_void;

/// NCCL's `ncclUniqueId`: 128 opaque bytes that name one communicator.
#[repr(C)]
#[derive(Clone, Copy)]
struct RawId {
    internal: [c_char; 128],
}

/// The name of one communicator: made by one process
/// ([`Library::unique_id`]) and handed to every process that joins it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct UniqueId(pub [u8; 128]);

impl std::fmt::Debug for UniqueId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("UniqueId(…)")
    }
}

/// The entry points warpmc uses, from one loaded library.
struct Api {
    name: String,
    version: c_int,
    get_unique_id: unsafe extern "C" fn(*mut RawId) -> RawResult,
    comm_init_rank: unsafe extern "C" fn(*mut RawComm, c_int, RawId, c_int) -> RawResult,
    comm_init_all: unsafe extern "C" fn(*mut RawComm, c_int, *const c_int) -> RawResult,
    comm_destroy: unsafe extern "C" fn(RawComm) -> RawResult,
    comm_get_async_error: unsafe extern "C" fn(RawComm, *mut RawResult) -> RawResult,
    get_error_string: unsafe extern "C" fn(RawResult) -> *const c_char,
    group_start: unsafe extern "C" fn() -> RawResult,
    group_end: unsafe extern "C" fn() -> RawResult,
    send: unsafe extern "C" fn(*const c_void, usize, c_int, c_int, RawComm, RawStream) -> RawResult,
    recv: unsafe extern "C" fn(*mut c_void, usize, c_int, c_int, RawComm, RawStream) -> RawResult,
    all_reduce: unsafe extern "C" fn(*const c_void, *mut c_void, usize, c_int, c_int, RawComm, RawStream) -> RawResult,
}

/// A loaded NCCL library.
pub struct Library {
    api: Api,
}

impl std::fmt::Debug for Library {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Library").field("name", &self.api.name).field("version", &self.version()).finish()
    }
}

/// The NCCL library, loaded once per process; an error says in one line
/// why it could not be (and every later call gives the same error).
pub fn library() -> Result<&'static Library> {
    static LIB: OnceLock<std::result::Result<Library, String>> = OnceLock::new();
    LIB.get_or_init(load).as_ref().map_err(|e| GpuError::Nccl { op: "NCCL", message: e.clone() })
}

/// Every symbol, in the order of [`Api`]'s fields.
const SYMBOLS: &[&str] = &[
    "ncclGetVersion",
    "ncclGetUniqueId",
    "ncclCommInitRank",
    "ncclCommInitAll",
    "ncclCommDestroy",
    "ncclCommGetAsyncError",
    "ncclGetErrorString",
    "ncclGroupStart",
    "ncclGroupEnd",
    "ncclSend",
    "ncclRecv",
    "ncclAllReduce",
];

fn load() -> std::result::Result<Library, String> {
    // NVLink SHARP off before NCCL reads its environment (at the first
    // communicator): warpmc never uses multicast objects.
    if std::env::var_os("NCCL_NVLS_ENABLE").is_none_or(|v| v != "0") {
        // SAFETY: setenv may race a getenv on another thread. The warpmc
        // binary sets the variable before any thread starts, so this runs
        // only for programs that use the library directly and did not; the
        // module's documentation asks them to (and NCCL, the variable's
        // reader, is not loaded yet).
        unsafe { std::env::set_var("NCCL_NVLS_ENABLE", "0") };
    }
    let (name, lib) = open_library(std::env::var_os("WARPMC_NCCL"))?;
    for s in SYMBOLS {
        // SAFETY: presence only; nothing is called here.
        if unsafe { lib.get::<*const c_void>(s.as_bytes()) }.is_err() {
            return Err(format!("{name} lacks {s}: NCCL 2.7 or newer is needed"));
        }
    }
    // SAFETY: each symbol is NCCL's C function of the type given (nccl.h);
    // `lib` is kept alive for the process below (leaked), so the pointers
    // stay valid.
    let api = unsafe {
        let get_version: unsafe extern "C" fn(*mut c_int) -> RawResult = *lib.get(b"ncclGetVersion").unwrap_unchecked();
        let mut version = 0;
        get_version(&mut version);
        Api {
            name,
            version,
            get_unique_id: *lib.get(b"ncclGetUniqueId").unwrap_unchecked(),
            comm_init_rank: *lib.get(b"ncclCommInitRank").unwrap_unchecked(),
            comm_init_all: *lib.get(b"ncclCommInitAll").unwrap_unchecked(),
            comm_destroy: *lib.get(b"ncclCommDestroy").unwrap_unchecked(),
            comm_get_async_error: *lib.get(b"ncclCommGetAsyncError").unwrap_unchecked(),
            get_error_string: *lib.get(b"ncclGetErrorString").unwrap_unchecked(),
            group_start: *lib.get(b"ncclGroupStart").unwrap_unchecked(),
            group_end: *lib.get(b"ncclGroupEnd").unwrap_unchecked(),
            send: *lib.get(b"ncclSend").unwrap_unchecked(),
            recv: *lib.get(b"ncclRecv").unwrap_unchecked(),
            all_reduce: *lib.get(b"ncclAllReduce").unwrap_unchecked(),
        }
    };
    std::mem::forget(lib);
    Ok(Library { api })
}

/// Names the dynamic loader is asked for.
const NAMES: &[&str] = &["libnccl.so.2", "libnccl.so"];

/// The library as `explicit` (`WARPMC_NCCL`'s value) names it, or found.
fn open_library(explicit: Option<std::ffi::OsString>) -> std::result::Result<(String, libloading::Library), String> {
    if let Some(v) = explicit.filter(|v| !v.is_empty()) {
        let p = PathBuf::from(&v);
        let file = if p.is_dir() { NAMES.iter().map(|n| p.join(n)).find(|f| f.exists()).unwrap_or(p) } else { p };
        // SAFETY: NCCL's initialisers have no preconditions (as below).
        return unsafe { libloading::Library::new(&file) }
            .map(|lib| (file.display().to_string(), lib))
            .map_err(|e| format!("WARPMC_NCCL={}: {e}", Path::new(&v).display()));
    }
    for name in NAMES {
        // SAFETY: as above.
        if let Ok(lib) = unsafe { libloading::Library::new(*name) } {
            return Ok((name.to_string(), lib));
        }
    }
    for dir in crate::loader::python_site_packages().into_iter().map(|r| r.join("nvidia/nccl/lib")) {
        for name in NAMES {
            let file = dir.join(name);
            if !file.exists() {
                continue;
            }
            // SAFETY: as above.
            if let Ok(lib) = unsafe { libloading::Library::new(&file) } {
                return Ok((file.display().to_string(), lib));
            }
        }
    }
    Err("the library (libnccl.so.2) was not found: install NCCL (e.g. `pip install nvidia-nccl-cu13`, or the \
         libnccl2 package), add its directory to LD_LIBRARY_PATH, or set WARPMC_NCCL to its path"
        .to_string())
}

impl Library {
    /// Where the library was loaded from.
    pub fn name(&self) -> &str {
        &self.api.name
    }

    /// NCCL's version as (major, minor, patch).
    pub fn version(&self) -> (u32, u32, u32) {
        decode_version(self.api.version)
    }

    /// A new communicator's name, for every process that will join it.
    pub fn unique_id(&self) -> Result<UniqueId> {
        let mut raw = RawId { internal: [0; 128] };
        // SAFETY: `raw` is the 128-byte ncclUniqueId NCCL fills.
        self.check("ncclGetUniqueId", unsafe { (self.api.get_unique_id)(&mut raw) })?;
        Ok(UniqueId(raw.internal.map(|c| c as u8)))
    }

    fn check(&self, op: &'static str, r: RawResult) -> Result<()> {
        if r == 0 {
            return Ok(());
        }
        // SAFETY: NCCL returns a static string for any code.
        let text = unsafe { (self.api.get_error_string)(r) };
        let text = if text.is_null() {
            format!("error {r}")
        } else {
            // SAFETY: non-null, NUL-terminated, static.
            unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned()
        };
        Err(GpuError::Nccl { op, message: format!("{text} (ncclResult_t {r})") })
    }

    /// Queues the operations `ops` issues as one group: NCCL starts them
    /// together, so sends and receives between the same peers cannot wait
    /// on each other.
    pub fn group<R>(&self, ops: impl FnOnce() -> Result<R>) -> Result<R> {
        // SAFETY: group calls take no arguments.
        self.check("ncclGroupStart", unsafe { (self.api.group_start)() })?;
        let r = ops();
        // Always close the group, even after an error inside it.
        // SAFETY: as above.
        let end = self.check("ncclGroupEnd", unsafe { (self.api.group_end)() });
        let r = r?;
        end.map(|_| r)
    }
}

/// (major, minor, patch) from `ncclGetVersion`'s number: major·10000 +
/// minor·100 + patch from NCCL 2.9 on, major·1000 + minor·100 + patch
/// before.
fn decode_version(v: c_int) -> (u32, u32, u32) {
    let v = v.max(0) as u32;
    if v >= 20900 { (v / 10000, v / 100 % 100, v % 100) } else { (v / 1000, v / 100 % 10, v % 100) }
}

/// Element types NCCL moves and sums.
pub trait NcclType: DeviceRepr {
    /// NCCL's `ncclDataType_t`.
    const CODE: c_int;
}

impl NcclType for u8 {
    const CODE: c_int = 1;
}
impl NcclType for u32 {
    const CODE: c_int = 3;
}
impl NcclType for u64 {
    const CODE: c_int = 5;
}
impl NcclType for f32 {
    const CODE: c_int = 7;
}
impl NcclType for f64 {
    const CODE: c_int = 8;
}

/// One GPU's member of an NCCL communicator: rank `rank` of `size`.
/// Operations are queued on the stream of the [`Gpu`] handle passed to
/// them, which must be a handle of the communicator's device.
pub struct Communicator {
    raw: RawComm,
    lib: &'static Library,
    rank: usize,
    size: usize,
    ordinal: usize,
}

// SAFETY: an NCCL communicator may be used from any thread, one call at a
// time (which `&self` methods on one thread, or a move, give).
unsafe impl Send for Communicator {}

impl std::fmt::Debug for Communicator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Communicator")
            .field("rank", &self.rank)
            .field("size", &self.size)
            .field("device", &self.ordinal)
            .finish()
    }
}

impl Communicator {
    /// Joins the communicator `id` as rank `rank` of `size`, on `gpu`'s
    /// device. Every rank must call it; it returns once all have.
    pub fn new(gpu: &Gpu, id: &UniqueId, rank: usize, size: usize) -> Result<Self> {
        let lib = library()?;
        if rank >= size {
            return Err(GpuError::InvalidArgument(format!("NCCL rank {rank} of {size}")));
        }
        gpu.ctx.bind_to_thread().during("cuCtxSetCurrent")?;
        let mut raw: RawComm = std::ptr::null_mut();
        let rid = RawId { internal: id.0.map(|b| b as c_char) };
        // SAFETY: `raw` receives the communicator; the id is 128 bytes; the
        // device's context is current on this thread, as NCCL requires.
        lib.check("ncclCommInitRank", unsafe {
            (lib.api.comm_init_rank)(&mut raw, size as c_int, rid, rank as c_int)
        })?;
        Ok(Communicator { raw, lib, rank, size, ordinal: gpu.info().ordinal })
    }

    /// One communicator over several GPUs of this process, rank i on
    /// `gpus[i]` (each a different device). Operations on them must be
    /// issued inside one [`Library::group`].
    pub fn for_devices(gpus: &[Gpu]) -> Result<Vec<Self>> {
        let lib = library()?;
        if gpus.is_empty() {
            return Ok(Vec::new());
        }
        let ordinals: Vec<c_int> = gpus.iter().map(|g| g.info().ordinal as c_int).collect();
        let mut raws: Vec<RawComm> = vec![std::ptr::null_mut(); gpus.len()];
        // SAFETY: `raws` holds one slot per device listed in `ordinals`.
        lib.check("ncclCommInitAll", unsafe {
            (lib.api.comm_init_all)(raws.as_mut_ptr(), gpus.len() as c_int, ordinals.as_ptr())
        })?;
        let size = gpus.len();
        Ok(raws
            .into_iter()
            .zip(gpus)
            .enumerate()
            .map(|(rank, (raw, g))| Communicator { raw, lib, rank, size, ordinal: g.info().ordinal })
            .collect())
    }

    /// This member's rank.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// Members of the communicator.
    pub fn size(&self) -> usize {
        self.size
    }

    /// The library, for [`Library::group`].
    pub fn library(&self) -> &'static Library {
        self.lib
    }

    fn stream(&self, on: &Gpu) -> Result<RawStream> {
        if on.info().ordinal != self.ordinal {
            return Err(GpuError::InvalidArgument(format!(
                "an NCCL operation of device {}'s communicator queued on device {}",
                self.ordinal,
                on.info().ordinal
            )));
        }
        Ok(on.stream.cu_stream() as RawStream)
    }

    fn peer(&self, peer: usize) -> Result<c_int> {
        if peer >= self.size {
            return Err(GpuError::InvalidArgument(format!("NCCL peer {peer} of a communicator of {}", self.size)));
        }
        Ok(peer as c_int)
    }

    /// Queues on `on`'s stream the send of `buf[range]` to rank `peer`,
    /// which must queue a matching [`recv`](Communicator::recv). Between
    /// two ranks, sends and receives match in the order they are queued.
    pub fn send<T: NcclType>(&self, on: &Gpu, buf: &DeviceBuffer<T>, range: Range<usize>, peer: usize) -> Result<()> {
        let (stream, peer) = (self.stream(on)?, self.peer(peer)?);
        let ptr = element_address(buf, &range)?;
        // SAFETY: `range` lies in `buf` (checked), a live allocation of this
        // device, read by NCCL on `stream`, after the work queued there
        // before and before the work queued after.
        self.lib.check("ncclSend", unsafe {
            (self.lib.api.send)(ptr as *const c_void, range.len(), T::CODE, peer, self.raw, stream)
        })
    }

    /// Queues on `on`'s stream the receive of `buf[range]` from rank `peer`.
    pub fn recv<T: NcclType>(
        &self,
        on: &Gpu,
        buf: &mut DeviceBuffer<T>,
        range: Range<usize>,
        peer: usize,
    ) -> Result<()> {
        let (stream, peer) = (self.stream(on)?, self.peer(peer)?);
        let ptr = element_address(buf, &range)?;
        // SAFETY: as for send; `buf` is borrowed mutably, and NCCL writes
        // only `range` of it, in stream order.
        self.lib.check("ncclRecv", unsafe {
            (self.lib.api.recv)(ptr as *mut c_void, range.len(), T::CODE, peer, self.raw, stream)
        })
    }

    /// Queues on `on`'s stream the sum, element by element, of `buf` over
    /// every rank, left in `buf` on every rank (all ranks pass buffers of
    /// one length). Integer sums are exact.
    pub fn all_reduce_sum<T: NcclType>(&self, on: &Gpu, buf: &mut DeviceBuffer<T>) -> Result<()> {
        let stream = self.stream(on)?;
        let ptr = buf.address();
        // SAFETY: in place over the whole of `buf`, in stream order; ncclSum
        // is reduction operator 0.
        self.lib.check("ncclAllReduce", unsafe {
            (self.lib.api.all_reduce)(ptr as *const c_void, ptr as *mut c_void, buf.len(), T::CODE, 0, self.raw, stream)
        })
    }

    /// An error NCCL met while running queued operations (a peer that died,
    /// a network failure), if any.
    pub fn async_error(&self) -> Result<()> {
        let mut r: RawResult = 0;
        // SAFETY: `raw` is a live communicator.
        self.lib.check("ncclCommGetAsyncError", unsafe { (self.lib.api.comm_get_async_error)(self.raw, &mut r) })?;
        self.lib.check("NCCL (a queued operation)", r)
    }
}

/// The device address of `buf[range]`, checked to lie in `buf`.
fn element_address<T: DeviceRepr>(buf: &DeviceBuffer<T>, range: &Range<usize>) -> Result<u64> {
    if range.start > range.end || range.end > buf.len() {
        return Err(GpuError::InvalidArgument(format!(
            "elements {}..{} of a device buffer of {}",
            range.start,
            range.end,
            buf.len()
        )));
    }
    Ok(buf.address() + (range.start * std::mem::size_of::<T>()) as u64)
}

impl Drop for Communicator {
    fn drop(&mut self) {
        // SAFETY: `raw` is live and dropped once; ncclCommDestroy waits for
        // the communicator's queued operations.
        let _ = unsafe { (self.lib.api.comm_destroy)(self.raw) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_named_library_that_is_not_there_is_one_line() {
        let e = open_library(Some("/nonexistent/libnccl.so.2".into())).expect_err("refused");
        assert!(e.starts_with("WARPMC_NCCL=/nonexistent/libnccl.so.2: "), "{e}");
        assert!(!e.contains('\n'), "{e}");
        // A directory without the library in it.
        let dir = std::env::temp_dir();
        let e = open_library(Some(dir.clone().into_os_string())).expect_err("refused");
        assert!(e.starts_with(&format!("WARPMC_NCCL={}: ", dir.display())), "{e}");
    }

    #[test]
    fn versions_read_in_both_of_nccls_encodings() {
        assert_eq!(decode_version(22803), (2, 28, 3));
        assert_eq!(decode_version(2804), (2, 8, 4));
        assert_eq!(decode_version(-1), (0, 0, 0));
    }
}
