//! Tests of the variations code generator: the parameter layout on the CPU,
//! an NVRTC compile of all 99 variations in both precisions (wherever NVRTC
//! loads), and on a GPU every variation against the CPU's
//! `VariationSet::apply` with the same random words.

use super::*;
use crate::render::Precision;
use crate::render::cuda::codegen::{FLAME_COMMON_CUH, cuda_type};
use crate::variations::{VariationKind, VariationSet};
use warpmc_gpu::{GpuError, KernelSource, Target, compile};
use warpmc_rng::{Mwc, RandomSource};

/// SplitMix64, for test data.
struct TestRng(u64);

impl TestRng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn sign(&mut self) -> f64 {
        if self.next() & 1 == 0 { 1.0 } else { -1.0 }
    }
}

/// A value for the parameter `name` in a range where the variation is
/// meaningful (powers, counts and sizes away from zero).
fn random_param(name: &str, r: &mut TestRng) -> f64 {
    let int = |r: &mut TestRng, n: u64| (1 + r.below(n)) as f64;
    let ends = |suffixes: &[&str]| suffixes.iter().any(|s| name.ends_with(s));
    if ends(&["hypertile_p", "hypertile_q", "hypertile1_p", "hypertile1_q", "hypertile2_p", "hypertile2_q"]) {
        // Hyperbolic tilings {p, q} (the defaults are 3 and 7).
        2.0 + int(r, 6)
    } else if ends(&["smartshape_power", "y_hypergon_n", "y_star_n"]) {
        2.0 + int(r, 6)
    } else if ends(&["smartshape_distortion", "smartshape_compensation"]) {
        r.range(0.0, 1.5)
    } else if ends(&["smartshape_roundwidth", "y_super_n1", "y_super_n2", "y_super_n3"]) {
        r.range(0.5, 3.0)
    } else if ends(&["y_lituus_a", "y_hypergon_r", "hexes_power"]) {
        r.range(0.2, 2.0)
    } else if ends(&["y_star_slope"]) {
        r.range(0.2, 1.4)
    } else if ends(&["barycentroid_a", "barycentroid_d"]) {
        // A frame well away from singular.
        r.sign() * r.range(0.5, 2.0)
    } else if ends(&["barycentroid_b", "barycentroid_c"]) {
        r.range(-0.5, 0.5)
    } else if ends(&["Voron_Num", "Voron_XSeed", "Voron_YSeed"]) {
        int(r, 6)
    } else if ends(&["bwraps_cellsize", "gnarly_cellsize", "shredlin_xdistance", "shredlin_ydistance", "Voron_Step"]) {
        r.sign() * r.range(0.3, 2.0)
    } else if ends(&["pow_block_numerator"]) {
        // Whole powers, as Fractorium's pow_block is meant (its defaults
        // are 3/2 with corrections 1): random corrections near 0 send
        // r^power beyond float's range.
        r.sign() * int(r, 5)
    } else if ends(&["pow_block_denominator", "pow_block_root"]) {
        int(r, 4)
    } else if ends(&["pow_block_correctn", "pow_block_correctd"]) {
        r.range(0.5, 2.0)
    } else if name == "post_smartcrop_cropmode" {
        // The stateless modes (2 is refused by the reader).
        r.below(3) as f64 - 1.0
    } else if name == "post_smartcrop_static" {
        r.below(5) as f64 - 1.0
    } else if name == "post_smartcrop_power" {
        // A polygon or a sector (below 2).
        if r.below(2) == 0 { r.sign() * r.range(0.2, 1.9) } else { r.sign() * (2.0 + int(r, 6)) }
    } else if name == "ngon_power" {
        r.range(0.5, 4.0)
    } else if name.ends_with("crackle_cellsize") {
        // Cells float resolves: a size at Fractorium's least (0.0001, what
        // a negative one becomes) is below float's resolution at points
        // near 1; tests/plugin_variations.rs checks that case on the CPU.
        r.range(0.05, 2.0)
    } else if name.ends_with("crackle_power") {
        // Fractorium's range of use (the default is 0.2).
        r.range(-0.5, 1.0)
    } else if name.ends_with("_power") {
        r.sign() * int(r, 6)
    } else if ["_sides", "_slices", "_count", "_petals"].iter().any(|s| name.ends_with(s)) {
        int(r, 8)
    } else if name == "cell_size" || name == "super_shape_n1" {
        r.sign() * r.range(0.3, 3.0)
    } else if name.ends_with("crop_zero") {
        r.below(2) as f64
    } else if name == "conic_eccentricity" {
        r.range(0.1, 2.0)
    } else {
        r.range(-2.0, 2.0)
    }
}

/// `kind` with a random nonzero weight and random parameters; all values
/// rounded to f32 when `float`.
fn random_spec(kind: VariationKind, r: &mut TestRng, float: bool) -> VariationSpec {
    let round = |v: f64| if float { f64::from(v as f32) } else { v };
    VariationSpec {
        kind,
        weight: round(r.sign() * r.range(0.1, 2.0)),
        params: kind.params().iter().map(|p| round(random_param(p.name, r))).collect(),
    }
}

fn random_affine(r: &mut TestRng, float: bool) -> Affine {
    let mut v = || {
        let x = r.range(-1.5, 1.5);
        if float { f64::from(x as f32) } else { x }
    };
    Affine { c: [[v(), v()], [v(), v()], [v(), v()]] }
}

/// A coordinate: sometimes 0, sometimes tiny or large, either sign. With
/// `float`, moderate (0 or 0.05 … 5 in magnitude) and f32-exact: nearer 0
/// several of flam3's formulas cancel catastrophically in float (foci,
/// the complex cot/coth/csc/csch/sec/sech, rings, elliptic: `cosh − cos`,
/// `xmax − 1` …), a float build's limitation, not a transcription error.
fn awkward(r: &mut TestRng, float: bool) -> f64 {
    let mag = |r: &mut TestRng, lo: f64, hi: f64| 10f64.powf(r.range(lo, hi));
    if float {
        let v = if r.below(20) == 0 { 0.0 } else { mag(r, -1.3, 0.7) };
        return f64::from((r.sign() * v) as f32);
    }
    let v = match r.below(20) {
        0 | 1 => 0.0,
        2..=4 => mag(r, -12.0, -5.0),
        5..=7 => mag(r, 1.0, 2.5),
        _ => mag(r, -3.0, 1.0),
    };
    r.sign() * v
}

fn kinds(names: &[&str]) -> Vec<VariationKind> {
    names.iter().map(|n| VariationKind::from_name(n).unwrap_or_else(|| panic!("no variation {n}"))).collect()
}

/// The sets the tests evaluate: each ordinary variation alone (flam3's 99
/// and the plugin ones), then mixed sets (unsorted, with pre_blur, repeats,
/// `pre_`/`post_` forms replacing or moving the point, forms alone).
fn cases() -> Vec<Vec<VariationKind>> {
    let mut v: Vec<Vec<VariationKind>> = VariationKind::regular().map(|k| vec![k]).collect();
    let mixed: [&[&str]; 24] = [
        &["linear", "pre_blur"],
        &["pre_blur", "spherical", "julia", "blur"],
        &["julian", "linear", "noise", "pre_blur"],
        &["waves", "popcorn", "rings", "fan", "pre_blur", "linear"],
        &["radial_blur", "linear"],
        &["super_shape", "flower", "conic", "parabola", "pre_blur"],
        &["cell", "cpow", "boarders", "pie", "twintrian", "pre_blur"],
        &["spherical", "spherical", "linear"],
        &["pre_blur", "pre_blur", "swirl", "polar", "power", "rings2", "wedge_sph", "log"],
        &["mobius", "heart", "disc", "ex", "hyperbolic", "diamond", "blob", "fan2", "disc2", "polar2", "pre_blur"],
        &["pre_disc", "cylinder", "radial_blur", "post_crop"],
        &["pre_gaussian_blur", "bubble"],
        &["pre_crop", "bubble"],
        &["crop", "linear"],
        &["post_crop", "pre_crop"],
        &["flatten", "linear", "post_flatten", "pre_flatten"],
        &["pre_blur", "pre_julian", "linear3D", "post_spherical"],
        &["pre_pie", "linear", "post_blur", "post_square"],
        &["waves2", "pre_cpow", "flatten", "post_bipolar"],
        &["crackle", "flatten", "pre_crackle", "post_crackle"],
        // Fractorium's post-only smartcrop (it reads the point before the
        // variations too), and the ordinary variations that replace the sum
        // before them.
        &["pre_disc", "linear", "post_smartcrop"],
        &["spherical", "post_smartcrop", "post_sineblur"],
        &["linear", "blur_zoom", "circlecrop", "pre_mirror_x"],
        &["julia", "mirror_x", "post_circlecrop"],
    ];
    v.extend(mixed.iter().map(|names| kinds(names)));
    v
}

fn unit_specs(kinds: &[VariationKind]) -> Vec<VariationSpec> {
    kinds.iter().map(|&k| VariationSpec::new(k, 1.0)).collect()
}

#[test]
fn params_follow_the_layout_and_the_source_ignores_values() {
    let mut r = TestRng(0x5eed);
    for kinds in cases() {
        let reference = variations_code("f", &unit_specs(&kinds));
        for _ in 0..8 {
            let specs: Vec<VariationSpec> = kinds.iter().map(|&k| random_spec(k, &mut r, false)).collect();
            let code = variations_code("f", &specs);
            assert_eq!(code.source, reference.source, "{kinds:?}: the source depends on values");
            assert_eq!(code.param_len, reference.param_len);
            let mut out = vec![f64::NAN];
            variations_params(&specs, &random_affine(&mut r, false), &mut out);
            assert_eq!(out.len() - 1, code.param_len, "{kinds:?}: params and layout disagree");
            assert!(out[0].is_nan(), "variations_params must append");
        }
    }
    // Alone, every variation but pre_blur reads its weight and constants;
    // pre_blur alone reads its weight and yields the origin.
    for kind in VariationKind::all() {
        let code = variations_code("f", &unit_specs(&[kind]));
        let call = format!("flame_var_{}(pt, p + 0,", kind.name());
        if kind == VariationKind::PRE_BLUR {
            assert_eq!(code.param_len, 1);
            assert!(code.source.contains("flame_pre_blur(tx, ty, p[0], rng);"));
            assert!(!code.source.contains("flame_var_"));
        } else {
            assert!(code.param_len >= 1);
            assert!(code.source.contains(&call), "{}: {}", kind.name(), code.source);
        }
    }
    // Weight 0 drops a variation (and its parameters).
    let mut specs = unit_specs(&kinds(&["linear", "julian", "pre_blur"]));
    let with = variations_code("f", &specs);
    specs[1].weight = 0.0;
    specs[2].weight = 0.0;
    let without = variations_code("f", &specs);
    assert_eq!(without.source, variations_code("f", &unit_specs(&kinds(&["linear"]))).source);
    assert_eq!(without.param_len, 1);
    assert_eq!(with.param_len, 1 + 1 + 5);
    let mut out = Vec::new();
    variations_params(&specs, &Affine::IDENTITY, &mut out);
    assert_eq!(out, [1.0]);
    // flam3's order whatever the order of the specs; pre_blur's weights summed.
    let specs = vec![
        VariationSpec::new(VariationKind::from_name("julian").unwrap(), 0.25),
        VariationSpec::new(VariationKind::PRE_BLUR, 0.5),
        VariationSpec::new(VariationKind::from_name("linear").unwrap(), 2.0),
        VariationSpec::new(VariationKind::PRE_BLUR, 0.125),
    ];
    let code = variations_code("f", &specs);
    let at = |s: &str| code.source.find(s).unwrap_or_else(|| panic!("{s} missing in {}", code.source));
    assert!(at("flame_pre_blur") < at("flame_var_linear(pt, p + 1,"));
    assert!(at("flame_var_linear(pt, p + 1,") < at("flame_var_julian(pt, p + 2,"));
    let mut out = Vec::new();
    variations_params(&specs, &Affine::IDENTITY, &mut out);
    assert_eq!(out, [0.625, 2.0, 0.25, 1.0, 1.0, 0.5, 1.0]);
    assert_eq!(code.param_len, out.len());
    // No variation at all: the origin.
    let code = variations_code("f", &[]);
    assert_eq!(code.param_len, 0);
    assert!(code.source.contains("ox = sx;"));
}

/// `-D` options of a precision.
fn precision_options(src: KernelSource, double: bool) -> KernelSource {
    src.option(format!("-DFLAME_REAL={}", cuda_type(real(double))))
}

fn real(double: bool) -> Precision {
    if double { Precision::F64 } else { Precision::F32 }
}

fn with_headers(src: KernelSource) -> KernelSource {
    src.header(warpmc_rng::CUDA_HEADER_NAME, warpmc_rng::CUDA_HEADER)
        .header("flame_common.cuh", FLAME_COMMON_CUH)
        .header("variations.cuh", VARIATIONS_CUH)
}

/// One kernel that applies all 99 variations (`real` in and out only, so
/// that the float build's PTX can be checked for double arithmetic).
fn all_variations_source(double: bool) -> KernelSource {
    let forms = ["pre_disc", "pre_gaussian_blur", "post_crop", "post_flatten", "post_smartcrop"];
    let specs: Vec<VariationSpec> = VariationKind::regular()
        .chain(forms.iter().map(|n| VariationKind::from_name(n).unwrap()))
        .map(|k| VariationSpec::new(k, 0.5))
        .collect();
    let code = variations_code("all_variations", &specs);
    let src = format!(
        r#"#include "flame_common.cuh"
#include "variations.cuh"
{}
extern "C" __global__ void apply_all(int n, const real *__restrict__ params, const real *__restrict__ in,
                                     const unsigned long long *__restrict__ seeds, real *__restrict__ out) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    FlameRng rng;
    rng.state = seeds[i];
    rng.a = 4294967118u;
    real ox, oy;
    all_variations(in[2 * i], in[2 * i + 1], ox, oy, rng, params);
    out[2 * i] = ox;
    out[2 * i + 1] = oy;
}}
"#,
        code.source
    );
    precision_options(with_headers(KernelSource::new("all_variations.cu", src)), double)
}

fn skip(test: &str, why: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "SKIPPED {test}: {why}");
}

#[test]
fn all_variations_compile_with_nvrtc() {
    const NAME: &str = "all_variations_compile_with_nvrtc";
    // The dispatch kernel of the GPU tests too, so that they cannot fail
    // to build on the GPU machine.
    let codes = Batch::new(false, 1, 1).codes;
    for double in [false, true] {
        for src in [all_variations_source(double), dispatch_source(&codes, double)] {
            match compile(&src, &Target::Cubin { arch: 90 }) {
                Ok(image) => assert!(!image.is_empty()),
                Err(GpuError::NoDevice(why)) => return skip(NAME, &why),
                Err(e) => panic!("{} {} build: {e}", src.name(), if double { "double" } else { "float" }),
            }
        }
    }
    // The float build must not do double arithmetic (a bare literal or a
    // double-only function would bring it in). The one exception is CUDA's
    // own sinf/cosf: their slow path for huge arguments (Payne-Hanek) turns
    // the 64-bit fixed-point reduced angle into a float through one double
    // product by π/2·2⁻⁶⁴ (libdevice's __internal_trig_reduction_slowpath).
    let libdevice_trig = |l: &str| {
        let op = l.split_whitespace().next().unwrap_or("");
        op == "cvt.rn.f64.s64"
            || op == "cvt.rn.f32.f64"
            || op == ".reg"
            || (op == "mul.f64" && l.trim_end().ends_with("0d3BF921FB54442D19;"))
    };
    match compile(&all_variations_source(false), &Target::Ptx { arch: 90 }) {
        Ok(ptx) => {
            let ptx = String::from_utf8_lossy(&ptx);
            let f64_lines: Vec<&str> = ptx.lines().filter(|l| l.contains(".f64") && !libdevice_trig(l)).collect();
            assert!(f64_lines.is_empty(), "double arithmetic in the float build:\n{}", f64_lines.join("\n"));
        }
        Err(GpuError::NoDevice(why)) => skip(NAME, &why),
        Err(e) => panic!("float PTX: {e}"),
    }
}

/// The GPU's generator (flame_common.cuh's FlameRng: warpmc-rng's MWC),
/// replayed on the CPU and handed out the way the GPU consumes it:
/// `next_f64` takes ONE word (as `uniform()` does: 32 bits in the double
/// build, the top 24 in the float build), `next_u32` passes words through
/// (`bit()` takes the low bit).
struct Replay {
    mwc: Mwc,
    float: bool,
}

/// The MWC multiplier of the tests.
const MWC_A: u32 = 4_294_967_118;

impl RandomSource for Replay {
    fn next_u32(&mut self) -> u32 {
        self.mwc.next_u32()
    }

    fn next_f64(&mut self) -> f64 {
        let w = self.next_u32();
        if self.float { f64::from(w >> 8) * (1.0 / 16_777_216.0) } else { f64::from(w) * (1.0 / 4_294_967_296.0) }
    }
}

/// One evaluation: a set with its values, a point and an MWC state.
struct Sample {
    case: usize,
    specs: Vec<VariationSpec>,
    coefs: Affine,
    x: f64,
    y: f64,
    state: u64,
}

impl Sample {
    /// The CPU's result at `(x, y)` and the MWC state after it.
    fn cpu(&self, x: f64, y: f64, float: bool) -> ((f64, f64), u64) {
        let set = VariationSet::new(&self.specs, &self.coefs);
        let mwc = Mwc::from_state(MWC_A, self.state).expect("the tests draw valid MWC states");
        let mut rng = Replay { mwc, float };
        let out = set.apply(x, y, &mut rng);
        (out, rng.mwc.state())
    }
}

/// Distance between two results, infinite when they differ in NaN-ness or
/// in an infinity.
fn distance(a: (f64, f64), b: (f64, f64)) -> f64 {
    let comp = |u: f64, v: f64| {
        if u.is_finite() && v.is_finite() {
            Some(u - v)
        } else if (u.is_nan() && v.is_nan()) || u == v {
            Some(0.0)
        } else {
            None
        }
    };
    match (comp(a.0, b.0), comp(a.1, b.1)) {
        (Some(dx), Some(dy)) => dx.hypot(dy),
        _ => f64::INFINITY,
    }
}

/// What the relative steps of [`sensitivity`] and [`noise`] are relative
/// to: the larger coordinate, or 1 at the origin (where a relative step
/// would not move, yet variations with `1/(r + ε)` and a swirl, such as
/// wedge_sph, turn `1/ε = 10¹⁰` into an angle whose last bits are rounding).
fn step_scale(s: &Sample) -> f64 {
    let m = s.x.abs().max(s.y.abs());
    if m == 0.0 { 1.0 } else { m }
}

/// How far the CPU's result moves when the point moves by `delta` times
/// its larger coordinate (1 at the origin): the result's sensitivity to rounding here.
fn sensitivity(s: &Sample, float: bool, delta: f64) -> f64 {
    let (c, _) = s.cpu(s.x, s.y, float);
    let dx = delta * step_scale(s);
    let dy = dx;
    let mut worst = 0.0f64;
    for (ex, ey) in
        [(1.0, 1.0), (1.0, -1.0), (-1.0, 1.0), (-1.0, -1.0), (1.0, 0.0), (0.0, 1.0), (-1.0, 0.0), (0.0, -1.0)]
    {
        let (p, _) = s.cpu(s.x + ex * dx, s.y + ey * dy, float);
        worst = worst.max(distance(p, c));
    }
    worst
}

/// How noisy the CPU's result is at this point: the largest second
/// difference `c(p + h) − 2c(p) + c(p − h)` over steps of relative sizes
/// `deltas` (times the larger coordinate) along the axes and diagonals. A
/// smooth result has second
/// differences of order h²·c'' (negligible for small steps); where the
/// formula cancels catastrophically (cosh y − cos x near 0 …) the rounding
/// of the intermediate values shows up here, and that is the size of the
/// disagreement another libm may have with this one.
fn noise(s: &Sample, float: bool, deltas: &[f64]) -> f64 {
    let (c, _) = s.cpu(s.x, s.y, float);
    let mut worst = 0.0f64;
    for &delta in deltas {
        let dx = delta * step_scale(s);
        let dy = dx;
        for (ex, ey) in [(1.0, 0.0), (0.0, 1.0), (1.0, 1.0), (1.0, -1.0)] {
            let (a, _) = s.cpu(s.x + ex * dx, s.y + ey * dy, float);
            let (b, _) = s.cpu(s.x - ex * dx, s.y - ey * dy, float);
            let d = if [a.0, a.1, b.0, b.1, c.0, c.1].iter().all(|v| v.is_finite()) {
                (a.0 + b.0 - 2.0 * c.0).hypot(a.1 + b.1 - 2.0 * c.1) / 2.0
            } else {
                distance(a, c).max(distance(b, c))
            };
            worst = worst.max(d);
        }
    }
    worst
}

/// The error another libm may add where a variation alone subtracts two
/// nearly equal libm results (flam3's formulas, kept as they are): foci's
/// denominator `eˣ/2 + e⁻ˣ/2 − cos y`, the `cosh − cos` denominators of
/// csc, cot, csch and coth, secant2's `1/cos(wr) ∓ 1`, and flower's
/// `cos(petals·θ)` near its zeros. A few ulps of the terms become `ε·κ` of
/// the result, with `κ = (|a| + |b|) / |a − b|` the cancellation's
/// condition number (`|t·tan t|` for `cos t`): unbounded near the origin
/// (and near the poles) where those results are rounding noise in flam3
/// too; where `8ε·κ ≥ 1` nothing of the result is left and any result
/// (an infinity included) agrees. Zero for every other case.
fn cancellation_allowance(s: &Sample, c: (f64, f64)) -> f64 {
    let [spec] = s.specs.as_slice() else { return 0.0 };
    let (x, y, w) = (s.x, s.y, spec.weight);
    let noise = |kappa: f64| {
        let r = 8.0 * f64::EPSILON * kappa;
        if r >= 1.0 || r.is_nan() { f64::INFINITY } else { r * c.0.hypot(c.1) }
    };
    let cancel = |a: f64, b: f64| noise((a.abs() + b.abs()) / (a - b).abs());
    match spec.kind.name() {
        "foci" => cancel(x.exp() * 0.5 + 0.25 / (x.exp() * 0.5), y.cos()),
        "csc" | "cot" => cancel((2.0 * y).cosh(), (2.0 * x).cos()),
        "csch" | "coth" => cancel((2.0 * x).cosh(), (2.0 * y).cos()),
        "secant2" => 8.0 * f64::EPSILON * w.abs() * (1.0 / (w * x.hypot(y)).cos().abs() + 1.0),
        "flower" => {
            let t = spec.param(0) * y.atan2(x);
            noise(1.0 + (t * t.tan()).abs())
        }
        // Fractorium's eJulia takes cos and sin of ν = acos(x/xmax)/power
        // (+ a whole turn over power): near the origin ν is near π/2 (and
        // k·π), where an ulp of acos is the result's own size. ν from the
        // result, μ = acosh(xmax)/power from the point.
        "eJulia" => {
            let power = spec.param(0).round();
            if power == 0.0 || !power.is_finite() {
                return 0.0;
            }
            let (mut r2, mut px) = (x * x + y * y, x);
            if power < 0.0 {
                r2 = 1.0 / r2;
                px *= r2;
            }
            let xmax = (((r2 + 1.0 + 2.0 * px).max(0.0)).sqrt() + ((r2 + 1.0 - 2.0 * px).max(0.0)).sqrt()) * 0.5;
            let mu = xmax.max(1.0).acosh() / power;
            let nu = (c.1 / (w * mu.sinh())).atan2(c.0 / (w * mu.cosh()));
            noise(1.0 + (nu * nu.tan()).abs() + (nu / nu.tan()).abs())
        }
        _ => 0.0,
    }
}

/// The most excused points a case of `per_case` samples may have: 1/32 of
/// them (1/16 in float).
fn excuse_cap(per_case: usize, float: bool) -> usize {
    if float { per_case / 16 } else { per_case / 32 }
}

/// The values the degenerate-input tests draw parameters, weights and
/// coordinates from: zeros of both signs, ordinary values, infinities,
/// NaN and a huge value (infinite in float).
const DEGENERATE: [f64; 8] = [0.0, -0.0, 1.0, -0.5, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 1e300];

/// Degenerate samples a case.
const DEGENERATE_PER_CASE: usize = 64;

/// Double build against the CPU with another libm: relative tolerance,
/// jump step and noise steps of [`Batch::check`].
const DOUBLE_TOL: f64 = 1e-9;
const DOUBLE_DELTA: f64 = 1e-14;
const DOUBLE_NOISE_STEPS: [f64; 3] = [1e-10, 1e-8, 1e-6];
/// Float build against the (double) CPU on moderate inputs.
const FLOAT_TOL: f64 = 2e-3;
const FLOAT_DELTA: f64 = 1e-5;
/// Samples a case: double, float.
const DOUBLE_PER_CASE: usize = 256;
const FLOAT_PER_CASE: usize = 128;

/// The test kernel: every case's generated function behind a switch, one
/// thread per sample.
fn dispatch_source(codes: &[VariationsCode], double: bool) -> KernelSource {
    use std::fmt::Write;
    let mut src = String::from("#include \"flame_common.cuh\"\n#include \"variations.cuh\"\n");
    for c in codes {
        src.push_str(&c.source);
    }
    src.push_str(
        r#"extern "C" __global__ void eval_cases(int n, const int *__restrict__ cases, const int *__restrict__ offsets,
                                      const real *__restrict__ params, const double *__restrict__ in,
                                      unsigned long long *__restrict__ states, double *__restrict__ out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    FlameRng rng;
    rng.state = states[i];
"#,
    );
    let _ = writeln!(src, "    rng.a = {MWC_A}u;");
    src.push_str(
        r#"    real tx = (real)in[2 * i], ty = (real)in[2 * i + 1], ox = (real)0, oy = (real)0;
    const real *p = params + offsets[i];
    switch (cases[i]) {
"#,
    );
    for i in 0..codes.len() {
        let _ = writeln!(src, "    case {i}: case_{i}(tx, ty, ox, oy, rng, p); break;");
    }
    src.push_str(
        "    }\n    out[2 * i] = (double)ox;\n    out[2 * i + 1] = (double)oy;\n    states[i] = rng.state;\n}\n",
    );
    precision_options(with_headers(KernelSource::new("varcode_dispatch.cu", src)), double)
}

/// Random samples of every case: the generated functions, the samples, the
/// parameters of all samples (f64) and each sample's offset into them.
struct Batch {
    cases: Vec<Vec<VariationKind>>,
    codes: Vec<VariationsCode>,
    samples: Vec<Sample>,
    params: Vec<f64>,
    offsets: Vec<i32>,
}

impl Batch {
    fn new(float: bool, per_case: usize, seed: u64) -> Batch {
        let cases = cases();
        let codes: Vec<VariationsCode> =
            cases.iter().enumerate().map(|(i, k)| variations_code(&format!("case_{i}"), &unit_specs(k))).collect();
        let mut r = TestRng(seed);
        let mut samples = Vec::new();
        let mut params = Vec::new();
        let mut offsets = Vec::new();
        for (case, kinds) in cases.iter().enumerate() {
            for _ in 0..per_case {
                let specs: Vec<VariationSpec> = kinds.iter().map(|&k| random_spec(k, &mut r, float)).collect();
                let coefs = random_affine(&mut r, float);
                offsets.push(i32::try_from(params.len()).unwrap());
                let before = params.len();
                variations_params(&specs, &coefs, &mut params);
                assert_eq!(params.len() - before, codes[case].param_len);
                let x = awkward(&mut r, float);
                let y = awkward(&mut r, float);
                let state = ((r.next() % u64::from(MWC_A)) << 32) | (r.next() & 0xffff_ffff) | 1;
                samples.push(Sample { case, specs, coefs, x, y, state });
            }
        }
        Batch { cases, codes, samples, params, offsets }
    }

    /// Samples of every case at degenerate values ([`DEGENERATE`]): each
    /// parameter degenerate with probability 1/3, the weight with
    /// probability 1/4 (never 0, which would drop the variation), each
    /// coordinate with probability 1/2. In float, values are rounded to
    /// f32 (1e300 becomes infinite), as the GPU's parameter block holds
    /// them.
    fn degenerate(float: bool, per_case: usize, seed: u64) -> Batch {
        let mut b = Batch::new(float, 0, seed);
        let mut r = TestRng(seed ^ 0xdead);
        let round = |v: f64| if float { f64::from(v as f32) } else { v };
        let pick = |r: &mut TestRng| DEGENERATE[r.below(DEGENERATE.len() as u64) as usize];
        for (case, kinds) in b.cases.iter().enumerate() {
            for _ in 0..per_case {
                let specs: Vec<VariationSpec> = kinds
                    .iter()
                    .map(|&k| {
                        let mut s = random_spec(k, &mut r, float);
                        for p in s.params.iter_mut() {
                            if r.below(3) == 0 {
                                *p = round(pick(&mut r));
                            }
                        }
                        if r.below(4) == 0 {
                            let w = pick(&mut r);
                            s.weight = round(if w == 0.0 { f64::NAN } else { w });
                        }
                        s
                    })
                    .collect();
                let coefs = random_affine(&mut r, float);
                b.offsets.push(i32::try_from(b.params.len()).unwrap());
                let before = b.params.len();
                variations_params(&specs, &coefs, &mut b.params);
                assert_eq!(b.params.len() - before, b.codes[case].param_len);
                let coordinate = |r: &mut TestRng| if r.below(2) == 0 { awkward(r, float) } else { round(pick(r)) };
                let x = coordinate(&mut r);
                let y = coordinate(&mut r);
                let state = ((r.next() % u64::from(MWC_A)) << 32) | (r.next() & 0xffff_ffff) | 1;
                b.samples.push(Sample { case, specs, coefs, x, y, state });
            }
        }
        b
    }

    /// Checks that `label`'s results are bad values (flam3's `badvalue`:
    /// NaN or beyond ±1e10 in either coordinate, where the chaos game
    /// restarts the point) exactly where the CPU's are, and that where the
    /// result is usable both drew the same random words.
    fn check_bad_values(&self, label: &str, float: bool, out: &[f64], states_after: &[u64]) {
        use crate::variations::bad_value;
        let mut failures = Vec::new();
        let mut bad = 0usize;
        for (i, s) in self.samples.iter().enumerate() {
            let (c, state) = s.cpu(s.x, s.y, float);
            let g = (out[2 * i], out[2 * i + 1]);
            let (cb, gb) = (bad_value(c.0) || bad_value(c.1), bad_value(g.0) || bad_value(g.1));
            bad += usize::from(cb);
            // After a bad value the point restarts, so how many words
            // were drawn on the way does not matter.
            let words_differ = !cb && state != states_after[i];
            if cb != gb || words_differ {
                failures.push(format!(
                    "{}: at ({:e}, {:e}) got ({:e}, {:e}) cpu ({:e}, {:e}){}; specs {:?}",
                    self.name(s.case),
                    s.x,
                    s.y,
                    g.0,
                    g.1,
                    c.0,
                    c.1,
                    if words_differ { ", random words drawn differ" } else { "" },
                    s.specs
                ));
            }
        }
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr().lock(),
            "{label}: {} degenerate samples in {} cases, {bad} bad values on the CPU",
            self.samples.len(),
            self.cases.len()
        );
        assert!(failures.is_empty(), "{label}: {} disagreements:\n{}", failures.len(), failures.join("\n"));
    }

    /// `case` as `linear+julian`.
    fn name(&self, case: usize) -> String {
        self.cases[case].iter().map(|k| k.name()).collect::<Vec<_>>().join("+")
    }

    /// Checks results `out` (x, y pairs) and MWC states after, computed by
    /// `label` (GPU or host build), against the CPU: agreement within
    /// `tol` (relative, on the result vector). A point where they do not
    /// agree is excused only where the difference is within ten times what
    /// the CPU's own result does near the point: its jump when the point
    /// moves by a relative `delta` (a branch cut, a truncation boundary)
    /// or its rounding noise measured with steps `noise_deltas` ([`noise`]:
    /// catastrophic cancellation); at most `max_excused` such points a case.
    /// In double, a difference within [`cancellation_allowance`] agrees too
    /// (counted apart).
    /// The MWC states must agree exactly (the same number of words drawn).
    #[allow(clippy::too_many_arguments)]
    fn check(
        &self,
        label: &str,
        float: bool,
        out: &[f64],
        states_after: &[u64],
        tol: f64,
        delta: f64,
        noise_deltas: &[f64],
        max_excused: usize,
    ) {
        let mut failures = Vec::new();
        let mut excused = vec![Vec::new(); self.cases.len()];
        let mut worst = vec![0.0f64; self.cases.len()];
        let mut cancelled = 0usize;
        for (i, s) in self.samples.iter().enumerate() {
            let g = (out[2 * i], out[2 * i + 1]);
            let (c, state) = s.cpu(s.x, s.y, float);
            let name = self.name(s.case);
            if state != states_after[i] {
                failures.push(format!(
                    "{name}: random words drawn differ at ({:e}, {:e}); specs {:?} coefs {:?}",
                    s.x, s.y, s.specs, s.coefs.c
                ));
                continue;
            }
            let err = distance(g, c);
            let scale = c.0.hypot(c.1);
            // (Exact agreement includes NaN with NaN, where scale is NaN.)
            if err == 0.0 || err <= tol * scale {
                if scale > 0.0 {
                    worst[s.case] = worst[s.case].max(err / scale);
                }
                continue;
            }
            if !float && err <= tol * scale + cancellation_allowance(s, c) {
                cancelled += 1;
                continue;
            }
            let sens = sensitivity(s, float, delta).max(noise(s, float, noise_deltas));
            let line = format!(
                "{name}: at ({:e}, {:e}) got ({:e}, {:e}) cpu ({:e}, {:e}), error {err:e}, relative {:e}, cpu moves {sens:e} for a relative {delta:e} step; specs {:?} coefs {:?}",
                s.x,
                s.y,
                g.0,
                g.1,
                c.0,
                c.1,
                err / scale,
                s.specs,
                s.coefs.c
            );
            if err <= 10.0 * sens {
                excused[s.case].push(line);
            } else {
                failures.push(line);
            }
        }
        use std::io::Write;
        let mut log = std::io::stderr().lock();
        for (case, lines) in excused.iter().enumerate() {
            for l in lines {
                let _ = writeln!(log, "{label} excused (ill-conditioned): {l}");
            }
            if lines.len() > max_excused {
                failures.push(format!(
                    "{label} {}: {} ill-conditioned disagreements, at most {max_excused} allowed",
                    self.name(case),
                    lines.len()
                ));
            }
        }
        let (wi, w) = worst.iter().copied().enumerate().fold((0, 0.0), |a, (i, v)| if v > a.1 { (i, v) } else { a });
        let _ = writeln!(
            log,
            "{label}: {} samples in {} cases, {cancelled} within the cancellation allowance, {} excused, largest relative difference among agreeing points {w:e} ({})",
            self.samples.len(),
            self.cases.len(),
            excused.iter().map(Vec::len).sum::<usize>(),
            self.name(wi)
        );
        assert!(failures.is_empty(), "{label}: {} failures:\n{}", failures.len(), failures.join("\n"));
    }
}

/// Evaluates random samples of every case on the GPU (double or float
/// build) and checks them against the CPU ([`Batch::check`]).
fn check_gpu_against_cpu(gpu: &warpmc_gpu::Gpu, double: bool) {
    let float = !double;
    let per_case = if double { DOUBLE_PER_CASE } else { FLOAT_PER_CASE };
    let label = if double { "gpu double" } else { "gpu float" };
    let batch = Batch::new(float, per_case, if double { 0xd0b1e } else { 0xf10a7 });
    let (out, states_after) = run_on_gpu(gpu, &batch, double, label);
    check_like_gpu(&batch, label, float, &out, &states_after, per_case);
}

/// The batch's samples evaluated by the GPU build: results and MWC states.
fn run_on_gpu(gpu: &warpmc_gpu::Gpu, batch: &Batch, double: bool, label: &str) -> (Vec<f64>, Vec<u64>) {
    let module = gpu.module(&dispatch_source(&batch.codes, double)).unwrap_or_else(|e| panic!("{label} build: {e}"));
    let kernel = module.kernel("eval_cases").unwrap();
    let n = batch.samples.len();
    let case_ids: Vec<i32> = batch.samples.iter().map(|s| s.case as i32).collect();
    let inputs: Vec<f64> = batch.samples.iter().flat_map(|s| [s.x, s.y]).collect();
    let states: Vec<u64> = batch.samples.iter().map(|s| s.state).collect();
    let d_cases = gpu.upload(&case_ids).unwrap();
    let d_offsets = gpu.upload(&batch.offsets).unwrap();
    let d_in = gpu.upload(&inputs).unwrap();
    let mut d_states = gpu.upload(&states).unwrap();
    let mut d_out = gpu.alloc_zeros::<f64>(2 * n).unwrap();
    let n32 = i32::try_from(n).unwrap();
    let config = warpmc_gpu::grid_1d(n, 128);
    // The parameters as the build's real type (double or float), as bytes.
    let params: Vec<u8> = if double {
        batch.params.iter().flat_map(|v| v.to_le_bytes()).collect()
    } else {
        batch.params.iter().flat_map(|&v| (v as f32).to_le_bytes()).collect()
    };
    let d_params = gpu.upload(&params).unwrap();
    // SAFETY: eval_cases takes (int, const int*, const int*, const real*,
    // const double*, unsigned long long*, double*) with real the build's
    // type, which the parameter bytes hold; every buffer holds what thread
    // i < n reads or writes (offsets point at param_len values each,
    // checked by Batch::new).
    unsafe {
        gpu.launch(&kernel)
            .arg(&n32)
            .buf(&d_cases)
            .buf(&d_offsets)
            .buf(&d_params)
            .buf(&d_in)
            .buf_mut(&mut d_states)
            .buf_mut(&mut d_out)
            .run(config)
            .unwrap()
    };
    (gpu.download(&d_out).unwrap(), gpu.download(&d_states).unwrap())
}

/// [`Batch::check`] with the GPU tests' settings.
fn check_like_gpu(batch: &Batch, label: &str, float: bool, out: &[f64], states: &[u64], per_case: usize) {
    if float {
        batch.check(label, true, out, states, FLOAT_TOL, FLOAT_DELTA, &[], excuse_cap(per_case, true));
    } else {
        let cap = excuse_cap(per_case, false);
        batch.check(label, false, out, states, DOUBLE_TOL, DOUBLE_DELTA, &DOUBLE_NOISE_STEPS, cap);
    }
}

#[test]
fn gpu_variations_match_cpu_double() {
    let Some(gpu) = warpmc_testkit::gpu_or_skip("gpu_variations_match_cpu_double") else { return };
    check_gpu_against_cpu(&gpu, true);
}

/// On degenerate inputs (zero, infinite and NaN parameters, weights and
/// points) the GPU's double and float builds give a bad value exactly
/// where the CPU does, so the chaos game restarts the same points.
#[test]
fn gpu_bad_values_match_cpu() {
    let Some(gpu) = warpmc_testkit::gpu_or_skip("gpu_bad_values_match_cpu") else { return };
    for double in [true, false] {
        let label = if double { "gpu double degenerate" } else { "gpu float degenerate" };
        let batch = Batch::degenerate(!double, DEGENERATE_PER_CASE, if double { 0xbad1 } else { 0xbad2 });
        let (out, states) = run_on_gpu(&gpu, &batch, double, label);
        batch.check_bad_values(label, !double, &out, &states);
    }
}

/// The device code built as host C++ (double with the CPU's libm, and
/// float) on degenerate inputs: bad values exactly where the CPU has them.
#[test]
fn host_build_bad_values_match_cpu() {
    const NAME: &str = "host_build_bad_values_match_cpu";
    for build in [HostBuild::Exact, HostBuild::Float] {
        let float = build == HostBuild::Float;
        let label = if float { "host c++ float degenerate" } else { "host c++ double degenerate" };
        let batch = Batch::degenerate(float, DEGENERATE_PER_CASE, if float { 0xbad4 } else { 0xbad3 });
        let Some((out, states)) = run_on_host(NAME, build, &batch) else { return };
        batch.check_bad_values(label, float, &out, &states);
    }
}

#[test]
fn gpu_variations_match_cpu_float() {
    let Some(gpu) = warpmc_testkit::gpu_or_skip("gpu_variations_match_cpu_float") else { return };
    check_gpu_against_cpu(&gpu, false);
}

/// The device code built as host C++ (double, the host's libm, no FMA
/// contraction) with the same dispatch: checks the transcription of every
/// variation and the parameter layout wherever a C++ compiler is found
/// (`CXX`, else `c++`), GPU or not. With the same libm as the CPU code
/// the results are the same to the last bits but for the few places where
/// the device code multiplies by a reciprocal (variations.cuh's header):
/// a few ulps.
#[test]
fn host_build_of_device_code_matches_cpu() {
    host_check("host_build_of_device_code_matches_cpu", HostBuild::Exact);
}

/// The double build on the host with FMA contraction (as NVRTC contracts)
/// and every libm result but sqrt moved by an ulp up or down on two thirds
/// of the arguments (CUDA's libm is within 1–2 ulps of glibc's), checked
/// with the settings of `gpu_variations_match_cpu_double`: shows that those
/// settings absorb another libm honestly.
#[test]
fn host_build_with_another_libm_agrees_like_the_gpu() {
    host_check("host_build_with_another_libm_agrees_like_the_gpu", HostBuild::Jittered);
}

/// The float build on the host (the host's float libm): a stand-in for
/// the GPU's float build, with the same tolerances as
/// `gpu_variations_match_cpu_float`.
#[test]
fn host_float_build_of_device_code_matches_cpu() {
    host_check("host_float_build_of_device_code_matches_cpu", HostBuild::Float);
}

#[derive(Clone, Copy, PartialEq)]
enum HostBuild {
    /// double, the CPU's libm, no contraction.
    Exact,
    /// double, FMA contraction, libm results jittered by an ulp.
    Jittered,
    /// float.
    Float,
}

/// libm wrappers that move results by an ulp, keyed on the argument's bits
/// (exact results — zero arguments, infinities — left alone as CUDA does).
const JITTER_PRELUDE: &str = r#"#include <string.h>
static inline double flame_jitter(double r, double a) {
    if (a == 0 || r == 0 || !isfinite(r)) return r;
    unsigned long long b;
    memcpy(&b, &a, 8);
    b ^= b >> 31; b *= 0x9E3779B97F4A7C15ull; b ^= b >> 29;
    switch (b % 3) { case 0: return r; case 1: return nextafter(r, INFINITY); default: return nextafter(r, -INFINITY); }
}
static inline double sin_j(double x) { return flame_jitter(sin(x), x); }
static inline double cos_j(double x) { return flame_jitter(cos(x), x); }
static inline double tan_j(double x) { return flame_jitter(tan(x), x); }
static inline double exp_j(double x) { return flame_jitter(exp(x), x); }
static inline double log_j(double x) { return x == 1 ? 0 : flame_jitter(log(x), x); }
static inline double log10_j(double x) { return x == 1 ? 0 : flame_jitter(log10(x), x); }
static inline double sinh_j(double x) { return flame_jitter(sinh(x), x); }
static inline double cosh_j(double x) { return flame_jitter(cosh(x), x); }
static inline double acos_j(double x) { return x == 1 ? 0 : flame_jitter(acos(x), x + 0.5); }
static inline double atan2_j(double y, double x) { return y == 0 || x == 0 ? atan2(y, x) : flame_jitter(atan2(y, x), y + 3 * x); }
static inline double pow_j(double x, double y) { return x == 1 || y == 0 ? pow(x, y) : flame_jitter(pow(x, y), x + 7 * y); }
static inline void sincos_j(double x, double *s, double *c) { sincos(x, s, c); *s = flame_jitter(*s, x); *c = flame_jitter(*c, -x); }
#define sin(x) sin_j(x)
#define cos(x) cos_j(x)
#define tan(x) tan_j(x)
#define exp(x) exp_j(x)
#define log(x) log_j(x)
#define log10(x) log10_j(x)
#define sinh(x) sinh_j(x)
#define cosh(x) cosh_j(x)
#define acos(x) acos_j(x)
#define atan2(y, x) atan2_j(y, x)
#define pow(x, y) pow_j(x, y)
#define sincos(x, s, c) sincos_j(x, s, c)
"#;

fn host_check(name: &str, build: HostBuild) {
    let batch = match build {
        HostBuild::Exact => Batch::new(false, 64, 0x4057),
        HostBuild::Jittered => Batch::new(false, DOUBLE_PER_CASE, 0x1177e4),
        HostBuild::Float => Batch::new(true, FLOAT_PER_CASE, 0xf4057),
    };
    let Some((out, states)) = run_on_host(name, build, &batch) else { return };
    match build {
        HostBuild::Exact => batch.check("host c++ double", false, &out, &states, 1e-13, 1e-14, &[], 0),
        HostBuild::Jittered => check_like_gpu(&batch, "host c++ jittered", false, &out, &states, DOUBLE_PER_CASE),
        HostBuild::Float => check_like_gpu(&batch, "host c++ float", true, &out, &states, FLOAT_PER_CASE),
    }
}

/// The batch's samples evaluated by the device code built as host C++:
/// results and MWC states; `None` (the test skipped) without a compiler.
fn run_on_host(name: &str, build: HostBuild, batch: &Batch) -> Option<(Vec<f64>, Vec<u64>)> {
    use std::fmt::Write;
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".to_string());
    let double = build != HostBuild::Float;

    let mut src = String::from("#define __device__\n#define __forceinline__ inline\n");
    let _ = writeln!(src, "#define FLAME_REAL {}", cuda_type(real(double)));
    src.push_str("#include <math.h>\n#include <stdio.h>\n#include <stdlib.h>\n");
    // CUDA's float overload of sincos.
    src.push_str("static inline void sincos(float x, float *s, float *c) { sincosf(x, s, c); }\n");
    if build == HostBuild::Jittered {
        src.push_str(JITTER_PRELUDE);
    }
    // The headers pasted in, as the host compiler has no NVRTC to find them.
    src.push_str(warpmc_rng::CUDA_HEADER);
    src.push_str(&FLAME_COMMON_CUH.replace("#pragma once", "").replace("#include \"warpmc_rng.cuh\"", ""));
    src.push_str(VARIATIONS_CUH);
    for c in &batch.codes {
        src.push_str(&c.source);
    }
    src.push_str(
        r#"static void must(size_t got, size_t want) { if (got != want) { fprintf(stderr, "short read\n"); exit(2); } }
int main(int argc, char **argv) {
    if (argc != 3) return 2;
    FILE *f = fopen(argv[1], "rb");
    FILE *o = fopen(argv[2], "wb");
    if (!f || !o) return 2;
    unsigned long long n, np;
    must(fread(&n, 8, 1, f), 1);
    must(fread(&np, 8, 1, f), 1);
    double *params64 = (double *)malloc(8 * np + 8);
    must(fread(params64, 8, np, f), np);
    real *params = (real *)malloc(sizeof(real) * np + 8);
    for (unsigned long long i = 0; i < np; i++) params[i] = (real)params64[i];
    for (unsigned long long i = 0; i < n; i++) {
        int c, off;
        double x, y;
        unsigned long long st;
        must(fread(&c, 4, 1, f), 1);
        must(fread(&off, 4, 1, f), 1);
        must(fread(&x, 8, 1, f), 1);
        must(fread(&y, 8, 1, f), 1);
        must(fread(&st, 8, 1, f), 1);
        FlameRng rng;
        rng.state = st;
"#,
    );
    let _ = writeln!(src, "        rng.a = {MWC_A}u;");
    src.push_str("        real ox = 0, oy = 0;\n        const real *p = params + off;\n        switch (c) {\n");
    for i in 0..batch.codes.len() {
        let _ = writeln!(src, "        case {i}: case_{i}((real)x, (real)y, ox, oy, rng, p); break;");
    }
    src.push_str(
        "        default: return 3;\n        }\n        double dx = ox, dy = oy;\n        fwrite(&dx, 8, 1, o);\n        fwrite(&dy, 8, 1, o);\n        fwrite(&rng.state, 8, 1, o);\n    }\n    fclose(o);\n    return 0;\n}\n",
    );

    let dir = warpmc_testkit::scratch_dir("varcode").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let (cpp, bin, input, output) =
        (dir.join("variations.cpp"), dir.join("variations"), dir.join("in.bin"), dir.join("out.bin"));
    std::fs::write(&cpp, &src).unwrap();
    let built = std::process::Command::new(&cxx)
        .args(["-O1", "-fno-fast-math", "-w"])
        .args(if build == HostBuild::Jittered {
            ["-mfma", "-ffp-contract=fast"]
        } else {
            ["-ffp-contract=off", "-mno-fma"]
        })
        .arg("-o")
        .arg(&bin)
        .arg(&cpp)
        .arg("-lm")
        .output();
    match built {
        Err(e) => {
            let _ = std::fs::remove_dir_all(&dir);
            skip(name, &format!("no C++ compiler ({cxx}: {e})"));
            return None;
        }
        Ok(o) if !o.status.success() => {
            panic!("{cxx} failed on the device code:\n{}", String::from_utf8_lossy(&o.stderr))
        }
        Ok(_) => {}
    }
    let mut bytes = Vec::new();
    bytes.extend_from_slice(&(batch.samples.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&(batch.params.len() as u64).to_le_bytes());
    for v in &batch.params {
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    for (s, off) in batch.samples.iter().zip(&batch.offsets) {
        bytes.extend_from_slice(&(s.case as i32).to_le_bytes());
        bytes.extend_from_slice(&off.to_le_bytes());
        bytes.extend_from_slice(&s.x.to_le_bytes());
        bytes.extend_from_slice(&s.y.to_le_bytes());
        bytes.extend_from_slice(&s.state.to_le_bytes());
    }
    std::fs::write(&input, bytes).unwrap();
    let status = std::process::Command::new(&bin).arg(&input).arg(&output).status().unwrap();
    assert!(status.success(), "host build of the device code: {status}");
    let raw = std::fs::read(&output).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let words: Vec<u64> = raw.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect();
    assert_eq!(words.len(), 3 * batch.samples.len());
    let out: Vec<f64> = words.chunks_exact(3).flat_map(|w| [f64::from_bits(w[0]), f64::from_bits(w[1])]).collect();
    let states: Vec<u64> = words.chunks_exact(3).map(|w| w[2]).collect();
    Some((out, states))
}
/// crackle's noise on the GPU (double and float builds) against the
/// CPU's, at random points and at the points crackle feeds it; prints the
/// largest differences and checks them.
#[test]
fn gpu_crackle_noise_matches_cpu() {
    use crate::variations::plugin::simplex3;
    let Some(gpu) = warpmc_testkit::gpu_or_skip("gpu_crackle_noise_matches_cpu") else { return };
    let mut r = TestRng(0x5e1e);
    let n = 4096usize;
    // Half at random, half where crackle evaluates it: (2.5x, 2.5y, 2.5z)
    // and (2.5y + 30.2, 2.5x − 12.1, 2.5z + 19.8) for whole x, y, often on
    // a simplex's face.
    let mut pts: Vec<f64> = (0..3 * n / 2).map(|_| r.range(-60.0, 60.0)).collect();
    while pts.len() < 3 * n {
        let (x, y) = (r.below(41) as f64 - 20.0, r.below(41) as f64 - 20.0);
        let z = if r.below(2) == 0 { 0.0 } else { r.range(-2.0, 2.0) };
        pts.extend([2.5 * x, 2.5 * y, 2.5 * z, 2.5 * y + 30.2, 2.5 * x - 12.1, 2.5 * z + 19.8]);
    }
    for double in [true, false] {
        let src = String::from(
            r#"#include "flame_common.cuh"
#include "variations.cuh"
extern "C" __global__ void noise(int n, const double *__restrict__ in, double *__restrict__ out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[i] = (double)flame_simplex3((real)in[3 * i], (real)in[3 * i + 1], (real)in[3 * i + 2]);
}
"#,
        );
        let ks = precision_options(with_headers(KernelSource::new("noise_test.cu", src)), double);
        let module = gpu.module(&ks).unwrap();
        let kernel = module.kernel("noise").unwrap();
        let d_in = gpu.upload(&pts).unwrap();
        let mut d_out = gpu.alloc_zeros::<f64>(n).unwrap();
        let n32 = n as i32;
        // SAFETY: noise takes (int, const double*, double*); in holds 3n
        // doubles, out n.
        unsafe {
            gpu.launch(&kernel).arg(&n32).buf(&d_in).buf_mut(&mut d_out).run(warpmc_gpu::grid_1d(n, 128)).unwrap()
        };
        let out = gpu.download(&d_out).unwrap();
        let round = |v: f64| if double { v } else { f64::from(v as f32) };
        let mut worst = 0.0f64;
        for i in 0..n {
            let c = simplex3([round(pts[3 * i]), round(pts[3 * i + 1]), round(pts[3 * i + 2])]);
            worst = worst.max((c - out[i]).abs());
        }
        println!(
            "simplex noise, {}: largest |gpu - cpu| {worst:e} over {n} points",
            if double { "double" } else { "float" }
        );
        assert!(worst < if double { 1e-12 } else { 1e-4 }, "{worst}");
    }
}
