//! Backend selection: the one place where `--backend auto|cpu|cuda` and
//! `WARPMC_DEVICE` become a device. Every command and library entry point
//! that can run on either backend resolves its choice here, so they agree
//! on which GPU is used and on what "auto" falls back to.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

#[cfg(feature = "cuda")]
use crate::Gpu;
use crate::error::{GpuError, Result};

/// Where work should run, as a user asks for it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendChoice {
    /// A CUDA device when one is usable, else the CPU (saying why).
    #[default]
    Auto,
    /// The host's cores.
    Cpu,
    /// A CUDA device; an error when there is none.
    Cuda,
}

impl BackendChoice {
    /// `auto`, `cpu` or `cuda`.
    pub fn name(self) -> &'static str {
        match self {
            BackendChoice::Auto => "auto",
            BackendChoice::Cpu => "cpu",
            BackendChoice::Cuda => "cuda",
        }
    }
}

impl fmt::Display for BackendChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for BackendChoice {
    type Err = GpuError;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "auto" => Ok(BackendChoice::Auto),
            "cpu" => Ok(BackendChoice::Cpu),
            "cuda" | "gpu" => Ok(BackendChoice::Cuda),
            _ => Err(GpuError::InvalidArgument(format!("unknown backend '{s}' (expected auto, cpu or cuda)"))),
        }
    }
}

/// What a [`BackendChoice`] resolved to.
#[derive(Clone, Debug)]
pub enum Device {
    /// The host's cores. `fallback` says why `auto` did not get a GPU
    /// (`None` when the CPU was asked for).
    Cpu {
        /// Why no GPU was used, in the words of "no CUDA device (…)".
        fallback: Option<String>,
    },
    /// An open CUDA device.
    #[cfg(feature = "cuda")]
    Cuda(Gpu),
}

impl Device {
    /// The CPU, asked for by name.
    pub const CPU: Device = Device::Cpu { fallback: None };

    /// `cpu` or `cuda`.
    pub fn name(&self) -> &'static str {
        match self {
            Device::Cpu { .. } => "cpu",
            #[cfg(feature = "cuda")]
            Device::Cuda(_) => "cuda",
        }
    }

    /// The GPU, when this is one.
    #[cfg(feature = "cuda")]
    pub fn gpu(&self) -> Option<&Gpu> {
        match self {
            Device::Cuda(gpu) => Some(gpu),
            Device::Cpu { .. } => None,
        }
    }

    /// Why `auto` fell back to the CPU, if it did.
    pub fn fallback(&self) -> Option<&str> {
        match self {
            Device::Cpu { fallback } => fallback.as_deref(),
            #[cfg(feature = "cuda")]
            Device::Cuda(_) => None,
        }
    }
}

/// The GPU ordinal `WARPMC_DEVICE` names (default 0).
pub fn device_ordinal() -> Result<usize> {
    match std::env::var("WARPMC_DEVICE") {
        Ok(s) if !s.trim().is_empty() => s
            .trim()
            .parse::<usize>()
            .map_err(|_| GpuError::InvalidArgument(format!("WARPMC_DEVICE={s} is not a device ordinal"))),
        _ => Ok(0),
    }
}

/// Resolves `choice`:
///
/// - `cpu`: the CPU;
/// - `cuda`: the GPU `WARPMC_DEVICE` names (device 0 by default), or the
///   reason there is none as an error;
/// - `auto`: the same GPU when it can be opened, otherwise the CPU with the
///   reason in [`Device::fallback`]. A `WARPMC_DEVICE` that is not an
///   ordinal is an error even here: it is a typo, not a missing GPU.
///
/// Built without the `cuda` feature, `auto` always gives the CPU and `cuda`
/// is an error.
///
/// ```
/// use warpmc_gpu::{BackendChoice, select};
/// let device = select(BackendChoice::Auto).unwrap();
/// if let Some(why) = device.fallback() {
///     println!("running on the CPU: {why}");
/// }
/// assert_eq!(select(BackendChoice::Cpu).unwrap().name(), "cpu");
/// ```
pub fn select(choice: BackendChoice) -> Result<Device> {
    if choice == BackendChoice::Cpu {
        return Ok(Device::CPU);
    }
    select_ordinal(choice, device_ordinal()?)
}

/// Resolves `choice` as [`select`] does, on GPU `ordinal` instead of the
/// one `WARPMC_DEVICE` names (for a process that is one of several on a
/// machine, each on its own GPU).
pub fn select_ordinal(choice: BackendChoice, ordinal: usize) -> Result<Device> {
    if choice == BackendChoice::Cpu {
        return Ok(Device::CPU);
    }
    match open(ordinal) {
        Ok(device) => Ok(device),
        Err(e @ GpuError::NoDevice(_)) if choice == BackendChoice::Auto => {
            Ok(Device::Cpu { fallback: Some(e.to_string()) })
        }
        Err(e) => Err(e),
    }
}

#[cfg(feature = "cuda")]
fn open(ordinal: usize) -> Result<Device> {
    Gpu::open(ordinal).map(Device::Cuda)
}

#[cfg(not(feature = "cuda"))]
fn open(_ordinal: usize) -> Result<Device> {
    Err(GpuError::NoDevice(crate::NO_CUDA_BUILD.into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choices_parse_and_print() {
        for c in [BackendChoice::Auto, BackendChoice::Cpu, BackendChoice::Cuda] {
            assert_eq!(c.name().parse::<BackendChoice>().unwrap(), c);
        }
        assert_eq!("gpu".parse::<BackendChoice>().unwrap(), BackendChoice::Cuda);
        let e = "tpu".parse::<BackendChoice>().unwrap_err().to_string();
        assert_eq!(e, "unknown backend 'tpu' (expected auto, cpu or cuda)");
    }

    #[test]
    fn cpu_is_always_available() {
        let d = select(BackendChoice::Cpu).unwrap();
        assert_eq!(d.name(), "cpu");
        assert_eq!(d.fallback(), None);
    }
}
