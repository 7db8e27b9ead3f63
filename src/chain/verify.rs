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
use super::record;
use super::scan::{self, ChunkScan, ScanContext, SignatureCheck, Tail};
use crate::merkle::{CompactRange, Hash};
use crate::note::{self, VerifierKey, checkpoint::Checkpoint};
use crate::{Error, Result};
use rayon::prelude::*;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Default size of the byte ranges a file is cut into.
pub const DEFAULT_CHUNK_BYTES: u64 = 32 << 20;

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
    note::checkpoint::parse(verified.text()).map_err(|e| format!("not a tlog-checkpoint: {e}"))
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
}

impl Default for VerifyOptions {
    fn default() -> Self {
        VerifyOptions {
            trusted: Vec::new(),
            checkpoints: Vec::new(),
            chunk_bytes: DEFAULT_CHUNK_BYTES,
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
    /// 1-based line number.
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
    pub path: PathBuf,
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
}

impl FleetReport {
    /// 0 when everything verified, 1 when any log was rejected (with
    /// `strict`, also partial or unauthenticated), 2 when any log could not
    /// be read.
    pub fn exit_code(&self, strict: bool) -> u8 {
        let mut code = 0;
        for log in &self.logs {
            let c = match log.status {
                LogStatus::Valid => 0,
                LogStatus::Invalid => 1,
                LogStatus::Partial | LogStatus::Unauthenticated => u8::from(strict),
                LogStatus::Error => 2,
            };
            code = code.max(c);
        }
        code
    }
}

/// Finds the log files named by `paths`: files as given, directories walked
/// recursively for files named `*.jsonl` (hidden entries skipped). Errors
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
        } else if kind.is_file() && path.extension().is_some_and(|e| e == "jsonl") {
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
    let sizes = snapshot_sizes(opts);
    let ctx = ScanContext {
        trusted: &opts.trusted,
        snapshot_sizes: &sizes,
    };
    // Plan: open each file once, take its size, cut it into ranges.
    let opened: Vec<std::io::Result<(std::fs::File, u64)>> = files
        .par_iter()
        .map(|p| {
            let f = std::fs::File::open(p)?;
            let len = f.metadata()?.len();
            Ok((f, len))
        })
        .collect();
    let chunk = opts.chunk_bytes.max(1 << 16);
    let mut tasks = Vec::new();
    for (i, o) in opened.iter().enumerate() {
        if let Ok((_, len)) = o {
            let n = len.div_ceil(chunk).max(1);
            for k in 0..n {
                tasks.push((i, k * chunk, ((k + 1) * chunk).min(*len)));
            }
        }
    }
    let scans: Vec<(usize, std::io::Result<ChunkScan>)> = tasks
        .par_iter()
        .map(|&(i, start, end)| {
            let result = match &opened[i] {
                Ok((file, len)) => scan::scan_file_chunk(file, start, end, *len, &ctx),
                Err(_) => unreachable_io(),
            };
            (i, result)
        })
        .collect();
    let mut per_file: Vec<Vec<ChunkScan>> = (0..files.len()).map(|_| Vec::new()).collect();
    let mut io_errors: Vec<Option<String>> = vec![None; files.len()];
    for (i, o) in opened.iter().enumerate() {
        if let Err(e) = o {
            io_errors[i] = Some(e.to_string());
        }
    }
    for (i, result) in scans {
        match result {
            Ok(s) => per_file[i].push(s),
            Err(e) => io_errors[i] = Some(e.to_string()),
        }
    }
    let mut logs: Vec<LogReport> = per_file
        .into_par_iter()
        .zip(io_errors.into_par_iter())
        .enumerate()
        .map(|(i, (chunks, err))| {
            let bytes = opened[i].as_ref().map(|(_, l)| *l).unwrap_or(0);
            match err {
                Some(message) => error_report(&files[i], bytes, message),
                None => stitch(&files[i], bytes, &chunks, opts),
            }
        })
        .collect();
    add_missing_logs(&mut logs, opts);
    FleetReport { logs }
}

fn unreachable_io() -> std::io::Result<ChunkScan> {
    Err(std::io::Error::other("file could not be opened"))
}

/// Verifies a log held in memory (used by tests, fuzzing and tools that
/// already hold the bytes).
pub fn verify_bytes(name: &Path, bytes: &[u8], opts: &VerifyOptions) -> LogReport {
    let sizes = snapshot_sizes(opts);
    let ctx = ScanContext {
        trusted: &opts.trusted,
        snapshot_sizes: &sizes,
    };
    let scan = scan::scan_bytes(bytes, &ctx);
    let mut report = stitch(name, bytes.len() as u64, std::slice::from_ref(&scan), opts);
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
            origin: Some(origin.clone()),
            status: LogStatus::Invalid,
            bytes: 0,
            records: 0,
            covered: 0,
            checkpoints: 0,
            failure: Some(Failure {
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
        });
    }
}

/// Per-log trust while stitching: keys trusted now, and keys retired by a
/// rotation.
struct Trust {
    current: Vec<VerifierKey>,
    authenticated: bool,
}

impl Trust {
    fn is_current(&self, name: &str, id: u32) -> bool {
        self.current
            .iter()
            .any(|k| k.name() == name && k.key_id() == id)
    }
}

/// Pass 2: joins the chunk scans of one file, in order.
fn stitch(path: &Path, bytes: u64, chunks: &[ChunkScan], opts: &VerifyOptions) -> LogReport {
    let mut s = Stitch {
        trust: Trust {
            current: opts.trusted.clone(),
            authenticated: !opts.trusted.is_empty(),
        },
        range: CompactRange::new(0),
        lines_before: 0,
        origin: None,
        last: None,
        covered: 0,
        checkpoints: 0,
        last_checkpoint: None,
        last_is_checkpoint: false,
    };
    let failure = s.run(chunks, opts).err();
    let records: u64 = chunks.iter().map(|c| c.lines).sum();
    let tail = chunks.last().map_or(Tail::None, |c| c.tail);
    let mut report = LogReport {
        path: path.to_path_buf(),
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
    };
    let failure = failure
        .or_else(|| s.check_auditor_tail(records, opts))
        .or(match tail {
            Tail::Trailing { offset, bytes } => Some(Failure {
                line: records + 1,
                offset,
                seq: None,
                error: ChainError::TrailingData { bytes },
            }),
            _ => None,
        });
    if let Some(f) = failure {
        report.status = LogStatus::Invalid;
        report.failure = Some(f);
        return report;
    }
    if let Tail::Torn { bytes, .. } = tail {
        report.torn_tail = Some(bytes);
    }
    let fully_covered = records == s.covered || (records == s.covered + 1 && s.last_is_checkpoint);
    report.status = if !s.trust.authenticated {
        LogStatus::Unauthenticated
    } else if report.torn_tail.is_some() || !fully_covered {
        LogStatus::Partial
    } else {
        LogStatus::Valid
    };
    report.verified = Some(VerifiedLog {
        origin: s.origin.clone(),
        records,
        covered: s.covered,
        root: s
            .range
            .root()
            .unwrap_or_else(|_| crate::merkle::empty_root()),
        last_checkpoint: s.last_checkpoint.clone(),
        authenticated: s.trust.authenticated,
    });
    report
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

struct Stitch {
    trust: Trust,
    /// Compact range over all records stitched so far, from 0.
    range: CompactRange,
    lines_before: u64,
    origin: Option<String>,
    /// (seq, leaf) of the last record stitched.
    last: Option<(u64, Hash)>,
    covered: u64,
    checkpoints: u64,
    last_checkpoint: Option<Checkpoint>,
    last_is_checkpoint: bool,
}

impl Stitch {
    fn run(
        &mut self,
        chunks: &[ChunkScan],
        opts: &VerifyOptions,
    ) -> std::result::Result<(), Failure> {
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
                            self.auditor_snapshot(snap, opts)?;
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
                    line: self.lines_before + f.line_index + 1,
                    offset: f.offset,
                    seq: f.seq,
                    error,
                });
            }
            if chunk.first.is_some() {
                let end = self.range.end();
                self.range.merge(chunk.range.clone()).map_err(|_| Failure {
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
            } => match note::open(text.as_bytes(), &self.trust.current) {
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
            self.trust.current.retain(|k| {
                !signed_by
                    .iter()
                    .any(|(n, id)| k.name() == n && k.key_id() == *id)
            });
            self.trust.current.push(new_key.clone());
        }
        self.covered = event.checkpoint.size;
        self.checkpoints += 1;
        self.last_checkpoint = Some(event.checkpoint.clone());
        Ok(())
    }

    fn auditor_snapshot(
        &self,
        snap: &scan::SizeSnapshot,
        opts: &VerifyOptions,
    ) -> std::result::Result<(), Failure> {
        let Some(root) = self.root_with(&snap.range_before) else {
            return Ok(());
        };
        self.compare_auditor(snap.size, root, opts)
            .map_err(|error| self.fail(snap.line_index, snap.offset, Some(snap.size), error))
    }

    fn compare_auditor(
        &self,
        size: u64,
        root: Hash,
        opts: &VerifyOptions,
    ) -> std::result::Result<(), ChainError> {
        for c in &opts.checkpoints {
            let cp = &c.checkpoint;
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
    fn check_auditor_tail(&self, records: u64, opts: &VerifyOptions) -> Option<Failure> {
        let origin = self.origin.as_deref();
        let at_end = |error| {
            Some(Failure {
                line: records + 1,
                offset: 0,
                seq: None,
                error,
            })
        };
        for c in &opts.checkpoints {
            let cp = &c.checkpoint;
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
                if let Err(e) = self.compare_auditor(records, root, opts) {
                    return at_end(e);
                }
            }
        }
        None
    }
}
