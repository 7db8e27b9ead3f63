//! Drift detection across runs (docs/FORMAT.md §17): file trees,
//! structured configuration and MCP tool definitions, with every snapshot,
//! acceptance and recorded check in the signed chain.

pub mod config;
pub mod defdiff;
pub mod entry;
pub mod jsondiff;

pub use entry::{EntryKind, TreeEntry};
