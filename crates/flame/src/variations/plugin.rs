//! Fractorium's and Apophysis's plugin variations beyond flam3's: flatten
//! and crop (linear3D is linear in the plane).

use warpmc_rng::RandomSource;

use super::params::{integer, real, zeps};
use super::{Point, VariationSpec};

/// crop: points outside the rectangle `[x0, x1] × [y0, y1]` (the corners
/// given in either order) are moved back inside, into a band of width
/// `scatter_area` times half the rectangle's side along the edge they
/// crossed (on the edge itself for 0); with `zero` set they go to the
/// origin instead.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Crop {
    pub(crate) x0: f64,
    pub(crate) y0: f64,
    pub(crate) x1: f64,
    pub(crate) y1: f64,
    /// Depths of the bands points are scattered into.
    pub(crate) w: f64,
    pub(crate) h: f64,
    /// 1 when `crop_zero` (an integer in [0, 1], rounded) is 1, else 0.
    pub(crate) zero: f64,
}

impl Crop {
    pub(super) fn new(s: &VariationSpec) -> Self {
        // Fractorium's ranges: scatter_area real in [-1, 1], zero an
        // integer in [0, 1] (so 0.4 is 0 and 0.6 is 1).
        let (left, top, right, bottom) = (s.param(0), s.param(1), s.param(2), s.param(3));
        let (scatter, zero) = (real(s.param(4), -1.0, 1.0), integer(s.param(5), 0.0, 1.0));
        let (x0, x1) = if left < right { (left, right) } else { (right, left) };
        let (y0, y1) = if top < bottom { (top, bottom) } else { (bottom, top) };
        Crop {
            x0,
            y0,
            x1,
            y1,
            w: (x1 - x0) * 0.5 * scatter,
            h: (y1 - y0) * 0.5 * scatter,
            zero: if zero != 0.0 { 1.0 } else { 0.0 },
        }
    }

    #[inline(always)]
    pub(super) fn eval<R: RandomSource>(&self, p: &Point, w: f64, rng: &mut R) -> (f64, f64) {
        let (mut x, mut y) = (p.x, p.y);
        let outside = x < self.x0 || x > self.x1 || y < self.y0 || y > self.y1;
        if outside && self.zero != 0.0 {
            return (0.0, 0.0);
        }
        if x < self.x0 {
            x = self.x0 + rng.next_f64() * self.w;
        } else if x > self.x1 {
            x = self.x1 - rng.next_f64() * self.w;
        }
        if y < self.y0 {
            y = self.y0 + rng.next_f64() * self.h;
        } else if y > self.y1 {
            y = self.y1 - rng.next_f64() * self.h;
        }
        (w * x, w * y)
    }
}

/// crackle (Neil Slater's Apophysis plugin, also Fractorium's): a
/// blurred ring of points cracked into Voronoi cells. A random point `U`
/// near the unit circle is found in the grid of cells of side `s =
/// cellsize / 2` whose centres are jittered by `distort` times a 3-D
/// simplex noise (slice `z`); its offset from its cell's centre is
/// rescaled from `L` to `L^power · scale`, where `L` is its Voronoi
/// distance ratio (1 on the cell's edge, 0 at the centre).
///
/// The noise is Gustavson's 3-D simplex noise ("Simplex noise
/// demystified", 2005) with the gradient of each lattice point chosen by an
/// integer hash (Wellons's lowbias32) instead of a permutation table, so
/// the CPU and the GPU compute it without tables, and with a kernel of
/// squared radius 0.5 instead of his 0.6: the 0.6 kernel reaches past the
/// simplex's faces, so the noise jumps where a point crosses from one
/// simplex to the next, and the last bit of an input (which the GPU's fused
/// multiply-adds round differently) could choose between two values. With
/// `distort = 0` the cells are those of Apophysis and Fractorium exactly;
/// otherwise their jitter is a different sample of the same kind of noise
/// (Fractorium's permutation table is not reproduced).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Crackle {
    /// Half the cell size: at least 0.00005, as Fractorium holds the cell
    /// size to at least 0.0001.
    pub(crate) s: f64,
    pub(crate) power: f64,
    pub(crate) distort: f64,
    pub(crate) scale: f64,
    pub(crate) z: f64,
}

/// The 12 gradients of 3-D simplex noise: the midpoints of a cube's edges.
const GRAD12: [[f64; 3]; 12] = [
    [1.0, 1.0, 0.0],
    [-1.0, 1.0, 0.0],
    [1.0, -1.0, 0.0],
    [-1.0, -1.0, 0.0],
    [1.0, 0.0, 1.0],
    [-1.0, 0.0, 1.0],
    [1.0, 0.0, -1.0],
    [-1.0, 0.0, -1.0],
    [0.0, 1.0, 1.0],
    [0.0, -1.0, 1.0],
    [0.0, 1.0, -1.0],
    [0.0, -1.0, -1.0],
];

/// The gradient index of lattice point `(i, j, k)` (integers taken modulo
/// 2³²): lowbias32 (Wellons) of a mix of the three, modulo 12.
#[inline(always)]
pub(crate) fn lattice_hash(i: i64, j: i64, k: i64) -> usize {
    let mut h = (i as u32).wrapping_mul(0x8da6_b343)
        ^ (j as u32).wrapping_mul(0xd816_3841)
        ^ (k as u32).wrapping_mul(0xcb1a_b31f);
    h ^= h >> 16;
    h = h.wrapping_mul(0x7feb_352d);
    h ^= h >> 15;
    h = h.wrapping_mul(0x846c_a68b);
    h ^= h >> 16;
    (h % 12) as usize
}

/// 3-D simplex noise at `v`, in about [−1, 1] (the kernel
/// `(0.5 − d²)⁴`, scaled by 76).
pub(crate) fn simplex3(v: [f64; 3]) -> f64 {
    const F3: f64 = 1.0 / 3.0;
    const G3: f64 = 1.0 / 6.0;
    let skew = (v[0] + v[1] + v[2]) * F3;
    // Rust's `as` saturates (NaN to 0), as CUDA's conversion does.
    let i = (v[0] + skew).floor() as i64;
    let j = (v[1] + skew).floor() as i64;
    let k = (v[2] + skew).floor() as i64;
    let t = (i.wrapping_add(j).wrapping_add(k)) as f64 * G3;
    let c0 = [v[0] - (i as f64 - t), v[1] - (j as f64 - t), v[2] - (k as f64 - t)];
    // The simplex the point is in: the order of its offsets.
    let (o1, o2) = if c0[0] >= c0[1] {
        if c0[1] >= c0[2] {
            ([1, 0, 0], [1, 1, 0])
        } else if c0[0] >= c0[2] {
            ([1, 0, 0], [1, 0, 1])
        } else {
            ([0, 0, 1], [1, 0, 1])
        }
    } else if c0[1] < c0[2] {
        ([0, 0, 1], [0, 1, 1])
    } else if c0[0] < c0[2] {
        ([0, 1, 0], [0, 1, 1])
    } else {
        ([0, 1, 0], [1, 1, 0])
    };
    let corner = |o: [i64; 3], g: f64| [c0[0] - o[0] as f64 + g, c0[1] - o[1] as f64 + g, c0[2] - o[2] as f64 + g];
    let corners =
        [(c0, [0, 0, 0]), (corner(o1, G3), o1), (corner(o2, 2.0 * G3), o2), (corner([1, 1, 1], 3.0 * G3), [1, 1, 1])];
    let mut n = 0.0;
    for (c, o) in corners {
        let mut t = 0.5 - c[0] * c[0] - c[1] * c[1] - c[2] * c[2];
        if t > 0.0 {
            let g = GRAD12[lattice_hash(i.wrapping_add(o[0]), j.wrapping_add(o[1]), k.wrapping_add(o[2]))];
            t *= t;
            n += t * t * (g[0] * c[0] + g[1] * c[1] + g[2] * c[2]);
        }
    }
    76.0 * n
}

impl Crackle {
    pub(super) fn new(s: &VariationSpec) -> Self {
        // Fractorium's range: cellsize at least 0.0001.
        let cellsize = real(s.param(0), 0.0001, f64::INFINITY);
        Crackle { s: cellsize / 2.0, power: s.param(1), distort: s.param(2), scale: s.param(3), z: s.param(4) }
    }

    /// The jittered centre of cell `(x, y)`.
    fn centre(&self, x: i32, y: i32) -> [f64; 2] {
        let (xf, yf, zf) = (f64::from(x), f64::from(y), self.z);
        let e = [xf * 2.5, yf * 2.5, zf * 2.5];
        let f = [yf * 2.5 + 30.2, xf * 2.5 - 12.1, zf * 2.5 + 19.8];
        [(xf + self.distort * simplex3(e)) * self.s, (yf + self.distort * simplex3(f)) * self.s]
    }

    /// The centres of the 3 × 3 cells around `(cx, cy)`, column by column.
    fn neighbourhood(&self, cx: i32, cy: i32) -> [[f64; 2]; 9] {
        let mut p = [[0.0; 2]; 9];
        for (n, q) in p.iter_mut().enumerate() {
            let (di, dj) = (n as i32 / 3 - 1, n as i32 % 3 - 1);
            *q = self.centre(cx.wrapping_add(di), cy.wrapping_add(dj));
        }
        p
    }

    pub(super) fn eval<R: RandomSource>(&self, w: f64, rng: &mut R) -> (f64, f64) {
        let (u1, u2, u3) = (rng.next_f64(), rng.next_f64(), rng.next_f64());
        let blur = (u1 + u2) / 2.0 + (u3 - 0.5) / 4.0;
        let theta = 2.0 * std::f64::consts::PI * rng.next_f64();
        let u = [blur * theta.sin(), blur * theta.cos()];
        let mut cx = super::c_int((u[0] / self.s).floor());
        let mut cy = super::c_int((u[1] / self.s).floor());
        // The nearest of the nine centres, then the nine around it.
        let p = self.neighbourhood(cx, cy);
        let d2 = |q: &[f64; 2]| (q[0] - u[0]) * (q[0] - u[0]) + (q[1] - u[1]) * (q[1] - u[1]);
        let mut nearest = 0;
        for n in 1..9 {
            if d2(&p[n]) < d2(&p[nearest]) {
                nearest = n;
            }
        }
        cx = cx.wrapping_add(nearest as i32 / 3 - 1);
        cy = cy.wrapping_add(nearest as i32 % 3 - 1);
        let p = self.neighbourhood(cx, cy);
        let c = p[4];
        // Voronoi distance ratio: the largest over the neighbours of
        // 2 (u − c)·(q − c) / |q − c|².
        let mut l = f64::MIN;
        for (n, q) in p.iter().enumerate() {
            if n == 4 {
                continue;
            }
            let (dx, dy) = (q[0] - c[0], q[1] - c[1]);
            let ratio = if dx == 0.0 && dy == 0.0 {
                1.0
            } else {
                2.0 * ((u[0] - c[0]) * dx + (u[1] - c[1]) * dy) / (dx * dx + dy * dy)
            };
            l = l.max(ratio);
        }
        // Fractorium's |Zeps(l)|^power / Zeps(l): finite for a ratio that
        // rounding has made negative (float's, on tiny cells).
        let l = zeps(l);
        let r = l.abs().powf(self.power) * self.scale / l;
        (w * ((u[0] - c[0]) * r + c[0]), w * ((u[1] - c[1]) * r + c[1]))
    }
}

#[cfg(test)]
mod tests {
    use super::simplex3;

    /// The noise is continuous across the faces of its simplices (the
    /// kernel vanishes there), so points on a face, where the last bit of
    /// an input picks the simplex, get the same value from either side.
    #[test]
    fn simplex_noise_is_continuous_across_faces() {
        let mut worst = 0.0f64;
        for x in -8..8 {
            for y in -8..8 {
                for z in [0.0, 0.3, -1.7] {
                    // On a face: crackle's lattice-aligned inputs.
                    let v = [2.5 * f64::from(x), 2.5 * f64::from(y), 2.5 * z];
                    for axis in 0..3 {
                        let (mut a, mut b) = (v, v);
                        a[axis] -= 1e-12;
                        b[axis] += 1e-12;
                        worst = worst.max((simplex3(a) - simplex3(b)).abs());
                    }
                }
            }
        }
        assert!(worst < 1e-9, "the noise jumps by {worst} across a face");
        // And it is not trivially zero.
        let spread: f64 = (0..100).map(|i| simplex3([0.37 * f64::from(i), 1.1, -0.4]).abs()).sum();
        assert!(spread > 1.0, "{spread}");
    }
}
