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
//! - [`BorrowedBuffer`]: device memory another library (CuPy, PyTorch)
//!   allocated, used in place ([`Gpu::borrow_device_memory`]), with that
//!   library's streams ordered against warpmc's.
//! - [`nccl`]: NVIDIA's collective library, loaded at run time, for sends,
//!   receives and all-reduce between the GPUs of one or several processes.
//! - [`select`]: the one place where a [`BackendChoice`] (`auto`, `cpu`,
//!   `cuda`) and `WARPMC_DEVICE` become a [`Device`].
//!
//! Everything but backend selection needs the `cuda` feature (on by
//! default). Without it the crate has no cudarc in its dependency tree and
//! [`select`] always answers "CPU".
//!
//! # Examples
//!
//! ```
//! # #[cfg(feature = "cuda")] {
//! match warpmc_gpu::Gpu::open_default() {
//!     Ok(gpu) => println!("{} ({} SMs)", gpu.info().name, gpu.info().sm_count),
//!     Err(e) => println!("running on the CPU: {e}"),
//! }
//! # }
//! ```

#![deny(missing_docs)]

mod backend;
#[cfg(feature = "cuda")]
mod buffer;
#[cfg(feature = "cuda")]
mod compile;
#[cfg(feature = "cuda")]
mod device;
mod error;
#[cfg(feature = "cuda")]
mod foreign;
#[cfg(feature = "cuda")]
mod graph;
#[cfg(feature = "cuda")]
mod launch;
#[cfg(feature = "cuda")]
mod loader;
#[cfg(feature = "cuda")]
pub mod nccl;
#[cfg(feature = "cuda")]
mod stream;
#[cfg(feature = "cuda")]
mod timing;

pub use backend::{BackendChoice, Device, device_ordinal, select, select_ordinal};
#[cfg(feature = "cuda")]
pub use buffer::DeviceBuffer;
#[cfg(feature = "cuda")]
pub use compile::{CacheStats, KernelCache, KernelSource, Target, compile};
#[cfg(feature = "cuda")]
pub use cudarc::driver::{DeviceRepr, ValidAsZeroBits};
#[cfg(feature = "cuda")]
pub use device::{DeviceInfo, DriverInfo, Gpu, MemoryInfo, NvrtcInfo, Probe, probe};
#[cfg(feature = "cuda")]
pub use error::describe_driver_error;
pub use error::{GpuError, Result};
#[cfg(feature = "cuda")]
pub use foreign::{BorrowedBuffer, PointerInfo};
#[cfg(feature = "cuda")]
pub use graph::Graph;
#[cfg(feature = "cuda")]
pub use launch::{Kernel, Launch, LaunchConfig, Module, grid_1d};
#[cfg(feature = "cuda")]
pub use stream::PinnedBuffer;
#[cfg(feature = "cuda")]
pub use timing::GpuTimer;

/// The reason given for "no CUDA device" by a build without the `cuda`
/// feature.
pub const NO_CUDA_BUILD: &str = "this warpmc was built without CUDA support (the `cuda` feature)";
