//! The GPU radix sort against the CPU backend's (a stable sort by
//! `radix_bits`), bit for bit, for every key type, keys alone and with
//! 32- and 64-bit values, on random and adversarial inputs. Skipped (with a
//! printed reason) where no GPU is usable. (The sort's speed is measured
//! by `warpmc bench sort`, not here.)

use warpmc_prims::{CpuPrims, CudaPrims, Element, Primitives, PrimsError, SortKey};

/// Around warp (32) and tile (4096) boundaries, and one of many tiles.
const SIZES: [usize; 7] = [0, 1, 31, 33, 1023, 4097, (1 << 20) + 7];
const LARGE: usize = (1 << 24) + 3;

fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Elements made from and compared as raw bits (floats from random bits
/// include NaNs with payloads, infinities, subnormals and both zeros).
trait Raw: Element {
    fn from_raw(bits: u64) -> Self;
    fn raw(self) -> u64;
}

macro_rules! raw {
    ($t:ty, $from:expr, $to:expr) => {
        impl Raw for $t {
            fn from_raw(bits: u64) -> Self {
                $from(bits)
            }
            fn raw(self) -> u64 {
                $to(self)
            }
        }
    };
}
raw!(u32, |b: u64| b as u32, |k: u32| u64::from(k));
raw!(i32, |b: u64| b as u32 as i32, |k: i32| u64::from(k as u32));
raw!(f32, |b: u64| f32::from_bits(b as u32), |k: f32| u64::from(k.to_bits()));
raw!(u64, |b: u64| b, |k: u64| k);
raw!(i64, |b: u64| b as i64, |k: i64| k as u64);
raw!(f64, f64::from_bits, f64::to_bits);

fn random<T: Raw>(n: usize, seed: u64) -> Vec<T> {
    let mut s = seed;
    (0..n).map(|_| T::from_raw(splitmix(&mut s))).collect()
}

fn bits<T: Raw>(xs: &[T]) -> Vec<u64> {
    xs.iter().map(|x| x.raw()).collect()
}

fn prims(test: &str) -> Option<CudaPrims> {
    warpmc_testkit::gpu_or_skip(test).map(CudaPrims::new)
}

/// Sorts `keys` alone on the GPU and on the CPU; the results must be equal
/// bit for bit.
fn check_keys<K: SortKey + Raw>(p: &CudaPrims, keys: &[K], what: &str) {
    let mut want = keys.to_vec();
    CpuPrims.sort_keys(&mut want).unwrap();
    let mut buf = p.upload(keys).unwrap();
    p.sort_keys(&mut buf).unwrap();
    let got = p.download(&buf).unwrap();
    assert!(
        bits(&got) == bits(&want),
        "{what}: {} keys alone, n = {}: {}",
        K::NAME,
        keys.len(),
        first_diff(&got, &want)
    );
}

/// Sorts pairs on the GPU and on the CPU (stable there, so equal keys
/// keep their values' order); keys and values must be equal bit for bit.
fn check_pairs<K: SortKey + Raw, V: Raw>(p: &CudaPrims, keys: &[K], values: &[V], what: &str) {
    let (mut want_k, mut want_v) = (keys.to_vec(), values.to_vec());
    CpuPrims.sort_pairs(&mut want_k, &mut want_v).unwrap();
    let mut kb = p.upload(keys).unwrap();
    let mut vb = p.upload(values).unwrap();
    p.sort_pairs(&mut kb, &mut vb).unwrap();
    let (got_k, got_v) = (p.download(&kb).unwrap(), p.download(&vb).unwrap());
    let n = keys.len();
    assert!(
        bits(&got_k) == bits(&want_k),
        "{what}: {} keys with {} values, n = {n}: {}",
        K::NAME,
        V::NAME,
        first_diff(&got_k, &want_k)
    );
    assert!(
        bits(&got_v) == bits(&want_v),
        "{what}: {} values with {} keys, n = {n}: {}",
        V::NAME,
        K::NAME,
        first_diff(&got_v, &want_v)
    );
}

/// The first place two results differ, for a readable failure.
fn first_diff<T: Raw>(got: &[T], want: &[T]) -> String {
    if got.len() != want.len() {
        return format!("{} elements, expected {}", got.len(), want.len());
    }
    match got.iter().zip(want).position(|(a, b)| a.raw() != b.raw()) {
        Some(i) => format!(
            "first difference at {i} of {}: {:#x} instead of {:#x} ({} differ)",
            got.len(),
            got[i].raw(),
            want[i].raw(),
            got.iter().zip(want).filter(|(a, b)| a.raw() != b.raw()).count()
        ),
        None => "equal".into(),
    }
}

/// Keys alone, with u32 values (the index: shows any instability), and
/// with 64-bit values of random bits.
fn check_all<K: SortKey + Raw, W: Raw>(p: &CudaPrims, keys: &[K], seed: u64, what: &str) {
    check_keys(p, keys, what);
    let index: Vec<u32> = (0..keys.len() as u32).collect();
    check_pairs(p, keys, &index, what);
    check_pairs(p, keys, &random::<W>(keys.len(), seed ^ 0x5555), what);
}

fn random_keys_of<K: SortKey + Raw, W: Raw>(p: &CudaPrims) {
    for (i, &n) in SIZES.iter().enumerate() {
        let seed = 1000 * K::BITS as u64 + i as u64;
        check_all::<K, W>(p, &random::<K>(n, seed), seed, "random");
    }
}

#[test]
fn random_keys_of_every_type() {
    let Some(p) = prims("random_keys_of_every_type") else { return };
    random_keys_of::<u32, u64>(&p);
    random_keys_of::<i32, u64>(&p);
    random_keys_of::<f32, f64>(&p);
    random_keys_of::<u64, u64>(&p);
    random_keys_of::<i64, f64>(&p);
    random_keys_of::<f64, f64>(&p);
}

#[test]
fn large_inputs() {
    let Some(p) = prims("large_inputs") else { return };
    let keys = random::<u32>(LARGE, 1);
    check_keys(&p, &keys, "large");
    let index: Vec<u32> = (0..LARGE as u32).collect();
    check_pairs(&p, &keys, &index, "large");
    // Keys from a narrow range: the high passes have one digit (copied,
    // not ranked), the low ones are dense with equal keys.
    let narrow: Vec<u32> = keys.iter().map(|k| k % 50_000).collect();
    check_pairs(&p, &narrow, &index, "large narrow");
    let f = random::<f64>(LARGE, 2);
    check_pairs(&p, &f, &random::<u64>(LARGE, 3), "large");
}

/// Inputs that trip radix sorts: one digit everywhere, long runs, orders.
fn adversarial_of<K: SortKey + Raw, W: Raw>(p: &CudaPrims, n: usize) {
    let name = K::NAME;
    let rand = random::<K>(n, 77);
    // All equal: every pass is one digit; values = index checks stability.
    check_all::<K, W>(p, &vec![rand[0]; n], 1, &format!("{name} all equal"));
    check_all::<K, W>(p, &vec![K::from_raw(0); n], 2, &format!("{name} all zero bits"));
    check_all::<K, W>(p, &vec![K::from_raw(u64::MAX); n], 3, &format!("{name} all one bits"));
    // Already sorted and reversed.
    let mut sorted = rand.clone();
    CpuPrims.sort_keys(&mut sorted).unwrap();
    check_all::<K, W>(p, &sorted, 4, &format!("{name} sorted"));
    let reversed: Vec<K> = sorted.iter().rev().copied().collect();
    check_all::<K, W>(p, &reversed, 5, &format!("{name} reversed"));
    // Few distinct values, spread over the high bits, the low bits, both.
    let few: Vec<K> = (0..n).map(|i| rand[i % 5]).collect();
    check_all::<K, W>(p, &few, 6, &format!("{name} five values"));
    let shift = K::BITS - 8;
    let high: Vec<K> = rand.iter().map(|k| K::from_raw((k.raw() % 3) << shift)).collect();
    check_all::<K, W>(p, &high, 7, &format!("{name} three top digits"));
    let low: Vec<K> = rand.iter().map(|k| K::from_raw(k.raw() % 3)).collect();
    check_all::<K, W>(p, &low, 8, &format!("{name} three bottom values"));
    // Half one key, half random: runs of one digit inside every tile.
    let half: Vec<K> = (0..n).map(|i| if i % 2 == 0 { rand[0] } else { rand[i] }).collect();
    check_all::<K, W>(p, &half, 9, &format!("{name} half equal"));
    // Sorted within blocks of 4096 (a tile), blocks in reverse order.
    let mut tiles_rev = sorted.clone();
    tiles_rev.reverse();
    for c in tiles_rev.chunks_mut(4096) {
        c.reverse();
    }
    check_all::<K, W>(p, &tiles_rev, 10, &format!("{name} sorted tiles reversed"));
}

#[test]
fn adversarial_inputs() {
    let Some(p) = prims("adversarial_inputs") else { return };
    for n in [4097, 100_003] {
        adversarial_of::<u32, u64>(&p, n);
        adversarial_of::<i32, f64>(&p, n);
        adversarial_of::<f32, u64>(&p, n);
        adversarial_of::<u64, u64>(&p, n);
        adversarial_of::<i64, u64>(&p, n);
        adversarial_of::<f64, f64>(&p, n);
    }
}

#[test]
fn float_specials_and_negative_ints() {
    let Some(p) = prims("float_specials_and_negative_ints") else { return };
    let neg_nan32 = f32::from_bits(0xffc0_0001);
    let specials32 = [
        0.0f32,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        -f32::NAN,
        neg_nan32,
        f32::from_bits(0x7f80_0001), // signalling NaN
        f32::MIN_POSITIVE,
        -f32::MIN_POSITIVE,
        f32::from_bits(1), // smallest subnormal
        f32::from_bits(0x8000_0001),
        f32::MAX,
        f32::MIN,
        1.0,
        -1.0,
    ];
    let specials64 = [
        0.0f64,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        -f64::NAN,
        f64::from_bits(0xfff8_0000_0000_0001),
        f64::from_bits(0x7ff0_0000_0000_0001),
        f64::MIN_POSITIVE,
        -f64::MIN_POSITIVE,
        f64::from_bits(1),
        f64::from_bits(0x8000_0000_0000_0001),
        f64::MAX,
        f64::MIN,
        1.0,
        -1.0,
    ];
    for n in [16, 33, 5000, 100_003] {
        let mut s = n as u64;
        let f32s: Vec<f32> = (0..n).map(|_| specials32[splitmix(&mut s) as usize % 16]).collect();
        check_all::<f32, u64>(&p, &f32s, 1, "f32 specials");
        let f64s: Vec<f64> = (0..n).map(|_| specials64[splitmix(&mut s) as usize % 16]).collect();
        check_all::<f64, f64>(&p, &f64s, 2, "f64 specials");
        let i32s: Vec<i32> = (0..n).map(|_| (splitmix(&mut s) % 2001) as i32 - 1000).collect();
        check_all::<i32, u64>(&p, &i32s, 3, "small signed i32");
        let ext32 = [i32::MIN, i32::MIN + 1, -1, 0, 1, i32::MAX - 1, i32::MAX];
        let i32e: Vec<i32> = (0..n).map(|_| ext32[splitmix(&mut s) as usize % 7]).collect();
        check_all::<i32, u64>(&p, &i32e, 4, "extreme i32");
        let i64s: Vec<i64> = (0..n).map(|_| (splitmix(&mut s) % 2001) as i64 - 1000).collect();
        check_all::<i64, f64>(&p, &i64s, 5, "small signed i64");
        let ext64 = [i64::MIN, i64::MIN + 1, -1, 0, 1, i64::MAX - 1, i64::MAX];
        let i64e: Vec<i64> = (0..n).map(|_| ext64[splitmix(&mut s) as usize % 7]).collect();
        check_all::<i64, u64>(&p, &i64e, 6, "extreme i64");
    }
}

#[test]
fn preallocated_scratch_is_reused() {
    let Some(p) = prims("preallocated_scratch_is_reused") else { return };
    let mut scratch = p.sort_pairs_scratch::<u64, u64>(200_000).unwrap();
    assert_eq!((scratch.capacity(), scratch.key_bytes(), scratch.value_bytes()), (200_000, 8, 8));
    // Several sorts of different lengths and widths through one scratch:
    // stale look-back words or counters from an earlier sort would show.
    for (round, n) in [200_000usize, 4097, 150_001, 1, 0, 200_000].into_iter().enumerate() {
        let keys = random::<u32>(n, round as u64);
        let mut want = keys.clone();
        CpuPrims.sort_keys(&mut want).unwrap();
        let mut kb = p.upload(&keys).unwrap();
        p.sort_keys_with(&mut kb, &mut scratch).unwrap();
        assert_eq!(p.download(&kb).unwrap(), want, "u32 keys, round {round}, n = {n}");

        let keys = random::<f64>(n, 100 + round as u64);
        let values = random::<u64>(n, 200 + round as u64);
        let (mut wk, mut wv) = (keys.clone(), values.clone());
        CpuPrims.sort_pairs(&mut wk, &mut wv).unwrap();
        let (mut kb, mut vb) = (p.upload(&keys).unwrap(), p.upload(&values).unwrap());
        p.sort_pairs_with(&mut kb, &mut vb, &mut scratch).unwrap();
        assert_eq!(bits(&p.download(&kb).unwrap()), bits(&wk), "f64 keys, round {round}, n = {n}");
        assert_eq!(p.download(&vb).unwrap(), wv, "u64 values, round {round}, n = {n}");
    }
    // Sorting an already sorted buffer again changes nothing.
    let keys = random::<i32>(100_000, 9);
    let mut kb = p.upload(&keys).unwrap();
    p.sort_keys_with(&mut kb, &mut scratch).unwrap();
    let once = p.download(&kb).unwrap();
    p.sort_keys_with(&mut kb, &mut scratch).unwrap();
    assert_eq!(p.download(&kb).unwrap(), once);
}

#[test]
fn bad_arguments_are_errors() {
    let Some(p) = prims("bad_arguments_are_errors") else { return };
    let mut keys = p.upload(&random::<u32>(100, 1)).unwrap();
    let mut short = p.upload(&[1u32; 99]).unwrap();
    assert!(matches!(p.sort_pairs(&mut keys, &mut short), Err(PrimsError::InvalidArgument(_))));
    let mut empty = p.upload::<f64>(&[]).unwrap();
    assert!(matches!(p.sort_pairs(&mut keys, &mut empty), Err(PrimsError::InvalidArgument(_))));

    let mut small = p.sort_keys_scratch::<u32>(50).unwrap();
    assert!(matches!(p.sort_keys_with(&mut keys, &mut small), Err(PrimsError::InvalidArgument(_))));
    let mut keys_only = p.sort_keys_scratch::<u32>(100).unwrap();
    let mut values = p.upload(&[0u32; 100]).unwrap();
    assert!(matches!(p.sort_pairs_with(&mut keys, &mut values, &mut keys_only), Err(PrimsError::InvalidArgument(_))));
    let mut narrow = p.sort_pairs_scratch::<u32, u32>(100).unwrap();
    let mut wide_keys = p.upload(&random::<u64>(100, 2)).unwrap();
    assert!(matches!(p.sort_keys_with(&mut wide_keys, &mut narrow), Err(PrimsError::InvalidArgument(_))));
    let mut wide_values = p.upload(&[0u64; 100]).unwrap();
    assert!(matches!(p.sort_pairs_with(&mut keys, &mut wide_values, &mut narrow), Err(PrimsError::InvalidArgument(_))));
    assert!(matches!(p.sort_keys_scratch::<u32>(CudaPrims::MAX_SORT_LEN + 1), Err(PrimsError::InvalidArgument(_))));
    // Nothing above touched the keys.
    let mut again = p.download(&keys).unwrap();
    assert_eq!(again, random::<u32>(100, 1));
    // The failed calls left everything usable.
    p.sort_keys_with(&mut keys, &mut keys_only).unwrap();
    again.sort_unstable();
    assert_eq!(p.download(&keys).unwrap(), again);
}
