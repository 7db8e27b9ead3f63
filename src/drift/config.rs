//! Structured configuration (JSON, YAML, TOML) as one JSON value, and its
//! RFC 8785 bytes: what drift hashes and diffs for a config target.
//!
//! Two files are the same configuration exactly when [`canonical`] gives the
//! same bytes: formatting, comments, key order, quoting style, YAML flow vs
//! block style and TOML inline vs standard tables do not count, and the same
//! data written in JSON, YAML or TOML gives the same bytes. A drift tool must
//! never call two different values equal, so [`parse`] refuses, rather than
//! rounds or drops, everything that has no exact JSON form.
//!
//! # What [`parse`] refuses (each a [`ConfigError`] with a stable code)
//!
//! | Input | Code | Where |
//! |---|---|---|
//! | more than [`MAX_INPUT`] bytes | `too_large` | |
//! | not UTF-8 | `invalid_utf8` | byte offset |
//! | not the format's syntax (TOML's own duplicate-key refusal included) | `invalid_syntax` (`duplicate_key` for TOML duplicates) | line, column |
//! | a member name twice in one object (JSON: serde_json would keep the last; YAML: refused by us, serde_yaml_ng's `Mapping` would too) | `duplicate_key` | line, column |
//! | a YAML mapping key that is not a string (`1:`, `true:`, `~:`, `? [a]`) | `non_string_key` | line, column |
//! | a YAML stream of more than one document | `multiple_documents` | |
//! | a YAML local tag (`!secret x`, `!Ref y`): its meaning is the application's | `yaml_tag` | line, column |
//! | a number RFC 8785 would write as another value (`9007199254740993`, `0.30000000000000000001`, YAML integers beyond 128 bits) or not at all (`1e400`) | `inexact_number` | line, column |
//! | YAML `.nan`/`.inf`, TOML `nan`/`inf` | `not_finite` | line, column |
//! | containers nested deeper than [`MAX_DEPTH`] (64, what `crate::jcs` writes) | `too_deep` | line, column where known |
//! | more than [`MAX_VALUES`] values (scalars and containers; YAML: counted after alias expansion) | `too_many_values` | |
//! | YAML aliases expanding past [`MAX_VALUES`] values or [`max_yaml_bytes`] bytes of strings, or past serde_yaml_ng's own repetition limit ("billion laughs") | `alias_expansion` | |
//!
//! Lines and columns are 1-based; columns count characters (Unicode scalar
//! values) from the start of the line.
//!
//! # What is kept, and how
//!
//! * YAML: the core schema as serde_yaml_ng resolves it (`yes` is a string,
//!   `0o17` is 15, `~` is null). Standard `!!` tags are applied as
//!   serde_yaml_ng applies them (`!!str 1` is the string `"1"`; `!!binary`,
//!   `!!timestamp` and other `!!` tags keep the scalar's text as a string).
//!   Merge keys are not applied: `<<` is an ordinary member name. Aliases
//!   are expanded (bounded, see above). An empty stream is `null`.
//! * TOML: datetimes become their text as the `toml` crate writes it
//!   (RFC 3339 `1979-05-27T07:32:00Z`; local dates and times as
//!   `1979-05-27`, `07:32:00`): a string, indistinguishable from the same
//!   text written as a string. Integers in any radix are their value.
//! * A JSON text with a byte order mark is a syntax error (RFC 8259 §8.1).
//!
//! # Bounds
//!
//! The input is at most [`MAX_INPUT`] bytes (callers read it bounded);
//! nesting is at most [`MAX_DEPTH`]; at most [`MAX_VALUES`] values are
//! built (JSON: counted on the text before anything is built); YAML alias
//! expansion is bounded as above. YAML nesting is checked on the text
//! before serde_yaml_ng reads it (`yaml_scan`), since libyaml's reading
//! costs the square of the flow nesting before any depth limit can act.
//! Work is linear in the input (YAML: in the expanded values).

use std::path::Path;

use serde::Serialize;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess};
use serde_json::{Map, Number, Value};

use crate::jcs::{self, CanonicalizeError, InexactJson};

mod from_json;
mod from_toml;
mod from_yaml;
use from_json::*;
use from_toml::*;
use from_yaml::*;

/// Inputs longer than this are refused (`too_large`).
pub const MAX_INPUT: usize = 64 << 20;

/// Nesting limit (the top-level container is depth 1): that of the RFC 8785
/// writer, so that every parsed value has canonical bytes.
pub const MAX_DEPTH: u32 = jcs::DEFAULT_MAX_DEPTH;

/// Most values (scalars and containers, the top one included; YAML:
/// counted after alias expansion) one configuration file may hold. A
/// `serde_json::Value` costs up to about 700 bytes per value (a
/// one-member object), and a check holds the baseline, the file and, past
/// the change limit, a copy of both: this bounds the memory a file can ask
/// for whatever its byte count (about 350 MB for a check at the limit).
pub const MAX_VALUES: usize = 1 << 18;

/// Bytes of strings (member names included, counted after alias
/// expansion) a YAML input of `len` bytes may produce: 2 per input byte
/// plus 2^20. Without aliases no document comes near it (an escape never
/// writes more than 1.5 bytes per byte of its text).
pub fn max_yaml_bytes(len: usize) -> usize {
    len.saturating_mul(2).saturating_add(1 << 20)
}

mod yaml_scan;

/// A configuration file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Json,
    Yaml,
    Toml,
}

impl Format {
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::Yaml => "yaml",
            Format::Toml => "toml",
        }
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The format named by the extension of `path` (`.json`, `.yaml`, `.yml`,
/// `.toml`, any case), else `None`.
pub fn detect(path: &Path) -> Option<Format> {
    let ext = path.extension()?.to_str()?;
    if ext.eq_ignore_ascii_case("json") {
        Some(Format::Json)
    } else if ext.eq_ignore_ascii_case("yaml") || ext.eq_ignore_ascii_case("yml") {
        Some(Format::Yaml)
    } else if ext.eq_ignore_ascii_case("toml") {
        Some(Format::Toml)
    } else {
        None
    }
}

/// A 1-based line and column (in characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Position {
    pub line: usize,
    pub column: usize,
}

impl std::fmt::Display for Position {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {} column {}", self.line, self.column)
    }
}

fn at(pos: &Option<Position>) -> String {
    match pos {
        Some(p) => format!(" at {p}"),
        None => String::new(),
    }
}

/// Why a configuration file has no exact JSON value (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("{len} bytes is more than the {max} a configuration file may have")]
    TooLarge { len: usize, max: usize },
    #[error("not UTF-8 (byte {offset})")]
    InvalidUtf8 { offset: usize },
    /// `detail` is the parser's own message, for people (not stable).
    #[error("invalid {format} at line {line} column {column}: {detail}")]
    Syntax {
        format: Format,
        line: usize,
        column: usize,
        detail: String,
    },
    /// `pointer` (RFC 6901) names the repeated member where known (not for
    /// TOML, whose parser reports only the position).
    #[error("{format}: member {} appears twice (line {line} column {column}): only one value would be kept, so it is refused", pointer.as_deref().unwrap_or("name"))]
    DuplicateKey {
        format: Format,
        pointer: Option<String>,
        line: usize,
        column: usize,
    },
    #[error("yaml: mapping key at line {line} column {column} (under {pointer:?}) is not a string")]
    NonStringKey {
        pointer: String,
        line: usize,
        column: usize,
    },
    #[error("yaml: more than one document in the stream")]
    MultipleDocuments,
    #[error("yaml: local tag !{tag} at line {line} column {column} has no JSON meaning")]
    Tag {
        tag: String,
        pointer: String,
        line: usize,
        column: usize,
    },
    /// `literal` as written (TOML: without `_` separators); the RFC 8785
    /// form would be another value, or none (overflow).
    #[error(
        "{format}: number {literal} at {pointer:?}{} cannot be written exactly in RFC 8785 form",
        at(position)
    )]
    InexactNumber {
        format: Format,
        pointer: String,
        literal: String,
        position: Option<Position>,
    },
    #[error(
        "{format}: NaN or infinity at {pointer:?}{} has no JSON form",
        at(position)
    )]
    NotFinite {
        format: Format,
        pointer: String,
        position: Option<Position>,
    },
    #[error("{format}: nested deeper than {max} levels{}", at(position))]
    TooDeep {
        format: Format,
        max: u32,
        position: Option<Position>,
    },
    #[error(
        "yaml: aliases expand to more than {max_values} values or {max_bytes} bytes of strings"
    )]
    AliasExpansion { max_values: usize, max_bytes: usize },
    #[error("{format}: more than {max} values (scalars and containers)")]
    TooManyValues { format: Format, max: usize },
}

impl ConfigError {
    /// Stable snake_case reason code.
    pub fn code(&self) -> &'static str {
        match self {
            ConfigError::TooLarge { .. } => "too_large",
            ConfigError::InvalidUtf8 { .. } => "invalid_utf8",
            ConfigError::Syntax { .. } => "invalid_syntax",
            ConfigError::DuplicateKey { .. } => "duplicate_key",
            ConfigError::NonStringKey { .. } => "non_string_key",
            ConfigError::MultipleDocuments => "multiple_documents",
            ConfigError::Tag { .. } => "yaml_tag",
            ConfigError::InexactNumber { .. } => "inexact_number",
            ConfigError::NotFinite { .. } => "not_finite",
            ConfigError::TooDeep { .. } => "too_deep",
            ConfigError::AliasExpansion { .. } => "alias_expansion",
            ConfigError::TooManyValues { .. } => "too_many_values",
        }
    }

    /// Where in the input, when known.
    pub fn position(&self) -> Option<Position> {
        match self {
            ConfigError::Syntax { line, column, .. }
            | ConfigError::DuplicateKey { line, column, .. }
            | ConfigError::NonStringKey { line, column, .. }
            | ConfigError::Tag { line, column, .. } => Some(Position {
                line: *line,
                column: *column,
            }),
            ConfigError::InexactNumber { position, .. }
            | ConfigError::NotFinite { position, .. }
            | ConfigError::TooDeep { position, .. } => *position,
            ConfigError::TooLarge { .. }
            | ConfigError::InvalidUtf8 { .. }
            | ConfigError::MultipleDocuments
            | ConfigError::AliasExpansion { .. }
            | ConfigError::TooManyValues { .. } => None,
        }
    }
}

/// Parses a configuration file into its JSON value (see the module docs for
/// what is refused). Every value returned has [`canonical`] bytes.
pub fn parse(bytes: &[u8], format: Format) -> Result<Value, ConfigError> {
    if bytes.len() > MAX_INPUT {
        return Err(ConfigError::TooLarge {
            len: bytes.len(),
            max: MAX_INPUT,
        });
    }
    let text = std::str::from_utf8(bytes).map_err(|e| ConfigError::InvalidUtf8 {
        offset: e.valid_up_to(),
    })?;
    match format {
        Format::Json => parse_json(text),
        Format::Yaml => parse_yaml(text),
        Format::Toml => parse_toml(text),
    }
}

/// The RFC 8785 bytes of `v` (via `crate::jcs`). Never fails for a value
/// from [`parse`]; other values may hold integers with no exact RFC 8785
/// form or nest too deep, and are refused rather than rounded.
pub fn canonical(v: &Value) -> Result<Vec<u8>, CanonicalizeError> {
    jcs::to_canonical_vec(v)
}

/// Line and column of byte `offset` in `text` (column in characters).
fn position_of(text: &str, offset: usize) -> Position {
    let bytes = text.as_bytes();
    let offset = offset.min(bytes.len());
    let before = &bytes[..offset];
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let column = bytes[line_start..offset]
        .iter()
        .filter(|&&b| b & 0xC0 != 0x80)
        .count()
        + 1;
    Position { line, column }
}

/// Byte offset of a 1-based line and a 1-based *byte* column.
fn offset_of(text: &str, line: usize, byte_column: usize) -> usize {
    let mut start = 0;
    if line > 1 {
        let mut seen = 1;
        for (i, b) in text.bytes().enumerate() {
            if b == b'\n' {
                seen += 1;
                if seen == line {
                    start = i + 1;
                    break;
                }
            }
        }
    }
    start.saturating_add(byte_column.saturating_sub(1))
}

// ---------------------------------------------------------------- JSON

// ---------------------------------------------------------------- YAML

// ---------------------------------------------------------------- TOML

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::json::{self, diff::Op};
    use serde_json::json;

    fn ok(text: &str, format: Format) -> Value {
        match parse(text.as_bytes(), format) {
            Ok(v) => v,
            Err(e) => panic!("{format}: {e} ({})", e.code()),
        }
    }

    fn canon(text: &str, format: Format) -> String {
        String::from_utf8(canonical(&ok(text, format)).unwrap()).unwrap()
    }

    fn err(text: &str, format: Format) -> ConfigError {
        match parse(text.as_bytes(), format) {
            Ok(v) => panic!("{format}: accepted as {v}"),
            Err(e) => e,
        }
    }

    fn pos(e: &ConfigError) -> (usize, usize) {
        let p = e.position().unwrap_or_else(|| panic!("no position: {e}"));
        (p.line, p.column)
    }

    const JSON: &str = r#"{"name": "svc", "port": 8080, "ratio": 0.5, "tags": ["a", "b"],
        "db": {"host": "h", "tls": true, "pool": null}}"#;
    const YAML: &str = "name: svc\nport: 8080\nratio: 0.5\ntags:\n  - a\n  - b\ndb:\n  host: h\n  tls: true\n  pool: ~\n";
    const TOML: &str = "name = \"svc\"\nport = 8080\nratio = 0.5\ntags = [\"a\", \"b\"]\n[db]\nhost = \"h\"\ntls = true\n";
    const CANON: &str = r#"{"db":{"host":"h","pool":null,"tls":true},"name":"svc","port":8080,"ratio":0.5,"tags":["a","b"]}"#;

    #[test]
    fn detect_by_extension_any_case() {
        assert_eq!(detect(Path::new("a/b.json")), Some(Format::Json));
        assert_eq!(detect(Path::new("b.YAML")), Some(Format::Yaml));
        assert_eq!(detect(Path::new("b.Yml")), Some(Format::Yaml));
        assert_eq!(detect(Path::new("Cargo.TOML")), Some(Format::Toml));
        assert_eq!(detect(Path::new("b.ini")), None);
        assert_eq!(detect(Path::new("json")), None);
        assert_eq!(detect(Path::new(".json")), None);
    }

    #[test]
    fn same_document_in_three_formats_same_bytes() {
        assert_eq!(canon(JSON, Format::Json), CANON);
        assert_eq!(canon(YAML, Format::Yaml), CANON);
        // TOML has no null: compare without `pool`.
        let without_pool = CANON.replace(r#","pool":null"#, "");
        assert_eq!(canon(TOML, Format::Toml), without_pool);
    }

    #[test]
    fn reordering_and_reformatting_keep_bytes() {
        let compact = r#"{"b":[1,2.0,{"y":1,"x":2}],"a":"\u0041"}"#;
        let pretty = "{\n  \"a\": \"A\",\n  \"b\": [\n    1, 2, {\"x\": 2, \"y\": 1e0}\n  ]\n}\n";
        assert_eq!(canon(compact, Format::Json), canon(pretty, Format::Json));
        let block = "b:\n  - 1\n  - 2.0\n  - x: 2\n    y: 1\na: A\n";
        let flow = "{a: \"A\", b: [1, 2, {y: 1, x: 2}]}  # comment\n";
        assert_eq!(canon(block, Format::Yaml), canon(flow, Format::Yaml));
        assert_eq!(canon(block, Format::Yaml), canon(compact, Format::Json));
        let tables = "[srv]\nport = 1\n[srv.tls]\non = true\n[[x]]\nn = 1\n";
        let inline = "x = [{n = 1}]\nsrv = {tls = {on = true}, port = 0x1}\n";
        assert_eq!(canon(tables, Format::Toml), canon(inline, Format::Toml));
        assert_eq!(
            canon(tables, Format::Toml),
            r#"{"srv":{"port":1,"tls":{"on":true}},"x":[{"n":1}]}"#
        );
    }

    #[test]
    fn changed_value_is_one_change_at_its_pointer() {
        let before = ok(YAML, Format::Yaml);
        let after = ok(&YAML.replace("host: h", "host: evil"), Format::Yaml);
        let d = json::diff::diff(&before, &after);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].pointer, "/db/host");
        assert_eq!(d[0].op, Op::Changed);
        assert_eq!(d[0].after, Some(json!("evil")));
        let before = ok(TOML, Format::Toml);
        let after = ok(&TOML.replace("8080", "8081"), Format::Toml);
        let d = json::diff::diff(&before, &after);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].pointer, "/port");
    }

    #[test]
    fn syntax_errors_have_line_and_column() {
        let e = err("{\n  \"a\": 1,\n  \"b\" 2\n}", Format::Json);
        assert_eq!(e.code(), "invalid_syntax");
        assert_eq!(pos(&e), (3, 7));
        let e = err("a: 1\nb: [1, 2\nc: 3\n", Format::Yaml);
        assert_eq!(e.code(), "invalid_syntax");
        assert_eq!(pos(&e), (3, 2));
        let e = err("a = 1\nb = = 2\n", Format::Toml);
        assert_eq!(e.code(), "invalid_syntax");
        assert_eq!(pos(&e), (2, 5));
        // Columns count characters, not bytes.
        let e = err("{\"é\": 1 2}", Format::Json);
        assert_eq!(pos(&e), (1, 9));
        let e = err("é = 1\n", Format::Toml);
        assert_eq!(pos(&e), (1, 1));
    }

    #[test]
    fn invalid_utf8_has_offset() {
        for f in [Format::Json, Format::Yaml, Format::Toml] {
            let e = parse(b"{\"a\": \"\xff\"}", f).unwrap_err();
            assert_eq!(e, ConfigError::InvalidUtf8 { offset: 7 });
            assert_eq!(e.code(), "invalid_utf8");
        }
    }

    #[test]
    fn json_duplicate_keys_refused_with_path_and_line() {
        let e = err("{\n \"a\": {\"x\": 1,\n   \"x\": 2}\n}", Format::Json);
        assert_eq!(e.code(), "duplicate_key");
        assert_eq!(pos(&e), (3, 4));
        assert!(matches!(&e, ConfigError::DuplicateKey { pointer: Some(p), .. } if p == "/a/x"));
    }

    #[test]
    fn yaml_duplicate_keys_refused() {
        let e = err("a: 1\nb:\n  x: 1\n  x: 2\n", Format::Yaml);
        assert_eq!(e.code(), "duplicate_key");
        assert_eq!(pos(&e), (4, 3));
        assert!(matches!(&e, ConfigError::DuplicateKey { pointer: Some(p), .. } if p == "/b/x"));
    }

    #[test]
    fn toml_duplicate_keys_refused_by_parser() {
        let e = err("a = 1\nb = 2\na = 3\n", Format::Toml);
        assert_eq!(e.code(), "duplicate_key");
        assert_eq!(pos(&e), (3, 1));
        let e = err("[t]\nx = 1\n[t]\ny = 2\n", Format::Toml);
        assert_eq!(e.code(), "duplicate_key");
        assert_eq!(pos(&e).0, 3);
    }

    #[test]
    fn yaml_non_string_keys_refused() {
        for (doc, at) in [
            ("a: 1\n1: x\n", (2, 1)),
            ("true: x\n", (1, 1)),
            ("~: x\n", (1, 1)),
            ("? [a, b]\n: x\n", (1, 3)),
        ] {
            let e = err(doc, Format::Yaml);
            assert_eq!(e.code(), "non_string_key", "{doc}");
            assert_eq!(pos(&e), at, "{doc}");
        }
        // Quoted, the same keys are strings.
        assert_eq!(
            canon("\"1\": x\n'true': y\n", Format::Yaml),
            r#"{"1":"x","true":"y"}"#
        );
    }

    #[test]
    fn yaml_multiple_documents_refused() {
        let e = err("a: 1\n---\nb: 2\n", Format::Yaml);
        assert_eq!(e, ConfigError::MultipleDocuments);
        assert_eq!(e.code(), "multiple_documents");
        // One explicit document is fine, and an empty stream is null.
        assert_eq!(canon("---\na: 1\n...\n", Format::Yaml), r#"{"a":1}"#);
        assert_eq!(ok("", Format::Yaml), Value::Null);
        assert_eq!(ok("# only a comment\n", Format::Yaml), Value::Null);
    }

    #[test]
    fn yaml_tags() {
        let e = err("a: !secret xyz\n", Format::Yaml);
        assert_eq!(e.code(), "yaml_tag");
        assert_eq!(pos(&e), (1, 4));
        assert!(
            matches!(&e, ConfigError::Tag { tag, pointer, .. } if tag == "secret" && pointer == "/a")
        );
        let e = err("a: !Ref\n  b: 1\n", Format::Yaml);
        assert_eq!(e.code(), "yaml_tag");
        // Standard tags are applied.
        assert_eq!(
            canon(
                "a: !!str 1\nb: !!int \"2\"\nc: !!float 3\nd: !!binary aGk=\n",
                Format::Yaml
            ),
            r#"{"a":"1","b":2,"c":3,"d":"aGk="}"#
        );
    }

    #[test]
    fn inexact_numbers_refused() {
        let e = err("{\"a\": [1, 9007199254740993]}", Format::Json);
        assert_eq!(e.code(), "inexact_number");
        assert_eq!(pos(&e), (1, 11));
        assert!(
            matches!(&e, ConfigError::InexactNumber { pointer, literal, .. } if pointer == "/a/1" && literal == "9007199254740993")
        );
        assert_eq!(
            err("[0.30000000000000000001]", Format::Json).code(),
            "inexact_number"
        );
        assert_eq!(err("[1e400]", Format::Json).code(), "inexact_number");

        let e = err("a: 1\nb: 9007199254740993\n", Format::Yaml);
        assert_eq!(e.code(), "inexact_number");
        assert_eq!(pos(&e), (2, 4));
        let e = err(
            "b: 123456789012345678901234567890123456789012\n",
            Format::Yaml,
        );
        assert_eq!(e.code(), "inexact_number");
        let e = err("x: [1.5, 0.30000000000000000001]\n", Format::Yaml);
        assert_eq!(e.code(), "inexact_number");
        assert_eq!(pos(&e), (1, 10));
        assert!(
            matches!(&e, ConfigError::InexactNumber { pointer, literal, .. } if pointer == "/x/1" && literal == "0.30000000000000000001")
        );

        let e = err("a = 1\nb = 9007199254740993\n", Format::Toml);
        assert_eq!(e.code(), "inexact_number");
        assert_eq!(pos(&e), (2, 5));
        let e = err("c = 0.300_000_000_000_000_000_01\n", Format::Toml);
        assert_eq!(e.code(), "inexact_number");

        // Exact values in any spelling are kept.
        assert_eq!(
            canon("[9007199254740992, 1E2, 0.10, -0]", Format::Json),
            "[9007199254740992,100,0.1,0]"
        );
        assert_eq!(
            canon(
                "[9007199254740992, 1e2, .5, +1.5, 0o17, 0x1F, 1.]",
                Format::Yaml
            ),
            "[9007199254740992,100,0.5,1.5,15,31,1]"
        );
        assert_eq!(
            canon("a = [1_000, 0x1F, 1e06, +1.5, -0.0]", Format::Toml),
            r#"{"a":[1000,31,1000000,1.5,0]}"#
        );
        // 2^64 is a double, but RFC 8785 writes it 18446744073709552000.
        assert_eq!(
            err("a: 18446744073709551616\n", Format::Yaml).code(),
            "inexact_number"
        );
        assert_eq!(canon("a: 1e300\n", Format::Yaml), r#"{"a":1e+300}"#);
    }

    #[test]
    fn nan_and_infinity_refused() {
        for doc in ["a: .nan\n", "a: .inf\n", "a: -.Inf\n", "a: !!float .NaN\n"] {
            let e = err(doc, Format::Yaml);
            assert_eq!(e.code(), "not_finite", "{doc}");
            assert_eq!(pos(&e), (1, 4), "{doc}");
        }
        for doc in ["a = nan\n", "a = +inf\n", "a = -inf\n"] {
            let e = err(doc, Format::Toml);
            assert_eq!(e.code(), "not_finite", "{doc}");
            assert_eq!(pos(&e), (1, 5), "{doc}");
        }
    }

    #[test]
    fn toml_datetimes_become_rfc3339_text() {
        let v = canon(
            "a = 1979-05-27T07:32:00Z\nb = 1979-05-27 07:32:00.5-07:00\nc = 1979-05-27\nd = 07:32:00\n",
            Format::Toml,
        );
        assert_eq!(
            v,
            r#"{"a":"1979-05-27T07:32:00Z","b":"1979-05-27T07:32:00.5-07:00","c":"1979-05-27","d":"07:32:00"}"#
        );
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(parse(deep(64).as_bytes(), Format::Json).is_ok());
        let e = err(&deep(65), Format::Json);
        assert_eq!(e.code(), "too_deep");
        assert_eq!(pos(&e), (1, 65));
        assert_eq!(err(&deep(100_000), Format::Json).code(), "too_deep");
        assert!(parse(deep(64).as_bytes(), Format::Yaml).is_ok());
        assert_eq!(err(&deep(65), Format::Yaml).code(), "too_deep");
        assert_eq!(err(&deep(100_000), Format::Yaml).code(), "too_deep");
        let t = |n: usize| format!("a = {}", deep(n));
        assert!(parse(t(63).as_bytes(), Format::Toml).is_ok());
        assert_eq!(err(&t(64), Format::Toml).code(), "too_deep");
        assert!(parse(t(100_000).as_bytes(), Format::Toml).is_err());
    }

    #[test]
    fn yaml_billion_laughs_fails_fast() {
        let mut doc = String::from(
            "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
        );
        let names = ["a", "b", "c", "d", "e", "f", "g", "h", "i"];
        for w in names.windows(2) {
            let refs = vec![format!("*{}", w[0]); 9].join(",");
            doc.push_str(&format!("{}: &{} [{refs}]\n", w[1], w[1]));
        }
        let start = std::time::Instant::now();
        let e = err(&doc, Format::Yaml);
        assert_eq!(e.code(), "alias_expansion");
        assert!(start.elapsed() < std::time::Duration::from_secs(10));
        // Ordinary anchors are fine.
        assert_eq!(
            canon("base: &b {x: 1}\nuse: *b\n", Format::Yaml),
            r#"{"base":{"x":1},"use":{"x":1}}"#
        );
    }

    #[test]
    fn values_are_bounded_in_every_format() {
        let n = MAX_VALUES; // with the top-level array: one too many
        let json = format!("[{}]", vec!["0"; n].join(","));
        assert_eq!(err(&json, Format::Json).code(), "too_many_values");
        let yaml = format!("[{}]", vec!["0"; n].join(","));
        assert_eq!(err(&yaml, Format::Yaml).code(), "too_many_values");
        let toml = format!("a = [{}]", vec!["0"; n].join(","));
        assert_eq!(err(&toml, Format::Toml).code(), "too_many_values");
        let toml = format!("a = [{}]", vec!["0"; 3 * n].join(","));
        assert_eq!(err(&toml, Format::Toml).code(), "too_many_values");
        let fits = format!("[{}]", vec!["0"; n - 1].join(","));
        assert!(parse(fits.as_bytes(), Format::Json).is_ok());
        assert!(parse(fits.as_bytes(), Format::Yaml).is_ok());
        // Brackets in strings and comments do not count.
        let quoted = format!(
            "a = \"{0}\"\nb = '{0}'\nc = \"\"\"{0}\"\"\"\n# {0}\n",
            ",".repeat(2 * n)
        );
        assert!(toml_values_bound(&quoted) < 10);
        assert!(parse(quoted.as_bytes(), Format::Toml).is_ok());
    }

    #[test]
    fn too_large_refused() {
        let big = vec![b' '; MAX_INPUT + 1];
        assert_eq!(parse(&big, Format::Json).unwrap_err().code(), "too_large");
    }

    #[test]
    fn canonical_refuses_what_parse_never_returns() {
        assert!(canonical(&json!(9007199254740993u64)).is_err());
        assert_eq!(
            canonical(&json!({"b": 1, "a": [true]})).unwrap(),
            br#"{"a":[true],"b":1}"#
        );
    }
}
