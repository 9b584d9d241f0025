//! flam3 3.1.1's variation names, in its order, and the parameter
//! attributes each one reads with their defaults (flam3's
//! `initialize_xforms`; names as its XML reader spells them); then the
//! plugin variations of Fractorium and Apophysis warpmc implements, with
//! Fractorium's names and defaults; then the `pre_` and `post_` forms of
//! all of them (their parameters prefixed the same way, as Fractorium
//! writes them).

use std::collections::HashMap;
use std::f64::consts::PI;
use std::sync::OnceLock;

use super::{ParamSpec, Stage, VARIATION_COUNT};

const fn p(name: &'static str, default: f64) -> ParamSpec {
    ParamSpec { name, default }
}

/// Name and parameters of every variation, indexed by flam3's number.
pub(super) const TABLE: [(&str, &[ParamSpec]); VARIATION_COUNT] = [
    // 0
    ("linear", &[]),
    ("sinusoidal", &[]),
    ("spherical", &[]),
    ("swirl", &[]),
    ("horseshoe", &[]),
    ("polar", &[]),
    ("handkerchief", &[]),
    ("heart", &[]),
    ("disc", &[]),
    ("spiral", &[]),
    // 10
    ("hyperbolic", &[]),
    ("diamond", &[]),
    ("ex", &[]),
    ("julia", &[]),
    ("bent", &[]),
    ("waves", &[]),
    ("fisheye", &[]),
    ("popcorn", &[]),
    ("exponential", &[]),
    ("power", &[]),
    // 20
    ("cosine", &[]),
    ("rings", &[]),
    ("fan", &[]),
    ("blob", &[p("blob_low", 0.0), p("blob_high", 1.0), p("blob_waves", 1.0)]),
    ("pdj", &[p("pdj_a", 0.0), p("pdj_b", 0.0), p("pdj_c", 0.0), p("pdj_d", 0.0)]),
    ("fan2", &[p("fan2_x", 0.0), p("fan2_y", 0.0)]),
    ("rings2", &[p("rings2_val", 0.0)]),
    ("eyefish", &[]),
    ("bubble", &[]),
    ("cylinder", &[]),
    // 30
    ("perspective", &[p("perspective_angle", 0.0), p("perspective_dist", 0.0)]),
    ("noise", &[]),
    ("julian", &[p("julian_power", 1.0), p("julian_dist", 1.0)]),
    ("juliascope", &[p("juliascope_power", 1.0), p("juliascope_dist", 1.0)]),
    ("blur", &[]),
    ("gaussian_blur", &[]),
    ("radial_blur", &[p("radial_blur_angle", 0.0)]),
    ("pie", &[p("pie_slices", 6.0), p("pie_rotation", 0.0), p("pie_thickness", 0.5)]),
    ("ngon", &[p("ngon_sides", 5.0), p("ngon_power", 3.0), p("ngon_circle", 1.0), p("ngon_corners", 2.0)]),
    ("curl", &[p("curl_c1", 1.0), p("curl_c2", 0.0)]),
    // 40
    ("rectangles", &[p("rectangles_x", 1.0), p("rectangles_y", 1.0)]),
    ("arch", &[]),
    ("tangent", &[]),
    ("square", &[]),
    ("rays", &[]),
    ("blade", &[]),
    ("secant2", &[]),
    ("twintrian", &[]),
    ("cross", &[]),
    ("disc2", &[p("disc2_rot", 0.0), p("disc2_twist", 0.0)]),
    // 50
    (
        "super_shape",
        &[
            p("super_shape_rnd", 0.0),
            p("super_shape_m", 0.0),
            p("super_shape_n1", 1.0),
            p("super_shape_n2", 1.0),
            p("super_shape_n3", 1.0),
            p("super_shape_holes", 0.0),
        ],
    ),
    ("flower", &[p("flower_petals", 0.0), p("flower_holes", 0.0)]),
    ("conic", &[p("conic_eccentricity", 1.0), p("conic_holes", 0.0)]),
    ("parabola", &[p("parabola_height", 0.0), p("parabola_width", 0.0)]),
    ("bent2", &[p("bent2_x", 1.0), p("bent2_y", 1.0)]),
    ("bipolar", &[p("bipolar_shift", 0.0)]),
    ("boarders", &[]),
    ("butterfly", &[]),
    ("cell", &[p("cell_size", 1.0)]),
    ("cpow", &[p("cpow_r", 1.0), p("cpow_i", 0.0), p("cpow_power", 1.0)]),
    // 60
    ("curve", &[p("curve_xamp", 0.0), p("curve_yamp", 0.0), p("curve_xlength", 1.0), p("curve_ylength", 1.0)]),
    ("edisc", &[]),
    ("elliptic", &[]),
    ("escher", &[p("escher_beta", 0.0)]),
    ("foci", &[]),
    (
        "lazysusan",
        &[
            p("lazysusan_spin", 0.0),
            p("lazysusan_space", 0.0),
            p("lazysusan_twist", 0.0),
            p("lazysusan_x", 0.0),
            p("lazysusan_y", 0.0),
        ],
    ),
    ("loonie", &[]),
    ("pre_blur", &[]),
    ("modulus", &[p("modulus_x", 0.0), p("modulus_y", 0.0)]),
    (
        "oscilloscope",
        &[p("oscope_separation", 1.0), p("oscope_frequency", PI), p("oscope_amplitude", 1.0), p("oscope_damping", 0.0)],
    ),
    // 70
    ("polar2", &[]),
    ("popcorn2", &[p("popcorn2_x", 0.0), p("popcorn2_y", 0.0), p("popcorn2_c", 0.0)]),
    ("scry", &[]),
    (
        "separation",
        &[p("separation_x", 0.0), p("separation_xinside", 0.0), p("separation_y", 0.0), p("separation_yinside", 0.0)],
    ),
    ("split", &[p("split_xsize", 0.0), p("split_ysize", 0.0)]),
    ("splits", &[p("splits_x", 0.0), p("splits_y", 0.0)]),
    ("stripes", &[p("stripes_space", 0.0), p("stripes_warp", 0.0)]),
    ("wedge", &[p("wedge_angle", 0.0), p("wedge_hole", 0.0), p("wedge_count", 1.0), p("wedge_swirl", 0.0)]),
    (
        "wedge_julia",
        &[
            p("wedge_julia_angle", 0.0),
            p("wedge_julia_count", 1.0),
            p("wedge_julia_power", 1.0),
            p("wedge_julia_dist", 0.0),
        ],
    ),
    (
        "wedge_sph",
        &[p("wedge_sph_angle", 0.0), p("wedge_sph_count", 1.0), p("wedge_sph_hole", 0.0), p("wedge_sph_swirl", 0.0)],
    ),
    // 80
    ("whorl", &[p("whorl_inside", 0.0), p("whorl_outside", 0.0)]),
    ("waves2", &[p("waves2_scalex", 0.0), p("waves2_scaley", 0.0), p("waves2_freqx", 0.0), p("waves2_freqy", 0.0)]),
    ("exp", &[]),
    ("log", &[]),
    ("sin", &[]),
    ("cos", &[]),
    ("tan", &[]),
    ("sec", &[]),
    ("csc", &[]),
    ("cot", &[]),
    // 90
    ("sinh", &[]),
    ("cosh", &[]),
    ("tanh", &[]),
    ("sech", &[]),
    ("csch", &[]),
    ("coth", &[]),
    ("auger", &[p("auger_freq", 1.0), p("auger_weight", 0.5), p("auger_sym", 0.0), p("auger_scale", 1.0)]),
    ("flux", &[p("flux_spread", 0.0)]),
    (
        "mobius",
        &[
            p("mobius_re_a", 0.0),
            p("mobius_re_b", 0.0),
            p("mobius_re_c", 0.0),
            p("mobius_re_d", 0.0),
            p("mobius_im_a", 0.0),
            p("mobius_im_b", 0.0),
            p("mobius_im_c", 0.0),
            p("mobius_im_d", 0.0),
        ],
    ),
];

/// The plugin variations beyond flam3's, indexed from [`VARIATION_COUNT`]:
/// name and parameters (Fractorium's names and defaults).
pub(super) const EXTRA: [(&str, &[ParamSpec]); 39] = [
    // 99: Fractorium's flatten: zeroes z, so in the plane it adds nothing
    // (and its pre_/post_ forms leave the point alone).
    ("flatten", &[]),
    // 100: Fractorium's crop: points outside the rectangle are moved back
    // in (or to the origin with crop_zero).
    (
        "crop",
        &[
            p("crop_left", -1.0),
            p("crop_top", -1.0),
            p("crop_right", 1.0),
            p("crop_bottom", 1.0),
            p("crop_scatter_area", 0.0),
            p("crop_zero", 0.0),
        ],
    ),
    // 101: Apophysis 7X's linear3D: linear, with z kept (linear in the plane).
    ("linear3D", &[]),
    // 102: crackle (Apophysis plugin, in Fractorium): Voronoi cells.
    (
        "crackle",
        &[
            p("crackle_cellsize", 1.0),
            p("crackle_power", 0.2),
            p("crackle_distort", 0.0),
            p("crackle_scale", 1.0),
            p("crackle_z", 0.0),
        ],
    ),
    // 103 …: Fractorium's (plugin_blur.rs, plugin_map.rs, plugin_tile.rs).
    ("gaussian", &[]),
    ("sineblur", &[p("sineblur_power", 1.0)]),
    ("blur_linear", &[p("blur_linear_length", 0.0), p("blur_linear_angle", 0.0)]),
    ("blur_zoom", &[p("blur_zoom_length", 0.0), p("blur_zoom_x", 0.0), p("blur_zoom_y", 0.0)]),
    ("blur_circle", &[]),
    ("circleblur", &[]),
    ("rblur", &[p("rblur_strength", 1.0), p("rblur_offset", 1.0), p("rblur_center_x", 0.0), p("rblur_center_y", 0.0)]),
    // Fractorium's Mobius, apart from flam3's mobius.
    (
        "Mobius",
        &[
            p("Mobius_Re_A", 1.0),
            p("Mobius_Im_A", 0.0),
            p("Mobius_Re_B", 0.0),
            p("Mobius_Im_B", 0.0),
            p("Mobius_Re_C", 0.0),
            p("Mobius_Im_C", 0.0),
            p("Mobius_Re_D", 1.0),
            p("Mobius_Im_D", 0.0),
        ],
    ),
    ("hemisphere", &[]),
    ("unpolar", &[]),
    ("epispiral", &[p("epispiral_n", 6.0), p("epispiral_thickness", 0.0), p("epispiral_holes", 1.0)]),
    ("twoface", &[]),
    ("glynnia", &[]),
    ("wdisc", &[]),
    ("hypertile", &[p("hypertile_p", 3.0), p("hypertile_q", 7.0), p("hypertile_n", 0.0)]),
    ("hypertile1", &[p("hypertile1_p", 3.0), p("hypertile1_q", 7.0)]),
    ("hypertile2", &[p("hypertile2_p", 3.0), p("hypertile2_q", 7.0)]),
    (
        "bTransform",
        &[
            p("bTransform_rotate", 0.0),
            p("bTransform_power", 1.0),
            p("bTransform_move", 0.0),
            p("bTransform_split", 0.0),
        ],
    ),
    ("eJulia", &[p("eJulia_power", 2.0)]),
    (
        "pow_block",
        &[
            p("pow_block_numerator", 3.0),
            p("pow_block_denominator", 2.0),
            p("pow_block_root", 1.0),
            p("pow_block_correctn", 1.0),
            p("pow_block_correctd", 1.0),
        ],
    ),
    (
        "barycentroid",
        &[p("barycentroid_a", 1.0), p("barycentroid_b", 0.0), p("barycentroid_c", 0.0), p("barycentroid_d", 1.0)],
    ),
    (
        "smartshape",
        &[
            p("smartshape_power", 4.0),
            p("smartshape_roundstr", 0.0),
            p("smartshape_roundwidth", 1.0),
            p("smartshape_distortion", 1.0),
            p("smartshape_compensation", 0.0),
        ],
    ),
    (
        "y",
        &[
            p("y_hypergon", 0.0),
            p("y_hypergon_n", 4.0),
            p("y_hypergon_r", 1.0),
            p("y_star", 0.0),
            p("y_star_n", 5.0),
            p("y_star_slope", 2.0),
            p("y_lituus", 0.0),
            p("y_lituus_a", 1.0),
            p("y_super", 0.0),
            p("y_super_m", 1.0),
            p("y_super_n1", 1.0),
            p("y_super_n2", 1.0),
            p("y_super_n3", 1.0),
        ],
    ),
    (
        "bwraps",
        &[
            p("bwraps_cellsize", 1.0),
            p("bwraps_space", 0.0),
            p("bwraps_gain", 1.0),
            p("bwraps_inner_twist", 0.0),
            p("bwraps_outer_twist", 0.0),
        ],
    ),
    ("gnarly", &[p("gnarly_cellsize", 1.0), p("gnarly_twist", 1.0)]),
    ("hexes", &[p("hexes_cellsize", 1.0), p("hexes_power", 1.0), p("hexes_rotate", 0.166), p("hexes_scale", 1.0)]),
    (
        "Voron",
        &[p("Voron_K", 0.99), p("Voron_Step", 0.25), p("Voron_Num", 1.0), p("Voron_XSeed", 3.0), p("Voron_YSeed", 7.0)],
    ),
    (
        "shredlin",
        &[
            p("shredlin_xdistance", 1.0),
            p("shredlin_xwidth", 0.5),
            p("shredlin_ydistance", 1.0),
            p("shredlin_ywidth", 0.5),
        ],
    ),
    ("tile_log", &[p("tile_log_spread", 1.0)]),
    ("tile_hlp", &[p("tile_hlp_width", 1.0)]),
    ("cropn", &[p("cropn_power", 5.0), p("cropn_radius", 1.0), p("cropn_scatterdist", 0.0), p("cropn_zero", 0.0)]),
    ("bcircle", &[p("bcircle_scale", 1.0), p("bcircle_borderwidth", 0.0)]),
    // The two that replace what the ordinary variations before them (in
    // this order) contributed: last, as Fractorium's files list them.
    (
        "circlecrop",
        &[
            p("circlecrop_radius", 1.0),
            p("circlecrop_x", 0.0),
            p("circlecrop_y", 0.0),
            p("circlecrop_scatter_area", 0.0),
            p("circlecrop_zero", 1.0),
        ],
    ),
    ("mirror_x", &[]),
    // Fractorium's post-only smartcrop: a `post_` variation with no
    // ordinary form (its parameters named as Fractorium writes them).
    (
        "post_smartcrop",
        &[
            p("post_smartcrop_power", 4.0),
            p("post_smartcrop_radius", 1.0),
            p("post_smartcrop_roundstr", 0.0),
            p("post_smartcrop_roundwidth", 1.0),
            p("post_smartcrop_distortion", 1.0),
            p("post_smartcrop_edge", 0.0),
            p("post_smartcrop_scatter", 0.0),
            p("post_smartcrop_offset", 0.0),
            p("post_smartcrop_rotation", 0.0),
            p("post_smartcrop_cropmode", 1.0),
            p("post_smartcrop_static", 1.0),
        ],
    ),
];

/// Parameters Fractorium adds to flam3's variations, after flam3's own:
/// log's `log_base` (flam3's log is base e).
const FRACTORIUM_ADDED: [(&str, ParamSpec); 1] = [("log", p("log_base", std::f64::consts::E))];

/// Ordinary variations whose `pre_`/`post_` forms add their result to the
/// point instead of replacing it (the ones Fractorium gives its "sum"
/// assignment: blurs and shapes that ignore the point; crackle, which
/// ignores it too, replaces the point there).
const SUMMED: [&str; 8] = ["blur", "gaussian_blur", "pie", "arch", "square", "sineblur", "circleblur", "blur_circle"];

/// One variation of the full list.
#[derive(Debug)]
pub(super) struct Entry {
    pub(super) name: &'static str,
    pub(super) params: &'static [ParamSpec],
    pub(super) stage: Stage,
    /// Index of the ordinary variation (itself for an ordinary one).
    pub(super) base: u16,
    /// Whether a `pre_`/`post_` form adds its result to the point.
    pub(super) summed: bool,
    /// How many of `params` flam3 reads (for flam3's variations; the rest
    /// are Fractorium's additions, [`FRACTORIUM_ADDED`]).
    pub(super) flam3_params: usize,
}

/// The full list and its name lookups.
struct Known {
    entries: Vec<Entry>,
    names: HashMap<&'static str, usize>,
    params: HashMap<&'static str, (usize, usize)>,
}

fn build() -> Known {
    // flam3's variations with Fractorium's added parameters after flam3's.
    let flam3 = TABLE.iter().map(|&(name, params)| {
        let added: Vec<ParamSpec> = FRACTORIUM_ADDED.iter().filter(|(n, _)| *n == name).map(|(_, q)| *q).collect();
        if added.is_empty() {
            return (name, params);
        }
        let all: &'static [ParamSpec] = Box::leak([params, &added].concat().into_boxed_slice());
        (name, all)
    });
    let base: Vec<(&'static str, &'static [ParamSpec])> = flam3.chain(EXTRA.iter().copied()).collect();
    let mut entries: Vec<Entry> = base
        .iter()
        .enumerate()
        .map(|(i, &(name, params))| Entry {
            name,
            params,
            // A `post_` name in the table is a post-only variation.
            stage: if name.starts_with("post_") { Stage::Post } else { Stage::Regular },
            base: i as u16,
            summed: false,
            flam3_params: if i < VARIATION_COUNT { TABLE[i].1.len() } else { 0 },
        })
        .collect();
    for (stage, prefix) in [(Stage::Pre, "pre_"), (Stage::Post, "post_")] {
        for (i, &(name, params)) in base.iter().enumerate() {
            // flam3's own pre_blur keeps its name (blur has no pre_ form)
            // and has no forms itself, nor has a post-only variation.
            let full = format!("{prefix}{name}");
            if name == "pre_blur" || name.starts_with("post_") || base.iter().any(|(n, _)| *n == full) {
                continue;
            }
            // Built once per process; the names live as long as the table.
            let name: &'static str = Box::leak(full.into_boxed_str());
            let params: &'static [ParamSpec] = Box::leak(
                params
                    .iter()
                    .map(|q| ParamSpec { name: Box::leak(format!("{prefix}{}", q.name).into_boxed_str()), ..*q })
                    .collect::<Vec<_>>()
                    .into_boxed_slice(),
            );
            let summed = SUMMED.contains(&base[i].0);
            entries.push(Entry { name, params, stage, base: i as u16, summed, flam3_params: 0 });
        }
    }
    let names = entries.iter().enumerate().map(|(i, e)| (e.name, i)).collect();
    let mut params = HashMap::new();
    for (k, e) in entries.iter().enumerate() {
        for (i, q) in e.params.iter().enumerate() {
            params.entry(q.name).or_insert((k, i));
        }
    }
    Known { entries, names, params }
}

fn table() -> &'static Known {
    static KNOWN: OnceLock<Known> = OnceLock::new();
    KNOWN.get_or_init(build)
}

/// Every variation: flam3's 99, [`EXTRA`], then the `pre_` and `post_` forms.
pub(super) fn known() -> &'static [Entry] {
    &table().entries
}

/// The index of the variation called `name`.
pub(super) fn by_name(name: &str) -> Option<usize> {
    table().names.get(name).copied()
}

/// The variation and the position of the parameter called `name`.
pub(super) fn param_by_name(name: &str) -> Option<(usize, usize)> {
    table().params.get(name).copied()
}
