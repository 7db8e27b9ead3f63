//! A cross-command trust matrix: every command that accepts a checkpoint
//! note must reach the same trust verdict on the same note, so the copies
//! of the trust rule (docs/FORMAT.md §6) can never drift apart again.
//!
//! The fixture: one fleet keyset holding the keys of logs A and B in one
//! file; log A signed by K1, rotated K1→K2, then K2→K3, ending with a
//! checkpoint by K3 at size M. Every note under test is over A's real tree
//! at size M (same size, same root), so only who signed it differs.
//!
//! What each command can know:
//! - `verify --checkpoint` and `anchor verify` read the log: they see its
//!   rotations, so they know K1 and K2 are retired at size M. They are given
//!   the auditor's original keys (K1, KB) — and, as a second run, every key
//!   A ever had (K1, K2, K3, KB): a retired key is never trusted again,
//!   whichever way it entered.
//! - `verify-proof`, `verify-consistency` and `receipt verify` are offline:
//!   they only know the keys given, not the log's rotations. They are given
//!   the keys an auditor holds for a rotated log: its current key K3 (and
//!   KB). Given a retired key explicitly, they cannot know it was retired
//!   (they say so: `not_checked: later_key_rotations`); that limit is
//!   documented, not part of the matrix.
//!
//! What they must agree on: accepted exactly for the cases marked accepted
//! below, rejected (never exit 0) for all others.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod soundness_support;
mod support;

use serde_json::Value;
use soundness_support::*;
use vouch::note::SignerKey;

const A: &str = "example.com/matrix-a";
const B: &str = "example.com/matrix-b";

struct Fleet {
    w: Work,
    k1: SignerKey,
    k2: SignerKey,
    k3: SignerKey,
    kb: SignerKey,
    /// A key named after A's origin that no one trusts or introduced.
    kx: SignerKey,
    /// Size of A's last checkpoint (the tree every note is over).
    m: u64,
}

fn fleet() -> Fleet {
    let w = Work::new();
    let k1 = w.keygen(A, "k1");
    let k2 = w.keygen(A, "k2");
    let k3 = w.keygen(A, "k3");
    let kb = w.keygen(B, "kb");
    let kx = w.keygen(A, "kx");
    w.append("a.jsonl", "k1", 3);
    w.checkpoint("a.jsonl", "k1");
    w.rotate("a.jsonl", "k1", "k2");
    w.append("a.jsonl", "k2", 2);
    w.checkpoint("a.jsonl", "k2");
    w.rotate("a.jsonl", "k2", "k3");
    w.append("a.jsonl", "k3", 2);
    w.checkpoint("a.jsonl", "k3");
    // Log B, in the same fleet.
    w.append("b.jsonl", "kb", 2);
    w.checkpoint("b.jsonl", "kb");
    let pubs =
        |names: &[&str]| -> String { names.iter().map(|n| w.read(&format!("{n}.pub"))).collect() };
    // The auditor's fleet keyset: A's original key and B's key, one file.
    w.write("fleet.pub", pubs(&["k1", "kb"]));
    // Every key A ever had, and B's.
    w.write("fleet-all.pub", pubs(&["k1", "k2", "k3", "kb"]));
    // What an auditor holds for the rotated log A offline: its current key.
    w.write("offline.pub", pubs(&["k3", "kb"]));
    let m = leaves(&w.path("a.jsonl")).len() as u64 - 1;
    // The fixture really is what it claims.
    let (c, v, o) = w.verify_json(&["a.jsonl", "b.jsonl", "--pub", "fleet.pub"]);
    assert_eq!(c, 0, "{}", both(&o));
    assert_eq!(row(&v, A)["status"], "valid");
    let last: Value = serde_json::from_str(&line_of(&w.path("a.jsonl"), m as usize)).unwrap();
    assert_eq!(last["kind"], "checkpoint");
    Fleet {
        w,
        k1,
        k2,
        k3,
        kb,
        kx,
        m,
    }
}

struct Case {
    name: &'static str,
    note: String,
    /// Extra arguments to add to the key arguments (a key given twice).
    extra_online: Vec<String>,
    extra_offline: Vec<String>,
    accept: bool,
}

fn cases(f: &Fleet) -> Vec<Case> {
    let log = f.w.path("a.jsonl");
    let sign = |signers: &[&SignerKey]| sign_tree(&log, A, f.m, signers);
    let case = |name, note, accept| Case {
        name,
        note,
        extra_online: Vec::new(),
        extra_offline: Vec::new(),
        accept,
    };
    let genuine = sign(&[&f.k3]);
    let mut twice = case("(5) same key given twice", genuine.clone(), true);
    twice.extra_online = ["--pub", "k1.pub", "--pub", "fleet.pub"]
        .map(String::from)
        .to_vec();
    twice.extra_offline = ["--pub", "k3.pub", "--pub", "offline.pub"]
        .map(String::from)
        .to_vec();
    let rotation_ext = format!("vouch-key-rotation {}", f.kx.verifier().to_text());
    vec![
        case("(1) current key", genuine.clone(), true),
        case("(2) only another log's key", sign(&[&f.kb]), false),
        case("(3) only a retired key (K1)", sign(&[&f.k1]), false),
        case("(4) rotated in then out (K2)", sign(&[&f.k2]), false),
        twice,
        case(
            "(6) current + retired cosigner",
            sign(&[&f.k3, &f.k1]),
            true,
        ),
        case(
            "(6b) retired + current cosigner",
            sign(&[&f.k2, &f.k3]),
            true,
        ),
        case(
            "(7) current + unknown extra signer",
            sign(&[&f.k3, &f.kx]),
            true,
        ),
        case(
            "(7b) current + another log's key",
            sign(&[&f.kb, &f.k3]),
            true,
        ),
        case(
            "(8) another origin (B's key, A's size and root)",
            {
                let text = checkpoint_text(&log, A, f.m, &[]).replacen(A, B, 1);
                vouch::note::sign(&text, &[&f.kb]).unwrap()
            },
            false,
        ),
        case(
            "(9) bad signature by the current key, good retired one",
            corrupt_signature(&sign(&[&f.k3, &f.k1]), &f.k3),
            false,
        ),
        case(
            "(10) good current key, bad signature by a retired key",
            corrupt_signature(&sign(&[&f.k3, &f.k1]), &f.k1),
            true,
        ),
        case(
            "(11) only an unknown key named after A",
            sign(&[&f.kx]),
            false,
        ),
        case(
            "(12) plain note carrying a rotation extension line, current key",
            vouch::note::sign(
                &checkpoint_text(&log, A, f.m, &[rotation_ext]),
                &[&f.k3, &f.kx],
            )
            .unwrap(),
            true,
        ),
        case(
            "(13) duplicate signature lines",
            {
                let n = sign(&[&f.k3]);
                let sig = n.lines().last().unwrap().to_owned();
                format!("{n}{sig}\n")
            },
            false,
        ),
        case(
            "(14) current key's signature over other text",
            {
                // K3's signature line taken from a note of another size.
                let other = sign_tree(&log, A, f.m - 1, &[&f.k3]);
                let sig = other.lines().last().unwrap();
                let n = sign(&[&f.k1]);
                format!("{}{sig}\n", n)
            },
            false,
        ),
    ]
}

/// One command's verdict on one note: (accepted, exit code, output).
type Verdict = (bool, i32, String);

fn verdict(o: &std::process::Output) -> Verdict {
    no_panic(o, "command");
    (code(o) == 0, code(o), both(o))
}

fn args<'a>(base: &[&'a str], keys: &'a [String]) -> Vec<&'a str> {
    let mut v = base.to_vec();
    v.extend(keys.iter().map(String::as_str));
    v
}

fn key_args(file: &str, extra: &[String]) -> Vec<String> {
    let mut v = vec!["--pub".to_owned(), file.to_owned()];
    v.extend_from_slice(extra);
    v
}

/// `vouch verify a.jsonl --checkpoint NOTE`.
fn by_verify(f: &Fleet, i: usize, c: &Case, keyfile: &str) -> Verdict {
    let note = f.w.write(&format!("verify-{i}.note"), &c.note);
    let keys = key_args(keyfile, &c.extra_online);
    let o = f.w.run(&args(
        &[
            "verify",
            "a.jsonl",
            "--format",
            "json",
            "--checkpoint",
            note.to_str().unwrap(),
        ],
        &keys,
    ));
    verdict(&o)
}

/// `vouch anchor verify a.jsonl --from dir:D` with the note as the only
/// object in A's folder of the anchor directory.
fn by_anchor_verify(f: &Fleet, i: usize, c: &Case, keyfile: &str) -> Verdict {
    let dir = f.w.path(&format!("anchors-{keyfile}-{i}"));
    let folder = dir.join(vouch::anchor::dir::escape_origin(A));
    std::fs::create_dir_all(&folder).unwrap();
    // Under the content-addressed name vouch gives the checkpoint the
    // note claims (any other name is a bad_listed_object, issue 21).
    let name = vouch::note::parse(c.note.as_bytes())
        .ok()
        .and_then(|n| vouch::note::checkpoint::parse(&n.text).ok())
        .map(|cp| format!("{:020}-{}.note", cp.size, vouch::hex::encode(&cp.root)))
        .unwrap_or_else(|| format!("{:020}-{}.note", f.m, "0".repeat(64)));
    std::fs::write(folder.join(name), &c.note).unwrap();
    let from = format!("dir:{}", dir.display());
    let keys = key_args(keyfile, &c.extra_online);
    let o = f.w.run(&args(
        &[
            "anchor", "verify", "a.jsonl", "--from", &from, "--format", "json",
        ],
        &keys,
    ));
    verdict(&o)
}

/// `vouch anchor verify` of a copy of A with an anchor record appended (as
/// anyone who can write the file can) naming the note, whose object sits
/// in the auditor's directory: the recorded note counts exactly when the
/// trust rule says so.
fn by_anchor_record(f: &Fleet, i: usize, c: &Case, keyfile: &str) -> Verdict {
    let dir = f.w.path(&format!("rec-anchors-{keyfile}-{i}"));
    let folder_name = vouch::anchor::dir::escape_origin(A);
    let root = checkpoint_text(&f.w.path("a.jsonl"), A, f.m, &[])
        .lines()
        .nth(2)
        .map(|b64| {
            use base64::Engine;
            vouch::hex::encode(
                &base64::engine::general_purpose::STANDARD
                    .decode(b64)
                    .unwrap(),
            )
        })
        .unwrap();
    let file = format!("{folder_name}/{:020}-{root}.note", f.m);
    std::fs::create_dir_all(dir.join(&folder_name)).unwrap();
    std::fs::write(dir.join(&file), &c.note).unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.join(&file), std::fs::Permissions::from_mode(0o444)).unwrap();
    }
    let copy = f.w.path(&format!("a-rec-{keyfile}-{i}.jsonl"));
    std::fs::copy(f.w.path("a.jsonl"), &copy).unwrap();
    let body = serde_json::json!({
        "note": c.note,
        "note_sha256": vouch::anchor::record::sha256_hex(c.note.as_bytes()),
        "origin": A,
        "size": f.m,
        "root": root,
        "anchors": [{"type": "dir", "dir": dir.to_str().unwrap(), "file": file, "mode": 292, "immutable": false}],
    });
    append_forged(&copy, A, "anchor", &body);
    // The writer's next checkpoint covers it (an uncovered anchor record
    // is a claim only, whatever its note).
    f.w.ok(&["checkpoint", copy.to_str().unwrap(), "--key", "k3"]);
    let from = format!("dir:{}", dir.display());
    let keys = key_args(keyfile, &c.extra_online);
    let o = f.w.run(&args(
        &[
            "anchor",
            "verify",
            copy.to_str().unwrap(),
            "--from",
            &from,
            "--format",
            "json",
        ],
        &keys,
    ));
    verdict(&o)
}

/// `vouch verify-proof` of record 2 with the note as the proof's checkpoint.
fn by_verify_proof(f: &Fleet, i: usize, c: &Case, keyfile: &str) -> Verdict {
    let log = f.w.path("a.jsonl");
    let proof =
        f.w.write(&format!("p-{i}"), tlog_proof(&log, 2, f.m, &c.note));
    let rec = f.w.write(&format!("rec-{i}"), line_of(&log, 2));
    let keys = key_args(keyfile, &c.extra_offline);
    let o = f.w.run(&args(
        &[
            "verify-proof",
            proof.to_str().unwrap(),
            "--record",
            rec.to_str().unwrap(),
            "--format",
            "json",
        ],
        &keys,
    ));
    verdict(&o)
}

/// `vouch verify-consistency` with the note as the newer checkpoint (from a
/// genuine older one at size 3).
fn by_consistency_new(f: &Fleet, i: usize, c: &Case, keyfile: &str) -> Verdict {
    let log = f.w.path("a.jsonl");
    let old =
        f.w.write("old-genuine.note", sign_tree(&log, A, 3, &[&f.k3]));
    let proof =
        f.w.write(&format!("cn-{i}"), consistency_proof(&log, 3, f.m, &c.note));
    let keys = key_args(keyfile, &c.extra_offline);
    let o = f.w.run(&args(
        &[
            "verify-consistency",
            proof.to_str().unwrap(),
            "--old",
            old.to_str().unwrap(),
            "--format",
            "json",
        ],
        &keys,
    ));
    verdict(&o)
}

/// `vouch verify-consistency` with the note as the older checkpoint kept by
/// the auditor (to a genuine newer one over every record).
fn by_consistency_old(f: &Fleet, i: usize, c: &Case, keyfile: &str) -> Verdict {
    let log = f.w.path("a.jsonl");
    let all = f.m + 1;
    let new = sign_tree(&log, A, all, &[&f.k3]);
    let proof =
        f.w.write(&format!("co-{i}"), consistency_proof(&log, f.m, all, &new));
    let old = f.w.write(&format!("co-old-{i}.note"), &c.note);
    let keys = key_args(keyfile, &c.extra_offline);
    let o = f.w.run(&args(
        &[
            "verify-consistency",
            proof.to_str().unwrap(),
            "--old",
            old.to_str().unwrap(),
            "--format",
            "json",
        ],
        &keys,
    ));
    verdict(&o)
}

/// `vouch receipt verify` of a receipt for record 2 whose checkpoint was
/// replaced by the note.
fn by_receipt(f: &Fleet, i: usize, c: &Case, keyfile: &str) -> Verdict {
    let base = f.w.path("receipt-base.json");
    if !base.exists() {
        f.w.ok(&[
            "receipt",
            "a.jsonl",
            "--seq",
            "2",
            "--out",
            base.to_str().unwrap(),
        ]);
    }
    let mut doc: Value = serde_json::from_slice(&std::fs::read(&base).unwrap()).unwrap();
    assert_eq!(doc["proof"]["tree_size"], f.m);
    doc["checkpoint"] = Value::String(c.note.clone());
    let r = f.w.write(
        &format!("receipt-{i}.json"),
        serde_json::to_vec_pretty(&doc).unwrap(),
    );
    let keys = key_args(keyfile, &c.extra_offline);
    let o = f.w.run(&args(
        &[
            "receipt",
            "verify",
            r.to_str().unwrap(),
            "--allow-unanchored",
            "--format",
            "json",
        ],
        &keys,
    ));
    verdict(&o)
}

type Command = fn(&Fleet, usize, &Case, &str) -> Verdict;

#[test]
fn every_command_reaches_the_same_trust_verdict_on_the_same_note() {
    let f = fleet();
    let commands: Vec<(&str, Command, &str)> = vec![
        ("verify --checkpoint (fleet keys)", by_verify, "fleet.pub"),
        (
            "verify --checkpoint (all of A's keys)",
            by_verify,
            "fleet-all.pub",
        ),
        (
            "anchor verify --from (fleet keys)",
            by_anchor_verify,
            "fleet.pub",
        ),
        (
            "anchor verify --from (all of A's keys)",
            by_anchor_verify,
            "fleet-all.pub",
        ),
        (
            "anchor verify, recorded note (fleet keys)",
            by_anchor_record,
            "fleet.pub",
        ),
        (
            "anchor verify, recorded note (all of A's keys)",
            by_anchor_record,
            "fleet-all.pub",
        ),
        ("verify-proof (current key)", by_verify_proof, "offline.pub"),
        (
            "verify-consistency, note as newer (current key)",
            by_consistency_new,
            "offline.pub",
        ),
        (
            "verify-consistency, note as older (current key)",
            by_consistency_old,
            "offline.pub",
        ),
        ("receipt verify (current key)", by_receipt, "offline.pub"),
    ];
    let mut wrong = Vec::new();
    let mut table = String::new();
    for (i, c) in cases(&f).iter().enumerate() {
        for (name, run, keys) in &commands {
            let (accepted, exit, out) = run(&f, i, c, keys);
            table.push_str(&format!("{:<64} {:<52} exit {exit}\n", c.name, name));
            if accepted != c.accept {
                wrong.push(format!(
                    "{} / {name}: expected {}, got exit {exit}\n{out}",
                    c.name,
                    if c.accept { "accepted" } else { "rejected" }
                ));
            }
        }
    }
    eprintln!("{table}");
    assert!(
        wrong.is_empty(),
        "trust verdicts drifted:\n{table}\n{}",
        wrong.join("\n\n")
    );
}

/// The offline commands cannot see rotations; they say so in every report,
/// accepted or not.
#[test]
fn offline_commands_say_later_rotations_are_not_checked() {
    let f = fleet();
    let c = &cases(&f)[0];
    for run in [by_verify_proof, by_consistency_new, by_receipt] {
        let (ok, _, out) = run(&f, 900, c, "offline.pub");
        assert!(ok, "{out}");
        assert!(out.contains("later_key_rotations"), "{out}");
    }
    let retired = &cases(&f)[2];
    let (ok, _, out) = by_verify_proof(&f, 901, retired, "offline.pub");
    assert!(!ok, "{out}");
    assert!(out.contains("later_key_rotations"), "{out}");
}

/// The same verdicts hold when the log is verified with the note as an
/// incremental run's input: the state's replayed rotations retire K1 and
/// K2 exactly as a full run does.
#[test]
fn verify_with_state_reaches_the_same_verdicts_as_a_full_run() {
    let f = fleet();
    let st = f.w.path("st.json");
    let st_s = st.to_str().unwrap().to_owned();
    f.w.ok(&["verify", "a.jsonl", "--pub", "fleet.pub", "--state", &st_s]);
    for (i, c) in cases(&f).iter().enumerate() {
        let note = f.w.write(&format!("st-{i}.note"), &c.note);
        let mut a = vec![
            "verify",
            "a.jsonl",
            "--format",
            "json",
            "--pub",
            "fleet.pub",
            "--state",
            &st_s,
            "--checkpoint",
            note.to_str().unwrap(),
        ];
        a.extend(c.extra_online.iter().map(String::as_str));
        let o = f.w.run(&a);
        no_panic(&o, c.name);
        assert_eq!(
            code(&o) == 0,
            c.accept,
            "{} with --state: {}",
            c.name,
            both(&o)
        );
    }
}

/// Anchor records written by `vouch anchor` with the current (rotated-in)
/// key, checked by `anchor verify` with the auditor's original keys: the
/// recorded note counts exactly as the log's own checkpoint does.
// Regression (found by attacking the first version of this issue): `anchor verify` checks each anchor record's note with the given
// keys only (check_recorded → trust::open_standalone) instead of the log's
// trust state, so a genuine anchor signed by the current, rotated-in key K3
// is rejected (exit 1, bad_anchor_note) with the auditor's keys (K1, KB),
// while `verify` accepts the same log and `anchor verify --from` accepts the
// same note when it is found by listing. A drifted copy of the trust rule
// (a false reject, not a false accept).
#[test]

fn anchor_records_signed_by_a_rotated_in_key_are_judged_like_the_log() {
    let f = fleet();
    let d = f.w.path("worm");
    std::fs::create_dir(&d).unwrap();
    let target = format!("dir:{}", d.display());
    f.w.ok(&["anchor", "a.jsonl", "--key", "k3", "--to", &target]);
    let (c, v, o) = f.w.verify_json(&["a.jsonl", "--pub", "fleet.pub"]);
    // Valid: the anchor record is covered by the checkpoint after it.
    assert_eq!(c, 0, "{}", both(&o));
    assert_eq!(row(&v, A)["failure"], Value::Null, "{}", both(&o));
    let o = f.w.run(&[
        "anchor",
        "verify",
        "a.jsonl",
        "--pub",
        "fleet.pub",
        "--from",
        &target,
        "--format",
        "json",
    ]);
    no_panic(&o, "anchor verify");
    // Would fail if anchor verify checks the recorded note against the given
    // keys only (open_standalone) instead of the log's trust state: a
    // genuine anchor by the current key would be rejected while `verify`
    // accepts the same log and note.
    assert_eq!(code(&o), 0, "{}", both(&o));
    // With every key of A given, still accepted.
    let o = f.w.run(&[
        "anchor",
        "verify",
        "a.jsonl",
        "--pub",
        "fleet-all.pub",
        "--from",
        &target,
    ]);
    assert_eq!(code(&o), 0, "{}", both(&o));
}
