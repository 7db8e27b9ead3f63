//! vouch: an audit and evidence toolkit centred on verification.
//!
//! Every capability writes records into one chain format (see `docs/FORMAT.md`):
//! a hash-chained JSON Lines log whose lines are also the leaves of an RFC 6962
//! Merkle tree, with C2SP signed-note checkpoints.
#![forbid(unsafe_code)]

pub mod anchor;
pub mod chain;
pub mod drift;
pub mod dsse;
pub mod enforce;
pub mod error;
pub mod files;
pub mod fs;
pub mod hex;
pub mod jcs;
pub mod json;
pub mod mcp;
pub mod merkle;
pub mod note;
pub mod objstore;
pub(crate) mod pem;
pub mod receipt;
pub mod redact;
pub mod stamp;
pub(crate) mod swar;
pub mod time;
pub mod tsa;
pub mod vet;

pub use error::{Error, Result};
