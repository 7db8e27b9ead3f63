//! Soundness regression tests, written as an attacker: each test pins a
//! defect that once let `vouch` say "valid" (or hang, or panic) about
//! evidence that is not. The first law: never exit 0 on bad evidence.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod soundness_support;
mod support;

use serde_json::{Value, json};
use soundness_support::*;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use vouch::chain::state::{Recheck, VerifyState};
use vouch::chain::verify::{self, LogStatus, VerifyOptions};
use vouch::chain::{TrustedKeys, writer};
use vouch::note::SignerKey;

const O: &str = "example.com/sound";

/// A log signed by K1, rotated K1→K2 then K2→K3, ending with a checkpoint
/// by K3; `k1.pub` is the auditor's key. Also an attacker key named after
/// the origin (`katt`).
struct Rotated {
    w: Work,
    k1: SignerKey,
    k2: SignerKey,
    k3: SignerKey,
    katt: SignerKey,
}

fn rotated() -> Rotated {
    let w = Work::new();
    let k1 = w.keygen(O, "k1");
    let k2 = w.keygen(O, "k2");
    let k3 = w.keygen(O, "k3");
    let katt = w.keygen(O, "katt");
    w.append("log.jsonl", "k1", 3);
    w.checkpoint("log.jsonl", "k1");
    w.rotate("log.jsonl", "k1", "k2");
    w.append("log.jsonl", "k2", 2);
    w.checkpoint("log.jsonl", "k2");
    w.rotate("log.jsonl", "k2", "k3");
    w.append("log.jsonl", "k3", 2);
    w.checkpoint("log.jsonl", "k3");
    let (c, v, o) = w.verify_json(&["log.jsonl", "--pub", "k1.pub"]);
    assert_eq!(
        (c, v["logs"][0]["status"].as_str()),
        (0, Some("valid")),
        "{}",
        both(&o)
    );
    Rotated {
        w,
        k1,
        k2,
        k3,
        katt,
    }
}

fn reason(v: &Value) -> String {
    v["logs"][0]["failure"]["reason"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

fn expect_rejected(w: &Work, args: &[&str], what: &str) -> Value {
    let (c, v, o) = w.verify_json(args);
    no_panic(&o, what);
    assert_eq!(c, 1, "{what}: {}", both(&o));
    v
}

// ---------------------------------------------------------------- 1. rotation

#[test]
fn rotation_retired_keys_cannot_sign_appended_checkpoints() {
    for (name, retired) in [("K1", 0), ("K2", 1)] {
        let r = rotated();
        let log = r.w.path("log.jsonl");
        let key = [&r.k1, &r.k2][retired];
        forge_events(&log, O, 2);
        forge_checkpoint(&log, O, &[key]);
        let v = expect_rejected(&r.w, &["log.jsonl", "--pub", "k1.pub"], name);
        assert_eq!(reason(&v), "unknown_key", "{name}: {v}");
        // Every key the log ever had, given by the auditor: still retired.
        let all: String = ["k1", "k2", "k3"]
            .iter()
            .map(|k| r.w.read(&format!("{k}.pub")))
            .collect();
        r.w.write("all.pub", all);
        let v = expect_rejected(&r.w, &["log.jsonl", "--pub", "all.pub"], name);
        assert_eq!(reason(&v), "unknown_key", "{name}: {v}");
    }
}

#[test]
fn rotation_by_a_retired_key_to_an_attacker_key_is_rejected() {
    for retired in [0usize, 1] {
        let r = rotated();
        let log = r.w.path("log.jsonl");
        let key = [&r.k1, &r.k2][retired];
        forge_rotation(&log, O, &r.katt, &[key, &r.katt]);
        forge_events(&log, O, 1);
        forge_checkpoint(&log, O, &[&r.katt]);
        let v = expect_rejected(&r.w, &["log.jsonl", "--pub", "k1.pub"], "retired rotation");
        assert_eq!(reason(&v), "unknown_key", "{v}");
    }
}

#[test]
fn rotation_signed_only_by_the_new_key_or_back_to_a_retired_key_is_rejected() {
    // Only the new key signed.
    let r = rotated();
    let log = r.w.path("log.jsonl");
    forge_rotation(&log, O, &r.katt, &[&r.katt]);
    forge_checkpoint(&log, O, &[&r.katt]);
    let v = expect_rejected(
        &r.w,
        &["log.jsonl", "--pub", "k1.pub"],
        "self-signed rotation",
    );
    assert_eq!(v["logs"][0]["failure"]["seq"], 12, "{v}");
    // Back to a retired key, signed by the current key and the retired one.
    let r = rotated();
    let log = r.w.path("log.jsonl");
    forge_rotation(&log, O, &r.k1, &[&r.k3, &r.k1]);
    forge_checkpoint(&log, O, &[&r.k1]);
    expect_rejected(
        &r.w,
        &["log.jsonl", "--pub", "k1.pub"],
        "rotation back to K1",
    );
    // Positive control: the current key may rotate (vouch cannot tell a
    // stolen current key from its owner).
    let r = rotated();
    let log = r.w.path("log.jsonl");
    forge_rotation(&log, O, &r.katt, &[&r.k3, &r.katt]);
    forge_checkpoint(&log, O, &[&r.katt]);
    let (c, _, o) = r.w.verify_json(&["log.jsonl", "--pub", "k1.pub"]);
    assert_eq!(c, 0, "{}", both(&o));
}

#[test]
fn rotation_record_whose_new_key_is_not_the_announced_one_is_rejected() {
    let r = rotated();
    let log = r.w.path("log.jsonl");
    // The note announces katt, the record's new_key field says k2 (retired).
    let size = leaves(&log).len() as u64;
    let text = checkpoint_text(
        &log,
        O,
        size,
        &[format!(
            "vouch-key-rotation {}",
            r.katt.verifier().to_text()
        )],
    );
    let note = vouch::note::sign(&text, &[&r.k3, &r.katt]).unwrap();
    append_forged(
        &log,
        O,
        "key_rotation",
        &json!({"new_key": r.k2.verifier().to_text(), "note": note}),
    );
    forge_checkpoint(&log, O, &[&r.k2]);
    expect_rejected(
        &r.w,
        &["log.jsonl", "--pub", "k1.pub"],
        "mismatched new_key",
    );
}

#[test]
fn a_rotation_extension_line_in_a_plain_checkpoint_introduces_no_key() {
    let r = rotated();
    let log = r.w.path("log.jsonl");
    let size = leaves(&log).len() as u64;
    let ext = format!("vouch-key-rotation {}", r.katt.verifier().to_text());
    let note =
        vouch::note::sign(&checkpoint_text(&log, O, size, &[ext]), &[&r.k3, &r.katt]).unwrap();
    append_forged(&log, O, "checkpoint", &json!({ "note": note }));
    // That plain checkpoint is fine (the current key signed it)...
    let (c, _, o) = r.w.verify_json(&["log.jsonl", "--pub", "k1.pub"]);
    assert_eq!(c, 0, "{}", both(&o));
    // ...but katt is not trusted afterwards, and K3 is not retired.
    forge_events(&log, O, 1);
    forge_checkpoint(&log, O, &[&r.katt]);
    let v = expect_rejected(&r.w, &["log.jsonl", "--pub", "k1.pub"], "extension line");
    assert_eq!(reason(&v), "unknown_key", "{v}");
    // A checkpoint record with a rotation body is not a rotation either.
    let r = rotated();
    let log = r.w.path("log.jsonl");
    let size = leaves(&log).len() as u64;
    let new_text = r.katt.verifier().to_text();
    let ext = format!("vouch-key-rotation {new_text}");
    let note =
        vouch::note::sign(&checkpoint_text(&log, O, size, &[ext]), &[&r.k3, &r.katt]).unwrap();
    append_forged(
        &log,
        O,
        "checkpoint",
        &json!({"new_key": new_text, "note": note}),
    );
    forge_checkpoint(&log, O, &[&r.katt]);
    expect_rejected(
        &r.w,
        &["log.jsonl", "--pub", "k1.pub"],
        "checkpoint with rotation body",
    );
}

#[test]
fn auditor_checkpoint_by_the_old_key_counts_up_to_its_rotation_and_not_after() {
    let r = rotated();
    let log = r.w.path("log.jsonl");
    let text = std::fs::read_to_string(&log).unwrap();
    let rot = text
        .lines()
        .position(|l| l.contains("\"kind\":\"key_rotation\""))
        .unwrap() as u64;
    // At the rotation's own size, K1 was still current.
    r.w.write("at.note", sign_tree(&log, O, rot, &[&r.k1]));
    let (c, _, o) =
        r.w.verify_json(&["log.jsonl", "--pub", "k1.pub", "--checkpoint", "at.note"]);
    assert_eq!(c, 0, "{}", both(&o));
    // One record later, K1 is retired.
    r.w.write("after.note", sign_tree(&log, O, rot + 1, &[&r.k1]));
    expect_rejected(
        &r.w,
        &["log.jsonl", "--pub", "k1.pub", "--checkpoint", "after.note"],
        "K1 after rotation",
    );
}

#[test]
fn rotation_retired_keys_stay_retired_across_state_runs() {
    for (what, forge) in [
        ("K2 checkpoint", 0),
        ("K2 rotation to attacker", 1),
        ("K1 checkpoint", 2),
    ] {
        let r = rotated();
        let log = r.w.path("log.jsonl");
        let (c, v, o) =
            r.w.verify_json(&["log.jsonl", "--pub", "k1.pub", "--state", "st.json"]);
        assert_eq!(
            (c, v["logs"][0]["status"].as_str()),
            (0, Some("valid")),
            "{}",
            both(&o)
        );
        forge_events(&log, O, 2);
        match forge {
            0 => {
                forge_checkpoint(&log, O, &[&r.k2]);
            }
            1 => {
                forge_rotation(&log, O, &r.katt, &[&r.k2, &r.katt]);
                forge_checkpoint(&log, O, &[&r.katt]);
            }
            _ => {
                forge_checkpoint(&log, O, &[&r.k1]);
            }
        }
        let v = expect_rejected(
            &r.w,
            &["log.jsonl", "--pub", "k1.pub", "--state", "st.json"],
            what,
        );
        assert_eq!(v["logs"][0]["resumed_from"], 12, "{what}: resumed: {v}");
        assert_eq!(reason(&v), "unknown_key", "{what}: {v}");
        // And again: the pin was not moved by the rejected run.
        expect_rejected(
            &r.w,
            &["log.jsonl", "--pub", "k1.pub", "--state", "st.json"],
            what,
        );
    }
}

/// A large log cut into many 4 KiB ranges, rotations and the forged
/// checkpoint in different ranges, verified in full and incrementally.
#[test]
fn rotation_retired_keys_are_caught_in_a_chunked_log_and_a_chunked_resume() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("big.jsonl");
    let k1 = SignerKey::from_seed(O, &[1; 32]).unwrap();
    let k2 = SignerKey::from_seed(O, &[2; 32]).unwrap();
    let k3 = SignerKey::from_seed(O, &[3; 32]).unwrap();
    let katt = SignerKey::from_seed(O, &[9; 32]).unwrap();
    let fill = |key: &SignerKey, n: usize| {
        for i in 0..n {
            let body = json!({"i": i, "pad": "p".repeat(200)});
            writer::append(&log, key, &[("event", &body)]).unwrap();
            if i % 37 == 36 {
                writer::checkpoint(&log, key, true).unwrap();
            }
        }
        writer::checkpoint(&log, key, true).unwrap();
    };
    fill(&k1, 150);
    writer::rotate(&log, &k1, &k2).unwrap();
    fill(&k2, 150);
    writer::rotate(&log, &k2, &k3).unwrap();
    fill(&k3, 150);
    assert!(std::fs::metadata(&log).unwrap().len() > 30 * 4096);
    let opts = |state: Option<VerifyState>| VerifyOptions {
        trusted: TrustedKeys::new([k1.verifier()]).unwrap(),
        chunk_bytes: 4096,
        state: state.map(Arc::new),
        save_state: true,
        recheck: Recheck::Rolling,
        ..Default::default()
    };
    let files = vec![log.clone()];
    let first = verify::verify_files(&files, &opts(None));
    assert_eq!(
        first.logs[0].status,
        LogStatus::Valid,
        "{:?}",
        first.logs[0].failure
    );
    let good = std::fs::read(&log).unwrap();
    for (what, signer, rotation) in [
        ("K1", &k1, false),
        ("K2", &k2, false),
        ("K2 rotation", &k2, true),
    ] {
        std::fs::write(&log, &good).unwrap();
        // Enough new records to span several ranges before the forgery.
        for i in 0..60 {
            append_forged(
                &log,
                O,
                "event",
                &json!({"forged": i, "pad": "q".repeat(200)}),
            );
        }
        if rotation {
            forge_rotation(&log, O, &katt, &[signer, &katt]);
            forge_checkpoint(&log, O, &[&katt]);
        } else {
            forge_checkpoint(&log, O, &[signer]);
        }
        let bytes = std::fs::read(&log).unwrap();
        let full = verify::verify_files(&files, &opts(None));
        let f = full.logs[0]
            .failure
            .as_ref()
            .unwrap_or_else(|| panic!("{what}: accepted"));
        assert_eq!(f.error.code(), "unknown_key", "{what}");
        let mem = verify::verify_bytes(&log, &bytes, &opts(None));
        assert_eq!(mem.status, LogStatus::Invalid, "{what} in memory");
        let resumed = verify::verify_files(&files, &opts(Some(first.state.clone())));
        assert_eq!(
            resumed.logs[0].resumed_from,
            Some(first.logs[0].records),
            "{what}"
        );
        let f = resumed.logs[0]
            .failure
            .as_ref()
            .unwrap_or_else(|| panic!("{what}: accepted on resume"));
        assert_eq!(f.error.code(), "unknown_key", "{what}");
        // The rejected run keeps the old pin.
        assert_eq!(
            resumed.state.logs[O].records, first.logs[0].records,
            "{what}: pin moved"
        );
    }
}

// ------------------------------------------------------------- 2. pins kept

fn simple(n: usize) -> Work {
    let w = Work::new();
    w.keygen(O, "k");
    w.append("log.jsonl", "k", n);
    w.checkpoint("log.jsonl", "k");
    w
}

#[test]
fn state_a_rejected_run_keeps_its_pin_until_reset_pin() {
    let w = simple(8);
    let args = ["log.jsonl", "--pub", "k.pub", "--state", "st.json"];
    let (c, _, o) = w.verify_json(&args);
    assert_eq!(c, 0, "{}", both(&o));
    // Tamper: cut the log back to a valid prefix ending in a checkpoint of
    // its own (re-signed by the key holder).
    let text = w.read("log.jsonl");
    let prefix: String = text.lines().take(4).map(|l| format!("{l}\n")).collect();
    w.write("log.jsonl", prefix);
    w.checkpoint("log.jsonl", "k");
    // The shortened log on its own verifies...
    let (c, _, _) = w.verify_json(&["log.jsonl", "--pub", "k.pub"]);
    assert_eq!(c, 0);
    // ...but not against the pin, twice.
    for run in 0..2 {
        let v = expect_rejected(&w, &args, &format!("run {run}"));
        assert!(
            ["truncated", "fork"].contains(&reason(&v).as_str()),
            "run {run}: {v}"
        );
    }
    // A reset of another origin does nothing for this one.
    let o = w.run(&[
        "verify",
        "log.jsonl",
        "--pub",
        "k.pub",
        "--state",
        "st.json",
        "--reset-pin",
        "example.com/other",
    ]);
    assert_eq!(code(&o), 2, "{}", both(&o));
    expect_rejected(&w, &args, "after a failed reset");
    // The auditor resets the pin: verified afresh and pinned again.
    let mut reset = args.to_vec();
    reset.extend(["--reset-pin", O]);
    let (c, _, o) = w.verify_json(&reset);
    assert_eq!(c, 0, "{}", both(&o));
    let (c, _, o) = w.verify_json(&args);
    assert_eq!(c, 0, "{}", both(&o));
}

#[test]
fn state_an_edited_record_stays_rejected_run_after_run() {
    let w = simple(8);
    let args = ["log.jsonl", "--pub", "k.pub", "--state", "st.json"];
    w.ok(&[
        "verify",
        "log.jsonl",
        "--pub",
        "k.pub",
        "--state",
        "st.json",
    ]);
    let text = w.read("log.jsonl");
    w.write("log.jsonl", text.replacen("{\"i\":3}", "{\"i\":4}", 1));
    for run in 0..3 {
        expect_rejected(&w, &args, &format!("run {run}"));
    }
}

// ------------------------------------------- 3. pinned logs that went away

#[test]
fn state_a_pinned_log_that_vanished_was_emptied_cut_or_replaced_is_rejected() {
    type Attack = fn(&Work);
    let attacks: Vec<(&str, Attack, &[&str])> = vec![
        (
            "vanished",
            |w| std::fs::remove_file(w.path("d/log.jsonl")).unwrap(),
            &["missing_log"],
        ),
        (
            "emptied",
            |w| std::fs::write(w.path("d/log.jsonl"), b"").unwrap(),
            &["truncated"],
        ),
        (
            "cut to a fragment",
            |w| {
                let b = std::fs::read(w.path("d/log.jsonl")).unwrap();
                std::fs::write(w.path("d/log.jsonl"), &b[b.len() / 3..b.len() / 2]).unwrap();
            },
            &["truncated", "seq_gap", "bad_json", "trailing_data"],
        ),
        (
            "cut to a fragment of whole records",
            |w| {
                let t = std::fs::read_to_string(w.path("d/log.jsonl")).unwrap();
                let mid: String = t
                    .lines()
                    .skip(3)
                    .take(3)
                    .map(|l| format!("{l}\n"))
                    .collect();
                std::fs::write(w.path("d/log.jsonl"), mid).unwrap();
            },
            &["truncated", "seq_gap"],
        ),
        (
            "replaced by another origin's log",
            |w| {
                std::fs::rename(w.path("other/o.jsonl"), w.path("d/log.jsonl")).unwrap();
            },
            &["missing_log"],
        ),
    ];
    for (what, attack, expected) in attacks {
        for strict in [false, true] {
            let w = Work::new();
            w.keygen(O, "k");
            w.keygen("example.com/other", "ko");
            w.keygen("example.com/beside", "kb");
            std::fs::create_dir(w.path("d")).unwrap();
            std::fs::create_dir(w.path("other")).unwrap();
            w.append("d/log.jsonl", "k", 8);
            w.checkpoint("d/log.jsonl", "k");
            // A valid log of another origin beside it, so the run has logs.
            w.append("d/beside.jsonl", "kb", 2);
            w.checkpoint("d/beside.jsonl", "kb");
            // Another origin's log, outside the audited directory.
            w.append("other/o.jsonl", "ko", 2);
            w.checkpoint("other/o.jsonl", "ko");
            let keys: String = ["k", "ko", "kb"]
                .iter()
                .map(|k| w.read(&format!("{k}.pub")))
                .collect();
            w.write("keys.pub", keys);
            let mut args = vec!["d", "--pub", "keys.pub", "--state", "st.json"];
            if strict {
                args.push("--strict");
            }
            let (c, _, o) = w.verify_json(&args);
            assert_eq!(c, 0, "{what}: {}", both(&o));
            attack(&w);
            for run in 0..2 {
                let (c, v, o) = w.verify_json(&args);
                no_panic(&o, what);
                assert_eq!(c, 1, "{what} (strict {strict}, run {run}): {}", both(&o));
                let got = reasons(&v);
                assert!(
                    got.iter().any(|r| expected.contains(&r.as_str())),
                    "{what}: expected one of {expected:?}, got {got:?}: {v}"
                );
            }
        }
    }
}

// --------------------------------------------------- 4. keys and the state

#[test]
fn state_changing_the_keys_keeps_the_pins() {
    for (what, extra) in [
        ("another log's key added", vec!["--pub", "ko.pub"]),
        ("the same key file twice", vec!["--pub", "k.pub"]),
        ("a keyset holding the key again", vec!["--pub", "both.pub"]),
    ] {
        for attack in ["truncate", "rewrite"] {
            let w = simple(10);
            w.keygen("example.com/other", "ko");
            w.write(
                "both.pub",
                format!("{}{}", w.read("k.pub"), w.read("ko.pub")),
            );
            w.ok(&[
                "verify",
                "log.jsonl",
                "--pub",
                "k.pub",
                "--state",
                "st.json",
            ]);
            let text = w.read("log.jsonl");
            match attack {
                "truncate" => {
                    let prefix: String = text.lines().take(5).map(|l| format!("{l}\n")).collect();
                    w.write("log.jsonl", prefix);
                    w.checkpoint("log.jsonl", "k");
                }
                _ => {
                    // The key holder rebuilds history with record 2 changed.
                    std::fs::remove_file(w.path("log.jsonl")).unwrap();
                    for i in 0..12 {
                        let b = if i == 2 {
                            "{\"i\":\"rewritten\"}".to_owned()
                        } else {
                            format!("{{\"i\":{i}}}")
                        };
                        w.ok(&["append", "log.jsonl", "--key", "k", &b]);
                    }
                    w.checkpoint("log.jsonl", "k");
                }
            }
            let mut args = vec!["log.jsonl", "--pub", "k.pub", "--state", "st.json"];
            args.extend(&extra);
            let v = expect_rejected(&w, &args, &format!("{what}/{attack}"));
            assert!(
                ["truncated", "fork", "history_changed"].contains(&reason(&v).as_str()),
                "{what}/{attack}: {v}"
            );
            // And again with the original keys.
            expect_rejected(
                &w,
                &["log.jsonl", "--pub", "k.pub", "--state", "st.json"],
                &format!("{what}/{attack} again"),
            );
        }
    }
}

fn edit_state(w: &Work, f: impl FnOnce(&mut Value)) {
    let mut st: Value = serde_json::from_str(&w.read("st.json")).unwrap();
    f(&mut st);
    w.write("st.json", serde_json::to_vec(&st).unwrap());
}

#[test]
fn state_editing_the_rotation_list_cannot_add_an_attacker_key() {
    let r = rotated();
    let log = r.w.path("log.jsonl");
    let args = ["log.jsonl", "--pub", "k1.pub", "--state", "st.json"];
    r.w.ok(&[
        "verify",
        "log.jsonl",
        "--pub",
        "k1.pub",
        "--state",
        "st.json",
    ]);
    // The attacker writes a rotation K3→katt signed by katt alone into the
    // state, and a checkpoint signed by katt into the log.
    let size = leaves(&log).len() as u64;
    let new_text = r.katt.verifier().to_text();
    let text = checkpoint_text(&log, O, size, &[format!("vouch-key-rotation {new_text}")]);
    let note = vouch::note::sign(&text, &[&r.katt]).unwrap();
    let forged_rotation = json!({"note": note, "new_key": new_text});
    edit_state(&r.w, |st| {
        st["logs"][O]["rotations"]
            .as_array_mut()
            .unwrap()
            .push(forged_rotation.clone());
    });
    forge_events(&log, O, 1);
    forge_checkpoint(&log, O, &[&r.katt]);
    let v = expect_rejected(&r.w, &args, "forged rotation in the state");
    assert_eq!(reason(&v), "unknown_key", "{v}");
    // The forged rotation replacing the real ones.
    edit_state(&r.w, |st| {
        st["logs"][O]["rotations"] = json!([forged_rotation.clone()]);
    });
    expect_rejected(&r.w, &args, "only a forged rotation in the state");
    // A rotation signed by a retired key (K2→katt) added to the list.
    let note = vouch::note::sign(&text, &[&r.k2, &r.katt]).unwrap();
    edit_state(&r.w, |st| {
        st["logs"][O]["rotations"]
            .as_array_mut()
            .unwrap()
            .push(json!({"note": note, "new_key": new_text}));
    });
    expect_rejected(&r.w, &args, "retired-key rotation in the state");
}

// Regression (found by attacking the first version of this issue): the state's rotation list is replayed to rebuild the trust state
// on resume, but nothing checks that it holds *every* rotation the
// verified part of the log contains. Deleting entries un-retires keys:
// with the list emptied, K1 (retired at seq 4) is current again on
// resume, and a checkpoint forged with the stolen K1 verifies (exit 0,
// "valid"). The same with only the last rotation removed and K2. A full
// verification of the same log rejects it (unknown_key).
#[test]

fn state_deleting_rotations_from_the_state_cannot_unretire_a_key() {
    let mut accepted = Vec::new();
    for (what, keep, stolen) in [
        ("all rotations removed", 0usize, 0usize),
        ("last rotation removed", 1, 1),
    ] {
        let r = rotated();
        let log = r.w.path("log.jsonl");
        let args = ["log.jsonl", "--pub", "k1.pub", "--state", "st.json"];
        r.w.ok(&[
            "verify",
            "log.jsonl",
            "--pub",
            "k1.pub",
            "--state",
            "st.json",
        ]);
        edit_state(&r.w, |st| {
            st["logs"][O]["rotations"]
                .as_array_mut()
                .unwrap()
                .truncate(keep);
        });
        forge_events(&log, O, 1);
        forge_checkpoint(&log, O, &[[&r.k1, &r.k2][stolen]]);
        // A full run rejects the log.
        let (c, _, _) = r.w.verify_json(&["log.jsonl", "--pub", "k1.pub"]);
        assert_eq!(c, 1, "{what}: full run");
        let (c, v, o) = r.w.verify_json(&args);
        no_panic(&o, what);
        if c != 1 || reason(&v) != "unknown_key" {
            accepted.push(format!("{what}: exit {c}, {}", v["logs"][0]["status"]));
        }
    }
    assert!(
        accepted.is_empty(),
        "retired keys trusted again: {accepted:#?}"
    );
}

// Regression (found by attacking the first version of this issue): a pin whose remembered tree cannot be decoded (hand-edited or
// corrupted `tree`) is silently dropped: the log is not resumed, the pin
// is not checked, and a log cut back to half its size verifies (exit 0)
// and is pinned anew at the smaller size. Expected: the run refuses an
// unusable pin (exit 2) or rejects the log (exit 1), never exit 0.
#[test]

fn state_an_unusable_pin_is_not_silently_dropped() {
    let w = simple(10);
    let args = ["log.jsonl", "--pub", "k.pub", "--state", "st.json"];
    w.ok(&[
        "verify",
        "log.jsonl",
        "--pub",
        "k.pub",
        "--state",
        "st.json",
    ]);
    let text = w.read("log.jsonl");
    let prefix: String = text.lines().take(5).map(|l| format!("{l}\n")).collect();
    w.write("log.jsonl", prefix);
    w.checkpoint("log.jsonl", "k");
    edit_state(&w, |st| {
        st["logs"][O]["tree"] = json!(["not hex"]);
    });
    let (c, _, o) = w.verify_json(&args);
    no_panic(&o, "unusable pin");
    assert_ne!(
        c,
        0,
        "truncated log accepted with an unusable pin: {}",
        both(&o)
    );
}

// ------------------------------------------------------------ 5. directories

/// A dir `real/` with a valid log and a tampered one, and `scan/` that only
/// reaches them through symlinks.
fn tampered_pair(w: &Work) {
    w.keygen(O, "k");
    w.keygen("example.com/t", "kt");
    std::fs::create_dir_all(w.path("real")).unwrap();
    w.append("real/good.jsonl", "k", 3);
    w.checkpoint("real/good.jsonl", "k");
    w.append("real/bad.jsonl", "kt", 4);
    w.checkpoint("real/bad.jsonl", "kt");
    let t = w.read("real/bad.jsonl");
    w.write("real/bad.jsonl", t.replacen("{\"i\":1}", "{\"i\":2}", 1));
    w.write(
        "keys.pub",
        format!("{}{}", w.read("k.pub"), w.read("kt.pub")),
    );
}

#[test]
fn walk_a_tampered_log_behind_a_symlink_is_rejected() {
    use std::os::unix::fs::symlink;
    // A symlinked file.
    let w = Work::new();
    tampered_pair(&w);
    std::fs::create_dir(w.path("scan")).unwrap();
    symlink(w.path("real/bad.jsonl"), w.path("scan/linked.jsonl")).unwrap();
    let v = expect_rejected(&w, &["scan", "--pub", "keys.pub"], "symlinked file");
    assert!(reasons(&v).contains(&"broken_link".to_owned()), "{v}");
    // A symlinked directory.
    let w = Work::new();
    tampered_pair(&w);
    std::fs::create_dir(w.path("scan")).unwrap();
    symlink(w.path("real"), w.path("scan/sub")).unwrap();
    let v = expect_rejected(&w, &["scan", "--pub", "keys.pub"], "symlinked dir");
    assert!(reasons(&v).contains(&"broken_link".to_owned()), "{v}");
    // The symlinked directory given on the command line.
    let v = expect_rejected(&w, &["scan/sub", "--pub", "keys.pub"], "symlinked dir arg");
    assert!(reasons(&v).contains(&"broken_link".to_owned()), "{v}");
}

#[test]
fn walk_a_symlink_loop_does_not_hang() {
    use std::os::unix::fs::symlink;
    let w = Work::new();
    tampered_pair(&w);
    symlink(w.path("real"), w.path("real/loop")).unwrap();
    symlink("..", w.path("real/up")).unwrap();
    symlink(w.path("real/self.jsonl"), w.path("real/self.jsonl")).unwrap_or(());
    let o = vouch_timeout(
        &["verify", "real", "--pub", "keys.pub", "--format", "json"],
        w.p(),
        Duration::from_secs(20),
    );
    no_panic(&o, "loop");
    assert_eq!(code(&o), 1, "{}", both(&o));
    let v = json(&o);
    let n = v["logs"].as_array().unwrap().len();
    assert!(n <= 4, "each log once (plus problem rows): {v}");
}

#[test]
fn walk_a_dangling_symlink_named_like_a_log_is_reported() {
    use std::os::unix::fs::symlink;
    let w = Work::new();
    tampered_pair(&w);
    std::fs::remove_file(w.path("real/bad.jsonl")).unwrap();
    symlink(w.path("gone.jsonl"), w.path("real/dangling.jsonl")).unwrap();
    let (c, v, o) = w.verify_json(&["real", "--pub", "keys.pub"]);
    no_panic(&o, "dangling");
    assert_eq!(c, 2, "{}", both(&o));
    let paths: Vec<&str> = v["logs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["path"].as_str().unwrap())
        .collect();
    assert!(paths.iter().any(|p| p.ends_with("dangling.jsonl")), "{v}");
    assert!(paths.iter().any(|p| p.ends_with("good.jsonl")), "{v}");
    // Beside a tampered log: 1 wins.
    let w = Work::new();
    tampered_pair(&w);
    symlink(w.path("gone.jsonl"), w.path("real/dangling.jsonl")).unwrap();
    let (c, v, o) = w.verify_json(&["real", "--pub", "keys.pub"]);
    assert_eq!(c, 1, "{}", both(&o));
    assert!(
        v["logs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l["path"].as_str().unwrap().ends_with("dangling.jsonl")),
        "{v}"
    );
}

// ------------------------------------------------ 6. unreadable directories

fn setpriv_available() -> bool {
    let ok = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "true"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "setpriv is needed for this test in CI"
        );
        eprintln!("SKIPPED: setpriv cannot drop privileges here");
    }
    ok
}

fn verify_as_nobody(w: &Work, args: &[&str]) -> std::process::Output {
    // A copy of the binary that uid 65534 can run wherever the checkout is
    // (a CI clone may sit below a directory others cannot enter).
    static BIN_COPY: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    let bin = BIN_COPY.get_or_init(|| {
        // Statics are never dropped: remove the copies earlier runs left.
        if let Ok(dir) = std::fs::read_dir(std::env::temp_dir()) {
            for e in dir.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if let Some(pid) = name.strip_prefix("vouch-nobody-")
                    && !Path::new("/proc").join(pid).exists()
                {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
        let bin = std::env::temp_dir().join(format!("vouch-nobody-{}", std::process::id()));
        std::fs::copy(BIN, &bin).unwrap();
        chmod(&bin, 0o755);
        bin
    });
    // The copy was open for writing for a moment; a child another test
    // thread forked in that moment holds the descriptor until it execs, and
    // until then exec of the copy fails with ETXTBSY (a kernel race, not
    // vouch's): run again when that is what happened.
    let mut tries = 0;
    loop {
        let o = std::process::Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(bin)
            .args(["verify", "--format", "json"])
            .args(args)
            .current_dir(w.p())
            .output()
            .unwrap();
        tries += 1;
        if o.status.code() == Some(126)
            && String::from_utf8_lossy(&o.stderr).contains("Text file busy")
            && tries < 100
        {
            std::thread::yield_now();
            continue;
        }
        no_panic(&o, "verify as nobody");
        return o;
    }
}

fn readable_tree(w: &Work) {
    for entry in walk_all(w.p()) {
        let meta = std::fs::symlink_metadata(&entry).unwrap();
        if meta.file_type().is_symlink() {
            continue;
        }
        chmod(&entry, if meta.is_dir() { 0o755 } else { 0o644 });
    }
}

fn walk_all(p: &Path) -> Vec<std::path::PathBuf> {
    let mut out = vec![p.to_path_buf()];
    if std::fs::symlink_metadata(p).unwrap().is_dir() {
        for e in std::fs::read_dir(p).unwrap() {
            out.extend(walk_all(&e.unwrap().path()));
        }
    }
    out
}

#[test]
fn walk_an_unreadable_subdirectory_does_not_abort_the_run() {
    if !setpriv_available() {
        return;
    }
    for tampered in [true, false] {
        let w = Work::world_readable();
        tampered_pair(&w);
        if !tampered {
            std::fs::remove_file(w.path("real/bad.jsonl")).unwrap();
        }
        std::fs::create_dir(w.path("real/locked")).unwrap();
        w.keygen("example.com/locked", "kl");
        w.append("real/locked/hidden.jsonl", "kl", 2);
        readable_tree(&w);
        chmod(&w.path("real/locked"), 0o000);
        let o = verify_as_nobody(&w, &["real", "--pub", "keys.pub"]);
        chmod(&w.path("real/locked"), 0o755);
        let v = json(&o);
        let paths: Vec<&str> = v["logs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["path"].as_str().unwrap())
            .collect();
        assert!(
            paths.iter().any(|p| p.ends_with("locked")),
            "locked dir reported: {v}"
        );
        assert!(
            paths.iter().any(|p| p.ends_with("good.jsonl")),
            "valid log listed: {v}"
        );
        if tampered {
            assert_eq!(code(&o), 1, "{}", both(&o));
            assert!(reasons(&v).contains(&"broken_link".to_owned()), "{v}");
        } else {
            assert_eq!(code(&o), 2, "{}", both(&o));
            assert_eq!(row(&v, O)["status"], "valid", "{v}");
        }
    }
}

#[test]
fn walk_an_unreadable_pinned_log_is_rejected_not_skipped() {
    if !setpriv_available() {
        return;
    }
    let w = Work::world_readable();
    tampered_pair(&w);
    std::fs::remove_file(w.path("real/bad.jsonl")).unwrap();
    readable_tree(&w);
    chmod(w.p(), 0o777);
    let o = verify_as_nobody(&w, &["real", "--pub", "keys.pub", "--state", "st.json"]);
    assert_eq!(code(&o), 0, "{}", both(&o));
    chmod(&w.path("real/good.jsonl"), 0o000);
    let o = verify_as_nobody(&w, &["real", "--pub", "keys.pub", "--state", "st.json"]);
    chmod(&w.path("real/good.jsonl"), 0o644);
    chmod(w.p(), 0o755);
    assert_ne!(code(&o), 0, "{}", both(&o));
}

// ----------------------------------------------------- 7. unsaved state

#[test]
fn state_that_cannot_be_saved_does_not_hide_a_rejection() {
    let w = Work::new();
    tampered_pair(&w);
    let st = "/nonexistent/dir/st.json";
    for format in ["json", "table", "ndjson"] {
        let o = w.run(&[
            "verify", "real", "--pub", "keys.pub", "--state", st, "--format", format,
        ]);
        no_panic(&o, st);
        assert_eq!(code(&o), 1, "{st} {format}: {}", both(&o));
        let all = both(&o);
        assert!(all.contains("NOT saved"), "{st} {format}: {all}");
        assert!(stdout(&o).contains("bad.jsonl"), "report printed: {all}");
        if format == "json" {
            assert_eq!(json(&o)["state"]["saved"], false, "{all}");
        }
    }
    // Valid logs only: the unsaved state is an operational error.
    let w2 = simple(3);
    let o = w2.run(&["verify", "log.jsonl", "--pub", "k.pub", "--state", st]);
    no_panic(&o, st);
    assert_eq!(code(&o), 2, "{st}: {}", both(&o));
    assert!(both(&o).contains("NOT saved"), "{}", both(&o));
}

/// A state path in a directory the auditor cannot write (as uid 65534).
/// (A state path below a regular file, `file/st.json`, is refused before
/// the run with exit 2: it cannot be read, so no pin could be checked.)
#[test]
fn state_in_a_read_only_directory_does_not_hide_a_rejection() {
    if !setpriv_available() {
        return;
    }
    for tampered in [true, false] {
        let w = Work::world_readable();
        tampered_pair(&w);
        if !tampered {
            std::fs::remove_file(w.path("real/bad.jsonl")).unwrap();
        }
        std::fs::create_dir(w.path("ro")).unwrap();
        readable_tree(&w);
        let st = w.path("ro/st.json");
        let o = verify_as_nobody(
            &w,
            &["real", "--pub", "keys.pub", "--state", st.to_str().unwrap()],
        );
        let all = both(&o);
        assert_eq!(code(&o), if tampered { 1 } else { 2 }, "{all}");
        assert_eq!(json(&o)["state"]["saved"], false, "{all}");
        assert!(stdout(&o).contains("good.jsonl"), "{all}");
    }
}

// ------------------------------------------------ 8. one file, two names

#[test]
fn walk_one_file_reached_by_two_names_is_verified_once() {
    use std::os::unix::fs::symlink;
    let w = simple(4);
    std::fs::create_dir(w.path("d")).unwrap();
    std::fs::rename(w.path("log.jsonl"), w.path("d/log.jsonl")).unwrap();
    symlink(w.path("d/log.jsonl"), w.path("d/alias.jsonl")).unwrap();
    std::fs::hard_link(w.path("d/log.jsonl"), w.path("d/hard.jsonl")).unwrap();
    for args in [
        vec!["d"],
        vec!["d/log.jsonl", "d/alias.jsonl", "d/hard.jsonl"],
        vec!["d", "d/log.jsonl"],
    ] {
        let mut a = args.clone();
        a.extend(["--pub", "k.pub", "--strict"]);
        let (c, v, o) = w.verify_json(&a);
        assert_eq!(c, 0, "{args:?}: {}", both(&o));
        assert_eq!(v["logs"].as_array().unwrap().len(), 1, "{args:?}: {v}");
        assert_eq!(v["logs"][0]["status"], "valid");
    }
}

// --------------------------------------------- 9. the same key given twice

#[test]
fn duplicate_pub_of_the_same_key_accepts_genuine_evidence_everywhere() {
    let w = simple(5);
    std::fs::create_dir(w.path("worm")).unwrap();
    let target = format!("dir:{}", w.path("worm").display());
    w.ok(&["anchor", "log.jsonl", "--key", "k", "--to", &target]);
    w.append("log.jsonl", "k", 1);
    w.ok(&["checkpoint", "log.jsonl", "--key", "k", "--out", "new.cp"]);
    let old = sign_tree(&w.path("log.jsonl"), O, 3, &[&w.signer("k")]);
    w.write("old.cp", old);
    w.write(
        "twice.pub",
        format!("{}{}", w.read("k.pub"), w.read("k.pub")),
    );
    w.ok(&["prove", "log.jsonl", "--seq", "2", "--out", "p"]);
    w.write("rec", line_of(&w.path("log.jsonl"), 2));
    w.ok(&[
        "prove",
        "log.jsonl",
        "--consistency-from",
        "3",
        "--out",
        "c",
    ]);
    w.ok(&["receipt", "log.jsonl", "--seq", "1", "--out", "r.json"]);
    for dup in [
        vec!["--pub", "k.pub", "--pub", "k.pub"],
        vec!["--pub", "twice.pub"],
        vec!["--pub", "twice.pub", "--pub", "k.pub"],
    ] {
        let cmds: Vec<Vec<&str>> = vec![
            vec![
                "verify",
                "log.jsonl",
                "--checkpoint",
                "new.cp",
                "--checkpoint",
                "old.cp",
            ],
            vec!["verify-proof", "p", "--record", "rec"],
            vec!["verify-consistency", "c", "--old", "old.cp"],
            vec!["receipt", "verify", "r.json", "--online", "--from", &target],
            vec!["anchor", "verify", "log.jsonl", "--from", &target],
        ];
        for cmd in cmds {
            let mut a = cmd.clone();
            a.extend(&dup);
            let o = w.run(&a);
            assert_eq!(code(&o), 0, "{a:?}: {}", both(&o));
        }
    }
}

// ---------------------------------------------------- 10. long tails

#[test]
fn a_long_unterminated_tail_is_trailing_data_not_line_too_long() {
    let w = simple(3);
    let mut bytes = std::fs::read(w.path("log.jsonl")).unwrap();
    let clean = bytes.clone();
    bytes.extend(std::iter::repeat_n(b'x', (1 << 20) + 4096));
    w.write("log.jsonl", &bytes);
    let v = expect_rejected(&w, &["log.jsonl", "--pub", "k.pub"], "long tail");
    assert_eq!(reason(&v), "trailing_data", "{v}");
    // A long tail that starts like a record (a torn huge record) too.
    let mut bytes = clean.clone();
    bytes.extend_from_slice(b"{\"body\":\"");
    bytes.extend(std::iter::repeat_n(b'a', 3 << 20));
    w.write("log.jsonl", &bytes);
    let v = expect_rejected(
        &w,
        &["log.jsonl", "--pub", "k.pub"],
        "long record-like tail",
    );
    assert_eq!(reason(&v), "trailing_data", "{v}");
    // With --state after a valid run.
    w.write("log.jsonl", &clean);
    w.ok(&[
        "verify",
        "log.jsonl",
        "--pub",
        "k.pub",
        "--state",
        "st.json",
    ]);
    w.write("log.jsonl", &bytes);
    let v = expect_rejected(
        &w,
        &["log.jsonl", "--pub", "k.pub", "--state", "st.json"],
        "long tail, state",
    );
    assert_eq!(reason(&v), "trailing_data", "{v}");
}

// ---------------------------------------- 11. prove/receipt on bad logs

#[test]
fn prove_and_receipt_refuse_a_checkpoint_claiming_a_larger_size() {
    for claimed in [50u64, u64::MAX / 2, 4] {
        let w = simple(3);
        let log = w.path("log.jsonl");
        w.append("log.jsonl", "k", 2);
        // A checkpoint record at seq 6 whose note claims `claimed` records.
        let l = leaves(&log);
        let text = vouch::note::checkpoint::Checkpoint {
            origin: O.into(),
            size: claimed,
            root: vouch::merkle::root(&l),
            extensions: vec![],
        }
        .to_text();
        let note = vouch::note::sign(&text, &[&w.signer("k")]).unwrap();
        append_forged(&log, O, "checkpoint", &json!({ "note": note }));
        let (c, v, _) = w.verify_json(&["log.jsonl", "--pub", "k.pub"]);
        assert_eq!(c, 1, "{v}");
        for args in [
            vec!["prove", "log.jsonl", "--seq", "1"],
            vec!["prove", "log.jsonl", "--seq", "5"],
            vec!["prove", "log.jsonl", "--consistency-from", "2"],
            vec!["prove", "log.jsonl", "--consistency-from", "40"],
            vec!["receipt", "log.jsonl", "--seq", "1"],
            vec!["receipt", "log.jsonl", "--seq", "5"],
        ] {
            let o = w.run(&args);
            no_panic(&o, &format!("{args:?}"));
            assert!(
                [1, 2].contains(&code(&o)),
                "{args:?} claimed {claimed}: {}",
                both(&o)
            );
        }
    }
}

#[test]
fn prove_receipt_and_anchor_refuse_logs_that_verify_rejects() {
    let w = simple(4);
    let log = w.path("log.jsonl");
    // A second checkpoint whose record seq differs from its note's size.
    let note = sign_tree(&log, O, 3, &[&w.signer("k")]);
    append_forged(&log, O, "checkpoint", &json!({ "note": note }));
    let (c, v, _) = w.verify_json(&["log.jsonl", "--pub", "k.pub"]);
    assert_eq!((c, reason(&v).as_str()), (1, "bad_checkpoint"), "{v}");
    std::fs::create_dir(w.path("worm")).unwrap();
    let target = format!("dir:{}", w.path("worm").display());
    for args in [
        vec!["prove", "log.jsonl", "--seq", "1"],
        vec!["prove", "log.jsonl", "--consistency-from", "2"],
        vec!["receipt", "log.jsonl", "--seq", "1"],
        vec!["anchor", "log.jsonl", "--key", "k", "--to", &target],
        vec!["anchor", "verify", "log.jsonl", "--pub", "k.pub"],
    ] {
        let o = w.run(&args);
        no_panic(&o, &format!("{args:?}"));
        assert_ne!(code(&o), 0, "{args:?}: {}", both(&o));
    }
    // A forged checkpoint with a wrong root (a fork inside the log).
    let w = simple(4);
    let log = w.path("log.jsonl");
    w.append("log.jsonl", "k", 1);
    let text = checkpoint_text(&log, O, 6, &[]);
    let bad_root = checkpoint_text(&log, O, 3, &[]);
    let root_line = bad_root.lines().nth(2).unwrap();
    let text = text.replacen(text.lines().nth(2).unwrap(), root_line, 1);
    let note = vouch::note::sign(&text, &[&w.signer("k")]).unwrap();
    append_forged(&log, O, "checkpoint", &json!({ "note": note }));
    let (c, v, _) = w.verify_json(&["log.jsonl", "--pub", "k.pub"]);
    assert_eq!((c, reason(&v).as_str()), (1, "fork"), "{v}");
    for args in [
        vec!["prove", "log.jsonl", "--seq", "1"],
        vec!["prove", "log.jsonl", "--consistency-from", "2"],
        vec!["receipt", "log.jsonl", "--seq", "1"],
    ] {
        let o = w.run(&args);
        no_panic(&o, &format!("{args:?}"));
        assert_ne!(code(&o), 0, "{args:?}: {}", both(&o));
    }
}

type Edit = fn(&mut Value);

fn state_edits() -> Vec<(&'static str, Edit)> {
    vec![
        ("segment index", |l| l["ranges"][0]["segment"] = json!(99)),
        ("range end past the segment", |l| {
            l["ranges"][0]["end"] = json!(u64::MAX)
        }),
        ("range start after end", |l| {
            l["ranges"][0]["start"] = json!(900);
            l["ranges"][0]["end"] = json!(10);
        }),
        ("segment length past the file", |l| {
            l["segments"][0]["len"] = json!(1u64 << 40)
        }),
        ("no segments", |l| l["segments"] = json!([])),
        ("no ranges", |l| l["ranges"] = json!([])),
        ("records huge", |l| l["records"] = json!(1u64 << 53)),
        ("records zero", |l| l["records"] = json!(0)),
        ("lines huge", |l| {
            l["segments"][0]["lines"] = json!(u64::MAX)
        }),
        ("cursor past the ranges", |l| {
            l["recheck_cursor"] = json!(u64::MAX)
        }),
        ("covered above records", |l| l["covered"] = json!(u64::MAX)),
        ("tree too long", |l| {
            let t = l["tree"][0].clone();
            l["tree"] = json!(vec![t; 70]);
        }),
        ("tree empty", |l| l["tree"] = json!([])),
        ("digest garbage", |l| {
            l["ranges"][0]["digest"] = json!(["zz"])
        }),
        ("first_seq huge", |l| {
            l["ranges"][0]["first_seq"] = json!(u64::MAX)
        }),
        ("last_leaf garbage", |l| l["last_leaf"] = json!("x")),
        ("rotation garbage", |l| {
            l["rotations"] = json!([{"note": "x", "new_key": "y"}])
        }),
        ("first_seq near 2^64 on a later range", |l| {
            let n = l["ranges"].as_array().unwrap().len();
            l["ranges"][n - 1]["first_seq"] = json!(u64::MAX - 1);
        }),
        ("lines huge on a range", |l| {
            l["ranges"][0]["lines"] = json!(u64::MAX)
        }),
    ]
}

/// Runs every edit in `names` (all when empty): (panicked, accepted).
fn run_state_edits(names: &[&str]) -> (Vec<String>, Vec<String>) {
    let mut panicked = Vec::new();
    // An in-place edit of old data is caught at once only with --recheck
    // all (rolling catches it within as many runs as ranges, by design).
    let mut accepted = Vec::new();
    for (what, edit) in state_edits() {
        if !names.is_empty() && !names.contains(&what) {
            continue;
        }
        for recheck in ["rolling", "all"] {
            let w = simple(6);
            let args = [
                "verify",
                "log.jsonl",
                "--pub",
                "k.pub",
                "--state",
                "st.json",
                "--recheck",
                recheck,
            ];
            w.ok(&args);
            w.append("log.jsonl", "k", 2);
            w.checkpoint("log.jsonl", "k");
            edit_state(&w, |st| edit(&mut st["logs"][O]));
            let o = w.run(&args);
            if ![0, 1, 2].contains(&code(&o)) {
                panicked.push(format!("{what} (--recheck {recheck}): {}", both(&o)));
                continue;
            }
            // Tampered on top of the edited state: never accepted.
            let t = w.read("log.jsonl");
            w.write("log.jsonl", t.replacen("{\"i\":1}", "{\"i\":7}", 1));
            let o = w.run(&args);
            if ![0, 1, 2].contains(&code(&o)) {
                panicked.push(format!(
                    "{what} (--recheck {recheck}, tampered): {}",
                    both(&o)
                ));
            } else if code(&o) == 0 && recheck == "all" {
                accepted.push(format!("{what} (--recheck {recheck})"));
            }
        }
    }
    (panicked, accepted)
}

/// Hand-edited state files whose problems are handled: no panic, and a log
/// tampered on top is never accepted.
#[test]
fn state_with_out_of_range_indices_does_not_panic() {
    let bugs = [PANICS, ACCEPTS].concat();
    let names: Vec<&str> = state_edits()
        .into_iter()
        .map(|e| e.0)
        .filter(|n| !bugs.contains(n))
        .collect();
    let (panicked, accepted) = run_state_edits(&names);
    assert!(panicked.is_empty(), "panics: {panicked:#?}");
    assert!(
        accepted.is_empty(),
        "tampered log accepted after state edits: {accepted:?}"
    );
}

const PANICS: &[&str] = &["first_seq huge", "first_seq near 2^64 on a later range"];
const ACCEPTS: &[&str] = &["no ranges"];

// Regression (found by attacking the first version of this issue): a range whose `first_seq` is near 2^64 passes the state's
// well-formedness check; the re-check then computes `first_seq + lines - 1`
// unchecked (src/chain/incremental.rs:210, recheck_failure) and a debug
// build panics with "attempt to add with overflow" (exit 101), with
// --recheck rolling and all. A release build wraps silently.
#[test]

fn state_with_a_huge_first_seq_does_not_panic() {
    let (panicked, accepted) = run_state_edits(PANICS);
    assert!(panicked.is_empty(), "panics: {panicked:#?}");
    assert!(accepted.is_empty(), "{accepted:?}");
}

// Regression (found by attacking the first version of this issue): a state whose `ranges` list was emptied still passes the
// well-formedness check (the ranges' lines are not required to add up to
// the records), so the already-verified part has no digest left to
// re-check: an in-place edit of an old record (same inode) is accepted
// (exit 0) even with --recheck all, run after run. The state file is the
// auditor's own record, so this needs write access to it; still, "all"
// re-checks nothing.
#[test]

fn state_with_no_ranges_still_catches_an_in_place_edit_with_recheck_all() {
    let (panicked, accepted) = run_state_edits(ACCEPTS);
    assert!(panicked.is_empty(), "panics: {panicked:#?}");
    assert!(accepted.is_empty(), "tampered log accepted: {accepted:?}");
}

// --------------------------------------------------------------- 12. FIFOs

#[test]
fn a_fifo_given_as_a_log_returns_promptly_and_is_refused() {
    let w = simple(2);
    let fifo = w.path("fifo.jsonl");
    let st = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(st.success());
    let o = vouch_timeout(
        &["verify", "fifo.jsonl", "--pub", "k.pub", "--format", "json"],
        w.p(),
        Duration::from_secs(20),
    );
    no_panic(&o, "fifo");
    assert_eq!(code(&o), 2, "{}", both(&o));
    assert!(both(&o).contains("not a regular file"), "{}", both(&o));
    // Beside a log, in a walk.
    let o = vouch_timeout(
        &["verify", ".", "--pub", "k.pub", "--format", "json"],
        w.p(),
        Duration::from_secs(20),
    );
    assert_eq!(code(&o), 2, "{}", both(&o));
    assert!(both(&o).contains("not a regular file"), "{}", both(&o));
    // Through a symlink.
    std::os::unix::fs::symlink(&fifo, w.path("link.jsonl")).unwrap();
    let o = vouch_timeout(
        &["verify", "link.jsonl", "--pub", "k.pub"],
        w.p(),
        Duration::from_secs(20),
    );
    assert_eq!(code(&o), 2, "{}", both(&o));
    // The commands that read a log.
    for args in [
        vec!["prove", "fifo.jsonl", "--seq", "0"],
        vec!["receipt", "fifo.jsonl", "--seq", "0"],
        vec!["anchor", "verify", "fifo.jsonl", "--pub", "k.pub"],
        vec!["append", "fifo.jsonl", "--key", "k", "{}"],
        vec!["checkpoint", "fifo.jsonl", "--key", "k"],
    ] {
        let o = vouch_timeout(&args, w.p(), Duration::from_secs(20));
        no_panic(&o, &format!("{args:?}"));
        assert_ne!(code(&o), 0, "{args:?}: {}", both(&o));
    }
}

// --------------------------------------------------------- other attacks

#[test]
fn state_another_origins_log_at_a_pinned_path_is_missing_log() {
    let w = simple(4);
    w.keygen("example.com/intruder", "ki");
    w.write(
        "keys.pub",
        format!("{}{}", w.read("k.pub"), w.read("ki.pub")),
    );
    w.ok(&[
        "verify",
        "log.jsonl",
        "--pub",
        "keys.pub",
        "--state",
        "st.json",
    ]);
    std::fs::remove_file(w.path("log.jsonl")).unwrap();
    w.append("log.jsonl", "ki", 6);
    w.checkpoint("log.jsonl", "ki");
    for strict in [false, true] {
        let mut args = vec!["log.jsonl", "--pub", "keys.pub", "--state", "st.json"];
        if strict {
            args.push("--strict");
        }
        let v = expect_rejected(&w, &args, "intruder");
        assert!(reasons(&v).contains(&"missing_log".to_owned()), "{v}");
    }
}

#[test]
fn state_a_pinned_log_renamed_elsewhere_with_history_rewritten_is_caught() {
    let w = simple(8);
    std::fs::create_dir(w.path("d")).unwrap();
    std::fs::rename(w.path("log.jsonl"), w.path("d/log.jsonl")).unwrap();
    w.ok(&["verify", "d", "--pub", "k.pub", "--state", "st.json"]);
    // The key holder writes a new log of the same origin under another name
    // and removes the pinned one.
    std::fs::remove_file(w.path("d/log.jsonl")).unwrap();
    for i in 0..9 {
        w.ok(&[
            "append",
            "d/new.jsonl",
            "--key",
            "k",
            &format!("{{\"n\":{i}}}"),
        ]);
    }
    w.checkpoint("d/new.jsonl", "k");
    let v = expect_rejected(
        &w,
        &["d", "--pub", "k.pub", "--state", "st.json"],
        "renamed rewrite",
    );
    assert!(reasons(&v).contains(&"fork".to_owned()), "{v}");
}

#[test]
fn auditor_checkpoint_signed_by_an_attacker_key_named_after_the_origin_is_rejected() {
    let w = simple(4);
    let katt = w.keygen(O, "katt");
    let log = w.path("log.jsonl");
    // Same tree: the note is right about the log, but katt is not trusted.
    w.write("att.note", sign_tree(&log, O, 5, &[&katt]));
    let v = expect_rejected(
        &w,
        &["log.jsonl", "--pub", "k.pub", "--checkpoint", "att.note"],
        "attacker note",
    );
    assert_eq!(reason(&v), "unknown_key", "{v}");
}

/// Two different keys with the same name and key ID (a 32-bit birthday
/// collision, found by generating keys) given together are refused with
/// exit 2 by every command, never resolved by picking one.
#[test]
fn two_different_keys_with_the_same_name_and_id_are_refused() {
    let mut seen: std::collections::HashMap<u32, u64> = Default::default();
    let mut pair = None;
    for n in 0u64..2_000_000 {
        let mut seed = [0u8; 32];
        seed[..8].copy_from_slice(&n.to_le_bytes());
        let k = SignerKey::from_seed(O, &seed).unwrap();
        if let Some(&m) = seen.get(&k.key_id()) {
            let mut s2 = [0u8; 32];
            s2[..8].copy_from_slice(&m.to_le_bytes());
            pair = Some((SignerKey::from_seed(O, &s2).unwrap(), k));
            break;
        }
        seen.insert(k.key_id(), n);
    }
    let (a, b) = pair.expect("a key ID collision");
    assert_eq!(a.key_id(), b.key_id());
    assert_ne!(a.verifier().public_key(), b.verifier().public_key());
    let w = Work::new();
    w.write("a", format!("{}\n", a.to_text()));
    w.write("a.pub", format!("{}\n", a.verifier().to_text()));
    w.write("b.pub", format!("{}\n", b.verifier().to_text()));
    w.append("log.jsonl", "a", 3);
    w.checkpoint("log.jsonl", "a");
    w.ok(&["prove", "log.jsonl", "--seq", "1", "--out", "p"]);
    w.write("rec", line_of(&w.path("log.jsonl"), 1));
    w.ok(&["receipt", "log.jsonl", "--seq", "1", "--out", "r.json"]);
    w.write("cp", sign_tree(&w.path("log.jsonl"), O, 4, &[&a]));
    w.write(
        "both.pub",
        format!("{}{}", w.read("b.pub"), w.read("a.pub")),
    );
    for keys in [
        vec!["--pub", "a.pub", "--pub", "b.pub"],
        vec!["--pub", "both.pub"],
    ] {
        for cmd in [
            vec!["verify", "log.jsonl"],
            vec!["verify", "log.jsonl", "--checkpoint", "cp"],
            vec!["verify-proof", "p", "--record", "rec"],
            vec!["receipt", "verify", "r.json", "--allow-unanchored"],
            vec!["anchor", "verify", "log.jsonl"],
        ] {
            let mut args = cmd.clone();
            args.extend(&keys);
            let o = w.run(&args);
            no_panic(&o, "conflict");
            assert_eq!(code(&o), 2, "{args:?}: {}", both(&o));
        }
    }
}

// Regression (found by attacking the first version of this issue): `vouch repair fifo.jsonl` (a FIFO with no writer) exits 0 saying
// "ends with a complete record; nothing removed"; every other command that
// reads or writes a log refuses a non-regular file. Low severity (repair
// claims nothing about the evidence), but it reports on a file it refuses
// nowhere else.
#[test]

fn repair_refuses_a_fifo() {
    let w = simple(2);
    let fifo = w.path("fifo.jsonl");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let o = vouch_timeout(&["repair", "fifo.jsonl"], w.p(), Duration::from_secs(20));
    no_panic(&o, "repair fifo");
    assert_ne!(code(&o), 0, "{}", both(&o));
}

#[test]
#[ignore = "diagnostic: lists every state edit that panics or accepts a tampered log"]
fn state_edits_diagnostic() {
    let (panicked, accepted) = run_state_edits(&[]);
    eprintln!("PANICKED:");
    for p in &panicked {
        eprintln!(
            "  {}",
            p.lines().take(12).collect::<Vec<_>>().join("\n    ")
        );
    }
    eprintln!("ACCEPTED: {accepted:#?}");
}

/// Issue 9's first anchor defect, pinned here because it is a trust-path
/// question: an anchor record copied from log B into log A (appending it
/// needs no key) must not make `anchor verify` vouch for A.
#[test]
fn an_anchor_record_copied_from_another_log_proves_nothing() {
    let w = Work::new();
    w.keygen("example.com/a", "ka");
    w.keygen("example.com/b", "kb");
    std::fs::write(
        w.path("fleet.pub"),
        format!("{}{}", w.read("ka.pub"), w.read("kb.pub")),
    )
    .unwrap();
    std::fs::create_dir(w.path("worm")).unwrap();
    let target = format!("dir:{}", w.path("worm").display());
    w.append("a.jsonl", "ka", 3);
    w.append("b.jsonl", "kb", 3);
    w.ok(&["anchor", "b.jsonl", "--key", "kb", "--to", &target]);
    w.ok(&["checkpoint", "a.jsonl", "--key", "ka"]);
    // B's anchor record body, appended to A by hand.
    let b_anchor = w
        .read("b.jsonl")
        .lines()
        .find(|l| l.contains("\"kind\":\"anchor\""))
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["body"].clone())
        .unwrap();
    append_forged(&w.path("a.jsonl"), "example.com/a", "anchor", &b_anchor);
    let o = w.run(&[
        "anchor",
        "verify",
        "a.jsonl",
        "--pub",
        "fleet.pub",
        "--format",
        "json",
    ]);
    no_panic(&o, "anchor verify");
    assert_eq!(code(&o), 1, "{}", both(&o));
    assert!(stdout(&o).contains("anchor_other_log"), "{}", stdout(&o));
}

/// Issue 9: a `dir` anchor whose file name leaves the target directory is
/// rejected, never read; and unknown members inside an anchor entry are
/// refused in receipts as everywhere else.
#[test]
fn a_dir_anchor_outside_its_directory_and_unknown_anchor_members_are_rejected() {
    let w = Work::new();
    w.keygen("example.com/a", "ka");
    std::fs::create_dir(w.path("worm")).unwrap();
    let target = format!("dir:{}", w.path("worm").display());
    w.append("a.jsonl", "ka", 3);
    w.ok(&["anchor", "a.jsonl", "--key", "ka", "--to", &target]);
    w.ok(&["receipt", "a.jsonl", "--seq", "1", "--out", "r.json"]);
    // A receipt whose anchor carries a member vouch never writes.
    let mut r: Value = serde_json::from_str(&w.read("r.json")).unwrap();
    r["anchors"][0]["verified_online"] = json!(true);
    w.write("r2.json", serde_json::to_vec(&r).unwrap());
    let o = w.run(&[
        "receipt", "verify", "r2.json", "--pub", "ka.pub", "--format", "json",
    ]);
    no_panic(&o, "receipt verify");
    assert_eq!(code(&o), 1, "{}", both(&o));
    assert!(stdout(&o).contains("bad_receipt"), "{}", stdout(&o));
    // An anchor record pointing outside its directory (forged by hand: the
    // log's writer needs no key to append it).
    let text = w.read("a.jsonl");
    let mut body = text
        .lines()
        .find(|l| l.contains("\"kind\":\"anchor\""))
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["body"].clone())
        .unwrap();
    let note = w.write("stolen.note", body["note"].as_str().unwrap());
    let escape = format!("../{}", note.file_name().unwrap().to_str().unwrap());
    body["anchors"][0]["file"] = json!(escape);
    append_forged(&w.path("a.jsonl"), "example.com/a", "anchor", &body);
    let o = w.run(&[
        "anchor", "verify", "a.jsonl", "--pub", "ka.pub", "--format", "json",
    ]);
    no_panic(&o, "anchor verify");
    assert_eq!(code(&o), 1, "{}", both(&o));
    assert!(stdout(&o).contains("bad_anchor_record"), "{}", stdout(&o));
}

/// Issue 9: an anchor record anyone can append (no key needed), naming the
/// log's real checkpoint and a made-up locator, and later covered by the
/// writer's next checkpoint, goes into a receipt as what it is: a claim.
/// Offline it is "anchor claimed, not checked" (exit 1); online it is
/// followed only inside the auditor's targets; never `complete`.
#[test]
fn a_forged_anchor_record_in_a_receipt_is_a_claim_never_complete() {
    let w = Work::new();
    w.keygen("example.com/a", "ka");
    w.append("a.jsonl", "ka", 3);
    w.ok(&["checkpoint", "a.jsonl", "--key", "ka"]);
    let note = w
        .read("a.jsonl")
        .lines()
        .last()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["body"]["note"].clone())
        .unwrap();
    let note = note.as_str().unwrap().to_owned();
    let cp_lines: Vec<&str> = note.lines().collect();
    let root = {
        use base64::Engine;
        vouch::hex::encode(
            &base64::engine::general_purpose::STANDARD
                .decode(cp_lines[2])
                .unwrap(),
        )
    };
    let body = json!({
        "note": note,
        "note_sha256": vouch::anchor::record::sha256_hex(note.as_bytes()),
        "origin": "example.com/a",
        "size": 3,
        "root": root,
        "anchors": [{"type": "dir", "dir": "/nonexistent/worm", "file": format!("example.com%2Fa/{:020}-{root}.note", 3), "mode": 292, "immutable": true}],
    });
    append_forged(&w.path("a.jsonl"), "example.com/a", "anchor", &body);
    w.append("a.jsonl", "ka", 1);
    w.ok(&["checkpoint", "a.jsonl", "--key", "ka"]);
    w.ok(&["receipt", "a.jsonl", "--seq", "1", "--out", "r.json"]);
    let r: Value = serde_json::from_str(&w.read("r.json")).unwrap();
    assert_eq!(r["anchors"].as_array().unwrap().len(), 1, "{r}");
    let o = w.run(&[
        "receipt", "verify", "r.json", "--pub", "ka.pub", "--format", "json",
    ]);
    no_panic(&o, "receipt verify");
    assert_eq!(code(&o), 1, "{}", both(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["verdict"], "anchor_not_checked", "{v}");
    std::fs::create_dir(w.path("worm")).unwrap();
    let from = format!("dir:{}", w.path("worm").display());
    let o = w.run(&[
        "receipt", "verify", "r.json", "--pub", "ka.pub", "--online", "--from", &from, "--format",
        "json",
    ]);
    assert_eq!(code(&o), 1, "{}", both(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["verdict"], "anchor_not_checked", "{v}");
    assert!(stdout(&o).contains("outside_targets"), "{v}");
    // --allow-unanchored accepts what the receipt does prove (the
    // signature), and says the anchor was not checked.
    let o = w.run(&[
        "receipt",
        "verify",
        "r.json",
        "--pub",
        "ka.pub",
        "--allow-unanchored",
    ]);
    assert_eq!(code(&o), 0, "{}", both(&o));
    assert!(stdout(&o).contains("anchor claimed, not checked"));
}

/// F5 (independent attack on issue 9): a file that is not a receipt is a
/// rejection reported like any other (verdict `rejected`, `bad_receipt`,
/// exit 1), also when it is larger than any receipt can be.
#[test]
fn a_file_that_is_not_a_receipt_is_a_rejected_verdict() {
    let w = Work::new();
    w.keygen("example.com/a", "ka");
    w.write("junk.json", "{\"format\":\"vouch-receipt/2\",\"x\":1}");
    w.write("big.json", vec![b' '; (4 << 20) + 1]);
    for file in ["junk.json", "big.json"] {
        let o = w.run(&[
            "receipt", "verify", file, "--pub", "ka.pub", "--format", "json",
        ]);
        no_panic(&o, "receipt verify");
        assert_eq!(code(&o), 1, "{file}: {}", both(&o));
        let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
        assert_eq!(v["verdict"], "rejected", "{v}");
        assert_eq!(v["reason"], "bad_receipt", "{v}");
    }
    let o = w.run(&["receipt", "verify", "missing.json", "--pub", "ka.pub"]);
    assert_eq!(code(&o), 2, "{}", both(&o));
}
