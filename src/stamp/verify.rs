//! `vouch stamp verify`: what a stamp receipt (or an extracted per-file
//! proof) proves about the files under a base directory. See the module
//! docs of [`super`] for what is and is not proven.

use super::entry::{Entry, EntryType};
use super::error::{StampError, StampProblem};
use super::receipt::{self, Covers, Header, LeftOutJson};
use super::statement::{self, PAYLOAD_TYPE, Statement, SubjectMode};
use super::walk;
use crate::chain::TrustedKeys;
use crate::dsse;
use crate::files::FileProblem;
use crate::files::path;
use crate::tsa::TrustStore;
use crate::{Error, Result};
use base64::Engine;
use rayon::prelude::*;
use serde::Serialize;
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

pub struct StampVerifyOptions<'a> {
    /// The base directory the recorded paths are resolved against
    /// (canonical).
    pub base: PathBuf,
    /// Only these PATHs (files or directories, as given); empty: all.
    pub paths: Vec<PathBuf>,
    pub keys: &'a TrustedKeys,
    pub tsa_roots: Option<&'a TrustStore>,
    /// List every file in the report, not only those that are not `ok`
    /// (which are always counted in the summary). Off by default, so that
    /// verifying a million files does not hold a million report rows.
    pub list_ok: bool,
}

/// The result of one check of the receipt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum Check {
    Verified { detail: String },
    NotChecked { code: &'static str, why: String },
    Failed { code: &'static str, reason: String },
}

impl Check {
    fn failed(e: StampError) -> Self {
        Check::Failed {
            code: e.code(),
            reason: e.to_string(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Piece {
    pub name: &'static str,
    #[serde(flatten)]
    pub check: Check,
}

/// What became of one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FileStatus {
    /// The file has the stamped bytes (a link, the stamped target).
    Ok,
    /// It is there with other content, size, type or target.
    Modified,
    /// It is not there.
    Missing,
    /// It is in a stamped directory and was not stamped.
    Extra,
    /// A PATH given to verify that the receipt does not hold.
    NotStamped,
    /// It could not be checked (unreadable). A file that changed while it
    /// was read is [`FileStatus::Modified`].
    Error,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileReport {
    /// As people see it (escaped).
    pub path: String,
    /// The raw bytes, base64, when the path is not UTF-8.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path_b64: Option<String>,
    pub status: FileStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    pub ok: u64,
    pub modified: u64,
    pub missing: u64,
    pub extra: u64,
    pub not_stamped: u64,
    pub errors: u64,
}

/// What the verified statement says: only present when its signature
/// counted, so every field here comes from signed bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SignedClaims {
    pub signer: String,
    pub root: String,
    pub count: u64,
    pub leaf_scheme: String,
    /// The signer's clock: a claim, not a proven time.
    pub signed_at: String,
    pub meta: BTreeMap<String, String>,
    pub left_out: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log: Option<statement::LogRef>,
}

/// The time a verified token proves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TrustedTime {
    pub gen_time: String,
    pub tsa: String,
    pub serial: String,
    pub policy: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Every check that was made passed, and every file checked is `ok`.
    Verified,
    /// Evidence failed a check, or a file does not match.
    Rejected,
    /// Nothing was rejected, but some files could not be checked.
    Incomplete,
}

#[derive(Debug, Clone, Serialize)]
pub struct StampVerifyReport {
    pub receipt: String,
    pub verdict: Verdict,
    /// `run` for a run's receipt, `extract` for a per-file proof.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<&'static str>,
    pub checks: Vec<Piece>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub claims: Option<SignedClaims>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trusted_time: Option<TrustedTime>,
    pub summary: Summary,
    pub files: Vec<FileReport>,
    /// What the signer reported it could not stamp: the list is not signed
    /// (its length must match the signed count, `claims.left_out`).
    pub left_out: Vec<LeftOutJson>,
    /// What this verification did not prove, in plain words.
    pub not_proven: Vec<String>,
}

impl StampVerifyReport {
    /// 0 verified, 1 rejected (wins), 2 files could not be checked.
    pub fn exit_code(&self) -> u8 {
        match self.verdict {
            Verdict::Verified => 0,
            Verdict::Rejected => 1,
            Verdict::Incomplete => 2,
        }
    }

    fn new(receipt: &Path) -> Self {
        StampVerifyReport {
            receipt: receipt.display().to_string(),
            verdict: Verdict::Rejected,
            kind: None,
            checks: Vec::new(),
            claims: None,
            trusted_time: None,
            summary: Summary::default(),
            files: Vec::new(),
            left_out: Vec::new(),
            not_proven: Vec::new(),
        }
    }

    fn push(&mut self, name: &'static str, check: Check) {
        self.checks.push(Piece { name, check });
    }

    fn reject(mut self, name: &'static str, e: StampError) -> Self {
        self.push(name, Check::failed(e));
        self.not_proven
            .push("the files were not checked: the receipt itself did not verify".into());
        self.finish()
    }

    fn finish(mut self) -> Self {
        let s = &mut self.summary;
        for f in &self.files {
            match f.status {
                // Counted where they were checked (not every row is kept).
                FileStatus::Ok => {}
                FileStatus::Modified => s.modified += 1,
                FileStatus::Missing => s.missing += 1,
                FileStatus::Extra => s.extra += 1,
                FileStatus::NotStamped => s.not_stamped += 1,
                FileStatus::Error => s.errors += 1,
            }
        }
        let failed = self
            .checks
            .iter()
            .any(|p| matches!(p.check, Check::Failed { .. }));
        let mismatch = s.modified + s.missing + s.extra + s.not_stamped > 0;
        self.verdict = if failed || mismatch || self.claims.is_none() {
            Verdict::Rejected
        } else if s.errors > 0 {
            Verdict::Incomplete
        } else {
            Verdict::Verified
        };
        self
    }
}

fn b64d(text: &str) -> Option<Vec<u8>> {
    base64::engine::general_purpose::STANDARD.decode(text).ok()
}

fn file_report(p: &[u8], status: FileStatus, detail: Option<String>) -> FileReport {
    let (_, b) = path::to_json(p);
    FileReport {
        path: path::display(p),
        path_b64: b,
        status,
        detail,
    }
}

/// A statement whose envelope signature counted, with the bytes it was
/// judged on.
pub struct OpenedStatement {
    pub statement: Statement,
    pub payload: Vec<u8>,
    /// The DSSE PAE the signature is over.
    pub pae: Vec<u8>,
    /// The envelope's (Ed25519) signature bytes.
    pub sig: Vec<u8>,
    pub trusted: crate::chain::trust::TrustedStatement,
}

/// Opens a stamp envelope: the vouch payload type, exactly one signature,
/// a statement whose signer is that signature's key, and the signature
/// judged by the trust path ([`crate::chain::trust::open_statement`]).
pub fn open_envelope(
    env: &crate::dsse::Envelope,
    keys: &TrustedKeys,
) -> std::result::Result<OpenedStatement, StampError> {
    if env.payload_type != PAYLOAD_TYPE {
        return Err(StampError::Envelope("payloadType"));
    }
    let [sig] = env.signatures.as_slice() else {
        return Err(StampError::Envelope("not exactly one signature"));
    };
    let (Ok(payload), Ok(sig_bytes)) = (env.decode_payload(), sig.decode_sig(0)) else {
        return Err(StampError::Envelope("payload or sig is not base64"));
    };
    let statement = Statement::parse(&payload).map_err(StampError::Statement)?;
    if statement.predicate.signer != sig.keyid {
        return Err(StampError::Statement(statement::StatementProblem::Signer {
            signer: statement.predicate.signer.clone(),
            keyid: sig.keyid.clone(),
        }));
    }
    let origin = sig.keyid.rsplit_once('+').map_or("", |(n, _)| n);
    let pae = dsse::pae(PAYLOAD_TYPE, &payload);
    let trusted = crate::chain::trust::open_statement(keys, origin, &sig.keyid, &pae, &sig_bytes)
        .map_err(StampError::Signature)?;
    Ok(OpenedStatement {
        statement,
        payload,
        pae,
        sig: sig_bytes,
        trusted,
    })
}

/// Verifies the receipt at `receipt_path`. `Err` only when it cannot be
/// read; evidence that fails is a report with verdict `rejected`.
pub fn verify(receipt_path: &Path, opts: &StampVerifyOptions<'_>) -> Result<StampVerifyReport> {
    let mut report = StampVerifyReport::new(receipt_path);
    let opened = match receipt::open(receipt_path)? {
        Ok(o) => o,
        Err(p) => return Ok(report.reject("receipt", StampError::Receipt(p))),
    };
    // 1. The envelope and the signature, by the one trust path.
    let OpenedStatement {
        statement: st,
        payload,
        pae,
        sig: sig_bytes,
        trusted,
    } = match open_envelope(&opened.header.envelope, opts.keys) {
        Ok(o) => o,
        Err(e) => return Ok(report.reject("signature", e)),
    };
    let (name, id) = trusted.signer();
    report.push(
        "signature",
        Check::Verified {
            detail: format!("statement signed by {name}+{id:08x}"),
        },
    );
    let root = match st.root() {
        Ok(r) => r,
        Err(e) => return Ok(report.reject("tree", StampError::Statement(e))),
    };
    // 2. The entries and the tree.
    let extract = opened.header.extract.clone();
    let (header, entries) = match opened.entries(receipt_path)? {
        Ok(x) => x,
        Err(p) => return Ok(report.reject("tree", StampError::Receipt(p))),
    };
    report.left_out = header.left_out.clone();
    // The list is the signer's, unsigned: it must at least agree with the
    // signed count, and name no file that was stamped.
    let listed = header.left_out.len() as u64;
    let want = st
        .predicate
        .left_out
        .min(receipt::MAX_LEFT_OUT_LISTED as u64);
    let names_stamped = header.left_out.iter().any(|l| {
        path::from_json(l.path.as_deref(), l.path_b64.as_deref())
            .is_some_and(|p| entries.binary_search_by(|e| (*e.path).cmp(&p)).is_ok())
    });
    if extract.is_none() && (listed != want || names_stamped) {
        return Ok(report.reject(
            "tree",
            StampError::Receipt(receipt::ReceiptProblem::Header(format!(
                "left_out lists {listed} files, the statement counts {} (or names a stamped file)",
                st.predicate.left_out
            ))),
        ));
    }
    let count = st.predicate.count;
    let tree = match &extract {
        None => check_tree(&entries, &st, &root),
        Some(x) => check_extract(&entries, x, &st, &root),
    };
    report.kind = Some(if extract.is_some() { "extract" } else { "run" });
    match tree {
        Ok(detail) => report.push("tree", Check::Verified { detail }),
        Err(e) => return Ok(report.reject("tree", e)),
    }
    report.claims = Some(SignedClaims {
        signer: st.predicate.signer.clone(),
        root: st.predicate.root.clone(),
        count,
        leaf_scheme: st.predicate.leaf_scheme.clone(),
        signed_at: st.predicate.signed_at.clone(),
        meta: st.predicate.meta.clone(),
        left_out: st.predicate.left_out,
        log: st.predicate.log.clone(),
    });
    // 3. The Sigstore signature, the token, the chain.
    let sigstore = check_sigstore(&header, &st, &pae);
    let sigstore_ok = matches!(sigstore, Some(Check::Verified { .. }));
    if let Some(c) = sigstore {
        report.push("sigstore_signature", c);
    }
    let (tcheck, time) = check_token(&header, &sig_bytes, sigstore_ok, opts.tsa_roots);
    report.trusted_time = time;
    report.push("timestamp", tcheck);
    let chain = check_chain(&header, &st, &payload, opts);
    report.push("chain", chain);
    // 4. The files.
    let (files, ok) = check_files(&entries, &st, extract.is_some(), receipt_path, opts)?;
    report.files = files;
    report.summary.ok = ok;
    // What was not proven, in words.
    if report.trusted_time.is_none() {
        report.not_proven.push(format!(
            "when: no verified time-stamp token, so the time {} is the signer's own claim",
            st.predicate.signed_at
        ));
    }
    if let Some(Piece {
        check: Check::NotChecked { why, .. },
        ..
    }) = report.checks.iter().find(|p| p.name == "chain")
        && st.predicate.log.is_some()
    {
        report.not_proven.push(format!("the chain record: {why}"));
    }
    report.not_proven.push(
        "whether a later key rotation retired the signing key: verify the log itself for that"
            .into(),
    );
    if !opts.paths.is_empty() {
        let checked = report
            .files
            .iter()
            .filter(|f| f.status != FileStatus::NotStamped && f.status != FileStatus::Extra)
            .count() as u64;
        let checked = if opts.list_ok {
            checked
        } else {
            checked + report.summary.ok
        };
        if checked < count && extract.is_none() {
            report.not_proven.push(format!(
                "only the PATHs given were checked: {} of the {count} stamped files were not",
                count - checked.min(count)
            ));
        }
    }
    if st.predicate.left_out > 0 {
        report.not_proven.push(format!(
            "{} file(s) the signer meant to stamp were left out of the run (see left_out)",
            st.predicate.left_out
        ));
    }
    if !st.predicate.meta.is_empty() {
        report
            .not_proven
            .push("the metadata is what the signer said (signed, not otherwise checked)".into());
    }
    Ok(report.finish())
}

fn check_tree(
    entries: &[Entry],
    st: &Statement,
    root: &[u8; 32],
) -> std::result::Result<String, StampError> {
    let count = st.predicate.count;
    if entries.len() as u64 != count {
        return Err(StampError::Count {
            signed: count,
            found: entries.len() as u64,
        });
    }
    let computed = super::run::tree_root(entries);
    if &computed != root {
        return Err(StampError::Root {
            computed: crate::hex::encode(&computed),
            signed: crate::hex::encode(root),
        });
    }
    st.check_subjects(entries, root)
        .map_err(StampError::Statement)?;
    Ok(format!(
        "{count} {} the signed root {}",
        if count == 1 {
            "entry makes"
        } else {
            "entries make"
        },
        crate::hex::encode(root)
    ))
}

/// Checks a per-file proof's one entry and audit path against the signed
/// statement and its root (the "tree" step of [`verify`] for an extract).
pub fn check_extract(
    entries: &[Entry],
    x: &receipt::ExtractProof,
    st: &Statement,
    root: &[u8; 32],
) -> std::result::Result<String, StampError> {
    let count = st.predicate.count;
    let [e] = entries else {
        return Err(StampError::Count {
            signed: 1,
            found: entries.len() as u64,
        });
    };
    let bad = || StampError::Inclusion {
        index: x.index,
        count,
    };
    let hashes: Vec<[u8; 32]> = x
        .hashes
        .iter()
        .map(|h| crate::hex::decode_lower::<32>(h.as_bytes()))
        .collect::<Option<_>>()
        .ok_or_else(bad)?;
    crate::merkle::verify_inclusion(&e.leaf_hash(), x.index, count, &hashes, root)
        .map_err(|_| bad())?;
    // A statement listing files must list this one at its index.
    if st.predicate.subjects == SubjectMode::Files {
        let want = statement::subjects(SubjectMode::Files, std::slice::from_ref(e), root);
        let found = usize::try_from(x.index)
            .ok()
            .and_then(|i| st.subject.get(i));
        if st.subject.len() as u64 != count || found != want.first() {
            return Err(StampError::Statement(
                statement::StatementProblem::Subjects(format!(
                    "subject {} is not this entry",
                    x.index
                )),
            ));
        }
    } else {
        st.check_subjects(&[], root)
            .map_err(StampError::Statement)?;
    }
    Ok(format!(
        "the entry is leaf {} of the {count} under the signed root {}",
        x.index,
        crate::hex::encode(root)
    ))
}

fn check_sigstore(h: &Header, st: &Statement, pae: &[u8]) -> Option<Check> {
    let s = h.sigstore.as_ref()?;
    let Some(pinned) = &st.predicate.sigstore_key else {
        return Some(Check::failed(StampError::Sigstore(
            "the statement pins no Sigstore key",
        )));
    };
    let Some(sig) = b64d(&s.sig) else {
        return Some(Check::failed(StampError::Sigstore("sig is not base64")));
    };
    let checked = super::ecdsa_key::spki_from_pem(s.public_key.as_bytes())
        .and_then(|spki| super::ecdsa_key::verify(&spki, pae, &sig).map(|()| spki));
    match checked {
        Ok(spki) if crate::hex::encode(&crate::files::sha256(&spki)) == *pinned => {
            Some(Check::Verified {
                detail: "ECDSA P-256 signature by the key the statement pins".into(),
            })
        }
        Ok(_) => Some(Check::failed(StampError::Sigstore(
            "the public key is not the one the statement pins",
        ))),
        Err(_) => Some(Check::failed(StampError::Sigstore(
            "the signature does not verify with the public key",
        ))),
    }
}

fn check_token(
    h: &Header,
    sig: &[u8],
    sigstore_ok: bool,
    roots: Option<&TrustStore>,
) -> (Check, Option<TrustedTime>) {
    let Some(t) = &h.timestamp else {
        return (
            Check::NotChecked {
                code: "no_token",
                why: "the run has no time-stamp token".into(),
            },
            None,
        );
    };
    let Some(token) = b64d(&t.token) else {
        return (Check::failed(StampError::TokenForm("not base64")), None);
    };
    let covered: Vec<u8> = match t.covers {
        Covers::Signature => sig.to_vec(),
        Covers::Sigstore => {
            let s = h.sigstore.as_ref().and_then(|s| b64d(&s.sig));
            match s {
                Some(s) if sigstore_ok => s,
                _ => {
                    return (
                        Check::failed(StampError::TokenForm(
                            "it covers a Sigstore signature that did not verify",
                        )),
                        None,
                    );
                }
            }
        }
    };
    let Some(roots) = roots else {
        return (
            Check::NotChecked {
                code: "no_tsa_roots",
                why: "no --tsa-ca was given: the token was not checked".into(),
            },
            None,
        );
    };
    match crate::tsa::verify_data_token(&token, &covered, roots) {
        Ok(v) => {
            let time = TrustedTime {
                gen_time: v.gen_time().to_rfc3339(),
                tsa: v.signer().subject.clone(),
                serial: v.serial().to_owned(),
                policy: v.policy().to_owned(),
            };
            (
                Check::Verified {
                    detail: format!(
                        "RFC 3161 token over the {} signature: genTime {} by {}",
                        match t.covers {
                            Covers::Signature => "statement's",
                            Covers::Sigstore => "Sigstore",
                        },
                        time.gen_time,
                        time.tsa
                    ),
                },
                Some(time),
            )
        }
        Err(e) => (Check::failed(StampError::Token(e)), None),
    }
}

fn check_chain(h: &Header, st: &Statement, payload: &[u8], opts: &StampVerifyOptions<'_>) -> Check {
    let log = &st.predicate.log;
    let Some(chain) = &h.chain else {
        return match log {
            Some(l) => Check::NotChecked {
                code: "chain_not_in_receipt",
                why: format!(
                    "the statement says it is record {} of {}, but the receipt carries no proof of it",
                    l.seq, l.origin
                ),
            },
            None => Check::NotChecked {
                code: "not_recorded",
                why: "the run was not recorded in a log".into(),
            },
        };
    };
    if chain.format != crate::receipt::RECEIPT_FORMAT {
        return Check::failed(StampError::Chain(format!(
            "its format is {:?}, not {}",
            chain.format,
            crate::receipt::RECEIPT_FORMAT
        )));
    }
    let ctx = crate::anchor::check::CheckContext {
        tsa_roots: opts.tsa_roots,
        online: None,
    };
    let r = crate::receipt::verify(chain, opts.keys, &ctx, None);
    if r.verdict() == crate::receipt::Verdict::Rejected {
        let why = r
            .pieces()
            .iter()
            .find_map(|p| match &p.result {
                crate::receipt::PieceResult::Failed(e) => Some(format!("{}: {e}", p.name)),
                _ => None,
            })
            .unwrap_or_else(|| "rejected".into());
        return Check::failed(StampError::Chain(why));
    }
    let record = match chain
        .record
        .as_deref()
        .map(|l| crate::chain::record::parse_line(l.as_bytes()))
    {
        Some(Ok(rec)) => rec,
        _ => return Check::failed(StampError::ChainRecord("the receipt holds no record line")),
    };
    if record.kind_str() != crate::chain::record::KIND_STAMP {
        return Check::failed(StampError::ChainRecord("the record is not a stamp record"));
    }
    let body: serde_json::Value = match serde_json::from_slice(record.body) {
        Ok(b) => b,
        Err(_) => return Check::failed(StampError::ChainRecord("the record body is not JSON")),
    };
    let want = crate::hex::encode(&crate::files::sha256(payload));
    if body.get("statement").and_then(|v| v.as_str()) != Some(want.as_str()) {
        return Check::failed(StampError::ChainRecord("it names another statement"));
    }
    let count_ok = body.get("count").and_then(|v| v.as_u64()) == Some(st.predicate.count);
    if body.get("root").and_then(|v| v.as_str()) != Some(st.predicate.root.as_str()) || !count_ok {
        return Check::failed(StampError::ChainRecord(
            "its root or count is not the statement's",
        ));
    }
    let token = h
        .timestamp
        .as_ref()
        .and_then(|t| b64d(&t.token))
        .map(|t| crate::hex::encode(&crate::files::sha256(&t)));
    match (body.get("token").and_then(|v| v.as_str()), token.as_deref()) {
        (Some(a), Some(b)) if a != b => {
            return Check::failed(StampError::ChainRecord("it names another time-stamp token"));
        }
        (None, Some(_)) => {
            return Check::failed(StampError::ChainRecord(
                "it names no time-stamp token, the receipt carries one",
            ));
        }
        (Some(_), None) => {
            return Check::failed(StampError::ChainRecord(
                "it names a time-stamp token the receipt does not carry",
            ));
        }
        _ => {}
    }
    match log {
        Some(l) if l.origin == chain.origin && l.seq == chain.seq => {}
        _ => {
            return Check::failed(StampError::ChainRecord(
                "the statement does not name this record's log and seq",
            ));
        }
    }
    Check::Verified {
        detail: format!(
            "stamp record {} of {} is in the log under a trusted checkpoint of size {} ({})",
            chain.seq,
            chain.origin,
            chain.proof.tree_size,
            r.verdict().as_str()
        ),
    }
}

/// Checks that no directory above `rel` under `base` is a symlink (or not
/// a directory), so a recorded path is never resolved outside the base.
fn parents_safe(
    base: &Path,
    rel: &[u8],
    ok: &mut HashSet<Vec<u8>>,
) -> std::result::Result<(), String> {
    let mut end = 0;
    while let Some(i) = rel[end..].iter().position(|b| *b == b'/') {
        let dir = &rel[..end + i];
        if !ok.contains(dir) {
            match std::fs::symlink_metadata(path::under(base, dir)) {
                Ok(m) if m.is_dir() => {
                    ok.insert(dir.to_vec());
                }
                Ok(m) if m.file_type().is_symlink() => {
                    return Err(format!("{} is a symlink", path::display(dir)));
                }
                Ok(_) => return Err(format!("{} is not a directory", path::display(dir))),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    return Err(String::new());
                }
                Err(e) => return Err(format!("{}: {e}", path::display(dir))),
            }
        }
        end += i + 1;
    }
    Ok(())
}

fn check_one(base: &Path, e: &Entry, follow: bool) -> FileReport {
    let abs = path::under(base, &e.path);
    let r = |status, detail: Option<String>| file_report(&e.path, status, detail);
    match e.kind {
        EntryType::Link => match std::fs::symlink_metadata(&abs) {
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => r(FileStatus::Missing, None),
            Err(err) => r(FileStatus::Error, Some(err.to_string())),
            Ok(m) if !m.file_type().is_symlink() => r(
                FileStatus::Modified,
                Some("stamped as a symlink, now is not one".into()),
            ),
            Ok(_) => match std::fs::read_link(&abs) {
                Ok(t)
                    if std::os::unix::ffi::OsStrExt::as_bytes(t.as_os_str())
                        == &*e.target.clone().unwrap_or_default() =>
                {
                    r(FileStatus::Ok, None)
                }
                Ok(t) => r(
                    FileStatus::Modified,
                    Some(format!(
                        "the link points to {}",
                        path::display(std::os::unix::ffi::OsStrExt::as_bytes(t.as_os_str()))
                    )),
                ),
                Err(err) => r(FileStatus::Error, Some(err.to_string())),
            },
        },
        EntryType::File => {
            let mut hashed = crate::files::hash_file(&abs, false, None);
            if let Err(FileProblem::Changed("replaced by a symlink")) = hashed
                && follow
            {
                // A file stamped through a symlink (--follow-symlinks) is
                // followed only to a file inside the base.
                hashed = match std::fs::canonicalize(&abs) {
                    Ok(c) if c.starts_with(base) => crate::files::hash_file(&c, false, None),
                    _ => Err(FileProblem::Special(crate::fs::FileKind::Other)),
                };
                if let Err(FileProblem::Special(_)) = hashed {
                    return r(
                        FileStatus::Modified,
                        Some("stamped as a file, now a symlink leading outside the base or to no file".into()),
                    );
                }
            }
            match hashed {
                Ok((size, d)) if size == e.size && d == e.sha256 => r(FileStatus::Ok, None),
                Ok((size, _)) if size != e.size => r(
                    FileStatus::Modified,
                    Some(format!("size {size}, stamped {}", e.size)),
                ),
                Ok(_) => r(FileStatus::Modified, Some("content differs".into())),
                Err(FileProblem::Missing) => r(FileStatus::Missing, None),
                Err(FileProblem::Changed("replaced by a symlink")) => r(
                    FileStatus::Modified,
                    Some("stamped as a file, now a symlink".into()),
                ),
                Err(p @ FileProblem::Special(_)) => r(FileStatus::Modified, Some(p.to_string())),
                // Bytes that change while read are not the stamped bytes
                // held still: rejected, like any other content (exit 1).
                Err(p @ FileProblem::Changed(_)) => r(FileStatus::Modified, Some(p.to_string())),
                Err(p) => r(FileStatus::Error, Some(p.to_string())),
            }
        }
    }
}

fn check_files(
    entries: &[Entry],
    st: &Statement,
    extract: bool,
    receipt_path: &Path,
    opts: &StampVerifyOptions<'_>,
) -> Result<(Vec<FileReport>, u64)> {
    // Which entries to check.
    let mut filters: Vec<Option<Vec<u8>>> = Vec::new();
    for p in &opts.paths {
        let rel = path::relative_to(&opts.base, p).map_err(|problem| {
            Error::Stamp(StampProblem::Path {
                path: p.clone(),
                doing: "",
                problem,
            })
        })?;
        filters.push(rel);
    }
    let selected = |p: &[u8]| {
        filters.is_empty()
            || filters
                .iter()
                .any(|f| f.as_deref().is_none_or(|f| path::is_within(p, f)))
    };
    let mut out: Vec<FileReport> = Vec::new();
    for f in filters.iter().flatten() {
        if !entries.iter().any(|e| path::is_within(&e.path, f)) {
            out.push(file_report(
                f,
                FileStatus::NotStamped,
                Some("the receipt holds no such file".into()),
            ));
        }
    }
    let chosen: Vec<&Entry> = entries.iter().filter(|e| selected(&e.path)).collect();
    let mut safe = HashSet::new();
    let mut unsafe_parent: Vec<FileReport> = Vec::new();
    let mut to_hash: Vec<&Entry> = Vec::with_capacity(chosen.len());
    for e in chosen {
        match parents_safe(&opts.base, &e.path, &mut safe) {
            Ok(()) => to_hash.push(e),
            Err(why) if why.is_empty() => out.push(file_report(&e.path, FileStatus::Missing, None)),
            Err(why) => unsafe_parent.push(file_report(
                &e.path,
                FileStatus::Modified,
                Some(format!("not followed: {why}")),
            )),
        }
    }
    let ok = std::sync::atomic::AtomicU64::new(0);
    let hashed: Vec<FileReport> = to_hash
        .par_iter()
        .with_min_len(16)
        .filter_map(|e| {
            let r = check_one(&opts.base, e, st.predicate.follow_symlinks);
            if r.status == FileStatus::Ok {
                ok.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if !opts.list_ok {
                    return None;
                }
            }
            Some(r)
        })
        .collect();
    out.extend(hashed);
    out.extend(unsafe_parent);
    // Files added to a stamped directory (not the run's own receipt and
    // log, nor the receipt being verified).
    let mut own: Vec<Vec<u8>> = st
        .predicate
        .excluded
        .iter()
        .filter_map(|i| statement::input_path(i).ok().flatten())
        .collect();
    if let Ok(Some(me)) = path::relative_to(&opts.base, receipt_path) {
        own.push(me);
    }
    if !extract {
        for input in &st.predicate.inputs {
            if input.kind != statement::InputKind::Dir {
                continue;
            }
            let Ok(dir) = statement::input_path(input) else {
                continue;
            };
            if dir
                .as_deref()
                .is_some_and(|d| parents_safe(&opts.base, &[d, b"/x"].concat(), &mut safe).is_err())
            {
                continue;
            }
            // Streamed: nothing of the walk is held but what it reports.
            walk::visit(&opts.base, dir.as_deref(), &mut |v| match v {
                walk::Visit::Entry(p, m) => {
                    let t = m.file_type();
                    if (t.is_file() || t.is_symlink())
                        && selected(&p)
                        && !own.contains(&p)
                        && entries.binary_search_by(|e| (*e.path).cmp(&p)).is_err()
                    {
                        out.push(file_report(&p, FileStatus::Extra, None));
                    }
                }
                walk::Visit::Problem(p, problem) => {
                    if selected(&p) {
                        out.push(file_report(
                            &p,
                            FileStatus::Error,
                            Some(problem.to_string()),
                        ));
                    }
                }
            });
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok((out, ok.into_inner()))
}
