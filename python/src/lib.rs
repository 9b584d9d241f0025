//! `warpmc._native`: the compiled half of the warpmc Python package. The
//! Python modules in `python/warpmc/` hold the public API (names,
//! defaults, docstrings, numpy/CuPy/PyTorch handling); this module runs the
//! library crates for them, with the GIL released during long work.

mod devices;
mod errors;
mod flame;
mod fork;
mod interop;
mod potts;
mod prims;
mod signals;

use pyo3::prelude::*;

/// The native module: everything is registered here and reached through
/// the Python package.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("commit", option_env!("WARPMC_COMMIT"))?;
    m.add("WarpmcError", m.py().get_type::<errors::WarpmcError>())?;
    m.add_function(wrap_pyfunction!(devices::devices_json, m)?)?;
    m.add_function(wrap_pyfunction!(fork::set_threads, m)?)?;
    potts::register(m)?;
    flame::register(m)?;
    prims::register(m)?;
    interop::register(m)?;
    Ok(())
}
