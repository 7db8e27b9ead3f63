//! Stamping files, trees and streams (docs/FORMAT.md §16).
//!
//! `vouch stamp` hashes every file of a run on all cores, builds an RFC
//! 6962 Merkle tree over domain-separated leaves (path, type, size,
//! SHA-256: [`entry`]), and signs one statement over the root, the file
//! count and the run's metadata: an in-toto Statement v1 in a DSSE
//! envelope ([`statement`], [`crate::dsse`]), signed with the stamping key (the
//! chain's Ed25519 key). Optionally, one RFC 3161 token per run covers the
//! signature bytes, and the statement is recorded as a `stamp` record in a
//! chain log, covered at once by a new signed checkpoint. The receipt
//! ([`receipt`], `vouch-stamp/1`) holds every file's entry, so the tree,
//! and with it every file's inclusion, is recomputed on verify; `stamp
//! extract` cuts a per-file proof with its audit path.
//!
//! What `stamp verify` proves ([`verify`]): that a key the auditor trusts
//! (`--pub`, the one trust path of [`crate::chain::trust`]) signed the
//! statement; that the entries are exactly the tree the statement signs;
//! that each file under `--base` has the recorded bytes (`ok`) or not
//! (`modified`, `missing`, and `extra` files in a stamped directory); with
//! `--tsa-ca`, that the token verifies over the signature (the statement
//! then existed at the token's genTime); and, when the receipt carries it,
//! that the `stamp` record is in the log under a trusted checkpoint and
//! names this statement.
//!
//! What it does not prove, and says so: without a token, when the files
//! existed (the statement's `signedAt` is the signer's own clock); whether
//! the key was retired by a rotation after the stamp (a receipt alone does
//! not carry the log's later history: verify the log itself); the
//! metadata's truth (it is what the signer said, signed).
//!
//! Bounds: receipts are read line by line (header ≤ 16 MiB, entries ≤ 16
//! KiB each); files are hashed in 1 MiB chunks; a file is never followed
//! through a symlink, nor read outside the base on verify.

pub mod ecdsa_key;
pub mod entry;
pub mod error;
pub mod export;
pub mod extract;
pub mod minisign;
pub mod receipt;
pub mod run;
pub mod sigstore;
pub mod statement;
pub mod verify;
pub mod walk;

pub use error::{StampError, StampProblem};
pub use run::{ExportSigner, Input, StampOptions, StampOutcome, Subjects, stamp};
pub use verify::{StampVerifyOptions, StampVerifyReport, verify};
