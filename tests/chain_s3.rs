//! `vouch verify s3://BUCKET/PREFIX/` against moto's S3 server: the same
//! rows, summary and exit code as the same files on disk; pagination;
//! bounded memory on a large object; incremental audits that read only
//! what is new; shards of a bucket merged back into the single run.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod anchor_support;
mod support;
mod tsa_support;

use anchor_support::Moto;
use serde_json::{Value, json};
use std::path::Path;
use support::{code, command, json as json_of};
use vouch::chain::writer;
use vouch::note::SignerKey;

fn key(origin: &str) -> SignerKey {
    SignerKey::from_seed(origin, &[7u8; 32]).unwrap()
}

/// Appends `n` records in batches, a checkpoint after each batch of `every`.
fn fill(path: &Path, key: &SignerKey, n: usize, every: usize, pad: usize) {
    let mut i = 0;
    while i < n {
        let m = every.min(n - i);
        let bodies: Vec<Value> = (i..i + m)
            .map(|j| json!({"i": j, "pad": "x".repeat(pad)}))
            .collect();
        let records: Vec<(&str, &Value)> = bodies.iter().map(|b| ("event", b)).collect();
        writer::append(path, key, &records).unwrap();
        writer::checkpoint(path, key, true).unwrap();
        i += m;
    }
}

/// Uploads every file under `dir` to `bucket` under `prefix`.
fn upload(moto: &Moto, dir: &Path, bucket: &str, prefix: &str) {
    moto.py(&format!(
        "import os\n\
         from boto3.s3.transfer import TransferConfig\n\
         cfg = TransferConfig(multipart_threshold=8*1024*1024)\n\
         for root, _, files in os.walk({dir:?}):\n    \
         for f in files:\n        \
         p = os.path.join(root, f)\n        \
         s3.upload_file(p, {bucket:?}, {prefix:?} + os.path.relpath(p, {dir:?}), Config=cfg)\n",
        dir = dir.to_str().unwrap()
    ));
}

fn verify(args: &[&str], moto: &Moto) -> std::process::Output {
    command()
        .args(["verify"])
        .args(args)
        .args(["--endpoint", &moto.endpoint])
        .output()
        .unwrap()
}

/// A fleet on disk: a log in rotated segments, a tampered log, a torn
/// tail, a log with no key given, a non-log file and a hidden log; returns
/// the keyset file.
fn fleet(dir: &Path) -> std::path::PathBuf {
    let mut keys = Vec::new();
    std::fs::create_dir_all(dir.join("east")).unwrap();
    for (i, name) in ["a.jsonl", "east/b.jsonl", "east/c.jsonl", "d.jsonl"]
        .iter()
        .enumerate()
    {
        let k = key(&format!("fleet.example/{i}"));
        fill(&dir.join(name), &k, 20 + 7 * i, 6, 40);
        keys.push(k.verifier().to_text());
    }
    // Rotated: app.jsonl.1 (older) and app.jsonl.
    let k = key("fleet.example/app");
    fill(&dir.join("app.jsonl"), &k, 17, 4, 40);
    // Cut at a line boundary: the first ten lines were rotated away.
    let all = std::fs::read(dir.join("app.jsonl")).unwrap();
    let cut = all
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .nth(9)
        .unwrap()
        .0
        + 1;
    std::fs::write(dir.join("app.jsonl.1"), &all[..cut]).unwrap();
    std::fs::write(dir.join("app.jsonl"), &all[cut..]).unwrap();
    keys.push(k.verifier().to_text());
    // Tampered: one record's body rewritten.
    let text = std::fs::read_to_string(dir.join("east/c.jsonl")).unwrap();
    std::fs::write(
        dir.join("east/c.jsonl"),
        text.replacen("\"i\":3,", "\"i\":9,", 1),
    )
    .unwrap();
    // Torn tail: half a record at the end.
    let mut d = std::fs::read(dir.join("d.jsonl")).unwrap();
    d.extend_from_slice(b"{\"body\":{\"i\":99");
    std::fs::write(dir.join("d.jsonl"), d).unwrap();
    // No key given for this origin: unauthenticated.
    fill(
        &dir.join("stranger.jsonl"),
        &key("fleet.example/stranger"),
        5,
        5,
        10,
    );
    std::fs::write(dir.join("notes.txt"), "not a log").unwrap();
    std::fs::write(dir.join(".hidden.jsonl"), "not read").unwrap();
    let keyset = dir.parent().unwrap().join("keys.pub");
    std::fs::write(&keyset, keys.join("\n") + "\n").unwrap();
    keyset
}

/// The rows with the location prefix cut off, so disk and bucket compare.
fn rows(doc: &Value, prefix: &str) -> Vec<Value> {
    let text = doc["logs"].to_string().replace(prefix, "");
    serde_json::from_str(&text).unwrap()
}

#[test]
fn a_bucket_verifies_as_the_same_files_on_disk() {
    let Some(moto) = Moto::start() else { return };
    let d = tempfile::tempdir().unwrap();
    let local = d.path().join("fleet");
    let keys = fleet(&local);
    moto.py("s3.create_bucket(Bucket='fleet-logs')");
    upload(&moto, &local, "fleet-logs", "prod/2026/");
    let keys = keys.to_str().unwrap();

    let disk = command()
        .args([
            "verify",
            local.to_str().unwrap(),
            "--pub",
            keys,
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    let s3 = verify(
        &[
            "s3://fleet-logs/prod/2026/",
            "--pub",
            keys,
            "--format",
            "json",
        ],
        &moto,
    );
    let (disk_doc, s3_doc) = (json_of(&disk), json_of(&s3));
    assert_eq!(code(&disk), 1, "{disk_doc}");
    assert_eq!(code(&s3), code(&disk));
    assert_eq!(
        rows(&s3_doc, "s3://fleet-logs/prod/2026/"),
        rows(&disk_doc, &format!("{}/", local.display()))
    );
    assert_eq!(s3_doc["summary"], disk_doc["summary"]);
    assert_eq!(s3_doc["summary"]["logs"], 6, "{s3_doc}");
    let reasons: Vec<&str> = s3_doc["logs"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| l["reason"].as_str())
        .collect();
    assert!(reasons.contains(&"broken_link"), "{reasons:?}");
    assert!(reasons.contains(&"torn_tail"), "{reasons:?}");
    assert!(reasons.contains(&"unknown_key"), "{reasons:?}");
    let app = s3_doc["logs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["origin"] == "fleet.example/app")
        .unwrap();
    assert_eq!(app["segments"].as_array().unwrap().len(), 2, "{app}");
    assert_eq!(app["status"], "valid");
    // What was read is reported: every byte of every log at least once.
    let bytes = s3_doc["transfer"]["bytes"].as_u64().unwrap();
    assert!(
        bytes >= s3_doc["summary"]["bytes"].as_u64().unwrap(),
        "{s3_doc}"
    );

    // One object named exactly is that object, as a file named on disk.
    let one = verify(
        &[
            "s3://fleet-logs/prod/2026/east/b.jsonl",
            "--pub",
            keys,
            "--format",
            "json",
        ],
        &moto,
    );
    assert_eq!(code(&one), 0);
    assert_eq!(json_of(&one)["summary"]["logs"], 1);
    // Mixed with a local path in one run.
    let mixed = verify(
        &[
            "s3://fleet-logs/prod/2026/east/",
            local.join("a.jsonl").to_str().unwrap(),
            "--pub",
            keys,
            "--format",
            "json",
        ],
        &moto,
    );
    assert_eq!(json_of(&mixed)["summary"]["logs"], 3);
    assert_eq!(code(&mixed), 1, "the tampered east/c.jsonl");

    // An empty prefix is not a clean pass; a missing bucket fails the run.
    let empty = verify(&["s3://fleet-logs/nothing/", "--pub", keys], &moto);
    assert_eq!(code(&empty), 2, "{}", support::both(&empty));
    assert!(support::stdout(&empty).contains("no log objects"));
    let missing = verify(&["s3://no-such-bucket/x/", "--pub", keys], &moto);
    assert_eq!(code(&missing), 2);
    assert!(
        support::stderr(&missing).contains("NoSuchBucket"),
        "{}",
        support::stderr(&missing)
    );
    // The environment's endpoint is honoured as the SDKs do.
    let env = command()
        .args([
            "verify",
            "s3://fleet-logs/prod/2026/east/b.jsonl",
            "--pub",
            keys,
        ])
        .env("AWS_ENDPOINT_URL_S3", &moto.endpoint)
        .output()
        .unwrap();
    assert_eq!(code(&env), 0, "{}", support::both(&env));
}

#[test]
fn a_listing_of_many_pages_is_read_to_its_end() {
    let Some(moto) = Moto::start() else { return };
    let d = tempfile::tempdir().unwrap();
    // 1,010 logs of their own origins: more than one page (1,000 keys).
    let n = 1010;
    let bodies = json!({"e": 1});
    for i in 0..n {
        let k = key(&format!("page.example/{i}"));
        let p = d.path().join(format!("l{i:04}.jsonl"));
        writer::append(&p, &k, &[("event", &bodies)]).unwrap();
    }
    moto.py("s3.create_bucket(Bucket='pages')");
    upload(&moto, d.path(), "pages", "");
    let out = verify(&["s3://pages", "--chain-only", "--format", "json"], &moto);
    let doc = json_of(&out);
    assert_eq!(code(&out), 0, "{}", support::stderr(&out));
    assert_eq!(doc["summary"]["logs"], n);
    assert_eq!(doc["summary"]["unauthenticated"], n);
    // Two listing pages at least, and one read per object besides.
    assert!(
        doc["transfer"]["requests"].as_u64().unwrap() >= 2 + n as u64,
        "{}",
        doc["transfer"]
    );
}

/// Runs the command and samples its peak RSS (KiB) from /proc.
fn peak_rss(mut cmd: std::process::Command) -> (std::process::Output, u64) {
    let child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let status = format!("/proc/{}/status", child.id());
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = done.clone();
    let sampler = std::thread::spawn(move || {
        let mut peak = 0u64;
        while !flag.load(std::sync::atomic::Ordering::Relaxed) {
            if let Ok(text) = std::fs::read_to_string(&status)
                && let Some(kb) = text
                    .lines()
                    .find_map(|l| l.strip_prefix("VmHWM:"))
                    .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            {
                peak = peak.max(kb);
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        peak
    });
    let out = child.wait_with_output().unwrap();
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    (out, sampler.join().unwrap())
}

#[test]
fn a_large_object_is_read_in_bounded_memory_and_incrementally() {
    let Some(moto) = Moto::start() else { return };
    let d = tempfile::tempdir().unwrap();
    let k = key("big.example/log");
    std::fs::write(d.path().join("k.pub"), k.verifier().to_text() + "\n").unwrap();
    let log = d.path().join("logs/big.jsonl");
    std::fs::create_dir_all(log.parent().unwrap()).unwrap();
    fill(&log, &k, 160_000, 20_000, 300); // about 60 MB
    let size = std::fs::metadata(&log).unwrap().len();
    assert!(size > 50 << 20, "{size}");
    moto.py("s3.create_bucket(Bucket='big')");
    upload(&moto, &d.path().join("logs"), "big", "l/");
    let pubkey = d.path().join("k.pub");
    let state = d.path().join("state.json");
    let args = |extra: &[&str]| {
        let mut c = command();
        c.args([
            "verify",
            "s3://big/l/",
            "--endpoint",
            &moto.endpoint,
            "--format",
            "json",
        ])
        .args([
            "--pub",
            pubkey.to_str().unwrap(),
            "--state",
            state.to_str().unwrap(),
        ])
        .args(extra);
        c
    };
    let (out, peak_kb) = peak_rss(args(&["--threads", "2"]));
    let doc = json_of(&out);
    assert_eq!(code(&out), 0, "{doc}");
    assert_eq!(doc["summary"]["records"], 160_000 + 8);
    // Memory does not grow with the object: a few blocks per worker.
    assert!(
        peak_kb * 1024 < size / 2,
        "peak {peak_kb} KiB for {size} bytes"
    );

    // Grown (a new version, longer): only the new bytes, the last record,
    // the resume point and the rolling window are read.
    fill(&log, &k, 500, 500, 300);
    let grown = std::fs::metadata(&log).unwrap().len();
    upload(&moto, &d.path().join("logs"), "big", "l/");
    let out = args(&[]).output().unwrap();
    let doc = json_of(&out);
    assert_eq!(code(&out), 0, "{doc}");
    assert_eq!(doc["logs"][0]["resumed_from"], 160_008, "{doc}");
    let read = doc["transfer"]["bytes"].as_u64().unwrap();
    let new = grown - size;
    assert!(read >= new, "{read} < {new}");
    // The window is as large as the new data, at least one range (8 MiB).
    assert!(
        read < new + (8 << 20) + (1 << 20),
        "read {read} of {grown} for {new} new"
    );

    // A version of the same size with one record changed: verified in
    // full (its ETag changed), and the change is found.
    let mut bytes = std::fs::read(&log).unwrap();
    let at = bytes.len() / 3;
    let at = at + bytes[at..].windows(4).position(|w| w == b"\"i\":").unwrap() + 4;
    bytes[at] = if bytes[at] == b'1' { b'2' } else { b'1' };
    std::fs::write(&log, &bytes).unwrap();
    upload(&moto, &d.path().join("logs"), "big", "l/");
    let out = args(&[]).output().unwrap();
    let doc = json_of(&out);
    assert_eq!(code(&out), 1, "{doc}");
    assert_eq!(doc["logs"][0]["resumed_from"], Value::Null, "{doc}");

    // A shorter version than was verified: truncated.
    std::fs::write(&log, &bytes[..bytes.len() / 2]).unwrap();
    upload(&moto, &d.path().join("logs"), "big", "l/");
    let out = args(&[]).output().unwrap();
    assert_eq!(code(&out), 1);
}

#[test]
fn shards_of_a_bucket_merge_into_the_single_run() {
    let Some(moto) = Moto::start() else { return };
    let d = tempfile::tempdir().unwrap();
    let local = d.path().join("fleet");
    let keys = fleet(&local);
    let keys = keys.to_str().unwrap();
    moto.py("s3.create_bucket(Bucket='shards')");
    upload(&moto, &local, "shards", "f/");
    let single = verify(
        &["s3://shards/f/", "--pub", keys, "--format", "json"],
        &moto,
    );
    let mut reports = Vec::new();
    for i in 0..3 {
        let out = verify(
            &[
                "s3://shards/f/",
                "--pub",
                keys,
                "--format",
                "json",
                "--shard",
                &format!("{i}/3"),
            ],
            &moto,
        );
        assert!(code(&out) <= 1, "{}", support::stderr(&out));
        let p = d.path().join(format!("shard-{i}.json"));
        std::fs::write(&p, &out.stdout).unwrap();
        reports.push(p.to_str().unwrap().to_owned());
    }
    let mut merge = vec!["verify", "--format", "json", "--merge"];
    merge.extend(reports.iter().map(String::as_str));
    let merged = command().args(&merge).output().unwrap();
    assert_eq!(code(&merged), code(&single));
    let (m, s) = (json_of(&merged), json_of(&single));
    assert_eq!(m["logs"], s["logs"]);
    assert_eq!(m["summary"], s["summary"]);
    assert_eq!(m["exit_code"], s["exit_code"]);
    assert_eq!(m["merged"]["shards"], 3);
}

/// In a bucket one key can name an object and a folder at once (`logs`
/// and `logs/...`), which a file system cannot. `s3://b/logs` names both:
/// the object and every log under `logs/` are verified, so an object
/// copied to a folder's name cannot hide the folder's tampered log.
#[test]
fn an_object_named_like_a_folder_does_not_hide_the_folder() {
    let Some(moto) = Moto::start() else { return };
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("logs");
    std::fs::create_dir_all(&dir).unwrap();
    let keyset = fleet(&dir);
    moto.py("s3.create_bucket(Bucket='shadow')");
    upload(&moto, &dir, "shadow", "logs/");
    // A valid log copied to the key `logs` itself.
    moto.py(&format!(
        "s3.upload_file({:?}, 'shadow', 'logs')",
        dir.join("a.jsonl").to_str().unwrap()
    ));
    let keys = keyset.to_str().unwrap();
    let out = verify(
        &["s3://shadow/logs", "--pub", keys, "--format", "json"],
        &moto,
    );
    let doc = json_of(&out);
    assert_eq!(code(&out), 1, "{doc}");
    let paths: Vec<&str> = doc["logs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert!(paths.contains(&"s3://shadow/logs"), "{paths:?}");
    assert!(
        paths.contains(&"s3://shadow/logs/east/c.jsonl"),
        "{paths:?}"
    );
    let c = doc["logs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["path"] == "s3://shadow/logs/east/c.jsonl")
        .unwrap();
    assert_eq!(c["status"], "invalid");
    // Alone (no folder under it), the object is verified as one file.
    moto.py(&format!(
        "s3.upload_file({:?}, 'shadow', 'single')",
        dir.join("a.jsonl").to_str().unwrap()
    ));
    let out = verify(
        &["s3://shadow/single", "--pub", keys, "--format", "json"],
        &moto,
    );
    assert_eq!(code(&out), 0, "{}", support::stdout(&out));
    assert_eq!(json_of(&out)["summary"]["logs"], 1);
    // A location named twice, with and without its slash, is verified
    // once and is not an empty prefix the second time.
    let once = verify(
        &["s3://shadow/logs/east/", "--pub", keys, "--format", "json"],
        &moto,
    );
    let twice = verify(
        &[
            "s3://shadow/logs/east/",
            "s3://shadow/logs/east",
            "--pub",
            keys,
            "--format",
            "json",
        ],
        &moto,
    );
    assert_eq!(code(&twice), code(&once), "{}", support::stdout(&twice));
    assert_eq!(json_of(&twice)["logs"], json_of(&once)["logs"]);
    assert_eq!(json_of(&twice)["summary"], json_of(&once)["summary"]);
}

/// Found by an independent attack: when all an object had gained since the
/// state was an unterminated tail, the resumed run judged the tail without
/// the remembered last record, and a tail naming another origin passed as
/// torn (exit 0) where a full read is `trailing_data` (exit 1).
#[test]
fn a_tail_that_is_all_an_object_gained_is_judged_against_the_pinned_record() {
    let Some(moto) = Moto::start() else { return };
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("logs");
    std::fs::create_dir_all(&dir).unwrap();
    let k = key("example.com/s3tail");
    let log = dir.join("a.jsonl");
    fill(&log, &k, 20, 10, 40);
    let keys = d.path().join("keys.pub");
    std::fs::write(&keys, format!("{}\n", k.verifier().to_text())).unwrap();
    moto.py("s3.create_bucket(Bucket='tails')");
    upload(&moto, &dir, "tails", "logs/");
    let state = d.path().join("st.json");
    let args = |recheck: &'static str| -> Vec<String> {
        let mut a = vec![
            "s3://tails/logs/".to_string(),
            "--pub".into(),
            keys.to_str().unwrap().into(),
            "--state".into(),
            state.to_str().unwrap().into(),
            "--format".into(),
            "json".into(),
        ];
        if !recheck.is_empty() {
            a.extend(["--recheck".to_string(), recheck.to_string()]);
        }
        a
    };
    let run = |a: &[String]| {
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        verify(&a, &moto)
    };
    assert_eq!(code(&run(&args(""))), 0);
    let clean = std::fs::read(&log).unwrap();
    for (tail, expect, reason) in [
        (
            &b"{\"body\":{\"i\":20},\"kind\":\"event\",\"origin\":\"example.com/s3ta"[..],
            0,
            "torn_tail",
        ),
        (
            &b"{\"body\":{\"i\":20},\"kind\":\"event\",\"origin\":\"example.com/zz\",\"prev\":\""[..],
            1,
            "trailing_data",
        ),
    ] {
        let mut bytes = clean.clone();
        bytes.extend_from_slice(tail);
        std::fs::write(&log, &bytes).unwrap();
        upload(&moto, &dir, "tails", "logs/");
        for recheck in ["", "all"] {
            let out = run(&args(recheck));
            let doc = json_of(&out);
            assert_eq!(code(&out), expect, "{recheck}: {doc}");
            assert_eq!(doc["logs"][0]["reason"], reason, "{recheck}: {doc}");
            assert!(doc["logs"][0]["resumed_from"].is_u64(), "{doc}");
        }
    }
}
