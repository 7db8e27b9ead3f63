//! Why a time-stamp token was rejected. Every variant is a property of the
//! evidence (or of its relation to what the caller expected), never an I/O
//! or network failure; each has a stable snake_case code (see docs/TSA.md).

/// A time-stamp response or token failed verification.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TsaError {
    /// The bytes do not decode as the named structure.
    #[error("malformed {part}")]
    Malformed { part: &'static str },
    /// Input larger than the verifier accepts.
    #[error("{what} is {size} bytes, over the limit of {limit}")]
    TooLarge {
        what: &'static str,
        size: usize,
        limit: usize,
    },
    /// A work bound was crossed (certificates, path length, attributes).
    #[error("too many {what} (limit {limit})")]
    LimitExceeded { what: &'static str, limit: usize },
    /// The TSA answered with a status other than granted/grantedWithMods.
    #[error("TSA status {status} ({}){}", status_name(*.status), status_text_suffix(.status_text))]
    StatusRejected {
        status: u64,
        status_text: Vec<String>,
        fail_info: Vec<&'static str>,
    },
    /// The status says granted but no token is present.
    #[error("response status is granted but carries no time-stamp token")]
    TokenMissing,
    /// The ContentInfo is not id-signedData.
    #[error("content type {content_type} is not signedData")]
    NotSignedData { content_type: String },
    /// eContentType is not id-ct-TSTInfo.
    #[error("encapsulated content type {content_type} is not id-ct-TSTInfo")]
    NotTstInfo { content_type: String },
    /// The encapsulated content is absent (detached signature).
    #[error("the TSTInfo content is absent")]
    ContentMissing,
    /// Not exactly one SignerInfo.
    #[error("{count} SignerInfos; a time-stamp token has exactly one")]
    SignerCount { count: usize },
    /// SignerInfo version does not match its sid form (RFC 5652 §5.3).
    #[error("SignerInfo version {version} does not match its {sid} sid")]
    SignerInfoVersion { version: u64, sid: &'static str },
    /// No certificate matches the SignerInfo sid.
    #[error("no certificate matches the SignerInfo sid")]
    SignerNotFound,
    /// The SignerInfo carries no signed attributes.
    #[error("the SignerInfo has no signed attributes")]
    SignedAttrsMissing,
    /// The SignerInfo digest algorithm is not listed in SignedData.digestAlgorithms.
    #[error("SignerInfo digest algorithm {oid} is not listed in SignedData.digestAlgorithms")]
    DigestAlgorithmNotListed { oid: String },
    /// An attribute occurs twice, or with other than one value.
    #[error("signed attribute {oid} occurs more than once or has other than one value")]
    AttributeNotSingle { oid: String },
    /// The content-type attribute is missing.
    #[error("the content-type signed attribute is missing")]
    ContentTypeAttrMissing,
    /// The content-type attribute differs from eContentType.
    #[error("content-type attribute {attribute} differs from eContentType {content_type}")]
    ContentTypeMismatch {
        attribute: String,
        content_type: String,
    },
    /// The message-digest attribute is missing.
    #[error("the message-digest signed attribute is missing")]
    MessageDigestMissing,
    /// The message-digest attribute is not the hash of the TSTInfo.
    #[error("the message-digest attribute does not match the hash of the TSTInfo")]
    MessageDigestMismatch,
    /// An algorithm the verifier does not implement.
    #[error("unsupported {usage} algorithm {oid}")]
    UnsupportedAlgorithm { usage: &'static str, oid: String },
    /// SHA-1 used where it is only accepted with `allow_sha1`.
    #[error("SHA-1 {usage} rejected (use --allow-sha1 to accept it)")]
    Sha1NotAllowed { usage: &'static str },
    /// The signature algorithm does not fit the key or the digest.
    #[error("the {usage} signature algorithm does not match the key or digest")]
    AlgorithmMismatch { usage: &'static str },
    /// The public key does not decode.
    #[error("cannot decode the public key of the {usage} certificate")]
    BadPublicKey { usage: &'static str },
    /// The SignerInfo signature is wrong.
    #[error("the SignerInfo signature does not verify")]
    BadSignature,
    /// Neither signingCertificate nor signingCertificateV2 is present.
    #[error("no ESS signingCertificate or signingCertificateV2 attribute")]
    EssMissing,
    /// An ESSCertID does not match the certificate it must identify.
    #[error("ESS certificate id {index} does not match the {what}")]
    EssMismatch { index: usize, what: &'static str },
    /// TSTInfo version is not 1.
    #[error("TSTInfo version {version}, expected 1")]
    TstInfoVersion { version: u64 },
    /// The imprint algorithm differs from the expected one.
    #[error("imprint algorithm {found}, expected {expected}")]
    ImprintAlgorithmMismatch { expected: String, found: String },
    /// The imprint AlgorithmIdentifier has parameters other than NULL.
    #[error("the imprint AlgorithmIdentifier has parameters other than NULL")]
    ImprintParameters,
    /// The imprint is not the hash of the data.
    #[error("the message imprint does not match the data")]
    ImprintMismatch,
    /// A nonce was expected and the token has none.
    #[error("a nonce was expected but the token has none")]
    NonceMissing,
    /// The nonce differs from the expected one.
    #[error("nonce {found} differs from the expected {expected}")]
    NonceMismatch { expected: String, found: String },
    /// The policy differs from the expected one.
    #[error("policy {found} differs from the expected {expected}")]
    PolicyMismatch { expected: String, found: String },
    /// TSTInfo.tsa does not name the signer.
    #[error("the TSTInfo tsa name does not match the signer certificate")]
    TsaNameMismatch,
    /// A critical extension the verifier does not understand.
    #[error("unknown critical extension {oid} in {location}")]
    UnknownCriticalExtension { location: &'static str, oid: String },
    /// The signer certificate has no extendedKeyUsage.
    #[error("the signer certificate has no extendedKeyUsage")]
    EkuMissing,
    /// The signer's extendedKeyUsage is not marked critical (RFC 3161 §2.3).
    #[error("the signer certificate's extendedKeyUsage is not critical")]
    EkuNotCritical,
    /// The signer's extendedKeyUsage is not exactly id-kp-timeStamping.
    #[error("the signer certificate's extendedKeyUsage is not exactly id-kp-timeStamping")]
    EkuNotTimeStamping,
    /// The signer certificate is a CA.
    #[error("the signer certificate is a CA certificate")]
    SignerIsCa,
    /// The signer's keyUsage allows more than signing.
    #[error("the signer certificate's keyUsage allows more than digitalSignature/nonRepudiation")]
    SignerKeyUsage,
    /// A certificate was not yet valid at the validation time.
    #[error("certificate {subject} is not valid before {not_before} (validation time {at})")]
    CertNotYetValid {
        subject: String,
        not_before: String,
        at: String,
    },
    /// A certificate had expired at the validation time.
    #[error("certificate {subject} expired at {not_after} (validation time {at})")]
    CertExpired {
        subject: String,
        not_after: String,
        at: String,
    },
    /// A certificate does not decode.
    #[error("malformed certificate ({part})")]
    BadCertificate { part: &'static str },
    /// An issuer on the path is not allowed to issue certificates.
    #[error("issuer {subject} is not a CA (basicConstraints/keyUsage)")]
    IssuerNotCa { subject: String },
    /// An issuer's extendedKeyUsage excludes time stamping.
    #[error("issuer {subject} has an extendedKeyUsage without timeStamping")]
    IssuerEku { subject: String },
    /// A pathLenConstraint was exceeded.
    #[error("pathLenConstraint of {subject} exceeded")]
    PathLenExceeded { subject: String },
    /// A certificate's signature does not verify under its issuer's key.
    #[error("signature on certificate {subject} does not verify")]
    BadCertSignature { subject: String },
    /// No path from the signer to a caller-supplied anchor.
    #[error("no certificate path from the signer {subject} to a trusted anchor")]
    NoPathToAnchor { subject: String },
    /// The response does not answer the request (client side).
    #[error("the response does not match the request: {what}")]
    ResponseMismatch { what: &'static str },
}

fn status_name(status: u64) -> &'static str {
    match status {
        0 => "granted",
        1 => "grantedWithMods",
        2 => "rejection",
        3 => "waiting",
        4 => "revocationWarning",
        5 => "revocationNotification",
        _ => "unknown",
    }
}

fn status_text_suffix(text: &[String]) -> String {
    if text.is_empty() {
        String::new()
    } else {
        format!(": {}", text.join("; "))
    }
}

impl TsaError {
    /// A stable snake_case reason code.
    pub fn code(&self) -> &'static str {
        use TsaError::*;
        match self {
            Malformed { .. } => "malformed_token",
            TooLarge { .. } => "too_large",
            LimitExceeded { .. } => "limit_exceeded",
            StatusRejected { .. } => "status_rejected",
            TokenMissing => "token_missing",
            NotSignedData { .. } => "not_signed_data",
            NotTstInfo { .. } => "econtent_type_not_tstinfo",
            ContentMissing => "content_missing",
            SignerCount { .. } => "signer_count",
            SignerInfoVersion { .. } => "signer_info_version",
            SignerNotFound => "signer_not_found",
            SignedAttrsMissing => "signed_attrs_missing",
            AttributeNotSingle { .. } => "attribute_not_single",
            DigestAlgorithmNotListed { .. } => "digest_algorithm_not_listed",
            ContentTypeAttrMissing => "content_type_attr_missing",
            ContentTypeMismatch { .. } => "content_type_mismatch",
            MessageDigestMissing => "message_digest_missing",
            MessageDigestMismatch => "message_digest_mismatch",
            UnsupportedAlgorithm { .. } => "unsupported_algorithm",
            Sha1NotAllowed { .. } => "sha1_not_allowed",
            AlgorithmMismatch { .. } => "algorithm_mismatch",
            BadPublicKey { .. } => "bad_public_key",
            BadSignature => "bad_signature",
            EssMissing => "ess_missing",
            EssMismatch { .. } => "ess_mismatch",
            TstInfoVersion { .. } => "tstinfo_version",
            ImprintAlgorithmMismatch { .. } => "imprint_algorithm_mismatch",
            ImprintParameters => "imprint_parameters",
            ImprintMismatch => "imprint_mismatch",
            NonceMissing => "nonce_missing",
            NonceMismatch { .. } => "nonce_mismatch",
            PolicyMismatch { .. } => "policy_mismatch",
            TsaNameMismatch => "tsa_name_mismatch",
            UnknownCriticalExtension { .. } => "unknown_critical_extension",
            EkuMissing => "eku_missing",
            EkuNotCritical => "eku_not_critical",
            EkuNotTimeStamping => "eku_not_timestamping",
            SignerIsCa => "signer_is_ca",
            SignerKeyUsage => "signer_key_usage",
            CertNotYetValid { .. } => "cert_not_yet_valid",
            CertExpired { .. } => "cert_expired",
            BadCertificate { .. } => "bad_certificate",
            IssuerNotCa { .. } => "issuer_not_ca",
            IssuerEku { .. } => "issuer_eku",
            PathLenExceeded { .. } => "path_len_exceeded",
            BadCertSignature { .. } => "bad_cert_signature",
            NoPathToAnchor { .. } => "no_path_to_anchor",
            ResponseMismatch { .. } => "response_mismatch",
        }
    }
}
