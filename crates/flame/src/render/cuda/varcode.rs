//! CUDA code for an xform's variations: a device function per xform that
//! computes the shared per-point values it needs and sums its variations
//! in flam3's index order, as [`crate::variations::VariationSet::apply`]
//! does on the CPU. The source depends only on which variations are
//! present (with nonzero weight); weights and parameters come from the
//! parameter block ([`variations_params`]), so interpolated animation
//! frames share one compiled kernel.
//!
//! Only part of flam3's 99 variations has a CUDA form so far (the ones in
//! [`gpu_form`]); [`gpu_supports`] tells which, and the renderer refuses
//! (with the name) a genome that uses another.

use std::fmt::Write;

use crate::genome::Affine;
use crate::variations::{VariationKind, VariationSpec};

/// Device helpers shared by the variations (after flame_common.cuh).
pub(crate) const VARIATIONS_CUH: &str = r#"#pragma once
// x86's (int) conversion, which flam3's formulas rely on: truncation, and
// INT_MIN for NaN and out-of-range values (CUDA's conversion saturates).
__device__ __forceinline__ int c_int(real v) {
    return (v > (real)-2147483649.0 && v < (real)2147483648.0) ? (int)v : (int)0x80000000;
}
#define FLAME_PI ((real)3.14159265358979323846)
"#;

/// CUDA source of one xform's variations, and the layout of its parameters.
#[derive(Clone, Debug)]
pub(crate) struct VariationsCode {
    /// Defines `__device__ __forceinline__ void NAME(real tx, real ty, real
    /// &ox, real &oy, FlameRng &rng, const real *__restrict__ p)`.
    pub(crate) source: String,
    /// Reals read from `p[0..param_len]`.
    pub(crate) param_len: usize,
}

/// Shared per-point values a variation reads.
const SQRT: u8 = 1;
const ATAN_XY: u8 = 2;
const ANGLES: u8 = 4 | SQRT;

/// The CUDA form of variation `index`: (needed shared values, parameter
/// count, body). The body reads the weight as `w`, its parameters as
/// `q[0..]`, the point as `tx, ty` and the shared values `sumsq`, `r`
/// (√sumsq), `atan_xy`, `sina`, `cosa`, and adds to `ox, oy`.
fn gpu_form(index: usize) -> Option<(u8, usize, &'static str)> {
    Some(match index {
        0 => (0, 0, "ox += w * tx; oy += w * ty;"),
        1 => (0, 0, "ox += w * sin(tx); oy += w * sin(ty);"),
        2 => (0, 0, "{ const real k = w / (sumsq + FLAME_EPS); ox += k * tx; oy += k * ty; }"),
        3 => (0, 0, "{ real s, c; sincos(sumsq, &s, &c); ox += w * (s * tx - c * ty); oy += w * (c * tx + s * ty); }"),
        4 => (
            SQRT,
            0,
            "{ const real k = w / (r + FLAME_EPS); ox += (tx - ty) * (tx + ty) * k; oy += (real)2 * tx * ty * k; }",
        ),
        13 => (
            SQRT | ATAN_XY,
            0,
            "{ real a = (real)0.5 * atan_xy; if (rng.bit()) a += FLAME_PI; const real rr = w * sqrt(r); real s, c; sincos(a, &s, &c); ox += rr * c; oy += rr * s; }",
        ),
        16 => (SQRT, 0, "{ const real k = (real)2 * w / (r + (real)1); ox += k * ty; oy += k * tx; }"),
        // rings2: q = dx, 2dx, -2dx, 1 - dx (host precomputed).
        26 => (
            ANGLES,
            4,
            "{ real rr = r; rr += q[2] * (real)c_int((rr + q[0]) / q[1]) + rr * q[3]; ox += w * sina * rr; oy += w * cosa * rr; }",
        ),
        27 => (SQRT, 0, "{ const real k = (w * (real)2) / (r + (real)1); ox += k * tx; oy += k * ty; }"),
        28 => (0, 0, "{ const real k = w / ((real)0.25 * sumsq + (real)1); ox += k * tx; oy += k * ty; }"),
        29 => (0, 0, "ox += w * sin(tx); oy += w * ty;"),
        35 => (
            0,
            0,
            "{ const real a = rng.uniform() * (real)2 * FLAME_PI; real s, c; sincos(a, &s, &c); const real g = rng.uniform() + rng.uniform() + rng.uniform() + rng.uniform() - (real)2; const real rr = w * g; ox += rr * c; oy += rr * s; }",
        ),
        _ => return None,
    })
}

/// Whether the GPU backend can run variation `kind`.
pub(crate) fn gpu_supports(kind: VariationKind) -> bool {
    gpu_form(kind.index()).is_some()
}

fn used(specs: &[VariationSpec]) -> Vec<&VariationSpec> {
    let mut v: Vec<&VariationSpec> = specs.iter().filter(|s| s.weight != 0.0).collect();
    v.sort_by_key(|s| s.kind);
    v
}

/// The device function `fn_name` for `specs`.
pub(crate) fn variations_code(fn_name: &str, specs: &[VariationSpec]) -> VariationsCode {
    let items = used(specs);
    let mut need = 0;
    let mut body = String::new();
    let mut at = 0;
    for s in &items {
        let (n, params, code) = gpu_form(s.kind.index()).expect("checked by gpu_supports before generating");
        need |= n;
        let _ = writeln!(
            body,
            "    {{ // {}\n        const real w = p[{at}];\n        const real *q = p + {};\n        (void)q;\n        {code}\n    }}",
            s.kind.name(),
            at + 1
        );
        at += 1 + params;
    }
    let mut src = format!(
        "__device__ __forceinline__ void {fn_name}(real tx, real ty, real &ox, real &oy, FlameRng &rng, const real *__restrict__ p) {{\n    (void)rng; (void)p;\n    ox = 0; oy = 0;\n    const real sumsq = tx * tx + ty * ty; (void)sumsq;\n"
    );
    if need & SQRT != 0 {
        src.push_str("    const real r = sqrt(sumsq);\n");
    }
    if need & ATAN_XY != 0 {
        src.push_str("    const real atan_xy = atan2(tx, ty);\n");
    }
    if need & ANGLES & !SQRT != 0 {
        src.push_str("    const real sina = tx / r, cosa = ty / r;\n");
    }
    src.push_str(&body);
    src.push_str("}\n");
    VariationsCode { source: src, param_len: at }
}

/// Appends the weights and parameters `variations_code(…, specs)` reads.
pub(crate) fn variations_params(specs: &[VariationSpec], _coefs: &Affine, out: &mut Vec<f64>) {
    for s in used(specs) {
        out.push(s.weight);
        if s.kind.index() == 26 {
            let v = s.param(0);
            let dx = v * v + crate::variations::EPS;
            out.extend_from_slice(&[dx, 2.0 * dx, -2.0 * dx, 1.0 - dx]);
        }
    }
}
