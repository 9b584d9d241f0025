//! The CPU transpose: cache-blocked, in parallel over blocks of output rows
//! (rayon). It is the reference the GPU kernels are checked against.

use rayon::prelude::*;

use super::{MatrixShape, check_shape, check_square};
use crate::element::Pod;
use crate::error::Result;

/// Side of the square blocks the CPU transposes at a time: about 16 KB of
/// source and 16 KB of destination, so both stay in a core's L1/L2 while
/// one is read along rows and the other written along columns.
fn block_side(elem_bytes: usize) -> usize {
    if elem_bytes <= 4 { 64 } else { 32 }
}

/// Transposes one `rows × cols` matrix `src` into `dst` (`cols × rows`).
fn transpose_one<T: Pod>(src: &[T], dst: &mut [T], rows: usize, cols: usize) {
    if rows == 0 || cols == 0 {
        return;
    }
    let b = block_side(size_of::<T>());
    // Each task owns `b` whole output rows (= `b` input columns) and walks
    // down the input in blocks of `b` rows.
    dst.par_chunks_mut(b * rows).enumerate().for_each(|(blk, out)| {
        let c0 = blk * b;
        let c1 = (c0 + b).min(cols);
        for r0 in (0..rows).step_by(b) {
            let r1 = (r0 + b).min(rows);
            for c in c0..c1 {
                let out_row = &mut out[(c - c0) * rows..(c - c0 + 1) * rows];
                for r in r0..r1 {
                    out_row[r] = src[r * cols + c];
                }
            }
        }
    });
}

/// A raw pointer that may cross threads: the in-place transpose hands each
/// task a disjoint set of elements (see [`transpose_square_in_place`]).
#[derive(Clone, Copy)]
struct SharedMut<T>(*mut T);
// SAFETY: only used for disjoint element sets, one task each.
unsafe impl<T: Send> Send for SharedMut<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for SharedMut<T> {}

/// Transposes the `n × n` matrix `m` in place, in blocks: task `i` swaps
/// block `(i, j)` with block `(j, i)` for every `j ≥ i`, so every pair of
/// mirrored elements belongs to exactly one task.
fn transpose_square_in_place<T: Pod>(m: &mut [T], n: usize) {
    assert_eq!(m.len(), n * n, "checked by the caller");
    let b = block_side(size_of::<T>());
    let blocks = n.div_ceil(b);
    let ptr = SharedMut(m.as_mut_ptr());
    (0..blocks).into_par_iter().for_each(|i| {
        let p = ptr;
        for j in i..blocks {
            for r in i * b..((i + 1) * b).min(n) {
                let c_start = if i == j { r + 1 } else { j * b };
                for c in c_start..((j + 1) * b).min(n) {
                    // SAFETY: r, c < n, so both indices are inside `m`. The
                    // element pair {(r, c), (c, r)} with r in block i and c in
                    // block j >= i (c > r on the diagonal block) is touched by
                    // task i alone, and no two iterations name the same pair.
                    unsafe { std::ptr::swap(p.0.add(r * n + c), p.0.add(c * n + r)) };
                }
            }
        }
    });
}

/// Transposes the matrices of `shape` in `src` into `dst` (slices of the
/// same length).
pub(crate) fn transpose_into<T: Pod>(src: &[T], dst: &mut [T], shape: MatrixShape) -> Result<()> {
    check_shape::<T>(src.len(), shape)?;
    check_shape::<T>(dst.len(), shape)?;
    // Nothing to move (an empty batch may have dimensions whose product
    // overflows).
    if src.is_empty() {
        return Ok(());
    }
    let MatrixShape { rows, cols, .. } = shape;
    let mat = rows * cols;
    dst.par_chunks_mut(mat).zip(src.par_chunks(mat)).for_each(|(d, s)| transpose_one(s, d, rows, cols));
    Ok(())
}

/// Transposes the square matrices of `shape` in `data` in place.
pub(crate) fn transpose_in_place<T: Pod>(data: &mut [T], shape: MatrixShape) -> Result<()> {
    check_square::<T>(data.len(), shape)?;
    if data.is_empty() {
        return Ok(());
    }
    let n = shape.rows;
    data.par_chunks_mut(n * n).for_each(|m| transpose_square_in_place(m, n));
    Ok(())
}
