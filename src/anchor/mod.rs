//! Anchoring checkpoints outside the writer's reach.
//!
//! A hash chain proves records were not altered, but not that the log was
//! not cut short or rewritten by someone holding the signing key. An anchor
//! is a copy of a signed checkpoint placed where the writer cannot change
//! it afterwards: an S3 object under Object Lock (COMPLIANCE mode: nobody,
//! not even the account root, can delete or shorten it before its
//! retain-until date), or a write-once local directory. After every target
//! accepted the checkpoint, an `anchor` record (docs/FORMAT.md §9) is
//! appended to the chain; never before, so the chain never claims an
//! anchor that did not happen.
//!
//! [`verify::verify_anchors`] fetches every anchored checkpoint from its
//! target (not the copy in the log), checks the object's bytes, checksum
//! and lock against what was recorded, checks the checkpoint's signature,
//! and runs the chain verifier with the anchored checkpoints as auditor
//! checkpoints, so a log truncated, rolled back, forked or rewritten after
//! an anchor is rejected even if its signing key leaked.
//!
//! What is trusted: the verifier keys given, the target's enforcement of
//! its lock (run `vouch anchor doctor` once per bucket), and, for `dir:`,
//! that nobody with root on that machine removed the file.
//!
//! Network code lives in [`s3`] (behind the `s3` cargo feature, with its
//! own tokio runtime); nothing else in the crate is async.

pub mod check;
pub mod dir;
pub mod error;
pub mod record;
#[cfg(feature = "s3")]
pub mod s3;
pub mod state;
pub mod timestamp;
pub mod verify;

use crate::chain::record::KIND_CHECKPOINT;
use crate::chain::verify::VerifyOptions;
use crate::chain::writer;
use crate::note::{SignerKey, checkpoint::Checkpoint};
use crate::{Error, Result};
use record::{AnchorBody, AnchorEntry, KIND_ANCHOR};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Why a local target refused a write.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetProblem {
    #[error("not a directory")]
    NotADirectory,
    #[error("not a regular file")]
    NotAFile,
    #[error("an anchor with this name exists with other content; refusing to overwrite it")]
    ExistsWithOtherContent,
    #[error("is a symbolic link: an anchor is never read or written through a link")]
    Symlink,
    #[error("stays writable after chmod 0444 (this file system keeps no read-only mode)")]
    StaysWritable,
}

impl TargetProblem {
    /// Stable reason code.
    pub fn code(&self) -> &'static str {
        match self {
            TargetProblem::NotADirectory
            | TargetProblem::NotAFile
            | TargetProblem::Symlink
            | TargetProblem::StaysWritable => "bad_target",
            TargetProblem::ExistsWithOtherContent => "anchor_exists",
        }
    }
}

/// Why an anchor target, as given, is not usable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    #[error("no bucket name")]
    NoBucket,
    #[error("no directory")]
    NoDirectory,
    #[error("use tsa:http://HOST/PATH or tsa:https://HOST/PATH")]
    TsaNotHttp,
    #[error("unknown anchor target: use s3://BUCKET/PREFIX, dir:/PATH or tsa:URL")]
    UnknownScheme,
    /// `--from` lists storage; a TSA keeps nothing to list.
    #[error("--from lists storage targets (s3://, dir:); a TSA keeps nothing to list")]
    NotListable,
    /// `anchor doctor` checks S3 buckets only.
    #[error("anchor doctor checks s3://BUCKET targets")]
    NotS3,
}

/// An anchor target as given on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// `s3://BUCKET[/PREFIX]`.
    S3 { bucket: String, prefix: String },
    /// `dir:/PATH`.
    Dir { path: PathBuf },
    /// `tsa:URL`: an RFC 3161 time-stamp authority.
    Tsa { url: String },
}

impl Target {
    /// Parses `s3://BUCKET[/PREFIX]`, `dir:PATH` or `tsa:URL`.
    pub fn parse(text: &str) -> Result<Target> {
        let bad = |problem| Error::Target {
            target: text.to_owned(),
            problem,
        };
        if let Some(rest) = text.strip_prefix("s3://") {
            let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
            if bucket.is_empty() {
                return Err(bad(TargetError::NoBucket));
            }
            let mut prefix = prefix.trim_matches('/').to_owned();
            if !prefix.is_empty() {
                prefix.push('/');
            }
            return Ok(Target::S3 {
                bucket: bucket.to_owned(),
                prefix,
            });
        }
        if let Some(path) = text.strip_prefix("dir:") {
            if path.is_empty() {
                return Err(bad(TargetError::NoDirectory));
            }
            return Ok(Target::Dir {
                path: PathBuf::from(path),
            });
        }
        if let Some(url) = text.strip_prefix("tsa:") {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(bad(TargetError::TsaNotHttp));
            }
            return Ok(Target::Tsa {
                url: url.to_owned(),
            });
        }
        Err(bad(TargetError::UnknownScheme))
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::S3 { bucket, prefix } => write!(f, "s3://{bucket}/{prefix}"),
            Target::Dir { path } => write!(f, "dir:{}", path.display()),
            Target::Tsa { url } => write!(f, "tsa:{url}"),
        }
    }
}

/// Object Lock retention mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LockMode {
    /// Users with `s3:BypassGovernanceRetention` can shorten or remove it.
    Governance,
    /// Nobody can shorten or remove it before retain-until.
    Compliance,
}

impl LockMode {
    /// The S3 spelling.
    pub fn as_str(&self) -> &'static str {
        match self {
            LockMode::Governance => "GOVERNANCE",
            LockMode::Compliance => "COMPLIANCE",
        }
    }
    /// Parses the S3 spelling (case-insensitive).
    pub fn parse(text: &str) -> Option<LockMode> {
        match text.to_ascii_uppercase().as_str() {
            "GOVERNANCE" => Some(LockMode::Governance),
            "COMPLIANCE" => Some(LockMode::Compliance),
            _ => None,
        }
    }
}

pub use crate::objstore::S3Connection;

/// How to lock S3 anchors.
#[derive(Debug, Clone)]
pub struct S3LockOptions {
    pub mode: LockMode,
    /// Retain until this many seconds since the Unix epoch.
    pub retain_until_unix: i64,
    pub legal_hold: bool,
}

/// Options for [`anchor`].
#[derive(Debug, Clone)]
pub struct AnchorOptions {
    pub s3: S3Connection,
    pub lock: S3LockOptions,
    /// TSA trust anchors: a `tsa:` token is verified against them before it
    /// is recorded (required for `tsa:` targets).
    pub tsa_roots: Option<crate::tsa::TrustStore>,
}

/// One target that failed.
#[derive(Debug)]
pub struct TargetFailure {
    pub target: String,
    pub error: Error,
}

/// What [`anchor`] did.
#[derive(Debug)]
pub struct AnchorOutcome {
    pub checkpoint: Checkpoint,
    pub note: String,
    /// Seq of the checkpoint record anchored.
    pub checkpoint_seq: Option<u64>,
    /// The anchors made, in target order.
    pub anchors: Vec<AnchorEntry>,
    /// The seq of the appended `anchor` record (None when every target failed).
    pub record_seq: Option<u64>,
    /// The seq of the checkpoint record that covers the anchor record.
    pub covering_seq: Option<u64>,
    /// Targets that failed; nothing about them was recorded.
    pub failures: Vec<TargetFailure>,
}

impl AnchorOutcome {
    /// 0 when every target accepted the checkpoint, else 2 (a target that
    /// failed is an operational failure: nothing about it was recorded).
    pub fn exit_code(&self) -> u8 {
        if self.failures.is_empty() { 0 } else { 2 }
    }
}

/// The report of `vouch anchor --format json`, rendered by the binary.
#[derive(Debug, Clone, Serialize)]
pub struct AnchorOutcomeReport {
    pub origin: String,
    pub size: u64,
    /// Hex root of the anchored checkpoint.
    pub root: String,
    pub checkpoint_seq: Option<u64>,
    pub anchor_record_seq: Option<u64>,
    /// The checkpoint record appended after the anchor record, covering it.
    pub covering_checkpoint_seq: Option<u64>,
    pub anchors: Vec<AnchorEntry>,
    pub failures: Vec<TargetFailureReport>,
    pub exit_code: u8,
}

/// One target that failed, in an [`AnchorOutcomeReport`].
#[derive(Debug, Clone, Serialize)]
pub struct TargetFailureReport {
    pub target: String,
    pub code: &'static str,
    pub message: String,
}

impl From<&AnchorOutcome> for AnchorOutcomeReport {
    fn from(o: &AnchorOutcome) -> Self {
        AnchorOutcomeReport {
            origin: o.checkpoint.origin.clone(),
            size: o.checkpoint.size,
            root: crate::hex::encode(&o.checkpoint.root),
            checkpoint_seq: o.checkpoint_seq,
            anchor_record_seq: o.record_seq,
            covering_checkpoint_seq: o.covering_seq,
            anchors: o.anchors.clone(),
            failures: o
                .failures
                .iter()
                .map(|f| TargetFailureReport {
                    target: f.target.clone(),
                    code: f.error.code(),
                    message: f.error.to_string(),
                })
                .collect(),
            exit_code: o.exit_code(),
        }
    }
}

/// One preflight check of `vouch anchor doctor`.
#[derive(Debug, Clone, Serialize)]
pub struct DoctorCheck {
    #[serde(rename = "check")]
    pub name: &'static str,
    pub ok: bool,
    pub detail: String,
}

/// The report of `vouch anchor doctor`: every check and the verdict.
#[derive(Debug, Clone, Serialize)]
pub struct DoctorReport {
    pub bucket: String,
    pub checks: Vec<DoctorCheck>,
    /// True when every check passed.
    pub suitable: bool,
    /// 0 suitable, 1 not suitable.
    pub exit_code: u8,
}

impl DoctorReport {
    /// The report on `bucket` from its checks.
    pub fn new(bucket: &str, checks: Vec<DoctorCheck>) -> Self {
        let suitable = checks.iter().all(|c| c.ok);
        DoctorReport {
            bucket: bucket.to_owned(),
            checks,
            suitable,
            exit_code: if suitable { 0 } else { 1 },
        }
    }
}

/// Anchors the log's latest checkpoint (signing a new one when records
/// follow the last checkpoint) to every target, then appends one `anchor`
/// record listing the targets that accepted it. Targets that failed are
/// returned in [`AnchorOutcome::failures`] and are not recorded; when all
/// failed, nothing is appended.
pub fn anchor(
    path: &Path,
    key: &SignerKey,
    targets: &[Target],
    opts: &AnchorOptions,
) -> Result<AnchorOutcome> {
    if targets.is_empty() {
        return Err(Error::MissingOption {
            option: "--to TARGET",
            needed_for: "anchoring",
        });
    }
    if opts.tsa_roots.is_none() && targets.iter().any(|t| matches!(t, Target::Tsa { .. })) {
        return Err(needs_tsa_roots());
    }
    #[cfg(not(feature = "s3"))]
    if targets.iter().any(|t| matches!(t, Target::S3 { .. })) {
        return Err(s3_disabled());
    }
    let (note, checkpoint_seq) = latest_checkpoint(path, key)?;
    let own = crate::chain::TrustedKeys::new([key.verifier()])?;
    let checkpoint = crate::chain::trust::open_standalone(note.as_bytes(), Some(key.name()), &own)
        .map_err(|e| Error::Chain(e.at(checkpoint_seq.unwrap_or(0))))?
        .checkpoint()
        .clone();
    let mut anchors = Vec::new();
    let mut failures = Vec::new();
    for target in targets {
        match put(target, &checkpoint, &note, opts) {
            Ok(entry) => anchors.push(entry),
            Err(error) => failures.push(TargetFailure {
                target: target.to_string(),
                error,
            }),
        }
    }
    let mut covering_seq = None;
    let record_seq = if anchors.is_empty() {
        None
    } else {
        let body = AnchorBody::new(&note, &checkpoint, anchors.clone());
        let value = serde_json::to_value(&body).map_err(|source| Error::Serialize {
            what: "the anchor record",
            source,
        })?;
        // The anchor record is covered by a new checkpoint at once, so a
        // receipt can prove it is part of the log (docs/FORMAT.md §9).
        let covered = writer::append_covered(path, key, &[(KIND_ANCHOR, &value)])?;
        covering_seq = covered.checkpoint.record_seq;
        Some(covered.appended[0].seq)
    };
    Ok(AnchorOutcome {
        checkpoint,
        note,
        checkpoint_seq,
        anchors,
        record_seq,
        covering_seq,
        failures,
    })
}

fn put(
    target: &Target,
    checkpoint: &Checkpoint,
    note: &str,
    opts: &AnchorOptions,
) -> Result<AnchorEntry> {
    match target {
        Target::Dir { path } => Ok(AnchorEntry::Dir(dir::put(path, checkpoint, note)?)),
        Target::Tsa { url } => {
            let Some(roots) = &opts.tsa_roots else {
                return Err(needs_tsa_roots());
            };
            Ok(AnchorEntry::Tsa(timestamp::put(url, note, roots)?))
        }
        #[cfg(feature = "s3")]
        Target::S3 { bucket, prefix } => Ok(AnchorEntry::S3(s3::put(
            &opts.s3, bucket, prefix, checkpoint, note, &opts.lock,
        )?)),
        #[cfg(not(feature = "s3"))]
        Target::S3 { .. } => {
            let _ = opts;
            Err(s3_disabled())
        }
    }
}

fn needs_tsa_roots() -> Error {
    Error::MissingOption {
        option: "--tsa-ca ROOTS",
        needed_for: "a tsa: target (its token is verified before it is recorded)",
    }
}

/// The error for an S3 target or anchor in a build without the `s3` feature.
#[cfg(not(feature = "s3"))]
pub(crate) fn s3_disabled() -> Error {
    Error::FeatureDisabled {
        feature: "s3",
        needed_for: "s3:// targets and anchors",
    }
}

/// The note of the log's last record when it is a checkpoint, else a new
/// checkpoint record signed now. The log is read through the validated
/// reader and refused unless it verifies.
fn latest_checkpoint(path: &Path, key: &SignerKey) -> Result<(String, Option<u64>)> {
    if std::fs::metadata(path).is_ok() {
        let mut last: Option<(u64, Option<String>)> = None;
        let report = crate::chain::read::read_log(path, &VerifyOptions::default(), &mut |r| {
            let note = (r.kind == KIND_CHECKPOINT.as_bytes())
                .then(|| {
                    serde_json::from_slice::<serde_json::Value>(r.body)
                        .ok()
                        .and_then(|v| v.get("note")?.as_str().map(str::to_owned))
                })
                .flatten();
            last = Some((r.seq, note));
        })?;
        crate::chain::read::refuse_unverified(path, &report)?;
        if report.torn_tail.is_none()
            && let Some((seq, Some(note))) = last
        {
            return Ok((note, Some(seq)));
        }
    }
    let signed = writer::checkpoint(path, key, true)?;
    Ok((signed.note, signed.record_seq))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse() {
        assert_eq!(
            Target::parse("s3://b/p/q/").unwrap(),
            Target::S3 {
                bucket: "b".into(),
                prefix: "p/q/".into()
            }
        );
        assert_eq!(
            Target::parse("s3://b").unwrap(),
            Target::S3 {
                bucket: "b".into(),
                prefix: String::new()
            }
        );
        assert_eq!(
            Target::parse("dir:/x/y").unwrap(),
            Target::Dir {
                path: "/x/y".into()
            }
        );
        assert!(Target::parse("s3://").is_err());
        assert!(Target::parse("ftp://x").is_err());
        assert!(Target::parse("dir:").is_err());
        assert_eq!(
            Target::parse("tsa:http://127.0.0.1:1/tsr").unwrap(),
            Target::Tsa {
                url: "http://127.0.0.1:1/tsr".into()
            }
        );
        assert!(Target::parse("tsa:ftp://x").is_err());
    }

    #[test]
    fn a_bad_target_is_an_operational_error_with_its_own_code() {
        for (text, problem) in [
            ("s3://", TargetError::NoBucket),
            ("dir:", TargetError::NoDirectory),
            ("tsa:ftp://x", TargetError::TsaNotHttp),
            ("ftp://x", TargetError::UnknownScheme),
        ] {
            let err = Target::parse(text).unwrap_err();
            assert!(
                matches!(&err, Error::Target { target, problem: p } if target == text && *p == problem),
                "{text}: {err:?}"
            );
            assert_eq!(err.code(), "invalid_target");
            assert!(!err.is_rejection());
        }
    }

    #[test]
    fn lock_modes_order_by_strength() {
        assert!(LockMode::Compliance > LockMode::Governance);
        assert_eq!(LockMode::parse("compliance"), Some(LockMode::Compliance));
        assert_eq!(LockMode::parse("x"), None);
    }
}
