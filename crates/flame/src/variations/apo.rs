//! Deterministic variations from Apophysis and its plugin pack (and a few
//! Z+ ones): ngon, curl, rectangles, tangent, secant2, cross, disc2, bent2,
//! bipolar, butterfly, cell, curve, edisc, elliptic, foci, lazysusan,
//! loonie, modulus, oscilloscope, polar2, popcorn2, scry, separation,
//! split, splits, stripes, waves2, auger, flux and mobius.

use std::f64::consts::{FRAC_2_PI, FRAC_PI_2, PI};

use super::{EPS, Point, VariationSpec, c_int};

/// 38: a regular polygon of `sides` sides, with `corners` pulling the
/// corners out and `circle` keeping the disc.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ngon {
    pub(crate) half_power: f64,
    pub(crate) circle: f64,
    pub(crate) corners: f64,
    /// The angle of one side, `2π / sides`, and half of it.
    pub(crate) b: f64,
    pub(crate) half_b: f64,
}

impl Ngon {
    pub(super) fn new(s: &VariationSpec) -> Self {
        let (sides, power, circle, corners) = (s.param(0), s.param(1), s.param(2), s.param(3));
        let b = 2.0 * PI / sides;
        Ngon { half_power: power / 2.0, circle, corners, b, half_b: b / 2.0 }
    }

    #[inline(always)]
    pub(super) fn eval(&self, p: &Point, w: f64) -> (f64, f64) {
        let r_factor = p.sumsq.powf(self.half_power);
        let theta = p.atanyx;
        let mut phi = theta - self.b * (theta / self.b).floor();
        if phi > self.half_b {
            phi -= self.b;
        }
        let mut amp = self.corners * (1.0 / (phi.cos() + EPS) - 1.0) + self.circle;
        amp /= r_factor + EPS;
        (w * p.x * amp, w * p.y * amp)
    }
}

/// 39: `z / (1 + c1 z + c2 z²)`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Curl {
    pub(crate) c1: f64,
    pub(crate) c2: f64,
    pub(crate) two_c2: f64,
}

impl Curl {
    pub(super) fn new(s: &VariationSpec) -> Self {
        let (c1, c2) = (s.param(0), s.param(1));
        Curl { c1, c2, two_c2: 2.0 * c2 }
    }

    #[inline(always)]
    pub(super) fn eval(&self, p: &Point, w: f64) -> (f64, f64) {
        let (x, y) = (p.x, p.y);
        let re = 1.0 + self.c1 * x + self.c2 * (x * x - y * y);
        let im = self.c1 * y + self.two_c2 * x * y;
        let r = w / (re * re + im * im);
        ((x * re + y * im) * r, (y * re - x * im) * r)
    }
}

/// 40: each cell of an `x` by `y` grid mirrored about its centre; a zero
/// size leaves that coordinate alone.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rectangles {
    pub(crate) x: f64,
    pub(crate) y: f64,
}

impl Rectangles {
    pub(super) fn new(s: &VariationSpec) -> Self {
        Rectangles { x: s.param(0), y: s.param(1) }
    }

    #[inline(always)]
    pub(super) fn eval(&self, p: &Point, w: f64) -> (f64, f64) {
        let fold = |v: f64, size: f64| {
            if size == 0.0 { w * v } else { w * ((2.0 * (v / size).floor() + 1.0) * size - v) }
        };
        (fold(p.x, self.x), fold(p.y, self.y))
    }
}

/// 42: `(sin x / cos y, tan y)`.
#[inline(always)]
pub(super) fn tangent(p: &Point, w: f64) -> (f64, f64) {
    (w * p.x.sin() / p.y.cos(), w * p.y.tan())
}

/// 46: `(x, sec(wr) ∓ 1)`, the sign following `cos(wr)`.
#[inline(always)]
pub(super) fn secant2(p: &Point, w: f64) -> (f64, f64) {
    let cr = (w * p.sqrt).cos();
    let icr = 1.0 / cr;
    let y = if cr < 0.0 { w * (icr + 1.0) } else { w * (icr - 1.0) };
    (w * p.x, y)
}

/// 48: `p / |x² − y²|` (guarded).
#[inline(always)]
pub(super) fn cross(p: &Point, w: f64) -> (f64, f64) {
    let s = p.x * p.x - p.y * p.y;
    let r = w * (1.0 / (s * s + EPS)).sqrt();
    (p.x * r, p.y * r)
}

/// 49: disc with a rotation `rot` and a twist (flam3's `disc2_timespi`,
/// `disc2_sinadd`, `disc2_cosadd`, scaled up beyond ±2π as flam3 does).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Disc2 {
    pub(crate) times_pi: f64,
    pub(crate) sin_add: f64,
    pub(crate) cos_add: f64,
}

impl Disc2 {
    pub(super) fn new(s: &VariationSpec) -> Self {
        let (rot, twist) = (s.param(0), s.param(1));
        let (mut sin_add, mut cos_add) = twist.sin_cos();
        cos_add -= 1.0;
        if twist > 2.0 * PI {
            let k = 1.0 + twist - 2.0 * PI;
            cos_add *= k;
            sin_add *= k;
        }
        if twist < -2.0 * PI {
            let k = 1.0 + twist + 2.0 * PI;
            cos_add *= k;
            sin_add *= k;
        }
        Disc2 { times_pi: rot * PI, sin_add, cos_add }
    }

    #[inline(always)]
    pub(super) fn eval(&self, p: &Point, w: f64) -> (f64, f64) {
        let t = self.times_pi * (p.x + p.y);
        let (s, c) = t.sin_cos();
        let r = w * p.atan / PI;
        ((s + self.cos_add) * r, (c + self.sin_add) * r)
    }
}

/// 54: bent with its own factors for negative x and y.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Bent2 {
    pub(crate) x: f64,
    pub(crate) y: f64,
}

impl Bent2 {
    pub(super) fn new(s: &VariationSpec) -> Self {
        Bent2 { x: s.param(0), y: s.param(1) }
    }

    #[inline(always)]
    pub(super) fn eval(&self, p: &Point, w: f64) -> (f64, f64) {
        let nx = if p.x < 0.0 { p.x * self.x } else { p.x };
        let ny = if p.y < 0.0 { p.y * self.y } else { p.y };
        (w * nx, w * ny)
    }
}

/// 55: bipolar coordinates, the angle shifted by `−shift · π/2` and
/// wrapped into `[−π/2, π/2]`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Bipolar {
    pub(crate) shift: f64,
    /// `w · ¼ · 2/π` and `w · 2/π`.
    pub(crate) wx: f64,
    pub(crate) wy: f64,
}

impl Bipolar {
    pub(super) fn new(s: &VariationSpec) -> Self {
        let w = s.weight;
        Bipolar { shift: -FRAC_PI_2 * s.param(0), wx: w * 0.25 * FRAC_2_PI, wy: w * FRAC_2_PI }
    }

    #[inline(always)]
    pub(super) fn eval(&self, p: &Point) -> (f64, f64) {
        let x2y2 = p.sumsq;
        let t = x2y2 + 1.0;
        let x2 = 2.0 * p.x;
        let mut y = 0.5 * (2.0 * p.y).atan2(x2y2 - 1.0) + self.shift;
        if y > FRAC_PI_2 {
            y = -FRAC_PI_2 + (y + FRAC_PI_2) % PI;
        } else if y < -FRAC_PI_2 {
            y = FRAC_PI_2 - (FRAC_PI_2 - y) % PI;
        }
        (self.wx * ((t + x2) / (t - x2)).ln(), self.wy * y)
    }
}

/// 57: butterfly; flam3's constant is `4 / √(3π)`.
#[inline(always)]
pub(super) fn butterfly(p: &Point, w: f64) -> (f64, f64) {
    let wx = w * 1.302_940_031_741_119_7;
    let y2 = p.y * 2.0;
    let r = wx * ((p.y * p.x).abs() / (EPS + p.x * p.x + y2 * y2)).sqrt();
    (r * p.x, r * y2)
}

/// 58: a grid of cells of side `size`, shuffled so that the four
/// quadrants interleave (x flipped in y).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cell {
    pub(crate) size: f64,
    pub(crate) inv: f64,
}

impl Cell {
    pub(super) fn new(s: &VariationSpec) -> Self {
        let size = s.param(0);
        Cell { size, inv: 1.0 / size }
    }

    #[inline(always)]
    pub(super) fn eval(&self, p: &Point, w: f64) -> (f64, f64) {
        // flam3 keeps the cell numbers in ints.
        let mut x = c_int((p.x * self.inv).floor());
        let mut y = c_int((p.y * self.inv).floor());
        let dx = p.x - f64::from(x) * self.size;
        let dy = p.y - f64::from(y) * self.size;
        let interleave =
            |v: i32| if v >= 0 { v.wrapping_mul(2) } else { v.wrapping_mul(2).wrapping_add(1).wrapping_neg() };
        x = interleave(x);
        y = interleave(y);
        (w * (dx + f64::from(x) * self.size), -(w * (dy + f64::from(y) * self.size)))
    }
}

/// 60: gaussian bumps of amplitude `xamp`, `yamp` and widths `xlength`,
/// `ylength` (squared widths kept above 1e-20).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Curve {
    pub(crate) xamp: f64,
    pub(crate) yamp: f64,
    pub(crate) xlen2: f64,
    pub(crate) ylen2: f64,
}

impl Curve {
    pub(super) fn new(s: &VariationSpec) -> Self {
        let floor = |l: f64| {
            let l2 = l * l;
            if l2 < 1e-20 { 1e-20 } else { l2 }
        };
        Curve { xamp: s.param(0), yamp: s.param(1), xlen2: floor(s.param(2)), ylen2: floor(s.param(3)) }
    }

    #[inline(always)]
    pub(super) fn eval(&self, p: &Point, w: f64) -> (f64, f64) {
        (
            w * (p.x + self.xamp * (-p.y * p.y / self.xlen2).exp()),
            w * (p.y + self.yamp * (-p.x * p.x / self.ylen2).exp()),
        )
    }
}

/// 61: elliptic disc; flam3 scales by `1 / 11.57034632`.
#[inline(always)]
pub(super) fn edisc(p: &Point, w: f64) -> (f64, f64) {
    let tmp = p.sumsq + 1.0;
    let tmp2 = 2.0 * p.x;
    let r1 = (tmp + tmp2).sqrt();
    let r2 = (tmp - tmp2).sqrt();
    let xmax = (r1 + r2) * 0.5;
    let a1 = (xmax + (xmax - 1.0).sqrt()).ln();
    let a2 = -(p.x / xmax).acos();
    let w = w / 11.570_346_32;
    let (mut snv, csv) = a1.sin_cos();
    let snhu = a2.sinh();
    let cshu = a2.cosh();
    if p.y > 0.0 {
        snv = -snv;
    }
    (w * cshu * csv, w * snhu * snv)
}

/// 62: elliptic coordinates.
#[inline(always)]
pub(super) fn elliptic(p: &Point, w: f64) -> (f64, f64) {
    let tmp = p.sumsq + 1.0;
    let x2 = 2.0 * p.x;
    let xmax = 0.5 * ((tmp + x2).sqrt() + (tmp - x2).sqrt());
    let a = p.x / xmax;
    let b = 1.0 - a * a;
    let ssx = xmax - 1.0;
    let w = w / FRAC_PI_2;
    let b = if b < 0.0 { 0.0 } else { b.sqrt() };
    let ssx = if ssx < 0.0 { 0.0 } else { ssx.sqrt() };
    let l = w * (xmax + ssx).ln();
    (w * a.atan2(b), if p.y > 0.0 { l } else { -l })
}

/// 64: foci: `(sinh x, sin y) / (cosh x − cos y)`.
#[inline(always)]
pub(super) fn foci(p: &Point, w: f64) -> (f64, f64) {
    let expx = p.x.exp() * 0.5;
    let expnx = 0.25 / expx;
    let (s, c) = p.y.sin_cos();
    let t = w / (expx + expnx - c);
    (t * (expx - expnx), t * s)
}

/// 65: a turntable: inside the circle of radius `w` around `(x, −y)` the
/// point is spun (`spin`, plus `twist` towards the centre) and scaled by
/// `w`; outside it is pushed out by `space`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LazySusan {
    pub(crate) spin: f64,
    pub(crate) space: f64,
    pub(crate) twist: f64,
    pub(crate) x: f64,
    pub(crate) y: f64,
}

impl LazySusan {
    pub(super) fn new(s: &VariationSpec) -> Self {
        LazySusan { spin: s.param(0), space: s.param(1), twist: s.param(2), x: s.param(3), y: s.param(4) }
    }

    #[inline(always)]
    pub(super) fn eval(&self, p: &Point, w: f64) -> (f64, f64) {
        let x = p.x - self.x;
        let y = p.y + self.y;
        let r = (x * x + y * y).sqrt();
        if r < w {
            let a = y.atan2(x) + self.spin + self.twist * (w - r);
            let (s, c) = a.sin_cos();
            let r = w * r;
            (r * c + self.x, r * s - self.y)
        } else {
            let r = w * (1.0 + self.space / r);
            (r * x + self.x, r * y - self.y)
        }
    }
}

/// 66: inside the circle of radius `|w|` the point is pushed out to
/// `√(w²/r² − 1)` times itself; outside it is kept (times `w`).
#[inline(always)]
pub(super) fn loonie(p: &Point, w: f64) -> (f64, f64) {
    let w2 = w * w;
    if p.sumsq < w2 {
        let r = w * (w2 / p.sumsq - 1.0).sqrt();
        (r * p.x, r * p.y)
    } else {
        (w * p.x, w * p.y)
    }
}

/// 68: coordinates wrapped into `[−x, x]` and `[−y, y]` (C's `fmod`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Modulus {
    pub(crate) x: f64,
    pub(crate) y: f64,
}

impl Modulus {
    pub(super) fn new(s: &VariationSpec) -> Self {
        Modulus { x: s.param(0), y: s.param(1) }
    }

    #[inline(always)]
    pub(super) fn eval(&self, p: &Point, w: f64) -> (f64, f64) {
        let wrap = |v: f64, m: f64| {
            if v > m {
                w * (-m + (v + m) % (2.0 * m))
            } else if v < -m {
                w * (m - (m - v) % (2.0 * m))
            } else {
                w * v
            }
        };
        (wrap(p.x, self.x), wrap(p.y, self.y))
    }
}

/// 69: y mirrored inside a (damped) cosine trace.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Oscilloscope {
    pub(crate) separation: f64,
    /// `2π · frequency`.
    pub(crate) tpf: f64,
    pub(crate) amplitude: f64,
    pub(crate) damping: f64,
}

impl Oscilloscope {
    pub(super) fn new(s: &VariationSpec) -> Self {
        Oscilloscope { separation: s.param(0), tpf: 2.0 * PI * s.param(1), amplitude: s.param(2), damping: s.param(3) }
    }

    #[inline(always)]
    pub(super) fn eval(&self, p: &Point, w: f64) -> (f64, f64) {
        let t = if self.damping == 0.0 {
            self.amplitude * (self.tpf * p.x).cos() + self.separation
        } else {
            self.amplitude * (-p.x.abs() * self.damping).exp() * (self.tpf * p.x).cos() + self.separation
        };
        if p.y.abs() <= t { (w * p.x, -(w * p.y)) } else { (w * p.x, w * p.y) }
    }
}

/// 70: `(θ/π, ln(r²) / 2π)` with the xy angle.
#[inline(always)]
pub(super) fn polar2(p: &Point, w: f64) -> (f64, f64) {
    let p2v = w / PI;
    (p2v * p.atan, p2v / 2.0 * p.sumsq.ln())
}

/// 71: popcorn with its own amplitudes and frequency.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Popcorn2 {
    pub(crate) x: f64,
    pub(crate) y: f64,
    pub(crate) c: f64,
}

impl Popcorn2 {
    pub(super) fn new(s: &VariationSpec) -> Self {
        Popcorn2 { x: s.param(0), y: s.param(1), c: s.param(2) }
    }

    #[inline(always)]
    pub(super) fn eval(&self, p: &Point, w: f64) -> (f64, f64) {
        (w * (p.x + self.x * (p.y * self.c).tan().sin()), w * (p.y + self.y * (p.x * self.c).tan().sin()))
    }
}

/// 72: scry: `p / (r (r² + 1/(w + ε)))`; flam3 does not scale by `w`.
#[inline(always)]
pub(super) fn scry(p: &Point, w: f64) -> (f64, f64) {
    let r = 1.0 / (p.sqrt * (p.sumsq + 1.0 / (w + EPS)));
    (p.x * r, p.y * r)
}

/// 73: the halves pushed apart by `x`, `y` (hyperbolically), with
/// `xinside`, `yinside` pulling back.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Separation {
    pub(crate) x2: f64,
    pub(crate) xinside: f64,
    pub(crate) y2: f64,
    pub(crate) yinside: f64,
}

impl Separation {
    pub(super) fn new(s: &VariationSpec) -> Self {
        let (x, y) = (s.param(0), s.param(2));
        Separation { x2: x * x, xinside: s.param(1), y2: y * y, yinside: s.param(3) }
    }

    #[inline(always)]
    pub(super) fn eval(&self, p: &Point, w: f64) -> (f64, f64) {
        let part = |v: f64, s2: f64, inside: f64| {
            if v > 0.0 { w * ((v * v + s2).sqrt() - v * inside) } else { -(w * ((v * v + s2).sqrt() + v * inside)) }
        };
        (part(p.x, self.x2, self.xinside), part(p.y, self.y2, self.yinside))
    }
}

/// 74: y flipped where `cos(π x xsize) < 0`, x where `cos(π y ysize) < 0`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Split {
    pub(crate) xsize: f64,
    pub(crate) ysize: f64,
}

impl Split {
    pub(super) fn new(s: &VariationSpec) -> Self {
        Split { xsize: s.param(0), ysize: s.param(1) }
    }

    #[inline(always)]
    pub(super) fn eval(&self, p: &Point, w: f64) -> (f64, f64) {
        let y = if (p.x * self.xsize * PI).cos() >= 0.0 { w * p.y } else { -(w * p.y) };
        let x = if (p.y * self.ysize * PI).cos() >= 0.0 { w * p.x } else { -(w * p.x) };
        (x, y)
    }
}

/// 75: the half-planes moved apart by `x` and `y`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Splits {
    pub(crate) x: f64,
    pub(crate) y: f64,
}

impl Splits {
    pub(super) fn new(s: &VariationSpec) -> Self {
        Splits { x: s.param(0), y: s.param(1) }
    }

    #[inline(always)]
    pub(super) fn eval(&self, p: &Point, w: f64) -> (f64, f64) {
        let x = if p.x >= 0.0 { w * (p.x + self.x) } else { w * (p.x - self.x) };
        let y = if p.y >= 0.0 { w * (p.y + self.y) } else { w * (p.y - self.y) };
        (x, y)
    }
}

/// 76: vertical stripes (centred on integers) narrowed by `space` and
/// bent by `warp`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Stripes {
    pub(crate) one_minus_space: f64,
    pub(crate) warp: f64,
}

impl Stripes {
    pub(super) fn new(s: &VariationSpec) -> Self {
        Stripes { one_minus_space: 1.0 - s.param(0), warp: s.param(1) }
    }

    #[inline(always)]
    pub(super) fn eval(&self, p: &Point, w: f64) -> (f64, f64) {
        let round = (p.x + 0.5).floor();
        let off = p.x - round;
        (w * (off * self.one_minus_space + round), w * (p.y + off * off * self.warp))
    }
}

/// 81: waves with their own scales and frequencies.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Waves2 {
    pub(crate) scalex: f64,
    pub(crate) scaley: f64,
    pub(crate) freqx: f64,
    pub(crate) freqy: f64,
}

impl Waves2 {
    pub(super) fn new(s: &VariationSpec) -> Self {
        Waves2 { scalex: s.param(0), scaley: s.param(1), freqx: s.param(2), freqy: s.param(3) }
    }

    #[inline(always)]
    pub(super) fn eval(&self, p: &Point, w: f64) -> (f64, f64) {
        (w * (p.x + self.scalex * (p.y * self.freqx).sin()), w * (p.y + self.scaley * (p.x * self.freqy).sin()))
    }
}

/// 96: auger (Xyrus01).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Auger {
    pub(crate) freq: f64,
    pub(crate) weight: f64,
    pub(crate) sym: f64,
    pub(crate) scale: f64,
}

impl Auger {
    pub(super) fn new(s: &VariationSpec) -> Self {
        Auger { freq: s.param(0), weight: s.param(1), sym: s.param(2), scale: s.param(3) }
    }

    #[inline(always)]
    pub(super) fn eval(&self, p: &Point, w: f64) -> (f64, f64) {
        let s = (self.freq * p.x).sin();
        let t = (self.freq * p.y).sin();
        let dy = p.y + self.weight * (self.scale * s / 2.0 + p.y.abs() * s);
        let dx = p.x + self.weight * (self.scale * t / 2.0 + p.x.abs() * t);
        (w * (p.x + self.sym * (dx - p.x)), w * dy)
    }
}

/// 97: flux (meckie): the field lines between the poles `(±w, 0)`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Flux {
    /// `w · (2 + spread)`.
    pub(crate) scale: f64,
}

impl Flux {
    pub(super) fn new(s: &VariationSpec) -> Self {
        Flux { scale: s.weight * (2.0 + s.param(0)) }
    }

    #[inline(always)]
    pub(super) fn eval(&self, p: &Point, w: f64) -> (f64, f64) {
        let xpw = p.x + w;
        let xmw = p.x - w;
        let yy = p.y * p.y;
        let avgr = self.scale * ((yy + xpw * xpw).sqrt() / (yy + xmw * xmw).sqrt()).sqrt();
        let avga = (p.y.atan2(xmw) - p.y.atan2(xpw)) * 0.5;
        (avgr * avga.cos(), avgr * avga.sin())
    }
}

/// 98: the Möbius map `(a z + b) / (c z + d)` with complex coefficients.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Mobius {
    pub(crate) re_a: f64,
    pub(crate) re_b: f64,
    pub(crate) re_c: f64,
    pub(crate) re_d: f64,
    pub(crate) im_a: f64,
    pub(crate) im_b: f64,
    pub(crate) im_c: f64,
    pub(crate) im_d: f64,
}

impl Mobius {
    pub(super) fn new(s: &VariationSpec) -> Self {
        Mobius {
            re_a: s.param(0),
            re_b: s.param(1),
            re_c: s.param(2),
            re_d: s.param(3),
            im_a: s.param(4),
            im_b: s.param(5),
            im_c: s.param(6),
            im_d: s.param(7),
        }
    }

    #[inline(always)]
    pub(super) fn eval(&self, p: &Point, w: f64) -> (f64, f64) {
        let (x, y) = (p.x, p.y);
        let re_u = self.re_a * x - self.im_a * y + self.re_b;
        let im_u = self.re_a * y + self.im_a * x + self.im_b;
        let re_v = self.re_c * x - self.im_c * y + self.re_d;
        let im_v = self.re_c * y + self.im_c * x + self.im_d;
        let rad_v = w / (re_v * re_v + im_v * im_v);
        (rad_v * (re_u * re_v + im_u * im_v), rad_v * (im_u * re_v - re_u * im_v))
    }
}
