//! Blending palettes (the palette part of flam3's `flam3_interpolate_n`).
//!
//! - `hsv`: hue, saturation and value blended entry by entry (hue in
//!   sixths of a turn, 0…6, not wrapped: it can go the long way round);
//! - `hsv_circular`: the same, but with two control points the first hue is
//!   moved by a turn where that makes the way shorter; the result is then
//!   mixed with the RGB blend by `hsv_rgb_palette_blend` (0 = all HSV);
//! - `rgb`: red, green and blue blended;
//! - `sweep`: no blending: entries below `256·c0` come from the first
//!   control point, the rest from the second.
//!
//! Alpha is blended (and exactly 1 where every control point's is 1);
//! channels are clamped to [0, 1] (NaN stays NaN, as in flam3).

use crate::genome::PaletteInterpolation;
use crate::palette::{Palette, hsv_to_rgb, rgb_to_hsv};

use super::WorkFlame;

/// The palette of the flame blended from `cps` with weights `c`; the mode
/// and the HSV/RGB mix come from the first control point.
pub(super) fn blend_palettes(cps: &[WorkFlame<'_>], c: &[f64]) -> Palette {
    let first = &cps[0].flame;
    let mut out = Palette::black();
    if first.palette_interpolation == PaletteInterpolation::Sweep {
        let split = 256.0 * c[0];
        for (i, entry) in out.entries.iter_mut().enumerate() {
            let from = if (i as f64) < split { 0 } else { 1 };
            *entry = cps[from].flame.palette.entries[i];
        }
        return out;
    }

    let rgb_fraction = match first.palette_interpolation {
        PaletteInterpolation::Rgb => 1.0,
        PaletteInterpolation::HsvCircular => first.hsv_rgb_palette_blend,
        _ => 0.0,
    };
    let circular = cps.len() == 2 && first.palette_interpolation == PaletteInterpolation::HsvCircular;

    for (i, entry) in out.entries.iter_mut().enumerate() {
        let mut rgb = [0.0; 3];
        let mut hsv = [0.0; 3];
        let mut alpha = 0.0;
        let mut all_opaque = true;
        for (k, &ck) in c.iter().enumerate() {
            let e = cps[k].flame.palette.entries[i];
            let col = [e[0], e[1], e[2]];
            let mut h = rgb_to_hsv(col);
            if circular && k == 0 {
                // Take the short way round to the second control point's hue.
                let other = cps[1].flame.palette.entries[i];
                let h1 = rgb_to_hsv([other[0], other[1], other[2]])[0];
                if h1 - h[0] > 3.0 {
                    h[0] += 6.0;
                } else if h1 - h[0] < -3.0 {
                    h[0] -= 6.0;
                }
            }
            for j in 0..3 {
                rgb[j] += ck * col[j];
                hsv[j] += ck * h[j];
            }
            alpha += ck * e[3];
            if e[3] != 1.0 {
                all_opaque = false;
            }
        }
        if all_opaque {
            alpha = 1.0;
        }
        let from_hsv = hsv_to_rgb(hsv);
        for j in 0..3 {
            entry[j] = (rgb_fraction * rgb[j] + (1.0 - rgb_fraction) * from_hsv[j]).clamp(0.0, 1.0);
        }
        entry[3] = alpha.clamp(0.0, 1.0);
    }
    out
}
