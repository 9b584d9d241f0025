//! From the accumulation buffer to output pixels: the spatial filter, then
//! gamma (with a linear segment below `gamma_threshold`), vibrancy,
//! highlight power and the background, as flam3 does them. flam3's default
//! order filters first and then tone-maps; with early clipping (its
//! `earlyclip=1`) every accumulation cell is tone-mapped and clipped first
//! and the filter then blends display values, which keeps bright edges
//! from ringing.

use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;

use super::filters::SpatialFilter;
use super::histogram::Bucket;
use crate::palette::{hsv_to_rgb, rgb_to_hsv};

/// Tone-mapping constants of a frame (averaged over its temporal samples).
#[derive(Clone, Debug)]
pub(crate) struct ToneMap {
    /// 1 / gamma.
    pub(crate) inv_gamma: f64,
    pub(crate) vibrancy: f64,
    pub(crate) gamma_threshold: f64,
    pub(crate) highlight_power: f64,
    /// Background colour scaled to 0–256.
    pub(crate) background: [f64; 3],
    pub(crate) transparent: bool,
    /// Tone-map each accumulation cell before the spatial filter (flam3's
    /// `earlyclip`), instead of each filtered pixel.
    pub(crate) early_clip: bool,
    /// With `early_clip`: what each accumulation value is multiplied by
    /// before it is mapped (the accumulation buffer's scale, see
    /// `frame::accumulation_scale`; 1 almost always). Without, the spatial
    /// filter's coefficients carry that scale.
    pub(crate) cell_scale: f64,
}

const PREFILTER_WHITE: f64 = 255.0;

/// flam3's alpha for a density: a power law with a linear ramp near zero.
pub(crate) fn calc_alpha(density: f64, gamma: f64, linrange: f64) -> f64 {
    if density > 0.0 {
        if density < linrange {
            let frac = density / linrange;
            (1.0 - frac) * density * (linrange.powf(gamma) / linrange) + frac * density.powf(gamma)
        } else {
            density.powf(gamma)
        }
    } else {
        0.0
    }
}

/// Scales the colour by `ls`; where that saturates a channel and
/// `highlight_power` ≥ 0, desaturates towards white instead of shifting hue.
pub(crate) fn calc_newrgb(c: &[f64; 4], ls: f64, highpow: f64) -> [f64; 3] {
    if ls == 0.0 || (c[0] == 0.0 && c[1] == 0.0 && c[2] == 0.0) {
        return [0.0; 3];
    }
    let mut maxa = -1.0;
    let mut maxc = 0.0;
    for &v in &c[..3] {
        let a = ls * (v / PREFILTER_WHITE);
        if a > maxa {
            maxa = a;
            maxc = v / PREFILTER_WHITE;
        }
    }
    let newls = 255.0 / maxc;
    if maxa > 255.0 && highpow >= 0.0 {
        let lsratio = (newls / ls).powf(highpow);
        let full = [
            newls * (c[0] / PREFILTER_WHITE) / 255.0,
            newls * (c[1] / PREFILTER_WHITE) / 255.0,
            newls * (c[2] / PREFILTER_WHITE) / 255.0,
        ];
        let mut hsv = rgb_to_hsv(full);
        hsv[1] *= lsratio;
        let rgb = hsv_to_rgb(hsv);
        [rgb[0] * 255.0, rgb[1] * 255.0, rgb[2] * 255.0]
    } else {
        let mut adj = (-highpow).min(1.0);
        if maxa <= 255.0 {
            adj = 1.0;
        }
        // With adj = 1, ls alone: the formula's other term is 0 · newls,
        // which is NaN where no channel is positive (vibrancy < 0 makes
        // every ls · c negative, so maxc stays 0), and flam3-render's
        // images show ls · c there.
        let s = if adj == 1.0 { ls } else { (1.0 - adj) * newls + adj * ls };
        [s * (c[0] / PREFILTER_WHITE), s * (c[1] / PREFILTER_WHITE), s * (c[2] / PREFILTER_WHITE)]
    }
}

impl ToneMap {
    /// One filtered accumulation value `t` (RGBA) to display values: RGB in
    /// [0, 255] and alpha in [0, 1].
    #[inline]
    pub(crate) fn map(&self, t: &[f64; 4]) -> ([f64; 3], f64) {
        let tmp = t[3] / PREFILTER_WHITE;
        let (mut alpha, ls) = if t[3] <= 0.0 {
            (0.0, 0.0)
        } else {
            let a = calc_alpha(tmp, self.inv_gamma, self.gamma_threshold);
            (a, self.vibrancy * 256.0 * a / tmp)
        };
        alpha = alpha.clamp(0.0, 1.0);
        let newrgb = calc_newrgb(t, ls, self.highlight_power);
        let mut out = [0.0; 3];
        for k in 0..3 {
            let mut a = newrgb[k] + (1.0 - self.vibrancy) * 256.0 * (t[k] / PREFILTER_WHITE).powf(self.inv_gamma);
            if !self.transparent {
                a += (1.0 - alpha) * self.background[k];
            } else if alpha > 0.0 {
                a /= alpha;
            } else {
                a = 0.0;
            }
            // NaN (a negative lobe of the spatial filter under a
            // fractional power) ends up 255, as measured in flam3-render's
            // images: its clamps `if (a > 255) a = 255; if (a < 0) a = 0;`,
            // built with -ffast-math, evidently become min/max
            // instructions, which give the bound for NaN.
            out[k] = if a.is_nan() { 255.0 } else { a.clamp(0.0, 255.0) };
        }
        (out, alpha)
    }
}

/// The early clip: every accumulation cell becomes its display values (RGB
/// in [0, 255], alpha in [0, 1]), in place, as flam3's `earlyclip` pass
/// does before the spatial filter.
pub(crate) fn clip_early<T: Bucket>(acc: &mut [[T; 4]], tone: &ToneMap) {
    let s = tone.cell_scale;
    acc.par_iter_mut().for_each(|cell| {
        let t = cell.map(|v| v.to_f64() * s);
        let (rgb, alpha) = tone.map(&t);
        *cell = [rgb[0], rgb[1], rgb[2], alpha].map(T::from_f64);
    });
}

/// A filtered pixel of early-clipped cells to display values: each value
/// clamped to its range as flam3 clamps it (NaN to the top, see
/// [`ToneMap::map`]).
#[inline]
pub(crate) fn clamp_filtered(t: &[f64; 4]) -> ([f64; 3], f64) {
    let clamp = |v: f64, hi: f64| if v.is_nan() { hi } else { v.clamp(0.0, hi) };
    ([clamp(t[0], 255.0), clamp(t[1], 255.0), clamp(t[2], 255.0)], clamp(t[3], 1.0))
}

/// Filters and tone-maps the accumulation buffer (`acc_width` cells wide)
/// into `out` (RGBA, row-major, `width × height`): pixel (i, j) reads the
/// filter window whose corner is cell `(offset + i·ss, offset + j·ss)`.
/// With `tone.early_clip` the cells hold display values already
/// ([`clip_early`]) and the filtered ones are only clamped. Once `cancel`
/// is set the rows not yet begun are left undone (the caller discards the
/// frame).
#[allow(clippy::too_many_arguments)]
pub(crate) fn filter_and_map<T: Bucket>(
    acc: &[[T; 4]],
    acc_width: usize,
    filter: &SpatialFilter,
    offset: usize,
    supersample: usize,
    tone: &ToneMap,
    width: usize,
    out: &mut [[f64; 4]],
    cancel: Option<&AtomicBool>,
) {
    let fw = filter.width;
    // A stop is heard between rows, and with a wide filter (a row of a
    // 500-pixel filter is seconds of work) between pixels too.
    let heard_per_pixel = fw * fw >= 256;
    let stopped = || cancel.is_some_and(|c| c.load(Ordering::Relaxed));
    out.par_chunks_mut(width).enumerate().for_each(|(j, row)| {
        if stopped() {
            return;
        }
        let y = offset + j * supersample;
        for (i, px) in row.iter_mut().enumerate() {
            if heard_per_pixel && stopped() {
                return;
            }
            let x = offset + i * supersample;
            let mut t = [0.0f64; 4];
            for jj in 0..fw {
                let arow = &acc[(y + jj) * acc_width + x..][..fw];
                let krow = &filter.coefs[jj * fw..][..fw];
                for (k, a) in krow.iter().zip(arow) {
                    t[0] += k * a[0].to_f64();
                    t[1] += k * a[1].to_f64();
                    t[2] += k * a[2].to_f64();
                    t[3] += k * a[3].to_f64();
                }
            }
            let (rgb, alpha) = if tone.early_clip { clamp_filtered(&t) } else { tone.map(&t) };
            *px = [rgb[0], rgb[1], rgb[2], alpha];
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alpha_is_continuous_at_the_threshold() {
        let g = 1.0 / 4.0;
        let lin = 0.01;
        let below = calc_alpha(lin - 1e-12, g, lin);
        let above = calc_alpha(lin + 1e-12, g, lin);
        assert!((below - above).abs() < 1e-9);
        assert_eq!(calc_alpha(0.0, g, lin), 0.0);
        assert!((calc_alpha(16.0, 0.5, lin) - 4.0).abs() < 1e-12);
    }

    #[test]
    fn highlight_power_keeps_channels_in_range_and_hue() {
        // A saturated orange scaled far past white.
        let c = [255.0 * 10.0, 255.0 * 5.0, 0.0, 255.0 * 10.0];
        let plain = calc_newrgb(&c, 100.0, -1.0);
        assert!(plain[0] > 255.0); // clipped later: hue shifts towards yellow
        let hp = calc_newrgb(&c, 100.0, 1.0);
        assert!(hp.iter().all(|&v| v <= 255.0 + 1e-9));
        assert!(hp[2] > 0.0); // desaturated towards white
    }

    #[test]
    fn background_shows_where_nothing_landed() {
        let tone = ToneMap {
            inv_gamma: 0.25,
            vibrancy: 1.0,
            gamma_threshold: 0.01,
            highlight_power: -1.0,
            background: [256.0, 128.0, 0.0],
            transparent: false,
            early_clip: false,
            cell_scale: 1.0,
        };
        let (rgb, a) = tone.map(&[0.0; 4]);
        assert_eq!(a, 0.0);
        assert_eq!(rgb, [255.0, 128.0, 0.0]);
    }
}
