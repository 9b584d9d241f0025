//! flam3-genome's animation genomes: a flame rotating through a full turn
//! (`rotate=`), one frame of the transition between two flames
//! (`inter=`), and sequences of loops joined by transitions (`sequence=`),
//! built from [`sheep_loop`] and [`sheep_edge`]; and the frames between
//! keyframes (`animate=`).

use super::{Template, printf_g};
use crate::error::{FlameError, Result};
use crate::genome::{AffineInterpolation, Flame, Interpolation, PaletteInterpolation};
use crate::interpolate::{interpolate_with_stagger, sheep_edge, sheep_loop};

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

/// flam3-genome's `animate=`: one flame for each whole time from `begin`
/// to `end` (by default the first and last keyframes' times, truncated as
/// flam3 truncates them; an `end` before `begin` is `begin`). A frame at a
/// keyframe's time is that keyframe; the others are interpolated between
/// the keyframes around them (`stagger`, 0…1, spreads the xforms'
/// transitions out), with linear affine interpolation unless a keyframe
/// comes one frame later, and with the name of the last frame from
/// `begin` on that was a keyframe (none before the first). Motion elements
/// are dropped, as flam3-genome drops them. A `template` is applied to each
/// frame, which then takes its time. The keyframes must be in increasing
/// time order.
pub fn animate_frames<'a>(
    keys: &'a [Flame],
    begin: Option<i64>,
    end: Option<i64>,
    stagger: f64,
    template: Option<&'a Template>,
) -> Result<impl ExactSizeIterator<Item = Flame> + 'a> {
    let (Some(first), Some(last)) = (keys.first(), keys.last()) else {
        return Err(FlameError::invalid("an animation needs at least one flame"));
    };
    if !(0.0..=1.0).contains(&stagger) {
        return Err(FlameError::invalid(format!("the stagger must be between 0 and 1, not {stagger}")));
    }
    for (i, w) in keys.windows(2).enumerate() {
        // A NaN time is out of order too.
        if w[1].time.partial_cmp(&w[0].time) != Some(std::cmp::Ordering::Greater) {
            return Err(FlameError::invalid(format!(
                "control points must be in time order (flam3-genome refuses them too), but flame {} has time {} \
                 after {}",
                i + 1,
                printf_g(w[1].time),
                printf_g(w[0].time)
            )));
        }
    }
    // flam3's (int) of the times: towards zero, held to C's int.
    let int_time = |t: f64| t.trunc().clamp(-2147483647.0, 2147483646.0) as i64;
    let begin = begin.unwrap_or_else(|| int_time(first.time));
    let end = end.unwrap_or_else(|| int_time(last.time)).max(begin);
    let count = u64::try_from(i128::from(end) - i128::from(begin) + 1)
        .ok()
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| FlameError::invalid(format!("frames {begin} to {end} are more than can be counted")))?;
    // flam3-genome drops the keyframes' motion elements before it
    // interpolates.
    let mut keys = keys.to_vec();
    for f in &mut keys {
        for x in f.xforms.iter_mut().chain(f.final_xform.as_mut()) {
            x.motion.clear();
        }
    }
    // A frame between control points has the name of the last frame of
    // this run that was a control point (none before the first), as in
    // flam3-genome, whose frames share one genome that interpolation leaves
    // the name of.
    let mut carried: Option<String> = None;
    let frames = (begin..=end).map(move |time| {
        let at = time as f64;
        let mut f = match keys.iter().find(|k| k.time == at) {
            Some(k) => {
                carried.clone_from(&k.name);
                k.clone()
            }
            None => {
                let mut f = interpolate_with_stagger(&keys, at, stagger);
                if !keys.iter().any(|k| k.time - 1.0 == at) {
                    f.affine_interpolation = AffineInterpolation::Linear;
                }
                f.name.clone_from(&carried);
                f
            }
        };
        if let Some(t) = template {
            t.apply(&mut f);
        }
        f.time = at;
        f
    });
    Ok(Counted { inner: frames, left: count })
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

    #[test]
    fn animation_frames_are_the_keyframes_at_their_times_and_interpolated_between() {
        let mut keys = [Flame { time: 2.0, ..flame(4) }, Flame { time: 6.5, ..flame(5) }];
        keys[0].xforms[0].motion.push(crate::genome::Motion {
            frequency: 1,
            function: None,
            weight: 0.5,
            color: 0.0,
            color_speed: 0.0,
            animate: 0.0,
            opacity: 0.0,
            coefs: crate::genome::Affine::from_xml_order([0.0; 6]),
            post: crate::genome::Affine::from_xml_order([0.0; 6]),
            variations: Vec::new(),
        });
        let frames: Vec<Flame> = animate_frames(&keys, None, None, 0.0, None).unwrap().collect();
        // Times 2 to 6 (6.5 truncated, as flam3 truncates it).
        assert_eq!(frames.iter().map(|f| f.time).collect::<Vec<_>>(), [2.0, 3.0, 4.0, 5.0, 6.0]);
        let still = |f: &Flame| {
            let mut f = f.clone();
            f.xforms.iter_mut().for_each(|x| x.motion.clear());
            f
        };
        assert_eq!(frames[0], still(&keys[0]));
        assert!(frames.iter().all(|f| f.xforms.iter().all(|x| x.motion.is_empty())));
        for (f, at) in frames[1..].iter().zip(3..) {
            let between =
                crate::interpolate::interpolate_with_stagger(&[still(&keys[0]), still(&keys[1])], at as f64, 0.0);
            assert_eq!(f.xforms, between.xforms, "time {at}");
            // No keyframe one frame later: affine maps interpolate linearly.
            assert_eq!(f.affine_interpolation, crate::genome::AffineInterpolation::Linear);
        }
        // An end before the beginning is the beginning; a range is counted.
        assert_eq!(animate_frames(&keys, Some(4), Some(1), 0.0, None).unwrap().len(), 1);
        assert_eq!(animate_frames(&keys, Some(-3), Some(3), 0.0, None).unwrap().len(), 7);
        // Refused: no flames, keyframes out of order, a stagger outside 0…1.
        assert!(animate_frames(&[], None, None, 0.0, None).is_err());
        assert!(animate_frames(&[keys[1].clone(), keys[0].clone()], None, None, 0.0, None).is_err());
        assert!(animate_frames(&[keys[0].clone(), keys[0].clone()], None, None, 0.0, None).is_err());
        assert!(animate_frames(&keys, None, None, 1.5, None).is_err());
        assert!(animate_frames(&keys, None, None, f64::NAN, None).is_err());
        assert!(animate_frames(&keys, Some(i64::MIN), Some(i64::MAX), 0.0, None).is_err());
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
