//! What warpmc needs of the host besides its cores:
//!
//! - [`output`]: writing a result file without destroying what is at its
//!   path: regular files are replaced atomically (keeping their
//!   permissions, through symlinks), devices and FIFOs are written
//!   directly, and every write error (a full disk) is reported;
//! - [`memory`]: how much memory the process may still allocate (the
//!   system's available memory, a cgroup's limit, an address-space limit),
//!   so that sizes are checked before they are allocated.
//!
//! ```
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("results.csv");
//! warpmc_host::output::write_bytes(&path, b"T,energy\n1.0,-1.5\n")?;
//! assert_eq!(std::fs::read(&path)?, b"T,energy\n1.0,-1.5\n");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![deny(missing_docs)]

pub mod memory;
pub mod output;

pub use memory::{MemoryBudget, available_memory, check_allocation};
pub use output::{OutputError, check_writable, write, write_bytes};
