//! Digests and signature checks: RSA PKCS#1 v1.5, RSASSA-PSS (RFC 4055) and
//! ECDSA over P-256 / P-384 (RFC 5758), each over a caller-computed digest so
//! that curve and hash may differ (e.g. P-384 with SHA-256).

use super::error::TsaError;
use super::oid;
use serde::Serialize;
use sha2::Digest;

/// A hash function vouch computes for imprints and signatures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum HashAlg {
    /// SHA-1: only for ESS v1 certificate ids, or with `allow_sha1`.
    Sha1,
    /// SHA-256.
    Sha256,
    /// SHA-384.
    Sha384,
    /// SHA-512.
    Sha512,
}

impl HashAlg {
    /// All algorithms, SHA-1 last.
    pub const ALL: [HashAlg; 4] = [
        HashAlg::Sha256,
        HashAlg::Sha384,
        HashAlg::Sha512,
        HashAlg::Sha1,
    ];

    /// Parses `sha1`, `sha256`, `sha384`, `sha512` (also with a dash).
    pub fn from_name(name: &str) -> Option<Self> {
        match name.to_ascii_lowercase().replace('-', "").as_str() {
            "sha1" => Some(HashAlg::Sha1),
            "sha256" => Some(HashAlg::Sha256),
            "sha384" => Some(HashAlg::Sha384),
            "sha512" => Some(HashAlg::Sha512),
            _ => None,
        }
    }

    /// The lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            HashAlg::Sha1 => "sha1",
            HashAlg::Sha256 => "sha256",
            HashAlg::Sha384 => "sha384",
            HashAlg::Sha512 => "sha512",
        }
    }

    /// The algorithm's OBJECT IDENTIFIER, dotted.
    pub fn oid(self) -> &'static str {
        match self {
            HashAlg::Sha1 => oid::SHA1,
            HashAlg::Sha256 => oid::SHA256,
            HashAlg::Sha384 => oid::SHA384,
            HashAlg::Sha512 => oid::SHA512,
        }
    }

    /// The algorithm named by a dotted OID.
    pub fn from_oid(dotted: &str) -> Option<Self> {
        HashAlg::ALL.into_iter().find(|h| h.oid() == dotted)
    }

    /// Output length in bytes.
    pub fn output_len(self) -> usize {
        match self {
            HashAlg::Sha1 => 20,
            HashAlg::Sha256 => 32,
            HashAlg::Sha384 => 48,
            HashAlg::Sha512 => 64,
        }
    }

    /// Hashes `data`.
    pub fn digest(self, data: &[u8]) -> Vec<u8> {
        match self {
            HashAlg::Sha1 => sha1::Sha1::digest(data).to_vec(),
            HashAlg::Sha256 => sha2::Sha256::digest(data).to_vec(),
            HashAlg::Sha384 => sha2::Sha384::digest(data).to_vec(),
            HashAlg::Sha512 => sha2::Sha512::digest(data).to_vec(),
        }
    }
}

impl std::fmt::Display for HashAlg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// An AlgorithmIdentifier as received: OID and raw parameters.
#[derive(Clone, Debug)]
pub(crate) struct AlgId {
    pub oid: String,
    /// The parameters element (raw), if any.
    pub params: Option<Vec<u8>>,
}

impl AlgId {
    /// An identifier as `spki` read it (the parameters kept as their DER).
    pub fn from_spki<P: der::Encode>(alg: &spki::AlgorithmIdentifier<P>) -> Result<Self, TsaError> {
        let params = match &alg.parameters {
            Some(p) => Some(p.to_der().map_err(|_| TsaError::Malformed {
                part: "AlgorithmIdentifier",
            })?),
            None => None,
        };
        Ok(AlgId {
            oid: oid::text(&alg.oid),
            params,
        })
    }

    /// Parameters absent or NULL.
    pub fn params_absent_or_null(&self) -> bool {
        match &self.params {
            None => true,
            Some(p) => p.as_slice() == [0x05, 0],
        }
    }

    /// The digest algorithm this identifier names (parameters absent/NULL).
    pub fn hash(&self, usage: &'static str) -> Result<HashAlg, TsaError> {
        let h = HashAlg::from_oid(&self.oid).ok_or_else(|| TsaError::UnsupportedAlgorithm {
            usage,
            oid: self.oid.clone(),
        })?;
        if !self.params_absent_or_null() {
            return Err(TsaError::Malformed { part: usage });
        }
        Ok(h)
    }
}

/// A public key the verifier can use.
#[derive(Clone, Debug)]
pub(crate) enum PublicKey {
    Rsa(Box<rsa::PublicKey>),
    P256(p256::ecdsa::VerifyingKey),
    P384(p384::ecdsa::VerifyingKey),
    /// A key type vouch does not verify with (kept so such certificates can
    /// still be shown and matched).
    Unsupported(String),
}

impl PublicKey {
    /// Decodes a SubjectPublicKeyInfo's algorithm and key bits.
    pub fn from_spki(alg: &AlgId, key_bits: &[u8]) -> Option<Self> {
        match alg.oid.as_str() {
            oid::RSA_ENCRYPTION => {
                use rsa::pkcs1::DecodeRsaPublicKey;
                rsa::PublicKey::from_pkcs1_der(key_bits)
                    .ok()
                    .map(|k| PublicKey::Rsa(Box::new(k)))
            }
            oid::EC_PUBLIC_KEY => {
                use der::Decode;
                let curve = alg.params.as_ref()?;
                let curve: der::asn1::ObjectIdentifier =
                    der::asn1::ObjectIdentifier::from_der(curve).ok()?;
                let curve = oid::text(&curve);
                match curve.as_str() {
                    oid::P256 => p256::ecdsa::VerifyingKey::from_sec1_bytes(key_bits)
                        .ok()
                        .map(PublicKey::P256),
                    oid::P384 => p384::ecdsa::VerifyingKey::from_sec1_bytes(key_bits)
                        .ok()
                        .map(PublicKey::P384),
                    _ => Some(PublicKey::Unsupported(curve)),
                }
            }
            other => Some(PublicKey::Unsupported(other.to_string())),
        }
    }

    /// A short description, e.g. `RSA-4096` or `ECDSA P-384`.
    pub fn describe(&self) -> String {
        match self {
            PublicKey::Rsa(k) => {
                use rsa::traits::PublicKeyParts;
                format!("RSA-{}", k.n().bit_width())
            }
            PublicKey::P256(_) => "ECDSA P-256".to_string(),
            PublicKey::P384(_) => "ECDSA P-384".to_string(),
            PublicKey::Unsupported(oid) => format!("unsupported ({oid})"),
        }
    }
}

/// The signature scheme named by a signatureAlgorithm identifier.
enum Scheme {
    Pkcs1(Option<HashAlg>),
    Pss { hash: HashAlg, salt: usize },
    Ecdsa(Option<HashAlg>),
}

fn scheme(alg: &AlgId, usage: &'static str) -> Result<Scheme, TsaError> {
    let unsupported = || TsaError::UnsupportedAlgorithm {
        usage,
        oid: alg.oid.clone(),
    };
    let no_params = |s: Scheme| {
        if alg.params_absent_or_null() {
            Ok(s)
        } else {
            Err(TsaError::Malformed { part: usage })
        }
    };
    match alg.oid.as_str() {
        oid::RSA_ENCRYPTION => no_params(Scheme::Pkcs1(None)),
        oid::SHA1_WITH_RSA => no_params(Scheme::Pkcs1(Some(HashAlg::Sha1))),
        oid::SHA256_WITH_RSA => no_params(Scheme::Pkcs1(Some(HashAlg::Sha256))),
        oid::SHA384_WITH_RSA => no_params(Scheme::Pkcs1(Some(HashAlg::Sha384))),
        oid::SHA512_WITH_RSA => no_params(Scheme::Pkcs1(Some(HashAlg::Sha512))),
        oid::EC_PUBLIC_KEY => no_params(Scheme::Ecdsa(None)),
        oid::ECDSA_SHA1 => no_params(Scheme::Ecdsa(Some(HashAlg::Sha1))),
        oid::ECDSA_SHA256 => no_params(Scheme::Ecdsa(Some(HashAlg::Sha256))),
        oid::ECDSA_SHA384 => no_params(Scheme::Ecdsa(Some(HashAlg::Sha384))),
        oid::ECDSA_SHA512 => no_params(Scheme::Ecdsa(Some(HashAlg::Sha512))),
        oid::RSASSA_PSS => pss_params(alg, usage),
        _ => Err(unsupported()),
    }
}

/// RSASSA-PSS-params (RFC 4055 §3.1): the hash and MGF1 hash must agree;
/// the trailer field must be 1. Absent fields take the SHA-1 defaults.
fn pss_params(alg: &AlgId, usage: &'static str) -> Result<Scheme, TsaError> {
    use der::Decode;
    let bad = || TsaError::Malformed { part: usage };
    let params = alg.params.as_ref().ok_or_else(bad)?;
    let p = rsa::pkcs1::RsaPssParamsOwned::from_der(params).map_err(|_| bad())?;
    let hash = AlgId::from_spki(&p.hash)?.hash(usage)?;
    if p.mask_gen.oid.to_string() != oid::MGF1 {
        return Err(TsaError::UnsupportedAlgorithm {
            usage,
            oid: p.mask_gen.oid.to_string(),
        });
    }
    let mgf_hash =
        AlgId::from_spki(p.mask_gen.parameters.as_ref().ok_or_else(bad)?)?.hash(usage)?;
    if hash != mgf_hash {
        return Err(TsaError::UnsupportedAlgorithm {
            usage,
            oid: alg.oid.clone(),
        });
    }
    Ok(Scheme::Pss {
        hash,
        salt: usize::from(p.salt_len),
    })
}

/// Verifies `signature` over `message` with `key` under `sig_alg`.
/// `digest` is the digest to use when the algorithm names none (CMS
/// rsaEncryption/id-ecPublicKey signature algorithms); when both are given
/// they must agree. SHA-1 is refused unless `allow_sha1`.
pub(crate) fn verify_signature(
    key: &PublicKey,
    sig_alg: &AlgId,
    digest: Option<HashAlg>,
    message: &[u8],
    signature: &[u8],
    allow_sha1: bool,
    usage: &'static str,
) -> Result<(), TsaError> {
    let scheme = scheme(sig_alg, usage)?;
    let named = match &scheme {
        Scheme::Pkcs1(h) | Scheme::Ecdsa(h) => *h,
        Scheme::Pss { hash, .. } => Some(*hash),
    };
    let hash = match (named, digest) {
        (Some(a), Some(b)) if a != b => return Err(TsaError::AlgorithmMismatch { usage }),
        (Some(a), _) | (None, Some(a)) => a,
        (None, None) => return Err(TsaError::AlgorithmMismatch { usage }),
    };
    if hash == HashAlg::Sha1 && !allow_sha1 {
        return Err(TsaError::Sha1NotAllowed { usage });
    }
    let hashed = hash.digest(message);
    let ok = match (&scheme, key) {
        (Scheme::Pkcs1(_), PublicKey::Rsa(k)) => {
            let padding = match hash {
                HashAlg::Sha1 => rsa::Pkcs1v15Sign::new::<sha1::Sha1>(),
                HashAlg::Sha256 => rsa::Pkcs1v15Sign::new::<sha2::Sha256>(),
                HashAlg::Sha384 => rsa::Pkcs1v15Sign::new::<sha2::Sha384>(),
                HashAlg::Sha512 => rsa::Pkcs1v15Sign::new::<sha2::Sha512>(),
            };
            k.verify(padding, &hashed, signature).is_ok()
        }
        (Scheme::Pss { salt, .. }, PublicKey::Rsa(k)) => {
            let salt = *salt;
            let r = match hash {
                HashAlg::Sha1 => k.verify(
                    rsa::Pss::<sha1::Sha1>::new_with_salt(salt),
                    &hashed,
                    signature,
                ),
                HashAlg::Sha256 => k.verify(
                    rsa::Pss::<sha2::Sha256>::new_with_salt(salt),
                    &hashed,
                    signature,
                ),
                HashAlg::Sha384 => k.verify(
                    rsa::Pss::<sha2::Sha384>::new_with_salt(salt),
                    &hashed,
                    signature,
                ),
                HashAlg::Sha512 => k.verify(
                    rsa::Pss::<sha2::Sha512>::new_with_salt(salt),
                    &hashed,
                    signature,
                ),
            };
            r.is_ok()
        }
        (Scheme::Ecdsa(_), PublicKey::P256(k)) => {
            use ecdsa::signature::hazmat::PrehashVerifier;
            match p256::ecdsa::Signature::from_der(signature) {
                Ok(sig) => k.verify_prehash(&hashed, &sig).is_ok(),
                Err(_) => false,
            }
        }
        (Scheme::Ecdsa(_), PublicKey::P384(k)) => {
            use ecdsa::signature::hazmat::PrehashVerifier;
            match p384::ecdsa::Signature::from_der(signature) {
                Ok(sig) => k.verify_prehash(&hashed, &sig).is_ok(),
                Err(_) => false,
            }
        }
        (_, PublicKey::Unsupported(oid)) => {
            return Err(TsaError::UnsupportedAlgorithm {
                usage,
                oid: oid.clone(),
            });
        }
        _ => return Err(TsaError::AlgorithmMismatch { usage }),
    };
    if ok {
        Ok(())
    } else {
        Err(TsaError::BadSignature)
    }
}
