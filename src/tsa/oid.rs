//! Object identifiers used by RFC 3161, RFC 5652, RFC 5035/5816 and RFC 5280,
//! in dotted form.

pub(crate) const SIGNED_DATA: &str = "1.2.840.113549.1.7.2";
pub(crate) const CT_TSTINFO: &str = "1.2.840.113549.1.9.16.1.4";
pub(crate) const ATTR_CONTENT_TYPE: &str = "1.2.840.113549.1.9.3";
pub(crate) const ATTR_MESSAGE_DIGEST: &str = "1.2.840.113549.1.9.4";
pub(crate) const ATTR_SIGNING_CERT: &str = "1.2.840.113549.1.9.16.2.12";
pub(crate) const ATTR_SIGNING_CERT_V2: &str = "1.2.840.113549.1.9.16.2.47";

pub(crate) const SHA1: &str = "1.3.14.3.2.26";
pub(crate) const SHA256: &str = "2.16.840.1.101.3.4.2.1";
pub(crate) const SHA384: &str = "2.16.840.1.101.3.4.2.2";
pub(crate) const SHA512: &str = "2.16.840.1.101.3.4.2.3";

pub(crate) const RSA_ENCRYPTION: &str = "1.2.840.113549.1.1.1";
pub(crate) const SHA1_WITH_RSA: &str = "1.2.840.113549.1.1.5";
pub(crate) const SHA256_WITH_RSA: &str = "1.2.840.113549.1.1.11";
pub(crate) const SHA384_WITH_RSA: &str = "1.2.840.113549.1.1.12";
pub(crate) const SHA512_WITH_RSA: &str = "1.2.840.113549.1.1.13";
pub(crate) const RSASSA_PSS: &str = "1.2.840.113549.1.1.10";
pub(crate) const MGF1: &str = "1.2.840.113549.1.1.8";
pub(crate) const EC_PUBLIC_KEY: &str = "1.2.840.10045.2.1";
pub(crate) const ECDSA_SHA1: &str = "1.2.840.10045.4.1";
pub(crate) const ECDSA_SHA256: &str = "1.2.840.10045.4.3.2";
pub(crate) const ECDSA_SHA384: &str = "1.2.840.10045.4.3.3";
pub(crate) const ECDSA_SHA512: &str = "1.2.840.10045.4.3.4";
pub(crate) const P256: &str = "1.2.840.10045.3.1.7";
pub(crate) const P384: &str = "1.3.132.0.34";

pub(crate) const EXT_SUBJECT_KEY_ID: &str = "2.5.29.14";
pub(crate) const EXT_KEY_USAGE: &str = "2.5.29.15";
pub(crate) const EXT_SUBJECT_ALT_NAME: &str = "2.5.29.17";
pub(crate) const EXT_ISSUER_ALT_NAME: &str = "2.5.29.18";
pub(crate) const EXT_BASIC_CONSTRAINTS: &str = "2.5.29.19";
pub(crate) const EXT_CRL_DP: &str = "2.5.29.31";
pub(crate) const EXT_CERT_POLICIES: &str = "2.5.29.32";
pub(crate) const EXT_AUTHORITY_KEY_ID: &str = "2.5.29.35";
pub(crate) const EXT_EXTENDED_KEY_USAGE: &str = "2.5.29.37";
pub(crate) const EXT_AUTHORITY_INFO_ACCESS: &str = "1.3.6.1.5.5.7.1.1";

pub(crate) const KP_TIME_STAMPING: &str = "1.3.6.1.5.5.7.3.8";
pub(crate) const ANY_EXTENDED_KEY_USAGE: &str = "2.5.29.37.0";

macro_rules! known {
    ($($o:expr),* $(,)?) => {
        [$((der::asn1::ObjectIdentifier::new_unwrap($o), $o)),*]
    };
}

/// Dotted text of the OIDs above (and of common name attributes), so that
/// the OIDs every token carries are named without formatting their arcs.
static KNOWN: &[(der::asn1::ObjectIdentifier, &str)] = &known![
    SIGNED_DATA,
    CT_TSTINFO,
    ATTR_CONTENT_TYPE,
    ATTR_MESSAGE_DIGEST,
    ATTR_SIGNING_CERT,
    ATTR_SIGNING_CERT_V2,
    SHA1,
    SHA256,
    SHA384,
    SHA512,
    RSA_ENCRYPTION,
    SHA1_WITH_RSA,
    SHA256_WITH_RSA,
    SHA384_WITH_RSA,
    SHA512_WITH_RSA,
    RSASSA_PSS,
    MGF1,
    EC_PUBLIC_KEY,
    ECDSA_SHA1,
    ECDSA_SHA256,
    ECDSA_SHA384,
    ECDSA_SHA512,
    P256,
    P384,
    EXT_SUBJECT_KEY_ID,
    EXT_KEY_USAGE,
    EXT_SUBJECT_ALT_NAME,
    EXT_ISSUER_ALT_NAME,
    EXT_BASIC_CONSTRAINTS,
    EXT_CRL_DP,
    EXT_CERT_POLICIES,
    EXT_AUTHORITY_KEY_ID,
    EXT_EXTENDED_KEY_USAGE,
    EXT_AUTHORITY_INFO_ACCESS,
    KP_TIME_STAMPING,
    ANY_EXTENDED_KEY_USAGE,
    "2.5.4.3",
    "2.5.4.6",
    "2.5.4.7",
    "2.5.4.8",
    "2.5.4.10",
    "2.5.4.11",
    "2.5.4.5",
    "2.5.4.97",
    "1.2.840.113549.1.9.1",
];

/// An OID in dotted form.
pub(crate) fn text(oid: &der::asn1::ObjectIdentifier) -> String {
    match KNOWN.iter().find(|(k, _)| k == oid) {
        Some((_, s)) => (*s).to_string(),
        None => oid.to_string(),
    }
}
