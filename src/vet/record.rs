//! The chain records of vetting (docs/FORMAT.md §19): `tool_vet`, one
//! verdict per listing the wrapper vetted, and `tool_pin`, one change of a
//! server's pins (first use, an operator's approval or revocation).
//!
//! Both bodies are also signed statements: a `sig` member holds an
//! Ed25519 signature by the log's key over the DSSE pre-authentication
//! encoding of the kind's payload type ([`PIN_PAYLOAD_TYPE`],
//! [`VERDICT_PAYLOAD_TYPE`]) and the RFC 8785 form of the body without
//! `sig`. Pins grant trust and verdicts are what an operator approves, so
//! both are read only when the trust path
//! ([`crate::chain::trust::open_statement`]) accepts that signature: a line
//! appended to the log by someone without the key is ignored even after a
//! later checkpoint covers it. Each pin record names the one it replaces
//! (`prev`), so a genuine record replayed out of place is stale.

use super::scan::{Finding, Severity};
use crate::note::SignerKey;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

pub const KIND_VERDICT: &str = "tool_vet";
pub const KIND_PIN: &str = "tool_pin";
/// The DSSE payload type a `tool_pin` signature is made over.
pub const PIN_PAYLOAD_TYPE: &str = "application/vnd.vouch.tool-pin+json";
/// The DSSE payload type a `tool_vet` signature is made over.
pub const VERDICT_PAYLOAD_TYPE: &str = "application/vnd.vouch.tool-vet+json";
/// `prev` of a server's first pin record.
pub const NO_PIN: &str = "none";

/// The command that starts a server: part of its identity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Launch {
    /// `sha256:` over every argument's length (8 bytes, big-endian) and
    /// raw bytes, program first: exact even for non-UTF-8 arguments.
    pub digest: String,
    /// The command for people: lossy UTF-8, secrets masked.
    pub argv: Vec<String>,
}

impl Launch {
    pub fn of(program: &std::ffi::OsStr, args: &[std::ffi::OsString]) -> Launch {
        use sha2::Digest;
        use std::os::unix::ffi::OsStrExt;
        let mut h = sha2::Sha256::new();
        let mut argv = Vec::new();
        for a in std::iter::once(program).chain(args.iter().map(|a| a.as_os_str())) {
            h.update((a.as_bytes().len() as u64).to_be_bytes());
            h.update(a.as_bytes());
            argv.push(a.to_string_lossy().into_owned());
        }
        let shown = crate::redact::redact(&Value::from(argv.clone())).value;
        let argv = match shown {
            Value::Array(a) => a
                .into_iter()
                .map(|v| v.as_str().unwrap_or_default().to_owned())
                .collect(),
            _ => argv,
        };
        Launch {
            digest: format!("sha256:{}", crate::hex::encode(&h.finalize())),
            argv,
        }
    }
}

/// Which ruleset judged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RulesetRef {
    pub version: String,
    pub digest: String,
}

impl RulesetRef {
    pub fn builtin() -> RulesetRef {
        let r = super::scan::Ruleset::builtin();
        RulesetRef {
            version: r.version().to_owned(),
            digest: r.digest().to_owned(),
        }
    }
}

/// How a pin came to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PinVia {
    /// Trusted on first use by the wrapper (the scan found nothing blocking).
    Tofu,
    /// Approved by an operator at a terminal, findings seen.
    Approved,
}

impl PinVia {
    pub fn as_str(self) -> &'static str {
        match self {
            PinVia::Tofu => "tofu",
            PinVia::Approved => "approved",
        }
    }
}

/// One pinned tool definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PinnedTool {
    /// `sha256:` of the definition's RFC 8785 form.
    pub digest: String,
    pub definition: Value,
    pub via: PinVia,
}

/// Pinned server instructions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PinnedText {
    pub digest: String,
    pub text: String,
    pub via: PinVia,
}

/// What a pin record does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PinEvent {
    Tofu,
    Approve,
    Revoke,
}

impl PinEvent {
    pub fn as_str(self) -> &'static str {
        match self {
            PinEvent::Tofu => "tofu",
            PinEvent::Approve => "approve",
            PinEvent::Revoke => "revoke",
        }
    }
}

/// The verdict an approval or revocation was decided on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reviewed {
    /// Seq of the `tool_vet` record reviewed.
    pub seq: u64,
    /// `sha256:` of that record's body (RFC 8785).
    pub digest: String,
}

/// The `sig` member of a signed body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sig {
    /// `<key name>+<8 hex key id>`.
    pub keyid: String,
    /// Standard base64 of the 64-byte Ed25519 signature.
    pub sig: String,
}

/// The body of a `tool_pin` record: a server's whole pin state after it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PinBody {
    /// The log it belongs to: [`log_id`] of the log's first record, so a
    /// record copied from another log (same key, same id) does not count.
    pub log: String,
    /// The operator's id of the server (`--id`).
    pub server: String,
    pub event: PinEvent,
    /// `sha256:` of the pin record this one replaces, or `none`.
    pub prev: String,
    pub launch: Launch,
    pub tools: BTreeMap<String, PinnedTool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<PinnedText>,
    /// Tools revoked (withheld whatever they look like) until approved.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub revoked: Vec<String>,
    /// The whole server is revoked until approved.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub server_revoked: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reviewed: Option<Reviewed>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub ruleset: RulesetRef,
}

/// Why a tool (or the instructions) is allowed or withheld.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// Equal to its pin.
    Pinned,
    /// First contact: pinned now.
    Tofu,
    /// A finding at or above `block_at`.
    ScanBlocked,
    /// Not pinned, and the server has pins (or approval is required).
    New,
    /// Differs from its pin.
    Changed,
    /// A pinned tool under another name (same semantic hash).
    Renamed,
    /// Revoked by an operator.
    Revoked,
    /// The launch command differs from the pinned one.
    IdentityChanged,
    /// First contact under `--require-approval`.
    PendingApproval,
    /// `on_change = "block_server"`: something else changed.
    ServerBlocked,
    /// The pin history has records that failed their check (docs §19.3).
    PinsUnreadable,
    /// Too large to be recorded, so it cannot be pinned or reviewed.
    TooLarge,
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Pinned => "pinned",
            Reason::Tofu => "tofu",
            Reason::ScanBlocked => "scan_blocked",
            Reason::New => "new",
            Reason::Changed => "changed",
            Reason::Renamed => "renamed",
            Reason::Revoked => "revoked",
            Reason::IdentityChanged => "identity_changed",
            Reason::PendingApproval => "pending_approval",
            Reason::ServerBlocked => "server_blocked",
            Reason::PinsUnreadable => "pins_unreadable",
            Reason::TooLarge => "too_large",
        }
    }

    pub fn allows(self) -> bool {
        matches!(self, Reason::Pinned | Reason::Tofu)
    }
}

/// Allowed to reach the client, or withheld.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Allowed,
    Withheld,
}

/// One tool of a verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolVerdict {
    pub name: String,
    pub digest: String,
    pub status: Status,
    pub reason: Reason,
    /// For a rename: the pinned name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// The pinned digest, when it differs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pinned: Option<String>,
    /// An approved pin allowed it despite blocking findings.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub overridden: bool,
    pub findings: Vec<RecordedFinding>,
    /// The definition, for every tool not allowed as pinned (what an
    /// operator reviews and approves).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub definition: Option<Value>,
}

/// The instructions part of a verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TextVerdict {
    pub digest: String,
    pub status: Status,
    pub reason: Reason,
    pub findings: Vec<RecordedFinding>,
    /// The text, when not allowed as pinned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

/// A finding as recorded (owned strings, so a record reads back).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedFinding {
    pub rule: String,
    pub family: String,
    pub severity: Severity,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub advisory: bool,
    pub pointer: String,
    pub excerpt: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub decoded: bool,
}

impl From<&Finding> for RecordedFinding {
    fn from(f: &Finding) -> Self {
        RecordedFinding {
            rule: f.rule.to_owned(),
            family: f.family.as_str().to_owned(),
            severity: f.severity,
            advisory: f.advisory,
            pointer: f.pointer.clone(),
            excerpt: f.excerpt.clone(),
            decoded: f.decoded,
        }
    }
}

/// What the wrapper does with a changed, added or renamed tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnChange {
    /// Withhold that tool only (quarantine); the others stay.
    #[default]
    Withhold,
    /// Withhold every tool of the server.
    BlockServer,
}

/// The body of a `tool_vet` record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VerdictBody {
    /// The log it belongs to (as in [`PinBody::log`]).
    pub log: String,
    pub server: String,
    pub launch: Launch,
    pub ruleset: RulesetRef,
    pub block_at: Severity,
    pub on_change: OnChange,
    pub require_approval: bool,
    /// `sha256:` over the names and definition digests listed, in order.
    pub listing: String,
    /// The pin record judged against (`sha256:`), or `none`.
    pub pin: String,
    /// Sum of non-advisory finding weights (low 1, medium 3, high 10,
    /// critical 25), capped at 100.
    pub score: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<TextVerdict>,
    pub tools: Vec<ToolVerdict>,
    pub allowed: u64,
    pub withheld: u64,
    /// Set when every tool is withheld for a server-wide reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_blocked: Option<Reason>,
    /// A `tool_pin` (first use) follows.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tofu: bool,
}

/// `sha256:` of a value's RFC 8785 form (the noncanonical fallback of
/// [`crate::mcp::defdiff::full_hash`] for what has none).
pub fn digest_of(v: &Value) -> String {
    format!(
        "sha256:{}",
        crate::hex::encode(&crate::mcp::defdiff::full_hash(v))
    )
}

/// A log's identity for vetting records: `sha256:` of its first record's
/// line (seq 0, without the newline). Unique per log: the line holds its
/// time stamp and body.
pub fn log_id(first_line: &[u8]) -> String {
    use sha2::Digest;
    format!(
        "sha256:{}",
        crate::hex::encode(&sha2::Sha256::digest(first_line))
    )
}

/// `sha256:` of a text.
pub fn text_digest(text: &str) -> String {
    use sha2::Digest;
    format!(
        "sha256:{}",
        crate::hex::encode(&sha2::Sha256::digest(text.as_bytes()))
    )
}

/// The bytes a signature is made over: DSSE PAE of the body without
/// `sig`, in RFC 8785 form.
fn signed_bytes(payload_type: &str, unsigned: &Value) -> Option<Vec<u8>> {
    let c = crate::jcs::to_canonical_vec(unsigned).ok()?;
    Some(crate::dsse::pae(payload_type, &c))
}

/// A body with its `sig` member, ready to be a record; `None` when it has
/// no RFC 8785 form.
pub fn sign_body<T: Serialize>(payload_type: &str, body: &T, key: &SignerKey) -> Option<Value> {
    use base64::Engine;
    let mut v = serde_json::to_value(body).ok()?;
    let msg = signed_bytes(payload_type, &v)?;
    let sig = Sig {
        keyid: format!("{}+{:08x}", key.name(), key.key_id()),
        sig: base64::engine::general_purpose::STANDARD.encode(key.sign_bytes(&msg)),
    };
    v.as_object_mut()?
        .insert("sig".into(), serde_json::to_value(sig).ok()?);
    Some(v)
}

/// Why a signed record is not used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignedProblem {
    /// Not a body of its kind (names the problem).
    Malformed(String),
    /// The signature is by a key not trusted, or does not verify.
    Signature(crate::chain::trust::TrustError),
}

/// Opens a signed body: the signature judged by the trust path
/// ([`crate::chain::trust::open_statement`]), then the shape. Returns the
/// body and the `sha256:` digest of the whole record body (what a later
/// record's `prev` or `reviewed` names).
pub fn open_signed<T: serde::de::DeserializeOwned>(
    payload_type: &str,
    body: &[u8],
    keys: &crate::chain::TrustedKeys,
) -> Result<(T, String), SignedProblem> {
    use base64::Engine;
    let mut v: Value =
        serde_json::from_slice(body).map_err(|e| SignedProblem::Malformed(e.to_string()))?;
    let digest = digest_of(&v);
    let Some(obj) = v.as_object_mut() else {
        return Err(SignedProblem::Malformed("not an object".into()));
    };
    let sig: Sig = match obj.remove("sig").map(serde_json::from_value) {
        Some(Ok(s)) => s,
        _ => return Err(SignedProblem::Malformed("no valid sig member".into())),
    };
    let sig_bytes = base64::engine::general_purpose::STANDARD
        .decode(&sig.sig)
        .map_err(|_| SignedProblem::Malformed("sig is not base64".into()))?;
    let msg = signed_bytes(payload_type, &v)
        .ok_or_else(|| SignedProblem::Malformed("no RFC 8785 form".into()))?;
    let origin = sig.keyid.rsplit_once('+').map_or("", |(n, _)| n);
    crate::chain::trust::open_statement(keys, origin, &sig.keyid, &msg, &sig_bytes)
        .map_err(SignedProblem::Signature)?;
    let parsed: T =
        serde_json::from_value(v).map_err(|e| SignedProblem::Malformed(e.to_string()))?;
    Ok((parsed, digest))
}
