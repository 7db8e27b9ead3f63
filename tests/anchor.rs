//! End-to-end tests of `vouch anchor`, `anchor verify` and `anchor doctor`
//! through the real binary: `dir:` targets on the local file system, and
//! `s3://` targets on moto's standalone S3 server (which enforces Object
//! Lock) started on 127.0.0.1 from `.venv` (scripts/setup-test-env.sh).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod anchor_support;
mod support;
mod tsa_support;

use anchor_support::*;
use std::process::Command;

fn dir_target(w: &Work) -> (std::path::PathBuf, String) {
    let d = w.path("worm");
    std::fs::create_dir(&d).unwrap();
    let t = format!("dir:{}", d.display());
    (d, t)
}

fn anchor_records(w: &Work) -> usize {
    w.kinds().iter().filter(|k| *k == "anchor").count()
}

fn chattr(flag: &str, path: &std::path::Path) {
    let _ = Command::new("chattr").arg(flag).arg(path).status();
}

#[test]
fn dir_anchor_records_everything_and_verifies() {
    let w = Work::new(3);
    let (d, t) = dir_target(&w);
    let o = w.anchor(&["--to", &t]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let out = json(&o);
    assert_eq!(out["size"], 3);
    // A checkpoint was signed (seq 3) and the anchor recorded after it.
    assert_eq!(
        w.kinds(),
        [
            "event",
            "event",
            "event",
            "checkpoint",
            "anchor",
            "checkpoint"
        ]
    );
    assert_eq!(out["covering_checkpoint_seq"], 5);
    let rec: serde_json::Value = serde_json::from_str(&w.lines()[4]).unwrap();
    let body = &rec["body"];
    assert_eq!(body["size"], 3);
    assert_eq!(body["origin"], ORIGIN);
    assert!(body["note"].as_str().unwrap().starts_with(ORIGIN));
    let a = &body["anchors"][0];
    assert_eq!(a["type"], "dir");
    assert_eq!(a["mode"].as_u64().unwrap() & 0o222, 0, "read-only");
    let file = anchored_file(&d);
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        body["note"].as_str().unwrap()
    );
    // Whether the immutable attribute was set is recorded truthfully.
    let lsattr = Command::new("lsattr")
        .arg("-d")
        .arg(&file)
        .output()
        .unwrap();
    let is_immutable = String::from_utf8_lossy(&lsattr.stdout)
        .split_whitespace()
        .next()
        .is_some_and(|f| f.contains('i'));
    assert_eq!(a["immutable"].as_bool().unwrap(), is_immutable);

    let v = w.verify(&["--from", &t]);
    assert_eq!(code(&v), 0, "{}", stdout(&v));
    let report = one(&v);
    assert_eq!(report["anchors"][0]["status"], "verified");
    assert_eq!(report["verdict"], "consistent");
    assert_eq!(report["truncation_checked"], true);
    // Without a target of the auditor's, the recorded location is not
    // followed and nothing is claimed about it.
    let v = w.verify(&[]);
    assert_eq!(code(&v), 1, "{}", stdout(&v));
    let report = one(&v);
    assert_eq!(report["verdict"], "incomplete");
    assert_eq!(report["anchors"][0]["status"], "not_checked");
    assert_eq!(report["anchors"][0]["reason"], "outside_targets");
    // The anchor record is covered at once by a new checkpoint.
    assert_eq!(report["log"]["status"], "valid");

    // Anchoring again right away reuses nothing stale: a new checkpoint
    // covers the anchor record, and both anchors verify.
    let o = w.anchor(&["--to", &t]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(anchor_records(&w), 2);
    let v = w.verify(&["--from", &t]);
    assert_eq!(code(&v), 0, "{}", stdout(&v));
    assert_eq!(one(&v)["anchors"].as_array().unwrap().len(), 2);
}

#[test]
fn dir_anchor_reuses_a_final_checkpoint() {
    let w = Work::new(2);
    w.checkpoint();
    let (_d, t) = dir_target(&w);
    let o = w.anchor(&["--to", &t]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(json(&o)["checkpoint_seq"], 2);
    assert_eq!(
        w.kinds(),
        ["event", "event", "checkpoint", "anchor", "checkpoint"]
    );
}

#[test]
fn dir_anchor_failure_appends_no_anchor_record() {
    let w = Work::new(2);
    let missing = format!("dir:{}", w.path("no-such-dir").display());
    let o = w.anchor(&["--to", &missing]);
    assert_eq!(code(&o), 2, "{}", stdout(&o));
    let out = json(&o);
    assert_eq!(out["anchor_record_seq"], serde_json::Value::Null);
    assert_eq!(out["failures"][0]["code"], "io_error");
    assert_eq!(anchor_records(&w), 0);
    // And verify says there is nothing anchored.
    let v = w.verify(&[]);
    assert_eq!(code(&v), 1);
    assert_eq!(one(&v)["verdict"], "no_anchors");
}

#[test]
fn dir_anchor_verify_detects_a_replaced_file() {
    let w = Work::new(3);
    let (d, t) = dir_target(&w);
    assert_eq!(code(&w.anchor(&["--to", &t])), 0);
    let file = anchored_file(&d);
    chattr("-i", &file);
    std::fs::remove_file(&file).unwrap();
    std::fs::write(&file, "something else\n").unwrap();
    let v = w.verify(&["--from", &t]);
    assert_eq!(code(&v), 1);
    assert!(reasons(&one(&v)).contains(&"anchor_replaced".to_owned()));
    std::fs::remove_file(&file).unwrap();
    let v = w.verify(&["--from", &t]);
    assert_eq!(code(&v), 1);
    assert!(reasons(&one(&v)).contains(&"anchor_missing".to_owned()));
}

#[test]
fn dir_anchor_verify_detects_a_weakened_file() {
    use std::os::unix::fs::PermissionsExt;
    let w = Work::new(3);
    let (d, t) = dir_target(&w);
    assert_eq!(code(&w.anchor(&["--to", &t])), 0);
    let file = anchored_file(&d);
    chattr("-i", &file);
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let v = w.verify(&["--from", &t]);
    assert_eq!(code(&v), 1);
    assert_eq!(reasons(&one(&v)), ["lock_weakened"]);
}

#[test]
fn dir_anchor_verify_detects_truncation_after_an_anchor() {
    let w = Work::new(3);
    let (_d, t) = dir_target(&w);
    assert_eq!(code(&w.anchor(&["--to", &t])), 0); // checkpoint @3, anchor @4
    w.append(3);
    assert_eq!(code(&w.anchor(&["--to", &t])), 0); // checkpoint @8, anchor @9
    assert_eq!(code(&w.verify(&["--from", &t])), 0);
    // Roll back to before the second anchor: its record is gone from the
    // log, but the target still holds its checkpoint.
    w.truncate_to(6);
    let v = w.verify(&["--from", &t]);
    assert_eq!(code(&v), 1, "{}", stdout(&v));
    let r = reasons(&one(&v));
    assert!(r.contains(&"log:truncated".to_owned()), "{r:?}");
    // Even with every anchor record gone, --from finds the anchors.
    w.truncate_to(3);
    let v = w.verify(&["--from", &t]);
    assert_eq!(code(&v), 1);
    assert!(reasons(&one(&v)).contains(&"log:truncated".to_owned()));
    // Without --from and without anchor records: three records no trusted
    // checkpoint covers, which is rejected before anchors are looked for.
    let v = w.verify(&[]);
    assert_eq!(code(&v), 1);
    assert_eq!(one(&v)["verdict"], "rejected", "{}", stdout(&v));
    assert_eq!(
        one(&v)["log"]["reason"],
        "no_signed_checkpoint",
        "{}",
        stdout(&v)
    );
}

#[test]
fn dir_anchor_verify_detects_history_rewritten_with_the_key() {
    let w = Work::new(3);
    let (_d, t) = dir_target(&w);
    assert_eq!(code(&w.anchor(&["--to", &t])), 0);
    // The attacker holds the key and writes a different history of the
    // same origin and length, with its own valid checkpoints.
    let lines = w.lines();
    std::fs::remove_file(&w.log).unwrap();
    for i in 0..5 {
        let o = vouch(&[
            "append",
            Work::s(&w.log),
            "--key",
            Work::s(&w.key),
            &format!("{{\"forged\":{i}}}"),
        ]);
        assert_eq!(code(&o), 0);
    }
    w.checkpoint();
    let plain = vouch(&["verify", Work::s(&w.log), "--pub", Work::s(&w.pubkey)]);
    assert_eq!(code(&plain), 0, "the forged log verifies on its own");
    let v = w.verify(&["--from", &t]);
    assert_eq!(code(&v), 1, "{}", stdout(&v));
    assert!(reasons(&one(&v)).contains(&"log:fork".to_owned()));
    // The forged history keeping the original anchor record line (its
    // links now broken) is rejected by the chain verifier as well.
    let mut forged = w.lines();
    forged.push(lines[4].clone());
    std::fs::write(&w.log, forged.join("\n") + "\n").unwrap();
    let v = w.verify(&[]);
    assert_eq!(code(&v), 1, "{}", stdout(&v));
}

#[test]
fn anchor_verify_rejects_a_tampered_anchor_record_signature() {
    let w = Work::new(2);
    let (_d, t) = dir_target(&w);
    assert_eq!(code(&w.anchor(&["--to", &t])), 0);
    // Another key's public key: nothing verifies.
    let other = w.path("other");
    let o = vouch(&["keygen", "--origin", ORIGIN, "--out", Work::s(&other)]);
    assert_eq!(code(&o), 0);
    let o = vouch(&[
        "anchor",
        "verify",
        Work::s(&w.log),
        "--pub",
        &format!("{}.pub", other.display()),
        "--from",
        &t,
        "--format",
        "json",
    ]);
    assert_eq!(code(&o), 1);
    let r = reasons(&one(&o));
    assert!(r.contains(&"bad_anchor_note".to_owned()), "{r:?}");
}

#[test]
fn anchor_usage_errors_exit_2() {
    let w = Work::new(1);
    let o = w.anchor(&["--to", "ftp://x"]);
    assert_eq!(code(&o), 2);
    let o = w.anchor(&["--to", "s3://bucket/p"]);
    assert_eq!(code(&o), 2, "s3 needs a retention");
    assert!(stdout(&o).contains("retain"));
    assert_eq!(anchor_records(&w), 0);
    let o = vouch(&[
        "anchor",
        "verify",
        "/nonexistent/log.jsonl",
        "--pub",
        Work::s(&w.pubkey),
    ]);
    assert_eq!(code(&o), 2);
}

// ---------------------------------------------------------------- S3 (moto)

#[cfg(feature = "s3")]
fn s3_anchor(w: &Work, m: &Moto, target: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["--to", target, "--endpoint", &m.endpoint];
    args.extend_from_slice(extra);
    w.anchor(&args)
}

#[cfg(feature = "s3")]
fn s3_verify(w: &Work, m: &Moto, from: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["--endpoint", m.endpoint.as_str(), "--from", from];
    args.extend_from_slice(extra);
    w.verify(&args)
}

#[test]
#[cfg(feature = "s3")]
fn s3_compliance_anchor_cannot_be_deleted_and_survives_a_delete_marker() {
    let Some(m) = Moto::start() else { return };
    m.lock_bucket("anchors");
    let w = Work::new(3);
    let o = s3_anchor(
        &w,
        &m,
        "s3://anchors/prod",
        &["--retain-days", "2", "--legal-hold"],
    );
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    let out = json(&o);
    let a = &out["anchors"][0];
    assert_eq!(a["type"], "s3");
    assert_eq!(a["bucket"], "anchors");
    assert_eq!(a["lock_mode"], "COMPLIANCE");
    assert_eq!(a["legal_hold"], true);
    assert_eq!(a["endpoint"], m.endpoint.as_str());
    let key = a["key"].as_str().unwrap().to_owned();
    let version = a["version_id"].as_str().unwrap().to_owned();
    assert!(key.starts_with("prod/example.com%2Fanchor-test/00000000000000000003-"));
    assert!(a["checksum_sha256"].as_str().unwrap().ends_with('='));
    assert!(a["etag"].is_string());
    assert!(a["request_id"].is_string());
    assert!(a["retain_until"].as_str().unwrap().ends_with('Z'));
    assert_eq!(anchor_records(&w), 1);
    let v = s3_verify(&w, &m, "s3://anchors/prod", &[]);
    assert_eq!(code(&v), 0, "{}", stdout(&v));

    // COMPLIANCE: deleting the version is refused with the S3 error code.
    let denied = m.py(&format!(
        "print(err(lambda: s3.delete_object(Bucket='anchors', Key='{key}', VersionId='{version}')))\n\
         print(err(lambda: s3.delete_object(Bucket='anchors', Key='{key}', VersionId='{version}', BypassGovernanceRetention=True)))"
    ));
    assert_eq!(denied, "AccessDenied\nAccessDenied");
    // An unversioned delete only adds a delete marker.
    let marker = m.py(&format!(
        "print(s3.delete_object(Bucket='anchors', Key='{key}').get('DeleteMarker'))"
    ));
    assert_eq!(marker, "True");
    let v = s3_verify(&w, &m, "s3://anchors/prod", &[]);
    assert_eq!(code(&v), 0, "the version is still there: {}", stdout(&v));
    assert_eq!(
        one(&v)["anchors"][0]["found"]["version_id"],
        version.as_str()
    );
}

#[test]
#[cfg(feature = "s3")]
fn s3_anchor_retry_reuses_the_version_it_wrote() {
    let Some(m) = Moto::start() else { return };
    m.lock_bucket("retry");
    let w = Work::new(2);
    w.checkpoint();
    let o = s3_anchor(&w, &m, "s3://retry", &["--retain-days", "1"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let first = json(&o)["anchors"][0]["version_id"].clone();
    // A crash between the PUT and the append: the record is lost, the log
    // ends with the same checkpoint, and the retry finds the same object.
    w.truncate_to(3);
    let o = s3_anchor(&w, &m, "s3://retry", &["--retain-days", "1"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(json(&o)["anchors"][0]["version_id"], first);
    let versions = m.py("print(len(s3.list_object_versions(Bucket='retry').get('Versions', [])))");
    assert_eq!(versions, "1");
}

#[test]
#[cfg(feature = "s3")]
fn s3_server_refuses_a_locked_put_without_checksum() {
    let Some(m) = Moto::start() else { return };
    m.lock_bucket("nochecksum");
    // Without Content-MD5 or a checksum algorithm header: refused. With
    // x-amz-sdk-checksum-algorithm SHA256 and the digest: accepted.
    let refused = m.py(
        "until = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=1)\n\
         print(err(lambda: s3.put_object(Bucket='nochecksum', Key='k', Body=b'x', ObjectLockMode='COMPLIANCE', ObjectLockRetainUntilDate=until)))\n\
         print(err(lambda: s3.put_object(Bucket='nochecksum', Key='k', Body=b'x', ObjectLockMode='COMPLIANCE', ObjectLockRetainUntilDate=until, ChecksumAlgorithm='SHA256')))",
    );
    assert_eq!(refused, "MissingUploadObjectWithObjectLockHeaders\nOK");
    // moto checks that the header is present, not that the digest matches
    // the body (AWS answers BadDigest); shown, not asserted.
    let wrong = m.py(
        "until = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=1)\n\
         print(err(lambda: s3.put_object(Bucket='nochecksum', Key='w', Body=b'x', ObjectLockMode='COMPLIANCE', ObjectLockRetainUntilDate=until, ChecksumAlgorithm='SHA256', ChecksumSHA256=base64.b64encode(hashlib.sha256(b'y').digest()).decode())))",
    );
    eprintln!("moto's answer to a locked PUT with a wrong SHA-256: {wrong}");
}

#[test]
#[cfg(feature = "s3")]
fn s3_verify_detects_a_replaced_object() {
    let Some(m) = Moto::start() else { return };
    m.lock_bucket("replace");
    let w = Work::new(3);
    let o = s3_anchor(
        &w,
        &m,
        "s3://replace/a",
        &["--mode", "governance", "--retain-days", "1"],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let a = json(&o)["anchors"][0].clone();
    let (key, version) = (
        a["key"].as_str().unwrap(),
        a["version_id"].as_str().unwrap(),
    );
    // With the governance bypass, the version is deleted and other bytes put
    // under the same key.
    m.py(&format!(
        "s3.delete_object(Bucket='replace', Key='{key}', VersionId='{version}', BypassGovernanceRetention=True)\n\
         s3.put_object(Bucket='replace', Key='{key}', Body=b'forged', ChecksumSHA256=base64.b64encode(hashlib.sha256(b'forged').digest()).decode())"
    ));
    let v = s3_verify(&w, &m, "s3://replace/a", &[]);
    assert_eq!(code(&v), 1, "{}", stdout(&v));
    let r = reasons(&one(&v));
    assert!(r.contains(&"anchor_missing".to_owned()), "{r:?}");
    // Bytes that are no signed checkpoint note at all cannot be an object
    // vouch wrote (issue 21: the same rule as a dir: target's listing).
    assert!(
        r.contains(&"bad_listed_object".to_owned()),
        "the listing finds the forgery: {r:?}"
    );
}

#[test]
#[cfg(feature = "s3")]
fn s3_verify_detects_a_weaker_or_shorter_lock() {
    let Some(m) = Moto::start() else { return };
    m.lock_bucket("weaken");
    let w = Work::new(3);
    let o = s3_anchor(
        &w,
        &m,
        "s3://weaken",
        &["--mode", "governance", "--retain-days", "3"],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let a = json(&o)["anchors"][0].clone();
    let (key, version) = (
        a["key"].as_str().unwrap(),
        a["version_id"].as_str().unwrap(),
    );
    m.py(&format!(
        "until = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=1)\n\
         s3.put_object_retention(Bucket='weaken', Key='{key}', VersionId='{version}', Retention={{'Mode': 'GOVERNANCE', 'RetainUntilDate': until}}, BypassGovernanceRetention=True)"
    ));
    let v = s3_verify(&w, &m, "s3://weaken", &[]);
    assert_eq!(code(&v), 1, "{}", stdout(&v));
    assert_eq!(reasons(&one(&v)), ["retention_shortened"]);

    // moto (unlike AWS) lets a COMPLIANCE lock be changed to GOVERNANCE;
    // verify must notice a weaker mode.
    w.append(1);
    let o = s3_anchor(&w, &m, "s3://weaken", &["--retain-days", "3"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let a = json(&o)["anchors"][0].clone();
    let (key, version) = (
        a["key"].as_str().unwrap(),
        a["version_id"].as_str().unwrap(),
    );
    let changed = m.py(&format!(
        "until = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=4)\n\
         print(err(lambda: s3.put_object_retention(Bucket='weaken', Key='{key}', VersionId='{version}', Retention={{'Mode': 'GOVERNANCE', 'RetainUntilDate': until}})))"
    ));
    assert_eq!(
        changed, "OK",
        "moto lets COMPLIANCE be weakened (AWS would not)"
    );
    let v = s3_verify(&w, &m, "s3://weaken", &[]);
    assert_eq!(code(&v), 1);
    let r = reasons(&one(&v));
    assert!(r.contains(&"lock_weakened".to_owned()), "{r:?}");
}

#[test]
#[cfg(feature = "s3")]
fn s3_verify_detects_truncation_and_rewrite_after_anchoring() {
    let Some(m) = Moto::start() else { return };
    m.lock_bucket("history");
    let w = Work::new(3);
    let t = "s3://history/logs";
    assert_eq!(code(&s3_anchor(&w, &m, t, &["--retain-days", "1"])), 0);
    w.append(2);
    assert_eq!(code(&s3_anchor(&w, &m, t, &["--retain-days", "1"])), 0);
    assert_eq!(code(&s3_verify(&w, &m, t, &[])), 0);
    let original = std::fs::read(&w.log).unwrap();

    // Truncated below the second anchor: its record is gone, the bucket
    // listing still has its checkpoint.
    w.truncate_to(6);
    let v = s3_verify(&w, &m, t, &[]);
    assert_eq!(code(&v), 1, "{}", stdout(&v));
    assert!(reasons(&one(&v)).contains(&"log:truncated".to_owned()));

    // Rewritten with the key: same origin, different records.
    std::fs::remove_file(&w.log).unwrap();
    for i in 0..8 {
        let o = vouch(&[
            "append",
            Work::s(&w.log),
            "--key",
            Work::s(&w.key),
            &format!("{{\"rewritten\":{i}}}"),
        ]);
        assert_eq!(code(&o), 0);
    }
    w.checkpoint();
    let v = s3_verify(&w, &m, t, &[]);
    assert_eq!(code(&v), 1, "{}", stdout(&v));
    assert!(reasons(&one(&v)).contains(&"log:fork".to_owned()));

    // The original log still verifies.
    std::fs::write(&w.log, original).unwrap();
    assert_eq!(code(&s3_verify(&w, &m, t, &[])), 0);
}

#[test]
#[cfg(feature = "s3")]
fn s3_doctor_accepts_a_lock_bucket_and_detects_one_without_object_lock() {
    let Some(m) = Moto::start() else { return };
    m.lock_bucket("good");
    m.plain_bucket("nolock");
    let o = vouch(&[
        "anchor",
        "doctor",
        "s3://good",
        "--endpoint",
        &m.endpoint,
        "--format",
        "json",
    ]);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    let out = json(&o);
    assert_eq!(out["suitable"], true);
    let names: Vec<&str> = out["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["check"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["versioning", "object_lock", "canary_put", "lock_enforced"]
    );

    let o = vouch(&[
        "anchor",
        "doctor",
        "s3://nolock",
        "--endpoint",
        &m.endpoint,
        "--format",
        "json",
    ]);
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    let out = json(&o);
    assert_eq!(out["suitable"], false);
    let lock = out["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == "object_lock")
        .unwrap();
    assert_eq!(lock["ok"], false);
}

#[test]
#[cfg(feature = "s3")]
fn s3_errors_are_clear_exit_2_and_record_nothing() {
    let Some(m) = Moto::start() else { return };
    let w = Work::new(2);
    // Missing bucket.
    let o = s3_anchor(&w, &m, "s3://no-such-bucket", &["--retain-days", "1"]);
    assert_eq!(code(&o), 2);
    let f = &json(&o)["failures"][0];
    assert_eq!(f["code"], "remote_error");
    assert!(
        f["message"].as_str().unwrap().contains("NoSuchBucket"),
        "{f}"
    );
    // Unreachable endpoint.
    let dead = format!("http://127.0.0.1:{}", free_port());
    let o = w.anchor(&["--to", "s3://b", "--endpoint", &dead, "--retain-days", "1"]);
    assert_eq!(code(&o), 2);
    let msg = json(&o)["failures"][0]["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(msg.contains("cannot connect"), "{msg}");
    let o = vouch(&["anchor", "doctor", "s3://b", "--endpoint", &dead]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("cannot connect"));
    assert_eq!(anchor_records(&w), 0);

    // Wrong credentials: a second server with authentication enforced.
    let Some(auth) = Moto::start_with(&[("INITIAL_NO_AUTH_ACTION_COUNT", "0")]) else {
        return;
    };
    let o = w.anchor(&[
        "--to",
        "s3://b",
        "--endpoint",
        &auth.endpoint,
        "--retain-days",
        "1",
    ]);
    assert_eq!(code(&o), 2);
    let msg = json(&o)["failures"][0]["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(msg.contains("InvalidAccessKeyId"), "{msg}");
    assert_eq!(anchor_records(&w), 0);

    // A partial success records only what happened.
    m.lock_bucket("ok-bucket");
    let o = w.anchor(&[
        "--to",
        "s3://ok-bucket",
        "--to",
        "s3://no-such-bucket",
        "--endpoint",
        &m.endpoint,
        "--retain-days",
        "1",
    ]);
    assert_eq!(code(&o), 2);
    let out = json(&o);
    assert_eq!(out["anchors"].as_array().unwrap().len(), 1);
    assert_eq!(out["failures"].as_array().unwrap().len(), 1);
    assert_eq!(anchor_records(&w), 1);
    let line = w.lines()[w.kinds().iter().position(|k| k == "anchor").unwrap()].clone();
    let rec: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(rec["body"]["anchors"].as_array().unwrap().len(), 1);
    assert_eq!(rec["body"]["anchors"][0]["bucket"], "ok-bucket");
}

// ------------------------------------------------------------ TSA (OpenSSL)

#[test]
fn tsa_anchor_is_verified_before_recording_and_checked_by_verify() {
    let Some(tsa) = local_tsa("tsa_anchor") else {
        return;
    };
    let target = format!("tsa:{}", tsa.url);
    let w = Work::new(3);
    // Without roots the token could not be verified: refused up front.
    let o = w.anchor(&["--to", &target]);
    assert_eq!(code(&o), 2, "{}", stdout(&o));
    assert!(stdout(&o).contains("--tsa-ca"));
    // Roots the TSA does not chain to: the token is refused, nothing recorded.
    let o = w.anchor(&["--to", &target, "--tsa-ca", Work::s(&tsa.other_roots)]);
    assert_eq!(code(&o), 2, "{}", stdout(&o));
    assert_eq!(anchor_records(&w), 0);
    // An unreachable TSA.
    let dead = format!("tsa:http://127.0.0.1:{}/tsr", free_port());
    let o = w.anchor(&["--to", &dead, "--tsa-ca", Work::s(&tsa.roots)]);
    assert_eq!(code(&o), 2);
    assert_eq!(json(&o)["failures"][0]["code"], "network");
    assert_eq!(anchor_records(&w), 0);

    let o = w.anchor(&["--to", &target, "--tsa-ca", Work::s(&tsa.roots)]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    let a = json(&o)["anchors"][0].clone();
    assert_eq!(a["type"], "tsa");
    assert_eq!(a["imprint_alg"], "sha256");
    assert!(a["gen_time"].as_str().unwrap().ends_with('Z'));
    assert!(a["signer"].as_str().unwrap().contains("Anchor Test TSA"));
    assert_eq!(anchor_records(&w), 1);

    // A time-stamp token is checked offline; with no storage target of
    // the auditor's to list, truncation after the last anchor record
    // cannot be detected: incomplete, never consistent.
    let v = w.verify(&["--tsa-ca", Work::s(&tsa.roots)]);
    assert_eq!(code(&v), 1, "{}", stdout(&v));
    let report = one(&v);
    assert_eq!(report["anchors"][0]["type"], "tsa");
    assert_eq!(report["anchors"][0]["status"], "verified");
    assert_eq!(report["anchors"][0]["found"]["gen_time"], a["gen_time"]);
    assert_eq!(report["verdict"], "incomplete");
    assert_eq!(report["truncation_checked"], false);
    // Without roots the token is not checked.
    let v = w.verify(&[]);
    assert_eq!(code(&v), 1, "{}", stdout(&v));
    assert_eq!(one(&v)["anchors"][0]["status"], "not_checked");
    assert_eq!(one(&v)["anchors"][0]["reason"], "no_tsa_roots");
    // With other roots it is rejected.
    let v = w.verify(&["--tsa-ca", Work::s(&tsa.other_roots)]);
    assert_eq!(code(&v), 1, "{}", stdout(&v));
    assert_eq!(one(&v)["anchors"][0]["status"], "rejected");
    // A target of the auditor's that holds no anchor of this log says
    // nothing about what the log lost: still incomplete.
    let (_d, t) = dir_target(&w);
    let v = w.verify(&["--tsa-ca", Work::s(&tsa.roots), "--from", &t]);
    assert_eq!(code(&v), 1, "{}", stdout(&v));
    assert_eq!(one(&v)["verdict"], "incomplete");
    assert_eq!(one(&v)["truncation_checked"], false);
    // Anchored to that directory as well: consistent.
    assert_eq!(code(&w.anchor(&["--to", &t])), 0);
    let v = w.verify(&["--tsa-ca", Work::s(&tsa.roots), "--from", &t]);
    assert_eq!(code(&v), 0, "{}", stdout(&v));
    assert_eq!(one(&v)["verdict"], "consistent");
}

/// F3 (independent attack on issue 9): a tsa entry's recorded copies are
/// never shown as verified: the row names the URL as recorded, the time
/// and signer come from the token, and an imprint algorithm other than the
/// one the format fixes (`sha256`) is rejected.
#[test]
fn tsa_rows_show_the_token_and_a_recorded_imprint_other_than_sha256_is_rejected() {
    let Some(tsa) = local_tsa("tsa_rows") else {
        return;
    };
    let w = Work::new(2);
    let o = w.anchor(&[
        "--to",
        &format!("tsa:{}", tsa.url),
        "--tsa-ca",
        Work::s(&tsa.roots),
    ]);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    let v = w.verify(&["--tsa-ca", Work::s(&tsa.roots)]);
    let row = one(&v)["anchors"][0].clone();
    assert_eq!(row["status"], "verified", "{row}");
    assert!(
        row["location"].as_str().unwrap().contains("recorded url"),
        "{row}"
    );
    assert!(
        row["found"]["signer"]
            .as_str()
            .unwrap()
            .contains("Anchor Test TSA")
    );
    // The anchor record edited (before the writer's next checkpoint covers
    // it) to claim another imprint algorithm.
    let seq = w.kinds().iter().position(|k| k == "anchor").unwrap();
    w.truncate_to(seq + 1);
    let mut lines = w.lines();
    let last = lines
        .pop()
        .unwrap()
        .replace("\"imprint_alg\":\"sha256\"", "\"imprint_alg\":\"sha1\"");
    lines.push(last);
    std::fs::write(&w.log, lines.join("\n") + "\n").unwrap();
    w.checkpoint();
    let v = w.verify(&["--tsa-ca", Work::s(&tsa.roots)]);
    assert_eq!(code(&v), 1, "{}", stdout(&v));
    assert_eq!(one(&v)["anchors"][0]["reason"], "bad_tsa_token");
}
