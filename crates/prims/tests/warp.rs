//! The warp functions of `warp.cuh` against their CPU references, for every
//! element type, on 1, 3 and 1000 warps (GPU tests; they print SKIPPED and
//! pass where there is no GPU), and the register-transpose schedule checked
//! on a model of 32 lanes (CPU tests, run everywhere).

use proptest::prelude::*;
use warpmc_prims::{Element, Op, Result, SortKey};
use warpmc_testkit::warp::{Appended, Compacted, ExclusiveScan, WARP, WarpHarness, reference as r};

const WARP_COUNTS: [usize; 3] = [1, 3, 1000];

// ---- inputs -------------------------------------------------------------------

/// splitmix64: deterministic inputs without a dependency on the crate under
/// test.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed)
    }
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }
}

/// Element types with test-input generators.
trait TestElem: SortKey {
    /// Anywhere in the type's range (integers: every bit pattern, so sums
    /// wrap; floats: mixed signs and magnitudes from 1e-3 to 1e3).
    fn random(rng: &mut Rng) -> Self;
    /// One of four values, for ties.
    fn small(rng: &mut Rng) -> Self {
        Self::from_f64(rng.below(4) as f64)
    }
    /// Special values for sorting (floats: NaNs, infinities, signed zeros).
    fn specials() -> Vec<Self> {
        vec![Self::from_f64(0.0), Self::from_f64(1.0)]
    }
}

macro_rules! int_elem {
    ($($t:ty),*) => {$(
        impl TestElem for $t {
            fn random(rng: &mut Rng) -> Self {
                rng.next_u64() as $t
            }
            fn specials() -> Vec<Self> {
                vec![<$t>::MIN, <$t>::MAX, 0, 1, <$t>::MAX - 1]
            }
        }
    )*};
}
int_elem!(i32, u32, i64, u64);

macro_rules! float_elem {
    ($($t:ident),*) => {$(
        impl TestElem for $t {
            fn random(rng: &mut Rng) -> Self {
                let magnitude = 10f64.powi(rng.below(7) as i32 - 3);
                ((rng.unit() * 2.0 - 1.0) * magnitude) as $t
            }
            fn specials() -> Vec<Self> {
                vec![
                    0.0, -0.0, $t::INFINITY, $t::NEG_INFINITY, $t::NAN, -$t::NAN, $t::MIN_POSITIVE,
                    -$t::MIN_POSITIVE, $t::MAX, $t::MIN, 1.0, -1.0,
                ]
            }
        }
    )*};
}
float_elem!(f32, f64);

fn random_vec<T: TestElem>(rng: &mut Rng, n: usize) -> Vec<T> {
    (0..n).map(|_| T::random(rng)).collect()
}

/// Distinct values 0, 1, 2, … (exact in every type for the sizes used), so a
/// misplaced word is always visible.
fn iota<T: Element>(n: usize) -> Vec<T> {
    (0..n).map(|i| T::from_f64(i as f64)).collect()
}

// ---- comparisons ----------------------------------------------------------------

/// Exactly the same bits (distinguishes -0 from +0 and NaN payloads).
fn same_bits<T: SortKey>(a: T, b: T) -> bool {
    a.radix_bits() == b.radix_bits()
}

fn assert_bits_eq<T: SortKey>(got: &[T], want: &[T], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    if let Some(i) = (0..got.len()).find(|&i| !same_bits(got[i], want[i])) {
        panic!("{what}: lane {i} (warp {}, lane {}): got {:?}, want {:?}", i / WARP, i % WARP, got[i], want[i]);
    }
}

/// Min/max results: equal, or both NaN (fminf's NaN may have another
/// payload than Rust's).
fn assert_minmax_eq<T: Element>(got: &[T], want: &[T], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    let ok = |a: T, b: T| a == b || (a.to_f64().is_nan() && b.to_f64().is_nan());
    if let Some(i) = (0..got.len()).find(|&i| !ok(got[i], want[i])) {
        panic!("{what}: lane {i}: got {:?}, want {:?}", got[i], want[i]);
    }
}

/// Sums: integers exactly; floats within a few ulps of the warp's sum of
/// |x| (the reference adds in the kernels' order, so they should agree
/// exactly, but the test does not depend on it).
fn assert_sums_close<T: Element>(got: &[T], want: &[T], x: &[T], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for i in 0..got.len() {
        let ok = if T::FLOAT {
            let w = i / WARP * WARP;
            let scale: f64 = x[w..w + WARP].iter().map(|v| v.to_f64().abs()).sum();
            let eps = if std::mem::size_of::<T>() == 4 { 1e-6 } else { 1e-14 };
            (got[i].to_f64() - want[i].to_f64()).abs() <= eps * WARP as f64 * scale
        } else {
            got[i] == want[i]
        };
        assert!(ok, "{what}: lane {i}: got {:?}, want {:?}", got[i], want[i]);
    }
}

fn assert_op_eq<T: SortKey>(op: Op, got: &[T], want: &[T], x: &[T], what: &str) {
    match op {
        Op::Sum => assert_sums_close(got, want, x, what),
        _ if T::FLOAT => assert_minmax_eq(got, want, what),
        _ => assert_bits_eq(got, want, what),
    }
}

macro_rules! for_each_type {
    ($f:ident($($arg:expr),*)) => {
        $f::<i32>($($arg),*);
        $f::<u32>($($arg),*);
        $f::<i64>($($arg),*);
        $f::<u64>($($arg),*);
        $f::<f32>($($arg),*);
        $f::<f64>($($arg),*);
    };
}

// ---- backends -------------------------------------------------------------------
//
// The checks below run against the GPU (WarpHarness) and, on any machine,
// against a CPU model (the references, with the structure exchange going
// through the model of the kernels' transpose schedule). The CPU run
// cannot prove the kernels right, but it proves the checks themselves
// consistent, so a failure on a GPU points at the kernels.

trait Warps {
    fn shfl<T: Element>(&self, x: &[T], src: &[u32]) -> Result<Vec<T>>;
    fn shfl_up<T: Element>(&self, x: &[T], delta: u32) -> Result<Vec<T>>;
    fn shfl_down<T: Element>(&self, x: &[T], delta: u32) -> Result<Vec<T>>;
    fn shfl_xor<T: Element>(&self, x: &[T], lane_mask: u32) -> Result<Vec<T>>;
    fn broadcast<T: Element>(&self, x: &[T], src: &[u32]) -> Result<Vec<T>>;
    fn broadcast_last<T: Element>(&self, x: &[T], pred: &[bool]) -> Result<(Vec<T>, Vec<bool>)>;
    fn reduce<T: Element>(&self, x: &[T], op: Op) -> Result<Vec<T>>;
    fn inclusive_scan<T: Element>(&self, x: &[T], op: Op) -> Result<Vec<T>>;
    fn exclusive_scan<T: Element>(&self, x: &[T], op: Op) -> Result<ExclusiveScan<T>>;
    fn scan_pred<T: Element>(&self, x: &[T]) -> Result<Vec<T>>;
    fn bitonic_sort<K: SortKey>(&self, keys: &[K]) -> Result<Vec<K>>;
    fn bitonic_sort_pairs<K: SortKey, V: Element>(&self, keys: &[K], values: &[V]) -> Result<(Vec<K>, Vec<V>)>;
    fn load_structs<T: Element>(&self, m: usize, aos: &[T]) -> Result<Vec<T>>;
    fn store_structs<T: Element>(&self, m: usize, soa: &[T]) -> Result<Vec<T>>;
    fn roundtrip_structs<T: Element>(&self, m: usize, aos: &[T]) -> Result<Vec<T>>;
    fn compact<T: Element>(&self, x: &[T], pred: &[bool]) -> Result<Compacted<T>>;
    fn append<T: Element>(&self, x: &[T], pred: &[bool]) -> Result<Appended<T>>;
}

impl Warps for WarpHarness {
    fn shfl<T: Element>(&self, x: &[T], src: &[u32]) -> Result<Vec<T>> {
        WarpHarness::shfl(self, x, src)
    }
    fn shfl_up<T: Element>(&self, x: &[T], delta: u32) -> Result<Vec<T>> {
        WarpHarness::shfl_up(self, x, delta)
    }
    fn shfl_down<T: Element>(&self, x: &[T], delta: u32) -> Result<Vec<T>> {
        WarpHarness::shfl_down(self, x, delta)
    }
    fn shfl_xor<T: Element>(&self, x: &[T], lane_mask: u32) -> Result<Vec<T>> {
        WarpHarness::shfl_xor(self, x, lane_mask)
    }
    fn broadcast<T: Element>(&self, x: &[T], src: &[u32]) -> Result<Vec<T>> {
        WarpHarness::broadcast(self, x, src)
    }
    fn broadcast_last<T: Element>(&self, x: &[T], pred: &[bool]) -> Result<(Vec<T>, Vec<bool>)> {
        WarpHarness::broadcast_last(self, x, pred)
    }
    fn reduce<T: Element>(&self, x: &[T], op: Op) -> Result<Vec<T>> {
        WarpHarness::reduce(self, x, op)
    }
    fn inclusive_scan<T: Element>(&self, x: &[T], op: Op) -> Result<Vec<T>> {
        WarpHarness::inclusive_scan(self, x, op)
    }
    fn exclusive_scan<T: Element>(&self, x: &[T], op: Op) -> Result<ExclusiveScan<T>> {
        WarpHarness::exclusive_scan(self, x, op)
    }
    fn scan_pred<T: Element>(&self, x: &[T]) -> Result<Vec<T>> {
        WarpHarness::scan_pred(self, x)
    }
    fn bitonic_sort<K: SortKey>(&self, keys: &[K]) -> Result<Vec<K>> {
        WarpHarness::bitonic_sort(self, keys)
    }
    fn bitonic_sort_pairs<K: SortKey, V: Element>(&self, keys: &[K], values: &[V]) -> Result<(Vec<K>, Vec<V>)> {
        WarpHarness::bitonic_sort_pairs(self, keys, values)
    }
    fn load_structs<T: Element>(&self, m: usize, aos: &[T]) -> Result<Vec<T>> {
        WarpHarness::load_structs(self, m, aos)
    }
    fn store_structs<T: Element>(&self, m: usize, soa: &[T]) -> Result<Vec<T>> {
        WarpHarness::store_structs(self, m, soa)
    }
    fn roundtrip_structs<T: Element>(&self, m: usize, aos: &[T]) -> Result<Vec<T>> {
        WarpHarness::roundtrip_structs(self, m, aos)
    }
    fn compact<T: Element>(&self, x: &[T], pred: &[bool]) -> Result<Compacted<T>> {
        WarpHarness::compact(self, x, pred)
    }
    fn append<T: Element>(&self, x: &[T], pred: &[bool]) -> Result<Appended<T>> {
        WarpHarness::append(self, x, pred)
    }
}

/// The references, with the structure exchange run through the schedule
/// model warp by warp.
struct CpuModel;

impl CpuModel {
    /// Lane g of the SoA view holds structure g's words after the model's
    /// c2r on coalesced registers.
    fn load<T: Element>(m: usize, aos: &[T]) -> Vec<T> {
        let n = aos.len() / m;
        let mut soa = vec![T::default(); aos.len()];
        for (w, chunk) in aos.chunks(WARP * m).enumerate() {
            let mut lanes: Vec<Vec<T>> = (0..WARP).map(|s| (0..m).map(|j| chunk[s + WARP * j]).collect()).collect();
            r::c2r_model(&mut lanes);
            for (l, lane) in lanes.iter().enumerate() {
                for (i, &v) in lane.iter().enumerate() {
                    soa[i * n + w * WARP + l] = v;
                }
            }
        }
        soa
    }

    fn store<T: Element>(m: usize, soa: &[T]) -> Vec<T> {
        let n = soa.len() / m;
        let mut aos = vec![T::default(); soa.len()];
        for (w, chunk) in aos.chunks_mut(WARP * m).enumerate() {
            let mut lanes: Vec<Vec<T>> =
                (0..WARP).map(|l| (0..m).map(|i| soa[i * n + w * WARP + l]).collect()).collect();
            r::r2c_model(&mut lanes);
            for (s, lane) in lanes.iter().enumerate() {
                for (j, &v) in lane.iter().enumerate() {
                    chunk[s + WARP * j] = v;
                }
            }
        }
        aos
    }
}

impl Warps for CpuModel {
    fn shfl<T: Element>(&self, x: &[T], src: &[u32]) -> Result<Vec<T>> {
        Ok(r::shfl(x, src))
    }
    fn shfl_up<T: Element>(&self, x: &[T], delta: u32) -> Result<Vec<T>> {
        Ok(r::shfl_up(x, delta))
    }
    fn shfl_down<T: Element>(&self, x: &[T], delta: u32) -> Result<Vec<T>> {
        Ok(r::shfl_down(x, delta))
    }
    fn shfl_xor<T: Element>(&self, x: &[T], lane_mask: u32) -> Result<Vec<T>> {
        Ok(r::shfl_xor(x, lane_mask))
    }
    fn broadcast<T: Element>(&self, x: &[T], src: &[u32]) -> Result<Vec<T>> {
        Ok(r::broadcast(x, src))
    }
    fn broadcast_last<T: Element>(&self, x: &[T], pred: &[bool]) -> Result<(Vec<T>, Vec<bool>)> {
        Ok(r::broadcast_last(x, pred))
    }
    fn reduce<T: Element>(&self, x: &[T], op: Op) -> Result<Vec<T>> {
        Ok(r::reduce(x, op))
    }
    fn inclusive_scan<T: Element>(&self, x: &[T], op: Op) -> Result<Vec<T>> {
        Ok(r::inclusive_scan(x, op))
    }
    fn exclusive_scan<T: Element>(&self, x: &[T], op: Op) -> Result<ExclusiveScan<T>> {
        let (values, totals) = r::exclusive_scan(x, op);
        Ok(ExclusiveScan { values_with_total: values.clone(), values, totals })
    }
    fn scan_pred<T: Element>(&self, x: &[T]) -> Result<Vec<T>> {
        Ok(r::scan_pred(x))
    }
    fn bitonic_sort<K: SortKey>(&self, keys: &[K]) -> Result<Vec<K>> {
        // The network, not the reference's plain sort.
        Ok(r::bitonic_sort_pairs(keys, &vec![0u32; keys.len()]).0)
    }
    fn bitonic_sort_pairs<K: SortKey, V: Element>(&self, keys: &[K], values: &[V]) -> Result<(Vec<K>, Vec<V>)> {
        Ok(r::bitonic_sort_pairs(keys, values))
    }
    fn load_structs<T: Element>(&self, m: usize, aos: &[T]) -> Result<Vec<T>> {
        Ok(Self::load(m, aos))
    }
    fn store_structs<T: Element>(&self, m: usize, soa: &[T]) -> Result<Vec<T>> {
        Ok(Self::store(m, soa))
    }
    fn roundtrip_structs<T: Element>(&self, m: usize, aos: &[T]) -> Result<Vec<T>> {
        Ok(Self::store(m, &Self::load(m, aos)))
    }
    fn compact<T: Element>(&self, x: &[T], pred: &[bool]) -> Result<Compacted<T>> {
        Ok(r::compact(x, pred))
    }
    fn append<T: Element>(&self, x: &[T], pred: &[bool]) -> Result<Appended<T>> {
        // Warps in reverse order, as a GPU might land them.
        let mut values = Vec::new();
        let mut sources = Vec::new();
        for w in (0..x.len() / WARP).rev() {
            for g in w * WARP..(w + 1) * WARP {
                if pred[g] {
                    values.push(x[g]);
                    sources.push(g as u32);
                }
            }
        }
        Ok(Appended { values, sources })
    }
}

// ---- GPU tests ------------------------------------------------------------------

fn check_shuffles<T: TestElem>(h: &impl Warps) {
    let mut rng = Rng::new(1);
    for nw in WARP_COUNTS {
        let n = nw * WARP;
        let x: Vec<T> = random_vec(&mut rng, n);
        let what = |f: &str| format!("{f}::<{}> on {nw} warps", T::NAME);
        // Source lanes up to 63: the hardware takes them modulo 32.
        let src: Vec<u32> = (0..n).map(|_| rng.below(64) as u32).collect();
        assert_bits_eq(&h.shfl(&x, &src).unwrap(), &r::shfl(&x, &src), &what("shfl"));
        for d in [0, 1, 5, 16, 31] {
            assert_bits_eq(&h.shfl_up(&x, d).unwrap(), &r::shfl_up(&x, d), &what(&format!("shfl_up {d}")));
            assert_bits_eq(&h.shfl_down(&x, d).unwrap(), &r::shfl_down(&x, d), &what(&format!("shfl_down {d}")));
            assert_bits_eq(&h.shfl_xor(&x, d).unwrap(), &r::shfl_xor(&x, d), &what(&format!("shfl_xor {d}")));
        }
    }
}

#[test]
fn shuffles_match_reference() {
    let Some(gpu) = warpmc_testkit::gpu_or_skip("shuffles_match_reference") else { return };
    let h = WarpHarness::new(gpu);
    for_each_type!(check_shuffles(&h));
}

fn check_broadcasts<T: TestElem>(h: &impl Warps) {
    let mut rng = Rng::new(2);
    for nw in WARP_COUNTS {
        let n = nw * WARP;
        let x: Vec<T> = random_vec(&mut rng, n);
        let src: Vec<u32> = (0..nw).map(|_| rng.below(32) as u32).collect();
        assert_bits_eq(&h.broadcast(&x, &src).unwrap(), &r::broadcast(&x, &src), "broadcast");
        for density in [0.0, 0.02, 0.3, 1.0] {
            let mut pred: Vec<bool> = (0..n).map(|_| rng.chance(density)).collect();
            // Warps with one match in lane 0 and in lane 31: bfind's ends.
            if nw >= 3 && density == 0.0 {
                pred[0] = true;
                pred[2 * WARP - 1] = true;
            }
            let (got, found) = h.broadcast_last(&x, &pred).unwrap();
            let (want, want_found) = r::broadcast_last(&x, &pred);
            let what = format!("broadcast_last::<{}> on {nw} warps, density {density}", T::NAME);
            assert_bits_eq(&got, &want, &what);
            assert_eq!(found, want_found, "{what}: found");
        }
    }
}

#[test]
fn broadcasts_match_reference() {
    let Some(gpu) = warpmc_testkit::gpu_or_skip("broadcasts_match_reference") else { return };
    let h = WarpHarness::new(gpu);
    for_each_type!(check_broadcasts(&h));
}

fn check_reduce_and_scans<T: TestElem>(h: &impl Warps) {
    let mut rng = Rng::new(3);
    for nw in WARP_COUNTS {
        let n = nw * WARP;
        let mut x: Vec<T> = random_vec(&mut rng, n);
        for op in Op::ALL {
            let what = |f: &str| format!("{f}::<{}> {} on {nw} warps", T::NAME, op.name());
            let got = h.reduce(&x, op).unwrap();
            assert_op_eq(op, &got, &r::reduce(&x, op), &x, &what("reduce"));
            // Every lane of a warp holds the same bits.
            for w in got.chunks(WARP) {
                assert!(w.iter().all(|&v| same_bits(v, w[0])), "{}: lanes differ", what("reduce"));
            }
            assert_op_eq(op, &h.inclusive_scan(&x, op).unwrap(), &r::inclusive_scan(&x, op), &x, &what("inclusive"));
            let ex = h.exclusive_scan(&x, op).unwrap();
            let (want, totals) = r::exclusive_scan(&x, op);
            assert_op_eq(op, &ex.values, &want, &x, &what("exclusive"));
            assert_bits_eq(&ex.values_with_total, &ex.values, &what("exclusive with total vs without"));
            assert_op_eq(op, &ex.totals, &totals, &x, &what("exclusive totals"));
            for w in ex.values.chunks(WARP) {
                assert!(same_bits(w[0], T::identity(op)), "{}: lane 0 is not the identity", what("exclusive"));
            }
        }
        let what = format!("scan_pred::<{}> on {nw} warps", T::NAME);
        let pred = h.scan_pred(&x).unwrap();
        assert_sums_close(&pred, &r::scan_pred(&x), &x, &what);
        // The same additions in the same order as the intrinsic scan.
        assert_bits_eq(&pred, &h.inclusive_scan(&x, Op::Sum).unwrap(), &format!("{what} vs inclusive_scan"));
        // Floats: NaNs are ignored by min and max.
        if T::FLOAT {
            for v in x.iter_mut() {
                if rng.chance(0.2) {
                    *v = T::from_f64(f64::NAN);
                }
            }
            // One warp of NaNs only: the result is NaN.
            for v in &mut x[..WARP] {
                *v = T::from_f64(f64::NAN);
            }
            for op in [Op::Min, Op::Max] {
                let what = format!("reduce::<{}> {} with NaNs on {nw} warps", T::NAME, op.name());
                assert_minmax_eq(&h.reduce(&x, op).unwrap(), &r::reduce(&x, op), &what);
                assert_minmax_eq(&h.inclusive_scan(&x, op).unwrap(), &r::inclusive_scan(&x, op), &what);
            }
        }
    }
}

#[test]
fn reduce_and_scans_match_reference() {
    let Some(gpu) = warpmc_testkit::gpu_or_skip("reduce_and_scans_match_reference") else { return };
    let h = WarpHarness::new(gpu);
    for_each_type!(check_reduce_and_scans(&h));
}

/// Sort inputs: random, few distinct values, all equal, sorted, reversed,
/// and the type's special values, one kind per warp (round robin).
fn sort_inputs<T: TestElem>(rng: &mut Rng, nw: usize) -> Vec<T> {
    let specials = T::specials();
    let mut keys = Vec::with_capacity(nw * WARP);
    for w in 0..nw {
        let warp: Vec<T> = match w % 6 {
            0 => random_vec(rng, WARP),
            1 => (0..WARP).map(|_| T::small(rng)).collect(),
            2 => vec![T::random(rng); WARP],
            3 => r::bitonic_sort(&random_vec::<T>(rng, WARP)),
            4 => {
                let mut v = r::bitonic_sort(&random_vec::<T>(rng, WARP));
                v.reverse();
                v
            }
            _ => (0..WARP).map(|_| specials[rng.below(specials.len() as u64) as usize]).collect(),
        };
        keys.extend(warp);
    }
    keys
}

fn check_bitonic_sort<T: TestElem>(h: &impl Warps) {
    let mut rng = Rng::new(4);
    for nw in [1, 3, 6, 1000] {
        let keys = sort_inputs::<T>(&mut rng, nw);
        let got = h.bitonic_sort(&keys).unwrap();
        assert_bits_eq(&got, &r::bitonic_sort(&keys), &format!("bitonic_sort::<{}> on {nw} warps", T::NAME));
    }
}

#[test]
fn bitonic_sort_matches_reference() {
    let Some(gpu) = warpmc_testkit::gpu_or_skip("bitonic_sort_matches_reference") else { return };
    let h = WarpHarness::new(gpu);
    for_each_type!(check_bitonic_sort(&h));
}

fn check_pairs_with<K: TestElem, V: TestElem>(h: &impl Warps, nw: usize, rng: &mut Rng) {
    let keys = sort_inputs::<K>(rng, nw);
    // Distinct values, so a lost or duplicated value is visible.
    let values: Vec<V> = iota(keys.len());
    let what = format!("bitonic_sort_pairs::<{}, {}> on {nw} warps", K::NAME, V::NAME);
    let (gk, gv) = h.bitonic_sort_pairs(&keys, &values).unwrap();
    // The keys are sorted, and every value still sits next to its key.
    assert_bits_eq(&gk, &r::bitonic_sort(&keys), &what);
    for (i, (&k, &v)) in gk.iter().zip(&gv).enumerate() {
        let from = v.to_f64() as usize;
        assert!(from / WARP == i / WARP && same_bits(keys[from], k), "{what}: lane {i} has value {v:?} with key {k:?}");
    }
    let mut seen: Vec<u64> = gv.iter().map(|v| v.to_f64() as u64).collect();
    seen.sort_unstable();
    assert!(seen.iter().enumerate().all(|(i, &s)| s == i as u64), "{what}: values lost or duplicated");
    // And the order among equal keys is the simulated network's.
    let (rk, rv) = r::bitonic_sort_pairs(&keys, &values);
    assert_bits_eq(&gk, &rk, &what);
    assert_bits_eq(&gv, &rv, &format!("{what}: values"));
}

fn check_pairs<K: TestElem>(h: &impl Warps) {
    let mut rng = Rng::new(5);
    for nw in [1, 3, 6] {
        check_pairs_with::<K, i32>(h, nw, &mut rng);
        check_pairs_with::<K, u32>(h, nw, &mut rng);
        check_pairs_with::<K, i64>(h, nw, &mut rng);
        check_pairs_with::<K, u64>(h, nw, &mut rng);
        check_pairs_with::<K, f32>(h, nw, &mut rng);
        check_pairs_with::<K, f64>(h, nw, &mut rng);
    }
    check_pairs_with::<K, u32>(h, 1000, &mut rng);
    check_pairs_with::<K, f64>(h, 1000, &mut rng);
}

#[test]
fn bitonic_sort_pairs_matches_reference() {
    let Some(gpu) = warpmc_testkit::gpu_or_skip("bitonic_sort_pairs_matches_reference") else { return };
    let h = WarpHarness::new(gpu);
    for_each_type!(check_pairs(&h));
}

fn check_structs<T: TestElem>(h: &impl Warps) {
    let mut rng = Rng::new(6);
    for m in 1..=8 {
        for nw in WARP_COUNTS {
            let what = format!("structs::<{}> m = {m} on {nw} warps", T::NAME);
            let words = nw * WARP * m;
            for aos in [iota::<T>(words), random_vec::<T>(&mut rng, words)] {
                let soa = h.load_structs(m, &aos).unwrap();
                assert_bits_eq(&soa, &r::aos_to_soa(m, &aos), &format!("{what}: load"));
                let stored = h.store_structs(m, &soa).unwrap();
                assert_bits_eq(&stored, &aos, &format!("{what}: store"));
                let back = h.roundtrip_structs(m, &aos).unwrap();
                assert_bits_eq(&back, &aos, &format!("{what}: round trip"));
            }
        }
    }
}

#[test]
fn struct_exchange_matches_reference() {
    let Some(gpu) = warpmc_testkit::gpu_or_skip("struct_exchange_matches_reference") else { return };
    let h = WarpHarness::new(gpu);
    for_each_type!(check_structs(&h));
}

fn check_compaction<T: TestElem>(h: &impl Warps) {
    let mut rng = Rng::new(7);
    for nw in WARP_COUNTS {
        let n = nw * WARP;
        for density in [0.0, 0.1, 0.5, 1.0] {
            let what = format!("compact::<{}> on {nw} warps, density {density}", T::NAME);
            let x: Vec<T> = random_vec(&mut rng, n);
            let pred: Vec<bool> = (0..n).map(|_| rng.chance(density)).collect();
            let got = h.compact(&x, &pred).unwrap();
            let want = r::compact(&x, &pred);
            assert_bits_eq(&got.values, &want.values, &what);
            assert_eq!(got.slots, want.slots, "{what}: slots");
            assert_eq!(got.counts, want.counts, "{what}: counts");

            let app = h.append(&x, &pred).unwrap();
            let what = format!("append::<{}> on {nw} warps, density {density}", T::NAME);
            let selected: Vec<u32> = (0..n as u32).filter(|&g| pred[g as usize]).collect();
            assert_eq!(app.values.len(), selected.len(), "{what}: count");
            let mut sources = app.sources.clone();
            sources.sort_unstable();
            assert_eq!(sources, selected, "{what}: which lanes appended");
            for (i, (&v, &s)) in app.values.iter().zip(&app.sources).enumerate() {
                assert!(same_bits(v, x[s as usize]), "{what}: entry {i} is not lane {s}'s value");
            }
            // Each warp's entries form one run in lane order.
            for w in 0..nw as u32 {
                let at: Vec<usize> = (0..app.sources.len()).filter(|&i| app.sources[i] / WARP as u32 == w).collect();
                if let (Some(&first), Some(&last)) = (at.first(), at.last()) {
                    assert_eq!(last - first + 1, at.len(), "{what}: warp {w}'s entries are not contiguous");
                    assert!(
                        at.windows(2).all(|p| app.sources[p[0]] < app.sources[p[1]]),
                        "{what}: warp {w}'s entries are not in lane order"
                    );
                }
            }
        }
    }
}

#[test]
fn compaction_matches_reference() {
    let Some(gpu) = warpmc_testkit::gpu_or_skip("compaction_matches_reference") else { return };
    let h = WarpHarness::new(gpu);
    for_each_type!(check_compaction(&h));
}

#[test]
fn harness_rejects_partial_warps() {
    let Some(gpu) = warpmc_testkit::gpu_or_skip("harness_rejects_partial_warps") else { return };
    let h = WarpHarness::new(gpu);
    assert!(h.reduce(&[1u32; 33], Op::Sum).is_err());
    assert!(h.load_structs(3, &[1u32; 32 * 2]).is_err());
    assert!(h.load_structs(9, &[1u32; 32 * 9]).is_err());
    assert!(h.shfl_up(&[1u32; 32], 32).is_err());
    assert!(h.reduce::<u32>(&[], Op::Sum).unwrap().is_empty());
}

#[test]
fn checks_hold_for_the_cpu_model() {
    let h = CpuModel;
    for_each_type!(check_shuffles(&h));
    for_each_type!(check_broadcasts(&h));
    for_each_type!(check_reduce_and_scans(&h));
    for_each_type!(check_bitonic_sort(&h));
    for_each_type!(check_pairs(&h));
    for_each_type!(check_structs(&h));
    for_each_type!(check_compaction(&h));
}

// ---- CPU tests of the transpose schedule ----------------------------------------

/// Lane `s` holds words `s + 32j` (coalesced loads).
fn coalesced(m: usize) -> Vec<Vec<usize>> {
    (0..WARP).map(|s| (0..m).map(|j| s + WARP * j).collect()).collect()
}

/// Lane `l` holds words `l·m + i` (its structure).
fn structured(m: usize) -> Vec<Vec<usize>> {
    (0..WARP).map(|l| (0..m).map(|i| l * m + i).collect()).collect()
}

#[test]
fn transpose_schedule_model_c2r_and_r2c() {
    // 2..8 is what the kernels are tested with; the schedule holds for any
    // m up to 32 (and beyond), which the header allows.
    for m in 1..=32 {
        let mut lanes = coalesced(m);
        assert_eq!(r::c2r_model(&mut lanes), m, "m = {m}: one shuffle per register");
        assert_eq!(lanes, structured(m), "c2r, m = {m}");
        assert_eq!(r::r2c_model(&mut lanes), m);
        assert_eq!(lanes, coalesced(m), "r2c, m = {m}");
    }
    // Every word is distinct, so the results above also show that no
    // shuffle step reads one source lane twice (that would duplicate a word).
}

proptest! {
    #[test]
    fn transpose_model_round_trips_any_words(m in 1usize..=8, seed in any::<u64>()) {
        let mut rng = Rng::new(seed);
        let words: Vec<u64> = (0..WARP * m).map(|_| rng.next_u64()).collect();
        let mut lanes: Vec<Vec<u64>> = (0..WARP).map(|s| (0..m).map(|j| words[s + WARP * j]).collect()).collect();
        r::c2r_model(&mut lanes);
        for (l, lane) in lanes.iter().enumerate() {
            prop_assert_eq!(&lane[..], &words[l * m..(l + 1) * m]);
        }
        r::r2c_model(&mut lanes);
        for (s, lane) in lanes.iter().enumerate() {
            for (j, &w) in lane.iter().enumerate() {
                prop_assert_eq!(w, words[s + WARP * j]);
            }
        }
    }

    #[test]
    fn sorting_network_sorts_and_permutes(keys in proptest::collection::vec(0u32..6, 32)) {
        let values: Vec<u32> = (0..32).collect();
        let (k, v) = r::bitonic_sort_pairs(&keys, &values);
        prop_assert_eq!(&k, &r::bitonic_sort(&keys));
        let mut seen = v.clone();
        seen.sort_unstable();
        prop_assert_eq!(&seen, &values);
        for (key, val) in k.iter().zip(&v) {
            prop_assert_eq!(*key, keys[*val as usize]);
        }
    }

    #[test]
    fn sorting_network_orders_floats_totally(bits in proptest::collection::vec(any::<u32>(), 32)) {
        let keys: Vec<f32> = bits.iter().map(|&b| f32::from_bits(b)).collect();
        let values: Vec<u32> = (0..32).collect();
        let (k, _) = r::bitonic_sort_pairs(&keys, &values);
        let mut want = keys.clone();
        want.sort_by(f32::total_cmp);
        prop_assert_eq!(k.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), want.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
    }
}
