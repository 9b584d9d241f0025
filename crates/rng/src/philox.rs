//! Philox4x32-10, the counter-based generator of Salmon, Moraes, Dror and
//! Shaw, "Parallel random numbers: as easy as 1, 2, 3" (SC'11), with the round
//! constants and key schedule of the Random123 library.
//!
//! Philox is a keyed bijection on 128-bit counters: the same (counter, key)
//! always gives the same four words, so any thread can compute any part of a
//! stream without sequential state. [`crate::PhiloxStream`] builds streams on
//! top of it.

/// Multiplier applied to counter word 0 in each round.
pub const PHILOX_M0: u32 = 0xD251_1F53;
/// Multiplier applied to counter word 2 in each round.
pub const PHILOX_M1: u32 = 0xCD9E_8D57;
/// Weyl increment of key word 0 between rounds (golden ratio).
pub const PHILOX_W0: u32 = 0x9E37_79B9;
/// Weyl increment of key word 1 between rounds (sqrt(3) - 1).
pub const PHILOX_W1: u32 = 0xBB67_AE85;
/// Number of rounds of the variant used everywhere in warpmc.
pub const PHILOX_ROUNDS: u32 = 10;

/// The 128-bit counter of one Philox block, least significant word first.
pub type Counter = [u32; 4];
/// The 64-bit key, least significant word first.
pub type Key = [u32; 2];

#[inline(always)]
fn mul_hi_lo(a: u32, b: u32) -> (u32, u32) {
    let p = u64::from(a) * u64::from(b);
    ((p >> 32) as u32, p as u32)
}

#[inline(always)]
fn round(ctr: Counter, key: Key) -> Counter {
    let (hi0, lo0) = mul_hi_lo(PHILOX_M0, ctr[0]);
    let (hi1, lo1) = mul_hi_lo(PHILOX_M1, ctr[2]);
    [hi1 ^ ctr[1] ^ key[0], lo1, hi0 ^ ctr[3] ^ key[1], lo0]
}

/// Philox4x32 with an arbitrary number of rounds (Random123's `philox4x32_R`).
///
/// Only 10 rounds are used by warpmc; other counts exist for the known-answer
/// tests and for experiments.
#[inline]
pub fn philox4x32_rounds(rounds: u32, mut ctr: Counter, mut key: Key) -> Counter {
    for r in 0..rounds {
        if r > 0 {
            key[0] = key[0].wrapping_add(PHILOX_W0);
            key[1] = key[1].wrapping_add(PHILOX_W1);
        }
        ctr = round(ctr, key);
    }
    ctr
}

/// Philox4x32-10: four pseudo-random words for one (counter, key) pair.
///
/// # Examples
///
/// Random123's first known-answer vector:
///
/// ```
/// use warpmc_rng::philox::philox4x32_10;
/// assert_eq!(
///     philox4x32_10([0; 4], [0; 2]),
///     [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]
/// );
/// ```
#[inline]
pub fn philox4x32_10(ctr: Counter, key: Key) -> Counter {
    let mut ctr = ctr;
    let mut key = key;
    // Unrolled by hand so the optimiser sees ten straight-line rounds.
    ctr = round(ctr, key);
    for _ in 1..PHILOX_ROUNDS {
        key[0] = key[0].wrapping_add(PHILOX_W0);
        key[1] = key[1].wrapping_add(PHILOX_W1);
        ctr = round(ctr, key);
    }
    ctr
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Known-answer vectors from Random123's `tests/kat_vectors`
    /// (columns: counter[4], key[2], expected[4]).
    const KAT_10: [(Counter, Key, Counter); 3] = [
        (
            [0x0000_0000, 0x0000_0000, 0x0000_0000, 0x0000_0000],
            [0x0000_0000, 0x0000_0000],
            [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8],
        ),
        (
            [0xffff_ffff, 0xffff_ffff, 0xffff_ffff, 0xffff_ffff],
            [0xffff_ffff, 0xffff_ffff],
            [0x408f_276d, 0x41c8_3b0e, 0xa20b_c7c6, 0x6d54_51fd],
        ),
        (
            [0x243f_6a88, 0x85a3_08d3, 0x1319_8a2e, 0x0370_7344],
            [0xa409_3822, 0x299f_31d0],
            [0xd16c_fe09, 0x94fd_cceb, 0x5001_e420, 0x2412_6ea1],
        ),
    ];

    #[test]
    fn random123_known_answers_10_rounds() {
        for (ctr, key, want) in KAT_10 {
            assert_eq!(philox4x32_10(ctr, key), want, "ctr {ctr:08x?} key {key:08x?}");
            assert_eq!(philox4x32_rounds(10, ctr, key), want);
        }
    }

    #[test]
    fn random123_known_answers_7_rounds() {
        // The 7-round lines of the same file check the key schedule
        // independently of the round count.
        let kat7: [(Counter, Key, Counter); 3] = [
            ([0; 4], [0; 2], [0x5f6f_b709, 0x0d89_3f64, 0x4f12_1f81, 0x4f73_0a48]),
            ([0xffff_ffff; 4], [0xffff_ffff; 2], [0x5207_ddc2, 0x4516_5e59, 0x4d8e_e751, 0x8c52_f662]),
            (
                [0x243f_6a88, 0x85a3_08d3, 0x1319_8a2e, 0x0370_7344],
                [0xa409_3822, 0x299f_31d0],
                [0x4dfc_caba, 0x190a_87f0, 0xc473_62ba, 0xb6b5_242a],
            ),
        ];
        for (ctr, key, want) in kat7 {
            assert_eq!(philox4x32_rounds(7, ctr, key), want, "ctr {ctr:08x?}");
        }
    }

    #[test]
    fn distinct_counters_give_distinct_blocks() {
        let key = [7, 11];
        let a = philox4x32_10([0, 0, 0, 0], key);
        let b = philox4x32_10([1, 0, 0, 0], key);
        let c = philox4x32_10([0, 0, 1, 0], key);
        assert_ne!(a, b);
        assert_ne!(a, c);
        assert_ne!(b, c);
    }
}
