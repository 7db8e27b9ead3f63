//! Replays the `receipt_verify` fuzz corpus (and truncations and byte
//! changes of each seed) through the same calls as the fuzz target: nothing
//! may panic, each seed gets the verdict its file name's prefix says, and
//! no changed byte leaves a seed with its verdict or a stronger one.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use vouch::receipt::{self, Verdict};

/// Offline: no TSA roots, no targets.
const OFFLINE: vouch::anchor::check::CheckContext<'static> = vouch::anchor::check::CheckContext {
    tsa_roots: None,
    online: None,
};

/// The test-only key of the seeds, as the fuzz target reads it.
const KEY: &str = include_str!("../fuzz/corpus/receipt_verify/fuzz.key.pub");

/// Where the test-only key comes from (fuzz/corpus/receipt_verify/README.md).
const KEY_SEED_TEXT: &[u8] =
    b"vouch fuzz/corpus/receipt_verify: a test-only key, never for a real log";

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/receipt_verify")
}

fn keys(text: &str) -> vouch::chain::TrustedKeys {
    let key = vouch::note::VerifierKey::from_text(text.trim()).unwrap();
    vouch::chain::TrustedKeys::new([key]).unwrap()
}

fn exercise_with(data: &[u8], keys: &vouch::chain::TrustedKeys) -> Option<Verdict> {
    let r = receipt::parse(data).ok()?;
    Some(receipt::verify(&r, keys, &OFFLINE, None).verdict())
}

/// The verdict lattice, weakest first; None (not a receipt) is rejected.
fn strength(v: Option<Verdict>) -> u8 {
    match v {
        None | Some(Verdict::Rejected) => 0,
        Some(Verdict::RecordNotChecked) => 1,
        Some(Verdict::SignedNotAnchored) => 2,
        Some(Verdict::AnchorNotChecked) => 3,
        Some(Verdict::Complete) => 4,
    }
}

/// The verdict a seed's name promises.
fn expected(name: &str) -> Verdict {
    for (prefix, v) in [
        ("complete-", Verdict::Complete),
        ("anchor-not-checked-", Verdict::AnchorNotChecked),
        ("signed-not-anchored-", Verdict::SignedNotAnchored),
        ("record-not-checked-", Verdict::RecordNotChecked),
        ("rejected-", Verdict::Rejected),
    ] {
        if name.starts_with(prefix) {
            return v;
        }
    }
    panic!("{name}: a seed name must start with its verdict (see README.md)");
}

/// One byte changed: hex digits and letters stay of their kind where they
/// can, anything else has bit 5 flipped.
fn mutate(b: u8) -> u8 {
    match b {
        b'0'..=b'8' | b'a'..=b'e' | b'A'..=b'Y' => b + 1,
        _ => b ^ 0x20,
    }
}

#[test]
fn the_seed_key_is_the_derived_test_only_key() {
    use sha2::Digest;
    let seed: [u8; 32] = sha2::Sha256::digest(KEY_SEED_TEXT).into();
    let signer = vouch::note::SignerKey::from_seed("example.com/fuzz", &seed).unwrap();
    let private = std::fs::read_to_string(corpus().join("fuzz.key")).unwrap();
    assert_eq!(private, format!("{}\n", signer.to_text()));
    assert_eq!(KEY, format!("{}\n", signer.verifier().to_text()));
    // The fuzz target reads the same file.
    let target = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/fuzz_targets/receipt_verify.rs"),
    )
    .unwrap();
    assert!(
        target.contains("include_str!(\"../corpus/receipt_verify/fuzz.key.pub\")"),
        "the fuzz target must verify with fuzz.key.pub"
    );
}

#[test]
fn receipt_corpus_replays_without_panics() {
    let trusted = keys(KEY);
    // Another key of the same name: every seed is rejected with it.
    let other = vouch::note::SignerKey::from_seed("example.com/fuzz", &[7; 32]).unwrap();
    let untrusted = keys(&other.verifier().to_text());
    let mut seeds = Vec::new();
    let mut failures = Vec::new();
    let mut mutations = 0;
    for entry in std::fs::read_dir(corpus()).unwrap() {
        let path = entry.unwrap().path();
        let data = std::fs::read(&path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.extension().is_none_or(|e| e != "json") {
            // The README, the key files and the script are fuzz inputs too.
            assert_eq!(exercise_with(&data, &trusted), None, "{name}");
            continue;
        }
        let want = expected(&name);
        assert_eq!(exercise_with(&data, &trusted), Some(want), "{name}");
        if want != Verdict::Rejected {
            assert_eq!(
                exercise_with(&data, &untrusted),
                Some(Verdict::Rejected),
                "{name} with another key"
            );
        }
        seeds.push(name.clone());
        for len in (0..data.len()).step_by(7) {
            exercise_with(&data[..len], &trusted);
        }
        // Every byte of a v2 receipt is evidence: the members outside the
        // signed notes are each checked against them (leaf hash, proofs,
        // seq, sizes, origin; an anchor record by its inclusion proof) and
        // a changed member name is an unknown member. So a changed byte
        // leaves a non-rejected seed strictly weaker (a rejected one stays
        // rejected). JSON whitespace between tokens is the only part that
        // is not evidence; it is skipped.
        for i in 0..data.len() {
            if data[i].is_ascii_whitespace() {
                continue;
            }
            let mut m = data.clone();
            m[i] = mutate(m[i]);
            mutations += 1;
            let got = exercise_with(&m, &trusted);
            let ok = if want == Verdict::Rejected {
                strength(got) == 0
            } else {
                strength(got) < strength(Some(want))
            };
            if !ok {
                let at = i.saturating_sub(30);
                failures.push(format!(
                    "{name}: byte {i} {:?} -> {:?} leaves {got:?} (seed {want:?}) near {:?}",
                    data[i] as char,
                    m[i] as char,
                    String::from_utf8_lossy(&data[at..(i + 30).min(data.len())])
                ));
            }
        }
    }
    seeds.sort();
    for kind in [
        "anchor-not-checked-dir",
        "anchor-not-checked-s3",
        "record-not-checked-",
        "signed-not-anchored",
    ] {
        assert!(
            seeds.iter().any(|s| s.starts_with(kind)),
            "seed corpus missing a {kind} seed: {seeds:?}"
        );
    }
    assert!(mutations > 5000, "{mutations}");
    assert!(
        failures.is_empty(),
        "{} of {mutations} changed bytes did not weaken their seed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
