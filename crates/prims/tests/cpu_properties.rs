//! Properties of the CPU backend, the reference the kernels are held to.

use proptest::prelude::*;
use warpmc_prims::{CpuPrims, Op, Predicate, Primitives, SortKey};

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![Just(Op::Sum), Just(Op::Min), Just(Op::Max)]
}

proptest! {
    #[test]
    fn inclusive_is_exclusive_combined_with_the_element(x in prop::collection::vec(any::<i64>(), 0..300), op in op()) {
        let inc = CpuPrims.inclusive_scan(&x, op).unwrap();
        let exc = CpuPrims.exclusive_scan(&x, op).unwrap();
        for i in 0..x.len() {
            prop_assert_eq!(inc[i], <i64 as warpmc_prims::Element>::combine(op, exc[i], x[i]));
        }
        prop_assert_eq!(inc.last().copied().unwrap_or(<i64 as warpmc_prims::Element>::identity(op)),
                        CpuPrims.reduce(&x, op).unwrap());
    }

    #[test]
    fn reduce_is_independent_of_chunking(x in prop::collection::vec(any::<u32>(), 0..200_000)) {
        let seq = x.iter().fold(0u32, |a, &b| a.wrapping_add(b));
        prop_assert_eq!(CpuPrims.reduce(&x, Op::Sum).unwrap(), seq);
        prop_assert_eq!(CpuPrims.reduce(&x, Op::Max).unwrap(), x.iter().copied().max().unwrap_or(0));
    }

    #[test]
    fn segments_partition_the_reduction(x in prop::collection::vec(-1000i32..1000, 0..500), cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..20)) {
        let mut offsets: Vec<u32> = cuts.iter().map(|c| c.index(x.len() + 1) as u32).collect();
        offsets.push(0);
        offsets.push(x.len() as u32);
        offsets.sort_unstable();
        let per = CpuPrims.segmented_reduce(&x, &offsets, Op::Sum).unwrap();
        prop_assert_eq!(per.len(), offsets.len() - 1);
        prop_assert_eq!(per.iter().sum::<i32>(), x.iter().sum::<i32>());
    }

    #[test]
    fn sort_pairs_is_a_stable_sorted_permutation(keys in prop::collection::vec(-50i32..50, 0..400)) {
        let mut k = keys.clone();
        let mut v: Vec<u32> = (0..keys.len() as u32).collect();
        CpuPrims.sort_pairs(&mut k, &mut v).unwrap();
        for i in 1..k.len() {
            prop_assert!(k[i - 1] <= k[i]);
            if k[i - 1] == k[i] { prop_assert!(v[i - 1] < v[i], "stability"); }
        }
        for i in 0..k.len() { prop_assert_eq!(keys[v[i] as usize], k[i]); }
    }

    #[test]
    fn float_sort_follows_total_order(keys in prop::collection::vec(any::<f32>(), 0..300)) {
        let mut k = keys.clone();
        CpuPrims.sort_keys(&mut k).unwrap();
        for w in k.windows(2) { prop_assert!(w[0].total_cmp(&w[1]).is_le()); }
        let mut a: Vec<u64> = keys.iter().map(|x| x.radix_bits()).collect();
        let mut b: Vec<u64> = k.iter().map(|x| x.radix_bits()).collect();
        a.sort_unstable(); b.sort_unstable();
        prop_assert_eq!(a, b);
    }

    #[test]
    fn select_keeps_exactly_what_the_predicate_holds_for(x in prop::collection::vec(-20i64..20, 0..300), t in -20i64..20) {
        let gt = CpuPrims.select_if(&x, Predicate::GreaterThan(t)).unwrap();
        let lt = CpuPrims.select_if(&x, Predicate::LessThan(t + 1)).unwrap();
        prop_assert_eq!(gt.len() + lt.len(), x.len());
        prop_assert!(gt.iter().all(|&v| v > t));
        let nz = CpuPrims.select_if(&x, Predicate::NonZero).unwrap();
        prop_assert_eq!(nz.len(), x.iter().filter(|&&v| v != 0).count());
    }
}

#[test]
fn min_of_zeros_is_negative_and_max_positive_in_either_order() {
    for x in [vec![0.0f32, -0.0], vec![-0.0, 0.0], vec![-0.0, 0.0, 0.0, -0.0]] {
        assert_eq!(CpuPrims.reduce(&x, Op::Min).unwrap().to_bits(), (-0.0f32).to_bits(), "{x:?}");
        assert_eq!(CpuPrims.reduce(&x, Op::Max).unwrap().to_bits(), 0.0f32.to_bits(), "{x:?}");
        let scan = CpuPrims.inclusive_scan(&x, Op::Min).unwrap();
        assert!(scan[1..].iter().all(|v| v.to_bits() == (-0.0f32).to_bits()), "{x:?}: {scan:?}");
    }
    let x = vec![0.0f64, -0.0];
    assert_eq!(CpuPrims.reduce(&x, Op::Min).unwrap().to_bits(), (-0.0f64).to_bits());
    assert_eq!(CpuPrims.reduce(&x.iter().rev().copied().collect(), Op::Max).unwrap().to_bits(), 0.0f64.to_bits());
}

/// A float32 sum adds pairwise, as numpy's does: 0.1 added 200,005 times
/// is within a few roundings of the exact sum of those float32 values (in
/// order, float32 would be off by about 6e-4 of it), and the segments do
/// the same.
#[test]
fn float_sums_are_pairwise_and_accurate() {
    for n in [16usize, 17, 65_536, 200_005] {
        let x = vec![0.1f32; n];
        let exact = n as f64 * f64::from(0.1f32);
        let got = f64::from(CpuPrims.reduce(&x, Op::Sum).unwrap());
        let rel = (got - exact).abs() / exact;
        assert!(rel < 1e-6, "n = {n}: {got} against {exact} ({rel:e})");
        let per = CpuPrims.segmented_reduce(&x, &vec![0, n as u32], Op::Sum).unwrap();
        let rel = (f64::from(per[0]) - exact).abs() / exact;
        assert!(rel < 1e-6, "segment of {n}: {} against {exact} ({rel:e})", per[0]);
    }
    // NaN and infinities still carry through, whatever the grouping.
    let mut x = vec![1.0f64; 1000];
    x[777] = f64::NAN;
    assert!(CpuPrims.reduce(&x, Op::Sum).unwrap().is_nan());
    x[777] = f64::INFINITY;
    assert_eq!(CpuPrims.reduce(&x, Op::Sum).unwrap(), f64::INFINITY);
    x[3] = f64::NEG_INFINITY;
    assert!(CpuPrims.reduce(&x, Op::Sum).unwrap().is_nan());
}
