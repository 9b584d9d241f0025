//! Mutation (flam3's `flam3_mutate`): one of seven changes to a flame.

use super::random::{RandomOptions, random_unframed_for};
use super::{GenomeRng, random_symmetry, symmetry_xforms, symmetry_xforms_before_final};
use crate::error::{FlameError, Result};
use crate::genome::Flame;
use crate::palette::PaletteLibrary;

/// flam3's mutation kinds (flam3-genome's `method=` for `mutate=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MutateMethod {
    /// `all_vars`: every xform gets the variations (and parameters) of a
    /// random flame with as many xforms.
    AllVariations,
    /// `one_xform`: one xform gets a random affine map (only its
    /// translation when the flame has at most two xforms).
    OneXformCoefs,
    /// `add_symmetry`: a random symmetry group is added.
    AddSymmetry,
    /// `post_xforms`: each xform's pre map is rotated, scaled or moved and
    /// its post map undoes part of it.
    PostXforms,
    /// `color_palette`: new colour coordinates, a new palette, or both.
    ColorPalette,
    /// `delete_xform`: one xform is removed (unless it is the only one).
    DeleteXform,
    /// `all_coefs`: every affine coefficient moves by `speed` times a
    /// random one.
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
/// mutant and the method used.
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
    let n = f.xforms.len();
    match method {
        MutateMethod::AllVariations => {
            let other = random_unframed_for(&f, n, opts, library, rng);
            for (x, y) in f.xforms.iter_mut().zip(&other.xforms) {
                x.variations = y.variations.clone();
            }
        }
        MutateMethod::OneXformCoefs => {
            let other = random_unframed_for(&f, 2, opts, library, rng);
            let k = rng.below(n);
            let src = other.xforms[0].coefs.c;
            if n <= 2 {
                f.xforms[k].coefs.c[2] = src[2];
            } else {
                f.xforms[k].coefs.c = src;
            }
        }
        MutateMethod::AddSymmetry => {
            let k = random_symmetry(rng);
            if k != 0 && k != 1 {
                // In flam3's order beside a final xform, where that keeps
                // the final xform final.
                let added = f.final_xform.as_ref().and_then(|fx| symmetry_xforms_before_final(k, fx));
                f.xforms.extend(added.unwrap_or_else(|| symmetry_xforms(k)));
            }
        }
        MutateMethod::PostXforms => post_xforms(&mut f, rng),
        MutateMethod::ColorPalette => {
            let s = rng.r01();
            if s < 0.8 {
                for x in &mut f.xforms {
                    x.color = rng.r01();
                }
            }
            if s >= 0.4 {
                let other = random_unframed_for(&f, 1, opts, library, rng);
                f.palette = other.palette;
                f.hue_rotation = other.hue_rotation;
            }
        }
        MutateMethod::DeleteXform => {
            let k = rng.below(n);
            if n > 1 {
                // flam3-genome test-renders a mutant and tries again when it
                // fails; a deletion that leaves some xform's chaos row with
                // no xform to go to is such a failure, so the next xform
                // whose deletion leaves none is taken instead.
                let without = |k: usize| {
                    let mut g = f.clone();
                    delete_xform(&mut g, k);
                    g
                };
                f = (0..n).map(|i| without((k + i) % n)).find(|g| g.dead_chaos_rows().next().is_none()).ok_or_else(
                    || {
                        FlameError::invalid(
                            "no xform can be deleted without leaving another whose chaos row reaches no xform",
                        )
                    },
                )?;
            }
        }
        MutateMethod::AllCoefs => {
            let other = random_unframed_for(&f, n, opts, library, rng);
            for (x, y) in f.xforms.iter_mut().zip(&other.xforms) {
                for (row, dr) in x.coefs.c.iter_mut().zip(&y.coefs.c) {
                    for (v, d) in row.iter_mut().zip(dr) {
                        *v += speed * d;
                    }
                }
            }
        }
    }
    Ok((f, method))
}

/// Removes xform `k` and its column of every chaos row.
fn delete_xform(f: &mut Flame, k: usize) {
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
/// times in four every other xform then takes the first xform's new post
/// map (their pre maps unchanged), otherwise each is changed in the same
/// way with its own random numbers.
fn post_xforms(f: &mut Flame, rng: &mut GenomeRng) {
    let b = 1 + rng.below(6);
    let same = rng.below(4) != 0;
    for i in 0..f.xforms.len() {
        if i > 0 && same {
            // The first xform's post map as this mutation left it, as in
            // flam3: every xform then shares the new post map.
            f.xforms[i].post = f.xforms[0].post;
            continue;
        }
        let x = &mut f.xforms[i];
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
                MutateMethod::AddSymmetry => assert!(c.xforms.len() >= p.xforms.len(), "{name}"),
                MutateMethod::ColorPalette => {
                    let colors = |f: &Flame| f.xforms.iter().map(|x| x.color).collect::<Vec<_>>();
                    assert!(colors(&c) != colors(&p) || c.palette != p.palette, "{name} changed nothing");
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
}
