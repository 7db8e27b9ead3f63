//! Snapshot files: what a target looked like, content-addressed beside
//! the log (docs/FORMAT.md §17.2).
//!
//! A snapshot is JSON Lines, every line in RFC 8785 form: a header, then
//! one line per item (directory entry, configuration document, MCP
//! definition), sorted. It is stored as `LOG.vouch-drift/HEX.jsonl`, where
//! HEX is the SHA-256 of its bytes, and the chain record that uses it
//! names that digest: a snapshot file that was altered, swapped or removed
//! is detected on read ([`read`]), before anything in it is used. Writing
//! is atomic (a temporary file renamed into place), and identical
//! snapshots share one file.
//!
//! Bounds: a line is at most 64 MiB and a snapshot at most 16 GiB; items
//! are parsed one line at a time.

use super::entry::{EntryKind, TreeEntry};
use super::error::DriftError;
use crate::files::path;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::io::{BufRead, Write};

use std::path::{Path, PathBuf};

pub const SNAPSHOT_FORMAT: &str = "vouch-drift-snapshot/1";
const MAX_LINE: usize = 64 << 20;
const MAX_FILE: u64 = 16 << 30;

/// What kind of target a snapshot is of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TargetKind {
    Dir,
    Config,
    Mcp,
}

impl TargetKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TargetKind::Dir => "dir",
            TargetKind::Config => "config",
            TargetKind::Mcp => "mcp",
        }
    }
}

/// An MCP definition as listed: its kind (`tool`, `prompt`, `resource`,
/// `resource_template`), key (name or URI) and the raw JSON the server sent.
#[derive(Debug, Clone, PartialEq)]
pub struct McpItem {
    pub kind: String,
    pub key: String,
    pub definition: Value,
}

impl McpItem {
    /// The order of items in a snapshot: tools, prompts, resources, then
    /// resource templates, each by key. A snapshot holds its items in
    /// strictly increasing order (one item per kind and key).
    pub fn order(&self) -> (u8, &str) {
        let rank = match self.kind.as_str() {
            "tool" => 0,
            "prompt" => 1,
            "resource" => 2,
            _ => 3,
        };
        (rank, &self.key)
    }
}

/// The kinds an MCP item may be of.
const MCP_KINDS: [&str; 4] = ["tool", "prompt", "resource", "resource_template"];

/// A snapshot's items.
#[derive(Debug, Clone, PartialEq)]
pub enum Items {
    Dir(Vec<TreeEntry>),
    Config(Value),
    Mcp(Vec<McpItem>),
}

impl Items {
    pub fn kind(&self) -> TargetKind {
        match self {
            Items::Dir(_) => TargetKind::Dir,
            Items::Config(_) => TargetKind::Config,
            Items::Mcp(_) => TargetKind::Mcp,
        }
    }
    pub fn count(&self) -> u64 {
        match self {
            Items::Dir(e) => e.len() as u64,
            Items::Config(_) => 1,
            Items::Mcp(i) => i.len() as u64,
        }
    }
}

/// A whole snapshot: the target's name, kind-specific metadata (for a
/// directory: its rules; for a configuration file: its syntax; for an MCP
/// server: the era, the capabilities declared, what the server said about
/// itself), and the items.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    pub target: String,
    pub meta: Map<String, Value>,
    pub items: Items,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Header {
    format: String,
    kind: TargetKind,
    target: String,
    count: u64,
    meta: Map<String, Value>,
}

/// The folder snapshots of `log` are stored in.
pub fn store(log: &Path) -> PathBuf {
    let mut s = log.as_os_str().to_owned();
    s.push(".vouch-drift");
    PathBuf::from(s)
}

/// `sha256:HEX` of a snapshot's bytes.
pub fn digest_text(d: &[u8; 32]) -> String {
    format!("sha256:{}", crate::hex::encode(d))
}

fn hex_of(digest: &str) -> Option<&str> {
    let h = digest.strip_prefix("sha256:")?;
    (h.len() == 64 && h.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))).then_some(h)
}

/// The file a snapshot digest names (None for a malformed digest).
pub fn file_of(log: &Path, digest: &str) -> Option<PathBuf> {
    Some(store(log).join(format!("{}.jsonl", hex_of(digest)?)))
}

fn mode_text(mode: u32) -> String {
    format!("{mode:04o}")
}

/// The JSON line of a directory entry.
pub fn entry_json(e: &TreeEntry) -> Value {
    let mut m = Map::new();
    let (p, p64) = path::to_json(&e.path);
    if let Some(p) = p {
        m.insert("path".into(), p.into());
    }
    if let Some(p) = p64 {
        m.insert("path_b64".into(), p.into());
    }
    m.insert("type".into(), e.kind.as_str().into());
    m.insert("mode".into(), mode_text(e.mode).into());
    m.insert("uid".into(), e.uid.into());
    m.insert("gid".into(), e.gid.into());
    if let Some(s) = e.size {
        m.insert("size".into(), s.into());
    }
    if let Some(l) = &e.link {
        let (t, t64) = path::to_json(l);
        if let Some(t) = t {
            m.insert("link".into(), t.into());
        }
        if let Some(t) = t64 {
            m.insert("link_b64".into(), t.into());
        }
    }
    if let Some(h) = &e.sha256 {
        m.insert("sha256".into(), crate::hex::encode(h).into());
    }
    if let Some((s, n)) = e.mtime {
        m.insert("mtime".into(), format!("{s}.{n:09}").into());
    }
    if let Some(i) = e.inode {
        // As text: inode numbers can exceed 2^53, which JSON numbers in
        // RFC 8785 form cannot hold exactly.
        m.insert("inode".into(), i.to_string().into());
    }
    Value::Object(m)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EntryLine {
    path: Option<String>,
    path_b64: Option<String>,
    #[serde(rename = "type")]
    kind: EntryKind,
    mode: String,
    uid: u32,
    gid: u32,
    size: Option<u64>,
    link: Option<String>,
    link_b64: Option<String>,
    sha256: Option<String>,
    mtime: Option<String>,
    inode: Option<String>,
}

fn entry_of_line(l: EntryLine) -> std::result::Result<TreeEntry, String> {
    let p = path::from_json(l.path.as_deref(), l.path_b64.as_deref())
        .ok_or("path: exactly one of path and path_b64")?;
    path::check(&p).map_err(|e| format!("path: {e}"))?;
    let mode = u32::from_str_radix(&l.mode, 8)
        .ok()
        .filter(|m| *m <= 0o7777 && l.mode.len() == 4)
        .ok_or("mode: four octal digits")?;
    let link = match (l.link.as_deref(), l.link_b64.as_deref()) {
        (None, None) => None,
        (a, b) => Some(path::from_json(a, b).ok_or("link: exactly one of link and link_b64")?),
    };
    let sha256 = match &l.sha256 {
        None => None,
        Some(h) => Some(
            crate::hex::decode_lower::<32>(h.as_bytes())
                .ok_or("sha256: 64 lowercase hex digits")?,
        ),
    };
    let mtime = match &l.mtime {
        None => None,
        Some(t) => {
            let (s, n) = t.split_once('.').ok_or("mtime: SECONDS.NANOSECONDS")?;
            let s: i64 = s.parse().map_err(|_| "mtime: seconds")?;
            let n: u32 = n
                .parse()
                .ok()
                .filter(|n| *n < 1_000_000_000)
                .ok_or("mtime: nanoseconds")?;
            Some((s, n))
        }
    };
    let shape_ok = match l.kind {
        EntryKind::File => l.size.is_some() && sha256.is_some() && link.is_none(),
        EntryKind::Symlink => link.is_some() && sha256.is_none(),
        _ => l.size.is_none() && sha256.is_none() && link.is_none(),
    };
    if !shape_ok {
        return Err(format!("members do not fit type {:?}", l.kind.as_str()));
    }
    Ok(TreeEntry {
        path: p,
        kind: l.kind,
        size: l.size,
        mode,
        uid: l.uid,
        gid: l.gid,
        link,
        sha256,
        mtime,
        inode: match &l.inode {
            None => None,
            Some(i) => Some(i.parse().map_err(|_| "inode: decimal text")?),
        },
        nlink: None,
    })
}

fn mcp_json(i: &McpItem) -> Value {
    json!({
        "kind": i.kind,
        "key": i.key,
        "definition": i.definition,
    })
}

fn canonical(v: &Value, file: &Path) -> Result<Vec<u8>> {
    crate::jcs::to_canonical_vec(v)
        .map_err(|e| Error::io(file, std::io::Error::other(e.to_string())))
}

/// A writer that hashes what goes through it.
struct Hashing<W: Write> {
    out: W,
    hasher: ring::digest::Context,
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.out.write(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// Writes the bytes of `snap` as a snapshot file (what [`write`] stores
/// and [`read`] checks) to `out`; `file` names it in errors.
pub fn encode(out: &mut dyn Write, snap: &Snapshot, file: &Path) -> Result<()> {
    let header = Header {
        format: SNAPSHOT_FORMAT.into(),
        kind: snap.items.kind(),
        target: snap.target.clone(),
        count: snap.items.count(),
        meta: snap.meta.clone(),
    };
    let hv = serde_json::to_value(&header).map_err(|source| Error::Serialize {
        what: "drift snapshot",
        source,
    })?;
    let mut put = |v: &Value| -> Result<()> {
        let mut line = canonical(v, file)?;
        line.push(b'\n');
        out.write_all(&line).map_err(|e| Error::io(file, e))
    };
    put(&hv)?;
    match &snap.items {
        Items::Dir(entries) => {
            for e in entries {
                put(&entry_json(e))?;
            }
        }
        Items::Config(doc) => {
            // `{"document":DOC}` in RFC 8785 form, written around the
            // document's own canonical bytes: through the writer the
            // wrapper would count as a level, and a document at the
            // nesting limit a configuration may have (64) could not be
            // stored.
            let mut line = b"{\"document\":".to_vec();
            line.extend_from_slice(&canonical(doc, file)?);
            line.extend_from_slice(b"}\n");
            out.write_all(&line).map_err(|e| Error::io(file, e))?;
        }
        Items::Mcp(items) => {
            for i in items {
                put(&mcp_json(i))?;
            }
        }
    }
    Ok(())
}

/// Writes `snap` into the store of `log`; returns its digest.
pub fn write(log: &Path, snap: &Snapshot) -> Result<String> {
    let dir = store(log);
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    let mut tmp = tempfile_in(&dir)?;
    let hasher = {
        let mut hashing = Hashing {
            out: std::io::BufWriter::with_capacity(1 << 20, &mut tmp.1),
            hasher: ring::digest::Context::new(&ring::digest::SHA256),
        };
        encode(&mut hashing, snap, &tmp.0)?;
        hashing.flush().map_err(|e| Error::io(&tmp.0, e))?;
        hashing.hasher
    };
    tmp.1.sync_all().map_err(|e| Error::io(&tmp.0, e))?;
    let d: [u8; 32] = hasher
        .finish()
        .as_ref()
        .try_into()
        .map_err(|_| Error::io(&tmp.0, std::io::Error::other("digest")))?;
    let digest = digest_text(&d);
    let Some(dest) = file_of(log, &digest) else {
        return Err(Error::io(&dir, std::io::Error::other("digest")));
    };
    std::fs::rename(&tmp.0, &dest).map_err(|e| {
        let _ = std::fs::remove_file(&tmp.0);
        Error::io(&dest, e)
    })?;
    Ok(digest)
}

fn tempfile_in(dir: &Path) -> Result<(PathBuf, std::fs::File)> {
    for _ in 0..16 {
        let mut r = [0u8; 8];
        getrandom::fill(&mut r)
            .map_err(|e| Error::io(dir, std::io::Error::other(e.to_string())))?;
        let p = dir.join(format!(".tmp-{}", crate::hex::encode(&r)));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&p)
        {
            Ok(f) => return Ok((p, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(Error::io(&p, e)),
        }
    }
    Err(Error::io(dir, std::io::Error::other("no temporary name")))
}

/// Reads the snapshot `digest` named by record `seq` from the store of
/// `log`, checking its bytes against the digest before returning anything,
/// and that it is a snapshot of `target` of `kind`.
pub fn read(
    log: &Path,
    digest: &str,
    seq: u64,
    target: &str,
    kind: TargetKind,
) -> Result<Snapshot> {
    let Some(file) = file_of(log, digest) else {
        return Err(Error::Drift(DriftError::Record {
            seq,
            kind: "drift",
            problem: format!("snapshot digest {digest:?} is not sha256:HEX"),
        }));
    };
    let f = match crate::fs::open_regular(&file) {
        Ok(f) => f,
        Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::Drift(DriftError::SnapshotMissing {
                seq,
                digest: digest.to_owned(),
                store: store(log).display().to_string(),
            }));
        }
        // Something other than a regular file where a snapshot should be
        // (a FIFO, a device) is not what was recorded: rejected.
        Err(Error::NotARegularFile { kind, .. }) => {
            return Err(Error::Drift(DriftError::SnapshotAltered {
                seq,
                digest: digest.to_owned(),
                actual: format!("(not a regular file: {kind})"),
            }));
        }
        Err(e) => return Err(e),
    };
    let len = f.metadata().map_err(|e| Error::io(&file, e))?.len();
    if len > MAX_FILE {
        return Err(Error::TooLarge {
            path: file,
            max: MAX_FILE,
        });
    }
    let mut r = std::io::BufReader::with_capacity(1 << 20, f);
    parse_from(&mut r, len, &file, digest, seq, target, kind)
}

/// [`read`] on the bytes of a snapshot file held in memory: the same
/// checks (digest, form, target, kind, count).
pub fn parse(
    bytes: &[u8],
    digest: &str,
    seq: u64,
    target: &str,
    kind: TargetKind,
) -> Result<Snapshot> {
    let mut r = bytes;
    parse_from(
        &mut r,
        bytes.len() as u64,
        Path::new("snapshot"),
        digest,
        seq,
        target,
        kind,
    )
}

/// Reads a snapshot of `len` bytes from `r` (`file` names it in errors).
fn parse_from(
    r: &mut dyn BufRead,
    len: u64,
    file: &Path,
    digest: &str,
    seq: u64,
    target: &str,
    kind: TargetKind,
) -> Result<Snapshot> {
    let form = |line: u64, problem: String| {
        Error::Drift(DriftError::SnapshotForm {
            digest: digest.to_owned(),
            line,
            problem,
        })
    };
    let mut hasher = ring::digest::Context::new(&ring::digest::SHA256);
    let mut header: Option<Header> = None;
    // Items are parsed as their lines go by (a directory entry straight
    // into its struct), so a large snapshot is held once.
    let mut entries: Vec<TreeEntry> = Vec::new();
    let mut values: Vec<Value> = Vec::new();
    let mut buf = Vec::new();
    let mut n = 0u64;
    let mut bad: Option<(u64, String)> = None;
    loop {
        buf.clear();
        let k = std::io::Read::take(&mut *r, MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut buf)
            .map_err(|e| Error::io(file, e))?;
        if k == 0 {
            break;
        }
        hasher.update(&buf);
        n += 1;
        if bad.is_some() {
            continue;
        }
        if buf.last() != Some(&b'\n') {
            bad = Some((n, "line too long or not terminated".into()));
            continue;
        }
        let line = &buf[..buf.len() - 1];
        // Every line is RFC 8785 (§17.2): a line in another form (`2.0`
        // for `2`, a reordered object) would read as a value its own
        // canonical form does not give back. The config wrapper
        // `{"document":DOC}` is one level above the document's limit.
        if crate::jcs::validate(line, crate::jcs::DEFAULT_MAX_DEPTH + 1, |_, _| {}).is_err() {
            bad = Some((n, "not in RFC 8785 canonical form".into()));
            continue;
        }
        match &header {
            None => match serde_json::from_slice::<Header>(line) {
                Ok(h) => {
                    // Not yet verified: reserve no more than the file can hold.
                    let fits = usize::try_from(len / 64).unwrap_or(usize::MAX);
                    if h.kind == TargetKind::Dir {
                        entries.reserve_exact(usize::try_from(h.count).unwrap_or(0).min(fits));
                    }
                    header = Some(h);
                }
                Err(e) => bad = Some((n, format!("header: {e}"))),
            },
            Some(h) if h.kind == TargetKind::Dir => {
                match serde_json::from_slice::<EntryLine>(line)
                    .map_err(|e| e.to_string())
                    .and_then(entry_of_line)
                {
                    Ok(e) if entries.last().is_some_and(|l| l.path >= e.path) => {
                        bad = Some((n, "entries not sorted or repeated".into()));
                    }
                    Ok(e) => entries.push(e),
                    Err(p) => bad = Some((n, p)),
                }
            }
            Some(_) => match serde_json::from_slice::<Value>(line) {
                Ok(v) => values.push(v),
                Err(e) => bad = Some((n, e.to_string())),
            },
        }
    }
    let actual = hasher.finish();
    let actual = digest_text(actual.as_ref().try_into().unwrap_or(&[0u8; 32]));
    if actual != digest {
        return Err(Error::Drift(DriftError::SnapshotAltered {
            seq,
            digest: digest.to_owned(),
            actual,
        }));
    }
    if let Some((line, problem)) = bad {
        return Err(form(line, problem));
    }
    let Some(h) = header else {
        return Err(form(1, "empty".into()));
    };
    let mismatch = |problem: String| {
        Error::Drift(DriftError::SnapshotMismatch {
            seq,
            digest: digest.to_owned(),
            problem,
        })
    };
    if h.format != SNAPSHOT_FORMAT {
        return Err(form(1, format!("format {:?}", h.format)));
    }
    if h.target != target {
        return Err(mismatch(format!(
            "it is of target {:?}, the record's is {target:?}",
            h.target
        )));
    }
    if h.kind != kind {
        return Err(mismatch(format!(
            "it is a {} snapshot, the record's is {}",
            h.kind.as_str(),
            kind.as_str()
        )));
    }
    let found = (entries.len() + values.len()) as u64;
    if h.count != found {
        return Err(form(1, format!("count {} but {found} items", h.count)));
    }
    let items = match kind {
        TargetKind::Dir => Items::Dir(entries),
        TargetKind::Config => {
            let mut it = values.into_iter();
            match (it.next(), it.next()) {
                (Some(Value::Object(mut m)), None)
                    if m.len() == 1 && m.contains_key("document") =>
                {
                    Items::Config(m.remove("document").unwrap_or(Value::Null))
                }
                _ => {
                    return Err(form(
                        2,
                        "a config snapshot holds one {\"document\"} line".into(),
                    ));
                }
            }
        }
        TargetKind::Mcp => {
            let mut items = Vec::with_capacity(values.len());
            for (i, v) in values.into_iter().enumerate() {
                let item = (|| {
                    let Value::Object(mut m) = v else { return None };
                    let kind = m.remove("kind")?.as_str()?.to_owned();
                    let key = m.remove("key")?.as_str()?.to_owned();
                    let definition = m.remove("definition")?;
                    if !MCP_KINDS.contains(&kind.as_str()) {
                        return None;
                    }
                    m.is_empty().then_some(McpItem {
                        kind,
                        key,
                        definition,
                    })
                })()
                .ok_or_else(|| {
                    form(
                        i as u64 + 2,
                        "an MCP item is {definition, key, kind}, of a known kind".into(),
                    )
                })?;
                if items
                    .last()
                    .is_some_and(|l: &McpItem| l.order() >= item.order())
                {
                    return Err(form(i as u64 + 2, "items not sorted or repeated".into()));
                }
                items.push(item);
            }
            Items::Mcp(items)
        }
    };
    Ok(Snapshot {
        target: h.target,
        meta: h.meta,
        items,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn mcp(items: &[(&str, &str)]) -> Snapshot {
        Snapshot {
            target: "mcp:srv".into(),
            meta: Map::new(),
            items: Items::Mcp(
                items
                    .iter()
                    .map(|(kind, key)| McpItem {
                        kind: (*kind).into(),
                        key: (*key).into(),
                        definition: json!({"name": key}),
                    })
                    .collect(),
            ),
        }
    }

    fn read(snap: &Snapshot) -> Result<Snapshot> {
        let mut out = Vec::new();
        encode(&mut out, snap, Path::new("t")).unwrap();
        let digest = digest_text(&crate::files::sha256(&out));
        parse(&out, &digest, 1, "mcp:srv", TargetKind::Mcp)
    }

    /// MCP items, like directory entries, are read back only in the one
    /// order vouch writes them: a repeated item would leave which of two
    /// definitions is the baseline to the reader.
    #[test]
    fn mcp_items_must_be_sorted_and_unique() {
        let good = mcp(&[
            ("tool", "a"),
            ("tool", "b"),
            ("prompt", "a"),
            ("resource_template", "a"),
        ]);
        assert_eq!(read(&good).unwrap(), good);
        for bad in [
            mcp(&[("tool", "b"), ("tool", "a")]),
            mcp(&[("tool", "a"), ("tool", "a")]),
            mcp(&[("prompt", "a"), ("tool", "b")]),
        ] {
            let e = read(&bad).unwrap_err().to_string();
            assert!(e.contains("not sorted or repeated"), "{e}");
        }
        let e = read(&mcp(&[("widget", "a")])).unwrap_err().to_string();
        assert!(e.contains("of a known kind"), "{e}");
    }
}
