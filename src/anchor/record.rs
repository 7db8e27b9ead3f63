//! The `anchor` record (docs/FORMAT.md §9): what `vouch anchor` appends to
//! the chain after every target accepted the checkpoint, with everything
//! needed to check each anchor later without trusting the writer.

use crate::Result;
use crate::merkle::Hash;
use crate::note::checkpoint::Checkpoint;
use serde::{Deserialize, Serialize};

use std::path::Path;

/// The record kind of an anchor record (reserved: see
/// [`record::RESERVED_KINDS`]).
pub use crate::chain::record::KIND_ANCHOR;

/// Body of an `anchor` record: one checkpoint and where it was anchored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnchorBody {
    /// The signed checkpoint note, verbatim (C2SP tlog-checkpoint).
    pub note: String,
    /// Lowercase hex SHA-256 of the note's bytes: the anchored content.
    pub note_sha256: String,
    /// The checkpoint's origin, tree size and root (hex), for reading
    /// without parsing the note.
    pub origin: String,
    pub size: u64,
    pub root: String,
    /// One entry per target that accepted the checkpoint.
    pub anchors: Vec<AnchorEntry>,
}

/// Where one checkpoint was anchored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AnchorEntry {
    /// A write-once file in a local directory.
    Dir(DirAnchor),
    /// An S3 object under Object Lock.
    S3(S3Anchor),
    /// An RFC 3161 time-stamp token over the note.
    Tsa(TsaAnchor),
}

impl AnchorEntry {
    /// A short description of the location, for reports.
    pub fn location(&self) -> String {
        match self {
            AnchorEntry::Dir(d) => format!("dir:{}/{}", d.dir, d.file),
            AnchorEntry::S3(s) => format!(
                "s3://{}/{}?versionId={}",
                s.bucket,
                s.key,
                s.version_id.as_deref().unwrap_or("-")
            ),
            // The URL is not in the token: shown as what the record says.
            AnchorEntry::Tsa(t) => format!("tsa token (recorded url {})", t.url),
        }
    }

    /// Whether a storage entry names the object of `cp` as `vouch anchor`
    /// writes it (docs/FORMAT.md §9.2): a `dir` file exactly
    /// [`object_name`] ([`DirAnchor::confined`] included), an
    /// `s3` key that name under a prefix ending in `/` (or none). A `tsa`
    /// entry names no object.
    pub fn names_object_of(&self, cp: &Checkpoint) -> bool {
        let name = object_name(cp);
        match self {
            AnchorEntry::Dir(d) => d.confined() && d.file == name,
            AnchorEntry::S3(s) => s
                .key
                .strip_suffix(name.as_str())
                .is_some_and(|prefix| prefix.is_empty() || prefix.ends_with('/')),
            AnchorEntry::Tsa(_) => true,
        }
    }

    /// The target type: `dir` or `s3`.
    pub fn kind(&self) -> &'static str {
        match self {
            AnchorEntry::Dir(_) => "dir",
            AnchorEntry::S3(_) => "s3",
            AnchorEntry::Tsa(_) => "tsa",
        }
    }
}

/// A `dir:` anchor: `<dir>/<file>` holds the note's bytes. `file` must be
/// a relative path of plain components ([`DirAnchor::confined`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirAnchor {
    /// The target directory, absolute.
    pub dir: String,
    /// The file's path below `dir` (`<origin, escaped>/<size>-<root>.note`).
    pub file: String,
    /// File mode bits after writing (e.g. 0o444 = 292).
    pub mode: u32,
    /// Whether the immutable attribute (`chattr +i`) was set.
    pub immutable: bool,
}

impl DirAnchor {
    /// `file` stays below `dir`: relative, no `..`, no root, non-empty. A
    /// record naming anything else is rejected, never read.
    pub fn confined(&self) -> bool {
        let file = std::path::Path::new(&self.file);
        std::path::Path::new(&self.dir).is_absolute()
            && !self.file.is_empty()
            && !self.file.contains('\0')
            && !self.dir.contains('\0')
            && file
                .components()
                .all(|c| matches!(c, std::path::Component::Normal(_)))
    }
}

/// An `s3:` anchor: one object version under Object Lock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct S3Anchor {
    /// The endpoint URL given with `--endpoint`; absent for AWS itself.
    pub endpoint: Option<String>,
    pub region: String,
    pub bucket: String,
    pub key: String,
    /// The version the PUT created (absent only on an unversioned bucket,
    /// which `anchor verify` reports as a weak anchor).
    pub version_id: Option<String>,
    pub etag: Option<String>,
    /// Base64 SHA-256 of the object as the server acknowledged it.
    pub checksum_sha256: Option<String>,
    /// `COMPLIANCE` or `GOVERNANCE`.
    pub lock_mode: String,
    /// RFC 3339 UTC, whole seconds.
    pub retain_until: String,
    pub legal_hold: bool,
    /// The server's request id for the PUT, when it sent one.
    pub request_id: Option<String>,
}

/// A `tsa:` anchor: an RFC 3161 time-stamp token whose message imprint is
/// the SHA-256 of the note, verified against the TSA roots before it was
/// recorded. `token` is what verifies; the other members repeat what the
/// token says, for reading.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TsaAnchor {
    /// The TSA's URL.
    pub url: String,
    /// Base64 DER of the TimeStampResp as received (RFC 3161 §2.4.2).
    pub token: String,
    /// The token's genTime, RFC 3339 UTC.
    pub gen_time: String,
    /// The imprint's hash algorithm (`sha256`).
    pub imprint_alg: String,
    /// The token's serial number (hex) and policy OID.
    pub serial: String,
    pub policy: String,
    /// The TSA signer certificate's subject.
    pub signer: String,
}

impl AnchorBody {
    /// The body for `note` (already verified) anchored as `anchors`.
    pub fn new(note: &str, checkpoint: &Checkpoint, anchors: Vec<AnchorEntry>) -> Self {
        AnchorBody {
            note: note.to_owned(),
            note_sha256: sha256_hex(note.as_bytes()),
            origin: checkpoint.origin.clone(),
            size: checkpoint.size,
            root: crate::hex::encode(&checkpoint.root),
            anchors,
        }
    }

    /// The root as bytes, if well-formed.
    pub fn root_hash(&self) -> Option<Hash> {
        crate::hex::decode_lower::<32>(self.root.as_bytes())
    }
}

/// Lowercase hex SHA-256.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    crate::hex::encode(&sha2::Sha256::digest(bytes))
}

/// An anchor record found in a log.
#[derive(Debug, Clone)]
pub struct FoundAnchor {
    /// The seq of the `anchor` record.
    pub seq: u64,
    /// Its body, or why it could not be read.
    pub body: std::result::Result<AnchorBody, String>,
}

/// Everything a pass over a log's records collects for anchors and
/// receipts (never every leaf: memory stays bounded by the anchors).
#[derive(Debug)]
pub struct LogScan {
    /// The verifier's report on the log (read through [`crate::chain::read`]).
    pub report: crate::chain::LogReport,
    /// Complete records.
    pub records: u64,
    /// (seq, note) of the last checkpoint or key rotation record.
    pub last_checkpoint: Option<(u64, String)>,
    /// (seq, SHA-256 hex of the note) of every checkpoint or key rotation
    /// record, in order (the verifier compared each one's root with the
    /// tree).
    pub checkpoints: Vec<(u64, String)>,
    /// Every `anchor` record.
    pub anchors: Vec<FoundAnchor>,
    /// The origin of the first record.
    pub origin: Option<String>,
}

/// Reads a log once through the validated reader: the last embedded
/// checkpoint note and every anchor record, with the verifier's report
/// (structural verification; signatures are checked by the callers'
/// trust path).
pub fn scan_log(path: &Path) -> Result<LogScan> {
    use crate::chain::{read, record::KIND_CHECKPOINT, record::KIND_KEY_ROTATION};
    let mut last_checkpoint = None;
    let mut checkpoints = Vec::new();
    let mut anchors = Vec::new();
    let report = read::read_log(path, &crate::chain::VerifyOptions::default(), &mut |r| {
        if r.kind == KIND_CHECKPOINT.as_bytes() || r.kind == KIND_KEY_ROTATION.as_bytes() {
            let note = serde_json::from_slice::<serde_json::Value>(r.body)
                .ok()
                .and_then(|v| v.get("note")?.as_str().map(str::to_owned));
            if let Some(note) = note {
                checkpoints.push((r.seq, sha256_hex(note.as_bytes())));
                last_checkpoint = Some((r.seq, note));
            }
        } else if r.kind == KIND_ANCHOR.as_bytes() {
            anchors.push(FoundAnchor {
                seq: r.seq,
                body: serde_json::from_slice(r.body).map_err(|e| e.to_string()),
            });
        }
    })?;
    Ok(LogScan {
        records: report.records,
        origin: report.origin.clone(),
        report,
        last_checkpoint,
        checkpoints,
        anchors,
    })
}

/// The object name of a checkpoint below a target: content-addressed by
/// origin, size and root, so a retry writes the same name.
pub fn object_name(cp: &Checkpoint) -> String {
    format!(
        "{}/{:020}-{}.note",
        escape_origin(&cp.origin),
        cp.size,
        crate::hex::encode(&cp.root)
    )
}

/// Splits an object name relative to a target ([`object_name`]'s form:
/// `<origin folder>/<size, 20 digits>-<root, 64 lowercase hex>.note`) into
/// the origin its folder stands for, the size and the root. `None` for any
/// other name (another extension, a folder deeper, a size over `u64`, an
/// uppercase or short root, a folder that is no escaped origin).
pub fn parse_object_name(name: &str) -> Option<(String, u64, Hash)> {
    let (folder, file) = name.split_once('/')?;
    let origin = unescape_origin(folder)?;
    let stem = file.strip_suffix(".note")?;
    let (size, root) = stem.split_once('-')?;
    if size.len() != 20 || !size.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let size: u64 = size.parse().ok()?;
    let root = crate::hex::decode_lower::<32>(root.as_bytes())?;
    Some((origin, size, root))
}

/// The folder of an origin's checkpoints below a target.
pub fn origin_folder(origin: &str) -> String {
    escape_origin(origin)
}

/// The origin an escaped folder name stands for ([`escape_origin`]'s
/// inverse), when the name is exactly such an escape.
pub fn unescape_origin(folder: &str) -> Option<String> {
    let b = folder.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = folder.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    let origin = String::from_utf8(out).ok()?;
    (!origin.is_empty() && escape_origin(&origin) == folder).then_some(origin)
}

/// Escapes an origin for use as one path segment: bytes other than
/// `[A-Za-z0-9._-]` become `%XX` (uppercase hex).
pub fn escape_origin(origin: &str) -> String {
    let mut out = String::with_capacity(origin.len());
    for b in origin.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_names_parse_back_and_nothing_else_does() {
        let cp = Checkpoint {
            origin: "example.com/log".into(),
            size: 42,
            root: [0xab; 32],
            extensions: vec![],
        };
        let name = object_name(&cp);
        assert_eq!(
            parse_object_name(&name),
            Some(("example.com/log".to_owned(), 42, [0xab; 32]))
        );
        let root = "ab".repeat(32);
        for bad in [
            format!("example.com%2Flog/99999999999999999999-{root}.note"),
            "example.com%2Flog/99999999999999999999-junk.note".to_owned(),
            format!("example.com%2Flog/0000000000000000042-{root}.note"),
            format!("example.com%2Flog/000000000000000000042-{root}.note"),
            format!(
                "example.com%2Flog/00000000000000000042-{}.note",
                root.to_uppercase()
            ),
            format!("example.com%2Flog/00000000000000000042-{root}.note.bak"),
            format!("example.com%2Flog/00000000000000000042-{root}"),
            format!("example.com%2Flog/00000000000000000042_{root}.note"),
            format!("example.com%2Flog/sub/00000000000000000042-{root}.note"),
            format!("example.com/log/00000000000000000042-{root}.note"),
            format!("example.com%2flog/00000000000000000042-{root}.note"),
            format!("00000000000000000042-{root}.note"),
            format!("example.com%2Flog/+0000000000000000042-{root}.note"),
        ] {
            assert_eq!(parse_object_name(&bad), None, "{bad}");
        }
    }
}
