//! Fractorium's maps of the plane beyond flam3's (formulas of Fractorium's
//! `Variations0*.h`, its flam3-compatible branches where it has two):
//! Mobius, hemisphere, unpolar, epispiral, twoface, glynnia, wdisc,
//! hypertile, hypertile1, hypertile2, bTransform, eJulia, pow_block,
//! barycentroid and smartshape.

use std::f64::consts::{FRAC_1_PI, FRAC_1_SQRT_2, PI};

use warpmc_rng::RandomSource;

use super::params::{EPS, integer, integer_nonzero, nonzero, real, zeps};
use super::{Point, VariationSpec};

/// Mobius (Fractorium's, with its `Mobius_Re_A` … parameters; flam3's
/// mobius is another variation): `(A z + B) / (C z + D)` with complex
/// coefficients, the denominator's squared modulus kept off zero.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MobiusF {
    /// Re A, Im A, Re B, Im B, Re C, Im C, Re D, Im D.
    pub(crate) c: [f64; 8],
}

impl MobiusF {
    pub(super) fn new(s: &VariationSpec) -> Self {
        MobiusF { c: std::array::from_fn(|i| s.param(i)) }
    }

    #[inline(always)]
    pub(super) fn eval(&self, p: &Point, w: f64) -> (f64, f64) {
        let [ra, ia, rb, ib, rc, ic, rd, id] = self.c;
        let (x, y) = (p.x, p.y);
        let u_re = ra * x - ia * y + rb;
        let u_im = ra * y + ia * x + ib;
        let v_re = rc * x - ic * y + rd;
        let v_im = rc * y + ic * x + id;
        let den = zeps(v_re * v_re + v_im * v_im);
        (w * (u_re * v_re + u_im * v_im) / den, w * (u_im * v_re - u_re * v_im) / den)
    }
}

/// hemisphere: the plane onto the unit hemisphere seen from above,
/// `p / √(r² + 1)`.
#[inline(always)]
pub(super) fn hemisphere(p: &Point, w: f64) -> (f64, f64) {
    let t = w / (p.sumsq + 1.0).sqrt();
    (p.x * t, p.y * t)
}

/// unpolar: `e^y (sin x, cos x) · w / 2π`, the inverse of polar's angle
/// and log radius.
#[inline(always)]
pub(super) fn unpolar(p: &Point, w: f64) -> (f64, f64) {
    let v = (w / PI) * 0.5;
    let r = p.y.exp();
    let (s, c) = p.x.sin_cos();
    (v * r * s, v * r * c)
}

/// epispiral: the polar curve `1 / cos(nθ)`, minus `holes`, thickened by a
/// uniform factor when `thickness` is nonzero (only then drawn).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Epispiral {
    pub(crate) n: f64,
    /// `thickness · w` and `holes · w`.
    pub(crate) thickness_w: f64,
    pub(crate) holes_w: f64,
}

impl Epispiral {
    pub(super) fn new(s: &VariationSpec) -> Self {
        Epispiral { n: s.param(0), thickness_w: s.param(1) * s.weight, holes_w: s.param(2) * s.weight }
    }

    #[inline(always)]
    pub(super) fn eval<R: RandomSource>(&self, p: &Point, w: f64, rng: &mut R) -> (f64, f64) {
        let theta = p.atanyx;
        let scale = if self.thickness_w == 0.0 { w } else { self.thickness_w * rng.next_f64() };
        let t = scale / (self.n * theta).cos() - self.holes_w;
        if t.abs() != 0.0 {
            let (s, c) = theta.sin_cos();
            (t * c, t * s)
        } else {
            (0.0, 0.0)
        }
    }
}

/// twoface: the right half plane inverted in the unit circle, the left
/// half kept.
#[inline(always)]
pub(super) fn twoface(p: &Point, w: f64) -> (f64, f64) {
    let r = if p.x > 0.0 { w / p.sumsq } else { w };
    (r * p.x, r * p.y)
}

/// glynnia (flam3-compatible branch): a random one of two square-root
/// maps (one uniform), mirrored inside the unit circle.
#[inline(always)]
pub(super) fn glynnia<R: RandomSource>(p: &Point, w: f64, rng: &mut R) -> (f64, f64) {
    let v2 = w * FRAC_1_SQRT_2;
    let r = p.sqrt;
    let first = rng.next_f64() > 0.5;
    if r > 1.0 {
        if first {
            let d = (r + p.x).sqrt();
            (v2 * d, -(v2 / d * p.y))
        } else {
            let d = r + p.x;
            let k = w / (r * (p.y * p.y + d * d)).sqrt();
            (k * d, k * p.y)
        }
    } else if first {
        let d = zeps((r + p.x).sqrt());
        (-(v2 * d), -(v2 / d * p.y))
    } else {
        let d = r + p.x;
        let k = w / zeps((r * (p.y * p.y + d * d)).sqrt());
        (-(k * d), k * p.y)
    }
}

/// wdisc: disc with the radius and angle roles exchanged.
#[inline(always)]
pub(super) fn wdisc(p: &Point, w: f64) -> (f64, f64) {
    let mut a = PI / (p.sqrt + 1.0);
    let r = p.atanyx * FRAC_1_PI;
    if r > 0.0 {
        a = PI - a;
    }
    let (s, c) = a.sin_cos();
    (w * r * c, w * r * s)
}

/// The hyperbolic tiling {p, q}'s translation distance `r` (Poincaré disc)
/// and the angle `2π/p`, as the hypertile variations compute them (`p` and
/// `q` kept off zero).
fn hyper_tiling(p: f64, q: f64) -> (f64, f64) {
    let pa = 2.0 * PI / zeps(p);
    let cs = pa.cos();
    let r2 = 1.0 - (cs - 1.0) / (cs + (2.0 * PI / zeps(q)).cos());
    (if r2 > 0.0 { 1.0 / r2.sqrt() } else { 1.0 }, pa)
}

/// The rotation index Fractorium draws for the hypertiles (its `Crand`,
/// an integer in `[0, 32767)` from one 32-bit word), reduced modulo
/// `period` when that is nonzero ([`period`]).
#[inline(always)]
fn crand<R: RandomSource>(rng: &mut R, period: f64) -> f64 {
    let k = ((u64::from(rng.next_u32()) * 32767) >> 32) as u32;
    f64::from(if period > 0.0 { k % (period as u32) } else { k })
}

/// `p` when it is a whole number of turns' divisions (an integer in `[1,
/// 2²⁴]`), else 0. Rotating by `k · 2π/p` is then the same as by `(k mod
/// p) · 2π/p`, which keeps the angle below 2π: `k` reaches 32766, and in
/// float arithmetic `k · 2π/p` would carry an error of 10⁻³ radians.
fn period(p: f64) -> f64 {
    if (1.0..=16_777_216.0).contains(&p) && p.fract() == 0.0 { p } else { 0.0 }
}

/// hypertile: one Möbius translation of the hyperbolic tiling {p, q},
/// towards the `n`-th of its `p` directions.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Hypertile {
    pub(crate) re: f64,
    pub(crate) im: f64,
}

impl Hypertile {
    pub(super) fn new(s: &VariationSpec) -> Self {
        let pa = 2.0 * PI / zeps(s.param(0));
        let cs = pa.cos();
        let r2 = (1.0 - cs) / (cs + (2.0 * PI / zeps(s.param(1))).cos()) + 1.0;
        let r = if r2 > 0.0 { 1.0 / r2.sqrt() } else { 1.0 };
        let (sa, ca) = (s.param(2) * pa).sin_cos();
        Hypertile { re: r * ca, im: r * sa }
    }

    #[inline(always)]
    pub(super) fn eval(&self, p: &Point, w: f64) -> (f64, f64) {
        let (re, im) = (self.re, self.im);
        let a = p.x + re;
        let b = p.y - im;
        let c = re * p.x - im * p.y + 1.0;
        let d = re * p.y + im * p.x;
        let vr = w / (c * c + d * d);
        (vr * (a * c + b * d), vr * (b * c - a * d))
    }
}

/// hypertile1 (flam3-compatible branch): the translation of hypertile
/// towards a random one of the `p` directions (a random multiple of
/// `2π/p`, one 32-bit word).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Hypertile1 {
    pub(crate) pa: f64,
    pub(crate) r: f64,
    pub(crate) period: f64,
}

impl Hypertile1 {
    pub(super) fn new(s: &VariationSpec) -> Self {
        let (r, pa) = hyper_tiling(s.param(0), s.param(1));
        Hypertile1 { pa, r, period: period(s.param(0)) }
    }

    #[inline(always)]
    pub(super) fn eval<R: RandomSource>(&self, p: &Point, w: f64, rng: &mut R) -> (f64, f64) {
        let (s, c) = (crand(rng, self.period) * self.pa).sin_cos();
        let (re, im) = (self.r * c, self.r * s);
        let a = p.x + re;
        let b = p.y - im;
        let c = re * p.x - im * p.y + 1.0;
        let d = re * p.y + im * p.x;
        let vr = w / zeps(c * c + d * d);
        (vr * (a * c + b * d), vr * (b * c - a * d))
    }
}

/// hypertile2: the translation of the tiling {p, q} along x, then a
/// rotation by a random multiple of `2π/p` (one 32-bit word).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Hypertile2 {
    pub(crate) pa: f64,
    pub(crate) r: f64,
    pub(crate) period: f64,
}

impl Hypertile2 {
    pub(super) fn new(s: &VariationSpec) -> Self {
        let (r, pa) = hyper_tiling(s.param(0), s.param(1));
        Hypertile2 { pa, r, period: period(s.param(0)) }
    }

    #[inline(always)]
    pub(super) fn eval<R: RandomSource>(&self, p: &Point, w: f64, rng: &mut R) -> (f64, f64) {
        let a = p.x + self.r;
        let b = p.y;
        let c = self.r * p.x + 1.0;
        let d = self.r * p.y;
        let x = a * c + b * d;
        let y = b * c - a * d;
        let vr = w / zeps(c * c + d * d);
        let (s, co) = (crand(rng, self.period) * self.pa).sin_cos();
        (vr * (x * co + y * s), vr * (y * co - x * s))
    }
}

/// bTransform: bipolar coordinates `(τ, σ)` of the point, scaled by
/// `1/power` onto a random one of `power` sheets (one uniform), shifted by
/// `move`, `rotate` and `split` (by the side of the point), and mapped
/// back.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BTransform {
    pub(crate) rotate: f64,
    pub(crate) power: f64,
    pub(crate) mv: f64,
    pub(crate) split: f64,
}

impl BTransform {
    pub(super) fn new(s: &VariationSpec) -> Self {
        BTransform {
            rotate: s.param(0),
            power: nonzero(s.param(1), 1.0, f64::from(i32::MAX)),
            mv: s.param(2),
            split: s.param(3),
        }
    }

    #[inline(always)]
    pub(super) fn eval<R: RandomSource>(&self, p: &Point, w: f64, rng: &mut R) -> (f64, f64) {
        let (x, y) = (p.x, p.y);
        let xp1 = x + 1.0;
        let y2 = y * y;
        let mut tau = 0.5 * ((xp1 * xp1 + y2).ln() - ((x - 1.0) * (x - 1.0) + y2).ln()) / self.power + self.mv;
        let sigma = PI - y.atan2(xp1) - y.atan2(1.0 - x) + self.rotate;
        let sigma = sigma / self.power + 2.0 * PI / self.power * (rng.next_f64() * self.power).floor();
        if x >= 0.0 {
            tau += self.split;
        } else {
            tau -= self.split;
        }
        let t = zeps(tau.cosh() - sigma.cos());
        (w * tau.sinh() / t, w * sigma.sin() / t)
    }
}

/// eJulia: the elliptic-coordinate root: `(μ, ν)` of the point (of its
/// inversion for negative `power`) divided by `power`, on a random one of
/// the `power` sheets (one uniform).
#[derive(Clone, Copy, Debug)]
pub(crate) struct EJulia {
    pub(crate) power: f64,
    /// −1 for a negative power, else 1.
    pub(crate) sign: f64,
}

impl EJulia {
    pub(super) fn new(s: &VariationSpec) -> Self {
        let power = integer_nonzero(s.param(0), f64::NEG_INFINITY, f64::INFINITY);
        EJulia { power, sign: if power < 0.0 { -1.0 } else { 1.0 } }
    }

    #[inline(always)]
    pub(super) fn eval<R: RandomSource>(&self, p: &Point, w: f64, rng: &mut R) -> (f64, f64) {
        let mut r2 = p.sumsq;
        let x = if self.sign == 1.0 {
            p.x
        } else {
            r2 = 1.0 / zeps(r2);
            p.x * r2
        };
        let tmp = r2 + 1.0;
        let tmp2 = 2.0 * x;
        let mut xmax = (safe_sqrt(tmp + tmp2) + safe_sqrt(tmp - tmp2)) * 0.5;
        if xmax < 1.0 {
            xmax = 1.0;
        }
        let mu = xmax.acosh();
        let mut nu = real(x / xmax, -1.0, 1.0).acos();
        if p.y < 0.0 {
            nu *= -1.0;
        }
        nu = nu / self.power + 2.0 * PI / self.power * (rng.next_f64() * self.power).floor();
        let mu = mu / self.power;
        (w * mu.cosh() * nu.cos(), w * mu.sinh() * nu.sin())
    }
}

/// Fractorium's `SafeSqrt`: 0 for arguments at or below 0.
#[inline(always)]
fn safe_sqrt(v: f64) -> f64 {
    if v <= 0.0 { 0.0 } else { v.sqrt() }
}

/// pow_block: `z^(numerator/denominator)` with the corrections, on a
/// random one of `denominator` roots (one uniform) turned by `root`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PowBlock {
    pub(crate) numerator: f64,
    pub(crate) denominator: f64,
    pub(crate) root: f64,
    /// `numerator / (denominator · correctn / correctd)`.
    pub(crate) power: f64,
}

impl PowBlock {
    pub(super) fn new(s: &VariationSpec) -> Self {
        let (numerator, denominator, root) = (s.param(0), s.param(1), s.param(2));
        let (correctn, correctd) = (s.param(3), s.param(4));
        PowBlock { numerator, denominator, root, power: numerator / zeps(denominator * correctn * (1.0 / correctd)) }
    }

    #[inline(always)]
    pub(super) fn eval<R: RandomSource>(&self, p: &Point, w: f64, rng: &mut R) -> (f64, f64) {
        let r2 = p.sumsq.powf(self.power * 0.5) * w;
        let den = zeps(self.denominator);
        let branch = (rng.next_f64() * self.denominator).floor();
        let ran = (p.atanyx / den + (self.root * 2.0 * PI * branch / den)) * self.numerator;
        let (s, c) = ran.sin_cos();
        (r2 * c, r2 * s)
    }
}

/// barycentroid: the barycentric coordinates `(u, v)` of the point in the
/// frame `(a, b)`, `(c, d)`, each combined with the point's coordinate
/// (`sign(u) √(u² + x²)`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Barycentroid {
    pub(crate) a: f64,
    pub(crate) b: f64,
    pub(crate) c: f64,
    pub(crate) d: f64,
}

impl Barycentroid {
    pub(super) fn new(s: &VariationSpec) -> Self {
        Barycentroid { a: s.param(0), b: s.param(1), c: s.param(2), d: s.param(3) }
    }

    #[inline(always)]
    pub(super) fn eval(&self, p: &Point, w: f64) -> (f64, f64) {
        let (a, b, c, d) = (self.a, self.b, self.c, self.d);
        let dot00 = a * a + b * b;
        let dot01 = a * c + b * d;
        let dot02 = a * p.x + b * p.y;
        let dot11 = c * c + d * d;
        let dot12 = c * p.x + d * p.y;
        let inv = 1.0 / zeps(dot00 * dot11 - dot01 * dot01);
        let u = (dot11 * dot02 - dot01 * dot12) * inv;
        let v = (dot00 * dot12 - dot01 * dot02) * inv;
        let um = (u * u + p.x * p.x).sqrt() * sign(u);
        let vm = (v * v + p.y * p.y).sqrt() * sign(v);
        (w * um, w * vm)
    }
}

/// −1, 0 or 1 (NaN gives 0).
#[inline(always)]
fn sign(v: f64) -> f64 {
    if v < 0.0 {
        -1.0
    } else if v > 0.0 {
        1.0
    } else {
        0.0
    }
}

/// smartshape: each ray of the plane moved onto a regular `power`-gon
/// (rounded by `roundstr`/`roundwidth`, `distortion` the exponent of the
/// stretch, `compensation` evening out the angles).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Smartshape {
    pub(crate) roundstr: f64,
    pub(crate) roundwidth: f64,
    pub(crate) distortion: f64,
    /// `2π / power`, `2 tan(α/2)`, the rounding coefficient and 0 or 1.
    pub(crate) alpha: f64,
    pub(crate) alpha_coeff: f64,
    pub(crate) round_coeff: f64,
    pub(crate) comp: f64,
}

impl Smartshape {
    pub(super) fn new(s: &VariationSpec) -> Self {
        let power = real(s.param(0), 2.0, f64::INFINITY);
        let roundstr = s.param(1);
        let alpha = 2.0 * PI / power;
        Smartshape {
            roundstr,
            roundwidth: s.param(2),
            distortion: s.param(3),
            alpha,
            alpha_coeff: (alpha * 0.5).tan() * 2.0,
            round_coeff: roundstr / (alpha * 0.5).sin() / power * 2.0,
            comp: if real(s.param(4), 0.0, 1.0) <= 0.0 { 0.0 } else { 1.0 },
        }
    }

    #[inline(always)]
    pub(super) fn eval(&self, p: &Point, w: f64) -> (f64, f64) {
        let dang = (p.atanyx + PI) / self.alpha;
        let rad = p.sqrt;
        let zang1 = dang.floor();
        let xang1 = dang - zang1;
        let (xang2, zang, sign) = if xang1 > 0.5 { (1.0 - xang1, zang1 + 1.0, -1.0) } else { (xang1, zang1, 1.0) };
        let xang = if self.comp == 1.0 && self.distortion >= 1.0 {
            (xang2 * self.alpha_coeff).atan() / self.alpha
        } else {
            xang2
        };
        let coeff_1 = if self.distortion == 0.0 {
            1.0
        } else {
            let coeff0 = 1.0 / (xang * self.alpha).cos();
            if self.roundstr != 0.0 {
                // Fractorium's exp(ln(2·xang)·roundwidth), as a power: the
                // same but at xang = 0 with roundwidth 0 (1, not NaN), where
                // float and double builds would otherwise part.
                let wwidth = if self.roundwidth != 1.0 {
                    (xang * 2.0).powf(self.roundwidth) * self.round_coeff
                } else {
                    xang * 2.0 * self.round_coeff
                };
                ((1.0 - wwidth) * coeff0 + wwidth).abs()
            } else {
                coeff0
            }
        };
        let coeff = if self.distortion != 1.0 { (coeff_1.ln() * self.distortion).exp() } else { coeff_1 };
        let ang = (zang + sign * xang) * self.alpha - PI;
        let t = w * coeff * rad;
        let (s, c) = ang.sin_cos();
        (c * t, s * t)
    }
}

/// y (Fractorium's faber_y): the point on the ray through it scaled by the
/// square of a sum of polar shapes in its direction: a hypergon, a star, a
/// lituus and a superformula, each with its own weight.
#[derive(Clone, Copy, Debug)]
pub(crate) struct YShape {
    pub(crate) hypergon: f64,
    pub(crate) hypergon_n: f64,
    pub(crate) star: f64,
    pub(crate) star_n: f64,
    pub(crate) lituus: f64,
    pub(crate) super_: f64,
    pub(crate) super_n2: f64,
    pub(crate) super_n3: f64,
    /// `√(1 + hypergon_r²)`, `−lituus_a`, `tan(star_slope)`, `super_m / 4`
    /// and `−1 / super_n1` (kept off zero).
    pub(crate) hypergon_d: f64,
    pub(crate) inv_lituus_a: f64,
    pub(crate) tan_star_slope: f64,
    pub(crate) super_m4: f64,
    pub(crate) inv_super_n1: f64,
}

impl YShape {
    pub(super) fn new(s: &VariationSpec) -> Self {
        let hypergon_r = s.param(2);
        let star_slope = real(s.param(5), EPS, std::f64::consts::FRAC_PI_2);
        // tan(π/2) is no slope: Fractorium backs off by 0.05 near it.
        let tan_star_slope = if (star_slope - std::f64::consts::FRAC_PI_2).abs() < 1e-6 {
            (star_slope - 0.05).tan()
        } else {
            star_slope.tan()
        };
        YShape {
            hypergon: s.param(0),
            hypergon_n: integer(s.param(1), 3.0, f64::INFINITY),
            star: s.param(3),
            star_n: integer(s.param(4), 3.0, f64::INFINITY),
            lituus: s.param(6),
            super_: s.param(8),
            super_n2: s.param(11),
            super_n3: s.param(12),
            hypergon_d: (1.0 + hypergon_r * hypergon_r).sqrt(),
            inv_lituus_a: -s.param(7),
            tan_star_slope,
            super_m4: s.param(9) / 4.0,
            inv_super_n1: -1.0 / zeps(s.param(10)),
        }
    }

    #[inline(always)]
    pub(super) fn eval(&self, p: &Point, w: f64) -> (f64, f64) {
        let a = p.atanyx;
        let mut total = 0.0;
        if self.hypergon != 0.0 {
            let t1 = a.abs() % (2.0 * PI / self.hypergon_n) - PI / self.hypergon_n;
            let tn = t1.tan();
            let t2 = tn * tn + 1.0;
            let hd2 = self.hypergon_d * self.hypergon_d;
            if t2 >= hd2 {
                total += self.hypergon;
            } else {
                total += self.hypergon * (self.hypergon_d - (hd2 - t2).sqrt()) / t2.sqrt();
            }
        }
        if self.star != 0.0 {
            let t1 = (a.abs() % (2.0 * PI / self.star_n) - PI / self.star_n).abs().tan();
            let ts = self.tan_star_slope;
            let num = ts * ts * (1.0 + t1 * t1);
            let den = (t1 + ts) * (t1 + ts);
            total += self.star * (num / den).sqrt();
        }
        if self.lituus != 0.0 {
            total += self.lituus * (a / PI + 1.0).abs().powf(self.inv_lituus_a);
        }
        if self.super_ != 0.0 {
            let (s, c) = (a * self.super_m4).sin_cos();
            total += self.super_ * (c.abs().powf(self.super_n2) + s.abs().powf(self.super_n3)).powf(self.inv_super_n1);
        }
        let r = w * (total * total) / p.sqrt;
        let (s, c) = a.sin_cos();
        (r * c, r * s)
    }
}
