//! The writer's tree cache (`NAME.vouch-tree`): `checkpoint` costs the
//! records written since the last checkpoint, and the cache is never
//! trusted on its own word. Each test checks the signed result with
//! `vouch verify`, so a cache that misled the writer would show.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::io::Write;
use std::path::Path;
use support::{command, vouch_at};

fn ok(args: &[&str], dir: &Path) {
    let o = vouch_at(args, dir);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

fn verify(dir: &Path) -> (i32, serde_json::Value) {
    let o = vouch_at(
        &["verify", "log.jsonl", "--pub", "k.pub", "--format", "json"],
        dir,
    );
    let v = serde_json::from_slice(&o.stdout).unwrap_or(serde_json::Value::Null);
    (o.status.code().unwrap_or(-1), v)
}

fn setup(records: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok(&["keygen", "--origin", "example.com/t", "--out", "k"], d);
    let mut child = command()
        .args(["append", "log.jsonl", "--key", "k"])
        .current_dir(d)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for i in 0..records {
        writeln!(stdin, "{{\"i\":{i}}}").unwrap();
    }
    drop(stdin);
    assert!(child.wait().unwrap().success());
    ok(&["checkpoint", "log.jsonl", "--key", "k"], d);
    dir
}

#[test]
fn checkpoints_through_the_cache_verify_like_full_ones() {
    let dir = setup(50);
    let d = dir.path();
    assert!(d.join("log.jsonl.vouch-tree").exists());
    for round in 0..5 {
        ok(
            &[
                "append",
                "log.jsonl",
                "--key",
                "k",
                &format!("{{\"r\":{round}}}"),
            ],
            d,
        );
        ok(&["checkpoint", "log.jsonl", "--key", "k"], d);
    }
    let (code, v) = verify(d);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["logs"][0]["status"], "valid");
    assert_eq!(v["logs"][0]["checkpoints"], 6);
    // The cache never becomes a log of its own in a walk.
    let o = vouch_at(&["verify", ".", "--pub", "k.pub", "--format", "json"], d);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["logs"].as_array().unwrap().len(), 1, "{v}");
}

#[test]
fn a_tampered_cache_is_not_trusted() {
    let dir = setup(20);
    let d = dir.path();
    let cache = d.join("log.jsonl.vouch-tree");
    let mut c: serde_json::Value = serde_json::from_slice(&std::fs::read(&cache).unwrap()).unwrap();
    // A made-up range: its root is not the signed checkpoint's.
    let hashes = c["hashes"].as_array_mut().unwrap();
    hashes[0] = serde_json::Value::String("00".repeat(32));
    std::fs::write(&cache, serde_json::to_vec(&c).unwrap()).unwrap();
    ok(&["append", "log.jsonl", "--key", "k", "{\"x\":1}"], d);
    ok(&["checkpoint", "log.jsonl", "--key", "k"], d);
    let (code, v) = verify(d);
    assert_eq!(code, 0, "{v}");
    // Garbage, or a cache pointing into the middle of a line.
    for bad in [b"not json".to_vec(), {
        c["offset"] = serde_json::json!(3);
        serde_json::to_vec(&c).unwrap()
    }] {
        std::fs::write(&cache, bad).unwrap();
        ok(&["append", "log.jsonl", "--key", "k", "{\"x\":2}"], d);
        ok(&["checkpoint", "log.jsonl", "--key", "k"], d);
        assert_eq!(verify(d).0, 0);
    }
}

#[test]
fn a_cache_over_another_keys_checkpoint_is_not_trusted() {
    let dir = setup(10);
    let d = dir.path();
    // Another key of the same name writes a log of its own; its cache is
    // copied over ours: its checkpoint is not signed by our key.
    let other = tempfile::tempdir().unwrap();
    let o = other.path();
    ok(&["keygen", "--origin", "example.com/t", "--out", "k"], o);
    ok(&["append", "log.jsonl", "--key", "k", "{\"i\":0}"], o);
    ok(&["checkpoint", "log.jsonl", "--key", "k"], o);
    let mut c: serde_json::Value =
        serde_json::from_slice(&std::fs::read(o.join("log.jsonl.vouch-tree")).unwrap()).unwrap();
    let ours: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("log.jsonl.vouch-tree")).unwrap()).unwrap();
    c["dev"] = ours["dev"].clone();
    c["ino"] = ours["ino"].clone();
    std::fs::write(
        d.join("log.jsonl.vouch-tree"),
        serde_json::to_vec(&c).unwrap(),
    )
    .unwrap();
    ok(&["append", "log.jsonl", "--key", "k", "{\"x\":1}"], d);
    ok(&["checkpoint", "log.jsonl", "--key", "k"], d);
    assert_eq!(verify(d).0, 0);
}

#[test]
fn records_after_the_cached_checkpoint_are_still_checked() {
    let dir = setup(10);
    let d = dir.path();
    ok(&["append", "log.jsonl", "--key", "k", "{\"new\":1}"], d);
    ok(&["append", "log.jsonl", "--key", "k", "{\"new\":2}"], d);
    // Edit a record written after the cached checkpoint: its link breaks.
    let text = std::fs::read_to_string(d.join("log.jsonl")).unwrap();
    std::fs::write(
        d.join("log.jsonl"),
        text.replace("{\"new\":1}", "{\"new\":9}"),
    )
    .unwrap();
    let o = vouch_at(&["checkpoint", "log.jsonl", "--key", "k"], d);
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("broken_link")
            || String::from_utf8_lossy(&o.stderr).contains("prev"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn a_rotated_file_does_not_use_the_old_cache() {
    let dir = setup(10);
    let d = dir.path();
    std::fs::rename(d.join("log.jsonl"), d.join("log.jsonl.1")).unwrap();
    ok(&["append", "log.jsonl", "--key", "k", "{\"after\":1}"], d);
    ok(&["checkpoint", "log.jsonl", "--key", "k"], d);
    let o = vouch_at(&["verify", ".", "--pub", "k.pub", "--format", "json"], d);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}

#[test]
fn the_cache_is_used_and_an_old_edit_still_shows_as_a_fork() {
    let dir = setup(30);
    let d = dir.path();
    // Edit a record before the cached checkpoint: a full re-verification
    // would refuse to sign; through the cache the writer signs the tree it
    // signed before plus the new record, never the edited bytes, and the
    // auditor's verify reports the edit.
    let text = std::fs::read_to_string(d.join("log.jsonl")).unwrap();
    std::fs::write(d.join("log.jsonl"), text.replace("{\"i\":3}", "{\"i\":4}")).unwrap();
    ok(&["append", "log.jsonl", "--key", "k", "{\"x\":1}"], d);
    ok(&["checkpoint", "log.jsonl", "--key", "k"], d);
    let (code, v) = verify(d);
    assert_eq!(code, 1, "{v}");
    assert_eq!(v["logs"][0]["status"], "invalid");
    // Without the cache the writer verifies in full and refuses.
    std::fs::remove_file(d.join("log.jsonl.vouch-tree")).unwrap();
    let o = vouch_at(&["checkpoint", "log.jsonl", "--key", "k"], d);
    assert_eq!(o.status.code(), Some(2));
}
