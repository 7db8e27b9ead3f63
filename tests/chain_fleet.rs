//! Fleets, rotated segments and incremental audits (`--state`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Output;
use support::vouch_at;
use vouch::chain::state::{Recheck, VerifyState};
use vouch::chain::verify::{self, LogStatus, VerifyMode, VerifyOptions};
use vouch::chain::writer;
use vouch::note::SignerKey;

fn key(origin: &str) -> SignerKey {
    SignerKey::from_seed(origin, &[3u8; 32]).unwrap()
}

fn fill(path: &Path, key: &SignerKey, n: usize, every: usize) {
    for i in 0..n {
        let body = json!({"i": i, "pad": "x".repeat(80)});
        writer::append(path, key, &[("event", &body)]).unwrap();
        if (i + 1) % every == 0 {
            writer::checkpoint(path, key, true).unwrap();
        }
    }
}

fn json_of(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stdout)))
}

#[test]
fn rotated_segments_verify_as_one_chain_and_a_missing_segment_is_a_gap() {
    let dir = tempfile::tempdir().unwrap();
    let k = key("example.com/rot");
    let log = dir.path().join("app.jsonl");
    // Three rotations, logrotate style: app.jsonl.2 (oldest), .1, then the live file.
    fill(&log, &k, 30, 10);
    std::fs::rename(&log, dir.path().join("app.jsonl.2")).unwrap();
    fill(&log, &k, 30, 10);
    std::fs::rename(&log, dir.path().join("app.jsonl.1")).unwrap();
    fill(&log, &k, 30, 10);
    let opts = VerifyOptions {
        trusted: vouch::chain::TrustedKeys::new(vec![k.verifier()]).unwrap(),
        ..Default::default()
    };
    let report = verify::verify_paths(&[dir.path().to_path_buf()], &opts).unwrap();
    assert_eq!(report.logs.len(), 1, "{:?}", report.logs);
    let r = &report.logs[0];
    assert_eq!(r.status, LogStatus::Valid, "{:?}", r.failure);
    assert_eq!(r.segments.len(), 3);
    assert_eq!(r.records, 99);
    assert!(r.segments[0].ends_with("app.jsonl.2"));
    assert!(r.segments[2].ends_with("app.jsonl"));

    // The middle segment goes missing: a gap where the chain resumes.
    std::fs::rename(dir.path().join("app.jsonl.1"), dir.path().join("gone")).unwrap();
    let report = verify::verify_paths(&[dir.path().to_path_buf()], &opts).unwrap();
    let r = &report.logs[0];
    let f = r.failure.as_ref().unwrap();
    assert_eq!(f.error.code(), "seq_gap");
    assert_eq!(f.seq, Some(66));
    assert!(f.path.ends_with("app.jsonl"));
    assert_eq!(f.line, 1);

    // The oldest segment missing: the chain does not start at 0.
    std::fs::rename(dir.path().join("gone"), dir.path().join("app.jsonl.1")).unwrap();
    std::fs::rename(dir.path().join("app.jsonl.2"), dir.path().join("old")).unwrap();
    let report = verify::verify_paths(&[dir.path().to_path_buf()], &opts).unwrap();
    assert_eq!(
        report.logs[0].failure.as_ref().unwrap().error.code(),
        "seq_gap"
    );
}

#[test]
fn a_fleet_of_many_small_logs_reports_one_row_each_in_path_order() {
    let dir = tempfile::tempdir().unwrap();
    let mut keys = Vec::new();
    for i in 0..40 {
        let origin = format!("example.com/host-{i:02}");
        let k = key(&origin);
        fill(
            &dir.path().join(format!("host-{i:02}.jsonl")),
            &k,
            3 + i % 5,
            2,
        );
        writer::checkpoint(&dir.path().join(format!("host-{i:02}.jsonl")), &k, true).unwrap();
        keys.push(k.verifier());
    }
    let text = std::fs::read_to_string(dir.path().join("host-07.jsonl")).unwrap();
    std::fs::write(
        dir.path().join("host-07.jsonl"),
        text.replacen("\"i\":1", "\"i\":7", 1),
    )
    .unwrap();
    let opts = VerifyOptions {
        trusted: vouch::chain::TrustedKeys::new(keys).unwrap(),
        chunk_bytes: 4096,
        ..Default::default()
    };
    let report = verify::verify_paths(&[dir.path().to_path_buf()], &opts).unwrap();
    assert_eq!(report.logs.len(), 40);
    let paths: Vec<&PathBuf> = report.logs.iter().map(|l| &l.path).collect();
    let mut sorted = paths.clone();
    sorted.sort();
    assert_eq!(paths, sorted);
    for (i, l) in report.logs.iter().enumerate() {
        let expected = if i == 7 {
            LogStatus::Invalid
        } else {
            LogStatus::Valid
        };
        assert_eq!(l.status, expected, "{}", l.path.display());
    }
    assert_eq!(report.exit_code(false, VerifyMode::Authenticated), 1);
}

fn state_opts(k: &SignerKey, state: Option<VerifyState>, recheck: Recheck) -> VerifyOptions {
    VerifyOptions {
        trusted: vouch::chain::TrustedKeys::new(vec![k.verifier()]).unwrap(),
        chunk_bytes: 4096,
        state: state.map(std::sync::Arc::new),
        recheck,
        save_state: true,
        ..Default::default()
    }
}

#[test]
fn incremental_runs_verify_only_new_records_and_catch_changes_to_the_old_part() {
    let dir = tempfile::tempdir().unwrap();
    let k = key("example.com/inc");
    let log = dir.path().join("inc.jsonl");
    fill(&log, &k, 200, 20);
    let files = vec![log.clone()];
    let first = verify::verify_files(&files, &state_opts(&k, None, Recheck::Rolling));
    assert_eq!(first.logs[0].status, LogStatus::Valid);
    assert_eq!(first.logs[0].resumed_from, None);
    let saved = first.state.logs.get("example.com/inc").unwrap();
    assert!(
        saved.ranges.len() > 5,
        "several ranges: {}",
        saved.ranges.len()
    );

    // New records: only they are scanned, on top of what was verified.
    fill(&log, &k, 10, 10);
    let second = verify::verify_files(
        &files,
        &state_opts(&k, Some(first.state.clone()), Recheck::Rolling),
    );
    let r = &second.logs[0];
    assert_eq!(r.status, LogStatus::Valid, "{:?}", r.failure);
    assert_eq!(r.resumed_from, Some(210));
    assert_eq!(r.records, 221);
    // The result equals a full verification's.
    let full = verify::verify_files(&files, &state_opts(&k, None, Recheck::Rolling));
    assert_eq!(
        full.logs[0].verified.as_ref().unwrap().root(),
        r.verified.as_ref().unwrap().root()
    );
    assert_eq!(full.logs[0].covered, r.covered);

    // An in-place edit of an old record (same inode): caught by the re-check
    // of all ranges, and by the rolling window within as many runs as ranges.
    let state = second.state.clone();
    let bytes = std::fs::read(&log).unwrap();
    let at = bytes.windows(7).position(|w| w == b"\"i\":13,").unwrap() + 5;
    let mut tampered = bytes.clone();
    tampered[at] = b'4';
    {
        use std::os::unix::fs::FileExt;
        let f = std::fs::OpenOptions::new().write(true).open(&log).unwrap();
        f.write_all_at(&tampered[at..at + 1], at as u64).unwrap();
    }
    let all = verify::verify_files(&files, &state_opts(&k, Some(state.clone()), Recheck::All));
    let f = all.logs[0]
        .failure
        .as_ref()
        .expect("caught with --recheck all");
    assert!(
        ["broken_link", "history_changed"].contains(&f.error.code()),
        "{}",
        f.error.code()
    );
    let mut st = state.clone();
    let mut caught_after = None;
    for run in 1..=st.logs["example.com/inc"].ranges.len() + 1 {
        fill(&log, &k, 1, 1000);
        let r = verify::verify_files(&files, &state_opts(&k, Some(st.clone()), Recheck::Rolling));
        if r.logs[0].status == LogStatus::Invalid {
            caught_after = Some(run);
            break;
        }
        st = r.state;
    }
    assert!(
        caught_after.is_some(),
        "the rolling re-check never reached the edit"
    );

    // A rewritten file (new inode, as sed -i does): verified in full again and caught.
    std::fs::write(dir.path().join("copy"), &tampered).unwrap();
    std::fs::rename(dir.path().join("copy"), &log).unwrap();
    let r = verify::verify_files(
        &files,
        &state_opts(&k, Some(state.clone()), Recheck::Rolling),
    );
    assert_eq!(r.logs[0].resumed_from, None);
    assert_eq!(
        r.logs[0].failure.as_ref().unwrap().error.code(),
        "broken_link"
    );

    // A log cut back below what was verified: truncated, even without an auditor checkpoint.
    std::fs::write(&log, &bytes[..bytes.len() / 2]).unwrap();
    let r = verify::verify_files(
        &files,
        &state_opts(&k, Some(state.clone()), Recheck::Rolling),
    );
    let code = r.logs[0].failure.as_ref().map(|f| f.error.code());
    assert!(code == Some("truncated"), "{code:?}");
}

#[test]
fn history_rewritten_and_resigned_is_a_fork_against_the_saved_state() {
    let dir = tempfile::tempdir().unwrap();
    let k = key("example.com/fork");
    let log = dir.path().join("f.jsonl");
    fill(&log, &k, 50, 10);
    let files = vec![log.clone()];
    let first = verify::verify_files(&files, &state_opts(&k, None, Recheck::Rolling));
    // The key holder rebuilds the log with record 3 changed, and more records.
    std::fs::remove_file(&log).unwrap();
    for i in 0..60 {
        let body = if i == 3 {
            json!({"i": 3, "pad": "rewritten"})
        } else {
            json!({"i": i, "pad": "x".repeat(80)})
        };
        writer::append(&log, &k, &[("event", &body)]).unwrap();
        if (i + 1) % 10 == 0 {
            writer::checkpoint(&log, &k, true).unwrap();
        }
    }
    assert_eq!(
        verify::verify_files(&files, &state_opts(&k, None, Recheck::Rolling)).logs[0].status,
        LogStatus::Valid
    );
    let r = verify::verify_files(&files, &state_opts(&k, Some(first.state), Recheck::Rolling));
    // A fork against the remembered tree; or, when the file system reused
    // the inode so the run resumed, a change found by the re-check.
    let code = r.logs[0].failure.as_ref().unwrap().error.code();
    assert!(["fork", "history_changed"].contains(&code), "{code}");
}

#[test]
fn cli_state_ndjson_and_rotated_names() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    assert!(
        vouch_at(&["keygen", "--origin", "example.com/c", "--out", "k"], d)
            .status
            .success()
    );
    for i in 0..5 {
        vouch_at(
            &["append", "c.jsonl", "--key", "k", &format!("{{\"n\":{i}}}")],
            d,
        );
    }
    vouch_at(&["checkpoint", "c.jsonl", "--key", "k"], d);
    std::fs::rename(d.join("c.jsonl"), d.join("c.jsonl-20261128")).unwrap();
    // The new segment continues the rotated chain.
    let o = vouch_at(&["append", "c.jsonl", "--key", "k", "{\"n\":5}"], d);
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "appended seq 6");
    vouch_at(&["checkpoint", "c.jsonl", "--key", "k"], d);
    std::fs::write(d.join("notes.txt"), "not a log").unwrap();
    let o = vouch_at(
        &[
            "verify", ".", "--pub", "k.pub", "--format", "json", "--state", "st.json",
        ],
        d,
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v = json_of(&o);
    assert_eq!(v["logs"].as_array().unwrap().len(), 1);
    assert_eq!(v["logs"][0]["segments"].as_array().unwrap().len(), 2);
    assert_eq!(v["logs"][0]["status"], "valid");
    vouch_at(&["append", "c.jsonl", "--key", "k", "{\"n\":6}"], d);
    let o = vouch_at(
        &[
            "verify", ".", "--pub", "k.pub", "--format", "ndjson", "--state", "st.json",
        ],
        d,
    );
    let lines: Vec<Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["resumed_from"], 8);
    assert_eq!(lines[0]["records"], 9);
    assert_eq!(lines[0]["status"], "partial");
    assert_eq!(lines[1]["summary"]["logs"], 1);
    assert_eq!(lines[1]["exit_code"], 0);
    let state: Value = serde_json::from_slice(&std::fs::read(d.join("st.json")).unwrap()).unwrap();
    assert_eq!(state["format"], "vouch-verify-state/2");
}

#[test]
fn exit_code_rejected_evidence_wins_over_an_unreadable_file() {
    let dir = tempfile::tempdir().unwrap();
    let k = key("example.com/ok");
    fill(&dir.path().join("ok.jsonl"), &k, 3, 3);
    std::fs::write(dir.path().join("bad.jsonl"), b"not json\n").unwrap();
    // Tests run as root, so permissions do not stop reads: a directory
    // named like a log opens but cannot be read.
    let unreadable = dir.path().join("unreadable.jsonl");
    std::fs::create_dir(&unreadable).unwrap();
    let opts = VerifyOptions {
        trusted: vouch::chain::TrustedKeys::new(vec![k.verifier()]).unwrap(),
        ..Default::default()
    };
    let files = vec![
        dir.path().join("ok.jsonl"),
        dir.path().join("bad.jsonl"),
        unreadable.clone(),
    ];
    let report = verify::verify_files(&files, &opts);
    let statuses: Vec<LogStatus> = report.logs.iter().map(|l| l.status).collect();
    assert!(statuses.contains(&LogStatus::Error), "{statuses:?}");
    assert!(statuses.contains(&LogStatus::Invalid), "{statuses:?}");
    assert_eq!(report.exit_code(false, VerifyMode::Authenticated), 1);
    let only_error = verify::verify_files(&[dir.path().join("ok.jsonl"), unreadable], &opts);
    assert_eq!(only_error.exit_code(false, VerifyMode::Authenticated), 2);
}

/// A live file with no complete line yet (logrotate's `create` left it
/// empty, or a crash right after a rotation left one torn line) belongs to
/// the log of the segments rotated away from it (docs/FORMAT.md §12): it
/// is that log's last segment, and its tail is judged against that log's
/// last record. It used to be a log of its own: an empty one gave an
/// `unauthenticated` row (exit 1) for a log that verifies, and a forged
/// torn line was judged as a whole file's, so `--chain-only` passed it.
#[test]
fn a_live_file_with_no_record_yet_is_the_last_segment_of_its_rotated_log() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    assert!(
        vouch_at(&["keygen", "--origin", "example.com/live", "--out", "k"], d)
            .status
            .success()
    );
    for i in 0..4 {
        vouch_at(
            &[
                "append",
                "app.jsonl",
                "--key",
                "k",
                &format!("{{\"n\":{i}}}"),
            ],
            d,
        );
    }
    vouch_at(&["checkpoint", "app.jsonl", "--key", "k"], d);
    let sealed = std::fs::read(d.join("app.jsonl")).unwrap();
    // The record a writer would append next: the torn tail to test with.
    vouch_at(
        &["append", "app.jsonl", "--key", "k", "{\"n\":\"next\"}"],
        d,
    );
    let grown = std::fs::read(d.join("app.jsonl")).unwrap();
    let next = grown[sealed.len()..grown.len() - 1].to_vec();
    std::fs::write(d.join("app.jsonl.1"), &sealed).unwrap();
    let verify = |extra: &[&str]| {
        let mut args = vec!["verify", ".", "--format", "json"];
        args.extend_from_slice(extra);
        let o = vouch_at(&args, d);
        (o.status.code(), json_of(&o))
    };
    let cut = next.len() - 2;
    let forged = |from: &str, to: &str| {
        let text = String::from_utf8(next.clone()).unwrap();
        assert!(text.contains(from), "{text}");
        text.replacen(from, to, 1).into_bytes()[..cut].to_vec()
    };
    // (live file content, expected exit with --pub, status, torn bytes)
    let cases: Vec<(&str, Vec<u8>, i32, &str)> = vec![
        ("empty", Vec::new(), 0, "valid"),
        ("the next record, torn", next[..cut].to_vec(), 0, "partial"),
        ("one byte of it", next[..1].to_vec(), 0, "partial"),
        (
            "a torn record of another seq",
            forged("\"seq\":5", "\"seq\":9"),
            1,
            "invalid",
        ),
        (
            "a torn record of another origin",
            forged("example.com/live", "example.com/evil"),
            1,
            "invalid",
        ),
        (
            "a torn record linked elsewhere",
            forged("\"prev\":\"", "\"prev\":\"0"),
            1,
            "invalid",
        ),
        ("not a record", b"garbage".to_vec(), 1, "invalid"),
    ];
    for (what, live, code, status) in cases {
        std::fs::write(d.join("app.jsonl"), &live).unwrap();
        let (c, v) = verify(&["--pub", "k.pub"]);
        assert_eq!(v["logs"].as_array().unwrap().len(), 1, "{what}: {v}");
        let log = &v["logs"][0];
        assert_eq!(c, Some(code), "{what}: {v}");
        assert_eq!(log["status"], status, "{what}: {v}");
        assert_eq!(log["origin"], "example.com/live", "{what}: {v}");
        let segments = log["segments"].as_array().unwrap();
        assert_eq!(segments.len(), 2, "{what}: {v}");
        assert!(
            segments[1].as_str().unwrap().ends_with("/app.jsonl"),
            "{what}: {v}"
        );
        assert_eq!(log["records"], 5, "{what}: {v}");
        if status == "partial" {
            assert_eq!(log["torn_tail_bytes"], live.len(), "{what}: {v}");
        }
        if status == "invalid" {
            assert_eq!(log["reason"], "trailing_data", "{what}: {v}");
        }
        // The same judgement without keys: only the signature is not
        // checked.
        let (c, v) = verify(&["--chain-only"]);
        assert_eq!(c, Some(if code == 1 { 1 } else { 0 }), "{what}: {v}");
        assert_eq!(v["logs"].as_array().unwrap().len(), 1, "{what}: {v}");
        // `repair` judges the line by the same rule: it removes what
        // verifies as a torn tail and keeps everything else.
        let o = vouch_at(&["repair", "app.jsonl"], d);
        assert_eq!(o.status.code(), Some(code), "{what}: {o:?}");
        let left = std::fs::read(d.join("app.jsonl")).unwrap();
        let kept = if code == 1 { live.clone() } else { Vec::new() };
        assert_eq!(left, kept, "{what}");
    }

    // Incremental: the empty live file is remembered as the last segment,
    // and its first records later are verified from where the run stopped.
    std::fs::write(d.join("app.jsonl"), b"").unwrap();
    let (c, v) = verify(&["--pub", "k.pub", "--state", "st.json"]);
    assert_eq!(c, Some(0), "{v}");
    let o = vouch_at(&["append", "app.jsonl", "--key", "k", "{\"n\":5}"], d);
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "appended seq 5");
    vouch_at(&["checkpoint", "app.jsonl", "--key", "k"], d);
    let (c, v) = verify(&["--pub", "k.pub", "--state", "st.json"]);
    assert_eq!(c, Some(0), "{v}");
    assert_eq!(v["logs"][0]["resumed_from"], 5, "{v}");
    assert_eq!(v["logs"][0]["records"], 7, "{v}");
    assert_eq!(v["logs"][0]["status"], "valid", "{v}");
    // Emptying the live file now cuts the log back to its rotated
    // segments: the state's pin shows it, as for any cut of a log's end.
    std::fs::write(d.join("app.jsonl"), b"").unwrap();
    let (c, v) = verify(&["--pub", "k.pub", "--state", "st.json"]);
    assert_eq!(c, Some(1), "{v}");
    assert_eq!(v["logs"][0]["reason"], "truncated", "{v}");
}

/// A live file with no record beside segments of two origins: which log
/// it continues is not known, so it stays a log of its own.
#[test]
fn a_live_file_with_no_record_beside_segments_of_two_origins_stays_alone() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (origin, seg) in [
        ("example.com/a", "app.jsonl.1"),
        ("example.com/b", "app.jsonl.2"),
    ] {
        let k = key(origin);
        fill(&d.join("tmp.jsonl"), &k, 3, 3);
        std::fs::rename(d.join("tmp.jsonl"), d.join(seg)).unwrap();
    }
    std::fs::write(d.join("app.jsonl"), b"").unwrap();
    let report = verify::verify_paths(&[d.to_path_buf()], &VerifyOptions::default()).unwrap();
    assert_eq!(report.logs.len(), 3, "{:?}", report.logs);
    let alone = report
        .logs
        .iter()
        .find(|l| l.path.ends_with("app.jsonl"))
        .unwrap();
    assert_eq!(alone.segments.len(), 1);
    assert_eq!(alone.status, LogStatus::Unauthenticated);
}

/// Found by an independent attack on the rule above: `repair` (and the
/// writer) read the segments named `NAME.N` / `NAME-N` beside the file,
/// following symlinks, while `verify` groups what it is given. The live
/// file joins a log only when that log is exactly those segments, found by
/// device and inode, so `repair` never removes a line `verify` calls
/// `trailing_data`, whatever the layout or the spelling of the paths.
#[test]
fn repair_never_removes_what_verify_calls_trailing_data_beside_rotated_segments() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    assert!(
        vouch_at(
            &["keygen", "--origin", "example.com/live", "--out", "k"],
            root
        )
        .status
        .success()
    );
    let append = |d: &Path, file: &str, n: &str| {
        let path = d.join(file);
        let o = vouch_at(
            &[
                "append",
                path.to_str().unwrap(),
                "--key",
                "k",
                &format!("{{\"n\":\"{n}\"}}"),
            ],
            root,
        );
        assert_eq!(o.status.code(), Some(0), "{o:?}");
    };
    // The line a writer appends next to `file` (then taken away again).
    let next_line = |d: &Path, file: &str| {
        let path = d.join(file);
        let before = std::fs::read(&path).unwrap_or_default();
        append(d, file, "next");
        let after = std::fs::read(&path).unwrap();
        std::fs::write(&path, &before).unwrap();
        after[before.len()..after.len() - 1].to_vec()
    };
    // Layouts: (name, directory set up with app.jsonl.1 and more, the
    // spellings of the paths given to verify).
    type Layout = (&'static str, Vec<String>);
    let layouts: Vec<Layout> = vec![
        ("plain", vec!["d".into()]),
        (
            "given twice, spelled two ways",
            vec!["d".into(), "./d/app.jsonl".into()],
        ),
        ("the live file named alone", vec!["d/app.jsonl".into()]),
        ("symlinked segment", vec!["d".into()]),
        (
            "a renamed live segment of the same origin",
            vec!["d".into()],
        ),
    ];
    for (what, args) in layouts {
        let d = root.join("d");
        let _ = std::fs::remove_dir_all(&d);
        let _ = std::fs::remove_dir_all(root.join("archive"));
        std::fs::create_dir(&d).unwrap();
        for i in 0..3 {
            append(&d, "app.jsonl", &i.to_string());
        }
        let mut tails = vec![next_line(&d, "app.jsonl")];
        match what {
            "symlinked segment" => {
                std::fs::create_dir(root.join("archive")).unwrap();
                std::fs::rename(d.join("app.jsonl"), root.join("archive/app.jsonl.1")).unwrap();
                std::os::unix::fs::symlink("../archive/app.jsonl.1", d.join("app.jsonl.1"))
                    .unwrap();
            }
            "a renamed live segment of the same origin" => {
                std::fs::rename(d.join("app.jsonl"), d.join("app.jsonl.1")).unwrap();
                for i in 3..5 {
                    append(&d, "app.jsonl", &i.to_string());
                }
                tails.push(next_line(&d, "app.jsonl"));
                std::fs::rename(d.join("app.jsonl"), d.join("other.jsonl")).unwrap();
            }
            _ => std::fs::rename(d.join("app.jsonl"), d.join("app.jsonl.1")).unwrap(),
        }
        // Each genuine next line, torn, and forged: another seq, another prev.
        let mut lines = Vec::new();
        for t in &tails {
            let text = String::from_utf8(t.clone()).unwrap();
            let seq = text
                .split("\"seq\":")
                .nth(1)
                .unwrap()
                .split(',')
                .next()
                .unwrap();
            lines.push(t[..t.len() - 2].to_vec());
            lines.push(
                text.replacen(&format!("\"seq\":{seq}"), "\"seq\":99", 1)
                    .into_bytes()[..t.len() - 2]
                    .to_vec(),
            );
            lines.push(
                text.replacen("\"prev\":\"", "\"prev\":\"0", 1).into_bytes()[..t.len() - 2]
                    .to_vec(),
            );
        }
        for line in lines {
            std::fs::write(d.join("app.jsonl"), &line).unwrap();
            let mut argv = vec!["verify", "--chain-only", "--format", "json"];
            argv.extend(args.iter().map(String::as_str));
            let o = vouch_at(&argv, root);
            let v = json_of(&o);
            let row = v["logs"]
                .as_array()
                .unwrap()
                .iter()
                .find(|l| {
                    l["segments"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|s| s.as_str().unwrap().ends_with("/app.jsonl"))
                })
                .unwrap_or_else(|| panic!("{what}: {v}"))
                .clone();
            let o = vouch_at(&["repair", "d/app.jsonl"], root);
            let left = std::fs::read(d.join("app.jsonl")).unwrap();
            if row["reason"] == "trailing_data" {
                assert_eq!(o.status.code(), Some(1), "{what}: {v} / {o:?}");
                assert_eq!(left, line, "{what}: repair removed evidence");
            }
            let one_log = ![
                "the live file named alone",
                "a renamed live segment of the same origin",
            ]
            .contains(&what);
            if one_log {
                // Where the segments are given and are the whole log, both
                // commands see one log and agree on every line.
                assert_eq!(row["segments"].as_array().unwrap().len(), 2, "{what}: {v}");
                let torn = row["reason"] == "torn_tail" || row["torn_tail_bytes"] != Value::Null;
                assert_eq!(
                    o.status.code(),
                    Some(if torn { 0 } else { 1 }),
                    "{what}: {v} / {o:?}"
                );
            }
        }
    }
}

/// Found by a second attack: a symlink or hard link to the live file whose
/// name sorts first was the one name the file was verified under, and no
/// segments are beside it, so the live file was a log of its own again
/// (a forged line passed `--chain-only`). A file reached by several names
/// is verified under the one its rotated segments are beside.
#[test]
fn another_name_for_the_live_file_does_not_cut_it_loose() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    assert!(
        vouch_at(&["keygen", "--origin", "example.com/a", "--out", "k"], root)
            .status
            .success()
    );
    let d = root.join("logs");
    std::fs::create_dir(&d).unwrap();
    let o = vouch_at(&["append", "logs/a.jsonl", "--key", "k", "{\"n\":0}"], root);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    std::fs::rename(d.join("a.jsonl"), d.join("a.jsonl.1")).unwrap();
    let forged =
        "{\"body\":{\"x\":1},\"kind\":\"event\",\"origin\":\"evil.example/b\",\"prev\":\"00";
    std::fs::write(d.join("a.jsonl"), forged).unwrap();
    for alias in ["symlink", "hard link", "both"] {
        let _ = std::fs::remove_file(d.join("0.jsonl"));
        let _ = std::fs::remove_file(d.join("00.jsonl"));
        if alias != "hard link" {
            std::os::unix::fs::symlink("a.jsonl", d.join("0.jsonl")).unwrap();
        }
        if alias != "symlink" {
            std::fs::hard_link(d.join("a.jsonl"), d.join("00.jsonl")).unwrap();
        }
        let o = vouch_at(
            &["verify", "logs", "--chain-only", "--format", "json"],
            root,
        );
        let v = json_of(&o);
        assert_eq!(o.status.code(), Some(1), "{alias}: {v}");
        assert_eq!(v["logs"].as_array().unwrap().len(), 1, "{alias}: {v}");
        assert_eq!(v["logs"][0]["reason"], "trailing_data", "{alias}: {v}");
        let segments = v["logs"][0]["segments"].as_array().unwrap();
        assert!(
            segments[1].as_str().unwrap().ends_with("/a.jsonl"),
            "{alias}: {v}"
        );
    }
}
