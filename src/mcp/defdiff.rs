//! MCP definitions (tools, prompts, resources, resource templates): hashes
//! and a diff that rates each change by what it lets a model or a caller do.
//!
//! Snapshots keep each definition's raw JSON value, unknown fields
//! included; nothing here parses a definition into a typed struct, so a
//! field this code does not know (`execution`, a future one) still changes
//! [`full_hash`] and still appears in the diff.
//!
//! # Hashes
//!
//! * [`full_hash`]: SHA-256 of the RFC 8785 bytes (`crate::jcs`) of the
//!   whole definition. Member order and number spelling (`1.0`/`1`) do not
//!   count; every other byte of meaning does. A value with no RFC 8785 form
//!   (an integer beyond 2^53 with no exact double, nesting deeper than 64)
//!   is hashed as `"vouch-noncanonical\0"` followed by its serde_json
//!   compact form, which keeps the exact integer.
//! * [`semantic_hash`]: the same, after removing what a rename changes: the
//!   key (`name`, `uri`, `uriTemplate`), the top-level `title` and
//!   `description`, `annotations.title`, every `title` and `description`
//!   *schema keyword* in `inputSchema`/`outputSchema` (at schema positions
//!   only: a property named `description` inside `properties` is kept), and
//!   prompt arguments' `title` and `description`.
//!
//! # Matching
//!
//! Items are matched by key (tools and prompts: `name`; resources: `uri`;
//! templates: `uriTemplate`). An item without a string key is keyed
//! `sha256:<full hash>`; a key repeated within one list gets `#2`, `#3`…
//! in list order. Equal full hashes: no change. An unmatched removed item
//! and an unmatched added item with equal semantic hashes are one
//! [`ItemChangeKind::Renamed`] (several candidates: paired in key order),
//! whose fields list every change (the key, and descriptions if they moved
//! too). Output is sorted by (kind, key).
//!
//! Fields are the [`json::diff::diff`] of the two definitions, rated below.
//! Arrays compare by index (an argument inserted first shifts the others).
//! Inside a schema, every change below a keyword is reported once at the
//! keyword (`/inputSchema/properties/mode/enum`, with both whole values);
//! a whole property added or removed is reported at
//! `…/properties/NAME`.
//!
//! # Severities
//!
//! Whole items:
//!
//! | Change | Tool | Prompt | Resource, template |
//! |---|---|---|---|
//! | added | high: the model reads it and may call it | medium | medium |
//! | removed | medium | low | low |
//! | renamed, changed | the highest of its fields (low if none) | same | same |
//!
//! Fields (pointer relative to the definition; reason codes are stable):
//!
//! | Where | Change | Severity | Reason |
//! |---|---|---|---|
//! | `/title`, `/description` | any | high | `title_changed`, `description_changed` |
//! | `/annotations/…` | any | high | `annotation_changed` |
//! | schema `title`/`description` keyword | any | high | `schema_title_changed`, `schema_description_changed` |
//! | prompt `/arguments/i/title`, `…/description` | any | high | `parameter_title_changed`, `parameter_description_changed` |
//! | schema `…/properties/NAME` | added, not required | medium | `optional_parameter_added` |
//! | schema `…/properties/NAME` | added, required | medium | `required_parameter_added` |
//! | schema `…/properties/NAME` | removed | medium | `parameter_removed` |
//! | schema position | replaced by `true` or `{}` | high | `schema_opened` |
//! | schema `enum` | gains a value, or removed | high | `enum_widened` |
//! | schema `enum` | loses values only, or added | medium | `enum_narrowed` |
//! | schema `required` | a name dropped | high | `required_dropped` |
//! | schema `required` | names added only | medium | `required_added` |
//! | schema `type` | admits more (`"string"` → `["string","null"]`, `integer` → `number`, removed) | high | `type_broadened` |
//! | schema `type` | other | medium | `type_narrowed` / `type_changed` |
//! | schema `additionalProperties` | absent/`false` → `true`/schema | high | `additional_properties_opened` |
//! | schema `additionalProperties` | `true`/schema → absent/`false` | medium | `additional_properties_closed` |
//! | schema `maxLength`, `maximum`, `exclusiveMaximum`, `maxItems`, `maxProperties`, `maxContains` | raised or removed | high | `constraint_relaxed` |
//! | schema `minLength`, `minimum`, `exclusiveMinimum`, `minItems`, `minProperties`, `minContains` | lowered or removed | high | `constraint_relaxed` |
//! | schema `pattern`, `format`, `const` | removed | high | `constraint_relaxed` |
//! | schema `pattern` | changed (whether it widens is undecidable here) | high | `pattern_changed` |
//! | any of those constraints | added or tightened | medium | `constraint_tightened` |
//! | a schema keyword's value reordered only (`enum`, `required`, `type`) | | low | `reordered` |
//! | `/inputSchema`, `/outputSchema` | removed | high | `schema_removed` |
//! | any other schema change (`$ref`, `default`, `items` form, …) | | medium | `schema_changed` |
//! | prompt `/arguments/i` | added (required / not) | medium | `required_parameter_added` / `optional_parameter_added` |
//! | prompt `/arguments/i` | removed | medium | `parameter_removed` |
//! | prompt `/arguments/i/required` | true → false/absent | high | `required_dropped` |
//! | prompt `/arguments/i/…` other | | medium | `parameter_changed` |
//! | the key (`/name`, `/uri`, `/uriTemplate`) | any | medium | `key_changed` |
//! | resource `/name`, `/mimeType` | any | medium | `name_changed`, `mime_type_changed` |
//! | resource `/size` | any | low | `size_changed` |
//! | `/_meta/…`, `/icons/…` | any | low | `meta_changed`, `icons_changed` |
//! | `/execution/…` | any | medium | `execution_changed` |
//! | any other field (unknown ones) | any | medium | `field_changed` |
//! | `""` (the definition is not an object, or more than [`json::diff::MAX_CHANGES`] changes) | | high | `definition_replaced` |
//!
//! Numbers count like any value: a change made only of numbers (a
//! `maximum`, a `size`) is reported. `words` holds a
//! [`json::diff::word_diff`] for changes of descriptions and titles.
//!
//! # Bounds
//!
//! Work is linear in the definitions (plus sorting); schema walks stop at
//! [`json::diff::MAX_DEPTH`]; each item's field list is bounded by
//! [`json::diff::MAX_CHANGES`].

use std::collections::BTreeMap;

use serde::{Serialize, Serializer};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::json::diff::{Change, Op, WordOp};
use crate::json::{self, pointer};

/// The four kinds of MCP definitions a server lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ItemKind {
    Tool,
    Prompt,
    Resource,
    ResourceTemplate,
}

impl ItemKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ItemKind::Tool => "tool",
            ItemKind::Prompt => "prompt",
            ItemKind::Resource => "resource",
            ItemKind::ResourceTemplate => "resource_template",
        }
    }

    /// The member that names an item of this kind.
    pub fn key_field(self) -> &'static str {
        match self {
            ItemKind::Tool | ItemKind::Prompt => "name",
            ItemKind::Resource => "uri",
            ItemKind::ResourceTemplate => "uriTemplate",
        }
    }
}

/// The item's key (see [`ItemKind::key_field`]) when it is a string.
pub fn item_key(kind: ItemKind, def: &Value) -> Option<String> {
    def.get(kind.key_field())?.as_str().map(str::to_owned)
}

fn hash_value(v: &Value) -> [u8; 32] {
    let mut h = Sha256::new();
    match crate::jcs::to_canonical_vec(v) {
        Ok(bytes) => h.update(&bytes),
        Err(_) => {
            h.update(b"vouch-noncanonical\0");
            h.update(serde_json::to_vec(v).unwrap_or_default());
        }
    }
    h.finalize().into()
}

/// SHA-256 of the RFC 8785 form of the whole definition (module docs).
pub fn full_hash(def: &Value) -> [u8; 32] {
    hash_value(def)
}

/// [`full_hash`] without what a rename changes (module docs).
pub fn semantic_hash(kind: ItemKind, def: &Value) -> [u8; 32] {
    let mut v = def.clone();
    if let Value::Object(map) = &mut v {
        map.remove(kind.key_field());
        map.remove("title");
        map.remove("description");
        if let Some(Value::Object(a)) = map.get_mut("annotations") {
            a.remove("title");
        }
        for field in ["inputSchema", "outputSchema"] {
            if kind == ItemKind::Tool
                && let Some(schema) = map.get_mut(field)
            {
                strip_schema_text(schema, 0);
            }
        }
        if kind == ItemKind::Prompt
            && let Some(Value::Array(args)) = map.get_mut("arguments")
        {
            for arg in args {
                if let Value::Object(a) = arg {
                    a.remove("title");
                    a.remove("description");
                }
            }
        }
    }
    hash_value(&v)
}

/// What a schema keyword's value holds.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Holds {
    /// One subschema.
    Schema,
    /// A map from names to subschemas.
    SchemaMap,
    /// An array of subschemas.
    SchemaArray,
    /// A subschema or an array of them (`items` before 2020-12).
    SchemaOrArray,
    /// Data (`enum`, `required`, …), or a keyword this code does not know.
    Data,
}

fn holds(keyword: &str) -> Holds {
    match keyword {
        "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas"
        | "dependencies" => Holds::SchemaMap,
        "allOf" | "anyOf" | "oneOf" | "prefixItems" => Holds::SchemaArray,
        "items" => Holds::SchemaOrArray,
        "additionalProperties"
        | "additionalItems"
        | "unevaluatedProperties"
        | "unevaluatedItems"
        | "propertyNames"
        | "contains"
        | "not"
        | "if"
        | "then"
        | "else"
        | "contentSchema" => Holds::Schema,
        _ => Holds::Data,
    }
}

/// Removes `title` and `description` keywords at every schema position.
fn strip_schema_text(schema: &mut Value, depth: usize) {
    if depth >= json::diff::MAX_DEPTH {
        return;
    }
    let Value::Object(map) = schema else {
        return;
    };
    map.remove("title");
    map.remove("description");
    for (k, v) in map.iter_mut() {
        match (holds(k), v) {
            (Holds::Schema, v) => strip_schema_text(v, depth + 1),
            (Holds::SchemaMap, Value::Object(m)) => {
                for s in m.values_mut() {
                    strip_schema_text(s, depth + 1);
                }
            }
            (Holds::SchemaArray | Holds::SchemaOrArray, Value::Array(a)) => {
                for s in a {
                    strip_schema_text(s, depth + 1);
                }
            }
            (Holds::SchemaOrArray, v) => strip_schema_text(v, depth + 1),
            _ => {}
        }
    }
}

/// How much a change matters (module docs, Severities).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Low,
    Medium,
    High,
}

/// What happened to an item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ItemChangeKind {
    Added,
    Removed,
    /// Same semantic hash under another key; `from` is the old key.
    Renamed {
        from: String,
    },
    Changed,
}

/// One rated difference inside a definition.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FieldChange {
    /// RFC 6901 pointer into the definition.
    pub pointer: String,
    pub op: Op,
    pub before: Option<Value>,
    pub after: Option<Value>,
    pub severity: Severity,
    /// Stable snake_case reason (module docs).
    pub reason: &'static str,
    /// For descriptions and titles: the word diff.
    pub words: Option<Vec<WordOp>>,
}

/// One changed item.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ItemChange {
    pub kind: ItemKind,
    /// The key (for a rename: the new key).
    pub key: String,
    pub change: ItemChangeKind,
    pub severity: Severity,
    pub fields: Vec<FieldChange>,
    #[serde(serialize_with = "hex_opt")]
    pub before_hash: Option<[u8; 32]>,
    #[serde(serialize_with = "hex_opt")]
    pub after_hash: Option<[u8; 32]>,
}

fn hex_opt<S: Serializer>(h: &Option<[u8; 32]>, s: S) -> Result<S::Ok, S::Error> {
    match h {
        Some(h) => s.serialize_str(&crate::hex::encode(h)),
        None => s.serialize_none(),
    }
}

/// Keys every item (module docs, Matching); returns (key, index) sorted.
fn keyed(kind: ItemKind, defs: &[Value]) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for (i, def) in defs.iter().enumerate() {
        let base = item_key(kind, def)
            .unwrap_or_else(|| format!("sha256:{}", crate::hex::encode(&full_hash(def))));
        let n = seen.entry(base.clone()).or_insert(0);
        *n += 1;
        let mut key = if *n == 1 {
            base.clone()
        } else {
            format!("{base}#{n}")
        };
        // A literal "x#2" key may already exist: keep counting.
        while out.contains_key(&key) {
            *n += 1;
            key = format!("{base}#{n}");
        }
        out.insert(key, i);
    }
    out
}

/// The rated changes from `before` to `after` (module docs).
pub fn diff_items(kind: ItemKind, before: &[Value], after: &[Value]) -> Vec<ItemChange> {
    let b = keyed(kind, before);
    let a = keyed(kind, after);
    let mut out = Vec::new();
    let mut removed: Vec<(&String, usize)> = Vec::new();
    for (key, &i) in &b {
        match a.get(key) {
            Some(&j) => {
                let (hb, ha) = (full_hash(&before[i]), full_hash(&after[j]));
                if hb != ha {
                    let fields = fields(kind, &before[i], &after[j]);
                    out.push(ItemChange {
                        kind,
                        key: key.clone(),
                        change: ItemChangeKind::Changed,
                        severity: max_severity(&fields),
                        fields,
                        before_hash: Some(hb),
                        after_hash: Some(ha),
                    });
                }
            }
            None => removed.push((key, i)),
        }
    }
    let added: Vec<(&String, usize)> = a
        .iter()
        .filter(|(k, _)| !b.contains_key(*k))
        .map(|(k, &j)| (k, j))
        .collect();
    // Renames: pair removed and added items by semantic hash, in key order.
    let mut by_semantic: BTreeMap<[u8; 32], Vec<(&String, usize)>> = BTreeMap::new();
    for &(k, j) in &added {
        by_semantic
            .entry(semantic_hash(kind, &after[j]))
            .or_default()
            .push((k, j));
    }
    for list in by_semantic.values_mut() {
        list.reverse(); // pop() takes the smallest key first
    }
    let mut renamed_to: BTreeMap<&String, ()> = BTreeMap::new();
    for (from, i) in removed {
        let candidate = by_semantic
            .get_mut(&semantic_hash(kind, &before[i]))
            .and_then(Vec::pop);
        match candidate {
            Some((to, j)) => {
                renamed_to.insert(to, ());
                let fields = fields(kind, &before[i], &after[j]);
                out.push(ItemChange {
                    kind,
                    key: to.clone(),
                    change: ItemChangeKind::Renamed { from: from.clone() },
                    severity: max_severity(&fields),
                    fields,
                    before_hash: Some(full_hash(&before[i])),
                    after_hash: Some(full_hash(&after[j])),
                });
            }
            None => out.push(ItemChange {
                kind,
                key: from.clone(),
                change: ItemChangeKind::Removed,
                severity: match kind {
                    ItemKind::Tool => Severity::Medium,
                    _ => Severity::Low,
                },
                fields: Vec::new(),
                before_hash: Some(full_hash(&before[i])),
                after_hash: None,
            }),
        }
    }
    for (key, j) in added {
        if renamed_to.contains_key(key) {
            continue;
        }
        out.push(ItemChange {
            kind,
            key: key.clone(),
            change: ItemChangeKind::Added,
            severity: match kind {
                ItemKind::Tool => Severity::High,
                _ => Severity::Medium,
            },
            fields: Vec::new(),
            before_hash: None,
            after_hash: Some(full_hash(&after[j])),
        });
    }
    out.sort_by(|x, y| (x.kind, &x.key).cmp(&(y.kind, &y.key)));
    out
}

fn max_severity(fields: &[FieldChange]) -> Severity {
    fields
        .iter()
        .map(|f| f.severity)
        .max()
        .unwrap_or(Severity::Low)
}

/// Where a change sits inside a schema.
enum SchemaLoc {
    /// At a schema position: the schema itself was added, removed or
    /// replaced. `parent` is the keyword holding it (`None` for the root)
    /// and `name` its member name under a [`Holds::SchemaMap`] keyword.
    Schema {
        parent: Option<String>,
        name: Option<String>,
        parent_schema: String,
    },
    /// At or below a keyword of the schema at `schema` (a pointer).
    Keyword { schema: String, keyword: String },
}

/// Walks `tokens` (below a schema root at pointer `root`) through `def`.
fn locate(def_before: &Value, def_after: &Value, root: &str, tokens: &[String]) -> SchemaLoc {
    let mut schema = root.to_owned();
    let mut parent_schema = String::new();
    let mut parent: Option<String> = None;
    let mut name: Option<String> = None;
    let mut k = 0;
    let mut depth = 0;
    while k < tokens.len() && depth < json::diff::MAX_DEPTH {
        depth += 1;
        let keyword = &tokens[k];
        let sub = match holds(keyword) {
            Holds::Data => None,
            Holds::Schema => {
                // A boolean/absent `additionalProperties` is data-like.
                let mut p = schema.clone();
                pointer::push_token(&mut p, keyword);
                let both_objects = def_before.pointer(&p).is_some_and(Value::is_object)
                    && def_after.pointer(&p).is_some_and(Value::is_object);
                if k + 1 < tokens.len() && both_objects {
                    Some((1, None))
                } else {
                    None
                }
            }
            Holds::SchemaMap | Holds::SchemaArray => {
                if k + 1 < tokens.len() {
                    Some((2, Some(tokens[k + 1].clone())))
                } else {
                    None
                }
            }
            Holds::SchemaOrArray => {
                let mut p = schema.clone();
                pointer::push_token(&mut p, keyword);
                let array = def_before.pointer(&p).is_some_and(Value::is_array)
                    && def_after.pointer(&p).is_some_and(Value::is_array);
                let object = def_before.pointer(&p).is_some_and(Value::is_object)
                    && def_after.pointer(&p).is_some_and(Value::is_object);
                if k + 1 < tokens.len() && array {
                    Some((2, Some(tokens[k + 1].clone())))
                } else if k + 1 < tokens.len() && object {
                    Some((1, None))
                } else {
                    None
                }
            }
        };
        match sub {
            None => {
                return SchemaLoc::Keyword {
                    schema,
                    keyword: keyword.clone(),
                };
            }
            Some((steps, member)) => {
                parent_schema = schema.clone();
                for t in &tokens[k..k + steps] {
                    pointer::push_token(&mut schema, t);
                }
                parent = Some(keyword.clone());
                name = if holds(keyword) == Holds::SchemaMap {
                    member
                } else {
                    None
                };
                k += steps;
            }
        }
    }
    SchemaLoc::Schema {
        parent,
        name,
        parent_schema,
    }
}

fn field(change: &Change, severity: Severity, reason: &'static str, words: bool) -> FieldChange {
    let words = words.then(|| {
        let s = |v: &Option<Value>| v.as_ref().and_then(Value::as_str).unwrap_or("").to_owned();
        json::diff::word_diff(&s(&change.before), &s(&change.after))
    });
    FieldChange {
        pointer: change.pointer.clone(),
        op: change.op,
        before: change.before.clone(),
        after: change.after.clone(),
        severity,
        reason,
        words,
    }
}

/// The rated field changes from one definition to the next.
fn fields(kind: ItemKind, before: &Value, after: &Value) -> Vec<FieldChange> {
    // A truncated diff ends in a change at "": `definition_replaced`.
    let changes = json::diff::diff(before, after);
    let mut out: Vec<FieldChange> = Vec::new();
    // Schema keyword units already reported (pointer of the keyword).
    let mut units: BTreeMap<String, ()> = BTreeMap::new();
    for change in &changes {
        let tokens = pointer::split_pointer(&change.pointer).unwrap_or_default();
        let Some(first) = tokens.first() else {
            out.push(field(change, Severity::High, "definition_replaced", false));
            continue;
        };
        let first = first.as_str();
        let schema_field =
            kind == ItemKind::Tool && matches!(first, "inputSchema" | "outputSchema");
        if schema_field {
            let mut root = String::new();
            pointer::push_token(&mut root, first);
            schema_change(
                before,
                after,
                &root,
                &tokens[1..],
                change,
                &mut units,
                &mut out,
            );
            continue;
        }
        let (severity, reason, words) = match first {
            f if f == kind.key_field() => (Severity::Medium, "key_changed", false),
            "title" if tokens.len() == 1 => (Severity::High, "title_changed", true),
            "description" if tokens.len() == 1 => (Severity::High, "description_changed", true),
            "annotations" => (Severity::High, "annotation_changed", false),
            "_meta" => (Severity::Low, "meta_changed", false),
            "icons" => (Severity::Low, "icons_changed", false),
            "execution" => (Severity::Medium, "execution_changed", false),
            "arguments" if kind == ItemKind::Prompt => prompt_argument(&tokens, change),
            "name" if matches!(kind, ItemKind::Resource | ItemKind::ResourceTemplate) => {
                (Severity::Medium, "name_changed", false)
            }
            "mimeType" if matches!(kind, ItemKind::Resource | ItemKind::ResourceTemplate) => {
                (Severity::Medium, "mime_type_changed", false)
            }
            "size" if kind == ItemKind::Resource => (Severity::Low, "size_changed", false),
            _ => (Severity::Medium, "field_changed", false),
        };
        out.push(field(change, severity, reason, words));
    }
    out
}

fn prompt_argument(tokens: &[String], change: &Change) -> (Severity, &'static str, bool) {
    let required = |v: &Option<Value>| {
        v.as_ref()
            .and_then(|v| v.get("required"))
            .and_then(Value::as_bool)
            .unwrap_or(false)
    };
    match (tokens.len(), tokens.get(2).map(String::as_str)) {
        (2, _) => match change.op {
            Op::Added if required(&change.after) => {
                (Severity::Medium, "required_parameter_added", false)
            }
            Op::Added => (Severity::Medium, "optional_parameter_added", false),
            Op::Removed => (Severity::Medium, "parameter_removed", false),
            Op::Changed => (Severity::Medium, "parameter_changed", false),
        },
        (3, Some("description")) => (Severity::High, "parameter_description_changed", true),
        (3, Some("title")) => (Severity::High, "parameter_title_changed", true),
        (3, Some("required")) => {
            let was = change
                .before
                .as_ref()
                .and_then(Value::as_bool)
                .unwrap_or(false);
            let is = change
                .after
                .as_ref()
                .and_then(Value::as_bool)
                .unwrap_or(false);
            if was && !is {
                (Severity::High, "required_dropped", false)
            } else {
                (Severity::Medium, "parameter_changed", false)
            }
        }
        _ => (Severity::Medium, "parameter_changed", false),
    }
}

fn at(v: &Value, pointer: &str) -> Option<Value> {
    v.pointer(pointer).cloned()
}

fn is_open_schema(v: &Value) -> bool {
    v == &Value::Bool(true) || v.as_object().is_some_and(|m| m.is_empty())
}

fn schema_change(
    before: &Value,
    after: &Value,
    root: &str,
    tokens: &[String],
    change: &Change,
    units: &mut BTreeMap<String, ()>,
    out: &mut Vec<FieldChange>,
) {
    match locate(before, after, root, tokens) {
        SchemaLoc::Schema {
            parent,
            name,
            parent_schema,
        } => {
            let (severity, reason) = match (parent.as_deref(), change.op) {
                (None, Op::Removed) => (Severity::High, "schema_removed"),
                (_, Op::Added | Op::Changed)
                    if change.after.as_ref().is_some_and(is_open_schema)
                        && change.before.is_some() =>
                {
                    (Severity::High, "schema_opened")
                }
                (Some("properties"), Op::Added) => {
                    let required = after
                        .pointer(&format!("{parent_schema}/required"))
                        .and_then(Value::as_array)
                        .is_some_and(|r| {
                            r.iter()
                                .any(|n| Some(n.as_str().unwrap_or("")) == name.as_deref())
                        });
                    if required {
                        (Severity::Medium, "required_parameter_added")
                    } else {
                        (Severity::Medium, "optional_parameter_added")
                    }
                }
                (Some("properties"), Op::Removed) => (Severity::Medium, "parameter_removed"),
                _ => (Severity::Medium, "schema_changed"),
            };
            out.push(field(change, severity, reason, false));
        }
        SchemaLoc::Keyword { schema, keyword } => {
            let mut pointer = schema.clone();
            pointer::push_token(&mut pointer, &keyword);
            if units.insert(pointer.clone(), ()).is_some() {
                return;
            }
            // A whole map of subschemas added or removed: one entry per member.
            if holds(&keyword) == Holds::SchemaMap && pointer == change.pointer {
                let members = |v: &Option<Value>| {
                    v.as_ref()
                        .and_then(Value::as_object)
                        .map(|m| m.keys().cloned().collect::<Vec<_>>())
                };
                if change.op != Op::Changed
                    && let Some(names) = members(&change.before).or(members(&change.after))
                {
                    for n in names {
                        let mut p = pointer.clone();
                        pointer::push_token(&mut p, &n);
                        let sub = Change {
                            pointer: p.clone(),
                            op: change.op,
                            before: at(before, &p),
                            after: at(after, &p),
                        };
                        let t = pointer::split_pointer(&p).unwrap_or_default();
                        schema_change(before, after, root, &t[1..], &sub, units, out);
                    }
                    return;
                }
            }
            let unit = Change {
                pointer: pointer.clone(),
                op: change_op(
                    at(before, &pointer).is_some(),
                    at(after, &pointer).is_some(),
                ),
                before: at(before, &pointer),
                after: at(after, &pointer),
            };
            let (severity, reason, words) = keyword_rule(&keyword, &unit);
            out.push(field(&unit, severity, reason, words));
        }
    }
}

fn change_op(before: bool, after: bool) -> Op {
    match (before, after) {
        (false, _) => Op::Added,
        (_, false) => Op::Removed,
        _ => Op::Changed,
    }
}

fn keyword_rule(keyword: &str, c: &Change) -> (Severity, &'static str, bool) {
    use Severity::{High, Low, Medium};
    let (b, a) = (c.before.as_ref(), c.after.as_ref());
    match keyword {
        "description" => (High, "schema_description_changed", true),
        "title" => (High, "schema_title_changed", true),
        "enum" => match (b.and_then(Value::as_array), a.and_then(Value::as_array)) {
            (Some(_), None) => (High, "enum_widened", false),
            (None, Some(_)) => (Medium, "enum_narrowed", false),
            (Some(b), Some(a)) => {
                let has = |set: &[Value], x: &Value| set.iter().any(|y| json::diff::json_eq(x, y));
                if a.iter().any(|x| !has(b, x)) {
                    (High, "enum_widened", false)
                } else if b.iter().any(|x| !has(a, x)) {
                    (Medium, "enum_narrowed", false)
                } else {
                    (Low, "reordered", false)
                }
            }
            (None, None) => (Medium, "schema_changed", false),
        },
        "required" => {
            let names = |v: Option<&Value>| -> Vec<String> {
                v.and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(|n| n.as_str().map(str::to_owned))
                            .collect()
                    })
                    .unwrap_or_default()
            };
            let (nb, na) = (names(b), names(a));
            if nb.iter().any(|n| !na.contains(n)) {
                (High, "required_dropped", false)
            } else if na.iter().any(|n| !nb.contains(n)) {
                (Medium, "required_added", false)
            } else if b.is_some() && a.is_some() {
                (Low, "reordered", false)
            } else {
                (Medium, "schema_changed", false)
            }
        }
        "type" => type_rule(b, a),
        "additionalProperties" | "unevaluatedProperties" => {
            let open =
                |v: Option<&Value>| v.is_some_and(|v| v == &Value::Bool(true) || v.is_object());
            match (open(b), open(a)) {
                (false, true) => (High, "additional_properties_opened", false),
                (true, false) => (Medium, "additional_properties_closed", false),
                _ => (Medium, "schema_changed", false),
            }
        }
        "maxLength" | "maximum" | "exclusiveMaximum" | "maxItems" | "maxProperties"
        | "maxContains" => bound_rule(b, a, true),
        "minLength" | "minimum" | "exclusiveMinimum" | "minItems" | "minProperties"
        | "minContains" => bound_rule(b, a, false),
        "pattern" | "format" | "const" => match (b, a) {
            (Some(_), None) => (High, "constraint_relaxed", false),
            (None, Some(_)) => (Medium, "constraint_tightened", false),
            _ if keyword == "pattern" => (High, "pattern_changed", false),
            _ => (Medium, "schema_changed", false),
        },
        _ => (Medium, "schema_changed", false),
    }
}

/// `upper`: a maximum-like keyword (raising it relaxes).
fn bound_rule(b: Option<&Value>, a: Option<&Value>, upper: bool) -> (Severity, &'static str, bool) {
    match (b.and_then(Value::as_f64), a.and_then(Value::as_f64), b, a) {
        (Some(_), None, _, None) => (Severity::High, "constraint_relaxed", false),
        (None, Some(_), None, _) => (Severity::Medium, "constraint_tightened", false),
        (Some(x), Some(y), _, _) => {
            let relaxed = if upper { y > x } else { y < x };
            if relaxed {
                (Severity::High, "constraint_relaxed", false)
            } else {
                (Severity::Medium, "constraint_tightened", false)
            }
        }
        _ => (Severity::Medium, "schema_changed", false),
    }
}

fn type_rule(b: Option<&Value>, a: Option<&Value>) -> (Severity, &'static str, bool) {
    // `None`: every type (the keyword absent, or not understood).
    let set = |v: Option<&Value>| -> Option<Vec<String>> {
        match v? {
            Value::String(s) => Some(vec![s.clone()]),
            Value::Array(items) => items
                .iter()
                .map(|t| t.as_str().map(str::to_owned))
                .collect(),
            _ => None,
        }
    };
    let covers = |set: &[String], t: &str| {
        set.iter().any(|s| s == t) || (t == "integer" && set.iter().any(|s| s == "number"))
    };
    match (set(b), set(a)) {
        (_, None) if a.is_none() => (Severity::High, "type_broadened", false),
        (Some(sb), Some(sa)) => {
            if sa.iter().any(|t| !covers(&sb, t)) {
                if sb.iter().all(|t| covers(&sa, t)) {
                    (Severity::High, "type_broadened", false)
                } else {
                    (Severity::Medium, "type_changed", false)
                }
            } else if sb.iter().any(|t| !covers(&sa, t)) {
                (Severity::Medium, "type_narrowed", false)
            } else {
                (Severity::Low, "reordered", false)
            }
        }
        (None, Some(_)) if b.is_none() => (Severity::Medium, "type_narrowed", false),
        _ => (Severity::Medium, "type_changed", false),
    }
}

#[cfg(test)]
mod tests;
