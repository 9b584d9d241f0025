//! Names that Apophysis plugins wrote for variations Fractorium implements
//! under other names: bwraps2 and bwraps7 (the same map as bwraps), sshape
//! (smartshape), post_scrop (post_smartcrop), radial_gaussian (flam3's
//! radial_blur) and the mobius strip plugin's mobius (Fractorium's
//! mobius_strip, which warpmc does not implement: read under that name, it
//! is dropped as an unknown variation instead of being drawn as flam3's
//! mobius with all its parameters 0). Fractorium reads them in files it did
//! not write (XmlToEmber's lists of bad variation and parameter names), and
//! so does warpmc, for the variations it implements or must not mistake.

use std::borrow::Cow;

/// (as written, as read, the parameters' names after the variation's and
/// an underscore): a variation is read under the second name only where
/// one of its parameters, under the first name, comes after it in its
/// xform's attributes, as Fractorium checks before renaming it; a
/// parameter is read under the second name wherever it stands.
const RENAMED: [(&str, &str, &[&str]); 9] = [
    ("bwraps7", "bwraps", BWRAPS),
    ("bwraps2", "bwraps", BWRAPS),
    ("pre_bwraps2", "pre_bwraps", BWRAPS),
    ("post_bwraps2", "post_bwraps", BWRAPS),
    ("post_scrop", "post_smartcrop", SMARTCROP),
    ("sshape", "smartshape", SMARTSHAPE),
    ("post_sshape", "post_smartshape", SMARTSHAPE),
    ("radial_gaussian", "radial_blur", &["angle"]),
    ("mobius", "mobius_strip", &["radius", "width", "rect_x", "rect_y", "rotate_x", "rotate_y"]),
];
const BWRAPS: &[&str] = &["cellsize", "space", "gain", "inner_twist", "outer_twist"];
const SMARTSHAPE: &[&str] = &["power", "roundstr", "roundwidth", "distortion", "compensation"];
const SMARTCROP: &[&str] = &[
    "power",
    "radius",
    "roundstr",
    "roundwidth",
    "distortion",
    "edge",
    "scatter",
    "offset",
    "rotation",
    "cropmode",
    "static",
];

/// The name the attribute `name` of an xform is read under, `after` being
/// the names of the attributes that follow it: Fractorium's where it is
/// one of the names above (compared without regard to case, as Fractorium
/// compares them), else `name` itself.
pub(super) fn read_as<'a>(name: &'a str, after: &[&str]) -> Cow<'a, str> {
    for (written, read, suffixes) in RENAMED {
        if name.eq_ignore_ascii_case(written) {
            let has_parameter =
                after.iter().any(|n| suffixes.iter().any(|s| n.eq_ignore_ascii_case(&format!("{written}_{s}"))));
            if has_parameter {
                return Cow::Borrowed(read);
            }
        } else if let Some(rest) = strip_prefix_ignoring_case(name, written).and_then(|r| r.strip_prefix('_'))
            && let Some(suffix) = suffixes.iter().find(|s| s.eq_ignore_ascii_case(rest))
        {
            return Cow::Owned(format!("{read}_{suffix}"));
        }
    }
    Cow::Borrowed(name)
}

fn strip_prefix_ignoring_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix).then(|| &text[prefix.len()..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apophysis_names_are_read_as_fractorium_reads_them() {
        let names = ["weight", "bwraps7", "bwraps7_cellsize", "Post_Scrop", "post_scrop_radius", "sshape"];
        let after = |name: &str| &names[names.iter().position(|n| *n == name).unwrap() + 1..];
        assert_eq!(read_as("bwraps7", after("bwraps7")), "bwraps");
        assert_eq!(read_as("bwraps7_cellsize", after("bwraps7_cellsize")), "bwraps_cellsize");
        assert_eq!(read_as("BWRAPS7_Inner_Twist", &[]), "bwraps_inner_twist");
        assert_eq!(read_as("Post_Scrop", after("Post_Scrop")), "post_smartcrop");
        assert_eq!(read_as("post_scrop_radius", &[]), "post_smartcrop_radius");
        // Without one of its parameters after it the variation keeps its
        // name (and is then unknown), as in Fractorium; its parameters are
        // renamed wherever they stand.
        assert_eq!(read_as("sshape", after("sshape")), "sshape");
        assert_eq!(read_as("bwraps7", &["linear", "bwraps7_cellsize"][..1]), "bwraps7");
        assert_eq!(read_as("sshape_power", &[]), "smartshape_power");
        assert_eq!(read_as("pre_bwraps2_gain", &[]), "pre_bwraps_gain");
        assert_eq!(read_as("pre_bwraps2", &["pre_bwraps2_gain"]), "pre_bwraps");
        assert_eq!(read_as("radial_gaussian", &["radial_gaussian_angle"]), "radial_blur");
        assert_eq!(read_as("radial_gaussian_angle", &[]), "radial_blur_angle");
        // flam3's mobius stays itself unless the strip plugin's parameters
        // follow it.
        assert_eq!(read_as("mobius", &["mobius_re_a", "mobius_im_b"]), "mobius");
        assert_eq!(read_as("mobius_re_a", &[]), "mobius_re_a");
        assert_eq!(read_as("mobius", &["mobius_width"]), "mobius_strip");
        assert_eq!(read_as("mobius_width", &[]), "mobius_strip_width");
        // Other names, and names that only begin like these, are left.
        for other in ["bwraps", "bwraps_cellsize", "bwraps7_colour", "bwraps72", "linear", "pre_blur", "mobius"] {
            assert_eq!(read_as(other, &names), other);
        }
        // Every renamed variation that warpmc implements takes the
        // parameters it is given.
        for (_, read, suffixes) in RENAMED {
            let Some(kind) = crate::variations::VariationKind::from_name(read) else {
                assert_eq!(read, "mobius_strip");
                continue;
            };
            for s in suffixes {
                let param = format!("{read}_{s}");
                assert!(kind.params().iter().any(|p| p.name == param), "{param}");
            }
        }
    }
}
