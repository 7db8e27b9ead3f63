//! `vouch receipt verify --online`: each storage anchor of a receipt is
//! fetched from the auditor's targets (`--from`) through the auditor's
//! endpoint and compared with the anchored note and the recorded lock. A
//! target changed after anchoring (object version deleted or replaced,
//! retention shortened, mode weakened, legal hold removed; a dir file
//! replaced, removed, made writable) makes the receipt `rejected`; a
//! locator outside the targets is `anchor_not_checked`; an unreachable
//! target is exit 2; the endpoint recorded in the receipt is never used.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod anchor_support;
mod support;
mod tsa_support;

use anchor_support::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn make(w: &Work, seq: u64) -> PathBuf {
    let out = w.path(&format!("receipt-{seq}.json"));
    let seq = seq.to_string();
    let o = vouch(&[
        "receipt",
        Work::s(&w.log),
        "--seq",
        &seq,
        "--out",
        Work::s(&out),
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    out
}

/// `receipt verify FILE --pub KEY.pub --format json <extra>`, with `env`.
fn verify_env(w: &Work, r: &Path, extra: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut args = vec![
        "receipt",
        "verify",
        Work::s(r),
        "--pub",
        Work::s(&w.pubkey),
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    // No endpoint from the test runner's environment unless asked.
    let mut all = vec![("AWS_ENDPOINT_URL_S3", ""), ("AWS_ENDPOINT_URL", "")];
    all.extend_from_slice(env);
    vouch_env(&args, &all)
}

fn verify(w: &Work, r: &Path, extra: &[&str]) -> std::process::Output {
    verify_env(w, r, extra, &[])
}

/// The one piece whose name starts with `prefix`.
fn piece<'a>(out: &'a Value, prefix: &str) -> &'a Value {
    let found: Vec<&Value> = out["pieces"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["piece"].as_str().unwrap().starts_with(prefix))
        .collect();
    assert_eq!(found.len(), 1, "pieces {prefix}: {out}");
    found[0]
}

/// Asserts exit code, verdict, and the status and reason of the anchor
/// piece `name`.
#[track_caller]
fn expect(
    o: &std::process::Output,
    exit: i32,
    verdict: &str,
    name: &str,
    status: &str,
    reason: Option<&str>,
) -> Value {
    let out = json(o);
    assert_eq!(code(o), exit, "{out}");
    assert_eq!(out["exit_code"], exit, "{out}");
    assert_eq!(out["verdict"], verdict, "{out}");
    let p = piece(&out, name);
    assert_eq!(p["status"], status, "{out}");
    match reason {
        Some(r) => assert_eq!(p["reason"], r, "{out}"),
        None => assert!(p.get("reason").is_none(), "{out}"),
    }
    out
}

/// The first entry of the receipt's first anchor record.
fn entry(r: &Path) -> Value {
    let doc: Value = serde_json::from_slice(&std::fs::read(r).unwrap()).unwrap();
    let rec: Value = serde_json::from_str(doc["anchors"][0]["record"].as_str().unwrap()).unwrap();
    rec["body"]["anchors"][0].clone()
}

/// A log of 3 records anchored to `s3://BUCKET/receipts` on moto with
/// `extra` lock options, and its receipt for record 1, checked complete
/// online. Returns the log, the receipt and the anchored (key, version).
#[cfg(feature = "s3")]
fn s3_anchored(m: &Moto, bucket: &str, extra: &[&str]) -> (Work, PathBuf, String, String) {
    m.lock_bucket(bucket);
    let w = Work::new(3);
    let to = format!("s3://{bucket}/receipts");
    let mut args = vec!["--to", to.as_str(), "--endpoint", m.endpoint.as_str()];
    args.extend_from_slice(extra);
    let o = w.anchor(&args);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let r = make(&w, 1);
    let e = entry(&r);
    assert_eq!(e["bucket"], bucket);
    let online = online_args(m, bucket);
    let o = verify(&w, &r, &strs(&online));
    expect(&o, 0, "complete", "anchor 0.0 s3", "verified", None);
    (
        w,
        r,
        e["key"].as_str().unwrap().to_owned(),
        e["version_id"].as_str().unwrap().to_owned(),
    )
}

#[cfg(feature = "s3")]
fn online_args(m: &Moto, bucket: &str) -> Vec<String> {
    vec![
        "--online".into(),
        "--from".into(),
        format!("s3://{bucket}/receipts"),
        "--endpoint".into(),
        m.endpoint.clone(),
    ]
}

#[cfg(feature = "s3")]
fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
#[cfg(feature = "s3")]
fn s3_online_rejects_a_changed_anchor_object() {
    let Some(m) = Moto::start() else { return };

    // The anchored version deleted (GOVERNANCE, with the bypass).
    let (w, r, key, version) =
        s3_anchored(&m, "gone", &["--mode", "governance", "--retain-days", "2"]);
    let done = m.py(&format!(
        "print(err(lambda: s3.delete_object(Bucket='gone', Key='{key}', VersionId='{version}', BypassGovernanceRetention=True)))"
    ));
    assert_eq!(done, "OK");
    let online = online_args(&m, "gone");
    let o = verify(&w, &r, &strs(&online));
    let out = expect(
        &o,
        1,
        "rejected",
        "anchor 0.0 s3",
        "failed",
        Some("anchor_missing"),
    );
    assert_eq!(out["reason"], "anchor_missing");
    // Offline nothing can be seen: still a locator.
    let o = verify(&w, &r, &[]);
    expect(
        &o,
        1,
        "anchor_not_checked",
        "anchor 0.0 s3",
        "not_checked",
        Some("offline"),
    );

    // Replaced: the version deleted and other bytes put under the key.
    let (w, r, key, version) = s3_anchored(
        &m,
        "replaced",
        &["--mode", "governance", "--retain-days", "2"],
    );
    m.py(&format!(
        "s3.delete_object(Bucket='replaced', Key='{key}', VersionId='{version}', BypassGovernanceRetention=True)\n\
         until = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=9)\n\
         s3.put_object(Bucket='replaced', Key='{key}', Body=b'forged note', ObjectLockMode='COMPLIANCE', ObjectLockRetainUntilDate=until, ChecksumAlgorithm='SHA256')"
    ));
    let versions = m.py(&format!(
        "print(len(s3.list_object_versions(Bucket='replaced', Prefix='{key}')['Versions']))"
    ));
    assert_eq!(versions, "1");
    let o = verify(&w, &r, &strs(&online_args(&m, "replaced")));
    expect(
        &o,
        1,
        "rejected",
        "anchor 0.0 s3",
        "failed",
        Some("anchor_missing"),
    );

    // Retention shortened (GOVERNANCE, with the bypass).
    let (w, r, key, version) = s3_anchored(
        &m,
        "shortened",
        &["--mode", "governance", "--retain-days", "3"],
    );
    m.py(&format!(
        "until = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=1)\n\
         s3.put_object_retention(Bucket='shortened', Key='{key}', VersionId='{version}', Retention={{'Mode': 'GOVERNANCE', 'RetainUntilDate': until}}, BypassGovernanceRetention=True)"
    ));
    let o = verify(&w, &r, &strs(&online_args(&m, "shortened")));
    expect(
        &o,
        1,
        "rejected",
        "anchor 0.0 s3",
        "failed",
        Some("retention_shortened"),
    );

    // COMPLIANCE weakened to GOVERNANCE (moto allows it, AWS would not),
    // with a later retain-until: only the mode is weaker.
    let (w, r, key, version) = s3_anchored(&m, "weakened", &["--retain-days", "3"]);
    assert_eq!(entry(&r)["lock_mode"], "COMPLIANCE");
    let changed = m.py(&format!(
        "until = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=5)\n\
         print(err(lambda: s3.put_object_retention(Bucket='weakened', Key='{key}', VersionId='{version}', Retention={{'Mode': 'GOVERNANCE', 'RetainUntilDate': until}})))"
    ));
    assert_eq!(changed, "OK", "moto lets COMPLIANCE be weakened");
    let o = verify(&w, &r, &strs(&online_args(&m, "weakened")));
    expect(
        &o,
        1,
        "rejected",
        "anchor 0.0 s3",
        "failed",
        Some("lock_weakened"),
    );

    // The legal hold removed.
    let (w, r, key, version) = s3_anchored(
        &m,
        "hold",
        &["--mode", "governance", "--retain-days", "2", "--legal-hold"],
    );
    assert_eq!(entry(&r)["legal_hold"], true);
    m.py(&format!(
        "s3.put_object_legal_hold(Bucket='hold', Key='{key}', VersionId='{version}', LegalHold={{'Status': 'OFF'}})"
    ));
    let o = verify(&w, &r, &strs(&online_args(&m, "hold")));
    expect(
        &o,
        1,
        "rejected",
        "anchor 0.0 s3",
        "failed",
        Some("legal_hold_removed"),
    );
    // A receipt whose target changed is rejected even with
    // --allow-unanchored.
    let mut allow = online_args(&m, "hold");
    allow.push("--allow-unanchored".into());
    assert_eq!(code(&verify(&w, &r, &strs(&allow))), 1);
}

#[test]
#[cfg(feature = "s3")]
fn s3_online_follows_only_the_auditors_targets_and_endpoint() {
    let Some(m) = Moto::start() else { return };
    m.lock_bucket("decoy");

    // Anchored through a TCP relay to moto, so the recorded endpoint is
    // the relay's; then the relay stops forwarding and only counts.
    let relay = Relay::start(&m.endpoint);
    let (w, r) = {
        m.lock_bucket("anchors");
        let w = Work::new(3);
        let o = w.anchor(&[
            "--to",
            "s3://anchors/receipts",
            "--endpoint",
            &relay.endpoint,
            "--retain-days",
            "1",
        ]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let r = make(&w, 1);
        (w, r)
    };
    assert_eq!(entry(&r)["endpoint"], relay.endpoint.as_str());
    assert!(relay.connections() > 0, "the anchor went through the relay");
    relay.stop_forwarding();
    let before = relay.connections();

    // The auditor's endpoint (argument): verified, the relay not contacted.
    let online = online_args(&m, "anchors");
    let o = verify(&w, &r, &strs(&online));
    expect(&o, 0, "complete", "anchor 0.0 s3", "verified", None);
    // The auditor's endpoint (environment): the same.
    for var in ["AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"] {
        let o = verify_env(
            &w,
            &r,
            &["--online", "--from", "s3://anchors/receipts"],
            &[(var, m.endpoint.as_str())],
        );
        expect(&o, 0, "complete", "anchor 0.0 s3", "verified", None);
    }
    // The auditor's endpoint unreachable: exit 2, never the recorded one.
    let dead = format!("http://127.0.0.1:{}", free_port());
    let o = verify(
        &w,
        &r,
        &[
            "--online",
            "--from",
            "s3://anchors/receipts",
            "--endpoint",
            &dead,
        ],
    );
    let out = expect(
        &o,
        2,
        "anchor_not_checked",
        "anchor 0.0 s3",
        "error",
        Some("remote_error"),
    );
    assert_eq!(out["reason"], "anchor_not_checked", "{out}");
    let o = verify(
        &w,
        &r,
        &[
            "--online",
            "--from",
            "s3://anchors/receipts",
            "--endpoint",
            &dead,
            "--allow-unanchored",
        ],
    );
    assert_eq!(code(&o), 2, "{}", stdout(&o));
    // No endpoint at all (no --endpoint, none in the environment): AWS's
    // own, never the recorded one. A region no AWS host exists for keeps
    // the request from reaching AWS (its host name does not resolve).
    let o = verify(
        &w,
        &r,
        &[
            "--online",
            "--from",
            "s3://anchors/receipts",
            "--region",
            "vouch-test-nowhere-1",
        ],
    );
    expect(
        &o,
        2,
        "anchor_not_checked",
        "anchor 0.0 s3",
        "error",
        Some("remote_error"),
    );
    assert_eq!(
        relay.connections(),
        before,
        "the recorded endpoint was contacted"
    );

    // Targets that do not hold the locator: another bucket, another
    // prefix of the right bucket. Not checked (exit 1; 0 with
    // --allow-unanchored).
    for from in [
        "s3://decoy/receipts",
        "s3://decoy",
        "s3://anchors/other",
        "s3://anchors-2/receipts",
    ] {
        let args = [
            "--online",
            "--from",
            from,
            "--endpoint",
            m.endpoint.as_str(),
        ];
        let o = verify(&w, &r, &args);
        expect(
            &o,
            1,
            "anchor_not_checked",
            "anchor 0.0 s3",
            "not_checked",
            Some("outside_targets"),
        );
        let mut allow = args.to_vec();
        allow.push("--allow-unanchored");
        assert_eq!(code(&verify(&w, &r, &allow)), 0, "{from}");
    }
    // A dir target does not hold an S3 locator either; with the right
    // bucket as well, it is checked.
    let o = verify(
        &w,
        &r,
        &["--online", "--from", "dir:/tmp", "--endpoint", &m.endpoint],
    );
    expect(
        &o,
        1,
        "anchor_not_checked",
        "anchor 0.0 s3",
        "not_checked",
        Some("outside_targets"),
    );
    let o = verify(
        &w,
        &r,
        &[
            "--online",
            "--from",
            "dir:/tmp",
            "--from",
            "s3://anchors",
            "--endpoint",
            &m.endpoint,
        ],
    );
    expect(&o, 0, "complete", "anchor 0.0 s3", "verified", None);
    assert_eq!(
        relay.connections(),
        before,
        "the recorded endpoint was contacted"
    );
}

#[test]
#[cfg(feature = "s3")]
fn s3_unreachable_with_a_verified_tsa_anchor_is_complete() {
    let Some(m) = Moto::start() else { return };
    let Some(tsa) = local_tsa("s3_unreachable_with_a_verified_tsa_anchor_is_complete") else {
        return;
    };
    m.lock_bucket("mixed");
    let w = Work::new(3);
    let roots = Work::s(&tsa.roots);
    let o = w.anchor(&[
        "--to",
        "s3://mixed/r",
        "--to",
        &format!("tsa:{}", tsa.url),
        "--tsa-ca",
        roots,
        "--endpoint",
        &m.endpoint,
        "--retain-days",
        "1",
        "--mode",
        "governance",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let r = make(&w, 0);
    let dead = format!("http://127.0.0.1:{}", free_port());
    // The S3 target unreachable, the token verified: complete, exit 0.
    let o = verify(
        &w,
        &r,
        &[
            "--tsa-ca",
            roots,
            "--online",
            "--from",
            "s3://mixed/r",
            "--endpoint",
            &dead,
        ],
    );
    let out = expect(
        &o,
        0,
        "complete",
        "anchor 0.0 s3",
        "error",
        Some("remote_error"),
    );
    assert_eq!(piece(&out, "anchor 0.1 tsa")["status"], "verified");
    // Without roots the token is not checked: nothing verified, one
    // target unreachable: exit 2.
    let o = verify(
        &w,
        &r,
        &["--online", "--from", "s3://mixed/r", "--endpoint", &dead],
    );
    let out = expect(
        &o,
        2,
        "anchor_not_checked",
        "anchor 0.0 s3",
        "error",
        Some("remote_error"),
    );
    assert_eq!(piece(&out, "anchor 0.1 tsa")["reason"], "no_tsa_roots");
    // Both checked: complete.
    let o = verify(
        &w,
        &r,
        &[
            "--tsa-ca",
            roots,
            "--online",
            "--from",
            "s3://mixed/r",
            "--endpoint",
            &m.endpoint,
        ],
    );
    expect(&o, 0, "complete", "anchor 0.0 s3", "verified", None);
    // The S3 version deleted: one anchor failed beats one verified.
    let e = entry(&r);
    m.py(&format!(
        "s3.delete_object(Bucket='mixed', Key='{}', VersionId='{}', BypassGovernanceRetention=True)",
        e["key"].as_str().unwrap(),
        e["version_id"].as_str().unwrap()
    ));
    let o = verify(
        &w,
        &r,
        &[
            "--tsa-ca",
            roots,
            "--online",
            "--from",
            "s3://mixed/r",
            "--endpoint",
            &m.endpoint,
        ],
    );
    let out = expect(
        &o,
        1,
        "rejected",
        "anchor 0.0 s3",
        "failed",
        Some("anchor_missing"),
    );
    assert_eq!(piece(&out, "anchor 0.1 tsa")["status"], "verified");
    // Offline (TSA only) it still is complete: the token is evidence on
    // its own; the S3 locator is not checked.
    let o = verify(&w, &r, &["--tsa-ca", roots]);
    expect(
        &o,
        0,
        "complete",
        "anchor 0.0 s3",
        "not_checked",
        Some("offline"),
    );
}

/// Whether the immutable attribute is set on `p`.
fn immutable(p: &Path) -> bool {
    std::process::Command::new("lsattr")
        .arg("-d")
        .arg(p)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .is_some_and(|o| {
            String::from_utf8_lossy(&o.stdout)
                .split_whitespace()
                .next()
                .is_some_and(|f| f.contains('i'))
        })
}

fn chattr(flag: &str, p: &Path) {
    let ok = std::process::Command::new("chattr")
        .arg(flag)
        .arg(p)
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "chattr {flag} {}", p.display());
}

fn set_mode(p: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn dir_online_rejects_a_replaced_removed_or_writable_file() {
    let w = Work::new(3);
    let d = w.path("worm");
    std::fs::create_dir(&d).unwrap();
    let t = format!("dir:{}", d.display());
    let o = w.anchor(&["--to", &t]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let r = make(&w, 1);
    let e = entry(&r);
    let file = d.join(e["file"].as_str().unwrap());
    let note = std::fs::read(&file).unwrap();
    // Recorded as written: read-only, immutable when vouch could set it.
    assert_eq!(e["mode"], 0o444);
    let was_immutable = e["immutable"].as_bool().unwrap();
    assert_eq!(was_immutable, immutable(&file));
    let online = ["--online", "--from", t.as_str()];
    let ok = || {
        let o = verify(&w, &r, &online);
        expect(&o, 0, "complete", "anchor 0.0 dir", "verified", None);
    };
    ok();
    // Puts the file back as vouch left it.
    let restore = || {
        if file.exists() && immutable(&file) {
            chattr("-i", &file);
        }
        let _ = std::fs::remove_file(&file);
        std::fs::write(&file, &note).unwrap();
        set_mode(&file, 0o444);
        if was_immutable {
            chattr("+i", &file);
        }
        ok();
    };
    let unlock = || {
        if was_immutable {
            chattr("-i", &file);
        }
    };
    let rejected = |reason: &str| {
        let o = verify(&w, &r, &online);
        expect(&o, 1, "rejected", "anchor 0.0 dir", "failed", Some(reason));
        // Offline the change cannot be seen.
        let o = verify(&w, &r, &[]);
        expect(
            &o,
            1,
            "anchor_not_checked",
            "anchor 0.0 dir",
            "not_checked",
            Some("offline"),
        );
    };

    // Replaced by other bytes, read-only and immutable again.
    unlock();
    std::fs::remove_file(&file).unwrap();
    std::fs::write(&file, b"another note\n").unwrap();
    set_mode(&file, 0o444);
    if was_immutable {
        chattr("+i", &file);
    }
    rejected("anchor_replaced");
    restore();

    // Removed.
    unlock();
    std::fs::remove_file(&file).unwrap();
    rejected("anchor_missing");
    restore();

    // Made writable (same bytes).
    unlock();
    set_mode(&file, 0o644);
    rejected("lock_weakened");
    restore();

    // The immutable attribute removed (same bytes, still read-only).
    if was_immutable {
        unlock();
        rejected("lock_weakened");
        restore();
    } else {
        eprintln!(
            "NOTICE: the immutable attribute could not be set here; its removal is not tested"
        );
    }

    // A symlink to a file with the right bytes is not the anchored file.
    let copy = w.path("copy.note");
    std::fs::write(&copy, &note).unwrap();
    set_mode(&copy, 0o444);
    unlock();
    std::fs::remove_file(&file).unwrap();
    std::os::unix::fs::symlink(&copy, &file).unwrap();
    rejected("anchor_replaced");
    std::fs::remove_file(&file).unwrap();
    restore();

    // The whole directory gone (unmounted): the target cannot be asked,
    // which is an operational error, not a missing anchor (exit 2).
    unlock();
    let moved = w.path("worm-moved");
    std::fs::rename(&d, &moved).unwrap();
    let o = verify(&w, &r, &online);
    expect(
        &o,
        2,
        "anchor_not_checked",
        "anchor 0.0 dir",
        "error",
        Some("io_error"),
    );
    // The same files below another directory named with --from: the
    // locator names the recorded directory, so it is not checked there.
    let o = verify(
        &w,
        &r,
        &["--online", "--from", &format!("dir:{}", moved.display())],
    );
    expect(
        &o,
        1,
        "anchor_not_checked",
        "anchor 0.0 dir",
        "not_checked",
        Some("outside_targets"),
    );
    std::fs::rename(&moved, &d).unwrap();
    restore();
}

/// A TCP relay on 127.0.0.1 to another endpoint that counts connections;
/// once told to stop forwarding it only counts and closes them.
#[cfg(feature = "s3")]
struct Relay {
    endpoint: String,
    connections: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    forward: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

#[cfg(feature = "s3")]
impl Relay {
    fn start(to: &str) -> Relay {
        use std::sync::atomic::Ordering;
        let to = to.strip_prefix("http://").unwrap().to_owned();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        let connections = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let forward = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
        let (count, fwd) = (connections.clone(), forward.clone());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                count.fetch_add(1, Ordering::SeqCst);
                if !fwd.load(Ordering::SeqCst) {
                    drop(client);
                    continue;
                }
                let Ok(server) = std::net::TcpStream::connect(&to) else {
                    continue;
                };
                let pipe = |mut from: std::net::TcpStream, mut to: std::net::TcpStream| {
                    std::thread::spawn(move || {
                        let _ = std::io::copy(&mut from, &mut to);
                        let _ = to.shutdown(std::net::Shutdown::Write);
                    });
                };
                pipe(client.try_clone().unwrap(), server.try_clone().unwrap());
                pipe(server, client);
            }
        });
        Relay {
            endpoint,
            connections,
            forward,
        }
    }

    fn connections(&self) -> usize {
        self.connections.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn stop_forwarding(&self) {
        self.forward
            .store(false, std::sync::atomic::Ordering::SeqCst);
    }
}
