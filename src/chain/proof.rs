//! Inclusion proofs for single records, as C2SP tlog-proof files that verify
//! offline with only the record line and the log's public key
//! (docs/FORMAT.md §5).

use super::error::ChainError;
use super::record::{self, KIND_CHECKPOINT, KIND_KEY_ROTATION};
use super::scan::parse_checkpoint_body;
use super::trust::{self, TrustedKeys};
use super::writer::LogStateProblem;
use crate::merkle::{self, Hash, leaf_hash};
use crate::note::{self, checkpoint::Checkpoint, proof::TlogProof};
use crate::{Error, Result};
use std::path::Path;

/// Why an inclusion proof was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProofError {
    #[error("not a well-formed tlog-proof")]
    Malformed,
    #[error("the record line is not a valid record: {0}")]
    BadRecordLine(ChainError),
    #[error("the record has seq {record_seq} but the proof is for index {index}")]
    IndexMismatch { record_seq: u64, index: u64 },
    #[error("the record's origin {record:?} is not the checkpoint's {checkpoint:?}")]
    OriginMismatch { record: String, checkpoint: String },
    #[error("the proof's checkpoint: {0}")]
    Checkpoint(ChainError),
    #[error("index {index} is not below the checkpoint's tree size {size}")]
    IndexOutOfRange { index: u64, size: u64 },
    #[error("the inclusion proof does not lead to the checkpoint's root")]
    Inclusion,
    #[error("the proof's sizes do not match the checkpoints (old {old}, new {new})")]
    SizeMismatch { old: u64, new: u64 },
    #[error("the newer checkpoint does not extend the older one (a fork)")]
    Inconsistent,
}

impl ProofError {
    /// Stable reason code.
    pub fn code(&self) -> &'static str {
        match self {
            ProofError::Malformed => "bad_proof",
            ProofError::BadRecordLine(e) => e.code(),
            ProofError::IndexMismatch { .. } => "index_mismatch",
            ProofError::OriginMismatch { .. } => "origin_mismatch",
            ProofError::Checkpoint(e) => e.code(),
            ProofError::IndexOutOfRange { .. } => "index_out_of_range",
            ProofError::Inclusion => "inclusion_failed",
            ProofError::SizeMismatch { .. } => "size_mismatch",
            ProofError::Inconsistent => "fork",
        }
    }
}

/// A record proven included in a checkpoint signed by a trusted key. Only
/// [`verify_inclusion_proof`] builds it.
#[derive(Debug, Clone)]
pub struct VerifiedInclusion {
    checkpoint: Checkpoint,
    index: u64,
    leaf: Hash,
    signed_by: Vec<(String, u32)>,
}

impl VerifiedInclusion {
    pub fn checkpoint(&self) -> &Checkpoint {
        &self.checkpoint
    }
    pub fn index(&self) -> u64 {
        self.index
    }
    pub fn leaf(&self) -> Hash {
        self.leaf
    }
    pub fn signed_by(&self) -> &[(String, u32)] {
        &self.signed_by
    }
}

/// The last checkpoint (or key rotation) record of a log that verifies
/// (structurally: links, canonical form, every checkpoint's root), read
/// through [`super::read`], and the number of records.
fn last_checkpoint(path: &Path) -> Result<(Option<(u64, String)>, u64)> {
    let mut last: Option<(u64, String)> = None;
    let report = super::read::read_log(path, &super::VerifyOptions::default(), &mut |r| {
        let is_rotation = r.kind == KIND_KEY_ROTATION.as_bytes();
        if (r.kind == KIND_CHECKPOINT.as_bytes() || is_rotation)
            && let Some(body) = parse_checkpoint_body(r.body, is_rotation)
        {
            last = Some((r.seq, body.note));
        }
    })?;
    super::read::refuse_unverified(path, &report)?;
    if report.torn_tail.is_some() {
        return Err(Error::LogState {
            path: path.to_path_buf(),
            problem: LogStateProblem::Unterminated,
        });
    }
    Ok((last, report.records))
}

/// Builds a tlog-proof for record `seq` against the latest checkpoint in the
/// log, which must cover it. The log is read through the validated reader
/// and refused unless it verifies (signatures are checked by whoever
/// verifies the proof); memory stays bounded whatever the log's size.
pub fn prove_inclusion(path: &Path, seq: u64) -> Result<TlogProof> {
    let (last, records) = last_checkpoint(path)?;
    if seq >= records {
        return Err(Error::LogState {
            path: path.to_path_buf(),
            problem: LogStateProblem::NoSuchRecord { seq, records },
        });
    }
    let covered = last.as_ref().map_or(0, |c| c.0);
    let Some((size, note)) = last.filter(|(size, _)| *size > seq) else {
        return Err(Error::LogState {
            path: path.to_path_buf(),
            problem: LogStateProblem::NotCovered { seq, covered },
        });
    };
    let ranges = merkle::inclusion_ranges(seq, size).map_err(|_| super::read::changed(path))?;
    let built =
        super::read::build_proof(path, &super::VerifyOptions::default(), ranges, Some(seq))?;
    // The second pass must agree with the checkpoint verified in the first.
    let root = note::parse(note.as_bytes())
        .ok()
        .and_then(|n| note::checkpoint::parse(&n.text).ok())
        .map(|c| c.root);
    let line = built.line.ok_or_else(|| super::read::changed(path))?;
    match root {
        Some(root)
            if merkle::verify_inclusion(&leaf_hash(&line), seq, size, &built.hashes, &root)
                .is_ok() => {}
        _ => return Err(super::read::changed(path)),
    }
    Ok(TlogProof {
        extra: None,
        index: seq,
        hashes: built.hashes,
        checkpoint: note,
    })
}

/// Verifies a tlog-proof for `record_line` (one record line; a final newline
/// is ignored) against `trusted` keys: the line is a valid record whose seq
/// is the proof's index and whose origin is the checkpoint's, the checkpoint
/// is signed by a trusted key, and the RFC 9162 §2.1.3.2 inclusion proof
/// leads from the line's leaf hash to the checkpoint's root. Does not check
/// the rest of the log, nor whether the key was later rotated.
pub fn verify_inclusion_proof(
    proof_text: &[u8],
    record_line: &[u8],
    trusted: &TrustedKeys,
) -> std::result::Result<VerifiedInclusion, ProofError> {
    let proof = note::proof::parse(proof_text).map_err(|_| ProofError::Malformed)?;
    let line = record_line.strip_suffix(b"\n").unwrap_or(record_line);
    let rec = record::parse_line(line).map_err(ProofError::BadRecordLine)?;
    if rec.seq != proof.index {
        return Err(ProofError::IndexMismatch {
            record_seq: rec.seq,
            index: proof.index,
        });
    }
    let trusted = trust::open_standalone(proof.checkpoint.as_bytes(), None, trusted)
        .map_err(|e| ProofError::Checkpoint(e.at(proof.index)))?;
    let checkpoint = trusted.checkpoint().clone();
    if checkpoint.origin.as_bytes() != rec.origin {
        return Err(ProofError::OriginMismatch {
            record: rec.origin_str().to_owned(),
            checkpoint: checkpoint.origin.clone(),
        });
    }
    if proof.index >= checkpoint.size {
        return Err(ProofError::IndexOutOfRange {
            index: proof.index,
            size: checkpoint.size,
        });
    }
    let leaf = leaf_hash(line);
    merkle::verify_inclusion(
        &leaf,
        proof.index,
        checkpoint.size,
        &proof.hashes,
        &checkpoint.root,
    )
    .map_err(|_| ProofError::Inclusion)?;
    Ok(VerifiedInclusion {
        checkpoint,
        index: proof.index,
        leaf,
        signed_by: trusted.signed_by().to_vec(),
    })
}

/// First line of a consistency proof file.
pub const CONSISTENCY_HEADER: &str = "vouch/consistency-proof/v1";

/// A consistency proof between two tree sizes of one log, carrying the
/// signed checkpoint of the larger one (docs/FORMAT.md §5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsistencyProof {
    pub old_size: u64,
    pub new_size: u64,
    pub hashes: Vec<Hash>,
    /// The signed checkpoint note of size `new_size`.
    pub checkpoint: String,
}

impl ConsistencyProof {
    /// The text form: header, `old N`, `new M`, base64 hashes one per line,
    /// a blank line, the signed checkpoint note.
    pub fn to_text(&self) -> String {
        use base64::Engine as _;
        let mut out = format!(
            "{CONSISTENCY_HEADER}\nold {}\nnew {}\n",
            self.old_size, self.new_size
        );
        for h in &self.hashes {
            out.push_str(&base64::engine::general_purpose::STANDARD.encode(h));
            out.push('\n');
        }
        out.push('\n');
        out.push_str(&self.checkpoint);
        out
    }

    /// Parses the text form strictly (bounded by the Merkle proof limit).
    pub fn parse(text: &[u8]) -> Option<Self> {
        use base64::Engine as _;
        let text = std::str::from_utf8(text).ok()?;
        let (head, checkpoint) = text.split_once("\n\n")?;
        let mut lines = head.split('\n');
        if lines.next()? != CONSISTENCY_HEADER {
            return None;
        }
        let number = |l: Option<&str>, tag: &str| -> Option<u64> {
            let v = l?.strip_prefix(tag)?;
            (v == "0" || !v.starts_with('0')).then_some(())?;
            v.parse().ok()
        };
        let old_size = number(lines.next(), "old ")?;
        let new_size = number(lines.next(), "new ")?;
        let mut hashes = Vec::new();
        for l in lines {
            if hashes.len() >= merkle::MAX_CONSISTENCY_PROOF_LEN {
                return None;
            }
            let bytes = base64::engine::general_purpose::STANDARD.decode(l).ok()?;
            hashes.push(<[u8; 32]>::try_from(bytes.as_slice()).ok()?);
        }
        Some(ConsistencyProof {
            old_size,
            new_size,
            hashes,
            checkpoint: checkpoint.to_owned(),
        })
    }
}

/// Builds a consistency proof from tree size `old_size` to the latest
/// checkpoint in the log, read like [`prove_inclusion`].
pub fn prove_consistency(path: &Path, old_size: u64) -> Result<ConsistencyProof> {
    let (last, _) = last_checkpoint(path)?;
    let Some((size, note)) = last else {
        return Err(Error::LogState {
            path: path.to_path_buf(),
            problem: LogStateProblem::NotCovered {
                seq: old_size,
                covered: 0,
            },
        });
    };
    if old_size > size {
        return Err(Error::LogState {
            path: path.to_path_buf(),
            problem: LogStateProblem::NotCovered {
                seq: old_size,
                covered: size,
            },
        });
    }
    let ranges =
        merkle::consistency_ranges(old_size, size).map_err(|_| super::read::changed(path))?;
    let built = super::read::build_proof(path, &super::VerifyOptions::default(), ranges, None)?;
    Ok(ConsistencyProof {
        old_size,
        new_size: size,
        hashes: built.hashes,
        checkpoint: note,
    })
}

/// Two checkpoints of one log proven consistent: the newer tree extends the
/// older one. Only [`verify_consistency_proof`] builds it.
#[derive(Debug, Clone)]
pub struct VerifiedConsistency {
    old: Checkpoint,
    new: Checkpoint,
}

impl VerifiedConsistency {
    pub fn old(&self) -> &Checkpoint {
        &self.old
    }
    pub fn new_checkpoint(&self) -> &Checkpoint {
        &self.new
    }
}

fn open_checkpoint(
    note_text: &[u8],
    trusted: &TrustedKeys,
    seq: u64,
) -> std::result::Result<Checkpoint, ProofError> {
    trust::open_standalone(note_text, None, trusted)
        .map(|t| t.checkpoint().clone())
        .map_err(|e| ProofError::Checkpoint(e.at(seq)))
}

/// Verifies that the checkpoint in `proof_text` extends `old_note` (a signed
/// checkpoint the auditor kept): both signed by trusted keys, same origin,
/// the proof's sizes equal to the checkpoints', and the RFC 9162 §2.1.4.2
/// consistency proof holds. Does not read the log.
pub fn verify_consistency_proof(
    proof_text: &[u8],
    old_note: &[u8],
    trusted: &TrustedKeys,
) -> std::result::Result<VerifiedConsistency, ProofError> {
    let proof = ConsistencyProof::parse(proof_text).ok_or(ProofError::Malformed)?;
    let old = open_checkpoint(old_note, trusted, proof.old_size)?;
    let new = open_checkpoint(proof.checkpoint.as_bytes(), trusted, proof.new_size)?;
    if old.origin != new.origin {
        return Err(ProofError::OriginMismatch {
            record: old.origin.clone(),
            checkpoint: new.origin.clone(),
        });
    }
    if old.size != proof.old_size || new.size != proof.new_size {
        return Err(ProofError::SizeMismatch {
            old: old.size,
            new: new.size,
        });
    }
    merkle::verify_consistency(old.size, new.size, &old.root, &new.root, &proof.hashes)
        .map_err(|_| ProofError::Inconsistent)?;
    Ok(VerifiedConsistency { old, new })
}

/// What an offline proof verification cannot know, said in every report:
/// only the keys given are trusted, and a rotation that retired the
/// signing key after this checkpoint is not visible without the log.
pub const OFFLINE_NOT_CHECKED: &[&str] = &["later_key_rotations"];

fn signer_names(signed_by: &[(String, u32)]) -> Vec<String> {
    signed_by
        .iter()
        .map(|(n, id)| format!("{n}+{id:08x}"))
        .collect()
}

/// The report of `verify-proof` (`ProofReport<InclusionDetails>`) and
/// `verify-consistency` (`ProofReport<ConsistencyDetails>`), rendered by
/// the binary: the verdict, what was proven or why not, and what an
/// offline check cannot know.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ProofReport<T> {
    pub verified: bool,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub proven: Option<T>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    pub not_checked: &'static [&'static str],
}

impl<T, V> From<&std::result::Result<V, ProofError>> for ProofReport<T>
where
    for<'a> T: From<&'a V>,
{
    fn from(r: &std::result::Result<V, ProofError>) -> Self {
        ProofReport {
            verified: r.is_ok(),
            proven: r.as_ref().ok().map(T::from),
            reason: r.as_ref().err().map(ProofError::code),
            message: r.as_ref().err().map(ToString::to_string),
            not_checked: OFFLINE_NOT_CHECKED,
        }
    }
}

/// What a verified inclusion proof established.
#[derive(Debug, Clone, serde::Serialize)]
pub struct InclusionDetails {
    pub origin: String,
    pub index: u64,
    pub tree_size: u64,
    pub root: String,
    pub leaf: String,
    pub signed_by: Vec<String>,
}

impl From<&VerifiedInclusion> for InclusionDetails {
    fn from(v: &VerifiedInclusion) -> Self {
        InclusionDetails {
            origin: v.checkpoint.origin.clone(),
            index: v.index,
            tree_size: v.checkpoint.size,
            root: crate::hex::encode(&v.checkpoint.root),
            leaf: crate::hex::encode(&v.leaf),
            signed_by: signer_names(&v.signed_by),
        }
    }
}

/// What a verified consistency proof established.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ConsistencyDetails {
    pub origin: String,
    pub old_size: u64,
    pub new_size: u64,
    pub new_root: String,
}

impl From<&VerifiedConsistency> for ConsistencyDetails {
    fn from(v: &VerifiedConsistency) -> Self {
        ConsistencyDetails {
            origin: v.old.origin.clone(),
            old_size: v.old.size,
            new_size: v.new.size,
            new_root: crate::hex::encode(&v.new.root),
        }
    }
}
