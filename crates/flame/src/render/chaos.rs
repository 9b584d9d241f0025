//! The chaos game: transforms compiled for fast application, xform choice
//! by weight (and by the previous xform's chaos row), fuse, final xform.
//!
//! Semantics follow flam3 3.1.1's `flam3_iterate` and `apply_xform`: a
//! 16384-entry lookup table per chaos row (a row that gives every xform
//! zero weight, which flam3 refuses, leads to xform 0, as in Fractorium), 15 fuse iterations at the start
//! of every sub-batch (100 with early clipping), up to four retries from a fresh random point when a
//! transform produces NaN or |x| > 10¹⁰, the final xform applied with
//! probability `opacity` and keeping the visibility of the xform before it.

use warpmc_rng::RandomSource;

use crate::genome::{Affine, Flame, XForm};
use crate::variations::VariationSet;

/// Entries in each xform-choice table (flam3's `CHOOSE_XFORM_GRAIN`).
pub(crate) const CHOOSE_GRAIN: usize = 16384;
/// Iterations discarded at the start of each sub-batch (flam3's fuse).
pub(crate) const FUSE: usize = 15;
/// The fuse of a render with early clipping (flam3 3.1.1 takes `FUSE_28`
/// then: its earlyclip came with the 2.8 renderer).
pub(crate) const EARLY_CLIP_FUSE: usize = 100;

/// The fuse of a render, by whether it clips early.
pub(crate) fn fuse(early_clip: bool) -> usize {
    if early_clip { EARLY_CLIP_FUSE } else { FUSE }
}

/// One transform ready to apply.
#[derive(Clone, Debug)]
pub(crate) struct CompiledXForm {
    coefs: Affine,
    post: Option<Affine>,
    color: f64,
    color_speed: f64,
    /// Visibility of points this xform produces (flam3's `vis_adjusted`).
    visibility: f64,
    /// Opacity as given (the final xform's application probability).
    opacity: f64,
    variations: VariationSet,
}

/// flam3's perceptual mapping of opacity to visibility. A negative opacity
/// (written, or a smooth interpolation's overshoot) draws nothing: flam3's
/// formula gives NaN there, which turns the cells it reaches black.
pub(crate) fn adjust_opacity(opacity: f64) -> f64 {
    if opacity <= 0.0 || opacity.is_nan() { 0.0 } else { 10f64.powf(-(1.0 / opacity).ln() / std::f64::consts::LN_2) }
}

impl CompiledXForm {
    fn new(x: &XForm) -> Self {
        CompiledXForm {
            coefs: x.coefs,
            post: (!x.post.is_identity()).then_some(x.post),
            color: x.color,
            color_speed: x.color_speed,
            visibility: adjust_opacity(x.opacity),
            opacity: x.opacity,
            variations: VariationSet::new(&x.variations, &x.coefs),
        }
    }

    /// Applies the transform to `p = (x, y, colour, visibility)`. Returns
    /// `None` (after drawing a fresh random point into the result) when the
    /// result is not usable, as flam3 does.
    #[inline]
    fn apply<R: RandomSource>(&self, p: &[f64; 4], rng: &mut R) -> ([f64; 4], bool) {
        let c = self.color_speed * self.color + (1.0 - self.color_speed) * p[2];
        let (tx, ty) = self.coefs.apply(p[0], p[1]);
        let (vx, vy) = self.variations.apply(tx, ty, rng);
        let (x, y) = match &self.post {
            Some(post) => post.apply(vx, vy),
            None => (vx, vy),
        };
        if bad(x) || bad(y) {
            let x = 2.0 * rng.next_f64() - 1.0;
            let y = 2.0 * rng.next_f64() - 1.0;
            ([x, y, c, self.visibility], false)
        } else {
            ([x, y, c, self.visibility], true)
        }
    }
}

#[inline(always)]
fn bad(v: f64) -> bool {
    v.is_nan() || !(-1e10..=1e10).contains(&v)
}

/// A flame's transforms compiled for iteration.
#[derive(Clone, Debug)]
pub(crate) struct ChaosGame {
    xforms: Vec<CompiledXForm>,
    /// Original indices of the xforms kept (weight > 0 or referenced).
    final_xform: Option<CompiledXForm>,
    /// Row 0: choice by weight. With chaos, row `i + 1`: choice after xform
    /// `i` was applied.
    tables: Vec<u16>,
    chaos: bool,
}

/// Why a flame cannot be iterated.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ChaosError {
    /// A weight or chaos entry that is negative, infinite or NaN.
    NegativeWeight(usize),
    /// All xform weights are zero.
    Empty,
    /// More xforms than the choice tables can index.
    TooManyXForms(usize),
    /// No standard xform at all (a final xform alone has no points to map).
    NoXForms,
    /// Xform `.1`'s weight times xform `.0`'s chaos entry for it is
    /// beyond the largest float.
    Overflow(usize, usize),
}

impl std::fmt::Display for ChaosError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ChaosError::NegativeWeight(i) => {
                write!(f, "xform {i}: weight (or a chaos entry) is negative, infinite or not a number")
            }
            ChaosError::Empty => write!(f, "all xform weights are zero: nothing to iterate"),
            ChaosError::TooManyXForms(n) => write!(f, "{n} xforms is more than 65535"),
            ChaosError::Overflow(i, j) => {
                write!(f, "xform {i}: its chaos entry for xform {j} times that xform's weight is beyond 1.8e308")
            }
            ChaosError::NoXForms => write!(
                f,
                "no <xform> to iterate (a <finalxform> only maps the points the xforms make; flam3-render says \
                 \"cannot iterate empty flame\" and writes an empty image)"
            ),
        }
    }
}

impl ChaosGame {
    /// Compiles the xforms of `flame`.
    pub(crate) fn new(flame: &Flame) -> Result<Self, ChaosError> {
        let n = flame.xforms.len();
        check_size(n)?;
        let chaos = has_chaos(flame);
        let rows = if chaos { n + 1 } else { 1 };
        let mut tables = vec![0u16; rows * CHOOSE_GRAIN];
        build_table(flame, None, &mut tables[..CHOOSE_GRAIN])?;
        if chaos {
            for i in 0..n {
                let row = &mut tables[(i + 1) * CHOOSE_GRAIN..(i + 2) * CHOOSE_GRAIN];
                build_table(flame, Some(i), row)?;
            }
        }
        Ok(ChaosGame {
            xforms: flame.xforms.iter().map(CompiledXForm::new).collect(),
            final_xform: flame.final_xform.as_ref().map(CompiledXForm::new),
            tables,
            chaos,
        })
    }

    /// The choice tables: row 0 by weight, then (with chaos) one row per
    /// previous xform, [`CHOOSE_GRAIN`] entries each (the CUDA backend's
    /// kernels read them).
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    pub(crate) fn tables(&self) -> &[u16] {
        &self.tables
    }

    /// Runs `fuse` discarded iterations from a random start, then calls
    /// `emit` with each of the next `n` points `(x, y, colour, visibility)`.
    /// Returns the number of bad values met (flam3's `badvals`).
    pub(crate) fn run<R: RandomSource>(
        &self,
        n: usize,
        fuse: usize,
        rng: &mut R,
        mut emit: impl FnMut(&[f64; 4]),
    ) -> u64 {
        let mut p = [2.0 * rng.next_f64() - 1.0, 2.0 * rng.next_f64() - 1.0, rng.next_f64(), rng.next_f64()];
        let mut consecutive_bad = 0;
        let mut bad_count = 0u64;
        let mut row = 0usize;
        let total = fuse + n;
        let mut i = 0;
        while i < total {
            let r = (rng.next_u32() as usize) & (CHOOSE_GRAIN - 1);
            let fi = usize::from(self.tables[row * CHOOSE_GRAIN + r]);
            let (q, ok) = self.xforms[fi].apply(&p, rng);
            p = q;
            if !ok {
                bad_count += 1;
                consecutive_bad += 1;
                if consecutive_bad < 5 {
                    // Retry this iteration from the fresh random point.
                    continue;
                }
                consecutive_bad = 0;
            } else {
                consecutive_bad = 0;
            }
            if self.chaos {
                row = fi + 1;
            }
            let out = match &self.final_xform {
                Some(fx) if fx.opacity == 1.0 || rng.next_f64() < fx.opacity => {
                    let (mut q, _) = fx.apply(&p, rng);
                    q[3] = p[3];
                    q
                }
                _ => p,
            };
            if i >= fuse {
                emit(&out);
            }
            i += 1;
        }
        bad_count
    }
}

/// Whether [`ChaosGame::new`] would compile `flame`, without building its
/// tables (which take 32 KiB per xform with chaos).
pub(crate) fn check(flame: &Flame) -> Result<(), ChaosError> {
    check_size(flame.xforms.len())?;
    row_total(flame, None)?;
    if has_chaos(flame) {
        for i in 0..flame.xforms.len() {
            row_total(flame, Some(i))?;
        }
    }
    Ok(())
}

fn check_size(n: usize) -> Result<(), ChaosError> {
    if n == 0 {
        return Err(ChaosError::NoXForms);
    }
    if n >= usize::from(u16::MAX) {
        return Err(ChaosError::TooManyXForms(n));
    }
    Ok(())
}

/// Whether some chaos entry differs from 1 (then each xform has a table).
fn has_chaos(flame: &Flame) -> bool {
    let n = flame.xforms.len();
    flame.xforms.iter().any(|x| (0..n).any(|j| (x.chaos_to(j) - 1.0).abs() > 1e-10))
}

/// The weight of xform `j` as chosen after xform `from` (`None`: the first
/// choice, by weight alone).
fn row_weight(flame: &Flame, from: Option<usize>, j: usize) -> f64 {
    let w = flame.xforms[j].weight;
    match from {
        Some(i) => w * flame.xforms[i].chaos_to(j),
        None => w,
    }
}

/// The total weight of a table's row, or why the row cannot be built.
fn row_total(flame: &Flame, from: Option<usize>) -> Result<f64, ChaosError> {
    let n = flame.xforms.len();
    let mut total = 0.0;
    let usable = |v: f64| v >= 0.0 && v.is_finite();
    for j in 0..n {
        if !usable(flame.xforms[j].weight) {
            return Err(ChaosError::NegativeWeight(j));
        }
        if let Some(i) = from.filter(|&i| !usable(flame.xforms[i].chaos_to(j))) {
            return Err(ChaosError::NegativeWeight(i));
        }
        let w = row_weight(flame, from, j);
        if w.is_infinite() {
            return Err(ChaosError::Overflow(from.unwrap_or(j), j));
        }
        total += w;
    }
    if n == 0 || (total == 0.0 && from.is_none()) {
        return Err(ChaosError::Empty);
    }
    Ok(total)
}

/// Fills one choice table: entry `k` is the xform whose cumulative weight
/// interval contains `k / CHOOSE_GRAIN` of the total (flam3's rule). A
/// chaos row whose products are all zero makes every entry xform 0:
/// flam3 refuses such a flame ("cannot iterate empty flame"), Fractorium
/// goes on with its first xform, and so does warpmc (the genome reader
/// warns, and refuses it with `--strict`).
fn build_table(flame: &Flame, from: Option<usize>, table: &mut [u16]) -> Result<(), ChaosError> {
    let n = flame.xforms.len();
    let mut total = row_total(flame, from)?;
    if total == 0.0 {
        table.fill(0);
        return Ok(());
    }
    // Finite weights whose sum overflows (three of 1e308) are divided by
    // the largest first: otherwise the step is infinite and every entry
    // is xform 0. Weights that sum to a finite total keep their bits.
    // Weights so small that the step would lose its bits or round to
    // zero (two of 1e-320) are multiplied by 2¹⁰⁰⁰ first, which changes no
    // ratio between normal numbers.
    let mut scale = 1.0;
    if total.is_infinite() {
        let largest = (0..n).map(|j| row_weight(flame, from, j)).fold(0.0, f64::max);
        if largest.is_finite() {
            scale = 1.0 / largest;
            total = (0..n).map(|j| row_weight(flame, from, j) * scale).sum();
        }
    } else if total / (CHOOSE_GRAIN as f64) < f64::MIN_POSITIVE {
        scale = 2f64.powi(1000);
        total = (0..n).map(|j| row_weight(flame, from, j) * scale).sum();
    }
    let weight = |j: usize| row_weight(flame, from, j) * scale;
    let step = total / CHOOSE_GRAIN as f64;
    let mut j = 0;
    let mut t = weight(0);
    let mut r = 0.0;
    for entry in table.iter_mut() {
        while r >= t && j + 1 < n {
            j += 1;
            t += weight(j);
        }
        *entry = j as u16;
        r += step;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three weights of 1e308 sum to infinity; they still share the table
    /// equally, as three weights of 1 do.
    #[test]
    fn weights_whose_sum_overflows_share_the_table_as_their_ratios_say() {
        let mut f = Flame {
            xforms: (0..3).map(|i| XForm { weight: 1e308, ..XForm::flam3_default(i) }).collect(),
            ..Flame::default()
        };
        let mut huge = vec![0u16; CHOOSE_GRAIN];
        build_table(&f, None, &mut huge).unwrap();
        for x in &mut f.xforms {
            x.weight = 1.0;
        }
        let mut one = vec![0u16; CHOOSE_GRAIN];
        build_table(&f, None, &mut one).unwrap();
        assert_eq!(huge, one);
        assert!((0..3).all(|j| one.contains(&j)));
    }

    /// Weights whose step rounds to zero (subnormal weights) or loses bits
    /// (2⁻¹⁰²⁰) still share the table as their ratios say.
    #[test]
    fn weights_too_small_for_the_step_share_the_table_as_their_ratios_say() {
        let table_of = |weights: [f64; 3]| {
            let f = Flame {
                xforms: weights
                    .iter()
                    .enumerate()
                    .map(|(i, &weight)| XForm { weight, ..XForm::flam3_default(i) })
                    .collect(),
                ..Flame::default()
            };
            let mut t = vec![0u16; CHOOSE_GRAIN];
            build_table(&f, None, &mut t).unwrap();
            t
        };
        // Powers of two apart from 1, 1, 2: the same table bit for bit.
        let one = table_of([1.0, 1.0, 2.0]);
        for e in [-1020, -1070] {
            let w = 2f64.powi(e);
            assert!(table_of([w, w, 2.0 * w]) == one, "weights 2^{e}");
        }
        assert_eq!(one.iter().filter(|&&v| v == 2).count(), CHOOSE_GRAIN / 2);
    }

    #[test]
    fn opacity_mapping_matches_flam3() {
        assert_eq!(adjust_opacity(0.0), 0.0);
        assert_eq!(adjust_opacity(-0.5), 0.0);
        assert_eq!(adjust_opacity(-1e-300), 0.0);
        assert!((adjust_opacity(1.0) - 1.0).abs() < 1e-15);
        // 0.5 → 10^(-1) = 0.1
        assert!((adjust_opacity(0.5) - 0.1).abs() < 1e-15);
    }

    #[test]
    fn choice_table_follows_weights() {
        let mut f = Flame::default();
        for (i, w) in [1.0, 0.0, 3.0].into_iter().enumerate() {
            let mut x = XForm::flam3_default(i);
            x.weight = w;
            f.xforms.push(x);
        }
        let mut t = vec![0u16; CHOOSE_GRAIN];
        build_table(&f, None, &mut t).unwrap();
        let c0 = t.iter().filter(|&&v| v == 0).count();
        let c1 = t.iter().filter(|&&v| v == 1).count();
        let c2 = t.iter().filter(|&&v| v == 2).count();
        assert_eq!(c0, CHOOSE_GRAIN / 4);
        assert_eq!(c1, 0);
        assert_eq!(c2, 3 * CHOOSE_GRAIN / 4);
        // xform 0's row reaches only xform 1, of weight 0: every entry is
        // xform 0 (Fractorium's rule), as a row reaching xform 0 alone gives.
        f.xforms[0].chaos = vec![0.0, 1.0, 0.0];
        t.fill(7);
        build_table(&f, Some(0), &mut t).unwrap();
        assert!(t.iter().all(|&v| v == 0));
        f.xforms[0].chaos = vec![1.0, 0.0, 0.0];
        let mut only_first = vec![7u16; CHOOSE_GRAIN];
        build_table(&f, Some(0), &mut only_first).unwrap();
        assert_eq!(t, only_first);
        for x in &mut f.xforms {
            x.weight = 0.0;
        }
        assert_eq!(build_table(&f, None, &mut t), Err(ChaosError::Empty));
        f.xforms[2].weight = 3.0;
        f.xforms[2].weight = -1.0;
        assert!(matches!(build_table(&f, None, &mut t), Err(ChaosError::NegativeWeight(2))));
        // A chaos entry that is not a number is its row's xform's fault; a
        // product of finite values beyond the largest float is said as such.
        f.xforms[2].weight = 1e308;
        f.xforms[0].chaos = vec![1.0, f64::NAN, 1.0];
        assert_eq!(build_table(&f, Some(0), &mut t), Err(ChaosError::NegativeWeight(0)));
        f.xforms[0].chaos = vec![1.0, 1.0, 2.0];
        assert_eq!(build_table(&f, Some(0), &mut t), Err(ChaosError::Overflow(0, 2)));
        f.xforms[0].chaos = vec![1.0, 1.0, 1.0];
        build_table(&f, Some(0), &mut t).unwrap();
    }
}
