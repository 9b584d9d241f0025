//! Heat-bath (Gibbs) updates: each site of a colour draws its new state
//! from its conditional Boltzmann distribution given its four neighbours,
//!
//! P(s) ∝ exp((J·n_s + h·δ(s, 0)) / T),
//!
//! where n_s is the number of neighbours in state s. The old state plays no
//! part. A checkerboard sweep (colour 0, then colour 1) uses the
//! one-word-per-site rule of [`algorithm`](crate::algorithm): the same
//! units, Philox blocks and multiply-with-carry generators as Metropolis,
//! one 32-bit word per site. No floating point touches the update: the
//! weights are integers tabulated on the host per temperature
//! ([`HeatBathTable`]), so the CPU and the GPU draw the same state from the
//! same word.
//!
//! # The rule of one site
//!
//! A state's weight depends only on (n, z): n ∈ 0…4 of its neighbours share
//! it, and z = δ(s, 0). Those ten *entries* (index 2n + z) are ranked by
//! J·n + h·z (ties by index). The states of a site fall into q *slots*:
//!
//! 1. each distinct neighbour state, in the order of first appearance among
//!    the neighbours (left, right, up, down), with entry (n_s, δ(s, 0));
//! 2. state 0 if no neighbour holds it, entry (0, 1);
//! 3. the P other states (no neighbour, not 0), entry (0, 0) each, in
//!    increasing order.
//!
//! Let R be the highest-ranked entry present. Every entry e's weight
//! relative to R, w_R(e) = ⌊e^{((J·n + h·z)_e − (J·n + h·z)_R)/T} · M⌋ with
//! M = ⌊(2⁶⁴ − 1)/q⌋, is tabulated (w_R(R) = M exactly), so the total Z of
//! the q slots is at most q·M < 2⁶⁴ and at least M: never zero, however low
//! the temperature. With the site's word r, x = ⌊r·Z / 2³²⌋ ∈ [0, Z) picks
//! the slot whose cumulative weight first exceeds x; among the P other
//! states, the ⌊(x − start)/w_R(0, 0)⌋-th.
//!
//! Each state thus gets an interval of r of length within one of
//! 2³²·w/Z: its probability is Gibbs' within 2⁻³² plus the weights'
//! rounding, below q·2⁻⁶⁴ relative. No proposal is rejected, so a heat-bath
//! sweep changes more spins than a Metropolis sweep for q ≥ 3 (for q = 2,
//! Metropolis flips more: min(1, e^{−ΔE/T}) ≥ e^{−ΔE/T}/(1 + e^{−ΔE/T})).

use crate::model::PottsModel;

/// Entries of a [`HeatBathTable`]: (n, z) with n ∈ 0…4 equal neighbours and
/// z = δ(s, 0), at index 2n + z.
pub const ENTRIES: usize = 10;

/// Words of the device form of a table ([`HeatBathTable::words`]): the
/// rank of each entry, then the weights by (top rank, entry).
pub const TABLE_WORDS: usize = ENTRIES + ENTRIES * ENTRIES;

/// The entry index of a state held by `n` neighbours, `zero` if it is
/// state 0.
#[inline(always)]
pub const fn entry(n: u32, zero: bool) -> usize {
    2 * n as usize + zero as usize
}

/// The heat-bath weights of one model at one temperature, in integers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeatBathTable {
    /// `rank[e]`: the position of entry e when the entries are sorted by
    /// J·n + h·z, ties by index.
    rank: [u32; ENTRIES],
    /// `weights[R·ENTRIES + e]`: the weight of entry e when the top entry
    /// present has rank R (⌊e^{ΔE/T}·M⌋, M for the top itself; 0 for
    /// entries ranked above R, which are then absent).
    weights: [u64; ENTRIES * ENTRIES],
}

impl HeatBathTable {
    /// The table of `model` at temperature `t` (> 0).
    pub fn new(model: &PottsModel, t: f64) -> Self {
        let q = u64::from(model.q());
        let m = u64::MAX / q;
        // J·n + h·z: the sign of its differences orders the weights at any T > 0.
        let energy = |e: usize| model.coupling() * (e / 2) as f64 + model.field() * (e % 2) as f64;
        let mut order: Vec<usize> = (0..ENTRIES).collect();
        order.sort_by(|&a, &b| energy(a).total_cmp(&energy(b)).then(a.cmp(&b)));
        let mut rank = [0u32; ENTRIES];
        for (r, &e) in order.iter().enumerate() {
            rank[e] = r as u32;
        }
        let mut weights = [0u64; ENTRIES * ENTRIES];
        for (top_rank, &top) in order.iter().enumerate() {
            for (e, w) in weights[top_rank * ENTRIES..(top_rank + 1) * ENTRIES].iter_mut().enumerate() {
                *w = if e == top {
                    m
                } else if rank[e] < top_rank as u32 {
                    // A difference of finite energies: finite, ≤ 0; the quotient may
                    // reach −∞ at tiny T, whose exponential is 0.
                    let p = ((energy(e) - energy(top)) / t).exp();
                    ((p * m as f64) as u64).min(m)
                } else {
                    0
                };
            }
        }
        HeatBathTable { rank, weights }
    }

    /// The rank of entry `e` (its place when entries are sorted by weight).
    #[inline(always)]
    pub fn rank(&self, e: usize) -> u32 {
        self.rank[e]
    }

    /// The weight of entry `e` when the top entry present has rank `top`.
    #[inline(always)]
    pub fn weight(&self, top: u32, e: usize) -> u64 {
        self.weights[top as usize * ENTRIES + e]
    }

    /// The table as the CUDA kernels read it: [`TABLE_WORDS`] words, the
    /// ranks then the weights.
    pub fn words(&self) -> [u64; TABLE_WORDS] {
        std::array::from_fn(|i| if i < ENTRIES { u64::from(self.rank[i]) } else { self.weights[i - ENTRIES] })
    }
}

/// The heat-bath update of one site: its new state, from its four
/// neighbours `nbrs` (left, right, up, down) and its random word `r`.
///
/// Written to compute every slot's weight and pick the slot by counting
/// the cumulative weights at or below x: the choice among the neighbour
/// slots and state 0 takes no branch a predictor would have to guess (a
/// slot that is absent, a repeated neighbour or state 0 held by one, weighs
/// nothing and so is never picked).
#[inline(always)]
pub fn heat_bath_site(nbrs: [u8; 4], r: u32, q: u32, table: &HeatBathTable) -> u8 {
    let [a, b, c, d] = nbrs;
    let (ab, ac, ad, bc, bd, cd) = (a == b, a == c, a == d, b == c, b == d, c == d);
    // How many neighbours hold each neighbour's state, and first appearances.
    let held = [
        1 + ab as u32 + ac as u32 + ad as u32,
        1 + ab as u32 + bc as u32 + bd as u32,
        1 + ac as u32 + bc as u32 + cd as u32,
        1 + ad as u32 + bd as u32 + cd as u32,
    ];
    let first = [true, !ab, !ac && !bc, !ad && !bd && !cd];
    let entries: [usize; 4] = std::array::from_fn(|i| entry(held[i], nbrs[i] == 0));
    let zero_free = a != 0 && b != 0 && c != 0 && d != 0;
    let distinct = 1 + first[1] as u32 + first[2] as u32 + first[3] as u32;
    let plain = q - distinct - zero_free as u32;
    // The top entry present (rank 0 is no higher than any entry's).
    let mut top = table.rank(entries[0]);
    for i in 1..4 {
        top = top.max(table.rank(entries[i]) * first[i] as u32);
    }
    top = top.max(table.rank(entry(0, true)) * zero_free as u32);
    top = top.max(table.rank(entry(0, false)) * (plain > 0) as u32);
    let w = |e: usize| table.weight(top, e);
    // Cumulative weights of the neighbour slots and state 0's.
    let mut cum = [0u64; 5];
    let mut acc = 0u64;
    for i in 0..4 {
        acc += w(entries[i]) * first[i] as u64;
        cum[i] = acc;
    }
    acc += w(entry(0, true)) * zero_free as u64;
    cum[4] = acc;
    let z = acc + u64::from(plain) * w(entry(0, false));
    let x = ((u128::from(r) * u128::from(z)) >> 32) as u64;
    let k = cum.iter().map(|&c| (c <= x) as usize).sum::<usize>();
    match k {
        0..4 => nbrs[k],
        4 => 0,
        _ => nth_free_state(((x - acc) / w(entry(0, false)).max(1)) as u32, nbrs, first),
    }
}

/// The `m`-th smallest state (from 0) that is neither 0 nor one of the
/// neighbours: the least fixed point of s = m + #{taken states ≤ s}, reached
/// from s = m in at most five steps (five taken states at most).
#[inline(always)]
fn nth_free_state(m: u32, nbrs: [u8; 4], first: [bool; 4]) -> u8 {
    let mut s = m;
    for _ in 0..5 {
        let mut taken = 1; // state 0
        for i in 0..4 {
            taken += (first[i] && nbrs[i] != 0 && u32::from(nbrs[i]) <= s) as u32;
        }
        s = m + taken;
    }
    s as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The exact probability of each state under the rule: each state takes
    /// one interval of words r (the slots are walked in a fixed order and x
    /// grows with r), found by bisection on the rule itself.
    fn rule_probabilities(nbrs: [u8; 4], q: u32, table: &HeatBathTable) -> Vec<f64> {
        let f = |r: u64| heat_bath_site(nbrs, r as u32, q, table);
        let mut counts = vec![0u64; q as usize];
        // Intervals [lo, hi] whose ends agree are one state throughout.
        let mut todo = vec![(0u64, u64::from(u32::MAX))];
        while let Some((lo, hi)) = todo.pop() {
            let (a, b) = (f(lo), f(hi));
            if a == b {
                counts[a as usize] += hi - lo + 1;
            } else if hi == lo + 1 {
                counts[a as usize] += 1;
                counts[b as usize] += 1;
            } else {
                let mid = lo + (hi - lo) / 2;
                todo.push((lo, mid));
                todo.push((mid + 1, hi));
            }
        }
        assert_eq!(counts.iter().sum::<u64>(), 1 << 32);
        counts.iter().map(|&c| c as f64 / 4_294_967_296.0).collect()
    }

    fn gibbs(nbrs: [u8; 4], q: u32, j: f64, h: f64, t: f64) -> Vec<f64> {
        let lw: Vec<f64> = (0..q as u8)
            .map(|s| (j * nbrs.iter().filter(|&&n| n == s).count() as f64 + h * f64::from(u8::from(s == 0))) / t)
            .collect();
        let max = lw.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let w: Vec<f64> = lw.iter().map(|l| (l - max).exp()).collect();
        let z: f64 = w.iter().sum();
        w.iter().map(|x| x / z).collect()
    }

    /// One word in 2³² (the rule's resolution), and the weights' rounding.
    const ONE_WORD: f64 = 1.0 / 4_294_967_296.0 + 1e-14;

    #[test]
    fn every_state_gets_its_gibbs_probability() {
        // All neighbour configurations of q ≤ 5, ferro- and antiferromagnetic,
        // with and without a field, from far below to far above T_c; and q = 255.
        let mut worst: f64 = 0.0;
        for q in [2u32, 3, 4, 5] {
            for (j, h) in [(1.0, 0.0), (1.0, 0.7), (-0.8, 0.0), (1.3, -2.0), (0.0, 0.0)] {
                for t in [0.05, 0.4, 1.0, 2.5, 50.0] {
                    let model = PottsModel::new(q, 4, 4).unwrap().with_coupling(j).unwrap().with_field(h).unwrap();
                    let table = HeatBathTable::new(&model, t);
                    for c in 0..q.pow(4) {
                        let nbrs: [u8; 4] = std::array::from_fn(|i| ((c / q.pow(i as u32)) % q) as u8);
                        let got = rule_probabilities(nbrs, q, &table);
                        for (s, (g, p)) in got.iter().zip(gibbs(nbrs, q, j, h, t)).enumerate() {
                            worst = worst.max((g - p).abs());
                            assert!((g - p).abs() < ONE_WORD, "q={q} J={j} h={h} T={t} {nbrs:?} state {s}: {g} vs {p}");
                        }
                    }
                }
            }
        }
        let model = PottsModel::new(255, 4, 4).unwrap().with_field(0.3).unwrap();
        for t in [0.1, 0.5, 5.0] {
            let table = HeatBathTable::new(&model, t);
            for nbrs in [[0, 0, 0, 0], [254, 3, 254, 0], [7, 200, 9, 100], [1, 1, 2, 2], [254, 253, 252, 251]] {
                let got = rule_probabilities(nbrs, 255, &table);
                for (g, p) in got.iter().zip(gibbs(nbrs, 255, 1.0, 0.3, t)) {
                    worst = worst.max((g - p).abs());
                    assert!((g - p).abs() < ONE_WORD, "q=255 T={t} {nbrs:?}: {g} vs {p}");
                }
            }
        }
        eprintln!("largest difference from Gibbs: {worst:e}");
    }

    /// The slot rule written plainly: slots in order, each present one
    /// adding its weight, the first whose cumulative weight exceeds x.
    fn plain_walk(nbrs: [u8; 4], r: u32, q: u32, table: &HeatBathTable) -> u8 {
        let mut slots: Vec<(u8, usize)> = Vec::new(); // (state, entry)
        for (i, &s) in nbrs.iter().enumerate() {
            if !nbrs[..i].contains(&s) {
                slots.push((s, entry(nbrs.iter().filter(|&&n| n == s).count() as u32, s == 0)));
            }
        }
        if !nbrs.contains(&0) {
            slots.push((0, entry(0, true)));
        }
        for s in 1..q as u8 {
            if !nbrs.contains(&s) {
                slots.push((s, entry(0, false)));
            }
        }
        let top = slots.iter().map(|&(_, e)| table.rank(e)).max().unwrap();
        let z: u64 = slots.iter().map(|&(_, e)| table.weight(top, e)).sum();
        let x = ((u128::from(r) * u128::from(z)) >> 32) as u64;
        let mut acc = 0;
        for &(s, e) in &slots {
            acc += table.weight(top, e);
            if x < acc {
                return s;
            }
        }
        unreachable!("x < z")
    }

    #[test]
    fn the_branch_free_rule_is_the_plain_walk() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for q in [2u32, 3, 4, 5, 9, 17, 255] {
            for (j, h, t) in [(1.0, 0.0, 1.0), (1.0, 0.4, 0.3), (-1.0, 0.0, 0.7), (0.5, -1.0, 3.0), (1.0, 0.0, 0.02)] {
                let model = PottsModel::new(q, 4, 4).unwrap().with_coupling(j).unwrap().with_field(h).unwrap();
                let table = HeatBathTable::new(&model, t);
                for _ in 0..20_000 {
                    let v = next();
                    // Neighbours often equal and often 0, as on a lattice.
                    let nbrs: [u8; 4] = std::array::from_fn(|i| {
                        ((v >> (8 * i)) as u32 % q.min(if v >> 60 == 0 { q } else { 3 })) as u8
                    });
                    let r = (v >> 32) as u32;
                    assert_eq!(
                        heat_bath_site(nbrs, r, q, &table),
                        plain_walk(nbrs, r, q, &table),
                        "q={q} {nbrs:?} r={r}"
                    );
                }
            }
        }
    }

    #[test]
    fn free_states_are_counted_past_the_taken_ones() {
        let first = |n: [u8; 4]| [true, n[1] != n[0], n[2] != n[0] && n[2] != n[1], !n[..3].contains(&n[3])];
        for n in [[3u8, 5, 3, 1], [1, 2, 3, 4], [0, 0, 0, 0], [9, 9, 9, 9], [2, 0, 2, 0]] {
            let free: Vec<u8> = (0..20u8).filter(|s| *s != 0 && !n.contains(s)).collect();
            for (m, &s) in free.iter().enumerate() {
                assert_eq!(nth_free_state(m as u32, n, first(n)), s, "{n:?} m={m}");
            }
        }
    }

    #[test]
    fn the_top_entry_weighs_m_and_no_total_overflows() {
        for q in [2u32, 3, 255] {
            let model = PottsModel::new(q, 2, 2).unwrap().with_coupling(-1e3).unwrap().with_field(1e3).unwrap();
            let table = HeatBathTable::new(&model, 1e-3);
            for e in 0..ENTRIES {
                let r = table.rank(e);
                assert_eq!(table.weight(r, e), u64::MAX / u64::from(q));
                for other in 0..ENTRIES {
                    assert!(table.weight(r, other) <= u64::MAX / u64::from(q));
                }
            }
            // Every configuration has a state and stays in range.
            for r in [0u32, 1, u32::MAX / 2, u32::MAX] {
                for nbrs in [[0, 0, 0, 0], [1, 1, 0, 1], [1, 0, 1, 0]] {
                    assert!(u32::from(heat_bath_site(nbrs, r, q, &table)) < q);
                }
            }
        }
    }
}
