//! Histogram cells (RGBA + hit count) as flam3's unsigned 32-bit counts or
//! doubles, and the deterministic parallel accumulation of chaos-game
//! samples into them.
//!
//! Determinism: every cell receives its additions in the same order on any
//! number of threads — sub-batch by sub-batch, sample by sample — because
//! samples are first sorted into row bands per sub-batch, and each band is
//! then filled by one thread walking the sub-batches in order.

use std::ops::{Add, AddAssign, Mul};

use crate::palette::PALETTE_SIZE;

/// A floating-point type the accumulation buffer (and the GPU's histogram)
/// can be made of.
pub(crate) trait Bucket:
    Copy + Default + Send + Sync + Add<Output = Self> + AddAssign + Mul<Output = Self> + 'static
{
    /// What the CPU's histogram cells hold in a render of this precision.
    type Count: Count;
    /// Conversion from f64 (rounding for f32).
    fn from_f64(v: f64) -> Self;
    /// Conversion to f64.
    fn to_f64(self) -> f64;
}

impl Bucket for f32 {
    /// flam3-render's default histogram (`bits=33`): unsigned 32-bit
    /// integers, exact to the last hit, where f32 would round once a cell
    /// passes 2²⁴ (about 66,000 hits) and shift the colours of the
    /// brightest cells.
    type Count = u32;
    #[inline(always)]
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
}

impl Bucket for f64 {
    /// Doubles, each addition truncated and each channel read held at
    /// 2³² − 1 as the default histogram's (where flam3-render's `bits=64`
    /// keeps the fraction and has no ceiling).
    type Count = f64;
    #[inline(always)]
    fn from_f64(v: f64) -> Self {
        v
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self
    }
}

/// What a histogram cell's channel holds. flam3-render's histogram (its
/// default `bits=33`) holds unsigned integers, so each addition drops the
/// fraction: a colour value of 100.9 adds 100, and a sample whose
/// visibility makes a channel less than 1 adds nothing to it (a palette of
/// fractional colours would render up to 0.5/255 brighter per channel
/// otherwise). The floating-point cells drop it too.
pub(crate) trait Count: Copy + Default + Send + Sync + 'static {
    /// Adds one sample's product (from [`hit_products`]) with its
    /// fraction dropped as flam3 drops it.
    fn add_hit(&mut self, v: f64);
    /// The channel's value.
    fn value(self) -> f64;
}

impl Count for u32 {
    /// As flam3-render's single-threaded additions (its `bump_no_overflow`
    /// macro, used with up to two threads, and so by the flam3 references
    /// warpmc is compared with, run with `nthreads=1`): the sum taken in
    /// double and converted as C converts a double to `unsigned int` on
    /// x86-64 (a negative sum, from a negative palette entry, wraps modulo
    /// 2³²), and held at 2³² − 1 where the addition would pass it. A
    /// product a hair below a whole number (99.99999999999999, from a
    /// palette's HSV round trip) added to a cell that already holds counts
    /// rounds up to it in the double sum, where flam3's threaded additions,
    /// the floating-point cells and the GPU drop it to the number below.
    #[inline(always)]
    fn add_hit(&mut self, v: f64) {
        *self = if f64::from(u32::MAX - *self) > v { ((f64::from(*self) + v) as i64) as u32 } else { u32::MAX };
    }
    #[inline(always)]
    fn value(self) -> f64 {
        f64::from(self)
    }
}

/// The largest value a channel of flam3-render's default histogram holds
/// (2³² − 1). The floating-point cells have no such ceiling in their
/// sums, so they are held at it where they are read ([`Count::value`]):
/// with additions that are never negative, a sum held once it passes the
/// ceiling and a sum held when read agree (to one count, where the last
/// addition's fraction would have carried it past).
pub(crate) const FLAM3_CEILING: f64 = u32::MAX as f64;

impl Count for f32 {
    #[inline(always)]
    fn add_hit(&mut self, v: f64) {
        *self += v.floor() as f32;
    }
    #[inline(always)]
    fn value(self) -> f64 {
        f64::from(self).min(FLAM3_CEILING)
    }
}

impl Count for f64 {
    #[inline(always)]
    fn add_hit(&mut self, v: f64) {
        *self += v.floor();
    }
    #[inline(always)]
    fn value(self) -> f64 {
        self.min(FLAM3_CEILING)
    }
}

/// One chaos-game sample that landed inside the histogram.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Sample {
    /// Cell index, row-major.
    pub(crate) cell: u32,
    /// Palette coordinate, narrowed by [`palette_coordinate`].
    pub(crate) color: f32,
    /// Visibility (opacity after flam3's adjustment), 0 < v ≤ 1.
    pub(crate) visibility: f32,
}

/// A colour coordinate narrowed to a sample's f32 so that the palette
/// entry it selects stays the one flam3 takes from the double: rounded
/// towards zero, never across an entry's edge k / 256 (exact in f32), so
/// `(int)(c × 256)` is unchanged. Rounding to nearest would put a coordinate
/// that settles a hair below an edge, such as 0.8749999999999998 (colour
/// 0.875 approached at colour_speed 0.425), on the edge itself, a whole
/// entry up in step mode.
#[inline(always)]
pub(crate) fn palette_coordinate(c: f64) -> f32 {
    let f = c as f32;
    if f64::from(f).abs() > c.abs() {
        // One step towards zero: the magnitude's bits less one (a value
        // beyond f32's range, rounded to infinity, becomes f32::MAX).
        f32::from_bits(f.to_bits() - 1)
    } else {
        f
    }
}

/// The samples of one sub-batch, grouped by row band.
#[derive(Clone, Debug, Default)]
pub(crate) struct BandedSamples {
    pub(crate) samples: Vec<Sample>,
    /// `samples[offsets[b]..offsets[b + 1]]` lie in band `b`.
    pub(crate) offsets: Vec<u32>,
}

impl BandedSamples {
    /// Sorts `raw` by band (stable, counting sort), `cells_per_band` cells
    /// per band, `bands` bands.
    pub(crate) fn from_raw(raw: &[Sample], cells_per_band: u32, bands: usize, out: &mut Self) {
        out.offsets.clear();
        out.offsets.resize(bands + 1, 0);
        for s in raw {
            out.offsets[(s.cell / cells_per_band) as usize + 1] += 1;
        }
        for b in 0..bands {
            out.offsets[b + 1] += out.offsets[b];
        }
        out.samples.clear();
        out.samples.resize(raw.len(), Sample::default());
        let mut next: Vec<u32> = out.offsets[..bands].to_vec();
        for s in raw {
            let b = (s.cell / cells_per_band) as usize;
            out.samples[next[b] as usize] = *s;
            next[b] += 1;
        }
    }

    pub(crate) fn band(&self, b: usize) -> &[Sample] {
        &self.samples[self.offsets[b] as usize..self.offsets[b + 1] as usize]
    }
}

/// The colour lookup: palette × 255 × temporal weight, with flam3's step
/// or linear rule.
#[derive(Clone, Debug)]
pub(crate) struct ColorMap {
    pub(crate) entries: Box<[[f64; 4]; PALETTE_SIZE]>,
    pub(crate) linear: bool,
}

impl ColorMap {
    #[inline(always)]
    pub(crate) fn lookup(&self, c: f64) -> [f64; 4] {
        let scaled = c * 256.0;
        // flam3 takes C's (int) of the scaled coordinate, which truncates
        // towards zero; on x86 a value beyond int's range, and NaN, give
        // INT_MIN, so they select entry 0 (with no fraction), as a negative
        // index does. A coordinate in (-1/256, 0) truncates to 0 and keeps
        // its negative fraction in linear mode.
        let idx = if scaled < 2_147_483_648.0 { scaled as i64 } else { i64::MIN };
        if self.linear {
            let (i, frac) = if idx < 0 {
                (0usize, 0.0)
            } else if idx >= 255 {
                (254usize, 1.0)
            } else {
                (idx as usize, scaled - idx as f64)
            };
            let a = &self.entries[i];
            let b = &self.entries[i + 1];
            [
                a[0] * (1.0 - frac) + b[0] * frac,
                a[1] * (1.0 - frac) + b[1] * frac,
                a[2] * (1.0 - frac) + b[2] * frac,
                a[3] * (1.0 - frac) + b[3] * frac,
            ]
        } else {
            self.entries[idx.clamp(0, 255) as usize]
        }
    }
}

#[inline(always)]
fn prefetch<T>(p: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint; any address is allowed, and this one is
    // a valid reference.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>((p as *const T).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// What one sample of palette colour `c` (premultiplied, see [`ColorMap`])
/// and visibility `v` adds to its cell, before [`Count::add_hit`] drops
/// the fraction: r, g, b, alpha times the visibility, and 255 times it.
#[inline(always)]
pub(crate) fn hit_products(c: [f64; 4], v: f64) -> [f64; 5] {
    if v == 1.0 { [c[0], c[1], c[2], c[3], 255.0] } else { [v * c[0], v * c[1], v * c[2], v * c[3], v * 255.0] }
}

/// Adds the samples of one band, from sub-batches in order, into that
/// band's cells (`cells` starts at cell `first_cell`).
pub(crate) fn accumulate_band<C: Count>(
    cells: &mut [[C; 5]],
    first_cell: u32,
    band: usize,
    batches: &[BandedSamples],
    cmap: &ColorMap,
) {
    const AHEAD: usize = 16;
    for batch in batches {
        let samples = batch.band(band);
        for (k, s) in samples.iter().enumerate() {
            // The cells are scattered over a histogram far larger than the
            // caches: ask for the cell of a sample a little ahead.
            if let Some(next) = samples.get(k + AHEAD) {
                prefetch(&cells[(next.cell - first_cell) as usize]);
            }
            let cell = &mut cells[(s.cell - first_cell) as usize];
            let hit = hit_products(cmap.lookup(f64::from(s.color)), f64::from(s.visibility));
            for (sum, v) in cell.iter_mut().zip(hit) {
                sum.add_hit(v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The palette entry of a narrowed coordinate is the double's, next to
    /// every edge k / 256, and for random and degenerate values.
    #[test]
    fn a_narrowed_colour_coordinate_selects_the_doubles_palette_entry() {
        let entry = |c: f64| {
            let s = c * 256.0;
            if s < 2_147_483_648.0 { s as i64 } else { i64::MIN }
        };
        let step = |c: f64, n: i64| f64::from_bits((c.to_bits() as i64 + n) as u64);
        let mut cases = vec![0.0, -0.0, 1e-300, -1e-300, 1e300, -1e300, f64::MAX, f64::INFINITY, f64::NEG_INFINITY];
        for k in -300..=300 {
            let edge = f64::from(k) / 256.0;
            // Neighbours by bit pattern (through zero's patterns some are
            // NaN, left out: NaN is checked below).
            cases.extend((-3..=3).map(|n| step(edge, n)).filter(|c| !c.is_nan()));
        }
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            cases.push((x >> 11) as f64 / (1u64 << 53) as f64 * 2.5 - 0.75);
        }
        // Colour 0.875 approached at colour_speed 0.425: just below the
        // edge of entry 224, which rounding to nearest would reach.
        let settled = 0.8749999999999998;
        assert_eq!((entry(settled), entry(f64::from(settled as f32))), (223, 224));
        cases.push(settled);
        for c in cases {
            let narrowed = palette_coordinate(c);
            assert_eq!(entry(f64::from(narrowed)), entry(c), "{c:e} narrowed to {narrowed:e}");
            assert!(f64::from(narrowed).abs() <= c.abs(), "{c:e} narrowed away from zero to {narrowed:e}");
        }
        assert!(palette_coordinate(f64::NAN).is_nan());
    }

    #[test]
    fn banding_is_a_stable_partition() {
        let raw: Vec<Sample> = [7u32, 0, 5, 3, 8, 1, 4]
            .iter()
            .enumerate()
            .map(|(k, &cell)| Sample { cell, color: k as f32, visibility: 1.0 })
            .collect();
        let mut b = BandedSamples::default();
        BandedSamples::from_raw(&raw, 3, 3, &mut b);
        let cells = |band| b.band(band).iter().map(|s| s.cell).collect::<Vec<_>>();
        assert_eq!(cells(0), vec![0, 1]);
        assert_eq!(cells(1), vec![5, 3, 4]);
        assert_eq!(cells(2), vec![7, 8]);
    }

    /// The sums `add_hit` makes of `products`, from an empty channel.
    fn sum<C: Count>(products: &[f64]) -> f64 {
        let mut c = C::default();
        for &v in products {
            c.add_hit(v);
        }
        c.value()
    }

    #[test]
    fn each_hit_adds_whole_numbers_as_flam3s_integer_histogram() {
        let products = hit_products([100.9, 40.0, 0.5, 255.0], 1.0);
        assert_eq!(products.map(|v| sum::<u32>(&[v])), [100.0, 40.0, 0.0, 255.0, 255.0]);
        assert_eq!(products.map(|v| sum::<f32>(&[v])), [100.0, 40.0, 0.0, 255.0, 255.0]);
        assert_eq!(products.map(|v| sum::<f64>(&[v])), [100.0, 40.0, 0.0, 255.0, 255.0]);
        // Just below a whole number: into an empty cell, flam3 adds the
        // one below; into one that holds counts, its double sum rounds up.
        assert_eq!(sum::<u32>(&[99.99999999999999]), 99.0);
        assert_eq!(sum::<f32>(&[99.99999999999999]), 99.0);
        assert_eq!(sum::<u32>(&[200.0, 99.99999999999999]), 300.0);
        assert_eq!(sum::<f64>(&[200.0, 99.99999999999999]), 299.0);
        // Visibility scales before the truncation; the hits too.
        let half = hit_products([100.9, 3.0, 1.5, 255.0], 0.5);
        assert_eq!(half.map(|v| sum::<u32>(&[v])), [50.0, 1.0, 0.0, 127.0, 127.0]);
        assert_eq!(hit_products([0.0; 4], 0.001).map(|v| sum::<u32>(&[v])), [0.0; 5]);
        // Fractions are dropped per addition, not from the sum.
        assert_eq!(sum::<u32>(&[0.6, 0.6, 0.6]), 0.0);
    }

    #[test]
    fn the_integer_histogram_counts_exactly_and_stops_where_flam3s_does() {
        // 2^24 is where f32 stops counting single steps; u32 goes on.
        let mut c: u32 = 1 << 24;
        c.add_hit(1.0);
        assert_eq!(c, (1 << 24) + 1);
        let mut f: f32 = (1 << 24) as f32;
        f.add_hit(1.0);
        assert_eq!(f, (1 << 24) as f32, "f32 does lose the step (why the CPU counts in u32)");
        // flam3's bump_no_overflow holds the sum at 2^32 - 1.
        let mut c = u32::MAX - 100;
        c.add_hit(99.0);
        assert_eq!(c, u32::MAX - 1);
        c.add_hit(255.0);
        assert_eq!(c, u32::MAX);
        c.add_hit(255.0);
        assert_eq!(c, u32::MAX);
        // A negative product (a negative palette entry) wraps a sum that
        // goes below zero, as C's conversion to unsigned does on x86-64;
        // the next positive one then stops at the top.
        assert_eq!(sum::<u32>(&[-50.7]), f64::from(u32::MAX - 49));
        assert_eq!(sum::<u32>(&[-50.7, 200.0]), f64::from(u32::MAX));
        assert_eq!(sum::<u32>(&[100.0, -50.7]), 49.0);
        assert_eq!(sum::<f64>(&[100.0, -50.7]), 49.0);
        // The floating-point cells read as held at the same top: a cell
        // of 2·10⁷ full hits reads as flam3's saturated one in every type.
        let hot = vec![255.0; 20_000_000];
        assert_eq!(sum::<u32>(&hot), f64::from(u32::MAX));
        assert_eq!(sum::<f64>(&hot), f64::from(u32::MAX));
        assert_eq!(sum::<f32>(&hot), f64::from(u32::MAX));
        // Below the top they are not touched.
        assert_eq!(sum::<f64>(&[4e9, 2.9e8]), 4.29e9);
    }

    #[test]
    fn colour_lookup_rules() {
        let mut e = Box::new([[0.0; 4]; 256]);
        for (i, v) in e.iter_mut().enumerate() {
            *v = [i as f64, 0.0, 0.0, 1.0];
        }
        let step = ColorMap { entries: e.clone(), linear: false };
        assert_eq!(step.lookup(0.5)[0], 128.0);
        assert_eq!(step.lookup(-0.1)[0], 0.0);
        assert_eq!(step.lookup(1.0)[0], 255.0);
        let lin = ColorMap { entries: e, linear: true };
        assert!((lin.lookup(0.5 + 0.25 / 256.0)[0] - 128.25).abs() < 1e-9);
        assert_eq!(lin.lookup(1.0)[0], 255.0);
        assert_eq!(lin.lookup(-1.0)[0], 0.0);
        // A colour coordinate driven out of range (color_speed > 1) or to
        // NaN: an entry of the palette, as on the GPU, never NaN.
        for c in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e300, -1e300] {
            for map in [&step, &lin] {
                assert!(map.lookup(c).iter().all(|v| v.is_finite()), "{c}: {:?}", map.lookup(c));
            }
        }
        // As flam3's (int) on x86: beyond int's range, and NaN, entry 0.
        let int_min = 2_147_483_648.0 / 256.0;
        for c in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e300, -1e300, int_min, -int_min - 1.0] {
            assert_eq!(lin.lookup(c)[0], 0.0, "{c}");
            assert_eq!(step.lookup(c)[0], 0.0, "{c}");
        }
        let below = int_min - 1.0 / 256.0;
        assert_eq!(lin.lookup(below)[0], 255.0);
        assert_eq!(step.lookup(below)[0], 255.0);
        // Just below 0 the index truncates to 0 and linear mode extrapolates
        // with the negative fraction.
        assert_eq!(lin.lookup(-0.5 / 256.0)[0], -0.5);
        assert_eq!(step.lookup(-0.5 / 256.0)[0], 0.0);
    }
}
