//! The Sigstore export: a Sigstore bundle v0.3 holding one DSSE envelope
//! signed with a known public key and one RFC 3161 time stamp, and the
//! Sigstore `TrustedRoot` that names the time-stamp authority.
//!
//! # What is produced
//! [`bundle`] makes `{mediaType: application/vnd.dev.sigstore.bundle.v0.3+json,
//! verificationMaterial: {publicKey: {hint}, tlogEntries: [],
//! timestampVerificationData: {rfc3161Timestamps: [{signedTimestamp}]}},
//! dsseEnvelope}` (protobuf-specs `sigstore_bundle.proto`, in its proto3
//! JSON form: camelCase names, bytes as standard base64). The envelope
//! carries exactly one signature. `signedTimestamp` is the DER
//! **TimeStampResp** (status and token), which is what protobuf-specs
//! `sigstore_common.proto` (`RFC3161SignedTimestamp`) asks for and what
//! `@sigstore/core`'s `RFC3161Timestamp` parses (it reads the status as the
//! first element and the token as the second); a bare TimeStampToken given
//! to [`bundle`] is wrapped in a TimeStampResp with status `granted`
//! ([`timestamp_response`]).
//!
//! [`trusted_root`] makes a `TrustedRoot`
//! (`application/vnd.dev.sigstore.trustedroot+json;version=0.1`,
//! `sigstore_trustroot.proto`) with one `timestampAuthorities` entry: the
//! TSA's certificate chain, signer first, as DER, and `validFor.start`.
//! cosign takes it with `--trusted-root`; `@sigstore/verify` with
//! `toTrustMaterial`.
//!
//! # What peers check
//! `@sigstore/verify` 4.1.3 (`verifier.js`): the time stamp's imprint is
//! over the **DSSE signature bytes** (`entity.signature.signature`), its
//! signer is the first certificate of a timestampAuthorities chain (matched
//! by issuer and serial), the chain is valid at genTime, and the TSA's
//! `validFor` contains genTime; the public key named by `hint` (looked up by
//! the caller's key finder) must be valid at genTime; the signature must
//! verify over the DSSE PAE. cosign's `verify-blob-attestation
//! --use-signed-timestamps --insecure-ignore-tlog` does the same and also
//! matches the in-toto subjects against the artifact.
//!
//! # Key types
//! `@sigstore/verify` 4.1.3 verifies the DSSE signature with Node's
//! `crypto.verify` and no digest argument, so it takes ECDSA P-256
//! (SHA-256, DER signature) and pure Ed25519 over the PAE (as
//! [`crate::dsse::sign_dsse`] makes); both are exercised against it in
//! `tests/sigstore_export.rs`. cosign v3 cannot verify Ed25519 keys (it
//! uses Ed25519ph; cosign PR #5074), so P-256 ([`super::ecdsa_key`]) is
//! the key type for an export meant for cosign.
//!
//! # What is not checked
//! Nothing here verifies: these functions only assemble. There is no
//! transparency-log entry (`tlogEntries` is empty), so a verifier must be
//! told to need none. The key `hint` is not authenticated; the verifier's key
//! finder decides which key it names.

use crate::dsse::{Envelope, Signature};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use der::asn1::{AnyRef, BitStringRef, ObjectIdentifier, UintRef};
use der::{Decode, Encode, EncodingRules, Header, Length, Reader, SliceReader, Tag, Tagged};
use spki::{AlgorithmIdentifierRef, SubjectPublicKeyInfoRef};

/// The media type of a Sigstore bundle v0.3.
pub const BUNDLE_V03_MEDIA_TYPE: &str = "application/vnd.dev.sigstore.bundle.v0.3+json";
/// The media type of a Sigstore trusted root.
pub const TRUSTED_ROOT_MEDIA_TYPE: &str =
    "application/vnd.dev.sigstore.trustedroot+json;version=0.1";

/// Why a bundle or trusted root could not be assembled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SigstoreError {
    /// The time stamp is neither a TimeStampResp nor a TimeStampToken.
    #[error("the time stamp is not a DER TimeStampResp or TimeStampToken: malformed {part}")]
    TimestampMalformed {
        /// What was being decoded.
        part: &'static str,
    },
    /// A TimeStampResp whose status is not granted (0) or grantedWithMods (1).
    #[error("the TimeStampResp has status {status}, not granted")]
    TimestampNotGranted {
        /// The PKIStatus value.
        status: u64,
    },
    /// A granted TimeStampResp without a token.
    #[error("the TimeStampResp carries no TimeStampToken")]
    TimestampTokenMissing,
    /// The signature is empty.
    #[error("the signature is empty")]
    EmptySignature,
    /// The payload is empty (`@sigstore/bundle` refuses an empty payload).
    #[error("the payload is empty")]
    EmptyPayload,
    /// The TSA certificate file holds no usable certificate chain.
    #[error("TSA certificate chain: {0}")]
    CertificateChain(String),
}

/// A Sigstore bundle v0.3 with a DSSE envelope.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Bundle {
    /// [`BUNDLE_V03_MEDIA_TYPE`].
    pub media_type: String,
    /// The key hint, log entries (none) and time stamps.
    pub verification_material: VerificationMaterial,
    /// The signed statement.
    pub dsse_envelope: Envelope,
}

/// `verificationMaterial` of a bundle signed with a known public key.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VerificationMaterial {
    /// Names the verification key for the verifier's key lookup.
    pub public_key: PublicKeyIdentifier,
    /// Transparency-log entries: always empty here, but required by
    /// `@sigstore/bundle`.
    pub tlog_entries: Vec<serde_json::Value>,
    /// The RFC 3161 time stamps.
    pub timestamp_verification_data: TimestampVerificationData,
}

/// `publicKey` (protobuf-specs `PublicKeyIdentifier`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PublicKeyIdentifier {
    /// An unauthenticated name for the key.
    pub hint: String,
}

/// `timestampVerificationData`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TimestampVerificationData {
    /// The time stamps over the signature.
    pub rfc3161_timestamps: Vec<Rfc3161SignedTimestamp>,
}

/// One `RFC3161SignedTimestamp`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rfc3161SignedTimestamp {
    /// The DER TimeStampResp, base64.
    pub signed_timestamp: String,
}

/// Assembles a bundle: the envelope of `payload` with the one signature
/// `sig` (over the DSSE PAE) under `keyid`, the key `hint`, and the time
/// stamp `timestamp_der` (a DER TimeStampResp, or a bare TimeStampToken,
/// which is wrapped; see [`timestamp_response`]). The time stamp must be
/// over SHA-256 of `sig` for verifiers to accept it; that is not checked
/// here.
pub fn bundle(
    payload_type: &str,
    payload: &[u8],
    sig: &[u8],
    keyid: &str,
    hint: &str,
    timestamp_der: &[u8],
) -> Result<Bundle, SigstoreError> {
    if sig.is_empty() {
        return Err(SigstoreError::EmptySignature);
    }
    if payload.is_empty() {
        return Err(SigstoreError::EmptyPayload);
    }
    let resp = timestamp_response(timestamp_der)?;
    Ok(Bundle {
        media_type: BUNDLE_V03_MEDIA_TYPE.to_owned(),
        verification_material: VerificationMaterial {
            public_key: PublicKeyIdentifier {
                hint: hint.to_owned(),
            },
            tlog_entries: Vec::new(),
            timestamp_verification_data: TimestampVerificationData {
                rfc3161_timestamps: vec![Rfc3161SignedTimestamp {
                    signed_timestamp: STANDARD.encode(resp),
                }],
            },
        },
        dsse_envelope: Envelope::new(payload_type, payload, vec![Signature::new(keyid, sig)]),
    })
}

/// A key hint for a public key: base64 (standard) of SHA-256 over its DER
/// SubjectPublicKeyInfo. A convention of vouch, stable for a key; any
/// string the verifier's key finder understands would do.
pub fn key_hint(spki_der: &[u8]) -> String {
    use sha2::Digest;
    STANDARD.encode(sha2::Sha256::digest(spki_der))
}

/// id-Ed25519 (RFC 8410 §3).
const ED25519: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.101.112");

/// The DER SubjectPublicKeyInfo of an Ed25519 public key (RFC 8410).
pub fn ed25519_spki_der(public: &[u8; 32]) -> Vec<u8> {
    let spki = BitStringRef::from_bytes(public).map(|key| SubjectPublicKeyInfoRef {
        algorithm: AlgorithmIdentifierRef {
            oid: ED25519,
            parameters: None,
        },
        subject_public_key: key,
    });
    // A 32-byte key always encodes.
    spki.and_then(|spki| spki.to_der()).unwrap_or_default()
}

/// An Ed25519 public key as PEM (`-----BEGIN PUBLIC KEY-----`).
pub fn ed25519_public_key_pem(public: &[u8; 32]) -> String {
    crate::pem::encode("PUBLIC KEY", &ed25519_spki_der(public))
}

enum TimestampForm<'a> {
    /// A TimeStampResp, with its token's bytes.
    Response { token: &'a [u8] },
    /// A bare TimeStampToken (ContentInfo).
    Token,
}

fn m(part: &'static str) -> impl Fn(der::Error) -> SigstoreError {
    move |_| SigstoreError::TimestampMalformed { part }
}

/// A reader that also takes the BER forms (indefinite lengths) real TSAs
/// send.
fn ber_reader<'a>(bytes: &'a [u8], part: &'static str) -> Result<SliceReader<'a>, SigstoreError> {
    SliceReader::new_with_encoding_rules(bytes, EncodingRules::Ber).map_err(m(part))
}

/// The next element: its tag and its content octets. `der` leaves the
/// end-of-contents octets of an indefinite length in the content of an
/// `AnyRef`; they are dropped here.
fn next_element<'a>(r: &mut SliceReader<'a>) -> der::Result<(Tag, &'a [u8])> {
    // Not `Reader::tlv_bytes`: for an indefinite length it counts the
    // header as if the length were definite, and fails on any element of
    // 128 bytes or more. Decoding the element consumes it whole.
    let mut head = [0u8; 2];
    r.peek_into(&mut head)?;
    let any = AnyRef::decode(r)?;
    let value = any.value();
    let indefinite = matches!(head, [t, 0x80] if t & 0x1f != 0x1f);
    let value = match value.strip_suffix(&[0, 0]) {
        Some(v) if indefinite => v,
        _ => value,
    };
    Ok((any.tag(), value))
}

/// The content of the next element, which must have `tag`.
fn read_tagged<'a>(
    r: &mut SliceReader<'a>,
    tag: Tag,
    part: &'static str,
) -> Result<&'a [u8], SigstoreError> {
    let (found, value) = next_element(r).map_err(m(part))?;
    if found != tag {
        return Err(SigstoreError::TimestampMalformed { part });
    }
    Ok(value)
}

fn classify(der: &[u8]) -> Result<TimestampForm<'_>, SigstoreError> {
    const PART: &str = "TimeStampResp";
    let mut outer = ber_reader(der, PART)?;
    let top = read_tagged(&mut outer, Tag::Sequence, PART)?;
    outer.finish().map_err(m(PART))?;
    let mut r = ber_reader(top, PART)?;
    match Tag::peek(&r).ok() {
        Some(Tag::Sequence) => {
            // TimeStampResp ::= SEQUENCE { status PKIStatusInfo,
            //   timeStampToken TimeStampToken OPTIONAL } (RFC 3161 §2.4.2)
            let status = read_tagged(&mut r, Tag::Sequence, "PKIStatusInfo")?;
            let mut sr = ber_reader(status, "PKIStatus")?;
            let value: UintRef<'_> = sr.decode().map_err(m("PKIStatus"))?;
            let status = match value.as_bytes() {
                [] => 0,
                b if b.len() <= 8 => b.iter().fold(0u64, |acc, b| (acc << 8) | u64::from(*b)),
                _ => return Err(SigstoreError::TimestampMalformed { part: "PKIStatus" }),
            };
            if status > 1 {
                return Err(SigstoreError::TimestampNotGranted { status });
            }
            if r.is_finished() {
                return Err(SigstoreError::TimestampTokenMissing);
            }
            const TOKEN: &str = "TimeStampToken";
            if Tag::peek(&r).ok() != Some(Tag::Sequence) {
                return Err(SigstoreError::TimestampMalformed { part: TOKEN });
            }
            // By reader positions, not `tlv_bytes` (see `next_element`).
            let start = usize::try_from(r.position()).map_err(m(TOKEN))?;
            AnyRef::decode(&mut r).map_err(m(TOKEN))?;
            let end = usize::try_from(r.position()).map_err(m(TOKEN))?;
            let token = top
                .get(start..end)
                .ok_or(SigstoreError::TimestampMalformed { part: TOKEN })?;
            r.finish().map_err(m(PART))?;
            Ok(TimestampForm::Response { token })
        }
        // ContentInfo ::= SEQUENCE { contentType OID, [0] EXPLICIT content }
        Some(Tag::ObjectIdentifier) => Ok(TimestampForm::Token),
        _ => Err(SigstoreError::TimestampMalformed { part: PART }),
    }
}

/// `PKIStatusInfo` (RFC 3161 §2.4.2) with only the status.
#[derive(Clone, Copy, Debug, der::Sequence)]
struct PkiStatusInfo {
    status: u8,
}

/// PKIStatus `granted`.
const GRANTED: PkiStatusInfo = PkiStatusInfo { status: 0 };

/// The DER TimeStampResp to put in `signedTimestamp`: a granted
/// TimeStampResp as given, or a bare TimeStampToken wrapped in a
/// TimeStampResp with status `granted` (0). The status is not signed, so
/// the wrapping adds no claim the token does not make.
pub fn timestamp_response(der: &[u8]) -> Result<Vec<u8>, SigstoreError> {
    match classify(der)? {
        TimestampForm::Response { .. } => Ok(der.to_vec()),
        TimestampForm::Token => {
            // The token's own bytes are kept as given (BER included), so
            // the SEQUENCE header is written around them.
            const PART: &str = "TimeStampResp";
            let status = GRANTED.to_der().map_err(m(PART))?;
            let len = Length::try_from(status.len() + der.len()).map_err(m(PART))?;
            let mut out = Header::new(Tag::Sequence, len).to_der().map_err(m(PART))?;
            out.extend(status);
            out.extend_from_slice(der);
            Ok(out)
        }
    }
}

/// The TimeStampToken (ContentInfo) out of a granted TimeStampResp; a bare
/// token is returned as given.
pub fn timestamp_token(der: &[u8]) -> Result<Vec<u8>, SigstoreError> {
    match classify(der)? {
        TimestampForm::Response { token } => Ok(token.to_vec()),
        TimestampForm::Token => Ok(der.to_vec()),
    }
}

/// A Sigstore `TrustedRoot` (protobuf-specs `sigstore_trustroot.proto`).
/// Only time-stamp authorities are filled in; the log and CA lists are
/// empty.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TrustedRoot {
    /// [`TRUSTED_ROOT_MEDIA_TYPE`].
    pub media_type: String,
    /// Transparency logs (none).
    pub tlogs: Vec<serde_json::Value>,
    /// Fulcio-style certificate authorities (none).
    pub certificate_authorities: Vec<CertificateAuthority>,
    /// Certificate-transparency logs (none).
    pub ctlogs: Vec<serde_json::Value>,
    /// Time-stamp authorities.
    pub timestamp_authorities: Vec<CertificateAuthority>,
}

/// A `CertificateAuthority` entry.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CertificateAuthority {
    /// The authority's name (organization and common name of the signer
    /// certificate, when it has them).
    pub subject: DistinguishedName,
    /// Where the authority is reached (the TSA URL), may be empty.
    pub uri: String,
    /// The chain, signer certificate first, root last.
    pub cert_chain: CertChain,
    /// When the authority is trusted.
    pub valid_for: TimeRange,
}

/// `DistinguishedName` (only the two fields protobuf-specs defines).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DistinguishedName {
    /// O.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub organization: String,
    /// CN.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub common_name: String,
}

/// `X509CertificateChain`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CertChain {
    /// The certificates, DER, base64.
    pub certificates: Vec<RawBytes>,
}

/// One DER certificate, base64.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RawBytes {
    /// DER, standard base64.
    pub raw_bytes: String,
}

/// `TimeRange` with RFC 3339 UTC times; `end` absent means open-ended.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TimeRange {
    /// The first instant of validity.
    pub start: String,
    /// The last instant of validity, when bounded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<String>,
}

/// A `TrustedRoot` with one time-stamp authority: `chain_pem` holds the
/// TSA's certificates as PEM, signer first and each followed by its issuer
/// (the last may be the root). `valid_from` defaults to the signer
/// certificate's notBefore; `valid_until`, when given, bounds the range.
/// The chain's order is checked (each certificate's issuer is the next
/// one's subject); signatures are not.
pub fn trusted_root(
    chain_pem: &[u8],
    uri: &str,
    valid_from: Option<crate::time::Timestamp>,
    valid_until: Option<crate::time::Timestamp>,
) -> Result<TrustedRoot, SigstoreError> {
    use crate::tsa::cert::Cert;
    let blocks = crate::tsa::pem_blocks(chain_pem, "CERTIFICATE")
        .ok_or_else(|| SigstoreError::CertificateChain("not PEM".into()))?;
    if blocks.is_empty() {
        return Err(SigstoreError::CertificateChain(
            "no CERTIFICATE block".into(),
        ));
    }
    let mut certs = Vec::with_capacity(blocks.len());
    for (i, der) in blocks.iter().enumerate() {
        let cert = Cert::from_der(der)
            .map_err(|e| SigstoreError::CertificateChain(format!("certificate {i}: {e}")))?;
        certs.push(cert);
    }
    for (i, pair) in certs.windows(2).enumerate() {
        if pair[0].issuer != pair[1].subject {
            return Err(SigstoreError::CertificateChain(format!(
                "certificate {i} ({}) is not issued by certificate {} ({})",
                pair[0].subject_text(),
                i + 1,
                pair[1].subject_text()
            )));
        }
    }
    let leaf = &certs[0];
    let start = valid_from.unwrap_or(leaf.not_before);
    Ok(TrustedRoot {
        media_type: TRUSTED_ROOT_MEDIA_TYPE.to_owned(),
        tlogs: Vec::new(),
        certificate_authorities: Vec::new(),
        ctlogs: Vec::new(),
        timestamp_authorities: vec![CertificateAuthority {
            subject: DistinguishedName {
                organization: name_attr(&leaf.subject, "2.5.4.10").unwrap_or_default(),
                common_name: name_attr(&leaf.subject, "2.5.4.3").unwrap_or_default(),
            },
            uri: uri.to_owned(),
            cert_chain: CertChain {
                certificates: blocks
                    .iter()
                    .map(|der| RawBytes {
                        raw_bytes: STANDARD.encode(der),
                    })
                    .collect(),
            },
            valid_for: TimeRange {
                start: start.to_rfc3339(),
                end: valid_until.map(|t| t.to_rfc3339()),
            },
        }],
    })
}

/// The first value of attribute `oid` in a DER Name, as text.
fn name_attr(name: &[u8], oid: &str) -> Option<String> {
    let want = ObjectIdentifier::new(oid).ok()?;
    let top = AnyRef::from_ber(name).ok()?;
    let mut rdns = SliceReader::new_with_encoding_rules(top.value(), EncodingRules::Ber).ok()?;
    while !rdns.is_finished() {
        let rdn: AnyRef<'_> = rdns.decode().ok()?;
        let mut atvs =
            SliceReader::new_with_encoding_rules(rdn.value(), EncodingRules::Ber).ok()?;
        while !atvs.is_finished() {
            let atv: AnyRef<'_> = atvs.decode().ok()?;
            let mut r =
                SliceReader::new_with_encoding_rules(atv.value(), EncodingRules::Ber).ok()?;
            let id: ObjectIdentifier = r.decode().ok()?;
            let value: AnyRef<'_> = r.decode().ok()?;
            if id == want {
                return std::str::from_utf8(value.value()).ok().map(str::to_owned);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ContentInfo { signedData OID, [0] { SEQUENCE {} } }: shape only.
    #[derive(der::Sequence)]
    struct FakeContentInfo {
        content_type: ObjectIdentifier,
        #[asn1(context_specific = "0", tag_mode = "EXPLICIT")]
        content: Vec<der::asn1::Null>,
    }

    /// A TimeStampResp without a token.
    #[derive(der::Sequence)]
    struct StatusOnly {
        status: PkiStatusInfo,
    }

    fn fake_token() -> Vec<u8> {
        FakeContentInfo {
            content_type: ObjectIdentifier::new_unwrap("1.2.840.113549.1.7.2"),
            content: Vec::new(),
        }
        .to_der()
        .unwrap()
    }

    #[test]
    fn timestamp_forms_are_normalised_to_a_response() {
        let token = fake_token();
        let resp = timestamp_response(&token).unwrap();
        assert_eq!(
            &resp[..7],
            &[0x30, (resp.len() - 2) as u8, 0x30, 0x03, 0x02, 0x01, 0x00]
        );
        assert_eq!(timestamp_response(&resp).unwrap(), resp);
        assert_eq!(timestamp_token(&resp).unwrap(), token);
        assert_eq!(timestamp_token(&token).unwrap(), token);

        assert_eq!(
            token,
            [
                0x30, 0x0f, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x02, 0xa0,
                0x02, 0x30, 0x00
            ]
        );
        let rejected = StatusOnly {
            status: PkiStatusInfo { status: 2 },
        }
        .to_der()
        .unwrap();
        assert_eq!(rejected, [0x30, 0x05, 0x30, 0x03, 0x02, 0x01, 0x02]);
        assert_eq!(
            timestamp_response(&rejected),
            Err(SigstoreError::TimestampNotGranted { status: 2 })
        );
        let empty = StatusOnly { status: GRANTED }.to_der().unwrap();
        assert_eq!(
            timestamp_response(&empty),
            Err(SigstoreError::TimestampTokenMissing)
        );
        for bad in [&b""[..], b"\x04\x00", b"\x30\x03\x02\x01\x00", b"\x30\x00"] {
            assert!(
                matches!(
                    timestamp_response(bad),
                    Err(SigstoreError::TimestampMalformed { .. })
                ),
                "{bad:?}"
            );
        }
        let mut trailing = resp.clone();
        trailing.push(0);
        assert!(timestamp_response(&trailing).is_err());
    }

    #[test]
    fn ber_indefinite_lengths_are_kept_as_given() {
        // ContentInfo with indefinite lengths, as some TSAs send it.
        let mut token = vec![0x30, 0x80, 0x06, 0x09];
        token.extend([0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x02]);
        token.extend([0xa0, 0x80, 0x30, 0x00, 0x00, 0x00, 0x00, 0x00]);
        let mut resp = vec![0x30, 0x80, 0x30, 0x03, 0x02, 0x01, 0x00];
        resp.extend(&token);
        resp.extend([0x00, 0x00]);
        assert_eq!(timestamp_response(&resp).unwrap(), resp);
        assert_eq!(timestamp_token(&resp).unwrap(), token);
        let wrapped = timestamp_response(&token).unwrap();
        assert_eq!(&wrapped[..7], &[0x30, 0x1a, 0x30, 0x03, 0x02, 0x01, 0x00]);
        assert_eq!(&wrapped[7..], &token[..]);
        assert_eq!(timestamp_token(&wrapped).unwrap(), token);
    }

    #[test]
    fn ber_indefinite_elements_past_128_bytes_are_read() {
        // As above, with 200 bytes inside the indefinite [0]: every real
        // token is that long.
        let mut token = vec![0x30, 0x80, 0x06, 0x09];
        token.extend([0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x02]);
        token.extend([0xa0, 0x80, 0x30, 0x81, 0xc8]);
        token.extend([0x05, 0x00].repeat(100));
        token.extend([0x00, 0x00, 0x00, 0x00]);
        let mut resp = vec![0x30, 0x80, 0x30, 0x03, 0x02, 0x01, 0x00];
        resp.extend(&token);
        resp.extend([0x00, 0x00]);
        assert_eq!(timestamp_response(&resp).unwrap(), resp);
        assert_eq!(timestamp_token(&resp).unwrap(), token);
    }

    #[test]
    fn bundle_json_has_the_v03_shape() {
        let b = bundle(
            crate::dsse::IN_TOTO_PAYLOAD_TYPE,
            b"{}",
            &[1, 2],
            "",
            "hint",
            &fake_token(),
        )
        .unwrap();
        let v = serde_json::to_value(&b).unwrap();
        assert_eq!(v["mediaType"], BUNDLE_V03_MEDIA_TYPE);
        assert_eq!(v["verificationMaterial"]["publicKey"]["hint"], "hint");
        assert_eq!(
            v["verificationMaterial"]["tlogEntries"],
            serde_json::json!([])
        );
        assert!(
            v["verificationMaterial"]["timestampVerificationData"]["rfc3161Timestamps"][0]
                ["signedTimestamp"]
                .is_string()
        );
        assert_eq!(v["dsseEnvelope"]["payload"], "e30=");
        assert_eq!(
            v["dsseEnvelope"]["payloadType"],
            "application/vnd.in-toto+json"
        );
        assert_eq!(v["dsseEnvelope"]["signatures"][0]["sig"], "AQI=");
        let back: Bundle = serde_json::from_value(v).unwrap();
        assert_eq!(back, b);
        assert_eq!(
            bundle("t", b"{}", &[], "", "h", &fake_token()),
            Err(SigstoreError::EmptySignature)
        );
        assert_eq!(
            bundle("t", b"", &[1], "", "h", &fake_token()),
            Err(SigstoreError::EmptyPayload)
        );
    }

    #[test]
    fn ed25519_spki_is_rfc8410() {
        let pem = ed25519_public_key_pem(&[0; 32]);
        assert_eq!(
            pem,
            "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n-----END PUBLIC KEY-----\n"
        );
        assert_eq!(key_hint(b"").len(), 44);
    }

    #[test]
    fn trusted_root_refuses_non_certificates() {
        assert!(matches!(
            trusted_root(b"nope", "", None, None),
            Err(SigstoreError::CertificateChain(_))
        ));
        assert!(matches!(
            trusted_root(
                b"-----BEGIN PUBLIC KEY-----\nAA==\n-----END PUBLIC KEY-----\n",
                "",
                None,
                None
            ),
            Err(SigstoreError::CertificateChain(_))
        ));
        assert!(matches!(
            trusted_root(
                b"-----BEGIN CERTIFICATE-----\nMAA=\n-----END CERTIFICATE-----\n",
                "",
                None,
                None
            ),
            Err(SigstoreError::CertificateChain(_))
        ));
    }
}
