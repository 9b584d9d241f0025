//! The CPU's 4-bit update with AVX2: four u64 words (64 sites, eight
//! random-number units) per 256-bit register. Computes exactly what the
//! scalar 4-bit loop in `cpu.rs` computes (the tests compare both with a
//! naive reference): the eight units' generators run in the eight 32-bit
//! lanes, so step k of every generator yields site k of its unit.

use std::arch::x86_64::*;

use crate::algorithm::{ALWAYS, MWC_MULTIPLIER};

/// Words per vector.
pub(crate) const WORDS: usize = 4;

/// The acceptance table in the form the lanes use: for Δn + 4 = 0…7 and 8,
/// min(θ, 2³² − 1) with the sign bit flipped (for signed compares), and an
/// all-ones flag where θ is "always".
#[derive(Clone, Copy, Debug)]
pub(crate) struct LaneTable {
    thresholds: [u32; 8],
    always: [u32; 8],
    threshold8: u32,
    always8: u32,
}

impl LaneTable {
    pub(crate) fn new(th: &[u64; 9]) -> Self {
        let t = |x: u64| (x.min(ALWAYS - 1) as u32) ^ 0x8000_0000;
        let a = |x: u64| if x >= ALWAYS { u32::MAX } else { 0 };
        LaneTable {
            thresholds: std::array::from_fn(|i| t(th[i])),
            always: std::array::from_fn(|i| a(th[i])),
            threshold8: t(th[8]),
            always8: a(th[8]),
        }
    }
}

/// Whether this CPU can run [`row`].
pub(crate) fn available() -> bool {
    is_x86_feature_detected!("avx2")
}

/// Per nibble of each u64 lane: 1 where a and b differ.
#[inline(always)]
unsafe fn ne(a: __m256i, b: __m256i) -> __m256i {
    // SAFETY: AVX2 arithmetic on registers; the caller runs with AVX2.
    unsafe {
        let x = _mm256_xor_si256(a, b);
        let sevens = _mm256_set1_epi64x(0x7777_7777_7777_7777);
        let t = _mm256_add_epi64(_mm256_and_si256(x, sevens), sevens);
        _mm256_and_si256(_mm256_srli_epi64(_mm256_or_si256(t, x), 3), _mm256_set1_epi64x(0x1111_1111_1111_1111))
    }
}

/// Per byte lane: (v + k + 1) mod q, for lanes below q with k < q − 1.
#[inline(always)]
unsafe fn add_mod_q(v: __m256i, k: __m256i, q: i16) -> __m256i {
    // SAFETY: AVX2 arithmetic on registers; the caller runs with AVX2.
    unsafe {
        let ones = _mm256_set1_epi8(1);
        let e = _mm256_add_epi8(_mm256_add_epi8(v, k), ones);
        let ge = _mm256_srli_epi16(
            _mm256_and_si256(_mm256_add_epi8(e, _mm256_set1_epi8((0x80 - q) as i8)), _mm256_set1_epi8(-128)),
            7,
        );
        // ge holds 0 or 1 per byte; q·ge per 16-bit lane stays per byte (q ≤ 16).
        _mm256_sub_epi8(e, _mm256_mullo_epi16(ge, _mm256_set1_epi16(q)))
    }
}

/// Updates one row of 4-bit words in place.
///
/// `row`, `cur`, `up`, `down`: the row being updated and the other colour's
/// same, upper and lower rows, `wr` words each with `wr % 4 == 0`; `o` the
/// row's offset ((y + colour) mod 2). `states`: the MWC states of the row's
/// units for this row's parity, each group of eight units stored as units
/// 0, 2, 4, 6, 1, 3, 5, 7 (so a load gives even and odd units apart).
///
/// # Safety
///
/// The CPU must support AVX2 ([`available`]).
#[target_feature(enable = "avx2")]
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn row(
    row: &mut [u64],
    cur: &[u64],
    up: &[u64],
    down: &[u64],
    o: usize,
    states: &mut [u64],
    q: u32,
    table: &LaneTable,
) {
    let wr = row.len();
    assert!(wr % WORDS == 0 && cur.len() == wr && up.len() == wr && down.len() == wr && states.len() == 2 * wr);
    // SAFETY: AVX2 is available (the caller's contract); every load and
    // store below reads or writes 4 consecutive u64 (32 bytes) inside the
    // slices above, whose lengths were just checked, or inside local arrays.
    unsafe {
        let low = _mm256_set1_epi64x(0x0f0f_0f0f_0f0f_0f0f);
        let mul_a = _mm256_set1_epi64x(i64::from(MWC_MULTIPLIER));
        let q1 = _mm256_set1_epi64x(i64::from(q - 1));
        let t0 = _mm256_loadu_si256(table.thresholds.as_ptr().cast());
        let a0 = _mm256_loadu_si256(table.always.as_ptr().cast());
        let t8 = _mm256_set1_epi32(table.threshold8 as i32);
        let a8 = _mm256_set1_epi32(table.always8 as i32);
        let eight = _mm256_set1_epi32(8);
        let fifteen = _mm256_set1_epi32(15);
        let flip = _mm256_set1_epi32(i32::MIN);
        for g in 0..wr / WORDS {
            let w = WORDS * g;
            let s = _mm256_loadu_si256(row[w..w + WORDS].as_ptr().cast());
            let c = _mm256_loadu_si256(cur[w..w + WORDS].as_ptr().cast());
            let u = _mm256_loadu_si256(up[w..w + WORDS].as_ptr().cast());
            let dn = _mm256_loadu_si256(down[w..w + WORDS].as_ptr().cast());
            let side = if o == 0 {
                let prev = [cur[(w + wr - 1) % wr], cur[w], cur[w + 1], cur[w + 2]];
                _mm256_or_si256(
                    _mm256_slli_epi64(c, 4),
                    _mm256_srli_epi64(_mm256_loadu_si256(prev.as_ptr().cast()), 60),
                )
            } else {
                let next = [cur[w + 1], cur[w + 2], cur[w + 3], cur[(w + WORDS) % wr]];
                _mm256_or_si256(
                    _mm256_srli_epi64(c, 4),
                    _mm256_slli_epi64(_mm256_loadu_si256(next.as_ptr().cast()), 60),
                )
            };
            // Eight generators: even units in ga, odd units in gb.
            let st = &mut states[2 * w..2 * w + 8];
            let mut ga = _mm256_loadu_si256(st.as_ptr().cast());
            let mut gb = _mm256_loadu_si256(st[4..].as_ptr().cast());
            let mut steps = _mm256_setzero_si256();
            let mut fracs = [_mm256_setzero_si256(); 8];
            for (k, frac) in fracs.iter_mut().enumerate() {
                // x·a + carry, for 4 generators per register.
                ga = _mm256_add_epi64(_mm256_mul_epu32(ga, mul_a), _mm256_srli_epi64(ga, 32));
                gb = _mm256_add_epi64(_mm256_mul_epu32(gb, mul_a), _mm256_srli_epi64(gb, 32));
                // Lane 2i: unit 2i's word, lane 2i + 1: unit 2i + 1's.
                let r = _mm256_blend_epi32(ga, _mm256_slli_epi64(gb, 32), 0b1010_1010);
                let pe = _mm256_mul_epu32(r, q1);
                let po = _mm256_mul_epu32(_mm256_srli_epi64(r, 32), q1);
                let idx = _mm256_blend_epi32(_mm256_srli_epi64(pe, 32), po, 0b1010_1010);
                *frac = _mm256_blend_epi32(pe, _mm256_slli_epi64(po, 32), 0b1010_1010);
                steps = _mm256_or_si256(steps, _mm256_sll_epi32(idx, _mm_cvtsi32_si128(4 * k as i32)));
            }
            _mm256_storeu_si256(st.as_mut_ptr().cast(), ga);
            _mm256_storeu_si256(st[4..].as_mut_ptr().cast(), gb);
            // Proposals: even and odd nibbles in byte lanes.
            let pe = add_mod_q(_mm256_and_si256(s, low), _mm256_and_si256(steps, low), q as i16);
            let po = add_mod_q(
                _mm256_and_si256(_mm256_srli_epi64(s, 4), low),
                _mm256_and_si256(_mm256_srli_epi64(steps, 4), low),
                q as i16,
            );
            let p = _mm256_or_si256(pe, _mm256_slli_epi64(po, 4));
            // Δn + 4 per nibble.
            let before =
                _mm256_add_epi64(_mm256_add_epi64(ne(s, u), ne(s, dn)), _mm256_add_epi64(ne(s, c), ne(s, side)));
            let after =
                _mm256_add_epi64(_mm256_add_epi64(ne(p, u), ne(p, dn)), _mm256_add_epi64(ne(p, c), ne(p, side)));
            let d = _mm256_sub_epi64(_mm256_add_epi64(before, _mm256_set1_epi64x(0x4444_4444_4444_4444)), after);
            let mut accept = _mm256_setzero_si256();
            for (k, &frac) in fracs.iter().enumerate() {
                let shift = _mm_cvtsi32_si128(4 * k as i32);
                let i = _mm256_and_si256(_mm256_srl_epi32(d, shift), fifteen);
                let is8 = _mm256_cmpeq_epi32(i, eight);
                let th = _mm256_blendv_epi8(_mm256_permutevar8x32_epi32(t0, i), t8, is8);
                let always = _mm256_blendv_epi8(_mm256_permutevar8x32_epi32(a0, i), a8, is8);
                let yes = _mm256_or_si256(_mm256_cmpgt_epi32(th, _mm256_xor_si256(frac, flip)), always);
                accept = _mm256_or_si256(accept, _mm256_and_si256(yes, _mm256_sll_epi32(fifteen, shift)));
            }
            let new = _mm256_xor_si256(s, _mm256_and_si256(_mm256_xor_si256(s, p), accept));
            _mm256_storeu_si256(row[w..w + WORDS].as_mut_ptr().cast(), new);
        }
    }
}
