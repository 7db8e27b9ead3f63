//! TOML configuration: values pre-counted on the text, then parsed into a value.

use super::*;

/// An upper bound on the values of a TOML text, read without parsing it:
/// one plus every `=`, `[`, `{` and `,` outside strings and comments (each
/// value follows one of them; a `[[table]]` header counts twice for one
/// table, so the bound is at most about twice the real count).
pub(super) fn toml_values_bound(text: &str) -> usize {
    let b = text.as_bytes();
    let mut n = 1usize;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'#' => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            q @ (b'"' | b'\'') => {
                let triple = b.get(i + 1) == Some(&q) && b.get(i + 2) == Some(&q);
                i += if triple { 3 } else { 1 };
                while i < b.len() {
                    if q == b'"' && b[i] == b'\\' {
                        i += 2;
                        continue;
                    }
                    if b[i] == q
                        && (!triple || (b.get(i + 1) == Some(&q) && b.get(i + 2) == Some(&q)))
                    {
                        i += if triple { 3 } else { 1 };
                        // `'''a''''` ends with up to two more quotes.
                        while triple && b.get(i) == Some(&q) {
                            i += 1;
                        }
                        break;
                    }
                    if !triple && b[i] == b'\n' {
                        break;
                    }
                    i += 1;
                }
                continue;
            }
            b'=' | b'[' | b'{' | b',' => n += 1,
            _ => {}
        }
        i += 1;
    }
    n
}

/// Values in `v` (containers and scalars), counted without recursion.
pub(super) fn count_values(v: &Value) -> usize {
    let mut n = 0;
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        n += 1;
        match v {
            Value::Array(a) => stack.extend(a),
            Value::Object(m) => stack.extend(m.values()),
            _ => {}
        }
    }
    n
}

pub(super) fn parse_toml(text: &str) -> Result<Value, ConfigError> {
    let too_many = ConfigError::TooManyValues {
        format: Format::Toml,
        max: MAX_VALUES,
    };
    // The parser's own tree costs about 150 bytes a value: refuse what
    // certainly holds too many before it is built, the rest after.
    if toml_values_bound(text) > 2 * MAX_VALUES {
        return Err(too_many);
    }
    let table = toml::de::DeTable::parse(text).map_err(|e| {
        let p = position_of(text, e.span().map_or(0, |s| s.start));
        if e.message().starts_with("duplicate key") {
            ConfigError::DuplicateKey {
                format: Format::Toml,
                pointer: None,
                line: p.line,
                column: p.column,
            }
        } else {
            ConfigError::Syntax {
                format: Format::Toml,
                line: p.line,
                column: p.column,
                detail: e.message().to_owned(),
            }
        }
    })?;
    let mut pointer = String::new();
    let value = toml_table(text, table.get_ref(), &mut pointer, 1)?;
    if count_values(&value) > MAX_VALUES {
        return Err(too_many);
    }
    Ok(value)
}

pub(super) fn toml_table(
    text: &str,
    table: &toml::de::DeTable<'_>,
    pointer: &mut String,
    depth: u32,
) -> Result<Value, ConfigError> {
    let mut out = Map::new();
    for (k, v) in table {
        let len = pointer.len();
        crate::json::pointer::push_token(pointer, k.get_ref());
        let value = toml_value(text, v, pointer, depth)?;
        pointer.truncate(len);
        out.insert(k.get_ref().to_string(), value);
    }
    Ok(Value::Object(out))
}

pub(super) fn toml_value(
    text: &str,
    v: &toml::Spanned<toml::de::DeValue<'_>>,
    pointer: &mut String,
    depth: u32,
) -> Result<Value, ConfigError> {
    use toml::de::DeValue;
    let position = || Some(position_of(text, v.span().start));
    let inexact = |literal: String, pointer: &str| ConfigError::InexactNumber {
        format: Format::Toml,
        pointer: pointer.to_owned(),
        literal,
        position: position(),
    };
    Ok(match v.get_ref() {
        DeValue::String(s) => Value::String(s.to_string()),
        DeValue::Boolean(b) => Value::Bool(*b),
        DeValue::Datetime(d) => Value::String(d.to_string()),
        DeValue::Integer(i) => {
            let digits = i.as_str();
            let parsed = i128::from_str_radix(digits, i.radix()).ok();
            match parsed {
                Some(n) if exact_integer(n) => match (i64::try_from(n), u64::try_from(n)) {
                    (Ok(x), _) => Value::from(x),
                    (_, Ok(x)) => Value::from(x),
                    _ => return Err(inexact(i.to_string(), pointer)),
                },
                _ => return Err(inexact(i.to_string(), pointer)),
            }
        }
        DeValue::Float(f) => {
            let literal = f.as_str();
            let finite = literal.parse::<f64>().ok().filter(|x| x.is_finite());
            let Some(x) = finite else {
                if literal.contains("nan") || literal.contains("inf") {
                    return Err(ConfigError::NotFinite {
                        format: Format::Toml,
                        pointer: pointer.clone(),
                        position: position(),
                    });
                }
                return Err(inexact(literal.to_owned(), pointer));
            };
            if !exact_literal(literal) {
                return Err(inexact(literal.to_owned(), pointer));
            }
            match Number::from_f64(x) {
                Some(n) => Value::Number(n),
                None => return Err(inexact(literal.to_owned(), pointer)),
            }
        }
        DeValue::Array(_) | DeValue::Table(_) if depth >= MAX_DEPTH => {
            return Err(ConfigError::TooDeep {
                format: Format::Toml,
                max: MAX_DEPTH,
                position: position(),
            });
        }
        DeValue::Array(items) => {
            let mut out = Vec::new();
            for (k, item) in items.iter().enumerate() {
                let len = pointer.len();
                pointer.push('/');
                pointer.push_str(&k.to_string());
                out.push(toml_value(text, item, pointer, depth + 1)?);
                pointer.truncate(len);
            }
            Value::Array(out)
        }
        DeValue::Table(t) => toml_table(text, t, pointer, depth + 1)?,
    })
}
