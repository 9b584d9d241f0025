//! Every GPU transpose kernel against the CPU transpose, for every element
//! size, on awkward shapes, batches, and in place. Skipped (with a printed
//! reason) where no GPU is usable.

use warpmc_prims::{Bytes16, CpuPrims, CudaPrims, MatrixShape, Pod, Primitives, TransposeKernel, as_bytes};
use warpmc_testkit::pseudo_random;

/// (batch, rows, cols): degenerate, skinny, around the 32-element tile and
/// the 128-element tile of the 1-byte best kernel, rows that start inside
/// a 4-byte word, and batches whose matrices start inside a word.
const SHAPES: [(usize, usize, usize); 16] = [
    (1, 1, 1),
    (1, 1, 1000),
    (1, 1000, 1),
    (1, 33, 31),
    (1, 31, 33),
    (1, 4097, 3),
    (1, 3, 4097),
    (1, 32, 32),
    (1, 127, 129),
    (1, 128, 128),
    (1, 256, 384),
    (1, 1025, 1023),
    (1, 517, 2050),
    (5, 33, 31),
    (3, 65, 130),
    (7, 1, 5),
];

fn gpu(test: &str) -> Option<CudaPrims> {
    warpmc_testkit::gpu_or_skip(test).map(CudaPrims::new)
}

fn kernels() -> Vec<TransposeKernel> {
    let mut k = TransposeKernel::ALL.to_vec();
    k.extend([4, 8, 16].map(|w| TransposeKernel::Best(Some(w))));
    k
}

fn check_type<T: Pod>(p: &CudaPrims) {
    let e = size_of::<T>();
    let name = std::any::type_name::<T>();
    let mut shapes = SHAPES.to_vec();
    // Shapes around the tiles of the wider words (64, 128 elements) and
    // whose rows shift by every offset within a 32-byte sector; then rows
    // that fill whole sectors with columns that do not (the sector kernel
    // without a halo), and tiles of the sector kernels (256 rows for bytes);
    // then matrices tall enough for the sector kernels' interior tiles (a
    // tile with its halo inside the matrix), in batches, one narrower than
    // a column tile.
    shapes.extend([(1, 64, 128), (1, 132, 36), (2, 8, 260), (1, 4100, 4), (1, 200, 257), (3, 129, 67)]);
    shapes.extend([(1, 64, 97), (2, 96, 45), (1, 257, 130), (2, 300, 131)]);
    shapes.extend([(2, 600, 333), (1, 1100, 70), (3, 530, 129), (1, 1024, 520)]);
    for (s, &(batch, rows, cols)) in shapes.iter().enumerate() {
        let shape = MatrixShape::new(rows, cols).batched(batch);
        let host: Vec<T> = pseudo_random(batch * rows * cols, 100 + s as u64);
        let want = CpuPrims.transpose(&host, shape).unwrap();
        let src = p.upload(&host).unwrap();
        for k in kernels() {
            if !k.supports(e, shape) {
                // The kernel must refuse, not run.
                let mut dst = p.gpu().alloc_zeros::<T>(host.len()).unwrap();
                assert!(p.transpose_into(&src, &mut dst, shape, k).is_err());
                continue;
            }
            // A sentinel fill, so that an element the kernel skips shows.
            let mut dst = p.upload(&pseudo_random::<T>(host.len(), 999)).unwrap();
            p.transpose_into(&src, &mut dst, shape, k).unwrap();
            let got = p.download(&dst).unwrap();
            let expect = if k.transposes() { &want } else { &host };
            assert!(as_bytes(&got) == as_bytes(expect), "{k:?} {name} {shape}: differs from the CPU");
        }
        // The trait's form.
        let got = p.download(&p.transpose(&src, shape).unwrap()).unwrap();
        assert!(as_bytes(&got) == as_bytes(&want), "transpose {name} {shape}");
    }
}

#[test]
fn every_kernel_matches_the_cpu_for_every_size() {
    let Some(p) = gpu("every_kernel_matches_the_cpu_for_every_size") else { return };
    check_type::<u8>(&p);
    check_type::<u16>(&p);
    check_type::<f32>(&p);
    check_type::<f64>(&p);
    check_type::<Bytes16>(&p);
    check_type::<i8>(&p);
}

fn check_in_place<T: Pod>(p: &CudaPrims) {
    for (s, &(batch, n)) in
        [(1, 1), (1, 2), (1, 31), (1, 32), (1, 33), (1, 100), (1, 257), (3, 65), (4, 1)].iter().enumerate()
    {
        let shape = MatrixShape::square(n).batched(batch);
        let host: Vec<T> = pseudo_random(batch * n * n, 300 + s as u64);
        let want = CpuPrims.transpose(&host, shape).unwrap();
        let mut data = p.upload(&host).unwrap();
        p.transpose_in_place(&mut data, shape).unwrap();
        let got = p.download(&data).unwrap();
        assert!(as_bytes(&got) == as_bytes(&want), "in place {} {shape}", std::any::type_name::<T>());
    }
}

#[test]
fn in_place_matches_the_cpu() {
    let Some(p) = gpu("in_place_matches_the_cpu") else { return };
    check_in_place::<u8>(&p);
    check_in_place::<u16>(&p);
    check_in_place::<f32>(&p);
    check_in_place::<f64>(&p);
    check_in_place::<Bytes16>(&p);
}

#[test]
fn large_matrices_match_the_cpu() {
    let Some(p) = gpu("large_matrices_match_the_cpu") else { return };
    // Beyond one grid row of tiles in every direction, with the default
    // (fastest) kernel, at sizes the benchmark uses and one off them.
    for (rows, cols) in [(4096, 4096), (4095, 4097), (3000, 5001)] {
        let shape = MatrixShape::new(rows, cols);
        let host: Vec<u8> = pseudo_random(rows * cols, 7);
        let want = CpuPrims.transpose(&host, shape).unwrap();
        let got = p.download(&p.transpose(&p.upload(&host).unwrap(), shape).unwrap()).unwrap();
        assert!(got == want, "u8 {shape}");
        let host: Vec<f32> = pseudo_random(rows * cols, 8);
        let want = CpuPrims.transpose(&host, shape).unwrap();
        let got = p.download(&p.transpose(&p.upload(&host).unwrap(), shape).unwrap()).unwrap();
        assert!(as_bytes(&got) == as_bytes(&want), "f32 {shape}");
    }
}

#[test]
fn bad_shapes_are_errors() {
    let Some(p) = gpu("bad_shapes_are_errors") else { return };
    let src = p.upload(&[0u32; 12]).unwrap();
    assert!(p.transpose(&src, MatrixShape::new(5, 3)).is_err());
    assert!(p.transpose(&src, MatrixShape::square(3).batched(2)).is_err());
    let mut data = p.upload(&[0u32; 12]).unwrap();
    assert!(p.transpose_in_place(&mut data, MatrixShape::square(3)).is_err());
    assert!(p.transpose_in_place(&mut data, MatrixShape::new(3, 4)).is_err());
    let empty = p.upload::<u32>(&[]).unwrap();
    assert_eq!(p.transpose(&empty, MatrixShape::new(0, 7)).unwrap().len(), 0);
}
