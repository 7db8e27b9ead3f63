//! The RFC 8785 writer for `serde_json::Value`.

use serde_json::{Number, Value};

use super::{DEFAULT_MAX_DEPTH, number};

/// Why a value cannot be canonicalized without changing it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CanonicalizeError {
    /// An integer whose RFC 8785 §3.2.2.3 form (that of the nearest
    /// IEEE-754 double) would denote another value; it is refused rather
    /// than silently rounded.
    #[error("integer {number} cannot be written exactly in RFC 8785 form")]
    NumberNotExact {
        /// The integer, in decimal.
        number: String,
    },
    /// Arrays/objects nest deeper than [`DEFAULT_MAX_DEPTH`].
    #[error("nesting deeper than {max}")]
    TooDeep {
        /// The limit that was crossed.
        max: u32,
    },
}

/// Writes `value` as RFC 8785 canonical JSON, appending to `out`.
///
/// Members are sorted by the UTF-16 code units of their names (§3.2.3),
/// strings use the minimal escapes of §3.2.2.2 and numbers the ECMAScript form
/// of §3.2.2.3. Integers held as `u64`/`i64` that a double cannot represent
/// exactly are refused, as is nesting deeper than [`DEFAULT_MAX_DEPTH`]. On
/// error `out` may hold a partial value.
pub fn write_canonical(value: &Value, out: &mut Vec<u8>) -> Result<(), CanonicalizeError> {
    write_value(value, out, 0)
}

/// [`write_canonical`] into a new vector.
pub fn to_canonical_vec(value: &Value) -> Result<Vec<u8>, CanonicalizeError> {
    let mut out = Vec::new();
    write_canonical(value, &mut out)?;
    Ok(out)
}

fn write_value(value: &Value, out: &mut Vec<u8>, depth: u32) -> Result<(), CanonicalizeError> {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(n) => write_number(n, out)?,
        Value::String(s) => write_str(s, out),
        Value::Array(items) => {
            let depth = enter(depth)?;
            out.push(b'[');
            for (k, item) in items.iter().enumerate() {
                if k > 0 {
                    out.push(b',');
                }
                write_value(item, out, depth)?;
            }
            out.push(b']');
        }
        Value::Object(map) => {
            let depth = enter(depth)?;
            let mut members: Vec<(&String, &Value)> = map.iter().collect();
            members.sort_by(|a, b| a.0.encode_utf16().cmp(b.0.encode_utf16()));
            out.push(b'{');
            for (k, (name, item)) in members.into_iter().enumerate() {
                if k > 0 {
                    out.push(b',');
                }
                write_str(name, out);
                out.push(b':');
                write_value(item, out, depth)?;
            }
            out.push(b'}');
        }
    }
    Ok(())
}

fn enter(depth: u32) -> Result<u32, CanonicalizeError> {
    if depth >= DEFAULT_MAX_DEPTH {
        Err(CanonicalizeError::TooDeep {
            max: DEFAULT_MAX_DEPTH,
        })
    } else {
        Ok(depth + 1)
    }
}

fn write_number(n: &Number, out: &mut Vec<u8>) -> Result<(), CanonicalizeError> {
    // An integer is written only when the ECMAScript form of the double
    // nearest to it denotes the same decimal value (`1152921504606847000`
    // is, `2^60` = `1152921504606846976` is not: it would be written as
    // the former), so no digit ever changes meaning. Without serde_json's
    // arbitrary_precision every other number is a finite f64, whose
    // ECMAScript form is exactly its value's shortest form.
    let Some(value) = n.as_f64().filter(|f| f.is_finite()) else {
        return Err(CanonicalizeError::NumberNotExact {
            number: n.to_string(),
        });
    };
    if !n.is_f64() && super::exact::check_number(n.to_string().as_bytes()).is_err() {
        return Err(CanonicalizeError::NumberNotExact {
            number: n.to_string(),
        });
    }
    number::write_f64(value, out);
    Ok(())
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Writes a string with the escapes of RFC 8785 §3.2.2.2.
fn write_str(s: &str, out: &mut Vec<u8>) {
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut run = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let short: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            0x08 => b"\\b",
            0x09 => b"\\t",
            0x0a => b"\\n",
            0x0c => b"\\f",
            0x0d => b"\\r",
            0x00..=0x1f => &[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[(b >> 4) as usize],
                HEX[(b & 0xf) as usize],
            ],
            _ => continue,
        };
        out.extend_from_slice(&bytes[run..i]);
        out.extend_from_slice(short);
        run = i + 1;
    }
    out.extend_from_slice(&bytes[run..]);
    out.push(b'"');
}
