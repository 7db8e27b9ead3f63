//! Hexadecimal, the only hex codec in vouch: lowercase encoding (hashes in
//! records, reports and error messages), the strict fixed-length lowercase
//! decoder of the verifier's hot path, and a lenient decoder for hex typed by
//! people (`--digest`, `--nonce`).

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
/// every record): table lookups, no branch per digit.
pub fn decode_lower<const N: usize>(text: &[u8]) -> Option<[u8; N]> {
    if text.len() != N * 2 {
        return None;
    }
    let mut out = [0u8; N];
    let mut bad = 0u8;
    for (o, pair) in out.iter_mut().zip(text.chunks_exact(2)) {
        let hi = LOWER_HEX[usize::from(pair[0])];
        let lo = LOWER_HEX[usize::from(pair[1])];
        bad |= hi | lo;
        *o = (hi << 4) | (lo & 0x0f);
    }
    (bad & 0xf0 == 0).then_some(out)
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
