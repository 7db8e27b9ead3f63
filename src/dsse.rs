//! DSSE v1 (Dead Simple Signing Envelope): the pre-authentication encoding
//! that signatures cover, and the JSON envelope that carries a payload and
//! its signatures.
//!
//! # What is produced
//! [`pae`] builds `"DSSEv1" SP LEN(type) SP type SP LEN(body) SP body`, where
//! LEN is the length in bytes written in ASCII decimal (DSSE
//! `protocol.md`, "Signature definition"). [`Envelope`] is the standard JSON
//! envelope (`envelope.md`): `payload` (base64), `payloadType`, and
//! `signatures[]` of `{keyid, sig}` (sig base64).
//!
//! # What is checked when parsing
//! [`Envelope::from_json`] requires `payload`, `payloadType` and
//! `signatures` with a `sig` each, rejects duplicate keys (serde's derived
//! structs do), and ignores unknown fields, as `envelope.md` tells consumers
//! to. [`Envelope::decode_payload`] and [`Signature::decode_sig`] accept
//! base64 with the standard or the URL-safe alphabet (both are allowed by
//! `envelope.md`), canonical padding only.
//!
//! # What is not checked
//! Which signature belongs to whom: `keyid` is a hint only and is not
//! authenticated by anything in the envelope.
//!
//! # Who uses it
//! `stamp` (statements, receipts, Sigstore bundle exports, ECDSA export
//! keys) and `vet` (the PAE a vet statement's signature covers).

use crate::note::{SignerKey, VerifierKey};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE};

/// The payload type of an in-toto Statement (in-toto attestation
/// `spec/v1/envelope.md`).
pub const IN_TOTO_PAYLOAD_TYPE: &str = "application/vnd.in-toto+json";

/// Why an envelope could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DsseError {
    /// The bytes are not a JSON envelope with the required fields.
    #[error("not a DSSE envelope: {0}")]
    Json(String),
    /// `payload` is not base64.
    #[error("DSSE payload is not base64")]
    PayloadNotBase64,
    /// `signatures[index].sig` is not base64.
    #[error("DSSE signature {index} is not base64")]
    SigNotBase64 {
        /// Position in `signatures`.
        index: usize,
    },
    /// `signatures[index].sig` is empty.
    #[error("DSSE signature {index} is empty")]
    SigEmpty {
        /// Position in `signatures`.
        index: usize,
    },
    /// The envelope carries no signature.
    #[error("DSSE envelope has no signature")]
    NoSignature,
}

/// One DSSE signature.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Signature {
    /// An unauthenticated hint naming the key (may be empty).
    #[serde(default)]
    pub keyid: String,
    /// The signature over [`pae`], base64 (standard alphabet when made here).
    pub sig: String,
}

impl Signature {
    /// A signature entry for raw signature bytes.
    pub fn new(keyid: &str, sig: &[u8]) -> Self {
        Signature {
            keyid: keyid.to_owned(),
            sig: STANDARD.encode(sig),
        }
    }

    /// The signature bytes (`index` is only used in the error).
    pub fn decode_sig(&self, index: usize) -> Result<Vec<u8>, DsseError> {
        let sig = decode_b64(&self.sig).ok_or(DsseError::SigNotBase64 { index })?;
        if sig.is_empty() {
            return Err(DsseError::SigEmpty { index });
        }
        Ok(sig)
    }
}

/// The DSSE JSON envelope.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Envelope {
    /// The serialized body, base64 (standard alphabet when made here).
    pub payload: String,
    /// How to interpret the payload, e.g. [`IN_TOTO_PAYLOAD_TYPE`].
    #[serde(rename = "payloadType")]
    pub payload_type: String,
    /// The signatures, each over `pae(payload_type, payload)`.
    pub signatures: Vec<Signature>,
}

impl Envelope {
    /// An envelope for `payload` with `signatures`.
    pub fn new(payload_type: &str, payload: &[u8], signatures: Vec<Signature>) -> Self {
        Envelope {
            payload: STANDARD.encode(payload),
            payload_type: payload_type.to_owned(),
            signatures,
        }
    }

    /// Parses a JSON envelope (required fields present, duplicate keys
    /// rejected, unknown fields ignored).
    pub fn from_json(bytes: &[u8]) -> Result<Self, DsseError> {
        serde_json::from_slice(bytes).map_err(|e| DsseError::Json(e.to_string()))
    }

    /// The payload bytes.
    pub fn decode_payload(&self) -> Result<Vec<u8>, DsseError> {
        decode_b64(&self.payload).ok_or(DsseError::PayloadNotBase64)
    }

    /// The PAE the signatures cover.
    pub fn pae(&self) -> Result<Vec<u8>, DsseError> {
        Ok(pae(&self.payload_type, &self.decode_payload()?))
    }

    /// Every signature's bytes, in order; at least one.
    pub fn decode_signatures(&self) -> Result<Vec<Vec<u8>>, DsseError> {
        if self.signatures.is_empty() {
            return Err(DsseError::NoSignature);
        }
        self.signatures
            .iter()
            .enumerate()
            .map(|(i, s)| s.decode_sig(i))
            .collect()
    }
}

/// Standard or URL-safe base64 with canonical padding.
fn decode_b64(text: &str) -> Option<Vec<u8>> {
    STANDARD
        .decode(text)
        .or_else(|_| URL_SAFE.decode(text))
        .ok()
}

/// The DSSE v1 pre-authentication encoding of `payload` under
/// `payload_type`: `"DSSEv1 <len(type)> <type> <len(payload)> <payload>"`,
/// lengths in bytes as ASCII decimal.
pub fn pae(payload_type: &str, payload: &[u8]) -> Vec<u8> {
    let t = payload_type.as_bytes();
    let mut out = Vec::with_capacity(32 + t.len() + payload.len());
    out.extend_from_slice(format!("DSSEv1 {} ", t.len()).as_bytes());
    out.extend_from_slice(t);
    out.extend_from_slice(format!(" {} ", payload.len()).as_bytes());
    out.extend_from_slice(payload);
    out
}

/// Signs the PAE of `payload` with a vouch Ed25519 key: pure Ed25519
/// (RFC 8032, no prehash), the 64-byte signature DSSE verifiers expect for
/// an Ed25519 key.
pub fn sign_dsse(signer: &SignerKey, payload_type: &str, payload: &[u8]) -> Vec<u8> {
    signer.sign_bytes(&pae(payload_type, payload)).to_vec()
}

/// Verifies a pure Ed25519 signature over the PAE of `payload` (strict
/// checks: canonical S, no small-order key or R).
pub fn verify_dsse(verifier: &VerifierKey, payload_type: &str, payload: &[u8], sig: &[u8]) -> bool {
    verifier.verify_bytes(&pae(payload_type, payload), sig)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The test vector of DSSE `protocol.md`, section "Test Vectors"
    /// (secure-systems-lab/dsse): body `hello world`, type
    /// `http://example.com/HelloWorld`.
    #[test]
    fn pae_matches_the_dsse_spec_vector() {
        assert_eq!(
            pae("http://example.com/HelloWorld", b"hello world"),
            b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"
        );
    }

    #[test]
    fn pae_lengths_are_bytes_in_decimal() {
        assert_eq!(pae("", b""), b"DSSEv1 0  0 ");
        let body = vec![b'x'; 1234];
        let p = pae("t\u{e9}", &body);
        assert!(p.starts_with("DSSEv1 3 t\u{e9} 1234 ".as_bytes()));
        assert_eq!(p.len(), "DSSEv1 3 t\u{e9} 1234 ".len() + 1234);
    }

    #[test]
    fn envelope_round_trips_and_parses_strictly() {
        let env = Envelope::new(
            IN_TOTO_PAYLOAD_TYPE,
            b"{\"a\":1}",
            vec![Signature::new("k", &[1, 2, 3])],
        );
        let json = serde_json::to_vec(&env).unwrap();
        let text = String::from_utf8(json.clone()).unwrap();
        assert!(text.contains("\"payloadType\":\"application/vnd.in-toto+json\""));
        let back = Envelope::from_json(&json).unwrap();
        assert_eq!(back, env);
        assert_eq!(back.decode_payload().unwrap(), b"{\"a\":1}");
        assert_eq!(back.decode_signatures().unwrap(), vec![vec![1, 2, 3]]);

        // Unknown fields are ignored; keyid may be absent.
        let e = Envelope::from_json(
            br#"{"payload":"aGk=","payloadType":"t","signatures":[{"sig":"AQ=="}],"x":1}"#,
        )
        .unwrap();
        assert_eq!(e.signatures[0].keyid, "");
        // URL-safe alphabet is allowed.
        let e = Envelope::from_json(br#"{"payload":"-_8=","payloadType":"t","signatures":[]}"#)
            .unwrap();
        assert_eq!(e.decode_payload().unwrap(), vec![0xfb, 0xff]);
        assert_eq!(e.decode_signatures(), Err(DsseError::NoSignature));

        for bad in [
            &br#"{"payloadType":"t","signatures":[]}"#[..],
            br#"{"payload":"aGk=","signatures":[]}"#,
            br#"{"payload":"aGk=","payloadType":"t"}"#,
            br#"{"payload":"aGk=","payloadType":"t","signatures":[{"keyid":"k"}]}"#,
            br#"{"payload":"aGk=","payload":"aGk=","payloadType":"t","signatures":[]}"#,
        ] {
            assert!(
                matches!(Envelope::from_json(bad), Err(DsseError::Json(_))),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
        let e = Envelope::from_json(
            br#"{"payload":"aGk","payloadType":"t","signatures":[{"sig":"!!"},{"sig":""}]}"#,
        )
        .unwrap();
        assert_eq!(e.decode_payload(), Err(DsseError::PayloadNotBase64));
        assert_eq!(
            e.signatures[0].decode_sig(0),
            Err(DsseError::SigNotBase64 { index: 0 })
        );
        assert_eq!(
            e.signatures[1].decode_sig(1),
            Err(DsseError::SigEmpty { index: 1 })
        );
    }

    #[test]
    fn ed25519_dsse_signatures_verify_and_bind_type_and_payload() {
        let k = SignerKey::from_seed("example.com/dsse", &[7; 32]).unwrap();
        let v = k.verifier();
        let sig = sign_dsse(&k, IN_TOTO_PAYLOAD_TYPE, b"body");
        assert_eq!(sig.len(), 64);
        assert!(verify_dsse(&v, IN_TOTO_PAYLOAD_TYPE, b"body", &sig));
        assert!(!verify_dsse(&v, IN_TOTO_PAYLOAD_TYPE, b"bodx", &sig));
        assert!(!verify_dsse(&v, "application/json", b"body", &sig));
        let mut bad = sig.clone();
        bad[0] ^= 1;
        assert!(!verify_dsse(&v, IN_TOTO_PAYLOAD_TYPE, b"body", &bad));
    }
}
