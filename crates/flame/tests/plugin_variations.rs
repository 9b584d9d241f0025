//! The variations beyond flam3's (Fractorium's crop, flatten, linear3D,
//! crackle, its blurs, maps, tilings and crops, and the `pre_`/`post_`
//! forms of any variation) against values computed independently from
//! their formulas by `data/plugin_variations/reference.py`, with the same
//! random numbers. That script writes the cases and the values it expects
//! to `data/plugin_variations/cases.txt`, which this test reads.

use warpmc_flame::genome::Affine;
use warpmc_flame::variations::{Stage, VariationKind, VariationSet, VariationSpec};
use warpmc_rng::RandomSource;

/// The uniforms of reference.py's `U` and the words of its `W`, each
/// handed out in order.
struct Fixed {
    uniforms: usize,
    words: usize,
}

const U: [f64; 8] = [0.125, 0.625, 0.3, 0.9, 0.45, 0.05, 0.7, 0.2];
const W: [u32; 6] = [0x9E37_79B9, 0x1234_5678, 0xDEAD_BEEF, 0x0000_0001, 0xFFFF_FFFE, 0x7F4A_7C15];

impl RandomSource for Fixed {
    fn next_u32(&mut self) -> u32 {
        let w = W[self.words % W.len()];
        self.words += 1;
        w
    }

    fn next_f64(&mut self) -> f64 {
        let u = U[self.uniforms % U.len()];
        self.uniforms += 1;
        u
    }
}

/// One case of cases.txt.
struct Case {
    name: String,
    specs: Vec<VariationSpec>,
    point: (f64, f64),
    expect: (f64, f64),
}

fn number(s: &str, line: &str) -> f64 {
    s.parse().unwrap_or_else(|e| panic!("cases.txt: {s:?} in {line:?}: {e}"))
}

fn cases() -> Vec<Case> {
    let text = include_str!("data/plugin_variations/cases.txt");
    let mut out: Vec<Case> = Vec::new();
    for line in text.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let (key, rest) = line.split_once(' ').unwrap_or_else(|| panic!("cases.txt: {line:?}"));
        if key == "case" {
            out.push(Case { name: rest.to_string(), specs: Vec::new(), point: (0.0, 0.0), expect: (0.0, 0.0) });
            continue;
        }
        let case = out.last_mut().expect("cases.txt starts with a case");
        let words: Vec<&str> = rest.split_whitespace().collect();
        match key {
            "var" => {
                let kind = VariationKind::from_name(words[0]).unwrap_or_else(|| panic!("no variation {}", words[0]));
                let mut spec = VariationSpec::new(kind, number(words[1], line));
                for assignment in &words[2..] {
                    let (name, value) = assignment.split_once('=').unwrap();
                    let i = kind.params().iter().position(|q| q.name == name);
                    let i = i.unwrap_or_else(|| panic!("{} has no parameter {name}", words[0]));
                    spec.params[i] = number(value, line);
                }
                case.specs.push(spec);
            }
            "point" => case.point = (number(words[0], line), number(words[1], line)),
            "expect" => case.expect = (number(words[0], line), number(words[1], line)),
            _ => panic!("cases.txt: {line:?}"),
        }
    }
    out
}

#[test]
fn plugin_variations_match_independent_values() {
    let cases = cases();
    assert!(cases.len() >= 90, "{} cases", cases.len());
    for c in cases {
        let set = VariationSet::new(&c.specs, &Affine::IDENTITY);
        let (gx, gy) = set.apply(c.point.0, c.point.1, &mut Fixed { uniforms: 0, words: 0 });
        let (ex, ey) = c.expect;
        let tol = 1e-13 * (1.0 + ex.abs().max(ey.abs()));
        let close = |g: f64, e: f64| (e.is_nan() && g.is_nan()) || (g - e).abs() <= tol;
        assert!(close(gx, ex) && close(gy, ey), "{}: got ({gx}, {gy}), expected ({ex}, {ey})", c.name);
    }
}

/// Every variation warpmc adds to flam3's (a post-only one included) has
/// cases here.
#[test]
fn every_plugin_variation_has_cases() {
    let cases = cases();
    let named: std::collections::HashSet<&str> =
        cases.iter().flat_map(|c| c.specs.iter().map(|s| s.kind.base().name())).collect();
    let missing: Vec<&str> = VariationKind::known()
        .filter(|k| !k.is_flam3() && k.base() == *k)
        .map(|k| k.name())
        .filter(|n| !named.contains(n))
        .collect();
    assert!(missing.is_empty(), "no reference values for {missing:?}");
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
    // Fractorium's post-only smartcrop: a post_ variation of its own.
    let crop = VariationKind::from_name("post_smartcrop").unwrap();
    assert_eq!((crop.stage(), crop.base()), (Stage::Post, crop));
    assert_eq!(crop.params()[9].name, "post_smartcrop_cropmode");
    assert!(
        VariationKind::from_name("smartcrop").is_none() && VariationKind::from_name("pre_post_smartcrop").is_none()
    );
    for k in VariationKind::known() {
        assert_eq!(VariationKind::from_name(k.name()), Some(k), "{}", k.name());
        assert_eq!(k.is_flam3(), k.index() < warpmc_flame::variations::VARIATION_COUNT);
    }
}
