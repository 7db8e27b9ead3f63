//! Why an anchor was rejected: verification failures with structured
//! context and stable codes; no I/O errors.

use crate::chain::ChainError;

/// Why an anchor was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnchorError {
    #[error("the anchor record's body is not a valid anchor body")]
    BadRecord,
    #[error("the anchor record's fields disagree with its note")]
    RecordMismatch,
    #[error("the anchor record is for another log ({origin:?})")]
    OtherLog { origin: String },
    #[error("the anchored note is not a checkpoint of this log signed by a trusted key")]
    BadNote,
    #[error("a listed entry is not a note vouch could have written: {problem}")]
    BadListedObject { problem: String },
    #[error("the anchored object is gone from the target")]
    Missing,
    #[error("the object's bytes (sha256 {found}) are not the anchored note (sha256 {expected})")]
    Replaced { expected: String, found: String },
    #[error("the server's checksum {found:?} differs from the recorded {recorded:?}")]
    ChecksumMismatch {
        recorded: Option<String>,
        found: Option<String>,
    },
    #[error("the lock mode is now {found:?}, weaker than the recorded {recorded}")]
    LockWeakened {
        recorded: String,
        found: Option<String>,
    },
    #[error("retention now ends {found:?}, before the recorded {recorded}")]
    RetentionShortened {
        recorded: String,
        found: Option<String>,
    },
    #[error("the legal hold recorded on the object was removed")]
    LegalHoldRemoved,
    #[error("the file is writable (mode {mode:o}): no write-once anchor")]
    NowWritable { mode: u32 },
    #[error("the immutable attribute set when anchoring was removed")]
    ImmutableRemoved,
    #[error("the current log does not extend this anchored checkpoint: {0}")]
    Log(ChainError),
    #[error("time-stamp token: {0}")]
    Timestamp(super::timestamp::TokenProblem),
}

impl AnchorError {
    /// Stable reason code.
    pub fn code(&self) -> &'static str {
        match self {
            AnchorError::BadRecord | AnchorError::RecordMismatch => "bad_anchor_record",
            AnchorError::OtherLog { .. } => "anchor_other_log",
            AnchorError::BadNote => "bad_anchor_note",
            AnchorError::BadListedObject { .. } => "bad_listed_object",
            AnchorError::Missing => "anchor_missing",
            AnchorError::Replaced { .. } => "anchor_replaced",
            AnchorError::ChecksumMismatch { .. } => "checksum_mismatch",
            AnchorError::LockWeakened { .. }
            | AnchorError::NowWritable { .. }
            | AnchorError::ImmutableRemoved => "lock_weakened",
            AnchorError::RetentionShortened { .. } => "retention_shortened",
            AnchorError::LegalHoldRemoved => "legal_hold_removed",
            AnchorError::Log(e) => e.code(),
            AnchorError::Timestamp(p) => p.code(),
        }
    }
}
