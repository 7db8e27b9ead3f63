//! The verifier's report types. They derive or implement `Serialize`: the
//! binary renders them as tables or JSON, it never builds JSON by hand.

use super::error::ChainError;
use super::state::VerifyState;
use crate::merkle::Hash;
use crate::note::checkpoint::Checkpoint;
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The verdict on one log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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

impl Failure {
    /// The failure as reports show it.
    pub fn row(&self) -> FailureRow {
        FailureRow {
            between: self.between().map(|(a, b)| [a, b]),
            changed: self.changed,
            line: self.line,
            message: self.error.to_string(),
            offset: self.offset,
            path: self.path.display().to_string(),
            reason: self.error.code().to_owned(),
            seq: self.seq,
        }
    }
}

impl Serialize for Failure {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.row().serialize(s)
    }
}

/// A failure as reports show it (JSON, tables, merged shard reports).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FailureRow {
    /// The two records of a broken link.
    pub between: Option<[u64; 2]>,
    pub changed: Option<super::blame::Changed>,
    pub line: u64,
    pub message: String,
    pub offset: u64,
    pub path: String,
    pub reason: String,
    pub seq: Option<u64>,
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

impl LogReport {
    /// The log's row as reports show it.
    pub fn row(&self) -> LogRow {
        LogRow {
            bytes: self.bytes,
            checkpoints: self.checkpoints,
            covered: self.covered,
            error: self.error.clone(),
            failure: self.failure.as_ref().map(Failure::row),
            origin: self.origin.clone(),
            path: self.path.display().to_string(),
            reason: self.reason().map(str::to_owned),
            records: self.records,
            resumed_from: self.resumed_from,
            root: self
                .verified
                .as_ref()
                .map(|v| crate::hex::encode(&v.root())),
            segments: self
                .segments
                .iter()
                .map(|p| p.display().to_string())
                .collect(),
            status: self.status,
            torn_tail_bytes: self.torn_tail,
        }
    }
}

impl Serialize for LogReport {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.row().serialize(s)
    }
}

/// One log's row as reports show it: what `--format json` prints, what a
/// table is drawn from, and what `verify --merge` reads back from shard
/// reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogRow {
    pub bytes: u64,
    pub checkpoints: u64,
    pub covered: u64,
    pub error: Option<String>,
    pub failure: Option<FailureRow>,
    pub origin: Option<String>,
    pub path: String,
    pub reason: Option<String>,
    pub records: u64,
    pub resumed_from: Option<u64>,
    pub root: Option<String>,
    pub segments: Vec<String>,
    pub status: LogStatus,
    pub torn_tail_bytes: Option<u64>,
}

/// The fleet's counts, from its logs' statuses.
pub fn summarize<'a>(rows: impl Iterator<Item = (&'a LogStatus, u64, u64)>) -> FleetSummary {
    let mut s = FleetSummary {
        logs: 0,
        valid: 0,
        invalid: 0,
        partial: 0,
        unauthenticated: 0,
        error: 0,
        records: 0,
        bytes: 0,
    };
    for (status, records, bytes) in rows {
        s.logs += 1;
        match status {
            LogStatus::Valid => s.valid += 1,
            LogStatus::Invalid => s.invalid += 1,
            LogStatus::Partial => s.partial += 1,
            LogStatus::Unauthenticated => s.unauthenticated += 1,
            LogStatus::Error => s.error += 1,
        }
        s.records += records;
        s.bytes += bytes;
    }
    s
}

/// The exit code of a fleet with these statuses: 1 when a log is rejected
/// (invalid; unauthenticated unless chain-only; partial under `strict`),
/// else 2 when a log could not be read, else 0.
pub fn exit_code_of<'a>(
    statuses: impl Iterator<Item = &'a LogStatus> + Clone,
    strict: bool,
    mode: VerifyMode,
) -> u8 {
    let rejected = statuses.clone().any(|status| match status {
        LogStatus::Invalid => true,
        LogStatus::Unauthenticated => mode == VerifyMode::Authenticated,
        LogStatus::Partial => strict,
        LogStatus::Valid | LogStatus::Error => false,
    });
    if rejected {
        1
    } else if statuses.into_iter().any(|s| *s == LogStatus::Error) {
        2
    } else {
        0
    }
}

/// Whether a fleet with these statuses was authenticated.
pub fn authenticated_of<'a>(
    mut statuses: impl Iterator<Item = &'a LogStatus>,
    mode: VerifyMode,
) -> bool {
    mode == VerifyMode::Authenticated && !statuses.any(|s| *s == LogStatus::Unauthenticated)
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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
        authenticated_of(self.logs.iter().map(|l| &l.status), mode)
    }

    /// The counts by status, records and bytes.
    pub fn summary(&self) -> FleetSummary {
        summarize(self.logs.iter().map(|l| (&l.status, l.records, l.bytes)))
    }

    /// 0 when everything verified; 1 when any log was rejected: invalid,
    /// unauthenticated (no trusted key vouches for it) unless `mode` is
    /// [`VerifyMode::ChainOnly`], and with `strict` also partial; otherwise
    /// 2 when any log could not be read. Rejected evidence wins over an
    /// unreadable file, so a tampered log is never reported as a mere
    /// operational error (the same rule as `anchor verify`).
    pub fn exit_code(&self, strict: bool, mode: VerifyMode) -> u8 {
        exit_code_of(self.logs.iter().map(|l| &l.status), strict, mode)
    }
}

/// What a `vouch verify` run accepts as verified (exit 0): "verified"
/// means verified against a key the user trusts, unless the user asked
/// for the chain only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
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
pub struct VerifyDocument<'a, L: Serialize = LogReport> {
    pub format: &'static str,
    /// `authenticated`, or `chain_only` (nothing was authenticated).
    pub mode: VerifyMode,
    /// Whether the verdict rests on trusted keys: false in `chain_only`
    /// mode and whenever a log is `unauthenticated`.
    pub authenticated: bool,
    pub logs: &'a [L],
    pub summary: FleetSummary,
    /// Present when `--state` was given: whether it was saved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<StateOutcome>,
    /// Present for one shard of a fleet (`--shard I/N`): what
    /// `verify --merge` needs to prove the shards complete.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardInfo>,
    /// Present for a report merged from shards (`--merge`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merged: Option<MergedFrom>,
    /// Present when objects were read from a store: requests and bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transfer: Option<crate::objstore::Transfer>,
    pub exit_code: u8,
}

/// The last line of `--format ndjson`.
#[derive(Debug, Serialize)]
pub struct VerifySummaryLine {
    pub mode: VerifyMode,
    /// As in [`VerifyDocument::merged`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merged: Option<MergedFrom>,
    /// As in [`VerifyDocument::transfer`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transfer: Option<crate::objstore::Transfer>,
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

/// What a shard's report carries for the merge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardInfo {
    pub index: u32,
    pub count: u32,
    /// SHA-256 (hex) of every input's name in the whole listing this shard
    /// saw, before it took its share.
    pub listing: String,
    /// How many inputs the listing held.
    pub inputs: u64,
    /// SHA-256 (hex) of what decides verdicts: the trusted keys, the
    /// auditor's checkpoints, the mode and `--strict`.
    pub options: String,
    pub mode: VerifyMode,
    pub strict: bool,
    /// The rows of logs the auditor's checkpoints name that this shard did
    /// not find: the merge keeps those no shard found.
    pub missing: Vec<LogRow>,
}

/// What a merged report was merged from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MergedFrom {
    pub shards: u32,
    pub listing: String,
    pub inputs: u64,
    pub options: String,
}

impl LogReport {
    /// The row of a log that could not be read or planned (exit 2).
    pub(super) fn error_row(path: &std::path::Path, bytes: u64, message: String) -> Self {
        LogReport {
            path: path.to_path_buf(),
            segments: vec![path.to_path_buf()],
            origin: None,
            status: LogStatus::Error,
            bytes,
            records: 0,
            covered: 0,
            checkpoints: 0,
            failure: None,
            torn_tail: None,
            error: Some(message),
            verified: None,
            resumed_from: None,
        }
    }
}
