//! Regression: bytes after the last newline are judged wherever the byte
//! ranges of a parallel scan fall. Found by an independent attack on this
//! issue: a tail that started just before a range boundary, or was longer
//! than a range, left later ranges with no line of their own, and the
//! verifier took the (empty) tail of the last range: a tampered log was
//! `valid`. Every tail position is tried against a small range size, for
//! the last segment and for a rotated one.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use vouch::chain::TrustedKeys;
use vouch::chain::verify::{self, LogStatus, VerifyOptions};
use vouch::chain::writer;
use vouch::note::SignerKey;

fn fill(path: &Path, key: &SignerKey, n: usize) {
    for i in 0..n {
        let body = serde_json::json!({ "i": i, "pad": "x".repeat(60 + i % 7) });
        writer::append(path, key, &[("event", &body)]).unwrap();
    }
    writer::checkpoint(path, key, true).unwrap();
}

fn opts(key: &SignerKey, chunk: u64) -> VerifyOptions {
    VerifyOptions {
        trusted: TrustedKeys::new([key.verifier()]).unwrap(),
        chunk_bytes: chunk,
        ..Default::default()
    }
}

fn verdict(files: &[PathBuf], o: &VerifyOptions) -> (LogStatus, Option<&'static str>) {
    let report = verify::verify_files(files, o);
    let log = &report.logs[0];
    (log.status, log.reason())
}

#[test]
fn a_tail_across_a_range_boundary_is_trailing_data() {
    let dir = tempfile::tempdir().unwrap();
    let key = SignerKey::from_seed("example.com/tail", &[9; 32]).unwrap();
    let log = dir.path().join("a.jsonl");
    fill(&log, &key, 150);
    let clean = std::fs::read(&log).unwrap();
    // Ranges are at least 4 KiB.
    let chunk = 4096u64;
    assert_eq!(
        verdict(std::slice::from_ref(&log), &opts(&key, chunk)).0,
        LogStatus::Valid
    );
    let tails: Vec<Vec<u8>> = vec![
        b"GARBAGE!".to_vec(),
        vec![0u8; 40],
        b"{\"body\":{\"approved\":true}}".to_vec(),
        vec![b'x'; 3 * chunk as usize + 17],
    ];
    for tail in &tails {
        // Every cut of the file at a line end, so the tail starts at every
        // position relative to the range boundaries.
        for end in (1..=clean.len()).filter(|&i| clean[i - 1] == b'\n') {
            let mut bytes = clean[..end].to_vec();
            bytes.extend_from_slice(tail);
            std::fs::write(&log, &bytes).unwrap();
            for c in [chunk, 2 * chunk, 1 << 20] {
                let (status, reason) = verdict(std::slice::from_ref(&log), &opts(&key, c));
                assert!(
                    status == LogStatus::Invalid || status == LogStatus::Partial,
                    "tail {:?}.. after byte {end}, ranges of {c}: {status:?}",
                    &tail[..tail.len().min(8)]
                );
                assert_ne!(status, LogStatus::Valid);
                if tail[0] != b'{' {
                    assert_eq!(reason, Some("trailing_data"), "after {end}, ranges of {c}");
                }
            }
        }
    }
}

#[test]
fn a_rotated_segment_with_a_long_tail_is_trailing_data() {
    let dir = tempfile::tempdir().unwrap();
    let key = SignerKey::from_seed("example.com/seg", &[8; 32]).unwrap();
    let log = dir.path().join("b.jsonl");
    fill(&log, &key, 120);
    let rotated = dir.path().join("b.jsonl.1");
    std::fs::rename(&log, &rotated).unwrap();
    fill(&log, &key, 3);
    let mut bytes = std::fs::read(&rotated).unwrap();
    bytes.extend(std::iter::repeat_n(b'z', 9000));
    std::fs::write(&rotated, &bytes).unwrap();
    for c in [4096u64, 8192, 1 << 20] {
        let (status, reason) = verdict(&[rotated.clone(), log.clone()], &opts(&key, c));
        assert_eq!(status, LogStatus::Invalid, "ranges of {c}");
        assert_eq!(reason, Some("trailing_data"), "ranges of {c}");
    }
}
