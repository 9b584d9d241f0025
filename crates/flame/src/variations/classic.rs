//! flam3's original variations, linear (0) … perspective (30).
//!
//! Every function returns the variation's contribution with the weight
//! `w` applied. The operations are kept in flam3's order and association
//! (`w * a * b` is `(w · a) · b`), so results round as flam3's do.

use std::f64::consts::{FRAC_1_PI, PI};

use warpmc_rng::RandomSource;

use super::{EPS, Point, VariationSpec, c_int};

/// 0: the identity.
#[inline(always)]
pub(super) fn linear(p: &Point, w: f64) -> (f64, f64) {
    (w * p.x, w * p.y)
}

/// 1: sine of each coordinate.
#[inline(always)]
pub(super) fn sinusoidal(p: &Point, w: f64) -> (f64, f64) {
    (w * p.x.sin(), w * p.y.sin())
}

/// 2: inversion in the unit circle, `p / (r² + ε)`.
#[inline(always)]
pub(super) fn spherical(p: &Point, w: f64) -> (f64, f64) {
    let k = w / (p.sumsq + EPS);
    (k * p.x, k * p.y)
}

/// 3: rotation by the angle `r²`.
#[inline(always)]
pub(super) fn swirl(p: &Point, w: f64) -> (f64, f64) {
    let (s, c) = p.sumsq.sin_cos();
    let nx = s * p.x - c * p.y;
    let ny = c * p.x + s * p.y;
    (w * nx, w * ny)
}

/// 4: `((x−y)(x+y), 2xy) / (r + ε)`.
#[inline(always)]
pub(super) fn horseshoe(p: &Point, w: f64) -> (f64, f64) {
    let k = w / (p.sqrt + EPS);
    ((p.x - p.y) * (p.x + p.y) * k, 2.0 * p.x * p.y * k)
}

/// 5: the xy angle over π and `r − 1`.
#[inline(always)]
pub(super) fn polar(p: &Point, w: f64) -> (f64, f64) {
    let nx = p.atan * FRAC_1_PI;
    let ny = p.sqrt - 1.0;
    (w * nx, w * ny)
}

/// 6: `r · (sin(θ + r), cos(θ − r))`.
#[inline(always)]
pub(super) fn handkerchief(p: &Point, w: f64) -> (f64, f64) {
    let (a, r) = (p.atan, p.sqrt);
    (w * r * (a + r).sin(), w * r * (a - r).cos())
}

/// 7: `r · (sin(rθ), −cos(rθ))`.
#[inline(always)]
pub(super) fn heart(p: &Point, w: f64) -> (f64, f64) {
    let a = p.sqrt * p.atan;
    let (s, c) = a.sin_cos();
    let r = w * p.sqrt;
    (r * s, -r * c)
}

/// 8: `θ/π · (sin πr, cos πr)`.
#[inline(always)]
pub(super) fn disc(p: &Point, w: f64) -> (f64, f64) {
    let a = p.atan * FRAC_1_PI;
    let (s, c) = (PI * p.sqrt).sin_cos();
    (w * s * a, w * c * a)
}

/// 9: `(cos θ + sin r, sin θ − cos r) / r`.
#[inline(always)]
pub(super) fn spiral(p: &Point, w: f64) -> (f64, f64) {
    let r = p.sqrt + EPS;
    let k = w / r;
    let (s, c) = r.sin_cos();
    (k * (p.cosa + s), k * (p.sina - c))
}

/// 10: `(sin θ / r, r cos θ)`.
#[inline(always)]
pub(super) fn hyperbolic(p: &Point, w: f64) -> (f64, f64) {
    let r = p.sqrt + EPS;
    (w * p.sina / r, w * p.cosa * r)
}

/// 11: `(sin θ cos r, cos θ sin r)`.
#[inline(always)]
pub(super) fn diamond(p: &Point, w: f64) -> (f64, f64) {
    let (s, c) = p.sqrt.sin_cos();
    (w * p.sina * c, w * p.cosa * s)
}

/// 12: cubes of `sin(θ + r)` and `cos(θ − r)`, summed and subtracted.
#[inline(always)]
pub(super) fn ex(p: &Point, w: f64) -> (f64, f64) {
    let (a, r) = (p.atan, p.sqrt);
    let n0 = (a + r).sin();
    let n1 = (a - r).cos();
    let m0 = n0 * n0 * n0 * r;
    let m1 = n1 * n1 * n1 * r;
    (w * (m0 + m1), w * (m0 - m1))
}

/// 13: a random one of the two square roots (one random bit).
#[inline(always)]
pub(super) fn julia<R: RandomSource>(p: &Point, w: f64, rng: &mut R) -> (f64, f64) {
    let mut a = 0.5 * p.atan;
    if rng.next_u32() & 1 != 0 {
        a += PI;
    }
    let r = w * p.sqrt.sqrt();
    let (s, c) = a.sin_cos();
    (r * c, r * s)
}

/// 14: negative x doubled, negative y halved.
#[inline(always)]
pub(super) fn bent(p: &Point, w: f64) -> (f64, f64) {
    let nx = if p.x < 0.0 { p.x * 2.0 } else { p.x };
    let ny = if p.y < 0.0 { p.y / 2.0 } else { p.y };
    (w * nx, w * ny)
}

/// 15: sine waves whose amplitudes are the xform's `b`, `e` and whose
/// frequencies are `1 / (c² + ε)`, `1 / (f² + ε)`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Waves {
    pub(crate) b: f64,
    pub(crate) e: f64,
    /// flam3's `waves_dx2`, `waves_dy2`.
    pub(crate) fx: f64,
    pub(crate) fy: f64,
}

impl Waves {
    pub(super) fn new(c: &[[f64; 2]; 3]) -> Self {
        let (dx, dy) = (c[2][0], c[2][1]);
        Waves { b: c[1][0], e: c[1][1], fx: 1.0 / (dx * dx + EPS), fy: 1.0 / (dy * dy + EPS) }
    }

    #[inline(always)]
    pub(super) fn eval(&self, p: &Point, w: f64) -> (f64, f64) {
        let nx = p.x + self.b * (p.y * self.fx).sin();
        let ny = p.y + self.e * (p.x * self.fy).sin();
        (w * nx, w * ny)
    }
}

/// 16: `2 / (r + 1) · (y, x)` (flam3 swaps the coordinates).
#[inline(always)]
pub(super) fn fisheye(p: &Point, w: f64) -> (f64, f64) {
    let k = 2.0 * w / (p.sqrt + 1.0);
    (k * p.y, k * p.x)
}

/// 17: popcorn, with the xform's translation `(c, f)` as amplitudes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Popcorn {
    pub(crate) c: f64,
    pub(crate) f: f64,
}

impl Popcorn {
    pub(super) fn new(c: &[[f64; 2]; 3]) -> Self {
        Popcorn { c: c[2][0], f: c[2][1] }
    }

    #[inline(always)]
    pub(super) fn eval(&self, p: &Point, w: f64) -> (f64, f64) {
        let dx = (3.0 * p.y).tan();
        let dy = (3.0 * p.x).tan();
        let nx = p.x + self.c * dx.sin();
        let ny = p.y + self.f * dy.sin();
        (w * nx, w * ny)
    }
}

/// 18: `e^(x−1) · (cos πy, sin πy)`.
#[inline(always)]
pub(super) fn exponential(p: &Point, w: f64) -> (f64, f64) {
    let k = w * (p.x - 1.0).exp();
    let (s, c) = (PI * p.y).sin_cos();
    (k * c, k * s)
}

/// 19: `r^(sin θ) · (cos θ, sin θ)` with flam3's sina/cosa.
#[inline(always)]
pub(super) fn power(p: &Point, w: f64) -> (f64, f64) {
    let r = w * p.sqrt.powf(p.sina);
    (r * p.cosa, r * p.sina)
}

/// 20: complex cosine of `(πx, y)`, flam3's form.
#[inline(always)]
pub(super) fn cosine(p: &Point, w: f64) -> (f64, f64) {
    let (s, c) = (p.x * PI).sin_cos();
    let nx = c * p.y.cosh();
    let ny = -s * p.y.sinh();
    (w * nx, w * ny)
}

/// 21: rings of width `c² + ε` (the xform's `c`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rings {
    pub(crate) dx: f64,
    pub(crate) two_dx: f64,
    pub(crate) one_minus_dx: f64,
}

impl Rings {
    pub(super) fn new(c: &[[f64; 2]; 3]) -> Self {
        let dx = c[2][0] * c[2][0] + EPS;
        Rings { dx, two_dx: 2.0 * dx, one_minus_dx: 1.0 - dx }
    }

    #[inline(always)]
    pub(super) fn eval(&self, p: &Point, w: f64) -> (f64, f64) {
        let r = p.sqrt;
        let r = w * ((r + self.dx) % self.two_dx - self.dx + r * self.one_minus_dx);
        (r * p.cosa, r * p.sina)
    }
}

/// 22: fan blades of angle `π(c² + ε)` offset by `f` (the xform's `c`, `f`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fan {
    pub(crate) dx: f64,
    pub(crate) dy: f64,
    pub(crate) half_dx: f64,
}

impl Fan {
    pub(super) fn new(c: &[[f64; 2]; 3]) -> Self {
        let dx = PI * (c[2][0] * c[2][0] + EPS);
        Fan { dx, dy: c[2][1], half_dx: 0.5 * dx }
    }

    #[inline(always)]
    pub(super) fn eval(&self, p: &Point, w: f64) -> (f64, f64) {
        let mut a = p.atan;
        let r = w * p.sqrt;
        a += if (a + self.dy) % self.dx > self.half_dx { -self.half_dx } else { self.half_dx };
        let (s, c) = a.sin_cos();
        (r * c, r * s)
    }
}

/// 23: radius modulated between low and high by `sin(waves · θ)`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Blob {
    pub(crate) low: f64,
    pub(crate) diff: f64,
    pub(crate) waves: f64,
}

impl Blob {
    pub(super) fn new(s: &VariationSpec) -> Self {
        let (low, high, waves) = (s.param(0), s.param(1), s.param(2));
        Blob { low, diff: high - low, waves }
    }

    #[inline(always)]
    pub(super) fn eval(&self, p: &Point, w: f64) -> (f64, f64) {
        let r = p.sqrt * (self.low + self.diff * (0.5 + 0.5 * (self.waves * p.atan).sin()));
        (w * p.sina * r, w * p.cosa * r)
    }
}

/// 24: Peter de Jong's map.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pdj {
    pub(crate) a: f64,
    pub(crate) b: f64,
    pub(crate) c: f64,
    pub(crate) d: f64,
}

impl Pdj {
    pub(super) fn new(s: &VariationSpec) -> Self {
        Pdj { a: s.param(0), b: s.param(1), c: s.param(2), d: s.param(3) }
    }

    #[inline(always)]
    pub(super) fn eval(&self, p: &Point, w: f64) -> (f64, f64) {
        let nx1 = (self.b * p.x).cos();
        let nx2 = (self.c * p.x).sin();
        let ny1 = (self.a * p.y).sin();
        let ny2 = (self.d * p.y).cos();
        (w * (ny1 - nx1), w * (nx2 - ny2))
    }
}

/// 25: fan with its own parameters; the sector is found by truncation.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fan2 {
    pub(crate) dx: f64,
    pub(crate) dy: f64,
    pub(crate) half_dx: f64,
}

impl Fan2 {
    pub(super) fn new(s: &VariationSpec) -> Self {
        let (fx, fy) = (s.param(0), s.param(1));
        let dx = PI * (fx * fx + EPS);
        Fan2 { dx, dy: fy, half_dx: 0.5 * dx }
    }

    #[inline(always)]
    pub(super) fn eval(&self, p: &Point, w: f64) -> (f64, f64) {
        let mut a = p.atan;
        let r = w * p.sqrt;
        let t = a + self.dy - self.dx * f64::from(c_int((a + self.dy) / self.dx));
        if t > self.half_dx {
            a -= self.half_dx;
        } else {
            a += self.half_dx;
        }
        let (s, c) = a.sin_cos();
        (r * s, r * c)
    }
}

/// 26: rings with their own width, by truncation.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rings2 {
    pub(crate) dx: f64,
    pub(crate) two_dx: f64,
    pub(crate) minus_two_dx: f64,
    pub(crate) one_minus_dx: f64,
}

impl Rings2 {
    pub(super) fn new(s: &VariationSpec) -> Self {
        let v = s.param(0);
        let dx = v * v + EPS;
        Rings2 { dx, two_dx: 2.0 * dx, minus_two_dx: -2.0 * dx, one_minus_dx: 1.0 - dx }
    }

    #[inline(always)]
    pub(super) fn eval(&self, p: &Point, w: f64) -> (f64, f64) {
        let mut r = p.sqrt;
        r += self.minus_two_dx * f64::from(c_int((r + self.dx) / self.two_dx)) + r * self.one_minus_dx;
        (w * p.sina * r, w * p.cosa * r)
    }
}

/// 27: `2 / (r + 1) · (x, y)`.
#[inline(always)]
pub(super) fn eyefish(p: &Point, w: f64) -> (f64, f64) {
    let k = (w * 2.0) / (p.sqrt + 1.0);
    (k * p.x, k * p.y)
}

/// 28: `p / (r²/4 + 1)`.
#[inline(always)]
pub(super) fn bubble(p: &Point, w: f64) -> (f64, f64) {
    let k = w / (0.25 * p.sumsq + 1.0);
    (k * p.x, k * p.y)
}

/// 29: `(sin x, y)`.
#[inline(always)]
pub(super) fn cylinder(p: &Point, w: f64) -> (f64, f64) {
    (w * p.x.sin(), w * p.y)
}

/// 30: the plane seen in perspective, tilted by `angle · π/2` at distance
/// `dist`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Perspective {
    pub(crate) dist: f64,
    /// flam3's `persp_vsin`, `persp_vfcos`.
    pub(crate) vsin: f64,
    pub(crate) vfcos: f64,
}

impl Perspective {
    pub(super) fn new(s: &VariationSpec) -> Self {
        let (angle, dist) = (s.param(0), s.param(1));
        let ang = angle * PI / 2.0;
        Perspective { dist, vsin: ang.sin(), vfcos: dist * ang.cos() }
    }

    #[inline(always)]
    pub(super) fn eval(&self, p: &Point, w: f64) -> (f64, f64) {
        let t = 1.0 / (self.dist - p.y * self.vsin);
        (w * self.dist * p.x * t, w * self.vfcos * p.y * t)
    }
}
