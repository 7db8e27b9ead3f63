//! The stamp receipt, `vouch-stamp/1` (docs/FORMAT.md §16.4): JSON Lines,
//! so that a run of a million files is written and verified in bounded
//! memory. The first line is the [`Header`]: the signed DSSE envelope, the
//! time-stamp token, the chain receipt of the `stamp` record, the files
//! left out, and the number of entry lines that follow. Each following
//! line is one [`EntryJson`], in strictly increasing path byte order.
//!
//! A run's receipt holds every entry, so the verifier rebuilds the whole
//! tree (which proves every file's inclusion at once). An extracted
//! per-file proof (`stamp extract`) holds one entry and its audit path.

use super::entry::{Entry, EntryJson, EntryProblem};
use super::walk::LeftOut;
use crate::dsse::Envelope;
use crate::files::path;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

pub const FORMAT: &str = "vouch-stamp/1";
/// The longest header line read.
pub const MAX_HEADER_BYTES: u64 = 16 << 20;
/// The longest entry line read.
pub const MAX_ENTRY_BYTES: u64 = 16 << 10;
/// Most entries a receipt may hold (about 1.4 GB of memory to verify).
pub const MAX_ENTRIES: u64 = 10_000_000;
/// Most left-out files named in a receipt (the statement counts them all).
pub const MAX_LEFT_OUT_LISTED: usize = 1000;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Header {
    pub format: String,
    /// The statement, signed with the stamping key (Ed25519).
    pub envelope: Envelope,
    /// The ECDSA P-256 signature over the same PAE, for the Sigstore export.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::receipt::present"
    )]
    pub sigstore: Option<SigstoreSignature>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::receipt::present"
    )]
    pub timestamp: Option<Timestamp>,
    /// The `vouch-receipt/2` receipt of the run's `stamp` record.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::receipt::present"
    )]
    pub chain: Option<crate::receipt::Receipt>,
    pub left_out: Vec<LeftOutJson>,
    /// The number of entry lines that follow.
    pub entries: u64,
    /// Present in an extracted per-file proof.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::receipt::present"
    )]
    pub extract: Option<ExtractProof>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SigstoreSignature {
    /// Base64 of the DER ECDSA signature.
    pub sig: String,
    /// The P-256 public key, SPKI PEM.
    pub public_key: String,
}

/// Which signature a time-stamp token's imprint covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Covers {
    /// The envelope's Ed25519 signature bytes.
    Signature,
    /// The Sigstore (P-256) signature bytes.
    Sigstore,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Timestamp {
    /// Base64 of the DER RFC 3161 TimeStampResp, as the TSA sent it.
    pub token: String,
    /// Its imprint is SHA-256 over these signature bytes.
    pub covers: Covers,
    /// The TSA's URL (for reading only).
    pub url: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LeftOutJson {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_b64: Option<String>,
    pub code: String,
    pub reason: String,
}

impl LeftOutJson {
    pub fn from(l: &LeftOut) -> Self {
        let (p, b) = path::to_json(&l.path);
        LeftOutJson {
            path: p,
            path_b64: b,
            code: l.problem.code().into(),
            reason: l.problem.to_string(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExtractProof {
    /// The entry's leaf index in the run's tree.
    pub index: u64,
    /// Hex audit path, from the leaf's sibling up.
    pub hashes: Vec<String>,
}

/// A receipt being written: its temporary file (in the directory of the
/// final path) exists from [`Pending::create`] on, so a receipt that could
/// not be written is known before anything is recorded in a log.
pub struct Pending {
    out: PathBuf,
    tmp: PathBuf,
    file: Option<std::fs::File>,
}

impl Pending {
    /// Creates the temporary file for `out`. Refuses to replace an existing
    /// `out` that is not a stamp receipt (a key, a log, a stamped file).
    pub fn create(out: &Path) -> Result<Self> {
        if let Ok(m) = std::fs::symlink_metadata(out)
            && !(m.is_file() && is_receipt(out))
        {
            return Err(Error::Stamp(super::StampProblem::NotAReceipt {
                path: out.to_path_buf(),
            }));
        }
        let dir = match out.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = out
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "receipt".into());
        let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(|e| Error::io(out, e))?;
        Ok(Pending {
            out: out.to_path_buf(),
            tmp,
            file: Some(file),
        })
    }

    /// Writes the receipt, syncs it and renames it over the final path.
    pub fn finish(mut self, header: &Header, entries: &[Entry]) -> Result<()> {
        let out = self.out.clone();
        let io = |e| Error::io(&out, e);
        let Some(f) = self.file.take() else {
            return Err(io(std::io::Error::other("already written")));
        };
        let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
        encode(&mut w, header, entries).map_err(|e| match e {
            Encode::Json(what, source) => Error::Serialize { what, source },
            Encode::Io(e) => io(e),
        })?;
        let f = w.into_inner().map_err(|e| io(e.into_error()))?;
        f.sync_all().map_err(io)?;
        std::fs::rename(&self.tmp, &self.out).map_err(io)
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        // Not renamed into place: remove the temporary file.
        if self.tmp.exists() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// True when the file at `path` starts with a stamp receipt header line.
fn is_receipt(path: &Path) -> bool {
    matches!(open(path), Ok(Ok(_)))
}

/// Why [`encode`] stopped.
#[derive(Debug)]
pub enum Encode {
    /// A value could not be serialised (`what` names it).
    Json(&'static str, serde_json::Error),
    Io(std::io::Error),
}

/// Writes a receipt's lines (the header, then one line per entry) to `w`:
/// the bytes [`write`] stores and [`parse`] reads.
pub fn encode(
    w: &mut dyn Write,
    header: &Header,
    entries: &[Entry],
) -> std::result::Result<(), Encode> {
    serde_json::to_writer(&mut *w, header).map_err(|e| Encode::Json("stamp receipt header", e))?;
    w.write_all(b"\n").map_err(Encode::Io)?;
    for e in entries {
        serde_json::to_writer(&mut *w, &e.to_json()).map_err(|e| Encode::Json("stamp entry", e))?;
        w.write_all(b"\n").map_err(Encode::Io)?;
    }
    Ok(())
}

/// Writes a receipt to `out` atomically (a temporary file in the same
/// directory, synced, then renamed over `out`).
pub fn write(out: &Path, header: &Header, entries: &[Entry]) -> Result<()> {
    Pending::create(out)?.finish(header, entries)
}

/// Why a file is not a readable stamp receipt.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReceiptProblem {
    #[error("not a vouch-stamp/1 receipt: {0}")]
    Header(String),
    #[error("the header line is longer than {MAX_HEADER_BYTES} bytes")]
    HeaderTooLong,
    #[error("entry line {line}: {problem}")]
    Entry { line: u64, problem: EntryProblem },
    #[error("entry line {line} is longer than {MAX_ENTRY_BYTES} bytes")]
    EntryTooLong { line: u64 },
    #[error("entry line {line} is not after the one before it in path byte order")]
    Order { line: u64 },
    #[error("the header says {said} entries, the file holds {found}")]
    Count { said: u64, found: u64 },
}

impl ReceiptProblem {
    pub fn code(&self) -> &'static str {
        match self {
            ReceiptProblem::Header(_) | ReceiptProblem::HeaderTooLong => "bad_stamp_receipt",
            ReceiptProblem::Entry { .. } | ReceiptProblem::EntryTooLong { .. } => "bad_entry",
            ReceiptProblem::Order { .. } => "entry_order",
            ReceiptProblem::Count { .. } => "entry_count",
        }
    }
}

/// Reads one line of at most `max` bytes (without its newline); `Ok(None)`
/// at the end of the file, `Err(true)` when the line is too long.
fn read_line<R: BufRead>(r: &mut R, max: u64, buf: &mut Vec<u8>) -> std::io::Result<Option<bool>> {
    buf.clear();
    let n = std::io::Read::take(&mut *r, max + 1).read_until(b'\n', buf)?;
    if n == 0 {
        return Ok(None);
    }
    if buf.last() == Some(&b'\n') {
        buf.pop();
        Ok(Some(true))
    } else if n as u64 > max {
        Ok(Some(false))
    } else {
        // The last line without a newline.
        Ok(Some(true))
    }
}

/// An opened receipt: its header, and a reader positioned at the entries.
pub struct Opened {
    pub header: Header,
    reader: Box<dyn BufRead + Send>,
}

/// Opens a receipt file (a regular file only) and parses its header.
/// `Ok(Err(problem))`: the file was read and is not a receipt (evidence to
/// reject); `Err`: it could not be read.
pub fn open(path: &Path) -> Result<std::result::Result<Opened, ReceiptProblem>> {
    let file = crate::fs::open_regular(path)?;
    open_reader(
        Box::new(std::io::BufReader::with_capacity(1 << 20, file)),
        path,
    )
}

/// Parses a whole receipt (or per-file proof) held in memory: its header
/// and every entry, with the checks of [`open`] and [`Opened::entries`].
pub fn parse(bytes: &[u8]) -> std::result::Result<(Header, Vec<Entry>), ReceiptProblem> {
    let path = Path::new("receipt");
    // Reading from a slice cannot fail: only `ReceiptProblem`s are left.
    let io = |e: Error| ReceiptProblem::Header(e.to_string());
    let opened =
        open_reader(Box::new(std::io::Cursor::new(bytes.to_vec())), path).map_err(io)??;
    opened.entries(path).map_err(io)?
}

/// [`open`] on a reader (`path` names it in errors).
pub fn open_reader(
    mut r: Box<dyn BufRead + Send>,
    path: &Path,
) -> Result<std::result::Result<Opened, ReceiptProblem>> {
    let mut buf = Vec::new();
    let header =
        match read_line(&mut r, MAX_HEADER_BYTES, &mut buf).map_err(|e| Error::io(path, e))? {
            None => return Ok(Err(ReceiptProblem::Header("the file is empty".into()))),
            Some(false) => return Ok(Err(ReceiptProblem::HeaderTooLong)),
            Some(true) => match serde_json::from_slice::<Header>(&buf) {
                Ok(h) => h,
                Err(e) => return Ok(Err(ReceiptProblem::Header(e.to_string()))),
            },
        };
    if header.entries > MAX_ENTRIES {
        return Ok(Err(ReceiptProblem::Header(format!(
            "it holds {} entries, more than the {MAX_ENTRIES} accepted",
            header.entries
        ))));
    }
    if header.format != FORMAT {
        return Ok(Err(ReceiptProblem::Header(format!(
            "format is {:?}",
            header.format
        ))));
    }
    Ok(Ok(Opened { header, reader: r }))
}

impl Opened {
    /// Reads every entry, checking form, order and count. `Ok(Err)` is a
    /// receipt to reject; `Err` an I/O failure.
    pub fn entries(
        mut self,
        path: &Path,
    ) -> Result<std::result::Result<(Header, Vec<Entry>), ReceiptProblem>> {
        let said = self.header.entries;
        let mut entries: Vec<Entry> =
            Vec::with_capacity(usize::try_from(said.min(1 << 20)).unwrap_or(0));
        let mut buf = Vec::new();
        let mut line = 1u64;
        loop {
            line += 1;
            match read_line(&mut self.reader, MAX_ENTRY_BYTES, &mut buf)
                .map_err(|e| Error::io(path, e))?
            {
                None => break,
                Some(false) => return Ok(Err(ReceiptProblem::EntryTooLong { line })),
                Some(true) => {}
            }
            if entries.len() as u64 >= said {
                // More lines than the header says: count them, boundedly.
                return Ok(Err(ReceiptProblem::Count {
                    said,
                    found: said + 1,
                }));
            }
            let e = match serde_json::from_slice::<EntryJson>(&buf) {
                Ok(j) => j.decode(),
                Err(e) => Err(EntryProblem::Json(e.to_string())),
            };
            let e = match e {
                Ok(e) => e,
                Err(problem) => return Ok(Err(ReceiptProblem::Entry { line, problem })),
            };
            if entries.last().is_some_and(|p| p.path >= e.path) {
                return Ok(Err(ReceiptProblem::Order { line }));
            }
            entries.push(e);
        }
        if entries.len() as u64 != said {
            return Ok(Err(ReceiptProblem::Count {
                said,
                found: entries.len() as u64,
            }));
        }
        Ok(Ok((self.header, entries)))
    }
}
