//! Names that Apophysis plugins wrote for variations Fractorium implements
//! under other names: bwraps2 and bwraps7 (the same map as bwraps), sshape
//! (smartshape) and post_scrop (post_smartcrop). Fractorium reads them in
//! files it did not write (XmlToEmber's lists of bad variation and
//! parameter names), and so does warpmc; none of them is flam3's.

use std::borrow::Cow;

use crate::variations::VariationKind;

/// (as written, as read): a variation is read under the second name only
/// where its xform also holds one of its parameters under the first, as
/// Fractorium checks before renaming it; a parameter is read under the
/// second name whenever it is one of that variation's.
const RENAMED: [(&str, &str); 7] = [
    ("bwraps7", "bwraps"),
    ("bwraps2", "bwraps"),
    ("pre_bwraps2", "pre_bwraps"),
    ("post_bwraps2", "post_bwraps"),
    ("post_scrop", "post_smartcrop"),
    ("sshape", "smartshape"),
    ("post_sshape", "post_smartshape"),
];

/// The name the attribute `name` of an xform whose attributes are named
/// `names` is read under: Fractorium's where it is one of the names above
/// (compared without regard to case, as Fractorium compares them), else
/// `name` itself.
pub(super) fn read_as<'a>(name: &'a str, names: &[&str]) -> Cow<'a, str> {
    for (written, read) in RENAMED {
        let suffixes = || parameter_suffixes(read);
        if name.eq_ignore_ascii_case(written) {
            let has_parameter =
                names.iter().any(|n| suffixes().any(|s| n.eq_ignore_ascii_case(&format!("{written}_{s}"))));
            if has_parameter {
                return Cow::Borrowed(read);
            }
        } else if let Some(rest) = strip_prefix_ignoring_case(name, written).and_then(|r| r.strip_prefix('_'))
            && let Some(suffix) = suffixes().find(|s| s.eq_ignore_ascii_case(rest))
        {
            return Cow::Owned(format!("{read}_{suffix}"));
        }
    }
    Cow::Borrowed(name)
}

/// The names of the parameters of the variation `name` without its own
/// name and the underscore before them (`cellsize` for `bwraps_cellsize`).
fn parameter_suffixes(name: &'static str) -> impl Iterator<Item = &'static str> {
    let params = VariationKind::from_name(name).map_or(&[][..], |k| k.params());
    params.iter().filter_map(move |p| p.name.strip_prefix(name).and_then(|r| r.strip_prefix('_')))
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
        assert_eq!(read_as("bwraps7", &names), "bwraps");
        assert_eq!(read_as("bwraps7_cellsize", &names), "bwraps_cellsize");
        assert_eq!(read_as("BWRAPS7_Inner_Twist", &names), "bwraps_inner_twist");
        assert_eq!(read_as("Post_Scrop", &names), "post_smartcrop");
        assert_eq!(read_as("post_scrop_radius", &names), "post_smartcrop_radius");
        // Without one of its parameters the variation keeps its name (and
        // is then unknown), as in Fractorium; its parameters are renamed.
        assert_eq!(read_as("sshape", &names), "sshape");
        assert_eq!(read_as("sshape_power", &names), "smartshape_power");
        assert_eq!(read_as("pre_bwraps2_gain", &["pre_bwraps2", "pre_bwraps2_gain"]), "pre_bwraps_gain");
        assert_eq!(read_as("pre_bwraps2", &["pre_bwraps2", "pre_bwraps2_gain"]), "pre_bwraps");
        // Other names, and names that only begin like these, are left.
        for other in ["bwraps", "bwraps_cellsize", "bwraps7_colour", "bwraps72", "linear", "pre_blur", "mobius"] {
            assert_eq!(read_as(other, &names), other);
        }
        // Every renamed variation and the parameters it is given exist.
        for (_, read) in RENAMED {
            assert!(VariationKind::from_name(read).is_some(), "{read}");
            assert!(parameter_suffixes(read).count() > 0, "{read}");
        }
    }
}
