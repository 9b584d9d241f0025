//! Turning raw 32-bit words into the numbers simulations need.
//!
//! Every conversion is defined on the words of a [`RandomSource`] and is
//! mirrored exactly by `kernels/warpmc_rng.cuh`, so CPU and GPU agree bit for
//! bit. The exact ranges:
//!
//! | function | words used | values |
//! | --- | --- | --- |
//! | [`u32_to_f32`] | 1 | k·2⁻²⁴ for k in 0..2²⁴: [0, 1 − 2⁻²⁴] |
//! | [`u32_to_f32_open`] | 1 | (2k+1)·2⁻²⁴ for k in 0..2²³: [2⁻²⁴, 1 − 2⁻²⁴] |
//! | [`u64_to_f64`] | 2 | k·2⁻⁵³ for k in 0..2⁵³: [0, 1 − 2⁻⁵³] |
//! | [`u64_to_f64_open`] | 2 | (2k+1)·2⁻⁵³ for k in 0..2⁵²: [2⁻⁵³, 1 − 2⁻⁵³] |
//! | [`RandomSource::below`] | 1, more on rejection | exactly uniform on [0, n) |
//!
//! The half-open forms never return 1.0; the open forms never return 0.0 or
//! 1.0 and are the ones to feed to `ln` (Box–Muller, exponential waiting
//! times). All values are equally spaced, so every representable output is
//! equally likely.

/// 2⁻²⁴ as f32.
const F32_UNIT: f32 = 1.0 / (1u32 << 24) as f32;
/// 2⁻⁵³ as f64.
const F64_UNIT: f64 = 1.0 / (1u64 << 53) as f64;

/// Uniform f32 in [0, 1 − 2⁻²⁴] from the top 24 bits of `x`.
///
/// ```
/// use warpmc_rng::convert::u32_to_f32;
/// assert_eq!(u32_to_f32(0), 0.0);
/// assert_eq!(u32_to_f32(u32::MAX), 1.0 - 2f32.powi(-24));
/// ```
#[inline(always)]
pub fn u32_to_f32(x: u32) -> f32 {
    (x >> 8) as f32 * F32_UNIT
}

/// Uniform f32 in [2⁻²⁴, 1 − 2⁻²⁴], never 0 or 1: odd multiples of 2⁻²⁴
/// from the top 23 bits of `x`.
#[inline(always)]
pub fn u32_to_f32_open(x: u32) -> f32 {
    ((x >> 9) * 2 + 1) as f32 * F32_UNIT
}

/// Uniform f64 in [0, 1 − 2⁻⁵³] from the top 53 bits of `x`.
///
/// ```
/// use warpmc_rng::convert::u64_to_f64;
/// assert_eq!(u64_to_f64(0), 0.0);
/// assert_eq!(u64_to_f64(u64::MAX), 1.0 - 2f64.powi(-53));
/// ```
#[inline(always)]
pub fn u64_to_f64(x: u64) -> f64 {
    (x >> 11) as f64 * F64_UNIT
}

/// Uniform f64 in [2⁻⁵³, 1 − 2⁻⁵³], never 0 or 1: odd multiples of 2⁻⁵³
/// from the top 52 bits of `x`.
#[inline(always)]
pub fn u64_to_f64_open(x: u64) -> f64 {
    ((x >> 12) * 2 + 1) as f64 * F64_UNIT
}

/// A source of uniformly distributed 32-bit words, with the conversions every
/// warpmc generator shares.
///
/// The default methods fix the order in which words are consumed (for
/// [`next_u64`](Self::next_u64): the first word is the low half), which is
/// part of the CPU/GPU contract.
pub trait RandomSource {
    /// The next raw 32-bit word.
    fn next_u32(&mut self) -> u32;

    /// A 64-bit word made of two draws, the first one in the low half.
    #[inline(always)]
    fn next_u64(&mut self) -> u64 {
        let lo = u64::from(self.next_u32());
        let hi = u64::from(self.next_u32());
        lo | (hi << 32)
    }

    /// Uniform f32 in [0, 1 − 2⁻²⁴] (one word).
    #[inline(always)]
    fn next_f32(&mut self) -> f32 {
        u32_to_f32(self.next_u32())
    }

    /// Uniform f32 in [2⁻²⁴, 1 − 2⁻²⁴] (one word).
    #[inline(always)]
    fn next_f32_open(&mut self) -> f32 {
        u32_to_f32_open(self.next_u32())
    }

    /// Uniform f64 in [0, 1 − 2⁻⁵³] (two words).
    #[inline(always)]
    fn next_f64(&mut self) -> f64 {
        u64_to_f64(self.next_u64())
    }

    /// Uniform f64 in [2⁻⁵³, 1 − 2⁻⁵³] (two words).
    #[inline(always)]
    fn next_f64_open(&mut self) -> f64 {
        u64_to_f64_open(self.next_u64())
    }

    /// An exactly uniform integer in [0, n) for n ≥ 1, by Lemire's
    /// multiply-and-reject method ("Fast random integer generation in an
    /// interval", 2019): one word almost always, another only when the low
    /// half of the product falls in the biased zone of size 2³² mod n.
    ///
    /// `n = 0` is treated as 2³² (every word is accepted).
    ///
    /// ```
    /// use warpmc_rng::{PhiloxStream, RandomSource};
    /// let mut s = PhiloxStream::new(42, 0);
    /// let roll = s.below(6);
    /// assert!(roll < 6);
    /// ```
    #[inline]
    fn below(&mut self, n: u32) -> u32 {
        if n == 0 {
            return self.next_u32();
        }
        let mut m = u64::from(self.next_u32()) * u64::from(n);
        if (m as u32) < n {
            // Words whose product's low half is below 2^32 mod n are the
            // surplus ones; reject them.
            let threshold = n.wrapping_neg() % n;
            while (m as u32) < threshold {
                m = u64::from(self.next_u32()) * u64::from(n);
            }
        }
        (m >> 32) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Words(Vec<u32>, usize);
    impl RandomSource for Words {
        /// The listed words, then an arbitrary fixed sequence.
        fn next_u32(&mut self) -> u32 {
            let w = match self.0.get(self.1) {
                Some(&w) => w,
                None => (self.1 as u32).wrapping_mul(0x9E37_79B9),
            };
            self.1 += 1;
            w
        }
    }

    #[test]
    fn float_ranges_are_exact() {
        assert_eq!(u32_to_f32(0), 0.0);
        assert_eq!(u32_to_f32(0xff), 0.0);
        assert_eq!(u32_to_f32(0x100), 2f32.powi(-24));
        assert_eq!(u32_to_f32(u32::MAX), 1.0 - 2f32.powi(-24));
        assert!(u32_to_f32(u32::MAX) < 1.0);
        assert_eq!(u32_to_f32_open(0), 2f32.powi(-24));
        assert_eq!(u32_to_f32_open(u32::MAX), 1.0 - 2f32.powi(-24));
        assert_eq!(u64_to_f64(0), 0.0);
        assert_eq!(u64_to_f64(u64::MAX), 1.0 - 2f64.powi(-53));
        assert!(u64_to_f64(u64::MAX) < 1.0);
        assert_eq!(u64_to_f64_open(0), 2f64.powi(-53));
        assert_eq!(u64_to_f64_open(u64::MAX), 1.0 - 2f64.powi(-53));
    }

    /// The acceptance rule, counted exactly: for each output value v the
    /// words with floor(w·n / 2³²) = v form an interval whose low product
    /// halves step by n from a start in [0, n); the rule rejects those below
    /// 2³² mod n (< n), so at most the first. Every v must keep exactly
    /// floor(2³² / n) words.
    #[test]
    fn below_acceptance_rule_is_exactly_uniform() {
        let two32 = 1u64 << 32;
        for n in (1u64..2000).chain([65_521, 1 << 20, 3 << 30, u64::from(u32::MAX)]) {
            let threshold = (n as u32).wrapping_neg() % n as u32;
            assert_eq!(u64::from(threshold), two32 % n);
            let per_value = two32 / n;
            let values: Vec<u64> = if n <= 2000 { (0..n).collect() } else { vec![0, 1, n / 2, n - 1] };
            for v in values {
                let lo = (v * two32).div_ceil(n);
                let hi = ((v + 1) * two32 - 1) / n;
                let first_low = (lo * n) % two32;
                let rejected = u64::from(first_low < u64::from(threshold));
                if first_low + n < u64::from(threshold) {
                    panic!("second word of the interval would be rejected too");
                }
                assert_eq!(hi - lo + 1 - rejected, per_value, "n {n} v {v}");
            }
        }
    }

    /// The code follows the rule: one word when accepted, a second draw when
    /// rejected, on many words and ranges.
    #[test]
    fn below_follows_the_rule_word_by_word() {
        let mut x = 0x1234_5678u32;
        for i in 0..200_000u32 {
            x = x.wrapping_mul(747_796_405).wrapping_add(2_891_336_453);
            let n = match i % 4 {
                0 => 1 + (x >> 29),
                1 => 1 + (x >> 16),
                2 => x | 1,
                _ => 3 << 30,
            };
            let w = x.rotate_left(7);
            let product = u64::from(w) * u64::from(n);
            let accepted = (product as u32) >= n.wrapping_neg() % n;
            let mut src = Words(vec![w, 0xffff_ffff], 0);
            let got = src.below(n);
            if accepted {
                assert_eq!((got, src.1), ((product >> 32) as u32, 1));
            } else {
                assert!(src.1 >= 2);
                assert!(got < n);
            }
        }
    }

    #[test]
    fn below_rejects_and_redraws() {
        // n = 3: threshold = 2^32 mod 3 = 1. Word 0 gives product 0, low half
        // 0 < 1: rejected; the next word decides.
        let mut w = Words(vec![0, u32::MAX], 0);
        assert_eq!(w.below(3), 2);
        assert_eq!(w.1, 2);
        let mut w = Words(vec![u32::MAX], 0);
        assert_eq!(w.below(1), 0);
        let mut w = Words(vec![0x8000_0000], 0);
        assert_eq!(w.below(0), 0x8000_0000);
    }

    #[test]
    fn next_u64_takes_low_half_first() {
        let mut w = Words(vec![1, 2], 0);
        assert_eq!(w.next_u64(), 1 | (2 << 32));
    }
}
