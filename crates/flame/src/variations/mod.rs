//! The 99 variations of flam3 3.1.1 (linear … mobius), with flam3's
//! formulas, parameter names and defaults.
//!
//! A variation maps the point `(tx, ty)` (after the xform's pre-affine map)
//! to a new point; an xform sums its variations, each scaled by its weight.
//! [`VariationSet`] prepares one xform's variations once (per-xform
//! constants such as julian's root count or disc2's twist terms) and applies
//! them per point. The angle and radius helpers that several variations
//! share are computed only when a variation in the set needs them, with
//! flam3's conventions: `atan2(tx, ty)` for the "xy" angle, `atan2(ty, tx)`
//! for the "yx" one, and sin/cos of the angle as `tx / r`, `ty / r`.
//!
//! Random variations draw their uniforms from the caller's generator, in the
//! order flam3 draws them.

use std::f64::consts::{FRAC_PI_2, FRAC_PI_4, PI};

use warpmc_rng::RandomSource;

use crate::genome::Affine;

/// Number of flam3 variations.
pub const VARIATION_COUNT: usize = 99;

/// A parameter of a variation: its XML attribute name and flam3's default.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ParamSpec {
    /// The attribute name, e.g. `julian_power`.
    pub name: &'static str,
    /// flam3's default value.
    pub default: f64,
}

include!("table.rs");

/// One of flam3's variations, identified by its index in flam3's order
/// (0 = linear … 98 = mobius).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VariationKind(u8);

impl VariationKind {
    /// The variation with flam3 index `i`.
    pub fn from_index(i: usize) -> Option<Self> {
        (i < VARIATION_COUNT).then_some(VariationKind(i as u8))
    }
    /// The variation called `name` (flam3's spelling).
    pub fn from_name(name: &str) -> Option<Self> {
        TABLE.iter().position(|(n, _)| *n == name).map(|i| VariationKind(i as u8))
    }
    /// flam3's name.
    pub fn name(self) -> &'static str {
        TABLE[self.0 as usize].0
    }
    /// flam3's index.
    pub fn index(self) -> usize {
        self.0 as usize
    }
    /// The parameters, in a fixed order (the order of [`VariationSpec::params`]).
    pub fn params(self) -> &'static [ParamSpec] {
        TABLE[self.0 as usize].1
    }
    /// All 99, in flam3's order.
    pub fn all() -> impl Iterator<Item = Self> {
        (0..VARIATION_COUNT).map(|i| VariationKind(i as u8))
    }
}

/// The variation and parameter index an xform attribute such as
/// `julian_power` (or an alias flam3 accepts, such as `oscilloscope_*`)
/// belongs to.
pub fn param_owner(attribute: &str) -> Option<(VariationKind, usize)> {
    let renamed;
    let attribute = match attribute.strip_prefix("oscilloscope_") {
        Some(rest) => {
            renamed = format!("oscope_{rest}");
            renamed.as_str()
        }
        None => attribute,
    };
    TABLE
        .iter()
        .enumerate()
        .find_map(|(k, (_, ps))| ps.iter().position(|p| p.name == attribute).map(|i| (VariationKind(k as u8), i)))
}

/// A variation as a genome uses it: weight and parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct VariationSpec {
    /// Which variation.
    pub kind: VariationKind,
    /// Its weight in the xform.
    pub weight: f64,
    /// Parameter values, in the order of [`VariationKind::params`].
    pub params: Vec<f64>,
}

impl VariationSpec {
    /// `kind` with weight `weight` and flam3's default parameters.
    pub fn new(kind: VariationKind, weight: f64) -> Self {
        VariationSpec { kind, weight, params: kind.params().iter().map(|p| p.default).collect() }
    }
}

const EPS: f64 = 1e-10;
const PRE_BLUR: u8 = 67;

// Which shared helpers each variation reads.
const NEEDS_ATAN_XY: &[u8] = &[5, 6, 7, 8, 12, 13, 22, 23, 25, 49, 70];
const NEEDS_ANGLES: &[u8] = &[9, 10, 11, 19, 21, 23, 26];
const NEEDS_ATAN_YX: &[u8] = &[32, 33, 36, 38, 50, 51, 59, 63, 77, 78, 79, 80, 83];

/// One prepared variation: its index, weight, and parameters followed by
/// the per-xform constants derived from them.
#[derive(Clone, Copy, Debug)]
struct Prepared {
    kind: u8,
    weight: f64,
    /// Parameters in `params()` order, then derived constants.
    p: [f64; 12],
}

/// The variations of one xform, ready to apply: per-xform constants
/// precomputed (as flam3's `xform_precalc` does).
#[derive(Clone, Debug)]
pub struct VariationSet {
    items: Vec<Prepared>,
    pre_blur: Option<f64>,
    atan_xy: bool,
    atan_yx: bool,
    angles: bool,
}

impl VariationSet {
    /// Prepares `specs` for an xform whose pre-affine map is `coefs`
    /// (several variations read the xform's coefficients).
    pub fn new(specs: &[VariationSpec], coefs: &Affine) -> Self {
        let mut items = Vec::new();
        let mut pre_blur = None;
        let c = &coefs.c;
        for s in specs {
            if s.weight == 0.0 {
                continue;
            }
            let k = s.kind.0;
            if k == PRE_BLUR {
                pre_blur = Some(pre_blur.unwrap_or(0.0) + s.weight);
                continue;
            }
            let mut p = [0.0; 12];
            let n = s.kind.params().len();
            for (i, d) in s.kind.params().iter().enumerate() {
                p[i] = s.params.get(i).copied().unwrap_or(d.default);
            }
            match k {
                // waves: 1 / (c² + ε) of the translation terms.
                15 => {
                    p[0] = c[1][0];
                    p[1] = c[1][1];
                    p[2] = 1.0 / (c[2][0] * c[2][0] + EPS);
                    p[3] = 1.0 / (c[2][1] * c[2][1] + EPS);
                }
                17 | 21 | 22 => {
                    p[0] = c[2][0];
                    p[1] = c[2][1];
                }
                // perspective: sin of the angle, dist·cos.
                30 => {
                    let ang = p[0] * PI / 2.0;
                    p[n] = ang.sin();
                    p[n + 1] = p[1] * ang.cos();
                }
                // julian / juliascope: root count |power|, exponent dist/power/2.
                32 | 33 => {
                    p[n] = p[0].abs();
                    p[n + 1] = p[1] / p[0] / 2.0;
                }
                // radial_blur: spin and zoom parts of the angle.
                36 => {
                    let (s, c) = (p[0] * PI / 2.0).sin_cos();
                    p[n] = s;
                    p[n + 1] = c;
                }
                // disc2: rot·π and the twist's sin/cos terms.
                49 => {
                    let add = p[1];
                    let (mut sinadd, mut cosadd) = add.sin_cos();
                    cosadd -= 1.0;
                    if add > 2.0 * PI {
                        let k = 1.0 + add - 2.0 * PI;
                        cosadd *= k;
                        sinadd *= k;
                    }
                    if add < -2.0 * PI {
                        let k = 1.0 + add + 2.0 * PI;
                        cosadd *= k;
                        sinadd *= k;
                    }
                    p[n] = p[0] * PI;
                    p[n + 1] = sinadd;
                    p[n + 2] = cosadd;
                }
                // super_shape: rnd clamped to [0, 1], m/4, −1/n1.
                50 => {
                    p[0] = p[0].clamp(0.0, 1.0);
                    p[n] = p[1] / 4.0;
                    p[n + 1] = -1.0 / p[2];
                }
                // wedge_julia: angle compensation, root count, exponent.
                78 => {
                    p[n] = 1.0 - p[0] * p[1] * std::f64::consts::FRAC_1_PI * 0.5;
                    p[n + 1] = p[2].abs();
                    p[n + 2] = p[3] / p[2] / 2.0;
                }
                _ => {}
            }
            items.push(Prepared { kind: k, weight: s.weight, p });
        }
        let any = |list: &[u8]| items.iter().any(|it| list.contains(&it.kind));
        VariationSet {
            atan_xy: any(NEEDS_ATAN_XY),
            atan_yx: any(NEEDS_ATAN_YX),
            angles: any(NEEDS_ANGLES),
            items,
            pre_blur,
        }
    }

    /// Applies the variations to the pre-affine-transformed point `(tx, ty)`
    /// and returns the weighted sum (before the post map). Random variations
    /// draw from `rng`.
    #[inline]
    pub fn apply<R: RandomSource>(&self, mut tx: f64, mut ty: f64, rng: &mut R) -> (f64, f64) {
        if let Some(w) = self.pre_blur {
            let g = w * (rng.next_f64() + rng.next_f64() + rng.next_f64() + rng.next_f64() - 2.0);
            let a = rng.next_f64() * 2.0 * PI;
            let (s, c) = a.sin_cos();
            tx += g * c;
            ty += g * s;
        }
        let sumsq = tx * tx + ty * ty;
        let sqrt = sumsq.sqrt();
        let atan = if self.atan_xy { tx.atan2(ty) } else { 0.0 };
        let atanyx = if self.atan_yx { ty.atan2(tx) } else { 0.0 };
        let (sina, cosa) = if self.angles { (tx / sqrt, ty / sqrt) } else { (0.0, 0.0) };
        let h = Helpers { tx, ty, sumsq, sqrt, atan, atanyx, sina, cosa };
        let (mut x, mut y) = (0.0, 0.0);
        for it in &self.items {
            let (dx, dy) = one(it, &h, rng);
            x += dx;
            y += dy;
        }
        (x, y)
    }
}

/// Per-point values shared by the variations.
struct Helpers {
    tx: f64,
    ty: f64,
    sumsq: f64,
    sqrt: f64,
    atan: f64,
    atanyx: f64,
    sina: f64,
    cosa: f64,
}

#[inline(always)]
fn r01<R: RandomSource>(rng: &mut R) -> f64 {
    rng.next_f64()
}

/// C's `fmod`: the remainder with the sign of `a`.
#[inline(always)]
fn fmod(a: f64, b: f64) -> f64 {
    a % b
}

/// The contribution `(dx, dy)` of one variation (weight included).
///
/// Not inlined on purpose: inlined into the loop, the optimiser hoists
/// subexpressions shared by several arms (`ln(r²)`, `sin_cos(tx)`, …) above
/// the match, and every point paid for them (measured 4× slower).
#[inline(never)]
fn one<R: RandomSource>(it: &Prepared, h: &Helpers, rng: &mut R) -> (f64, f64) {
    let w = it.weight;
    let p = &it.p;
    let (tx, ty) = (h.tx, h.ty);
    match it.kind {
        0 => (w * tx, w * ty),
        1 => (w * tx.sin(), w * ty.sin()),
        2 => {
            let r2 = w / (h.sumsq + EPS);
            (r2 * tx, r2 * ty)
        }
        3 => {
            let (c1, c2) = h.sumsq.sin_cos();
            (w * (c1 * tx - c2 * ty), w * (c2 * tx + c1 * ty))
        }
        4 => {
            let r = w / (h.sqrt + EPS);
            ((tx - ty) * (tx + ty) * r, 2.0 * tx * ty * r)
        }
        5 => (w * h.atan * std::f64::consts::FRAC_1_PI, w * (h.sqrt - 1.0)),
        6 => (w * h.sqrt * (h.atan + h.sqrt).sin(), w * h.sqrt * (h.atan - h.sqrt).cos()),
        7 => {
            let a = h.sqrt * h.atan;
            let (sa, ca) = a.sin_cos();
            let r = w * h.sqrt;
            (r * sa, -r * ca)
        }
        8 => {
            let a = h.atan * std::f64::consts::FRAC_1_PI;
            let (sr, cr) = (PI * h.sqrt).sin_cos();
            (w * sr * a, w * cr * a)
        }
        9 => {
            let r = h.sqrt + EPS;
            let r1 = w / r;
            let (sr, cr) = r.sin_cos();
            (r1 * (h.cosa + sr), r1 * (h.sina - cr))
        }
        10 => {
            let r = h.sqrt + EPS;
            (w * h.sina / r, w * h.cosa * r)
        }
        11 => {
            let (sr, cr) = h.sqrt.sin_cos();
            (w * h.sina * cr, w * h.cosa * sr)
        }
        12 => {
            let n0 = (h.atan + h.sqrt).sin();
            let n1 = (h.atan - h.sqrt).cos();
            let m0 = n0 * n0 * n0 * h.sqrt;
            let m1 = n1 * n1 * n1 * h.sqrt;
            (w * (m0 + m1), w * (m0 - m1))
        }
        13 => {
            let mut a = 0.5 * h.atan;
            if rng.next_u32() & 1 == 1 {
                a += PI;
            }
            let r = w * h.sqrt.sqrt();
            let (sa, ca) = a.sin_cos();
            (r * ca, r * sa)
        }
        14 => {
            let nx = if tx < 0.0 { tx * 2.0 } else { tx };
            let ny = if ty < 0.0 { ty / 2.0 } else { ty };
            (w * nx, w * ny)
        }
        15 => (w * (tx + p[0] * (ty * p[2]).sin()), w * (ty + p[1] * (tx * p[3]).sin())),
        16 => {
            let r = 2.0 * w / (h.sqrt + 1.0);
            (r * ty, r * tx)
        }
        17 => {
            let dx = (3.0 * ty).tan();
            let dy = (3.0 * tx).tan();
            (w * (tx + p[0] * dx.sin()), w * (ty + p[1] * dy.sin()))
        }
        18 => {
            let dx = w * (tx - 1.0).exp();
            let (s, c) = (PI * ty).sin_cos();
            (dx * c, dx * s)
        }
        19 => {
            let r = w * h.sqrt.powf(h.sina);
            (r * h.cosa, r * h.sina)
        }
        20 => {
            let (sa, ca) = (tx * PI).sin_cos();
            (w * ca * ty.cosh(), -w * sa * ty.sinh())
        }
        21 => {
            let dx = p[0] * p[0] + EPS;
            let r = w * (fmod(h.sqrt + dx, 2.0 * dx) - dx + h.sqrt * (1.0 - dx));
            (r * h.cosa, r * h.sina)
        }
        22 => {
            let dx = PI * (p[0] * p[0] + EPS);
            let dy = p[1];
            let dx2 = 0.5 * dx;
            let mut a = h.atan;
            a += if fmod(a + dy, dx) > dx2 { -dx2 } else { dx2 };
            let r = w * h.sqrt;
            let (sa, ca) = a.sin_cos();
            (r * ca, r * sa)
        }
        23 => {
            let (low, high, waves) = (p[0], p[1], p[2]);
            let r = h.sqrt * (low + (high - low) * (0.5 + 0.5 * (waves * h.atan).sin()));
            (w * h.sina * r, w * h.cosa * r)
        }
        24 => {
            let nx1 = (p[1] * tx).cos();
            let nx2 = (p[2] * tx).sin();
            let ny1 = (p[0] * ty).sin();
            let ny2 = (p[3] * ty).cos();
            (w * (ny1 - nx1), w * (nx2 - ny2))
        }
        25 => {
            let dy = p[1];
            let dx = PI * (p[0] * p[0] + EPS);
            let dx2 = 0.5 * dx;
            let mut a = h.atan;
            let t = a + dy - dx * (((a + dy) / dx) as i64 as f64);
            if t > dx2 {
                a -= dx2;
            } else {
                a += dx2;
            }
            let r = w * h.sqrt;
            let (sa, ca) = a.sin_cos();
            (r * sa, r * ca)
        }
        26 => {
            let mut r = h.sqrt;
            let dx = p[0] * p[0] + EPS;
            r += -2.0 * dx * (((r + dx) / (2.0 * dx)) as i64 as f64) + r * (1.0 - dx);
            (w * h.sina * r, w * h.cosa * r)
        }
        27 => {
            let r = (w * 2.0) / (h.sqrt + 1.0);
            (r * tx, r * ty)
        }
        28 => {
            let r = w / (0.25 * h.sumsq + 1.0);
            (r * tx, r * ty)
        }
        29 => (w * tx.sin(), w * ty),
        30 => {
            let (dist, vsin, vfcos) = (p[1], p[2], p[3]);
            let t = 1.0 / (dist - ty * vsin);
            (w * dist * tx * t, w * vfcos * ty * t)
        }
        31 => {
            let a = r01(rng) * 2.0 * PI;
            let (s, c) = a.sin_cos();
            let r = w * r01(rng);
            (tx * r * c, ty * r * s)
        }
        32 => {
            let (power, rn, cn) = (p[0], p[2], p[3]);
            let t = (rn * r01(rng)) as i64 as f64;
            let a = (h.atanyx + 2.0 * PI * t) / power;
            let r = w * h.sumsq.powf(cn);
            let (s, c) = a.sin_cos();
            (r * c, r * s)
        }
        33 => {
            let (power, rn, cn) = (p[0], p[2], p[3]);
            let t = (rn * r01(rng)) as i64;
            let a = if t & 1 == 0 {
                (2.0 * PI * t as f64 + h.atanyx) / power
            } else {
                (2.0 * PI * t as f64 - h.atanyx) / power
            };
            let (s, c) = a.sin_cos();
            let r = w * h.sumsq.powf(cn);
            (r * c, r * s)
        }
        34 => {
            let a = r01(rng) * 2.0 * PI;
            let (s, c) = a.sin_cos();
            let r = w * r01(rng);
            (r * c, r * s)
        }
        35 => {
            let a = r01(rng) * 2.0 * PI;
            let (s, c) = a.sin_cos();
            let r = w * (r01(rng) + r01(rng) + r01(rng) + r01(rng) - 2.0);
            (r * c, r * s)
        }
        36 => {
            let (spin, zoom) = (p[1], p[2]);
            let g = w * (r01(rng) + r01(rng) + r01(rng) + r01(rng) - 2.0);
            let ra = h.sqrt;
            let a = h.atanyx + spin * g;
            let (sa, ca) = a.sin_cos();
            let rz = zoom * g - 1.0;
            (ra * ca + rz * tx, ra * sa + rz * ty)
        }
        37 => {
            let (slices, rotation, thickness) = (p[0], p[1], p[2]);
            let sl = (r01(rng) * slices + 0.5) as i64 as f64;
            let a = rotation + 2.0 * PI * (sl + r01(rng) * thickness) / slices;
            let r = w * r01(rng);
            let (sa, ca) = a.sin_cos();
            (r * ca, r * sa)
        }
        38 => {
            let (sides, power, circle, corners) = (p[0], p[1], p[2], p[3]);
            let r_factor = h.sumsq.powf(power / 2.0);
            let theta = h.atanyx;
            let b = 2.0 * PI / sides;
            let mut phi = theta - b * (theta / b).floor();
            if phi > b / 2.0 {
                phi -= b;
            }
            let mut amp = corners * (1.0 / (phi.cos() + EPS) - 1.0) + circle;
            amp /= r_factor + EPS;
            (w * tx * amp, w * ty * amp)
        }
        39 => {
            let (c1, c2) = (p[0], p[1]);
            let re = 1.0 + c1 * tx + c2 * (tx * tx - ty * ty);
            let im = c1 * ty + 2.0 * c2 * tx * ty;
            let r = w / (re * re + im * im);
            ((tx * re + ty * im) * r, (ty * re - tx * im) * r)
        }
        40 => {
            let (rx, ry) = (p[0], p[1]);
            let x = if rx == 0.0 { w * tx } else { w * ((2.0 * (tx / rx).floor() + 1.0) * rx - tx) };
            let y = if ry == 0.0 { w * ty } else { w * ((2.0 * (ty / ry).floor() + 1.0) * ry - ty) };
            (x, y)
        }
        41 => {
            let a = r01(rng) * w * PI;
            let (s, c) = a.sin_cos();
            (w * s, w * (s * s) / c)
        }
        42 => (w * tx.sin() / ty.cos(), w * ty.tan()),
        43 => (w * (r01(rng) - 0.5), w * (r01(rng) - 0.5)),
        44 => {
            let a = w * r01(rng) * PI;
            let r = w / (h.sumsq + EPS);
            let tanr = w * a.tan() * r;
            (tanr * tx.cos(), tanr * ty.sin())
        }
        45 => {
            let r = r01(rng) * w * h.sqrt;
            let (s, c) = r.sin_cos();
            (w * tx * (c + s), w * tx * (c - s))
        }
        46 => {
            let r = w * h.sqrt;
            let cr = r.cos();
            let icr = 1.0 / cr;
            let y = if cr < 0.0 { w * (icr + 1.0) } else { w * (icr - 1.0) };
            (w * tx, y)
        }
        47 => {
            let r = r01(rng) * w * h.sqrt;
            let (s, c) = r.sin_cos();
            let mut diff = (s * s).log10() + c;
            if diff.is_nan() || !(-1e10..=1e10).contains(&diff) {
                diff = -30.0;
            }
            (w * tx * diff, w * tx * (diff - s * PI))
        }
        48 => {
            let s = tx * tx - ty * ty;
            let r = w * (1.0 / (s * s + EPS)).sqrt();
            (tx * r, ty * r)
        }
        49 => {
            let (timespi, sinadd, cosadd) = (p[2], p[3], p[4]);
            let t = timespi * (tx + ty);
            let (s, c) = t.sin_cos();
            let r = w * h.atan / PI;
            ((s + cosadd) * r, (c + sinadd) * r)
        }
        50 => {
            let (rnd, n2, n3, holes, pm4, pneg1n1) = (p[0], p[3], p[4], p[5], p[6], p[7]);
            let theta = pm4 * h.atanyx + FRAC_PI_4;
            let (st, ct) = theta.sin_cos();
            let t1 = ct.abs().powf(n2);
            let t2 = st.abs().powf(n3);
            let r = w * ((rnd * r01(rng) + (1.0 - rnd) * h.sqrt) - holes) * (t1 + t2).powf(pneg1n1) / h.sqrt;
            (r * tx, r * ty)
        }
        51 => {
            let (petals, holes) = (p[0], p[1]);
            let r = w * (r01(rng) - holes) * (petals * h.atanyx).cos() / h.sqrt;
            (r * tx, r * ty)
        }
        52 => {
            let (ecc, holes) = (p[0], p[1]);
            let ct = tx / h.sqrt;
            let r = w * (r01(rng) - holes) * ecc / (1.0 + ecc * ct) / h.sqrt;
            (r * tx, r * ty)
        }
        53 => {
            let (height, width) = (p[0], p[1]);
            let (sr, cr) = h.sqrt.sin_cos();
            let x = height * w * sr * sr * r01(rng);
            let y = width * w * cr * r01(rng);
            (x, y)
        }
        54 => {
            let nx = if tx < 0.0 { tx * p[0] } else { tx };
            let ny = if ty < 0.0 { ty * p[1] } else { ty };
            (w * nx, w * ny)
        }
        55 => {
            let x2y2 = h.sumsq;
            let t = x2y2 + 1.0;
            let x2 = 2.0 * tx;
            let ps = -FRAC_PI_2 * p[0];
            let mut y = 0.5 * (2.0 * ty).atan2(x2y2 - 1.0) + ps;
            if y > FRAC_PI_2 {
                y = -FRAC_PI_2 + fmod(y + FRAC_PI_2, PI);
            } else if y < -FRAC_PI_2 {
                y = FRAC_PI_2 - fmod(FRAC_PI_2 - y, PI);
            }
            let two_over_pi = 2.0 / PI;
            (w * 0.25 * two_over_pi * ((t + x2) / (t - x2)).ln(), w * two_over_pi * y)
        }
        56 => {
            // C's rint: round half to even.
            let rx = tx.round_ties_even();
            let ry = ty.round_ties_even();
            let ox = tx - rx;
            let oy = ty - ry;
            if r01(rng) >= 0.75 {
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
        57 => {
            let wx = w * 1.302_940_031_741_119_8;
            let y2 = ty * 2.0;
            let r = wx * ((ty * tx).abs() / (EPS + tx * tx + y2 * y2)).sqrt();
            (r * tx, r * y2)
        }
        58 => {
            let size = p[0];
            let inv = 1.0 / size;
            let mut x = (tx * inv).floor() as i64;
            let mut y = (ty * inv).floor() as i64;
            let dx = tx - x as f64 * size;
            let dy = ty - y as f64 * size;
            if y >= 0 {
                y *= 2;
            } else {
                y = -(2 * y + 1);
            }
            if x >= 0 {
                x *= 2;
            } else {
                x = -(2 * x + 1);
            }
            (w * (dx + x as f64 * size), -w * (dy + y as f64 * size))
        }
        59 => {
            let (cr, ci, power) = (p[0], p[1], p[2]);
            let a = h.atanyx;
            let lnr = 0.5 * h.sumsq.ln();
            let va = 2.0 * PI / power;
            let vc = cr / power;
            let vd = ci / power;
            let ang = vc * a + vd * lnr + va * (power * r01(rng)).floor();
            let m = w * (vc * lnr - vd * a).exp();
            let (sa, ca) = ang.sin_cos();
            (m * ca, m * sa)
        }
        60 => {
            let (xamp, yamp, xlen, ylen) = (p[0], p[1], p[2], p[3]);
            let pcx = (xlen * xlen).max(1e-20);
            let pcy = (ylen * ylen).max(1e-20);
            (w * (tx + xamp * (-ty * ty / pcx).exp()), w * (ty + yamp * (-tx * tx / pcy).exp()))
        }
        61 => {
            let tmp = h.sumsq + 1.0;
            let tmp2 = 2.0 * tx;
            let r1 = (tmp + tmp2).sqrt();
            let r2 = (tmp - tmp2).sqrt();
            let xmax = (r1 + r2) * 0.5;
            let a1 = (xmax + (xmax - 1.0).sqrt()).ln();
            let a2 = -(tx / xmax).acos();
            let ww = w / 11.57034632;
            let (mut snv, csv) = a1.sin_cos();
            let snhu = a2.sinh();
            let cshu = a2.cosh();
            if ty > 0.0 {
                snv = -snv;
            }
            (ww * cshu * csv, ww * snhu * snv)
        }
        62 => {
            let tmp = h.sumsq + 1.0;
            let x2 = 2.0 * tx;
            let xmax = 0.5 * ((tmp + x2).sqrt() + (tmp - x2).sqrt());
            let a = tx / xmax;
            let b = 1.0 - a * a;
            let ssx = xmax - 1.0;
            let ww = w / FRAC_PI_2;
            let b = if b < 0.0 { 0.0 } else { b.sqrt() };
            let ssx = if ssx < 0.0 { 0.0 } else { ssx.sqrt() };
            let x = ww * a.atan2(b);
            let l = ww * (xmax + ssx).ln();
            (x, if ty > 0.0 { l } else { -l })
        }
        63 => {
            let a = h.atanyx;
            let lnr = 0.5 * h.sumsq.ln();
            let (seb, ceb) = p[0].sin_cos();
            let vc = 0.5 * (1.0 + ceb);
            let vd = 0.5 * seb;
            let m = w * (vc * lnr - vd * a).exp();
            let n = vc * a + vd * lnr;
            let (sn, cn) = n.sin_cos();
            (m * cn, m * sn)
        }
        64 => {
            let expx = tx.exp() * 0.5;
            let expnx = 0.25 / expx;
            let (sn, cn) = ty.sin_cos();
            let t = w / (expx + expnx - cn);
            (t * (expx - expnx), t * sn)
        }
        65 => {
            let (spin, space, twist, lx, ly) = (p[0], p[1], p[2], p[3], p[4]);
            let x = tx - lx;
            let y = ty + ly;
            let r = (x * x + y * y).sqrt();
            if r < w {
                let a = y.atan2(x) + spin + twist * (w - r);
                let (sa, ca) = a.sin_cos();
                let r = w * r;
                (r * ca + lx, r * sa - ly)
            } else {
                let r = w * (1.0 + space / r);
                (r * x + lx, r * y - ly)
            }
        }
        66 => {
            let r2 = h.sumsq;
            let w2 = w * w;
            if r2 < w2 {
                let r = w * (w2 / r2 - 1.0).sqrt();
                (r * tx, r * ty)
            } else {
                (w * tx, w * ty)
            }
        }
        68 => {
            let (mx, my) = (p[0], p[1]);
            let (xr, yr) = (2.0 * mx, 2.0 * my);
            let x = if tx > mx {
                w * (-mx + fmod(tx + mx, xr))
            } else if tx < -mx {
                w * (mx - fmod(mx - tx, xr))
            } else {
                w * tx
            };
            let y = if ty > my {
                w * (-my + fmod(ty + my, yr))
            } else if ty < -my {
                w * (my - fmod(my - ty, yr))
            } else {
                w * ty
            };
            (x, y)
        }
        69 => {
            let (sep, freq, amp, damp) = (p[0], p[1], p[2], p[3]);
            let tpf = 2.0 * PI * freq;
            let t = if damp == 0.0 {
                amp * (tpf * tx).cos() + sep
            } else {
                amp * (-tx.abs() * damp).exp() * (tpf * tx).cos() + sep
            };
            if ty.abs() <= t { (w * tx, -w * ty) } else { (w * tx, w * ty) }
        }
        70 => {
            let p2v = w / PI;
            (p2v * h.atan, p2v / 2.0 * h.sumsq.ln())
        }
        71 => {
            let (px, py, pc) = (p[0], p[1], p[2]);
            (w * (tx + px * (ty * pc).tan().sin()), w * (ty + py * (tx * pc).tan().sin()))
        }
        72 => {
            let r = 1.0 / (h.sqrt * (h.sumsq + 1.0 / (w + EPS)));
            (tx * r, ty * r)
        }
        73 => {
            let (sx, sxi, sy, syi) = (p[0], p[1], p[2], p[3]);
            let (sx2, sy2) = (sx * sx, sy * sy);
            let x = if tx > 0.0 {
                w * ((tx * tx + sx2).sqrt() - tx * sxi)
            } else {
                -w * ((tx * tx + sx2).sqrt() + tx * sxi)
            };
            let y = if ty > 0.0 {
                w * ((ty * ty + sy2).sqrt() - ty * syi)
            } else {
                -w * ((ty * ty + sy2).sqrt() + ty * syi)
            };
            (x, y)
        }
        74 => {
            let (xs, ys) = (p[0], p[1]);
            let y = if (tx * xs * PI).cos() >= 0.0 { w * ty } else { -w * ty };
            let x = if (ty * ys * PI).cos() >= 0.0 { w * tx } else { -w * tx };
            (x, y)
        }
        75 => {
            let (sx, sy) = (p[0], p[1]);
            let x = if tx >= 0.0 { w * (tx + sx) } else { w * (tx - sx) };
            let y = if ty >= 0.0 { w * (ty + sy) } else { w * (ty - sy) };
            (x, y)
        }
        76 => {
            let (space, warp) = (p[0], p[1]);
            let roundx = (tx + 0.5).floor();
            let offsetx = tx - roundx;
            (w * (offsetx * (1.0 - space) + roundx), w * (ty + offsetx * offsetx * warp))
        }
        77 => {
            let (angle, hole, count, swirl) = (p[0], p[1], p[2], p[3]);
            let r = h.sqrt;
            let a = h.atanyx + swirl * r;
            let c = ((count * a + PI) * std::f64::consts::FRAC_1_PI * 0.5).floor();
            let comp = 1.0 - angle * count * std::f64::consts::FRAC_1_PI * 0.5;
            let a = a * comp + c * angle;
            let (sa, ca) = a.sin_cos();
            let r = w * (r + hole);
            (r * ca, r * sa)
        }
        78 => {
            let (angle, count, power, cf, rn, cn) = (p[0], p[1], p[2], p[4], p[5], p[6]);
            let r = w * h.sumsq.powf(cn);
            let t = (rn * r01(rng)) as i64 as f64;
            let a = (h.atanyx + 2.0 * PI * t) / power;
            let c = ((count * a + PI) * std::f64::consts::FRAC_1_PI * 0.5).floor();
            let a = a * cf + c * angle;
            let (sa, ca) = a.sin_cos();
            (r * ca, r * sa)
        }
        79 => {
            let (angle, count, hole, swirl) = (p[0], p[1], p[2], p[3]);
            let r = 1.0 / (h.sqrt + EPS);
            let a = h.atanyx + swirl * r;
            let c = ((count * a + PI) * std::f64::consts::FRAC_1_PI * 0.5).floor();
            let comp = 1.0 - angle * count * std::f64::consts::FRAC_1_PI * 0.5;
            let a = a * comp + c * angle;
            let (sa, ca) = a.sin_cos();
            let r = w * (r + hole);
            (r * ca, r * sa)
        }
        80 => {
            let (inside, outside) = (p[0], p[1]);
            let r = h.sqrt;
            let a = if r < w { h.atanyx + inside / (w - r) } else { h.atanyx + outside / (w - r) };
            let (sa, ca) = a.sin_cos();
            (w * r * ca, w * r * sa)
        }
        81 => {
            let (sx, sy, fx, fy) = (p[0], p[1], p[2], p[3]);
            (w * (tx + sx * (ty * fx).sin()), w * (ty + sy * (tx * fy).sin()))
        }
        82 => {
            let e = tx.exp();
            let (s, c) = ty.sin_cos();
            (w * e * c, w * e * s)
        }
        83 => (w * 0.5 * h.sumsq.ln(), w * h.atanyx),
        84 => {
            let (s, c) = tx.sin_cos();
            (w * s * ty.cosh(), w * c * ty.sinh())
        }
        85 => {
            let (s, c) = tx.sin_cos();
            (w * c * ty.cosh(), -w * s * ty.sinh())
        }
        86 => {
            let (s, c) = (2.0 * tx).sin_cos();
            let den = 1.0 / (c + (2.0 * ty).cosh());
            (w * den * s, w * den * (2.0 * ty).sinh())
        }
        87 => {
            let (s, c) = tx.sin_cos();
            let den = 2.0 / ((2.0 * tx).cos() + (2.0 * ty).cosh());
            (w * den * c * ty.cosh(), w * den * s * ty.sinh())
        }
        88 => {
            let (s, c) = tx.sin_cos();
            let den = 2.0 / ((2.0 * ty).cosh() - (2.0 * tx).cos());
            (w * den * s * ty.cosh(), -w * den * c * ty.sinh())
        }
        89 => {
            let (s, c) = (2.0 * tx).sin_cos();
            let den = 1.0 / ((2.0 * ty).cosh() - c);
            (w * den * s, -w * den * (2.0 * ty).sinh())
        }
        90 => {
            let (s, c) = ty.sin_cos();
            (w * tx.sinh() * c, w * tx.cosh() * s)
        }
        91 => {
            let (s, c) = ty.sin_cos();
            (w * tx.cosh() * c, w * tx.sinh() * s)
        }
        92 => {
            let (s, c) = (2.0 * ty).sin_cos();
            let den = 1.0 / (c + (2.0 * tx).cosh());
            (w * den * (2.0 * tx).sinh(), w * den * s)
        }
        93 => {
            let (s, c) = ty.sin_cos();
            let den = 2.0 / ((2.0 * ty).cos() + (2.0 * tx).cosh());
            (w * den * c * tx.cosh(), -w * den * s * tx.sinh())
        }
        94 => {
            let (s, c) = ty.sin_cos();
            let den = 2.0 / ((2.0 * tx).cosh() - (2.0 * ty).cos());
            (w * den * tx.sinh() * c, -w * den * tx.cosh() * s)
        }
        95 => {
            let (s, c) = (2.0 * ty).sin_cos();
            let den = 1.0 / ((2.0 * tx).cosh() - c);
            (w * den * (2.0 * tx).sinh(), w * den * s)
        }
        96 => {
            let (freq, aw, sym, scale) = (p[0], p[1], p[2], p[3]);
            let s = (freq * tx).sin();
            let t = (freq * ty).sin();
            let dy = ty + aw * (scale * s / 2.0 + ty.abs() * s);
            let dx = tx + aw * (scale * t / 2.0 + tx.abs() * t);
            (w * (tx + sym * (dx - tx)), w * dy)
        }
        97 => {
            let spread = p[0];
            let xpw = tx + w;
            let xmw = tx - w;
            let avgr = w * (2.0 + spread) * ((ty * ty + xpw * xpw).sqrt() / (ty * ty + xmw * xmw).sqrt()).sqrt();
            let avga = (ty.atan2(xmw) - ty.atan2(xpw)) * 0.5;
            (avgr * avga.cos(), avgr * avga.sin())
        }
        98 => {
            let (ra, rb, rc, rd, ia, ib, ic, id) = (p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]);
            let re_u = ra * tx - ia * ty + rb;
            let im_u = ra * ty + ia * tx + ib;
            let re_v = rc * tx - ic * ty + rd;
            let im_v = rc * ty + ic * tx + id;
            let rad_v = w / (re_v * re_v + im_v * im_v);
            (rad_v * (re_u * re_v + im_u * im_v), rad_v * (im_u * re_v - re_u * im_v))
        }
        // pre_blur is applied before the others; unknown indices cannot occur.
        _ => (0.0, 0.0),
    }
}
