//! TimeStampReq (RFC 3161 §2.4.1) and the check that a response answers it.

use der::Encode;
use der::asn1::{AnyRef, ObjectIdentifier, OctetStringRef, UintRef};
use spki::AlgorithmIdentifierRef;

use super::crypto::HashAlg;
use super::error::TsaError;
use super::token::{self, Sid};
use super::{Expected, ExpectedImprint, Limits, token_der};

/// Why a time-stamp request cannot be made as asked.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RequestProblem {
    /// The imprint's length is not the algorithm's digest length.
    #[error("a {alg} digest is {expected} bytes, got {found}")]
    DigestLength {
        alg: HashAlg,
        expected: usize,
        found: usize,
    },
    /// The requested policy is not a dotted OID.
    #[error("the policy {policy:?} is not an OID")]
    PolicyNotOid { policy: String },
    /// The system could not supply randomness for the nonce.
    #[error("no randomness for the nonce: {0}")]
    NoRandomness(getrandom::Error),
}

impl RequestProblem {
    /// Stable reason code.
    pub fn code(&self) -> &'static str {
        match self {
            RequestProblem::DigestLength { .. } => "bad_digest_length",
            RequestProblem::PolicyNotOid { .. } => "invalid_oid",
            RequestProblem::NoRandomness(_) => "no_randomness",
        }
    }
}

/// A time-stamp request, encoded, with what it asked for.
#[derive(Clone, Debug)]
pub struct TimeStampRequest {
    der: Vec<u8>,
    alg: HashAlg,
    imprint: Vec<u8>,
    nonce: Option<Vec<u8>>,
    policy: Option<String>,
    cert_req: bool,
}

impl TimeStampRequest {
    /// Builds a request for `imprint` (a digest made with `alg`), with a
    /// random 128-bit nonce when `nonce` is true. Fails when the imprint
    /// length does not fit the algorithm, the policy is not an OID, or the
    /// system has no randomness.
    pub fn new(
        alg: HashAlg,
        imprint: Vec<u8>,
        policy: Option<String>,
        nonce: bool,
        cert_req: bool,
    ) -> Result<Self, crate::Error> {
        if imprint.len() != alg.output_len() {
            return Err(crate::Error::TsaRequest(RequestProblem::DigestLength {
                alg,
                expected: alg.output_len(),
                found: imprint.len(),
            }));
        }
        let nonce = if nonce {
            let mut n = [0u8; 16];
            getrandom::fill(&mut n)
                .map_err(|e| crate::Error::TsaRequest(RequestProblem::NoRandomness(e)))?;
            n[0] &= 0x7f;
            n[0] |= 0x40; // keep the full width
            Some(n.to_vec())
        } else {
            None
        };
        let der = encode(alg, &imprint, policy.as_deref(), nonce.as_deref(), cert_req)?;
        Ok(TimeStampRequest {
            der,
            alg,
            imprint,
            nonce,
            policy,
            cert_req,
        })
    }

    /// The DER TimeStampReq.
    pub fn der(&self) -> &[u8] {
        &self.der
    }

    /// The nonce sent, unsigned big-endian.
    pub fn nonce(&self) -> Option<&[u8]> {
        self.nonce.as_deref()
    }

    /// What a verifier must expect of the response to this request.
    pub fn expected(&self) -> Expected {
        Expected {
            imprint: ExpectedImprint::Digest {
                alg: self.alg,
                digest: self.imprint.clone(),
            },
            nonce: self.nonce.clone(),
            policy: self.policy.clone(),
        }
    }

    /// Checks that `response` answers this request (RFC 3161 §2.4.2):
    /// status granted, a token present, same imprint, same nonce, the
    /// requested policy, and the signer certificate when it was asked for.
    /// Does not check signatures or trust: see [`super::verify_token`].
    pub fn check_response(&self, response: &[u8]) -> Result<(), TsaError> {
        let limits = Limits::default();
        let der = token_der(response, &limits)?;
        let parsed = token::parse(&der, &limits)?;
        let status = parsed.status.ok_or(TsaError::ResponseMismatch {
            what: "not a TimeStampResp",
        })?;
        if status.status > 1 {
            return Err(TsaError::StatusRejected {
                status: status.status,
                status_text: status.text,
                fail_info: status.fail_info,
            });
        }
        let tok = parsed.token.ok_or(TsaError::TokenMissing)?;
        let tst = token::parse_tst_info(tok.econtent.as_deref().ok_or(TsaError::ContentMissing)?)?;
        if HashAlg::from_oid(&tst.imprint_alg.oid) != Some(self.alg) || tst.imprint != self.imprint
        {
            return Err(TsaError::ResponseMismatch {
                what: "message imprint",
            });
        }
        if let Some(n) = &self.nonce {
            match &tst.nonce {
                None => return Err(TsaError::NonceMissing),
                Some(got) if magnitude(got) != magnitude(n) => {
                    return Err(TsaError::NonceMismatch {
                        expected: crate::hex::encode(n),
                        found: crate::hex::encode(got),
                    });
                }
                Some(_) => {}
            }
        }
        if let Some(p) = &self.policy
            && *p != tst.policy
        {
            return Err(TsaError::PolicyMismatch {
                expected: p.clone(),
                found: tst.policy,
            });
        }
        if self.cert_req {
            let certs: Vec<super::cert::Cert> = tok
                .certs
                .iter()
                .map(|d| super::cert::Cert::from_der(d))
                .collect::<Result<_, _>>()?;
            let found = tok.signer_infos.first().is_some_and(|si| {
                certs.iter().any(|c| match &si.sid {
                    Sid::IssuerSerial { issuer, serial } => {
                        c.issuer == *issuer && c.serial == *serial
                    }
                    Sid::SubjectKeyId(k) => c.ext.subject_key_id.as_ref() == Some(k),
                })
            });
            if !found {
                return Err(TsaError::ResponseMismatch {
                    what: "certReq was set but the signer certificate is not included",
                });
            }
        }
        Ok(())
    }
}

/// Unsigned big-endian bytes without their leading zeros, so that two
/// encodings of one nonce compare equal.
fn magnitude(v: &[u8]) -> &[u8] {
    let n = v.iter().take_while(|b| **b == 0).count();
    &v[n..]
}

/// `MessageImprint ::= SEQUENCE { hashAlgorithm AlgorithmIdentifier,
/// hashedMessage OCTET STRING }` (RFC 3161 §2.4.1).
#[derive(der::Sequence)]
struct MessageImprint<'a> {
    hash_algorithm: AlgorithmIdentifierRef<'a>,
    hashed_message: &'a OctetStringRef,
}

/// `TimeStampReq` (RFC 3161 §2.4.1). `extensions` is never sent.
#[derive(der::Sequence)]
struct TimeStampReq<'a> {
    version: u8,
    message_imprint: MessageImprint<'a>,
    #[asn1(optional = "true")]
    req_policy: Option<ObjectIdentifier>,
    #[asn1(optional = "true")]
    nonce: Option<UintRef<'a>>,
    #[asn1(default = "Default::default")]
    cert_req: bool,
    #[asn1(context_specific = "0", tag_mode = "IMPLICIT", optional = "true")]
    extensions: Option<x509_cert::ext::Extensions>,
}

/// The DER TimeStampReq for these fields.
fn encode(
    alg: HashAlg,
    imprint: &[u8],
    policy: Option<&str>,
    nonce: Option<&[u8]>,
    cert_req: bool,
) -> Result<Vec<u8>, crate::Error> {
    // Only the constant hash OIDs of `HashAlg` and bounded lengths reach
    // these: a failure is an internal error, reported as a malformed request.
    fn internal<E>(_: E) -> crate::Error {
        crate::Error::Tsa(TsaError::Malformed {
            part: "TimeStampReq",
        })
    }
    let req_policy = policy
        .map(|p| {
            ObjectIdentifier::new(p).map_err(|_| {
                crate::Error::TsaRequest(RequestProblem::PolicyNotOid {
                    policy: p.to_owned(),
                })
            })
        })
        .transpose()?;
    let req = TimeStampReq {
        version: 1,
        message_imprint: MessageImprint {
            hash_algorithm: AlgorithmIdentifierRef {
                oid: ObjectIdentifier::new(alg.oid()).map_err(internal)?,
                parameters: Some(AnyRef::NULL),
            },
            hashed_message: OctetStringRef::new(imprint).map_err(internal)?,
        },
        req_policy,
        nonce: nonce.map(UintRef::new).transpose().map_err(internal)?,
        cert_req,
        extensions: None,
    };
    req.to_der().map_err(internal)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Vectors produced by the hand-written DER builder this encoder
    /// replaced: the bytes must not change.
    #[test]
    fn encoding_matches_the_reference_vectors() {
        let hex = |alg, imprint: &[u8], policy, nonce, cert_req| {
            crate::hex::encode(&encode(alg, imprint, policy, nonce, cert_req).unwrap())
        };
        let nonce: Vec<u8> = std::iter::once(0x40).chain(1..16).collect();
        let imprint: Vec<u8> = (0..32).collect();
        assert_eq!(
            hex(
                HashAlg::Sha256,
                &imprint,
                Some("1.3.6.1.4.1.4146.2.3"),
                Some(&nonce),
                true
            ),
            "30560201013031300d060960864801650304020105000420000102030405060708090a0b0c0d0e0f\
             101112131415161718191a1b1c1d1e1f06092b06010401a03202030210400102030405060708090a\
             0b0c0d0e0f0101ff"
        );
        assert_eq!(
            hex(HashAlg::Sha512, &[0xab; 64], None, None, false),
            format!(
                "30560201013051300d060960864801650304020305000440{}",
                "ab".repeat(64)
            )
        );
        assert_eq!(
            hex(HashAlg::Sha1, &[0x11; 20], Some("1.2.3.4.1"), None, true),
            format!(
                "302f0201013021300906052b0e03021a05000414{}06042a0304010101ff",
                "11".repeat(20)
            )
        );
        // const-oid takes a second arc of at most 39 under every root; the
        // hand-written encoder also took "2.999.1" (encoded 06 03 88 37 01).
        assert!(matches!(
            encode(HashAlg::Sha1, &[0x11; 20], Some("2.999.1"), None, true),
            Err(crate::Error::TsaRequest(
                RequestProblem::PolicyNotOid { .. }
            ))
        ));
        assert_eq!(
            hex(
                HashAlg::Sha256,
                &[0xff; 32],
                None,
                Some(&[0x7f, 0xff, 0, 1]),
                false
            ),
            format!(
                "303c0201013031300d060960864801650304020105000420{}02047fff0001",
                "ff".repeat(32)
            )
        );
        // A nonce with its high bit set gets a sign octet; leading zeros go.
        assert!(
            hex(
                HashAlg::Sha256,
                &[0; 32],
                None,
                Some(&[0, 0, 0x80, 1]),
                false
            )
            .ends_with("0203008001")
        );
        assert!(matches!(
            encode(HashAlg::Sha256, &[0; 32], Some("not an oid"), None, false),
            Err(crate::Error::TsaRequest(
                RequestProblem::PolicyNotOid { .. }
            ))
        ));
    }
}
