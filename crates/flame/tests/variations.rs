//! The 99 variations against flam3 3.1.1 itself.
//!
//! `tests/data/variations/flam3_vectors.txt` is written by
//! `tools/flam3_variation_vectors.c` (its header says how to regenerate
//! it), a program linked with flam3's own sources. It records:
//!
//! - flam3's variation names, in its order (`N` lines);
//! - the parameter attributes flam3's genome writer prints for each
//!   variation, with its defaults (`P` lines, `%g` precision);
//! - about 3200 calls of flam3's `apply_xform` (`V` lines): each variation
//!   alone with flam3's defaults and with eight styles of parameters
//!   (random, integer, zero, large, half zero), at random points through
//!   random affine maps; at the origin, on the axes, at tiny points, on the
//!   diagonals and at `|p| = w`; random ones also with given uniforms (0,
//!   ¼, ½, ¾, 1 − 2⁻¹⁰); then 250 xforms mixing two to five variations
//!   (pre_blur among them a third of the time), listed in random order, so
//!   `VariationSet` must sort them into flam3's order. The xform was given
//!   to flam3 as XML, so the parameters are named by flam3's parser's
//!   attribute names. flam3's random numbers were replaced by a stream of
//!   32-bit words turned into uniforms exactly as `RandomSource::next_f64`
//!   does, and the words each call consumed are recorded; here they are
//!   replayed, so random variations are compared exactly too, and a
//!   variation that draws more, fewer or in another order fails.
//!
//! Where flam3 judged its result a bad value (NaN or beyond ±1e10) ours
//! must be bad as well.

use std::time::Instant;

use warpmc_flame::genome::Affine;
use warpmc_flame::variations::{VARIATION_COUNT, VariationKind, VariationSet, VariationSpec, param_owner};
use warpmc_rng::RandomSource;

const VECTORS: &str = include_str!("data/variations/flam3_vectors.txt");

/// Replays recorded words; running out is a failure (more draws than flam3).
struct Replay {
    words: Vec<u32>,
    at: usize,
}

impl Replay {
    fn new(words: Vec<u32>) -> Self {
        Replay { words, at: 0 }
    }
}

impl RandomSource for Replay {
    fn next_u32(&mut self) -> u32 {
        let w = *self.words.get(self.at).expect("drew more random words than flam3 did");
        self.at += 1;
        w
    }
}

/// Words that `next_f64` turns into exactly `u` (a multiple of 2⁻⁵³).
fn words_for(u: f64) -> [u32; 2] {
    let k = (u * 9_007_199_254_740_992.0) as u64;
    assert_eq!(k as f64 / 9_007_199_254_740_992.0, u, "{u} is not a multiple of 2^-53");
    let x = k << 11;
    [x as u32, (x >> 32) as u32]
}

struct Var {
    kind: VariationKind,
    weight: f64,
    params: Vec<(String, f64)>,
}

struct Case {
    line: usize,
    vars: Vec<Var>,
    coefs: [f64; 6],
    point: (f64, f64),
    words: Vec<u32>,
    /// flam3's result, or None where flam3 found a bad value.
    want: Option<(f64, f64)>,
}

impl Case {
    fn describe(&self) -> String {
        let vars: Vec<String> = self
            .vars
            .iter()
            .map(|v| {
                let ps: Vec<String> = v.params.iter().map(|(n, x)| format!("{n}={x}")).collect();
                format!("{}={} [{}]", v.kind.name(), v.weight, ps.join(" "))
            })
            .collect();
        format!("line {}: {} coefs {:?} at {:?}", self.line, vars.join(", "), self.coefs, self.point)
    }

    fn specs(&self) -> Vec<VariationSpec> {
        self.vars
            .iter()
            .map(|v| {
                let mut spec = VariationSpec::new(v.kind, v.weight);
                for (name, value) in &v.params {
                    let (owner, i) = param_owner(name).unwrap_or_else(|| panic!("flam3 parses {name}; we do not"));
                    assert_eq!(owner, v.kind, "{name} belongs to {}", v.kind.name());
                    spec.params[i] = *value;
                }
                spec
            })
            .collect()
    }
}

fn num(t: &str) -> f64 {
    t.parse().unwrap_or_else(|_| panic!("not a number: {t}"))
}

fn lines(tag: &str) -> impl Iterator<Item = (usize, Vec<&'static str>)> + '_ {
    VECTORS
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.split_whitespace().collect::<Vec<_>>()))
        .filter(move |(_, t)| t[0] == tag)
}

fn cases() -> Vec<Case> {
    lines("V")
        .map(|(line, t)| {
            let mut at = 1;
            let mut next = || {
                at += 1;
                t[at - 1]
            };
            let nvar: usize = next().parse().unwrap();
            let mut vars = Vec::new();
            for _ in 0..nvar {
                let kind = VariationKind::from_index(next().parse().unwrap()).unwrap();
                let weight = num(next());
                let np: usize = next().parse().unwrap();
                let params = (0..np).map(|_| (next().to_string(), num(next()))).collect();
                vars.push(Var { kind, weight, params });
            }
            let coefs = std::array::from_fn(|_| num(next()));
            let point = (num(next()), num(next()));
            let nw: usize = next().parse().unwrap();
            let words = (0..nw).map(|_| next().parse().unwrap()).collect();
            let verdict = next();
            let q = (num(next()), num(next()));
            let want = match verdict {
                "ok" => Some(q),
                "bad" => None,
                v => panic!("line {line}: verdict {v}"),
            };
            Case { line, vars, coefs, point, words, want }
        })
        .collect()
}

fn bad(v: f64) -> bool {
    v.is_nan() || !(-1e10..=1e10).contains(&v)
}

/// Relative agreement to 1e-12 (with an absolute floor of 1e-14 for
/// results that cancel to near zero).
fn close(a: f64, b: f64) -> bool {
    a == b || (a - b).abs() <= 1e-12 * a.abs().max(b.abs()) + 1e-14
}

#[test]
fn every_variation_matches_flam3() {
    let cases = cases();
    assert!(cases.len() > 1500, "only {} vectors", cases.len());
    let mut alone = [0usize; VARIATION_COUNT];
    let mut mixed = [0usize; VARIATION_COUNT];
    let (mut exact, mut within, mut bad_ok) = (0, 0, 0);
    let mut failures = Vec::new();
    for c in &cases {
        for v in &c.vars {
            if c.vars.len() == 1 {
                alone[v.kind.index()] += 1;
            } else {
                mixed[v.kind.index()] += 1;
            }
        }
        let coefs = Affine::from_xml_order(c.coefs);
        let set = VariationSet::new(&c.specs(), &coefs);
        let (tx, ty) = coefs.apply(c.point.0, c.point.1);
        let mut rng = Replay::new(c.words.clone());
        let got = set.apply(tx, ty, &mut rng);
        if rng.at != c.words.len() {
            failures.push(format!("{}: drew {} words, flam3 drew {}", c.describe(), rng.at, c.words.len()));
            continue;
        }
        match c.want {
            Some(want) => {
                if got == want {
                    exact += 1;
                } else if close(got.0, want.0) && close(got.1, want.1) {
                    within += 1;
                } else {
                    failures.push(format!("{}: got {got:?}, flam3 {want:?}", c.describe()));
                }
            }
            None => {
                if bad(got.0) || bad(got.1) {
                    bad_ok += 1;
                } else {
                    failures.push(format!("{}: got {got:?}, flam3 found a bad value", c.describe()));
                }
            }
        }
    }
    println!("{} vectors: {exact} bit-exact, {within} within 1e-12, {bad_ok} bad in both", cases.len());
    assert!(failures.is_empty(), "{} mismatches:\n{}", failures.len(), failures.join("\n"));
    for k in VariationKind::all() {
        let i = k.index();
        if k == VariationKind::PRE_BLUR {
            assert!(mixed[i] >= 50, "pre_blur is mixed into only {} vectors", mixed[i]);
        } else {
            assert!(alone[i] >= 12, "{} has only {} vectors alone", k.name(), alone[i]);
        }
    }
}

#[test]
fn names_and_order_match_flam3() {
    let mut n = 0;
    for (line, t) in lines("N") {
        let i: usize = t[1].parse().unwrap();
        let kind = VariationKind::from_index(i).unwrap();
        assert_eq!(kind.name(), t[2], "line {line}");
        assert_eq!(VariationKind::from_name(t[2]), Some(kind));
        assert_eq!(kind.index(), i);
        n += 1;
    }
    assert_eq!(n, VARIATION_COUNT);
    assert_eq!(VariationKind::all().count(), VARIATION_COUNT);
    for (i, k) in VariationKind::all().enumerate() {
        assert_eq!(k.index(), i);
        assert_eq!(VariationKind::from_name(k.name()), Some(k));
    }
    assert!(VariationKind::all().all(|k| k.is_flam3()));
    // Beyond flam3's 99: the plugin variations and the pre_/post_ forms.
    assert!(!VariationKind::from_index(VARIATION_COUNT).unwrap().is_flam3());
    assert_eq!(VariationKind::from_index(VariationKind::known().count()), None);
    assert_eq!(VariationKind::from_name("synth"), None);
    assert_eq!(VariationKind::from_name("Linear"), None);
    assert_eq!(VariationKind::from_name("pre_blur"), Some(VariationKind::PRE_BLUR));
}

/// The attributes flam3's writer prints for each variation are exactly our
/// parameters (through `param_owner`, which knows flam3's aliases: flam3
/// writes `oscilloscope_*`), with the same defaults to `%g`'s precision.
/// (flam3's writer skips twintrian altogether; it has no parameters.)
#[test]
fn parameters_and_defaults_match_flam3() {
    let mut n = 0;
    for (line, t) in lines("P") {
        let kind = VariationKind::from_index(t[1].parse().unwrap()).unwrap();
        let np: usize = t[2].parse().unwrap();
        assert_eq!(np, kind.flam3_params(), "line {line}: {} parameters", kind.name());
        let mut seen = vec![false; np];
        for k in 0..np {
            let (name, default) = (t[3 + 2 * k], num(t[4 + 2 * k]));
            let (owner, i) = param_owner(name).unwrap_or_else(|| panic!("line {line}: {name} unknown"));
            assert_eq!(owner, kind, "line {line}: {name}");
            assert!(!seen[i], "line {line}: {name} twice");
            seen[i] = true;
            let ours = kind.params()[i].default;
            assert!(
                (ours - default).abs() <= 1e-5 * default.abs().max(1.0),
                "line {line}: {name} defaults to {ours}, flam3 {default}"
            );
        }
        n += 1;
    }
    assert_eq!(n, VARIATION_COUNT);
}

#[test]
fn every_parameter_has_its_owner() {
    let mut count = 0;
    for k in VariationKind::all() {
        for (i, p) in k.params().iter().enumerate() {
            assert_eq!(param_owner(p.name), Some((k, i)), "{}", p.name);
            assert!(p.name.starts_with(k.name()) || k.name() == "oscilloscope", "{}", p.name);
            count += 1;
        }
        assert_eq!(VariationSpec::new(k, 0.5).params, k.params().iter().map(|p| p.default).collect::<Vec<_>>());
    }
    // flam3's 109 and log's log_base, which Fractorium adds.
    assert_eq!(count, 110);
    // flam3's aliases.
    let osc = VariationKind::from_name("oscilloscope").unwrap();
    for s in ["separation", "frequency", "amplitude", "damping"] {
        let owner = param_owner(&format!("oscope_{s}"));
        assert_eq!(owner.unwrap().0, osc);
        assert_eq!(param_owner(&format!("oscilloscope_{s}")), owner);
    }
    assert_eq!(osc.params()[param_owner("oscope_frequency").unwrap().1].default, std::f64::consts::PI);
    for (short, long) in [("Re_A", "mobius_re_a"), ("Im_D", "mobius_im_d"), ("Re_C", "mobius_re_c")] {
        assert_eq!(param_owner(short), param_owner(long));
        assert!(param_owner(short).is_some());
    }
    // Not parameters: unknown names, flam3's derived fields, and amw_amp
    // (flam3 reads it, but no variation of 3.1.1 uses it).
    for name in ["julian_rN", "julian_cn", "crackle_x", "amw_amp", "", "oscilloscope_", "oscope_", "julian"] {
        assert_eq!(param_owner(name), None, "{name}");
    }
}

/// A replay of the words that give these uniforms.
fn replay(draws: &[f64]) -> Replay {
    Replay::new(draws.iter().flat_map(|&u| words_for(u)).collect())
}

#[test]
fn pre_blur_moves_the_point_before_the_others() {
    let linear = VariationKind::from_name("linear").unwrap();
    let spherical = VariationKind::from_name("spherical").unwrap();
    let pre = VariationKind::PRE_BLUR;
    // Four uniforms of 0.75 give the pseudo-gaussian 0.75·4 − 2 = 1, times
    // the weight 0.5; the fifth, 0.25, the direction π/2: the point moves
    // by (0.5 cos π/2, 0.5).
    let draws = [0.75, 0.75, 0.75, 0.75, 0.25];
    let set = VariationSet::new(&[VariationSpec::new(linear, 1.0), VariationSpec::new(pre, 0.5)], &Affine::IDENTITY);
    let (x, y) = set.apply(1.0, 2.0, &mut replay(&draws));
    assert!((x - 1.0).abs() < 1e-15 && y == 2.5, "{x} {y}");
    // The shared values (here r²) are those of the moved point, and the
    // order of the specs does not matter.
    let set = VariationSet::new(
        &[VariationSpec::new(pre, 0.5), VariationSpec::new(spherical, 2.0), VariationSpec::new(linear, 1.0)],
        &Affine::IDENTITY,
    );
    let (x, y) = set.apply(1.0, 2.0, &mut replay(&draws));
    let r2 = 1.0 + 2.5 * 2.5 + 1e-10;
    assert!((x - (1.0 + 2.0 / r2)).abs() < 1e-14 && (y - (2.5 + 2.0 * 2.5 / r2)).abs() < 1e-14, "{x} {y}");
    // pre_blur alone moves the point and contributes nothing: flam3 yields
    // the origin.
    let set = VariationSet::new(&[VariationSpec::new(pre, 0.5)], &Affine::IDENTITY);
    let mut rng = replay(&draws);
    assert_eq!(set.apply(1.0, 2.0, &mut rng), (0.0, 0.0));
    assert_eq!(rng.at, 10, "pre_blur draws five uniforms");
    assert!(set.is_empty());
}

/// An xform with pre_ forms (pre_flatten among them) and no ordinary
/// variation passes the moved point on; one with only post_ forms starts
/// them from the origin, as Fractorium's Xform::Apply does (since 1.0.0.7).
#[test]
fn post_forms_alone_start_from_the_origin_and_pre_forms_pass_through() {
    let pre = VariationKind::from_name("pre_exponential").unwrap();
    let post = VariationKind::from_name("post_exponential").unwrap();
    let exponential = |x: f64, y: f64| {
        let r = (x - 1.0).exp();
        (r * (std::f64::consts::PI * y).cos(), r * (std::f64::consts::PI * y).sin())
    };
    let near = |a: (f64, f64), b: (f64, f64)| (a.0 - b.0).abs() < 1e-15 && (a.1 - b.1).abs() < 1e-15;
    let only_post = VariationSet::new(&[VariationSpec::new(post, 1.0)], &Affine::IDENTITY);
    let got = only_post.apply(1.0, 0.25, &mut replay(&[]));
    assert!(near(got, exponential(0.0, 0.0)), "{got:?}");
    let only_pre = VariationSet::new(&[VariationSpec::new(pre, 1.0)], &Affine::IDENTITY);
    let got = only_pre.apply(1.0, 0.25, &mut replay(&[]));
    assert!(near(got, exponential(1.0, 0.25)), "{got:?}");
    let both = VariationSet::new(&[VariationSpec::new(pre, 1.0), VariationSpec::new(post, 1.0)], &Affine::IDENTITY);
    let (x, y) = exponential(1.0, 0.25);
    let got = both.apply(1.0, 0.25, &mut replay(&[]));
    assert!(near(got, exponential(x, y)), "{got:?}");
    // pre_flatten moves nothing but is a pre_ form all the same.
    let pre_flatten = VariationKind::from_name("pre_flatten").unwrap();
    let flattened = VariationSet::new(&[VariationSpec::new(pre_flatten, 1.0)], &Affine::IDENTITY);
    assert_eq!(flattened.apply(1.0, 0.25, &mut replay(&[])), (1.0, 0.25));
    let then_post =
        VariationSet::new(&[VariationSpec::new(pre_flatten, 1.0), VariationSpec::new(post, 1.0)], &Affine::IDENTITY);
    let got = then_post.apply(1.0, 0.25, &mut replay(&[]));
    assert!(near(got, exponential(1.0, 0.25)), "{got:?}");
    // flatten, the ordinary variation, adds 0: the point goes to the origin.
    let flatten = VariationKind::from_name("flatten").unwrap();
    let ordinary = VariationSet::new(&[VariationSpec::new(flatten, 1.0)], &Affine::IDENTITY);
    assert_eq!(ordinary.apply(1.0, 0.25, &mut replay(&[])), (0.0, 0.0));
}

#[test]
fn pre_blur_draws_come_before_the_variations_draws() {
    // julia draws one bit after pre_blur's five uniforms: the bit word is
    // the eleventh.
    let julia = VariationKind::from_name("julia").unwrap();
    let set = VariationSet::new(
        &[VariationSpec::new(julia, 1.0), VariationSpec::new(VariationKind::PRE_BLUR, 1.0)],
        &Affine::IDENTITY,
    );
    let mut words: Vec<u32> = [0.5, 0.5, 0.5, 0.5, 0.0].iter().flat_map(|&u| words_for(u)).collect();
    words.push(1);
    let mut rng = Replay::new(words.clone());
    let (x, y) = set.apply(4.0, 0.0, &mut rng);
    // pre_blur moved nothing (gaussian 0); julia took the other root: the
    // angle atan2(4, 0)/2 + π = 5π/4 at radius 2.
    assert_eq!(rng.at, 11);
    let a = std::f64::consts::FRAC_PI_4 + std::f64::consts::PI;
    assert!((x - 2.0 * a.cos()).abs() < 1e-15 && (y - 2.0 * a.sin()).abs() < 1e-15, "{x} {y}");
    *words.last_mut().unwrap() = 2;
    let (x, y) = set.apply(4.0, 0.0, &mut Replay::new(words));
    let a = std::f64::consts::FRAC_PI_4;
    assert!((x - 2.0 * a.cos()).abs() < 1e-15 && (y - 2.0 * a.sin()).abs() < 1e-15, "{x} {y}");
}

#[test]
fn zero_weights_are_dropped_and_missing_parameters_default() {
    let blur = VariationKind::from_name("gaussian_blur").unwrap();
    let linear = VariationKind::from_name("linear").unwrap();
    let set = VariationSet::new(&[VariationSpec::new(blur, 0.0), VariationSpec::new(linear, 2.0)], &Affine::IDENTITY);
    let mut rng = Replay::new(Vec::new());
    assert_eq!(set.apply(1.0, -3.0, &mut rng), (2.0, -6.0));
    assert!(VariationSet::new(&[], &Affine::IDENTITY).is_empty());

    // An empty parameter list means flam3's defaults.
    for k in VariationKind::all().filter(|k| !k.params().is_empty()) {
        let full = VariationSpec::new(k, 0.7);
        let empty = VariationSpec { params: Vec::new(), ..full.clone() };
        let coefs = Affine::from_xml_order([0.9, 0.2, -0.3, 1.1, 0.4, -0.2]);
        let words: Vec<u32> = (0..64u32).map(|i| i.wrapping_mul(0x9E37_79B9) ^ 0x5555_5555).collect();
        let a = VariationSet::new(&[full], &coefs).apply(0.3, -0.45, &mut Replay::new(words.clone()));
        let b = VariationSet::new(&[empty], &coefs).apply(0.3, -0.45, &mut Replay::new(words));
        assert!(a == b || (a.0.is_nan() && b.0.is_nan()), "{}: {a:?} {b:?}", k.name());
    }
}

/// Iteration speed of a few typical xforms (run with `cargo test --release
/// -p warpmc-flame --test variations -- --ignored --nocapture`).
#[test]
#[ignore]
fn speed() {
    struct Lcg(u64);
    impl RandomSource for Lcg {
        fn next_u32(&mut self) -> u32 {
            self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (self.0 >> 32) as u32
        }
    }
    let k = |n: &str| VariationKind::from_name(n).unwrap();
    let sets: Vec<(&str, Vec<VariationSpec>)> = vec![
        ("linear", vec![VariationSpec::new(k("linear"), 1.0)]),
        ("spherical", vec![VariationSpec::new(k("spherical"), 1.0)]),
        ("julian", vec![VariationSpec::new(k("julian"), 1.0)]),
        (
            "linear+swirl+julia",
            vec![
                VariationSpec::new(k("linear"), 0.5),
                VariationSpec::new(k("swirl"), 0.3),
                VariationSpec::new(k("julia"), 0.2),
            ],
        ),
        (
            "pre_blur+spherical+gaussian",
            vec![
                VariationSpec::new(k("pre_blur"), 0.1),
                VariationSpec::new(k("spherical"), 0.8),
                VariationSpec::new(k("gaussian_blur"), 0.2),
            ],
        ),
    ];
    let coefs = Affine::from_xml_order([0.6, 0.3, -0.3, 0.6, 0.1, -0.2]);
    for (name, specs) in sets {
        let set = VariationSet::new(&specs, &coefs);
        let mut rng = Lcg(1);
        let (mut x, mut y) = (0.1, 0.2);
        let n = 20_000_000;
        let t = Instant::now();
        for _ in 0..n {
            let (tx, ty) = coefs.apply(x, y);
            (x, y) = set.apply(tx, ty, &mut rng);
            if !x.is_finite() || !y.is_finite() || x.abs() > 1e10 || y.abs() > 1e10 {
                (x, y) = (0.1, 0.2);
            }
        }
        let ns = t.elapsed().as_secs_f64() * 1e9 / f64::from(n);
        println!("{name:32} {ns:6.2} ns/point   ({x:.3}, {y:.3})");
    }
}
