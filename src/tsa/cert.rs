//! X.509 certificates (RFC 5280 §4.1), decoded just far enough to identify
//! the TSA signer, check its profile and build a path: names and serial as
//! received, validity, key, and the extensions vouch processes.

use super::asn1::{
    self, TAG_BIT_STRING, TAG_BOOLEAN, TAG_INTEGER, TAG_OCTET_STRING, TAG_SEQUENCE, ctx_cons,
    ctx_prim,
};
use super::crypto::{AlgId, HashAlg, PublicKey};
use super::error::TsaError;
use super::oid;
use super::time::{Timestamp, parse_time};

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
    /// Normalised serial INTEGER content.
    pub serial: Vec<u8>,
    /// Issuer and subject Name, raw DER (SEQUENCE included).
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
    /// subjectAltName GeneralNames, each raw.
    pub subject_alt_names: Vec<Vec<u8>>,
    pub unknown_critical: Vec<String>,
}

pub(crate) const KU_DIGITAL_SIGNATURE: u16 = 1 << 15;
pub(crate) const KU_NON_REPUDIATION: u16 = 1 << 14;
pub(crate) const KU_KEY_CERT_SIGN: u16 = 1 << 10;

impl Cert {
    /// Decodes one certificate from its DER.
    pub fn from_der(der: &[u8]) -> Result<Self, TsaError> {
        if der.len() > MAX_CERT_SIZE {
            return Err(TsaError::TooLarge {
                what: "certificate",
                size: der.len(),
                limit: MAX_CERT_SIZE,
            });
        }
        let bad = |part| TsaError::BadCertificate { part };
        let outer = asn1::single(der, "certificate").map_err(|_| bad("encoding"))?;
        if outer.tag != TAG_SEQUENCE {
            return Err(bad("encoding"));
        }
        let mut r = outer.reader();
        let tbs = r
            .read_tag(TAG_SEQUENCE, "tbs")
            .map_err(|_| bad("tbsCertificate"))?;
        let sig_alg = AlgId::read(&mut r, "alg").map_err(|_| bad("signatureAlgorithm"))?;
        let sig = r
            .read_tag(TAG_BIT_STRING, "sig")
            .map_err(|_| bad("signature"))?;
        r.finish("cert").map_err(|_| bad("trailing data"))?;
        let signature = bit_string(sig.value).ok_or(bad("signature"))?.to_vec();
        let tbs_start = tbs.raw.as_ptr() as usize - der.as_ptr() as usize;
        let tbs_range = tbs_start..tbs_start + tbs.raw.len();

        let mut t = tbs.reader();
        let mut version = 0;
        if let Some(v) = t
            .optional(ctx_cons(0), "version")
            .map_err(|_| bad("version"))?
        {
            let int = asn1::single(v.value, "version").map_err(|_| bad("version"))?;
            version = asn1::small_uint(&int, "version").map_err(|_| bad("version"))?;
            if version > 2 {
                return Err(bad("version"));
            }
        }
        let serial = t
            .read_tag(TAG_INTEGER, "serial")
            .map_err(|_| bad("serialNumber"))?;
        if serial.value.is_empty() || serial.value.len() > 64 {
            return Err(bad("serialNumber"));
        }
        let inner_alg = t
            .read_tag(TAG_SEQUENCE, "alg")
            .map_err(|_| bad("signature"))?;
        let issuer = t
            .read_tag(TAG_SEQUENCE, "issuer")
            .map_err(|_| bad("issuer"))?;
        let validity = t
            .read_tag(TAG_SEQUENCE, "validity")
            .map_err(|_| bad("validity"))?;
        let subject = t
            .read_tag(TAG_SEQUENCE, "subject")
            .map_err(|_| bad("subject"))?;
        let spki = t
            .read_tag(TAG_SEQUENCE, "spki")
            .map_err(|_| bad("subjectPublicKeyInfo"))?;
        t.optional(ctx_prim(1), "uid")
            .map_err(|_| bad("issuerUniqueID"))?;
        t.optional(ctx_prim(2), "uid")
            .map_err(|_| bad("subjectUniqueID"))?;
        let mut ext = Extensions::default();
        if let Some(e) = t
            .optional(ctx_cons(3), "extensions")
            .map_err(|_| bad("extensions"))?
        {
            if version != 2 {
                return Err(bad("version"));
            }
            ext = parse_extensions(e.value).map_err(|_| bad("extensions"))?;
        }
        t.finish("tbs").map_err(|_| bad("tbsCertificate"))?;

        // The signature algorithm inside and outside the TBS must agree (§4.1.1.2).
        let inner = AlgId::from_tlv(&inner_alg, "alg").map_err(|_| bad("signature"))?;
        if inner.oid != sig_alg.oid || inner.params != sig_alg.params {
            return Err(bad("signatureAlgorithm mismatch"));
        }

        let mut v = validity.reader();
        let nb = v.read("time").map_err(|_| bad("validity"))?;
        let na = v.read("time").map_err(|_| bad("validity"))?;
        v.finish("validity").map_err(|_| bad("validity"))?;
        let not_before = parse_time(nb.tag, nb.value, "time").map_err(|_| bad("notBefore"))?;
        let not_after = parse_time(na.tag, na.value, "time").map_err(|_| bad("notAfter"))?;

        let mut s = spki.reader();
        let key_alg = AlgId::read(&mut s, "spki").map_err(|_| bad("subjectPublicKeyInfo"))?;
        let bits = s
            .read_tag(TAG_BIT_STRING, "spki")
            .map_err(|_| bad("subjectPublicKey"))?;
        let key_bits = bit_string(bits.value)
            .ok_or(bad("subjectPublicKey"))?
            .to_vec();
        let key = PublicKey::from_spki(&key_alg, &key_bits).ok_or(bad("subjectPublicKey"))?;

        Ok(Cert {
            der: der.to_vec(),
            tbs: tbs_range,
            sig_alg,
            signature,
            serial: asn1::normalize_int(serial.value).to_vec(),
            issuer: issuer.raw.to_vec(),
            subject: subject.raw.to_vec(),
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
        if at.unix < self.not_before.unix {
            return Err(TsaError::CertNotYetValid {
                subject: self.subject_text(),
                not_before: self.not_before.to_rfc3339(),
                at: at.to_rfc3339(),
            });
        }
        if at.unix > self.not_after.unix {
            return Err(TsaError::CertExpired {
                subject: self.subject_text(),
                not_after: self.not_after.to_rfc3339(),
                at: at.to_rfc3339(),
            });
        }
        Ok(())
    }
}

/// The unused-bits octet must be 0 for keys and signatures.
fn bit_string(v: &[u8]) -> Option<&[u8]> {
    match v.split_first() {
        Some((0, rest)) => Some(rest),
        _ => None,
    }
}

fn parse_extensions(value: &[u8]) -> Result<Extensions, TsaError> {
    const PART: &str = "extensions";
    let mut ext = Extensions::default();
    let list = asn1::single(value, PART)?;
    if list.tag != TAG_SEQUENCE {
        return Err(TsaError::Malformed { part: PART });
    }
    let mut r = list.reader();
    let mut seen: Vec<String> = Vec::new();
    while !r.is_empty() {
        let e = r.read_tag(TAG_SEQUENCE, PART)?;
        let mut er = e.reader();
        let id = asn1::read_oid(&mut er, PART)?;
        let critical = match er.optional(TAG_BOOLEAN, PART)? {
            Some(b) => b.value.first().is_some_and(|v| *v != 0),
            None => false,
        };
        let val = er.read_tag(TAG_OCTET_STRING, PART)?.value;
        er.finish(PART)?;
        if seen.contains(&id) || seen.len() > 64 {
            return Err(TsaError::Malformed { part: PART });
        }
        seen.push(id.clone());
        let inner = || asn1::single(val, PART);
        match id.as_str() {
            oid::EXT_BASIC_CONSTRAINTS => {
                let s = inner()?;
                let mut sr = s.reader();
                let ca = match sr.optional(TAG_BOOLEAN, PART)? {
                    Some(b) => b.value.first().is_some_and(|v| *v != 0),
                    None => false,
                };
                let path_len = match sr.optional(TAG_INTEGER, PART)? {
                    Some(i) => Some(asn1::small_uint(&i, PART)?),
                    None => None,
                };
                sr.finish(PART)?;
                ext.basic_constraints = Some((ca, path_len));
            }
            oid::EXT_KEY_USAGE => {
                let b = inner()?;
                let bits = b.expect(TAG_BIT_STRING, PART)?;
                let (unused, rest) = bits
                    .split_first()
                    .ok_or(TsaError::Malformed { part: PART })?;
                if *unused > 7 {
                    return Err(TsaError::Malformed { part: PART });
                }
                let hi = u16::from(rest.first().copied().unwrap_or(0));
                let lo = u16::from(rest.get(1).copied().unwrap_or(0));
                ext.key_usage = Some(hi << 8 | lo);
            }
            oid::EXT_EXTENDED_KEY_USAGE => {
                let s = inner()?;
                if s.tag != TAG_SEQUENCE {
                    return Err(TsaError::Malformed { part: PART });
                }
                let mut sr = s.reader();
                let mut purposes = Vec::new();
                while !sr.is_empty() {
                    purposes.push(asn1::read_oid(&mut sr, PART)?);
                }
                ext.eku = Some((purposes, critical));
            }
            oid::EXT_SUBJECT_KEY_ID => {
                ext.subject_key_id = Some(inner()?.expect(TAG_OCTET_STRING, PART)?.to_vec());
            }
            oid::EXT_SUBJECT_ALT_NAME => {
                let s = inner()?;
                let mut sr = s.reader();
                while !sr.is_empty() {
                    ext.subject_alt_names.push(sr.read(PART)?.raw.to_vec());
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
                    ext.unknown_critical.push(id);
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

/// Renders a raw Name as `CN=..., O=..., C=..` (most specific first is not
/// attempted: the order is the encoded order).
pub(crate) fn name_text(raw: &[u8]) -> String {
    let Ok(seq) = asn1::single(raw, "name") else {
        return "<undecodable name>".to_string();
    };
    let mut parts = Vec::new();
    let mut r = seq.reader();
    while let Ok(rdn) = r.read("rdn") {
        let mut rr = rdn.reader();
        while let Ok(atv) = rr.read("atv") {
            let mut ar = atv.reader();
            let Ok(id) = asn1::read_oid(&mut ar, "atv") else {
                continue;
            };
            let Ok(value) = ar.read("atv") else { continue };
            let text = match value.tag {
                0x1e => {
                    // BMPString
                    let units: Vec<u16> = value
                        .value
                        .chunks(2)
                        .map(|c| u16::from(c[0]) << 8 | u16::from(*c.get(1).unwrap_or(&0)))
                        .collect();
                    String::from_utf16_lossy(&units)
                }
                _ => String::from_utf8_lossy(value.value).into_owned(),
            };
            let label = attr_label(&id).map(str::to_string).unwrap_or(id);
            parts.push(format!("{label}={}", printable(&text)));
        }
    }
    parts.join(", ")
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
