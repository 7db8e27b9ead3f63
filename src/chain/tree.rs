//! The writer's tree cache: what makes `checkpoint` (and `rotate`,
//! `anchor`) cost the records written since the last checkpoint instead of
//! a re-verification of the whole log and all its segments.
//!
//! Beside the active log file `NAME`, the writer keeps `NAME.vouch-tree`:
//! the compact Merkle range of the records before the last checkpoint
//! record it wrote, that record's byte offset, and the file's identity
//! (device, inode). It is a cache, never trusted on its own word: before
//! use, the checkpoint record at that offset must be a checkpoint of this
//! log, at the cached size, whose root is the cached range's root and
//! which is signed by the writer's own current key (so the range is one
//! this writer signed), and every record after it is scanned by the
//! verifier's scanner (canonical form, links, the roots of any later
//! checkpoints). Anything else (no cache, another file after a rotation,
//! a mismatch) falls back to full verification, which then rebuilds the
//! cache. The new checkpoint extends the tree the writer signed before; a
//! later edit of older records is what `vouch verify` reports (`fork`).

use super::scan::{self, ScanContext, Tail};
use super::state::{hashes_from_hex, hashes_to_hex};
use super::trust::{self, TrustedKeys};
use crate::merkle::CompactRange;
use crate::note::VerifierKey;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

const FORMAT: &str = "vouch-tree/1";
const MAX_CACHE_BYTES: u64 = 64 << 10;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Cache {
    format: String,
    origin: String,
    dev: u64,
    ino: u64,
    /// Byte offset of the checkpoint record's line in the active file.
    offset: u64,
    /// The checkpoint's tree size (= the record's seq).
    size: u64,
    /// Compact range of records [0, size), hex.
    hashes: Vec<String>,
}

/// The cache file of the log at `path`.
pub fn cache_path(path: &Path) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(".vouch-tree");
    PathBuf::from(p)
}

/// The tree of every record of the locked log, from the cache and the
/// records after its checkpoint: `Some((records, range))`, or `None` when
/// the cache cannot be used (the caller verifies in full).
pub(crate) fn cached_tree(
    path: &Path,
    file: &File,
    len: u64,
    origin: &str,
    key: &VerifierKey,
) -> Option<CompactRange> {
    let meta = file.metadata().ok()?;
    let bytes = crate::fs::read_bounded(&cache_path(path), MAX_CACHE_BYTES).ok()?;
    let cache: Cache = serde_json::from_slice(&bytes).ok()?;
    if cache.format != FORMAT
        || cache.origin != origin
        || cache.dev != meta.dev()
        || cache.ino != meta.ino()
        || cache.offset >= len
    {
        return None;
    }
    let before = CompactRange::from_parts(0, cache.size, hashes_from_hex(&cache.hashes)?).ok()?;
    let keys = TrustedKeys::default();
    let ctx = ScanContext {
        trusted: &keys,
        snapshot_sizes: &[],
        progress: None,
    };
    let chunk = scan::scan_file_chunk(file, cache.offset, len, len, &ctx).ok()?;
    if chunk.failure.is_some() || chunk.tail != Tail::None {
        return None;
    }
    let first = chunk.first.as_ref()?;
    let cp = chunk.checkpoints.first()?;
    if first.offset != cache.offset
        || first.seq != cache.size
        || first.origin != origin
        || cp.seq != cache.size
        || cp.checkpoint.root != before.root().ok()?
    {
        return None;
    }
    // The cached range is one this writer signed.
    let own = TrustedKeys::new([key.clone()]).ok()?;
    let note = cp.pre.note_text();
    trust::open_standalone(note.as_bytes(), Some(origin), &own).ok()?;
    // Later checkpoints in the new part must match the tree too.
    for later in &chunk.checkpoints[1..] {
        let mut at = before.clone();
        at.merge(later.range_before.clone()).ok()?;
        if at.root().ok()? != later.checkpoint.root {
            return None;
        }
    }
    let mut all = before;
    all.merge(chunk.range).ok()?;
    Some(all)
}

/// Remembers that the checkpoint record at `offset` of the active file
/// covers `range` ([0, size)). Best effort: a cache that cannot be written
/// only makes the next checkpoint verify in full.
pub(crate) fn save(path: &Path, file: &File, origin: &str, offset: u64, range: &CompactRange) {
    let Ok(meta) = file.metadata() else { return };
    let cache = Cache {
        format: FORMAT.to_owned(),
        origin: origin.to_owned(),
        dev: meta.dev(),
        ino: meta.ino(),
        offset,
        size: range.end(),
        hashes: hashes_to_hex(range.hashes()),
    };
    let Ok(text) = serde_json::to_vec(&cache) else {
        return;
    };
    // A FIFO or device at the cache's name (or its temporary name) is
    // never written through: no cache, and no blocked writer.
    let _ = crate::fs::save_atomic(&cache_path(path), &text);
}
