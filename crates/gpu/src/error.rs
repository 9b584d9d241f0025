//! The one error type of warpmc-gpu.

#[cfg(feature = "cuda")]
use cudarc::driver::DriverError;

/// Everything that can go wrong between warpmc and a GPU.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GpuError {
    /// No usable CUDA device: no driver library, no NVRTC, no device, or a
    /// driver that refused to start. The text says which.
    #[error("no CUDA device ({0})")]
    NoDevice(String),
    /// A CUDA driver call failed.
    #[cfg(feature = "cuda")]
    #[error("CUDA error in {op}: {}", describe_driver_error(.source))]
    Driver {
        /// What was being done.
        op: &'static str,
        /// The driver's error code.
        #[source]
        source: DriverError,
    },
    /// NVRTC refused a kernel source; `log` is NVRTC's log, whose lines name
    /// the source and header files.
    #[error("NVRTC could not compile {name} for {target}:\n{log}")]
    Compile {
        /// Name of the kernel source file.
        name: String,
        /// Target architecture, e.g. `sm_90`.
        target: String,
        /// The compiler log.
        log: String,
    },
    /// An NVRTC call other than the compilation itself failed.
    #[error("NVRTC error in {op}: {message}")]
    Nvrtc {
        /// What was being done.
        op: &'static str,
        /// NVRTC's description of the error.
        message: String,
    },
    /// A kernel name that the module does not define.
    #[error("kernel `{kernel}` is not defined in {module} (is it declared extern \"C\" __global__?)")]
    MissingKernel {
        /// The requested kernel.
        kernel: String,
        /// The source file of the module.
        module: String,
    },
    /// NCCL could not be loaded (`op` is "NCCL"), or an NCCL call failed
    /// (`op` names it).
    #[error("{op}: {message}")]
    Nccl {
        /// The NCCL call, or "NCCL" for the library itself.
        op: &'static str,
        /// NCCL's description of the error, or why the library is missing.
        message: String,
    },
    /// A caller passed something that cannot work (sizes, shapes).
    #[error("{0}")]
    InvalidArgument(String),
}

/// `CUDA_ERROR_X (description)` for a driver error code.
#[cfg(feature = "cuda")]
pub fn describe_driver_error(e: &DriverError) -> String {
    let name = e.error_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|_| format!("{:?}", e.0));
    match e.error_string() {
        Ok(s) => format!("{name} ({})", s.to_string_lossy()),
        Err(_) => name,
    }
}

/// Attaches what was being done to a driver error.
#[cfg(feature = "cuda")]
pub(crate) trait DriverContext<T> {
    fn during(self, op: &'static str) -> Result<T, GpuError>;
}

#[cfg(feature = "cuda")]
impl<T> DriverContext<T> for Result<T, DriverError> {
    fn during(self, op: &'static str) -> Result<T, GpuError> {
        self.map_err(|source| GpuError::Driver { op, source })
    }
}

/// Result with [`GpuError`].
pub type Result<T, E = GpuError> = std::result::Result<T, E>;
