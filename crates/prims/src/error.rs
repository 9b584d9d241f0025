//! The error type of warpmc-prims.

use warpmc_gpu::GpuError;

/// What can go wrong in a primitive.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PrimsError {
    /// The GPU layer failed (no device, compilation, a driver call).
    #[error(transparent)]
    Gpu(#[from] GpuError),
    /// The arguments cannot work (mismatched lengths, offsets out of range,
    /// sizes beyond what a kernel indexes).
    #[error("{0}")]
    InvalidArgument(String),
    /// The host has not the memory a result needs (which it says).
    #[error("{0}")]
    OutOfHostMemory(String),
}

/// `Result` with [`PrimsError`].
pub type Result<T> = std::result::Result<T, PrimsError>;

/// An [`PrimsError::InvalidArgument`] unless `ok`.
pub(crate) fn ensure(ok: bool, message: impl FnOnce() -> String) -> Result<()> {
    if ok { Ok(()) } else { Err(PrimsError::InvalidArgument(message())) }
}
