//! End-to-end tests of `vouch tsa`: a local OpenSSL TSA over HTTP, tokens
//! made by OpenSSL, one token per defect of the verifier's checklist (built
//! here because OpenSSL will not make them), and the real-world corpus.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;
mod tsa_support;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use tsa_support::*;

const DATA: &[u8] = b"vouch checkpoint 42\n";
const NONCE_HEX: &str = "123456789abcdef0";

struct Fixture {
    pki: Pki,
    root: Identity,
    other_root: Identity,
    tsa_rsa: Identity,
    tsa_p256: Identity,
    tsa_p384: Identity,
    inter: Identity,
    tsa_via_inter: Identity,
    decoy: Identity,
    eku_noncritical: Identity,
    eku_extra: Identity,
    no_eku: Identity,
    ca_signer: Identity,
    bad_ku: Identity,
    unknown_critical: Identity,
    data: PathBuf,
}

fn fixture() -> Option<&'static Fixture> {
    static F: OnceLock<Option<Fixture>> = OnceLock::new();
    F.get_or_init(|| {
        if !openssl_or_skip("tsa tests") {
            return None;
        }
        let pki = Pki::new();
        let root = pki.root("Test Root", KeyKind::Rsa);
        let other_root = pki.root("Other Root", KeyKind::P256);
        let ok = |cn, kind| pki.issue(&root, cn, kind, "tsa_ok", 365);
        let tsa_rsa = ok("TSA RSA", KeyKind::Rsa);
        let tsa_p256 = ok("TSA P-256", KeyKind::P256);
        let tsa_p384 = ok("TSA P-384", KeyKind::P384);
        let decoy = ok("Decoy TSA", KeyKind::P256);
        let inter = pki.issue(&root, "Test Intermediate", KeyKind::P384, "v3_inter", 365);
        let tsa_via_inter = pki.issue(&inter, "TSA via intermediate", KeyKind::P256, "tsa_ok", 365);
        let bad = |cn, ext| pki.issue(&root, cn, KeyKind::P256, ext, 365);
        let eku_noncritical = bad("EKU not critical", "tsa_eku_noncritical");
        let eku_extra = bad("EKU extra", "tsa_eku_extra");
        let no_eku = bad("No EKU", "tsa_no_eku");
        let ca_signer = bad("CA signer", "tsa_ca");
        let bad_ku = bad("Bad KU", "tsa_bad_ku");
        let unknown_critical = bad("Unknown critical", "tsa_unknown_critical");
        let data = pki.write("data.txt", DATA);
        Some(Fixture {
            pki,
            root,
            other_root,
            tsa_rsa,
            tsa_p256,
            tsa_p384,
            inter,
            tsa_via_inter,
            decoy,
            eku_noncritical,
            eku_extra,
            no_eku,
            ca_signer,
            bad_ku,
            unknown_critical,
            data,
        })
    })
    .as_ref()
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Verifies `token` over DATA against the test root (plus `extra` args),
/// in JSON mode; returns the exit code and reason code.
fn verify(f: &Fixture, name: &str, token: &[u8], extra: &[&str]) -> (i32, String) {
    let path = f.pki.write(&format!("{name}.tsr"), token);
    let mut args = vec![
        "tsa",
        "verify",
        p(&path),
        "--data",
        p(&f.data),
        "--format",
        "json",
    ];
    if !extra.contains(&"--tsa-ca") {
        args.extend(["--tsa-ca", p(&f.root.cert_pem)]);
    }
    args.extend_from_slice(extra);
    let out = outcome(&args);
    (out.code, out.reason())
}

fn expect_valid(f: &Fixture, name: &str, token: &[u8], extra: &[&str]) {
    let (code, reason) = verify(f, name, token, extra);
    assert_eq!((code, reason.as_str()), (0, "ok"), "{name} should verify");
}

fn expect_reject(f: &Fixture, name: &str, token: &[u8], extra: &[&str], want: &str) {
    let (code, reason) = verify(f, name, token, extra);
    assert_eq!(
        (code, reason.as_str()),
        (1, want),
        "{name} should be rejected with {want}"
    );
}

// ------------------------------------------------------------ OpenSSL's own TSA

fn query(f: &Fixture, hash: &str, nonce: bool) -> Vec<u8> {
    let mut args = vec!["ts", "-query", "-data", p(&f.data), "-cert"];
    let h = format!("-{hash}");
    args.push(&h);
    if !nonce {
        args.push("-no_nonce");
    }
    openssl(f.pki.path(), &args)
}

#[test]
fn openssl_tokens_verify_for_rsa_and_ecdsa_and_each_sha2() {
    let Some(f) = fixture() else { return };
    for (tsa, kind) in [
        (&f.tsa_rsa, "rsa"),
        (&f.tsa_p256, "p256"),
        (&f.tsa_p384, "p384"),
    ] {
        for md in ["sha256", "sha384", "sha512"] {
            let q = query(f, md, false);
            let resp = f.pki.ts_reply(tsa, None, &q, md);
            expect_valid(f, &format!("openssl-{kind}-{md}"), &resp, &[]);
            // The library agrees and reports what OpenSSL put in.
            let v = vouch::tsa::verify_token(
                &resp,
                &vouch::tsa::Expected::imprint(vouch::tsa::ExpectedImprint::Data(
                    vouch::tsa::DataDigests::from_bytes(DATA),
                )),
                &{
                    let mut t = vouch::tsa::TrustStore::new();
                    t.add_anchors(&f.root.der).unwrap();
                    t
                },
                &vouch::tsa::VerifyOptions::default(),
            )
            .unwrap();
            assert_eq!(v.policy(), "1.2.3.4.1");
            assert_eq!(v.imprint_alg().name(), md);
            assert!(v.signer().subject.contains("TSA"));
        }
    }
}

#[test]
fn openssl_token_via_intermediate_needs_the_intermediate() {
    let Some(f) = fixture() else { return };
    let q = query(f, "sha256", false);
    let resp = f.pki.ts_reply(&f.tsa_via_inter, None, &q, "sha256");
    expect_reject(f, "inter-missing", &resp, &[], "no_path_to_anchor");
    expect_valid(
        f,
        "inter-given",
        &resp,
        &["--untrusted", p(&f.inter.cert_pem)],
    );
    let resp = f
        .pki
        .ts_reply(&f.tsa_via_inter, Some(&f.inter), &q, "sha256");
    expect_valid(f, "inter-embedded", &resp, &[]);
}

#[test]
fn request_round_trips_against_a_local_openssl_tsa() {
    let Some(f) = fixture() else { return };
    for (tsa, md) in [
        (&f.tsa_rsa, "sha256"),
        (&f.tsa_p256, "sha384"),
        (&f.tsa_p384, "sha512"),
    ] {
        let server = LocalTsa::start(f.pki.path().to_path_buf(), tsa.clone(), None, "sha256");
        let out = f.pki.path().join(format!("roundtrip-{md}.tsr"));
        let r = outcome(&[
            "tsa",
            "request",
            "--url", // the old name, kept as an alias
            &server.url,
            "--data",
            p(&f.data),
            "--hash",
            md,
            "--tsa-ca",
            p(&f.root.cert_pem),
            "--out",
            p(&out),
            "--format",
            "json",
        ]);
        assert_eq!(r.code, 0, "request failed: {} {}", r.stdout, r.stderr);
        let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        let nonce = v["nonce"].as_str().unwrap().to_string();
        assert!(nonce.len() >= 16, "nonce of 64 bits or more");
        let ok = outcome(&[
            "tsa",
            "verify",
            p(&out),
            "--data",
            p(&f.data),
            "--tsa-ca",
            p(&f.root.cert_pem),
            "--nonce",
            &nonce,
        ]);
        assert_eq!(ok.code, 0, "{}", ok.stderr);
        let wrong = outcome(&[
            "tsa",
            "verify",
            p(&out),
            "--data",
            p(&f.data),
            "--tsa-ca",
            p(&f.root.cert_pem),
            "--nonce",
            "01",
        ]);
        assert_eq!(wrong.code, 1);
        let show = outcome(&["tsa", "show", p(&out), "--format", "json"]);
        assert_eq!(show.code, 0);
        let s: serde_json::Value = serde_json::from_str(&show.stdout).unwrap();
        assert_eq!(s["tst_info"]["imprint_alg"], md);
        assert_eq!(s["tst_info"]["policy"], "1.2.3.4.1");
    }
}

#[test]
fn request_with_policy_digest_and_no_nonce() {
    let Some(f) = fixture() else { return };
    let server = LocalTsa::start(
        f.pki.path().to_path_buf(),
        f.tsa_p256.clone(),
        None,
        "sha256",
    );
    let digest = format!("sha256:{}", hex(&hash("sha256", DATA)));
    let out = f.pki.path().join("policy.tsr");
    let r = outcome(&[
        "tsa",
        "request",
        "--tsa",
        &server.url,
        "--digest",
        &digest,
        "--policy",
        "1.2.3.4.5",
        "--no-nonce",
        "--out",
        p(&out),
    ]);
    assert_eq!(r.code, 0, "{} {}", r.stdout, r.stderr);
    let ok = outcome(&[
        "tsa",
        "verify",
        p(&out),
        "--digest",
        &digest,
        "--tsa-ca",
        p(&f.root.cert_pem),
        "--policy",
        "1.2.3.4.5",
    ]);
    assert_eq!(ok.code, 0, "{}", ok.stderr);
    let bad = outcome(&[
        "tsa",
        "verify",
        p(&out),
        "--digest",
        &digest,
        "--tsa-ca",
        p(&f.root.cert_pem),
        "--policy",
        "1.2.3.4.1",
        "--format",
        "json",
    ]);
    assert_eq!((bad.code, bad.reason().as_str()), (1, "policy_mismatch"));
}

#[test]
fn request_to_a_dead_url_is_an_operational_error() {
    let Some(f) = fixture() else { return };
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    drop(listener);
    let out = f.pki.path().join("dead.tsr");
    let r = outcome(&[
        "tsa",
        "request",
        "--tsa",
        &url,
        "--data",
        p(&f.data),
        "--out",
        p(&out),
        "--timeout",
        "2",
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(!out.exists());
}

#[test]
fn request_retries_after_a_server_error() {
    let Some(f) = fixture() else { return };
    let server = LocalTsa::start_with(
        f.pki.path().to_path_buf(),
        f.tsa_p256.clone(),
        None,
        "sha256",
        Mode::FailFirst(1),
    );
    let out = f.pki.path().join("retry.tsr");
    let r = outcome(&[
        "tsa",
        "request",
        "--tsa",
        &server.url,
        "--data",
        p(&f.data),
        "--out",
        p(&out),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(server.requests.load(std::sync::atomic::Ordering::SeqCst), 2);
}

#[test]
fn request_refuses_oversized_and_mismatched_responses() {
    let Some(f) = fixture() else { return };
    let big = LocalTsa::start_with(
        f.pki.path().to_path_buf(),
        f.tsa_p256.clone(),
        None,
        "sha256",
        Mode::Oversized,
    );
    let out = f.pki.path().join("big.tsr");
    let r = outcome(&[
        "tsa",
        "request",
        "--tsa",
        &big.url,
        "--data",
        p(&f.data),
        "--out",
        p(&out),
    ]);
    assert_eq!(r.code, 2, "over 1 MiB is a network error: {}", r.stderr);
    assert!(!out.exists());
    // A valid response, but to another request: its nonce differs.
    let other = LocalTsa::start_with(
        f.pki.path().to_path_buf(),
        f.tsa_p256.clone(),
        None,
        "sha256",
        Mode::OtherRequest,
    );
    let out = f.pki.path().join("other.tsr");
    let r = outcome(&[
        "tsa",
        "request",
        "--tsa",
        &other.url,
        "--data",
        p(&f.data),
        "--out",
        p(&out),
        "--format",
        "json",
    ]);
    assert_eq!(
        (r.code, r.reason().as_str()),
        (1, "nonce_mismatch"),
        "{}",
        r.stdout
    );
    assert!(
        !out.exists(),
        "a response that does not answer the request is not written"
    );
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

// ------------------------------------------------------------ defect matrix

/// One change to a good token.
type Edit<'a> = Box<dyn Fn(&mut TokenSpec) + 'a>;

fn build(f: &Fixture, signer: &Identity, edit: impl FnOnce(&mut TokenSpec)) -> Vec<u8> {
    let mut spec = TokenSpec::new(signer, DATA);
    edit(&mut spec);
    spec.build(&f.pki, signer)
}

#[test]
fn a_well_formed_built_token_verifies() {
    let Some(f) = fixture() else { return };
    let t = build(f, &f.tsa_rsa, |_| {});
    expect_valid(
        f,
        "built-good",
        &t,
        &["--nonce", NONCE_HEX, "--policy", "1.2.3.4.1"],
    );
}

#[test]
fn tolerated_variants_verify() {
    let Some(f) = fixture() else { return };
    let cases: Vec<(&str, &Identity, Edit)> = vec![
        ("rsa-pss", &f.tsa_rsa, Box::new(|s| s.pss = true)),
        (
            "rsa-pss-sha512",
            &f.tsa_rsa,
            Box::new(|s| {
                s.pss = true;
                s.digest = "sha512";
            }),
        ),
        (
            "rsaEncryption-sigalg",
            &f.tsa_rsa,
            Box::new(|s| s.sig_alg_oid = Some("1.2.840.113549.1.1.1".into())),
        ),
        (
            "p384-with-sha256",
            &f.tsa_p384,
            Box::new(|s| s.digest = "sha256"),
        ),
        (
            "p256-with-sha512",
            &f.tsa_p256,
            Box::new(|s| s.digest = "sha512"),
        ),
        ("sid-ski", &f.tsa_p256, Box::new(|s| s.sid_ski = true)),
        (
            "unsorted-signed-attrs",
            &f.tsa_p256,
            Box::new(|s| s.unsorted_attrs = true),
        ),
        (
            "ber-indefinite",
            &f.tsa_p256,
            Box::new(|s| s.indefinite = true),
        ),
        (
            "ber-chunked-econtent",
            &f.tsa_p256,
            Box::new(|s| {
                s.indefinite = true;
                s.chunked_content = true;
            }),
        ),
        ("ess-v1-only", &f.tsa_p256, Box::new(|s| s.ess = Ess::V1)),
        (
            "ess-v1-and-v2",
            &f.tsa_p256,
            Box::new(|s| s.ess = Ess::Both),
        ),
        (
            "ess-chain-ids",
            &f.tsa_p256,
            Box::new(|s| s.ess_extra_ids = vec![f.root.der.clone()]),
        ),
        (
            "granted-with-mods",
            &f.tsa_p256,
            Box::new(|s| s.status = Some(1)),
        ),
        ("bare-token", &f.tsa_p256, Box::new(|s| s.status = None)),
        (
            "imprint-params-absent",
            &f.tsa_p256,
            Box::new(|s| s.imprint_params = None),
        ),
        (
            "negative-serial",
            &f.tsa_p256,
            Box::new(|s| s.serial = vec![0xfe, 0x01]),
        ),
        (
            "fractional-gentime",
            &f.tsa_p256,
            Box::new(|s| {
                s.gen_time = s.gen_time.replace('Z', ".125Z");
            }),
        ),
        (
            "tsa-name-matches",
            &f.tsa_p256,
            Box::new(|s| {
                s.tsa_name = Some(der(0xa4, &f.tsa_p256.info().subject));
            }),
        ),
        (
            "signer-not-first-cert",
            &f.tsa_p256,
            Box::new(|s| {
                s.embed = vec![f.decoy.der.clone(), f.tsa_p256.der.clone()];
            }),
        ),
        (
            "no-embedded-cert-untrusted",
            &f.tsa_p256,
            Box::new(|s| s.embed = vec![]),
        ),
    ];
    for (name, signer, edit) in cases {
        let t = build(f, signer, |s| edit(s));
        let extra: Vec<&str> = if name == "no-embedded-cert-untrusted" {
            vec!["--untrusted", p(&f.tsa_p256.cert_pem)]
        } else {
            vec![]
        };
        expect_valid(f, name, &t, &extra);
    }
}

#[test]
fn sha1_is_refused_unless_allowed() {
    let Some(f) = fixture() else { return };
    let t = build(f, &f.tsa_p256, |s| s.imprint_alg = "sha1");
    expect_reject(f, "sha1-imprint", &t, &[], "sha1_not_allowed");
    expect_valid(f, "sha1-imprint-allowed", &t, &["--allow-sha1"]);
    let t = build(f, &f.tsa_rsa, |s| s.digest = "sha1");
    expect_reject(f, "sha1-signature", &t, &[], "sha1_not_allowed");
    expect_valid(f, "sha1-signature-allowed", &t, &["--allow-sha1"]);
}

/// Each defect of the checklist, exactly one per token, with its reason code.
#[test]
fn each_defect_is_rejected_with_its_reason_code() {
    let Some(f) = fixture() else { return };
    let other_cert = f.decoy.info();
    let other_anchor = ["--tsa-ca", p(&f.other_root.cert_pem)];
    let cases: Vec<(&str, &Identity, Edit, &[&str], &str)> = vec![
        // Found by the attack on the der/cms reader (issue 25): BER that the
        // TSA key really signed, and DER violations inside TSTInfo.
        (
            "signed-attrs-ber-signed-as-ber",
            &f.tsa_p256,
            Box::new(|s| s.ber_signed_attrs = true),
            &[],
            "malformed_token",
        ),
        (
            "tstinfo-ordering-false-encoded",
            &f.tsa_p256,
            Box::new(|s| s.ordering = Some(der(0x01, &[0x00]))),
            &[],
            "malformed_token",
        ),
        (
            "tstinfo-extension-critical-false-encoded",
            &f.tsa_p256,
            Box::new(|s| {
                s.tst_extensions = Some(seq(&[
                    &oid("1.2.3.4.99"),
                    &der(0x01, &[0x00]),
                    &octets(&[0x05, 0x00]),
                ]))
            }),
            &[],
            "malformed_token",
        ),
        (
            "accuracy-millis-zero",
            &f.tsa_p256,
            Box::new(|s| s.accuracy = Some(seq(&[&int(1), &der(0x80, &[0x00])]))),
            &[],
            "malformed_token",
        ),
        (
            "ess-issuer-serial-two-names",
            &f.tsa_p256,
            Box::new(|s| s.ess_issuer_extra_name = true),
            &[],
            "ess_mismatch",
        ),
        (
            "status-rejection",
            &f.tsa_p256,
            Box::new(|s| {
                s.status = Some(2);
                s.include_token = false;
            }),
            &[],
            "status_rejected",
        ),
        (
            "rejection-with-token",
            &f.tsa_p256,
            Box::new(|s| s.status = Some(2)),
            &[],
            "status_rejected",
        ),
        (
            "waiting",
            &f.tsa_p256,
            Box::new(|s| s.status = Some(3)),
            &[],
            "status_rejected",
        ),
        (
            "granted-no-token",
            &f.tsa_p256,
            Box::new(|s| s.include_token = false),
            &[],
            "token_missing",
        ),
        (
            "not-signed-data",
            &f.tsa_p256,
            Box::new(|s| s.content_info_type = ID_DATA.into()),
            &[],
            "not_signed_data",
        ),
        (
            "econtent-id-data",
            &f.tsa_p256,
            Box::new(|s| s.econtent_type = ID_DATA.into()),
            &[],
            "econtent_type_not_tstinfo",
        ),
        (
            "content-absent",
            &f.tsa_p256,
            Box::new(|s| s.include_content = false),
            &[],
            "content_missing",
        ),
        (
            "two-signer-infos",
            &f.tsa_p256,
            Box::new(|s| s.extra_signer_info = true),
            &[],
            "signer_count",
        ),
        (
            "signerinfo-version",
            &f.tsa_p256,
            Box::new(|s| s.sid_version = Some(3)),
            &[],
            "signer_info_version",
        ),
        (
            "sid-ski-version-1",
            &f.tsa_p256,
            Box::new(|s| {
                s.sid_ski = true;
                s.sid_version = Some(1);
            }),
            &[],
            "signer_info_version",
        ),
        (
            "sid-names-unknown-cert",
            &f.tsa_p256,
            Box::new(|s| {
                let mut c = f.tsa_p256.info();
                c.serial = int(424242);
                s.sid_cert = Some(c);
            }),
            &[],
            "signer_not_found",
        ),
        // GHSA-3xxc-pwj6-jgrj: the sid names the decoy, which is embedded
        // first; the signature is by the real TSA key.
        (
            "sid-names-decoy-first-cert",
            &f.tsa_p256,
            Box::new(|s| {
                s.sid_cert = Some(other_cert.clone());
                s.embed = vec![f.decoy.der.clone(), f.tsa_p256.der.clone()];
                s.ess_cert = Some(f.decoy.der.clone());
            }),
            &[],
            "bad_signature",
        ),
        (
            "no-signed-attrs",
            &f.tsa_p256,
            Box::new(|s| s.signed_attrs = false),
            &[],
            "signed_attrs_missing",
        ),
        (
            "no-content-type-attr",
            &f.tsa_p256,
            Box::new(|s| s.drop_content_type = true),
            &[],
            "content_type_attr_missing",
        ),
        (
            "content-type-attr-mismatch",
            &f.tsa_p256,
            Box::new(|s| s.content_type_attr = Some(ID_DATA.into())),
            &[],
            "content_type_mismatch",
        ),
        (
            "no-message-digest",
            &f.tsa_p256,
            Box::new(|s| s.drop_message_digest = true),
            &[],
            "message_digest_missing",
        ),
        (
            "bad-message-digest",
            &f.tsa_p256,
            Box::new(|s| s.message_digest = Some(vec![0; 32])),
            &[],
            "message_digest_mismatch",
        ),
        (
            "signature-over-reencoded-attrs",
            &f.tsa_p256,
            Box::new(|s| s.sign_reencoded = true),
            &[],
            "bad_signature",
        ),
        (
            "bad-signature-rsa",
            &f.tsa_rsa,
            Box::new(|s| s.corrupt_signature = true),
            &[],
            "bad_signature",
        ),
        (
            "bad-signature-pss",
            &f.tsa_rsa,
            Box::new(|s| {
                s.pss = true;
                s.corrupt_signature = true;
            }),
            &[],
            "bad_signature",
        ),
        (
            "bad-signature-ecdsa",
            &f.tsa_p384,
            Box::new(|s| s.corrupt_signature = true),
            &[],
            "bad_signature",
        ),
        (
            "ecdsa-key-rsa-alg",
            &f.tsa_p256,
            Box::new(|s| s.sig_alg_oid = Some("1.2.840.113549.1.1.11".into())),
            &[],
            "algorithm_mismatch",
        ),
        (
            "no-ess",
            &f.tsa_p256,
            Box::new(|s| s.ess = Ess::None),
            &[],
            "ess_missing",
        ),
        (
            "ess-v2-wrong-cert",
            &f.tsa_p256,
            Box::new(|s| s.ess_cert = Some(f.decoy.der.clone())),
            &[],
            "ess_mismatch",
        ),
        (
            "ess-v1-wrong-cert",
            &f.tsa_p256,
            Box::new(|s| {
                s.ess = Ess::V1;
                s.ess_cert = Some(f.decoy.der.clone());
            }),
            &[],
            "ess_mismatch",
        ),
        (
            "ess-issuer-serial-other-cert",
            &f.tsa_p256,
            Box::new(|s| {
                s.ess_issuer_serial = Some((other_cert.issuer.clone(), other_cert.serial.clone()));
            }),
            &[],
            "ess_mismatch",
        ),
        (
            "ess-extra-id-not-in-chain",
            &f.tsa_p256,
            Box::new(|s| s.ess_extra_ids = vec![f.other_root.der.clone()]),
            &[],
            "ess_mismatch",
        ),
        (
            "tstinfo-version-2",
            &f.tsa_p256,
            Box::new(|s| s.tst_version = 2),
            &[],
            "tstinfo_version",
        ),
        (
            "imprint-wrong",
            &f.tsa_p256,
            Box::new(|s| s.imprint = Some(vec![7; 32])),
            &[],
            "imprint_mismatch",
        ),
        (
            "imprint-params",
            &f.tsa_p256,
            Box::new(|s| s.imprint_params = Some(int(5))),
            &[],
            "imprint_parameters",
        ),
        (
            "nonce-missing",
            &f.tsa_p256,
            Box::new(|s| s.nonce = None),
            &["--nonce", NONCE_HEX],
            "nonce_missing",
        ),
        (
            "nonce-wrong",
            &f.tsa_p256,
            Box::new(|s| s.nonce = Some(vec![1, 2, 3])),
            &["--nonce", NONCE_HEX],
            "nonce_mismatch",
        ),
        (
            "policy-wrong",
            &f.tsa_p256,
            Box::new(|s| s.policy = "1.2.3.4.9".into()),
            &["--policy", "1.2.3.4.1"],
            "policy_mismatch",
        ),
        (
            "tsa-name-other",
            &f.tsa_p256,
            Box::new(|s| s.tsa_name = Some(der(0xa4, &other_cert.subject))),
            &[],
            "tsa_name_mismatch",
        ),
        (
            "tstinfo-unknown-critical-extension",
            &f.tsa_p256,
            Box::new(|s| {
                s.tst_extensions = Some(seq(&[
                    &oid("1.3.6.1.4.1.99999.7"),
                    &der(0x01, &[0xff]),
                    &octets(&null()),
                ]));
            }),
            &[],
            "unknown_critical_extension",
        ),
        (
            "eku-missing",
            &f.no_eku,
            Box::new(|_| {}),
            &[],
            "eku_missing",
        ),
        (
            "eku-not-critical",
            &f.eku_noncritical,
            Box::new(|_| {}),
            &[],
            "eku_not_critical",
        ),
        (
            "eku-extra-purpose",
            &f.eku_extra,
            Box::new(|_| {}),
            &[],
            "eku_not_timestamping",
        ),
        (
            "ca-signer",
            &f.ca_signer,
            Box::new(|_| {}),
            &[],
            "signer_is_ca",
        ),
        (
            "key-usage-too-wide",
            &f.bad_ku,
            Box::new(|_| {}),
            &[],
            "signer_key_usage",
        ),
        (
            "cert-unknown-critical-extension",
            &f.unknown_critical,
            Box::new(|_| {}),
            &[],
            "unknown_critical_extension",
        ),
        (
            "signer-not-yet-valid-at-gentime",
            &f.tsa_p256,
            Box::new(|s| s.gen_time = gentime(946_684_800)),
            &[],
            "cert_not_yet_valid",
        ),
        (
            "signer-expired-at-gentime",
            &f.tsa_p256,
            Box::new(|s| s.gen_time = now_gentime(400 * 86_400)),
            &[],
            "cert_expired",
        ),
        (
            "valid-at-gentime-expired-at",
            &f.tsa_p256,
            Box::new(|_| {}),
            &["--at", "2100-01-01T00:00:00Z"],
            "cert_expired",
        ),
        // The token embeds the real root, but the caller trusts another one.
        (
            "embedded-root-not-anchor",
            &f.tsa_p256,
            Box::new(|s| {
                s.embed = vec![f.tsa_p256.der.clone(), f.root.der.clone()];
            }),
            &other_anchor,
            "no_path_to_anchor",
        ),
        (
            "signer-missing",
            &f.tsa_p256,
            Box::new(|s| s.embed = vec![]),
            &[],
            "signer_not_found",
        ),
        (
            "digest-alg-sha1",
            &f.tsa_p256,
            Box::new(|s| s.digest = "sha1"),
            &[],
            "sha1_not_allowed",
        ),
    ];
    let mut failures = Vec::new();
    for (name, signer, edit, extra, want) in &cases {
        let t = build(f, signer, |s| edit(s));
        let (code, reason) = verify(f, name, &t, extra);
        if (code, reason.as_str()) != (1, *want) {
            failures.push(format!(
                "{name}: expected exit 1 {want}, got exit {code} {reason}"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "defects not rejected as expected:\n{}",
        failures.join("\n")
    );
}

#[test]
fn digest_algorithm_must_match_the_callers() {
    let Some(f) = fixture() else { return };
    let t = build(f, &f.tsa_p256, |_| {});
    let path = f.pki.write("alg.tsr", &t);
    let d384 = format!("sha384:{}", hex(&hash("sha384", DATA)));
    let r = outcome(&[
        "tsa",
        "verify",
        p(&path),
        "--digest",
        &d384,
        "--tsa-ca",
        p(&f.root.cert_pem),
        "--format",
        "json",
    ]);
    assert_eq!(
        (r.code, r.reason().as_str()),
        (1, "imprint_algorithm_mismatch")
    );
}

// ------------------------------------------------------------ CLI behaviour

#[test]
fn garbage_is_invalid_evidence_and_a_missing_file_an_error() {
    let Some(f) = fixture() else { return };
    let garbage = f.pki.write("garbage.tsr", b"\x30\x03\x02\x01");
    let r = outcome(&[
        "tsa",
        "verify",
        p(&garbage),
        "--data",
        p(&f.data),
        "--tsa-ca",
        p(&f.root.cert_pem),
    ]);
    assert_eq!(r.code, 1);
    assert_eq!(r.stderr.lines().count(), 1, "one line: {}", r.stderr);
    let r = outcome(&[
        "tsa",
        "verify",
        "/nonexistent.tsr",
        "--data",
        p(&f.data),
        "--tsa-ca",
        p(&f.root.cert_pem),
    ]);
    assert_eq!(r.code, 2);
    let r = outcome(&["tsa", "verify", p(&garbage), "--data", p(&f.data)]);
    assert_eq!(r.code, 2, "missing --tsa-ca is a usage error");
    let r = outcome(&["tsa", "show", p(&garbage)]);
    assert_eq!(r.code, 1);
}

#[test]
fn batch_verify_reports_each_token() {
    let Some(f) = fixture() else { return };
    let good = f
        .pki
        .write("batch-good.tsr", &build(f, &f.tsa_p256, |_| {}));
    let bad = f.pki.write(
        "batch-bad.tsr",
        &build(f, &f.tsa_p256, |s| s.corrupt_signature = true),
    );
    let r = outcome(&[
        "tsa",
        "verify",
        p(&good),
        p(&good),
        "--data",
        p(&f.data),
        "--tsa-ca",
        p(&f.root.cert_pem),
    ]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    let r = outcome(&[
        "tsa",
        "verify",
        p(&good),
        p(&bad),
        "--data",
        p(&f.data),
        "--tsa-ca",
        p(&f.root.cert_pem),
        "--format",
        "json",
    ]);
    assert_eq!(r.code, 1);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["results"][0]["valid"], true);
    assert_eq!(v["results"][1]["code"], "bad_signature");
}

#[test]
fn show_and_pem_input() {
    let Some(f) = fixture() else { return };
    let t = build(f, &f.tsa_p256, |s| s.status = None);
    use base64::Engine;
    let b64 = base64::engine::general_purpose::STANDARD.encode(&t);
    let pem = format!("-----BEGIN PKCS7-----\n{b64}\n-----END PKCS7-----\n");
    let path = f.pki.write("token.pem", pem.as_bytes());
    expect_valid(f, "pem", pem.as_bytes(), &[]);
    let r = outcome(&["tsa", "show", p(&path)]);
    assert_eq!(r.code, 0);
    assert!(r.stdout.contains("TSA P-256"), "{}", r.stdout);
    let r = outcome(&["tsa", "show", p(&path), "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["tst_info"]["nonce"], NONCE_HEX);
    assert_eq!(v["signers"][0]["signer_certificate"], 0);
    assert_eq!(v["signers"][0]["ess"][0]["matches_certificate"], 0);
}

// ------------------------------------------------------------ real-world corpus

/// Reason codes that fit the check a corpus case names in its `why`.
fn acceptable_codes(why: &str) -> &'static [&'static str] {
    let check = why.split(':').next().unwrap_or_default();
    let table: &[(&str, &[&str])] = &[
        ("nonce check", &["nonce_mismatch", "nonce_missing"]),
        ("signature check", &["bad_signature", "malformed_token"]),
        ("signer lookup", &["signer_not_found"]),
        (
            "imprint check",
            &["imprint_mismatch", "imprint_algorithm_mismatch"],
        ),
        ("chain validity", &["cert_expired", "cert_not_yet_valid"]),
        (
            "chain building",
            &["no_path_to_anchor", "bad_cert_signature"],
        ),
        ("trust", &["no_path_to_anchor"]),
        (
            "no trust anchor available",
            &["no_path_to_anchor", "issuer_eku", "signer_not_found"],
        ),
        ("certReq=false", &["signer_not_found"]),
        ("status check", &["status_rejected"]),
        ("decoding", &["malformed_token", "bad_signature"]),
        (
            "TSTInfo decoding",
            &["malformed_token", "message_digest_mismatch"],
        ),
        (
            "message-digest check",
            &[
                "message_digest_mismatch",
                "message_digest_missing",
                "tstinfo_version",
                "sha1_not_allowed",
                "digest_algorithm_not_listed",
            ],
        ),
        (
            "content-type check",
            &["econtent_type_not_tstinfo", "content_missing"],
        ),
        (
            "content-type attribute check",
            &["content_type_mismatch", "content_type_attr_missing"],
        ),
        ("exactly-one-signer check", &["signer_count"]),
        (
            "ESS check",
            &[
                "ess_missing",
                "ess_mismatch",
                "malformed_token",
                "bad_signature",
                "sha1_not_allowed",
            ],
        ),
        ("SignerInfo version check", &["signer_info_version"]),
        (
            "certificate check",
            &["bad_certificate", "bad_cert_signature"],
        ),
        (
            "signed-attributes check",
            &[
                "content_type_attr_missing",
                "message_digest_missing",
                "signed_attrs_missing",
            ],
        ),
    ];
    table
        .iter()
        .filter(|(prefix, _)| check.starts_with(prefix))
        .max_by_key(|(prefix, _)| prefix.len())
        .map_or(&[], |(_, codes)| codes)
}

#[test]
fn real_world_corpus_verdicts() {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors/tsa/realworld");
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(base.join("manifest.json")).unwrap()).unwrap();
    let cases = manifest["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 79);
    let mut failures = Vec::new();
    for case in cases {
        let id = case["id"].as_str().unwrap();
        let res = |k: &str| {
            base.join(case[k].as_str().unwrap())
                .to_str()
                .unwrap()
                .to_string()
        };
        let mut args: Vec<String> = vec!["tsa".into(), "verify".into(), res("token")];
        if case["data"].is_string() {
            args.extend(["--data".into(), res("data")]);
        } else {
            args.extend(["--digest".into(), case["digest"].as_str().unwrap().into()]);
        }
        for ca in case["ca"].as_array().unwrap() {
            args.extend([
                "--tsa-ca".into(),
                base.join(ca.as_str().unwrap()).to_str().unwrap().into(),
            ]);
        }
        for u in case["untrusted"].as_array().unwrap() {
            args.extend([
                "--untrusted".into(),
                base.join(u.as_str().unwrap()).to_str().unwrap().into(),
            ]);
        }
        if let Some(at) = case["at"].as_str() {
            args.extend(["--at".into(), at.into()]);
        }
        if let Some(n) = case["nonce"].as_str() {
            args.extend(["--nonce".into(), n.into()]);
        }
        args.extend(["--format".into(), "json".into()]);
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = outcome(&a);
        let valid = case["expect"] == "valid";
        let reason = out.reason();
        if valid {
            if out.code != 0 {
                failures.push(format!(
                    "{id}: expected valid, got exit {} {reason}",
                    out.code
                ));
            }
        } else if out.code != 1 {
            failures.push(format!(
                "{id}: expected exit 1, got exit {} {reason}",
                out.code
            ));
        } else {
            let why = case["why"].as_str().unwrap();
            let ok = acceptable_codes(why);
            if ok.is_empty() || !ok.contains(&reason.as_str()) {
                failures.push(format!("{id}: reason {reason} does not fit \"{why}\""));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "corpus misses:\n{}",
        failures.join("\n")
    );
}

// ------------------------------------------------------------ differential

/// Documented cases where vouch accepts and `openssl ts -verify` rejects
/// because OpenSSL is wrong or stricter than the RFCs for no security
/// reason. Each entry: (variant name, reason).
const OPENSSL_STRICTER: &[(&str, &str)] = &[
    (
        "rsa-pss",
        "RSASSA-PSS SignerInfos are allowed in CMS (RFC 4056) and sent by some TSAs; OpenSSL's ts code goes through \
         the PKCS7 API, which cannot verify PSS",
    ),
    (
        "sid-ski",
        "a subjectKeyIdentifier sid (SignerInfo version 3) is valid CMS (RFC 5652 §5.3); OpenSSL's ts code goes \
         through the PKCS7 API, which only knows issuerAndSerialNumber",
    ),
];

fn accepted_by_vouch(f: &Fixture, token: &[u8], untrusted: Option<&Identity>) -> bool {
    let mut trust = vouch::tsa::TrustStore::new();
    trust.add_anchors(&f.root.der).unwrap();
    if let Some(u) = untrusted {
        trust.add_untrusted(&u.der).unwrap();
    }
    let expected = vouch::tsa::Expected::imprint(vouch::tsa::ExpectedImprint::Data(
        vouch::tsa::DataDigests::from_bytes(DATA),
    ));
    vouch::tsa::verify_token(
        token,
        &expected,
        &trust,
        &vouch::tsa::VerifyOptions::default(),
    )
    .is_ok()
}

/// When vouch accepts `token`, OpenSSL must accept it too.
fn differential(
    f: &Fixture,
    name: &str,
    token: &[u8],
    untrusted: Option<&Identity>,
) -> Option<String> {
    if !accepted_by_vouch(f, token, untrusted) {
        return None;
    }
    let info = vouch::tsa::show(token).unwrap();
    let attime = info.tst_info.as_ref().unwrap().gen_time.unix;
    let path = f.pki.write(&format!("diff-{name}.der"), token);
    let ok = openssl_ts_verify(
        f.pki.path(),
        &path,
        info.status.is_none(),
        &f.data,
        &f.root.cert_pem,
        untrusted.map(|u| u.cert_pem.as_path()),
        attime,
    );
    if ok || OPENSSL_STRICTER.iter().any(|(n, _)| *n == name) {
        None
    } else {
        Some(format!("{name}: vouch accepts, openssl ts -verify rejects"))
    }
}

#[test]
fn differential_bit_flips_in_every_region() {
    let Some(f) = fixture() else { return };
    let mut misses = Vec::new();
    let mut accepted = 0;
    let mut total = 0;
    for (tsa, md) in [
        (&f.tsa_rsa, "sha256"),
        (&f.tsa_p256, "sha384"),
        (&f.tsa_p384, "sha512"),
    ] {
        let q = query(f, md, false);
        let base = f.pki.ts_reply(tsa, None, &q, md);
        assert!(differential(f, "base", &base, None).is_none());
        for off in mutation_offsets(&base) {
            for bit in [0x01u8, 0x80] {
                let mut m = base.clone();
                m[off] ^= bit;
                total += 1;
                if accepted_by_vouch(f, &m, None) {
                    accepted += 1;
                }
                if let Some(miss) = differential(f, &format!("{md}-flip-{off}-{bit:02x}"), &m, None)
                {
                    misses.push(miss);
                }
            }
        }
    }
    eprintln!("differential: {total} mutations, vouch accepted {accepted}");
    assert!(misses.is_empty(), "{}", misses.join("\n"));
}

#[test]
fn differential_structural_variants() {
    let Some(f) = fixture() else { return };
    let variants: Vec<(&str, &Identity, Edit)> = vec![
        ("good", &f.tsa_p256, Box::new(|_| {})),
        ("rsa-pss", &f.tsa_rsa, Box::new(|s| s.pss = true)),
        ("sid-ski", &f.tsa_p256, Box::new(|s| s.sid_ski = true)),
        (
            "unsorted-signed-attrs",
            &f.tsa_p256,
            Box::new(|s| s.unsorted_attrs = true),
        ),
        (
            "ber-indefinite",
            &f.tsa_p256,
            Box::new(|s| s.indefinite = true),
        ),
        ("ess-v1-only", &f.tsa_p256, Box::new(|s| s.ess = Ess::V1)),
        (
            "ess-v1-and-v2",
            &f.tsa_p256,
            Box::new(|s| s.ess = Ess::Both),
        ),
        (
            "granted-with-mods",
            &f.tsa_p256,
            Box::new(|s| s.status = Some(1)),
        ),
        ("bare-token", &f.tsa_p256, Box::new(|s| s.status = None)),
        (
            "negative-serial",
            &f.tsa_p256,
            Box::new(|s| s.serial = vec![0xfe, 0x01]),
        ),
        (
            "fractional-gentime",
            &f.tsa_p256,
            Box::new(|s| s.gen_time = s.gen_time.replace('Z', ".125Z")),
        ),
        (
            "signer-not-first-cert",
            &f.tsa_p256,
            Box::new(|s| s.embed = vec![f.decoy.der.clone(), f.tsa_p256.der.clone()]),
        ),
        (
            "swapped-cert-decoy-only",
            &f.tsa_p256,
            Box::new(|s| s.embed = vec![f.decoy.der.clone()]),
        ),
        (
            "dropped-content-type",
            &f.tsa_p256,
            Box::new(|s| s.drop_content_type = true),
        ),
        (
            "dropped-message-digest",
            &f.tsa_p256,
            Box::new(|s| s.drop_message_digest = true),
        ),
        ("dropped-ess", &f.tsa_p256, Box::new(|s| s.ess = Ess::None)),
        (
            "dropped-signed-attrs",
            &f.tsa_p256,
            Box::new(|s| s.signed_attrs = false),
        ),
        ("eku-not-critical", &f.eku_noncritical, Box::new(|_| {})),
        ("ca-signer", &f.ca_signer, Box::new(|_| {})),
        (
            "sid-names-decoy",
            &f.tsa_p256,
            Box::new(|s| {
                s.sid_cert = Some(f.decoy.info());
                s.embed = vec![f.decoy.der.clone(), f.tsa_p256.der.clone()];
            }),
        ),
    ];
    let mut misses = Vec::new();
    for (name, signer, edit) in &variants {
        let t = build(f, signer, |s| edit(s));
        if let Some(m) = differential(f, name, &t, None) {
            misses.push(m);
        }
    }
    assert!(misses.is_empty(), "{}", misses.join("\n"));
}

/// Without `openssl`, the OpenSSL tests fail when CI=true and skip with a
/// notice otherwise. Runs this test binary again with an empty PATH.
#[test]
fn missing_openssl_fails_in_ci_and_skips_locally() {
    if std::env::var_os("VOUCH_TSA_CHILD").is_some() {
        return;
    }
    let run = |ci: bool| {
        let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
        cmd.args([
            "--exact",
            "a_well_formed_built_token_verifies",
            "--nocapture",
        ])
        .env("PATH", "/nonexistent")
        .env("VOUCH_TSA_CHILD", "1");
        if ci {
            cmd.env("CI", "true");
        } else {
            cmd.env_remove("CI");
        }
        cmd.output().unwrap()
    };
    let ci = run(true);
    assert!(!ci.status.success(), "CI=true without openssl must fail");
    let local = run(false);
    assert!(local.status.success());
    assert!(String::from_utf8_lossy(&local.stderr).contains("NOTICE"));
}
