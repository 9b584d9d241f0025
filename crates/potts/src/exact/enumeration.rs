//! The exact density of states of small periodic lattices, counted by a
//! row transfer matrix.

use rayon::prelude::*;

use super::{ExactMoments, SATURATED_BETA};

/// Largest number of row states, q^min(width, height), that
/// [`density_of_states`] accepts.
pub const MAX_ROW_STATES: usize = 4096;

/// The exact density of states of the q-state Potts model on a small periodic
/// lattice: `counts[k]` configurations have exactly k equal-neighbour bonds.
#[derive(Clone, Debug, PartialEq)]
pub struct DensityOfStates {
    /// Number of sites N = width · height.
    pub sites: usize,
    /// Number of bonds, 2N (k runs over 0..=bonds).
    pub bonds: usize,
    /// `counts[k]`: number of configurations with k equal-neighbour bonds,
    /// exact; `bonds + 1` entries summing to q^N.
    pub counts: Vec<u128>,
}

/// Counts the configurations of the q-state Potts model on a periodic
/// `width` × `height` lattice by their number of equal-neighbour bonds,
/// exactly.
///
/// The bonds are those a simulation sums over: for every site (x, y) the bond
/// to ((x + 1) mod W, y) and the bond to (x, (y + 1) mod H). So a lattice of
/// width 2 has two bonds between the two sites of each row (width 1: a bond
/// from each site to itself, always equal), and likewise for height. Neither
/// dimension needs to be even here.
///
/// Method: a transfer matrix along the longer side, over rows of the
/// shorter one (the bonds are symmetric under transposing the torus), with
/// integer counts. For a fixed first row, the counts of partial lattices
/// are carried as polynomials in the number of equal bonds, indexed by the
/// q^W states of a *broken row* (the new row's first x sites, the previous
/// row's others): appending one site adds its bond to the site above, to
/// its left neighbour, and at the row's end the wrap bond to the row's
/// first site. The bonds from the last row back to the first close the
/// torus. A first row's counts do not change when its states are permuted
/// or the row is shifted or reflected (the whole torus maps onto itself),
/// so only one row of each such class is followed, weighted by the size of
/// its class (33 classes of the 4096 rows for q = 4, W = 6). Cost about
/// classes · H · W · q^(W+1) · 2N additions: a second for q = 4 on 6 × 6.
///
/// # Panics
///
/// If `q`, `width` or `height` is 0, if q^min(width, height) exceeds
/// [`MAX_ROW_STATES`], or if q^(width·height) does not fit in 128 bits.
///
/// ```
/// let dos = warpmc_potts::exact::density_of_states(2, 4, 4);
/// assert_eq!(dos.counts.iter().sum::<u128>(), 65536);
/// assert_eq!(dos.counts[32], 2); // the two ground states
/// let q4 = warpmc_potts::exact::density_of_states(4, 6, 6);
/// assert_eq!(q4.counts.iter().sum::<u128>(), 4u128.pow(36));
/// ```
pub fn density_of_states(q: u32, width: usize, height: usize) -> DensityOfStates {
    assert!(q >= 1 && width >= 1 && height >= 1, "density_of_states needs q, width and height ≥ 1");
    assert!(q <= crate::model::MAX_Q, "density_of_states counts spins in bytes: q ≤ {}", crate::model::MAX_Q);
    // Rows along the shorter side.
    let (w, h) = (width.min(height), width.max(height));
    let qs = q as usize;
    let rows =
        u32::try_from(w).ok().and_then(|e| qs.checked_pow(e)).filter(|&r| r <= MAX_ROW_STATES).unwrap_or_else(|| {
            panic!(
                "density_of_states: q^min(width, height) must be at most {MAX_ROW_STATES} (q = {q}, {width} × {height})"
            )
        });
    let sites = width * height;
    u32::try_from(sites).ok().and_then(|n| u128::from(q).checked_pow(n)).unwrap_or_else(|| {
        panic!("density_of_states: q^(width·height) must fit in 128 bits (q = {q}, {width} × {height})")
    });
    let bonds = 2 * sites;
    let len = bonds + 1;
    let digits: Vec<u8> = (0..rows).flat_map(|r| (0..w).map(move |x| ((r / qs.pow(x as u32)) % qs) as u8)).collect();
    let digit = |r: usize, x: usize| digits[r * w + x];
    let powers: Vec<usize> = (0..w).map(|x| qs.pow(x as u32)).collect();

    // One first row per class, and the class sizes.
    let mut classes: Vec<(usize, u128)> = Vec::new();
    let mut class_of = std::collections::HashMap::new();
    for r in 0..rows {
        let key = canonical_row(&digits[r * w..(r + 1) * w]);
        let i = *class_of.entry(key).or_insert_with(|| {
            classes.push((r, 0));
            classes.len() - 1
        });
        classes[i].1 += 1;
    }

    let counts = classes
        .par_iter()
        .map(|&(first, weight)| {
            // dp[s * len + k]: partial lattices whose broken row is s, with k
            // equal bonds so far.
            let mut dp = vec![0u128; rows * len];
            let mut next = vec![0u128; rows * len];
            let horizontal = (0..w).filter(|&x| digit(first, x) == digit(first, (x + 1) % w)).count();
            dp[first * len + horizontal] = 1;
            let mut degree = horizontal; // highest k that can be nonzero
            for _ in 1..h {
                for (x, &power) in powers.iter().enumerate() {
                    next.fill(0);
                    for s in 0..rows {
                        let src = &dp[s * len..s * len + degree + 1];
                        if src.iter().all(|&v| v == 0) {
                            continue;
                        }
                        let above = digit(s, x);
                        let base = s - above as usize * power;
                        for c in 0..q as u8 {
                            let mut add = (c == above) as usize;
                            if x > 0 {
                                add += (c == digit(s, x - 1)) as usize;
                            }
                            if x + 1 == w {
                                // The wrap bond to the row's first site (itself when w = 1).
                                add += if w == 1 { 1 } else { (c == digit(s, 0)) as usize };
                            }
                            let to = (base + c as usize * power) * len + add;
                            for (dst, &v) in next[to..to + src.len()].iter_mut().zip(src) {
                                *dst += v;
                            }
                        }
                    }
                    std::mem::swap(&mut dp, &mut next);
                    // The most bonds this site can add: up, left, and the wrap bond.
                    degree += match (w, x) {
                        (1, _) => 2,
                        (_, 0) => 1,
                        _ if x + 1 == w => 3,
                        _ => 2,
                    };
                }
            }
            // Close the torus: bonds from the last row down to the first.
            let mut out = vec![0u128; len];
            for s in 0..rows {
                let shift = (0..w).filter(|&x| digit(s, x) == digit(first, x)).count();
                for (k, &v) in dp[s * len..s * len + degree + 1].iter().enumerate() {
                    if v != 0 {
                        out[k + shift] += v * weight;
                    }
                }
            }
            out
        })
        .reduce(
            || vec![0u128; len],
            |mut a, b| {
                a.iter_mut().zip(&b).for_each(|(x, y)| *x += y);
                a
            },
        );

    DensityOfStates { sites, bonds, counts }
}

/// The smallest of a row's shifts and reflections, each with its states
/// renamed in order of first appearance: equal for rows that one such map
/// and a permutation of the states carry into each other.
pub(super) fn canonical_row(row: &[u8]) -> Vec<u8> {
    let w = row.len();
    let mut best: Option<Vec<u8>> = None;
    for shift in 0..w {
        for reflect in [false, true] {
            let mut names = [u8::MAX; 256];
            let mut next = 0u8;
            let form: Vec<u8> = (0..w)
                .map(|i| {
                    let x = if reflect { (shift + w - i) % w } else { (shift + i) % w };
                    let d = row[x] as usize;
                    if names[d] == u8::MAX {
                        names[d] = next;
                        next += 1;
                    }
                    names[d]
                })
                .collect();
            if best.as_ref().is_none_or(|b| form < *b) {
                best = Some(form);
            }
        }
    }
    best.unwrap_or_default()
}

impl DensityOfStates {
    /// Canonical averages at `temperature` T > 0 for coupling J: the energy
    /// per site of a configuration with k equal bonds is e = −J·k/N and its
    /// weight `counts[k]`·exp(J·k/T). Weights are combined in log space
    /// (log-sum-exp), so large lattices, low temperatures and negative J do
    /// not overflow.
    ///
    /// ```
    /// let dos = warpmc_potts::exact::density_of_states(2, 4, 4);
    /// let m = dos.moments(1.0, 1.0);
    /// assert!(m.energy < -1.0 && m.energy > -2.0 && m.specific_heat > 0.0);
    /// ```
    pub fn moments(&self, temperature: f64, coupling: f64) -> ExactMoments {
        let n = self.sites as f64;
        // Levels are at least one bond apart, so beyond |J|/T = SATURATED_BETA
        // only the ground level has weight in f64; clamping keeps J/T · k
        // finite at the smallest temperatures.
        let beta = (coupling / temperature).clamp(-SATURATED_BETA, SATURATED_BETA);
        // Moments of the equal-bond count k, then scaled by J: with J and T
        // both tiny (1e-200) the energies' squares would underflow.
        let terms: Vec<(f64, f64)> = self
            .counts
            .iter()
            .enumerate()
            .filter(|&(_, &c)| c > 0)
            .map(|(k, &c)| (k as f64, (c as f64).ln() + beta * k as f64))
            .collect();
        let max = terms.iter().map(|&(_, lw)| lw).fold(f64::NEG_INFINITY, f64::max);
        let (mut z, mut s1) = (0.0, 0.0);
        for &(k, lw) in &terms {
            let w = (lw - max).exp();
            z += w;
            s1 += w * k;
        }
        let mean_k = s1 / z;
        // Variance from centred terms: no cancellation between ⟨k²⟩ and ⟨k⟩².
        let var_k = terms.iter().map(|&(k, lw)| (lw - max).exp() * (k - mean_k) * (k - mean_k)).sum::<f64>() / z;
        let energy = -coupling * (mean_k / n);
        let energy_sq = energy * energy + (coupling / n) * (coupling / n) * var_k;
        // c = N·Var(e)/T² = (J/T)²·Var(k)/N; beyond SATURATED_BETA Var(k) is 0.
        ExactMoments { energy, energy_sq, specific_heat: beta * beta * var_k / n }
    }
}
