//! RFC 3161 time stamps: a strict, offline verifier, a decoder for showing
//! tokens, and a client that requests them.
//!
//! # What is verified
//! [`verify_token`] checks a TimeStampResp or bare TimeStampToken against
//! the caller's expectations (imprint, nonce, policy) and trust anchors, and
//! fails closed. The full checklist, with the RFC section behind each item,
//! is in `docs/TSA.md`; in short: response status; signedData with an
//! id-ct-TSTInfo content; exactly one SignerInfo whose version fits its sid;
//! the signer found by its sid (never "the first certificate"); content-type
//! and message-digest signed attributes; the signature over the signed
//! attributes exactly as received; the ESS signing-certificate (v1 or v2)
//! binding; TSTInfo version, imprint, nonce, policy, tsa name and critical
//! extensions; the signer's EKU/keyUsage/basicConstraints profile; and a
//! certificate path to a caller-supplied anchor valid at genTime (or at a
//! chosen time). SHA-1 is refused unless explicitly allowed.
//!
//! # What is trusted
//! Only the anchors in the [`TrustStore`]. Certificates embedded in the
//! token and `untrusted` certificates are path material.
//!
//! # What is not checked
//! Revocation (CRL/OCSP), certificate policies, and the accuracy window
//! (the path is validated at genTime itself).
//!
//! Network code lives in [`client`] only; every verification function takes
//! bytes.

pub(crate) mod cert;
pub mod client;
mod crypto;
mod der_util;
mod error;
mod info;
pub(crate) mod oid;
mod path;
pub mod report;
pub mod request;
mod time;
mod token;
mod verify;

pub use client::{ClientOptions, request, timestamp_data, verify_data_token};
pub use crypto::HashAlg;
pub use error::TsaError;
pub use info::{CertificateInfo, EssIdInfo, SignerView, StatusView, TokenInfo, TstView, show};
pub use request::{RequestProblem, TimeStampRequest};
pub use time::Timestamp;
pub use token::Accuracy;
pub use verify::{VerifiedTimestamp, verify_token};

/// Whether `text` is a dotted OBJECT IDENTIFIER vouch can compare with a
/// token's (`const-oid`'s rules: arcs of at most 32 bits).
pub fn is_oid(text: &str) -> bool {
    text.parse::<der::asn1::ObjectIdentifier>().is_ok()
}

/// The largest time-stamp response or token file read (the client's default
/// limit for a response from a TSA).
pub const MAX_TOKEN_BYTES: u64 = 1 << 20;
/// The largest certificate file (trust anchors, extra certificates) read.
pub const MAX_CERTS_BYTES: u64 = 4 << 20;

use cert::Cert;

/// Bounds on the work a hostile token can cause.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Largest response or token accepted, in bytes.
    pub max_token_size: usize,
    /// Most certificates in one token, and in one trust store list.
    pub max_certificates: usize,
    /// Most certificates on a path, signer and anchor included.
    pub max_path_len: usize,
    /// Most certificate signature checks while building a path.
    pub max_signature_checks: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_token_size: 1024 * 1024,
            max_certificates: 32,
            max_path_len: 8,
            max_signature_checks: 64,
        }
    }
}

/// The imprint the token must carry.
#[derive(Clone, Debug)]
pub enum ExpectedImprint {
    /// A digest computed by the caller: the token must use the same algorithm.
    Digest {
        /// The algorithm the caller hashed with.
        alg: HashAlg,
        /// The digest bytes.
        digest: Vec<u8>,
    },
    /// The data itself, hashed with every supported algorithm so the token's
    /// algorithm can be used.
    Data(DataDigests),
}

/// The digests of some data under every supported algorithm.
#[derive(Clone, Debug)]
pub struct DataDigests {
    digests: Vec<(HashAlg, Vec<u8>)>,
}

impl DataDigests {
    /// Hashes `data` under every supported algorithm.
    pub fn from_bytes(data: &[u8]) -> Self {
        DataDigests {
            digests: HashAlg::ALL.iter().map(|h| (*h, h.digest(data))).collect(),
        }
    }

    /// Hashes a stream in one pass under every supported algorithm.
    pub fn from_reader(mut reader: impl std::io::Read) -> std::io::Result<Self> {
        use sha2::Digest;
        let mut s1 = sha1::Sha1::new();
        let mut s256 = sha2::Sha256::new();
        let mut s384 = sha2::Sha384::new();
        let mut s512 = sha2::Sha512::new();
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = reader.read(&mut buf)?;
            if n == 0 {
                break;
            }
            s1.update(&buf[..n]);
            s256.update(&buf[..n]);
            s384.update(&buf[..n]);
            s512.update(&buf[..n]);
        }
        Ok(DataDigests {
            digests: vec![
                (HashAlg::Sha256, s256.finalize().to_vec()),
                (HashAlg::Sha384, s384.finalize().to_vec()),
                (HashAlg::Sha512, s512.finalize().to_vec()),
                (HashAlg::Sha1, s1.finalize().to_vec()),
            ],
        })
    }

    /// The digest under `alg`.
    pub fn get(&self, alg: HashAlg) -> Option<&[u8]> {
        self.digests
            .iter()
            .find(|(h, _)| *h == alg)
            .map(|(_, d)| d.as_slice())
    }
}

impl ExpectedImprint {
    /// Parses `ALG:HEX` (e.g. `sha256:9f86...`).
    pub fn parse_digest(text: &str) -> Option<Self> {
        let (alg, hex) = text.split_once(':')?;
        let alg = HashAlg::from_name(alg)?;
        let digest = crate::hex::decode_any(hex)?;
        (digest.len() == alg.output_len()).then_some(ExpectedImprint::Digest { alg, digest })
    }
}

/// What the caller expects the token to say.
#[derive(Clone, Debug)]
pub struct Expected {
    /// The imprint (required).
    pub imprint: ExpectedImprint,
    /// The nonce sent in the request, as unsigned big-endian bytes (leading
    /// zeros ignored). When set, the token must carry an equal nonce.
    pub nonce: Option<Vec<u8>>,
    /// The policy OID (dotted) the token must carry.
    pub policy: Option<String>,
}

impl Expected {
    /// Expect only an imprint.
    pub fn imprint(imprint: ExpectedImprint) -> Self {
        Expected {
            imprint,
            nonce: None,
            policy: None,
        }
    }
}

/// Why a certificate file given as configuration (trust anchors, extra
/// certificates) is not usable. Configuration, not evidence: the crate
/// error that carries it is an operational failure (exit 2).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CertificateFileProblem {
    /// The file does not hold certificates vouch can read.
    #[error("not certificates: {0}")]
    Unparseable(TsaError),
    /// The file holds no certificate at all.
    #[error("no certificate in the file")]
    Empty,
}

/// Trust anchors and extra path material.
///
/// A store also remembers certificate signatures it has already checked
/// successfully (keyed by SHA-256 over both certificates and the SHA-1
/// policy) and the certificates it has decoded (keyed by SHA-256 of their
/// DER), so a batch of tokens from one TSA checks its chain once. Both
/// memories are bounded; a clone shares them.
#[derive(Clone, Debug, Default)]
pub struct TrustStore {
    anchors: Vec<Cert>,
    untrusted: Vec<Cert>,
    verified: std::sync::Arc<std::sync::Mutex<std::collections::HashSet<[u8; 32]>>>,
    parsed:
        std::sync::Arc<std::sync::Mutex<std::collections::HashMap<[u8; 32], std::sync::Arc<Cert>>>>,
}

/// Most remembered certificate signatures per store.
const MAX_VERIFIED_CACHE: usize = 4096;

impl TrustStore {
    fn cache_key(child: &Cert, issuer: &Cert, allow_sha1: bool) -> [u8; 32] {
        use sha2::Digest;
        let mut h = sha2::Sha256::new();
        h.update((child.der.len() as u64).to_be_bytes());
        h.update(&child.der);
        h.update(&issuer.der);
        h.update([u8::from(allow_sha1)]);
        h.finalize().into()
    }

    /// Decodes an embedded certificate, reusing an earlier decoding of the
    /// same bytes (keys are expensive to set up).
    pub(crate) fn decode_cert(&self, der: &[u8]) -> Result<std::sync::Arc<Cert>, TsaError> {
        use sha2::Digest;
        let key: [u8; 32] = sha2::Sha256::digest(der).into();
        if let Some(c) = self.parsed.lock().ok().and_then(|m| m.get(&key).cloned()) {
            return Ok(c);
        }
        let cert = std::sync::Arc::new(Cert::from_der(der)?);
        if let Ok(mut m) = self.parsed.lock()
            && m.len() < MAX_VERIFIED_CACHE
        {
            m.insert(key, cert.clone());
        }
        Ok(cert)
    }

    pub(crate) fn seen_valid(&self, child: &Cert, issuer: &Cert, allow_sha1: bool) -> bool {
        let key = Self::cache_key(child, issuer, allow_sha1);
        self.verified.lock().is_ok_and(|set| set.contains(&key))
    }

    pub(crate) fn remember_valid(&self, child: &Cert, issuer: &Cert, allow_sha1: bool) {
        let key = Self::cache_key(child, issuer, allow_sha1);
        if let Ok(mut set) = self.verified.lock()
            && set.len() < MAX_VERIFIED_CACHE
        {
            set.insert(key);
        }
    }
}

impl TrustStore {
    /// An empty store (verifies nothing).
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds trust anchors from PEM (one or more certificates) or DER (one).
    /// Returns how many were added.
    pub fn add_anchors(&mut self, data: &[u8]) -> Result<usize, TsaError> {
        let certs = parse_cert_list(data)?;
        let n = certs.len();
        self.anchors.extend(certs);
        Ok(n)
    }

    /// Adds untrusted certificates usable to find the signer and build a
    /// path, never as anchors.
    pub fn add_untrusted(&mut self, data: &[u8]) -> Result<usize, TsaError> {
        let certs = parse_cert_list(data)?;
        let n = certs.len();
        self.untrusted.extend(certs);
        Ok(n)
    }

    /// Number of anchors.
    pub fn anchor_count(&self) -> usize {
        self.anchors.len()
    }
}

fn parse_cert_list(data: &[u8]) -> Result<Vec<Cert>, TsaError> {
    let ders = cert::split_certificates(data)?;
    if ders.len() > 256 {
        return Err(TsaError::LimitExceeded {
            what: "certificates in one file",
            limit: 256,
        });
    }
    ders.iter().map(|d| Cert::from_der(d)).collect()
}

/// The time at which the certificate path is validated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ValidationTime {
    /// The token's genTime (the default: a token stays valid after its
    /// certificate expires).
    #[default]
    GenTime,
    /// A fixed time.
    At(Timestamp),
}

/// Verification policy.
#[derive(Clone, Debug, Default)]
pub struct VerifyOptions {
    /// When to validate the certificate path.
    pub validation_time: ValidationTime,
    /// Accept SHA-1 imprints and signatures (off by default).
    pub allow_sha1: bool,
    /// Work bounds.
    pub limits: Limits,
}

/// Returns the DER blocks of a PEM buffer whose label contains `label`
/// (any label when empty), or `None` when the buffer is not PEM.
pub(crate) fn pem_blocks(data: &[u8], label: &str) -> Option<Vec<Vec<u8>>> {
    Some(
        crate::pem::labelled_blocks(data)?
            .into_iter()
            .filter(|(found, _)| label.is_empty() || found.contains(label))
            .map(|(_, der)| der)
            .collect(),
    )
}

/// Takes a token file as given (DER, or PEM with any label) and returns DER.
pub(crate) fn token_der(bytes: &[u8], limits: &Limits) -> Result<Vec<u8>, TsaError> {
    if bytes.len() > limits.max_token_size {
        return Err(TsaError::TooLarge {
            what: "token",
            size: bytes.len(),
            limit: limits.max_token_size,
        });
    }
    match pem_blocks(bytes, "") {
        Some(mut blocks) if blocks.len() == 1 => Ok(blocks.remove(0)),
        Some(_) => Err(TsaError::Malformed { part: "PEM" }),
        None => Ok(bytes.to_vec()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_argument_parses_and_checks_length() {
        let hex64 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
        match ExpectedImprint::parse_digest(&format!("sha256:{hex64}")) {
            Some(ExpectedImprint::Digest { alg, digest }) => {
                assert_eq!(alg, HashAlg::Sha256);
                assert_eq!(digest.len(), 32);
            }
            other => panic!("{other:?}"),
        }
        assert!(ExpectedImprint::parse_digest(&format!("sha384:{hex64}")).is_none());
        assert!(ExpectedImprint::parse_digest("md5:00").is_none());
        assert!(ExpectedImprint::parse_digest(hex64).is_none());
    }

    #[test]
    fn pem_blocks_are_filtered_by_label() {
        let pem = b"-----BEGIN CERTIFICATE-----\nAQID\n-----END CERTIFICATE-----\n\
                    -----BEGIN PKCS7-----\nBAUG\n-----END PKCS7-----\n";
        assert_eq!(pem_blocks(pem, "CERTIFICATE").unwrap(), vec![vec![1, 2, 3]]);
        assert_eq!(pem_blocks(pem, "").unwrap().len(), 2);
        assert!(pem_blocks(b"\x30\x00", "").is_none());
        // A PEM token file must hold exactly one block.
        assert!(token_der(pem, &Limits::default()).is_err());
    }

    #[test]
    fn oversized_input_is_rejected_before_parsing() {
        let limits = Limits {
            max_token_size: 4,
            ..Limits::default()
        };
        assert_eq!(token_der(&[0; 5], &limits).unwrap_err().code(), "too_large");
    }

    #[test]
    fn an_empty_trust_store_trusts_nothing() {
        let store = TrustStore::new();
        assert_eq!(store.anchor_count(), 0);
        let err = verify_token(
            b"not a token",
            &Expected::imprint(ExpectedImprint::Data(DataDigests::from_bytes(b""))),
            &store,
            &VerifyOptions::default(),
        )
        .unwrap_err();
        assert_eq!(err.code(), "malformed_token");
    }
}
