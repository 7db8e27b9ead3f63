//! The checks. Each step names the RFC section it comes from; docs/TSA.md
//! lists them with their reason codes.

use super::cert::{Cert, KU_DIGITAL_SIGNATURE, KU_NON_REPUDIATION};
use super::crypto::{HashAlg, verify_signature};
use super::der_util::{ctx_tag, strip_leading_zeros};
use super::error::TsaError;
use super::info::{CertificateInfo, general_name_text};
use super::time::Timestamp;
use super::token::{self, Accuracy, EssCertId, Sid, SignedToken, TstInfo};
use super::{
    Expected, ExpectedImprint, TrustStore, ValidationTime, VerifyOptions, oid, path, token_der,
};
use der::asn1::{ObjectIdentifier, OctetStringRef};
use der::{Decode, Tagged};
use serde::Serialize;

/// A time stamp that passed every check. Only [`verify_token`] makes one,
/// so code that takes a `VerifiedTimestamp` cannot be handed an unverified
/// token.
#[derive(Clone, Debug, Serialize)]
pub struct VerifiedTimestamp {
    gen_time: Timestamp,
    accuracy: Option<Accuracy>,
    policy: String,
    serial: String,
    nonce: Option<String>,
    imprint_alg: HashAlg,
    imprint: String,
    tsa_name: Option<String>,
    validated_at: Timestamp,
    signer: CertificateInfo,
    chain: Vec<CertificateInfo>,
    #[serde(skip)]
    tsa_cert_der: Vec<u8>,
}

impl VerifiedTimestamp {
    /// When the TSA says the imprint existed (TSTInfo.genTime).
    pub fn gen_time(&self) -> Timestamp {
        self.gen_time
    }
    /// TSTInfo.accuracy, if given.
    pub fn accuracy(&self) -> Option<Accuracy> {
        self.accuracy
    }
    /// The TSA policy OID, dotted.
    pub fn policy(&self) -> &str {
        &self.policy
    }
    /// TSTInfo.serialNumber as hexadecimal two's complement.
    pub fn serial(&self) -> &str {
        &self.serial
    }
    /// TSTInfo.nonce as hexadecimal, if present.
    pub fn nonce(&self) -> Option<&str> {
        self.nonce.as_deref()
    }
    /// The imprint algorithm.
    pub fn imprint_alg(&self) -> HashAlg {
        self.imprint_alg
    }
    /// The imprint, hexadecimal.
    pub fn imprint(&self) -> &str {
        &self.imprint
    }
    /// TSTInfo.tsa rendered as text, if present.
    pub fn tsa_name(&self) -> Option<&str> {
        self.tsa_name.as_deref()
    }
    /// The time the certificate path was validated at.
    pub fn validated_at(&self) -> Timestamp {
        self.validated_at
    }
    /// The TSA (signer) certificate.
    pub fn signer(&self) -> &CertificateInfo {
        &self.signer
    }
    /// The TSA certificate, DER.
    pub fn tsa_cert_der(&self) -> &[u8] {
        &self.tsa_cert_der
    }
    /// The validated path, signer first, anchor last.
    pub fn chain(&self) -> &[CertificateInfo] {
        &self.chain
    }
}

/// Verifies a TimeStampResp or bare TimeStampToken (DER or PEM).
///
/// Offline and deterministic: no network, no clock except when the caller
/// chose [`ValidationTime::At`] with the current time.
pub fn verify_token(
    token_bytes: &[u8],
    expected: &Expected,
    trust: &TrustStore,
    opts: &VerifyOptions,
) -> Result<VerifiedTimestamp, TsaError> {
    let der = token_der(token_bytes, &opts.limits)?;
    let parsed = token::parse(&der, &opts.limits)?;
    // RFC 3161 §2.4.2: granted (0) or grantedWithMods (1) only.
    if let Some(status) = &parsed.status
        && status.status > 1
    {
        return Err(TsaError::StatusRejected {
            status: status.status,
            status_text: status.text.clone(),
            fail_info: status.fail_info.clone(),
        });
    }
    let token = parsed.token.ok_or(TsaError::TokenMissing)?;
    verify_signed(&token, expected, trust, opts)
}

fn verify_signed(
    token: &SignedToken,
    expected: &Expected,
    trust: &TrustStore,
    opts: &VerifyOptions,
) -> Result<VerifiedTimestamp, TsaError> {
    // RFC 3161 §2.4.2: eContentType id-ct-TSTInfo, content present.
    if token.econtent_type != oid::CT_TSTINFO {
        return Err(TsaError::NotTstInfo {
            content_type: token.econtent_type.clone(),
        });
    }
    let econtent = token.econtent.as_deref().ok_or(TsaError::ContentMissing)?;
    // RFC 3161 §2.4.2: exactly one SignerInfo.
    if token.signer_infos.len() != 1 {
        return Err(TsaError::SignerCount {
            count: token.signer_infos.len(),
        });
    }
    let si = &token.signer_infos[0];
    // RFC 5652 §5.3: version 1 with issuerAndSerialNumber, 3 with SKI.
    let (want, sid_kind) = match si.sid {
        Sid::IssuerSerial { .. } => (1, "issuerAndSerialNumber"),
        Sid::SubjectKeyId(_) => (3, "subjectKeyIdentifier"),
    };
    if si.version != want {
        return Err(TsaError::SignerInfoVersion {
            version: si.version,
            sid: sid_kind,
        });
    }
    let embedded: Vec<std::sync::Arc<Cert>> = token
        .certs
        .iter()
        .map(|d| trust.decode_cert(d))
        .collect::<Result<_, _>>()?;
    // Everything that may name the signer: embedded, untrusted, anchors.
    let pool: Vec<&Cert> = embedded
        .iter()
        .map(|c| c.as_ref())
        .chain(trust.untrusted.iter())
        .collect();
    let candidates: Vec<&Cert> = pool
        .iter()
        .copied()
        .chain(trust.anchors.iter())
        .filter(|c| sid_matches(&si.sid, c))
        .collect();
    if candidates.is_empty() {
        return Err(TsaError::SignerNotFound);
    }

    // RFC 5652 §5.3/§11: signed attributes with content-type and message-digest.
    let attrs = si
        .signed_attrs
        .as_ref()
        .ok_or(TsaError::SignedAttrsMissing)?;
    let digest_alg = si.digest_alg.hash("SignerInfo digest")?;
    // RFC 5652 §5.1: digestAlgorithms lists the signers' digest algorithms.
    if !token
        .digest_algorithms
        .iter()
        .any(|a| a.oid == si.digest_alg.oid)
    {
        return Err(TsaError::DigestAlgorithmNotListed {
            oid: si.digest_alg.oid.clone(),
        });
    }
    if digest_alg == HashAlg::Sha1 && !opts.allow_sha1 {
        return Err(TsaError::Sha1NotAllowed {
            usage: "SignerInfo digest",
        });
    }
    let ct = attrs
        .single(oid::ATTR_CONTENT_TYPE)?
        .ok_or(TsaError::ContentTypeAttrMissing)?;
    let ct = ct
        .decode_as::<ObjectIdentifier>()
        .map_err(|_| TsaError::Malformed {
            part: "content-type attribute",
        })?
        .to_string();
    if ct != token.econtent_type {
        return Err(TsaError::ContentTypeMismatch {
            attribute: ct,
            content_type: token.econtent_type.clone(),
        });
    }
    let md = attrs
        .single(oid::ATTR_MESSAGE_DIGEST)?
        .ok_or(TsaError::MessageDigestMissing)?;
    let md = md
        .decode_as::<&OctetStringRef>()
        .map_err(|_| TsaError::Malformed {
            part: "message-digest attribute",
        })?;
    if md.as_bytes() != digest_alg.digest(econtent).as_slice() {
        return Err(TsaError::MessageDigestMismatch);
    }

    // RFC 5652 §5.4: the signature covers the DER signedAttrs as received.
    let signed = attrs.signed_bytes();
    let mut signer = None;
    let mut sig_err = TsaError::BadSignature;
    for cand in &candidates {
        match verify_signature(
            &cand.key,
            &si.sig_alg,
            Some(digest_alg),
            &signed,
            &si.signature,
            opts.allow_sha1,
            "SignerInfo",
        ) {
            Ok(()) => {
                signer = Some(*cand);
                break;
            }
            Err(e) => sig_err = e,
        }
    }
    let signer = signer.ok_or(sig_err)?;

    // RFC 3161 §2.4.1 / RFC 5035 (ESS v2) / RFC 2634 (ESS v1).
    let ess_v2 = attrs.single(oid::ATTR_SIGNING_CERT_V2)?;
    let ess_v1 = attrs.single(oid::ATTR_SIGNING_CERT)?;
    if ess_v1.is_none() && ess_v2.is_none() {
        return Err(TsaError::EssMissing);
    }
    // Further ids, with whether SHA-1 is acceptable for them (always in v1).
    let mut ess_ids: Vec<(EssCertId, bool)> = Vec::new();
    for (value, v2) in [(ess_v2, true), (ess_v1, false)] {
        let Some(value) = value else { continue };
        let ids = token::parse_ess(value, v2)?;
        ess_matches(&ids[0], signer, opts.allow_sha1 || !v2).map_err(|e| {
            e.unwrap_or(TsaError::EssMismatch {
                index: 0,
                what: "signer certificate",
            })
        })?;
        let sha1_ok = opts.allow_sha1 || !v2;
        ess_ids.extend(ids.into_iter().skip(1).map(|id| (id, sha1_ok)));
    }

    // RFC 3161 §2.4.2: TSTInfo.
    let tst = token::parse_tst_info(econtent)?;
    if tst.version != 1 {
        return Err(TsaError::TstInfoVersion {
            version: tst.version,
        });
    }
    check_imprint(&tst, &expected.imprint, opts.allow_sha1)?;
    if let Some(want) = &expected.nonce {
        let got = tst.nonce.as_ref().ok_or(TsaError::NonceMissing)?;
        let negative = got.first().is_some_and(|b| b & 0x80 != 0);
        if negative || strip_leading_zeros(got) != strip_leading_zeros(want) {
            return Err(TsaError::NonceMismatch {
                expected: crate::hex::encode(strip_leading_zeros(want)),
                found: crate::hex::encode(got),
            });
        }
    }
    if let Some(want) = &expected.policy
        && *want != tst.policy
    {
        return Err(TsaError::PolicyMismatch {
            expected: want.clone(),
            found: tst.policy.clone(),
        });
    }
    if let Some(name) = &tst.tsa
        && !tsa_name_matches(name, signer)
    {
        return Err(TsaError::TsaNameMismatch);
    }
    // RFC 3161 §2.4.2: vouch understands no TSTInfo extension.
    if let Some((id, _)) = tst.extensions.iter().find(|(_, critical)| *critical) {
        return Err(TsaError::UnknownCriticalExtension {
            location: "TSTInfo",
            oid: id.clone(),
        });
    }

    // RFC 3161 §2.3, RFC 5280 §4.2.1.3/§4.2.1.9/§4.2.1.12: signer profile.
    check_signer_profile(signer)?;

    // RFC 5280 §6 at genTime (RFC 3161 §4 "Security considerations").
    let at = match opts.validation_time {
        ValidationTime::GenTime => tst.gen_time,
        ValidationTime::At(t) => t,
    };
    let path = path::build(signer, &pool, trust, at, opts.allow_sha1, &opts.limits)?;

    // Further ESS ids must identify certificates of the path (RFC 5035 §5.4).
    for (i, (id, sha1_ok)) in ess_ids.iter().enumerate() {
        let ok = path
            .certs
            .iter()
            .any(|c| ess_matches(id, c, *sha1_ok).is_ok());
        if !ok {
            return Err(TsaError::EssMismatch {
                index: i + 1,
                what: "certificate chain",
            });
        }
    }

    Ok(VerifiedTimestamp {
        gen_time: tst.gen_time,
        accuracy: tst.accuracy,
        policy: tst.policy.clone(),
        serial: crate::hex::encode(&tst.serial),
        nonce: tst.nonce.as_deref().map(crate::hex::encode),
        imprint_alg: tst.imprint_alg.hash("imprint")?,
        imprint: crate::hex::encode(&tst.imprint),
        tsa_name: tst.tsa.as_deref().map(general_name_text),
        validated_at: at,
        signer: CertificateInfo::from_cert(signer),
        chain: path
            .certs
            .iter()
            .map(|c| CertificateInfo::from_cert(c))
            .collect(),
        tsa_cert_der: signer.der.clone(),
    })
}

fn sid_matches(sid: &Sid, cert: &Cert) -> bool {
    match sid {
        Sid::IssuerSerial { issuer, serial } => cert.issuer == *issuer && cert.serial == *serial,
        Sid::SubjectKeyId(ski) => cert.ext.subject_key_id.as_ref() == Some(ski),
    }
}

/// Does an ESSCertID identify `cert`? `Err(Some(e))` for a specific reason.
fn ess_matches(id: &EssCertId, cert: &Cert, allow_sha1: bool) -> Result<(), Option<TsaError>> {
    let alg = id.hash_alg.hash("ESS certificate id").map_err(Some)?;
    if alg == HashAlg::Sha1 && !allow_sha1 {
        return Err(Some(TsaError::Sha1NotAllowed {
            usage: "ESSCertIDv2 hash",
        }));
    }
    if cert.hash(alg) != id.hash {
        return Err(None);
    }
    if let Some((names, serial)) = &id.issuer_serial {
        // The issuer must be given as a directoryName equal to the
        // certificate's issuer (RFC 5035 §4).
        // Exactly one name, the directoryName of the certificate's issuer
        // (RFC 5035 §4; OpenSSL requires the same).
        let named = match names.as_slice() {
            [n] => der::asn1::AnyRef::from_der(n)
                .is_ok_and(|t| t.tag() == ctx_tag(4) && t.value() == cert.issuer.as_slice()),
            _ => false,
        };
        if !named || *serial != cert.serial {
            return Err(None);
        }
    }
    Ok(())
}

fn check_imprint(tst: &TstInfo, want: &ExpectedImprint, allow_sha1: bool) -> Result<(), TsaError> {
    if !tst.imprint_alg.params_absent_or_null() {
        return Err(TsaError::ImprintParameters);
    }
    let alg =
        HashAlg::from_oid(&tst.imprint_alg.oid).ok_or_else(|| TsaError::UnsupportedAlgorithm {
            usage: "imprint",
            oid: tst.imprint_alg.oid.clone(),
        })?;
    if alg == HashAlg::Sha1 && !allow_sha1 {
        return Err(TsaError::Sha1NotAllowed { usage: "imprint" });
    }
    let expected = match want {
        ExpectedImprint::Digest {
            alg: want_alg,
            digest,
        } => {
            if *want_alg != alg {
                return Err(TsaError::ImprintAlgorithmMismatch {
                    expected: want_alg.name().to_string(),
                    found: alg.name().to_string(),
                });
            }
            digest.as_slice()
        }
        ExpectedImprint::Data(d) => d.get(alg).ok_or(TsaError::ImprintMismatch)?,
    };
    if expected != tst.imprint.as_slice() {
        return Err(TsaError::ImprintMismatch);
    }
    Ok(())
}

fn tsa_name_matches(name: &[u8], signer: &Cert) -> bool {
    let Ok(t) = der::asn1::AnyRef::from_der(name) else {
        return false;
    };
    if t.tag() == ctx_tag(4) {
        return t.value() == signer.subject.as_slice();
    }
    signer
        .ext
        .subject_alt_names
        .iter()
        .any(|n| n.as_slice() == name)
}

fn check_signer_profile(signer: &Cert) -> Result<(), TsaError> {
    let (purposes, critical) = signer.ext.eku.as_ref().ok_or(TsaError::EkuMissing)?;
    if !critical {
        return Err(TsaError::EkuNotCritical);
    }
    if purposes.len() != 1 || purposes[0] != oid::KP_TIME_STAMPING {
        return Err(TsaError::EkuNotTimeStamping);
    }
    if signer.is_ca() {
        return Err(TsaError::SignerIsCa);
    }
    if let Some(ku) = signer.ext.key_usage
        && (ku & !(KU_DIGITAL_SIGNATURE | KU_NON_REPUDIATION) != 0 || ku == 0)
    {
        return Err(TsaError::SignerKeyUsage);
    }
    if let Some(id) = signer.ext.unknown_critical.first() {
        return Err(TsaError::UnknownCriticalExtension {
            location: "signer certificate",
            oid: id.clone(),
        });
    }
    Ok(())
}
