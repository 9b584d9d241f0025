//! Backends run the algorithm on a lattice they hold: the CPU backend on the
//! host's cores, the CUDA backend on a GPU. Both keep the lattice split by
//! colour (see [`layout`](crate::layout)) and give bit-identical states for
//! the same seed, chain and sweep numbers.

use crate::algorithm::AcceptanceTable;
use crate::error::Result;
use crate::lattice::{Census, Lattice};

/// Which backend to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendChoice {
    /// CUDA when a usable device exists, else the CPU.
    Auto,
    /// The host's cores (rayon).
    Cpu,
    /// A CUDA device; an error if there is none.
    Cuda,
}

impl std::str::FromStr for BackendChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(BackendChoice::Auto),
            "cpu" => Ok(BackendChoice::Cpu),
            "cuda" | "gpu" => Ok(BackendChoice::Cuda),
            _ => Err(format!("unknown backend '{s}' (expected auto, cpu or cuda)")),
        }
    }
}

/// A lattice held by a backend, and the operations a protocol needs.
pub trait Backend {
    /// "cpu" or "cuda".
    fn name(&self) -> &'static str;
    /// One line describing where it runs (CPU threads, GPU name).
    fn description(&self) -> String;
    /// Replaces the held lattice (its size and q must match the model the
    /// backend was made for).
    fn load(&mut self, lattice: &Lattice) -> Result<()>;
    /// A copy of the held lattice.
    fn lattice(&mut self) -> Result<Lattice>;
    /// Sets the acceptance table used by the following sweeps.
    fn set_table(&mut self, table: &AcceptanceTable) -> Result<()>;
    /// Runs sweeps `first`, `first + 1`, …, `first + count − 1` of the chain
    /// whose random numbers come from (`seed`, `stream`).
    fn sweeps(&mut self, seed: u64, stream: u64, first: u64, count: u64) -> Result<()>;
    /// Counts equal bonds and states of the held lattice (on the device for
    /// CUDA: only q + 1 integers come back).
    fn census(&mut self) -> Result<Census>;
    /// Waits for queued work (for timing).
    fn synchronize(&mut self) -> Result<()>;
}
