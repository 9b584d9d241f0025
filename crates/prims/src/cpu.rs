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
/// elements in order and then the chunk results in order, so the result does
/// not depend on the number of threads. Reductions by key add in input
/// order, whatever strategy the configuration names. The transpose is
/// cache-blocked and parallel.
#[derive(Clone, Copy, Debug, Default)]
pub struct CpuPrims;

impl CpuPrims {
    /// Elements per chunk of a parallel reduction.
    pub const CHUNK: usize = 1 << 16;
}

fn fold<T: Element>(xs: &[T], op: Op) -> T {
    xs.iter().fold(T::identity(op), |a, &b| T::combine(op, a, b))
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
        let partial: Vec<T> = x.par_chunks(Self::CHUNK).map(|c| fold(c, op)).collect();
        Ok(fold(&partial, op))
    }

    fn inclusive_scan<T: Element>(&self, x: &Vec<T>, op: Op) -> Result<Vec<T>> {
        let mut acc = T::identity(op);
        Ok(x.iter()
            .map(|&v| {
                acc = T::combine(op, acc, v);
                acc
            })
            .collect())
    }

    fn exclusive_scan<T: Element>(&self, x: &Vec<T>, op: Op) -> Result<Vec<T>> {
        let mut acc = T::identity(op);
        Ok(x.iter()
            .map(|&v| {
                let before = acc;
                acc = T::combine(op, acc, v);
                before
            })
            .collect())
    }

    fn segmented_reduce<T: Element>(&self, x: &Vec<T>, offsets: &Vec<u32>, op: Op) -> Result<Vec<T>> {
        check_offsets(offsets, x.len())?;
        Ok(offsets.par_windows(2).map(|w| fold(&x[w[0] as usize..w[1] as usize], op)).collect())
    }

    fn sort_keys<K: SortKey>(&self, keys: &mut Vec<K>) -> Result<()> {
        keys.par_sort_unstable_by_key(|k| k.radix_bits());
        Ok(())
    }

    fn sort_pairs<K: SortKey, V: Element>(&self, keys: &mut Vec<K>, values: &mut Vec<V>) -> Result<()> {
        ensure(keys.len() == values.len(), || format!("sort_pairs: {} keys but {} values", keys.len(), values.len()))?;
        let mut pairs: Vec<(K, V)> = keys.iter().copied().zip(values.iter().copied()).collect();
        // Stable: equal keys keep their values' order, as the radix sort does.
        pairs.par_sort_by_key(|p| p.0.radix_bits());
        for (i, (k, v)) in pairs.into_iter().enumerate() {
            keys[i] = k;
            values[i] = v;
        }
        Ok(())
    }

    fn select_if<T: Element>(&self, x: &Vec<T>, pred: Predicate<T>) -> Result<Vec<T>> {
        Ok(x.iter().copied().filter(|&v| pred.keeps(v)).collect())
    }

    fn transpose<T: Pod>(&self, src: &Vec<T>, shape: MatrixShape) -> Result<Vec<T>> {
        let mut dst = vec![T::default(); src.len()];
        transpose::cpu::transpose_into(src, &mut dst, shape)?;
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
