//! Inclusion proofs for single records, as C2SP tlog-proof files that verify
//! offline with only the record line and the log's public key
//! (docs/FORMAT.md §5).

use super::error::{ChainError, CheckpointProblem};
use super::record::{self, KIND_CHECKPOINT, KIND_KEY_ROTATION};
use super::scan::parse_checkpoint_body;
use super::writer::LogStateProblem;
use crate::merkle::{self, Hash, leaf_hash};
use crate::note::{self, VerifierKey, checkpoint::Checkpoint, proof::TlogProof};
use crate::{Error, Result};
use std::io::{BufRead, Read};
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

/// Reads every record's leaf hash, and every embedded checkpoint note.
struct LogLeaves {
    leaves: Vec<Hash>,
    /// (size, note) of each checkpoint or key rotation record, in order.
    checkpoints: Vec<(u64, String)>,
}

fn read_leaves(path: &Path) -> Result<LogLeaves> {
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut reader = std::io::BufReader::with_capacity(1 << 20, file);
    let mut line = Vec::new();
    let mut out = LogLeaves {
        leaves: Vec::new(),
        checkpoints: Vec::new(),
    };
    loop {
        line.clear();
        let n = (&mut reader)
            .take(record::MAX_LINE_LEN as u64 + 1)
            .read_until(b'\n', &mut line)
            .map_err(|e| Error::io(path, e))?;
        if n == 0 {
            break;
        }
        if line.last() != Some(&b'\n') {
            return Err(Error::LogState {
                path: path.to_path_buf(),
                problem: LogStateProblem::Unterminated,
            });
        }
        let bytes = &line[..line.len() - 1];
        let rec = record::parse_line(bytes).map_err(|e| Error::LogState {
            path: path.to_path_buf(),
            problem: LogStateProblem::Invalid(e),
        })?;
        let is_rotation = rec.kind == KIND_KEY_ROTATION.as_bytes();
        if (rec.kind == KIND_CHECKPOINT.as_bytes() || is_rotation)
            && let Some(body) = parse_checkpoint_body(rec.body, is_rotation)
        {
            out.checkpoints.push((rec.seq, body.note));
        }
        out.leaves.push(leaf_hash(bytes));
    }
    Ok(out)
}

/// Builds a tlog-proof for record `seq` against the latest checkpoint in the
/// log that covers it. The log is not verified here; `vouch verify` does that.
pub fn prove_inclusion(path: &Path, seq: u64) -> Result<TlogProof> {
    let log = read_leaves(path)?;
    let records = log.leaves.len() as u64;
    if seq >= records {
        return Err(Error::LogState {
            path: path.to_path_buf(),
            problem: LogStateProblem::NoSuchRecord { seq, records },
        });
    }
    let Some((size, note)) = log.checkpoints.iter().rev().find(|(size, _)| *size > seq) else {
        let covered = log.checkpoints.last().map_or(0, |c| c.0);
        return Err(Error::LogState {
            path: path.to_path_buf(),
            problem: LogStateProblem::NotCovered { seq, covered },
        });
    };
    let hashes = merkle::inclusion_proof(&log.leaves[..*size as usize], seq)
        .map_err(|e| Error::Usage(format!("cannot build the proof: {e}")))?;
    Ok(TlogProof {
        extra: None,
        index: seq,
        hashes,
        checkpoint: note.clone(),
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
    trusted: &[VerifierKey],
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
    let verified = note::open(proof.checkpoint.as_bytes(), trusted).map_err(|e| {
        ProofError::Checkpoint(match e {
            note::NoteError::BadSignature { name, key_id } => ChainError::BadSignature {
                key_name: name,
                key_id,
            },
            note::NoteError::UnknownKey { .. } => ChainError::UnknownKey {
                signers: note::parse(proof.checkpoint.as_bytes())
                    .map(|n| {
                        n.signatures
                            .iter()
                            .map(|s| (s.name.clone(), s.key_id))
                            .collect()
                    })
                    .unwrap_or_default(),
            },
            _ => ChainError::BadCheckpoint {
                seq: proof.index,
                problem: CheckpointProblem::Note,
            },
        })
    })?;
    let checkpoint = note::checkpoint::parse(verified.text()).map_err(|_| {
        ProofError::Checkpoint(ChainError::BadCheckpoint {
            seq: proof.index,
            problem: CheckpointProblem::Body,
        })
    })?;
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
        signed_by: verified.verified_by().to_vec(),
    })
}
