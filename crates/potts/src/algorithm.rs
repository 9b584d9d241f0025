//! The update algorithm: checkerboard Metropolis with integer acceptance
//! thresholds, and the assignment of random numbers to sites.
//!
//! Two rules assign random numbers ([`Scheme`]): the bit-sliced rule of
//! [`sliced`](crate::sliced) for q ≤ 16 without a field on lattices whose
//! width is a multiple of 64 and height a multiple of 8, and the
//! one-word-per-site rule below for every other model. A model always gets
//! the same rule, on every backend.
//!
//! # One sweep
//!
//! A sweep (one Monte Carlo step, one attempt per site) updates colour 0
//! (x + y even) and then colour 1. Sites of one colour have all their
//! neighbours in the other colour, so a colour is updated in parallel with no
//! order dependence: the result is the same on any number of threads.
//!
//! # Random numbers
//!
//! Each colour's array (`height` rows × `width/2` columns, see
//! [`layout`](crate::layout)) is cut into *units* of [`UNIT_ROWS`] rows ×
//! [`UNIT_COLS`] columns, numbered row-block by row-block:
//! k = ⌊y/8⌋·⌈(width/2)/8⌉ + ⌊x_h/8⌋ (units at the right and bottom edges
//! may be cut short). In sweep t, colour c, unit k draws one Philox block
//! (seed, stream, counter = (2t + c)·2³² + k); its words (w₀, w₁) and
//! (w₂, w₃) seed two multiply-with-carry generators with the fixed
//! multiplier [`MWC_MULTIPLIER`]. Row i of the unit uses generator i mod 2,
//! which gives one word to each site of the row, left to right. A site's
//! number is therefore a function of (seed, chain, sweep, colour, site) only,
//! whatever the thread layout, and every backend and kernel — byte per spin,
//! 4 bits per spin, CPU or GPU — computes the same states.
//!
//! Why this generator: one Philox4x32-10 block per site costs ~20 integer
//! instructions per word, more than the rest of an update; a multiply-with-
//! carry step costs one 32×32→64 multiply-add. Seeding each unit afresh from
//! Philox keeps the assignment counter-based (no generator state in memory,
//! checkpoints need only the sweep number) and spends one Philox block per
//! 64 sites. Units start at independent random points of one MWC cycle of
//! length ≈ 2⁶³ and use 32 words of it each. The multiplier is the first of
//! warpmc-rng's table, which passes dieharder (see crates/rng/README.md).
//!
//! # The update of one site
//!
//! With old spin s and the site's word r, let r·(q − 1) = i·2³² + f
//! (i < q − 1 the high half of the product, f the low half). The proposal
//! s' = (s + 1 + i) mod q is uniform among the q − 1 other states (bias below
//! q·2⁻³²), and the move is accepted iff f < θ(ΔE), where the threshold
//! θ = ⌊min(1, e^{−ΔE/T})·2³²⌋ (2³² for moves that never raise the energy,
//! so those are always accepted) is tabulated on the host once per
//! temperature for the 27 possible (Δn, Δδ₀) — no floating point in the
//! update itself. For a given i, f runs over an arithmetic progression of
//! step q − 1 (step 1 for q = 2), so the acceptance probability is within
//! q·2⁻³² of Metropolis': far below any statistical error a run can reach.

use warpmc_rng::mwc::seed_state;
use warpmc_rng::{Domain, Mwc, philox_block};

use crate::model::PottsModel;

/// Which rule assigns random numbers to sites (both are exact Metropolis
/// with the same acceptance thresholds; they differ in which random bits a
/// site uses, so the same seed gives different, equally valid chains).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheme {
    /// One 32-bit word per site (this module): any model.
    SiteWords,
    /// Bit-sliced words of 32 sites ([`sliced`](crate::sliced)): q ≤ 16, no
    /// field, width % 64 = 0, height % 8 = 0.
    Sliced,
}

impl Scheme {
    /// The rule `model` runs under: [`Scheme::Sliced`] wherever it fits.
    pub fn for_model(model: &PottsModel) -> Scheme {
        if crate::sliced::fits(model) { Scheme::Sliced } else { Scheme::SiteWords }
    }
}

/// Number of entries of an [`AcceptanceTable`]: Δn ∈ [−4, 4] times
/// Δδ₀ ∈ {−1, 0, 1}.
pub const TABLE_LEN: usize = 27;

/// The threshold meaning "always accept": every f < 2³².
pub const ALWAYS: u64 = 1 << 32;

/// Rows of a random-number unit.
pub const UNIT_ROWS: usize = 8;
/// Columns (of one colour's array) of a random-number unit.
pub const UNIT_COLS: usize = 8;

/// Multiplier of the per-unit multiply-with-carry generators: the first
/// entry of `warpmc_rng::multipliers::table()`.
pub const MWC_MULTIPLIER: u32 = 4_278_189_678;

/// Metropolis acceptance thresholds for one model and temperature, indexed
/// by (Δn + 4)·3 + (Δδ₀ + 1), where Δn is the change in the number of equal
/// neighbours and Δδ₀ the change of δ(s, 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AcceptanceTable {
    thresholds: [u64; TABLE_LEN],
}

impl AcceptanceTable {
    /// The Metropolis table at temperature `t`.
    pub fn metropolis(model: &PottsModel, t: f64) -> Self {
        let mut thresholds = [0u64; TABLE_LEN];
        for dn in -4i32..=4 {
            for d0 in -1i32..=1 {
                // ΔE = −J Δn − h Δδ₀
                let de = -model.coupling() * dn as f64 - model.field() * d0 as f64;
                thresholds[table_index(dn, d0)] = threshold(de, t);
            }
        }
        AcceptanceTable { thresholds }
    }

    /// A table that rejects every move (what a backend holds before its
    /// first table).
    pub fn reject_all() -> Self {
        AcceptanceTable { thresholds: [0; TABLE_LEN] }
    }

    /// The entries, indexed by [`table_index`]: a move is accepted iff its
    /// acceptance fraction f is below the entry.
    pub fn thresholds(&self) -> &[u64; TABLE_LEN] {
        &self.thresholds
    }

    /// The entry for (Δn, Δδ₀).
    ///
    /// # Panics
    ///
    /// When [`table_index`] falls past the table; other pairs outside Δn in
    /// −4..=4 and Δδ₀ in −1..=1 read another entry.
    pub fn get(&self, dn: i32, d0: i32) -> u64 {
        self.thresholds[table_index(dn, d0)]
    }

    /// Replaces one entry (for tests of rules that must refuse odd tables).
    #[cfg(test)]
    pub(crate) fn set(&mut self, dn: i32, d0: i32, threshold: u64) {
        self.thresholds[table_index(dn, d0)] = threshold;
    }

    /// The nine entries with Δδ₀ = 0, indexed by Δn + 4: the whole table
    /// when there is no field (what the bit-sliced rule uses).
    pub fn without_field(&self) -> [u64; 9] {
        std::array::from_fn(|i| self.thresholds[i * 3 + 1])
    }
}

/// ⌊min(1, e^{−ΔE/T})·2³²⌋, with [`ALWAYS`] = 2³² for ΔE ≤ 0.
pub fn threshold(delta_e: f64, t: f64) -> u64 {
    if delta_e <= 0.0 {
        return ALWAYS;
    }
    let p = (-delta_e / t).exp();
    // p < 1 here, so p·2³² < 2³²: the cast cannot reach ALWAYS.
    ((p * 4_294_967_296.0).floor() as u64).min(ALWAYS - 1)
}

/// Index into [`AcceptanceTable::thresholds`], for Δn in −4..=4 and Δδ₀ in
/// −1..=1 (other values give an index past the table or a wrapped one).
#[inline]
pub fn table_index(dn: i32, d0: i32) -> usize {
    ((dn + 4) * 3 + (d0 + 1)) as usize
}

/// The Philox stream of one Markov chain: independent repetition `sample`
/// at temperature number `temp_index` of a run.
///
/// Every (sample, temperature) pair has its own stream — also when a chain
/// continues from the previous temperature's state — so sweep counters
/// restart at 0 for each temperature without ever reusing a number.
pub fn chain_stream(sample: u32, temp_index: u32) -> u64 {
    debug_assert!(sample < 1 << 24 && temp_index < 1 << 24);
    Domain::Potts.stream(((sample as u64) << 24) | temp_index as u64)
}

/// Most samples and temperatures a run may have (each < 2²⁴).
pub const MAX_CHAIN_INDEX: u32 = 1 << 24;

/// `seed` mixed with `words` (each through SplitMix64's finaliser, Steele,
/// Lea & Flood 2014): a key for Philox that differs, for practical
/// purposes, whenever any word does. The protocol keys each size's and
/// each temperature's random numbers this way, so that runs that differ
/// only in them draw unrelated numbers.
pub fn mix_key(seed: u64, words: &[u64]) -> u64 {
    fn splitmix(x: u64) -> u64 {
        let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    words.iter().fold(splitmix(seed), |h, &w| splitmix(h ^ splitmix(w)))
}

/// Most sweeps in one chain: counter steps 2t + c stay below 2³² − 1, the
/// step reserved for start states.
pub const MAX_SWEEPS_PER_CHAIN: u64 = (1 << 31) - 1;

/// Philox counter of the block that seeds unit `unit` of colour `colour` in
/// sweep `sweep`.
#[inline]
pub fn block_counter(sweep: u64, colour: u32, unit: u64) -> u64 {
    ((2 * sweep + colour as u64) << 32) | unit
}

/// Units across one row-block of a colour array `half_width` columns wide.
#[inline]
pub fn units_per_row(half_width: usize) -> usize {
    half_width.div_ceil(UNIT_COLS)
}

/// The two generators of unit `unit` (for even and odd rows of the unit).
#[inline]
pub fn unit_generators(seed: u64, stream: u64, sweep: u64, colour: u32, unit: u64) -> [Mwc; 2] {
    let w = philox_block(seed, stream, block_counter(sweep, colour, unit));
    let g = |x, c| Mwc::from_state(MWC_MULTIPLIER, seed_state(MWC_MULTIPLIER, x, c)).expect("seed_state is valid");
    [g(w[0], w[1]), g(w[2], w[3])]
}

/// The proposal step and acceptance fraction of word `r`: r·(q − 1) split
/// into its high half (0 ≤ i < q − 1) and low half f (q = 0 is taken as 1,
/// which no model has).
#[inline(always)]
pub fn split_word(r: u32, q: u32) -> (u32, u32) {
    let p = r as u64 * q.saturating_sub(1) as u64;
    ((p >> 32) as u32, p as u32)
}

/// The Metropolis update of one site: returns the new spin. `r` is the
/// site's random word, `nbrs` its four neighbours.
#[inline(always)]
pub fn metropolis_site(old: u8, nbrs: [u8; 4], r: u32, q: u32, table: &AcceptanceTable) -> u8 {
    let (i, f) = split_word(r, q);
    // Branch-free: both comparisons are coin flips a predictor cannot learn.
    let sum = old as u32 + 1 + i;
    let new = (sum - q * (sum >= q) as u32) as u8;
    let n_old = nbrs.iter().map(|&n| (n == old) as i32).sum::<i32>();
    let n_new = nbrs.iter().map(|&n| (n == new) as i32).sum::<i32>();
    let d0 = (new == 0) as i32 - (old == 0) as i32;
    let accept = u64::from(f) < table.thresholds[table_index(n_new - n_old, d0)];
    old ^ ((old ^ new) & (accept as u8).wrapping_neg())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_follow_metropolis() {
        let m = PottsModel::new(3, 4, 4).unwrap().with_field(0.5).unwrap();
        let t = 0.8;
        let table = AcceptanceTable::metropolis(&m, t);
        // Gaining a neighbour lowers the energy: always.
        assert_eq!(table.thresholds[table_index(1, 0)], ALWAYS);
        // Losing two neighbours and leaving state 0: ΔE = 2 + 0.5.
        let p = (-2.5f64 / t).exp();
        let th = table.thresholds[table_index(-2, -1)] as f64 / 4_294_967_296.0;
        assert!((th - p).abs() < 1e-9, "{th} vs {p}");
        assert_eq!(table.without_field()[2], table.thresholds[table_index(-2, 0)]);
    }

    #[test]
    fn proposal_never_keeps_the_spin_and_covers_all_others() {
        let table = AcceptanceTable { thresholds: [ALWAYS; TABLE_LEN] };
        for q in [2u32, 3, 9, 255] {
            let mut seen = vec![false; q as usize];
            for i in 0..20_000u64 {
                let w0 = (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as u32;
                let new = metropolis_site(1, [0; 4], w0, q, &table);
                assert_ne!(new, 1);
                seen[new as usize] = true;
            }
            assert_eq!(seen.iter().filter(|&&s| s).count(), q as usize - 1, "q = {q}");
        }
    }
}

#[cfg(test)]
mod unit_tests {
    use super::*;

    #[test]
    fn multiplier_is_the_first_of_the_table() {
        assert_eq!(MWC_MULTIPLIER, warpmc_rng::multipliers::table()[0]);
    }

    #[test]
    fn acceptance_fraction_is_uniform_given_the_proposal() {
        // For each proposal step i, f = r·(q−1) mod 2³² must be spread over
        // [0, 2³²): count f below 2³¹ over a dense sample of r.
        for q in [3u32, 9, 16] {
            let mut below = vec![0u64; q as usize - 1];
            let mut all = vec![0u64; q as usize - 1];
            for r in (0..u32::MAX).step_by(4099) {
                let (i, f) = split_word(r, q);
                all[i as usize] += 1;
                below[i as usize] += (f < 1 << 31) as u64;
            }
            for i in 0..q as usize - 1 {
                let frac = below[i] as f64 / all[i] as f64;
                assert!((frac - 0.5).abs() < 0.01, "q={q} i={i}: {frac}");
            }
        }
    }

    #[test]
    fn threshold_saturates_at_always() {
        assert_eq!(threshold(1e-12, 1.0), ALWAYS - 1);
        assert_eq!(threshold(-1.0, 1.0), ALWAYS);
        assert_eq!(threshold(1000.0, 0.01), 0);
    }
}
