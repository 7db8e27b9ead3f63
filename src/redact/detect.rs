//! The structured detectors: PEM private keys and PuTTY key files, JWTs,
//! HTTP credentials (`Bearer`, `Basic`, `Authorization:`), URL passwords
//! and secret query parameters, `KEY=VALUE` assignments and quoted
//! `"key": "value"` pairs in text.

use super::*;

/// PEM private keys and PuTTY key files; returns the bodies of the other
/// PEM blocks (certificates, public keys), which are not high-entropy
/// secrets.
pub(super) fn private_keys(b: &[u8], cands: &mut Vec<Cand>) -> Vec<(usize, usize)> {
    let mut public = Vec::new();
    // Once a search for `-----END ` from some position failed, every later
    // search fails too: remember where, to stay linear.
    let mut no_end_from = usize::MAX;
    let mut find_end = |k: usize| -> Option<usize> {
        if k >= no_end_from {
            return None;
        }
        let found = memmem::find(&b[k..], b"-----END ").map(|off| k + off);
        if found.is_none() {
            no_end_from = k;
        }
        found
    };
    let mut from = 0;
    while let Some(off) = memmem::find(&b[from..], b"-----BEGIN ") {
        let i = from + off;
        match pem_label(b, i + 11) {
            Some((le, true)) => {
                let mut end = b.len();
                let mut k = le;
                while let Some(j) = find_end(k) {
                    match pem_label(b, j + 9) {
                        Some((e, true)) => {
                            end = e;
                            break;
                        }
                        _ => k = j + 9,
                    }
                }
                push(cands, i, end, SecretKind::PrivateKey);
                from = end;
            }
            Some((le, false)) => match find_end(le) {
                Some(j) => {
                    public.push((le, j));
                    from = j;
                }
                None => from = le,
            },
            None => from = i + 11,
        }
        if from >= b.len() {
            break;
        }
    }
    let mut from = 0;
    while let Some(off) = memmem::find(&b[from..], b"PuTTY-User-Key-File-") {
        let i = from + off;
        if prev_alnum(b, i) {
            from = i + 1;
            continue;
        }
        let end = match memmem::find(&b[i..], b"Private-MAC:") {
            Some(m) => run_end(b, i + m, |c| c != b'\n' && c != b'\r' && c != b'"'),
            None => b.len(),
        };
        push(cands, i, end, SecretKind::PrivateKey);
        from = end;
        if from >= b.len() {
            break;
        }
    }
    public
}

/// Parse `LABEL-----` at `i`: the end of the closing dashes, and whether the
/// label names a private key.
pub(super) fn pem_label(b: &[u8], i: usize) -> Option<(usize, bool)> {
    let mut j = i;
    while j < b.len()
        && j - i <= 64
        && (b[j].is_ascii_uppercase() || b[j].is_ascii_digit() || b[j] == b' ')
    {
        j += 1;
    }
    if b.get(j..j + 5) == Some(b"-----") {
        let private = memmem::find(&b[i..j], b"PRIVATE KEY").is_some();
        Some((j + 5, private))
    } else {
        None
    }
}

pub(super) fn jwts(b: &[u8], cands: &mut Vec<Cand>) {
    let mut from = 0;
    while let Some(off) = memmem::find(&b[from..], b"eyJ") {
        let i = from + off;
        if i > 0 && is_b64url(b[i - 1]) {
            from = i + 1;
            continue;
        }
        let mut end = run_end(b, i, is_b64url);
        let mut segments = 1;
        let mut ok_end = None;
        while segments < 5 && b.get(end) == Some(&b'.') {
            let seg_end = run_end(b, end + 1, is_b64url);
            if seg_end - (end + 1) < 4 {
                break;
            }
            end = seg_end;
            segments += 1;
            if segments >= 3 {
                ok_end = Some(end);
            }
        }
        let first_len = run_end(b, i, is_b64url) - i;
        match ok_end {
            Some(e) if first_len >= 4 => {
                push(cands, i, e, SecretKind::Jwt);
                from = e;
            }
            _ => from = i + 1,
        }
        if from >= b.len() {
            break;
        }
    }
}

pub(super) fn is_token68(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_' | b'~' | b'+' | b'/' | b'=')
}

pub(super) fn bearer(b: &[u8], lower: &[u8], cands: &mut Vec<Cand>) {
    for (word, basic) in [(&b"bearer"[..], false), (&b"basic"[..], true)] {
        for i in memmem::find_iter(lower, word) {
            if prev_alnum(b, i) {
                continue;
            }
            let w = i + word.len();
            let t = skip_upto(b, w, 8, |c| c == b' ' || c == b'\t');
            if t == w {
                continue;
            }
            let mut end = run_end(b, t, is_token68);
            while end > t && b[end - 1] == b'.' {
                end -= 1;
            }
            let tok = &b[t..end];
            let ok = if basic {
                basic_credential(tok)
            } else {
                tok.len() >= 8
                    && tok.iter().any(u8::is_ascii_digit)
                    && tok.iter().any(u8::is_ascii_alphabetic)
            };
            if ok {
                push(cands, t, end, SecretKind::Bearer);
            }
        }
    }
}

/// Base64 (standard alphabet) of printable ASCII containing `:`.
pub(super) fn basic_credential(tok: &[u8]) -> bool {
    use base64::Engine as _;
    if tok.len() < 8
        || !tok
            .iter()
            .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'='))
    {
        return false;
    }
    let trimmed: Vec<u8> = tok.iter().copied().filter(|&c| c != b'=').collect();
    base64::engine::general_purpose::STANDARD_NO_PAD
        .decode(&trimmed)
        .is_ok_and(|d| d.contains(&b':') && d.iter().all(|&c| (0x20..0x7f).contains(&c)))
}

pub(super) fn authorization(b: &[u8], lower: &[u8], cands: &mut Vec<Cand>) {
    let quote = |c: u8| matches!(c, b'"' | b'\'' | b'`');
    let space = |c: u8| c == b' ' || c == b'\t';
    let mut from = 0;
    while let Some(off) = memmem::find(&lower[from..], b"authorization") {
        let i = from + off;
        from = i + 13;
        if prev_alnum(b, i) {
            continue;
        }
        // A value ends at the end of the line, or at the closing quote when
        // the header (`"Authorization: …"`) or its value was quoted.
        let mut opened = (i > 0 && quote(b[i - 1])).then(|| b[i - 1]);
        let mut j = skip_upto(b, i + 13, 1, quote);
        j = skip_upto(b, j, 8, space);
        if !matches!(b.get(j), Some(b':' | b'=')) {
            continue;
        }
        j = skip_upto(b, j + 1, 8, space);
        if let Some(&q) = b.get(j).filter(|&&c| quote(c)) {
            opened = Some(q);
            j += 1;
        }
        let stop = |c: u8| c == b'\n' || c == b'\r' || Some(c) == opened;
        // Look at no more than the scheme word and the first 64 bytes of
        // the credential before deciding, so that failed matches stay cheap.
        let w = skip_upto(b, j, 21, |c| c.is_ascii_alphabetic());
        let sp = skip_upto(b, w, 8, space);
        let has_scheme = w > j && w - j <= 20 && sp > w && b.get(sp).is_some_and(|&c| !stop(c));
        let cred = if has_scheme { sp } else { j };
        let first = &b[cred..skip_upto(b, cred, 64, |c| !space(c) && !stop(c))];
        let capitalized = first.first().is_some_and(u8::is_ascii_uppercase)
            && first[1..].iter().all(u8::is_ascii_lowercase);
        let looks = first.len() >= 8 && !first.iter().all(u8::is_ascii_lowercase) && !capitalized;
        if looks {
            let mut end = run_end(b, cred, |c| !stop(c));
            while end > cred && space(b[end - 1]) {
                end -= 1;
            }
            push(cands, cred, end, SecretKind::Bearer);
            from = from.max(end);
        }
        if from >= b.len() {
            break;
        }
    }
}

pub(super) fn url_credentials(b: &[u8], cands: &mut Vec<Cand>) {
    for q in memmem::find_iter(b, b"://") {
        if !prev_alnum(b, q) {
            continue;
        }
        let start = q + 3;
        let end = run_end(b, start, |c| {
            !matches!(
                c,
                b'/' | b'?' | b'#' | b'"' | b'\'' | b'<' | b'>' | b'\\' | b'`'
            ) && !c.is_ascii_whitespace()
        });
        let authority = &b[start..end];
        let Some(at) = authority.iter().rposition(|&c| c == b'@') else {
            continue;
        };
        if let Some(colon) = authority[..at].iter().position(|&c| c == b':') {
            push(
                cands,
                start + colon + 1,
                start + at,
                SecretKind::UrlCredentials,
            );
        }
    }
}

pub(super) fn query_params(b: &[u8], cands: &mut Vec<Cand>) {
    let mut from = 0;
    while let Some(off) = memchr::memchr2(b'?', b'&', &b[from..]) {
        let p = from + off;
        from = p + 1;
        let name_end = skip_upto(b, p + 1, 64, is_name_byte);
        if name_end == p + 1 || b.get(name_end) != Some(&b'=') {
            continue;
        }
        let name = std::str::from_utf8(&b[p + 1..name_end]).unwrap_or("");
        if !query_name_secret(name) {
            continue;
        }
        let v = name_end + 1;
        let end = run_end(b, v, |c| {
            !matches!(c, b'&' | b'#' | b'"' | b'\'' | b'<' | b'>' | b'`')
                && !c.is_ascii_whitespace()
        });
        if end > v {
            push(cands, v, end, SecretKind::UrlCredentials);
            from = end;
        }
    }
}

pub(super) fn query_name_secret(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    matches!(lower.as_str(), "key" | "sig" | "signature" | "auth") || field_of(name).is_some()
}

pub(super) fn is_name_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.')
}

/// `KEY=VALUE` with a secret-like `KEY`, not inside a query string.
pub(super) fn assignments(b: &[u8], cands: &mut Vec<Cand>) {
    let mut from = 0;
    while let Some(off) = memchr::memchr(b'=', &b[from..]) {
        let e = from + off;
        from = e + 1;
        let mut k = e;
        while k > 0 && e - k < 65 && is_name_byte(b[k - 1]) {
            k -= 1;
        }
        if k == e || (k > 0 && is_name_byte(b[k - 1])) || (k > 0 && matches!(b[k - 1], b'?' | b'&'))
        {
            continue;
        }
        let name = std::str::from_utf8(&b[k..e]).unwrap_or("");
        let Some(field) = field_of(name) else {
            continue;
        };
        if matches!(b.get(e + 1), Some(b'$'))
            || matches!((b.get(e + 1), b.get(e + 2)), (Some(b'"'), Some(b'$')))
        {
            continue;
        }
        let (v, end) = match b.get(e + 1) {
            Some(&q @ (b'"' | b'\'')) => {
                let v = e + 2;
                let end = run_end(b, v, |c| c != q && c != b'\n' && c != b'\r');
                (v, end)
            }
            _ => {
                let v = e + 1;
                let end = run_end(b, v, |c| {
                    !c.is_ascii_whitespace() && !matches!(c, b'"' | b'\'' | b'`')
                });
                (v, end)
            }
        };
        if end == v {
            continue;
        }
        let kind = if field == Field::Aws {
            SecretKind::AwsSecretKey
        } else {
            SecretKind::SecretField
        };
        push(cands, v, end, kind);
        from = end.max(from);
    }
}

/// `"key": "value"` (or single quotes) inside text, with a secret-like key.
pub(super) fn quoted_pairs(b: &[u8], cands: &mut Vec<Cand>) {
    let space = |c: u8| matches!(c, b' ' | b'\t' | b'\n' | b'\r');
    let mut from = 0;
    while let Some(off) = memchr::memchr(b':', &b[from..]) {
        let c = from + off;
        from = c + 1;
        let mut q = c;
        while q > 0 && c - q < 8 && space(b[q - 1]) {
            q -= 1;
        }
        if q == 0 || !matches!(b[q - 1], b'"' | b'\'') {
            continue;
        }
        let quote = b[q - 1];
        let name_end = q - 1;
        let mut k = name_end;
        while k > 0 && name_end - k < 65 && b[k - 1] != quote && b[k - 1] != b'\n' {
            k -= 1;
        }
        if k == 0 || b[k - 1] != quote || k == name_end {
            continue;
        }
        let name = std::str::from_utf8(&b[k..name_end]).unwrap_or("");
        let Some(field) = field_of(name) else {
            continue;
        };
        let v0 = skip_upto(b, c + 1, 8, space);
        if b.get(v0) != Some(&quote) {
            continue;
        }
        let v = v0 + 1;
        let mut end = v;
        while end < b.len() && b[end] != quote && b[end] != b'\n' {
            end += if b[end] == b'\\' { 2 } else { 1 };
        }
        let end = end.min(b.len());
        if end > v {
            field_value(b, v, end, field, cands);
            from = from.max(end);
        }
    }
}
