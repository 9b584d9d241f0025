//! flam3-genome's edit records: the `<edit>` element of a flame a tool
//! made says when (`date`) and how (`action`) it was made, and holds the
//! records of the flames it was made from, each marked with the file
//! (`filename`) and place (`index`) it was read from — a flame's lineage,
//! as Electric Sheep keeps it.

use crate::genome::Flame;
use crate::genome::write::escape;

/// A flame that a new one was made from, and where it was read.
#[derive(Clone, Copy, Debug)]
pub struct Parent<'a> {
    /// The flame as read (its own record, if any, is nested).
    pub flame: &'a Flame,
    /// The file it was read from, as named to the tool.
    pub file: &'a str,
    /// Its place among the file's flames, from 0.
    pub index: usize,
}

/// Who made a flame and when, as flam3-genome signs its edit records.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Editor {
    /// When (flam3-genome writes local time as `Mon Nov 30 20:43:42 +0000
    /// 2026`).
    pub date: String,
    /// flam3-genome's `nick`: a nickname, an attribute of each record.
    pub nick: Option<String>,
    /// flam3-genome's `url`: a web address, an attribute of each record.
    pub url: Option<String>,
    /// flam3-genome's `id`: an identifier, an attribute of each record.
    pub id: Option<String>,
    /// flam3-genome's `comment`: XML content (text, elements) added to each
    /// record after its parents' records; check it with
    /// [`Editor::check_comment`].
    pub comment: Option<String>,
}

impl Editor {
    /// A record made at `date`, unsigned.
    pub fn at(date: &str) -> Self {
        Editor { date: date.to_string(), ..Editor::default() }
    }

    /// Whether `comment` is XML content that a record can hold (text with
    /// `&` and `<` escaped, elements closed), as flam3-genome requires; the
    /// parser's complaint if not.
    pub fn check_comment(comment: &str) -> Result<(), String> {
        let wrapped = format!("<comment>{comment}</comment>");
        roxmltree::Document::parse(&wrapped).map(|_| ()).map_err(|e| e.to_string())
    }
}

/// Gives `child` the record of `action` done by `editor` from `parents`:
/// an `<edit date=… nick=… url=… id=… action=…>` holding each parent's
/// record with its `filename` and `index` added (an empty `<edit
/// filename=… index=…/>` for a parent that has none) and then the editor's
/// comment, as flam3-genome's `create_new_editdoc` writes it.
pub fn record_edit(child: &mut Flame, editor: &Editor, action: &str, parents: &[Parent<'_>]) {
    let mut xml = format!("<edit date=\"{}\"", escape(&editor.date));
    for (name, value) in [("nick", &editor.nick), ("url", &editor.url), ("id", &editor.id)] {
        if let Some(v) = value {
            xml.push_str(&format!(" {name}=\"{}\"", escape(v)));
        }
    }
    xml.push_str(&format!(" action=\"{}\"", escape(action)));
    let comment = editor.comment.as_deref().unwrap_or("");
    if parents.is_empty() && comment.is_empty() {
        xml.push_str("/>");
    } else {
        xml.push('>');
        for p in parents {
            xml.push_str(&parent_record(p));
        }
        xml.push_str(comment);
        xml.push_str("</edit>");
    }
    child.edits = Some(xml);
}

/// A parent's record marked with where it was read (a record already
/// marked, as one read from a file that nested it, keeps its marks).
fn parent_record(p: &Parent<'_>) -> String {
    let mark = format!(" filename=\"{}\" index=\"{}\"", escape(p.file), p.index);
    match p.flame.edits.as_deref() {
        Some(e) if e.starts_with("<edit") => {
            let tag = &e[..e.find('>').unwrap_or(e.len())];
            if tag.contains(" filename=") { e.to_string() } else { format!("<edit{mark}{}", &e["<edit".len()..]) }
        }
        _ => format!("<edit{mark}/>"),
    }
}

/// `x` as C's `printf("%g")` writes it (six significant digits, trailing
/// zeros dropped), for actions such as flam3-genome's `rotate 64.8`.
pub fn printf_g(x: f64) -> String {
    printf_g_digits(x, 6)
}

/// `x` as C's `printf("%.Pg")` writes it: `digits` significant digits
/// (at least 1), trailing zeros dropped.
pub fn printf_g_digits(x: f64, digits: usize) -> String {
    if x == 0.0 || !x.is_finite() {
        return if x == 0.0 { "0".into() } else { format!("{x}") };
    }
    let p = digits.max(1) as i32;
    let sci = format!("{x:.*e}", (p - 1) as usize);
    let (mantissa, exp) = sci.split_once('e').expect("{:e} writes an exponent");
    let exp: i32 = exp.parse().expect("{:e} writes an integer exponent");
    let trim = |s: &str| -> String {
        if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s.to_string() }
    };
    if (-4..p).contains(&exp) {
        trim(&format!("{x:.*}", (p - 1 - exp) as usize))
    } else {
        format!("{}e{}{:02}", trim(mantissa), if exp < 0 { '-' } else { '+' }, exp.abs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::genome::{ParseOptions, parse_str};

    #[test]
    fn printf_g_writes_what_c_writes() {
        for (x, c) in [
            (64.8, "64.8"),
            (360.0, "360"),
            (0.0, "0"),
            (-3.6, "-3.6"),
            (1.0 / 3.0, "0.333333"),
            (123456.0, "123456"),
            (1234567.0, "1.23457e+06"),
            (0.0001, "0.0001"),
            (0.00001234, "1.234e-05"),
            (999999.5, "1e+06"),
            (7.2e-300, "7.2e-300"),
        ] {
            assert_eq!(printf_g(x), c, "{x}");
        }
    }

    #[test]
    fn printf_g_digits_writes_what_c_writes() {
        // printf("%.5g") of each.
        for (x, c) in
            [(0.4231849, "0.42318"), (0.5, "0.5"), (0.999996, "1"), (1e-5, "1e-05"), (0.000123456, "0.00012346")]
        {
            assert_eq!(printf_g_digits(x, 5), c, "{x}");
        }
    }

    #[test]
    fn records_nest_the_parents_records_marked_with_their_file() {
        let xml = r#"<flames><flame size="8 8"><xform weight="1" coefs="1 0 0 1 0 0"/>
            <edit date="then" action="random"/></flame>
            <flame size="8 8"><xform weight="1" coefs="1 0 0 1 0 0"/></flame></flames>"#;
        let flames = parse_str(xml, "in", &ParseOptions::default()).unwrap().flames;
        let mut child = flames[0].clone();
        let parents = [
            Parent { flame: &flames[0], file: "a&b.flam3", index: 0 },
            Parent { flame: &flames[1], file: "a&b.flam3", index: 1 },
        ];
        record_edit(&mut child, &Editor::at("now"), "cross union", &parents);
        assert_eq!(
            child.edits.as_deref().unwrap(),
            "<edit date=\"now\" action=\"cross union\"><edit filename=\"a&amp;b.flam3\" index=\"0\" date=\"then\" \
             action=\"random\"/><edit filename=\"a&amp;b.flam3\" index=\"1\"/></edit>"
        );
        // Written and read back, the record is the same; a grandchild
        // nests it whole.
        let written = crate::genome::write_genome(std::slice::from_ref(&child), "pick", None);
        let back = parse_str(&written, "out", &ParseOptions::default()).unwrap().flames.remove(0);
        assert_eq!(back.edits, child.edits);
        let mut grandchild = back.clone();
        record_edit(&mut grandchild, &Editor::at("later"), "random", &[]);
        assert_eq!(grandchild.edits.as_deref(), Some("<edit date=\"later\" action=\"random\"/>"));
        record_edit(
            &mut grandchild,
            &Editor::at("later"),
            "rotate 36",
            &[Parent { flame: &back, file: "c.flam3", index: 2 }],
        );
        let e = grandchild.edits.unwrap();
        assert!(e.starts_with(
            "<edit date=\"later\" action=\"rotate 36\"><edit filename=\"c.flam3\" index=\"2\" date=\"now\""
        ));
        assert_eq!(e.matches("<edit").count(), 4);
    }

    #[test]
    fn a_signed_record_has_its_editors_attributes_and_comment() {
        let flame = Flame::default();
        let mut child = flame.clone();
        let editor = Editor {
            date: "now".into(),
            nick: Some("spot".into()),
            url: Some("https://example.org/?a=1&b=2".into()),
            id: Some("7".into()),
            comment: Some("made <b>by hand</b> &amp; eye".into()),
        };
        assert!(Editor::check_comment(editor.comment.as_deref().unwrap()).is_ok());
        record_edit(&mut child, &editor, "random", &[Parent { flame: &flame, file: "p.flam3", index: 0 }]);
        assert_eq!(
            child.edits.as_deref().unwrap(),
            "<edit date=\"now\" nick=\"spot\" url=\"https://example.org/?a=1&amp;b=2\" id=\"7\" action=\"random\">\
             <edit filename=\"p.flam3\" index=\"0\"/>made <b>by hand</b> &amp; eye</edit>"
        );
        let written = crate::genome::write_genome(std::slice::from_ref(&child), "pick", None);
        let back = parse_str(&written, "out", &ParseOptions::default()).unwrap().flames.remove(0);
        assert_eq!(back.edits, child.edits);
        for bad in ["a & b", "<b>open", "x</edit><edit>", "<?xml version=\"1.0\"?>"] {
            assert!(Editor::check_comment(bad).is_err(), "{bad}");
        }
    }
}
