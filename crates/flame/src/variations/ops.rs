//! The prepared form of a variation: one enum variant per variation with
//! its per-xform constants, built once per xform and matched once per
//! point.

use warpmc_rng::RandomSource;

use super::{
    Point, VARIATION_COUNT, VariationSpec, apo, classic, complex, julia, needs, plugin, plugin_blur, plugin_map,
    plugin_tile, random,
};

/// A variation ready to apply (pre_blur excepted: [`super::VariationSet`]
/// applies it before the others).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Op {
    /// 0: linear.
    Linear,
    /// 1: sinusoidal.
    Sinusoidal,
    /// 2: spherical.
    Spherical,
    /// 3: swirl.
    Swirl,
    /// 4: horseshoe.
    Horseshoe,
    /// 5: polar.
    Polar,
    /// 6: handkerchief.
    Handkerchief,
    /// 7: heart.
    Heart,
    /// 8: disc.
    Disc,
    /// 9: spiral.
    Spiral,
    /// 10: hyperbolic.
    Hyperbolic,
    /// 11: diamond.
    Diamond,
    /// 12: ex.
    Ex,
    /// 13: julia.
    Julia,
    /// 14: bent.
    Bent,
    /// 15: waves.
    Waves(classic::Waves),
    /// 16: fisheye.
    Fisheye,
    /// 17: popcorn.
    Popcorn(classic::Popcorn),
    /// 18: exponential.
    Exponential,
    /// 19: power.
    Power,
    /// 20: cosine.
    Cosine,
    /// 21: rings.
    Rings(classic::Rings),
    /// 22: fan.
    Fan(classic::Fan),
    /// 23: blob.
    Blob(classic::Blob),
    /// 24: pdj.
    Pdj(classic::Pdj),
    /// 25: fan2.
    Fan2(classic::Fan2),
    /// 26: rings2.
    Rings2(classic::Rings2),
    /// 27: eyefish.
    Eyefish,
    /// 28: bubble.
    Bubble,
    /// 29: cylinder.
    Cylinder,
    /// 30: perspective.
    Perspective(classic::Perspective),
    /// 31: noise.
    Noise,
    /// 32: julian.
    Julian(julia::Julian),
    /// 33: juliascope.
    JuliaScope(julia::JuliaScope),
    /// 34: blur.
    Blur,
    /// 35: gaussian_blur.
    GaussianBlur,
    /// 36: radial_blur.
    RadialBlur(random::RadialBlur),
    /// 37: pie.
    Pie(random::Pie),
    /// 38: ngon.
    Ngon(apo::Ngon),
    /// 39: curl.
    Curl(apo::Curl),
    /// 40: rectangles.
    Rectangles(apo::Rectangles),
    /// 41: arch.
    Arch,
    /// 42: tangent.
    Tangent,
    /// 43: square.
    Square,
    /// 44: rays.
    Rays,
    /// 45: blade.
    Blade,
    /// 46: secant2.
    Secant2,
    /// 47: twintrian.
    Twintrian,
    /// 48: cross.
    Cross,
    /// 49: disc2.
    Disc2(apo::Disc2),
    /// 50: super_shape.
    SuperShape(random::SuperShape),
    /// 51: flower.
    Flower(random::Flower),
    /// 52: conic.
    Conic(random::Conic),
    /// 53: parabola.
    Parabola(random::Parabola),
    /// 54: bent2.
    Bent2(apo::Bent2),
    /// 55: bipolar.
    Bipolar(apo::Bipolar),
    /// 56: boarders.
    Boarders,
    /// 57: butterfly.
    Butterfly,
    /// 58: cell.
    Cell(apo::Cell),
    /// 59: cpow.
    Cpow(julia::Cpow),
    /// 60: curve.
    Curve(apo::Curve),
    /// 61: edisc.
    Edisc,
    /// 62: elliptic.
    Elliptic,
    /// 63: escher.
    Escher(julia::Escher),
    /// 64: foci.
    Foci,
    /// 65: lazysusan.
    LazySusan(apo::LazySusan),
    /// 66: loonie.
    Loonie,
    /// 68: modulus.
    Modulus(apo::Modulus),
    /// 69: oscilloscope.
    Oscilloscope(apo::Oscilloscope),
    /// 70: polar2.
    Polar2,
    /// 71: popcorn2.
    Popcorn2(apo::Popcorn2),
    /// 72: scry.
    Scry,
    /// 73: separation.
    Separation(apo::Separation),
    /// 74: split.
    Split(apo::Split),
    /// 75: splits.
    Splits(apo::Splits),
    /// 76: stripes.
    Stripes(apo::Stripes),
    /// 77: wedge.
    Wedge(julia::Wedge),
    /// 78: wedge_julia.
    WedgeJulia(julia::WedgeJulia),
    /// 79: wedge_sph.
    WedgeSph(julia::WedgeSph),
    /// 80: whorl.
    Whorl(julia::Whorl),
    /// 81: waves2.
    Waves2(apo::Waves2),
    /// 82: exp.
    Exp,
    /// 83: log, with `1 / ln(log_base)` (Fractorium's parameter).
    Log(f64),
    /// 84: sin.
    Sin,
    /// 85: cos.
    Cos,
    /// 86: tan.
    Tan,
    /// 87: sec.
    Sec,
    /// 88: csc.
    Csc,
    /// 89: cot.
    Cot,
    /// 90: sinh.
    Sinh,
    /// 91: cosh.
    Cosh,
    /// 92: tanh.
    Tanh,
    /// 93: sech.
    Sech,
    /// 94: csch.
    Csch,
    /// 95: coth.
    Coth,
    /// 96: auger.
    Auger(apo::Auger),
    /// 97: flux.
    Flux(apo::Flux),
    /// 98: mobius.
    Mobius(apo::Mobius),
    /// 99: flatten (nothing in the plane).
    Flatten,
    /// 100: crop.
    Crop(plugin::Crop),
    /// 102: crackle.
    Crackle(plugin::Crackle),
    /// Fractorium's gaussian.
    Gaussian,
    /// sineblur.
    Sineblur(plugin_blur::Sineblur),
    /// blur_linear.
    BlurLinear(plugin_blur::BlurLinear),
    /// blur_zoom.
    BlurZoom(plugin_blur::BlurZoom),
    /// blur_circle.
    BlurCircle,
    /// circleblur.
    Circleblur,
    /// rblur.
    Rblur(plugin_blur::Rblur),
    /// Fractorium's Mobius.
    MobiusF(plugin_map::MobiusF),
    /// hemisphere.
    Hemisphere,
    /// unpolar.
    Unpolar,
    /// epispiral.
    Epispiral(plugin_map::Epispiral),
    /// twoface.
    Twoface,
    /// glynnia.
    Glynnia,
    /// wdisc.
    Wdisc,
    /// hypertile.
    Hypertile(plugin_map::Hypertile),
    /// hypertile1.
    Hypertile1(plugin_map::Hypertile1),
    /// hypertile2.
    Hypertile2(plugin_map::Hypertile2),
    /// bTransform.
    BTransform(plugin_map::BTransform),
    /// eJulia.
    EJulia(plugin_map::EJulia),
    /// pow_block.
    PowBlock(plugin_map::PowBlock),
    /// barycentroid.
    Barycentroid(plugin_map::Barycentroid),
    /// smartshape.
    Smartshape(plugin_map::Smartshape),
    /// y.
    YShape(plugin_map::YShape),
    /// bwraps.
    Bwraps(plugin_tile::Bwraps),
    /// gnarly.
    Gnarly(plugin_tile::Gnarly),
    /// hexes.
    Hexes(plugin_tile::Hexes),
    /// Voron.
    Voron(plugin_tile::Voron),
    /// shredlin.
    Shredlin(plugin_tile::Shredlin),
    /// tile_log.
    TileLog(plugin_tile::TileLog),
    /// tile_hlp.
    TileHlp(plugin_tile::TileHlp),
    /// cropn.
    Cropn(plugin_tile::Cropn),
    /// bcircle.
    Bcircle(plugin_tile::Bcircle),
    /// circlecrop.
    Circlecrop(plugin_tile::Circlecrop),
    /// mirror_x.
    MirrorX,
    /// post_smartcrop.
    Smartcrop(plugin_tile::Smartcrop),
}

impl Op {
    /// Prepares `s` (not pre_blur) for an xform with pre-affine
    /// coefficients `c`. A `pre_`/`post_` form is prepared as the ordinary
    /// variation it applies.
    pub(crate) fn new(s: &VariationSpec, c: &[[f64; 2]; 3]) -> Op {
        match s.kind.base().index() {
            // linear3D is linear in the plane.
            0 | 101 => Op::Linear,
            1 => Op::Sinusoidal,
            2 => Op::Spherical,
            3 => Op::Swirl,
            4 => Op::Horseshoe,
            5 => Op::Polar,
            6 => Op::Handkerchief,
            7 => Op::Heart,
            8 => Op::Disc,
            9 => Op::Spiral,
            10 => Op::Hyperbolic,
            11 => Op::Diamond,
            12 => Op::Ex,
            13 => Op::Julia,
            14 => Op::Bent,
            15 => Op::Waves(classic::Waves::new(c)),
            16 => Op::Fisheye,
            17 => Op::Popcorn(classic::Popcorn::new(c)),
            18 => Op::Exponential,
            19 => Op::Power,
            20 => Op::Cosine,
            21 => Op::Rings(classic::Rings::new(c)),
            22 => Op::Fan(classic::Fan::new(c)),
            23 => Op::Blob(classic::Blob::new(s)),
            24 => Op::Pdj(classic::Pdj::new(s)),
            25 => Op::Fan2(classic::Fan2::new(s)),
            26 => Op::Rings2(classic::Rings2::new(s)),
            27 => Op::Eyefish,
            28 => Op::Bubble,
            29 => Op::Cylinder,
            30 => Op::Perspective(classic::Perspective::new(s)),
            31 => Op::Noise,
            32 => Op::Julian(julia::Julian::new(s)),
            33 => Op::JuliaScope(julia::JuliaScope::new(s)),
            34 => Op::Blur,
            35 => Op::GaussianBlur,
            36 => Op::RadialBlur(random::RadialBlur::new(s)),
            37 => Op::Pie(random::Pie::new(s)),
            38 => Op::Ngon(apo::Ngon::new(s)),
            39 => Op::Curl(apo::Curl::new(s)),
            40 => Op::Rectangles(apo::Rectangles::new(s)),
            41 => Op::Arch,
            42 => Op::Tangent,
            43 => Op::Square,
            44 => Op::Rays,
            45 => Op::Blade,
            46 => Op::Secant2,
            47 => Op::Twintrian,
            48 => Op::Cross,
            49 => Op::Disc2(apo::Disc2::new(s)),
            50 => Op::SuperShape(random::SuperShape::new(s)),
            51 => Op::Flower(random::Flower::new(s)),
            52 => Op::Conic(random::Conic::new(s)),
            53 => Op::Parabola(random::Parabola::new(s)),
            54 => Op::Bent2(apo::Bent2::new(s)),
            55 => Op::Bipolar(apo::Bipolar::new(s)),
            56 => Op::Boarders,
            57 => Op::Butterfly,
            58 => Op::Cell(apo::Cell::new(s)),
            59 => Op::Cpow(julia::Cpow::new(s)),
            60 => Op::Curve(apo::Curve::new(s)),
            61 => Op::Edisc,
            62 => Op::Elliptic,
            63 => Op::Escher(julia::Escher::new(s)),
            64 => Op::Foci,
            65 => Op::LazySusan(apo::LazySusan::new(s)),
            66 => Op::Loonie,
            68 => Op::Modulus(apo::Modulus::new(s)),
            69 => Op::Oscilloscope(apo::Oscilloscope::new(s)),
            70 => Op::Polar2,
            71 => Op::Popcorn2(apo::Popcorn2::new(s)),
            72 => Op::Scry,
            73 => Op::Separation(apo::Separation::new(s)),
            74 => Op::Split(apo::Split::new(s)),
            75 => Op::Splits(apo::Splits::new(s)),
            76 => Op::Stripes(apo::Stripes::new(s)),
            77 => Op::Wedge(julia::Wedge::new(s)),
            78 => Op::WedgeJulia(julia::WedgeJulia::new(s)),
            79 => Op::WedgeSph(julia::WedgeSph::new(s)),
            80 => Op::Whorl(julia::Whorl::new(s)),
            81 => Op::Waves2(apo::Waves2::new(s)),
            82 => Op::Exp,
            83 => Op::Log(complex::inv_ln_base(s.param(0))),
            84 => Op::Sin,
            85 => Op::Cos,
            86 => Op::Tan,
            87 => Op::Sec,
            88 => Op::Csc,
            89 => Op::Cot,
            90 => Op::Sinh,
            91 => Op::Cosh,
            92 => Op::Tanh,
            93 => Op::Sech,
            94 => Op::Csch,
            95 => Op::Coth,
            96 => Op::Auger(apo::Auger::new(s)),
            97 => Op::Flux(apo::Flux::new(s)),
            98 => Op::Mobius(apo::Mobius::new(s)),
            i if i >= VARIATION_COUNT => Op::plugin(s),
            i => unreachable!("variation {i} is pre_blur"),
        }
    }

    /// Prepares one of the variations beyond flam3's (by name: the table's
    /// order is free to change).
    fn plugin(s: &VariationSpec) -> Op {
        match s.kind.base().name() {
            "flatten" => Op::Flatten,
            "crop" => Op::Crop(plugin::Crop::new(s)),
            "crackle" => Op::Crackle(plugin::Crackle::new(s)),
            "gaussian" => Op::Gaussian,
            "sineblur" => Op::Sineblur(plugin_blur::Sineblur::new(s)),
            "blur_linear" => Op::BlurLinear(plugin_blur::BlurLinear::new(s)),
            "blur_zoom" => Op::BlurZoom(plugin_blur::BlurZoom::new(s)),
            "blur_circle" => Op::BlurCircle,
            "circleblur" => Op::Circleblur,
            "rblur" => Op::Rblur(plugin_blur::Rblur::new(s)),
            "Mobius" => Op::MobiusF(plugin_map::MobiusF::new(s)),
            "hemisphere" => Op::Hemisphere,
            "unpolar" => Op::Unpolar,
            "epispiral" => Op::Epispiral(plugin_map::Epispiral::new(s)),
            "twoface" => Op::Twoface,
            "glynnia" => Op::Glynnia,
            "wdisc" => Op::Wdisc,
            "hypertile" => Op::Hypertile(plugin_map::Hypertile::new(s)),
            "hypertile1" => Op::Hypertile1(plugin_map::Hypertile1::new(s)),
            "hypertile2" => Op::Hypertile2(plugin_map::Hypertile2::new(s)),
            "bTransform" => Op::BTransform(plugin_map::BTransform::new(s)),
            "eJulia" => Op::EJulia(plugin_map::EJulia::new(s)),
            "pow_block" => Op::PowBlock(plugin_map::PowBlock::new(s)),
            "barycentroid" => Op::Barycentroid(plugin_map::Barycentroid::new(s)),
            "smartshape" => Op::Smartshape(plugin_map::Smartshape::new(s)),
            "y" => Op::YShape(plugin_map::YShape::new(s)),
            "bwraps" => Op::Bwraps(plugin_tile::Bwraps::new(s)),
            "gnarly" => Op::Gnarly(plugin_tile::Gnarly::new(s)),
            "hexes" => Op::Hexes(plugin_tile::Hexes::new(s)),
            "Voron" => Op::Voron(plugin_tile::Voron::new(s)),
            "shredlin" => Op::Shredlin(plugin_tile::Shredlin::new(s)),
            "tile_log" => Op::TileLog(plugin_tile::TileLog::new(s)),
            "tile_hlp" => Op::TileHlp(plugin_tile::TileHlp::new(s)),
            "cropn" => Op::Cropn(plugin_tile::Cropn::new(s)),
            "bcircle" => Op::Bcircle(plugin_tile::Bcircle::new(s)),
            "circlecrop" => Op::Circlecrop(plugin_tile::Circlecrop::new(s)),
            "mirror_x" => Op::MirrorX,
            "post_smartcrop" => Op::Smartcrop(plugin_tile::Smartcrop::new(s)),
            // linear3D is linear in the plane.
            "linear3D" => Op::Linear,
            name => unreachable!("variation {name} is in the table but not prepared"),
        }
    }

    /// Whether, as an ordinary variation, this one may replace the sum of
    /// the variations before it ([`Op::eval_replacing`]) instead of adding
    /// to it.
    pub(crate) fn replaces_sum(&self) -> bool {
        matches!(self, Op::Circlecrop(_) | Op::MirrorX)
    }

    /// The running sum of an xform's ordinary variations after this one,
    /// from the sum `sum` before it: Fractorium's circlecrop (regular, a
    /// point sent to the origin) and mirror_x reset the sum before adding.
    pub(super) fn eval_replacing<R: RandomSource>(
        &self,
        p: &Point,
        w: f64,
        rng: &mut R,
        sum: (f64, f64),
    ) -> (f64, f64) {
        match self {
            Op::Circlecrop(v) => match v.eval(p, w, rng) {
                (_, true) => (0.0, 0.0),
                ((dx, dy), false) => (sum.0 + dx, sum.1 + dy),
            },
            Op::MirrorX => plugin_tile::mirror_x(p, rng),
            _ => {
                let (dx, dy) = self.eval(p, w, rng);
                (sum.0 + dx, sum.1 + dy)
            }
        }
    }

    /// The shared per-point values this variation reads.
    pub(crate) fn needs(&self) -> u8 {
        let mut n = 0;
        if matches!(self, Op::Smartcrop(_)) {
            n |= needs::TRANS;
        }
        if matches!(
            self,
            Op::Horseshoe
                | Op::Polar
                | Op::Handkerchief
                | Op::Heart
                | Op::Disc
                | Op::Ex
                | Op::Julia
                | Op::Fisheye
                | Op::Fan(_)
                | Op::Fan2(_)
                | Op::Eyefish
                | Op::RadialBlur(_)
                | Op::Blade
                | Op::Secant2
                | Op::Twintrian
                | Op::SuperShape(_)
                | Op::Flower(_)
                | Op::Conic(_)
                | Op::Parabola(_)
                | Op::Scry
                | Op::Wedge(_)
                | Op::WedgeSph(_)
                | Op::Whorl(_)
                | Op::Glynnia
                | Op::Wdisc
                | Op::Cropn(_)
                | Op::Smartshape(_)
                | Op::YShape(_)
        ) {
            n |= needs::SQRT;
        }
        if matches!(
            self,
            Op::Polar
                | Op::Handkerchief
                | Op::Heart
                | Op::Disc
                | Op::Ex
                | Op::Julia
                | Op::Fan(_)
                | Op::Blob(_)
                | Op::Fan2(_)
                | Op::Disc2(_)
                | Op::Polar2
        ) {
            n |= needs::ATAN_XY;
        }
        if matches!(
            self,
            Op::Spiral | Op::Hyperbolic | Op::Diamond | Op::Power | Op::Rings(_) | Op::Blob(_) | Op::Rings2(_)
        ) {
            n |= needs::ANGLES;
        }
        if matches!(
            self,
            Op::Julian(_)
                | Op::JuliaScope(_)
                | Op::RadialBlur(_)
                | Op::Ngon(_)
                | Op::SuperShape(_)
                | Op::Flower(_)
                | Op::Cpow(_)
                | Op::Escher(_)
                | Op::Wedge(_)
                | Op::WedgeJulia(_)
                | Op::WedgeSph(_)
                | Op::Whorl(_)
                | Op::Log(_)
                | Op::Epispiral(_)
                | Op::Wdisc
                | Op::PowBlock(_)
                | Op::Cropn(_)
                | Op::Smartshape(_)
                | Op::YShape(_)
        ) {
            n |= needs::ATAN_YX;
        }
        n
    }

    /// The contribution of this variation at `p`, weight `w` included.
    ///
    /// Deliberately not inlined into [`super::VariationSet::apply`]: inside
    /// the per-point loop LLVM hoists work shared by several arms (sines of
    /// `x`, `ln r²` …) above the match, so every point paid for all of them
    /// (docs/benchmarks/flame.md has the cost). As a function of its own the
    /// match is one indirect jump per variation.
    #[inline(never)]
    pub(super) fn eval<R: RandomSource>(&self, p: &Point, w: f64, rng: &mut R) -> (f64, f64) {
        match self {
            Op::Linear => classic::linear(p, w),
            Op::Sinusoidal => classic::sinusoidal(p, w),
            Op::Spherical => classic::spherical(p, w),
            Op::Swirl => classic::swirl(p, w),
            Op::Horseshoe => classic::horseshoe(p, w),
            Op::Polar => classic::polar(p, w),
            Op::Handkerchief => classic::handkerchief(p, w),
            Op::Heart => classic::heart(p, w),
            Op::Disc => classic::disc(p, w),
            Op::Spiral => classic::spiral(p, w),
            Op::Hyperbolic => classic::hyperbolic(p, w),
            Op::Diamond => classic::diamond(p, w),
            Op::Ex => classic::ex(p, w),
            Op::Julia => classic::julia(p, w, rng),
            Op::Bent => classic::bent(p, w),
            Op::Waves(v) => v.eval(p, w),
            Op::Fisheye => classic::fisheye(p, w),
            Op::Popcorn(v) => v.eval(p, w),
            Op::Exponential => classic::exponential(p, w),
            Op::Power => classic::power(p, w),
            Op::Cosine => classic::cosine(p, w),
            Op::Rings(v) => v.eval(p, w),
            Op::Fan(v) => v.eval(p, w),
            Op::Blob(v) => v.eval(p, w),
            Op::Pdj(v) => v.eval(p, w),
            Op::Fan2(v) => v.eval(p, w),
            Op::Rings2(v) => v.eval(p, w),
            Op::Eyefish => classic::eyefish(p, w),
            Op::Bubble => classic::bubble(p, w),
            Op::Cylinder => classic::cylinder(p, w),
            Op::Perspective(v) => v.eval(p, w),
            Op::Noise => random::noise(p, w, rng),
            Op::Julian(v) => v.eval(p, w, rng),
            Op::JuliaScope(v) => v.eval(p, w, rng),
            Op::Blur => random::blur(w, rng),
            Op::GaussianBlur => random::gaussian_blur(w, rng),
            Op::RadialBlur(v) => v.eval(p, w, rng),
            Op::Pie(v) => v.eval(w, rng),
            Op::Ngon(v) => v.eval(p, w),
            Op::Curl(v) => v.eval(p, w),
            Op::Rectangles(v) => v.eval(p, w),
            Op::Arch => random::arch(w, rng),
            Op::Tangent => apo::tangent(p, w),
            Op::Square => random::square(w, rng),
            Op::Rays => random::rays(p, w, rng),
            Op::Blade => random::blade(p, w, rng),
            Op::Secant2 => apo::secant2(p, w),
            Op::Twintrian => random::twintrian(p, w, rng),
            Op::Cross => apo::cross(p, w),
            Op::Disc2(v) => v.eval(p, w),
            Op::SuperShape(v) => v.eval(p, w, rng),
            Op::Flower(v) => v.eval(p, w, rng),
            Op::Conic(v) => v.eval(p, w, rng),
            Op::Parabola(v) => v.eval(p, rng),
            Op::Bent2(v) => v.eval(p, w),
            Op::Bipolar(v) => v.eval(p),
            Op::Boarders => random::boarders(p, w, rng),
            Op::Butterfly => apo::butterfly(p, w),
            Op::Cell(v) => v.eval(p, w),
            Op::Cpow(v) => v.eval(p, w, rng),
            Op::Curve(v) => v.eval(p, w),
            Op::Edisc => apo::edisc(p, w),
            Op::Elliptic => apo::elliptic(p, w),
            Op::Escher(v) => v.eval(p, w),
            Op::Foci => apo::foci(p, w),
            Op::LazySusan(v) => v.eval(p, w),
            Op::Loonie => apo::loonie(p, w),
            Op::Modulus(v) => v.eval(p, w),
            Op::Oscilloscope(v) => v.eval(p, w),
            Op::Polar2 => apo::polar2(p, w),
            Op::Popcorn2(v) => v.eval(p, w),
            Op::Scry => apo::scry(p, w),
            Op::Separation(v) => v.eval(p, w),
            Op::Split(v) => v.eval(p, w),
            Op::Splits(v) => v.eval(p, w),
            Op::Stripes(v) => v.eval(p, w),
            Op::Wedge(v) => v.eval(p, w),
            Op::WedgeJulia(v) => v.eval(p, w, rng),
            Op::WedgeSph(v) => v.eval(p, w),
            Op::Whorl(v) => v.eval(p, w),
            Op::Waves2(v) => v.eval(p, w),
            Op::Exp => complex::exp(p, w),
            Op::Log(inv) => complex::log(p, w, *inv),
            Op::Sin => complex::sin(p, w),
            Op::Cos => complex::cos(p, w),
            Op::Tan => complex::tan(p, w),
            Op::Sec => complex::sec(p, w),
            Op::Csc => complex::csc(p, w),
            Op::Cot => complex::cot(p, w),
            Op::Sinh => complex::sinh(p, w),
            Op::Cosh => complex::cosh(p, w),
            Op::Tanh => complex::tanh(p, w),
            Op::Sech => complex::sech(p, w),
            Op::Csch => complex::csch(p, w),
            Op::Coth => complex::coth(p, w),
            Op::Auger(v) => v.eval(p, w),
            Op::Flux(v) => v.eval(p, w),
            Op::Mobius(v) => v.eval(p, w),
            Op::Flatten => (0.0, 0.0),
            Op::Crop(v) => v.eval(p, w, rng),
            Op::Crackle(v) => v.eval(w, rng),
            Op::Gaussian => plugin_blur::gaussian(p, w, rng),
            Op::Sineblur(v) => v.eval(w, rng),
            Op::BlurLinear(v) => v.eval(p, w, rng),
            Op::BlurZoom(v) => v.eval(p, w, rng),
            Op::BlurCircle => plugin_blur::blur_circle(w, rng),
            Op::Circleblur => plugin_blur::circleblur(w, rng),
            Op::Rblur(v) => v.eval(p, w, rng),
            Op::MobiusF(v) => v.eval(p, w),
            Op::Hemisphere => plugin_map::hemisphere(p, w),
            Op::Unpolar => plugin_map::unpolar(p, w),
            Op::Epispiral(v) => v.eval(p, w, rng),
            Op::Twoface => plugin_map::twoface(p, w),
            Op::Glynnia => plugin_map::glynnia(p, w, rng),
            Op::Wdisc => plugin_map::wdisc(p, w),
            Op::Hypertile(v) => v.eval(p, w),
            Op::Hypertile1(v) => v.eval(p, w, rng),
            Op::Hypertile2(v) => v.eval(p, w, rng),
            Op::BTransform(v) => v.eval(p, w, rng),
            Op::EJulia(v) => v.eval(p, w, rng),
            Op::PowBlock(v) => v.eval(p, w, rng),
            Op::Barycentroid(v) => v.eval(p, w),
            Op::Smartshape(v) => v.eval(p, w),
            Op::YShape(v) => v.eval(p, w),
            Op::Bwraps(v) => v.eval(p, w),
            Op::Gnarly(v) => v.eval(p, w),
            Op::Hexes(v) => v.eval(p, w),
            Op::Voron(v) => v.eval(p, w),
            Op::Shredlin(v) => v.eval(p, w),
            Op::TileLog(v) => v.eval(p, w, rng),
            Op::TileHlp(v) => v.eval(p, w, rng),
            Op::Cropn(v) => v.eval(p, w, rng),
            Op::Bcircle(v) => v.eval(p, w, rng),
            Op::Circlecrop(v) => v.eval(p, w, rng).0,
            Op::MirrorX => plugin_tile::mirror_x(p, rng),
            Op::Smartcrop(v) => v.eval(p, w, rng),
        }
    }
}
