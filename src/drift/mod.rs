//! Drift detection across runs (docs/FORMAT.md §17): file trees,
//! structured configuration and MCP tool definitions, with every snapshot,
//! acceptance and recorded check in the signed chain.

pub mod entry;
pub mod mcp;

pub use entry::{EntryKind, TreeEntry};
