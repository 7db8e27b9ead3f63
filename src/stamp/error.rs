//! Why a stamp receipt's evidence was rejected.

use super::receipt::ReceiptProblem;
use super::statement::StatementProblem;
use crate::chain::trust::TrustError;

/// A stamp receipt that does not prove what it claims. Each variant says
/// what was compared; [`StampError::code`] is a stable reason code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StampError {
    #[error("{0}")]
    Receipt(ReceiptProblem),
    #[error("the envelope is not usable: {0}")]
    Envelope(&'static str),
    #[error("{0}")]
    Statement(StatementProblem),
    #[error("the statement's signature does not count: {0}")]
    Signature(TrustError),
    #[error("the entries make the root {computed}, the statement signs {signed}")]
    Root { computed: String, signed: String },
    #[error("the receipt holds {found} entries, the statement signs {signed}")]
    Count { signed: u64, found: u64 },
    #[error("the entry's audit path does not lead to the signed root (leaf {index} of {count})")]
    Inclusion { index: u64, count: u64 },
    #[error("the time-stamp token does not verify over the signature: {0}")]
    Token(crate::tsa::TsaError),
    #[error("the time-stamp token is not usable: {0}")]
    TokenForm(&'static str),
    #[error("the Sigstore signature is not usable: {0}")]
    Sigstore(&'static str),
    #[error("the chain receipt does not verify: {0}")]
    Chain(String),
    #[error("the chain record does not name this statement: {0}")]
    ChainRecord(&'static str),
}

impl StampError {
    pub fn code(&self) -> &'static str {
        match self {
            StampError::Receipt(p) => p.code(),
            StampError::Envelope(_) => "bad_envelope",
            StampError::Statement(_) => "bad_statement",
            StampError::Signature(TrustError::BadSignature { .. }) => "bad_signature",
            StampError::Signature(TrustError::NoKeys) => "no_keys",
            StampError::Signature(_) => "unknown_key",
            StampError::Root { .. } => "root_mismatch",
            StampError::Count { .. } => "entry_count",
            StampError::Inclusion { .. } => "bad_inclusion_proof",
            StampError::Token(e) => e.code(),
            StampError::TokenForm(_) => "bad_tsa_token",
            StampError::Sigstore(_) => "bad_sigstore_signature",
            StampError::Chain(_) => "chain_rejected",
            StampError::ChainRecord(_) => "chain_record_mismatch",
        }
    }
}
