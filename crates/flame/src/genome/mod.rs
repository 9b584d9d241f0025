//! The flame description ("genome") as flam3 3.1.1 understands it, and its
//! XML reader.
//!
//! Field names follow flam3's XML attributes where they exist; the doc of
//! each field names the attribute it comes from and flam3's default. All
//! numbers are f64 as in flam3.

mod parse;
mod summary;
pub mod tools;
mod write;

pub use parse::{MAX_WARNINGS, ParseOptions, ParsedGenome, parse_file, parse_str};
pub(crate) use parse::{symmetry_xforms, symmetry_xforms_before_final};
pub use summary::FlameSummary;
pub use write::{Document, write_flame, write_genome};

use crate::palette::Palette;
use crate::variations::VariationSpec;

/// The spatial filter shapes flam3 offers (`filter_shape`), in flam3's
/// numbering (the order matters: it is also the order of flam3's tables).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum FilterShape {
    /// `gaussian` (flam3's default).
    #[default]
    Gaussian,
    /// `hermite`.
    Hermite,
    /// `box`.
    Box,
    /// `triangle`.
    Triangle,
    /// `bell`.
    Bell,
    /// `bspline`.
    BSpline,
    /// `mitchell`.
    Mitchell,
    /// `blackman`.
    Blackman,
    /// `catrom`.
    Catrom,
    /// `hanning`.
    Hanning,
    /// `hamming`.
    Hamming,
    /// `lanczos3`.
    Lanczos3,
    /// `lanczos2`.
    Lanczos2,
    /// `quadratic`.
    Quadratic,
}

impl FilterShape {
    /// All 14 shapes, in flam3's order.
    pub const ALL: [FilterShape; 14] = [
        FilterShape::Gaussian,
        FilterShape::Hermite,
        FilterShape::Box,
        FilterShape::Triangle,
        FilterShape::Bell,
        FilterShape::BSpline,
        FilterShape::Mitchell,
        FilterShape::Blackman,
        FilterShape::Catrom,
        FilterShape::Hanning,
        FilterShape::Hamming,
        FilterShape::Lanczos3,
        FilterShape::Lanczos2,
        FilterShape::Quadratic,
    ];

    /// The name used in the `filter_shape` attribute.
    pub fn name(self) -> &'static str {
        match self {
            FilterShape::Gaussian => "gaussian",
            FilterShape::Hermite => "hermite",
            FilterShape::Box => "box",
            FilterShape::Triangle => "triangle",
            FilterShape::Bell => "bell",
            FilterShape::BSpline => "bspline",
            FilterShape::Mitchell => "mitchell",
            FilterShape::Blackman => "blackman",
            FilterShape::Catrom => "catrom",
            FilterShape::Hanning => "hanning",
            FilterShape::Hamming => "hamming",
            FilterShape::Lanczos3 => "lanczos3",
            FilterShape::Lanczos2 => "lanczos2",
            FilterShape::Quadratic => "quadratic",
        }
    }

    /// The shape called `name` (case-insensitive), if any.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.name().eq_ignore_ascii_case(name))
    }
}

/// Temporal filter (`temporal_filter_type`): how the temporal samples of a
/// frame are weighted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum TemporalFilter {
    /// `box` (default): equal weights.
    #[default]
    Box,
    /// `gaussian`.
    Gaussian,
    /// `exp`: weights rising (or falling, for a negative exponent) as a power.
    Exp,
}

/// How a colour coordinate picks a palette entry (`palette_mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum PaletteMode {
    /// `step` (default): the entry the coordinate falls in.
    #[default]
    Step,
    /// `linear`: linear interpolation between neighbouring entries.
    Linear,
}

/// Interpolation between control points (`interpolation`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Interpolation {
    /// `linear` (default).
    #[default]
    Linear,
    /// `smooth`: Catmull-Rom through four control points.
    Smooth,
}

/// How affine coefficients are interpolated (`interpolation_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum AffineInterpolation {
    /// `linear`: the six coefficients independently.
    Linear,
    /// `log` (default): polar form, angles and log-magnitudes.
    #[default]
    Log,
    /// `compat`: in flam3 3.1.1, the six coefficients blended linearly,
    /// without aligning the xform lists (kept for older genomes).
    Compat,
    /// `older`: as `compat` in flam3 3.1.1.
    Older,
}

/// How palettes are interpolated (`palette_interpolation`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum PaletteInterpolation {
    /// `hsv`.
    Hsv,
    /// `sweep`: a wipe across the palette.
    Sweep,
    /// `rgb`.
    Rgb,
    /// `hsv_circular` (default): HSV with hues taking the short way round.
    #[default]
    HsvCircular,
}

/// A 2-D affine map in flam3's layout: `c[0] = (a, d)`, `c[1] = (b, e)`,
/// `c[2] = (c, f)` for the XML's `coefs="a d b e c f"`, so that
///
/// ```text
/// x' = c[0][0]·x + c[1][0]·y + c[2][0]
/// y' = c[0][1]·x + c[1][1]·y + c[2][1]
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Affine {
    /// The coefficients, `[[a, d], [b, e], [c, f]]`.
    pub c: [[f64; 2]; 3],
}

impl Affine {
    /// The identity map.
    pub const IDENTITY: Affine = Affine { c: [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]] };

    /// From the six numbers of a `coefs`/`post` attribute, in file order.
    pub fn from_xml_order(v: [f64; 6]) -> Self {
        Affine { c: [[v[0], v[1]], [v[2], v[3]], [v[4], v[5]]] }
    }

    /// Applies the map to a point.
    #[inline(always)]
    pub fn apply(&self, x: f64, y: f64) -> (f64, f64) {
        (self.c[0][0] * x + self.c[1][0] * y + self.c[2][0], self.c[0][1] * x + self.c[1][1] * y + self.c[2][1])
    }

    /// Whether this is exactly the identity (flam3 skips such post maps).
    pub fn is_identity(&self) -> bool {
        *self == Affine::IDENTITY
    }
}

impl Default for Affine {
    fn default() -> Self {
        Affine::IDENTITY
    }
}

/// One transform (`<xform>`) or the final transform (`<finalxform>`).
#[derive(Clone, Debug, PartialEq)]
pub struct XForm {
    /// `weight` (flam3's `density`): relative probability of being chosen.
    /// Ignored for the final transform. Default 0 (flam3 skips such xforms).
    pub weight: f64,
    /// `color`: the palette coordinate this transform pulls points towards,
    /// in [0, 1]. A second number in the attribute is accepted and ignored,
    /// as flam3 does. Default: 0 for even-numbered, 1 for odd-numbered
    /// xforms (flam3's `i & 1`).
    pub color: f64,
    /// `color_speed` (or derived from the deprecated `symmetry` as
    /// `(1 − symmetry) / 2`): how fast the colour coordinate moves to
    /// `color`. Default 0.5.
    pub color_speed: f64,
    /// `animate` (or `symmetry > 0` → 0): whether the xform rotates in
    /// animations made by flam3-genome. Kept for round trips. Default 1.
    pub animate: f64,
    /// `opacity` (`plotmode="off"` means 0): how visible points produced by
    /// this xform are. Default 1.
    pub opacity: f64,
    /// `coefs`: the pre-affine map. Default identity.
    pub coefs: Affine,
    /// `post`: the post-affine map. Default identity.
    pub post: Affine,
    /// The variations with non-zero weight, in flam3's variation order, each
    /// with its parameters (defaults filled in). flam3 3.1.1 drops its
    /// default `linear` when it reads an xform, so an xform whose element
    /// names no variation has none (and maps every point to the origin,
    /// before its post map), as in flam3.
    pub variations: Vec<VariationSpec>,
    /// `chaos` (xaos): row of multipliers on the next xform's weight after
    /// this one was applied. Entries missing from the file are 1. Empty for
    /// the final xform.
    pub chaos: Vec<f64>,
    /// `<motion>` children: how the xform moves in the frames flam3-genome's
    /// `rotate=`, `inter=` and `sequence=` write (renders ignore them, as
    /// flam3-render and flam3-animate do).
    pub motion: Vec<Motion>,
}

/// One `<motion>` element of an xform (flam3-genome's motion language):
/// changes added to the xform's values in a loop or transition frame at
/// blend b (0…1), each scaled by f(frequency · b) for the periodic
/// [`MotionFunction`] f. Values the element does not give are 0.
#[derive(Clone, Debug, PartialEq)]
pub struct Motion {
    /// `motion_frequency`: periods per loop (flam3 reads an integer).
    pub frequency: i64,
    /// `motion_function`; `None` when not given, which flam3 evaluates as
    /// [`MotionFunction::Hill`].
    pub function: Option<MotionFunction>,
    /// Change of `weight`.
    pub weight: f64,
    /// Change of `color`.
    pub color: f64,
    /// Change of `color_speed`.
    pub color_speed: f64,
    /// Change of `animate`.
    pub animate: f64,
    /// Change of `opacity`.
    pub opacity: f64,
    /// Changes of the `coefs` numbers.
    pub coefs: Affine,
    /// Changes of the `post` numbers.
    pub post: Affine,
    /// Changes of variation weights (`weight`) and parameters (`params`,
    /// 0 where not given), one entry per variation the element names.
    pub variations: Vec<VariationSpec>,
}

/// The periodic functions of `motion_function` (flam3's `motion_funcs`):
/// each 0 at whole periods, at most 1 in size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MotionFunction {
    /// `sin`: sin(2π t).
    Sin,
    /// `triangle`: a triangle wave rising to 1 at t = ¼ and falling to −1
    /// at t = ¾.
    Triangle,
    /// `hill`: (1 − cos 2π t) / 2.
    Hill,
}

impl MotionFunction {
    /// The attribute value.
    pub fn name(self) -> &'static str {
        match self {
            MotionFunction::Sin => "sin",
            MotionFunction::Triangle => "triangle",
            MotionFunction::Hill => "hill",
        }
    }

    /// The function at `t` (flam3's `motion_funcs`).
    pub fn at(self, t: f64) -> f64 {
        match self {
            MotionFunction::Sin => (2.0 * std::f64::consts::PI * t).sin(),
            MotionFunction::Triangle => {
                let mut fr = t % 1.0;
                if fr < 0.0 {
                    fr += 1.0;
                }
                if fr <= 0.25 {
                    4.0 * fr
                } else if fr <= 0.75 {
                    -4.0 * fr + 2.0
                } else {
                    4.0 * fr - 4.0
                }
            }
            MotionFunction::Hill => (1.0 - (2.0 * std::f64::consts::PI * t).cos()) * 0.5,
        }
    }
}

impl Motion {
    /// An element that changes nothing: frequency 0, every change 0.
    pub fn zero() -> Self {
        let zero = Affine { c: [[0.0; 2]; 3] };
        Motion {
            frequency: 0,
            function: None,
            weight: 0.0,
            color: 0.0,
            color_speed: 0.0,
            animate: 0.0,
            opacity: 0.0,
            coefs: zero,
            post: zero,
            variations: Vec::new(),
        }
    }
}

impl XForm {
    /// flam3's defaults for the xform with index `index` in its flame
    /// (before any attribute is read): no variations yet.
    pub fn flam3_default(index: usize) -> Self {
        XForm {
            weight: 0.0,
            color: (index & 1) as f64,
            color_speed: 0.5,
            animate: 1.0,
            opacity: 1.0,
            coefs: Affine::IDENTITY,
            post: Affine::IDENTITY,
            variations: Vec::new(),
            chaos: Vec::new(),
            motion: Vec::new(),
        }
    }

    /// The chaos multiplier towards xform `to` (1 where the row is short).
    pub fn chaos_to(&self, to: usize) -> f64 {
        self.chaos.get(to).copied().unwrap_or(1.0)
    }
}

/// Fractorium's colour curves: control points (x, y) in [0, 1]², sorted by
/// x, of the overall curve and of the red, green and blue ones. Each is the
/// cubic spline of Fractorium's `Spline` through its points (flat beyond
/// the first and last x); a finished channel value v becomes
/// channel(overall(v)) (`render::curves`).
#[derive(Clone, Debug, PartialEq)]
pub struct Curves {
    /// `[overall, red, green, blue]`.
    pub points: [Vec<[f64; 2]>; 4],
}

impl Curves {
    /// Fractorium's default curve: five points on the line y = x.
    pub const DEFAULT: [[f64; 2]; 5] = [[0.0, 0.0], [0.25, 0.25], [0.5, 0.5], [0.75, 0.75], [1.0, 1.0]];

    /// Whether any curve differs from [`Curves::DEFAULT`] (Fractorium's
    /// `CurvesSet`: only then are curves applied).
    pub fn is_set(&self) -> bool {
        self.points.iter().any(|p| p.as_slice() != Curves::DEFAULT.as_slice())
    }
}

/// One `<flame>` element: camera, rendering settings, palette and xforms.
#[derive(Clone, Debug, PartialEq)]
pub struct Flame {
    /// `name`, if present.
    pub name: Option<String>,
    /// `time`: position in an animation sequence. Default 0.
    pub time: f64,
    /// `size`: output width in pixels. Default 100.
    pub width: u32,
    /// `size`: output height in pixels. Default 100.
    pub height: u32,
    /// `center`: the point of the plane at the middle of the image.
    pub center: [f64; 2],
    /// `scale` (flam3's `pixels_per_unit`). Default 50.
    pub scale: f64,
    /// `rotate`: camera rotation in degrees (around `center`). Default 0.
    pub rotate: f64,
    /// `zoom`: the scale and the sample density are both multiplied by
    /// 2^zoom. Default 0.
    pub zoom: f64,
    /// `supersample` (or the older `oversample`): histogram cells per output
    /// pixel along each axis. Default 1.
    pub supersample: u32,
    /// `filter`: spatial filter radius in output pixels. Default 0.5.
    pub filter_radius: f64,
    /// `filter_shape`. Default gaussian.
    pub filter_shape: FilterShape,
    /// `quality` (flam3's `sample_density`): samples per output pixel.
    /// Default 1.
    pub quality: f64,
    /// `passes` (flam3's `nbatches`). Default 1.
    pub passes: u32,
    /// `temporal_samples`. Default 1000.
    pub temporal_samples: u32,
    /// `temporal_filter_type`. Default box.
    pub temporal_filter: TemporalFilter,
    /// `temporal_filter_width`. Default 1.
    pub temporal_filter_width: f64,
    /// `temporal_filter_exp`. Default 0.
    pub temporal_filter_exp: f64,
    /// `background`: RGB in [0, 1]. Default black.
    pub background: [f64; 3],
    /// `brightness`. Default 4.
    pub brightness: f64,
    /// `contrast`. Default 1; flam3 3.1.1 does not read the attribute, so
    /// genomes keep 1.
    pub contrast: f64,
    /// `gamma`. Default 4.
    pub gamma: f64,
    /// `gamma_threshold` (flam3's `gam_lin_thresh`). Default 0.01.
    pub gamma_threshold: f64,
    /// `highlight_power`. Default −1 (off).
    pub highlight_power: f64,
    /// `vibrancy`. Default 1.
    pub vibrancy: f64,
    /// `hue`: hue rotation applied to a numbered palette, in turns, stored
    /// modulo 1. Default 0.
    pub hue_rotation: f64,
    /// `estimator_radius` (flam3's `estimator`): maximum density-estimation
    /// kernel radius. Default 9; 0 disables density estimation.
    pub estimator_radius: f64,
    /// `estimator_minimum`. Default 0.
    pub estimator_minimum: f64,
    /// `estimator_curve`. Default 0.4.
    pub estimator_curve: f64,
    /// `palette_mode`. Default step.
    pub palette_mode: PaletteMode,
    /// `interpolation`. Default linear.
    pub interpolation: Interpolation,
    /// `interpolation_type` (older files: `interpolation_space`). Default log.
    pub affine_interpolation: AffineInterpolation,
    /// `palette_interpolation`. Default hsv_circular.
    pub palette_interpolation: PaletteInterpolation,
    /// `hsv_rgb_palette_blend`. Default 0.
    pub hsv_rgb_palette_blend: f64,
    /// Fractorium's colour curves (`overall_curve`, `red_curve`,
    /// `green_curve`, `blue_curve`, or the older `curves`), applied to the
    /// finished image; `None` when the genome gives none or only
    /// Fractorium's defaults.
    pub curves: Option<Curves>,
    /// The genome's `<edit>` element (flam3's record of who made it and
    /// from what, a tree of nested `<edit>`s) as XML, kept as read and
    /// written back, so that the genome tools do not lose it; `None` when
    /// it has none. Rendering ignores it.
    pub edits: Option<String>,
    /// The palette: 256 RGBA entries (all zero, alpha included, when the
    /// genome gives no colours, as in flam3).
    pub palette: Palette,
    /// The `<xform>` elements, in file order.
    pub xforms: Vec<XForm>,
    /// The `<finalxform>`, if any.
    pub final_xform: Option<XForm>,
}

impl Default for Flame {
    /// flam3's defaults (`clear_cp` with default_flag set), with an
    /// all-black palette and no xforms.
    fn default() -> Self {
        Flame {
            name: None,
            time: 0.0,
            width: 100,
            height: 100,
            center: [0.0, 0.0],
            scale: 50.0,
            rotate: 0.0,
            zoom: 0.0,
            supersample: 1,
            filter_radius: 0.5,
            filter_shape: FilterShape::Gaussian,
            quality: 1.0,
            passes: 1,
            temporal_samples: 1000,
            temporal_filter: TemporalFilter::Box,
            temporal_filter_width: 1.0,
            temporal_filter_exp: 0.0,
            background: [0.0; 3],
            brightness: 4.0,
            contrast: 1.0,
            gamma: 4.0,
            gamma_threshold: 0.01,
            highlight_power: -1.0,
            vibrancy: 1.0,
            hue_rotation: 0.0,
            estimator_radius: 9.0,
            estimator_minimum: 0.0,
            estimator_curve: 0.4,
            palette_mode: PaletteMode::Step,
            interpolation: Interpolation::Linear,
            affine_interpolation: AffineInterpolation::Log,
            palette_interpolation: PaletteInterpolation::HsvCircular,
            hsv_rgb_palette_blend: 0.0,
            curves: None,
            edits: None,
            palette: Palette::black(),
            xforms: Vec::new(),
            final_xform: None,
        }
    }
}

impl Flame {
    /// A short label for messages: the name (its first
    /// [`LABEL_NAME_CHARS`] characters), or `#index` when unnamed.
    pub fn label(&self, index: usize) -> String {
        flame_label(self.name.as_deref(), index)
    }

    /// The xforms whose chaos row gives every xform zero weight (weight
    /// times multiplier), when the weights alone do not: flam3 refuses such
    /// a flame, Fractorium takes xform 0 after them.
    pub fn dead_chaos_rows(&self) -> impl Iterator<Item = usize> + '_ {
        dead_chaos_rows(&self.xforms)
    }
}

/// [`Flame::dead_chaos_rows`] of a list of xforms.
pub(crate) fn dead_chaos_rows(xforms: &[XForm]) -> impl Iterator<Item = usize> + '_ {
    let any_weight = xforms.iter().any(|x| x.weight > 0.0);
    xforms.iter().enumerate().filter_map(move |(i, x)| {
        let dead = xforms.iter().enumerate().all(|(j, y)| y.weight * x.chaos_to(j) == 0.0);
        (any_weight && dead).then_some(i)
    })
}

/// Characters of a flame's name that messages quote; a longer name is cut
/// there and ends in "…", so that a file with a name of megabytes does not
/// repeat it in every message about its xforms.
pub const LABEL_NAME_CHARS: usize = 60;

/// [`Flame::label`] from a name and an index.
pub(crate) fn flame_label(name: Option<&str>, index: usize) -> String {
    match name {
        Some(n) => match n.char_indices().nth(LABEL_NAME_CHARS) {
            Some((cut, _)) => format!("'{}…'", &n[..cut]),
            None => format!("'{n}'"),
        },
        None => format!("#{index}"),
    }
}
