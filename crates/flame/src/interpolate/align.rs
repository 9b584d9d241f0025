//! Making control points interpolable (flam3's `flam3_align`): equal xform
//! counts, padding xforms shaped after their neighbours, and parameters of
//! variations that fade in or out taken from the side that has them.

use crate::genome::{Affine, AffineInterpolation};
use crate::variations::VariationKind;

use super::{Slot, Var, WorkFlame};

// flam3's variation indices that the alignment rules name.
pub(super) const VAR_LINEAR: usize = 0;
const VAR_SPHERICAL: usize = 2;
const VAR_POLAR: usize = 5;
const VAR_RINGS: usize = 21;
const VAR_FAN: usize = 22;
const VAR_BLOB: usize = 23;
const VAR_FAN2: usize = 25;
const VAR_RINGS2: usize = 26;
const VAR_PERSPECTIVE: usize = 30;
const VAR_JULIAN: usize = 32;
const VAR_JULIASCOPE: usize = 33;
const VAR_NGON: usize = 38;
const VAR_CURL: usize = 39;
const VAR_RECTANGLES: usize = 40;
const VAR_SUPER_SHAPE: usize = 50;
const VAR_FLOWER: usize = 51;
const VAR_WEDGE_JULIA: usize = 78;
const VAR_WEDGE_SPH: usize = 79;

/// flam3 has no parametric variation before this index; parameters are
/// only carried over for variations from here on.
const FIRST_PARAMETRIC: usize = VAR_BLOB;

/// Neighbours with any of these (positive weight) make a padding xform a
/// point reflection with linear weight −1: these variations have a hole
/// at the origin that an identity would show.
const HOLE_VARIATIONS: [usize; 7] =
    [VAR_SPHERICAL, VAR_NGON, VAR_JULIAN, VAR_JULIASCOPE, VAR_POLAR, VAR_WEDGE_SPH, VAR_WEDGE_JULIA];

/// A parametric variation a padding xform takes from its neighbour, with
/// the parameter values that make it neutral.
struct NeutralVariation {
    index: usize,
    params: &'static [(&'static str, f64)],
}

/// flam3's list, in flam3's order. Perspective keeps its distance and
/// super_shape its `m` (whatever the padding xform already has).
const NEUTRAL_VARIATIONS: [NeutralVariation; 7] = [
    NeutralVariation { index: VAR_RECTANGLES, params: &[("rectangles_x", 0.0), ("rectangles_y", 0.0)] },
    NeutralVariation { index: VAR_RINGS2, params: &[("rings2_val", 0.0)] },
    NeutralVariation { index: VAR_FAN2, params: &[("fan2_x", 0.0), ("fan2_y", 0.0)] },
    NeutralVariation { index: VAR_BLOB, params: &[("blob_low", 1.0), ("blob_high", 1.0), ("blob_waves", 1.0)] },
    NeutralVariation { index: VAR_PERSPECTIVE, params: &[("perspective_angle", 0.0)] },
    NeutralVariation { index: VAR_CURL, params: &[("curl_c1", 0.0), ("curl_c2", 0.0)] },
    NeutralVariation {
        index: VAR_SUPER_SHAPE,
        params: &[
            ("super_shape_n1", 2.0),
            ("super_shape_n2", 2.0),
            ("super_shape_n3", 2.0),
            ("super_shape_rnd", 0.0),
            ("super_shape_holes", 0.0),
        ],
    },
];

/// `flam3_copyx`: `src` with `nstd` standard xforms (the missing ones
/// padding) and a final xform if `with_final` (padding, not animated and
/// not colouring, when `src` has none).
fn copy_padded<'a>(src: &WorkFlame<'a>, nstd: usize, with_final: bool) -> WorkFlame<'a> {
    let have = src.xforms.len();
    let xforms = (0..nstd).map(|i| if i < have { src.xforms[i].clone() } else { Slot::padding(i) }).collect();
    // Rows up to their last entry that is not 1, as in `src`; a padding
    // xform's row is all 1.
    let chaos = (0..nstd)
        .map(|i| if i < have { src.chaos[i].iter().take(have).copied().collect() } else { Vec::new() })
        .collect();
    let final_xform = with_final.then(|| match &src.final_xform {
        Some(f) => f.clone(),
        None => {
            let mut f = Slot::padding(nstd);
            f.animate = 0.0;
            f.color_speed = 0.0;
            f
        }
    });
    WorkFlame { flame: src.flame, time: src.time, xforms, final_xform, chaos }
}

/// `flam3_align`: copies of `src` with equal xform lists, ready for
/// interpolation.
pub(super) fn align<'a>(src: &[WorkFlame<'a>]) -> Vec<WorkFlame<'a>> {
    let n = src.len();
    let nstd = src.iter().map(|w| w.xforms.len()).max().unwrap_or(0);
    let with_final = src.iter().any(|w| w.final_xform.is_some());
    let already_aligned = src.iter().all(|w| w.xforms.len() == nstd && w.final_xform.is_some() == with_final);

    let mut dst: Vec<WorkFlame<'a>> = src.iter().map(|w| copy_padded(w, nstd, with_final)).collect();

    // flam3 decides by the control point just before the middle.
    let reference = dst[n / 2 - 1].flame.affine_interpolation;
    if matches!(reference, AffineInterpolation::Compat | AffineInterpolation::Older) {
        return dst;
    }

    let nslots = nstd + usize::from(with_final);
    for i in 0..n {
        for xf in 0..nslots {
            inherit_parameters(&mut dst, i, xf);
            if dst[i].slot(xf).padding && !already_aligned {
                shape_padding(&mut dst, i, xf);
            }
        }
    }
    dst
}

/// Parametric variations that xform `xf` of control point `i` lacks but its
/// neighbour has take the neighbour's parameters (flam3 looks at the
/// previous control point, or for the first one at the next).
fn inherit_parameters(dst: &mut [WorkFlame<'_>], i: usize, xf: usize) {
    let neighbour = if i > 0 {
        i - 1
    } else if i + 1 < dst.len() {
        i + 1
    } else {
        return;
    };
    let donors: Vec<Var> = dst[neighbour]
        .slot(xf)
        .vars
        .iter()
        .filter(|&(&j, v)| j >= FIRST_PARAMETRIC && v.weight != 0.0)
        .map(|(_, v)| v.clone())
        .collect();
    let slot = dst[i].slot_mut(xf);
    for donor in donors {
        let j = donor.kind.index();
        if slot.var_weight(j) != 0.0 {
            continue;
        }
        let var = slot.vars.entry(j).or_insert_with(|| Var::absent(donor.kind));
        if j == VAR_FLOWER {
            // flam3 copies the petals only (its copy of `flower_holes` is a
            // second copy of the petals).
            if let Some(pos) = donor.kind.params().iter().position(|p| p.name == "flower_petals") {
                var.set_param("flower_petals", donor.param(pos));
            }
        } else {
            var.params = donor.params;
        }
    }
}

/// Shapes padding xform `xf` of control point `i` after the corresponding
/// xforms of its neighbours (that are not padding themselves).
fn shape_padding(dst: &mut [WorkFlame<'_>], i: usize, xf: usize) {
    let n = dst.len();
    let neighbours: Vec<usize> =
        [i.checked_sub(1), Some(i + 1)].into_iter().flatten().filter(|&m| m < n && !dst[m].slot(xf).padding).collect();
    let has = |dst: &[WorkFlame<'_>], var: usize| -> usize {
        neighbours.iter().filter(|&&m| dst[m].slot(xf).var_weight(var) > 0.0).count()
    };
    let log_here = if i == 0 { dst[0].flame.affine_interpolation } else { dst[i - 1].flame.affine_interpolation }
        == AffineInterpolation::Log;

    // Set below: (variation, weight) pairs and the affine map.
    let hole = log_here && HOLE_VARIATIONS.iter().any(|&v| has(dst, v) > 0);
    let neutral: Vec<(&NeutralVariation, usize)> =
        NEUTRAL_VARIATIONS.iter().map(|nv| (nv, has(dst, nv.index))).filter(|&(_, count)| count > 0).collect();
    let fan_rings: Vec<(usize, usize)> =
        [VAR_FAN, VAR_RINGS].into_iter().map(|v| (v, has(dst, v))).filter(|&(_, count)| count > 0).collect();

    let slot = dst[i].slot_mut(xf);
    slot.vars.remove(&VAR_LINEAR);
    let linear = VariationKind::from_index(VAR_LINEAR).expect("linear exists");
    if hole {
        slot.vars.insert(VAR_LINEAR, Var { kind: linear, weight: -1.0, params: Vec::new() });
        slot.coefs = Affine { c: [[-1.0, 0.0], [0.0, -1.0], [0.0, 0.0]] };
        return;
    }
    let found = if !neutral.is_empty() {
        // Each matching neighbour sets the weight to 1 again; the count
        // does not matter after normalisation.
        for (nv, _) in &neutral {
            let kind = VariationKind::from_index(nv.index).expect("flam3 variation");
            let var = slot.vars.entry(nv.index).or_insert_with(|| Var::absent(kind));
            var.weight = 1.0;
            for &(name, value) in nv.params {
                var.set_param(name, value);
            }
        }
        true
    } else if !fan_rings.is_empty() {
        for &(v, _) in &fan_rings {
            let kind = VariationKind::from_index(v).expect("flam3 variation");
            slot.vars.entry(v).or_insert_with(|| Var::absent(kind)).weight = 1.0;
        }
        slot.coefs = Affine { c: [[0.0, 1.0], [1.0, 0.0], [0.0, 0.0]] };
        true
    } else {
        false
    };
    if found {
        let total: f64 = slot.vars.values().map(|v| v.weight).sum();
        for v in slot.vars.values_mut() {
            v.weight /= total;
        }
    } else {
        slot.vars.insert(VAR_LINEAR, Var { kind: linear, weight: 1.0, params: Vec::new() });
    }
}
