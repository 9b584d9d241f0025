//! Reduce by key into dense bins, and histograms, with warp-aggregated
//! atomics.
//!
//! `bins[k] += v` for every element `(k, v)`: the core of particle-in-cell
//! codes (cell sums of particle quantities), histograms and fractal-flame
//! renderers. On the GPU each element can do its own atomic add, but where
//! the lanes of a warp share keys those atomics serialise on one address.
//! The aggregated strategies first find each warp's lanes with equal keys
//! ("peers"), sum their values with shuffles and let one lane per key do the
//! atomic ("Voting and Shuffling to Optimize Atomic Operations", Elmar
//! Westphal, NVIDIA, 2015). The device functions are in [`ATOMICS_CUH`]
//! (`#include "atomics.cuh"`, see [`with_atomics_header`]).
//!
//! - Keys are `u32`, bins `0..nbins`. **Keys `>= nbins` are ignored** on
//!   every backend (like points outside a histogram's range): no memory
//!   outside the bins is touched. To treat them as an error instead, check
//!   the largest key first (`Primitives::reduce` with [`crate::Op::Max`]).
//! - Values ([`AtomicValue`]): `f32`, `f64`, `u32`, `u64`, or a
//!   [`Vector`] of 2 to 8 of them per element (`Vector<f32, 4>`: RGB and a
//!   hit count; `Vector<f32, 5>`: RGBA and a count). Integer sums wrap.
//! - Strategies ([`AtomicStrategy`]): plain atomics; warp-aggregated with
//!   the document's ballot loop, with `__match_any_sync`, over runs of
//!   equal neighbouring keys, or with runs or `__match_any_sync` as the
//!   keys call for (adaptive); bins privatized per block in shared memory
//!   (when they fit), with plain or run-aggregated shared atomics; and
//!   [`AtomicStrategy::Auto`], which [`choose_strategy`] resolves.
//! - [`AtomicAdd`]: hardware atomics, or the compare-and-swap loop the
//!   document measured for doubles. On sm_90 and newer, `f32` vectors of
//!   even width reach global bins through vector atomics (`atomicAdd` on
//!   `float4` / `float2`: one atomic per four or two components).
//! - CPU reference: [`reduce_by_key_dense_cpu`], [`histogram_cpu`] (also as
//!   methods of [`CpuPrims`]), and [`Reference`], which checks a GPU result
//!   (exactly for integers, within the rounding bound for floats: the
//!   aggregated strategies add in a different order).
//!
//! ```
//! use warpmc_prims::CpuPrims;
//! use warpmc_prims::atomics::Vector;
//! let keys = [2u32, 0, 2, 7];
//! let sums = CpuPrims.reduce_by_key_dense(&keys, &[1.0f32, 2.0, 3.0, 4.0], 3).unwrap();
//! assert_eq!(sums, vec![2.0, 0.0, 4.0]); // key 7 is out of range: ignored
//! let rgba = [Vector([1.0f32, 0.0, 0.0, 1.0]); 4];
//! let image = CpuPrims.reduce_by_key_dense(&keys, &rgba, 3).unwrap();
//! assert_eq!(image[2], Vector([2.0, 0.0, 0.0, 2.0]));
//! assert_eq!(CpuPrims.histogram(&keys, 3).unwrap(), vec![1, 0, 2]);
//! ```
//!
//! On the GPU ([`CudaPrims`]):
//!
//! ```no_run
//! # fn main() -> warpmc_prims::Result<()> {
//! use warpmc_prims::CudaPrims;
//! use warpmc_prims::atomics::{AtomicStrategy, AtomicsConfig, KeyOrder};
//! let p = CudaPrims::new(warpmc_gpu::Gpu::open_default()?);
//! let keys = p.gpu().upload(&[0u32, 0, 1, 1, 1, 5])?;
//! let values = p.gpu().upload(&[1.0f64; 6])?;
//! let sums = p.reduce_by_key_dense(&keys, &values, 2, AtomicStrategy::Auto)?;
//! assert_eq!(p.gpu().download(&sums)?, vec![2.0, 3.0]);
//! let counts = p.histogram(&keys, 2, AtomicsConfig { order: KeyOrder::Sorted, ..Default::default() })?;
//! assert_eq!(p.gpu().download(&counts)?, vec![2, 3]);
//! # Ok(()) }
//! ```

mod cuda;

use std::fmt::{self, Debug};

use serde::Serialize;
use warpmc_gpu::{DeviceRepr, KernelSource, ValidAsZeroBits};

use crate::CpuPrims;
#[cfg(doc)]
use crate::CudaPrims;
use crate::element::{Element, Op};
use crate::error::{Result, ensure};

/// Device functions for aggregated atomics (`atomics.cuh`): peer
/// masks (ballot loop, `__match_any_sync`, runs), the tree reductions over
/// peer groups, hardware and compare-and-swap atomic adds. It includes
/// `warp.cuh`.
pub const ATOMICS_CUH: &str = include_str!("../../kernels/atomics.cuh");

/// The kernels of this module, embedded.
const ATOMICS_CU: &str = include_str!("../../kernels/atomics.cu");

/// `src` with `#include "atomics.cuh"` (and `warp.cuh`)
/// available.
pub fn with_atomics_header(src: KernelSource) -> KernelSource {
    crate::kernels::with_warp_header(src).header("atomics.cuh", ATOMICS_CUH)
}

/// The atomics.cu module for scalar `cuda` (a CUDA type name) and `width`
/// values per element.
fn source_for(name: &str, cuda: &str, width: usize) -> KernelSource {
    with_atomics_header(KernelSource::new(format!("atomics_{name}.cu"), ATOMICS_CU))
        .option(format!("-DWARPMC_S={cuda}"))
        .option(format!("-DWARPMC_W={width}"))
}

/// The module for values of type `V`.
pub(crate) fn value_source<V: AtomicValue>() -> KernelSource {
    source_for(&V::type_name(), <V::Scalar as Element>::CUDA, V::WIDTH)
}

/// The histogram module (u32 counts; also the peer-mask test kernel).
pub(crate) fn histogram_source() -> KernelSource {
    with_atomics_header(KernelSource::new("atomics_hist.cu", ATOMICS_CU)).option("-DWARPMC_HIST=1")
}

/// Every atomics kernel source (each value type the API accepts, and the
/// histogram module), for compile checks.
pub(crate) fn sources() -> Vec<KernelSource> {
    let mut v = Vec::new();
    for (name, cuda) in [("f32", f32::CUDA), ("f64", f64::CUDA), ("u32", u32::CUDA), ("u64", u64::CUDA)] {
        for width in 1..=MAX_WIDTH {
            let full = if width == 1 { name.to_string() } else { format!("{name}x{width}") };
            v.push(source_for(&full, cuda, width));
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
pub trait AtomicValue:
    Copy + Default + PartialEq + Debug + Send + Sync + DeviceRepr + ValidAsZeroBits + 'static + sealed::Sealed
{
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
unsafe impl<S: DeviceRepr, const N: usize> DeviceRepr for Vector<S, N> {}
// SAFETY: an array of types valid as all-zero bits is valid as zero bits.
unsafe impl<S: ValidAsZeroBits, const N: usize> ValidAsZeroBits for Vector<S, N> {}

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
    /// Warp-aggregated, peers found with the document's loop: broadcast the
    /// key of the lowest unclaimed lane, vote, repeat; one pass per
    /// distinct key in the warp (`ballot`).
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

    /// The strategy called `name` (see [`AtomicStrategy::name`]).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::CONCRETE.into_iter().chain([AtomicStrategy::Auto]).find(|s| s.name() == name)
    }

    /// Whether the strategy keeps the bins in shared memory.
    pub fn is_shared(self) -> bool {
        matches!(self, AtomicStrategy::SharedPrivatized | AtomicStrategy::SharedRuns)
    }

    /// The kernel name's strategy part.
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

    /// The order called `name` (see [`KeyOrder::name`]).
    pub fn from_name(name: &str) -> Option<Self> {
        [KeyOrder::Unknown, KeyOrder::Sorted, KeyOrder::PartiallySorted, KeyOrder::Random]
            .into_iter()
            .find(|o| o.name() == name)
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
    /// double-precision add the document measured (before sm_60 the only
    /// one). Lanes hitting one address succeed one per round.
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
    wanted.min(u64::from(sm_count.max(1) * blocks_per_sm.max(1))) as u32
}

/// Resident blocks per SM of a privatized kernel whose bins take
/// `bin_bytes` of shared memory (`max_shared_bytes`: the most one block may
/// opt into; an SM has about that plus one block's reservation).
pub(crate) fn shared_blocks_per_sm(bin_bytes: usize, max_shared_bytes: usize) -> u32 {
    let per_sm = max_shared_bytes + RESERVED_SHARED_PER_BLOCK;
    let fit = per_sm / (bin_bytes + RESERVED_SHARED_PER_BLOCK);
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

/// How [`AtomicStrategy::Auto`] resolves: a cheap host-side rule, tuned on
/// an H200 (`warpmc bench atomics`, BENCHMARKS.md).
///
/// 1. **Bins in shared memory** ([`AtomicStrategy::SharedPrivatized`])
///    when `nbins × value_bytes` fits in one block's shared memory and the
///    grid's blocks get at least [`PRIVATIZE_MIN_ELEMENTS_PER_BIN`]
///    elements per bin (otherwise zeroing and flushing the private copies
///    costs more than it saves). Shared atomics are so fast that
///    pre-combining lanes does not pay there: 256 bins took 0.040 ms for
///    2^24 random keys and 0.042 ms for sorted ones, against 0.047 and
///    0.048 ms with run aggregation in front.
/// 2. Otherwise **global bins**, by the hint:
///    - [`KeyOrder::Random`]: plain atomics (no aggregation finds peers).
///    - [`KeyOrder::PartiallySorted`]: `__match_any_sync`, that is
///      [`AtomicStrategy::AggregatedMatch`]; equal keys are near but not
///      adjacent, which run detection misses (+6 to +108 % against match).
///    - [`KeyOrder::Sorted`]: run aggregation,
///      [`AtomicStrategy::AggregatedRuns`]; one shuffle and one vote find
///      sorted keys' exact groups, 15–26 % faster than match there.
///    - [`KeyOrder::Unknown`] (no hint): adaptive aggregation,
///      [`AtomicStrategy::AggregatedAdaptive`], which tells these orders
///      apart on the device, in every call, by counting the runs in a
///      warp's 32 keys: runs for few (sorted) or nearly 32 (random: within
///      1 % of plain atomics), match for 9 to 27 (partially sorted). On
///      every workload of `warpmc bench atomics` it is within 2 % of the
///      fastest strategy (H200); runs alone, Auto's choice
///      without a hint before, was 4–7 % behind match on partially sorted
///      keys and 2.0× with the compare-and-swap add. A hint saves the
///      adaptive kernel's 1.5–2 % on sorted keys.
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

/// How [`CudaPrims::peer_masks`] finds a warp's peers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PeerMethod {
    /// The document's ballot loop.
    Ballot,
    /// `__match_any_sync`.
    Match,
    /// Runs of equal neighbouring keys.
    Runs,
}

/// The largest `nbins` (keys are `u32`; the kernels take `nbins` as a
/// `u32`).
pub const MAX_BINS: usize = u32::MAX as usize;

pub(crate) fn check_nbins(nbins: usize) -> Result<()> {
    ensure(nbins <= MAX_BINS, || format!("{nbins} bins: at most 2^32 - 1 (keys are u32)"))
}

/// `bins[k] = Σ values[i]` over the elements with `keys[i] == k`, for `k` in
/// `0..nbins`; keys `>= nbins` are ignored. Sequential sums in input order
/// (deterministic).
pub fn reduce_by_key_dense_cpu<V: AtomicValue>(keys: &[u32], values: &[V], nbins: usize) -> Result<Vec<V>> {
    ensure(keys.len() == values.len(), || {
        format!("reduce_by_key_dense: {} keys but {} values", keys.len(), values.len())
    })?;
    check_nbins(nbins)?;
    let mut bins = vec![V::default(); nbins];
    for (&k, &v) in keys.iter().zip(values) {
        if let Some(b) = bins.get_mut(k as usize) {
            *b = b.add(v);
        }
    }
    Ok(bins)
}

/// `counts[k]` = number of keys equal to `k`, for `k` in `0..nbins`; keys
/// `>= nbins` are ignored. Counts wrap at 2^32.
pub fn histogram_cpu(keys: &[u32], nbins: usize) -> Result<Vec<u32>> {
    check_nbins(nbins)?;
    let mut counts = vec![0u32; nbins];
    for &k in keys {
        if let Some(c) = counts.get_mut(k as usize) {
            *c = c.wrapping_add(1);
        }
    }
    Ok(counts)
}

/// The peer mask of every element as the kernels compute it: elements
/// `32w .. 32w + 31` form warp `w`; an element with a key `< nbins` gets
/// the mask of the lanes of its warp that hold its key (for
/// [`PeerMethod::Runs`], only the lanes of its run of equal neighbouring
/// keys); an element with an out-of-range key gets 0.
pub fn peer_masks_cpu(keys: &[u32], nbins: usize, method: PeerMethod) -> Vec<u32> {
    let mut out = vec![0u32; keys.len()];
    for (w, warp) in keys.chunks(32).enumerate() {
        let valid = |l: usize| (warp[l] as usize) < nbins;
        for l in 0..warp.len() {
            if !valid(l) {
                continue;
            }
            let mut mask = 0u32;
            match method {
                PeerMethod::Ballot | PeerMethod::Match => {
                    for m in 0..warp.len() {
                        if warp[m] == warp[l] {
                            mask |= 1 << m;
                        }
                    }
                }
                PeerMethod::Runs => {
                    let mut lo = l;
                    while lo > 0 && warp[lo - 1] == warp[l] {
                        lo -= 1;
                    }
                    let mut hi = l + 1;
                    while hi < warp.len() && warp[hi] == warp[l] {
                        hi += 1;
                    }
                    for m in lo..hi {
                        mask |= 1 << m;
                    }
                }
            }
            out[32 * w + l] = mask;
        }
    }
    out
}

impl CpuPrims {
    /// [`reduce_by_key_dense_cpu`]: `bins[k] = Σ values[i]` over `keys[i] ==
    /// k`; keys `>= nbins` are ignored.
    pub fn reduce_by_key_dense<V: AtomicValue>(&self, keys: &[u32], values: &[V], nbins: usize) -> Result<Vec<V>> {
        reduce_by_key_dense_cpu(keys, values, nbins)
    }

    /// [`histogram_cpu`]: how many keys equal each of `0..nbins`; keys
    /// `>= nbins` are ignored.
    pub fn histogram(&self, keys: &[u32], nbins: usize) -> Result<Vec<u32>> {
        histogram_cpu(keys, nbins)
    }
}

/// A bin that differs from the reference by more than the tolerance.
#[derive(Clone, Debug, PartialEq)]
pub struct Mismatch {
    /// The bin.
    pub bin: usize,
    /// The component of the bin's value.
    pub component: usize,
    /// What the checked result holds.
    pub got: f64,
    /// The reference sum.
    pub want: f64,
    /// The largest difference allowed (0 for integers).
    pub tolerance: f64,
    /// Elements in the bin.
    pub count: u64,
    /// Bins that differ, this one included.
    pub bad_bins: usize,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "bin {} component {}: {} instead of {} (tolerance {:e}, {} elements; {} bins differ)",
            self.bin, self.component, self.got, self.want, self.tolerance, self.count, self.bad_bins
        )
    }
}

impl std::error::Error for Mismatch {}

/// The CPU's sums of a reduction by key, with what a correct result in any
/// order of additions may differ by.
///
/// Integers must match exactly. For floats, a sum of `m` terms computed in
/// any order is within `(m − 1)·u·Σ|x|` of the exact sum (u = ε/2, the unit
/// roundoff), so two such sums are within `(m − 1)·ε·Σ|x|` of each other;
/// the check allows `m·ε·Σ|x|` per bin and component (for ~10 values of one
/// sign, about 10 ε relative), plus `m` times the smallest normal number
/// because the GPU's `f32` atomics flush subnormals to zero.
#[derive(Clone, Debug)]
pub struct Reference<V> {
    sums: Vec<V>,
    counts: Vec<u64>,
    tolerance: Vec<f64>,
}

impl<V: AtomicValue> Reference<V> {
    /// The reference for `keys`, `values` into `nbins` bins (keys `>=
    /// nbins` ignored).
    pub fn new(keys: &[u32], values: &[V], nbins: usize) -> Result<Self> {
        let sums = reduce_by_key_dense_cpu(keys, values, nbins)?;
        let mut counts = vec![0u64; nbins];
        let float = <V::Scalar as Element>::FLOAT;
        let mut magnitude = vec![0.0f64; if float { nbins * V::WIDTH } else { 0 }];
        for (&k, v) in keys.iter().zip(values) {
            let k = k as usize;
            if k < nbins {
                counts[k] += 1;
                if float {
                    for c in 0..V::WIDTH {
                        magnitude[k * V::WIDTH + c] += v.component(c).to_f64().abs();
                    }
                }
            }
        }
        let (eps, tiny) = (V::Scalar::EPSILON, V::Scalar::MIN_NORMAL);
        let tolerance = magnitude
            .iter()
            .enumerate()
            .map(|(j, &m)| {
                let count = counts[j / V::WIDTH] as f64;
                count * (eps * m + tiny)
            })
            .collect();
        Ok(Reference { sums, counts, tolerance })
    }

    /// The reference sums.
    pub fn sums(&self) -> &[V] {
        &self.sums
    }

    /// Elements per bin.
    pub fn counts(&self) -> &[u64] {
        &self.counts
    }

    /// Whether `got` agrees with the reference (see [`Reference`]); the
    /// first differing bin otherwise.
    pub fn check(&self, got: &[V]) -> std::result::Result<(), Mismatch> {
        if got.len() != self.sums.len() {
            return Err(Mismatch {
                bin: got.len().min(self.sums.len()),
                component: 0,
                got: got.len() as f64,
                want: self.sums.len() as f64,
                tolerance: 0.0,
                count: 0,
                bad_bins: got.len().abs_diff(self.sums.len()),
            });
        }
        let float = <V::Scalar as Element>::FLOAT;
        let mut first: Option<Mismatch> = None;
        let mut bad_bins = 0;
        for (bin, (g, w)) in got.iter().zip(&self.sums).enumerate() {
            for c in 0..V::WIDTH {
                let (gc, wc) = (g.component(c), w.component(c));
                let tolerance = if float { self.tolerance[bin * V::WIDTH + c] } else { 0.0 };
                let ok = if float {
                    let (x, y) = (gc.to_f64(), wc.to_f64());
                    x == y || (x.is_nan() && y.is_nan()) || (x - y).abs() <= tolerance
                } else {
                    gc == wc
                };
                if !ok {
                    bad_bins += 1;
                    if first.is_none() {
                        first = Some(Mismatch {
                            bin,
                            component: c,
                            got: gc.to_f64(),
                            want: wc.to_f64(),
                            tolerance,
                            count: self.counts[bin],
                            bad_bins: 0,
                        });
                    }
                    break;
                }
            }
        }
        match first {
            None => Ok(()),
            Some(m) => Err(Mismatch { bad_bins, ..m }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs(n: usize, nbins: usize, order: KeyOrder) -> AutoInputs {
        AutoInputs { n, nbins, value_bytes: 4, order, sm_count: 132, max_shared_bytes: 227 * 1024 }
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
            assert_eq!(AtomicStrategy::from_name(s.name()), Some(s));
        }
        for o in [KeyOrder::Unknown, KeyOrder::Sorted, KeyOrder::PartiallySorted, KeyOrder::Random] {
            assert_eq!(KeyOrder::from_name(o.name()), Some(o));
        }
        assert_eq!(<Vector<f64, 3>>::type_name(), "f64x3");
        assert_eq!(u64::type_name(), "u64");
    }
}
