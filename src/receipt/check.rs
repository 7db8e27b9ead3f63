//! Verifying a receipt offline: the record's inclusion, the signed checkpoint, and each anchor.

use super::*;

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

pub(super) fn decode_hashes(list: &[String]) -> std::result::Result<Vec<Hash>, ReceiptError> {
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

pub(super) fn signers(v: &crate::chain::trust::TrustedCheckpoint) -> String {
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
            return Err(ReceiptError::NoVerifiedCheckpoint);
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
pub(super) fn verify_anchors(
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
pub(super) fn bind_anchor_record(
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

pub(super) fn describe_verified(entry: &AnchorEntry, found: &[(&'static str, String)]) -> String {
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

pub(super) fn describe_unchecked(entry: &AnchorEntry, n: NotChecked) -> String {
    match entry {
        AnchorEntry::Tsa(_) => n.message().to_owned(),
        _ => format!("{} [recorded locator: {}]", n.message(), entry.location()),
    }
}
