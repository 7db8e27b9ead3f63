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
    /// The caller asked for something that cannot be done as asked.
    #[error("{0}")]
    Usage(String),
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
    /// Evidence was examined and rejected by the chain verifier.
    #[error(transparent)]
    Chain(#[from] crate::chain::ChainError),
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
    /// Talking to a remote service (e.g. a TSA) failed.
    #[error("{url}: {message}")]
    Network { url: String, message: String },
}

impl Error {
    /// True when the error means the evidence was examined and rejected
    /// (exit code 1), false when it is an operational failure (exit code 2).
    pub fn is_rejection(&self) -> bool {
        match self {
            Error::Chain(_) | Error::Proof(_) | Error::Receipt(_) | Error::Tsa(_) => true,
            Error::Io { .. }
            | Error::NotARegularFile { .. }
            | Error::TooLarge { .. }
            | Error::InvalidTime { .. }
            | Error::Usage(_)
            | Error::KeyFile { .. }
            | Error::LogState { .. }
            | Error::Remote { .. }
            | Error::AnchorTarget { .. }
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
            Error::KeyFile { .. } => "key_file",
            Error::LogState { .. } => "log_state",
            Error::Chain(e) => e.code(),
            Error::Proof(e) => e.code(),
            Error::Remote { .. } => "remote_error",
            Error::AnchorTarget { problem, .. } => problem.code(),
            Error::Receipt(e) => e.code(),
            Error::Tsa(e) => e.code(),
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

/// Result alias for library calls.
pub type Result<T, E = Error> = std::result::Result<T, E>;
