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

use super::blame;
use super::error::ChainError;
use super::incremental::{
    last_record_changed, recheck_failure, recheck_plan, resume_from, scan_tasks,
};
use super::missing::{add_missing_logs, add_missing_pins, mark_missing_origin};
use super::plan;
use super::scan::{self, ChunkScan, ScanContext};
use super::source::Source;
use super::state::{STATE_FORMAT, SavedLog, VerifyState, hashes_from_hex};
use super::stitch::{Pin, stitch};
use super::trust::KeyState;
use crate::Result;
use crate::merkle::CompactRange;
use crate::note::checkpoint::Checkpoint;
use rayon::prelude::*;
use std::path::{Path, PathBuf};

pub use super::files::{Found, collect_inputs, collect_log_files};
pub use super::options::{
    AuditorCheckpoint, DEFAULT_CHUNK_BYTES, Progress, VerifyOptions, load_auditor_checkpoint,
};
pub use super::report::{
    Failure, FleetReport, FleetSummary, LogReport, LogStatus, VerifiedLog, VerifyMode,
};

/// Verifies every log named by `paths` (see [`collect_log_files`]) in
/// parallel. Operational errors on individual files become `error` rows;
/// the call itself fails only when no log can be found.
pub fn verify_paths(paths: &[PathBuf], opts: &VerifyOptions) -> Result<FleetReport> {
    let found = collect_log_files(paths)?;
    Ok(verify_found(&found, opts, &|_| {}))
}

/// Verifies what [`collect_log_files`] found: every file, plus one `error`
/// row for each path that could not be examined (the run goes on).
pub fn verify_found(
    found: &Found,
    opts: &VerifyOptions,
    on_log: &(dyn Fn(&LogReport) + Sync),
) -> FleetReport {
    verify_found_with(found, opts, on_log, true)
}

/// [`verify_found`]; `missing_logs`: whether a log an auditor checkpoint
/// names and no input holds is reported here (false for a shard, which
/// leaves that to the merge).
pub(super) fn verify_found_with(
    found: &Found,
    opts: &VerifyOptions,
    on_log: &(dyn Fn(&LogReport) + Sync),
    missing_logs: bool,
) -> FleetReport {
    let mut report = streaming(&found.files, opts, on_log, missing_logs);
    for (path, why) in &found.problems {
        let row = LogReport::error_row(path, 0, why.clone());
        on_log(&row);
        report.logs.push(row);
    }
    report.logs.sort_by(|a, b| a.path.cmp(&b.path));
    report
}

/// Verifies the given log files in parallel.
pub fn verify_files(files: &[PathBuf], opts: &VerifyOptions) -> FleetReport {
    let sources: Vec<Source> = files.iter().cloned().map(Source::Local).collect();
    verify_files_streaming(&sources, opts, &|_| {})
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
    files: &[Source],
    opts: &VerifyOptions,
    on_log: &(dyn Fn(&LogReport) + Sync),
) -> FleetReport {
    streaming(files, opts, on_log, true)
}

fn streaming(
    files: &[Source],
    opts: &VerifyOptions,
    on_log: &(dyn Fn(&LogReport) + Sync),
    missing_logs: bool,
) -> FleetReport {
    let plans: Vec<plan::FilePlan> = files.par_iter().map(plan::plan_file).collect();
    let logs = plan::group(plans);
    let keys = opts.trusted.fingerprint();
    // Pins (the trees verified before) hold whatever the keys; resuming
    // (trusting what was verified before) needs the same keys.
    let previous = opts.state.as_deref();
    let same_keys = previous.is_some_and(|s| s.keys == keys);
    // A fleet's reports are its largest allocation: collected once, while
    // each log's plan is freed as soon as it is verified, and the states
    // (only with --state) kept apart rather than as a slot beside every
    // report.
    let saved: std::sync::Mutex<Vec<SavedLog>> = std::sync::Mutex::new(Vec::new());
    let mut reports: Vec<LogReport> = logs
        .into_par_iter()
        .map(|log| {
            let pinned = previous.and_then(|s| log.origin.as_ref().and_then(|o| s.logs.get(o)));
            let (report, state) = verify_log(&log, opts, pinned, same_keys);
            drop(log);
            on_log(&report);
            if let Some(state) = state {
                saved
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .push(state);
            }
            report
        })
        .collect();
    reports.sort_by(|a, b| a.path.cmp(&b.path));
    let mut state = VerifyState {
        format: STATE_FORMAT.to_owned(),
        keys,
        logs: previous.map(|s| s.logs.clone()).unwrap_or_default(),
    };
    // Only a log that verified moves its pin forward; a rejected or
    // unreadable one keeps the pin it had, so it stays rejected until the
    // auditor resets that pin (`--reset-pin`). Each log is one origin (the
    // plan groups by origin), so the order of insertion does not matter.
    for saved in saved
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
    {
        state.logs.insert(saved.origin.clone(), saved);
    }
    if let Some(previous) = previous {
        add_missing_pins(&mut reports, previous);
    }
    if missing_logs {
        add_missing_logs(&mut reports, opts);
    }
    FleetReport {
        logs: reports,
        state,
    }
}

/// Scans one byte range of one segment.
fn scan_range(
    source: &Source,
    start: u64,
    end: u64,
    len: u64,
    ctx: &ScanContext<'_>,
) -> std::io::Result<ChunkScan> {
    let file = source.open()?;
    scan::scan_file_chunk(&file, start, end, len, ctx)
}

/// Pass 1 and 2 for one log.
fn verify_log(
    log: &plan::LogPlan,
    opts: &VerifyOptions,
    saved: Option<&SavedLog>,
    same_keys: bool,
) -> (LogReport, Option<SavedLog>) {
    let (mut report, saved_out) = check_log(log, opts, saved, same_keys);
    let sources: Vec<&Source> = log.segments.iter().map(|s| &s.source).collect();
    name_changed_record(&mut report, opts, |seq, found, auditor| {
        blame::changed_record(&sources, seq, found, &opts.trusted, auditor)
    });
    (report, saved_out)
}

fn check_log(
    log: &plan::LogPlan,
    opts: &VerifyOptions,
    saved: Option<&SavedLog>,
    same_keys: bool,
) -> (LogReport, Option<SavedLog>) {
    let first = &log.segments[0];
    if let Some(e) = &first.error {
        return (
            LogReport::error_row(&first.path, first.len, e.clone()),
            None,
        );
    }
    // The log must contain the auditor's checkpoints and, when it was
    // verified before, the tree verified then (even when it cannot be
    // resumed: a shorter or rewritten log is caught here).
    let mut pins = auditor_pins(opts);
    if let Some(sv) = saved {
        let root = hashes_from_hex(&sv.tree)
            .and_then(|tree| CompactRange::from_parts(0, sv.records, tree).ok())
            .and_then(|range| range.root().ok());
        let Some(root) = root else {
            // A pin that cannot be read is never dropped silently.
            let mut report = LogReport::error_row(
                &first.path,
                first.len,
                format!(
                    "the state's pin for {:?} is unusable; check the state file, or forget the pin with --reset-pin",
                    sv.origin
                ),
            );
            report.origin = Some(sv.origin.clone());
            return (report, None);
        };
        pins.push(Pin {
            checkpoint: Checkpoint {
                origin: sv.origin.clone(),
                size: sv.records,
                root,
                extensions: Vec::new(),
            },
            auditor: None,
        });
    }
    let mut sizes: Vec<u64> = pins.iter().map(|c| c.checkpoint.size).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let ctx = ScanContext {
        trusted: &opts.trusted,
        snapshot_sizes: &sizes,
        progress: opts
            .progress
            .as_ref()
            .map(|p| &*p.0 as &(dyn Fn(u64) + Sync)),
    };
    let resumed = resume_from(saved, log, opts, same_keys);
    let (saved, start_keys) = match resumed {
        Some((s, keys)) => (Some(s), keys),
        None => (None, KeyState::new(&opts.trusted)),
    };
    let tasks = scan_tasks(log, saved, opts.chunk_bytes);
    let recheck = saved
        .map(|s| recheck_plan(s, &log.segments, &tasks, opts.recheck))
        .unwrap_or_default();
    if let Some(sv) = saved
        && let Some(f) = last_record_changed(sv, &log.segments)
    {
        let seg = &log.segments[sv.segments.len() - 1];
        let mut report = LogReport::error_row(&seg.path, seg.len, String::new());
        report.status = LogStatus::Invalid;
        report.error = None;
        report.origin = Some(sv.origin.clone());
        report.failure = Some(f);
        return (report, None);
    }

    let scanned: Vec<std::io::Result<ChunkScan>> = tasks
        .par_iter()
        .map(|&(i, a, b)| scan_range(&log.segments[i].source, a, b, log.segments[i].len, &ctx))
        .collect();
    let rechecked: Vec<std::io::Result<ChunkScan>> = recheck
        .ranges
        .par_iter()
        .map(|r| {
            scan_range(
                &log.segments[r.segment].source,
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
                return (
                    LogReport::error_row(&seg.path, seg.len, e.to_string()),
                    None,
                );
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
                return (
                    LogReport::error_row(&seg.path, seg.len, e.to_string()),
                    None,
                );
            }
        }
    }
    let (mut report, saved_out) = stitch(
        log,
        &per_segment,
        opts,
        start_keys,
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

/// For a `broken_link`, names the record a trusted checkpoint shows was
/// changed ([`blame`]), reading the log again with `read`.
/// The auditor's checkpoints are handed over as notes still to be judged:
/// they count only where the trust rule admits them, at their place in the
/// log, as when the log is verified.
fn name_changed_record(
    report: &mut LogReport,
    opts: &VerifyOptions,
    read: impl FnOnce(u64, crate::merkle::Hash, &[&super::trust::Prechecked]) -> Option<blame::Changed>,
) {
    let Some(f) = report.failure.as_mut() else {
        return;
    };
    let ChainError::BrokenLink { seq, found, .. } = f.error else {
        return;
    };
    let auditor: Vec<&super::trust::Prechecked> = opts
        .checkpoints
        .iter()
        .filter(|c| report.origin.as_deref() == Some(c.checkpoint().origin.as_str()))
        .map(|c| c.prechecked())
        .collect();
    f.changed = read(seq, found, &auditor);
}

/// Verifies a log held in memory (used by tests, fuzzing and tools that
/// already hold the bytes).
pub fn verify_bytes(name: &Path, bytes: &[u8], opts: &VerifyOptions) -> LogReport {
    let sizes = opts.snapshot_sizes();
    let ctx = ScanContext {
        trusted: &opts.trusted,
        snapshot_sizes: &sizes,
        progress: None,
    };
    let scan = scan::scan_bytes(bytes, &ctx);
    let log = plan::LogPlan {
        origin: None,
        segments: vec![plan::FilePlan {
            path: name.to_path_buf(),
            source: Source::Local(name.to_path_buf()),
            len: bytes.len() as u64,
            dev: 0,
            ino: 0,
            etag: None,
            head: None,
            no_line: false,
            error: None,
        }],
    };
    let (mut report, _) = stitch(
        &log,
        &[vec![(0, bytes.len() as u64, scan)]],
        opts,
        KeyState::new(&opts.trusted),
        auditor_pins(opts),
        None,
        0,
    );
    name_changed_record(&mut report, opts, |seq, found, auditor| {
        blame::changed_record_in(bytes, seq, found, &opts.trusted, auditor)
    });
    mark_missing_origin(&mut report, name, opts);
    report
}

pub(super) fn auditor_pins(opts: &VerifyOptions) -> Vec<Pin<'_>> {
    opts.checkpoints
        .iter()
        .map(|c| Pin {
            checkpoint: c.checkpoint().clone(),
            auditor: Some(c),
        })
        .collect()
}
