//! The verifier's report types. They derive or implement `Serialize`: the
//! binary renders them as tables or JSON, it never builds JSON by hand.

use super::error::ChainError;
use super::state::VerifyState;
use crate::merkle::Hash;
use crate::note::checkpoint::Checkpoint;
use serde::Serialize;
use serde::ser::{SerializeStruct, Serializer};
use std::path::PathBuf;

/// The verdict on one log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LogStatus {
    /// Every record verified and is covered by a signed checkpoint.
    Valid,
    /// Evidence of tampering or corruption (see the failure).
    Invalid,
    /// A valid prefix: records after the last signed checkpoint, or an
    /// incomplete final line (`torn_tail`).
    Partial,
    /// Structurally valid (hash chain, Merkle tree, checkpoint roots), but
    /// no trusted key was given for its origin, so no checkpoint signature
    /// was checked: anyone could have written it. Rejected unless the run
    /// is [`VerifyMode::ChainOnly`].
    Unauthenticated,
    /// The log could not be read (operational error).
    Error,
}

impl LogStatus {
    pub fn as_str(&self) -> &'static str {
        match self {
            LogStatus::Valid => "valid",
            LogStatus::Invalid => "invalid",
            LogStatus::Partial => "partial",
            LogStatus::Unauthenticated => "unauthenticated",
            LogStatus::Error => "error",
        }
    }
}

/// Where a log first failed verification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The file (segment) where it failed.
    pub path: PathBuf,
    /// 1-based line number in that file.
    pub line: u64,
    /// Byte offset of the line's start in the file.
    pub offset: u64,
    /// The seq of the failing record, when known.
    pub seq: Option<u64>,
    pub error: ChainError,
    /// For a `broken_link`: the record a trusted checkpoint shows was
    /// changed, when one does ([`super::blame`]).
    pub changed: Option<super::blame::Changed>,
}

impl Failure {
    /// For a `broken_link` at record k+1: (k, k+1), the records the break
    /// lies between.
    pub fn between(&self) -> Option<(u64, u64)> {
        match self.error {
            ChainError::BrokenLink { seq, .. } if seq > 0 => Some((seq - 1, seq)),
            _ => None,
        }
    }
}

impl Serialize for Failure {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Failure", 8)?;
        st.serialize_field("between", &self.between().map(|(a, b)| [a, b]))?;
        st.serialize_field("changed", &self.changed)?;
        st.serialize_field("line", &self.line)?;
        st.serialize_field("message", &self.error.to_string())?;
        st.serialize_field("offset", &self.offset)?;
        st.serialize_field("path", &self.path.display().to_string())?;
        st.serialize_field("reason", self.error.code())?;
        st.serialize_field("seq", &self.seq)?;
        st.end()
    }
}

/// A log that passed verification (possibly partially). Only the verifier
/// builds it.
#[derive(Debug, Clone)]
pub struct VerifiedLog {
    pub(super) origin: Option<String>,
    pub(super) records: u64,
    pub(super) covered: u64,
    pub(super) root: Hash,
    pub(super) last_checkpoint: Option<Checkpoint>,
    pub(super) authenticated: bool,
    pub(super) range: crate::merkle::CompactRange,
}

impl VerifiedLog {
    /// The log's origin (None for an empty log).
    pub fn origin(&self) -> Option<&str> {
        self.origin.as_deref()
    }
    /// Number of complete records.
    pub fn records(&self) -> u64 {
        self.records
    }
    /// Records covered by the last verified signed checkpoint.
    pub fn covered(&self) -> u64 {
        self.covered
    }
    /// RFC 6962 root over all complete records.
    pub fn root(&self) -> Hash {
        self.root
    }
    /// The last checkpoint verified in the log.
    pub fn last_checkpoint(&self) -> Option<&Checkpoint> {
        self.last_checkpoint.as_ref()
    }
    /// The compact Merkle range over all complete records.
    pub fn range(&self) -> &crate::merkle::CompactRange {
        &self.range
    }
    /// Whether checkpoint signatures were checked against trusted keys.
    pub fn authenticated(&self) -> bool {
        self.authenticated
    }
}

/// The result of verifying one log.
#[derive(Debug, Clone)]
pub struct LogReport {
    /// The log's first segment file.
    pub path: PathBuf,
    /// All segment files, in chain order.
    pub segments: Vec<PathBuf>,
    pub origin: Option<String>,
    pub status: LogStatus,
    pub bytes: u64,
    /// Complete record lines.
    pub records: u64,
    /// Records covered by the last verified signed checkpoint.
    pub covered: u64,
    /// Checkpoints (including key rotations) verified.
    pub checkpoints: u64,
    /// For an invalid log: the first failure.
    pub failure: Option<Failure>,
    /// For a partial log: an incomplete final line of this many bytes.
    pub torn_tail: Option<u64>,
    /// For an unreadable log: what went wrong.
    pub error: Option<String>,
    /// Present unless the log is invalid or unreadable.
    pub verified: Option<VerifiedLog>,
    /// When resumed from a saved state: the records verified before.
    pub resumed_from: Option<u64>,
}

impl Serialize for LogReport {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("LogReport", 15)?;
        st.serialize_field("bytes", &self.bytes)?;
        st.serialize_field("checkpoints", &self.checkpoints)?;
        st.serialize_field("covered", &self.covered)?;
        st.serialize_field("error", &self.error)?;
        st.serialize_field("failure", &self.failure)?;
        st.serialize_field("origin", &self.origin)?;
        st.serialize_field("path", &self.path.display().to_string())?;
        st.serialize_field("reason", &self.reason())?;
        st.serialize_field("records", &self.records)?;
        st.serialize_field("resumed_from", &self.resumed_from)?;
        st.serialize_field(
            "root",
            &self
                .verified
                .as_ref()
                .map(|v| crate::hex::encode(&v.root())),
        )?;
        let segments: Vec<String> = self
            .segments
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        st.serialize_field("segments", &segments)?;
        st.serialize_field("status", &self.status)?;
        st.serialize_field("torn_tail_bytes", &self.torn_tail)?;
        st.end()
    }
}

impl LogReport {
    /// The reason code shown for this log, if any.
    pub fn reason(&self) -> Option<&'static str> {
        match (&self.failure, self.status) {
            (Some(f), _) => Some(f.error.code()),
            (None, LogStatus::Partial) if self.torn_tail.is_some() => Some("torn_tail"),
            (None, LogStatus::Partial) => Some("uncovered"),
            (None, LogStatus::Error) => Some("io_error"),
            (None, LogStatus::Unauthenticated)
                if self.verified.as_ref().is_some_and(|v| v.authenticated) =>
            {
                Some("no_signed_checkpoint")
            }
            (None, LogStatus::Unauthenticated) => Some("no_trusted_key"),
            _ => None,
        }
    }
}

/// The result of verifying a set of logs, in a deterministic order (sorted by path).
#[derive(Debug, Clone)]
pub struct FleetReport {
    pub logs: Vec<LogReport>,
    /// What to remember for the next incremental run.
    pub state: VerifyState,
}

/// Counts over a fleet report, as shown under the table and in JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct FleetSummary {
    pub logs: usize,
    pub valid: usize,
    pub invalid: usize,
    pub partial: usize,
    pub unauthenticated: usize,
    pub error: usize,
    pub records: u64,
    pub bytes: u64,
}

impl FleetReport {
    /// Whether the verdict rests on trusted keys in `mode`: false in
    /// [`VerifyMode::ChainOnly`] and when any log is `unauthenticated`.
    pub fn authenticated(&self, mode: VerifyMode) -> bool {
        mode == VerifyMode::Authenticated
            && !self
                .logs
                .iter()
                .any(|l| l.status == LogStatus::Unauthenticated)
    }

    /// The counts by status, records and bytes.
    pub fn summary(&self) -> FleetSummary {
        let count = |s: LogStatus| self.logs.iter().filter(|l| l.status == s).count();
        FleetSummary {
            logs: self.logs.len(),
            valid: count(LogStatus::Valid),
            invalid: count(LogStatus::Invalid),
            partial: count(LogStatus::Partial),
            unauthenticated: count(LogStatus::Unauthenticated),
            error: count(LogStatus::Error),
            records: self.logs.iter().map(|l| l.records).sum(),
            bytes: self.logs.iter().map(|l| l.bytes).sum(),
        }
    }

    /// 0 when everything verified; 1 when any log was rejected: invalid,
    /// unauthenticated (no trusted key vouches for it) unless `mode` is
    /// [`VerifyMode::ChainOnly`], and with `strict` also partial; otherwise
    /// 2 when any log could not be read. Rejected evidence wins over an
    /// unreadable file, so a tampered log is never reported as a mere
    /// operational error (the same rule as `anchor verify`).
    pub fn exit_code(&self, strict: bool, mode: VerifyMode) -> u8 {
        let rejected = self.logs.iter().any(|log| match log.status {
            LogStatus::Invalid => true,
            LogStatus::Unauthenticated => mode == VerifyMode::Authenticated,
            LogStatus::Partial => strict,
            LogStatus::Valid | LogStatus::Error => false,
        });
        if rejected {
            1
        } else if self.logs.iter().any(|log| log.status == LogStatus::Error) {
            2
        } else {
            0
        }
    }
}

/// What a `vouch verify` run accepts as verified (exit 0): "verified"
/// means verified against a key the user trusts, unless the user asked
/// for the chain only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum VerifyMode {
    /// Every log must be authenticated by a trusted key given for its
    /// origin: an `unauthenticated` log is rejected (exit 1), so a log
    /// re-signed by anyone under a fresh key never passes a run that
    /// forgot `--pub`.
    #[default]
    Authenticated,
    /// `--chain-only`: no key is trusted. The hash chain, the canonical
    /// form, the Merkle tree and the checkpoint roots are checked and an
    /// internally consistent log is accepted as `unauthenticated`: nothing
    /// is authenticated (anyone could have written it).
    ChainOnly,
}

/// Format tag of `vouch verify --format json`.
pub const VERIFY_FORMAT: &str = "vouch-verify/1";

/// The whole `vouch verify --format json` document. Serializing it streams
/// one log at a time into the writer (a fleet report can hold many
/// thousands of logs).
#[derive(Debug, Serialize)]
pub struct VerifyDocument<'a> {
    pub format: &'static str,
    /// `authenticated`, or `chain_only` (nothing was authenticated).
    pub mode: VerifyMode,
    /// Whether the verdict rests on trusted keys: false in `chain_only`
    /// mode and whenever a log is `unauthenticated`.
    pub authenticated: bool,
    pub logs: &'a [LogReport],
    pub summary: FleetSummary,
    /// Present when `--state` was given: whether it was saved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<StateOutcome>,
    pub exit_code: u8,
}

/// The last line of `--format ndjson`.
#[derive(Debug, Serialize)]
pub struct VerifySummaryLine {
    pub mode: VerifyMode,
    /// As in [`VerifyDocument::authenticated`].
    pub authenticated: bool,
    pub summary: FleetSummary,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<StateOutcome>,
    pub exit_code: u8,
}

/// Whether the state of an incremental audit was saved.
#[derive(Debug, Clone, Serialize)]
pub struct StateOutcome {
    pub saved: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}
