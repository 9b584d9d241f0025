//! Interpolation between the flames of a sequence, as flam3 3.1.1's
//! `flam3_interpolate` does it: used for temporal samples (motion blur) and
//! for `flame animate`. Also flam3-genome's "sheep" helpers, which rotate a
//! flame ([`sheep_loop`]) or rotate and blend two ([`sheep_edge`]).
//!
//! # What flam3 does
//!
//! 1. **Control points.** The two flames around `time` are used (the first
//!    two before the start, the last two after the end: flam3 extrapolates).
//!    The blend coefficient of the earlier one is
//!    `c0 = (t2 − time) / (t2 − t1)`, of the later one `c1 = 1 − c0`. When
//!    the earlier flame says `interpolation="smooth"` and the segment has a
//!    neighbour on each side, the four flames around it are combined with
//!    Catmull-Rom weights of `c1` instead.
//! 2. **Alignment.** The flames are copied so that all have the same number
//!    of xforms, and a final xform if any of them has one. The added
//!    ("padding") xforms are identity maps of weight 0; for `log` and
//!    `linear` affine interpolation they are then specialised to look like
//!    their neighbours' xforms (spherical-like neighbours: linear −1 with a
//!    180° rotation; rings2/fan2/blob/…: that variation with neutral
//!    parameters; fan/rings: that variation with swapped axes). Parametric
//!    variations missing from an xform take their parameters from the
//!    neighbouring flame's xform, so that only the weight fades.
//! 3. **Blending.** Every numeric setting is the weighted sum of the control
//!    points' values (integer ones rounded to nearest, ties to even); enum
//!    settings (filter shape, temporal filter, palette mode, affine and
//!    palette interpolation, `hsv_rgb_palette_blend`) come from the first
//!    control point used. Affine maps are blended per `interpolation_type`:
//!    `log` blends the angle and the logarithm of the length of each column
//!    (angles unwrapped the short way round), the others blend the six
//!    coefficients (in flam3 3.1.1 `compat`/`older` differ from `linear`
//!    only in alignment, which they skip, and in the sheep rotations).
//!    Palettes are blended in HSV (optionally mixed with RGB) or swept.
//!
//! The result has `interpolation = linear`, `time = time`, no name and no
//! motion elements: as flam3-animate does, interpolation ignores them.
//! Only [`sheep_loop`] and [`sheep_edge`] apply them, as flam3-genome's
//! loops and transitions do.
//!
//! # Where this differs from flam3
//!
//! Only where flam3's behaviour is undefined or degenerate:
//!
//! - `smooth` on the first or last segment: `flam3_interpolate` prints an
//!   error, says it reverts to linear, then reads outside its array. Here
//!   it reverts to linear. (flam3's genome reader already resets
//!   `interpolation` of the first and second-to-last flames to linear, so
//!   read sequences never get there; this gives the same result.)
//! - Two control points with the same time as the segment: flam3 divides
//!   0 by 0. Here the earlier one gets coefficient 1.
//! - Stagger with a single standard xform: flam3 computes 0/0. Here the
//!   stagger coefficient is `smoother(c0)`, its limit.
//! - A variation present in a genome with weight 0 (and parameters): the
//!   data model drops it, so its parameters take their defaults.

mod affine;
mod align;
mod palette;

use std::cell::OnceCell;
use std::collections::BTreeMap;

use crate::error::{FlameError, Result};
use crate::genome::{Affine, AffineInterpolation, Flame, Interpolation, Motion, MotionFunction, XForm};
use crate::variations::{VariationKind, VariationSpec};

/// The flames of a file made the keyframes of an animation, as `flame
/// animate` (like flam3-animate) takes them, and a warning for each thing
/// changed to make them so.
#[derive(Clone, Debug)]
pub struct Keyframes {
    /// Sorted by time, each of the first flame's size.
    pub flames: Vec<Flame>,
    /// One line each.
    pub warnings: Vec<String>,
}

impl Keyframes {
    /// `flames` (read from `source`, named in messages) as keyframes:
    /// sorted by time (flam3-animate refuses flames out of order: here a
    /// warning), every one of the first flame's size (a warning for each
    /// that is not, as every frame of flam3-animate's has that size), and a
    /// warning for a keyframe of no temporal samples, which frames near it
    /// take as 1 (flam3-animate renders them white) unless
    /// `temporal_samples_given`. Two flames at one time are an error: the
    /// animation between them is undefined (flam3-animate refuses them too).
    pub fn new(mut flames: Vec<Flame>, source: &str, temporal_samples_given: bool) -> Result<Keyframes> {
        let mut warnings = Vec::new();
        if flames.is_empty() {
            return Err(FlameError::invalid(format!("{source}: no <flame> elements")));
        }
        if flames.windows(2).any(|w| w[1].time < w[0].time) {
            warnings.push(format!(
                "{source}: the flames are not in time order; sorted by time (flam3-animate refuses such a file)"
            ));
        }
        let mut order: Vec<usize> = (0..flames.len()).collect();
        order.sort_by(|&i, &j| flames[i].time.total_cmp(&flames[j].time));
        if let Some(w) = order.windows(2).find(|w| flames[w[0]].time == flames[w[1]].time) {
            return Err(FlameError::invalid(format!(
                "{source}: flames {} and {} both have time {}; an animation needs one keyframe per time \
                 (flam3-animate refuses this too)",
                flames[w[0]].label(w[0]),
                flames[w[1]].label(w[1]),
                flames[w[0]].time
            )));
        }
        flames.sort_by(|x, y| x.time.total_cmp(&y.time));
        let (w0, h0) = (flames[0].width, flames[0].height);
        for (i, f) in flames.iter_mut().enumerate().skip(1) {
            if (f.width, f.height) != (w0, h0) {
                warnings.push(format!(
                    "flame {} (time {}) is {}x{}; every frame has the first flame's size, {w0}x{h0}",
                    f.label(i),
                    f.time,
                    f.width,
                    f.height
                ));
                (f.width, f.height) = (w0, h0);
            }
        }
        if !temporal_samples_given
            && let Some((i, f)) = flames.iter().enumerate().find(|(_, f)| f.temporal_samples == 0)
        {
            warnings.push(format!(
                "flame {} (time {}) has temporal_samples=\"0\"; frames that interpolate to no samples take 1 \
                 (flam3-animate renders them white)",
                f.label(i),
                f.time
            ));
        }
        Ok(Keyframes { flames, warnings })
    }

    /// The temporal samples (motion blur) of the frame at `time`: the
    /// keyframes' interpolated, at least 1.
    pub fn temporal_samples_at(&self, time: f64) -> u32 {
        interpolate(&self.flames, time).temporal_samples.max(1)
    }
}

/// The flame at `time` in the sequence `flames` (sorted by `time`), as flam3
/// 3.1.1 interpolates it (`flam3_interpolate` with no stagger). A single
/// flame is returned unchanged (cloned). Times outside the sequence
/// extrapolate from the first or last two flames, as in flam3.
///
/// # Panics
///
/// If `flames` is empty.
pub fn interpolate(flames: &[Flame], time: f64) -> Flame {
    interpolate_with_stagger(flames, time, 0.0)
}

/// [`interpolate`] with flam3's `stagger` (flam3-genome's `stagger=`): with
/// two control points and `stagger > 0`, the standard xforms do not all
/// change at once but one after the other, the first xform first; `stagger`
/// (0…1) is how much their transitions are spread out (1: each changes
/// during its own 1/n of the segment). Palette, chaos, the
/// camera and the final xform are not staggered.
///
/// # Panics
///
/// If `flames` is empty.
pub fn interpolate_with_stagger(flames: &[Flame], time: f64, stagger: f64) -> Flame {
    assert!(!flames.is_empty(), "interpolate: no flames");
    if flames.len() == 1 {
        return flames[0].clone();
    }
    let times: Vec<f64> = flames.iter().map(|f| f.time).collect();
    let Blend { first, weights } = plan(&times, |i| flames[i].interpolation == Interpolation::Smooth, time);
    let work: Vec<WorkFlame<'_>> = flames[first..first + weights.len()].iter().map(WorkFlame::from_flame).collect();
    let mut result = interpolate_n(&align::align(&work), &weights, stagger);
    result.time = time;
    result
}

/// `flame` with each xform's `<motion>` elements applied at `blend`; the
/// result has none.
fn with_motion_applied(flame: &Flame, blend: f64) -> Flame {
    let mut out = flame.clone();
    for x in out.xforms.iter_mut().chain(out.final_xform.as_mut()) {
        if !x.motion.is_empty() {
            let mut slot = Slot::from_xform(x);
            slot.apply_motion(&x.motion, blend);
            *x = slot.to_xform(std::mem::take(&mut x.chaos));
        }
    }
    out
}

/// flam3's `smoother`: the cubic ease `3t² − 2t³` (0 at 0, 1 at 1, flat at
/// both ends).
pub fn smoother(t: f64) -> f64 {
    3.0 * t * t - 2.0 * t * t * t
}

/// flam3's `sheep_loop`: `flame` with each xform's `<motion>` elements
/// applied at `blend` ([`Motion`]; the result has none) and every animated
/// (`animate ≠ 0`) standard xform's linear part rotated by `blend · 360`
/// degrees. This is frame `blend` (0…1) of a loop, as flam3-genome's
/// `sequence=`/`rotate=` modes make it; the time, name and interpolation
/// settings are left as in `flame`.
pub fn sheep_loop(flame: &Flame, blend: f64) -> Flame {
    let mut out = with_motion_applied(flame, blend);
    let turn = affine::Turn::degrees(blend * 360.0);
    for x in out.xforms.iter_mut().filter(|x| x.animate != 0.0) {
        turn.apply(&mut x.coefs);
    }
    out
}

/// flam3's `sheep_edge`: frame `blend` (0…1) of the transition from `from`
/// to `to` in flam3-genome's `sequence=`/`inter=` modes. Both parents'
/// `<motion>` elements are applied at `blend`, then the parents are aligned, rotated by
/// `blend · 360` degrees (xforms that do not animate keep their angle, and
/// the rotation of a pair where only one side animates is wound
/// consistently), then interpolated at `smoother(blend)` with `stagger`.
///
/// `sequence` is flam3's `seqflag`: with it and `blend == 0`, `from` is
/// returned unchanged (but for its motion elements, applied at 0). The result's time is `smoother(blend)`
/// (flam3-genome overwrites it with the frame number).
pub fn sheep_edge(from: &Flame, to: &Flame, blend: f64, stagger: f64, sequence: bool) -> Flame {
    if sequence && blend == 0.0 {
        return with_motion_applied(from, blend);
    }
    let mut pre = [WorkFlame::from_flame(from), WorkFlame::from_flame(to)];
    for (work, parent) in pre.iter_mut().zip([from, to]) {
        for (i, x) in parent.xforms.iter().chain(parent.final_xform.as_ref()).enumerate() {
            work.slot_mut(i).apply_motion(&x.motion, blend);
        }
    }
    let mut spun = align::align(&pre);
    spun[0].time = 0.0;
    spun[1].time = 1.0;
    affine::establish_asymmetric_refangles(&mut spun);
    let kind = spun[0].flame.affine_interpolation;
    for w in &mut spun {
        affine::rotate_flame(w, blend * 360.0, kind);
    }
    interpolate_work(&spun, smoother(blend), stagger)
}

/// One variation of an xform during interpolation: flam3 keeps a weight
/// and parameters for every variation; here only those that matter are
/// stored (a weight of 0 with parameters is a variation whose parameters
/// were copied from a neighbour).
#[derive(Clone, Debug)]
struct Var {
    kind: VariationKind,
    weight: f64,
    params: Vec<f64>,
}

impl Var {
    /// `kind` with weight 0 and flam3's default parameters.
    fn absent(kind: VariationKind) -> Self {
        Var { kind, weight: 0.0, params: kind.params().iter().map(|p| p.default).collect() }
    }

    /// Parameter `j`, or its default where the vector is short.
    fn param(&self, j: usize) -> f64 {
        match self.params.get(j) {
            Some(&v) => v,
            None => self.kind.params().get(j).map_or(0.0, |p| p.default),
        }
    }

    /// Sets the parameter called `name`, if this variation has it.
    fn set_param(&mut self, name: &str, value: f64) {
        let specs = self.kind.params();
        if let Some(j) = specs.iter().position(|p| p.name == name) {
            if self.params.len() < specs.len() {
                let missing: Vec<f64> = specs[self.params.len()..].iter().map(|p| p.default).collect();
                self.params.extend(missing);
            }
            self.params[j] = value;
        }
    }
}

/// An xform during interpolation, with flam3's bookkeeping: whether it was
/// added by alignment (`padding`) and the reference angles of asymmetric
/// rotation (`wind`, only set by [`sheep_edge`]).
#[derive(Clone, Debug)]
struct Slot {
    weight: f64,
    color: f64,
    color_speed: f64,
    animate: f64,
    opacity: f64,
    coefs: Affine,
    post: Affine,
    /// By flam3 variation index.
    vars: BTreeMap<usize, Var>,
    padding: bool,
    wind: [f64; 2],
}

impl Slot {
    fn from_xform(x: &XForm) -> Self {
        let vars = x
            .variations
            .iter()
            .map(|v| (v.kind.index(), Var { kind: v.kind, weight: v.weight, params: v.params.clone() }))
            .collect();
        Slot {
            weight: x.weight,
            color: x.color,
            color_speed: x.color_speed,
            animate: x.animate,
            opacity: x.opacity,
            coefs: x.coefs,
            post: x.post,
            vars,
            padding: false,
            wind: [0.0; 2],
        }
    }

    /// flam3's freshly initialised xform number `index` (weight 0, identity,
    /// linear 1), marked as padding.
    fn padding(index: usize) -> Self {
        let mut s = Slot::from_xform(&XForm::flam3_default(index));
        let linear = VariationKind::from_index(align::VAR_LINEAR).expect("linear exists");
        s.vars.insert(align::VAR_LINEAR, Var { kind: linear, weight: 1.0, params: Vec::new() });
        s.padding = true;
        s
    }

    /// flam3's `apply_motion_parameters`: each element's changes times
    /// f(frequency · blend) for its own function f, then colour clamped to
    /// [0, 1] and weight to 0 and above. (The flam3 3.1.1 sources read the
    /// first element's frequency and function for every element; its
    /// builds, Debian's flam3-genome among them, give each element its own,
    /// as later sources do.)
    fn apply_motion(&mut self, motion: &[Motion], blend: f64) {
        if motion.is_empty() {
            return;
        }
        for m in motion {
            let amount = m.function.unwrap_or(MotionFunction::Hill).at(m.frequency as f64 * blend);
            self.weight += m.weight * amount;
            self.color += m.color * amount;
            self.opacity += m.opacity * amount;
            self.color_speed += m.color_speed * amount;
            self.animate += m.animate * amount;
            for v in &m.variations {
                let var = self.vars.entry(v.kind.index()).or_insert_with(|| Var::absent(v.kind));
                var.weight += v.weight * amount;
                for (j, change) in v.params.iter().enumerate() {
                    if *change != 0.0 {
                        let name = v.kind.params()[j].name;
                        var.set_param(name, var.param(j) + change * amount);
                    }
                }
            }
            for (row, change) in self.coefs.c.iter_mut().zip(&m.coefs.c) {
                row[0] += change[0] * amount;
                row[1] += change[1] * amount;
            }
            for (row, change) in self.post.c.iter_mut().zip(&m.post.c) {
                row[0] += change[0] * amount;
                row[1] += change[1] * amount;
            }
        }
        self.color = self.color.clamp(0.0, 1.0);
        self.weight = self.weight.max(0.0);
    }

    /// The weight of variation `index` (0 when absent).
    fn var_weight(&self, index: usize) -> f64 {
        self.vars.get(&index).map_or(0.0, |v| v.weight)
    }

    fn to_xform(&self, chaos: Vec<f64>) -> XForm {
        XForm {
            weight: self.weight,
            color: self.color,
            color_speed: self.color_speed,
            animate: self.animate,
            opacity: self.opacity,
            coefs: self.coefs,
            post: self.post,
            variations: self
                .vars
                .values()
                .filter(|v| v.weight != 0.0)
                .map(|v| VariationSpec { kind: v.kind, weight: v.weight, params: v.params.clone() })
                .collect(),
            chaos,
            motion: Vec::new(),
        }
    }
}

/// A flame during interpolation: its settings (`flame`, whose xform lists
/// are not used here), its xforms as [`Slot`]s and a full chaos matrix.
#[derive(Clone, Debug)]
struct WorkFlame<'a> {
    flame: &'a Flame,
    /// The time (sheep_edge moves the control points to 0 and 1).
    time: f64,
    xforms: Vec<Slot>,
    final_xform: Option<Slot>,
    /// One chaos row per standard xform, each up to its last entry that is
    /// not 1 ([`WorkFlame::chaos_at`] reads the rest as 1): a full matrix
    /// of 10,000 xforms would take 800 MB per control point.
    chaos: Vec<Vec<f64>>,
}

/// A chaos row without its trailing entries of 1 (flam3 writes a row up to
/// its last entry that is not 1, and none where all are 1).
pub(crate) fn trimmed_chaos(mut row: Vec<f64>) -> Vec<f64> {
    while row.last() == Some(&1.0) {
        row.pop();
    }
    // A row of n entries that was all 1 would otherwise keep their room.
    row.shrink_to_fit();
    row
}

impl<'a> WorkFlame<'a> {
    fn from_flame(f: &'a Flame) -> Self {
        let n = f.xforms.len();
        WorkFlame {
            flame: f,
            time: f.time,
            xforms: f.xforms.iter().map(Slot::from_xform).collect(),
            final_xform: f.final_xform.as_ref().map(Slot::from_xform),
            chaos: f.xforms.iter().map(|x| trimmed_chaos(x.chaos.iter().take(n).copied().collect())).collect(),
        }
    }

    /// Chaos from standard xform `i` to standard xform `j`.
    fn chaos_at(&self, i: usize, j: usize) -> f64 {
        self.chaos[i].get(j).copied().unwrap_or(1.0)
    }

    /// All xforms, the final one last (flam3's single array).
    fn slot(&self, i: usize) -> &Slot {
        if i < self.xforms.len() { &self.xforms[i] } else { self.final_xform.as_ref().expect("slot index in range") }
    }

    fn slot_mut(&mut self, i: usize) -> &mut Slot {
        if i < self.xforms.len() {
            &mut self.xforms[i]
        } else {
            self.final_xform.as_mut().expect("slot index in range")
        }
    }

    fn num_slots(&self) -> usize {
        self.xforms.len() + usize::from(self.final_xform.is_some())
    }
}

/// The control points a time uses and their weights.
struct Blend {
    /// The first control point's index.
    first: usize,
    /// One weight per control point from `first` on (two, or four for a
    /// smooth segment).
    weights: Vec<f64>,
}

/// Which control points `time` uses, and with which weights.
fn plan(times: &[f64], smooth: impl Fn(usize) -> bool, time: f64) -> Blend {
    let n = times.len();
    let (i1, i2) = if times[0] >= time {
        (0, 1)
    } else if times[n - 1] <= time {
        (n - 2, n - 1)
    } else {
        // The first control point at or after `time` (exists: the last one
        // is after it); NaN times fall back to the first segment.
        let i2 = (1..n).find(|&i| times[i] >= time).unwrap_or(1);
        (i2 - 1, i2)
    };
    let span = times[i2] - times[i1];
    let c0 = if span == 0.0 { 1.0 } else { (times[i2] - time) / span };
    let c1 = 1.0 - c0;
    if smooth(i1) && i1 > 0 && i2 < n - 1 {
        Blend { first: i1 - 1, weights: catmull_rom(c1).to_vec() }
    } else {
        Blend { first: i1, weights: vec![c0, c1] }
    }
}

/// `flam3_interpolate` on prepared flames (at least two).
fn interpolate_work(cps: &[WorkFlame<'_>], time: f64, stagger: f64) -> Flame {
    let times: Vec<f64> = cps.iter().map(|w| w.time).collect();
    let Blend { first, weights } = plan(&times, |i| cps[i].flame.interpolation == Interpolation::Smooth, time);
    let aligned = align::align(&cps[first..first + weights.len()]);
    let mut result = interpolate_n(&aligned, &weights, stagger);
    result.time = time;
    result
}

/// Catmull-Rom weights of the four control points around a segment at
/// fraction `t` of it.
fn catmull_rom(t: f64) -> [f64; 4] {
    let t2 = t * t;
    let t3 = t2 * t;
    [(2.0 * t2 - t - t3) / 2.0, (3.0 * t3 - 5.0 * t2 + 2.0) / 2.0, (4.0 * t2 - 3.0 * t3 + t) / 2.0, (t3 - t2) / 2.0]
}

/// flam3's stagger: the weight of the first control point for standard
/// xform `this` of `count` when the unstaggered weight is `t`.
fn stagger_coef(t: f64, stagger: f64, count: usize, this: usize) -> f64 {
    let max_stag = (count as f64 - 1.0) / count as f64;
    let scaled = stagger * max_stag;
    // The last xform starts first; with one xform flam3 divides 0 by 0,
    // whose limit is a start at 0.
    let start = if count > 1 { scaled * (count - 1 - this) as f64 / (count as f64 - 1.0) } else { 0.0 };
    let end = start + (1.0 - scaled);
    if t <= start {
        0.0
    } else if t >= end {
        1.0
    } else {
        smoother((t - start) / (1.0 - scaled))
    }
}

/// flam3's weighted sum `Σ c[k]·f(cp k)`, accumulated in flam3's order.
fn blend(c: &[f64], mut f: impl FnMut(usize) -> f64) -> f64 {
    let mut acc = 0.0;
    for (k, &ck) in c.iter().enumerate() {
        acc += ck * f(k);
    }
    acc
}

/// flam3's integer blend: the weighted sum rounded to nearest, ties to even
/// (`rint`), saturated to the field's range.
fn blend_int(c: &[f64], f: impl FnMut(usize) -> f64) -> u32 {
    blend(c, f).round_ties_even() as u32
}

/// Fractorium's curves between control points: each point blended where
/// every control point has curves with the same numbers of points (as
/// Fractorium assumes), else the first control point's.
fn blend_curves(cps: &[WorkFlame<'_>], c: &[f64]) -> Option<crate::genome::Curves> {
    let first = cps[0].flame.curves.as_ref();
    let same_shape = cps.iter().all(|w| {
        w.flame
            .curves
            .as_ref()
            .zip(first)
            .is_some_and(|(a, b)| a.points.iter().zip(&b.points).all(|(p, q)| p.len() == q.len()))
    });
    if !same_shape {
        return first.cloned();
    }
    let mut out = first.cloned()?;
    for (ch, points) in out.points.iter_mut().enumerate() {
        for (j, p) in points.iter_mut().enumerate() {
            for (axis, v) in p.iter_mut().enumerate() {
                *v = blend(c, |k| cps[k].flame.curves.as_ref().expect("same shape").points[ch][j][axis]);
            }
        }
    }
    Some(out)
}

/// `flam3_interpolate_n`: blends aligned flames with weights `c`.
fn interpolate_n(cps: &[WorkFlame<'_>], c: &[f64], stagger: f64) -> Flame {
    let first = cps[0].flame;
    let g = |k: usize| cps[k].flame;
    let mut out = Flame {
        name: None,
        time: 0.0,
        width: blend_int(c, |k| g(k).width as f64),
        height: blend_int(c, |k| g(k).height as f64),
        center: [blend(c, |k| g(k).center[0]), blend(c, |k| g(k).center[1])],
        scale: blend(c, |k| g(k).scale),
        rotate: blend(c, |k| g(k).rotate),
        zoom: blend(c, |k| g(k).zoom),
        supersample: blend_int(c, |k| g(k).supersample as f64),
        filter_radius: blend(c, |k| g(k).filter_radius),
        filter_shape: first.filter_shape,
        quality: blend(c, |k| g(k).quality),
        passes: blend_int(c, |k| g(k).passes as f64),
        temporal_samples: blend_int(c, |k| g(k).temporal_samples as f64),
        temporal_filter: first.temporal_filter,
        temporal_filter_width: blend(c, |k| g(k).temporal_filter_width),
        temporal_filter_exp: blend(c, |k| g(k).temporal_filter_exp),
        background: [
            blend(c, |k| g(k).background[0]),
            blend(c, |k| g(k).background[1]),
            blend(c, |k| g(k).background[2]),
        ],
        brightness: blend(c, |k| g(k).brightness),
        contrast: blend(c, |k| g(k).contrast),
        gamma: blend(c, |k| g(k).gamma),
        gamma_threshold: blend(c, |k| g(k).gamma_threshold),
        highlight_power: blend(c, |k| g(k).highlight_power),
        vibrancy: blend(c, |k| g(k).vibrancy),
        hue_rotation: blend(c, |k| g(k).hue_rotation),
        estimator_radius: blend(c, |k| g(k).estimator_radius),
        estimator_minimum: blend(c, |k| g(k).estimator_minimum),
        estimator_curve: blend(c, |k| g(k).estimator_curve),
        palette_mode: first.palette_mode,
        interpolation: Interpolation::Linear,
        affine_interpolation: first.affine_interpolation,
        palette_interpolation: first.palette_interpolation,
        hsv_rgb_palette_blend: first.hsv_rgb_palette_blend,
        curves: blend_curves(cps, c),
        // The edit history cannot be blended: the nearest control point's.
        edits: (0..cps.len()).max_by(|&a, &b| c[a].total_cmp(&c[b]).then(b.cmp(&a))).and_then(|k| g(k).edits.clone()),
        palette: palette::blend_palettes(cps, c),
        xforms: Vec::new(),
        final_xform: None,
    };

    // Chaos between standard xforms: every entry blended, then kept
    // non-negative, each row kept up to its last entry that is not 1.
    let nstd = cps[0].xforms.len();
    let chaos: Vec<Vec<f64>> = (0..nstd)
        .map(|i| trimmed_chaos((0..nstd).map(|j| non_negative(blend(c, |k| cps[k].chaos_at(i, j)))).collect()))
        .collect();

    let log = first.affine_interpolation == AffineInterpolation::Log;
    let staggered = c.len() == 2 && stagger > 0.0;
    let mut slots = Vec::with_capacity(cps[0].num_slots());
    for i in 0..cps[0].num_slots() {
        let is_final = i >= nstd;
        let cs: Vec<f64> = if staggered && !is_final {
            let s = stagger_coef(c[0], stagger, nstd, i);
            vec![s, 1.0 - s]
        } else {
            c.to_vec()
        };
        slots.push(blend_slot(cps, &cs, i, log));
    }

    let final_slot = if cps[0].final_xform.is_some() { slots.pop() } else { None };
    out.xforms = slots.iter().zip(chaos).map(|(s, row)| s.to_xform(row)).collect();
    out.final_xform = final_slot.map(|s| s.to_xform(Vec::new()));
    out
}

/// Blends xform `i` of the aligned flames.
fn blend_slot(cps: &[WorkFlame<'_>], c: &[f64], i: usize, log: bool) -> Slot {
    let s = |k: usize| cps[k].slot(i);

    // Every variation any control point has (the others count as weight 0
    // with default parameters).
    let mut vars: BTreeMap<usize, Var> = BTreeMap::new();
    let mut kinds: Vec<(usize, VariationKind)> =
        cps.iter().flat_map(|w| w.slot(i).vars.iter().map(|(&j, v)| (j, v.kind))).collect();
    kinds.sort_by_key(|&(j, _)| j);
    kinds.dedup_by_key(|&mut (j, _)| j);
    for (j, kind) in kinds {
        // flam3's defaults, read from the parameter table only when some
        // control point lacks the variation.
        let defaults: OnceCell<Vec<f64>> = OnceCell::new();
        let default = |p: usize| defaults.get_or_init(|| Var::absent(kind).params).get(p).copied().unwrap_or(0.0);
        let get = |k: usize| s(k).vars.get(&j);
        let all_have = (0..cps.len()).all(|k| get(k).is_some());
        let mut nparams = (0..cps.len()).filter_map(|k| get(k).map(|v| v.params.len())).max().unwrap_or(0);
        if !all_have {
            nparams = nparams.max(kind.params().len());
        }
        let weight = blend(c, |k| get(k).map_or(0.0, |v| v.weight));
        let params = (0..nparams)
            .map(|p| {
                blend(c, |k| match get(k) {
                    Some(v) => v.param(p),
                    None => default(p),
                })
            })
            .collect();
        vars.insert(j, Var { kind, weight, params });
    }

    let (coefs, post) = if log {
        let coefs = affine::blend_log(cps, c, i, false);
        let post = if (0..cps.len()).all(|k| s(k).post.is_identity()) {
            Affine::IDENTITY
        } else {
            affine::blend_log(cps, c, i, true)
        };
        (coefs, post)
    } else {
        let coefs = affine::blend_linear(c, |k| s(k).coefs);
        let post = if (0..cps.len()).all(|k| s(k).post.is_identity()) {
            Affine::IDENTITY
        } else {
            affine::blend_linear(c, |k| s(k).post)
        };
        (coefs, post)
    };

    Slot {
        weight: non_negative(blend(c, |k| s(k).weight)),
        color: blend(c, |k| s(k).color).clamp(0.0, 1.0),
        color_speed: blend(c, |k| s(k).color_speed).clamp(0.0, 1.0),
        animate: blend(c, |k| s(k).animate),
        opacity: blend(c, |k| s(k).opacity),
        coefs,
        post,
        vars,
        padding: false,
        wind: [0.0; 2],
    }
}

/// flam3's `if (x < 0) x = 0`: NaN stays NaN.
fn non_negative(x: f64) -> f64 {
    if x < 0.0 { 0.0 } else { x }
}
