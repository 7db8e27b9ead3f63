//! Decoding of TimeStampResp (RFC 3161 §2.4.2), ContentInfo / SignedData /
//! SignerInfo (RFC 5652 §3, §5), TSTInfo (RFC 3161 §2.4.2) and the ESS
//! signing-certificate attributes (RFC 2634 §5.4, RFC 5035 §3).
//!
//! CMS is read with the `cms` crate (ContentInfo, SignerInfo, the digest
//! algorithms and EncapsulatedContentInfo; SignedData is a local `der` type
//! over those, so that certificates are decoded once per distinct
//! certificate rather than once per token), the RFC 3161 and ESS
//! structures with local `der` types (no maintained crate on the der 0.8
//! line has them).
//! The response and its CMS structure are read under BER rules, because
//! real TSAs send indefinite lengths and SETs out of DER order; under BER,
//! `der` keeps a SET in the order received. TSTInfo, the ESS attributes and
//! certificates are read as DER (TSTInfo is signed, through the
//! message-digest attribute, as the DER bytes it is).
//!
//! Elements a check needs exactly as received keep their bytes: the signed
//! attributes (the signature covers them as received: re-encoding them is
//! the known way to break a valid token), the embedded certificates, and
//! the encapsulated content. They are located with `der`'s reader over the
//! same bytes `cms` decoded.
//!
//! Decoding only: nothing here decides whether a token is good.

use super::crypto::AlgId;
use super::der_util::{ctx_tag, malformed, reader};
use super::error::TsaError;
use super::time::{Timestamp, parse_generalized_time};
use super::{Limits, oid};
use der::asn1::{AnyRef, BitStringRef, IntRef, ObjectIdentifier, OctetStringRef, Utf8StringRef};
use der::{Decode, DecodeValue, EncodeValue, FixedTag, Header, Length, Reader, Tag, Writer};

/// PKIStatusInfo (RFC 3161 §2.4.2).
#[derive(Clone, Debug)]
pub(crate) struct StatusInfo {
    pub status: u64,
    pub text: Vec<String>,
    pub fail_info: Vec<&'static str>,
}

/// A response or bare token, decoded.
#[derive(Debug)]
pub(crate) struct Parsed {
    /// Present when the input was a TimeStampResp.
    pub status: Option<StatusInfo>,
    pub token: Option<SignedToken>,
}

/// ContentInfo { signedData } with its SignedData content.
#[derive(Debug)]
pub(crate) struct SignedToken {
    /// SignedData.digestAlgorithms.
    pub digest_algorithms: Vec<AlgId>,
    pub econtent_type: String,
    /// The TSTInfo octets (the OCTET STRING content, BER chunks joined).
    pub econtent: Option<Vec<u8>>,
    /// Embedded certificates, as received, in the order received.
    pub certs: Vec<Vec<u8>>,
    pub signer_infos: Vec<SignerInfo>,
}

/// SignerIdentifier (RFC 5652 §5.3).
#[derive(Clone, Debug)]
pub(crate) enum Sid {
    /// The issuer Name (DER) and the serial INTEGER content.
    IssuerSerial {
        issuer: Vec<u8>,
        serial: Vec<u8>,
    },
    SubjectKeyId(Vec<u8>),
}

/// SignerInfo (RFC 5652 §5.3).
#[derive(Debug)]
pub(crate) struct SignerInfo {
    pub version: u64,
    pub sid: Sid,
    pub digest_alg: AlgId,
    pub signed_attrs: Option<SignedAttrs>,
    pub sig_alg: AlgId,
    pub signature: Vec<u8>,
}

/// The signed attributes: the original `[0] IMPLICIT` bytes and each
/// attribute's type and values.
#[derive(Debug)]
pub(crate) struct SignedAttrs {
    pub raw: Vec<u8>,
    pub attrs: Vec<(String, Vec<der::Any>)>,
}

impl SignedAttrs {
    /// The bytes the signature covers (RFC 5652 §5.4): the attributes as
    /// received, with the `[0]` tag replaced by the SET OF tag.
    pub fn signed_bytes(&self) -> Vec<u8> {
        let mut v = self.raw.clone();
        if let Some(first) = v.first_mut() {
            *first = 0x31;
        }
        v
    }

    /// Values of the attribute `oid`, if it occurs (at most once).
    pub fn get(&self, oid: &str) -> Result<Option<&[der::Any]>, TsaError> {
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
    pub fn single(&self, oid: &str) -> Result<Option<&der::Any>, TsaError> {
        match self.get(oid)? {
            None => Ok(None),
            Some([one]) => Ok(Some(one)),
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
    /// tsa GeneralName, DER (inside the [0] EXPLICIT wrapper).
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
    /// issuerSerial: each GeneralName (DER) and the serial INTEGER content.
    pub issuer_serial: Option<(Vec<Vec<u8>>, Vec<u8>)>,
}

// ------------------------------------------------------- RFC 3161 types

/// PKIStatusInfo ::= SEQUENCE { status PKIStatus, statusString
/// PKIFreeText OPTIONAL, failInfo PKIFailureInfo OPTIONAL }
#[derive(der::Sequence)]
struct PkiStatusInfoAsn<'a> {
    status: u64,
    #[asn1(optional = "true")]
    status_string: Option<Vec<Utf8StringRef<'a>>>,
    #[asn1(optional = "true")]
    fail_info: Option<BitStringRef<'a>>,
}

/// TSTInfo (RFC 3161 §2.4.2).
#[derive(der::Sequence)]
struct TstInfoAsn<'a> {
    version: u64,
    policy: ObjectIdentifier,
    message_imprint: MessageImprintAsn<'a>,
    serial_number: IntRef<'a>,
    gen_time: GenTime<'a>,
    #[asn1(optional = "true")]
    accuracy: Option<AccuracyAsn>,
    #[asn1(default = "Default::default")]
    ordering: bool,
    #[asn1(optional = "true")]
    nonce: Option<IntRef<'a>>,
    #[asn1(context_specific = "0", tag_mode = "EXPLICIT", optional = "true")]
    tsa: Option<AnyRef<'a>>,
    #[asn1(context_specific = "1", tag_mode = "IMPLICIT", optional = "true")]
    extensions: Option<Vec<x509_cert::ext::Extension>>,
}

/// MessageImprint ::= SEQUENCE { hashAlgorithm AlgorithmIdentifier,
/// hashedMessage OCTET STRING }
#[derive(der::Sequence)]
struct MessageImprintAsn<'a> {
    hash_algorithm: spki::AlgorithmIdentifierRef<'a>,
    hashed_message: &'a OctetStringRef,
}

/// Accuracy ::= SEQUENCE { seconds INTEGER OPTIONAL, millis [0] INTEGER
/// (1..999) OPTIONAL, micros [1] INTEGER (1..999) OPTIONAL }
#[derive(der::Sequence)]
struct AccuracyAsn {
    #[asn1(optional = "true")]
    seconds: Option<u64>,
    #[asn1(context_specific = "0", tag_mode = "IMPLICIT", optional = "true")]
    millis: Option<u64>,
    #[asn1(context_specific = "1", tag_mode = "IMPLICIT", optional = "true")]
    micros: Option<u64>,
}

/// genTime: a GeneralizedTime whose text is checked by
/// [`parse_generalized_time`] (RFC 3161 allows fractional seconds, which
/// `der`'s GeneralizedTime does not read).
struct GenTime<'a>(&'a [u8]);

impl<'a> DecodeValue<'a> for GenTime<'a> {
    type Error = der::Error;
    fn decode_value<R: Reader<'a>>(reader: &mut R, header: Header) -> der::Result<Self> {
        Ok(GenTime(reader.read_slice(header.length())?))
    }
}

impl EncodeValue for GenTime<'_> {
    fn value_len(&self) -> der::Result<Length> {
        Length::try_from(self.0.len())
    }
    fn encode_value(&self, writer: &mut impl Writer) -> der::Result<()> {
        writer.write(self.0)
    }
}

impl FixedTag for GenTime<'_> {
    const TAG: Tag = Tag::GeneralizedTime;
}

// ----------------------------------------------------------- SignedData

/// SignedData (RFC 5652 §5.1) with `cms`'s component types, except that the
/// certificate and CRL sets are skipped here: each certificate is decoded
/// (with `x509-cert`) from its received bytes once per distinct certificate
/// by the trust store's cache, not once per token as `cms`'s SignedData
/// would; the sets' elements are located and checked in
/// [`received_bytes`].
#[derive(der::Sequence)]
struct SignedDataAsn {
    version: cms::content_info::CmsVersion,
    digest_algorithms: cms::signed_data::DigestAlgorithmIdentifiers,
    encap_content_info: cms::signed_data::EncapsulatedContentInfo,
    #[asn1(context_specific = "0", tag_mode = "IMPLICIT", optional = "true")]
    certificates: Option<Skipped>,
    #[asn1(context_specific = "1", tag_mode = "IMPLICIT", optional = "true")]
    crls: Option<Skipped>,
    signer_infos: cms::signed_data::SignerInfos,
}

/// A SET whose content is read elsewhere: decoding consumes it, encoding is
/// refused (vouch never writes a SignedData).
struct Skipped;

impl<'a> DecodeValue<'a> for Skipped {
    type Error = der::Error;
    fn decode_value<R: Reader<'a>>(reader: &mut R, header: Header) -> der::Result<Self> {
        reader.read_slice(header.length())?;
        Ok(Skipped)
    }
}

impl EncodeValue for Skipped {
    fn value_len(&self) -> der::Result<Length> {
        Err(der::ErrorKind::Failed.into())
    }
    fn encode_value(&self, _writer: &mut impl Writer) -> der::Result<()> {
        Err(der::ErrorKind::Failed.into())
    }
}

impl FixedTag for Skipped {
    const TAG: Tag = Tag::Set;
}

// ------------------------------------------------------------ ESS types

/// SigningCertificate ::= SEQUENCE { certs SEQUENCE OF ESSCertID,
/// policies SEQUENCE OF PolicyInformation OPTIONAL } (RFC 2634 §5.4)
#[derive(der::Sequence)]
struct SigningCertificateAsn<'a> {
    certs: Vec<EssCertIdAsn<'a>>,
    #[asn1(optional = "true")]
    policies: Option<Vec<AnyRef<'a>>>,
}

/// ESSCertID ::= SEQUENCE { certHash Hash, issuerSerial IssuerSerial OPTIONAL }
#[derive(der::Sequence)]
struct EssCertIdAsn<'a> {
    cert_hash: &'a OctetStringRef,
    #[asn1(optional = "true")]
    issuer_serial: Option<IssuerSerialAsn<'a>>,
}

/// SigningCertificateV2 (RFC 5035 §3).
#[derive(der::Sequence)]
struct SigningCertificateV2Asn<'a> {
    certs: Vec<EssCertIdV2Asn<'a>>,
    #[asn1(optional = "true")]
    policies: Option<Vec<AnyRef<'a>>>,
}

/// ESSCertIDv2 ::= SEQUENCE { hashAlgorithm AlgorithmIdentifier DEFAULT
/// {algorithm id-sha256}, certHash Hash, issuerSerial IssuerSerial OPTIONAL }
#[derive(der::Sequence)]
struct EssCertIdV2Asn<'a> {
    #[asn1(optional = "true")]
    hash_algorithm: Option<spki::AlgorithmIdentifierRef<'a>>,
    cert_hash: &'a OctetStringRef,
    #[asn1(optional = "true")]
    issuer_serial: Option<IssuerSerialAsn<'a>>,
}

/// IssuerSerial ::= SEQUENCE { issuer GeneralNames, serialNumber
/// CertificateSerialNumber }
#[derive(der::Sequence)]
struct IssuerSerialAsn<'a> {
    issuer: Vec<AnyRef<'a>>,
    serial_number: IntRef<'a>,
}

// -------------------------------------------------------------- reading

/// Decodes a TimeStampResp or a bare ContentInfo (told apart by the first
/// element inside the outer SEQUENCE).
pub(crate) fn parse(der: &[u8], limits: &Limits) -> Result<Parsed, TsaError> {
    const TOP: &str = "TimeStampResp or ContentInfo";
    if tag_of(der).map_err(malformed(TOP))? != Tag::Sequence {
        return Err(TsaError::Malformed { part: TOP });
    }
    let fields = content(der).and_then(children).map_err(malformed(TOP))?;
    match fields.first().map(|f| tag_of(f)) {
        Some(Ok(Tag::Sequence)) => {
            if fields.len() > 2 {
                return Err(TsaError::Malformed {
                    part: "TimeStampResp",
                });
            }
            let status = parse_status(fields[0])?;
            let token = match fields.get(1) {
                Some(ci) => Some(parse_content_info(ci, limits)?),
                None => None,
            };
            Ok(Parsed {
                status: Some(status),
                token,
            })
        }
        Some(Ok(Tag::ObjectIdentifier)) => Ok(Parsed {
            status: None,
            token: Some(parse_content_info(der, limits)?),
        }),
        _ => Err(TsaError::Malformed { part: TOP }),
    }
}

/// The elements of a constructed element's content, each as received.
fn children(content: &[u8]) -> der::Result<Vec<&[u8]>> {
    let mut r = reader(content, true)?;
    let mut out = Vec::new();
    while !r.is_finished() {
        // `Reader::tlv_bytes` measures an indefinite length's header as if
        // it were definite; reading the element and slicing by position
        // keeps its bytes exact.
        let start = usize::try_from(r.position())?;
        AnyRef::decode(&mut r)?;
        let end = usize::try_from(r.position())?;
        out.push(content.get(start..end).unwrap_or_default());
    }
    Ok(out)
}

/// The content octets of one element (BER: an indefinite length's content
/// without its end-of-contents octets, as `der` reads it).
fn content(tlv: &[u8]) -> der::Result<&[u8]> {
    let mut r = reader(tlv, true)?;
    Header::decode(&mut r)?;
    let start = usize::try_from(r.position())?;
    let len = der::Any::from_ber(tlv)?.value().len();
    tlv.get(start..start + len).ok_or_else(|| {
        der::ErrorKind::Incomplete {
            expected_len: Length::ZERO,
            actual_len: Length::ZERO,
        }
        .into()
    })
}

fn tag_of(tlv: &[u8]) -> der::Result<Tag> {
    let r = reader(tlv, true)?;
    Tag::peek(&r)
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

fn parse_status(tlv: &[u8]) -> Result<StatusInfo, TsaError> {
    const PART: &str = "PKIStatusInfo";
    let s = PkiStatusInfoAsn::from_ber(tlv).map_err(malformed(PART))?;
    let text = s
        .status_string
        .unwrap_or_default()
        .iter()
        .take(16)
        .map(|t| super::cert::printable(t.as_str()))
        .collect();
    let mut fail_info = Vec::new();
    if let Some(b) = s.fail_info {
        let bits = b.raw_bytes();
        for (bit, name) in FAIL_INFO {
            if bits
                .get(bit / 8)
                .is_some_and(|byte| byte & (0x80 >> (bit % 8)) != 0)
            {
                fail_info.push(name);
            }
        }
    }
    Ok(StatusInfo {
        status: s.status,
        text,
        fail_info,
    })
}

/// The certificates and each SignerInfo's signed attributes as received,
/// located in SignedData's content.
struct ReceivedBytes<'a> {
    encap: &'a [u8],
    certs: Vec<&'a [u8]>,
    signed_attrs: Vec<Option<&'a [u8]>>,
}

fn received_bytes(sd_content: &[u8]) -> der::Result<ReceivedBytes<'_>> {
    // SignedData ::= SEQUENCE { version, digestAlgorithms, encapContentInfo,
    //   certificates [0] IMPLICIT OPTIONAL, crls [1] IMPLICIT OPTIONAL,
    //   signerInfos }
    let fields = children(sd_content)?;
    let encap = fields.get(2).copied().unwrap_or_default();
    let mut i = 3;
    let mut certs = Vec::new();
    if let Some(f) = fields.get(i)
        && tag_of(f)? == ctx_tag(0)
    {
        certs = children(content(f)?)?;
        // CertificateChoices: a certificate, or [0]..[3] (obsolete extended
        // certificate, attribute certificates, other); nothing else.
        for c in &certs {
            let t = tag_of(c)?;
            if t != Tag::Sequence && !(0..4).any(|n| t == ctx_tag(n)) {
                return Err(t.value_error().into());
            }
        }
        i += 1;
    }
    if let Some(f) = fields.get(i)
        && tag_of(f)? == ctx_tag(1)
    {
        i += 1;
    }
    let mut signed_attrs = Vec::new();
    if let Some(infos) = fields.get(i) {
        for si in children(content(infos)?)? {
            // SignerInfo ::= SEQUENCE { version, sid, digestAlgorithm,
            //   signedAttrs [0] IMPLICIT OPTIONAL, ... }
            let f = children(content(si)?)?;
            signed_attrs.push(match f.get(3) {
                Some(a) if tag_of(a)? == ctx_tag(0) => Some(*a),
                _ => None,
            });
        }
    }
    Ok(ReceivedBytes {
        encap,
        certs,
        signed_attrs,
    })
}

fn parse_content_info(ci: &[u8], limits: &Limits) -> Result<SignedToken, TsaError> {
    const SD: &str = "SignedData";
    let info = cms::content_info::ContentInfo::from_ber(ci).map_err(malformed("ContentInfo"))?;
    let content_type = oid::text(&info.content_type);
    if content_type != oid::SIGNED_DATA {
        return Err(TsaError::NotSignedData { content_type });
    }
    // The SignedData as received: ContentInfo { contentType, [0] EXPLICIT }.
    let sd_tlv = content(ci)
        .and_then(children)
        .ok()
        .and_then(|f| f.get(1).copied())
        .and_then(|explicit| content(explicit).and_then(children).ok())
        .and_then(|inner| match inner.as_slice() {
            [one] => Some(*one),
            _ => None,
        })
        .ok_or(TsaError::Malformed { part: SD })?;
    if tag_of(sd_tlv).map_err(malformed(SD))? != Tag::Sequence {
        return Err(TsaError::Malformed { part: SD });
    }
    let received = content(sd_tlv)
        .and_then(received_bytes)
        .map_err(malformed(SD))?;
    if received.certs.len() > limits.max_certificates {
        return Err(TsaError::LimitExceeded {
            what: "certificates",
            limit: limits.max_certificates,
        });
    }
    if received.signed_attrs.len() > 8 {
        return Err(TsaError::LimitExceeded {
            what: "SignerInfos",
            limit: 8,
        });
    }
    let sd = SignedDataAsn::from_ber(sd_tlv).map_err(malformed(SD))?;

    if sd.digest_algorithms.len() > 16 {
        return Err(TsaError::LimitExceeded {
            what: "digest algorithms",
            limit: 16,
        });
    }
    let digest_algorithms = sd
        .digest_algorithms
        .iter()
        .map(AlgId::from_spki)
        .collect::<Result<_, _>>()?;
    let econtent_type = oid::text(&sd.encap_content_info.econtent_type);
    let econtent = match sd.encap_content_info.econtent {
        Some(_) => Some(econtent_octets(received.encap)?),
        None => None,
    };
    // Only plain X.509 certificates are used; other choices (attribute
    // certificates, `other`) are ignored.
    let certs = received
        .certs
        .iter()
        .filter(|c| tag_of(c).is_ok_and(|t| t == Tag::Sequence))
        .map(|c| c.to_vec())
        .collect();
    let mut signer_infos = Vec::new();
    for (si, raw_attrs) in sd
        .signer_infos
        .0
        .into_vec()
        .into_iter()
        .zip(received.signed_attrs)
    {
        signer_infos.push(signer_info(si, raw_attrs)?);
    }
    Ok(SignedToken {
        digest_algorithms,
        econtent_type,
        econtent,
        certs,
        signer_infos,
    })
}

/// The eContent OCTET STRING's octets, from `[0] EXPLICIT` in the
/// EncapsulatedContentInfo as received: primitive, or constructed (BER) with
/// its chunks joined.
fn econtent_octets(encap: &[u8]) -> Result<Vec<u8>, TsaError> {
    const PART: &str = "eContent";
    let bad = malformed(PART);
    let fields = children(content(encap).map_err(&bad)?).map_err(&bad)?;
    let wrapper = fields.get(1).ok_or(TsaError::Malformed { part: PART })?;
    let inner = children(content(wrapper).map_err(&bad)?).map_err(&bad)?;
    let [os] = inner.as_slice() else {
        return Err(TsaError::Malformed { part: PART });
    };
    octet_string(os, 0).map_err(&bad)
}

/// An OCTET STRING's octets, primitive or constructed (chunks of at most
/// 32 levels).
fn octet_string(tlv: &[u8], depth: usize) -> der::Result<Vec<u8>> {
    let mut r = reader(tlv, true)?;
    let header = Header::peek(&r)?;
    if header.tag() != Tag::OctetString {
        return Err(Tag::OctetString.value_error().into());
    }
    if !header.is_constructed() {
        return Ok(<&OctetStringRef>::decode(&mut r)?.as_bytes().to_vec());
    }
    if depth >= 32 {
        return Err(der::ErrorKind::NestingDepth.into());
    }
    let mut out = Vec::new();
    for chunk in children(content(tlv)?)? {
        out.extend(octet_string(chunk, depth + 1)?);
    }
    Ok(out)
}

fn signer_info(
    si: cms::signed_data::SignerInfo,
    raw_attrs: Option<&[u8]>,
) -> Result<SignerInfo, TsaError> {
    use cms::signed_data::SignerIdentifier;
    const PART: &str = "SignerInfo";
    let sid = match &si.sid {
        SignerIdentifier::IssuerAndSerialNumber(is) => Sid::IssuerSerial {
            issuer: der::Encode::to_der(&is.issuer).map_err(malformed("sid"))?,
            serial: is.serial_number.as_bytes().to_vec(),
        },
        SignerIdentifier::SubjectKeyIdentifier(ski) => Sid::SubjectKeyId(ski.0.as_bytes().to_vec()),
    };
    let signed_attrs = match (si.signed_attrs, raw_attrs) {
        (Some(attrs), Some(raw)) => {
            if attrs.len() > 64 {
                return Err(TsaError::LimitExceeded {
                    what: "signed attributes",
                    limit: 64,
                });
            }
            // Signed as received, but only in the form the signer must
            // have used, DER (RFC 5652 §5.4), except that the SET may be in
            // the order received (real TSAs sign unsorted SETs): decoded
            // under BER in received order and encoded again, the attributes
            // must give back exactly the bytes received. BER (indefinite or
            // long-form lengths) in the signed bytes is refused, as OpenSSL,
            // which re-encodes, refuses it.
            let again = der::Encode::to_der(&attrs).map_err(malformed("signedAttrs"))?;
            if again.get(1..) != raw.get(1..) {
                return Err(TsaError::Malformed {
                    part: "signedAttrs (not DER)",
                });
            }
            Some(SignedAttrs {
                raw: raw.to_vec(),
                attrs: attrs
                    .into_vec()
                    .into_iter()
                    .map(|a| (oid::text(&a.oid), a.values.into_vec()))
                    .collect(),
            })
        }
        (None, None) => None,
        _ => return Err(TsaError::Malformed { part: PART }),
    };
    Ok(SignerInfo {
        version: si.version as u64,
        sid,
        digest_alg: AlgId::from_spki(&si.digest_alg)?,
        signed_attrs,
        sig_alg: AlgId::from_spki(&si.signature_algorithm)?,
        signature: si.signature.as_bytes().to_vec(),
    })
}

/// Decodes TSTInfo (DER: it is signed as these bytes).
pub(crate) fn parse_tst_info(der: &[u8]) -> Result<TstInfo, TsaError> {
    const PART: &str = "TSTInfo";
    let t = TstInfoAsn::from_der(der).map_err(malformed(PART))?;
    // DER also means no DEFAULT value encoded (`ordering FALSE`, an
    // extension's `critical FALSE`): the decoded value encodes back to the
    // very bytes received, or the TSTInfo is not DER.
    if der::Encode::to_der(&t).ok().as_deref() != Some(der) {
        return Err(TsaError::Malformed {
            part: "TSTInfo (not DER)",
        });
    }
    let gen_time = parse_generalized_time(t.gen_time.0, "TSTInfo.genTime")?;
    let accuracy = match t.accuracy {
        Some(a) => {
            let acc = Accuracy {
                seconds: a.seconds.unwrap_or(0),
                millis: a.millis.unwrap_or(0),
                micros: a.micros.unwrap_or(0),
            };
            // millis and micros are INTEGER (1..999) when present.
            let in_range = |v: Option<u64>| v.is_none_or(|v| (1..=999).contains(&v));
            if !in_range(a.millis) || !in_range(a.micros) {
                return Err(TsaError::Malformed { part: "accuracy" });
            }
            Some(acc)
        }
        None => None,
    };
    let extensions: Vec<(String, bool)> = t
        .extensions
        .unwrap_or_default()
        .iter()
        .map(|e| (oid::text(&e.extn_id), e.critical))
        .collect();
    if extensions.len() > 32 {
        return Err(TsaError::LimitExceeded {
            what: "TSTInfo extensions",
            limit: 32,
        });
    }
    Ok(TstInfo {
        version: t.version,
        policy: oid::text(&t.policy),
        imprint_alg: AlgId::from_spki(&t.message_imprint.hash_algorithm)?,
        imprint: t.message_imprint.hashed_message.as_bytes().to_vec(),
        serial: t.serial_number.as_bytes().to_vec(),
        gen_time,
        accuracy,
        ordering: t.ordering,
        nonce: t.nonce.map(|n| n.as_bytes().to_vec()),
        tsa: match t.tsa {
            Some(name) => Some(super::der_util::raw_der(&name)?),
            None => None,
        },
        extensions,
    })
}

/// Decodes a SigningCertificate (v1, `v2 == false`) or SigningCertificateV2
/// attribute value into its certificate ids.
pub(crate) fn parse_ess(value: &der::Any, v2: bool) -> Result<Vec<EssCertId>, TsaError> {
    let part = if v2 {
        "signingCertificateV2"
    } else {
        "signingCertificate"
    };
    let der = super::der_util::raw_der(value)?;
    let issuer_serial = |is: Option<IssuerSerialAsn<'_>>| -> Result<_, TsaError> {
        Ok(match is {
            Some(is) => Some((
                is.issuer
                    .iter()
                    .map(super::der_util::raw_der)
                    .collect::<Result<Vec<_>, _>>()?,
                is.serial_number.as_bytes().to_vec(),
            )),
            None => None,
        })
    };
    let ids: Vec<EssCertId> = if v2 {
        let sc = SigningCertificateV2Asn::from_der(&der).map_err(malformed(part))?;
        check_ess_count(sc.certs.len())?;
        sc.certs
            .into_iter()
            .map(|id| {
                Ok(EssCertId {
                    hash_alg: match &id.hash_algorithm {
                        Some(a) => AlgId::from_spki(a)?,
                        None => AlgId {
                            oid: oid::SHA256.to_string(),
                            params: None,
                        },
                    },
                    hash: id.cert_hash.as_bytes().to_vec(),
                    issuer_serial: issuer_serial(id.issuer_serial)?,
                })
            })
            .collect::<Result<_, TsaError>>()?
    } else {
        let sc = SigningCertificateAsn::from_der(&der).map_err(malformed(part))?;
        check_ess_count(sc.certs.len())?;
        sc.certs
            .into_iter()
            .map(|id| {
                Ok(EssCertId {
                    hash_alg: AlgId {
                        oid: oid::SHA1.to_string(),
                        params: None,
                    },
                    hash: id.cert_hash.as_bytes().to_vec(),
                    issuer_serial: issuer_serial(id.issuer_serial)?,
                })
            })
            .collect::<Result<_, TsaError>>()?
    };
    if ids.is_empty() {
        return Err(TsaError::Malformed { part });
    }
    Ok(ids)
}

fn check_ess_count(n: usize) -> Result<(), TsaError> {
    if n > 16 {
        return Err(TsaError::LimitExceeded {
            what: "ESS certificate ids",
            limit: 16,
        });
    }
    Ok(())
}
