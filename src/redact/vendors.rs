//! Vendor tokens: the data-driven table [`VENDOR_PREFIXES`] (prefix, body
//! charset, length bounds, shape check), its scanner, and the AWS secret
//! access key after its name.

use super::*;

/// The allowed bytes of a vendor token's body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Charset {
    /// `[A-Za-z0-9]`
    Alnum,
    /// `[A-Z0-9]`
    UpperDigit,
    /// `[A-Za-z0-9_]`
    AlnumUnderscore,
    /// `[A-Za-z0-9_-]`
    Base64Url,
    /// `[A-Za-z0-9-]`
    AlnumDash,
    /// `[A-Za-z0-9/_-]`
    UrlPath,
    /// `[A-Za-z0-9_.-]`
    DottedBase64Url,
    /// `[0-9a-fA-F]`
    Hex,
}

impl Charset {
    /// Whether `c` may appear in a body of this charset.
    pub fn contains(self, c: u8) -> bool {
        match self {
            Charset::Alnum => c.is_ascii_alphanumeric(),
            Charset::UpperDigit => c.is_ascii_uppercase() || c.is_ascii_digit(),
            Charset::AlnumUnderscore => c.is_ascii_alphanumeric() || c == b'_',
            Charset::Base64Url => c.is_ascii_alphanumeric() || c == b'_' || c == b'-',
            Charset::AlnumDash => c.is_ascii_alphanumeric() || c == b'-',
            Charset::UrlPath => c.is_ascii_alphanumeric() || matches!(c, b'/' | b'_' | b'-'),
            Charset::DottedBase64Url => {
                c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.')
            }
            Charset::Hex => c.is_ascii_hexdigit(),
        }
    }
}

/// An extra check on a vendor token's body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Shape {
    /// Any body in the charset and length bounds.
    Any,
    /// At least two of upper case, lower case and digits (rules out
    /// hyphenated words such as `sk-learn-compatible-pipeline`).
    Mixed,
    /// SendGrid: `id.secret`, exactly one `.`, both sides at least 16 long.
    DotPair,
}

/// One row of the vendor-token table.
#[derive(Debug, Clone, Copy)]
pub struct VendorPrefix {
    /// The kind reported.
    pub kind: SecretKind,
    /// The literal prefix (case-sensitive).
    pub prefix: &'static str,
    /// What the body after the prefix consists of.
    pub charset: Charset,
    /// Shortest body.
    pub min_len: usize,
    /// Longest body; a longer run is not this token.
    pub max_len: usize,
    /// Extra check on the body.
    pub shape: Shape,
}

pub(super) const fn vp(
    kind: SecretKind,
    prefix: &'static str,
    charset: Charset,
    min_len: usize,
    max_len: usize,
    shape: Shape,
) -> VendorPrefix {
    VendorPrefix {
        kind,
        prefix,
        charset,
        min_len,
        max_len,
        shape,
    }
}

pub(super) const UNBOUNDED: usize = usize::MAX;

/// The vendor-token table. At one position the first matching row wins, so
/// longer prefixes come before their own prefixes (`sk-ant-` before `sk-`).
pub const VENDOR_PREFIXES: &[VendorPrefix] = {
    use Charset as C;
    use SecretKind as K;
    use Shape as S;
    &[
        vp(K::AwsAccessKey, "AKIA", C::UpperDigit, 16, 16, S::Any),
        vp(K::AwsAccessKey, "ASIA", C::UpperDigit, 16, 16, S::Any),
        vp(
            K::GithubToken,
            "github_pat_",
            C::AlnumUnderscore,
            22,
            UNBOUNDED,
            S::Any,
        ),
        vp(K::GithubToken, "ghp_", C::Alnum, 36, UNBOUNDED, S::Any),
        vp(K::GithubToken, "gho_", C::Alnum, 36, UNBOUNDED, S::Any),
        vp(K::GithubToken, "ghu_", C::Alnum, 36, UNBOUNDED, S::Any),
        vp(K::GithubToken, "ghs_", C::Alnum, 36, UNBOUNDED, S::Any),
        vp(K::GithubToken, "ghr_", C::Alnum, 36, UNBOUNDED, S::Any),
        vp(
            K::GitlabToken,
            "glpat-",
            C::Base64Url,
            20,
            UNBOUNDED,
            S::Any,
        ),
        vp(K::SlackToken, "xoxa-", C::AlnumDash, 10, UNBOUNDED, S::Any),
        vp(K::SlackToken, "xoxb-", C::AlnumDash, 10, UNBOUNDED, S::Any),
        vp(K::SlackToken, "xoxp-", C::AlnumDash, 10, UNBOUNDED, S::Any),
        vp(K::SlackToken, "xoxr-", C::AlnumDash, 10, UNBOUNDED, S::Any),
        vp(K::SlackToken, "xoxs-", C::AlnumDash, 10, UNBOUNDED, S::Any),
        vp(
            K::SlackWebhook,
            "https://hooks.slack.com/services/",
            C::UrlPath,
            20,
            UNBOUNDED,
            S::Any,
        ),
        vp(
            K::AnthropicKey,
            "sk-ant-",
            C::Base64Url,
            20,
            UNBOUNDED,
            S::Mixed,
        ),
        vp(K::StripeKey, "sk_live_", C::Alnum, 16, UNBOUNDED, S::Any),
        vp(K::StripeKey, "rk_live_", C::Alnum, 16, UNBOUNDED, S::Any),
        vp(K::StripeKey, "sk_test_", C::Alnum, 16, UNBOUNDED, S::Any),
        vp(K::StripeKey, "rk_test_", C::Alnum, 16, UNBOUNDED, S::Any),
        vp(
            K::OpenaiKey,
            "sk-proj-",
            C::Base64Url,
            20,
            UNBOUNDED,
            S::Mixed,
        ),
        vp(K::OpenaiKey, "sk-", C::Base64Url, 20, UNBOUNDED, S::Mixed),
        vp(K::GoogleApiKey, "AIza", C::Base64Url, 35, 35, S::Any),
        vp(K::NpmToken, "npm_", C::Alnum, 36, 36, S::Any),
        vp(
            K::PypiToken,
            "pypi-AgEI",
            C::Base64Url,
            16,
            UNBOUNDED,
            S::Any,
        ),
        vp(
            K::SendgridKey,
            "SG.",
            C::DottedBase64Url,
            33,
            128,
            S::DotPair,
        ),
        vp(K::TwilioKey, "SK", C::Hex, 32, 32, S::Any),
    ]
};

pub(super) fn vendor_tokens(b: &[u8], cands: &mut Vec<Cand>) {
    // Per row: a failed match of an unbounded row at a run ending at `dead`
    // means no start before `dead` can match that row either (a suffix of a
    // failing body fails the same length, shape and boundary checks).
    let mut dead = [0usize; 64];
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if !matches!(
            c,
            b'A' | b'g' | b'x' | b'h' | b's' | b'r' | b'n' | b'p' | b'S'
        ) || prev_alnum(b, i)
        {
            i += 1;
            continue;
        }
        let mut matched = None;
        for (row, vp) in VENDOR_PREFIXES.iter().enumerate() {
            let p = vp.prefix.as_bytes();
            if p[0] != c || !b[i..].starts_with(p) || dead.get(row).is_some_and(|&d| i < d) {
                continue;
            }
            let body = i + p.len();
            let limit = body
                .saturating_add(vp.max_len.saturating_add(1))
                .min(b.len());
            let end = run_end(&b[..limit], body, |x| vp.charset.contains(x));
            let len = end - body;
            let ok = len >= vp.min_len
                && len <= vp.max_len
                && !b
                    .get(end)
                    .is_some_and(|x| x.is_ascii_alphanumeric() || vp.charset.contains(*x))
                && shape_ok(vp.shape, &b[body..end]);
            if ok {
                matched = Some((end, vp.kind));
                break;
            }
            if vp.max_len == UNBOUNDED && row < dead.len() {
                dead[row] = end;
            }
        }
        match matched {
            Some((end, kind)) => {
                push(cands, i, end, kind);
                i = end;
            }
            None => i += 1,
        }
    }
}

pub(super) fn shape_ok(shape: Shape, body: &[u8]) -> bool {
    match shape {
        Shape::Any => true,
        Shape::Mixed => {
            let upper = body.iter().any(u8::is_ascii_uppercase);
            let lower = body.iter().any(u8::is_ascii_lowercase);
            let digit = body.iter().any(u8::is_ascii_digit);
            usize::from(upper) + usize::from(lower) + usize::from(digit) >= 2
        }
        Shape::DotPair => {
            let mut parts = body.split(|&c| c == b'.');
            match (parts.next(), parts.next(), parts.next()) {
                (Some(a), Some(b), None) => a.len() >= 16 && b.len() >= 16,
                _ => false,
            }
        }
    }
}

pub(super) fn aws_secret(b: &[u8], lower: &[u8], cands: &mut Vec<Cand>) {
    let is_b64 = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'/' | b'+' | b'=');
    for i in memmem::find_iter(lower, b"aws_secret_access_key") {
        let mut j = i + 21;
        j = skip_upto(b, j, 8, |c| matches!(c, b' ' | b'\t' | b'"' | b'\''));
        if !matches!(b.get(j), Some(b'=' | b':')) {
            continue;
        }
        j = skip_upto(b, j + 1, 8, |c| matches!(c, b' ' | b'\t' | b'"' | b'\''));
        let limit = (j + 41).min(b.len());
        let end = run_end(&b[..limit], j, is_b64);
        if end - j == 40 && !b.get(end).is_some_and(|&c| is_b64(c)) {
            push(cands, j, end, SecretKind::AwsSecretKey);
        }
    }
}

/// Skip at most `max` bytes satisfying `f` from `i`.
pub(super) fn skip_upto(b: &[u8], mut i: usize, max: usize, f: impl Fn(u8) -> bool) -> usize {
    let stop = i.saturating_add(max);
    while i < b.len() && i < stop && f(b[i]) {
        i += 1;
    }
    i
}
