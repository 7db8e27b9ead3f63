//! MCP tool-call enforcement: `vouch wrap` sits between an MCP client and a
//! stdio MCP server, gates every `tools/call` by a TOML policy
//! ([`policy`]) and writes every decision, and the outcome of every call it
//! forwarded, into the signed chain as ordinary records.

pub mod error;
pub mod policy;

pub use error::{EnforceError, EvidenceFailure, PolicyError, PolicyProblem};
pub mod evidence;
pub mod io;
pub mod wrap;
