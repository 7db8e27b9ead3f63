//! The `tsa:` target: an RFC 3161 time-stamp token over the checkpoint
//! note, from the crate's TSA client, verified with the crate's strict
//! offline verifier before it is recorded, and again by `anchor verify`
//! and `receipt verify`.
//!
//! The imprint is SHA-256 over the note's exact bytes, so the token proves
//! that this signed checkpoint existed at the token's genTime.

use super::record::TsaAnchor;
use crate::tsa::{self, CertificateFileProblem, TrustStore, TsaError, VerifiedTimestamp};
use crate::{Error, Result};
use base64::Engine;

/// Requests a token over `note` from `url`, verifies it against `roots`
/// (and the request's nonce), and describes it.
pub fn put(url: &str, note: &str, roots: &TrustStore) -> Result<TsaAnchor> {
    let (body, verified) = tsa::timestamp_data(url, note.as_bytes(), roots)?;
    Ok(describe(url, &body, &verified))
}

fn describe(url: &str, body: &[u8], v: &VerifiedTimestamp) -> TsaAnchor {
    TsaAnchor {
        url: url.to_owned(),
        token: base64::engine::general_purpose::STANDARD.encode(body),
        gen_time: v.gen_time().to_rfc3339(),
        imprint_alg: "sha256".to_owned(),
        serial: v.serial().to_owned(),
        policy: v.policy().to_owned(),
        signer: v.signer().subject.clone(),
    }
}

/// Why a recorded token did not verify.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenProblem {
    #[error("the token is not base64")]
    NotBase64,
    #[error("the token does not verify over this note: {0}")]
    Invalid(TsaError),
    #[error("the token's genTime {found} is not the recorded {recorded}")]
    GenTimeMismatch { recorded: String, found: String },
    #[error("the recorded imprint algorithm {recorded:?} is not \"sha256\"")]
    ImprintAlg { recorded: String },
}

impl TokenProblem {
    /// Stable reason code: the TSA verifier's own code for an invalid token.
    pub fn code(&self) -> &'static str {
        match self {
            TokenProblem::NotBase64 => "bad_tsa_token",
            TokenProblem::Invalid(e) => e.code(),
            TokenProblem::GenTimeMismatch { .. } | TokenProblem::ImprintAlg { .. } => {
                "bad_tsa_token"
            }
        }
    }
}

/// Verifies a recorded token over `note` offline; returns its genTime.
/// What a verified time-stamp anchor proves, taken from the verified token
/// itself (never from the copies in the anchor's JSON, which are for
/// reading only and are not authenticated).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedAnchorTime {
    /// The token's genTime, RFC 3339 UTC.
    pub gen_time: String,
    /// The TSA signer certificate's subject.
    pub signer: String,
    /// The token's serial number (hex) and policy OID.
    pub serial: String,
    pub policy: String,
    /// The imprint's hash algorithm.
    pub imprint_alg: String,
}

pub fn verify(
    anchor: &TsaAnchor,
    note: &[u8],
    roots: &TrustStore,
) -> std::result::Result<VerifiedAnchorTime, TokenProblem> {
    if anchor.imprint_alg != "sha256" {
        return Err(TokenProblem::ImprintAlg {
            recorded: anchor.imprint_alg.clone(),
        });
    }
    let token = base64::engine::general_purpose::STANDARD
        .decode(&anchor.token)
        .map_err(|_| TokenProblem::NotBase64)?;
    let v = tsa::verify_data_token(&token, note, roots).map_err(TokenProblem::Invalid)?;
    let gen_time = v.gen_time().to_rfc3339();
    if gen_time != anchor.gen_time {
        return Err(TokenProblem::GenTimeMismatch {
            recorded: anchor.gen_time.clone(),
            found: gen_time,
        });
    }
    Ok(VerifiedAnchorTime {
        gen_time,
        signer: v.signer().subject.clone(),
        serial: v.serial().to_owned(),
        policy: v.policy().to_owned(),
        imprint_alg: v.imprint_alg().to_string(),
    })
}

/// Loads TSA trust anchors (PEM, one or more certificates, or one DER).
pub fn load_roots(path: &std::path::Path) -> Result<TrustStore> {
    let bytes = crate::fs::read_bounded(path, crate::tsa::MAX_CERTS_BYTES)?;
    let mut store = TrustStore::new();
    let bad = |problem| Error::CertificateFile {
        path: path.to_path_buf(),
        role: "TSA roots",
        problem,
    };
    let n = store
        .add_anchors(&bytes)
        .map_err(|e| bad(CertificateFileProblem::Unparseable(e)))?;
    if n == 0 {
        return Err(bad(CertificateFileProblem::Empty));
    }
    Ok(store)
}
