//! The variations beyond flam3's (Fractorium's crop, flatten, linear3D,
//! crackle and the `pre_`/`post_` forms of any variation) against values computed
//! independently from their formulas by `data/plugin_variations/
//! reference.py`, with the same uniforms.

use warpmc_flame::genome::Affine;
use warpmc_flame::variations::{Stage, VariationKind, VariationSet, VariationSpec};
use warpmc_rng::RandomSource;

/// The uniforms of reference.py's `U`, handed out in order.
struct Fixed(usize);

const U: [f64; 8] = [0.125, 0.625, 0.3, 0.9, 0.45, 0.05, 0.7, 0.2];

impl RandomSource for Fixed {
    fn next_u32(&mut self) -> u32 {
        unreachable!("the cases draw only uniforms")
    }

    fn next_f64(&mut self) -> f64 {
        let u = U[self.0 % U.len()];
        self.0 += 1;
        u
    }
}

/// `name` with weight `w` and the parameters `params` by name (others at
/// their defaults).
fn spec(name: &str, w: f64, params: &[(&str, f64)]) -> VariationSpec {
    let kind = VariationKind::from_name(name).unwrap_or_else(|| panic!("no variation {name}"));
    let mut s = VariationSpec::new(kind, w);
    for &(p, v) in params {
        let i = kind.params().iter().position(|q| q.name == p).unwrap_or_else(|| panic!("{name} has no {p}"));
        s.params[i] = v;
    }
    s
}

/// crop's six parameters under `prefix` (`crop_`, `pre_crop_`, `post_crop_`).
fn crop(prefix: &str, v: [f64; 6]) -> Vec<(String, f64)> {
    ["left", "top", "right", "bottom", "scatter_area", "zero"]
        .iter()
        .zip(v)
        .map(|(n, x)| (format!("{prefix}{n}"), x))
        .collect()
}

fn crop_spec(form: &str, w: f64, v: [f64; 6]) -> VariationSpec {
    let named = crop(&format!("{form}_"), v);
    let params: Vec<(&str, f64)> = named.iter().map(|(n, x)| (n.as_str(), *x)).collect();
    spec(form, w, &params)
}

/// reference.py's output.
const EXPECTED: [(&str, f64, f64); 15] = [
    ("crop inside", 0.375, -1.125),
    ("crop outside to the edge", 1.0, -2.0),
    ("crop outside scattered", -1.875, 2.75),
    ("crop outside to zero", -1.5, 0.25),
    ("flatten adds nothing", 0.15, -0.35),
    ("linear3D", 0.375, -0.875),
    ("pre_disc then linear", 0.711801547429459, -0.7655586065420813),
    ("pre_gaussian_blur then bubble", 0.6028024641170249, -0.27220816961525796),
    ("pre_crop alone passes", 0.3, -2.0),
    ("bipolar then post_crop", 1.596915323362721, -1.0),
    ("pre_crop, spherical, post_disc", -0.07858101815629445, -0.63161481045268),
    ("crackle on a regular grid", -0.18970733608127932, 0.27221155771153566),
    ("crackle distorted", -0.19073423072582774, 0.26515548251035104),
    ("crackle, other cells", -0.12887475640788193, 0.17004591368748725),
    ("pre_crackle sums", 0.11037793734385551, -0.36971933559360554),
];

/// crackle's five parameters under `form` (`crackle`, `pre_crackle`, …).
fn crackle(form: &str, w: f64, v: [f64; 5]) -> VariationSpec {
    let named: Vec<(String, f64)> =
        ["cellsize", "power", "distort", "scale", "z"].iter().zip(v).map(|(n, x)| (format!("{form}_{n}"), x)).collect();
    let params: Vec<(&str, f64)> = named.iter().map(|(n, x)| (n.as_str(), *x)).collect();
    spec(form, w, &params)
}

/// reference.py's cases: the variations (in the order a genome lists them)
/// and the point.
fn cases() -> Vec<(Vec<VariationSpec>, (f64, f64))> {
    vec![
        (vec![crop_spec("crop", 0.75, [-1.0, -2.0, 1.0, 2.0, 0.0, 0.0])], (0.5, -1.5)),
        (vec![crop_spec("crop", 1.0, [1.0, 2.0, -1.0, -2.0, 0.0, 0.0])], (3.0, -5.0)),
        (vec![crop_spec("crop", 2.0, [-1.0, -2.0, 1.0, 2.0, 0.5, 0.0])], (-3.0, 2.5)),
        (vec![crop_spec("crop", 2.0, [-1.0, -2.0, 1.0, 2.0, 0.5, 1.0]), spec("linear", 0.5, &[])], (-3.0, 0.5)),
        (vec![spec("flatten", 3.0, &[]), spec("linear", 0.5, &[])], (0.3, -0.7)),
        (vec![spec("linear3D", 1.25, &[])], (0.3, -0.7)),
        (vec![spec("linear", 1.5, &[]), spec("pre_disc", 0.8, &[])], (0.3, -0.7)),
        (vec![spec("pre_gaussian_blur", 2.0, &[]), spec("bubble", 1.0, &[])], (0.3, -0.7)),
        (vec![crop_spec("pre_crop", 1.0, [-2.0, -2.0, 2.0, 2.0, 0.0, 0.0])], (0.3, -2.7)),
        (
            vec![
                spec("bipolar", 6.0, &[("bipolar_shift", -0.137)]),
                crop_spec("post_crop", 1.0, [-1000.0, -1.0, 1000.0, 1.0, 0.0, 0.0]),
            ],
            (0.4, 0.1),
        ),
        (
            vec![
                spec("post_disc", 1.0, &[]),
                crop_spec("pre_crop", 1.0, [-0.5, -0.5, 0.5, 0.5, 1.0, 0.0]),
                spec("spherical", 0.5, &[]),
            ],
            (0.9, -0.2),
        ),
        (vec![crackle("crackle", 1.0, [0.4, -0.4, 0.0, 0.6, 0.6])], (5.0, 5.0)),
        (vec![crackle("crackle", 1.0, [0.4, -0.4, 0.2, 0.6, 0.6])], (5.0, 5.0)),
        (vec![crackle("crackle", 0.7, [0.15, 0.3, 0.9, 1.5, -2.0])], (5.0, 5.0)),
        (vec![spec("linear", 1.0, &[]), crackle("pre_crackle", 0.5, [1.0, 0.2, 0.5, 1.0, 0.0])], (0.25, -0.5)),
    ]
}

#[test]
fn plugin_variations_match_independent_values() {
    for ((specs, (x, y)), (name, ex, ey)) in cases().into_iter().zip(EXPECTED) {
        let set = VariationSet::new(&specs, &Affine::IDENTITY);
        let (gx, gy) = set.apply(x, y, &mut Fixed(0));
        let tol = 1e-13 * (1.0 + ex.abs().max(ey.abs()));
        assert!((gx - ex).abs() <= tol && (gy - ey).abs() <= tol, "{name}: got ({gx}, {gy}), expected ({ex}, {ey})");
    }
}

#[test]
fn forms_are_named_and_staged_as_fractorium_writes_them() {
    let pre = VariationKind::from_name("pre_crop").unwrap();
    assert_eq!(pre.stage(), Stage::Pre);
    assert_eq!(pre.base().name(), "crop");
    assert_eq!(pre.params()[0].name, "pre_crop_left");
    assert!(!pre.is_flam3());
    let post = VariationKind::from_name("post_julian").unwrap();
    assert_eq!((post.stage(), post.base().name()), (Stage::Post, "julian"));
    assert_eq!(warpmc_flame::variations::param_owner("post_julian_power"), Some((post, 0)));
    // flam3's pre_blur keeps its meaning; blur has no pre_ form of its own.
    assert_eq!(VariationKind::from_name("pre_blur"), Some(VariationKind::PRE_BLUR));
    assert_eq!(VariationKind::PRE_BLUR.stage(), Stage::Regular);
    assert!(VariationKind::from_name("pre_pre_blur").is_none());
    assert_eq!(VariationKind::from_name("post_blur").map(|k| k.stage()), Some(Stage::Post));
    for k in VariationKind::known() {
        assert_eq!(VariationKind::from_name(k.name()), Some(k), "{}", k.name());
        assert_eq!(k.is_flam3(), k.index() < warpmc_flame::variations::VARIATION_COUNT);
    }
}
