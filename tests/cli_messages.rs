//! Messages a newcomer meets (issue 24): each points at the right thing,
//! says what vouch did and what to do, and none carries Rust debug text.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use support::*;

/// Rust debug text that must never reach a user.
fn debug_text(text: &str) -> Option<&'static str> {
    let bad = [
        "Some(", "None)", ": None", "Ok(", "Err(", "PathBuf", "\"}\"", "{:?}",
    ];
    bad.into_iter().find(|b| text.contains(b))
}

fn assert_clean(what: &str, o: &std::process::Output) {
    for (stream, text) in [("stdout", stdout(o)), ("stderr", stderr(o))] {
        if let Some(b) = debug_text(&text) {
            panic!("{what}: {stream} holds debug text {b:?}:\n{text}");
        }
        // A bare `None` word (a debug Option), not `none` in a sentence.
        assert!(
            !text
                .split(|c: char| !c.is_alphanumeric())
                .any(|w| w == "None"),
            "{what}: {stream} holds `None`:\n{text}"
        );
    }
}

struct Drift {
    w: tempfile::TempDir,
}

impl Drift {
    fn new() -> Drift {
        let w = workdir();
        for k in ["k", "other"] {
            let o = vouch_at(
                &["keygen", "--origin", "d.example/drift", "--out", k],
                w.path(),
            );
            assert_eq!(code(&o), 0, "{}", stderr(&o));
        }
        std::fs::create_dir(w.path().join("etc")).unwrap();
        std::fs::write(w.path().join("etc/a"), "a\n").unwrap();
        std::fs::write(w.path().join("c.json"), "{\"a\":1}").unwrap();
        for t in ["etc", "c.json"] {
            let o = vouch_at(
                &["drift", "snapshot", t, "--log", "L", "--key", "k"],
                w.path(),
            );
            assert_eq!(code(&o), 0, "{}", stderr(&o));
            assert!(stdout(&o).contains(": 1 item, "), "{}", stdout(&o));
        }
        Drift { w }
    }
    fn run(&self, args: &[&str]) -> std::process::Output {
        vouch_at(args, self.w.path())
    }
}

#[test]
fn drift_with_the_wrong_key_is_rejected_without_debug_text() {
    let d = Drift::new();
    let o = d.run(&[
        "drift",
        "check",
        "c.json",
        "--log",
        "L",
        "--pub",
        "other.pub",
    ]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert_clean("drift check, wrong key", &o);
    let e = stderr(&o);
    // Rejected evidence is not an "error" (exit 2 keeps that word).
    assert!(e.starts_with("vouch: rejected: "), "{e}");
    assert!(e.contains("does not verify at record 1"), "{e}");
}

#[test]
fn a_value_that_changed_type_shows_both_types() {
    let d = Drift::new();
    std::fs::write(d.w.path().join("c.json"), "{\"a\":\"1\"}").unwrap();
    let o = d.run(&["drift", "check", "c.json", "--log", "L", "--pub", "k.pub"]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("value: 1 → \"1\" (number → string)"), "{out}");
    assert!(out.contains("(1 item now;"), "{out}");
    // The same type stays plain text.
    std::fs::write(d.w.path().join("c.json"), "{\"a\":2}").unwrap();
    let out = stdout(&d.run(&["drift", "check", "c.json", "--log", "L", "--pub", "k.pub"]));
    assert!(out.contains("value: 1 → 2"), "{out}");
    assert!(!out.contains("number → number"), "{out}");
}

#[test]
fn drift_history_finds_a_target_by_its_relative_path_and_says_when_nothing_is_recorded() {
    let d = Drift::new();
    let o = d.run(&[
        "drift", "history", "--log", "L", "--pub", "k.pub", "--target", "etc",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let out = stdout(&o);
    let abs = std::fs::canonicalize(d.w.path().join("etc")).unwrap();
    assert!(out.contains(&abs.display().to_string()), "{out}");
    assert!(out.contains("drift_snapshot"), "{out}");
    // The recorded name itself works too.
    let o = d.run(&[
        "drift",
        "history",
        "--log",
        "L",
        "--pub",
        "k.pub",
        "--target",
        &abs.display().to_string(),
    ]);
    assert!(stdout(&o).contains("drift_snapshot"), "{}", stdout(&o));
    // A target the log never recorded: said, exit 2, not an empty table.
    let o = d.run(&[
        "drift", "history", "--log", "L", "--pub", "k.pub", "--target", "nope",
    ]);
    assert_eq!(code(&o), 2, "{}", stdout(&o));
    assert!(stdout(&o).is_empty(), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("the log records nothing for this target"),
        "{}",
        stderr(&o)
    );
    let o = d.run(&[
        "drift", "history", "--log", "L", "--pub", "k.pub", "--target", "nope", "--format", "json",
    ]);
    assert_eq!(code(&o), 2);
    assert_eq!(
        json(&o)["error"]["code"],
        "target_not_recorded",
        "{}",
        stdout(&o)
    );
    // A log with no drift records at all.
    let o = d.run(&["append", "E", "--key", "k", "{\"a\":1}"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let o = d.run(&["drift", "history", "--log", "E", "--pub", "k.pub"]);
    assert_eq!(code(&o), 0);
    assert!(stdout(&o).contains("no drift records"), "{}", stdout(&o));
}

#[test]
fn stamp_verify_from_another_directory_suggests_base() {
    let w = workdir();
    let o = vouch_at(
        &["keygen", "--origin", "s.example/x", "--out", "k"],
        w.path(),
    );
    assert_eq!(code(&o), 0);
    std::fs::create_dir(w.path().join("out")).unwrap();
    std::fs::write(w.path().join("out/a.txt"), "a").unwrap();
    let o = vouch_at(&["stamp", "out", "--key", "k", "--out", "r.json"], w.path());
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let elsewhere = workdir();
    let receipt = w.path().join("r.json");
    let key = w.path().join("k.pub");
    let args = [
        "stamp",
        "verify",
        receipt.to_str().unwrap(),
        "--pub",
        key.to_str().unwrap(),
    ];
    let o = vouch_at(&args, elsewhere.path());
    assert_eq!(code(&o), 1);
    assert!(stdout(&o).contains("hint: none of the stamped files is under the current directory"));
    assert!(stdout(&o).contains("--base DIR"), "{}", stdout(&o));
    assert_clean("stamp verify elsewhere", &o);
    // Where the files are, no hint.
    let o = vouch_at(&args, w.path());
    assert!(!stdout(&o).contains("hint:"), "{}", stdout(&o));
}

#[test]
fn a_receipt_without_an_anchor_says_how_to_accept_it() {
    let w = workdir();
    let run = |args: &[&str]| vouch_at(args, w.path());
    assert_eq!(
        code(&run(&["keygen", "--origin", "r.example/x", "--out", "k"])),
        0
    );
    assert_eq!(code(&run(&["append", "L", "--key", "k", "{\"a\":1}"])), 0);
    assert_eq!(code(&run(&["checkpoint", "L", "--key", "k"])), 0);
    let o = run(&["receipt", "L", "--seq", "0", "--out", "r.json"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let o = run(&["receipt", "verify", "r.json", "--pub", "k.pub"]);
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    let out = stdout(&o);
    assert!(out.contains("verdict: signed, not anchored"), "{out}");
    assert!(out.contains("add --allow-unanchored"), "{out}");
    assert_clean("receipt verify", &o);
    let o = run(&[
        "receipt",
        "verify",
        "r.json",
        "--pub",
        "k.pub",
        "--allow-unanchored",
    ]);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    assert!(!stdout(&o).contains("hint:"), "{}", stdout(&o));
}

#[cfg(feature = "s3")]
#[test]
fn missing_s3_credentials_are_named_as_such() {
    let home = workdir();
    // No credentials anywhere: an empty environment and home, no metadata
    // service (a closed local port).
    let o = command()
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("AWS_EC2_METADATA_SERVICE_ENDPOINT", "http://127.0.0.1:9")
        .args([
            "anchor",
            "doctor",
            "s3://bucket",
            "--endpoint",
            "http://127.0.0.1:9",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("no AWS credentials were found"), "{e}");
    assert!(e.contains("AWS_ACCESS_KEY_ID"), "{e}");
    assert!(e.contains("~/.aws/credentials"), "{e}");
    assert!(!e.contains("cannot connect to the endpoint"), "{e}");
}

#[test]
fn counts_are_singular_for_one() {
    let w = Work::new(1);
    let o = vouch(&["verify", Work::s(&w.log), "--pub", Work::s(&w.pubkey)]);
    let out = stdout(&o);
    assert!(out.contains("1 log: "), "{out}");
    assert!(out.contains("; 1 record"), "{out}");
    assert!(
        !out.contains("1 logs") && !out.contains("1 records"),
        "{out}"
    );
}

/// Every command, on good and on bad input, prints no debug text.
#[test]
fn no_output_holds_debug_text() {
    let d = Drift::new();
    let p = d.w.path();
    std::fs::write(p.join("bad.json"), "{not json").unwrap();
    std::fs::write(p.join("tools.json"), "{\"tools\":[{\"name\":\"x\"}]}").unwrap();
    let cases: &[&[&str]] = &[
        &["verify", "L", "--pub", "k.pub"],
        &["verify", "L", "--pub", "other.pub"],
        &["verify", "missing.jsonl", "--pub", "k.pub"],
        &["verify", "L", "--pub", "bad.json"],
        &["verify", "L", "--chain-only"],
        &["append", "L", "--key", "k", "{bad"],
        &["checkpoint", "missing.jsonl", "--key", "k"],
        &["prove", "L", "--seq", "99"],
        &["receipt", "L", "--seq", "99"],
        &["receipt", "verify", "bad.json", "--pub", "k.pub"],
        &["verify-proof", "bad.json", "--pub", "k.pub"],
        &["drift", "check", "etc", "--log", "L", "--pub", "k.pub"],
        &["drift", "check", "etc", "--log", "L", "--pub", "other.pub"],
        &["drift", "check", "bad.json", "--log", "L", "--pub", "k.pub"],
        &["drift", "history", "--log", "L", "--pub", "k.pub"],
        &["drift", "history", "--log", "L", "--pub", "other.pub"],
        &["drift", "accept", "etc", "--log", "L", "--key", "other"],
        &["stamp", "verify", "bad.json", "--pub", "k.pub"],
        &["scan", "tools.json"],
        &["scan", "bad.json"],
        &["tsa", "verify", "bad.json", "--data", "bad.json"],
        &["tsa", "show", "bad.json"],
        &["pins", "review", "--log", "L", "--pub", "k.pub"],
        &["anchor", "verify", "L", "--pub", "k.pub"],
        &["key", "export", "k.pub"],
        &["policy", "check", "bad.json"],
    ];
    for args in cases {
        let o = d.run(args);
        assert_clean(&args.join(" "), &o);
        // Exit codes keep their contract: 0, 1 or 2.
        assert!((0..=2).contains(&code(&o)), "{args:?}: {}", code(&o));
    }
}
