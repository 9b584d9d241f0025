//! The bit-sliced update: 32 sites of a row at once, each spin stored as
//! bit planes, and random bits spent only where a site is still undecided.
//!
//! # When it applies
//!
//! For q ≤ 16, no field, width a multiple of 64 and height a multiple of 8
//! ([`fits`]); every backend then uses it (see [`Scheme`](crate::algorithm::Scheme)).
//! Other models use the one-word-per-site rule of [`algorithm`].
//!
//! # Storage
//!
//! Each colour's array (rows of width/2 sites, see [`layout`](crate::layout))
//! is cut into words of 32 sites: column x_h of a row is bit x_h mod 32 of
//! word ⌊x_h/32⌋. A spin takes P = ⌈log₂ q⌉ bits ([`planes`]); bit p of every
//! spin of a word is kept in plane word p. Row y, plane p, word w sits at
//! index (y·(width/64) + w)·P + p ([`layout::plane_index`](crate::layout::plane_index)).
//!
//! # Random numbers
//!
//! A *unit* is one word column of 8 rows: unit k = ⌊y/8⌋·(width/64) + w.
//! Row r of the unit draws from its own multiply-with-carry generator: in
//! sweep t, colour c, the one seeded from the Philox block (seed, stream,
//! (2t + c)·2³² + 4k + ⌊r/2⌋), words (w₀, w₁) for even r and (w₂, w₃) for
//! odd r, exactly as [`algorithm::unit_generators`] seeds a unit's two
//! generators ([`unit_generators`]). Each drawn 32-bit word gives one bit
//! to each of the row's 32 sites: bit j to the site in bit j of the row's
//! word.
//!
//! One generator per row, so that up to eight threads can share a unit on
//! lattices too small to fill a GPU otherwise; two Philox words per
//! generator, because a generator started from one word (with a fixed
//! carry) makes its second output a function of its first, and the Ising
//! validation test then misses Onsager's energy by 27 standard errors.
//!
//! # The update of one row
//!
//! 1. **Proposal.** With m = q − 1 and b = ⌈log₂ m⌉ ([`proposal_bits`]),
//!    b words are drawn; word i gives bit i of each site's step k. When m is
//!    not a power of two, the sites with k ≥ m draw again: b more words are
//!    drawn and only those sites take their bits, until none is left (at
//!    most [`MAX_PROPOSAL_ROUNDS`] rounds; a site still at k ≥ m after that
//!    takes k − m, still another state). The proposal is
//!    s' = (s + 1 + k) mod q, uniform over the q − 1 other states but for
//!    that cut-off, whose probability per site update is (1 − m/2ᵇ)³²: at
//!    most 2⁻³⁸ (q = 10), below 2⁻⁴⁵ for every other q, 0 when m is a power
//!    of two (q = 2, 3, 5, 9).
//! 2. **Energy change.** n = equal neighbours before, n' after, d = n − n',
//!    ΔE = J·d. The threshold θ_d of the [`AcceptanceTable`] (entry Δn + 4
//!    = 4 − d) is 2³² ("always") when ΔE ≤ 0: those sites are accepted
//!    without drawing.
//! 3. **Acceptance.** Each other site compares the uniform number
//!    U = 0.u₁u₂u₃… (binary; u_i its bit of the i-th word drawn now) with
//!    θ_d / 2³², most significant bit first: it is decided at the first i
//!    where u_i differs from bit 32 − i of θ_d, and accepted iff u_i = 0
//!    there. The row draws words while any site is undecided, at most 32;
//!    a site still undecided then has U = θ_d / 2³² in 32 bits and is
//!    rejected. This is the test U < θ_d / 2³² of a 32-bit uniform number,
//!    exactly, but a row spends about log₂ 32 + 1.3 ≈ 6.3 words on it
//!    instead of 32 — the saving that makes this update fast.
//!
//! Random numbers stay a function of (seed, chain, sweep, colour, site and
//! the lattice itself), never of threads: the CPU and every CUDA kernel
//! give the same states bit for bit.

use warpmc_rng::{Mwc, RandomSource};

use crate::algorithm::{self, ALWAYS, AcceptanceTable, UNIT_ROWS};
use crate::error::PottsError;
use crate::model::PottsModel;

/// Sites per word.
pub const WORD_SITES: usize = 32;
/// Largest q the bit-sliced rule runs.
pub const MAX_Q: u32 = 16;
/// Most bit planes (q ≤ [`MAX_Q`]).
pub const MAX_PLANES: usize = 4;
/// Most proposal rounds of one row (first draw included).
pub const MAX_PROPOSAL_ROUNDS: u32 = 32;

/// Bits needed to write v (0 for 0).
const fn bit_len(v: u32) -> u32 {
    32 - v.leading_zeros()
}

/// Bit planes per spin: ⌈log₂ q⌉.
pub const fn planes(q: u32) -> usize {
    bit_len(q - 1) as usize
}

/// Words drawn per proposal round: ⌈log₂ (q − 1)⌉ (0 for Ising).
pub const fn proposal_bits(q: u32) -> usize {
    bit_len(q - 2) as usize
}

/// Whether the bit-sliced update runs `model`.
pub fn fits(model: &PottsModel) -> bool {
    model.q() <= MAX_Q
        && model.field() == 0.0
        && model.width().is_multiple_of(64)
        && model.height().is_multiple_of(UNIT_ROWS)
}

/// The eight row generators of unit `unit` in sweep `sweep`, colour
/// `colour`: generator r serves row r of the unit.
pub fn unit_generators(seed: u64, stream: u64, sweep: u64, colour: u32, unit: u64) -> [Mwc; 8] {
    let pairs: [[Mwc; 2]; 4] =
        std::array::from_fn(|j| algorithm::unit_generators(seed, stream, sweep, colour, 4 * unit + j as u64));
    std::array::from_fn(|r| pairs[r / 2][r % 2])
}

/// Words per row of one colour's array.
pub fn words_per_row(width: usize) -> usize {
    width / 2 / WORD_SITES
}

/// What the update needs of an [`AcceptanceTable`]: which sign of d makes a
/// move uncertain, and the thresholds for |d| = 1 … 4.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlicedRule {
    q: u32,
    sigma: i32,
    thresholds: [u32; 4],
    /// masks[b][i]: all ones where bit b of thresholds[i] is set.
    masks: [[u32; 4]; 32],
}

impl SlicedRule {
    /// The rule for `q` states and `table` (with no field). Fails when the
    /// table is not one a model without field produces: uncertain
    /// thresholds (below 2³²) must be those of d = 1 … 4 or of d = −4 … −1.
    pub fn new(q: u32, table: &AcceptanceTable) -> Result<Self, PottsError> {
        let th = table.without_field();
        let theta = |d: i32| th[(4 - d) as usize];
        let uncertain: Vec<i32> = (-4..=4).filter(|&d| theta(d) < ALWAYS).collect();
        let sigma = match uncertain.as_slice() {
            [] => 0,
            [1, 2, 3, 4] => 1,
            [-4, -3, -2, -1] => -1,
            other => {
                return Err(PottsError::InvalidInput(format!(
                    "the bit-sliced update needs the moves that can be rejected to be those with d = 1..4 or \
                     d = -4..-1 equal neighbours lost; this table has them at d = {other:?}"
                )));
            }
        };
        let thresholds: [u32; 4] =
            std::array::from_fn(|i| if sigma == 0 { 0 } else { theta(sigma * (i as i32 + 1)) as u32 });
        let masks = std::array::from_fn(|b| thresholds.map(|t| 0u32.wrapping_sub((t >> b) & 1)));
        Ok(SlicedRule { q, sigma, thresholds, masks })
    }

    /// A rule that accepts every move (what a backend holds before its
    /// first table).
    pub fn accept_all(q: u32) -> Self {
        SlicedRule { q, sigma: 0, thresholds: [0; 4], masks: [[0; 4]; 32] }
    }

    /// q.
    pub fn q(&self) -> u32 {
        self.q
    }

    /// +1 when moves with d = 1 … 4 are uncertain (J > 0), −1 when those
    /// with d = −1 … −4 are (J < 0), 0 when every move is accepted.
    pub fn sigma(&self) -> i32 {
        self.sigma
    }

    /// θ for |d| = 1, 2, 3, 4 (each below 2³²; 0 where sigma is 0).
    pub fn thresholds(&self) -> [u32; 4] {
        self.thresholds
    }
}

/// A word of sites: 32 (one row's word, as on the GPU) or 64 (two words
/// side by side, which the CPU updates at once; each half keeps its own
/// generator, so the result is the same).
pub trait Word:
    Copy
    + Eq
    + std::ops::BitAnd<Output = Self>
    + std::ops::BitOr<Output = Self>
    + std::ops::BitXor<Output = Self>
    + std::ops::Not<Output = Self>
    + std::ops::BitAndAssign
    + std::ops::BitOrAssign
    + std::ops::BitXorAssign
{
    /// No site.
    const ZERO: Self;
    /// Every site.
    const ONES: Self;
    /// A 32-bit mask that is 0 or all ones, widened.
    fn splat(m: u32) -> Self;
}

impl Word for u32 {
    const ZERO: Self = 0;
    const ONES: Self = !0;
    #[inline(always)]
    fn splat(m: u32) -> Self {
        m
    }
}

impl Word for u64 {
    const ZERO: Self = 0;
    const ONES: Self = !0;
    #[inline(always)]
    fn splat(m: u32) -> Self {
        u64::from(m) | (u64::from(m) << 32)
    }
}

/// Where a word's random words come from: `draw(live)` gives each 32-bit
/// half its generator's next word if the half has a site in `live`, and
/// draws nothing for the other halves.
pub trait Draw<W> {
    /// The next word (see the trait).
    fn draw(&mut self, live: W) -> W;
}

impl Draw<u32> for Mwc {
    #[inline(always)]
    fn draw(&mut self, _live: u32) -> u32 {
        // The update only draws for a live row.
        self.next_u32()
    }
}

/// The generators of two neighbouring words (low and high half).
#[derive(Debug)]
pub struct Pair<'a>(pub &'a mut Mwc, pub &'a mut Mwc);

impl Draw<u64> for Pair<'_> {
    #[inline(always)]
    fn draw(&mut self, live: u64) -> u64 {
        let lo = if live as u32 != 0 { self.0.next_u32() } else { 0 };
        let hi = if (live >> 32) != 0 { self.1.next_u32() } else { 0 };
        (u64::from(hi) << 32) | u64::from(lo)
    }
}

/// Bit-sliced sum of four one-bit numbers: (bit 0, bit 1, bit 2).
#[inline(always)]
fn count4<W: Word>(e: [W; 4]) -> [W; 3] {
    let (s1, k1) = (e[0] ^ e[1], e[0] & e[1]);
    let (s2, k2) = (e[2] ^ e[3], e[2] & e[3]);
    let k3 = s1 & s2;
    [s1 ^ s2, k1 ^ k2 ^ k3, k1 & k2]
}

/// Per site: all ones where x (bits LSB first) ≥ the constant c.
#[inline(always)]
fn ge_const<W: Word>(x: &[W], c: u32) -> W {
    let (mut gt, mut eq) = (W::ZERO, W::ONES);
    for i in (0..x.len()).rev() {
        if (c >> i) & 1 == 1 {
            eq &= x[i];
        } else {
            gt |= eq & x[i];
            eq &= !x[i];
        }
    }
    gt | eq
}

/// x += c modulo 2^len(x), on the sites in `mask` only.
#[inline(always)]
fn add_const_masked<W: Word>(x: &mut [W], c: u32, mask: W) {
    let mut carry = W::ZERO;
    for (i, xi) in x.iter_mut().enumerate() {
        let a = if (c >> i) & 1 == 1 { mask } else { W::ZERO };
        let s = *xi ^ a ^ carry;
        carry = (*xi & a) | (carry & (*xi ^ a));
        *xi = s;
    }
}

/// Per site: all ones where the P-plane spins a and b differ.
#[inline(always)]
fn differ<W: Word, const P: usize>(a: &[W; P], b: &[W; P]) -> W {
    let mut x = W::ZERO;
    for p in 0..P {
        x |= a[p] ^ b[p];
    }
    x
}

/// Step 1: the proposals of one row (draws from `rng`).
#[inline(always)]
fn propose<W: Word, const P: usize, const Q: u32>(s: &[W; P], rng: &mut impl Draw<W>) -> [W; P] {
    if Q == 2 {
        return std::array::from_fn(|p| !s[p]);
    }
    let (b, m, q) = (proposal_bits(Q), Q - 1, Q);
    let mut k = [W::ZERO; MAX_PLANES];
    for ki in k.iter_mut().take(b) {
        *ki = rng.draw(W::ONES);
    }
    if !m.is_power_of_two() {
        let mut rej = ge_const(&k[..b], m);
        let mut round = 1;
        while rej != W::ZERO && round < MAX_PROPOSAL_ROUNDS {
            for ki in k.iter_mut().take(b) {
                let w = rng.draw(rej);
                *ki = (*ki & !rej) | (w & rej);
            }
            rej = ge_const(&k[..b], m);
            round += 1;
        }
        add_const_masked(&mut k[..b], (1 << b) - m, rej);
    }
    // t = s + 1 + k in P + 1 bits (at most 2q − 2), then t − q where t ≥ q.
    let mut t = [W::ZERO; MAX_PLANES + 1];
    let mut carry = W::ONES;
    for (i, ti) in t.iter_mut().enumerate().take(P + 1) {
        let a = if i < P { s[i] } else { W::ZERO };
        let kk = k.get(i).copied().unwrap_or(W::ZERO);
        *ti = a ^ kk ^ carry;
        carry = (a & kk) | (carry & (a ^ kk));
    }
    let ge = ge_const(&t[..=P], q);
    add_const_masked(&mut t[..=P], (1 << (P + 1)) - q, ge);
    std::array::from_fn(|p| t[p])
}

/// Steps 2 and 3 for one row: the accept mask, given the old spins, the
/// proposals and the four neighbour words (up, down, same row, side).
#[inline(always)]
fn accept_mask<W: Word, const P: usize>(
    s: &[W; P],
    p: &[W; P],
    nb: &[[W; P]; 4],
    rule: &SlicedRule,
    rng: &mut impl Draw<W>,
) -> W {
    if rule.sigma == 0 {
        return W::ONES;
    }
    let e = std::array::from_fn(|i| !differ(s, &nb[i]));
    let f = std::array::from_fn(|i| !differ(p, &nb[i]));
    let (mut n_old, mut n_new) = (count4(e), count4(f));
    if rule.sigma < 0 {
        std::mem::swap(&mut n_old, &mut n_new);
    }
    // E = n_old + ¬n_new in 4 bits = d − 1: uncertain (1 ≤ d ≤ 4) iff the
    // carry out of bit 2 is set; then bits 0 and 1 are |d| − 1.
    let maj = |a: W, b: W, c: W| (a & b) | (c & (a ^ b));
    let (a0, b0) = (n_old[0], !n_new[0]);
    let code0 = a0 ^ b0;
    let c0 = a0 & b0;
    let (a1, b1) = (n_old[1], !n_new[1]);
    let code1 = a1 ^ b1 ^ c0;
    let c1 = maj(a1, b1, c0);
    let uncertain = maj(n_old[2], !n_new[2], c1);
    let (mut und, mut acc) = (uncertain, !uncertain);
    let mut bit = 32;
    while und != W::ZERO && bit > 0 {
        bit -= 1;
        let u = rng.draw(und);
        let a = rule.masks[bit].map(W::splat);
        // Select by |d| − 1 = (code1 code0), in xor form.
        let x0 = a[0] ^ ((a[0] ^ a[1]) & code0);
        let x1 = a[2] ^ ((a[2] ^ a[3]) & code0);
        let t = x0 ^ ((x0 ^ x1) & code1);
        // Decided now: undecided sites whose bit differs from the
        // threshold's; accepted: those where the threshold's bit is 1.
        let dec = und & (t ^ u);
        acc |= dec & t;
        und ^= dec;
    }
    acc
}

/// The update of one row's word: `s` the P plane words of the 32 (or, for
/// u64, two words' 64) sites, `nb` those of their neighbours above, below,
/// in the same row and at the side (the other colour's words lined up bit
/// for bit with `s`), `rng` the row's generator (a [`Pair`] for u64).
/// Returns the new plane words. `P` must be [`planes`]`(Q)` and `Q` the
/// rule's q (constants, so that the bit-sliced arithmetic folds).
#[inline(always)]
pub fn update_word<W: Word, const P: usize, const Q: u32>(
    s: &[W; P],
    nb: &[[W; P]; 4],
    rule: &SlicedRule,
    rng: &mut impl Draw<W>,
) -> [W; P] {
    debug_assert!(P == planes(Q) && rule.q == Q);
    let p = propose::<W, P, Q>(s, rng);
    let acc = accept_mask(s, &p, nb, rule, rng);
    std::array::from_fn(|i| s[i] ^ ((s[i] ^ p[i]) & acc))
}

/// Equal bonds and state counts contributed by one colour-0 word and the
/// colour-1 word at the same place: bonds of the colour-0 sites with their
/// four neighbours, states of both words' sites.
#[inline]
pub fn census_word<const P: usize>(s: &[u32; P], nb: &[[u32; P]; 4], other: &[u32; P], counts: &mut [u64]) -> u64 {
    let bonds: u32 = nb.iter().map(|n| (!differ(s, n)).count_ones()).sum();
    for (v, c) in counts.iter_mut().enumerate() {
        let is = |w: &[u32; P]| (0..P).fold(!0u32, |m, p| m & if (v >> p) & 1 == 1 { w[p] } else { !w[p] });
        *c += u64::from(is(s).count_ones() + is(other).count_ones());
    }
    u64::from(bonds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plane_and_proposal_bit_counts() {
        let planes: Vec<usize> = (2..=16).map(planes).collect();
        assert_eq!(planes, [1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4]);
        let bits: Vec<usize> = (2..=16).map(proposal_bits).collect();
        assert_eq!(bits, [0, 1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4]);
    }

    #[test]
    fn bit_sliced_arithmetic_matches_integers() {
        // 32 lanes, lane j holding value j (5 bits).
        let x: [u32; 5] = std::array::from_fn(|i| (0..32u32).fold(0, |w, j| w | (((j >> i) & 1) << j)));
        let lanes = |x: &[u32]| -> Vec<u32> {
            (0..32).map(|j| x.iter().enumerate().fold(0, |v, (i, w)| v | (((w >> j) & 1) << i))).collect()
        };
        for c in 0..32 {
            let ge = ge_const(&x, c);
            for j in 0..32u32 {
                assert_eq!((ge >> j) & 1 == 1, j >= c, "{j} >= {c}");
            }
            let mut y = x;
            add_const_masked(&mut y, c, 0x5555_5555);
            let got = lanes(&y);
            for j in 0..32u32 {
                let want = if j % 2 == 0 { (j + c) % 32 } else { j };
                assert_eq!(got[j as usize], want);
            }
        }
        let e: [u32; 4] = [0xffff_0000, 0xff00_ff00, 0xf0f0_f0f0, 0xcccc_cccc];
        let n = lanes(&count4(e));
        for j in 0..32 {
            let want = e.iter().map(|w| (w >> j) & 1).sum::<u32>();
            assert_eq!(n[j as usize], want);
        }
    }

    #[test]
    fn rule_reads_the_sign_of_the_coupling() {
        let t = 0.7;
        let ferro = PottsModel::new(9, 64, 8).unwrap();
        let r = SlicedRule::new(9, &AcceptanceTable::metropolis(&ferro, t)).unwrap();
        assert_eq!(r.sigma, 1);
        assert_eq!(r.thresholds[0] as u64, crate::algorithm::threshold(1.0, t));
        assert_eq!(r.thresholds[3] as u64, crate::algorithm::threshold(4.0, t));
        let anti = ferro.clone().with_coupling(-0.5).unwrap();
        let r = SlicedRule::new(9, &AcceptanceTable::metropolis(&anti, t)).unwrap();
        assert_eq!(r.sigma, -1);
        assert_eq!(r.thresholds[1] as u64, crate::algorithm::threshold(1.0, t));
        let free = ferro.clone().with_coupling(0.0).unwrap();
        assert_eq!(SlicedRule::new(9, &AcceptanceTable::metropolis(&free, t)).unwrap().sigma, 0);
        let mut odd = AcceptanceTable::metropolis(&ferro, t);
        odd.set(-2, 0, ALWAYS);
        assert!(SlicedRule::new(9, &odd).is_err());
    }
}
