//! The check a GPU's sums by key are held to: the CPU backend's sums, and
//! how far a correct result may differ from them when its additions ran in
//! another order.

use std::fmt;

use serde::Serialize;
use warpmc_prims::atomics::{AtomicScalar, AtomicValue};
use warpmc_prims::{AtomicsConfig, CpuPrims, Element, Primitives, Result};

/// A bin of a result that differs from the [`Reference`] by more than the
/// tolerance.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Mismatch {
    /// The bin.
    pub bin: usize,
    /// The component of the bin's value.
    pub component: usize,
    /// What the checked result holds.
    pub got: f64,
    /// The reference sum.
    pub want: f64,
    /// The largest difference allowed (0 for integers).
    pub tolerance: f64,
    /// Elements in the bin.
    pub count: u64,
    /// Bins that differ, this one included.
    pub bad_bins: usize,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "bin {} component {}: {} instead of {} (tolerance {:e}, {} elements; {} bins differ)",
            self.bin, self.component, self.got, self.want, self.tolerance, self.count, self.bad_bins
        )
    }
}

/// The CPU backend's sums of a reduction by key, with what a correct result
/// in any order of additions may differ by.
///
/// Integers must match exactly. For floats, a sum of `m` terms computed in
/// any order is within `(m − 1)·u·Σ|x|` of the exact sum (u = ε/2, the unit
/// roundoff), so two such sums are within `(m − 1)·ε·Σ|x|` of each other;
/// the check allows `m·ε·Σ|x|` per bin and component (for ~10 values of one
/// sign, about 10 ε relative), plus `m` times the smallest normal number
/// because the GPU's `f32` atomics flush subnormals to zero.
#[derive(Clone, Debug)]
pub struct Reference<V> {
    sums: Vec<V>,
    counts: Vec<u64>,
    tolerance: Vec<f64>,
}

impl<V: AtomicValue> Reference<V> {
    /// The reference for `keys`, `values` into `nbins` bins (keys `>=
    /// nbins` ignored).
    pub fn new(keys: &[u32], values: &[V], nbins: usize) -> Result<Self> {
        let sums = CpuPrims.reduce_by_key_dense(&keys.to_vec(), &values.to_vec(), nbins, AtomicsConfig::default())?;
        let mut counts = vec![0u64; nbins];
        let float = <V::Scalar as Element>::FLOAT;
        let mut magnitude = vec![0.0f64; if float { nbins * V::WIDTH } else { 0 }];
        for (&k, v) in keys.iter().zip(values) {
            let k = k as usize;
            if k < nbins {
                counts[k] += 1;
                if float {
                    for c in 0..V::WIDTH {
                        magnitude[k * V::WIDTH + c] += v.component(c).to_f64().abs();
                    }
                }
            }
        }
        let (eps, tiny) = (V::Scalar::EPSILON, V::Scalar::MIN_NORMAL);
        let tolerance = magnitude
            .iter()
            .enumerate()
            .map(|(j, &m)| {
                let count = counts[j / V::WIDTH] as f64;
                count * (eps * m + tiny)
            })
            .collect();
        Ok(Reference { sums, counts, tolerance })
    }

    /// The reference sums.
    pub fn sums(&self) -> &[V] {
        &self.sums
    }

    /// Elements per bin.
    pub fn counts(&self) -> &[u64] {
        &self.counts
    }

    /// Whether `got` agrees with the reference (see [`Reference`]); the
    /// first differing bin otherwise.
    pub fn check(&self, got: &[V]) -> std::result::Result<(), Mismatch> {
        if got.len() != self.sums.len() {
            return Err(Mismatch {
                bin: got.len().min(self.sums.len()),
                component: 0,
                got: got.len() as f64,
                want: self.sums.len() as f64,
                tolerance: 0.0,
                count: 0,
                bad_bins: got.len().abs_diff(self.sums.len()),
            });
        }
        let float = <V::Scalar as Element>::FLOAT;
        let mut first: Option<Mismatch> = None;
        let mut bad_bins = 0;
        for (bin, (g, w)) in got.iter().zip(&self.sums).enumerate() {
            for c in 0..V::WIDTH {
                let (gc, wc) = (g.component(c), w.component(c));
                let tolerance = if float { self.tolerance[bin * V::WIDTH + c] } else { 0.0 };
                let ok = if float {
                    let (x, y) = (gc.to_f64(), wc.to_f64());
                    x == y || (x.is_nan() && y.is_nan()) || (x - y).abs() <= tolerance
                } else {
                    gc == wc
                };
                if !ok {
                    bad_bins += 1;
                    if first.is_none() {
                        first = Some(Mismatch {
                            bin,
                            component: c,
                            got: gc.to_f64(),
                            want: wc.to_f64(),
                            tolerance,
                            count: self.counts[bin],
                            bad_bins: 0,
                        });
                    }
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
