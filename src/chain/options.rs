//! What a verification run is given: keys, auditor checkpoints, state,
//! and how to cut files into ranges.

use super::state::{Recheck, VerifyState};
use super::trust::{self, KeyState, Prechecked, TrustError, TrustedKeys};
use crate::note::checkpoint::Checkpoint;
use crate::{Error, Result};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Default size of the byte ranges a file is cut into.
pub const DEFAULT_CHUNK_BYTES: u64 = 8 << 20;

/// A checkpoint an auditor kept from an earlier look at a log; the log must
/// contain it and extend it. Built by [`load_auditor_checkpoint`] or
/// [`AuditorCheckpoint::from_note`], which refuse a note that no key could
/// make count. Whether it counts is decided against the log's trust state
/// at its size (rotations, retired keys) by the verifier, through
/// [`super::trust`].
#[derive(Debug, Clone)]
pub struct AuditorCheckpoint {
    source: PathBuf,
    pre: Prechecked,
}

impl AuditorCheckpoint {
    /// The checkpoint as the note claims it; judged against the log.
    pub fn checkpoint(&self) -> &Checkpoint {
        self.pre.claimed()
    }
    pub fn source(&self) -> &Path {
        &self.source
    }
    pub(crate) fn prechecked(&self) -> &Prechecked {
        &self.pre
    }

    /// Builds an auditor checkpoint from a signed note held in memory (for
    /// example one fetched from an anchor target). `source` names where it
    /// came from, for reports. Refused at once when it is malformed or no
    /// key, given or introduced by a rotation, could make it count (e.g.
    /// signed only by another log's key).
    pub fn from_note(
        source: impl Into<PathBuf>,
        note_bytes: &[u8],
        keys: &TrustedKeys,
    ) -> std::result::Result<Self, TrustError> {
        let pre = trust::precheck(note_bytes, None, None, keys)?;
        match KeyState::new(keys).admit(&pre) {
            Ok(_) => {}
            Err(e @ (TrustError::NoKeys | TrustError::Malformed(_))) => return Err(e),
            Err(e @ TrustError::UnknownKey { .. }) => {
                // Only a key named after the origin that the auditor did not
                // give could still count (one a rotation in the log adds).
                let origin = &pre.claimed().origin;
                let maybe_rotated = pre.signers().iter().any(|(name, id)| {
                    name == origin
                        && !keys
                            .keys()
                            .iter()
                            .any(|k| k.name() == name && k.key_id() == *id)
                });
                if !maybe_rotated {
                    return Err(e);
                }
            }
            // A bad signature by a given key counts against the note only
            // while that key is current: judged against the log.
            Err(TrustError::BadSignature { .. }) => {}
        }
        Ok(AuditorCheckpoint {
            source: source.into(),
            pre,
        })
    }
}

/// Reads a signed checkpoint note from `path` (see
/// [`AuditorCheckpoint::from_note`]). A note that cannot count is an
/// operational error here: the auditor handed vouch something unusable as
/// a reference.
pub fn load_auditor_checkpoint(path: &Path, keys: &TrustedKeys) -> Result<AuditorCheckpoint> {
    let bytes = crate::fs::read_bounded(path, 1 << 20)?;
    AuditorCheckpoint::from_note(path, &bytes, keys).map_err(|problem| Error::UnusableCheckpoint {
        path: path.to_path_buf(),
        problem,
    })
}

/// What to verify against.
#[derive(Debug, Clone)]
pub struct VerifyOptions {
    /// Keys trusted to sign checkpoints. A log of an origin none of them is
    /// named after (all logs, when empty) is `unauthenticated`.
    pub trusted: TrustedKeys,
    /// Checkpoints the auditor kept; matched to logs by origin.
    pub checkpoints: Vec<AuditorCheckpoint>,
    /// Size of the byte ranges files are cut into for parallel scanning.
    pub chunk_bytes: u64,
    /// A saved state to resume from (incremental audit).
    pub state: Option<Arc<VerifyState>>,
    /// How much of the already-verified part a resumed run re-checks.
    pub recheck: Recheck,
    /// Build the state for the next incremental run ([`FleetReport::state`]).
    pub save_state: bool,
    /// Called with the number of bytes read, as scanning goes.
    pub progress: Option<Progress>,
}

/// A progress callback (bytes read so far are reported in increments).
#[derive(Clone)]
pub struct Progress(pub Arc<dyn Fn(u64) + Send + Sync>);

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Progress(..)")
    }
}

impl Default for VerifyOptions {
    fn default() -> Self {
        VerifyOptions {
            trusted: TrustedKeys::default(),
            checkpoints: Vec::new(),
            chunk_bytes: DEFAULT_CHUNK_BYTES,
            state: None,
            recheck: Recheck::Rolling,
            save_state: false,
            progress: None,
        }
    }
}

impl VerifyOptions {
    /// The tree sizes of the auditor's checkpoints, sorted, without
    /// repeats: where a scan snapshots its compact range.
    pub(super) fn snapshot_sizes(&self) -> Vec<u64> {
        let mut sizes: Vec<u64> = self
            .checkpoints
            .iter()
            .map(|c| c.checkpoint().size)
            .collect();
        sizes.sort_unstable();
        sizes.dedup();
        sizes
    }
}
