//! `vouch stamp` exports checked by peers' own verifiers, end to end
//! through the binary: the run's Sigstore bundle (Ed25519, and ECDSA P-256
//! with `--sigstore-key`) verified offline by `@sigstore/verify`, and a
//! minisign signature from `stamp extract --proof-format minisign` verified by
//! Debian's `minisign`. Each is also refused by the peer after tampering.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod peer_support;
mod support;
mod tsa_support;

use support::vouch_at;

use peer_support::{minisign_or_skip, run_sigstore_peer, sigstore_peer_or_skip};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use tsa_support::{KeyKind, LocalTsa, Pki, openssl_or_skip};

fn ok(o: &Output) -> &Output {
    assert_eq!(
        o.status.code(),
        Some(0),
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

struct World {
    dir: tempfile::TempDir,
    tsa_url: String,
    roots: PathBuf,
    chain: PathBuf,
    _pki: Pki,
    _server: LocalTsa,
}

fn world() -> World {
    let pki = Pki::new();
    let root = pki.root("Stamp Export Root", KeyKind::P256);
    let signer = pki.issue(&root, "Stamp Export TSA", KeyKind::P256, "tsa_ok", 365);
    let mut chain = std::fs::read(&signer.cert_pem).unwrap();
    chain.extend(std::fs::read(&root.cert_pem).unwrap());
    let chain = pki.write("export-chain.pem", &chain);
    let server = LocalTsa::start(pki.path().to_path_buf(), signer, None, "sha256");
    let dir = tempfile::tempdir().unwrap();
    ok(&vouch_at(
        &["keygen", "--origin", "example.com/stamp", "--out", "k"],
        dir.path(),
    ));
    std::fs::create_dir(dir.path().join("out")).unwrap();
    std::fs::write(dir.path().join("out/report.md"), b"# report\nall good\n").unwrap();
    std::fs::write(dir.path().join("out/data.json"), b"{\"n\":1}\n").unwrap();
    World {
        tsa_url: server.url.clone(),
        roots: root.cert_pem.clone(),
        chain,
        dir,
        _pki: pki,
        _server: server,
    }
}

fn p(w: &World, name: &str) -> PathBuf {
    w.dir.path().join(name)
}

fn stamp(w: &World, extra: &[&str]) -> Output {
    let roots = w.roots.to_str().unwrap().to_owned();
    let mut args = vec![
        "stamp",
        "out",
        "--key",
        "k",
        "--log",
        "log.jsonl",
        "--tsa",
        &w.tsa_url,
        "--tsa-ca",
        &roots,
        "--out",
        "run.vouch",
        "--sigstore",
        "run.sigstore.json",
        "--sigstore-trusted-root",
        "trusted_root.json",
    ];
    args.extend_from_slice(extra);
    vouch_at(&args, w.dir.path())
}

fn peer(w: &World, bundle: &Path, key: &Path, artifact: Option<&Path>) -> peer_support::PeerResult {
    let mut args = vec![
        "--bundle".to_owned(),
        bundle.display().to_string(),
        "--key".to_owned(),
        key.display().to_string(),
        "--tsa-chain".to_owned(),
        w.chain.display().to_string(),
    ];
    if let Some(a) = artifact {
        args.push("--artifact".into());
        args.push(a.display().to_string());
    }
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    run_sigstore_peer(&refs)
}

fn tampered(w: &World, bundle: &Path, name: &str, edit: impl FnOnce(&mut Value)) -> PathBuf {
    let mut v: Value = serde_json::from_slice(&std::fs::read(bundle).unwrap()).unwrap();
    edit(&mut v);
    let out = p(w, name);
    std::fs::write(&out, serde_json::to_vec(&v).unwrap()).unwrap();
    out
}

fn flip_b64(text: &str, at: usize) -> String {
    use base64::Engine;
    let e = base64::engine::general_purpose::STANDARD;
    let mut raw = e.decode(text).unwrap();
    let i = at.min(raw.len() - 1);
    raw[i] ^= 1;
    e.encode(raw)
}

/// The bundle holds what the receipt holds, the peer accepts it, and
/// refuses each tampered variant.
fn check_bundle(w: &World, key_pem: &Path, covers: &str) {
    let bundle = p(w, "run.sigstore.json");
    let b: Value = serde_json::from_slice(&std::fs::read(&bundle).unwrap()).unwrap();
    assert_eq!(
        b["mediaType"],
        "application/vnd.dev.sigstore.bundle.v0.3+json"
    );
    assert_eq!(
        b["verificationMaterial"]["tlogEntries"],
        serde_json::json!([])
    );
    // The bundle's payload is the receipt's signed statement.
    let receipt = std::fs::read_to_string(p(w, "run.vouch")).unwrap();
    let header: Value = serde_json::from_str(receipt.lines().next().unwrap()).unwrap();
    assert_eq!(b["dsseEnvelope"]["payload"], header["envelope"]["payload"]);
    assert_eq!(header["timestamp"]["covers"], covers);
    assert_eq!(
        b["verificationMaterial"]["timestampVerificationData"]["rfc3161Timestamps"][0]["signedTimestamp"],
        header["timestamp"]["token"]
    );
    // vouch itself verifies the run, token included.
    let roots = w.roots.to_str().unwrap();
    let v = vouch_at(
        &[
            "stamp",
            "verify",
            "run.vouch",
            "--pub",
            "k.pub",
            "--tsa-ca",
            roots,
            "--format",
            "json",
        ],
        w.dir.path(),
    );
    let rep: Value = serde_json::from_slice(&v.stdout).unwrap();
    assert_eq!(rep["verdict"], "verified", "{rep:#}");
    assert!(rep["trusted_time"]["gen_time"].is_string(), "{rep:#}");
    // The peer: accepted, also with the artifact matched to a subject.
    let r = peer(w, &bundle, key_pem, Some(&p(w, "out/report.md")));
    assert_eq!(r.code, 0, "peer refused the bundle: {}", r.line);
    // The trusted root vouch wrote serves the peer as well as the chain.
    let tr = p(w, "trusted_root.json");
    let root: Value = serde_json::from_slice(&std::fs::read(&tr).unwrap()).unwrap();
    assert_eq!(
        root["timestampAuthorities"][0]["certChain"]["certificates"]
            .as_array()
            .unwrap()
            .len(),
        2,
        "{root:#}"
    );
    let r = run_sigstore_peer(&[
        "--bundle",
        bundle.to_str().unwrap(),
        "--key",
        key_pem.to_str().unwrap(),
        "--trusted-root",
        tr.to_str().unwrap(),
        "--artifact",
        p(w, "out/report.md").to_str().unwrap(),
    ]);
    assert_eq!(
        r.code, 0,
        "peer refused the bundle with vouch's trusted root: {}",
        r.line
    );
    // Tampered bundles are refused.
    let cases: Vec<(&str, PathBuf)> = vec![
        (
            "payload",
            tampered(w, &bundle, "t-payload.json", |v| {
                let s = v["dsseEnvelope"]["payload"].as_str().unwrap().to_owned();
                v["dsseEnvelope"]["payload"] = flip_b64(&s, 40).into();
            }),
        ),
        (
            "signature",
            tampered(w, &bundle, "t-sig.json", |v| {
                let s = v["dsseEnvelope"]["signatures"][0]["sig"]
                    .as_str()
                    .unwrap()
                    .to_owned();
                v["dsseEnvelope"]["signatures"][0]["sig"] = flip_b64(&s, 20).into();
            }),
        ),
        (
            "token removed",
            tampered(w, &bundle, "t-token.json", |v| {
                v["verificationMaterial"]["timestampVerificationData"]["rfc3161Timestamps"] =
                    serde_json::json!([]);
            }),
        ),
        (
            "token",
            tampered(w, &bundle, "t-token2.json", |v| {
                let t = &mut v["verificationMaterial"]["timestampVerificationData"]["rfc3161Timestamps"]
                    [0]["signedTimestamp"];
                let s = t.as_str().unwrap().to_owned();
                *t = flip_b64(&s, 60).into();
            }),
        ),
    ];
    for (case, path) in cases {
        let r = peer(w, &path, key_pem, None);
        assert_eq!(
            r.code, 1,
            "{case}: the peer accepted a tampered bundle: {}",
            r.line
        );
    }
    // A file that is not among the subjects is refused.
    std::fs::write(p(w, "other.txt"), b"not stamped\n").unwrap();
    let r = peer(w, &bundle, key_pem, Some(&p(w, "other.txt")));
    assert_eq!(r.code, 1, "{}", r.line);
}

#[test]
fn sigstore_bundle_with_the_ed25519_stamping_key_verifies_with_sigstore_js() {
    let t = "sigstore_bundle_with_the_ed25519_stamping_key_verifies_with_sigstore_js";
    if !openssl_or_skip(t) || !sigstore_peer_or_skip(t) {
        return;
    }
    let w = world();
    ok(&stamp(&w, &[]));
    ok(&vouch_at(
        &[
            "key",
            "export",
            "k.pub",
            "--key-format",
            "pem",
            "--out",
            "k.pem",
        ],
        w.dir.path(),
    ));
    check_bundle(&w, &p(&w, "k.pem"), "signature");
}

#[test]
fn sigstore_bundle_with_a_p256_key_verifies_with_sigstore_js_and_the_key_is_pinned() {
    let t = "sigstore_bundle_with_a_p256_key_verifies_with_sigstore_js_and_the_key_is_pinned";
    if !openssl_or_skip(t) || !sigstore_peer_or_skip(t) {
        return;
    }
    let w = world();
    let d = w.dir.path();
    for name in ["p256", "other"] {
        let st = Command::new("openssl")
            .args([
                "genpkey",
                "-algorithm",
                "EC",
                "-pkeyopt",
                "ec_paramgen_curve:P-256",
                "-out",
            ])
            .arg(d.join(format!("{name}.pem")))
            .status()
            .unwrap();
        assert!(st.success());
        let st = Command::new("openssl")
            .args(["pkey", "-pubout", "-in"])
            .arg(d.join(format!("{name}.pem")))
            .arg("-out")
            .arg(d.join(format!("{name}.pub.pem")))
            .status()
            .unwrap();
        assert!(st.success());
    }
    ok(&stamp(&w, &["--sigstore-key", "p256.pem"]));
    check_bundle(&w, &p(&w, "p256.pub.pem"), "sigstore");
    // The P-256 key is pinned by the signed statement: a receipt whose
    // Sigstore key and signature are replaced by another key's is rejected.
    let receipt = std::fs::read_to_string(p(&w, "run.vouch")).unwrap();
    let mut lines: Vec<String> = receipt.lines().map(str::to_owned).collect();
    let mut h: Value = serde_json::from_str(&lines[0]).unwrap();
    h["sigstore"]["public_key"] = std::fs::read_to_string(d.join("other.pub.pem"))
        .unwrap()
        .into();
    lines[0] = serde_json::to_string(&h).unwrap();
    std::fs::write(p(&w, "swapped.vouch"), lines.join("\n") + "\n").unwrap();
    let roots = w.roots.to_str().unwrap();
    let v = vouch_at(
        &[
            "stamp",
            "verify",
            "swapped.vouch",
            "--pub",
            "k.pub",
            "--tsa-ca",
            roots,
            "--format",
            "json",
        ],
        d,
    );
    assert_eq!(v.status.code(), Some(1));
    let rep: Value = serde_json::from_slice(&v.stdout).unwrap();
    let c = rep["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "sigstore_signature")
        .unwrap();
    assert_eq!(c["result"], "failed", "{rep:#}");
    assert!(rep["trusted_time"].is_null(), "{rep:#}");
}

#[test]
fn a_sigstore_bundle_needs_a_token() {
    let w = tempfile::tempdir().unwrap();
    ok(&vouch_at(
        &["keygen", "--origin", "x.example/s", "--out", "k"],
        w.path(),
    ));
    std::fs::write(w.path().join("f"), b"x").unwrap();
    let o = vouch_at(
        &["stamp", "f", "--key", "k", "--sigstore", "b.json"],
        w.path(),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(!w.path().join("b.json").exists());
}

#[test]
fn minisign_export_of_one_file_verifies_with_minisign() {
    let t = "minisign_export_of_one_file_verifies_with_minisign";
    if !minisign_or_skip(t) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok(&vouch_at(
        &["keygen", "--origin", "example.com/stamp", "--out", "k"],
        d,
    ));
    std::fs::create_dir(d.join("out")).unwrap();
    std::fs::write(d.join("out/model-card.md"), b"# model card\n").unwrap();
    std::fs::write(d.join("out/other.md"), b"other\n").unwrap();
    ok(&vouch_at(
        &[
            "stamp",
            "out",
            "--key",
            "k",
            "--log",
            "log.jsonl",
            "--out",
            "run.vouch",
        ],
        d,
    ));
    ok(&vouch_at(
        &[
            "stamp",
            "extract",
            "run.vouch",
            "out/model-card.md",
            "--out",
            "card.minisig",
            "--proof-format",
            "minisign",
            "--key",
            "k",
        ],
        d,
    ));
    ok(&vouch_at(
        &[
            "key",
            "export",
            "k.pub",
            "--key-format",
            "minisign",
            "--out",
            "k.minisign.pub",
        ],
        d,
    ));
    let m = Command::new("minisign")
        .args([
            "-V",
            "-m",
            "out/model-card.md",
            "-p",
            "k.minisign.pub",
            "-x",
            "card.minisig",
        ])
        .current_dir(d)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&m.stdout);
    assert!(
        m.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&m.stderr)
    );
    // The trusted comment names the stamp: root, file, digest, log record.
    let receipt = std::fs::read_to_string(d.join("run.vouch")).unwrap();
    let header: Value = serde_json::from_str(receipt.lines().next().unwrap()).unwrap();
    let payload = {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD
            .decode(header["envelope"]["payload"].as_str().unwrap())
            .unwrap()
    };
    let st: Value = serde_json::from_slice(&payload).unwrap();
    let root = st["predicate"]["root"].as_str().unwrap();
    assert!(text.contains(&format!("root={root}")), "{text}");
    assert!(text.contains("file=out/model-card.md"), "{text}");
    assert!(text.contains("log=example.com/stamp seq=0"), "{text}");
    // minisign refuses the signature for other bytes.
    std::fs::write(d.join("out/model-card.md"), b"# model card, edited\n").unwrap();
    let m = Command::new("minisign")
        .args([
            "-V",
            "-m",
            "out/model-card.md",
            "-p",
            "k.minisign.pub",
            "-x",
            "card.minisig",
        ])
        .current_dir(d)
        .output()
        .unwrap();
    assert!(!m.status.success());
    // And vouch refuses to sign a file whose bytes are not the stamped ones.
    let o = vouch_at(
        &[
            "stamp",
            "extract",
            "run.vouch",
            "out/model-card.md",
            "--out",
            "again.minisig",
            "--proof-format",
            "minisign",
            "--key",
            "k",
        ],
        d,
    );
    // The file does not hold what was stamped: rejected (exit 1).
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("not the stamped ones"));
    assert!(!d.join("again.minisig").exists());
    // Another key than the stamp's is refused.
    ok(&vouch_at(
        &["keygen", "--origin", "example.com/stamp", "--out", "k2"],
        d,
    ));
    let o = vouch_at(
        &[
            "stamp",
            "extract",
            "run.vouch",
            "out/other.md",
            "--out",
            "o.minisig",
            "--proof-format",
            "minisign",
            "--key",
            "k2",
        ],
        d,
    );
    assert_eq!(o.status.code(), Some(2));
}
