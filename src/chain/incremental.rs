//! Incremental audits (docs/FORMAT.md §14): deciding whether a remembered
//! log can be resumed, what to re-check, and comparing re-checks with the
//! remembered range digests. The state file is untrusted input as far as
//! bounds go: every index and offset in it is checked before use.

use super::error::ChainError;
use super::options::VerifyOptions;
use super::plan;
use super::report::Failure;
use super::scan;
use super::scan::ChunkScan;
use super::state::{Recheck, SavedLog, SavedRange, hashes_from_hex, hashes_to_hex};
use super::trust::KeyState;
use crate::merkle::CompactRange;
use std::path::Path;

/// Whether a remembered log can be resumed: same segment files (device,
/// inode), none shorter, only the last one grown, and no auditor checkpoint
/// inside the part already verified.
pub(super) fn can_resume(saved: &SavedLog, log: &plan::LogPlan, opts: &VerifyOptions) -> bool {
    let n = saved.segments.len();
    if n == 0 || n > log.segments.len() || !well_formed(saved) {
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
                && same_version(s, f, i + 1 == n)
        });
    let pinned_inside = opts
        .checkpoints
        .iter()
        .any(|c| c.checkpoint().origin == saved.origin && c.checkpoint().size < saved.records);
    same_files && !pinned_inside && hashes_from_hex(&saved.tree).is_some()
}

/// An object has no inode: an append replaces it with a longer version
/// (a new ETag). A sealed segment (not the last) must be the version
/// verified; the last one may have grown, and then only its new bytes are
/// read, held to the same rules as a file grown in place (the last record
/// re-read, new records linked to it, the rolling re-check). An object of
/// the same size with another ETag was rewritten: verified in full. Files
/// carry no ETag.
fn same_version(saved: &super::state::SavedSegment, now: &plan::FilePlan, last: bool) -> bool {
    match (&saved.etag, &now.etag) {
        (None, None) => true,
        (Some(a), Some(b)) => a == b || (last && now.len > saved.len),
        _ => false,
    }
}

/// Every range of a remembered log lies inside a remembered segment, in
/// order, and the counts add up: a hand-edited state is not resumed from.
fn well_formed(saved: &SavedLog) -> bool {
    let ranges_ok = saved.ranges.iter().all(|r| {
        saved
            .segments
            .get(r.segment)
            .is_some_and(|seg| r.start <= r.end && r.end <= seg.len)
            && hashes_from_hex(&r.digest).is_some()
    });
    let lines: u64 = saved.segments.iter().map(|s| s.lines).sum();
    // The ranges cover every record once, in order.
    let mut next = 0u64;
    let mut contiguous = true;
    for r in saved.ranges.iter().filter(|r| r.lines > 0) {
        contiguous &= r.first_seq == Some(next);
        next = next.saturating_add(r.lines);
    }
    let resume_ok = saved.resume.as_ref().is_none_or(|p| {
        saved
            .segments
            .get(p.segment)
            .is_some_and(|seg| p.offset < seg.len && p.line < seg.lines.max(1))
            && p.seq < saved.records
            && p.covered_before <= p.seq
            && p.checkpoints_before < saved.checkpoints.max(1)
    });
    ranges_ok
        && contiguous
        && next == saved.records
        && resume_ok
        && lines == saved.records
        && saved.covered <= saved.records
        && saved.recheck_cursor <= saved.ranges.len()
        && crate::hex::decode_lower::<32>(saved.last_leaf.as_bytes()).is_some()
}

/// Appends a scanned range to the remembered ones, merging it into the
/// previous range when they are adjacent and together still small, so the
/// list stays about (log size / chunk size) long however often small
/// increments are verified.
pub(super) fn push_range(
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
pub(super) fn last_record_changed(
    saved: &SavedLog,
    segments: &[plan::FilePlan],
) -> Option<Failure> {
    let seg = saved.segments.last()?;
    if saved.records == 0 || seg.len == 0 {
        return None;
    }
    let plan = segments.get(saved.segments.len() - 1)?;
    let path = &plan.path;
    let changed = || Failure {
        path: path.clone(),
        line: seg.lines,
        offset: 0,
        seq: Some(saved.records - 1),
        error: ChainError::HistoryChanged {
            from_seq: saved.records - 1,
            to_seq: saved.records - 1,
        },
        changed: None,
    };
    let Ok(file) = plan.source.open() else {
        return Some(changed());
    };
    match super::tail::last_line(&file, seg.len) {
        Ok(super::tail::LastLine::Complete(line))
            if crate::hex::encode(&crate::merkle::leaf_hash(&line)) == saved.last_leaf =>
        {
            None
        }
        _ => Some(changed()),
    }
}

/// The remembered ranges one run re-scans.
#[derive(Default)]
pub(super) struct RecheckPlan {
    pub ranges: Vec<SavedRange>,
    /// Lines before each re-checked range in its segment.
    pub lines_before: Vec<u64>,
    pub next_cursor: usize,
}

pub(super) fn recheck_plan(
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
pub(super) fn recheck_failure(
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
            changed: None,
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
                to_seq: from.saturating_add(range.lines.saturating_sub(1)),
            },
            changed: None,
        });
    }
    None
}

/// Whether and how a remembered log resumes: the remembered state and the
/// trust state to start from, or `None` to verify it in full.
pub(super) fn resume_from<'s, 'k>(
    saved: Option<&'s SavedLog>,
    log: &plan::LogPlan,
    opts: &'k VerifyOptions,
    same_keys: bool,
) -> Option<(&'s SavedLog, KeyState<'k>)> {
    // An authenticated run resumes only from a remembered checkpoint
    // record, scanned again, with the trust state rebuilt by replaying the
    // remembered rotations before it under today's keys: that signed
    // checkpoint must count under it, so a state with rotations left out or
    // changed cannot resume (it is verified in full instead).
    saved
        .filter(|s| same_keys && can_resume(s, log, opts))
        .filter(|s| !opts.trusted.is_empty() || s.rotations.is_empty())
        .and_then(|s| {
            let rotations: Vec<(String, String)> = s
                .rotations
                .iter()
                .map(|r| (r.note.clone(), r.new_key.clone()))
                .collect();
            match &s.resume {
                Some(point) => {
                    let keys =
                        KeyState::replay_before(&opts.trusted, &rotations, &s.origin, point.seq)
                            .ok()?;
                    resume_point_holds(s, point, &log.segments, &keys, opts).then_some((s, keys))
                }
                // Without a checkpoint there is no trust to resume.
                None if opts.trusted.is_empty() => Some((s, KeyState::new(&opts.trusted))),
                None => None,
            }
        })
}

/// The byte ranges to scan: everything, or from the resume point (or the
/// end of what was verified) on.
pub(super) fn scan_tasks(
    log: &plan::LogPlan,
    saved: Option<&SavedLog>,
    chunk_bytes: u64,
) -> Vec<(usize, u64, u64)> {
    // What to scan: everything, or from the resume point (or the end of
    // what was verified) on; bytes verified before are scanned as their own
    // ranges, so only new bytes get new range digests.
    let start = start_of(saved);
    let mut tasks: Vec<(usize, u64, u64)> = Vec::new();
    for (i, seg) in log.segments.iter().enumerate() {
        let old_end = saved.and_then(|s| s.segments.get(i)).map(|g| g.len);
        let from = match (saved, start) {
            (None, _) => 0,
            (Some(_), Some((rs, _, offset))) if i == rs => offset,
            (Some(_), Some((rs, _, _))) if i < rs => continue,
            (Some(_), Some(_)) => 0,
            (Some(_), None) => old_end.unwrap_or(0),
        };
        if saved.is_some() && start.is_none() && from == seg.len && i + 1 < log.segments.len() {
            continue;
        }
        match old_end {
            Some(end) if saved.is_some() && from < end && end < seg.len => {
                tasks.extend(
                    plan::ranges(from, end, chunk_bytes)
                        .into_iter()
                        .map(|(a, b)| (i, a, b)),
                );
                tasks.extend(
                    plan::ranges(end, seg.len, chunk_bytes)
                        .into_iter()
                        .map(|(a, b)| (i, a, b)),
                );
            }
            _ => tasks.extend(
                plan::ranges(from, seg.len, chunk_bytes)
                    .into_iter()
                    .map(|(a, b)| (i, a, b)),
            ),
        }
    }
    tasks
}

/// The remembered resume point is a checkpoint record of this log at the
/// remembered position, with the remembered seq and prev, whose root is the
/// remembered tree's and which counts under the replayed trust state.
fn resume_point_holds(
    saved: &SavedLog,
    point: &super::state::ResumePoint,
    segments: &[plan::FilePlan],
    keys: &KeyState<'_>,
    opts: &VerifyOptions,
) -> bool {
    use super::record::{KIND_CHECKPOINT, KIND_KEY_ROTATION};
    let Some(seg) = segments.get(point.segment) else {
        return false;
    };
    let Ok(file) = seg.source.open() else {
        return false;
    };
    let Some(line) = super::tail::line_at(&file, point.offset, seg.len) else {
        return false;
    };
    let Ok(rec) = super::record::parse_line(&line) else {
        return false;
    };
    let rotation = rec.kind == KIND_KEY_ROTATION.as_bytes();
    if !(rotation || rec.kind == KIND_CHECKPOINT.as_bytes())
        || rec.seq != point.seq
        || rec.origin != saved.origin.as_bytes()
        || crate::hex::encode(&rec.prev) != point.prev
    {
        return false;
    }
    let Some(body) = scan::parse_checkpoint_body(rec.body, rotation) else {
        return false;
    };
    let Ok(pre) = super::trust::precheck(
        body.note.as_bytes(),
        Some(&saved.origin),
        body.new_key.as_deref(),
        &opts.trusted,
    ) else {
        return false;
    };
    let root = hashes_from_hex(&point.tree)
        .and_then(|t| CompactRange::from_parts(0, point.seq, t).ok())
        .and_then(|r| r.root().ok());
    if root != Some(pre.claimed().root) || pre.claimed().size != point.seq {
        return false;
    }
    !keys.authenticated() || keys.judge(&pre).is_ok()
}

/// Where a resumed run starts scanning: (segment, lines before, offset) of
/// the resume point, or `None` to start after the last remembered record.
pub(super) fn start_of(saved: Option<&SavedLog>) -> Option<(usize, u64, u64)> {
    let r = saved?.resume.as_ref()?;
    Some((r.segment, r.line, r.offset))
}
