//! The CUDA backend's device-level primitives against the CPU backend, for
//! every element type and operator, on random inputs of awkward sizes.
//! Skipped (with a printed reason) where no GPU is usable.

use warpmc_prims::{CpuPrims, CudaPrims, Element, Op, Predicate, Primitives};

/// Lengths around the tile and warp boundaries (tiles are 4096 elements of
/// 4 bytes or 2048 of 8), and one that needs many tiles and a look-back
/// across several windows of 32.
const SIZES: [usize; 11] = [0, 1, 31, 33, 1023, 2047, 2049, 4096, 4097, 100_003, (1 << 20) + 7];

fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Integers in [-1000, 1000) (shifted up for unsigned types); for floats
/// integers in [-8, 8), so that every partial sum of up to 2^20 + 7 of them
/// is below 2^24 in magnitude and exact in f32 whatever the order of the
/// additions: the GPU's tree order and the CPU's sequential order must then
/// agree exactly, and any lost or doubled element shows.
fn random<T: Element>(n: usize, seed: u64) -> Vec<T> {
    let mut s = seed;
    let half = if T::FLOAT { 8 } else { 1000 };
    (0..n)
        .map(|_| {
            let r = (splitmix(&mut s) % (2 * half)) as f64 - half as f64;
            // Unsigned types get the value shifted into range.
            if T::from_f64(-1.0).to_f64() < 0.0 { T::from_f64(r) } else { T::from_f64(r + half as f64) }
        })
        .collect()
}

fn gpu(test: &str) -> Option<CudaPrims> {
    warpmc_testkit::gpu_or_skip(test).map(CudaPrims::new)
}

fn check_reduce_and_scans<T: Element>(p: &CudaPrims) {
    for (k, &n) in SIZES.iter().enumerate() {
        let x = random::<T>(n, 17 + k as u64);
        let dx = p.upload(&x).unwrap();
        for op in Op::ALL {
            let want = CpuPrims.reduce(&x, op).unwrap();
            let got = p.reduce(&dx, op).unwrap();
            assert_eq!(got, want, "{} reduce {op:?} n={n}", T::NAME);
            for inclusive in [true, false] {
                let want = if inclusive { CpuPrims.inclusive_scan(&x, op) } else { CpuPrims.exclusive_scan(&x, op) };
                let want = want.unwrap();
                let out = if inclusive { p.inclusive_scan(&dx, op) } else { p.exclusive_scan(&dx, op) };
                let got = p.download(&out.unwrap()).unwrap();
                assert_eq!(got.len(), n);
                if let Some(i) = (0..n).find(|&i| got[i] != want[i]) {
                    panic!(
                        "{} {} scan {op:?} n={n}: first difference at {i}: {:?} vs {:?}",
                        T::NAME,
                        if inclusive { "inclusive" } else { "exclusive" },
                        got[i],
                        want[i]
                    );
                }
            }
        }
    }
}

#[test]
fn reduce_and_scans_match_the_cpu_for_every_type() {
    let Some(p) = gpu("reduce_and_scans_match_the_cpu_for_every_type") else { return };
    check_reduce_and_scans::<i32>(&p);
    check_reduce_and_scans::<u32>(&p);
    check_reduce_and_scans::<i64>(&p);
    check_reduce_and_scans::<u64>(&p);
    check_reduce_and_scans::<f32>(&p);
    check_reduce_and_scans::<f64>(&p);
}

#[test]
fn integer_scan_is_exact_on_a_large_input() {
    let Some(p) = gpu("integer_scan_is_exact_on_a_large_input") else { return };
    // 2^24 + 5 elements: thousands of tiles, so the look-back crosses many
    // windows; wrapping u32 sums must match exactly.
    let x = random::<u32>((1 << 24) + 5, 99);
    let got = p.download(&p.inclusive_scan(&p.upload(&x).unwrap(), Op::Sum).unwrap()).unwrap();
    assert_eq!(got, CpuPrims.inclusive_scan(&x, Op::Sum).unwrap());
}

fn check_segmented<T: Element>(p: &CudaPrims) {
    for (k, &n) in [0usize, 1, 33, 4097, 100_003].iter().enumerate() {
        let x = random::<T>(n, 5 + k as u64);
        // Segments of random lengths 0..=70, including empty ones, plus one
        // long segment, ending at or before n.
        let mut s = 77 + k as u64;
        let mut offsets = vec![0u32];
        let mut at = 0usize;
        while at < n {
            let len = if splitmix(&mut s) % 50 == 0 { 5000 } else { (splitmix(&mut s) % 71) as usize };
            at = (at + len).min(n);
            offsets.push(at as u32);
        }
        let dx = p.upload(&x).unwrap();
        let doff = p.upload(&offsets).unwrap();
        for op in Op::ALL {
            let want = CpuPrims.segmented_reduce(&x, &offsets, op).unwrap();
            let got = p.download(&p.segmented_reduce(&dx, &doff, op).unwrap()).unwrap();
            assert_eq!(got, want, "{} segmented {op:?} n={n}", T::NAME);
        }
    }
}

#[test]
fn segmented_reduce_matches_the_cpu() {
    let Some(p) = gpu("segmented_reduce_matches_the_cpu") else { return };
    check_segmented::<i32>(&p);
    check_segmented::<u32>(&p);
    check_segmented::<i64>(&p);
    check_segmented::<u64>(&p);
    check_segmented::<f32>(&p);
    check_segmented::<f64>(&p);
}

#[test]
fn bad_segment_offsets_are_an_error_not_a_crash() {
    let Some(p) = gpu("bad_segment_offsets_are_an_error_not_a_crash") else { return };
    let x = p.upload(&[1u32, 2, 3]).unwrap();
    for offsets in [vec![0u32, 4], vec![2, 1], vec![]] {
        let e = p.segmented_reduce(&x, &p.upload(&offsets).unwrap(), Op::Sum).unwrap_err();
        assert!(!e.to_string().is_empty());
    }
}

fn check_select<T: Element>(p: &CudaPrims) {
    for (k, &n) in SIZES.iter().enumerate() {
        let x = random::<T>(n, 31 + k as u64);
        let dx = p.upload(&x).unwrap();
        let signed = T::from_f64(-1.0).to_f64() < 0.0;
        let mid = T::from_f64(match (signed, T::FLOAT) {
            (true, _) => 0.0,
            (false, false) => 1000.0,
            (false, true) => 8.0,
        });
        for pred in [Predicate::NonZero, Predicate::GreaterThan(mid), Predicate::LessThan(mid)] {
            let want = CpuPrims.select_if(&x, pred).unwrap();
            let got = p.download(&p.select_if(&dx, pred).unwrap()).unwrap();
            assert_eq!(got, want, "{} select {pred:?} n={n}", T::NAME);
        }
    }
    // Nothing kept, everything kept.
    let zeros = vec![T::default(); 10_000];
    assert!(p.download(&p.select_if(&p.upload(&zeros).unwrap(), Predicate::NonZero).unwrap()).unwrap().is_empty());
    let ones = vec![T::from_f64(1.0); 10_001];
    assert_eq!(p.download(&p.select_if(&p.upload(&ones).unwrap(), Predicate::NonZero).unwrap()).unwrap(), ones);
}

#[test]
fn select_if_matches_the_cpu_for_every_type() {
    let Some(p) = gpu("select_if_matches_the_cpu_for_every_type") else { return };
    check_select::<i32>(&p);
    check_select::<u32>(&p);
    check_select::<i64>(&p);
    check_select::<u64>(&p);
    check_select::<f32>(&p);
    check_select::<f64>(&p);
}
