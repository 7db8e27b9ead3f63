//! The vetted tool list: fetching every page from the server, vetting
//! and pinning the definitions, and answering `tools/list` from the
//! snapshot.

use super::*;

impl State {
    pub(super) fn client_list(&mut self, id: Id, params: Option<&RawValue>) {
        let cursor = params
            .and_then(|p| serde_json::from_str::<Value>(p.get()).ok())
            .is_some_and(|v| v.get("cursor").is_some_and(|c| !c.is_null()));
        let needs_generation = if self.opts.relist_before_call {
            self.next_generation
        } else {
            self.required_generation
        };
        self.from_client.insert(
            id,
            ClientReq::List {
                needs_generation,
                cursor,
                arrival: self.arrivals,
            },
        );
        self.arrivals += 1;
        self.progress();
    }

    /// Starts the wrapper's own listing, unless one is running (then it
    /// runs again when done).
    pub(super) fn start_fetch(&mut self) {
        if self.fetch.is_some() {
            self.fetch_again = true;
            return;
        }
        if !self.can_list() {
            return;
        }
        let generation = self.next_generation;
        self.next_generation += 1;
        let id = self.own_id();
        self.fetch = Some(Fetch {
            generation,
            id: id.clone(),
            pages: 0,
            cursors: HashSet::new(),
            tools: Vec::new(),
            extra: None,
            deadline: Instant::now() + self.opts.list_timeout,
        });
        self.send_list_page(&id, None);
    }

    pub(super) fn can_list(&self) -> bool {
        if self.child_closed {
            return false;
        }
        match self.era {
            Era::Modern => self.modern_meta.is_some(),
            Era::Legacy(_) => self.handshake_done,
            Era::Unknown => self.modern_meta.is_some(),
        }
    }

    pub(super) fn send_list_page(&mut self, id: &Id, cursor: Option<&str>) {
        let mut params = serde_json::Map::new();
        if let Some(c) = cursor {
            params.insert("cursor".into(), Value::String(c.to_owned()));
        }
        if let Some(meta) = &self.modern_meta
            && !matches!(self.era, Era::Legacy(_))
        {
            let mut m = serde_json::Map::new();
            for key in [META_VERSION, META_CAPS] {
                if let Some(v) = meta.get(key) {
                    m.insert(key.into(), v.clone());
                }
            }
            params.insert("_meta".into(), Value::Object(m));
        }
        self.to_child
            .sink
            .send(&message::request(id, "tools/list", &Value::Object(params)));
    }

    pub(super) fn list_page(&mut self, result: Option<&RawValue>, error: Option<&RawValue>) {
        let Some(mut fetch) = self.fetch.take() else {
            return;
        };
        if let Some(e) = error {
            let text = serde_json::from_str::<Value>(e.get())
                .ok()
                .and_then(|v| v.get("message").and_then(Value::as_str).map(str::to_owned))
                .unwrap_or_else(|| "an error".into());
            return self.fetch_failed(&format!(
                "the server answered tools/list with an error: {text}"
            ));
        }
        let page = result.and_then(|r| {
            serde_json::from_str::<serde_json::Map<String, Value>>(r.get())
                .ok()
                .map(|_| r)
        });
        let Some(page) = page else {
            return self.fetch_failed("the server's tools/list result is not an object");
        };
        #[derive(serde::Deserialize)]
        struct PageOf<'a> {
            #[serde(borrow)]
            tools: Vec<&'a RawValue>,
            #[serde(rename = "nextCursor")]
            next_cursor: Option<String>,
        }
        let Ok(parsed) = serde_json::from_str::<PageOf<'_>>(page.get()) else {
            return self.fetch_failed("the server's tools/list result has no tools array");
        };
        if fetch.extra.is_none() {
            let all: serde_json::Map<String, Value> =
                serde_json::from_str(page.get()).unwrap_or_default();
            let mut extra = Vec::new();
            if let Ok(raw) = serde_json::from_str::<HashMap<String, Box<RawValue>>>(page.get()) {
                for k in all.keys() {
                    if k != "tools"
                        && k != "nextCursor"
                        && let Some(v) = raw.get(k)
                    {
                        extra.push((k.clone(), v.clone()));
                    }
                }
            }
            fetch.extra = Some(extra);
        }
        for raw in parsed.tools {
            let value: Value = match serde_json::from_str(raw.get()) {
                Ok(v) => v,
                Err(_) => return self.fetch_failed("a tool definition is not JSON"),
            };
            let Some(name) = value.get("name").and_then(Value::as_str) else {
                return self.fetch_failed("a tool definition has no name");
            };
            if fetch.tools.iter().any(|(n, _)| n == name) {
                return self.fetch_failed(&format!("the tool {name:?} is listed twice"));
            }
            let digest = match crate::jcs::to_canonical_vec(&value) {
                Ok(c) => {
                    use sha2::Digest;
                    sha2::Sha256::digest(&c).into()
                }
                Err(_) => return self.fetch_failed("a tool definition cannot be canonicalised"),
            };
            let raw: Box<RawValue> = match RawValue::from_string(raw.get().to_owned()) {
                Ok(r) => r,
                Err(_) => return self.fetch_failed("a tool definition is not JSON"),
            };
            fetch.tools.push((name.to_owned(), Tool { raw, digest }));
        }
        fetch.pages += 1;
        if fetch.tools.len() > MAX_TOOLS || fetch.pages > MAX_LIST_PAGES {
            return self
                .fetch_failed("the server lists more tools or pages than the wrapper accepts");
        }
        match parsed.next_cursor {
            Some(c) => {
                if !fetch.cursors.insert(c.clone()) {
                    return self.fetch_failed("the server repeated a tools/list cursor");
                }
                let id = self.own_id();
                fetch.id = id.clone();
                self.fetch = Some(fetch);
                self.send_list_page(&id, Some(&c));
            }
            None => self.fetch_done(fetch),
        }
    }

    pub(super) fn fetch_done(&mut self, fetch: Fetch) {
        let mut snapshot = Snapshot {
            generation: fetch.generation,
            listed: fetch
                .tools
                .iter()
                .map(|(n, t)| (n.clone(), t.digest))
                .collect(),
            tools: fetch.tools,
            withheld: HashMap::new(),
            ticket: 0,
            extra: fetch.extra.unwrap_or_default(),
        };
        let (mut added, mut removed, mut changed) = (Vec::new(), Vec::new(), Vec::new());
        if let Some(old) = &self.snapshot {
            let find = |name: &str| old.listed.iter().find(|(n, _)| n == name).map(|(_, d)| d);
            for (name, digest) in &snapshot.listed {
                match find(name) {
                    None => added.push(Value::String(name.clone())),
                    Some(d) if d != digest => changed.push(Value::String(name.clone())),
                    Some(_) => {}
                }
            }
            for (name, _) in &old.listed {
                if !snapshot.listed.iter().any(|(n, _)| n == name) {
                    removed.push(Value::String(name.clone()));
                }
            }
        } else {
            added = snapshot
                .listed
                .iter()
                .map(|(n, _)| Value::String(n.clone()))
                .collect();
        }
        let digest = {
            use sha2::Digest;
            let mut h = sha2::Sha256::new();
            for (name, digest) in &snapshot.listed {
                h.update(name.as_bytes());
                h.update([0]);
                h.update(digest);
            }
            crate::hex::encode(&h.finalize())
        };
        if !(added.is_empty() && removed.is_empty() && changed.is_empty()) {
            let mut d = serde_json::Map::new();
            d.insert("tools".into(), Value::from(snapshot.listed.len()));
            d.insert("digest".into(), Value::String(format!("sha256:{digest}")));
            d.insert("added".into(), Value::Array(added));
            d.insert("removed".into(), Value::Array(removed));
            d.insert("changed".into(), Value::Array(changed));
            self.session("tools", d);
        }
        let listing: Vec<(String, Value)> = snapshot
            .tools
            .iter()
            .map(|(n, t)| {
                (
                    n.clone(),
                    serde_json::from_str(t.raw.get()).unwrap_or(Value::Null),
                )
            })
            .collect();
        let verdict = self.vet_listing(&listing);
        snapshot.ticket = verdict.0;
        for t in &verdict.1.tools {
            if t.status == Status::Withheld {
                snapshot.withheld.insert(t.name.clone(), t.reason);
            }
        }
        snapshot
            .tools
            .retain(|(n, _)| !snapshot.withheld.contains_key(n));
        self.snapshot = Some(snapshot);
        if std::mem::take(&mut self.fetch_again) {
            self.start_fetch();
        }
        self.progress();
    }

    /// Judges a listing (`crate::vet::gate`), records the verdict and, on
    /// first use, the pins; returns the last ticket and the verdict.
    pub(super) fn vet_listing(&mut self, listing: &[(String, Value)]) -> (u64, VerdictBody) {
        if self.vet.pins.log_id.is_none() {
            // A log this session started: its first record is written
            // (the session's start, flushed before anything reached the
            // server).
            // Unreadable: pins made now will not count when read back.
            self.vet.pins.log_id =
                Some(crate::vet::pins::fresh_log_id(&self.log).unwrap_or_else(|| "unknown".into()));
        }
        if gate::ends_first_use(&self.vet.pins, listing) {
            self.vet.first_use = false;
        }
        let instructions = self.vet.instructions.as_ref().map(|(_, v)| v.clone());
        let mut verdict = gate::judge(
            Ruleset::builtin(),
            &self.vet.opts,
            &self.vet.pins,
            self.vet.first_use,
            &self.opts.server_id,
            &self.vet.launch,
            listing,
            instructions,
        );
        // The same listing judged the same way again (a server announcing
        // changes that are none): the verdict on record still holds.
        let key = (
            verdict.listing.clone(),
            verdict.pin.clone(),
            verdict
                .instructions
                .as_ref()
                .map(|i| (i.digest.clone(), i.reason)),
        );
        if self.vet.last.as_ref() == Some(&key) {
            return (self.vet.last_ticket, verdict);
        }
        let mut signed = sign_body(VERDICT_PAYLOAD_TYPE, &verdict, &self.vet.key);
        let too_large = signed.as_ref().map_or(usize::MAX, |v| v.to_string().len())
            > crate::chain::record::MAX_LINE_LEN - 4096;
        if too_large {
            // Cannot be reviewed or pinned: nothing new is allowed.
            for t in &mut verdict.tools {
                t.definition = None;
                if t.reason == Reason::Tofu {
                    t.status = Status::Withheld;
                    t.reason = Reason::TooLarge;
                }
            }
            if let Some(i) = &mut verdict.instructions {
                i.text = None;
                if i.reason == Reason::Tofu {
                    i.status = Status::Withheld;
                    i.reason = Reason::TooLarge;
                }
            }
            verdict.tofu = false;
            verdict.allowed = verdict
                .tools
                .iter()
                .filter(|t| t.status == Status::Allowed)
                .count() as u64;
            verdict.withheld = verdict.tools.len() as u64 - verdict.allowed;
            signed = sign_body(VERDICT_PAYLOAD_TYPE, &verdict, &self.vet.key);
        }
        let Some(signed) = signed else {
            // No RFC 8785 form: the wrapper canonicalised every definition
            // already, so this is not reached; withhold everything if it is.
            for t in &mut verdict.tools {
                t.status = Status::Withheld;
            }
            return (0, verdict);
        };
        let mut ticket = match self.evidence.queue(KIND_VERDICT, &signed) {
            Ok(t) => t,
            Err(e) => {
                self.evidence_failed(e);
                0
            }
        };
        if verdict.tofu {
            let body = gate::tofu_pin(&verdict, listing, &self.vet.pins);
            if let Some(pin) = sign_body(PIN_PAYLOAD_TYPE, &body, &self.vet.key) {
                let digest = digest_of(&pin);
                match self.evidence.queue(KIND_PIN, &pin) {
                    Ok(t) => {
                        ticket = t;
                        self.vet.pins.apply(0, "", Ok((body, digest)));
                        self.rejudge_instructions();
                    }
                    Err(e) => self.evidence_failed(e),
                }
            }
        }
        if !verdict.tofu {
            self.vet.last = Some(key);
            self.vet.last_ticket = ticket;
        }
        (ticket, verdict)
    }

    /// The instructions' verdict again (after the pins changed).
    pub(super) fn rejudge_instructions(&mut self) {
        if let Some((text, _)) = self.vet.instructions.take() {
            let v = gate::judge_instructions(
                Ruleset::builtin(),
                &self.vet.opts,
                &self.vet.pins,
                self.vet.first_use,
                &self.vet.launch,
                &text,
            );
            self.vet.instructions = Some((text, v));
        }
    }

    /// Vets the `instructions` of an `initialize` / `server/discover`
    /// result; returns the bytes to forward (without the text when it is
    /// withheld).
    pub(super) fn vet_instructions(&mut self, bytes: &[u8], result: &Value) -> Vec<u8> {
        let Some(found) = result.get("instructions") else {
            return bytes.to_vec();
        };
        let Some(text) = found.as_str() else {
            // Not text: nothing a client should put in a prompt; removed.
            self.anomaly(
                "server",
                "instructions_not_a_string",
                serde_json::json!({"type": json_type(found)}),
            );
            return without_instructions(bytes);
        };
        let verdict = gate::judge_instructions(
            Ruleset::builtin(),
            &self.vet.opts,
            &self.vet.pins,
            self.vet.first_use,
            &self.vet.launch,
            text,
        );
        let withheld = verdict.status == Status::Withheld;
        self.vet.instructions = Some((text.to_owned(), verdict));
        if !withheld {
            return bytes.to_vec();
        }
        without_instructions(bytes)
    }

    pub(super) fn fetch_failed(&mut self, why: &str) {
        self.diag.say(format!("vouch wrap: {why}"));
        self.fetch = None;
        self.fetch_again = false;
        // Everything waiting for a list is answered now.
        let waiting: Vec<Id> = self
            .from_client
            .iter()
            .filter(|(_, r)| matches!(r, ClientReq::List { .. } | ClientReq::Call(_)))
            .filter(|(_, r)| match r {
                ClientReq::Call(c) => matches!(c.stage, Stage::Held),
                _ => true,
            })
            .map(|(id, _)| id.clone())
            .collect();
        for id in waiting {
            match self.from_client.remove(&id) {
                Some(ClientReq::List { .. }) => {
                    self.send_client(message::error_response(
                        Some(&id),
                        code::INTERNAL_ERROR,
                        &format!("vouch wrap: {why}"),
                    ));
                }
                Some(ClientReq::Call(call)) => {
                    self.refuse(&id, *call, "tools_unavailable", why, None);
                }
                Some(other) => {
                    self.from_client.insert(id, other);
                }
                None => {}
            }
        }
    }

    /// Answers what waits for a snapshot, and starts a fetch if something
    /// waits for a newer one.
    pub(super) fn progress(&mut self) {
        let ready_generation = self.snapshot.as_ref().map_or(0, |s| s.generation);
        let mut need_fetch = false;
        let mut waiting: Vec<(u64, Id)> = self
            .from_client
            .iter()
            .filter_map(|(id, r)| match r {
                ClientReq::List {
                    needs_generation,
                    arrival,
                    ..
                } => Some((id, *needs_generation, *arrival)),
                ClientReq::Call(c) if matches!(c.stage, Stage::Held) => {
                    Some((id, c.needs_generation, c.arrival))
                }
                _ => None,
            })
            .filter_map(|(id, g, arrival)| {
                if g <= ready_generation {
                    Some((arrival, id.clone()))
                } else {
                    need_fetch = true;
                    None
                }
            })
            .collect();
        // In the order the client sent them (two calls with side effects
        // on one thing must not be swapped).
        waiting.sort_by_key(|(arrival, _)| *arrival);
        for (_, id) in waiting {
            match self.from_client.remove(&id) {
                Some(ClientReq::List { cursor, .. }) => self.answer_list(&id, cursor),
                Some(ClientReq::Call(call)) => self.decide(id, *call),
                Some(other) => {
                    self.from_client.insert(id, other);
                }
                None => {}
            }
        }
        if need_fetch {
            let fetching_new_enough = self
                .fetch
                .as_ref()
                .is_some_and(|f| f.generation >= self.required_generation);
            if !fetching_new_enough {
                self.start_fetch();
            }
        }
    }

    pub(super) fn answer_list(&mut self, id: &Id, cursor: bool) {
        let ticket = self.snapshot.as_ref().map_or(0, |s| s.ticket);
        if cursor {
            // The wrapper serves the whole list as one page: it never hands
            // out a cursor, so any cursor is not one of its own.
            self.remember_answered(id.clone());
            return self.send_client(message::error_response(
                Some(id),
                code::INVALID_PARAMS,
                "invalid cursor",
            ));
        }
        let Some(snapshot) = &self.snapshot else {
            return;
        };
        let mut result = String::from("{\"tools\":[");
        for (i, (_, tool)) in snapshot.tools.iter().enumerate() {
            if i > 0 {
                result.push(',');
            }
            result.push_str(tool.raw.get());
        }
        result.push(']');
        for (k, v) in &snapshot.extra {
            result.push(',');
            result.push_str(&Value::String(k.clone()).to_string());
            result.push(':');
            result.push_str(v.get());
        }
        result.push('}');
        let bytes = message::result_response(id, &result);
        self.remember_answered(id.clone());
        let instead = message::error_response(
            Some(id),
            code::INTERNAL_ERROR,
            "vouch wrap: the evidence log cannot be written; the tools are withheld",
        );
        self.send_client_after(ticket, bytes, Some(instead));
    }

    // ---- tools/call -----------------------------------------------------
}

/// A response with `result.instructions` removed (parsed before, so it is
/// JSON; if it were not, nothing of it is sent).
pub(super) fn without_instructions(bytes: &[u8]) -> Vec<u8> {
    let Ok(mut msg) = serde_json::from_slice::<Value>(bytes) else {
        return Vec::new();
    };
    if let Some(r) = msg.get_mut("result").and_then(Value::as_object_mut) {
        r.remove("instructions");
    }
    serde_json::to_vec(&msg).unwrap_or_default()
}

pub(super) fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}
