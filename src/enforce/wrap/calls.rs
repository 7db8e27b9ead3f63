//! Tool calls: the policy's decision, its record, refusals, forwarding
//! after the record is queued, and the outcome of each call.

use super::*;

impl State {
    pub(super) fn call(
        &mut self,
        id: Id,
        bytes: &[u8],
        params: Option<&RawValue>,
        meta: Option<Value>,
    ) {
        self.calls += 1;
        self.arrivals += 1;
        #[derive(serde::Deserialize)]
        struct CallParams<'a> {
            name: String,
            #[serde(borrow, default)]
            arguments: Option<&'a RawValue>,
        }
        let protocol = self.protocol(meta.as_ref());
        let parsed = params.and_then(|p| serde_json::from_str::<CallParams<'_>>(p.get()).ok());
        let Some(parsed) = parsed else {
            // Not a call the policy could decide (no string name): refused,
            // and recorded as an anomaly.
            self.anomaly("client", "invalid_call", Value::Null);
            self.remember_answered(id.clone());
            return self.send_client(message::error_response(
                Some(&id),
                code::INVALID_PARAMS,
                "tools/call needs params with a string name",
            ));
        };
        let raw_args = parsed.arguments.map_or("", RawValue::get);
        let args: Value = if raw_args.is_empty() || raw_args == "null" {
            Value::Object(serde_json::Map::new())
        } else {
            match serde_json::from_str(raw_args) {
                Ok(v) => v,
                Err(_) => Value::Null,
            }
        };
        let mut call = Call {
            tool: parsed.name,
            line: bytes.to_vec(),
            args_sha256: sha256_hex(raw_args.as_bytes()),
            args,
            meta,
            protocol,
            needs_generation: if self.opts.relist_before_call {
                self.next_generation.max(self.required_generation)
            } else {
                self.required_generation
            },
            stage: Stage::Held,
            ask_rule: String::new(),
            ticket: 0,
            decision_seq: 0,
            forwarded_at: None,
            sent_end: 0,
            arrival: self.arrivals,
            cancelled: false,
        };
        if !call.args.is_object() {
            return self.refuse(
                &id,
                call,
                "invalid_arguments",
                "the arguments are not a JSON object",
                None,
            );
        }
        // Numbers the policy would read differently from a JavaScript
        // server (beyond double precision) are refused, not guessed.
        if !raw_args.is_empty()
            && let Err(e) = crate::jcs::check_exact(raw_args.as_bytes(), message::MAX_DEPTH)
        {
            return self.refuse(
                &id,
                call,
                "inexact_arguments",
                &format!("the arguments cannot be read exactly: {e}"),
                None,
            );
        }
        if let Some(failure) = &self.evidence_failure {
            let why = format!("the evidence log cannot be written ({failure})");
            return self.refuse(&id, call, "evidence_unavailable", &why, None);
        }
        if self.child_closed {
            return self.not_sent(&id, &call, None);
        }
        // A 2026-07-28 retry answering the wrapper's own question.
        if let Some(state) = self.own_request_state(params) {
            return self.retry(id, call, params, state);
        }
        if self.opts.relist_before_call {
            call.needs_generation = self.next_generation;
            self.from_client.insert(id, ClientReq::Call(Box::new(call)));
            self.start_fetch();
            return;
        }
        self.from_client.insert(id, ClientReq::Call(Box::new(call)));
        self.progress();
    }

    /// The policy's decision for a call of a listed tool, or why the tool
    /// is not listed.
    pub(super) fn policy_decision(
        &mut self,
        call: &Call,
    ) -> Result<super::super::policy::Decision, (String, String)> {
        let snapshot = self.snapshot.as_ref();
        if let Some(reason) = snapshot.and_then(|s| s.withheld.get(&call.tool)) {
            return Err((
                format!("vet.{}", reason.as_str()),
                format!(
                    "the tool {:?} is withheld by vetting ({}); review it with `vouch pins status --id {}`",
                    call.tool,
                    reason.as_str(),
                    self.opts.server_id
                ),
            ));
        }
        let listed = snapshot.is_some_and(|s| s.find(&call.tool).is_some());
        if !listed {
            return Err((
                "not_listed".into(),
                format!("the server did not list a tool named {:?}", call.tool),
            ));
        }
        Ok(self
            .opts
            .policy
            .decide(&call.tool, &call.args, &mut self.rates, Instant::now()))
    }

    /// Decides a call whose snapshot is there.
    pub(super) fn decide(&mut self, id: Id, call: Call) {
        let decision = match self.policy_decision(&call) {
            Ok(d) => d,
            Err((rule, why)) if rule == "not_listed" => {
                // An unknown tool is a protocol error (MCP, Tools: Error
                // Handling), as the server itself would answer it; the
                // decision record is kept.
                let bytes = message::error_response(
                    Some(&id),
                    code::INVALID_PARAMS,
                    &format!("Unknown tool: {}", call.tool),
                );
                return self.refuse_with(&id, call, &rule, &why, None, bytes);
            }
            Err((rule, why)) => return self.refuse(&id, call, &rule, &why, None),
        };
        match decision.action {
            Action::Allow => self.forward_call(id, call, &decision.rule, &decision.reason, None),
            Action::Block => self.refuse(&id, call, &decision.rule, &decision.reason, None),
            Action::Ask => self.ask(id, call, &decision.rule, &decision.reason),
        }
    }

    /// Writes the decision record; its ticket and seq, or why it could not.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn decide_record(
        &mut self,
        id: &Id,
        call: &Call,
        decision: &'static str,
        rule: &str,
        reason: &str,
        asked: Option<Asked>,
        forwarded: bool,
    ) -> Result<u64, super::super::EvidenceFailure> {
        let redacted = crate::redact::redact(&call.args);
        let size = serde_json::to_vec(&redacted.value).map_or(usize::MAX, |v| v.len());
        let (arguments, masked) = if size <= super::super::evidence::MAX_REDACTED_BYTES {
            (redacted.value, redacted.masked)
        } else {
            (Value::Null, Vec::new())
        };
        let record = DecisionRecord {
            server: self.opts.server_id.clone(),
            protocol: call.protocol.clone(),
            request_id: id.to_value(),
            tool: call.tool.clone(),
            arguments_sha256: call.args_sha256.clone(),
            message_sha256: sha256_hex(&call.line),
            arguments,
            masked,
            decision,
            rule: rule.to_owned(),
            reason: reason.to_owned(),
            asked,
            policy: self.policy_digest.clone(),
            forwarded,
        };
        let r = self.evidence.queue(KIND_DECISION, &record);
        if let Err(e) = &r {
            self.evidence_failed(e.clone());
        }
        r
    }

    pub(super) fn refuse(
        &mut self,
        id: &Id,
        call: Call,
        rule: &str,
        reason: &str,
        asked: Option<Asked>,
    ) {
        let text = format!("vouch blocked this call to {}: {rule}: {reason}", call.tool);
        let bytes = self.tool_error(id, &text);
        self.refuse_with(id, call, rule, reason, asked, bytes);
    }

    /// Records a `block` decision and answers `answer` once it is durable.
    pub(super) fn refuse_with(
        &mut self,
        id: &Id,
        call: Call,
        rule: &str,
        reason: &str,
        asked: Option<Asked>,
        answer: Vec<u8>,
    ) {
        let instead = message::error_response(
            Some(id),
            code::INTERNAL_ERROR,
            "vouch wrap: the evidence log cannot be written; the call was not made",
        );
        self.remember_answered(id.clone());
        match self.decide_record(id, &call, "block", rule, reason, asked, false) {
            Ok(ticket) => self.send_client_after(ticket, answer, Some(instead)),
            Err(_) => self.send_client(instead),
        }
    }

    /// A tool result with `isError: true` carrying `text`.
    pub(super) fn tool_error(&self, id: &Id, text: &str) -> Vec<u8> {
        #[derive(serde::Serialize)]
        struct Content<'a> {
            #[serde(rename = "type")]
            kind: &'static str,
            text: &'a str,
        }
        #[derive(serde::Serialize)]
        struct CallResult<'a> {
            content: [Content<'a>; 1],
            #[serde(rename = "isError")]
            is_error: bool,
            #[serde(rename = "resultType", skip_serializing_if = "Option::is_none")]
            result_type: Option<&'static str>,
        }
        let result = CallResult {
            content: [Content { kind: "text", text }],
            is_error: true,
            result_type: self.is_modern().then_some("complete"),
        };
        message::result_response(id, &serde_json::to_string(&result).unwrap_or_default())
    }

    pub(super) fn forward_call(
        &mut self,
        id: Id,
        mut call: Call,
        rule: &str,
        reason: &str,
        asked: Option<Asked>,
    ) {
        if let Some(failure) = self.evidence_failure.clone() {
            let why = format!("the evidence log cannot be written ({failure})");
            return self.refuse(&id, call, "evidence_unavailable", &why, asked);
        }
        if self.child_closed {
            return self.not_sent(&id, &call, asked);
        }
        // Queued now, written before anything after it goes to the server
        // (so a killed wrapper leaves it in the log), synced while the
        // server runs.
        match self.decide_record(&id, &call, "allow", rule, reason, asked, true) {
            Ok(ticket) => call.ticket = ticket,
            Err(_) => {
                self.remember_answered(id.clone());
                return self.send_client(message::error_response(
                    Some(&id),
                    code::INTERNAL_ERROR,
                    "vouch wrap: the evidence log cannot be written; the call was not made",
                ));
            }
        }
        call.stage = Stage::Forwarded;
        call.forwarded_at = Some(Instant::now());
        self.to_server
            .push(ToServer::Call(id.clone(), call.line.clone()));
        self.from_client.insert(id, ClientReq::Call(Box::new(call)));
    }

    /// A call that came while the session was ending: never sent, and the
    /// log says so.
    pub(super) fn not_sent(&mut self, id: &Id, call: &Call, asked: Option<Asked>) {
        let _ = self.decide_record(
            id,
            call,
            "cancelled",
            "session_ended",
            "the session was ending; the call was not sent",
            asked,
            false,
        );
        self.remember_answered(id.clone());
        self.send_client(message::error_response(
            Some(id),
            code::SERVER_UNAVAILABLE,
            "vouch wrap is ending the session; the call was not sent",
        ));
    }

    /// Queues a message for the server (sent after the evidence of what
    /// came before it is written).
    pub(super) fn child_out(&mut self, bytes: Vec<u8>) {
        self.to_server.push(ToServer::Line(bytes));
    }

    /// Writes the queued records, then sends what waited for them to the
    /// server, in order.
    pub(super) fn flush_evidence(&mut self) {
        let written = self.evidence.flush();
        let seqs: HashMap<u64, u64> = match &written {
            Ok(s) => s.iter().copied().collect(),
            Err(e) => {
                self.evidence_failed(e.clone());
                HashMap::new()
            }
        };
        for item in std::mem::take(&mut self.to_server) {
            match item {
                ToServer::Line(bytes) => {
                    self.to_child.sink.send(&bytes);
                }
                ToServer::Call(id, line) => {
                    if written.is_err() {
                        // Its decision is not in the log: never forwarded.
                        self.from_client.remove(&id);
                        self.remember_answered(id.clone());
                        self.send_client(message::error_response(
                            Some(&id),
                            code::INTERNAL_ERROR,
                            "vouch wrap: the evidence log cannot be written; the call was not made",
                        ));
                        continue;
                    }
                    if let Some(ClientReq::Call(call)) = self.from_client.get_mut(&id) {
                        call.decision_seq = seqs.get(&call.ticket).copied().unwrap_or(0);
                        call.forwarded_at = Some(Instant::now());
                    }
                    match self.to_child.sink.send(&line) {
                        Some(end) => {
                            if let Some(ClientReq::Call(call)) = self.from_client.get_mut(&id) {
                                call.sent_end = end;
                            }
                        }
                        None => self.undelivered(&id),
                    }
                }
            }
        }
    }

    /// A call whose decision says it was forwarded but whose line could not
    /// be written to the server (its stdin is closed): the log says so.
    pub(super) fn undelivered(&mut self, id: &Id) {
        if let Some(ClientReq::Call(call)) = self.from_client.remove(id) {
            self.outcome(id, &call, "undelivered", None, false, None);
            self.remember_answered(id.clone());
            if !self.client_closed {
                self.send_client(message::error_response(
                    Some(id),
                    code::SERVER_UNAVAILABLE,
                    "vouch wrap: the MCP server's stdin is closed; the call was not delivered",
                ));
            }
        }
    }

    pub(super) fn outcome(
        &mut self,
        id: &Id,
        call: &Call,
        outcome: &'static str,
        response: Option<&[u8]>,
        is_error: bool,
        error_code: Option<i64>,
    ) {
        let duration_us = call.forwarded_at.map_or(0, |t| {
            u64::try_from(t.elapsed().as_micros()).unwrap_or(u64::MAX)
        });
        let record = OutcomeRecord {
            server: self.opts.server_id.clone(),
            decision_seq: call.decision_seq,
            request_id: id.to_value(),
            tool: call.tool.clone(),
            outcome,
            response_sha256: response.map(sha256_hex),
            is_error,
            error_code,
            duration_us,
        };
        if let Err(e) = self.evidence.queue(KIND_OUTCOME, &record) {
            self.evidence_failed(e);
        }
    }

    // ---- ask ------------------------------------------------------------
}
