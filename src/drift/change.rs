//! Differences between a baseline and now, in one shape for every kind of
//! target (what reports, `--only` and acceptance work on).

use serde::Serialize;
use serde_json::Value;

/// What happened to one item (a path, a key path, an MCP definition).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    Added,
    Removed,
    Changed,
    /// An MCP definition now under another name (same semantic hash).
    Renamed,
    /// A file of a rotation rule that moved to another rotation path.
    Rotated,
    /// A file of a growing rule that only grew.
    Grown,
}

impl ChangeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Added => "added",
            ChangeKind::Removed => "removed",
            ChangeKind::Changed => "changed",
            ChangeKind::Renamed => "renamed",
            ChangeKind::Rotated => "rotated",
            ChangeKind::Grown => "grown",
        }
    }
}

/// One field of an item that differs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Field {
    /// An attribute name (`mode`, `sha256`) or a JSON Pointer.
    pub field: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after: Option<Value>,
    /// MCP: why the change matters, e.g. `enum_widened`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub severity: Option<String>,
    /// Descriptions: the words removed and added, `[-old-] {+new+}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub words: Option<String>,
}

impl Field {
    pub fn plain(field: impl Into<String>, before: Option<Value>, after: Option<Value>) -> Self {
        Field {
            field: field.into(),
            before,
            after,
            reason: None,
            severity: None,
            words: None,
        }
    }
}

/// One difference.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    /// The item as people read it: a path relative to the target, a JSON
    /// Pointer, or `tool:NAME` (`prompt:`, `resource:`, `resource_template:`).
    pub item: String,
    /// For a path that is not UTF-8: its bytes, base64.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item_b64: Option<String>,
    pub change: ChangeKind,
    /// Renamed / rotated: where it was before.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// MCP: `low`, `medium` or `high`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub severity: Option<String>,
    /// True for changes a rule expects (grown, rotated): reported, not drift.
    pub expected: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<Field>,
    /// The raw key of the item, for selection (`--only`) and acceptance.
    #[serde(skip)]
    pub key: Vec<u8>,
    /// Renamed / rotated: the raw key of where it was.
    #[serde(skip)]
    pub from_key: Option<Vec<u8>>,
}

/// Differences counted as in a `drift_check` record.
pub fn count(changes: &[Change]) -> super::record::Counts {
    let mut c = super::record::Counts::default();
    for ch in changes.iter().filter(|c| !c.expected) {
        match ch.change {
            ChangeKind::Added => c.added += 1,
            ChangeKind::Removed => c.removed += 1,
            ChangeKind::Changed | ChangeKind::Grown => c.changed += 1,
            ChangeKind::Renamed | ChangeKind::Rotated => c.renamed += 1,
        }
    }
    c.expected = changes.iter().filter(|c| c.expected).count() as u64;
    c
}
