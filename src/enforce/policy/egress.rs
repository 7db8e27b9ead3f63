//! The egress check: the hosts of URL-shaped strings in a call's arguments
//! against an allow list.
//!
//! What is checked: every string value and object member name anywhere in
//! the arguments, split at whitespace; in each piece, every
//! occurrence of `://` with the scheme letters before it starts a URL that
//! runs to the end of the piece (trailing `)]}>"',.;:!` dropped). Its host
//! is read twice, by the WHATWG parser (the `url` crate:
//! `https://evil.com@good.com` goes to `good.com`) and literally (the text
//! between `://` and the first `/`, `?` or `#`, after the last `@`, without
//! a port), and both must be allowed. A URL that does not parse, or has no
//! host (other than `file:`), is blocked. So are the forms a WHATWG parser
//! (Node's `URL`, `fetch`) resolves to a host without `://`
//! (`https:evil.com`, `https:/evil.com`, `https:\\evil.com`) and pieces
//! starting `//host` (protocol-relative): they have no literal host.
//!
//! What is not: bare host names and `www.` forms without a scheme, hosts inside encoded payloads (base64, percent-encoded
//! arguments), and where a redirect leads.

use serde_json::Value;
use std::net::IpAddr;

/// One entry of `egress.allow`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HostPattern {
    /// `example.com`: that host only.
    Exact(String),
    /// `*.example.com`: strict sub-domains of `example.com` (stored as
    /// `.example.com`), not `example.com` itself.
    Suffix(String),
    /// An IP literal (`127.0.0.1`, `::1` or `[::1]`), compared as an address.
    Ip(IpAddr),
}

impl HostPattern {
    pub(crate) fn parse(text: &str) -> Result<HostPattern, &'static str> {
        if let Some(ip) = parse_ip(text) {
            return Ok(HostPattern::Ip(ip));
        }
        let lower = normalise_domain(text);
        let (pattern, name) = match lower.strip_prefix("*.") {
            Some(rest) => (HostPattern::Suffix(format!(".{rest}")), rest.to_owned()),
            None => (HostPattern::Exact(lower.clone()), lower),
        };
        let valid = !name.is_empty()
            && name.split('.').all(|label| {
                !label.is_empty()
                    && label
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            });
        if valid {
            Ok(pattern)
        } else {
            Err(
                "a host is a domain name (letters, digits, `-`, `_`), `*.` and a domain name, or an IP address",
            )
        }
    }

    fn matches(&self, host: &Host) -> bool {
        match (self, host) {
            (HostPattern::Ip(a), Host::Ip(b)) => a == b,
            (HostPattern::Exact(a), Host::Domain(b)) => a == b,
            (HostPattern::Suffix(s), Host::Domain(b)) => {
                b.len() > s.len() && b.ends_with(s.as_str())
            }
            _ => false,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Host {
    Domain(String),
    Ip(IpAddr),
}

impl Host {
    fn read(text: &str) -> Host {
        match parse_ip(text) {
            Some(ip) => Host::Ip(ip),
            None => Host::Domain(normalise_domain(text)),
        }
    }

    fn shown(&self) -> String {
        let text = match self {
            Host::Domain(d) => d.clone(),
            Host::Ip(ip) => ip.to_string(),
        };
        // One line, bounded, printable.
        text.chars()
            .take(253)
            .map(|c| if c.is_control() { '?' } else { c })
            .collect()
    }
}

fn parse_ip(text: &str) -> Option<IpAddr> {
    let bare = text
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .unwrap_or(text);
    bare.parse().ok()
}

fn normalise_domain(text: &str) -> String {
    let lower = text.to_lowercase();
    lower.strip_suffix('.').unwrap_or(&lower).to_owned()
}

/// Why a call fails the egress check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// A URL whose host is not allowed (the host, for the reason).
    Host(String),
    /// A URL-shaped string whose host cannot be read.
    Unparsable,
}

/// The first URL in `args` that `allow` does not allow.
pub(crate) fn check(args: &Value, allow: &[HostPattern]) -> Option<Refusal> {
    let mut keys = Vec::new();
    collect_keys(args, &mut keys, 0);
    let strings = super::pointer::strings(args);
    for s in strings
        .iter()
        .copied()
        .chain(keys.iter().map(String::as_str))
    {
        if !s.contains(':') && !s.contains("//") {
            continue;
        }
        for piece in s.split_whitespace() {
            for url in urls_in(piece) {
                if let Some(refusal) = check_url(url, allow) {
                    return Some(refusal);
                }
            }
            // Forms a WHATWG parser (Node's URL, fetch) resolves to a host
            // without `://`: `https:evil.com`, `https:/evil.com`,
            // `https:\\evil.com`, and protocol-relative `//evil.com`. They
            // have no literal host to compare, so they are refused.
            if loose_url(piece) {
                return Some(Refusal::Unparsable);
            }
        }
    }
    None
}

/// Object keys anywhere in `v` (URLs can hide there too).
fn collect_keys(v: &Value, out: &mut Vec<String>, depth: u32) {
    if depth > 128 {
        return;
    }
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                out.push(k.clone());
                collect_keys(v, out, depth + 1);
            }
        }
        Value::Array(a) => a.iter().for_each(|v| collect_keys(v, out, depth + 1)),
        _ => {}
    }
}

/// True when `piece` holds a special-scheme URL written without `//`
/// after the colon, or starts like a protocol-relative URL.
fn loose_url(piece: &str) -> bool {
    let p = piece.trim_start_matches(['(', '[', '{', '<', '"', '\'', '=']);
    if p.starts_with("//")
        && p.as_bytes()
            .get(2)
            .is_some_and(|b| b.is_ascii_alphanumeric())
    {
        return true;
    }
    let lower = p.to_ascii_lowercase();
    for scheme in ["http:", "https:", "ws:", "wss:", "ftp:"] {
        let mut from = 0;
        while let Some(i) = lower[from..].find(scheme) {
            let at = from + i;
            let boundary = at == 0 || !is_scheme_byte(lower.as_bytes()[at - 1]);
            let after = &lower[at + scheme.len()..];
            if boundary
                && !after.starts_with("//")
                && after
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == '/' || c == '\\')
            {
                return true;
            }
            from = at + scheme.len();
        }
    }
    false
}

fn check_url(text: &str, allow: &[HostPattern]) -> Option<Refusal> {
    let Ok(url) = url::Url::parse(text) else {
        return Some(Refusal::Unparsable);
    };
    let parsed = match url.host() {
        Some(url::Host::Domain(d)) => Host::read(d),
        Some(url::Host::Ipv4(ip)) => Host::Ip(IpAddr::V4(ip)),
        Some(url::Host::Ipv6(ip)) => Host::Ip(IpAddr::V6(ip)),
        None if url.scheme() == "file" => return None,
        None => return Some(Refusal::Unparsable),
    };
    if url.scheme() == "file"
        && matches!(&parsed, Host::Domain(d) if d.is_empty() || d == "localhost")
    {
        return None;
    }
    let literal = literal_host(text).map(Host::read);
    for host in std::iter::once(Some(parsed)).chain(std::iter::once(literal)) {
        match host {
            None => return Some(Refusal::Unparsable),
            Some(h) if !allow.iter().any(|p| p.matches(&h)) => {
                return Some(Refusal::Host(h.shown()));
            }
            Some(_) => {}
        }
    }
    None
}

/// The host as written: after `://`, up to `/`, `?` or `#`, after the last
/// `@`, without a `:port`.
fn literal_host(url: &str) -> Option<&str> {
    let (_, rest) = url.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host_port = authority.rsplit('@').next().unwrap_or(authority);
    let host = if host_port.starts_with('[') {
        let end = host_port.find(']')?;
        &host_port[..=end]
    } else {
        host_port.split(':').next().unwrap_or(host_port)
    };
    (!host.is_empty()).then_some(host)
}

/// The URLs starting in one whitespace-free piece of text.
fn urls_in(piece: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(found) = piece[from..].find("://") {
        let at = from + found;
        let bytes = piece.as_bytes();
        let mut start = at;
        while start > 0 && is_scheme_byte(bytes[start - 1]) {
            start -= 1;
        }
        // A scheme starts with a letter.
        while start < at && !bytes[start].is_ascii_alphabetic() {
            start += 1;
        }
        let url = piece[start..]
            .trim_end_matches([')', ']', '}', '>', '"', '\'', ',', '.', ';', ':', '!']);
        out.push(url);
        from = at + 3;
    }
    out
}

fn is_scheme_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'+' || b == b'-' || b == b'.'
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn allow(list: &[&str]) -> Vec<HostPattern> {
        list.iter()
            .map(|h| HostPattern::parse(h).unwrap())
            .collect()
    }

    #[test]
    fn finds_urls_inside_text() {
        assert_eq!(urls_in("(https://a.com/x)."), vec!["https://a.com/x"]);
        assert_eq!(
            urls_in("https://a.com/?r=https://b.com"),
            vec!["https://a.com/?r=https://b.com", "https://b.com"]
        );
        assert_eq!(urls_in("\"u\":\"http://c.com\"}"), vec!["http://c.com"]);
        assert_eq!(urls_in("://x"), vec!["://x"]);
    }

    #[test]
    fn literal_host_reading() {
        assert_eq!(literal_host("https://u:p@h.com:8/x"), Some("h.com"));
        assert_eq!(literal_host("https://[::1]:8/"), Some("[::1]"));
        assert_eq!(literal_host("https:///x"), None);
    }

    #[test]
    fn both_readings_must_be_allowed() {
        let a = allow(&["good.com"]);
        // The WHATWG parser reads `\` as `/` (host good.com); the literal
        // reading sees evil.com after the `@`.
        let args = json!({"u": "https://good.com\\@evil.com/"});
        assert_eq!(check(&args, &a), Some(Refusal::Host("evil.com".into())));
        assert_eq!(check(&json!({"u": "https://GOOD.com./x"}), &a), None);
        assert_eq!(
            check(&json!({"u": "https://%67ood.com/"}), &a),
            Some(Refusal::Host("%67ood.com".into()))
        );
    }

    #[test]
    fn file_urls_are_not_egress() {
        assert_eq!(check(&json!(["file:///etc/passwd"]), &[]), None);
        assert_eq!(
            check(&json!(["file://evil.com/x"]), &[]),
            Some(Refusal::Host("evil.com".into()))
        );
    }

    #[test]
    fn patterns() {
        assert!(HostPattern::parse("*.x.com").is_ok());
        assert!(HostPattern::parse("a*.x.com").is_err());
        assert!(HostPattern::parse("").is_err());
        assert!(HostPattern::parse("*.").is_err());
        assert_eq!(
            HostPattern::parse("[::1]").unwrap(),
            HostPattern::Ip("::1".parse().unwrap())
        );
    }
}
