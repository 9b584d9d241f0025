//! Random flames (flam3's `flam3_random`), framed on their attractor
//! (`flam3_estimate_bounding_box`) and judged by a test render, as
//! flam3-genome does.

use std::f64::consts::PI;

use warpmc_rng::RandomSource;

use super::test_render::{DEFAULT_TRIES, Tested, until_it_passes};
use super::{GenomeRng, normalise, random_symmetry, set_weight, symmetry_xforms};
use crate::error::{FlameError, Result};
use crate::genome::{Affine, Flame, XForm};
use crate::palette::{Palette, PaletteLibrary};
use crate::variations::{VariationKind, VariationSet, VariationSpec};

/// What a random flame may be made of.
#[derive(Debug, Clone)]
pub struct RandomOptions {
    /// Standard xforms; `None` draws 2 to 6 as flam3 does (fewer more
    /// often) and adds a final xform 15 % of the time.
    pub xforms: Option<usize>,
    /// The variations to choose from (flam3-genome's `use_vars`, or the
    /// complement of `dont_use_vars`); see [`default_variations`].
    pub variations: Vec<VariationKind>,
    /// flam3-genome's `symmetry`: 0 adds a random symmetry a quarter of the
    /// time (never with a final xform), 1 none, another value that group
    /// (negative: with a mirror).
    pub symmetry: i64,
    /// Flames made and test-rendered before the last one is kept although
    /// it fails (flam3-genome's `tries`, [`DEFAULT_TRIES`]); 0 keeps the first flame
    /// without rendering it.
    pub tries: u32,
}

impl RandomOptions {
    /// Refuses options that no flame can be made with: no variations, or
    /// more xforms or a larger symmetry than the command line takes (and,
    /// for symmetry, than a genome's `<symmetry kind>`), whose xforms would
    /// not fit in memory.
    pub fn check(&self) -> Result<()> {
        if self.variations.is_empty() {
            return Err(FlameError::invalid("no variations to choose from"));
        }
        if let Some(n) = self.xforms.filter(|&n| n > MAX_RANDOM_XFORMS) {
            return Err(FlameError::invalid(format!("{n} xforms is more than {MAX_RANDOM_XFORMS} for a random flame")));
        }
        if self.symmetry.unsigned_abs() > MAX_SYMMETRY {
            return Err(FlameError::invalid(format!(
                "symmetry {} is beyond ±{MAX_SYMMETRY} (the symmetry group's xforms, one per rotation)",
                self.symmetry
            )));
        }
        Ok(())
    }
}

impl Default for RandomOptions {
    fn default() -> Self {
        RandomOptions { xforms: None, variations: default_variations(), symmetry: 0, tries: DEFAULT_TRIES }
    }
}

/// flam3-genome's default variations: all of flam3's but the ones that
/// blur or break up a random flame (noise, blur, gaussian_blur, radial_blur,
/// rays, cross, pre_blur, separation, split, splits), as Debian's
/// flam3-genome 3.1.1 leaves them out (flam3's own source also leaves out
/// ngon and square; Debian's default of 50 tries is kept too).
pub fn default_variations() -> Vec<VariationKind> {
    const LEFT_OUT: [&str; 10] =
        ["noise", "blur", "gaussian_blur", "radial_blur", "rays", "cross", "pre_blur", "separation", "split", "splits"];
    VariationKind::all().take(99).filter(|k| !LEFT_OUT.contains(&k.name())).collect()
}

/// The most standard xforms [`random`] makes when asked for a number.
pub const MAX_RANDOM_XFORMS: usize = 1000;

/// The largest |symmetry| [`random`] adds (as a genome's `<symmetry kind>`).
pub const MAX_SYMMETRY: u64 = 1000;

/// flam3's distribution of the number of standard xforms.
const XFORM_COUNTS: [usize; 14] = [2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 5, 5, 6];

/// A random flame of `base`'s size and render settings (its xforms and
/// palette are replaced): xforms, variations and their parameters drawn as
/// flam3 draws them, a random palette of `library` (a random smooth one
/// when there is none), framed on its attractor, with flam3-genome's
/// [`truncate_variations`](super::truncate_variations). With `opts.tries > 0`,
/// flames are drawn until one passes flam3-genome's test render
/// ([`passes_test_render`](super::passes_test_render)), at most `tries`
/// times; the last is kept when none passes ([`random_tested`] says which).
pub fn random(
    base: &Flame,
    opts: &RandomOptions,
    library: Option<&PaletteLibrary>,
    rng: &mut GenomeRng,
) -> Result<Flame> {
    random_tested(base, opts, library, rng).map(|t| t.flame)
}

/// [`random`], with the number of flames drawn, whether the one kept
/// passed the test render, and (as `made_with`) the truncation's notes for
/// an edit record.
pub fn random_tested(
    base: &Flame,
    opts: &RandomOptions,
    library: Option<&PaletteLibrary>,
    rng: &mut GenomeRng,
) -> Result<Tested<String>> {
    opts.check()?;
    if opts.xforms == Some(0) {
        return Err(FlameError::invalid("a random flame needs at least one xform"));
    }
    until_it_passes(opts.tries, rng, |rng| {
        let mut f = random_unframed(base, opts, library, rng);
        frame_flame(&mut f, rng);
        let notes = super::truncate_variations(&mut f, super::MAX_VARIATIONS);
        Ok((f, notes))
    })
}

/// The flame before framing: flam3's `flam3_random`.
fn random_unframed(base: &Flame, opts: &RandomOptions, library: Option<&PaletteLibrary>, rng: &mut GenomeRng) -> Flame {
    let mut f = Flame { xforms: Vec::new(), final_xform: None, name: None, time: 0.0, ..base.clone() };
    f.hue_rotation = if rng.below(8) != 0 { 0.0 } else { rng.r01() };
    f.palette = random_palette(library, f.hue_rotation, rng);
    f.interpolation = crate::genome::Interpolation::Linear;
    f.palette_interpolation = crate::genome::PaletteInterpolation::HsvCircular;
    f.hsv_rgb_palette_blend = 0.0;

    let n = opts.xforms.unwrap_or_else(|| XFORM_COUNTS[rng.below(XFORM_COUNTS.len())]);
    let add_final = opts.xforms.is_none() && rng.r01() < 0.15;
    let vars = &opts.variations;
    // flam3's flam3_random gives every xform one variation (the same one,
    // or one each) only when its list of variations starts with "random";
    // flam3-genome always passes an explicit list (its variations but the
    // excluded ones), so every standard xform gets a mix: its own, or half
    // the time (from the second xform on) a copy of the previous xform's.
    let same = rng.bit();
    let post_identity = rng.r01() < 0.6;
    let same_post = rng.bit();
    let total = n + usize::from(add_final);
    for i in 0..total {
        let is_final = add_final && i == n;
        let mut x = XForm {
            weight: 1.0 / total as f64,
            color: (i & 1) as f64,
            color_speed: 0.5,
            animate: 1.0,
            ..XForm::flam3_default(i)
        };
        let mut c = [[0.0; 2]; 3];
        for row in &mut c {
            for v in row.iter_mut() {
                *v = rng.r11();
            }
        }
        x.coefs = Affine { c };
        if is_final {
            x.weight = 0.0;
            // flam3 does not clear a new final xform's variations: it
            // keeps flam3's initial linear of weight 1 (whatever the list
            // of variations) beside its one or two draws, all normalised
            // together (a draw of linear replaces that weight).
            let linear = VariationKind::from_index(0).expect("linear is variation 0");
            x.variations = vec![VariationSpec::new(linear, 1.0)];
            let k = 1 + usize::from(rng.bit());
            for _ in 0..k {
                set_weight(&mut x.variations, vars[rng.below(vars.len())], rng.r01());
            }
            normalise_or_pick(&mut x.variations, vars, rng);
        } else {
            if !post_identity {
                if same_post && i > 0 {
                    x.post = f.xforms[0].post;
                } else {
                    let mut p = [[0.0; 2]; 3];
                    for row in &mut p {
                        for v in row.iter_mut() {
                            *v = rng.r11();
                        }
                    }
                    x.post = Affine { c: p };
                }
            }
            if same && i > 0 {
                x.variations = f.xforms[i - 1].variations.clone();
            } else {
                // At least two draws, more with falling probability; a
                // variation drawn twice keeps the later weight.
                let mut k = 2;
                while rng.bit() && k < vars.len() {
                    k += 1;
                }
                for _ in 0..k {
                    set_weight(&mut x.variations, vars[rng.below(vars.len())], rng.r01());
                }
                normalise_or_pick(&mut x.variations, vars, rng);
            }
        }
        for v in &mut x.variations {
            random_params(v, rng);
        }
        if is_final {
            f.final_xform = Some(x);
        } else {
            f.xforms.push(x);
        }
    }
    if opts.symmetry != 0 && opts.symmetry != 1 {
        f.xforms.extend(symmetry_xforms(opts.symmetry));
    } else if opts.symmetry == 0 && !add_final && rng.below(4) == 0 {
        let k = random_symmetry(rng);
        if k != 0 && k != 1 {
            f.xforms.extend(symmetry_xforms(k));
        }
    }
    f
}

/// An unframed random flame with exactly `n` standard xforms and no
/// final xform (the raw material of mutations).
pub(super) fn random_unframed_for(
    base: &Flame,
    n: usize,
    opts: &RandomOptions,
    library: Option<&PaletteLibrary>,
    rng: &mut GenomeRng,
) -> Flame {
    let opts = RandomOptions { xforms: Some(n.max(1)), ..opts.clone() };
    random_unframed(base, &opts, library, rng)
}

/// Normalised weights, or one variation of weight 1 when all drew 0.
fn normalise_or_pick(v: &mut Vec<VariationSpec>, vars: &[VariationKind], rng: &mut GenomeRng) {
    v.retain(|s| s.weight != 0.0);
    if v.is_empty() {
        v.push(VariationSpec::new(vars[rng.below(vars.len())], 1.0));
    }
    normalise(v);
}

/// A palette of the library at random, turned by `hue`; without a library
/// a smooth random one through six random colours.
pub(super) fn random_palette(library: Option<&PaletteLibrary>, hue: f64, rng: &mut GenomeRng) -> Palette {
    if let Some(lib) = library.filter(|l| !l.is_empty()) {
        let numbers: Vec<i64> = lib.numbers().collect();
        let n = numbers[rng.below(numbers.len())];
        return lib.get(n).expect("a number the library lists").rotate_hue(hue);
    }
    let keys: Vec<[f64; 3]> = (0..6).map(|_| [rng.r01(), rng.r01(), rng.r01()]).collect();
    let mut p = Palette::black();
    for (i, e) in p.entries.iter_mut().enumerate() {
        let t = i as f64 / 256.0 * keys.len() as f64;
        let (k, u) = (t.floor() as usize, t.fract());
        let (a, b) = (keys[k], keys[(k + 1) % keys.len()]);
        for c in 0..3 {
            e[c] = a[c] + (b[c] - a[c]) * u;
        }
    }
    p.rotate_hue(hue)
}

/// flam3's random parameters of its parametric variations (the others
/// keep their defaults), set by parameter name.
fn random_params(v: &mut VariationSpec, rng: &mut GenomeRng) {
    let names: Vec<&'static str> = v.kind.params().iter().map(|p| p.name).collect();
    let mut values: Vec<f64> = (0..names.len()).map(|i| v.param(i)).collect();
    for (i, name) in names.iter().enumerate() {
        let x = match *name {
            "blob_low" => 0.2 + 0.5 * rng.r01(),
            "blob_high" => 0.8 + 0.4 * rng.r01(),
            "blob_waves" => (2.0 + 5.0 * rng.r01()).trunc(),
            "pdj_a" | "pdj_b" | "pdj_c" | "pdj_d" => 3.0 * rng.r11(),
            "fan2_x" | "fan2_y" => rng.r11(),
            "rings2_val" => 2.0 * rng.r01(),
            "perspective_angle" => rng.r01(),
            "perspective_dist" => 2.0 * rng.r01() + 1.0,
            "julian_power" | "juliascope_power" | "wedge_julia_power" => (5.0 * rng.r01() + 2.0).trunc(),
            "julian_dist" | "juliascope_dist" | "wedge_julia_dist" => 1.0,
            "radial_blur_angle" => 2.0 * rng.r01() - 1.0,
            // flam3's `(int) 10.0*r`, `(int) r*10 + 3` and `(int) r*6`
            // cast before they multiply: pie's slices are not whole, ngon
            // has 3 sides and super_shape's m is 0 (the number is still
            // drawn).
            "pie_slices" => 10.0 * rng.r01(),
            "pie_thickness" => rng.r01(),
            "pie_rotation" => 2.0 * PI * rng.r11(),
            "ngon_sides" => rng.r01().trunc() * 10.0 + 3.0,
            "ngon_power" => 3.0 * rng.r01() + 1.0,
            "ngon_circle" => 3.0 * rng.r01(),
            "ngon_corners" => 2.0 * rng.r01() * values[names.iter().position(|n| *n == "ngon_circle").unwrap_or(i)],
            "curl_c1" | "curl_c2" | "rectangles_x" | "rectangles_y" => rng.r01(),
            "disc2_rot" | "disc2_twist" => 0.5 * rng.r01(),
            "super_shape_rnd" => rng.r01(),
            "super_shape_m" => rng.r01().trunc() * 6.0,
            "super_shape_n1" => rng.r01() * 40.0,
            "super_shape_n2" => rng.r01() * 20.0,
            "super_shape_n3" => values[names.iter().position(|n| *n == "super_shape_n2").unwrap_or(i)],
            "super_shape_holes" => 0.0,
            "flower_petals" => 4.0 * rng.r01(),
            "flower_holes" | "conic_eccentricity" | "conic_holes" => rng.r01(),
            "parabola_height" | "parabola_width" => 0.5 + rng.r01(),
            "bent2_x" | "bent2_y" => 3.0 * (rng.r01() - 0.5),
            "bipolar_shift" => 2.0 * rng.r01() - 1.0,
            "cell_size" => 2.0 * rng.r01() + 0.5,
            "cpow_r" => 3.0 * rng.r01(),
            "cpow_i" => rng.r01() - 0.5,
            "cpow_power" => (5.0 * rng.r01()).trunc(),
            "curve_xamp" => 5.0 * (rng.r01() - 0.5),
            "curve_yamp" => 4.0 * (rng.r01() - 0.5),
            "curve_xlength" | "curve_ylength" => 2.0 * (rng.r01() + 0.5),
            "escher_beta" => PI * rng.r11(),
            "lazysusan_x" | "lazysusan_y" | "lazysusan_space" | "lazysusan_twist" => 2.0 * rng.r11(),
            "lazysusan_spin" => PI * rng.r11(),
            "modulus_x" | "modulus_y" => rng.r11(),
            "oscope_separation" => 1.0 + rng.r11(),
            "oscope_frequency" => PI * rng.r11(),
            "oscope_amplitude" => 1.0 + 2.0 * rng.r01(),
            "oscope_damping" => rng.r01(),
            "popcorn2_x" | "popcorn2_y" => 0.2 * rng.r01(),
            "popcorn2_c" => 5.0 * rng.r01(),
            "separation_x" | "separation_y" => 1.0 + rng.r11(),
            "separation_xinside" | "separation_yinside" => rng.r11(),
            "split_xsize" | "split_ysize" | "splits_x" | "splits_y" => rng.r11(),
            "stripes_space" => rng.r01(),
            "stripes_warp" => 5.0 * rng.r01(),
            "wedge_angle" | "wedge_sph_angle" | "wedge_julia_angle" => PI * rng.r01(),
            "wedge_hole" | "wedge_sph_hole" => 0.5 * rng.r11(),
            "wedge_count" | "wedge_sph_count" => (5.0 * rng.r01()).floor() + 1.0,
            "wedge_swirl" | "wedge_sph_swirl" => rng.r01(),
            "wedge_julia_count" => (3.0 * rng.r01() + 1.0).trunc(),
            "whorl_inside" | "whorl_outside" => rng.r01(),
            "waves2_scalex" | "waves2_scaley" => 0.5 + rng.r01(),
            "waves2_freqx" | "waves2_freqy" => 4.0 * rng.r01(),
            "auger_sym" => 0.0,
            "auger_weight" => 0.5 + rng.r01() / 2.0,
            "auger_freq" => (5.0 * rng.r01()).floor() + 1.0,
            "auger_scale" => rng.r01(),
            "flux_spread" => 0.5 + rng.r01() / 2.0,
            n if n.starts_with("mobius_") => rng.r11(),
            _ => continue,
        };
        values[i] = x;
    }
    v.params = values;
}

/// Points of the attractor sampled for framing.
const FRAME_SAMPLES: usize = 100_000;

/// Frames `f` on its attractor as flam3-genome frames a random flame:
/// a box leaving out 1 % of the points (more when many points are bad) on
/// each side; then either centred on it or, more often, placed at a golden
/// section of it, with the scale making the box as wide as the image.
/// Nothing changes when the chaos game gives no usable point.
pub fn frame_flame(f: &mut Flame, rng: &mut GenomeRng) {
    let Some((lo, hi)) = bounding_box(f, 0.01, FRAME_SAMPLES, rng) else { return };
    if rng.r01() < 0.3 {
        f.center = [(lo[0] + hi[0]) / 2.0, (lo[1] + hi[1]) / 2.0];
    } else {
        let golden = |rng: &mut GenomeRng| if rng.bit() { 0.38196 } else { 0.61804 };
        let (m0, m1) = if rng.bit() {
            let m0 = golden(rng) + rng.r11() / 5.0;
            (m0, golden(rng))
        } else if rng.bit() {
            let m0 = golden(rng);
            (m0, golden(rng) + rng.r11() / 5.0)
        } else {
            let m0 = golden(rng) + rng.r11() / 5.0;
            (m0, golden(rng) + rng.r11() / 5.0)
        };
        f.center = [m0 * lo[0] + (1.0 - m0) * hi[0], m1 * lo[1] + (1.0 - m1) * hi[1]];
    }
    // A box of (nearly) no width, an attractor of one point, leaves the
    // scale as it was: width / 1e-320 would be infinite.
    let scale = f64::from(f.width) / (hi[0] - lo[0]);
    if scale > 0.0 && scale.is_finite() {
        f.scale = scale;
    }
}

/// flam3's `flam3_estimate_bounding_box`: the box that leaves out a
/// fraction `eps` of `n` attractor points on each side (3× the fraction of
/// bad points when that is more, at most 0.3).
fn bounding_box(f: &Flame, eps: f64, n: usize, rng: &mut GenomeRng) -> Option<([f64; 2], [f64; 2])> {
    let total: f64 = f.xforms.iter().map(|x| x.weight.max(0.0)).sum();
    if total.is_nan() || total <= 0.0 {
        return None;
    }
    let sets: Vec<VariationSet> = f.xforms.iter().map(|x| VariationSet::new(&x.variations, &x.coefs)).collect();
    let final_set = f.final_xform.as_ref().map(|x| VariationSet::new(&x.variations, &x.coefs));
    let apply = |x: &XForm, set: &VariationSet, p: (f64, f64), rng: &mut GenomeRng| {
        let (tx, ty) = x.coefs.apply(p.0, p.1);
        let (vx, vy) = set.apply(tx, ty, &mut RngSource(rng));
        if x.post.is_identity() { (vx, vy) } else { x.post.apply(vx, vy) }
    };
    let mut xs = Vec::with_capacity(n);
    let mut ys = Vec::with_capacity(n);
    let mut bad = 0usize;
    let mut p = (rng.r11(), rng.r11());
    let mut i = 0;
    while xs.len() < n && i < 4 * n + 100 {
        i += 1;
        let mut r = rng.r01() * total;
        let k = f.xforms.iter().position(|x| {
            r -= x.weight.max(0.0);
            r < 0.0
        });
        let k = k.unwrap_or(f.xforms.len() - 1);
        let q = apply(&f.xforms[k], &sets[k], p, rng);
        if !(q.0.is_finite() && q.1.is_finite()) || q.0.abs() > 1e10 || q.1.abs() > 1e10 {
            bad += 1;
            p = (rng.r11(), rng.r11());
            continue;
        }
        p = q;
        if i <= 20 {
            continue;
        }
        let out = match (&f.final_xform, &final_set) {
            (Some(x), Some(s)) => apply(x, s, p, rng),
            _ => p,
        };
        if out.0.is_finite() && out.1.is_finite() {
            xs.push(out.0);
            ys.push(out.1);
        }
    }
    if xs.len() < 10 {
        return None;
    }
    let m = xs.len();
    let eps = eps.max(3.0 * bad as f64 / m as f64).min(0.3);
    let low = (m as f64 * eps) as usize;
    let high = (m - low).min(m - 1);
    xs.sort_by(f64::total_cmp);
    ys.sort_by(f64::total_cmp);
    Some(([xs[low], ys[low]], [xs[high], ys[high]]))
}

/// The genome tools' stream as the variations' random source.
struct RngSource<'a>(&'a mut GenomeRng);

impl RandomSource for RngSource<'_> {
    fn next_u32(&mut self) -> u32 {
        self.0.stream.next_u32()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::genome::tools::Operation;

    #[test]
    fn random_flames_follow_the_options() {
        let opts = RandomOptions { xforms: Some(4), symmetry: 1, tries: 0, ..RandomOptions::default() };
        for i in 0..20 {
            let mut rng = GenomeRng::new(3, Operation::Random, i);
            let f = random(&Flame::default(), &opts, None, &mut rng).unwrap();
            assert_eq!(f.xforms.len(), 4);
            assert!(f.final_xform.is_none());
            for x in &f.xforms {
                // Normalised to 1, then truncated to five as flam3-genome
                // does (without normalising again).
                let sum: f64 = x.variations.iter().map(|v| v.weight).sum();
                assert!(sum > 0.0 && sum <= 1.0 + 1e-12, "weights sum to {sum}");
                assert!(x.variations.len() <= 5 && !x.variations.is_empty());
                assert!(x.variations.iter().all(|v| opts.variations.contains(&v.kind)));
                assert!(x.variations.windows(2).all(|w| w[0].kind < w[1].kind), "variations out of order");
                assert!((x.weight - 0.25).abs() < 1e-15);
            }
        }
    }

    /// flam3-genome passes flam3_random an explicit list of variations, so
    /// each standard xform gets a mix of at least two draws (or a copy of
    /// the previous xform's), never one variation for the whole flame by
    /// design. flam3-genome's own flames: 1 in 200 with every xform one
    /// same variation, 2.5 variations per xform of mean weight 0.34.
    #[test]
    fn random_xforms_get_mixes_of_variations_as_flam3_genomes_do() {
        let opts = RandomOptions { symmetry: 1, tries: 0, ..RandomOptions::default() };
        let (mut one_same, mut nvars, mut nxforms, mut weights, mut nweights) = (0, 0, 0, 0.0, 0);
        for i in 0..200 {
            let mut rng = GenomeRng::new(17, Operation::Random, i);
            let mut f = random_unframed(&Flame::default(), &opts, None, &mut rng);
            super::super::truncate_variations(&mut f, super::super::MAX_VARIATIONS);
            let kinds = |x: &XForm| x.variations.iter().map(|v| v.kind).collect::<Vec<_>>();
            let first = kinds(&f.xforms[0]);
            one_same += usize::from(first.len() == 1 && f.xforms.iter().all(|x| kinds(x) == first));
            for x in &f.xforms {
                nxforms += 1;
                nvars += x.variations.len();
                weights += x.variations.iter().map(|v| v.weight).sum::<f64>();
                nweights += x.variations.len();
            }
        }
        let per_xform = nvars as f64 / f64::from(nxforms);
        let mean_weight = weights / nweights as f64;
        assert!(one_same < 10, "{one_same} of 200 flames with one same variation in every xform");
        assert!(per_xform > 2.2 && per_xform < 3.2, "{per_xform} variations per xform");
        assert!(mean_weight > 0.25 && mean_weight < 0.45, "mean variation weight {mean_weight}");
    }

    #[test]
    fn only_the_allowed_variations_are_used() {
        let julia = VariationKind::from_name("julia").unwrap();
        let opts = RandomOptions { variations: vec![julia], tries: 0, ..RandomOptions::default() };
        let mut rng = GenomeRng::new(5, Operation::Random, 0);
        let f = random(&Flame::default(), &opts, None, &mut rng).unwrap();
        for x in &f.xforms {
            let symmetry = x.color_speed == 0.0 && x.animate == 0.0;
            assert!(symmetry || x.variations.iter().all(|v| v.kind == julia));
        }
    }

    /// flam3's random final xform keeps the linear every new xform starts
    /// with beside its one or two draws, whatever the list of variations.
    #[test]
    fn a_random_final_xform_keeps_flam3s_linear() {
        let julia = VariationKind::from_name("julia").unwrap();
        let linear = VariationKind::from_index(0).unwrap();
        let opts = RandomOptions { variations: vec![julia], tries: 0, ..RandomOptions::default() };
        let mut finals = 0;
        for i in 0..100 {
            let mut rng = GenomeRng::new(8, Operation::Random, i);
            let f = random_unframed(&Flame::default(), &opts, None, &mut rng);
            if let Some(x) = &f.final_xform {
                finals += 1;
                let kinds: Vec<_> = x.variations.iter().map(|v| v.kind).collect();
                assert_eq!(kinds, [linear, julia], "flame {i}");
                let sum: f64 = x.variations.iter().map(|v| v.weight).sum();
                assert!((sum - 1.0).abs() < 1e-12 && x.variations[0].weight > 0.5, "flame {i}: {:?}", x.variations);
            }
        }
        assert!(finals > 5, "{finals} final xforms in 100 flames");
    }

    #[test]
    fn framing_centres_a_known_attractor() {
        // The Sierpinski triangle on (0,0), (1,0), (0,1).
        let lin = VariationKind::from_name("linear").unwrap();
        let x = |c: [f64; 2]| XForm {
            weight: 1.0,
            coefs: Affine { c: [[0.5, 0.0], [0.0, 0.5], c] },
            variations: vec![VariationSpec::new(lin, 1.0)],
            ..XForm::flam3_default(0)
        };
        let f = Flame { xforms: vec![x([0.0, 0.0]), x([0.5, 0.0]), x([0.0, 0.5])], ..Flame::default() };
        let mut rng = GenomeRng::new(1, Operation::Random, 0);
        let (lo, hi) = bounding_box(&f, 0.01, 20_000, &mut rng).unwrap();
        assert!(lo[0] > -0.01 && lo[0] < 0.1 && hi[0] > 0.9 && hi[0] < 1.01, "{lo:?} {hi:?}");
        let mut g = f.clone();
        frame_flame(&mut g, &mut rng);
        assert!(g.center[0] > 0.1 && g.center[0] < 0.9 && g.center[1] > 0.1 && g.center[1] < 0.9, "{:?}", g.center);
        assert!(g.scale > 80.0 && g.scale < 130.0, "{}", g.scale);
    }
}

#[cfg(test)]
mod flam3_casts {
    use super::*;

    /// flam3's random pie, ngon and super_shape parameters cast before they
    /// multiply (`(int) 10.0*r`, `(int) r*10 + 3`, `(int) r*6`).
    #[test]
    fn random_parameters_keep_flam3s_casts() {
        let mut rng = GenomeRng::new(3, super::super::Operation::Random, 0);
        let drawn = |name: &str, rng: &mut GenomeRng| {
            let mut v = VariationSpec::new(VariationKind::from_name(name).unwrap(), 1.0);
            random_params(&mut v, rng);
            v
        };
        let mut fractional_slices = 0;
        for _ in 0..50 {
            let pie = drawn("pie", &mut rng);
            let slices = pie.param(0);
            assert!((0.0..10.0).contains(&slices), "{slices}");
            fractional_slices += usize::from(slices.fract() != 0.0);
            assert_eq!(drawn("ngon", &mut rng).param(0), 3.0, "ngon_sides");
            assert_eq!(drawn("super_shape", &mut rng).param(1), 0.0, "super_shape_m");
        }
        assert!(fractional_slices > 40, "{fractional_slices}");
    }
}
