//! XML documents (genomes, the palette file) read with roxmltree after a
//! check of how deeply their elements nest and how many attributes each
//! has.
//!
//! roxmltree's parser recurses once per level of nesting, so a document
//! nested tens of thousands of levels deep overflows the stack and aborts
//! the process. flam3 reads its files through libxml2, which refuses
//! documents nested more than 257 levels deep; this reader refuses them
//! too, before roxmltree sees them. Entity references can nest elements
//! further than the text shows (roxmltree expands up to 10 references
//! inside one another), so the elements inside entity values count ten
//! times over.

/// The deepest element nesting read, the root element counted as one:
/// libxml2's `xmlParserMaxDepth` (256) counts the levels below the root,
/// so flam3-render reads 257 levels and refuses 258.
pub(crate) const MAX_DEPTH: usize = 257;

/// The most attributes one element may have. roxmltree looks for a
/// duplicate among an element's earlier attributes as it reads each one,
/// which takes seconds from some ten thousand attributes on (minutes for a
/// hundred thousand); flam3's xform with every variation and parameter has
/// a few hundred.
pub(crate) const MAX_ATTRIBUTES: usize = 4096;

/// How many entity references roxmltree expands inside one another.
const MAX_ENTITY_NESTING: usize = 10;

/// Parses `text` (a leading byte-order mark is skipped); the error is one
/// line without the file's name.
pub(crate) fn parse(text: &str) -> Result<roxmltree::Document<'_>, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    check_depth(text.as_bytes())?;
    check_expansion(text.as_bytes())?;
    let opts = roxmltree::ParsingOptions { allow_dtd: true, ..Default::default() };
    roxmltree::Document::parse_with_options(text, opts).map_err(|e| format!("malformed XML: {}", printable(&e)))
}

/// A parser's message with the control characters it quotes from the
/// document escaped (`\u{1d}`): printed raw, they would break the error's
/// one line on a terminal or in a log.
fn printable(e: &roxmltree::Error) -> String {
    e.to_string().chars().map(|c| if c.is_control() { c.escape_default().to_string() } else { c.to_string() }).collect()
}

/// The most text entity references may expand to in one document.
/// roxmltree's time grows with the square of the references into a text
/// node (a 106 kB file of 2,000 references to a 100 kB entity takes
/// minutes); flam3's genomes use no entities beyond the five predefined
/// ones and character references.
pub(crate) const MAX_ENTITY_EXPANSION: u64 = 1 << 20;

/// An error if the entities declared in `text`'s document type declaration,
/// expanded wherever they are referenced, would make more than
/// [`MAX_ENTITY_EXPANSION`] bytes of text.
fn check_expansion(text: &[u8]) -> Result<(), String> {
    let Some(p) = find(text, 0, b"<!DOCTYPE") else { return Ok(()) };
    let end = doctype(text, p, &mut 0);
    let declared = entities(&text[p..end]);
    if declared.is_empty() {
        return Ok(());
    }
    // Each entity's text once expanded, its references inside it followed
    // as deep as roxmltree follows them.
    let mut sizes = std::collections::HashMap::new();
    fn size<'a>(
        name: &'a [u8],
        declared: &[(&'a [u8], &'a [u8])],
        sizes: &mut std::collections::HashMap<&'a [u8], u64>,
        depth: usize,
    ) -> u64 {
        if let Some(&n) = sizes.get(name) {
            return n;
        }
        let Some(&(_, value)) = declared.iter().find(|(n, _)| *n == name) else { return 0 };
        let mut n = value.len() as u64;
        if depth < MAX_ENTITY_NESTING {
            for r in references(value) {
                n = n.saturating_add(size(r, declared, sizes, depth + 1));
            }
        }
        sizes.insert(name, n);
        n
    }
    let mut total = 0u64;
    for r in references(&text[end..]) {
        total = total.saturating_add(size(r, &declared, &mut sizes, 1));
        if total > MAX_ENTITY_EXPANSION {
            return Err(format!(
                "its entity references expand to more than {} MiB of text; flam3 genomes need no declared \
                 entities",
                MAX_ENTITY_EXPANSION >> 20
            ));
        }
    }
    Ok(())
}

/// The general entities (`<!ENTITY name "value">`) a document type
/// declaration declares, as (name, value).
fn entities(doctype: &[u8]) -> Vec<(&[u8], &[u8])> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(k) = find(doctype, i, b"<!ENTITY") {
        i = k + 8;
        let skip_space = |mut j: usize| {
            while doctype.get(j).is_some_and(u8::is_ascii_whitespace) {
                j += 1;
            }
            j
        };
        let start = skip_space(i);
        if doctype.get(start) == Some(&b'%') {
            continue; // a parameter entity: used only inside the DTD, never in elements or attributes
        }
        let name_end =
            doctype[start..].iter().position(|b| b.is_ascii_whitespace()).map_or(doctype.len(), |n| start + n);
        let quote_at = skip_space(name_end);
        let Some(&quote) = doctype.get(quote_at).filter(|&&q| q == b'"' || q == b'\'') else { continue };
        let Some(len) = doctype[quote_at + 1..].iter().position(|&b| b == quote) else { break };
        out.push((&doctype[start..name_end], &doctype[quote_at + 1..quote_at + 1 + len]));
        i = quote_at + 1 + len;
    }
    out
}

/// The names of the entity references (`&name;`, not `&#…;`) in `text`.
fn references(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    text.split(|&b| b == b'&').skip(1).filter_map(|after| {
        let end = after.iter().position(|&b| b == b';' || b == b'&' || b == b'<' || b.is_ascii_whitespace())?;
        (after[end] == b';' && end > 0 && after[0] != b'#').then(|| &after[..end])
    })
}

/// What [`scan`] found.
#[derive(Debug, Default, PartialEq)]
struct Nesting {
    /// The deepest nesting of elements, and the byte offset of the start
    /// tag that first reached it.
    depth: usize,
    at: usize,
    /// The deepest nesting inside any quoted string of a document type
    /// declaration's internal subset (entity values among them).
    in_entities: usize,
    /// The byte offset of the first start tag with more than
    /// [`MAX_ATTRIBUTES`] attributes.
    crowded: Option<usize>,
}

/// An error unless the elements of `text`, entity expansions counted,
/// nest at most [`MAX_DEPTH`] levels deep.
fn check_depth(text: &[u8]) -> Result<(), String> {
    let n = scan(text, true);
    if let Some(at) = n.crowded {
        let line = text[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        return Err(format!(
            "an element with more than {MAX_ATTRIBUTES} attributes (line {line}); flam3's genomes have a few hundred at \
             most"
        ));
    }
    if n.depth > MAX_DEPTH {
        let line = text[..n.at].iter().filter(|&&b| b == b'\n').count() + 1;
        return Err(format!(
            "malformed XML: elements nested more than {MAX_DEPTH} levels deep (line {line}); flam3's XML reader \
             stops there too"
        ));
    }
    if n.depth + MAX_ENTITY_NESTING * n.in_entities > MAX_DEPTH {
        return Err(format!(
            "malformed XML: entity references could nest elements more than {MAX_DEPTH} levels deep (entity values \
             nest {} levels, and up to {MAX_ENTITY_NESTING} references expand inside one another)",
            n.in_entities
        ));
    }
    Ok(())
}

/// The index of the first `needle` in `text` at or after `from`.
fn find(text: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    text.get(from..)?.windows(needle.len()).position(|w| w == needle).map(|i| from + i)
}

/// The index just past the first `needle` at or after `from`, or the end.
fn past(text: &[u8], from: usize, needle: &[u8]) -> usize {
    find(text, from, needle).map_or(text.len(), |i| i + needle.len())
}

/// The index of the first `stop` byte at or after `from` outside quoted
/// strings, calling `quoted` with each quoted string passed.
fn until_unquoted(text: &[u8], from: usize, stop: &[u8], mut quoted: impl FnMut(&[u8])) -> Option<usize> {
    let mut i = from;
    while i < text.len() {
        let c = text[i];
        if c == b'"' || c == b'\'' {
            let end = text[i + 1..].iter().position(|&b| b == c).map(|k| i + 1 + k)?;
            quoted(&text[i + 1..end]);
            i = end + 1;
        } else if stop.contains(&c) {
            return Some(i);
        } else {
            i += 1;
        }
    }
    None
}

/// How deeply the elements of `text` nest, read as roxmltree reads them
/// as far as nesting goes: comments, CDATA sections, processing
/// instructions and declarations hold no elements, and a start tag ends at
/// the first `>` outside its quoted attribute values. On text roxmltree
/// refuses the count may stop early, but only past the point where
/// roxmltree stops too. `document` says whether a document type
/// declaration may appear (entity values are scanned as fragments).
fn scan(text: &[u8], document: bool) -> Nesting {
    let mut n = Nesting::default();
    let mut depth = 0usize;
    let mut i = 0;
    while let Some(k) = text[i..].iter().position(|&b| b == b'<') {
        let p = i + k;
        let rest = &text[p..];
        i = if rest.starts_with(b"<!--") {
            past(text, p + 4, b"-->")
        } else if rest.starts_with(b"<![CDATA[") {
            past(text, p + 9, b"]]>")
        } else if rest.starts_with(b"<?") {
            past(text, p + 2, b"?>")
        } else if rest.starts_with(b"<!DOCTYPE") && document {
            doctype(text, p, &mut n.in_entities)
        } else if rest.starts_with(b"<!") {
            past(text, p + 2, b">")
        } else if rest.starts_with(b"</") {
            depth = depth.saturating_sub(1);
            past(text, p + 2, b">")
        } else {
            // A start tag: its attribute values may hold '>' and "/>".
            let mut values = 0usize;
            let Some(end) = until_unquoted(text, p + 1, b">", |_| values += 1) else { break };
            if values > MAX_ATTRIBUTES {
                n.crowded = Some(p);
                break;
            }
            if text[end - 1] != b'/' {
                depth += 1;
                if depth > n.depth {
                    n.depth = depth;
                    n.at = p;
                    if depth > MAX_DEPTH {
                        break;
                    }
                }
            }
            end + 1
        };
    }
    n
}

/// Skips the `<!DOCTYPE …>` declaration at `p`; the deepest nesting of the
/// quoted strings of its internal subset goes into `in_entities`.
fn doctype(text: &[u8], p: usize, in_entities: &mut usize) -> usize {
    let mut deepest = |s: &[u8]| *in_entities = (*in_entities).max(scan(s, false).depth);
    let Some(open) = until_unquoted(text, p + 9, b"[>", &mut deepest) else { return text.len() };
    if text[open] == b'>' {
        return open + 1;
    }
    // The internal subset: markup declarations, comments and processing
    // instructions up to the closing ']'.
    let mut i = open + 1;
    loop {
        let Some(k) = until_unquoted(text, i, b"<]", &mut deepest) else { return text.len() };
        if text[k] == b']' {
            return past(text, k + 1, b">");
        }
        let rest = &text[k..];
        i = if rest.starts_with(b"<!--") {
            past(text, k + 4, b"-->")
        } else if rest.starts_with(b"<?") {
            past(text, k + 2, b"?>")
        } else {
            match until_unquoted(text, k + 1, b">", &mut deepest) {
                Some(e) => e + 1,
                None => return text.len(),
            }
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth(s: &str) -> usize {
        scan(s.as_bytes(), true).depth
    }

    #[test]
    fn nesting_is_counted_as_roxmltree_reads_it() {
        assert_eq!(depth("<a/>"), 0);
        assert_eq!(depth("<a><b/><b><c></c></b></a>"), 3);
        // Markup in attribute values, comments, CDATA and processing
        // instructions is not markup.
        assert_eq!(depth(r#"<a x="/>" y='<b>'><b/></a>"#), 1);
        assert_eq!(depth("<a><!-- <b><b><b> --><![CDATA[<b><b>]]><?pi <b> ?></a>"), 1);
        // Text may hold "/>" and ">": only tags close elements.
        assert_eq!(depth("<a>/>/></a><a>x<b>y/></b></a>"), 2);
        // Entity values are counted apart.
        let n = scan(b"<!DOCTYPE a [<!ENTITY e '<b><b></b></b>'> <!-- ] --> ]><a>&e;</a>", true);
        assert_eq!((n.depth, n.in_entities), (1, 2));
    }

    #[test]
    fn elements_with_thousands_of_attributes_are_refused_before_parsing() {
        let attrs = |n: usize| (0..n).map(|i| format!(" v{i}=\"1\"")).collect::<String>();
        let e = parse(&format!("<flames>\n<flame{}/></flames>", attrs(MAX_ATTRIBUTES + 1))).unwrap_err();
        assert!(e.contains("more than 4096 attributes (line 2)"), "{e}");
        assert!(parse(&format!("<flame{}/>", attrs(MAX_ATTRIBUTES))).is_ok());
    }

    #[test]
    fn entity_expansion_is_bounded_before_parsing() {
        let doc = |value: &str, refs: usize| {
            format!(
                "<!DOCTYPE f [<!ENTITY e \"{value}\"> <!ENTITY d '&e;&e;'>]>\n<f a=\"&e;\">{}</f>",
                "&d;".repeat(refs)
            )
        };
        // Predefined entities and character references are not counted.
        assert!(parse("<f a=\"&amp;&#65;\">&lt;&#x42;</f>").is_ok());
        // 1 + 2 × 100 references of 1,000 bytes: parsed.
        let fine = doc(&"x".repeat(1000), 100);
        let fine = parse(&fine).unwrap();
        assert_eq!(fine.root_element().text().unwrap().len(), 200_000);
        // 1 + 2 × 600 of them: more than 1 MiB, refused.
        let e = parse(&doc(&"x".repeat(1000), 600)).unwrap_err();
        assert!(e.contains("expand to more than 1 MiB"), "{e}");
        // References inside entities multiply (the billion laughs).
        let laughs = "<!DOCTYPE f [<!ENTITY a 'xxxxxxxxxx'><!ENTITY b '&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;'>\
                      <!ENTITY c '&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;'><!ENTITY d '&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;'>\
                      <!ENTITY e '&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;'>]><f>&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;</f>";
        assert!(parse(laughs).unwrap_err().contains("expand to more than"));
        // Entities declared but not used, and parameter entities, cost nothing.
        let unused = format!("<!DOCTYPE f [<!ENTITY e '{}'><!ENTITY % p 'y'>]><f/>", "x".repeat(2 << 20));
        assert!(parse(&unused).is_ok());
    }

    #[test]
    fn deep_documents_are_refused_before_parsing() {
        let deep = format!("{}{}", "<a>".repeat(MAX_DEPTH + 1), "</a>".repeat(MAX_DEPTH + 1));
        let e = parse(&deep).unwrap_err();
        assert!(e.contains("nested more than 257 levels deep (line 1)"), "{e}");
        let fine = format!("{}{}", "<a>".repeat(MAX_DEPTH), "</a>".repeat(MAX_DEPTH));
        assert!(parse(&fine).is_ok());
        assert!(parse("<a>").unwrap_err().starts_with("malformed XML: "));
    }

    #[test]
    fn control_characters_in_messages_are_escaped() {
        let e = parse("<flame size=\"8 8\"\u{1d}>").unwrap_err();
        assert!(e.contains("\\u{1d}") && !e.chars().any(char::is_control), "{e:?}");
    }
}
