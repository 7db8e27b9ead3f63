//! The chain records drift writes (`drift_snapshot`, `drift_accept`,
//! `drift_check`; docs/FORMAT.md §17.3) and the history read back from a
//! verified log.
//!
//! A baseline is taken only from records covered by a checkpoint that the
//! trust path ([`crate::chain::trust`], through [`crate::chain::read`])
//! accepted: a record after the last trusted checkpoint can be edited
//! without breaking any link, so it is listed as uncovered and never used.
//! The history must also be consistent: every acceptance names the
//! baseline it replaced, and a `drift_snapshot` claims to be the first
//! baseline only when there was none; anything else is
//! [`DriftError::BrokenHistory`].

use super::error::{DriftError, TargetProblem};
use super::snapshot::TargetKind;
use crate::chain::read::read_log;
use crate::chain::{TrustedKeys, VerifyOptions};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;

pub const KIND_SNAPSHOT: &str = "drift_snapshot";
pub const KIND_ACCEPT: &str = "drift_accept";
pub const KIND_CHECK: &str = "drift_check";

/// Counts of differences, by what changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Counts {
    pub added: u64,
    pub removed: u64,
    pub changed: u64,
    pub renamed: u64,
    /// Changes a rule expects (grown, rotated): reported, not drift.
    pub expected: u64,
}

impl Counts {
    /// Differences that are drift.
    pub fn total(&self) -> u64 {
        self.added + self.removed + self.changed + self.renamed
    }
}

/// The body of a `drift_snapshot` record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SnapshotBody {
    pub target: String,
    pub kind: TargetKind,
    pub snapshot: String,
    pub count: u64,
    /// True when this snapshot became the baseline (there was none).
    pub baseline: bool,
}

/// The body of a `drift_accept` record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AcceptBody {
    pub target: String,
    pub kind: TargetKind,
    /// The new baseline.
    pub snapshot: String,
    pub count: u64,
    /// The baseline it replaces.
    pub previous: String,
    pub reason: String,
    /// The paths, pointers or names accepted; absent: every difference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub only: Option<Vec<String>>,
    /// The differences accepted.
    pub accepted: Counts,
}

/// The result of a check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckResult {
    NoDrift,
    Drift,
    /// No drift was found, but some paths could not be examined.
    Incomplete,
}

impl CheckResult {
    pub fn as_str(self) -> &'static str {
        match self {
            CheckResult::NoDrift => "no_drift",
            CheckResult::Drift => "drift",
            CheckResult::Incomplete => "incomplete",
        }
    }
}

/// The body of a `drift_check` record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckBody {
    pub target: String,
    pub kind: TargetKind,
    /// The baseline compared with.
    pub baseline: String,
    /// This run's snapshot.
    pub snapshot: String,
    pub count: u64,
    pub result: CheckResult,
    pub counts: Counts,
    /// Paths that could not be examined.
    pub unchecked: u64,
}

/// One covered drift record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    Snapshot(SnapshotBody),
    Accept(AcceptBody),
    Check(CheckBody),
}

impl Event {
    pub fn target(&self) -> &str {
        match self {
            Event::Snapshot(b) => &b.target,
            Event::Accept(b) => &b.target,
            Event::Check(b) => &b.target,
        }
    }
    pub fn kind_name(&self) -> &'static str {
        match self {
            Event::Snapshot(_) => KIND_SNAPSHOT,
            Event::Accept(_) => KIND_ACCEPT,
            Event::Check(_) => KIND_CHECK,
        }
    }
}

/// A covered drift record with its place in the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dated {
    pub seq: u64,
    /// The record's `ts` (the writer's clock).
    pub ts: String,
    pub event: Event,
}

/// The baseline of a target: the record that set it and its snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Baseline {
    pub seq: u64,
    pub ts: String,
    pub kind: TargetKind,
    pub snapshot: String,
    pub count: u64,
    /// The reason given, for a baseline set by an acceptance.
    pub reason: Option<String>,
}

impl Baseline {
    fn set_by(
        d: &Dated,
        kind: TargetKind,
        snapshot: &str,
        count: u64,
        reason: Option<&str>,
    ) -> Self {
        Baseline {
            seq: d.seq,
            ts: d.ts.clone(),
            kind,
            snapshot: snapshot.to_owned(),
            count,
            reason: reason.map(str::to_owned),
        }
    }
}

/// The drift history of a verified log.
#[derive(Debug, Clone)]
pub struct History {
    /// Covered drift records, in log order.
    pub events: Vec<Dated>,
    /// Seqs of drift records after the last trusted checkpoint (not used).
    pub uncovered: Vec<u64>,
    /// Records in the log (the next record's seq).
    pub records: u64,
    /// Records covered by the last trusted checkpoint.
    pub covered: u64,
}

impl History {
    /// The accepted baseline of `target`, checking that the history of
    /// acceptances is consistent.
    pub fn baseline(&self, target: &str) -> std::result::Result<Option<Baseline>, DriftError> {
        let mut current: Option<Baseline> = None;
        for d in &self.events {
            match &d.event {
                Event::Snapshot(b) if b.target == target && b.baseline => {
                    if let Some(c) = &current {
                        return Err(DriftError::BrokenHistory {
                            seq: d.seq,
                            claimed: "none".into(),
                            actual: c.snapshot.clone(),
                        });
                    }
                    current = Some(Baseline::set_by(d, b.kind, &b.snapshot, b.count, None));
                }
                Event::Accept(b) if b.target == target => {
                    let actual = current.as_ref().map_or("none", |c| c.snapshot.as_str());
                    if actual != b.previous {
                        return Err(DriftError::BrokenHistory {
                            seq: d.seq,
                            claimed: b.previous.clone(),
                            actual: actual.to_owned(),
                        });
                    }
                    current = Some(Baseline::set_by(
                        d,
                        b.kind,
                        &b.snapshot,
                        b.count,
                        Some(&b.reason),
                    ));
                }
                _ => {}
            }
        }
        Ok(current)
    }
}

fn parse<T: serde::de::DeserializeOwned>(
    seq: u64,
    kind: &'static str,
    body: &[u8],
) -> std::result::Result<T, DriftError> {
    serde_json::from_slice(body).map_err(|e| DriftError::Record {
        seq,
        kind,
        problem: e.to_string(),
    })
}

/// Reads and verifies `log` with `keys` (the trust path of `vouch
/// verify`) and returns its drift history. A log that does not verify is
/// [`DriftError::Chain`]; so is a covered drift record that is not
/// well formed.
pub fn history(log: &Path, keys: &TrustedKeys) -> Result<History> {
    if keys.is_empty() {
        return Err(Error::MissingOption {
            option: "--pub KEY.pub",
            needed_for: "reading a drift baseline",
        });
    }
    let opts = VerifyOptions {
        trusted: keys.clone(),
        ..VerifyOptions::default()
    };
    let mut raw: Vec<(u64, &'static str, Vec<u8>, String)> = Vec::new();
    let report = read_log(log, &opts, &mut |r| {
        let kind = match r.kind {
            b"drift_snapshot" => KIND_SNAPSHOT,
            b"drift_accept" => KIND_ACCEPT,
            b"drift_check" => KIND_CHECK,
            _ => return,
        };
        raw.push((
            r.seq,
            kind,
            r.body.to_vec(),
            crate::chain::read::record_ts(r.line),
        ));
    })?;
    crate::chain::read::accept_report(log, &report, |seq, error| {
        Error::Drift(DriftError::Chain { seq, error })
    })?;
    let covered = report
        .verified
        .as_ref()
        .filter(|v| v.authenticated())
        .map_or(0, |v| v.covered());
    let mut events = Vec::new();
    let mut uncovered = Vec::new();
    for (seq, kind, body, ts) in raw {
        if seq >= covered {
            uncovered.push(seq);
            continue;
        }
        let event = match kind {
            KIND_SNAPSHOT => Event::Snapshot(parse(seq, kind, &body)?),
            KIND_ACCEPT => Event::Accept(parse(seq, kind, &body)?),
            _ => Event::Check(parse(seq, kind, &body)?),
        };
        events.push(Dated { seq, ts, event });
    }
    Ok(History {
        events,
        uncovered,
        records: report.records,
        covered,
    })
}

/// The history of a log that may not exist yet (a first snapshot).
pub fn history_or_empty(log: &Path, keys: &TrustedKeys) -> Result<History> {
    match std::fs::symlink_metadata(log) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(History {
            events: Vec::new(),
            uncovered: Vec::new(),
            records: 0,
            covered: 0,
        }),
        _ => history(log, keys),
    }
}

/// Appends one drift record and a checkpoint covering it, provided the log
/// still has `expect` records (the ones its baseline was read from):
/// compare-and-swap, so two acceptances cannot both build on one baseline.
pub fn append(
    log: &Path,
    key: &crate::note::SignerKey,
    kind: &'static str,
    body: serde_json::Value,
    expect: u64,
    target: &str,
) -> Result<(u64, crate::chain::writer::Covered)> {
    let (covered, seq) = crate::chain::writer::append_covered_with(log, key, |next| {
        if next != expect {
            return Err(Error::DriftTarget {
                target: target.to_owned(),
                problem: TargetProblem::Raced,
            });
        }
        Ok((vec![(kind, body)], next))
    })?;
    Ok((seq, covered))
}
