//! Files as evidence: stamped paths and their display, and hashing files
//! and reading links without following or tearing them.
//!
//! [`path`] is the lossless relative-path form (bytes, `path`/`path_b64`
//! in JSON, `\xNN`-escaped for people); [`hash`] hashes a regular file
//! through the handle it was opened as and reads a symlink's target,
//! checking both are still what the caller saw. Used by `stamp` (walking,
//! stamping and verifying trees) and `drift` (tree snapshots, mtree specs,
//! directory diffs), and by `enforce` to show a path.

pub mod hash;
pub mod path;

pub use hash::{FileProblem, hash_file, read_link, sha256};
