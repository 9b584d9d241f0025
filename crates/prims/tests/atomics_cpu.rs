//! The CPU backend's reduce by key and histograms, the result check the
//! GPU is held to, the CPU model of the peer masks, and Auto's rule.

mod common;

use common::peer_masks;
use proptest::prelude::*;
use warpmc_prims::atomics::{AtomicStrategy, AtomicValue, AutoInputs, KeyOrder, PeerMethod, Vector, choose_strategy};
use warpmc_prims::{AtomicsConfig, CpuPrims, Primitives, PrimsError, Result};
use warpmc_testkit::atomics::Reference;

fn reduce_by_key<V: AtomicValue>(keys: &[u32], values: &[V], nbins: usize) -> Result<Vec<V>> {
    CpuPrims.reduce_by_key_dense(&keys.to_vec(), &values.to_vec(), nbins, AtomicsConfig::default())
}

fn histogram(keys: &[u32], nbins: usize) -> Result<Vec<u32>> {
    CpuPrims.histogram(&keys.to_vec(), nbins, AtomicStrategy::Auto)
}

/// Keys mostly in 0..nbins, some beyond (and u32::MAX).
fn keys_and_bins() -> impl Strategy<Value = (Vec<u32>, usize)> {
    (1usize..80).prop_flat_map(|nbins| {
        let key = prop_oneof![8 => 0..nbins as u32, 1 => nbins as u32..nbins as u32 + 5, 1 => Just(u32::MAX)];
        (prop::collection::vec(key, 0..300), Just(nbins))
    })
}

proptest! {
    #[test]
    fn sums_are_the_per_bin_filters((keys, nbins) in keys_and_bins(), seed in any::<u64>()) {
        let values: Vec<u64> = keys.iter().enumerate().map(|(i, _)| seed.wrapping_mul(i as u64 + 1)).collect();
        let bins = reduce_by_key(&keys, &values, nbins).unwrap();
        prop_assert_eq!(bins.len(), nbins);
        for (b, &sum) in bins.iter().enumerate() {
            let want = keys.iter().zip(&values).filter(|(k, _)| **k as usize == b)
                .fold(0u64, |a, (_, &v)| a.wrapping_add(v));
            prop_assert_eq!(sum, want);
        }
    }

    #[test]
    fn histogram_counts_in_range_keys((keys, nbins) in keys_and_bins()) {
        let counts = histogram(&keys, nbins).unwrap();
        let in_range = keys.iter().filter(|&&k| (k as usize) < nbins).count();
        prop_assert_eq!(counts.iter().map(|&c| c as usize).sum::<usize>(), in_range);
        let ones = vec![1u32; keys.len()];
        prop_assert_eq!(&counts, &reduce_by_key(&keys, &ones, nbins).unwrap());
    }

    #[test]
    fn vectors_add_component_by_component((keys, nbins) in keys_and_bins()) {
        let v: Vec<Vector<f64, 3>> = (0..keys.len()).map(|i| Vector([i as f64, -(i as f64), 0.5])).collect();
        let sums = reduce_by_key(&keys, &v, nbins).unwrap();
        for c in 0..3 {
            let xs: Vec<f64> = v.iter().map(|x| x.0[c]).collect();
            let per = reduce_by_key(&keys, &xs, nbins).unwrap();
            for b in 0..nbins {
                prop_assert_eq!(sums[b].0[c], per[b]);
            }
        }
    }

    /// A float sum in another order passes the check; a sum missing one
    /// element (of magnitude at least 1) does not.
    #[test]
    fn the_check_allows_rounding_but_not_lost_elements(
        (keys, nbins) in keys_and_bins(), seed in any::<u64>(), drop in any::<prop::sample::Index>()
    ) {
        let mut s = seed;
        let values: Vec<f32> = keys.iter().map(|_| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let u = (s >> 40) as f32 / (1u64 << 24) as f32;
            (1.0 + 99.0 * u) * if s >> 63 == 1 { -1.0 } else { 1.0 }
        }).collect();
        let reference = Reference::new(&keys, &values, nbins).unwrap();
        let rev_keys: Vec<u32> = keys.iter().rev().copied().collect();
        let rev_values: Vec<f32> = values.iter().rev().copied().collect();
        let reversed = reduce_by_key(&rev_keys, &rev_values, nbins).unwrap();
        prop_assert!(reference.check(&reversed).is_ok(), "{:?}", reference.check(&reversed));
        let in_range: Vec<usize> = (0..keys.len()).filter(|&i| (keys[i] as usize) < nbins).collect();
        if !in_range.is_empty() {
            let i = in_range[drop.index(in_range.len())];
            let mut missing = reference.sums().to_vec();
            missing[keys[i] as usize] -= values[i];
            let m = reference.check(&missing);
            prop_assert!(m.is_err());
            prop_assert_eq!(m.unwrap_err().bin, keys[i] as usize);
        }
    }

    #[test]
    fn peer_masks_are_consistent((keys, nbins) in keys_and_bins()) {
        let ballot = peer_masks(&keys, nbins, PeerMethod::Ballot);
        let matched = peer_masks(&keys, nbins, PeerMethod::Match);
        let runs = peer_masks(&keys, nbins, PeerMethod::Runs);
        prop_assert_eq!(&ballot, &matched);
        for i in 0..keys.len() {
            let (w, lane) = (i / 32, i % 32);
            if (keys[i] as usize) >= nbins {
                prop_assert_eq!((ballot[i], runs[i]), (0, 0));
                continue;
            }
            prop_assert!(ballot[i] >> lane & 1 == 1);
            prop_assert_eq!(runs[i] & !ballot[i], 0, "runs within the peers");
            // Runs are contiguous: mask >> its lowest bit is 2^len - 1.
            let r = runs[i] >> runs[i].trailing_zeros();
            prop_assert_eq!(r & r.wrapping_add(1), 0);
            for m in 0..32 {
                if ballot[i] >> m & 1 == 1 {
                    let j = 32 * w + m;
                    prop_assert_eq!(keys[j], keys[i]);
                    prop_assert_eq!(ballot[j], ballot[i], "peers share one mask");
                }
            }
        }
        // Each group's leader (lowest lane) counts it once: the popcounts
        // of leaders add up to the in-range elements.
        for masks in [&ballot, &runs] {
            let total: u32 = (0..keys.len())
                .filter(|&i| masks[i] != 0 && masks[i].trailing_zeros() as usize == i % 32)
                .map(|i| masks[i].count_ones())
                .sum();
            prop_assert_eq!(total as usize, keys.iter().filter(|&&k| (k as usize) < nbins).count());
        }
    }

    #[test]
    fn auto_is_concrete_and_shared_only_when_the_bins_fit(
        n in 0usize..1 << 30, nbins in 0usize..1 << 22, bytes in prop::sample::select(vec![4usize, 8, 16, 32]),
        order in prop::sample::select(vec![KeyOrder::Unknown, KeyOrder::Sorted, KeyOrder::PartiallySorted, KeyOrder::Random]),
    ) {
        let i = AutoInputs { n, nbins, value_bytes: bytes, order, sm_count: 132, max_shared_bytes: 227 * 1024 };
        let s = choose_strategy(&i);
        prop_assert_ne!(s, AtomicStrategy::Auto);
        if s.is_shared() {
            prop_assert!(nbins * bytes <= 227 * 1024 && nbins > 0);
        }
        if order == KeyOrder::Random {
            prop_assert!(matches!(s, AtomicStrategy::Plain | AtomicStrategy::SharedPrivatized));
        }
    }
}

#[test]
fn mismatched_lengths_and_too_many_bins_are_errors() {
    assert!(matches!(reduce_by_key(&[1, 2], &[1.0f32], 4), Err(PrimsError::InvalidArgument(_))));
    assert!(matches!(histogram(&[1], u32::MAX as usize + 1), Err(PrimsError::InvalidArgument(_))));
    assert!(reduce_by_key::<u32>(&[], &[], 0).unwrap().is_empty());
    // The most bins of the widest values: 256 GiB, an error (not an abort)
    // where the host has not that much free.
    let bytes = warpmc_prims::atomics::MAX_BINS as u64 * 64;
    if warpmc_host::available_memory().is_some_and(|free| free.bytes < bytes) {
        let e = reduce_by_key(&[0], &[Vector::<f64, 8>([1.0; 8])], warpmc_prims::atomics::MAX_BINS).unwrap_err();
        assert!(matches!(&e, PrimsError::OutOfHostMemory(m) if m.contains("a result of 4294967295 bins needs")), "{e}");
    }
}

#[test]
fn integer_checks_are_exact_and_names_are_stable() {
    let keys = [0u32, 1, 1];
    let r = Reference::new(&keys, &[5u32, u32::MAX, 2], 2).unwrap();
    assert_eq!(r.sums(), &[5, 1]);
    assert!(r.check(&[5, 1]).is_ok());
    let m = r.check(&[5, 2]).unwrap_err();
    assert_eq!((m.bin, m.tolerance, m.bad_bins), (1, 0.0, 1));
    assert_eq!(<Vector<u32, 4>>::type_name(), "u32x4");
    assert_eq!(<Vector<f32, 4> as AtomicValue>::WIDTH, 4);
}

#[test]
fn warps_are_aligned_to_32_elements() {
    // Elements 31 and 32 share a key but not a warp.
    let mut keys = vec![0u32; 40];
    for (i, k) in keys.iter_mut().enumerate() {
        *k = i as u32;
    }
    keys[32] = 31;
    let masks = peer_masks(&keys, 64, PeerMethod::Ballot);
    assert_eq!(masks[31], 1 << 31);
    assert_eq!(masks[32], 1);
    let runs = peer_masks(&[7, 7, 8, 7, 7, 7], 10, PeerMethod::Runs);
    assert_eq!(runs, vec![0b11, 0b11, 0b100, 0b111000, 0b111000, 0b111000]);
}
