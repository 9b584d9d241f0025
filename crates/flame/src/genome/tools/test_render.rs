//! flam3-genome's test render: a flame made by random, mutate or cross is
//! rendered small and made again, up to `tries` times, while its image is
//! too dark, too empty or too white. When every try fails, the last flame
//! is kept (flam3-genome warns "reached maximum attempts, giving up").

use super::GenomeRng;
use crate::error::{FlameError, Result};
use crate::genome::{FilterShape, Flame, Interpolation, PaletteInterpolation};
use crate::image::{Bits, quantize};
use crate::render::{RenderSettings, render};

/// flam3-genome's default `tries`: 50, as flam3's documentation gives it
/// and as the flam3-genome Debian ships (3.1.1+ds) has it; flam3-genome.c
/// itself reads 10.
pub const DEFAULT_TRIES: u32 = 50;

/// A flame made by [`until_it_passes`].
#[derive(Debug, Clone)]
pub struct Tested<T> {
    /// The flame kept: the first that passed, or the last made.
    pub flame: Flame,
    /// What the maker returned with it (the parents, the method used, …).
    pub made_with: T,
    /// Flames made, the kept one included.
    pub tries: u32,
    /// Whether the kept flame passed its test render; `None` when none was
    /// asked for (`tries` 0).
    pub passed: Option<bool>,
}

/// flam3-genome's loop: flames from `make` until one passes
/// [`passes_test_render`], at most `tries` of them; the last is kept when
/// none passes. With `tries` 0 the first flame is kept without a render.
pub fn until_it_passes<T>(
    tries: u32,
    rng: &mut GenomeRng,
    mut make: impl FnMut(&mut GenomeRng) -> Result<(Flame, T)>,
) -> Result<Tested<T>> {
    let mut made = 0;
    loop {
        let (flame, made_with) = make(rng)?;
        made += 1;
        if tries == 0 {
            return Ok(Tested { flame, made_with, tries: made, passed: None });
        }
        let passed = passes_test_render(&flame, rng)?;
        if passed || made >= tries {
            return Ok(Tested { flame, made_with, tries: made, passed: Some(passed) });
        }
    }
}

/// flam3-genome's judgement of a flame (its `test_cp` and thresholds): a
/// 128 × 128 render at quality 1, centred on the origin at 64 pixels per
/// unit whatever the flame's own camera, with early clipping, no density
/// estimation and a black background, must average at least 20 per
/// channel, be at least 1 % black pixels and at most 5 % white ones.
pub fn passes_test_render(f: &Flame, rng: &mut GenomeRng) -> Result<bool> {
    let test = Flame {
        time: 0.0,
        interpolation: Interpolation::Linear,
        palette_interpolation: PaletteInterpolation::Hsv,
        hsv_rgb_palette_blend: 0.0,
        background: [0.0; 3],
        center: [0.0, 0.0],
        rotate: 0.0,
        scale: 64.0,
        width: 128,
        height: 128,
        supersample: 1,
        filter_radius: 0.5,
        filter_shape: FilterShape::Gaussian,
        highlight_power: 1.0,
        zoom: 0.0,
        quality: 1.0,
        passes: 1,
        temporal_samples: 1,
        estimator_radius: 0.0,
        estimator_minimum: 0.0,
        estimator_curve: 0.6,
        ..f.clone()
    };
    let settings = RenderSettings { seed: rng.seed(), early_clip: true, ..Default::default() };
    let frame = match render(std::slice::from_ref(&test), 0.0, &settings) {
        Ok(frame) => frame,
        // A flame the renderer refuses (all weights zero, …) is not good.
        Err(FlameError::Invalid(_)) => return Ok(false),
        Err(e) => return Err(e),
    };
    let q = quantize(&frame, Bits::Eight);
    let n = (q.samples.len() / q.channels).max(1) as f64;
    let (mut sum, mut black, mut white) = (0u64, 0usize, 0usize);
    for p in q.samples.chunks(q.channels) {
        let rgb = &p[..3];
        sum += rgb.iter().map(|&c| u64::from(c)).sum::<u64>();
        black += usize::from(rgb.iter().all(|&c| c == 0));
        white += usize::from(rgb.iter().all(|&c| c == 255));
    }
    Ok(sum as f64 / (3.0 * n) >= 20.0 && black as f64 / n >= 0.01 && white as f64 / n <= 0.05)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::genome::tools::Operation;
    use crate::genome::{Affine, XForm};
    use crate::palette::Palette;
    use crate::variations::{VariationKind, VariationSpec};

    /// The square [−0.9, 0.9]², in white: at quality 1 about 40 % of the
    /// test image stays black and the rest averages well above 20 (flam3
    /// and warpmc both give 145).
    fn square() -> Flame {
        let lin = VariationKind::from_name("linear").unwrap();
        let x = |c: [f64; 2]| XForm {
            weight: 1.0,
            coefs: Affine { c: [[0.5, 0.0], [0.0, 0.5], c] },
            variations: vec![VariationSpec::new(lin, 1.0)],
            ..XForm::flam3_default(0)
        };
        let mut palette = Palette::black();
        for e in palette.entries.iter_mut() {
            *e = [1.0, 1.0, 1.0, 1.0];
        }
        let xforms = vec![x([-0.45, -0.45]), x([0.45, -0.45]), x([-0.45, 0.45]), x([0.45, 0.45])];
        Flame { xforms, palette, ..Flame::default() }
    }

    #[test]
    fn the_test_render_ignores_the_flames_camera() {
        let good = square();
        let mut rng = GenomeRng::new(1, Operation::Random, 0);
        assert!(passes_test_render(&good, &mut rng).unwrap());
        // Framed far away: flam3-genome's test still looks at the origin.
        let moved = Flame { center: [50.0, 50.0], scale: 1e-3, width: 7, height: 900, ..good.clone() };
        assert!(passes_test_render(&moved, &mut rng).unwrap());
        // All black: too dark.
        let dark = Flame { palette: Palette::black(), ..good.clone() };
        assert!(!passes_test_render(&dark, &mut rng).unwrap());
    }

    #[test]
    fn the_last_flame_is_kept_when_none_passes() {
        let dark = Flame { palette: Palette::black(), ..square() };
        let mut rng = GenomeRng::new(1, Operation::Random, 0);
        let mut made = 0;
        let t = until_it_passes(4, &mut rng, |_| {
            made += 1;
            Ok((Flame { time: f64::from(made), ..dark.clone() }, made))
        })
        .unwrap();
        assert_eq!((t.tries, t.made_with, t.passed, t.flame.time), (4, 4, Some(false), 4.0));
        // Without tries, the first flame unrendered.
        let t = until_it_passes(0, &mut rng, |_| Ok((dark.clone(), ()))).unwrap();
        assert_eq!((t.tries, t.passed), (1, None));
        // A good flame on the second try.
        let mut made = 0;
        let t = until_it_passes(10, &mut rng, |_| {
            made += 1;
            Ok((if made == 1 { dark.clone() } else { square() }, made))
        })
        .unwrap();
        assert_eq!((t.tries, t.made_with, t.passed), (2, 2, Some(true)));
    }
}
