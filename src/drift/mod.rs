//! Drift detection across runs (docs/FORMAT.md §17): file trees,
//! structured configuration and MCP tool definitions, with every snapshot,
//! acceptance and recorded check in the signed chain.

pub mod change;
pub mod config;
pub mod dirdiff;
pub mod entry;
pub mod error;
pub mod mtree;
pub mod record;
pub mod rules;
pub mod run;
pub mod snapshot;
pub mod tree;

pub use entry::{EntryKind, TreeEntry};
pub use error::{DriftError, TargetProblem};
