//! End-to-end tests of `vouch receipt` and `vouch receipt verify`
//! (`vouch-receipt/2`) through the real binary: the verdict lattice for
//! dir, S3, TSA, hash-only and unanchored receipts, offline and `--online`;
//! specific tampering with its reason codes; receipts crafted from genuine
//! signed pieces of the log (valid proofs, wrong combination); and a tamper
//! matrix generated over every member of five kinds of receipt.
//!
//! The online checks against changed targets (deleted, replaced, weakened
//! objects, endpoints) are in tests/receipt_online.rs.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod anchor_support;
mod support;
mod tsa_support;

use anchor_support::*;
use base64::Engine;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn b64() -> base64::engine::GeneralPurpose {
    base64::engine::general_purpose::STANDARD
}

/// A log of 5 records anchored to a dir target (checkpoint record 5 of
/// size 5, anchor record 6, covering checkpoint 7 of size 7), then 2 more
/// records (8, 9). Returns the log and the `dir:` target.
fn anchored() -> (Work, String) {
    let w = Work::new(5);
    let d = w.path("worm");
    std::fs::create_dir(&d).unwrap();
    let t = format!("dir:{}", d.display());
    let o = w.anchor(&["--to", &t]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let out = json(&o);
    assert_eq!(out["checkpoint_seq"], 5, "{out}");
    assert_eq!(out["anchor_record_seq"], 6, "{out}");
    assert_eq!(out["covering_checkpoint_seq"], 7, "{out}");
    w.append(2);
    (w, t)
}

fn make(w: &Work, seq: u64, extra: &[&str]) -> PathBuf {
    let out = w.path(&format!("receipt-{seq}-{}.json", extra.join("")));
    let seq = seq.to_string();
    let mut args = vec![
        "receipt",
        Work::s(&w.log),
        "--seq",
        &seq,
        "--out",
        Work::s(&out),
    ];
    args.extend_from_slice(extra);
    let o = vouch(&args);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    out
}

fn verify(w: &Work, receipt: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "receipt",
        "verify",
        Work::s(receipt),
        "--pub",
        Work::s(&w.pubkey),
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    vouch(&args)
}

fn read(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

fn write(w: &Work, name: &str, v: &Value) -> PathBuf {
    let p = w.path(name);
    std::fs::write(&p, serde_json::to_vec_pretty(v).unwrap()).unwrap();
    p
}

/// The piece names of a `receipt verify --format json` document.
fn piece_names(out: &Value) -> Vec<String> {
    out["pieces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["piece"].as_str().unwrap().to_owned())
        .collect()
}

/// The piece called `name`.
fn piece<'a>(out: &'a Value, name: &str) -> &'a Value {
    out["pieces"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["piece"] == name)
        .unwrap_or_else(|| panic!("no piece {name}: {out}"))
}

/// Removes the immutable attribute below `dir` (the dir target sets it when
/// run as root) so the test can change the files.
fn unlock(dir: &Path) {
    let _ = std::process::Command::new("chattr")
        .args(["-R", "-i"])
        .arg(dir)
        .stderr(std::process::Stdio::null())
        .status();
}

#[test]
fn dir_anchored_receipt_is_a_locator_offline_and_complete_online() {
    let (w, t) = anchored();
    let r = make(&w, 2, &[]);
    let doc = read(&r);
    assert_eq!(doc["format"], "vouch-receipt/2");
    assert_eq!(doc["seq"], 2);
    assert_eq!(doc["proof"]["tree_size"], 5);
    assert_eq!(doc["leaf_hash"].as_str().unwrap().len(), 64);
    let anchors = doc["anchors"].as_array().unwrap();
    assert_eq!(anchors.len(), 1);
    // The anchor record is the log's line 6, verbatim.
    assert_eq!(anchors[0]["record"], w.lines()[6].as_str());
    assert!(!anchors[0]["proof"].as_array().unwrap().is_empty());
    // Bound by the covering checkpoint (the log's line 7) of size 7.
    let binding = doc["anchor_binding"]["checkpoint"].as_str().unwrap();
    let line7: Value = serde_json::from_str(&w.lines()[7]).unwrap();
    assert_eq!(line7["body"]["note"], binding);
    assert_eq!(binding.lines().nth(1), Some("7"));

    // Offline the dir anchor is a locator: claimed, not checked (exit 1,
    // 0 only with --allow-unanchored).
    let o = verify(&w, &r, &[]);
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    let out = json(&o);
    assert_eq!(out["format"], "vouch-receipt-verify/2");
    assert_eq!(out["verdict"], "anchor_not_checked");
    assert_eq!(out["reason"], "anchor_not_checked");
    assert_eq!(out["exit_code"], 1);
    assert_eq!(
        piece_names(&out),
        [
            "record",
            "checkpoint",
            "proof",
            "binding",
            "anchor record 0",
            "anchor 0.0 dir"
        ]
    );
    for p in [
        "record",
        "checkpoint",
        "proof",
        "binding",
        "anchor record 0",
    ] {
        assert_eq!(piece(&out, p)["status"], "verified", "{p}: {out}");
    }
    let dir_piece = piece(&out, "anchor 0.0 dir");
    assert_eq!(dir_piece["status"], "not_checked");
    assert_eq!(dir_piece["reason"], "offline");
    let o = verify(&w, &r, &["--allow-unanchored"]);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    assert_eq!(json(&o)["verdict"], "anchor_not_checked");

    // Online, with the anchor directory allowed: complete. The receipt is
    // self-contained: the log is not needed.
    let copy = w.path("r.json");
    std::fs::copy(&r, &copy).unwrap();
    std::fs::remove_file(&w.log).unwrap();
    let o = verify(&w, &copy, &["--online", "--from", &t]);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    let out = json(&o);
    assert_eq!(out["verdict"], "complete");
    assert!(out["reason"].is_null(), "{out}");
    assert_eq!(out["exit_code"], 0);
    let dir_piece = piece(&out, "anchor 0.0 dir");
    assert_eq!(dir_piece["status"], "verified");
    let detail = dir_piece["detail"].as_str().unwrap();
    assert!(detail.contains("mode 444"), "{detail}");
    // Table output names the verdict.
    let o = vouch(&[
        "receipt",
        "verify",
        Work::s(&copy),
        "--pub",
        Work::s(&w.pubkey),
        "--online",
        "--from",
        &t,
    ]);
    assert_eq!(code(&o), 0);
    assert!(stdout(&o).contains("verdict: complete"), "{}", stdout(&o));
    // Online but with another directory allowed: not followed.
    let elsewhere = w.path("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let o = verify(
        &w,
        &copy,
        &[
            "--online",
            "--from",
            &format!("dir:{}", elsewhere.display()),
        ],
    );
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    let out = json(&o);
    assert_eq!(out["verdict"], "anchor_not_checked");
    assert_eq!(piece(&out, "anchor 0.0 dir")["reason"], "outside_targets");
    // With the anchor directory gone, online: rejected, anchor missing.
    unlock(&w.path("worm"));
    std::fs::remove_dir_all(w.path("worm")).unwrap();
    std::fs::create_dir(w.path("worm")).unwrap();
    let o = verify(&w, &copy, &["--online", "--from", &t]);
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    let out = json(&o);
    assert_eq!(out["verdict"], "rejected");
    assert_eq!(out["reason"], "anchor_missing");
    // Offline it is still the same locator.
    assert_eq!(
        json(&verify(&w, &copy, &[]))["verdict"],
        "anchor_not_checked"
    );
}

#[test]
#[cfg(feature = "s3")]
fn s3_receipt_is_a_locator_offline_and_checked_online() {
    let Some(m) = Moto::start() else { return };
    m.lock_bucket("receipts");
    let w = Work::new(4);
    let o = w.anchor(&[
        "--to",
        "s3://receipts/x",
        "--endpoint",
        &m.endpoint,
        "--retain-days",
        "1",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let r = make(&w, 0, &[]);
    let doc = read(&r);
    let record: Value =
        serde_json::from_str(doc["anchors"][0]["record"].as_str().unwrap()).unwrap();
    let entry = &record["body"]["anchors"][0];
    assert_eq!(entry["type"], "s3");
    assert_eq!(entry["lock_mode"], "COMPLIANCE");
    assert_eq!(entry["endpoint"], m.endpoint.as_str());
    let endpoint = m.endpoint.clone();
    let online = [
        "--online",
        "--from",
        "s3://receipts/x",
        "--endpoint",
        &endpoint,
    ];
    let o = verify(&w, &r, &online);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    let out = json(&o);
    assert_eq!(out["verdict"], "complete");
    let s3 = piece(&out, "anchor 0.0 s3");
    assert_eq!(s3["status"], "verified");
    assert!(
        s3["detail"]
            .as_str()
            .unwrap()
            .contains("locked COMPLIANCE until"),
        "{s3}"
    );
    // Offline: a locator, not checked.
    let o = verify(&w, &r, &[]);
    assert_eq!(code(&o), 1);
    let out = json(&o);
    assert_eq!(out["verdict"], "anchor_not_checked");
    assert_eq!(piece(&out, "anchor 0.0 s3")["reason"], "offline");
    // Server gone: nothing rejected, nothing verified, the target could
    // not be asked: exit 2, even with --allow-unanchored.
    drop(m);
    let o = verify(&w, &r, &online);
    assert_eq!(code(&o), 2, "{}", stdout(&o));
    let out = json(&o);
    assert_eq!(out["verdict"], "anchor_not_checked");
    assert_eq!(out["exit_code"], 2);
    assert_eq!(piece(&out, "anchor 0.0 s3")["status"], "error");
    let mut allow = online.to_vec();
    allow.push("--allow-unanchored");
    assert_eq!(code(&verify(&w, &r, &allow)), 2);
    // Offline it still is what it was.
    assert_eq!(code(&verify(&w, &r, &["--allow-unanchored"])), 0);
}

#[test]
fn online_without_targets_is_a_missing_option() {
    let (w, _t) = anchored();
    let r = make(&w, 2, &[]);
    let o = verify(&w, &r, &["--online"]);
    assert_eq!(code(&o), 2, "{}", stdout(&o));
    assert_eq!(json(&o)["error"]["code"], "missing_option");
    // A targets file with nothing in it is no target either.
    let empty = w.path("targets");
    std::fs::write(&empty, "# nothing\n\n").unwrap();
    let o = verify(&w, &r, &["--online", "--targets", Work::s(&empty)]);
    assert_eq!(code(&o), 2, "{}", stdout(&o));
    assert_eq!(json(&o)["error"]["code"], "missing_option");
    // --from without --online is refused by the parser.
    let o = verify(&w, &r, &["--from", "dir:/tmp"]);
    assert_eq!(code(&o), 2);
}

#[test]
fn unanchored_receipt_is_signed_not_anchored() {
    let w = Work::new(3);
    w.checkpoint();
    let r = make(&w, 1, &[]);
    let doc = read(&r);
    assert!(doc["anchors"].as_array().unwrap().is_empty());
    assert!(doc.get("anchor_binding").is_none());
    let o = verify(&w, &r, &[]);
    assert_eq!(code(&o), 1);
    let out = json(&o);
    assert_eq!(out["verdict"], "signed_not_anchored");
    assert_eq!(out["reason"], "not_anchored");
    assert_eq!(piece_names(&out), ["record", "checkpoint", "proof"]);
    let o = verify(&w, &r, &["--allow-unanchored"]);
    assert_eq!(code(&o), 0);
    assert_eq!(json(&o)["verdict"], "signed_not_anchored");
    // --online changes nothing: there is nothing to fetch.
    let o = verify(
        &w,
        &r,
        &[
            "--online",
            "--from",
            &format!("dir:{}", w.dir.path().display()),
        ],
    );
    assert_eq!(code(&o), 1);
    assert_eq!(json(&o)["verdict"], "signed_not_anchored");
}

#[test]
fn receipt_uses_the_latest_anchored_checkpoint_not_a_later_unanchored_one() {
    let (w, t) = anchored();
    w.checkpoint(); // seq 10, size 10: not anchored
    let doc = read(&make(&w, 1, &[]));
    assert_eq!(doc["proof"]["tree_size"], 5);
    assert_eq!(doc["anchors"].as_array().unwrap().len(), 1);
    // A record after the anchored checkpoint gets the later one, unanchored.
    let doc = read(&make(&w, 7, &[]));
    assert_eq!(doc["proof"]["tree_size"], 10);
    assert!(doc["anchors"].as_array().unwrap().is_empty());
    // Anchoring again: the log's last record is the checkpoint of size 10,
    // which is anchored (record 11) and covered (checkpoint 12, size 12).
    let o = w.anchor(&["--to", &t]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    for seq in [1, 7] {
        let r = make(&w, seq, &[]);
        let doc = read(&r);
        assert_eq!(doc["proof"]["tree_size"], 10, "{seq}");
        assert_eq!(doc["anchors"][0]["record"], w.lines()[11].as_str());
        assert_eq!(
            doc["anchor_binding"]["checkpoint"]
                .as_str()
                .unwrap()
                .lines()
                .nth(1),
            Some("12")
        );
        let o = verify(&w, &r, &["--online", "--from", &t]);
        assert_eq!(code(&o), 0, "{seq}: {}", stdout(&o));
    }
}

#[test]
fn hash_only_receipt_and_given_record_line() {
    let (w, t) = anchored();
    let online = ["--online", "--from", t.as_str()];
    let r = make(&w, 3, &["--hash-only"]);
    let doc = read(&r);
    assert!(doc.get("record").is_none());
    // The same receipt as a full one, less the line.
    let full = make(&w, 3, &[]);
    let mut full_doc = read(&full);
    assert_eq!(full_doc["record"], w.lines()[3].as_str());
    full_doc.as_object_mut().unwrap().remove("record");
    assert_eq!(full_doc, doc);
    // Without the line: record not checked, exit 1 even when everything
    // else verifies and with --allow-unanchored.
    let mut all = online.to_vec();
    all.push("--allow-unanchored");
    let o = verify(&w, &r, &all);
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    let out = json(&o);
    assert_eq!(out["verdict"], "record_not_checked");
    assert_eq!(out["reason"], "record_not_checked");
    assert_eq!(piece(&out, "record")["status"], "not_checked");
    assert_eq!(piece(&out, "proof")["status"], "verified");
    assert_eq!(piece(&out, "anchor 0.0 dir")["status"], "verified");
    // With the line (a final newline is ignored): complete online.
    let line = w.lines()[3].clone();
    let good = w.path("line");
    std::fs::write(&good, format!("{line}\n")).unwrap();
    let mut with_line = online.to_vec();
    with_line.extend_from_slice(&["--record", Work::s(&good)]);
    let o = verify(&w, &r, &with_line);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    assert_eq!(json(&o)["verdict"], "complete");
    // Offline with the line: the anchor is still only claimed.
    let o = verify(&w, &r, &["--record", Work::s(&good)]);
    assert_eq!(code(&o), 1);
    assert_eq!(json(&o)["verdict"], "anchor_not_checked");
    // Another record's line.
    let bad = w.path("other-line");
    std::fs::write(&bad, &w.lines()[2]).unwrap();
    let o = verify(&w, &r, &["--record", Work::s(&bad)]);
    assert_eq!(code(&o), 1);
    let out = json(&o);
    assert_eq!(out["verdict"], "rejected");
    assert_eq!(out["reason"], "record_mismatch", "{out}");
    // The right line with one byte changed.
    let changed = w.path("changed-line");
    std::fs::write(&changed, line.replace("\"i\":3", "\"i\":4")).unwrap();
    let o = verify(&w, &r, &["--record", Work::s(&changed)]);
    assert_eq!(code(&o), 1);
    assert_eq!(json(&o)["reason"], "leaf_mismatch");
    // A full receipt and a different given line disagree.
    let o = verify(&w, &full, &["--record", Work::s(&bad)]);
    assert_eq!(code(&o), 1);
    assert_eq!(json(&o)["reason"], "record_mismatch");
    // A full receipt and its own line agree.
    let o = verify(&w, &full, &["--record", Work::s(&good)]);
    assert_eq!(json(&o)["verdict"], "anchor_not_checked");
}

/// Flips one character of a base64 or hex string.
fn flip(s: &str, at: usize) -> String {
    let mut b = s.as_bytes().to_vec();
    b[at] = if b[at] == b'A' { b'B' } else { b'A' };
    String::from_utf8(b).unwrap()
}

#[test]
fn tampered_receipts_are_rejected_with_the_right_reason() {
    let (w, t) = anchored();
    let doc = read(&make(&w, 2, &[]));
    let note = doc["checkpoint"].as_str().unwrap().to_owned();
    let binding = doc["anchor_binding"]["checkpoint"]
        .as_str()
        .unwrap()
        .to_owned();
    let sig_line_start = note.rfind("— ").unwrap();
    let sig_at = note.len() - 10;
    let mut cases: Vec<(&str, Value, &str)> = Vec::new();
    let mut v = doc.clone();
    v["proof"]["hashes"][0] = Value::String(flip(doc["proof"]["hashes"][0].as_str().unwrap(), 3));
    cases.push(("proof hash", v, "inclusion_failed"));
    let mut v = doc.clone();
    v["proof"]["hashes"].as_array_mut().unwrap().pop();
    cases.push(("proof hash removed", v, "inclusion_failed"));
    let mut v = doc.clone();
    v["checkpoint"] = Value::String(format!("{}{}", &note[..sig_at], flip(&note[sig_at..], 0)));
    cases.push(("note signature", v, "bad_signature"));
    let mut v = doc.clone();
    let root_at = note.find('\n').unwrap() + 3;
    v["checkpoint"] = Value::String(format!(
        "{}{}",
        &note[..root_at + 2],
        flip(&note[root_at + 2..], 0)
    ));
    cases.push(("note root", v, "bad_signature"));
    let mut v = doc.clone();
    v["checkpoint"] = Value::String(note[..sig_line_start].to_owned());
    cases.push(("note unsigned", v, "bad_checkpoint"));
    let mut v = doc.clone();
    let rec = doc["record"]
        .as_str()
        .unwrap()
        .replace("\"i\":2", "\"i\":9");
    v["record"] = Value::String(rec);
    cases.push(("record body", v, "leaf_mismatch"));
    let mut v = doc.clone();
    let leaf = doc["leaf_hash"].as_str().unwrap();
    let first = if leaf.starts_with('0') { "1" } else { "0" };
    v["leaf_hash"] = Value::String(format!("{first}{}", &leaf[1..]));
    cases.push(("leaf hash", v, "leaf_mismatch"));
    let mut v = doc.clone();
    v["seq"] = Value::from(1);
    cases.push(("seq", v, "record_mismatch"));
    let mut v = doc.clone();
    v["proof"]["tree_size"] = Value::from(6);
    cases.push(("tree size", v, "bad_checkpoint"));
    let mut v = doc.clone();
    v["leaf_hash"] = Value::String(leaf.to_uppercase());
    cases.push(("leaf hash not lowercase hex", v, "bad_receipt"));
    // The anchor side.
    let mut v = doc.clone();
    let a = doc["anchors"][0]["record"].as_str().unwrap();
    v["anchors"][0]["record"] = Value::String(a.replace("\"mode\":292", "\"mode\":420"));
    cases.push(("anchor record field", v, "inclusion_failed"));
    let mut v = doc.clone();
    let p0 = doc["anchors"][0]["proof"][0].as_str().unwrap();
    v["anchors"][0]["proof"][0] = Value::String(flip(p0, 5));
    cases.push(("anchor record proof", v, "inclusion_failed"));
    let mut v = doc.clone();
    let c0 = doc["anchor_binding"]["consistency"][0].as_str().unwrap();
    v["anchor_binding"]["consistency"][0] = Value::String(flip(c0, 5));
    cases.push(("consistency proof", v, "consistency_failed"));
    let mut v = doc.clone();
    let bsig = binding.len() - 10;
    v["anchor_binding"]["checkpoint"] =
        Value::String(format!("{}{}", &binding[..bsig], flip(&binding[bsig..], 0)));
    cases.push(("binding signature", v, "bad_signature"));
    let mut v = doc.clone();
    v["anchor_binding"]["checkpoint"] = Value::String(note.clone());
    cases.push(("binding is the checkpoint itself", v, "consistency_failed"));
    let mut v = doc.clone();
    v["anchor_binding"]["checkpoint"] = Value::String(note.clone());
    v["anchor_binding"]["consistency"] = json!([]);
    cases.push((
        "binding is the checkpoint itself, empty consistency proof",
        v,
        "index_out_of_range",
    ));
    let mut v = doc.clone();
    v.as_object_mut().unwrap().remove("anchor_binding");
    cases.push(("binding removed", v, "bad_receipt"));
    let mut v = doc.clone();
    v["anchors"] = json!([]);
    cases.push(("anchors removed, binding kept", v, "bad_receipt"));
    let mut v = doc.clone();
    v["anchors"][0]["record"] = Value::String(w.lines()[7].clone());
    cases.push((
        "a checkpoint record as anchor record",
        v,
        "bad_anchor_record",
    ));
    let mut v = doc.clone();
    v["format"] = Value::String("vouch-receipt/1".into());
    cases.push(("old format", v, "bad_receipt"));
    let mut v = doc.clone();
    v["anchors"][0]["target"] = json!({"type": "dir"});
    cases.push(("v1 member", v, "bad_receipt"));
    for online in [false, true] {
        for (name, v, want) in &cases {
            let p = write(&w, "tampered.json", v);
            let args: &[&str] = if online {
                &["--online", "--from", &t]
            } else {
                &[]
            };
            let o = verify(&w, &p, args);
            assert_eq!(code(&o), 1, "{name}: {}", stdout(&o));
            let out = json(&o);
            assert_eq!(out["verdict"], "rejected", "{name}: {out}");
            assert_eq!(out["reason"], *want, "{name} (online {online}): {out}");
            assert_eq!(out["exit_code"], 1, "{name}: {out}");
        }
    }
    // The wrong key.
    let other = w.path("other");
    assert_eq!(
        code(&vouch(&[
            "keygen",
            "--origin",
            ORIGIN,
            "--out",
            Work::s(&other)
        ])),
        0
    );
    let p = write(&w, "good.json", &doc);
    let o = vouch(&[
        "receipt",
        "verify",
        Work::s(&p),
        "--pub",
        &format!("{}.pub", other.display()),
        "--format",
        "json",
    ]);
    assert_eq!(code(&o), 1);
    assert_eq!(json(&o)["reason"], "unknown_key");
}

#[test]
fn garbled_receipts_are_rejected_and_bad_requests_exit_2() {
    let (w, _t) = anchored();
    // A receipt is evidence: one that does not parse is rejected (exit 1),
    // never reported as a usage error.
    // Not a receipt: a verdict document with one failed piece, no origin
    // or seq (nothing of the file is shown as the receipt's).
    let not_a_receipt = |p: &Path| {
        let o = verify(&w, p, &[]);
        assert_eq!(code(&o), 1, "{}", stdout(&o));
        let out = json(&o);
        assert_eq!(out["verdict"], "rejected", "{out}");
        assert_eq!(out["reason"], "bad_receipt", "{out}");
        assert_eq!(out["exit_code"], 1, "{out}");
        assert!(out["origin"].is_null() && out["seq"].is_null(), "{out}");
        assert_eq!(piece_names(&out), ["receipt"]);
        assert_eq!(piece(&out, "receipt")["status"], "failed");
        // The table says so too.
        let o = vouch(&["receipt", "verify", Work::s(p), "--pub", Work::s(&w.pubkey)]);
        assert_eq!(code(&o), 1);
        assert!(
            stdout(&o).contains("verdict: rejected (bad_receipt)"),
            "{}",
            stdout(&o)
        );
    };
    let garbage = w.path("garbage.json");
    std::fs::write(&garbage, b"\x00\xffnot json").unwrap();
    not_a_receipt(&garbage);
    let other = write(&w, "other-format.json", &json!({"format": "x"}));
    not_a_receipt(&other);
    let v1 = write(
        &w,
        "v1.json",
        &json!({"format": "vouch-receipt/1", "seq": 1}),
    );
    not_a_receipt(&v1);
    // Over 4 MiB: not read as a receipt.
    let big = w.path("big.json");
    std::fs::write(&big, vec![b' '; (4 << 20) + 1]).unwrap();
    not_a_receipt(&big);
    // A file that cannot be read is an operational error.
    let o = verify(&w, &w.path("missing.json"), &[]);
    assert_eq!(code(&o), 2);
    assert!(json(&o)["error"]["code"].is_string());
    // No such record; records not covered by any checkpoint (the last
    // checkpoint, record 7, has size 7).
    let o = vouch(&["receipt", Work::s(&w.log), "--seq", "99"]);
    assert_eq!(code(&o), 2);
    for seq in ["7", "9"] {
        let o = vouch(&["receipt", Work::s(&w.log), "--seq", seq]);
        assert_eq!(code(&o), 2, "{seq}");
        assert!(stderr(&o).contains("not covered"), "{}", stderr(&o));
    }
    // The anchor record itself is covered by the covering checkpoint, not
    // by an anchored one: an unanchored receipt.
    let r = make(&w, 6, &[]);
    assert_eq!(read(&r)["proof"]["tree_size"], 7);
    assert_eq!(json(&verify(&w, &r, &[]))["verdict"], "signed_not_anchored");
}

// Regression (found by the tamper matrix): a forged record line whose
// `leaf_hash` was recomputed passes the record piece's own checks (a valid
// record with the receipt's seq and origin, hashing to leaf_hash); only the
// proof fails. The record piece must then not be shown as verified (it is
// `not_proven`), only once the proof holds.
#[test]
fn a_forged_record_line_is_not_shown_as_verified() {
    let (w, _t) = anchored();
    let mut doc = read(&make(&w, 2, &[]));
    let forged = doc["record"]
        .as_str()
        .unwrap()
        .replace("\"i\":2", "\"i\":666");
    let leaf = vouch::hex::encode(&vouch::merkle::leaf_hash(forged.as_bytes()));
    doc["record"] = json!(forged);
    doc["leaf_hash"] = json!(leaf);
    let p = write(&w, "forged.json", &doc);
    let o = verify(&w, &p, &[]);
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    let out = json(&o);
    assert_eq!(out["verdict"], "rejected");
    assert_eq!(out["reason"], "inclusion_failed");
    assert_eq!(piece(&out, "proof")["status"], "failed");
    // A hash-only receipt and the forged line given with --record.
    let mut h = read(&make(&w, 2, &["--hash-only"]));
    h["leaf_hash"] = json!(leaf);
    let hp = write(&w, "forged-hash-only.json", &h);
    let line = w.path("forged-line");
    std::fs::write(&line, &forged).unwrap();
    let o2 = verify(&w, &hp, &["--record", Work::s(&line)]);
    assert_eq!(code(&o2), 1, "{}", stdout(&o2));
    let out2 = json(&o2);
    assert_eq!(out2["verdict"], "rejected");
    for out in [&out, &out2] {
        for p in out["pieces"].as_array().unwrap() {
            if p["status"] == "verified" {
                assert!(
                    !p["detail"].as_str().unwrap().contains(&leaf),
                    "the forged line's leaf hash is shown as verified by piece {}: {out}",
                    p["piece"]
                );
            }
        }
        assert_ne!(
            piece(out, "record")["status"],
            "verified",
            "a line that is not in the log is reported as a verified record: {out}"
        );
    }
}

#[test]
fn tsa_anchored_receipt_verifies_offline_and_rejects_a_tampered_token() {
    let Some(tsa) = local_tsa("tsa_receipt") else {
        return;
    };
    let roots = Work::s(&tsa.roots);
    let w = Work::new(4);
    let o = w.anchor(&["--to", &format!("tsa:{}", tsa.url), "--tsa-ca", roots]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    let r = make(&w, 1, &[]);
    let o = verify(&w, &r, &["--tsa-ca", roots]);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    let out = json(&o);
    assert_eq!(out["verdict"], "complete");
    let p = piece(&out, "anchor 0.0 tsa");
    assert_eq!(p["status"], "verified");
    let detail = p["detail"].as_str().unwrap().to_owned();
    assert!(detail.contains("RFC 3161 token verified"), "{detail}");
    assert!(detail.contains("Anchor Test TSA"), "{detail}");
    assert!(detail.contains("sha256"), "{detail}");
    // Without roots the token is not checked and does not count.
    let o = verify(&w, &r, &[]);
    assert_eq!(code(&o), 1);
    let out = json(&o);
    assert_eq!(out["verdict"], "anchor_not_checked");
    assert_eq!(piece(&out, "anchor 0.0 tsa")["reason"], "no_tsa_roots");
    // Against other roots the token does not verify: rejected.
    let o = verify(&w, &r, &["--tsa-ca", Work::s(&tsa.other_roots)]);
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    let out = json(&o);
    assert_eq!(out["verdict"], "rejected");
    assert_eq!(piece(&out, "anchor 0.0 tsa")["status"], "failed");

    // Regression (issue 9): the fields shown as verified come from the
    // verified token. In v2 the copies in the anchor record are covered by
    // its inclusion proof, so a record whose copies lie does not bind at
    // all, and nothing of it is shown as verified.
    let doc = read(&r);
    let line = doc["anchors"][0]["record"].as_str().unwrap().to_owned();
    let mut rec: Value = serde_json::from_str(&line).unwrap();
    let entry = &mut rec["body"]["anchors"][0];
    let real_signer = entry["signer"].as_str().unwrap().to_owned();
    entry["signer"] = Value::String("CN=DigiCert Timestamp 2025".into());
    entry["imprint_alg"] = Value::String("md5".into());
    entry["url"] = Value::String("https://tsa.evil.example".into());
    entry["serial"] = Value::String("deadbeef".into());
    let mut lying = doc.clone();
    lying["anchors"][0]["record"] = Value::String(serde_json::to_string(&rec).unwrap());
    let p = write(&w, "lying-fields.json", &lying);
    let o = verify(&w, &p, &["--tsa-ca", roots]);
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    let out = json(&o);
    assert_eq!(out["verdict"], "rejected");
    assert_eq!(piece(&out, "anchor record 0")["reason"], "inclusion_failed");
    for p in out["pieces"].as_array().unwrap() {
        let d = p["detail"].as_str().unwrap();
        if p["status"] == "verified" {
            for lie in ["DigiCert", "md5", "evil", "deadbeef"] {
                assert!(!d.contains(lie), "{lie} shown as verified: {out}");
            }
        }
    }
    assert!(!real_signer.contains("DigiCert"));

    // A tampered token: one byte of the DER changed inside the record
    // line breaks the record's inclusion before the token is even read.
    let token = rec_token(&line);
    let mut der = b64().decode(&token).unwrap();
    let at = der.len() - 40; // inside the signature
    der[at] ^= 0x01;
    let mut doc2 = doc.clone();
    doc2["anchors"][0]["record"] = Value::String(line.replace(&token, &b64().encode(&der)));
    let p = write(&w, "tampered-token.json", &doc2);
    let o = verify(&w, &p, &["--tsa-ca", roots]);
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    let out = json(&o);
    assert_eq!(out["verdict"], "rejected");
    assert_eq!(out["reason"], "inclusion_failed");

    // A token over another log's checkpoint, with that log's whole anchor
    // side: another origin and another key; it binds nothing here.
    let other = Work::new(2);
    let o = other.anchor(&["--to", &format!("tsa:{}", tsa.url), "--tsa-ca", roots]);
    assert_eq!(code(&o), 0);
    let foreign = read(&make(&other, 0, &[]));
    let mut doc3 = doc.clone();
    doc3["anchors"] = foreign["anchors"].clone();
    doc3["anchor_binding"] = foreign["anchor_binding"].clone();
    let p = write(&w, "foreign-anchor.json", &doc3);
    let o = verify(&w, &p, &["--tsa-ca", roots]);
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    assert_eq!(json(&o)["verdict"], "rejected");
}

/// The `token` of the first entry of an anchor record line.
fn rec_token(line: &str) -> String {
    let rec: Value = serde_json::from_str(line).unwrap();
    rec["body"]["anchors"][0]["token"]
        .as_str()
        .unwrap()
        .to_owned()
}

// ------------------------------------------- receipts made of genuine pieces

/// The lines of a log, their leaf hashes and the signed note of each
/// checkpoint record (by seq).
struct LogPieces {
    lines: Vec<String>,
    leaves: Vec<[u8; 32]>,
    notes: std::collections::BTreeMap<u64, String>,
}

impl LogPieces {
    fn of(w: &Work) -> Self {
        let lines = w.lines();
        let leaves = lines
            .iter()
            .map(|l| vouch::merkle::leaf_hash(l.as_bytes()))
            .collect();
        let mut notes = std::collections::BTreeMap::new();
        for (i, l) in lines.iter().enumerate() {
            let v: Value = serde_json::from_str(l).unwrap();
            if v["kind"] == "checkpoint" {
                notes.insert(i as u64, v["body"]["note"].as_str().unwrap().to_owned());
            }
        }
        LogPieces {
            lines,
            leaves,
            notes,
        }
    }

    /// The note of the checkpoint of tree size `size`.
    fn note_of_size(&self, size: u64) -> String {
        self.notes
            .values()
            .find(|n| n.lines().nth(1) == Some(size.to_string().as_str()))
            .unwrap_or_else(|| panic!("no checkpoint of size {size}"))
            .clone()
    }

    fn inclusion(&self, index: u64, size: u64) -> Vec<String> {
        vouch::merkle::inclusion_proof(&self.leaves[..size as usize], index)
            .unwrap()
            .iter()
            .map(|h| b64().encode(h))
            .collect()
    }

    fn consistency(&self, old: u64, new: u64) -> Vec<String> {
        vouch::merkle::consistency_proof(&self.leaves[..new as usize], old)
            .unwrap()
            .iter()
            .map(|h| b64().encode(h))
            .collect()
    }

    /// A receipt for `seq` under the checkpoint of size `size`, with the
    /// anchor records `anchors` (seqs) proven under the checkpoint of size
    /// `binding` (consistent with `size`): every proof is correct.
    fn receipt(&self, seq: u64, size: u64, anchors: &[u64], binding: Option<u64>) -> Value {
        let mut v = json!({
            "format": "vouch-receipt/2",
            "origin": ORIGIN,
            "seq": seq,
            "record": self.lines[seq as usize],
            "leaf_hash": vouch::hex::encode(&self.leaves[seq as usize]),
            "proof": {"tree_size": size, "hashes": self.inclusion(seq, size)},
            "checkpoint": self.note_of_size(size),
            "anchors": anchors.iter().map(|a| json!({
                "record": self.lines[*a as usize],
                "proof": self.inclusion(*a, binding.unwrap()),
            })).collect::<Vec<_>>(),
        });
        if let Some(l) = binding {
            v["anchor_binding"] = json!({
                "checkpoint": self.note_of_size(l),
                "consistency": self.consistency(size, l),
            });
        }
        v
    }
}

/// Receipts made only of genuine, correctly proven pieces of one log, put
/// together wrongly: an anchor record of another checkpoint, a receipt
/// checkpoint that is not the anchored one. Each must be rejected; a
/// correct receipt with another (later) binding checkpoint verifies.
#[test]
fn receipts_crafted_from_genuine_pieces() {
    let (w, t) = anchored();
    // Checkpoint 10 (size 10) anchored by record 11, covered by checkpoint
    // 12 (size 12); then 2 more records and checkpoint 15 (size 15).
    let o = w.anchor(&["--to", &t]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let out = json(&o);
    assert_eq!(out["size"], 10, "{out}");
    assert_eq!(out["anchor_record_seq"], 11, "{out}");
    w.append(2);
    w.checkpoint();
    let log = LogPieces::of(&w);
    assert_eq!(log.lines.len(), 16);
    let online = ["--online", "--from", t.as_str()];
    let check = |name: &str, v: &Value, want: Option<&str>| {
        let p = write(&w, &format!("crafted-{}.json", name.replace(' ', "-")), v);
        for args in [&[][..], &online[..]] {
            let o = verify(&w, &p, args);
            let out = json(&o);
            match want {
                Some(reason) => {
                    assert_eq!(code(&o), 1, "{name}: {out}");
                    assert_eq!(out["verdict"], "rejected", "{name}: {out}");
                    assert_eq!(out["reason"], reason, "{name}: {out}");
                }
                None => {
                    let expect = if args.is_empty() { 1 } else { 0 };
                    assert_eq!(code(&o), expect, "{name}: {out}");
                }
            }
        }
    };
    // The builder's receipt, rebuilt here: the proofs are right. It uses
    // the latest anchored checkpoint (10); the one of checkpoint 5 is as
    // valid.
    let honest = log.receipt(2, 10, &[11], Some(12));
    assert_eq!(honest, read(&make(&w, 2, &[])));
    check("honest", &honest, None);
    check(
        "honest, first anchor",
        &log.receipt(2, 5, &[6], Some(7)),
        None,
    );
    // Any later trusted checkpoint binds the anchor record as well.
    check("later binding", &log.receipt(2, 5, &[6], Some(15)), None);
    check("later binding 12", &log.receipt(2, 5, &[6], Some(12)), None);
    // The anchor record of checkpoint 10 given for checkpoint 5.
    check(
        "anchor of another checkpoint",
        &log.receipt(2, 5, &[11], Some(12)),
        Some("anchor_mismatch"),
    );
    // Both: one anchor of this checkpoint, one of another: rejected.
    check(
        "one anchor of another checkpoint",
        &log.receipt(2, 5, &[6, 11], Some(12)),
        Some("anchor_mismatch"),
    );
    // The receipt's checkpoint is 7 (covering, not anchored), with the
    // anchor record of checkpoint 5.
    check(
        "anchor of an earlier checkpoint",
        &log.receipt(2, 7, &[6], Some(12)),
        Some("anchor_mismatch"),
    );
    // A checkpoint record or an event record given as anchor record.
    check(
        "checkpoint record as anchor",
        &log.receipt(2, 5, &[7], Some(12)),
        Some("bad_anchor_record"),
    );
    check(
        "event record as anchor",
        &log.receipt(2, 5, &[8], Some(12)),
        Some("bad_anchor_record"),
    );
    // The binding checkpoint before the anchor record.
    let mut v = log.receipt(2, 5, &[], None);
    // (No proof of record 6 exists under size 5; the seq is refused first.)
    v["anchors"] = json!([{"record": log.lines[6], "proof": []}]);
    v["anchor_binding"] = json!({"checkpoint": log.note_of_size(5), "consistency": []});
    check("binding before the anchor", &v, Some("index_out_of_range"));
    // A consistency proof to another checkpoint than the one given.
    let mut v = log.receipt(2, 5, &[6], Some(7));
    v["anchor_binding"]["consistency"] = json!(log.consistency(5, 12));
    check(
        "consistency to another size",
        &v,
        Some("consistency_failed"),
    );
    // The anchor record proven under another checkpoint than the binding.
    let mut v = log.receipt(2, 5, &[6], Some(7));
    v["anchors"][0]["proof"] = json!(log.inclusion(6, 12));
    check(
        "anchor proof under another size",
        &v,
        Some("inclusion_failed"),
    );
    // An inclusion proof of another leaf.
    let mut v = log.receipt(2, 5, &[6], Some(7));
    v["proof"]["hashes"] = json!(log.inclusion(3, 5));
    check("proof of another leaf", &v, Some("inclusion_failed"));
}

// ------------------------------------------------------------ tamper matrix
//
// For five kinds of receipt, every leaf and member of the receipt JSON is
// edited (characters at many positions of every string: inside the record
// line, the anchor record lines, the notes, the base64 proofs and tokens;
// numbers +-1 and of the wrong type; every member deleted and duplicated;
// an unknown member at every object level; array elements removed, swapped,
// reordered, duplicated; the binding checkpoint replaced) and verified in
// each mode. Each edit must be rejected (exit 1, `rejected` or
// `bad_receipt`) unless it is one of these explained classes:
//
// - the JSON form only (members reordered, whitespace, `\/` and `\u`
//   escapes): the same JSON value, so exactly the untampered report;
// - `record` deleted or null: a hash-only receipt, so exactly the report
//   of the honest hash-only receipt of the same record (and the true line
//   added to a hash-only receipt: exactly the full receipt's report);
// - the anchor record repeated: the same authenticated record twice; the
//   untampered verdict and exit code, and only pieces it has;
// - `anchors` emptied and `anchor_binding` removed together: a receipt
//   that claims no anchor, `signed_not_anchored` (`record_not_checked` for
//   hash-only), with the record, checkpoint and proof pieces only.
//
// No other edit may leave the untampered verdict or a stronger one, and no
// piece reported `verified` may show anything the untampered receipt does
// not (so nothing shown as verified comes from an edited copy); the only
// exceptions are genuine signed pieces moved elsewhere, which show what
// they are (listed per edit). In v2 a time-stamp token
// lies inside the anchor record line, which its inclusion proof covers, so
// no byte of it (signed or unsigned part of the TSA response) can change
// harmlessly: those edits must be rejected too.

/// The verdict lattice, weakest first; `bad_receipt` counts as rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Strength {
    Rejected,
    RecordNotChecked,
    SignedNotAnchored,
    AnchorNotChecked,
    Complete,
}

fn strength(verdict: &str) -> Strength {
    match verdict {
        "rejected" => Strength::Rejected,
        "record_not_checked" => Strength::RecordNotChecked,
        "signed_not_anchored" => Strength::SignedNotAnchored,
        "anchor_not_checked" => Strength::AnchorNotChecked,
        "complete" => Strength::Complete,
        v => panic!("unknown verdict {v}"),
    }
}

/// What `receipt verify --format json` answered.
#[derive(Clone, Debug, PartialEq)]
struct Report {
    exit: i32,
    /// The JSON document's own exit_code.
    doc_exit: Option<i64>,
    verdict: Option<String>,
    reason: Option<String>,
    error: Option<String>,
    /// (piece, status, detail).
    pieces: Vec<(String, String, String)>,
}

impl Report {
    fn of(o: &std::process::Output) -> Report {
        let v: Value = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
        let s = |v: &Value| v.as_str().map(str::to_owned);
        Report {
            exit: code(o),
            doc_exit: v["exit_code"].as_i64(),
            verdict: s(&v["verdict"]),
            reason: s(&v["reason"]),
            error: s(&v["error"]["code"]),
            pieces: v["pieces"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|p| {
                            (
                                s(&p["piece"]).unwrap_or_default(),
                                s(&p["status"]).unwrap_or_default(),
                                s(&p["detail"]).unwrap_or_default(),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default(),
        }
    }

    fn strength(&self) -> Option<Strength> {
        match (&self.verdict, &self.error) {
            (Some(v), _) => Some(strength(v)),
            (None, Some(e)) if e == "bad_receipt" => Some(Strength::Rejected),
            _ => None,
        }
    }

    fn verified(&self) -> BTreeSet<&str> {
        self.pieces
            .iter()
            .filter(|p| p.1 == "verified")
            .map(|p| p.2.as_str())
            .collect()
    }

    fn short(&self) -> String {
        format!(
            "exit {} verdict {:?} reason {:?} error {:?}",
            self.exit, self.verdict, self.reason, self.error
        )
    }
}

/// The honest receipt whose report an edit must reproduce exactly.
#[derive(Clone, Copy, Debug)]
enum Ref {
    /// The receipt under test (the edit changes only its JSON form).
    Subject,
    /// The full receipt for the same record (the true line added).
    Full,
    /// The hash-only receipt for the same record (the line removed).
    HashOnly,
}

#[derive(Clone, Debug)]
enum Expect {
    /// Exit 1, verdict `rejected` or `bad_receipt`.
    Reject,
    /// Exactly the report of a reference receipt; the reason says why.
    Like(Ref, &'static str),
    /// The same anchor record twice: the verdict and exit code of the
    /// subject, and only pieces the subject has.
    Repeated(&'static str),
    /// Anchors and binding removed: the lattice says what remains.
    Unanchored(&'static str),
}

impl Expect {
    /// Why an edit that is not rejected is allowed.
    fn why(&self) -> &'static str {
        match self {
            Expect::Reject => "tampered evidence is rejected",
            Expect::Like(_, why) | Expect::Repeated(why) | Expect::Unanchored(why) => why,
        }
    }
}

struct Edit {
    what: String,
    text: String,
    expect: Expect,
    /// Verified piece details allowed beyond the subject's (prefixes):
    /// genuine signed pieces moved elsewhere show what they are.
    allow: Vec<String>,
}

struct Mode {
    name: &'static str,
    args: Vec<String>,
}

impl Mode {
    fn new(name: &'static str, args: &[&str]) -> Mode {
        Mode {
            name,
            args: args.iter().map(|s| s.to_string()).collect(),
        }
    }
    fn allow_unanchored(&self) -> bool {
        self.args.iter().any(|a| a == "--allow-unanchored")
    }
    fn gives_record(&self) -> bool {
        self.args.iter().any(|a| a == "--record")
    }
}

/// One receipt to tamper with and the modes to verify it in, with the
/// verdict the untampered receipt must get in each.
struct Scenario<'a> {
    name: &'static str,
    w: &'a Work,
    subject: Value,
    full: Value,
    hash_only: Value,
    /// Every line of the log.
    lines: Vec<String>,
    modes: Vec<(Mode, &'static str)>,
}

// ---- JSON text writers

#[derive(Default)]
struct Writer {
    reverse: bool,
    /// Written around every structural character.
    ws: &'static str,
    /// Writes `(key, raw value)` first in the object at this pointer, before
    /// its own members: a duplicate member.
    dup: Option<(String, String, String)>,
}

impl Writer {
    fn write(&self, v: &Value, ptr: &str, out: &mut String) {
        match v {
            Value::Object(m) => {
                self.punct('{', out);
                let mut first = true;
                if let Some((p, k, raw)) = &self.dup
                    && p == ptr
                {
                    out.push_str(&serde_json::to_string(k).unwrap());
                    self.punct(':', out);
                    out.push_str(raw);
                    first = false;
                }
                let mut members: Vec<_> = m.iter().collect();
                if self.reverse {
                    members.reverse();
                }
                for (k, x) in members {
                    if !first {
                        self.punct(',', out);
                    }
                    first = false;
                    out.push_str(&serde_json::to_string(k).unwrap());
                    self.punct(':', out);
                    self.write(x, &format!("{ptr}/{k}"), out);
                }
                self.punct('}', out);
            }
            Value::Array(a) => {
                self.punct('[', out);
                for (i, x) in a.iter().enumerate() {
                    if i > 0 {
                        self.punct(',', out);
                    }
                    self.write(x, &format!("{ptr}/{i}"), out);
                }
                self.punct(']', out);
            }
            _ => out.push_str(&serde_json::to_string(v).unwrap()),
        }
    }

    fn punct(&self, c: char, out: &mut String) {
        out.push_str(self.ws);
        out.push(c);
        out.push_str(self.ws);
    }

    fn text(&self, v: &Value) -> String {
        let mut s = String::new();
        self.write(v, "", &mut s);
        s
    }
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap()
}

/// Every JSON pointer in `v`, the root ("") first.
fn pointers(v: &Value, ptr: String, out: &mut Vec<String>) {
    out.push(ptr.clone());
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                pointers(x, format!("{ptr}/{k}"), out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                pointers(x, format!("{ptr}/{i}"), out);
            }
        }
        _ => {}
    }
}

fn edited(doc: &Value, f: impl FnOnce(&mut Value)) -> Value {
    let mut v = doc.clone();
    f(&mut v);
    v
}

/// A different character of the same kind.
fn bump(c: char) -> char {
    match c {
        '0'..='8' | 'a'..='y' | 'A'..='Y' => (c as u8 + 1) as char,
        '9' => '0',
        'z' => 'a',
        'Z' => 'A',
        '+' => '/',
        '/' => '+',
        '=' => 'A',
        '\n' => ' ',
        ' ' => '_',
        '"' => '\'',
        '\\' => '/',
        _ => 'x',
    }
}

/// Substrings after which a character is changed (and 2 characters
/// later): the members of record lines and anchor bodies, the lines of
/// notes (escaped inside record lines), the signature line.
const MARKERS: &[&str] = &[
    "\"seq\":",
    "\"origin\":\"",
    "\"kind\":\"",
    "\"prev\":\"",
    "\"ts\":\"",
    "\"v\":",
    "\"body\":{",
    "\"i\":",
    "\"note\":\"",
    "\"note_sha256\":\"",
    "\"root\":\"",
    "\"size\":",
    "\"anchors\":[",
    "\"type\":\"",
    "\"dir\":\"",
    "\"file\":\"",
    "\"mode\":",
    "\"immutable\":",
    "\"gen_time\":\"",
    "\"imprint_alg\":\"",
    "\"serial\":\"",
    "\"policy\":\"",
    "\"signer\":\"",
    "\"url\":\"",
    "\"endpoint\":\"",
    "\"region\":\"",
    "\"bucket\":\"",
    "\"key\":\"",
    "\"version_id\":\"",
    "\"etag\":\"",
    "\"checksum_sha256\":\"",
    "\"lock_mode\":\"",
    "\"retain_until\":\"",
    "\"legal_hold\":",
    "\"request_id\":\"",
    "\n",
    "\\n",
    "— ",
];

/// Character positions at which to change `s`.
fn positions(s: &str) -> BTreeSet<usize> {
    let starts: Vec<usize> = s.char_indices().map(|(b, _)| b).collect();
    let n = starts.len();
    let char_at = |byte: usize| starts.partition_point(|&b| b < byte);
    let mut p = BTreeSet::new();
    if n == 0 {
        return p;
    }
    for at in [0, 1, n / 3, n / 2, 2 * n / 3, n.saturating_sub(2), n - 1] {
        p.insert(at.min(n - 1));
    }
    for m in MARKERS {
        for (b, _) in s.match_indices(m).take(6) {
            let c = char_at(b + m.len());
            for at in [c, c + 2] {
                if at < n {
                    p.insert(at);
                }
            }
        }
    }
    // The signature: the key id (first 4 bytes) and the signature bytes.
    if let Some(b) = s.rfind("— ") {
        let c = char_at(b);
        let rest: String = s[b..].chars().collect();
        if let Some(sp) = rest[4..].find(' ') {
            let sig = c + rest[..4 + sp].chars().count() + 1;
            for at in [sig, sig + 3, sig + 5, sig + 10, sig + 40, sig + 80] {
                if at < n {
                    p.insert(at);
                }
            }
        }
    }
    // A time-stamp token: 12 places spread over it.
    for key in ["\"token\":\"", "\\\"token\\\":\\\""] {
        if let Some(b) = s.find(key) {
            let start = b + key.len();
            let len = s[start..].find(['"', '\\']).unwrap_or(0);
            for k in 0..12 {
                p.insert(char_at(start + len * k / 12));
            }
        }
    }
    p
}

fn change_char(s: &str, at: usize) -> String {
    s.chars()
        .enumerate()
        .map(|(i, c)| if i == at { bump(c) } else { c })
        .collect()
}

/// Every edit of the scenario's subject receipt.
fn edits(sc: &Scenario) -> Vec<Edit> {
    let doc = &sc.subject;
    let mut out = Vec::new();
    let o = &mut out;
    let mut ptrs = Vec::new();
    pointers(doc, String::new(), &mut ptrs);
    for ptr in &ptrs {
        let node = doc.pointer(ptr).unwrap().clone();
        let set = |x: Value| edited(doc, |v| *v.pointer_mut(ptr).unwrap() = x);
        match &node {
            Value::String(s) => {
                for at in positions(s) {
                    let c = s.chars().nth(at).unwrap();
                    add(
                        o,
                        format!("{ptr}: char {at} {c:?} changed"),
                        &set(Value::String(change_char(s, at))),
                        Expect::Reject,
                    );
                }
                add(o, format!("{ptr}: empty"), &set(json!("")), Expect::Reject);
                add(
                    o,
                    format!("{ptr}: a number"),
                    &set(json!(0)),
                    Expect::Reject,
                );
                // `null` is not an absent member: refused everywhere,
                // `record` included (found by an independent attack).
                add(o, format!("{ptr}: null"), &set(Value::Null), Expect::Reject);
                if s.len() > 1 {
                    add(
                        o,
                        format!("{ptr}: last char removed"),
                        &set(Value::String(
                            s[..s.len() - s.chars().last().unwrap().len_utf8()].into(),
                        )),
                        Expect::Reject,
                    );
                    add(
                        o,
                        format!("{ptr}: a space appended"),
                        &set(Value::String(format!("{s} "))),
                        Expect::Reject,
                    );
                }
            }
            Value::Number(n) => {
                let n = n.as_u64().unwrap();
                add(o, format!("{ptr}: +1"), &set(json!(n + 1)), Expect::Reject);
                let minus = if n == 0 { json!(-1) } else { json!(n - 1) };
                add(o, format!("{ptr}: -1"), &set(minus), Expect::Reject);
                add(
                    o,
                    format!("{ptr}: as a string"),
                    &set(json!(n.to_string())),
                    Expect::Reject,
                );
                add(
                    o,
                    format!("{ptr}: as a float"),
                    &set(json!(n as f64 + 0.5)),
                    Expect::Reject,
                );
                add(o, format!("{ptr}: null"), &set(Value::Null), Expect::Reject);
            }
            Value::Object(m) => {
                for (k, x) in m {
                    let child = format!("{ptr}/{k}");
                    let expect = if child == "/record" {
                        Expect::Like(Ref::HashOnly, "without its line a receipt is hash-only")
                    } else {
                        Expect::Reject
                    };
                    add(
                        o,
                        format!("{child}: deleted"),
                        &edited(doc, |v| {
                            v.pointer_mut(ptr)
                                .unwrap()
                                .as_object_mut()
                                .unwrap()
                                .remove(k);
                        }),
                        expect,
                    );
                    // Duplicate members: the same value, and another value
                    // first (a reader taking the first would see it).
                    let raw = serde_json::to_string(x).unwrap();
                    for (how, dup) in [("same", raw.clone()), ("other", other_raw(x))] {
                        o.push(Edit {
                            what: format!("{child}: duplicated ({how} value first)"),
                            text: Writer {
                                dup: Some((ptr.clone(), k.clone(), dup)),
                                ..Default::default()
                            }
                            .text(doc),
                            expect: Expect::Reject,
                            allow: Vec::new(),
                        });
                    }
                }
                add(
                    o,
                    format!("{ptr}/x_unknown: added"),
                    &edited(doc, |v| {
                        v.pointer_mut(ptr).unwrap()["x_unknown"] = json!(1);
                    }),
                    Expect::Reject,
                );
            }
            Value::Array(a) => {
                let is_anchors = ptr == "/anchors";
                let arr = |f: &dyn Fn(&mut Vec<Value>)| {
                    edited(doc, |v| {
                        f(v.pointer_mut(ptr).unwrap().as_array_mut().unwrap())
                    })
                };
                if a.len() >= 2 {
                    add(
                        o,
                        format!("{ptr}: 0 and 1 swapped"),
                        &arr(&|x| x.swap(0, 1)),
                        Expect::Reject,
                    );
                }
                if a.len() >= 3 {
                    add(
                        o,
                        format!("{ptr}: reversed"),
                        &arr(&|x| x.reverse()),
                        Expect::Reject,
                    );
                    add(
                        o,
                        format!("{ptr}: rotated"),
                        &arr(&|x| x.rotate_left(1)),
                        Expect::Reject,
                    );
                }
                for i in 0..a.len() {
                    add(
                        o,
                        format!("{ptr}: element {i} removed"),
                        &arr(&|x| {
                            x.remove(i);
                        }),
                        Expect::Reject,
                    );
                }
                if !a.is_empty() {
                    let dup = if is_anchors {
                        Expect::Repeated(
                            "the same authenticated anchor record twice claims nothing new",
                        )
                    } else {
                        Expect::Reject
                    };
                    add(
                        o,
                        format!("{ptr}: last element repeated"),
                        &arr(&|x| x.push(x[x.len() - 1].clone())),
                        dup.clone(),
                    );
                    add(
                        o,
                        format!("{ptr}: first element repeated in front"),
                        &arr(&|x| x.insert(0, x[0].clone())),
                        dup,
                    );
                    add(
                        o,
                        format!("{ptr}: emptied"),
                        &arr(&|x| x.clear()),
                        Expect::Reject,
                    );
                } else if is_anchors {
                    // No anchor to copy: a record line with an empty proof.
                    let line = sc.lines[0].clone();
                    add(
                        o,
                        format!("{ptr}: an anchor without binding added"),
                        &arr(&|x| x.push(json!({"record": line, "proof": []}))),
                        Expect::Reject,
                    );
                }
            }
            _ => {}
        }
    }
    // Swaps and replacements across members.
    let cp = doc["checkpoint"].clone();
    if let Some(binding) = doc.get("anchor_binding") {
        let bcp = binding["checkpoint"].clone();
        let bsize: u64 = bcp
            .as_str()
            .unwrap()
            .lines()
            .nth(1)
            .unwrap()
            .parse()
            .unwrap();
        add(
            o,
            "binding checkpoint := the receipt checkpoint".into(),
            &edited(doc, |v| v["anchor_binding"]["checkpoint"] = cp.clone()),
            Expect::Reject,
        );
        add(
            o,
            "checkpoint := the binding checkpoint".into(),
            &edited(doc, |v| v["checkpoint"] = bcp.clone()),
            Expect::Reject,
        );
        add(
            o,
            "checkpoint and binding checkpoint swapped".into(),
            &edited(doc, |v| {
                v["checkpoint"] = bcp.clone();
                v["anchor_binding"]["checkpoint"] = cp.clone();
            }),
            Expect::Reject,
        );
        // A genuine checkpoint verifies as what it is: its own size and root.
        let mut e = Edit {
            what: "checkpoint := the binding checkpoint, tree_size := its size".into(),
            text: pretty(&edited(doc, |v| {
                v["checkpoint"] = bcp.clone();
                v["proof"]["tree_size"] = json!(bsize);
            })),
            expect: Expect::Reject,
            allow: vec![format!("{ORIGIN} size {bsize} root ")],
        };
        if bsize == 0 {
            e.allow.clear();
        }
        o.push(e);
        o.push(Edit {
            what: "anchor_binding.consistency := the inclusion proof".into(),
            text: pretty(&edited(doc, |v| {
                v["anchor_binding"]["consistency"] = v["proof"]["hashes"].clone();
            })),
            expect: Expect::Reject,
            allow: Vec::new(),
        });
        o.push(Edit {
            what: "anchors and anchor_binding removed".into(),
            text: pretty(&edited(doc, |v| {
                v["anchors"] = json!([]);
                v.as_object_mut().unwrap().remove("anchor_binding");
            })),
            expect: Expect::Unanchored("a receipt that claims no anchor claims less"),
            allow: Vec::new(),
        });
        // The anchor record proven as the receipt's record: a genuine
        // record (shown as what it is), but not under this checkpoint.
        let a = doc["anchors"][0]["record"].as_str().unwrap().to_owned();
        let aseq = serde_json::from_str::<Value>(&a).unwrap()["seq"]
            .as_u64()
            .unwrap();
        o.push(Edit {
            what: "record := the anchor record (seq, leaf_hash to match)".into(),
            text: pretty(&edited(doc, |v| {
                v["record"] = json!(a);
                v["seq"] = json!(aseq);
                v["leaf_hash"] = json!(vouch::hex::encode(&vouch::merkle::leaf_hash(a.as_bytes())));
            })),
            expect: Expect::Reject,
            allow: vec![format!("record {aseq} (anchor), leaf ")],
        });
    }
    // Another record of the log with its own seq and leaf hash under this
    // proof; the line with a newline.
    let seq = doc["seq"].as_u64().unwrap() as usize;
    let line = sc.lines[seq].clone();
    let other = (seq + 1) % sc.lines.len();
    let other_line = sc.lines[other].clone();
    let other_kind = serde_json::from_str::<Value>(&other_line).unwrap()["kind"]
        .as_str()
        .unwrap()
        .to_owned();
    o.push(Edit {
        what: format!("record := record {other} (seq, leaf_hash to match)"),
        text: pretty(&edited(doc, |v| {
            v["record"] = json!(other_line);
            v["seq"] = json!(other);
            v["leaf_hash"] = json!(vouch::hex::encode(&vouch::merkle::leaf_hash(
                other_line.as_bytes()
            )));
        })),
        expect: Expect::Reject,
        allow: vec![format!("record {other} ({other_kind}), leaf ")],
    });
    add(
        o,
        "record := the line with its newline".into(),
        &edited(doc, |v| v["record"] = json!(format!("{line}\n"))),
        Expect::Reject,
    );
    // A forged line (one character changed) with leaf_hash recomputed to
    // match: only the inclusion proof can tell. (Also for a hash-only
    // receipt, where the line is added.)
    for at in positions(&line).into_iter().step_by(2) {
        let forged = change_char(&line, at);
        let leaf = vouch::hex::encode(&vouch::merkle::leaf_hash(forged.as_bytes()));
        o.push(Edit {
            what: format!("record forged at char {at}, leaf_hash recomputed"),
            text: pretty(&edited(doc, |v| {
                v["record"] = json!(forged);
                v["leaf_hash"] = json!(leaf);
            })),
            expect: Expect::Reject,
            allow: Vec::new(),
        });
    }
    if doc.get("record").is_none() {
        add(
            o,
            "record added: the true line".into(),
            &edited(doc, |v| v["record"] = json!(line)),
            Expect::Like(
                Ref::Full,
                "the true line hashes to the proven leaf: the full receipt",
            ),
        );
        for at in positions(&line).into_iter().step_by(3) {
            add(
                o,
                format!("record added: the true line, char {at} changed"),
                &edited(doc, |v| v["record"] = json!(change_char(&line, at))),
                Expect::Reject,
            );
        }
    }
    add(
        o,
        "leaf_hash in uppercase".into(),
        &edited(doc, |v| {
            v["leaf_hash"] = json!(v["leaf_hash"].as_str().unwrap().to_uppercase())
        }),
        Expect::Reject,
    );
    add(
        o,
        "format := vouch-receipt/1".into(),
        &edited(doc, |v| v["format"] = json!("vouch-receipt/1")),
        Expect::Reject,
    );
    // JSON form only: the same receipt.
    let compact = serde_json::to_string(doc).unwrap();
    for (what, text) in [
        (
            "members in reverse order",
            Writer {
                reverse: true,
                ..Default::default()
            }
            .text(doc),
        ),
        ("no whitespace", compact.clone()),
        ("'/' written as \\/", compact.replace('/', "\\/")),
        ("non-ASCII written as \\u escapes", ascii_escaped(&compact)),
        (
            "whitespace around everything",
            Writer {
                ws: " \n\t\r ",
                ..Default::default()
            }
            .text(doc),
        ),
    ] {
        o.push(Edit {
            what: what.into(),
            text,
            expect: Expect::Like(Ref::Subject, "the same JSON value: the same receipt"),
            allow: Vec::new(),
        });
    }
    out
}

fn add(out: &mut Vec<Edit>, what: String, v: &Value, expect: Expect) {
    out.push(Edit {
        what,
        text: pretty(v),
        expect,
        allow: Vec::new(),
    })
}

/// Another value of the same type as `x`, as JSON text.
fn other_raw(x: &Value) -> String {
    match x {
        Value::String(s) if !s.is_empty() => serde_json::to_string(&change_char(s, 0)).unwrap(),
        Value::Number(n) => (n.as_u64().unwrap() + 1).to_string(),
        Value::Array(a) if !a.is_empty() => {
            serde_json::to_string(&a[..a.len() - 1].to_vec()).unwrap()
        }
        Value::Array(_) => "[\"AAAA\"]".into(),
        _ => "{}".into(),
    }
}

/// JSON text with every non-ASCII character inside strings written as
/// `\uXXXX` (surrogate pairs above U+FFFF).
fn ascii_escaped(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut buf = [0u16; 2];
            for u in c.encode_utf16(&mut buf) {
                out.push_str(&format!("\\u{u:04x}"));
            }
        }
    }
    out
}

/// The exit code the lattice gives a verdict (no operational error).
fn exit_for(verdict: Strength, allow_unanchored: bool) -> i32 {
    match verdict {
        Strength::Complete => 0,
        Strength::SignedNotAnchored | Strength::AnchorNotChecked if allow_unanchored => 0,
        _ => 1,
    }
}

/// Runs `receipt verify` on every (text, mode), 4 at a time.
fn run_all(w: &Work, jobs: &[(&str, &Mode)]) -> Vec<Report> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = std::sync::Mutex::new(vec![None; jobs.len()]);
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let Some((text, mode)) = jobs.get(i) else {
                        break;
                    };
                    let p = w.path(&format!("matrix-{i}.json"));
                    std::fs::write(&p, text).unwrap();
                    let args: Vec<&str> = mode.args.iter().map(String::as_str).collect();
                    let r = Report::of(&verify(w, &p, &args));
                    std::fs::remove_file(&p).unwrap();
                    results.lock().unwrap()[i] = Some(r);
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap()
        .into_iter()
        .map(Option::unwrap)
        .collect()
}

/// Checks one edited receipt's report against what is allowed; None when
/// it holds.
fn judge(
    edit: &Edit,
    mode: &Mode,
    got: &Report,
    subject: &Report,
    subject_has_record: bool,
    refs: &[(Ref, &Report)],
) -> Option<String> {
    let mut problems = Vec::new();
    if got.doc_exit.is_some_and(|e| e != got.exit as i64) {
        problems.push(format!(
            "the document says exit {:?}, the process {}",
            got.doc_exit, got.exit
        ));
    }
    if got.pieces.iter().any(|p| p.1 == "error") {
        problems.push("an operational error".into());
    }
    // Nothing shown as verified that the subject does not show (or that
    // a genuine piece moved here shows as what it is).
    // (A report equal to an honest reference receipt's is checked below.)
    let base = subject.verified();
    for d in got.verified() {
        let allowed = base.contains(d)
            || edit.allow.iter().any(|a| d.starts_with(a.as_str()))
            || matches!(edit.expect, Expect::Like(..));
        if !allowed {
            problems.push(format!(
                "shown as verified but not by the untampered receipt: {d:?}"
            ));
        }
    }
    let s = got.strength();
    match &edit.expect {
        Expect::Reject => {
            if got.exit != 1 || s != Some(Strength::Rejected) {
                let stronger = match (s, subject.strength()) {
                    (Some(g), Some(b)) if g >= b => {
                        " [FALSE ACCEPT: not weaker than the untampered receipt]"
                    }
                    _ => "",
                };
                problems.push(format!("not rejected: {}{stronger}", got.short()));
            }
        }
        Expect::Like(r, _) => {
            let want = match r {
                Ref::Subject => subject,
                _ => {
                    refs.iter()
                        .find(|(x, _)| std::mem::discriminant(x) == std::mem::discriminant(r))
                        .unwrap()
                        .1
                }
            };
            if got != want {
                problems.push(format!("not the report of the {r:?} receipt: {} vs {}\n      got pieces {:?}\n      want pieces {:?}", got.short(), want.short(), got.pieces, want.pieces));
            }
        }
        Expect::Repeated(_) => {
            if (got.exit, &got.verdict, &got.reason)
                != (subject.exit, &subject.verdict, &subject.reason)
            {
                problems.push(format!(
                    "not the subject's verdict: {} vs {}",
                    got.short(),
                    subject.short()
                ));
            }
            for p in &got.pieces {
                if !subject.pieces.iter().any(|q| q.1 == p.1 && q.2 == p.2) {
                    problems.push(format!("a piece the subject does not have: {p:?}"));
                }
            }
        }
        Expect::Unanchored(_) => {
            let has_record = subject_has_record || mode.gives_record();
            let want = if has_record {
                Strength::SignedNotAnchored
            } else {
                Strength::RecordNotChecked
            };
            let names: Vec<&str> = got.pieces.iter().map(|p| p.0.as_str()).collect();
            if s != Some(want)
                || got.exit != exit_for(want, mode.allow_unanchored())
                || names != ["record", "checkpoint", "proof"]
            {
                problems.push(format!(
                    "not {want:?} with the record pieces only: {} {names:?}",
                    got.short()
                ));
            }
        }
    }
    (!problems.is_empty()).then(|| problems.join("; "))
}

fn run_matrix(sc: Scenario) {
    let started = std::time::Instant::now();
    let modes: Vec<&Mode> = sc.modes.iter().map(|(m, _)| m).collect();
    // The untampered receipts first: each gets its verdict in each mode.
    let subject_text = pretty(&sc.subject);
    let full_text = pretty(&sc.full);
    let hash_text = pretty(&sc.hash_only);
    let mut base_jobs = Vec::new();
    for m in &modes {
        base_jobs.push((subject_text.as_str(), *m));
        base_jobs.push((full_text.as_str(), *m));
        base_jobs.push((hash_text.as_str(), *m));
    }
    let base = run_all(sc.w, &base_jobs);
    for (i, (m, want)) in sc.modes.iter().enumerate() {
        let subject = &base[3 * i];
        assert_eq!(
            subject.verdict.as_deref(),
            Some(*want),
            "{} {}: untampered: {subject:?}",
            sc.name,
            m.name
        );
        assert_eq!(
            subject.exit,
            exit_for(strength(want), m.allow_unanchored()),
            "{} {}: {subject:?}",
            sc.name,
            m.name
        );
        assert!(
            subject
                .pieces
                .iter()
                .all(|p| p.1 != "failed" && p.1 != "error"),
            "{subject:?}"
        );
    }
    let edits = edits(&sc);
    let mut jobs = Vec::new();
    for e in &edits {
        for m in &modes {
            jobs.push((e.text.as_str(), *m));
        }
    }
    let got = run_all(sc.w, &jobs);
    let mut failures = Vec::new();
    let mut counts = std::collections::BTreeMap::<&str, usize>::new();
    for (k, r) in got.iter().enumerate() {
        let (e, mi) = (&edits[k / modes.len()], k % modes.len());
        let subject = &base[3 * mi];
        let refs = [
            (Ref::Full, &base[3 * mi + 1]),
            (Ref::HashOnly, &base[3 * mi + 2]),
        ];
        *counts
            .entry(match e.expect {
                Expect::Reject => "reject",
                Expect::Like(..) => "like",
                Expect::Repeated(..) => "repeated",
                Expect::Unanchored(..) => "unanchored",
            })
            .or_default() += 1;
        let has_record = sc.subject.get("record").is_some();
        if let Some(p) = judge(e, modes[mi], r, subject, has_record, &refs) {
            failures.push(format!(
                "{} [{}] {} (expected: {}): {p}",
                sc.name,
                modes[mi].name,
                e.what,
                e.expect.why()
            ));
        }
    }
    eprintln!(
        "tamper matrix {}: {} edits x {} modes = {} runs ({counts:?}) in {:.1?}",
        sc.name,
        edits.len(),
        modes.len(),
        jobs.len(),
        started.elapsed()
    );
    assert!(
        edits.len() >= 150,
        "{}: only {} edits",
        sc.name,
        edits.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {} tampered runs of {} broke the rules:\n  {}",
        failures.len(),
        jobs.len(),
        sc.name,
        failures.join("\n  ")
    );
}

/// A TSA root file (unrelated to any anchor) so every mode runs with
/// --tsa-ca, or None without openssl (a panic under CI=true).
fn some_roots(test: &str) -> Option<tsa_support::Pki> {
    if !tsa_support::openssl_or_skip(test) {
        return None;
    }
    Some(tsa_support::Pki::new())
}

fn roots_args(pki: &Option<tsa_support::Pki>) -> Vec<String> {
    match pki {
        Some(p) => {
            let root = p.root("Matrix Root", tsa_support::KeyKind::P256);
            vec!["--tsa-ca".into(), root.cert_pem.display().to_string()]
        }
        None => Vec::new(),
    }
}

fn mode(name: &'static str, base: &[String], extra: &[&str]) -> Mode {
    let mut args: Vec<&str> = base.iter().map(String::as_str).collect();
    args.extend_from_slice(extra);
    Mode::new(name, &args)
}

fn scenario<'a>(
    name: &'static str,
    w: &'a Work,
    seq: u64,
    hash_only: bool,
    modes: Vec<(Mode, &'static str)>,
) -> Scenario<'a> {
    let full = read(&make(w, seq, &[]));
    let h = read(&make(w, seq, &["--hash-only"]));
    Scenario {
        name,
        w,
        subject: if hash_only { h.clone() } else { full.clone() },
        full,
        hash_only: h,
        lines: w.lines(),
        modes,
    }
}

#[test]
fn tamper_matrix_dir_anchor() {
    let (w, t) = anchored();
    let pki = some_roots("tamper_matrix_dir_anchor");
    let roots = roots_args(&pki);
    run_matrix(scenario(
        "dir",
        &w,
        2,
        false,
        vec![
            (mode("offline", &roots, &[]), "anchor_not_checked"),
            (
                mode("online", &roots, &["--online", "--from", &t]),
                "complete",
            ),
        ],
    ));
}

#[test]
fn tamper_matrix_hash_only() {
    let (w, t) = anchored();
    let pki = some_roots("tamper_matrix_hash_only");
    let roots = roots_args(&pki);
    let line = w.path("line-3");
    std::fs::write(&line, format!("{}\n", w.lines()[3])).unwrap();
    run_matrix(scenario(
        "hash-only",
        &w,
        3,
        true,
        vec![
            (
                mode("offline", &roots, &["--allow-unanchored"]),
                "record_not_checked",
            ),
            (
                mode("online", &roots, &["--online", "--from", &t]),
                "record_not_checked",
            ),
            (
                mode(
                    "online --record",
                    &roots,
                    &["--online", "--from", &t, "--record", Work::s(&line)],
                ),
                "complete",
            ),
        ],
    ));
}

#[test]
fn tamper_matrix_unanchored() {
    let w = Work::new(4);
    w.checkpoint();
    w.append(1);
    w.checkpoint();
    let pki = some_roots("tamper_matrix_unanchored");
    let roots = roots_args(&pki);
    run_matrix(scenario(
        "unanchored",
        &w,
        2,
        false,
        vec![
            (mode("offline", &roots, &[]), "signed_not_anchored"),
            (
                mode("offline, allow unanchored", &roots, &["--allow-unanchored"]),
                "signed_not_anchored",
            ),
        ],
    ));
}

#[test]
fn tamper_matrix_tsa_anchor() {
    let Some(tsa) = local_tsa("tamper_matrix_tsa_anchor") else {
        return;
    };
    let w = Work::new(5);
    let roots = Work::s(&tsa.roots);
    let o = w.anchor(&["--to", &format!("tsa:{}", tsa.url), "--tsa-ca", roots]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    w.append(1);
    run_matrix(scenario(
        "tsa",
        &w,
        1,
        false,
        vec![
            (Mode::new("tsa roots", &["--tsa-ca", roots]), "complete"),
            (Mode::new("no tsa roots", &[]), "anchor_not_checked"),
        ],
    ));
}

#[test]
#[cfg(feature = "s3")]
fn tamper_matrix_s3_anchor() {
    let Some(m) = Moto::start() else { return };
    m.lock_bucket("matrix");
    let w = Work::new(5);
    let o = w.anchor(&[
        "--to",
        "s3://matrix/logs",
        "--endpoint",
        &m.endpoint,
        "--retain-days",
        "1",
        "--legal-hold",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let pki = some_roots("tamper_matrix_s3_anchor");
    let roots = roots_args(&pki);
    run_matrix(scenario(
        "s3",
        &w,
        4,
        false,
        vec![
            (mode("offline", &roots, &[]), "anchor_not_checked"),
            (
                mode(
                    "online",
                    &roots,
                    &[
                        "--online",
                        "--from",
                        "s3://matrix/logs",
                        "--endpoint",
                        &m.endpoint,
                    ],
                ),
                "complete",
            ),
        ],
    ));
}
