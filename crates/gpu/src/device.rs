//! Device discovery and the [`Gpu`] handle.

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex};

use cudarc::driver::sys::CUdevice_attribute as Attr;
use cudarc::driver::{CudaContext, CudaModule, CudaStream, result as drv};
use serde::Serialize;

use crate::compile::{self, CacheStats, KernelCache, KernelSource, Target};
use crate::error::{DriverContext, GpuError, Result, describe_driver_error};
use crate::loader;

/// What a CUDA device is and can do.
#[derive(Clone, Debug, Serialize)]
pub struct DeviceInfo {
    /// Driver ordinal.
    pub ordinal: usize,
    /// Marketing name, e.g. "NVIDIA H200".
    pub name: String,
    /// Compute capability (major, minor); (9, 0) for Hopper.
    pub compute_capability: (u32, u32),
    /// Streaming multiprocessors.
    pub sm_count: u32,
    /// Device memory in bytes.
    pub total_memory: u64,
    /// L2 cache in bytes.
    pub l2_cache: u64,
    /// Largest shared memory a block can opt into, in bytes.
    pub max_shared_per_block_optin: u64,
    /// Resident threads per SM.
    pub max_threads_per_sm: u32,
    /// SM clock in kHz, where the driver still reports it.
    pub sm_clock_khz: Option<u32>,
    /// Memory bus width in bits.
    pub memory_bus_bits: Option<u32>,
    /// PCI bus id.
    pub pci_bus: Option<u32>,
    /// Whether the device takes cooperative launches (every block resident
    /// at once).
    pub cooperative_launch: bool,
}

impl DeviceInfo {
    /// `sm_90` style architecture name.
    pub fn arch(&self) -> String {
        format!("sm_{}{}", self.compute_capability.0, self.compute_capability.1)
    }
}

/// Device memory, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct MemoryInfo {
    /// Free now.
    pub free: u64,
    /// On the device.
    pub total: u64,
}

/// The CUDA driver as found on this machine.
#[derive(Clone, Debug, Serialize)]
pub struct DriverInfo {
    /// Library it was loaded from.
    pub library: String,
    /// CUDA version the driver supports, e.g. (13, 0).
    pub cuda_version: (u32, u32),
}

/// NVRTC as found on this machine.
#[derive(Clone, Debug, Serialize)]
pub struct NvrtcInfo {
    /// Library it was loaded from.
    pub library: String,
    /// Version, e.g. (13, 0).
    pub version: (u32, u32),
    /// Architectures it can compile to (52 = sm_52, ...).
    pub archs: Vec<u32>,
}

/// Everything discovery learned; failures are kept as readable reasons.
#[derive(Clone, Debug, Serialize)]
pub struct Probe {
    /// The driver, or why it is unusable.
    pub driver: Result<DriverInfo, String>,
    /// NVRTC, or why it is unusable.
    pub nvrtc: Result<NvrtcInfo, String>,
    /// The devices, or why they could not be listed.
    pub devices: Result<Vec<DeviceInfo>, String>,
}

impl Probe {
    /// `None` when kernels can run on device 0; otherwise why not, in the
    /// words of "no CUDA device (...)".
    pub fn unusable_reason(&self) -> Option<String> {
        if let Err(e) = &self.driver {
            return Some(e.clone());
        }
        match &self.devices {
            Err(e) => return Some(e.clone()),
            Ok(d) if d.is_empty() => return Some("the driver reports no devices".into()),
            Ok(_) => {}
        }
        if let Err(e) = &self.nvrtc {
            return Some(e.clone());
        }
        None
    }
}

/// Runs `f`, turning a panic inside cudarc (which should not happen after
/// the loader's checks) into an error instead of a crash.
fn guarded<T>(what: &str, f: impl FnOnce() -> std::result::Result<T, String>) -> std::result::Result<T, String> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            Err(format!("{what} failed inside the CUDA bindings: {msg}"))
        }
    }
}

/// Looks for the driver, NVRTC and devices. Never panics and never fails:
/// every problem becomes a reason string in the result.
pub fn probe() -> Probe {
    let driver = driver_info();
    let devices = match &driver {
        Ok(_) => guarded("listing devices", list_devices),
        Err(e) => Err(e.clone()),
    };
    let nvrtc = nvrtc_info();
    Probe { driver, nvrtc, devices }
}

fn driver_info() -> std::result::Result<DriverInfo, String> {
    let lib = loader::driver()?;
    guarded("starting the CUDA driver", || {
        drv::init().map_err(|e| format!("the CUDA driver did not start: {}", describe_driver_error(&e)))?;
        let mut v = 0i32;
        // SAFETY: cuDriverGetVersion writes one int through a valid pointer;
        // the symbol's presence was checked by the loader.
        unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut v) }
            .result()
            .map_err(|e| format!("cuDriverGetVersion: {}", describe_driver_error(&e)))?;
        Ok(DriverInfo { library: lib.name.clone(), cuda_version: ((v / 1000) as u32, ((v % 1000) / 10) as u32) })
    })
}

fn nvrtc_info() -> std::result::Result<NvrtcInfo, String> {
    let lib = loader::nvrtc()?;
    guarded("querying NVRTC", || {
        let version = compile::nvrtc_version().map_err(|e| e.to_string())?;
        let archs = compile::nvrtc_archs().map_err(|e| e.to_string())?;
        Ok(NvrtcInfo { library: lib.name.clone(), version, archs })
    })
}

fn list_devices() -> std::result::Result<Vec<DeviceInfo>, String> {
    let n = drv::device::get_count().map_err(|e| describe_driver_error(&e))?;
    (0..n as usize).map(|i| device_info(i).map_err(|e| e.to_string())).collect()
}

fn device_info(ordinal: usize) -> Result<DeviceInfo> {
    let dev = drv::device::get(ordinal as i32).during("cuDeviceGet")?;
    let attr = |a: Attr| -> Result<i32> {
        // SAFETY: `dev` is a valid device handle from cuDeviceGet.
        unsafe { drv::device::get_attribute(dev, a) }.during("cuDeviceGetAttribute")
    };
    let opt = |a: Attr| attr(a).ok().filter(|&v| v > 0).map(|v| v as u32);
    Ok(DeviceInfo {
        ordinal,
        name: drv::device::get_name(dev).during("cuDeviceGetName")?,
        compute_capability: (
            attr(Attr::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)? as u32,
            attr(Attr::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)? as u32,
        ),
        sm_count: attr(Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32,
        // SAFETY: as above.
        total_memory: unsafe { drv::device::total_mem(dev) }.during("cuDeviceTotalMem")? as u64,
        l2_cache: attr(Attr::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)? as u64,
        max_shared_per_block_optin: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)? as u64,
        max_threads_per_sm: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)? as u32,
        sm_clock_khz: opt(Attr::CU_DEVICE_ATTRIBUTE_CLOCK_RATE),
        memory_bus_bits: opt(Attr::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH),
        pci_bus: opt(Attr::CU_DEVICE_ATTRIBUTE_PCI_BUS_ID),
        cooperative_launch: opt(Attr::CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH).is_some(),
    })
}

/// An open CUDA device: context, stream, compiler target and module cache.
///
/// All work goes to one stream, so operations are ordered as issued.
/// Clones share the context, the stream and the module cache, so objects
/// that each hold a `Gpu` (a simulation and its baseline) order their work
/// on one stream.
#[derive(Clone)]
pub struct Gpu {
    pub(crate) ctx: Arc<CudaContext>,
    pub(crate) stream: Arc<CudaStream>,
    info: DeviceInfo,
    target: Target,
    nvrtc_version: (u32, u32),
    cache: KernelCache,
    modules: Arc<Mutex<HashMap<u128, Arc<CudaModule>>>>,
    stats: Arc<Mutex<CacheStats>>,
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gpu").field("info", &self.info).field("target", &self.target).finish_non_exhaustive()
    }
}

impl Gpu {
    /// Opens device `ordinal`, after checking that the driver, NVRTC and the
    /// device are all usable. Any problem is [`GpuError::NoDevice`] with the
    /// reason.
    pub fn open(ordinal: usize) -> Result<Self> {
        driver_info().map_err(GpuError::NoDevice)?;
        let nvrtc = nvrtc_info().map_err(GpuError::NoDevice)?;
        let n = guarded("counting devices", || drv::device::get_count().map_err(|e| describe_driver_error(&e)))
            .map_err(GpuError::NoDevice)? as usize;
        if n == 0 {
            return Err(GpuError::NoDevice("the driver reports no devices".into()));
        }
        if ordinal >= n {
            return Err(GpuError::InvalidArgument(format!(
                "there is no CUDA device {ordinal}: this machine has {n} (ordinals 0..{n})"
            )));
        }
        let info = device_info(ordinal)?;
        let ctx = guarded("creating a context", || {
            CudaContext::new(ordinal).map_err(|e| format!("could not create a context: {}", describe_driver_error(&e)))
        })
        .map_err(GpuError::NoDevice)?;
        // SAFETY: every operation of this Gpu (and its clones) goes to the one
        // stream created below, so cudarc's per-buffer events, which order
        // uses across streams, have nothing to order; without them a launch
        // is one driver call, and launches can be captured into graphs
        // (which the legacy default stream does not allow).
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.new_stream().during("cuStreamCreate")?;
        let target = Target::for_device(info.compute_capability, &nvrtc.archs)?;
        Ok(Gpu {
            ctx,
            stream,
            info,
            target,
            nvrtc_version: nvrtc.version,
            cache: KernelCache::from_env(),
            modules: Arc::new(Mutex::new(HashMap::new())),
            stats: Arc::new(Mutex::new(CacheStats::default())),
        })
    }

    /// Opens the device named by `WARPMC_DEVICE` (an ordinal), or device 0
    /// (see [`crate::select`], which also handles `auto` and `cpu`).
    pub fn open_default() -> Result<Self> {
        Self::open(crate::device_ordinal()?)
    }

    /// Uses `cache` for compiled kernels instead of the default location.
    pub fn with_kernel_cache(mut self, cache: KernelCache) -> Self {
        self.cache = cache;
        self
    }

    /// The device's properties.
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// What kernels are compiled to (`sm_90`, or PTX for a device newer than
    /// NVRTC).
    pub fn target(&self) -> &Target {
        &self.target
    }

    /// Counts of compilations and cache hits so far.
    pub fn cache_stats(&self) -> CacheStats {
        *self.stats.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Compiles (or fetches from the memory or disk cache) a kernel source
    /// and loads it on this device.
    pub fn module(&self, source: &KernelSource) -> Result<crate::Module> {
        let key = compile::cache_key(source, &self.target, self.nvrtc_version);
        // Held throughout, so two threads asking for the same source compile
        // it once.
        let mut modules = self.modules.lock().unwrap_or_else(|p| p.into_inner());
        let mut stats = self.stats.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(m) = modules.get(&key) {
            stats.memory_hits += 1;
            return Ok(crate::Module { inner: m.clone(), name: source.name().to_string() });
        }
        let load = |image: Vec<u8>| self.ctx.load_module(cudarc::nvrtc::Ptx::from_binary(image));
        let (image, from_disk) = compile::compiled_image(source, &self.target, key, &self.cache, &mut stats)?;
        let module = match load(image) {
            Ok(m) => {
                if from_disk {
                    stats.disk_hits += 1;
                }
                m
            }
            Err(_) if from_disk => {
                // A damaged or foreign cache file: compile afresh and
                // overwrite it.
                let image = compile::compile_and_store(source, &self.target, key, &self.cache, &mut stats)?;
                load(image).during("cuModuleLoadData")?
            }
            Err(e) => return Err(GpuError::Driver { op: "cuModuleLoadData", source: e }),
        };
        modules.insert(key, module.clone());
        Ok(crate::Module { inner: module, name: source.name().to_string() })
    }

    /// Waits for all work issued so far.
    pub fn synchronize(&self) -> Result<()> {
        self.stream.synchronize().during("cuStreamSynchronize")
    }

    /// Free and total device memory.
    pub fn memory_info(&self) -> Result<MemoryInfo> {
        let (free, total) = self.ctx.mem_get_info().during("cuMemGetInfo")?;
        Ok(MemoryInfo { free: free as u64, total: total as u64 })
    }
}
