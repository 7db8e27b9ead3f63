//! Tamper matrix for the chain verifier: every single-byte change of every
//! line, every deleted line, every swapped pair, every duplicated line, every
//! truncation against an auditor checkpoint, and a re-signed rewrite of
//! history against an earlier checkpoint. Each must be rejected with the
//! right reason code at the right place, both by the in-memory verifier and
//! by the chunked parallel file verifier.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use std::path::{Path, PathBuf};
use vouch::chain::record::{self, NewRecord};
use vouch::chain::verify::{self, AuditorCheckpoint, LogReport, LogStatus, VerifyOptions};
use vouch::chain::writer;
use vouch::merkle::{Hash, leaf_hash};
use vouch::note::{SignerKey, VerifierKey};

const ORIGIN: &str = "example.com/tamper";

/// Appends a record of any kind, reserved ones included, as a forger with
/// write access would: `writer::append` refuses reserved kinds, so forged
/// checkpoints and rotations are encoded by hand.
fn append_forged(path: &Path, origin: &str, kind: &str, body: &serde_json::Value) {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let (seq, prev) = match text.lines().last() {
        Some(last) => {
            let rec: serde_json::Value = serde_json::from_str(last).unwrap();
            (rec["seq"].as_u64().unwrap() + 1, leaf_hash(last.as_bytes()))
        }
        None => (0, record::genesis_prev(origin)),
    };
    let mut line = Vec::new();
    record::encode(
        &NewRecord {
            origin,
            seq,
            prev,
            ts: "2026-11-29T16:00:00.000Z",
            kind,
            body,
        },
        &mut line,
    )
    .unwrap();
    line.push(b'\n');
    let mut bytes = text.into_bytes();
    bytes.extend_from_slice(&line);
    std::fs::write(path, bytes).unwrap();
}

struct Fixture {
    _dir: tempfile::TempDir,
    path: PathBuf,
    bytes: Vec<u8>,
    key: SignerKey,
    verifier: VerifierKey,
    /// Detached checkpoint over the whole log, as an auditor would keep it.
    auditor: PathBuf,
}

fn key() -> SignerKey {
    SignerKey::from_seed(ORIGIN, &[7u8; 32]).unwrap()
}

/// A log of `n` records with a checkpoint every `every` records, ending with
/// a checkpoint, plus a detached auditor checkpoint over all of it.
fn fixture(n: usize, every: usize) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log.jsonl");
    let key = key();
    for i in 0..n {
        let body = json!({"i": i, "msg": format!("event number {i}"), "tags": ["a", "b"], "x": i as f64 / 4.0});
        writer::append(&path, &key, &[("event", &body)]).unwrap();
        if (i + 1) % every == 0 {
            writer::checkpoint(&path, &key, true).unwrap();
        }
    }
    writer::checkpoint(&path, &key, true).unwrap();
    let signed = writer::checkpoint(&path, &key, false).unwrap();
    let auditor = dir.path().join("auditor.checkpoint");
    std::fs::write(&auditor, signed.note).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let verifier = key.verifier();
    Fixture {
        _dir: dir,
        path,
        bytes,
        key,
        verifier,
        auditor,
    }
}

fn opts(f: &Fixture, with_auditor: bool) -> VerifyOptions {
    let trusted = vouch::chain::TrustedKeys::new(vec![f.verifier.clone()]).unwrap();
    let checkpoints: Vec<AuditorCheckpoint> = if with_auditor {
        vec![verify::load_auditor_checkpoint(&f.auditor, &trusted).unwrap()]
    } else {
        Vec::new()
    };
    VerifyOptions {
        trusted,
        checkpoints,
        ..Default::default()
    }
}

fn lines(bytes: &[u8]) -> Vec<Vec<u8>> {
    bytes
        .split_inclusive(|&b| b == b'\n')
        .map(<[u8]>::to_vec)
        .collect()
}

fn check(bytes: &[u8], o: &VerifyOptions) -> LogReport {
    verify::verify_bytes(Path::new("log.jsonl"), bytes, o)
}

fn failure(r: &LogReport) -> (&'static str, u64) {
    let f = r
        .failure
        .as_ref()
        .unwrap_or_else(|| panic!("expected a failure, got {:?}", r.status));
    (f.error.code(), f.line)
}

#[test]
fn untampered_log_is_valid() {
    let f = fixture(60, 10);
    let r = check(&f.bytes, &opts(&f, true));
    assert_eq!(r.status, LogStatus::Valid, "{:?}", r.failure);
    assert_eq!(r.records, 60 + 7);
    assert_eq!(r.covered, 66);
    assert_eq!(r.checkpoints, 7);
}

#[test]
fn every_single_byte_change_is_caught() {
    let f = fixture(120, 25);
    let o = opts(&f, true);
    let ls = lines(&f.bytes);
    let n = ls.len();
    let mut checked = 0u64;
    for (i, line) in ls.iter().enumerate() {
        for j in 0..line.len() - 1 {
            for flip in [0x01u8, 0x20, 0x80] {
                let mut t = f.bytes.clone();
                let at: usize = ls[..i].iter().map(Vec::len).sum::<usize>() + j;
                t[at] ^= flip;
                let r = check(&t, &o);
                assert_eq!(r.status, LogStatus::Invalid, "line {i} byte {j} ^{flip:#x}");
                let (code, fline) = failure(&r);
                let mutated = &t[at - j..at - j + line.len() - 1];
                match record::parse_line(mutated) {
                    // The line itself is malformed: caught on that line, with its own reason.
                    Err(e) => {
                        assert_eq!(
                            (code, fline),
                            (e.code(), i as u64 + 1),
                            "line {i} byte {j} ^{flip:#x}"
                        )
                    }
                    // Still a well-formed record: caught by a link, sequence,
                    // checkpoint or signature check on that line or the next,
                    // or, for the last line, by the auditor's checkpoint.
                    Ok(rec) => {
                        let allowed = [
                            "seq_gap",
                            "reordered",
                            "duplicate",
                            "broken_link",
                            "origin_mismatch",
                            "bad_checkpoint",
                            "bad_signature",
                            "unknown_key",
                            "bad_record",
                            "fork",
                        ];
                        assert!(allowed.contains(&code), "line {i} byte {j}: {code}");
                        if i + 1 == n {
                            assert!(
                                fline == n as u64 || code == "fork",
                                "last line: {code} at {fline}"
                            );
                        } else {
                            assert!(
                                fline == i as u64 + 1 || fline == i as u64 + 2,
                                "line {i} byte {j}: {code} at {fline}"
                            );
                        }
                        // A changed seq is a sequence error on that very line.
                        if rec.seq != i as u64 {
                            assert!(
                                ["seq_gap", "reordered", "duplicate"].contains(&code),
                                "{code}"
                            );
                            assert_eq!(fline, i as u64 + 1);
                        }
                    }
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 30_000, "only {checked} mutations");
}

#[test]
fn every_deleted_line_is_caught() {
    let f = fixture(80, 20);
    let o = opts(&f, true);
    let ls = lines(&f.bytes);
    for i in 0..ls.len() {
        let t: Vec<u8> = ls
            .iter()
            .enumerate()
            .filter(|(k, _)| *k != i)
            .flat_map(|(_, l)| l.clone())
            .collect();
        let r = check(&t, &o);
        let (code, line) = failure(&r);
        if i + 1 == ls.len() {
            assert_eq!(code, "truncated", "deleting the last line");
        } else {
            assert_eq!((code, line), ("seq_gap", i as u64 + 1), "deleting line {i}");
        }
    }
}

#[test]
fn every_swapped_pair_is_caught() {
    let f = fixture(80, 20);
    let o = opts(&f, true);
    let ls = lines(&f.bytes);
    for i in 0..ls.len() - 1 {
        let mut s = ls.clone();
        s.swap(i, i + 1);
        let r = check(&s.concat(), &o);
        assert_eq!(
            failure(&r),
            ("reordered", i as u64 + 1),
            "swapping lines {i} and {}",
            i + 1
        );
    }
}

#[test]
fn every_duplicated_line_is_caught() {
    let f = fixture(80, 20);
    let o = opts(&f, true);
    let ls = lines(&f.bytes);
    for i in 0..ls.len() {
        let mut s = ls.clone();
        s.insert(i + 1, ls[i].clone());
        let r = check(&s.concat(), &o);
        assert_eq!(
            failure(&r),
            ("duplicate", i as u64 + 2),
            "duplicating line {i}"
        );
    }
}

#[test]
fn every_truncation_is_caught_with_an_auditor_checkpoint() {
    let f = fixture(60, 15);
    let o = opts(&f, true);
    let without = opts(&f, false);
    let ls = lines(&f.bytes);
    let mut end = 0;
    for (i, l) in ls.iter().enumerate() {
        // Cut at a line boundary: still a valid log on its own, but shorter
        // than the auditor's checkpoint.
        let r = check(&f.bytes[..end], &o);
        assert_eq!(failure(&r).0, "truncated", "cut to {i} lines");
        assert_ne!(check(&f.bytes[..end], &without).status, LogStatus::Invalid);
        // Cut inside the line: a torn tail, and still truncated.
        let mid = end + l.len() / 2;
        let r = check(&f.bytes[..mid], &o);
        assert_eq!(failure(&r).0, "truncated", "cut inside line {i}");
        let r = check(&f.bytes[..mid], &without);
        assert_eq!(r.torn_tail, Some((mid - end) as u64));
        end += l.len();
    }
}

/// Rebuilds the whole log from `bodies` with the same key, re-signing every
/// checkpoint: what an attacker holding the key can do.
fn forge(key: &SignerKey, bodies: &[serde_json::Value], every: usize) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("forged.jsonl");
    for (i, b) in bodies.iter().enumerate() {
        writer::append(&path, key, &[("event", b)]).unwrap();
        if (i + 1) % every == 0 {
            writer::checkpoint(&path, key, true).unwrap();
        }
    }
    writer::checkpoint(&path, key, true).unwrap();
    std::fs::read(&path).unwrap()
}

#[test]
fn resigned_rewrite_of_history_is_a_fork_against_an_earlier_checkpoint() {
    let f = fixture(40, 10);
    let o = opts(&f, true);
    let mut bodies: Vec<serde_json::Value> = (0..40)
        .map(|i| json!({"i": i, "msg": format!("event number {i}"), "tags": ["a", "b"], "x": i as f64 / 4.0}))
        .collect();
    bodies[3] = json!({"i": 3, "msg": "nothing happened here"});
    let forged = forge(&f.key, &bodies, 10);
    // On its own the forgery is a perfectly valid log...
    assert_eq!(check(&forged, &opts(&f, false)).status, LogStatus::Valid);
    // ...but not against the checkpoint the auditor kept.
    let r = check(&forged, &o);
    assert_eq!(failure(&r).0, "fork");
    // Same when the forger appends more after the rewrite.
    let mut longer = bodies.clone();
    longer.push(json!("more"));
    let forged_longer = forge(&f.key, &longer, 10);
    assert_eq!(failure(&check(&forged_longer, &o)).0, "fork");
}

#[test]
fn chunked_file_verification_agrees_with_whole_verification() {
    let f = fixture(400, 37);
    let o_small = VerifyOptions {
        chunk_bytes: 4096,
        ..opts(&f, true)
    };
    let ls = lines(&f.bytes);
    let mut variants: Vec<Vec<u8>> = vec![f.bytes.clone()];
    for i in (0..ls.len() - 1).step_by(7) {
        let mut s = ls.clone();
        s.swap(i, i + 1);
        variants.push(s.concat());
        let mut d = ls.clone();
        d.remove(i);
        variants.push(d.concat());
        let mut dup = ls.clone();
        dup.insert(i, ls[i].clone());
        variants.push(dup.concat());
        let mut flip = f.bytes.clone();
        let at: usize = ls[..i].iter().map(Vec::len).sum::<usize>() + 10;
        flip[at] ^= 1;
        variants.push(flip);
    }
    let dir = tempfile::tempdir().unwrap();
    for (k, v) in variants.iter().enumerate() {
        let p = dir.path().join(format!("v{k}.jsonl"));
        std::fs::write(&p, v).unwrap();
        let whole = check(v, &o_small);
        let chunked = verify::verify_files(std::slice::from_ref(&p), &o_small);
        let c = &chunked.logs[0];
        assert_eq!(c.status, whole.status, "variant {k}");
        assert_eq!(c.records, whole.records, "variant {k}");
        assert_eq!(c.covered, whole.covered, "variant {k}");
        assert_eq!(
            c.failure.as_ref().map(|x| (x.error.code(), x.line, x.seq)),
            whole
                .failure
                .as_ref()
                .map(|x| (x.error.code(), x.line, x.seq)),
            "variant {k}"
        );
    }
    assert!(f.path.exists());
}

#[test]
fn key_rotation_is_followed_and_retires_the_old_key() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rot.jsonl");
    let old = key();
    let new = SignerKey::from_seed(ORIGIN, &[9u8; 32]).unwrap();
    writer::append(&path, &old, &[("event", &json!(1))]).unwrap();
    writer::checkpoint(&path, &old, true).unwrap();
    writer::rotate(&path, &old, &new).unwrap();
    writer::append(&path, &new, &[("event", &json!(2))]).unwrap();
    writer::checkpoint(&path, &new, true).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let trust = |k: &SignerKey| VerifyOptions {
        trusted: vouch::chain::TrustedKeys::new(vec![k.verifier()]).unwrap(),
        ..Default::default()
    };
    let r = check(&bytes, &trust(&old));
    assert_eq!(r.status, LogStatus::Valid, "{:?}", r.failure);
    assert_eq!(r.checkpoints, 3);
    // Trusting only the new key: the first checkpoint is by an unknown key.
    assert_eq!(failure(&check(&bytes, &trust(&new))), ("unknown_key", 2));
    // After the rotation the old key is retired: a checkpoint it signs later is rejected.
    writer::append(&path, &old, &[("event", &json!(3))]).unwrap();
    writer::checkpoint(&path, &old, true).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let r = check(&bytes, &trust(&old));
    assert_eq!(failure(&r), ("unknown_key", 7));
}

#[test]
fn a_rotation_not_signed_by_the_new_key_is_rejected() {
    use vouch::chain::record::KIND_KEY_ROTATION;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rot.jsonl");
    let old = key();
    let new = SignerKey::from_seed(ORIGIN, &[9u8; 32]).unwrap();
    writer::append(&path, &old, &[("event", &json!(1))]).unwrap();
    // A rotation note signed by the old key only, naming the new key.
    let bytes = std::fs::read(&path).unwrap();
    let report = check(&bytes, &VerifyOptions::default());
    let root = report.verified.unwrap().root();
    let cp = vouch::note::checkpoint::Checkpoint {
        origin: ORIGIN.into(),
        size: 1,
        root,
        extensions: vec![format!(
            "{}{}",
            vouch::chain::ROTATION_EXTENSION,
            new.verifier().to_text()
        )],
    };
    let note = vouch::note::sign(&cp.to_text(), &[&old]).unwrap();
    let body = json!({"new_key": new.verifier().to_text(), "note": note});
    append_forged(&path, old.name(), KIND_KEY_ROTATION, &body);
    let bytes = std::fs::read(&path).unwrap();
    let trusted = VerifyOptions {
        trusted: vouch::chain::TrustedKeys::new(vec![old.verifier()]).unwrap(),
        ..Default::default()
    };
    assert_eq!(failure(&check(&bytes, &trusted)), ("bad_checkpoint", 2));
}

#[test]
fn statuses_unauthenticated_partial_and_wrong_key() {
    let f = fixture(20, 5);
    let none = VerifyOptions::default();
    assert_eq!(check(&f.bytes, &none).status, LogStatus::Unauthenticated);
    let stranger = SignerKey::from_seed("someone.else", &[1u8; 32]).unwrap();
    let wrong = VerifyOptions {
        trusted: vouch::chain::TrustedKeys::new(vec![stranger.verifier()]).unwrap(),
        ..Default::default()
    };
    assert_eq!(failure(&check(&f.bytes, &wrong)).0, "unknown_key");
    // Records after the last checkpoint make the log partial.
    let mut more = f.bytes.clone();
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("p.jsonl");
    std::fs::write(&p, &more).unwrap();
    writer::append(&p, &f.key, &[("event", &json!("late"))]).unwrap();
    more = std::fs::read(&p).unwrap();
    let r = check(&more, &opts(&f, false));
    assert_eq!(r.status, LogStatus::Partial);
    assert_eq!(r.records, r.covered + 2);
}

#[test]
fn a_wrong_leaf_in_prev_is_a_broken_link() {
    // Build a log by hand whose record 1 points at the wrong predecessor.
    let mut bytes = Vec::new();
    let mut prev: Hash = record::genesis_prev(ORIGIN);
    for seq in 0..3u64 {
        let mut line = Vec::new();
        let p = if seq == 1 { [0u8; 32] } else { prev };
        record::encode(
            &NewRecord {
                origin: ORIGIN,
                seq,
                prev: p,
                ts: "2026-01-01T00:00:00Z",
                kind: "event",
                body: &json!(seq),
            },
            &mut line,
        )
        .unwrap();
        prev = leaf_hash(&line);
        bytes.extend_from_slice(&line);
        bytes.push(b'\n');
    }
    let r = check(&bytes, &VerifyOptions::default());
    assert_eq!(failure(&r), ("broken_link", 2));
    assert_eq!(r.failure.unwrap().seq, Some(1));
}

#[test]
fn a_key_trusted_for_another_log_does_not_vouch_for_this_one() {
    // Two logs of a fleet; the holder of log B's key re-signs log A.
    let dir = tempfile::tempdir().unwrap();
    let a = key();
    let b = SignerKey::from_seed("example.com/other", &[5u8; 32]).unwrap();
    let path = dir.path().join("a.jsonl");
    writer::append(&path, &a, &[("event", &json!(1))]).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let root = check(&bytes, &VerifyOptions::default())
        .verified
        .unwrap()
        .root();
    let cp = vouch::note::checkpoint::Checkpoint {
        origin: ORIGIN.into(),
        size: 1,
        root,
        extensions: vec![],
    };
    let forged = vouch::note::sign(&cp.to_text(), &[&b]).unwrap();
    append_forged(
        &path,
        a.name(),
        record::KIND_CHECKPOINT,
        &json!({"note": forged}),
    );
    let bytes = std::fs::read(&path).unwrap();
    let both = VerifyOptions {
        trusted: vouch::chain::TrustedKeys::new(vec![a.verifier(), b.verifier()]).unwrap(),
        ..Default::default()
    };
    assert_eq!(failure(&check(&bytes, &both)), ("unknown_key", 2));
    // The same note given as an auditor checkpoint is refused too.
    let note_path = dir.path().join("forged.checkpoint");
    std::fs::write(&note_path, &forged).unwrap();
    assert!(verify::load_auditor_checkpoint(&note_path, &both.trusted).is_err());
}
