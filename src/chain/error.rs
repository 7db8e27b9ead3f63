//! Why a log, a checkpoint or a proof was rejected.
//!
//! Every variant is a verification failure with structured context and a
//! stable snake_case reason code ([`ChainError::code`]); none carries an I/O
//! error. Operational failures (unreadable files, bad usage) are
//! [`crate::Error`] variants instead.

use crate::merkle::Hash;

/// What said a log should be there ([`ChainError::MissingLog`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NamedBy {
    /// A checkpoint given with `--checkpoint` is of its origin.
    Checkpoint,
    /// The `--state` file remembers it from an earlier run.
    State,
}

impl NamedBy {
    fn says(self) -> &'static str {
        match self {
            NamedBy::Checkpoint => "a given checkpoint is of that origin",
            NamedBy::State => "the state file remembers it from an earlier run",
        }
    }
}

/// Which field of a record is malformed, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordProblem {
    /// The line is not a JSON object with exactly the fields
    /// `body, kind, origin, prev, seq, ts, v`.
    Fields,
    /// `v` is not the supported format version 1.
    Version,
    /// `seq` is not a non-negative integer below 2^53.
    Seq,
    /// `prev` is not 64 lowercase hex digits.
    Prev,
    /// `origin` is not 1..=255 printable ASCII characters without `+`, `"` or `\`.
    Origin,
    /// `kind` does not match `[a-z0-9][a-z0-9_.:/-]{0,63}`.
    Kind,
    /// `ts` is not an RFC 3339 UTC timestamp.
    Timestamp,
    /// The body of a `checkpoint` or `key_rotation` record is malformed.
    Body,
}

impl std::fmt::Display for RecordProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RecordProblem::Fields => "fields must be exactly body, kind, origin, prev, seq, ts, v",
            RecordProblem::Version => "unsupported format version (v must be 1)",
            RecordProblem::Seq => "seq is not an integer in 0..2^53",
            RecordProblem::Prev => "prev is not 64 lowercase hex digits",
            RecordProblem::Origin => "origin is not 1..255 printable ASCII without + \" \\",
            RecordProblem::Kind => "kind does not match [a-z0-9][a-z0-9_.:/-]{0,63}",
            RecordProblem::Timestamp => "ts is not an RFC 3339 UTC timestamp",
            RecordProblem::Body => "malformed checkpoint or key_rotation body",
        })
    }
}

/// Why a signed checkpoint embedded in (or given for) a log is unusable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckpointProblem {
    /// The note is not a well-formed C2SP signed note.
    Note,
    /// The note text is not a well-formed C2SP tlog-checkpoint.
    Body,
    /// The checkpoint names another origin than the log.
    Origin,
    /// The checkpoint's tree size is not the seq of the record holding it.
    Size,
    /// A key rotation note does not name the key its record introduces,
    /// or is not signed by that new key.
    Rotation,
}

impl std::fmt::Display for CheckpointProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            CheckpointProblem::Note => "not a well-formed signed note",
            CheckpointProblem::Body => "not a well-formed tlog-checkpoint",
            CheckpointProblem::Origin => "checkpoint origin differs from the log origin",
            CheckpointProblem::Size => "checkpoint size differs from the record's seq",
            CheckpointProblem::Rotation => {
                "key rotation does not name, or is not signed by, the new key"
            }
        })
    }
}

/// A verification failure of the chain format. See docs/FORMAT.md for the
/// reason codes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChainError {
    #[error("line longer than {max} bytes")]
    LineTooLong { max: usize },
    #[error("invalid UTF-8 at byte {offset} of the line")]
    BadUtf8 { offset: usize },
    #[error("invalid JSON at byte {offset} of the line")]
    BadJson { offset: usize },
    #[error("JSON nested deeper than {max} levels")]
    TooDeep { max: u32 },
    #[error("not RFC 8785 canonical JSON at byte {offset} of the line: {why}")]
    NotCanonical {
        offset: usize,
        why: crate::jcs::NonCanonical,
    },
    #[error("malformed record: {problem}")]
    BadRecord { problem: RecordProblem },
    #[error("origin {found:?} differs from the log origin {expected:?}")]
    OriginMismatch { expected: String, found: String },
    #[error("expected seq {expected}, found {found}: records missing")]
    SeqGap { expected: u64, found: u64 },
    #[error("expected seq {expected}, found {found}: records out of order")]
    Reordered { expected: u64, found: u64 },
    #[error("record {seq} appears twice")]
    Duplicate { seq: u64 },
    #[error(
        "record {seq}'s prev ({}…) is not the leaf hash of record {} ({}…)",
        short(found),
        seq.saturating_sub(1),
        short(expected)
    )]
    BrokenLink {
        seq: u64,
        expected: Hash,
        found: Hash,
    },
    #[error("checkpoint in record {seq}: {problem}")]
    BadCheckpoint {
        seq: u64,
        problem: CheckpointProblem,
    },
    #[error("signature by {key_name}+{key_id:08x} does not verify")]
    BadSignature { key_name: String, key_id: u32 },
    #[error(
        "checkpoint is not signed by a trusted key (signed by: {})",
        format_signers(signers)
    )]
    UnknownKey { signers: Vec<(String, u32)> },
    #[error(
        "signed checkpoint for size {size} has root {}…, but the records give {}…",
        short(checkpoint_root),
        short(computed_root)
    )]
    Fork {
        size: u64,
        checkpoint_root: Hash,
        computed_root: Hash,
    },
    #[error("log has {records} records, shorter than a checkpoint of size {checkpoint_size}")]
    Truncated { records: u64, checkpoint_size: u64 },
    #[error("log ends with an incomplete line of {}", crate::error::count(*bytes, "byte"))]
    TornTail { bytes: u64 },
    #[error("{bytes} bytes after the last record are not a record")]
    TrailingData { bytes: u64 },
    #[error("records {from_seq}..={to_seq} differ from what an earlier verification saw")]
    HistoryChanged { from_seq: u64, to_seq: u64 },
    #[error("no log with origin {origin:?} was found ({})", named_by.says())]
    MissingLog { origin: String, named_by: NamedBy },
}

fn short(hash: &Hash) -> String {
    crate::hex::encode(&hash[..6])
}

fn format_signers(signers: &[(String, u32)]) -> String {
    if signers.is_empty() {
        return "nobody".to_owned();
    }
    signers
        .iter()
        .map(|(n, id)| format!("{n}+{id:08x}"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl ChainError {
    /// The stable reason code reported in tables and JSON.
    pub fn code(&self) -> &'static str {
        match self {
            ChainError::LineTooLong { .. } => "line_too_long",
            ChainError::BadUtf8 { .. } => "bad_utf8",
            ChainError::BadJson { .. } => "bad_json",
            ChainError::TooDeep { .. } => "too_deep",
            ChainError::NotCanonical { .. } => "not_canonical",
            ChainError::BadRecord { .. } => "bad_record",
            ChainError::OriginMismatch { .. } => "origin_mismatch",
            ChainError::SeqGap { .. } => "seq_gap",
            ChainError::Reordered { .. } => "reordered",
            ChainError::Duplicate { .. } => "duplicate",
            ChainError::BrokenLink { .. } => "broken_link",
            ChainError::BadCheckpoint { .. } => "bad_checkpoint",
            ChainError::BadSignature { .. } => "bad_signature",
            ChainError::UnknownKey { .. } => "unknown_key",
            ChainError::Fork { .. } => "fork",
            ChainError::Truncated { .. } => "truncated",
            ChainError::TornTail { .. } => "torn_tail",
            ChainError::TrailingData { .. } => "trailing_data",
            ChainError::HistoryChanged { .. } => "history_changed",
            ChainError::MissingLog { .. } => "missing_log",
        }
    }
}

impl From<crate::jcs::JcsError> for ChainError {
    fn from(e: crate::jcs::JcsError) -> Self {
        use crate::jcs::JcsError;
        match e {
            JcsError::BadUtf8 { offset } => ChainError::BadUtf8 { offset },
            JcsError::Syntax { offset } => ChainError::BadJson { offset },
            JcsError::TooDeep { max, .. } => ChainError::TooDeep { max },
            JcsError::NotCanonical { offset, why } => ChainError::NotCanonical { offset, why },
        }
    }
}
