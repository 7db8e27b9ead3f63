//! Issue 9: `vouch anchor verify` looks only where the auditor says, claims
//! only what it checked, keeps going past bad listing entries, follows S3
//! pagination, reads rotated segments and directories, and with `--state`
//! downloads only what is new. Real peers: the local file system and
//! moto's Object Lock S3 server (`.venv`, scripts/setup-test-env.sh).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod anchor_support;
mod support;
mod tsa_support;

use anchor_support::*;
use serde_json::{Value, json};

fn dir_target(w: &Work, name: &str) -> (std::path::PathBuf, String) {
    let d = w.path(name);
    std::fs::create_dir(&d).unwrap();
    let t = format!("dir:{}", d.display());
    (d, t)
}

/// The seq of the `n`th (0-based) anchor record.
fn anchor_seq(w: &Work, n: usize) -> usize {
    w.kinds()
        .iter()
        .enumerate()
        .filter(|(_, k)| *k == "anchor")
        .nth(n)
        .unwrap()
        .0
}

/// Rewrites the body of the log's last line (links stay intact: the last
/// record is not covered by anything, so nothing breaks).
fn rewrite_last_body(w: &Work, edit: impl FnOnce(&mut Value)) {
    let mut lines = w.lines();
    let mut rec: Value = serde_json::from_str(lines.last().unwrap()).unwrap();
    edit(&mut rec["body"]);
    // Records are JCS (sorted keys, no spaces); serde_json's map is sorted.
    *lines.last_mut().unwrap() = serde_json::to_string(&rec).unwrap();
    std::fs::write(&w.log, lines.join("\n") + "\n").unwrap();
}

fn statuses(report: &Value) -> Vec<(String, String)> {
    report["anchors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["status"].as_str().unwrap().to_owned(),
                a["reason"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

/// The attack: cut the log back to its first anchor record (now
/// the unsigned last record) and point it at a copy of the old note in a
/// directory the attacker controls. Never exit 0: the attacker's location
/// is not followed, and the auditor's own target reveals the truncation.
#[test]
fn a_rewritten_last_anchor_record_is_not_followed_and_truncation_is_found() {
    let w = Work::new(3);
    let (d, t) = dir_target(&w, "worm");
    assert_eq!(code(&w.anchor(&["--to", &t])), 0);
    w.append(2);
    assert_eq!(code(&w.anchor(&["--to", &t])), 0);
    assert_eq!(code(&w.verify(&["--from", &t])), 0);
    // Cut back to the first anchor record and redirect it.
    let first = anchor_seq(&w, 0);
    w.truncate_to(first + 1);
    let evil = w.path("evil");
    let folder = std::fs::read_dir(&d).unwrap().next().unwrap().unwrap();
    let copy = evil.join(folder.file_name());
    std::fs::create_dir_all(&copy).unwrap();
    for f in std::fs::read_dir(folder.path()).unwrap() {
        let f = f.unwrap();
        std::fs::copy(f.path(), copy.join(f.file_name())).unwrap();
    }
    let evil_s = evil.to_str().unwrap().to_owned();
    rewrite_last_body(&w, |b| b["anchors"][0]["dir"] = json!(evil_s));

    // Without a target of the auditor's: nothing is claimed.
    let v = w.verify(&[]);
    assert_eq!(code(&v), 1, "{}", stdout(&v));
    let r = one(&v);
    assert_eq!(r["verdict"], "incomplete", "{r}");
    assert_eq!(r["truncation_checked"], false);
    assert_eq!(
        statuses(&r),
        [("not_checked".into(), "uncovered_record".into())]
    );
    let table = vouch(&[
        "anchor",
        "verify",
        Work::s(&w.log),
        "--pub",
        Work::s(&w.pubkey),
    ]);
    let text = stdout(&table);
    assert!(!text.contains("consistent"), "{text}");
    assert!(text.contains("truncation after the last anchor record cannot be detected"));

    // With the auditor's own target: the second anchor's checkpoint is
    // there, so the truncation is found; the redirected record is still
    // not followed.
    let v = w.verify(&["--from", &t]);
    assert_eq!(code(&v), 1, "{}", stdout(&v));
    let r = one(&v);
    assert_eq!(r["verdict"], "rejected", "{r}");
    assert!(reasons(&r).contains(&"log:truncated".to_owned()), "{r}");
    assert!(reasons(&r).contains(&"uncovered_record".to_owned()), "{r}");
    // Once the writer's next checkpoint covers the redirected record, its
    // location is still not followed: it is outside the auditor's targets.
    w.checkpoint();
    let v = w.verify(&["--from", &t]);
    assert_eq!(code(&v), 1, "{}", stdout(&v));
    let r = one(&v);
    assert!(reasons(&r).contains(&"outside_targets".to_owned()), "{r}");
    assert!(reasons(&r).contains(&"log:truncated".to_owned()), "{r}");
}

/// A planted directory named like a note and an oversized note file are
/// reported one by one; the rest of the listing is used, so a truncation
/// is still found (exit 1, not 2), and no reassuring summary is printed.
#[test]
fn bad_listing_entries_are_reported_and_the_rest_is_used() {
    let w = Work::new(3);
    let (d, t) = dir_target(&w, "worm");
    assert_eq!(code(&w.anchor(&["--to", &t])), 0);
    w.append(2);
    assert_eq!(code(&w.anchor(&["--to", &t])), 0);
    let folder = std::fs::read_dir(&d)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::fs::create_dir(folder.join("zzz.note")).unwrap();
    std::fs::write(folder.join("big.note"), vec![b'x'; (1 << 20) + 1]).unwrap();
    let v = w.verify(&["--from", &t]);
    assert_eq!(code(&v), 1, "{}", stdout(&v));
    let r = one(&v);
    let bad = r["anchors"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["reason"] == "bad_listed_object")
        .count();
    assert_eq!(bad, 2, "{r}");
    assert_eq!(r["listed"][0]["listed"], true);
    // Truncated below the second anchor: found through the listing.
    w.truncate_to(anchor_seq(&w, 1) - 2);
    let v = w.verify(&["--from", &t]);
    assert_eq!(code(&v), 1, "{}", stdout(&v));
    let r = one(&v);
    assert!(reasons(&r).contains(&"log:truncated".to_owned()), "{r}");
    let table = vouch(&[
        "anchor",
        "verify",
        Work::s(&w.log),
        "--pub",
        Work::s(&w.pubkey),
        "--from",
        &t,
    ]);
    assert_eq!(code(&table), 1);
    assert!(!stdout(&table).contains("consistent"), "{}", stdout(&table));
}

/// A log that logrotate split into segments is checked with its segments,
/// given as the live file or as the directory; several logs in one
/// directory each get a report.
#[test]
fn rotated_segments_and_directories_are_verified_like_verify() {
    let w = Work::new(3);
    let (_d, t) = dir_target(&w, "worm");
    assert_eq!(code(&w.anchor(&["--to", &t])), 0);
    // logrotate: rename the live file away, keep appending to a new one.
    let rotated = w.path("log.jsonl.1");
    std::fs::rename(&w.log, &rotated).unwrap();
    w.append(2);
    assert_eq!(code(&w.anchor(&["--to", &t])), 0);
    let v = w.verify(&["--from", &t]);
    assert_eq!(code(&v), 0, "{}", stdout(&v));
    let r = one(&v);
    assert_eq!(r["verdict"], "consistent");
    assert_eq!(r["log"]["segments"].as_array().unwrap().len(), 2, "{r}");
    // The two segments named explicitly, and the directory.
    for args in [
        vec![Work::s(&rotated), Work::s(&w.log)],
        vec![w.log.parent().unwrap().to_str().unwrap()],
    ] {
        let mut a = vec!["anchor", "verify"];
        a.extend(args);
        a.extend([
            "--pub",
            Work::s(&w.pubkey),
            "--from",
            &t,
            "--format",
            "json",
        ]);
        let o = vouch(&a);
        assert_eq!(code(&o), 0, "{a:?}: {}", stdout(&o));
        assert_eq!(
            json(&o)["logs"].as_array().unwrap().len(),
            1,
            "{}",
            stdout(&o)
        );
    }
    // Truncating the live segment below its anchor is found.
    w.truncate_to(1);
    let v = w.verify(&["--from", &t]);
    assert_eq!(code(&v), 1, "{}", stdout(&v));
    assert!(reasons(&one(&v)).contains(&"log:truncated".to_owned()));
}

/// A dir target's file is read below the auditor's directory: a record
/// naming another directory that happens to hold a copy is not followed.
#[test]
fn a_dir_record_is_read_below_the_auditors_directory_only() {
    let w = Work::new(2);
    let (_d, t) = dir_target(&w, "worm");
    assert_eq!(code(&w.anchor(&["--to", &t])), 0);
    let (_o, other) = dir_target(&w, "other");
    let v = w.verify(&["--from", &other]);
    assert_eq!(code(&v), 1, "{}", stdout(&v));
    let r = one(&v);
    assert_eq!(
        statuses(&r),
        [("not_checked".into(), "outside_targets".into())]
    );
    // A target file of several targets.
    let file = w.path("targets.txt");
    std::fs::write(&file, format!("# ours\n\n{other}\n{t}\n")).unwrap();
    let v = w.verify(&["--targets", Work::s(&file)]);
    assert_eq!(code(&v), 0, "{}", stdout(&v));
    assert_eq!(one(&v)["listed"].as_array().unwrap().len(), 2);
    // A tsa: line is refused (a TSA keeps nothing to list): exit 2.
    std::fs::write(&file, "tsa:http://127.0.0.1:1/\n").unwrap();
    let v = w.verify(&["--targets", Work::s(&file)]);
    assert_eq!(code(&v), 2, "{}", stdout(&v));
}

// ---------------------------------------------------------------- S3 (moto)

#[cfg(feature = "s3")]
fn s3_anchor(w: &Work, m: &Moto, target: &str) -> Value {
    let o = w.anchor(&[
        "--to",
        target,
        "--endpoint",
        &m.endpoint,
        "--retain-days",
        "2",
    ]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    json(&o)
}

#[cfg(feature = "s3")]
fn s3_verify(w: &Work, m: &Moto, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["--endpoint", m.endpoint.as_str()];
    args.extend_from_slice(extra);
    w.verify(&args)
}

/// More versions than one listing page: every page is followed (moto
/// serves pages of `--page-size`), and a truncation found on the last page.
#[test]
#[cfg(feature = "s3")]
fn s3_listing_follows_every_page() {
    let Some(m) = Moto::start() else { return };
    m.lock_bucket("pages");
    let w = Work::new(1);
    let t = "s3://pages/p";
    for _ in 0..5 {
        s3_anchor(&w, &m, t);
        w.append(1);
    }
    let v = s3_verify(&w, &m, &["--from", t, "--page-size", "2"]);
    assert_eq!(code(&v), 0, "{}", stdout(&v));
    let r = one(&v);
    assert_eq!(r["listed"][0]["objects"], 5, "{r}");
    // The last anchor's record cut off: its checkpoint is on the last page.
    w.truncate_to(anchor_seq(&w, 4) - 2);
    let v = s3_verify(&w, &m, &["--from", t, "--page-size", "2"]);
    assert_eq!(code(&v), 1, "{}", stdout(&v));
    assert!(reasons(&one(&v)).contains(&"log:truncated".to_owned()));
}

/// An object over 1 MiB planted in the origin's folder is one bad entry;
/// the listing's other objects still reveal a truncation (exit 1).
#[test]
#[cfg(feature = "s3")]
fn s3_planted_large_object_is_reported_and_the_rest_used() {
    let Some(m) = Moto::start() else { return };
    m.lock_bucket("planted");
    let w = Work::new(2);
    let t = "s3://planted/x";
    let out = s3_anchor(&w, &m, t);
    let key = out["anchors"][0]["key"].as_str().unwrap().to_owned();
    let folder = key.rsplit_once('/').unwrap().0.to_owned();
    w.append(1);
    s3_anchor(&w, &m, t);
    m.py(&format!(
        "body = b'x' * ((1 << 20) + 1)\n\
         s3.put_object(Bucket='planted', Key='{folder}/zzz.note', Body=body, ChecksumSHA256=base64.b64encode(hashlib.sha256(body).digest()).decode())"
    ));
    w.truncate_to(anchor_seq(&w, 1) - 2);
    let v = s3_verify(&w, &m, &["--from", t]);
    assert_eq!(code(&v), 1, "{}", stdout(&v));
    let r = one(&v);
    let rs = reasons(&r);
    assert!(rs.contains(&"bad_listed_object".to_owned()), "{rs:?}");
    assert!(rs.contains(&"log:truncated".to_owned()), "{rs:?}");
}

/// Issue 21, the S3 side of the listing rule: every key of the origin's
/// folder that is not an anchored object (a junk `.note`, another name, a
/// key in a subfolder, bytes that are no note, a note under another
/// checkpoint's name) is one `bad_listed_object` row, as in a `dir:`
/// target; the real anchor still verifies.
#[test]
#[cfg(feature = "s3")]
fn s3_junk_keys_in_the_origins_folder_are_bad_listed_objects() {
    let Some(m) = Moto::start() else { return };
    m.lock_bucket("junk");
    let w = Work::new(2);
    let t = "s3://junk/x";
    let out = s3_anchor(&w, &m, t);
    let key = out["anchors"][0]["key"].as_str().unwrap().to_owned();
    let (folder, name) = key.rsplit_once('/').unwrap();
    let shaped = format!("{}/{:020}-{}.note", folder, 7, "0".repeat(64));
    let planted = [
        (
            format!("{folder}/99999999999999999999-junk.note"),
            "b'not a note\\n'",
        ),
        (format!("{folder}/README"), "note"),
        (format!("{folder}/{name}.bak"), "note"),
        (format!("{folder}/sub/{name}"), "note"),
        (shaped.clone(), "b'not a note\\n'"),
        (shaped.replace("-0000", "-1111"), "note"),
    ];
    let mut script = format!("note = s3.get_object(Bucket='junk', Key='{key}')['Body'].read()\n");
    for (k, body) in &planted {
        script.push_str(&format!(
            "body = {body}\ns3.put_object(Bucket='junk', Key='{k}', Body=body, ChecksumSHA256=base64.b64encode(hashlib.sha256(body).digest()).decode())\n"
        ));
    }
    m.py(&script);
    let v = s3_verify(&w, &m, &["--from", t]);
    assert_eq!(code(&v), 1, "{}", stdout(&v));
    let r = one(&v);
    assert_eq!(r["verdict"], "rejected", "{r}");
    let rows = r["anchors"].as_array().unwrap();
    for (k, _) in &planted {
        let row = rows
            .iter()
            .find(|a| a["location"].as_str().unwrap().contains(&format!("/{k}?")))
            .unwrap_or_else(|| panic!("no row for {k}: {r}"));
        assert_eq!(row["reason"], "bad_listed_object", "{k}: {r}");
    }
    assert!(
        rows.iter()
            .any(|a| a["status"] == "verified" && a["location"].as_str().unwrap().contains(&key)),
        "{r}"
    );
}

/// The endpoint recorded in an anchor record is never contacted: the
/// auditor's `--endpoint` (or environment) is used. A listener on the
/// recorded endpoint sees no connection.
#[test]
#[cfg(feature = "s3")]
fn the_recorded_endpoint_is_never_contacted() {
    let Some(m) = Moto::start() else { return };
    m.lock_bucket("endpoint-test");
    let w = Work::new(2);
    s3_anchor(&w, &m, "s3://endpoint-test");
    // Make the anchor record the (uncovered) last record and point its
    // endpoint at a listener the test watches.
    w.truncate_to(anchor_seq(&w, 0) + 1);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let decoy = format!("http://{}", listener.local_addr().unwrap());
    rewrite_last_body(&w, |b| b["anchors"][0]["endpoint"] = json!(decoy));
    // The writer's next checkpoint covers the edited record.
    w.checkpoint();
    // Through the environment, as an auditor's cron job would set it.
    let o = vouch_env(
        &[
            "anchor",
            "verify",
            Work::s(&w.log),
            "--pub",
            Work::s(&w.pubkey),
            "--from",
            "s3://endpoint-test",
            "--format",
            "json",
        ],
        &[("AWS_ENDPOINT_URL", m.endpoint.as_str())],
    );
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    assert_eq!(one(&o)["anchors"][0]["status"], "verified");
    assert!(
        listener.accept().is_err(),
        "vouch connected to the endpoint named by the log"
    );
}

/// With `--state`, a second run checks old anchors by HEAD only; the state
/// saves downloads, never trust: an object replaced since is still found,
/// an edited state only causes a download, and `--recheck-days 0` downloads
/// everything again.
#[test]
#[cfg(feature = "s3")]
fn s3_state_heads_old_anchors_and_still_finds_changes() {
    let Some(m) = Moto::start() else { return };
    m.lock_bucket("state");
    let w = Work::new(2);
    let t = "s3://state/s";
    let out = s3_anchor(&w, &m, t);
    let (key, version) = (
        out["anchors"][0]["key"].as_str().unwrap().to_owned(),
        out["anchors"][0]["version_id"].as_str().unwrap().to_owned(),
    );
    w.append(1);
    let o = w.anchor(&[
        "--to",
        t,
        "--endpoint",
        &m.endpoint,
        "--retain-days",
        "2",
        "--mode",
        "governance",
    ]);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    let gov = json(&o)["anchors"][0].clone();
    let state = w.path("anchor-state.json");
    let st = Work::s(&state).to_owned();
    let checked = |r: &Value| -> Vec<bool> {
        r["anchors"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| a["source"] == "record")
            .map(|a| a["found"]["checked"].is_string())
            .collect()
    };
    let v = s3_verify(&w, &m, &["--from", t, "--state", &st]);
    assert_eq!(code(&v), 0, "{}", stdout(&v));
    assert_eq!(checked(&one(&v)), [false, false], "first run downloads");
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    assert_eq!(saved["format"], "vouch-anchor-state/1");
    assert_eq!(saved["objects"].as_object().unwrap().len(), 2);
    let v = s3_verify(&w, &m, &["--from", t, "--state", &st]);
    assert_eq!(code(&v), 0, "{}", stdout(&v));
    assert_eq!(checked(&one(&v)), [true, true], "second run: HEAD only");
    let v = s3_verify(
        &w,
        &m,
        &["--from", t, "--state", &st, "--recheck-days", "0"],
    );
    assert_eq!(code(&v), 0);
    assert_eq!(
        checked(&one(&v)),
        [false, false],
        "--recheck-days 0 downloads"
    );

    // An edited state (another note for the first object) only makes the
    // run download it again.
    let mut edited = saved.clone();
    let id = format!("s3:state/{key}@{version}");
    edited["objects"][&id]["note"] = json!("example.com/anchor-test\n1\nAAAA\n");
    std::fs::write(&state, serde_json::to_vec(&edited).unwrap()).unwrap();
    let v = s3_verify(&w, &m, &["--from", t, "--state", &st]);
    assert_eq!(code(&v), 0, "{}", stdout(&v));
    assert_eq!(checked(&one(&v)), [false, true]);

    // The governance-locked anchor replaced: found with the state too.
    let (gkey, gver) = (
        gov["key"].as_str().unwrap(),
        gov["version_id"].as_str().unwrap(),
    );
    m.py(&format!(
        "s3.delete_object(Bucket='state', Key='{gkey}', VersionId='{gver}', BypassGovernanceRetention=True)"
    ));
    let v = s3_verify(&w, &m, &["--from", t, "--state", &st]);
    assert_eq!(code(&v), 1, "{}", stdout(&v));
    assert!(reasons(&one(&v)).contains(&"anchor_missing".to_owned()));
    // A state file that is not one: exit 2, and it is left as it was.
    std::fs::write(&state, "not json").unwrap();
    let v = s3_verify(&w, &m, &["--from", t, "--state", &st]);
    assert_eq!(code(&v), 2, "{}", stdout(&v));
    assert_eq!(std::fs::read_to_string(&state).unwrap(), "not json");
}

/// Found by an independent attack on this issue (F1): a `--from dir:`
/// target that does not exist is an error, not an empty listing; and a
/// target whose folder for this log was renamed away holds no anchor of
/// it, so truncation cannot be detected there: never `consistent`.
#[test]
fn a_missing_target_or_a_renamed_origin_folder_is_never_consistent() {
    let w = Work::new(2);
    let (d, t) = dir_target(&w, "worm");
    assert_eq!(code(&w.anchor(&["--to", &t])), 0);
    let gone = format!("dir:{}", w.path("no-such-dir").display());
    let v = w.verify(&["--from", &t, "--from", &gone]);
    assert_eq!(code(&v), 2, "{}", stdout(&v));
    let r = one(&v);
    assert_eq!(r["verdict"], "error", "{r}");
    // Truncated before the anchor record, the origin folder renamed: the
    // target holds nothing of this log, the log has no anchor left.
    w.truncate_to(3);
    let folder = std::fs::read_dir(&d)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::fs::rename(&folder, d.join("elsewhere")).unwrap();
    let v = w.verify(&["--from", &t]);
    assert_eq!(code(&v), 1, "{}", stdout(&v));
    // The note is found by what it says, wherever it lies: a note outside
    // its origin's folder is reported, never silently skipped.
    assert_eq!(one(&v)["verdict"], "rejected");
    assert!(reasons(&one(&v)).contains(&"bad_listed_object".to_owned()));
}

/// F4: a dir anchor whose file name holds a NUL byte is a malformed record
/// (exit 1), not an I/O error.
#[test]
fn a_nul_byte_in_a_dir_anchor_file_is_a_bad_record() {
    let w = Work::new(2);
    let (_d, t) = dir_target(&w, "worm");
    assert_eq!(code(&w.anchor(&["--to", &t])), 0);
    w.truncate_to(anchor_seq(&w, 0) + 1);
    rewrite_last_body(&w, |b| b["anchors"][0]["file"] = json!("a\u{0}b.note"));
    w.checkpoint();
    let v = w.verify(&["--from", &t]);
    assert_eq!(code(&v), 1, "{}", stdout(&v));
    assert!(reasons(&one(&v)).contains(&"bad_anchor_record".to_owned()));
}

/// F6: a log failure that names no anchor's size is the log's own, not
/// copied onto every anchor row.
#[test]
fn a_log_failure_is_not_blamed_on_unrelated_anchors() {
    let w = Work::new(3);
    let (_d, t) = dir_target(&w, "worm");
    assert_eq!(code(&w.anchor(&["--to", &t])), 0);
    // A record after the anchor is edited: the chain breaks there.
    w.append(2);
    let mut lines = w.lines();
    let n = lines.len();
    lines[n - 2] = lines[n - 2].replace("\"i\":0", "\"i\":9");
    std::fs::write(&w.log, lines.join("\n") + "\n").unwrap();
    let v = w.verify(&["--from", &t]);
    assert_eq!(code(&v), 1, "{}", stdout(&v));
    let r = one(&v);
    assert_eq!(r["verdict"], "rejected");
    assert!(r["log"]["failure"]["reason"].is_string(), "{r}");
    for a in r["anchors"].as_array().unwrap() {
        assert_eq!(a["status"], "verified", "{r}");
    }
}

/// F7 (independent attack on issue 9): given a directory (a fleet), a log
/// whose file was deleted while its anchors stay at the auditor's target is
/// `missing_log` (exit 1); given files, only those logs are judged.
#[test]
fn a_log_deleted_from_a_fleet_directory_is_missing() {
    let w = Work::new(2);
    let (_d, t) = dir_target(&w, "worm");
    let (fleet, keys) = fleet_of_two(&w, &t);
    let o = verify_fleet(&fleet, &keys, &t);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    assert_eq!(json(&o)["logs"].as_array().unwrap().len(), 2);
    std::fs::remove_file(fleet.join("b.jsonl")).unwrap();
    let o = verify_fleet(&fleet, &keys, &t);
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    let doc = json(&o);
    assert_eq!(
        doc["missing_logs"][0]["origin"], "example.com/other",
        "{doc}"
    );
    assert_eq!(doc["missing_logs"][0]["reason"], "missing_log");
    // One log named as a file: the others are not this run's question.
    let o = verify_fleet(&fleet.join("a.jsonl"), &keys, &t);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
}

// ------------------------------------- second independent attack (R1–R8)

/// Makes a fleet directory with logs A (this Work's) and B, both anchored
/// to `t`; returns (fleet dir, keyset with both keys).
fn fleet_of_two(w: &Work, t: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    assert_eq!(code(&w.anchor(&["--to", t])), 0);
    let fleet = w.path("fleet");
    std::fs::create_dir(&fleet).unwrap();
    std::fs::rename(&w.log, fleet.join("a.jsonl")).unwrap();
    let kb = w.path("kb");
    assert_eq!(
        code(&vouch(&[
            "keygen",
            "--origin",
            "example.com/other",
            "--out",
            Work::s(&kb)
        ])),
        0
    );
    let b = fleet.join("b.jsonl");
    assert_eq!(
        code(&vouch(&[
            "append",
            Work::s(&b),
            "--key",
            Work::s(&kb),
            "{\"b\":1}"
        ])),
        0
    );
    assert_eq!(
        code(&vouch(&[
            "anchor",
            Work::s(&b),
            "--key",
            Work::s(&kb),
            "--to",
            t
        ])),
        0
    );
    let keys = keyset(w, &kb);
    (fleet, keys)
}

/// A keyset file holding this Work's public key and `other`'s.
fn keyset(w: &Work, other: &std::path::Path) -> std::path::PathBuf {
    let keys = w.path("fleet.pub");
    std::fs::write(
        &keys,
        std::fs::read_to_string(&w.pubkey).unwrap()
            + &std::fs::read_to_string(format!("{}.pub", other.display())).unwrap(),
    )
    .unwrap();
    keys
}

fn verify_fleet(fleet: &std::path::Path, keys: &std::path::Path, t: &str) -> std::process::Output {
    vouch(&[
        "anchor",
        "verify",
        Work::s(fleet),
        "--pub",
        Work::s(keys),
        "--from",
        t,
        "--format",
        "json",
    ])
}

/// R1: a deleted log whose origin folder was renamed (to a hidden name, or
/// to another spelling of its escape) is still found by what its notes say.
#[test]
fn a_deleted_log_with_a_renamed_folder_is_still_missing() {
    for renamed in [".trash", "example.com%2fother"] {
        let w = Work::new(2);
        let (d, t) = dir_target(&w, "worm");
        let (fleet, keys) = fleet_of_two(&w, &t);
        std::fs::remove_file(fleet.join("b.jsonl")).unwrap();
        std::fs::rename(d.join("example.com%2Fother"), d.join(renamed)).unwrap();
        let o = verify_fleet(&fleet, &keys, &t);
        assert_eq!(code(&o), 1, "{renamed}: {}", stdout(&o));
        assert_eq!(
            json(&o)["missing_logs"][0]["origin"],
            "example.com/other",
            "{renamed}"
        );
    }
}

/// R2: a deleted log whose anchors are all signed by a key it rotated to
/// is missing too: the auditor holds the original key, and the log (with
/// its rotation record) is gone.
#[test]
fn a_deleted_rotated_log_is_missing() {
    let w = Work::new(2);
    let (_d, t) = dir_target(&w, "worm");
    assert_eq!(code(&w.anchor(&["--to", &t])), 0);
    let fleet = w.path("fleet");
    std::fs::create_dir(&fleet).unwrap();
    std::fs::rename(&w.log, fleet.join("a.jsonl")).unwrap();
    let (kb, kb2) = (w.path("kb"), w.path("kb2"));
    for k in [&kb, &kb2] {
        let o = vouch(&[
            "keygen",
            "--origin",
            "example.com/other",
            "--out",
            Work::s(k),
        ]);
        assert_eq!(code(&o), 0);
    }
    let b = fleet.join("b.jsonl");
    assert_eq!(
        code(&vouch(&[
            "append",
            Work::s(&b),
            "--key",
            Work::s(&kb),
            "{\"b\":1}"
        ])),
        0
    );
    let o = vouch(&[
        "rotate",
        Work::s(&b),
        "--key",
        Work::s(&kb),
        "--new-key",
        Work::s(&kb2),
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(
        code(&vouch(&[
            "append",
            Work::s(&b),
            "--key",
            Work::s(&kb2),
            "{\"b\":2}"
        ])),
        0
    );
    // Every anchor of B is signed by the rotated-in key.
    assert_eq!(
        code(&vouch(&[
            "anchor",
            Work::s(&b),
            "--key",
            Work::s(&kb2),
            "--to",
            &t
        ])),
        0
    );
    // The auditor holds B's original key.
    let keys = keyset(&w, &kb);
    let o = verify_fleet(&fleet, &keys, &t);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    std::fs::remove_file(&b).unwrap();
    let o = verify_fleet(&fleet, &keys, &t);
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    assert_eq!(json(&o)["missing_logs"][0]["origin"], "example.com/other");
}

/// R3, R5: a dir anchor that is writable is no lock, whatever its (signed)
/// record says; and a record naming any object but the content-addressed
/// one is malformed. Both in `anchor verify` and `receipt verify --online`.
#[test]
fn writable_or_misnamed_dir_anchors_are_rejected_even_when_recorded_so() {
    use std::os::unix::fs::PermissionsExt;
    for case in ["writable", "misnamed"] {
        let w = Work::new(2);
        let (d, t) = dir_target(&w, "worm");
        assert_eq!(code(&w.anchor(&["--to", &t])), 0);
        let seq = anchor_seq(&w, 0);
        w.truncate_to(seq + 1);
        let file = anchored_file(&d);
        let _ = std::process::Command::new("chattr")
            .arg("-i")
            .arg(&file)
            .status();
        let rel = file.strip_prefix(&d).unwrap().to_str().unwrap().to_owned();
        match case {
            "writable" => {
                std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).unwrap();
                rewrite_last_body(&w, |b| {
                    b["anchors"][0]["mode"] = json!(0o666);
                    b["anchors"][0]["immutable"] = json!(false);
                });
            }
            _ => {
                let (folder, name) = rel.split_once('/').unwrap();
                let moved = format!("{folder}/sub/{name}");
                std::fs::create_dir(d.join(folder).join("sub")).unwrap();
                std::fs::copy(&file, d.join(&moved)).unwrap();
                rewrite_last_body(&w, |b| b["anchors"][0]["file"] = json!(moved));
            }
        }
        w.checkpoint();
        let v = w.verify(&["--from", &t]);
        assert_eq!(code(&v), 1, "{case}: {}", stdout(&v));
        let want = if case == "writable" {
            "lock_weakened"
        } else {
            "bad_anchor_record"
        };
        assert!(
            reasons(&one(&v)).contains(&want.to_owned()),
            "{case}: {}",
            stdout(&v)
        );
        let o = vouch(&[
            "receipt",
            Work::s(&w.log),
            "--seq",
            "1",
            "--out",
            Work::s(&w.path("r.json")),
        ]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let o = vouch(&[
            "receipt",
            "verify",
            Work::s(&w.path("r.json")),
            "--pub",
            Work::s(&w.pubkey),
            "--online",
            "--from",
            &t,
            "--format",
            "json",
        ]);
        assert_eq!(code(&o), 1, "{case}: {}", stdout(&o));
        assert_eq!(json(&o)["reason"], want, "{case}: {}", stdout(&o));
    }
}

/// R4: an origin folder that is a symbolic link is never read through (and
/// never written through by `vouch anchor`).
#[test]
fn a_symlinked_origin_folder_is_refused() {
    let w = Work::new(2);
    let (d, t) = dir_target(&w, "worm");
    let elsewhere = w.path("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, d.join("example.com%2Fanchor-test")).unwrap();
    let o = w.anchor(&["--to", &t]);
    assert_eq!(code(&o), 2, "{}", stdout(&o));
    assert_eq!(w.kinds().iter().filter(|k| *k == "anchor").count(), 0);
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    // A note placed there by hand is not read as the log's anchor.
    let (_d2, t2) = dir_target(&w, "worm2");
    assert_eq!(code(&w.anchor(&["--to", &t2])), 0);
    let v = w.verify(&["--from", &t]);
    assert_eq!(code(&v), 1, "{}", stdout(&v));
    assert!(
        reasons(&one(&v)).contains(&"bad_listed_object".to_owned()),
        "{}",
        stdout(&v)
    );
}

/// R7: an auditor directory that is gone (unmounted) cannot be asked:
/// error, exit 2, not `anchor_missing`.
#[test]
fn an_unmounted_dir_target_is_an_error_not_a_missing_anchor() {
    let w = Work::new(2);
    let (d, t) = dir_target(&w, "worm");
    assert_eq!(code(&w.anchor(&["--to", &t])), 0);
    let o = vouch(&[
        "receipt",
        Work::s(&w.log),
        "--seq",
        "1",
        "--out",
        Work::s(&w.path("r.json")),
    ]);
    assert_eq!(code(&o), 0);
    let _ = std::process::Command::new("chattr")
        .arg("-R")
        .arg("-i")
        .arg(&d)
        .status();
    std::fs::rename(&d, w.path("unmounted")).unwrap();
    let v = w.verify(&["--from", &t]);
    assert_eq!(code(&v), 2, "{}", stdout(&v));
    assert!(
        !reasons(&one(&v)).contains(&"anchor_missing".to_owned()),
        "{}",
        stdout(&v)
    );
    let o = vouch(&[
        "receipt",
        "verify",
        Work::s(&w.path("r.json")),
        "--pub",
        Work::s(&w.pubkey),
        "--online",
        "--from",
        &t,
        "--format",
        "json",
    ]);
    assert_eq!(code(&o), 2, "{}", stdout(&o));
}

/// R8: concurrent runs over one state file each print their report; the
/// state is replaced atomically, never seen missing.
#[test]
fn concurrent_state_runs_each_report() {
    let w = Work::new(2);
    let (_d, t) = dir_target(&w, "worm");
    assert_eq!(code(&w.anchor(&["--to", &t])), 0);
    let st = w.path("state.json");
    assert_eq!(code(&w.verify(&["--from", &t, "--state", Work::s(&st)])), 0);
    let runs: Vec<_> = (0..6)
        .map(|_| {
            let (log, pubkey, st, t) = (w.log.clone(), w.pubkey.clone(), st.clone(), t.clone());
            std::thread::spawn(move || {
                vouch(&[
                    "anchor",
                    "verify",
                    Work::s(&log),
                    "--pub",
                    Work::s(&pubkey),
                    "--from",
                    &t,
                    "--state",
                    Work::s(&st),
                    "--format",
                    "json",
                ])
            })
        })
        .collect();
    for r in runs {
        let o = r.join().unwrap();
        assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
        assert_eq!(json(&o)["state_saved"], true);
    }
}

/// N1, N3 (third independent attack): a folder moved deeper below the
/// auditor's directory is still read: the truncation it hid is found, and
/// a deleted log whose folder was moved is still missing.
#[test]
fn a_folder_moved_deeper_below_the_target_is_still_read() {
    let w = Work::new(3);
    let (d, t) = dir_target(&w, "worm");
    assert_eq!(code(&w.anchor(&["--to", &t])), 0);
    w.append(2);
    assert_eq!(code(&w.anchor(&["--to", &t])), 0);
    w.truncate_to(anchor_seq(&w, 1) - 2);
    let folder = d.join("example.com%2Fanchor-test");
    std::fs::create_dir_all(d.join(".old/deeper")).unwrap();
    std::fs::rename(&folder, d.join(".old/deeper/example.com%2Fanchor-test")).unwrap();
    // The first anchor put back where it belongs, by an ordinary anchor run
    // of the old checkpoint would be the same; here a copy.
    std::fs::create_dir(&folder).unwrap();
    let first = std::fs::read_dir(d.join(".old/deeper/example.com%2Fanchor-test"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .min()
        .unwrap();
    std::fs::copy(&first, folder.join(first.file_name().unwrap())).unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            folder.join(first.file_name().unwrap()),
            std::fs::Permissions::from_mode(0o444),
        )
        .unwrap();
    }
    let v = w.verify(&["--from", &t]);
    assert_eq!(code(&v), 1, "{}", stdout(&v));
    let r = one(&v);
    assert_ne!(r["verdict"], "consistent", "{r}");
    assert!(reasons(&r).contains(&"bad_listed_object".to_owned()), "{r}");
}

/// What is put into the log's own folder at a `dir:` target.
enum Junk {
    File(Vec<u8>),
    Dir,
    Symlink(std::path::PathBuf),
    Fifo,
}

/// Issue 21: a junk `.note` in the log's own folder was skipped without a
/// word (`consistent`, exit 0). Every entry of that folder that is not an
/// anchored object (a name of another shape, bytes that are no signed
/// checkpoint note, a note under another checkpoint's name, a directory, a
/// link, a FIFO, a file over 1 MiB) is one `bad_listed_object` row, exit 1;
/// a well-named signed note that does not count here (another origin's) is
/// `bad_anchor_note`. The same rule as an S3 target's listing. Each case
/// alone, in a target that verifies `consistent` without it.
#[test]
fn every_junk_entry_in_the_logs_own_folder_is_reported() {
    let w = Work::new(2);
    let (d, t) = dir_target(&w, "worm");
    assert_eq!(code(&w.anchor(&["--to", &t])), 0);
    assert_eq!(code(&w.verify(&["--from", &t])), 0);
    let good = anchored_file(&d);
    let folder = good.parent().unwrap().to_path_buf();
    let note = std::fs::read(&good).unwrap();
    let name = good.file_name().unwrap().to_str().unwrap().to_owned();
    let (size, rest) = name.split_once('-').unwrap();
    let root = rest.strip_suffix(".note").unwrap();
    let size_n: u64 = size.parse().unwrap();
    let other_size = format!("{:020}", size_n + 1);
    let zeros = "0".repeat(64);
    let shaped = format!("{other_size}-{zeros}.note");
    // A signed checkpoint of another log (its own key and origin).
    let other_key = w.path("other");
    let o = vouch(&[
        "keygen",
        "--origin",
        "example.com/other",
        "--out",
        Work::s(&other_key),
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let other_log = w.path("other.jsonl");
    for args in [
        vec![
            "append",
            Work::s(&other_log),
            "--key",
            Work::s(&other_key),
            "{}",
        ],
        vec![
            "checkpoint",
            Work::s(&other_log),
            "--key",
            Work::s(&other_key),
            "--out",
            Work::s(&w.path("other.cp")),
        ],
    ] {
        let o = vouch(&args);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
    }
    let other_note = std::fs::read(w.path("other.cp")).unwrap();
    let text_only = note[..note.windows(2).position(|p| p == b"\n\n").unwrap() + 1].to_vec();

    let listed = "bad_listed_object";
    let mut cases: Vec<(String, Junk, &str)> = Vec::new();
    // The file.
    cases.push((
        "99999999999999999999-junk.note".into(),
        Junk::File(b"not a note\n".to_vec()),
        listed,
    ));
    // The anchored note itself, under names of another shape.
    for junk_name in [
        format!("{name}.bak"),
        format!("{size}-{root}"),
        format!("{size}-{root}.txt"),
        format!("{}-{root}.note", &size[1..]),
        format!("0{size}-{root}.note"),
        format!("{size}-{}.note", root.to_uppercase()),
        format!("{size}-{}.note", &root[1..]),
        format!("{size}_{root}.note"),
        format!(".{name}"),
        format!("{name}~"),
        "README".to_owned(),
        "x.note".to_owned(),
        ".note".to_owned(),
    ] {
        cases.push((junk_name, Junk::File(note.clone()), listed));
    }
    // The anchored note under another checkpoint's (well-shaped) name.
    cases.push((shaped.clone(), Junk::File(note.clone()), listed));
    cases.push((
        format!("{size}-{zeros}.note"),
        Junk::File(note.clone()),
        listed,
    ));
    // Well-shaped names holding bytes that are no signed checkpoint note.
    for bytes in [
        Vec::new(),
        b"not a note\n".to_vec(),
        vec![0xff, 0x00, 0x01, b'\n'],
        note[..note.len() - 1].to_vec(),
        text_only,
        b"example.com/anchor-test\nnot a size\n\n".to_vec(),
        vec![b'x'; (1 << 20) + 1],
    ] {
        cases.push((shaped.clone(), Junk::File(bytes), listed));
    }
    // Not files.
    cases.push((shaped.clone(), Junk::Dir, listed));
    cases.push(("sub".into(), Junk::Dir, listed));
    cases.push((shaped.clone(), Junk::Symlink(good.clone()), listed));
    cases.push((
        "dangling.note".into(),
        Junk::Symlink(w.path("nowhere")),
        listed,
    ));
    cases.push((shaped.clone(), Junk::Fifo, listed));
    cases.push(("fifo".into(), Junk::Fifo, listed));
    // A signed note that does not count for this log: judged, not listed.
    cases.push((shaped.clone(), Junk::File(other_note), "bad_anchor_note"));

    for (junk_name, junk, want) in cases {
        let p = folder.join(&junk_name);
        let what = match &junk {
            Junk::File(b) => format!("{junk_name:?} ({} bytes)", b.len()),
            Junk::Dir => format!("{junk_name:?} (a directory)"),
            Junk::Symlink(to) => format!("{junk_name:?} (a link to {})", to.display()),
            Junk::Fifo => format!("{junk_name:?} (a FIFO)"),
        };
        match junk {
            Junk::File(b) => std::fs::write(&p, b).unwrap(),
            Junk::Dir => std::fs::create_dir(&p).unwrap(),
            Junk::Symlink(to) => std::os::unix::fs::symlink(to, &p).unwrap(),
            Junk::Fifo => {
                let ok = std::process::Command::new("mkfifo")
                    .arg(&p)
                    .status()
                    .unwrap();
                assert!(ok.success());
            }
        }
        let v = w.verify(&["--from", &t]);
        assert_eq!(code(&v), 1, "{what}: {}", stdout(&v));
        let r = one(&v);
        assert_eq!(r["verdict"], "rejected", "{what}: {r}");
        let rejected: Vec<&Value> = r["anchors"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| a["status"] == "rejected")
            .collect();
        assert_eq!(rejected.len(), 1, "{what}: {r}");
        assert_eq!(rejected[0]["reason"], want, "{what}: {r}");
        assert!(
            rejected[0]["location"]
                .as_str()
                .unwrap()
                .ends_with(&junk_name),
            "{what}: {r}"
        );
        // Removed again, the target is consistent: the row was this entry.
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.is_dir() => std::fs::remove_dir(&p).unwrap(),
            _ => std::fs::remove_file(&p).unwrap(),
        }
        assert_eq!(code(&w.verify(&["--from", &t])), 0, "{what}");
    }
}
