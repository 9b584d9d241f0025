//! The variations that draw random numbers: the blurs (noise, blur,
//! gaussian_blur, radial_blur, pre_blur, square), pie, the Z+ set that
//! scales a random angle by the weight (arch, rays, blade, twintrian), the
//! cyberxaos set (super_shape, flower, conic, parabola) and boarders.
//!
//! Uniforms are drawn in the order flam3 draws them; where flam3 sums
//! several in one expression they are drawn and added left to right.

use std::f64::consts::{FRAC_PI_4, PI};

use warpmc_rng::RandomSource;

use super::{EPS, Point, VariationSpec, bad_value, c_int};

/// flam3's pseudo-gaussian: the sum of four uniforms, centred.
#[inline(always)]
fn gauss4<R: RandomSource>(rng: &mut R) -> f64 {
    rng.next_f64() + rng.next_f64() + rng.next_f64() + rng.next_f64() - 2.0
}

/// 67: pre_blur moves the point itself (five uniforms: four for the
/// distance, then the direction), before the shared values are computed.
#[inline(always)]
pub(super) fn pre_blur<R: RandomSource>(x: f64, y: f64, w: f64, rng: &mut R) -> (f64, f64) {
    let g = w * gauss4(rng);
    let a = rng.next_f64() * 2.0 * PI;
    let (s, c) = a.sin_cos();
    (x + g * c, y + g * s)
}

/// 31: the point scaled by a random factor in a random direction per
/// coordinate pair (angle first, then the factor).
#[inline(always)]
pub(super) fn noise<R: RandomSource>(p: &Point, w: f64, rng: &mut R) -> (f64, f64) {
    let a = rng.next_f64() * 2.0 * PI;
    let (s, c) = a.sin_cos();
    let r = w * rng.next_f64();
    (p.x * r * c, p.y * r * s)
}

/// 34: a uniform angle and radius, ignoring the point.
#[inline(always)]
pub(super) fn blur<R: RandomSource>(w: f64, rng: &mut R) -> (f64, f64) {
    let a = rng.next_f64() * 2.0 * PI;
    let (s, c) = a.sin_cos();
    let r = w * rng.next_f64();
    (r * c, r * s)
}

/// 35: a uniform angle and a pseudo-gaussian radius.
#[inline(always)]
pub(super) fn gaussian_blur<R: RandomSource>(w: f64, rng: &mut R) -> (f64, f64) {
    let a = rng.next_f64() * 2.0 * PI;
    let (s, c) = a.sin_cos();
    let r = w * gauss4(rng);
    (r * c, r * s)
}

/// 36: blur along circles (spin) and rays (zoom), split by
/// `angle · π/2`. Only the blur is scaled by the weight: the unblurred
/// point cancels (`r·cos θ − x`), so radial_blur adds a displacement and
/// needs another variation (usually linear) to carry the point.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RadialBlur {
    /// flam3's `radialBlur_spinvar`, `radialBlur_zoomvar`.
    pub(crate) spin: f64,
    pub(crate) zoom: f64,
}

impl RadialBlur {
    pub(super) fn new(s: &VariationSpec) -> Self {
        let (spin, zoom) = (s.param(0) * PI / 2.0).sin_cos();
        RadialBlur { spin, zoom }
    }

    #[inline(always)]
    pub(super) fn eval<R: RandomSource>(&self, p: &Point, w: f64, rng: &mut R) -> (f64, f64) {
        let g = w * gauss4(rng);
        let ra = p.sqrt;
        let a = p.atanyx + self.spin * g;
        let (s, c) = a.sin_cos();
        let rz = self.zoom * g - 1.0;
        (ra * c + rz * p.x, ra * s + rz * p.y)
    }
}

/// 37: a random point in one of `slices` pie slices (three uniforms:
/// slice, angle within it, radius).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pie {
    pub(crate) slices: f64,
    pub(crate) rotation: f64,
    pub(crate) thickness: f64,
}

impl Pie {
    pub(super) fn new(s: &VariationSpec) -> Self {
        Pie { slices: s.param(0), rotation: s.param(1), thickness: s.param(2) }
    }

    #[inline(always)]
    pub(super) fn eval<R: RandomSource>(&self, w: f64, rng: &mut R) -> (f64, f64) {
        let slice = c_int(rng.next_f64() * self.slices + 0.5);
        let a = self.rotation + 2.0 * PI * (f64::from(slice) + rng.next_f64() * self.thickness) / self.slices;
        let r = w * rng.next_f64();
        let (s, c) = a.sin_cos();
        (r * c, r * s)
    }
}

/// 41: `(sin φ, sin² φ / cos φ)` for a random `φ` in `[0, wπ)`.
#[inline(always)]
pub(super) fn arch<R: RandomSource>(w: f64, rng: &mut R) -> (f64, f64) {
    let a = rng.next_f64() * w * PI;
    let (s, c) = a.sin_cos();
    (w * s, w * (s * s) / c)
}

/// 43: a uniform point in the square of side `w`.
#[inline(always)]
pub(super) fn square<R: RandomSource>(w: f64, rng: &mut R) -> (f64, f64) {
    let x = w * (rng.next_f64() - 0.5);
    let y = w * (rng.next_f64() - 0.5);
    (x, y)
}

/// 44: rays: `w² tan(φ) / (r² + ε) · (cos x, sin y)` for a random `φ` in
/// `[0, wπ)`.
#[inline(always)]
pub(super) fn rays<R: RandomSource>(p: &Point, w: f64, rng: &mut R) -> (f64, f64) {
    let a = w * rng.next_f64() * PI;
    let r = w / (p.sumsq + EPS);
    let t = w * a.tan() * r;
    (t * p.x.cos(), t * p.y.sin())
}

/// 45: blade, with a random angle in `[0, wr)`.
#[inline(always)]
pub(super) fn blade<R: RandomSource>(p: &Point, w: f64, rng: &mut R) -> (f64, f64) {
    let r = rng.next_f64() * w * p.sqrt;
    let (s, c) = r.sin_cos();
    (w * p.x * (c + s), w * p.x * (c - s))
}

/// 47: twintrian, with a random angle in `[0, wr)`; a non-finite or huge
/// `log10(sin²) + cos` is replaced by −30, as flam3 does.
#[inline(always)]
pub(super) fn twintrian<R: RandomSource>(p: &Point, w: f64, rng: &mut R) -> (f64, f64) {
    let r = rng.next_f64() * w * p.sqrt;
    let (s, c) = r.sin_cos();
    let mut diff = (s * s).log10() + c;
    if bad_value(diff) {
        diff = -30.0;
    }
    (w * p.x * diff, w * p.x * (diff - s * PI))
}

/// 50: Gielis's superformula; one uniform is drawn even when `rnd` is 0.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SuperShape {
    pub(crate) rnd: f64,
    pub(crate) one_minus_rnd: f64,
    pub(crate) n2: f64,
    pub(crate) n3: f64,
    pub(crate) holes: f64,
    /// flam3's `super_shape_pm_4` (m/4) and `super_shape_pneg1_n1` (−1/n1).
    pub(crate) m_4: f64,
    pub(crate) neg_inv_n1: f64,
}

impl SuperShape {
    pub(super) fn new(s: &VariationSpec) -> Self {
        let rnd = s.param(0);
        SuperShape {
            rnd,
            one_minus_rnd: 1.0 - rnd,
            m_4: s.param(1) / 4.0,
            neg_inv_n1: -1.0 / s.param(2),
            n2: s.param(3),
            n3: s.param(4),
            holes: s.param(5),
        }
    }

    #[inline(always)]
    pub(super) fn eval<R: RandomSource>(&self, p: &Point, w: f64, rng: &mut R) -> (f64, f64) {
        let theta = self.m_4 * p.atanyx + FRAC_PI_4;
        let (st, ct) = theta.sin_cos();
        let t1 = ct.abs().powf(self.n2);
        let t2 = st.abs().powf(self.n3);
        let r = w
            * ((self.rnd * rng.next_f64() + self.one_minus_rnd * p.sqrt) - self.holes)
            * (t1 + t2).powf(self.neg_inv_n1)
            / p.sqrt;
        (r * p.x, r * p.y)
    }
}

/// 51: a random point on a rose of `petals` petals.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Flower {
    pub(crate) petals: f64,
    pub(crate) holes: f64,
}

impl Flower {
    pub(super) fn new(s: &VariationSpec) -> Self {
        Flower { petals: s.param(0), holes: s.param(1) }
    }

    #[inline(always)]
    pub(super) fn eval<R: RandomSource>(&self, p: &Point, w: f64, rng: &mut R) -> (f64, f64) {
        let r = w * (rng.next_f64() - self.holes) * (self.petals * p.atanyx).cos() / p.sqrt;
        (r * p.x, r * p.y)
    }
}

/// 52: a random point inside a conic section of eccentricity `e`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Conic {
    pub(crate) eccentricity: f64,
    pub(crate) holes: f64,
}

impl Conic {
    pub(super) fn new(s: &VariationSpec) -> Self {
        Conic { eccentricity: s.param(0), holes: s.param(1) }
    }

    #[inline(always)]
    pub(super) fn eval<R: RandomSource>(&self, p: &Point, w: f64, rng: &mut R) -> (f64, f64) {
        let ct = p.x / p.sqrt;
        let e = self.eccentricity;
        let r = w * (rng.next_f64() - self.holes) * e / (1.0 + e * ct) / p.sqrt;
        (r * p.x, r * p.y)
    }
}

/// 53: `(h sin² r · u₁, width cos r · u₂)` with two uniforms (x first).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Parabola {
    /// `height · w` and `width · w`.
    pub(crate) hw: f64,
    pub(crate) ww: f64,
}

impl Parabola {
    pub(super) fn new(s: &VariationSpec) -> Self {
        Parabola { hw: s.param(0) * s.weight, ww: s.param(1) * s.weight }
    }

    #[inline(always)]
    pub(super) fn eval<R: RandomSource>(&self, p: &Point, rng: &mut R) -> (f64, f64) {
        let (s, c) = p.sqrt.sin_cos();
        let x = self.hw * s * s * rng.next_f64();
        let y = self.ww * c * rng.next_f64();
        (x, y)
    }
}

/// 56: boarders: the unit cells (centred on integers, ties to even) shrunk
/// by half, the rest of each cell (three times in four) pushed to its
/// border.
#[inline(always)]
pub(super) fn boarders<R: RandomSource>(p: &Point, w: f64, rng: &mut R) -> (f64, f64) {
    let rx = p.x.round_ties_even();
    let ry = p.y.round_ties_even();
    let ox = p.x - rx;
    let oy = p.y - ry;
    if rng.next_f64() >= 0.75 {
        (w * (ox * 0.5 + rx), w * (oy * 0.5 + ry))
    } else if ox.abs() >= oy.abs() {
        if ox >= 0.0 {
            (w * (ox * 0.5 + rx + 0.25), w * (oy * 0.5 + ry + 0.25 * oy / ox))
        } else {
            (w * (ox * 0.5 + rx - 0.25), w * (oy * 0.5 + ry - 0.25 * oy / ox))
        }
    } else if oy >= 0.0 {
        (w * (ox * 0.5 + rx + ox / oy * 0.25), w * (oy * 0.5 + ry + 0.25))
    } else {
        (w * (ox * 0.5 + rx - ox / oy * 0.25), w * (oy * 0.5 + ry - 0.25))
    }
}
