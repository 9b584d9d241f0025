//! Fractorium's and Apophysis's plugin variations beyond flam3's: flatten
//! and crop (linear3D is linear in the plane).

use warpmc_rng::RandomSource;

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
    /// 1 when `crop_zero` is nonzero, else 0.
    pub(crate) zero: f64,
}

impl Crop {
    pub(super) fn new(s: &VariationSpec) -> Self {
        let (left, top, right, bottom, scatter, zero) =
            (s.param(0), s.param(1), s.param(2), s.param(3), s.param(4), s.param(5));
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
