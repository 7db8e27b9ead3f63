//! Vetting of MCP tool definitions (docs/FORMAT.md §19): a static scan
//! with a versioned, digested ruleset ([`scan`]), trust-on-first-use pins
//! and operator approvals kept in the chain log as signed records
//! ([`record`], [`pins`], [`review`]), and the verdict on each listing
//! ([`gate`]) that `vouch wrap` enforces and `vouch scan` reports; and
//! [`wrapped`], which keeps `vouch scan` from ever starting `vouch wrap`
//! (it scans the wrapped server instead).
//!
//! What is trusted: the log's key (pins and verdicts are statements it
//! signed, judged by [`crate::chain::trust::open_statement`]); the
//! operator's `--id` as the server's identity together with its launch
//! command (never the server's self-reported name). What is not: anything
//! the server says about itself, and any record in the log that the key
//! did not sign.

pub mod error;
pub mod gate;
pub mod pins;
pub mod record;
pub mod report;
pub mod review;
pub mod scan;
pub use error::VetError;
