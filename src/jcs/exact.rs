//! Does a JSON text survive RFC 8785 canonicalization unchanged in meaning?
//!
//! vouch writes record bodies in RFC 8785 form, and a command never writes
//! something other than what it was given. Two things in an ordinary JSON
//! text (RFC 8259) do not survive the trip through a parser and the RFC 8785
//! serializer:
//!
//! * **Duplicate member names.** RFC 8259 leaves their meaning open and
//!   RFC 8785 forbids them; a parser keeps one of the values
//!   (`{"approved":false,"approved":true}` would become
//!   `{"approved":true}`). Refused at any depth, comparing decoded names
//!   (`"a"` and `"\u0061"` are the same name).
//! * **Numbers whose written form would denote another value.** RFC 8785
//!   writes a number as the shortest ECMAScript form of the IEEE-754 double
//!   nearest to it. A literal is accepted when that form, read as an exact
//!   decimal, has the same value as the literal read as an exact decimal.
//!   Changes of notation alone are allowed: `1.0` → `1`, `1e2` → `100`,
//!   `0.10` → `0.1`, `-0` → `0`, `1E400` is not (it overflows). Refused, for
//!   example: `9007199254740993` (→ `9007199254740992`), `2^64` =
//!   `18446744073709551616` (→ `18446744073709552000`),
//!   `123456789012345678901234567890` (→ `1.2345678901234568e+29`),
//!   `0.30000000000000000001` (→ `0.3`), `1e-400` (→ `0`).
//!
//! Strings are checked as a JSON parser would (UTF-8, escapes, no unpaired
//! surrogates); their content always survives. Work is linear in the input
//! and nesting is bounded.

use super::{JcsError, string};
use std::fmt;

/// One step of a path into a JSON value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathStep {
    /// An object member, by decoded name.
    Member(String),
    /// An array element, by index.
    Index(usize),
}

/// Where a value sits in a JSON document, shown as `$`, `$.a`, `$.a[3]`,
/// `$["a b"]`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct JsonPath(pub Vec<PathStep>);

impl fmt::Display for JsonPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("$")?;
        for step in &self.0 {
            match step {
                PathStep::Index(i) => write!(f, "[{i}]")?,
                PathStep::Member(name)
                    if !name.is_empty()
                        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') =>
                {
                    write!(f, ".{name}")?
                }
                PathStep::Member(name) => write!(f, "[{name:?}]")?,
            }
        }
        Ok(())
    }
}

/// Why a submitted JSON text cannot be written in RFC 8785 form without
/// changing what it says.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InexactJson {
    /// Not JSON (RFC 8259), or a string JSON cannot hold.
    #[error("not JSON (byte {offset})")]
    Syntax { offset: usize },
    /// Nested deeper than the limit.
    #[error("nested deeper than {max} levels (byte {offset})")]
    TooDeep { offset: usize, max: u32 },
    /// An object has two members of this name.
    #[error(
        "member {} appears twice (byte {offset}): only one value would be kept, so it is refused",
        path
    )]
    DuplicateKey { path: JsonPath, offset: usize },
    /// A number RFC 8785 would write as another value (`canonical`), or
    /// not at all (`None`: it overflows a double).
    #[error(
        "number {} at {path} (byte {offset}) cannot be written exactly: {}",
        shorten(literal),
        match canonical { Some(c) => format!("RFC 8785 would write it as {c}, another value"), None => "it is beyond the range of an IEEE-754 double".to_owned() }
    )]
    InexactNumber {
        path: JsonPath,
        offset: usize,
        literal: String,
        canonical: Option<String>,
    },
}

impl InexactJson {
    /// Stable snake_case reason code.
    pub fn code(&self) -> &'static str {
        match self {
            InexactJson::Syntax { .. } => "bad_json",
            InexactJson::TooDeep { .. } => "too_deep",
            InexactJson::DuplicateKey { .. } => "duplicate_key",
            InexactJson::InexactNumber { .. } => "inexact_number",
        }
    }
}

fn shorten(s: &str) -> String {
    if s.len() <= 48 {
        s.to_owned()
    } else {
        format!("{}…({} digits)", &s[..40], s.len())
    }
}

/// Checks that the JSON text `input` (any RFC 8259 formatting, surrounding
/// whitespace allowed) has no duplicate member names and no number that
/// RFC 8785 would write as another value, nesting at most `max_depth`
/// (the top-level container is depth 1). See the module docs.
pub fn check_exact(input: &[u8], max_depth: u32) -> Result<(), InexactJson> {
    check(input, max_depth, true).map(drop)
}

/// [`check_exact`] without the number check: RFC 8259 syntax, no
/// duplicate member names, nesting at most `max_depth`. For messages that
/// are forwarded as they are (the MCP wrapper), where a number's spelling
/// is the sender's business but two values for one name are a parser
/// differential.
pub fn check_unique_keys(input: &[u8], max_depth: u32) -> Result<(), InexactJson> {
    check(input, max_depth, false).map(drop)
}

/// [`check_exact`], returning how many values the text holds (scalars and
/// containers, the top-level value included; member names do not count):
/// what a caller bounds before it builds a `serde_json::Value`, whose
/// memory grows with the values rather than the bytes.
pub fn check_exact_counted(input: &[u8], max_depth: u32) -> Result<usize, InexactJson> {
    check(input, max_depth, true)
}

/// [`check_unique_keys`], returning the number of values as
/// [`check_exact_counted`] does.
pub fn check_unique_keys_counted(input: &[u8], max_depth: u32) -> Result<usize, InexactJson> {
    check(input, max_depth, false)
}

fn check(input: &[u8], max_depth: u32, numbers: bool) -> Result<usize, InexactJson> {
    let mut p = Lenient {
        input,
        pos: 0,
        max_depth,
        path: Vec::new(),
        numbers,
        values: 0,
    };
    p.ws();
    p.value(0)?;
    p.ws();
    if p.pos != input.len() {
        return Err(InexactJson::Syntax { offset: p.pos });
    }
    Ok(p.values)
}

/// The exact decimal value of a JSON number: (negative, significant digits
/// without leading or trailing zeros, exponent), or `None` for zero.
fn exact_decimal(text: &[u8]) -> Option<(bool, Vec<u8>, i64)> {
    let neg = text.first() == Some(&b'-');
    let body = if neg { &text[1..] } else { text };
    let (mantissa, exp) = match body.iter().position(|&b| b == b'e' || b == b'E') {
        Some(i) => (&body[..i], &body[i + 1..]),
        None => (body, &b""[..]),
    };
    let mut exp_value: i64 = 0;
    let (exp_neg, exp_digits) = match exp.first() {
        Some(b'-') => (true, &exp[1..]),
        Some(b'+') => (false, &exp[1..]),
        _ => (false, exp),
    };
    for &d in exp_digits {
        exp_value = exp_value
            .saturating_mul(10)
            .saturating_add(i64::from(d - b'0'));
    }
    if exp_neg {
        exp_value = -exp_value;
    }
    let (int, frac) = match mantissa.iter().position(|&b| b == b'.') {
        Some(i) => (&mantissa[..i], &mantissa[i + 1..]),
        None => (mantissa, &b""[..]),
    };
    let mut digits: Vec<u8> = int.iter().chain(frac).copied().collect();
    let mut exponent = exp_value.saturating_sub(frac.len() as i64);
    let lead = digits.iter().take_while(|&&d| d == b'0').count();
    digits.drain(..lead);
    if digits.is_empty() {
        return None;
    }
    while digits.last() == Some(&b'0') {
        digits.pop();
        exponent = exponent.saturating_add(1);
    }
    Some((neg, digits, exponent))
}

/// The RFC 8785 form of the number `text` (already known to be RFC 8259
/// syntax) when it denotes the same value, else the error's parts.
pub(super) fn check_number(text: &[u8]) -> Result<(), Option<String>> {
    let s = std::str::from_utf8(text).map_err(|_| None)?;
    let value: f64 = s.parse().map_err(|_| None)?;
    if !value.is_finite() {
        return Err(None);
    }
    let mut buf = ryu_js::Buffer::new();
    let canonical = buf.format_finite(value);
    if exact_decimal(canonical.as_bytes()) == exact_decimal(text) {
        Ok(())
    } else {
        Err(Some(canonical.to_owned()))
    }
}

/// [`check_exact`] for a value already parsed: refuses integers that
/// RFC 8785 would write as another value (e.g. a `u64` above 2^53 with no
/// exact double), reporting where, and nesting deeper than `max_depth`.
/// (A parsed value has no duplicate names left to find.)
pub fn check_value_exact(value: &serde_json::Value, max_depth: u32) -> Result<(), InexactJson> {
    fn walk(
        v: &serde_json::Value,
        path: &mut Vec<PathStep>,
        depth: u32,
        max: u32,
    ) -> Result<(), InexactJson> {
        use serde_json::Value;
        let too_deep = || InexactJson::TooDeep { offset: 0, max };
        match v {
            Value::Number(n) => {
                let text = n.to_string();
                let finite = n.as_f64().is_some_and(f64::is_finite);
                let result = if !finite {
                    Err(None)
                } else if n.is_f64() {
                    Ok(())
                } else {
                    check_number(text.as_bytes())
                };
                if let Err(canonical) = result {
                    return Err(InexactJson::InexactNumber {
                        path: JsonPath(path.clone()),
                        offset: 0,
                        literal: text,
                        canonical,
                    });
                }
            }
            Value::Array(items) => {
                if depth + 1 > max {
                    return Err(too_deep());
                }
                for (i, item) in items.iter().enumerate() {
                    path.push(PathStep::Index(i));
                    walk(item, path, depth + 1, max)?;
                    path.pop();
                }
            }
            Value::Object(map) => {
                if depth + 1 > max {
                    return Err(too_deep());
                }
                for (k, item) in map {
                    path.push(PathStep::Member(k.clone()));
                    walk(item, path, depth + 1, max)?;
                    path.pop();
                }
            }
            Value::Null | Value::Bool(_) | Value::String(_) => {}
        }
        Ok(())
    }
    walk(value, &mut Vec::new(), 0, max_depth)
}

struct Lenient<'a> {
    input: &'a [u8],
    pos: usize,
    max_depth: u32,
    path: Vec<PathStep>,
    /// Whether numbers must be exact (see [`check_number`]).
    numbers: bool,
    /// Values seen so far.
    values: usize,
}

impl Lenient<'_> {
    fn ws(&mut self) {
        while matches!(self.input.get(self.pos), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn syntax(&self) -> InexactJson {
        InexactJson::Syntax { offset: self.pos }
    }

    fn value(&mut self, depth: u32) -> Result<(), InexactJson> {
        self.values += 1;
        match self.input.get(self.pos) {
            Some(b'"') => self.string().map(drop),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b'{') => self.object(depth + 1),
            Some(b'[') => self.array(depth + 1),
            Some(b't') => self.literal(b"true"),
            Some(b'f') => self.literal(b"false"),
            Some(b'n') => self.literal(b"null"),
            _ => Err(self.syntax()),
        }
    }

    fn literal(&mut self, word: &[u8]) -> Result<(), InexactJson> {
        if self.input[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(())
        } else {
            Err(self.syntax())
        }
    }

    /// Scans a string; returns its decoded content.
    fn string(&mut self) -> Result<String, InexactJson> {
        let open = self.pos;
        let mut i = open + 1;
        loop {
            match self.input.get(i) {
                None => return Err(InexactJson::Syntax { offset: i }),
                Some(b'"') => break,
                Some(b'\\') => i += 2,
                Some(_) => i += 1,
            }
        }
        let raw = &self.input[open + 1..i];
        let decoded = string::unescape(raw).map_err(|e: JcsError| InexactJson::Syntax {
            offset: open + 1 + e.offset(),
        })?;
        self.pos = i + 1;
        Ok(decoded)
    }

    fn number(&mut self) -> Result<(), InexactJson> {
        let start = self.pos;
        let digit = |p: &Self, i: usize| p.input.get(i).is_some_and(u8::is_ascii_digit);
        let mut i = start;
        if self.input.get(i) == Some(&b'-') {
            i += 1;
        }
        match self.input.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => {
                while digit(self, i) {
                    i += 1;
                }
            }
            _ => return Err(InexactJson::Syntax { offset: i }),
        }
        if self.input.get(i) == Some(&b'.') {
            i += 1;
            if !digit(self, i) {
                return Err(InexactJson::Syntax { offset: i });
            }
            while digit(self, i) {
                i += 1;
            }
        }
        if matches!(self.input.get(i), Some(b'e' | b'E')) {
            i += 1;
            if matches!(self.input.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            if !digit(self, i) {
                return Err(InexactJson::Syntax { offset: i });
            }
            while digit(self, i) {
                i += 1;
            }
        }
        let text = &self.input[start..i];
        if self.numbers
            && let Err(canonical) = check_number(text)
        {
            return Err(InexactJson::InexactNumber {
                path: JsonPath(self.path.clone()),
                offset: start,
                literal: String::from_utf8_lossy(text).into_owned(),
                canonical,
            });
        }
        self.pos = i;
        Ok(())
    }

    fn enter(&self, depth: u32) -> Result<(), InexactJson> {
        if depth > self.max_depth {
            Err(InexactJson::TooDeep {
                offset: self.pos,
                max: self.max_depth,
            })
        } else {
            Ok(())
        }
    }

    fn array(&mut self, depth: u32) -> Result<(), InexactJson> {
        self.enter(depth)?;
        self.pos += 1;
        self.ws();
        if self.input.get(self.pos) == Some(&b']') {
            self.pos += 1;
            return Ok(());
        }
        let mut index = 0usize;
        loop {
            self.path.push(PathStep::Index(index));
            self.ws();
            self.value(depth)?;
            self.path.pop();
            self.ws();
            match self.input.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => return Err(self.syntax()),
            }
            index += 1;
        }
    }

    fn object(&mut self, depth: u32) -> Result<(), InexactJson> {
        self.enter(depth)?;
        self.pos += 1;
        self.ws();
        if self.input.get(self.pos) == Some(&b'}') {
            self.pos += 1;
            return Ok(());
        }
        let mut names = std::collections::HashSet::new();
        loop {
            self.ws();
            if self.input.get(self.pos) != Some(&b'"') {
                return Err(self.syntax());
            }
            let at = self.pos;
            let name = self.string()?;
            if names.contains(&name) {
                let mut path = self.path.clone();
                path.push(PathStep::Member(name));
                return Err(InexactJson::DuplicateKey {
                    path: JsonPath(path),
                    offset: at,
                });
            }
            self.ws();
            if self.input.get(self.pos) != Some(&b':') {
                return Err(self.syntax());
            }
            self.pos += 1;
            self.ws();
            self.path.push(PathStep::Member(name.clone()));
            self.value(depth)?;
            self.path.pop();
            names.insert(name);
            self.ws();
            match self.input.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => return Err(self.syntax()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(text: &str) -> &'static str {
        match check_exact(text.as_bytes(), 64) {
            Ok(()) => "ok",
            Err(e) => e.code(),
        }
    }

    #[test]
    fn notation_changes_of_the_same_value_are_allowed() {
        for ok in [
            "0",
            "-0",
            "1",
            "1.0",
            "1e2",
            "1E+2",
            "0.1",
            "0.10",
            "2.5",
            "1e21",
            "1e+23",
            "-1.5e-7",
            "9007199254740992",
            "9007199254740994",
            "1e308",
            "5e-324",
            "0e999999999999999999999",
            "[1, 2.50, {\"a\" : 1e0}]",
            " {\"a\":1,\"b\":{\"a\":2}} ",
        ] {
            assert_eq!(code(ok), "ok", "{ok}");
        }
    }

    #[test]
    fn values_that_would_change_are_refused() {
        for bad in [
            "9007199254740993",
            "18446744073709551616",
            "123456789012345678901234567890",
            "1152921504606846976",
            "0.30000000000000000001",
            "1e-400",
            "1e400",
            "-1e400",
            "[0, {\"x\": [1, 9007199254740993]}]",
        ] {
            assert_eq!(code(bad), "inexact_number", "{bad}");
        }
        let e = check_exact(b"{\"a\":[1,{\"big\":18446744073709551616}]}", 64).unwrap_err();
        assert_eq!(
            e,
            InexactJson::InexactNumber {
                path: JsonPath(vec![
                    PathStep::Member("a".into()),
                    PathStep::Index(1),
                    PathStep::Member("big".into())
                ]),
                offset: 15,
                literal: "18446744073709551616".into(),
                canonical: Some("18446744073709552000".into()),
            }
        );
        assert!(e.to_string().contains("$.a[1].big"), "{e}");
    }

    #[test]
    fn duplicate_names_are_refused_at_any_depth() {
        let e = check_exact(br#"{"approved":false,"approved":true}"#, 64).unwrap_err();
        assert_eq!(e.code(), "duplicate_key");
        assert!(e.to_string().contains("$.approved"), "{e}");
        assert_eq!(code(r#"{"a":{"b":1,"c":2,"b":3}}"#), "duplicate_key");
        assert_eq!(code(r#"[{"x":1},{"x":1, "\u0078":2}]"#), "duplicate_key");
        assert_eq!(code(r#"{"a":{"a":{"a":1}}}"#), "ok");
    }

    #[test]
    fn syntax_and_depth() {
        for bad in [
            "",
            "{",
            "[1,]",
            "01",
            "1.",
            "\"\\ud800\"",
            "{\"a\" 1}",
            "tru",
            "1 2",
        ] {
            assert_eq!(code(bad), "bad_json", "{bad}");
        }
        let deep = format!("{}{}", "[".repeat(65), "]".repeat(65));
        assert_eq!(code(&deep), "too_deep");
    }
}
