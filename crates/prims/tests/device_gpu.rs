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
            let len = if splitmix(&mut s).is_multiple_of(50) { 5000 } else { (splitmix(&mut s) % 71) as usize };
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

/// `n` values drawn from `specials` (zeros of both signs, infinities, NaN,
/// subnormals, the extremes).
fn specials<T: Copy>(specials: &[T], n: usize, seed: u64) -> Vec<T> {
    let mut s = seed;
    (0..n).map(|_| specials[(splitmix(&mut s) % specials.len() as u64) as usize]).collect()
}

/// Min and max over degenerate floats, reduced and scanned, bit for bit
/// against the CPU (sums of them depend on the order of the additions:
/// `MAX + MAX − MAX` is inf or MAX).
fn check_min_max_of_specials<T: Element + std::fmt::Debug>(p: &CudaPrims, values: &[T], bits: fn(T) -> u64) {
    for (k, n) in [1usize, 2, 33, 4097, 100_003].into_iter().enumerate() {
        let x = specials(values, n, 91 + k as u64);
        let dx = p.upload(&x).unwrap();
        for op in [Op::Min, Op::Max] {
            let (want, got) = (CpuPrims.reduce(&x, op).unwrap(), p.reduce(&dx, op).unwrap());
            assert_eq!(bits(got), bits(want), "{} reduce {op:?} n={n}: {got:?} vs {want:?}", T::NAME);
            for inclusive in [true, false] {
                let want = if inclusive { CpuPrims.inclusive_scan(&x, op) } else { CpuPrims.exclusive_scan(&x, op) };
                let out = if inclusive { p.inclusive_scan(&dx, op) } else { p.exclusive_scan(&dx, op) };
                let (want, got) = (want.unwrap(), p.download(&out.unwrap()).unwrap());
                if let Some(i) = (0..n).find(|&i| bits(got[i]) != bits(want[i])) {
                    panic!("{} scan {op:?} n={n} at {i}: {:?} vs {:?}", T::NAME, got[i], want[i]);
                }
            }
        }
        // Sums: NaN where the CPU's is NaN (every order meets the NaN).
        if x.iter().any(|v| v.to_f64().is_nan()) {
            assert!(p.reduce(&dx, Op::Sum).unwrap().to_f64().is_nan(), "{} sum n={n}", T::NAME);
        }
    }
}

#[test]
fn min_and_max_of_zeros_infinities_and_nan_match_the_cpu_bit_for_bit() {
    let Some(p) = gpu("min_and_max_of_zeros_infinities_and_nan_match_the_cpu_bit_for_bit") else { return };
    check_min_max_of_specials(&p, &warpmc_testkit::SPECIAL_F32, |v| u64::from(v.to_bits()));
    check_min_max_of_specials(&p, &warpmc_testkit::SPECIAL_F64, f64::to_bits);
    // Zeros alone, in both orders: −0 for min, +0 for max.
    for x in [[0.0f32, -0.0], [-0.0, 0.0]] {
        let dx = p.upload(&x).unwrap();
        assert_eq!(p.reduce(&dx, Op::Min).unwrap().to_bits(), (-0.0f32).to_bits(), "{x:?}");
        assert_eq!(p.reduce(&dx, Op::Max).unwrap().to_bits(), 0.0f32.to_bits(), "{x:?}");
    }
}

#[test]
fn buffers_borrowed_at_any_offset_give_the_same_results() {
    // Another library's arrays can start anywhere (a CuPy view x[1:]); the
    // kernels load 16 bytes at a time from where a buffer starts.
    let Some(p) = gpu("buffers_borrowed_at_any_offset_give_the_same_results") else { return };
    let (n, pad) = (100_003usize, 64usize);
    let x = random::<f32>(n + pad, 5);
    let keys = random::<u32>(n + pad, 6);
    let base = p.upload(&x).unwrap();
    let mut key_base = p.upload(&keys).unwrap();
    for off in [1usize, 3, 4, 17] {
        let at = |b: &warpmc_gpu::DeviceBuffer<f32>| b.address() + (4 * off) as u64;
        // SAFETY: `base` holds n + pad elements and outlives the view.
        let view = unsafe { p.gpu().borrow_device_memory::<f32>(at(&base), n) }.unwrap();
        let host = x[off..off + n].to_vec();
        for op in Op::ALL {
            assert_eq!(p.reduce(&view, op).unwrap(), CpuPrims.reduce(&host, op).unwrap(), "offset {off} {op:?}");
        }
        // Into an output view: its elements written, its neighbours kept.
        let out_base = p.gpu().alloc_zeros::<f32>(n + pad).unwrap();
        {
            // SAFETY: as for `view`.
            let mut out = unsafe { p.gpu().borrow_device_memory::<f32>(at(&out_base), n) }.unwrap();
            p.inclusive_scan_into(&view, &mut out, Op::Sum).unwrap();
        }
        let got = p.download(&out_base).unwrap();
        assert_eq!(got[off..off + n], CpuPrims.inclusive_scan(&host, Op::Sum).unwrap()[..], "offset {off} scan");
        assert!(got[..off].iter().chain(&got[off + n..]).all(|&v| v == 0.0), "offset {off}: neighbours written");
        // A sort in place of a view, with values.
        let mut want_keys = keys[off..off + n].to_vec();
        let mut want_values = x[off..off + n].to_vec();
        CpuPrims.sort_pairs(&mut want_keys, &mut want_values).unwrap();
        {
            // SAFETY: as for `view`; the sort is the only user of these.
            let mut k =
                unsafe { p.gpu().borrow_device_memory::<u32>(key_base.address() + (4 * off) as u64, n) }.unwrap();
            // SAFETY: as for `view`.
            let mut v = unsafe { p.gpu().borrow_device_memory::<f32>(at(&out_base), n) }.unwrap();
            p.gpu().copy_device(&view, &mut v).unwrap();
            p.sort_pairs(&mut k, &mut v).unwrap();
            assert_eq!(p.download(&k).unwrap(), want_keys, "offset {off} sort keys");
            assert_eq!(p.download(&v).unwrap(), want_values, "offset {off} sort values");
        }
        let key_host = p.download(&key_base).unwrap();
        assert_eq!(key_host[..off], keys[..off], "offset {off}: keys before the view");
        // The sort left its keys sorted in place: the next offset starts afresh.
        p.gpu().copy_to_device(&keys, &mut key_base).unwrap();
        // A transpose from a view into a view.
        let shape = warpmc_prims::MatrixShape::new(331, 302);
        let m = 331 * 302;
        // SAFETY: as for `view` (m < n).
        let src = unsafe { p.gpu().borrow_device_memory::<f32>(at(&base), m) }.unwrap();
        // SAFETY: as for `view`.
        let mut dst = unsafe { p.gpu().borrow_device_memory::<f32>(at(&out_base), m) }.unwrap();
        p.transpose_into(&src, &mut dst, shape, Default::default()).unwrap();
        let want = CpuPrims.transpose(&x[off..off + m].to_vec(), shape).unwrap();
        assert_eq!(p.download(&dst).unwrap(), want, "offset {off} transpose");
    }
}
