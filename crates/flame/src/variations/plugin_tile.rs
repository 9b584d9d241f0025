//! Fractorium's tilings, cells and crops beyond flam3's (formulas of
//! Fractorium's `Variations0*.h`, its flam3-compatible branches where it
//! has two): bwraps, gnarly, hexes, Voron, shredlin, tile_log, tile_hlp,
//! cropn, bcircle, circlecrop, mirror_x and post_smartcrop.

use std::f64::consts::PI;

use warpmc_rng::RandomSource;

use super::params::{integer, nonzero, real, zeps};
use super::{Point, VariationSpec, c_int};

/// bwraps (Apophysis's bwraps2 and bwraps7 are read as it): a grid of cells of side
/// `cellsize`, each holding a bubble of radius `cellsize / 2 / (1 +
/// space²)` that magnifies by `gain` and twists from `inner_twist` at its
/// centre to `outer_twist` at its rim; points outside the bubbles stay.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Bwraps {
    pub(crate) cellsize: f64,
    pub(crate) inner: f64,
    pub(crate) outer: f64,
    /// `gain² + 10⁻⁶`, the bubble's squared radius (kept off zero) and the
    /// factor that keeps the magnified bubble inside its radius.
    pub(crate) g2: f64,
    pub(crate) r2: f64,
    pub(crate) rfactor: f64,
}

impl Bwraps {
    pub(super) fn new(s: &VariationSpec) -> Self {
        let (cellsize, space, gain) = (s.param(0), s.param(1), s.param(2));
        let radius = 0.5 * (cellsize / (1.0 + space * space));
        let g2 = gain * gain + 1.0e-6;
        let mut max_bubble = g2 * radius;
        if max_bubble > 2.0 {
            max_bubble = 1.0;
        } else {
            max_bubble *= 1.0 / (max_bubble * max_bubble / 4.0 + 1.0);
        }
        Bwraps {
            cellsize,
            inner: s.param(3),
            outer: s.param(4),
            g2,
            r2: zeps(radius * radius),
            rfactor: radius / max_bubble,
        }
    }

    #[inline(always)]
    pub(super) fn eval(&self, p: &Point, w: f64) -> (f64, f64) {
        let cs = self.cellsize;
        if cs == 0.0 {
            return (w * p.x, w * p.y);
        }
        let cx = ((p.x / cs).floor() + 0.5) * cs;
        let cy = ((p.y / cs).floor() + 0.5) * cs;
        let (mut lx, mut ly) = (p.x - cx, p.y - cy);
        if lx * lx + ly * ly > self.r2 {
            return (w * p.x, w * p.y);
        }
        lx *= self.g2;
        ly *= self.g2;
        let r = self.rfactor / zeps((lx * lx + ly * ly) / 4.0 + 1.0);
        lx *= r;
        ly *= r;
        let r = (lx * lx + ly * ly) / self.r2;
        let theta = self.inner * (1.0 - r) + self.outer * r;
        let (s, c) = theta.sin_cos();
        (w * (cx + c * lx + s * ly), w * (cy - s * lx + c * ly))
    }
}

/// gnarly: a grid of cells of side `cellsize`; inside the disc inscribed
/// in each, points turn by `twist · ln(r²/R²)`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Gnarly {
    pub(crate) cellsize: f64,
    pub(crate) twist: f64,
    /// The disc's squared radius, kept off zero.
    pub(crate) r2: f64,
}

impl Gnarly {
    pub(super) fn new(s: &VariationSpec) -> Self {
        let (cellsize, twist) = (s.param(0), s.param(1));
        let radius = 0.5 * cellsize;
        Gnarly { cellsize, twist, r2: zeps(radius * radius) }
    }

    #[inline(always)]
    pub(super) fn eval(&self, p: &Point, w: f64) -> (f64, f64) {
        let (mut vx, mut vy) = (p.x, p.y);
        let cs = self.cellsize;
        if cs != 0.0 {
            let cx = ((vx / cs).floor() + 0.5) * cs;
            let cy = ((vy / cs).floor() + 0.5) * cs;
            let (lx, ly) = (vx - cx, vy - cy);
            if lx * lx + ly * ly <= self.r2 {
                let r = (lx * lx + ly * ly) / self.r2;
                let (s, c) = (self.twist * r.ln()).sin_cos();
                vx = cx + c * lx + s * ly;
                vy = cy - s * lx + c * ly;
            }
        }
        (w * vx, w * vy)
    }
}

// hexes' maps between the plane and its hexagonal lattice: hex
// coordinates `(Xh, Yh)` of a point, and the centre of hex `(Xh, Yh)`.
const A_XH_XO: f64 = 1.0 / 3.0;
const A_XH_YO: f64 = 1.732_050_807_568_877_2 / 3.0;
const A_YH_XO: f64 = -1.0 / 3.0;
const A_YH_YO: f64 = 1.732_050_807_568_877_2 / 3.0;
const A_XO_XH: f64 = 1.5;
const A_XO_YH: f64 = -1.5;
const A_YO_XH: f64 = 1.732_050_807_568_877_2 / 2.0;
const A_YO_YH: f64 = 1.732_050_807_568_877_2 / 2.0;

/// The Voronoi distance ratio of `u` in the cell of `p[0]` among the points
/// `p` (Fractorium's `Voronoi`): the largest over the others `q` of
/// `2 (u − p₀)·(q − p₀) / |q − p₀|²` (1 for a `q` at `p₀`).
fn voronoi(p: &[[f64; 2]], u: [f64; 2]) -> f64 {
    let mut max = f64::MIN;
    for q in &p[1..] {
        let (dx, dy) = (q[0] - p[0][0], q[1] - p[0][1]);
        let ratio = if dx == 0.0 && dy == 0.0 {
            1.0
        } else {
            2.0 * ((u[0] - p[0][0]) * dx + (u[1] - p[0][1]) * dy) / zeps(dx * dx + dy * dy)
        };
        if ratio > max {
            max = ratio;
        }
    }
    max
}

/// hexes: crackle's idea on a hexagonal lattice of cell size `cellsize`:
/// each point's offset from its hex's centre, rotated by `rotate` turns,
/// rescaled from its Voronoi ratio `L` to `|L|^power · scale` (blended
/// between the ratios before and after the rotation near the edges).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Hexes {
    pub(crate) cellsize: f64,
    pub(crate) power: f64,
    pub(crate) scale: f64,
    pub(crate) rot_sin: f64,
    pub(crate) rot_cos: f64,
}

impl Hexes {
    pub(super) fn new(s: &VariationSpec) -> Self {
        let (rot_sin, rot_cos) = (s.param(2) * 2.0 * PI).sin_cos();
        Hexes { cellsize: s.param(0), power: s.param(1), scale: s.param(3), rot_sin, rot_cos }
    }

    /// The centre of hex `(xh, yh)` for cell size `s`.
    #[inline(always)]
    fn centre(xh: f64, yh: f64, s: f64) -> [f64; 2] {
        [(A_XO_XH * xh + A_XO_YH * yh) * s, (A_YO_XH * xh + A_YO_YH * yh) * s]
    }

    pub(super) fn eval(&self, p: &Point, w: f64) -> (f64, f64) {
        let s = self.cellsize;
        if s == 0.0 {
            return (0.0, 0.0);
        }
        let u = [p.x, p.y];
        let mut xch = ((A_XH_XO * u[0] + A_XH_YO * u[1]) / s).floor();
        let mut ych = ((A_YH_XO * u[0] + A_YH_YO * u[1]) / s).floor();
        // The nearest of the four hexes around, first in the order
        // (0, 0), (0, 1), (1, 0), (1, 1) on ties.
        let mut best = (f64::MAX, 0.0, 0.0);
        for (di, dj) in [(0.0, 0.0), (0.0, 1.0), (1.0, 0.0), (1.0, 1.0)] {
            let c = Self::centre(xch + di, ych + dj, s);
            let d2 = (c[0] - u[0]) * (c[0] - u[0]) + (c[1] - u[1]) * (c[1] - u[1]);
            if d2 < best.0 {
                best = (d2, di, dj);
            }
        }
        xch += best.1;
        ych += best.2;
        let o = Self::centre(xch, ych, s);
        // Its centre and the six around it.
        let pts = [
            o,
            [o[0] + A_XO_YH * s, o[1] + A_YO_YH * s],
            [o[0] + (A_XO_XH + A_XO_YH) * s, o[1] + (A_YO_XH + A_YO_YH) * s],
            [o[0] + A_XO_XH * s, o[1] + A_YO_XH * s],
            [o[0] - A_XO_YH * s, o[1] - A_YO_YH * s],
            [o[0] - (A_XO_XH + A_XO_YH) * s, o[1] - (A_YO_XH + A_YO_YH) * s],
            [o[0] - A_XO_XH * s, o[1] - A_YO_XH * s],
        ];
        let l1 = voronoi(&pts, u);
        let (dx, dy) = (u[0] - o[0], u[1] - o[1]);
        let target = l1.abs().powf(self.power) * self.scale;
        let vx = dx * self.rot_cos + dy * self.rot_sin;
        let vy = -dx * self.rot_sin + dy * self.rot_cos;
        let l2 = voronoi(&pts, [vx + o[0], vy + o[1]]);
        let l = if l1 < l2 { l2 } else { l1 };
        let r = if l < 0.5 {
            target / l1
        } else if l > 0.8 {
            target / l2
        } else {
            ((target / l1) * (0.8 - l) + (target / l2) * (l - 0.5)) / 0.3
        };
        (w * (vx * r + o[0]), w * (vy * r + o[1]))
    }
}

/// Voron: a grid of cells of side `step`, each holding `1 … num` points
/// placed by an integer hash of the cell and the seeds; every point moves
/// towards the nearest of the points of its cell and the eight around by
/// the factor `K`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Voron {
    pub(crate) k: f64,
    pub(crate) step: f64,
    pub(crate) num: f64,
    pub(crate) xseed: f64,
    pub(crate) yseed: f64,
}

/// Voron's hash of an integer into [0, 1] (the classic lattice-noise
/// polynomial, in 32-bit arithmetic that wraps).
#[inline(always)]
pub(crate) fn discrete_noise(x: i32) -> f64 {
    let n = x.wrapping_shl(13) ^ x;
    let v = n.wrapping_mul(n.wrapping_mul(n).wrapping_mul(15731).wrapping_add(789_221)).wrapping_add(1_376_312_589);
    f64::from(v & 0x7fff_ffff) * (1.0 / 2_147_483_647.0)
}

impl Voron {
    pub(super) fn new(s: &VariationSpec) -> Self {
        Voron {
            k: s.param(0),
            step: nonzero(s.param(1), f64::NEG_INFINITY, f64::INFINITY),
            num: integer(s.param(2), 1.0, 25.0),
            xseed: integer(s.param(3), f64::NEG_INFINITY, f64::INFINITY),
            yseed: integer(s.param(4), f64::NEG_INFINITY, f64::INFINITY),
        }
    }

    pub(super) fn eval(&self, p: &Point, w: f64) -> (f64, f64) {
        // The cell, as an integer of 32 bits (its low bits for huge
        // quotients, saturated first as the GPU's conversion saturates).
        let cell = |v: f64| ((v / self.step).floor() as i64) as i32;
        let (m, n) = (cell(p.x), cell(p.y));
        let (mut r_min, mut x0, mut y0) = (20.0, 0.0, 0.0);
        for i in -1..2 {
            let m1 = m.wrapping_add(i);
            for j in -1..2 {
                let n1 = n.wrapping_add(j);
                let h = f64::from(m1.wrapping_mul(19).wrapping_add(n1.wrapping_mul(257))) + self.xseed;
                let k = 1 + (self.num * discrete_noise(c_int(h))).floor() as i64;
                for l in 0..k {
                    let hx = (l + i64::from(m1.wrapping_mul(64)) + i64::from(n1.wrapping_mul(15))) as f64 + self.xseed;
                    let hy = (l + i64::from(m1.wrapping_mul(21)) + i64::from(n1.wrapping_mul(33))) as f64 + self.yseed;
                    let x = (discrete_noise(c_int(hx)) + f64::from(m1)) * self.step;
                    let y = (discrete_noise(c_int(hy)) + f64::from(n1)) * self.step;
                    let (ox, oy) = (p.x - x, p.y - y);
                    let r = (ox * ox + oy * oy).sqrt();
                    if r < r_min {
                        r_min = r;
                        x0 = x;
                        y0 = y;
                    }
                }
            }
        }
        (w * (self.k * (p.x - x0) + x0), w * (self.k * (p.y - y0) + y0))
    }
}

/// shredlin: the plane cut into strips `xdistance` wide (and
/// `ydistance` high), each narrowed to `xwidth` of itself towards the axis
/// side of its cell.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Shredlin {
    pub(crate) xdistance: f64,
    pub(crate) xwidth: f64,
    pub(crate) ydistance: f64,
    pub(crate) ywidth: f64,
}

impl Shredlin {
    pub(super) fn new(s: &VariationSpec) -> Self {
        Shredlin {
            xdistance: nonzero(s.param(0), f64::NEG_INFINITY, f64::INFINITY),
            xwidth: real(s.param(1), -1.0, 1.0),
            ydistance: nonzero(s.param(2), f64::NEG_INFINITY, f64::INFINITY),
            ywidth: real(s.param(3), -1.0, 1.0),
        }
    }

    #[inline(always)]
    pub(super) fn eval(&self, p: &Point, w: f64) -> (f64, f64) {
        let strip = |v: f64, distance: f64, width: f64| {
            let neg = if v < 0.0 { 1.0 } else { 0.0 };
            let rng = v / distance;
            let whole = f64::from(c_int(rng));
            w * distance * ((rng - whole) * width + whole + (0.5 - neg) * (1.0 - width))
        };
        (strip(p.x, self.xdistance, self.xwidth), strip(p.y, self.ydistance, self.ywidth))
    }
}

/// tile_log: the point shifted along x by a whole number of steps whose
/// count is logarithmically distributed (one uniform, then one random bit
/// for the direction).
#[derive(Clone, Copy, Debug)]
pub(crate) struct TileLog {
    pub(crate) spread: f64,
}

impl TileLog {
    pub(super) fn new(s: &VariationSpec) -> Self {
        TileLog { spread: s.param(0) }
    }

    #[inline(always)]
    pub(super) fn eval<R: RandomSource>(&self, p: &Point, w: f64, rng: &mut R) -> (f64, f64) {
        let u = rng.next_f64();
        let spread = if rng.next_u32() & 1 != 0 { self.spread } else { -self.spread };
        let t = round_half_away(u.ln() * spread);
        (w * (p.x + t), w * p.y)
    }
}

/// Fractorium's `Round`: `floor(r + ½)` above zero, `ceil(r − ½)` below.
#[inline(always)]
fn round_half_away(r: f64) -> f64 {
    if r > 0.0 { (r + 0.5).floor() } else { (r - 0.5).ceil() }
}

/// tile_hlp: strips of width `width` along x, each point moved to the next
/// strip towards the axis with a probability that grows with its distance
/// from the strip's centre (one uniform in [−1, 1]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct TileHlp {
    pub(crate) width: f64,
    /// `width · w`.
    pub(crate) vwidth: f64,
}

impl TileHlp {
    pub(super) fn new(s: &VariationSpec) -> Self {
        let width = nonzero(s.param(0), f64::NEG_INFINITY, f64::INFINITY);
        TileHlp { width, vwidth: width * s.weight }
    }

    #[inline(always)]
    pub(super) fn eval<R: RandomSource>(&self, p: &Point, w: f64, rng: &mut R) -> (f64, f64) {
        let x = p.x / self.width;
        let pos = x > 0.0;
        let whole = f64::from(c_int(x));
        let frac = if pos { x - whole } else { x + whole };
        let t = if (frac * PI).cos() < -1.0 + rng.next_f64() * 2.0 {
            if pos { -self.vwidth } else { self.vwidth }
        } else {
            0.0
        };
        (w * p.x + t, w * p.y)
    }
}

/// cropn (flam3-compatible branch): points outside (inside, for a negative
/// `power`) the regular `|power|`-gon of inradius `radius` are moved onto
/// its edge, scattered outwards by up to `scatterdist / 2` (one uniform,
/// drawn for every point as post_smartcrop's are), or to the origin with
/// `zero` = 1.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cropn {
    /// 1 for a positive power (crop outside), else 0.
    pub(crate) outside: f64,
    pub(crate) radius: f64,
    pub(crate) scatter: f64,
    pub(crate) zero: f64,
    /// `2π / max(|power|, 2)` and half of it.
    pub(crate) alpha: f64,
    pub(crate) half_alpha: f64,
}

impl Cropn {
    pub(super) fn new(s: &VariationSpec) -> Self {
        let power = s.param(0);
        let mut work = if power > 0.0 { power } else { -power };
        if work < 2.0 {
            work = 2.0;
        }
        let alpha = 2.0 * PI / work;
        Cropn {
            outside: if power > 0.0 { 1.0 } else { 0.0 },
            radius: s.param(1),
            scatter: s.param(2),
            zero: s.param(3),
            alpha,
            half_alpha: alpha / 2.0,
        }
    }

    #[inline(always)]
    pub(super) fn eval<R: RandomSource>(&self, p: &Point, w: f64, rng: &mut R) -> (f64, f64) {
        let mut xang = (p.atanyx + PI) / self.alpha;
        xang = (xang - f64::from(c_int(xang))) * self.alpha;
        xang = (if xang < self.half_alpha { xang } else { self.alpha - xang }).cos();
        let xr = if xang > 0.0 { self.radius / xang } else { 1.0 };
        let u = rng.next_f64();
        if (p.sqrt > xr) == (self.outside == 1.0) {
            if self.zero == 1.0 {
                (0.0, 0.0)
            } else {
                let rdc = xr + u * 0.5 * self.scatter;
                let r = zeps(p.sqrt);
                (w * rdc * (p.x / r), w * rdc * (p.y / r))
            }
        } else {
            (w * p.x, w * p.y)
        }
    }
}

/// bcircle: the disc of radius `1/scale` kept (scaled by `scale`), points
/// beyond it moved onto a ring of width `|borderwidth| / 5` outside the
/// unit circle (one uniform, drawn for every point as post_smartcrop's
/// are), or to the origin without a border.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Bcircle {
    pub(crate) scale: f64,
    /// `|borderwidth|` and a fifth of it.
    pub(crate) bcbw: f64,
    pub(crate) bcbw_fifth: f64,
}

impl Bcircle {
    pub(super) fn new(s: &VariationSpec) -> Self {
        let bcbw = s.param(1).abs();
        Bcircle { scale: s.param(0), bcbw, bcbw_fifth: 0.2 * bcbw }
    }

    #[inline(always)]
    pub(super) fn eval<R: RandomSource>(&self, p: &Point, w: f64, rng: &mut R) -> (f64, f64) {
        let (x, y) = (p.x * self.scale, p.y * self.scale);
        let r = (x * x + y * y).sqrt();
        let u = rng.next_f64();
        if r <= 1.0 {
            (w * x, w * y)
        } else if self.bcbw != 0.0 {
            let ang = y.atan2(x);
            let t = w * (self.bcbw_fifth * u + 1.0);
            let (s, c) = ang.sin_cos();
            (t * c, t * s)
        } else {
            (0.0, 0.0)
        }
    }
}

/// circlecrop: points outside the circle of radius `radius` about `(x,
/// y)` moved onto it, scattered outwards by up to `scatter_area / 2` (one
/// uniform, always drawn), or to the origin with `zero`. As an ordinary
/// variation, a point sent to the origin also discards what the variations
/// before it (in index order) contributed, as Fractorium's flam3-compatible
/// circlecrop does.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Circlecrop {
    pub(crate) radius: f64,
    pub(crate) x: f64,
    pub(crate) y: f64,
    /// `scatter_area` clamped to [−1, 1].
    pub(crate) ca: f64,
    /// 1 when `zero` (an integer in [0, 1], rounded) is 1, else 0.
    pub(crate) zero: f64,
}

impl Circlecrop {
    pub(super) fn new(s: &VariationSpec) -> Self {
        Circlecrop {
            radius: s.param(0),
            x: s.param(1),
            y: s.param(2),
            ca: real(s.param(3), -1.0, 1.0),
            zero: f64::from(integer(s.param(4), 0.0, 1.0) != 0.0),
        }
    }

    /// The contribution, and whether the point was sent to the origin.
    #[inline(always)]
    pub(super) fn eval<R: RandomSource>(&self, p: &Point, w: f64, rng: &mut R) -> ((f64, f64), bool) {
        let (xi, yi) = (p.x - self.x, p.y - self.y);
        let rad = (xi * xi + yi * yi).sqrt();
        let rdc = self.radius + rng.next_f64() * 0.5 * self.ca;
        if rad > self.radius {
            if self.zero != 0.0 {
                ((0.0, 0.0), true)
            } else {
                let (s, c) = yi.atan2(xi).sin_cos();
                ((w * rdc * c + self.x, w * rdc * s + self.y), false)
            }
        } else {
            ((w * xi + self.x, w * yi + self.y), false)
        }
    }
}

/// mirror_x: the point reflected to a random side of the y axis (one
/// random bit), its weight ignored. As an ordinary variation it replaces
/// what the variations before it (in index order) contributed, as
/// Fractorium's does.
#[inline(always)]
pub(super) fn mirror_x<R: RandomSource>(p: &Point, rng: &mut R) -> (f64, f64) {
    let x = p.x.abs();
    (if rng.next_u32() & 1 != 0 { -x } else { x }, p.y)
}

/// post_smartcrop (a `post_` variation only): crops the plane to a regular
/// `|power|`-gon of radius `|radius|` (rounded by `roundstr`/`roundwidth`,
/// stretched by `distortion`), or for `|power|` below 2 to a sector of
/// `|power|·π` radians; the sign of `power · radius` picks whether the
/// outside or the inside is cropped. Cropped points are moved onto the
/// edge (scattered outwards by `scatter` from `offset`, `edge` blurring the
/// boundary) or, with `cropmode` 0, sent to the origin; `cropmode` −1 keeps
/// their distance. `static` chooses the point cropped (above 1 the sum of
/// the variations, else the xform's point before them; 3 the latter for
/// the kept points) and whether the result replaces the point (above 1, or
/// −1; for the kept points above 0) or is added to it.
///
/// Its uniforms are drawn whether or not the point is cropped (Fractorium
/// draws them only where it uses them; the results are distributed the
/// same), so that the words drawn never hang on a comparison a rounding can
/// flip, and the CPU and GPU stay in step.
///
/// Not implemented (the reader refuses them, [`Smartcrop::unsupported`]):
/// `cropmode` 2, which holds cropped points at the last point kept (state
/// carried from one iteration to the next), and `cropmode` 0 with the
/// result added to the point, where Fractorium leaves the point undefined.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Smartcrop {
    pub(crate) roundstr: f64,
    pub(crate) roundwidth: f64,
    pub(crate) distortion: f64,
    pub(crate) edge: f64,
    pub(crate) scatter: f64,
    pub(crate) offset: f64,
    pub(crate) cropmode: f64,
    pub(crate) static_: f64,
    /// 1 when the outside is cropped, else 0.
    pub(crate) mode: f64,
    /// 1 for a sector (`|power|` below 2), else 0.
    pub(crate) radial: f64,
    pub(crate) work_radius: f64,
    /// `|power|` (times π for a sector).
    pub(crate) work_power: f64,
    /// The polygon's `2π / |power|`, rounding coefficient and rotation.
    pub(crate) alpha: f64,
    pub(crate) round_coeff: f64,
    pub(crate) work_rotation: f64,
}

impl Smartcrop {
    pub(super) fn new(s: &VariationSpec) -> Self {
        let (power, radius, roundstr) = (s.param(0), s.param(1), s.param(2));
        let mut work_power = zeps(power).abs();
        let (radial, alpha, round_coeff, work_rotation) = if work_power < 2.0 {
            work_power *= PI;
            (1.0, 0.0, 0.0, 0.0)
        } else {
            let alpha = 2.0 * PI / work_power;
            (0.0, alpha, roundstr / zeps((alpha / 2.0).sin()) / work_power * 2.0, s.param(8) * alpha)
        };
        Smartcrop {
            roundstr,
            roundwidth: s.param(3),
            distortion: s.param(4),
            edge: s.param(5),
            scatter: s.param(6),
            offset: s.param(7),
            cropmode: real(s.param(9), -1.0, 2.0),
            static_: real(s.param(10), -1.0, 3.0),
            mode: if (power > 0.0) == (radius > 0.0) { 1.0 } else { 0.0 },
            radial,
            work_radius: radius.abs(),
            work_power,
            alpha,
            round_coeff,
            work_rotation,
        }
    }

    /// Why warpmc cannot apply these settings, if it cannot.
    pub(crate) fn unsupported(s: &VariationSpec) -> Option<&'static str> {
        let v = Smartcrop::new(s);
        if v.cropmode == 2.0 {
            Some(
                "cropmode 2 holds cropped points at the last point kept, state warpmc does not carry between iterations",
            )
        } else if v.cropmode == 0.0 && v.radial == 0.0 && !v.replaces() {
            Some("cropmode 0 with static at or below 1 leaves cropped points undefined in Fractorium")
        } else {
            None
        }
    }

    /// Whether a cropped point's result replaces the point (else it is
    /// added to it).
    #[inline(always)]
    fn replaces(&self) -> bool {
        self.static_ > 1.0 || self.static_ == -1.0
    }

    /// The result at the point `p` (the sum of the xform's variations),
    /// whose xform's point before its variations is `(p.tx, p.ty)`.
    pub(super) fn eval<R: RandomSource>(&self, p: &Point, w: f64, rng: &mut R) -> (f64, f64) {
        let (xi, yi) = if self.static_ > 1.0 { (p.x, p.y) } else { (p.tx, p.ty) };
        let ang = yi.atan2(xi);
        let rad = (xi * xi + yi * yi).sqrt();
        let place = |r: f64, a: f64| {
            let (s, c) = a.sin_cos();
            if self.replaces() { (w * r * c, w * r * s) } else { (p.x + w * r * c, p.y + w * r * s) }
        };
        if self.radial == 1.0 {
            // Three uniforms: the edge's, the side's, the scatter's.
            let edge = self.edge * (rng.next_f64() - 0.5);
            let (u_side, u_scatter) = (rng.next_f64(), rng.next_f64());
            let mut xang = ang / (2.0 * PI) + 1.0 + edge;
            xang = (xang - f64::from(c_int(xang))) * (2.0 * PI);
            if f64::from(u8::from(xang > self.work_power)) == self.mode {
                let spread = u_scatter * self.scatter + self.offset + edge;
                let a = if u_side * 2.0 >= 1.0 { self.work_power + spread * PI } else { -spread * PI };
                return place(rad, a);
            }
        } else {
            let mut coeff = 1.0;
            if self.distortion != 0.0 {
                let mut xang = (ang + PI) / self.alpha;
                xang -= f64::from(c_int(xang));
                xang = if xang < 0.5 { xang } else { 1.0 - xang };
                coeff = 1.0 / (xang * self.alpha).cos();
                if self.roundstr != 0.0 {
                    // Fractorium's exp(ln(2·xang)·roundwidth), as a power
                    // (smartshape says why).
                    let width = if self.roundwidth != 1.0 { (xang * 2.0).powf(self.roundwidth) } else { xang * 2.0 };
                    let wwidth = width * self.round_coeff;
                    coeff = ((1.0 - wwidth) * coeff + wwidth).abs();
                }
                if self.distortion != 1.0 {
                    coeff = (coeff.ln() * self.distortion).exp();
                }
            }
            // The edge's uniform (with an edge), then the scatter's.
            let reach =
                if self.edge != 0.0 { self.work_radius + self.edge * (rng.next_f64() - 0.5) } else { self.work_radius };
            let u_scatter = rng.next_f64();
            let xr = coeff * reach;
            if f64::from(u8::from(rad > xr)) == self.mode {
                if self.cropmode == 0.0 {
                    return (0.0, 0.0);
                }
                let rdc =
                    if self.cropmode == -1.0 { rad } else { xr + coeff * (u_scatter * self.scatter + self.offset) };
                return place(rdc, ang + self.work_rotation);
            }
        }
        // Kept.
        let (kx, ky) = if self.static_ == 3.0 { (w * p.tx, w * p.ty) } else { (w * xi, w * yi) };
        if self.static_ > 0.0 { (kx, ky) } else { (p.x + kx, p.y + ky) }
    }
}
