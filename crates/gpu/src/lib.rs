//! A thin layer over [cudarc] for warpmc: the driver API and NVRTC, loaded
//! dynamically so that programs build and run on machines with no CUDA.
//!
//! - [`probe`] finds the driver, NVRTC and the devices and never panics:
//!   every problem becomes a reason, reported as "no CUDA device (reason)"
//!   by [`Gpu::open`].
//! - [`KernelSource`]: `.cu`/`.cuh` files embedded in the binary, compiled by
//!   NVRTC for the device's own architecture on first use, cached in memory
//!   and on disk ([`KernelCache`]); compiler errors carry NVRTC's log.
//! - [`DeviceBuffer`], [`Gpu::launch`], [`Gpu::start_timer`]: typed buffers,
//!   launches and event timing, every CUDA call checked, one error type
//!   ([`GpuError`]).
//!
//! # Examples
//!
//! ```
//! match warpmc_gpu::Gpu::open_default() {
//!     Ok(gpu) => println!("{} ({} SMs)", gpu.info().name, gpu.info().sm_count),
//!     Err(e) => println!("running on the CPU: {e}"),
//! }
//! ```

#![deny(missing_docs)]

mod buffer;
mod compile;
mod device;
mod error;
mod graph;
mod launch;
mod loader;
pub mod testing;
mod timing;

pub use buffer::DeviceBuffer;
pub use compile::{CacheStats, KernelCache, KernelSource, Target, compile};
pub use cudarc::driver::{DeviceRepr, ValidAsZeroBits};
pub use device::{DeviceInfo, DriverInfo, Gpu, NvrtcInfo, Probe, probe};
pub use error::{GpuError, Result, describe_driver_error};
pub use graph::Graph;
pub use launch::{Kernel, Launch, LaunchConfig, Module, grid_1d};
pub use timing::GpuTimer;
