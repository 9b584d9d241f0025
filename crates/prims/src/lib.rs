//! Warp-, block- and device-level primitives for CUDA, with CPU reference
//! versions that give the same answers.
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
//!   shuffles.
//! - **Device level** — the [`Primitives`] trait: reduce, inclusive and
//!   exclusive scan, segmented reduce, radix sort (keys or key–value
//!   pairs) and compaction, over buffers of the backend: [`CpuPrims`] on
//!   `Vec`s (rayon), [`CudaPrims`] on device buffers.
//! - **Matrix transpose** — [`transpose`]: the kernels of NVIDIA's
//!   transpose study and a faster one, any shape, batched or in place,
//!   with a CPU version ([`Transpose`]).
//!
//! # Examples
//!
//! The same code runs on either backend:
//!
//! ```
//! use warpmc_prims::{CpuPrims, Op, Primitives};
//!
//! fn prefix_sums<P: Primitives>(p: &P, xs: &[u32]) -> Vec<u32> {
//!     let buf = p.upload(xs).unwrap();
//!     let out = p.inclusive_scan(&buf, Op::Sum).unwrap();
//!     p.download(&out).unwrap()
//! }
//! assert_eq!(prefix_sums(&CpuPrims, &[1, 2, 3, 4]), vec![1, 3, 6, 10]);
//! ```

#![deny(missing_docs)]

pub mod atomics;
pub mod cpu;
pub mod cuda;
pub mod element;
pub mod error;
pub mod kernels;
pub mod transpose;

pub use cpu::CpuPrims;
pub use cuda::{CudaPrims, SortScratch};
pub use element::{Element, Op, Predicate, SortKey};
pub use error::{PrimsError, Result};
pub use transpose::{Bytes16, Transposable, Transpose, TransposeKernel};

/// Device-level primitives over the buffers of one backend.
///
/// Every operation gives the same result on every backend, bit for bit,
/// except floating-point sums, whose rounding depends on the order of the
/// additions: the CPU backend is deterministic whatever the thread count;
/// on the GPU a reduction is repeatable too, but the grouping of a scan's
/// partial sums can change from run to run (which tiles have published their prefixes when
/// a tile looks back is a matter of timing), so the last bits may differ.
pub trait Primitives {
    /// The backend's buffer of `T` (`Vec<T>` on the CPU, a device buffer on
    /// a GPU).
    type Buffer<T: Element>;

    /// A buffer holding a copy of `host`.
    fn upload<T: Element>(&self, host: &[T]) -> Result<Self::Buffer<T>>;
    /// The contents of `buf`.
    fn download<T: Element>(&self, buf: &Self::Buffer<T>) -> Result<Vec<T>>;

    /// `x[0] op x[1] op …`; the identity of `op` for an empty input.
    fn reduce<T: Element>(&self, x: &Self::Buffer<T>, op: Op) -> Result<T>;
    /// `out[i] = x[0] op … op x[i]`.
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
}
