//! Checking one anchor entry, for `vouch anchor verify` and
//! `vouch receipt verify` alike (docs/FORMAT.md §9.3, §10).
//!
//! Where to look is the auditor's decision, never the log's or the
//! receipt's: a recorded `s3` or `dir` anchor is a locator, and it is
//! fetched only when it lies inside one of the [`AuditorTargets`] (a
//! bucket and key prefix, or a directory), through the auditor's endpoint.
//! A locator outside them is reported as not checked. The endpoint
//! recorded in an S3 anchor is never used.
//!
//! A `tsa` anchor is checked offline: its token must verify against the
//! auditor's TSA roots over the exact note.

use super::error::AnchorError;
use super::record::{AnchorEntry, DirAnchor};
use super::{S3Connection, Target, TargetError, dir};
use crate::{Error, Result};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// The storage locations the auditor allows vouch to read (`--from`,
/// `--targets FILE`) and the S3 endpoint to reach them through.
#[derive(Debug, Clone, Default)]
pub struct AuditorTargets {
    targets: Vec<Target>,
    /// The auditor's S3 endpoint and region (arguments or environment).
    pub s3: S3Connection,
}

impl AuditorTargets {
    /// Storage targets only: a TSA keeps nothing to list or fetch.
    pub fn new(targets: Vec<Target>, s3: S3Connection) -> Result<Self> {
        if let Some(t) = targets.iter().find(|t| matches!(t, Target::Tsa { .. })) {
            return Err(Error::Target {
                target: t.to_string(),
                problem: TargetError::NotListable,
            });
        }
        let mut targets = targets;
        targets.sort_by_key(|t| t.to_string());
        targets.dedup();
        Ok(AuditorTargets { targets, s3 })
    }

    /// Targets from a file: one per line; blank lines and lines starting
    /// with `#` are skipped.
    pub fn parse_file(path: &Path) -> Result<Vec<Target>> {
        let bytes = crate::fs::read_bounded(path, 1 << 20)?;
        let text = String::from_utf8_lossy(&bytes);
        text.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(Target::parse)
            .collect()
    }

    pub fn targets(&self) -> &[Target] {
        &self.targets
    }

    pub fn is_empty(&self) -> bool {
        self.targets.is_empty()
    }

    /// Where to read a recorded locator, when one of the auditor's targets
    /// holds it: for `dir`, the auditor's directory (the file is then read
    /// below it, never below the recorded path); for `s3`, the target.
    pub fn covering(&self, entry: &AnchorEntry) -> Option<Covering> {
        match entry {
            AnchorEntry::Tsa(_) => None,
            AnchorEntry::Dir(d) => self.targets.iter().find_map(|t| match t {
                Target::Dir { path } if same_dir(path, Path::new(&d.dir)) => {
                    Some(Covering::Dir(path.clone()))
                }
                _ => None,
            }),
            AnchorEntry::S3(s) => self
                .targets
                .iter()
                .any(|t| {
                    matches!(t, Target::S3 { bucket, prefix }
                        if *bucket == s.bucket && s.key.starts_with(prefix.as_str()))
                })
                .then_some(Covering::S3),
        }
    }
}

/// Where a covered locator is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Covering {
    Dir(PathBuf),
    S3,
}

fn same_dir(auditor: &Path, recorded: &Path) -> bool {
    if !recorded.is_absolute() {
        return false;
    }
    let absolute = std::path::absolute(auditor).ok();
    if absolute.as_deref() == Some(recorded) {
        return true;
    }
    match (
        std::fs::canonicalize(auditor),
        std::fs::canonicalize(recorded),
    ) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// Why an anchor was not checked: nothing about it is claimed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NotChecked {
    /// A `tsa` anchor without TSA roots to verify it against.
    NoTsaRoots,
    /// A storage locator, checked only online (`receipt verify --online`).
    Offline,
    /// A storage locator outside every target the auditor allows.
    OutsideTargets,
    /// An anchor record that no signed checkpoint covers yet.
    Uncovered,
}

impl NotChecked {
    pub fn code(&self) -> &'static str {
        match self {
            NotChecked::NoTsaRoots => "no_tsa_roots",
            NotChecked::Offline => "offline",
            NotChecked::OutsideTargets => "outside_targets",
            NotChecked::Uncovered => "uncovered_record",
        }
    }
    pub fn message(&self) -> &'static str {
        match self {
            NotChecked::NoTsaRoots => {
                "not checked (give --tsa-ca): a time-stamp token is present, nothing about it is verified"
            }
            NotChecked::Offline => {
                "anchor claimed, not checked: a storage locator proves nothing offline (check it with --online)"
            }
            NotChecked::OutsideTargets => {
                "anchor claimed, not checked: the location is outside every target you allow (--from)"
            }
            NotChecked::Uncovered => {
                "anchor claimed, not checked: no signed checkpoint covers this anchor record (anyone who can write the log could have appended it); sign one with `vouch checkpoint`"
            }
        }
    }
}

/// The result of checking one anchor entry.
#[derive(Debug)]
pub enum EntryOutcome {
    /// Verified; what was found (lock, mode, genTime...), from the target
    /// or the verified token.
    Verified(Vec<(&'static str, String)>),
    NotChecked(NotChecked),
    Rejected(AnchorError),
    /// The target could not be asked: no verdict on this anchor.
    Error(Error),
}

/// What a check may use.
pub struct CheckContext<'a> {
    pub tsa_roots: Option<&'a crate::tsa::TrustStore>,
    /// Storage locators are fetched only with targets (online).
    pub online: Option<&'a Online>,
}

/// The auditor's targets with an open S3 session (made on first use).
pub struct Online {
    pub targets: AuditorTargets,
    #[cfg(feature = "s3")]
    session: std::cell::OnceCell<super::s3::Session>,
}

impl Online {
    pub fn new(targets: AuditorTargets) -> Self {
        Online {
            targets,
            #[cfg(feature = "s3")]
            session: std::cell::OnceCell::new(),
        }
    }

    #[cfg(feature = "s3")]
    pub(crate) fn session(&self) -> Result<&super::s3::Session> {
        if let Some(s) = self.session.get() {
            return Ok(s);
        }
        let s = super::s3::Session::new(&self.targets.s3)?;
        Ok(self.session.get_or_init(|| s))
    }
}

/// Checks one anchor entry of `note` (the exact anchored bytes, already
/// known to be the note the entry's record names).
pub fn check_entry(
    entry: &AnchorEntry,
    note: &[u8],
    cp: &crate::note::checkpoint::Checkpoint,
    ctx: &CheckContext<'_>,
) -> EntryOutcome {
    if let AnchorEntry::Tsa(t) = entry {
        let Some(roots) = ctx.tsa_roots else {
            return EntryOutcome::NotChecked(NotChecked::NoTsaRoots);
        };
        return match super::timestamp::verify(t, note, roots) {
            Ok(v) => EntryOutcome::Verified(vec![
                ("gen_time", v.gen_time),
                ("signer", v.signer),
                ("serial", v.serial),
                ("policy", v.policy),
                ("imprint_alg", v.imprint_alg.to_owned()),
            ]),
            Err(p) => EntryOutcome::Rejected(AnchorError::Timestamp(p)),
        };
    }
    // A storage entry names its object as §9.2 does (content-addressed,
    // in the origin's folder, where a listing finds it); a `dir` record
    // naming a file outside its directory, or any other name, is malformed
    // wherever it would be read.
    if !entry.names_object_of(cp) {
        return EntryOutcome::Rejected(AnchorError::BadRecord);
    }
    let Some(online) = ctx.online else {
        return EntryOutcome::NotChecked(NotChecked::Offline);
    };
    let Some(covering) = online.targets.covering(entry) else {
        return EntryOutcome::NotChecked(NotChecked::OutsideTargets);
    };
    let mut found = Vec::new();
    let result = match (entry, covering) {
        (AnchorEntry::Dir(d), Covering::Dir(base)) => compare_dir(d, &base, note, &mut found),
        #[cfg(feature = "s3")]
        (AnchorEntry::S3(s), Covering::S3) => online
            .session()
            .and_then(|session| session.fetch_and_compare(s, note, &mut found))
            .map(|r| r.map(|_| ())),
        #[cfg(not(feature = "s3"))]
        (AnchorEntry::S3(_), Covering::S3) => Err(super::s3_disabled()),
        _ => Ok(Err(AnchorError::BadRecord)),
    };
    match result {
        Ok(Ok(())) => EntryOutcome::Verified(found),
        Ok(Err(e)) => EntryOutcome::Rejected(e),
        Err(e) => EntryOutcome::Error(e),
    }
}

/// Reads a `dir` anchor below the auditor's directory and compares it.
pub(crate) fn compare_dir(
    d: &DirAnchor,
    base: &Path,
    note: &[u8],
    found: &mut Vec<(&'static str, String)>,
) -> Result<Result<(), AnchorError>> {
    if !d.confined() {
        return Ok(Err(AnchorError::BadRecord));
    }
    let obj = match dir::fetch_at(base, &d.file) {
        Ok(Some(obj)) => obj,
        Ok(None) => return Ok(Err(AnchorError::Missing)),
        // The auditor's directory itself not being one is operational; an
        // entry below it that is no regular file, or a link, is tampering.
        Err(
            e @ (Error::AnchorTarget { .. }
            | Error::TooLarge { .. }
            | Error::NotARegularFile { .. }),
        ) if !matches!(&e, Error::AnchorTarget { path, .. } if path == base) => {
            return Ok(Err(AnchorError::Replaced {
                expected: super::record::sha256_hex(note),
                found: format!("(not a regular file of at most 1 MiB below your directory: {e})"),
            }));
        }
        Err(e) => return Err(e),
    };
    found.push(("path", obj.path.display().to_string()));
    found.push(("mode", format!("{:o}", obj.mode)));
    found.push(("immutable", obj.immutable.to_string()));
    if obj.bytes != note {
        return Ok(Err(AnchorError::Replaced {
            expected: super::record::sha256_hex(note),
            found: super::record::sha256_hex(&obj.bytes),
        }));
    }
    // A writable file is no lock, whatever the record says it was.
    if obj.mode & 0o222 != 0 {
        return Ok(Err(AnchorError::NowWritable { mode: obj.mode }));
    }
    if d.immutable && !obj.immutable {
        return Ok(Err(AnchorError::ImmutableRemoved));
    }
    Ok(Ok(()))
}
