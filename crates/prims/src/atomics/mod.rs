//! Reduce by key into dense bins, and histograms, with warp-aggregated
//! atomics: [`crate::Primitives::reduce_by_key_dense`] and
//! [`crate::Primitives::histogram`].
//!
//! `bins[k] += v` for every element `(k, v)`: the core of particle-in-cell
//! codes (cell sums of particle quantities), histograms and fractal-flame
//! renderers. On the GPU each element can do its own atomic add, but where
//! the lanes of a warp share keys those atomics serialise on one address.
//! The aggregated strategies first find each warp's lanes with equal keys
//! ("peers"), sum their values with shuffles and let one lane per key do the
//! atomic (Westphal, "Voting and Shuffling to Optimize Atomic Operations",
//! NVIDIA, 2015; after Adinetz's warp-aggregated atomics, 2014). The device
//! functions are in [`ATOMICS_CUH`] (`#include "atomics.cuh"`, see
//! [`with_atomics_header`]).
//!
//! - Keys are `u32`, bins `0..nbins`. **Keys `>= nbins` are ignored** on
//!   every backend (like points outside a histogram's range): no memory
//!   outside the bins is touched. To treat them as an error instead, check
//!   the largest key first ([`crate::Primitives::reduce`] with
//!   [`crate::Op::Max`]).
//! - Values ([`AtomicValue`]): `f32`, `f64`, `u32`, `u64`, or a
//!   [`Vector`] of 2 to 8 of them per element (`Vector<f32, 4>`: RGB and a
//!   hit count; `Vector<f32, 5>`: RGBA and a count). Integer sums wrap.
//! - Strategies ([`AtomicStrategy`]): plain atomics; warp-aggregated with
//!   Westphal's ballot loop, with `__match_any_sync`, over runs of equal
//!   neighbouring keys, or with runs or `__match_any_sync` as the keys call
//!   for (adaptive); bins privatized per block in shared memory (when they
//!   fit), with plain or run-aggregated shared atomics; and
//!   [`AtomicStrategy::Auto`], which [`choose_strategy`] resolves.
//! - [`AtomicAdd`]: hardware atomics, or the compare-and-swap loop Westphal
//!   measured for doubles. On sm_90 and newer, `f32` vectors of even width
//!   reach global bins through vector atomics (`atomicAdd` on `float4` /
//!   `float2`: one atomic per four or two components).
//! - The CPU ([`crate::CpuPrims`]) adds sequentially in input order
//!   (deterministic); the GPU's float sums are added in an order that
//!   depends on the strategy and on timing, so they differ from the CPU's
//!   in the last bits. Integer sums are exact on both.
//!
//! ```
//! use warpmc_prims::atomics::Vector;
//! use warpmc_prims::{AtomicsConfig, CpuPrims, Primitives};
//! let keys = vec![2u32, 0, 2, 7];
//! let sums = CpuPrims.reduce_by_key_dense(&keys, &vec![1.0f32, 2.0, 3.0, 4.0], 3, AtomicsConfig::default()).unwrap();
//! assert_eq!(sums, vec![2.0, 0.0, 4.0]); // key 7 is out of range: ignored
//! let rgba = vec![Vector([1.0f32, 0.0, 0.0, 1.0]); 4];
//! let image = CpuPrims.reduce_by_key_dense(&keys, &rgba, 3, AtomicsConfig::default()).unwrap();
//! assert_eq!(image[2], Vector([2.0, 0.0, 0.0, 2.0]));
//! assert_eq!(CpuPrims.histogram(&keys, 3, AtomicsConfig::default()).unwrap(), vec![1, 0, 2]);
//! ```
//!
//! On the GPU ([`crate::CudaPrims`], with the `cuda` feature):
//!
//! ```no_run
//! # #[cfg(feature = "cuda")]
//! # fn main() -> warpmc_prims::Result<()> {
//! use warpmc_prims::atomics::{AtomicStrategy, KeyOrder};
//! use warpmc_prims::{AtomicsConfig, CudaPrims, Primitives};
//! let p = CudaPrims::new(warpmc_gpu::Gpu::open_default()?);
//! let keys = p.upload(&[0u32, 0, 1, 1, 1, 5])?;
//! let values = p.upload(&[1.0f64; 6])?;
//! let sums = p.reduce_by_key_dense(&keys, &values, 2, AtomicStrategy::Auto)?;
//! assert_eq!(p.download(&sums)?, vec![2.0, 3.0]);
//! let counts = p.histogram(&keys, 2, AtomicsConfig { order: KeyOrder::Sorted, ..Default::default() })?;
//! assert_eq!(p.download(&counts)?, vec![2, 3]);
//! # Ok(()) }
//! # #[cfg(not(feature = "cuda"))]
//! # fn main() {}
//! ```

pub(crate) mod cpu;
#[cfg(feature = "cuda")]
mod cuda;

use std::fmt::{self, Debug};
use std::str::FromStr;

use serde::Serialize;
#[cfg(feature = "cuda")]
use warpmc_gpu::KernelSource;

use crate::element::{Element, Op, Pod};
use crate::error::{PrimsError, Result, ensure};

/// Device functions for aggregated atomics (`atomics.cuh`): peer
/// masks (ballot loop, `__match_any_sync`, runs), the tree reductions over
/// peer groups, hardware and compare-and-swap atomic adds. It includes
/// `warp.cuh`.
#[cfg(feature = "cuda")]
pub const ATOMICS_CUH: &str = include_str!("../../kernels/atomics.cuh");

/// The kernels of this module, embedded.
#[cfg(feature = "cuda")]
const ATOMICS_CU: &str = include_str!("../../kernels/atomics.cu");

/// `src` with `#include "atomics.cuh"` (and `warp.cuh`)
/// available.
#[cfg(feature = "cuda")]
pub fn with_atomics_header(src: KernelSource) -> KernelSource {
    crate::kernels::with_warp_header(src).header("atomics.cuh", ATOMICS_CUH)
}

/// The atomics.cu module: for values of `width` scalars `scalar` (a CUDA
/// type name), or for histograms (`None`: u32 counts, and the peer-mask
/// kernel).
#[cfg(feature = "cuda")]
fn source(values: Option<(&str, usize)>) -> KernelSource {
    let src = with_atomics_header(KernelSource::new("atomics.cu", ATOMICS_CU))
        .option(format!("-DPRIMS_ATOMICS_PEERS_BALLOT={}", PeerMethod::Ballot.code()))
        .option(format!("-DPRIMS_ATOMICS_PEERS_MATCH={}", PeerMethod::Match.code()))
        .option(format!("-DPRIMS_ATOMICS_PEERS_RUNS={}", PeerMethod::Runs.code()));
    match values {
        Some((scalar, width)) => src
            .option("-DPRIMS_ATOMICS_HISTOGRAM=0")
            .option(format!("-DPRIMS_ATOMICS_SCALAR={scalar}"))
            .option(format!("-DPRIMS_ATOMICS_WIDTH={width}")),
        None => src.option("-DPRIMS_ATOMICS_HISTOGRAM=1"),
    }
}

/// The module for values of type `V`.
#[cfg(feature = "cuda")]
pub(crate) fn value_source<V: AtomicValue>() -> KernelSource {
    source(Some((<V::Scalar as Element>::CUDA, V::WIDTH)))
}

/// The histogram module (u32 counts; also the peer-mask kernel).
#[cfg(feature = "cuda")]
pub(crate) fn histogram_source() -> KernelSource {
    source(None)
}

/// Every atomics kernel source (each value type the API accepts, and the
/// histogram module), for compile checks.
#[cfg(feature = "cuda")]
pub(crate) fn sources() -> Vec<KernelSource> {
    let mut v = Vec::new();
    for cuda in [f32::CUDA, f64::CUDA, u32::CUDA, u64::CUDA] {
        for width in 1..=MAX_WIDTH {
            v.push(source(Some((cuda, width))));
        }
    }
    v.push(histogram_source());
    v
}

/// The most values per element a [`Vector`] may carry.
pub const MAX_WIDTH: usize = 8;

mod sealed {
    pub trait Sealed {}
}

/// A scalar the atomics add: `f32`, `f64`, `u32`, `u64` (the types with a
/// hardware `atomicAdd`).
pub trait AtomicScalar: Element + sealed::Sealed {
    /// Machine epsilon for floats (the rounding tolerance of sums), 0 for
    /// integers (exact).
    const EPSILON: f64;
    /// The smallest normal value for floats (the GPU's f32 atomics flush
    /// subnormals to zero), 0 for integers.
    const MIN_NORMAL: f64;
}

macro_rules! atomic_scalar {
    ($t:ty, $eps:expr, $min:expr) => {
        impl sealed::Sealed for $t {}
        impl AtomicScalar for $t {
            const EPSILON: f64 = $eps;
            const MIN_NORMAL: f64 = $min;
        }
    };
}
atomic_scalar!(f32, f32::EPSILON as f64, f32::MIN_POSITIVE as f64);
atomic_scalar!(f64, f64::EPSILON, f64::MIN_POSITIVE);
atomic_scalar!(u32, 0.0, 0.0);
atomic_scalar!(u64, 0.0, 0.0);

/// The value of one element: [`AtomicValue::WIDTH`] scalars, added
/// component by component.
pub trait AtomicValue: Pod + PartialEq + sealed::Sealed {
    /// The component type.
    type Scalar: AtomicScalar;
    /// Components per value (1 to [`MAX_WIDTH`]).
    const WIDTH: usize;
    /// Component `k` (< `WIDTH`).
    fn component(&self, k: usize) -> Self::Scalar;
    /// The value whose component `k` is `f(k)`.
    fn from_components(f: impl FnMut(usize) -> Self::Scalar) -> Self;
    /// `self + other`, component by component (wrapping for integers).
    fn add(self, other: Self) -> Self {
        Self::from_components(|k| Self::Scalar::combine(Op::Sum, self.component(k), other.component(k)))
    }
    /// `f32`, `f64x4`, ...: the name in kernel modules and reports.
    fn type_name() -> String {
        let s = <Self::Scalar as Element>::NAME;
        if Self::WIDTH == 1 { s.to_string() } else { format!("{s}x{}", Self::WIDTH) }
    }
}

macro_rules! scalar_value {
    ($t:ty) => {
        impl AtomicValue for $t {
            type Scalar = $t;
            const WIDTH: usize = 1;
            fn component(&self, _k: usize) -> $t {
                *self
            }
            fn from_components(mut f: impl FnMut(usize) -> $t) -> Self {
                f(0)
            }
        }
    };
}
scalar_value!(f32);
scalar_value!(f64);
scalar_value!(u32);
scalar_value!(u64);

/// `N` values of one element, added component by component (`N` from 2 to
/// [`MAX_WIDTH`]): `Vector<f32, 4>` for RGB plus a hit count. Laid out as
/// `[S; N]`; on the device read with the widest vector loads its size
/// allows (one 16-byte load for `Vector<f32, 4>`).
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Vector<S, const N: usize>(pub [S; N]);

impl<S: Copy + Default, const N: usize> Default for Vector<S, N> {
    fn default() -> Self {
        Vector([S::default(); N])
    }
}

impl<S, const N: usize> From<[S; N]> for Vector<S, N> {
    fn from(a: [S; N]) -> Self {
        Vector(a)
    }
}

// SAFETY: Vector is repr(transparent) over [S; N], an array of a device
// type: the same bytes as the `S c[N]` of the kernels' Value<S, N>.
#[cfg(feature = "cuda")]
unsafe impl<S: warpmc_gpu::DeviceRepr, const N: usize> warpmc_gpu::DeviceRepr for Vector<S, N> {}
// SAFETY: an array of types valid as all-zero bits is valid as zero bits.
#[cfg(feature = "cuda")]
unsafe impl<S: warpmc_gpu::ValidAsZeroBits, const N: usize> warpmc_gpu::ValidAsZeroBits for Vector<S, N> {}
// SAFETY: an array of Pod scalars has no padding and accepts every bit
// pattern; repr(transparent) keeps the array's layout.
unsafe impl<S: Pod, const N: usize> Pod for Vector<S, N> {}

macro_rules! vector_value {
    ($n:expr) => {
        impl<S: AtomicScalar> sealed::Sealed for Vector<S, $n> {}
        impl<S: AtomicScalar> AtomicValue for Vector<S, $n> {
            type Scalar = S;
            const WIDTH: usize = $n;
            fn component(&self, k: usize) -> S {
                self.0[k]
            }
            fn from_components(f: impl FnMut(usize) -> S) -> Self {
                Vector(std::array::from_fn(f))
            }
        }
    };
}
vector_value!(2);
vector_value!(3);
vector_value!(4);
vector_value!(5);
vector_value!(6);
vector_value!(7);
vector_value!(8);

/// How elements reach their bins. Kernel names in parentheses (with `_cas`
/// appended for [`AtomicAdd::CasLoop`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub enum AtomicStrategy {
    /// One atomic add per element (`plain`).
    Plain,
    /// Warp-aggregated, peers found with Westphal's loop: broadcast the key
    /// of the lowest unclaimed lane, vote, repeat; one pass per distinct
    /// key in the warp (`ballot`).
    AggregatedBallot,
    /// Warp-aggregated, peers found with `__match_any_sync`: one
    /// instruction whatever the keys (`match`).
    AggregatedMatch,
    /// Warp-aggregated over runs of equal neighbouring keys only: one
    /// shuffle and one vote; exact peer groups for sorted keys, while a key
    /// that reappears after another one costs a second atomic (`runs`).
    AggregatedRuns,
    /// Warp-aggregated with runs or `__match_any_sync`, as the keys call
    /// for (`adaptive`): a warp whose 32 keys form 9 to 27 runs looks
    /// locally shuffled (keys come back after others) and uses match,
    /// others (sorted keys: few runs; nearly distinct keys: 28 to 32) use
    /// runs. With hardware atomics each warp decides once, from its first
    /// 32 keys, and keeps that choice for all its steps of the grid-stride
    /// loop (steps spread over the whole input); with
    /// [`AtomicAdd::CasLoop`] it decides at every step, since there a warp
    /// left on runs over shuffled keys retries its swaps and holds up the
    /// whole launch. What [`AtomicStrategy::Auto`] runs for global bins
    /// when the key order is unknown.
    AggregatedAdaptive,
    /// Bins privatized per block in shared memory (when `nbins` values fit),
    /// plain shared atomics, then one global atomic per non-zero bin and
    /// block (`shared`).
    SharedPrivatized,
    /// Privatized shared bins with run aggregation before the shared
    /// atomics (`shared_runs`).
    SharedRuns,
    /// Resolved per call by [`choose_strategy`].
    #[default]
    Auto,
}

impl AtomicStrategy {
    /// Every strategy but [`AtomicStrategy::Auto`], plain first.
    pub const CONCRETE: [AtomicStrategy; 7] = [
        AtomicStrategy::Plain,
        AtomicStrategy::AggregatedBallot,
        AtomicStrategy::AggregatedMatch,
        AtomicStrategy::AggregatedRuns,
        AtomicStrategy::AggregatedAdaptive,
        AtomicStrategy::SharedPrivatized,
        AtomicStrategy::SharedRuns,
    ];

    /// The command-line name: `plain`, `ballot`, `match`, `runs`,
    /// `adaptive`, `shared`, `shared-runs`, `auto`.
    pub fn name(self) -> &'static str {
        match self {
            AtomicStrategy::Plain => "plain",
            AtomicStrategy::AggregatedBallot => "ballot",
            AtomicStrategy::AggregatedMatch => "match",
            AtomicStrategy::AggregatedRuns => "runs",
            AtomicStrategy::AggregatedAdaptive => "adaptive",
            AtomicStrategy::SharedPrivatized => "shared",
            AtomicStrategy::SharedRuns => "shared-runs",
            AtomicStrategy::Auto => "auto",
        }
    }

    /// Whether the strategy keeps the bins in shared memory.
    pub fn is_shared(self) -> bool {
        matches!(self, AtomicStrategy::SharedPrivatized | AtomicStrategy::SharedRuns)
    }

    /// The kernel name's strategy part.
    #[cfg(feature = "cuda")]
    fn kernel_part(self) -> &'static str {
        match self {
            AtomicStrategy::SharedRuns => "shared_runs",
            s => s.name(),
        }
    }
}

impl fmt::Display for AtomicStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for AtomicStrategy {
    type Err = PrimsError;

    /// The strategy called `s` (see [`AtomicStrategy::name`]).
    fn from_str(s: &str) -> Result<Self> {
        Self::CONCRETE.into_iter().chain([AtomicStrategy::Auto]).find(|x| x.name() == s).ok_or_else(|| {
            PrimsError::InvalidArgument(format!(
                "unknown strategy '{s}' (plain, ballot, match, runs, adaptive, shared, shared-runs or auto)"
            ))
        })
    }
}

/// What the caller knows about the order of the keys: a hint for
/// [`AtomicStrategy::Auto`] (it never changes a result).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub enum KeyOrder {
    /// Nothing known.
    #[default]
    Unknown,
    /// Sorted (equal keys adjacent).
    Sorted,
    /// Mostly sorted: e.g. particles sorted by cell some steps ago that
    /// have moved a little since.
    PartiallySorted,
    /// No correlation between position and key.
    Random,
}

impl KeyOrder {
    /// `unknown`, `sorted`, `partial`, `random`.
    pub fn name(self) -> &'static str {
        match self {
            KeyOrder::Unknown => "unknown",
            KeyOrder::Sorted => "sorted",
            KeyOrder::PartiallySorted => "partial",
            KeyOrder::Random => "random",
        }
    }

    /// Every order, [`KeyOrder::Unknown`] first.
    pub const ALL: [KeyOrder; 4] = [KeyOrder::Unknown, KeyOrder::Sorted, KeyOrder::PartiallySorted, KeyOrder::Random];
}

impl FromStr for KeyOrder {
    type Err = PrimsError;

    /// The order called `s` (see [`KeyOrder::name`]).
    fn from_str(s: &str) -> Result<Self> {
        KeyOrder::ALL.into_iter().find(|o| o.name() == s).ok_or_else(|| {
            PrimsError::InvalidArgument(format!("unknown key order '{s}' (unknown, sorted, partial or random)"))
        })
    }
}

/// Which atomic add the kernels use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub enum AtomicAdd {
    /// The hardware `atomicAdd` (for doubles: sm_60 and newer; for `f32`
    /// vectors of even width into global bins on sm_90+: the `float4` /
    /// `float2` vector atomics).
    #[default]
    Hardware,
    /// A compare-and-swap loop (`atomicCAS` on the value's bits), the
    /// double-precision add Westphal measured (before sm_60 the only one).
    /// Lanes hitting one address succeed one per round.
    CasLoop,
}

/// Strategy, key-order hint and atomic flavour of a call. An
/// [`AtomicStrategy`] converts into one (with no hint and hardware atomics).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct AtomicsConfig {
    /// The strategy ([`AtomicStrategy::Auto`] by default).
    pub strategy: AtomicStrategy,
    /// What is known about the key order (used by `Auto` only).
    pub order: KeyOrder,
    /// Hardware atomics or a compare-and-swap loop.
    pub add: AtomicAdd,
}

impl From<AtomicStrategy> for AtomicsConfig {
    fn from(strategy: AtomicStrategy) -> Self {
        AtomicsConfig { strategy, ..Default::default() }
    }
}

/// Threads per block of the atomics kernels.
pub(crate) const BLOCK: u32 = 256;
/// Resident 256-thread blocks per SM at full occupancy (2048 threads).
pub(crate) const MAX_BLOCKS_PER_SM: u32 = 8;
/// Shared memory the driver reserves per block (1 KB on sm_80/sm_90).
const RESERVED_SHARED_PER_BLOCK: usize = 1024;

/// Blocks of the grid-stride kernels for `n` elements: enough to fill the
/// device, never more than one per 256 elements.
pub(crate) fn grid_blocks(n: usize, sm_count: u32, blocks_per_sm: u32) -> u32 {
    let wanted = n.div_ceil(BLOCK as usize).max(1) as u64;
    wanted.min(u64::from(sm_count.max(1)) * u64::from(blocks_per_sm.max(1))).min(u64::from(u32::MAX)) as u32
}

/// Resident blocks per SM of a privatized kernel whose bins take
/// `bin_bytes` of shared memory (`max_shared_bytes`: the most one block may
/// opt into; an SM has about that plus one block's reservation).
pub(crate) fn shared_blocks_per_sm(bin_bytes: usize, max_shared_bytes: usize) -> u32 {
    let per_sm = max_shared_bytes.saturating_add(RESERVED_SHARED_PER_BLOCK);
    let fit = per_sm / bin_bytes.saturating_add(RESERVED_SHARED_PER_BLOCK);
    fit.clamp(1, MAX_BLOCKS_PER_SM as usize) as u32
}

/// What [`choose_strategy`] decides from: all known on the host before a
/// launch, nothing read from the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AutoInputs {
    /// Elements.
    pub n: usize,
    /// Bins.
    pub nbins: usize,
    /// Bytes per bin (`size_of::<V>()`).
    pub value_bytes: usize,
    /// The caller's hint.
    pub order: KeyOrder,
    /// SMs of the device.
    pub sm_count: u32,
    /// Shared memory one block may use (the opt-in limit).
    pub max_shared_bytes: usize,
}

/// A privatized block zeroes its bins, and adds every non-zero one to the
/// global bins at its end: privatizing pays only when each block's bins
/// take several elements each. The threshold is elements per
/// (block × bin) of the grid.
pub const PRIVATIZE_MIN_ELEMENTS_PER_BIN: usize = 4;

/// How [`AtomicStrategy::Auto`] resolves: a cheap host-side rule, tuned
/// with `warpmc bench atomics` on an H200 (the measurements are in
/// docs/benchmarks/atomics.md).
///
/// 1. **Bins in shared memory** ([`AtomicStrategy::SharedPrivatized`])
///    when `nbins × value_bytes` fits in one block's shared memory and the
///    grid's blocks get at least [`PRIVATIZE_MIN_ELEMENTS_PER_BIN`]
///    elements per bin (otherwise zeroing and flushing the private copies
///    costs more than it saves). Shared atomics are so fast that
///    pre-combining lanes in front of them does not pay.
/// 2. Otherwise **global bins**, by the hint:
///    - [`KeyOrder::Random`]: plain atomics (no aggregation finds peers).
///    - [`KeyOrder::PartiallySorted`]: `__match_any_sync`, that is
///      [`AtomicStrategy::AggregatedMatch`]; equal keys are near but not
///      adjacent, which run detection misses.
///    - [`KeyOrder::Sorted`]: run aggregation,
///      [`AtomicStrategy::AggregatedRuns`]; one shuffle and one vote find
///      sorted keys' exact groups, faster than match there.
///    - [`KeyOrder::Unknown`] (no hint): adaptive aggregation,
///      [`AtomicStrategy::AggregatedAdaptive`], which tells these orders
///      apart on the device, in every call, by counting the runs in a
///      warp's 32 keys: runs for few (sorted) or nearly 32 (random), match
///      for 9 to 27 (partially sorted). It comes within a few per cent of
///      the fastest strategy on every workload of `warpmc bench atomics`; a
///      hint saves its small overhead on sorted keys.
pub fn choose_strategy(i: &AutoInputs) -> AtomicStrategy {
    let bin_bytes = i.nbins.saturating_mul(i.value_bytes);
    if i.nbins > 0 && bin_bytes <= i.max_shared_bytes {
        let per_sm = shared_blocks_per_sm(bin_bytes, i.max_shared_bytes);
        let blocks = grid_blocks(i.n, i.sm_count, per_sm) as usize;
        if i.n >= PRIVATIZE_MIN_ELEMENTS_PER_BIN.saturating_mul(blocks).saturating_mul(i.nbins) {
            return AtomicStrategy::SharedPrivatized;
        }
    }
    match i.order {
        KeyOrder::Random => AtomicStrategy::Plain,
        KeyOrder::PartiallySorted => AtomicStrategy::AggregatedMatch,
        KeyOrder::Sorted => AtomicStrategy::AggregatedRuns,
        KeyOrder::Unknown => AtomicStrategy::AggregatedAdaptive,
    }
}

/// How the kernels find a warp's peers (see
/// [`crate::CudaPrims::peer_masks`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PeerMethod {
    /// Westphal's ballot loop.
    Ballot,
    /// `__match_any_sync`.
    Match,
    /// Runs of equal neighbouring keys.
    Runs,
}

impl PeerMethod {
    /// The method's number in atomics.cu (`PRIMS_ATOMICS_PEERS_*`).
    #[cfg(feature = "cuda")]
    pub(crate) fn code(self) -> u32 {
        match self {
            PeerMethod::Ballot => 0,
            PeerMethod::Match => 1,
            PeerMethod::Runs => 2,
        }
    }
}

/// The largest `nbins` (keys are `u32`; the kernels take `nbins` as a
/// `u32`).
pub const MAX_BINS: usize = u32::MAX as usize;

pub(crate) fn check_nbins(nbins: usize) -> Result<()> {
    ensure(nbins <= MAX_BINS, || format!("{nbins} bins: at most 2^32 - 1 (keys are u32)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs(n: usize, nbins: usize, order: KeyOrder) -> AutoInputs {
        AutoInputs { n, nbins, value_bytes: 4, order, sm_count: 132, max_shared_bytes: 227 * 1024 }
    }

    /// The rule answers for any inputs, the extremes of each field
    /// included, without overflowing.
    #[test]
    fn the_rule_answers_at_the_extremes() {
        for n in [0, 1, usize::MAX] {
            for nbins in [0, 1, usize::MAX] {
                for value_bytes in [0, 4, usize::MAX] {
                    for sm_count in [0, 1, u32::MAX] {
                        for max_shared_bytes in [0, 227 * 1024, usize::MAX] {
                            let i = AutoInputs {
                                n,
                                nbins,
                                value_bytes,
                                order: KeyOrder::Unknown,
                                sm_count,
                                max_shared_bytes,
                            };
                            let _ = choose_strategy(&i);
                        }
                    }
                }
            }
        }
        assert_eq!(grid_blocks(usize::MAX, u32::MAX, u32::MAX), u32::MAX);
    }

    #[test]
    fn auto_privatizes_small_bins_only_with_enough_elements() {
        assert_eq!(choose_strategy(&inputs(1 << 24, 256, KeyOrder::Random)), AtomicStrategy::SharedPrivatized);
        assert_eq!(choose_strategy(&inputs(1 << 24, 256, KeyOrder::Unknown)), AtomicStrategy::SharedPrivatized);
        assert_eq!(
            choose_strategy(&inputs(10_000_000, 1_000_000, KeyOrder::PartiallySorted)),
            AtomicStrategy::AggregatedMatch
        );
        assert_eq!(choose_strategy(&inputs(1000, 256, KeyOrder::Random)), AtomicStrategy::Plain);
        assert_eq!(choose_strategy(&inputs(10_000_000, 1_000_000, KeyOrder::Sorted)), AtomicStrategy::AggregatedRuns);
        assert_eq!(choose_strategy(&inputs(10_000_000, 1_000_000, KeyOrder::Random)), AtomicStrategy::Plain);
    }

    #[test]
    fn auto_without_a_hint_lets_the_device_tell_the_order() {
        for (n, nbins) in [(10_000_000, 1_000_000), (1000, 256), (0, 0), (1 << 24, 1920 * 1080)] {
            assert_eq!(choose_strategy(&inputs(n, nbins, KeyOrder::Unknown)), AtomicStrategy::AggregatedAdaptive);
        }
        // Bins that fit in shared memory still go there: the order does not
        // matter to privatized bins.
        assert_eq!(choose_strategy(&inputs(1 << 24, 256, KeyOrder::Unknown)), AtomicStrategy::SharedPrivatized);
    }

    #[test]
    fn shared_residency() {
        assert_eq!(shared_blocks_per_sm(1024, 227 * 1024), 8);
        assert_eq!(shared_blocks_per_sm(200 * 1024, 227 * 1024), 1);
        assert_eq!(shared_blocks_per_sm(50 * 1024, 227 * 1024), 4);
        assert_eq!(grid_blocks(0, 132, 8), 1);
        assert_eq!(grid_blocks(1 << 30, 132, 8), 1056);
    }

    #[test]
    fn names_round_trip() {
        for s in AtomicStrategy::CONCRETE.into_iter().chain([AtomicStrategy::Auto]) {
            assert_eq!(s.name().parse::<AtomicStrategy>().unwrap(), s);
        }
        for o in KeyOrder::ALL {
            assert_eq!(o.name().parse::<KeyOrder>().unwrap(), o);
        }
        let e = "fast".parse::<AtomicStrategy>().unwrap_err().to_string();
        assert!(e.contains("unknown strategy 'fast'") && !e.contains("--"), "{e}");
        assert!("sideways".parse::<KeyOrder>().is_err());
        assert_eq!(<Vector<f64, 3>>::type_name(), "f64x3");
        assert_eq!(u64::type_name(), "u64");
    }
}
