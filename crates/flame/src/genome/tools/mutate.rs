//! Mutation (flam3's `flam3_mutate`): one of seven changes to a flame.

use super::random::{RandomOptions, random_palette, random_unframed_for};
use super::{GenomeRng, random_symmetry, symmetry_xforms, symmetry_xforms_before_final};
use crate::error::{FlameError, Result};
use crate::genome::{Flame, XForm};
use crate::palette::PaletteLibrary;

/// flam3's mutation kinds (flam3-genome's `method=` for `mutate=`).
///
/// As in flam3, whose final xform is the last of the flame's xforms and
/// counted with them, the final xform is one of the xforms that
/// `all_vars`, `one_xform`, `post_xforms`, `delete_xform` and `all_coefs`
/// change or pick.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MutateMethod {
    /// `all_vars`: every xform, the final one included, gets the
    /// variations (and parameters) of a random flame with as many xforms.
    AllVariations,
    /// `one_xform`: one xform (possibly the final one) gets a random
    /// affine map (only its translation when the flame has at most two
    /// xforms, the final one counted).
    OneXformCoefs,
    /// `add_symmetry`: a symmetry group is added: the options' `symmetry`
    /// where it is not 0, else a random one (flam3-genome's, which always
    /// picks at random).
    AddSymmetry,
    /// `post_xforms`: each xform's pre map is rotated, scaled or moved and
    /// its post map undoes part of it.
    PostXforms,
    /// `color_palette`: a new random palette, turned by the flame's hue.
    ///
    /// flam3 does this a fifth of the time ("mutate color palette"); the
    /// other four fifths ("mutate color coords", "mutate color all") it
    /// tries random colour coordinates (and palettes) with
    /// `flam3_improve_colors`, whose score is an integer division that is
    /// 0 for every candidate, so the flame always comes back unchanged.
    /// Those do-nothing branches are not reproduced: this method always
    /// changes the palette.
    ColorPalette,
    /// `delete_xform`: one xform is removed (unless it is the only one);
    /// picking the final xform removes the final xform.
    DeleteXform,
    /// `all_coefs`: every affine coefficient, the final xform's included,
    /// moves by `speed` times a random one.
    AllCoefs,
}

impl MutateMethod {
    /// All seven, with flam3-genome's names.
    pub const ALL: [(&'static str, MutateMethod); 7] = [
        ("all_vars", MutateMethod::AllVariations),
        ("one_xform", MutateMethod::OneXformCoefs),
        ("add_symmetry", MutateMethod::AddSymmetry),
        ("post_xforms", MutateMethod::PostXforms),
        ("color_palette", MutateMethod::ColorPalette),
        ("delete_xform", MutateMethod::DeleteXform),
        ("all_coefs", MutateMethod::AllCoefs),
    ];

    /// flam3's choice when no method is given: 10 % all_vars, 20 %
    /// one_xform, 20 % add_symmetry, 10 % post_xforms, 10 % color_palette,
    /// 10 % delete_xform, 20 % all_coefs.
    fn random(rng: &mut GenomeRng) -> Self {
        let s = rng.r01();
        match s {
            s if s < 0.1 => MutateMethod::AllVariations,
            s if s < 0.3 => MutateMethod::OneXformCoefs,
            s if s < 0.5 => MutateMethod::AddSymmetry,
            s if s < 0.6 => MutateMethod::PostXforms,
            s if s < 0.7 => MutateMethod::ColorPalette,
            s if s < 0.8 => MutateMethod::DeleteXform,
            _ => MutateMethod::AllCoefs,
        }
    }
}

/// `flame` mutated by `method` (a random one when `None`, with flam3's
/// probabilities); `opts` says which variations random parts may use and
/// `speed` how far `all_coefs` moves (flam3's default 0.1). Returns the
/// mutant and the method used. flam3-genome's test render and retries are
/// [`until_it_passes`](super::until_it_passes)'s.
pub fn mutate(
    flame: &Flame,
    method: Option<MutateMethod>,
    opts: &RandomOptions,
    speed: f64,
    library: Option<&PaletteLibrary>,
    rng: &mut GenomeRng,
) -> Result<(Flame, MutateMethod)> {
    if flame.xforms.is_empty() {
        return Err(FlameError::invalid("a flame without xforms cannot be mutated"));
    }
    opts.check()?;
    let Some(method) = method else {
        // A random method that cannot apply (no xform may be deleted) is
        // drawn again, as flam3-genome tries another mutation.
        loop {
            let m = MutateMethod::random(rng);
            match mutate(flame, Some(m), opts, speed, library, rng) {
                Err(_) if m == MutateMethod::DeleteXform => continue,
                result => return result,
            }
        }
    };
    let mut f = flame.clone();
    // flam3's count of xforms: the final xform is the last of them.
    let n = all_xforms(&f);
    match method {
        MutateMethod::AllVariations => {
            let other = random_unframed_for(&f, n, opts, library, rng);
            for (i, y) in other.xforms.iter().take(n).enumerate() {
                xform_mut(&mut f, i).variations = y.variations.clone();
            }
        }
        MutateMethod::OneXformCoefs => {
            let other = random_unframed_for(&f, 2, opts, library, rng);
            let k = rng.below(n);
            let src = other.xforms[0].coefs.c;
            let x = xform_mut(&mut f, k);
            if n <= 2 {
                x.coefs.c[2] = src[2];
            } else {
                x.coefs.c = src;
            }
        }
        MutateMethod::AddSymmetry => {
            let k = if opts.symmetry != 0 { opts.symmetry } else { random_symmetry(rng) };
            if k != 0 && k != 1 {
                // In flam3's order beside a final xform, where that keeps
                // the final xform final.
                let added = f.final_xform.as_ref().and_then(|fx| symmetry_xforms_before_final(k, fx));
                f.xforms.extend(added.unwrap_or_else(|| symmetry_xforms(k)));
            }
        }
        MutateMethod::PostXforms => post_xforms(&mut f, rng),
        MutateMethod::ColorPalette => {
            // flam3's "mutate color palette": a random palette of the
            // library, turned by the flame's own hue (see the method's
            // documentation for the branches left out).
            f.palette = random_palette(library, f.hue_rotation, rng);
        }
        MutateMethod::DeleteXform => {
            let k = rng.below(n);
            if n > 1 {
                // flam3-genome test-renders a mutant and tries again when it
                // fails; a deletion that leaves no standard xform, or some
                // xform's chaos row with no xform to go to, is such a
                // failure, so the next xform (in flam3's order, the final
                // one last) whose deletion leaves neither is taken instead.
                let without = |k: usize| {
                    let mut g = f.clone();
                    delete_xform(&mut g, k);
                    g
                };
                f = (0..n)
                    .map(|i| without((k + i) % n))
                    .find(|g| !g.xforms.is_empty() && g.dead_chaos_rows().next().is_none())
                    .ok_or_else(|| {
                        FlameError::invalid(
                            "no xform can be deleted without leaving another whose chaos row reaches no xform",
                        )
                    })?;
            }
        }
        MutateMethod::AllCoefs => {
            let other = random_unframed_for(&f, n, opts, library, rng);
            for (i, y) in other.xforms.iter().take(n).enumerate() {
                for (row, dr) in xform_mut(&mut f, i).coefs.c.iter_mut().zip(&y.coefs.c) {
                    for (v, d) in row.iter_mut().zip(dr) {
                        *v += speed * d;
                    }
                }
            }
        }
    }
    Ok((f, method))
}

/// The flame's xforms as flam3 counts them: the standard ones and the
/// final one.
fn all_xforms(f: &Flame) -> usize {
    f.xforms.len() + usize::from(f.final_xform.is_some())
}

/// Xform `i` in flam3's order: the standard xforms, then the final one.
fn xform_mut(f: &mut Flame, i: usize) -> &mut XForm {
    match f.xforms.get_mut(i) {
        Some(x) => x,
        None => f.final_xform.as_mut().expect("an xform index below all_xforms"),
    }
}

/// Removes xform `k` (in flam3's order: the final xform after the standard
/// ones) and, for a standard xform, its column of every chaos row.
fn delete_xform(f: &mut Flame, k: usize) {
    if k == f.xforms.len() {
        f.final_xform = None;
        return;
    }
    f.xforms.remove(k);
    for x in &mut f.xforms {
        if x.chaos.len() > k {
            x.chaos.remove(k);
        }
    }
}

/// flam3's post-map mutation: a random subset of rotation (pre by `φ`,
/// post by `−φ`), scaling (pre by `1/f, 1/g`, post by `f, g`) and
/// translation (pre by `−t`, post by `+t`) of the first xform; three
/// times in four every other xform (the final one included) then takes the
/// first xform's new post map (their pre maps unchanged), otherwise each
/// is changed in the same way with its own random numbers.
fn post_xforms(f: &mut Flame, rng: &mut GenomeRng) {
    let b = 1 + rng.below(6);
    let same = rng.below(4) != 0;
    for i in 0..all_xforms(f) {
        if i > 0 && same {
            // The first xform's post map as this mutation left it, as in
            // flam3: every xform then shares the new post map.
            let post = f.xforms[0].post;
            xform_mut(f, i).post = post;
            continue;
        }
        let x = xform_mut(f, i);
        let rot = |m: &mut [[f64; 2]; 3], phi: f64| {
            let (s, c) = phi.sin_cos();
            for row in m.iter_mut().take(2) {
                let (a, d) = (row[0], row[1]);
                *row = [a * c - d * s, a * s + d * c];
            }
        };
        if b & 1 != 0 {
            let phi = std::f64::consts::PI * rng.r11();
            rot(&mut x.coefs.c, phi);
            rot(&mut x.post.c, -phi);
        }
        if b & 2 != 0 {
            let mut fx = 0.2 + rng.r01();
            let mut gy = 0.2 + rng.r01();
            if rng.bit() {
                fx = 1.0 / fx;
            }
            if rng.bit() {
                gy = fx;
            } else if rng.bit() {
                gy = 1.0 / gy;
            }
            x.coefs.c[0][0] /= fx;
            x.coefs.c[0][1] /= fx;
            x.coefs.c[1][1] /= gy;
            x.coefs.c[1][0] /= gy;
            x.post.c[0][0] *= fx;
            x.post.c[1][0] *= fx;
            x.post.c[0][1] *= gy;
            x.post.c[1][1] *= gy;
        }
        if b & 4 != 0 {
            let (tx, ty) = (rng.r11(), rng.r11());
            x.coefs.c[2][0] -= tx;
            x.coefs.c[2][1] -= ty;
            x.post.c[2][0] += tx;
            x.post.c[2][1] += ty;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::genome::tools::{Operation, random};
    use crate::genome::{Affine, XForm};
    use crate::variations::{VariationKind, VariationSpec};

    fn parent() -> Flame {
        let opts = RandomOptions { xforms: Some(3), symmetry: 1, tries: 0, ..RandomOptions::default() };
        random(&Flame::default(), &opts, None, &mut GenomeRng::new(11, Operation::Random, 0)).unwrap()
    }

    #[test]
    fn each_method_changes_what_it_names_and_nothing_else() {
        let p = parent();
        let opts = RandomOptions::default();
        for (name, m) in MutateMethod::ALL {
            let mut rng = GenomeRng::new(2, Operation::Mutate, 0);
            let (c, used) = mutate(&p, Some(m), &opts, 0.1, None, &mut rng).unwrap();
            assert_eq!(used, m);
            assert_eq!(c.center, p.center, "{name}");
            match m {
                MutateMethod::DeleteXform => assert_eq!(c.xforms.len(), p.xforms.len() - 1),
                MutateMethod::AddSymmetry => {
                    assert!(c.xforms.len() >= p.xforms.len(), "{name}");
                    // A group asked for is the one added: 3-fold rotation
                    // adds two xforms, with a mirror one more.
                    for (k, added) in [(3, 2), (-3, 3), (1, 0)] {
                        let asked = RandomOptions { symmetry: k, ..RandomOptions::default() };
                        let (c, _) = mutate(&p, Some(m), &asked, 0.1, None, &mut rng).unwrap();
                        assert_eq!(c.xforms.len(), p.xforms.len() + added, "{k}");
                    }
                }
                MutateMethod::ColorPalette => {
                    assert_ne!(c.palette, p.palette, "{name}");
                    assert_eq!(c.xforms, p.xforms, "{name}");
                }
                MutateMethod::AllVariations => {
                    assert!(c.xforms.iter().zip(&p.xforms).any(|(a, b)| a.variations != b.variations));
                    assert!(c.xforms.iter().zip(&p.xforms).all(|(a, b)| a.coefs == b.coefs));
                }
                _ => {
                    assert_eq!(c.xforms.len(), p.xforms.len(), "{name}");
                    assert!(c.xforms.iter().zip(&p.xforms).any(|(a, b)| a.coefs != b.coefs), "{name}");
                    assert!(c.xforms.iter().zip(&p.xforms).all(|(a, b)| a.variations == b.variations), "{name}");
                }
            }
        }
    }

    /// A deletion that would leave an xform whose chaos row reaches no
    /// other (flam3-render refuses that flame) deletes another xform; when
    /// every deletion would, the mutation is refused.
    #[test]
    fn deleting_an_xform_never_leaves_a_dead_chaos_row() {
        let mut p = parent();
        // xform 0 goes only to xform 1: deleting xform 1 would strand it.
        p.xforms[0].chaos = vec![0.0, 1.0, 0.0];
        let opts = RandomOptions::default();
        let mut deleted = [0; 3];
        for seed in 0..60 {
            let mut rng = GenomeRng::new(seed, Operation::Mutate, 0);
            let (c, _) = mutate(&p, Some(MutateMethod::DeleteXform), &opts, 0.1, None, &mut rng).unwrap();
            assert_eq!(c.xforms.len(), 2);
            assert_eq!(c.dead_chaos_rows().count(), 0, "seed {seed}");
            let gone = (0..3).find(|&k| !c.xforms.iter().any(|x| x.coefs == p.xforms[k].coefs)).unwrap();
            deleted[gone] += 1;
        }
        assert_eq!(deleted[1], 0, "{deleted:?}");
        assert!(deleted[0] > 0 && deleted[2] > 0, "{deleted:?}");
        // Two xforms that only go to each other: either deletion strands
        // the other.
        let mut q = parent();
        q.xforms.truncate(2);
        q.xforms[0].chaos = vec![0.0, 1.0];
        q.xforms[1].chaos = vec![1.0, 0.0];
        let mut rng = GenomeRng::new(1, Operation::Mutate, 0);
        let e = mutate(&q, Some(MutateMethod::DeleteXform), &opts, 0.1, None, &mut rng).unwrap_err();
        assert!(e.to_string().contains("chaos row"), "{e}");
        // A random method is drawn again instead.
        for seed in 0..40 {
            let mut rng = GenomeRng::new(seed, Operation::Mutate, 0);
            let (c, m) = mutate(&q, None, &opts, 0.1, None, &mut rng).unwrap();
            assert!(m != MutateMethod::DeleteXform && c.xforms.len() >= 2, "seed {seed}");
        }
    }

    #[test]
    fn post_xforms_shares_the_first_xforms_new_post_map_or_changes_each() {
        let p = parent();
        let opts = RandomOptions::default();
        let (mut shared, mut each) = (0, 0);
        for seed in 0..40 {
            let mut rng = GenomeRng::new(seed, Operation::Mutate, 0);
            let (c, _) = mutate(&p, Some(MutateMethod::PostXforms), &opts, 0.1, None, &mut rng).unwrap();
            assert_ne!(c.xforms[0].post, p.xforms[0].post, "seed {seed}");
            let rest_kept = c.xforms[1..].iter().zip(&p.xforms[1..]).all(|(a, b)| a.coefs == b.coefs);
            if rest_kept {
                shared += 1;
                assert!(c.xforms[1..].iter().all(|x| x.post == c.xforms[0].post), "seed {seed}");
            } else {
                each += 1;
                assert!(c.xforms.iter().zip(&p.xforms).all(|(a, b)| a.coefs != b.coefs), "seed {seed}");
            }
        }
        // flam3 shares three times in four.
        assert!(shared > each && each > 0, "{shared} shared, {each} each");
    }

    /// `parent()` with a final xform (spherical, colour 0.37, an identity
    /// post map).
    fn parent_with_final() -> Flame {
        let spherical = VariationKind::from_name("spherical").unwrap();
        Flame {
            final_xform: Some(XForm {
                color: 0.37,
                coefs: Affine { c: [[0.9, 0.1], [-0.1, 0.9], [0.05, 0.0]] },
                variations: vec![VariationSpec::new(spherical, 1.0)],
                ..XForm::flam3_default(3)
            }),
            ..parent()
        }
    }

    /// In flam3 the final xform is the last of the flame's xforms and
    /// counted with them: all_vars, all_coefs and post_xforms change it,
    /// one_xform and delete_xform pick it as one of n + 1.
    #[test]
    fn mutations_treat_the_final_xform_as_one_of_the_xforms() {
        let p = parent_with_final();
        let fin = p.final_xform.clone().unwrap();
        let opts = RandomOptions::default();
        let (mut picked, mut deleted_final) = (0, 0);
        for seed in 0..60 {
            let run = |m| {
                let mut rng = GenomeRng::new(seed, Operation::Mutate, 0);
                mutate(&p, Some(m), &opts, 0.1, None, &mut rng).unwrap().0
            };
            let c = run(MutateMethod::AllVariations);
            let cf = c.final_xform.unwrap();
            assert_ne!(cf.variations, fin.variations, "seed {seed}");
            assert_eq!(cf.coefs, fin.coefs, "seed {seed}");

            let c = run(MutateMethod::AllCoefs);
            let cf = c.final_xform.unwrap();
            assert_ne!(cf.coefs, fin.coefs, "seed {seed}");
            assert_eq!(cf.variations, fin.variations, "seed {seed}");

            let c = run(MutateMethod::PostXforms);
            let cf = c.final_xform.as_ref().unwrap();
            assert_ne!(cf.post, fin.post, "seed {seed}");
            // Shared (the final's pre map kept) or changed like the others.
            assert!(cf.post == c.xforms[0].post && cf.coefs == fin.coefs || cf.coefs != fin.coefs, "seed {seed}");

            let c = run(MutateMethod::OneXformCoefs);
            let changed = c.xforms.iter().zip(&p.xforms).filter(|(a, b)| a.coefs != b.coefs).count();
            if c.final_xform.as_ref().unwrap().coefs != fin.coefs {
                picked += 1;
                assert_eq!(changed, 0, "seed {seed}: one xform only");
            } else {
                assert_eq!(changed, 1, "seed {seed}");
            }

            let c = run(MutateMethod::DeleteXform);
            match c.final_xform {
                None => {
                    deleted_final += 1;
                    assert_eq!(c.xforms, p.xforms, "seed {seed}");
                }
                Some(f) => {
                    assert_eq!(f, fin, "seed {seed}");
                    assert_eq!(c.xforms.len(), 2, "seed {seed}");
                }
            }
        }
        // One time in four of the 60 (15 expected).
        assert!((5..=28).contains(&picked), "the final xform's coefs picked {picked} times of 60");
        assert!((5..=28).contains(&deleted_final), "the final xform deleted {deleted_final} times of 60");
    }

    /// With one standard xform and a final one, deleting the standard
    /// xform would leave none: the final xform goes instead. With two
    /// xforms counted, one_xform moves only the translation (flam3's rule
    /// for at most two).
    #[test]
    fn a_flame_of_one_xform_and_a_final_keeps_its_xform() {
        let mut p = parent_with_final();
        p.xforms.truncate(1);
        let opts = RandomOptions::default();
        for seed in 0..20 {
            let mut rng = GenomeRng::new(seed, Operation::Mutate, 0);
            let (c, _) = mutate(&p, Some(MutateMethod::DeleteXform), &opts, 0.1, None, &mut rng).unwrap();
            assert!(c.final_xform.is_none() && c.xforms == p.xforms, "seed {seed}");
            let mut rng = GenomeRng::new(seed, Operation::Mutate, 0);
            let (c, _) = mutate(&p, Some(MutateMethod::OneXformCoefs), &opts, 0.1, None, &mut rng).unwrap();
            for (a, b) in c.xforms.iter().chain(&c.final_xform).zip(p.xforms.iter().chain(&p.final_xform)) {
                assert_eq!(a.coefs.c[..2], b.coefs.c[..2], "seed {seed}: the linear parts are kept");
            }
        }
    }

    /// flam3's "mutate color palette": a palette of the library turned by
    /// the flame's own hue; the xforms' colours are left alone.
    #[test]
    fn color_palette_takes_a_library_palette_turned_by_the_flames_hue() {
        let data = |k: usize| -> String { (0..256).map(|i| format!("00{:02x}{:02x}40 ", i, (i * k) % 256)).collect() };
        let xml = format!(
            r#"<palettes><palette number="1" data="{}"/><palette number="2" data="{}"/></palettes>"#,
            data(3),
            data(7)
        );
        let lib = PaletteLibrary::from_xml(&xml, std::path::Path::new("mem")).unwrap();
        let mut p = parent();
        p.hue_rotation = 0.3;
        let opts = RandomOptions::default();
        let mut seen = [false; 2];
        for seed in 0..20 {
            let mut rng = GenomeRng::new(seed, Operation::Mutate, 0);
            let (c, _) = mutate(&p, Some(MutateMethod::ColorPalette), &opts, 0.1, Some(&lib), &mut rng).unwrap();
            assert_eq!(c.xforms, p.xforms);
            assert_eq!(c.hue_rotation, 0.3);
            let which = [1, 2].iter().position(|&n| lib.get(n).unwrap().rotate_hue(0.3) == c.palette);
            seen[which.expect("a library palette turned by the flame's hue")] = true;
        }
        assert_eq!(seen, [true, true]);
    }

    /// all_vars draws the variations of a random flame, which flam3-genome
    /// makes with its explicit list of variations: each xform a mix, not
    /// one variation for all.
    #[test]
    fn all_vars_gives_mixes_of_variations() {
        let p = parent();
        let opts = RandomOptions::default();
        let mut one_same = 0;
        for seed in 0..100 {
            let mut rng = GenomeRng::new(seed, Operation::Mutate, 0);
            let (c, _) = mutate(&p, Some(MutateMethod::AllVariations), &opts, 0.1, None, &mut rng).unwrap();
            let kinds = |x: &XForm| x.variations.iter().map(|v| v.kind).collect::<Vec<_>>();
            let first = kinds(&c.xforms[0]);
            one_same += usize::from(first.len() == 1 && c.xforms.iter().all(|x| kinds(x) == first));
        }
        assert!(one_same < 5, "{one_same} of 100 mutants have one same variation in every xform");
    }
}
