//! Fractorium's blurs beyond flam3's: gaussian, sineblur, blur_linear,
//! blur_zoom, blur_circle, circleblur and rblur (formulas of Fractorium's
//! `Variations0*.h`, uniforms drawn in the order written there).

use std::f64::consts::{FRAC_PI_4, PI};

use warpmc_rng::RandomSource;

use super::params::{cyclic, real};
use super::{Point, VariationSpec};

/// gaussian: the point moved by flam3's pseudo-gaussian radius (four
/// uniforms) in a uniform direction (drawn first). Unlike gaussian_blur
/// the point itself is kept, unweighted.
#[inline(always)]
pub(super) fn gaussian<R: RandomSource>(p: &Point, w: f64, rng: &mut R) -> (f64, f64) {
    let angle = rng.next_f64() * 2.0 * PI;
    let r = w * (rng.next_f64() + rng.next_f64() + rng.next_f64() + rng.next_f64() - 2.0);
    let (s, c) = angle.sin_cos();
    (r * c + p.x, r * s + p.y)
}

/// sineblur: a uniform direction and a radius `acos(2u^power − 1) / π`
/// (`power` below 0 read as 0, as Fractorium clamps it), so that `power`
/// 1 spreads the points like the projection of a sphere.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sineblur {
    pub(crate) power: f64,
}

impl Sineblur {
    pub(super) fn new(s: &VariationSpec) -> Self {
        Sineblur { power: real(s.param(0), 0.0, f64::INFINITY) }
    }

    #[inline(always)]
    pub(super) fn eval<R: RandomSource>(&self, w: f64, rng: &mut R) -> (f64, f64) {
        let (s, c) = (rng.next_f64() * 2.0 * PI).sin_cos();
        let u = rng.next_f64();
        let r = if self.power == 1.0 {
            w * ((u * 2.0 - 1.0).acos() / PI)
        } else {
            w * (((u.ln() * self.power).exp() * 2.0 - 1.0).acos() / PI)
        };
        (r * c, r * s)
    }
}

/// blur_linear: the point moved by `length · u` along the direction
/// `angle` (wrapped into [0, 2π] as Fractorium stores it).
#[derive(Clone, Copy, Debug)]
pub(crate) struct BlurLinear {
    pub(crate) length: f64,
    pub(crate) sin: f64,
    pub(crate) cos: f64,
}

impl BlurLinear {
    pub(super) fn new(s: &VariationSpec) -> Self {
        let (sin, cos) = cyclic(s.param(1), 0.0, 2.0 * PI).sin_cos();
        BlurLinear { length: s.param(0), sin, cos }
    }

    #[inline(always)]
    pub(super) fn eval<R: RandomSource>(&self, p: &Point, w: f64, rng: &mut R) -> (f64, f64) {
        let r = self.length * rng.next_f64();
        (w * (p.x + r * self.cos), w * (p.y + r * self.sin))
    }
}

/// blur_zoom: the point scaled by `1 + length · u` about `(x, −y)`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BlurZoom {
    pub(crate) length: f64,
    pub(crate) x: f64,
    pub(crate) y: f64,
}

impl BlurZoom {
    pub(super) fn new(s: &VariationSpec) -> Self {
        BlurZoom { length: s.param(0), x: s.param(1), y: s.param(2) }
    }

    #[inline(always)]
    pub(super) fn eval<R: RandomSource>(&self, p: &Point, w: f64, rng: &mut R) -> (f64, f64) {
        let z = 1.0 + self.length * rng.next_f64();
        (w * ((p.x - self.x) * z + self.x), w * ((p.y + self.y) * z - self.y))
    }
}

/// blur_circle: a uniform point of the square `[−1, 1]²` (x drawn first)
/// mapped onto the disc of radius `w`, square rings to circles.
#[inline(always)]
pub(super) fn blur_circle<R: RandomSource>(w: f64, rng: &mut R) -> (f64, f64) {
    let x = 2.0 * rng.next_f64() - 1.0;
    let y = 2.0 * rng.next_f64() - 1.0;
    let (ax, ay) = (x.abs(), y.abs());
    // The position along the square ring of half-side `side`, in eighths
    // of its perimeter from the positive x axis.
    let (perimeter, side) = if ax >= ay {
        (if x >= ay { ax + y } else { 5.0 * ax - y }, ax)
    } else {
        (if y >= ax { 3.0 * ay - x } else { 7.0 * ay + x }, ay)
    };
    let r = w * side;
    let (s, c) = (FRAC_PI_4 * perimeter / side - FRAC_PI_4).sin_cos();
    (r * c, r * s)
}

/// circleblur: a uniform point of the disc of radius `w` (radius `√u`
/// drawn first, then the angle).
#[inline(always)]
pub(super) fn circleblur<R: RandomSource>(w: f64, rng: &mut R) -> (f64, f64) {
    let rad = rng.next_f64().sqrt();
    let (s, c) = (rng.next_f64() * 2.0 * PI).sin_cos();
    (w * c * rad, w * s * rad)
}

/// rblur: the point jittered in a square whose side grows with its distance
/// beyond `offset` from `(center_x, center_y)`, times `2 · strength`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rblur {
    pub(crate) s2: f64,
    pub(crate) offset: f64,
    pub(crate) cx: f64,
    pub(crate) cy: f64,
}

impl Rblur {
    pub(super) fn new(s: &VariationSpec) -> Self {
        Rblur { s2: 2.0 * s.param(0), offset: s.param(1), cx: s.param(2), cy: s.param(3) }
    }

    #[inline(always)]
    pub(super) fn eval<R: RandomSource>(&self, p: &Point, w: f64, rng: &mut R) -> (f64, f64) {
        let (sx, sy) = (p.x - self.cx, p.y - self.cy);
        let mut r = (sx * sx + sy * sy).sqrt() - self.offset;
        r = if r < 0.0 { 0.0 } else { r };
        r *= self.s2;
        let x = w * (p.x + (rng.next_f64() - 0.5) * r);
        let y = w * (p.y + (rng.next_f64() - 0.5) * r);
        (x, y)
    }
}
