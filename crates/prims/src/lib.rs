//! Warp-, block- and device-level primitives for CUDA, with CPU versions
//! that give the same answers.
//!
//! Three layers:
//!
//! - **Warp level** — CUDA device functions in [`kernels::WARP_CUH`]
//!   (`#include "warp.cuh"` in a kernel built with [`kernels::with_warp_header`]):
//!   broadcast (also from the last lane whose predicate holds), reduce,
//!   inclusive and exclusive scans (intrinsic and predicate-based), bitonic
//!   sort of 32 keys or key–value pairs, register transposes between arrays
//!   of structures and structures of arrays, ballot-based compaction. They
//!   are templated on the element type; 64-bit types travel as two 32-bit
//!   shuffles. The aggregated atomics of [`atomics`] are in
//!   [`atomics::ATOMICS_CUH`].
//! - **Device level** — the [`Primitives`] trait, one shape for every
//!   operation: buffers of the backend in, a buffer of the backend out (or
//!   sorted in place), options last. Reduce, inclusive and exclusive scan,
//!   segmented reduce, radix sort (keys or key–value pairs), compaction,
//!   matrix transpose (any [`MatrixShape`], batched or in place) and
//!   reduction by key into bins (histograms). [`CpuPrims`] runs them on
//!   `Vec`s (rayon), [`CudaPrims`] on device buffers; [`CudaPrims`] adds
//!   variants that write into existing buffers, reuse sort scratch or pick
//!   a transpose kernel.
//! - **Elements** — every buffer holds [`Pod`] elements (plain bits);
//!   arithmetic needs an [`Element`], sorting a [`SortKey`], reduction by
//!   key an [`atomics::AtomicValue`].
//!
//! The `cuda` feature (on by default) brings [`CudaPrims`], the kernels and
//! the headers; without it the crate is the CPU backend alone, with no
//! CUDA library in its dependency tree.
//!
//! # Examples
//!
//! The same code runs on either backend:
//!
//! ```
//! use warpmc_prims::{CpuPrims, MatrixShape, Op, Primitives};
//!
//! fn prefix_sums<P: Primitives>(p: &P, xs: &[u32]) -> warpmc_prims::Result<Vec<u32>> {
//!     let buf = p.upload(xs)?;
//!     let out = p.inclusive_scan(&buf, Op::Sum)?;
//!     p.download(&out)
//! }
//! assert_eq!(prefix_sums(&CpuPrims, &[1, 2, 3, 4]).unwrap(), vec![1, 3, 6, 10]);
//!
//! fn transposed<P: Primitives>(p: &P, m: &[u16], shape: MatrixShape) -> warpmc_prims::Result<Vec<u16>> {
//!     let t = p.transpose(&p.upload(m)?, shape)?;
//!     p.download(&t)
//! }
//! let m = [1u16, 2, 3, 4, 5, 6]; // 2 x 3
//! assert_eq!(transposed(&CpuPrims, &m, MatrixShape::new(2, 3)).unwrap(), vec![1, 4, 2, 5, 3, 6]);
//! ```

#![deny(missing_docs)]
// The documentation is written for the full crate; without the `cuda`
// feature its links to the CUDA items have nothing to point at.
#![cfg_attr(not(feature = "cuda"), allow(rustdoc::broken_intra_doc_links))]

pub mod atomics;
pub mod cpu;
#[cfg(feature = "cuda")]
pub mod cuda;
pub mod element;
pub mod error;
#[cfg(feature = "cuda")]
pub mod kernels;
pub mod transpose;

pub use atomics::AtomicsConfig;
pub use cpu::CpuPrims;
#[cfg(feature = "cuda")]
pub use cuda::{CudaPrims, SortScratch};
pub use element::{
    DeviceCopy, Element, Op, Pod, Predicate, SortKey, as_bytes, as_bytes_mut, from_bytes, from_bytes_mut,
};
pub use error::{PrimsError, Result};
pub use transpose::{Bytes16, MatrixShape, TransposeKernel};

use atomics::AtomicValue;

/// Device-level primitives over the buffers of one backend.
///
/// Every operation takes the backend's buffers by reference and returns a
/// new buffer of the backend (the sorts and the in-place transpose change
/// their buffer instead); options come last. Results are the same on every
/// backend, bit for bit, except floating-point sums, whose rounding depends
/// on the order of the additions: the CPU backend is deterministic whatever
/// the thread count; on the GPU a reduction is repeatable too, but the
/// grouping of a scan's partial sums can change from run to run (which
/// tiles have published their prefixes when a tile looks back is a matter
/// of timing), and reductions by key add in an order that depends on the
/// strategy and on timing.
pub trait Primitives {
    /// The backend's buffer of `T` (`Vec<T>` on the CPU, a device buffer on
    /// a GPU).
    type Buffer<T: Pod>;

    /// A buffer holding a copy of `host`.
    fn upload<T: Pod>(&self, host: &[T]) -> Result<Self::Buffer<T>>;
    /// The contents of `buf`.
    fn download<T: Pod>(&self, buf: &Self::Buffer<T>) -> Result<Vec<T>>;

    /// `x[0] op x[1] op …`; the identity of `op` for an empty input.
    fn reduce<T: Element>(&self, x: &Self::Buffer<T>, op: Op) -> Result<T>;
    /// `out[i] = x[0] op … op x[i]`, starting from the identity of `op`
    /// (so a sum over negative zeros only is +0).
    fn inclusive_scan<T: Element>(&self, x: &Self::Buffer<T>, op: Op) -> Result<Self::Buffer<T>>;
    /// `out[0]` = identity, `out[i] = x[0] op … op x[i-1]`.
    fn exclusive_scan<T: Element>(&self, x: &Self::Buffer<T>, op: Op) -> Result<Self::Buffer<T>>;
    /// One reduction per segment: segment `s` is `x[offsets[s]..offsets[s+1]]`
    /// (`offsets` non-decreasing, its last entry at most `x.len()`); an empty
    /// segment gives the identity.
    fn segmented_reduce<T: Element>(
        &self,
        x: &Self::Buffer<T>,
        offsets: &Self::Buffer<u32>,
        op: Op,
    ) -> Result<Self::Buffer<T>>;
    /// Sorts `keys` in place into ascending order (see [`SortKey`]).
    fn sort_keys<K: SortKey>(&self, keys: &mut Self::Buffer<K>) -> Result<()>;
    /// Sorts `keys` in place and applies the same permutation to `values`;
    /// stable (equal keys keep their values' order).
    fn sort_pairs<K: SortKey, V: Element>(
        &self,
        keys: &mut Self::Buffer<K>,
        values: &mut Self::Buffer<V>,
    ) -> Result<()>;
    /// The elements of `x` for which `pred` holds, in their order.
    fn select_if<T: Element>(&self, x: &Self::Buffer<T>, pred: Predicate<T>) -> Result<Self::Buffer<T>>;

    /// The transposes of the matrices of `shape` stored back to back in
    /// `src`, back to back in the same order (each `cols × rows`). Elements
    /// of 1, 2, 4, 8 or 16 bytes; see [`transpose`].
    fn transpose<T: Pod>(&self, src: &Self::Buffer<T>, shape: MatrixShape) -> Result<Self::Buffer<T>>;
    /// Transposes the square matrices of `shape` in `data` in place.
    fn transpose_in_place<T: Pod>(&self, data: &mut Self::Buffer<T>, shape: MatrixShape) -> Result<()>;

    /// `bins[k] = Σ values[i]` over the elements with `keys[i] == k`, for `k`
    /// in `0..nbins`; keys `>= nbins` are ignored. `config`: an
    /// [`atomics::AtomicStrategy`] or an [`AtomicsConfig`] (the CPU adds in
    /// input order whatever it says); see [`atomics`].
    fn reduce_by_key_dense<V: AtomicValue>(
        &self,
        keys: &Self::Buffer<u32>,
        values: &Self::Buffer<V>,
        nbins: usize,
        config: impl Into<AtomicsConfig>,
    ) -> Result<Self::Buffer<V>>;
    /// How many keys equal each of `0..nbins` (`u32` counts, wrapping at
    /// 2^32); keys `>= nbins` are ignored.
    fn histogram(
        &self,
        keys: &Self::Buffer<u32>,
        nbins: usize,
        config: impl Into<AtomicsConfig>,
    ) -> Result<Self::Buffer<u32>>;
}
