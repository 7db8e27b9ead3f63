//! Evidence receipts: one self-contained JSON document per record that
//! verifies offline, years later, with only the log's public key (and TSA
//! roots for time-stamp anchors). docs/FORMAT.md §10 is the format.
//!
//! A receipt holds the record line (or only its leaf hash), an RFC 6962
//! inclusion proof, the signed checkpoint it leads to, and every anchor of
//! that checkpoint found in the log.
//!
//! What [`verify`] checks: the record line parses and has the receipt's seq
//! and origin and its leaf hash is the recorded one (and, with a line given
//! by the caller, that it is that line); the checkpoint is signed by a
//! trusted key; the proof leads from the leaf to the checkpoint's root; and
//! each anchor is bound to this exact checkpoint (its note's SHA-256).
//!
//! What is not checked, deliberately: anything online. WORM anchor
//! descriptors (S3 bucket/key/version, dir path) are locators: reported,
//! checked for form and binding, but only `vouch anchor verify` fetches the
//! object and checks its lock. A receipt with no anchor is "signed, not
//! anchored", never complete.

use crate::anchor::record::{AnchorEntry, scan_log, sha256_hex};
use crate::chain::record;
use crate::merkle::{self, Hash};
use crate::note::checkpoint::Checkpoint;
use crate::{Error, Result};
use base64::Engine;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The `format` member of every receipt.
pub const RECEIPT_FORMAT: &str = "vouch-receipt/1";
/// Largest receipt file read.
pub const MAX_RECEIPT_BYTES: u64 = 4 << 20;
/// Most proof hashes accepted (a tree of 2^64 leaves needs 64).
pub const MAX_PROOF_HASHES: usize = 64;
/// Most anchors in one receipt.
pub const MAX_ANCHORS: usize = 64;

/// A receipt as written (docs/FORMAT.md §10).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Receipt {
    pub format: String,
    pub origin: String,
    pub seq: u64,
    /// The record line without its newline; absent in a hash-only receipt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record: Option<String>,
    /// Hex RFC 6962 leaf hash of the record line.
    pub leaf_hash: String,
    /// The inclusion proof: tree size and base64 audit path hashes.
    pub proof: ReceiptProof,
    /// The signed checkpoint note, verbatim.
    pub checkpoint: String,
    /// Anchors of exactly this checkpoint, as recorded in `anchor` records.
    pub anchors: Vec<ReceiptAnchor>,
}

/// The inclusion proof inside a receipt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReceiptProof {
    pub tree_size: u64,
    pub hashes: Vec<String>,
}

/// One anchor of the receipt's checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReceiptAnchor {
    /// The seq of the `anchor` record it came from.
    pub record_seq: u64,
    /// SHA-256 (hex) of the anchored note: must be the receipt's checkpoint.
    pub note_sha256: String,
    /// The target descriptor, exactly as in the anchor record.
    pub target: AnchorEntry,
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
    #[error("unsupported receipt format {format:?} (this vouch reads {RECEIPT_FORMAT})")]
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
    #[error("anchor {index} is for another checkpoint (note sha256 {found})")]
    AnchorMismatch { index: usize, found: String },
    #[error("anchor {index}: time-stamp token: {problem}")]
    Timestamp {
        index: usize,
        problem: crate::anchor::timestamp::TokenProblem,
    },
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
            ReceiptError::BadCheckpoint(e) => match e {
                CheckpointFailure::BadSignature { .. } => "bad_signature",
                CheckpointFailure::UnknownKey => "unknown_key",
                CheckpointFailure::Malformed => "bad_checkpoint",
            },
            ReceiptError::CheckpointMismatch { .. } => "bad_checkpoint",
            ReceiptError::IndexOutOfRange { .. } => "index_out_of_range",
            ReceiptError::Inclusion => "inclusion_failed",
            ReceiptError::AnchorMismatch { .. } => "anchor_mismatch",
            ReceiptError::Timestamp { problem, .. } => problem.code(),
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

/// Builds a receipt for record `seq`. The proof leads to the latest
/// anchored checkpoint that covers the record, or, when none is anchored,
/// to the latest checkpoint that covers it (a "signed, not anchored"
/// receipt). With `include_record` false, only the leaf hash is kept.
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
    // Candidate checkpoints covering seq: anchored ones first, latest first.
    let mut anchored: Vec<(u64, String, Vec<ReceiptAnchor>)> = Vec::new();
    for found in &scan.anchors {
        let Ok(body) = &found.body else { continue };
        if body.size <= seq || body.size > records || body.origin != origin {
            continue;
        }
        let entries = body.anchors.iter().map(|a| ReceiptAnchor {
            record_seq: found.seq,
            note_sha256: body.note_sha256.clone(),
            target: a.clone(),
        });
        match anchored.iter_mut().find(|(_, n, _)| *n == body.note) {
            Some((_, _, list)) => list.extend(entries),
            None => anchored.push((body.size, body.note.clone(), entries.collect())),
        }
    }
    let chosen = match anchored.into_iter().max_by_key(|(size, _, _)| *size) {
        Some(c) => c,
        None => {
            let covered = scan.last_checkpoint.as_ref().map_or(0, |c| c.0);
            let Some((size, note)) = scan.last_checkpoint.clone().filter(|(size, _)| *size > seq)
            else {
                return Err(state(LogStateProblem::NotCovered { seq, covered }));
            };
            (size, note, Vec::new())
        }
    };
    let (size, note, anchors) = chosen;
    let ranges =
        merkle::inclusion_ranges(seq, size).map_err(|_| crate::chain::read::changed(path))?;
    let built = crate::chain::read::build_proof(
        path,
        &crate::chain::VerifyOptions::default(),
        ranges,
        Some(seq),
    )?;
    let hashes = built.hashes;
    let line = built
        .line
        .ok_or_else(|| crate::chain::read::changed(path))?;
    let b64 = base64::engine::general_purpose::STANDARD;
    Ok(Receipt {
        format: RECEIPT_FORMAT.to_owned(),
        origin,
        seq,
        record: include_record.then(|| String::from_utf8_lossy(&line).into_owned()),
        leaf_hash: crate::hex::encode(&merkle::leaf_hash(&line)),
        proof: ReceiptProof {
            tree_size: size,
            hashes: hashes.iter().map(|h| b64.encode(h)).collect(),
        },
        checkpoint: note,
        anchors,
    })
}

/// Parses a receipt file's bytes. A receipt is evidence: one that does
/// not parse is rejected (exit 1, `bad_receipt`), not an operational error.
pub fn parse(bytes: &[u8]) -> Result<Receipt> {
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

/// The verdict on a receipt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Record, proof and signature verified, and at least one anchor is
    /// bound to the checkpoint.
    Complete,
    /// Record, proof and signature verified; no anchor.
    SignedNotAnchored,
    /// Something failed (see the pieces).
    Rejected,
}

impl Verdict {
    pub fn as_str(&self) -> &'static str {
        match self {
            Verdict::Complete => "complete",
            Verdict::SignedNotAnchored => "signed, not anchored",
            Verdict::Rejected => "rejected",
        }
    }
}

/// The result of checking one piece of a receipt.
#[derive(Debug, Clone)]
pub struct Piece {
    /// `record`, `proof`, `checkpoint`, `anchor[i]`.
    pub name: String,
    pub result: std::result::Result<String, ReceiptError>,
}

/// The report of [`verify`]: every piece and the verdict. Only [`verify`]
/// builds it.
#[derive(Debug, Clone)]
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
        self.pieces.iter().find_map(|p| p.result.as_ref().err())
    }
    /// The reason code of the verdict: the first failure's code, or
    /// `not_anchored`; None for a complete receipt.
    pub fn reason(&self) -> Option<&'static str> {
        match self.verdict {
            Verdict::Rejected => self.first_error().map(ReceiptError::code),
            Verdict::SignedNotAnchored => Some("not_anchored"),
            Verdict::Complete => None,
        }
    }
    /// 0 for a complete receipt (and, with `allow_unanchored`, for a
    /// signed one without anchors), else 1.
    pub fn exit_code(&self, allow_unanchored: bool) -> u8 {
        match self.verdict {
            Verdict::Complete => 0,
            Verdict::SignedNotAnchored if allow_unanchored => 0,
            Verdict::SignedNotAnchored | Verdict::Rejected => 1,
        }
    }
}

/// Format tag of `vouch receipt verify --format json`.
pub const RECEIPT_VERIFY_FORMAT: &str = "vouch-receipt-verify/1";

/// The `vouch receipt verify --format json` document, rendered by the binary.
#[derive(Debug, Clone, Serialize)]
pub struct ReceiptVerifyReport {
    pub format: &'static str,
    pub origin: String,
    pub seq: u64,
    pub verdict: Verdict,
    pub reason: Option<&'static str>,
    pub pieces: Vec<PieceReport>,
    /// What this offline check cannot know (docs/FORMAT.md §6.1, 7).
    pub not_checked: &'static [&'static str],
    pub exit_code: u8,
}

/// One piece of a [`ReceiptVerifyReport`].
#[derive(Debug, Clone, Serialize)]
pub struct PieceReport {
    pub piece: String,
    pub ok: bool,
    /// The failure's reason code; absent when the piece verified.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<&'static str>,
    /// What was verified, or the failure's message.
    pub detail: String,
}

impl From<&Piece> for PieceReport {
    fn from(p: &Piece) -> Self {
        match &p.result {
            Ok(d) => PieceReport {
                piece: p.name.clone(),
                ok: true,
                reason: None,
                detail: d.clone(),
            },
            Err(e) => PieceReport {
                piece: p.name.clone(),
                ok: false,
                reason: Some(e.code()),
                detail: e.to_string(),
            },
        }
    }
}

impl ReceiptVerifyReport {
    /// The document for `receipt` as [`verify`] judged it in `report`.
    pub fn new(receipt: &Receipt, report: &ReceiptReport, allow_unanchored: bool) -> Self {
        ReceiptVerifyReport {
            format: RECEIPT_VERIFY_FORMAT,
            origin: receipt.origin.clone(),
            seq: report.seq(),
            verdict: report.verdict(),
            reason: report.reason(),
            pieces: report.pieces().iter().map(PieceReport::from).collect(),
            not_checked: crate::chain::proof::OFFLINE_NOT_CHECKED,
            exit_code: report.exit_code(allow_unanchored),
        }
    }
}

/// Verifies a receipt offline; see the module docs. `given_record` is a
/// record line the caller holds (a final newline is ignored). A time-stamp
/// anchor is verified against `tsa_roots`; without them it is reported as
/// not checked and does not count as an anchor.
pub fn verify(
    receipt: &Receipt,
    trusted: &crate::chain::TrustedKeys,
    tsa_roots: Option<&crate::tsa::TrustStore>,
    given_record: Option<&[u8]>,
) -> ReceiptReport {
    let mut pieces = Vec::new();
    let mut leaf: Option<Hash> = None;
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
            return Ok(
                "hash only: the record line is not in the receipt (give --record)".to_owned(),
            );
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
        Ok(format!(
            "record {} ({}), leaf {}",
            rec.seq,
            rec.kind_str(),
            receipt.leaf_hash
        ))
    })();
    pieces.push(Piece {
        name: "record".into(),
        result: record_result,
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
        let signers: Vec<String> = verified
            .signed_by()
            .iter()
            .map(|(n, id)| format!("{n}+{id:08x}"))
            .collect();
        let text = format!(
            "{} size {} root {} signed by {}",
            cp.origin,
            cp.size,
            crate::hex::encode(&cp.root),
            signers.join(", ")
        );
        checkpoint = Some(cp);
        Ok(text)
    })();
    pieces.push(Piece {
        name: "checkpoint".into(),
        result: cp_result,
    });
    // 3. The inclusion proof.
    let proof_result = (|| {
        let b64 = base64::engine::general_purpose::STANDARD;
        if receipt.proof.hashes.len() > MAX_PROOF_HASHES {
            return Err(ReceiptError::Malformed("proof longer than 64 hashes"));
        }
        let mut hashes = Vec::with_capacity(receipt.proof.hashes.len());
        for h in &receipt.proof.hashes {
            let bytes = b64
                .decode(h)
                .map_err(|_| ReceiptError::Malformed("proof hash is not base64"))?;
            let hash: Hash = bytes
                .try_into()
                .map_err(|_| ReceiptError::Malformed("proof hash is not 32 bytes"))?;
            hashes.push(hash);
        }
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
    pieces.push(Piece {
        name: "proof".into(),
        result: proof_result,
    });
    // 4. Anchors.
    let note_sha = sha256_hex(receipt.checkpoint.as_bytes());
    let mut anchors_ok = 0usize;
    for (i, a) in receipt.anchors.iter().enumerate().take(MAX_ANCHORS) {
        let result = if a.note_sha256 != note_sha {
            Err(ReceiptError::AnchorMismatch {
                index: i,
                found: a.note_sha256.clone(),
            })
        } else if let AnchorEntry::Tsa(t) = &a.target {
            match tsa_roots {
                // Unchecked: reported, and not counted as an anchor.
                None => Ok(
                    "not checked (give --tsa-ca): a time-stamp token is present, nothing about it is verified"
                        .to_owned(),
                ),
                Some(roots) => crate::anchor::timestamp::verify(
                    t,
                    receipt.checkpoint.as_bytes(),
                    roots,
                )
                .map(|v| {
                    anchors_ok += 1;
                    // Every field shown comes from the verified token; the
                    // receipt's own copies (url, signer, ...) are not shown.
                    format!(
                        "RFC 3161 token verified: the checkpoint existed at {} (signed by {}, serial {}, policy {}, {})",
                        v.gen_time, v.signer, v.serial, v.policy, v.imprint_alg
                    )
                })
                .map_err(|problem| ReceiptError::Timestamp { index: i, problem }),
            }
        } else {
            anchors_ok += 1;
            Ok(describe_anchor(&a.target))
        };
        pieces.push(Piece {
            name: format!("anchor[{i}] {}", a.target.kind()),
            result,
        });
    }
    if receipt.anchors.len() > MAX_ANCHORS {
        pieces.push(Piece {
            name: "anchors".into(),
            result: Err(ReceiptError::Malformed("more than 64 anchors")),
        });
    }
    let failed = pieces.iter().any(|p| p.result.is_err());
    let verdict = if failed {
        Verdict::Rejected
    } else if anchors_ok == 0 {
        Verdict::SignedNotAnchored
    } else {
        Verdict::Complete
    };
    ReceiptReport {
        pieces,
        verdict,
        checkpoint,
        seq: receipt.seq,
        leaf,
    }
}

fn describe_anchor(target: &AnchorEntry) -> String {
    match target {
        AnchorEntry::Tsa(t) => format!("tsa {}", t.url),
        AnchorEntry::Dir(d) => format!(
            "locator: {} (mode {:o}, immutable {}); check online with `vouch anchor verify`",
            target.location(),
            d.mode,
            d.immutable
        ),
        AnchorEntry::S3(s) => format!(
            "locator: {} {} until {}{}; check online with `vouch anchor verify`",
            target.location(),
            s.lock_mode,
            s.retain_until,
            if s.legal_hold { ", legal hold" } else { "" }
        ),
    }
}
