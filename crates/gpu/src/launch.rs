//! Kernels and their launches.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaModule, DeviceRepr, LaunchArgs, PushKernelArg};

use crate::Gpu;
use crate::buffer::DeviceBuffer;
use crate::error::{DriverContext, GpuError, Result};

pub use cudarc::driver::LaunchConfig;

/// A compiled module loaded on a device.
#[derive(Debug, Clone)]
pub struct Module {
    pub(crate) inner: Arc<CudaModule>,
    pub(crate) name: String,
}

impl Module {
    /// The `extern "C" __global__` function called `name`.
    pub fn kernel(&self, name: &str) -> Result<Kernel> {
        self.inner
            .load_function(name)
            .map(|func| Kernel { func, name: name.to_string() })
            .map_err(|_| GpuError::MissingKernel { kernel: name.to_string(), module: self.name.clone() })
    }
}

/// A kernel function, ready to launch.
#[derive(Debug, Clone)]
pub struct Kernel {
    func: CudaFunction,
    name: String,
}

impl Kernel {
    /// The kernel's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How many blocks of `block` threads (no dynamic shared memory) can be
    /// resident on one multiprocessor at once.
    pub fn max_resident_blocks_per_sm(&self, block: u32) -> Result<u32> {
        self.max_resident_blocks_per_sm_with_shared(block, 0)
    }

    /// How many blocks of `block` threads, each with `shared_bytes` of
    /// dynamic shared memory, can be resident on one multiprocessor at once.
    pub fn max_resident_blocks_per_sm_with_shared(&self, block: u32, shared_bytes: u32) -> Result<u32> {
        self.func
            .occupancy_max_active_blocks_per_multiprocessor(block, shared_bytes as usize, None)
            .during("cuOccupancyMaxActiveBlocks")
    }

    /// Allows launches with up to `bytes` of dynamic shared memory per
    /// block; above 48 KB the driver requires this opt-in.
    pub fn set_max_dynamic_shared_bytes(&self, bytes: u32) -> Result<()> {
        let attr = cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
        self.func.set_attribute(attr, bytes as i32).during("cuFuncSetAttribute")
    }
}

/// A one-dimensional launch: `n` threads in blocks of `block`, rounded up.
pub fn grid_1d(n: usize, block: u32) -> LaunchConfig {
    let blocks = n.div_ceil(block as usize).max(1);
    LaunchConfig { grid_dim: (blocks as u32, 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 }
}

/// Arguments of one launch, pushed in the order of the kernel's parameters.
#[derive(Debug)]
pub struct Launch<'a> {
    args: LaunchArgs<'a>,
    kernel: &'a Kernel,
}

impl Gpu {
    /// Starts a launch of `kernel` on this device's stream.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), warpmc_gpu::GpuError> {
    /// use warpmc_gpu::{Gpu, KernelSource, grid_1d};
    /// let gpu = Gpu::open(0)?;
    /// let src = KernelSource::new(
    ///     "fill.cu",
    ///     "extern \"C\" __global__ void fill(unsigned *o, unsigned n) {
    ///          unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    ///          if (i < n) o[i] = i;
    ///      }",
    /// );
    /// let fill = gpu.module(&src)?.kernel("fill")?;
    /// let n = 1000u32;
    /// let mut out = gpu.alloc_zeros::<u32>(n as usize)?;
    /// // SAFETY: `fill` takes (unsigned*, unsigned) and writes only o[0..n).
    /// unsafe { gpu.launch(&fill).buf_mut(&mut out).arg(&n).run(grid_1d(n as usize, 256))? };
    /// assert_eq!(gpu.download(&out)?[999], 999);
    /// # Ok(()) }
    /// ```
    pub fn launch<'a>(&'a self, kernel: &'a Kernel) -> Launch<'a> {
        Launch { args: self.stream.launch_builder(&kernel.func), kernel }
    }
}

impl<'a> Launch<'a> {
    /// A scalar argument (integers, floats, `#[repr(C)]` structs).
    pub fn arg<T: DeviceRepr>(mut self, value: &'a T) -> Self {
        self.args.arg(value);
        self
    }

    /// A read-only buffer argument (`const T*`).
    pub fn buf<T>(mut self, buf: &'a DeviceBuffer<T>) -> Self {
        self.args.arg(&buf.slice);
        self
    }

    /// A buffer the kernel writes (`T*`).
    pub fn buf_mut<T>(mut self, buf: &'a mut DeviceBuffer<T>) -> Self {
        self.args.arg(&mut buf.slice);
        self
    }

    /// Launches the kernel and checks that the launch was accepted. Errors
    /// inside the kernel surface at the next synchronising call.
    ///
    /// # Safety
    ///
    /// The pushed arguments must match the kernel's parameters in number,
    /// order and type, and the kernel must not access memory outside the
    /// buffers it is given for this configuration.
    pub unsafe fn run(mut self, config: LaunchConfig) -> Result<()> {
        if config.block_dim.0 * config.block_dim.1 * config.block_dim.2 == 0 {
            return Err(GpuError::InvalidArgument(format!("kernel {}: empty block", self.kernel.name)));
        }
        // SAFETY: forwarded to the caller (see # Safety).
        unsafe { self.args.launch(config) }.map(|_| ()).during("cuLaunchKernel")
    }

    /// Launches the kernel cooperatively: the driver starts every block at
    /// once or refuses the launch, so blocks may wait for one another (grid
    /// barriers) without deadlock.
    ///
    /// # Safety
    ///
    /// As [`Launch::run`].
    pub unsafe fn run_cooperative(mut self, config: LaunchConfig) -> Result<()> {
        if config.block_dim.0 * config.block_dim.1 * config.block_dim.2 == 0 {
            return Err(GpuError::InvalidArgument(format!("kernel {}: empty block", self.kernel.name)));
        }
        // SAFETY: forwarded to the caller (see # Safety).
        unsafe { self.args.launch_cooperative(config) }.map(|_| ()).during("cuLaunchCooperativeKernel")
    }
}
