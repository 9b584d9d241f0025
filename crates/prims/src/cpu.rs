//! The CPU backend: the reference every kernel is tested against, and a
//! usable implementation (rayon where the work is large).

use rayon::prelude::*;

use crate::atomics::{AtomicValue, AtomicsConfig};
use crate::element::{Element, Op, Pod, Predicate, SortKey};
use crate::error::{Result, ensure};
use crate::transpose::MatrixShape;
use crate::{Primitives, atomics, transpose};

/// Primitives on the CPU over `Vec`s.
///
/// Floating-point reductions add fixed chunks of [`CpuPrims::CHUNK`]
/// elements pairwise (halves added recursively down to runs of 16 added in
/// order, as numpy's sums are: the rounding error
/// grows with the logarithm of the length, not with the length) and then
/// the chunk results the same way, so the result does not depend on the
/// number of threads. Reductions by key add in input
/// order, whatever strategy the configuration names. The transpose is
/// cache-blocked and parallel.
#[derive(Clone, Copy, Debug, Default)]
pub struct CpuPrims;

impl CpuPrims {
    /// Elements per chunk of a parallel reduction.
    pub const CHUNK: usize = 1 << 16;

    /// [`Primitives::reduce`] over a slice, which need not be a buffer (a
    /// numpy array's memory, say): no copy is made.
    pub fn reduce_slice<T: Element>(x: &[T], op: Op) -> T {
        let partial: Vec<T> = x.par_chunks(Self::CHUNK).map(|c| fold_pairwise(c, op)).collect();
        fold_pairwise(&partial, op)
    }

    /// The inclusive or exclusive scan of `x` written into `out` (the same
    /// length), as [`Primitives::inclusive_scan`] and
    /// [`Primitives::exclusive_scan`] compute it.
    pub fn scan_into<T: Element>(x: &[T], out: &mut [T], op: Op, inclusive: bool) -> Result<()> {
        ensure(x.len() == out.len(), || format!("scan: {} elements into {} places", x.len(), out.len()))?;
        let mut acc = T::identity(op);
        for (o, &v) in out.iter_mut().zip(x) {
            let before = acc;
            acc = T::combine(op, acc, v);
            *o = if inclusive { acc } else { before };
        }
        Ok(())
    }

    /// [`Primitives::sort_keys`] in place over a slice.
    pub fn sort_keys_slice<K: SortKey>(keys: &mut [K]) {
        keys.par_sort_unstable_by_key(|k| k.radix_bits());
    }

    /// [`Primitives::sort_pairs`] in place over two slices of one length
    /// (stable: equal keys keep their values' order, as the radix sort
    /// does). It holds the pairs in one vector while it sorts them, and the
    /// stable sort a buffer of as many.
    pub fn sort_pairs_slice<K: SortKey, V: Element>(keys: &mut [K], values: &mut [V]) -> Result<()> {
        ensure(keys.len() == values.len(), || format!("sort_pairs: {} keys but {} values", keys.len(), values.len()))?;
        let mut pairs: Vec<(K, V)> = keys.iter().copied().zip(values.iter().copied()).collect();
        pairs.par_sort_by_key(|p| p.0.radix_bits());
        for ((k, v), (key, value)) in pairs.into_iter().zip(keys.iter_mut().zip(values.iter_mut())) {
            *key = k;
            *value = v;
        }
        Ok(())
    }

    /// [`Primitives::transpose`] from one slice into another of the same
    /// length.
    pub fn transpose_slice<T: Pod>(src: &[T], dst: &mut [T], shape: MatrixShape) -> Result<()> {
        transpose::cpu::transpose_into(src, dst, shape)
    }
}

fn fold<T: Element>(xs: &[T], op: Op) -> T {
    xs.iter().fold(T::identity(op), |a, &b| T::combine(op, a, b))
}

/// The longest run [`fold_pairwise`] adds in order.
const PAIRWISE_RUN: usize = 16;

/// `xs` combined pairwise: the two halves' results combined, down to runs
/// of at most [`PAIRWISE_RUN`] combined in order. The same as [`fold`] for
/// integers (whose sums wrap) and for min and max; for floating-point
/// sums, an error of O(log n) roundings instead of O(n).
fn fold_pairwise<T: Element>(xs: &[T], op: Op) -> T {
    if xs.len() <= PAIRWISE_RUN {
        return fold(xs, op);
    }
    let (a, b) = xs.split_at(xs.len() / 2);
    T::combine(op, fold_pairwise(a, op), fold_pairwise(b, op))
}

/// Checks CSR offsets against a length of `n` elements.
pub(crate) fn check_offsets(offsets: &[u32], n: usize) -> Result<()> {
    ensure(!offsets.is_empty(), || "segment offsets need at least one entry (the start of the first segment)".into())?;
    ensure(offsets.windows(2).all(|w| w[0] <= w[1]), || "segment offsets must not decrease".into())?;
    let last = *offsets.last().unwrap_or(&0) as usize;
    ensure(last <= n, || format!("the last segment offset {last} is past the end of the input ({n} elements)"))
}

impl Primitives for CpuPrims {
    type Buffer<T: Pod> = Vec<T>;

    fn upload<T: Pod>(&self, host: &[T]) -> Result<Vec<T>> {
        Ok(host.to_vec())
    }

    fn download<T: Pod>(&self, buf: &Vec<T>) -> Result<Vec<T>> {
        Ok(buf.clone())
    }

    fn reduce<T: Element>(&self, x: &Vec<T>, op: Op) -> Result<T> {
        Ok(Self::reduce_slice(x, op))
    }

    fn inclusive_scan<T: Element>(&self, x: &Vec<T>, op: Op) -> Result<Vec<T>> {
        let mut out = vec![T::default(); x.len()];
        Self::scan_into(x, &mut out, op, true)?;
        Ok(out)
    }

    fn exclusive_scan<T: Element>(&self, x: &Vec<T>, op: Op) -> Result<Vec<T>> {
        let mut out = vec![T::default(); x.len()];
        Self::scan_into(x, &mut out, op, false)?;
        Ok(out)
    }

    fn segmented_reduce<T: Element>(&self, x: &Vec<T>, offsets: &Vec<u32>, op: Op) -> Result<Vec<T>> {
        check_offsets(offsets, x.len())?;
        Ok(offsets.par_windows(2).map(|w| fold_pairwise(&x[w[0] as usize..w[1] as usize], op)).collect())
    }

    fn sort_keys<K: SortKey>(&self, keys: &mut Vec<K>) -> Result<()> {
        Self::sort_keys_slice(keys);
        Ok(())
    }

    fn sort_pairs<K: SortKey, V: Element>(&self, keys: &mut Vec<K>, values: &mut Vec<V>) -> Result<()> {
        Self::sort_pairs_slice(keys, values)
    }

    fn select_if<T: Element>(&self, x: &Vec<T>, pred: Predicate<T>) -> Result<Vec<T>> {
        Ok(x.iter().copied().filter(|&v| pred.keeps(v)).collect())
    }

    fn transpose<T: Pod>(&self, src: &Vec<T>, shape: MatrixShape) -> Result<Vec<T>> {
        let mut dst = vec![T::default(); src.len()];
        Self::transpose_slice(src, &mut dst, shape)?;
        Ok(dst)
    }

    fn transpose_in_place<T: Pod>(&self, data: &mut Vec<T>, shape: MatrixShape) -> Result<()> {
        transpose::cpu::transpose_in_place(data, shape)
    }

    fn reduce_by_key_dense<V: AtomicValue>(
        &self,
        keys: &Vec<u32>,
        values: &Vec<V>,
        nbins: usize,
        _config: impl Into<AtomicsConfig>,
    ) -> Result<Vec<V>> {
        atomics::cpu::reduce_by_key_dense(keys, values, nbins)
    }

    fn histogram(&self, keys: &Vec<u32>, nbins: usize, _config: impl Into<AtomicsConfig>) -> Result<Vec<u32>> {
        atomics::cpu::histogram(keys, nbins)
    }
}
