//! Test support for the TSA tests: a PKI made with the `openssl` CLI, a
//! local TSA (OpenSSL's own `openssl ts -reply`) served over HTTP on
//! 127.0.0.1, and a token builder that makes the tokens OpenSSL refuses to
//! make (one defect each), signing with `openssl dgst` and the test keys.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub mod tree;

use sha2::Digest;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

// ------------------------------------------------------------ openssl

/// True when the `openssl` CLI can be run. When it cannot and `CI=true`,
/// panics: the OpenSSL tests must never be skipped silently in CI.
pub fn openssl_or_skip(test: &str) -> bool {
    let ok = Command::new("openssl")
        .arg("version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("{test}: the openssl CLI is required when CI=true");
        }
        eprintln!("NOTICE: {test} skipped: the openssl CLI is not available");
    }
    ok
}

pub fn openssl(dir: &Path, args: &[&str]) -> Vec<u8> {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run openssl");
    assert!(
        out.status.success(),
        "openssl {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

const CNF: &str = r#"
[ req ]
distinguished_name = dn
prompt = no
[ dn ]
CN = unused

[ v3_ca ]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash

[ v3_inter ]
basicConstraints = critical,CA:TRUE,pathlen:0
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid

[ tsa_ok ]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = critical,timeStamping
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid

[ tsa_eku_noncritical ]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = timeStamping
subjectKeyIdentifier = hash

[ tsa_eku_extra ]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = critical,timeStamping,codeSigning
subjectKeyIdentifier = hash

[ tsa_no_eku ]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
subjectKeyIdentifier = hash

[ tsa_ca ]
basicConstraints = critical,CA:TRUE
keyUsage = critical,digitalSignature,keyCertSign
extendedKeyUsage = critical,timeStamping
subjectKeyIdentifier = hash

[ tsa_bad_ku ]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = critical,timeStamping
subjectKeyIdentifier = hash

[ tsa_unknown_critical ]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = critical,timeStamping
subjectKeyIdentifier = hash
1.3.6.1.4.1.99999.1 = critical,ASN1:NULL

[ tsa ]
default_tsa = tsa_config

[ tsa_config ]
dir = .
serial = ./tsaserial
crypto_device = builtin
signer_digest = sha256
default_policy = 1.2.3.4.1
other_policies = 1.2.3.4.5
digests = sha1, sha256, sha384, sha512
accuracy = secs:1, millisecs:500, microsecs:100
clock_precision_digits = 0
ordering = yes
tsa_name = yes
ess_cert_id_chain = no
ess_cert_id_alg = sha256
"#;

/// Key types for test identities.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyKind {
    Rsa,
    P256,
    P384,
}

/// A certificate and its private key.
#[derive(Clone, Debug)]
pub struct Identity {
    pub cert_pem: PathBuf,
    pub key_pem: PathBuf,
    pub der: Vec<u8>,
    pub kind: KeyKind,
}

impl Identity {
    pub fn info(&self) -> CertInfo {
        CertInfo::parse(&self.der)
    }
}

/// A directory with an openssl.cnf and certificates made in it.
pub struct Pki {
    pub dir: tempfile::TempDir,
    counter: std::sync::atomic::AtomicU32,
}

impl Pki {
    pub fn new() -> Self {
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        std::fs::write(dir.path().join("openssl.cnf"), CNF).unwrap();
        std::fs::write(dir.path().join("tsaserial"), "01\n").unwrap();
        Pki {
            dir,
            counter: std::sync::atomic::AtomicU32::new(1),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    fn next(&self) -> u32 {
        self.counter
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst)
            + 1
    }

    pub fn key(&self, kind: KeyKind) -> PathBuf {
        let name = format!("k{}.pem", self.next());
        let opts: &[&str] = match kind {
            KeyKind::Rsa => &["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"],
            KeyKind::P256 => &["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"],
            KeyKind::P384 => &["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384"],
        };
        let mut args = vec!["genpkey"];
        args.extend_from_slice(opts);
        args.extend_from_slice(&["-out", &name]);
        openssl(self.path(), &args);
        self.path().join(name)
    }

    fn load(&self, pem: &str, key: PathBuf, kind: KeyKind) -> Identity {
        let der = openssl(self.path(), &["x509", "-in", pem, "-outform", "DER"]);
        Identity {
            cert_pem: self.path().join(pem),
            key_pem: key,
            der,
            kind,
        }
    }

    /// A self-signed root CA.
    pub fn root(&self, cn: &str, kind: KeyKind) -> Identity {
        let key = self.key(kind);
        let name = format!("c{}.pem", self.next());
        openssl(
            self.path(),
            &[
                "req",
                "-x509",
                "-new",
                "-config",
                "openssl.cnf",
                "-key",
                key.to_str().unwrap(),
                "-subj",
                &format!("/O=vouch test/CN={cn}"),
                "-days",
                "3650",
                "-sha256",
                "-extensions",
                "v3_ca",
                "-out",
                &name,
            ],
        );
        self.load(&name, key, kind)
    }

    /// A certificate issued by `issuer` with the extension section `ext`
    /// of the test openssl.cnf, valid from now for `days`.
    pub fn issue(
        &self,
        issuer: &Identity,
        cn: &str,
        kind: KeyKind,
        ext: &str,
        days: u32,
    ) -> Identity {
        let key = self.key(kind);
        let n = self.next();
        let csr = format!("r{n}.csr");
        let name = format!("c{n}.pem");
        openssl(
            self.path(),
            &[
                "req",
                "-new",
                "-config",
                "openssl.cnf",
                "-key",
                key.to_str().unwrap(),
                "-subj",
                &format!("/O=vouch test/CN={cn}"),
                "-out",
                &csr,
            ],
        );
        openssl(
            self.path(),
            &[
                "x509",
                "-req",
                "-in",
                &csr,
                "-CA",
                issuer.cert_pem.to_str().unwrap(),
                "-CAkey",
                issuer.key_pem.to_str().unwrap(),
                "-set_serial",
                &format!("{}", 1000 + n),
                "-days",
                &days.to_string(),
                "-sha256",
                "-extfile",
                "openssl.cnf",
                "-extensions",
                ext,
                "-out",
                &name,
            ],
        );
        self.load(&name, key, kind)
    }

    /// Signs `data` with `id`'s key: PKCS#1 v1.5 or ECDSA (DER), or PSS.
    pub fn sign(&self, id: &Identity, hash: &str, data: &[u8], pss: bool) -> Vec<u8> {
        let n = self.next();
        let input = format!("s{n}.bin");
        std::fs::write(self.path().join(&input), data).unwrap();
        let mut args = vec!["dgst".to_string(), format!("-{hash}"), "-sign".into()];
        args.push(id.key_pem.to_str().unwrap().into());
        if pss {
            args.extend(
                [
                    "-sigopt",
                    "rsa_padding_mode:pss",
                    "-sigopt",
                    "rsa_pss_saltlen:digest",
                ]
                .map(String::from),
            );
        }
        args.push(input);
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        openssl(self.path(), &a)
    }

    /// Runs `openssl ts -reply` on a DER request with `tsa` as signer,
    /// optionally overriding config keys with `-section`-less flags.
    pub fn ts_reply(
        &self,
        tsa: &Identity,
        chain: Option<&Identity>,
        query: &[u8],
        digest: &str,
    ) -> Vec<u8> {
        let n = self.next();
        let q = format!("q{n}.tsq");
        let out = format!("q{n}.tsr");
        std::fs::write(self.path().join(&q), query).unwrap();
        let md = format!("-{digest}");
        let mut args = vec![
            "ts",
            "-reply",
            "-config",
            "openssl.cnf",
            "-queryfile",
            &q,
            "-signer",
            tsa.cert_pem.to_str().unwrap(),
            "-inkey",
            tsa.key_pem.to_str().unwrap(),
            &md,
            "-out",
            &out,
        ];
        let chain_path;
        if let Some(c) = chain {
            chain_path = c.cert_pem.to_str().unwrap().to_string();
            args.extend(["-chain", &chain_path]);
        }
        openssl(self.path(), &args);
        std::fs::read(self.path().join(out)).unwrap()
    }

    /// Writes bytes to a file in the PKI directory and returns its path.
    pub fn write(&self, name: &str, data: &[u8]) -> PathBuf {
        let p = self.path().join(name);
        std::fs::write(&p, data).unwrap();
        p
    }
}

// --------------------------------------------------------- local TSA over HTTP

/// A TSA on 127.0.0.1: each POST body is answered by `openssl ts -reply`.
pub struct LocalTsa {
    pub url: String,
    pub requests: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

/// How the local TSA misbehaves, if at all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Answers every request.
    Normal,
    /// Answers the first `n` requests with HTTP 503.
    FailFirst(usize),
    /// Answers with more than 1 MiB.
    Oversized,
    /// Answers a different request (another nonce) for the same data.
    OtherRequest,
}

impl LocalTsa {
    /// Serves until the process exits. `digest` is the signer digest.
    pub fn start(
        pki_dir: PathBuf,
        tsa: Identity,
        chain: Option<Identity>,
        digest: &'static str,
    ) -> Self {
        Self::start_with(pki_dir, tsa, chain, digest, Mode::Normal)
    }

    /// Serves until the process exits, misbehaving as `mode` says.
    pub fn start_with(
        pki_dir: PathBuf,
        tsa: Identity,
        chain: Option<Identity>,
        digest: &'static str,
        mode: Mode,
    ) -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let url = format!("http://127.0.0.1:{port}/tsr");
        let requests = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let count = requests.clone();
        std::thread::spawn(move || {
            for (i, stream) in listener.incoming().enumerate() {
                let Ok(mut stream) = stream else { continue };
                count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let body = read_http_body(&mut stream);
                let fail = match mode {
                    Mode::FailFirst(n) => i < n,
                    _ => false,
                };
                if fail {
                    let _ = stream.write_all(
                        b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                    );
                    continue;
                }
                if mode == Mode::Oversized {
                    let big = vec![0u8; 1024 * 1024 + 1];
                    let head = format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: application/timestamp-reply\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        big.len()
                    );
                    let _ = stream.write_all(head.as_bytes());
                    let _ = stream.write_all(&big);
                    continue;
                }
                let q = pki_dir.join(format!("http{port}-{i}.tsq"));
                let out = pki_dir.join(format!("http{port}-{i}.tsr"));
                if mode == Mode::OtherRequest {
                    let data = pki_dir.join("data.txt");
                    let other = openssl(
                        &pki_dir,
                        &[
                            "ts",
                            "-query",
                            "-data",
                            data.to_str().unwrap(),
                            "-sha256",
                            "-cert",
                        ],
                    );
                    std::fs::write(&q, other).unwrap();
                } else {
                    std::fs::write(&q, &body).unwrap();
                }
                let mut cmd = Command::new("openssl");
                cmd.current_dir(&pki_dir).args([
                    "ts",
                    "-reply",
                    "-config",
                    "openssl.cnf",
                    "-queryfile",
                    q.to_str().unwrap(),
                    "-signer",
                    tsa.cert_pem.to_str().unwrap(),
                    "-inkey",
                    tsa.key_pem.to_str().unwrap(),
                    &format!("-{digest}"),
                    "-out",
                    out.to_str().unwrap(),
                ]);
                if let Some(c) = &chain {
                    cmd.args(["-chain", c.cert_pem.to_str().unwrap()]);
                }
                let ok = cmd.output().map(|o| o.status.success()).unwrap_or(false);
                let reply = if ok {
                    std::fs::read(&out).unwrap_or_default()
                } else {
                    Vec::new()
                };
                let head = if ok {
                    format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: application/timestamp-reply\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        reply.len()
                    )
                } else {
                    "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                        .to_string()
                };
                let _ = stream.write_all(head.as_bytes());
                let _ = stream.write_all(&reply);
            }
        });
        LocalTsa { url, requests }
    }
}

fn read_http_body(stream: &mut std::net::TcpStream) -> Vec<u8> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(pos) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..pos]).to_ascii_lowercase();
            let len: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            let start = pos + 4;
            while buf.len() < start + len {
                let n = stream.read(&mut chunk).unwrap_or(0);
                if n == 0 {
                    break;
                }
                buf.extend_from_slice(&chunk[..n]);
            }
            return buf[start..(start + len).min(buf.len())].to_vec();
        }
        let n = stream.read(&mut chunk).unwrap_or(0);
        if n == 0 {
            return Vec::new();
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

// ------------------------------------------------------------- DER helpers

pub fn der(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    let len = content.len();
    if len < 0x80 {
        out.push(len as u8);
    } else if len < 0x100 {
        out.extend([0x81, len as u8]);
    } else if len < 0x10000 {
        out.extend([0x82, (len >> 8) as u8, len as u8]);
    } else {
        out.extend([0x83, (len >> 16) as u8, (len >> 8) as u8, len as u8]);
    }
    out.extend_from_slice(content);
    out
}

/// BER indefinite-length constructed element.
pub fn ber_indefinite(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut out = vec![tag, 0x80];
    out.extend_from_slice(content);
    out.extend([0, 0]);
    out
}

pub fn seq(parts: &[&[u8]]) -> Vec<u8> {
    der(0x30, &parts.concat())
}

pub fn set(parts: &[&[u8]]) -> Vec<u8> {
    der(0x31, &parts.concat())
}

pub fn oid(dotted: &str) -> Vec<u8> {
    let arcs: Vec<u64> = dotted.split('.').map(|a| a.parse().unwrap()).collect();
    let mut content = Vec::new();
    for (i, arc) in std::iter::once(arcs[0] * 40 + arcs[1])
        .chain(arcs[2..].iter().copied())
        .enumerate()
    {
        let _ = i;
        let mut tmp = vec![(arc & 0x7f) as u8];
        let mut a = arc >> 7;
        while a > 0 {
            tmp.push((a & 0x7f) as u8 | 0x80);
            a >>= 7;
        }
        tmp.reverse();
        content.extend(tmp);
    }
    der(0x06, &content)
}

/// INTEGER from unsigned magnitude bytes.
pub fn uint(m: &[u8]) -> Vec<u8> {
    let m: Vec<u8> = m.iter().copied().skip_while(|b| *b == 0).collect();
    let mut c = Vec::new();
    if m.is_empty() || m[0] & 0x80 != 0 {
        c.push(0);
    }
    c.extend(m);
    der(0x02, &c)
}

pub fn int(v: u64) -> Vec<u8> {
    uint(&v.to_be_bytes())
}

pub fn octets(b: &[u8]) -> Vec<u8> {
    der(0x04, b)
}

pub fn null() -> Vec<u8> {
    vec![0x05, 0x00]
}

/// Reads one TLV: (tag, content, total length).
pub fn tlv(data: &[u8]) -> (u8, &[u8], usize) {
    let tag = data[0];
    let first = data[1] as usize;
    let (hl, len) = if first < 0x80 {
        (2, first)
    } else {
        let n = first & 0x7f;
        (
            2 + n,
            data[2..2 + n]
                .iter()
                .fold(0usize, |a, b| (a << 8) | *b as usize),
        )
    };
    (tag, &data[hl..hl + len], hl + len)
}

/// The children of a constructed element's content, raw.
pub fn children(content: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < content.len() {
        let (_, _, total) = tlv(&content[pos..]);
        out.push(&content[pos..pos + total]);
        pos += total;
    }
    out
}

/// What the token builder needs from a certificate.
#[derive(Clone, Debug)]
pub struct CertInfo {
    pub der: Vec<u8>,
    pub issuer: Vec<u8>,
    pub subject: Vec<u8>,
    pub serial: Vec<u8>,
    pub ski: Option<Vec<u8>>,
}

impl CertInfo {
    pub fn parse(der: &[u8]) -> Self {
        let (_, cert, _) = tlv(der);
        let (_, tbs, _) = tlv(cert);
        let kids = children(tbs);
        let off = usize::from(kids[0][0] == 0xa0);
        let serial = kids[off].to_vec();
        let issuer = kids[off + 2].to_vec();
        let subject = kids[off + 4].to_vec();
        let ski_oid = [0x06, 0x03, 0x55, 0x1d, 0x0e];
        let ski = der.windows(5).position(|w| w == ski_oid).map(|p| {
            let rest = &der[p + 5..];
            let (_, outer, _) = tlv(rest);
            let (_, inner, _) = tlv(outer);
            inner.to_vec()
        });
        CertInfo {
            der: der.to_vec(),
            issuer,
            subject,
            serial,
            ski,
        }
    }
}

pub fn hash(alg: &str, data: &[u8]) -> Vec<u8> {
    match alg {
        "sha1" => sha1::Sha1::digest(data).to_vec(),
        "sha256" => sha2::Sha256::digest(data).to_vec(),
        "sha384" => sha2::Sha384::digest(data).to_vec(),
        "sha512" => sha2::Sha512::digest(data).to_vec(),
        _ => panic!("hash {alg}"),
    }
}

pub fn hash_oid(alg: &str) -> &'static str {
    match alg {
        "sha1" => "1.3.14.3.2.26",
        "sha256" => "2.16.840.1.101.3.4.2.1",
        "sha384" => "2.16.840.1.101.3.4.2.2",
        "sha512" => "2.16.840.1.101.3.4.2.3",
        _ => panic!("hash {alg}"),
    }
}

pub const TSTINFO: &str = "1.2.840.113549.1.9.16.1.4";
pub const ID_DATA: &str = "1.2.840.113549.1.7.1";

// ------------------------------------------------------------ token builder

/// How the ESS signing-certificate attribute is made.
#[derive(Clone, Debug, PartialEq)]
pub enum Ess {
    V1,
    V2,
    Both,
    None,
}

/// Everything about a token, each field defaulting to a good value; a test
/// changes one field to make one defect.
#[derive(Clone, Debug)]
pub struct TokenSpec {
    pub data: Vec<u8>,
    pub tst_version: u64,
    pub policy: String,
    pub imprint_alg: &'static str,
    pub imprint: Option<Vec<u8>>,
    pub imprint_params: Option<Vec<u8>>,
    pub serial: Vec<u8>,
    pub gen_time: String,
    pub nonce: Option<Vec<u8>>,
    pub tsa_name: Option<Vec<u8>>,
    pub tst_extensions: Option<Vec<u8>>,
    pub econtent_type: String,
    pub include_content: bool,
    pub content_info_type: String,
    pub digest: &'static str,
    pub pss: bool,
    /// Use rsaEncryption / the hash-less OID as signatureAlgorithm.
    pub sig_alg_oid: Option<String>,
    pub sid_ski: bool,
    pub sid_version: Option<u64>,
    /// Certificate named by the sid (default: the signer's).
    pub sid_cert: Option<CertInfo>,
    pub embed: Vec<Vec<u8>>,
    pub ess: Ess,
    pub ess_cert: Option<Vec<u8>>,
    pub ess_issuer_serial: Option<(Vec<u8>, Vec<u8>)>,
    pub ess_extra_ids: Vec<Vec<u8>>,
    pub signed_attrs: bool,
    pub content_type_attr: Option<String>,
    pub drop_content_type: bool,
    pub message_digest: Option<Vec<u8>>,
    pub drop_message_digest: bool,
    /// Put the attributes out of DER order (and sign them that way).
    pub unsorted_attrs: bool,
    /// Sign a DER-sorted re-encoding but send them unsorted.
    pub sign_reencoded: bool,
    pub extra_signer_info: bool,
    pub corrupt_signature: bool,
    /// Wrap in a TimeStampResp with this status (None: bare token).
    pub status: Option<u64>,
    pub include_token: bool,
    pub indefinite: bool,
    /// eContent as a BER constructed OCTET STRING in two chunks.
    pub chunked_content: bool,
    /// TSTInfo.accuracy as these bytes (default: 1 s, 500 ms).
    pub accuracy: Option<Vec<u8>>,
    /// A TSTInfo.ordering element (after accuracy), e.g. an explicit FALSE.
    pub ordering: Option<Vec<u8>>,
    /// issuerSerial's GeneralNames: another directoryName before the issuer.
    pub ess_issuer_extra_name: bool,
    /// signedAttrs sent with an indefinite length and signed in that form.
    pub ber_signed_attrs: bool,
}

impl TokenSpec {
    pub fn new(signer: &Identity, data: &[u8]) -> Self {
        TokenSpec {
            data: data.to_vec(),
            tst_version: 1,
            policy: "1.2.3.4.1".into(),
            imprint_alg: "sha256",
            imprint: None,
            imprint_params: Some(null()),
            serial: vec![0x01, 0x23],
            gen_time: now_gentime(60),
            nonce: Some(vec![0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0]),
            tsa_name: None,
            tst_extensions: None,
            econtent_type: TSTINFO.into(),
            include_content: true,
            content_info_type: "1.2.840.113549.1.7.2".into(),
            digest: "sha256",
            pss: false,
            sig_alg_oid: None,
            sid_ski: false,
            sid_version: None,
            sid_cert: None,
            embed: vec![signer.der.clone()],
            ess: Ess::V2,
            ess_cert: None,
            ess_issuer_serial: None,
            ess_extra_ids: Vec::new(),
            signed_attrs: true,
            content_type_attr: None,
            drop_content_type: false,
            message_digest: None,
            drop_message_digest: false,
            unsorted_attrs: false,
            sign_reencoded: false,
            extra_signer_info: false,
            corrupt_signature: false,
            status: Some(0),
            include_token: true,
            indefinite: false,
            chunked_content: false,
            accuracy: None,
            ordering: None,
            ess_issuer_extra_name: false,
            ber_signed_attrs: false,
        }
    }

    pub fn tst_info(&self) -> Vec<u8> {
        let imprint = self
            .imprint
            .clone()
            .unwrap_or_else(|| hash(self.imprint_alg, &self.data));
        let mut alg = oid(hash_oid(self.imprint_alg));
        if let Some(p) = &self.imprint_params {
            alg.extend(p);
        }
        let mut parts = vec![
            int(self.tst_version),
            oid(&self.policy),
            seq(&[&der(0x30, &alg), &octets(&imprint)]),
            der(0x02, &self.serial),
            der(0x18, self.gen_time.as_bytes()),
            self.accuracy
                .clone()
                .unwrap_or_else(|| seq(&[&int(1), &der(0x80, &[0x01, 0xf4])])),
        ];
        if let Some(o) = &self.ordering {
            parts.push(o.clone());
        }
        if let Some(n) = &self.nonce {
            parts.push(uint(n));
        }
        if let Some(name) = &self.tsa_name {
            parts.push(der(0xa0, name));
        }
        if let Some(e) = &self.tst_extensions {
            parts.push(der(0xa1, e));
        }
        der(0x30, &parts.concat())
    }

    /// Builds the response (or bare token) signed by `signer`.
    pub fn build(&self, pki: &Pki, signer: &Identity) -> Vec<u8> {
        let info = signer.info();
        let tst = self.tst_info();
        let digest_alg = seq(&[&oid(hash_oid(self.digest)), &null()]);
        // Signed attributes.
        let mut attrs: Vec<Vec<u8>> = Vec::new();
        if !self.drop_content_type {
            let ct = self
                .content_type_attr
                .clone()
                .unwrap_or_else(|| self.econtent_type.clone());
            attrs.push(seq(&[&oid("1.2.840.113549.1.9.3"), &set(&[&oid(&ct)])]));
        }
        if !self.drop_message_digest {
            let md = self
                .message_digest
                .clone()
                .unwrap_or_else(|| hash(self.digest, &tst));
            attrs.push(seq(&[&oid("1.2.840.113549.1.9.4"), &set(&[&octets(&md)])]));
        }
        let ess_target = self.ess_cert.clone().unwrap_or_else(|| signer.der.clone());
        let issuer_serial = |cert: &[u8]| -> Vec<u8> {
            let ci = CertInfo::parse(cert);
            let (iss, ser) = self
                .ess_issuer_serial
                .clone()
                .unwrap_or((ci.issuer, ci.serial));
            if self.ess_issuer_extra_name {
                let other = seq(&[&set(&[&seq(&[&oid("2.5.4.3"), &der(0x0c, b"Other")])])]);
                seq(&[&seq(&[&der(0xa4, &other), &der(0xa4, &iss)]), &ser])
            } else {
                seq(&[&seq(&[&der(0xa4, &iss)]), &ser])
            }
        };
        if matches!(self.ess, Ess::V1 | Ess::Both) {
            let mut ids = vec![seq(&[
                &octets(&hash("sha1", &ess_target)),
                &issuer_serial(&ess_target),
            ])];
            for extra in &self.ess_extra_ids {
                ids.push(seq(&[&octets(&hash("sha1", extra))]));
            }
            let refs: Vec<&[u8]> = ids.iter().map(Vec::as_slice).collect();
            attrs.push(seq(&[
                &oid("1.2.840.113549.1.9.16.2.12"),
                &set(&[&seq(&[&seq(&refs)])]),
            ]));
        }
        if matches!(self.ess, Ess::V2 | Ess::Both) {
            let mut ids = vec![seq(&[
                &octets(&hash("sha256", &ess_target)),
                &issuer_serial(&ess_target),
            ])];
            for extra in &self.ess_extra_ids {
                ids.push(seq(&[&octets(&hash("sha256", extra))]));
            }
            let refs: Vec<&[u8]> = ids.iter().map(Vec::as_slice).collect();
            attrs.push(seq(&[
                &oid("1.2.840.113549.1.9.16.2.47"),
                &set(&[&seq(&[&seq(&refs)])]),
            ]));
        }
        let mut sorted = attrs.clone();
        sorted.sort();
        let sent = if self.unsorted_attrs || self.sign_reencoded {
            let mut s = sorted.clone();
            s.reverse();
            if s == sorted {
                s.rotate_left(1);
            }
            s
        } else {
            sorted.clone()
        };
        let signed_for = if self.sign_reencoded { &sorted } else { &sent };
        let to_sign = if self.ber_signed_attrs {
            ber_indefinite(0x31, &signed_for.concat())
        } else {
            der(0x31, &signed_for.concat())
        };
        let mut signature = pki.sign(signer, self.digest, &to_sign, self.pss);
        if self.corrupt_signature {
            let n = signature.len() - 5;
            signature[n] ^= 0x01;
        }
        let sig_alg = match (&self.sig_alg_oid, signer.kind, self.pss) {
            (Some(o), _, _) => seq(&[&oid(o), &null()]),
            (None, KeyKind::Rsa, true) => {
                let h = seq(&[&oid(hash_oid(self.digest)), &null()]);
                let mgf = seq(&[&oid("1.2.840.113549.1.1.8"), &h]);
                let salt = hash(self.digest, b"").len() as u64;
                let params = seq(&[&der(0xa0, &h), &der(0xa1, &mgf), &der(0xa2, &int(salt))]);
                seq(&[&oid("1.2.840.113549.1.1.10"), &params])
            }
            (None, KeyKind::Rsa, false) => {
                let o = match self.digest {
                    "sha1" => "1.2.840.113549.1.1.5",
                    "sha256" => "1.2.840.113549.1.1.11",
                    "sha384" => "1.2.840.113549.1.1.12",
                    _ => "1.2.840.113549.1.1.13",
                };
                seq(&[&oid(o), &null()])
            }
            (None, _, _) => {
                let o = match self.digest {
                    "sha1" => "1.2.840.10045.4.1",
                    "sha256" => "1.2.840.10045.4.3.2",
                    "sha384" => "1.2.840.10045.4.3.3",
                    _ => "1.2.840.10045.4.3.4",
                };
                seq(&[&oid(o)])
            }
        };
        let sid_cert = self.sid_cert.clone().unwrap_or(info);
        let (sid, version) = if self.sid_ski {
            (der(0x80, sid_cert.ski.as_ref().unwrap()), 3)
        } else {
            (seq(&[&sid_cert.issuer, &sid_cert.serial]), 1)
        };
        let mut si_parts = vec![
            int(self.sid_version.unwrap_or(version)),
            sid,
            digest_alg.clone(),
        ];
        if self.signed_attrs && self.ber_signed_attrs {
            si_parts.push(ber_indefinite(0xa0, &sent.concat()));
        } else if self.signed_attrs {
            si_parts.push(der(0xa0, &sent.concat()));
        }
        si_parts.push(sig_alg);
        si_parts.push(octets(&signature));
        let si = der(0x30, &si_parts.concat());
        let mut infos = vec![si.clone()];
        if self.extra_signer_info {
            infos.push(si);
        }
        let mut encap = vec![oid(&self.econtent_type)];
        if self.include_content && self.chunked_content {
            let (a, b) = tst.split_at(tst.len() / 2);
            encap.push(der(
                0xa0,
                &ber_indefinite(0x24, &[octets(a), octets(b)].concat()),
            ));
        } else if self.include_content {
            encap.push(der(0xa0, &octets(&tst)));
        }
        let certs: Vec<&[u8]> = self.embed.iter().map(Vec::as_slice).collect();
        let mut sd = vec![int(3), set(&[&digest_alg]), der(0x30, &encap.concat())];
        if !certs.is_empty() {
            sd.push(der(0xa0, &certs.concat()));
        }
        let infos_ref: Vec<&[u8]> = infos.iter().map(Vec::as_slice).collect();
        sd.push(set(&infos_ref));
        let (signed_data, token) = if self.indefinite {
            let sd = ber_indefinite(0x30, &sd.concat());
            let ci = ber_indefinite(
                0x30,
                &[oid(&self.content_info_type), ber_indefinite(0xa0, &sd)].concat(),
            );
            (sd, ci)
        } else {
            let sd = der(0x30, &sd.concat());
            let ci = seq(&[&oid(&self.content_info_type), &der(0xa0, &sd)]);
            (sd, ci)
        };
        let _ = signed_data;
        match self.status {
            None => token,
            Some(status) => {
                let mut parts = vec![seq(&[&int(status)])];
                if self.include_token {
                    parts.push(token);
                }
                der(0x30, &parts.concat())
            }
        }
    }
}

/// GeneralizedTime for now + `offset` seconds.
pub fn now_gentime(offset: i64) -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
        + offset;
    gentime(secs)
}

pub fn gentime(unix: i64) -> String {
    let days = unix.div_euclid(86400);
    let s = unix.rem_euclid(86400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}{m:02}{d:02}{:02}{:02}{:02}Z",
        s / 3600,
        s / 60 % 60,
        s % 60
    )
}

// ------------------------------------------------------------ the binary

pub struct Outcome {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Outcome {
    /// The reason code of a JSON-mode error, or "ok".
    pub fn reason(&self) -> String {
        let v: serde_json::Value = serde_json::from_str(&self.stdout).unwrap_or_default();
        v["error"]["code"].as_str().unwrap_or("ok").to_string()
    }
}

/// Runs `vouch ARGS` through the shared runner; its exit code and output.
pub fn outcome(args: &[&str]) -> Outcome {
    let out = crate::support::vouch(args);
    Outcome {
        code: crate::support::code(&out),
        stdout: crate::support::stdout(&out),
        stderr: crate::support::stderr(&out),
    }
}

/// Byte offsets worth mutating: for every element (recursing into
/// constructed elements and into OCTET/BIT STRINGs that hold DER), its tag,
/// its first length byte, and its first, middle and last content bytes.
pub fn mutation_offsets(data: &[u8]) -> Vec<usize> {
    fn walk(data: &[u8], base: usize, depth: usize, out: &mut Vec<usize>) -> bool {
        if depth > 20 {
            return false;
        }
        let mut pos = 0;
        while pos < data.len() {
            let rest = &data[pos..];
            if rest.len() < 2 || rest[1] == 0x80 || rest[1] > 0x84 {
                return false;
            }
            let (hl, len) = if rest[1] < 0x80 {
                (2, rest[1] as usize)
            } else {
                let n = (rest[1] & 0x7f) as usize;
                if rest.len() < 2 + n {
                    return false;
                }
                (
                    2 + n,
                    rest[2..2 + n]
                        .iter()
                        .fold(0usize, |a, b| (a << 8) | *b as usize),
                )
            };
            if rest.len() < hl + len {
                return false;
            }
            let at = base + pos;
            out.extend([at, at + 1]);
            if len > 0 {
                out.extend([at + hl, at + hl + len / 2, at + hl + len - 1]);
            }
            let content = &rest[hl..hl + len];
            let tag = rest[0];
            if tag & 0x20 != 0 {
                walk(content, at + hl, depth + 1, out);
            } else if tag == 0x04 && len > 2 {
                let mut probe = Vec::new();
                if walk(content, at + hl, depth + 1, &mut probe) {
                    out.extend(probe);
                }
            }
            pos += hl + len;
        }
        true
    }
    let mut out = Vec::new();
    walk(data, 0, 0, &mut out);
    out.sort_unstable();
    out.dedup();
    out.retain(|o| *o < data.len());
    out
}

/// `openssl ts -verify` at `attime` (epoch seconds); true when it accepts.
pub fn openssl_ts_verify(
    dir: &Path,
    token: &Path,
    bare: bool,
    data: &Path,
    ca: &Path,
    untrusted: Option<&Path>,
    attime: i64,
) -> bool {
    let mut cmd = Command::new("openssl");
    cmd.current_dir(dir)
        .args(["ts", "-verify", "-in"])
        .arg(token);
    if bare {
        cmd.arg("-token_in");
    }
    cmd.arg("-data").arg(data).arg("-CAfile").arg(ca);
    if let Some(u) = untrusted {
        cmd.arg("-untrusted").arg(u);
    }
    cmd.args(["-attime", &attime.to_string()]);
    cmd.output().map(|o| o.status.success()).unwrap_or(false)
}
