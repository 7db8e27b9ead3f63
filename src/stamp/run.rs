//! `vouch stamp`: one run, from the PATHs to the receipt.
//!
//! Order of work, so that a failure never leaves a claim behind:
//! 1. resolve every PATH under the base (one outside it refuses the run);
//! 2. walk and hash on all cores; build the tree;
//! 3. with `--log`, under the log's lock: sign the statement naming the
//!    seq its record will get, get the time-stamp token over the signature
//!    and verify it, then append the `stamp` record and a checkpoint over
//!    it. A TSA failure aborts before anything is appended;
//! 4. write the receipt (atomically), with the chain receipt of the record.

use super::StampProblem;
use super::entry::{self, Entry};
use super::receipt::{self, Covers, Header, LeftOutJson, SigstoreSignature, Timestamp};
use super::statement::{
    self, InputJson, InputKind, LogRef, PAYLOAD_TYPE, PREDICATE_TYPE, Predicate, STATEMENT_TYPE,
    Statement, SubjectMode,
};
use super::walk::{self, LeftOut, Skipped};
use crate::chain::record::KIND_STAMP;
use crate::dsse::{self, Envelope};
use crate::note::SignerKey;
use crate::tsa::TrustStore;
use crate::{Error, Result};
use base64::Engine;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// Which subjects the statement lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Subjects {
    /// Every file for runs of at most [`statement::AUTO_SUBJECTS_MAX`]
    /// files, else the root.
    #[default]
    Auto,
    Files,
    Root,
}

/// A second signer for the Sigstore export (an ECDSA P-256 key): its SPKI
/// DER, its PEM, and a signing function over bytes (DER signature).
pub struct ExportSigner<'a> {
    pub spki_der: Vec<u8>,
    pub public_pem: String,
    pub sign: &'a (dyn Fn(&[u8]) -> Result<Vec<u8>> + Sync),
}

/// Where the run's bytes come from.
pub enum Input {
    /// PATHs as given on the command line (relative to the current
    /// directory, or absolute).
    Paths(Vec<PathBuf>),
    /// A stream (stdin), stamped as `name`, copied to `tee` and passed
    /// on to `pass` (stdout, in a pipeline) as it is read.
    Stream {
        name: Vec<u8>,
        tee: Option<PathBuf>,
        pass: Option<Box<dyn Write>>,
        reader: Box<dyn Read>,
    },
}

pub struct StampOptions<'a> {
    /// The base directory (canonical).
    pub base: PathBuf,
    pub input: Input,
    pub key: &'a SignerKey,
    pub log: Option<PathBuf>,
    /// TSA URL and the roots its token must verify against.
    pub tsa: Option<(String, &'a TrustStore)>,
    pub meta: BTreeMap<String, String>,
    pub subjects: Subjects,
    pub follow_symlinks: bool,
    pub export_signer: Option<ExportSigner<'a>>,
    /// Files the run must never write (the key file): `--out` and `--tee`
    /// may not name them, nor the log or its tree cache.
    pub protected: Vec<PathBuf>,
    /// Where the receipt goes (default: `stamp-<first 16 hex digits of
    /// the root>.vouch` in the current directory).
    pub out: Option<PathBuf>,
}

/// What a run did.
#[derive(Debug)]
pub struct StampOutcome {
    pub receipt: PathBuf,
    pub header: Header,
    pub statement: Statement,
    pub root: [u8; 32],
    pub entries: Vec<Entry>,
    pub left_out: Vec<LeftOut>,
    pub skipped: Vec<Skipped>,
    /// The verified token's genTime.
    pub gen_time: Option<String>,
    /// The record's seq and the covering checkpoint's size.
    pub recorded: Option<(u64, u64)>,
    /// Why the token could not be had (the run then has none, records
    /// nothing, and fails with exit 2).
    pub tsa_failure: Option<String>,
}

impl StampOutcome {
    /// Files named explicitly that were not stamped, or unreadable files:
    /// the run failed for them (exit 2).
    pub fn failed(&self) -> bool {
        self.tsa_failure.is_some() || !self.left_out.is_empty()
    }
}

/// True when `a` and `b` name the same file (or would: same directory and
/// name when one does not exist yet).
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    if let (Ok(x), Ok(y)) = (std::fs::metadata(a), std::fs::metadata(b)) {
        return (x.dev(), x.ino()) == (y.dev(), y.ino());
    }
    let canon = |p: &Path| {
        let dir = match p.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        std::fs::canonicalize(dir)
            .ok()
            .map(|d| d.join(p.file_name().unwrap_or_default()))
    };
    canon(a).is_some() && canon(a) == canon(b)
}

/// Refuses an output (`--out`, `--tee`) that names the key, the log, the
/// log's tree cache, or the other output.
fn check_output(
    opts: &StampOptions<'_>,
    option: &'static str,
    out: &Path,
    other: Option<&Path>,
) -> Result<()> {
    let mut guarded: Vec<(&str, PathBuf)> = opts
        .protected
        .iter()
        .map(|p| ("the key", p.clone()))
        .collect();
    if let Some(log) = &opts.log {
        guarded.push(("the log", log.clone()));
        guarded.push(("the log's tree cache", crate::chain::tree::cache_path(log)));
    }
    if let Some(o) = other {
        guarded.push(("the other output", o.to_path_buf()));
    }
    for (what, g) in guarded {
        if same_file(out, &g) {
            return Err(Error::Stamp(StampProblem::OutputIsInput {
                option,
                path: out.to_path_buf(),
                what,
            }));
        }
    }
    Ok(())
}

fn resolve(base: &Path, paths: &[PathBuf]) -> Result<Vec<Option<Vec<u8>>>> {
    let mut out = Vec::with_capacity(paths.len());
    for p in paths {
        let rel = crate::files::path::relative_to(base, p).map_err(|problem| {
            Error::Stamp(StampProblem::Path {
                path: p.clone(),
                doing: "cannot be stamped: ",
                problem,
            })
        })?;
        out.push(rel);
    }
    Ok(out)
}

/// Hashes a stream, copying it to `tee` and passing it on to `pass`;
/// constant memory. A stream that could not be passed on whole (a reader
/// downstream that quit) is an error: nothing is stamped.
fn hash_stream(
    reader: &mut dyn Read,
    mut tee: Option<(&Path, std::fs::File)>,
    mut pass: Option<Box<dyn Write>>,
) -> Result<(u64, [u8; 32])> {
    let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
    let mut buf = vec![0u8; 1 << 20];
    let mut n = 0u64;
    loop {
        let k = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(k) => k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Error::io(Path::new("-"), e)),
        };
        ctx.update(&buf[..k]);
        n += k as u64;
        if let Some((p, f)) = &mut tee {
            f.write_all(&buf[..k]).map_err(|e| Error::io(*p, e))?;
        }
        if let Some(w) = &mut pass {
            w.write_all(&buf[..k])
                .map_err(|e| Error::io(Path::new("(stdout)"), e))?;
        }
    }
    if let Some(w) = &mut pass {
        w.flush().map_err(|e| Error::io(Path::new("(stdout)"), e))?;
    }
    if let Some((p, f)) = &tee {
        f.sync_all().map_err(|e| Error::io(p, e))?;
    }
    let mut d = [0u8; 32];
    d.copy_from_slice(ctx.finish().as_ref());
    Ok((n, d))
}

struct Collected {
    entries: Vec<Entry>,
    inputs: Vec<InputJson>,
    /// Stamped paths of files the run writes, inside its inputs.
    excluded: Vec<Vec<u8>>,
    /// The stamped paths of the directory inputs.
    dirs: Vec<Option<Vec<u8>>>,
    left_out: Vec<LeftOut>,
    skipped: Vec<Skipped>,
}

fn collect(opts: &mut StampOptions<'_>) -> Result<Collected> {
    match std::mem::replace(&mut opts.input, Input::Paths(Vec::new())) {
        Input::Paths(paths) => {
            let given = resolve(&opts.base, &paths)?;
            let mut found = walk::walk(&opts.base, &given, opts.follow_symlinks);
            let entries = walk::hash_all(&opts.base, &mut found);
            let dirs = found
                .roots
                .iter()
                .filter(|r| r.is_dir)
                .map(|r| r.path.clone())
                .collect();
            let inputs = found
                .roots
                .iter()
                .map(|r| {
                    let (p, b) = match &r.path {
                        Some(p) => crate::files::path::to_json(p),
                        None => (None, None),
                    };
                    InputJson {
                        path: p,
                        path_b64: b,
                        kind: if r.is_dir {
                            InputKind::Dir
                        } else {
                            InputKind::File
                        },
                    }
                })
                .collect();
            Ok(Collected {
                entries,
                inputs,
                excluded: Vec::new(),
                dirs,
                left_out: found.left_out,
                skipped: found.skipped,
            })
        }
        Input::Stream {
            name,
            tee,
            pass,
            mut reader,
        } => {
            crate::files::path::check(&name).map_err(|problem| {
                Error::Stamp(StampProblem::Name {
                    name: crate::files::path::display(&name),
                    problem,
                })
            })?;
            if let Some(t) = &tee {
                check_output(opts, "--tee", t, opts.out.as_deref())?;
            }
            let tee_file = match &tee {
                Some(p) => Some((
                    p.as_path(),
                    std::fs::File::create(p).map_err(|e| Error::io(p, e))?,
                )),
                None => None,
            };
            let (size, sha256) = hash_stream(&mut *reader, tee_file, pass)?;
            let (p, b) = crate::files::path::to_json(&name);
            Ok(Collected {
                entries: vec![Entry {
                    path: name.into_boxed_slice(),
                    kind: entry::EntryType::File,
                    size,
                    sha256,
                    target: None,
                }],
                inputs: vec![InputJson {
                    path: p,
                    path_b64: b,
                    kind: InputKind::Stream,
                }],
                excluded: Vec::new(),
                dirs: Vec::new(),
                left_out: Vec::new(),
                skipped: Vec::new(),
            })
        }
    }
}

/// The Merkle root over entries (sorted), leaves hashed on all cores.
pub fn tree_root(entries: &[Entry]) -> [u8; 32] {
    use rayon::prelude::*;
    let leaves: Vec<[u8; 32]> = entries
        .par_iter()
        .with_min_len(1024)
        .map(Entry::leaf_hash)
        .collect();
    crate::merkle::root(&leaves)
}

struct Signed {
    payload: Vec<u8>,
    statement: Statement,
    envelope: Envelope,
    sigstore: Option<SigstoreSignature>,
    timestamp: Option<Timestamp>,
    /// SHA-256 of the token's DER bytes.
    token_sha256: Option<[u8; 32]>,
    gen_time: Option<String>,
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

pub fn keyid(key: &SignerKey) -> String {
    format!("{}+{:08x}", key.name(), key.key_id())
}

/// Builds and signs the statement, and (when asked) gets and verifies the
/// time-stamp token over the signature the export carries.
fn sign(
    opts: &StampOptions<'_>,
    c: &Collected,
    root: &[u8; 32],
    mode: SubjectMode,
    log: Option<LogRef>,
    with_tsa: bool,
) -> Result<Signed> {
    let statement = Statement {
        type_: STATEMENT_TYPE.into(),
        subject: statement::subjects(mode, &c.entries, root),
        predicate_type: PREDICATE_TYPE.into(),
        predicate: Predicate {
            leaf_scheme: entry::LEAF_SCHEME.into(),
            root: crate::hex::encode(root),
            count: c.entries.len() as u64,
            subjects: mode,
            inputs: c.inputs.clone(),
            excluded: c
                .excluded
                .iter()
                .map(|p| {
                    let (path, path_b64) = crate::files::path::to_json(p);
                    InputJson {
                        path,
                        path_b64,
                        kind: InputKind::File,
                    }
                })
                .collect(),
            follow_symlinks: opts.follow_symlinks,
            left_out: c.left_out.len() as u64,
            meta: opts.meta.clone(),
            signed_at: crate::time::now_rfc3339(),
            signer: keyid(opts.key),
            log,
            sigstore_key: opts
                .export_signer
                .as_ref()
                .map(|s| crate::hex::encode(&crate::files::sha256(&s.spki_der))),
            tool: concat!("vouch/", env!("CARGO_PKG_VERSION")).into(),
        },
    };
    let payload = serde_json::to_vec(&statement).map_err(|e| Error::Serialize {
        what: "stamp statement",
        source: e,
    })?;
    let pae = dsse::pae(PAYLOAD_TYPE, &payload);
    let sig = dsse::sign_dsse(opts.key, PAYLOAD_TYPE, &payload);
    let envelope = Envelope::new(
        PAYLOAD_TYPE,
        &payload,
        vec![dsse::Signature::new(&keyid(opts.key), &sig)],
    );
    let sigstore = match &opts.export_signer {
        Some(s) => Some((s.sign)(&pae)?),
        None => None,
    };
    let (covered, covers): (&[u8], Covers) = match &sigstore {
        Some(s) => (s, Covers::Sigstore),
        None => (&sig, Covers::Signature),
    };
    let mut token_sha256 = None;
    let (timestamp, gen_time) = match (&opts.tsa, with_tsa) {
        (Some((url, roots)), true) => {
            let (token, verified) = crate::tsa::timestamp_data(url, covered, roots)?;
            let gen_time = verified.gen_time().to_rfc3339();
            token_sha256 = Some(crate::files::sha256(&token));
            (
                Some(Timestamp {
                    token: b64(&token),
                    covers,
                    url: url.clone(),
                }),
                Some(gen_time),
            )
        }
        _ => (None, None),
    };
    Ok(Signed {
        payload,
        statement,
        envelope,
        sigstore: match (sigstore, &opts.export_signer) {
            (Some(s), Some(e)) => Some(SigstoreSignature {
                sig: b64(&s),
                public_key: e.public_pem.clone(),
            }),
            _ => None,
        },
        timestamp,
        token_sha256,
        gen_time,
    })
}

/// Runs a stamp: see the module docs.
pub fn stamp(mut opts: StampOptions<'_>) -> Result<StampOutcome> {
    let mut c = collect(&mut opts)?;
    if c.entries.is_empty() {
        return Err(Error::Stamp(match c.left_out.first() {
            Some(l) => StampProblem::NothingStamped {
                path: crate::files::path::display(&l.path),
                problem: l.problem.clone(),
            },
            None => StampProblem::NothingToStamp("no files were found"),
        }));
    }
    let root = tree_root(&c.entries);
    let out = opts.out.clone().unwrap_or_else(|| {
        PathBuf::from(format!("stamp-{}.vouch", &crate::hex::encode(&root)[..16]))
    });
    // What the run writes inside its own inputs is not part of the stamp.
    let mut written = vec![out.clone()];
    if let Some(log) = &opts.log {
        written.push(log.clone());
        written.push(crate::chain::tree::cache_path(log));
    }
    for w in &written {
        if let Ok(Some(rel)) = crate::files::path::relative_to(&opts.base, w)
            && c.dirs.iter().any(|d| {
                d.as_deref()
                    .is_none_or(|d| crate::files::path::is_within(&rel, d))
            })
        {
            c.entries.retain(|e| *e.path != *rel);
            if !c.excluded.contains(&rel) {
                c.excluded.push(rel);
            }
        }
    }
    c.excluded.sort();
    check_output(&opts, "--out", &out, None)?;
    // The receipt's file is made before anything is recorded in the log.
    let pending = receipt::Pending::create(&out)?;
    if c.entries.is_empty() {
        return Err(Error::Stamp(StampProblem::NothingToStamp(
            "only the run's own receipt and log were found",
        )));
    }
    let root = tree_root(&c.entries);
    let mode = match opts.subjects {
        Subjects::Files => SubjectMode::Files,
        Subjects::Root => SubjectMode::Root,
        Subjects::Auto if c.entries.len() <= statement::AUTO_SUBJECTS_MAX => SubjectMode::Files,
        Subjects::Auto => SubjectMode::Root,
    };
    let mut tsa_failure = None;
    let mut recorded = None;
    let mut chain = None;
    let signed = match &opts.log {
        Some(log) => {
            let made = crate::chain::writer::append_covered_with(log, opts.key, |seq| {
                let s = sign(
                    &opts,
                    &c,
                    &root,
                    mode,
                    Some(LogRef {
                        origin: opts.key.name().into(),
                        seq,
                    }),
                    true,
                )?;
                let mut body = serde_json::Map::new();
                body.insert(
                    "statement".into(),
                    crate::hex::encode(&crate::files::sha256(&s.payload)).into(),
                );
                body.insert("root".into(), crate::hex::encode(&root).into());
                body.insert("count".into(), (c.entries.len() as u64).into());
                if let Some(t) = &s.token_sha256 {
                    body.insert("token".into(), crate::hex::encode(t).into());
                }
                Ok((vec![(KIND_STAMP, serde_json::Value::Object(body))], s))
            });
            match made {
                Ok((covered, s)) => {
                    let seq = covered.appended[0].seq;
                    recorded = Some((seq, covered.checkpoint.checkpoint.size));
                    chain = Some(crate::receipt::build(log, seq, true)?);
                    s
                }
                Err(e) if is_tsa_failure(&e) && opts.tsa.is_some() => {
                    tsa_failure = Some(e.to_string());
                    sign(&opts, &c, &root, mode, None, false)?
                }
                Err(e) => return Err(e),
            }
        }
        None => match sign(&opts, &c, &root, mode, None, true) {
            Ok(s) => s,
            Err(e) if is_tsa_failure(&e) && opts.tsa.is_some() => {
                tsa_failure = Some(e.to_string());
                sign(&opts, &c, &root, mode, None, false)?
            }
            Err(e) => return Err(e),
        },
    };
    let header = Header {
        format: receipt::FORMAT.into(),
        envelope: signed.envelope,
        sigstore: signed.sigstore,
        timestamp: signed.timestamp,
        chain,
        left_out: c
            .left_out
            .iter()
            .take(receipt::MAX_LEFT_OUT_LISTED)
            .map(LeftOutJson::from)
            .collect(),
        entries: c.entries.len() as u64,
        extract: None,
    };
    pending.finish(&header, &c.entries)?;
    Ok(StampOutcome {
        receipt: out,
        header,
        statement: signed.statement,
        root,
        entries: c.entries,
        left_out: c.left_out,
        skipped: c.skipped,
        gen_time: signed.gen_time,
        recorded,
        tsa_failure,
    })
}

fn is_tsa_failure(e: &Error) -> bool {
    matches!(
        e,
        Error::Tsa(_) | Error::Network { .. } | Error::TsaRequest(_) | Error::Remote { .. }
    )
}

/// What `vouch stamp` reports (JSON), built from the outcome.
#[derive(Debug, Clone, serde::Serialize)]
pub struct StampReport {
    pub receipt: String,
    pub root: String,
    pub files: u64,
    pub bytes: u64,
    pub signer: String,
    /// The signer's clock.
    pub signed_at: String,
    /// The verified token's genTime, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gen_time: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recorded: Option<Recorded>,
    pub left_out: Vec<LeftOutJson>,
    pub skipped: Vec<SkippedJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tsa_failure: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sigstore_bundle: Option<String>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Recorded {
    pub log: String,
    pub seq: u64,
    pub checkpoint_size: u64,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct SkippedJson {
    pub path: String,
    pub kind: String,
}

impl StampOutcome {
    pub fn report(&self, log: Option<&Path>, sigstore: Option<&Path>) -> StampReport {
        StampReport {
            receipt: self.receipt.display().to_string(),
            root: crate::hex::encode(&self.root),
            files: self.entries.len() as u64,
            bytes: self
                .entries
                .iter()
                .filter(|e| e.kind == entry::EntryType::File)
                .map(|e| e.size)
                .sum(),
            signer: self.statement.predicate.signer.clone(),
            signed_at: self.statement.predicate.signed_at.clone(),
            gen_time: self.gen_time.clone(),
            recorded: match (self.recorded, log) {
                (Some((seq, size)), Some(l)) => Some(Recorded {
                    log: l.display().to_string(),
                    seq,
                    checkpoint_size: size,
                }),
                _ => None,
            },
            left_out: self.left_out.iter().map(LeftOutJson::from).collect(),
            skipped: self
                .skipped
                .iter()
                .map(|s| SkippedJson {
                    path: crate::files::path::display(&s.path),
                    kind: s.kind.to_string(),
                })
                .collect(),
            tsa_failure: self.tsa_failure.clone(),
            sigstore_bundle: sigstore.map(|p| p.display().to_string()),
        }
    }
}
