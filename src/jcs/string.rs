//! Strings: the canonical-string scanner (RFC 8785 §3.2.2.2), member-name
//! ordering by UTF-16 code units (RFC 8785 §3.2.3) and an unescaper.

use std::cmp::Ordering;

use super::{JcsError, NonCanonical};

use crate::swar::{HI, LO, eq_bytes};

/// Sets the high bit of (at least) the lowest byte of `x` that is `"`, `\` or
/// below 0x20. Bytes above the lowest flagged one may be flagged falsely
/// (borrow propagation), so only the lowest set bit is meaningful.
#[inline(always)]
pub(super) fn stop_mask(x: u64) -> u64 {
    let lt = x.wrapping_sub(LO * 0x20) & !x & HI;
    eq_bytes(x, b'"') | eq_bytes(x, b'\\') | lt
}

/// Result of scanning one string.
pub(super) struct Scanned {
    /// Offset just past the closing quote.
    pub end: usize,
    /// Whether the body contains a backslash.
    pub escaped: bool,
}

/// Scans the string whose opening quote is at `open`, checking RFC 8259
/// syntax, UTF-8 and RFC 8785 §3.2.2.2 escapes.
#[inline]
pub(super) fn scan(input: &[u8], open: usize) -> Result<Scanned, JcsError> {
    let mut i = open + 1;
    let mut run_start = i;
    let mut high = 0u64;
    let mut escaped = false;
    loop {
        // Bulk-skip ordinary content sixteen, then eight, bytes at a time.
        while let Some(chunk) = input.get(i..).and_then(|s| s.first_chunk::<16>()) {
            let (a, b) = chunk.split_at(8);
            let (Ok(a), Ok(b)) = (<[u8; 8]>::try_from(a), <[u8; 8]>::try_from(b)) else {
                break;
            };
            let (x, y) = (u64::from_le_bytes(a), u64::from_le_bytes(b));
            if stop_mask(x) | stop_mask(y) != 0 {
                break;
            }
            high |= x | y;
            i += 16;
        }
        while let Some(chunk) = input.get(i..).and_then(|s| s.first_chunk::<8>()) {
            let x = u64::from_le_bytes(*chunk);
            let m = stop_mask(x);
            high |= x;
            if m != 0 {
                i += (m.trailing_zeros() / 8) as usize;
                break;
            }
            i += 8;
        }
        // Fewer than eight bytes left, or a stop byte in the chunk.
        let b = loop {
            let Some(&b) = input.get(i) else {
                return Err(JcsError::Syntax {
                    offset: input.len(),
                });
            };
            if b == b'"' || b == b'\\' || b < 0x20 {
                break b;
            }
            high |= b as u64;
            i += 1;
        };
        if high & HI != 0 {
            check_utf8(input, run_start, i)?;
        }
        match b {
            b'"' => {
                return Ok(Scanned {
                    end: i + 1,
                    escaped,
                });
            }
            b'\\' => {
                i = check_escape(input, i)?;
                escaped = true;
                run_start = i;
                high = 0;
            }
            _ => return Err(JcsError::Syntax { offset: i }),
        }
    }
}

#[inline]
fn check_utf8(input: &[u8], start: usize, end: usize) -> Result<(), JcsError> {
    match std::str::from_utf8(&input[start..end]) {
        Ok(_) => Ok(()),
        Err(e) => Err(JcsError::BadUtf8 {
            offset: start + e.valid_up_to(),
        }),
    }
}

/// Checks the escape whose backslash is at `at`; returns the offset after it.
pub(super) fn check_escape(input: &[u8], at: usize) -> Result<usize, JcsError> {
    let not_canonical = Err(JcsError::NotCanonical {
        offset: at,
        why: NonCanonical::StringEscape,
    });
    match input.get(at + 1) {
        Some(b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't') => Ok(at + 2),
        Some(b'/') => not_canonical,
        Some(b'u') => {
            let mut v: u32 = 0;
            let mut upper = false;
            for k in at + 2..at + 6 {
                let Some(&h) = input.get(k) else {
                    return Err(JcsError::Syntax {
                        offset: input.len(),
                    });
                };
                let d = match h {
                    b'0'..=b'9' => h - b'0',
                    b'a'..=b'f' => h - b'a' + 10,
                    b'A'..=b'F' => {
                        upper = true;
                        h - b'A' + 10
                    }
                    _ => return Err(JcsError::Syntax { offset: k }),
                };
                v = v << 4 | d as u32;
            }
            if v >= 0x20 || matches!(v, 0x08 | 0x09 | 0x0a | 0x0c | 0x0d) || upper {
                return not_canonical;
            }
            Ok(at + 6)
        }
        Some(_) => Err(JcsError::Syntax { offset: at + 1 }),
        None => Err(JcsError::Syntax {
            offset: input.len(),
        }),
    }
}

/// Compares two canonical raw member names by the UTF-16 code units of their
/// decoded values. `escaped` says whether either contains a backslash.
///
/// Names of one object mostly differ at their first byte: when neither has
/// an escape and both first bytes differ and are below 0xEE (no lead byte
/// of U+E000 and above, see [`cmp_names_at_length`]), byte order decides,
/// inline.
#[inline(always)]
pub(super) fn cmp_names(a: &[u8], b: &[u8], escaped: bool) -> Ordering {
    if !escaped
        && let (Some(&x), Some(&y)) = (a.first(), b.first())
        && x != y
        && x < 0xEE
        && y < 0xEE
    {
        return x.cmp(&y);
    }
    cmp_names_at_length(a, b, escaped)
}

/// [`cmp_names`] for any two names.
#[inline(never)]
fn cmp_names_at_length(a: &[u8], b: &[u8], escaped: bool) -> Ordering {
    if escaped {
        return Utf16Units::new(a).cmp(Utf16Units::new(b));
    }
    // UTF-8 byte order is code point order; UTF-16 order differs only where a
    // character in U+E000..=U+FFFF (lead byte 0xEE/0xEF) meets a
    // supplementary-plane one (lead byte 0xF0..=0xF4, a surrogate pair in
    // UTF-16, which sorts first). Such a pair always differs at the lead byte.
    match a.iter().zip(b).position(|(x, y)| x != y) {
        None => a.len().cmp(&b.len()),
        Some(i) => {
            let (x, y) = (a[i], b[i]);
            let bmp_high = |c: u8| matches!(c, 0xEE | 0xEF);
            let astral = |c: u8| c >= 0xF0;
            if (bmp_high(x) && astral(y)) || (astral(x) && bmp_high(y)) {
                y.cmp(&x)
            } else {
                x.cmp(&y)
            }
        }
    }
}

/// UTF-16 code units of a raw string body that is already known to be valid
/// (UTF-8 checked, escapes well-formed).
struct Utf16Units<'a> {
    raw: &'a [u8],
    i: usize,
    pending: Option<u16>,
}

impl<'a> Utf16Units<'a> {
    fn new(raw: &'a [u8]) -> Self {
        Utf16Units {
            raw,
            i: 0,
            pending: None,
        }
    }

    fn byte(&self, k: usize) -> u32 {
        self.raw.get(self.i + k).copied().unwrap_or(0) as u32
    }
}

impl Iterator for Utf16Units<'_> {
    type Item = u16;

    fn next(&mut self) -> Option<u16> {
        if let Some(u) = self.pending.take() {
            return Some(u);
        }
        let b = *self.raw.get(self.i)?;
        let (cp, len) = if b == b'\\' {
            let e = self.byte(1) as u8;
            match e {
                b'u' => {
                    let mut v = 0u32;
                    for k in 2..6 {
                        v = v << 4 | (self.byte(k) as u8 as char).to_digit(16).unwrap_or(0);
                    }
                    (v, 6)
                }
                _ => (unescape_short(e).unwrap_or(0) as u32, 2),
            }
        } else if b < 0x80 {
            (b as u32, 1)
        } else if b < 0xE0 {
            ((b as u32 & 0x1F) << 6 | (self.byte(1) & 0x3F), 2)
        } else if b < 0xF0 {
            (
                (b as u32 & 0x0F) << 12 | (self.byte(1) & 0x3F) << 6 | (self.byte(2) & 0x3F),
                3,
            )
        } else {
            (
                (b as u32 & 0x07) << 18
                    | (self.byte(1) & 0x3F) << 12
                    | (self.byte(2) & 0x3F) << 6
                    | (self.byte(3) & 0x3F),
                4,
            )
        };
        self.i += len;
        if cp >= 0x1_0000 {
            let c = cp - 0x1_0000;
            self.pending = Some((0xDC00 | (c & 0x3FF)) as u16);
            Some((0xD800 | (c >> 10)) as u16)
        } else {
            Some(cp as u16)
        }
    }
}

fn unescape_short(e: u8) -> Option<u8> {
    Some(match e {
        b'"' => b'"',
        b'\\' => b'\\',
        b'/' => b'/',
        b'b' => 0x08,
        b'f' => 0x0c,
        b'n' => b'\n',
        b'r' => b'\r',
        b't' => b'\t',
        _ => return None,
    })
}

/// Decodes a raw RFC 8259 string body; see [`super::unescape_str`].
pub(super) fn unescape(raw: &[u8]) -> Result<String, JcsError> {
    let text = std::str::from_utf8(raw).map_err(|e| JcsError::BadUtf8 {
        offset: e.valid_up_to(),
    })?;
    let mut out = String::with_capacity(raw.len());
    let mut run = 0;
    let mut i = 0;
    let hex4 = |k: usize| -> Result<u32, JcsError> {
        let digits = raw
            .get(k..k + 4)
            .ok_or(JcsError::Syntax { offset: raw.len() })?;
        let mut v = 0u32;
        for (j, &h) in digits.iter().enumerate() {
            let d = (h as char)
                .to_digit(16)
                .ok_or(JcsError::Syntax { offset: k + j })?;
            v = v << 4 | d;
        }
        Ok(v)
    };
    while i < raw.len() {
        let b = raw[i];
        if b == b'"' || b < 0x20 {
            return Err(JcsError::Syntax { offset: i });
        }
        if b != b'\\' {
            i += 1;
            continue;
        }
        out.push_str(&text[run..i]);
        let e = *raw
            .get(i + 1)
            .ok_or(JcsError::Syntax { offset: raw.len() })?;
        if e == b'u' {
            let hi = hex4(i + 2)?;
            let (cp, len) = if (0xD800..0xDC00).contains(&hi) {
                let lo = if raw.get(i + 6..i + 8) == Some(b"\\u") {
                    hex4(i + 8)?
                } else {
                    0
                };
                if !(0xDC00..0xE000).contains(&lo) {
                    return Err(JcsError::Syntax { offset: i });
                }
                (0x1_0000 + ((hi - 0xD800) << 10) + (lo - 0xDC00), 12)
            } else {
                (hi, 6)
            };
            let c = char::from_u32(cp).ok_or(JcsError::Syntax { offset: i })?;
            out.push(c);
            i += len;
        } else {
            let c = unescape_short(e).ok_or(JcsError::Syntax { offset: i + 1 })?;
            out.push(c as char);
            i += 2;
        }
        run = i;
    }
    out.push_str(&text[run..]);
    Ok(out)
}
