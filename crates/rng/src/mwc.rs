//! Multiply-with-carry generators, as Ferrero, De Francesco, Wolovick and
//! Cannas (2012) give one to each GPU thread.
//!
//! State: a 32-bit value x and a carry c, kept in one u64 as `c << 32 | x`.
//! One step, with a fixed multiplier a:
//!
//! ```text
//! t  = a·x + c          (fits in 64 bits because c < a)
//! x' = t mod 2³²        (the output)
//! c' = ⌊t / 2³²⌋
//! ```
//!
//! With z = c·2³² + x (which is exactly the u64 state) and m = a·2³² − 1,
//! one step maps z to a·z mod m: the generator is a multiplicative
//! congruential generator modulo a prime in disguise. [`Mwc::jump`] uses that
//! to skip ahead, and the tests use it as an independent check of the steps.
//! Valid states are 0 < z < m; the two others (0 and m) are fixed points.

use crate::convert::RandomSource;
use crate::multipliers::{self, pow_mod};
use crate::stream::{Domain, philox_block};

/// One multiply-with-carry generator: state and multiplier, 12 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mwc {
    state: u64,
    a: u32,
}

/// Why a (multiplier, state) pair was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MwcError {
    /// The multiplier is below 2 (the generator would be constant).
    BadMultiplier(u32),
    /// The carry is not below the multiplier, or the state is one of the two
    /// fixed points (0 and a·2³² − 1).
    BadState {
        /// The multiplier.
        a: u32,
        /// The rejected state, `c << 32 | x`.
        state: u64,
    },
}

impl std::fmt::Display for MwcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MwcError::BadMultiplier(a) => write!(f, "MWC multiplier {a} is below 2"),
            MwcError::BadState { a, state } => write!(
                f,
                "MWC state {state:#018x} is not valid for multiplier {a}: need carry < a and a state other than 0 and a*2^32-1"
            ),
        }
    }
}

impl std::error::Error for MwcError {}

impl Mwc {
    /// A generator from its multiplier and state `c << 32 | x`.
    pub fn from_state(a: u32, state: u64) -> Result<Self, MwcError> {
        if a < 2 {
            return Err(MwcError::BadMultiplier(a));
        }
        let m = (u64::from(a) << 32) - 1;
        if state == 0 || state >= m {
            return Err(MwcError::BadState { a, state });
        }
        Ok(Mwc { state, a })
    }

    /// The generator of work unit `unit` under `seed`: multiplier
    /// `table()[unit mod TABLE_LEN]`, start state drawn from Philox block 0
    /// of stream `Domain::MwcSeeding.stream(unit)`.
    ///
    /// Units that share a multiplier (every 2¹⁷-th) still start at unrelated
    /// points of a cycle of length ≈ 2⁶³.
    ///
    /// # Panics
    ///
    /// If `unit` exceeds 2⁴⁸ − 1 (see [`Domain::stream`]).
    ///
    /// ```
    /// use warpmc_rng::{Mwc, RandomSource};
    /// let mut g = Mwc::for_unit(2026, 17);
    /// let first = g.next_u32();
    /// assert_eq!(Mwc::for_unit(2026, 17).next_u32(), first);
    /// ```
    pub fn for_unit(seed: u64, unit: u64) -> Self {
        let table = multipliers::table();
        let a = table[(unit % table.len() as u64) as usize];
        let w = philox_block(seed, Domain::MwcSeeding.stream(unit), 0);
        Mwc { state: seed_state(a, w[0], w[1]), a }
    }

    /// The multiplier.
    pub fn multiplier(&self) -> u32 {
        self.a
    }

    /// The state, `c << 32 | x`.
    pub fn state(&self) -> u64 {
        self.state
    }

    /// Advances by `n` steps in O(log n): z ← aⁿ·z mod (a·2³² − 1).
    pub fn jump(&mut self, n: u64) {
        let m = (u64::from(self.a) << 32) - 1;
        let f = pow_mod(u64::from(self.a), n, m);
        self.state = ((u128::from(self.state) * u128::from(f)) % u128::from(m)) as u64;
    }
}

/// The start state derived from two seed words: x = `w0`, carry = the top
/// half of `w1`·a (in [0, a)), moved off the two fixed points. Shared with
/// the CUDA header, which must make the same choice.
#[inline]
pub fn seed_state(a: u32, w0: u32, w1: u32) -> u64 {
    let c = (u64::from(w1) * u64::from(a)) >> 32;
    let mut x = u64::from(w0);
    if c == 0 && x == 0 {
        x = 1;
    } else if c == u64::from(a) - 1 && x == u64::from(u32::MAX) {
        x -= 1;
    }
    (c << 32) | x
}

impl RandomSource for Mwc {
    #[inline(always)]
    fn next_u32(&mut self) -> u32 {
        self.state = (self.state & 0xffff_ffff) * u64::from(self.a) + (self.state >> 32);
        self.state as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::multipliers::table;

    /// The n-th output computed directly: x_n = (aⁿ·z₀ mod m) mod 2³², in
    /// 128-bit integer arithmetic with no reference to the step code.
    fn direct_output(a: u32, z0: u64, n: u64) -> u32 {
        let m = (u128::from(a) << 32) - 1;
        let mut acc: u128 = 1;
        let mut base = u128::from(a) % m;
        let mut e = n;
        while e > 0 {
            if e & 1 == 1 {
                acc = acc * base % m;
            }
            base = base * base % m;
            e >>= 1;
        }
        ((acc * u128::from(z0) % m) & 0xffff_ffff) as u32
    }

    #[test]
    fn steps_match_direct_big_integer_computation() {
        for i in 0..32u64 {
            let unit = i * 4099;
            let mut g = Mwc::for_unit(i, unit);
            let a = g.multiplier();
            assert_eq!(a, table()[unit as usize]);
            let z0 = g.state();
            for n in 1..=300u64 {
                assert_eq!(g.next_u32(), direct_output(a, z0, n), "a {a} n {n}");
            }
        }
    }

    #[test]
    fn jump_matches_stepping() {
        let mut g = Mwc::for_unit(5, 3);
        let mut h = g;
        for _ in 0..10_000 {
            g.next_u32();
        }
        h.jump(10_000);
        assert_eq!(g, h);
        // A far jump agrees with the direct formula.
        let z0 = h.state();
        h.jump(1 << 40);
        assert_eq!(h.state() as u32, direct_output(h.multiplier(), z0, 1 << 40));
    }

    #[test]
    fn carry_stays_below_multiplier() {
        let mut g = Mwc::from_state(2, 1).unwrap();
        for _ in 0..1000 {
            g.next_u32();
            assert!((g.state() >> 32) < 2);
        }
        let mut g = Mwc::for_unit(1, 1);
        for _ in 0..100_000 {
            g.next_u32();
            assert!((g.state() >> 32) < u64::from(g.multiplier()));
        }
    }

    #[test]
    fn fixed_points_are_refused_and_never_seeded() {
        let a = table()[0];
        let m = (u64::from(a) << 32) - 1;
        assert!(Mwc::from_state(a, 0).is_err());
        assert!(Mwc::from_state(a, m).is_err());
        assert!(Mwc::from_state(1, 5).is_err());
        assert!(Mwc::from_state(a, m - 1).is_ok());
        assert_eq!(seed_state(a, 0, 0), 1);
        assert_eq!(seed_state(a, u32::MAX, u32::MAX), m - 1);
    }

    #[test]
    fn units_get_consecutive_table_multipliers() {
        let t = table();
        assert_eq!(Mwc::for_unit(0, 0).multiplier(), t[0]);
        assert_eq!(Mwc::for_unit(0, 1).multiplier(), t[1]);
        assert_eq!(Mwc::for_unit(0, t.len() as u64).multiplier(), t[0]);
        assert_ne!(Mwc::for_unit(0, 0).state(), Mwc::for_unit(1, 0).state());
    }
}
