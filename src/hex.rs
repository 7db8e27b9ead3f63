//! Hexadecimal, the only hex codec in vouch: lowercase encoding (hashes in
//! records, reports and error messages), the strict fixed-length lowercase
//! decoder of the verifier's hot path, and a lenient decoder for hex typed by
//! people (`--digest`, `--nonce`).

use crate::swar::{HI, LO, in_range_ascii};
use std::fmt;

const DIGITS: &[u8; 16] = b"0123456789abcdef";

/// Encodes bytes as lowercase hex.
pub fn encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 0x0f)] as char);
    }
    out
}

/// Lowercase hex `Display` of bytes, for messages, without an allocation.
pub struct Hex<'a>(pub &'a [u8]);

impl fmt::Display for Hex<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use fmt::Write;
        for b in self.0 {
            f.write_char(DIGITS[usize::from(b >> 4)] as char)?;
            f.write_char(DIGITS[usize::from(b & 0x0f)] as char)?;
        }
        Ok(())
    }
}

/// Decodes exactly `N` bytes from lowercase hex; `None` for anything else
/// (uppercase, wrong length, non-hex). The verifier's hot path (`prev` of
/// every record): eight digits at a time in one 64-bit word, no branch per
/// digit; a tail of fewer than eight by table.
pub fn decode_lower<const N: usize>(text: &[u8]) -> Option<[u8; N]> {
    if text.len() != N * 2 {
        return None;
    }
    let mut out = [0u8; N];
    let (words, rest) = text.as_chunks::<8>();
    let (out_words, out_rest) = out.as_chunks_mut::<4>();
    let mut bad_words = 0u64;
    for (o, word) in out_words.iter_mut().zip(words) {
        let (bytes, bad) = decode_word(u64::from_le_bytes(*word));
        *o = bytes;
        bad_words |= bad;
    }
    let mut bad = 0u8;
    for (o, pair) in out_rest.iter_mut().zip(rest.chunks_exact(2)) {
        let hi = LOWER_HEX[usize::from(pair[0])];
        let lo = LOWER_HEX[usize::from(pair[1])];
        bad |= hi | lo;
        *o = (hi << 4) | (lo & 0x0f);
    }
    (bad_words == 0 && bad & 0xf0 == 0).then_some(out)
}

/// Eight lowercase hex digits (little-endian in `x`: the first digit in the
/// low byte) as four bytes, and a mask that is zero exactly when all eight
/// are `0-9` or `a-f` (no branch: the caller ORs the masks of all words).
///
/// A non-ASCII byte is flagged bad by itself, which makes the range tests
/// ([`in_range_ascii`]) exact for the rest.
#[inline(always)]
fn decode_word(x: u64) -> ([u8; 4], u64) {
    let digit = in_range_ascii(x, b'0', b'9');
    let letter = in_range_ascii(x, b'a', b'f');
    let bad = (x | !(digit | letter)) & HI;
    // Digit values: the low nibble, plus 9 for a letter ('a' = 0x61).
    let v = (x & (LO * 0x0f)) + 9 * (letter >> 7);
    // Byte 2k of `t` is the first digit of a pair shifted up, OR the second.
    let t = ((v << 4) | (v >> 8)) & 0x00ff_00ff_00ff_00ff;
    let t = (t | (t >> 8)) & 0x0000_ffff_0000_ffff;
    let t = (t | (t >> 16)) & 0xffff_ffff;
    ((t as u32).to_le_bytes(), bad)
}

/// Decodes hex of either case and even length into bytes; `None` for an
/// odd length or a non-hex character. Empty text is zero bytes.
pub fn decode_any(text: &str) -> Option<Vec<u8>> {
    let text = text.as_bytes();
    if !text.len().is_multiple_of(2) {
        return None;
    }
    let mut bad = 0u8;
    let out = text
        .chunks_exact(2)
        .map(|p| {
            let (hi, lo) = (ANY_HEX[usize::from(p[0])], ANY_HEX[usize::from(p[1])]);
            bad |= hi | lo;
            (hi << 4) | (lo & 0x0f)
        })
        .collect();
    (bad & 0xf0 == 0).then_some(out)
}

/// Digit values: 0xff for everything but `0-9`, `a-f` (and `A-F` when
/// `upper`).
const fn table(upper: bool) -> [u8; 256] {
    let mut t = [0xffu8; 256];
    let mut i = 0;
    while i < 10 {
        t[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut j = 0;
    while j < 6 {
        t[b'a' as usize + j] = 10 + j as u8;
        if upper {
            t[b'A' as usize + j] = 10 + j as u8;
        }
        j += 1;
    }
    t
}

const LOWER_HEX: [u8; 256] = table(false);
const ANY_HEX: [u8; 256] = table(true);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_strictness() {
        let bytes = [0x00, 0x7f, 0xab, 0xff];
        assert_eq!(encode(&bytes), "007fabff");
        assert_eq!(Hex(&bytes).to_string(), "007fabff");
        assert_eq!(decode_lower::<4>(b"007fabff"), Some(bytes));
        assert_eq!(decode_lower::<4>(b"007FABFF"), None);
        assert_eq!(decode_lower::<4>(b"007fab"), None);
        assert_eq!(decode_lower::<2>(b"0g00"), None);
        assert_eq!(decode_any("007FABff"), Some(bytes.to_vec()));
        assert_eq!(decode_any(""), Some(Vec::new()));
        assert_eq!(decode_any("0g"), None);
        assert_eq!(decode_any("abc"), None);
        assert_eq!(decode_any("é0"), None);
    }

    /// The table decoder `decode_lower` used before its word-at-a-time
    /// form: the oracle for it.
    fn decode_lower_by_table(text: &[u8]) -> Option<Vec<u8>> {
        if !text.len().is_multiple_of(2) {
            return None;
        }
        text.chunks_exact(2)
            .map(|p| {
                let (hi, lo) = (LOWER_HEX[usize::from(p[0])], LOWER_HEX[usize::from(p[1])]);
                (hi | lo < 0x10).then_some((hi << 4) | lo)
            })
            .collect()
    }

    /// Every byte value at every position of a valid 64-digit text, and of
    /// 8- and 10-digit ones (a whole word, a word and a tail), agrees with
    /// the table.
    #[test]
    fn word_decoder_agrees_with_the_table_on_every_byte_at_every_position() {
        let base = encode(
            &(0u8..32)
                .map(|i| i.wrapping_mul(37) ^ 0xa5)
                .collect::<Vec<_>>(),
        );
        for len in [8usize, 10, 64] {
            let valid = &base.as_bytes()[..len];
            for at in 0..len {
                for b in 0..=255u8 {
                    let mut text = valid.to_vec();
                    text[at] = b;
                    let want = decode_lower_by_table(&text);
                    let got = match len {
                        8 => decode_lower::<4>(&text).map(|a| a.to_vec()),
                        10 => decode_lower::<5>(&text).map(|a| a.to_vec()),
                        _ => decode_lower::<32>(&text).map(|a| a.to_vec()),
                    };
                    assert_eq!(got, want, "byte {b:#04x} at {at} of {len}");
                }
            }
        }
        // Two bytes changed at once: a non-ASCII byte must not let a carry
        // make its neighbour look valid.
        for b in 0x80..=0xffu8 {
            for c in 0..=255u8 {
                let mut text = base.as_bytes()[..8].to_vec();
                text[3] = b;
                text[4] = c;
                assert_eq!(decode_lower::<4>(&text), None);
            }
        }
    }

    #[test]
    fn every_byte_round_trips() {
        let all: Vec<u8> = (0..=255).collect();
        let text = encode(&all);
        assert_eq!(decode_any(&text), Some(all.clone()));
        assert_eq!(decode_any(&text.to_uppercase()), Some(all.clone()));
        for pair in all.chunks(32) {
            let arr: [u8; 32] = pair.try_into().unwrap();
            assert_eq!(decode_lower::<32>(encode(&arr).as_bytes()), Some(arr));
        }
    }
}
