//! Pass 1 of verification: scanning one byte range of a log file.
//!
//! A log file is cut into chunks at arbitrary byte offsets; each chunk owns
//! the lines that *start* inside it, so chunks are scanned independently and
//! in parallel. A scan validates every line (canonical JSON, schema), hashes
//! it once (RFC 6962 leaf hash over the raw bytes), checks the `seq`/`prev`
//! links between consecutive lines of the chunk, folds the leaves into a
//! compact Merkle range, and records what only the stitching pass can judge:
//! the chunk's first and last record, and every checkpoint with the compact
//! range up to it. The hot path allocates nothing per record.

use super::error::{ChainError, CheckpointProblem, RecordProblem};
use super::record::{self, KIND_CHECKPOINT, KIND_KEY_ROTATION, MAX_LINE_LEN};
use super::source::ReadAt;
use super::tail::{NextRecord, check_torn_tail};
use super::trust::{self, Prechecked, TrustedKeys};
use crate::merkle::{CompactRange, Hash, leaf_hash};
use crate::note::checkpoint::Checkpoint;

/// How far past a chunk's end the first read goes, for the line crossing it.
const PAST_END: usize = 16 << 10;

/// What a chunk scan needs to know besides the bytes.
pub(crate) struct ScanContext<'a> {
    /// Keys trusted from the start (given by the auditor), indexed.
    pub trusted: &'a TrustedKeys,
    /// Tree sizes at which the compact range must be snapshotted (auditor
    /// checkpoints), sorted ascending, deduplicated.
    pub snapshot_sizes: &'a [u64],
    /// Told how many bytes each read brought in.
    pub progress: Option<&'a (dyn Fn(u64) + Sync)>,
}

/// A checkpoint or key rotation record seen in a chunk.
#[derive(Debug, Clone)]
pub(crate) struct CheckpointEvent {
    pub line_index: u64,
    pub offset: u64,
    pub seq: u64,
    pub checkpoint: Checkpoint,
    /// Compact range from the chunk's first record up to (excluding) this one.
    pub range_before: CompactRange,
    /// The record's `prev` (the leaf hash of the record before it).
    pub prev: Hash,
    /// The note, its signatures by the auditor's keys checked; judged in
    /// record order by the stitching pass ([`super::trust`]).
    pub pre: Prechecked,
}

/// A compact range snapshot at an auditor checkpoint size.
#[derive(Debug, Clone)]
pub(crate) struct SizeSnapshot {
    pub line_index: u64,
    pub offset: u64,
    pub size: u64,
    pub range_before: CompactRange,
}

/// The first record of a chunk, for checking the link to the chunk before.
#[derive(Debug, Clone)]
pub(crate) struct FirstRecord {
    pub offset: u64,
    pub seq: u64,
    pub prev: Hash,
    pub leaf: Hash,
    pub origin: String,
    /// The seq of the chunk's second record, when it parsed.
    pub next_seq: Option<u64>,
}

/// The first failure inside a chunk.
#[derive(Debug, Clone)]
pub(crate) struct ChunkFailure {
    pub line_index: u64,
    pub offset: u64,
    pub seq: Option<u64>,
    pub error: ChainError,
    /// A seq jump whose name (gap or reorder) depends on the record after
    /// it, which lies in the next chunk.
    pub unresolved_jump: bool,
}

/// What remains after the last newline of the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tail {
    None,
    /// An incomplete final record (a crash mid-append).
    Torn {
        offset: u64,
        bytes: u64,
    },
    /// Bytes that cannot be the start of a record.
    Trailing {
        offset: u64,
        bytes: u64,
    },
}

/// Everything pass 2 needs from one chunk.
#[derive(Debug, Clone)]
pub(crate) struct ChunkScan {
    /// Complete lines owned by this chunk.
    pub lines: u64,
    pub first: Option<FirstRecord>,
    pub last_seq: u64,
    pub last_leaf: Hash,
    pub last_kind_is_checkpoint: bool,
    pub range: CompactRange,
    pub checkpoints: Vec<CheckpointEvent>,
    pub snapshots: Vec<SizeSnapshot>,
    pub failure: Option<ChunkFailure>,
    pub tail: Tail,
    /// A torn tail alone in this chunk was checked without the record
    /// before it (the chunk holds none): its bytes (at most a line's
    /// limit), for the stitching pass to check against the log's last
    /// record.
    pub unchecked_tail: Option<Box<[u8]>>,
}

/// Scans the lines of `file` that start in `[start, end)`; `file_len` is the
/// size taken when verification began (bytes appended later are ignored).
pub(crate) fn scan_file_chunk(
    file: &dyn ReadAt,
    start: u64,
    end: u64,
    file_len: u64,
    ctx: &ScanContext<'_>,
) -> std::io::Result<ChunkScan> {
    scan_file_visit(file, start, end, file_len, ctx, None)
}

/// A record as the scanner passed it: valid on its own and linked to the
/// record before it in the same chunk (what only the stitching pass can
/// judge, the chunk's first link and checkpoint roots, is judged later).
pub struct Record<'a> {
    pub seq: u64,
    pub leaf: Hash,
    pub kind: &'a [u8],
    pub body: &'a [u8],
    pub line: &'a [u8],
}

/// [`scan_file_chunk`], calling `visit` with every record that passes.
pub(crate) fn scan_file_visit(
    file: &dyn ReadAt,
    start: u64,
    end: u64,
    file_len: u64,
    ctx: &ScanContext<'_>,
    visit: Option<&mut dyn FnMut(&Record<'_>)>,
) -> std::io::Result<ChunkScan> {
    let mut reader = BlockReader::new(file, file_len, ctx.progress);
    reader.soft_end = end;
    let mut scan = Scanner::new(ctx);
    scan.visit = visit;
    let mut pos = start;
    if start > 0 {
        // The line that contains byte start-1 belongs to the previous chunk.
        match reader.find_newline_from(start - 1)? {
            Some(nl) => pos = nl + 1,
            None => return Ok(scan.finish(Tail::None)),
        }
    }
    reader.seek(pos);
    let mut tail = Tail::None;
    while reader.position() < end && reader.position() < file_len {
        let offset = reader.position();
        match reader.next_line()? {
            Line::Complete(line) => scan.line(line, offset),
            Line::TooLong => {
                scan.fail_at(offset, None, ChainError::LineTooLong { max: MAX_LINE_LEN })
            }
            Line::Unterminated(bytes) => {
                tail = scan.classify_tail(bytes, offset);
                break;
            }
            Line::LongTail(bytes) => {
                tail = Tail::Trailing { offset, bytes };
                break;
            }
        }
    }
    Ok(scan.finish(tail))
}

/// Scans an in-memory log (all of it, as one chunk).
pub(crate) fn scan_bytes(bytes: &[u8], ctx: &ScanContext<'_>) -> ChunkScan {
    let mut scan = Scanner::new(ctx);
    let mut pos = 0usize;
    let mut tail = Tail::None;
    while pos < bytes.len() {
        let rest = &bytes[pos..];
        let Some(n) = memchr::memchr(b'\n', rest) else {
            tail = scan.classify_tail(rest, pos as u64);
            break;
        };
        if n <= MAX_LINE_LEN {
            scan.line(&rest[..n], pos as u64);
        } else {
            scan.fail_at(
                pos as u64,
                None,
                ChainError::LineTooLong { max: MAX_LINE_LEN },
            );
        }
        pos += n + 1;
    }
    scan.finish(tail)
}

/// Line-by-line verification state of one chunk.
struct Scanner<'c, 'a, 'v> {
    ctx: &'c ScanContext<'a>,
    visit: Option<&'v mut dyn FnMut(&Record<'_>)>,
    lines: u64,
    first: Option<FirstRecord>,
    origin: Vec<u8>,
    expected_seq: u64,
    prev_leaf: Hash,
    last_kind_is_checkpoint: bool,
    range: CompactRange,
    checkpoints: Vec<CheckpointEvent>,
    snapshots: Vec<SizeSnapshot>,
    next_snapshot: usize,
    failure: Option<ChunkFailure>,
    unchecked_tail: Option<Box<[u8]>>,
    /// A seq jump at the previous line waits for this line's seq to be named.
    jump_pending: Option<u64>,
}

impl<'c, 'a, 'v> Scanner<'c, 'a, 'v> {
    fn new(ctx: &'c ScanContext<'a>) -> Self {
        Scanner {
            ctx,
            visit: None,
            lines: 0,
            first: None,
            origin: Vec::new(),
            expected_seq: 0,
            prev_leaf: [0; 32],
            last_kind_is_checkpoint: false,
            range: CompactRange::new(0),
            checkpoints: Vec::new(),
            snapshots: Vec::new(),
            next_snapshot: 0,
            failure: None,
            unchecked_tail: None,
            jump_pending: None,
        }
    }

    /// Names the bytes after the last newline: a torn record a crashed
    /// writer of this log could have left (the rule `repair` applies), or
    /// trailing data. The next record's origin, seq and prev are known when
    /// this chunk holds a record before the tail; otherwise the tail is
    /// kept for the stitching pass, which knows the record before it.
    fn classify_tail(&mut self, bytes: &[u8], offset: u64) -> Tail {
        let next = self.first.as_ref().map(|_| NextRecord {
            origin: self.origin.clone(),
            seq: self.expected_seq,
            prev: self.prev_leaf,
        });
        let len = bytes.len() as u64;
        if !bytes.is_empty() && check_torn_tail(bytes, next.as_ref()).is_ok() {
            if next.is_none() {
                self.unchecked_tail = Some(bytes.into());
            }
            Tail::Torn { offset, bytes: len }
        } else {
            Tail::Trailing { offset, bytes: len }
        }
    }

    fn fail_at(&mut self, offset: u64, seq: Option<u64>, error: ChainError) {
        if self.failure.is_none() {
            self.failure = Some(ChunkFailure {
                line_index: self.lines,
                offset,
                seq,
                error,
                unresolved_jump: false,
            });
        }
        self.jump_pending = None;
        self.lines += 1;
    }

    fn line(&mut self, line: &[u8], offset: u64) {
        if self.failure.is_some() {
            self.after_failure(line);
            self.lines += 1;
            return;
        }
        let rec = match record::parse_line(line) {
            Ok(r) => r,
            Err(e) => return self.fail_at(offset, None, e),
        };
        let leaf = leaf_hash(line);
        match &mut self.first {
            None => {
                self.origin.extend_from_slice(rec.origin);
                self.first = Some(FirstRecord {
                    offset,
                    seq: rec.seq,
                    prev: rec.prev,
                    leaf,
                    origin: rec.origin_str().to_owned(),
                    next_seq: None,
                });
                self.range = CompactRange::new(rec.seq);
                self.next_snapshot = self.ctx.snapshot_sizes.partition_point(|&s| s < rec.seq);
            }
            Some(first) => {
                if self.lines == 1 {
                    first.next_seq = Some(rec.seq);
                }
                if rec.origin != self.origin.as_slice() {
                    let expected = String::from_utf8_lossy(&self.origin).into_owned();
                    let found = rec.origin_str().to_owned();
                    return self.fail_at(
                        offset,
                        Some(rec.seq),
                        ChainError::OriginMismatch { expected, found },
                    );
                }
                if rec.seq != self.expected_seq {
                    let expected = self.expected_seq;
                    let error = if rec.seq > expected {
                        self.fail_at(
                            offset,
                            Some(rec.seq),
                            ChainError::SeqGap {
                                expected,
                                found: rec.seq,
                            },
                        );
                        // Name it once the next line's seq is known.
                        self.jump_pending = Some(rec.seq);
                        if let Some(f) = &mut self.failure {
                            f.unresolved_jump = true;
                        }
                        return;
                    } else if leaf == self.prev_leaf {
                        ChainError::Duplicate { seq: rec.seq }
                    } else {
                        ChainError::Reordered {
                            expected,
                            found: rec.seq,
                        }
                    };
                    return self.fail_at(offset, Some(rec.seq), error);
                }
                if rec.prev != self.prev_leaf {
                    return self.fail_at(
                        offset,
                        Some(rec.seq),
                        ChainError::BrokenLink {
                            seq: rec.seq,
                            expected: self.prev_leaf,
                            found: rec.prev,
                        },
                    );
                }
            }
        }
        while let Some(&size) = self.ctx.snapshot_sizes.get(self.next_snapshot) {
            if size > rec.seq {
                break;
            }
            if size == rec.seq {
                self.snapshots.push(SizeSnapshot {
                    line_index: self.lines,
                    offset,
                    size,
                    range_before: self.range.clone(),
                });
            }
            self.next_snapshot += 1;
        }
        let kind = rec.kind;
        self.last_kind_is_checkpoint = false;
        if kind == KIND_CHECKPOINT.as_bytes() || kind == KIND_KEY_ROTATION.as_bytes() {
            match self.checkpoint(&rec, offset) {
                Ok(event) => {
                    self.checkpoints.push(event);
                    self.last_kind_is_checkpoint = true;
                }
                Err(e) => return self.fail_at(offset, Some(rec.seq), e),
            }
        }
        // Fails only past 2^64 leaves; seq is capped at 2^53.
        let _ = self.range.append(leaf);
        self.prev_leaf = leaf;
        self.expected_seq = rec.seq + 1;
        self.lines += 1;
        if let Some(visit) = self.visit.as_mut() {
            visit(&Record {
                seq: rec.seq,
                leaf,
                kind: rec.kind,
                body: rec.body,
                line,
            });
        }
    }

    /// After the first failure, lines are only counted, except that the line
    /// right after a seq jump decides whether it was a gap or a reorder.
    fn after_failure(&mut self, line: &[u8]) {
        if let Some(found) = self.jump_pending.take()
            && let Some(f) = &mut self.failure
        {
            f.unresolved_jump = false;
            if let (Ok(next), ChainError::SeqGap { expected, .. }) =
                (record::parse_line(line), &f.error)
                && next.seq < found
            {
                f.error = ChainError::Reordered {
                    expected: *expected,
                    found,
                };
            }
        }
    }

    fn checkpoint(
        &self,
        rec: &record::RecordView<'_>,
        offset: u64,
    ) -> Result<CheckpointEvent, ChainError> {
        let seq = rec.seq;
        let is_rotation = rec.kind == KIND_KEY_ROTATION.as_bytes();
        let body = parse_checkpoint_body(rec.body, is_rotation).ok_or(ChainError::BadRecord {
            problem: RecordProblem::Body,
        })?;
        let origin = std::str::from_utf8(rec.origin).map_err(|_| ChainError::BadRecord {
            problem: RecordProblem::Origin,
        })?;
        let pre = trust::precheck(
            body.note.as_bytes(),
            Some(origin),
            body.new_key.as_deref(),
            self.ctx.trusted,
        )
        .map_err(|e| e.at(seq))?;
        let checkpoint = pre.claimed().clone();
        if checkpoint.size != seq {
            return Err(ChainError::BadCheckpoint {
                seq,
                problem: CheckpointProblem::Size,
            });
        }
        Ok(CheckpointEvent {
            line_index: self.lines,
            offset,
            seq,
            checkpoint,
            range_before: self.range.clone(),
            prev: rec.prev,
            pre,
        })
    }

    fn finish(self, tail: Tail) -> ChunkScan {
        ChunkScan {
            lines: self.lines,
            last_seq: self.expected_seq.saturating_sub(1),
            last_leaf: self.prev_leaf,
            last_kind_is_checkpoint: self.last_kind_is_checkpoint,
            first: self.first,
            range: self.range,
            checkpoints: self.checkpoints,
            snapshots: self.snapshots,
            failure: self.failure,
            tail,
            unchecked_tail: self.unchecked_tail,
        }
    }
}

pub(crate) struct CheckpointBody {
    pub note: String,
    pub new_key: Option<String>,
}

/// Body of a checkpoint record: `{"note":STRING}`; of a key rotation record:
/// `{"new_key":STRING,"note":STRING}`. The body is already known to be
/// canonical JSON.
pub(crate) fn parse_checkpoint_body(body: &[u8], rotation: bool) -> Option<CheckpointBody> {
    let mut members: Vec<(Vec<u8>, std::ops::Range<usize>)> = Vec::with_capacity(2);
    crate::jcs::validate(body, record::MAX_DEPTH, |k, r| {
        if members.len() < 3 {
            members.push((k.to_vec(), r));
        }
    })
    .ok()?;
    let string = |r: &std::ops::Range<usize>| -> Option<String> {
        let raw = body.get(r.clone())?;
        if raw.len() < 2 || raw[0] != b'"' {
            return None;
        }
        crate::jcs::unescape_str(&raw[1..raw.len() - 1]).ok()
    };
    match (rotation, members.as_slice()) {
        (false, [(k, r)]) if k == b"note" => Some(CheckpointBody {
            note: string(r)?,
            new_key: None,
        }),
        (true, [(k1, r1), (k2, r2)]) if k1 == b"new_key" && k2 == b"note" => Some(CheckpointBody {
            note: string(r2)?,
            new_key: Some(string(r1)?),
        }),
        _ => None,
    }
}

enum Line<'b> {
    Complete(&'b [u8]),
    TooLong,
    Unterminated(&'b [u8]),
    /// The file ends, without a newline, in a line over the limit: this
    /// many bytes after its start (`trailing_data`, FORMAT §7).
    LongTail(u64),
}

/// Reads a file sequentially in large blocks with positioned reads, handing
/// out complete lines without copying them.
struct BlockReader<'f> {
    file: &'f dyn ReadAt,
    progress: Option<&'f (dyn Fn(u64) + Sync)>,
    file_len: u64,
    /// Where the lines to read end (a chunk's end): blocks stop a little
    /// past it, so neighbouring chunks read little twice (an object is
    /// paid for by the byte).
    soft_end: u64,
    /// The largest read ([`ReadAt::block_size`]).
    block: usize,
    buf: Vec<u8>,
    /// File offset of buf[0].
    base: u64,
    /// Valid bytes in buf.
    filled: usize,
    /// Next unread byte in buf.
    cursor: usize,
}

impl<'f> BlockReader<'f> {
    fn new(
        file: &'f dyn ReadAt,
        file_len: u64,
        progress: Option<&'f (dyn Fn(u64) + Sync)>,
    ) -> Self {
        BlockReader {
            file,
            progress,
            file_len,
            soft_end: u64::MAX,
            block: file.block_size(),
            buf: Vec::new(),
            base: 0,
            filled: 0,
            cursor: 0,
        }
    }

    fn position(&self) -> u64 {
        self.base + self.cursor as u64
    }

    fn seek(&mut self, pos: u64) {
        self.base = pos;
        self.filled = 0;
        self.cursor = 0;
    }

    /// Reads more bytes after `filled`, keeping the unread part. Returns how
    /// many bytes were added (0 at the size taken at start).
    fn refill(&mut self) -> std::io::Result<usize> {
        if self.cursor > 0 {
            self.buf.copy_within(self.cursor..self.filled, 0);
            self.base += self.cursor as u64;
            self.filled -= self.cursor;
            self.cursor = 0;
        }
        let file_pos = self.base + self.filled as u64;
        let remaining = self.file_len.saturating_sub(file_pos);
        // Large blocks, but never more than the file holds (a fleet has
        // many small files), and up to the soft end and a little past it
        // (a line crossing it); past it, steps that double (a long line).
        let step = if file_pos < self.soft_end {
            usize::try_from(self.soft_end - file_pos)
                .unwrap_or(usize::MAX)
                .saturating_add(PAST_END)
        } else {
            self.filled.max(PAST_END)
        }
        .min(self.block);
        let want = (self.filled + step).min(
            self.filled
                .saturating_add(usize::try_from(remaining).unwrap_or(usize::MAX)),
        );
        if self.buf.len() < want {
            self.buf.resize(want, 0);
        }
        let room = want - self.filled;
        if room == 0 {
            return Ok(0);
        }
        let mut got = 0;
        while got < room {
            let n = self.file.pread(
                &mut self.buf[self.filled + got..self.filled + room],
                file_pos + got as u64,
            )?;
            if n == 0 {
                break; // the file shrank while being read
            }
            got += n;
        }
        self.filled += got;
        if let Some(p) = self.progress {
            p(got as u64);
        }
        Ok(got)
    }

    fn next_line(&mut self) -> std::io::Result<Line<'_>> {
        let mut searched = 0;
        loop {
            if let Some(n) = memchr::memchr(b'\n', &self.buf[self.cursor + searched..self.filled]) {
                let len = searched + n;
                let start = self.cursor;
                self.cursor += len + 1;
                if len > MAX_LINE_LEN {
                    return Ok(Line::TooLong);
                }
                return Ok(Line::Complete(&self.buf[start..start + len]));
            }
            searched = self.filled - self.cursor;
            if searched > MAX_LINE_LEN {
                // Skip the rest of the over-long line without buffering it.
                return self.skip_long_line();
            }
            if self.refill()? == 0 {
                let start = self.cursor;
                self.cursor = self.filled;
                return Ok(Line::Unterminated(&self.buf[start..self.filled]));
            }
        }
    }

    fn skip_long_line(&mut self) -> std::io::Result<Line<'_>> {
        let start = self.position();
        loop {
            self.cursor = self.filled;
            if self.refill()? == 0 {
                return Ok(Line::LongTail(self.position() - start));
            }
            if let Some(n) = memchr::memchr(b'\n', &self.buf[self.cursor..self.filled]) {
                self.cursor += n + 1;
                return Ok(Line::TooLong);
            }
        }
    }

    /// The offset of the first newline at or after `from`, if any before the
    /// size taken at start.
    fn find_newline_from(&mut self, from: u64) -> std::io::Result<Option<u64>> {
        self.seek(from);
        loop {
            if let Some(n) = memchr::memchr(b'\n', &self.buf[self.cursor..self.filled]) {
                return Ok(Some(self.position() + n as u64));
            }
            self.cursor = self.filled;
            if self.refill()? == 0 {
                return Ok(None);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::chain::record::{NewRecord, encode, genesis_prev};
    use std::fs::File;

    /// Records of every size from a few bytes to near the line limit, in a
    /// log of several read blocks, so lines straddle block boundaries: the
    /// file reader sees what the in-memory scan sees, and breaking any one
    /// line is caught at it.
    #[test]
    fn block_reader_agrees_with_the_in_memory_scan() {
        let mut log = Vec::new();
        let mut prev = genesis_prev("example.com/blocks");
        let mut seq = 0u64;
        for len in [0usize, 1, 100, 5000, 900_000, 1_000_000, 70_000, 3] {
            for _ in 0..3 {
                let body = serde_json::json!({ "pad": "x".repeat(len), "s": seq });
                let start = log.len();
                encode(
                    &NewRecord {
                        origin: "example.com/blocks",
                        seq,
                        prev,
                        ts: "2026-12-02T00:00:00Z",
                        kind: "note",
                        body: &body,
                    },
                    &mut log,
                )
                .unwrap();
                prev = leaf_hash(&log[start..]);
                log.push(b'\n');
                seq += 1;
            }
        }
        let trusted = TrustedKeys::default();
        let ctx = ScanContext {
            trusted: &trusted,
            snapshot_sizes: &[],
            progress: None,
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.jsonl");
        let check = |bytes: &[u8]| {
            std::fs::write(&path, bytes).unwrap();
            let file = File::open(&path).unwrap();
            let len = bytes.len() as u64;
            let from_file = scan_file_chunk(&file, 0, len, len, &ctx).unwrap();
            let in_memory = scan_bytes(bytes, &ctx);
            assert_eq!(from_file.lines, in_memory.lines);
            assert_eq!(from_file.last_leaf, in_memory.last_leaf);
            assert_eq!(from_file.range, in_memory.range);
            assert_eq!(from_file.tail, in_memory.tail);
            let at = |s: &ChunkScan| s.failure.as_ref().map(|f| (f.offset, f.error.code()));
            assert_eq!(at(&from_file), at(&in_memory));
            from_file
        };
        assert!(log.len() > 2 * crate::chain::source::LOCAL_BLOCK);
        let whole = check(&log);
        assert_eq!(whole.lines, seq);
        assert!(whole.failure.is_none());
        assert_eq!(whole.last_leaf, prev);
        // One byte changed in each line: caught at that line or after it
        // (a broken link), or the last leaf differs.
        let starts: Vec<usize> = std::iter::once(0)
            .chain(memchr::memchr_iter(b'\n', &log).map(|n| n + 1))
            .filter(|&s| s < log.len())
            .collect();
        for &s in &starts {
            let mut bad = log.clone();
            let at = s + log[s..].iter().position(|&b| b == b'x').unwrap_or(2);
            bad[at] = b'y';
            let scan = check(&bad);
            match scan.failure {
                Some(f) => assert!(f.offset >= s as u64, "{s}"),
                None => assert_ne!(scan.last_leaf, prev),
            }
        }
    }
}
