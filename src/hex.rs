//! Lowercase hexadecimal, as used for hashes in records and reports.

/// Encodes bytes as lowercase hex.
pub fn encode(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 0x0f)] as char);
    }
    out
}

/// Decodes exactly `N` bytes from lowercase hex; `None` for anything else
/// (uppercase, wrong length, non-hex).
pub fn decode_lower<const N: usize>(text: &[u8]) -> Option<[u8; N]> {
    if text.len() != N * 2 {
        return None;
    }
    // Branch-free: table lookups, invalid digits flagged in the high bits.
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

/// Lowercase hex digit values; 0xff for everything else.
const LOWER_HEX: [u8; 256] = {
    let mut t = [0xffu8; 256];
    let mut i = 0;
    while i < 10 {
        t[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut j = 0;
    while j < 6 {
        t[b'a' as usize + j] = 10 + j as u8;
        j += 1;
    }
    t
};

/// Decodes hex of any case and even length into bytes.
pub fn decode_any(text: &str) -> Option<Vec<u8>> {
    let text = text.as_bytes();
    if !text.len().is_multiple_of(2) {
        return None;
    }
    text.chunks_exact(2)
        .map(|p| Some((nibble_any(p[0])? << 4) | nibble_any(p[1])?))
        .collect()
}

fn nibble_lower(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    }
}

fn nibble_any(c: u8) -> Option<u8> {
    match c {
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => nibble_lower(c),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_strictness() {
        let bytes = [0x00, 0x7f, 0xab, 0xff];
        assert_eq!(encode(&bytes), "007fabff");
        assert_eq!(decode_lower::<4>(b"007fabff"), Some(bytes));
        assert_eq!(decode_lower::<4>(b"007FABFF"), None);
        assert_eq!(decode_lower::<4>(b"007fab"), None);
        assert_eq!(decode_any("007FABff"), Some(bytes.to_vec()));
        assert_eq!(decode_any("0g"), None);
        assert_eq!(decode_any("abc"), None);
    }
}
