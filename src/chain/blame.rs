//! Which record of a broken link was changed.
//!
//! A `broken_link` at record k+1 says only that record k+1's `prev` is not
//! the leaf hash of record k: record k's content was changed, or record
//! k+1's `prev` was (docs/FORMAT.md §7.2). A signed checkpoint past the break tells
//! which: it commits to the leaf hashes the log had when it was signed.
//!
//! - If a trusted checkpoint's root is the root of the log with leaf k
//!   replaced by record k+1's `prev`, the signed tree held, at k, the hash
//!   record k+1 names, and record k no longer hashes to it: **record k was
//!   changed** (record k+1 is as signed).
//! - If a trusted checkpoint's root is the root of the log with leaf k+1
//!   replaced by record k+2's `prev`, the signed tree held a record k+1
//!   that is not today's: **record k+1 was changed** (its `prev`, or more).
//!
//! Only checkpoints that pass the trust rule count ([`super::trust`]): the
//! auditor's `--checkpoint` notes and the log's own checkpoint records
//! judged under the keys current at their place in the log (rotations
//! admitted in order, as the verifier does). With none past the break, or
//! none that matches, nothing is named: the verdict says so. The verdict
//! itself (status, reason code) never changes; this is a pointer for the
//! auditor, and it is only given when a signature proves it.
//!
//! Cost: one more sequential read of the log, on failure only, in
//! O(log n) memory (two compact ranges).

use super::record::{self, KIND_CHECKPOINT, KIND_KEY_ROTATION, MAX_LINE_LEN};
use super::scan::parse_checkpoint_body;
use super::trust::{self, KeyState, Prechecked, TrustedKeys};
use crate::merkle::{CompactRange, Hash, leaf_hash};
use serde::Serialize;
use std::io::{BufRead, BufReader, Read};
use super::source::{SeqReader, Source};

/// The record a signed checkpoint shows was changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Changed {
    /// The seq of the record whose content is not what was signed.
    pub seq: u64,
    /// The size of the trusted checkpoint that shows it.
    pub checkpoint_size: u64,
}

/// A trusted tree head: (size, root).
type Head = (u64, Hash);

/// Finds which record of the broken link before record `seq` (whose
/// `prev` is `found`) was changed, reading `segments` in order.
/// `auditor` are the auditor's checkpoints of this log, not yet judged:
/// each counts only if the trust rule admits it at its place in the log.
pub(super) fn changed_record(
    segments: &[&Source],
    seq: u64,
    found: Hash,
    trusted: &TrustedKeys,
    auditor: &[&Prechecked],
) -> Option<Changed> {
    let mut readers = Vec::new();
    for source in segments {
        let file = SeqReader::new(source.open().ok()?, 0);
        readers.push(BufReader::with_capacity(1 << 20, file));
    }
    search(readers, seq, found, trusted, auditor)
}

/// [`changed_record`] over a log held in memory.
pub(super) fn changed_record_in(
    bytes: &[u8],
    seq: u64,
    found: Hash,
    trusted: &TrustedKeys,
    auditor: &[&Prechecked],
) -> Option<Changed> {
    search([bytes], seq, found, trusted, auditor)
}

/// Reads the lines of `readers` (the segments, in order) into a [`Search`].
fn search(
    readers: impl IntoIterator<Item = impl BufRead>,
    seq: u64,
    found: Hash,
    trusted: &TrustedKeys,
    auditor: &[&Prechecked],
) -> Option<Changed> {
    let mut search = Search::new(seq.checked_sub(1)?, found, trusted, auditor);
    let mut line = Vec::new();
    for mut reader in readers {
        loop {
            line.clear();
            let n = (&mut reader)
                .take(MAX_LINE_LEN as u64 + 1)
                .read_until(b'\n', &mut line)
                .ok()?;
            if n == 0 {
                break;
            }
            if line.last() != Some(&b'\n') {
                // Too long, or the torn tail: nothing more to learn.
                return search.end();
            }
            line.pop();
            match search.line(&line) {
                Step::Go => {}
                Step::Found(c) => return Some(c),
                Step::Stop => return search.end(),
            }
        }
    }
    search.end()
}

enum Step {
    Go,
    Found(Changed),
    Stop,
}

struct Search<'k, 'a> {
    /// Record k: the one before the break.
    k: u64,
    /// Record k+1's `prev`: leaf k as k+1 recorded it.
    found: Hash,
    keys: KeyState<'k>,
    trusted: &'k TrustedKeys,
    auditor: &'a [&'a Prechecked],
    origin: Option<Vec<u8>>,
    next_seq: u64,
    /// The log's leaves as they are.
    actual: CompactRange,
    /// Record k's leaf hash as read now.
    leaf_k: Option<Hash>,
    /// `actual` after leaves 0..=k, kept until record k+2's `prev` is read.
    through_k: Option<CompactRange>,
    /// Leaf k replaced by `found`.
    k_as_recorded: CompactRange,
    /// Leaf k+1 replaced by record k+2's `prev` (from record k+2 on).
    k1_as_recorded: Option<CompactRange>,
}

impl<'k, 'a> Search<'k, 'a> {
    fn new(k: u64, found: Hash, trusted: &'k TrustedKeys, auditor: &'a [&'a Prechecked]) -> Self {
        Search {
            k,
            found,
            keys: KeyState::new(trusted),
            trusted,
            auditor,
            origin: None,
            next_seq: 0,
            actual: CompactRange::new(0),
            leaf_k: None,
            through_k: None,
            k_as_recorded: CompactRange::new(0),
            k1_as_recorded: None,
        }
    }

    fn line(&mut self, line: &[u8]) -> Step {
        let Ok(rec) = record::parse_line(line) else {
            return Step::Stop;
        };
        if rec.seq != self.next_seq {
            return Step::Stop;
        }
        match &self.origin {
            None => self.origin = Some(rec.origin.to_vec()),
            Some(o) if o.as_slice() != rec.origin => return Step::Stop,
            Some(_) => {}
        }
        // The bytes read again must hold the same break (a file replaced
        // since it was verified names nothing).
        if rec.seq == self.k + 1 && (rec.prev != self.found || self.leaf_k == Some(self.found)) {
            return Step::Stop;
        }
        if rec.seq == self.k + 2 {
            // Record k+2's prev is leaf k+1 as k+2 recorded it.
            let Some(mut r) = self.through_k.take() else {
                return Step::Stop;
            };
            if r.append(rec.prev).is_err() {
                return Step::Stop;
            }
            self.k1_as_recorded = Some(r);
        }
        // Checkpoints of size seq cover the records before this one.
        if let Some(c) = self.judge(&rec, rec.seq) {
            return Step::Found(c);
        }
        let leaf = leaf_hash(line);
        let ok = self.actual.append(leaf).is_ok()
            && self
                .k_as_recorded
                .append(if rec.seq == self.k { self.found } else { leaf })
                .is_ok()
            && self
                .k1_as_recorded
                .as_mut()
                .is_none_or(|r| r.append(leaf).is_ok());
        if !ok {
            return Step::Stop;
        }
        if rec.seq == self.k {
            self.through_k = Some(self.actual.clone());
            self.leaf_k = Some(leaf);
        }
        self.next_seq = rec.seq + 1;
        Step::Go
    }

    /// The trusted tree heads of size `size` (the auditor's, and the
    /// checkpoint this record carries) compared with the two candidates.
    fn judge(&mut self, rec: &record::RecordView<'_>, size: u64) -> Option<Changed> {
        let mut heads = self.auditor_heads(size);
        let rotation = rec.kind == KIND_KEY_ROTATION.as_bytes();
        if rotation || rec.kind == KIND_CHECKPOINT.as_bytes() {
            let origin = std::str::from_utf8(rec.origin).ok();
            let body = parse_checkpoint_body(rec.body, rotation);
            let pre = body.and_then(|b| {
                trust::precheck(
                    b.note.as_bytes(),
                    origin,
                    b.new_key.as_deref(),
                    self.trusted,
                )
                .ok()
            });
            let trusted = pre.as_ref().and_then(|p| {
                if rotation {
                    self.keys.admit(p).ok()
                } else {
                    self.keys.judge(p).ok()
                }
            });
            if let Some(t) = trusted
                && t.checkpoint().size == size
            {
                heads.push((size, t.checkpoint().root));
            }
        }
        self.compare(&heads)
    }

    fn compare(&self, heads: &[Head]) -> Option<Changed> {
        for &(size, root) in heads {
            if size > self.k
                && self.k_as_recorded.end() == size
                && self.k_as_recorded.root().ok() == Some(root)
            {
                return Some(Changed {
                    seq: self.k,
                    checkpoint_size: size,
                });
            }
            if let Some(r) = &self.k1_as_recorded
                && r.end() == size
                && r.root().ok() == Some(root)
            {
                return Some(Changed {
                    seq: self.k + 1,
                    checkpoint_size: size,
                });
            }
        }
        None
    }

    /// The auditor's checkpoints of `size` that the trust rule admits
    /// under the keys current here.
    fn auditor_heads(&self, size: u64) -> Vec<Head> {
        self.auditor
            .iter()
            .filter(|p| p.claimed().size == size)
            .filter_map(|p| self.keys.judge(p).ok())
            .map(|t| (size, t.checkpoint().root))
            .collect()
    }

    /// At the end of the log: the auditor's checkpoints of its full size.
    fn end(&mut self) -> Option<Changed> {
        let heads = self.auditor_heads(self.next_seq);
        self.compare(&heads)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::note::SignerKey;

    /// Record 1's content changed in a log of 4 events and a checkpoint.
    fn tampered() -> (Vec<u8>, TrustedKeys, Hash) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.jsonl");
        let key = SignerKey::from_seed("example.com/b", &[3u8; 32]).unwrap();
        for i in 0..4 {
            crate::chain::writer::append(&path, &key, &[("e", &serde_json::json!({"i": i}))])
                .unwrap();
        }
        crate::chain::writer::checkpoint(&path, &key, true).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let found = record::parse_line(text.lines().nth(2).unwrap().as_bytes())
            .unwrap()
            .prev;
        let bytes = text.replacen("{\"i\":1}", "{\"i\":9}", 1).into_bytes();
        let keys = TrustedKeys::new([key.verifier()]).unwrap();
        (bytes, keys, found)
    }

    #[test]
    fn names_the_changed_record_only_for_the_break_it_was_asked_about() {
        let (bytes, keys, found) = tampered();
        assert_eq!(
            changed_record_in(&bytes, 2, found, &keys, &[]),
            Some(Changed {
                seq: 1,
                checkpoint_size: 4
            })
        );
        // Bytes without that break (another prev at record 2): nothing.
        assert_eq!(changed_record_in(&bytes, 2, [7u8; 32], &keys, &[]), None);
        // Another break position: nothing.
        assert_eq!(changed_record_in(&bytes, 3, found, &keys, &[]), None);
        // No trusted key: nothing.
        let other = SignerKey::from_seed("example.com/b", &[4u8; 32]).unwrap();
        let untrusted = TrustedKeys::new([other.verifier()]).unwrap();
        assert_eq!(changed_record_in(&bytes, 2, found, &untrusted, &[]), None);
    }
}
