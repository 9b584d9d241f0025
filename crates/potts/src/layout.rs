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

use crate::lattice::Lattice;

/// Splits a row-major lattice into its two colour arrays.
pub fn split(lattice: &Lattice) -> [Vec<u8>; 2] {
    let (w, h) = (lattice.width(), lattice.height());
    let hw = w / 2;
    let mut out = [vec![0u8; hw * h], vec![0u8; hw * h]];
    for y in 0..h {
        let row = &lattice.spins()[y * w..(y + 1) * w];
        for (x, &s) in row.iter().enumerate() {
            out[(x + y) & 1][y * hw + x / 2] = s;
        }
    }
    out
}

/// Joins two colour arrays back into a row-major lattice.
pub fn join(width: usize, height: usize, q: u32, colours: [&[u8]; 2]) -> Lattice {
    let hw = width / 2;
    let mut spins = vec![0u8; width * height];
    for y in 0..height {
        for x in 0..width {
            spins[y * width + x] = colours[(x + y) & 1][y * hw + x / 2];
        }
    }
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

/// Sites per word in the 4-bit packed format.
pub const SITES_PER_WORD4: usize = 8;

/// Packs a colour array (rows of `half_width` spins, each below 16) four
/// bits per spin: column x_h of a row goes to nibble x_h mod 8 of word
/// ⌊x_h/8⌋ of that row. `half_width` must be a multiple of 8.
pub fn pack4(colour: &[u8], half_width: usize) -> Vec<u32> {
    debug_assert!(half_width % SITES_PER_WORD4 == 0);
    colour
        .chunks_exact(SITES_PER_WORD4)
        .map(|c| c.iter().enumerate().fold(0u32, |w, (i, &s)| w | (u32::from(s) << (4 * i))))
        .collect()
}

/// Inverse of [`pack4`].
pub fn unpack4(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|&w| (0..SITES_PER_WORD4).map(move |i| ((w >> (4 * i)) & 15) as u8)).collect()
}

/// Sites per word in the 1-bit format (q = 2).
pub const SITES_PER_WORD1: usize = 32;

/// Packs a colour array of spins 0/1 one bit per spin: column x_h goes to
/// bit x_h mod 32 of word ⌊x_h/32⌋ of its row. `half_width` must be a
/// multiple of 32.
pub fn pack1(colour: &[u8], half_width: usize) -> Vec<u32> {
    debug_assert!(half_width % SITES_PER_WORD1 == 0);
    colour
        .chunks_exact(SITES_PER_WORD1)
        .map(|c| c.iter().enumerate().fold(0u32, |w, (i, &s)| w | (u32::from(s & 1) << i)))
        .collect()
}

/// Inverse of [`pack1`].
pub fn unpack1(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|&w| (0..SITES_PER_WORD1).map(move |i| ((w >> i) & 1) as u8)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack4_round_trips_and_places_nibbles() {
        let spins: Vec<u8> = (0..48).map(|i| (i * 7 % 16) as u8).collect();
        let words = pack4(&spins, 16);
        assert_eq!(words.len(), 6);
        assert_eq!(words[0] & 15, u32::from(spins[0]));
        assert_eq!(words[1] >> 28, u32::from(spins[15]));
        assert_eq!(unpack4(&words), spins);
    }

    #[test]
    fn pack1_round_trips_and_places_bits() {
        let spins: Vec<u8> = (0..96).map(|i| ((i * 5 + i / 7) % 2) as u8).collect();
        let words = pack1(&spins, 32);
        assert_eq!(words.len(), 3);
        assert_eq!(words[1] & 1, u32::from(spins[32]));
        assert_eq!(words[2] >> 31, u32::from(spins[95]));
        assert_eq!(unpack1(&words), spins);
    }
}
