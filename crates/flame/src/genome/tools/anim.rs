//! flam3-genome's animation genomes: a flame rotating through a full turn
//! (`rotate=`), one frame of the transition between two flames
//! (`inter=`), and sequences of loops joined by transitions (`sequence=`),
//! built from [`sheep_loop`] and [`sheep_edge`].

use super::Template;
use crate::error::{FlameError, Result};
use crate::genome::{Flame, Interpolation, PaletteInterpolation};
use crate::interpolate::{sheep_edge, sheep_loop};

/// Frame `frame` of `flame` rotating once in `nframes` frames, with the
/// frames before and after it (for motion blur), as flam3-genome's
/// `rotate=` writes them: times `frame − 1`, `frame`, `frame + 1`. A
/// `template` is applied to each frame before the loop's own settings
/// (linear interpolation, `hsv_circular` palettes), as flam3-genome does.
pub fn rotate(flame: &Flame, frame: i64, nframes: u32, template: Option<&Template>) -> Result<Vec<Flame>> {
    check_frames(frame, nframes)?;
    let blend = frame as f64 / f64::from(nframes);
    let spread = 1.0 / f64::from(nframes);
    Ok((-1..=1).map(|d| spin(flame, frame + d, blend + d as f64 * spread, template)).collect())
}

/// Frame `frame` of the transition from `from` to `to` in `nframes`
/// frames, with the frames before and after it (for motion blur), as
/// flam3-genome's `inter=` writes them: times `frame − 1`, `frame`,
/// `frame + 1`. Frames 0 and `nframes` are the two flames, each turned by
/// the same whole turn a `rotate=` loop ends with; `stagger` (0…1) spreads
/// the xforms' transitions out. A `template` is applied to each frame.
pub fn inter(
    from: &Flame,
    to: &Flame,
    frame: i64,
    nframes: u32,
    stagger: f64,
    template: Option<&Template>,
) -> Result<Vec<Flame>> {
    check_frames(frame, nframes)?;
    let blend = frame as f64 / f64::from(nframes);
    let spread = 1.0 / f64::from(nframes);
    Ok((-1..=1)
        .map(|d| edge_frame(sheep_edge(from, to, blend + d as f64 * spread, stagger, false), frame + d, template))
        .collect())
}

/// Refuses no frames, and a frame whose neighbours' times do not exist.
fn check_frames(frame: i64, nframes: u32) -> Result<()> {
    if nframes == 0 {
        return Err(FlameError::invalid("the number of frames must be positive"));
    }
    if frame == i64::MIN || frame == i64::MAX {
        return Err(FlameError::invalid(format!("frame {frame} has no frame before or after it")));
    }
    Ok(())
}

/// flam3-genome's `sequence=`: for each flame, `loops` full turns of
/// `nframes` frames each (flam3-genome's `loops`, 1; 0 leaves the loops
/// out), then `nframes` frames of transition to the next flame, and a
/// last frame equal to the last flame's first. `stagger` (0…1) spreads the
/// xforms' transitions out (flam3-genome's `stagger`). A `template` is
/// applied to each frame (to loop frames before their own settings).
/// [`sequence_frames`] gives the same frames one at a time.
pub fn sequence(
    flames: &[Flame],
    nframes: u32,
    loops: u32,
    stagger: f64,
    template: Option<&Template>,
) -> Result<Vec<Flame>> {
    Ok(sequence_frames(flames, nframes, loops, stagger, template)?.collect())
}

/// The frames of [`sequence`], made as they are taken, so that a sequence
/// too long to hold can be written out frame by frame. The iterator knows
/// its length: `flames.len() × loops × nframes + (flames.len() − 1) ×
/// nframes + 1`.
pub fn sequence_frames<'a>(
    flames: &'a [Flame],
    nframes: u32,
    loops: u32,
    stagger: f64,
    template: Option<&'a Template>,
) -> Result<impl ExactSizeIterator<Item = Flame> + 'a> {
    if nframes == 0 {
        return Err(FlameError::invalid("the number of frames must be positive"));
    }
    let Some(last) = flames.last() else {
        return Err(FlameError::invalid("a sequence needs at least one flame"));
    };
    let keys = flames.len() as u128;
    let count = (keys * u128::from(loops) + keys - 1) * u128::from(nframes) + 1;
    // Frame times are i64 (and the frames' count a usize).
    let count = usize::try_from(count)
        .ok()
        .filter(|&n| i64::try_from(n).is_ok())
        .ok_or_else(|| FlameError::invalid(format!("a sequence of {count} frames has more frames than times")))?;
    let n = f64::from(nframes);
    // Frames per keyframe: its loops, then (but for the last) its transition.
    let loop_frames = i64::from(loops) * i64::from(nframes);
    let stride = loop_frames + i64::from(nframes);
    let frames = flames.iter().enumerate().flat_map(move |(i, f)| {
        let first = i as i64 * stride;
        let spins = (0..loop_frames).map(move |j| {
            let k = (j % i64::from(nframes)) as f64;
            spin(f, first + j, k / n, template)
        });
        let edges = flames.get(i + 1).into_iter().flat_map(move |next| {
            (0..nframes).map(move |k| {
                let edge = k == 0 || k == nframes - 1;
                let g = sheep_edge(f, next, f64::from(k) / n, stagger, edge);
                edge_frame(g, first + loop_frames + i64::from(k), template)
            })
        });
        spins.chain(edges)
    });
    let end = (flames.len() as i64 - 1) * stride + loop_frames;
    Ok(Counted { inner: frames.chain(std::iter::once_with(move || spin(last, end, 0.0, template))), left: count })
}

/// An iterator that yields exactly `left` more items (what
/// `flat_map` cannot tell its caller).
struct Counted<I> {
    inner: I,
    left: usize,
}

impl<I: Iterator> Iterator for Counted<I> {
    type Item = I::Item;

    fn next(&mut self) -> Option<I::Item> {
        let item = self.inner.next();
        self.left = self.left.saturating_sub(usize::from(item.is_some()));
        item
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl<I: Iterator> ExactSizeIterator for Counted<I> {}

/// flam3-genome's `spin`: `flame` turned by `blend` of a full turn, the
/// template applied, at time `frame`, named after it, with linear
/// interpolation and the default palette interpolation.
fn spin(flame: &Flame, frame: i64, blend: f64, template: Option<&Template>) -> Flame {
    let mut g = sheep_loop(flame, blend);
    if let Some(t) = template {
        t.apply(&mut g);
    }
    g.interpolation = Interpolation::Linear;
    g.palette_interpolation = PaletteInterpolation::HsvCircular;
    g.hsv_rgb_palette_blend = 0.0;
    name_frame(&mut g, frame);
    g
}

/// flam3-genome's `spin_inter` after `sheep_edge`: the template applied, at
/// time `frame`, named after it.
fn edge_frame(mut g: Flame, frame: i64, template: Option<&Template>) -> Flame {
    if let Some(t) = template {
        t.apply(&mut g);
    }
    name_frame(&mut g, frame);
    g
}

fn name_frame(g: &mut Flame, frame: i64) {
    g.time = frame as f64;
    g.name = Some(format!("{:.6}", g.time));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::genome::tools::{GenomeRng, Operation, RandomOptions, random};

    fn flame(i: u64) -> Flame {
        let opts = RandomOptions { xforms: Some(3), symmetry: 1, tries: 0, ..RandomOptions::default() };
        random(&Flame::default(), &opts, None, &mut GenomeRng::new(9, Operation::Random, i)).unwrap()
    }

    #[test]
    fn a_full_turn_returns_the_flame() {
        let f = flame(0);
        let r = rotate(&f, 10, 10, None).unwrap();
        assert_eq!(r.len(), 3);
        assert_eq!(r.iter().map(|g| g.time).collect::<Vec<_>>(), [9.0, 10.0, 11.0]);
        for (a, b) in r[1].xforms.iter().zip(&f.xforms) {
            for (ra, rb) in a.coefs.c.iter().zip(&b.coefs.c) {
                for (x, y) in ra.iter().zip(rb) {
                    assert!((x - y).abs() < 1e-12, "{x} {y}");
                }
            }
        }
        // Half a turn negates the linear part of each animated xform.
        let h = rotate(&f, 5, 10, None).unwrap();
        assert!((h[1].xforms[0].coefs.c[0][0] + f.xforms[0].coefs.c[0][0]).abs() < 1e-12);
        assert!(rotate(&f, 0, 0, None).is_err());
    }

    #[test]
    fn sequences_have_the_frame_count_and_start_at_the_first_keyframe() {
        let keys = [flame(1), flame(2), flame(3)];
        let s = sequence(&keys, 7, 1, 0.0, None).unwrap();
        // Three loops, two transitions, one closing frame.
        assert_eq!(s.len(), 3 * 7 + 2 * 7 + 1);
        assert_eq!(s.iter().map(|g| g.time).collect::<Vec<_>>(), (0..s.len()).map(|t| t as f64).collect::<Vec<_>>());
        let first = Flame { time: 0.0, name: Some("0.000000".into()), ..keys[0].clone() };
        assert_eq!(s[0], first);
        let s0 = sequence(&keys, 4, 0, 0.0, None).unwrap();
        assert_eq!(s0.len(), 2 * 4 + 1);
        // The first transition frame is the first keyframe itself.
        assert_eq!(s0[0].xforms, keys[0].xforms);
    }

    /// The frames as flam3-genome's loops make them, one after another:
    /// the reference for the lazy iterator.
    fn sequence_by_loops(flames: &[Flame], nframes: u32, loops: u32, stagger: f64) -> Vec<Flame> {
        let n = f64::from(nframes);
        let mut out = Vec::new();
        let mut count = 0i64;
        for (i, f) in flames.iter().enumerate() {
            for _ in 0..loops {
                for k in 0..nframes {
                    out.push(spin(f, count, f64::from(k) / n, None));
                    count += 1;
                }
            }
            if let Some(next) = flames.get(i + 1) {
                for k in 0..nframes {
                    let edge = k == 0 || k == nframes - 1;
                    out.push(edge_frame(sheep_edge(f, next, f64::from(k) / n, stagger, edge), count, None));
                    count += 1;
                }
            }
        }
        out.push(spin(flames.last().unwrap(), count, 0.0, None));
        out
    }

    #[test]
    fn the_lazy_sequence_is_the_loops_frame_for_frame() {
        let keys = [flame(4), flame(5), flame(6), flame(7)];
        for (flames, nframes, loops, stagger) in
            [(&keys[..], 5, 2, 0.3), (&keys[..1], 3, 0, 0.0), (&keys[..1], 1, 3, 0.0), (&keys[..2], 1, 0, 1.0)]
        {
            let lazy = sequence_frames(flames, nframes, loops, stagger, None).unwrap();
            let expected = sequence_by_loops(flames, nframes, loops, stagger);
            assert_eq!(lazy.len(), expected.len(), "{nframes} frames, {loops} loops");
            assert_eq!(lazy.collect::<Vec<_>>(), expected, "{nframes} frames, {loops} loops");
        }
        assert!(sequence_frames(&keys, 0, 1, 0.0, None).is_err());
        assert!(sequence_frames(&[], 3, 1, 0.0, None).is_err());
        // u32::MAX loops of u32::MAX frames: counted without overflow.
        let many = sequence_frames(&keys, u32::MAX, u32::MAX, 0.0, None);
        assert!(many.is_err() || many.unwrap().len() > u32::MAX as usize);
    }
}
