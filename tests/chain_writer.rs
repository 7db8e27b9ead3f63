//! Regression tests for the writer defects of issue 8, through the real
//! binary: a logrotate rename racing `append`, bodies that would be changed
//! by canonicalization, reserved kinds, the one segment rule shared by
//! writer and verifier, and `repair` removing only genuine torn records.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use support::{code, command, stderr, stdout, vouch_at, vouch_at_in};

/// A temp dir with key `k` / `k.pub` for origin example.com/w.
fn setup() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let o = vouch_at(
        &["keygen", "--origin", "example.com/w", "--out", "k"],
        dir.path(),
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let p = dir.path().to_path_buf();
    (dir, p)
}

fn append(dir: &Path, log: &str, body: &str) {
    let o = vouch_at(&["append", log, "--key", "k", body], dir);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
}

fn verify_json(dir: &Path, args: &[&str]) -> (i32, Value) {
    let mut all = vec!["verify", "--format", "json"];
    all.extend_from_slice(args);
    let o = vouch_at(&all, dir);
    let v: Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(&o)));
    (code(&o), v)
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The verifier's view of a directory: status of its one log and how many
/// segments it read.
fn verify_dir(dir: &Path, sub: &str) -> (i32, String, usize) {
    let (c, v) = verify_json(dir, &[sub, "--pub", "k.pub"]);
    assert_eq!(v["logs"].as_array().unwrap().len(), 1, "{v}");
    let log = &v["logs"][0];
    (
        c,
        log["status"].as_str().unwrap().to_owned(),
        log["segments"].as_array().unwrap().len(),
    )
}

// 1. A logrotate rename racing `append`.

#[test]
fn append_racing_a_logrotate_rename_writes_to_the_new_file_and_continues_the_chain() {
    let (_d, dir) = setup();
    std::fs::create_dir(dir.join("logs")).unwrap();
    for i in 0..3 {
        append(&dir, "logs/app.jsonl", &format!("{{\"n\":{i}}}"));
    }
    let before = std::fs::read(dir.join("logs/app.jsonl")).unwrap();
    // The appender opens app.jsonl, then stops before taking the lock.
    let mut child = command()
        .args(["append", "logs/app.jsonl", "--key", "k", "{\"n\":\"late\"}"])
        .env(
            "VOUCH_FAILPOINT",
            format!("append_before_lock:{}", dir.join("go").display()),
        )
        .current_dir(&dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    assert!(
        line.contains("failpoint append_before_lock reached"),
        "{line}"
    );
    // logrotate (create mode): rename, then create a new empty file.
    std::fs::rename(dir.join("logs/app.jsonl"), dir.join("logs/app.jsonl.1")).unwrap();
    std::fs::write(dir.join("logs/app.jsonl"), b"").unwrap();
    std::fs::write(dir.join("go"), b"").unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The rotated segment is untouched; the record is in the new file and
    // continues the chain.
    assert_eq!(std::fs::read(dir.join("logs/app.jsonl.1")).unwrap(), before);
    let new = lines(&dir.join("logs/app.jsonl"));
    assert_eq!(new.len(), 1);
    assert_eq!(new[0]["seq"], 3);
    assert_eq!(new[0]["body"]["n"], "late");
    let o = vouch_at(&["checkpoint", "logs/app.jsonl", "--key", "k"], &dir);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(verify_dir(&dir, "logs"), (0, "valid".to_owned(), 2));
}

#[test]
fn append_racing_a_rename_without_a_new_file_creates_it() {
    let (_d, dir) = setup();
    append(&dir, "app.jsonl", "{\"n\":0}");
    let mut child = command()
        .args(["append", "app.jsonl", "--key", "k", "{\"n\":1}"])
        .env(
            "VOUCH_FAILPOINT",
            format!("append_before_lock:{}", dir.join("go").display()),
        )
        .current_dir(&dir)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    assert!(
        line.contains("failpoint append_before_lock reached"),
        "{line}"
    );
    std::fs::rename(dir.join("app.jsonl"), dir.join("app.jsonl-20261129")).unwrap();
    std::fs::write(dir.join("go"), b"").unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(0));
    assert_eq!(lines(&dir.join("app.jsonl-20261129")).len(), 1);
    let new = lines(&dir.join("app.jsonl"));
    assert_eq!((new.len(), new[0]["seq"].as_u64()), (1, Some(1)));
}

// 2. Bodies that canonicalization would change.

#[test]
fn append_refuses_integers_that_rfc8785_would_round() {
    let (_d, dir) = setup();
    for (body, shown) in [
        ("123456789012345678901234567890", "1.2345678901234568e+29"),
        ("{\"n\":18446744073709551616}", "18446744073709552000"),
        ("[9007199254740993]", "9007199254740992"),
        ("{\"a\":{\"b\":[0, 0.30000000000000000001]}}", "0.3"),
    ] {
        let o = vouch_at(&["append", "log.jsonl", "--key", "k", body], &dir);
        assert_eq!(code(&o), 2, "{body}");
        assert!(stderr(&o).contains(shown), "{body}: {}", stderr(&o));
        let o = vouch_at(
            &[
                "append",
                "log.jsonl",
                "--key",
                "k",
                "--format",
                "json",
                body,
            ],
            &dir,
        );
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["error"]["code"], "inexact_number", "{body}");
    }
    let o = vouch_at(
        &[
            "append",
            "log.jsonl",
            "--key",
            "k",
            "{\"a\":{\"b\":[0, 1e400]}}",
        ],
        &dir,
    );
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("$.a.b[1]"), "{}", stderr(&o));
    assert!(!dir.join("log.jsonl").exists(), "nothing may be written");
}

#[test]
fn append_refuses_duplicate_member_names_at_any_depth() {
    let (_d, dir) = setup();
    for (body, path) in [
        ("{\"approved\":false,\"approved\":true}", "$.approved"),
        ("{\"a\":[{\"x\":1,\"y\":2,\"x\":3}]}", "$.a[0].x"),
        ("{\"k\":1,\"\\u006b\":2}", "$.k"),
    ] {
        let o = vouch_at(
            &[
                "append",
                "log.jsonl",
                "--key",
                "k",
                "--format",
                "json",
                body,
            ],
            &dir,
        );
        assert_eq!(code(&o), 2, "{body}");
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["error"]["code"], "duplicate_key", "{body}");
        let message = v["error"]["message"].as_str().unwrap();
        assert!(message.contains(path), "{body}: {message}");
    }
    assert!(!dir.join("log.jsonl").exists(), "nothing may be written");
}

#[test]
fn append_keeps_notation_changes_of_the_same_value() {
    let (_d, dir) = setup();
    append(
        &dir,
        "log.jsonl",
        "{ \"b\": 1.0, \"a\": [1e2, 0.10, -0, 9007199254740994] }",
    );
    let recs = lines(&dir.join("log.jsonl"));
    let text = std::fs::read_to_string(dir.join("log.jsonl")).unwrap();
    assert!(
        text.starts_with("{\"body\":{\"a\":[100,0.1,0,9007199254740994],\"b\":1},"),
        "{text}"
    );
    assert_eq!(recs.len(), 1);
}

#[test]
fn append_from_stdin_refuses_the_inexact_line_and_names_it() {
    let (_d, dir) = setup();
    let o = vouch_at_in(
        &["append", "log.jsonl", "--key", "k"],
        &dir,
        b"{\"ok\":1}\n{\"approved\":false,\"approved\":true}\n{\"never\":1}\n",
    );
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("stdin line 2"), "{}", stderr(&o));
    assert!(stderr(&o).contains("$.approved"), "{}", stderr(&o));
    let recs = lines(&dir.join("log.jsonl"));
    assert!(recs.len() <= 1, "nothing from line 2 on is written");
    let o = vouch_at_in(
        &["append", "big.jsonl", "--key", "k"],
        &dir,
        b"{\"n\":18446744073709551616}\n",
    );
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("stdin line 1"), "{}", stderr(&o));
    assert!(!dir.join("big.jsonl").exists());
}

// 3. Reserved kinds.

#[test]
fn append_refuses_every_reserved_kind_and_writes_nothing() {
    let (_d, dir) = setup();
    append(&dir, "log.jsonl", "{\"n\":0}");
    let before = std::fs::read(dir.join("log.jsonl")).unwrap();
    for kind in [
        "checkpoint",
        "key_rotation",
        "anchor",
        "stamp",
        "drift_snapshot",
        "drift_accept",
        "drift_check",
        "tool_call",
        "tool_vet",
    ] {
        let o = vouch_at(
            &[
                "append",
                "log.jsonl",
                "--key",
                "k",
                "--kind",
                kind,
                "--format",
                "json",
                "{\"note\":\"x\"}",
            ],
            &dir,
        );
        assert_eq!(code(&o), 2, "{kind}");
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["error"]["code"], "reserved_kind", "{kind}");
        let o = vouch_at_in(
            &["append", "log.jsonl", "--key", "k", "--kind", kind],
            &dir,
            b"{\"note\":\"x\"}\n",
        );
        assert_eq!(code(&o), 2, "{kind}");
        assert!(stderr(&o).contains("reserved"), "{}", stderr(&o));
        let o = vouch_at(
            &["append", "new.jsonl", "--key", "k", "--kind", kind, "{}"],
            &dir,
        );
        assert_eq!(code(&o), 2);
    }
    assert_eq!(std::fs::read(dir.join("log.jsonl")).unwrap(), before);
    assert!(!dir.join("new.jsonl").exists());
    // The commands that own the kinds still write them.
    let o = vouch_at(&["checkpoint", "log.jsonl", "--key", "k"], &dir);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let o = vouch_at(
        &["keygen", "--origin", "example.com/w", "--out", "k2"],
        &dir,
    );
    assert_eq!(code(&o), 0);
    let o = vouch_at(
        &["rotate", "log.jsonl", "--key", "k", "--new-key", "k2"],
        &dir,
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let kinds: Vec<String> = lines(&dir.join("log.jsonl"))
        .iter()
        .map(|r| r["kind"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(kinds, ["event", "checkpoint", "key_rotation"]);
    let (c, v) = verify_json(&dir, &["log.jsonl", "--pub", "k.pub"]);
    assert_eq!((c, v["logs"][0]["status"].as_str()), (0, Some("valid")));
}

// 4. One segment rule for writer and verifier.

#[test]
fn a_bak_copy_beside_the_log_does_not_stop_checkpoint() {
    let (_d, dir) = setup();
    std::fs::create_dir(dir.join("logs")).unwrap();
    for i in 0..3 {
        append(&dir, "logs/app.jsonl", &format!("{{\"n\":{i}}}"));
    }
    std::fs::copy(dir.join("logs/app.jsonl"), dir.join("logs/app.jsonl.bak")).unwrap();
    let o = vouch_at(&["checkpoint", "logs/app.jsonl", "--key", "k"], &dir);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(verify_dir(&dir, "logs"), (0, "valid".to_owned(), 1));
}

#[test]
fn a_rotation_to_old_is_not_a_segment_for_the_writer_either() {
    let (_d, dir) = setup();
    std::fs::create_dir(dir.join("logs")).unwrap();
    for i in 0..3 {
        append(&dir, "logs/app.jsonl", &format!("{{\"n\":{i}}}"));
    }
    std::fs::rename(dir.join("logs/app.jsonl"), dir.join("logs/app.jsonl.old")).unwrap();
    append(&dir, "logs/app.jsonl", "{\"n\":\"after\"}");
    // Not continued from .old: a new chain, which verify DIR accepts.
    assert_eq!(lines(&dir.join("logs/app.jsonl"))[0]["seq"], 0);
    let o = vouch_at(&["checkpoint", "logs/app.jsonl", "--key", "k"], &dir);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(verify_dir(&dir, "logs"), (0, "valid".to_owned(), 1));
}

#[test]
fn writer_and_verifier_agree_on_numeric_segments() {
    let (_d, dir) = setup();
    std::fs::create_dir(dir.join("logs")).unwrap();
    append(&dir, "logs/app.jsonl", "{\"n\":0}");
    std::fs::rename(dir.join("logs/app.jsonl"), dir.join("logs/app.jsonl.1")).unwrap();
    append(&dir, "logs/app.jsonl", "{\"n\":1}");
    std::fs::rename(
        dir.join("logs/app.jsonl"),
        dir.join("logs/app.jsonl-20261129"),
    )
    .unwrap();
    append(&dir, "logs/app.jsonl", "{\"n\":2}");
    assert_eq!(lines(&dir.join("logs/app.jsonl"))[0]["seq"], 2);
    let o = vouch_at(&["checkpoint", "logs/app.jsonl", "--key", "k"], &dir);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let note = stdout(&o);
    assert!(note.lines().nth(1) == Some("3"), "signed size 3: {note}");
    assert_eq!(verify_dir(&dir, "logs"), (0, "valid".to_owned(), 3));
}

/// Found by an independent attack: a crash left a torn record, logrotate
/// then moved the file away, and `append` to the new live file skipped the
/// segment it could not read the end of and started the chain over at seq
/// 0, a log the verifier then rejects. It now refuses, naming the segment,
/// and writes nothing, until `repair` has removed the torn record; then the
/// chain continues.
#[test]
fn append_after_a_rotation_refuses_a_segment_that_ends_in_a_torn_record() {
    let (_d, dir) = setup();
    std::fs::create_dir(dir.join("logs")).unwrap();
    for i in 0..3 {
        append(&dir, "logs/app.jsonl", &format!("{{\"n\":{i}}}"));
    }
    let mut bytes = std::fs::read(dir.join("logs/app.jsonl")).unwrap();
    bytes.extend_from_slice(b"{\"body\":{\"n\":3},\"kind\":\"ev");
    std::fs::write(dir.join("logs/app.jsonl"), &bytes).unwrap();
    std::fs::rename(dir.join("logs/app.jsonl"), dir.join("logs/app.jsonl.1")).unwrap();
    for live in [true, false] {
        // logrotate's `create` leaves an empty live file; without it, none.
        if live {
            std::fs::write(dir.join("logs/app.jsonl"), b"").unwrap();
        } else {
            let _ = std::fs::remove_file(dir.join("logs/app.jsonl"));
        }
        let o = vouch_at(
            &["append", "logs/app.jsonl", "--key", "k", "{\"n\":4}"],
            &dir,
        );
        assert_eq!(code(&o), 2, "live file {live}: {}", stdout(&o));
        assert!(stderr(&o).contains("app.jsonl.1"), "{}", stderr(&o));
        assert!(stderr(&o).contains("repair"), "{}", stderr(&o));
        let written = std::fs::read(dir.join("logs/app.jsonl")).unwrap_or_default();
        assert!(written.is_empty(), "live file {live}: wrote {written:?}");
        assert_eq!(std::fs::read(dir.join("logs/app.jsonl.1")).unwrap(), bytes);
    }
    let o = vouch_at(&["repair", "logs/app.jsonl.1"], &dir);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    append(&dir, "logs/app.jsonl", "{\"n\":4}");
    assert_eq!(lines(&dir.join("logs/app.jsonl"))[0]["seq"], 3);
    let o = vouch_at(&["checkpoint", "logs/app.jsonl", "--key", "k"], &dir);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(verify_dir(&dir, "logs"), (0, "valid".to_owned(), 2));
}

// 5. `repair` removes only a torn record.

fn log_with_records(dir: &Path, n: usize) -> Vec<u8> {
    for i in 0..n {
        append(dir, "log.jsonl", &format!("{{\"n\":{i}}}"));
    }
    std::fs::read(dir.join("log.jsonl")).unwrap()
}

/// Appends `tail` to the log, runs repair, and checks it is refused with
/// `not_a_torn_record` (exit 1) and every byte kept.
fn assert_repair_refuses(dir: &Path, before: &[u8], tail: &[u8], detail: &str) {
    let mut bytes = before.to_vec();
    bytes.extend_from_slice(tail);
    std::fs::write(dir.join("log.jsonl"), &bytes).unwrap();
    let o = vouch_at(&["repair", "log.jsonl"], dir);
    assert_eq!(code(&o), 1, "{detail}: {}", stderr(&o));
    assert!(
        stderr(&o).contains("not a torn record"),
        "{detail}: {}",
        stderr(&o)
    );
    assert!(stderr(&o).contains(detail), "{detail}: {}", stderr(&o));
    assert_eq!(
        std::fs::read(dir.join("log.jsonl")).unwrap(),
        bytes,
        "{detail}: bytes kept"
    );
}

#[test]
fn repair_refuses_nul_bytes() {
    let (_d, dir) = setup();
    let before = log_with_records(&dir, 2);
    assert_repair_refuses(&dir, &before, b"\0\0\0\0\0\0", "begin like a record");
    assert_repair_refuses(&dir, &before, b"{\"body\":\"\0\0\"", "control byte");
}

#[test]
fn repair_refuses_attacker_text() {
    let (_d, dir) = setup();
    let before = log_with_records(&dir, 2);
    assert_repair_refuses(
        &dir,
        &before,
        b"rm -rf / # attacker was here",
        "begin like a record",
    );
    assert_repair_refuses(&dir, &before, b"{\"body\": \"spaced\"", "not canonical");
    assert_repair_refuses(
        &dir,
        &before,
        b"{\"body\":{\"b\":1,\"a\":2",
        "not canonical",
    );
    assert_repair_refuses(
        &dir,
        &before,
        b"{\"body\":1}garbage",
        "not what the next record",
    );
}

#[test]
fn repair_refuses_a_fragment_over_the_line_limit() {
    let (_d, dir) = setup();
    let before = log_with_records(&dir, 2);
    let mut big = b"{\"body\":\"".to_vec();
    big.extend(std::iter::repeat_n(b'x', 3 << 19)); // 1.5 MiB
    assert_repair_refuses(&dir, &before, &big, "longer than a record line");
}

#[test]
fn repair_refuses_a_fragment_with_the_wrong_seq_origin_or_prev() {
    let (_d, dir) = setup();
    let before = log_with_records(&dir, 3);
    // The line the next record would be, from a scratch copy of the log.
    std::fs::create_dir(dir.join("scratch")).unwrap();
    std::fs::write(dir.join("scratch/log.jsonl"), &before).unwrap();
    std::fs::copy(dir.join("k"), dir.join("scratch/k")).unwrap();
    append(&dir.join("scratch"), "log.jsonl", "{\"n\":\"next\"}");
    let scratch = std::fs::read_to_string(dir.join("scratch/log.jsonl")).unwrap();
    let next = scratch.lines().last().unwrap().to_owned();
    let cut = |s: &str, upto: &str| s[..s.find(upto).unwrap() + upto.len()].to_owned();
    let wrong_seq = cut(&next.replace("\"seq\":3,", "\"seq\":7,"), "\"seq\":7,");
    assert_repair_refuses(&dir, &before, wrong_seq.as_bytes(), "\"seq\"");
    let wrong_origin = cut(&next.replace("example.com/w", "example.com/x"), "\"prev\"");
    assert_repair_refuses(&dir, &before, wrong_origin.as_bytes(), "\"origin\"");
    let prev_at = next.find("\"prev\":\"").unwrap() + 8;
    let mut wrong_prev = next.clone();
    let flipped = if &next[prev_at..prev_at + 1] == "0" {
        "1"
    } else {
        "0"
    };
    wrong_prev.replace_range(prev_at..prev_at + 1, flipped);
    assert_repair_refuses(
        &dir,
        &before,
        &wrong_prev.as_bytes()[..prev_at + 10],
        "\"prev\"",
    );
    // The genuine line, cut anywhere, is a torn record.
    for n in [
        1,
        5,
        8,
        9,
        12,
        next.find("kind").unwrap(),
        prev_at + 3,
        next.len() - 3,
        next.len(),
    ] {
        let mut bytes = before.clone();
        bytes.extend_from_slice(&next.as_bytes()[..n]);
        std::fs::write(dir.join("log.jsonl"), &bytes).unwrap();
        let o = vouch_at(&["repair", "log.jsonl"], &dir);
        assert_eq!(code(&o), 0, "cut at {n}: {}", stderr(&o));
        assert_eq!(
            std::fs::read(dir.join("log.jsonl")).unwrap(),
            before,
            "cut at {n}"
        );
    }
}

/// Kills an appender after it wrote `n` bytes of its record (failpoint).
fn torn_append(dir: &Path, n: usize, body: &str) {
    let mut child = command()
        .args(["append", "log.jsonl", "--key", "k", body])
        .env("VOUCH_FAILPOINT", format!("append_torn:{n}"))
        .current_dir(dir)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    assert!(line.contains("failpoint append_torn reached"), "{line}");
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn repair_removes_a_genuine_torn_write_cut_anywhere() {
    let (_d, dir) = setup();
    let before = log_with_records(&dir, 2);
    // A body with a number and a multi-byte character, so cuts land inside
    // them too; the full line is about 200 bytes.
    let body = "{\"a\":-0.5,\"b\":\"é€😀\",\"c\":[true,null,12345]}";
    for n in [
        1, 7, 8, 9, 14, 16, 20, 23, 26, 30, 40, 50, 60, 80, 120, 160, 190, 200,
    ] {
        torn_append(&dir, n, body);
        let len = std::fs::metadata(dir.join("log.jsonl")).unwrap().len() as usize;
        if len == before.len() + n {
            let o = vouch_at(&["repair", "log.jsonl"], &dir);
            assert_eq!(code(&o), 0, "cut at {n}: {}", stderr(&o));
            assert!(
                stdout(&o).contains("removed an incomplete final line"),
                "{n}"
            );
        } else {
            // n covered the whole line and its newline: a complete record.
            assert_eq!(lines(&dir.join("log.jsonl")).len(), 3, "{n}");
            break;
        }
        assert_eq!(
            std::fs::read(dir.join("log.jsonl")).unwrap(),
            before,
            "cut at {n}"
        );
    }
    // The very first record of a log, torn.
    std::fs::remove_file(dir.join("log.jsonl")).unwrap();
    torn_append(&dir, 150, body);
    let o = vouch_at(&["repair", "log.jsonl"], &dir);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(std::fs::read(dir.join("log.jsonl")).unwrap(), b"");
}
