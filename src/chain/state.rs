//! Incremental audits: what `vouch verify --state FILE` remembers about each
//! log between runs, so the next run verifies only what is new.
//!
//! For each log (by origin) the state keeps: the segment files verified
//! (path, device, inode, verified length), the compact Merkle range of every
//! record so far, the last record's seq and leaf hash, the keys trusted at
//! the end (as the signed rotation notes, replayed on resume), the last checkpoint, and, for every byte range
//! scanned, that range's own compact range ("range digests").
//!
//! How a later run still catches changes to the part already verified:
//! - a segment replaced by another file (new inode, as `sed -i` or an editor
//!   does) or shorter than before: the log is verified in full again;
//! - new records must link to the remembered last record and extend the
//!   remembered tree: every new checkpoint is checked against the root
//!   computed from the remembered compact range, so history rewritten and
//!   re-signed by a key holder is a `fork`;
//! - each run re-reads the last remembered record, and re-scans a rolling
//!   window of older ranges (as many bytes as are new, at least one range, so the
//!   cost stays proportional to new data) and compares them with their
//!   range digests: an in-place edit is `history_changed` once the window
//!   reaches it, and at once with `--recheck all`.
//!
//! The state file is the auditor's own record: keep it where the log's
//! writer cannot change it.

use crate::merkle::Hash;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Format tag of the state file.
pub const STATE_FORMAT: &str = "vouch-verify-state/2";
/// Largest state file read (a fleet's ranges and pins; far above what a
/// large fleet writes).
pub const MAX_STATE_BYTES: u64 = 1 << 30;

/// One scanned byte range and its digest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedRange {
    pub segment: usize,
    pub start: u64,
    pub end: u64,
    /// Seq of the range's first record, when it has one.
    pub first_seq: Option<u64>,
    pub lines: u64,
    /// The range's compact Merkle range, hex.
    #[serde(deserialize_with = "hex_hashes")]
    pub digest: Vec<String>,
}

/// One segment file as verified.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedSegment {
    pub path: PathBuf,
    pub dev: u64,
    pub ino: u64,
    /// An object's ETag when it was verified (objects only; files have
    /// none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub etag: Option<String>,
    /// Bytes verified: the end of the last complete record.
    pub len: u64,
    pub lines: u64,
}

/// What is remembered about one log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedLog {
    pub origin: String,
    pub segments: Vec<SavedSegment>,
    pub ranges: Vec<SavedRange>,
    pub records: u64,
    pub covered: u64,
    pub checkpoints: u64,
    /// Leaf hash of the last record, hex.
    pub last_leaf: String,
    pub last_is_checkpoint: bool,
    /// Compact range over all records from 0, hex.
    #[serde(deserialize_with = "hex_hashes")]
    pub tree: Vec<String>,
    /// The key rotations admitted so far, as signed: replayed through the
    /// trust rule under the keys of the next run, so editing the state file
    /// cannot make a key trusted.
    pub rotations: Vec<SavedRotation>,
    /// The text of the last verified checkpoint.
    pub last_checkpoint: Option<String>,
    /// Next range index the rolling re-check starts from.
    pub recheck_cursor: usize,
    /// The last checkpoint record verified: an authenticated run resumes
    /// from it (see [`ResumePoint`]).
    pub resume: Option<ResumePoint>,
}

/// Where a later authenticated run starts: the last checkpoint (or key
/// rotation) record verified. The run re-reads and re-verifies that record
/// and everything after it, so the trust state it resumes with (the
/// remembered rotations before it, replayed) must be one under which that
/// signed checkpoint counts: a state with rotations left out or changed
/// cannot resume (full verification instead).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResumePoint {
    /// Segment index and byte offset of the record's line.
    pub segment: usize,
    pub offset: u64,
    /// Lines before it in its segment.
    pub line: u64,
    /// Its seq (= the checkpoint's tree size).
    pub seq: u64,
    /// Its `prev`, hex.
    pub prev: String,
    /// Compact range over records [0, seq), hex.
    #[serde(deserialize_with = "hex_hashes")]
    pub tree: Vec<String>,
    /// Checkpoints verified before it, and the records they covered.
    pub checkpoints_before: u64,
    pub covered_before: u64,
}

/// A key rotation as recorded in the log: its signed note and new key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SavedRotation {
    pub note: String,
    pub new_key: String,
}

/// The whole state file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerifyState {
    pub format: String,
    /// Fingerprint of the keys given with `--pub`: a run with other keys
    /// verifies every log in full again (the pins still hold).
    pub keys: String,
    pub logs: BTreeMap<String, SavedLog>,
}

/// How much of the already-verified part each run re-checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Recheck {
    /// The range holding the last remembered record, and a rolling window
    /// of older ranges at least as large as the new data.
    #[default]
    Rolling,
    /// Every remembered range.
    All,
}

impl VerifyState {
    /// Reads a state file; a missing file is an empty state. Anything but
    /// a regular file (a FIFO, a device, a directory) is refused at once
    /// ([`crate::fs::read_bounded`]), as is a file over [`MAX_STATE_BYTES`].
    pub fn load(path: &Path) -> crate::Result<Self> {
        let Some(bytes) = crate::fs::read_bounded_if_exists(path, MAX_STATE_BYTES)? else {
            return Ok(VerifyState::default());
        };
        Self::parse(&bytes).map_err(|reason| crate::Error::BadStateFile {
            path: path.to_path_buf(),
            what: "vouch verify state",
            reason,
        })
    }

    /// Parses the bytes of a state file; `Err` says why they are not one.
    pub fn parse(bytes: &[u8]) -> std::result::Result<Self, String> {
        let state: VerifyState = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
        if state.format != STATE_FORMAT {
            return Err(format!(
                "unsupported state format {:?} (this vouch reads {STATE_FORMAT})",
                state.format
            ));
        }
        Ok(state)
    }

    /// Writes the state atomically ([`crate::fs::save_atomic`]: a
    /// temporary file of this run's own, fsync, rename); a path that is
    /// not a regular file is refused, never written through.
    pub fn save(&self, path: &Path) -> crate::Result<()> {
        let text = serde_json::to_vec(self).map_err(|source| crate::Error::Serialize {
            what: "the verify state",
            source,
        })?;
        crate::fs::save_atomic(path, &text)
    }
}

/// Most hashes in one compact range as saved: a range of a tree of at
/// most 2^64 leaves has at most two per level.
const MAX_SAVED_RANGE_HASHES: usize = 2 * crate::merkle::MAX_TREE_HEIGHT;

/// Reads a saved compact range, refusing anything but at most
/// [`MAX_SAVED_RANGE_HASHES`] strings of 64 lowercase hex digits while it
/// reads: a hostile list of short strings would otherwise cost about 16
/// times its text in memory (a 64 MiB state file held 1.9 GB), so a state
/// file now costs about twice its size.
fn hex_hashes<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    use serde::de::{Error as _, SeqAccess, Visitor};
    struct Hashes;
    impl<'de> Visitor<'de> for Hashes {
        type Value = Vec<String>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            write!(
                f,
                "at most {MAX_SAVED_RANGE_HASHES} SHA-256 hashes in lowercase hex"
            )
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<String>, A::Error> {
            let mut out = Vec::new();
            while let Some(h) = seq.next_element::<std::borrow::Cow<'de, str>>()? {
                if out.len() == MAX_SAVED_RANGE_HASHES {
                    return Err(A::Error::invalid_length(out.len() + 1, &self));
                }
                if crate::hex::decode_lower::<32>(h.as_bytes()).is_none() {
                    // Not echoed: it may be megabytes long.
                    return Err(A::Error::invalid_value(
                        serde::de::Unexpected::Other("another string"),
                        &"a SHA-256 hash in lowercase hex",
                    ));
                }
                out.push(h.into_owned());
            }
            Ok(out)
        }
    }
    d.deserialize_seq(Hashes)
}

pub(crate) fn hashes_to_hex(hashes: &[Hash]) -> Vec<String> {
    hashes.iter().map(|h| crate::hex::encode(h)).collect()
}

pub(crate) fn hashes_from_hex(hex: &[String]) -> Option<Vec<Hash>> {
    hex.iter()
        .map(|h| crate::hex::decode_lower::<32>(h.as_bytes()))
        .collect()
}
