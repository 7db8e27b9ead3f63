//! The end of a log file: reading its last line, and deciding whether
//! bytes after the last newline are a torn record a crashed writer could
//! have left (docs/FORMAT.md §7.1). One rule, used by `repair` (which may
//! remove only such a tail) and by the verifier (which reports it as
//! `torn_tail` rather than `trailing_data`).

use super::record;
use super::source::ReadAt;
use crate::merkle::Hash;

pub(crate) enum LastLine {
    Complete(Vec<u8>),
    /// An incomplete final line of this many bytes.
    Torn(u64),
    TooLong,
}

/// The last line of a file of `len` bytes (which must be > 0).
pub(crate) fn last_line(file: &dyn ReadAt, len: u64) -> std::io::Result<LastLine> {
    let most = len.min(record::MAX_LINE_LEN as u64 + 2);
    // Read backwards in growing windows: a record is usually far shorter
    // than the line limit, and an object is read by the byte.
    let mut want = most.min(FIRST_WINDOW);
    loop {
        let mut buf = vec![0u8; want as usize];
        file.pread_exact(&mut buf, len - want)?;
        if buf.last() != Some(&b'\n') {
            match memchr::memrchr(b'\n', &buf) {
                Some(i) => return Ok(LastLine::Torn((buf.len() - i - 1) as u64)),
                None if want == most => return Ok(LastLine::Torn(buf.len() as u64)),
                None => {}
            }
        } else {
            buf.pop();
            match memchr::memrchr(b'\n', &buf) {
                Some(i) => return Ok(LastLine::Complete(buf[i + 1..].to_vec())),
                None if want == len => return Ok(LastLine::Complete(buf)),
                None if want == most => return Ok(LastLine::TooLong),
                None => {}
            }
        }
        want = (want * 16).min(most);
    }
}

/// The first window [`last_line`] and [`line_at`] read.
const FIRST_WINDOW: u64 = 8 << 10;

/// Why the bytes after a log's last newline are not a record torn by a
/// crashed writer (docs/FORMAT.md §7.1). Offsets count from the start of
/// those bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TailProblem {
    /// Longer than a record line can be.
    TooLong,
    /// Does not begin the way every record line begins (`{"body":`).
    Prefix,
    /// A byte that a record line never holds (NUL, a control character,
    /// a newline: RFC 8785 escapes them all).
    ControlByte { at: u64 },
    /// Not UTF-8, other than a character cut short at the very end.
    BadUtf8 { at: u64 },
    /// The body is not the beginning of an RFC 8785 canonical value.
    Body { at: u64 },
    /// After the body, this member is not what the next record of this log
    /// must hold (kind, origin, prev, seq, ts, v), or bytes follow the end
    /// of the record.
    Envelope { field: &'static str, at: u64 },
}

impl std::fmt::Display for TailProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TailProblem::TooLong => write!(f, "longer than a record line can be"),
            TailProblem::Prefix => write!(f, "it does not begin like a record line"),
            TailProblem::ControlByte { at } => {
                write!(f, "byte {at} is a control byte no record line holds")
            }
            TailProblem::BadUtf8 { at } => write!(f, "invalid UTF-8 at byte {at}"),
            TailProblem::Body { at } => {
                write!(f, "the body is not canonical JSON (byte {at})")
            }
            TailProblem::Envelope { field, at } => write!(
                f,
                "member {field:?} (byte {at}) is not what the next record of this log holds"
            ),
        }
    }
}

impl TailProblem {
    /// Stable snake_case detail code (the error's code is `not_a_torn_record`).
    pub fn code(&self) -> &'static str {
        match self {
            TailProblem::TooLong => "too_long",
            TailProblem::Prefix => "prefix",
            TailProblem::ControlByte { .. } => "control_byte",
            TailProblem::BadUtf8 { .. } => "bad_utf8",
            TailProblem::Body { .. } => "body",
            TailProblem::Envelope { .. } => "envelope",
        }
    }
}

/// What the next record of a log must hold, when the log has a record.
pub(crate) struct NextRecord {
    pub origin: Vec<u8>,
    pub seq: u64,
    pub prev: Hash,
}

const RECORD_PREFIX: &[u8] = b"{\"body\":";

/// Checks that `tail` (the bytes after the last newline, non-empty) is a
/// proper or complete prefix of a record line that a writer of this log
/// could have been writing when it crashed: see docs/FORMAT.md §7.1.
pub(crate) fn check_torn_tail(tail: &[u8], next: Option<&NextRecord>) -> Result<(), TailProblem> {
    if tail.len() > record::MAX_LINE_LEN {
        return Err(TailProblem::TooLong);
    }
    let n = tail.len().min(RECORD_PREFIX.len());
    if tail[..n] != RECORD_PREFIX[..n] {
        return Err(TailProblem::Prefix);
    }
    if let Some(at) = tail.iter().position(|&b| b < 0x20) {
        return Err(TailProblem::ControlByte { at: at as u64 });
    }
    if let Err(e) = std::str::from_utf8(tail)
        && e.error_len().is_some()
    {
        return Err(TailProblem::BadUtf8 {
            at: e.valid_up_to() as u64,
        });
    }
    if tail.len() <= RECORD_PREFIX.len() {
        return Ok(());
    }
    let mut body_end = None;
    let mut first = true;
    let result = crate::jcs::validate(tail, record::MAX_DEPTH, |key, range| {
        if first && key == b"body" {
            body_end = Some(range.end);
        }
        first = false;
    });
    match body_end {
        Some(end) => check_envelope(&tail[end..], end, next),
        None => match result {
            Ok(()) => Err(TailProblem::Body { at: 0 }),
            Err(e) if cut_short(tail, e) => Ok(()),
            Err(e) => Err(TailProblem::Body {
                at: e.offset() as u64,
            }),
        },
    }
}

/// True when validation of a prefix failed only because the text stops
/// early: at the end of input, in a literal or number cut short (a prefix
/// of a canonical number, such as `-0` of `-0.5`, need not be canonical
/// itself), or in a multi-byte character cut short.
fn cut_short(tail: &[u8], e: crate::jcs::JcsError) -> bool {
    use crate::jcs::{JcsError, NonCanonical};
    let rest = &tail[e.offset().min(tail.len())..];
    match e {
        JcsError::Syntax { offset } if offset >= tail.len() => match number_at_end(tail) {
            Some(number) => could_begin_canonical_number(number),
            None => true,
        },
        JcsError::Syntax { .. } => {
            !rest.is_empty()
                && [&b"true"[..], b"false", b"null"]
                    .iter()
                    .any(|w| w.len() > rest.len() && w.starts_with(rest))
        }
        JcsError::NotCanonical {
            why: NonCanonical::NumberForm,
            ..
        } => could_begin_canonical_number(rest),
        JcsError::BadUtf8 { .. } => {
            std::str::from_utf8(rest).is_err_and(|u| u.error_len().is_none())
        }
        _ => false,
    }
}

/// The number the tail stops in, if it stops in one: outside any string,
/// the bytes of a number after the `:`, `,` or `[` that begins a value.
fn number_at_end(tail: &[u8]) -> Option<&[u8]> {
    let mut in_string = false;
    let mut escaped = false;
    for &b in tail {
        if escaped {
            escaped = false;
        } else if in_string && b == b'\\' {
            escaped = true;
        } else if b == b'"' {
            in_string = !in_string;
        }
    }
    if in_string {
        return None;
    }
    let run = tail
        .iter()
        .rev()
        .take_while(|b| b"-+.eE0123456789".contains(b))
        .count();
    let start = tail.len() - run;
    (run > 0 && start > 0 && b":,[".contains(&tail[start - 1])).then(|| &tail[start..])
}

/// True when `text`, which runs to the end of the tail, is the beginning
/// of a number in RFC 8785's form (ECMAScript's `Number.prototype.toString`:
/// `-`, then `0` or a digit 1-9 and digits, then `.` and digits, then,
/// after a single digit 1-9 only, `e`, a sign and digits not starting with
/// 0). `1e5`, `1E+5`, `01`, `12e+21` and `1e+05` begin no canonical
/// number; `1e`, `-0` (of `-0.5`) and `1.` do.
fn could_begin_canonical_number(text: &[u8]) -> bool {
    let digits = |from: usize| {
        from + text[from..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count()
    };
    let mut i = usize::from(text.first() == Some(&b'-'));
    let int_start = i;
    match text.get(i) {
        None => return true,
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => i = digits(i),
        Some(_) => return false,
    }
    // Only a mantissa of one digit 1-9 takes an exponent (`1.5e+21`).
    let one_digit = i == int_start + 1 && text[int_start] != b'0';
    if text.get(i) == Some(&b'.') {
        let fraction = i + 1;
        i = digits(fraction);
        if i == fraction && i < text.len() {
            return false;
        }
    }
    if text.get(i) == Some(&b'e') && one_digit {
        i += 1;
        match text.get(i) {
            None => return true,
            Some(b'+' | b'-') => i += 1,
            Some(_) => return false,
        }
        match text.get(i) {
            None => return true,
            Some(b'1'..=b'9') => i = digits(i),
            Some(_) => return false,
        }
    }
    i == text.len()
}

/// One piece of the record envelope after the body.
enum Piece<'a> {
    /// Exactly these bytes.
    Exact(&'static str, &'a [u8]),
    /// 1..=max bytes of which `ok` holds.
    Class(&'static str, usize, fn(u8) -> bool),
    /// The first of the bytes that follow, when there is one, is one of
    /// which `ok` holds (consumes nothing).
    First(&'static str, fn(u8) -> bool),
    /// A canonical non-negative integer of 1..=16 digits (no leading zero).
    Integer(&'static str),
}

/// Checks the bytes after the body against
/// `,"kind":"K","origin":"O","prev":"P","seq":S,"ts":"T","v":1}`, where O,
/// P and S are those of the next record of this log when it has a record
/// (any well-formed value otherwise); `rest` may stop anywhere.
fn check_envelope(
    rest: &[u8],
    offset: usize,
    next: Option<&NextRecord>,
) -> Result<(), TailProblem> {
    let prev_hex;
    let seq_text;
    let kind_byte: fn(u8) -> bool =
        |b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"_.:/-".contains(&b);
    let origin_byte: fn(u8) -> bool =
        |b| (0x21..=0x7e).contains(&b) && b != b'+' && b != b'"' && b != b'\\';
    let hex_byte: fn(u8) -> bool = |b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b);
    let ts_byte: fn(u8) -> bool = |b| b.is_ascii_digit() || b"-:.TZ".contains(&b);
    let (origin, prev, seq) = match next {
        Some(n) => {
            prev_hex = crate::hex::encode(&n.prev);
            seq_text = n.seq.to_string();
            (
                Piece::Exact("origin", &n.origin),
                Piece::Exact("prev", prev_hex.as_bytes()),
                Piece::Exact("seq", seq_text.as_bytes()),
            )
        }
        None => (
            Piece::Class("origin", 255, origin_byte),
            Piece::Class("prev", 64, hex_byte),
            Piece::Integer("seq"),
        ),
    };
    let pieces = [
        Piece::Exact("kind", b",\"kind\":\""),
        Piece::First("kind", |b| b.is_ascii_lowercase() || b.is_ascii_digit()),
        Piece::Class("kind", 64, kind_byte),
        Piece::Exact("origin", b"\",\"origin\":\""),
        origin,
        Piece::Exact("prev", b"\",\"prev\":\""),
        prev,
        Piece::Exact("seq", b"\",\"seq\":"),
        seq,
        Piece::Exact("ts", b",\"ts\":\""),
        Piece::Class("ts", 35, ts_byte),
        Piece::Exact("v", b"\",\"v\":1}"),
    ];
    let mut i = 0usize;
    for piece in pieces {
        let at = (offset + i) as u64;
        let left = &rest[i..];
        match piece {
            Piece::Exact(field, want) => {
                let n = left.len().min(want.len());
                if left[..n] != want[..n] {
                    return Err(TailProblem::Envelope { field, at });
                }
                i += n;
            }
            Piece::Class(field, max, ok) => {
                let n = left.iter().take_while(|&&b| ok(b)).count();
                if n > max || (n == 0 && !left.is_empty()) {
                    return Err(TailProblem::Envelope { field, at });
                }
                i += n;
            }
            Piece::First(field, ok) => {
                if left.first().is_some_and(|&b| !ok(b)) {
                    return Err(TailProblem::Envelope { field, at });
                }
            }
            Piece::Integer(field) => {
                let n = left.iter().take_while(|b| b.is_ascii_digit()).count();
                if n > 16 || (n == 0 && !left.is_empty()) || (n > 1 && left[0] == b'0') {
                    return Err(TailProblem::Envelope { field, at });
                }
                i += n;
            }
        }
        if i == rest.len() {
            return Ok(());
        }
    }
    Err(TailProblem::Envelope {
        field: "end",
        at: (offset + i) as u64,
    })
}

/// The complete line starting at byte `offset` of a file of `len` bytes
/// (at most the line limit), without its newline.
pub(crate) fn line_at(file: &dyn ReadAt, offset: u64, len: u64) -> Option<Vec<u8>> {
    if offset >= len {
        return None;
    }
    let most = (len - offset).min(record::MAX_LINE_LEN as u64 + 1);
    let mut want = most.min(FIRST_WINDOW);
    loop {
        let mut buf = vec![0u8; want as usize];
        file.pread_exact(&mut buf, offset).ok()?;
        if let Some(end) = memchr::memchr(b'\n', &buf) {
            buf.truncate(end);
            return Some(buf);
        }
        if want == most {
            return None;
        }
        want = (want * 16).min(most);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by a second attack: a kind beginning with punctuation and,
    /// with no record before the tail, a seq with a leading zero passed.
    #[test]
    fn the_envelope_holds_a_valid_kind_and_a_canonical_seq() {
        let prev = "0".repeat(64);
        let envelope = |kind: &str, seq: &str| {
            format!(
                "{{\"body\":1,\"kind\":\"{kind}\",\"origin\":\"a\",\"prev\":\"{prev}\",\"seq\":{seq}"
            )
        };
        for (kind, seq) in [
            ("a", "0"),
            ("a", "10"),
            ("0x", "7"),
            ("event", "1234567890123456"),
        ] {
            assert_eq!(
                check_torn_tail(envelope(kind, seq).as_bytes(), None),
                Ok(()),
                "{kind} {seq}"
            );
        }
        for (kind, seq) in [
            ("-a", "1"),
            ("_", "1"),
            ("/x", "1"),
            ("a", "01"),
            ("a", "00"),
            ("a", "12345678901234567"),
        ] {
            assert!(
                check_torn_tail(envelope(kind, seq).as_bytes(), None).is_err(),
                "{kind} {seq}"
            );
        }
        // Cut right after the kind's opening quote: still a beginning.
        assert_eq!(check_torn_tail(b"{\"body\":1,\"kind\":\"", None), Ok(()));
    }

    /// Found by an independent attack: `{"body":1e5` passed as a torn
    /// record, and `repair` removed it, though no canonical record holds
    /// that number.
    #[test]
    fn a_number_cut_short_must_begin_a_canonical_number() {
        for ok in [
            "1", "12", "-", "-0", "-0.", "0.", "0.5", "1.25", "1e", "1e+", "1e-", "1e+2",
            "-1.5e-7", "1.50", "-0.0", "1.0", "100",
        ] {
            let tail = format!("{{\"body\":{ok}");
            assert_eq!(check_torn_tail(tail.as_bytes(), None), Ok(()), "{ok}");
            let tail = format!("{{\"body\":[1,{ok}");
            assert_eq!(
                check_torn_tail(tail.as_bytes(), None),
                Ok(()),
                "in an array: {ok}"
            );
            // In a string, any of these is just text.
            let tail = format!("{{\"body\":\"a:{ok}E");
            assert_eq!(
                check_torn_tail(tail.as_bytes(), None),
                Ok(()),
                "in a string: {ok}"
            );
        }
        for ok in ["[true", "[false,tru", "{\"a\":null", "\"\\\"x:1E"] {
            let tail = format!("{{\"body\":{ok}");
            assert_eq!(check_torn_tail(tail.as_bytes(), None), Ok(()), "{ok}");
        }
        for bad in [
            "1e5", "1E", "1E+5", "01", "-01", "1e+0", "1e+05", "1e+-", "--1", "1..", "0e", "12e",
            "0.5e", "1.e",
        ] {
            let tail = format!("{{\"body\":{bad}");
            assert!(
                check_torn_tail(tail.as_bytes(), None).is_err(),
                "{bad}: {:?}",
                check_torn_tail(tail.as_bytes(), None)
            );
        }
    }
}
