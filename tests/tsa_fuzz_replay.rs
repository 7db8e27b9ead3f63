//! Replays the `tsa_parse` fuzz corpus (and truncations and bit flips of
//! each seed) through the same calls as the fuzz target: nothing may panic.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use vouch::tsa::{
    DataDigests, Expected, ExpectedImprint, TrustStore, VerifyOptions, show, verify_token,
};

fn exercise(data: &[u8]) {
    let _ = show(data);
    let expected = Expected::imprint(ExpectedImprint::Data(DataDigests::from_bytes(b"hello")));
    let _ = verify_token(
        data,
        &expected,
        &TrustStore::new(),
        &VerifyOptions::default(),
    );
}

#[test]
fn tsa_parse_corpus_replays_without_panics() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/tsa_parse");
    let mut seeds = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            continue;
        }
        let data = std::fs::read(&path).unwrap();
        seeds += 1;
        exercise(&data);
        // Cheap mutations: every truncation length at a stride, and a bit
        // flip in every 17th byte.
        for len in (0..data.len()).step_by(31) {
            exercise(&data[..len]);
        }
        for i in (0..data.len()).step_by(17) {
            let mut m = data.clone();
            m[i] ^= 0x80;
            exercise(&m);
        }
    }
    assert!(seeds >= 5, "seed corpus missing");
}
