//! flam3-genome's operations on genomes: random flames, mutation,
//! crossing, rotation loops and sequences, cloning with a template, and
//! splitting a flame into strips.
//!
//! Each operation follows flam3 3.1.1's `flam3-genome` (Draves and Reckase,
//! "The Fractal Flame Algorithm"; Electric Sheep's genetic operators): the
//! same choices with the same probabilities, the same parameter ranges and
//! the same geometry. The random numbers are warpmc's own (Philox streams
//! named by the seed and the operation, see [`GenomeRng`]), so a seed gives
//! the same genome on every machine, but not the genome flam3-genome gives
//! for that seed. Where flam3-genome renders a test image of each genome it
//! makes by random, mutate or cross, and makes it again while that image
//! is too dark, too empty or too white (its `avg`, `black` and `white`
//! thresholds, up to `tries` times), [`random`] and [`until_it_passes`] do
//! the same with warpmc's renderer.

mod anim;
mod cross;
mod edit;
mod mutate;
mod random;
mod strip;
mod template;
mod test_render;

pub use anim::{animate_frames, inter, rotate, sequence, sequence_frames};
pub use cross::{CrossMethod, Crossed, cross};
pub use edit::{Editor, Parent, printf_g, printf_g_digits, record_edit};
pub use mutate::{MutateMethod, mutate};
pub use random::{
    MAX_RANDOM_XFORMS, MAX_SYMMETRY, RandomOptions, default_variations, frame_flame, random, random_tested,
};
pub use strip::strip;
pub use template::Template;
pub use test_render::{DEFAULT_TRIES, Tested, passes_test_render, until_it_passes};

use warpmc_rng::{Domain, PhiloxStream, RandomSource};

use super::{symmetry_xforms, symmetry_xforms_before_final};
use crate::variations::{VariationKind, VariationSpec};

/// The random numbers of the genome tools: one Philox stream per (seed,
/// operation, repetition), so that `--seed` fixes every choice and the
/// genomes of a `repeat` do not share numbers.
#[derive(Debug, Clone)]
pub struct GenomeRng {
    stream: PhiloxStream,
}

impl GenomeRng {
    /// The stream of repetition `index` of operation `op` under `seed`.
    pub fn new(seed: u64, op: Operation, index: u64) -> Self {
        let stream = ((op as u64) << 40) | (index & ((1 << 40) - 1));
        GenomeRng { stream: PhiloxStream::new(seed, Domain::FlameGenome.stream(stream)) }
    }

    /// Uniform in [0, 1) (flam3's `flam3_random01`).
    pub fn r01(&mut self) -> f64 {
        self.stream.next_f64()
    }

    /// Uniform in [−1, 1) (flam3's `flam3_random11`).
    pub fn r11(&mut self) -> f64 {
        2.0 * self.r01() - 1.0
    }

    /// A fair coin (flam3's `flam3_random_bit`).
    pub fn bit(&mut self) -> bool {
        self.stream.next_u32() & 1 == 1
    }

    /// Uniform in `0..n` (`n ≥ 1`).
    pub fn below(&mut self, n: usize) -> usize {
        ((self.stream.next_u64() as u128 * n as u128) >> 64) as usize
    }

    /// A seed for a test render.
    fn seed(&mut self) -> u64 {
        self.stream.next_u64()
    }
}

/// The operations, naming their random streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u64)]
pub enum Operation {
    /// [`random`].
    Random = 1,
    /// [`mutate`].
    Mutate = 2,
    /// [`cross`].
    Cross = 3,
    /// Picking a flame of a file at random.
    Pick = 4,
}

/// The most variations flam3-genome leaves in an xform.
pub const MAX_VARIATIONS: usize = 5;

/// What flam3-genome does to every flame it makes by random, mutate, cross
/// or pick (`clone=`), its `truncate_variations`: a standard xform of weight
/// below 0.001 is removed (with its chaos row and column), and in every
/// other xform the variations of smallest |weight| (the lowest flam3 index
/// among equals) are dropped until at most `max` remain (flam3-genome uses
/// 5).
///
/// flam3 walks its xform array (the final xform last) with one index and
/// does not look again at the place of a removed xform, so the xform that
/// moves into it is neither removed nor cut down; nor is the final xform
/// when it moves into that place. warpmc follows it, so that a pick gives
/// flam3-genome's flame. One difference: the last standard xform is never
/// removed (flam3 would leave a flame with none).
///
/// Returns flam3's notes for the edit record's action: ` trunc_density I`
/// for a removed xform and ` trunc I V` for a dropped variation (xform and
/// flam3 variation index at that moment).
pub fn truncate_variations(f: &mut super::Flame, max: usize) -> String {
    use std::fmt::Write as _;
    let mut notes = String::new();
    // Position i in flam3's array: the standard xforms, then the final one.
    let mut i = 0;
    while i < f.xforms.len() + usize::from(f.final_xform.is_some()) {
        let standard = i < f.xforms.len();
        if standard && f.xforms[i].weight < 0.001 && f.xforms.len() > 1 {
            let _ = write!(notes, " trunc_density {i}");
            f.xforms.remove(i);
            for x in &mut f.xforms {
                if x.chaos.len() > i {
                    x.chaos.remove(i);
                }
            }
        } else {
            let x = if standard {
                &mut f.xforms[i]
            } else {
                f.final_xform.as_mut().expect("position past the standard xforms")
            };
            while x.variations.len() > max {
                let smallest = x
                    .variations
                    .iter()
                    .enumerate()
                    .min_by(|a, b| a.1.weight.abs().total_cmp(&b.1.weight.abs()).then(a.1.kind.cmp(&b.1.kind)))
                    .map(|(k, _)| k)
                    .expect("more than max ≥ 0 variations");
                let _ = write!(notes, " trunc {i} {}", x.variations[smallest].kind.index());
                x.variations.remove(smallest);
            }
        }
        i += 1;
    }
    notes
}

/// Weights of an xform's variations scaled to sum to 1 (flam3's
/// normalisation of random weights).
fn normalise(variations: &mut [VariationSpec]) {
    let sum: f64 = variations.iter().map(|v| v.weight).sum();
    if sum != 0.0 {
        for v in variations {
            v.weight /= sum;
        }
    }
}

/// Sets the weight of `kind` in `variations` (adding it with default
/// parameters when absent), keeping flam3's index order.
fn set_weight(variations: &mut Vec<VariationSpec>, kind: VariationKind, weight: f64) {
    match variations.iter_mut().find(|v| v.kind == kind) {
        Some(v) => v.weight = weight,
        None => {
            let at = variations.iter().position(|v| v.kind > kind).unwrap_or(variations.len());
            variations.insert(at, VariationSpec::new(kind, weight));
        }
    }
}

/// flam3's choice of a symmetry when none is asked for: half the time one
/// of the common groups, else a uniform one in −6…6 (and rarely −25…25).
fn random_symmetry(rng: &mut GenomeRng) -> i64 {
    const COMMON: [i64; 15] = [-4, -3, -2, -2, -2, -1, -1, -1, 2, 2, 2, 3, 3, 4, 4];
    if rng.bit() {
        COMMON[rng.below(COMMON.len())]
    } else if rng.below(32) != 0 {
        rng.below(13) as i64 - 6
    } else {
        rng.below(51) as i64 - 25
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::genome::XForm;

    #[test]
    fn streams_differ_by_seed_operation_and_index() {
        let draw = |seed, op, i| {
            let mut r = GenomeRng::new(seed, op, i);
            (0..4).map(|_| r.r01()).collect::<Vec<f64>>()
        };
        let base = draw(1, Operation::Random, 0);
        assert_eq!(base, draw(1, Operation::Random, 0));
        assert_ne!(base, draw(2, Operation::Random, 0));
        assert_ne!(base, draw(1, Operation::Mutate, 0));
        assert_ne!(base, draw(1, Operation::Random, 1));
    }

    #[test]
    fn truncation_drops_light_xforms_and_the_smallest_variations() {
        let kinds: Vec<VariationKind> = VariationKind::all().take(8).collect();
        let x = |w: f64| XForm {
            weight: w,
            variations: kinds
                .iter()
                .enumerate()
                .map(|(i, &k)| VariationSpec::new(k, [0.3, -0.01, 0.2, 0.05, -0.4, 0.02, 0.1, 0.06][i] * w.max(1.0)))
                .collect(),
            chaos: vec![1.0, 0.5, 0.25],
            ..XForm::flam3_default(0)
        };
        let names = |x: &XForm| x.variations.iter().map(|v| v.kind.name()).collect::<Vec<&str>>();
        let five = ["linear", "spherical", "horseshoe", "handkerchief", "heart"];
        let mut f = super::super::Flame { xforms: vec![x(1.0), x(0.0005), x(3.0), x(2.0)], ..Default::default() };
        let notes = truncate_variations(&mut f, 5);
        assert_eq!(f.xforms.iter().map(|x| x.weight).collect::<Vec<_>>(), [1.0, 3.0, 2.0]);
        assert_eq!(f.xforms[0].chaos, vec![1.0, 0.25]);
        assert_eq!(names(&f.xforms[0]), five, "the five heaviest, in order");
        // flam3 does not look again at the place of the removed xform: the
        // one that moved into it keeps all eight.
        assert_eq!(f.xforms[1].variations.len(), 8);
        assert_eq!(names(&f.xforms[2]), five);
        assert_eq!(notes, " trunc 0 1 trunc 0 5 trunc 0 3 trunc_density 1 trunc 2 1 trunc 2 5 trunc 2 3");

        // A final xform that moves into a removed xform's place is not cut
        // down either; one that does not move is.
        let light_last = |final_x: XForm| super::super::Flame {
            xforms: vec![x(1.0), x(0.0005)],
            final_xform: Some(final_x),
            ..Default::default()
        };
        let mut f = light_last(x(1.0));
        truncate_variations(&mut f, 5);
        assert_eq!((f.xforms.len(), f.final_xform.as_ref().unwrap().variations.len()), (1, 8));
        let mut f = super::super::Flame {
            xforms: vec![x(0.0005), x(1.0), x(1.0)],
            final_xform: Some(x(1.0)),
            ..Default::default()
        };
        truncate_variations(&mut f, 5);
        assert_eq!(f.xforms.len(), 2);
        assert_eq!(f.xforms[0].variations.len(), 8);
        assert_eq!(names(&f.xforms[1]), five);
        assert_eq!(names(f.final_xform.as_ref().unwrap()), five);

        // Equal weights: the lowest flam3 index goes first, whatever the
        // order of the file.
        let mut tie = x(1.0);
        tie.variations.reverse();
        for v in &mut tie.variations {
            v.weight = 0.5;
        }
        let mut f = super::super::Flame { xforms: vec![tie], ..Default::default() };
        assert_eq!(truncate_variations(&mut f, 5), " trunc 0 0 trunc 0 1 trunc 0 2");
        // The last standard xform stays, however light.
        let mut f = super::super::Flame { xforms: vec![x(0.0005)], ..Default::default() };
        truncate_variations(&mut f, 5);
        assert_eq!(f.xforms.len(), 1);
    }

    #[test]
    fn below_stays_in_range_and_covers_it() {
        let mut r = GenomeRng::new(7, Operation::Pick, 0);
        let mut seen = [0u32; 7];
        for _ in 0..7000 {
            seen[r.below(7)] += 1;
        }
        assert!(seen.iter().all(|&c| c > 800), "{seen:?}");
    }

    #[test]
    fn symmetry_xforms_are_flam3s() {
        // kind 3: two rotations by 120° and 240°, colours 0 and 1.
        let x = symmetry_xforms(3);
        assert_eq!(x.len(), 2);
        let mut angles: Vec<f64> = x.iter().map(|x| x.coefs.c[0][1].atan2(x.coefs.c[0][0]).to_degrees()).collect();
        angles.sort_by(f64::total_cmp);
        assert!((angles[0] + 120.0).abs() < 1e-3 && (angles[1] - 120.0).abs() < 1e-3, "{angles:?}");
        // kind −2: a mirror and a half turn.
        let x = symmetry_xforms(-2);
        assert_eq!(x.len(), 2);
        assert!(x.iter().any(|x| x.coefs.c == [[-1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]));
        assert!(x.iter().all(|x| x.animate == 0.0 && x.color_speed == 0.0));
    }
}
