//! Writing logs: append, checkpoint, key rotation and repair.
//!
//! Every write takes an exclusive lock on the log file (flock), so several
//! processes appending at once never interleave, fork or lose a record. A
//! batch of records is written with one `write` and made durable with
//! `fsync` before it is acknowledged; if the write fails, the file is cut
//! back to its previous length so the log never claims a record that was
//! not written. A crash mid-write can leave at most an incomplete final line
//! (`torn_tail`), which [`repair`] removes; [`repair`] removes nothing else.
//!
//! A log renamed away (logrotate) while a writer waits for its lock is
//! detected after locking (the path must still name the locked file) and
//! the writer starts over on the file the path names now.
//!
//! What is written is exactly what was given: bodies submitted as text go
//! through [`super::record::parse_body`], values through
//! [`crate::jcs::check_value_exact`], and kinds that vouch gives meaning to
//! ([`super::record::RESERVED_KINDS`]) are written only by the commands
//! that own them.

use super::error::ChainError;
use super::record::{self, KIND_CHECKPOINT, KIND_KEY_ROTATION, NewRecord};
use super::segments::rotated_siblings;
use super::tail::{LastLine, NextRecord, TailProblem, check_torn_tail, last_line};
use super::trust::ROTATION_EXTENSION;
use super::verify;
use crate::merkle::{CompactRange, Hash, leaf_hash};
use crate::note::{self, SignerKey, checkpoint::Checkpoint};
use crate::{Error, Result};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// Why a log cannot be written in its current state.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LogStateProblem {
    #[error(
        "the log ends with an incomplete line of {} (a crash mid-append?); run `vouch repair` first",
        crate::error::count(*bytes, "byte")
    )]
    TornTail { bytes: u64 },
    #[error("its last record is not valid ({0}); run `vouch verify`")]
    LastRecordInvalid(ChainError),
    #[error("the log's origin is {log:?} but the key is named {key:?}")]
    OriginMismatch { log: String, key: String },
    #[error("the log does not verify ({0}); refusing to sign it")]
    Invalid(ChainError),
    #[error("record {seq} does not exist (the log has {records} records)")]
    NoSuchRecord { seq: u64, records: u64 },
    #[error(
        "record {seq} is not covered by a checkpoint yet (latest covers {covered}); run `vouch checkpoint`"
    )]
    NotCovered { seq: u64, covered: u64 },
    #[error("the log ends with an incomplete line; verify it before proving")]
    Unterminated,
    #[error("the log changed while it was being read; try again")]
    ChangedWhileReading,
    #[error("the log has no records, so no origin to look up (e.g. in --from)")]
    NoOrigin,
    #[error("the path was renamed or replaced {tries} times while waiting for its lock")]
    KeepsMoving { tries: u32 },
}

fn state_error(path: &Path, problem: LogStateProblem) -> Error {
    Error::LogState {
        path: path.to_path_buf(),
        problem,
    }
}

/// A record that was written and synced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Appended {
    pub seq: u64,
    pub leaf: Hash,
}

/// A log opened for writing, holding its exclusive lock until dropped.
pub struct LockedLog {
    file: File,
    path: PathBuf,
    len: u64,
    origin: String,
    next_seq: u64,
    prev: Hash,
    /// Whether the log's last record is a `checkpoint` record (so every
    /// record before it is covered by a signed checkpoint).
    last_is_checkpoint: bool,
}

impl LockedLog {
    /// Opens (creating if missing) and locks `path` for appending records of
    /// `origin`. Reads only the last record: it trusts that the rest of the
    /// log is what `vouch verify` would accept.
    ///
    /// If the file is renamed away (logrotate) or replaced while this call
    /// waits for the lock, the lock is dropped and the file the path names
    /// now is opened instead, up to [`OPEN_TRIES`] times.
    pub fn open(path: &Path, origin: &str) -> Result<Self> {
        let file = open_locked(path, true)?;
        let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
        let mut log = LockedLog {
            file,
            path: path.to_path_buf(),
            len,
            origin: origin.to_owned(),
            next_seq: 0,
            prev: record::genesis_prev(origin),
            last_is_checkpoint: false,
        };
        if len > 0 {
            log.read_last_record()?;
        } else {
            log.continue_from_rotated_segment()?;
        }
        Ok(log)
    }

    fn read_last_record(&mut self) -> Result<()> {
        let path = &self.path;
        let line = complete_last_line(path, &self.file, self.len)?;
        let rec = record::parse_line(&line)
            .map_err(|e| state_error(path, LogStateProblem::LastRecordInvalid(e)))?;
        if rec.origin != self.origin.as_bytes() {
            return Err(state_error(
                path,
                LogStateProblem::OriginMismatch {
                    log: rec.origin_str().to_owned(),
                    key: self.origin.clone(),
                },
            ));
        }
        self.next_seq = rec.seq + 1;
        self.prev = leaf_hash(&line);
        self.last_is_checkpoint = rec.kind == record::KIND_CHECKPOINT.as_bytes();
        Ok(())
    }

    /// A new (empty) log file continues the chain of the newest segment
    /// rotated away from the same path ([`super::segments`]: a sibling
    /// named `NAME.N` or `NAME-N`, N all digits) whose last record has this
    /// origin. A segment that does not end in a complete record (a crash
    /// before the rotation left a torn one) is refused, as appending to it
    /// would be: skipping it would start the chain over.
    fn continue_from_rotated_segment(&mut self) -> Result<()> {
        let best = rotated_ends(&self.path)?
            .into_iter()
            .filter(|end| end.origin == self.origin.as_bytes())
            .max_by_key(|end| end.seq);
        if let Some(end) = best {
            self.next_seq = end.seq;
            self.prev = end.prev;
        }
        Ok(())
    }

    /// The seq the next record will get.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// Appends records (kind, body) with one write and one fsync. On failure
    /// nothing of the batch remains in the log. Refuses reserved kinds
    /// ([`record::RESERVED_KINDS`]) and values that cannot be written
    /// exactly ([`crate::jcs::check_value_exact`]) before writing anything.
    pub fn append(&mut self, records: &[(&str, &serde_json::Value)]) -> Result<Vec<Appended>> {
        check_records(records)?;
        self.append_reserved(records)
    }

    /// [`LockedLog::append`] for vouch's own writers (checkpoint, rotate,
    /// anchor), which may write the reserved kinds they own.
    pub(crate) fn append_reserved(
        &mut self,
        records: &[(&str, &serde_json::Value)],
    ) -> Result<Vec<Appended>> {
        self.append_records(records, true)
    }

    /// [`LockedLog::append_reserved`], synced or (for [`SessionWriter`],
    /// which syncs on its own thread) only written.
    fn append_records(
        &mut self,
        records: &[(&str, &serde_json::Value)],
        sync: bool,
    ) -> Result<Vec<Appended>> {
        let ts = crate::time::now_rfc3339();
        let mut buf = Vec::new();
        let mut appended = Vec::with_capacity(records.len());
        let (mut seq, mut prev) = (self.next_seq, self.prev);
        for (index, (kind, body)) in records.iter().enumerate() {
            let start = buf.len();
            record::encode(
                &NewRecord {
                    origin: &self.origin,
                    seq,
                    prev,
                    ts: &ts,
                    kind,
                    body,
                },
                &mut buf,
            )
            .map_err(|e| match e {
                record::EncodeError::Body(_) => {
                    match crate::jcs::check_value_exact(body, record::MAX_DEPTH - 1) {
                        Err(problem) => Error::Body {
                            at: BodySource::Record(index),
                            problem,
                        },
                        Ok(()) => Error::Encode { seq, problem: e },
                    }
                }
                problem => Error::Encode { seq, problem },
            })?;
            prev = leaf_hash(&buf[start..]);
            buf.push(b'\n');
            appended.push(Appended { seq, leaf: prev });
            seq += 1;
        }
        self.write_batch(&buf, sync)?;
        self.next_seq = seq;
        self.prev = prev;
        if let Some((kind, _)) = records.last() {
            self.last_is_checkpoint = *kind == record::KIND_CHECKPOINT;
        }
        Ok(appended)
    }

    fn write_batch(&mut self, buf: &[u8], sync: bool) -> Result<()> {
        if let Some(n) = failpoint_torn_bytes() {
            // Test hook: simulate a crash after writing n bytes of the batch.
            let n = n.min(buf.len());
            let _ = self
                .file
                .write_all(&buf[..n])
                .and_then(|()| self.file.sync_data());
            eprintln!("vouch: failpoint append_torn reached");
            loop {
                std::thread::park();
            }
        }
        let result = self
            .file
            .write_all(buf)
            .and_then(|()| if sync { self.file.sync_data() } else { Ok(()) });
        if let Err(e) = result {
            // Never leave a partial batch behind.
            let _ = self.file.set_len(self.len);
            let _ = self.file.sync_data();
            return Err(Error::io(&self.path, e));
        }
        self.len += buf.len() as u64;
        Ok(())
    }
}

/// `VOUCH_FAILPOINT=append_torn:N` makes the next append write only N bytes
/// and then hang, so tests can kill the process mid-write deterministically.
fn failpoint_torn_bytes() -> Option<usize> {
    std::env::var("VOUCH_FAILPOINT")
        .ok()?
        .strip_prefix("append_torn:")?
        .parse()
        .ok()
}

/// How many times [`LockedLog::open`] and [`repair`] start over when the
/// path is renamed or replaced while they wait for the lock.
pub const OPEN_TRIES: u32 = 8;

/// Opens `path` (creating it when `create`), locks it exclusively, and
/// checks that the path still names the locked file (same device and
/// inode): a file renamed away while we waited (logrotate) must not be
/// written. Starts over on the file the path names now, [`OPEN_TRIES`]
/// times at most.
fn open_locked(path: &Path, create: bool) -> Result<File> {
    use std::os::unix::fs::MetadataExt;
    for _ in 0..OPEN_TRIES {
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(create)
            .open(path)
            .map_err(|e| Error::io(path, e))?;
        failpoint_before_lock();
        file.lock().map_err(|e| Error::io(path, e))?;
        let locked = file.metadata().map_err(|e| Error::io(path, e))?;
        if !locked.is_file() {
            return Err(Error::NotARegularFile {
                path: path.to_path_buf(),
                kind: crate::fs::FileKind::of(locked.file_type()),
            });
        }
        match std::fs::metadata(path) {
            Ok(now) if now.dev() == locked.dev() && now.ino() == locked.ino() => {
                return Ok(file);
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(path, e)),
        }
        // Renamed or replaced while we waited: the lock (dropped with
        // `file`) protected another file. Start over.
    }
    Err(state_error(
        path,
        LogStateProblem::KeepsMoving { tries: OPEN_TRIES },
    ))
}

/// `VOUCH_FAILPOINT=append_before_lock:FILE` makes the first open of a log
/// stop between opening and locking it: it prints
/// `vouch: failpoint append_before_lock reached` to stderr, then waits until
/// FILE exists, so tests can rename the log at exactly that moment.
fn failpoint_before_lock() {
    use std::sync::atomic::{AtomicBool, Ordering};
    static FIRED: AtomicBool = AtomicBool::new(false);
    let Ok(spec) = std::env::var("VOUCH_FAILPOINT") else {
        return;
    };
    let Some(go) = spec.strip_prefix("append_before_lock:") else {
        return;
    };
    if FIRED.swap(true, Ordering::SeqCst) {
        return;
    }
    eprintln!("vouch: failpoint append_before_lock reached");
    while !Path::new(go).exists() {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// Where a record body came from, for error messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodySource {
    /// The BODY_JSON argument.
    Argument,
    /// A line of standard input (1-based).
    StdinLine(u64),
    /// The record at this index of a batch given to the library.
    Record(usize),
}

impl std::fmt::Display for BodySource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BodySource::Argument => f.write_str("BODY_JSON"),
            BodySource::StdinLine(n) => write!(f, "stdin line {n}"),
            BodySource::Record(i) => write!(f, "record {i} of the batch"),
        }
    }
}

/// Refuses, before anything is opened or written, records of a reserved
/// kind and bodies that cannot be written exactly.
fn check_records(records: &[(&str, &serde_json::Value)]) -> Result<()> {
    for (index, (kind, body)) in records.iter().enumerate() {
        if record::is_reserved_kind(kind) {
            return Err(Error::ReservedKind {
                kind: (*kind).to_owned(),
            });
        }
        crate::jcs::check_value_exact(body, record::MAX_DEPTH - 1).map_err(|problem| {
            Error::Body {
                at: BodySource::Record(index),
                problem,
            }
        })?;
    }
    Ok(())
}

/// Appends records to `path` as `key`'s origin (the key's name). Reserved
/// kinds and inexact values are refused before the log is opened (or
/// created).
pub fn append(
    path: &Path,
    key: &SignerKey,
    records: &[(&str, &serde_json::Value)],
) -> Result<Vec<Appended>> {
    check_records(records)?;
    let mut log = LockedLog::open(path, key.name())?;
    log.append_reserved(records)
}

/// A checkpoint that was signed.
#[derive(Debug, Clone)]
pub struct SignedCheckpoint {
    pub checkpoint: Checkpoint,
    /// The full signed note text.
    pub note: String,
    /// The seq of the checkpoint record, when one was appended.
    pub record_seq: Option<u64>,
}

/// The last line of the log file at `path` (`len` > 0 bytes), which a
/// writer continues: a torn or over-long one is refused (`vouch repair`).
/// The record each non-empty segment rotated away from `path` would be
/// continued by (its last record's origin, seq + 1 and leaf hash). A
/// segment that does not end in a complete, valid record is an error
/// naming it: whatever continues `path` cannot skip it.
fn rotated_ends(path: &Path) -> Result<Vec<NextRecord>> {
    let mut ends = Vec::new();
    for other in rotated_siblings(path) {
        let Ok(file) = crate::fs::open_regular(&other) else {
            continue;
        };
        let Ok(len) = file.metadata().map(|m| m.len()) else {
            continue;
        };
        if len == 0 {
            continue;
        }
        let line = complete_last_line(&other, &file, len)?;
        let rec = record::parse_line(&line)
            .map_err(|e| state_error(&other, LogStateProblem::LastRecordInvalid(e)))?;
        ends.push(NextRecord {
            origin: rec.origin.to_vec(),
            seq: rec.seq + 1,
            prev: leaf_hash(&line),
        });
    }
    Ok(ends)
}

/// What a file with no complete line continues: the log of the segments
/// rotated away from it when they are all of one origin (as `verify`
/// groups it, docs/FORMAT.md §12), after its newest record; else nothing
/// (the file is judged as a log of its own).
fn rotated_log_end(path: &Path) -> Result<Option<NextRecord>> {
    let ends = rotated_ends(path)?;
    let Some(first) = ends.first() else {
        return Ok(None);
    };
    if ends.iter().any(|e| e.origin != first.origin) {
        return Ok(None);
    }
    Ok(ends.into_iter().max_by_key(|e| e.seq))
}

fn complete_last_line(path: &Path, file: &std::fs::File, len: u64) -> Result<Vec<u8>> {
    match last_line(file, len).map_err(|e| Error::io(path, e))? {
        LastLine::Complete(line) => Ok(line),
        LastLine::Torn(bytes) => Err(state_error(path, LogStateProblem::TornTail { bytes })),
        LastLine::TooLong => Err(state_error(
            path,
            LogStateProblem::LastRecordInvalid(ChainError::LineTooLong {
                max: record::MAX_LINE_LEN,
            }),
        )),
    }
}

/// The tree of the locked log: from the writer's tree cache and the
/// records after its checkpoint when it holds ([`super::tree`]), else by
/// verifying the structure of every segment (links, sequence, embedded
/// checkpoint roots; signatures are not checked since the writer may not
/// hold every earlier key). Returns the compact range over all records.
fn verified_tree(log: &LockedLog, key: &SignerKey) -> Result<CompactRange> {
    if log.len > 0
        && let Some(range) =
            super::tree::cached_tree(&log.path, &log.file, log.len, &log.origin, &key.verifier())
    {
        return Ok(range);
    }
    // The tree spans every segment rotated away from this path, too.
    let mut files = rotated_siblings(&log.path);
    files.push(log.path.clone());
    let report = verify::verify_files(&files, &verify::VerifyOptions::default());
    let Some(r) = report
        .logs
        .into_iter()
        .find(|r| r.segments.contains(&log.path))
    else {
        return Err(Error::io(&log.path, std::io::Error::other("log vanished")));
    };
    if let Some(e) = r.error {
        return Err(Error::io(&log.path, std::io::Error::other(e)));
    }
    if let Some(f) = r.failure {
        return Err(state_error(&f.path, LogStateProblem::Invalid(f.error)));
    }
    if let Some(bytes) = r.torn_tail {
        return Err(state_error(&log.path, LogStateProblem::TornTail { bytes }));
    }
    if r.origin.as_deref().is_some_and(|o| o != log.origin) {
        return Err(state_error(
            &log.path,
            LogStateProblem::OriginMismatch {
                log: r.origin.unwrap_or_default(),
                key: log.origin.clone(),
            },
        ));
    }
    Ok(r.verified
        .map_or_else(|| CompactRange::new(0), |v| v.range().clone()))
}

fn range_root(range: &CompactRange) -> Hash {
    range.root().unwrap_or_else(|_| crate::merkle::empty_root())
}

fn checkpoint_text(origin: &str, size: u64, root: &Hash, extensions: Vec<String>) -> Checkpoint {
    Checkpoint {
        origin: origin.to_owned(),
        size,
        root: *root,
        extensions,
    }
}

/// Signs a checkpoint over every record of the log. With `append_record`,
/// also appends it as a `checkpoint` record (under the same lock).
pub fn checkpoint(path: &Path, key: &SignerKey, append_record: bool) -> Result<SignedCheckpoint> {
    let mut log = LockedLog::open(path, key.name())?;
    let range = verified_tree(&log, key)?;
    let (size, root) = (range.end(), range_root(&range));
    let checkpoint = checkpoint_text(key.name(), size, &root, Vec::new());
    let note = note::sign(&checkpoint.to_text(), &[key]).map_err(Error::Sign)?;
    let record_seq = if append_record {
        let body = serde_json::json!({ "note": note });
        let offset = log.len;
        let seq = log.append_reserved(&[(KIND_CHECKPOINT, &body)])?[0].seq;
        super::tree::save(&log.path, &log.file, &log.origin, offset, &range);
        Some(seq)
    } else {
        None
    };
    Ok(SignedCheckpoint {
        checkpoint,
        note,
        record_seq,
    })
}

/// Records that were appended and the checkpoint that covers them.
#[derive(Debug, Clone)]
pub struct Covered {
    pub appended: Vec<Appended>,
    pub checkpoint: SignedCheckpoint,
}

/// Appends records of vouch's own kinds and, under the same lock, a
/// `checkpoint` record signed over every record up to and including them,
/// so they are covered by a signature at once: a record after the last
/// checkpoint can be edited without breaking any link, so evidence that
/// others rely on (anchor records, stamps, drift baselines) is never left
/// uncovered. If signing or the second write fails, the records stay,
/// uncovered, and the error is returned: the log claims nothing that did
/// not happen.
pub(crate) fn append_covered(
    path: &Path,
    key: &SignerKey,
    records: &[(&str, &serde_json::Value)],
) -> Result<Covered> {
    let owned: Vec<(&str, serde_json::Value)> =
        records.iter().map(|(k, v)| (*k, (*v).clone())).collect();
    append_covered_with(path, key, |_| Ok((owned, ()))).map(|(c, ())| c)
}

/// [`append_covered`] for records that depend on the seq they will get:
/// under the log's lock, `make(next_seq)` returns the records to append
/// (and a value handed back). If `make` fails, nothing is written.
pub(crate) fn append_covered_with<'k, T>(
    path: &Path,
    key: &SignerKey,
    make: impl FnOnce(u64) -> Result<(Vec<(&'k str, serde_json::Value)>, T)>,
) -> Result<(Covered, T)> {
    let mut log = LockedLog::open(path, key.name())?;
    let mut range = verified_tree(&log, key)?;
    if range.end() != log.next_seq {
        return Err(Error::io(
            &log.path,
            std::io::Error::other("the log changed while it was read"),
        ));
    }
    let (records, made) = make(log.next_seq)?;
    let records: Vec<(&str, &serde_json::Value)> = records.iter().map(|(k, v)| (*k, v)).collect();
    let appended = log.append_reserved(&records)?;
    for a in &appended {
        range
            .append(a.leaf)
            .map_err(|_| Error::io(&log.path, std::io::Error::other("tree overflow")))?;
    }
    let (size, root) = (range.end(), range_root(&range));
    let checkpoint = checkpoint_text(key.name(), size, &root, Vec::new());
    let note = note::sign(&checkpoint.to_text(), &[key]).map_err(Error::Sign)?;
    let body = serde_json::json!({ "note": note });
    let offset = log.len;
    let seq = log.append_reserved(&[(KIND_CHECKPOINT, &body)])?[0].seq;
    super::tree::save(&log.path, &log.file, &log.origin, offset, &range);
    Ok((
        Covered {
            appended,
            checkpoint: SignedCheckpoint {
                checkpoint,
                note,
                record_seq: Some(seq),
            },
        },
        made,
    ))
}

/// Rotates the log's signing key: appends a `key_rotation` record holding a
/// checkpoint over every record so far, signed by both `old` and `new`, whose
/// extension line names `new`'s verifier key. Verifiers that trust `old`
/// then trust `new` for later checkpoints and stop trusting `old`.
pub fn rotate(path: &Path, old: &SignerKey, new: &SignerKey) -> Result<SignedCheckpoint> {
    if old.name() != new.name() {
        return Err(Error::RotationOrigin {
            old: old.name().to_owned(),
            new: new.name().to_owned(),
        });
    }
    let mut log = LockedLog::open(path, old.name())?;
    let range = verified_tree(&log, old)?;
    let (size, root) = (range.end(), range_root(&range));
    let new_text = new.verifier().to_text();
    let checkpoint = checkpoint_text(
        old.name(),
        size,
        &root,
        vec![format!("{ROTATION_EXTENSION}{new_text}")],
    );
    let note = note::sign(&checkpoint.to_text(), &[old, new]).map_err(Error::Sign)?;
    let body = serde_json::json!({ "new_key": new_text, "note": note });
    let offset = log.len;
    let seq = log.append_reserved(&[(KIND_KEY_ROTATION, &body)])?[0].seq;
    super::tree::save(&log.path, &log.file, &log.origin, offset, &range);
    Ok(SignedCheckpoint {
        checkpoint,
        note,
        record_seq: Some(seq),
    })
}

/// What `repair` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RepairOutcome {
    /// The log ends with a complete line (or is empty): nothing removed.
    NothingToDo { records_end: u64 },
    /// An incomplete final line was removed.
    RemovedTornTail {
        offset: u64,
        bytes: u64,
        removed: Vec<u8>,
    },
}

/// Removes an incomplete final line (bytes after the last newline) when,
/// and only when, it is a record torn by a crashed writer: the beginning
/// of the line the next record of this log would be (docs/FORMAT.md §7.1).
/// Anything else is refused with [`Error::NotATornRecord`] and kept:
/// it is evidence, not a crash artifact. Complete records are never
/// touched.
pub fn repair(path: &Path) -> Result<RepairOutcome> {
    let file = open_locked(path, false)?;
    let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
    // Find the last newline, reading backwards in blocks.
    let mut end = len;
    let mut cut = 0u64;
    const BLOCK: u64 = 1 << 16;
    'search: while end > 0 {
        let start = end.saturating_sub(BLOCK);
        let mut buf = vec![0u8; (end - start) as usize];
        file.read_exact_at(&mut buf, start)
            .map_err(|e| Error::io(path, e))?;
        if let Some(i) = memchr::memrchr(b'\n', &buf) {
            cut = start + i as u64 + 1;
            break 'search;
        }
        end = start;
    }
    if cut == len {
        return Ok(RepairOutcome::NothingToDo { records_end: len });
    }
    let refuse = |problem| Error::NotATornRecord {
        path: path.to_path_buf(),
        offset: cut,
        bytes: len - cut,
        problem,
    };
    if len - cut > record::MAX_LINE_LEN as u64 {
        return Err(refuse(TailProblem::TooLong));
    }
    let mut tail = vec![0u8; (len - cut) as usize];
    file.read_exact_at(&mut tail, cut)
        .map_err(|e| Error::io(path, e))?;
    let next = if cut == 0 {
        // A live file with nothing but this line continues its rotated
        // segments, as `verify` judges it.
        rotated_log_end(path)?
    } else {
        let line = match last_line(&file, cut).map_err(|e| Error::io(path, e))? {
            LastLine::Complete(l) => l,
            LastLine::Torn(_) | LastLine::TooLong => {
                return Err(state_error(
                    path,
                    LogStateProblem::LastRecordInvalid(ChainError::LineTooLong {
                        max: record::MAX_LINE_LEN,
                    }),
                ));
            }
        };
        let rec = record::parse_line(&line)
            .map_err(|e| state_error(path, LogStateProblem::LastRecordInvalid(e)))?;
        Some(NextRecord {
            origin: rec.origin.to_vec(),
            seq: rec.seq + 1,
            prev: leaf_hash(&line),
        })
    };
    check_torn_tail(&tail, next.as_ref()).map_err(refuse)?;
    let removed = tail[..tail.len().min(256)].to_vec();
    file.set_len(cut)
        .and_then(|()| file.sync_all())
        .map_err(|e| Error::io(path, e))?;
    Ok(RepairOutcome::RemovedTornTail {
        offset: cut,
        bytes: len - cut,
        removed,
    })
}

/// A writer for a long session (the MCP wrapper): it appends batches of
/// vouch's own records to one log, each batch under the log's lock (taken
/// only while it writes, so other writers may share the log) with one
/// write, and signs a checkpoint over everything when asked. It does not
/// sync: the caller syncs [`SessionWriter::sync_handle`] (on another
/// thread, once for many batches: group commit) and treats nothing as
/// durable before that. Between batches it keeps the log's Merkle tree in memory; if
/// another writer appended in the meantime (the log's last record is not
/// the one this writer wrote) the tree is rebuilt from the log, as
/// [`append_covered`] does.
pub struct SessionWriter {
    path: PathBuf,
    key: SignerKey,
    /// The log as this writer left it, unlocked between batches.
    held: Option<LockedLog>,
    range: CompactRange,
    /// The leaf of the last record this writer knows of.
    last: Option<Hash>,
    /// Records this writer appended that no checkpoint record is known to
    /// cover. Another writer's appends do not reset it: only a checkpoint
    /// record after them does (this writer's, or one that is the log's last
    /// record when this writer next takes the lock).
    uncovered: u64,
}

impl SessionWriter {
    /// Opens (creating when missing) the log at `path` for `key`'s origin,
    /// checking its structure as [`append_covered`] does.
    pub fn open(path: &Path, key: SignerKey) -> Result<SessionWriter> {
        let log = LockedLog::open(path, key.name())?;
        let range = verified_tree(&log, &key)?;
        if range.end() != log.next_seq {
            return Err(Error::io(
                &log.path,
                std::io::Error::other("the log changed while it was read"),
            ));
        }
        let _ = log.file.unlock();
        Ok(SessionWriter {
            path: path.to_path_buf(),
            last: (log.next_seq > 0).then_some(log.prev),
            key,
            range,
            uncovered: 0,
            held: Some(log),
        })
    }

    /// The log's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A handle on the file last written, for syncing it.
    pub fn sync_handle(&self) -> Option<File> {
        self.held.as_ref().and_then(|l| l.file.try_clone().ok())
    }

    /// Records this writer appended that no checkpoint is known to cover.
    pub fn uncovered(&self) -> u64 {
        self.uncovered
    }

    /// Appends `records` (kind, body) synced with one fsync; then, with
    /// `checkpoint` and anything uncovered, a `checkpoint` record signed
    /// over every record up to it. `make(next_seq)` builds the records
    /// under the lock, so bodies may name the seqs they will get. If
    /// `make` fails, nothing is written. If the records were written but
    /// the checkpoint was not, the records stay (uncovered) and the error
    /// is returned.
    pub(crate) fn append_with<T>(
        &mut self,
        checkpoint: bool,
        make: impl FnOnce(u64) -> Result<(Vec<(&'static str, serde_json::Value)>, T)>,
    ) -> Result<(Vec<Appended>, Option<u64>, T)> {
        let mut log = match self.held.take().and_then(|l| relock(l, &self.path)) {
            Some(log) => log,
            None => LockedLog::open(&self.path, self.key.name())?,
        };
        let result = self.append_locked(&mut log, checkpoint, make);
        // Unlocked but kept open: the next batch takes the lock again and
        // checks that nobody wrote in between.
        let _ = log.file.unlock();
        if result.is_ok() {
            self.held = Some(log);
        }
        result
    }

    fn append_locked<T>(
        &mut self,
        log: &mut LockedLog,
        checkpoint: bool,
        make: impl FnOnce(u64) -> Result<(Vec<(&'static str, serde_json::Value)>, T)>,
    ) -> Result<(Vec<Appended>, Option<u64>, T)> {
        let current = (log.next_seq > 0).then_some(log.prev);
        if log.next_seq != self.range.end() || current != self.last {
            // Another writer appended (or the log was rotated): start from
            // what the log holds now.
            self.range = verified_tree(log, &self.key)?;
            if self.range.end() != log.next_seq {
                return Err(Error::io(
                    &log.path,
                    std::io::Error::other("the log changed while it was read"),
                ));
            }
            self.last = current;
            // Another writer's records do not cover ours; its checkpoint
            // does, when it is the last record (nothing came after it).
            if log.last_is_checkpoint {
                self.uncovered = 0;
            }
        }
        let (records, made) = make(log.next_seq)?;
        let appended = if records.is_empty() {
            Vec::new()
        } else {
            let refs: Vec<(&str, &serde_json::Value)> =
                records.iter().map(|(k, v)| (*k, v)).collect();
            log.append_records(&refs, false)?
        };
        for a in &appended {
            self.push_leaf(a.leaf)?;
        }
        self.uncovered += appended.len() as u64;
        let mut checkpoint_seq = None;
        if checkpoint && self.uncovered > 0 {
            let (size, root) = (self.range.end(), range_root(&self.range));
            let text = checkpoint_text(self.key.name(), size, &root, Vec::new());
            let note = note::sign(&text.to_text(), &[&self.key]).map_err(Error::Sign)?;
            let body = serde_json::json!({ "note": note });
            let offset = log.len;
            let a = log.append_records(&[(KIND_CHECKPOINT, &body)], false)?[0];
            super::tree::save(&log.path, &log.file, &log.origin, offset, &self.range);
            self.push_leaf(a.leaf)?;
            self.uncovered = 0;
            checkpoint_seq = Some(a.seq);
        }
        Ok((appended, checkpoint_seq, made))
    }

    fn push_leaf(&mut self, leaf: Hash) -> Result<()> {
        self.range
            .append(leaf)
            .map_err(|_| Error::io(&self.path, std::io::Error::other("tree overflow")))?;
        self.last = Some(leaf);
        Ok(())
    }
}

/// Takes the lock of a log kept open again; `None` (lock dropped) unless
/// the path still names that file and it has the length this process left
/// it with (so nobody else wrote).
fn relock(log: LockedLog, path: &Path) -> Option<LockedLog> {
    use std::os::unix::fs::MetadataExt;
    log.file.lock().ok()?;
    let held = log.file.metadata().ok()?;
    let named = std::fs::metadata(path).ok()?;
    if held.dev() == named.dev() && held.ino() == named.ino() && held.len() == log.len {
        Some(log)
    } else {
        let _ = log.file.unlock();
        None
    }
}
