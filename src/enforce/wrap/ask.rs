//! Calls the policy asks about: the question to the person (terminal or
//! MCP elicitation / input-required), the answer, and the retry that
//! carries the wrapper's sealed request state.

use super::*;

impl State {
    pub(super) fn ask(&mut self, id: Id, mut call: Call, rule: &str, reason: &str) {
        call.ask_rule = rule.to_owned();
        let question = format!(
            "vouch: the policy rule {rule} asks before {} on server {} runs. Allow it? ({reason})",
            call.tool, self.opts.server_id
        );
        let modern_elicitation = call
            .meta
            .as_ref()
            .and_then(|m| m.get(META_CAPS))
            .and_then(|c| c.get("elicitation"))
            .is_some_and(Value::is_object);
        if self.is_modern() || call.protocol == MODERN {
            if modern_elicitation {
                return self.input_required(&id, &call, &question, None);
            }
        } else if self.client_elicitation {
            let own = self.own_id();
            let params = serde_json::json!({
                "message": question,
                "requestedSchema": approval_schema(),
            });
            self.own_to_client.insert(own.clone(), id.clone());
            self.send_client(message::request(&own, "elicitation/create", &params));
            call.stage = Stage::Asking {
                via: "elicitation",
                deadline: Instant::now() + self.opts.ask_timeout,
            };
            self.from_client.insert(id, ClientReq::Call(Box::new(call)));
            return;
        }
        if self.opts.tty && tty_available() {
            let tx = self.events.clone();
            let prompt = format!("{question} Arguments (redacted): {}\n[y/N] ", {
                let r = crate::redact::redact(&call.args);
                let mut s = r.value.to_string();
                if s.len() > 2000 {
                    let mut cut = 2000;
                    while !s.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    s.truncate(cut);
                    s.push('…');
                }
                crate::files::path::display(s.as_bytes())
            });
            let ask_id = id.clone();
            let _ = std::thread::Builder::new()
                .name("wrap-tty".into())
                .spawn(move || {
                    let yes = ask_tty(&prompt);
                    let _ = tx.send(Event::Tty { id: ask_id, yes });
                });
            call.stage = Stage::Asking {
                via: "tty",
                deadline: Instant::now() + self.opts.ask_timeout,
            };
            self.from_client.insert(id, ClientReq::Call(Box::new(call)));
            return;
        }
        let why = format!(
            "{reason} (the policy asks, but the client cannot be asked and there is no terminal)"
        );
        self.refuse(
            &id,
            call,
            rule,
            &why,
            Some(Asked {
                via: "none",
                answer: "unanswerable",
            }),
        );
    }

    /// The answer to an ask arrived (or it timed out).
    pub(super) fn answered_ask(&mut self, id: &Id, via: &'static str, yes: bool, timeout: bool) {
        let Some(ClientReq::Call(call)) = self.from_client.remove(id) else {
            return;
        };
        if !matches!(call.stage, Stage::Asking { .. }) {
            self.from_client.insert(id.clone(), ClientReq::Call(call));
            return;
        }
        let answer = if timeout {
            "timeout"
        } else if yes {
            "yes"
        } else {
            "no"
        };
        let asked = Some(Asked { via, answer });
        let rule = if call.ask_rule.is_empty() {
            "ask".to_owned()
        } else {
            call.ask_rule.clone()
        };
        if yes {
            self.forward_call(id.clone(), *call, &rule, "approved by the operator", asked);
        } else {
            let reason = if timeout {
                "no answer in time"
            } else {
                "the operator said no"
            };
            self.refuse(id, *call, &rule, reason, asked);
        }
    }

    /// Answers a 2026-07-28 call with the wrapper's own approval question.
    pub(super) fn input_required(
        &mut self,
        id: &Id,
        call: &Call,
        question: &str,
        server_state: Option<&str>,
    ) {
        let state = self.seal_state(call, server_state);
        #[derive(serde::Serialize)]
        struct InputRequest {
            method: &'static str,
            params: Value,
        }
        let mut requests = serde_json::Map::new();
        requests.insert(
            APPROVE_KEY.into(),
            serde_json::to_value(InputRequest {
                method: "elicitation/create",
                params: serde_json::json!({
                    "message": question,
                    "requestedSchema": approval_schema(),
                }),
            })
            .unwrap_or(Value::Null),
        );
        let result = serde_json::json!({
            "resultType": "input_required",
            "inputRequests": requests,
            "requestState": state,
        });
        self.remember_answered(id.clone());
        self.send_client(message::result_response(id, &result.to_string()));
    }

    pub(super) fn seal_state(&self, call: &Call, server_state: Option<&str>) -> String {
        use base64::Engine;
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let mut nonce = [0u8; 12];
        let _ = ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut nonce);
        let expires = crate::time::now_unix()
            .saturating_add(i64::try_from(self.opts.ask_timeout.as_secs()).unwrap_or(i64::MAX));
        let payload = serde_json::json!({
            "t": call.tool,
            "a": args_digest(&call.args),
            "e": expires,
            "n": crate::hex::encode(&nonce),
            "s": server_state,
        });
        let body = b64.encode(payload.to_string());
        let tag = ring::hmac::sign(&self.hmac, body.as_bytes());
        format!("vouch1.{body}.{}", b64.encode(tag.as_ref()))
    }

    /// The wrapper's own `requestState` in a call's params, if it is one
    /// (verified: tag, not expired, not used; otherwise `Err`).
    pub(super) fn own_request_state(
        &mut self,
        params: Option<&RawValue>,
    ) -> Option<Result<Value, &'static str>> {
        let p: Value = serde_json::from_str(params?.get()).ok()?;
        let state = p.get("requestState")?.as_str()?;
        let rest = state.strip_prefix("vouch1.")?;
        use base64::Engine;
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let Some((body, tag)) = rest.split_once('.') else {
            return Some(Err("the requestState is malformed"));
        };
        let Ok(tag) = b64.decode(tag) else {
            return Some(Err("the requestState is malformed"));
        };
        if ring::hmac::verify(&self.hmac, body.as_bytes(), &tag).is_err() {
            return Some(Err("the requestState was not issued by this wrapper"));
        }
        let Some(payload) = b64
            .decode(body)
            .ok()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        else {
            return Some(Err("the requestState is malformed"));
        };
        let expires = payload.get("e").and_then(Value::as_i64).unwrap_or(0);
        if crate::time::now_unix() > expires {
            return Some(Err("the approval question expired"));
        }
        let nonce = payload
            .get("n")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        if !self.used_nonces.insert(nonce) {
            return Some(Err("the approval was already used"));
        }
        Some(Ok(payload))
    }

    pub(super) fn retry(
        &mut self,
        id: Id,
        mut call: Call,
        params: Option<&RawValue>,
        state: Result<Value, &'static str>,
    ) {
        let payload = match state {
            Ok(p) => p,
            Err(why) => return self.refuse(&id, call, "bad_request_state", why, None),
        };
        if payload.get("t").and_then(Value::as_str) != Some(call.tool.as_str())
            || payload.get("a").and_then(Value::as_str) != Some(args_digest(&call.args).as_str())
        {
            return self.refuse(
                &id,
                call,
                "bad_request_state",
                "the retry is not the call that was approved",
                None,
            );
        }
        let mut p: serde_json::Map<String, Value> = params
            .and_then(|p| serde_json::from_str(p.get()).ok())
            .unwrap_or_default();
        let answer = p
            .get("inputResponses")
            .and_then(|r| r.get(APPROVE_KEY))
            .cloned()
            .unwrap_or(Value::Null);
        let yes = answer.get("action").and_then(Value::as_str) == Some("accept")
            && answer.pointer("/content/approve") == Some(&Value::Bool(true));
        // Rebuild the message without the wrapper's fields.
        if let Some(Value::Object(r)) = p.get_mut("inputResponses") {
            r.remove(APPROVE_KEY);
            if r.is_empty() {
                p.remove("inputResponses");
            }
        }
        match payload.get("s").and_then(Value::as_str) {
            Some(s) => {
                p.insert("requestState".into(), Value::String(s.to_owned()));
            }
            None => {
                p.remove("requestState");
            }
        }
        let rebuilt = serde_json::json!({
            "jsonrpc": "2.0",
            "id": id.to_value(),
            "method": "tools/call",
            "params": p,
        });
        call.line = serde_json::to_vec(&rebuilt).unwrap_or_default();
        let asked = Some(Asked {
            via: "input_required",
            answer: if yes { "yes" } else { "no" },
        });
        // The policy still decides: an approval answers only an ask.
        let decision = match self.policy_decision(&call) {
            Ok(d) => d,
            Err((rule, why)) => return self.refuse(&id, call, &rule, &why, asked),
        };
        match decision.action {
            Action::Block => self.refuse(&id, call, &decision.rule, &decision.reason, asked),
            Action::Allow => self.forward_call(id, call, &decision.rule, &decision.reason, asked),
            Action::Ask if yes => {
                self.forward_call(id, call, &decision.rule, "approved by the user", asked)
            }
            Action::Ask => {
                self.refuse(&id, call, &decision.rule, "the user did not approve", asked)
            }
        }
    }

    // ---- from the server ------------------------------------------------
}

pub(super) fn approval_schema() -> Value {
    serde_json::json!({
        "type": "object",
        "properties": {
            "approve": {
                "type": "boolean",
                "title": "Allow this tool call",
                "description": "vouch wrap asks before this call reaches the server",
            }
        },
        "required": ["approve"],
    })
}

/// True for an elicitation result that accepts with `approve: true`.
pub(super) fn approved(response: &[u8]) -> bool {
    serde_json::from_slice::<Value>(response)
        .ok()
        .and_then(|v| v.get("result").cloned())
        .is_some_and(|r| {
            r.get("action").and_then(Value::as_str) == Some("accept")
                && r.pointer("/content/approve") == Some(&Value::Bool(true))
        })
}

pub(super) fn args_digest(args: &Value) -> String {
    crate::jcs::to_canonical_vec(args).map_or_else(|_| String::new(), |c| sha256_hex(&c))
}

pub(super) fn tty_available() -> bool {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
        .is_ok()
}

/// Asks on the controlling terminal; anything but an explicit yes is no.
pub(super) fn ask_tty(prompt: &str) -> bool {
    use std::io::{BufRead, Read, Write};
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _guard = ONE_AT_A_TIME.lock();
    let Ok(tty) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
    else {
        return false;
    };
    let mut out = &tty;
    if out
        .write_all(prompt.as_bytes())
        .and_then(|()| out.flush())
        .is_err()
    {
        return false;
    }
    let mut answer = String::new();
    let mut reader = std::io::BufReader::new(Read::take(&tty, 64));
    if reader.read_line(&mut answer).is_err() {
        return false;
    }
    matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}
