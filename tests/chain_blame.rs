//! A broken link names the record that was changed, when a trusted
//! checkpoint past the break shows it (src/chain/blame.rs).
//!
//! Generated matrix: every event record's content rewritten, and every
//! event record's `prev` rewritten, each verified with and without the
//! auditor's checkpoint, in memory and from the file. The expected answer
//! is computed from the log's layout: the first trusted checkpoint that
//! covers the changed record names it; with none, nothing is named. And
//! the attacks: a forged checkpoint by another key, and no trusted key at
//! all, never name a record.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use vouch::chain::Changed;
use vouch::chain::record::{self, NewRecord};
use vouch::chain::verify::{self, AuditorCheckpoint, LogReport, LogStatus, VerifyOptions};
use vouch::chain::writer;
use vouch::merkle::{Hash, leaf_hash};
use vouch::note::SignerKey;

const ORIGIN: &str = "example.com/blame";

struct Log {
    _dir: tempfile::TempDir,
    path: PathBuf,
    bytes: Vec<u8>,
    key: SignerKey,
    auditor: PathBuf,
}

/// `n` event records with a checkpoint record after every `every`.
fn log(n: usize, every: usize) -> Log {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log.jsonl");
    let key = SignerKey::from_seed(ORIGIN, &[9u8; 32]).unwrap();
    for i in 0..n {
        writer::append(&path, &key, &[("event", &json!({"i": i}))]).unwrap();
        if (i + 1) % every == 0 {
            writer::checkpoint(&path, &key, true).unwrap();
        }
    }
    let signed = writer::checkpoint(&path, &key, false).unwrap();
    let auditor = dir.path().join("auditor.checkpoint");
    std::fs::write(&auditor, signed.note).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    Log {
        _dir: dir,
        path,
        bytes,
        key,
        auditor,
    }
}

fn opts(l: &Log, keys: &[&SignerKey], with_auditor: bool) -> VerifyOptions {
    let trusted = vouch::chain::TrustedKeys::new(keys.iter().map(|k| k.verifier())).unwrap();
    let checkpoints: Vec<AuditorCheckpoint> = if with_auditor {
        vec![verify::load_auditor_checkpoint(&l.auditor, &trusted).unwrap()]
    } else {
        Vec::new()
    };
    VerifyOptions {
        trusted,
        checkpoints,
        ..Default::default()
    }
}

fn lines(bytes: &[u8]) -> Vec<Value> {
    bytes
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect()
}

fn hash_of(v: &Value) -> Hash {
    let hex = v.as_str().unwrap();
    vouch::hex::decode_lower::<32>(hex.as_bytes()).unwrap()
}

/// The log with line `i` re-encoded after `edit` (still a well-formed record).
fn rewrite(bytes: &[u8], i: usize, edit: impl Fn(&mut Value)) -> Vec<u8> {
    let mut out = Vec::new();
    for (j, line) in bytes.split_inclusive(|&b| b == b'\n').enumerate() {
        if j != i {
            out.extend_from_slice(line);
            continue;
        }
        let mut v: Value = serde_json::from_slice(&line[..line.len() - 1]).unwrap();
        edit(&mut v);
        record::encode(
            &NewRecord {
                origin: v["origin"].as_str().unwrap(),
                seq: v["seq"].as_u64().unwrap(),
                prev: hash_of(&v["prev"]),
                ts: v["ts"].as_str().unwrap(),
                kind: v["kind"].as_str().unwrap(),
                body: &v["body"],
            },
            &mut out,
        )
        .unwrap();
        out.push(b'\n');
    }
    out
}

/// The first checkpoint record that covers record `seq` (its size is
/// above `seq`), or the auditor's, or none.
fn first_cover(records: &[Value], seq: u64, with_auditor: bool) -> Option<u64> {
    records
        .iter()
        .filter(|r| r["kind"] == "checkpoint")
        .map(|r| r["seq"].as_u64().unwrap())
        .find(|&s| s > seq)
        .or(with_auditor.then_some(records.len() as u64))
}

fn both(l: &Log, bytes: &[u8], o: &VerifyOptions) -> [LogReport; 2] {
    let in_memory = verify::verify_bytes(Path::new("log.jsonl"), bytes, o);
    let file = l.path.with_file_name("tampered.jsonl");
    std::fs::write(&file, bytes).unwrap();
    let o = VerifyOptions {
        trusted: o.trusted.clone(),
        checkpoints: o.checkpoints.clone(),
        // Small chunks: the file verifier scans in parallel pieces.
        chunk_bytes: 512,
        ..Default::default()
    };
    let mut fleet = verify::verify_files(&[file], &o);
    [in_memory, fleet.logs.remove(0)]
}

fn expect(r: &LogReport, broken_at: u64, changed: Option<Changed>, what: &str) {
    assert_eq!(r.status, LogStatus::Invalid, "{what}");
    let f = r.failure.as_ref().unwrap();
    assert_eq!(f.error.code(), "broken_link", "{what}: {}", f.error);
    assert_eq!(f.seq, Some(broken_at), "{what}");
    assert_eq!(f.between(), Some((broken_at - 1, broken_at)), "{what}");
    assert_eq!(f.changed, changed, "{what}");
}

#[test]
fn every_changed_content_and_every_changed_prev_is_named_when_a_checkpoint_shows_it() {
    let l = log(24, 7);
    let records = lines(&l.bytes);
    let n = records.len();
    let mut named = 0;
    let mut unnamed = 0;
    for with_auditor in [false, true] {
        let o = opts(&l, &[&l.key], with_auditor);
        for (i, rec) in records.iter().enumerate() {
            if rec["kind"] != "event" || i + 1 >= n {
                continue;
            }
            let seq = i as u64;
            // Whichever way record i was changed, the first trusted
            // checkpoint covering it names it.
            let want = first_cover(&records, seq, with_auditor).map(|size| Changed {
                seq,
                checkpoint_size: size,
            });
            // Record i's content changed: the break is before i+1.
            let t = rewrite(&l.bytes, i, |v| v["body"]["i"] = json!("changed"));
            for r in both(&l, &t, &o) {
                expect(
                    &r,
                    seq + 1,
                    want,
                    &format!("content of {i}, auditor {with_auditor}"),
                );
            }
            named += usize::from(want.is_some());
            unnamed += usize::from(want.is_none());
            // Record i's prev changed (i > 0): the break is before i, and
            // record i+1's prev holds record i's signed hash.
            if i == 0 {
                continue;
            }
            let other = leaf_hash(b"another record");
            let t = rewrite(&l.bytes, i, |v| {
                v["prev"] = json!(vouch::hex::encode(&other));
            });
            for r in both(&l, &t, &o) {
                expect(
                    &r,
                    seq,
                    want,
                    &format!("prev of {i}, auditor {with_auditor}"),
                );
            }
            named += usize::from(want.is_some());
            unnamed += usize::from(want.is_none());
        }
    }
    // Both outcomes occur: the matrix is not vacuous.
    assert!(named > 40 && unnamed >= 4, "{named} named, {unnamed} not");
}

#[test]
fn the_last_records_prev_changed_is_not_named_without_a_record_after_it() {
    let l = log(5, 100);
    let records = lines(&l.bytes);
    // The log ends with event 4 (no checkpoint records at all).
    let last = records.len() - 1;
    let t = rewrite(&l.bytes, last, |v| {
        v["prev"] = json!(vouch::hex::encode(&leaf_hash(b"x")));
    });
    for r in both(&l, &t, &opts(&l, &[&l.key], true)) {
        expect(&r, last as u64, None, "last prev");
    }
}

/// Appends a checkpoint record signed by `key`, committing to `root` at
/// the log's current size, as a forger with write access would.
fn append_checkpoint(bytes: &[u8], key: &SignerKey, root: Hash) -> Vec<u8> {
    let records = lines(bytes);
    let last = bytes[..bytes.len() - 1]
        .rsplit(|&b| b == b'\n')
        .next()
        .unwrap();
    let size = records.len() as u64;
    let text = vouch::note::checkpoint::Checkpoint {
        origin: ORIGIN.into(),
        size,
        root,
        extensions: Vec::new(),
    }
    .to_text();
    let note = vouch::note::sign(&text, &[key]).unwrap();
    let mut out = bytes.to_vec();
    record::encode(
        &NewRecord {
            origin: ORIGIN,
            seq: size,
            prev: leaf_hash(last),
            ts: "2026-12-02T12:00:00.000Z",
            kind: "checkpoint",
            body: &json!({ "note": note }),
        },
        &mut out,
    )
    .unwrap();
    out.push(b'\n');
    out
}

#[test]
fn only_a_trusted_checkpoint_names_a_record() {
    let l = log(6, 100);
    let original: Vec<Hash> = l
        .bytes
        .split(|&b| b == b'\n')
        .filter(|x| !x.is_empty())
        .map(leaf_hash)
        .collect();
    // Record 2's content changed; a checkpoint at the end commits to the
    // original leaves (the tree with record 2 as record 3's prev names it).
    let t = rewrite(&l.bytes, 2, |v| v["body"]["i"] = json!("changed"));
    let root = vouch::merkle::root(&original);
    let size = original.len() as u64;

    // Signed by the log's key: record 2 is named.
    let signed = append_checkpoint(&t, &l.key, root);
    let o = opts(&l, &[&l.key], false);
    for r in both(&l, &signed, &o) {
        expect(
            &r,
            3,
            Some(Changed {
                seq: 2,
                checkpoint_size: size,
            }),
            "trusted",
        );
    }
    // The same checkpoint by another log's key, or by a key of this
    // origin the auditor did not give: nothing is named.
    let other = SignerKey::from_seed("example.com/other", &[1u8; 32]).unwrap();
    let stranger = SignerKey::from_seed(ORIGIN, &[2u8; 32]).unwrap();
    for (key, trusted) in [(&other, vec![&l.key, &other]), (&stranger, vec![&l.key])] {
        let forged = append_checkpoint(&t, key, root);
        let o = opts(&l, &trusted, false);
        for r in both(&l, &forged, &o) {
            expect(&r, 3, None, "forged");
        }
    }
    // No trusted key at all: the link is still broken, nothing is named.
    let o = VerifyOptions::default();
    for r in both(&l, &signed, &o) {
        expect(&r, 3, None, "no keys");
    }
}

mod support;

/// The README's first command: record 6 of `db-1.jsonl` was rewritten.
#[test]
fn the_example_fleet_names_record_6() {
    let root = env!("CARGO_MANIFEST_DIR");
    let args = ["verify", "examples/", "--pub", "examples/keys.pub"];
    let o = support::vouch_at(&args, Path::new(root));
    assert_eq!(support::code(&o), 1);
    let table = support::stdout(&o);
    let row = table.lines().find(|l| l.contains("db-1")).unwrap();
    assert!(row.contains("between records 6 and 7"), "{row}");
    assert!(row.contains("record 6 was changed"), "{row}");
    let mut json_args = args.to_vec();
    json_args.extend(["--format", "json"]);
    let v = support::json(&support::vouch_at(&json_args, Path::new(root)));
    let db1 = v["logs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["origin"] == "example.com/db-1")
        .unwrap();
    assert_eq!(db1["failure"]["reason"], "broken_link");
    assert_eq!(db1["failure"]["seq"], 7);
    assert_eq!(db1["failure"]["between"], json!([6, 7]));
    assert_eq!(db1["failure"]["changed"]["seq"], 6);
}

/// A detached checkpoint signed by a key of the log's origin that the
/// auditor does not trust never names a record, even when the log's own
/// trusted checkpoint of the same size names another.
#[test]
fn an_untrusted_auditor_checkpoint_names_nothing() {
    let l = log(8, 8);
    let records = lines(&l.bytes);
    let n = records.len(); // 8 events and the checkpoint record at seq 8
    // Record 4's prev changed: record 4 was changed, and the log's own
    // checkpoint (seq 8, size 8) shows it.
    let t = rewrite(&l.bytes, 4, |v| {
        v["prev"] = json!(vouch::hex::encode(&leaf_hash(b"y")));
    });
    // The attacker signs, with a fresh key of the same origin, the tree in
    // which leaf 3 is record 4's new prev: it would blame record 3.
    let mut leaves: Vec<Hash> = t
        .split(|&b| b == b'\n')
        .filter(|x| !x.is_empty())
        .map(leaf_hash)
        .take(8)
        .collect();
    leaves[3] = leaf_hash(b"y");
    let evil = SignerKey::from_seed(ORIGIN, &[66u8; 32]).unwrap();
    let text = vouch::note::checkpoint::Checkpoint {
        origin: ORIGIN.into(),
        size: 8,
        root: vouch::merkle::root(&leaves),
        extensions: Vec::new(),
    }
    .to_text();
    let note = vouch::note::sign(&text, &[&evil]).unwrap();
    let evil_path = l.path.with_file_name("evil.checkpoint");
    std::fs::write(&evil_path, note).unwrap();
    let trusted = vouch::chain::TrustedKeys::new([l.key.verifier()]).unwrap();
    let o = VerifyOptions {
        checkpoints: vec![verify::load_auditor_checkpoint(&evil_path, &trusted).unwrap()],
        trusted,
        ..Default::default()
    };
    assert!(n >= 9);
    for r in both(&l, &t, &o) {
        expect(
            &r,
            4,
            Some(Changed {
                seq: 4,
                checkpoint_size: 8,
            }),
            "untrusted auditor checkpoint",
        );
    }
}

/// A resumed run (`--state`) names the changed record too.
#[test]
fn a_resumed_run_names_the_changed_record() {
    let w = support::workdir();
    let run = |args: &[&str]| support::vouch_at(args, w.path());
    assert_eq!(
        support::code(&run(&["keygen", "--origin", ORIGIN, "--out", "k"])),
        0
    );
    for i in 0..20 {
        assert_eq!(
            support::code(&run(&[
                "append",
                "L",
                "--key",
                "k",
                &format!("{{\"i\":{i}}}")
            ])),
            0
        );
        if i % 5 == 4 {
            assert_eq!(support::code(&run(&["checkpoint", "L", "--key", "k"])), 0);
        }
    }
    let verify = [
        "verify", "L", "--pub", "k.pub", "--state", "S", "--format", "json",
    ];
    assert_eq!(support::code(&run(&verify)), 0);
    let path = w.path().join("L");
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(
        &path,
        rewrite(&bytes, 6, |v| v["body"]["i"] = json!("changed")),
    )
    .unwrap();
    let o = run(&verify);
    assert_eq!(support::code(&o), 1);
    let v = support::json(&o);
    let f = &v["logs"][0]["failure"];
    assert_eq!(f["reason"], "broken_link", "{v}");
    assert_eq!(f["between"], json!([6, 7]), "{v}");
    assert_eq!(f["changed"]["seq"], 6, "{v}");
}
