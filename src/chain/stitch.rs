//! Pass 2 of verification: stitching the scans of one log's ranges in
//! order. Checks the links across range boundaries, computes the Merkle
//! root at every checkpoint from the compact ranges, admits every
//! checkpoint and key rotation through [`super::trust`] in record order,
//! and compares the log with the auditor's checkpoints and the tree an
//! earlier incremental run verified.

use super::error::ChainError;
use super::incremental::{push_range, start_of};
use super::options::{AuditorCheckpoint, VerifyOptions};
use super::plan;
use super::record;
use super::report::{Failure, LogReport, LogStatus, VerifiedLog};
use super::scan::{self, ChunkScan, Tail};
use super::state::{
    ResumePoint, SavedLog, SavedRange, SavedRotation, SavedSegment, hashes_from_hex, hashes_to_hex,
};
use super::tail::{NextRecord, check_torn_tail};
use super::trust::KeyState;
use crate::merkle::{CompactRange, Hash};
use crate::note::{self, checkpoint::Checkpoint};
use std::path::PathBuf;

/// A tree the log must contain: an auditor's checkpoint (judged against
/// the log's trust state at its size) or the tree an earlier incremental
/// run verified (the auditor's own record, trusted as such).
#[derive(Debug, Clone)]
pub(super) struct Pin<'a> {
    pub checkpoint: Checkpoint,
    pub auditor: Option<&'a AuditorCheckpoint>,
}

/// Pass 2: joins the scans of one log's segments and ranges, in order,
/// starting from a saved state when resuming.
/// `keys` is the trust state at the start: the auditor's keys, or, when
/// resuming, the state rebuilt by replaying the remembered rotations.
pub(super) fn stitch<'k>(
    log: &plan::LogPlan,
    segments: &[Vec<(u64, u64, ChunkScan)>],
    opts: &'k VerifyOptions,
    keys: KeyState<'k>,
    pins: Vec<Pin<'k>>,
    saved: Option<&SavedLog>,
    recheck_cursor: usize,
) -> (LogReport, Option<SavedLog>) {
    let mut s = Stitch {
        pins,
        trust: keys,
        range: CompactRange::new(0),
        lines_before: 0,
        path: log.segments[0].path.clone(),
        origin: None,
        last: None,
        covered: 0,
        checkpoints: 0,
        last_checkpoint: None,
        last_is_checkpoint: false,
        segment: 0,
        resume_point: None,
    };
    let mut records_before = 0;
    if let Some(saved) = saved {
        records_before = s.resume(saved);
    }
    let start = start_of(saved);
    let mut failure = None;
    let mut segment_lines: Vec<u64> = Vec::with_capacity(segments.len());
    for (i, chunks) in segments.iter().enumerate() {
        // Lines of this segment before its first scanned byte: those
        // remembered for a segment not scanned again, those before the
        // resume point in its segment, none for a segment scanned whole.
        let remembered = saved
            .and_then(|sv| sv.segments.get(i))
            .map_or(0, |g| g.lines);
        s.lines_before = match start {
            Some((seg, line, _)) if i == seg => line,
            Some((seg, _, _)) if i > seg => 0,
            _ => remembered,
        };
        s.segment = i;
        s.path = log.segments[i].path.clone();
        let scans: Vec<&ChunkScan> = chunks.iter().map(|c| &c.2).collect();
        if let Err(f) = s.run(&scans) {
            failure = Some(f);
            break;
        }
        segment_lines.push(s.lines_before);
        let (tail, _) = segment_tail(chunks);
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
        .map_or(Tail::None, |c| s.recheck_tail(segment_tail(c)));
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
    // Authenticated only by a key given for this log's origin: keys of
    // other origins vouch for nothing here (docs/FORMAT.md §6.1).
    let authenticated = s.trust.authenticated()
        && s.origin
            .as_deref()
            .is_none_or(|o| opts.trusted.has_key_for(o));
    // Records that no checkpoint signed by a trusted key covers at all
    // are not verified against that key: anyone could have written them
    // (a log replaced by a fresh, never-signed one of the same origin).
    // An empty log (or one holding only a torn line) has nothing verified
    // either: a log cut to zero bytes is not a clean pass.
    let none_covered = s.covered == 0;
    report.status = if !authenticated || none_covered {
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
        authenticated,
        range: s.range.clone(),
    });
    let saved_out = s.origin.clone().filter(|_| opts.save_state).map(|origin| {
        let mut ranges = saved.map(|sv| sv.ranges.clone()).unwrap_or_default();
        for (i, chunks) in segments.iter().enumerate() {
            let old_end = saved.and_then(|sv| sv.segments.get(i)).map(|g| g.len);
            for (a, b, c) in chunks {
                // Bytes verified before and scanned again from the resume
                // point already have their range digests.
                if old_end.is_some_and(|end| *b <= end) {
                    continue;
                }
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
                    etag: f.etag.clone(),
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
            rotations: s
                .trust
                .rotations()
                .iter()
                .map(|(note, new_key)| SavedRotation {
                    note: note.clone(),
                    new_key: new_key.clone(),
                })
                .collect(),
            last_checkpoint: s.last_checkpoint.as_ref().map(Checkpoint::to_text),
            recheck_cursor,
            resume: s.resume_point.clone(),
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
    trust: KeyState<'k>,
    /// Compact range over all records stitched so far, from 0.
    range: CompactRange,
    /// Lines of the current segment before the current chunk.
    lines_before: u64,
    /// The current segment.
    path: PathBuf,
    /// Checkpoints the log must contain: the auditor's, and the tree an
    /// earlier incremental run verified.
    pins: Vec<Pin<'k>>,
    origin: Option<String>,
    /// (seq, leaf) of the last record stitched.
    last: Option<(u64, Hash)>,
    covered: u64,
    checkpoints: u64,
    last_checkpoint: Option<Checkpoint>,
    last_is_checkpoint: bool,
    /// Index of the current segment.
    segment: usize,
    /// The last checkpoint record stitched, for the next run to resume from.
    resume_point: Option<ResumePoint>,
}

// Failures are the cold path, returned at most once per log: their size
// does not matter.
#[allow(clippy::result_large_err)]
impl Stitch<'_> {
    /// Starts from what an earlier run verified: at its resume point (the
    /// last checkpoint record, scanned again) when it has one, else after
    /// its last record. Returns the records before the first one scanned.
    /// A torn tail that its chunk checked without the record before it (it
    /// was alone in a range of a large log, or all that was new since an
    /// incremental run's resume point) is checked here against the log's
    /// last record, as when the record is in the same chunk: a tail that
    /// cannot begin this log's next record is trailing data.
    fn recheck_tail(&self, (tail, unchecked): (Tail, Option<&[u8]>)) -> Tail {
        if let (Tail::Torn { offset, bytes }, Some(text)) = (tail, unchecked)
            && let (Some(origin), Some((seq, leaf))) = (&self.origin, self.last)
        {
            let next = NextRecord {
                origin: origin.as_bytes().to_vec(),
                seq: seq.saturating_add(1),
                prev: leaf,
            };
            if check_torn_tail(text, Some(&next)).is_err() {
                return Tail::Trailing { offset, bytes };
            }
        }
        tail
    }

    fn resume(&mut self, saved: &SavedLog) -> u64 {
        self.origin = Some(saved.origin.clone());
        if let Some(r) = &saved.resume
            && let Some(tree) = hashes_from_hex(&r.tree)
            && let Ok(range) = CompactRange::from_parts(0, r.seq, tree)
            && let Some(prev) = crate::hex::decode_lower::<32>(r.prev.as_bytes())
        {
            self.range = range;
            self.last = r.seq.checked_sub(1).map(|s| (s, prev));
            self.covered = r.covered_before;
            self.checkpoints = r.checkpoints_before;
            self.resume_point = Some(r.clone());
            return r.seq;
        }
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
        self.resume_point = saved.resume.clone();
        saved.records
    }

    fn fail_at_end(&self, offset: u64, error: ChainError) -> Failure {
        Failure {
            path: self.path.clone(),
            line: self.lines_before + 1,
            offset,
            seq: None,
            error,
            changed: None,
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
                    changed: None,
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
                    changed: None,
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
            changed: None,
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
            changed: None,
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
        if self.trust.authenticated()
            && let Err(e) = self.trust.admit(&event.pre)
        {
            return Err(self.fail(
                event.line_index,
                event.offset,
                Some(event.seq),
                e.at(event.seq),
            ));
        }
        let mut tree = self.range.clone();
        if tree.merge(event.range_before.clone()).is_ok() {
            self.resume_point = Some(ResumePoint {
                segment: self.segment,
                offset: event.offset,
                line: self.lines_before + event.line_index,
                seq: event.seq,
                prev: crate::hex::encode(&event.prev),
                tree: hashes_to_hex(tree.hashes()),
                checkpoints_before: self.checkpoints,
                covered_before: self.covered,
            });
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
        for pin in &self.pins {
            let cp = &pin.checkpoint;
            if Some(cp.origin.as_str()) != self.origin.as_deref() || cp.size != size {
                continue;
            }
            // An auditor's checkpoint counts only if it passes the trust
            // rule at this point of the log (a key retired before `size`
            // no longer vouches for anything).
            if let Some(auditor) = pin.auditor {
                self.trust
                    .judge(auditor.prechecked())
                    .map_err(|e| e.at(size))?;
            }
            if cp.root != root {
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
                changed: None,
            })
        };
        for pin in &self.pins {
            let cp = &pin.checkpoint;
            if Some(cp.origin.as_str()) != origin {
                continue;
            }
            if cp.size > records {
                if let Some(auditor) = pin.auditor
                    && let Err(e) = self.trust.judge(auditor.prechecked())
                {
                    return at_end(e.at(cp.size));
                }
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

/// What follows the last newline of a segment, with its bytes when the
/// scan could not check it against the record before it. The chunk that
/// reached the end of the file reports it, and it need not be the last
/// chunk: a tail longer than a chunk, or one that starts just before a
/// chunk boundary, leaves the chunks after it with no line of their own.
fn segment_tail(chunks: &[(u64, u64, ChunkScan)]) -> (Tail, Option<&[u8]>) {
    chunks
        .iter()
        .map(|c| (c.2.tail, c.2.unchecked_tail.as_deref()))
        .find(|t| t.0 != Tail::None)
        .unwrap_or((Tail::None, None))
}
