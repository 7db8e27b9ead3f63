//! End-to-end tests of `vouch receipt` and `vouch receipt verify` through
//! the real binary: complete and unanchored receipts, offline verification
//! with the anchor targets gone, a tamper matrix over every piece, and
//! unreadable input.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod anchor_support;
mod tsa_support;

use anchor_support::*;
use serde_json::Value;

/// A log of 5 records anchored to a dir target, then 2 more records.
fn anchored() -> (Work, String) {
    let w = Work::new(5);
    let d = w.path("worm");
    std::fs::create_dir(&d).unwrap();
    let t = format!("dir:{}", d.display());
    let o = w.anchor(&["--to", &t]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    w.append(2);
    (w, t)
}

fn make(w: &Work, seq: u64, extra: &[&str]) -> std::path::PathBuf {
    let out = w.path(&format!("receipt-{seq}-{}.json", extra.len()));
    let mut args = vec![
        "receipt",
        Work::s(&w.log),
        "--seq",
        Box::leak(seq.to_string().into_boxed_str()),
        "--out",
        Work::s(&out),
    ];
    args.extend_from_slice(extra);
    let o = vouch(&args);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    out
}

fn verify(w: &Work, receipt: &std::path::Path, extra: &[&str]) -> std::process::Output {
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

fn read(p: &std::path::Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

fn write(w: &Work, name: &str, v: &Value) -> std::path::PathBuf {
    let p = w.path(name);
    std::fs::write(&p, serde_json::to_vec_pretty(v).unwrap()).unwrap();
    p
}

#[test]
fn anchored_receipt_is_complete_and_verifies_offline() {
    let (w, _t) = anchored();
    let r = make(&w, 2, &[]);
    let doc = read(&r);
    assert_eq!(doc["format"], "vouch-receipt/1");
    assert_eq!(doc["seq"], 2);
    assert_eq!(doc["proof"]["tree_size"], 5);
    assert_eq!(doc["anchors"].as_array().unwrap().len(), 1);
    assert_eq!(doc["anchors"][0]["target"]["type"], "dir");
    // The receipt is self-contained: remove the log and the anchor target.
    let copy = w.path("r.json");
    std::fs::copy(&r, &copy).unwrap();
    std::fs::remove_file(&w.log).unwrap();
    let _ = std::process::Command::new("chattr")
        .args(["-R", "-i"])
        .arg(w.path("worm"))
        .status();
    std::fs::remove_dir_all(w.path("worm")).unwrap();
    let o = verify(&w, &copy, &[]);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    let out = json(&o);
    assert_eq!(out["verdict"], "complete");
    let pieces: Vec<&str> = out["pieces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["piece"].as_str().unwrap())
        .collect();
    assert_eq!(pieces, ["record", "checkpoint", "proof", "anchor[0] dir"]);
    // Table output names the verdict.
    let o = vouch(&[
        "receipt",
        "verify",
        Work::s(&copy),
        "--pub",
        Work::s(&w.pubkey),
    ]);
    assert_eq!(code(&o), 0);
    assert!(stdout(&o).contains("verdict: complete"));
}

#[test]
#[cfg(feature = "s3")]
fn s3_receipt_verifies_with_the_server_gone() {
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
    assert_eq!(doc["anchors"][0]["target"]["type"], "s3");
    assert_eq!(doc["anchors"][0]["target"]["lock_mode"], "COMPLIANCE");
    drop(m); // no endpoint reachable any more
    let o = verify(&w, &r, &[]);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    assert_eq!(json(&o)["verdict"], "complete");
}

#[test]
fn unanchored_receipt_is_signed_not_anchored() {
    let w = Work::new(3);
    w.checkpoint();
    let r = make(&w, 1, &[]);
    assert!(read(&r)["anchors"].as_array().unwrap().is_empty());
    let o = verify(&w, &r, &[]);
    assert_eq!(code(&o), 1);
    let out = json(&o);
    assert_eq!(out["verdict"], "signed_not_anchored");
    assert_eq!(out["reason"], "not_anchored");
    let o = verify(&w, &r, &["--allow-unanchored"]);
    assert_eq!(code(&o), 0);
    assert_eq!(json(&o)["verdict"], "signed_not_anchored");
}

#[test]
fn receipt_uses_the_anchored_checkpoint_not_a_later_unanchored_one() {
    let (w, _t) = anchored();
    w.checkpoint(); // a later checkpoint, not anchored
    let doc = read(&make(&w, 1, &[]));
    assert_eq!(doc["proof"]["tree_size"], 5);
    assert_eq!(doc["anchors"].as_array().unwrap().len(), 1);
    // A record after the anchored checkpoint gets the later one, unanchored.
    let doc = read(&make(&w, 7, &[]));
    assert!(doc["anchors"].as_array().unwrap().is_empty());
}

#[test]
fn hash_only_receipt_and_given_record_line() {
    let (w, _t) = anchored();
    let r = make(&w, 3, &["--hash-only"]);
    let doc = read(&r);
    assert!(doc.get("record").is_none());
    let o = verify(&w, &r, &[]);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    let line = w.lines()[3].clone();
    let good = w.path("line");
    std::fs::write(&good, format!("{line}\n")).unwrap();
    assert_eq!(code(&verify(&w, &r, &["--record", Work::s(&good)])), 0);
    let bad = w.path("other-line");
    std::fs::write(&bad, &w.lines()[2]).unwrap();
    let o = verify(&w, &r, &["--record", Work::s(&bad)]);
    assert_eq!(code(&o), 1);
    let reason = json(&o)["reason"].as_str().unwrap().to_owned();
    assert!(
        ["record_mismatch", "leaf_mismatch"].contains(&reason.as_str()),
        "{reason}"
    );
    // A full receipt and a different given line disagree.
    let full = make(&w, 3, &[]);
    let o = verify(&w, &full, &["--record", Work::s(&bad)]);
    assert_eq!(code(&o), 1);
    assert_eq!(json(&o)["reason"], "record_mismatch");
}

/// Flips one character of a base64 or hex string.
fn flip(s: &str, at: usize) -> String {
    let mut b = s.as_bytes().to_vec();
    b[at] = if b[at] == b'A' { b'B' } else { b'A' };
    String::from_utf8(b).unwrap()
}

#[test]
fn tampered_receipts_are_rejected_with_the_right_reason() {
    let (w, _t) = anchored();
    let doc = read(&make(&w, 2, &[]));
    let note = doc["checkpoint"].as_str().unwrap().to_owned();
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
    v["anchors"][0]["note_sha256"] = Value::String("00".repeat(32));
    cases.push(("anchor binding", v, "anchor_mismatch"));
    let mut v = doc.clone();
    v["leaf_hash"] = Value::String(leaf.to_uppercase());
    cases.push(("leaf hash not lowercase hex", v, "bad_receipt"));
    for (name, v, want) in cases {
        let p = write(&w, "tampered.json", &v);
        let o = verify(&w, &p, &[]);
        assert_eq!(code(&o), 1, "{name}: {}", stdout(&o));
        let out = json(&o);
        assert_eq!(out["verdict"], "rejected", "{name}");
        assert_eq!(out["reason"], want, "{name}: {out}");
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
    let garbage = w.path("garbage.json");
    std::fs::write(&garbage, b"\x00\xffnot json").unwrap();
    let o = verify(&w, &garbage, &[]);
    assert_eq!(code(&o), 1);
    assert_eq!(json(&o)["error"]["code"], "bad_receipt");
    let o = verify(&w, &w.path("missing.json"), &[]);
    assert_eq!(code(&o), 2);
    let other = write(&w, "other-format.json", &serde_json::json!({"format": "x"}));
    assert_eq!(code(&verify(&w, &other, &[])), 1);
    // No such record; a record not covered by any checkpoint.
    let o = vouch(&["receipt", Work::s(&w.log), "--seq", "99"]);
    assert_eq!(code(&o), 2);
    let o = vouch(&["receipt", Work::s(&w.log), "--seq", "6"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("not covered"), "{}", stderr(&o));
}

#[test]
fn tsa_anchored_receipt_verifies_offline_and_rejects_a_tampered_token() {
    let Some(tsa) = local_tsa("tsa_receipt") else {
        return;
    };
    let w = Work::new(4);
    let o = w.anchor(&[
        "--to",
        &format!("tsa:{}", tsa.url),
        "--tsa-ca",
        Work::s(&tsa.roots),
    ]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    let r = make(&w, 1, &[]);
    let roots = Work::s(&tsa.roots);
    let o = verify(&w, &r, &["--tsa-ca", roots]);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    let out = json(&o);
    assert_eq!(out["verdict"], "complete");
    let piece = &out["pieces"][3];
    assert_eq!(piece["piece"], "anchor[0] tsa");
    assert!(piece["detail"].as_str().unwrap().contains("verified"));
    // Regression (issue 9): the fields shown as verified come from the
    // verified token, never from the receipt's unauthenticated copies.
    let mut lying = read(&r);
    let target = &mut lying["anchors"][0]["target"];
    target["signer"] = Value::String("CN=DigiCert Timestamp 2025".into());
    target["imprint_alg"] = Value::String("md5".into());
    target["url"] = Value::String("https://tsa.evil.example".into());
    target["serial"] = Value::String("deadbeef".into());
    let p = write(&w, "lying-fields.json", &lying);
    let o = verify(&w, &p, &["--tsa-ca", roots]);
    let shown = stdout(&o);
    for lie in ["DigiCert", "md5", "evil", "deadbeef"] {
        assert!(!shown.contains(lie), "{lie} shown: {shown}");
    }
    assert!(shown.contains("sha256"), "{shown}");
    // Without roots the token is not checked and does not count.
    let o = verify(&w, &r, &[]);
    assert_eq!(code(&o), 1);
    assert_eq!(json(&o)["verdict"], "signed_not_anchored");
    // A tampered token: one byte of the DER changed.
    let mut doc = read(&r);
    let token = doc["anchors"][0]["target"]["token"]
        .as_str()
        .unwrap()
        .to_owned();
    use base64::Engine;
    let b64 = base64::engine::general_purpose::STANDARD;
    let mut der = b64.decode(&token).unwrap();
    let at = der.len() - 40; // inside the signature
    der[at] ^= 0x01;
    doc["anchors"][0]["target"]["token"] = Value::String(b64.encode(&der));
    let p = write(&w, "tampered-token.json", &doc);
    let o = verify(&w, &p, &["--tsa-ca", roots]);
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    let out = json(&o);
    assert_eq!(out["verdict"], "rejected");
    let reason = out["reason"].as_str().unwrap();
    assert_ne!(reason, "bad_receipt");
    assert_ne!(reason, "not_anchored");
    // A token over another checkpoint: the note changed under it is caught
    // by the signature first; a token moved to another receipt by the imprint.
    let other = Work::new(2);
    let o = other.anchor(&["--to", &format!("tsa:{}", tsa.url), "--tsa-ca", roots]);
    assert_eq!(code(&o), 0);
    let foreign = read(&make(&other, 0, &[]))["anchors"][0]["target"]["token"].clone();
    let mut doc = read(&r);
    doc["anchors"][0]["target"]["token"] = foreign;
    let p = write(&w, "foreign-token.json", &doc);
    let o = verify(&w, &p, &["--tsa-ca", roots]);
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    assert_eq!(json(&o)["verdict"], "rejected");
}
