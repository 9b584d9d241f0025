//! `<xform>`, `<finalxform>` and `<motion>` elements (flam3's
//! `parse_xform_xml`), and `<symmetry>` (flam3's `flam3_add_symmetry`).

use roxmltree::{Attribute, Node};

use super::flame::MAX_XFORMS;
use super::values::{ValueError, ValueResult, int_in, integer, keyword, real, reals, round6, shown};
use super::{Reader, attr_err, genome_err};
use crate::error::{FlameError, Result};
use crate::genome::{Affine, Motion, MotionFunction, XForm};
use crate::variations::{Stage, VARIATION_COUNT, VariationKind, VariationSpec, param_owner};

/// An xform as read, and its `chaos` row as given (not yet filed).
pub(super) struct ReadXForm {
    pub(super) xform: XForm,
    pub(super) chaos: Option<Vec<f64>>,
}

/// An xform being assembled from its attributes.
struct XFormBuild {
    xf: XForm,
    /// Variation weights by index (a later attribute overrides).
    weights: Vec<f64>,
    /// Variation parameters by index, where an attribute set one.
    params: Vec<Option<Vec<f64>>>,
    /// The `pre_`/`post_` forms in the order their weights were first given.
    forms: Vec<VariationKind>,
    /// The ordinary variations in the order their weights were first given
    /// (kept for an xform where that order matters, see `finish`).
    regular_order: Vec<VariationKind>,
    /// The variations an attribute of their name gave a weight other than
    /// 0. Two attributes name one variation only through an Apophysis
    /// plugin's name (bwraps7 beside bwraps): Fractorium keeps the first.
    named: Vec<VariationKind>,
    chaos: Option<Vec<f64>>,
    /// Whether `motion_frequency` or `motion_function` was given.
    motion_params: bool,
    /// `motion_frequency` and `motion_function`, for a `<motion>` element.
    frequency: i64,
    function: Option<MotionFunction>,
    /// Whether this is a `<motion>` element: every value starts at 0 (flam3
    /// clears the element), parameters included.
    motion: bool,
}

impl XFormBuild {
    fn new(created_at: usize) -> Self {
        XFormBuild {
            xf: XForm::flam3_default(created_at),
            weights: vec![0.0; VariationKind::known().count()],
            params: vec![None; VariationKind::known().count()],
            forms: Vec::new(),
            regular_order: Vec::new(),
            named: Vec::new(),
            chaos: None,
            motion_params: false,
            frequency: 0,
            function: None,
            motion: false,
        }
    }

    /// A `<motion>` element: all values 0.
    fn new_motion() -> Self {
        let m = Motion::zero();
        let mut b = XFormBuild::new(0);
        b.xf = XForm {
            weight: 0.0,
            color: 0.0,
            color_speed: 0.0,
            animate: 0.0,
            opacity: 0.0,
            coefs: m.coefs,
            post: m.post,
            ..XForm::flam3_default(0)
        };
        b.motion = true;
        b
    }

    /// Applies one of flam3's fixed xform attributes; `Ok(false)` when
    /// `name` is not one of them (a variation, a parameter, or unknown).
    /// In a `<motion>` element weights may be negative (they are changes)
    /// and `chaos` and `plotmode` are refused.
    fn fixed_attribute(&mut self, name: &str, v: &str, motion: bool) -> ValueResult<bool> {
        let xf = &mut self.xf;
        match name {
            "weight" => {
                xf.weight = real(v)?;
                if xf.weight < 0.0 && !motion {
                    return Err(format!("negative weight {}", crate::render::shown(xf.weight)).into());
                }
            }
            "symmetry" => {
                let s = real(v)?;
                xf.color_speed = (1.0 - s) / 2.0;
                xf.animate = if s > 0.0 { 0.0 } else { 1.0 };
            }
            "color_speed" => xf.color_speed = real(v)?,
            "animate" => xf.animate = real(v)?,
            "motion_frequency" => {
                self.frequency = integer(v)?;
                self.motion_params |= self.frequency != 0;
            }
            "motion_function" => {
                self.function = Some(keyword(
                    v,
                    &[
                        ("sin", MotionFunction::Sin),
                        ("triangle", MotionFunction::Triangle),
                        ("hill", MotionFunction::Hill),
                    ],
                )?);
                self.motion_params = true;
            }
            "color" => {
                // One number, or two (flam3 2's second colour coordinate,
                // ignored).
                let words: Vec<&str> = v.split_whitespace().collect();
                if words.is_empty() || words.len() > 2 {
                    return Err(format!("expected 1 or 2 numbers, found {} in {}", words.len(), shown(v)).into());
                }
                xf.color = real(words[0])?;
                if let Some(w) = words.get(1) {
                    real(w)?;
                }
            }
            "var1" => {
                let j = int_in(v, 0, VARIATION_COUNT as i64 - 1)?;
                self.weights.iter_mut().for_each(|w| *w = 0.0);
                self.weights[j as usize] = 1.0;
            }
            "var" => {
                self.weights.iter_mut().for_each(|w| *w = 0.0);
                self.weights[..VARIATION_COUNT].copy_from_slice(&reals::<VARIATION_COUNT>(v)?);
            }
            "chaos" => {
                if motion {
                    return Err("not allowed in a <motion> element".into());
                }
                let row = v.split_whitespace().map(real).collect::<ValueResult<Vec<f64>>>()?;
                if let Some(bad) = row.iter().find(|&&s| s < 0.0) {
                    return Err(format!("negative chaos weight {}", crate::render::shown(*bad)).into());
                }
                self.chaos = Some(row);
            }
            "plotmode" => {
                if motion {
                    return Err("not allowed in a <motion> element".into());
                }
                if v == "off" {
                    xf.opacity = 0.0;
                }
            }
            "opacity" => xf.opacity = real(v)?,
            "coefs" => xf.coefs = Affine::from_xml_order(reals::<6>(v)?),
            "post" => xf.post = Affine::from_xml_order(reals::<6>(v)?),
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// A variation's weight or one of its parameters; `Ok(false)` when
    /// `name` is neither.
    fn variation_attribute(&mut self, name: &str, v: &str) -> ValueResult<bool> {
        if let Some(kind) = VariationKind::from_name(name) {
            let weight = real(v)?;
            if self.named.contains(&kind) {
                return Ok(true);
            }
            if weight != 0.0 {
                self.named.push(kind);
            }
            self.weights[kind.index()] = weight;
            let order = if kind.stage() == Stage::Regular { &mut self.regular_order } else { &mut self.forms };
            if !order.contains(&kind) {
                order.push(kind);
            }
        } else if let Some((kind, pi)) = param_owner(name) {
            let mut x = real(v)?;
            let specs = kind.params();
            if specs.get(pi).is_some_and(|p| p.name == "super_shape_rnd") {
                x = x.clamp(0.0, 1.0);
            }
            let start = |p: &crate::variations::ParamSpec| if self.motion { 0.0 } else { p.default };
            let slot = self.params[kind.index()].get_or_insert_with(|| specs.iter().map(start).collect());
            if let Some(p) = slot.get_mut(pi) {
                *p = x;
            }
        } else {
            return Ok(false);
        }
        Ok(true)
    }

    /// The xform with its variations (weight 0 left out): the ordinary
    /// ones in index order (flam3's), or in the order the file gave them
    /// when one of them replaces the sum of those before it (Fractorium's
    /// circlecrop and mirror_x, which Fractorium applies in file order),
    /// then the `pre_`/`post_` forms in the order the file gave them.
    fn finish(mut self) -> ReadXForm {
        let weights = &self.weights;
        let file_order = self.regular_order.iter().any(|k| weights[k.index()] != 0.0 && k.replaces_sum());
        let regular: Vec<VariationKind> = if file_order {
            std::mem::take(&mut self.regular_order)
        } else {
            (0..self.weights.len())
                .filter_map(VariationKind::from_index)
                .filter(|k| k.stage() == Stage::Regular)
                .collect()
        };
        let order: Vec<VariationKind> = regular.into_iter().chain(std::mem::take(&mut self.forms)).collect();
        for kind in order {
            let k = kind.index();
            let w = self.weights[k];
            if w == 0.0 {
                continue;
            }
            let mut spec = VariationSpec::new(kind, w);
            if let Some(p) = self.params[k].take() {
                spec.params = p;
            }
            self.xf.variations.push(spec);
        }
        ReadXForm { xform: self.xf, chaos: self.chaos }
    }

    /// A `<motion>` element: the changes it gives, one variation entry for
    /// each variation whose weight or a parameter it names.
    fn finish_motion(mut self) -> Motion {
        let regular =
            (0..self.weights.len()).filter_map(VariationKind::from_index).filter(|k| k.stage() == Stage::Regular);
        let mut order: Vec<VariationKind> = regular.chain(std::mem::take(&mut self.forms)).collect();
        // A pre_/post_ form named by a parameter only.
        let named_by_parameter: Vec<VariationKind> = (0..self.params.len())
            .filter(|&k| self.params[k].is_some())
            .filter_map(VariationKind::from_index)
            .filter(|kind| !order.contains(kind))
            .collect();
        order.extend(named_by_parameter);
        let mut variations = Vec::new();
        for kind in order {
            let k = kind.index();
            let params = self.params[k].take();
            if self.weights[k] == 0.0 && params.is_none() {
                continue;
            }
            let mut spec = VariationSpec::new(kind, self.weights[k]);
            spec.params = params.unwrap_or_else(|| vec![0.0; kind.params().len()]);
            variations.push(spec);
        }
        let xf = self.xf;
        Motion {
            frequency: self.frequency,
            function: self.function,
            weight: xf.weight,
            color: xf.color,
            color_speed: xf.color_speed,
            animate: xf.animate,
            opacity: xf.opacity,
            coefs: xf.coefs,
            post: xf.post,
            variations,
        }
    }
}

impl Reader<'_> {
    /// One `<xform>` or `<finalxform>` element with its `<motion>`
    /// children. `created_at` is the position in flam3's array where the
    /// xform was initialised (its default colour is that parity).
    pub(super) fn read_xform(&mut self, node: Node<'_, '_>, at: &str, created_at: usize) -> Result<ReadXForm> {
        let mut b = XFormBuild::new(created_at);
        self.read_attributes(node, at, &mut b)?;
        if b.motion_params {
            return Err(genome_err(
                at,
                "motion_frequency/motion_function belong in a <motion> child element, not on the xform \
                 (flam3 refuses this)",
            ));
        }
        let mut motion = Vec::new();
        for (mi, m) in node.children().filter(|c| c.is_element() && c.tag_name().name() == "motion").enumerate() {
            let mut mb = XFormBuild::new_motion();
            self.read_attributes(m, &format!("{at}: <motion> {mi}"), &mut mb)?;
            motion.push(mb.finish_motion());
            self.motion_seen = true;
        }
        let mut read = b.finish();
        if read.xform.opacity < 0.0 {
            let what = format!("opacity {} is negative", crate::render::shown(read.xform.opacity));
            if self.opts.strict {
                return Err(genome_err(at, &what));
            }
            self.warnings.push(format!(
                "{at}: {what}: the xform's points are not drawn (flam3's formula makes them NaN, which blackens the \
                 cells they reach)"
            ));
        }
        read.xform.motion = motion;
        self.drop_unsupported(at, &mut read.xform)?;
        Ok(read)
    }

    /// The attributes of an `<xform>`, `<finalxform>` or `<motion>` element.
    fn read_attributes(&mut self, node: Node<'_, '_>, at: &str, b: &mut XFormBuild) -> Result<()> {
        if node.attributes().len() == 0 {
            return Err(genome_err(at, "the element has no attributes"));
        }
        let motion = b.motion;
        let attrs: Vec<Attribute<'_, '_>> = node.attributes().collect();
        let names: Vec<&str> = attrs.iter().map(Attribute::name).collect();
        for (ai, att) in attrs.iter().enumerate() {
            let (name, v) = (att.name(), att.value());
            let e = |m: ValueError| attr_err(at, name, m);
            let read_as =
                if self.fractorium_names { name.into() } else { super::apophysis::read_as(name, &names[ai + 1..]) };
            if b.fixed_attribute(name, v, motion).map_err(e)? || b.variation_attribute(&read_as, v).map_err(e)? {
                continue;
            }
            if is_quietly_ignored(name) {
                // Fractorium recomputes auger_half_scale from auger_scale.
                if name != "auger_half_scale" {
                    self.not_written.insert(name);
                }
                continue;
            }
            let renamed = (read_as != name).then_some(&*read_as);
            self.unknown_xform_attribute(at, name, renamed, &attrs[ai + 1..])?;
        }
        Ok(())
    }

    /// Variations whose parameters ask for what warpmc does not implement
    /// ([`VariationSpec::unsupported`]): the error under
    /// [`ParseOptions::strict`](super::ParseOptions::strict), else dropped
    /// with one warning per name and file, as unknown variations are.
    fn drop_unsupported(&mut self, at: &str, xf: &mut XForm) -> Result<()> {
        let mut i = 0;
        while i < xf.variations.len() {
            let Some(why) = xf.variations[i].unsupported() else {
                i += 1;
                continue;
            };
            let name = xf.variations[i].kind.name();
            let msg = format!("{at}: variation '{name}': these settings are not implemented ({why})");
            if self.opts.strict {
                return Err(FlameError::UnknownVariation(msg));
            }
            if let Some(this_flame) = self.skipped_by_flame.last_mut() {
                this_flame.insert(name);
            }
            if self.skipped.insert(name) {
                self.warnings.push(format!(
                    "{msg}: dropped with its weight; the render will differ from the program that wrote the file"
                ));
            }
            xf.variations.remove(i);
        }
        Ok(())
    }

    /// An xform attribute that is neither flam3's nor a variation: the
    /// error under [`ParseOptions::strict`](super::ParseOptions::strict),
    /// else dropped with one warning per name and file (none for a
    /// parameter of a variation already dropped: `crackle_power` after
    /// `crackle`).
    /// An attribute that is no variation, parameter or xform attribute that
    /// warpmc knows, `renamed` being the name it was read under where that
    /// is another (an Apophysis plugin's name for a variation warpmc does
    /// not implement).
    fn unknown_xform_attribute(
        &mut self,
        at: &str,
        name: &str,
        renamed: Option<&str>,
        rest: &[Attribute<'_, '_>],
    ) -> Result<()> {
        if self.opts.strict {
            return Err(unknown_attribute(at, name, renamed, rest));
        }
        if let Some(this_flame) = self.skipped_by_flame.last_mut() {
            this_flame.insert(name);
        }
        if self.skipped.contains(name) {
            return Ok(());
        }
        // A name that extends a dropped one by `_…` is its parameter.
        let parameter_of_dropped = name.match_indices('_').any(|(i, _)| self.skipped.contains(&name[..i]));
        self.skipped.insert(name);
        if !parameter_of_dropped {
            let what = match renamed {
                Some(r) => format!("read as Fractorium's '{r}' (an Apophysis plugin's name), which warpmc lacks"),
                None => "unknown variation or attribute".into(),
            };
            self.warnings.push(format!(
                "{at}: attribute '{name}': {what}: dropped with its weight (warpmc implements flam3's 99 variations \
                 and some of Fractorium's); the render will differ from the program that wrote the file"
            ));
        }
        Ok(())
    }

    /// `<symmetry kind>`: flam3's `flam3_add_symmetry`. Returns how many
    /// xforms were added.
    pub(super) fn read_symmetry(
        &mut self,
        node: Node<'_, '_>,
        at: &str,
        xforms: &mut Vec<XForm>,
        final_xform: Option<&XForm>,
    ) -> Result<usize> {
        let cat = format!("{at}: <symmetry>");
        if node.attributes().len() == 0 {
            return Err(genome_err(&cat, "no attributes"));
        }
        let mut kind = 0i64;
        for att in node.attributes() {
            let (name, v) = (att.name(), att.value());
            match name {
                "kind" => kind = int_in(v, -1000, 1000).map_err(|m| attr_err(&cat, name, m))?,
                _ => return Err(attr_err(&cat, name, "unknown <symmetry> attribute (flam3 knows kind)")),
            }
        }
        if kind == 0 {
            return Err(attr_err(&cat, "kind", "0 asks flam3 for a random symmetry, which cannot be reproduced"));
        }
        if kind == 1 {
            return Ok(0);
        }
        let added = match final_xform {
            None => symmetry_xforms(kind),
            Some(f) => symmetry_xforms_before_final(kind, f).ok_or_else(|| {
                genome_err(
                    &cat,
                    "a <symmetry> after a <finalxform> whose color_speed is not above 0 is not supported (flam3 \
                     would make a symmetry xform the final one); put the <symmetry> first",
                )
            })?,
        };
        let n = added.len();
        if xforms.len() + n > MAX_XFORMS {
            return Err(genome_err(&cat, format!("more than {MAX_XFORMS} xforms (not supported)")));
        }
        xforms.extend(added);
        Ok(n)
    }
}

/// The xforms flam3 adds for symmetry `kind` (neither 0 nor 1): for
/// `kind < 0` a mirror first, then the rotations by multiples of
/// 2π/|kind|, sorted as flam3 sorts them.
pub(crate) fn symmetry_xforms(kind: i64) -> Vec<XForm> {
    let mut added = unsorted_symmetry_xforms(kind);
    // flam3 sorts the new xforms (all with colour speed 0) by the
    // determinant of their linear part; glibc's qsort keeps equal ones in
    // order here, as this stable sort does.
    stable_sort(&mut added, flam3_xform_order);
    added
}

/// The xforms flam3 adds for symmetry `kind`, in the order it adds them.
fn unsorted_symmetry_xforms(kind: i64) -> Vec<XForm> {
    let linear = VariationKind::from_index(0).expect("linear is variation 0");
    let symmetry_xform = |color: f64, c: [[f64; 2]; 3]| XForm {
        weight: 1.0,
        color,
        color_speed: 0.0,
        animate: 0.0,
        coefs: Affine { c },
        variations: vec![VariationSpec::new(linear, 1.0)],
        ..XForm::flam3_default(0)
    };
    let mut added = Vec::new();
    let mut sym = kind;
    if sym < 0 {
        added.push(symmetry_xform(1.0, [[-1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]));
        sym = -sym;
    }
    let a = 2.0 * std::f64::consts::PI / sym as f64;
    for k in 1..sym {
        let kf = k as f64;
        let color = if sym < 3 { 0.0 } else { (kf - 1.0) / (sym as f64 - 2.0) };
        let c00 = round6((kf * a).cos());
        let c01 = round6((kf * a).sin());
        added.push(symmetry_xform(color, [[c00, c01], [round6(-c01), c00], [0.0, 0.0]]));
    }
    added
}

/// The xforms flam3 adds for symmetry `kind` to a flame that already has
/// the final xform `final_xform`, in flam3's order; None where flam3 would
/// move the final xform among them (and make a symmetry xform final).
///
/// flam3 keeps its final xform last in its array and sorts the last
/// |added| entries: with a final xform these are the added xforms but the
/// first, and the final one, which stays last when its colour speed is
/// above the symmetry xforms' 0.
pub(crate) fn symmetry_xforms_before_final(kind: i64, final_xform: &XForm) -> Option<Vec<XForm>> {
    let mut added = unsorted_symmetry_xforms(kind);
    if added.is_empty() {
        return Some(added);
    }
    let mut rest: Vec<(XForm, bool)> =
        added.drain(1..).map(|x| (x, false)).chain(std::iter::once((final_xform.clone(), true))).collect();
    stable_sort(&mut rest, |a, b| flam3_xform_order(&a.0, &b.0));
    if !rest.last().is_some_and(|(_, is_final)| *is_final) {
        return None;
    }
    added.extend(rest.into_iter().filter(|(_, is_final)| !is_final).map(|(x, _)| x));
    Some(added)
}

/// flam3's order of xforms when it sorts symmetry xforms (`compare_xforms`):
/// by colour speed, then, at a colour speed other than 0, negative
/// determinants first and then by the angle of the first row, otherwise
/// by the determinant of the linear part.
fn flam3_xform_order(a: &XForm, b: &XForm) -> std::cmp::Ordering {
    use std::cmp::Ordering::{Equal, Greater, Less};
    let det = |x: &XForm| x.coefs.c[0][0] * x.coefs.c[1][1] - x.coefs.c[0][1] * x.coefs.c[1][0];
    if a.color_speed > b.color_speed {
        return Greater;
    }
    if a.color_speed < b.color_speed {
        return Less;
    }
    let (mut ad, mut bd) = (det(a), det(b));
    if a.color_speed != 0.0 {
        if ad < 0.0 {
            return Less;
        }
        if bd < 0.0 {
            return Greater;
        }
        ad = a.coefs.c[0][0].atan2(a.coefs.c[0][1]);
        bd = b.coefs.c[0][0].atan2(b.coefs.c[0][1]);
    }
    if ad < bd {
        Less
    } else if ad > bd {
        Greater
    } else {
        Equal
    }
}

/// A stable insertion sort that takes any comparison, a total order or
/// not (flam3's is not always one), without panicking.
fn stable_sort<T>(v: &mut [T], order: impl Fn(&T, &T) -> std::cmp::Ordering) {
    for i in 1..v.len() {
        let mut j = i;
        while j > 0 && order(&v[j - 1], &v[j]) == std::cmp::Ordering::Greater {
            v.swap(j - 1, j);
            j -= 1;
        }
    }
}

/// The error for an unknown xform attribute, naming the other unknown ones
/// of the same element.
fn unknown_attribute(at: &str, name: &str, renamed: Option<&str>, rest: &[Attribute<'_, '_>]) -> FlameError {
    let others: Vec<String> =
        rest.iter().map(|a| a.name()).filter(|n| !is_known_xform_attribute(n)).map(|n| format!("'{n}'")).collect();
    let mut msg = match renamed {
        Some(r) => format!(
            "{at}: attribute '{name}': read as Fractorium's '{r}' (an Apophysis plugin's name), a variation warpmc \
             does not implement"
        ),
        None => format!(
            "{at}: attribute '{name}': unknown variation (not one of the variations warpmc implements, their \
             parameters or xform attributes)"
        ),
    };
    if !others.is_empty() {
        let shown: Vec<&str> = others.iter().take(8).map(String::as_str).collect();
        msg.push_str(&format!(
            "; also unknown in this element: {}{}",
            shown.join(", "),
            if others.len() > 8 { ", …" } else { "" }
        ));
    }
    FlameError::UnknownVariation(msg)
}

/// Xform attributes of Fractorium and Apophysis that mean nothing in
/// flam3's plane: `var_color` (Fractorium's direct-colour weight, read only
/// by its dc_ variations), `name` (a label), the z terms of waves2 (and of
/// its pre_/post_ forms), which move only z, and `auger_half_scale`, which
/// Fractorium writes but recomputes from `auger_scale`.
fn is_quietly_ignored(name: &str) -> bool {
    const IGNORED: [&str; 3] = ["waves2_scalez", "waves2_freqz", "auger_half_scale"];
    let bare = name.strip_prefix("pre_").or_else(|| name.strip_prefix("post_")).unwrap_or(name);
    name == "var_color" || name == "name" || IGNORED.contains(&bare)
}

/// Whether warpmc reads (or quietly ignores) an xform attribute of this
/// name.
fn is_known_xform_attribute(name: &str) -> bool {
    if is_quietly_ignored(name) {
        return true;
    }
    const FIXED: [&str; 14] = [
        "weight",
        "symmetry",
        "color_speed",
        "animate",
        "motion_frequency",
        "motion_function",
        "color",
        "var1",
        "var",
        "chaos",
        "plotmode",
        "opacity",
        "coefs",
        "post",
    ];
    FIXED.contains(&name) || VariationKind::from_name(name).is_some() || param_owner(name).is_some()
}
