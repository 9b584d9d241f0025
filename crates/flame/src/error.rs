//! The one error type of warpmc-flame.

use std::io;
use std::path::PathBuf;

use warpmc_host::memory::human_bytes;

/// Why a genome could not be read, a frame rendered or an image written.
///
/// Every message is one self-contained line: it names the file, the flame,
/// the xform and the attribute where there are such, and it already says
/// what the underlying I/O or GPU error said, so `source()` adds nothing
/// (except for `FlameError::Gpu`, which is the GPU layer's own error).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FlameError {
    /// A genome that cannot be read as flam3 reads it: malformed XML, a
    /// value out of range, an unknown element value, a missing palette.
    #[error("{0}")]
    Genome(String),
    /// A genome uses a variation (or an xform attribute) warpmc does not
    /// know, read with [`ParseOptions::strict`] (without it the attribute
    /// is dropped with a warning).
    ///
    /// [`ParseOptions::strict`]: crate::genome::ParseOptions::strict
    #[error("{0}")]
    UnknownVariation(String),
    /// flam3's palette file is not palettes: malformed XML, nested too
    /// deep, no readable `<palette>`.
    #[error("{0}")]
    Palette(String),
    /// flam3's palette file is missing, a directory or cannot be read.
    #[error("{text}")]
    PaletteFile {
        /// The whole message: the path, who named it, and why.
        text: String,
        /// The operating system's reason (`NotFound`, `IsADirectory`,
        /// `PermissionDenied`, …), for callers that map it (Python's
        /// `OSError` subclasses).
        kind: io::ErrorKind,
    },
    /// A setting of the genome or of the render is out of range.
    #[error("{0}")]
    Invalid(String),
    /// A frame, image or kernel does not fit in the host memory the
    /// process may still allocate (the system's available memory, a
    /// cgroup's or `ulimit -v`'s limit): the message says what needs how
    /// much, and how much there is.
    #[error("{0}")]
    OutOfHostMemory(String),
    /// A frame does not fit in the GPU's free memory, even in strips.
    #[error("{what} needs {} of GPU memory but only {} of {} are free", human_bytes(*.needed), human_bytes(*.free), human_bytes(*.total))]
    OutOfDeviceMemory {
        /// What was to be allocated.
        what: String,
        /// Bytes it needs on the device.
        needed: u64,
        /// Bytes free on the device.
        free: u64,
        /// Bytes the device has.
        total: u64,
    },
    /// A render was stopped through its cancel flag
    /// ([`RenderSettings::cancel`](crate::render::RenderSettings::cancel)).
    #[error("interrupted")]
    Interrupted,
    /// A file could not be read or written.
    #[error("{}: cannot {action}: {error}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What was being done: `read`, `write`, …
        action: &'static str,
        /// The operating system's error (its text is part of the message).
        error: io::Error,
    },
    /// An output file could not be written (see [`warpmc_host::output`]).
    #[error(transparent)]
    Output(#[from] warpmc_host::OutputError),
    /// A PNG that cannot be decoded, or a frame that cannot be encoded.
    #[error("{0}")]
    Png(String),
    /// Two images of different sizes cannot be compared.
    #[error("images differ in size: {}x{} and {}x{}", .first.0, .first.1, .second.0, .second.1)]
    SizeMismatch {
        /// Width and height of the first image.
        first: (u32, u32),
        /// Width and height of the second image.
        second: (u32, u32),
    },
    /// The GPU layer failed: no device, a driver or compiler error.
    #[cfg(feature = "cuda")]
    #[error(transparent)]
    Gpu(#[from] warpmc_gpu::GpuError),
}

/// `Result` with [`FlameError`].
pub type Result<T, E = FlameError> = std::result::Result<T, E>;

impl FlameError {
    /// A [`FlameError::Invalid`] with `message`.
    pub(crate) fn invalid(message: impl Into<String>) -> Self {
        FlameError::Invalid(message.into())
    }
}
