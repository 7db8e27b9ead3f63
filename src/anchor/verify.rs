//! `vouch anchor verify`: check every anchor of a log against the
//! auditor's targets, and the log against every anchored checkpoint
//! (docs/FORMAT.md §9.3).
//!
//! What is verified, per log (a file with its rotated segments; several
//! logs when given several paths or a directory):
//! - every `anchor` record: its body, that it is for this log's origin,
//!   that its note counts under the trust rule at its size, and each of its
//!   entries ([`super::check`]): a token against the TSA roots, a storage
//!   locator fetched from the auditor's target that holds it (never from a
//!   location only the log names);
//! - every note of this origin found by listing each auditor target
//!   (`--from`): this finds anchors whose records were cut off the log;
//! - the log itself, with every anchored checkpoint as an auditor
//!   checkpoint, so a log truncated, rolled back or rewritten after an
//!   anchor fails even when its signing key leaked.
//!
//! The verdict claims only what was checked: without a listed target,
//! truncation after the last anchor record cannot be detected and the log
//! is `incomplete`, never `consistent`.

use super::check::{AuditorTargets, CheckContext, EntryOutcome, Online};
use super::record::{AnchorBody, AnchorEntry, scan_log, sha256_hex};
use super::state::StateFile;
use super::{Target, dir};
use crate::chain::error::ChainError;
use crate::chain::verify::{AuditorCheckpoint, LogReport, LogStatus, VerifyOptions, verify_files};
use crate::merkle::Hash;
use crate::{Error, Result};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

pub use super::error::{AnchorError, ListedObjectProblem};

mod listed;
mod report;
use listed::*;
pub use report::*;

/// Where a checked anchor came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckSource {
    /// An `anchor` record at this seq.
    Record { seq: u64 },
    /// Found by listing one of the auditor's targets.
    Listing,
}

impl CheckSource {
    /// `record` or `listing`.
    pub fn as_str(&self) -> &'static str {
        match self {
            CheckSource::Record { .. } => "record",
            CheckSource::Listing => "listing",
        }
    }

    /// The seq of the `anchor` record, for an anchor found in one.
    pub fn record_seq(&self) -> Option<u64> {
        match self {
            CheckSource::Record { seq } => Some(*seq),
            CheckSource::Listing => None,
        }
    }
}

/// The result of checking one anchor.
pub type CheckOutcome = EntryOutcome;

impl EntryOutcome {
    /// `verified`, `not_checked`, `rejected` or `error`.
    pub fn status(&self) -> &'static str {
        match self {
            EntryOutcome::Verified(_) => "verified",
            EntryOutcome::NotChecked(_) => "not_checked",
            EntryOutcome::Rejected(_) => "rejected",
            EntryOutcome::Error(_) => "error",
        }
    }

    /// The reason code of anything but a verification.
    pub fn reason(&self) -> Option<&'static str> {
        match self {
            EntryOutcome::Verified(_) => None,
            EntryOutcome::NotChecked(n) => Some(n.code()),
            EntryOutcome::Rejected(e) => Some(e.code()),
            EntryOutcome::Error(e) => Some(e.code()),
        }
    }

    /// The message of anything but a verification; empty when verified.
    pub fn message(&self) -> String {
        match self {
            EntryOutcome::Verified(_) => String::new(),
            EntryOutcome::NotChecked(n) => n.message().to_owned(),
            EntryOutcome::Rejected(e) => e.to_string(),
            EntryOutcome::Error(e) => e.to_string(),
        }
    }

    /// What was found at the target or in the verified token.
    pub fn found(&self) -> &[(&'static str, String)] {
        match self {
            EntryOutcome::Verified(f) => f,
            _ => &[],
        }
    }
}

/// One anchored checkpoint at one location.
#[derive(Debug)]
pub struct AnchorCheck {
    pub source: CheckSource,
    /// `dir`, `s3`, `tsa`, or `record` for an unreadable record.
    pub kind: &'static str,
    pub location: String,
    pub size: Option<u64>,
    pub root: Option<Hash>,
    pub outcome: CheckOutcome,
}

/// One auditor target listed for a log.
#[derive(Debug)]
pub struct ListedTarget {
    pub target: String,
    /// None when listed; else why not.
    pub error: Option<Error>,
    /// Objects of this origin found there.
    pub objects: usize,
}

/// What [`verify_anchors`] concluded for one log (docs/FORMAT.md §9.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AnchorVerdict {
    /// The log extends every anchored checkpoint found, every anchor
    /// checked verified, and at least one auditor target was listed.
    Consistent,
    /// Nothing was rejected, but not everything was established: an anchor
    /// not checked, or no target listed (truncation after the last anchor
    /// record cannot be detected).
    Incomplete,
    /// No anchor at all, in the log or at a target.
    NoAnchors,
    /// A target could not be asked (nothing rejected).
    Error,
    /// An anchor, a listed object or the log was rejected.
    Rejected,
}

impl AnchorVerdict {
    pub fn as_str(&self) -> &'static str {
        match self {
            AnchorVerdict::Consistent => "consistent",
            AnchorVerdict::Incomplete => "incomplete",
            AnchorVerdict::NoAnchors => "no_anchors",
            AnchorVerdict::Error => "error",
            AnchorVerdict::Rejected => "rejected",
        }
    }

    /// 0 consistent; 2 error; 1 otherwise.
    pub fn exit_code(&self) -> u8 {
        match self {
            AnchorVerdict::Consistent => 0,
            AnchorVerdict::Error => 2,
            _ => 1,
        }
    }
}

/// The report of [`verify_anchors`] on one log.
#[derive(Debug)]
pub struct AnchorReport {
    /// The chain verifier's report on the log, run with every anchored
    /// checkpoint as an auditor checkpoint.
    pub log: LogReport,
    pub checks: Vec<AnchorCheck>,
    pub listed: Vec<ListedTarget>,
}

impl AnchorReport {
    /// True when no anchor was found at all.
    pub fn no_anchors(&self) -> bool {
        self.checks.is_empty()
    }

    /// Whether an auditor target was listed and holds anchors of this log:
    /// only then is a truncation after the last anchor record detectable
    /// (a target that holds none says nothing about what the log lost).
    pub fn truncation_checked(&self) -> bool {
        self.listed
            .iter()
            .any(|l| l.error.is_none() && l.objects > 0)
    }

    /// What this run could not establish, in words (empty when consistent).
    pub fn not_established(&self) -> Vec<String> {
        let mut out = Vec::new();
        if !self.truncation_checked() {
            out.push(
                if self.listed.iter().any(|l| l.error.is_none()) {
                    "truncation after the last anchor record cannot be detected: no target of yours holds an anchor of this log"
                } else {
                    "truncation after the last anchor record cannot be detected: no target of yours was listed (give --from s3://BUCKET/PREFIX or dir:/PATH)"
                }
                .to_owned(),
            );
        }
        let unchecked = self
            .checks
            .iter()
            .filter(|c| matches!(c.outcome, EntryOutcome::NotChecked(_)))
            .count();
        if unchecked > 0 {
            out.push(format!(
                "{unchecked} anchor(s) not checked (see their rows)"
            ));
        }
        out
    }

    pub fn verdict(&self) -> AnchorVerdict {
        let log_rejected = !matches!(
            self.log.status,
            LogStatus::Valid | LogStatus::Partial | LogStatus::Error
        );
        if log_rejected
            || self
                .checks
                .iter()
                .any(|c| matches!(c.outcome, EntryOutcome::Rejected(_)))
        {
            return AnchorVerdict::Rejected;
        }
        if self.log.status == LogStatus::Error
            || self
                .checks
                .iter()
                .any(|c| matches!(c.outcome, EntryOutcome::Error(_)))
            || self.listed.iter().any(|l| l.error.is_some())
        {
            return AnchorVerdict::Error;
        }
        if self.no_anchors() {
            return AnchorVerdict::NoAnchors;
        }
        if !self.not_established().is_empty() {
            return AnchorVerdict::Incomplete;
        }
        AnchorVerdict::Consistent
    }

    pub fn exit_code(&self) -> u8 {
        self.verdict().exit_code()
    }
}

/// The reports on every log named, and paths that could not be examined.
#[derive(Debug)]
pub struct AnchorFleet {
    pub logs: Vec<AnchorReport>,
    /// Paths that could not be examined, with why (exit 2).
    pub problems: Vec<(PathBuf, String)>,
    /// Logs anchored at a target but not given (directories only; exit 1).
    pub missing: Vec<MissingLog>,
}

impl AnchorFleet {
    /// The worst verdict's exit code: 1 wins over 2 wins over 0.
    pub fn exit_code(&self) -> u8 {
        let codes: Vec<u8> = self
            .logs
            .iter()
            .map(AnchorReport::exit_code)
            .chain((!self.problems.is_empty()).then_some(2))
            .chain((!self.missing.is_empty()).then_some(1))
            .collect();
        if codes.contains(&1) {
            1
        } else if codes.contains(&2) {
            2
        } else {
            0
        }
    }
}

/// Format tag of `vouch anchor verify --format json`.
pub const ANCHOR_VERIFY_FORMAT: &str = "vouch-anchor-verify/2";

/// Options for [`verify_anchors`].
pub struct VerifyAnchorsOptions {
    pub trusted: crate::chain::TrustedKeys,
    /// The auditor's targets: recorded locators are checked only inside
    /// them, and each is listed for further anchored checkpoints.
    pub targets: AuditorTargets,
    /// TSA trust anchors for `tsa:` anchors (without them, those anchors
    /// are not checked).
    pub tsa_roots: Option<crate::tsa::TrustStore>,
    /// Incremental state (`--state`), updated in place; the caller saves it.
    pub state: Option<StateFile>,
    /// Page size of S3 listings (None: the server's default, 1000).
    pub page_size: Option<i32>,
}

/// Checks every anchor of every log named by `paths` (files, with their
/// rotated segments, or directories walked like `vouch verify`).
pub fn verify_anchors(paths: &[PathBuf], opts: &mut VerifyAnchorsOptions) -> Result<AnchorFleet> {
    if opts.trusted.is_empty() {
        return Err(Error::MissingOption {
            option: "--pub KEY",
            needed_for: "anchor verify (anchors are checked against trusted keys)",
        });
    }
    let found = crate::chain::files::collect_log_files(paths)?;
    let online = Online::new(opts.targets.clone());
    let mut indexes: DirIndexes = BTreeMap::new();
    let mut logs = Vec::new();
    let files: Vec<PathBuf> = found
        .files
        .iter()
        .filter_map(|s| s.local_path().map(Path::to_path_buf))
        .collect();
    for path in live_paths(&files) {
        logs.push(verify_log(&path, opts, &online, &mut indexes)?);
    }
    // A directory names a fleet: every origin anchored at an auditor
    // target under a key the auditor trusts must have its log in it.
    let mut missing = Vec::new();
    let mut problems = found.problems;
    if paths.iter().any(|p| p.is_dir()) {
        let present: BTreeSet<String> = logs.iter().filter_map(|l| l.log.origin.clone()).collect();
        for target in online.targets.targets() {
            match missing_logs(target, &present, &opts.trusted, &online, &mut indexes) {
                Ok(m) => missing.extend(m),
                Err(e) => problems.push((PathBuf::from(target.to_string()), e.to_string())),
            }
        }
    }
    Ok(AnchorFleet {
        logs,
        problems,
        missing,
    })
}

/// A log that is not there although a target holds its anchors.
#[derive(Debug, Clone, Serialize)]
pub struct MissingLog {
    pub origin: String,
    pub target: String,
    /// The anchored note found (one that counts under the keys given).
    pub location: String,
    pub size: u64,
    pub reason: &'static str,
}

/// What each directory target holds, by origin ([`dir::index`]); each
/// log takes its own origin's entries, so what is left belongs to no log
/// given.
type DirIndexes = BTreeMap<PathBuf, std::result::Result<dir::Index, String>>;

/// The index of the directory target `path`, made on first use: one pass
/// over the directory per run, its notes by the origin they name.
fn index_of<'a>(indexes: &'a mut DirIndexes, path: &Path) -> Result<&'a mut dir::Index> {
    match indexes
        .entry(path.to_path_buf())
        .or_insert_with(|| dir::index(path).map_err(|e| e.to_string()))
    {
        Ok(index) => Ok(index),
        Err(e) => Err(Error::io(path, std::io::Error::other(e.clone()))),
    }
}

/// The origins with anchors at `target` and no log among `present`: a
/// note of the origin that could count for it under the keys given (a key
/// given, or one a rotation of that log could introduce: the log is gone,
/// so its rotations cannot be replayed), wherever it lies at the target.
fn missing_logs(
    target: &Target,
    present: &BTreeSet<String>,
    trusted: &crate::chain::TrustedKeys,
    online: &Online,
    indexes: &mut DirIndexes,
) -> Result<Vec<MissingLog>> {
    let could_count = |origin: &str, location: &str, bytes: &[u8]| {
        AuditorCheckpoint::from_note(location, bytes, trusted)
            .ok()
            .filter(|cp| cp.checkpoint().origin == origin)
            .map(|cp| cp.checkpoint().size)
    };
    let mut found: Vec<(String, String, u64)> = Vec::new();
    match target {
        Target::Dir { path } => {
            let index = std::mem::take(index_of(indexes, path)?);
            for (origin, entries) in index {
                if present.contains(&origin) {
                    continue;
                }
                let hit = entries.iter().find_map(|e| match e {
                    dir::ListedEntry::Object(o) | dir::ListedEntry::Moved { obj: o, .. } => {
                        let location = format!("dir:{}", o.path.display());
                        could_count(&origin, &location, &o.bytes).map(|size| (location, size))
                    }
                    _ => None,
                });
                if let Some((location, size)) = hit {
                    found.push((origin, location, size));
                }
            }
        }
        #[cfg(feature = "s3")]
        Target::S3 { bucket, prefix } => {
            let session = online.session()?;
            for origin in session.list_folders(bucket, prefix)? {
                if present.contains(&origin) {
                    continue;
                }
                for v in session.list_versions(bucket, prefix, &origin, None)? {
                    let location = format!("s3://{bucket}/{}?versionId={}", v.key, v.version_id);
                    if let Ok(Some(bytes)) = session.get_version(bucket, &v)?
                        && let Some(size) = could_count(&origin, &location, &bytes)
                    {
                        found.push((origin.clone(), location, size));
                        break;
                    }
                }
            }
        }
        #[cfg(not(feature = "s3"))]
        Target::S3 { .. } => return Err(super::s3_disabled()),
        Target::Tsa { .. } => {}
    }
    #[cfg(not(feature = "s3"))]
    let _ = online;
    Ok(found
        .into_iter()
        .map(|(origin, location, size)| MissingLog {
            origin,
            target: target.to_string(),
            location,
            size,
            reason: "missing_log",
        })
        .collect())
}

/// The files that are not segments rotated away from another file given:
/// each names one log (its segments are read with it).
fn live_paths(files: &[PathBuf]) -> Vec<PathBuf> {
    let name = |p: &Path| p.file_name().and_then(|n| n.to_str()).map(str::to_owned);
    files
        .iter()
        .filter(|f| {
            let (Some(n), dir) = (name(f), f.parent()) else {
                return true;
            };
            !files.iter().any(|g| {
                g != *f
                    && g.parent() == dir
                    && name(g).is_some_and(|b| crate::chain::segments::is_segment_of(&b, &n))
            })
        })
        .cloned()
        .collect()
}

/// The identity of a stored object, for de-duplicating records and
/// listings and for the state file.
fn s3_identity(bucket: &str, key: &str, version: Option<&str>) -> String {
    format!("s3:{bucket}/{key}@{}", version.unwrap_or(""))
}

fn verify_log(
    path: &Path,
    opts: &mut VerifyAnchorsOptions,
    online: &Online,
    indexes: &mut DirIndexes,
) -> Result<AnchorReport> {
    let scan = scan_log(path)?;
    let mut checks = Vec::new();
    let mut anchored: Vec<AuditorCheckpoint> = Vec::new();
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let origin = scan.origin.clone();
    let last_checkpoint_seq = scan.checkpoints.last().map(|c| c.0);
    let ctx = CheckContext {
        tsa_roots: opts.tsa_roots.as_ref(),
        online: Some(online),
    };

    for found in &scan.anchors {
        let source = CheckSource::Record { seq: found.seq };
        let Ok(body) = &found.body else {
            checks.push(AnchorCheck {
                source,
                kind: "record",
                location: format!("record {}", found.seq),
                size: None,
                root: None,
                outcome: EntryOutcome::Rejected(AnchorError::BadRecord),
            });
            continue;
        };
        // An anchor record names the log it anchors: one copied from
        // another log (no key is needed to append it) proves nothing here.
        let recorded = match &origin {
            Some(o) if *o != body.origin => Err(AnchorError::OtherLog {
                origin: body.origin.clone(),
            }),
            _ => check_recorded(body, found.seq, &opts.trusted),
        };
        if let Ok(cp) = &recorded {
            anchored.push(cp.clone());
        }
        // A record after the last checkpoint is signed by nothing: anyone
        // who can write the file could have appended it. Its note still
        // goes to the verifier (judged by the trust rule), but its entries
        // are claims, not evidence (docs/FORMAT.md §9.3).
        let covered = last_checkpoint_seq.is_some_and(|c| c > found.seq);
        for entry in &body.anchors {
            let mut check = AnchorCheck {
                source,
                kind: entry.kind(),
                location: entry.location(),
                size: Some(body.size),
                root: body.root_hash(),
                outcome: EntryOutcome::Verified(Vec::new()),
            };
            check.outcome = match &recorded {
                Err(e) => EntryOutcome::Rejected(e.clone()),
                Ok(_) if !covered => match entry {
                    AnchorEntry::Dir(d) if !d.confined() => {
                        EntryOutcome::Rejected(AnchorError::BadRecord)
                    }
                    _ => EntryOutcome::NotChecked(super::check::NotChecked::Uncovered),
                },
                Ok(_) => {
                    if let Some(id) = seen_identity(entry, &online.targets) {
                        seen.insert(id);
                    }
                    check_recorded_entry(entry, body, &ctx, opts.state.as_mut())
                }
            };
            checks.push(check);
        }
    }

    let mut listed = Vec::new();
    if let Some(origin) = &origin {
        for target in online.targets.targets() {
            listed.push(list_target(
                target,
                origin,
                opts,
                (online, indexes),
                &mut seen,
                &mut checks,
                &mut anchored,
            ));
        }
    }

    let vopts = VerifyOptions {
        trusted: opts.trusted.clone(),
        checkpoints: anchored,
        ..Default::default()
    };
    let report = verify_files(&scan.report.segments, &vopts);
    let Some(log) = report.logs.into_iter().next() else {
        return Err(crate::chain::read::changed(path));
    };
    attribute_failure(&log, &mut checks);
    Ok(AnchorReport {
        log,
        checks,
        listed,
    })
}

/// Attributes a truncation or fork found with the anchored checkpoints to
/// the anchors of that checkpoint size.
fn attribute_failure(log: &LogReport, checks: &mut [AnchorCheck]) {
    let Some(failure) = &log.failure else { return };
    let size = match &failure.error {
        ChainError::Truncated {
            checkpoint_size, ..
        } => Some(*checkpoint_size),
        ChainError::Fork { size, .. } => Some(*size),
        _ => None,
    };
    // A checkpoint of that size that does not count under the trust rule
    // (the anchored note, or the log's own copy of it) makes the anchored
    // note itself unusable.
    let untrusted = matches!(
        failure.error,
        ChainError::UnknownKey { .. }
            | ChainError::BadSignature { .. }
            | ChainError::BadCheckpoint { .. }
    );
    for check in checks {
        if !matches!(check.outcome, EntryOutcome::Verified(_)) {
            continue;
        }
        if untrusted && failure.seq.is_some() && check.size == failure.seq {
            check.outcome = EntryOutcome::Rejected(AnchorError::BadNote);
            continue;
        }
        // Only a failure that names this anchor's size is blamed on it; any
        // other failure is the log's own (its row, and the verdict).
        if size.is_some() && check.size == size {
            check.outcome = EntryOutcome::Rejected(AnchorError::Log(failure.error.clone()));
        }
    }
}

/// The recorded note agrees with the record's other fields and could count
/// for this log ([`AuditorCheckpoint::from_note`]); whether it does, at its
/// size under the log's rotations, is judged by the chain verifier, to
/// which it is handed as an auditor checkpoint.
pub(crate) fn check_recorded(
    body: &AnchorBody,
    seq: u64,
    trusted: &crate::chain::TrustedKeys,
) -> Result<AuditorCheckpoint, AnchorError> {
    if sha256_hex(body.note.as_bytes()) != body.note_sha256 {
        return Err(AnchorError::RecordMismatch);
    }
    let cp = AuditorCheckpoint::from_note(
        format!("anchor record {seq}"),
        body.note.as_bytes(),
        trusted,
    )
    .map_err(|_| AnchorError::BadNote)?;
    let claimed = cp.checkpoint();
    if claimed.origin != body.origin
        || claimed.size != body.size
        || Some(claimed.root) != body.root_hash()
    {
        return Err(AnchorError::RecordMismatch);
    }
    Ok(cp)
}

/// The identity a listing of the covering auditor target gives the same
/// object, so it is not counted twice.
fn seen_identity(entry: &AnchorEntry, targets: &AuditorTargets) -> Option<String> {
    match (entry, targets.covering(entry)?) {
        (AnchorEntry::Dir(d), super::check::Covering::Dir(base)) if d.confined() => {
            Some(format!("dir:{}", base.join(&d.file).display()))
        }
        (AnchorEntry::S3(s), _) => Some(s3_identity(&s.bucket, &s.key, s.version_id.as_deref())),
        _ => None,
    }
}

/// Checks a recorded entry; with a state, an S3 object downloaded recently
/// is checked by HEAD only (falling back to a full fetch when the server
/// sends no checksum).
fn check_recorded_entry(
    entry: &AnchorEntry,
    body: &AnchorBody,
    ctx: &CheckContext<'_>,
    state: Option<&mut StateFile>,
) -> EntryOutcome {
    let note = body.note.as_bytes();
    // The record's fields agree with its note (check_recorded).
    let cp = crate::note::checkpoint::Checkpoint {
        origin: body.origin.clone(),
        size: body.size,
        root: body.root_hash().unwrap_or_default(),
        extensions: Vec::new(),
    };
    #[cfg(feature = "s3")]
    if let (AnchorEntry::S3(s), Some(online), Some(state)) = (entry, ctx.online, state) {
        if !entry.names_object_of(&cp) {
            return EntryOutcome::Rejected(AnchorError::BadRecord);
        }
        if online.targets.covering(entry).is_none() {
            return EntryOutcome::NotChecked(super::check::NotChecked::OutsideTargets);
        }
        let id = s3_identity(&s.bucket, &s.key, s.version_id.as_deref());
        if s.version_id.is_some() && state.fresh(&id) == Some(body.note.as_str()) {
            let mut found = Vec::new();
            match online
                .session()
                .and_then(|session| session.head_and_compare(s, note, &mut found))
            {
                Ok(Some(Ok(()))) => {
                    found.push(("checked", "HEAD (bytes verified by an earlier run)".into()));
                    return EntryOutcome::Verified(found);
                }
                Ok(Some(Err(e))) => {
                    state.forget(&id);
                    return EntryOutcome::Rejected(e);
                }
                Ok(None) => {}
                Err(e) => return EntryOutcome::Error(e),
            }
        }
        let outcome = super::check::check_entry(entry, note, &cp, ctx);
        match &outcome {
            EntryOutcome::Verified(_) => state.fetched(&id, note),
            _ => state.forget(&id),
        }
        return outcome;
    }
    #[cfg(not(feature = "s3"))]
    let _ = state;
    super::check::check_entry(entry, note, &cp, ctx)
}
