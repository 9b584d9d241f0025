//! Kernel source per genome, as cuburn generates it: only the variations a
//! flame uses are compiled, and each xform becomes a straight-line device
//! function. Values (coefficients, weights, parameters, camera) are not in
//! the source but in a parameter block the kernel copies into shared
//! memory, so frames of an animation whose xforms use the same variations
//! reuse one compiled kernel.
//!
//! The generated source defines the genome (`FlameGenome`: its xforms and
//! where the camera sits in the parameter block) and instantiates
//! `flame::ChaosGame` of kernels/iterate.cuh with the policy types the
//! [`IterationOptions`] and the genome ask for: each option maps to a C++
//! type name through one function here ([`choice_policy`],
//! [`shuffle_policy`], [`accumulator_policy`], [`palette_policy`],
//! [`histogram_policy`], [`cuda_type`]). The constants the kernels share
//! with this crate are -D options ([`shared_defines`]).

use std::fmt::Write;

use warpmc_gpu::KernelSource;

use super::varcode::{VARIATIONS_CUH, variations_code, variations_params};
use super::{Accumulation, IterationOptions, Selection, Shuffle};
use crate::genome::{Affine, Flame, PaletteMode, XForm};
use crate::palette::PALETTE_SIZE;
use crate::render::Precision;
use crate::render::camera::Camera;
use crate::render::chaos::{CHOOSE_GRAIN, EARLY_CLIP_FUSE, FUSE, adjust_opacity};

/// The flame kernels' shared header: `real`, `FlameRng`.
pub(crate) const FLAME_COMMON_CUH: &str = include_str!("../../../kernels/flame_common.cuh");
const ITERATE_CUH: &str = include_str!("../../../kernels/iterate.cuh");
const WARP_AGGREGATED_CUH: &str = include_str!("../../../kernels/warp_aggregated.cuh");

/// Where each value of an xform's header sits, before its variation
/// parameters, in the parameter block (the generated xform functions and
/// [`pack_params`] both use these).
struct XformHeader;

impl XformHeader {
    /// The pre-affine map, 6 values (see [`push_affine`]).
    const PRE_AFFINE: usize = 0;
    /// The post-affine map, 6 values.
    const POST_AFFINE: usize = 6;
    /// `color_speed · color`.
    const COLOR: usize = 12;
    /// `1 − color_speed`.
    const COLOR_KEEP: usize = 13;
    /// The visibility of the points the xform produces (flam3's
    /// `vis_adjusted`).
    const VISIBILITY: usize = 14;
    /// The opacity as given: the final xform's probability.
    const OPACITY: usize = 15;
    /// Values in the header.
    const LEN: usize = 16;
}

/// Bits of `ChaosPoint::state` (iterate.cuh) that hold the fuse count; the
/// chaos row is above them.
const STATE_FUSE_BITS: u32 = 8;
const _: () = assert!(FUSE < 1 << STATE_FUSE_BITS && EARLY_CLIP_FUSE < 1 << STATE_FUSE_BITS);
/// Bits of `ChaosPoint::state` above the fuse count that hold the bad
/// values met in a row (flam3 retries an iteration up to 4 times).
const STATE_RETRY_BITS: u32 = 3;

/// `ChaosPoint::state` (iterate.cuh) of a point with `fuse` iterations to
/// discard, no bad value behind it, whose next choice uses chaos row `row`.
pub(crate) fn point_state(fuse: usize, row: usize) -> i32 {
    (fuse | (row << (STATE_FUSE_BITS + STATE_RETRY_BITS))) as i32
}

/// Bytes of one `ChaosPoint` (iterate.cuh): x, y, c in the chaos-game
/// real type, then `state` and `left` (i32 each).
pub(crate) fn point_bytes(real: Precision) -> usize {
    3 * real.bytes() + 8
}

/// The CUDA type of a precision.
pub(crate) fn cuda_type(p: Precision) -> &'static str {
    match p {
        Precision::F32 => "float",
        Precision::F64 => "double",
    }
}

/// Whether the flame's xforms have chaos (xaos) rows other than all ones.
pub(crate) fn has_chaos(cp: &Flame) -> bool {
    let n = cp.xforms.len();
    cp.xforms.iter().any(|x| (0..n).any(|j| (x.chaos_to(j) - 1.0).abs() > 1e-10))
}

/// Whether a warp shares its xform choice: asked for, and possible (a
/// flame with chaos rows needs every thread to choose in its own row).
fn warp_uniform(selection: Selection, chaos: bool) -> bool {
    selection == Selection::WarpUniform && !chaos
}

/// The xform-choice policy.
fn choice_policy(selection: Selection, chaos: bool) -> &'static str {
    if chaos {
        "flame::ChaosRowChoice"
    } else if warp_uniform(selection, chaos) {
        "flame::WarpUniformChoice"
    } else {
        "flame::PerThreadChoice"
    }
}

/// The shuffle that runs: only where a warp shares its choice (with
/// per-thread choice it would cost a barrier per iteration and break up
/// the runs of samples a thread sums before an atomic).
fn effective_shuffle(opts: &IterationOptions, chaos: bool) -> Shuffle {
    if warp_uniform(opts.selection, chaos) { opts.shuffle } else { Shuffle::None }
}

/// The shuffle policy, with `buffers` shared-memory buffers.
fn shuffle_policy(shuffle: Shuffle, buffers: usize) -> String {
    match shuffle {
        Shuffle::None => "flame::NoShuffle".to_string(),
        Shuffle::Simple => format!("flame::SimpleShuffle<{buffers}>"),
        Shuffle::Better => format!("flame::BetterShuffle<{buffers}>"),
    }
}

/// The accumulator policy; `cache_bits` is log2 of the block cache's slots
/// ([`cache_bits`]; 0: no room, so no cache).
fn accumulator_policy(accumulation: Accumulation, cache_bits: u32) -> String {
    match accumulation {
        Accumulation::SharedCache if cache_bits > 0 => format!("flame::Runs<flame::BlockCache<{cache_bits}> >"),
        Accumulation::Plain | Accumulation::SharedCache => "flame::Runs<flame::GlobalFlush>".to_string(),
        Accumulation::WarpAggregated => "flame::WarpAggregated".to_string(),
    }
}

/// The palette lookup policy.
fn palette_policy(mode: PaletteMode) -> &'static str {
    match mode {
        PaletteMode::Step => "flame::StepPalette",
        PaletteMode::Linear => "flame::LinearPalette",
    }
}

/// The histogram: bucket type, and whether hit counts are kept apart.
fn histogram_policy(bucket: Precision, count: bool) -> String {
    format!("flame::Histogram<{}, {count}>", cuda_type(bucket))
}

/// The -D options of the kernels that every genome shares: the chaos
/// game's real type and block size, and the constants this crate and the
/// kernels must agree on.
fn shared_defines(opts: &IterationOptions) -> Vec<String> {
    vec![
        format!("-DFLAME_REAL={}", cuda_type(opts.real)),
        format!("-DFLAME_BLOCK={}", opts.block),
        format!("-DFLAME_CHOOSE_GRAIN={CHOOSE_GRAIN}"),
        format!("-DFLAME_PALETTE_SIZE={PALETTE_SIZE}"),
        format!("-DFLAME_STATE_FUSE_BITS={STATE_FUSE_BITS}"),
        format!("-DFLAME_STATE_RETRY_BITS={STATE_RETRY_BITS}"),
        format!("-DFLAME_POINT_BYTES={}", point_bytes(opts.real)),
    ]
}

/// Where each xform's parameters sit in the parameter block.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ParamLayout {
    /// Offsets of the xforms (in genome order), then of the final xform.
    offsets: Vec<usize>,
    /// Offset of the camera ([`CAMERA_LEN`] reals), the last entry of the
    /// block.
    camera: usize,
}

impl ParamLayout {
    /// Values in the block.
    pub(crate) fn len(&self) -> usize {
        self.camera + CAMERA_LEN
    }
}

/// A generated kernel: its source and the layout of its parameter block.
#[derive(Clone, Debug)]
pub(crate) struct GeneratedKernel {
    /// The generated file (with the options of the renderer, the key of
    /// its kernel cache).
    pub(crate) code: String,
    pub(crate) source: KernelSource,
    pub(crate) layout: ParamLayout,
}

/// The name of the generated kernel.
pub(crate) const KERNEL_NAME: &str = "flame_iterate";

/// The kernel for `cp` under `opts`, with a histogram of `bucket` values
/// (and separate hit counts with `count`).
pub(crate) fn generate(cp: &Flame, opts: &IterationOptions, bucket: Precision, count: bool) -> GeneratedKernel {
    let chaos = has_chaos(cp);
    let shuffle = effective_shuffle(opts, chaos);
    let aggregated = opts.accumulation == Accumulation::WarpAggregated;
    let mut code = String::from("// Generated by warpmc-flame (render/cuda/codegen.rs) for one genome structure.\n");
    code.push_str("#include \"flame_common.cuh\"\n#include \"variations.cuh\"\n#include \"iterate.cuh\"\n");
    if aggregated {
        code.push_str("#include \"warp_aggregated.cuh\"\n");
    }

    let layout = xforms_code(cp, &mut code);
    genome_struct(cp, &layout, &mut code);
    let bits = cache_bits(opts, shuffle, bucket, layout.len());
    let _ = writeln!(
        code,
        "typedef flame::ChaosGame<FlameGenome, {}, {}, {}, {}, {}> FlameChaosGame;",
        choice_policy(opts.selection, chaos),
        shuffle_policy(shuffle, shuffle_buffers(opts)),
        accumulator_policy(opts.accumulation, bits),
        palette_policy(cp.palette_mode),
        histogram_policy(bucket, count),
    );
    code.push_str(KERNEL_ENTRY);

    let mut source = KernelSource::new("iterate.cu", code.clone())
        .header(warpmc_rng::CUDA_HEADER_NAME, warpmc_rng::CUDA_HEADER)
        .header("flame_common.cuh", FLAME_COMMON_CUH)
        .header("variations.cuh", VARIATIONS_CUH)
        .header("iterate.cuh", ITERATE_CUH);
    if aggregated {
        source = warpmc_prims::atomics::with_atomics_header(source.header("warp_aggregated.cuh", WARP_AGGREGATED_CUH));
    }
    for option in shared_defines(opts) {
        source = source.option(option);
    }
    GeneratedKernel { code, source, layout }
}

/// The kernel's entry point: `FlameChaosGame::run` with the kernel's
/// arguments, in the order the launch in `backend.rs` passes them.
const KERNEL_ENTRY: &str = r#"extern "C" __global__ void __launch_bounds__(FLAME_BLOCK)
flame_iterate(const real *__restrict__ gparams, const unsigned short *__restrict__ tables,
              const float4 *__restrict__ gpalette, flame::ChaosPoint *__restrict__ points,
              unsigned long long *__restrict__ rng_state, const unsigned *__restrict__ rng_a,
              FlameChaosGame::bucket *__restrict__ hist, FlameChaosGame::bucket *__restrict__ count,
              unsigned width, unsigned height, unsigned row0, int iters, int sub_batch, int fuse_iters,
              unsigned plotting, unsigned long long *__restrict__ counters) {
    FlameChaosGame::run(gparams, tables, gpalette, points, rng_state, rng_a, hist, count, width, height, row0, iters,
                        sub_batch, fuse_iters, plotting, counters);
}
"#;

/// Appends the device functions of the xforms (and the final xform) to
/// `code`; returns where their values sit in the parameter block.
fn xforms_code(cp: &Flame, code: &mut String) -> ParamLayout {
    let mut offsets = Vec::new();
    let mut at = 0usize;
    for (i, x) in cp.xforms.iter().chain(cp.final_xform.as_ref()).enumerate() {
        let vars = format!("xform{i}_variations");
        let vc = variations_code(&vars, &x.variations);
        code.push_str(&vc.source);
        code.push('\n');
        xform_code(&format!("xform{i}"), &vars, x, code);
        offsets.push(at);
        at += XformHeader::LEN + vc.param_len;
    }
    ParamLayout { offsets, camera: at }
}

/// One xform as a device function: pre-affine map, colour, visibility,
/// variations, post map.
fn xform_code(name: &str, vars: &str, x: &XForm, code: &mut String) {
    let p = |k: usize| format!("p[{k}]");
    let (pre, post) = (XformHeader::PRE_AFFINE, XformHeader::POST_AFFINE);
    let _ = writeln!(
        code,
        "__device__ __forceinline__ void {name}(real &x, real &y, real &c, real &vis, FlameRng &rng, const real *__restrict__ p) {{\n\
         \x20   const real tx = {} * x + {} * y + {};\n\
         \x20   const real ty = {} * x + {} * y + {};\n\
         \x20   c = {} + {} * c;\n\
         \x20   vis = {};\n\
         \x20   real ox, oy;\n\
         \x20   {vars}(tx, ty, ox, oy, rng, p + {});",
        p(pre),
        p(pre + 1),
        p(pre + 2),
        p(pre + 3),
        p(pre + 4),
        p(pre + 5),
        p(XformHeader::COLOR),
        p(XformHeader::COLOR_KEEP),
        p(XformHeader::VISIBILITY),
        XformHeader::LEN,
    );
    if x.post.is_identity() {
        code.push_str("    x = ox;\n    y = oy;\n}\n");
    } else {
        let _ = writeln!(
            code,
            "    x = {} * ox + {} * oy + {};\n    y = {} * ox + {} * oy + {};\n}}",
            p(post),
            p(post + 1),
            p(post + 2),
            p(post + 3),
            p(post + 4),
            p(post + 5),
        );
    }
}

/// `FlameGenome`, the genome policy of iterate.cuh: the offsets of the
/// camera's values and of the end of the block, `apply_xform` (xform `i`)
/// and `apply_final` (the final xform with probability its opacity, to the
/// point's copy; nothing without a final xform). A bad value from the
/// final xform becomes a random point in [-1, 1]², as flam3's apply_xform
/// makes it (and the CPU backend).
fn genome_struct(cp: &Flame, layout: &ParamLayout, code: &mut String) {
    code.push_str("struct FlameGenome {\n    enum Layout {\n");
    for (k, (name, _)) in camera_fields(&Camera::default()).iter().enumerate() {
        let _ = writeln!(code, "        {name} = {},", layout.camera + k);
    }
    let _ = writeln!(code, "        PARAMS = {}\n    }};", layout.len());
    code.push_str(
        "    __device__ static __forceinline__ void apply_xform(int i, real &x, real &y, real &c, real &vis, FlameRng &rng,\n\
         \x20                                                      const real *P) {\n\
         \x20       switch (i) {\n",
    );
    for (i, off) in layout.offsets.iter().enumerate().take(cp.xforms.len()) {
        let _ = writeln!(code, "        case {i}: xform{i}(x, y, c, vis, rng, P + {off}); break;");
    }
    code.push_str("        default: break;\n        }\n    }\n");
    code.push_str(
        "    __device__ static __forceinline__ void apply_final(real &x, real &y, real &c, FlameRng &rng, const real *P) {\n",
    );
    if cp.final_xform.is_some() {
        let n = cp.xforms.len();
        let off = layout.offsets[n];
        let _ = writeln!(
            code,
            "        const real op = P[{}];\n        if (op == (real)1 || rng.uniform() < op) {{\n            \
             real vis;\n            xform{n}(x, y, c, vis, rng, P + {off});\n            \
             if (flame_bad_value(x) || flame_bad_value(y)) {{\n                \
             x = (real)2 * rng.uniform() - (real)1;\n                \
             y = (real)2 * rng.uniform() - (real)1;\n            }}\n        }}",
            off + XformHeader::OPACITY
        );
    }
    code.push_str("    }\n};\n");
}

/// Static shared memory a kernel may use: under the 48 KiB limit, with
/// room for the compiler's own.
const SHARED_BUDGET: usize = 44 * 1024;

/// log2 of the slots of the block's cell cache (`Accumulation::SharedCache`;
/// 0: no cache): up to 1024 slots, as many as fit beside the parameters,
/// the palette and the shuffle buffers.
fn cache_bits(opts: &IterationOptions, shuffle: Shuffle, bucket: Precision, params: usize) -> u32 {
    if opts.accumulation != Accumulation::SharedCache {
        return 0;
    }
    let shuffle =
        if shuffle != Shuffle::None { shuffle_buffers(opts) * opts.block as usize * point_bytes(opts.real) } else { 0 };
    let fixed = params * opts.real.bytes() + PALETTE_SIZE * 16 + shuffle;
    let slot = 4 + 5 * bucket.bytes();
    (4..=10).rev().find(|b| fixed + (1usize << b) * slot <= SHARED_BUDGET).unwrap_or(0)
}

/// Double-buffered shuffle (one barrier per iteration) where two buffers
/// fit in 32 KiB of shared memory, else one.
fn shuffle_buffers(opts: &IterationOptions) -> usize {
    if opts.block as usize * point_bytes(opts.real) * 2 <= 32 * 1024 { 2 } else { 1 }
}

/// The 6 values of an affine map, in the order the generated code reads
/// them: x' = c[0][0]·x + c[1][0]·y + c[2][0], y' = c[0][1]·x + c[1][1]·y +
/// c[2][1].
fn push_affine(a: &Affine, out: &mut Vec<f64>) {
    out.extend_from_slice(&[a.c[0][0], a.c[1][0], a.c[2][0], a.c[0][1], a.c[1][1], a.c[2][1]]);
}

/// Reals of the camera in the parameter block.
const CAMERA_LEN: usize = 16;

/// The camera's values in the parameter block, in order, each with the
/// name the kernel reads it by (`FlameGenome::CAM_*`, see iterate.cuh's
/// `plot_cell`): the rotation about the centre, the bounds, the cell
/// scales and the whole histogram's size.
fn camera_fields(cam: &Camera) -> [(&'static str, f64); CAMERA_LEN] {
    let rot = cam.rot.unwrap_or([[1.0, 0.0], [0.0, 1.0]]);
    [
        ("CAM_R00", rot[0][0]),
        ("CAM_R01", rot[0][1]),
        ("CAM_R10", rot[1][0]),
        ("CAM_R11", rot[1][1]),
        ("CAM_CX", cam.rot_center[0]),
        ("CAM_CY", cam.rot_center[1]),
        ("CAM_B0", cam.bounds[0]),
        ("CAM_B1", cam.bounds[1]),
        ("CAM_B2", cam.bounds[2]),
        ("CAM_B3", cam.bounds[3]),
        ("CAM_WS0", cam.ws0),
        ("CAM_WB0S0", cam.wb0s0),
        ("CAM_HS1", cam.hs1),
        ("CAM_HB1S1", cam.hb1s1),
        ("CAM_FULL_W", cam.width as f64),
        ("CAM_FULL_H", cam.height as f64),
    ]
}

/// The parameter block of `cp` for a kernel generated from a flame of the
/// same structure, seen through `camera`.
pub(crate) fn pack_params(cp: &Flame, layout: &ParamLayout, camera: &Camera) -> Vec<f64> {
    let mut out = Vec::with_capacity(layout.len());
    for (i, x) in cp.xforms.iter().chain(cp.final_xform.as_ref()).enumerate() {
        let at = layout.offsets[i];
        debug_assert_eq!(out.len(), at + XformHeader::PRE_AFFINE);
        push_affine(&x.coefs, &mut out);
        debug_assert_eq!(out.len(), at + XformHeader::POST_AFFINE);
        push_affine(&x.post, &mut out);
        debug_assert_eq!(out.len(), at + XformHeader::COLOR);
        out.push(x.color_speed * x.color);
        out.push(1.0 - x.color_speed);
        debug_assert_eq!(out.len(), at + XformHeader::VISIBILITY);
        out.push(adjust_opacity(x.opacity));
        debug_assert_eq!(out.len(), at + XformHeader::OPACITY);
        out.push(x.opacity);
        debug_assert_eq!(out.len(), at + XformHeader::LEN);
        variations_params(&x.variations, &x.coefs, &mut out);
    }
    debug_assert_eq!(out.len(), layout.camera);
    out.extend(camera_fields(camera).map(|(_, v)| v));
    debug_assert_eq!(out.len(), layout.len());
    out
}

/// The parameter block as the kernel's `real`s, little-endian bytes.
pub(crate) fn to_real_bytes(values: &[f64], real: Precision) -> Vec<u8> {
    let mut out = Vec::with_capacity(values.len() * real.bytes());
    for v in values {
        match real {
            Precision::F64 => out.extend_from_slice(&v.to_le_bytes()),
            Precision::F32 => out.extend_from_slice(&(*v as f32).to_le_bytes()),
        }
    }
    out
}

#[cfg(test)]
mod tests;
