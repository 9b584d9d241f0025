//! Crossing two flames (flam3's `flam3_cross`).

use super::GenomeRng;
use crate::error::{FlameError, Result};
use crate::genome::{Flame, XForm};
use crate::interpolate::interpolate;

/// flam3's crossing methods (flam3-genome's `method=` for `cross0=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CrossMethod {
    /// `union`: the first parent's xforms, then the second's (the final
    /// xform is the first parent's).
    Union,
    /// `interpolate`: the flame at a random point between the parents.
    Interpolate,
    /// `alternate`: one parent's flame with each xform taken at random
    /// from either parent, until both parents contribute.
    Alternate,
}

impl CrossMethod {
    /// All three, with flam3-genome's names.
    pub const ALL: [(&'static str, CrossMethod); 3] = [
        ("union", CrossMethod::Union),
        ("interpolate", CrossMethod::Interpolate),
        ("alternate", CrossMethod::Alternate),
    ];
}

/// A child of two flames, and how it was made.
#[derive(Debug, Clone, PartialEq)]
pub struct Crossed {
    /// The child.
    pub flame: Flame,
    /// The method used (flam3's random choice, where none was given).
    pub method: CrossMethod,
    /// Where an interpolation blended the parents (0 the first, 1 the
    /// second): the point given, or the one drawn; `None` for the other
    /// methods.
    pub at: Option<f64>,
}

/// The child of `p0` and `p1` by `method` (flam3's choice when `None`:
/// 10 % union, 10 % interpolate, 80 % alternate), and how it was made.
/// `Interpolate` with a given `t` blends at `t` (0 gives `p0`, 1 gives
/// `p1`); without, at a random point. Colour coordinates are reset to the
/// xform parity (the final xform's by its place after the standard ones,
/// as in flam3), and 40 % of the time the palettes are crossed: entries
/// from one parent, switching parent with probability 1 % per entry.
/// flam3-genome's test render and retries are
/// [`until_it_passes`](super::until_it_passes)'s.
pub fn cross(
    p0: &Flame,
    p1: &Flame,
    method: Option<CrossMethod>,
    t: Option<f64>,
    rng: &mut GenomeRng,
) -> Result<Crossed> {
    if p0.xforms.is_empty() || p1.xforms.is_empty() {
        return Err(FlameError::invalid("a parent has no xforms"));
    }
    let method = method.unwrap_or_else(|| {
        let s = rng.r01();
        if s < 0.1 {
            CrossMethod::Union
        } else if s < 0.2 {
            CrossMethod::Interpolate
        } else {
            CrossMethod::Alternate
        }
    });
    let mut at = None;
    let mut out = match method {
        CrossMethod::Union => {
            // flam3 keeps one chaos matrix per flame: the first parent's,
            // with ones wherever the second parent's xforms come in.
            let mut out = p0.clone();
            out.xforms.extend(p1.xforms.iter().map(|x| XForm { chaos: Vec::new(), ..x.clone() }));
            out
        }
        CrossMethod::Interpolate => {
            let t = t.unwrap_or_else(|| rng.r01());
            at = Some(t);
            let a = Flame { time: 0.0, ..p0.clone() };
            let b = Flame { time: 1.0, ..p1.clone() };
            // The ends are the parents themselves (interpolation would
            // normalise them on the way).
            if t == 0.0 {
                return Ok(Crossed { flame: p0.clone(), method, at });
            }
            if t == 1.0 {
                return Ok(Crossed { flame: p1.clone(), method, at });
            }
            let mut out = interpolate(&[a, b], t);
            out.time = p0.time;
            out.name = p0.name.clone();
            out
        }
        CrossMethod::Alternate => alternate(p0, p1, rng),
    };
    if method != CrossMethod::Interpolate || t.is_none() {
        // flam3's colour coordinates by place in its list of xforms, where
        // the final xform comes last.
        for (i, x) in out.xforms.iter_mut().chain(out.final_xform.as_mut()).enumerate() {
            x.color = (i & 1) as f64;
        }
        if rng.r01() < 0.4 {
            let mut from_second = rng.bit();
            for (i, e) in out.palette.entries.iter_mut().enumerate() {
                if rng.r01() < 0.01 {
                    from_second = !from_second;
                }
                *e = if from_second { p1.palette.entries[i] } else { p0.palette.entries[i] };
            }
        }
    }
    Ok(Crossed { flame: out, method, at })
}

/// flam3's alternate crossing.
fn alternate(p0: &Flame, p1: &Flame, rng: &mut GenomeRng) -> Flame {
    loop {
        let second = rng.bit();
        let (base, other) = if second { (p1, p0) } else { (p0, p1) };
        let mut out = base.clone();
        let (mut got_base, mut got_other) = (base.final_xform.is_some(), false);
        for (i, x) in out.xforms.iter_mut().enumerate() {
            if rng.bit() {
                match other.xforms.get(i).filter(|y| y.weight > 0.0) {
                    Some(y) => {
                        // The xform, not its chaos row: the child keeps the
                        // base parent's chaos matrix, as in flam3 (the other
                        // parent's row counts that parent's xforms).
                        *x = XForm { chaos: std::mem::take(&mut x.chaos), ..y.clone() };
                        got_other = true;
                    }
                    None => got_base = true,
                }
            } else {
                got_base = true;
            }
        }
        if out.xforms.len() <= 1 || (got_base && got_other) {
            return out;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::genome::tools::{Operation, RandomOptions, random};

    fn parents() -> (Flame, Flame) {
        let opts = RandomOptions { xforms: Some(3), symmetry: 1, tries: 0, ..RandomOptions::default() };
        let a = random(&Flame::default(), &opts, None, &mut GenomeRng::new(1, Operation::Random, 0)).unwrap();
        let b = random(&Flame::default(), &opts, None, &mut GenomeRng::new(1, Operation::Random, 1)).unwrap();
        (a, b)
    }

    #[test]
    fn interpolation_at_the_ends_gives_the_parents() {
        let (a, b) = parents();
        let mut rng = GenomeRng::new(1, Operation::Cross, 0);
        assert_eq!(cross(&a, &b, Some(CrossMethod::Interpolate), Some(0.0), &mut rng).unwrap().flame, a);
        assert_eq!(cross(&a, &b, Some(CrossMethod::Interpolate), Some(1.0), &mut rng).unwrap().flame, b);
        let mid = cross(&a, &b, Some(CrossMethod::Interpolate), Some(0.5), &mut rng).unwrap().flame;
        assert!(mid != a && mid != b);
    }

    #[test]
    fn an_interpolation_says_where_it_blended() {
        let (a, b) = parents();
        let drawn = cross(&a, &b, Some(CrossMethod::Interpolate), None, &mut GenomeRng::new(2, Operation::Cross, 0));
        let at = drawn.unwrap().at.expect("an interpolation has a point");
        assert!(at > 0.0 && at < 1.0);
        let given =
            cross(&a, &b, Some(CrossMethod::Interpolate), Some(0.25), &mut GenomeRng::new(2, Operation::Cross, 0));
        assert_eq!(given.unwrap().at, Some(0.25));
        let union = cross(&a, &b, Some(CrossMethod::Union), None, &mut GenomeRng::new(2, Operation::Cross, 0));
        assert_eq!(union.unwrap().at, None);
    }

    #[test]
    fn union_has_both_parents_xforms() {
        let (a, b) = parents();
        let c =
            cross(&a, &b, Some(CrossMethod::Union), None, &mut GenomeRng::new(4, Operation::Cross, 0)).unwrap().flame;
        assert_eq!(c.xforms.len(), a.xforms.len() + b.xforms.len());
        assert_eq!(c.xforms[a.xforms.len()].coefs, b.xforms[0].coefs);
    }

    /// The child keeps the base parent's chaos matrix (flam3 keeps one per
    /// flame): a row copied from the other parent would count that
    /// parent's xforms, and flam3-render aborts on a row longer than the
    /// child has xforms.
    #[test]
    fn a_child_keeps_the_chaos_matrix_of_the_parent_it_is_built_on() {
        let (mut a, b) = parents();
        // Four xforms with rows that forbid some moves; b has three and no
        // rows.
        a.xforms.push(a.xforms[0].clone());
        for (i, x) in a.xforms.iter_mut().enumerate() {
            x.chaos = (0..4).map(|j| if (i + j) % 2 == 0 { 1.0 } else { 0.0 }).collect();
        }
        let mut seen = [false; 2];
        for seed in 0..40 {
            let mut rng = GenomeRng::new(seed, Operation::Cross, 0);
            let c = cross(&a, &b, Some(CrossMethod::Alternate), None, &mut rng).unwrap().flame;
            let base_is_a = c.xforms.len() == 4;
            seen[base_is_a as usize] = true;
            for (i, x) in c.xforms.iter().enumerate() {
                let expect = if base_is_a { &a.xforms[i].chaos } else { &b.xforms[i].chaos };
                assert_eq!(&x.chaos, expect, "seed {seed}, xform {i}");
            }
            assert_eq!(c.dead_chaos_rows().count(), 0);
        }
        assert_eq!(seen, [true, true], "both parents served as the base");
        // Union: the second parent's xforms come in with rows of ones.
        let c =
            cross(&b, &a, Some(CrossMethod::Union), None, &mut GenomeRng::new(4, Operation::Cross, 0)).unwrap().flame;
        assert!(c.xforms[3..].iter().all(|x| x.chaos.is_empty()) && c.xforms.len() == 7);
    }

    #[test]
    fn alternate_takes_xforms_from_both_parents() {
        let (a, b) = parents();
        for seed in 0..10 {
            let mut rng = GenomeRng::new(seed, Operation::Cross, 0);
            let c = cross(&a, &b, Some(CrossMethod::Alternate), None, &mut rng).unwrap().flame;
            let from = |p: &Flame| c.xforms.iter().filter(|x| p.xforms.iter().any(|y| y.coefs == x.coefs)).count();
            assert!(from(&a) > 0 && from(&b) > 0, "seed {seed}");
        }
    }

    /// flam3 sets every xform's colour to its index's parity, the final
    /// xform (last in its list) included.
    #[test]
    fn colours_follow_the_xforms_places_the_final_one_included() {
        let (mut a, mut b) = parents();
        let spherical = crate::variations::VariationKind::from_name("spherical").unwrap();
        let fin = XForm {
            color: 0.37,
            variations: vec![crate::variations::VariationSpec::new(spherical, 1.0)],
            ..XForm::flam3_default(0)
        };
        a.final_xform = Some(fin.clone());
        b.final_xform = Some(fin);
        for (_, m) in CrossMethod::ALL {
            for seed in 0..10 {
                let c = cross(&a, &b, Some(m), None, &mut GenomeRng::new(seed, Operation::Cross, 0)).unwrap().flame;
                for (i, x) in c.xforms.iter().enumerate() {
                    assert_eq!(x.color, (i & 1) as f64, "{m:?} seed {seed} xform {i}");
                }
                let n = c.xforms.len();
                assert_eq!(c.final_xform.unwrap().color, (n & 1) as f64, "{m:?} seed {seed}");
            }
        }
    }
}
