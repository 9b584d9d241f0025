//! The complex functions of `z = x + iy` (cothe's set): exp, log, sin,
//! cos, tan, sec, csc, cot, sinh, cosh, tanh, sech, csch, coth, written
//! with real sines, cosines and their hyperbolic kin as flam3 writes them.

use super::Point;

/// 82: `e^z`.
#[inline(always)]
pub(super) fn exp(p: &Point, w: f64) -> (f64, f64) {
    let e = p.x.exp();
    let (s, c) = p.y.sin_cos();
    (w * e * c, w * e * s)
}

/// 83: `ln z` (principal branch, "yx" angle); Fractorium's `log_base`
/// divides the real part by `ln(base)`.
#[inline(always)]
pub(super) fn log(p: &Point, w: f64, inv_ln_base: f64) -> (f64, f64) {
    (w * 0.5 * p.sumsq.ln() * inv_ln_base, w * p.atanyx)
}

/// `1 / ln(base)` for log's Fractorium parameter `log_base` (kept at or
/// above Fractorium's least value, EPS), exactly 1 for flam3's base e so
/// that flam3's log is computed as flam3 computes it.
pub(super) fn inv_ln_base(base: f64) -> f64 {
    if base == std::f64::consts::E { 1.0 } else { 1.0 / super::params::real(base, f64::EPSILON, f64::INFINITY).ln() }
}

/// 84: `sin z`.
#[inline(always)]
pub(super) fn sin(p: &Point, w: f64) -> (f64, f64) {
    let (s, c) = p.x.sin_cos();
    let (sh, ch) = (p.y.sinh(), p.y.cosh());
    (w * s * ch, w * c * sh)
}

/// 85: `cos z`.
#[inline(always)]
pub(super) fn cos(p: &Point, w: f64) -> (f64, f64) {
    let (s, c) = p.x.sin_cos();
    let (sh, ch) = (p.y.sinh(), p.y.cosh());
    (w * c * ch, -(w * s * sh))
}

/// 86: `tan z`.
#[inline(always)]
pub(super) fn tan(p: &Point, w: f64) -> (f64, f64) {
    let (s, c) = (2.0 * p.x).sin_cos();
    let (sh, ch) = ((2.0 * p.y).sinh(), (2.0 * p.y).cosh());
    let den = 1.0 / (c + ch);
    (w * den * s, w * den * sh)
}

/// 87: `sec z`.
#[inline(always)]
pub(super) fn sec(p: &Point, w: f64) -> (f64, f64) {
    let (s, c) = p.x.sin_cos();
    let (sh, ch) = (p.y.sinh(), p.y.cosh());
    let den = 2.0 / ((2.0 * p.x).cos() + (2.0 * p.y).cosh());
    (w * den * c * ch, w * den * s * sh)
}

/// 88: `csc z`.
#[inline(always)]
pub(super) fn csc(p: &Point, w: f64) -> (f64, f64) {
    let (s, c) = p.x.sin_cos();
    let (sh, ch) = (p.y.sinh(), p.y.cosh());
    let den = 2.0 / ((2.0 * p.y).cosh() - (2.0 * p.x).cos());
    (w * den * s * ch, -(w * den * c * sh))
}

/// 89: `cot z`.
#[inline(always)]
pub(super) fn cot(p: &Point, w: f64) -> (f64, f64) {
    let (s, c) = (2.0 * p.x).sin_cos();
    let (sh, ch) = ((2.0 * p.y).sinh(), (2.0 * p.y).cosh());
    let den = 1.0 / (ch - c);
    (w * den * s, -(w * den * sh))
}

/// 90: `sinh z`.
#[inline(always)]
pub(super) fn sinh(p: &Point, w: f64) -> (f64, f64) {
    let (s, c) = p.y.sin_cos();
    let (sh, ch) = (p.x.sinh(), p.x.cosh());
    (w * sh * c, w * ch * s)
}

/// 91: `cosh z`.
#[inline(always)]
pub(super) fn cosh(p: &Point, w: f64) -> (f64, f64) {
    let (s, c) = p.y.sin_cos();
    let (sh, ch) = (p.x.sinh(), p.x.cosh());
    (w * ch * c, w * sh * s)
}

/// 92: `tanh z`.
#[inline(always)]
pub(super) fn tanh(p: &Point, w: f64) -> (f64, f64) {
    let (s, c) = (2.0 * p.y).sin_cos();
    let (sh, ch) = ((2.0 * p.x).sinh(), (2.0 * p.x).cosh());
    let den = 1.0 / (c + ch);
    (w * den * sh, w * den * s)
}

/// 93: `sech z`.
#[inline(always)]
pub(super) fn sech(p: &Point, w: f64) -> (f64, f64) {
    let (s, c) = p.y.sin_cos();
    let (sh, ch) = (p.x.sinh(), p.x.cosh());
    let den = 2.0 / ((2.0 * p.y).cos() + (2.0 * p.x).cosh());
    (w * den * c * ch, -(w * den * s * sh))
}

/// 94: `csch z`.
#[inline(always)]
pub(super) fn csch(p: &Point, w: f64) -> (f64, f64) {
    let (s, c) = p.y.sin_cos();
    let (sh, ch) = (p.x.sinh(), p.x.cosh());
    let den = 2.0 / ((2.0 * p.x).cosh() - (2.0 * p.y).cos());
    (w * den * sh * c, -(w * den * ch * s))
}

/// 95: `coth z`.
#[inline(always)]
pub(super) fn coth(p: &Point, w: f64) -> (f64, f64) {
    let (s, c) = (2.0 * p.y).sin_cos();
    let (sh, ch) = ((2.0 * p.x).sinh(), (2.0 * p.x).cosh());
    let den = 1.0 / (ch - c);
    (w * den * sh, w * den * s)
}
