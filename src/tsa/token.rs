//! Decoding of TimeStampResp (RFC 3161 §2.4.2), ContentInfo / SignedData /
//! SignerInfo (RFC 5652 §3, §5), TSTInfo (RFC 3161 §2.4.2) and the ESS
//! signing-certificate attributes (RFC 2634 §5.4, RFC 5035 §3).
//!
//! Decoding only: nothing here decides whether a token is good. Elements
//! keep their original bytes where a check needs them (signedAttrs, the
//! encapsulated content, certificates).

use super::asn1::{
    self, TAG_BIT_STRING, TAG_BOOLEAN, TAG_GENERALIZED_TIME, TAG_INTEGER, TAG_OCTET_STRING,
    TAG_SEQUENCE, TAG_SET, Tlv, ctx_cons, ctx_prim,
};
use super::crypto::AlgId;
use super::error::TsaError;
use super::time::{Timestamp, parse_generalized_time};
use super::{Limits, oid};

/// PKIStatusInfo (RFC 3161 §2.4.2).
#[derive(Clone, Debug)]
pub(crate) struct StatusInfo {
    pub status: u64,
    pub text: Vec<String>,
    pub fail_info: Vec<&'static str>,
}

/// A response or bare token, decoded.
#[derive(Debug)]
pub(crate) struct Parsed<'a> {
    /// Present when the input was a TimeStampResp.
    pub status: Option<StatusInfo>,
    pub token: Option<SignedToken<'a>>,
}

/// ContentInfo { signedData } with its SignedData content.
#[derive(Debug)]
pub(crate) struct SignedToken<'a> {
    /// SignedData.digestAlgorithms.
    pub digest_algorithms: Vec<AlgId>,
    pub econtent_type: String,
    /// The TSTInfo DER octets (the OCTET STRING content, BER chunks joined).
    pub econtent: Option<Vec<u8>>,
    /// Embedded certificates, raw, in the order received.
    pub certs: Vec<&'a [u8]>,
    pub signer_infos: Vec<SignerInfo<'a>>,
}

/// SignerIdentifier (RFC 5652 §5.3).
#[derive(Clone, Debug)]
pub(crate) enum Sid {
    IssuerSerial { issuer: Vec<u8>, serial: Vec<u8> },
    SubjectKeyId(Vec<u8>),
}

/// SignerInfo (RFC 5652 §5.3).
#[derive(Debug)]
pub(crate) struct SignerInfo<'a> {
    pub version: u64,
    pub sid: Sid,
    pub digest_alg: AlgId,
    pub signed_attrs: Option<SignedAttrs<'a>>,
    pub sig_alg: AlgId,
    pub signature: &'a [u8],
}

/// The signed attributes: the original `[0] IMPLICIT` bytes and each
/// attribute's type and raw values.
#[derive(Debug)]
pub(crate) struct SignedAttrs<'a> {
    pub raw: &'a [u8],
    pub attrs: Vec<(String, Vec<Tlv<'a>>)>,
}

impl SignedAttrs<'_> {
    /// The bytes the signature covers (RFC 5652 §5.4): the attributes as
    /// received, with the `[0]` tag replaced by the SET OF tag.
    pub fn signed_bytes(&self) -> Vec<u8> {
        let mut v = self.raw.to_vec();
        v[0] = TAG_SET;
        v
    }

    /// Values of the attribute `oid`, if it occurs (at most once).
    pub fn get(&self, oid: &str) -> Result<Option<&[Tlv<'_>]>, TsaError> {
        let mut found = self.attrs.iter().filter(|(id, _)| id == oid);
        let first = found.next();
        if found.next().is_some() {
            return Err(TsaError::AttributeNotSingle {
                oid: oid.to_string(),
            });
        }
        Ok(first.map(|(_, v)| v.as_slice()))
    }

    /// The single value of attribute `oid`.
    pub fn single(&self, oid: &str) -> Result<Option<Tlv<'_>>, TsaError> {
        match self.get(oid)? {
            None => Ok(None),
            Some([one]) => Ok(Some(*one)),
            Some(_) => Err(TsaError::AttributeNotSingle {
                oid: oid.to_string(),
            }),
        }
    }
}

/// Accuracy (RFC 3161 §2.4.2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Accuracy {
    /// Whole seconds.
    pub seconds: u64,
    /// Milliseconds (1..999).
    pub millis: u64,
    /// Microseconds (1..999).
    pub micros: u64,
}

/// TSTInfo (RFC 3161 §2.4.2).
#[derive(Clone, Debug)]
pub(crate) struct TstInfo {
    pub version: u64,
    pub policy: String,
    pub imprint_alg: AlgId,
    pub imprint: Vec<u8>,
    /// serialNumber INTEGER content (may be negative in the wild).
    pub serial: Vec<u8>,
    pub gen_time: Timestamp,
    pub accuracy: Option<Accuracy>,
    pub ordering: bool,
    /// nonce INTEGER content, as received.
    pub nonce: Option<Vec<u8>>,
    /// tsa GeneralName, raw (inside the [0] EXPLICIT wrapper).
    pub tsa: Option<Vec<u8>>,
    /// (OID, critical) of each extension.
    pub extensions: Vec<(String, bool)>,
}

/// An ESSCertID or ESSCertIDv2.
#[derive(Clone, Debug)]
pub(crate) struct EssCertId {
    /// Hash algorithm OID (SHA-1 for v1).
    pub hash_alg: AlgId,
    pub hash: Vec<u8>,
    /// issuerSerial: raw GeneralNames and normalised serial.
    pub issuer_serial: Option<(Vec<Vec<u8>>, Vec<u8>)>,
}

/// Decodes a TimeStampResp or a bare ContentInfo (detected by the first
/// element inside the outer SEQUENCE).
pub(crate) fn parse<'a>(der: &'a [u8], limits: &Limits) -> Result<Parsed<'a>, TsaError> {
    let outer = asn1::single(der, "TimeStampResp or ContentInfo")?;
    if outer.tag != TAG_SEQUENCE {
        return Err(TsaError::Malformed {
            part: "TimeStampResp or ContentInfo",
        });
    }
    match outer.reader().peek_tag() {
        Some(TAG_SEQUENCE) => {
            let mut r = outer.reader();
            let status = parse_status(&r.read_tag(TAG_SEQUENCE, "PKIStatusInfo")?)?;
            let token = if r.is_empty() {
                None
            } else {
                let ci = r.read_tag(TAG_SEQUENCE, "TimeStampToken")?;
                Some(parse_content_info(&ci, limits)?)
            };
            r.finish("TimeStampResp")?;
            Ok(Parsed {
                status: Some(status),
                token,
            })
        }
        Some(asn1::TAG_OID) => Ok(Parsed {
            status: None,
            token: Some(parse_content_info(&outer, limits)?),
        }),
        _ => Err(TsaError::Malformed {
            part: "TimeStampResp or ContentInfo",
        }),
    }
}

const FAIL_INFO: [(usize, &str); 8] = [
    (0, "badAlg"),
    (2, "badRequest"),
    (5, "badDataFormat"),
    (14, "timeNotAvailable"),
    (15, "unacceptedPolicy"),
    (16, "unacceptedExtension"),
    (17, "addInfoNotAvailable"),
    (25, "systemFailure"),
];

fn parse_status(seq: &Tlv<'_>) -> Result<StatusInfo, TsaError> {
    const PART: &str = "PKIStatusInfo";
    let mut r = seq.reader();
    let status = asn1::small_uint(&r.read_tag(TAG_INTEGER, PART)?, PART)?;
    let mut text = Vec::new();
    if let Some(t) = r.optional(TAG_SEQUENCE, PART)? {
        let mut tr = t.reader();
        while !tr.is_empty() {
            let s = tr.read_tag(0x0c, PART)?;
            if text.len() < 16 {
                text.push(super::cert::printable(&String::from_utf8_lossy(s.value)));
            }
        }
    }
    let mut fail_info = Vec::new();
    if let Some(b) = r.optional(TAG_BIT_STRING, PART)? {
        let bits = b.value.get(1..).unwrap_or_default();
        for (bit, name) in FAIL_INFO {
            if bits
                .get(bit / 8)
                .is_some_and(|byte| byte & (0x80 >> (bit % 8)) != 0)
            {
                fail_info.push(name);
            }
        }
    }
    r.finish(PART)?;
    Ok(StatusInfo {
        status,
        text,
        fail_info,
    })
}

fn parse_content_info<'a>(ci: &Tlv<'a>, limits: &Limits) -> Result<SignedToken<'a>, TsaError> {
    let mut r = ci.reader();
    let content_type = asn1::read_oid(&mut r, "ContentInfo")?;
    if content_type != oid::SIGNED_DATA {
        return Err(TsaError::NotSignedData { content_type });
    }
    let explicit = r.read_tag(ctx_cons(0), "ContentInfo")?;
    r.finish("ContentInfo")?;
    let sd = asn1::single(explicit.value, "SignedData")?;
    if sd.tag != TAG_SEQUENCE {
        return Err(TsaError::Malformed { part: "SignedData" });
    }
    let mut s = sd.reader();
    const SD: &str = "SignedData";
    let _version = asn1::small_uint(&s.read_tag(TAG_INTEGER, SD)?, SD)?;
    let algs = s.read_tag(TAG_SET, SD)?;
    let mut ar = algs.reader();
    let mut digest_algorithms = Vec::new();
    while !ar.is_empty() {
        if digest_algorithms.len() >= 16 {
            return Err(TsaError::LimitExceeded {
                what: "digest algorithms",
                limit: 16,
            });
        }
        digest_algorithms.push(AlgId::read(&mut ar, "SignedData.digestAlgorithms")?);
    }
    let encap = s.read_tag(TAG_SEQUENCE, "EncapsulatedContentInfo")?;
    let mut er = encap.reader();
    let econtent_type = asn1::read_oid(&mut er, "EncapsulatedContentInfo")?;
    let econtent = match er.optional(ctx_cons(0), "eContent")? {
        Some(wrapper) => {
            let mut wr = wrapper.reader();
            let os = wr.read("eContent")?;
            wr.finish("eContent")?;
            Some(asn1::octet_string_bytes(&os, "eContent")?)
        }
        None => None,
    };
    er.finish("EncapsulatedContentInfo")?;
    let mut certs = Vec::new();
    if let Some(c) = s.optional(ctx_cons(0), "certificates")? {
        let mut cr = c.reader();
        while !cr.is_empty() {
            let cert = cr.read("certificates")?;
            if certs.len() >= limits.max_certificates {
                return Err(TsaError::LimitExceeded {
                    what: "certificates",
                    limit: limits.max_certificates,
                });
            }
            // Only plain X.509 certificates are used; other choices
            // (attribute certificates, `other`) are ignored.
            if cert.tag == TAG_SEQUENCE {
                certs.push(cert.raw);
            }
        }
    }
    s.optional(ctx_cons(1), "crls")?;
    let infos = s.read_tag(TAG_SET, "signerInfos")?;
    s.finish(SD)?;
    let mut signer_infos = Vec::new();
    let mut ir = infos.reader();
    while !ir.is_empty() {
        if signer_infos.len() >= 8 {
            return Err(TsaError::LimitExceeded {
                what: "SignerInfos",
                limit: 8,
            });
        }
        signer_infos.push(parse_signer_info(
            &ir.read_tag(TAG_SEQUENCE, "SignerInfo")?,
        )?);
    }
    Ok(SignedToken {
        digest_algorithms,
        econtent_type,
        econtent,
        certs,
        signer_infos,
    })
}

fn parse_signer_info<'a>(si: &Tlv<'a>) -> Result<SignerInfo<'a>, TsaError> {
    const PART: &str = "SignerInfo";
    let mut r = si.reader();
    let version = asn1::small_uint(&r.read_tag(TAG_INTEGER, PART)?, PART)?;
    let sid_tlv = r.read(PART)?;
    let sid = match sid_tlv.tag {
        TAG_SEQUENCE => {
            let mut sr = sid_tlv.reader();
            let issuer = sr.read_tag(TAG_SEQUENCE, "sid")?;
            let serial = sr.read_tag(TAG_INTEGER, "sid")?;
            sr.finish("sid")?;
            Sid::IssuerSerial {
                issuer: issuer.raw.to_vec(),
                serial: asn1::normalize_int(asn1::integer_bytes(&serial, "sid")?).to_vec(),
            }
        }
        t if t == ctx_prim(0) => Sid::SubjectKeyId(sid_tlv.value.to_vec()),
        _ => return Err(TsaError::Malformed { part: "sid" }),
    };
    let digest_alg = AlgId::read(&mut r, "SignerInfo.digestAlgorithm")?;
    let signed_attrs = match r.optional(ctx_cons(0), "signedAttrs")? {
        Some(t) => Some(parse_attributes(&t)?),
        None => None,
    };
    let sig_alg = AlgId::read(&mut r, "SignerInfo.signatureAlgorithm")?;
    let signature = r.read_tag(TAG_OCTET_STRING, "SignerInfo.signature")?.value;
    r.optional(ctx_cons(1), "unsignedAttrs")?;
    r.finish(PART)?;
    Ok(SignerInfo {
        version,
        sid,
        digest_alg,
        signed_attrs,
        sig_alg,
        signature,
    })
}

fn parse_attributes<'a>(t: &Tlv<'a>) -> Result<SignedAttrs<'a>, TsaError> {
    const PART: &str = "signedAttrs";
    let mut attrs = Vec::new();
    let mut r = t.reader();
    while !r.is_empty() {
        if attrs.len() >= 64 {
            return Err(TsaError::LimitExceeded {
                what: "signed attributes",
                limit: 64,
            });
        }
        let a = r.read_tag(TAG_SEQUENCE, PART)?;
        let mut ar = a.reader();
        let id = asn1::read_oid(&mut ar, PART)?;
        let set = ar.read_tag(TAG_SET, PART)?;
        ar.finish(PART)?;
        let mut values = Vec::new();
        let mut vr = set.reader();
        while !vr.is_empty() {
            values.push(vr.read(PART)?);
        }
        attrs.push((id, values));
    }
    Ok(SignedAttrs { raw: t.raw, attrs })
}

/// Decodes TSTInfo.
pub(crate) fn parse_tst_info(der: &[u8]) -> Result<TstInfo, TsaError> {
    const PART: &str = "TSTInfo";
    let seq = asn1::single(der, PART)?;
    if seq.tag != TAG_SEQUENCE {
        return Err(TsaError::Malformed { part: PART });
    }
    let mut r = seq.reader();
    let version = asn1::small_uint(&r.read_tag(TAG_INTEGER, PART)?, PART)?;
    let policy = asn1::read_oid(&mut r, "TSTInfo.policy")?;
    let mi = r.read_tag(TAG_SEQUENCE, "messageImprint")?;
    let mut mr = mi.reader();
    let imprint_alg = AlgId::read(&mut mr, "messageImprint")?;
    let imprint = mr
        .read_tag(TAG_OCTET_STRING, "messageImprint")?
        .value
        .to_vec();
    mr.finish("messageImprint")?;
    let serial =
        asn1::integer_bytes(&r.read_tag(TAG_INTEGER, "TSTInfo.serialNumber")?, PART)?.to_vec();
    let gt = r.read_tag(TAG_GENERALIZED_TIME, "TSTInfo.genTime")?;
    let gen_time = parse_generalized_time(gt.value, "TSTInfo.genTime")?;
    let mut accuracy = None;
    if let Some(a) = r.optional(TAG_SEQUENCE, "accuracy")? {
        let mut acc = Accuracy::default();
        let mut ar = a.reader();
        if let Some(s) = ar.optional(TAG_INTEGER, "accuracy")? {
            acc.seconds = asn1::small_uint(&s, "accuracy")?;
        }
        if let Some(m) = ar.optional(ctx_prim(0), "accuracy")? {
            acc.millis = uint_content(m.value, "accuracy")?;
        }
        if let Some(m) = ar.optional(ctx_prim(1), "accuracy")? {
            acc.micros = uint_content(m.value, "accuracy")?;
        }
        ar.finish("accuracy")?;
        if acc.millis > 999 || acc.micros > 999 {
            return Err(TsaError::Malformed { part: "accuracy" });
        }
        accuracy = Some(acc);
    }
    let ordering = match r.optional(TAG_BOOLEAN, "ordering")? {
        Some(b) => b.value.first().is_some_and(|v| *v != 0),
        None => false,
    };
    let nonce = match r.optional(TAG_INTEGER, "nonce")? {
        Some(n) => Some(asn1::integer_bytes(&n, "nonce")?.to_vec()),
        None => None,
    };
    let tsa = match r.optional(ctx_cons(0), "tsa")? {
        Some(t) => {
            let inner = asn1::single(t.value, "tsa")?;
            Some(inner.raw.to_vec())
        }
        None => None,
    };
    let mut extensions = Vec::new();
    if let Some(e) = r.optional(ctx_cons(1), "TSTInfo.extensions")? {
        let mut er = e.reader();
        while !er.is_empty() {
            let ext = er.read_tag(TAG_SEQUENCE, "TSTInfo.extensions")?;
            let mut x = ext.reader();
            let id = asn1::read_oid(&mut x, "TSTInfo.extensions")?;
            let critical = match x.optional(TAG_BOOLEAN, "TSTInfo.extensions")? {
                Some(b) => b.value.first().is_some_and(|v| *v != 0),
                None => false,
            };
            x.read_tag(TAG_OCTET_STRING, "TSTInfo.extensions")?;
            x.finish("TSTInfo.extensions")?;
            if extensions.len() >= 32 {
                return Err(TsaError::LimitExceeded {
                    what: "TSTInfo extensions",
                    limit: 32,
                });
            }
            extensions.push((id, critical));
        }
    }
    r.finish(PART)?;
    Ok(TstInfo {
        version,
        policy,
        imprint_alg,
        imprint,
        serial,
        gen_time,
        accuracy,
        ordering,
        nonce,
        tsa,
        extensions,
    })
}

fn uint_content(v: &[u8], part: &'static str) -> Result<u64, TsaError> {
    if v.is_empty() || v.len() > 8 || v[0] & 0x80 != 0 {
        return Err(TsaError::Malformed { part });
    }
    Ok(v.iter().fold(0u64, |a, b| (a << 8) | u64::from(*b)))
}

/// Decodes a SigningCertificate (v1, `v2 == false`) or SigningCertificateV2
/// attribute value into its certificate ids.
pub(crate) fn parse_ess(value: &Tlv<'_>, v2: bool) -> Result<Vec<EssCertId>, TsaError> {
    let part = if v2 {
        "signingCertificateV2"
    } else {
        "signingCertificate"
    };
    if value.tag != TAG_SEQUENCE {
        return Err(TsaError::Malformed { part });
    }
    let mut r = value.reader();
    let certs = r.read_tag(TAG_SEQUENCE, part)?;
    r.optional(TAG_SEQUENCE, part)?; // policies: not used by time stamping
    r.finish(part)?;
    let mut ids = Vec::new();
    let mut cr = certs.reader();
    while !cr.is_empty() {
        if ids.len() >= 16 {
            return Err(TsaError::LimitExceeded {
                what: "ESS certificate ids",
                limit: 16,
            });
        }
        let id = cr.read_tag(TAG_SEQUENCE, part)?;
        let mut ir = id.reader();
        let hash_alg = if v2 && ir.peek_tag() == Some(TAG_SEQUENCE) {
            AlgId::read(&mut ir, part)?
        } else {
            AlgId {
                oid: if v2 { oid::SHA256 } else { oid::SHA1 }.to_string(),
                params: None,
            }
        };
        let hash = ir.read_tag(TAG_OCTET_STRING, part)?.value.to_vec();
        let issuer_serial = match ir.optional(TAG_SEQUENCE, part)? {
            Some(is) => {
                let mut isr = is.reader();
                let names = isr.read_tag(TAG_SEQUENCE, part)?;
                let serial = isr.read_tag(TAG_INTEGER, part)?;
                isr.finish(part)?;
                let mut list = Vec::new();
                let mut nr = names.reader();
                while !nr.is_empty() {
                    list.push(nr.read(part)?.raw.to_vec());
                }
                Some((
                    list,
                    asn1::normalize_int(asn1::integer_bytes(&serial, part)?).to_vec(),
                ))
            }
            None => None,
        };
        ir.finish(part)?;
        ids.push(EssCertId {
            hash_alg,
            hash,
            issuer_serial,
        });
    }
    if ids.is_empty() {
        return Err(TsaError::Malformed { part });
    }
    Ok(ids)
}
