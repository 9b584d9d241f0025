//! The 99 variations against flam3 3.1.1's own outputs.
//!
//! `tests/data/variations/flam3_vectors.txt` was produced by flam3's
//! `apply_xform` (tools/flam3_variation_vectors.c says how): for every
//! variation, two affine maps and four points, with parameters away from
//! their defaults, flam3's random draws replaced by a logged list. Here the
//! same draws are replayed through a `RandomSource`, so random variations
//! are compared exactly too.

use std::collections::VecDeque;

use warpmc_flame::genome::Affine;
use warpmc_flame::variations::{VARIATION_COUNT, VariationKind, VariationSet, VariationSpec, param_owner};
use warpmc_rng::RandomSource;

/// Replays recorded draws: a uniform `u` becomes the two words whose
/// conversion gives exactly `u`; a bit becomes one word with that low bit.
struct Replay(VecDeque<u32>);

impl RandomSource for Replay {
    fn next_u32(&mut self) -> u32 {
        self.0.pop_front().expect("the variation drew more numbers than flam3 did")
    }
}

struct Case {
    kind: VariationKind,
    weight: f64,
    params: Vec<f64>,
    coefs: [f64; 6],
    point: (f64, f64),
    words: VecDeque<u32>,
    want: (f64, f64),
}

fn cases() -> Vec<Case> {
    let text = include_str!("data/variations/flam3_vectors.txt");
    text.lines()
        .map(|line| {
            let t: Vec<&str> = line.split_whitespace().collect();
            let num = |i: usize| t[i].parse::<f64>().unwrap();
            let kind = VariationKind::from_index(t[0].parse().unwrap()).unwrap();
            let weight = num(1);
            let np: usize = t[2].parse().unwrap();
            let params = (0..np).map(|k| num(3 + k)).collect();
            let mut at = 3 + np;
            let coefs = [num(at), num(at + 1), num(at + 2), num(at + 3), num(at + 4), num(at + 5)];
            at += 6;
            let point = (num(at), num(at + 1));
            let nd: usize = t[at + 2].parse().unwrap();
            at += 3;
            let mut words = VecDeque::new();
            for _ in 0..nd {
                let v = num(at + 1);
                match t[at] {
                    "u" => {
                        let k = (v * 9_007_199_254_740_992.0) as u64;
                        assert_eq!(k as f64 / 9_007_199_254_740_992.0, v);
                        let x = k << 11;
                        words.push_back(x as u32);
                        words.push_back((x >> 32) as u32);
                    }
                    _ => words.push_back(v as u32),
                }
                at += 2;
            }
            Case { kind, weight, params, coefs, point, words, want: (num(at), num(at + 1)) }
        })
        .collect()
}

#[test]
fn every_variation_matches_flam3() {
    let cases = cases();
    let mut seen = [0usize; VARIATION_COUNT];
    let mut failures = Vec::new();
    for c in cases {
        seen[c.kind.index()] += 1;
        let coefs = Affine::from_xml_order(c.coefs);
        let mut spec = VariationSpec::new(c.kind, c.weight);
        assert_eq!(spec.params.len(), c.params.len(), "{}", c.kind.name());
        spec.params = c.params.clone();
        let set = VariationSet::new(&[spec], &coefs);
        let (tx, ty) = coefs.apply(c.point.0, c.point.1);
        let mut rng = Replay(c.words.clone());
        let got = set.apply(tx, ty, &mut rng);
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0);
        if !close(got.0, c.want.0) || !close(got.1, c.want.1) {
            failures.push(format!(
                "{} at {:?} coefs {:?}: got {:?}, flam3 {:?}",
                c.kind.name(),
                c.point,
                c.coefs,
                got,
                c.want
            ));
        }
        assert!(rng.0.is_empty(), "{}: drew fewer numbers than flam3", c.kind.name());
    }
    assert!(failures.is_empty(), "{} mismatches:\n{}", failures.len(), failures.join("\n"));
    for (i, n) in seen.iter().enumerate() {
        assert!(*n >= 4, "variation {i} has only {n} vectors");
    }
}

#[test]
fn names_and_parameters() {
    assert_eq!(VariationKind::all().count(), 99);
    for k in VariationKind::all() {
        assert_eq!(VariationKind::from_name(k.name()), Some(k));
        for (i, p) in k.params().iter().enumerate() {
            assert_eq!(param_owner(p.name), Some((k, i)), "{}", p.name);
        }
    }
    assert_eq!(VariationKind::from_name("linear").unwrap().index(), 0);
    assert_eq!(VariationKind::from_name("mobius").unwrap().index(), 98);
    assert_eq!(VariationKind::from_name("pre_blur").unwrap().index(), 67);
    assert_eq!(VariationKind::from_name("crackle"), None);
    let osc = VariationKind::from_name("oscilloscope").unwrap();
    assert_eq!(param_owner("oscilloscope_frequency"), param_owner("oscope_frequency"));
    assert_eq!(param_owner("oscope_frequency").unwrap().0, osc);
    assert_eq!(osc.params()[1].default, std::f64::consts::PI);
    let julian = VariationKind::from_name("julian").unwrap();
    assert_eq!(VariationSpec::new(julian, 1.0).params, vec![1.0, 1.0]);
    assert_eq!(param_owner("julian_rN"), None);
}

/// pre_blur moves the point before the other variations see it.
#[test]
fn pre_blur_runs_first() {
    let linear = VariationKind::from_name("linear").unwrap();
    let pre = VariationKind::from_name("pre_blur").unwrap();
    let set = VariationSet::new(&[VariationSpec::new(linear, 1.0), VariationSpec::new(pre, 0.5)], &Affine::IDENTITY);
    // Four uniforms of 0.75 (g = 0.5·(3 − 2) = 0.5), then an angle of 0.
    let u = |v: f64| {
        let x = ((v * 9_007_199_254_740_992.0) as u64) << 11;
        [x as u32, (x >> 32) as u32]
    };
    let mut words = VecDeque::new();
    for v in [0.75, 0.75, 0.75, 0.75, 0.0] {
        words.extend(u(v));
    }
    let (x, y) = set.apply(1.0, 2.0, &mut Replay(words));
    assert!((x - 1.5).abs() < 1e-15 && (y - 2.0).abs() < 1e-15, "{x} {y}");
}
