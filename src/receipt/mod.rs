//! Evidence receipts: one self-contained JSON document per record that
//! verifies offline, years later, with only the log's public key (and TSA
//! roots for time-stamp anchors). docs/FORMAT.md §10 is the format.
//!
//! A receipt holds the record line (or only its leaf hash), an RFC 6962
//! inclusion proof, the signed checkpoint it leads to, and the `anchor`
//! records of that checkpoint, each with its own inclusion proof under a
//! later signed checkpoint (bound to the first by a consistency proof), so
//! an anchor is part of the log by evidence, not by a hash alone.
//!
//! What [`verify`] checks: the record line parses and has the receipt's seq
//! and origin and its leaf hash is the recorded one (and, with a line given
//! by the caller, that it is that line); both checkpoints count under the
//! trust rule (offline: the keys given); the proofs; each anchor record is
//! an anchor of exactly this checkpoint; a time-stamp token verifies against
//! the auditor's TSA roots; and, with `--online`, each storage anchor inside
//! the auditor's targets is fetched and compared as `vouch anchor verify`
//! does ([`crate::anchor::check`]).
//!
//! What is not claimed: a storage anchor (S3, dir) checked offline is a
//! locator, reported as "anchor claimed, not checked"; the verdict is then
//! not `complete` (docs/FORMAT.md §10.1 is the lattice). Key rotations after
//! the checkpoint are not known offline.

use crate::anchor::check::{CheckContext, EntryOutcome, NotChecked};
use crate::anchor::error::AnchorError;
use crate::anchor::record::{AnchorBody, AnchorEntry, KIND_ANCHOR, scan_log, sha256_hex};
use crate::chain::record;
use crate::merkle::{self, Hash};
use crate::note::checkpoint::Checkpoint;
use crate::{Error, Result};
use base64::Engine;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::Path;

/// The `format` member of every receipt.
pub const RECEIPT_FORMAT: &str = "vouch-receipt/2";
/// Largest receipt file read.
pub const MAX_RECEIPT_BYTES: u64 = 4 << 20;
/// Most proof hashes accepted (a tree of 2^64 leaves needs 64; a
/// consistency proof at most 2 per level).
pub const MAX_PROOF_HASHES: usize = 128;
/// Most anchor records in one receipt.
pub const MAX_ANCHORS: usize = 64;

/// A receipt as written (docs/FORMAT.md §10).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Receipt {
    pub format: String,
    pub origin: String,
    pub seq: u64,
    /// The record line without its newline; absent in a hash-only receipt.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub record: Option<String>,
    /// Hex RFC 6962 leaf hash of the record line.
    pub leaf_hash: String,
    /// The inclusion proof: tree size and base64 audit path hashes.
    pub proof: ReceiptProof,
    /// The signed checkpoint note, verbatim.
    pub checkpoint: String,
    /// The `anchor` records of exactly this checkpoint, each proven into
    /// `anchor_binding.checkpoint`.
    pub anchors: Vec<ReceiptAnchor>,
    /// Present when `anchors` is not empty.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub anchor_binding: Option<AnchorBinding>,
}

/// An optional member is absent or holds a value: `null` is refused.
pub(crate) fn present<'de, D, T>(d: D) -> std::result::Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(d).map(Some)
}

/// The inclusion proof inside a receipt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReceiptProof {
    pub tree_size: u64,
    pub hashes: Vec<String>,
}

/// One `anchor` record of the receipt's checkpoint, with its inclusion
/// proof under the binding checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReceiptAnchor {
    /// The anchor record line, verbatim, without its newline.
    pub record: String,
    /// Base64 audit path of the record under `anchor_binding.checkpoint`.
    pub proof: Vec<String>,
}

/// A later checkpoint covering every anchor record, and the RFC 6962
/// consistency proof from the receipt's checkpoint to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnchorBinding {
    /// The signed checkpoint note, verbatim.
    pub checkpoint: String,
    /// Base64 consistency proof hashes.
    pub consistency: Vec<String>,
}

/// Why an anchor record inside a receipt does not bind.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnchorRecordProblem {
    #[error("is not a valid record: {0}")]
    NotARecord(crate::chain::ChainError),
    #[error("is a {kind:?} record, not an anchor record")]
    NotAnAnchor { kind: String },
    #[error("is a record of another log ({origin:?})")]
    OtherLog { origin: String },
    #[error("has seq {seq}, not below the binding checkpoint's size {size}")]
    OutOfRange { seq: u64, size: u64 },
    #[error("is not included in the binding checkpoint (the proof does not lead to its root)")]
    Inclusion,
    #[error("has a body that is not a valid anchor body")]
    BadBody,
    #[error("anchors another checkpoint (note sha256 {found})")]
    OtherCheckpoint { found: String },
    #[error("has fields that disagree with its note")]
    FieldsDisagree,
}

impl AnchorRecordProblem {
    pub fn code(&self) -> &'static str {
        match self {
            AnchorRecordProblem::NotARecord(e) => e.code(),
            AnchorRecordProblem::NotAnAnchor { .. }
            | AnchorRecordProblem::BadBody
            | AnchorRecordProblem::FieldsDisagree => "bad_anchor_record",
            AnchorRecordProblem::OtherLog { .. } => "anchor_other_log",
            AnchorRecordProblem::OutOfRange { .. } => "index_out_of_range",
            AnchorRecordProblem::Inclusion => "inclusion_failed",
            AnchorRecordProblem::OtherCheckpoint { .. } => "anchor_mismatch",
        }
    }
}

/// Why a receipt was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReceiptError {
    #[error("not a vouch receipt: {0}")]
    Malformed(&'static str),
    #[error("the record line is not a valid record: {0}")]
    BadRecord(crate::chain::ChainError),
    #[error("the record has seq {found}, origin {origin:?}; the receipt says seq {seq}")]
    RecordMismatch {
        seq: u64,
        found: u64,
        origin: String,
    },
    #[error("the record line's leaf hash is not the receipt's leaf_hash")]
    LeafMismatch,
    #[error("the given record line is not the one in the receipt")]
    GivenRecordMismatch,
    #[error("not a vouch receipt: invalid JSON or members at line {line}, column {column}")]
    Unparseable { line: usize, column: usize },
    #[error(
        "unsupported receipt format {format:?} (this vouch reads {RECEIPT_FORMAT}; make the receipt again with `vouch receipt`)"
    )]
    UnsupportedFormat { format: String },
    #[error("the checkpoint {0}")]
    BadCheckpoint(CheckpointFailure),
    #[error(
        "the checkpoint is for {found:?}, the receipt for {expected:?}, or its size differs from the proof's"
    )]
    CheckpointMismatch { expected: String, found: String },
    #[error("index {seq} is not below the tree size {size}")]
    IndexOutOfRange { seq: u64, size: u64 },
    #[error("the inclusion proof does not lead to the checkpoint's root")]
    Inclusion,
    #[error("the binding checkpoint {0}")]
    BadBinding(CheckpointFailure),
    #[error(
        "the binding checkpoint is for {found:?}, smaller than the receipt's checkpoint or of another log"
    )]
    BindingMismatch { found: String },
    #[error("the binding checkpoint is not consistent with the receipt's checkpoint")]
    Consistency,
    #[error("anchor record {index} {problem}")]
    AnchorRecord {
        index: usize,
        problem: AnchorRecordProblem,
    },
    #[error("anchor {index}: {error}")]
    Anchor { index: String, error: AnchorError },
}

impl ReceiptError {
    /// Stable reason code.
    pub fn code(&self) -> &'static str {
        match self {
            ReceiptError::Malformed(_)
            | ReceiptError::Unparseable { .. }
            | ReceiptError::UnsupportedFormat { .. } => "bad_receipt",
            ReceiptError::BadRecord(e) => e.code(),
            ReceiptError::RecordMismatch { .. } => "record_mismatch",
            ReceiptError::LeafMismatch => "leaf_mismatch",
            ReceiptError::GivenRecordMismatch => "record_mismatch",
            ReceiptError::BadCheckpoint(e) | ReceiptError::BadBinding(e) => e.code(),
            ReceiptError::CheckpointMismatch { .. } | ReceiptError::BindingMismatch { .. } => {
                "bad_checkpoint"
            }
            ReceiptError::IndexOutOfRange { .. } => "index_out_of_range",
            ReceiptError::Inclusion => "inclusion_failed",
            ReceiptError::Consistency => "consistency_failed",
            ReceiptError::AnchorRecord { problem, .. } => problem.code(),
            ReceiptError::Anchor { error, .. } => error.code(),
        }
    }
}

/// Why a receipt's checkpoint note was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckpointFailure {
    #[error("has a signature by {name}+{key_id:08x} that does not verify")]
    BadSignature { name: String, key_id: u32 },
    #[error("is not signed by a trusted key")]
    UnknownKey,
    #[error("is not a well-formed signed note")]
    Malformed,
}

impl CheckpointFailure {
    pub fn code(&self) -> &'static str {
        match self {
            CheckpointFailure::BadSignature { .. } => "bad_signature",
            CheckpointFailure::UnknownKey => "unknown_key",
            CheckpointFailure::Malformed => "bad_checkpoint",
        }
    }
}

impl From<crate::chain::trust::TrustError> for CheckpointFailure {
    fn from(e: crate::chain::trust::TrustError) -> Self {
        use crate::chain::trust::TrustError;
        match e {
            TrustError::BadSignature { key_name, key_id } => CheckpointFailure::BadSignature {
                name: key_name,
                key_id,
            },
            TrustError::UnknownKey { .. } | TrustError::NoKeys => CheckpointFailure::UnknownKey,
            TrustError::Malformed(_) => CheckpointFailure::Malformed,
        }
    }
}

fn b64() -> base64::engine::GeneralPurpose {
    base64::engine::general_purpose::STANDARD
}

/// The note of a `checkpoint` or `key_rotation` record line.
fn note_of(line: &[u8]) -> Option<String> {
    let rec = record::parse_line(line).ok()?;
    let v: serde_json::Value = serde_json::from_slice(rec.body).ok()?;
    v.get("note")?.as_str().map(str::to_owned)
}

/// Builds a receipt for record `seq`. The proof leads to the latest
/// anchored checkpoint that covers the record and whose anchor records a
/// later checkpoint covers (they are proven into the first such
/// checkpoint); when there is none, to the latest checkpoint that covers
/// the record, with no anchors (a "signed, not anchored" receipt). With
/// `include_record` false, only the leaf hash is kept.
pub fn build(path: &Path, seq: u64, include_record: bool) -> Result<Receipt> {
    let scan = scan_log(path)?;
    // Nothing is proven from a log that does not verify.
    crate::chain::read::refuse_unverified(path, &scan.report)?;
    let records = scan.records;
    let state = |problem| Error::LogState {
        path: path.to_path_buf(),
        problem,
    };
    use crate::chain::writer::LogStateProblem;
    if seq >= records {
        return Err(state(LogStateProblem::NoSuchRecord { seq, records }));
    }
    let origin = scan.origin.clone().unwrap_or_default();
    // A candidate anchored checkpoint is one of the log's own checkpoint
    // records (whose root the verifier compared with the tree), named
    // exactly by an anchor record of this origin.
    let own: std::collections::BTreeMap<u64, &str> = scan
        .checkpoints
        .iter()
        .map(|(s, sha)| (*s, sha.as_str()))
        .collect();
    let last_cp_seq = scan.checkpoints.last().map(|c| c.0);
    let mut best: Option<(u64, String, Vec<u64>)> = None;
    for found in &scan.anchors {
        let Ok(body) = &found.body else { continue };
        let covered = last_cp_seq.is_some_and(|c| c > found.seq);
        if !covered
            || body.size <= seq
            || body.origin != origin
            || own.get(&body.size) != Some(&sha256_hex(body.note.as_bytes()).as_str())
        {
            continue;
        }
        match &mut best {
            Some((size, note, list)) if *size == body.size && *note == body.note => {
                list.push(found.seq)
            }
            Some((size, _, _)) if *size >= body.size => {}
            _ => best = Some((body.size, body.note.clone(), vec![found.seq])),
        }
    }
    let (size, note, anchor_seqs) = match best {
        Some(b) => b,
        None => {
            let covered = scan.last_checkpoint.as_ref().map_or(0, |c| c.0);
            let Some((size, note)) = scan.last_checkpoint.clone().filter(|(size, _)| *size > seq)
            else {
                return Err(state(LogStateProblem::NotCovered { seq, covered }));
            };
            (size, note, Vec::new())
        }
    };
    // The binding checkpoint: the first checkpoint record after the last
    // anchor record used.
    let binding_seq = anchor_seqs
        .last()
        .and_then(|last| scan.checkpoints.iter().map(|c| c.0).find(|c| c > last));
    let changed = || crate::chain::read::changed(path);
    let mut ranges = vec![merkle::inclusion_ranges(seq, size).map_err(|_| changed())?];
    let mut keep: BTreeSet<u64> = BTreeSet::from([seq]);
    if let Some(l) = binding_seq {
        for a in &anchor_seqs {
            ranges.push(merkle::inclusion_ranges(*a, l).map_err(|_| changed())?);
            keep.insert(*a);
        }
        ranges.push(merkle::consistency_ranges(size, l).map_err(|_| changed())?);
        keep.insert(l);
    }
    let built = crate::chain::read::build_proofs(
        path,
        &crate::chain::VerifyOptions::default(),
        ranges,
        &keep,
    )?;
    let enc = |hashes: &[Hash]| hashes.iter().map(|h| b64().encode(h)).collect::<Vec<_>>();
    let line_of = |s: u64| -> Result<String> {
        let line = built.lines.get(&s).ok_or_else(changed)?;
        String::from_utf8(line.clone()).map_err(|_| changed())
    };
    let line = line_of(seq)?;
    let (anchors, anchor_binding) = match binding_seq {
        Some(l) => {
            let binding_note = note_of(line_of(l)?.as_bytes()).ok_or_else(changed)?;
            let anchors = anchor_seqs
                .iter()
                .enumerate()
                .map(|(i, a)| {
                    Ok(ReceiptAnchor {
                        record: line_of(*a)?,
                        proof: enc(&built.proofs[i + 1]),
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            let consistency = enc(built.proofs.last().ok_or_else(changed)?);
            (
                anchors,
                Some(AnchorBinding {
                    checkpoint: binding_note,
                    consistency,
                }),
            )
        }
        None => (Vec::new(), None),
    };
    Ok(Receipt {
        format: RECEIPT_FORMAT.to_owned(),
        origin,
        seq,
        leaf_hash: crate::hex::encode(&merkle::leaf_hash(line.as_bytes())),
        record: include_record.then_some(line),
        proof: ReceiptProof {
            tree_size: size,
            hashes: enc(&built.proofs[0]),
        },
        checkpoint: note,
        anchors,
        anchor_binding,
    })
}

/// Parses a receipt file's bytes. A receipt is evidence: one that does
/// not parse is rejected (exit 1, `bad_receipt`), not an operational error.
pub fn parse(bytes: &[u8]) -> Result<Receipt> {
    // The format is read first, so an older receipt gets a clear reason.
    #[derive(Deserialize)]
    struct Format {
        format: Option<serde_json::Value>,
    }
    if let Ok(Format {
        format: Some(serde_json::Value::String(f)),
    }) = serde_json::from_slice::<Format>(bytes)
        && f != RECEIPT_FORMAT
    {
        return Err(ReceiptError::UnsupportedFormat { format: f }.into());
    }
    let receipt: Receipt =
        serde_json::from_slice(bytes).map_err(|e| ReceiptError::Unparseable {
            line: e.line(),
            column: e.column(),
        })?;
    if receipt.format != RECEIPT_FORMAT {
        return Err(ReceiptError::UnsupportedFormat {
            format: receipt.format,
        }
        .into());
    }
    Ok(receipt)
}

/// The verdict on a receipt (docs/FORMAT.md §10.1), from strongest to
/// weakest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Record, proof and signature verified, and at least one anchor of
    /// the checkpoint verified: a time-stamp token against the TSA roots,
    /// or a storage object fetched online from an allowed target.
    Complete,
    /// Record, proof and signature verified; anchors are claimed (and bound
    /// to the log), but none was checked.
    AnchorNotChecked,
    /// Record, proof and signature verified; no anchor.
    SignedNotAnchored,
    /// Proof and signature verified for the leaf hash, but the record line
    /// itself was not given (a hash-only receipt without `--record`).
    RecordNotChecked,
    /// Something failed (see the pieces).
    Rejected,
}

impl Verdict {
    pub fn as_str(&self) -> &'static str {
        match self {
            Verdict::Complete => "complete",
            Verdict::AnchorNotChecked => "anchor claimed, not checked",
            Verdict::SignedNotAnchored => "signed, not anchored",
            Verdict::RecordNotChecked => "record not checked (hash only)",
            Verdict::Rejected => "rejected",
        }
    }
    /// The reason code of a verdict short of complete.
    pub fn code(&self) -> Option<&'static str> {
        match self {
            Verdict::Complete | Verdict::Rejected => None,
            Verdict::AnchorNotChecked => Some("anchor_not_checked"),
            Verdict::SignedNotAnchored => Some("not_anchored"),
            Verdict::RecordNotChecked => Some("record_not_checked"),
        }
    }
}

/// What checking one piece of a receipt established.
#[derive(Debug)]
pub enum PieceResult {
    /// Verified; the text says what, from verified bytes only.
    Verified(String),
    /// Not checked: nothing about it is claimed.
    NotChecked { code: &'static str, why: String },
    /// Rejected.
    Failed(ReceiptError),
    /// Could not be checked (a target unreachable): operational.
    Error(Error),
}

/// The result of checking one piece of a receipt.
#[derive(Debug)]
pub struct Piece {
    /// `record`, `checkpoint`, `proof`, `binding`, `anchor record N`,
    /// `anchor N.M TYPE`.
    pub name: String,
    pub result: PieceResult,
}

impl Piece {
    fn new(name: impl Into<String>, result: std::result::Result<String, ReceiptError>) -> Self {
        Piece {
            name: name.into(),
            result: match result {
                Ok(s) => PieceResult::Verified(s),
                Err(e) => PieceResult::Failed(e),
            },
        }
    }
}

/// The report of [`verify`]: every piece and the verdict. Only [`verify`]
/// builds it.
#[derive(Debug)]
pub struct ReceiptReport {
    pieces: Vec<Piece>,
    verdict: Verdict,
    checkpoint: Option<Checkpoint>,
    seq: u64,
    leaf: Option<Hash>,
}

impl ReceiptReport {
    pub fn pieces(&self) -> &[Piece] {
        &self.pieces
    }
    pub fn verdict(&self) -> Verdict {
        self.verdict
    }
    pub fn checkpoint(&self) -> Option<&Checkpoint> {
        self.checkpoint.as_ref()
    }
    pub fn seq(&self) -> u64 {
        self.seq
    }
    pub fn leaf(&self) -> Option<Hash> {
        self.leaf
    }
    /// The first failure, if any.
    pub fn first_error(&self) -> Option<&ReceiptError> {
        self.pieces.iter().find_map(|p| match &p.result {
            PieceResult::Failed(e) => Some(e),
            _ => None,
        })
    }
    /// Whether a piece could not be checked for an operational reason.
    pub fn errored(&self) -> bool {
        self.pieces
            .iter()
            .any(|p| matches!(p.result, PieceResult::Error(_)))
    }
    /// The reason code of the verdict: the first failure's code, or the
    /// verdict's own; None for a complete receipt.
    pub fn reason(&self) -> Option<&'static str> {
        match self.verdict {
            Verdict::Rejected => self.first_error().map(ReceiptError::code),
            v => v.code(),
        }
    }
    /// 0 for a complete receipt (and, with `allow_unanchored`, for a
    /// signed one whose anchors are absent or not checked); 1 for anything
    /// rejected or short of what was asked; 2 when nothing was rejected
    /// but a target could not be asked and the verdict is not complete.
    pub fn exit_code(&self, allow_unanchored: bool) -> u8 {
        match self.verdict {
            Verdict::Rejected => 1,
            Verdict::Complete => 0,
            _ if self.errored() => 2,
            Verdict::SignedNotAnchored | Verdict::AnchorNotChecked if allow_unanchored => 0,
            _ => 1,
        }
    }
}

/// Format tag of `vouch receipt verify --format json`.
pub const RECEIPT_VERIFY_FORMAT: &str = "vouch-receipt-verify/2";

/// The `vouch receipt verify --format json` document, rendered by the binary.
#[derive(Debug, Clone, Serialize)]
pub struct ReceiptVerifyReport {
    pub format: &'static str,
    /// The receipt's origin and seq; null when the file is not a receipt.
    pub origin: Option<String>,
    pub seq: Option<u64>,
    pub verdict: Verdict,
    pub reason: Option<&'static str>,
    pub pieces: Vec<PieceReport>,
    /// What this check cannot know (docs/FORMAT.md §6.1, 7).
    pub not_checked: &'static [&'static str],
    pub exit_code: u8,
}

/// One piece of a [`ReceiptVerifyReport`].
#[derive(Debug, Clone, Serialize)]
pub struct PieceReport {
    pub piece: String,
    /// `verified`, `not_checked`, `failed` or `error`.
    pub status: &'static str,
    /// The reason code; absent when the piece verified.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<&'static str>,
    /// What was verified, or why not.
    pub detail: String,
}

impl PieceResult {
    pub fn status(&self) -> &'static str {
        match self {
            PieceResult::Verified(_) => "verified",
            PieceResult::NotChecked { .. } => "not_checked",
            PieceResult::Failed(_) => "failed",
            PieceResult::Error(_) => "error",
        }
    }
    pub fn reason(&self) -> Option<&'static str> {
        match self {
            PieceResult::Verified(_) => None,
            PieceResult::NotChecked { code, .. } => Some(code),
            PieceResult::Failed(e) => Some(e.code()),
            PieceResult::Error(e) => Some(e.code()),
        }
    }
    pub fn detail(&self) -> String {
        match self {
            PieceResult::Verified(d) => d.clone(),
            PieceResult::NotChecked { why, .. } => why.clone(),
            PieceResult::Failed(e) => e.to_string(),
            PieceResult::Error(e) => e.to_string(),
        }
    }
}

impl From<&Piece> for PieceReport {
    fn from(p: &Piece) -> Self {
        PieceReport {
            piece: p.name.clone(),
            status: p.result.status(),
            reason: p.result.reason(),
            detail: p.result.detail(),
        }
    }
}

impl ReceiptVerifyReport {
    /// The document for `receipt` as [`verify`] judged it in `report`.
    pub fn new(receipt: &Receipt, report: &ReceiptReport, allow_unanchored: bool) -> Self {
        ReceiptVerifyReport {
            format: RECEIPT_VERIFY_FORMAT,
            origin: Some(receipt.origin.clone()),
            seq: Some(report.seq()),
            verdict: report.verdict(),
            reason: report.reason(),
            pieces: report.pieces().iter().map(PieceReport::from).collect(),
            not_checked: crate::chain::proof::OFFLINE_NOT_CHECKED,
            exit_code: report.exit_code(allow_unanchored),
        }
    }
}

impl ReceiptVerifyReport {
    /// The document for a file that is not a receipt this vouch reads: one
    /// failed piece, verdict `rejected`, exit 1.
    pub fn not_a_receipt(error: &ReceiptError) -> Self {
        ReceiptVerifyReport {
            format: RECEIPT_VERIFY_FORMAT,
            origin: None,
            seq: None,
            verdict: Verdict::Rejected,
            reason: Some(error.code()),
            pieces: vec![PieceReport {
                piece: "receipt".into(),
                status: "failed",
                reason: Some(error.code()),
                detail: error.to_string(),
            }],
            not_checked: crate::chain::proof::OFFLINE_NOT_CHECKED,
            exit_code: 1,
        }
    }
}

/// Reads and parses a receipt file: a file that cannot be a receipt (not
/// JSON, unknown members, another format, over [`MAX_RECEIPT_BYTES`]) is
/// evidence that fails (`Ok(Err)`); only a file that cannot be read is an
/// operational error.
pub fn load(path: &Path) -> Result<std::result::Result<Receipt, ReceiptError>> {
    let bytes = match crate::fs::read_bounded(path, MAX_RECEIPT_BYTES) {
        Ok(b) => b,
        Err(Error::TooLarge { .. }) => {
            return Ok(Err(ReceiptError::Malformed("larger than 4 MiB")));
        }
        Err(e) => return Err(e),
    };
    match parse(&bytes) {
        Ok(r) => Ok(Ok(r)),
        Err(Error::Receipt(e)) => Ok(Err(e)),
        Err(e) => Err(e),
    }
}

fn decode_hashes(list: &[String]) -> std::result::Result<Vec<Hash>, ReceiptError> {
    if list.len() > MAX_PROOF_HASHES {
        return Err(ReceiptError::Malformed("a proof longer than 128 hashes"));
    }
    list.iter()
        .map(|h| {
            let bytes = b64()
                .decode(h)
                .map_err(|_| ReceiptError::Malformed("proof hash is not base64"))?;
            bytes
                .try_into()
                .map_err(|_| ReceiptError::Malformed("proof hash is not 32 bytes"))
        })
        .collect()
}

fn signers(v: &crate::chain::trust::TrustedCheckpoint) -> String {
    v.signed_by()
        .iter()
        .map(|(n, id)| format!("{n}+{id:08x}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Verifies a receipt; see the module docs. `given_record` is a record
/// line the caller holds (a final newline is ignored). `ctx` holds the TSA
/// roots (a time-stamp anchor without them is not checked) and, for
/// `--online`, the auditor's targets.
pub fn verify(
    receipt: &Receipt,
    trusted: &crate::chain::TrustedKeys,
    ctx: &CheckContext<'_>,
    given_record: Option<&[u8]>,
) -> ReceiptReport {
    let mut pieces = Vec::new();
    let mut leaf: Option<Hash> = None;
    let mut record_checked = false;
    // 1. The record.
    let recorded_leaf = crate::hex::decode_lower::<32>(receipt.leaf_hash.as_bytes());
    let record_result = (|| {
        let recorded_leaf = recorded_leaf.ok_or(ReceiptError::Malformed("leaf_hash"))?;
        let given = given_record.map(|g| g.strip_suffix(b"\n").unwrap_or(g));
        let line: Option<&[u8]> = match (&receipt.record, given) {
            (Some(r), Some(g)) if r.as_bytes() != g => {
                return Err(ReceiptError::GivenRecordMismatch);
            }
            (Some(r), _) => Some(r.as_bytes()),
            (None, g) => g,
        };
        let Some(line) = line else {
            leaf = Some(recorded_leaf);
            return Ok(None);
        };
        let rec = record::parse_line(line).map_err(ReceiptError::BadRecord)?;
        if rec.seq != receipt.seq || rec.origin != receipt.origin.as_bytes() {
            return Err(ReceiptError::RecordMismatch {
                seq: receipt.seq,
                found: rec.seq,
                origin: rec.origin_str().to_owned(),
            });
        }
        let computed = merkle::leaf_hash(line);
        if computed != recorded_leaf {
            return Err(ReceiptError::LeafMismatch);
        }
        leaf = Some(computed);
        record_checked = true;
        Ok(Some(format!(
            "record {} ({}), leaf {}",
            rec.seq,
            rec.kind_str(),
            receipt.leaf_hash
        )))
    })();
    pieces.push(Piece {
        name: "record".into(),
        result: match record_result {
            Ok(Some(text)) => PieceResult::Verified(text),
            Ok(None) => PieceResult::NotChecked {
                code: "record_not_checked",
                why: "hash only: the record line is not in the receipt and was not given (--record); only its leaf hash is proven".into(),
            },
            Err(e) => PieceResult::Failed(e),
        },
    });
    // 2. The checkpoint signature.
    let mut checkpoint = None;
    let cp_result = (|| {
        let verified =
            crate::chain::trust::open_standalone(receipt.checkpoint.as_bytes(), None, trusted)
                .map_err(|e| ReceiptError::BadCheckpoint(e.into()))?;
        let cp = verified.checkpoint().clone();
        if cp.origin != receipt.origin || cp.size != receipt.proof.tree_size {
            return Err(ReceiptError::CheckpointMismatch {
                expected: format!("{} size {}", receipt.origin, receipt.proof.tree_size),
                found: format!("{} size {}", cp.origin, cp.size),
            });
        }
        let text = format!(
            "{} size {} root {} signed by {}",
            cp.origin,
            cp.size,
            crate::hex::encode(&cp.root),
            signers(&verified)
        );
        checkpoint = Some(cp);
        Ok(text)
    })();
    pieces.push(Piece::new("checkpoint", cp_result));
    // 3. The inclusion proof.
    let proof_result = (|| {
        let hashes = decode_hashes(&receipt.proof.hashes)?;
        if receipt.seq >= receipt.proof.tree_size {
            return Err(ReceiptError::IndexOutOfRange {
                seq: receipt.seq,
                size: receipt.proof.tree_size,
            });
        }
        let Some(cp) = &checkpoint else {
            return Err(ReceiptError::Malformed(
                "no verified checkpoint to prove against",
            ));
        };
        let leaf = leaf
            .or(recorded_leaf)
            .ok_or(ReceiptError::Malformed("leaf_hash"))?;
        merkle::verify_inclusion(&leaf, receipt.seq, cp.size, &hashes, &cp.root)
            .map_err(|_| ReceiptError::Inclusion)?;
        Ok(format!(
            "record {} is leaf {} of {} ({} hashes)",
            receipt.seq,
            receipt.seq,
            cp.size,
            hashes.len()
        ))
    })();
    let proven = proof_result.is_ok();
    pieces.push(Piece::new("proof", proof_result));
    // The record line is shown as verified only once its leaf is proven
    // into a trusted checkpoint: before that it is only self-consistent.
    if !proven && let PieceResult::Verified(_) = pieces[0].result {
        pieces[0].result = PieceResult::NotChecked {
            code: "not_proven",
            why: "the line is a well-formed record hashing to leaf_hash, but its inclusion in the log is not proven (see the proof)".into(),
        };
    }
    // 4. Anchors.
    let anchors_verified = verify_anchors(receipt, trusted, checkpoint.as_ref(), ctx, &mut pieces);
    let failed = pieces
        .iter()
        .any(|p| matches!(p.result, PieceResult::Failed(_)));
    let verdict = if failed {
        Verdict::Rejected
    } else if !record_checked {
        Verdict::RecordNotChecked
    } else if receipt.anchors.is_empty() {
        Verdict::SignedNotAnchored
    } else if anchors_verified > 0 {
        Verdict::Complete
    } else {
        Verdict::AnchorNotChecked
    };
    ReceiptReport {
        pieces,
        verdict,
        checkpoint,
        seq: receipt.seq,
        leaf,
    }
}

/// The binding checkpoint, each anchor record, and each anchor entry.
/// Returns how many entries verified.
fn verify_anchors(
    receipt: &Receipt,
    trusted: &crate::chain::TrustedKeys,
    checkpoint: Option<&Checkpoint>,
    ctx: &CheckContext<'_>,
    pieces: &mut Vec<Piece>,
) -> usize {
    if receipt.anchors.is_empty() {
        if receipt.anchor_binding.is_some() {
            pieces.push(Piece::new(
                "binding",
                Err(ReceiptError::Malformed("anchor_binding without anchors")),
            ));
        }
        return 0;
    }
    if receipt.anchors.len() > MAX_ANCHORS {
        pieces.push(Piece::new(
            "anchors",
            Err(ReceiptError::Malformed("more than 64 anchor records")),
        ));
        return 0;
    }
    // The binding checkpoint: trusted, of this log, consistent with the
    // receipt's checkpoint.
    let mut binding: Option<Checkpoint> = None;
    let binding_result = (|| {
        let b = receipt
            .anchor_binding
            .as_ref()
            .ok_or(ReceiptError::Malformed("anchors without anchor_binding"))?;
        let verified = crate::chain::trust::open_standalone(
            b.checkpoint.as_bytes(),
            Some(&receipt.origin),
            trusted,
        )
        .map_err(|e| ReceiptError::BadBinding(e.into()))?;
        let l = verified.checkpoint().clone();
        let Some(s) = checkpoint else {
            return Err(ReceiptError::Malformed(
                "no verified checkpoint to bind anchors to",
            ));
        };
        if l.origin != s.origin || l.size < s.size {
            return Err(ReceiptError::BindingMismatch {
                found: format!("{} size {}", l.origin, l.size),
            });
        }
        let proof = decode_hashes(&b.consistency)?;
        merkle::verify_consistency(s.size, l.size, &s.root, &l.root, &proof)
            .map_err(|_| ReceiptError::Consistency)?;
        let text = format!(
            "anchor records proven into {} size {} signed by {}, consistent with the checkpoint",
            l.origin,
            l.size,
            signers(&verified)
        );
        binding = Some(l);
        Ok(text)
    })();
    pieces.push(Piece::new("binding", binding_result));
    let (Some(binding), Some(cp)) = (binding, checkpoint) else {
        return 0;
    };
    let note = receipt.checkpoint.as_bytes();
    let mut verified = 0;
    for (i, a) in receipt.anchors.iter().enumerate() {
        let body = match bind_anchor_record(a, &receipt.origin, &binding, cp, note) {
            Ok((seq, body)) => {
                pieces.push(Piece::new(
                    format!("anchor record {i}"),
                    Ok(format!(
                        "record {seq} is an anchor of this checkpoint, included in the binding checkpoint"
                    )),
                ));
                body
            }
            Err(problem) => {
                pieces.push(Piece::new(
                    format!("anchor record {i}"),
                    Err(ReceiptError::AnchorRecord { index: i, problem }),
                ));
                continue;
            }
        };
        for (j, entry) in body.anchors.iter().enumerate() {
            let name = format!("anchor {i}.{j} {}", entry.kind());
            let result = match crate::anchor::check::check_entry(entry, note, cp, ctx) {
                EntryOutcome::Verified(found) => {
                    verified += 1;
                    PieceResult::Verified(describe_verified(entry, &found))
                }
                EntryOutcome::NotChecked(n) => PieceResult::NotChecked {
                    code: n.code(),
                    why: describe_unchecked(entry, n),
                },
                EntryOutcome::Rejected(error) => PieceResult::Failed(ReceiptError::Anchor {
                    index: format!("{i}.{j}"),
                    error,
                }),
                EntryOutcome::Error(e) => PieceResult::Error(e),
            };
            pieces.push(Piece { name, result });
        }
    }
    verified
}

/// The anchor record `a` is a record of `origin`, included in `binding`,
/// and anchors exactly `note` (whose verified checkpoint is `cp`).
fn bind_anchor_record(
    a: &ReceiptAnchor,
    origin: &str,
    binding: &Checkpoint,
    cp: &Checkpoint,
    note: &[u8],
) -> std::result::Result<(u64, AnchorBody), AnchorRecordProblem> {
    let line = a.record.as_bytes();
    let rec = record::parse_line(line).map_err(AnchorRecordProblem::NotARecord)?;
    if rec.origin != origin.as_bytes() {
        return Err(AnchorRecordProblem::OtherLog {
            origin: rec.origin_str().to_owned(),
        });
    }
    if rec.kind != KIND_ANCHOR.as_bytes() {
        return Err(AnchorRecordProblem::NotAnAnchor {
            kind: rec.kind_str().to_owned(),
        });
    }
    if rec.seq >= binding.size {
        return Err(AnchorRecordProblem::OutOfRange {
            seq: rec.seq,
            size: binding.size,
        });
    }
    let proof = decode_hashes(&a.proof).map_err(|_| AnchorRecordProblem::Inclusion)?;
    merkle::verify_inclusion(
        &merkle::leaf_hash(line),
        rec.seq,
        binding.size,
        &proof,
        &binding.root,
    )
    .map_err(|_| AnchorRecordProblem::Inclusion)?;
    let body: AnchorBody =
        serde_json::from_slice(rec.body).map_err(|_| AnchorRecordProblem::BadBody)?;
    if body.note.as_bytes() != note {
        return Err(AnchorRecordProblem::OtherCheckpoint {
            found: sha256_hex(body.note.as_bytes()),
        });
    }
    if body.note_sha256 != sha256_hex(note)
        || body.origin != origin
        || cp.size != body.size
        || Some(cp.root) != body.root_hash()
        || cp.origin != body.origin
    {
        return Err(AnchorRecordProblem::FieldsDisagree);
    }
    if body.anchors.is_empty() {
        return Err(AnchorRecordProblem::BadBody);
    }
    Ok((rec.seq, body))
}

fn describe_verified(entry: &AnchorEntry, found: &[(&'static str, String)]) -> String {
    let get = |k: &str| {
        found
            .iter()
            .find(|(n, _)| *n == k)
            .map_or("-", |(_, v)| v.as_str())
    };
    match entry {
        // Every field shown comes from the verified token.
        AnchorEntry::Tsa(_) => format!(
            "RFC 3161 token verified: the checkpoint existed at {} (signed by {}, serial {}, policy {}, {})",
            get("gen_time"),
            get("signer"),
            get("serial"),
            get("policy"),
            get("imprint_alg")
        ),
        AnchorEntry::S3(_) => format!(
            "fetched online from {}: the note, locked {} until {}, legal hold {}",
            entry.location(),
            get("lock_mode"),
            get("retain_until"),
            get("legal_hold")
        ),
        AnchorEntry::Dir(_) => format!(
            "read from {} (your target): the note, mode {}, immutable {}",
            get("path"),
            get("mode"),
            get("immutable")
        ),
    }
}

fn describe_unchecked(entry: &AnchorEntry, n: NotChecked) -> String {
    match entry {
        AnchorEntry::Tsa(_) => n.message().to_owned(),
        _ => format!("{} [recorded locator: {}]", n.message(), entry.location()),
    }
}
