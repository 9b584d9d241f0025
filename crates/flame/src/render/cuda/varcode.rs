//! Code generation for an xform's variations (cuburn's approach): the
//! kernel source gets one device function per xform that calls only the
//! variations the xform uses, so only those are compiled.
//!
//! The variations themselves are device functions in
//! `kernels/variations.cuh` ([`VARIATIONS_CUH`]), one per flam3 variation,
//! written with `real` so that one source compiles in float and in double.
//! Each reads its weight and its per-xform constants from a parameter
//! array: `q[0]` is the weight and `q[1..]` are the fields of the CPU's
//! prepared form ([`Op`], flam3's `xform_precalc`), computed on the host in
//! f64 by [`variations_params`] with [`Op::new`] itself, so the host and the
//! GPU share one precalc. The generated function ([`variations_code`])
//! depends only on which variations are present (never on values), so
//! animation frames with interpolated parameters reuse one compiled kernel.
//!
//! Layout of the parameters of one xform: pre_blur's weight first when the
//! xform has pre_blur (the sum of its pre_blur weights), then for each
//! variation of nonzero weight in the order [`Arranged`] applies them
//! (`pre_` forms as given, the ordinary ones in index order, stable for
//! repeats, `post_` forms as given): its weight and its constants. A
//! `pre_`/`post_` form calls the device function of the variation it
//! applies on a point of its own.

use crate::genome::Affine;
use crate::variations::ops::Op;
use crate::variations::{Arranged, VariationSpec, needs};

/// Device functions of all 99 variations (and helpers such as a `c_int` that
/// reproduces x86's `(int)` conversion: INT_MIN for NaN/out of range —
/// CUDA's cvt saturates instead). Included once per kernel source, after
/// flame_common.cuh.
pub(crate) const VARIATIONS_CUH: &str = include_str!("../../../kernels/variations.cuh");

/// CUDA source of one xform's variations, and the layout of its parameters.
#[derive(Clone, Debug)]
pub(crate) struct VariationsCode {
    /// Defines `__device__ __forceinline__ void {fn_name}(real tx, real ty,
    /// real &ox, real &oy, FlameRng &rng, const real *__restrict__ p)` doing
    /// what `VariationSet::apply` does: pre_blur first when present, the
    /// shared per-point values only when needed, then each variation's
    /// weighted contribution summed in flam3 index order (weight-0
    /// variations dropped). (ox, oy) = result before the post affine.
    pub(crate) source: String,
    /// How many `real`s the function reads from `p[0..param_len]`.
    pub(crate) param_len: usize,
}

/// Appends the per-xform constants of `op`, in the order the device
/// function of its variation reads them (`q[1..]`): the fields of the
/// prepared struct in declaration order, then any reciprocal the device
/// code multiplies by where the CPU divides.
fn push_constants(op: &Op, out: &mut Vec<f64>) {
    let v: &[f64] = match op {
        Op::Linear
        | Op::Sinusoidal
        | Op::Spherical
        | Op::Swirl
        | Op::Horseshoe
        | Op::Polar
        | Op::Handkerchief
        | Op::Heart
        | Op::Disc
        | Op::Spiral
        | Op::Hyperbolic
        | Op::Diamond
        | Op::Ex
        | Op::Julia
        | Op::Bent
        | Op::Fisheye
        | Op::Exponential
        | Op::Power
        | Op::Cosine
        | Op::Eyefish
        | Op::Bubble
        | Op::Cylinder
        | Op::Noise
        | Op::Blur
        | Op::GaussianBlur
        | Op::Arch
        | Op::Tangent
        | Op::Square
        | Op::Rays
        | Op::Blade
        | Op::Secant2
        | Op::Twintrian
        | Op::Cross
        | Op::Boarders
        | Op::Butterfly
        | Op::Edisc
        | Op::Elliptic
        | Op::Foci
        | Op::Loonie
        | Op::Polar2
        | Op::Scry
        | Op::Exp
        | Op::Sin
        | Op::Cos
        | Op::Tan
        | Op::Sec
        | Op::Csc
        | Op::Cot
        | Op::Sinh
        | Op::Cosh
        | Op::Tanh
        | Op::Sech
        | Op::Csch
        | Op::Coth
        | Op::Gaussian
        | Op::BlurCircle
        | Op::Circleblur
        | Op::Hemisphere
        | Op::Unpolar
        | Op::Twoface
        | Op::Glynnia
        | Op::Wdisc
        | Op::MirrorX => &[],
        Op::Waves(v) => &[v.b, v.e, v.fx, v.fy],
        Op::Popcorn(v) => &[v.c, v.f],
        Op::Rings(v) => &[v.dx, v.two_dx, v.one_minus_dx],
        Op::Fan(v) => &[v.dx, v.dy, v.half_dx],
        Op::Blob(v) => &[v.low, v.diff, v.waves],
        Op::Pdj(v) => &[v.a, v.b, v.c, v.d],
        Op::Fan2(v) => &[v.dx, v.dy, v.half_dx],
        Op::Rings2(v) => &[v.dx, v.two_dx, v.minus_two_dx, v.one_minus_dx],
        Op::Perspective(v) => &[v.dist, v.vsin, v.vfcos],
        Op::Julian(v) => &[v.power, v.roots, v.exponent, 1.0 / v.power],
        Op::JuliaScope(v) => &[v.power, v.roots, v.exponent, 1.0 / v.power],
        Op::RadialBlur(v) => &[v.spin, v.zoom],
        Op::Pie(v) => &[v.slices, v.rotation, v.thickness],
        Op::Ngon(v) => &[v.half_power, v.circle, v.corners, v.b, v.half_b],
        Op::Curl(v) => &[v.c1, v.c2, v.two_c2],
        Op::Rectangles(v) => &[v.x, v.y],
        Op::Disc2(v) => &[v.times_pi, v.sin_add, v.cos_add],
        Op::SuperShape(v) => &[v.rnd, v.one_minus_rnd, v.n2, v.n3, v.holes, v.m_4, v.neg_inv_n1],
        Op::Flower(v) => &[v.petals, v.holes],
        Op::Conic(v) => &[v.eccentricity, v.holes],
        Op::Parabola(v) => &[v.hw, v.ww],
        Op::Bent2(v) => &[v.x, v.y],
        Op::Bipolar(v) => &[v.shift, v.wx, v.wy],
        Op::Cell(v) => &[v.size, v.inv],
        Op::Cpow(v) => &[v.power, v.va, v.vc, v.vd],
        Op::Curve(v) => &[v.xamp, v.yamp, v.xlen2, v.ylen2],
        Op::Escher(v) => &[v.vc, v.vd],
        Op::LazySusan(v) => &[v.spin, v.space, v.twist, v.x, v.y],
        Op::Modulus(v) => &[v.x, v.y],
        Op::Oscilloscope(v) => &[v.separation, v.tpf, v.amplitude, v.damping],
        Op::Popcorn2(v) => &[v.x, v.y, v.c],
        Op::Separation(v) => &[v.x2, v.xinside, v.y2, v.yinside],
        Op::Split(v) => &[v.xsize, v.ysize],
        Op::Splits(v) => &[v.x, v.y],
        Op::Stripes(v) => &[v.one_minus_space, v.warp],
        Op::Wedge(v) => &[v.angle, v.hole, v.count, v.swirl, v.comp],
        Op::WedgeJulia(v) => &[v.angle, v.count, v.power, v.comp, v.roots, v.exponent, 1.0 / v.power],
        Op::WedgeSph(v) => &[v.angle, v.count, v.hole, v.swirl, v.comp],
        Op::Whorl(v) => &[v.inside, v.outside],
        Op::Waves2(v) => &[v.scalex, v.scaley, v.freqx, v.freqy],
        Op::Auger(v) => &[v.freq, v.weight, v.sym, v.scale],
        Op::Flux(v) => &[v.scale],
        Op::Log(inv) => std::slice::from_ref(inv),
        Op::Mobius(v) => &[v.re_a, v.re_b, v.re_c, v.re_d, v.im_a, v.im_b, v.im_c, v.im_d],
        Op::Flatten => &[],
        Op::Crop(v) => &[v.x0, v.y0, v.x1, v.y1, v.w, v.h, v.zero],
        Op::Crackle(v) => &[v.s, v.power, v.distort, v.scale, v.z],
        Op::Sineblur(v) => &[v.power],
        Op::BlurLinear(v) => &[v.length, v.sin, v.cos],
        Op::BlurZoom(v) => &[v.length, v.x, v.y],
        Op::Rblur(v) => &[v.s2, v.offset, v.cx, v.cy],
        Op::MobiusF(v) => &v.c,
        Op::Epispiral(v) => &[v.n, v.thickness_w, v.holes_w],
        Op::Hypertile(v) => &[v.re, v.im],
        Op::Hypertile1(v) => &[v.pa, v.r, v.period],
        Op::Hypertile2(v) => &[v.pa, v.r, v.period],
        Op::BTransform(v) => &[v.rotate, v.power, v.mv, v.split],
        Op::EJulia(v) => &[v.power, v.sign],
        Op::PowBlock(v) => &[v.numerator, v.denominator, v.root, v.power],
        Op::Barycentroid(v) => &[v.a, v.b, v.c, v.d],
        Op::Smartshape(v) => &[v.roundstr, v.roundwidth, v.distortion, v.alpha, v.alpha_coeff, v.round_coeff, v.comp],
        Op::YShape(v) => &[
            v.hypergon,
            v.hypergon_n,
            v.star,
            v.star_n,
            v.lituus,
            v.super_,
            v.super_n2,
            v.super_n3,
            v.hypergon_d,
            v.inv_lituus_a,
            v.tan_star_slope,
            v.super_m4,
            v.inv_super_n1,
        ],
        Op::Bwraps(v) => &[v.cellsize, v.inner, v.outer, v.g2, v.r2, v.rfactor],
        Op::Gnarly(v) => &[v.cellsize, v.twist, v.r2],
        Op::Hexes(v) => &[v.cellsize, v.power, v.scale, v.rot_sin, v.rot_cos],
        Op::Voron(v) => &[v.k, v.step, v.num, v.xseed, v.yseed],
        Op::Shredlin(v) => &[v.xdistance, v.xwidth, v.ydistance, v.ywidth],
        Op::TileLog(v) => &[v.spread],
        Op::TileHlp(v) => &[v.width, v.vwidth],
        Op::Cropn(v) => &[v.outside, v.radius, v.scatter, v.zero, v.alpha, v.half_alpha],
        Op::Bcircle(v) => &[v.scale, v.bcbw, v.bcbw_fifth],
        Op::Circlecrop(v) => &[v.radius, v.x, v.y, v.ca, v.zero],
        Op::Smartcrop(v) => &[
            v.roundstr,
            v.roundwidth,
            v.distortion,
            v.edge,
            v.scatter,
            v.offset,
            v.cropmode,
            v.static_,
            v.mode,
            v.radial,
            v.work_radius,
            v.work_power,
            v.alpha,
            v.round_coeff,
            v.work_rotation,
        ],
    };
    out.extend_from_slice(v);
}

/// The statements that fill `FlamePoint {var}` at `(x, y)` with the shared
/// values `need` asks for.
fn point_code(var: &str, x: &str, y: &str, need: u8, indent: &str) -> String {
    let mut src = format!(
        "{indent}FlamePoint {var};\n{indent}{var}.x = {x};\n{indent}{var}.y = {y};\n{indent}{var}.sumsq = {x} * {x} + {y} * {y};\n"
    );
    if need & needs::SQRT != 0 {
        src.push_str(&format!("{indent}{var}.sqrt = sqrt({var}.sumsq);\n"));
    }
    if need & needs::ATAN_XY != 0 {
        src.push_str(&format!("{indent}{var}.atan = atan2({x}, {y});\n"));
    }
    if need & needs::ANGLES & !needs::SQRT != 0 {
        src.push_str(&format!("{indent}{var}.sina = {x} / {var}.sqrt;\n{indent}{var}.cosa = {y} / {var}.sqrt;\n"));
    }
    if need & needs::ATAN_YX != 0 {
        src.push_str(&format!("{indent}{var}.atanyx = atan2({y}, {x});\n"));
    }
    if need & needs::TRANS != 0 {
        src.push_str(&format!("{indent}{var}.tx = tx;\n{indent}{var}.ty = ty;\n"));
    }
    src
}

/// A `pre_`/`post_` form applied to the point `(x, y)` in place, reading
/// its weight and constants at `p + offset`.
fn form_code(s: &VariationSpec, x: &str, y: &str, offset: usize) -> String {
    let op = Op::new(&VariationSpec::new(s.kind, 1.0), &Affine::IDENTITY.c);
    let mut src = String::from("    {\n");
    src.push_str(&point_code("q", x, y, op.needs(), "        "));
    src.push_str("        real fx = (real)0, fy = (real)0;\n");
    src.push_str(&format!("        flame_var_{}(q, p + {offset}, fx, fy, rng);\n", s.kind.base().name()));
    if s.kind.summed() {
        src.push_str(&format!("        {x} += fx;\n        {y} += fy;\n    }}\n"));
    } else {
        src.push_str(&format!("        {x} = fx;\n        {y} = fy;\n    }}\n"));
    }
    src
}

/// How many values a variation reads: its weight and its constants.
fn param_count(s: &VariationSpec) -> usize {
    let mut scratch = Vec::new();
    push_constants(&Op::new(&VariationSpec::new(s.kind, 1.0), &Affine::IDENTITY.c), &mut scratch);
    1 + scratch.len()
}

/// The source depends only on which variations are present with nonzero
/// weight (never on values), so animation frames with interpolated
/// parameters reuse the compiled kernel.
pub(crate) fn variations_code(fn_name: &str, specs: &[VariationSpec]) -> VariationsCode {
    use std::fmt::Write;

    let a = Arranged::new(specs);
    // The layout and the shared values a variation needs do not depend on
    // its values, so they are read off a prepared form with flam3's
    // defaults and the identity affine.
    let mut src = String::new();
    let _ = writeln!(src, "// variations: {}", describe(&a));
    let _ = writeln!(
        src,
        "__device__ __forceinline__ void {fn_name}(real tx, real ty, real &ox, real &oy, FlameRng &rng, const real *__restrict__ p) {{"
    );
    let mut offset = 0;
    if a.pre_blur.is_some() {
        src.push_str("    flame_pre_blur(tx, ty, p[0], rng);\n");
        offset = 1;
    }
    for s in &a.pre {
        src.push_str(&form_code(s, "tx", "ty", offset));
        offset += param_count(s);
    }
    src.push_str("    real sx = (real)0, sy = (real)0;\n");
    if a.passes_through() {
        src.push_str("    sx = tx;\n    sy = ty;\n");
    } else {
        let mut need = 0u8;
        let mut calls = String::new();
        for s in &a.regular {
            need |= Op::new(&VariationSpec::new(s.kind, 1.0), &Affine::IDENTITY.c).needs();
            let _ = writeln!(calls, "    flame_var_{}(pt, p + {offset}, sx, sy, rng);", s.kind.name());
            offset += param_count(s);
        }
        src.push_str(&point_code("pt", "tx", "ty", need, "    "));
        src.push_str(&calls);
    }
    for s in &a.post {
        src.push_str(&form_code(s, "sx", "sy", offset));
        offset += param_count(s);
    }
    src.push_str("    ox = sx;\n    oy = sy;\n}\n");
    VariationsCode { source: src, param_len: offset }
}

/// `pre_blur pre_disc linear julian post_crop` (for the comment above
/// the generated function).
fn describe(a: &Arranged<'_>) -> String {
    let names: Vec<&str> = a
        .pre_blur
        .map(|_| "pre_blur")
        .into_iter()
        .chain(a.pre.iter().chain(&a.regular).chain(&a.post).map(|s| s.kind.name()))
        .collect();
    if names.is_empty() { "(none)".to_string() } else { names.join(" ") }
}

/// Appends exactly `param_len` values for `specs` (same layout as
/// `variations_code(…, specs)`): weights, parameters and the per-xform
/// constants flam3's xform_precalc computes, computed on the host in f64
/// (waves/popcorn/rings/fan read the pre-affine coefficients `coefs`). The
/// caller converts to `real`.
pub(crate) fn variations_params(specs: &[VariationSpec], coefs: &Affine, out: &mut Vec<f64>) {
    let a = Arranged::new(specs);
    if let Some(w) = a.pre_blur {
        out.push(w);
    }
    for s in a.pre.iter().chain(&a.regular).chain(&a.post) {
        out.push(s.weight);
        push_constants(&Op::new(s, &coefs.c), out);
    }
}

#[cfg(test)]
mod tests;
