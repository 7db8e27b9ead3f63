//! The crate-level error: what went wrong when vouch could not do what it was
//! asked. Each capability module has its own error enum for *evidence* that
//! failed verification; this type wraps those beside operational failures
//! (I/O with the path involved, bad usage, network), so callers can tell
//! "the evidence is bad" (exit 1) from "we could not look at it" (exit 2).

use std::path::PathBuf;

/// Everything a vouch library call can fail with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading or writing a file failed.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A file given as input is not a regular file (a FIFO, a device, a
    /// directory): vouch reads its small inputs only from regular files, so
    /// that a FIFO cannot block it forever.
    #[error("{}: not a regular file ({kind})", path.display())]
    NotARegularFile {
        path: PathBuf,
        kind: crate::fs::FileKind,
    },
    /// A file given as input is larger than vouch accepts for its kind.
    #[error("{}: larger than {max} bytes", path.display())]
    TooLarge { path: PathBuf, max: u64 },
    /// A date or time given by the user does not parse or does not exist.
    #[error("{what} {text:?}: {problem} (expected {expected})")]
    InvalidTime {
        /// What the time was for, e.g. `--retain-until`.
        what: &'static str,
        text: String,
        problem: crate::time::TimeError,
        /// The accepted forms, for the message.
        expected: &'static str,
    },
    /// A combination of command-line arguments that clap cannot rule out
    /// and that cannot be done as asked. Only the binary builds this
    /// variant; the library has a typed variant for each of its problems.
    #[error("{0}")]
    Usage(String),
    /// A stamp, extract or export that cannot be done as asked, or a file
    /// that does not hold the stamped bytes.
    #[error(transparent)]
    Stamp(crate::stamp::StampProblem),
    /// What was asked needs an option that was not given (e.g. an `s3://`
    /// target needs a retention, a `tsa:` target needs `--tsa-ca`).
    #[error("{needed_for} needs {option}")]
    MissingOption {
        /// The option(s) to give, as spelled on the command line.
        option: &'static str,
        /// What needs it.
        needed_for: &'static str,
    },
    /// A command-line value does not have the form its option takes.
    #[error("{option} {text:?}: expected {expected}")]
    InvalidArgument {
        option: &'static str,
        text: String,
        expected: &'static str,
    },
    /// An anchor target (`--to`, `--from`, `anchor doctor TARGET`) is not
    /// usable as given.
    #[error("{target}: {problem}")]
    Target {
        /// The target as given.
        target: String,
        problem: crate::anchor::TargetError,
    },
    /// An S3 retention that would already have ended.
    #[error("the retention date {until} is in the past")]
    RetentionInPast {
        /// RFC 3339 UTC.
        until: String,
    },
    /// This vouch was built without a cargo feature that the request needs.
    #[error("this vouch was built without the `{feature}` feature, needed for {needed_for}")]
    FeatureDisabled {
        feature: &'static str,
        needed_for: &'static str,
    },
    /// A certificate file given as configuration (TSA roots, extra
    /// certificates) is not usable. Not evidence: exit 2.
    #[error("{}: {role}: {problem}", path.display())]
    CertificateFile {
        path: PathBuf,
        /// `TSA roots`, `extra certificates`.
        role: &'static str,
        problem: crate::tsa::CertificateFileProblem,
    },
    /// A time-stamp request cannot be made as asked.
    #[error("cannot make the time-stamp request: {0}")]
    TsaRequest(crate::tsa::RequestProblem),
    /// Something vouch made (a record body, a receipt) could not be
    /// serialized; nothing was written.
    #[error("cannot encode {what}: {source}")]
    Serialize {
        what: &'static str,
        #[source]
        source: serde_json::Error,
    },
    /// A key file is unusable.
    #[error("{}: {problem}", path.display())]
    KeyFile {
        path: PathBuf,
        problem: crate::chain::KeyFileProblem,
    },
    /// A log could not be written because of its current state.
    #[error("{}: {problem}", path.display())]
    LogState {
        path: PathBuf,
        problem: crate::chain::LogStateProblem,
    },
    /// A checkpoint given as a reference (`--checkpoint`, `--old`) cannot
    /// count under the trust rule (docs/FORMAT.md §6).
    #[error("{}: not a usable checkpoint: {problem}", path.display())]
    UnusableCheckpoint {
        path: PathBuf,
        problem: crate::chain::trust::TrustError,
    },
    /// A record cannot be written as asked (bad origin or kind, too long,
    /// seq space exhausted).
    #[error("record {seq}: {problem}; nothing written")]
    Encode {
        seq: u64,
        problem: crate::chain::record::EncodeError,
    },
    /// Signing a note or generating a key failed.
    #[error("cannot sign: {0}")]
    Sign(crate::note::NoteError),
    /// An origin (log name) is not usable.
    #[error(
        "invalid origin {origin:?}: use 1-255 printable ASCII characters without + \" \\ or spaces"
    )]
    InvalidOrigin { origin: String },
    /// A rotation's new key is named after another origin.
    #[error("the new key is named {new:?}, the old one {old:?}: a log keeps one origin")]
    RotationOrigin { old: String, new: String },
    /// A file vouch keeps for itself (a verify state) is not usable.
    #[error("{}: not a usable {what}: {reason}", path.display())]
    BadStateFile {
        path: PathBuf,
        what: &'static str,
        reason: String,
    },
    /// A line of input (`append` from stdin) is longer than a record can be.
    #[error(
        "stdin line {line}: longer than the {max}-byte record limit; it and the lines after it were not written"
    )]
    InputLineTooLong { line: u64, max: usize },
    /// The worker thread pool could not be started.
    #[error("cannot start {threads} worker threads: {message}")]
    Threads { threads: usize, message: String },
    /// `--reset-pin ORIGIN` names a log the state does not remember.
    #[error("the state remembers no log {origin:?} (nothing to reset)")]
    NoSuchPin { origin: String },
    /// No log file was found under the paths given.
    #[error("no log files (*.jsonl) found in {paths}")]
    NoLogFiles { paths: String },
    /// Two different keys were given with the same name and key ID.
    #[error(transparent)]
    ConflictingKeys(#[from] crate::chain::trust::ConflictingKeys),
    /// `append` was asked to write a kind that only the vouch command owning
    /// it writes (docs/FORMAT.md §2.1).
    #[error(
        "kind {kind:?} is reserved: only the vouch command that owns it writes it; nothing written"
    )]
    ReservedKind { kind: String },
    /// A record body cannot be written exactly as given (duplicate member
    /// names, a number RFC 8785 would write as another value).
    #[error("{at}: {problem}; not written")]
    Body {
        at: crate::chain::BodySource,
        problem: crate::jcs::InexactJson,
    },
    /// `repair` found bytes after the last record that a crashed writer
    /// could not have left: evidence, kept as it is.
    #[error(
        "{}: the {bytes} bytes at offset {offset} after the last record are not a torn record ({problem}); nothing removed",
        path.display()
    )]
    NotATornRecord {
        path: PathBuf,
        offset: u64,
        bytes: u64,
        problem: crate::chain::TailProblem,
    },
    /// Evidence was examined and rejected by the chain verifier.
    #[error(transparent)]
    Chain(#[from] crate::chain::ChainError),
    /// Shards could not be run or merged (`verify --shard`, `--merge`).
    #[error(transparent)]
    Shard(#[from] crate::chain::shard::ShardError),
    /// An inclusion proof was examined and rejected.
    #[error(transparent)]
    Proof(#[from] crate::chain::ProofError),
    /// A remote service (S3, a TSA) could not be reached or refused a
    /// request: `code` is the service's own error code when it sent one
    /// (e.g. `AccessDenied`, `NoSuchBucket`, `InvalidAccessKeyId`).
    #[error("{target}: {operation} failed: {}{message}", code.as_deref().map(|c| format!("{c}: ")).unwrap_or_default())]
    Remote {
        target: String,
        operation: &'static str,
        code: Option<String>,
        message: String,
    },
    /// A local anchor target (`dir:`) refused or failed a write.
    #[error("{}: {problem}", path.display())]
    AnchorTarget {
        path: PathBuf,
        problem: crate::anchor::TargetProblem,
    },
    /// A receipt was examined and rejected.
    #[error(transparent)]
    Receipt(#[from] crate::receipt::ReceiptError),
    /// A time-stamp token or response failed verification.
    #[error(transparent)]
    Tsa(#[from] crate::tsa::TsaError),
    /// Drift evidence (the chain's drift records or a snapshot) was rejected.
    #[error(transparent)]
    Drift(#[from] crate::drift::DriftError),
    /// A drift target could not be examined.
    #[error("{target}: {problem}")]
    DriftTarget {
        target: String,
        problem: crate::drift::TargetProblem,
    },
    /// The MCP wrapper or a policy could not be used.
    #[error(transparent)]
    Enforce(#[from] crate::enforce::EnforceError),
    /// Vetting state (pins, verdicts) could not be read or changed.
    #[error(transparent)]
    Vet(#[from] crate::vet::VetError),
    /// Talking to a remote service (e.g. a TSA) failed.
    #[error("{url}: {message}")]
    Network { url: String, message: String },
}

impl Error {
    /// True when the error means the evidence was examined and rejected
    /// (exit code 1), false when it is an operational failure (exit code 2).
    pub fn is_rejection(&self) -> bool {
        match self {
            Error::Chain(_)
            | Error::Proof(_)
            | Error::Receipt(_)
            | Error::Tsa(_)
            | Error::Drift(_)
            | Error::NotATornRecord { .. } => true,
            Error::Vet(e) => e.is_rejection(),
            Error::Stamp(p) => p.is_rejection(),
            Error::Io { .. }
            | Error::NotARegularFile { .. }
            | Error::TooLarge { .. }
            | Error::InvalidTime { .. }
            | Error::Usage(_)
            | Error::MissingOption { .. }
            | Error::InvalidArgument { .. }
            | Error::Target { .. }
            | Error::RetentionInPast { .. }
            | Error::FeatureDisabled { .. }
            | Error::CertificateFile { .. }
            | Error::TsaRequest(_)
            | Error::Serialize { .. }
            | Error::KeyFile { .. }
            | Error::LogState { .. }
            | Error::UnusableCheckpoint { .. }
            | Error::ConflictingKeys(_)
            | Error::NoLogFiles { .. }
            | Error::NoSuchPin { .. }
            | Error::InputLineTooLong { .. }
            | Error::Threads { .. }
            | Error::Encode { .. }
            | Error::Sign(_)
            | Error::InvalidOrigin { .. }
            | Error::RotationOrigin { .. }
            | Error::BadStateFile { .. }
            | Error::ReservedKind { .. }
            | Error::Body { .. }
            | Error::Remote { .. }
            | Error::Shard(_)
            | Error::AnchorTarget { .. }
            | Error::DriftTarget { .. }
            | Error::Enforce(_)
            | Error::Network { .. } => false,
        }
    }

    /// A stable snake_case code for machine-readable output.
    pub fn code(&self) -> &'static str {
        match self {
            Error::Io { .. } => "io_error",
            Error::NotARegularFile { .. } => "not_a_regular_file",
            Error::TooLarge { .. } => "file_too_large",
            Error::InvalidTime { .. } => "invalid_time",
            Error::Usage(_) => "usage",
            Error::Stamp(p) => p.code(),
            Error::MissingOption { .. } => "missing_option",
            Error::InvalidArgument { .. } => "invalid_argument",
            Error::Target { .. } => "invalid_target",
            Error::RetentionInPast { .. } => "retention_in_past",
            Error::FeatureDisabled { .. } => "feature_disabled",
            Error::CertificateFile { .. } => "bad_certificate_file",
            Error::TsaRequest(p) => p.code(),
            Error::Serialize { .. } => "serialize_failed",
            Error::KeyFile { .. } => "key_file",
            Error::LogState { .. } => "log_state",
            Error::UnusableCheckpoint { .. } => "unusable_checkpoint",
            Error::ConflictingKeys(_) => "conflicting_keys",
            Error::NoLogFiles { .. } => "no_log_files",
            Error::NoSuchPin { .. } => "no_such_pin",
            Error::InputLineTooLong { .. } => "input_line_too_long",
            Error::Threads { .. } => "threads",
            Error::Encode { .. } => "bad_record_input",
            Error::Sign(_) => "sign_failed",
            Error::InvalidOrigin { .. } => "invalid_origin",
            Error::RotationOrigin { .. } => "rotation_origin",
            Error::BadStateFile { .. } => "bad_state_file",
            Error::ReservedKind { .. } => "reserved_kind",
            Error::Body { problem, .. } => problem.code(),
            Error::NotATornRecord { .. } => "not_a_torn_record",
            Error::Chain(e) => e.code(),
            Error::Shard(e) => e.code(),
            Error::Proof(e) => e.code(),
            Error::Remote { .. } => "remote_error",
            Error::AnchorTarget { problem, .. } => problem.code(),
            Error::Receipt(e) => e.code(),
            Error::Tsa(e) => e.code(),
            Error::Drift(e) => e.code(),
            Error::DriftTarget { problem, .. } => problem.code(),
            Error::Enforce(e) => e.code(),
            Error::Vet(e) => e.code(),
            Error::Network { .. } => "network",
        }
    }

    /// Wraps an I/O error with the path it concerns.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

/// How an error is shown in JSON output: `{"error":{"code","message"},"exit_code"}`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ErrorReport {
    pub error: ErrorDetail,
    pub exit_code: u8,
}

/// The error of an [`ErrorReport`].
#[derive(Debug, Clone, serde::Serialize)]
pub struct ErrorDetail {
    pub code: &'static str,
    pub message: String,
}

impl ErrorReport {
    pub fn new(err: &Error, exit_code: u8) -> Self {
        ErrorReport {
            error: ErrorDetail {
                code: err.code(),
                message: err.to_string(),
            },
            exit_code,
        }
    }
}

/// Result alias for library calls.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// `n` and the noun, singular for 1: `1 log`, `2 logs`, `0 entries`
/// (for messages; a noun ending in `y` takes `ies`).
pub fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else if let Some(stem) = noun.strip_suffix('y') {
        format!("{n} {stem}ies")
    } else {
        format!("{n} {noun}s")
    }
}
