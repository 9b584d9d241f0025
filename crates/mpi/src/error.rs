//! The one error type of this crate.

/// What can go wrong when a run is split across processes.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MpiError {
    /// A parameter out of range.
    #[error("{0}")]
    InvalidInput(String),
    /// MPI could not be started, or was started already.
    #[error("MPI could not be initialised (MPI_Init_thread failed, or MPI was initialised before)")]
    Init,
    /// The run itself failed.
    #[error(transparent)]
    Potts(#[from] warpmc_potts::PottsError),
}

/// Shorthand for results of this crate.
pub type Result<T, E = MpiError> = std::result::Result<T, E>;
