//! The colour-split layout both backends compute on.
//!
//! Sites of colour c (x + y ≡ c mod 2) are stored in their own array of
//! `height` rows × `width/2` columns: site (x, y) of colour c sits at row y,
//! column ⌊x/2⌋. Updating one colour then writes one array and reads only
//! the other, and the index in the array is the site's number j within its
//! colour that its random numbers are addressed by.
//!
//! With o = (y + c) mod 2 (so x = 2⌊x/2⌋ + o), the four neighbours of
//! column xh in row y of colour c live in the other colour's array at
//! (row y, column xh + o − 1), (row y, column xh + o) — left and right,
//! modulo width/2 — and (row y ± 1, column xh).

use rayon::prelude::*;

use crate::algorithm::UNIT_ROWS;
use crate::lattice::Lattice;

/// Splits a row-major lattice into its two colour arrays (rows in parallel:
/// runs that continue from one temperature to the next move the lattice
/// through the host).
pub fn split(lattice: &Lattice) -> [Vec<u8>; 2] {
    let (w, h) = (lattice.width(), lattice.height());
    let hw = w / 2;
    let mut out = [vec![0u8; hw * h], vec![0u8; hw * h]];
    let [c0, c1] = &mut out;
    c0.par_chunks_mut(hw).zip(c1.par_chunks_mut(hw)).zip(lattice.spins().par_chunks(w)).enumerate().for_each(
        |(y, ((r0, r1), row))| {
            // Colour (x + y) mod 2: even columns go to colour y mod 2.
            let (even, odd) = if y % 2 == 0 { (r0, r1) } else { (r1, r0) };
            for (xh, pair) in row.chunks_exact(2).enumerate() {
                even[xh] = pair[0];
                odd[xh] = pair[1];
            }
        },
    );
    out
}

/// Joins two colour arrays back into a row-major lattice: the inverse of
/// [`split`].
///
/// # Panics
///
/// Unless `width` is even and at least 2, `height` at least 1, each colour
/// array holds `width / 2 × height` spins, all below `q`, and `q` is one
/// [`Lattice::from_spins`] accepts: the arrays [`split`] made of such a
/// lattice.
pub fn join(width: usize, height: usize, q: u32, colours: [&[u8]; 2]) -> Lattice {
    let hw = width / 2;
    let mut spins = vec![0u8; width * height];
    spins.par_chunks_mut(width.max(1)).enumerate().for_each(|(y, row)| {
        let (even, odd) = (colours[y % 2], colours[1 - y % 2]);
        for (xh, pair) in row.chunks_exact_mut(2).enumerate() {
            pair[0] = even[y * hw + xh];
            pair[1] = odd[y * hw + xh];
        }
    });
    Lattice::from_spins(width, height, q, spins).expect("colour arrays hold spins below q")
}

/// Column of the left and right neighbours (in the other colour's array) of
/// column `xh` of a row with offset `o`.
#[inline(always)]
pub fn side_columns(xh: usize, o: usize, hw: usize) -> (usize, usize) {
    let left = if xh + o == 0 { hw - 1 } else { xh + o - 1 };
    let right = if xh + o == hw { 0 } else { xh + o };
    (left, right)
}

/// Where the rows of one row-block of [`UNIT_ROWS`] rows find their
/// neighbours: the row-block's number among the whole lattice's (which
/// names its random numbers), and for each of its rows the rows of the
/// other colour's array holding the same row, the row above and the row
/// below. A whole periodic lattice wraps at its edges
/// ([`BlockRows::periodic`]); a strip of a lattice reads halo rows there
/// ([`crate::strip`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockRows {
    /// Row-block number in the whole lattice (rows `UNIT_ROWS·unit_block …`).
    pub unit_block: usize,
    /// `[same, above, below]` rows of the other colour's array, per row.
    pub rows: [[usize; 3]; UNIT_ROWS],
}

impl BlockRows {
    /// Row-block `b` of a whole periodic lattice of `height` rows (rows past
    /// the last are never read: they do not exist when the height is not a
    /// multiple of [`UNIT_ROWS`]).
    pub fn periodic(b: usize, height: usize) -> Self {
        BlockRows {
            unit_block: b,
            rows: std::array::from_fn(|i| {
                let y = b * UNIT_ROWS + i;
                [y, (y + height - 1) % height, (y + 1) % height]
            }),
        }
    }
}

/// Index of plane `p` of word `w` of row `y` in the bit-plane storage of
/// [`sliced`](crate::sliced): `planes` plane words per word, side by side
/// (one 16-byte load for four planes), `wr` words per row.
#[inline(always)]
pub fn plane_index(y: usize, p: usize, w: usize, planes: usize, wr: usize) -> usize {
    (y * wr + w) * planes + p
}

/// Packs a colour array (rows of `half_width` spins, `half_width` a multiple
/// of 32) into `planes` bit planes: bit p of the spin in column x_h of row y
/// goes to bit x_h mod 32 of word [`plane_index`]`(y, p, ⌊x_h/32⌋)`.
/// Bits of a spin at or above `planes` are dropped, as are the spins after
/// the last whole row and (in release builds, where `half_width` is not a
/// multiple of 32) after each row's last whole word.
///
/// # Panics
///
/// In debug builds, when `planes` is more than 8 (a spin has 8 bits) or
/// `half_width` is not a multiple of 32.
pub fn pack_planes(colour: &[u8], half_width: usize, planes: usize) -> Vec<u32> {
    debug_assert!(half_width.is_multiple_of(32));
    let wr = half_width / 32;
    let rows = colour.len() / half_width.max(1);
    let mut out = vec![0u32; rows * planes * wr];
    out.par_chunks_mut((planes * wr).max(1)).zip(colour.par_chunks(half_width.max(1))).for_each(|(words, row)| {
        for (w, sites) in row.chunks_exact(32).enumerate() {
            for (j, &s) in sites.iter().enumerate() {
                for p in 0..planes {
                    words[w * planes + p] |= u32::from((s >> p) & 1) << j;
                }
            }
        }
    });
    out
}

/// Inverse of [`pack_planes`]: rows of `half_width` spins from `words`;
/// the words after the last whole row are dropped, and spins after a row's
/// last whole word (`half_width` not a multiple of 32) are 0.
///
/// # Panics
///
/// In debug builds, when `planes` is more than 8 (a spin has 8 bits).
pub fn unpack_planes(words: &[u32], half_width: usize, planes: usize) -> Vec<u8> {
    let wr = half_width / 32;
    let rows = words.len() / (planes * wr).max(1);
    let mut out = vec![0u8; rows * half_width];
    out.par_chunks_mut(half_width.max(1)).zip(words.par_chunks((planes * wr).max(1))).for_each(|(row, words)| {
        for (w, sites) in row.chunks_exact_mut(32).enumerate() {
            for (j, s) in sites.iter_mut().enumerate() {
                *s = (0..planes).fold(0u8, |v, p| v | ((((words[w * planes + p] >> j) & 1) as u8) << p));
            }
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn planes_round_trip_and_place_bits() {
        let spins: Vec<u8> = (0..64 * 3).map(|i| ((i * 7 + i / 5) % 11) as u8).collect();
        let words = pack_planes(&spins, 64, 4);
        assert_eq!(words.len(), 3 * 4 * 2);
        // Row 1, column 33: word 1 of each plane, bit 1; planes side by side.
        let s = spins[64 + 33];
        for p in 0..4 {
            assert_eq!((words[(2 + 1) * 4 + p] >> 1) & 1, u32::from((s >> p) & 1));
        }
        assert_eq!(unpack_planes(&words, 64, 4), spins);
    }
}
