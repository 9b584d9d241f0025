//! What the machine offers (`warpmc.devices()`), and the devices the
//! package's calls run on, opened once per process.

use std::collections::HashMap;
use std::sync::Mutex;

use pyo3::prelude::*;
use warpmc_gpu::{BackendChoice, Device, Gpu, GpuError, Target};

/// Every device as a list of JSON objects: one per usable CUDA device (the
/// fields of `warpmc devices --json`'s `devices`, with `backend`, `driver`,
/// `nvrtc` and `target` added), then the CPU (`threads`, and `cuda`: why
/// CUDA is not usable, or null).
#[pyfunction]
pub(crate) fn devices_json(py: Python<'_>) -> String {
    let (probe, threads) = py.detach(|| (warpmc_gpu::probe(), crate::fork::cpu_threads()));
    let reason = probe.unusable_reason();
    let mut list = Vec::new();
    if let (None, Ok(devices), Ok(driver), Ok(nvrtc)) = (&reason, &probe.devices, &probe.driver, &probe.nvrtc) {
        for d in devices {
            let mut v = serde_json::to_value(d).expect("device information serializes");
            v["backend"] = "cuda".into();
            v["driver"] = serde_json::json!(format!("{}.{}", driver.cuda_version.0, driver.cuda_version.1));
            v["nvrtc"] = serde_json::json!(format!("{}.{}", nvrtc.version.0, nvrtc.version.1));
            v["target"] = match Target::for_device(d.compute_capability, &nvrtc.archs) {
                Ok(t) => t.name().into(),
                Err(e) => e.to_string().into(),
            };
            list.push(v);
        }
    }
    list.push(serde_json::json!({ "backend": "cpu", "threads": threads, "cuda": reason }));
    serde_json::Value::Array(list).to_string()
}

/// Devices already opened: a GPU's context, stream and compiled kernels
/// are kept for the next call instead of being made again, and `auto`'s
/// fallback to the CPU is not probed again.
#[derive(Default)]
struct Opened {
    gpus: HashMap<usize, Gpu>,
    auto_fallback: Option<Device>,
}

static OPENED: Mutex<Option<Opened>> = Mutex::new(None);

/// The device `choice` selects (`warpmc_gpu::select`: `auto` falls back to
/// the CPU, `WARPMC_DEVICE` names the GPU), opened once per process.
pub(crate) fn select(choice: BackendChoice) -> Result<Device, GpuError> {
    if choice == BackendChoice::Cpu {
        return Ok(Device::CPU);
    }
    let ordinal = warpmc_gpu::device_ordinal()?;
    let mut opened = OPENED.lock().unwrap_or_else(|p| p.into_inner());
    let opened = opened.get_or_insert_with(Opened::default);
    if let Some(g) = opened.gpus.get(&ordinal) {
        return Ok(Device::Cuda(g.clone()));
    }
    if let (BackendChoice::Auto, Some(cpu)) = (choice, &opened.auto_fallback) {
        return Ok(cpu.clone());
    }
    let device = warpmc_gpu::select(choice)?;
    match &device {
        Device::Cuda(g) => {
            opened.gpus.insert(ordinal, g.clone());
        }
        cpu => opened.auto_fallback = Some(cpu.clone()),
    }
    Ok(device)
}

/// GPU `ordinal` (where another library's array lives), opened once per
/// process.
pub(crate) fn gpu(ordinal: usize) -> Result<Gpu, GpuError> {
    let mut opened = OPENED.lock().unwrap_or_else(|p| p.into_inner());
    let opened = opened.get_or_insert_with(Opened::default);
    if let Some(g) = opened.gpus.get(&ordinal) {
        return Ok(g.clone());
    }
    let g = Gpu::open(ordinal)?;
    opened.gpus.insert(ordinal, g.clone());
    Ok(g)
}
