//! The one error type of warpmc-bench.

/// Why a benchmark could not run.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// The GPU layer failed (no device, a compile or driver error).
    #[error(transparent)]
    Gpu(#[from] warpmc_gpu::GpuError),
    /// A primitive refused its input or failed.
    #[error(transparent)]
    Prims(#[from] warpmc_prims::PrimsError),
    /// The Potts library refused a model or failed.
    #[error(transparent)]
    Potts(#[from] warpmc_potts::PottsError),
    /// The flame renderer failed.
    #[error(transparent)]
    Flame(#[from] warpmc_flame::FlameError),
    /// A benchmark parameter out of range, or a result that failed its
    /// check against the CPU.
    #[error("{0}")]
    Invalid(String),
}

/// `Result` with [`BenchError`].
pub type Result<T, E = BenchError> = std::result::Result<T, E>;

/// A [`BenchError::Invalid`] unless `ok`.
pub(crate) fn ensure(ok: bool, message: impl FnOnce() -> String) -> Result<()> {
    if ok { Ok(()) } else { Err(BenchError::Invalid(message())) }
}
