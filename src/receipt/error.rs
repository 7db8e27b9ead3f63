//! Why a receipt was rejected, with stable reason codes.

use super::*;

/// Why an anchor record inside a receipt does not bind.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnchorRecordProblem {
    #[error("is not a valid record: {0}")]
    NotARecord(crate::chain::ChainError),
    #[error("is a {kind:?} record, not an anchor record")]
    NotAnAnchor { kind: String },
    #[error("is a record of another log ({origin:?})")]
    OtherLog { origin: String },
    #[error("has seq {seq}, not below the binding checkpoint's size {size}")]
    OutOfRange { seq: u64, size: u64 },
    #[error("is not included in the binding checkpoint (the proof does not lead to its root)")]
    Inclusion,
    #[error("has a body that is not a valid anchor body")]
    BadBody,
    #[error("anchors another checkpoint (note sha256 {found})")]
    OtherCheckpoint { found: String },
    #[error("has fields that disagree with its note")]
    FieldsDisagree,
}

impl AnchorRecordProblem {
    pub fn code(&self) -> &'static str {
        match self {
            AnchorRecordProblem::NotARecord(e) => e.code(),
            AnchorRecordProblem::NotAnAnchor { .. }
            | AnchorRecordProblem::BadBody
            | AnchorRecordProblem::FieldsDisagree => "bad_anchor_record",
            AnchorRecordProblem::OtherLog { .. } => "anchor_other_log",
            AnchorRecordProblem::OutOfRange { .. } => "index_out_of_range",
            AnchorRecordProblem::Inclusion => "inclusion_failed",
            AnchorRecordProblem::OtherCheckpoint { .. } => "anchor_mismatch",
        }
    }
}

/// Why a receipt was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReceiptError {
    #[error("not a vouch receipt: {0}")]
    Malformed(&'static str),
    #[error("the record line is not a valid record: {0}")]
    BadRecord(crate::chain::ChainError),
    #[error("the record has seq {found}, origin {origin:?}; the receipt says seq {seq}")]
    RecordMismatch {
        seq: u64,
        found: u64,
        origin: String,
    },
    #[error("the record line's leaf hash is not the receipt's leaf_hash")]
    LeafMismatch,
    #[error("the given record line is not the one in the receipt")]
    GivenRecordMismatch,
    #[error("not a vouch receipt: invalid JSON or members at line {line}, column {column}")]
    Unparseable { line: usize, column: usize },
    #[error(
        "unsupported receipt format {format:?} (this vouch reads {RECEIPT_FORMAT}; make the receipt again with `vouch receipt`)"
    )]
    UnsupportedFormat { format: String },
    #[error("the checkpoint {0}")]
    BadCheckpoint(CheckpointFailure),
    #[error(
        "the checkpoint is for {found:?}, the receipt for {expected:?}, or its size differs from the proof's"
    )]
    CheckpointMismatch { expected: String, found: String },
    #[error("not checked: the receipt's checkpoint did not verify (see the checkpoint row)")]
    NoVerifiedCheckpoint,
    #[error("index {seq} is not below the tree size {size}")]
    IndexOutOfRange { seq: u64, size: u64 },
    #[error("the inclusion proof does not lead to the checkpoint's root")]
    Inclusion,
    #[error("the binding checkpoint {0}")]
    BadBinding(CheckpointFailure),
    #[error(
        "the binding checkpoint is for {found:?}, smaller than the receipt's checkpoint or of another log"
    )]
    BindingMismatch { found: String },
    #[error("the binding checkpoint is not consistent with the receipt's checkpoint")]
    Consistency,
    #[error("anchor record {index} {problem}")]
    AnchorRecord {
        index: usize,
        problem: AnchorRecordProblem,
    },
    #[error("anchor {index}: {error}")]
    Anchor { index: String, error: AnchorError },
}

impl ReceiptError {
    /// Stable reason code.
    pub fn code(&self) -> &'static str {
        match self {
            ReceiptError::Malformed(_)
            | ReceiptError::Unparseable { .. }
            | ReceiptError::UnsupportedFormat { .. } => "bad_receipt",
            ReceiptError::BadRecord(e) => e.code(),
            ReceiptError::RecordMismatch { .. } => "record_mismatch",
            ReceiptError::LeafMismatch => "leaf_mismatch",
            ReceiptError::GivenRecordMismatch => "record_mismatch",
            ReceiptError::BadCheckpoint(e) | ReceiptError::BadBinding(e) => e.code(),
            ReceiptError::CheckpointMismatch { .. }
            | ReceiptError::BindingMismatch { .. }
            | ReceiptError::NoVerifiedCheckpoint => "bad_checkpoint",
            ReceiptError::IndexOutOfRange { .. } => "index_out_of_range",
            ReceiptError::Inclusion => "inclusion_failed",
            ReceiptError::Consistency => "consistency_failed",
            ReceiptError::AnchorRecord { problem, .. } => problem.code(),
            ReceiptError::Anchor { error, .. } => error.code(),
        }
    }
}

/// Why a receipt's checkpoint note was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckpointFailure {
    #[error("has a signature by {name}+{key_id:08x} that does not verify")]
    BadSignature { name: String, key_id: u32 },
    #[error("is not signed by a trusted key")]
    UnknownKey,
    #[error("is not a well-formed signed note")]
    Malformed,
}

impl CheckpointFailure {
    pub fn code(&self) -> &'static str {
        match self {
            CheckpointFailure::BadSignature { .. } => "bad_signature",
            CheckpointFailure::UnknownKey => "unknown_key",
            CheckpointFailure::Malformed => "bad_checkpoint",
        }
    }
}

impl From<crate::chain::trust::TrustError> for CheckpointFailure {
    fn from(e: crate::chain::trust::TrustError) -> Self {
        use crate::chain::trust::TrustError;
        match e {
            TrustError::BadSignature { key_name, key_id } => CheckpointFailure::BadSignature {
                name: key_name,
                key_id,
            },
            TrustError::UnknownKey { .. } | TrustError::NoKeys => CheckpointFailure::UnknownKey,
            TrustError::Malformed(_) => CheckpointFailure::Malformed,
        }
    }
}
