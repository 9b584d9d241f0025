//! Finding the CUDA driver and NVRTC libraries before cudarc touches them.
//!
//! cudarc loads libraries lazily and panics when a library or a symbol is
//! missing. warpmc must instead say "no CUDA device (why)" and go on with
//! the CPU, so every entry point of this crate first runs [`driver`] and
//! [`nvrtc`], which look for the same library names cudarc will try, in the
//! same order, and check that every symbol warpmc uses is there.
//!
//! NVRTC is often installed outside the loader's search path (a CUDA toolkit
//! under /usr/local/cuda, a pip wheel). When the plain names fail, we look in
//! the usual places and load the library by full path; the dynamic loader
//! then answers cudarc's later request by soname (`libnvrtc.so.13`) with the
//! copy already loaded.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Where a library was found.
#[derive(Clone, Debug)]
pub(crate) struct LoadedLib {
    /// The name or path it was loaded by.
    pub(crate) name: String,
}

/// Driver API entry points warpmc uses (through cudarc, with the
/// cuda-13000 bindings).
const DRIVER_SYMBOLS: &[&str] = &[
    "cuInit",
    "cuDriverGetVersion",
    "cuGetErrorName",
    "cuGetErrorString",
    "cuDeviceGetCount",
    "cuDeviceGet",
    "cuDeviceGetName",
    "cuDeviceGetAttribute",
    "cuDeviceTotalMem_v2",
    "cuDevicePrimaryCtxRetain",
    "cuDevicePrimaryCtxRelease_v2",
    "cuCtxSetCurrent",
    "cuCtxGetCurrent",
    "cuCtxSynchronize",
    "cuCtxGetStreamPriorityRange",
    "cuStreamCreateWithPriority",
    "cuStreamSynchronize",
    "cuMemAlloc_v2",
    "cuMemAllocAsync",
    "cuMemFree_v2",
    "cuMemGetInfo_v2",
    "cuMemFreeAsync",
    "cuMemcpyHtoDAsync_v2",
    "cuMemcpyDtoHAsync_v2",
    "cuMemcpyDtoDAsync_v2",
    "cuMemsetD8Async",
    "cuModuleLoadData",
    "cuModuleGetFunction",
    "cuModuleUnload",
    "cuLaunchKernel",
    "cuEventCreate",
    "cuEventRecord",
    "cuEventSynchronize",
    "cuEventElapsedTime_v2",
    "cuEventDestroy_v2",
];

/// NVRTC entry points warpmc uses.
const NVRTC_SYMBOLS: &[&str] = &[
    "nvrtcVersion",
    "nvrtcGetNumSupportedArchs",
    "nvrtcGetSupportedArchs",
    "nvrtcCreateProgram",
    "nvrtcCompileProgram",
    "nvrtcDestroyProgram",
    "nvrtcGetProgramLogSize",
    "nvrtcGetProgramLog",
    "nvrtcGetCUBINSize",
    "nvrtcGetCUBIN",
    "nvrtcGetPTXSize",
    "nvrtcGetPTX",
    "nvrtcGetErrorString",
];

/// The CUDA driver library, checked once per process.
pub(crate) fn driver() -> Result<&'static LoadedLib, String> {
    static DRIVER: OnceLock<Result<LoadedLib, String>> = OnceLock::new();
    DRIVER
        .get_or_init(|| {
            let candidates: Vec<String> =
                ["cuda", "nvcuda"].iter().flat_map(|l| cudarc::get_lib_name_candidates(l)).collect();
            let (name, lib) = first_loadable(&candidates).ok_or_else(|| {
                "the NVIDIA driver library libcuda.so was not found; install the NVIDIA driver".to_string()
            })?;
            check_symbols(&lib, DRIVER_SYMBOLS).map_err(|missing| {
                format!("{name} lacks {missing}: the NVIDIA driver is too old (CUDA 12.8 / R570 or newer is needed)")
            })?;
            Ok(LoadedLib { name })
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// The NVRTC library, found and checked once per process.
pub(crate) fn nvrtc() -> Result<&'static LoadedLib, String> {
    static NVRTC: OnceLock<Result<LoadedLib, String>> = OnceLock::new();
    NVRTC.get_or_init(find_nvrtc).as_ref().map_err(Clone::clone)
}

fn find_nvrtc() -> Result<LoadedLib, String> {
    let names = cudarc::get_lib_name_candidates("nvrtc");
    // 1. An explicit choice wins.
    if let Ok(path) = std::env::var("WARPMC_NVRTC") {
        return preload_by_path(Path::new(&path), &names).map_err(|e| format!("WARPMC_NVRTC={path}: {e}"));
    }
    // 2. Whatever the dynamic loader finds by name, as cudarc will.
    if let Some((name, lib)) = first_loadable(&names) {
        check_symbols(&lib, NVRTC_SYMBOLS).map_err(|m| format!("{name} lacks {m}: NVRTC is too old"))?;
        return Ok(LoadedLib { name });
    }
    // 3. The usual install locations, by full path.
    for dir in nvrtc_dirs() {
        for name in names.iter().filter(|n| n.starts_with("libnvrtc.so.")) {
            let path = dir.join(name);
            if path.exists() {
                return preload_by_path(&path, &names);
            }
        }
    }
    Err("NVRTC (libnvrtc.so.13 or .12) was not found: install the CUDA toolkit's NVRTC, add its lib64 \
         directory to LD_LIBRARY_PATH, or set WARPMC_NVRTC to the library's path"
        .to_string())
}

/// Loads NVRTC from a full path (and its builtins library from the same
/// directory), keeps both loaded for the life of the process, and checks
/// that cudarc's by-name lookup now finds them.
fn preload_by_path(path: &Path, names: &[String]) -> Result<LoadedLib, String> {
    let path = if path.is_dir() {
        names
            .iter()
            .map(|n| path.join(n))
            .find(|p| p.exists())
            .ok_or_else(|| format!("no libnvrtc.so.* in {}", path.display()))?
    } else {
        path.to_path_buf()
    };
    // NVRTC opens libnvrtc-builtins by name at compile time; load it first
    // from the same directory so that lookup is answered too.
    if let Some(dir) = path.parent()
        && let Ok(entries) = std::fs::read_dir(dir)
    {
        for e in entries.flatten() {
            let file = e.file_name().to_string_lossy().into_owned();
            if file.starts_with("libnvrtc-builtins.so.") {
                // SAFETY: loading NVIDIA's NVRTC builtins runs only its
                // own initialisers; the handle is kept for the process.
                if let Ok(lib) = unsafe { libloading::Library::new(e.path()) } {
                    std::mem::forget(lib);
                }
            }
        }
    }
    // SAFETY: as above, for NVRTC itself.
    let lib = unsafe { libloading::Library::new(&path) }.map_err(|e| format!("{}: {e}", path.display()))?;
    check_symbols(&lib, NVRTC_SYMBOLS).map_err(|m| format!("{} lacks {m}: NVRTC is too old", path.display()))?;
    std::mem::forget(lib);
    // cudarc opens by name; make sure one of its names now resolves.
    if first_loadable(names).is_none() {
        return Err(format!(
            "{} loaded, but its soname is none of {names:?}; add its directory to LD_LIBRARY_PATH",
            path.display()
        ));
    }
    Ok(LoadedLib { name: path.display().to_string() })
}

/// Directories where CUDA toolkits and NVIDIA's pip wheels put NVRTC.
fn nvrtc_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for var in ["CUDA_HOME", "CUDA_PATH", "CUDA_ROOT", "CUDA_TOOLKIT_ROOT_DIR"] {
        if let Ok(v) = std::env::var(var) {
            dirs.push(Path::new(&v).join("lib64"));
            dirs.push(Path::new(&v).join("lib"));
        }
    }
    dirs.push(PathBuf::from("/usr/local/cuda/lib64"));
    dirs.push(PathBuf::from("/usr/local/cuda/targets/x86_64-linux/lib"));
    // Versioned toolkits, newest first.
    if let Ok(entries) = std::fs::read_dir("/usr/local") {
        let mut versioned: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("cuda-")))
            .collect();
        versioned.sort();
        versioned.reverse();
        dirs.extend(versioned.into_iter().map(|p| p.join("lib64")));
    }
    dirs.push(PathBuf::from("/usr/lib/x86_64-linux-gnu"));
    dirs.push(PathBuf::from("/usr/lib/aarch64-linux-gnu"));
    // NVIDIA's wheels: site-packages/nvidia/{cuda_nvrtc,cu13,cu12}/lib.
    for root in python_site_packages() {
        for sub in ["nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib", "nvidia/cu12/lib"] {
            dirs.push(root.join(sub));
        }
    }
    dirs
}

/// `site-packages` and `dist-packages` of the Pythons a user may have put
/// NVIDIA's NVRTC wheel into: the system's, an active virtual or conda
/// environment, `pip install --user`, pyenv, and virtual environments
/// under /opt (such as /opt/torch/.venv).
pub(crate) fn python_site_packages() -> Vec<PathBuf> {
    let mut lib_dirs: Vec<PathBuf> = ["/usr/local/lib", "/usr/lib", "/opt"].iter().map(PathBuf::from).collect();
    for var in ["VIRTUAL_ENV", "CONDA_PREFIX"] {
        if let Some(v) = std::env::var_os(var).filter(|v| !v.is_empty()) {
            lib_dirs.push(Path::new(&v).join("lib"));
        }
    }
    if let Some(home) = std::env::var_os("HOME").filter(|v| !v.is_empty()) {
        let home = PathBuf::from(home);
        lib_dirs.push(home.join(".local/lib"));
        if let Ok(versions) = std::fs::read_dir(home.join(".pyenv/versions")) {
            lib_dirs.extend(versions.flatten().map(|v| v.path().join("lib")));
        }
    }
    if let Ok(entries) = std::fs::read_dir("/opt") {
        lib_dirs.extend(entries.flatten().map(|e| e.path().join(".venv/lib")));
    }
    let mut roots = Vec::new();
    for base in lib_dirs {
        let Ok(entries) = std::fs::read_dir(&base) else { continue };
        for e in entries.flatten() {
            if e.file_name().to_string_lossy().starts_with("python3") {
                roots.push(e.path().join("site-packages"));
                roots.push(e.path().join("dist-packages"));
            }
        }
    }
    roots
}

fn first_loadable(names: &[String]) -> Option<(String, libloading::Library)> {
    names.iter().find_map(|name| {
        // SAFETY: these are NVIDIA's driver/NVRTC libraries, whose
        // initialisers have no preconditions; cudarc loads the same names.
        unsafe { libloading::Library::new(name) }.ok().map(|lib| (name.clone(), lib))
    })
}

fn check_symbols(lib: &libloading::Library, symbols: &[&str]) -> Result<(), String> {
    for s in symbols {
        // SAFETY: we only test for presence; the symbol is never called here.
        let found = unsafe { lib.get::<*const std::ffi::c_void>(s.as_bytes()) }.is_ok();
        if !found {
            return Err(s.to_string());
        }
    }
    Ok(())
}
