//! Reduce by key and histograms on the GPU against the CPU reference, for
//! every value type, strategy and atomic flavour, on adversarial key
//! patterns and awkward sizes; the kernels' peer masks against the CPU's.
//! Skipped (with a printed reason) where no GPU is usable.

mod common;

use common::peer_masks;
use warpmc_prims::atomics::{AtomicAdd, AtomicStrategy, AtomicValue, KeyOrder, PeerMethod, Vector};
use warpmc_prims::{AtomicsConfig, CpuPrims, CudaPrims, Element, Primitives, PrimsError};
use warpmc_testkit::atomics::Reference;

fn histogram_cpu(keys: &[u32], nbins: usize) -> Vec<u32> {
    CpuPrims.histogram(&keys.to_vec(), nbins, AtomicStrategy::Auto).unwrap()
}

/// Around the warp size, and one beyond a block of 256.
const SIZES: [usize; 7] = [0, 1, 31, 33, 257, 1000, 100_003];

fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Key patterns, each with its number of bins.
#[derive(Clone, Copy, Debug)]
enum Pattern {
    /// Every key 3.
    AllEqual,
    /// Keys 0, 1, 2, ... (n bins).
    AllDistinct,
    /// 5, 9, 5, 9, ...
    Alternating,
    /// Uniform in 0..64.
    RandomFew,
    /// Uniform in 0..100 000.
    RandomMany,
    /// Runs of 1 to 40 equal keys, increasing.
    SortedRuns,
    /// Runs, with one key in 8 out of range (up to u32::MAX).
    WithOutOfRange,
    /// The same key in lanes 0 and 31 of each warp, distinct ones between
    /// (peers far apart: the ballot loop and match_any pair them, runs do
    /// not).
    Bookends,
    /// Each 32 keys (a warp's step) of one of three kinds, at random:
    /// locally shuffled (4 keys in random order: 9 to 27 runs, where the
    /// adaptive strategy uses match_any), sorted runs, or distinct keys
    /// (both: runs); one key in 16 out of range. The adaptive kernels'
    /// warps meet every kind, whatever they chose from their first step.
    MixedOrder,
}

const PATTERNS: [Pattern; 9] = [
    Pattern::AllEqual,
    Pattern::AllDistinct,
    Pattern::Alternating,
    Pattern::RandomFew,
    Pattern::RandomMany,
    Pattern::SortedRuns,
    Pattern::WithOutOfRange,
    Pattern::Bookends,
    Pattern::MixedOrder,
];

fn keys(pattern: Pattern, n: usize, seed: u64) -> (Vec<u32>, usize) {
    let mut s = seed;
    match pattern {
        Pattern::AllEqual => (vec![3; n], 10),
        Pattern::AllDistinct => ((0..n as u32).collect(), n.max(1)),
        Pattern::Alternating => ((0..n).map(|i| if i % 2 == 0 { 5 } else { 9 }).collect(), 10),
        Pattern::RandomFew => ((0..n).map(|_| (splitmix(&mut s) % 64) as u32).collect(), 64),
        Pattern::RandomMany => ((0..n).map(|_| (splitmix(&mut s) % 100_000) as u32).collect(), 100_000),
        Pattern::SortedRuns | Pattern::WithOutOfRange => {
            let mut k = Vec::with_capacity(n);
            let mut key = 0u32;
            while k.len() < n {
                let run = 1 + (splitmix(&mut s) % 40) as usize;
                k.extend(std::iter::repeat_n(key, run.min(n - k.len())));
                key += 1;
            }
            let nbins = key as usize;
            if matches!(pattern, Pattern::WithOutOfRange) {
                for x in k.iter_mut() {
                    let r = splitmix(&mut s);
                    if r.is_multiple_of(8) {
                        *x = if r.is_multiple_of(16) { u32::MAX } else { nbins as u32 + (r >> 40) as u32 };
                    }
                }
            }
            (k, nbins.max(1))
        }
        Pattern::Bookends => {
            let k = (0..n).map(|i| if i % 32 == 0 || i % 32 == 31 { (i / 32) as u32 * 40 } else { i as u32 }).collect();
            (k, 2 * n + 40)
        }
        Pattern::MixedOrder => {
            let mut k = Vec::with_capacity(n);
            let mut next = 0u32;
            while k.len() < n {
                let m = (n - k.len()).min(32);
                match splitmix(&mut s) % 3 {
                    0 => {
                        k.extend((0..m).map(|_| next + (splitmix(&mut s) % 4) as u32));
                        next += 4;
                    }
                    1 => {
                        let mut left = 0;
                        for _ in 0..m {
                            if left == 0 {
                                left = 1 + splitmix(&mut s) % 12;
                                next += 1;
                            }
                            k.push(next);
                            left -= 1;
                        }
                        next += 1;
                    }
                    _ => {
                        k.extend(next..next + m as u32);
                        next += m as u32;
                    }
                }
            }
            let nbins = next as usize;
            for x in k.iter_mut() {
                if splitmix(&mut s).is_multiple_of(16) {
                    *x = u32::MAX;
                }
            }
            (k, nbins.max(1))
        }
    }
}

/// Runs of equal neighbouring in-range keys in each 32 keys (as the
/// adaptive kernels count them).
fn runs_per_warp(keys: &[u32], nbins: usize) -> Vec<usize> {
    keys.chunks(32)
        .map(|w| (0..w.len()).filter(|&l| (w[l] as usize) < nbins && (l == 0 || w[l - 1] != w[l])).count())
        .collect()
}

/// The adaptive strategy's two paths both run on MixedOrder keys (and on
/// no other pattern would the match path).
#[test]
fn mixed_order_keys_take_both_adaptive_paths() {
    let (k, nbins) = keys(Pattern::MixedOrder, 100_003, 1);
    let runs = runs_per_warp(&k, nbins);
    let shuffled = runs.iter().filter(|&&r| (9..=27).contains(&r)).count();
    assert!(shuffled > runs.len() / 5 && shuffled < runs.len() * 3 / 5, "{shuffled} of {} warps", runs.len());
    assert!(k.iter().any(|&x| x as usize >= nbins));
}

/// Values with a random sign and magnitude (floats: not integers, so sums
/// round and the tolerance is exercised; u32: the full range, so that sums
/// wrap).
fn values<V: AtomicValue>(n: usize, seed: u64) -> Vec<V> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            V::from_components(|_| {
                let r = splitmix(&mut s);
                let x = if <V::Scalar as Element>::FLOAT {
                    ((r >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 100.0
                } else if size_of::<V::Scalar>() == 4 {
                    (r >> 32) as f64 // full range: sums wrap
                } else {
                    (r >> 20) as f64
                };
                <V::Scalar as Element>::from_f64(x)
            })
        })
        .collect()
}

fn gpu(test: &str) -> Option<CudaPrims> {
    warpmc_testkit::gpu_or_skip(test).map(CudaPrims::new)
}

fn configs() -> Vec<AtomicsConfig> {
    let mut v = Vec::new();
    for add in [AtomicAdd::Hardware, AtomicAdd::CasLoop] {
        for strategy in AtomicStrategy::CONCRETE {
            v.push(AtomicsConfig { strategy, order: KeyOrder::Unknown, add });
        }
        for order in [KeyOrder::Unknown, KeyOrder::Sorted, KeyOrder::Random] {
            v.push(AtomicsConfig { strategy: AtomicStrategy::Auto, order, add });
        }
    }
    v
}

fn fits(p: &CudaPrims, bytes: usize) -> bool {
    bytes <= p.gpu().info().max_shared_per_block_optin as usize
}

fn check_type<V: AtomicValue>(p: &CudaPrims) {
    for (pi, &pattern) in PATTERNS.iter().enumerate() {
        for (si, &n) in SIZES.iter().enumerate() {
            let seed = (pi * 100 + si) as u64;
            let (k, nbins) = keys(pattern, n, seed);
            let x = values::<V>(n, seed + 7);
            let reference = Reference::new(&k, &x, nbins).unwrap();
            let dk = p.upload(&k).unwrap();
            let dx = p.upload(&x).unwrap();
            for config in configs() {
                let what = format!("{} {pattern:?} n={n} nbins={nbins} {config:?}", V::type_name());
                let result = p.reduce_by_key_dense(&dk, &dx, nbins, config);
                if config.strategy.is_shared() && !fits(p, nbins * size_of::<V>()) {
                    assert!(matches!(result, Err(PrimsError::InvalidArgument(_))), "{what}: bins too large for shared");
                    continue;
                }
                let got = p.download(&result.unwrap()).unwrap();
                if let Err(m) = reference.check(&got) {
                    panic!("{what}: {m}");
                }
            }
        }
    }
}

#[test]
fn reduce_by_key_matches_the_cpu_for_scalars() {
    let Some(p) = gpu("reduce_by_key_matches_the_cpu_for_scalars") else { return };
    check_type::<f32>(&p);
    check_type::<f64>(&p);
    check_type::<u32>(&p);
    check_type::<u64>(&p);
}

macro_rules! check_widths {
    ($p:expr, $s:ty, $($n:literal),*) => {
        $(check_type::<Vector<$s, $n>>($p);)*
    };
}

#[test]
fn reduce_by_key_matches_the_cpu_for_f32_vectors() {
    let Some(p) = gpu("reduce_by_key_matches_the_cpu_for_f32_vectors") else { return };
    check_widths!(&p, f32, 2, 3, 4, 5, 6, 7, 8);
}

#[test]
fn reduce_by_key_matches_the_cpu_for_f64_vectors() {
    let Some(p) = gpu("reduce_by_key_matches_the_cpu_for_f64_vectors") else { return };
    check_widths!(&p, f64, 2, 3, 4, 5, 6, 7, 8);
}

#[test]
fn reduce_by_key_matches_the_cpu_for_integer_vectors() {
    let Some(p) = gpu("reduce_by_key_matches_the_cpu_for_integer_vectors") else { return };
    check_widths!(&p, u32, 2, 3, 4, 5, 6, 7, 8);
    check_widths!(&p, u64, 2, 3, 4, 5, 6, 7, 8);
}

#[test]
fn histograms_match_the_cpu_exactly() {
    let Some(p) = gpu("histograms_match_the_cpu_exactly") else { return };
    for (pi, &pattern) in PATTERNS.iter().enumerate() {
        for (si, &n) in SIZES.iter().enumerate() {
            let (k, nbins) = keys(pattern, n, (pi * 100 + si) as u64);
            let want = histogram_cpu(&k, nbins);
            let dk = p.upload(&k).unwrap();
            for config in configs() {
                let what = format!("{pattern:?} n={n} nbins={nbins} {config:?}");
                let result = p.histogram(&dk, nbins, config);
                if config.strategy.is_shared() && !fits(&p, nbins * 4) {
                    assert!(result.is_err(), "{what}");
                    continue;
                }
                let got = p.download(&result.unwrap()).unwrap();
                if let Some(i) = (0..nbins).find(|&i| got[i] != want[i]) {
                    panic!("{what}: bin {i}: {} instead of {}", got[i], want[i]);
                }
            }
        }
    }
}

#[test]
fn peer_masks_match_the_cpu() {
    let Some(p) = gpu("peer_masks_match_the_cpu") else { return };
    for (pi, &pattern) in PATTERNS.iter().enumerate() {
        for (si, &n) in SIZES.iter().enumerate() {
            let (k, nbins) = keys(pattern, n, (pi * 100 + si) as u64);
            let dk = p.upload(&k).unwrap();
            for method in [PeerMethod::Ballot, PeerMethod::Match, PeerMethod::Runs] {
                let got = p.download(&p.peer_masks(&dk, nbins, method).unwrap()).unwrap();
                let want = peer_masks(&k, nbins, method);
                if let Some(i) = (0..n).find(|&i| got[i] != want[i]) {
                    panic!("{pattern:?} n={n} {method:?}: element {i}: {:#010x} instead of {:#010x}", got[i], want[i]);
                }
            }
        }
    }
}

#[test]
fn into_accumulates_and_reports_the_strategy() {
    let Some(p) = gpu("into_accumulates_and_reports_the_strategy") else { return };
    let k: Vec<u32> = (0..10_000).map(|i| i / 7).collect();
    let dk = p.upload(&k).unwrap();
    let dx = p.upload(&vec![1u64; k.len()]).unwrap();
    let mut bins = p.gpu().alloc_zeros::<u64>(1429).unwrap();
    let config = AtomicsConfig { order: KeyOrder::Sorted, ..Default::default() };
    let ran = p.reduce_by_key_dense_into(&dk, &dx, &mut bins, config).unwrap();
    assert_ne!(ran, AtomicStrategy::Auto);
    assert_eq!(ran, p.atomics_strategy(k.len(), 1429, 8, config));
    p.reduce_by_key_dense_into(&dk, &dx, &mut bins, AtomicStrategy::Plain).unwrap();
    let got = p.download(&bins).unwrap();
    let want: Vec<u64> = (0..1429).map(|b| if b < 1428 { 14 } else { 2 * (10_000 - 1428 * 7) }).collect();
    assert_eq!(got, want);
    let mut counts = p.gpu().alloc_zeros::<u32>(1429).unwrap();
    p.histogram_into(&dk, &mut counts, AtomicStrategy::AggregatedRuns).unwrap();
    p.histogram_into(&dk, &mut counts, AtomicStrategy::SharedRuns).unwrap();
    assert_eq!(p.download(&counts).unwrap(), want.iter().map(|&c| c as u32).collect::<Vec<_>>());
}

#[test]
fn bad_arguments_are_errors() {
    let Some(p) = gpu("bad_arguments_are_errors") else { return };
    let dk = p.upload(&[1u32, 2, 3]).unwrap();
    let dx = p.upload(&[1.0f32, 2.0]).unwrap();
    assert!(matches!(p.reduce_by_key_dense(&dk, &dx, 4, AtomicStrategy::Plain), Err(PrimsError::InvalidArgument(_))));
    let dx = p.upload(&[1.0f32, 2.0, 3.0]).unwrap();
    let too_many = u32::MAX as usize + 1;
    assert!(matches!(
        p.reduce_by_key_dense(&dk, &dx, too_many, AtomicStrategy::Auto),
        Err(PrimsError::InvalidArgument(_))
    ));
    assert!(matches!(p.histogram(&dk, too_many, AtomicStrategy::Auto), Err(PrimsError::InvalidArgument(_))));
    let huge = 1 << 20;
    assert!(matches!(
        p.reduce_by_key_dense(&dk, &dx, huge, AtomicStrategy::SharedPrivatized),
        Err(PrimsError::InvalidArgument(_))
    ));
    // nbins = 0: every key is out of range; an empty result.
    assert!(p.download(&p.histogram(&dk, 0, AtomicStrategy::Auto).unwrap()).unwrap().is_empty());
}
