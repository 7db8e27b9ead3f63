//! Comparing a target with its baseline: configuration documents and MCP definitions as changes with severities.

use super::*;

pub(super) fn item_kind(kind: &str) -> Option<ItemKind> {
    Some(match kind {
        "tool" => ItemKind::Tool,
        "prompt" => ItemKind::Prompt,
        "resource" => ItemKind::Resource,
        "resource_template" => ItemKind::ResourceTemplate,
        _ => return None,
    })
}

pub(super) fn op_kind(op: json::diff::Op) -> ChangeKind {
    match op {
        json::diff::Op::Added => ChangeKind::Added,
        json::diff::Op::Removed => ChangeKind::Removed,
        json::diff::Op::Changed => ChangeKind::Changed,
    }
}

pub(super) fn keyed_change(item: String, kind: ChangeKind, fields: Vec<Field>) -> Change {
    Change {
        key: item.as_bytes().to_vec(),
        item,
        item_b64: None,
        change: kind,
        from: None,
        severity: None,
        expected: false,
        fields,
        from_key: None,
    }
}

pub(super) fn config_changes(a: &Value, b: &Value) -> Vec<Change> {
    json::diff::diff(a, b)
        .into_iter()
        .map(|c| {
            let item = if c.pointer.is_empty() {
                "/".to_owned()
            } else {
                c.pointer.clone()
            };
            let mut ch = keyed_change(
                item,
                op_kind(c.op),
                vec![Field::plain("value", c.before, c.after)],
            );
            ch.key = c.pointer.into_bytes();
            ch
        })
        .collect()
}

pub(super) fn mcp_changes(
    a: &[McpItem],
    b: &[McpItem],
    base_meta: &Map<String, Value>,
    now_meta: &Map<String, Value>,
) -> Vec<Change> {
    let mut out = Vec::new();
    for kind in [
        ItemKind::Tool,
        ItemKind::Prompt,
        ItemKind::Resource,
        ItemKind::ResourceTemplate,
    ] {
        let defs = |items: &[McpItem]| -> Vec<Value> {
            items
                .iter()
                .filter(|i| item_kind(&i.kind) == Some(kind))
                .map(|i| i.definition.clone())
                .collect()
        };
        for c in defdiff::diff_items(kind, &defs(a), &defs(b)) {
            let item = format!("{}:{}", kind.as_str(), c.key);
            let (ck, from) = match &c.change {
                ItemChangeKind::Added => (ChangeKind::Added, None),
                ItemChangeKind::Removed => (ChangeKind::Removed, None),
                ItemChangeKind::Changed => (ChangeKind::Changed, None),
                ItemChangeKind::Renamed { from } => (
                    ChangeKind::Renamed,
                    Some(format!("{}:{from}", kind.as_str())),
                ),
            };
            let fields = c
                .fields
                .iter()
                .map(|f| Field {
                    field: f.pointer.clone(),
                    before: f.before.clone(),
                    after: f.after.clone(),
                    reason: Some(f.reason.to_owned()),
                    severity: Some(severity_text(f.severity).to_owned()),
                    words: f.words.as_deref().map(json::diff::render_words),
                })
                .collect();
            let mut ch = keyed_change(item, ck, fields);
            ch.severity = Some(severity_text(c.severity).to_owned());
            ch.from_key = from.as_ref().map(|f| f.as_bytes().to_vec());
            ch.from = from;
            out.push(ch);
        }
    }
    // What the server says about itself: its instructions reach the model.
    let text = |m: &Map<String, Value>| {
        m.get("instructions")
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let (ia, ib) = (text(base_meta), text(now_meta));
    if ia != ib {
        let words = match (&ia, &ib) {
            (Some(x), Some(y)) => Some(json::diff::render_words(&json::diff::word_diff(x, y))),
            _ => None,
        };
        let kind = match (&ia, &ib) {
            (None, _) => ChangeKind::Added,
            (_, None) => ChangeKind::Removed,
            _ => ChangeKind::Changed,
        };
        let mut ch = keyed_change(
            "server:instructions".into(),
            kind,
            vec![Field {
                words,
                reason: Some("instructions_changed".into()),
                severity: Some("high".into()),
                ..Field::plain("instructions", ia.map(Value::String), ib.map(Value::String))
            }],
        );
        ch.severity = Some("high".into());
        out.push(ch);
    }
    for (member, item) in [("server_info", "server:info"), ("era", "server:protocol")] {
        let (x, y) = (base_meta.get(member), now_meta.get(member));
        if !jsondiff_eq(x, y) {
            let fields = json::diff::diff(x.unwrap_or(&Value::Null), y.unwrap_or(&Value::Null))
                .into_iter()
                .map(|c| Field {
                    severity: Some("low".into()),
                    ..Field::plain(
                        if c.pointer.is_empty() {
                            "/".into()
                        } else {
                            c.pointer
                        },
                        c.before,
                        c.after,
                    )
                })
                .collect();
            let mut ch = keyed_change(item.into(), ChangeKind::Changed, fields);
            ch.severity = Some("low".into());
            out.push(ch);
        }
    }
    out
}

pub(super) fn jsondiff_eq(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a, b) {
        (Some(x), Some(y)) => json::diff::json_eq(x, y),
        (None, None) => true,
        _ => false,
    }
}

pub(super) fn severity_text(s: defdiff::Severity) -> &'static str {
    match s {
        defdiff::Severity::Low => "low",
        defdiff::Severity::Medium => "medium",
        defdiff::Severity::High => "high",
    }
}

/// The differences from `base` to `now`.
pub fn compare(target: &Target, base: &Snapshot, now: &Now, rules: &Rules) -> Vec<Change> {
    match (&target.spec, &base.items, &now.snapshot.items) {
        (TargetSpec::Dir(root), Items::Dir(a), Items::Dir(b)) => {
            dirdiff::compare(a, b, &now.problems, rules, root)
        }
        (_, Items::Config(a), Items::Config(b)) => config_changes(a, b),
        (_, Items::Mcp(a), Items::Mcp(b)) => mcp_changes(a, b, &base.meta, &now.snapshot.meta),
        _ => Vec::new(),
    }
}
