//! `vouch drift` on directory targets, end to end through the binary:
//! every kind of change is caught with the right field; the rules'
//! growing, rotation, exclusion and ignore semantics; selective accept with
//! a reason and the history; and every way of swapping the baseline (the
//! log, the snapshot store, another key, an uncovered record) is rejected.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::Value;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::Command;
use support::{code, json, stderr, stdout, vouch};

struct D {
    _dir: tempfile::TempDir,
    root: PathBuf,
    t: PathBuf,
    key: String,
    pubkey: String,
    log: String,
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

impl D {
    fn new() -> D {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        let key = root.join("k");
        let o = vouch(&["keygen", "--origin", "example.com/drift", "--out", s(&key)]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let t = root.join("t");
        std::fs::create_dir_all(t.join("sub")).unwrap();
        std::fs::write(t.join("a.txt"), b"alpha\n").unwrap();
        std::fs::write(t.join("sub/b.txt"), b"beta\n").unwrap();
        symlink("a.txt", t.join("link")).unwrap();
        D {
            key: s(&key).to_owned(),
            pubkey: format!("{}.pub", s(&key)),
            log: s(&root.join("log.jsonl")).to_owned(),
            t,
            root,
            _dir: dir,
        }
    }
    fn p(&self, rel: &str) -> PathBuf {
        self.t.join(rel)
    }
    fn snapshot(&self, extra: &[&str]) -> std::process::Output {
        let mut a = vec![
            "drift",
            "snapshot",
            s(&self.t),
            "--log",
            &self.log,
            "--key",
            &self.key,
        ];
        a.extend_from_slice(extra);
        vouch(&a)
    }
    fn check(&self, extra: &[&str]) -> std::process::Output {
        let mut a = vec![
            "drift",
            "check",
            s(&self.t),
            "--log",
            &self.log,
            "--pub",
            &self.pubkey,
            "--format",
            "json",
        ];
        a.extend_from_slice(extra);
        vouch(&a)
    }
    fn accept(&self, extra: &[&str]) -> std::process::Output {
        let mut a = vec![
            "drift",
            "accept",
            s(&self.t),
            "--log",
            &self.log,
            "--key",
            &self.key,
        ];
        a.extend_from_slice(extra);
        vouch(&a)
    }
    fn base(&self, extra: &[&str]) {
        let o = self.snapshot(extra);
        assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
        let o = self.check(&[]);
        assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
        assert_eq!(json(&o)["result"], "no_drift");
    }
    fn store(&self) -> PathBuf {
        PathBuf::from(format!("{}.vouch-drift", self.log))
    }
}

fn changes(rep: &Value) -> Vec<(String, String, Vec<String>)> {
    rep["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let fields = c["fields"]
                .as_array()
                .map(|f| {
                    f.iter()
                        .map(|f| f["field"].as_str().unwrap().to_owned())
                        .collect()
                })
                .unwrap_or_default();
            (
                c["item"].as_str().unwrap().to_owned(),
                c["change"].as_str().unwrap().to_owned(),
                fields,
            )
        })
        .collect()
}

fn one_change(d: &D) -> (String, String, Vec<String>) {
    let o = d.check(&[]);
    assert_eq!(code(&o), 1, "{}{}", stdout(&o), stderr(&o));
    let rep = json(&o);
    assert_eq!(rep["result"], "drift");
    let c = changes(&rep);
    assert_eq!(c.len(), 1, "{rep:#}");
    c.into_iter().next().unwrap()
}

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

/// Each kind of change, made alone on a fresh baseline, is exactly one
/// change at the right path with the right fields.
#[test]
fn every_kind_of_change_is_one_change_with_its_fields() {
    type Mutate = fn(&D);
    type Want = (&'static str, &'static str, Vec<String>);
    let cases: Vec<(&str, Mutate, Want)> = vec![
        (
            "added",
            |d| std::fs::write(d.p("sub/new"), b"n").unwrap(),
            ("sub/new", "added", vec![]),
        ),
        (
            "removed",
            |d| std::fs::remove_file(d.p("sub/b.txt")).unwrap(),
            ("sub/b.txt", "removed", vec![]),
        ),
        (
            "content, same size",
            |d| std::fs::write(d.p("a.txt"), b"ALPHA\n").unwrap(),
            ("a.txt", "changed", strs(&["sha256"])),
        ),
        (
            "content and size",
            |d| std::fs::write(d.p("a.txt"), b"alpha!\n").unwrap(),
            ("a.txt", "changed", strs(&["size", "sha256"])),
        ),
        (
            "mode",
            |d| {
                std::fs::set_permissions(d.p("a.txt"), std::fs::Permissions::from_mode(0o600))
                    .unwrap()
            },
            ("a.txt", "changed", strs(&["mode"])),
        ),
        (
            "directory mode",
            |d| {
                std::fs::set_permissions(d.p("sub"), std::fs::Permissions::from_mode(0o700))
                    .unwrap()
            },
            ("sub", "changed", strs(&["mode"])),
        ),
        (
            "owner",
            |d| std::os::unix::fs::lchown(d.p("a.txt"), Some(4242), Some(4343)).unwrap(),
            ("a.txt", "changed", strs(&["uid", "gid"])),
        ),
        (
            "symlink retargeted",
            |d| {
                std::fs::remove_file(d.p("link")).unwrap();
                symlink("sub/b.txt", d.p("link")).unwrap();
            },
            ("link", "changed", strs(&["size", "link"])),
        ),
        (
            "symlink retargeted, same length",
            |d| {
                std::fs::remove_file(d.p("link")).unwrap();
                symlink("b.txt", d.p("link")).unwrap();
            },
            ("link", "changed", strs(&["link"])),
        ),
    ];
    for (what, mutate, want) in cases {
        let d = D::new();
        d.base(&[]);
        mutate(&d);
        let got = one_change(&d);
        assert_eq!(
            got,
            (want.0.to_owned(), want.1.to_owned(), want.2.clone()),
            "{what}"
        );
    }
}

/// A file replaced by a directory: the type change, and what is in it.
#[test]
fn a_file_replaced_by_a_directory_is_a_type_change_plus_its_content() {
    let d = D::new();
    d.base(&[]);
    std::fs::remove_file(d.p("a.txt")).unwrap();
    std::fs::create_dir(d.p("a.txt")).unwrap();
    std::fs::write(d.p("a.txt/inner"), b"i").unwrap();
    let o = d.check(&[]);
    assert_eq!(code(&o), 1);
    let c = changes(&json(&o));
    assert_eq!(c[0].0, "a.txt");
    assert_eq!(c[0].1, "changed");
    assert!(c[0].2.contains(&"type".to_owned()), "{c:?}");
    assert_eq!(c[1], ("a.txt/inner".into(), "added".into(), vec![]));
    assert_eq!(c.len(), 2);
}

/// Adding a file to a directory is one change, not two (a directory's
/// size and mtime are not recorded).
#[test]
fn adding_a_file_does_not_also_change_its_directory() {
    let d = D::new();
    d.base(&[]);
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(d.p("sub/c"), b"c").unwrap();
    assert_eq!(one_change(&d).0, "sub/c");
}

fn rules(d: &D, text: &str) -> String {
    let p = d.root.join("rules.toml");
    std::fs::write(&p, text).unwrap();
    s(&p).to_owned()
}

#[test]
fn a_growing_file_may_only_grow_with_its_old_content_as_prefix() {
    let d = D::new();
    std::fs::write(d.p("app.log"), b"line 1\n").unwrap();
    let r = rules(&d, "growing = [\"*.log\"]\n");
    d.base(&["--rules", &r]);
    // Grows: expected, exit 0, reported.
    std::fs::write(d.p("app.log"), b"line 1\nline 2\n").unwrap();
    let o = d.check(&[]);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    let rep = json(&o);
    assert_eq!(rep["changes"][0]["change"], "grown");
    assert_eq!(rep["changes"][0]["expected"], true);
    assert_eq!(rep["counts"]["expected"], 1);
    // Prefix changed: drift.
    std::fs::write(d.p("app.log"), b"LINE 1\nline 2\n").unwrap();
    let rep = json(&d.check(&[]));
    assert_eq!(rep["result"], "drift");
    assert_eq!(
        rep["changes"][0]["fields"][1]["reason"], "growing_file_prefix_changed",
        "{rep:#}"
    );
    // Shrank: drift.
    std::fs::write(d.p("app.log"), b"line\n").unwrap();
    let o = d.check(&[]);
    assert_eq!(code(&o), 1);
    let rep = json(&o);
    assert!(
        rep["changes"][0]["fields"]
            .to_string()
            .contains("growing_file_shrank"),
        "{rep:#}"
    );
    // A file not under the rule is drift when it grows.
    std::fs::write(d.p("app.log"), b"line 1\n").unwrap();
    std::fs::write(d.p("a.txt"), b"alpha\nmore\n").unwrap();
    assert_eq!(one_change(&d).0, "a.txt");
}

#[test]
fn a_rotated_log_is_one_rotation_not_a_removal_and_an_addition() {
    let d = D::new();
    std::fs::create_dir(d.p("log")).unwrap();
    std::fs::write(d.p("log/app.log"), b"day 1\n").unwrap();
    let r = rules(
        &d,
        "rotate = [\"log/app.log*\"]\ngrowing = [\"log/app.log\"]\n",
    );
    d.base(&["--rules", &r]);
    // logrotate: app.log (grown a bit more) -> app.log.1, new app.log.
    std::fs::write(d.p("log/app.log"), b"day 1\nday 1 late\n").unwrap();
    std::fs::rename(d.p("log/app.log"), d.p("log/app.log.1")).unwrap();
    std::fs::write(d.p("log/app.log"), b"day 2\n").unwrap();
    let o = d.check(&[]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    let rep = json(&o);
    let c = &rep["changes"];
    let rotated: Vec<&Value> = c
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["change"] == "rotated")
        .collect();
    assert_eq!(rotated.len(), 1, "{rep:#}");
    assert_eq!(rotated[0]["item"], "log/app.log.1");
    assert_eq!(rotated[0]["from"], "log/app.log");
    assert!(
        c.as_array().unwrap().iter().all(|c| c["expected"] == true),
        "{rep:#}"
    );
    assert_eq!(rep["counts"]["added"], 0);
    // Without the rotation rule the same is a change plus an addition.
    let d2 = D::new();
    std::fs::create_dir(d2.p("log")).unwrap();
    std::fs::write(d2.p("log/app.log"), b"day 1\n").unwrap();
    d2.base(&[]);
    std::fs::rename(d2.p("log/app.log"), d2.p("log/app.log.1")).unwrap();
    std::fs::write(d2.p("log/app.log"), b"day 2\n").unwrap();
    let rep = json(&d2.check(&[]));
    assert_eq!(rep["counts"]["added"], 1);
    assert_eq!(rep["counts"]["changed"], 1);
}

#[test]
fn excluded_directories_are_not_walked_and_ignored_attributes_not_compared() {
    let d = D::new();
    std::fs::create_dir(d.p("cache")).unwrap();
    std::fs::write(d.p("cache/x"), b"x").unwrap();
    std::fs::write(d.p("scratch.tmp"), b"t").unwrap();
    let r = rules(
        &d,
        "exclude = [\"cache\", \"**/*.tmp\"]\n[[ignore]]\npaths = [\"sub/**\"]\nattributes = [\"mode\"]\n",
    );
    d.base(&["--rules", &r]);
    // An unreadable directory inside an excluded one is never opened.
    std::fs::create_dir(d.p("cache/locked")).unwrap();
    std::fs::write(d.p("cache/x"), b"changed").unwrap();
    std::fs::write(d.p("sub/z.tmp"), b"t").unwrap();
    std::fs::set_permissions(d.p("sub/b.txt"), std::fs::Permissions::from_mode(0o600)).unwrap();
    let o = d.check(&[]);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    let rep = json(&o);
    assert_eq!(rep["items"], 4, "{rep:#}"); // a.txt, link, sub, sub/b.txt
    // The content of sub/b.txt is still compared.
    std::fs::write(d.p("sub/b.txt"), b"BETA\n").unwrap();
    assert_eq!(
        one_change(&d),
        ("sub/b.txt".into(), "changed".into(), strs(&["sha256"]))
    );
    // The check uses the baseline's rules; other --rules are refused.
    let other = rules(&d, "exclude = [\"cache\"]\n");
    let o = d.check(&["--rules", &other]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert_eq!(json(&o)["error"]["code"], "rules_differ", "{}", stdout(&o));
}

#[test]
fn bad_rules_files_are_errors_with_their_line() {
    let d = D::new();
    let r = rules(&d, "include = [\"*\"]\nexclude = \"cache\"\n");
    let o = d.snapshot(&["--rules", &r]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("line 2"), "{}", stderr(&o));
    assert!(!Path::new(&d.log).exists(), "nothing written");
}

#[test]
fn selective_accept_records_the_reason_and_leaves_the_rest_as_drift() {
    let d = D::new();
    d.base(&[]);
    std::fs::write(d.p("a.txt"), b"edited\n").unwrap();
    std::fs::write(d.p("sub/new"), b"n").unwrap();
    std::fs::remove_file(d.p("link")).unwrap();
    let o = d.accept(&[
        "--only",
        "sub",
        "--reason",
        "deployed release 1.2",
        "--format",
        "json",
    ]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    let rep = json(&o);
    assert_eq!(rep["counts"]["added"], 1);
    assert_eq!(rep["remaining"], 2);
    let c = changes(&json(&d.check(&[])));
    assert_eq!(
        c.iter()
            .map(|c| (c.0.as_str(), c.1.as_str()))
            .collect::<Vec<_>>(),
        [("a.txt", "changed"), ("link", "removed")]
    );
    // --only a path with no difference is an error; nothing is written.
    let before = std::fs::read(&d.log).unwrap();
    let o = d.accept(&["--only", "sub/b.txt", "--reason", "x"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("nothing matches --only"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read(&d.log).unwrap(), before);
    // An empty reason is refused.
    let o = d.accept(&["--reason", " "]);
    assert_eq!(code(&o), 2);
    // Accept the rest; no drift; the history has both acceptances.
    let o = d.accept(&["--reason", "reviewed by alice"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(code(&d.check(&[])), 0);
    let h = vouch(&[
        "drift", "history", "--log", &d.log, "--pub", &d.pubkey, "--format", "json",
    ]);
    assert_eq!(code(&h), 0, "{}", stderr(&h));
    let h = json(&h);
    let rows = h["rows"].as_array().unwrap();
    let kinds: Vec<&str> = rows.iter().map(|r| r["record"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["drift_snapshot", "drift_accept", "drift_accept"]);
    assert_eq!(rows[1]["reason"], "deployed release 1.2");
    assert_eq!(rows[1]["only"][0], "sub");
    assert_eq!(rows[2]["reason"], "reviewed by alice");
    assert_eq!(h["baselines"][0]["baseline"]["seq"], rows[2]["seq"]);
    // The table shows the reasons too.
    let t = vouch(&["drift", "history", "--log", &d.log, "--pub", &d.pubkey]);
    assert!(stdout(&t).contains("reviewed by alice"), "{}", stdout(&t));
    // And every record is covered: `vouch verify` says valid.
    let v = vouch(&["verify", &d.log, "--pub", &d.pubkey, "--format", "json"]);
    assert_eq!(code(&v), 0, "{}", stdout(&v));
}

#[test]
fn a_second_snapshot_does_not_move_the_baseline() {
    let d = D::new();
    d.base(&[]);
    std::fs::write(d.p("a.txt"), b"edited\n").unwrap();
    let o = d.snapshot(&["--format", "json"]);
    assert_eq!(code(&o), 0);
    assert_eq!(json(&o)["baseline"], false);
    assert_eq!(one_change(&d).0, "a.txt");
}

#[test]
fn recorded_checks_are_covered_records_and_aide_exit_codes_are_a_bitmask() {
    let d = D::new();
    d.base(&[]);
    std::fs::write(d.p("new"), b"n").unwrap();
    std::fs::remove_file(d.p("sub/b.txt")).unwrap();
    let o = d.check(&["--aide-exit-codes"]);
    assert_eq!(code(&o), 1 + 2);
    std::fs::write(d.p("a.txt"), b"edited\n").unwrap();
    let o = d.check(&["--aide-exit-codes", "--record", "--key", &d.key]);
    assert_eq!(code(&o), 1 + 2 + 4);
    let rep = json(&o);
    let seq = rep["record"]["seq"].as_u64().unwrap();
    let v = vouch(&["verify", &d.log, "--pub", &d.pubkey, "--format", "json"]);
    assert_eq!(code(&v), 0);
    assert_eq!(json(&v)["logs"][0]["covered"].as_u64().unwrap(), seq + 1);
    let h = json(&vouch(&[
        "drift", "history", "--log", &d.log, "--pub", &d.pubkey, "--format", "json",
    ]));
    assert_eq!(h["rows"][1]["result"], "drift");
    assert_eq!(h["rows"][1]["counts"]["changed"], 1);
    // The recorded snapshot is in the store under its digest.
    let digest = rep["snapshot"]
        .as_str()
        .unwrap()
        .strip_prefix("sha256:")
        .unwrap();
    assert!(d.store().join(format!("{digest}.jsonl")).is_file());
}

#[test]
fn a_target_that_is_gone_or_never_snapshotted_is_exit_2() {
    let d = D::new();
    let o = d.check(&[]);
    assert_eq!(code(&o), 2, "{}", stderr(&o)); // no log yet
    d.base(&[]);
    let other = d.root.join("other");
    std::fs::create_dir(&other).unwrap();
    let o = vouch(&[
        "drift",
        "check",
        s(&other),
        "--log",
        &d.log,
        "--pub",
        &d.pubkey,
        "--format",
        "json",
    ]);
    assert_eq!(code(&o), 2);
    assert_eq!(json(&o)["error"]["code"], "no_baseline");
    std::fs::rename(&d.t, d.root.join("moved")).unwrap();
    let o = d.check(&[]);
    assert_eq!(code(&o), 2);
    assert_eq!(
        json(&o)["error"]["code"],
        "target_missing",
        "{}",
        stdout(&o)
    );
    let o = d.check(&["--aide-exit-codes"]);
    assert_eq!(code(&o), 18);
}

// ---------------------------------------------------------------------
// Swapping the baseline.
// ---------------------------------------------------------------------

/// The attacker edits the snapshot file the baseline names (to hide a
/// change), swaps in another snapshot under the same name, or deletes it.
#[test]
fn an_altered_swapped_or_deleted_snapshot_file_is_rejected() {
    let d = D::new();
    d.base(&[]);
    std::fs::write(d.p("a.txt"), b"evil\n").unwrap();
    // A snapshot of the tree as it is now, written by the tool itself.
    let o = d.snapshot(&["--format", "json"]);
    let now_digest = json(&o)["snapshot"].as_str().unwrap().to_owned();
    let h = json(&vouch(&[
        "drift", "history", "--log", &d.log, "--pub", &d.pubkey, "--format", "json",
    ]));
    let base_digest = h["baselines"][0]["baseline"]["snapshot"]
        .as_str()
        .unwrap()
        .to_owned();
    let file = |dg: &str| {
        d.store()
            .join(format!("{}.jsonl", dg.strip_prefix("sha256:").unwrap()))
    };
    let original = std::fs::read(file(&base_digest)).unwrap();
    // 1. Swap in the current snapshot under the baseline's name.
    std::fs::copy(file(&now_digest), file(&base_digest)).unwrap();
    let o = d.check(&[]);
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    assert_eq!(json(&o)["error"]["code"], "snapshot_altered");
    // 2. Edit the hash of a.txt in place.
    let text = String::from_utf8(original.clone()).unwrap();
    let evil = text.replace(&hex_sha256(b"alpha\n"), &hex_sha256(b"evil\n"));
    assert_ne!(evil, text);
    std::fs::write(file(&base_digest), evil).unwrap();
    let o = d.check(&[]);
    assert_eq!(code(&o), 1);
    assert_eq!(json(&o)["error"]["code"], "snapshot_altered");
    // 3. Delete it.
    std::fs::remove_file(file(&base_digest)).unwrap();
    let o = d.check(&[]);
    assert_eq!(code(&o), 1);
    assert_eq!(json(&o)["error"]["code"], "snapshot_missing");
    // Restored, the drift is found again.
    std::fs::write(file(&base_digest), original).unwrap();
    assert_eq!(one_change(&d).0, "a.txt");
}

fn hex_sha256(b: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(b)
        .iter()
        .map(|x| format!("{x:02x}"))
        .collect()
}

/// The attacker edits the log: the baseline record's digest, or a line
/// removed: the chain does not verify, exit 1, before any comparison.
#[test]
fn editing_the_log_to_change_the_baseline_is_rejected() {
    let d = D::new();
    d.base(&[]);
    std::fs::write(d.p("a.txt"), b"evil\n").unwrap();
    let o = d.snapshot(&["--format", "json"]);
    let now_digest = json(&o)["snapshot"].as_str().unwrap().to_owned();
    let lines: Vec<String> = std::fs::read_to_string(&d.log)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    let base_digest = serde_json::from_str::<Value>(&lines[0]).unwrap()["body"]["snapshot"]
        .as_str()
        .unwrap()
        .to_owned();
    // Point the baseline record at the current snapshot.
    let mut edited = lines.clone();
    edited[0] = edited[0].replace(&base_digest, &now_digest);
    std::fs::write(&d.log, edited.join("\n") + "\n").unwrap();
    let o = d.check(&[]);
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    assert!(json(&o)["error"]["code"].as_str().is_some());
    let o = d.check(&["--aide-exit-codes"]);
    assert_eq!(code(&o), 24);
    // Drop the first records (baseline and its checkpoint).
    std::fs::write(&d.log, lines[2..].join("\n") + "\n").unwrap();
    assert_eq!(code(&d.check(&[])), 1);
    // Restored: drift found.
    std::fs::write(&d.log, lines.join("\n") + "\n").unwrap();
    assert_eq!(one_change(&d).0, "a.txt");
}

/// A `drift_accept` appended after the last checkpoint (linked correctly,
/// so the chain still verifies) is not signed by anything: it is listed
/// as uncovered and never used as the baseline.
#[test]
fn an_uncovered_acceptance_is_never_the_baseline() {
    let d = D::new();
    d.base(&[]);
    std::fs::write(d.p("a.txt"), b"evil\n").unwrap();
    let o = d.snapshot(&["--format", "json"]);
    let now_digest = json(&o)["snapshot"].as_str().unwrap().to_owned();
    let text = std::fs::read_to_string(&d.log).unwrap();
    let last = text.lines().last().unwrap().to_owned();
    let lastv: Value = serde_json::from_str(&last).unwrap();
    let h = json(&vouch(&[
        "drift", "history", "--log", &d.log, "--pub", &d.pubkey, "--format", "json",
    ]));
    let base = h["baselines"][0]["baseline"]["snapshot"]
        .as_str()
        .unwrap()
        .to_owned();
    let prev = hex_leaf(last.as_bytes());
    let body = serde_json::json!({
        "target": h["rows"][0]["target"], "kind": "dir", "snapshot": now_digest, "count": 3,
        "previous": base, "reason": "attacker", "accepted": {"added":0,"removed":0,"changed":1,"renamed":0,"expected":0}
    });
    let rec = serde_json::json!({
        "body": body, "kind": "drift_accept", "origin": lastv["origin"], "prev": prev,
        "seq": lastv["seq"].as_u64().unwrap() + 1, "ts": "2026-12-01T00:00:00Z", "v": 1
    });
    let line = String::from_utf8(vouch::jcs::to_canonical_vec(&rec).unwrap()).unwrap();
    std::fs::write(&d.log, format!("{text}{line}\n")).unwrap();
    let v = vouch(&["verify", &d.log, "--pub", &d.pubkey, "--format", "json"]);
    assert_eq!(
        json(&v)["logs"][0]["status"],
        "partial",
        "the forged record links: {}",
        stdout(&v)
    );
    let o = d.check(&[]);
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    let rep = json(&o);
    assert_eq!(rep["result"], "drift");
    assert_eq!(
        rep["chain"]["uncovered_drift_records"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(rep["baseline"]["seq"], 0);
}

fn hex_leaf(line: &[u8]) -> String {
    vouch::merkle::leaf_hash(line)
        .iter()
        .map(|x| format!("{x:02x}"))
        .collect()
}

/// Another log's key, or a log written by another key, gives no baseline.
#[test]
fn another_key_does_not_count() {
    let d = D::new();
    d.base(&[]);
    let other = d.root.join("other");
    let o = vouch(&[
        "keygen",
        "--origin",
        "example.com/drift",
        "--out",
        s(&other),
    ]);
    assert_eq!(code(&o), 0);
    let o = vouch(&[
        "drift",
        "check",
        s(&d.t),
        "--log",
        &d.log,
        "--pub",
        &format!("{}.pub", s(&other)),
        "--format",
        "json",
    ]);
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    // A snapshot written with another key into the same log is refused by
    // the writer (the log's checkpoints are not its own).
    let o = vouch(&[
        "drift",
        "snapshot",
        s(&d.t),
        "--log",
        &d.log,
        "--key",
        s(&other),
    ]);
    assert_ne!(code(&o), 0);
}

/// Unreadable files are reported per file; the run goes on; the exit is 1
/// when something else drifted, else 2 (never "no drift").
#[test]
fn unreadable_files_are_reported_and_never_called_unchanged() {
    let can_drop = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "true"])
        .status()
        .is_ok_and(|s| s.success());
    if !can_drop {
        assert!(
            std::env::var_os("CI").is_none(),
            "setpriv is needed for this test in CI"
        );
        eprintln!("SKIPPED: setpriv cannot drop privileges here");
        return;
    }
    let dir = tempfile::Builder::new()
        .prefix("vouch-drift-nobody-")
        .tempdir_in("/tmp")
        .unwrap();
    let dd = dir.path();
    let mode =
        |p: &Path, m: u32| std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
    mode(dd, 0o755);
    let bin = dd.join("vouch");
    std::fs::copy(support::BIN, &bin).unwrap();
    mode(&bin, 0o755);
    let o = vouch(&[
        "keygen",
        "--origin",
        "example.com/drift",
        "--out",
        s(&dd.join("k")),
    ]);
    assert_eq!(code(&o), 0);
    let t = dd.join("t");
    std::fs::create_dir(&t).unwrap();
    std::fs::write(t.join("open.txt"), b"o").unwrap();
    std::fs::write(t.join("secret.txt"), b"s").unwrap();
    let log = dd.join("log");
    let o = vouch(&[
        "drift",
        "snapshot",
        s(&t),
        "--log",
        s(&log),
        "--key",
        s(&dd.join("k")),
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    mode(&t.join("secret.txt"), 0o600);
    let nobody = |extra: &[&str]| {
        Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(&bin)
            .args([
                "drift",
                "check",
                s(&t),
                "--log",
                s(&log),
                "--pub",
                s(&dd.join("k.pub")),
                "--format",
                "json",
            ])
            .args(extra)
            .output()
            .unwrap()
    };
    // secret.txt's mode changed (visible to lstat) and it cannot be read.
    let o = nobody(&[]);
    let rep = json(&o);
    assert_eq!(rep["unchecked"][0]["path"], "secret.txt", "{rep:#}");
    assert_eq!(rep["unchecked"][0]["reason"], "unreadable");
    assert!(
        !rep["changes"].to_string().contains("secret.txt"),
        "an unreadable file is not a change: {rep:#}"
    );
    assert_eq!(rep["result"], "incomplete");
    assert_eq!(code(&o), 2);
    // With drift elsewhere, drift wins: exit 1.
    std::fs::write(t.join("open.txt"), b"changed").unwrap();
    let o = nobody(&[]);
    assert_eq!(code(&o), 1);
    assert_eq!(json(&o)["result"], "drift");
}

fn mtree_or_skip(test: &str) -> bool {
    let ok = Command::new("mtree")
        .args(["-c", "-p", "/nonexistent-vouch"])
        .output()
        .is_ok();
    if !ok {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{test}: Debian's mtree (mtree-netbsd) is required when CI=true"
        );
        eprintln!("NOTICE: {test} skipped: mtree is not installed");
    }
    ok
}

/// The exported baseline is a spec Debian's `mtree` checks: exit 0 on the
/// unchanged tree, 2 on a changed one; imported back, it is the same
/// baseline (no drift), and an import over a baseline needs a reason.
#[test]
fn the_mtree_export_is_checked_by_mtree_and_imports_back() {
    if !mtree_or_skip("the_mtree_export_is_checked_by_mtree_and_imports_back") {
        return;
    }
    let d = D::new();
    std::fs::write(d.p("with space #1.txt"), b"s").unwrap();
    d.base(&[]);
    let spec = d.root.join("spec.mtree");
    let o = vouch(&[
        "drift",
        "export",
        s(&d.t),
        "--log",
        &d.log,
        "--pub",
        &d.pubkey,
        "--spec-format",
        "mtree",
        "--out",
        s(&spec),
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let m = Command::new("mtree")
        .arg("-f")
        .arg(&spec)
        .arg("-p")
        .arg(&d.t)
        .output()
        .unwrap();
    assert_eq!(code(&m), 0, "{}{}", stdout(&m), stderr(&m));
    std::fs::write(d.p("sub/b.txt"), b"BETA\n").unwrap();
    let m = Command::new("mtree")
        .arg("-f")
        .arg(&spec)
        .arg("-p")
        .arg(&d.t)
        .output()
        .unwrap();
    assert_eq!(code(&m), 2, "{}{}", stdout(&m), stderr(&m));
    assert!(stdout(&m).contains("sub/b.txt"), "{}", stdout(&m));
    // --out never replaces a file.
    let o = vouch(&[
        "drift",
        "export",
        s(&d.t),
        "--log",
        &d.log,
        "--pub",
        &d.pubkey,
        "--spec-format",
        "mtree",
        "--out",
        s(&spec),
    ]);
    assert_eq!(code(&o), 2);
    // Import as another target's baseline: same entries, so the drift is
    // exactly the one change.
    let imp = |extra: &[&str]| {
        let mut a = vec![
            "drift",
            "import",
            s(&d.t),
            "--name",
            "imported",
            "--log",
            &d.log,
            "--key",
            &d.key,
            "--from",
            s(&spec),
            "--spec-format",
            "mtree",
        ];
        a.extend_from_slice(extra);
        vouch(&a)
    };
    let o = imp(&[]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let o = vouch(&[
        "drift",
        "check",
        s(&d.t),
        "--name",
        "imported",
        "--log",
        &d.log,
        "--pub",
        &d.pubkey,
        "--format",
        "json",
    ]);
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    let c = changes(&json(&o));
    assert_eq!(
        c,
        vec![("sub/b.txt".into(), "changed".into(), strs(&["sha256"]))]
    );
    // Over an existing baseline, a reason is required.
    let o = imp(&[]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("--reason"), "{}", stderr(&o));
    let o = imp(&["--reason", "restored from the golden image spec"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
}

// ---------------------------------------------------------------------
// Found by an independent black-box attacker (issue 11).
// ---------------------------------------------------------------------

fn rotation_base(d: &D) {
    std::fs::create_dir_all(d.p("log")).unwrap();
    std::fs::write(d.p("log/app.log"), b"day 1\n").unwrap();
    let r = rules(d, "rotate = [\"**/app.log*\", \"**/r.log*\"]\n");
    d.base(&["--rules", &r]);
}

/// A rotated file keeps its other attributes: setuid or a new owner on the
/// rotated file is drift.
#[test]
fn a_rotated_file_with_other_attributes_changed_is_drift() {
    let d = D::new();
    rotation_base(&d);
    std::fs::rename(d.p("log/app.log"), d.p("log/app.log.1")).unwrap();
    std::fs::write(d.p("log/app.log"), b"day 2\n").unwrap();
    std::fs::set_permissions(
        d.p("log/app.log.1"),
        std::fs::Permissions::from_mode(0o4755),
    )
    .unwrap();
    std::os::unix::fs::lchown(d.p("log/app.log.1"), Some(1234), None).unwrap();
    let o = d.check(&[]);
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    let rep = json(&o);
    let r = rep["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["item"] == "log/app.log.1")
        .unwrap();
    assert_eq!(r["change"], "rotated");
    assert_eq!(r["expected"], false);
    let f: Vec<&str> = r["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["field"].as_str().unwrap())
        .collect();
    assert_eq!(f, ["mode", "uid"]);
}

/// Rotation is matched only within one directory.
#[test]
fn rotation_across_directories_is_not_a_rotation() {
    let d = D::new();
    std::fs::create_dir_all(d.p("a")).unwrap();
    std::fs::create_dir_all(d.p("b")).unwrap();
    std::fs::write(d.p("a/r.log"), b"secret\n").unwrap();
    let r = rules(&d, "rotate = [\"**/r.log*\"]\n");
    d.base(&["--rules", &r]);
    std::fs::rename(d.p("a/r.log"), d.p("b/r.log.1")).unwrap();
    let o = d.check(&[]);
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    assert_eq!(json(&o)["counts"]["added"], 1);
    assert_eq!(json(&o)["counts"]["removed"], 1);
}

/// Copies of a file that is still there are additions, not rotations, and
/// one old file is the source of one rotation at most.
#[test]
fn copies_of_an_unchanged_file_are_additions_not_rotations() {
    let d = D::new();
    rotation_base(&d);
    for n in ["app.log.1", "app.log.2", "app.log.bak"] {
        std::fs::copy(d.p("log/app.log"), d.p(&format!("log/{n}"))).unwrap();
    }
    let o = d.check(&[]);
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    assert_eq!(json(&o)["counts"]["added"], 3);
    // Rotated away, then copied twice: one rotation, one addition.
    let d = D::new();
    rotation_base(&d);
    std::fs::rename(d.p("log/app.log"), d.p("log/app.log.1")).unwrap();
    std::fs::copy(d.p("log/app.log.1"), d.p("log/app.log.2")).unwrap();
    let rep = json(&d.check(&[]));
    assert_eq!(rep["counts"]["added"], 1, "{rep:#}");
    // The rotation, and app.log gone with it.
    assert_eq!(rep["counts"]["expected"], 2, "{rep:#}");
}

/// `check --record` with a key that does not hold the log (same origin,
/// never signed it) writes nothing.
#[test]
fn check_record_with_a_key_that_does_not_hold_the_log_writes_nothing() {
    let d = D::new();
    d.base(&[]);
    let evil = d.root.join("evil");
    let o = vouch(&["keygen", "--origin", "example.com/drift", "--out", s(&evil)]);
    assert_eq!(code(&o), 0);
    let before = std::fs::read(&d.log).unwrap();
    let o = d.check(&["--record", "--key", s(&evil)]);
    assert_eq!(code(&o), 1, "{}{}", stdout(&o), stderr(&o));
    assert_eq!(
        std::fs::read(&d.log).unwrap(),
        before,
        "the log is unchanged"
    );
    let v = vouch(&["verify", &d.log, "--pub", &d.pubkey]);
    assert_eq!(code(&v), 0);
}

/// Names with terminal control characters are escaped in tables.
#[test]
fn tables_escape_control_characters_and_backslashes_in_names() {
    let d = D::new();
    d.base(&[]);
    std::fs::write(d.p("\x1b[8A\x1b[J\rfake: no drift\nx"), b"e").unwrap();
    std::fs::write(d.p("back\\slash"), b"b").unwrap();
    let o = vouch(&[
        "drift",
        "check",
        s(&d.t),
        "--log",
        &d.log,
        "--pub",
        &d.pubkey,
    ]);
    assert_eq!(code(&o), 1);
    let out = stdout(&o);
    assert!(!out.contains('\x1b') && !out.contains('\r'), "{out:?}");
    assert!(out.contains("\\x1b[8A"), "{out}");
    assert!(out.contains("back\\\\slash"), "{out}");
}

/// A snapshot file replaced by something that is not a regular file (a
/// FIFO) is rejected evidence, exit 1.
#[test]
fn a_snapshot_that_is_not_a_regular_file_is_rejected() {
    let d = D::new();
    d.base(&[]);
    let h = json(&vouch(&[
        "drift", "history", "--log", &d.log, "--pub", &d.pubkey, "--format", "json",
    ]));
    let dg = h["baselines"][0]["baseline"]["snapshot"]
        .as_str()
        .unwrap()
        .strip_prefix("sha256:")
        .unwrap()
        .to_owned();
    let f = d.store().join(format!("{dg}.jsonl"));
    std::fs::remove_file(&f).unwrap();
    let st = Command::new("mkfifo").arg(&f).status().unwrap();
    assert!(st.success());
    let o = d.check(&[]);
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    assert_eq!(json(&o)["error"]["code"], "snapshot_altered");
}

/// A directory replaced by a symlink to a clean copy is a type change,
/// never followed.
#[test]
fn a_directory_replaced_by_a_symlink_to_a_clean_copy_is_caught() {
    let d = D::new();
    d.base(&[]);
    let clean = d.root.join("clean-sub");
    std::fs::create_dir(&clean).unwrap();
    std::fs::write(clean.join("b.txt"), b"beta\n").unwrap();
    std::fs::write(d.p("sub/b.txt"), b"EVIL\n").unwrap();
    std::fs::rename(d.p("sub"), d.root.join("evil-sub")).unwrap();
    symlink(&clean, d.p("sub")).unwrap();
    let o = d.check(&[]);
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    let c = changes(&json(&o));
    assert!(
        c.iter()
            .any(|c| c.0 == "sub" && c.2.contains(&"type".to_owned())),
        "{c:?}"
    );
    assert!(
        c.iter().any(|c| c.0 == "sub/b.txt" && c.1 == "removed"),
        "{c:?}"
    );
}
