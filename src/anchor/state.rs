//! `vouch anchor verify --state FILE`: what earlier runs verified, so a
//! daily run downloads only new anchors and checks the lock metadata
//! (HEAD) of the old ones, re-downloading each in full once it is older
//! than the re-check period (a rolling re-download).
//!
//! The state saves work, never trust: a note remembered here is judged by
//! the trust rule again on every run, and a HEAD counts only when the
//! server's SHA-256 checksum of the version is the remembered note's (an
//! S3 version's bytes cannot change), else the object is fetched in full.
//! Editing the file can only make a run download more.

use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The `format` member of an anchor state file.
pub const ANCHOR_STATE_FORMAT: &str = "vouch-anchor-state/1";
/// Largest state file read.
const MAX_STATE_BYTES: u64 = 256 << 20;

/// The anchor state file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnchorState {
    pub format: String,
    /// By object identity (`s3:BUCKET/KEY@VERSION`).
    pub objects: BTreeMap<String, Remembered>,
}

/// One object verified in full by an earlier run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Remembered {
    /// The note the object held, verbatim.
    pub note: String,
    /// When its bytes were last downloaded and compared (Unix seconds).
    pub fetched_unix: i64,
}

impl Default for AnchorState {
    fn default() -> Self {
        AnchorState {
            format: ANCHOR_STATE_FORMAT.to_owned(),
            objects: BTreeMap::new(),
        }
    }
}

impl AnchorState {
    /// Parses the bytes of a state file; `Err` says why they are not one.
    pub fn parse(bytes: &[u8]) -> std::result::Result<AnchorState, String> {
        let state: AnchorState = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
        if state.format != ANCHOR_STATE_FORMAT {
            return Err(format!(
                "format {:?}, not {ANCHOR_STATE_FORMAT}",
                state.format
            ));
        }
        Ok(state)
    }
}

/// A state file and how old a remembered download may be.
#[derive(Debug, Clone)]
pub struct StateFile {
    pub path: PathBuf,
    pub state: AnchorState,
    /// Re-download an object whose last download is older than this.
    pub recheck_secs: i64,
    pub now_unix: i64,
}

impl StateFile {
    /// Loads `path` (a missing file is an empty state). A file that is not
    /// an anchor state is an operational error: nothing is overwritten.
    pub fn load(path: &Path, recheck_days: u32) -> Result<StateFile> {
        let state = match crate::fs::read_bounded_if_exists(path, MAX_STATE_BYTES)? {
            None => AnchorState::default(),
            Some(bytes) => AnchorState::parse(&bytes).map_err(|reason| Error::BadStateFile {
                path: path.to_path_buf(),
                what: "anchor state",
                reason,
            })?,
        };
        Ok(StateFile {
            path: path.to_path_buf(),
            state,
            recheck_secs: i64::from(recheck_days) * 86_400,
            now_unix: crate::time::now_unix(),
        })
    }

    /// The remembered note of `id`, when its last download is recent.
    pub fn fresh(&self, id: &str) -> Option<&str> {
        self.state
            .objects
            .get(id)
            .filter(|r| self.now_unix - r.fetched_unix < self.recheck_secs)
            .map(|r| r.note.as_str())
    }

    /// Remembers a download of `id` that verified now.
    pub fn fetched(&mut self, id: &str, note: &[u8]) {
        if let Ok(note) = std::str::from_utf8(note) {
            self.state.objects.insert(
                id.to_owned(),
                Remembered {
                    note: note.to_owned(),
                    fetched_unix: self.now_unix,
                },
            );
        }
    }

    /// Forgets `id` (it failed: the next run downloads it again).
    pub fn forget(&mut self, id: &str) {
        self.state.objects.remove(id);
    }

    /// Writes the state atomically ([`crate::fs::save_atomic`]: a
    /// temporary file of the run's own, so concurrent runs never rename
    /// each other's file away; fsync; rename). A path that is not a
    /// regular file is refused, never written through.
    pub fn save(&self) -> Result<()> {
        let text = serde_json::to_vec(&self.state).map_err(|source| Error::Serialize {
            what: "the anchor state",
            source,
        })?;
        crate::fs::save_atomic(&self.path, &text)
    }
}
