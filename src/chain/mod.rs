//! The chain: vouch's one log format (docs/FORMAT.md).
//!
//! A log is a JSON Lines file of RFC 8785 canonical records, each linked to
//! the one before by its RFC 6962 leaf hash, and all of them leaves of an
//! RFC 6962 Merkle tree whose roots are signed in C2SP checkpoints
//! (Ed25519 signed notes) embedded in the log as `checkpoint` records.
//!
//! - [`record`]: the line format; parsing without allocation.
//! - [`trust`]: the one place that decides whether a checkpoint counts.
//! - [`verify`]: the offline, parallel verifier (orchestrating [`files`],
//!   `plan`, `scan` (pass 1), `stitch` (pass 2), `incremental`, and
//!   producing [`report`] types).
//! - [`writer`]: append (locked, durable), checkpoint, rotate, repair.
//! - [`proof`]: inclusion proofs as C2SP tlog-proof files.
//! - [`keys`]: key files.
//! - [`segments`]: which files make up a log (the one segment rule).

mod blame;
pub mod source;
pub mod error;
pub mod files;
mod incremental;
pub mod keys;
mod missing;
pub mod options;
mod plan;
pub mod proof;
pub mod read;
pub mod record;
pub mod report;
mod scan;
pub mod segments;
pub mod shard;
pub mod state;
mod stitch;
pub mod stream;
mod tail;
pub mod tree;
pub mod trust;
pub mod verify;
pub mod writer;

pub use blame::Changed;
pub use error::{ChainError, CheckpointProblem, NamedBy, RecordProblem};
pub use keys::KeyFileProblem;
pub use proof::{ProofError, VerifiedInclusion};
pub use tail::TailProblem;
pub use trust::{ROTATION_EXTENSION, TrustedCheckpoint, TrustedKeys};
pub use verify::{FleetReport, LogReport, LogStatus, VerifiedLog, VerifyMode, VerifyOptions};
pub use writer::{BodySource, LogStateProblem, RepairOutcome};
