//! The fallback detector: long high-entropy runs that are not hexadecimal,
//! identifiers or paths.

use super::*;

pub(super) fn is_entropy_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'=' | b'_' | b'-')
}

pub(super) fn high_entropy(b: &[u8], public_pem: &[(usize, usize)], cands: &mut Vec<Cand>) {
    let first = cands.len();
    let mut i = 0;
    while i < b.len() {
        if !is_entropy_byte(b[i]) {
            i += 1;
            continue;
        }
        let end = run_end(b, i, is_entropy_byte);
        if end - i >= 32 {
            // An `=` followed by more text is a join (`name=value`), not
            // base64 padding: judge the pieces on their own.
            let mut p = i;
            let mut k = i;
            while k < end {
                if b[k] == b'=' && k + 1 < end && b[k + 1] != b'=' {
                    entropy_piece(b, p, k + 1, cands);
                    p = k + 1;
                }
                k += 1;
            }
            entropy_piece(b, p, end, cands);
        }
        i = end;
    }
    if !public_pem.is_empty() {
        let mut kept = cands.split_off(first);
        kept.retain(|c| {
            let k = public_pem.partition_point(|&(s, _)| s <= c.start);
            !(k > 0 && c.end <= public_pem[k - 1].1)
        });
        cands.extend(kept);
    }
}

pub(super) fn entropy_piece(b: &[u8], mut start: usize, mut end: usize, cands: &mut Vec<Cand>) {
    // Leading and trailing slashes are path separators (`https://TOKEN@`),
    // not part of the secret.
    while start < end && b[start] == b'/' {
        start += 1;
    }
    while end > start && b[end - 1] == b'/' {
        end -= 1;
    }
    let s = &b[start..end];
    if s.len() < 32 {
        return;
    }
    let lower_s = |p: &[u8]| p.iter().map(u8::to_ascii_lowercase).collect::<Vec<u8>>();
    if s.len() > 7 {
        let head = lower_s(&s[..7]);
        if matches!(&head[..], b"sha256-" | b"sha384-" | b"sha512-") {
            return;
        }
    }
    let non_hex = s
        .iter()
        .filter(|&&c| !(c.is_ascii_hexdigit() || matches!(c, b'-' | b'_' | b'=')))
        .count();
    if non_hex <= (s.len() / 16).max(4) {
        return;
    }
    let upper = s.iter().any(u8::is_ascii_uppercase);
    let lower = s.iter().any(u8::is_ascii_lowercase);
    let digit = s.iter().any(u8::is_ascii_digit);
    let symbol = s
        .iter()
        .any(|c| matches!(c, b'+' | b'/' | b'=' | b'_' | b'-'));
    if usize::from(upper) + usize::from(lower) + usize::from(digit) + usize::from(symbol) < 3 {
        return;
    }
    if shannon(s) < 4.0 {
        return;
    }
    if s.split(|&c| c == b'/').all(wordish) {
        return;
    }
    push(cands, start, end, SecretKind::HighEntropy);
}

pub(super) fn shannon(s: &[u8]) -> f64 {
    let mut counts = [0usize; 256];
    for &c in s {
        counts[usize::from(c)] += 1;
    }
    let n = s.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = c as f64 / n;
            -p * p.log2()
        })
        .sum()
}

/// Identifier-like: in every part (split on `-_+=`) no letter follows a
/// digit, and all camelCase humps but one are followed by two lower-case
/// letters (`IntelliJIdea` has one short hump).
pub(super) fn wordish(piece: &[u8]) -> bool {
    piece
        .split(|c| matches!(c, b'-' | b'_' | b'+' | b'='))
        .all(|part| {
            let mut seen_digit = false;
            let mut short_humps = 0;
            for (k, &c) in part.iter().enumerate() {
                if c.is_ascii_digit() {
                    seen_digit = true;
                    continue;
                }
                if seen_digit {
                    return false;
                }
                if c.is_ascii_uppercase() && k > 0 && part[k - 1].is_ascii_lowercase() {
                    let short =
                        (1..=2).any(|d| part.get(k + d).is_some_and(|x| !x.is_ascii_lowercase()));
                    if short {
                        short_humps += 1;
                        if short_humps > 1 {
                            return false;
                        }
                    }
                }
            }
            true
        })
}
