//! Secret-like names: the exact names, secret words and word pairs, and
//! the descriptive suffixes that make a name not secret (`token_count`).

use super::*;

pub(super) const EXACT_NAMES: &[&str] = &[
    "password",
    "passwd",
    "pwd",
    "passphrase",
    "secret",
    "clientsecret",
    "token",
    "accesstoken",
    "refreshtoken",
    "idtoken",
    "authtoken",
    "apikey",
    "apisecret",
    "privatekey",
    "secretkey",
    "cookie",
    "setcookie",
    "session",
    "sessionid",
    "sessiontoken",
    "credentials",
    "credential",
];

pub(super) const SECRET_WORDS: &[&str] = &[
    "password",
    "passwd",
    "pwd",
    "passphrase",
    "secret",
    "token",
    "credential",
    "credentials",
    "cookie",
    "apikey",
];

pub(super) const SECRET_PAIRS: &[(&str, &str)] = &[
    ("api", "key"),
    ("private", "key"),
    ("signing", "key"),
    ("encryption", "key"),
    ("master", "key"),
];

pub(super) const DESCRIPTIVE_SUFFIXES: &[&str] = &[
    "count",
    "counts",
    "limit",
    "limits",
    "hint",
    "hints",
    "length",
    "len",
    "size",
    "min",
    "max",
    "type",
    "types",
    "kind",
    "name",
    "names",
    "id",
    "ids",
    "url",
    "uri",
    "endpoint",
    "path",
    "file",
    "dir",
    "header",
    "policy",
    "expiry",
    "expires",
    "expiration",
    "ttl",
    "lifetime",
    "at",
    "ms",
    "seconds",
    "enabled",
    "required",
    "set",
    "present",
    "strength",
    "rule",
    "rules",
    "version",
    "usage",
    "format",
    "prompt",
    "label",
    "field",
    "ref",
    "source",
    "provider",
    "algorithm",
    "scheme",
    "scope",
    "scopes",
];

/// Split a name into lower-case words at non-alphanumerics and camelCase
/// humps (`clientSecret` → `client secret`, `APIKey` → `api key`).
pub(super) fn words(name: &str) -> Vec<String> {
    let b = name.as_bytes();
    let mut out = Vec::new();
    let mut cur = String::new();
    for (i, &c) in b.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            continue;
        }
        if c.is_ascii_uppercase() && !cur.is_empty() {
            let prev = b[i - 1];
            let next_lower = b.get(i + 1).is_some_and(u8::is_ascii_lowercase);
            if prev.is_ascii_lowercase()
                || prev.is_ascii_digit()
                || (prev.is_ascii_uppercase() && next_lower)
            {
                out.push(std::mem::take(&mut cur));
            }
        }
        cur.push(c.to_ascii_lowercase() as char);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Whether a member, variable or parameter name says its value is secret.
pub(super) fn field_of(name: &str) -> Option<Field> {
    if name.len() > 128 || name.is_empty() {
        return None;
    }
    let w = words(name);
    let joined: String = w.concat();
    match joined.as_str() {
        "authorization" | "proxyauthorization" => return Some(Field::Header),
        "awssecretaccesskey" => return Some(Field::Aws),
        _ => {}
    }
    if EXACT_NAMES.contains(&joined.as_str()) {
        return Some(Field::Secret);
    }
    let last = w.last()?;
    if DESCRIPTIVE_SUFFIXES.contains(&last.as_str()) {
        return None;
    }
    let word = w.iter().any(|x| SECRET_WORDS.contains(&x.as_str()));
    let pair = w
        .windows(2)
        .any(|p| SECRET_PAIRS.iter().any(|(a, b)| p[0] == *a && p[1] == *b));
    (word || pair).then_some(Field::Secret)
}
