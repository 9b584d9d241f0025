//! The update algorithm: checkerboard Metropolis with integer acceptance
//! thresholds, and the assignment of random numbers to sites.
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
//! Each site of colour c is numbered within its colour, row by row:
//! j = y · (L/2) + ⌊x/2⌋. In sweep t, sites j = 2k and 2k+1 share Philox
//! block (seed, stream, counter = (2t + c)·2³² + k): site 2k uses words 0
//! (proposal) and 1 (acceptance), site 2k+1 words 2 and 3. A site's numbers
//! are therefore a function of (seed, chain, sweep, colour, site) only.
//!
//! # The update of one site
//!
//! With old spin s and proposal word w₀: s' = (s + 1 + ⌊w₀·(q−1)/2³²⌋) mod q,
//! uniform among the q − 1 other states (multiply-shift, bias below
//! q/2³²). With acceptance word w₁: accept iff w₁ < θ(ΔE), where the
//! threshold θ = ⌊min(1, e^{−ΔE/T})·2³²⌋ is tabulated on the host once per
//! temperature for the 27 possible (Δn, Δδ₀) — no floating point in the
//! update itself, and an acceptance probability within 2⁻³² of Metropolis'.

use warpmc_rng::Domain;

use crate::model::PottsModel;

/// Number of entries of an [`AcceptanceTable`]: Δn ∈ [−4, 4] times
/// Δδ₀ ∈ {−1, 0, 1}.
pub const TABLE_LEN: usize = 27;

/// `1 << 32`: the threshold meaning "always accept".
pub const ALWAYS: u64 = 1 << 32;

/// Metropolis acceptance thresholds for one model and temperature, indexed
/// by (Δn + 4)·3 + (Δδ₀ + 1), where Δn is the change in the number of equal
/// neighbours and Δδ₀ the change of δ(s, 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AcceptanceTable {
    /// Accept iff the acceptance word (as u64) is below the entry.
    pub thresholds: [u64; TABLE_LEN],
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
}

/// ⌊min(1, e^{−ΔE/T})·2³²⌋, with 2³² for "always".
pub fn threshold(delta_e: f64, t: f64) -> u64 {
    if delta_e <= 0.0 {
        return ALWAYS;
    }
    let p = (-delta_e / t).exp();
    // p < 1 here, so p·2³² < 2³² and the cast cannot saturate.
    (p * ALWAYS as f64).floor() as u64
}

/// Index into [`AcceptanceTable::thresholds`].
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

/// Most sweeps in one chain: counter steps 2t + c stay below 2³² − 1, the
/// step reserved for start states.
pub const MAX_SWEEPS_PER_CHAIN: u64 = (1 << 31) - 1;

/// Philox counter of the block that serves pair `k` of colour `colour` in
/// sweep `sweep`.
#[inline]
pub fn block_counter(sweep: u64, colour: u32, pair: u64) -> u64 {
    ((2 * sweep + colour as u64) << 32) | pair
}

/// The Metropolis update of one site: returns the new spin. `words` are the
/// site's (proposal, acceptance) words; `nbrs` its four neighbours.
#[inline(always)]
pub fn metropolis_site(old: u8, nbrs: [u8; 4], words: (u32, u32), q: u32, table: &AcceptanceTable) -> u8 {
    let step = 1 + ((words.0 as u64 * (q - 1) as u64) >> 32) as u32;
    let mut new = old as u32 + step;
    if new >= q {
        new -= q;
    }
    let new = new as u8;
    let n_old = nbrs.iter().map(|&n| (n == old) as i32).sum::<i32>();
    let n_new = nbrs.iter().map(|&n| (n == new) as i32).sum::<i32>();
    let d0 = (new == 0) as i32 - (old == 0) as i32;
    if (words.1 as u64) < table.thresholds[table_index(n_new - n_old, d0)] { new } else { old }
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
        let th = table.thresholds[table_index(-2, -1)] as f64 / ALWAYS as f64;
        assert!((th - p).abs() < 1e-9, "{th} vs {p}");
    }

    #[test]
    fn proposal_never_keeps_the_spin_and_covers_all_others() {
        let table = AcceptanceTable { thresholds: [ALWAYS; TABLE_LEN] };
        for q in [2u32, 3, 9, 255] {
            let mut seen = vec![false; q as usize];
            for i in 0..20_000u64 {
                let w0 = (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as u32;
                let new = metropolis_site(1, [0; 4], (w0, 0), q, &table);
                assert_ne!(new, 1);
                seen[new as usize] = true;
            }
            assert_eq!(seen.iter().filter(|&&s| s).count(), q as usize - 1, "q = {q}");
        }
    }
}
