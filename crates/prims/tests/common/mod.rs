//! Helpers shared by the integration tests (each test file uses part of
//! them): deterministic inputs of any element type, a CPU model of the
//! atomics kernels' peer masks, and the check a GPU's float sums by key are
//! held to.

#![allow(dead_code)]

use std::fmt;

use warpmc_prims::atomics::{AtomicScalar, AtomicValue, PeerMethod};
use warpmc_prims::{AtomicsConfig, CpuPrims, Element, Pod, Primitives, as_bytes_mut};

/// `n` elements whose bits are a fixed pseudo-random function of `seed` and
/// of their index (splitmix64 per 8 bytes): every element differs from its
/// neighbours, so a misplaced one shows.
pub(crate) fn pseudo_random<T: Pod>(n: usize, seed: u64) -> Vec<T> {
    let mut v = vec![T::default(); n];
    for (i, chunk) in as_bytes_mut(&mut v).chunks_mut(8).enumerate() {
        let mut z = seed.wrapping_add((i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        chunk.copy_from_slice(&z.to_le_bytes()[..chunk.len()]);
    }
    v
}

/// The peer mask of every element as the kernels compute it: elements
/// `32w .. 32w + 31` form warp `w`; an element with a key `< nbins` gets
/// the mask of the lanes of its warp that hold its key (for
/// [`PeerMethod::Runs`], only the lanes of its run of equal neighbouring
/// keys); an element with an out-of-range key gets 0.
pub(crate) fn peer_masks(keys: &[u32], nbins: usize, method: PeerMethod) -> Vec<u32> {
    let mut out = vec![0u32; keys.len()];
    for (w, warp) in keys.chunks(32).enumerate() {
        for l in 0..warp.len() {
            if warp[l] as usize >= nbins {
                continue;
            }
            let mut mask = 0u32;
            match method {
                PeerMethod::Ballot | PeerMethod::Match => {
                    for (m, &k) in warp.iter().enumerate() {
                        if k == warp[l] {
                            mask |= 1 << m;
                        }
                    }
                }
                PeerMethod::Runs => {
                    let mut lo = l;
                    while lo > 0 && warp[lo - 1] == warp[l] {
                        lo -= 1;
                    }
                    let mut hi = l + 1;
                    while hi < warp.len() && warp[hi] == warp[l] {
                        hi += 1;
                    }
                    for m in lo..hi {
                        mask |= 1 << m;
                    }
                }
            }
            out[32 * w + l] = mask;
        }
    }
    out
}

/// A bin that differs from the reference by more than the tolerance.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Mismatch {
    pub(crate) bin: usize,
    pub(crate) component: usize,
    pub(crate) got: f64,
    pub(crate) want: f64,
    pub(crate) tolerance: f64,
    pub(crate) bad_bins: usize,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "bin {} component {}: {} instead of {} (tolerance {:e}; {} bins differ)",
            self.bin, self.component, self.got, self.want, self.tolerance, self.bad_bins
        )
    }
}

/// The CPU's sums of a reduction by key, with what a correct result in any
/// order of additions may differ by: integers exactly; floats within
/// `m·ε·Σ|x|` per bin and component of `m` values (two sums of the same
/// values in different orders are within `(m − 1)·ε·Σ|x|` of each other),
/// plus `m` times the smallest normal number, as the GPU's `f32` atomics
/// flush subnormals to zero.
pub(crate) struct Reference<V> {
    sums: Vec<V>,
    tolerance: Vec<f64>,
}

impl<V: AtomicValue> Reference<V> {
    pub(crate) fn new(keys: &[u32], values: &[V], nbins: usize) -> Self {
        let sums = CpuPrims.reduce_by_key_dense(&keys.to_vec(), &values.to_vec(), nbins, AtomicsConfig::default());
        let sums = sums.expect("valid reference inputs");
        let mut counts = vec![0f64; nbins];
        let mut magnitude = vec![0f64; nbins * V::WIDTH];
        for (&k, v) in keys.iter().zip(values) {
            let k = k as usize;
            if k < nbins {
                counts[k] += 1.0;
                for c in 0..V::WIDTH {
                    magnitude[k * V::WIDTH + c] += v.component(c).to_f64().abs();
                }
            }
        }
        let (eps, tiny) = (V::Scalar::EPSILON, V::Scalar::MIN_NORMAL);
        let tolerance = magnitude.iter().enumerate().map(|(j, &m)| counts[j / V::WIDTH] * (eps * m + tiny)).collect();
        Reference { sums, tolerance }
    }

    pub(crate) fn sums(&self) -> &[V] {
        &self.sums
    }

    /// The first bin of `got` outside the tolerance, if any.
    pub(crate) fn check(&self, got: &[V]) -> Result<(), Mismatch> {
        assert_eq!(got.len(), self.sums.len(), "bins");
        let float = <V::Scalar as Element>::FLOAT;
        let mut first = None;
        let mut bad_bins = 0;
        for (bin, (g, w)) in got.iter().zip(&self.sums).enumerate() {
            for c in 0..V::WIDTH {
                let (x, y) = (g.component(c).to_f64(), w.component(c).to_f64());
                let tolerance = if float { self.tolerance[bin * V::WIDTH + c] } else { 0.0 };
                let ok = if float {
                    x == y || (x.is_nan() && y.is_nan()) || (x - y).abs() <= tolerance
                } else {
                    g.component(c) == w.component(c)
                };
                if !ok {
                    bad_bins += 1;
                    first.get_or_insert(Mismatch { bin, component: c, got: x, want: y, tolerance, bad_bins: 0 });
                    break;
                }
            }
        }
        match first {
            None => Ok(()),
            Some(m) => Err(Mismatch { bad_bins, ..m }),
        }
    }
}
