//! JSON Pointers (RFC 6901) into a call's arguments, with one extension for
//! the path matchers: a segment that is exactly `*` stands for every
//! element of an array (`/paths/*`).

use serde_json::Value;

/// Most segments a pointer may have (bounded work per call).
pub(crate) const MAX_SEGMENTS: usize = 64;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    /// A member name or an array index (RFC 6901 §4).
    Key(String),
    /// `*`: every element of an array; on anything else, the value itself.
    Every,
}

/// A parsed pointer, kept with its text (the text is what reports show).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pointer {
    text: String,
    segments: Vec<Segment>,
}

/// Whether a pointer may use the `*` extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wildcard {
    Allowed,
    Refused,
}

impl Pointer {
    /// Parses RFC 6901 text: `""` (the whole arguments) or `/`-separated
    /// segments with `~0` for `~` and `~1` for `/`.
    pub(crate) fn parse(text: &str, wildcard: Wildcard) -> Result<Pointer, String> {
        if text.is_empty() {
            return Ok(Pointer {
                text: String::new(),
                segments: Vec::new(),
            });
        }
        let Some(rest) = text.strip_prefix('/') else {
            return Err("a pointer is \"\" or starts with \"/\"".to_owned());
        };
        let mut segments = Vec::new();
        for raw in rest.split('/') {
            if segments.len() == MAX_SEGMENTS {
                return Err(format!("more than {MAX_SEGMENTS} segments"));
            }
            if raw == "*" {
                if wildcard == Wildcard::Refused {
                    return Err(
                        "the `*` wildcard is only for path_inside and path_outside".to_owned()
                    );
                }
                segments.push(Segment::Every);
                continue;
            }
            segments.push(Segment::Key(unescape(raw)?));
        }
        Ok(Pointer {
            text: text.to_owned(),
            segments,
        })
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.text
    }

    /// True for `""`, the whole arguments.
    pub(crate) fn is_root(&self) -> bool {
        self.segments.is_empty()
    }

    /// Every value the pointer resolves to in `root` (none when it resolves
    /// to nothing; more than one only through `*`).
    pub(crate) fn resolve<'a>(&self, root: &'a Value) -> Vec<&'a Value> {
        let mut current = vec![root];
        for segment in &self.segments {
            let mut next = Vec::new();
            for value in current {
                match segment {
                    Segment::Key(key) => {
                        if let Some(v) = step(value, key) {
                            next.push(v);
                        }
                    }
                    Segment::Every => match value {
                        Value::Array(items) => next.extend(items.iter()),
                        other => next.push(other),
                    },
                }
            }
            if next.is_empty() {
                return next;
            }
            current = next;
        }
        current
    }
}

fn step<'a>(value: &'a Value, key: &str) -> Option<&'a Value> {
    match value {
        Value::Object(map) => map.get(key),
        Value::Array(items) => {
            // RFC 6901 §4: "0", or digits without a leading zero; "-" (the
            // element after the last) never exists.
            if key.is_empty()
                || !key.bytes().all(|b| b.is_ascii_digit())
                || (key.len() > 1 && key.starts_with('0'))
            {
                return None;
            }
            key.parse::<usize>().ok().and_then(|i| items.get(i))
        }
        _ => None,
    }
}

fn unescape(raw: &str) -> Result<String, String> {
    crate::json::pointer::unescape_token(raw)
        .ok_or_else(|| "`~` must be followed by 0 or 1 (RFC 6901 §3)".to_owned())
}

/// Every string value anywhere in `root` (object member names excluded),
/// depth first, without recursion.
pub(crate) fn strings(root: &Value) -> Vec<&str> {
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(value) = stack.pop() {
        match value {
            Value::String(s) => out.push(s.as_str()),
            Value::Array(items) => stack.extend(items.iter().rev()),
            Value::Object(map) => stack.extend(map.values().rev()),
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rfc6901_examples() {
        // RFC 6901 §5.
        let doc = json!({"foo": ["bar", "baz"], "": 0, "a/b": 1, "m~n": 8});
        let get = |p: &str| {
            Pointer::parse(p, Wildcard::Refused)
                .unwrap()
                .resolve(&doc)
                .first()
                .copied()
                .cloned()
        };
        assert_eq!(get(""), Some(doc.clone()));
        assert_eq!(get("/foo/0"), Some(json!("bar")));
        assert_eq!(get("/"), Some(json!(0)));
        assert_eq!(get("/a~1b"), Some(json!(1)));
        assert_eq!(get("/m~0n"), Some(json!(8)));
        assert_eq!(get("/foo/01"), None);
        assert_eq!(get("/foo/-"), None);
        assert_eq!(get("/nope"), None);
    }

    #[test]
    fn bad_pointers_are_refused() {
        assert!(Pointer::parse("foo", Wildcard::Allowed).is_err());
        assert!(Pointer::parse("/a~2", Wildcard::Allowed).is_err());
        assert!(Pointer::parse("/a~", Wildcard::Allowed).is_err());
        assert!(Pointer::parse("/a/*", Wildcard::Refused).is_err());
        assert!(Pointer::parse("/a/*", Wildcard::Allowed).is_ok());
        let long = "/x".repeat(MAX_SEGMENTS + 1);
        assert!(Pointer::parse(&long, Wildcard::Allowed).is_err());
    }

    #[test]
    fn wildcard_takes_every_element() {
        let doc = json!({"p": ["a", "b"], "s": "c", "e": []});
        let p = Pointer::parse("/p/*", Wildcard::Allowed).unwrap();
        assert_eq!(p.resolve(&doc), vec![&json!("a"), &json!("b")]);
        let s = Pointer::parse("/s/*", Wildcard::Allowed).unwrap();
        assert_eq!(s.resolve(&doc), vec![&json!("c")]);
        let e = Pointer::parse("/e/*", Wildcard::Allowed).unwrap();
        assert!(e.resolve(&doc).is_empty());
    }

    #[test]
    fn strings_skips_member_names() {
        let doc = json!({"k": ["v", {"inner": "w"}], "n": 1});
        let mut s = strings(&doc);
        s.sort_unstable();
        assert_eq!(s, vec!["v", "w"]);
    }
}
