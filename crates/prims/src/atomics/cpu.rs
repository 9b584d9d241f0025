//! The CPU side: sequential sums in input order (deterministic), the
//! reference the GPU is held to.

use super::{AtomicValue, check_nbins};
use crate::error::{Result, ensure};

/// `bins[k] = Σ values[i]` over the elements with `keys[i] == k`, for `k` in
/// `0..nbins`; keys `>= nbins` are ignored.
pub(crate) fn reduce_by_key_dense<V: AtomicValue>(keys: &[u32], values: &[V], nbins: usize) -> Result<Vec<V>> {
    ensure(keys.len() == values.len(), || {
        format!("reduce_by_key_dense: {} keys but {} values", keys.len(), values.len())
    })?;
    check_nbins(nbins)?;
    let mut bins = zeroed_bins::<V>(nbins)?;
    for (&k, &v) in keys.iter().zip(values) {
        if let Some(b) = bins.get_mut(k as usize) {
            *b = b.add(v);
        }
    }
    Ok(bins)
}

/// `counts[k]` = number of keys equal to `k`, for `k` in `0..nbins`; keys
/// `>= nbins` are ignored. Counts wrap at 2^32.
pub(crate) fn histogram(keys: &[u32], nbins: usize) -> Result<Vec<u32>> {
    check_nbins(nbins)?;
    let mut counts = zeroed_bins::<u32>(nbins)?;
    for &k in keys {
        if let Some(c) = counts.get_mut(k as usize) {
            *c = c.wrapping_add(1);
        }
    }
    Ok(counts)
}

/// `nbins` zero bins, or an error where the host has not the memory for
/// them (`nbins` may be up to 2^32 - 1: tens of GiB of wide values).
fn zeroed_bins<V: Default + Clone>(nbins: usize) -> Result<Vec<V>> {
    let bytes = (nbins as u64).saturating_mul(std::mem::size_of::<V>() as u64);
    warpmc_host::check_allocation(&format!("a result of {nbins} bins"), bytes)
        .map_err(crate::PrimsError::OutOfHostMemory)?;
    Ok(vec![V::default(); nbins])
}
