//! The CPU's bit-sliced update with AVX2: eight word columns (eight units,
//! 256 sites) of a row per 256-bit register, through the same generic code
//! as the 32- and 64-bit words ([`crate::sliced::update_word`]), compiled
//! for AVX2. Each 32-bit
//! lane is one word of the GPU's update and draws from its own unit's row
//! generator (eight multiply-with-carry generators in the eight lanes, each
//! stepped only while its lane needs words), so the result is the same.

use crate::algorithm::MWC_MULTIPLIER;
use crate::layout::{BlockRows, plane_index};
use crate::sliced::{Draw, SlicedRule, Word, update_word};

/// Whether this CPU can run [`group`].
pub(crate) fn available() -> bool {
    is_x86_feature_detected!("avx2")
}

/// Eight 32-bit words of sites, one per lane. Plain Rust arithmetic: inside
/// [`group`], compiled for AVX2, LLVM turns each operation into one 256-bit
/// instruction (intrinsics would not inline through the generic code).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct V([u32; 8]);

macro_rules! bit_op {
    ($trait:ident, $f:ident, $assign:ident, $fa:ident, $op:tt) => {
        impl std::ops::$trait for V {
            type Output = V;
            #[inline(always)]
            fn $f(self, o: V) -> V {
                V(std::array::from_fn(|l| self.0[l] $op o.0[l]))
            }
        }
        impl std::ops::$assign for V {
            #[inline(always)]
            fn $fa(&mut self, o: V) {
                *self = std::ops::$trait::$f(*self, o);
            }
        }
    };
}
bit_op!(BitAnd, bitand, BitAndAssign, bitand_assign, &);
bit_op!(BitOr, bitor, BitOrAssign, bitor_assign, |);
bit_op!(BitXor, bitxor, BitXorAssign, bitxor_assign, ^);

impl std::ops::Not for V {
    type Output = V;
    #[inline(always)]
    fn not(self) -> V {
        V(self.0.map(|x| !x))
    }
}

impl Word for V {
    const ZERO: V = V([0; 8]);
    const ONES: V = V([!0; 8]);
    #[inline(always)]
    fn splat(m: u32) -> V {
        V([m; 8])
    }
}

/// The eight lanes' generators (x and carry words).
struct Oct {
    x: [u32; 8],
    c: [u32; 8],
}

impl Draw<V> for Oct {
    #[inline(always)]
    fn draw(&mut self, live: V) -> V {
        let mut out = [0u32; 8];
        for (l, o) in out.iter_mut().enumerate() {
            let t = u64::from(self.x[l]) * u64::from(MWC_MULTIPLIER) + u64::from(self.c[l]);
            *o = t as u32;
            // Only the lanes with a live site step their generator.
            let keep = 0u32.wrapping_sub((live.0[l] == 0) as u32);
            self.x[l] = (self.x[l] & keep) | (t as u32 & !keep);
            self.c[l] = (self.c[l] & keep) | ((t >> 32) as u32 & !keep);
        }
        V(out)
    }
}

/// Row `y`'s words w … w + 7 (w + 7 < wr) of each plane of `a`, as lanes:
/// 8·P consecutive u32 (planes side by side), one bounds check.
#[inline(always)]
fn lanes<const P: usize>(a: &[u32], y: usize, w: usize, wr: usize) -> [V; P] {
    let base = plane_index(y, 0, w, P, wr);
    let words = &a[base..base + 8 * P];
    std::array::from_fn(|p| V(std::array::from_fn(|l| words[l * P + p])))
}

/// The plane words of word `w` of row `y`.
#[inline(always)]
fn word<const P: usize>(a: &[u32], y: usize, w: usize, wr: usize) -> [u32; P] {
    let base = plane_index(y, 0, w, P, wr);
    std::array::from_fn(|p| a[base + p])
}

/// Philox4x32-10 for eight counters at once (lane l: `ctr[·][l]`), one key;
/// plain lane arithmetic that the AVX2 build vectorises. Returns word i of
/// lane l's block in `[i][l]`.
#[inline(always)]
fn philox8(mut ctr: [[u32; 8]; 4], key: [u32; 2]) -> [[u32; 8]; 4] {
    use warpmc_rng::philox::{PHILOX_M0, PHILOX_M1, PHILOX_ROUNDS, PHILOX_W0, PHILOX_W1};
    let mut k = key;
    for r in 0..PHILOX_ROUNDS {
        if r > 0 {
            k[0] = k[0].wrapping_add(PHILOX_W0);
            k[1] = k[1].wrapping_add(PHILOX_W1);
        }
        let mut next = [[0u32; 8]; 4];
        for l in 0..8 {
            let p0 = u64::from(PHILOX_M0) * u64::from(ctr[0][l]);
            let p1 = u64::from(PHILOX_M1) * u64::from(ctr[2][l]);
            next[0][l] = (p1 >> 32) as u32 ^ ctr[1][l] ^ k[0];
            next[1][l] = p1 as u32;
            next[2][l] = (p0 >> 32) as u32 ^ ctr[3][l] ^ k[1];
            next[3][l] = p0 as u32;
        }
        ctr = next;
    }
    ctr
}

/// The start states (x, carry) of the eight row generators of units
/// `first` … `first + 7` ([`sliced::unit_generators`], computed eight
/// units at a time): `[row][lane]`.
#[inline(always)]
fn row_states(seed: u64, stream: u64, sweep: u64, colour: u32, first: u64) -> ([[u32; 8]; 8], [[u32; 8]; 8]) {
    use warpmc_rng::stream::{block_counter, seed_key};
    let (mut x, mut c) = ([[0u32; 8]; 8], [[0u32; 8]; 8]);
    for j in 0..4u64 {
        let mut ctr = [[0u32; 8]; 4];
        for l in 0..8u64 {
            let n = crate::algorithm::block_counter(sweep, colour, 4 * (first + l) + j);
            let w = block_counter(stream, n);
            for i in 0..4 {
                ctr[i][l as usize] = w[i];
            }
        }
        let w = philox8(ctr, seed_key(seed));
        // Rows 2j (words 0, 1) and 2j + 1 (words 2, 3), seeded as
        // warpmc_rng::mwc::seed_state does.
        for (row, (wx, wc)) in [(2 * j as usize, (0, 1)), (2 * j as usize + 1, (2, 3))] {
            for l in 0..8 {
                let state = warpmc_rng::mwc::seed_state(MWC_MULTIPLIER, w[wx][l], w[wc][l]);
                x[row][l] = state as u32;
                c[row][l] = (state >> 32) as u32;
            }
        }
    }
    (x, c)
}

/// Updates rows 0 … 7 of a row-block in word columns w … w + 7 (all below
/// `wr`): `block` is the row-block of the colour being updated, `other` the
/// other colour's array, `rows` where the row-block's neighbours sit in it.
///
/// # Safety
///
/// The CPU must have AVX2 ([`available`]).
#[target_feature(enable = "avx2")]
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn group<const P: usize, const Q: u32>(
    block: &mut [u32],
    other: &[u32],
    rows: &BlockRows,
    (w, wr): (usize, usize),
    colour: usize,
    rule: &SlicedRule,
    (seed, stream, sweep): (u64, u64, u64),
) {
    let (xs, cs) = row_states(seed, stream, sweep, colour as u32, (rows.unit_block * wr + w) as u64);
    for i in 0..8 {
        let [same, above, below] = rows.rows[i];
        let (cur, up, down) =
            (lanes::<P>(other, same, w, wr), lanes::<P>(other, above, w, wr), lanes::<P>(other, below, w, wr));
        // The side neighbours: this row shifted by one site, the edge bit
        // from the word before (offset 0) or after (offset 1): lane k's is
        // lane k ∓ 1's, the group's first (last) lane takes the word beside
        // the group. Row-blocks start at even rows, so row i's offset is
        // the lattice row's.
        let side: [V; P] = if (i + colour) & 1 == 0 {
            let before = word::<P>(other, same, if w == 0 { wr - 1 } else { w - 1 }, wr);
            std::array::from_fn(|p| {
                let c = cur[p].0;
                V(std::array::from_fn(|k| (c[k] << 1) | (if k == 0 { before[p] } else { c[k - 1] } >> 31)))
            })
        } else {
            let after = word::<P>(other, same, if w + 8 == wr { 0 } else { w + 8 }, wr);
            std::array::from_fn(|p| {
                let c = cur[p].0;
                V(std::array::from_fn(|k| (c[k] >> 1) | (if k == 7 { after[p] } else { c[k + 1] } << 31)))
            })
        };
        let s = lanes::<P>(block, i, w, wr);
        let mut oct = Oct { x: xs[i], c: cs[i] };
        let new = update_word::<V, P, Q>(&s, &[up, down, cur, side], rule, &mut oct);
        for (p, v) in new.iter().enumerate() {
            for (l, &word) in v.0.iter().enumerate() {
                block[plane_index(i, p, w + l, P, wr)] = word;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eight_lane_seeding_matches_unit_generators() {
        let (x, c) = row_states(7, 0x1234_5678_9abc, 41, 1, 1000);
        for l in 0..8u64 {
            let gens = crate::sliced::unit_generators(7, 0x1234_5678_9abc, 41, 1, 1000 + l);
            for (row, g) in gens.iter().enumerate() {
                let state = (u64::from(c[row][l as usize]) << 32) | u64::from(x[row][l as usize]);
                assert_eq!(state, g.state(), "unit {l} row {row}");
            }
        }
    }
}
