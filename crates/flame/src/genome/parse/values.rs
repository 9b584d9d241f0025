//! Attribute values as flam3 reads them (`flam3_atof`, `flam3_atoi`, …),
//! with a message for a value that cannot be read. The caller places the
//! message (file, flame, element, attribute).

use std::fmt;

/// What is wrong with one attribute value.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct ValueError(pub(super) String);

impl fmt::Display for ValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<String> for ValueError {
    fn from(message: String) -> Self {
        ValueError(message)
    }
}

impl From<&str> for ValueError {
    fn from(message: &str) -> Self {
        ValueError(message.to_string())
    }
}

/// `Result` of reading a value.
pub(super) type ValueResult<T> = Result<T, ValueError>;

/// The value, shortened for messages.
pub(super) fn shown(v: &str) -> String {
    let mut s: String = v.chars().take(60).collect();
    if s.len() < v.len() {
        s.push('…');
    }
    format!("{s:?}")
}

/// A finite real number (flam3's `flam3_atof`; surrounding white space is
/// allowed).
pub(super) fn real(v: &str) -> ValueResult<f64> {
    let t = v.trim();
    match t.parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(x),
        Ok(_) => Err(format!("{} is not a finite number", shown(v)).into()),
        Err(_) if t.is_empty() => Err("empty value, a number is needed".into()),
        Err(_) => Err(format!("{} is not a number", shown(v)).into()),
    }
}

/// An integer (flam3's `flam3_atoi`).
pub(super) fn integer(v: &str) -> ValueResult<i64> {
    let t = v.trim();
    t.parse::<i64>().map_err(|_| {
        if t.is_empty() {
            "empty value, an integer is needed".into()
        } else {
            format!("{} is not an integer", shown(v)).into()
        }
    })
}

/// Exactly `N` real numbers separated by white space.
pub(super) fn reals<const N: usize>(v: &str) -> ValueResult<[f64; N]> {
    let words: Vec<&str> = v.split_whitespace().collect();
    if words.len() != N {
        return Err(format!("expected {N} numbers, found {} in {}", words.len(), shown(v)).into());
    }
    let mut out = [0.0; N];
    for (o, w) in out.iter_mut().zip(&words) {
        *o = real(w)?;
    }
    Ok(out)
}

/// An integer in `lo..=hi`.
pub(super) fn int_in(v: &str, lo: i64, hi: i64) -> ValueResult<i64> {
    let x = integer(v)?;
    if x < lo || x > hi {
        return Err(format!("{x} is out of range ({lo} to {hi})").into());
    }
    Ok(x)
}

/// A keyword among `options` (case-sensitive, as in flam3).
pub(super) fn keyword<T: Copy>(v: &str, options: &[(&str, T)]) -> ValueResult<T> {
    options.iter().find(|(k, _)| *k == v).map(|&(_, t)| t).ok_or_else(|| {
        let names: Vec<&str> = options.iter().map(|(k, _)| *k).collect();
        format!("unknown value {} (flam3 knows {})", shown(v), names.join(", ")).into()
    })
}

/// flam3's `round6`.
pub(super) fn round6(x: f64) -> f64 {
    let mut x = x * 1e6;
    if x < 0.0 {
        x -= 1.0;
    }
    1e-6 * (x + 0.5).trunc()
}
