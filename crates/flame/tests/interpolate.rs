//! Interpolation between flames (flam3's `flam3_interpolate`): hand-computed
//! cases, and comparisons with genomes printed by flam3-genome 3.1.1 from
//! the control points in `tests/data/interpolate/` (see `regen.sh` there).
//!
//! The control points are read by a small reader in this file that follows
//! flam3's parser for the attributes the data uses, so that these tests do
//! not depend on the crate's genome reader.

use std::collections::BTreeMap;
use std::f64::consts::PI;
use std::path::PathBuf;

use warpmc_flame::genome::{
    Affine, AffineInterpolation, FilterShape, Interpolation, PaletteInterpolation, PaletteMode, TemporalFilter,
};
use warpmc_flame::interpolate::{interpolate, interpolate_with_stagger, sheep_edge, sheep_loop, smoother};
use warpmc_flame::palette::Palette;
use warpmc_flame::variations::{VariationKind, VariationSpec, param_owner};
use warpmc_flame::{Flame, XForm};

// ---------------------------------------------------------------------------
// Hand-built flames

fn kind(index: usize) -> VariationKind {
    VariationKind::from_index(index).unwrap()
}

const LINEAR: usize = 0;
const SPHERICAL: usize = 2;
const SWIRL: usize = 3;

/// A variation without parameters (linear, spherical, swirl …).
fn plain(index: usize, weight: f64) -> VariationSpec {
    VariationSpec { kind: kind(index), weight, params: Vec::new() }
}

fn xf(weight: f64, coefs: [f64; 6], vars: Vec<VariationSpec>) -> XForm {
    XForm { weight, coefs: Affine::from_xml_order(coefs), variations: vars, ..XForm::flam3_default(0) }
}

fn rot_scale(deg: f64, s: f64) -> [f64; 6] {
    let (sin, cos) = (deg.to_radians().sin(), deg.to_radians().cos());
    // Columns (a, d) and (b, e) of s·R(deg).
    [s * cos, s * sin, -s * sin, s * cos, 0.0, 0.0]
}

fn flame_at(time: f64, xforms: Vec<XForm>) -> Flame {
    Flame { time, xforms, ..Flame::default() }
}

fn solid(rgb: [f64; 3]) -> Palette {
    Palette { entries: Box::new([[rgb[0], rgb[1], rgb[2], 1.0]; 256]) }
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * (1.0 + b.abs())
}

#[track_caller]
fn assert_close(a: f64, b: f64, tol: f64, what: &str) {
    assert!(close(a, b, tol), "{what}: got {a}, expected {b}");
}

#[track_caller]
fn assert_affine(a: &Affine, b: &Affine, tol: f64, what: &str) {
    for i in 0..3 {
        for j in 0..2 {
            assert_close(a.c[i][j], b.c[i][j], tol, &format!("{what} c[{i}][{j}]"));
        }
    }
}

// ---------------------------------------------------------------------------
// Hand-computed cases

#[test]
fn one_flame_is_returned_unchanged() {
    let f = flame_at(3.0, vec![xf(1.0, rot_scale(30.0, 0.5), vec![plain(LINEAR, 1.0)])]);
    assert_eq!(interpolate(std::slice::from_ref(&f), 17.0), f);
}

/// Two flames with the same xform layout, differing in every field.
fn pair() -> [Flame; 2] {
    let mut a = flame_at(
        0.0,
        vec![
            xf(0.5, [0.6, 0.2, -0.3, 0.7, 0.1, -0.2], vec![plain(LINEAR, 0.75), plain(SWIRL, 0.25)]),
            xf(0.25, [-0.5, 0.1, 0.2, -0.4, 0.3, 0.4], vec![plain(SPHERICAL, 1.0)]),
        ],
    );
    a.xforms[0].chaos = vec![0.5, 2.0];
    a.xforms[1].post = Affine::from_xml_order([1.0, 0.2, -0.2, 1.0, 0.05, 0.0]);
    a.xforms[1].color = 0.9;
    a.xforms[1].opacity = 0.7;
    a.final_xform = Some(xf(0.0, [0.9, 0.1, -0.1, 0.9, 0.0, 0.0], vec![plain(SWIRL, 1.0)]));
    a.width = 641;
    a.height = 481;
    a.center = [0.25, -0.5];
    a.scale = 120.0;
    a.rotate = 10.0;
    a.passes = 1;
    a.brightness = 3.0;
    a.contrast = 1.5;
    a.filter_shape = FilterShape::Gaussian;
    a.temporal_filter = TemporalFilter::Box;
    a.palette_mode = PaletteMode::Step;
    a.palette_interpolation = PaletteInterpolation::Rgb;
    a.hsv_rgb_palette_blend = 0.3;
    a.affine_interpolation = AffineInterpolation::Log;
    a.palette = solid([1.0, 0.0, 0.0]);

    let mut b = flame_at(
        2.0,
        vec![
            xf(1.5, [0.3, -0.4, 0.5, 0.6, -0.1, 0.2], vec![plain(LINEAR, 1.0), plain(SWIRL, 0.5)]),
            xf(0.75, [0.2, 0.5, -0.5, 0.2, 0.2, 0.2], vec![plain(SPHERICAL, 0.5)]),
        ],
    );
    b.xforms[1].chaos = vec![3.0];
    b.xforms[1].color = 0.2;
    b.final_xform = Some(xf(0.0, [0.7, 0.0, 0.0, 0.7, 0.1, 0.0], vec![plain(SWIRL, 0.5)]));
    b.width = 800;
    b.height = 600;
    b.center = [-0.75, 1.5];
    b.scale = 200.0;
    b.rotate = -50.0;
    b.passes = 4;
    b.brightness = 5.0;
    b.contrast = 0.5;
    b.filter_shape = FilterShape::Box;
    b.temporal_filter = TemporalFilter::Exp;
    b.palette_mode = PaletteMode::Linear;
    b.palette_interpolation = PaletteInterpolation::Hsv;
    b.hsv_rgb_palette_blend = 0.0;
    b.affine_interpolation = AffineInterpolation::Linear;
    b.palette = solid([0.0, 0.0, 1.0]);
    [a, b]
}

#[track_caller]
fn assert_same_flame(got: &Flame, want: &Flame, tol: f64) {
    let mut g = got.clone();
    let mut w = want.clone();
    // Affines and palettes go through polar / HSV form and back: compared
    // with a tolerance, the rest exactly.
    assert_eq!(g.xforms.len(), w.xforms.len());
    for (i, (x, y)) in g.xforms.iter_mut().zip(&mut w.xforms).enumerate() {
        assert_affine(&x.coefs, &y.coefs, tol, &format!("xform {i} coefs"));
        assert_affine(&x.post, &y.post, tol, &format!("xform {i} post"));
        x.coefs = y.coefs;
        x.post = y.post;
    }
    if let (Some(x), Some(y)) = (&mut g.final_xform, &mut w.final_xform) {
        assert_affine(&x.coefs, &y.coefs, tol, "final coefs");
        x.coefs = y.coefs;
    }
    for (i, (p, q)) in g.palette.entries.iter().zip(w.palette.entries.iter()).enumerate() {
        for ch in 0..4 {
            assert_close(p[ch], q[ch], tol, &format!("palette {i}.{ch}"));
        }
    }
    g.palette = w.palette.clone();
    assert_eq!(g, w);
}

/// `f` with each chaos row up to its last entry that is not 1, as the
/// interpolation writes them (and flam3-genome prints them).
fn trimmed_chaos(mut f: Flame) -> Flame {
    for x in &mut f.xforms {
        while x.chaos.last() == Some(&1.0) {
            x.chaos.pop();
        }
    }
    f
}

#[test]
fn endpoints_reproduce_the_control_points() {
    let [a, b] = pair();
    let flames = [a.clone(), b.clone()];
    let at_a = interpolate(&flames, 0.0);
    let at_b = interpolate(&flames, 2.0);

    // The interpolated flame is linear and unnamed; the settings flam3
    // takes from the first control point of the segment stay those of `a`.
    let mut want_a = trimmed_chaos(a.clone());
    want_a.interpolation = Interpolation::Linear;
    assert_same_flame(&at_a, &want_a, 1e-12);

    let want_b = Flame {
        filter_shape: a.filter_shape,
        temporal_filter: a.temporal_filter,
        palette_mode: a.palette_mode,
        palette_interpolation: a.palette_interpolation,
        hsv_rgb_palette_blend: a.hsv_rgb_palette_blend,
        affine_interpolation: a.affine_interpolation,
        ..trimmed_chaos(b.clone())
    };
    assert_same_flame(&at_b, &want_b, 1e-12);
}

#[test]
fn midpoint_blends_numeric_fields_linearly() {
    let flames = pair();
    let m = interpolate(&flames, 1.0);
    assert_eq!(m.time, 1.0);
    assert_eq!(m.name, None);
    // Integers: rint, ties to even (720.5 → 720, 540.5 → 540, 2.5 → 2).
    assert_eq!((m.width, m.height, m.passes), (720, 540, 2));
    assert_eq!(m.center, [-0.25, 0.5]);
    assert_eq!(m.scale, 160.0);
    assert_eq!(m.rotate, -20.0);
    assert_eq!(m.brightness, 4.0);
    assert_eq!(m.contrast, 1.0);
    // Enums and the palette blend come from the first control point.
    assert_eq!(m.filter_shape, FilterShape::Gaussian);
    assert_eq!(m.temporal_filter, TemporalFilter::Box);
    assert_eq!(m.palette_mode, PaletteMode::Step);
    assert_eq!(m.affine_interpolation, AffineInterpolation::Log);
    assert_eq!(m.palette_interpolation, PaletteInterpolation::Rgb);
    assert_eq!(m.hsv_rgb_palette_blend, 0.3);
    assert_eq!(m.interpolation, Interpolation::Linear);

    let x0 = &m.xforms[0];
    assert_eq!(x0.weight, 1.0);
    assert_eq!(x0.variations.len(), 2);
    assert_eq!((x0.variations[0].kind, x0.variations[0].weight), (kind(LINEAR), 0.875));
    assert_eq!((x0.variations[1].kind, x0.variations[1].weight), (kind(SWIRL), 0.375));
    // Chaos: blended entry by entry, missing entries are 1.
    assert_eq!(x0.chaos, vec![0.75, 1.5]);
    assert_eq!(m.xforms[1].chaos, vec![2.0]);
    let x1 = &m.xforms[1];
    assert_eq!(x1.weight, 0.5);
    assert_close(x1.color, 0.55, 1e-15, "color");
    assert_close(x1.opacity, 0.85, 1e-15, "opacity");
    assert_eq!(x1.variations, vec![plain(SPHERICAL, 0.75)]);
    // Translations are always blended linearly.
    assert_close(x1.coefs.c[2][0], 0.25, 1e-15, "e");
    assert_close(x1.coefs.c[2][1], 0.3, 1e-15, "f");
    // RGB palette: red and blue meet at purple.
    assert_eq!(m.palette.entries[7], [0.5, 0.0, 0.5, 1.0]);
}

#[test]
fn times_outside_the_sequence_extrapolate() {
    let flames = pair();
    let m = interpolate(&flames, 3.0);
    assert_eq!(m.scale, 240.0);
    assert_eq!(m.xforms[0].weight, 2.0);
    // Clamped fields stay in range.
    assert_eq!(m.xforms[1].color, 0.0);
    let before = interpolate(&flames, -2.0);
    assert_eq!(before.scale, 40.0);
    assert_eq!(before.xforms[1].weight, 0.0, "weights are clamped at 0");
}

#[test]
fn log_affines_rotate_by_half_the_angle_and_scale_geometrically() {
    let cases = [
        // (from degrees, scale) → (to degrees, scale): expected middle.
        ((0.0, 1.0), (90.0, 4.0), (45.0, 2.0)),
        ((30.0, 0.5), (150.0, 0.5), (90.0, 0.5)),
        // The short way round, across ±180°.
        ((170.0, 1.0), (-170.0, 1.0), (180.0, 1.0)),
        ((-170.0, 2.0), (170.0, 0.5), (-180.0, 1.0)),
        // Exactly half a turn: counter-clockwise from 0.
        ((0.0, 1.0), (180.0, 1.0), (90.0, 1.0)),
    ];
    for ((d0, s0), (d1, s1), (dm, sm)) in cases {
        let f0 = flame_at(0.0, vec![xf(1.0, rot_scale(d0, s0), vec![plain(LINEAR, 1.0)])]);
        let f1 = flame_at(1.0, vec![xf(1.0, rot_scale(d1, s1), vec![plain(LINEAR, 1.0)])]);
        let m = interpolate(&[f0, f1], 0.5);
        let want = Affine::from_xml_order(rot_scale(dm, sm));
        assert_affine(&m.xforms[0].coefs, &want, 1e-12, &format!("{d0}°×{s0} → {d1}°×{s1}"));
    }

    // A quarter of the way: a quarter of the angle, scale 4^¼.
    let f0 = flame_at(0.0, vec![xf(1.0, rot_scale(0.0, 1.0), vec![plain(LINEAR, 1.0)])]);
    let f1 = flame_at(4.0, vec![xf(1.0, rot_scale(120.0, 4.0), vec![plain(LINEAR, 1.0)])]);
    let m = interpolate(&[f0.clone(), f1.clone()], 1.0);
    assert_affine(&m.xforms[0].coefs, &Affine::from_xml_order(rot_scale(30.0, 2f64.sqrt())), 1e-12, "¼");

    // The same pair with linear affine interpolation: coefficient averages.
    let mut l0 = f0;
    l0.affine_interpolation = AffineInterpolation::Linear;
    let m = interpolate(&[l0, f1], 2.0);
    let (a, b) = (rot_scale(0.0, 1.0), rot_scale(120.0, 4.0));
    let avg: Vec<f64> = a.iter().zip(&b).map(|(x, y)| (x + y) / 2.0).collect();
    assert_affine(&m.xforms[0].coefs, &Affine::from_xml_order(avg.try_into().unwrap()), 1e-15, "linear");
}

#[test]
fn log_affines_keep_an_identity_post_exact() {
    let f0 = flame_at(0.0, vec![xf(1.0, rot_scale(10.0, 1.0), vec![plain(LINEAR, 1.0)])]);
    let f1 = flame_at(1.0, vec![xf(1.0, rot_scale(70.0, 2.0), vec![plain(LINEAR, 1.0)])]);
    let m = interpolate(&[f0.clone(), f1.clone()], 0.3);
    assert!(m.xforms[0].post.is_identity());
    // A post map on one side only: blended against the identity.
    let mut g1 = f1;
    g1.xforms[0].post = Affine::from_xml_order(rot_scale(60.0, 1.0));
    let m = interpolate(&[f0, g1], 0.5);
    assert_affine(&m.xforms[0].post, &Affine::from_xml_order(rot_scale(30.0, 1.0)), 1e-12, "post");
}

#[test]
fn padding_xforms_for_different_xform_counts() {
    // a: one xform; b: three (the second spherical, the third swirl) and a
    // final xform.
    let a = flame_at(0.0, vec![xf(1.0, rot_scale(0.0, 0.5), vec![plain(LINEAR, 1.0)])]);
    let mut b = flame_at(
        1.0,
        vec![
            xf(1.0, rot_scale(0.0, 0.5), vec![plain(LINEAR, 1.0)]),
            xf(0.5, rot_scale(0.0, 0.5), vec![plain(SPHERICAL, 1.0)]),
            xf(0.5, rot_scale(0.0, 0.5), vec![plain(SWIRL, 1.0)]),
        ],
    );
    b.final_xform = Some(xf(0.0, rot_scale(0.0, 2.0), vec![plain(SWIRL, 1.0)]));
    let m = interpolate(&[a.clone(), b.clone()], 0.5);
    assert_eq!(m.xforms.len(), 3);
    // Facing spherical (log mode): the padding xform is linear −1 with a
    // half-turn map, so the middle is spherical ½, linear −½ and a quarter
    // turn at scale √½.
    let x1 = &m.xforms[1];
    assert_eq!(x1.weight, 0.25);
    assert_eq!(x1.variations, vec![plain(LINEAR, -0.5), plain(SPHERICAL, 0.5)]);
    assert_affine(&x1.coefs, &Affine::from_xml_order(rot_scale(-90.0, 0.5f64.sqrt())), 1e-12, "half turn");
    // Facing swirl: an identity with linear 1.
    let x2 = &m.xforms[2];
    assert_eq!(x2.variations, vec![plain(LINEAR, 0.5), plain(SWIRL, 0.5)]);
    assert_affine(&x2.coefs, &Affine::from_xml_order(rot_scale(0.0, 0.5f64.sqrt())), 1e-12, "identity");
    // Padding xforms take flam3's default colour (index parity).
    assert_eq!(x1.color, 0.5 * 1.0 + 0.5 * b.xforms[1].color);
    // The final xform is blended against an identity linear final xform
    // that does not colour (color_speed 0).
    let fx = m.final_xform.as_ref().unwrap();
    assert_eq!(fx.variations, vec![plain(LINEAR, 0.5), plain(SWIRL, 0.5)]);
    assert_eq!((fx.color_speed, fx.animate), (0.25, 0.5));
    assert_affine(&fx.coefs, &Affine::from_xml_order(rot_scale(0.0, 2f64.sqrt())), 1e-12, "final");

    // At a's time the result is a plus its padding: xforms of weight 0 and
    // an identity final xform.
    let at_a = interpolate(&[a.clone(), b.clone()], 0.0);
    assert_eq!(at_a.xforms.len(), 3);
    assert_affine(&at_a.xforms[0].coefs, &a.xforms[0].coefs, 1e-15, "a's xform");
    let want = trimmed_chaos(Flame { xforms: vec![a.xforms[0].clone()], ..a.clone() }).xforms.remove(0);
    assert_eq!(XForm { coefs: a.xforms[0].coefs, ..at_a.xforms[0].clone() }, want);
    assert_eq!(at_a.xforms[1].weight, 0.0);
    assert_eq!(at_a.xforms[1].variations, vec![plain(LINEAR, -1.0)]);
    assert_eq!(at_a.xforms[2].variations, vec![plain(LINEAR, 1.0)]);
    let fx = at_a.final_xform.as_ref().unwrap();
    assert_eq!((fx.color_speed, &fx.variations), (0.0, &vec![plain(LINEAR, 1.0)]));
    assert_affine(&fx.coefs, &Affine::IDENTITY, 1e-15, "identity final");

    // compat ("old") mode pads with plain identities, even facing spherical.
    let mut ac = a;
    ac.affine_interpolation = AffineInterpolation::Compat;
    let m = interpolate(&[ac, b], 0.5);
    assert_eq!(m.xforms[1].variations, vec![plain(LINEAR, 0.5), plain(SPHERICAL, 0.5)]);
}

/// `spec` with the parameter called `name` set.
fn with_param(mut spec: VariationSpec, name: &str, value: f64) -> VariationSpec {
    let (k, p) = param_owner(name).unwrap();
    assert_eq!(k, spec.kind);
    spec.params[p] = value;
    spec
}

fn param(spec: &VariationSpec, name: &str) -> f64 {
    spec.params[param_owner(name).unwrap().1]
}

fn default_param(name: &str) -> f64 {
    let (k, p) = param_owner(name).unwrap();
    k.params()[p].default
}

#[test]
fn parameters_of_a_fading_variation_come_from_the_other_side() {
    let julian = VariationKind::from_name("julian").unwrap();
    let flower = VariationKind::from_name("flower").unwrap();
    let a = flame_at(
        0.0,
        vec![xf(
            1.0,
            rot_scale(0.0, 0.5),
            vec![
                plain(LINEAR, 0.5),
                with_param(with_param(VariationSpec::new(julian, 0.25), "julian_power", 4.0), "julian_dist", -1.0),
                with_param(with_param(VariationSpec::new(flower, 0.25), "flower_petals", 3.0), "flower_holes", 0.5),
            ],
        )],
    );
    let b = flame_at(1.0, vec![xf(1.0, rot_scale(0.0, 0.5), vec![plain(LINEAR, 1.0)])]);
    let find = |f: &Flame, k: VariationKind| f.xforms[0].variations.iter().find(|v| v.kind == k).unwrap().clone();

    // log (and linear): the parameters stay a's while the weight fades,
    // except flower's holes (flam3 copies the petals only).
    for (first, second) in [(a.clone(), b.clone()), (b.clone(), a.clone())] {
        let (mut first, mut second) = (first, second);
        (first.time, second.time) = (0.0, 1.0);
        let m = interpolate(&[first, second], 0.5);
        let j = find(&m, julian);
        assert_eq!(j.weight, 0.125);
        assert_eq!((param(&j, "julian_power"), param(&j, "julian_dist")), (4.0, -1.0));
        let fl = find(&m, flower);
        assert_eq!(param(&fl, "flower_petals"), 3.0);
        assert_eq!(param(&fl, "flower_holes"), 0.5 * 0.5 + 0.5 * default_param("flower_holes"));
    }

    // compat ("old", decided by the first control point of two): no
    // carry-over, the missing side has flam3's defaults.
    let mut ac = a.clone();
    ac.affine_interpolation = AffineInterpolation::Compat;
    let m = interpolate(&[ac, b.clone()], 0.5);
    let j = find(&m, julian);
    assert_eq!(param(&j, "julian_power"), 0.5 * 4.0 + 0.5 * default_param("julian_power"));
    assert_eq!(param(&j, "julian_dist"), -0.5 + 0.5 * default_param("julian_dist"));
    let mut bc = b;
    bc.affine_interpolation = AffineInterpolation::Compat;
    let m = interpolate(&[a, bc], 0.5);
    assert_eq!(param(&find(&m, julian), "julian_power"), 4.0, "only the first control point's type counts");
}

#[test]
fn log_affines_with_a_vanishing_column_blend_its_length_linearly() {
    // a's second column is zero: its angle follows the first column's (0)
    // and its length blends linearly (a logarithm would stay at −∞).
    let a = flame_at(0.0, vec![xf(1.0, [1.0, 0.0, 0.0, 0.0, 0.0, 0.0], vec![plain(LINEAR, 1.0)])]);
    let b = flame_at(1.0, vec![xf(1.0, [1.0, 0.0, 0.0, 1.0, 0.0, 0.0], vec![plain(LINEAR, 1.0)])]);
    let m = interpolate(&[a, b], 0.5);
    let h = 0.5 * (PI / 4.0).cos();
    assert_affine(&m.xforms[0].coefs, &Affine::from_xml_order([1.0, 0.0, h, h, 0.0, 0.0]), 1e-15, "coefs");

    // Below e⁻¹⁰ counts as vanishing too: 10⁻⁶ and 1 average to ½, not to
    // their geometric mean 10⁻³.
    let a = flame_at(0.0, vec![xf(1.0, [1.0, 0.0, 0.0, 1e-6, 0.0, 0.0], vec![plain(LINEAR, 1.0)])]);
    let b = flame_at(1.0, vec![xf(1.0, [1.0, 0.0, 0.0, 1.0, 0.0, 0.0], vec![plain(LINEAR, 1.0)])]);
    let m = interpolate(&[a, b], 0.5);
    assert_close(m.xforms[0].coefs.c[1][1], 0.5 + 0.5e-6, 1e-15, "e");
    // Above it, lengths blend geometrically.
    let a = flame_at(0.0, vec![xf(1.0, [1.0, 0.0, 0.0, 1e-4, 0.0, 0.0], vec![plain(LINEAR, 1.0)])]);
    let b = flame_at(1.0, vec![xf(1.0, [1.0, 0.0, 0.0, 1.0, 0.0, 0.0], vec![plain(LINEAR, 1.0)])]);
    assert_close(interpolate(&[a, b], 0.5).xforms[0].coefs.c[1][1], 1e-2, 1e-14, "e");
}

#[test]
fn palette_modes_spot_values() {
    let red = solid([1.0, 0.0, 0.0]);
    let blue = solid([0.0, 0.0, 1.0]);
    let at = |mode, blend: f64, t: f64| {
        let mut a = flame_at(0.0, vec![xf(1.0, rot_scale(0.0, 0.5), vec![plain(LINEAR, 1.0)])]);
        a.palette = red.clone();
        a.palette_interpolation = mode;
        a.hsv_rgb_palette_blend = blend;
        let mut b = a.clone();
        b.time = 1.0;
        b.palette = blue.clone();
        interpolate(&[a, b], t).palette
    };
    // Hue 0 (red) → 4 (blue): plain HSV goes through 2 (green), circular
    // takes the short way through 5 (magenta).
    assert_eq!(at(PaletteInterpolation::Hsv, 0.0, 0.5).entries[0], [0.0, 1.0, 0.0, 1.0]);
    assert_eq!(at(PaletteInterpolation::HsvCircular, 0.0, 0.5).entries[0], [1.0, 0.0, 1.0, 1.0]);
    assert_eq!(at(PaletteInterpolation::Rgb, 0.0, 0.5).entries[0], [0.5, 0.0, 0.5, 1.0]);
    // hsv_rgb_palette_blend mixes the circular HSV result with the RGB one.
    assert_eq!(at(PaletteInterpolation::HsvCircular, 0.5, 0.5).entries[0], [0.75, 0.0, 0.75, 1.0]);
    // A quarter of the way in HSV: hue 1 (yellow).
    assert_eq!(at(PaletteInterpolation::Hsv, 0.0, 0.25).entries[0], [1.0, 1.0, 0.0, 1.0]);
    // Sweep: entries below 256·c0 from the first palette.
    let s = at(PaletteInterpolation::Sweep, 0.0, 0.25);
    assert_eq!(s.entries[191], [1.0, 0.0, 0.0, 1.0]);
    assert_eq!(s.entries[192], [0.0, 0.0, 1.0, 1.0]);
}

#[test]
fn smooth_uses_catmull_rom_through_four_control_points() {
    let scales = [0.0, 10.0, 20.0, 40.0, 50.0];
    let flames: Vec<Flame> = scales
        .iter()
        .enumerate()
        .map(|(i, &s)| {
            let mut f = flame_at(i as f64, vec![xf(1.0, rot_scale(0.0, 0.5), vec![plain(LINEAR, 1.0)])]);
            f.scale = s;
            f.interpolation = Interpolation::Smooth;
            f.palette_interpolation = PaletteInterpolation::Rgb;
            f.palette = solid([i as f64 / 4.0, 0.0, 0.0]);
            f
        })
        .collect();
    // Segment 1–2 at its middle: weights (−1/16, 9/16, 9/16, −1/16).
    let m = interpolate(&flames, 1.5);
    assert_eq!(m.scale, -0.0625 * 0.0 + 0.5625 * 10.0 + 0.5625 * 20.0 - 0.0625 * 40.0);
    assert_eq!(m.scale, 14.375);
    assert_close(m.palette.entries[0][0], 0.375, 1e-15, "palette");
    // At a quarter: t = 0.25.
    let t: f64 = 0.25;
    let w = [
        (2.0 * t * t - t - t * t * t) / 2.0,
        (3.0 * t * t * t - 5.0 * t * t + 2.0) / 2.0,
        (4.0 * t * t - 3.0 * t * t * t + t) / 2.0,
        (t * t * t - t * t) / 2.0,
    ];
    let m = interpolate(&flames, 2.25);
    assert_close(m.scale, w[0] * 10.0 + w[1] * 20.0 + w[2] * 40.0 + w[3] * 50.0, 1e-15, "scale");
    // Opaque palettes stay exactly opaque, whatever the weights add up to.
    for t in [1.1, 1.3, 1.7, 2.2, 2.6, 2.9] {
        assert!(interpolate(&flames, t).palette.entries.iter().all(|e| e[3] == 1.0), "alpha at {t}");
    }
    // The first and last segments have no outer neighbour: linear.
    assert_eq!(interpolate(&flames, 0.5).scale, 5.0);
    assert_eq!(interpolate(&flames, 3.5).scale, 45.0);
    // Only the earlier control point's flag matters.
    let mut lin = flames.clone();
    lin[1].interpolation = Interpolation::Linear;
    assert_eq!(interpolate(&lin, 1.5).scale, 15.0);
}

#[test]
fn stagger_moves_xforms_one_after_the_other() {
    let mk = |time: f64, w: f64| {
        flame_at(time, (0..3).map(|_| xf(w, rot_scale(0.0, 0.5), vec![plain(LINEAR, 1.0)])).collect())
    };
    let flames = [mk(0.0, 0.0), mk(1.0, 1.0)];
    // stagger 1 with 3 xforms: each moves during a third of the time, the
    // first one first (xform i moves while c0 falls from 1 − i/3 to
    // ⅔ − i/3).
    let m = interpolate_with_stagger(&flames, 0.5, 1.0);
    assert_eq!(m.xforms[0].weight, 1.0);
    assert_close(m.xforms[1].weight, 0.5, 1e-12, "middle xform halfway");
    assert_eq!(m.xforms[2].weight, 0.0);
    // c0 = 0.75: xform 0 is a quarter through its window.
    let m = interpolate_with_stagger(&flames, 0.25, 1.0);
    assert_close(m.xforms[0].weight, 1.0 - smoother(0.25), 1e-12, "first xform");
    assert_eq!(m.xforms[1].weight, 0.0);
    // Without stagger all move together.
    let m = interpolate_with_stagger(&flames, 0.25, 0.0);
    assert!(m.xforms.iter().all(|x| x.weight == 0.25));
}

#[test]
fn sheep_loop_rotates_animated_xforms() {
    let mut f = flame_at(
        0.0,
        vec![
            xf(1.0, rot_scale(10.0, 0.5), vec![plain(LINEAR, 1.0)]),
            xf(1.0, rot_scale(10.0, 0.5), vec![plain(LINEAR, 1.0)]),
        ],
    );
    f.xforms[1].animate = 0.0;
    f.final_xform = Some(xf(0.0, rot_scale(10.0, 0.5), vec![plain(LINEAR, 1.0)]));
    let r = sheep_loop(&f, 0.25);
    assert_affine(&r.xforms[0].coefs, &Affine::from_xml_order(rot_scale(100.0, 0.5)), 1e-12, "rotated");
    assert_eq!(r.xforms[1], f.xforms[1]);
    assert_eq!(r.final_xform, f.final_xform);
}

// ---------------------------------------------------------------------------
// A reader for the test data, following flam3 3.1.1's parser for the
// attributes used there.

struct Read {
    flame: Flame,
    /// The palette entries present in the file (flam3's outputs here are
    /// thinned).
    colors: Vec<usize>,
    /// Each xform's attributes as written (what flam3 printed).
    xform_attrs: Vec<BTreeMap<String, String>>,
}

fn nums(s: &str) -> Vec<f64> {
    s.split_whitespace().map(|t| t.parse().unwrap_or_else(|_| panic!("bad number {t:?}"))).collect()
}

fn read_xform(node: roxmltree::Node<'_, '_>, index: usize) -> (XForm, BTreeMap<String, String>) {
    let mut x = XForm::flam3_default(index);
    let mut vars: BTreeMap<VariationKind, f64> = BTreeMap::new();
    let mut params: Vec<(VariationKind, usize, f64)> = Vec::new();
    let mut attrs = BTreeMap::new();
    for a in node.attributes() {
        attrs.insert(a.name().to_string(), a.value().to_string());
        let v = a.value();
        match a.name() {
            "weight" => x.weight = nums(v)[0],
            "color" => x.color = nums(v)[0],
            "color_speed" => x.color_speed = nums(v)[0],
            "animate" => x.animate = nums(v)[0],
            "opacity" => x.opacity = nums(v)[0],
            "coefs" => x.coefs = Affine::from_xml_order(nums(v).try_into().unwrap()),
            "post" => x.post = Affine::from_xml_order(nums(v).try_into().unwrap()),
            "chaos" => x.chaos = nums(v),
            name => {
                if let Some(k) = VariationKind::from_name(name) {
                    vars.insert(k, nums(v)[0]);
                } else if let Some((k, p)) = param_owner(name) {
                    params.push((k, p, nums(v)[0]));
                } else {
                    panic!("unknown xform attribute {name}");
                }
            }
        }
    }
    if vars.is_empty() {
        vars.insert(kind(LINEAR), 1.0);
    }
    x.variations = vars
        .into_iter()
        .filter(|&(_, w)| w != 0.0)
        .map(|(k, w)| {
            let mut spec = VariationSpec::new(k, w);
            for &(pk, p, value) in &params {
                if pk == k {
                    spec.params[p] = value;
                }
            }
            spec
        })
        .collect();
    (x, attrs)
}

/// Reads the `<flame>` elements of `xml`. `premultiply`: colour elements
/// with alpha are premultiplied (flam3's reader); flam3's printed palettes
/// are already premultiplied and are taken as they are.
fn read_flames(xml: &str, premultiply: bool) -> Vec<Read> {
    let doc = roxmltree::Document::parse(xml).unwrap();
    let mut out = Vec::new();
    for node in doc.descendants().filter(|n| n.has_tag_name("flame")) {
        let mut f = Flame::default();
        for a in node.attributes() {
            let v = a.value();
            let n = || nums(v);
            match a.name() {
                "time" => f.time = n()[0],
                "name" => f.name = Some(v.to_string()),
                "size" => (f.width, f.height) = (n()[0] as u32, n()[1] as u32),
                "center" => f.center = [n()[0], n()[1]],
                "scale" => f.scale = n()[0],
                "rotate" => f.rotate = n()[0],
                "zoom" => f.zoom = n()[0],
                "supersample" => f.supersample = n()[0] as u32,
                "filter" => f.filter_radius = n()[0],
                "filter_shape" => f.filter_shape = FilterShape::from_name(v).unwrap(),
                "quality" => f.quality = n()[0],
                "passes" => f.passes = n()[0] as u32,
                "temporal_samples" => f.temporal_samples = n()[0] as u32,
                "temporal_filter_width" => f.temporal_filter_width = n()[0],
                "background" => f.background = [n()[0], n()[1], n()[2]],
                "brightness" => f.brightness = n()[0],
                "gamma" => f.gamma = n()[0],
                "highlight_power" => f.highlight_power = n()[0],
                "vibrancy" => f.vibrancy = n()[0],
                "estimator_radius" => f.estimator_radius = n()[0],
                "estimator_minimum" => f.estimator_minimum = n()[0],
                "estimator_curve" => f.estimator_curve = n()[0],
                "gamma_threshold" => f.gamma_threshold = n()[0],
                "hsv_rgb_palette_blend" => f.hsv_rgb_palette_blend = n()[0],
                "palette_mode" => f.palette_mode = if v == "linear" { PaletteMode::Linear } else { PaletteMode::Step },
                "interpolation" => {
                    f.interpolation = if v == "smooth" { Interpolation::Smooth } else { Interpolation::Linear }
                }
                "interpolation_type" => {
                    f.affine_interpolation = match v {
                        "linear" => AffineInterpolation::Linear,
                        "log" => AffineInterpolation::Log,
                        "old" => AffineInterpolation::Compat,
                        "older" => AffineInterpolation::Older,
                        _ => panic!("interpolation_type {v}"),
                    }
                }
                "palette_interpolation" => {
                    f.palette_interpolation = match v {
                        "hsv" => PaletteInterpolation::Hsv,
                        "sweep" => PaletteInterpolation::Sweep,
                        "rgb" => PaletteInterpolation::Rgb,
                        "hsv_circular" => PaletteInterpolation::HsvCircular,
                        _ => panic!("palette_interpolation {v}"),
                    }
                }
                "version" | "temporal_filter_type" => {}
                other => panic!("unexpected flame attribute {other}"),
            }
        }
        let mut colors = Vec::new();
        let mut xform_attrs = Vec::new();
        for child in node.children().filter(|c| c.is_element()) {
            match child.tag_name().name() {
                "xform" => {
                    let (x, a) = read_xform(child, f.xforms.len());
                    f.xforms.push(x);
                    xform_attrs.push(a);
                }
                "finalxform" => {
                    let (mut x, a) = read_xform(child, f.xforms.len());
                    x.chaos.clear();
                    f.final_xform = Some(x);
                    xform_attrs.push(a);
                }
                "color" => {
                    let i: usize = child.attribute("index").unwrap().parse().unwrap();
                    let (rgb, a) = match (child.attribute("rgb"), child.attribute("rgba")) {
                        (Some(s), _) => (nums(s), 255.0),
                        (None, Some(s)) => {
                            let v = nums(s);
                            (v[..3].to_vec(), v[3])
                        }
                        _ => panic!("colour without rgb"),
                    };
                    let alpha = a / 255.0;
                    let k = if premultiply { alpha } else { 1.0 };
                    f.palette.entries[i] = [k * rgb[0] / 255.0, k * rgb[1] / 255.0, k * rgb[2] / 255.0, alpha];
                    colors.push(i);
                }
                "palette" => {
                    let hex: String = child.text().unwrap().split_whitespace().collect();
                    for i in 0..256 {
                        let byte = |j: usize| u8::from_str_radix(&hex[6 * i + 2 * j..6 * i + 2 * j + 2], 16).unwrap();
                        f.palette.entries[i] =
                            [byte(0) as f64 / 255.0, byte(1) as f64 / 255.0, byte(2) as f64 / 255.0, 1.0];
                        colors.push(i);
                    }
                }
                other => panic!("unexpected element {other}"),
            }
        }
        out.push(Read { flame: f, colors, xform_attrs });
    }
    out
}

fn data(name: &str) -> String {
    let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "tests", "data", "interpolate", name].iter().collect();
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn control_points(name: &str) -> Vec<Flame> {
    read_flames(&data(&format!("{name}.in.flam3")), true).into_iter().map(|r| r.flame).collect()
}

/// Tolerance for values flam3 printed with `%g` (six significant digits).
const PRINTED: f64 = 1e-5;

#[track_caller]
fn check_value(got: f64, want: f64, what: &str, errors: &mut Vec<String>) {
    // Six significant digits, and an absolute floor for values that are
    // zero up to rounding (flam3 prints e.g. 4.3e-17 for an exact 0).
    if (got - want).abs() > PRINTED * want.abs().max(1e-1) {
        errors.push(format!("{what}: got {got}, flam3 {want}"));
    }
}

fn check_xform(got: &XForm, want: &XForm, attrs: &BTreeMap<String, String>, what: &str, errors: &mut Vec<String>) {
    if attrs.contains_key("weight") {
        check_value(got.weight, want.weight, &format!("{what} weight"), errors);
    }
    check_value(got.color, want.color, &format!("{what} color"), errors);
    check_value(got.color_speed, want.color_speed, &format!("{what} color_speed"), errors);
    if attrs.contains_key("animate") {
        check_value(got.animate, want.animate, &format!("{what} animate"), errors);
    }
    check_value(got.opacity, want.opacity, &format!("{what} opacity"), errors);
    for i in 0..3 {
        for j in 0..2 {
            check_value(got.coefs.c[i][j], want.coefs.c[i][j], &format!("{what} coefs[{i}][{j}]"), errors);
            check_value(got.post.c[i][j], want.post.c[i][j], &format!("{what} post[{i}][{j}]"), errors);
        }
    }
    let n = got.chaos.len().max(want.chaos.len());
    for j in 0..n {
        check_value(got.chaos_to(j), want.chaos_to(j), &format!("{what} chaos[{j}]"), errors);
    }
    // Variations: flam3 prints every non-zero weight (its printout skips
    // twintrian, which the data does not use) and the parameters of
    // parametric ones.
    let names = |x: &XForm| x.variations.iter().map(|v| v.kind).collect::<Vec<_>>();
    if names(got) != names(want) {
        errors.push(format!(
            "{what} variations: got {:?}, flam3 {:?}",
            got.variations.iter().map(|v| (v.kind.name(), v.weight)).collect::<Vec<_>>(),
            want.variations.iter().map(|v| (v.kind.name(), v.weight)).collect::<Vec<_>>()
        ));
        return;
    }
    for (g, w) in got.variations.iter().zip(&want.variations) {
        let name = g.kind.name();
        check_value(g.weight, w.weight, &format!("{what} {name}"), errors);
        for (p, spec) in g.kind.params().iter().enumerate() {
            if attrs.contains_key(spec.name) {
                check_value(g.params[p], w.params[p], &format!("{what} {}", spec.name), errors);
            }
        }
    }
}

/// Compares `got` with flam3's printout `want` (all printed values, the
/// palette entries present, the final xform).
fn check_flame(got: &Flame, want: &Read, what: &str, errors: &mut Vec<String>) {
    let w = &want.flame;
    let ints = [
        ("width", got.width, w.width),
        ("height", got.height, w.height),
        ("supersample", got.supersample, w.supersample),
        ("passes", got.passes, w.passes),
        ("temporal_samples", got.temporal_samples, w.temporal_samples),
    ];
    for (name, g, x) in ints {
        if g != x {
            errors.push(format!("{what} {name}: got {g}, flam3 {x}"));
        }
    }
    let reals = [
        ("center x", got.center[0], w.center[0]),
        ("center y", got.center[1], w.center[1]),
        ("scale", got.scale, w.scale),
        ("rotate", got.rotate, w.rotate),
        ("zoom", got.zoom, w.zoom),
        ("filter", got.filter_radius, w.filter_radius),
        ("quality", got.quality, w.quality),
        ("temporal_filter_width", got.temporal_filter_width, w.temporal_filter_width),
        ("background r", got.background[0], w.background[0]),
        ("background g", got.background[1], w.background[1]),
        ("background b", got.background[2], w.background[2]),
        ("brightness", got.brightness, w.brightness),
        ("gamma", got.gamma, w.gamma),
        ("highlight_power", got.highlight_power, w.highlight_power),
        ("vibrancy", got.vibrancy, w.vibrancy),
        ("estimator_radius", got.estimator_radius, w.estimator_radius),
        ("estimator_minimum", got.estimator_minimum, w.estimator_minimum),
        ("estimator_curve", got.estimator_curve, w.estimator_curve),
        ("gamma_threshold", got.gamma_threshold, w.gamma_threshold),
    ];
    for (name, g, x) in reals {
        check_value(g, x, &format!("{what} {name}"), errors);
    }
    if got.filter_shape != w.filter_shape {
        errors.push(format!("{what} filter_shape: got {:?}, flam3 {:?}", got.filter_shape, w.filter_shape));
    }
    if got.palette_mode != w.palette_mode {
        errors.push(format!("{what} palette_mode"));
    }
    if got.palette_interpolation != w.palette_interpolation {
        errors.push(format!("{what} palette_interpolation: got {:?}", got.palette_interpolation));
    }
    if w.palette_interpolation == PaletteInterpolation::HsvCircular {
        check_value(got.hsv_rgb_palette_blend, w.hsv_rgb_palette_blend, &format!("{what} hsv_rgb blend"), errors);
    }
    // (flam3-genome prints interpolation_type "linear" for most frames of
    // an animation, whatever the interpolation used: not compared.)

    if got.xforms.len() != w.xforms.len() || got.final_xform.is_some() != w.final_xform.is_some() {
        errors.push(format!(
            "{what}: {} xforms (final: {}), flam3 {} (final: {})",
            got.xforms.len(),
            got.final_xform.is_some(),
            w.xforms.len(),
            w.final_xform.is_some()
        ));
        return;
    }
    for (i, (g, x)) in got.xforms.iter().zip(&w.xforms).enumerate() {
        check_xform(g, x, &want.xform_attrs[i], &format!("{what} xform {i}"), errors);
    }
    if let (Some(g), Some(x)) = (&got.final_xform, &w.final_xform) {
        check_xform(g, x, want.xform_attrs.last().unwrap(), &format!("{what} final"), errors);
    }
    for &i in &want.colors {
        for ch in 0..4 {
            // flam3 prints 255·value with six digits.
            let (g, x) = (got.palette.entries[i][ch] * 255.0, w.palette.entries[i][ch] * 255.0);
            if (g - x).abs() > 1e-3 {
                errors.push(format!("{what} palette[{i}][{ch}]: got {g}, flam3 {x}"));
            }
        }
    }
}

#[track_caller]
fn report(errors: Vec<String>, checked: usize) {
    assert!(checked > 0, "nothing compared");
    assert!(errors.is_empty(), "{} differences from flam3:\n{}", errors.len(), errors.join("\n"));
}

/// Compares `interpolate` with flam3-genome's `animate=` output for `name`:
/// every frame that is not a control point (those flam3-genome copies).
fn compare_animation(name: &str, stagger: f64) {
    let cps = control_points(name);
    let frames = read_flames(&data(&format!("{name}.out.flam3")), false);
    let mut errors = Vec::new();
    let mut checked = 0;
    for want in &frames {
        let t = want.flame.time;
        if cps.iter().any(|c| c.time == t) {
            continue;
        }
        let got = interpolate_with_stagger(&cps, t, stagger);
        check_flame(&got, want, &format!("{name} t={t}"), &mut errors);
        checked += 1;
    }
    report(errors, checked);
}

#[test]
fn flam3_basic() {
    // Extrapolation before and after, xform count 3+final vs 2, chaos,
    // parameters carried over (julian), spherical facing padding, posts,
    // hsv_circular mixed with RGB by 0.25.
    compare_animation("basic", 0.0);
}

#[test]
fn flam3_padding_log() {
    compare_animation("padding", 0.0);
}

#[test]
fn flam3_padding_linear() {
    compare_animation("padding_linear", 0.0);
}

#[test]
fn flam3_compat() {
    compare_animation("compat", 0.0);
}

#[test]
fn flam3_palettes() {
    for mode in ["hsv", "hsv_circular", "rgb", "sweep"] {
        compare_animation(&format!("palette_{mode}"), 0.0);
    }
}

#[test]
fn flam3_smooth() {
    compare_animation("smooth", 0.0);
}

#[test]
fn flam3_stagger() {
    compare_animation("stagger", 0.6);
}

/// flam3-genome's `sequence=` with nframes=4 and loops: per control point
/// four loop frames (`sheep_loop`), then four transition frames to the
/// next one (`sheep_edge`; the first is the control point itself), and a
/// last loop frame at blend 0.
#[test]
fn flam3_sequence() {
    compare_sequence("sequence", &control_points("sequence"), 4);
}

/// The same with `<motion>` elements (motion.in.flam3, nframes=5): several
/// per xform, each with its own function and frequency (the hill function
/// where none is named), changes of weights, colour (clamped), opacity,
/// colour speed, affine and post maps, variation weights (a variation the
/// xform lacks among them) and parameters, and on the final xform.
/// flam3-genome applies them to loop and transition frames alike.
#[test]
fn flam3_sequence_with_motion() {
    // This file's reader leaves motion elements out: warpmc's reads them.
    let parsed = warpmc_flame::genome::parse_str(&data("motion.in.flam3"), "motion.in.flam3", &Default::default());
    let cps = parsed.unwrap().flames;
    assert_eq!(cps[0].xforms[0].motion.len(), 2);
    assert_eq!(cps[0].final_xform.as_ref().unwrap().motion.len(), 1);
    compare_sequence("motion", &cps, 5);
}

fn compare_sequence(name: &str, cps: &[Flame], nframes: usize) {
    let frames = read_flames(&data(&format!("{name}.out.flam3")), false);
    let mut expected: Vec<(String, Flame)> = Vec::new();
    for (i, cp) in cps.iter().enumerate() {
        for k in 0..nframes {
            let blend = k as f64 / nframes as f64;
            expected.push((format!("loop {i} {blend}"), sheep_loop(cp, blend)));
        }
        if i + 1 < cps.len() {
            for k in 0..nframes {
                let blend = k as f64 / nframes as f64;
                let seq = k == 0 || k == nframes - 1;
                expected.push((format!("edge {i} {blend}"), sheep_edge(cp, &cps[i + 1], blend, 0.0, seq)));
            }
        }
    }
    expected.push(("last".into(), sheep_loop(cps.last().unwrap(), 0.0)));
    assert_eq!(frames.len(), expected.len());
    let mut errors = Vec::new();
    for (want, (what, got)) in frames.iter().zip(&expected) {
        // flam3-genome sets these on loop frames.
        let mut got = got.clone();
        if what.starts_with("loop") || what == "last" {
            got.palette_interpolation = PaletteInterpolation::HsvCircular;
            got.hsv_rgb_palette_blend = 0.0;
        }
        check_flame(&got, want, what, &mut errors);
    }
    report(errors, expected.len());
}

/// Fractorium's curves between keyframes: each point blended where the
/// curves have the same numbers of points (as Fractorium assumes), else the
/// first keyframe's.
#[test]
fn curves_blend_point_by_point() {
    let with_red = |t: f64, y: f64, n: usize| {
        let mut f = flame_at(t, vec![xf(1.0, [1.0, 0.0, 0.0, 1.0, 0.0, 0.0], vec![plain(0, 1.0)])]);
        let mut red = vec![[0.0, 0.0], [0.5, y], [1.0, 1.0]];
        red.truncate(n);
        let d = warpmc_flame::genome::Curves::DEFAULT.to_vec();
        f.curves = Some(warpmc_flame::genome::Curves { points: [d.clone(), red, d.clone(), d] });
        f
    };
    let mid = interpolate(&[with_red(0.0, 0.2, 3), with_red(2.0, 0.6, 3)], 1.0);
    assert_close(mid.curves.unwrap().points[1][1][1], 0.4, 1e-12, "red curve's middle point");
    let mixed = interpolate(&[with_red(0.0, 0.2, 3), with_red(2.0, 0.6, 2)], 1.0);
    assert_eq!(mixed.curves.unwrap().points[1][1], [0.5, 0.2], "the first keyframe's");
}
