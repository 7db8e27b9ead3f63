//! Messages from the client: framing errors, ids (pending, answered,
//! the wrapper's own), requests forwarded as they are, and cancellations.

use super::*;

impl State {
    pub(super) fn remember_answered(&mut self, id: Id) {
        if self.answered_set.insert(id.clone()) {
            self.answered.push_back(id);
            if self.answered.len() > ANSWERED_MEMORY
                && let Some(old) = self.answered.pop_front()
            {
                self.answered_set.remove(&old);
            }
        }
    }

    pub(super) fn own_id(&mut self) -> Id {
        let id = Id::Str(format!("{}{}", self.id_prefix, self.next_own_id));
        self.next_own_id += 1;
        id
    }

    pub(super) fn is_reserved(&self, id: &Id) -> bool {
        matches!(id, Id::Str(s) if s.starts_with(&self.id_prefix))
    }

    pub(super) fn protocol(&self, meta: Option<&Value>) -> String {
        if let Some(v) = meta
            .and_then(|m| m.get(META_VERSION))
            .and_then(Value::as_str)
        {
            return v.to_owned();
        }
        match &self.era {
            Era::Unknown => "unknown".into(),
            Era::Legacy(v) => v.clone(),
            Era::Modern => MODERN.into(),
        }
    }

    pub(super) fn is_modern(&self) -> bool {
        self.era == Era::Modern
    }

    // ---- from the client ------------------------------------------------

    pub(super) fn client_line(&mut self, bytes: &[u8]) {
        let kind = match message::parse(bytes) {
            Ok(k) => k,
            Err(invalid) => return self.invalid_from_client(&invalid),
        };
        match kind {
            Kind::Request { id, method, params } => {
                if self.is_reserved(&id) {
                    self.anomaly("client", "reserved_id", Value::Null);
                    return self.send_client(message::error_response(
                        Some(&id),
                        code::INVALID_REQUEST,
                        "this id is reserved by vouch wrap",
                    ));
                }
                if self.from_client.contains_key(&id) || self.cancelled_open.contains_key(&id) {
                    return self.send_client(message::error_response(
                        Some(&id),
                        code::INVALID_REQUEST,
                        "a request with this id is still pending",
                    ));
                }
                let meta = params.and_then(|p| {
                    serde_json::from_str::<Value>(p.get())
                        .ok()
                        .and_then(|v| v.get("_meta").cloned())
                });
                if let Some(version) = meta
                    .as_ref()
                    .and_then(|m| m.get(META_VERSION))
                    .and_then(Value::as_str)
                {
                    // A 2026-07-28 request says its era itself (a client
                    // that probed on another connection sends no
                    // `server/discover` here).
                    let modern = version >= MODERN;
                    self.modern_meta = meta.clone();
                    if modern && self.era == Era::Unknown {
                        self.set_era(Era::Modern);
                    }
                }
                let folded: String = method
                    .chars()
                    .filter(char::is_ascii_alphanumeric)
                    .map(|c| c.to_ascii_lowercase())
                    .collect();
                if folded == "toolscall" && method != "tools/call" {
                    // `Tools/Call`, `tools/call ` ...: a lenient server might
                    // run it, and the gate would not have seen a call.
                    self.anomaly(
                        "client",
                        "near_miss_method",
                        serde_json::json!({"method": method}),
                    );
                    return self.send_client(message::error_response(
                        Some(&id),
                        -32601,
                        "method not found (vouch wrap gates tools/call by its exact name)",
                    ));
                }
                match method.as_ref() {
                    "tools/call" => self.call(id, bytes, params, meta),
                    "tools/list" => self.client_list(id, params),
                    "initialize" => {
                        self.client_elicitation = params
                            .and_then(|p| serde_json::from_str::<Value>(p.get()).ok())
                            .and_then(|v| v.pointer("/capabilities/elicitation").cloned())
                            .is_some_and(|e| e.is_object());
                        self.initialize_id = Some(id.clone());
                        self.forward_request(id, "initialize", bytes);
                    }
                    other => {
                        let other = other.to_owned();
                        self.forward_request(id, &other, bytes);
                    }
                }
            }
            Kind::Notification { method, .. } if !method.starts_with("notifications/") => {
                // A "notification" named like a request (`tools/call`
                // without an id) would run at a lenient server ungated.
                self.anomaly(
                    "client",
                    "notification_not_forwarded",
                    serde_json::json!({"method": method}),
                );
            }
            Kind::Notification { method, params } => match method.as_ref() {
                "notifications/cancelled" => self.client_cancel(bytes, params),
                "notifications/initialized" => {
                    self.child_out(bytes.to_vec());
                    self.handshake_done = true;
                    if self.server_has_tools {
                        self.start_fetch();
                    }
                }
                _ => self.child_out(bytes.to_vec()),
            },
            Kind::Response { id, .. } => {
                if let Some(call) = self.own_to_client.remove(&id) {
                    let approved = approved(bytes);
                    self.answered_ask(&call, "elicitation", approved, false);
                } else if self.from_server.remove(&id) {
                    self.child_out(bytes.to_vec());
                } else {
                    self.anomaly(
                        "client",
                        "unexpected_response",
                        serde_json::json!({"id": id.to_value()}),
                    );
                }
            }
        }
    }

    pub(super) fn invalid_from_client(&mut self, invalid: &Invalid) {
        self.anomaly("client", invalid.code(), Value::Null);
        let batches_allowed = matches!(&self.era, Era::Legacy(v) if v.as_str() <= "2025-03-26");
        let reply = match invalid {
            Invalid::Batch { ids } if batches_allowed => {
                // 2025-03-26 and earlier: receivers had to accept batches;
                // the wrapper answers each request in it with an error.
                let items: Vec<Value> = ids
                    .iter()
                    .map(|id| {
                        serde_json::from_slice(&message::error_response(
                            Some(id),
                            code::INVALID_REQUEST,
                            "vouch wrap does not forward JSON-RPC batches",
                        ))
                        .unwrap_or(Value::Null)
                    })
                    .collect();
                if items.is_empty() {
                    return;
                }
                serde_json::to_vec(&items).unwrap_or_default()
            }
            Invalid::Batch { .. } => message::error_response(
                None,
                code::INVALID_REQUEST,
                "JSON-RPC batches are not part of MCP since 2025-06-18",
            ),
            Invalid::Json(crate::jcs::InexactJson::Syntax { .. }) | Invalid::NotUtf8 => {
                message::error_response(None, code::PARSE_ERROR, &invalid.to_string())
            }
            Invalid::BadId {
                method: Some(_), ..
            }
            | Invalid::Json(_)
            | Invalid::NotJsonRpc(_) => {
                message::error_response(None, code::INVALID_REQUEST, &invalid.to_string())
            }
            Invalid::BadId { method: None, .. } | Invalid::TooLarge { .. } => return,
        };
        self.send_client(reply);
    }

    pub(super) fn forward_request(&mut self, id: Id, method: &str, bytes: &[u8]) {
        if self.child_closed {
            self.remember_answered(id.clone());
            return self.send_client(message::error_response(
                Some(&id),
                code::SERVER_UNAVAILABLE,
                "vouch wrap is ending the session; the request was not sent",
            ));
        }
        self.from_client.insert(
            id,
            ClientReq::Plain {
                method: method.to_owned(),
            },
        );
        self.child_out(bytes.to_vec());
    }

    pub(super) fn client_cancel(&mut self, bytes: &[u8], params: Option<&RawValue>) {
        let target = params
            .and_then(|p| serde_json::from_str::<HashMap<String, Box<RawValue>>>(p.get()).ok())
            .and_then(|m| m.get("requestId").and_then(|r| message::decode_id(r).ok()));
        let Some(id) = target else {
            self.anomaly("client", "bad_cancel", Value::Null);
            return;
        };
        match self.from_client.get_mut(&id) {
            Some(ClientReq::Call(call)) => match call.stage {
                Stage::Forwarded => {
                    // Decided in this turn and not sent yet: write the
                    // decision and send the call now, so the cancel follows
                    // a call the server got and the outcome names its
                    // decision's seq.
                    if self
                        .to_server
                        .iter()
                        .any(|t| matches!(t, ToServer::Call(c, _) if *c == id))
                    {
                        self.flush_evidence();
                    }
                    let Some(ClientReq::Call(call)) = self.from_client.remove(&id) else {
                        // Not delivered after all (recorded as such).
                        return;
                    };
                    // Forwarded behind its call (one FIFO); its outcome is
                    // "cancelled", and a late response is not delivered.
                    self.child_out(bytes.to_vec());
                    self.outcome(&id, &call, "cancelled", None, false, None);
                    if self.cancelled_open.len() < 65_536 {
                        self.cancelled_open.insert(id.clone(), call.sent_end);
                    }
                    self.remember_answered(id);
                }
                Stage::Held | Stage::Asking { .. } => {
                    // Never sent: decide it as withdrawn, answer nothing.
                    if let Some(ClientReq::Call(call)) = self.from_client.remove(&id) {
                        let _ = self.decide_record(
                            &id,
                            &call,
                            "cancelled",
                            "cancelled",
                            "the client cancelled the call before it was decided",
                            None,
                            false,
                        );
                        self.remember_answered(id);
                    }
                }
            },
            Some(ClientReq::List { .. }) => {
                self.from_client.remove(&id);
                self.remember_answered(id);
            }
            Some(ClientReq::Plain { .. }) => {
                self.child_out(bytes.to_vec());
            }
            None => {
                // Blocked, answered locally, or unknown: never forwarded.
                if !self.answered_set.contains(&id) {
                    self.anomaly(
                        "client",
                        "cancel_unknown_id",
                        serde_json::json!({"id": id.to_value()}),
                    );
                }
            }
        }
    }

    // ---- tools/list -----------------------------------------------------
}
