//! One `<flame>` element (flam3's `parse_flame_element`): its attributes,
//! its children (palette elements, xforms, the final xform, symmetry), then
//! `soloxform`, the chaos rows and the palette.

use roxmltree::Node;

use super::palette::PaletteBuild;
use super::values::{ValueResult, int_in, integer, keyword, real, reals, shown};
use super::xform::ReadXForm;
use super::{NameList, Reader, attr_err, genome_err};
use crate::error::Result;
use crate::genome::{
    AffineInterpolation, Curves, FilterShape, Flame, Interpolation, PaletteInterpolation, PaletteMode, TemporalFilter,
    XForm,
};
use crate::variations::{Stage, VariationKind, VariationSpec};

/// The most standard xforms a flame may have (real genomes have tens; the
/// limit keeps memory proportional to the input).
pub(super) const MAX_XFORMS: usize = 10_000;

/// Flame attributes written by flam3's own tools, Electric Sheep,
/// Fractorium or Apophysis that do not affect a flam3 render: ignored
/// silently, as flam3 does (Fractorium's `plugins` lists the variations the
/// file uses, `new_linear` says `linear` is the 2-D one, `sub_batch_size`,
/// `fuse` and `rand_range` tune its iteration, `palette_index` names its
/// palette-file entry).
const SILENT_FLAME_ATTRIBUTES: [&str; 11] = [
    "version",
    "nick",
    "url",
    "id",
    "gen",
    "plugins",
    "new_linear",
    "sub_batch_size",
    "fuse",
    "rand_range",
    "palette_index",
];

/// Fractorium's 3-D camera: no effect on points in the plane when zero
/// (ignored silently then, noted for the file's warning otherwise).
const CAMERA_3D_ATTRIBUTES: [&str; 6] = ["cam_zpos", "cam_persp", "cam_yaw", "cam_pitch", "cam_dof", "blur_curve"];

/// Fractorium's colour curve attributes, by the curve each sets.
const CURVE_ATTRIBUTES: [(&str, usize); 4] =
    [("overall_curve", 0), ("red_curve", 1), ("green_curve", 2), ("blue_curve", 3)];

/// A curve's control points as Fractorium reads them: each coordinate
/// clamped to [0, 1], sorted by x, a second point at the origin moved to
/// (¼, ¼) and a fourth at (1, 1) after a third there moved to (¾, ¾) (its
/// fix-ups for curves saved with doubled end points). Of points with one x
/// the first is kept (Fractorium's spline would divide by zero).
fn curve_points(numbers: &[f64]) -> ValueResult<Vec<[f64; 2]>> {
    let mut v: Vec<[f64; 2]> = numbers.chunks_exact(2).map(|p| [p[0].clamp(0.0, 1.0), p[1].clamp(0.0, 1.0)]).collect();
    v.sort_by(|a, b| a[0].total_cmp(&b[0]));
    if v.len() >= 2 && v[0] == [0.0, 0.0] && v[1] == [0.0, 0.0] {
        v[1] = [0.25, 0.25];
    }
    if v.len() >= 4 && v[2] == [1.0, 1.0] && v[3] == [1.0, 1.0] {
        v[3] = [0.75, 0.75];
    }
    v.sort_by(|a, b| a[0].total_cmp(&b[0]));
    v.dedup_by(|later, earlier| later[0] == earlier[0]);
    if v.len() < 2 {
        return Err("a curve needs at least two points with different x".into());
    }
    Ok(v)
}

/// Numbers of a curve attribute, `per_point` to a point (x, y or x, y,
/// weight).
fn curve_numbers(v: &str, per_point: usize) -> ValueResult<Vec<f64>> {
    let numbers = v.split_whitespace().map(real).collect::<ValueResult<Vec<f64>>>()?;
    if numbers.is_empty() || numbers.len() % per_point != 0 {
        return Err(format!("expected points of {per_point} numbers, found {} numbers", numbers.len()).into());
    }
    Ok(numbers)
}

/// The field of a flame an attribute sets.
type RealField = fn(&mut Flame) -> &mut f64;

/// Flame attributes that hold one real number, and the field each sets.
const REAL_ATTRIBUTES: [(&str, RealField); 17] = [
    ("time", |f| &mut f.time),
    ("hsv_rgb_palette_blend", |f| &mut f.hsv_rgb_palette_blend),
    ("scale", |f| &mut f.scale),
    ("rotate", |f| &mut f.rotate),
    ("zoom", |f| &mut f.zoom),
    ("filter", |f| &mut f.filter_radius),
    ("temporal_filter_width", |f| &mut f.temporal_filter_width),
    ("temporal_filter_exp", |f| &mut f.temporal_filter_exp),
    ("quality", |f| &mut f.quality),
    ("brightness", |f| &mut f.brightness),
    ("gamma", |f| &mut f.gamma),
    ("highlight_power", |f| &mut f.highlight_power),
    ("vibrancy", |f| &mut f.vibrancy),
    ("estimator_radius", |f| &mut f.estimator_radius),
    ("estimator_minimum", |f| &mut f.estimator_minimum),
    ("estimator_curve", |f| &mut f.estimator_curve),
    ("gamma_threshold", |f| &mut f.gamma_threshold),
];

/// What the flame's attributes say beyond its fields.
struct FlameExtras {
    /// `palette="n"`: a numbered palette replacing the colour elements.
    palette_number: Option<i64>,
    /// `soloxform`: the only standard xform left visible.
    solo: Option<f64>,
    /// Fractorium's curves as given, `[overall, red, green, blue]`.
    curves: [Option<Vec<[f64; 2]>>; 4],
}

/// One `chaos` entry as the file gave it: the weight of the move from
/// xform `from` (flam3's `num_std_xforms` when the element was read; −1
/// before the first xform) to xform `to`.
struct ChaosEntry {
    from: i64,
    to: usize,
    weight: f64,
    /// Given on the final xform (flam3 files it under the xform before).
    from_final: bool,
}

/// The children of a `<flame>` as read.
struct FlameChildren {
    palette: PaletteBuild,
    xforms: Vec<XForm>,
    final_xform: Option<XForm>,
    /// flam3's `num_std_xforms`: the index of the last standard xform, −1
    /// before the first. Chaos rows are filed under it.
    num_std: i64,
    xaos: Vec<ChaosEntry>,
    /// The `<edit>` element, re-serialised (the last, as flam3 keeps).
    edits: Option<String>,
}

impl FlameChildren {
    fn new(mode: PaletteMode) -> Self {
        FlameChildren {
            palette: PaletteBuild::new(mode),
            xforms: Vec::new(),
            final_xform: None,
            num_std: -1,
            xaos: Vec::new(),
            edits: None,
        }
    }

    /// Files the `chaos` row of the element just read.
    fn add_chaos(&mut self, row: Option<Vec<f64>>, from_final: bool) {
        let from = self.num_std;
        if let Some(row) = row {
            self.xaos.extend(row.into_iter().enumerate().map(|(to, weight)| ChaosEntry {
                from,
                to,
                weight,
                from_final,
            }));
        }
    }
}

/// Whether the flame's `version` names Fractorium (`EMBER-…`), whose
/// rules differ from flam3's where flam3's make little sense. Fractorium
/// takes a version with "ember" anywhere in it, in any case, as its own.
fn written_by_fractorium(node: Node<'_, '_>) -> bool {
    node.attribute("version").is_some_and(|v| v.to_ascii_lowercase().contains("ember"))
}

/// Whether the flame's `version` names a Fractorium before 1.0.0.7
/// (`EMBER-WIN-1.0.0.6`), whose xforms without a variation passed their
/// points through their affine maps. Fractorium 1.0.0.7 (November 2017)
/// sends them to the origin, as flam3 does ("this breaks backward
/// compatibility", its version history says); a version that cannot be
/// read is taken as a later one. Each of the four numbers is the digits
/// its part begins with (`1.0.0.6 beta` and `1.0.0.6a` are 1.0.0.6).
fn written_by_fractorium_before_1_0_0_7(node: Node<'_, '_>) -> bool {
    let Some(version) = node.attribute("version") else { return false };
    let Some(start) = version.find(|c: char| c.is_ascii_digit()) else { return false };
    let leading_number = |part: &str| {
        let digits = part.find(|c: char| !c.is_ascii_digit()).unwrap_or(part.len());
        part[..digits].parse::<u64>().ok()
    };
    let numbers: Vec<u64> = version[start..].split('.').map_while(leading_number).take(4).collect();
    numbers.len() == 4 && numbers.as_slice() < [1, 0, 0, 7].as_slice()
}

/// Fractorium's pass-through, where flam3's rule differs, as a `linear` of
/// weight 1 (which passes the point on exactly, and is what the genome's
/// writer then gives, so that any version reads it the same way). An xform
/// with no ordinary variation (none named, or all of weight 0, and none
/// added by its `<motion>` elements) passes its point on:
///
/// - in a genome of a Fractorium before 1.0.0.7 (`before_1_0_0_7`), always:
///   through its affine map, then its `post_` forms (flam3 sends the point
///   to the origin);
/// - in any Fractorium's, when it has `pre_blur`, which Fractorium counts
///   among the `pre_` forms (flam3 among the ordinary variations, which
///   add nothing: the origin). Other `pre_` forms pass the point on by
///   `Arranged::passes_through`.
fn pass_through_as_fractorium(xf: &mut XForm, before_1_0_0_7: bool) {
    let regular = |specs: &[VariationSpec]| {
        specs.iter().any(|v| v.kind.stage() == Stage::Regular && v.kind != VariationKind::PRE_BLUR)
    };
    let pre_blur = |specs: &[VariationSpec]| specs.iter().any(|v| v.kind == VariationKind::PRE_BLUR);
    let no_regular = !regular(&xf.variations) && !xf.motion.iter().any(|m| regular(&m.variations));
    let blurred = pre_blur(&xf.variations) || xf.motion.iter().any(|m| pre_blur(&m.variations));
    if no_regular && (before_1_0_0_7 || blurred) {
        let linear = VariationKind::from_name("linear").expect("flam3's first variation");
        xf.variations.insert(0, VariationSpec::new(linear, 1.0));
    }
}

impl Reader<'_> {
    pub(super) fn read_flame(&mut self, node: Node<'_, '_>, index: usize) -> Result<Flame> {
        let label = crate::genome::flame_label(node.attribute("name"), index);
        let at = format!("{}: flame {label}", self.source);
        if node.attributes().len() == 0 {
            return Err(genome_err(&at, "the <flame> element has no attributes"));
        }

        self.skipped_by_flame.push(NameList::default());
        self.fractorium_names = written_by_fractorium(node);
        let mut f = Flame::default();
        let mut extras = FlameExtras { palette_number: None, solo: None, curves: Default::default() };
        for a in node.attributes() {
            let name = a.name();
            self.flame_attribute(&at, &mut f, &mut extras, name, a.value()).map_err(|m| attr_err(&at, name, m))?;
        }

        let mut children = self.read_flame_children(node, &at, f.palette_mode)?;
        if written_by_fractorium(node) {
            let early = written_by_fractorium_before_1_0_0_7(node);
            for xf in children.xforms.iter_mut().chain(children.final_xform.as_mut()) {
                pass_through_as_fractorium(xf, early);
            }
        } else {
            let used = children.xforms.iter().chain(children.final_xform.as_ref()).flat_map(|x| &x.variations);
            for v in used.filter(|v| !v.kind.is_flam3()) {
                self.beyond_flam3.insert(v.kind.name());
            }
        }
        if let Some(s) = extras.solo {
            solo_xform(&mut children.xforms, s);
        }
        self.apply_chaos(&at, &mut children.xforms, children.xaos)?;
        f.xforms = children.xforms;
        f.final_xform = children.final_xform;
        f.edits = children.edits;

        // The palette: a numbered one replaces whatever the elements gave.
        let numbered = match extras.palette_number {
            Some(n) => Some(self.numbered_palette(&at, "palette", n, f.hue_rotation)?),
            None => None,
        };
        f.palette = children.palette.finish(numbered);
        if extras.curves.iter().any(Option::is_some) {
            let curves = Curves { points: extras.curves.map(|c| c.unwrap_or_else(|| Curves::DEFAULT.to_vec())) };
            f.curves = curves.is_set().then_some(curves);
        }
        Ok(f)
    }

    /// Applies one attribute of a `<flame>` element; attributes flam3 does
    /// not read are noted for the file's warning.
    fn flame_attribute(
        &mut self,
        at: &str,
        f: &mut Flame,
        extras: &mut FlameExtras,
        name: &str,
        v: &str,
    ) -> ValueResult<()> {
        if let Some((_, field)) = REAL_ATTRIBUTES.iter().find(|(n, _)| *n == name) {
            *field(f) = real(v)?;
            return Ok(());
        }
        match name {
            "interpolation" => self.keyword_or_default(
                at,
                name,
                v,
                &[("linear", Interpolation::Linear), ("smooth", Interpolation::Smooth)],
                &mut f.interpolation,
            )?,
            "palette_interpolation" => self.keyword_or_default(
                at,
                name,
                v,
                &[
                    ("hsv", PaletteInterpolation::Hsv),
                    ("sweep", PaletteInterpolation::Sweep),
                    ("hsv_circular", PaletteInterpolation::HsvCircular),
                    ("rgb", PaletteInterpolation::Rgb),
                ],
                &mut f.palette_interpolation,
            )?,
            "interpolation_space" | "interpolation_type" => self.keyword_or_default(
                at,
                name,
                v,
                &[
                    ("linear", AffineInterpolation::Linear),
                    ("log", AffineInterpolation::Log),
                    ("old", AffineInterpolation::Compat),
                    ("older", AffineInterpolation::Older),
                ],
                &mut f.affine_interpolation,
            )?,
            "temporal_filter_type" => self.keyword_or_default(
                at,
                name,
                v,
                &[("box", TemporalFilter::Box), ("gaussian", TemporalFilter::Gaussian), ("exp", TemporalFilter::Exp)],
                &mut f.temporal_filter,
            )?,
            "palette_mode" => self.keyword_or_default(
                at,
                name,
                v,
                &[("step", PaletteMode::Step), ("linear", PaletteMode::Linear)],
                &mut f.palette_mode,
            )?,
            "filter_shape" => {
                let shapes: Vec<(&str, FilterShape)> = FilterShape::ALL.iter().map(|&s| (s.name(), s)).collect();
                self.keyword_or_default(at, name, v, &shapes, &mut f.filter_shape)?
            }
            "name" => f.name = Some(v.to_string()),
            // flam3 takes −1 as "no numbered palette".
            "palette" => extras.palette_number = Some(integer(v)?).filter(|&n| n != -1),
            "size" => [f.width, f.height] = size(v)?,
            "center" => f.center = reals::<2>(v)?,
            "oversample" | "supersample" => f.supersample = int_in(v, 1, 1 << 16)? as u32,
            "passes" => f.passes = int_in(v, 1, i64::from(u32::MAX))? as u32,
            "temporal_samples" => f.temporal_samples = int_in(v, 0, i64::from(u32::MAX))? as u32,
            "background" => f.background = reals::<3>(v)?,
            // C's fmod: the sign of the value is kept.
            "hue" => f.hue_rotation = real(v)? % 1.0,
            "soloxform" => extras.solo = Some(real(v)?),
            // The writer gives its own version.
            "version" => {}
            _ if SILENT_FLAME_ATTRIBUTES.contains(&name) => {
                self.not_written.insert(name);
            }
            // Fractorium's fixed log-density scale: 0 (what it writes by
            // default) lets the scale follow quality and size, as flam3's
            // always does; set, it is ignored with the other attributes.
            _ if (CAMERA_3D_ATTRIBUTES.contains(&name) || name == "logscale_k2")
                && v.trim().parse::<f64>() == Ok(0.0) =>
            {
                self.not_written.insert(name);
            }
            // Set: the flame is drawn flat, unlike in Fractorium, so the
            // attribute is listed as dropped (`flame info` says so) and is
            // the error under `strict`.
            _ if CAMERA_3D_ATTRIBUTES.contains(&name) => {
                if self.opts.strict {
                    return Err("Fractorium's 3-D camera is not implemented: the flame would be drawn flat".into());
                }
                if let Some(this_flame) = self.skipped_by_flame.last_mut() {
                    this_flame.insert(name);
                }
                if self.skipped.insert(name) {
                    self.warnings.push(format!(
                        "{at}: attribute '{name}': Fractorium's 3-D camera is not implemented; the flame is drawn \
                         flat, unlike in Fractorium"
                    ));
                }
            }
            // Fractorium's older form: four curves of four (x, y, weight)
            // points; the weights are not used.
            "curves" => {
                let read = || -> ValueResult<Vec<Vec<[f64; 2]>>> {
                    let n = curve_numbers(v, 3)?;
                    if n.len() != 48 {
                        return Err(format!(
                            "expected 48 numbers (4 curves of 4 points x y weight), found {}",
                            n.len()
                        )
                        .into());
                    }
                    n.chunks_exact(12)
                        .map(|group| {
                            curve_points(&group.chunks_exact(3).flat_map(|p| [p[0], p[1]]).collect::<Vec<_>>())
                        })
                        .collect()
                };
                if let Some(curves) = self.curve_or_warning(at, name, read())? {
                    for (c, points) in curves.into_iter().enumerate() {
                        extras.curves[c] = Some(points);
                    }
                }
            }
            _ if CURVE_ATTRIBUTES.iter().any(|(n, _)| *n == name) => {
                let c = CURVE_ATTRIBUTES.iter().find(|(n, _)| *n == name).expect("one of them").1;
                let read = curve_numbers(v, 2).and_then(|n| curve_points(&n));
                if let Some(points) = self.curve_or_warning(at, name, read)? {
                    extras.curves[c] = Some(points);
                }
            }
            // Everything else, `contrast` included (flam3 3.1.1 no longer
            // reads it), is ignored with one warning per file.
            _ => {
                self.ignored_attributes.insert(name);
            }
        }
        Ok(())
    }

    /// A Fractorium curve attribute as read: a malformed one is left out with
    /// a warning (the image keeps that curve's default), or under
    /// [`ParseOptions::strict`](super::ParseOptions::strict) is the error.
    fn curve_or_warning<T>(&mut self, at: &str, name: &str, read: ValueResult<T>) -> ValueResult<Option<T>> {
        match read {
            Ok(v) => Ok(Some(v)),
            Err(e) if !self.opts.strict => {
                self.warnings.push(format!("{at}: attribute '{name}': {e}; ignored (Fractorium's colour curve)"));
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// A keyword attribute: flam3 warns about a value it does not know and
    /// keeps the default (gaussian filter, box temporal filter, step palette
    /// mode, ...), and renders; so does this reader, unless
    /// [`ParseOptions::strict`](super::ParseOptions::strict).
    fn keyword_or_default<T: Copy + PartialEq>(
        &mut self,
        at: &str,
        name: &str,
        v: &str,
        options: &[(&str, T)],
        field: &mut T,
    ) -> ValueResult<()> {
        match keyword(v, options) {
            Ok(t) => *field = t,
            Err(m) if self.opts.strict => return Err(m),
            Err(m) => {
                let kept = options.iter().find(|(_, t)| t == field).map_or("the default", |(k, _)| k);
                self.warnings.push(format!("{at}: attribute '{name}': {m}; using {kept}, as flam3 does"));
            }
        }
        Ok(())
    }

    /// The children of a `<flame>`: palette elements, xforms, the final
    /// xform, symmetry and the `<edit>` history; anything else noted.
    fn read_flame_children(&mut self, node: Node<'_, '_>, at: &str, mode: PaletteMode) -> Result<FlameChildren> {
        let mut c = FlameChildren::new(mode);
        for child in node.children().filter(Node::is_element) {
            match child.tag_name().name() {
                "color" => self.read_color(child, at, &mut c.palette)?,
                "colors" => self.read_colors(child, at, &mut c.palette)?,
                "palette" => self.read_palette_element(child, at, &mut c.palette)?,
                "symmetry" => {
                    let added = self.read_symmetry(child, at, &mut c.xforms, c.final_xform.as_ref())?;
                    c.num_std += added as i64;
                }
                "xform" => self.read_standard_xform(child, at, &mut c)?,
                "finalxform" => self.read_final_xform(child, at, &mut c)?,
                "edit" => c.edits = Some(element_xml(child)),
                other => {
                    self.ignored_elements.insert(other);
                }
            }
        }
        Ok(c)
    }

    fn read_standard_xform(&mut self, node: Node<'_, '_>, at: &str, c: &mut FlameChildren) -> Result<()> {
        if c.xforms.len() >= MAX_XFORMS {
            return Err(genome_err(at, format!("more than {MAX_XFORMS} xforms (not supported)")));
        }
        // flam3 initialises a new xform at the end of its array (after the
        // final xform, if any) and then moves it before the final one: the
        // default colour follows the first position.
        let created_at = c.xforms.len() + usize::from(c.final_xform.is_some());
        c.num_std += 1;
        let xat = format!("{at}: xform {}", c.xforms.len());
        let ReadXForm { xform, chaos } = self.read_xform(node, &xat, created_at)?;
        c.add_chaos(chaos, false);
        c.xforms.push(xform);
        Ok(())
    }

    fn read_final_xform(&mut self, node: Node<'_, '_>, at: &str, c: &mut FlameChildren) -> Result<()> {
        let xat = format!("{at}: finalxform");
        if c.final_xform.is_some() {
            return Err(genome_err(&xat, "more than one <finalxform>"));
        }
        let ReadXForm { xform, chaos } = self.read_xform(node, &xat, c.xforms.len())?;
        if xform.weight != 0.0 {
            return Err(attr_err(&xat, "weight", "a final xform takes no weight (flam3 refuses it)"));
        }
        c.add_chaos(chaos, true);
        c.final_xform = Some(xform);
        Ok(())
    }

    /// Chaos rows: what the file gave, up to the last entry that is not 1
    /// (entries past the end of a row are 1, see `XForm::chaos_to`).
    fn apply_chaos(&mut self, at: &str, xforms: &mut [XForm], xaos: Vec<ChaosEntry>) -> Result<()> {
        let n = xforms.len();
        let mut final_chaos_warned = false;
        let mut dropped = 0usize;
        for ChaosEntry { from, to, weight, from_final } in xaos {
            // flam3 skips entries equal to 1.
            if weight == 1.0 {
                continue;
            }
            if from_final && !final_chaos_warned {
                final_chaos_warned = true;
                let target = if from >= 0 { format!("xform {from}'s row") } else { "nothing".to_string() };
                self.warnings.push(format!(
                    "{at}: finalxform: attribute 'chaos': a final xform has no chaos row; flam3 applies it to {target}, \
                     and so does this reader"
                ));
            }
            if from < 0 || to >= n {
                dropped += 1;
                continue;
            }
            let row = &mut xforms[from as usize].chaos;
            if row.len() <= to {
                row.resize(to + 1, 1.0);
            }
            row[to] = weight;
        }
        if dropped > 0 {
            self.warnings.push(format!(
                "{at}: {dropped} chaos entr{} beyond the {n} xforms ignored",
                if dropped == 1 { "y" } else { "ies" }
            ));
        }
        // A row that gives every xform zero weight (while the weights alone
        // do not): flam3 refuses the flame, Fractorium takes xform 0 next.
        let dead: Vec<usize> = crate::genome::dead_chaos_rows(xforms).collect();
        for i in dead {
            let what = format!("xform {i}: its chaos row gives every xform zero weight");
            if self.opts.strict {
                return Err(genome_err(
                    at,
                    format!(
                        "{what} (flam3 refuses such a flame; without --strict xform 0 follows it, as in \
                         Fractorium)"
                    ),
                ));
            }
            self.warnings
                .push(format!("{at}: {what}; xform 0 follows it, as in Fractorium (flam3 refuses such a flame)"));
        }
        Ok(())
    }
}

/// `size="width height"`: two integers from 1 up.
fn size(v: &str) -> ValueResult<[u32; 2]> {
    let words: Vec<&str> = v.split_whitespace().collect();
    if words.len() != 2 {
        return Err(format!("expected 2 integers (width height), found {} in {}", words.len(), shown(v)).into());
    }
    let side = |w: &str| int_in(w, 1, i64::from(u32::MAX)).map(|x| x as u32);
    Ok([side(words[0])?, side(words[1])?])
}

/// `soloxform`: every other standard xform becomes invisible (a negative
/// index leaves them all as they are).
fn solo_xform(xforms: &mut [XForm], solo: f64) {
    let s = solo.trunc();
    if s >= 0.0 {
        for (i, x) in xforms.iter_mut().enumerate() {
            if i as f64 != s {
                x.opacity = 0.0;
            }
        }
    }
}

/// An element and everything in it written out again as XML: elements,
/// attributes and text (entities resolved, then escaped), without comments
/// or processing instructions, so that the result is well-formed whatever
/// the file declared.
fn element_xml(node: Node<'_, '_>) -> String {
    fn write(node: Node<'_, '_>, out: &mut String) {
        if node.is_text() {
            let text = node.text().unwrap_or_default();
            if !text.trim().is_empty() {
                out.push_str(&text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;"));
            }
            return;
        }
        if !node.is_element() {
            return;
        }
        let name = node.tag_name().name();
        out.push('<');
        out.push_str(name);
        for a in node.attributes() {
            out.push_str(&format!(" {}=\"{}\"", a.name(), crate::genome::write::escape(a.value())));
        }
        if node.has_children() {
            out.push('>');
            for c in node.children() {
                write(c, out);
            }
            out.push_str(&format!("</{name}>"));
        } else {
            out.push_str("/>");
        }
    }
    let mut out = String::new();
    write(node, &mut out);
    out
}
