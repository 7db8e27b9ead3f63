//! Why vetting state could not be read or changed. Verdicts themselves are
//! not errors: they are [`super::record::VerdictBody`]s, recorded in the
//! chain.

use crate::chain::ChainError;

/// A vetting failure. [`VetError::Chain`] is evidence rejected (exit 1);
/// the others are operational (exit 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum VetError {
    /// The log does not verify, so no pin in it can be used.
    #[error("the log does not verify{}: {error}", seq.map(|s| format!(" at record {s}")).unwrap_or_default())]
    Chain { seq: Option<u64>, error: ChainError },
    /// A saved listing or host config that is not what it should be.
    #[error("{source_name}: {problem}")]
    Listing {
        source_name: String,
        problem: String,
    },
    /// A saved listing with more tools than one listing may hold (a live
    /// server's list is bounded the same way).
    #[error("{source_name}: more than {max} tools in one listing")]
    TooManyTools { source_name: String, max: usize },
    /// A saved listing holding more JSON values than are built.
    #[error("{source_name}: more than {max} JSON values (scalars and containers) in one listing")]
    TooManyValues { source_name: String, max: usize },
    /// An approval or revocation needs a person at a terminal.
    #[error("{action} needs an interactive terminal (stdin and stdout a tty): nothing was written")]
    NoTerminal { action: &'static str },
    /// The operator did not type the confirmation.
    #[error("confirmation did not match {expected:?}: nothing was written")]
    NotConfirmed { expected: String },
    /// Nothing to act on.
    #[error("{server}: {problem}")]
    Nothing { server: String, problem: String },
    /// Another pin change landed between review and write: the written
    /// record is stale and has no effect.
    #[error(
        "{server}: the pins changed while you reviewed them (record {seq} landed first); review again"
    )]
    Raced { server: String, seq: u64 },
    /// A pin or verdict too large for one record (1 MiB).
    #[error("{server}: the {what} would be {bytes} bytes, more than one record holds")]
    TooLarge {
        server: String,
        what: &'static str,
        bytes: usize,
    },
}

impl VetError {
    pub fn code(&self) -> &'static str {
        match self {
            VetError::Chain { error, .. } => error.code(),
            VetError::Listing { .. } => "vet_listing",
            VetError::TooManyTools { .. } => "too_many_tools",
            VetError::TooManyValues { .. } => "too_many_values",
            VetError::NoTerminal { .. } => "vet_no_terminal",
            VetError::NotConfirmed { .. } => "vet_not_confirmed",
            VetError::Nothing { .. } => "vet_nothing",
            VetError::Raced { .. } => "vet_raced",
            VetError::TooLarge { .. } => "vet_too_large",
        }
    }

    pub fn is_rejection(&self) -> bool {
        matches!(self, VetError::Chain { .. })
    }
}
