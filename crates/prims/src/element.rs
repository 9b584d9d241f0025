//! Element types, associative operators and predicates shared by the CPU and
//! CUDA backends.

use std::fmt::Debug;

/// What a buffer element needs from the CUDA layer: cudarc's `DeviceRepr`
/// and `ValidAsZeroBits` (re-exported by warpmc-gpu) with the `cuda`
/// feature, nothing without it. Implemented for every type that has them;
/// a type of your own gets it by implementing those two (with the feature).
#[cfg(feature = "cuda")]
pub trait DeviceCopy: warpmc_gpu::DeviceRepr + warpmc_gpu::ValidAsZeroBits {}
#[cfg(feature = "cuda")]
impl<T: warpmc_gpu::DeviceRepr + warpmc_gpu::ValidAsZeroBits> DeviceCopy for T {}

/// What a buffer element needs from the CUDA layer: nothing, in a build
/// without the `cuda` feature.
#[cfg(not(feature = "cuda"))]
pub trait DeviceCopy {}
#[cfg(not(feature = "cuda"))]
impl<T> DeviceCopy for T {}

/// Plain bits that can live in a buffer of either backend: every buffer of
/// [`crate::Primitives`] holds `Pod` elements. The primitive numbers,
/// [`crate::Bytes16`] and [`crate::atomics::Vector`] are `Pod`.
///
/// # Safety
///
/// The type must have no padding bytes and every bit pattern (all zeros
/// included) must be a valid value: kernels move and fill raw bits, and
/// [`as_bytes`] views elements as bytes.
pub unsafe trait Pod: Copy + Default + Debug + Send + Sync + DeviceCopy + 'static {}

macro_rules! pod {
    ($($t:ty),*) => {$(
        // SAFETY: primitive numbers: no padding, every bit pattern valid.
        unsafe impl Pod for $t {}
    )*};
}
pod!(u8, i8, u16, i16, u32, i32, u64, i64, f32, f64);

/// The bytes of `v`, for bitwise comparisons (NaNs equal to themselves,
/// -0.0 different from 0.0) and for writing elements out.
pub fn as_bytes<T: Pod>(v: &[T]) -> &[u8] {
    // SAFETY: Pod types have no padding bytes, so every byte of the slice is
    // initialised; u8 has alignment 1.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
}

/// The bytes of `v`, writable: any bytes written leave valid elements.
pub fn as_bytes_mut<T: Pod>(v: &mut [T]) -> &mut [u8] {
    // SAFETY: as in as_bytes; and Pod types accept every bit pattern, so
    // whatever is written through the bytes is a valid value.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
}

/// `bytes` viewed as elements of `T`, where they are whole elements at an
/// address of `T`'s alignment (`None` otherwise): the inverse of
/// [`as_bytes`], without a copy.
pub fn from_bytes<T: Pod>(bytes: &[u8]) -> Option<&[T]> {
    let size = std::mem::size_of::<T>();
    if size == 0
        || !bytes.len().is_multiple_of(size)
        || !(bytes.as_ptr() as usize).is_multiple_of(std::mem::align_of::<T>())
    {
        return None;
    }
    // SAFETY: the address is aligned for T and the length whole elements;
    // Pod types accept every bit pattern.
    Some(unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<T>(), bytes.len() / size) })
}

/// `bytes` viewed as writable elements of `T`, as [`from_bytes`].
pub fn from_bytes_mut<T: Pod>(bytes: &mut [u8]) -> Option<&mut [T]> {
    let size = std::mem::size_of::<T>();
    if size == 0
        || !bytes.len().is_multiple_of(size)
        || !(bytes.as_ptr() as usize).is_multiple_of(std::mem::align_of::<T>())
    {
        return None;
    }
    // SAFETY: as in from_bytes; the slice is borrowed mutably once, and any
    // element written leaves valid bytes.
    Some(unsafe { std::slice::from_raw_parts_mut(bytes.as_mut_ptr().cast::<T>(), bytes.len() / size) })
}

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

impl std::fmt::Display for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Op {
    type Err = crate::PrimsError;

    /// `sum`, `min` or `max`.
    fn from_str(s: &str) -> crate::Result<Self> {
        Op::ALL
            .into_iter()
            .find(|o| o.name() == s)
            .ok_or_else(|| crate::PrimsError::InvalidArgument(format!("unknown operator '{s}' (sum, min or max)")))
    }
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

/// A number type the reductions, scans, sorts and compaction handle: `i32`,
/// `u32`, `i64`, `u64`, `f32`, `f64`.
pub trait Element: Pod + PartialEq + PartialOrd {
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
                // Of two zeros, min is −0 and max +0 in either order, as the
                // kernels' fminf/fmaxf give (f32::min leaves it open).
                match op {
                    Op::Sum => a + b,
                    Op::Min if a == b => {
                        if a.is_sign_negative() {
                            a
                        } else {
                            b
                        }
                    }
                    Op::Max if a == b => {
                        if a.is_sign_negative() {
                            b
                        } else {
                            a
                        }
                    }
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
    /// How the kernels turn a key into its radix bits (sort.cu's
    /// `PRIMS_SORT_KEY_TRANSFORM`): 0 = as is (unsigned), 1 = flip the sign
    /// bit (signed integers), 2 = IEEE total order (floats).
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

    /// (kind, threshold) as the compaction kernel takes them (the kinds
    /// are passed to device.cu as defines, see [`PREDICATE_KINDS`]).
    #[cfg(feature = "cuda")]
    pub(crate) fn encode(self) -> (u32, T) {
        match self {
            Predicate::NonZero => (PREDICATE_NON_ZERO, T::default()),
            Predicate::GreaterThan(t) => (PREDICATE_GREATER_THAN, t),
            Predicate::LessThan(t) => (PREDICATE_LESS_THAN, t),
        }
    }
}

#[cfg(feature = "cuda")]
const PREDICATE_NON_ZERO: u32 = 0;
#[cfg(feature = "cuda")]
const PREDICATE_GREATER_THAN: u32 = 1;
#[cfg(feature = "cuda")]
const PREDICATE_LESS_THAN: u32 = 2;

/// The predicate kinds of [`Predicate::encode`] as device.cu's defines.
#[cfg(feature = "cuda")]
pub(crate) const PREDICATE_KINDS: [(&str, u32); 3] = [
    ("PRIMS_SELECT_NON_ZERO", PREDICATE_NON_ZERO),
    ("PRIMS_SELECT_GREATER_THAN", PREDICATE_GREATER_THAN),
    ("PRIMS_SELECT_LESS_THAN", PREDICATE_LESS_THAN),
];

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

    #[test]
    fn bytes_view_back_as_elements_only_when_whole_and_aligned() {
        let mut v = [1u64, u64::MAX, 0x0102_0304_0506_0708];
        let bytes = as_bytes(&v).to_vec();
        // A Vec<u64>'s bytes are aligned: the view is the elements.
        assert_eq!(from_bytes::<u64>(as_bytes(&v)), Some(&[1u64, u64::MAX, 0x0102_0304_0506_0708][..]));
        assert_eq!(from_bytes::<u64>(&as_bytes(&v)[..23]), None, "not whole elements");
        assert_eq!(from_bytes::<u64>(&as_bytes(&v)[1..17]), None, "misaligned");
        assert_eq!(from_bytes::<u32>(&as_bytes(&v)[4..12]), Some(&[0u32, 0xffff_ffff][..]));
        assert_eq!(from_bytes::<u8>(&bytes[..0]), Some(&[][..]));
        from_bytes_mut::<u64>(as_bytes_mut(&mut v)).unwrap()[1] = 7;
        assert_eq!(v[1], 7);
        assert!(from_bytes_mut::<u16>(&mut as_bytes_mut(&mut v)[1..5]).is_none());
    }
}
