//! Run-time compilation of embedded kernel sources with NVRTC, and the
//! memory and disk caches in front of it.
//!
//! Kernel sources live in the repository as `.cu`/`.cuh` files and are
//! embedded with `include_str!`. They are compiled for the device's own
//! architecture (a cubin for `sm_90` on an H100/H200) the first time they are
//! used. The result is kept in memory per [`crate::Gpu`] and on disk under
//! the user's cache directory, keyed by a hash of the source, its headers,
//! the options, the target and the NVRTC version, so a changed kernel or a
//! new toolkit never picks up a stale binary.

use std::borrow::Cow;
use std::ffi::{CStr, CString, c_char};
use std::io::Write;
use std::path::{Path, PathBuf};

use cudarc::nvrtc::sys;
use serde::Serialize;

use crate::error::{GpuError, Result};

/// A CUDA C++ source and what it needs to compile: headers made available to
/// `#include "name"` and extra NVRTC options.
///
/// ```
/// use warpmc_gpu::KernelSource;
/// let src = KernelSource::new("axpy.cu", "extern \"C\" __global__ void axpy() {}")
///     .header("util.cuh", "#pragma once")
///     .option("-DBLOCK=256");
/// assert_eq!(src.name(), "axpy.cu");
/// ```
#[derive(Clone, Debug)]
pub struct KernelSource {
    name: Cow<'static, str>,
    code: Cow<'static, str>,
    headers: Vec<(Cow<'static, str>, Cow<'static, str>)>,
    options: Vec<Cow<'static, str>>,
}

impl KernelSource {
    /// A source file called `name` (used in compiler messages) with `code`.
    pub fn new(name: impl Into<Cow<'static, str>>, code: impl Into<Cow<'static, str>>) -> Self {
        KernelSource { name: name.into(), code: code.into(), headers: Vec::new(), options: Vec::new() }
    }

    /// Makes `code` available to `#include "name"`.
    pub fn header(mut self, name: impl Into<Cow<'static, str>>, code: impl Into<Cow<'static, str>>) -> Self {
        self.headers.push((name.into(), code.into()));
        self
    }

    /// Adds an NVRTC option such as `-DQ=9`.
    pub fn option(mut self, option: impl Into<Cow<'static, str>>) -> Self {
        self.options.push(option.into());
        self
    }

    /// The source's file name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// What NVRTC produces for a device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Target {
    /// Machine code for `sm_XY` (the normal case).
    Cubin {
        /// 10·major + minor, e.g. 90.
        arch: u32,
    },
    /// PTX for `compute_XY`, which the driver compiles when loading: used
    /// when the device is newer than every architecture NVRTC knows.
    Ptx {
        /// 10·major + minor.
        arch: u32,
    },
}

impl Target {
    /// The best target for a device of compute capability `cc` given the
    /// architectures NVRTC supports.
    pub fn for_device(cc: (u32, u32), nvrtc_archs: &[u32]) -> Result<Self> {
        let want = cc.0 * 10 + cc.1;
        if nvrtc_archs.contains(&want) {
            return Ok(Target::Cubin { arch: want });
        }
        match nvrtc_archs.iter().copied().filter(|&a| a <= want).max() {
            Some(arch) => Ok(Target::Ptx { arch }),
            None => Err(GpuError::NoDevice(format!(
                "NVRTC supports none of the architectures up to sm_{want} (it knows {nvrtc_archs:?}); use an older CUDA toolkit"
            ))),
        }
    }

    /// The NVRTC option selecting this target.
    fn option(&self) -> String {
        match self {
            Target::Cubin { arch } => format!("--gpu-architecture=sm_{arch}"),
            Target::Ptx { arch } => format!("--gpu-architecture=compute_{arch}"),
        }
    }

    /// `sm_90` or `compute_90`.
    pub fn name(&self) -> String {
        match self {
            Target::Cubin { arch } => format!("sm_{arch}"),
            Target::Ptx { arch } => format!("compute_{arch}"),
        }
    }

    fn extension(&self) -> &'static str {
        match self {
            Target::Cubin { .. } => "cubin",
            Target::Ptx { .. } => "ptx",
        }
    }
}

/// Where compiled kernels are kept between runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KernelCache {
    /// In this directory (created on first use).
    Disk(PathBuf),
    /// Nowhere: compile once per process.
    MemoryOnly,
}

impl KernelCache {
    /// `WARPMC_KERNEL_CACHE=off` disables the disk cache; `WARPMC_CACHE_DIR`
    /// moves it; otherwise `$XDG_CACHE_HOME/warpmc/kernels` or
    /// `~/.cache/warpmc/kernels`.
    pub fn from_env() -> Self {
        let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
        if let Some(v) = var("WARPMC_KERNEL_CACHE")
            && matches!(v.to_string_lossy().as_ref(), "off" | "0" | "false" | "no")
        {
            return KernelCache::MemoryOnly;
        }
        if let Some(dir) = var("WARPMC_CACHE_DIR") {
            return KernelCache::Disk(PathBuf::from(dir));
        }
        if let Some(xdg) = var("XDG_CACHE_HOME") {
            return KernelCache::Disk(PathBuf::from(xdg).join("warpmc/kernels"));
        }
        match var("HOME") {
            Some(home) => KernelCache::Disk(PathBuf::from(home).join(".cache/warpmc/kernels")),
            None => KernelCache::MemoryOnly,
        }
    }
}

/// How modules were obtained so far by one [`crate::Gpu`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CacheStats {
    /// Sources compiled by NVRTC.
    pub compiles: u64,
    /// Modules found already loaded in this process.
    pub memory_hits: u64,
    /// Compiled images read from the disk cache.
    pub disk_hits: u64,
    /// Failed attempts to write the disk cache (the run goes on).
    pub disk_write_errors: u64,
}

/// 128-bit FNV-1a over length-prefixed fields.
struct Fnv128(u128);

impl Fnv128 {
    const OFFSET: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    const PRIME: u128 = 0x0000_0000_0100_0000_0000_0000_0000_013b;

    fn field(&mut self, bytes: &[u8]) {
        for &b in (bytes.len() as u64).to_le_bytes().iter().chain(bytes) {
            self.0 ^= u128::from(b);
            self.0 = self.0.wrapping_mul(Self::PRIME);
        }
    }
}

/// The cache key of a source compiled for `target` by NVRTC `nvrtc_version`.
pub(crate) fn cache_key(src: &KernelSource, target: &Target, nvrtc_version: (u32, u32)) -> u128 {
    let mut h = Fnv128(Fnv128::OFFSET);
    h.field(b"warpmc-kernel-cache-v1");
    h.field(src.name.as_bytes());
    h.field(src.code.as_bytes());
    for (n, c) in &src.headers {
        h.field(n.as_bytes());
        h.field(c.as_bytes());
    }
    for o in &src.options {
        h.field(o.as_bytes());
    }
    h.field(target.name().as_bytes());
    h.field(format!("nvrtc {}.{}", nvrtc_version.0, nvrtc_version.1).as_bytes());
    h.0
}

fn cache_path(dir: &Path, src: &KernelSource, target: &Target, key: u128) -> PathBuf {
    let stem: String =
        src.name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect();
    dir.join(format!("{stem}-{key:032x}.{}", target.extension()))
}

/// The compiled image for `src`: from the disk cache if there, else compiled
/// (and stored). The flag says whether it came from disk.
pub(crate) fn compiled_image(
    src: &KernelSource,
    target: &Target,
    key: u128,
    cache: &KernelCache,
    stats: &mut CacheStats,
) -> Result<(Vec<u8>, bool)> {
    if let KernelCache::Disk(dir) = cache
        && let Ok(bytes) = std::fs::read(cache_path(dir, src, target, key))
        && !bytes.is_empty()
    {
        return Ok((bytes, true));
    }
    Ok((compile_and_store(src, target, key, cache, stats)?, false))
}

/// Compiles `src` and writes the image to the disk cache, if any.
pub(crate) fn compile_and_store(
    src: &KernelSource,
    target: &Target,
    key: u128,
    cache: &KernelCache,
    stats: &mut CacheStats,
) -> Result<Vec<u8>> {
    let image = compile(src, target)?;
    stats.compiles += 1;
    if let KernelCache::Disk(dir) = cache
        && store(dir, &cache_path(dir, src, target, key), &image).is_err()
    {
        stats.disk_write_errors += 1;
    }
    Ok(image)
}

/// Writes via a temporary file and a rename, so concurrent runs and crashes
/// never leave a torn cache entry.
fn store(dir: &Path, path: &Path, image: &[u8]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(image)?;
    }
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

fn nvrtc_message(r: sys::nvrtcResult) -> String {
    // SAFETY: nvrtcGetErrorString returns a static NUL-terminated string for
    // any result code.
    let p = unsafe { sys::nvrtcGetErrorString(r) };
    if p.is_null() {
        format!("{r:?}")
    } else {
        // SAFETY: non-null, static, NUL-terminated (above).
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

fn check(op: &'static str, r: sys::nvrtcResult) -> Result<()> {
    r.result().map_err(|_| GpuError::Nvrtc { op, message: nvrtc_message(r) })
}

/// NVRTC's version, e.g. (13, 0). The loader must have found NVRTC.
pub(crate) fn nvrtc_version() -> Result<(u32, u32)> {
    let (mut major, mut minor) = (0i32, 0i32);
    // SAFETY: two valid out-pointers.
    check("nvrtcVersion", unsafe { sys::nvrtcVersion(&mut major, &mut minor) })?;
    Ok((major as u32, minor as u32))
}

/// Architectures NVRTC can target (e.g. 75, 80, 86, 89, 90, 100, ...).
pub(crate) fn nvrtc_archs() -> Result<Vec<u32>> {
    let mut n = 0i32;
    // SAFETY: valid out-pointer.
    check("nvrtcGetNumSupportedArchs", unsafe { sys::nvrtcGetNumSupportedArchs(&mut n) })?;
    let mut archs = vec![0i32; n.max(0) as usize];
    // SAFETY: the buffer has room for the n entries NVRTC reported.
    check("nvrtcGetSupportedArchs", unsafe { sys::nvrtcGetSupportedArchs(archs.as_mut_ptr()) })?;
    Ok(archs.into_iter().map(|a| a as u32).collect())
}

/// Destroys an NVRTC program when dropped.
struct Program(sys::nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: the program was created by nvrtcCreateProgram and is
        // destroyed exactly once, here.
        unsafe {
            let _ = sys::nvrtcDestroyProgram(&mut self.0);
        }
    }
}

fn cstring(what: &str, s: &str) -> Result<CString> {
    CString::new(s).map_err(|_| GpuError::InvalidArgument(format!("{what} contains a NUL byte")))
}

/// Compiles `src` for `target` with NVRTC, returning a cubin or a
/// NUL-terminated PTX image ready for `cuModuleLoadData`.
pub fn compile(src: &KernelSource, target: &Target) -> Result<Vec<u8>> {
    crate::loader::nvrtc().map_err(GpuError::NoDevice)?;
    let code = cstring(&src.name, &src.code)?;
    let name = cstring("kernel name", &src.name)?;
    let header_codes = src.headers.iter().map(|(n, c)| cstring(n, c)).collect::<Result<Vec<_>>>()?;
    let header_names = src.headers.iter().map(|(n, _)| cstring("header name", n)).collect::<Result<Vec<_>>>()?;
    let code_ptrs: Vec<*const c_char> = header_codes.iter().map(|c| c.as_ptr()).collect();
    let name_ptrs: Vec<*const c_char> = header_names.iter().map(|c| c.as_ptr()).collect();

    let mut options = vec![target.option(), "-std=c++17".to_string(), "-DWARPMC_NVRTC=1".to_string()];
    options.extend(src.options.iter().map(|o| o.to_string()));
    let options = options.iter().map(|o| cstring("option", o)).collect::<Result<Vec<_>>>()?;
    let option_ptrs: Vec<*const c_char> = options.iter().map(|c| c.as_ptr()).collect();

    let mut raw: sys::nvrtcProgram = std::ptr::null_mut();
    // SAFETY: all strings are NUL-terminated and outlive the program; the
    // pointer arrays have the stated lengths.
    check("nvrtcCreateProgram", unsafe {
        sys::nvrtcCreateProgram(
            &mut raw,
            code.as_ptr(),
            name.as_ptr(),
            code_ptrs.len() as i32,
            code_ptrs.as_ptr(),
            name_ptrs.as_ptr(),
        )
    })?;
    let prog = Program(raw);

    // SAFETY: valid program and option array.
    let compiled = unsafe { sys::nvrtcCompileProgram(prog.0, option_ptrs.len() as i32, option_ptrs.as_ptr()) };
    if compiled != sys::nvrtcResult::NVRTC_SUCCESS {
        let log = program_log(&prog).unwrap_or_else(|e| e.to_string());
        let log = if log.trim().is_empty() { nvrtc_message(compiled) } else { log };
        return Err(GpuError::Compile { name: src.name.to_string(), target: target.name(), log });
    }

    let mut size = 0usize;
    let mut image;
    match target {
        Target::Cubin { .. } => {
            // SAFETY: valid program, out-pointer.
            check("nvrtcGetCUBINSize", unsafe { sys::nvrtcGetCUBINSize(prog.0, &mut size) })?;
            image = vec![0u8; size];
            // SAFETY: buffer of the size NVRTC reported.
            check("nvrtcGetCUBIN", unsafe { sys::nvrtcGetCUBIN(prog.0, image.as_mut_ptr().cast()) })?;
        }
        Target::Ptx { .. } => {
            // SAFETY: as above; the PTX size includes the terminating NUL.
            check("nvrtcGetPTXSize", unsafe { sys::nvrtcGetPTXSize(prog.0, &mut size) })?;
            image = vec![0u8; size];
            // SAFETY: buffer of the size NVRTC reported.
            check("nvrtcGetPTX", unsafe { sys::nvrtcGetPTX(prog.0, image.as_mut_ptr().cast()) })?;
        }
    }
    Ok(image)
}

fn program_log(prog: &Program) -> Result<String> {
    let mut size = 0usize;
    // SAFETY: valid program, out-pointer.
    check("nvrtcGetProgramLogSize", unsafe { sys::nvrtcGetProgramLogSize(prog.0, &mut size) })?;
    let mut buf = vec![0u8; size.max(1)];
    // SAFETY: buffer of the size NVRTC reported (at least 1 byte).
    check("nvrtcGetProgramLog", unsafe { sys::nvrtcGetProgramLog(prog.0, buf.as_mut_ptr().cast()) })?;
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    Ok(String::from_utf8_lossy(&buf[..end]).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_changes_with_every_input() {
        let base = KernelSource::new("a.cu", "x").header("h.cuh", "y").option("-DZ");
        let t = Target::Cubin { arch: 90 };
        let k = cache_key(&base, &t, (13, 0));
        assert_eq!(k, cache_key(&base.clone(), &t, (13, 0)));
        assert_ne!(k, cache_key(&KernelSource::new("b.cu", "x").header("h.cuh", "y").option("-DZ"), &t, (13, 0)));
        assert_ne!(k, cache_key(&KernelSource::new("a.cu", "x ").header("h.cuh", "y").option("-DZ"), &t, (13, 0)));
        assert_ne!(k, cache_key(&KernelSource::new("a.cu", "x").header("h.cuh", "y2").option("-DZ"), &t, (13, 0)));
        assert_ne!(k, cache_key(&KernelSource::new("a.cu", "x").header("h.cuh", "y").option("-DW"), &t, (13, 0)));
        assert_ne!(k, cache_key(&base, &Target::Cubin { arch: 89 }, (13, 0)));
        assert_ne!(k, cache_key(&base, &Target::Ptx { arch: 90 }, (13, 0)));
        assert_ne!(k, cache_key(&base, &t, (12, 8)));
        // Field boundaries matter: moving text between fields changes the key.
        let a = KernelSource::new("ab", "c");
        let b = KernelSource::new("a", "bc");
        assert_ne!(cache_key(&a, &t, (13, 0)), cache_key(&b, &t, (13, 0)));
    }

    #[test]
    fn target_prefers_cubin_and_falls_back_to_ptx() {
        let archs = [75, 80, 86, 89, 90, 100, 120];
        assert_eq!(Target::for_device((9, 0), &archs).unwrap(), Target::Cubin { arch: 90 });
        assert_eq!(Target::for_device((12, 1), &archs).unwrap(), Target::Ptx { arch: 120 });
        assert_eq!(Target::for_device((8, 7), &archs).unwrap(), Target::Ptx { arch: 86 });
        assert!(matches!(Target::for_device((6, 1), &archs), Err(GpuError::NoDevice(_))));
    }

    #[test]
    fn cache_files_are_written_atomically_and_named_by_key() {
        let dir = warpmc_testkit::scratch_dir("cache-test");
        let src = KernelSource::new("my kernel.cu", "x");
        let t = Target::Cubin { arch: 90 };
        let path = cache_path(&dir, &src, &t, 0xabc);
        assert!(path.file_name().unwrap().to_string_lossy().starts_with("my_kernel_cu-"));
        store(&dir, &path, b"image").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"image");
        let leftovers: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().filter(|e| e.path() != path).collect();
        assert!(leftovers.is_empty(), "temporary files left behind: {leftovers:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
