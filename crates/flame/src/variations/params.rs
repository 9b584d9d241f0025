//! Fractorium's rules for reading a variation parameter (its
//! `ParamWithName::Set`): a value is clamped to the parameter's range where
//! it has one, integer parameters are rounded, nonzero ones moved off zero,
//! cyclic ones wrapped. The plugin variations apply them when they are
//! prepared, so the CPU and the GPU read the same values.
//!
//! One simplification: Fractorium clamps every parameter to the finite
//! doubles, so an infinite value becomes ±`f64::MAX`; here ranges are open
//! at infinity and an infinite value stays infinite, as the GPU's float
//! build (whose parameters cannot hold `f64::MAX`) reads it.

use super::c_int;

/// Fractorium's `EPS`: the machine epsilon of its arithmetic (f64 here).
pub(crate) const EPS: f64 = f64::EPSILON;

/// `max(min(v, hi), lo)` as C++'s `std::min`/`std::max` compute it (NaN
/// stays NaN).
pub(crate) fn real(v: f64, lo: f64, hi: f64) -> f64 {
    let m = if hi < v { hi } else { v };
    if m < lo { lo } else { m }
}

/// A cyclic parameter wrapped into `[lo, hi]` (NaN and infinities give NaN).
pub(crate) fn cyclic(v: f64, lo: f64, hi: f64) -> f64 {
    if v > hi {
        lo + (v - lo) % (hi - lo)
    } else if v < lo {
        hi - (hi - v) % (hi - lo)
    } else {
        v
    }
}

/// An integer parameter: rounded half up, clamped to `[lo, hi]` (NaN to
/// `lo`, as x86 converts it to the lowest integer first).
pub(crate) fn integer(v: f64, lo: f64, hi: f64) -> f64 {
    let r = (v + 0.5).floor();
    let r = if r.is_nan() { lo } else { real(r, lo, hi) };
    f64::from(c_int(r))
}

/// A nonzero parameter: clamped, and moved to `±EPS` within 10⁻⁶ of zero.
pub(crate) fn nonzero(v: f64, lo: f64, hi: f64) -> f64 {
    let d = real(v, lo, hi);
    if d.abs() < 1e-6 { if d < 0.0 { -EPS } else { EPS } } else { d }
}

/// A nonzero integer parameter: rounded and clamped, then ±1 for 0.
pub(crate) fn integer_nonzero(v: f64, lo: f64, hi: f64) -> f64 {
    let i = integer(v, lo, hi);
    if i == 0.0 { if v < 0.0 { -1.0 } else { 1.0 } } else { i }
}

/// Fractorium's `Zeps`: `EPS` for an exact zero.
#[inline(always)]
pub(crate) fn zeps(v: f64) -> f64 {
    if v == 0.0 { EPS } else { v }
}
