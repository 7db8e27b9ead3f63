//! Certificate path validation (RFC 5280 §6, the parts a time-stamp
//! verifier needs) at a chosen validation time.
//!
//! Paths run from the TSA signer to one of the caller's anchors. Embedded
//! and `--untrusted` certificates are path material only, never anchors; an
//! embedded certificate with the same name (or even the same key) as an
//! anchor is just another intermediate. Anchors are tried before
//! intermediates at every step, so a path stops at the first anchor that
//! signed the current certificate. The search is depth-first, bounded by
//! `Limits::max_path_len` and by a budget of signature checks. When no
//! path is found, the most specific failure seen is reported (a bad
//! signature or an expired intermediate rather than "no path").
//!
//! Not checked: revocation (CRL/OCSP), certificate policies, name
//! constraints (a critical nameConstraints extension is rejected as
//! unknown).

use super::cert::{Cert, KU_KEY_CERT_SIGN};
use super::crypto::verify_signature;
use super::error::TsaError;
use super::oid;
use super::time::Timestamp;
use super::{Limits, TrustStore};

/// A validated path: the certificates from the signer up to, and including,
/// the anchor.
pub(crate) struct ValidPath<'c> {
    pub certs: Vec<&'c Cert>,
}

struct Search<'c, 'o> {
    pool: &'o [&'c Cert],
    anchors: &'c [Cert],
    trust: &'o TrustStore,
    at: Timestamp,
    allow_sha1: bool,
    limits: &'o Limits,
    sig_checks: usize,
    best: Option<TsaError>,
}

/// Builds and validates a path from `signer` to one of `anchors`.
pub(crate) fn build<'c>(
    signer: &'c Cert,
    pool: &[&'c Cert],
    trust: &'c TrustStore,
    at: Timestamp,
    allow_sha1: bool,
    limits: &Limits,
) -> Result<ValidPath<'c>, TsaError> {
    signer.check_validity(at)?;
    let anchors = trust.anchors.as_slice();
    if let Some(a) = anchors.iter().find(|a| a.der == signer.der) {
        // The caller trusts the TSA certificate itself.
        return Ok(ValidPath { certs: vec![a] });
    }
    let mut search = Search {
        pool,
        anchors,
        trust,
        at,
        allow_sha1,
        limits,
        sig_checks: 0,
        best: None,
    };
    let mut path = vec![signer];
    match search.extend(&mut path) {
        Some(anchor) => {
            path.push(anchor);
            Ok(ValidPath { certs: path })
        }
        None => Err(search.best.unwrap_or_else(|| TsaError::NoPathToAnchor {
            subject: signer.subject_text(),
        })),
    }
}

impl<'c> Search<'c, '_> {
    fn note(&mut self, err: TsaError) {
        // Keep the first specific failure; later ones are usually echoes.
        if self.best.is_none() {
            self.best = Some(err);
        }
    }

    fn check_signature(&mut self, child: &Cert, issuer: &Cert) -> Result<(), TsaError> {
        if self.trust.seen_valid(child, issuer, self.allow_sha1) {
            return Ok(());
        }
        self.sig_checks += 1;
        if self.sig_checks > self.limits.max_signature_checks {
            return Err(TsaError::LimitExceeded {
                what: "certificate signature checks",
                limit: self.limits.max_signature_checks,
            });
        }
        verify_signature(
            &issuer.key,
            &child.sig_alg,
            None,
            child.tbs_bytes(),
            &child.signature,
            self.allow_sha1,
            "certificate",
        )
        .map_err(|e| match e {
            // A candidate issuer (same name) whose key is of another kind
            // than the signature did not sign it either.
            TsaError::BadSignature | TsaError::AlgorithmMismatch { .. } => {
                TsaError::BadCertSignature {
                    subject: child.subject_text(),
                }
            }
            other => other,
        })?;
        self.trust.remember_valid(child, issuer, self.allow_sha1);
        Ok(())
    }

    /// May `issuer` issue certificates, with `below` intermediates under it?
    fn issuer_constraints(issuer: &Cert, below: usize) -> Result<(), TsaError> {
        let not_ca = || TsaError::IssuerNotCa {
            subject: issuer.subject_text(),
        };
        match issuer.ext.basic_constraints {
            Some((true, Some(len))) if below as u64 > len => {
                return Err(TsaError::PathLenExceeded {
                    subject: issuer.subject_text(),
                });
            }
            Some((true, _)) => {}
            _ => return Err(not_ca()),
        }
        if let Some(ku) = issuer.ext.key_usage
            && ku & KU_KEY_CERT_SIGN == 0
        {
            return Err(not_ca());
        }
        Ok(())
    }

    /// Extends `path` (whose last element still needs an issuer) to an
    /// anchor; returns the anchor on success.
    fn extend(&mut self, path: &mut Vec<&'c Cert>) -> Option<&'c Cert> {
        let cur = *path.last()?;
        let below = path.len() - 1;
        for anchor in self.anchors {
            if anchor.subject != cur.issuer {
                continue;
            }
            let r = Self::issuer_constraints(anchor, below)
                .and_then(|()| self.check_signature(cur, anchor))
                .and_then(|()| anchor.check_validity(self.at));
            match r {
                Ok(()) => return Some(anchor),
                Err(e) => self.note(e),
            }
        }
        if path.len() >= self.limits.max_path_len {
            self.note(TsaError::LimitExceeded {
                what: "certificates in the path",
                limit: self.limits.max_path_len,
            });
            return None;
        }
        let pool = self.pool;
        for cand in pool {
            let cand: &'c Cert = cand;
            if cand.subject != cur.issuer || path.iter().any(|p| p.der == cand.der) {
                continue;
            }
            let r = self
                .check_intermediate(cand, below)
                .and_then(|()| self.check_signature(cur, cand));
            if let Err(e) = r {
                self.note(e);
                continue;
            }
            path.push(cand);
            if let Some(anchor) = self.extend(path) {
                return Some(anchor);
            }
            path.pop();
        }
        None
    }

    fn check_intermediate(&self, cand: &Cert, below: usize) -> Result<(), TsaError> {
        cand.check_validity(self.at)?;
        Self::issuer_constraints(cand, below)?;
        if let Some(oid) = cand.ext.unknown_critical.first() {
            return Err(TsaError::UnknownCriticalExtension {
                location: "intermediate certificate",
                oid: oid.clone(),
            });
        }
        // An EKU in a CA certificate constrains what it may issue for.
        if let Some((purposes, _)) = &cand.ext.eku
            && !purposes
                .iter()
                .any(|p| p == oid::KP_TIME_STAMPING || p == oid::ANY_EXTENDED_KEY_USAGE)
        {
            return Err(TsaError::IssuerEku {
                subject: cand.subject_text(),
            });
        }
        Ok(())
    }
}
