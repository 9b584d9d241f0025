//! Element types, associative operators and predicates shared by the CPU and
//! CUDA backends.

use std::fmt::Debug;

use warpmc_gpu::{DeviceRepr, ValidAsZeroBits};

/// An associative operator for reductions and scans.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// Addition (wrapping for integers).
    Sum,
    /// Minimum (for floats, IEEE minNum: a NaN operand is ignored).
    Min,
    /// Maximum (for floats, IEEE maxNum).
    Max,
}

impl Op {
    /// Every operator, for tests and benchmarks.
    pub const ALL: [Op; 3] = [Op::Sum, Op::Min, Op::Max];

    /// The lower-case name used in kernel names and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Op::Sum => "sum",
            Op::Min => "min",
            Op::Max => "max",
        }
    }
}

/// A plain element type that both backends handle: `i32`, `u32`, `i64`,
/// `u64`, `f32`, `f64`.
pub trait Element:
    Copy + Default + PartialEq + PartialOrd + Debug + Send + Sync + DeviceRepr + ValidAsZeroBits + 'static
{
    /// The CUDA C++ spelling of the type.
    const CUDA: &'static str;
    /// The Rust spelling, used in kernel names (`reduce_sum` in the module
    /// compiled for `f32`).
    const NAME: &'static str;
    /// Whether the type is a floating-point type (sums then depend on the
    /// order of additions, so backends agree only within rounding).
    const FLOAT: bool;

    /// `a op b`, exactly as the kernels compute it.
    fn combine(op: Op, a: Self, b: Self) -> Self;
    /// The identity of `op`: 0 for sums, the largest value for min, the
    /// smallest for max (±∞ for floats).
    fn identity(op: Op) -> Self;
    /// The value as an `f64`, for tolerances in tests and reports.
    fn to_f64(self) -> f64;
    /// A value from an `f64` (truncating for integers), for test inputs.
    fn from_f64(x: f64) -> Self;
}

macro_rules! int_element {
    ($t:ty, $cuda:expr) => {
        impl Element for $t {
            const CUDA: &'static str = $cuda;
            const NAME: &'static str = stringify!($t);
            const FLOAT: bool = false;
            fn combine(op: Op, a: Self, b: Self) -> Self {
                match op {
                    Op::Sum => a.wrapping_add(b),
                    Op::Min => a.min(b),
                    Op::Max => a.max(b),
                }
            }
            fn identity(op: Op) -> Self {
                match op {
                    Op::Sum => 0,
                    Op::Min => <$t>::MAX,
                    Op::Max => <$t>::MIN,
                }
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn from_f64(x: f64) -> Self {
                x as $t
            }
        }
    };
}

int_element!(i32, "int");
int_element!(u32, "unsigned int");
int_element!(i64, "long long");
int_element!(u64, "unsigned long long");

macro_rules! float_element {
    ($t:ty, $cuda:expr) => {
        impl Element for $t {
            const CUDA: &'static str = $cuda;
            const NAME: &'static str = stringify!($t);
            const FLOAT: bool = true;
            fn combine(op: Op, a: Self, b: Self) -> Self {
                match op {
                    Op::Sum => a + b,
                    Op::Min => a.min(b),
                    Op::Max => a.max(b),
                }
            }
            fn identity(op: Op) -> Self {
                match op {
                    Op::Sum => 0.0,
                    Op::Min => <$t>::INFINITY,
                    Op::Max => <$t>::NEG_INFINITY,
                }
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn from_f64(x: f64) -> Self {
                x as $t
            }
        }
    };
}

float_element!(f32, "float");
float_element!(f64, "double");

/// A key type the radix sort orders: `u32`, `u64`, `f32` (and `i32`, `i64`,
/// `f64`). Keys are sorted by their [`SortKey::radix_bits`], an unsigned
/// integer with the same order as the keys; for floats this is IEEE 754's
/// total order (`f32::total_cmp`): −NaN < −∞ < … < −0 < +0 < … < +∞ < +NaN.
pub trait SortKey: Element {
    /// 32 or 64.
    const BITS: u32;
    /// How the kernels turn a key into its radix bits: 0 = as is (unsigned),
    /// 1 = flip the sign bit (signed integers), 2 = IEEE total order (floats).
    const TRANSFORM: u32;
    /// The key's radix bits, zero-extended to 64.
    fn radix_bits(self) -> u64;
    /// The key whose radix bits are `bits` (the low [`SortKey::BITS`]).
    fn from_radix_bits(bits: u64) -> Self;
}

impl SortKey for u32 {
    const BITS: u32 = 32;
    const TRANSFORM: u32 = 0;
    fn radix_bits(self) -> u64 {
        u64::from(self)
    }
    fn from_radix_bits(bits: u64) -> Self {
        bits as u32
    }
}
impl SortKey for u64 {
    const BITS: u32 = 64;
    const TRANSFORM: u32 = 0;
    fn radix_bits(self) -> u64 {
        self
    }
    fn from_radix_bits(bits: u64) -> Self {
        bits
    }
}
impl SortKey for i32 {
    const BITS: u32 = 32;
    const TRANSFORM: u32 = 1;
    fn radix_bits(self) -> u64 {
        u64::from((self as u32) ^ 0x8000_0000)
    }
    fn from_radix_bits(bits: u64) -> Self {
        ((bits as u32) ^ 0x8000_0000) as i32
    }
}
impl SortKey for i64 {
    const BITS: u32 = 64;
    const TRANSFORM: u32 = 1;
    fn radix_bits(self) -> u64 {
        (self as u64) ^ (1 << 63)
    }
    fn from_radix_bits(bits: u64) -> Self {
        (bits ^ (1 << 63)) as i64
    }
}
impl SortKey for f32 {
    const BITS: u32 = 32;
    const TRANSFORM: u32 = 2;
    fn radix_bits(self) -> u64 {
        let b = self.to_bits();
        // Negative: flip every bit (larger magnitude sorts first);
        // positive: set the sign bit (above all negatives).
        u64::from(if b >> 31 == 1 { !b } else { b | 0x8000_0000 })
    }
    fn from_radix_bits(bits: u64) -> Self {
        let r = bits as u32;
        // Radix bits with the top bit set came from a non-negative float.
        f32::from_bits(if r >> 31 == 1 { r & 0x7fff_ffff } else { !r })
    }
}
impl SortKey for f64 {
    const BITS: u32 = 64;
    const TRANSFORM: u32 = 2;
    fn radix_bits(self) -> u64 {
        let b = self.to_bits();
        if b >> 63 == 1 { !b } else { b | (1 << 63) }
    }
    fn from_radix_bits(bits: u64) -> Self {
        f64::from_bits(if bits >> 63 == 1 { bits & !(1 << 63) } else { !bits })
    }
}

/// Which elements [`crate::Primitives::select_if`] keeps.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Predicate<T> {
    /// x ≠ 0.
    NonZero,
    /// x > t.
    GreaterThan(T),
    /// x < t.
    LessThan(T),
}

impl<T: Element> Predicate<T> {
    /// Whether `x` is kept.
    pub fn keeps(self, x: T) -> bool {
        match self {
            Predicate::NonZero => x != T::default(),
            Predicate::GreaterThan(t) => x > t,
            Predicate::LessThan(t) => x < t,
        }
    }

    /// (kind, threshold) as the kernels take them: 0 = non-zero, 1 = greater,
    /// 2 = less.
    pub fn encode(self) -> (u32, T) {
        match self {
            Predicate::NonZero => (0, T::default()),
            Predicate::GreaterThan(t) => (1, t),
            Predicate::LessThan(t) => (2, t),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_radix_bits_follow_total_order() {
        let xs = [f32::NEG_INFINITY, -3.5, -0.0, 0.0, 1e-40, 2.0, f32::INFINITY, f32::NAN, -f32::NAN];
        for a in xs {
            for b in xs {
                assert_eq!(a.radix_bits().cmp(&b.radix_bits()), a.total_cmp(&b), "{a} vs {b}");
            }
        }
        let ys = [f64::NEG_INFINITY, -3.5, -0.0, 0.0, 5e-324, 2.0, f64::INFINITY, f64::NAN, -f64::NAN];
        for a in ys {
            for b in ys {
                assert_eq!(a.radix_bits().cmp(&b.radix_bits()), a.total_cmp(&b), "{a} vs {b}");
            }
        }
    }

    #[test]
    fn radix_bits_round_trip() {
        for bits in [0u64, 1, 0x7fff_ffff, 0x8000_0000, 0xffff_ffff, 0x1234_5678] {
            assert_eq!(u32::from_radix_bits(bits).radix_bits(), bits);
            assert_eq!(i32::from_radix_bits(bits).radix_bits(), bits);
            assert_eq!(f32::from_radix_bits(bits).radix_bits(), bits);
        }
        for bits in [0u64, 1, 1 << 63, u64::MAX, 0x0123_4567_89ab_cdef] {
            assert_eq!(u64::from_radix_bits(bits).radix_bits(), bits);
            assert_eq!(i64::from_radix_bits(bits).radix_bits(), bits);
            assert_eq!(f64::from_radix_bits(bits).radix_bits(), bits);
        }
    }

    #[test]
    fn signed_radix_bits_follow_order() {
        let xs = [i32::MIN, -5, -1, 0, 1, i32::MAX];
        for w in xs.windows(2) {
            assert!(w[0].radix_bits() < w[1].radix_bits());
        }
        let ys = [i64::MIN, -5, -1, 0, 1, i64::MAX];
        for w in ys.windows(2) {
            assert!(w[0].radix_bits() < w[1].radix_bits());
        }
    }

    #[test]
    fn identities_are_identities() {
        for op in Op::ALL {
            assert_eq!(i32::combine(op, i32::identity(op), -7), -7);
            assert_eq!(u64::combine(op, u64::identity(op), 9), 9);
            assert_eq!(f32::combine(op, f32::identity(op), 2.5), 2.5);
        }
    }
}
