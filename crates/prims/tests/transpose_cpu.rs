//! The CPU transpose: against the definition, and its algebra (transposing
//! twice is the identity, in place equals out of place, a batch is its
//! matrices one by one).

use proptest::prelude::*;
use warpmc_prims::{Bytes16, CpuPrims, MatrixShape, Pod, Primitives, as_bytes};
use warpmc_testkit::pseudo_random;

fn by_definition<T: Pod>(src: &[T], rows: usize, cols: usize) -> Vec<T> {
    let mut out = vec![T::default(); src.len()];
    for r in 0..rows {
        for c in 0..cols {
            out[c * rows + r] = src[r * cols + c];
        }
    }
    out
}

fn check<T: Pod>(batch: usize, rows: usize, cols: usize, seed: u64) {
    let shape = MatrixShape::new(rows, cols).batched(batch);
    let x: Vec<T> = pseudo_random(batch * rows * cols, seed);
    let t = CpuPrims.transpose(&x, shape).unwrap();
    let mat = rows * cols;
    for b in 0..batch {
        let want = by_definition(&x[b * mat..(b + 1) * mat], rows, cols);
        let name = std::any::type_name::<T>();
        assert!(as_bytes(&t[b * mat..(b + 1) * mat]) == as_bytes(&want), "{name} {rows} x {cols}");
    }
    let back = CpuPrims.transpose(&t, shape.transposed()).unwrap();
    assert!(as_bytes(&back) == as_bytes(&x));
    if rows == cols {
        let mut y = x.clone();
        CpuPrims.transpose_in_place(&mut y, shape).unwrap();
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
#[cfg(feature = "cuda")]
unsafe impl warpmc_gpu::DeviceRepr for Rgb {}
// SAFETY: as above.
#[cfg(feature = "cuda")]
unsafe impl warpmc_gpu::ValidAsZeroBits for Rgb {}
// SAFETY: as above.
unsafe impl Pod for Rgb {}

#[test]
fn bad_arguments_are_errors_not_panics() {
    let m = |rows, cols| MatrixShape::new(rows, cols);
    assert!(CpuPrims.transpose(&vec![0u8; 10], m(3, 3)).is_err());
    assert!(CpuPrims.transpose(&vec![0u8; 10], m(usize::MAX, 2)).is_err());
    assert!(CpuPrims.transpose(&vec![0u8; 12], m(3, 2).batched(2)).is_ok());
    assert!(CpuPrims.transpose_in_place(&mut vec![0u8; 6], m(1, 2)).is_err());
    assert!(CpuPrims.transpose_in_place(&mut vec![0u8; 6], m(2, 3)).is_err());
    let e = CpuPrims.transpose(&vec![Rgb::default(); 4], m(2, 2)).unwrap_err();
    assert!(e.to_string().contains("1, 2, 4, 8 or 16 bytes"), "{e}");
    assert!(CpuPrims.transpose::<u32>(&vec![], m(0, 9)).unwrap().is_empty());
    assert!(CpuPrims.transpose::<u32>(&vec![], m(9, 0)).unwrap().is_empty());
    // An empty batch of matrices whose size overflows: nothing to move.
    assert!(CpuPrims.transpose::<u32>(&vec![], m(1 << 40, 1 << 40).batched(0)).unwrap().is_empty());
    assert!(CpuPrims.transpose_in_place::<u32>(&mut vec![], m(1 << 40, 1 << 40).batched(0)).is_ok());
}
