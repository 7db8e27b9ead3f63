//! The offline verifier (docs/FORMAT.md §7).
//!
//! Verification runs in two passes. Pass 1 ([`super::scan`]) scans byte
//! ranges of every file in parallel on one rayon pool: small files are one
//! range, large files many, so cores stay busy on a single huge log and on a
//! fleet of small ones alike. Pass 2 stitches the ranges of each log in
//! order: it checks the links across range boundaries, computes the Merkle
//! root at every checkpoint from the compact ranges, follows key rotations,
//! checks signatures, and compares the log with the auditor's checkpoints.
//!
//! What is trusted: only the verifier keys in [`VerifyOptions::trusted`],
//! and keys introduced by a key rotation record signed by a key trusted at
//! that point. A key that appears in a log is never trusted on its own.
//!
//! What is not checked: that timestamps increase (clocks step back), the
//! meaning of record bodies, and anything appended to a file after
//! verification started (a file is verified up to its size at start).

use super::error::ChainError;
use super::plan;
use super::record;
use super::scan::{self, ChunkScan, ScanContext, SignatureCheck, Tail};
use super::state::{
    Recheck, STATE_FORMAT, SavedLog, SavedRange, SavedSegment, VerifyState, hashes_from_hex,
    hashes_to_hex,
};
use crate::merkle::{CompactRange, Hash};
use crate::note::{self, VerifierKey, checkpoint::Checkpoint};
use crate::{Error, Result};
use rayon::prelude::*;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Default size of the byte ranges a file is cut into.
pub const DEFAULT_CHUNK_BYTES: u64 = 8 << 20;

/// A checkpoint an auditor kept from an earlier look at a log; the log must
/// contain it and extend it. Built by [`load_auditor_checkpoint`], which
/// checks its signature.
#[derive(Debug, Clone)]
pub struct AuditorCheckpoint {
    source: PathBuf,
    checkpoint: Checkpoint,
}

impl AuditorCheckpoint {
    pub fn checkpoint(&self) -> &Checkpoint {
        &self.checkpoint
    }
    pub fn source(&self) -> &Path {
        &self.source
    }
}

/// Reads a signed checkpoint note from `path` and checks that a trusted key
/// signed it. A note that does not verify is an operational error here: the
/// auditor handed vouch something unusable as a reference.
pub fn load_auditor_checkpoint(path: &Path, trusted: &[VerifierKey]) -> Result<AuditorCheckpoint> {
    let bytes = read_small_file(path, 1 << 20)?;
    let checkpoint = parse_trusted_checkpoint(&bytes, trusted)
        .map_err(|why| Error::Usage(format!("{}: {why}", path.display())))?;
    Ok(AuditorCheckpoint {
        source: path.to_path_buf(),
        checkpoint,
    })
}

impl AuditorCheckpoint {
    /// Builds an auditor checkpoint from a signed note held in memory (for
    /// example one fetched from an anchor target), checking that a trusted
    /// key signed it. `source` names where it came from, for reports.
    pub fn from_note(
        source: impl Into<PathBuf>,
        note_bytes: &[u8],
        trusted: &[VerifierKey],
    ) -> std::result::Result<Self, String> {
        Ok(AuditorCheckpoint {
            source: source.into(),
            checkpoint: parse_trusted_checkpoint(note_bytes, trusted)?,
        })
    }
}

/// Verifies a signed checkpoint note against `trusted` keys and parses it.
pub fn parse_trusted_checkpoint(
    note_bytes: &[u8],
    trusted: &[VerifierKey],
) -> std::result::Result<Checkpoint, String> {
    if trusted.is_empty() {
        return Err("a checkpoint can only be used with --pub keys to check its signature".into());
    }
    let verified = note::open(note_bytes, trusted)
        .map_err(|e| format!("not a checkpoint signed by a trusted key: {e}"))?;
    let checkpoint = note::checkpoint::parse(verified.text())
        .map_err(|e| format!("not a tlog-checkpoint: {e}"))?;
    if !verified
        .verified_by()
        .iter()
        .any(|(name, _)| *name == checkpoint.origin)
    {
        return Err(format!(
            "not signed by a trusted key named after its origin {:?}",
            checkpoint.origin
        ));
    }
    Ok(checkpoint)
}

/// Reads a file of at most `max` bytes (proofs, notes, record lines).
pub fn read_small_file(path: &Path, max: u64) -> Result<Vec<u8>> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    if meta.len() > max {
        return Err(Error::Usage(format!(
            "{}: larger than {max} bytes",
            path.display()
        )));
    }
    std::fs::read(path).map_err(|e| Error::io(path, e))
}

/// What to verify against.
#[derive(Debug, Clone)]
pub struct VerifyOptions {
    /// Keys trusted to sign checkpoints. Empty: logs are `unauthenticated`.
    pub trusted: Vec<VerifierKey>,
    /// Checkpoints the auditor kept; matched to logs by origin.
    pub checkpoints: Vec<AuditorCheckpoint>,
    /// Size of the byte ranges files are cut into for parallel scanning.
    pub chunk_bytes: u64,
    /// A saved state to resume from (incremental audit).
    pub state: Option<Arc<VerifyState>>,
    /// How much of the already-verified part a resumed run re-checks.
    pub recheck: Recheck,
    /// Build the state for the next incremental run ([`FleetReport::state`]).
    pub save_state: bool,
    /// Called with the number of bytes read, as scanning goes.
    pub progress: Option<Progress>,
}

/// A progress callback (bytes read so far are reported in increments).
#[derive(Clone)]
pub struct Progress(pub Arc<dyn Fn(u64) + Send + Sync>);

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Progress(..)")
    }
}

impl Default for VerifyOptions {
    fn default() -> Self {
        VerifyOptions {
            trusted: Vec::new(),
            checkpoints: Vec::new(),
            chunk_bytes: DEFAULT_CHUNK_BYTES,
            state: None,
            recheck: Recheck::Rolling,
            save_state: false,
            progress: None,
        }
    }
}

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
    /// Structurally valid, but no trusted key was given, so no checkpoint
    /// signature was checked.
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
}

/// A log that passed verification (possibly partially). Only the verifier
/// builds it.
#[derive(Debug, Clone)]
pub struct VerifiedLog {
    origin: Option<String>,
    records: u64,
    covered: u64,
    root: Hash,
    last_checkpoint: Option<Checkpoint>,
    authenticated: bool,
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
    /// The reason code shown for this log, if any.
    pub fn reason(&self) -> Option<&'static str> {
        match (&self.failure, self.status) {
            (Some(f), _) => Some(f.error.code()),
            (None, LogStatus::Partial) if self.torn_tail.is_some() => Some("torn_tail"),
            (None, LogStatus::Partial) => Some("uncovered"),
            (None, LogStatus::Error) => Some("io_error"),
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

impl FleetReport {
    /// 0 when everything verified; 1 when any log was rejected (with
    /// `strict`, also partial or unauthenticated); otherwise 2 when any log
    /// could not be read. Rejected evidence wins over an unreadable file, so
    /// a tampered log is never reported as a mere operational error (the
    /// same rule as `anchor verify`).
    pub fn exit_code(&self, strict: bool) -> u8 {
        let rejected = self.logs.iter().any(|log| match log.status {
            LogStatus::Invalid => true,
            LogStatus::Partial | LogStatus::Unauthenticated => strict,
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

/// Finds the log files named by `paths`: files as given, directories walked
/// recursively for files named `*.jsonl` or rotated segments `*.jsonl.N`,
/// `*.jsonl-N` (hidden entries skipped). Errors
/// when a path is unreadable or nothing is found.
pub fn collect_log_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for path in paths {
        let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
        if meta.is_dir() {
            walk(path, &mut files)?;
        } else {
            files.push(path.clone());
        }
    }
    if files.is_empty() {
        let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        return Err(Error::Usage(format!(
            "no log files (*.jsonl) found in {}",
            shown.join(", ")
        )));
    }
    files.sort();
    files.dedup();
    Ok(files)
}

/// `*.jsonl`, and rotated segments of it: `*.jsonl.N` and `*.jsonl-N` with
/// N all digits (logrotate's numeric and date styles). Compressed segments
/// are not read.
fn is_log_name(name: &str) -> bool {
    match name.rfind(".jsonl") {
        Some(i) if i > 0 => {
            let rest = &name[i + ".jsonl".len()..];
            rest.is_empty()
                || (rest.len() > 1
                    && (rest.starts_with('.') || rest.starts_with('-'))
                    && rest[1..].bytes().all(|b| b.is_ascii_digit()))
        }
        _ => false,
    }
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let name = entry.file_name();
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        let path = entry.path();
        let kind = entry.file_type().map_err(|e| Error::io(&path, e))?;
        if kind.is_dir() {
            walk(&path, out)?;
        } else if kind.is_file() && is_log_name(&name.to_string_lossy()) {
            out.push(path);
        }
    }
    Ok(())
}

/// Verifies every log named by `paths` (see [`collect_log_files`]) in
/// parallel. Operational errors on individual files become `error` rows;
/// the call itself fails only when no log can be found.
pub fn verify_paths(paths: &[PathBuf], opts: &VerifyOptions) -> Result<FleetReport> {
    let files = collect_log_files(paths)?;
    Ok(verify_files(&files, opts))
}

/// Verifies the given log files in parallel.
pub fn verify_files(files: &[PathBuf], opts: &VerifyOptions) -> FleetReport {
    verify_files_streaming(files, opts, &|_| {})
}

/// Verifies the given log files in parallel on the rayon pool, calling
/// `on_log` with each log's report as soon as it is complete (in completion
/// order); the returned report is sorted by path.
///
/// Files are grouped into logs by origin ([`super::plan`]); every log's byte
/// ranges are scanned in parallel (pass 1) and then stitched in order
/// (pass 2). With [`VerifyOptions::state`], logs seen before are resumed:
/// only new bytes are scanned, plus the re-check window.
pub fn verify_files_streaming(
    files: &[PathBuf],
    opts: &VerifyOptions,
    on_log: &(dyn Fn(&LogReport) + Sync),
) -> FleetReport {
    let plans: Vec<plan::FilePlan> = files.par_iter().map(plan::plan_file).collect();
    let logs = plan::group(plans);
    let index = key_index(&opts.trusted);
    let keys = VerifyState::keys_fingerprint(&opts.trusted);
    let resumable = opts.state.as_deref().filter(|s| s.keys == keys);
    let mut results: Vec<(LogReport, Option<SavedLog>)> = logs
        .par_iter()
        .map(|log| {
            let saved = resumable.and_then(|s| log.origin.as_ref().and_then(|o| s.logs.get(o)));
            let result = verify_log(log, opts, &index, saved);
            on_log(&result.0);
            result
        })
        .collect();
    results.sort_by(|a, b| a.0.path.cmp(&b.0.path));
    let mut state = VerifyState {
        format: STATE_FORMAT.to_owned(),
        keys,
        logs: resumable.map(|s| s.logs.clone()).unwrap_or_default(),
    };
    let mut reports = Vec::with_capacity(results.len());
    for (report, saved) in results {
        if let Some(saved) = saved {
            state.logs.insert(saved.origin.clone(), saved);
        } else if let Some(origin) = &report.origin {
            state.logs.remove(origin);
        }
        reports.push(report);
    }
    add_missing_logs(&mut reports, opts);
    FleetReport {
        logs: reports,
        state,
    }
}

/// Scans one byte range of one segment.
fn scan_range(
    path: &Path,
    start: u64,
    end: u64,
    len: u64,
    ctx: &ScanContext<'_>,
) -> std::io::Result<ChunkScan> {
    let file = std::fs::File::open(path)?;
    scan::scan_file_chunk(&file, start, end, len, ctx)
}

/// Whether a remembered log can be resumed: same segment files (device,
/// inode), none shorter, only the last one grown, and no auditor checkpoint
/// inside the part already verified.
fn can_resume(saved: &SavedLog, log: &plan::LogPlan, opts: &VerifyOptions) -> bool {
    let n = saved.segments.len();
    if n == 0 || n > log.segments.len() {
        return false;
    }
    let same_files = saved
        .segments
        .iter()
        .zip(&log.segments)
        .enumerate()
        .all(|(i, (s, f))| {
            s.path == f.path
                && s.dev == f.dev
                && s.ino == f.ino
                && f.len >= s.len
                && (i + 1 == n || f.len == s.len)
        });
    let pinned_inside = opts
        .checkpoints
        .iter()
        .any(|c| c.checkpoint.origin == saved.origin && c.checkpoint.size < saved.records);
    same_files && !pinned_inside && hashes_from_hex(&saved.tree).is_some()
}

/// Pass 1 and 2 for one log.
fn verify_log(
    log: &plan::LogPlan,
    opts: &VerifyOptions,
    keys: &KeyIndex,
    saved: Option<&SavedLog>,
) -> (LogReport, Option<SavedLog>) {
    let first = &log.segments[0];
    if let Some(e) = &first.error {
        return (error_report(&first.path, first.len, e.clone()), None);
    }
    // The log must contain the auditor's checkpoints and, when it was
    // verified before, the tree verified then (even when it cannot be
    // resumed: a shorter or rewritten log is caught here).
    let mut pins: Vec<Checkpoint> = opts
        .checkpoints
        .iter()
        .map(|c| c.checkpoint.clone())
        .collect();
    if let Some(sv) = saved
        && let Some(tree) = hashes_from_hex(&sv.tree)
        && let Ok(range) = CompactRange::from_parts(0, sv.records, tree)
        && let Ok(root) = range.root()
    {
        pins.push(Checkpoint {
            origin: sv.origin.clone(),
            size: sv.records,
            root,
            extensions: Vec::new(),
        });
    }
    let mut sizes: Vec<u64> = pins.iter().map(|c| c.size).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let ctx = ScanContext {
        trusted: keys,
        snapshot_sizes: &sizes,
        progress: opts
            .progress
            .as_ref()
            .map(|p| &*p.0 as &(dyn Fn(u64) + Sync)),
    };
    let saved = saved.filter(|s| can_resume(s, log, opts));
    // What to scan: everything, or what is new since the saved state.
    let mut tasks: Vec<(usize, u64, u64)> = Vec::new();
    for (i, seg) in log.segments.iter().enumerate() {
        let from = match saved {
            Some(s) if i < s.segments.len() => s.segments[i].len,
            _ => 0,
        };
        if saved.is_some() && from == seg.len && i + 1 < log.segments.len() {
            continue;
        }
        for (a, b) in plan::ranges(from, seg.len, opts.chunk_bytes) {
            tasks.push((i, a, b));
        }
    }
    let recheck = saved
        .map(|s| recheck_plan(s, &log.segments, &tasks, opts.recheck))
        .unwrap_or_default();
    if let Some(sv) = saved
        && let Some(f) = last_record_changed(sv, &log.segments)
    {
        let seg = &log.segments[sv.segments.len() - 1];
        let mut report = error_report(&seg.path, seg.len, String::new());
        report.status = LogStatus::Invalid;
        report.error = None;
        report.origin = Some(sv.origin.clone());
        report.failure = Some(f);
        return (report, None);
    }

    let scanned: Vec<std::io::Result<ChunkScan>> = tasks
        .par_iter()
        .map(|&(i, a, b)| scan_range(&log.segments[i].path, a, b, log.segments[i].len, &ctx))
        .collect();
    let rechecked: Vec<std::io::Result<ChunkScan>> = recheck
        .ranges
        .par_iter()
        .map(|r| {
            scan_range(
                &log.segments[r.segment].path,
                r.start,
                r.end,
                log.segments[r.segment].len,
                &ctx,
            )
        })
        .collect();
    let mut per_segment: Vec<Vec<(u64, u64, ChunkScan)>> = vec![Vec::new(); log.segments.len()];
    for (&(i, a, b), result) in tasks.iter().zip(scanned) {
        match result {
            Ok(scan) => per_segment[i].push((a, b, scan)),
            Err(e) => {
                let seg = &log.segments[i];
                return (error_report(&seg.path, seg.len, e.to_string()), None);
            }
        }
    }
    let mut report_failure = None;
    for (r, result) in recheck.ranges.iter().zip(rechecked) {
        match result {
            Ok(scan) => {
                if let Some(f) = recheck_failure(r, &scan, &log.segments[r.segment].path, &recheck)
                {
                    report_failure = Some(f);
                    break;
                }
            }
            Err(e) => {
                let seg = &log.segments[r.segment];
                return (error_report(&seg.path, seg.len, e.to_string()), None);
            }
        }
    }
    let (mut report, saved_out) = stitch(
        log,
        &per_segment,
        opts,
        keys,
        pins,
        saved,
        recheck.next_cursor,
    );
    if let Some(f) = report_failure {
        report.status = LogStatus::Invalid;
        report.failure = Some(f);
        report.verified = None;
        return (report, None);
    }
    (report, saved_out)
}

/// Appends a scanned range to the remembered ones, merging it into the
/// previous range when they are adjacent and together still small, so the
/// list stays about (log size / chunk size) long however often small
/// increments are verified.
fn push_range(
    ranges: &mut Vec<SavedRange>,
    new: SavedRange,
    digest: &CompactRange,
    chunk_bytes: u64,
) {
    if let Some(last) = ranges.last_mut()
        && last.segment == new.segment
        && last.end == new.start
        && new.end - last.start <= chunk_bytes
        && let (Some(hashes), Some(first)) = (hashes_from_hex(&last.digest), last.first_seq)
        && let Ok(mut merged) = CompactRange::from_parts(first, first + last.lines, hashes)
        && merged.merge(digest.clone()).is_ok()
    {
        last.end = new.end;
        last.lines += new.lines;
        last.digest = hashes_to_hex(merged.hashes());
        return;
    }
    ranges.push(new);
}

/// Re-reads the last remembered record and compares its leaf hash: the
/// record new ones link to must be the one verified before.
fn last_record_changed(saved: &SavedLog, segments: &[plan::FilePlan]) -> Option<Failure> {
    let seg = saved.segments.last()?;
    if saved.records == 0 || seg.len == 0 {
        return None;
    }
    let path = &segments.get(saved.segments.len() - 1)?.path;
    let changed = || Failure {
        path: path.clone(),
        line: seg.lines,
        offset: 0,
        seq: Some(saved.records - 1),
        error: ChainError::HistoryChanged {
            from_seq: saved.records - 1,
            to_seq: saved.records - 1,
        },
    };
    let Ok(file) = std::fs::File::open(path) else {
        return Some(changed());
    };
    match super::writer::last_line(&file, seg.len) {
        Ok(super::writer::LastLine::Complete(line))
            if crate::hex::encode(&crate::merkle::leaf_hash(&line)) == saved.last_leaf =>
        {
            None
        }
        _ => Some(changed()),
    }
}

/// The remembered ranges one run re-scans.
#[derive(Default)]
struct RecheckPlan {
    ranges: Vec<SavedRange>,
    /// Lines before each re-checked range in its segment.
    lines_before: Vec<u64>,
    next_cursor: usize,
}

fn recheck_plan(
    saved: &SavedLog,
    segments: &[plan::FilePlan],
    tasks: &[(usize, u64, u64)],
    mode: Recheck,
) -> RecheckPlan {
    let new_bytes: u64 = tasks.iter().map(|t| t.2 - t.1).sum();
    let n = saved.ranges.len();
    let mut chosen: Vec<usize> = Vec::new();
    let mut next_cursor = saved.recheck_cursor;
    match mode {
        Recheck::All => chosen.extend(0..n),
        Recheck::Rolling => {
            // At least as many bytes as are new and one range per run, so the
            // sweep over the old part finishes before the log has doubled
            // (new ranges are merged up to the chunk size, so at most one
            // is added per chunk of new data).
            let mut budget = 0u64;
            let mut k = saved.recheck_cursor % n.max(1);
            for taken in 0..n {
                if budget >= new_bytes && taken >= 1 {
                    break;
                }
                if !chosen.contains(&k) {
                    chosen.push(k);
                    budget += saved.ranges[k].end - saved.ranges[k].start;
                }
                k = (k + 1) % n;
            }
            next_cursor = k;
        }
    }
    chosen.sort_unstable();
    let mut lines_before = Vec::with_capacity(chosen.len());
    for &k in &chosen {
        let r = &saved.ranges[k];
        lines_before.push(
            saved.ranges[..k]
                .iter()
                .filter(|p| p.segment == r.segment)
                .map(|p| p.lines)
                .sum(),
        );
    }
    let _ = segments;
    RecheckPlan {
        ranges: chosen.iter().map(|&k| saved.ranges[k].clone()).collect(),
        lines_before,
        next_cursor,
    }
}

/// Compares a re-scan of a remembered range with its digest.
fn recheck_failure(
    range: &SavedRange,
    scan: &ChunkScan,
    path: &Path,
    plan: &RecheckPlan,
) -> Option<Failure> {
    let index = plan.ranges.iter().position(|r| r == range).unwrap_or(0);
    let before = plan.lines_before.get(index).copied().unwrap_or(0);
    if let Some(f) = &scan.failure {
        return Some(Failure {
            path: path.to_path_buf(),
            line: before + f.line_index + 1,
            offset: f.offset,
            seq: f.seq,
            error: f.error.clone(),
        });
    }
    let digest = hashes_to_hex(scan.range.hashes());
    let first_seq = scan.first.as_ref().map(|f| f.seq);
    if first_seq != range.first_seq || scan.lines != range.lines || digest != range.digest {
        let from = range.first_seq.unwrap_or(0);
        return Some(Failure {
            path: path.to_path_buf(),
            line: before + 1,
            offset: range.start,
            seq: range.first_seq,
            error: ChainError::HistoryChanged {
                from_seq: from,
                to_seq: from + range.lines.saturating_sub(1),
            },
        });
    }
    None
}

/// Verifies a log held in memory (used by tests, fuzzing and tools that
/// already hold the bytes).
pub fn verify_bytes(name: &Path, bytes: &[u8], opts: &VerifyOptions) -> LogReport {
    let sizes = snapshot_sizes(opts);
    let keys = key_index(&opts.trusted);
    let ctx = ScanContext {
        trusted: &keys,
        snapshot_sizes: &sizes,
        progress: None,
    };
    let scan = scan::scan_bytes(bytes, &ctx);
    let log = plan::LogPlan {
        origin: None,
        segments: vec![plan::FilePlan {
            path: name.to_path_buf(),
            len: bytes.len() as u64,
            dev: 0,
            ino: 0,
            head: None,
            error: None,
        }],
    };
    let pins: Vec<Checkpoint> = opts
        .checkpoints
        .iter()
        .map(|c| c.checkpoint.clone())
        .collect();
    let (mut report, _) = stitch(
        &log,
        &[vec![(0, bytes.len() as u64, scan)]],
        opts,
        &keys,
        pins,
        None,
        0,
    );
    if let Some(missing) = missing_origin(std::slice::from_ref(&report), opts) {
        // The one log given has no records, or another origin.
        let size = opts
            .checkpoints
            .iter()
            .find(|c| c.checkpoint.origin == missing)
            .map_or(0, |c| c.checkpoint.size);
        let error = if report.records == 0 && size > 0 {
            ChainError::Truncated {
                records: 0,
                checkpoint_size: size,
            }
        } else {
            ChainError::MissingLog { origin: missing }
        };
        report.status = LogStatus::Invalid;
        report.failure.get_or_insert(Failure {
            path: name.to_path_buf(),
            line: 0,
            offset: 0,
            seq: None,
            error,
        });
        report.verified = None;
    }
    report
}

fn snapshot_sizes(opts: &VerifyOptions) -> Vec<u64> {
    let mut sizes: Vec<u64> = opts.checkpoints.iter().map(|c| c.checkpoint.size).collect();
    sizes.sort_unstable();
    sizes.dedup();
    sizes
}

fn error_report(path: &Path, bytes: u64, message: String) -> LogReport {
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

fn missing_origin(logs: &[LogReport], opts: &VerifyOptions) -> Option<String> {
    opts.checkpoints
        .iter()
        .map(|c| &c.checkpoint.origin)
        .find(|origin| {
            !logs
                .iter()
                .any(|l| l.origin.as_deref() == Some(origin.as_str()))
        })
        .cloned()
}

/// An auditor checkpoint whose origin matches no log means a whole log is
/// gone: that is reported as a failed log of its own.
fn add_missing_logs(logs: &mut Vec<LogReport>, opts: &VerifyOptions) {
    let mut seen = Vec::new();
    for c in &opts.checkpoints {
        let origin = &c.checkpoint.origin;
        if seen.contains(origin)
            || logs
                .iter()
                .any(|l| l.origin.as_deref() == Some(origin.as_str()))
        {
            continue;
        }
        seen.push(origin.clone());
        logs.push(LogReport {
            path: c.source.clone(),
            segments: Vec::new(),
            origin: Some(origin.clone()),
            status: LogStatus::Invalid,
            bytes: 0,
            records: 0,
            covered: 0,
            checkpoints: 0,
            failure: Some(Failure {
                path: c.source.clone(),
                line: 0,
                offset: 0,
                seq: None,
                error: ChainError::MissingLog {
                    origin: origin.clone(),
                },
            }),
            torn_tail: None,
            error: None,
            verified: None,
            resumed_from: None,
        });
    }
}

/// The keys given by the auditor, indexed by (name, key ID); built once per
/// run and shared by every log (a fleet may come with thousands of keys).
pub(crate) type KeyIndex = std::collections::HashMap<(String, u32), VerifierKey>;

pub(crate) fn key_index(keys: &[VerifierKey]) -> KeyIndex {
    keys.iter()
        .map(|k| ((k.name().to_owned(), k.key_id()), k.clone()))
        .collect()
}

/// Per-log trust while stitching: the auditor's keys, plus keys a rotation
/// introduced, minus keys a rotation retired.
struct Trust<'k> {
    initial: &'k KeyIndex,
    added: Vec<VerifierKey>,
    retired: Vec<(String, u32)>,
    authenticated: bool,
}

impl Trust<'_> {
    fn is_current(&self, name: &str, id: u32) -> bool {
        let key = (name.to_owned(), id);
        !self.retired.contains(&key)
            && (self.initial.contains_key(&key)
                || self
                    .added
                    .iter()
                    .any(|k| k.name() == name && k.key_id() == id))
    }
}

/// Pass 2: joins the scans of one log's segments and ranges, in order,
/// starting from a saved state when resuming.
#[allow(clippy::too_many_arguments)]
fn stitch(
    log: &plan::LogPlan,
    segments: &[Vec<(u64, u64, ChunkScan)>],
    opts: &VerifyOptions,
    keys: &KeyIndex,
    pins: Vec<Checkpoint>,
    saved: Option<&SavedLog>,
    recheck_cursor: usize,
) -> (LogReport, Option<SavedLog>) {
    let mut s = Stitch {
        pins,
        trust: Trust {
            initial: keys,
            added: Vec::new(),
            retired: Vec::new(),
            authenticated: !opts.trusted.is_empty(),
        },
        range: CompactRange::new(0),
        lines_before: 0,
        path: log.segments[0].path.clone(),
        origin: None,
        last: None,
        covered: 0,
        checkpoints: 0,
        last_checkpoint: None,
        last_is_checkpoint: false,
    };
    let mut records_before = 0;
    if let Some(saved) = saved {
        s.resume(saved);
        records_before = saved.records;
    }
    let mut failure = None;
    let mut segment_lines: Vec<u64> = Vec::with_capacity(segments.len());
    for (i, chunks) in segments.iter().enumerate() {
        let resumed_lines = saved
            .and_then(|sv| sv.segments.get(i))
            .map_or(0, |sg| sg.lines);
        s.lines_before = resumed_lines;
        s.path = log.segments[i].path.clone();
        let scans: Vec<&ChunkScan> = chunks.iter().map(|c| &c.2).collect();
        if let Err(f) = s.run(&scans) {
            failure = Some(f);
            break;
        }
        segment_lines.push(s.lines_before);
        let tail = scans.last().map_or(Tail::None, |c| c.tail);
        // A segment that was rotated away must end with a complete record.
        if i + 1 < segments.len()
            && let Tail::Torn { offset, bytes } | Tail::Trailing { offset, bytes } = tail
        {
            failure = Some(s.fail_at_end(offset, ChainError::TrailingData { bytes }));
            break;
        }
    }
    let new_records: u64 = segments.iter().flatten().map(|c| c.2.lines).sum();
    let records = records_before + new_records;
    let tail = segments
        .last()
        .and_then(|c| c.last())
        .map_or(Tail::None, |c| c.2.tail);
    let bytes = log.segments.iter().map(|f| f.len).sum();
    let mut report = LogReport {
        path: log.segments[0].path.clone(),
        segments: log.segments.iter().map(|f| f.path.clone()).collect(),
        origin: s.origin.clone(),
        status: LogStatus::Valid,
        bytes,
        records,
        covered: s.covered,
        checkpoints: s.checkpoints,
        failure: None,
        torn_tail: None,
        error: None,
        verified: None,
        resumed_from: saved.map(|sv| sv.records),
    };
    let failure = failure
        .or_else(|| s.check_auditor_tail(records))
        .or(match tail {
            Tail::Trailing { offset, bytes } => {
                Some(s.fail_at_end(offset, ChainError::TrailingData { bytes }))
            }
            _ => None,
        });
    if let Some(f) = failure {
        report.status = LogStatus::Invalid;
        report.failure = Some(f);
        return (report, None);
    }
    let mut torn = 0;
    if let Tail::Torn { bytes, .. } = tail {
        report.torn_tail = Some(bytes);
        torn = bytes;
    }
    let fully_covered = records == s.covered || (records == s.covered + 1 && s.last_is_checkpoint);
    report.status = if !s.trust.authenticated {
        LogStatus::Unauthenticated
    } else if report.torn_tail.is_some() || !fully_covered {
        LogStatus::Partial
    } else {
        LogStatus::Valid
    };
    let root = s
        .range
        .root()
        .unwrap_or_else(|_| crate::merkle::empty_root());
    report.verified = Some(VerifiedLog {
        origin: s.origin.clone(),
        records,
        covered: s.covered,
        root,
        last_checkpoint: s.last_checkpoint.clone(),
        authenticated: s.trust.authenticated,
    });
    let saved_out = s.origin.clone().filter(|_| opts.save_state).map(|origin| {
        let mut ranges = saved.map(|sv| sv.ranges.clone()).unwrap_or_default();
        for (i, chunks) in segments.iter().enumerate() {
            for (a, b, c) in chunks {
                if c.lines > 0 {
                    push_range(
                        &mut ranges,
                        SavedRange {
                            segment: i,
                            start: *a,
                            end: *b,
                            first_seq: c.first.as_ref().map(|f| f.seq),
                            lines: c.lines,
                            digest: hashes_to_hex(c.range.hashes()),
                        },
                        &c.range,
                        opts.chunk_bytes,
                    );
                }
            }
        }
        let last_index = log.segments.len() - 1;
        SavedLog {
            origin,
            segments: log
                .segments
                .iter()
                .enumerate()
                .map(|(i, f)| SavedSegment {
                    path: f.path.clone(),
                    dev: f.dev,
                    ino: f.ino,
                    len: if i == last_index { f.len - torn } else { f.len },
                    lines: segment_lines.get(i).copied().unwrap_or(0),
                })
                .collect(),
            ranges,
            records,
            covered: s.covered,
            checkpoints: s.checkpoints,
            last_leaf: crate::hex::encode(&s.last.map_or([0; 32], |l| l.1)),
            last_is_checkpoint: s.last_is_checkpoint,
            tree: hashes_to_hex(s.range.hashes()),
            added_keys: s.trust.added.iter().map(VerifierKey::to_text).collect(),
            retired_keys: s
                .trust
                .retired
                .iter()
                .map(|(n, id)| format!("{n}+{id:08x}"))
                .collect(),
            authenticated: s.trust.authenticated,
            last_checkpoint: s.last_checkpoint.as_ref().map(Checkpoint::to_text),
            recheck_cursor,
        }
    });
    (report, saved_out)
}

/// A first record whose seq is above the expected one: records are missing
/// (`seq_gap`), unless the record after it goes back (`reordered`).
fn seq_jump(expected: u64, first: &scan::FirstRecord) -> ChainError {
    if first.next_seq.is_some_and(|n| n < first.seq) {
        ChainError::Reordered {
            expected,
            found: first.seq,
        }
    } else {
        ChainError::SeqGap {
            expected,
            found: first.seq,
        }
    }
}

struct Stitch<'k> {
    trust: Trust<'k>,
    /// Compact range over all records stitched so far, from 0.
    range: CompactRange,
    /// Lines of the current segment before the current chunk.
    lines_before: u64,
    /// The current segment.
    path: PathBuf,
    /// Checkpoints the log must contain: the auditor's, and the tree an
    /// earlier incremental run verified.
    pins: Vec<Checkpoint>,
    origin: Option<String>,
    /// (seq, leaf) of the last record stitched.
    last: Option<(u64, Hash)>,
    covered: u64,
    checkpoints: u64,
    last_checkpoint: Option<Checkpoint>,
    last_is_checkpoint: bool,
}

// Failures are the cold path, returned at most once per log: their size
// does not matter.
#[allow(clippy::result_large_err)]
impl Stitch<'_> {
    /// Starts from what an earlier run verified.
    fn resume(&mut self, saved: &SavedLog) {
        self.origin = Some(saved.origin.clone());
        if let Some(tree) = hashes_from_hex(&saved.tree)
            && let Ok(range) = CompactRange::from_parts(0, saved.records, tree)
        {
            self.range = range;
        }
        if saved.records > 0
            && let Some(leaf) = crate::hex::decode_lower::<32>(saved.last_leaf.as_bytes())
        {
            self.last = Some((saved.records - 1, leaf));
        }
        self.covered = saved.covered;
        self.checkpoints = saved.checkpoints;
        self.last_is_checkpoint = saved.last_is_checkpoint;
        self.last_checkpoint = saved
            .last_checkpoint
            .as_deref()
            .and_then(|t| note::checkpoint::parse(t).ok());
        self.trust.added = saved
            .added_keys
            .iter()
            .filter_map(|t| VerifierKey::from_text(t).ok())
            .collect();
        self.trust.retired = saved
            .retired_keys
            .iter()
            .filter_map(|t| {
                let (name, id) = t.rsplit_once('+')?;
                Some((name.to_owned(), u32::from_str_radix(id, 16).ok()?))
            })
            .collect();
        self.trust.authenticated = saved.authenticated;
    }

    fn fail_at_end(&self, offset: u64, error: ChainError) -> Failure {
        Failure {
            path: self.path.clone(),
            line: self.lines_before + 1,
            offset,
            seq: None,
            error,
        }
    }

    fn run(&mut self, chunks: &[&ChunkScan]) -> std::result::Result<(), Failure> {
        for (k, chunk) in chunks.iter().enumerate() {
            if let Some(first) = &chunk.first {
                self.boundary(first)?;
                // Checkpoints and auditor snapshots in record order; a
                // snapshot at size n is taken before record n.
                let (mut ci, mut si) = (0, 0);
                while ci < chunk.checkpoints.len() || si < chunk.snapshots.len() {
                    let next_snapshot = chunk.snapshots.get(si);
                    let next_checkpoint = chunk.checkpoints.get(ci);
                    match (next_snapshot, next_checkpoint) {
                        (Some(snap), Some(cp)) if snap.size > cp.seq => {
                            self.checkpoint(cp)?;
                            ci += 1;
                        }
                        (Some(snap), _) => {
                            self.auditor_snapshot(snap)?;
                            si += 1;
                        }
                        (None, Some(cp)) => {
                            self.checkpoint(cp)?;
                            ci += 1;
                        }
                        (None, None) => break,
                    }
                }
            }
            if let Some(f) = &chunk.failure {
                let mut error = f.error.clone();
                if f.unresolved_jump {
                    let next_first = chunks[k + 1..].iter().find_map(|c| c.first.as_ref());
                    if let (ChainError::SeqGap { expected, found }, Some(next)) =
                        (&error, next_first)
                        && next.seq < *found
                    {
                        error = ChainError::Reordered {
                            expected: *expected,
                            found: *found,
                        };
                    }
                }
                return Err(Failure {
                    path: self.path.clone(),
                    line: self.lines_before + f.line_index + 1,
                    offset: f.offset,
                    seq: f.seq,
                    error,
                });
            }
            if chunk.first.is_some() {
                let end = self.range.end();
                self.range.merge(chunk.range.clone()).map_err(|_| Failure {
                    path: self.path.clone(),
                    line: self.lines_before + 1,
                    offset: 0,
                    seq: chunk.first.as_ref().map(|f| f.seq),
                    error: ChainError::SeqGap {
                        expected: end,
                        found: chunk.range.begin(),
                    },
                })?;
                self.last = Some((chunk.last_seq, chunk.last_leaf));
                self.last_is_checkpoint = chunk.last_kind_is_checkpoint;
            }
            self.lines_before += chunk.lines;
        }
        Ok(())
    }

    fn fail(&self, event_line: u64, offset: u64, seq: Option<u64>, error: ChainError) -> Failure {
        Failure {
            path: self.path.clone(),
            line: self.lines_before + event_line + 1,
            offset,
            seq,
            error,
        }
    }

    /// Checks the first record of a chunk against the record before it (or
    /// against the genesis rule for the log's first record).
    fn boundary(&mut self, first: &scan::FirstRecord) -> std::result::Result<(), Failure> {
        let at = |error| Failure {
            path: self.path.clone(),
            line: self.lines_before + 1,
            offset: first.offset,
            seq: Some(first.seq),
            error,
        };
        match (&self.origin, self.last) {
            (None, _) => {
                self.origin = Some(first.origin.clone());
                if first.seq != 0 {
                    return Err(at(seq_jump(0, first)));
                }
                let genesis = record::genesis_prev(&first.origin);
                if first.prev != genesis {
                    return Err(at(ChainError::BrokenLink {
                        seq: 0,
                        expected: genesis,
                        found: first.prev,
                    }));
                }
            }
            (Some(origin), last) => {
                if *origin != first.origin {
                    return Err(at(ChainError::OriginMismatch {
                        expected: origin.clone(),
                        found: first.origin.clone(),
                    }));
                }
                let (last_seq, last_leaf) = last.unwrap_or((0, [0; 32]));
                let expected = last_seq + 1;
                if first.seq != expected {
                    let error = if first.seq < expected {
                        if first.leaf == last_leaf {
                            ChainError::Duplicate { seq: first.seq }
                        } else {
                            ChainError::Reordered {
                                expected,
                                found: first.seq,
                            }
                        }
                    } else {
                        seq_jump(expected, first)
                    };
                    return Err(at(error));
                }
                if first.prev != last_leaf {
                    return Err(at(ChainError::BrokenLink {
                        seq: first.seq,
                        expected: last_leaf,
                        found: first.prev,
                    }));
                }
            }
        }
        Ok(())
    }

    /// The root of [0, size) given the chunk-local range before `size`.
    fn root_with(&self, range_before: &CompactRange) -> Option<Hash> {
        let mut full = self.range.clone();
        full.merge(range_before.clone()).ok()?;
        full.root().ok()
    }

    fn checkpoint(&mut self, event: &scan::CheckpointEvent) -> std::result::Result<(), Failure> {
        let fail = |e| self.fail(event.line_index, event.offset, Some(event.seq), e);
        let computed = self.root_with(&event.range_before).ok_or_else(|| {
            fail(ChainError::SeqGap {
                expected: self.range.end(),
                found: event.range_before.begin(),
            })
        })?;
        if computed != event.checkpoint.root {
            return Err(fail(ChainError::Fork {
                size: event.checkpoint.size,
                checkpoint_root: event.checkpoint.root,
                computed_root: computed,
            }));
        }
        let signed_by: Vec<(String, u32)> = match &event.signature {
            SignatureCheck::NotChecked => Vec::new(),
            SignatureCheck::Verified(by) => {
                let current: Vec<(String, u32)> = by
                    .iter()
                    .filter(|(n, id)| self.trust.is_current(n, *id))
                    .cloned()
                    .collect();
                if current.is_empty() {
                    return Err(fail(ChainError::UnknownKey {
                        signers: by.clone(),
                    }));
                }
                current
            }
            SignatureCheck::Pending {
                note: text,
                signers,
            } => match note::open(text.as_bytes(), &self.trust.added) {
                Ok(v) => v.verified_by().to_vec(),
                Err(note::NoteError::BadSignature { name, key_id }) => {
                    return Err(fail(ChainError::BadSignature {
                        key_name: name,
                        key_id,
                    }));
                }
                Err(_) => {
                    return Err(fail(ChainError::UnknownKey {
                        signers: signers.clone(),
                    }));
                }
            },
        };
        if let Some(new_key) = &event.new_key
            && self.trust.authenticated
        {
            self.trust.retired.extend(signed_by.iter().cloned());
            self.trust.added.push(new_key.clone());
        }
        self.covered = event.checkpoint.size;
        self.checkpoints += 1;
        self.last_checkpoint = Some(event.checkpoint.clone());
        Ok(())
    }

    fn auditor_snapshot(&self, snap: &scan::SizeSnapshot) -> std::result::Result<(), Failure> {
        let Some(root) = self.root_with(&snap.range_before) else {
            return Ok(());
        };
        self.compare_auditor(snap.size, root)
            .map_err(|error| self.fail(snap.line_index, snap.offset, Some(snap.size), error))
    }

    fn compare_auditor(&self, size: u64, root: Hash) -> std::result::Result<(), ChainError> {
        for cp in &self.pins {
            if Some(cp.origin.as_str()) == self.origin.as_deref()
                && cp.size == size
                && cp.root != root
            {
                return Err(ChainError::Fork {
                    size,
                    checkpoint_root: cp.root,
                    computed_root: root,
                });
            }
        }
        Ok(())
    }

    /// Auditor checkpoints at or beyond the end of the log.
    fn check_auditor_tail(&self, records: u64) -> Option<Failure> {
        let origin = self.origin.as_deref();
        let at_end = |error| {
            Some(Failure {
                path: self.path.clone(),
                line: self.lines_before + 1,
                offset: 0,
                seq: None,
                error,
            })
        };
        for cp in &self.pins {
            if Some(cp.origin.as_str()) != origin {
                continue;
            }
            if cp.size > records {
                return at_end(ChainError::Truncated {
                    records,
                    checkpoint_size: cp.size,
                });
            }
            if cp.size == records {
                let root = self
                    .range
                    .root()
                    .unwrap_or_else(|_| crate::merkle::empty_root());
                if let Err(e) = self.compare_auditor(records, root) {
                    return at_end(e);
                }
            }
        }
        None
    }
}
