//! flam3 3.1.1's variation names, in its order, and the parameter
//! attributes each one reads with their defaults (flam3's
//! `initialize_xforms`; names as its XML reader spells them).

use super::{ParamSpec, VARIATION_COUNT};
use std::f64::consts::PI;

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
