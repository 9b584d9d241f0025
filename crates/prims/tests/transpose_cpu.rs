//! The CPU transpose: against the definition, and its algebra (transposing
//! twice is the identity, in place equals out of place, a batch is its
//! matrices one by one).

use proptest::prelude::*;
use warpmc_prims::transpose::{Transposable, as_bytes, pseudo_random};
use warpmc_prims::{Bytes16, CpuPrims, Transpose};

fn by_definition<T: Transposable>(src: &[T], rows: usize, cols: usize) -> Vec<T> {
    let mut out = vec![T::default(); src.len()];
    for r in 0..rows {
        for c in 0..cols {
            out[c * rows + r] = src[r * cols + c];
        }
    }
    out
}

fn check<T: Transposable>(batch: usize, rows: usize, cols: usize, seed: u64) {
    let x: Vec<T> = pseudo_random(batch * rows * cols, seed);
    let t = CpuPrims.transpose_batched(&x, batch, rows, cols).unwrap();
    let mat = rows * cols;
    for b in 0..batch {
        let want = by_definition(&x[b * mat..(b + 1) * mat], rows, cols);
        assert!(as_bytes(&t[b * mat..(b + 1) * mat]) == as_bytes(&want), "{} {rows} x {cols}", T::NAME);
    }
    let back = CpuPrims.transpose_batched(&t, batch, cols, rows).unwrap();
    assert!(as_bytes(&back) == as_bytes(&x));
    if rows == cols {
        let mut y = x.clone();
        CpuPrims.transpose_in_place(&mut y, batch, rows).unwrap();
        assert!(as_bytes(&y) == as_bytes(&t));
    }
}

proptest! {
    #[test]
    fn matches_the_definition_and_twice_is_identity(
        batch in 1usize..4, rows in 1usize..150, cols in 1usize..150, seed: u64,
    ) {
        check::<u8>(batch, rows, cols, seed);
        check::<f64>(batch, rows, cols, seed);
    }

    #[test]
    fn square_in_place_equals_out_of_place(batch in 1usize..3, n in 1usize..200, seed: u64) {
        check::<u16>(batch, n, n, seed);
        check::<Bytes16>(batch, n, n, seed);
    }
}

#[test]
fn large_and_awkward_shapes() {
    for (rows, cols) in [(1, 1), (1, 5000), (5000, 1), (33, 31), (4097, 3), (700, 1300), (513, 513)] {
        check::<f32>(1, rows, cols, 3);
        check::<u8>(2, rows, cols, 4);
    }
}

/// A 3-byte element: not a size the transpose moves.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
struct Rgb([u8; 3]);
// SAFETY: three bytes, no padding, every bit pattern valid.
unsafe impl warpmc_gpu::DeviceRepr for Rgb {}
// SAFETY: as above.
unsafe impl warpmc_gpu::ValidAsZeroBits for Rgb {}
// SAFETY: as above.
unsafe impl Transposable for Rgb {
    const NAME: &'static str = "rgb";
}

#[test]
fn bad_arguments_are_errors_not_panics() {
    assert!(CpuPrims.transpose(&vec![0u8; 10], 3, 3).is_err());
    assert!(CpuPrims.transpose(&vec![0u8; 10], usize::MAX, 2).is_err());
    assert!(CpuPrims.transpose_in_place(&mut vec![0u8; 6], 1, 2).is_err());
    let e = CpuPrims.transpose(&vec![Rgb::default(); 4], 2, 2).unwrap_err();
    assert!(e.to_string().contains("1, 2, 4, 8 or 16 bytes"), "{e}");
    assert!(CpuPrims.transpose::<u32>(&vec![], 0, 9).unwrap().is_empty());
    assert!(CpuPrims.transpose::<u32>(&vec![], 9, 0).unwrap().is_empty());
}
