//! Blending affine maps (flam3's `convert_linear_to_polar` and
//! `interp_and_convert_back`), and the rotations of flam3-genome's sheep
//! animations (`flam3_rotate`, `establish_asymmetric_refangles`).
//!
//! In `log` mode each column of the linear part, `(a, d)` and `(b, e)`, is
//! written as a length and an angle. Angles are blended linearly after
//! unwrapping each control point's angle to within half a turn of the
//! previous one's; lengths are blended as logarithms (so a scaling
//! progresses geometrically) unless one of them is below e⁻¹⁰, in which
//! case that column's lengths are blended linearly. Translations are
//! blended linearly.

use std::f64::consts::PI;

use crate::genome::{Affine, AffineInterpolation};

use super::{WorkFlame, blend};

/// flam3's tolerance around a half turn: a difference of exactly π unwraps
/// to a clockwise rotation.
const EPS: f64 = 1e-10;

/// Blends the six coefficients independently (`linear`, `compat`, `older`).
pub(super) fn blend_linear(c: &[f64], m: impl Fn(usize) -> Affine) -> Affine {
    let mut out = Affine { c: [[0.0; 2]; 3] };
    for (row, out_row) in out.c.iter_mut().enumerate() {
        for (col, v) in out_row.iter_mut().enumerate() {
            *v = blend(c, |k| m(k).c[row][col]);
        }
    }
    out
}

/// Polar form of one map per control point: angle, length and translation
/// of each column.
struct Polar {
    angle: Vec<[f64; 2]>,
    length: Vec<[f64; 2]>,
    shift: Vec<[f64; 2]>,
}

/// The angle of column `col` of a map's linear part.
fn column_angle(m: &Affine, col: usize) -> f64 {
    m.c[col][1].atan2(m.c[col][0])
}

/// Unwraps `next` against `prev` the way flam3 does: the short way round,
/// and clockwise for an exact half turn.
fn unwrap_angle(prev: f64, next: f64) -> f64 {
    let d = next - prev;
    if d > PI + EPS {
        next - 2.0 * PI
    } else if d < -(PI - EPS) {
        next + 2.0 * PI
    } else {
        next
    }
}

/// `convert_linear_to_polar` for xform `xf` of the aligned flames; `post`
/// picks the post map (which never uses the asymmetric reference angles).
#[allow(clippy::needless_range_loop)] // per-column arrays, indexed as in flam3
fn to_polar(cps: &[WorkFlame<'_>], xf: usize, post: bool) -> Polar {
    let n = cps.len();
    let mut p = Polar { angle: vec![[0.0; 2]; n], length: vec![[0.0; 2]; n], shift: vec![[0.0; 2]; n] };
    for (k, w) in cps.iter().enumerate() {
        let slot = w.slot(xf);
        let m = if post { &slot.post } else { &slot.coefs };
        let mut zero = [false; 2];
        for col in 0..2 {
            let (x, y) = (m.c[col][0], m.c[col][1]);
            p.angle[k][col] = column_angle(m, col);
            p.length[k][col] = (x * x + y * y).sqrt();
            zero[col] = p.length[k][col] == 0.0;
            p.shift[k][col] = m.c[2][col];
        }
        // A zero column has no angle of its own: it follows the other one.
        if zero[0] && !zero[1] {
            p.angle[k][0] = p.angle[k][1];
        } else if zero[1] && !zero[0] {
            p.angle[k][1] = p.angle[k][0];
        }
    }

    for col in 0..2 {
        for k in 1..n {
            let wind = cps[k].slot(xf).wind[col];
            if wind > 0.0 && !post {
                // Asymmetric case (one side does not rotate): both angles
                // into [wind − 2π, wind].
                let lo = wind - 2.0 * PI;
                p.angle[k - 1][col] = into_window(p.angle[k - 1][col], lo);
                p.angle[k][col] = into_window(p.angle[k][col], lo);
            } else {
                p.angle[k][col] = unwrap_angle(p.angle[k - 1][col], p.angle[k][col]);
            }
        }
    }
    p
}

/// Moves `a` by whole turns into `[lo, lo + 2π]` (flam3's loops).
fn into_window(mut a: f64, lo: f64) -> f64 {
    while a < lo {
        a += 2.0 * PI;
    }
    while a > lo + 2.0 * PI {
        a -= 2.0 * PI;
    }
    a
}

/// `log` blending of xform `xf`'s pre map (or post map, with `post`).
#[allow(clippy::needless_range_loop)] // per-column arrays, indexed as in flam3
pub(super) fn blend_log(cps: &[WorkFlame<'_>], c: &[f64], xf: usize, post: bool) -> Affine {
    let p = to_polar(cps, xf, post);
    let n = cps.len();
    // Columns with a (nearly) vanishing length anywhere blend lengths
    // linearly: the logarithm would run off to −∞.
    let mut linear = [false; 2];
    for (col, lin) in linear.iter_mut().enumerate() {
        *lin = (0..n).any(|k| p.length[k][col].ln() < -10.0);
    }
    let mut angle = [0.0; 2];
    let mut length = [0.0; 2];
    let mut out = Affine { c: [[0.0; 2]; 3] };
    for k in 0..n {
        for col in 0..2 {
            angle[col] += c[k] * p.angle[k][col];
            length[col] += c[k] * if linear[col] { p.length[k][col] } else { p.length[k][col].ln() };
            out.c[2][col] += c[k] * p.shift[k][col];
        }
    }
    for col in 0..2 {
        let r = if linear[col] { length[col] } else { length[col].exp() };
        out.c[col][0] = r * angle[col].cos();
        out.c[col][1] = r * angle[col].sin();
    }
    out
}

/// `flam3_rotate`: turns the linear part of each animated standard xform by
/// `degrees` (counter-clockwise in flam3's coordinates). Padding xforms are
/// only turned in `log` mode; final xforms never.
pub(super) fn rotate_flame(w: &mut WorkFlame<'_>, degrees: f64, kind: AffineInterpolation) {
    let turn = Turn::degrees(degrees);
    for slot in &mut w.xforms {
        if slot.animate == 0.0 || (slot.padding && kind != AffineInterpolation::Log) {
            continue;
        }
        turn.apply(&mut slot.coefs);
    }
}

/// A rotation of the plane, as `flam3_rotate` applies it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Turn {
    sin: f64,
    cos: f64,
}

impl Turn {
    pub(super) fn degrees(degrees: f64) -> Self {
        let theta = degrees * 2.0 * PI / 360.0;
        Turn { sin: theta.sin(), cos: theta.cos() }
    }

    /// Turns the linear part of `m` (its translation is kept).
    pub(super) fn apply(self, m: &mut Affine) {
        let Turn { sin, cos } = self;
        let m = &mut m.c;
        let (a, d, b, e) = (m[0][0], m[0][1], m[1][0], m[1][1]);
        // The rotation [[cos, −sin], [sin, cos]] times [[a, b], [d, e]],
        // summed in flam3's order.
        m[0][0] = cos * a + -sin * d;
        m[1][0] = cos * b + -sin * e;
        m[0][1] = sin * a + cos * d;
        m[1][1] = sin * b + cos * e;
    }
}

/// `establish_asymmetric_refangles`: where an xform animates on one side of
/// a pair of control points and not on the other, records on the later one
/// the reference angle (the animated side's angle plus a turn) that keeps
/// the blended rotation winding the same way as the animated side.
#[allow(clippy::needless_range_loop)] // per-column arrays, indexed as in flam3
pub(super) fn establish_asymmetric_refangles(cps: &mut [WorkFlame<'_>]) {
    let n = cps.len();
    for xf in 0..cps[0].xforms.len() {
        let mut angle: Vec<[f64; 2]> =
            cps.iter().map(|w| [column_angle(&w.xforms[xf].coefs, 0), column_angle(&w.xforms[xf].coefs, 1)]).collect();
        for k in 1..n {
            for col in 0..2 {
                angle[k][col] = unwrap_angle(angle[k - 1][col], angle[k][col]);
                let still_prev = cps[k - 1].xforms[xf].animate == 0.0;
                let still_this = cps[k].xforms[xf].animate == 0.0;
                if still_this && !still_prev {
                    cps[k].xforms[xf].wind[col] = angle[k - 1][col] + 2.0 * PI;
                } else if still_prev && !still_this {
                    cps[k].xforms[xf].wind[col] = angle[k][col] + 2.0 * PI;
                }
            }
        }
    }
}
