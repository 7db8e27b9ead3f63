//! YAML configuration: libyaml through serde, with depth, values and alias expansion bounded while it reads (the text is pre-scanned by yaml_scan).

use super::*;

/// What our visitor refused (the YAML error carries the position).
pub(super) enum YamlRefusal {
    Duplicate(String),
    NonStringKey(String),
    Tag(String, String),
    Inexact(String, String),
    NotFinite(String),
    TooDeep,
    /// More than [`max_yaml_bytes`] bytes of strings: only aliases do that.
    Expansion,
    /// More than [`MAX_VALUES`] values (alias expansion when there are
    /// aliases).
    Values,
}

pub(super) struct YamlState {
    pointer: String,
    values: usize,
    /// Bytes of strings and member names built so far.
    bytes: usize,
    max_bytes: usize,
    floats: bool,
    refusal: Option<YamlRefusal>,
}

impl YamlState {
    fn refuse<E: de::Error>(&mut self, r: YamlRefusal) -> E {
        self.refusal = Some(r);
        E::custom("refused")
    }

    /// Counts `len` bytes of string about to be built.
    fn text<E: de::Error>(&mut self, len: usize) -> Result<(), E> {
        self.bytes = self.bytes.saturating_add(len);
        if self.bytes > self.max_bytes {
            return Err(self.refuse(YamlRefusal::Expansion));
        }
        Ok(())
    }
}

pub(super) struct NodeSeed<'s> {
    st: &'s mut YamlState,
    depth: u32,
}

impl<'de> DeserializeSeed<'de> for NodeSeed<'_> {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(NodeVisitor {
            st: self.st,
            depth: self.depth,
        })
    }
}

pub(super) struct NodeVisitor<'s> {
    st: &'s mut YamlState,
    depth: u32,
}

impl NodeVisitor<'_> {
    fn count<E: de::Error>(&mut self) -> Result<(), E> {
        self.st.values += 1;
        if self.st.values > MAX_VALUES {
            return Err(self.st.refuse(YamlRefusal::Values));
        }
        Ok(())
    }

    fn string<E: de::Error>(&mut self, len: usize) -> Result<(), E> {
        self.count()?;
        self.st.text(len)
    }

    fn int<E: de::Error>(&mut self, text: String, n: Option<Number>) -> Result<Value, E> {
        self.count()?;
        if !exact_integer(&text) {
            let p = self.st.pointer.clone();
            return Err(self.st.refuse(YamlRefusal::Inexact(p, text)));
        }
        match n {
            Some(n) => Ok(Value::Number(n)),
            // Exact and beyond 64 bits: a double holds it.
            None => text
                .parse::<f64>()
                .ok()
                .and_then(Number::from_f64)
                .map(Value::Number)
                .ok_or_else(|| {
                    let p = self.st.pointer.clone();
                    self.st.refuse(YamlRefusal::Inexact(p, text))
                }),
        }
    }

    fn container<E: de::Error>(&mut self) -> Result<u32, E> {
        self.count()?;
        let depth = self.depth + 1;
        if depth > MAX_DEPTH {
            return Err(self.st.refuse(YamlRefusal::TooDeep));
        }
        Ok(depth)
    }
}

impl<'de> de::Visitor<'de> for NodeVisitor<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a YAML value")
    }

    fn visit_unit<E: de::Error>(mut self) -> Result<Value, E> {
        self.count()?;
        Ok(Value::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        self.visit_unit()
    }
    fn visit_bool<E: de::Error>(mut self, v: bool) -> Result<Value, E> {
        self.count()?;
        Ok(Value::Bool(v))
    }
    fn visit_u64<E: de::Error>(mut self, v: u64) -> Result<Value, E> {
        self.int(v.to_string(), Some(v.into()))
    }
    fn visit_i64<E: de::Error>(mut self, v: i64) -> Result<Value, E> {
        self.int(v.to_string(), Some(v.into()))
    }
    fn visit_u128<E: de::Error>(mut self, v: u128) -> Result<Value, E> {
        self.int(v.to_string(), u64::try_from(v).ok().map(Number::from))
    }
    fn visit_i128<E: de::Error>(mut self, v: i128) -> Result<Value, E> {
        self.int(v.to_string(), i64::try_from(v).ok().map(Number::from))
    }
    fn visit_f64<E: de::Error>(mut self, v: f64) -> Result<Value, E> {
        self.count()?;
        match Number::from_f64(v) {
            Some(n) if v.is_finite() => {
                self.st.floats = true;
                Ok(Value::Number(n))
            }
            _ => {
                let p = self.st.pointer.clone();
                Err(self.st.refuse(YamlRefusal::NotFinite(p)))
            }
        }
    }
    fn visit_str<E: de::Error>(mut self, v: &str) -> Result<Value, E> {
        self.string(v.len())?;
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E: de::Error>(mut self, v: String) -> Result<Value, E> {
        self.string(v.len())?;
        Ok(Value::String(v))
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<Value, A::Error> {
        let depth = self.container()?;
        let mut items = Vec::new();
        loop {
            let len = self.st.pointer.len();
            self.st.pointer.push('/');
            self.st.pointer.push_str(&items.len().to_string());
            let item = seq.next_element_seed(NodeSeed {
                st: &mut *self.st,
                depth,
            })?;
            self.st.pointer.truncate(len);
            match item {
                Some(v) => items.push(v),
                None => break,
            }
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<Value, A::Error> {
        let depth = self.container()?;
        let mut out = Map::new();
        while let Some(key) = map.next_key_seed(KeySeed {
            st: &mut *self.st,
            seen: &out,
        })? {
            let len = self.st.pointer.len();
            crate::json::pointer::push_token(&mut self.st.pointer, &key);
            let v = map.next_value_seed(NodeSeed {
                st: &mut *self.st,
                depth,
            })?;
            self.st.pointer.truncate(len);
            out.insert(key, v);
        }
        Ok(Value::Object(out))
    }

    fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> Result<Value, A::Error> {
        let (tag, _variant): (String, _) = data.variant()?;
        let p = self.st.pointer.clone();
        Err(self.st.refuse(YamlRefusal::Tag(tag, p)))
    }
}

/// A mapping key: a string not already in `seen` (refused inside the
/// key's own deserialization, so that the error points at the key).
pub(super) struct KeySeed<'s, 'm> {
    st: &'s mut YamlState,
    seen: &'m Map<String, Value>,
}

impl<'de> DeserializeSeed<'de> for KeySeed<'_, '_> {
    type Value = String;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<String, D::Error> {
        d.deserialize_any(KeyVisitor {
            st: self.st,
            seen: self.seen,
        })
    }
}

pub(super) struct KeyVisitor<'s, 'm> {
    st: &'s mut YamlState,
    seen: &'m Map<String, Value>,
}

impl KeyVisitor<'_, '_> {
    fn not_string<E: de::Error>(self) -> E {
        let p = self.st.pointer.clone();
        self.st.refuse(YamlRefusal::NonStringKey(p))
    }

    fn key<E: de::Error>(self, key: String) -> Result<String, E> {
        if self.seen.contains_key(&key) {
            let mut p = self.st.pointer.clone();
            crate::json::pointer::push_token(&mut p, &key);
            return Err(self.st.refuse(YamlRefusal::Duplicate(p)));
        }
        Ok(key)
    }
}

impl<'de> de::Visitor<'de> for KeyVisitor<'_, '_> {
    type Value = String;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a string key")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<String, E> {
        self.st.text(v.len())?;
        self.key(v.to_owned())
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<String, E> {
        self.st.text(v.len())?;
        self.key(v)
    }
    fn visit_unit<E: de::Error>(self) -> Result<String, E> {
        Err(self.not_string())
    }
    fn visit_none<E: de::Error>(self) -> Result<String, E> {
        Err(self.not_string())
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<String, E> {
        Err(self.not_string())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<String, E> {
        Err(self.not_string())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<String, E> {
        Err(self.not_string())
    }
    fn visit_u128<E: de::Error>(self, _: u128) -> Result<String, E> {
        Err(self.not_string())
    }
    fn visit_i128<E: de::Error>(self, _: i128) -> Result<String, E> {
        Err(self.not_string())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<String, E> {
        Err(self.not_string())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<String, A::Error> {
        Err(self.not_string())
    }
    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<String, A::Error> {
        Err(self.not_string())
    }
    fn visit_enum<A: de::EnumAccess<'de>>(self, _: A) -> Result<String, A::Error> {
        Err(self.not_string())
    }
}

/// Second pass, only when the document has floats: reads each float's
/// literal text (serde_yaml_ng hands out only the rounded `f64`) and
/// refuses one whose RFC 8785 form would denote another value.
pub(super) struct LiteralSeed<'v, 's> {
    shape: &'v Value,
    st: &'s mut YamlState,
}

impl<'de> DeserializeSeed<'de> for LiteralSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        match self.shape {
            Value::Number(n) if n.is_f64() => d.deserialize_str(FloatLiteral { st: self.st }),
            Value::Array(items) => d.deserialize_seq(LiteralSeq { items, st: self.st }),
            Value::Object(map) => d.deserialize_map(LiteralMap { map, st: self.st }),
            _ => d.deserialize_ignored_any(IgnoredAny).map(drop),
        }
    }
}

/// Checks a float's text inside the scalar's own deserialization, so that
/// the error points at the scalar.
pub(super) struct FloatLiteral<'s> {
    st: &'s mut YamlState,
}

impl<'de> de::Visitor<'de> for FloatLiteral<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("the float of the first pass")
    }
    fn visit_str<E: de::Error>(self, literal: &str) -> Result<(), E> {
        if exact_literal(literal) {
            Ok(())
        } else {
            let p = self.st.pointer.clone();
            Err(self.st.refuse(YamlRefusal::Inexact(p, literal.to_owned())))
        }
    }
}

pub(super) struct LiteralSeq<'v, 's> {
    items: &'v [Value],
    st: &'s mut YamlState,
}

impl<'de> de::Visitor<'de> for LiteralSeq<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("the sequence of the first pass")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        for (i, shape) in self.items.iter().enumerate() {
            let len = self.st.pointer.len();
            self.st.pointer.push('/');
            self.st.pointer.push_str(&i.to_string());
            seq.next_element_seed(LiteralSeed {
                shape,
                st: &mut *self.st,
            })?;
            self.st.pointer.truncate(len);
        }
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(())
    }
}

pub(super) struct LiteralMap<'v, 's> {
    map: &'v Map<String, Value>,
    st: &'s mut YamlState,
}

impl<'de> de::Visitor<'de> for LiteralMap<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("the mapping of the first pass")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            match self.map.get(&key) {
                Some(shape) => {
                    let len = self.st.pointer.len();
                    crate::json::pointer::push_token(&mut self.st.pointer, &key);
                    map.next_value_seed(LiteralSeed {
                        shape,
                        st: &mut *self.st,
                    })?;
                    self.st.pointer.truncate(len);
                }
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

pub(super) fn parse_yaml(text: &str) -> Result<Value, ConfigError> {
    // Nesting first, on the text: libyaml's cost grows with the square of
    // the flow nesting before anything below can refuse it.
    let scanned = yaml_scan::scan(text, MAX_DEPTH).map_err(|d| ConfigError::TooDeep {
        format: Format::Yaml,
        max: MAX_DEPTH,
        position: Some(position_of(text, d.offset)),
    })?;
    let mut docs = serde_yaml_ng::Deserializer::from_str(text);
    let Some(first) = docs.next() else {
        return Ok(Value::Null);
    };
    let mut st = YamlState {
        pointer: String::new(),
        values: 0,
        bytes: 0,
        max_bytes: max_yaml_bytes(text.len()),
        floats: false,
        refusal: None,
    };
    let aliases = scanned.aliases > 0;
    let value = NodeSeed {
        st: &mut st,
        depth: 0,
    }
    .deserialize(first)
    .map_err(|e| yaml_error(e, &mut st, aliases))?;
    if docs.next().is_some() {
        return Err(ConfigError::MultipleDocuments);
    }
    if st.floats {
        let mut docs = serde_yaml_ng::Deserializer::from_str(text);
        if let Some(first) = docs.next() {
            st.pointer.clear();
            LiteralSeed {
                shape: &value,
                st: &mut st,
            }
            .deserialize(first)
            .map_err(|e| yaml_error(e, &mut st, aliases))?;
        }
    }
    Ok(value)
}

pub(super) fn yaml_error(
    e: serde_yaml_ng::Error,
    st: &mut YamlState,
    aliases: bool,
) -> ConfigError {
    let expansion = ConfigError::AliasExpansion {
        max_values: MAX_VALUES,
        max_bytes: st.max_bytes,
    };
    let position = e.location().map(|l| Position {
        line: l.line(),
        column: l.column(),
    });
    let (line, column) = position.map_or((1, 1), |p| (p.line, p.column));
    match st.refusal.take() {
        Some(YamlRefusal::Duplicate(pointer)) => ConfigError::DuplicateKey {
            format: Format::Yaml,
            pointer: Some(pointer),
            line,
            column,
        },
        Some(YamlRefusal::NonStringKey(pointer)) => ConfigError::NonStringKey {
            pointer,
            line,
            column,
        },
        Some(YamlRefusal::Tag(tag, pointer)) => ConfigError::Tag {
            tag,
            pointer,
            line,
            column,
        },
        Some(YamlRefusal::Inexact(pointer, literal)) => ConfigError::InexactNumber {
            format: Format::Yaml,
            pointer,
            literal,
            position,
        },
        Some(YamlRefusal::NotFinite(pointer)) => ConfigError::NotFinite {
            format: Format::Yaml,
            pointer,
            position,
        },
        Some(YamlRefusal::TooDeep) => ConfigError::TooDeep {
            format: Format::Yaml,
            max: MAX_DEPTH,
            position,
        },
        Some(YamlRefusal::Expansion) => expansion,
        Some(YamlRefusal::Values) if aliases => expansion,
        Some(YamlRefusal::Values) => ConfigError::TooManyValues {
            format: Format::Yaml,
            max: MAX_VALUES,
        },
        None => {
            let detail = e.to_string();
            // serde_yaml_ng has no error kinds; these two messages are its
            // alias and nesting limits (pinned by tests).
            if detail.starts_with("repetition limit exceeded") {
                expansion
            } else if detail.starts_with("recursion limit exceeded") {
                ConfigError::TooDeep {
                    format: Format::Yaml,
                    max: MAX_DEPTH,
                    position,
                }
            } else {
                ConfigError::Syntax {
                    format: Format::Yaml,
                    line,
                    column,
                    detail,
                }
            }
        }
    }
}
