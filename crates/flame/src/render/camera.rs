//! flam3's camera: from plane coordinates to histogram cells.

use super::Field;
use crate::genome::Flame;

/// Maps plane coordinates to histogram cells (flam3's camera).
#[derive(Clone, Debug, Default)]
pub(crate) struct Camera {
    /// The rotation about `rot_center` (`None`: the flame is not rotated).
    pub(crate) rot: Option<[[f64; 2]; 2]>,
    pub(crate) rot_center: [f64; 2],
    /// The plane rectangle the histogram covers: x0, y0, x1, y1.
    pub(crate) bounds: [f64; 4],
    /// Cell column of x: `ws0·x − wb0s0`; cell row of y: `hs1·y − hb1s1`.
    pub(crate) ws0: f64,
    pub(crate) wb0s0: f64,
    pub(crate) hs1: f64,
    pub(crate) hb1s1: f64,
    /// The histogram's size in cells.
    pub(crate) width: usize,
    pub(crate) height: usize,
}

impl Camera {
    /// The camera of `cp` for a `width × height`-cell histogram with
    /// `gutter` cells on each side at `supersample` cells per pixel, for
    /// pixels `pixel_aspect` times as wide as they are high (flam3 divides
    /// the horizontal pixels per unit by it), drawing `field` (of a flame
    /// whose height is already the field's: its rows are twice as tall,
    /// and flam3 moves the view by its shift).
    pub(crate) fn new(
        cp: &Flame,
        gutter: usize,
        supersample: usize,
        width: usize,
        height: usize,
        pixel_aspect: f64,
        field: Field,
    ) -> Self {
        let zoom = 2f64.powf(cp.zoom);
        let ppu = cp.scale * zoom;
        let ppux = ppu / pixel_aspect;
        let ppuy = if field == Field::Both { ppu } else { ppu / 2.0 };
        let shift = field.shift(ppux);
        let t0 = gutter as f64 / (supersample as f64 * ppux);
        let t1 = gutter as f64 / (supersample as f64 * ppuy);
        let corner0 = cp.center[0] - f64::from(cp.width) / ppux / 2.0;
        let corner1 = cp.center[1] - f64::from(cp.height) / ppuy / 2.0;
        let bounds = [
            corner0 - t0,
            corner1 - t1 + shift,
            corner0 + f64::from(cp.width) / ppux + t0,
            corner1 + f64::from(cp.height) / ppuy + t1 + shift,
        ];
        let size0 = 1.0 / (bounds[2] - bounds[0]);
        let size1 = 1.0 / (bounds[3] - bounds[1]);
        // rotate·π/180 with the constant folded, as flam3's -ffast-math build
        // computes rotate·2π/360 (rect.c): a finite angle for every finite
        // rotate (rotate·2 overflows above 9e307).
        let th = cp.rotate.to_radians();
        let rot = (cp.rotate != 0.0).then(|| [[th.cos(), -th.sin()], [th.sin(), th.cos()]]);
        let ws0 = width as f64 * size0;
        let hs1 = height as f64 * size1;
        Camera {
            rot,
            rot_center: cp.center,
            bounds,
            ws0,
            wb0s0: ws0 * bounds[0],
            hs1,
            hb1s1: hs1 * bounds[1],
            width,
            height,
        }
    }

    /// The cell `(x, y)` lands in, if any.
    #[inline(always)]
    pub(crate) fn cell(&self, x: f64, y: f64) -> Option<u32> {
        let (p0, p1) = match &self.rot {
            Some(r) => {
                let dx = x - self.rot_center[0];
                let dy = y - self.rot_center[1];
                (dx * r[0][0] + dy * r[0][1] + self.rot_center[0], dx * r[1][0] + dy * r[1][1] + self.rot_center[1])
            }
            None => (x, y),
        };
        if p0 >= self.bounds[0] && p1 >= self.bounds[1] && p0 <= self.bounds[2] && p1 <= self.bounds[3] {
            // flam3 adds the column to width · row unclamped (rect.c): a
            // point exactly on the right edge (column = width) counts in the
            // first cell of the next row, one on the bottom edge (row =
            // height) outside the histogram, where it is dropped.
            let ix = (self.ws0 * p0 - self.wb0s0) as usize;
            let iy = (self.hs1 * p1 - self.hb1s1) as usize;
            let i = ix + self.width * iy;
            (i < self.width * self.height).then_some(i as u32)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::genome::{ParseOptions, parse_str};

    /// Every finite rotate gives a rotation (flam3-render draws the flame at
    /// rotate = 1e308; rotate·2 is infinite there).
    #[test]
    fn a_huge_rotate_is_still_a_rotation() {
        for rotate in [30.0, -169.0, 1e307, 1e308, -1e308, f64::MAX] {
            let xml =
                format!(r#"<flame size="32 24" scale="10" rotate="{rotate:e}"><xform weight="1" linear="1"/></flame>"#);
            let flame = &parse_str(&xml, "rotate", &ParseOptions::default()).unwrap().flames[0];
            let rot = Camera::new(flame, 0, 1, 32, 24, 1.0, Field::Both).rot.unwrap();
            let det = rot[0][0] * rot[1][1] - rot[0][1] * rot[1][0];
            assert!(
                rot.iter().flatten().all(|v| v.is_finite()) && (det - 1.0).abs() < 1e-12,
                "rotate {rotate}: {rot:?}"
            );
        }
    }

    /// A point exactly on the right edge counts in the first cell of the
    /// next row and one on the bottom edge nowhere, as in flam3-render
    /// (rect.c adds the column to width · row unclamped).
    #[test]
    fn points_on_the_far_edges_land_where_flam3_puts_them() {
        let xml = r#"<flame size="16 16" scale="16" center="0 0"><xform weight="1" linear="1"/></flame>"#;
        let flame = &parse_str(xml, "edges", &ParseOptions::default()).unwrap().flames[0];
        let cam = Camera::new(flame, 0, 1, 16, 16, 1.0, Field::Both);
        assert_eq!(cam.bounds, [-0.5, -0.5, 0.5, 0.5]);
        assert_eq!(cam.cell(-0.5, -0.5), Some(0));
        assert_eq!(cam.cell(0.0, 0.0), Some(8 + 16 * 8));
        assert_eq!(cam.cell(0.5, 0.0), Some(16 * 9));
        assert_eq!(cam.cell(0.0, 0.5), None);
        assert_eq!(cam.cell(0.5, 0.5), None);
        assert_eq!(cam.cell(0.4375, 0.4375), Some(16 * 16 - 1));
        // The right edge of the last row wraps past the histogram.
        assert_eq!(cam.cell(0.5, 0.4375), None);
        assert_eq!(cam.cell(0.5000001, 0.0), None);
    }
}
