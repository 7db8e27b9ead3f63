//! A structural diff of two JSON values, and a word diff of two strings.
//!
//! # What [`diff`] compares
//!
//! | Values at one pointer | Result |
//! |---|---|
//! | two objects | members compared by name; a name only in `before` is one [`Op::Removed`], only in `after` one [`Op::Added`]; output sorted by member name (code point order) at each level |
//! | two arrays | elements compared by index; when the length changed, the extra indexes are [`Op::Added`] (longer `after`) or [`Op::Removed`] (longer `before`). No move or insertion detection: inserting at the front changes every later index |
//! | two numbers | equal when RFC 8785 (`crate::jcs`) writes them the same (`1.0` == `1`, `1e2` == `100`); an integer that no double holds exactly (`u64`/`i64` beyond 2^53) is compared by its exact value, so `9007199254740993` != `9007199254740992` |
//! | two strings, booleans, nulls | compared by value (strings code point by code point, no Unicode normalization) |
//! | two different JSON types | one [`Op::Changed`] carrying both whole values |
//!
//! Pointers are RFC 6901 (`~` written `~0`, `/` written `~1`; `""` is the
//! whole document), built with [`super::pointer::push_token`]. A
//! [`Change`] holds the whole value that was added,
//! removed or replaced; for a changed scalar, both scalars.
//!
//! # Bounds
//!
//! * Depth: below [`MAX_DEPTH`] nested containers the walk stops
//!   descending; two unequal subtrees there are one [`Op::Changed`] with
//!   both whole values (equality is still decided exactly, without
//!   recursion). serde_json's parser refuses deeper documents anyway.
//! * Changes: at most [`MAX_CHANGES`] are reported. When there are more, the
//!   walk stops and one final summarising change is appended:
//!   [`Op::Changed`] at pointer `""` with both whole documents. A list
//!   ends in such a summary exactly when [`is_truncated`] says so (a real
//!   change at `""` is always the only change).
//!
//! # [`word_diff`]
//!
//! Words are runs of non-whitespace (Unicode `White_Space`). The diff is the
//! longest common subsequence of the two word lists, with the common prefix
//! and suffix taken off first; when what remains is more than
//! [`MAX_WORD_CELLS`] word pairs (about 2,000 × 2,000) it falls back to one
//! [`WordOp::Removed`] of all the remaining `before` words and one
//! [`WordOp::Added`] of all the remaining `after` words. Adjacent ops of one
//! kind are merged.
//!
//! * **Word mode** (the word lists differ): an op's text is its words
//!   joined by single spaces, and whitespace differences between words that
//!   are kept are not shown (the full strings are in the [`Change`]).
//! * **Whitespace mode** (same words, different strings: only whitespace
//!   changed): the diff runs over words *and* whitespace runs, so the
//!   changed whitespace shows as its own [`WordOp::Removed`] /
//!   [`WordOp::Added`]; an op's text is the exact run of the input.
//!
//! [`render_words`] writes ops separated by one space: kept text as is,
//! removed text as `[-text-]`, added text as `{+text+}` (git's
//! `--word-diff=plain` markers): `ignore [-previous-] {+all prior+}
//! instructions`. Inside a marker whose text is all whitespace, each
//! character is made visible: space `·`, tab `\t`, newline `\n`, carriage
//! return `\r`, others `\u{XXXX}`. The rendering is for people; markers in
//! the text itself are not escaped.

use super::pointer::push_token;
use serde::Serialize;
use serde_json::{Number, Value};

/// Containers nested deeper than this are compared whole (see module docs).
pub const MAX_DEPTH: usize = 128;

/// At most this many changes, then one summarising change (module docs).
pub const MAX_CHANGES: usize = 10_000;

/// Word pairs the LCS table may hold before [`word_diff`] falls back.
pub const MAX_WORD_CELLS: usize = 2_000 * 2_000;

/// What happened at a pointer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    Added,
    Removed,
    Changed,
}

impl Op {
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Added => "added",
            Op::Removed => "removed",
            Op::Changed => "changed",
        }
    }
}

/// One difference between two JSON values.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    /// RFC 6901 pointer (`""` = the whole document).
    pub pointer: String,
    pub op: Op,
    /// The value in `before` (absent for [`Op::Added`]).
    pub before: Option<Value>,
    /// The value in `after` (absent for [`Op::Removed`]).
    pub after: Option<Value>,
}

/// The differences from `before` to `after` (see the module docs).
pub fn diff(before: &Value, after: &Value) -> Vec<Change> {
    let mut walk = Walk {
        out: Vec::new(),
        truncated: false,
    };
    let mut pointer = String::new();
    walk.value(before, after, &mut pointer, 0);
    if walk.truncated {
        walk.out.push(Change {
            pointer: String::new(),
            op: Op::Changed,
            before: Some(before.clone()),
            after: Some(after.clone()),
        });
    }
    walk.out
}

/// Whether `changes` (from [`diff`]) ends in the summarising change that
/// replaces everything past [`MAX_CHANGES`].
pub fn is_truncated(changes: &[Change]) -> bool {
    changes.len() > 1 && changes.last().is_some_and(|c| c.pointer.is_empty())
}

struct Walk {
    out: Vec<Change>,
    truncated: bool,
}

impl Walk {
    fn push(&mut self, pointer: &str, op: Op, before: Option<&Value>, after: Option<&Value>) {
        if self.out.len() >= MAX_CHANGES {
            self.truncated = true;
            return;
        }
        self.out.push(Change {
            pointer: pointer.to_owned(),
            op,
            before: before.cloned(),
            after: after.cloned(),
        });
    }

    fn value(&mut self, a: &Value, b: &Value, pointer: &mut String, depth: usize) {
        if self.truncated {
            return;
        }
        match (a, b) {
            (Value::Object(ma), Value::Object(mb)) if depth < MAX_DEPTH => {
                let mut names: Vec<&String> = ma.keys().chain(mb.keys()).collect();
                names.sort();
                names.dedup();
                for name in names {
                    let len = pointer.len();
                    push_token(pointer, name);
                    match (ma.get(name), mb.get(name)) {
                        (Some(x), Some(y)) => self.value(x, y, pointer, depth + 1),
                        (Some(x), None) => self.push(pointer, Op::Removed, Some(x), None),
                        (None, Some(y)) => self.push(pointer, Op::Added, None, Some(y)),
                        (None, None) => {}
                    }
                    pointer.truncate(len);
                    if self.truncated {
                        return;
                    }
                }
            }
            (Value::Array(xa), Value::Array(xb)) if depth < MAX_DEPTH => {
                for i in 0..xa.len().max(xb.len()) {
                    let len = pointer.len();
                    pointer.push('/');
                    pointer.push_str(&i.to_string());
                    match (xa.get(i), xb.get(i)) {
                        (Some(x), Some(y)) => self.value(x, y, pointer, depth + 1),
                        (Some(x), None) => self.push(pointer, Op::Removed, Some(x), None),
                        (None, Some(y)) => self.push(pointer, Op::Added, None, Some(y)),
                        (None, None) => {}
                    }
                    pointer.truncate(len);
                    if self.truncated {
                        return;
                    }
                }
            }
            _ => {
                if !json_eq(a, b) {
                    self.push(pointer, Op::Changed, Some(a), Some(b));
                }
            }
        }
    }
}

/// Equality as [`diff`] sees it (numbers by RFC 8785 form or exact
/// integer value), without recursion: safe at any depth.
pub fn json_eq(a: &Value, b: &Value) -> bool {
    let mut stack: Vec<(&Value, &Value)> = vec![(a, b)];
    while let Some((x, y)) = stack.pop() {
        match (x, y) {
            (Value::Null, Value::Null) => {}
            (Value::Bool(p), Value::Bool(q)) if p == q => {}
            (Value::String(p), Value::String(q)) if p == q => {}
            (Value::Number(p), Value::Number(q)) if number_key(p) == number_key(q) => {}
            (Value::Array(p), Value::Array(q)) if p.len() == q.len() => {
                stack.extend(p.iter().zip(q.iter()));
            }
            (Value::Object(p), Value::Object(q)) if p.len() == q.len() => {
                for (k, v) in p {
                    match q.get(k) {
                        Some(w) => stack.push((v, w)),
                        None => return false,
                    }
                }
            }
            _ => return false,
        }
    }
    true
}

/// The text a number is compared by: its RFC 8785 form when a double holds
/// it exactly, else (integers beyond 2^53 with no exact double) its exact
/// decimal value, which no RFC 8785 form of another value equals.
pub fn number_key(n: &Number) -> String {
    let mut buf = ryu_js::Buffer::new();
    if let Some(u) = n.as_u64() {
        let f = u as f64;
        if f as u128 == u128::from(u) {
            return buf.format_finite(f).to_owned();
        }
        return u.to_string();
    }
    if let Some(i) = n.as_i64() {
        let f = i as f64;
        if f as i128 == i128::from(i) {
            return buf.format_finite(f).to_owned();
        }
        return i.to_string();
    }
    match n.as_f64() {
        Some(f) if f.is_finite() => buf.format_finite(f).to_owned(),
        _ => n.to_string(),
    }
}

/// One step of a word diff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum WordOp {
    Same(String),
    Added(String),
    Removed(String),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Same,
    Added,
    Removed,
}

/// The word diff from `before` to `after` (see the module docs). Equal
/// strings give one [`WordOp::Same`] (none when both are empty).
pub fn word_diff(before: &str, after: &str) -> Vec<WordOp> {
    if before == after {
        return if before.is_empty() {
            Vec::new()
        } else {
            vec![WordOp::Same(before.to_owned())]
        };
    }
    let wb: Vec<&str> = before.split_whitespace().collect();
    let wa: Vec<&str> = after.split_whitespace().collect();
    if wb == wa {
        let tb = tokens(before);
        let ta = tokens(after);
        build(&lcs_ops(&tb, &ta), "")
    } else {
        build(&lcs_ops(&wb, &wa), " ")
    }
}

/// Words and whitespace runs, in order, covering the whole string.
fn tokens(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut prev: Option<bool> = None;
    for (i, c) in s.char_indices() {
        let ws = c.is_whitespace();
        if prev.is_some_and(|p| p != ws) {
            out.push(&s[start..i]);
            start = i;
        }
        prev = Some(ws);
    }
    if start < s.len() {
        out.push(&s[start..]);
    }
    out
}

/// LCS of two token lists as (kind, token) steps, bounded.
fn lcs_ops<'a>(a: &[&'a str], b: &[&'a str]) -> Vec<(Kind, &'a str)> {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let (a_rest, b_rest) = (&a[prefix..], &b[prefix..]);
    let suffix = a_rest
        .iter()
        .rev()
        .zip(b_rest.iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let mid_a = &a_rest[..a_rest.len() - suffix];
    let mid_b = &b_rest[..b_rest.len() - suffix];
    let mut out: Vec<(Kind, &str)> = a[..prefix].iter().map(|t| (Kind::Same, *t)).collect();
    let (n, m) = (mid_a.len(), mid_b.len());
    if n.saturating_mul(m) > MAX_WORD_CELLS {
        out.extend(mid_a.iter().map(|t| (Kind::Removed, *t)));
        out.extend(mid_b.iter().map(|t| (Kind::Added, *t)));
    } else {
        // table[i][j] = LCS length of mid_a[i..] and mid_b[j..].
        let w = m + 1;
        let mut table = vec![0u32; (n + 1) * w];
        for i in (0..n).rev() {
            for j in (0..m).rev() {
                table[i * w + j] = if mid_a[i] == mid_b[j] {
                    table[(i + 1) * w + j + 1] + 1
                } else {
                    table[(i + 1) * w + j].max(table[i * w + j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < n || j < m {
            if i < n && j < m && mid_a[i] == mid_b[j] {
                out.push((Kind::Same, mid_a[i]));
                i += 1;
                j += 1;
            } else if j == m || (i < n && table[(i + 1) * w + j] >= table[i * w + j + 1]) {
                out.push((Kind::Removed, mid_a[i]));
                i += 1;
            } else {
                out.push((Kind::Added, mid_b[j]));
                j += 1;
            }
        }
    }
    out.extend(
        a_rest[a_rest.len() - suffix..]
            .iter()
            .map(|t| (Kind::Same, *t)),
    );
    out
}

/// Merges adjacent steps of one kind; `sep` joins the tokens of one op.
/// Within a run of changes, removals come before additions.
fn build(steps: &[(Kind, &str)], sep: &str) -> Vec<WordOp> {
    let mut out: Vec<WordOp> = Vec::new();
    let mut k = 0;
    while k < steps.len() {
        if steps[k].0 == Kind::Same {
            let start = k;
            while k < steps.len() && steps[k].0 == Kind::Same {
                k += 1;
            }
            out.push(WordOp::Same(join(&steps[start..k], sep)));
            continue;
        }
        let start = k;
        while k < steps.len() && steps[k].0 != Kind::Same {
            k += 1;
        }
        let run = &steps[start..k];
        let removed: Vec<(Kind, &str)> = run
            .iter()
            .filter(|s| s.0 == Kind::Removed)
            .copied()
            .collect();
        let added: Vec<(Kind, &str)> = run.iter().filter(|s| s.0 == Kind::Added).copied().collect();
        if !removed.is_empty() {
            out.push(WordOp::Removed(join(&removed, sep)));
        }
        if !added.is_empty() {
            out.push(WordOp::Added(join(&added, sep)));
        }
    }
    out
}

fn join(steps: &[(Kind, &str)], sep: &str) -> String {
    let mut s = String::new();
    for (k, (_, t)) in steps.iter().enumerate() {
        if k > 0 {
            s.push_str(sep);
        }
        s.push_str(t);
    }
    s
}

/// Renders ops for people (see the module docs for the markers).
pub fn render_words(ops: &[WordOp]) -> String {
    let mut out = String::new();
    for (k, op) in ops.iter().enumerate() {
        if k > 0 {
            out.push(' ');
        }
        match op {
            WordOp::Same(t) => out.push_str(t),
            WordOp::Removed(t) => {
                out.push_str("[-");
                push_visible(&mut out, t);
                out.push_str("-]");
            }
            WordOp::Added(t) => {
                out.push_str("{+");
                push_visible(&mut out, t);
                out.push_str("+}");
            }
        }
    }
    out
}

fn push_visible(out: &mut String, t: &str) {
    if t.is_empty() || !t.chars().all(char::is_whitespace) {
        out.push_str(t);
        return;
    }
    for c in t.chars() {
        match c {
            ' ' => out.push('·'),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push_str(&format!("\\u{{{:04X}}}", u32::from(c))),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::json::pointer::split_pointer;
    use serde_json::json;

    fn ptrs(changes: &[Change]) -> Vec<(&str, Op)> {
        changes.iter().map(|c| (c.pointer.as_str(), c.op)).collect()
    }

    #[test]
    fn equal_documents_have_no_changes() {
        let v = json!({"a": [1, {"b": null}], "c": "x"});
        assert!(diff(&v, &v.clone()).is_empty());
    }

    #[test]
    fn objects_by_member_sorted() {
        let a = json!({"z": 1, "m": 2, "a": 3});
        let b = json!({"z": 1, "m": 5, "b": 4});
        let d = diff(&a, &b);
        assert_eq!(
            ptrs(&d),
            vec![("/a", Op::Removed), ("/b", Op::Added), ("/m", Op::Changed)]
        );
        assert_eq!(d[0].before, Some(json!(3)));
        assert_eq!(d[0].after, None);
        assert_eq!(d[2].before, Some(json!(2)));
        assert_eq!(d[2].after, Some(json!(5)));
    }

    #[test]
    fn arrays_by_index_with_length_change() {
        let d = diff(&json!([1, 2, 3]), &json!([1, 9]));
        assert_eq!(ptrs(&d), vec![("/1", Op::Changed), ("/2", Op::Removed)]);
        let d = diff(&json!([1]), &json!([1, 2, [3]]));
        assert_eq!(ptrs(&d), vec![("/1", Op::Added), ("/2", Op::Added)]);
        assert_eq!(d[1].after, Some(json!([3])));
    }

    #[test]
    fn type_change_is_one_change_with_whole_values() {
        let d = diff(&json!({"a": {"x": 1}}), &json!({"a": [1]}));
        assert_eq!(ptrs(&d), vec![("/a", Op::Changed)]);
        assert_eq!(d[0].before, Some(json!({"x": 1})));
        assert_eq!(d[0].after, Some(json!([1])));
        let d = diff(&json!(1), &json!("1"));
        assert_eq!(ptrs(&d), vec![("", Op::Changed)]);
        assert!(!is_truncated(&d));
    }

    #[test]
    fn numbers_compare_as_rfc8785_writes_them() {
        let a: Value = serde_json::from_str(r#"{"a":1.0,"b":1e2,"c":-0.0,"d":0.5}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"a":1,"b":100,"c":0,"d":0.50}"#).unwrap();
        assert!(diff(&a, &b).is_empty());
        assert_eq!(
            ptrs(&diff(&json!({"a": 1}), &json!({"a": 2}))),
            vec![("/a", Op::Changed)]
        );
        // Integers with no exact double keep their exact value.
        let d = diff(&json!(9007199254740993u64), &json!(9007199254740992u64));
        assert_eq!(d.len(), 1);
        let d = diff(&json!(9007199254740992u64), &json!(9007199254740992.0f64));
        assert!(d.is_empty());
        let d = diff(&json!(u64::MAX), &json!(18446744073709551616.0f64));
        assert_eq!(d.len(), 1);
        let d = diff(&json!(i64::MIN), &json!(-9223372036854775808.0f64));
        assert!(d.is_empty());
    }

    #[test]
    fn pointer_escaping_rfc6901() {
        let d = diff(&json!({"a/b": 1, "m~n": 1}), &json!({"a/b": 2, "m~n": 2}));
        assert_eq!(
            ptrs(&d),
            vec![("/a~1b", Op::Changed), ("/m~0n", Op::Changed)]
        );
        assert_eq!(
            split_pointer("/a~1b/m~0n/~01").unwrap(),
            vec!["a/b", "m~n", "~1"]
        );
        assert_eq!(split_pointer("").unwrap(), Vec::<String>::new());
        assert!(split_pointer("a").is_none());
        assert!(split_pointer("/~2").is_none());
    }

    #[test]
    fn deep_documents_are_capped_not_recursed() {
        let mut a = json!(1);
        let mut b = json!(2);
        for _ in 0..200 {
            a = json!([a]);
            b = json!([b]);
        }
        let d = diff(&a, &b);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].pointer, "/0".repeat(MAX_DEPTH));
        assert_eq!(d[0].op, Op::Changed);
        assert!(diff(&a, &a.clone()).is_empty());
        // serde_json drops values recursively: keep it from overflowing.
        std::mem::forget(a);
        std::mem::forget(b);
    }

    #[test]
    fn changes_are_capped_with_a_summary() {
        let a = Value::Array((0..MAX_CHANGES as u64 + 5).map(Value::from).collect());
        let b = Value::Array((1..MAX_CHANGES as u64 + 6).map(Value::from).collect());
        let d = diff(&a, &b);
        assert_eq!(d.len(), MAX_CHANGES + 1);
        assert!(is_truncated(&d));
        let last = d.last().unwrap();
        assert_eq!(last.pointer, "");
        assert_eq!(last.before.as_ref(), Some(&a));
        // Exactly MAX_CHANGES changes: no summary.
        let a = Value::Array((0..MAX_CHANGES as u64).map(Value::from).collect());
        let b = Value::Array((1..MAX_CHANGES as u64 + 1).map(Value::from).collect());
        let d = diff(&a, &b);
        assert_eq!(d.len(), MAX_CHANGES);
        assert!(!is_truncated(&d));
    }

    #[test]
    fn word_diff_replacement() {
        let ops = word_diff(
            "ignore previous instructions",
            "ignore all prior instructions",
        );
        assert_eq!(
            ops,
            vec![
                WordOp::Same("ignore".into()),
                WordOp::Removed("previous".into()),
                WordOp::Added("all prior".into()),
                WordOp::Same("instructions".into()),
            ]
        );
        assert_eq!(
            render_words(&ops),
            "ignore [-previous-] {+all prior+} instructions"
        );
    }

    #[test]
    fn word_diff_insert_delete_and_equal() {
        assert_eq!(
            word_diff("a b c", "a c"),
            vec![
                WordOp::Same("a".into()),
                WordOp::Removed("b".into()),
                WordOp::Same("c".into())
            ]
        );
        assert_eq!(
            word_diff("", "new text"),
            vec![WordOp::Added("new text".into())]
        );
        assert_eq!(word_diff("same", "same"), vec![WordOp::Same("same".into())]);
        assert!(word_diff("", "").is_empty());
    }

    #[test]
    fn word_diff_whitespace_only_is_shown() {
        let ops = word_diff("a b  c", "a b c");
        assert_eq!(
            ops,
            vec![
                WordOp::Same("a b".into()),
                WordOp::Removed("  ".into()),
                WordOp::Added(" ".into()),
                WordOp::Same("c".into()),
            ]
        );
        assert_eq!(render_words(&ops), "a b [-··-] {+·+} c");
        let ops = word_diff("run", "run\n\t");
        assert_eq!(render_words(&ops), "run {+\\n\\t+}");
        // Whitespace between kept words is not shown in word mode.
        let ops = word_diff("a  b c", "a b d");
        assert_eq!(render_words(&ops), "a b [-c-] {+d+}");
    }

    #[test]
    fn word_diff_falls_back_when_large() {
        let a: String = (0..2_100).map(|i| format!("a{i} ")).collect();
        let b: String = (0..2_100).map(|i| format!("b{i} ")).collect();
        let ops = word_diff(&a, &b);
        assert_eq!(ops.len(), 2);
        assert!(matches!(&ops[0], WordOp::Removed(t) if t.starts_with("a0 a1 ")));
        assert!(matches!(&ops[1], WordOp::Added(t) if t.ends_with("b2099")));
        // A long common prefix does not count against the bound.
        let a2 = format!("{a}x");
        let b2 = format!("{a}y");
        let ops = word_diff(&a2, &b2);
        assert_eq!(ops.len(), 3);
        assert_eq!(ops[1], WordOp::Removed("x".into()));
    }
}
