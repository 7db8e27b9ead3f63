//! Redacted copies of MCP tool-call arguments for the evidence log.
//!
//! `vouch wrap` records every `tools/call` it sees. Next to the SHA-256 of the
//! exact argument bytes (which is what the chain commits to) it writes a
//! *redacted copy* of the arguments so that an operator can read what a tool
//! was asked to do without the log becoming a store of credentials. This
//! module builds that copy: [`redact`] walks a parsed JSON value and replaces
//! every secret-shaped substring of every string (and of every object key) by
//! `[REDACTED:KIND]`, where `KIND` is the [`SecretKind`] in snake_case. The
//! rest of each string is kept. Numbers, booleans and null are unchanged.
//!
//! Redaction is for the log copy only: the digest of the exact argument bytes
//! is recorded beside it, so masking never weakens integrity. A reviewer who
//! holds the original arguments can always check them against the digest.
//!
//! # What is masked
//!
//! - `private_key`: PEM blocks whose label contains `PRIVATE KEY` (RSA, EC,
//!   DSA, OPENSSH, ENCRYPTED, PKCS#8, PGP), from `-----BEGIN` to the matching
//!   `-----END …-----`, or to the end of the string when unterminated; PuTTY
//!   key files from `PuTTY-User-Key-File-` to the end of the `Private-MAC:`
//!   line (or the end of the string).
//! - vendor tokens, from the data-driven table [`VENDOR_PREFIXES`] (prefix,
//!   body charset, body length bounds, shape check): AWS access key ids,
//!   GitHub, GitLab, Slack (tokens and webhook URLs), OpenAI, Anthropic,
//!   Stripe, Google API keys, npm, PyPI, SendGrid, Twilio. The byte before a
//!   token must not be ASCII alphanumeric, nor the byte after it. The whole
//!   token, prefix included, is masked.
//! - `aws_secret_key`: a 40-character base64 value after
//!   `aws_secret_access_key` and `=` or `:`.
//! - `jwt`: three (or five, JWE) base64url segments joined by `.`, the first
//!   starting `eyJ`, each at least 4 characters.
//! - `bearer`: the credential after `Bearer ` (it must be at least 8
//!   characters with a letter and a digit), after `Basic ` (it must be base64
//!   of something with a `:`), and after `Authorization:` / `Authorization=`
//!   (to the end of the line or the closing quote). The scheme word is kept.
//! - `url_credentials`: the password of `scheme://user:password@host` (the
//!   user and host are kept), and the value of a query parameter whose name
//!   is secret-like (`token`, `access_token`, `api_key`, `apikey`, `key`,
//!   `secret`, `password`, `sig`, `signature`, …).
//! - `secret_field`: the whole (non-empty) string value of an object member
//!   whose name is secret-like (see below), also inside arrays directly under
//!   such a member; the value of `KEY=VALUE` assignments in text
//!   (`DB_PASSWORD=hunter2`, `export GITHUB_TOKEN=…`, `--password=…`) and of
//!   `"key": "value"` pairs inside JSON or Python text embedded in a string.
//!   Members named `authorization` keep their scheme word and are reported
//!   as `bearer`; `aws_secret_access_key` is reported as `aws_secret_key`.
//! - `high_entropy`: a maximal run of at least 32 characters from
//!   `[A-Za-z0-9+/=_-]` with at least three of the four classes (upper,
//!   lower, digit, symbol) and a Shannon entropy of at least 4.0 bits per
//!   character. Base64 data of any size is masked too: it cannot be told
//!   apart from key material.
//!
//! A name is secret-like when, after splitting it into words (on any
//! non-alphanumeric character and at camelCase humps) and lower-casing, it is
//! one of a list of exact names (`password`, `token`, `api_key`, `cookie`,
//! `session`, `credentials`, …, compared with `_` and `-` removed), or when
//! one of its words is `password`, `passwd`, `pwd`, `passphrase`, `secret`,
//! `token`, `credential(s)`, `cookie`, `apikey` (or the word pairs
//! `api key`, `private key`, `signing key`, `encryption key`, `master key`)
//! and its last word is not a descriptive suffix such as `count`, `hint`,
//! `limit`, `type`, `name`, `id`, `url`, `file`, `path` (so `token_count`,
//! `password_hint`, `max_tokens`, `GITHUB_TOKEN_FILE` are not secret-like;
//! `password_hint` is a decision: a hint is meant to be shown).
//!
//! # What is deliberately not masked
//!
//! - Hexadecimal runs (SHA-1/SHA-256 digests, git commit ids, `sha256:…`)
//!   and UUIDs: they are everywhere in legitimate arguments and are not
//!   secrets. A run counts as hexadecimal when at most one in sixteen of its
//!   characters is outside `[0-9A-Fa-f_=-]`. A hex-encoded secret is
//!   therefore only masked by context (a secret-like name, a `KEY=` or
//!   `?key=`).
//! - Subresource-integrity digests (`sha256-…`, `sha384-…`, `sha512-…`).
//! - Identifiers and paths: a high-entropy candidate whose `/`-separated
//!   pieces are all "word-like" (no letter right after a digit, and every
//!   camelCase hump followed by at least two lower-case letters) is kept, so
//!   `/home/user/projects/vouch/src/main.rs` and `getUserAccountSettings_v2`
//!   stay readable.
//! - Prose: the words `password`, `token`, `Bearer` and `Basic` on their own,
//!   e-mail addresses, URLs without credentials, `$VAR` / `${VAR}`
//!   references as the value of an assignment.
//! - Numbers and booleans, even under a secret-like name (the redacted copy
//!   keeps the JSON types; put secrets in strings).
//! - `name: value` assignments in YAML-like text (too many false positives).
//!
//! # Output
//!
//! [`Redacted::masked`] lists every masking as an RFC 6901 pointer and a
//! kind, in the order the value is walked (object members in the input
//! [`serde_json::Map`]'s iteration order; for each member first its key, then
//! its value; within a string left to right). Pointers address the
//! **redacted** value, so they never contain the text of a masked key. A
//! masked key becomes `[REDACTED:KIND]`, made unique within its object by
//! appending `#2`, `#3`, … where needed. Overlapping detections are merged
//! into one mask with the kind of the leftmost (then longest, then most
//! specific) detection. The marker text is recognised on input, so
//! redacting a redacted copy changes nothing.
//!
//! # Bounds
//!
//! Every detector is a hand-written scanner that moves forward through the
//! string and skips past each match, so the work is linear in the input
//! (each string is scanned at most [`MAX_PASSES`] times). Containers nested
//! deeper than [`MAX_DEPTH`] are replaced by `[REDACTED:too_deep]`. At most
//! [`MAX_MASKED`] entries (and [`MAX_POINTER_BYTES`] bytes of pointers) are
//! recorded; masking continues beyond that, and a final entry with an empty
//! pointer and kind `truncated` says the list is incomplete. No input makes
//! [`redact`] panic.

use memchr::memmem;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};

/// What kind of secret was masked (never its value).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum SecretKind {
    /// A PEM private key block or a PuTTY key file.
    PrivateKey,
    /// An AWS access key id (`AKIA…`, `ASIA…`).
    AwsAccessKey,
    /// An AWS secret access key after `aws_secret_access_key`.
    AwsSecretKey,
    /// A GitHub token (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`, `github_pat_`).
    GithubToken,
    /// A GitLab personal access token (`glpat-`).
    GitlabToken,
    /// A Slack token (`xoxb-`, `xoxp-`, …).
    SlackToken,
    /// A Slack incoming-webhook URL.
    SlackWebhook,
    /// An OpenAI API key (`sk-`, `sk-proj-`).
    OpenaiKey,
    /// An Anthropic API key (`sk-ant-`).
    AnthropicKey,
    /// A Stripe secret or restricted key (`sk_live_`, `rk_live_`, …).
    StripeKey,
    /// A Google API key (`AIza…`).
    GoogleApiKey,
    /// An npm access token (`npm_`).
    NpmToken,
    /// A PyPI API token (`pypi-AgEI…`).
    PypiToken,
    /// A SendGrid API key (`SG.x.y`).
    SendgridKey,
    /// A Twilio API key sid (`SK` + 32 hex).
    TwilioKey,
    /// A JSON Web Token (or JWE).
    Jwt,
    /// An HTTP `Authorization` credential (Bearer, Basic, other schemes).
    Bearer,
    /// A password in a URL's userinfo or a secret-like query parameter.
    UrlCredentials,
    /// A value named as a secret (object member, `KEY=VALUE`, `"key": "v"`).
    SecretField,
    /// A long random-looking base64/base62 run.
    HighEntropy,
    /// A container nested deeper than [`MAX_DEPTH`], replaced whole.
    TooDeep,
    /// Not a masking: the final entry of a `masked` list that hit its cap.
    Truncated,
}

impl SecretKind {
    /// Every kind, in declaration order.
    pub const ALL: &'static [SecretKind] = &[
        SecretKind::PrivateKey,
        SecretKind::AwsAccessKey,
        SecretKind::AwsSecretKey,
        SecretKind::GithubToken,
        SecretKind::GitlabToken,
        SecretKind::SlackToken,
        SecretKind::SlackWebhook,
        SecretKind::OpenaiKey,
        SecretKind::AnthropicKey,
        SecretKind::StripeKey,
        SecretKind::GoogleApiKey,
        SecretKind::NpmToken,
        SecretKind::PypiToken,
        SecretKind::SendgridKey,
        SecretKind::TwilioKey,
        SecretKind::Jwt,
        SecretKind::Bearer,
        SecretKind::UrlCredentials,
        SecretKind::SecretField,
        SecretKind::HighEntropy,
        SecretKind::TooDeep,
        SecretKind::Truncated,
    ];

    /// The snake_case name, as serialized and as written in markers.
    pub fn as_str(self) -> &'static str {
        match self {
            SecretKind::PrivateKey => "private_key",
            SecretKind::AwsAccessKey => "aws_access_key",
            SecretKind::AwsSecretKey => "aws_secret_key",
            SecretKind::GithubToken => "github_token",
            SecretKind::GitlabToken => "gitlab_token",
            SecretKind::SlackToken => "slack_token",
            SecretKind::SlackWebhook => "slack_webhook",
            SecretKind::OpenaiKey => "openai_key",
            SecretKind::AnthropicKey => "anthropic_key",
            SecretKind::StripeKey => "stripe_key",
            SecretKind::GoogleApiKey => "google_api_key",
            SecretKind::NpmToken => "npm_token",
            SecretKind::PypiToken => "pypi_token",
            SecretKind::SendgridKey => "sendgrid_key",
            SecretKind::TwilioKey => "twilio_key",
            SecretKind::Jwt => "jwt",
            SecretKind::Bearer => "bearer",
            SecretKind::UrlCredentials => "url_credentials",
            SecretKind::SecretField => "secret_field",
            SecretKind::HighEntropy => "high_entropy",
            SecretKind::TooDeep => "too_deep",
            SecretKind::Truncated => "truncated",
        }
    }

    /// The kind named `name` (snake_case), if any.
    pub fn from_name(name: &str) -> Option<SecretKind> {
        SecretKind::ALL.iter().copied().find(|k| k.as_str() == name)
    }

    /// The text that replaces a masked substring: `[REDACTED:KIND]`.
    pub fn marker(self) -> String {
        format!("[REDACTED:{}]", self.as_str())
    }

    /// How specific a detection is; the higher wins a tie on the same span.
    fn priority(self) -> u8 {
        match self {
            SecretKind::HighEntropy => 1,
            SecretKind::SecretField => 2,
            SecretKind::Bearer | SecretKind::UrlCredentials => 3,
            SecretKind::PrivateKey | SecretKind::Jwt => 4,
            _ => 5,
        }
    }
}

impl std::fmt::Display for SecretKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Every kind [`redact`] can report, detections first, then `too_deep` and
/// `truncated`.
pub fn kinds() -> &'static [SecretKind] {
    SecretKind::ALL
}

/// One masked secret: where (RFC 6901 pointer into the redacted arguments)
/// and what kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Masked {
    pub pointer: String,
    pub kind: SecretKind,
}

/// The redacted copy and what was masked in it.
#[derive(Debug, Clone, PartialEq)]
pub struct Redacted {
    pub value: serde_json::Value,
    pub masked: Vec<Masked>,
}

/// Containers nested deeper than this (the root is at depth 0) are replaced
/// by `[REDACTED:too_deep]`; serde_json's parser stops at 128 levels too.
pub const MAX_DEPTH: usize = 128;
/// The most entries recorded in [`Redacted::masked`] (plus one `truncated`).
pub const MAX_MASKED: usize = 1000;
/// The most bytes of pointer text recorded in [`Redacted::masked`].
pub const MAX_POINTER_BYTES: usize = 1 << 20;
/// How many times one string is rescanned until nothing new is found.
pub const MAX_PASSES: usize = 3;

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

const fn vp(
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

const UNBOUNDED: usize = usize::MAX;

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

/// A copy of `value` with every secret-shaped substring replaced by
/// `[REDACTED:KIND]`, and the list of what was masked where.
pub fn redact(value: &serde_json::Value) -> Redacted {
    let mut st = Walk {
        masked: Vec::new(),
        pointer_bytes: 0,
        truncated: false,
    };
    let mut pointer = String::new();
    let out = st.value(value, &mut pointer, 0, None);
    let mut masked = st.masked;
    if st.truncated {
        masked.push(Masked {
            pointer: String::new(),
            kind: SecretKind::Truncated,
        });
    }
    Redacted { value: out, masked }
}

/// How the name of the member holding a string makes it secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    /// The whole value is a secret (`secret_field`).
    Secret,
    /// `aws_secret_access_key`: the whole value, as `aws_secret_key`.
    Aws,
    /// `authorization`: keep the scheme word, mask the rest as `bearer`.
    Header,
}

struct Walk {
    masked: Vec<Masked>,
    pointer_bytes: usize,
    truncated: bool,
}

impl Walk {
    fn record(&mut self, pointer: &str, kind: SecretKind) {
        if self.masked.len() >= MAX_MASKED
            || self.pointer_bytes.saturating_add(pointer.len()) > MAX_POINTER_BYTES
        {
            self.truncated = true;
            return;
        }
        self.pointer_bytes += pointer.len();
        self.masked.push(Masked {
            pointer: pointer.to_owned(),
            kind,
        });
    }

    fn value(
        &mut self,
        v: &Value,
        pointer: &mut String,
        depth: usize,
        field: Option<Field>,
    ) -> Value {
        match v {
            Value::Null | Value::Bool(_) | Value::Number(_) => v.clone(),
            Value::String(s) => match redact_str(s, field) {
                None => v.clone(),
                Some((out, kinds)) => {
                    for k in kinds {
                        self.record(pointer, k);
                    }
                    Value::String(out)
                }
            },
            Value::Array(_) | Value::Object(_) if depth >= MAX_DEPTH => {
                self.record(pointer, SecretKind::TooDeep);
                Value::String(SecretKind::TooDeep.marker())
            }
            Value::Array(items) => {
                let mut out = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    let len = pointer.len();
                    pointer.push('/');
                    pointer.push_str(&i.to_string());
                    out.push(self.value(item, pointer, depth + 1, field));
                    pointer.truncate(len);
                }
                Value::Array(out)
            }
            Value::Object(map) => Value::Object(self.object(map, pointer, depth)),
        }
    }

    fn object(
        &mut self,
        map: &Map<String, Value>,
        pointer: &mut String,
        depth: usize,
    ) -> Map<String, Value> {
        // Redact the keys first so that renamed keys can be made unique
        // against every key that stays as it is.
        let keys: Vec<Option<(String, Vec<SecretKind>)>> =
            map.keys().map(|k| redact_str(k, None)).collect();
        let taken: HashSet<&str> = map
            .keys()
            .zip(&keys)
            .filter(|(_, r)| r.is_none())
            .map(|(k, _)| k.as_str())
            .collect();
        let mut owned_taken: HashSet<String> = HashSet::new();
        let mut next_suffix: HashMap<String, usize> = HashMap::new();
        let mut out = Map::new();
        for ((key, v), redacted) in map.iter().zip(keys) {
            let (name, key_kinds) = match redacted {
                None => (key.clone(), Vec::new()),
                Some((base, kinds)) => {
                    let mut name = base.clone();
                    let mut n = next_suffix.get(&base).copied().unwrap_or(2);
                    while taken.contains(name.as_str()) || owned_taken.contains(&name) {
                        name = format!("{base}#{n}");
                        n += 1;
                    }
                    next_suffix.insert(base, n);
                    owned_taken.insert(name.clone());
                    (name, kinds)
                }
            };
            let len = pointer.len();
            crate::json::pointer::push_token(pointer, &name);
            for k in key_kinds {
                self.record(pointer, k);
            }
            let field = field_of(&strip_markers(&name));
            let value = self.value(v, pointer, depth + 1, field);
            pointer.truncate(len);
            out.insert(name, value);
        }
        out
    }
}

/// `name` without the redaction markers in it: a key that was itself a
/// secret says nothing about its value.
fn strip_markers(name: &str) -> std::borrow::Cow<'_, str> {
    let m = Markers::find(name.as_bytes());
    if m.spans.is_empty() {
        return std::borrow::Cow::Borrowed(name);
    }
    let mut out = String::new();
    let mut at = 0;
    for &(s, e) in &m.spans {
        out.push_str(name.get(at..s).unwrap_or(""));
        at = e;
    }
    out.push_str(name.get(at..).unwrap_or(""));
    std::borrow::Cow::Owned(out)
}

/// Redact one string; `None` when nothing was masked.
fn redact_str(s: &str, field: Option<Field>) -> Option<(String, Vec<SecretKind>)> {
    let mut kinds = Vec::new();
    let mut cur: Option<String> = None;
    for _ in 0..MAX_PASSES {
        let input = cur.as_deref().unwrap_or(s);
        match scan_once(input, field) {
            None => break,
            Some((out, k)) => {
                kinds.extend(k);
                cur = Some(out);
            }
        }
    }
    cur.map(|out| (out, kinds))
}

/// One detection: a byte span of the string and its kind.
#[derive(Debug, Clone, Copy)]
struct Cand {
    start: usize,
    end: usize,
    kind: SecretKind,
}

/// The markers already present in a string, to leave them alone.
struct Markers {
    /// Sorted, non-overlapping `(start, end)` spans.
    spans: Vec<(usize, usize)>,
    /// For each span, the end of the run of adjacent markers it starts.
    chain_end: Vec<usize>,
}

impl Markers {
    fn find(b: &[u8]) -> Markers {
        let mut spans = Vec::new();
        for i in memmem::find_iter(b, b"[REDACTED:") {
            let name_start = i + 10;
            let mut j = name_start;
            while j < b.len() && j - name_start <= 20 && (b[j].is_ascii_lowercase() || b[j] == b'_')
            {
                j += 1;
            }
            if j < b.len() && b[j] == b']' {
                let name = std::str::from_utf8(&b[name_start..j]).unwrap_or("");
                if SecretKind::from_name(name).is_some() {
                    spans.push((i, j + 1));
                }
            }
        }
        let mut chain_end = vec![0; spans.len()];
        for k in (0..spans.len()).rev() {
            chain_end[k] = if k + 1 < spans.len() && spans[k + 1].0 == spans[k].1 {
                chain_end[k + 1]
            } else {
                spans[k].1
            };
        }
        Markers { spans, chain_end }
    }

    /// Whether `[start, end)` consists of markers only.
    fn covers(&self, start: usize, end: usize) -> bool {
        let k = self.spans.partition_point(|&(s, _)| s <= start);
        if k == 0 {
            return false;
        }
        let (s, e) = self.spans[k - 1];
        s <= start && start < e && self.chain_end[k - 1] >= end
    }
}

fn scan_once(s: &str, field: Option<Field>) -> Option<(String, Vec<SecretKind>)> {
    let b = s.as_bytes();
    if b.is_empty() {
        return None;
    }
    let lower = b.to_ascii_lowercase();
    let mut cands = Vec::new();
    if let Some(f) = field {
        field_value(b, 0, b.len(), f, &mut cands);
    }
    let public_pem = private_keys(b, &mut cands);
    vendor_tokens(b, &mut cands);
    aws_secret(b, &lower, &mut cands);
    jwts(b, &mut cands);
    bearer(b, &lower, &mut cands);
    authorization(b, &lower, &mut cands);
    url_credentials(b, &mut cands);
    query_params(b, &mut cands);
    assignments(b, &mut cands);
    quoted_pairs(b, &mut cands);
    high_entropy(b, &public_pem, &mut cands);

    let markers = Markers::find(b);
    cands.retain(|c| c.start < c.end && !markers.covers(c.start, c.end));
    if cands.is_empty() {
        return None;
    }
    for c in &mut cands {
        while c.start > 0 && !s.is_char_boundary(c.start) {
            c.start -= 1;
        }
        while c.end < b.len() && !s.is_char_boundary(c.end) {
            c.end += 1;
        }
    }
    cands.sort_by(|x, y| {
        x.start
            .cmp(&y.start)
            .then(y.end.cmp(&x.end))
            .then(y.kind.priority().cmp(&x.kind.priority()))
    });
    let mut merged: Vec<Cand> = Vec::new();
    for c in cands {
        if let Some(last) = merged.last_mut() {
            if c.end <= last.end {
                continue;
            }
            if c.start < last.end {
                last.end = c.end;
                continue;
            }
        }
        merged.push(c);
    }
    let mut out = String::with_capacity(s.len());
    let mut kinds = Vec::with_capacity(merged.len());
    let mut at = 0;
    for c in merged {
        out.push_str(s.get(at..c.start).unwrap_or(""));
        out.push_str("[REDACTED:");
        out.push_str(c.kind.as_str());
        out.push(']');
        kinds.push(c.kind);
        at = c.end;
    }
    out.push_str(s.get(at..).unwrap_or(""));
    if out == s {
        return None;
    }
    Some((out, kinds))
}

fn push(cands: &mut Vec<Cand>, start: usize, end: usize, kind: SecretKind) {
    if start < end {
        cands.push(Cand { start, end, kind });
    }
}

fn is_b64url(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'-'
}

/// End of the run of bytes satisfying `f` starting at `i`.
fn run_end(b: &[u8], mut i: usize, f: impl Fn(u8) -> bool) -> usize {
    while i < b.len() && f(b[i]) {
        i += 1;
    }
    i
}

fn prev_alnum(b: &[u8], i: usize) -> bool {
    i > 0 && b[i - 1].is_ascii_alphanumeric()
}

/// The candidates for a whole string value under a secret-like name.
fn field_value(b: &[u8], start: usize, end: usize, field: Field, cands: &mut Vec<Cand>) {
    match field {
        Field::Secret => push(cands, start, end, SecretKind::SecretField),
        Field::Aws => push(cands, start, end, SecretKind::AwsSecretKey),
        Field::Header => {
            let w = run_end(b, start, |c| c.is_ascii_alphabetic());
            let sp = run_end(b, w, |c| c == b' ' || c == b'\t');
            if w > start && w - start <= 20 && sp > w && sp < end {
                push(cands, sp, end, SecretKind::Bearer);
            } else {
                push(cands, start, end, SecretKind::Bearer);
            }
        }
    }
}

// ---------------------------------------------------------------- PEM, PuTTY

/// PEM private keys and PuTTY key files; returns the bodies of the other
/// PEM blocks (certificates, public keys), which are not high-entropy
/// secrets.
fn private_keys(b: &[u8], cands: &mut Vec<Cand>) -> Vec<(usize, usize)> {
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
fn pem_label(b: &[u8], i: usize) -> Option<(usize, bool)> {
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

// ---------------------------------------------------------------- vendors

fn vendor_tokens(b: &[u8], cands: &mut Vec<Cand>) {
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

fn shape_ok(shape: Shape, body: &[u8]) -> bool {
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

fn aws_secret(b: &[u8], lower: &[u8], cands: &mut Vec<Cand>) {
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
fn skip_upto(b: &[u8], mut i: usize, max: usize, f: impl Fn(u8) -> bool) -> usize {
    let stop = i.saturating_add(max);
    while i < b.len() && i < stop && f(b[i]) {
        i += 1;
    }
    i
}

// ---------------------------------------------------------------- JWT

fn jwts(b: &[u8], cands: &mut Vec<Cand>) {
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

// ---------------------------------------------------------------- HTTP auth

fn is_token68(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_' | b'~' | b'+' | b'/' | b'=')
}

fn bearer(b: &[u8], lower: &[u8], cands: &mut Vec<Cand>) {
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
fn basic_credential(tok: &[u8]) -> bool {
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

fn authorization(b: &[u8], lower: &[u8], cands: &mut Vec<Cand>) {
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

// ---------------------------------------------------------------- URLs

fn url_credentials(b: &[u8], cands: &mut Vec<Cand>) {
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

fn query_params(b: &[u8], cands: &mut Vec<Cand>) {
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

fn query_name_secret(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    matches!(lower.as_str(), "key" | "sig" | "signature" | "auth") || field_of(name).is_some()
}

fn is_name_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.')
}

// ---------------------------------------------------------------- assignments

/// `KEY=VALUE` with a secret-like `KEY`, not inside a query string.
fn assignments(b: &[u8], cands: &mut Vec<Cand>) {
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
fn quoted_pairs(b: &[u8], cands: &mut Vec<Cand>) {
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

// ---------------------------------------------------------------- names

const EXACT_NAMES: &[&str] = &[
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

const SECRET_WORDS: &[&str] = &[
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

const SECRET_PAIRS: &[(&str, &str)] = &[
    ("api", "key"),
    ("private", "key"),
    ("signing", "key"),
    ("encryption", "key"),
    ("master", "key"),
];

const DESCRIPTIVE_SUFFIXES: &[&str] = &[
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
fn words(name: &str) -> Vec<String> {
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
fn field_of(name: &str) -> Option<Field> {
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

// ---------------------------------------------------------------- entropy

fn is_entropy_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'=' | b'_' | b'-')
}

fn high_entropy(b: &[u8], public_pem: &[(usize, usize)], cands: &mut Vec<Cand>) {
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

fn entropy_piece(b: &[u8], mut start: usize, mut end: usize, cands: &mut Vec<Cand>) {
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

fn shannon(s: &[u8]) -> f64 {
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
fn wordish(piece: &[u8]) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn r(v: Value) -> Value {
        redact(&v).value
    }

    #[test]
    fn names() {
        assert_eq!(field_of("password"), Some(Field::Secret));
        assert_eq!(field_of("DB_PASSWORD"), Some(Field::Secret));
        assert_eq!(field_of("clientSecret"), Some(Field::Secret));
        assert_eq!(field_of("X-Api-Key"), Some(Field::Secret));
        assert_eq!(field_of("APIKey"), Some(Field::Secret));
        assert_eq!(field_of("Authorization"), Some(Field::Header));
        assert_eq!(field_of("token_count"), None);
        assert_eq!(field_of("password_hint"), None);
        assert_eq!(field_of("max_tokens"), None);
        assert_eq!(field_of("GITHUB_TOKEN_FILE"), None);
        assert_eq!(field_of("keyboard"), None);
    }

    #[test]
    fn every_vendor_row_is_reachable() {
        // A row shadowed by an earlier row with a prefix of its prefix and
        // the same first byte would never match.
        for (i, a) in VENDOR_PREFIXES.iter().enumerate() {
            for b in &VENDOR_PREFIXES[..i] {
                assert!(
                    !a.prefix.starts_with(b.prefix) || a.prefix == b.prefix,
                    "{} shadowed by {}",
                    a.prefix,
                    b.prefix
                );
            }
        }
        assert!(VENDOR_PREFIXES.len() <= 64);
    }

    #[test]
    fn wordish_cases() {
        assert!(wordish(b"getUserAccountSettingsForTenant"));
        assert!(wordish(b"v2"));
        assert!(!wordish(b"wJalrXUtnFEMI"));
        assert!(!wordish(b"K7MDENG"));
    }

    #[test]
    fn markers_are_left_alone() {
        let v = json!({"password": "[REDACTED:secret_field]", "note": "Bearer [REDACTED:jwt]"});
        assert_eq!(redact(&v).masked, vec![]);
        assert_eq!(r(v.clone()), v);
    }

    #[test]
    fn key_collisions_get_suffixes() {
        let a = format!("ghp_{}", "A1b2C3d4E5".repeat(4));
        let b = format!("ghp_{}", "Z9y8X7w6V5".repeat(4));
        let v = json!({ a: 1, b: 2, "[REDACTED:github_token]#2": 3 });
        let out = redact(&v);
        let obj = out.value.as_object().cloned().unwrap_or_default();
        assert_eq!(obj.len(), 3);
        assert!(obj.contains_key("[REDACTED:github_token]"));
        assert!(obj.contains_key("[REDACTED:github_token]#3"));
    }

    #[test]
    fn too_deep() {
        let mut v = json!("x");
        for _ in 0..(MAX_DEPTH + 5) {
            v = json!([v]);
        }
        let out = redact(&v);
        assert_eq!(out.masked.len(), 1);
        assert_eq!(out.masked[0].kind, SecretKind::TooDeep);
        assert_eq!(out.masked[0].pointer.matches('/').count(), MAX_DEPTH);
        assert_eq!(redact(&out.value).value, out.value);
    }

    #[test]
    fn truncation() {
        let items: Vec<Value> = (0..MAX_MASKED + 10)
            .map(|_| json!("password=hunter2"))
            .collect();
        let out = redact(&Value::Array(items));
        assert_eq!(out.masked.len(), MAX_MASKED + 1);
        assert_eq!(out.masked[MAX_MASKED].kind, SecretKind::Truncated);
        assert_eq!(out.masked[MAX_MASKED].pointer, "");
    }
}
