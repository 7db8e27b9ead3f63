//! RFC 8785 JSON Canonicalization Scheme (JCS): a one-pass validator and a writer.
//!
//! Every vouch log line must be the RFC 8785 serialization of its value. The
//! verifier never re-serializes a line to hash it; it calls [`validate`], which
//! checks in one pass over the raw bytes that they are *exactly* what RFC 8785
//! would produce, and hands back the top-level members of the record object.
//!
//! # What [`validate`] verifies
//!
//! * The bytes are one JSON text (RFC 8259) with no byte before or after the
//!   value: no BOM, no leading/trailing whitespace, no trailing newline.
//! * No insignificant whitespace anywhere (RFC 8785 §3.2.1).
//! * Strings (RFC 8785 §3.2.2.2): valid UTF-8 (no overlong forms, no encoded
//!   surrogates, no truncated sequences); `"` and `\` written as `\"` and `\\`;
//!   U+0008, U+0009, U+000A, U+000C, U+000D written as `\b \t \n \f \r`; the
//!   other C0 controls written as `\u00xx` with lowercase hex; every other
//!   character written literally (so `\/`, `\u0041`, `\u2028`, escaped
//!   surrogate pairs and uppercase hex are all rejected).
//! * Numbers (RFC 8785 §3.2.2.3): the text is exactly what ECMAScript
//!   `Number.prototype.toString` produces for the IEEE-754 double the text
//!   denotes, so `-0`, `1.0`, `1e2`, `1E+21`, `0.10` are rejected, as are
//!   numbers that do not round-trip (`9007199254740993`) or overflow.
//! * Literals `true`, `false`, `null` (RFC 8785 §3.2.2.1).
//! * Object members sorted by the UTF-16 code units of their *decoded* names,
//!   with no duplicate names, at every depth (RFC 8785 §3.2.3).
//! * Array and object nesting no deeper than `max_depth` (the top-level
//!   container is depth 1).
//!
//! # What it does not verify
//!
//! * Anything about the meaning of the value (field names, types): callers
//!   inspect the members handed to the `on_member` callback.
//! * Unicode normalization: RFC 8785 §3.2.2.2 deliberately leaves strings
//!   un-normalized, and so does this module.
//! * Unpaired surrogates cannot occur in an accepted input: literal ones are
//!   invalid UTF-8 and escaped ones are non-canonical escapes.
//!
//! # Bounded work
//!
//! Validation is linear in the input length, allocates nothing, and recurses
//! at most `max_depth` levels (a small stack frame each); keep `max_depth`
//! modest ([`DEFAULT_MAX_DEPTH`]), not in the tens of thousands. Errors are
//! reported at the first offending byte; when the input breaks several rules,
//! the first one met in a left-to-right scan wins.
//!
//! # The verifier's fast path
//!
//! [`is_canonical_fast`] (and the record parser built on the same scanner,
//! `chain::record::parse_line_fast`) answers only "accepted or not", with
//! strings skipped 32 bytes at a time. It must accept exactly what
//! [`validate`] accepts; [`validate`] stays the reference, the test
//! oracle, and the source of every error reason and offset (callers ask it
//! whenever the fast path says no). Unit tests and the `record_fast` fuzz
//! target check the two agree.
//!
//! [`write_canonical`] produces RFC 8785 output from a [`serde_json::Value`] and
//! refuses (rather than rounds) integers whose RFC 8785 form would denote
//! another value. [`check_exact`] checks a submitted JSON text (any
//! formatting) before it is parsed: no duplicate member names, no number
//! that RFC 8785 would write as another value.

mod exact;
pub(crate) mod fast;
mod number;
mod string;
mod validate;
mod write;

pub use exact::{
    InexactJson, JsonPath, PathStep, check_exact, check_exact_counted, check_unique_keys,
    check_unique_keys_counted, check_value_exact,
};
pub use fast::is_canonical_fast;
pub use validate::{is_canonical, validate};
pub use write::{CanonicalizeError, to_canonical_vec, write_canonical};

/// Default nesting limit for [`validate`], [`is_canonical`] and
/// [`write_canonical`]: arrays and objects nested more than this deep are
/// rejected.
pub const DEFAULT_MAX_DEPTH: u32 = 64;

/// Why a byte string is not the RFC 8785 serialization of a JSON value.
///
/// Every variant carries the byte offset (into the validated input) where the
/// problem was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum JcsError {
    /// A string contains bytes that are not well-formed UTF-8 (RFC 3629):
    /// overlong forms, encoded surrogates, truncated or stray sequences.
    #[error("invalid UTF-8 at byte {offset}")]
    BadUtf8 {
        /// Offset of the first byte of the invalid sequence.
        offset: usize,
    },
    /// The bytes are not JSON at all (RFC 8259 grammar).
    #[error("JSON syntax error at byte {offset}")]
    Syntax {
        /// Offset of the unexpected byte (the input length at end of input).
        offset: usize,
    },
    /// Arrays/objects nest deeper than the limit.
    #[error("nesting deeper than {max} at byte {offset}")]
    TooDeep {
        /// Offset of the `[` or `{` that crossed the limit.
        offset: usize,
        /// The limit that was crossed.
        max: u32,
    },
    /// Valid JSON, but not the RFC 8785 serialization of its value.
    #[error("not canonical JSON at byte {offset}: {why}")]
    NotCanonical {
        /// Offset of the offending token (whitespace byte, member name,
        /// backslash of the escape, first byte of the number).
        offset: usize,
        /// Which RFC 8785 rule is broken.
        why: NonCanonical,
    },
}

impl JcsError {
    /// Byte offset into the input where the problem was found.
    pub fn offset(&self) -> usize {
        match *self {
            JcsError::BadUtf8 { offset }
            | JcsError::Syntax { offset }
            | JcsError::TooDeep { offset, .. }
            | JcsError::NotCanonical { offset, .. } => offset,
        }
    }
}

/// Which RFC 8785 rule a well-formed JSON text breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NonCanonical {
    /// Insignificant whitespace (RFC 8785 §3.2.1), including leading or
    /// trailing whitespace and a trailing newline.
    Whitespace,
    /// Object members not sorted by the UTF-16 code units of their names
    /// (RFC 8785 §3.2.3).
    KeyOrder,
    /// Two adjacent members of one object share a name (RFC 8785 §3.1,
    /// I-JSON). A repeated name that is not adjacent to its twin is reported
    /// as [`NonCanonical::KeyOrder`], since no order can sort such members.
    DuplicateKey,
    /// A string escape RFC 8785 §3.2.2.2 does not produce: `\/`, `\u` for a
    /// character that must be literal or has a short escape, uppercase hex.
    StringEscape,
    /// A number not in ECMAScript `Number.prototype.toString` form
    /// (RFC 8785 §3.2.2.3), including `-0` and values that do not round-trip.
    NumberForm,
}

impl NonCanonical {
    /// Stable snake_case reason code, for JSON reports and docs.
    pub fn code(&self) -> &'static str {
        match self {
            NonCanonical::Whitespace => "whitespace",
            NonCanonical::KeyOrder => "key_order",
            NonCanonical::DuplicateKey => "duplicate_key",
            NonCanonical::StringEscape => "string_escape",
            NonCanonical::NumberForm => "number_form",
        }
    }
}

impl std::fmt::Display for NonCanonical {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            NonCanonical::Whitespace => "insignificant whitespace",
            NonCanonical::KeyOrder => "object members not in UTF-16 order",
            NonCanonical::DuplicateKey => "duplicate object member name",
            NonCanonical::StringEscape => "non-canonical string escape",
            NonCanonical::NumberForm => "number not in ECMAScript form",
        })
    }
}

/// Decodes a raw JSON string body (the bytes between the quotes, still
/// escaped), as handed to the `on_member` callback of [`validate`], into a
/// `String`.
///
/// Accepts every RFC 8259 escape (including non-canonical ones such as `\/`
/// and surrogate pairs); it does not check canonical form. Errors: invalid
/// UTF-8, raw control characters, a bare `"`, a malformed escape or an
/// unpaired surrogate; offsets index `raw`. Allocates: for non-hot paths.
pub fn unescape_str(raw: &[u8]) -> Result<String, JcsError> {
    string::unescape(raw)
}

#[cfg(test)]
mod tests;
