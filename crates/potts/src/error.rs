//! The one error type of this crate.

use std::path::PathBuf;

/// Everything that can go wrong in a Potts run, each variant reading as one
/// clear line.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PottsError {
    /// A parameter out of range (q, sizes, temperatures, counts, …).
    #[error("{0}")]
    InvalidInput(String),
    /// A required parameter was not given: its configuration key (`q`,
    /// `size`, `temp`).
    #[error("missing {0}")]
    Missing(&'static str),
    /// A configuration file that could not be understood.
    #[error("{path}: {message}")]
    Config {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// Checkpoint bytes that cannot be continued: damaged, truncated, from
    /// another version, or inconsistent.
    #[error("not a usable checkpoint: {0}")]
    BadCheckpoint(String),
    /// A checkpoint file that is damaged, truncated or from another version.
    #[error("checkpoint {path}: {message}")]
    Checkpoint {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// Reading or writing a file failed. The message names the file and
    /// the cause; the cause is not repeated as an error source.
    #[error("{path}: {cause}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        cause: std::io::Error,
    },
    /// An output file could not be written.
    #[error(transparent)]
    Output(#[from] warpmc_host::OutputError),
    /// The run does not fit in the memory the process may still allocate
    /// (the system's available memory, a cgroup's or `ulimit -v`'s limit).
    #[error("{0}")]
    OutOfHostMemory(String),
    /// The lattice does not fit in the GPU's free memory.
    #[error("the lattice needs {needed} bytes of GPU memory but only {free} of {total} are free")]
    OutOfDeviceMemory {
        /// Bytes the run needs on the device.
        needed: u64,
        /// Bytes free on the device.
        free: u64,
        /// Bytes the device has.
        total: u64,
    },
    /// The GPU layer failed (no device, compile error, driver error).
    #[error(transparent)]
    Gpu(#[from] warpmc_gpu::GpuError),
    /// The run was interrupted (Ctrl-C); a checkpoint was written if asked.
    #[error("interrupted")]
    Interrupted,
}

impl PottsError {
    /// An [`PottsError::Io`] for `path`.
    pub fn io(path: impl Into<PathBuf>, cause: std::io::Error) -> Self {
        PottsError::Io { path: path.into(), cause }
    }
}

/// Shorthand for results of this crate.
pub type Result<T, E = PottsError> = std::result::Result<T, E>;
