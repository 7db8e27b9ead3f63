//! Exports of a stamp for verifiers other than vouch (docs/FORMAT.md
//! §16.8): the run as a Sigstore bundle v0.3, one file as a minisign
//! signature. vouch's own receipt stays the primary evidence; an export
//! carries what its format can say and no more.

use super::entry::Entry;
use super::receipt::{Covers, Header};
use super::sigstore::{self, Bundle};
use crate::note::SignerKey;
use crate::{Error, Result};
use base64::Engine;
use std::io::Read;
use std::path::Path;

/// Why a run cannot be exported as asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExportProblem {
    #[error(
        "a Sigstore bundle needs a time-stamp token (--tsa): without a transparency log entry it is a verifier's only time source"
    )]
    NoToken,
    #[error("the token covers the {0} signature, not the one the bundle carries")]
    TokenCovers(&'static str),
    #[error("the receipt's {0} is not usable")]
    Malformed(&'static str),
    #[error("{0}")]
    Sigstore(sigstore::SigstoreError),
}

fn usage(e: ExportProblem) -> Error {
    Error::Stamp(super::StampProblem::Export(e))
}

/// The run's Sigstore bundle: the statement's DSSE envelope with the
/// signature the token covers (the P-256 one when the run has one, else
/// the Ed25519 one), and the token (TimeStampResp). The key hint is the
/// base64 SHA-256 of the key's SPKI DER.
pub fn sigstore_bundle(header: &Header, stamping_key: &[u8; 32]) -> Result<Bundle> {
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.decode(s).ok();
    let t = header
        .timestamp
        .as_ref()
        .ok_or_else(|| usage(ExportProblem::NoToken))?;
    let token = b64(&t.token).ok_or_else(|| usage(ExportProblem::Malformed("token")))?;
    let payload = header
        .envelope
        .decode_payload()
        .map_err(|_| usage(ExportProblem::Malformed("payload")))?;
    let (sig, spki) = match (&header.sigstore, t.covers) {
        (Some(s), Covers::Sigstore) => {
            let sig = b64(&s.sig).ok_or_else(|| usage(ExportProblem::Malformed("sigstore")))?;
            let spki = super::ecdsa_key::spki_from_pem(s.public_key.as_bytes())
                .map_err(|_| usage(ExportProblem::Malformed("sigstore public key")))?;
            (sig, spki)
        }
        (None, Covers::Signature) => {
            let sig = header
                .envelope
                .signatures
                .first()
                .and_then(|s| s.decode_sig(0).ok())
                .ok_or_else(|| usage(ExportProblem::Malformed("signature")))?;
            (sig, sigstore::ed25519_spki_der(stamping_key))
        }
        (Some(_), Covers::Signature) => return Err(usage(ExportProblem::TokenCovers("Ed25519"))),
        (None, Covers::Sigstore) => return Err(usage(ExportProblem::TokenCovers("Sigstore"))),
    };
    let hint = sigstore::key_hint(&spki);
    sigstore::bundle(
        &header.envelope.payload_type,
        &payload,
        &sig,
        &hint,
        &hint,
        &token,
    )
    .map_err(|e| usage(ExportProblem::Sigstore(e)))
}

/// The trusted comment of a minisign export: the stamp it comes from, on
/// one line (paths shown escaped, so no control character gets in).
pub fn minisign_comment(
    header_claims: &super::statement::Predicate,
    entry: &Entry,
    gen_time: Option<&str>,
) -> String {
    let mut c = format!(
        "vouch-stamp root={} file={} sha256={} signer={}",
        header_claims.root,
        entry.display().replace(' ', "\\x20"),
        crate::hex::encode(&entry.sha256),
        header_claims.signer
    );
    if let Some(l) = &header_claims.log {
        c.push_str(&format!(" log={} seq={}", l.origin, l.seq));
    }
    match gen_time {
        Some(t) => c.push_str(&format!(" tsa_time={t}")),
        None => c.push_str(&format!(" signed_at={}", header_claims.signed_at)),
    }
    c
}

/// Signs the file at `file` (which must still have the stamped bytes) as
/// minisign does, with the stamping key, and returns the `.minisig` text.
pub fn minisign_signature(
    key: &SignerKey,
    file: &Path,
    entry: &Entry,
    trusted_comment: &str,
) -> Result<String> {
    if entry.kind != super::entry::EntryType::File {
        return Err(Error::Stamp(super::StampProblem::NoContent {
            path: entry.display(),
        }));
    }
    // Read once: hash and sign the same bytes, and refuse if they are not
    // the stamped ones.
    struct Tee<R> {
        inner: R,
        ctx: ring::digest::Context,
        n: u64,
    }
    impl<R: Read> Read for Tee<R> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let k = self.inner.read(buf)?;
            self.ctx.update(&buf[..k]);
            self.n += k as u64;
            Ok(k)
        }
    }
    let f = crate::fs::open_regular(file)?;
    let mut tee = Tee {
        inner: f,
        ctx: ring::digest::Context::new(&ring::digest::SHA256),
        n: 0,
    };
    let sig = super::minisign::sign(
        key,
        &mut tee,
        trusted_comment,
        "signature from vouch stamp extract",
    )
    .map_err(|e| match e {
        super::minisign::MinisignError::Read(io) => Error::io(file, io),
        other => Error::Stamp(super::StampProblem::Minisign(other)),
    })?;
    if tee.n != entry.size || tee.ctx.finish().as_ref() != entry.sha256 {
        return Err(Error::Stamp(super::StampProblem::NotTheStampedBytes {
            path: file.to_path_buf(),
        }));
    }
    Ok(sig)
}

/// The Sigstore `TrustedRoot` for the run's bundle: one time-stamp
/// authority whose chain is the token's signer certificate followed by the
/// root of `roots_pem` (the `--tsa-ca` file) that issued it, as cosign's
/// `--trusted-root` and `@sigstore/verify` take it. The token is verified
/// against those roots first. A TSA whose certificate an intermediate
/// issued is refused (its chain is not in the token's verified path here).
pub fn sigstore_trusted_root(
    header: &Header,
    roots_pem: &[u8],
    roots: &crate::tsa::TrustStore,
) -> Result<sigstore::TrustedRoot> {
    use crate::tsa::cert::Cert;
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.decode(s).ok();
    let t = header
        .timestamp
        .as_ref()
        .ok_or_else(|| usage(ExportProblem::NoToken))?;
    let token = b64(&t.token).ok_or_else(|| usage(ExportProblem::Malformed("token")))?;
    let covered = match t.covers {
        Covers::Sigstore => header.sigstore.as_ref().and_then(|s| b64(&s.sig)),
        Covers::Signature => header
            .envelope
            .signatures
            .first()
            .and_then(|s| s.decode_sig(0).ok()),
    }
    .ok_or_else(|| usage(ExportProblem::Malformed("signature")))?;
    let verified = crate::tsa::verify_data_token(&token, &covered, roots)?;
    let signer_der = verified.tsa_cert_der().to_vec();
    let signer = Cert::from_der(&signer_der)?;
    let issuer = crate::tsa::pem_blocks(roots_pem, "CERTIFICATE")
        .unwrap_or_default()
        .into_iter()
        .find(|der| Cert::from_der(der).is_ok_and(|c| c.subject == signer.issuer))
        .ok_or_else(|| {
            Error::Stamp(super::StampProblem::TsaIssuer {
                subject: signer.subject_text(),
            })
        })?;
    let mut chain = crate::pem::encode("CERTIFICATE", &signer_der);
    chain.push_str(&crate::pem::encode("CERTIFICATE", &issuer));
    sigstore::trusted_root(chain.as_bytes(), &t.url, None, None)
        .map_err(|e| usage(ExportProblem::Sigstore(e)))
}

/// Where `vouch stamp --sigstore` writes: the bundle, and optionally the
/// TrustedRoot naming the TSA (with the `--tsa-ca` PEM it is built from).
pub struct SigstoreOutputs<'a> {
    pub bundle: &'a Path,
    pub trusted_root: Option<(&'a Path, &'a Path, &'a crate::tsa::TrustStore)>,
}

/// Writes the run's Sigstore bundle (and TrustedRoot) as pretty JSON.
pub fn write_sigstore(
    header: &Header,
    stamping_key: &[u8; 32],
    out: &SigstoreOutputs<'_>,
) -> Result<()> {
    let bundle = sigstore_bundle(header, stamping_key)?;
    write_json(out.bundle, "the Sigstore bundle", &bundle)?;
    if let Some((path, ca, roots)) = out.trusted_root {
        let pem = crate::fs::read_bounded(ca, crate::tsa::MAX_CERTS_BYTES)?;
        let root = sigstore_trusted_root(header, &pem, roots)?;
        write_json(path, "the Sigstore trusted root", &root)?;
    }
    Ok(())
}

fn write_json(path: &Path, what: &'static str, value: &impl serde::Serialize) -> Result<()> {
    let text =
        serde_json::to_string_pretty(value).map_err(|source| Error::Serialize { what, source })?;
    std::fs::write(path, format!("{text}\n")).map_err(|e| Error::io(path, e))
}
