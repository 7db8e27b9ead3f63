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

mod check;
mod error;
mod report;
pub use check::*;
pub use error::*;
pub use report::*;

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
