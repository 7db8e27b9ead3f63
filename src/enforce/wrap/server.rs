//! Messages from the server: responses matched to pending requests,
//! requests to the client, and the protocol era the session speaks.

use super::*;

impl State {
    pub(super) fn server_line(&mut self, bytes: &[u8]) {
        let kind = match message::parse(bytes) {
            Ok(k) => k,
            Err(invalid) => {
                return self.anomaly("server", invalid.code(), Value::Null);
            }
        };
        match kind {
            Kind::Response { id, result, error } => self.child_response(id, bytes, result, error),
            Kind::Request { id, method, .. } => {
                if self.is_reserved(&id) || self.from_server.contains(&id) {
                    self.anomaly(
                        "server",
                        "reused_id",
                        serde_json::json!({"id": id.to_value()}),
                    );
                    return self.child_out(message::error_response(
                        Some(&id),
                        code::INVALID_REQUEST,
                        "this id is reserved or still pending",
                    ));
                }
                if self.is_modern() {
                    // 2026-07-28 stdio: the server must not send requests.
                    self.anomaly(
                        "server",
                        "request_in_modern_era",
                        serde_json::json!({"method": method}),
                    );
                    return self.child_out(message::error_response(
                        Some(&id),
                        code::INVALID_REQUEST,
                        "servers send no requests in protocol 2026-07-28",
                    ));
                }
                self.from_server.insert(id);
                self.send_client(bytes.to_vec());
            }
            Kind::Notification { method, .. } if !method.starts_with("notifications/") => {
                self.anomaly(
                    "server",
                    "notification_not_forwarded",
                    serde_json::json!({"method": method}),
                );
            }
            Kind::Notification { method, .. } => {
                if method == "notifications/tools/list_changed" {
                    self.required_generation = self.next_generation;
                    if self.server_has_tools || self.snapshot.is_some() {
                        self.start_fetch();
                    }
                }
                self.send_client(bytes.to_vec());
            }
        }
    }

    pub(super) fn child_response(
        &mut self,
        id: Id,
        bytes: &[u8],
        result: Option<&RawValue>,
        error: Option<&RawValue>,
    ) {
        if self.fetch.as_ref().is_some_and(|f| f.id == id) {
            return self.list_page(result, error);
        }
        let Some(req) = self.from_client.remove(&id) else {
            if self.cancelled_open.remove(&id).is_some() {
                return;
            }
            let what = if self.answered_set.contains(&id) {
                "response_to_unsent_call"
            } else {
                "response_to_unknown_id"
            };
            return self.anomaly("server", what, serde_json::json!({"id": id.to_value()}));
        };
        match req {
            ClientReq::Plain { method } => {
                let mut forward = None;
                if method == "initialize" && error.is_none() {
                    let r: Value = result
                        .and_then(|r| serde_json::from_str(r.get()).ok())
                        .unwrap_or(Value::Null);
                    let version = r
                        .get("protocolVersion")
                        .and_then(Value::as_str)
                        .unwrap_or("unknown")
                        .to_owned();
                    self.server_has_tools = r.pointer("/capabilities/tools").is_some();
                    forward = Some(self.vet_instructions(bytes, &r));
                    self.set_era(Era::Legacy(version));
                    if self.handshake_done && self.server_has_tools {
                        // The client sent `initialized` (and maybe calls)
                        // before this answer came back: list now.
                        self.start_fetch();
                    }
                } else if method == "server/discover" && error.is_none() {
                    let r: Value = result
                        .and_then(|r| serde_json::from_str(r.get()).ok())
                        .unwrap_or(Value::Null);
                    if r.get("supportedVersions").is_some() {
                        self.server_has_tools = r.pointer("/capabilities/tools").is_some();
                        forward = Some(self.vet_instructions(bytes, &r));
                        self.set_era(Era::Modern);
                    }
                }
                if forward.is_some() && !self.server_has_tools {
                    // No tools to list: the verdict is on the instructions.
                    let (ticket, _) = self.vet_listing(&[]);
                    let bytes = forward.take().unwrap_or_default();
                    let instead = message::error_response(
                        Some(&id),
                        code::INTERNAL_ERROR,
                        "vouch wrap: the evidence log cannot be written",
                    );
                    return self.send_client_after(ticket, bytes, Some(instead));
                }
                self.send_client(forward.unwrap_or_else(|| bytes.to_vec()));
            }
            ClientReq::List { .. } => {
                // Never forwarded, so the server cannot be answering it.
                self.from_client.insert(id.clone(), req);
                self.anomaly(
                    "server",
                    "response_to_unknown_id",
                    serde_json::json!({"id": id.to_value()}),
                );
            }
            ClientReq::Call(call) => {
                if !matches!(call.stage, Stage::Forwarded) {
                    // Held or being asked: never forwarded, so this is forged.
                    self.from_client.insert(id.clone(), ClientReq::Call(call));
                    return self.anomaly(
                        "server",
                        "response_to_unsent_call",
                        serde_json::json!({"id": id.to_value()}),
                    );
                }
                let parsed: Value = result
                    .and_then(|r| serde_json::from_str(r.get()).ok())
                    .unwrap_or(Value::Null);
                let error_code = error
                    .and_then(|e| serde_json::from_str::<Value>(e.get()).ok())
                    .and_then(|e| e.get("code").and_then(Value::as_i64));
                let outcome = if call.cancelled {
                    "cancelled"
                } else if error.is_some() {
                    "error"
                } else if parsed.get("resultType").and_then(Value::as_str) == Some("input_required")
                {
                    "input_required"
                } else {
                    "result"
                };
                let is_error = parsed.get("isError") == Some(&Value::Bool(true));
                self.outcome(&id, &call, outcome, Some(bytes), is_error, error_code);
                if call.cancelled {
                    // The client gave up on it: a late answer is not delivered.
                    self.remember_answered(id);
                    return;
                }
                let instead = message::error_response(
                    Some(&id),
                    code::INTERNAL_ERROR,
                    "vouch wrap: the evidence log cannot be written; the result is withheld",
                );
                // A cancel that crosses the answer is swallowed, not an
                // anomaly (the specification allows that race).
                self.remember_answered(id.clone());
                self.send_client_after(call.ticket, bytes.to_vec(), Some(instead));
            }
        }
    }

    pub(super) fn set_era(&mut self, era: Era) {
        if self.era == era {
            return;
        }
        self.era = era;
        let mut d = serde_json::Map::new();
        d.insert("protocol".into(), Value::String(self.protocol(None)));
        self.session("protocol", d);
        if self.is_modern() && self.server_has_tools {
            self.start_fetch();
        }
    }
}
