//! `show`: everything a token says, decoded but *not* verified.

use super::cert::{Cert, name_text};
use super::crypto::HashAlg;
use super::der_util::{ctx_prim_tag, ctx_tag};
use super::error::TsaError;
use super::time::Timestamp;
use super::token::{self, Accuracy, Sid};
use super::{Limits, oid, token_der};
use der::{Decode, Tagged};
use serde::Serialize;

/// A certificate, summarised for people and JSON.
#[derive(Clone, Debug, Serialize)]
pub struct CertificateInfo {
    /// Subject name.
    pub subject: String,
    /// Issuer name.
    pub issuer: String,
    /// Serial number, hexadecimal.
    pub serial: String,
    /// Start of validity.
    pub not_before: Timestamp,
    /// End of validity.
    pub not_after: Timestamp,
    /// Key type and size.
    pub key: String,
    /// SHA-256 of the DER certificate, hexadecimal.
    pub sha256: String,
}

impl CertificateInfo {
    pub(crate) fn from_cert(c: &Cert) -> Self {
        CertificateInfo {
            subject: c.subject_text(),
            issuer: c.issuer_text(),
            serial: crate::hex::encode(&c.serial),
            not_before: c.not_before,
            not_after: c.not_after,
            key: c.key.describe(),
            sha256: crate::hex::encode(&c.hash(HashAlg::Sha256)),
        }
    }
}

/// PKIStatusInfo of a response.
#[derive(Clone, Debug, Serialize)]
pub struct StatusView {
    /// The PKIStatus number.
    pub status: u64,
    /// Its name (granted, rejection, ...).
    pub name: &'static str,
    /// statusString texts.
    pub text: Vec<String>,
    /// failInfo bits by name.
    pub fail_info: Vec<&'static str>,
}

/// TSTInfo fields.
#[derive(Clone, Debug, Serialize)]
pub struct TstView {
    /// TSTInfo version.
    pub version: u64,
    /// Policy OID.
    pub policy: String,
    /// Serial number (two's complement, hexadecimal).
    pub serial: String,
    /// genTime.
    pub gen_time: Timestamp,
    /// Accuracy, if any.
    pub accuracy: Option<Accuracy>,
    /// ordering flag.
    pub ordering: bool,
    /// Nonce, hexadecimal.
    pub nonce: Option<String>,
    /// tsa name, as text.
    pub tsa_name: Option<String>,
    /// Imprint algorithm (name, or OID when unknown).
    pub imprint_alg: String,
    /// Imprint, hexadecimal.
    pub imprint: String,
    /// Extension OIDs, with `(critical)` marks.
    pub extensions: Vec<String>,
}

/// An ESS certificate id.
#[derive(Clone, Debug, Serialize)]
pub struct EssIdInfo {
    /// 1 for signingCertificate, 2 for signingCertificateV2.
    pub version: u8,
    /// Hash algorithm.
    pub hash_alg: String,
    /// Certificate hash, hexadecimal.
    pub hash: String,
    /// issuerSerial serial, when present.
    pub issuer_serial: Option<String>,
    /// Index of the embedded certificate it matches, if any.
    pub matches_certificate: Option<usize>,
}

/// The SignerInfo.
#[derive(Clone, Debug, Serialize)]
pub struct SignerView {
    /// SignerInfo version.
    pub version: u64,
    /// The sid, as text.
    pub sid: String,
    /// Digest algorithm.
    pub digest_alg: String,
    /// Signature algorithm OID.
    pub signature_alg: String,
    /// Index of the embedded certificate the sid names, if any.
    pub signer_certificate: Option<usize>,
    /// Signed attribute OIDs.
    pub signed_attributes: Vec<String>,
    /// ESS certificate ids.
    pub ess: Vec<EssIdInfo>,
}

/// Everything in a response or token. Not verified.
#[derive(Clone, Debug, Serialize)]
pub struct TokenInfo {
    /// Present for a TimeStampResp.
    pub status: Option<StatusView>,
    /// eContentType OID.
    pub content_type: Option<String>,
    /// TSTInfo, when it decodes.
    pub tst_info: Option<TstView>,
    /// SignerInfos.
    pub signers: Vec<SignerView>,
    /// Embedded certificates, in token order.
    pub certificates: Vec<CertificateInfo>,
}

fn status_name(s: u64) -> &'static str {
    match s {
        0 => "granted",
        1 => "grantedWithMods",
        2 => "rejection",
        3 => "waiting",
        4 => "revocationWarning",
        5 => "revocationNotification",
        _ => "unknown",
    }
}

fn alg_name(oid: &str) -> String {
    HashAlg::from_oid(oid).map_or_else(|| oid.to_string(), |h| h.name().to_string())
}

/// Renders a GeneralName (raw) as text.
pub(crate) fn general_name_text(raw: &[u8]) -> String {
    match der::asn1::AnyRef::from_der(raw) {
        Ok(t) if t.tag() == ctx_tag(4) => name_text(t.value()),
        // rfc822Name, dNSName, uniformResourceIdentifier
        Ok(t) if [1, 2, 6].iter().any(|n| t.tag() == ctx_prim_tag(*n)) => {
            super::cert::printable(&String::from_utf8_lossy(t.value()))
        }
        Ok(t) => format!("[{}] {}", t.tag().number(), crate::hex::encode(t.value())),
        Err(_) => "<undecodable>".to_string(),
    }
}

/// Decodes a response or token (DER or PEM) for display. Fails only when
/// the bytes do not decode; nothing is verified.
pub fn show(token_bytes: &[u8]) -> Result<TokenInfo, TsaError> {
    let limits = Limits::default();
    let der = token_der(token_bytes, &limits)?;
    let parsed = token::parse(&der, &limits)?;
    let status = parsed.status.map(|s| StatusView {
        status: s.status,
        name: status_name(s.status),
        text: s.text,
        fail_info: s.fail_info,
    });
    let Some(tok) = parsed.token else {
        return Ok(TokenInfo {
            status,
            content_type: None,
            tst_info: None,
            signers: Vec::new(),
            certificates: Vec::new(),
        });
    };
    let certs: Vec<Cert> = tok
        .certs
        .iter()
        .map(|d| Cert::from_der(d))
        .collect::<Result<_, _>>()?;
    let tst_info = match &tok.econtent {
        Some(c) => {
            let t = token::parse_tst_info(c)?;
            Some(TstView {
                version: t.version,
                policy: t.policy,
                serial: crate::hex::encode(&t.serial),
                gen_time: t.gen_time,
                accuracy: t.accuracy,
                ordering: t.ordering,
                nonce: t.nonce.as_deref().map(crate::hex::encode),
                tsa_name: t.tsa.as_deref().map(general_name_text),
                imprint_alg: alg_name(&t.imprint_alg.oid),
                imprint: crate::hex::encode(&t.imprint),
                extensions: t
                    .extensions
                    .iter()
                    .map(|(o, c)| {
                        if *c {
                            format!("{o} (critical)")
                        } else {
                            o.clone()
                        }
                    })
                    .collect(),
            })
        }
        None => None,
    };
    let mut signers = Vec::new();
    for si in &tok.signer_infos {
        let (sid, signer_certificate) = match &si.sid {
            Sid::IssuerSerial { issuer, serial } => (
                format!(
                    "issuer {} serial {}",
                    name_text(issuer),
                    crate::hex::encode(serial)
                ),
                certs
                    .iter()
                    .position(|c| c.issuer == *issuer && c.serial == *serial),
            ),
            Sid::SubjectKeyId(k) => (
                format!("subjectKeyIdentifier {}", crate::hex::encode(k)),
                certs
                    .iter()
                    .position(|c| c.ext.subject_key_id.as_ref() == Some(k)),
            ),
        };
        let mut ess = Vec::new();
        let mut signed_attributes = Vec::new();
        if let Some(attrs) = &si.signed_attrs {
            for (id, values) in &attrs.attrs {
                signed_attributes.push(id.clone());
                let v2 = match id.as_str() {
                    oid::ATTR_SIGNING_CERT_V2 => true,
                    oid::ATTR_SIGNING_CERT => false,
                    _ => continue,
                };
                let Some(value) = values.first() else {
                    continue;
                };
                for e in token::parse_ess(value, v2)? {
                    let alg = HashAlg::from_oid(&e.hash_alg.oid);
                    ess.push(EssIdInfo {
                        version: if v2 { 2 } else { 1 },
                        hash_alg: alg_name(&e.hash_alg.oid),
                        hash: crate::hex::encode(&e.hash),
                        issuer_serial: e.issuer_serial.as_ref().map(|(_, s)| crate::hex::encode(s)),
                        matches_certificate: alg
                            .and_then(|a| certs.iter().position(|c| c.hash(a) == e.hash)),
                    });
                }
            }
        }
        signers.push(SignerView {
            version: si.version,
            sid,
            digest_alg: alg_name(&si.digest_alg.oid),
            signature_alg: si.sig_alg.oid.clone(),
            signer_certificate,
            signed_attributes,
            ess,
        });
    }
    Ok(TokenInfo {
        status,
        content_type: Some(tok.econtent_type.clone()),
        tst_info,
        signers,
        certificates: certs.iter().map(CertificateInfo::from_cert).collect(),
    })
}
