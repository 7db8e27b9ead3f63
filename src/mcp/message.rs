//! One JSON-RPC message as the wrapper sees it: the exact line, what kind
//! of message it is, and its id decoded to a value (Node servers
//! re-serialise ids, so `"\u0061"` and `"a"`, or `1E2` and `100`, are the
//! same id with different bytes).
//!
//! A line is accepted only when it is UTF-8, RFC 8259 JSON with no
//! duplicate member names at any depth (two values for one name are read
//! differently by different parsers), at most [`MAX_DEPTH`] deep, and a
//! JSON-RPC 2.0 object. Everything else is [`Invalid`]: the wrapper never
//! forwards a message it could not read exactly as the receiver will.

use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;

/// Nesting limit for messages (serde_json's own recursion limit is 128).
pub const MAX_DEPTH: u32 = 100;

/// The largest integer id (±(2^53 − 1)): beyond it JavaScript peers
/// cannot hold the id exactly.
pub const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// A request id, decoded.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Id {
    Int(i64),
    Str(String),
}

impl Id {
    /// The id as JSON (compact).
    pub fn to_json(&self) -> String {
        match self {
            Id::Int(n) => n.to_string(),
            Id::Str(s) => serde_json::Value::String(s.clone()).to_string(),
        }
    }

    /// The id as a JSON value (for records).
    pub fn to_value(&self) -> serde_json::Value {
        match self {
            Id::Int(n) => serde_json::Value::from(*n),
            Id::Str(s) => serde_json::Value::String(s.clone()),
        }
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_json())
    }
}

/// Why an id cannot be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BadId {
    Null,
    /// A number with a fractional part.
    Fraction,
    /// An integer beyond ±(2^53 − 1).
    OutOfRange,
    /// Not a string or a number.
    WrongType,
}

impl fmt::Display for BadId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BadId::Null => "the id is null",
            BadId::Fraction => "the id is not an integer",
            BadId::OutOfRange => "the id is beyond ±(2^53−1)",
            BadId::WrongType => "the id is neither a string nor an integer",
        })
    }
}

/// Decodes a raw JSON id.
pub fn decode_id(raw: &RawValue) -> Result<Id, BadId> {
    let text = raw.get();
    match text.as_bytes().first() {
        Some(b'"') => serde_json::from_str::<String>(text)
            .map(Id::Str)
            .map_err(|_| BadId::WrongType),
        Some(b'-' | b'0'..=b'9') => {
            if let Ok(n) = text.parse::<i64>() {
                return if n.abs() <= MAX_SAFE_INTEGER {
                    Ok(Id::Int(n))
                } else {
                    Err(BadId::OutOfRange)
                };
            }
            // Exponent or fraction syntax, or too long for i64.
            let value: f64 = text.parse().map_err(|_| BadId::WrongType)?;
            if !value.is_finite() || value.abs() > MAX_SAFE_INTEGER as f64 {
                Err(BadId::OutOfRange)
            } else if value.fract() != 0.0 {
                Err(BadId::Fraction)
            } else {
                // Integral and within ±(2^53−1), so the cast is exact.
                #[allow(clippy::cast_possible_truncation)]
                Ok(Id::Int(value as i64))
            }
        }
        Some(b'n') => Err(BadId::Null),
        _ => Err(BadId::WrongType),
    }
}

/// Why a line is not a message the wrapper accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invalid {
    /// Longer than the limit (the rest of the line was skipped unread).
    TooLarge { limit: usize },
    /// Not UTF-8.
    NotUtf8,
    /// Not JSON, a duplicate member name, or too deep.
    Json(crate::jcs::InexactJson),
    /// A JSON array: a batch (removed from MCP in 2025-06-18).
    Batch { ids: Vec<Id> },
    /// JSON, but not a JSON-RPC 2.0 message.
    NotJsonRpc(&'static str),
    /// A request or response whose id cannot be used.
    BadId { id: BadId, method: Option<String> },
}

impl Invalid {
    /// Stable snake_case code (recorded in `mcp_session` anomaly records).
    pub fn code(&self) -> &'static str {
        match self {
            Invalid::TooLarge { .. } => "message_too_large",
            Invalid::NotUtf8 => "not_utf8",
            Invalid::Json(e) => e.code(),
            Invalid::Batch { .. } => "batch",
            Invalid::NotJsonRpc(_) => "not_json_rpc",
            Invalid::BadId { .. } => "bad_id",
        }
    }
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Invalid::TooLarge { limit } => write!(f, "message larger than {limit} bytes"),
            Invalid::NotUtf8 => f.write_str("message is not UTF-8"),
            Invalid::Json(e) => write!(f, "{e}"),
            Invalid::Batch { .. } => f.write_str("JSON-RPC batches are not accepted"),
            Invalid::NotJsonRpc(why) => write!(f, "not a JSON-RPC 2.0 message: {why}"),
            Invalid::BadId { id, .. } => write!(f, "{id}"),
        }
    }
}

/// What a message is.
#[derive(Debug)]
pub enum Kind<'a> {
    Request {
        id: Id,
        method: Cow<'a, str>,
        params: Option<&'a RawValue>,
    },
    Notification {
        method: Cow<'a, str>,
        params: Option<&'a RawValue>,
    },
    Response {
        id: Id,
        result: Option<&'a RawValue>,
        error: Option<&'a RawValue>,
    },
}

// `Option<&RawValue>` alone would read a member given as `null` as
// absent; `raw` keeps it (an `"id": null` request is not a notification).
#[derive(Deserialize)]
struct Envelope<'a> {
    jsonrpc: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "raw")]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "raw")]
    params: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "raw")]
    result: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "raw")]
    error: Option<&'a RawValue>,
}

fn raw<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// Reads one line (without its newline).
pub fn parse<'a>(line: &'a [u8]) -> Result<Kind<'a>, Invalid> {
    let text = std::str::from_utf8(line).map_err(|_| Invalid::NotUtf8)?;
    crate::jcs::check_unique_keys(line, MAX_DEPTH).map_err(Invalid::Json)?;
    let trimmed = text.trim_start();
    if trimmed.starts_with('[') {
        return Err(Invalid::Batch {
            ids: batch_ids(text),
        });
    }
    if !trimmed.starts_with('{') {
        return Err(Invalid::NotJsonRpc("not an object"));
    }
    let env: Envelope<'_> =
        serde_json::from_str(text).map_err(|_| Invalid::NotJsonRpc("bad member types"))?;
    if env.jsonrpc.as_deref() != Some("2.0") {
        return Err(Invalid::NotJsonRpc("jsonrpc is not \"2.0\""));
    }
    // A member given as `null` is "absent" for method/params/result only
    // where JSON-RPC allows it; an explicit `"id": null` is a bad id.
    fn present(v: Option<&RawValue>) -> Option<&RawValue> {
        v.filter(|r| r.get() != "null")
    }
    match (env.method, env.id) {
        (Some(method), Some(raw_id)) => {
            if env.result.is_some() || env.error.is_some() {
                return Err(Invalid::NotJsonRpc("a request with a result or error"));
            }
            let id = decode_id(raw_id).map_err(|id| Invalid::BadId {
                id,
                method: Some(method.to_string()),
            })?;
            Ok(Kind::Request {
                id,
                method,
                params: present(env.params),
            })
        }
        (Some(method), None) => {
            if env.result.is_some() || env.error.is_some() {
                return Err(Invalid::NotJsonRpc("a notification with a result or error"));
            }
            Ok(Kind::Notification {
                method,
                params: present(env.params),
            })
        }
        (None, Some(raw_id)) => {
            if env.params.is_some() {
                return Err(Invalid::NotJsonRpc("a response with params"));
            }
            let (result, error) = (env.result, env.error);
            if result.is_some() == error.is_some() {
                return Err(Invalid::NotJsonRpc(
                    "a response needs exactly one of result and error",
                ));
            }
            let id = decode_id(raw_id).map_err(|id| Invalid::BadId { id, method: None })?;
            Ok(Kind::Response { id, result, error })
        }
        (None, None) => Err(Invalid::NotJsonRpc("neither a method nor an id")),
    }
}

fn batch_ids(text: &str) -> Vec<Id> {
    #[derive(Deserialize)]
    struct Item<'a> {
        #[serde(borrow, default, deserialize_with = "raw")]
        id: Option<&'a RawValue>,
        method: Option<serde::de::IgnoredAny>,
    }
    let Ok(items) = serde_json::from_str::<Vec<serde_json::Value>>(text) else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|v| {
            let s = v.to_string();
            let item: Item<'_> = serde_json::from_str(&s).ok()?;
            item.method?;
            decode_id(item.id?).ok()
        })
        .collect()
}

/// `{"jsonrpc":"2.0","id":ID,"error":{"code":CODE,"message":MESSAGE}}`
/// (`id` null when there is none to answer).
pub fn error_response(id: Option<&Id>, code: i64, message: &str) -> Vec<u8> {
    #[derive(serde::Serialize)]
    struct ErrorObject<'a> {
        code: i64,
        message: &'a str,
    }
    #[derive(serde::Serialize)]
    struct Response<'a> {
        jsonrpc: &'static str,
        id: serde_json::Value,
        error: ErrorObject<'a>,
    }
    let response = Response {
        jsonrpc: "2.0",
        id: id.map_or(serde_json::Value::Null, Id::to_value),
        error: ErrorObject { code, message },
    };
    serde_json::to_vec(&response).unwrap_or_default()
}

/// `{"jsonrpc":"2.0","id":ID,"result":RESULT}` with `result` already JSON.
pub fn result_response(id: &Id, result: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(result.len() + 40);
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    out.extend_from_slice(id.to_json().as_bytes());
    out.extend_from_slice(b",\"result\":");
    out.extend_from_slice(result.as_bytes());
    out.push(b'}');
    out
}

/// A request the wrapper itself sends.
pub fn request(id: &Id, method: &str, params: &serde_json::Value) -> Vec<u8> {
    #[derive(serde::Serialize)]
    struct Request<'a> {
        jsonrpc: &'static str,
        id: serde_json::Value,
        method: &'a str,
        params: &'a serde_json::Value,
    }
    serde_json::to_vec(&Request {
        jsonrpc: "2.0",
        id: id.to_value(),
        method,
        params,
    })
    .unwrap_or_default()
}

/// A notification the wrapper itself sends.
pub fn notification(method: &str, params: &serde_json::Value) -> Vec<u8> {
    #[derive(serde::Serialize)]
    struct Notification<'a> {
        jsonrpc: &'static str,
        method: &'a str,
        params: &'a serde_json::Value,
    }
    serde_json::to_vec(&Notification {
        jsonrpc: "2.0",
        method,
        params,
    })
    .unwrap_or_default()
}

/// JSON-RPC error codes the wrapper answers with.
pub mod code {
    pub const PARSE_ERROR: i64 = -32700;
    pub const INVALID_REQUEST: i64 = -32600;
    pub const INVALID_PARAMS: i64 = -32602;
    pub const INTERNAL_ERROR: i64 = -32603;
    /// The server exited, or the wrapper could not forward the request.
    pub const SERVER_UNAVAILABLE: i64 = -32000;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(text: &str) -> Result<Id, BadId> {
        let raw: Box<RawValue> = serde_json::from_str(text).map_err(|_| BadId::WrongType)?;
        decode_id(&raw)
    }

    #[test]
    fn ids_decode_by_value() {
        assert_eq!(id("1"), Ok(Id::Int(1)));
        assert_eq!(id("1E2"), Ok(Id::Int(100)));
        assert_eq!(id("1.0"), Ok(Id::Int(1)));
        assert_eq!(id("0"), Ok(Id::Int(0)));
        assert_eq!(id("-0"), Ok(Id::Int(0)));
        assert_eq!(id(r#""\u0061""#), Ok(Id::Str("a".into())));
        assert_eq!(id(r#""""#), Ok(Id::Str(String::new())));
        assert_eq!(id("1.5"), Err(BadId::Fraction));
        assert_eq!(id("9007199254740991"), Ok(Id::Int(MAX_SAFE_INTEGER)));
        assert_eq!(id("9007199254740992"), Err(BadId::OutOfRange));
        assert_eq!(id("-9007199254740992"), Err(BadId::OutOfRange));
        assert_eq!(id("1e300"), Err(BadId::OutOfRange));
        assert_eq!(id("null"), Err(BadId::Null));
        assert_eq!(id("true"), Err(BadId::WrongType));
        assert_eq!(id("[1]"), Err(BadId::WrongType));
    }

    #[test]
    fn messages_are_classified() {
        let k = parse(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#);
        assert!(matches!(k, Ok(Kind::Request { id: Id::Int(1), .. })));
        let k = parse(br#"{"jsonrpc":"2.0","method":"notifications/cancelled"}"#);
        assert!(matches!(k, Ok(Kind::Notification { .. })));
        let k = parse(br#"{"jsonrpc":"2.0","id":"x","result":{}}"#);
        assert!(matches!(k, Ok(Kind::Response { .. })));
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}"#),
            Err(Invalid::Json(_))
        ));
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":1,"a":2}}"#),
            Err(Invalid::Json(_))
        ));
        assert_eq!(
            parse(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}").err(),
            Some(Invalid::NotUtf8)
        );
        assert!(matches!(
            parse(br#"[{"jsonrpc":"2.0","id":7,"method":"ping"},{"jsonrpc":"2.0","method":"n"}]"#),
            Err(Invalid::Batch { ids }) if ids == vec![Id::Int(7)]
        ));
        assert!(matches!(
            parse(br#"{"jsonrpc":"1.0","id":1,"method":"x"}"#),
            Err(Invalid::NotJsonRpc(_))
        ));
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","id":1,"result":{},"error":{}}"#),
            Err(Invalid::NotJsonRpc(_))
        ));
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#),
            Err(Invalid::BadId {
                id: BadId::Fraction,
                ..
            })
        ));
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","id":null,"method":"x"}"#),
            Err(Invalid::BadId {
                id: BadId::Null,
                ..
            })
        ));
    }
}
