//! The 99 variations of flam3 3.1.1 (linear … mobius), with flam3's
//! formulas, parameter names and defaults, and 39 of the Fractorium/
//! Apophysis plugin variations beyond them, with Fractorium's formulas,
//! names, defaults and parameter ranges (see [`VariationKind`]), with the
//! `pre_` and `post_` forms of all of them.
//!
//! A variation maps the point `(tx, ty)` (after the xform's pre-affine map)
//! to a new point; an xform sums its variations, each scaled by its weight.
//! [`VariationSet`] prepares one xform's variations once (per-xform
//! constants such as julian's root count or disc2's twist terms, as flam3's
//! `xform_precalc` does) and applies them per point, as flam3's
//! `apply_xform` does between the pre-affine map and the post map:
//!
//! 1. `pre_blur`, when the xform has it, moves the point first (it is not
//!    applied again with the others); then the `pre_` forms of other
//!    variations (Fractorium's pre variations), in the order given, each
//!    replacing the point with its result (or adding its result to the
//!    point, for the forms whose result does not depend on the point, such
//!    as `pre_gaussian_blur`: Fractorium's "sum" assignment);
//! 2. the shared per-point values are computed, each only when a variation
//!    of the set reads it: `tx² + ty²` and its root, the "xy" angle
//!    `atan2(tx, ty)`, the "yx" angle `atan2(ty, tx)`, and `tx / r`,
//!    `ty / r` (flam3 calls them sina and cosa);
//! 3. each variation's contribution, weight included, is added in flam3's
//!    index order (the variations beyond flam3's come after flam3's), or,
//!    when one of them replaces the sum before it (Fractorium's circlecrop
//!    and mirror_x), in the order the genome gives them, as Fractorium
//!    adds them;
//! 4. the `post_` forms, in the order given, replace (or move) the sum the
//!    same way, before the xform's post-affine map.
//!
//! An xform with `pre_` or `post_` forms but no ordinary variation passes
//! its point through (Fractorium's rule); one with no variation at all
//! yields the origin (flam3's).
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
//! Apophysis plugin-pack shapes) and `complex.rs` (exp … coth); beyond
//! flam3's, `plugin.rs` (crop, crackle), `plugin_blur.rs` (Fractorium's
//! blurs), `plugin_map.rs` (Mobius, hemisphere, the hypertiles, eJulia …)
//! and `plugin_tile.rs` (bwraps, hexes, Voron, the crops, post_smartcrop),
//! whose parameters pass through Fractorium's reading rules (`params.rs`);
//! `ops.rs` holds the prepared form (one enum variant per variation with
//! its per-xform constants) and the dispatch, `table.rs` the names and
//! parameters.
//!
//! Fractorium's points have a z coordinate; warpmc's live in the plane.
//! The variations here are those whose x and y do not depend on z (their z
//! terms, where they have some, are dropped, as the 3-D camera is not
//! supported); the ones that read z (falloff2, Spherical3D, curl3D,
//! julia3D, the rotations …) are not implemented.
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
mod params;
pub(crate) mod plugin;
mod plugin_blur;
mod plugin_map;
mod plugin_tile;
mod random;
mod table;

use ops::Op;

/// Number of flam3 variations (the indices the `var` and `var1`
/// attributes of flam3's XML may name).
pub const VARIATION_COUNT: usize = 99;

/// Where a variation acts in its xform.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stage {
    /// `pre_NAME`: on the point after the pre-affine map, before the others.
    Pre,
    /// An ordinary variation: its result is summed with the others'.
    Regular,
    /// `post_NAME`: on the sum, before the post-affine map.
    Post,
}

/// A parameter of a variation: its XML attribute name and flam3's default.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ParamSpec {
    /// The attribute name, e.g. `julian_power`.
    pub name: &'static str,
    /// flam3's default value.
    pub default: f64,
}

/// A variation warpmc knows, identified by its index: 0 … 98 are flam3's
/// in flam3's order (0 = linear … 98 = mobius), then the Fractorium and
/// Apophysis plugin variations (`flatten`, `crop`, `linear3D`, …, and the
/// post-only `post_smartcrop`), then the `pre_` forms and the `post_` forms
/// of all of those but pre_blur and the post-only one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VariationKind(u16);

impl VariationKind {
    /// `pre_blur` (index 67), which moves the point before the others run.
    pub const PRE_BLUR: VariationKind = VariationKind(67);

    /// The variation with index `i`.
    pub fn from_index(i: usize) -> Option<Self> {
        (i < table::known().len()).then_some(VariationKind(i as u16))
    }

    /// The variation called `name` (flam3's or Fractorium's spelling).
    pub fn from_name(name: &str) -> Option<Self> {
        table::by_name(name).map(|i| VariationKind(i as u16))
    }

    /// Its name in genome files.
    pub fn name(self) -> &'static str {
        table::known()[self.index()].name
    }

    /// Its index: flam3's for flam3's variations.
    pub fn index(self) -> usize {
        usize::from(self.0)
    }

    /// The parameters, in a fixed order (the order of [`VariationSpec::params`]).
    pub fn params(self) -> &'static [ParamSpec] {
        table::known()[self.index()].params
    }

    /// How many of [`VariationKind::params`] flam3 itself reads: all of a
    /// flam3 variation's but those Fractorium added (log's `log_base`),
    /// none of the others'.
    pub fn flam3_params(self) -> usize {
        table::known()[self.index()].flam3_params
    }

    /// Whether this is one of flam3's 99 (flam3-render knows it).
    pub fn is_flam3(self) -> bool {
        self.index() < VARIATION_COUNT
    }

    /// Where the variation acts: before, among or after the ordinary ones.
    pub fn stage(self) -> Stage {
        table::known()[self.index()].stage
    }

    /// The ordinary variation a `pre_`/`post_` form applies (itself for an
    /// ordinary one, and for a post-only one such as `post_smartcrop`).
    pub fn base(self) -> VariationKind {
        VariationKind(table::known()[self.index()].base)
    }

    /// flam3's 99, in flam3's order.
    pub fn all() -> impl Iterator<Item = Self> {
        (0..VARIATION_COUNT).map(|i| VariationKind(i as u16))
    }

    /// Every ordinary variation warpmc knows: flam3's, then the others.
    pub fn regular() -> impl Iterator<Item = Self> {
        Self::known().filter(|k| k.stage() == Stage::Regular)
    }

    /// Whether a `pre_`/`post_` form adds its result to the point rather
    /// than replacing the point (Fractorium's "sum" assignment: blurs, pie,
    /// arch, square, sineblur …).
    pub(crate) fn summed(self) -> bool {
        table::known()[self.index()].summed
    }

    /// Whether, as an ordinary variation, it may replace the sum of the
    /// variations before it instead of adding to it (Fractorium's
    /// circlecrop and mirror_x), which makes the order of an xform's
    /// ordinary variations matter: Fractorium applies them in the order
    /// its file gives them.
    pub fn replaces_sum(self) -> bool {
        self.stage() == Stage::Regular && matches!(self.name(), "circlecrop" | "mirror_x")
    }

    /// Every variation warpmc knows, `pre_` and `post_` forms included.
    pub fn known() -> impl Iterator<Item = Self> {
        (0..table::known().len()).map(|i| VariationKind(i as u16))
    }
}

/// The variation and parameter index an xform attribute such as
/// `julian_power` belongs to. The aliases flam3's reader accepts are
/// understood too: `oscilloscope_*` for `oscope_*` (flam3 itself writes the
/// long form) and `Re_A` … `Im_D` for `mobius_re_a` … `mobius_im_d`.
pub fn param_owner(attribute: &str) -> Option<(VariationKind, usize)> {
    let find = |name: &str| table::param_by_name(name).map(|(k, i)| (VariationKind(k as u16), i));
    if let Some(rest) = attribute.strip_prefix("oscilloscope_") {
        return find(&format!("oscope_{rest}"));
    }
    if let Some(mobius) = mobius_alias(attribute) {
        return find(mobius);
    }
    find(attribute)
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
    ///
    /// # Panics
    ///
    /// When `i` is past both `params` and the kind's parameters.
    pub fn param(&self, i: usize) -> f64 {
        self.params.get(i).copied().unwrap_or_else(|| self.kind.params()[i].default)
    }
}

impl VariationSpec {
    /// Why warpmc cannot apply this variation with these parameters, when
    /// it cannot (settings of an implemented variation that need what
    /// warpmc's variations do not have, such as state carried from one
    /// iteration to the next); the reader drops such a variation as it
    /// drops an unknown one.
    pub fn unsupported(&self) -> Option<&'static str> {
        match self.kind.base().name() {
            "post_smartcrop" => plugin_tile::Smartcrop::unsupported(self),
            _ => None,
        }
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
    /// For a `post_` form: the xform's point before its variations (after
    /// the `pre_` forms), which post_smartcrop may crop instead.
    pub(crate) tx: f64,
    pub(crate) ty: f64,
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
    /// The xform's point before its variations ([`super::Point::tx`]).
    pub(crate) const TRANS: u8 = 16;
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

/// A prepared ordinary variation and whether it may replace the sum of
/// those before it ([`Op::replaces_sum`]).
#[derive(Clone, Copy, Debug)]
struct Item {
    prepared: Prepared,
    replaces: bool,
}

/// A prepared `pre_`/`post_` form: the variation, what it reads, and
/// whether its result replaces the point or is added to it.
#[derive(Clone, Copy, Debug)]
struct Form {
    prepared: Prepared,
    need: u8,
    summed: bool,
}

impl Form {
    /// The form at `(x, y)`; `trans` is the xform's point before its
    /// variations (read by post_smartcrop).
    #[inline]
    fn apply<R: RandomSource>(&self, x: f64, y: f64, trans: (f64, f64), rng: &mut R) -> (f64, f64) {
        let mut point = Point::new(x, y, self.need);
        (point.tx, point.ty) = trans;
        let (dx, dy) = self.prepared.op.eval(&point, self.prepared.weight, rng);
        if self.summed { (x + dx, y + dy) } else { (dx, dy) }
    }
}

/// The variations of one xform, ready to apply: per-xform constants
/// precomputed (as flam3's `xform_precalc` does), the shared per-point
/// values this set needs worked out once.
#[derive(Clone, Debug)]
pub struct VariationSet {
    items: Vec<Item>,
    /// pre_blur's weight, when the xform has it.
    pre_blur: Option<f64>,
    /// The `pre_` and `post_` forms, in the order given.
    pre: Vec<Form>,
    post: Vec<Form>,
    /// The union of the items' [`needs`].
    need: u8,
    /// [`Arranged::passes_through`].
    passes_through: bool,
}

/// How the variations of an xform are arranged for applying (the CPU's
/// [`VariationSet`] and the GPU's generated code share it): weight 0
/// dropped; pre_blur's weights summed; the `pre_` and `post_` forms in the
/// order given, except the forms of flatten (which leave the point alone);
/// the ordinary variations in index order (stable for repeats), as flam3
/// applies them, unless one of them replaces the sum of those before it
/// ([`VariationKind::replaces_sum`]): then in the order given, as
/// Fractorium applies them (and as the reader keeps them for such an
/// xform: the file's order).
pub(crate) struct Arranged<'a> {
    pub(crate) pre_blur: Option<f64>,
    pub(crate) pre: Vec<&'a VariationSpec>,
    pub(crate) regular: Vec<&'a VariationSpec>,
    pub(crate) post: Vec<&'a VariationSpec>,
    /// Whether the xform has a `pre_` form, pre_flatten included (which
    /// moves nothing, so is not in `pre`, but still counts for
    /// [`Arranged::passes_through`]).
    has_pre_form: bool,
}

impl<'a> Arranged<'a> {
    pub(crate) fn new(specs: &'a [VariationSpec]) -> Self {
        let mut a =
            Arranged { pre_blur: None, pre: Vec::new(), regular: Vec::new(), post: Vec::new(), has_pre_form: false };
        for s in specs.iter().filter(|s| s.weight != 0.0) {
            if s.kind == VariationKind::PRE_BLUR {
                a.pre_blur = Some(a.pre_blur.unwrap_or(0.0) + s.weight);
                continue;
            }
            let flatten = s.kind.base().name() == "flatten";
            a.has_pre_form |= s.kind.stage() == Stage::Pre;
            match s.kind.stage() {
                Stage::Pre if !flatten => a.pre.push(s),
                Stage::Post if !flatten => a.post.push(s),
                Stage::Pre | Stage::Post => {}
                Stage::Regular => a.regular.push(s),
            }
        }
        if !a.regular.iter().any(|s| s.kind.replaces_sum()) {
            a.regular.sort_by_key(|s| s.kind);
        }
        a
    }

    /// Whether the ordinary variations are skipped and the point passes
    /// through: Fractorium's rule for an xform with `pre_` forms (even one
    /// that moves nothing, pre_flatten) and no ordinary variation
    /// (Xform::Apply). With neither, the `post_` forms start from the
    /// origin, as every point does in flam3's xform without a variation
    /// (Fractorium since 1.0.0.7).
    pub(crate) fn passes_through(&self) -> bool {
        self.regular.is_empty() && self.has_pre_form
    }
}

impl VariationSet {
    /// Prepares `specs` for an xform whose pre-affine map is `coefs`
    /// (waves, popcorn, rings and fan read the xform's coefficients).
    ///
    /// Variations of weight zero are dropped, as flam3 drops them; the
    /// ordinary ones are applied in index order whatever the order of
    /// `specs` (in the order of `specs` when one of them replaces the sum,
    /// see [`VariationKind::replaces_sum`]), the `pre_` and `post_` forms
    /// in the order of `specs`.
    pub fn new(specs: &[VariationSpec], coefs: &Affine) -> Self {
        let a = Arranged::new(specs);
        let mut need = 0;
        let items = a
            .regular
            .iter()
            .map(|s| {
                let op = Op::new(s, &coefs.c);
                need |= op.needs();
                Item { prepared: Prepared { weight: s.weight, op }, replaces: op.replaces_sum() }
            })
            .collect();
        let form = |s: &&VariationSpec| {
            let op = Op::new(s, &coefs.c);
            Form { prepared: Prepared { weight: s.weight, op }, need: op.needs(), summed: s.kind.summed() }
        };
        let pre = a.pre.iter().map(form).collect();
        let post = a.post.iter().map(form).collect();
        VariationSet { items, pre_blur: a.pre_blur, pre, post, need, passes_through: a.passes_through() }
    }

    /// Whether the set has no variation left (flam3 then yields the origin).
    pub fn is_empty(&self) -> bool {
        self.items.is_empty() && self.pre.is_empty() && self.post.is_empty()
    }

    /// Applies the variations to the pre-affine-transformed point `(tx, ty)`
    /// and returns the result (before the post map). Random variations
    /// draw from `rng`.
    #[inline]
    pub fn apply<R: RandomSource>(&self, tx: f64, ty: f64, rng: &mut R) -> (f64, f64) {
        let (mut tx, mut ty) = match self.pre_blur {
            Some(w) => random::pre_blur(tx, ty, w, rng),
            None => (tx, ty),
        };
        for f in &self.pre {
            (tx, ty) = f.apply(tx, ty, (tx, ty), rng);
        }
        let (mut p0, mut p1) = (0.0, 0.0);
        if self.passes_through {
            (p0, p1) = (tx, ty);
        } else {
            let point = Point::new(tx, ty, self.need);
            for it in &self.items {
                let Prepared { weight, op } = &it.prepared;
                if it.replaces {
                    (p0, p1) = op.eval_replacing(&point, *weight, rng, (p0, p1));
                } else {
                    let (dx, dy) = op.eval(&point, *weight, rng);
                    p0 += dx;
                    p1 += dy;
                }
            }
        }
        for f in &self.post {
            (p0, p1) = f.apply(p0, p1, (tx, ty), rng);
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
