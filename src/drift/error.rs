//! Why drift evidence (the chain's drift records and the snapshots they
//! name) was rejected, and why a target could not be examined.

use crate::chain::ChainError;

/// Drift evidence that does not hold: the baseline cannot be trusted.
/// Each variant names what was compared; [`DriftError::code`] is stable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DriftError {
    /// The log does not verify (the same check as `vouch verify`).
    #[error("the log does not verify{}: {error}", at_record(*seq))]
    Chain { seq: Option<u64>, error: ChainError },
    /// A snapshot file named by a covered record is not there.
    #[error("snapshot {digest} named by record {seq} is missing from {store}")]
    SnapshotMissing {
        seq: u64,
        digest: String,
        store: String,
    },
    /// A snapshot file's bytes do not hash to the digest its record names.
    #[error("snapshot {digest} named by record {seq} was altered (its bytes hash to {actual})")]
    SnapshotAltered {
        seq: u64,
        digest: String,
        actual: String,
    },
    /// A snapshot file hashes right but does not say what its record says.
    #[error("snapshot {digest} (record {seq}) does not match its record: {problem}")]
    SnapshotMismatch {
        seq: u64,
        digest: String,
        problem: String,
    },
    /// A snapshot file that is not a well-formed snapshot.
    #[error("snapshot {digest}, line {line}: {problem}")]
    SnapshotForm {
        digest: String,
        line: u64,
        problem: String,
    },
    /// A covered drift record whose body is not what drift writes.
    #[error("record {seq} ({kind}) is not a well-formed drift record: {problem}")]
    Record {
        seq: u64,
        kind: &'static str,
        problem: String,
    },
    /// An acceptance that does not follow from the baseline before it.
    #[error("record {seq} accepts over baseline {claimed}, but the baseline then was {actual}")]
    BrokenHistory {
        seq: u64,
        claimed: String,
        actual: String,
    },
}

impl DriftError {
    pub fn code(&self) -> &'static str {
        match self {
            DriftError::Chain { error, .. } => error.code(),
            DriftError::SnapshotMissing { .. } => "snapshot_missing",
            DriftError::SnapshotAltered { .. } => "snapshot_altered",
            DriftError::SnapshotMismatch { .. } => "snapshot_mismatch",
            DriftError::SnapshotForm { .. } => "bad_snapshot",
            DriftError::Record { .. } => "bad_drift_record",
            DriftError::BrokenHistory { .. } => "broken_drift_history",
        }
    }
}

/// Why a target could not be examined (an operational error, exit 2).
#[derive(Debug, thiserror::Error)]
pub enum TargetProblem {
    #[error("no such file or directory")]
    Missing,
    #[error("not a directory, a configuration file (.json, .yaml, .yml, .toml) or an mcp: target")]
    Unsupported,
    #[error("cannot read it: {0}")]
    Unreadable(String),
    #[error("it is a {found} target; the baseline is a {baseline} target")]
    KindChanged {
        found: &'static str,
        baseline: &'static str,
    },
    #[error("{0}")]
    Rules(String),
    #[error(
        "the rules differ from the baseline's (rules {given} given, baseline has {baseline}); accept with --rules to change them"
    )]
    RulesDiffer { given: String, baseline: String },
    #[error("no baseline for this target in the log (run `vouch drift snapshot` first)")]
    NoBaseline,
    /// `drift history --target`: the log records nothing for it.
    #[error(
        "the log records nothing for this target ({} recorded; `vouch drift history` without --target lists them)",
        crate::error::count(*recorded as u64, "other target")
    )]
    NotRecorded { recorded: usize },
    #[error("new --rules change what is compared: accept every difference (no --only)")]
    RulesWithOnly,
    #[error("nothing matches --only {0:?}")]
    NoSuchChange(String),
    #[error("the log changed while the baseline was read; run the command again")]
    Raced,
    /// A configuration target that has no exact JSON value; `file` is
    /// named when the target goes by another name (`--name`).
    #[error("{}{problem}", file.as_ref().map(|f| format!("{f}: ")).unwrap_or_default())]
    Config {
        file: Option<String>,
        problem: Box<crate::drift::config::ConfigError>,
    },
    #[error("mtree spec: {0}")]
    Mtree(Box<crate::drift::mtree::MtreeError>),
    #[error("{0}")]
    Mcp(Box<crate::mcp::McpError>),
}

impl TargetProblem {
    pub fn code(&self) -> &'static str {
        match self {
            TargetProblem::Missing => "target_missing",
            TargetProblem::Unsupported => "unsupported_target",
            TargetProblem::Unreadable(_) => "target_unreadable",
            TargetProblem::KindChanged { .. } => "target_kind_changed",
            TargetProblem::Rules(_) => "bad_rules",
            TargetProblem::RulesDiffer { .. } => "rules_differ",
            TargetProblem::NoBaseline => "no_baseline",
            TargetProblem::NotRecorded { .. } => "target_not_recorded",
            TargetProblem::RulesWithOnly => "rules_with_only",
            TargetProblem::NoSuchChange(_) => "no_such_change",
            TargetProblem::Raced => "log_changed",
            TargetProblem::Config { problem, .. } => problem.code(),
            TargetProblem::Mtree(e) => e.code(),
            TargetProblem::Mcp(e) => e.code(),
        }
    }
}

/// ` at record N`, or nothing when the record is not known.
fn at_record(seq: Option<u64>) -> String {
    seq.map(|s| format!(" at record {s}")).unwrap_or_default()
}
