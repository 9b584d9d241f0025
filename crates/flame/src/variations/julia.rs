//! Roots, powers and wedges of the plane: julian, juliascope, cpow, escher,
//! wedge, wedge_julia, wedge_sph and whorl. All of them read the "yx"
//! angle `atan2(y, x)`.

use std::f64::consts::{FRAC_1_PI, PI};

use warpmc_rng::RandomSource;

use super::{EPS, Point, VariationSpec, c_int};

/// 32: a random one of the `|power|` branches of `z^(1/power)`, with the
/// radius raised to `dist / power` (flam3's `julian_rN`, `julian_cn`).
/// The branch is `trunc(|power| · u)`; a negative power turns the result.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Julian {
    pub(crate) power: f64,
    pub(crate) roots: f64,
    pub(crate) exponent: f64,
}

impl Julian {
    pub(super) fn new(s: &VariationSpec) -> Self {
        let (power, dist) = (s.param(0), s.param(1));
        Julian { power, roots: power.abs(), exponent: dist / power / 2.0 }
    }

    #[inline(always)]
    pub(super) fn eval<R: RandomSource>(&self, p: &Point, w: f64, rng: &mut R) -> (f64, f64) {
        let branch = c_int(self.roots * rng.next_f64());
        let a = (p.atanyx + 2.0 * PI * f64::from(branch)) / self.power;
        let r = w * p.sumsq.powf(self.exponent);
        let (s, c) = a.sin_cos();
        (r * c, r * s)
    }
}

/// 33: julian with the angle mirrored on odd branches.
#[derive(Clone, Copy, Debug)]
pub(crate) struct JuliaScope {
    pub(crate) power: f64,
    pub(crate) roots: f64,
    pub(crate) exponent: f64,
}

impl JuliaScope {
    pub(super) fn new(s: &VariationSpec) -> Self {
        let (power, dist) = (s.param(0), s.param(1));
        JuliaScope { power, roots: power.abs(), exponent: dist / power / 2.0 }
    }

    #[inline(always)]
    pub(super) fn eval<R: RandomSource>(&self, p: &Point, w: f64, rng: &mut R) -> (f64, f64) {
        let branch = c_int(self.roots * rng.next_f64());
        let turn = 2.0 * PI * f64::from(branch);
        let a = if branch & 1 == 0 { (turn + p.atanyx) / self.power } else { (turn - p.atanyx) / self.power };
        let (s, c) = a.sin_cos();
        let r = w * p.sumsq.powf(self.exponent);
        (r * c, r * s)
    }
}

/// 59: the complex power `z^((r + i·i) / power)` on a random one of
/// `power` branches (`floor(power · u)`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cpow {
    pub(crate) power: f64,
    /// `2π / power`, `r / power`, `i / power`.
    pub(crate) va: f64,
    pub(crate) vc: f64,
    pub(crate) vd: f64,
}

impl Cpow {
    pub(super) fn new(s: &VariationSpec) -> Self {
        let (re, im, power) = (s.param(0), s.param(1), s.param(2));
        Cpow { power, va: 2.0 * PI / power, vc: re / power, vd: im / power }
    }

    #[inline(always)]
    pub(super) fn eval<R: RandomSource>(&self, p: &Point, w: f64, rng: &mut R) -> (f64, f64) {
        let a = p.atanyx;
        let lnr = 0.5 * p.sumsq.ln();
        let ang = self.vc * a + self.vd * lnr + self.va * (self.power * rng.next_f64()).floor();
        let m = w * (self.vc * lnr - self.vd * a).exp();
        let (s, c) = ang.sin_cos();
        (m * c, m * s)
    }
}

/// 63: Escher's droste-like map, `z^((1 + e^(iβ)) / 2)`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Escher {
    pub(crate) vc: f64,
    pub(crate) vd: f64,
}

impl Escher {
    pub(super) fn new(s: &VariationSpec) -> Self {
        let (seb, ceb) = s.param(0).sin_cos();
        Escher { vc: 0.5 * (1.0 + ceb), vd: 0.5 * seb }
    }

    #[inline(always)]
    pub(super) fn eval(&self, p: &Point, w: f64) -> (f64, f64) {
        let a = p.atanyx;
        let lnr = 0.5 * p.sumsq.ln();
        let m = w * (self.vc * lnr - self.vd * a).exp();
        let n = self.vc * a + self.vd * lnr;
        let (s, c) = n.sin_cos();
        (m * c, m * s)
    }
}

/// The sector `floor((count · a + π) / 2π)` of wedge and its kin.
#[inline(always)]
fn sector(count: f64, a: f64) -> f64 {
    ((count * a + PI) * FRAC_1_PI * 0.5).floor()
}

/// `1 − angle · count / 2π`, the angle compression of the wedges.
fn compression(angle: f64, count: f64) -> f64 {
    1.0 - angle * count * FRAC_1_PI * 0.5
}

/// 77: the plane cut into `count` wedges, each turned by `angle`, with a
/// hole and a swirl.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Wedge {
    pub(crate) angle: f64,
    pub(crate) hole: f64,
    pub(crate) count: f64,
    pub(crate) swirl: f64,
    pub(crate) comp: f64,
}

impl Wedge {
    pub(super) fn new(s: &VariationSpec) -> Self {
        let (angle, hole, count, swirl) = (s.param(0), s.param(1), s.param(2), s.param(3));
        Wedge { angle, hole, count, swirl, comp: compression(angle, count) }
    }

    #[inline(always)]
    pub(super) fn eval(&self, p: &Point, w: f64) -> (f64, f64) {
        let r = p.sqrt;
        let a = p.atanyx + self.swirl * r;
        let c = sector(self.count, a);
        let a = a * self.comp + c * self.angle;
        let (s, co) = a.sin_cos();
        let r = w * (r + self.hole);
        (r * co, r * s)
    }
}

/// 78: julian's branches cut into wedges (flam3's `wedgeJulia_cf`, `_rN`,
/// `_cn`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct WedgeJulia {
    pub(crate) angle: f64,
    pub(crate) count: f64,
    pub(crate) power: f64,
    pub(crate) comp: f64,
    pub(crate) roots: f64,
    pub(crate) exponent: f64,
}

impl WedgeJulia {
    pub(super) fn new(s: &VariationSpec) -> Self {
        let (angle, count, power, dist) = (s.param(0), s.param(1), s.param(2), s.param(3));
        WedgeJulia {
            angle,
            count,
            power,
            comp: compression(angle, count),
            roots: power.abs(),
            exponent: dist / power / 2.0,
        }
    }

    #[inline(always)]
    pub(super) fn eval<R: RandomSource>(&self, p: &Point, w: f64, rng: &mut R) -> (f64, f64) {
        let r = w * p.sumsq.powf(self.exponent);
        let branch = c_int(self.roots * rng.next_f64());
        let a = (p.atanyx + 2.0 * PI * f64::from(branch)) / self.power;
        let c = sector(self.count, a);
        let a = a * self.comp + c * self.angle;
        let (s, co) = a.sin_cos();
        (r * co, r * s)
    }
}

/// 79: wedge applied to the inverted radius `1 / (r + ε)`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WedgeSph {
    pub(crate) angle: f64,
    pub(crate) count: f64,
    pub(crate) hole: f64,
    pub(crate) swirl: f64,
    pub(crate) comp: f64,
}

impl WedgeSph {
    pub(super) fn new(s: &VariationSpec) -> Self {
        let (angle, count, hole, swirl) = (s.param(0), s.param(1), s.param(2), s.param(3));
        WedgeSph { angle, count, hole, swirl, comp: compression(angle, count) }
    }

    #[inline(always)]
    pub(super) fn eval(&self, p: &Point, w: f64) -> (f64, f64) {
        let r = 1.0 / (p.sqrt + EPS);
        let a = p.atanyx + self.swirl * r;
        let c = sector(self.count, a);
        let a = a * self.comp + c * self.angle;
        let (s, co) = a.sin_cos();
        let r = w * (r + self.hole);
        (r * co, r * s)
    }
}

/// 80: a twist that grows towards the circle of radius `w` (inside and
/// outside strengths apart).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Whorl {
    pub(crate) inside: f64,
    pub(crate) outside: f64,
}

impl Whorl {
    pub(super) fn new(s: &VariationSpec) -> Self {
        Whorl { inside: s.param(0), outside: s.param(1) }
    }

    #[inline(always)]
    pub(super) fn eval(&self, p: &Point, w: f64) -> (f64, f64) {
        let r = p.sqrt;
        let a = if r < w { p.atanyx + self.inside / (w - r) } else { p.atanyx + self.outside / (w - r) };
        let (s, c) = a.sin_cos();
        (w * r * c, w * r * s)
    }
}
