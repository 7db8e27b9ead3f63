//! The verifier's fast path: an accept-only twin of [`super::validate`].
//!
//! [`value_end`] answers one question, "is this the RFC 8785 serialization
//! of a value, and where does it end?", with no error detail: a caller that
//! gets `None` asks [`super::validate`] (the reference, kept simple and
//! unchanged) for the reason and the offset. So every reason code still
//! comes from the reference; this module only has to agree with it on
//! *acceptance*, which `fuzz/props.rs` (`jcs_fast`) and the unit tests check
//! in both directions: what one accepts the other accepts.
//!
//! What is faster here: strings, most of the bytes of a log, are skipped 32
//! bytes at a time with a branch-free test the compiler turns into SIMD
//! compares (no `unsafe`, no intrinsics), and UTF-8 is checked once per
//! string, only when a byte of it is not ASCII. Numbers, escapes and the
//! UTF-16 ordering of member names reuse the reference's own functions.

use super::{number, string};
use crate::swar::{HI, eq_bytes};

/// Bytes tested at a time by the string scanner.
const BLOCK: usize = 32;

/// Whether any byte of `chunk` stops a string run (`"`, `\`, below 0x20),
/// and the OR of all its bytes (its top bit says "not all ASCII"). The
/// loop compiles to SIMD compares.
#[inline(always)]
fn classify(chunk: &[u8; BLOCK]) -> (bool, u8) {
    let mut stop = 0u8;
    let mut or = 0u8;
    for &b in chunk {
        stop |= u8::from(b == b'"') | u8::from(b == b'\\') | u8::from(b < 0x20);
        or |= b;
    }
    (stop != 0, or)
}

/// End of the canonical string whose opening quote is at `open` (just past
/// the closing quote), and whether it holds a backslash.
///
/// Most strings of a record are short ASCII runs (member names, `"request"`,
/// `"user12"`): their closing quote is found in the first one or two
/// eight-byte words, inline, with no call. Anything else (a longer string,
/// an escape, a control or non-ASCII byte) goes to [`string_end_long`],
/// which starts over from the opening quote.
#[inline(always)]
pub(crate) fn string_end(input: &[u8], open: usize) -> Option<(usize, bool)> {
    let start = open + 1;
    if let Some(words) = input.get(start..).and_then(|s| s.first_chunk::<16>()) {
        for (k, word) in words.as_chunks::<8>().0.iter().enumerate() {
            let x = u64::from_le_bytes(*word);
            let m = string::stop_mask(x);
            // The lowest flagged byte is the first stop byte (the mask is
            // exact there); every byte below it must be ASCII.
            let lowest = m & m.wrapping_neg();
            let below = lowest.wrapping_shr(7).wrapping_sub(1);
            if x & below & HI != 0 {
                break;
            }
            if m != 0 {
                // Whether that byte is the quote, without reading it back
                // from memory: the zero-byte flags of `x ^ "…"` are exact
                // up to the first stop byte too.
                if eq_bytes(x, b'"') & lowest != 0 {
                    let n = (lowest.trailing_zeros() / 8) as usize;
                    return Some((start + 8 * k + n + 1, false));
                }
                break;
            }
        }
    }
    string_end_long(input, open)
}

/// [`string_end`] for any string: blocks of [`BLOCK`] bytes, escapes, UTF-8.
#[inline(never)]
fn string_end_long(input: &[u8], open: usize) -> Option<(usize, bool)> {
    let mut i = open + 1;
    // The OR of the string's bytes seen so far: its top bits say whether
    // UTF-8 must be checked.
    let mut high = 0u64;
    let mut escaped = false;
    loop {
        // Move `i` to the next stop byte: whole blocks without one are
        // skipped, the block with one is searched eight bytes at a time.
        'find: loop {
            if let Some(chunk) = input.get(i..).and_then(|s| s.first_chunk::<BLOCK>()) {
                let (stop, or) = classify(chunk);
                if !stop {
                    high |= u64::from(or);
                    i += BLOCK;
                    continue;
                }
                for word in chunk.as_chunks::<8>().0 {
                    let x = u64::from_le_bytes(*word);
                    let m = string::stop_mask(x);
                    if m != 0 {
                        // The lowest flagged byte is the stop; keep the
                        // bytes below it.
                        let lowest = m & m.wrapping_neg();
                        high |= x & ((lowest >> 7) - 1);
                        i += (lowest.trailing_zeros() / 8) as usize;
                        break 'find;
                    }
                    high |= x;
                    i += 8;
                }
                // classify saw a stop byte, so one of the words has it.
                return None;
            }
            // Fewer than BLOCK bytes left.
            let b = *input.get(i)?;
            if b == b'"' || b == b'\\' || b < 0x20 {
                break;
            }
            high |= u64::from(b);
            i += 1;
        }
        match *input.get(i)? {
            b'"' => {
                // Escapes are ASCII, so the body is valid UTF-8 exactly when
                // every run between escapes is (what the reference checks).
                if high & HI != 0 && std::str::from_utf8(&input[open + 1..i]).is_err() {
                    return None;
                }
                return Some((i + 1, escaped));
            }
            b'\\' => {
                i = string::check_escape(input, i).ok()?;
                escaped = true;
            }
            _ => return None,
        }
    }
}

/// End of the canonical value that starts at `pos`, inside containers
/// nested `depth` deep (0 at top level), containers allowed `max_depth`
/// deep; `None` wherever [`super::validate`] would fail.
#[inline]
pub(crate) fn value_end(input: &[u8], pos: usize, depth: u32, max_depth: u32) -> Option<usize> {
    match *input.get(pos)? {
        b'"' => string_end(input, pos).map(|(end, _)| end),
        b'-' | b'0'..=b'9' => number_end(input, pos),
        b'{' => object_end(input, pos, depth + 1, max_depth),
        b'[' => array_end(input, pos, depth + 1, max_depth),
        b't' => literal_end(input, pos, b"true"),
        b'f' => literal_end(input, pos, b"false"),
        b'n' => literal_end(input, pos, b"null"),
        _ => None,
    }
}

/// End of the number at `pos`. A non-negative integer of at most
/// [`number::FAST_DIGITS`] digits (counters, sizes, status codes) is
/// recognised inline: no leading zero, not followed by another digit, a
/// fraction or an exponent, it is canonical (the reference's own rule). Any
/// other number is [`number::scan`]'s.
#[inline(always)]
fn number_end(input: &[u8], pos: usize) -> Option<usize> {
    let mut i = pos;
    match input.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => {
            i += 1;
            while i - pos < number::FAST_DIGITS && input.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
        }
        _ => return number::scan(input, pos).ok(),
    }
    match input.get(i) {
        Some(b'0'..=b'9' | b'.' | b'e' | b'E') => number::scan(input, pos).ok(),
        _ => Some(i),
    }
}

fn literal_end(input: &[u8], pos: usize, word: &[u8]) -> Option<usize> {
    input[pos..].starts_with(word).then_some(pos + word.len())
}

fn array_end(input: &[u8], open: usize, depth: u32, max_depth: u32) -> Option<usize> {
    if depth > max_depth {
        return None;
    }
    let mut pos = open + 1;
    if input.get(pos) == Some(&b']') {
        return Some(pos + 1);
    }
    loop {
        pos = value_end(input, pos, depth, max_depth)?;
        match input.get(pos)? {
            b',' => pos += 1,
            b']' => return Some(pos + 1),
            _ => return None,
        }
    }
}

fn object_end(input: &[u8], open: usize, depth: u32, max_depth: u32) -> Option<usize> {
    if depth > max_depth {
        return None;
    }
    let mut pos = open + 1;
    if input.get(pos) == Some(&b'}') {
        return Some(pos + 1);
    }
    let mut prev: Option<(usize, usize, bool)> = None;
    loop {
        if input.get(pos) != Some(&b'"') {
            return None;
        }
        let (key_end, escaped) = string_end(input, pos)?;
        let name = (pos + 1, key_end - 1);
        if let Some((a, b, prev_escaped)) = prev
            && string::cmp_names(
                &input[a..b],
                &input[name.0..name.1],
                prev_escaped || escaped,
            ) != std::cmp::Ordering::Less
        {
            return None;
        }
        prev = Some((name.0, name.1, escaped));
        if input.get(key_end) != Some(&b':') {
            return None;
        }
        // Strings and numbers, most members' values, without a call.
        pos = match input.get(key_end + 1)? {
            b'"' => string_end(input, key_end + 1)?.0,
            b'0'..=b'9' => number_end(input, key_end + 1)?,
            _ => value_end(input, key_end + 1, depth, max_depth)?,
        };
        match input.get(pos)? {
            b',' => pos += 1,
            b'}' => return Some(pos + 1),
            _ => return None,
        }
    }
}

/// Whether `input` is exactly one canonical value with containers at most
/// `max_depth` deep: the same answer as `validate(input, max_depth, ..)
/// .is_ok()`, faster, and without the reason.
pub fn is_canonical_fast(input: &[u8], max_depth: u32) -> bool {
    value_end(input, 0, 0, max_depth) == Some(input.len())
}

#[cfg(test)]
mod tests {
    use super::super::{DEFAULT_MAX_DEPTH, validate};
    use super::is_canonical_fast;

    fn agree(input: &[u8], max_depth: u32) {
        assert_eq!(
            is_canonical_fast(input, max_depth),
            validate(input, max_depth, |_, _| {}).is_ok(),
            "fast path disagrees on {:?} (max depth {max_depth})",
            String::from_utf8_lossy(input)
        );
    }

    /// Every stop byte, and every kind of non-ASCII byte, at every position
    /// of a string around the 32-byte blocks.
    #[test]
    fn strings_around_block_edges() {
        let specials: &[&[u8]] = &[
            b"\"",
            b"\\",
            b"\\\\",
            b"\\n",
            b"\\u001f",
            b"\\u001F",
            b"\\u0041",
            b"\\/",
            b"\x00",
            b"\x1f",
            b"\x7f",
            "é".as_bytes(),
            "😀".as_bytes(),
            b"\xc3",
            b"\xff",
            b"\xed\xa0\x80",
            b"\xe2\x82",
        ];
        for len in 0..80 {
            for special in specials {
                for at in [0, len / 2, len] {
                    let mut s = b"\"".to_vec();
                    s.extend(std::iter::repeat_n(b'a', at));
                    s.extend_from_slice(special);
                    s.extend(std::iter::repeat_n(b'b', len - at));
                    s.push(b'"');
                    agree(&s, DEFAULT_MAX_DEPTH);
                    // Unterminated, and inside containers.
                    agree(&s[..s.len() - 1], DEFAULT_MAX_DEPTH);
                    let mut obj = b"{\"k\":".to_vec();
                    obj.extend_from_slice(&s);
                    obj.push(b'}');
                    agree(&obj, DEFAULT_MAX_DEPTH);
                    let mut key = b"{".to_vec();
                    key.extend_from_slice(&s);
                    key.extend_from_slice(b":[1,\"x\"]}");
                    agree(&key, DEFAULT_MAX_DEPTH);
                }
            }
        }
    }

    /// Every byte value at every position of strings of 0 to 20 bytes: the
    /// inline path for short strings (the first two eight-byte words) and
    /// its hand-over to the long one, as a value and as a member name.
    #[test]
    fn every_byte_in_short_strings() {
        for len in 0..=20usize {
            for at in 0..len {
                for b in 0..=255u8 {
                    let mut body = vec![b'a'; len];
                    body[at] = b;
                    let mut value = b"[\"".to_vec();
                    value.extend_from_slice(&body);
                    value.extend_from_slice(b"\",1]");
                    agree(&value, DEFAULT_MAX_DEPTH);
                    let mut key = b"{\"".to_vec();
                    key.extend_from_slice(&body);
                    key.extend_from_slice("\":1,\"\u{ffff}\":2}".as_bytes());
                    agree(&key, DEFAULT_MAX_DEPTH);
                }
            }
        }
    }

    /// Byte flips, insertions and cuts of record-like values, with a small
    /// deterministic generator (the fuzz target `jcs_fast` does this at
    /// scale).
    #[test]
    fn mutations_agree() {
        let seeds: &[&[u8]] = &[
            br#"{"i":12,"latency_ms":3,"msg":"lorem ipsum dolor sit amet, consectetur adipiscing elit lorem ipsum","path":"/api/v1/items/84","status":200,"user":"user12"}"#,
            "{\"\":null,\"a\":{\"😀\":1,\"\u{e000}\":2},\"b\":[1,0,1e+21,0.1,\"\\u001f\u{7f}/\"]}".as_bytes(),
            br#"[true,false,null,-1.5,"a\"b\\c",{"a\nb":[]},[[[]]]]"#,
            br#"{"a":{"b":{"c":{"d":[1,2,3,{"e":"f"}]}}}}"#,
        ];
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let alphabet = b"\"\\{}[]:,0123456789-+.eEtrufalsn \t\nu\xc3\xa9\xff\x01aZ/";
        for seed in seeds {
            agree(seed, DEFAULT_MAX_DEPTH);
            for depth in 0..5 {
                agree(seed, depth);
            }
            for _ in 0..4000 {
                let mut m = seed.to_vec();
                for _ in 0..(1 + next() % 3) {
                    let at = (next() as usize) % (m.len() + 1);
                    let b = alphabet[(next() as usize) % alphabet.len()];
                    match next() % 4 {
                        0 if at < m.len() => m[at] = b,
                        1 => m.insert(at, b),
                        2 if at < m.len() => {
                            m.remove(at);
                        }
                        _ => m.truncate(at),
                    }
                }
                agree(&m, DEFAULT_MAX_DEPTH);
                agree(&m, 2);
            }
        }
    }
}
