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
    BadListedObject { problem: ListedObjectProblem },
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

/// Why an entry found by listing a target (docs/FORMAT.md §9.3 item 3) is
/// not an object vouch could have anchored there: reason `bad_listed_object`.
/// (A signed checkpoint note, well named, that does not count under the
/// trust rule or is of another origin is `bad_anchor_note` instead.)
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ListedObjectProblem {
    /// In an origin's folder, a name other than
    /// `<size, 20 digits>-<root, 64 lowercase hex>.note`.
    #[error("not named <size, 20 digits>-<root, 64 hex>.note as an anchored object is")]
    NotAnObjectName,
    /// Bytes that are not a signed checkpoint note at all (c2sp.org
    /// signed-note and tlog-checkpoint syntax; `reason` is the parser's
    /// code). A note that parses but does not count is `bad_anchor_note`.
    #[error("not a signed checkpoint note ({reason})")]
    NotACheckpoint { reason: &'static str },
    /// A directory in an origin's folder (or named like a note).
    #[error("a directory, not an anchored object")]
    Directory,
    /// A symbolic link where an object or an origin's folder is.
    #[error("a symbolic link: an anchor is never read through a link")]
    Symlink,
    /// A FIFO, device or socket where an object is.
    #[error("not a regular file ({0})")]
    NotAFile(crate::fs::FileKind),
    /// Something other than a folder named like an origin's folder.
    #[error("named like the origin's folder, but not a folder ({0})")]
    NotAFolder(crate::fs::FileKind),
    /// Larger than any note vouch writes.
    #[error("larger than {max} bytes")]
    TooLarge { max: u64 },
    /// A note of `origin` lying outside that origin's folder (moved or
    /// planted: chattr +i protects a file, not its folder's name).
    #[error("a note of {origin:?} outside its folder {folder:?} (moved or planted)")]
    OutsideItsFolder { origin: String, folder: String },
    /// A note that counts, under a name other than its content-addressed
    /// one (§9.2): not where vouch would have put it.
    #[error("its note is the checkpoint named {expected:?}")]
    NameDisagrees { expected: String },
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
