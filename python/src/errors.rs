//! Library errors as Python exceptions, with the messages the command line
//! prints: a wrong value is a `ValueError`, a file problem an `OSError`,
//! memory a `MemoryError`, a stopped run `KeyboardInterrupt`, and anything
//! else (no device, a driver or compiler failure) `warpmc.WarpmcError`.

use pyo3::exceptions::{
    PyFileExistsError, PyFileNotFoundError, PyInterruptedError, PyIsADirectoryError, PyKeyboardInterrupt,
    PyMemoryError, PyNotADirectoryError, PyOSError, PyPermissionError, PyRuntimeError, PyValueError,
};
use pyo3::{PyErr, create_exception};
use warpmc_flame::FlameError;
use warpmc_gpu::GpuError;
use warpmc_potts::PottsError;
use warpmc_prims::PrimsError;

create_exception!(
    warpmc,
    WarpmcError,
    PyRuntimeError,
    "A failure that is not the caller's input: no usable GPU, a driver or compiler error."
);

/// The error and its causes on one line, as `warpmc` prints them after
/// `error: `.
fn message(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text += &format!(": {c}");
        cause = c.source();
    }
    text
}

/// How a kind of failure reaches Python.
enum Kind {
    Value,
    /// A file problem: `OSError`, or its subclass for the cause
    /// (`FileNotFoundError`, `PermissionError`, …) where one is known.
    Os(Option<std::io::ErrorKind>),
    Memory,
    Interrupt,
    Other,
}

fn raise(kind: Kind, e: &dyn std::error::Error) -> PyErr {
    let text = message(e);
    match kind {
        Kind::Value => PyValueError::new_err(text),
        Kind::Os(cause) => os_error(cause, text),
        Kind::Memory => PyMemoryError::new_err(text),
        Kind::Interrupt => PyKeyboardInterrupt::new_err(text),
        Kind::Other => WarpmcError::new_err(text),
    }
}

/// The `OSError` subclass Python itself raises for a cause of this kind.
fn os_error(cause: Option<std::io::ErrorKind>, text: String) -> PyErr {
    use std::io::ErrorKind as K;
    match cause {
        Some(K::NotFound) => PyFileNotFoundError::new_err(text),
        Some(K::PermissionDenied) => PyPermissionError::new_err(text),
        Some(K::AlreadyExists) => PyFileExistsError::new_err(text),
        Some(K::IsADirectory) => PyIsADirectoryError::new_err(text),
        Some(K::NotADirectory) => PyNotADirectoryError::new_err(text),
        Some(K::Interrupted) => PyInterruptedError::new_err(text),
        _ => PyOSError::new_err(text),
    }
}

fn gpu_kind(e: &GpuError) -> Kind {
    match e {
        GpuError::InvalidArgument(_) => Kind::Value,
        _ => Kind::Other,
    }
}

/// A Potts error as a Python exception.
pub(crate) fn potts(e: PottsError) -> PyErr {
    let kind = match &e {
        PottsError::Io { cause, .. } | PottsError::Output(warpmc_host::OutputError { cause, .. }) => {
            Kind::Os(Some(cause.kind()))
        }
        PottsError::OutOfHostMemory(_) | PottsError::OutOfDeviceMemory { .. } => Kind::Memory,
        PottsError::Interrupted => Kind::Interrupt,
        PottsError::Gpu(g) => gpu_kind(g),
        // Parameters, configurations, checkpoints.
        _ => Kind::Value,
    };
    raise(kind, &e)
}

/// A flame error as a Python exception.
pub(crate) fn flame(e: FlameError) -> PyErr {
    let kind = match &e {
        // A palette file that is missing, unreadable or not palettes is a
        // file problem like any other.
        FlameError::Io { error: cause, .. } | FlameError::Output(warpmc_host::OutputError { cause, .. }) => {
            Kind::Os(Some(cause.kind()))
        }
        FlameError::PaletteFile { kind, .. } => Kind::Os(Some(*kind)),
        FlameError::Palette(_) => Kind::Os(None),
        FlameError::OutOfHostMemory(_) | FlameError::OutOfDeviceMemory { .. } => Kind::Memory,
        FlameError::Interrupted => Kind::Interrupt,
        FlameError::Gpu(g) => gpu_kind(g),
        _ => Kind::Value,
    };
    raise(kind, &e)
}

/// A primitives error as a Python exception.
pub(crate) fn prims(e: PrimsError) -> PyErr {
    let kind = match &e {
        PrimsError::Gpu(g) => gpu_kind(g),
        PrimsError::OutOfHostMemory(_) => Kind::Memory,
        _ => Kind::Value,
    };
    raise(kind, &e)
}

/// A GPU-layer error as a Python exception.
pub(crate) fn gpu(e: GpuError) -> PyErr {
    raise(gpu_kind(&e), &e)
}
