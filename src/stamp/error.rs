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

/// Why a stamp, an extract or an export cannot be done as asked
/// (operational, exit 2), or, for [`StampProblem::NotTheStampedBytes`],
/// why a file does not hold what was stamped (rejected, exit 1).
/// [`StampProblem::code`] is a stable reason code.
#[derive(Debug, thiserror::Error)]
pub enum StampProblem {
    /// A PATH to stamp or to check is not inside `--base`.
    #[error("{}: {doing}{problem}", path.display())]
    Path {
        path: std::path::PathBuf,
        /// What it was given for, as the message says it (`cannot be
        /// stamped: `, or nothing).
        doing: &'static str,
        problem: crate::files::path::RelativeError,
    },
    /// `--name` of a stream is not a stampable path.
    #[error("--name {name:?}: {problem}")]
    Name {
        /// As people see it (escaped).
        name: String,
        problem: crate::files::path::PathProblem,
    },
    /// An output (`--out`, `--tee`) is one of the inputs or the log.
    #[error("{option} {}: is {what}; nothing written", path.display())]
    OutputIsInput {
        option: &'static str,
        path: std::path::PathBuf,
        what: &'static str,
    },
    /// `--out` names a file that is not a stamp receipt.
    #[error("--out {}: exists and is not a stamp receipt; not replaced", path.display())]
    NotAReceipt { path: std::path::PathBuf },
    /// Every file named was left out.
    #[error("nothing was stamped: {path}: {problem}")]
    NothingStamped {
        /// As people see it (escaped).
        path: String,
        problem: crate::files::FileProblem,
    },
    /// No file was found, or only the run's own outputs.
    #[error("nothing to stamp: {0}")]
    NothingToStamp(&'static str),
    /// `stamp extract` was given a per-file proof.
    #[error("{}: is already a per-file proof; extract from the run's receipt", path.display())]
    AlreadyAProof { path: std::path::PathBuf },
    /// The entry to extract has no audit path (cannot happen for an entry
    /// of a verified receipt).
    #[error("cannot cut the per-file proof: {0}")]
    Proof(crate::merkle::MerkleError),
    /// A minisign signature was asked for a stamped symlink.
    #[error("{path}: a symlink has no content to sign")]
    NoContent {
        /// As people see it (escaped).
        path: String,
    },
    /// The run cannot be exported as asked.
    #[error("cannot export: {0}")]
    Export(super::export::ExportProblem),
    /// The minisign signature cannot be made as asked.
    #[error("cannot sign for minisign: {0}")]
    Minisign(super::minisign::MinisignError),
    /// `--sigstore-key` is not a usable P-256 key.
    #[error("{}: not a usable P-256 key: {problem}", path.display())]
    P256Key {
        path: std::path::PathBuf,
        problem: super::ecdsa_key::EcKeyError,
    },
    /// The Sigstore trusted root needs the TSA's issuing certificate.
    #[error(
        "cannot write the trusted root: the TSA certificate ({subject}) was not issued by a certificate of --tsa-ca"
    )]
    TsaIssuer { subject: String },
    /// The file's bytes are not the stamped ones (it changed since it was
    /// stamped, or while it was read): evidence rejected, nothing signed.
    #[error("{}: its bytes are not the stamped ones; nothing signed", path.display())]
    NotTheStampedBytes { path: std::path::PathBuf },
}

impl StampProblem {
    /// True when the problem is a verdict on evidence (exit 1).
    pub fn is_rejection(&self) -> bool {
        matches!(self, StampProblem::NotTheStampedBytes { .. })
    }

    pub fn code(&self) -> &'static str {
        match self {
            StampProblem::Path { .. } => "outside_base",
            StampProblem::Name { .. } => "bad_name",
            StampProblem::OutputIsInput { .. } => "output_is_input",
            StampProblem::NotAReceipt { .. } => "not_a_receipt",
            StampProblem::NothingStamped { .. } => "nothing_stamped",
            StampProblem::NothingToStamp(_) => "nothing_to_stamp",
            StampProblem::AlreadyAProof { .. } => "already_a_proof",
            StampProblem::Proof(e) => e.code(),
            StampProblem::NoContent { .. } => "no_content",
            StampProblem::Export(_) => "cannot_export",
            StampProblem::Minisign(e) => e.code(),
            StampProblem::P256Key { .. } => "bad_p256_key",
            StampProblem::TsaIssuer { .. } => "tsa_issuer_not_given",
            StampProblem::NotTheStampedBytes { .. } => "not_the_stamped_bytes",
        }
    }
}
