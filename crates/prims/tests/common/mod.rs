//! Helpers shared by the integration tests (each test file uses part of
//! them): a CPU model of the atomics kernels' peer masks, and testkit's
//! inputs and reference checks.

#![allow(dead_code)]

use warpmc_prims::atomics::PeerMethod;

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
