//! The 99 variations of flam3 3.1.1 (linear … mobius), with flam3's
//! formulas, parameter names and defaults.
//!
//! A variation maps the point `(tx, ty)` (after the xform's pre-affine map)
//! to a new point; an xform sums its variations, each scaled by its weight.
//! [`VariationSet`] prepares one xform's variations once (per-xform
//! constants such as julian's root count or disc2's twist terms, as flam3's
//! `xform_precalc` does) and applies them per point, as flam3's
//! `apply_xform` does between the pre-affine map and the post map:
//!
//! 1. `pre_blur`, when the xform has it, moves the point first (it is not
//!    applied again with the others);
//! 2. the shared per-point values are computed, each only when a variation
//!    of the set reads it: `tx² + ty²` and its root, the "xy" angle
//!    `atan2(tx, ty)`, the "yx" angle `atan2(ty, tx)`, and `tx / r`,
//!    `ty / r` (flam3 calls them sina and cosa);
//! 3. each variation's contribution, weight included, is added in flam3's
//!    index order.
//!
//! The arithmetic follows flam3's operation by operation (same association,
//! same libm functions, the same `1e-10` guards), so on the same platform
//! the results are those of flam3 built without `-ffast-math`, bit for bit
//! in the test vectors (`tests/variations.rs`). Random variations draw
//! uniforms with [`RandomSource::next_f64`] where flam3 calls
//! `flam3_random_isaac_01` and bits as the low bit of
//! [`RandomSource::next_u32`] where it calls `flam3_random_isaac_bit`, in
//! the order flam3 draws them.
//!
//! The formulas live in one file per family: `classic.rs` (flam3's
//! original set, linear … perspective), `random.rs` (the variations that
//! draw random numbers: blurs, pie, arch, boarders …), `julia.rs` (julian,
//! juliascope, cpow, escher, the wedges, whorl), `apo.rs` (the other
//! Apophysis plugin-pack shapes) and `complex.rs` (exp … coth); `ops.rs`
//! holds the prepared form (one enum variant per variation with its
//! per-xform constants) and the dispatch, `table.rs` the names and
//! parameters.
//!
//! Deliberate flam3 behaviours kept here: weight 0 drops a variation;
//! several variations use the weight inside their formula rather than as a
//! plain factor (arch, rays, blade, secant2, twintrian, loonie, scry,
//! whorl, lazysusan, flux); radial_blur's weight scales only its blur, so
//! alone it yields a displacement near the origin; pre_blur alone yields
//! the origin; flam3's `(int)` conversions are reproduced (see `c_int`).

use warpmc_rng::RandomSource;

use crate::genome::Affine;

mod apo;
mod classic;
mod complex;
mod julia;
pub(crate) mod ops;
mod random;
mod table;

use ops::Op;
use table::TABLE;

/// Number of flam3 variations.
pub const VARIATION_COUNT: usize = 99;

/// A parameter of a variation: its XML attribute name and flam3's default.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ParamSpec {
    /// The attribute name, e.g. `julian_power`.
    pub name: &'static str,
    /// flam3's default value.
    pub default: f64,
}

/// One of flam3's variations, identified by its index in flam3's order
/// (0 = linear … 98 = mobius).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VariationKind(u8);

impl VariationKind {
    /// `pre_blur` (index 67), which moves the point before the others run.
    pub const PRE_BLUR: VariationKind = VariationKind(67);

    /// The variation with flam3 index `i`.
    pub fn from_index(i: usize) -> Option<Self> {
        (i < VARIATION_COUNT).then_some(VariationKind(i as u8))
    }

    /// The variation called `name` (flam3's spelling).
    pub fn from_name(name: &str) -> Option<Self> {
        TABLE.iter().position(|(n, _)| *n == name).map(|i| VariationKind(i as u8))
    }

    /// flam3's name.
    pub fn name(self) -> &'static str {
        TABLE[self.0 as usize].0
    }

    /// flam3's index.
    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// The parameters, in a fixed order (the order of [`VariationSpec::params`]).
    pub fn params(self) -> &'static [ParamSpec] {
        TABLE[self.0 as usize].1
    }

    /// All 99, in flam3's order.
    pub fn all() -> impl Iterator<Item = Self> {
        (0..VARIATION_COUNT).map(|i| VariationKind(i as u8))
    }
}

/// The variation and parameter index an xform attribute such as
/// `julian_power` belongs to. The aliases flam3's reader accepts are
/// understood too: `oscilloscope_*` for `oscope_*` (flam3 itself writes the
/// long form) and `Re_A` … `Im_D` for `mobius_re_a` … `mobius_im_d`.
pub fn param_owner(attribute: &str) -> Option<(VariationKind, usize)> {
    let find = |matches: &dyn Fn(&str) -> bool| {
        TABLE
            .iter()
            .enumerate()
            .find_map(|(k, (_, ps))| ps.iter().position(|p| matches(p.name)).map(|i| (VariationKind(k as u8), i)))
    };
    if let Some(rest) = attribute.strip_prefix("oscilloscope_") {
        return find(&|n| n.strip_prefix("oscope_") == Some(rest));
    }
    if let Some(mobius) = mobius_alias(attribute) {
        return find(&|n| n == mobius);
    }
    find(&|n| n == attribute)
}

/// flam3's short names for mobius's parameters.
fn mobius_alias(attribute: &str) -> Option<&'static str> {
    Some(match attribute {
        "Re_A" => "mobius_re_a",
        "Re_B" => "mobius_re_b",
        "Re_C" => "mobius_re_c",
        "Re_D" => "mobius_re_d",
        "Im_A" => "mobius_im_a",
        "Im_B" => "mobius_im_b",
        "Im_C" => "mobius_im_c",
        "Im_D" => "mobius_im_d",
        _ => return None,
    })
}

/// A variation as a genome uses it: weight and parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct VariationSpec {
    /// Which variation.
    pub kind: VariationKind,
    /// Its weight in the xform.
    pub weight: f64,
    /// Parameter values, in the order of [`VariationKind::params`]. Missing
    /// trailing values mean flam3's defaults.
    pub params: Vec<f64>,
}

impl VariationSpec {
    /// `kind` with weight `weight` and flam3's default parameters.
    pub fn new(kind: VariationKind, weight: f64) -> Self {
        VariationSpec { kind, weight, params: kind.params().iter().map(|p| p.default).collect() }
    }

    /// Parameter `i` (in [`VariationKind::params`] order), flam3's default
    /// when `params` is shorter.
    pub fn param(&self, i: usize) -> f64 {
        self.params.get(i).copied().unwrap_or_else(|| self.kind.params()[i].default)
    }
}

/// flam3's `EPS`, the guard added to denominators.
pub(crate) const EPS: f64 = 1e-10;

/// The per-point values the variations share (flam3's `flam3_iter_helper`).
/// Fields a set does not need are left at zero.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Point {
    /// The point after the pre-affine map (and pre_blur).
    pub(crate) x: f64,
    pub(crate) y: f64,
    /// `x² + y²`.
    pub(crate) sumsq: f64,
    /// `√(x² + y²)`.
    pub(crate) sqrt: f64,
    /// `atan2(x, y)` (flam3's `precalc_atan`).
    pub(crate) atan: f64,
    /// `x / r` (flam3's `precalc_sina`).
    pub(crate) sina: f64,
    /// `y / r` (flam3's `precalc_cosa`).
    pub(crate) cosa: f64,
    /// `atan2(y, x)` (flam3's `precalc_atanyx`).
    pub(crate) atanyx: f64,
}

/// Which shared per-point values a variation reads (bit flags).
pub(crate) mod needs {
    /// `√(x² + y²)`.
    pub(crate) const SQRT: u8 = 1;
    /// `atan2(x, y)`.
    pub(crate) const ATAN_XY: u8 = 2;
    /// `x / r` and `y / r` (implies [`SQRT`]).
    pub(crate) const ANGLES: u8 = 4 | SQRT;
    /// `atan2(y, x)`.
    pub(crate) const ATAN_YX: u8 = 8;
}

impl Point {
    #[inline(always)]
    fn new(x: f64, y: f64, need: u8) -> Point {
        let sumsq = x * x + y * y;
        let mut p = Point { x, y, sumsq, ..Point::default() };
        if need & needs::SQRT != 0 {
            p.sqrt = sumsq.sqrt();
        }
        if need & needs::ATAN_XY != 0 {
            p.atan = x.atan2(y);
        }
        if need & needs::ANGLES & !needs::SQRT != 0 {
            p.sina = x / p.sqrt;
            p.cosa = y / p.sqrt;
        }
        if need & needs::ATAN_YX != 0 {
            p.atanyx = y.atan2(x);
        }
        p
    }
}

/// One prepared variation: its weight and its per-xform constants.
#[derive(Clone, Copy, Debug)]
struct Prepared {
    weight: f64,
    op: Op,
}

/// The variations of one xform, ready to apply: per-xform constants
/// precomputed (as flam3's `xform_precalc` does), the shared per-point
/// values this set needs worked out once.
#[derive(Clone, Debug)]
pub struct VariationSet {
    items: Vec<Prepared>,
    /// pre_blur's weight, when the xform has it.
    pre_blur: Option<f64>,
    /// The union of the items' [`needs`].
    need: u8,
}

impl VariationSet {
    /// Prepares `specs` for an xform whose pre-affine map is `coefs`
    /// (waves, popcorn, rings and fan read the xform's coefficients).
    ///
    /// Variations of weight zero are dropped, as flam3 drops them; the rest
    /// are applied in flam3's index order whatever the order of `specs`.
    pub fn new(specs: &[VariationSpec], coefs: &Affine) -> Self {
        let mut sorted: Vec<&VariationSpec> = specs.iter().filter(|s| s.weight != 0.0).collect();
        sorted.sort_by_key(|s| s.kind);
        let mut pre_blur = None;
        let mut items = Vec::with_capacity(sorted.len());
        let mut need = 0;
        for s in sorted {
            if s.kind == VariationKind::PRE_BLUR {
                pre_blur = Some(pre_blur.unwrap_or(0.0) + s.weight);
                continue;
            }
            let op = Op::new(s, &coefs.c);
            need |= op.needs();
            items.push(Prepared { weight: s.weight, op });
        }
        VariationSet { items, pre_blur, need }
    }

    /// Whether the set has no variation left (flam3 then yields the origin).
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Applies the variations to the pre-affine-transformed point `(tx, ty)`
    /// and returns the weighted sum (before the post map). Random variations
    /// draw from `rng`.
    #[inline]
    pub fn apply<R: RandomSource>(&self, tx: f64, ty: f64, rng: &mut R) -> (f64, f64) {
        let (tx, ty) = match self.pre_blur {
            Some(w) => random::pre_blur(tx, ty, w, rng),
            None => (tx, ty),
        };
        let point = Point::new(tx, ty, self.need);
        let (mut p0, mut p1) = (0.0, 0.0);
        for it in &self.items {
            let (dx, dy) = it.op.eval(&point, it.weight, rng);
            p0 += dx;
            p1 += dy;
        }
        (p0, p1)
    }
}

/// C's conversion of a double to `int` as x86-64 does it (`cvttsd2si`):
/// truncation toward zero, and `INT_MIN` for NaN and for values out of
/// range (where C leaves it undefined). flam3 stores several intermediate
/// results in `int`s (pie's slice, julian's root, cell's column …).
#[inline(always)]
pub(crate) fn c_int(v: f64) -> i32 {
    if v > -2_147_483_649.0 && v < 2_147_483_648.0 { v as i32 } else { i32::MIN }
}

/// flam3's `badvalue`: NaN or beyond ±1e10.
#[inline(always)]
pub(crate) fn bad_value(v: f64) -> bool {
    v.is_nan() || !(-1e10..=1e10).contains(&v)
}
