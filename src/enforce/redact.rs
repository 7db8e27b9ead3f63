//! Redacted copies of tool-call arguments for the evidence log.
//! (Skeleton: the detectors are being written.)

use serde::Serialize;

/// What kind of secret was masked (never its value).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum SecretKind {
    PrivateKey,
    HighEntropy,
}

/// One masked secret: where (RFC 6901 pointer into the arguments) and what kind.
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

/// A copy of `value` with every secret-shaped substring replaced by
/// `[REDACTED:KIND]`.
pub fn redact(value: &serde_json::Value) -> Redacted {
    Redacted {
        value: value.clone(),
        masked: Vec::new(),
    }
}
