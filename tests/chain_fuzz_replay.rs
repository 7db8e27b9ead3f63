//! Replays the chain_verify fuzz corpus (and truncations and bit flips of
//! each file) through the same properties the fuzz target checks.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use vouch::chain::verify::{self, LogStatus, VerifyOptions};

fn check(data: &[u8]) {
    let report = verify::verify_bytes(Path::new("fuzz.jsonl"), data, &VerifyOptions::default());
    let complete_lines = data.iter().filter(|&&b| b == b'\n').count() as u64;
    assert_eq!(report.records, complete_lines);
    if report.status != LogStatus::Invalid {
        for line in data.split(|&b| b == b'\n').take(complete_lines as usize) {
            assert!(vouch::chain::record::parse_line(line).is_ok());
        }
    }
}

#[test]
fn corpus_replay() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fuzz/corpus/chain_verify");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let data = std::fs::read(entry.unwrap().path()).unwrap();
        check(&data);
        for cut in (0..data.len()).step_by(37) {
            check(&data[..cut]);
        }
        for i in (0..data.len()).step_by(11) {
            let mut d = data.clone();
            d[i] ^= 0x41;
            check(&d);
        }
        n += 1;
    }
    assert!(n >= 5);
    let _ = Path::new(dir);
}
