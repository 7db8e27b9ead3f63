//! Comparing two directory snapshots, with the rules' growing, rotation
//! and ignored-attribute semantics, and applying accepted differences.

use super::change::{Change, ChangeKind, Field};
use super::entry::{EntryKind, TreeEntry};
use super::rules::{Attr, Rules};
use super::tree::{Problem, prefix_sha256};
use crate::files::path;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

fn item_of(p: &[u8]) -> (String, Option<String>) {
    match std::str::from_utf8(p) {
        Ok(s) => (s.to_owned(), None),
        Err(_) => (path::display(p), path::to_json(p).1),
    }
}

fn change(p: &[u8], kind: ChangeKind, fields: Vec<Field>) -> Change {
    let (item, item_b64) = item_of(p);
    Change {
        item,
        item_b64,
        change: kind,
        from: None,
        severity: None,
        expected: false,
        fields,
        key: p.to_vec(),
        from_key: None,
    }
}

fn text(b: &[u8]) -> Value {
    Value::String(path::display(b))
}

fn attr_value(e: &TreeEntry, a: Attr) -> Option<Value> {
    match a {
        Attr::Type => Some(e.kind.as_str().into()),
        Attr::Size => e.size.map(Value::from),
        Attr::Mode => Some(format!("{:04o}", e.mode).into()),
        Attr::Uid => Some(e.uid.into()),
        Attr::Gid => Some(e.gid.into()),
        Attr::Link => e.link.as_deref().map(text),
        Attr::Sha256 => e.sha256.map(|h| crate::hex::encode(&h).into()),
        Attr::Mtime => e.mtime.map(|(s, n)| format!("{s}.{n:09}").into()),
        Attr::Inode => e.inode.map(|i| i.to_string().into()),
    }
}

const ATTRS: [Attr; 9] = [
    Attr::Type,
    Attr::Size,
    Attr::Mode,
    Attr::Uid,
    Attr::Gid,
    Attr::Link,
    Attr::Sha256,
    Attr::Mtime,
    Attr::Inode,
];

fn fields(a: &TreeEntry, b: &TreeEntry, rules: &Rules, skip: &[Attr]) -> Vec<Field> {
    let mut out = Vec::new();
    for attr in ATTRS {
        if skip.contains(&attr) || !rules.compares(&a.path, attr) {
            continue;
        }
        // Optional attributes compare only when both snapshots have them.
        if matches!(attr, Attr::Mtime | Attr::Inode)
            && (attr_value(a, attr).is_none() || attr_value(b, attr).is_none())
        {
            continue;
        }
        let (x, y) = (attr_value(a, attr), attr_value(b, attr));
        if x != y {
            out.push(Field::plain(attr.as_str(), x, y));
        }
    }
    out
}

fn unchecked(p: &[u8], problems: &[Problem]) -> bool {
    problems
        .iter()
        .any(|q| q.path.is_empty() || q.path == p || path::is_within(p, &q.path))
}

/// The differences from `base` to `now` (both sorted by path). Paths that
/// could not be examined now (`problems`, and everything below an
/// unreadable directory) are not compared: they are neither removed nor
/// unchanged. `root` is where `now` was taken (for the growing rule's
/// prefix hash).
pub fn compare(
    base: &[TreeEntry],
    now: &[TreeEntry],
    problems: &[Problem],
    rules: &Rules,
    root: &Path,
) -> Vec<Change> {
    let mut out: Vec<Change> = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < base.len() || j < now.len() {
        let ord = match (base.get(i), now.get(j)) {
            (Some(a), Some(b)) => a.path.cmp(&b.path),
            (Some(_), None) => std::cmp::Ordering::Less,
            _ => std::cmp::Ordering::Greater,
        };
        match ord {
            std::cmp::Ordering::Less => {
                let a = &base[i];
                if !unchecked(&a.path, problems) && rules.records(&a.path) {
                    out.push(change(&a.path, ChangeKind::Removed, Vec::new()));
                }
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                out.push(change(&now[j].path, ChangeKind::Added, Vec::new()));
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                let (a, b) = (&base[i], &now[j]);
                if let Some(c) = compare_one(a, b, rules, root) {
                    out.push(c);
                }
                i += 1;
                j += 1;
            }
        }
    }
    rotations(&mut out, base, now, rules, root);
    out
}

fn compare_one(a: &TreeEntry, b: &TreeEntry, rules: &Rules, root: &Path) -> Option<Change> {
    let grows = rules.growing(&a.path)
        && a.kind == EntryKind::File
        && b.kind == EntryKind::File
        && a.sha256 != b.sha256;
    if grows {
        let rest = fields(a, b, rules, &[Attr::Size, Attr::Sha256, Attr::Mtime]);
        let (old, new) = (a.size.unwrap_or(0), b.size.unwrap_or(0));
        let prefix_ok = new > old
            && prefix_sha256(&path::under(root, &b.path), old).is_some_and(|h| Some(h) == a.sha256);
        if prefix_ok && rest.is_empty() {
            let mut c = change(
                &a.path,
                ChangeKind::Grown,
                vec![Field::plain("size", Some(old.into()), Some(new.into()))],
            );
            c.expected = true;
            return Some(c);
        }
        let mut f = fields(a, b, rules, &[]);
        let reason = if new < old {
            "growing_file_shrank"
        } else if new == old {
            "growing_file_rewritten"
        } else {
            "growing_file_prefix_changed"
        };
        if let Some(s) = f.iter_mut().find(|f| f.field == "sha256") {
            s.reason = Some(reason.into());
        }
        return Some(change(&a.path, ChangeKind::Changed, f));
    }
    let f = fields(a, b, rules, &[]);
    (!f.is_empty()).then(|| change(&a.path, ChangeKind::Changed, f))
}

/// Rotation: a file of a rotation rule whose content now is what another
/// rotation path of the same directory held (exactly, or as a prefix when
/// it also grew), where that path no longer holds it (gone, or new
/// content), was rotated from there: one `rotated` change, expected,
/// replacing an addition or a content change. Each old file is the source
/// of one rotation at most, and the rotated file's other attributes
/// (type, mode, owner) are compared with the old file's: any difference
/// keeps it drift. The path it came from may then be gone or start
/// afresh, which is part of the same rotation.
fn rotations(
    out: &mut [Change],
    base: &[TreeEntry],
    now: &[TreeEntry],
    rules: &Rules,
    root: &Path,
) {
    let now_by: HashMap<&[u8], &TreeEntry> = now.iter().map(|e| (e.path.as_slice(), e)).collect();
    // Old rotation files whose content has left their path.
    let mut by_dir: BTreeMap<&[u8], Vec<&TreeEntry>> = BTreeMap::new();
    for e in base
        .iter()
        .filter(|e| e.kind == EntryKind::File && rules.rotates(&e.path))
    {
        let moved = match now_by.get(e.path.as_slice()) {
            None => true,
            Some(n) => n.kind != EntryKind::File || n.sha256 != e.sha256,
        };
        if moved {
            by_dir.entry(parent(&e.path)).or_default().push(e);
        }
    }
    if by_dir.is_empty() {
        return;
    }
    let mut used: Vec<Vec<u8>> = Vec::new();
    for c in out.iter_mut() {
        if !matches!(c.change, ChangeKind::Added | ChangeKind::Changed) || !rules.rotates(&c.key) {
            continue;
        }
        let Some(q) = now_by.get(c.key.as_slice()) else {
            continue;
        };
        if q.kind != EntryKind::File {
            continue;
        }
        let Some(cands) = by_dir.get(parent(&q.path)) else {
            continue;
        };
        let free = |p: &&&TreeEntry| p.path != q.path && !used.contains(&p.path);
        let exact = cands
            .iter()
            .filter(free)
            .find(|p| p.sha256 == q.sha256)
            .copied();
        let from = exact.or_else(|| {
            // Grew, then rotated: an old file whose content is a prefix of
            // this one (at most 16 tried).
            cands
                .iter()
                .filter(free)
                .filter(|p| p.size.unwrap_or(0) > 0 && p.size < q.size)
                .take(16)
                .find(|p| {
                    prefix_sha256(&path::under(root, &q.path), p.size.unwrap_or(0)) == p.sha256
                })
                .copied()
        });
        if let Some(p) = from {
            let rest = fields(
                p,
                q,
                rules,
                &[Attr::Size, Attr::Sha256, Attr::Mtime, Attr::Inode],
            );
            c.change = ChangeKind::Rotated;
            c.expected = rest.is_empty();
            c.from = Some(item_of(&p.path).0);
            c.from_key = Some(p.path.clone());
            c.fields = rest;
            used.push(p.path.clone());
        }
    }
    for c in out.iter_mut() {
        if matches!(c.change, ChangeKind::Removed | ChangeKind::Changed) && used.contains(&c.key) {
            let content_only = c
                .fields
                .iter()
                .all(|f| matches!(f.field.as_str(), "sha256" | "size" | "mtime" | "inode"));
            if content_only {
                c.expected = true;
                c.fields.push(Field {
                    reason: Some("rotated_away".into()),
                    ..Field::plain("rotation", None, None)
                });
            }
        }
    }
}

fn parent(p: &[u8]) -> &[u8] {
    match p.iter().rposition(|b| *b == b'/') {
        Some(i) => &p[..i],
        None => b"",
    }
}

/// Whether `key` is selected by `--only` values (a path selects itself
/// and everything below it).
pub fn selected(key: &[u8], only: &[Vec<u8>]) -> bool {
    only.iter()
        .any(|o| key == o.as_slice() || path::is_within(key, o))
}

/// The baseline with the changes in `accept` taken from `now`.
pub fn apply(base: &[TreeEntry], now: &[TreeEntry], accept: &[&Change]) -> Vec<TreeEntry> {
    let mut map: BTreeMap<Vec<u8>, TreeEntry> =
        base.iter().map(|e| (e.path.clone(), e.clone())).collect();
    let now_by: HashMap<&[u8], &TreeEntry> = now.iter().map(|e| (e.path.as_slice(), e)).collect();
    let mut take = |k: &[u8]| match now_by.get(k) {
        Some(e) => {
            map.insert(k.to_vec(), (*e).clone());
        }
        None => {
            map.remove(k);
        }
    };
    for c in accept {
        take(&c.key);
        if let Some(f) = &c.from_key {
            take(f);
        }
    }
    map.into_values().collect()
}
