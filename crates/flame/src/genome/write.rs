//! Writing genomes as flam3 XML (the counterpart of flam3's `flam3_print`):
//! what this module writes, the reader reads back as the same [`Flame`],
//! and flam3-render reads as the same flame.
//!
//! Every number is written with the fewest digits that read back as the
//! same `f64` (exponent form only for very small or very large
//! magnitudes). Palette entries are written as `<color>` elements on
//! flam3's 0–255 scale, with digits chosen so that the reader's division
//! by 255 (and, for entries with alpha below 1, its premultiplication)
//! gives back the stored entry: exactly for colours of whole 255ths (every
//! palette read from bytes), else within the last bit where no decimal
//! divides to the entry. Variations and their parameters
//! are written by the names of the variation table, so every variation
//! the reader knows is written without a list kept here.

use std::fmt::Write as _;

use super::{AffineInterpolation, Flame, Interpolation, PaletteInterpolation, PaletteMode, TemporalFilter, XForm};
use crate::genome::{Affine, Motion};

/// The flames as one document: a single flame as a bare `<flame>`
/// element, several inside `<root>` (flam3-genome uses `pick`, `sequence`,
/// `clone_all`, …). `version` goes into each flame's `version` attribute
/// when given (flam3 writes `FLAM3-LNX-3.1.1`; the reader ignores it).
///
/// ```
/// use warpmc_flame::genome::{ParseOptions, parse_str, write_genome};
///
/// let xml = r#"<flame size="64 48" scale="20"><xform weight="0.5" julian="1" julian_power="3" coefs="1 0 0 1 0.5 0"/></flame>"#;
/// let flames = parse_str(xml, "in", &ParseOptions::default())?.flames;
/// let written = write_genome(&flames, "pick", None);
/// assert_eq!(parse_str(&written, "out", &ParseOptions::default())?.flames, flames);
/// # Ok::<(), warpmc_flame::FlameError>(())
/// ```
pub fn write_genome(flames: &[Flame], root: &str, version: Option<&str>) -> String {
    if flames.len() == 1 {
        let mut out = String::new();
        write_flame_into(&mut out, &flames[0], version, "");
        return out;
    }
    let doc = Document::new(root, version);
    let mut out = doc.start();
    for f in flames {
        out.push_str(&doc.flame(f));
    }
    out.push_str(&doc.end());
    out
}

/// A document of several flames written a piece at a time, for outputs
/// too long to hold in memory (flam3-genome's `sequence=` of thousands of
/// frames): [`start`](Self::start), then [`flame`](Self::flame) for each
/// flame, then [`end`](Self::end) give the text [`write_genome`] gives for
/// the same flames (when there are two or more).
///
/// ```
/// use warpmc_flame::genome::{Document, Flame, write_genome};
///
/// let flames = [Flame::default(), Flame { time: 1.0, ..Flame::default() }];
/// let doc = Document::new("sequence", Some("WARPMC"));
/// let text = doc.start() + &doc.flame(&flames[0]) + &doc.flame(&flames[1]) + &doc.end();
/// assert_eq!(text, write_genome(&flames, "sequence", Some("WARPMC")));
/// ```
#[derive(Clone, Debug)]
pub struct Document {
    root: String,
    version: Option<String>,
}

impl Document {
    /// A document whose flames sit inside `<root>` (`flames` where `root`
    /// is empty or not a plain name); `version` goes into each flame's
    /// `version` attribute when given.
    pub fn new(root: &str, version: Option<&str>) -> Self {
        let plain = !root.is_empty() && root.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        Document { root: if plain { root } else { "flames" }.to_string(), version: version.map(str::to_string) }
    }

    /// The opening tag of the root element, ending in a newline.
    pub fn start(&self) -> String {
        let mut out = format!("<{}", self.root);
        if let Some(v) = &self.version {
            let _ = write!(out, " version=\"{}\"", escape(v));
        }
        out.push_str(">\n");
        out
    }

    /// One `<flame>` element inside the root, ending in a newline.
    pub fn flame(&self, flame: &Flame) -> String {
        let mut out = String::new();
        write_flame_into(&mut out, flame, self.version.as_deref(), "");
        out
    }

    /// The closing tag of the root element, ending in a newline.
    pub fn end(&self) -> String {
        format!("</{}>\n", self.root)
    }
}

/// One `<flame>` element, ending in a newline.
pub fn write_flame(flame: &Flame) -> String {
    let mut out = String::new();
    write_flame_into(&mut out, flame, None, "");
    out
}

fn write_flame_into(out: &mut String, f: &Flame, version: Option<&str>, indent: &str) {
    let mut a = Attributes::new();
    if let Some(v) = version {
        a.text("version", v);
    }
    if let Some(n) = &f.name {
        a.text("name", n);
    }
    a.num("time", f.time);
    a.raw("size", format!("{} {}", f.width, f.height));
    a.nums("center", &f.center);
    a.num("scale", f.scale);
    a.num("rotate", f.rotate);
    if f.zoom != 0.0 {
        a.num("zoom", f.zoom);
    }
    a.raw("supersample", f.supersample.to_string());
    a.num("filter", f.filter_radius);
    a.text("filter_shape", f.filter_shape.name());
    a.text(
        "temporal_filter_type",
        match f.temporal_filter {
            TemporalFilter::Box => "box",
            TemporalFilter::Gaussian => "gaussian",
            TemporalFilter::Exp => "exp",
        },
    );
    a.num("temporal_filter_width", f.temporal_filter_width);
    if f.temporal_filter_exp != 0.0 {
        a.num("temporal_filter_exp", f.temporal_filter_exp);
    }
    a.num("quality", f.quality);
    a.raw("passes", f.passes.to_string());
    a.raw("temporal_samples", f.temporal_samples.to_string());
    a.nums("background", &f.background);
    a.num("brightness", f.brightness);
    a.num("gamma", f.gamma);
    a.num("highlight_power", f.highlight_power);
    a.num("vibrancy", f.vibrancy);
    // No `hue`: it rotates only a numbered palette, which is read with the
    // rotation applied and written out as colours (as flam3 writes it;
    // a reader that rotated those colours again would turn them twice).
    a.num("estimator_radius", f.estimator_radius);
    a.num("estimator_minimum", f.estimator_minimum);
    a.num("estimator_curve", f.estimator_curve);
    a.num("gamma_threshold", f.gamma_threshold);
    a.text(
        "palette_mode",
        match f.palette_mode {
            PaletteMode::Step => "step",
            PaletteMode::Linear => "linear",
        },
    );
    if f.interpolation == Interpolation::Smooth {
        a.text("interpolation", "smooth");
    }
    a.text(
        "interpolation_type",
        match f.affine_interpolation {
            AffineInterpolation::Linear => "linear",
            AffineInterpolation::Log => "log",
            AffineInterpolation::Compat => "old",
            AffineInterpolation::Older => "older",
        },
    );
    a.text(
        "palette_interpolation",
        match f.palette_interpolation {
            PaletteInterpolation::Hsv => "hsv",
            PaletteInterpolation::Sweep => "sweep",
            PaletteInterpolation::Rgb => "rgb",
            PaletteInterpolation::HsvCircular => "hsv_circular",
        },
    );
    // Read only in hsv_circular mode, and written only there, as flam3
    // writes it.
    if f.palette_interpolation == PaletteInterpolation::HsvCircular && f.hsv_rgb_palette_blend != 0.0 {
        a.num("hsv_rgb_palette_blend", f.hsv_rgb_palette_blend);
    }
    // Fractorium's curves (flam3 ignores these attributes).
    if let Some(c) = &f.curves {
        for (name, points) in ["overall_curve", "red_curve", "green_curve", "blue_curve"].iter().zip(&c.points) {
            let numbers: Vec<f64> = points.iter().flatten().copied().collect();
            a.nums(name, &numbers);
        }
    }
    let _ = writeln!(out, "{indent}<flame{}>", a.0);
    let inner = format!("{indent}   ");
    for x in &f.xforms {
        write_xform(out, x, "xform", &inner);
    }
    if let Some(x) = &f.final_xform {
        write_xform(out, x, "finalxform", &inner);
    }
    for (i, e) in f.palette.entries.iter().enumerate() {
        let _ = writeln!(out, "{inner}<color index=\"{i}\" {}/>", color_attribute(*e));
    }
    // The edit history after the palette, where flam3 prints it.
    if let Some(e) = &f.edits {
        let _ = writeln!(out, "{inner}{e}");
    }
    let _ = writeln!(out, "{indent}</flame>");
}

fn write_xform(out: &mut String, x: &XForm, tag: &str, indent: &str) {
    let mut a = Attributes::new();
    if tag == "xform" {
        a.num("weight", x.weight);
    }
    a.num("color", x.color);
    a.num("color_speed", x.color_speed);
    // flam3 writes `animate` on standard xforms only.
    if tag == "xform" {
        a.num("animate", x.animate);
    }
    for v in &x.variations {
        a.num(v.kind.name(), v.weight);
    }
    for v in &x.variations {
        for (i, p) in v.kind.params().iter().enumerate() {
            // A parameter Fractorium added to a flam3 variation is left out
            // at its default, so that flam3-render reads the file without a
            // warning and the reader restores the default. Interpolation
            // between two equal values can land an ulp or two away from
            // the default (c₀·e + c₁·e): that is still the default.
            let at_default = (v.param(i) - p.default).abs() <= 4.0 * f64::EPSILON * p.default.abs();
            if v.kind.is_flam3() && i >= v.kind.flam3_params() && at_default {
                continue;
            }
            // flam3 writes oscilloscope's parameters by their long names
            // (and reads both); Fractorium knows only the long ones as its
            // own, the short ones as an alias.
            match p.name.strip_prefix("oscope_") {
                Some(rest) => a.num(&format!("oscilloscope_{rest}"), v.param(i)),
                None => a.num(p.name, v.param(i)),
            }
        }
    }
    a.nums("coefs", &affine_numbers(&x.coefs));
    if !x.post.is_identity() {
        a.nums("post", &affine_numbers(&x.post));
    }
    if tag == "xform" && !x.chaos.is_empty() {
        a.nums("chaos", &x.chaos);
    }
    a.num("opacity", x.opacity);
    if x.motion.is_empty() {
        let _ = writeln!(out, "{indent}<{tag}{}/>", a.0);
        return;
    }
    let _ = writeln!(out, "{indent}<{tag}{}>", a.0);
    for m in &x.motion {
        write_motion(out, m, &format!("{indent}   "));
    }
    let _ = writeln!(out, "{indent}</{tag}>");
}

/// A `<motion>` element: its frequency and function, then the changes that
/// are not 0 (as flam3 writes them).
fn write_motion(out: &mut String, m: &Motion, indent: &str) {
    let mut a = Attributes::new();
    a.raw("motion_frequency", m.frequency.to_string());
    if let Some(f) = m.function {
        a.text("motion_function", f.name());
    }
    let mut nonzero = |name: &str, x: f64| {
        if x != 0.0 {
            a.num(name, x);
        }
    };
    nonzero("weight", m.weight);
    nonzero("color", m.color);
    nonzero("color_speed", m.color_speed);
    nonzero("animate", m.animate);
    nonzero("opacity", m.opacity);
    for v in &m.variations {
        nonzero(v.kind.name(), v.weight);
    }
    for v in &m.variations {
        for (i, p) in v.kind.params().iter().enumerate() {
            nonzero(p.name, v.param(i));
        }
    }
    for (name, affine) in [("coefs", &m.coefs), ("post", &m.post)] {
        let numbers = affine_numbers(affine);
        if numbers.iter().any(|&x| x != 0.0) {
            a.nums(name, &numbers);
        }
    }
    let _ = writeln!(out, "{indent}<motion{}/>", a.0);
}

/// The six numbers of an affine map in the file's order (`a d b e c f`).
fn affine_numbers(m: &Affine) -> [f64; 6] {
    [m.c[0][0], m.c[0][1], m.c[1][0], m.c[1][1], m.c[2][0], m.c[2][1]]
}

/// The `rgb`/`rgba` attribute of a palette entry: it reads back as the
/// entry, or as its neighbour in the last bit where no decimal divides to it.
fn color_attribute(e: [f64; 4]) -> String {
    let [r, g, b, alpha] = e;
    if alpha == 1.0 {
        let c = |v: f64| number(scaled_for(v, |s| s / 255.0, v * 255.0));
        return format!("rgb=\"{} {} {}\"", c(r), c(g), c(b));
    }
    // The reader gives `(a / 255) · c / 255` for a colour `c` and alpha `a`.
    let a255 = scaled_for(alpha, |s| s / 255.0, alpha * 255.0);
    let al = a255 / 255.0;
    let c = |v: f64| {
        let guess = if al != 0.0 { v * 255.0 / al } else { 0.0 };
        number(scaled_for(v, |s| al * s / 255.0, guess))
    };
    format!("rgba=\"{} {} {} {}\"", c(r), c(g), c(b), number(a255))
}

/// A value `s` near `guess` for which `read(s) == target`, searching a few
/// units in the last place around `guess`; `guess` itself when none is
/// (the reader then gives the nearest value it can).
fn scaled_for(target: f64, read: impl Fn(f64) -> f64, guess: f64) -> f64 {
    if !guess.is_finite() || read(guess) == target {
        return guess;
    }
    let mut down = guess;
    let mut up = guess;
    for _ in 0..64 {
        down = next_toward(down, f64::NEG_INFINITY);
        up = next_toward(up, f64::INFINITY);
        if read(down) == target {
            return down;
        }
        if read(up) == target {
            return up;
        }
    }
    guess
}

/// The neighbouring `f64` of finite `x` towards `to`.
fn next_toward(x: f64, to: f64) -> f64 {
    if x == 0.0 {
        let tiny = f64::from_bits(1);
        return if to > 0.0 { tiny } else { -tiny };
    }
    let bits = x.to_bits();
    let away = (to > x) == (x > 0.0);
    f64::from_bits(if away { bits + 1 } else { bits - 1 })
}

/// The shortest text that reads back as `x` (flam3's reader takes either
/// form).
pub(crate) fn number(x: f64) -> String {
    let m = x.abs();
    if x == 0.0 || (1e-5..1e16).contains(&m) || !x.is_finite() { format!("{x}") } else { format!("{x:e}") }
}

/// The attributes of one element, in the order added.
struct Attributes(String);

impl Attributes {
    fn new() -> Self {
        Attributes(String::new())
    }

    fn raw(&mut self, name: &str, value: String) {
        let _ = write!(self.0, " {name}=\"{value}\"");
    }

    fn text(&mut self, name: &str, value: &str) {
        self.raw(name, escape(value));
    }

    fn num(&mut self, name: &str, x: f64) {
        self.raw(name, number(x));
    }

    fn nums(&mut self, name: &str, xs: &[f64]) {
        let words: Vec<String> = xs.iter().map(|&x| number(x)).collect();
        self.raw(name, words.join(" "));
    }
}

/// `s` escaped for an attribute value in double quotes (white space other
/// than a space is written as a character reference, so that attribute
/// value normalisation gives it back).
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' => out.push_str("&#9;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::genome::{MotionFunction, ParseOptions, parse_str};

    fn round_trip(xml: &str) {
        let opts = ParseOptions { strict: false, ..ParseOptions::default() };
        let first = parse_str(xml, "in", &opts).expect("input parses").flames;
        let written = write_genome(&first, "pick", None);
        let second = parse_str(&written, "out", &opts).expect("output parses").flames;
        assert_same(&first, &second);
    }

    /// Equal flames, except that palette entries may differ in the last bit
    /// (see `palette_entries_read_back_exactly`).
    fn assert_same(a: &[Flame], b: &[Flame]) {
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(b) {
            for (p, q) in x.palette.entries.iter().zip(y.palette.entries.iter()) {
                for c in 0..4 {
                    let ok = (p[c] - q[c]).abs() <= 4.0 * f64::EPSILON * p[c].abs();
                    assert!(ok, "palette entry {p:?} read back as {q:?}");
                }
            }
            let mut y = y.clone();
            y.palette = x.palette.clone();
            assert!(*x == y, "differs: {}", first_difference(x, &y));
        }
    }

    /// Where the debug forms of two values first differ, with some context.
    pub(crate) fn first_difference<T: std::fmt::Debug>(a: &T, b: &T) -> String {
        let (a, b) = (format!("{a:?}"), format!("{b:?}"));
        let at = a.bytes().zip(b.bytes()).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()));
        let from = a[..at].char_indices().rev().nth(120).map_or(0, |(i, _)| i);
        let end = |s: &str| s[at..].char_indices().nth(60).map_or(s.len(), |(i, _)| at + i);
        format!("\n  {}\n  {}", &a[from..end(&a)], &b[from..end(&b)])
    }

    #[test]
    fn numbers_read_back_exactly() {
        for x in [0.0, -0.0, 1.0, -2.5, 0.1, 1.0 / 3.0, 1e-7, -3.3e-300, 6.02e23, 123456.789, f64::MIN_POSITIVE] {
            assert_eq!(number(x).parse::<f64>().unwrap(), x, "{x}");
        }
    }

    #[test]
    fn palette_entries_read_back_exactly() {
        // Colours that are not multiples of 1/255, opaque and translucent.
        let mut entries = Vec::new();
        for k in 0..256 {
            let t = k as f64 / 255.0;
            let e = match k % 3 {
                0 => [t.sqrt() * 0.999, (t * 7.3).sin().abs(), 1.0 / 3.0, 1.0],
                1 => [t.sqrt() * 0.5, (t * 7.3).sin().abs() * t, t * t, t],
                _ => [f64::from(k as u8) / 255.0, f64::from(255 - k as u8) / 255.0, 7.0 / 255.0, 1.0],
            };
            entries.push(e);
        }
        let mut xml = String::from("<flame size=\"8 8\"><xform weight=\"1\" linear=\"1\"/>");
        // The entries as the reader stores them, written by hand with 255ths.
        for (i, e) in entries.iter().enumerate() {
            let _ = write!(xml, "<color index=\"{i}\" {}/>", color_attribute(*e));
        }
        xml.push_str("</flame>");
        let f = &parse_str(&xml, "p", &ParseOptions::default()).unwrap().flames[0];
        for (i, (got, want)) in f.palette.entries.iter().zip(&entries).enumerate() {
            // Not every value is some decimal divided by 255 (times alpha):
            // the nearest one that is comes back.
            for c in 0..4 {
                assert!((got[c] - want[c]).abs() <= 4.0 * f64::EPSILON * want[c].abs(), "entry {i}: {got:?} {want:?}");
            }
            if k_is_byte(want) {
                assert_eq!(got, want, "entry {i}: 8-bit colours read back exactly");
            }
        }
    }

    /// Whether an opaque entry's channels are whole 255ths (as in palettes
    /// read from `rgb` bytes or hex).
    fn k_is_byte(e: &[f64; 4]) -> bool {
        e[3] == 1.0 && e[..3].iter().all(|&c| ((c * 255.0).round() / 255.0) == c)
    }

    #[test]
    fn settings_xforms_and_final_round_trip() {
        round_trip(
            r#"<flames>
            <flame name="a &amp; &quot;b&quot;" time="3" size="31 17" center="0.1 -0.2" scale="33.3" rotate="12"
              zoom="0.5" supersample="2" filter="0.7" filter_shape="mitchell" quality="7.5" passes="2"
              temporal_samples="3" temporal_filter_type="exp" temporal_filter_exp="0.3" background="0.1 0.2 0.3"
              brightness="3" gamma="2.2" gamma_threshold="0.02" highlight_power="1" vibrancy="0.7"
              estimator_radius="5" estimator_minimum="1" estimator_curve="0.6" palette_mode="linear"
              interpolation_type="linear" palette_interpolation="hsv_circular" hsv_rgb_palette_blend="0.2">
              <xform weight="0.3" color="0.2" color_speed="0.1" animate="0" julian="0.6" julian_power="5"
                 spherical="0.4" coefs="0.1 0.2 0.3 0.4 0.5 0.6" post="1 0 0 1 0.1 0" chaos="1 0.5" opacity="0.5"/>
              <xform weight="0.7" waves2="1" waves2_freqx="1.5" coefs="1 0 0 1 0 0"/>
              <finalxform color="0.5" color_speed="0" mobius="1" Re_A="0.5" Im_D="-1" coefs="1 0 0 1 0 0"/>
              <color index="0" rgb="255 0 0"/><color index="100" rgba="10 20 30 128"/><color index="255" rgb="0 0 255"/>
            </flame>
            <flame time="9" size="10 10" interpolation_type="old" palette_interpolation="rgb"><xform weight="1" linear="1" coefs="1 0 0 1 0 0"/></flame>
            </flames>"#,
        );
    }

    /// flam3 writes `animate` on `<xform>` but never on `<finalxform>`.
    #[test]
    fn the_final_xform_is_written_without_animate() {
        let xml = r#"<flame size="10 10"><xform weight="1" animate="0" linear="1" coefs="1 0 0 1 0 0"/>
            <finalxform color="0.5" spherical="1" coefs="1 0 0 1 0 0"/></flame>"#;
        let first = parse_str(xml, "a", &ParseOptions::default()).unwrap().flames;
        let written = write_genome(&first, "pick", None);
        let final_line = written.lines().find(|l| l.contains("<finalxform")).expect("a final xform");
        assert!(!final_line.contains("animate="), "{final_line}");
        let xform_line = written.lines().find(|l| l.contains("<xform")).expect("an xform");
        assert!(xform_line.contains(r#"animate="0""#), "{xform_line}");
        round_trip(xml);
    }

    #[test]
    fn hue_is_not_written_back() {
        // It was applied to the palette when read (where the palette was a
        // numbered one); the colours written carry it.
        let xml = r#"<flame size="10 10" hue="0.25"><xform weight="1" coefs="1 0 0 1 0 0"/>
            <color index="0" rgb="255 0 0"/></flame>"#;
        let first = parse_str(xml, "h", &ParseOptions::default()).unwrap().flames;
        let written = write_genome(&first, "pick", None);
        assert!(!written.contains("hue="), "{written}");
        let second = parse_str(&written, "out", &ParseOptions::default()).unwrap().flames;
        assert_eq!(first[0].palette, second[0].palette);
    }

    #[test]
    fn a_flame_without_colours_keeps_its_transparent_palette() {
        round_trip(r#"<flame size="10 10"><xform weight="1" coefs="1 0 0 1 0 0"/></flame>"#);
    }

    #[test]
    fn fractorium_curves_round_trip() {
        round_trip(
            r#"<flame size="10 10" red_curve="0 0 0.3 0.6 1 1" blue_curve="0 0.1 1 0.9"><xform weight="1" linear="1" coefs="1 0 0 1 0 0"/></flame>"#,
        );
    }

    #[test]
    fn a_fractorium_parameter_an_ulp_from_its_default_is_left_out() {
        // log_base (Fractorium's parameter of flam3's log) after blending
        // e with e: flam3-render would warn about an unknown variation.
        let xml = r#"<flame size="10 10"><xform weight="1" log="1" coefs="1 0 0 1 0 0"/></flame>"#;
        let mut f = parse_str(xml, "l", &ParseOptions::default()).unwrap().flames.remove(0);
        let e = std::f64::consts::E;
        for base in [e + 4.0 * f64::EPSILON, e - 2.0 * f64::EPSILON, e] {
            f.xforms[0].variations[0].params[0] = base;
            assert!(!write_flame(&f).contains("log_base"), "{base}");
        }
        f.xforms[0].variations[0].params[0] = 2.0;
        assert!(write_flame(&f).contains("log_base=\"2\""));
    }

    #[test]
    fn motion_elements_are_read_and_written_back() {
        let xml = r#"<flame size="10 10">
            <xform weight="1" linear="1" julian="0.5" coefs="1 0 0 1 0 0">
              <motion motion_frequency="2" motion_function="triangle" weight="-0.5" color="0.25" julian_power="3"/>
              <motion motion_frequency="1" swirl="0.5" coefs="0 0.1 0 0 0 0.2" post="0.1 0 0 0 0 0"/>
            </xform>
            <finalxform linear="1"><motion motion_frequency="3" motion_function="sin" opacity="0.5"/></finalxform>
            </flame>"#;
        round_trip(xml);
        let f = &parse_str(xml, "m", &ParseOptions::default()).unwrap().flames[0];
        let m = &f.xforms[0].motion;
        assert_eq!(m.len(), 2);
        assert_eq!(
            (m[0].frequency, m[0].function, m[0].weight, m[0].color),
            (2, Some(MotionFunction::Triangle), -0.5, 0.25)
        );
        // julian named by a parameter only: weight change 0, the other
        // parameter's change 0.
        assert_eq!(m[0].variations.len(), 1);
        let j = &m[0].variations[0];
        assert_eq!((j.kind.name(), j.weight, j.params.as_slice()), ("julian", 0.0, &[3.0, 0.0][..]));
        assert_eq!((m[1].function, m[1].variations[0].kind.name(), m[1].variations[0].weight), (None, "swirl", 0.5));
        assert_eq!(m[1].coefs.c, [[0.0, 0.1], [0.0, 0.0], [0.0, 0.2]]);
        assert_eq!(m[1].post.c, [[0.1, 0.0], [0.0, 0.0], [0.0, 0.0]]);
        assert_eq!(m[1].opacity, 0.0, "values not given are 0");
        assert_eq!(f.final_xform.as_ref().unwrap().motion[0].opacity, 0.5);
        // flam3's motion functions: 0 at whole periods.
        for func in [MotionFunction::Sin, MotionFunction::Triangle, MotionFunction::Hill] {
            assert!(func.at(0.0).abs() < 1e-12 && func.at(2.0).abs() < 1e-12, "{func:?}");
        }
        assert_eq!((MotionFunction::Triangle.at(0.25), MotionFunction::Triangle.at(-0.25)), (1.0, -1.0));
        assert_eq!(MotionFunction::Hill.at(0.5), 1.0);
    }
}
