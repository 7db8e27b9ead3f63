//! One listing conversation: era probe, handshake, settling, paginated
//! lists, all over one [`Transport`].

use super::error::McpError;
use super::message::{MAX_DEPTH, MAX_SAFE_INTEGER};
use super::protocol::{
    LEGACY_VERSION, LEGACY_VERSIONS, META_CAPABILITIES, META_CLIENT_INFO, META_SERVER_INFO,
    META_VERSION, MODERN_VERSION,
};
use super::transport::{Event, RecvError, Transport};
use super::{Era, ListOptions, Listing};
use serde_json::{Map, Value, json};
use std::collections::HashSet;
use std::time::{Duration, Instant};

/// Listings made before the lists are declared unsettled.
pub(crate) const MAX_ROUNDS: usize = 5;

/// JSON-RPC "Method not found".
const METHOD_NOT_FOUND: i64 = -32601;
/// 2026-07-28 UnsupportedProtocolVersion.
const UNSUPPORTED_VERSION: i64 = -32022;

/// The capabilities vouch declares, in both eras: none. Fixed so that a
/// server's lists do not depend on the client (server-everything lists
/// more tools to a client declaring roots, sampling and elicitation).
pub(crate) fn client_capabilities() -> Value {
    Value::Object(Map::new())
}

fn client_info() -> Value {
    json!({"name": "vouch-drift", "version": env!("CARGO_PKG_VERSION")})
}

/// A JSON-RPC error object from the server.
struct RpcError {
    code: i64,
    message: String,
    data: Option<Value>,
}

/// list_changed notifications counted since the last look.
#[derive(Default, Clone, Copy)]
struct Changed {
    tools: usize,
    prompts: usize,
    resources: usize,
}

impl Changed {
    fn total(&self) -> usize {
        self.tools + self.prompts + self.resources
    }

    fn describe(&self) -> String {
        [
            (self.tools, "tools"),
            (self.prompts, "prompts"),
            (self.resources, "resources"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, kind)| format!("{n} notifications/{kind}/list_changed"))
        .collect::<Vec<_>>()
        .join(", ")
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Probing,
    Legacy,
    Modern,
}

pub(crate) struct Session<'a> {
    t: Transport,
    opts: &'a ListOptions,
    next_id: i64,
    phase: Phase,
    last_message: Instant,
    changed: Changed,
    notes: Vec<String>,
    /// Server-to-client requests seen in the modern era (not answered).
    modern_requests: HashSet<String>,
}

/// What the server said in the handshake.
struct Hello {
    era: Era,
    server_info: Option<Value>,
    instructions: Option<String>,
    capabilities: Value,
}

struct Lists {
    tools: Vec<Value>,
    prompts: Vec<Value>,
    resources: Vec<Value>,
    resource_templates: Vec<Value>,
}

impl<'a> Session<'a> {
    pub(crate) fn new(t: Transport, opts: &'a ListOptions) -> Self {
        Session {
            t,
            opts,
            next_id: 1,
            phase: Phase::Probing,
            last_message: Instant::now(),
            changed: Changed::default(),
            notes: Vec::new(),
            modern_requests: HashSet::new(),
        }
    }

    /// The whole conversation; the transport is shut down afterwards
    /// whatever the outcome.
    pub(crate) fn run(mut self) -> Result<Listing, McpError> {
        let out = self.converse();
        self.t.shutdown();
        out
    }

    fn converse(&mut self) -> Result<Listing, McpError> {
        let hello = self.handshake()?;
        self.last_message = Instant::now();
        self.settle("waiting for the server to settle")?;
        let early = std::mem::take(&mut self.changed);
        if early.total() > 0 {
            self.notes.push(format!(
                "server sent {} before listing; listed once it had been quiet for {} ms",
                early.describe(),
                self.opts.settle.as_millis()
            ));
        }
        let mut round = 1;
        let lists = loop {
            let lists = self.list_all(&hello.capabilities)?;
            self.settle("waiting for the server to settle")?;
            let seen = std::mem::take(&mut self.changed);
            if seen.total() == 0 {
                break lists;
            }
            if round == MAX_ROUNDS {
                return Err(McpError::Unsettled { rounds: round });
            }
            self.notes.push(format!(
                "server sent {} during listing {round}; listed again",
                seen.describe()
            ));
            round += 1;
        };
        let mut notes = std::mem::take(&mut self.notes);
        let mut asked: Vec<&String> = self.modern_requests.iter().collect();
        asked.sort();
        for method in asked {
            notes.push(format!(
                "server sent a {method} request, which a {MODERN_VERSION} server must not; not answered"
            ));
        }
        Ok(Listing {
            era: hello.era,
            server_info: hello.server_info,
            instructions: hello.instructions,
            client_capabilities: client_capabilities(),
            server_capabilities: hello.capabilities,
            tools: lists.tools,
            prompts: lists.prompts,
            resources: lists.resources,
            resource_templates: lists.resource_templates,
            notes,
        })
    }

    fn modern_meta() -> Value {
        json!({
            META_VERSION: MODERN_VERSION,
            META_CAPABILITIES: client_capabilities(),
            META_CLIENT_INFO: client_info(),
        })
    }

    /// `server/discover` first; any error or a timeout falls back to the
    /// legacy `initialize` handshake (2026-07-28 stdio, Backward
    /// Compatibility). `-32022` with a legacy version among the supported
    /// ones also falls back; without one it is an error.
    fn handshake(&mut self) -> Result<Hello, McpError> {
        let probe = self.request(
            "server/discover",
            json!({"_meta": Self::modern_meta()}),
            self.opts.probe_timeout,
        );
        match probe {
            Ok(Ok(result)) => {
                if let Some(versions) = result.get("supportedVersions").and_then(Value::as_array) {
                    let versions: Vec<&str> = versions.iter().filter_map(Value::as_str).collect();
                    if versions.contains(&MODERN_VERSION) {
                        return self.modern_hello(result);
                    }
                    if !versions.iter().any(|v| LEGACY_VERSIONS.contains(v)) {
                        return Err(McpError::UnsupportedVersion {
                            offered: versions.join(", "),
                        });
                    }
                    self.notes.push(format!(
                        "server/discover offered {}; legacy handshake",
                        versions.join(", ")
                    ));
                } else {
                    self.notes.push(
                        "server/discover answered without supportedVersions; legacy handshake"
                            .to_owned(),
                    );
                }
            }
            Ok(Err(e)) if e.code == UNSUPPORTED_VERSION => {
                let supported: Vec<String> = e
                    .data
                    .as_ref()
                    .and_then(|d| d.get("supported"))
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_owned)
                            .collect()
                    })
                    .unwrap_or_default();
                if !supported
                    .iter()
                    .any(|v| LEGACY_VERSIONS.contains(&v.as_str()))
                {
                    return Err(McpError::UnsupportedVersion {
                        offered: supported.join(", "),
                    });
                }
                self.notes.push(format!(
                    "server/discover: {MODERN_VERSION} unsupported (server supports {}); legacy handshake",
                    supported.join(", ")
                ));
            }
            Ok(Err(e)) => self.notes.push(format!(
                "server/discover: error {} ({}); legacy handshake",
                e.code, e.message
            )),
            Err(McpError::Timeout { millis, .. }) => self.notes.push(format!(
                "server/discover unanswered after {millis} ms; legacy handshake"
            )),
            Err(e) => return Err(e),
        }
        self.legacy_hello()
    }

    fn modern_hello(&mut self, result: Value) -> Result<Hello, McpError> {
        self.phase = Phase::Modern;
        check_result_type("server/discover", &result)?;
        let capabilities = match result.get("capabilities") {
            Some(c @ Value::Object(_)) => c.clone(),
            _ => return Err(invalid("server/discover", "no capabilities object")),
        };
        Ok(Hello {
            era: Era::Modern {
                protocol_version: MODERN_VERSION.to_owned(),
            },
            server_info: result
                .get("_meta")
                .and_then(|m| m.get(META_SERVER_INFO))
                .cloned(),
            instructions: result
                .get("instructions")
                .and_then(Value::as_str)
                .map(str::to_owned),
            capabilities,
        })
    }

    fn legacy_hello(&mut self) -> Result<Hello, McpError> {
        self.phase = Phase::Legacy;
        let params = json!({
            "protocolVersion": LEGACY_VERSION,
            "capabilities": client_capabilities(),
            "clientInfo": client_info(),
        });
        let result = match self.request("initialize", params, self.opts.timeout)? {
            Ok(r) => r,
            Err(e) => return Err(server_error("initialize", e)),
        };
        let version = match result.get("protocolVersion") {
            Some(Value::String(v)) => v.clone(),
            _ => return Err(invalid("initialize", "no protocolVersion string")),
        };
        if !LEGACY_VERSIONS.contains(&version.as_str()) {
            return Err(McpError::UnsupportedVersion { offered: version });
        }
        let capabilities = match result.get("capabilities") {
            Some(c @ Value::Object(_)) => c.clone(),
            _ => return Err(invalid("initialize", "no capabilities object")),
        };
        self.notify("notifications/initialized")?;
        Ok(Hello {
            era: Era::Legacy {
                protocol_version: version,
            },
            server_info: result.get("serverInfo").cloned(),
            instructions: result
                .get("instructions")
                .and_then(Value::as_str)
                .map(str::to_owned),
            capabilities,
        })
    }

    fn list_all(&mut self, caps: &Value) -> Result<Lists, McpError> {
        let has = |k: &str| caps.get(k).is_some_and(|v| !v.is_null());
        let mut lists = Lists {
            tools: Vec::new(),
            prompts: Vec::new(),
            resources: Vec::new(),
            resource_templates: Vec::new(),
        };
        if has("tools") {
            lists.tools = self.list_kind("tools/list", "tools", "name")?;
        }
        if has("prompts") {
            lists.prompts = self.list_kind("prompts/list", "prompts", "name")?;
        }
        if has("resources") {
            lists.resources = self.list_kind("resources/list", "resources", "uri")?;
            lists.resource_templates = self.list_kind(
                "resources/templates/list",
                "resourceTemplates",
                "uriTemplate",
            )?;
        }
        Ok(lists)
    }

    /// All pages of one list. "Method not found" on the first page is an
    /// empty list and a note.
    fn list_kind(
        &mut self,
        method: &str,
        key: &str,
        id_field: &str,
    ) -> Result<Vec<Value>, McpError> {
        let mut items: Vec<Value> = Vec::new();
        let mut names: HashSet<String> = HashSet::new();
        let mut cursors: HashSet<String> = HashSet::new();
        let mut cursor: Option<String> = None;
        let mut page = 0;
        loop {
            page += 1;
            if page > self.opts.max_pages {
                return Err(McpError::TooManyPages {
                    method: method.to_owned(),
                    max: self.opts.max_pages,
                });
            }
            let mut params = Map::new();
            if let Some(c) = &cursor {
                params.insert("cursor".into(), Value::String(c.clone()));
            }
            if self.phase == Phase::Modern {
                params.insert("_meta".into(), Self::modern_meta());
            }
            let mut result = match self.request(method, Value::Object(params), self.opts.timeout)? {
                Ok(r) => r,
                Err(e) if e.code == METHOD_NOT_FOUND && page == 1 => {
                    self.notes.push(format!(
                        "{method}: method not found although the capability is declared; listed as empty"
                    ));
                    return Ok(Vec::new());
                }
                Err(e) => return Err(server_error(method, e)),
            };
            check_result_type(method, &result)?;
            let Some(obj) = result.as_object_mut() else {
                return Err(invalid(method, "the result is not an object"));
            };
            let next = obj.remove("nextCursor");
            let Some(Value::Array(page_items)) = obj.remove(key) else {
                return Err(invalid(method, &format!("no {key:?} array")));
            };
            for item in page_items {
                let Some(name) = item.get(id_field).and_then(Value::as_str) else {
                    return Err(invalid(
                        method,
                        &format!("an item has no {id_field:?} string"),
                    ));
                };
                if !names.insert(name.to_owned()) {
                    return Err(McpError::DuplicateName {
                        method: method.to_owned(),
                        name: name.to_owned(),
                    });
                }
                if items.len() == self.opts.max_items {
                    return Err(McpError::TooManyItems {
                        method: method.to_owned(),
                        max: self.opts.max_items,
                    });
                }
                items.push(item);
            }
            match next {
                None | Some(Value::Null) => return Ok(items),
                Some(Value::String(c)) => {
                    if !cursors.insert(c.clone()) {
                        return Err(McpError::RepeatedCursor {
                            method: method.to_owned(),
                            cursor: c,
                        });
                    }
                    cursor = Some(c);
                }
                Some(_) => return Err(invalid(method, "nextCursor is not a string")),
            }
        }
    }

    /// Waits until no message has arrived for `settle` (at most `timeout`
    /// in all, then goes on with a note).
    fn settle(&mut self, step: &str) -> Result<(), McpError> {
        let cap = Instant::now() + self.opts.timeout;
        loop {
            let quiet_at = self.last_message + self.opts.settle;
            let deadline = quiet_at.min(cap);
            if Instant::now() >= deadline {
                if quiet_at > cap {
                    self.notes.push(format!(
                        "server was never quiet for {} ms within {} ms; listed anyway",
                        self.opts.settle.as_millis(),
                        self.opts.timeout.as_millis()
                    ));
                }
                return Ok(());
            }
            match self.t.recv(deadline) {
                Ok(ev) => {
                    self.event(ev)?;
                }
                Err(RecvError::Timeout) => {}
                Err(RecvError::Closed) => return Err(self.exited(step)),
            }
        }
    }

    fn notify(&mut self, method: &str) -> Result<(), McpError> {
        let msg = json!({"jsonrpc": "2.0", "method": method});
        self.write(method, &msg)
    }

    fn write(&mut self, method: &str, msg: &Value) -> Result<(), McpError> {
        let bytes = serde_json::to_vec(msg).map_err(|e| McpError::Write {
            method: method.to_owned(),
            message: e.to_string(),
        })?;
        match self.t.send(&bytes) {
            Ok(()) => Ok(()),
            Err(e) => {
                let err = self.exited(method);
                match err {
                    McpError::Exited {
                        code: None,
                        signal: None,
                        ..
                    } => Err(McpError::Write {
                        method: method.to_owned(),
                        message: e.to_string(),
                    }),
                    err => Err(err),
                }
            }
        }
    }

    /// Sends a request and waits for its response (other traffic is handled
    /// meanwhile). The outer error is ours (exit, timeout, protocol), the
    /// inner one the server's JSON-RPC error.
    fn request(
        &mut self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Result<Value, RpcError>, McpError> {
        let id = self.next_id;
        self.next_id += 1;
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.write(method, &msg)?;
        let deadline = Instant::now() + timeout;
        loop {
            match self.t.recv(deadline) {
                Ok(ev) => {
                    if let Some((got, outcome)) = self.event(ev)?
                        && got == Some(id)
                    {
                        return Ok(outcome);
                    }
                    // A response to another id (a late answer to a timed-out
                    // probe, or to an id never used) is dropped.
                }
                Err(RecvError::Timeout) => {
                    return Err(McpError::Timeout {
                        method: method.to_owned(),
                        millis: timeout.as_millis(),
                        stderr: self.t.stderr_tail(),
                    });
                }
                Err(RecvError::Closed) => return Err(self.exited(method)),
            }
        }
    }

    fn exited(&mut self, step: &str) -> McpError {
        let status = self.t.exit_status(Duration::from_millis(1000));
        #[cfg(unix)]
        let signal = {
            use std::os::unix::process::ExitStatusExt;
            status.and_then(|s| s.signal())
        };
        #[cfg(not(unix))]
        let signal = None;
        McpError::Exited {
            step: step.to_owned(),
            code: status.and_then(|s| s.code()),
            signal,
            stderr: self.t.stderr_tail_after(Duration::from_millis(300)),
        }
    }

    /// Handles one event from stdout. Returns the decoded id and outcome
    /// when it is a response.
    #[allow(clippy::type_complexity)]
    fn event(
        &mut self,
        ev: Event,
    ) -> Result<Option<(Option<i64>, Result<Value, RpcError>)>, McpError> {
        let (no, bytes) = match ev {
            Event::Line { no, bytes } => (no, bytes),
            Event::TooLong { no } => {
                return Err(McpError::MessageTooLarge {
                    line: no,
                    limit: self.opts.max_message_bytes,
                });
            }
            // `recv` reports a closed stdout as an error, never as an event.
            Event::Closed => return Ok(None),
        };
        self.last_message = Instant::now();
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(None);
        }
        let msg = decode(no, &bytes)?;
        let not_rpc = |why: &'static str| McpError::NotJsonRpc {
            line: no,
            why,
            excerpt: super::error::excerpt(&bytes),
        };
        let is_array = msg.is_array();
        let Value::Object(mut obj) = msg else {
            return Err(not_rpc(if is_array {
                "a batch; batches are not used since 2025-06-18"
            } else {
                "not an object"
            }));
        };
        if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return Err(not_rpc("jsonrpc is not \"2.0\""));
        }
        if let Some(method) = obj.get("method") {
            let Some(method) = method.as_str().map(str::to_owned) else {
                return Err(not_rpc("method is not a string"));
            };
            match obj.remove("id") {
                None => self.notification(&method),
                Some(id @ (Value::String(_) | Value::Number(_))) => {
                    if matches!(&id, Value::Number(n) if !n.is_i64() && !n.is_u64()) {
                        return Err(not_rpc("request id is not an integer or a string"));
                    }
                    self.server_request(&method, id);
                }
                Some(_) => return Err(not_rpc("request id is not an integer or a string")),
            }
            return Ok(None);
        }
        let Some(id) = obj.get("id") else {
            return Err(not_rpc("neither a request, a notification nor a response"));
        };
        let id = decode_id(id);
        match (obj.remove("result"), obj.remove("error")) {
            (Some(result), None) => Ok(Some((id, Ok(result)))),
            (None, Some(Value::Object(e))) => {
                let Some(code) = e.get("code").and_then(Value::as_i64) else {
                    return Err(not_rpc("error code is not an integer"));
                };
                let message = e
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                Ok(Some((
                    id,
                    Err(RpcError {
                        code,
                        message,
                        data: e.get("data").cloned(),
                    }),
                )))
            }
            (None, Some(_)) => Err(not_rpc("error is not an object")),
            (Some(_), Some(_)) => Err(not_rpc("a response with both result and error")),
            (None, None) => Err(not_rpc("a response with neither result nor error")),
        }
    }

    fn notification(&mut self, method: &str) {
        match method {
            "notifications/tools/list_changed" => self.changed.tools += 1,
            "notifications/prompts/list_changed" => self.changed.prompts += 1,
            "notifications/resources/list_changed" => self.changed.resources += 1,
            // Logging, progress, resource updates and the rest: not ours.
            _ => {}
        }
    }

    /// A request from the server. Legacy (and before the era is known):
    /// `ping` gets `{}`, anything else -32601, so the server never waits on
    /// vouch. Modern: a server must not send requests on stdio and a client
    /// must not send responses; it is noted, not answered.
    fn server_request(&mut self, method: &str, id: Value) {
        if self.phase == Phase::Modern {
            self.modern_requests.insert(method.to_owned());
            return;
        }
        let reply = if method == "ping" {
            json!({"jsonrpc": "2.0", "id": id, "result": {}})
        } else {
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": METHOD_NOT_FOUND, "message": "Method not found"}})
        };
        // A failed write means the server is gone; the next read says so.
        if let Ok(bytes) = serde_json::to_vec(&reply) {
            let _ = self.t.send(&bytes);
        }
    }
}

/// The id of a response as a value: an integer, or an integral number
/// written another way (`1.0`, `1E0`), within ±(2^53−1). vouch only sends
/// integer ids, so anything else matches nothing.
fn decode_id(id: &Value) -> Option<i64> {
    let Value::Number(n) = id else {
        return None;
    };
    let v = match n.as_i64() {
        Some(v) => v,
        None => {
            let f = n.as_f64()?;
            if f.fract() != 0.0 || f.abs() > MAX_SAFE_INTEGER as f64 {
                return None;
            }
            f as i64
        }
    };
    (v.abs() <= MAX_SAFE_INTEGER).then_some(v)
}

/// UTF-8, then JSON without duplicate names or numbers RFC 8785 would
/// change ([`crate::jcs::check_exact`]), then the parsed value.
fn decode(no: u64, bytes: &[u8]) -> Result<Value, McpError> {
    use crate::jcs::InexactJson;
    if let Err(e) = std::str::from_utf8(bytes) {
        return Err(McpError::InvalidUtf8 {
            line: no,
            offset: e.valid_up_to(),
        });
    }
    crate::jcs::check_exact(bytes, MAX_DEPTH).map_err(|e| match e {
        InexactJson::Syntax { offset } => McpError::NotJson {
            line: no,
            offset,
            excerpt: super::error::excerpt(bytes),
        },
        InexactJson::TooDeep { max, .. } => McpError::TooDeep { line: no, max },
        InexactJson::DuplicateKey { path, .. } => McpError::DuplicateKey {
            line: no,
            path: path.to_string(),
        },
        InexactJson::InexactNumber { path, literal, .. } => McpError::InexactNumber {
            line: no,
            path: path.to_string(),
            literal,
        },
    })?;
    serde_json::from_slice(bytes).map_err(|e| McpError::NotJson {
        line: no,
        offset: e.column().saturating_sub(1),
        excerpt: super::error::excerpt(bytes),
    })
}

/// `resultType` absent (legacy) or `"complete"`; anything else is invalid
/// for the methods vouch calls.
fn check_result_type(method: &str, result: &Value) -> Result<(), McpError> {
    match result.get("resultType") {
        None => Ok(()),
        Some(Value::String(t)) if t == "complete" => Ok(()),
        Some(Value::String(t)) => Err(invalid(method, &format!("resultType {t:?}"))),
        Some(_) => Err(invalid(method, "resultType is not a string")),
    }
}

fn invalid(method: &str, why: &str) -> McpError {
    McpError::InvalidResult {
        method: method.to_owned(),
        why: why.to_owned(),
    }
}

fn server_error(method: &str, e: RpcError) -> McpError {
    McpError::ServerError {
        method: method.to_owned(),
        code: e.code,
        message: e.message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_by_value() {
        let v = |s: &str| serde_json::from_str::<Value>(s).unwrap();
        assert_eq!(decode_id(&v("7")), Some(7));
        assert_eq!(decode_id(&v("7.0")), Some(7));
        assert_eq!(decode_id(&v("7E0")), Some(7));
        assert_eq!(decode_id(&v("7.5")), None);
        assert_eq!(decode_id(&v("\"7\"")), None);
        assert_eq!(decode_id(&v("9007199254740992")), None);
        assert_eq!(decode_id(&v("null")), None);
    }

    #[test]
    fn decoding_refuses_duplicates_and_garbage() {
        assert_eq!(
            decode(3, br#"{"a":1,"a":2}"#).unwrap_err().code(),
            "duplicate_key"
        );
        assert_eq!(decode(3, b"Server ready").unwrap_err().code(), "not_json");
        assert_eq!(decode(3, b"\"\xff\"").unwrap_err().code(), "invalid_utf8");
        assert_eq!(decode(3, b"{\"x\":0.7}").unwrap(), json!({"x": 0.7}));
    }
}
