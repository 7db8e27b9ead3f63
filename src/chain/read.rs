//! The one validated, streaming reader of a log's records.
//!
//! [`read_log`] reads a log (all of its segments, in chain order) once,
//! sequentially, through the verifier's own scanner and stitching pass:
//! the same limits, checks and reason codes as `vouch verify`, in bounded
//! memory (one read block and one line at a time). Every record that
//! passes the scanner is handed to a visitor as it goes by; the returned
//! report says whether the log as a whole verified, so a caller acts on
//! what it collected only when the report lets it (a record after the
//! first failure is never visited, but a checkpoint is visited before its
//! root is compared, so always check the report).
//!
//! Everything that reads records (proofs, receipts, anchors, and the
//! capabilities built on the chain) uses this reader instead of a private
//! line loop.

use super::options::VerifyOptions;
use super::plan;
use super::report::{LogReport, LogStatus};
use super::scan::{self, ChunkScan, ScanContext};
use super::trust::KeyState;
use super::verify::auditor_pins;
use crate::merkle::{Hash, ProofBuilder};
use crate::{Error, Result};
use std::path::{Path, PathBuf};

pub use super::scan::Record;

/// Reads and verifies the log at `path`, calling `visit` with each record
/// that passes the scanner, in order. The files read are `path` and the
/// segments rotated away from it (`NAME.N`, `NAME-N`). Fails with an
/// operational error when a file cannot be read or is not a regular file;
/// a log that does not verify is a report with status `invalid`.
pub fn read_log(
    path: &Path,
    opts: &VerifyOptions,
    visit: &mut dyn FnMut(&Record<'_>),
) -> Result<LogReport> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    if !meta.is_file() {
        return Err(Error::NotARegularFile {
            path: path.to_path_buf(),
            kind: crate::fs::FileKind::of(meta.file_type()),
        });
    }
    let mut files: Vec<PathBuf> = super::segments::rotated_siblings(path);
    files.push(path.to_path_buf());
    let plans: Vec<plan::FilePlan> = files
        .into_iter()
        .map(|f| plan::plan_file(&super::source::Source::Local(f)))
        .collect();
    let logs = plan::group(plans);
    let Some(log) = logs
        .into_iter()
        .find(|l| l.segments.iter().any(|s| s.path == path))
    else {
        return Err(Error::io(path, std::io::Error::other("log vanished")));
    };
    if let Some(e) = log.segments.iter().find_map(|s| s.error.clone()) {
        return Err(Error::io(path, std::io::Error::other(e)));
    }
    let sizes = opts.snapshot_sizes();
    let ctx = ScanContext {
        trusted: &opts.trusted,
        snapshot_sizes: &sizes,
        progress: None,
    };
    let mut per_segment: Vec<Vec<(u64, u64, ChunkScan)>> = Vec::with_capacity(log.segments.len());
    for seg in &log.segments {
        let file = seg.source.open().map_err(|e| Error::io(&seg.path, e))?;
        let chunk = scan::scan_file_visit(&file, 0, seg.len, seg.len, &ctx, Some(&mut *visit))
            .map_err(|e| Error::io(&seg.path, e))?;
        // Stop visiting after a failed segment: later ones are not linked.
        let failed = chunk.failure.is_some();
        per_segment.push(vec![(0, seg.len, chunk)]);
        if failed {
            break;
        }
    }
    while per_segment.len() < log.segments.len() {
        per_segment.push(Vec::new());
    }
    let (report, _) = super::stitch::stitch(
        &log,
        &per_segment,
        opts,
        KeyState::new(&opts.trusted),
        auditor_pins(opts),
        None,
        0,
    );
    Ok(report)
}

/// For a caller that acts on records it collected with [`read_log`]: `Ok`
/// when the log verified (or is only partial), the first failure as
/// `reject(seq, error)` (evidence rejected), an unreadable log as an I/O
/// error naming `path`.
pub fn accept_report(
    path: &Path,
    report: &LogReport,
    reject: impl FnOnce(Option<u64>, super::ChainError) -> Error,
) -> Result<()> {
    if let Some(f) = &report.failure {
        return Err(reject(f.seq, f.error.clone()));
    }
    if report.status == LogStatus::Error {
        return Err(Error::io(
            path,
            std::io::Error::other(report.error.clone().unwrap_or_default()),
        ));
    }
    Ok(())
}

/// The `ts` member of a record line (empty when it has none).
pub fn record_ts(line: &[u8]) -> String {
    serde_json::from_slice::<serde_json::Value>(line)
        .ok()
        .and_then(|v| v.get("ts")?.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// What a second pass over a log built: the proof hashes and, if asked,
/// one record line.
pub struct Built {
    pub hashes: Vec<Hash>,
    pub line: Option<Vec<u8>>,
    pub report: LogReport,
}

/// Streams the log again to build the tree hashes of `ranges` (see
/// [`crate::merkle::inclusion_ranges`]) and keep the line of record `keep`.
/// Fails when the log no longer verifies or is shorter than the ranges.
pub fn build_proof(
    path: &Path,
    opts: &VerifyOptions,
    ranges: Vec<std::ops::Range<u64>>,
    keep: Option<u64>,
) -> Result<Built> {
    let mut builder = ProofBuilder::new(ranges);
    let mut line = None;
    let report = read_log(path, opts, &mut |r| {
        builder.push(r.leaf);
        if keep == Some(r.seq) {
            line = Some(r.line.to_vec());
        }
    })?;
    refuse_unverified(path, &report)?;
    let Some(hashes) = builder.finish() else {
        return Err(changed(path));
    };
    Ok(Built {
        hashes,
        line,
        report,
    })
}

/// What [`build_proofs`] built: one hash list per range set, and the lines
/// of the records asked for.
pub struct BuiltMany {
    pub proofs: Vec<Vec<Hash>>,
    pub lines: std::collections::BTreeMap<u64, Vec<u8>>,
    pub report: LogReport,
}

/// [`build_proof`] for several proofs and lines in one pass.
pub fn build_proofs(
    path: &Path,
    opts: &VerifyOptions,
    ranges: Vec<Vec<std::ops::Range<u64>>>,
    keep: &std::collections::BTreeSet<u64>,
) -> Result<BuiltMany> {
    let mut builders: Vec<ProofBuilder> = ranges.into_iter().map(ProofBuilder::new).collect();
    let mut lines = std::collections::BTreeMap::new();
    let report = read_log(path, opts, &mut |r| {
        for b in &mut builders {
            b.push(r.leaf);
        }
        if keep.contains(&r.seq) {
            lines.insert(r.seq, r.line.to_vec());
        }
    })?;
    refuse_unverified(path, &report)?;
    let mut proofs = Vec::with_capacity(builders.len());
    for b in builders {
        proofs.push(b.finish().ok_or_else(|| changed(path))?);
    }
    if lines.len() != keep.len() {
        return Err(changed(path));
    }
    Ok(BuiltMany {
        proofs,
        lines,
        report,
    })
}

/// A log that does not verify is refused: nothing is proven from it.
pub fn refuse_unverified(path: &Path, report: &LogReport) -> Result<()> {
    if let Some(f) = &report.failure {
        return Err(Error::LogState {
            path: path.to_path_buf(),
            problem: super::writer::LogStateProblem::Invalid(f.error.clone()),
        });
    }
    if report.status == LogStatus::Error {
        return Err(Error::io(
            path,
            std::io::Error::other(report.error.clone().unwrap_or_default()),
        ));
    }
    Ok(())
}

/// The log changed between two passes over it.
pub fn changed(path: &Path) -> Error {
    Error::LogState {
        path: path.to_path_buf(),
        problem: super::writer::LogStateProblem::ChangedWhileReading,
    }
}
