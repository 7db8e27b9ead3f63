//! `vouch verify --shard I/N` and `--merge`: every log in exactly one
//! shard, the merge equal to the single run (rows, summary, exit code,
//! table), and every incomplete or inconsistent set of shards refused.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use support::{code, json as json_of, stderr, stdout, vouch_at};
use vouch::chain::writer;
use vouch::note::SignerKey;

fn key(origin: &str) -> SignerKey {
    SignerKey::from_seed(origin, &[9u8; 32]).unwrap()
}

/// A fleet of `n` logs of different sizes (log 3 in two segments, log 5
/// tampered) in `dir/fleet`, keys in `dir/keys.pub`, and a kept checkpoint
/// of a log that is not in the fleet (`dir/gone.checkpoint`).
fn fleet(dir: &Path, n: usize) {
    let f = dir.join("fleet");
    std::fs::create_dir_all(f.join("sub")).unwrap();
    let mut keys = Vec::new();
    for i in 0..n {
        let k = key(&format!("shard.example/{i}"));
        let p = f.join(if i % 2 == 0 {
            format!("l{i}.jsonl")
        } else {
            format!("sub/l{i}.jsonl")
        });
        let body = json!({"i": i, "pad": "y".repeat(20 * (i % 7))});
        for _ in 0..(3 + (i * 5) % 11) {
            writer::append(&p, &k, &[("event", &body)]).unwrap();
        }
        writer::checkpoint(&p, &k, true).unwrap();
        keys.push(k.verifier().to_text());
    }
    // Log 3 rotated after its first two lines.
    let p3 = f.join("sub/l3.jsonl");
    let all = std::fs::read_to_string(&p3).unwrap();
    let (head, rest) = all.split_at(all.match_indices('\n').nth(1).unwrap().0 + 1);
    std::fs::write(f.join("sub/l3.jsonl.1"), head).unwrap();
    std::fs::write(&p3, rest).unwrap();
    let p5 = f.join("sub/l5.jsonl");
    let t = std::fs::read_to_string(&p5).unwrap();
    std::fs::write(&p5, t.replacen("\"i\":5", "\"i\":6", 1)).unwrap();
    // A log the auditor kept a checkpoint of, missing from the fleet.
    let gone = key("shard.example/gone");
    let g = dir.join("gone.jsonl");
    writer::append(&g, &gone, &[("event", &json!({}))]).unwrap();
    writer::checkpoint(&g, &gone, true).unwrap();
    let text = std::fs::read_to_string(&g).unwrap();
    let last: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    std::fs::write(
        dir.join("gone.checkpoint"),
        last["body"]["note"].as_str().unwrap(),
    )
    .unwrap();
    std::fs::remove_file(&g).unwrap();
    keys.push(gone.verifier().to_text());
    std::fs::write(dir.join("keys.pub"), keys.join("\n") + "\n").unwrap();
}

const BASE: &[&str] = &[
    "verify",
    "fleet",
    "--pub",
    "keys.pub",
    "--checkpoint",
    "gone.checkpoint",
];

fn run_shards(dir: &Path, n: u32, extra: &[&str], tag: &str) -> Vec<PathBuf> {
    (0..n)
        .map(|i| {
            let spec = format!("{i}/{n}");
            let mut args = BASE.to_vec();
            args.extend(["--format", "json", "--shard", &spec]);
            args.extend(extra);
            let out = vouch_at(&args, dir);
            assert!(code(&out) <= 1, "{}", stderr(&out));
            let p = dir.join(format!("{tag}{n}-{i}.json"));
            std::fs::write(&p, &out.stdout).unwrap();
            p
        })
        .collect()
}

fn merge(dir: &Path, reports: &[PathBuf], format: &str) -> std::process::Output {
    let mut args = vec!["verify", "--format", format, "--merge"];
    args.extend(reports.iter().map(|p| p.to_str().unwrap()));
    vouch_at(&args, dir)
}

#[test]
fn every_log_in_one_shard_and_the_merge_is_the_single_run() {
    let d = tempfile::tempdir().unwrap();
    fleet(d.path(), 14);
    let mut args = BASE.to_vec();
    args.extend(["--format", "json"]);
    let single = vouch_at(&args, d.path());
    assert_eq!(code(&single), 1);
    let s = json_of(&single);
    let table = stdout(&vouch_at(BASE, d.path()));
    for n in [1u32, 2, 3, 5, 20] {
        let reports = run_shards(d.path(), n, &[], "s");
        // Each file in exactly one shard's rows; the missing log left to the merge.
        let mut seen = std::collections::HashMap::new();
        for p in &reports {
            let doc: Value = serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
            assert_eq!(doc["shard"]["count"], n);
            for row in doc["logs"].as_array().unwrap() {
                assert_ne!(row["reason"], "missing_log", "{row}");
                for seg in row["segments"].as_array().unwrap() {
                    assert!(
                        seen.insert(seg.as_str().unwrap().to_owned(), p.clone())
                            .is_none()
                    );
                }
                if row["origin"] == "shard.example/3" {
                    assert_eq!(row["segments"].as_array().unwrap().len(), 2);
                }
            }
        }
        assert_eq!(seen.len(), 15, "{seen:?}");
        let merged = merge(d.path(), &reports, "json");
        assert_eq!(code(&merged), 1, "{}", stderr(&merged));
        let m = json_of(&merged);
        assert_eq!(m["logs"], s["logs"], "n={n}");
        assert_eq!(m["summary"], s["summary"]);
        assert_eq!(
            (&m["mode"], &m["authenticated"]),
            (&s["mode"], &s["authenticated"])
        );
        assert_eq!(m["merged"]["shards"], n);
        let reasons: Vec<&str> = m["logs"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|l| l["reason"].as_str())
            .collect();
        assert_eq!(
            reasons.iter().filter(|r| **r == "missing_log").count(),
            1,
            "{reasons:?}"
        );
        // The table is the single run's, and says it was merged.
        let t = stdout(&merge(d.path(), &reports, "table"));
        assert!(t.starts_with(&table), "{t}\n---\n{table}");
        assert!(t.contains(&format!("merged from {n} shards")));
        // ndjson: one line per log, then the summary.
        let nd = stdout(&merge(d.path(), &reports, "ndjson"));
        assert_eq!(nd.lines().count(), s["logs"].as_array().unwrap().len() + 1);
    }
}

#[test]
fn a_clean_fleet_merges_to_exit_0_and_shards_balance_by_bytes() {
    let d = tempfile::tempdir().unwrap();
    fleet(d.path(), 10);
    std::fs::remove_file(d.path().join("fleet/sub/l5.jsonl")).unwrap();
    std::fs::remove_file(d.path().join("gone.checkpoint")).unwrap();
    let args = ["verify", "fleet", "--pub", "keys.pub", "--format", "json"];
    let reports: Vec<PathBuf> = (0..2)
        .map(|i| {
            let spec = format!("{i}/2");
            let mut a = args.to_vec();
            a.extend(["--shard", &spec]);
            let out = vouch_at(&a, d.path());
            assert_eq!(code(&out), 0, "{}", stderr(&out));
            let p = d.path().join(format!("c{i}.json"));
            std::fs::write(&p, &out.stdout).unwrap();
            p
        })
        .collect();
    let bytes: Vec<u64> = reports
        .iter()
        .map(|p| {
            let v: Value = serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
            v["summary"]["bytes"].as_u64().unwrap()
        })
        .collect();
    let (lo, hi) = (bytes[0].min(bytes[1]), bytes[0].max(bytes[1]));
    assert!(hi - lo < hi / 2, "{bytes:?}");
    let merged = merge(d.path(), &reports, "json");
    assert_eq!(code(&merged), 0, "{}", stderr(&merged));
    assert_eq!(json_of(&merged)["summary"]["valid"], 9);
}

#[test]
fn incomplete_or_inconsistent_shard_sets_are_refused() {
    let d = tempfile::tempdir().unwrap();
    fleet(d.path(), 8);
    let three = run_shards(d.path(), 3, &[], "three");
    let two = run_shards(d.path(), 2, &[], "two");
    let strict = run_shards(d.path(), 3, &["--strict"], "strict");
    let refused = |reports: &[PathBuf], reason: &str| {
        let out = merge(d.path(), reports, "json");
        assert_eq!(code(&out), 2, "{reason}: {}", stdout(&out));
        let e = support::both(&out);
        assert!(e.contains(reason), "{reason}: {e}");
    };
    refused(&three[..2], "1 of 3 shards missing: 2");
    refused(
        &[
            three[0].clone(),
            three[1].clone(),
            three[1].clone(),
            three[2].clone(),
        ],
        "given twice",
    );
    refused(
        &[three[0].clone(), three[1].clone(), two[1].clone()],
        "a shard of 2",
    );
    refused(
        &[three[0].clone(), three[1].clone(), strict[2].clone()],
        "other options or keys",
    );
    // Another key set: other options.
    let k = key("shard.example/other");
    std::fs::write(d.path().join("other.pub"), k.verifier().to_text() + "\n").unwrap();
    let mut args = BASE.to_vec();
    args.extend(["--pub", "other.pub", "--format", "json", "--shard", "2/3"]);
    let out = vouch_at(&args, d.path());
    let other = d.path().join("other-2.json");
    std::fs::write(&other, &out.stdout).unwrap();
    refused(
        &[three[0].clone(), three[1].clone(), other],
        "other options or keys",
    );
    // A log added between the shard runs: another listing.
    let k = key("shard.example/late");
    writer::append(
        &d.path().join("fleet/late.jsonl"),
        &k,
        &[("event", &json!({}))],
    )
    .unwrap();
    let late = run_shards(d.path(), 3, &[], "late");
    refused(
        &[three[0].clone(), three[1].clone(), late[2].clone()],
        "another listing",
    );
    // A report made without --shard.
    let mut args = BASE.to_vec();
    args.extend(["--format", "json"]);
    let plain = d.path().join("plain.json");
    std::fs::write(&plain, vouch_at(&args, d.path()).stdout).unwrap();
    refused(std::slice::from_ref(&plain), "not a shard report");
    // Not a report at all, and a report whose rows were edited to drop a log.
    std::fs::write(d.path().join("junk.json"), "{}").unwrap();
    refused(
        &[d.path().join("junk.json")],
        "not a vouch verify JSON report",
    );
    let mut doc: Value = serde_json::from_slice(&std::fs::read(&late[0]).unwrap()).unwrap();
    doc["logs"].as_array_mut().unwrap().pop();
    let cut = d.path().join("cut.json");
    std::fs::write(&cut, doc.to_string()).unwrap();
    refused(
        &[cut, late[1].clone(), late[2].clone()],
        "not the listing they saw",
    );
    // --shard with --state, and a bad spec.
    for (args, reason) in [
        (
            vec!["verify", "fleet", "--shard", "0/2", "--state", "s.json"],
            "cannot be used with",
        ),
        (vec!["verify", "fleet", "--shard", "2/2"], "expected I/N"),
    ] {
        let out = vouch_at(&args, d.path());
        assert_eq!(code(&out), 2);
        assert!(stderr(&out).contains(reason), "{}", stderr(&out));
    }
}

/// Two logs of one origin under two names, each valid alone: an exact
/// copy, and a fork (other records signed with the log's own key). A
/// single run reads one origin's files as one log and rejects them; the
/// shards may put the two names in two shards, where each passes alone, so
/// the merge must reject them too (`split_origin`), whatever N.
#[test]
fn one_origin_split_between_shards_is_rejected_as_the_single_run_rejects_it() {
    let d = tempfile::tempdir().unwrap();
    fleet(d.path(), 6);
    let f = d.path().join("fleet");
    std::fs::copy(f.join("l0.jsonl"), f.join("copy-of-l0.jsonl")).unwrap();
    let k = key("shard.example/2");
    let fork = f.join("zz-fork-of-l2.jsonl");
    writer::append(&fork, &k, &[("event", &json!({"forged": true}))]).unwrap();
    writer::checkpoint(&fork, &k, true).unwrap();
    let mut args = BASE.to_vec();
    args.extend(["--format", "json"]);
    let single = vouch_at(&args, d.path());
    assert_eq!(code(&single), 1, "{}", stdout(&single));
    let mut split_seen = 0;
    for n in 2..=6 {
        let reports = run_shards(d.path(), n, &[], &format!("split{n}-"));
        let out = merge(d.path(), &reports, "json");
        assert_eq!(code(&out), 1, "N={n}: {}", stdout(&out));
        let doc = json_of(&out);
        for origin in ["shard.example/0", "shard.example/2"] {
            let rows: Vec<&Value> = doc["logs"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|r| r["origin"] == origin)
                .collect();
            // Split between shards: every part rejected; in one shard: the
            // shard read them as one log and rejected it.
            assert!(
                rows.iter().all(|r| r["status"] == "invalid"),
                "N={n}: {rows:?}"
            );
            if rows.len() > 1 {
                split_seen += 1;
                assert!(
                    rows.iter()
                        .all(|r| r["reason"] == "split_origin" || r["status"] == "invalid")
                );
                assert!(
                    rows.iter().any(|r| r["reason"] == "split_origin"),
                    "{rows:?}"
                );
            }
        }
    }
    assert!(split_seen > 0, "no N split an origin between shards");
}

/// Shard reports are the auditor's own record (FORMAT §21.4), but a row
/// that contradicts itself, or a mode that is not the shard's, is no
/// report vouch wrote: refused, never merged into a pass.
#[test]
fn rows_that_contradict_themselves_are_refused() {
    let d = tempfile::tempdir().unwrap();
    fleet(d.path(), 6);
    let reports = run_shards(d.path(), 2, &[], "edit");
    let made = std::cell::Cell::new(0);
    let edited = |i: usize, f: &dyn Fn(&mut Value)| {
        made.set(made.get() + 1);
        let mut doc: Value = serde_json::from_slice(&std::fs::read(&reports[i]).unwrap()).unwrap();
        f(&mut doc);
        let p = d.path().join(format!("edited-{}.json", made.get()));
        std::fs::write(&p, doc.to_string()).unwrap();
        let mut set = reports.clone();
        set[i] = p;
        set
    };
    // The tampered log (l5) is in one of the two shards.
    let (i, j) = (0..2)
        .flat_map(|i| {
            let doc: Value = serde_json::from_slice(&std::fs::read(&reports[i]).unwrap()).unwrap();
            let j = doc["logs"]
                .as_array()
                .unwrap()
                .iter()
                .position(|r| r["status"] == "invalid");
            j.map(|j| (i, j))
        })
        .next()
        .unwrap();
    let cases: Vec<(Vec<PathBuf>, &str)> = vec![
        (
            edited(i, &|d| d["logs"][j]["status"] = json!("valid")),
            "a failure is given exactly when a log is invalid",
        ),
        (
            edited(i, &|d| {
                d["logs"][j]["status"] = json!("valid");
                d["logs"][j]["failure"] = Value::Null;
                d["logs"][j]["reason"] = Value::Null;
            }),
            "valid, without a root",
        ),
        (
            edited(i, &|d| d["logs"][j]["reason"] = json!("torn_tail")),
            "not its failure's",
        ),
        (
            edited(i, &|d| d["logs"][j]["status"] = json!("partial")),
            "contradicts itself",
        ),
        (
            edited(i, &|d| {
                d["logs"][j]["path"] = json!("fleet/elsewhere.jsonl")
            }),
            "not one of its segments",
        ),
        (
            edited(i, &|d| d["mode"] = json!("chain_only")),
            "its mode is",
        ),
    ];
    for (set, why) in cases {
        let out = merge(d.path(), &set, "json");
        assert_eq!(code(&out), 2, "{why}: {}", stdout(&out));
        assert!(
            support::both(&out).contains(why),
            "{why}: {}",
            support::both(&out)
        );
    }
    // Unedited, they merge (and the tampered log rejects the fleet).
    assert_eq!(code(&merge(d.path(), &reports, "json")), 1);
}
