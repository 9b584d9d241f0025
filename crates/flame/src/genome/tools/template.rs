//! Templates (flam3-genome's `template=`): a flame whose render settings
//! replace those of the flames an operation writes.

use crate::error::{FlameError, Result};
use crate::genome::{Flame, ParseOptions, parse_str};

/// The first flame of a template file and the attributes its `<flame>`
/// element gives: those are applied, plus the three interpolation modes,
/// which a template always sets (flam3's `flam3_apply_template`).
#[derive(Debug, Clone)]
pub struct Template {
    flame: Flame,
    given: Vec<String>,
    ignored: usize,
}

impl Template {
    /// Reads a template from XML text; `source` names it in messages.
    pub fn from_xml(xml: &str, source: &str, opts: &ParseOptions) -> Result<Self> {
        let parsed = parse_str(xml, source, opts)?;
        let ignored = parsed.flames.len().saturating_sub(1);
        let flame = parsed
            .flames
            .into_iter()
            .next()
            .ok_or_else(|| FlameError::Genome(format!("{source}: no <flame> element")))?;
        let doc = crate::xml::parse(xml).map_err(|e| FlameError::Genome(format!("{source}: {e}")))?;
        let node = doc
            .descendants()
            .find(|n| n.is_element() && n.tag_name().name() == "flame")
            .ok_or_else(|| FlameError::Genome(format!("{source}: no <flame> element")))?;
        let given = node.attributes().map(|a| a.name().to_string()).collect();
        Ok(Template { flame, given, ignored })
    }

    /// How many flames of the file after the first were left unread (flam3
    /// warns of them too).
    pub fn ignored_flames(&self) -> usize {
        self.ignored
    }

    /// The render settings the template gives, applied to `f`: size (the
    /// scale follows the height, as in flam3), quality, supersample,
    /// filters, passes, temporal samples, estimator, background, zoom,
    /// gamma threshold, highlight power, palette mode.
    ///
    /// Three settings are always set, to the template's values or, where it
    /// does not give them, to flam3's defaults: `interpolation` (linear),
    /// `palette_interpolation` (hsv_circular) and `hsv_rgb_palette_blend`
    /// (0). flam3-genome reads a template with these defaults in place and
    /// applies them whether given or not, so a template makes its flames
    /// interpolate alike. (A template's own `interpolation="smooth"` is
    /// reset to linear when it is read, as for any one-flame file.)
    ///
    /// Colours, camera position and xforms stay `f`'s.
    pub fn apply(&self, f: &mut Flame) {
        let t = &self.flame;
        let has = |n: &str| self.given.iter().any(|g| g == n);
        if has("background") {
            f.background = t.background;
        }
        if has("zoom") {
            f.zoom = t.zoom;
        }
        if has("supersample") || has("oversample") {
            f.supersample = t.supersample;
        }
        if has("filter") {
            f.filter_radius = t.filter_radius;
        }
        if has("filter_shape") {
            f.filter_shape = t.filter_shape;
        }
        if has("quality") {
            f.quality = t.quality;
        }
        if has("passes") {
            f.passes = t.passes;
        }
        if has("temporal_samples") {
            f.temporal_samples = t.temporal_samples;
        }
        if has("size") {
            f.scale = f.scale * f64::from(t.height) / f64::from(f.height);
            f.width = t.width;
            f.height = t.height;
        }
        if has("estimator_radius") {
            f.estimator_radius = t.estimator_radius;
        }
        if has("estimator_minimum") {
            f.estimator_minimum = t.estimator_minimum;
        }
        if has("estimator_curve") {
            f.estimator_curve = t.estimator_curve;
        }
        if has("gamma_threshold") {
            f.gamma_threshold = t.gamma_threshold;
        }
        f.interpolation = t.interpolation;
        if has("interpolation_type") || has("interpolation_space") {
            f.affine_interpolation = t.affine_interpolation;
        }
        if has("temporal_filter_type") {
            f.temporal_filter = t.temporal_filter;
        }
        if has("temporal_filter_width") {
            f.temporal_filter_width = t.temporal_filter_width;
        }
        if has("temporal_filter_exp") {
            f.temporal_filter_exp = t.temporal_filter_exp;
        }
        if has("highlight_power") {
            f.highlight_power = t.highlight_power;
        }
        if has("palette_mode") {
            f.palette_mode = t.palette_mode;
        }
        f.palette_interpolation = t.palette_interpolation;
        f.hsv_rgb_palette_blend = t.hsv_rgb_palette_blend;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_given_attributes_are_applied() {
        let t = Template::from_xml(r#"<flame size="200 100" quality="50"/>"#, "t", &ParseOptions::default()).unwrap();
        let mut f = Flame { width: 40, height: 50, scale: 10.0, gamma: 2.0, ..Flame::default() };
        t.apply(&mut f);
        assert_eq!((f.width, f.height, f.quality), (200, 100, 50.0));
        assert_eq!(f.scale, 20.0);
        assert_eq!(f.gamma, 2.0);
        assert_eq!(f.supersample, 1);
    }

    #[test]
    fn the_interpolation_modes_are_always_set() {
        use crate::genome::{Interpolation, PaletteInterpolation};
        let plain = Template::from_xml(r#"<flame quality="50"/>"#, "t", &ParseOptions::default()).unwrap();
        let mut f = Flame {
            interpolation: Interpolation::Smooth,
            palette_interpolation: PaletteInterpolation::Rgb,
            hsv_rgb_palette_blend: 0.5,
            ..Flame::default()
        };
        plain.apply(&mut f);
        assert_eq!(f.interpolation, Interpolation::Linear);
        assert_eq!(f.palette_interpolation, PaletteInterpolation::HsvCircular);
        assert_eq!(f.hsv_rgb_palette_blend, 0.0);
        let given = Template::from_xml(
            r#"<flame interpolation="smooth" palette_interpolation="sweep" hsv_rgb_palette_blend="0.25"/>"#,
            "t",
            &ParseOptions::default(),
        )
        .unwrap();
        given.apply(&mut f);
        // A template is read as a file of one flame, whose smooth
        // interpolation flam3 resets to linear on reading: flam3-genome's
        // templates always make their flames linear.
        assert_eq!(f.interpolation, Interpolation::Linear);
        assert_eq!(f.palette_interpolation, PaletteInterpolation::Sweep);
        assert_eq!(f.hsv_rgb_palette_blend, 0.25);
    }
}
