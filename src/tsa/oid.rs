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
