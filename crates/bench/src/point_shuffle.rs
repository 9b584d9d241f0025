//! The point-shuffle experiment of cuburn's notes (Steven Robertson,
//! `cuburn/shuffle.py`), rerun: how much sample diversity is lost when a
//! whole warp applies the same transform, and how much each shuffle of the
//! points between warps wins back.
//!
//! A block of `t` one-dimensional points, `w` lanes per warp, starts with
//! every point of warp n at the value n. Each round, every group of
//! `group` consecutive threads picks one of four affine maps
//! `x ↦ A·x + B` by probability and applies it to its points; then the
//! points are shuffled. After `FUSE` discarded rounds, each round adds up,
//! over the maps, the standard deviation of the values that map produced;
//! the "diversity" is the mean of that sum over the rounds. Larger is
//! better: identical points produce no spread.
//!
//! One detail the notes leave open: a map no group picked in a round has no
//! values, and the standard deviation of nothing is taken as 0 here (numpy
//! gives NaN, which would poison the sum).

use warpmc_rng::{Mwc, RandomSource};

/// The notes' maps: (A, B, probability).
pub const MAPS: [(f64, f64, f64); 4] = [(0.5, 0.0, 0.3), (0.5, 0.5, 0.3), (0.5, 1.0, 0.3), (0.25, 0.75, 0.1)];

/// Discarded rounds before measuring (the notes' FUSE).
pub const FUSE: usize = 20;

/// How points move between rounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StudyShuffle {
    /// Points stay in place.
    None,
    /// A uniformly random permutation of the whole block every round.
    Full,
    /// cuburn's simple shuffle: lane l of warp n goes to slot
    /// (l + (n + l)·w) mod t.
    Simple,
    /// Each warp first rotates its lanes by a random amount, then the
    /// simple shuffle.
    Better,
}

impl StudyShuffle {
    /// All four, in the notes' order.
    pub const ALL: [StudyShuffle; 4] =
        [StudyShuffle::None, StudyShuffle::Full, StudyShuffle::Simple, StudyShuffle::Better];

    /// Name as printed.
    pub fn name(self) -> &'static str {
        match self {
            StudyShuffle::None => "none",
            StudyShuffle::Full => "full",
            StudyShuffle::Simple => "simple",
            StudyShuffle::Better => "better",
        }
    }
}

/// Applies `shuffle` to `a` (block of `a.len()` points, `w` lanes per
/// warp), using `tmp` as scratch.
pub fn shuffle_block<R: RandomSource>(
    a: &mut Vec<f64>,
    tmp: &mut Vec<f64>,
    w: usize,
    shuffle: StudyShuffle,
    rng: &mut R,
) {
    let t = a.len();
    match shuffle {
        StudyShuffle::None => {}
        StudyShuffle::Full => {
            // Fisher–Yates.
            for i in (1..t).rev() {
                let j = rng.below(i as u32 + 1) as usize;
                a.swap(i, j);
            }
        }
        StudyShuffle::Simple | StudyShuffle::Better => {
            tmp.clear();
            tmp.resize(t, 0.0);
            for n in 0..t / w {
                let r = if shuffle == StudyShuffle::Better { rng.below(w as u32) as usize } else { 0 };
                for l in 0..w {
                    tmp[(l + (n + l) * w) % t] = a[(l + r) % w + n * w];
                }
            }
            std::mem::swap(a, tmp);
        }
    }
}

/// Population standard deviation (numpy's default), 0 for no values.
fn std_dev(v: &[f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    (v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n).sqrt()
}

/// The notes' `monte`: diversity of a block of `t` points, `w` lanes per
/// warp, one map per `group` consecutive threads, over `rounds` measured
/// rounds.
pub fn diversity(t: usize, w: usize, group: usize, shuffle: StudyShuffle, rounds: usize, seed: u64) -> f64 {
    assert!(
        w > 0 && t.is_multiple_of(w) && group > 0 && t.is_multiple_of(group),
        "block must be whole warps and groups"
    );
    let mut rng = Mwc::for_unit(seed, 0);
    let mut a: Vec<f64> = (0..t).map(|i| (i / w) as f64).collect();
    let mut tmp = Vec::with_capacity(t);
    let mut per_map: [Vec<f64>; 4] = Default::default();
    let mut sum = 0.0;
    for round in 0..FUSE.saturating_add(rounds) {
        for v in &mut per_map {
            v.clear();
        }
        for g in (0..t).step_by(group) {
            let mut sel = rng.next_f64();
            let mut k = 0;
            while k + 1 < MAPS.len() && sel > MAPS[k].2 {
                sel -= MAPS[k].2;
                k += 1;
            }
            let (ma, mb, _) = MAPS[k];
            for x in &mut a[g..g + group] {
                *x = *x * ma + mb;
                per_map[k].push(*x);
            }
        }
        if round >= FUSE {
            sum += per_map.iter().map(|v| std_dev(v)).sum::<f64>();
        }
        shuffle_block(&mut a, &mut tmp, w, shuffle, &mut rng);
    }
    sum / rounds as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simple_shuffle_is_the_notes_permutation_and_separates_warps() {
        let (w, t) = (16, 256);
        let mut a: Vec<f64> = (0..t).map(|i| (i / w) as f64).collect();
        let mut tmp = Vec::new();
        let mut rng = Mwc::for_unit(1, 0);
        shuffle_block(&mut a, &mut tmp, w, StudyShuffle::Simple, &mut rng);
        // A permutation ...
        let mut sorted = a.clone();
        sorted.sort_by(f64::total_cmp);
        let mut orig: Vec<f64> = (0..t).map(|i| (i / w) as f64).collect();
        orig.sort_by(f64::total_cmp);
        assert_eq!(sorted, orig);
        // ... after which no warp holds two points from the same warp (the
        // notes' first observation on the square 16×16 block).
        for n in 0..t / w {
            let mut seen = [false; 16];
            for l in 0..w {
                let origin = a[n * w + l] as usize;
                assert!(!seen[origin], "warp {n} has two points from warp {origin}");
                seen[origin] = true;
            }
        }
        // The notes' address rule for lane 3 of warp 2.
        let b: Vec<f64> = (0..t).map(|i| i as f64).collect();
        let mut c = b.clone();
        shuffle_block(&mut c, &mut tmp, w, StudyShuffle::Simple, &mut rng);
        assert_eq!(c[(3 + (2 + 3) * w) % t], b[3 + 2 * w]);
    }

    #[test]
    fn shuffles_order_as_the_notes_report() {
        // 32×8: no shuffle loses far more than any shuffle (about 0.35
        // against 0.62 at 1000 rounds), the simple and better shuffles are
        // as good as a full random permutation, one map per thread beats
        // them all.
        let none = diversity(256, 32, 32, StudyShuffle::None, 400, 7);
        let full = diversity(256, 32, 32, StudyShuffle::Full, 400, 7);
        let simple = diversity(256, 32, 32, StudyShuffle::Simple, 400, 7);
        let better = diversity(256, 32, 32, StudyShuffle::Better, 400, 7);
        let per_thread = diversity(256, 32, 1, StudyShuffle::None, 400, 7);
        assert!(none < 0.7 * full, "none {none} full {full}");
        assert!((simple - full).abs() < 0.05 * full && (better - full).abs() < 0.05 * full, "{simple} {better} {full}");
        assert!(per_thread > 1.1 * full, "{per_thread} {full}");
    }
}
