//! Signed-note vectors through the public API, and fuzz corpus replay.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use serde_json::Value;
use vouch::note::{self, SignerKey, VerifierKey, checkpoint, proof};

fn load(name: &str) -> Value {
    let path = format!("{}/tests/vectors/note/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn go_sumdb_note_example_byte_for_byte() {
    let v = load("go_sumdb_note_valid.json");
    let (skey, vkey) = (
        v["signer_key"].as_str().unwrap(),
        v["verifier_key"].as_str().unwrap(),
    );
    let (text, signed) = (v["text"].as_str().unwrap(), v["note"].as_str().unwrap());
    let signer = SignerKey::from_text(skey).unwrap();
    let verifier = VerifierKey::from_text(vkey).unwrap();
    assert_eq!(
        format!("{:08x}", verifier.key_id()),
        v["key_id"].as_str().unwrap()
    );
    assert_eq!(signer.verifier(), verifier);
    assert_eq!(signer.to_text(), skey);
    assert_eq!(verifier.to_text(), vkey);
    let opened = note::open(signed.as_bytes(), std::slice::from_ref(&verifier)).unwrap();
    assert_eq!(opened.text(), text);
    assert_eq!(
        opened.verified_by(),
        [("PeterNeumann".to_owned(), 0xc74f20a3)]
    );
    assert_eq!(note::sign(text, &[&signer]).unwrap(), signed);
}

/// Replays every file of `fuzz/corpus/<target>/`: parsing must not panic,
/// whatever parses must round-trip, and files named `*_valid` / `*_invalid`
/// must be accepted / rejected.
fn replay(target: &str, check: impl Fn(&[u8]) -> bool) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let accepted = check(&std::fs::read(&path).unwrap());
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.ends_with("_valid") {
            assert!(accepted, "{target}/{name} was rejected");
        } else if name.ends_with("_invalid") {
            assert!(!accepted, "{target}/{name} was accepted");
        }
        n += 1;
    }
    assert!(n >= 3, "corpus {target} has only {n} files");
}

#[test]
fn fuzz_corpus_note_parse() {
    replay("note_parse", |b| {
        let parsed = note::parse(b);
        if let Ok(n) = &parsed {
            assert_eq!(n.to_text().as_bytes(), b);
        }
        parsed.is_ok()
    });
}

#[test]
fn fuzz_corpus_checkpoint_parse() {
    replay("checkpoint_parse", |b| {
        if let Ok(text) = std::str::from_utf8(b)
            && let Ok(c) = checkpoint::parse(text)
        {
            assert_eq!(c.to_text(), text);
            return true;
        }
        false
    });
}

#[test]
fn fuzz_corpus_tlog_proof_parse() {
    replay("tlog_proof_parse", |b| {
        let parsed = proof::parse(b);
        if let Ok(p) = &parsed {
            assert_eq!(p.to_text().as_bytes(), b);
        }
        parsed.is_ok()
    });
}
