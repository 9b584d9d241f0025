//! Multipliers for multiply-with-carry generators, and the search that finds
//! them.
//!
//! A multiplier `a` (with base b = 2³²) is *good* when m = a·2³² − 1 and
//! (m − 1)/2 = a·2³¹ − 1 are both prime. Then the MWC sequence is, up to a
//! change of variables, the multiplicative generator z ↦ a·z mod m, and since
//! b = 2³² = (2¹⁶)² is a quadratic residue mod the prime m, its order is the
//! prime (m − 1)/2: the period of every non-degenerate start state is
//! a·2³¹ − 1 ≈ 2⁶³. Distinct good multipliers give distinct generators, which
//! is how Ferrero et al. (2012) give each of their 131 072 GPU threads an
//! independent stream.
//!
//! The table shipped in `data/mwc-multipliers.u32le` holds the first
//! [`TABLE_LEN`] good multipliers counting down from [`SEARCH_START`]
//! (little-endian u32).
//!
//! # Why the search does not start at 2³²
//!
//! Multipliers just below 2³² are good by the definition but bad
//! generators. With d = 2³² − a and m = a·2³² − 1 we have a² ≡ 1 − d·a
//! (mod m), so three consecutive states z₀, z₁ = a·z₀, z₂ = a²·z₀ satisfy
//! z₂ + d·z₁ − z₀ ≡ 0 (mod m): all triples lie on about d planes. For the very first good multiplier,
//! a = 4294967118 (d = 178), dieharder's OPERM5 and OQSO tests fail
//! outright (p = 0.00000000). Lag-1 MWC with base 2³² has a weak
//! three-dimensional lattice whatever the multiplier (a dual-lattice vector
//! of length about 2¹⁶ against the ideal m^(1/3) ≈ 2²¹; normalised spectral
//! figure of merit S₃ ≈ 0.005–0.03, see `tools/mwc_spectral.py`), but for
//! small d it collapses (S₃ ≈ 0.002 at d ≈ 2¹², 0.0001 at d = 178). Starting at 2³² − 2²⁴ keeps every
//! shipped multiplier on the plateau. Philox has no such structure and is
//! the generator to prefer; MWC is here for the method of Ferrero et al.
//! (2012). `warpmc rng multipliers` regenerates the table with
//! [`search`]; the tests check it against the search and check primality of a
//! sample with an independent implementation.

use std::sync::OnceLock;

use rayon::prelude::*;

/// Where the search for the shipped table starts (inclusive), counting down:
/// 2³² − 2²⁴, clear of the multipliers whose 3-D lattice collapses (module
/// documentation).
pub const SEARCH_START: u32 = 0xFF00_0000;
/// Number of multipliers in the shipped table (2¹⁷).
pub const TABLE_LEN: usize = 1 << 17;

static TABLE_BYTES: &[u8] = include_bytes!("../data/mwc-multipliers.u32le");

/// The shipped multiplier table: the first [`TABLE_LEN`] good multipliers
/// below or at [`SEARCH_START`], in decreasing order.
///
/// ```
/// let table = warpmc_rng::multipliers::table();
/// assert_eq!(table.len(), warpmc_rng::multipliers::TABLE_LEN);
/// assert!(warpmc_rng::multipliers::is_good_multiplier(table[0]));
/// ```
pub fn table() -> &'static [u32] {
    static TABLE: OnceLock<Vec<u32>> = OnceLock::new();
    TABLE.get_or_init(|| TABLE_BYTES.chunks_exact(4).map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]])).collect())
}

#[inline(always)]
fn mul_mod(a: u64, b: u64, m: u64) -> u64 {
    ((u128::from(a) * u128::from(b)) % u128::from(m)) as u64
}

/// `base`^`exp` mod `m` for m ≥ 1.
///
/// # Panics
///
/// When `m` is 0 (a remainder by zero).
pub fn pow_mod(mut base: u64, mut exp: u64, m: u64) -> u64 {
    let mut acc = 1 % m;
    base %= m;
    while exp > 0 {
        if exp & 1 == 1 {
            acc = mul_mod(acc, base, m);
        }
        base = mul_mod(base, base, m);
        exp >>= 1;
    }
    acc
}

/// Small primes for trial division before Miller–Rabin; the first twelve are
/// also the Miller–Rabin bases.
const SMALL_PRIMES: [u64; 54] = [
    2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97, 101, 103, 107, 109,
    113, 127, 131, 137, 139, 149, 151, 157, 163, 167, 173, 179, 181, 191, 193, 197, 199, 211, 223, 227, 229, 233, 239,
    241, 251,
];

/// Deterministic primality test for every 64-bit integer.
///
/// Trial division by the primes below 256, then strong-probable-prime tests
/// to the bases 2, 3, 5, …, 37: no composite below 3.3·10²⁴ passes all twelve
/// (Sorenson and Webster, 2015), so the answer is exact for u64.
///
/// ```
/// use warpmc_rng::multipliers::is_prime_u64;
/// assert!(is_prime_u64(18_446_744_073_709_551_557)); // largest 64-bit prime
/// assert!(!is_prime_u64(3_825_123_056_546_413_051)); // strong pseudoprime to bases 2..=23
/// ```
pub fn is_prime_u64(n: u64) -> bool {
    if n < 2 {
        return false;
    }
    for &p in &SMALL_PRIMES {
        if n == p {
            return true;
        }
        if n.is_multiple_of(p) {
            return false;
        }
    }
    if n < 256 * 256 {
        return true;
    }
    let d = (n - 1) >> (n - 1).trailing_zeros();
    let s = (n - 1).trailing_zeros();
    'bases: for &a in &SMALL_PRIMES[..12] {
        let mut x = pow_mod(a, d, n);
        if x == 1 || x == n - 1 {
            continue;
        }
        for _ in 1..s {
            x = mul_mod(x, x, n);
            if x == n - 1 {
                continue 'bases;
            }
        }
        return false;
    }
    true
}

/// Whether `a` is a good MWC multiplier: a·2³² − 1 and a·2³¹ − 1 are both
/// prime.
pub fn is_good_multiplier(a: u32) -> bool {
    if a < 2 {
        return false;
    }
    let a = u64::from(a);
    // Test the smaller number first: it is as likely to fail and cheaper.
    is_prime_u64((a << 31) - 1) && is_prime_u64((a << 32) - 1)
}

/// The period of an MWC generator with a good multiplier `a`: a·2³¹ − 1
/// (0 for a = 0, which is not one).
pub fn period(a: u32) -> u64 {
    (u64::from(a) << 31).saturating_sub(1)
}

/// The first `count` good multipliers at or below `start`, in decreasing
/// order (fewer if the search reaches 2 first). Runs on the rayon pool;
/// `progress` is called with the number found so far after each chunk.
pub fn search(start: u32, count: usize, mut progress: impl FnMut(usize)) -> Vec<u32> {
    const CHUNK: u32 = 1 << 16;
    // Reserved for at most the table's length: `count` may exceed what exists.
    let mut found = Vec::with_capacity(count.min(1 << 20));
    let mut top = u64::from(start);
    let batch = rayon::current_num_threads().max(1) as u64 * 4;
    while found.len() < count && top >= 2 {
        // A batch of chunks searched in parallel; results kept in order.
        let chunks: Vec<(u64, u64)> = (0..batch)
            .map(|i| {
                let hi = top.saturating_sub(i * u64::from(CHUNK));
                let lo = hi.saturating_sub(u64::from(CHUNK) - 1).max(2);
                (hi, lo)
            })
            .take_while(|&(hi, lo)| hi >= lo && hi >= 2)
            .collect();
        let results: Vec<Vec<u32>> = chunks
            .par_iter()
            .map(|&(hi, lo)| (lo..=hi).rev().map(|a| a as u32).filter(|&a| is_good_multiplier(a)).collect())
            .collect();
        for r in results {
            for a in r {
                if found.len() < count {
                    found.push(a);
                }
            }
        }
        let last_lo = chunks.last().map_or(2, |c| c.1);
        if last_lo <= 2 {
            break;
        }
        top = last_lo - 1;
        progress(found.len());
    }
    progress(found.len());
    found
}

/// Serialises multipliers as the table file's format (little-endian u32).
pub fn to_le_bytes(multipliers: &[u32]) -> Vec<u8> {
    multipliers.iter().flat_map(|a| a.to_le_bytes()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sieve(n: usize) -> Vec<bool> {
        let mut p = vec![true; n];
        p[0] = false;
        p[1] = false;
        let mut i = 2;
        while i * i < n {
            if p[i] {
                (i * i..n).step_by(i).for_each(|j| p[j] = false);
            }
            i += 1;
        }
        p
    }

    #[test]
    fn primality_matches_a_sieve() {
        let s = sieve(300_000);
        for (n, &is_p) in s.iter().enumerate() {
            assert_eq!(is_prime_u64(n as u64), is_p, "{n}");
        }
    }

    #[test]
    fn primality_rejects_strong_pseudoprimes() {
        // Strong pseudoprimes to several small bases, and Carmichael numbers.
        for n in [
            2047u64,
            1_373_653,
            25_326_001,
            3_215_031_751,
            2_152_302_898_747,
            3_474_749_660_383,
            341_550_071_728_321,
            3_825_123_056_546_413_051,
            561,
            41_041,
            825_265,
        ] {
            assert!(!is_prime_u64(n), "{n}");
        }
        // Products of two large primes.
        let p = 4_294_967_291u64; // largest prime below 2^32
        let q = 4_294_967_279u64;
        assert!(is_prime_u64(p) && is_prime_u64(q));
        assert!(!is_prime_u64(p * q));
        assert!(is_prime_u64(18_446_744_073_709_551_557));
        assert!(!is_prime_u64(u64::MAX));
    }

    #[test]
    fn primality_agrees_with_an_independent_implementation() {
        // primal-check's Miller-Rabin is a separate code base.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let n = x | 1;
            assert_eq!(is_prime_u64(n), primal_check::miller_rabin(n), "{n}");
        }
    }

    #[test]
    fn pow_mod_small_cases() {
        assert_eq!(pow_mod(2, 10, 1000), 24);
        assert_eq!(pow_mod(3, 0, 7), 1);
        assert_eq!(pow_mod(5, 3, 1), 0);
        assert_eq!(pow_mod(u64::MAX, 2, u64::MAX - 1), 1);
    }
}
