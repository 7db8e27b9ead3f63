//! X.509 certificates (RFC 5280 §4.1), decoded just far enough to identify
//! the TSA signer, check its profile and build a path: names and serial as
//! received, validity, key, and the extensions vouch processes.

use super::crypto::{AlgId, HashAlg, PublicKey};
use super::der_util::{ctx_tag, raw_der};
use super::error::TsaError;
use super::oid;
use super::time::Timestamp;
use der::asn1::{AnyRef, BitStringRef, ObjectIdentifier, OctetStringRef};
use der::{Decode, Reader, Tagged};
use x509_cert::ext::pkix::{BasicConstraints, ExtendedKeyUsage};

/// Largest certificate accepted, in bytes.
pub(crate) const MAX_CERT_SIZE: usize = 64 * 1024;

/// A decoded certificate. Owns its DER so it can outlive the token.
#[derive(Clone, Debug)]
pub(crate) struct Cert {
    pub der: Vec<u8>,
    /// Byte range of tbsCertificate within `der`.
    tbs: std::ops::Range<usize>,
    pub sig_alg: AlgId,
    pub signature: Vec<u8>,
    /// Serial INTEGER content (DER: minimal two's complement).
    pub serial: Vec<u8>,
    /// Issuer and subject Name, DER as received (SEQUENCE included).
    pub issuer: Vec<u8>,
    pub subject: Vec<u8>,
    pub not_before: Timestamp,
    pub not_after: Timestamp,
    pub key: PublicKey,
    pub ext: Extensions,
}

/// The extensions vouch understands, plus the OIDs of critical ones it does not.
#[derive(Clone, Debug, Default)]
pub(crate) struct Extensions {
    /// basicConstraints: (cA, pathLenConstraint).
    pub basic_constraints: Option<(bool, Option<u64>)>,
    /// keyUsage bits (bit 0 = digitalSignature at the MSB of the first byte).
    pub key_usage: Option<u16>,
    /// extendedKeyUsage purposes and criticality.
    pub eku: Option<(Vec<String>, bool)>,
    pub subject_key_id: Option<Vec<u8>>,
    /// subjectAltName GeneralNames, each DER.
    pub subject_alt_names: Vec<Vec<u8>>,
    pub unknown_critical: Vec<String>,
}

pub(crate) const KU_DIGITAL_SIGNATURE: u16 = 1 << 15;
pub(crate) const KU_NON_REPUDIATION: u16 = 1 << 14;
pub(crate) const KU_KEY_CERT_SIGN: u16 = 1 << 10;

/// The byte ranges of a certificate that are used exactly as received:
/// the to-be-signed part, and in it the issuer and subject names (read
/// with `der`'s reader; the typed reading is `x509_cert`'s).
struct CertBytes<'a> {
    tbs: &'a [u8],
    issuer: &'a [u8],
    subject: &'a [u8],
}

impl<'a> CertBytes<'a> {
    fn locate(der: &'a [u8]) -> der::Result<Self> {
        let mut r = der::SliceReader::new(der)?;
        let tbs = r.sequence(|r| {
            let tbs = r.tlv_bytes()?;
            r.tlv_bytes()?; // signatureAlgorithm
            r.tlv_bytes()?; // signature
            Ok::<_, der::Error>(tbs)
        })?;
        r.finish()?;
        let mut t = der::SliceReader::new(tbs)?;
        let (issuer, subject) = t.sequence(|r| {
            if der::Tag::peek(r)? == ctx_tag(0) {
                r.tlv_bytes()?; // version
            }
            r.tlv_bytes()?; // serialNumber
            r.tlv_bytes()?; // signature
            let issuer = r.tlv_bytes()?;
            r.tlv_bytes()?; // validity
            let subject = r.tlv_bytes()?;
            while !r.is_finished() {
                r.tlv_bytes()?;
            }
            Ok::<_, der::Error>((issuer, subject))
        })?;
        t.finish()?;
        Ok(CertBytes {
            tbs,
            issuer,
            subject,
        })
    }
}

impl Cert {
    /// Decodes one certificate from its DER (`x509_cert`, DER rules: a
    /// certificate is signed over its DER, so no other encoding is read).
    pub fn from_der(der: &[u8]) -> Result<Self, TsaError> {
        if der.len() > MAX_CERT_SIZE {
            return Err(TsaError::TooLarge {
                what: "certificate",
                size: der.len(),
                limit: MAX_CERT_SIZE,
            });
        }
        let bad = |part| TsaError::BadCertificate { part };
        let cert = x509_cert::Certificate::from_der(der).map_err(|e| bad(cert_part(&e)))?;
        let bytes = CertBytes::locate(der).map_err(|_| bad("encoding"))?;
        let tbs_start = bytes.tbs.as_ptr() as usize - der.as_ptr() as usize;
        let tbs_range = tbs_start..tbs_start + bytes.tbs.len();

        let tbs = cert.tbs_certificate();
        let sig_alg =
            AlgId::from_spki(cert.signature_algorithm()).map_err(|_| bad("signatureAlgorithm"))?;
        // The signature algorithm inside and outside the TBS must agree (§4.1.1.2).
        let inner = AlgId::from_spki(tbs.signature()).map_err(|_| bad("signature"))?;
        if inner.oid != sig_alg.oid || inner.params != sig_alg.params {
            return Err(bad("signatureAlgorithm mismatch"));
        }
        let signature = whole_bytes(cert.signature().raw_bytes(), cert.signature().unused_bits())
            .ok_or(bad("signature"))?;
        let serial = tbs.serial_number().as_bytes();
        if serial.is_empty() || serial.len() > 64 {
            return Err(bad("serialNumber"));
        }
        if tbs.extensions().is_some() && tbs.version() != x509_cert::certificate::Version::V3 {
            return Err(bad("version"));
        }
        let validity = tbs.validity();
        let not_before = x509_time(&validity.not_before).ok_or(bad("notBefore"))?;
        let not_after = x509_time(&validity.not_after).ok_or(bad("notAfter"))?;

        let spki = tbs.subject_public_key_info();
        let key_alg = AlgId::from_spki(&spki.algorithm).map_err(|_| bad("subjectPublicKeyInfo"))?;
        let key_bits = whole_bytes(
            spki.subject_public_key.raw_bytes(),
            spki.subject_public_key.unused_bits(),
        )
        .ok_or(bad("subjectPublicKey"))?;
        let key = PublicKey::from_spki(&key_alg, key_bits).ok_or(bad("subjectPublicKey"))?;
        let ext = match tbs.extensions() {
            Some(list) => parse_extensions(list).map_err(|_| bad("extensions"))?,
            None => Extensions::default(),
        };

        Ok(Cert {
            der: der.to_vec(),
            tbs: tbs_range,
            sig_alg,
            signature: signature.to_vec(),
            serial: serial.to_vec(),
            issuer: bytes.issuer.to_vec(),
            subject: bytes.subject.to_vec(),
            not_before,
            not_after,
            key,
            ext,
        })
    }

    /// The to-be-signed bytes exactly as received.
    pub fn tbs_bytes(&self) -> &[u8] {
        &self.der[self.tbs.clone()]
    }

    /// basicConstraints cA.
    pub fn is_ca(&self) -> bool {
        matches!(self.ext.basic_constraints, Some((true, _)))
    }

    /// A hash of the whole certificate (ESS ids, fingerprints).
    pub fn hash(&self, alg: HashAlg) -> Vec<u8> {
        alg.digest(&self.der)
    }

    /// Subject as text (`CN=..., O=...`).
    pub fn subject_text(&self) -> String {
        name_text(&self.subject)
    }

    pub fn issuer_text(&self) -> String {
        name_text(&self.issuer)
    }

    /// The certificate's validity at `at`.
    pub fn check_validity(&self, at: Timestamp) -> Result<(), TsaError> {
        if at < self.not_before {
            return Err(TsaError::CertNotYetValid {
                subject: self.subject_text(),
                not_before: self.not_before.to_rfc3339(),
                at: at.to_rfc3339(),
            });
        }
        if at > self.not_after {
            return Err(TsaError::CertExpired {
                subject: self.subject_text(),
                not_after: self.not_after.to_rfc3339(),
                at: at.to_rfc3339(),
            });
        }
        Ok(())
    }
}

/// Which part of a certificate a decoding error was in, for the message
/// (`x509_cert` reports the position; the part is named by the field the
/// position falls in only roughly, so this stays coarse).
fn cert_part(e: &der::Error) -> &'static str {
    match e.kind() {
        der::ErrorKind::TrailingData { .. } => "trailing data",
        der::ErrorKind::DateTime
        | der::ErrorKind::Value {
            tag: der::Tag::UtcTime | der::Tag::GeneralizedTime,
        } => "validity",
        _ => "encoding",
    }
}

/// The bytes of a BIT STRING that must hold whole octets (keys, signatures).
fn whole_bytes(bytes: &[u8], unused_bits: u8) -> Option<&[u8]> {
    (unused_bits == 0).then_some(bytes)
}

/// An X.509 `Time` as a [`Timestamp`].
fn x509_time(t: &x509_cert::time::Time) -> Option<Timestamp> {
    let d = t.to_date_time();
    Timestamp::from_civil(
        i32::from(d.year()),
        d.month(),
        d.day(),
        d.hour(),
        d.minutes(),
        d.seconds(),
        0,
    )
    .ok()
}

/// Reads an extension value as one `T`, all of it.
fn ext_value<'a, T: Decode<'a>>(value: &'a [u8]) -> Result<T, TsaError> {
    T::from_der(value).map_err(|_| TsaError::Malformed { part: "extensions" })
}

fn parse_extensions(list: &[x509_cert::ext::Extension]) -> Result<Extensions, TsaError> {
    const PART: &str = "extensions";
    let mut ext = Extensions::default();
    let mut seen: Vec<ObjectIdentifier> = Vec::new();
    for e in list {
        let id = e.extn_id;
        if seen.contains(&id) || seen.len() > 64 {
            return Err(TsaError::Malformed { part: PART });
        }
        seen.push(id);
        let critical = e.critical;
        let val = e.extn_value.as_bytes();
        match oid::text(&id).as_str() {
            oid::EXT_BASIC_CONSTRAINTS => {
                let bc: BasicConstraints = ext_value(val)?;
                ext.basic_constraints = Some((bc.ca, bc.path_len_constraint.map(u64::from)));
            }
            oid::EXT_KEY_USAGE => {
                let bits: BitStringRef<'_> = ext_value(val)?;
                let raw = bits.raw_bytes();
                let hi = u16::from(raw.first().copied().unwrap_or(0));
                let lo = u16::from(raw.get(1).copied().unwrap_or(0));
                ext.key_usage = Some(hi << 8 | lo);
            }
            oid::EXT_EXTENDED_KEY_USAGE => {
                let eku: ExtendedKeyUsage = ext_value(val)?;
                ext.eku = Some((eku.0.iter().map(ToString::to_string).collect(), critical));
            }
            oid::EXT_SUBJECT_KEY_ID => {
                let ski: &OctetStringRef = ext_value(val)?;
                ext.subject_key_id = Some(ski.as_bytes().to_vec());
            }
            oid::EXT_SUBJECT_ALT_NAME => {
                let names: Vec<AnyRef<'_>> = ext_value(val)?;
                for n in names {
                    ext.subject_alt_names.push(raw_der(&n)?);
                }
            }
            // Recognised and not needed for time-stamp path validation:
            // vouch does no policy processing and no revocation checking
            // (documented in docs/TSA.md).
            oid::EXT_AUTHORITY_KEY_ID
            | oid::EXT_ISSUER_ALT_NAME
            | oid::EXT_CRL_DP
            | oid::EXT_CERT_POLICIES
            | oid::EXT_AUTHORITY_INFO_ACCESS => {}
            _ => {
                if critical {
                    ext.unknown_critical.push(oid::text(&id));
                }
            }
        }
    }
    Ok(ext)
}

/// Short labels for common attribute types in names.
fn attr_label(oid: &str) -> Option<&'static str> {
    Some(match oid {
        "2.5.4.3" => "CN",
        "2.5.4.6" => "C",
        "2.5.4.7" => "L",
        "2.5.4.8" => "ST",
        "2.5.4.10" => "O",
        "2.5.4.11" => "OU",
        "2.5.4.5" => "serialNumber",
        "2.5.4.97" => "organizationIdentifier",
        "1.2.840.113549.1.9.1" => "emailAddress",
        _ => return None,
    })
}

/// Renders a DER Name as `CN=..., O=..., C=..` (most specific first is not
/// attempted: the order is the encoded order).
pub(crate) fn name_text(raw: &[u8]) -> String {
    let Ok(name) = x509_cert::name::Name::from_der(raw) else {
        return "<undecodable name>".to_string();
    };
    let mut parts = Vec::new();
    for atv in name.iter() {
        let id = oid::text(&atv.oid);
        let text = directory_string(&atv.value);
        let label = attr_label(&id).map(str::to_string).unwrap_or(id);
        parts.push(format!("{label}={}", printable(&text)));
    }
    parts.join(", ")
}

/// An attribute value as text: BMPString decoded, other strings as their
/// bytes (lossy UTF-8).
fn directory_string(value: &der::Any) -> String {
    if value.tag() == der::Tag::BmpString {
        let units: Vec<u16> = value
            .value()
            .chunks(2)
            .map(|c| u16::from(c[0]) << 8 | u16::from(*c.get(1).unwrap_or(&0)))
            .collect();
        return String::from_utf16_lossy(&units);
    }
    String::from_utf8_lossy(value.value()).into_owned()
}

/// Replaces control characters in token-supplied text, so that names and
/// status strings cannot break one-line error messages or tables.
pub(crate) fn printable(text: &str) -> String {
    text.chars()
        .take(256)
        .map(|c| if c.is_control() { '\u{fffd}' } else { c })
        .collect()
}

/// Splits a PEM or DER buffer into certificate DERs. PEM may hold several
/// `CERTIFICATE` blocks; anything else is taken as one DER certificate.
pub(crate) fn split_certificates(data: &[u8]) -> Result<Vec<Vec<u8>>, TsaError> {
    if let Some(blocks) = super::pem_blocks(data, "CERTIFICATE") {
        if blocks.is_empty() {
            return Err(TsaError::BadCertificate { part: "PEM" });
        }
        return Ok(blocks);
    }
    Ok(vec![data.to_vec()])
}
