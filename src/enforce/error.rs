//! Why the wrapper or a policy could not be used. These are operational
//! failures (exit 2): a policy that does not parse, a server that could not
//! be started, a log that cannot be written. Decisions about tool calls are
//! not errors: they are [`super::policy::Decision`]s, recorded in the chain.

use std::path::PathBuf;

/// A policy file that cannot be used as given. Always names the file and,
/// where there is one, the line and column (1-based) of the problem.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{}: {problem}", path.display(), match (line, column) { (Some(l), Some(c)) => format!(":{l}:{c}"), (Some(l), None) => format!(":{l}"), _ => String::new() })]
pub struct PolicyError {
    pub path: PathBuf,
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub problem: PolicyProblem,
}

impl PolicyError {
    pub fn code(&self) -> &'static str {
        self.problem.code()
    }
}

/// What is wrong with a policy.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyProblem {
    /// Not TOML, or TOML that does not have the policy's shape (an unknown
    /// key, a value of the wrong type, a missing required key).
    #[error("{0}")]
    Syntax(String),
    /// A tool-name glob that does not compile.
    #[error("bad glob {glob:?}: {message}")]
    BadGlob { glob: String, message: String },
    /// A regular expression that does not compile.
    #[error("bad regex {regex:?}: {message}")]
    BadRegex { regex: String, message: String },
    /// A JSON Pointer that is not RFC 6901.
    #[error("bad JSON Pointer {pointer:?}: {message}")]
    BadPointer { pointer: String, message: String },
    /// A `version` this vouch does not read.
    #[error("unsupported policy version {found} (this vouch reads version 1)")]
    UnsupportedVersion { found: i64 },
    /// Two rules (or two limits) with the same id.
    #[error("duplicate {what} id {id:?}")]
    DuplicateId { what: &'static str, id: String },
    /// Any other value that has the right type but cannot be used.
    #[error("{0}")]
    Invalid(String),
}

impl PolicyProblem {
    pub fn code(&self) -> &'static str {
        match self {
            PolicyProblem::Syntax(_) => "policy_syntax",
            PolicyProblem::BadGlob { .. } => "policy_bad_glob",
            PolicyProblem::BadRegex { .. } => "policy_bad_regex",
            PolicyProblem::BadPointer { .. } => "policy_bad_pointer",
            PolicyProblem::UnsupportedVersion { .. } => "policy_unsupported_version",
            PolicyProblem::DuplicateId { .. } => "policy_duplicate_id",
            PolicyProblem::Invalid(_) => "policy_invalid",
        }
    }
}

/// Why `vouch wrap` could not start or had to stop.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EnforceError {
    #[error(transparent)]
    Policy(#[from] PolicyError),
    /// The server could not be started.
    #[error("cannot start the server {program:?}: {message}")]
    Spawn { program: String, message: String },
    /// The evidence log could not be written: the wrapper refuses every
    /// call from then on (fail closed) and stops.
    #[error("{}: the evidence log cannot be written: {source}", path.display())]
    Evidence {
        path: PathBuf,
        source: EvidenceFailure,
    },
    /// SIGTERM, SIGINT and SIGHUP could not be caught (the wrapper does not
    /// start without them: a stop would leave the session unsigned).
    #[error("cannot catch stop signals: {0}")]
    Signals(#[source] std::io::Error),
}

impl EnforceError {
    pub fn code(&self) -> &'static str {
        match self {
            EnforceError::Policy(e) => e.code(),
            EnforceError::Spawn { .. } => "server_spawn",
            EnforceError::Evidence { .. } => "evidence_unwritable",
            EnforceError::Signals(_) => "signals_unavailable",
        }
    }
}

/// Why the evidence log stopped taking records. From then on the wrapper
/// refuses every call (fail closed), and every later write reports this
/// same first failure (hence shared, not re-made).
#[derive(Debug, Clone, thiserror::Error)]
pub enum EvidenceFailure {
    /// A record could not be encoded or appended: the log's own error.
    #[error(transparent)]
    Write(std::sync::Arc<crate::Error>),
    /// fdatasync of the log failed: nothing after the last durable record
    /// is known to be on disk.
    #[error("fsync failed: {0}")]
    Sync(std::sync::Arc<std::io::Error>),
    /// The thread that syncs the log is gone.
    #[error("the evidence sync thread has stopped")]
    SyncStopped,
}

impl EvidenceFailure {
    pub(crate) fn write(e: crate::Error) -> Self {
        EvidenceFailure::Write(std::sync::Arc::new(e))
    }
}
