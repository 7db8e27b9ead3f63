//! `vouch anchor verify`: check every anchor of a log against its target,
//! and the log against every anchored checkpoint.

use super::record::{AnchorBody, AnchorEntry, DirAnchor, scan_log, sha256_hex};
use super::{S3Connection, Target, TargetError, dir};
use crate::chain::error::ChainError;
use crate::chain::verify::{AuditorCheckpoint, LogReport, LogStatus, VerifyOptions, verify_files};
use crate::merkle::Hash;
use crate::{Error, Result};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

pub use super::error::AnchorError;

/// Where a checked anchor came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckSource {
    /// An `anchor` record at this seq.
    Record { seq: u64 },
    /// Found by listing a target (`--from`, or a location named in a record).
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
#[derive(Debug)]
pub enum CheckOutcome {
    Verified,
    Rejected(AnchorError),
    /// The target could not be asked (network, permissions): no verdict.
    Error(Error),
}

impl CheckOutcome {
    /// `verified`, `rejected` or `error`.
    pub fn status(&self) -> &'static str {
        match self {
            CheckOutcome::Verified => "verified",
            CheckOutcome::Rejected(_) => "rejected",
            CheckOutcome::Error(_) => "error",
        }
    }

    /// The reason code of a rejection or error.
    pub fn reason(&self) -> Option<&'static str> {
        match self {
            CheckOutcome::Verified => None,
            CheckOutcome::Rejected(e) => Some(e.code()),
            CheckOutcome::Error(e) => Some(e.code()),
        }
    }

    /// The message of a rejection or error; empty when verified.
    pub fn message(&self) -> String {
        match self {
            CheckOutcome::Verified => String::new(),
            CheckOutcome::Rejected(e) => e.to_string(),
            CheckOutcome::Error(e) => e.to_string(),
        }
    }
}

/// One anchored checkpoint at one location.
#[derive(Debug)]
pub struct AnchorCheck {
    pub source: CheckSource,
    /// `dir`, `s3`.
    pub kind: &'static str,
    pub location: String,
    pub size: Option<u64>,
    pub root: Option<Hash>,
    /// What was found at the target (lock mode, retain-until, ...).
    pub found: Vec<(&'static str, String)>,
    pub outcome: CheckOutcome,
}

/// The report of [`verify_anchors`].
#[derive(Debug)]
pub struct AnchorReport {
    /// The chain verifier's report on the log, run with every anchored
    /// checkpoint fetched from a target as an auditor checkpoint.
    pub log: LogReport,
    pub checks: Vec<AnchorCheck>,
    /// True when no anchor was found at all.
    pub no_anchors: bool,
}

impl AnchorReport {
    /// 1 when anything was rejected (an anchor, the log, or no anchor at
    /// all), else 2 when a target could not be checked, else 0.
    pub fn exit_code(&self) -> u8 {
        let rejected = self.no_anchors
            || !matches!(self.log.status, LogStatus::Valid | LogStatus::Partial)
                && self.log.status != LogStatus::Error
            || self
                .checks
                .iter()
                .any(|c| matches!(c.outcome, CheckOutcome::Rejected(_)));
        if rejected {
            return 1;
        }
        let errored = self.log.status == LogStatus::Error
            || self
                .checks
                .iter()
                .any(|c| matches!(c.outcome, CheckOutcome::Error(_)));
        if errored { 2 } else { 0 }
    }
}

/// Format tag of `vouch anchor verify --format json`.
pub const ANCHOR_VERIFY_FORMAT: &str = "vouch-anchor-verify/1";

/// The `vouch anchor verify --format json` document, rendered by the binary.
#[derive(Debug, Clone, Serialize)]
pub struct AnchorVerifyReport {
    pub format: &'static str,
    pub log: AnchoredLogReport,
    pub no_anchors: bool,
    pub anchors: Vec<AnchorCheckReport>,
    pub exit_code: u8,
}

/// The log part of an [`AnchorVerifyReport`].
#[derive(Debug, Clone, Serialize)]
pub struct AnchoredLogReport {
    pub path: String,
    pub origin: Option<String>,
    pub status: LogStatus,
    pub records: u64,
    pub reason: Option<&'static str>,
    pub failure: Option<LogFailureReport>,
    pub error: Option<String>,
}

/// Where the log first failed, in an [`AnchoredLogReport`].
#[derive(Debug, Clone, Serialize)]
pub struct LogFailureReport {
    pub reason: &'static str,
    pub seq: Option<u64>,
    pub message: String,
}

/// One checked anchor, in an [`AnchorVerifyReport`].
#[derive(Debug, Clone, Serialize)]
pub struct AnchorCheckReport {
    /// `record` or `listing`.
    pub source: &'static str,
    pub record_seq: Option<u64>,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub location: String,
    pub size: Option<u64>,
    /// Hex root.
    pub root: Option<String>,
    pub found: BTreeMap<&'static str, String>,
    /// `verified`, `rejected` or `error`.
    pub status: &'static str,
    pub reason: Option<&'static str>,
    pub message: String,
}

impl From<&AnchorCheck> for AnchorCheckReport {
    fn from(c: &AnchorCheck) -> Self {
        AnchorCheckReport {
            source: c.source.as_str(),
            record_seq: c.source.record_seq(),
            kind: c.kind,
            location: c.location.clone(),
            size: c.size,
            root: c.root.map(|r| crate::hex::encode(&r)),
            found: c.found.iter().cloned().collect(),
            status: c.outcome.status(),
            reason: c.outcome.reason(),
            message: c.outcome.message(),
        }
    }
}

impl From<&AnchorReport> for AnchorVerifyReport {
    fn from(r: &AnchorReport) -> Self {
        AnchorVerifyReport {
            format: ANCHOR_VERIFY_FORMAT,
            log: AnchoredLogReport {
                path: r.log.path.display().to_string(),
                origin: r.log.origin.clone(),
                status: r.log.status,
                records: r.log.records,
                reason: r.log.reason(),
                failure: r.log.failure.as_ref().map(|f| LogFailureReport {
                    reason: f.error.code(),
                    seq: f.seq,
                    message: f.error.to_string(),
                }),
                error: r.log.error.clone(),
            },
            no_anchors: r.no_anchors,
            anchors: r.checks.iter().map(AnchorCheckReport::from).collect(),
            exit_code: r.exit_code(),
        }
    }
}

/// Options for [`verify_anchors`].
#[derive(Debug, Clone, Default)]
pub struct VerifyAnchorsOptions {
    pub trusted: crate::chain::TrustedKeys,
    /// Targets to list for further anchored checkpoints of this log.
    pub from: Vec<Target>,
    /// Overrides the recorded S3 endpoint/region when set.
    pub s3: S3Connection,
    /// TSA trust anchors for `tsa:` anchors (without them, those anchors
    /// are reported as not checked, exit 2).
    pub tsa_roots: Option<crate::tsa::TrustStore>,
}

/// A location to list: a `dir:` target or an S3 bucket+prefix.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Location {
    Dir(PathBuf),
    S3 {
        endpoint: Option<String>,
        region: Option<String>,
        bucket: String,
        /// The prefix the origin folder sits under.
        prefix: String,
    },
}

/// Checks every anchor of the log at `path`; see the module docs.
pub fn verify_anchors(path: &Path, opts: &VerifyAnchorsOptions) -> Result<AnchorReport> {
    if opts.trusted.is_empty() {
        return Err(Error::MissingOption {
            option: "--pub KEY",
            needed_for: "anchor verify (anchors are checked against trusted keys)",
        });
    }
    let scan = scan_log(path)?;
    let mut checks = Vec::new();
    let mut anchored: Vec<AuditorCheckpoint> = Vec::new();
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut locations: BTreeSet<Location> = BTreeSet::new();
    let origin = scan.origin.clone();

    for found in &scan.anchors {
        let source = CheckSource::Record { seq: found.seq };
        let body = match &found.body {
            Ok(b) => b,
            Err(_) => {
                checks.push(AnchorCheck {
                    source,
                    kind: "record",
                    location: format!("record {}", found.seq),
                    size: None,
                    root: None,
                    found: Vec::new(),
                    outcome: CheckOutcome::Rejected(AnchorError::BadRecord),
                });
                continue;
            }
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
        for entry in &body.anchors {
            let location = entry.location();
            seen.insert(identity(entry));
            if let Some(l) = location_of(entry, opts) {
                locations.insert(l);
            }
            let mut check = AnchorCheck {
                source,
                kind: entry.kind(),
                location,
                size: Some(body.size),
                root: body.root_hash(),
                found: Vec::new(),
                outcome: CheckOutcome::Verified,
            };
            if let Err(e) = &recorded {
                check.outcome = CheckOutcome::Rejected(e.clone());
                checks.push(check);
                continue;
            }
            match fetch_and_compare(entry, body, opts, &mut check.found) {
                Ok(Ok(bytes)) => {
                    match AuditorCheckpoint::from_note(&check.location, &bytes, &opts.trusted) {
                        Ok(cp) => anchored.push(cp),
                        Err(_) => check.outcome = CheckOutcome::Rejected(AnchorError::BadNote),
                    }
                }
                Ok(Err(rejected)) => check.outcome = CheckOutcome::Rejected(rejected),
                Err(error) => check.outcome = CheckOutcome::Error(error),
            }
            checks.push(check);
        }
    }

    if let Some(origin) = &origin {
        for target in &opts.from {
            if let Target::Tsa { .. } = target {
                return Err(Error::Target {
                    target: target.to_string(),
                    problem: TargetError::NotListable,
                });
            }
            locations.insert(match target {
                Target::Dir { path } => Location::Dir(path.clone()),
                Target::S3 { bucket, prefix } => Location::S3 {
                    endpoint: opts.s3.endpoint.clone(),
                    region: opts.s3.region.clone(),
                    bucket: bucket.clone(),
                    prefix: prefix.clone(),
                },
                Target::Tsa { .. } => continue,
            });
        }
        for location in &locations {
            list_location(
                location,
                origin,
                opts,
                &mut seen,
                &mut checks,
                &mut anchored,
            );
        }
    } else if !opts.from.is_empty() {
        return Err(Error::LogState {
            path: path.to_path_buf(),
            problem: crate::chain::LogStateProblem::NoOrigin,
        });
    }

    let vopts = VerifyOptions {
        trusted: opts.trusted.clone(),
        checkpoints: anchored,
        ..Default::default()
    };
    let report = verify_files(&[path.to_path_buf()], &vopts);
    let Some(log) = report.logs.into_iter().next() else {
        return Err(crate::chain::read::changed(path));
    };
    // Attribute a truncation or fork to the anchors of that checkpoint size.
    if let Some(failure) = &log.failure {
        let size = match &failure.error {
            ChainError::Truncated {
                checkpoint_size, ..
            } => Some(*checkpoint_size),
            ChainError::Fork { size, .. } => Some(*size),
            _ => None,
        };
        // A checkpoint of that size that does not count under the trust
        // rule (the anchored note, or the log's own copy of it) makes the
        // anchored note itself unusable.
        let untrusted = matches!(
            failure.error,
            ChainError::UnknownKey { .. }
                | ChainError::BadSignature { .. }
                | ChainError::BadCheckpoint { .. }
        );
        for check in &mut checks {
            if !matches!(check.outcome, CheckOutcome::Verified) {
                continue;
            }
            if untrusted && failure.seq.is_some() && check.size == failure.seq {
                check.outcome = CheckOutcome::Rejected(AnchorError::BadNote);
                continue;
            }
            let hit = size.is_some() && check.size == size;
            if hit || size.is_none() {
                check.outcome = CheckOutcome::Rejected(AnchorError::Log(failure.error.clone()));
            }
        }
    }
    let no_anchors = checks.is_empty();
    Ok(AnchorReport {
        log,
        checks,
        no_anchors,
    })
}

/// The recorded note agrees with the record's other fields and could count
/// for this log ([`AuditorCheckpoint::from_note`]); whether it does, at its
/// size under the log's rotations, is judged by the chain verifier, to
/// which it is handed as an auditor checkpoint.
fn check_recorded(
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

fn identity(entry: &AnchorEntry) -> String {
    match entry {
        AnchorEntry::Dir(d) => format!("dir:{}", Path::new(&d.dir).join(&d.file).display()),
        AnchorEntry::S3(s) => format!(
            "s3:{}/{}@{}",
            s.bucket,
            s.key,
            s.version_id.as_deref().unwrap_or("")
        ),
        AnchorEntry::Tsa(t) => format!("tsa:{}", t.token),
    }
}

fn location_of(entry: &AnchorEntry, opts: &VerifyAnchorsOptions) -> Option<Location> {
    Some(match entry {
        AnchorEntry::Tsa(_) => return None,
        AnchorEntry::Dir(d) => Location::Dir(PathBuf::from(&d.dir)),
        AnchorEntry::S3(s) => {
            // The key is PREFIX + <origin folder>/<name>: list PREFIX.
            let mut parts: Vec<&str> = s.key.rsplitn(3, '/').collect();
            parts.reverse();
            let prefix = if parts.len() == 3 {
                format!("{}/", parts[0])
            } else {
                String::new()
            };
            Location::S3 {
                endpoint: opts.s3.endpoint.clone().or_else(|| s.endpoint.clone()),
                region: opts.s3.region.clone().or_else(|| Some(s.region.clone())),
                bucket: s.bucket.clone(),
                prefix,
            }
        }
    })
}

/// Fetches the anchored object and compares it with the record. Outer
/// error: could not look; inner error: rejected.
fn fetch_and_compare(
    entry: &AnchorEntry,
    body: &AnchorBody,
    opts: &VerifyAnchorsOptions,
    found: &mut Vec<(&'static str, String)>,
) -> Result<Result<Vec<u8>, AnchorError>> {
    match entry {
        AnchorEntry::Dir(d) => Ok(compare_dir(d, body, found)?),
        AnchorEntry::Tsa(t) => {
            let Some(roots) = &opts.tsa_roots else {
                return Err(Error::MissingOption {
                    option: "--tsa-ca ROOTS",
                    needed_for: "checking a time-stamp anchor",
                });
            };
            Ok(
                match super::timestamp::verify(t, body.note.as_bytes(), roots) {
                    Ok(v) => {
                        found.push(("gen_time", v.gen_time));
                        Ok(body.note.as_bytes().to_vec())
                    }
                    Err(p) => Err(AnchorError::Timestamp(p)),
                },
            )
        }
        #[cfg(feature = "s3")]
        AnchorEntry::S3(s) => super::s3::fetch_and_compare(s, body, &opts.s3, found),
        #[cfg(not(feature = "s3"))]
        AnchorEntry::S3(_) => {
            let _ = (opts, found);
            Err(super::s3_disabled())
        }
    }
}

fn compare_dir(
    d: &DirAnchor,
    body: &AnchorBody,
    found: &mut Vec<(&'static str, String)>,
) -> Result<Result<Vec<u8>, AnchorError>> {
    if !d.confined() {
        return Ok(Err(AnchorError::BadRecord));
    }
    let Some(obj) = dir::fetch(d)? else {
        return Ok(Err(AnchorError::Missing));
    };
    found.push(("mode", format!("{:o}", obj.mode)));
    found.push(("immutable", obj.immutable.to_string()));
    if obj.bytes != body.note.as_bytes() {
        return Ok(Err(AnchorError::Replaced {
            expected: body.note_sha256.clone(),
            found: sha256_hex(&obj.bytes),
        }));
    }
    if d.mode & 0o222 == 0 && obj.mode & 0o222 != 0 {
        return Ok(Err(AnchorError::NowWritable { mode: obj.mode }));
    }
    if d.immutable && !obj.immutable {
        return Ok(Err(AnchorError::ImmutableRemoved));
    }
    Ok(Ok(obj.bytes))
}

/// An object found by listing: (identity, type, location shown, bytes).
type Listed = (String, &'static str, String, Vec<u8>);

fn list_location(
    location: &Location,
    origin: &str,
    opts: &VerifyAnchorsOptions,
    seen: &mut BTreeSet<String>,
    checks: &mut Vec<AnchorCheck>,
    anchored: &mut Vec<AuditorCheckpoint>,
) {
    let listed: Result<Vec<Listed>> = match location {
        Location::Dir(path) => dir::list(path, origin).map(|objs| {
            objs.into_iter()
                .map(|o| {
                    (
                        format!("dir:{}", o.path.display()),
                        "dir",
                        format!("dir:{}", o.path.display()),
                        o.bytes,
                    )
                })
                .collect()
        }),
        #[cfg(feature = "s3")]
        Location::S3 {
            endpoint,
            region,
            bucket,
            prefix,
        } => super::s3::list(
            &S3Connection {
                endpoint: endpoint.clone(),
                region: region.clone(),
            },
            bucket,
            prefix,
            origin,
        )
        .map(|objs| {
            objs.into_iter()
                .map(|o| {
                    (
                        format!("s3:{}/{}@{}", bucket, o.key, o.version_id),
                        "s3",
                        format!("s3://{}/{}?versionId={}", bucket, o.key, o.version_id),
                        o.bytes,
                    )
                })
                .collect()
        }),
        #[cfg(not(feature = "s3"))]
        Location::S3 { .. } => {
            let _ = opts;
            Err(super::s3_disabled())
        }
    };
    let listed = match listed {
        Ok(l) => l,
        Err(error) => {
            checks.push(AnchorCheck {
                source: CheckSource::Listing,
                kind: match location {
                    Location::Dir(_) => "dir",
                    Location::S3 { .. } => "s3",
                },
                location: match location {
                    Location::Dir(p) => format!("dir:{}", p.display()),
                    Location::S3 { bucket, prefix, .. } => format!("s3://{bucket}/{prefix}"),
                },
                size: None,
                root: None,
                found: Vec::new(),
                outcome: CheckOutcome::Error(error),
            });
            return;
        }
    };
    let _ = opts;
    for (id, kind, shown, bytes) in listed {
        if !seen.insert(id) {
            continue;
        }
        let mut check = AnchorCheck {
            source: CheckSource::Listing,
            kind,
            location: shown,
            size: None,
            root: None,
            found: Vec::new(),
            outcome: CheckOutcome::Verified,
        };
        match AuditorCheckpoint::from_note(&check.location, &bytes, &opts.trusted) {
            Ok(cp) if cp.checkpoint().origin == origin => {
                check.size = Some(cp.checkpoint().size);
                check.root = Some(cp.checkpoint().root);
                anchored.push(cp);
            }
            _ => check.outcome = CheckOutcome::Rejected(AnchorError::BadNote),
        }
        checks.push(check);
    }
}
