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

/// `needle` replaced once in `line`, and where the first changed byte is.
fn forge(line: &[u8], needle: &str, with: &str) -> (Vec<u8>, usize) {
    let text = std::str::from_utf8(line).unwrap();
    let at = text.find(needle).unwrap();
    let forged = text.replacen(needle, with, 1).into_bytes();
    let first_diff = (at..).find(|&i| forged[i] != line[i]).unwrap();
    (forged, first_diff)
}

/// Found by an independent attack: a torn tail with nothing else in its
/// range (alone in the last range of a large log, or all that was new
/// since an incremental run's resume point) was judged without the record
/// before it, so a tail naming another origin, a wrong `prev` or a wrong
/// `seq` was a torn tail (partial, exit 0) where the same file read as one
/// range is trailing data (exit 1). Every prefix of the record a writer
/// would append next, and of three forgeries of it, must get the one-range
/// verdict when the tail is alone in its range and when resumed from a
/// state of the log before it, with either re-check.
#[test]
fn a_tail_alone_in_its_range_or_after_a_resume_point_is_judged_as_in_one_range() {
    use vouch::chain::state::Recheck;
    let dir = tempfile::tempdir().unwrap();
    let key = SignerKey::from_seed("example.com/tail", &[9; 32]).unwrap();
    let log = dir.path().join("a.jsonl");
    fill(&log, &key, 60);
    let clean = std::fs::read(&log).unwrap();
    assert!(clean.len() > 4096, "a range is at least 4 KiB");
    let copy = dir.path().join("next.jsonl");
    std::fs::write(&copy, &clean).unwrap();
    writer::append(&copy, &key, &[("event", &serde_json::json!({"i": 61}))]).unwrap();
    let appended = std::fs::read(&copy).unwrap();
    let next = appended[clean.len()..appended.len() - 1].to_vec();
    let text = std::str::from_utf8(&next).unwrap();
    let seq_at = text.find("\"seq\":").unwrap() + 6;
    let seq: String = text[seq_at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    let prev_at = text.find("\"prev\":\"").unwrap() + 8;
    let prev = &text[prev_at..prev_at + 64];
    let other_prev: String = prev
        .chars()
        .map(|c| if c == '0' { '1' } else { '0' })
        .collect();
    let variants = [
        ("honest", next.clone(), usize::MAX),
        {
            let (f, at) = forge(
                &next,
                "\"origin\":\"example.com/tail\"",
                "\"origin\":\"example.com/tajl\"",
            );
            ("another origin", f, at)
        },
        {
            let (f, at) = forge(&next, prev, &other_prev);
            ("another prev", f, at)
        },
        {
            let other = (seq.parse::<u64>().unwrap() + 7).to_string();
            let (f, at) = forge(
                &next,
                &format!("\"seq\":{seq}"),
                &format!("\"seq\":{other}"),
            );
            ("another seq", f, at)
        },
    ];
    let first = verify::verify_files(
        std::slice::from_ref(&log),
        &VerifyOptions {
            save_state: true,
            ..opts(&key, 1 << 20)
        },
    );
    assert_eq!(first.logs[0].status, LogStatus::Valid);
    let state = std::sync::Arc::new(first.state);
    for (what, line, changed_at) in &variants {
        for cut in 1..line.len() {
            let mut bytes = clean.clone();
            bytes.extend_from_slice(&line[..cut]);
            std::fs::write(&log, &bytes).unwrap();
            let files = std::slice::from_ref(&log);
            let oracle = verdict(files, &opts(&key, 1 << 20));
            if cut > *changed_at {
                assert_eq!(
                    oracle,
                    (LogStatus::Invalid, Some("trailing_data")),
                    "{what}, {cut} bytes"
                );
            } else {
                assert_eq!(
                    oracle,
                    (LogStatus::Partial, Some("torn_tail")),
                    "{what}, {cut} bytes"
                );
            }
            let alone = verdict(files, &opts(&key, clean.len() as u64));
            assert_eq!(alone, oracle, "{what}, {cut} bytes, alone in its range");
            for recheck in [Recheck::Rolling, Recheck::All] {
                let o = VerifyOptions {
                    state: Some(state.clone()),
                    recheck,
                    ..opts(&key, 1 << 20)
                };
                let report = verify::verify_files(files, &o);
                let l = &report.logs[0];
                assert_eq!(l.resumed_from, Some(first.logs[0].records), "{what}");
                assert_eq!(
                    (l.status, l.reason()),
                    oracle,
                    "{what}, {cut} bytes, resumed ({recheck:?})"
                );
            }
        }
    }
}
