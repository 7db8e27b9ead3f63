//! RFC 6901 JSON pointers: the one place reference tokens are escaped
//! (`~` as `~0`, `/` as `~1`) and unescaped.
//!
//! Used by the structural diff ([`super::diff`]), the tool-definition
//! field diff (`crate::mcp`), `vet`'s scanner (where a finding is),
//! `redact` (where a secret was masked) and `enforce`'s policy pointers.

/// Appends one reference token to `pointer`: a `/`, then the token with
/// `~` written `~0` and `/` written `~1`.
pub fn push_token(pointer: &mut String, token: &str) {
    pointer.push('/');
    for c in token.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            c => pointer.push(c),
        }
    }
}

/// One reference token unescaped (`~0` is `~`, `~1` is `/`); `None` when a
/// `~` is not followed by `0` or `1` (RFC 6901 §3).
pub fn unescape_token(raw: &str) -> Option<String> {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c == '~' {
            match chars.next() {
                Some('0') => out.push('~'),
                Some('1') => out.push('/'),
                _ => return None,
            }
        } else {
            out.push(c);
        }
    }
    Some(out)
}

/// The reference tokens of a pointer, unescaped (`None` when it is not a
/// pointer: non-empty without a leading `/`, or a bad `~`).
pub fn split_pointer(pointer: &str) -> Option<Vec<String>> {
    if pointer.is_empty() {
        return Some(Vec::new());
    }
    let rest = pointer.strip_prefix('/')?;
    rest.split('/').map(unescape_token).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_round_trip() {
        for t in ["", "a", "a/b", "m~n", "~1", "~0/~", "/"] {
            let mut p = String::new();
            push_token(&mut p, t);
            assert_eq!(split_pointer(&p).unwrap(), vec![t.to_owned()], "{p}");
        }
        let mut p = String::new();
        push_token(&mut p, "a/b");
        push_token(&mut p, "m~n");
        assert_eq!(p, "/a~1b/m~0n");
        assert_eq!(unescape_token("~2"), None);
        assert_eq!(unescape_token("a~"), None);
    }
}
