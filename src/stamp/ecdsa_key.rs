//! ECDSA P-256 keys for the Sigstore export: Sigstore verifiers (cosign v3,
//! sigstore-go, sigstore-js) all accept ECDSA P-256 with SHA-256, while
//! cosign v3 cannot verify Ed25519 keys.
//!
//! # What is read
//! An unencrypted private key in PEM, as `openssl genpkey -algorithm EC
//! -pkeyopt ec_paramgen_curve:P-256` writes it (`PRIVATE KEY`, PKCS#8 /
//! RFC 5208 `PrivateKeyInfo`), or the older SEC1 form (`EC PRIVATE KEY`,
//! RFC 5915 `ECPrivateKey`, as `openssl ecparam -genkey` writes). The curve
//! must be named and must be P-256 (prime256v1); any other algorithm or curve
//! is refused by name. When the key file also carries the public key, it
//! must match the private scalar.
//!
//! # What is produced
//! [`EcdsaP256Key::sign`] returns an ECDSA-SHA256 signature as a DER
//! `Ecdsa-Sig-Value` (RFC 5480 §2.2 / X9.62), with RFC 6979 deterministic
//! nonces: the encoding DSSE envelopes in Sigstore bundles carry and that
//! Node's `crypto.verify`, Go's `ecdsa.VerifyASN1` and OpenSSL read. The
//! public key is given as SubjectPublicKeyInfo (RFC 5480), DER or PEM
//! (`PUBLIC KEY`), with an uncompressed point.
//!
//! # What is not supported
//! Encrypted PKCS#8 (`ENCRYPTED PRIVATE KEY`), explicit curve parameters and
//! compressed public points in SPKI input.

use crate::pem::{encode as pem_encode, labelled_blocks as pem_labelled_blocks};
use crate::tsa::oid;
use der::asn1::{AnyRef, BitStringRef, ObjectIdentifier, OctetStringRef};
use der::{Decode, Encode, Tag, Tagged};
use p256::ecdsa::signature::{Signer, Verifier};
use p256::ecdsa::{Signature, SigningKey, VerifyingKey};
use pkcs8::PrivateKeyInfoRef;
use sec1::{EcParameters, EcPrivateKey};
use spki::{
    AlgorithmIdentifierRef, AlgorithmIdentifierWithOid, SubjectPublicKeyInfo,
    SubjectPublicKeyInfoRef,
};

/// id-ecPublicKey (RFC 5480 §2.1.1).
const EC_PUBLIC_KEY: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.2.1");
/// secp256r1 / prime256v1 (RFC 5480 §2.1.1.1).
const P256: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.3.1.7");

const ED25519: &str = "1.3.101.112";
const RSA: &str = "1.2.840.113549.1.1.1";
const SECP521R1: &str = "1.3.132.0.35";
const SECP256K1: &str = "1.3.132.0.10";

/// Why a key could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EcKeyError {
    /// The input is not PEM text.
    #[error(
        "not a PEM file (expected -----BEGIN PRIVATE KEY----- or -----BEGIN EC PRIVATE KEY-----)"
    )]
    NotPem,
    /// PEM, but with a label this reader does not take.
    #[error(
        "PEM block {label:?} is not an unencrypted EC private key (PRIVATE KEY or EC PRIVATE KEY)"
    )]
    UnsupportedPem {
        /// The label found.
        label: String,
    },
    /// More or fewer than one key block.
    #[error("expected exactly one private key block, found {count}")]
    KeyCount {
        /// How many key blocks were found.
        count: usize,
    },
    /// The DER does not decode as the named structure.
    #[error("malformed {part}")]
    Malformed {
        /// What was being decoded.
        part: &'static str,
    },
    /// The key is not an EC key.
    #[error("the key is {name} (OID {oid}), not ECDSA P-256")]
    UnsupportedAlgorithm {
        /// A readable name of the algorithm.
        name: &'static str,
        /// Its dotted OID.
        oid: String,
    },
    /// An EC key on another curve.
    #[error("the EC key is on curve {name} (OID {oid}); only P-256 (prime256v1) is supported")]
    UnsupportedCurve {
        /// A readable curve name.
        name: &'static str,
        /// Its dotted OID.
        oid: String,
    },
    /// The key does not name its curve (explicit parameters, or none).
    #[error("the EC key does not name its curve; only a named P-256 curve is supported")]
    CurveNotNamed,
    /// The private scalar is out of range.
    #[error("the private key is not a valid P-256 scalar")]
    InvalidScalar,
    /// The embedded public key does not belong to the private key.
    #[error("the public key in the key file does not match the private key")]
    PublicKeyMismatch,
    /// The public key is not a P-256 point.
    #[error("the public key is not a valid P-256 point")]
    InvalidPublicKey,
    /// The signature is not a DER ECDSA signature, or does not verify.
    #[error("ECDSA P-256 signature does not verify")]
    BadSignature,
}

/// An ECDSA P-256 private key.
///
/// `Debug` does not print the secret.
#[derive(Clone)]
pub struct EcdsaP256Key {
    key: SigningKey,
}

impl std::fmt::Debug for EcdsaP256Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EcdsaP256Key")
            .field("public", &crate::hex::encode(&self.spki_der()))
            .finish_non_exhaustive()
    }
}

fn curve_name(oid: &str) -> &'static str {
    match oid {
        oid::P256 => "P-256",
        oid::P384 => "P-384",
        SECP521R1 => "P-521",
        SECP256K1 => "secp256k1",
        _ => "unknown",
    }
}

fn algorithm_name(oid: &str) -> &'static str {
    match oid {
        ED25519 => "Ed25519",
        RSA => "RSA",
        oid::EC_PUBLIC_KEY => "EC",
        _ => "unknown",
    }
}

/// The dotted form of an OID, for error reports.
fn dotted(oid: &ObjectIdentifier) -> String {
    oid.to_string()
}

/// Requires id-ecPublicKey with the named curve P-256 in an
/// `AlgorithmIdentifier` (PKCS#8 or SPKI).
fn check_algorithm(alg: &AlgorithmIdentifierRef<'_>, part: &'static str) -> Result<(), EcKeyError> {
    if alg.oid != EC_PUBLIC_KEY {
        let oid = dotted(&alg.oid);
        return Err(EcKeyError::UnsupportedAlgorithm {
            name: algorithm_name(&oid),
            oid,
        });
    }
    match alg.parameters {
        Some(params) if params.tag() == Tag::ObjectIdentifier => {
            let curve: ObjectIdentifier = params
                .decode_as()
                .map_err(|_| EcKeyError::Malformed { part })?;
            check_curve(&curve)
        }
        _ => Err(EcKeyError::CurveNotNamed),
    }
}

fn check_curve(curve: &ObjectIdentifier) -> Result<(), EcKeyError> {
    if *curve != P256 {
        let oid = dotted(curve);
        return Err(EcKeyError::UnsupportedCurve {
            name: curve_name(&oid),
            oid,
        });
    }
    Ok(())
}

/// The shape of an RFC 5915 `ECPrivateKey` with its parameters left
/// undecoded: read only when `sec1` refuses a key, to tell explicit curve
/// parameters (which `sec1` does not take) from a malformed key.
#[derive(der::Sequence)]
struct EcPrivateKeyShape<'a> {
    version: u8,
    private_key: &'a OctetStringRef,
    #[asn1(context_specific = "0", tag_mode = "EXPLICIT", optional = "true")]
    parameters: Option<AnyRef<'a>>,
    #[asn1(context_specific = "1", tag_mode = "EXPLICIT", optional = "true")]
    public_key: Option<BitStringRef<'a>>,
}

impl EcdsaP256Key {
    /// Reads the P-256 key file at `path` (PKCS#8 or SEC1 PEM, at most
    /// 64 KiB; [`Self::from_pem`]).
    pub fn load(path: &std::path::Path) -> crate::Result<Self> {
        let pem = crate::fs::read_bounded(path, 1 << 16)?;
        Self::from_pem(&pem).map_err(|problem| {
            crate::Error::Stamp(super::StampProblem::P256Key {
                path: path.to_path_buf(),
                problem,
            })
        })
    }

    /// Reads a PEM private key: `PRIVATE KEY` (PKCS#8) or `EC PRIVATE KEY`
    /// (SEC1). Other PEM blocks (e.g. `EC PARAMETERS`, which `openssl
    /// ecparam -genkey` writes first) are skipped; exactly one key block
    /// must be present.
    pub fn from_pem(data: &[u8]) -> Result<Self, EcKeyError> {
        let blocks = pem_labelled_blocks(data).ok_or(EcKeyError::NotPem)?;
        let mut keys = Vec::new();
        for (label, der) in blocks {
            match label.as_str() {
                "PRIVATE KEY" => keys.push((true, der)),
                "EC PRIVATE KEY" => keys.push((false, der)),
                "EC PARAMETERS" => {}
                _ => return Err(EcKeyError::UnsupportedPem { label }),
            }
        }
        if keys.len() != 1 {
            return Err(EcKeyError::KeyCount { count: keys.len() });
        }
        let (pkcs8, der) = &keys[0];
        if *pkcs8 {
            Self::from_pkcs8_der(der)
        } else {
            Self::from_sec1_der(der)
        }
    }

    /// Reads a DER PKCS#8 `PrivateKeyInfo` (v1) or `OneAsymmetricKey` (v2).
    pub fn from_pkcs8_der(der: &[u8]) -> Result<Self, EcKeyError> {
        const PART: &str = "PKCS#8 PrivateKeyInfo";
        // Version 0 (v1) or 1 (v2, which must then carry the public key);
        // attributes and the v2 public key are read and not used: the
        // SEC1 key inside carries what is checked.
        let info =
            PrivateKeyInfoRef::from_der(der).map_err(|_| EcKeyError::Malformed { part: PART })?;
        check_algorithm(&info.algorithm, PART)?;
        Self::from_sec1_inner(info.private_key.as_bytes(), true)
    }

    /// Reads a DER SEC1 `ECPrivateKey`, which must name the P-256 curve.
    pub fn from_sec1_der(der: &[u8]) -> Result<Self, EcKeyError> {
        Self::from_sec1_inner(der, false)
    }

    /// `ECPrivateKey ::= SEQUENCE { version 1, privateKey OCTET STRING,
    /// [0] ECParameters OPTIONAL, [1] BIT STRING OPTIONAL }` (RFC 5915 §3).
    /// Inside PKCS#8 the curve is named by the outer algorithm, so `[0]`
    /// is optional there; standing alone it is required.
    fn from_sec1_inner(der: &[u8], in_pkcs8: bool) -> Result<Self, EcKeyError> {
        const PART: &str = "SEC1 ECPrivateKey";
        let malformed = EcKeyError::Malformed { part: PART };
        let key = match EcPrivateKey::from_der(der) {
            Ok(key) => key,
            Err(_) => {
                // sec1 reads only named curves: explicit parameters that
                // are otherwise well formed are reported as such.
                return Err(match EcPrivateKeyShape::from_der(der) {
                    Ok(shape)
                        if shape.version == 1
                            && shape
                                .parameters
                                .is_some_and(|p| p.tag() != Tag::ObjectIdentifier) =>
                    {
                        EcKeyError::CurveNotNamed
                    }
                    _ => malformed,
                });
            }
        };
        match &key.parameters {
            Some(EcParameters::NamedCurve(curve)) => check_curve(curve)?,
            None if !in_pkcs8 => return Err(EcKeyError::CurveNotNamed),
            None => {}
        }
        if key.private_key.len() != 32 {
            return Err(EcKeyError::InvalidScalar);
        }
        let signing =
            SigningKey::from_slice(key.private_key).map_err(|_| EcKeyError::InvalidScalar)?;
        if let Some(point) = key.public_key {
            let given =
                VerifyingKey::from_sec1_bytes(point).map_err(|_| EcKeyError::InvalidPublicKey)?;
            if &given != signing.verifying_key() {
                return Err(EcKeyError::PublicKeyMismatch);
            }
        }
        Ok(EcdsaP256Key { key: signing })
    }

    /// Builds a key from a 32-byte big-endian private scalar.
    pub fn from_scalar(bytes: &[u8]) -> Result<Self, EcKeyError> {
        if bytes.len() != 32 {
            return Err(EcKeyError::InvalidScalar);
        }
        let key = SigningKey::from_slice(bytes).map_err(|_| EcKeyError::InvalidScalar)?;
        Ok(EcdsaP256Key { key })
    }

    /// ECDSA-SHA256 over `msg` with an RFC 6979 nonce, DER-encoded.
    pub fn sign(&self, msg: &[u8]) -> Vec<u8> {
        let sig: Signature = self.key.sign(msg);
        sig.to_der().as_bytes().to_vec()
    }

    /// The 65-byte uncompressed public point.
    pub fn public_point(&self) -> Vec<u8> {
        self.key
            .verifying_key()
            .to_sec1_point(false)
            .as_bytes()
            .to_vec()
    }

    /// The public key as DER SubjectPublicKeyInfo (id-ecPublicKey,
    /// prime256v1, uncompressed point).
    pub fn spki_der(&self) -> Vec<u8> {
        spki_from_point(&self.public_point())
    }

    /// The public key as PEM (`-----BEGIN PUBLIC KEY-----`).
    pub fn public_key_pem(&self) -> String {
        pem_encode("PUBLIC KEY", &self.spki_der())
    }
}

/// DER SubjectPublicKeyInfo for an uncompressed P-256 point.
fn spki_from_point(point: &[u8]) -> Vec<u8> {
    let spki = BitStringRef::from_bytes(point).map(|key| SubjectPublicKeyInfo {
        algorithm: AlgorithmIdentifierWithOid {
            oid: EC_PUBLIC_KEY,
            parameters: Some(P256),
        },
        subject_public_key: key,
    });
    // A 65-byte point always encodes.
    spki.and_then(|spki| spki.to_der()).unwrap_or_default()
}

/// The uncompressed point of a P-256 SubjectPublicKeyInfo.
fn point_from_spki(spki: &[u8]) -> Result<VerifyingKey, EcKeyError> {
    const PART: &str = "SubjectPublicKeyInfo";
    let info = SubjectPublicKeyInfoRef::from_der(spki)
        .map_err(|_| EcKeyError::Malformed { part: PART })?;
    check_algorithm(&info.algorithm, PART)?;
    match info.subject_public_key.as_bytes() {
        Some(point) if point.len() == 65 && point[0] == 4 => {
            VerifyingKey::from_sec1_bytes(point).map_err(|_| EcKeyError::InvalidPublicKey)
        }
        _ => Err(EcKeyError::InvalidPublicKey),
    }
}

/// Verifies a DER ECDSA-SHA256 signature over `msg` with a P-256 public key
/// given as DER SubjectPublicKeyInfo.
pub fn verify(spki_der: &[u8], msg: &[u8], sig_der: &[u8]) -> Result<(), EcKeyError> {
    let key = point_from_spki(spki_der)?;
    let sig = Signature::from_der(sig_der).map_err(|_| EcKeyError::BadSignature)?;
    key.verify(msg, &sig).map_err(|_| EcKeyError::BadSignature)
}

/// Reads a PEM public key (`PUBLIC KEY`, SPKI) and returns its DER after
/// checking that it is a P-256 key.
pub fn spki_from_pem(data: &[u8]) -> Result<Vec<u8>, EcKeyError> {
    let blocks = pem_labelled_blocks(data).ok_or(EcKeyError::NotPem)?;
    let mut keys: Vec<Vec<u8>> = Vec::new();
    for (label, der) in blocks {
        if label != "PUBLIC KEY" {
            return Err(EcKeyError::UnsupportedPem { label });
        }
        keys.push(der);
    }
    if keys.len() != 1 {
        return Err(EcKeyError::KeyCount { count: keys.len() });
    }
    let der = keys.remove(0);
    point_from_spki(&der)?;
    Ok(der)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decimal_to_be32(dec: &str) -> [u8; 32] {
        let mut out = [0u8; 32];
        for c in dec.bytes() {
            let mut carry = u32::from(c - b'0');
            for b in out.iter_mut().rev() {
                let v = u32::from(*b) * 10 + carry;
                *b = (v & 0xff) as u8;
                carry = v >> 8;
            }
            assert_eq!(carry, 0);
        }
        out
    }

    /// The key and signature of the DSSE `protocol.md` test vector ("Test
    /// Vectors", secure-systems-lab/dsse): ECDSA P-256 / SHA-256 with RFC
    /// 6979 nonces, the signature given there as raw r||s.
    #[test]
    fn dsse_spec_vector_signature_is_reproduced() {
        use base64::Engine;
        let d = decimal_to_be32(
            "97358161215184420915383655311931858321456579547487070936769975997791359926199",
        );
        let key = EcdsaP256Key::from_scalar(&d).unwrap();
        let x = decimal_to_be32(
            "46950820868899156662930047687818585632848591499744589407958293238635476079160",
        );
        let y = decimal_to_be32(
            "5640078356564379163099075877009565129882514886557779369047442380624545832820",
        );
        let point = key.public_point();
        assert_eq!(&point[1..33], &x);
        assert_eq!(&point[33..], &y);

        let pae = crate::dsse::pae("http://example.com/HelloWorld", b"hello world");
        let der = key.sign(&pae);
        let raw = Signature::from_der(&der).unwrap().to_bytes();
        let expected = base64::engine::general_purpose::STANDARD
            .decode("A3JqsQGtVsJ2O2xqrI5IcnXip5GToJ3F+FnZ+O88SjtR6rDAajabZKciJTfUiHqJPcIAriEGAHTVeCUjW2JIZA==")
            .unwrap();
        assert_eq!(raw.as_slice(), expected.as_slice());
        verify(&key.spki_der(), &pae, &der).unwrap();
        let mut bad = pae.clone();
        bad[0] ^= 1;
        assert_eq!(
            verify(&key.spki_der(), &bad, &der),
            Err(EcKeyError::BadSignature)
        );
        assert_eq!(
            verify(&key.spki_der(), &pae, &raw),
            Err(EcKeyError::BadSignature)
        );
        assert_eq!(
            spki_from_pem(key.public_key_pem().as_bytes()).unwrap(),
            key.spki_der()
        );
    }

    // Keys made with OpenSSL 3.0 for these tests only.
    const P256_PKCS8: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQggKh/eDag6Kt5WpLL
7PwBb/d79iktammyyr6wDfg3P62hRANCAAQPUx6ZCycglvLrQf7zKLz32WhTbxen
y6CO5YBkxrwh0meVs6YKpS3VmaoqOo/juG8rnJHrvCoSnHHC8K1M2xqW
-----END PRIVATE KEY-----
";
    const P256_PUB: &str = "-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAED1MemQsnIJby60H+8yi899loU28X
p8ugjuWAZMa8IdJnlbOmCqUt1ZmqKjqP47hvK5yR67wqEpxxwvCtTNsalg==
-----END PUBLIC KEY-----
";
    const P256_SEC1: &str = "-----BEGIN EC PARAMETERS-----
BggqhkjOPQMBBw==
-----END EC PARAMETERS-----
-----BEGIN EC PRIVATE KEY-----
MHcCAQEEIPIKW4VDlKadsnDeaoqSpvkFKWlvpicr5DHAPQUUqM4woAoGCCqGSM49
AwEHoUQDQgAE0dHhtFxZGerUzqQ6AKOqDsTSGmhsq6Hjk2qlEX9MYzv/bKmtXEHR
gchyCdV3mlm50YHe6NGeLgNZp+GQRaCq8w==
-----END EC PRIVATE KEY-----
";
    const P384_PKCS8: &str = "-----BEGIN PRIVATE KEY-----
MIG2AgEAMBAGByqGSM49AgEGBSuBBAAiBIGeMIGbAgEBBDCa7LdRozq1VzGGavY/
MYLQ70UbZMJM/E32wBSP23bIvZxh2QHBwfKRX0Xnxu6ZbNOhZANiAAQpXN8TjZVB
IfUZy2sTYnIq7ozliuQMJLqTugvpeqXdRAk8lN6KENlGPTEbhIIPCZZui2GB8UA+
ohJDRcX9BpiyEZPDRpLvHOcYCD8j9BY0bt2I/ECP1fMG8rS8PZNojRY=
-----END PRIVATE KEY-----
";
    const ED25519_PKCS8: &str = "-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEIBVEpHjNO2Od6tm7Pd4FDzbsR6LwrJItFSInxEznhWdZ
-----END PRIVATE KEY-----
";
    const K1_PKCS8: &str = "-----BEGIN PRIVATE KEY-----
MIGEAgEAMBAGByqGSM49AgEGBSuBBAAKBG0wawIBAQQgZ0BTmLp1PE6hpoaebijt
6k7VTf4wZz6ydXTPat2BGGOhRANCAAQQb5lip1vpBjwa2bv1sC8ItiaSnnHHdOBW
cxkp+T9AfRBRO3hpKyP+oKdTotrtdzxeGl7lPdM8W2jZX2rf7qpH
-----END PRIVATE KEY-----
";

    #[test]
    fn openssl_keys_load_and_other_curves_are_refused_by_name() {
        let k = EcdsaP256Key::from_pem(P256_PKCS8.as_bytes()).unwrap();
        assert_eq!(k.public_key_pem(), P256_PUB);
        let sig = k.sign(b"m");
        verify(&spki_from_pem(P256_PUB.as_bytes()).unwrap(), b"m", &sig).unwrap();

        let s = EcdsaP256Key::from_pem(P256_SEC1.as_bytes()).unwrap();
        verify(&s.spki_der(), b"m", &s.sign(b"m")).unwrap();
        assert_eq!(
            verify(&k.spki_der(), b"m", &s.sign(b"m")),
            Err(EcKeyError::BadSignature)
        );

        let err = |pem: &str| {
            EcdsaP256Key::from_pem(pem.as_bytes())
                .map(|_| ())
                .unwrap_err()
        };
        assert_eq!(
            err(P384_PKCS8),
            EcKeyError::UnsupportedCurve {
                name: "P-384",
                oid: "1.3.132.0.34".into()
            }
        );
        assert_eq!(
            err(K1_PKCS8),
            EcKeyError::UnsupportedCurve {
                name: "secp256k1",
                oid: "1.3.132.0.10".into()
            }
        );
        assert_eq!(
            err(ED25519_PKCS8),
            EcKeyError::UnsupportedAlgorithm {
                name: "Ed25519",
                oid: "1.3.101.112".into()
            }
        );
        assert!(err(P384_PKCS8).to_string().contains("only P-256"));
        assert_eq!(
            err(P256_PUB),
            EcKeyError::UnsupportedPem {
                label: "PUBLIC KEY".into()
            }
        );
        assert_eq!(
            err(
                "-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n"
            ),
            EcKeyError::UnsupportedPem {
                label: "ENCRYPTED PRIVATE KEY".into()
            }
        );
        assert_eq!(err("\x30\x00"), EcKeyError::NotPem);
        assert_eq!(
            err(&format!("{P256_PKCS8}{P256_PKCS8}")),
            EcKeyError::KeyCount { count: 2 }
        );
        assert_eq!(
            err("-----BEGIN PRIVATE KEY-----\nMAA=\n-----END PRIVATE KEY-----\n"),
            EcKeyError::Malformed {
                part: "PKCS#8 PrivateKeyInfo"
            }
        );
        assert!(matches!(
            spki_from_pem(P384_PKCS8.as_bytes()),
            Err(EcKeyError::UnsupportedPem { .. })
        ));
    }

    #[test]
    fn sec1_curve_parameters_must_name_p256() {
        let sec1 = |version: u8, params: &[u8]| {
            let mut body = vec![0x02, 0x01, version, 0x04, 0x20];
            body.extend([0x11; 32]);
            body.extend_from_slice(params);
            let mut der = vec![0x30, body.len() as u8];
            der.extend(body);
            EcdsaP256Key::from_sec1_der(&der).map(|_| ())
        };
        let p256 = [
            0xa0, 0x0a, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07,
        ];
        assert_eq!(sec1(1, &p256), Ok(()));
        // Explicit parameters (a SEQUENCE), or none outside PKCS#8.
        assert_eq!(
            sec1(1, &[0xa0, 0x02, 0x30, 0x00]),
            Err(EcKeyError::CurveNotNamed)
        );
        assert_eq!(sec1(1, &[]), Err(EcKeyError::CurveNotNamed));
        let malformed = Err(EcKeyError::Malformed {
            part: "SEC1 ECPrivateKey",
        });
        assert_eq!(sec1(2, &p256), malformed);
        assert_eq!(sec1(2, &[0xa0, 0x02, 0x30, 0x00]), malformed);
        assert_eq!(sec1(1, &[0xa0, 0x02, 0x05, 0x00, 0x00]), malformed);
    }

    #[test]
    fn a_mismatched_embedded_public_key_is_refused() {
        let blocks = pem_labelled_blocks(P256_PKCS8.as_bytes()).unwrap();
        let mut der = blocks[0].1.clone();
        // The last byte is the public point's last y byte.
        let n = der.len() - 1;
        der[n] ^= 1;
        let pem = pem_encode("PRIVATE KEY", &der);
        let e = EcdsaP256Key::from_pem(pem.as_bytes())
            .map(|_| ())
            .unwrap_err();
        assert!(
            matches!(
                e,
                EcKeyError::InvalidPublicKey | EcKeyError::PublicKeyMismatch
            ),
            "{e:?}"
        );
    }
}
