//! One record: a line of a log (docs/FORMAT.md §2).
//!
//! A record line is the RFC 8785 canonical serialization of
//! `{"body":…,"kind":…,"origin":…,"prev":…,"seq":…,"ts":…,"v":1}` with no
//! other members. [`parse_line`] validates canonical form and the schema in
//! one pass over the raw bytes, without allocating; [`encode`] builds a line
//! that `parse_line` accepts.

use super::error::{ChainError, RecordProblem};
use crate::merkle::Hash;
use crate::swar;
use sha2::{Digest, Sha256};
use std::ops::Range;

/// The record format version written in `v`.
pub const FORMAT_VERSION: u64 = 1;
/// Longest record line in bytes, not counting its newline.
pub const MAX_LINE_LEN: usize = 1 << 20;
/// Deepest JSON nesting allowed in a line (the record object is level 1).
pub const MAX_DEPTH: u32 = 64;
/// Largest `seq`: 2^53 - 1, the largest integer an RFC 8785 number holds exactly.
pub const MAX_SEQ: u64 = (1 << 53) - 1;
/// Domain separator for the genesis `prev` of a log's first record.
pub const GENESIS_DOMAIN: &[u8] = b"vouch/chain/v1/genesis\n";
/// Kind of a checkpoint record (§4).
pub const KIND_CHECKPOINT: &str = "checkpoint";
/// Kind of a key rotation record (§6).
pub const KIND_KEY_ROTATION: &str = "key_rotation";
/// Kind of an anchor record (§9), written by `vouch anchor`.
pub const KIND_ANCHOR: &str = "anchor";
/// Kind of a stamp record (§16.5), written by `vouch stamp --log`.
pub const KIND_STAMP: &str = "stamp";

/// Kinds vouch gives a meaning to (docs/FORMAT.md §2.1). Only the command
/// that owns a kind writes it (`checkpoint`, `rotate`, `anchor`, and the
/// stamp, drift and MCP tool commands to come); `vouch append` and the
/// public append API refuse them, so no one can plant a body that a
/// verifier would later read as a checkpoint, rotation or anchor.
pub const RESERVED_KINDS: &[&str] = &[
    KIND_CHECKPOINT,
    KIND_KEY_ROTATION,
    KIND_ANCHOR,
    KIND_STAMP,
    "drift_snapshot",
    "drift_accept",
    "drift_check",
    "tool_call",
    "tool_vet",
    "tool_pin",
    "tool_result",
    "mcp_session",
];

/// True when only vouch's own commands may write records of `kind`.
pub fn is_reserved_kind(kind: &str) -> bool {
    RESERVED_KINDS.contains(&kind)
}

/// Parses a record body submitted as JSON text, refusing what could not be
/// written back exactly ([`crate::jcs::check_exact`]: duplicate member
/// names, numbers RFC 8785 would write as another value) and nesting
/// deeper than a body may be (the record object is level 1).
pub fn parse_body(text: &[u8]) -> Result<serde_json::Value, crate::jcs::InexactJson> {
    crate::jcs::check_exact(text, MAX_DEPTH - 1)?;
    serde_json::from_slice(text).map_err(|e| crate::jcs::InexactJson::Syntax {
        // Unreachable after check_exact; reported at the end if it happens.
        offset: if e.is_eof() { text.len() } else { 0 },
    })
}

/// The member names of a record, in RFC 8785 order.
const FIELDS: [&[u8]; 7] = [b"body", b"kind", b"origin", b"prev", b"seq", b"ts", b"v"];

/// The `prev` of a log's first record: SHA-256(GENESIS_DOMAIN || origin).
pub fn genesis_prev(origin: &str) -> Hash {
    let mut h = Sha256::new();
    h.update(GENESIS_DOMAIN);
    h.update(origin.as_bytes());
    h.finalize().into()
}

/// A validated record line, borrowing the line's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordView<'a> {
    pub seq: u64,
    pub prev: Hash,
    /// The origin, as it appears between the quotes (it never needs escapes).
    pub origin: &'a [u8],
    /// The kind, as it appears between the quotes.
    pub kind: &'a [u8],
    /// The timestamp, as it appears between the quotes.
    pub ts: &'a [u8],
    /// The body's canonical JSON text.
    pub body: &'a [u8],
}

impl RecordView<'_> {
    /// The origin as text (always ASCII by construction).
    pub fn origin_str(&self) -> &str {
        std::str::from_utf8(self.origin).unwrap_or("")
    }
    /// The kind as text (always ASCII by construction).
    pub fn kind_str(&self) -> &str {
        std::str::from_utf8(self.kind).unwrap_or("")
    }
}

/// Validates one line (without its newline) as a record: length, UTF-8,
/// RFC 8785 canonical form, nesting depth, and the record schema. Does not
/// check links, sequence or signatures; that is the verifier's job.
///
/// The answer is exactly [`parse_line_reference`]'s: a line the fast path
/// ([`parse_line_fast`]) accepts is returned from it, any other line is
/// judged, and its reason named, by the reference.
#[inline]
pub fn parse_line(line: &[u8]) -> Result<RecordView<'_>, ChainError> {
    match parse_line_fast(line) {
        Some(view) => Ok(view),
        None => parse_line_reference(line),
    }
}

/// The verifier's hot path: a valid record in one pass, `None` for anything
/// else (no reason; [`parse_line`] asks [`parse_line_reference`] for it).
///
/// A canonical record has exactly one layout, so the seven member names
/// and the punctuation between them are matched as literal bytes; the
/// body goes through the accept-only canonical-JSON scanner
/// ([`crate::jcs::is_canonical_fast`]'s engine); `kind`, `origin`, `prev`
/// and `ts` are read up to their closing quote and must pass the same
/// checks as in the reference, whose character sets (no `"`, `\`, control
/// or non-ASCII byte) make the quote the true end of a canonical string.
/// Accepts exactly the lines the reference accepts, with the same view
/// (checked by `fuzz/props.rs`, `record_fast`, and the unit tests).
#[inline]
pub fn parse_line_fast(line: &[u8]) -> Option<RecordView<'_>> {
    const BODY: &[u8] = b"{\"body\":";
    if line.len() > MAX_LINE_LEN || !line.starts_with(BODY) {
        return None;
    }
    let body_end = crate::jcs::fast::value_end(line, BODY.len(), 1, MAX_DEPTH)?;
    let rest = line[body_end..].strip_prefix(b",\"kind\":\"")?;
    let (kind, rest) = until_quote(rest)?;
    let rest = rest.strip_prefix(b",\"origin\":\"")?;
    let (origin, rest) = until_quote(rest)?;
    let rest = rest.strip_prefix(b",\"prev\":\"")?;
    let (prev, rest) = rest.split_at_checked(64)?;
    let rest = rest.strip_prefix(b"\",\"seq\":")?;
    let digits = rest.iter().position(|c| !c.is_ascii_digit())?;
    let (seq, rest) = rest.split_at(digits);
    let rest = rest.strip_prefix(b",\"ts\":\"")?;
    let (ts, rest) = until_quote(rest)?;
    if rest != b",\"v\":1}"
        || !is_valid_kind(kind)
        || !is_valid_origin(origin)
        || !crate::time::is_rfc3339_utc(ts)
    {
        return None;
    }
    Some(RecordView {
        seq: parse_seq(seq)?,
        prev: crate::hex::decode_lower::<32>(prev)?,
        origin,
        kind,
        ts,
        body: &line[BODY.len()..body_end],
    })
}

/// The bytes before the first `"` of `s`, and those after it. The strings
/// searched are short (a kind, an origin, a timestamp): eight bytes at a
/// time in a 64-bit word, where memchr's setup would cost more than the
/// search.
#[inline(always)]
fn until_quote(s: &[u8]) -> Option<(&[u8], &[u8])> {
    let mut i = 0;
    while let Some(word) = s.get(i..).and_then(|t| t.first_chunk::<8>()) {
        let found = swar::eq_bytes(u64::from_le_bytes(*word), b'"');
        if found != 0 {
            // The lowest flag is exact (a borrow only runs upward).
            let q = i + (found.trailing_zeros() / 8) as usize;
            return Some((&s[..q], &s[q + 1..]));
        }
        i += 8;
    }
    let q = i + s[i..].iter().position(|&c| c == b'"')?;
    Some((&s[..q], &s[q + 1..]))
}

/// The reference implementation of [`parse_line`], and its test oracle:
/// [`crate::jcs::validate`] over the whole line, the members it reports
/// checked one by one. Simple on purpose; it names the reason for every
/// line the fast path refuses.
pub fn parse_line_reference(line: &[u8]) -> Result<RecordView<'_>, ChainError> {
    if line.len() > MAX_LINE_LEN {
        return Err(ChainError::LineTooLong { max: MAX_LINE_LEN });
    }
    let mut spans: [Range<usize>; 7] = Default::default();
    let mut count = 0usize;
    let mut fields_ok = true;
    crate::jcs::validate(line, MAX_DEPTH, |key, range| {
        if count < FIELDS.len() && key == FIELDS[count] {
            spans[count] = range;
        } else {
            fields_ok = false;
        }
        count += 1;
    })?;
    if !fields_ok || count != FIELDS.len() || line.first() != Some(&b'{') {
        return bad(RecordProblem::Fields);
    }
    let [body, kind, origin, prev, seq, ts, v] = spans;
    if &line[v] != b"1" {
        return bad(RecordProblem::Version);
    }
    let seq = parse_seq(&line[seq]).ok_or(ChainError::BadRecord {
        problem: RecordProblem::Seq,
    })?;
    let prev = string_contents(line, prev)
        .and_then(crate::hex::decode_lower::<32>)
        .ok_or(ChainError::BadRecord {
            problem: RecordProblem::Prev,
        })?;
    let origin = string_contents(line, origin)
        .filter(|o| is_valid_origin(o))
        .ok_or(ChainError::BadRecord {
            problem: RecordProblem::Origin,
        })?;
    let kind = string_contents(line, kind)
        .filter(|k| is_valid_kind(k))
        .ok_or(ChainError::BadRecord {
            problem: RecordProblem::Kind,
        })?;
    let ts = string_contents(line, ts)
        .filter(|t| crate::time::is_rfc3339_utc(t))
        .ok_or(ChainError::BadRecord {
            problem: RecordProblem::Timestamp,
        })?;
    Ok(RecordView {
        seq,
        prev,
        origin,
        kind,
        ts,
        body: &line[body],
    })
}

fn bad<T>(problem: RecordProblem) -> Result<T, ChainError> {
    Err(ChainError::BadRecord { problem })
}

/// The bytes between the quotes of a JSON string value, or `None` when the
/// value is not a string.
fn string_contents(line: &[u8], span: Range<usize>) -> Option<&[u8]> {
    let raw = &line[span];
    if raw.len() >= 2 && raw[0] == b'"' && raw[raw.len() - 1] == b'"' {
        Some(&raw[1..raw.len() - 1])
    } else {
        None
    }
}

/// A canonical non-negative integer no larger than [`MAX_SEQ`].
fn parse_seq(text: &[u8]) -> Option<u64> {
    if text.is_empty() || text.len() > 16 || (text.len() > 1 && text[0] == b'0') {
        return None;
    }
    let mut v: u64 = 0;
    for &c in text {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v * 10 + u64::from(c - b'0');
    }
    (v <= MAX_SEQ).then_some(v)
}

/// Origin: 1..=255 bytes of printable ASCII, excluding `+` (it separates key
/// fields in signed-note key encodings), `"` and `\` (so it never needs
/// escaping), and space.
pub fn is_valid_origin(origin: &[u8]) -> bool {
    if !(1..=255).contains(&origin.len()) {
        return false;
    }
    // Eight bytes at a time (every record's origin is checked), the rest
    // one by one.
    let (words, rest) = origin.as_chunks::<8>();
    let bad = words.iter().fold(0, |bad, word| {
        bad | origin_word_bad(u64::from_le_bytes(*word))
    });
    bad == 0 && rest.iter().all(|&c| is_origin_byte(c))
}

fn is_origin_byte(c: u8) -> bool {
    (0x21..=0x7e).contains(&c) && c != b'+' && c != b'"' && c != b'\\'
}

/// Non-zero exactly when some byte of `x` is not [`is_origin_byte`]: not
/// ASCII (which makes the range test exact for the rest), outside
/// `0x21..=0x7e`, or `+`, `"`, `\`.
#[inline(always)]
fn origin_word_bad(x: u64) -> u64 {
    let in_range = swar::in_range_ascii(x, 0x21, 0x7e);
    (x & swar::HI)
        | (!in_range & swar::HI)
        | swar::eq_bytes(x, b'+')
        | swar::eq_bytes(x, b'"')
        | swar::eq_bytes(x, b'\\')
}

/// Kind: `[a-z0-9][a-z0-9_.:/-]{0,63}`.
pub fn is_valid_kind(kind: &[u8]) -> bool {
    match kind.split_first() {
        Some((first, rest)) => {
            kind.len() <= 64
                && (first.is_ascii_lowercase() || first.is_ascii_digit())
                && rest
                    .iter()
                    .all(|&c| c.is_ascii_lowercase() || c.is_ascii_digit() || b"_.:/-".contains(&c))
        }
        None => false,
    }
}

/// Why a record could not be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EncodeError {
    #[error("invalid origin {0:?}: use 1-255 printable ASCII characters without + \" \\ or spaces")]
    Origin(String),
    #[error("invalid kind {0:?}: use [a-z0-9][a-z0-9_.:/-]{{0,63}}")]
    Kind(String),
    #[error("seq {0} exceeds 2^53-1")]
    Seq(u64),
    #[error("body cannot be canonicalized: {0}")]
    Body(#[from] crate::jcs::CanonicalizeError),
    #[error("record would be {len} bytes, over the {max}-byte line limit")]
    TooLong { len: usize, max: usize },
    #[error("record does not validate: {0}")]
    Invalid(ChainError),
}

/// The fields of a record to be written.
pub struct NewRecord<'a> {
    pub origin: &'a str,
    pub seq: u64,
    pub prev: Hash,
    pub ts: &'a str,
    pub kind: &'a str,
    pub body: &'a serde_json::Value,
}

/// Serializes a record as its canonical line (without newline), appending it
/// to `out`, and checks the result with [`parse_line`] so that vouch never
/// writes a line its own verifier would reject.
pub fn encode(rec: &NewRecord<'_>, out: &mut Vec<u8>) -> Result<(), EncodeError> {
    if !is_valid_origin(rec.origin.as_bytes()) {
        return Err(EncodeError::Origin(rec.origin.to_owned()));
    }
    if !is_valid_kind(rec.kind.as_bytes()) {
        return Err(EncodeError::Kind(rec.kind.to_owned()));
    }
    if rec.seq > MAX_SEQ {
        return Err(EncodeError::Seq(rec.seq));
    }
    let start = out.len();
    out.extend_from_slice(b"{\"body\":");
    crate::jcs::write_canonical(rec.body, out)?;
    out.extend_from_slice(b",\"kind\":\"");
    out.extend_from_slice(rec.kind.as_bytes());
    out.extend_from_slice(b"\",\"origin\":\"");
    out.extend_from_slice(rec.origin.as_bytes());
    out.extend_from_slice(b"\",\"prev\":\"");
    out.extend_from_slice(crate::hex::encode(&rec.prev).as_bytes());
    out.extend_from_slice(b"\",\"seq\":");
    out.extend_from_slice(rec.seq.to_string().as_bytes());
    out.extend_from_slice(b",\"ts\":\"");
    out.extend_from_slice(rec.ts.as_bytes());
    out.extend_from_slice(b"\",\"v\":1}");
    let line = &out[start..];
    if line.len() > MAX_LINE_LEN {
        let len = line.len();
        out.truncate(start);
        return Err(EncodeError::TooLong {
            len,
            max: MAX_LINE_LEN,
        });
    }
    if let Err(e) = parse_line(line) {
        out.truncate(start);
        return Err(EncodeError::Invalid(e));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The word-at-a-time origin check and quote search against the plain
    /// byte rules: every byte value at every position of origins of 1 to 20
    /// bytes (words, tails, both).
    #[test]
    fn origin_and_quote_search_agree_with_the_byte_rules() {
        for len in 1..=20usize {
            for at in 0..len {
                for b in 0..=255u8 {
                    let mut origin = vec![b'a'; len];
                    origin[at] = b;
                    assert_eq!(
                        is_valid_origin(&origin),
                        origin.iter().all(|&c| is_origin_byte(c)),
                        "byte {b:#04x} at {at} of {len}"
                    );
                    let want = origin.iter().position(|&c| c == b'"');
                    let got = until_quote(&origin).map(|(before, _)| before.len());
                    assert_eq!(got, want, "byte {b:#04x} at {at} of {len}");
                    // A second quote after the first does not move it.
                    origin.push(b'"');
                    let want = origin.iter().position(|&c| c == b'"');
                    assert_eq!(until_quote(&origin).map(|(q, _)| q.len()), want);
                }
            }
        }
        assert!(!is_valid_origin(b""));
        assert!(is_valid_origin(&[b'x'; 255]));
        assert!(!is_valid_origin(&[b'x'; 256]));
    }

    fn line(body: serde_json::Value) -> Vec<u8> {
        let mut out = Vec::new();
        encode(
            &NewRecord {
                origin: "example.com/log",
                seq: 7,
                prev: [0xab; 32],
                ts: "2026-11-29T15:58:05.123Z",
                kind: "note",
                body: &body,
            },
            &mut out,
        )
        .unwrap();
        out
    }

    #[test]
    fn encodes_the_documented_layout() {
        let l = line(json!({"msg": "hi", "a": [1, 2.5]}));
        let expected = format!(
            "{{\"body\":{{\"a\":[1,2.5],\"msg\":\"hi\"}},\"kind\":\"note\",\"origin\":\"example.com/log\",\"prev\":\"{}\",\"seq\":7,\"ts\":\"2026-11-29T15:58:05.123Z\",\"v\":1}}",
            "ab".repeat(32)
        );
        assert_eq!(String::from_utf8(l.clone()).unwrap(), expected);
        let r = parse_line(&l).unwrap();
        assert_eq!(r.seq, 7);
        assert_eq!(r.prev, [0xab; 32]);
        assert_eq!(r.origin, b"example.com/log");
        assert_eq!(r.kind, b"note");
        assert_eq!(r.body, br#"{"a":[1,2.5],"msg":"hi"}"#);
    }

    #[test]
    fn rejects_schema_violations() {
        let good = String::from_utf8(line(json!(null))).unwrap();
        let cases: Vec<(String, RecordProblem)> = vec![
            (good.replace("\"v\":1", "\"v\":2"), RecordProblem::Version),
            (good.replace("\"seq\":7", "\"seq\":-7"), RecordProblem::Seq),
            (good.replace("\"seq\":7", "\"seq\":7.5"), RecordProblem::Seq),
            (
                good.replace("\"seq\":7", "\"seq\":\"7\""),
                RecordProblem::Seq,
            ),
            (
                good.replace("\"seq\":7", "\"seq\":9007199254740992"),
                RecordProblem::Seq,
            ),
            (good.replace("abab", "ABAB"), RecordProblem::Prev),
            (
                good.replace("\"kind\":\"note\"", "\"kind\":\"No te\""),
                RecordProblem::Kind,
            ),
            (
                good.replace("\"kind\":\"note\"", "\"kind\":\"\""),
                RecordProblem::Kind,
            ),
            (
                good.replace("example.com/log", "exa+mple"),
                RecordProblem::Origin,
            ),
            (
                good.replace("2026-11-29T15", "2026-11-29 15"),
                RecordProblem::Timestamp,
            ),
            (good.replace(",\"v\":1}", "}"), RecordProblem::Fields),
            (
                good.replace(",\"v\":1}", ",\"v\":1,\"w\":1}"),
                RecordProblem::Fields,
            ),
            ("[1,2]".to_owned(), RecordProblem::Fields),
        ];
        for (text, problem) in cases {
            assert_eq!(
                parse_line(text.as_bytes()).unwrap_err(),
                ChainError::BadRecord { problem },
                "{text}"
            );
        }
    }

    #[test]
    fn rejects_non_canonical_and_oversized() {
        let good = String::from_utf8(line(json!({"b": 1, "a": 2}))).unwrap();
        let spaced = good.replacen("{\"body\":", "{ \"body\":", 1);
        assert_eq!(
            parse_line(spaced.as_bytes()).unwrap_err().code(),
            "not_canonical"
        );
        let huge = vec![b'x'; MAX_LINE_LEN + 1];
        assert_eq!(parse_line(&huge).unwrap_err().code(), "line_too_long");
        let deep = format!("{}{}", "[".repeat(100), "]".repeat(100));
        assert_eq!(parse_line(deep.as_bytes()).unwrap_err().code(), "too_deep");
        assert_eq!(
            parse_line(b"{\"body\":\"\xff\"}").unwrap_err().code(),
            "bad_utf8"
        );
    }

    #[test]
    fn reserved_kinds_are_listed_once_and_valid() {
        for k in RESERVED_KINDS {
            assert!(is_valid_kind(k.as_bytes()), "{k}");
            assert!(is_reserved_kind(k));
        }
        assert!(is_reserved_kind(crate::anchor::record::KIND_ANCHOR));
        assert!(!is_reserved_kind("event"));
        assert!(!is_reserved_kind("checkpoints"));
    }

    #[test]
    fn parse_body_keeps_what_it_accepts_and_refuses_the_rest() {
        assert_eq!(parse_body(b" {\"a\": 1.0} ").unwrap(), json!({"a": 1.0}));
        assert_eq!(
            parse_body(br#"{"approved":false,"approved":true}"#)
                .unwrap_err()
                .code(),
            "duplicate_key"
        );
        assert_eq!(
            parse_body(b"123456789012345678901234567890")
                .unwrap_err()
                .code(),
            "inexact_number"
        );
        let deep = format!("{}{}", "[".repeat(64), "]".repeat(64));
        assert_eq!(parse_body(deep.as_bytes()).unwrap_err().code(), "too_deep");
        let ok = format!("{}{}", "[".repeat(63), "]".repeat(63));
        assert!(parse_body(ok.as_bytes()).is_ok());
    }

    /// The fast path against the reference: the same verdict, view and
    /// reason for valid lines and for byte-level mutations of them, every
    /// schema violation above, and lines cut at every byte.
    #[test]
    fn fast_path_agrees_with_the_reference() {
        fn agree(l: &[u8]) {
            let reference = parse_line_reference(l);
            assert_eq!(parse_line(l), reference, "{}", String::from_utf8_lossy(l));
            assert_eq!(
                parse_line_fast(l).is_some(),
                reference.is_ok(),
                "{}",
                String::from_utf8_lossy(l)
            );
        }
        let good =
            line(json!({"msg": "lorem ipsum \u{e9} \"q\" \\ \n", "n": [1, 2.5, -3e-7], "x": null}));
        let mut lines = vec![
            good.clone(),
            line(json!(null)),
            line(json!("s")),
            line(json!([])),
            line(json!({})),
        ];
        let text = String::from_utf8(good.clone()).unwrap();
        for (from, to) in [
            ("\"seq\":7", "\"seq\":07"),
            ("\"seq\":7", "\"seq\":9007199254740991"),
            ("\"seq\":7", "\"seq\":9007199254740992"),
            ("\"seq\":7", "\"seq\":1e1"),
            ("\"seq\":7", "\"seq\":"),
            ("\"v\":1}", "\"v\":1} "),
            ("\"v\":1}", "\"v\":1,\"w\":0}"),
            ("\"kind\":\"note\"", "\"kind\":\"no\\\"te\""),
            ("\"kind\":\"note\"", "\"kind\":\"not\\u0065\""),
            ("example.com/log", "example.com/l\\/og"),
            ("example.com/log", "example.com/l\\\"og"),
            ("2026-11-29T15:58:05.123Z", "2026-11-29T15:58:05.123Z\\n"),
            ("2026-11-29T15:58:05.123Z", "2026-02-30T15:58:05Z"),
            ("abab", "ABAB"),
            ("{\"body\":", "{\"body\" :"),
        ] {
            lines.push(text.replacen(from, to, 1).into_bytes());
        }
        for l in &lines {
            agree(l);
            for cut in 0..l.len() {
                agree(&l[..cut]);
            }
            for at in 0..l.len() {
                for b in [b'"', b'\\', b'0', b'a', b'}', 0x00, 0xc3, 0xff] {
                    let mut m = l.clone();
                    m[at] = b;
                    agree(&m);
                }
            }
        }
    }

    #[test]
    fn genesis_depends_on_origin() {
        assert_ne!(genesis_prev("a"), genesis_prev("b"));
        assert_ne!(genesis_prev("a"), [0u8; 32]);
    }
}
