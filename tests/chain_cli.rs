//! End-to-end tests of the chain commands through the real binary: exit
//! codes, output, bad input, concurrent appenders and crash recovery.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use support::{code, command, stderr, stdout, vouch_at};

/// A temp dir with key `k` / `k.pub` for origin example.com/cli.
fn setup() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let o = vouch_at(
        &["keygen", "--origin", "example.com/cli", "--out", "k"],
        dir.path(),
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let p = dir.path().to_path_buf();
    (dir, p)
}

fn verify_json(dir: &Path, args: &[&str]) -> (i32, Value) {
    let mut all = vec!["verify", "--format", "json"];
    all.extend_from_slice(args);
    let o = vouch_at(&all, dir);
    let v: Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(&o)));
    (code(&o), v)
}

#[test]
fn keygen_writes_a_private_key_with_mode_0600_and_never_overwrites() {
    use std::os::unix::fs::PermissionsExt;
    let (_d, dir) = setup();
    let mode = std::fs::metadata(dir.join("k"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    let private = std::fs::read_to_string(dir.join("k")).unwrap();
    let public = std::fs::read_to_string(dir.join("k.pub")).unwrap();
    assert!(private.starts_with("PRIVATE+KEY+example.com/cli+"));
    assert!(public.starts_with("example.com/cli+"));
    let again = vouch_at(
        &["keygen", "--origin", "example.com/cli", "--out", "k"],
        &dir,
    );
    assert_eq!(code(&again), 2);
    assert_eq!(std::fs::read_to_string(dir.join("k")).unwrap(), private);
    let bad = vouch_at(&["keygen", "--origin", "has space", "--out", "k2"], &dir);
    assert_eq!(code(&bad), 2);
    assert!(stderr(&bad).contains("invalid origin"), "{}", stderr(&bad));
}

#[test]
fn append_checkpoint_verify_round_trip_with_json_report() {
    let (_d, dir) = setup();
    for i in 0..3 {
        let o = vouch_at(
            &[
                "append",
                "log.jsonl",
                "--key",
                "k",
                &format!("{{\"n\":{i}}}"),
            ],
            &dir,
        );
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        assert_eq!(stdout(&o).trim(), format!("appended seq {i}"));
    }
    // Records no trusted checkpoint covers: not verified against the key.
    let (c, v) = verify_json(&dir, &["log.jsonl", "--pub", "k.pub"]);
    assert_eq!(c, 1);
    assert_eq!(v["logs"][0]["status"], "unauthenticated");
    assert_eq!(v["logs"][0]["reason"], "no_signed_checkpoint");
    let o = vouch_at(
        &["checkpoint", "log.jsonl", "--key", "k", "--out", "cp"],
        &dir,
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stdout(&o).starts_with("example.com/cli\n3\n"));
    let (c, v) = verify_json(&dir, &["log.jsonl", "--pub", "k.pub", "--checkpoint", "cp"]);
    assert_eq!(c, 0);
    assert_eq!(v["format"], "vouch-verify/1");
    assert_eq!(v["logs"][0]["status"], "valid");
    assert_eq!(v["logs"][0]["records"], 4);
    assert_eq!(v["logs"][0]["covered"], 3);
    assert_eq!(v["summary"]["valid"], 1);
    // Without a key: unauthenticated, exit 1 (issue 21: 0 means verified
    // against a key the user trusts); --chain-only asks for the chain alone.
    assert_eq!(code(&vouch_at(&["verify", "log.jsonl"], &dir)), 1);
    assert_eq!(
        code(&vouch_at(&["verify", "log.jsonl", "--strict"], &dir)),
        1
    );
    assert_eq!(
        code(&vouch_at(&["verify", "log.jsonl", "--chain-only"], &dir)),
        0
    );
    let table = vouch_at(&["verify", "log.jsonl", "--pub", "k.pub"], &dir);
    assert!(stdout(&table).contains("valid"), "{}", stdout(&table));
    assert!(
        stdout(&table).contains("1 log: 1 valid"),
        "{}",
        stdout(&table)
    );
}

#[test]
fn tampered_log_exits_1_with_reason_and_seq() {
    let (_d, dir) = setup();
    let input = (0..10)
        .map(|i| format!("{{\"n\":{i}}}\n"))
        .collect::<String>();
    let mut child = command()
        .args(["append", "log.jsonl", "--key", "k"])
        .current_dir(&dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(
        code(&vouch_at(&["checkpoint", "log.jsonl", "--key", "k"], &dir)),
        0
    );
    let text = std::fs::read_to_string(dir.join("log.jsonl")).unwrap();
    std::fs::write(
        dir.join("log.jsonl"),
        text.replace("{\"n\":4}", "{\"n\":5}"),
    )
    .unwrap();
    let (c, v) = verify_json(&dir, &["log.jsonl", "--pub", "k.pub"]);
    assert_eq!(c, 1);
    let log = &v["logs"][0];
    assert_eq!(log["status"], "invalid");
    assert_eq!(log["failure"]["reason"], "broken_link");
    assert_eq!(log["failure"]["seq"], 5);
    assert_eq!(log["failure"]["line"], 6);
}

#[test]
fn bad_input_gets_one_clear_line_and_the_right_exit_code() {
    let (_d, dir) = setup();
    // Operational errors: exit 2.
    let o = vouch_at(&["verify", "missing.jsonl"], &dir);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("missing.jsonl"), "{}", stderr(&o));
    std::fs::create_dir(dir.join("empty")).unwrap();
    let o = vouch_at(&["verify", "empty"], &dir);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("no log files"), "{}", stderr(&o));
    let o = vouch_at(&["append", "log.jsonl", "--key", "k.pub", "1"], &dir);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("public (verifier) key"),
        "{}",
        stderr(&o)
    );
    let o = vouch_at(&["verify", "log.jsonl", "--pub", "k"], &dir);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("PRIVATE"), "{}", stderr(&o));
    std::fs::write(dir.join("junk.key"), b"\x00\x01garbage").unwrap();
    let o = vouch_at(&["append", "log.jsonl", "--key", "junk.key", "1"], &dir);
    assert_eq!(code(&o), 2);
    let o = vouch_at(&["append", "log.jsonl", "--key", "k", "{not json"], &dir);
    assert_eq!(code(&o), 2);
    assert!(
        !dir.join("log.jsonl").exists() || std::fs::read(dir.join("log.jsonl")).unwrap().is_empty()
    );

    // Rejected evidence: exit 1 with a reason.
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "garbage.jsonl",
            (0..=255u8).cycle().take(5000).collect(),
            "bad_json",
        ),
        (
            "utf8.jsonl",
            b"{\"body\":\"\xc3\x28\"}\n".to_vec(),
            "bad_utf8",
        ),
        ("notjson.jsonl", b"hello world\n".to_vec(), "bad_json"),
        (
            "deep.jsonl",
            format!("{}{}\n", "[".repeat(10_000), "]".repeat(10_000)).into_bytes(),
            "too_deep",
        ),
        ("nul.jsonl", b"\x00\x00\x00\x00".to_vec(), "trailing_data"),
    ];
    for (name, bytes, reason) in cases {
        std::fs::write(dir.join(name), bytes).unwrap();
        let (c, v) = verify_json(&dir, &[name]);
        assert_eq!(c, 1, "{name}");
        assert_eq!(v["logs"][0]["failure"]["reason"], reason, "{name}");
        let o = vouch_at(&["verify", name], &dir);
        assert!(!stderr(&o).contains("panicked"), "{name}");
    }
}

#[test]
fn a_100_mb_line_is_rejected_in_bounded_memory() {
    let (_d, dir) = setup();
    let path = dir.join("huge.jsonl");
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        f.write_all(b"{\"body\":\"").unwrap();
        let chunk = vec![b'a'; 1 << 20];
        for _ in 0..100 {
            f.write_all(&chunk).unwrap();
        }
        f.write_all(b"\"}\n").unwrap();
    }
    // 80 MB of address space is less than the line: it must never be held whole.
    let o = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "ulimit -v 80000; exec {} verify --format json huge.jsonl",
            support::BIN
        ))
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["logs"][0]["failure"]["reason"], "line_too_long");
}

#[test]
fn proofs_verify_offline_and_tampering_is_rejected() {
    let (_d, dir) = setup();
    for i in 0..9 {
        vouch_at(
            &[
                "append",
                "log.jsonl",
                "--key",
                "k",
                &format!("{{\"n\":{i}}}"),
            ],
            &dir,
        );
    }
    let o = vouch_at(&["prove", "log.jsonl", "--seq", "4"], &dir);
    assert_eq!(code(&o), 2, "not covered yet");
    assert!(stderr(&o).contains("not covered"), "{}", stderr(&o));
    vouch_at(&["checkpoint", "log.jsonl", "--key", "k"], &dir);
    let text = std::fs::read_to_string(dir.join("log.jsonl")).unwrap();
    for seq in 0..9usize {
        let o = vouch_at(
            &[
                "prove",
                "log.jsonl",
                "--seq",
                &seq.to_string(),
                "--out",
                "p",
            ],
            &dir,
        );
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        std::fs::write(dir.join("rec"), text.lines().nth(seq).unwrap()).unwrap();
        let o = vouch_at(
            &["verify-proof", "p", "--record", "rec", "--pub", "k.pub"],
            &dir,
        );
        assert_eq!(code(&o), 0, "seq {seq}: {}", stderr(&o));
    }
    // The wrong record for the proof.
    std::fs::write(dir.join("rec"), text.lines().nth(3).unwrap()).unwrap();
    let o = vouch_at(
        &[
            "verify-proof",
            "p",
            "--record",
            "rec",
            "--pub",
            "k.pub",
            "--format",
            "json",
        ],
        &dir,
    );
    assert_eq!(code(&o), 1);
    assert!(stdout(&o).contains("index_mismatch"), "{}", stdout(&o));
    // A changed proof hash.
    std::fs::write(dir.join("rec"), text.lines().nth(8).unwrap()).unwrap();
    let proof = std::fs::read_to_string(dir.join("p")).unwrap();
    let hash_line = proof.lines().nth(2).unwrap();
    let flipped = if hash_line.starts_with('A') {
        hash_line.replacen('A', "B", 1)
    } else {
        format!("A{}", &hash_line[1..])
    };
    std::fs::write(dir.join("p2"), proof.replacen(hash_line, &flipped, 1)).unwrap();
    let o = vouch_at(
        &[
            "verify-proof",
            "p2",
            "--record",
            "rec",
            "--pub",
            "k.pub",
            "--format",
            "json",
        ],
        &dir,
    );
    assert_eq!(code(&o), 1);
    assert!(stdout(&o).contains("inclusion_failed"), "{}", stdout(&o));
    // Another key.
    vouch_at(
        &["keygen", "--origin", "example.com/cli", "--out", "other"],
        &dir,
    );
    let o = vouch_at(
        &[
            "verify-proof",
            "p",
            "--record",
            "rec",
            "--pub",
            "other.pub",
            "--format",
            "json",
        ],
        &dir,
    );
    assert_eq!(code(&o), 1);
    assert!(stdout(&o).contains("unknown_key"), "{}", stdout(&o));
}

/// Parses `--format json` acknowledgements: (seq, leaf hex).
fn acks(text: &str) -> Vec<(u64, String)> {
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|v| {
            (
                v["seq"].as_u64().unwrap(),
                v["leaf"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn leaf_of_line(line: &str) -> String {
    vouch::hex::encode(&vouch::merkle::leaf_hash(line.as_bytes()))
}

#[test]
fn concurrent_appenders_produce_one_valid_chain_with_every_acknowledged_record() {
    let (_d, dir) = setup();
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let input: String = (0..200)
                .map(|i| format!("{{\"writer\":{w},\"i\":{i}}}\n"))
                .collect();
            let mut child = command()
                .args(["append", "log.jsonl", "--key", "k", "--format", "json"])
                .current_dir(&dir)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            let mut stdin = child.stdin.take().unwrap();
            // Feed line by line so the appenders interleave batch by batch.
            std::thread::spawn(move || {
                for line in input.lines() {
                    stdin.write_all(format!("{line}\n").as_bytes()).unwrap();
                }
            });
            child
        })
        .collect();
    let mut acked = Vec::new();
    for w in writers {
        let out = w.wait_with_output().unwrap();
        assert!(out.status.success());
        acked.extend(acks(&stdout(&out)));
    }
    assert_eq!(acked.len(), 800);
    let text = std::fs::read_to_string(dir.join("log.jsonl")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 800);
    for (seq, leaf) in &acked {
        assert_eq!(&leaf_of_line(lines[*seq as usize]), leaf, "seq {seq}");
    }
    vouch_at(&["checkpoint", "log.jsonl", "--key", "k"], &dir);
    let (c, v) = verify_json(&dir, &["log.jsonl", "--pub", "k.pub"]);
    assert_eq!((c, v["logs"][0]["status"].as_str()), (0, Some("valid")));
}

#[test]
fn an_appender_killed_mid_write_leaves_a_torn_tail_that_repair_removes() {
    let (_d, dir) = setup();
    for i in 0..5 {
        vouch_at(
            &[
                "append",
                "log.jsonl",
                "--key",
                "k",
                &format!("{{\"n\":{i}}}"),
            ],
            &dir,
        );
    }
    let o = vouch_at(&["checkpoint", "log.jsonl", "--key", "k"], &dir);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let before = std::fs::read(dir.join("log.jsonl")).unwrap();
    let mut child = command()
        .args(["append", "log.jsonl", "--key", "k", "{\"n\":\"torn\"}"])
        .env("VOUCH_FAILPOINT", "append_torn:40")
        .current_dir(&dir)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    assert!(line.contains("failpoint append_torn reached"), "{line}");
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let after = std::fs::read(dir.join("log.jsonl")).unwrap();
    assert_eq!(after.len(), before.len() + 40);
    let (c, v) = verify_json(&dir, &["log.jsonl", "--pub", "k.pub"]);
    assert_eq!(c, 0);
    assert_eq!(v["logs"][0]["status"], "partial");
    assert_eq!(v["logs"][0]["reason"], "torn_tail");
    assert_eq!(v["logs"][0]["torn_tail_bytes"], 40);
    // Appending on top of a torn tail is refused.
    let o = vouch_at(&["append", "log.jsonl", "--key", "k", "1"], &dir);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("vouch repair"), "{}", stderr(&o));
    let o = vouch_at(&["repair", "log.jsonl"], &dir);
    assert_eq!(code(&o), 0);
    assert!(
        stdout(&o).contains("removed an incomplete final line of 40 bytes"),
        "{}",
        stdout(&o)
    );
    assert_eq!(std::fs::read(dir.join("log.jsonl")).unwrap(), before);
    let o = vouch_at(&["repair", "log.jsonl"], &dir);
    assert!(stdout(&o).contains("nothing removed"));
    vouch_at(&["checkpoint", "log.jsonl", "--key", "k"], &dir);
    let (c, v) = verify_json(&dir, &["log.jsonl", "--pub", "k.pub"]);
    assert_eq!((c, v["logs"][0]["status"].as_str()), (0, Some("valid")));
}

#[test]
fn killing_a_bulk_appender_at_any_moment_loses_no_acknowledged_record() {
    let (_d, dir) = setup();
    let mut child = command()
        .args(["append", "log.jsonl", "--key", "k", "--format", "json"])
        .current_dir(&dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || {
        for i in 0..1_000_000u64 {
            if stdin
                .write_all(format!("{{\"i\":{i},\"pad\":\"{}\"}}\n", "x".repeat(100)).as_bytes())
                .is_err()
            {
                break;
            }
        }
    });
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut acked = Vec::new();
    let mut line = String::new();
    while acked.len() < 2000 {
        line.clear();
        if out.read_line(&mut line).unwrap() == 0 {
            break;
        }
        acked.extend(acks(&line));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    feeder.join().unwrap();
    assert!(acked.len() >= 2000);
    vouch_at(&["repair", "log.jsonl"], &dir);
    let text = std::fs::read_to_string(dir.join("log.jsonl")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    for (seq, leaf) in &acked {
        assert_eq!(&leaf_of_line(lines[*seq as usize]), leaf, "seq {seq}");
    }
    let (c, v) = verify_json(&dir, &["log.jsonl", "--chain-only"]);
    assert_eq!(c, 0);
    assert_eq!(v["logs"][0]["status"], "unauthenticated");
}

#[test]
fn help_and_usage_errors() {
    let o = command().arg("--help").output().unwrap();
    assert_eq!(code(&o), 0);
    for cmd in [
        "keygen",
        "append",
        "checkpoint",
        "verify",
        "prove",
        "verify-proof",
        "repair",
        "rotate",
    ] {
        assert!(stdout(&o).contains(cmd), "{cmd}");
    }
    let o = command().args(["verify"]).output().unwrap();
    assert_eq!(code(&o), 2);
    let o = command().args(["frobnicate"]).output().unwrap();
    assert_eq!(code(&o), 2);
}

#[test]
fn consistency_proofs_between_checkpoints() {
    let (_d, dir) = setup();
    for i in 0..5 {
        vouch_at(
            &[
                "append",
                "log.jsonl",
                "--key",
                "k",
                &format!("{{\"n\":{i}}}"),
            ],
            &dir,
        );
    }
    assert_eq!(
        code(&vouch_at(
            &["checkpoint", "log.jsonl", "--key", "k", "--out", "old.cp"],
            &dir
        )),
        0
    );
    for i in 5..13 {
        vouch_at(
            &[
                "append",
                "log.jsonl",
                "--key",
                "k",
                &format!("{{\"n\":{i}}}"),
            ],
            &dir,
        );
    }
    vouch_at(&["checkpoint", "log.jsonl", "--key", "k"], &dir);
    let o = vouch_at(
        &[
            "prove",
            "log.jsonl",
            "--consistency-from",
            "5",
            "--out",
            "c.proof",
        ],
        &dir,
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let o = vouch_at(
        &[
            "verify-consistency",
            "c.proof",
            "--old",
            "old.cp",
            "--pub",
            "k.pub",
            "--format",
            "json",
        ],
        &dir,
    );
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (v["old_size"].as_u64(), v["new_size"].as_u64()),
        (Some(5), Some(14))
    );
    // A proof for another old size does not fit the kept checkpoint.
    vouch_at(
        &[
            "prove",
            "log.jsonl",
            "--consistency-from",
            "4",
            "--out",
            "c4.proof",
        ],
        &dir,
    );
    let o = vouch_at(
        &[
            "verify-consistency",
            "c4.proof",
            "--old",
            "old.cp",
            "--pub",
            "k.pub",
            "--format",
            "json",
        ],
        &dir,
    );
    assert_eq!(code(&o), 1);
    assert!(stdout(&o).contains("size_mismatch"), "{}", stdout(&o));
    // A rewritten history re-signed with the key: the new checkpoint is a fork of the kept one.
    let text = std::fs::read_to_string(dir.join("log.jsonl")).unwrap();
    let forged_dir = dir.join("forged");
    std::fs::create_dir(&forged_dir).unwrap();
    let bodies: Vec<String> = text
        .lines()
        .filter(|l| l.contains("\"kind\":\"event\""))
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            v["body"].to_string()
        })
        .collect();
    for (i, b) in bodies.iter().enumerate() {
        let b = if i == 2 {
            "{\"n\":\"forged\"}".to_owned()
        } else {
            b.clone()
        };
        vouch_at(&["append", "forged/log.jsonl", "--key", "k", &b], &dir);
        if i == 4 {
            vouch_at(&["checkpoint", "forged/log.jsonl", "--key", "k"], &dir);
        }
    }
    vouch_at(&["checkpoint", "forged/log.jsonl", "--key", "k"], &dir);
    vouch_at(
        &[
            "prove",
            "forged/log.jsonl",
            "--consistency-from",
            "5",
            "--out",
            "f.proof",
        ],
        &dir,
    );
    let o = vouch_at(
        &[
            "verify-consistency",
            "f.proof",
            "--old",
            "old.cp",
            "--pub",
            "k.pub",
            "--format",
            "json",
        ],
        &dir,
    );
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    assert!(
        stdout(&o).contains("\"reason\": \"fork\""),
        "{}",
        stdout(&o)
    );
}

/// The README's first command: the committed example fleet verifies with
/// exactly one failure, the tampered deploy in db-1.
#[test]
fn readme_example_fleet_has_exactly_one_tampered_log() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let o = vouch_at(
        &[
            "verify",
            "examples/",
            "--pub",
            "examples/keys.pub",
            "--format",
            "json",
        ],
        root,
    );
    assert_eq!(code(&o), 1);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["summary"]["logs"], 4);
    assert_eq!(v["summary"]["valid"], 3);
    assert_eq!(v["summary"]["invalid"], 1);
    let bad: Vec<&Value> = v["logs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["status"] == "invalid")
        .collect();
    assert!(bad[0]["path"].as_str().unwrap().ends_with("db-1.jsonl"));
    assert_eq!(bad[0]["failure"]["reason"], "broken_link");
    assert_eq!(bad[0]["failure"]["seq"], 7);
    let table = vouch_at(&["verify", "examples/", "--pub", "examples/keys.pub"], root);
    assert!(
        stdout(&table).contains("4 logs: 3 valid, 1 invalid"),
        "{}",
        stdout(&table)
    );
}

// --- issue 21: exit 0 means verified against a key the user trusts ---------

/// A log of `n` records and one checkpoint, signed by `key` (in `dir`).
fn signed_log(dir: &Path, log: &str, key: &str, n: usize) {
    for i in 0..n {
        let o = vouch_at(
            &["append", log, "--key", key, &format!("{{\"n\":{i}}}")],
            dir,
        );
        assert_eq!(code(&o), 0, "{}", stderr(&o));
    }
    let o = vouch_at(&["checkpoint", log, "--key", key], dir);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
}

/// Issue 21: without --pub a log is `unauthenticated`, and that used to
/// exit 0, which a cron job reads as verified. Now exit 1, and the report
/// still says what was and was not checked.
#[test]
fn verify_without_a_trusted_key_exits_1_and_says_unauthenticated() {
    let (_d, dir) = setup();
    signed_log(&dir, "log.jsonl", "k", 3);
    let (c, v) = verify_json(&dir, &["log.jsonl"]);
    assert_eq!(c, 1, "{v}");
    assert_eq!(v["exit_code"], 1);
    assert_eq!(v["mode"], "authenticated");
    assert_eq!(v["authenticated"], false);
    let log = &v["logs"][0];
    assert_eq!(log["status"], "unauthenticated");
    assert_eq!(log["reason"], "no_trusted_key");
    // What was checked: the chain, the tree and the checkpoint's root.
    assert_eq!(log["records"], 4);
    assert_eq!(log["checkpoints"], 1);
    assert!(log["root"].is_string());
    assert_eq!(v["summary"]["unauthenticated"], 1);
    let o = vouch_at(&["verify", "log.jsonl"], &dir);
    assert_eq!(code(&o), 1);
    let table = stdout(&o);
    assert!(table.contains("unauthenticated (rejected)"), "{table}");
    assert!(
        table.contains("1 checkpoint signature(s) not checked"),
        "{table}"
    );
    assert!(table.contains("--chain-only"), "{table}");
    // ndjson: the summary line says the same.
    let o = vouch_at(&["verify", "log.jsonl", "--format", "ndjson"], &dir);
    assert_eq!(code(&o), 1);
    let last: Value = serde_json::from_str(stdout(&o).lines().last().unwrap()).unwrap();
    assert_eq!(last["mode"], "authenticated");
    assert_eq!(last["authenticated"], false);
    assert_eq!(last["exit_code"], 1);
    // With the key: valid, exit 0, authenticated.
    let (c, v) = verify_json(&dir, &["log.jsonl", "--pub", "k.pub"]);
    assert_eq!(c, 0, "{v}");
    assert_eq!(v["authenticated"], true);
    assert_eq!(v["logs"][0]["status"], "valid");
    assert_eq!(v["logs"][0]["reason"], Value::Null);
}

/// `--chain-only`: the user asks for the hash chain and tree only. An
/// internally consistent log exits 0, and the report says that nothing
/// was authenticated; a broken chain is still exit 1.
#[test]
fn chain_only_exits_0_for_a_consistent_log_and_claims_nothing_more() {
    let (_d, dir) = setup();
    signed_log(&dir, "log.jsonl", "k", 3);
    let (c, v) = verify_json(&dir, &["log.jsonl", "--chain-only"]);
    assert_eq!(c, 0, "{v}");
    assert_eq!(v["exit_code"], 0);
    assert_eq!(v["mode"], "chain_only");
    assert_eq!(v["authenticated"], false);
    assert_eq!(v["logs"][0]["status"], "unauthenticated");
    assert_eq!(v["logs"][0]["reason"], "no_trusted_key");
    assert_eq!(v["summary"]["valid"], 0);
    let o = vouch_at(&["verify", "log.jsonl", "--chain-only"], &dir);
    assert_eq!(code(&o), 0);
    assert!(
        stdout(&o).contains("no key is trusted, so nothing is authenticated"),
        "{}",
        stdout(&o)
    );
    let o = vouch_at(
        &["verify", "log.jsonl", "--chain-only", "--format", "ndjson"],
        &dir,
    );
    let last: Value = serde_json::from_str(stdout(&o).lines().last().unwrap()).unwrap();
    assert_eq!(last["mode"], "chain_only");
    assert_eq!(last["authenticated"], false);
    // A broken chain is rejected in chain-only mode too.
    let text = std::fs::read_to_string(dir.join("log.jsonl")).unwrap();
    std::fs::write(
        dir.join("log.jsonl"),
        text.replace("{\"n\":1}", "{\"n\":9}"),
    )
    .unwrap();
    let (c, v) = verify_json(&dir, &["log.jsonl", "--chain-only"]);
    assert_eq!(c, 1, "{v}");
    assert_eq!(v["logs"][0]["status"], "invalid");
}

/// `--chain-only` trusts no key: given with --pub, --checkpoint (which
/// needs keys) or --strict it is a usage error, exit 2, nothing verified.
#[test]
fn chain_only_with_keys_checkpoints_or_strict_is_a_usage_error() {
    let (_d, dir) = setup();
    signed_log(&dir, "log.jsonl", "k", 1);
    std::fs::write(dir.join("cp"), "x").unwrap();
    for extra in [
        vec!["--pub", "k.pub"],
        vec!["--checkpoint", "cp"],
        vec!["--strict"],
    ] {
        let mut args = vec!["verify", "log.jsonl", "--chain-only"];
        args.extend(&extra);
        let o = vouch_at(&args, &dir);
        assert_eq!(code(&o), 2, "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("--chain-only"), "{}", stderr(&o));
        assert!(stdout(&o).is_empty(), "{}", stdout(&o));
    }
}

/// The attack: someone rewrites the log and re-signs it under a
/// fresh key of the same origin. With the real key: rejected. Without a
/// key: rejected too (it used to pass, exit 0). `--chain-only` accepts the
/// consistent chain, and says that it authenticated nothing.
#[test]
fn a_log_resigned_under_a_fresh_key_of_the_same_origin_never_exits_0_by_default() {
    let (_d, dir) = setup();
    signed_log(&dir, "log.jsonl", "k", 3);
    assert_eq!(
        code(&vouch_at(&["verify", "log.jsonl", "--pub", "k.pub"], &dir)),
        0
    );
    // The attacker's own key, named after the same origin, and a log of
    // their choosing written and signed with it in place of the real one.
    let o = vouch_at(
        &["keygen", "--origin", "example.com/cli", "--out", "evil"],
        &dir,
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    std::fs::remove_file(dir.join("log.jsonl")).unwrap();
    signed_log(&dir, "log.jsonl", "evil", 3);
    let (c, v) = verify_json(&dir, &["log.jsonl", "--pub", "k.pub"]);
    assert_eq!(c, 1, "{v}");
    assert_eq!(v["logs"][0]["status"], "invalid");
    assert_eq!(v["logs"][0]["failure"]["reason"], "unknown_key");
    let (c, v) = verify_json(&dir, &["log.jsonl"]);
    assert_eq!(c, 1, "{v}");
    assert_eq!(v["logs"][0]["status"], "unauthenticated");
    let (c, v) = verify_json(&dir, &["log.jsonl", "--chain-only"]);
    assert_eq!(c, 0, "{v}");
    assert_eq!(v["authenticated"], false);
    assert_eq!(v["logs"][0]["status"], "unauthenticated");
}

/// With --pub given, a log of an origin no key is given for is
/// unauthenticated (exit 1), even when it holds no checkpoint that could
/// fail (it used to be `partial`, exit 0); the other logs are reported as
/// they are.
#[test]
fn a_log_whose_origin_has_no_key_given_is_unauthenticated_in_a_fleet() {
    let (_d, dir) = setup();
    std::fs::create_dir(dir.join("fleet")).unwrap();
    signed_log(&dir, "fleet/a.jsonl", "k", 2);
    let o = vouch_at(
        &["keygen", "--origin", "example.com/other", "--out", "other"],
        &dir,
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    for i in 0..2 {
        let o = vouch_at(
            &[
                "append",
                "fleet/b.jsonl",
                "--key",
                "other",
                &format!("{{\"i\":{i}}}"),
            ],
            &dir,
        );
        assert_eq!(code(&o), 0, "{}", stderr(&o));
    }
    let (c, v) = verify_json(&dir, &["fleet", "--pub", "k.pub"]);
    assert_eq!(c, 1, "{v}");
    assert_eq!(v["authenticated"], false);
    let status = |name: &str| {
        v["logs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["path"].as_str().unwrap().ends_with(name))
            .unwrap()["status"]
            .clone()
    };
    assert_eq!(status("a.jsonl"), "valid");
    assert_eq!(status("b.jsonl"), "unauthenticated");
    // With both keys, once b is checkpointed: two valid logs.
    let o = vouch_at(&["checkpoint", "fleet/b.jsonl", "--key", "other"], &dir);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let (c, v) = verify_json(&dir, &["fleet", "--pub", "k.pub", "--pub", "other.pub"]);
    assert_eq!(c, 0, "{v}");
    assert_eq!(v["authenticated"], true);
}

/// A log with records that no trusted checkpoint covers at all proves
/// nothing about the key: an attacker who replaces a log with a fresh,
/// never-signed one of the same origin (no signing key needed) must not
/// pass `verify --pub`. Once a checkpoint covers a prefix, a later
/// uncovered tail is `partial` (exit 0; `--strict` rejects it).
#[test]
fn a_log_no_trusted_checkpoint_covers_is_unauthenticated_not_partial() {
    let (_d, dir) = setup();
    // The attacker's own key of the same origin writes records but never
    // signs a checkpoint: only the chain links, which anyone can compute.
    let o = vouch_at(
        &["keygen", "--origin", "example.com/cli", "--out", "evil"],
        &dir,
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    for i in 0..3 {
        let o = vouch_at(
            &[
                "append",
                "log.jsonl",
                "--key",
                "evil",
                &format!("{{\"i\":{i}}}"),
            ],
            &dir,
        );
        assert_eq!(code(&o), 0, "{}", stderr(&o));
    }
    let (c, v) = verify_json(&dir, &["log.jsonl", "--pub", "k.pub"]);
    assert_eq!(c, 1, "{v}");
    assert_eq!(v["logs"][0]["status"], "unauthenticated", "{v}");
    assert_eq!(v["logs"][0]["reason"], "no_signed_checkpoint", "{v}");
    assert_eq!(v["authenticated"], false, "{v}");
    let table = vouch_at(&["verify", "log.jsonl", "--pub", "k.pub"], &dir);
    assert!(
        stdout(&table).contains("no_signed_checkpoint"),
        "{}",
        stdout(&table)
    );
    // A checkpoint by the trusted key over a prefix, then more records:
    // partial, exit 0; --strict rejects.
    std::fs::remove_file(dir.join("log.jsonl")).unwrap();
    signed_log(&dir, "log.jsonl", "k", 2);
    let o = vouch_at(&["append", "log.jsonl", "--key", "k", "{\"tail\":1}"], &dir);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let (c, v) = verify_json(&dir, &["log.jsonl", "--pub", "k.pub"]);
    assert_eq!(c, 0, "{v}");
    assert_eq!(v["logs"][0]["status"], "partial", "{v}");
    let (c, _) = verify_json(&dir, &["log.jsonl", "--pub", "k.pub", "--strict"]);
    assert_eq!(c, 1);
}

/// A log cut to zero bytes (or to one torn line) has nothing a trusted
/// key vouches for: not a clean pass, in a fleet either.
#[test]
fn an_emptied_log_is_not_a_clean_pass() {
    let (_d, dir) = setup();
    std::fs::create_dir(dir.join("fleet")).unwrap();
    let o = vouch_at(
        &["keygen", "--origin", "example.com/other", "--out", "other"],
        &dir,
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    signed_log(&dir, "fleet/a.jsonl", "k", 2);
    signed_log(&dir, "fleet/b.jsonl", "other", 2);
    let keys = ["fleet", "--pub", "k.pub", "--pub", "other.pub"];
    let (c, v) = verify_json(&dir, &keys);
    assert_eq!(c, 0, "{v}");
    for content in [
        &b""[..],
        &b"{\"origin\":\"example.com/other\",\"seq\":0"[..],
    ] {
        std::fs::write(dir.join("fleet/b.jsonl"), content).unwrap();
        let (c, v) = verify_json(&dir, &keys);
        assert_eq!(c, 1, "{v}");
        let b = v["logs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["path"].as_str().unwrap().ends_with("b.jsonl"))
            .unwrap()
            .clone();
        if content.is_empty() {
            assert_eq!(b["status"], "unauthenticated", "{v}");
            assert_eq!(b["reason"], "no_signed_checkpoint", "{v}");
        } else {
            // A lone unterminated line is not a torn tail of a record.
            assert_eq!(b["status"], "invalid", "{v}");
        }
    }
}
