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

//!
//! # Layout
//!
//! This file holds the kinds, the walk over a JSON value and the per-string
//! loop; [`scan`] finds and merges the candidates of one pass, [`vendors`]
//! holds the vendor-token table, [`detect`] the structured detectors (PEM,
//! JWT, HTTP auth, URLs, assignments), [`names`] the secret-like names and
//! [`entropy`] the high-entropy fallback.
//!
//! # Who uses it
//!
//! `enforce` (the redacted copy of every recorded `tools/call`) and `vet`
//! (a server command line shown in a vet record).

mod detect;
mod entropy;
mod names;
mod scan;
#[cfg(test)]
mod tests;
mod vendors;

use detect::*;
use entropy::*;
use memchr::memmem;
use names::*;
use scan::*;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};
use vendors::*;
pub use vendors::{Charset, Shape, VENDOR_PREFIXES, VendorPrefix};

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
