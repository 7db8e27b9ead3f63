//! The MCP layer: what vouch knows of the Model Context Protocol, shared
//! by every capability that speaks it or records what was spoken.
//!
//! - [`listing`]: the stdio client that starts a server ([`ServerSpec`],
//!   [`host_config_servers`]), lists its definitions in either protocol
//!   era and stops it (`drift` snapshots, `vet`).
//! - [`message`]: one JSON-RPC line as the wrapper reads and writes it:
//!   exact bytes, kind, decoded id (`enforce`).
//! - [`protocol`]: the protocol revisions and `_meta` keys both of the
//!   above speak.
//! - [`defdiff`]: tool, prompt and resource definitions: canonical and
//!   semantic hashes, matching and a rated field diff (`drift`, `vet`).
//! - [`wrapped`]: recognising `vouch wrap` in a server's command line
//!   (the client refuses to start the wrapper; `vet` records it).
//!
//! Nothing here writes the chain; the capabilities record what this layer
//! returns.

mod client;
pub mod defdiff;
mod error;
pub mod listing;
pub mod message;
pub mod protocol;
mod spec;
mod transport;
pub mod wrapped;

pub use error::{CommandProblem, McpError, StderrTail};
pub use listing::{Era, ListOptions, Listing, list};
pub use spec::{ServerSpec, host_config_servers};
