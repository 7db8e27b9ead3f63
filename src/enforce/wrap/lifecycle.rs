//! The loop and how a session ends: events, deadlines, the shutdown
//! sequence after EOF or a stop signal, and the end record.

use super::*;

impl State {
    pub(super) fn main_loop(
        &mut self,
        events: &Receiver<Event>,
        child: &mut Child,
    ) -> Option<ExitStatus> {
        let mut shutdown_at: Option<(Instant, u8)> = None;
        loop {
            let mut deadline = self.next_deadline(shutdown_at.map(|(t, _)| t));
            if self.to_child.sink.pending() || self.to_client.pending() {
                // A peer is slow to read: try again soon.
                let soon = Instant::now() + BACKLOG_RETRY;
                deadline = Some(deadline.map_or(soon, |d| d.min(soon)));
            }
            let event = match deadline {
                Some(d) => match events.recv_timeout(d.saturating_duration_since(Instant::now())) {
                    Ok(e) => Some(e),
                    Err(RecvTimeoutError::Timeout) => None,
                    Err(RecvTimeoutError::Disconnected) => break,
                },
                None => match events.recv() {
                    Ok(e) => Some(e),
                    Err(_) => break,
                },
            };
            let mut next = event;
            let mut handled = 0;
            let mut stop = false;
            while let Some(event) = next.take() {
                if self.handle(event, &mut shutdown_at) {
                    stop = true;
                    break;
                }
                handled += 1;
                if handled < 64 {
                    next = events.try_recv().ok();
                }
            }
            self.flush_evidence();
            if stop {
                // The server's stdout closed.
                break;
            }
            self.timeouts();
            self.flush_evidence();
            if let Some((at, step)) = shutdown_at
                && Instant::now() >= at
            {
                match step {
                    0 => {
                        // What the server did not take in time never
                        // reaches it (and is recorded as undelivered).
                        self.to_child.sink.abandon();
                        signal_group(child, "TERM");
                        shutdown_at = Some((Instant::now() + self.step_grace(), 1));
                    }
                    _ => {
                        signal_group(child, "KILL");
                        break;
                    }
                }
            }
            self.flush_outbox();
            self.to_child.sink.pump();
            self.to_client.pump();
        }
        self.after_loop(events, child)
    }

    /// Handles one event; true when the server's stdout closed.
    pub(super) fn handle(&mut self, event: Event, shutdown_at: &mut Option<(Instant, u8)>) -> bool {
        if self.stop_signal.is_none() && !matches!(event, Event::Signal(_)) {
            let which = self.stop_which.load(std::sync::atomic::Ordering::SeqCst);
            if which != 0 {
                // A signal came before this event was handled: nothing
                // read after it is sent to the server.
                self.stop(i32::try_from(which).unwrap_or(0), shutdown_at);
                self.stop_early = true;
            }
        }
        if let Event::Signal(_) = event
            && std::mem::take(&mut self.stop_early)
        {
            // The event of the signal the shutdown already started with.
            return false;
        }
        {
            match Some(event) {
                Some(Event::Client(Line::Data(bytes))) => self.client_line(&bytes),
                Some(Event::Client(Line::TooLong)) => {
                    self.anomaly("client", "message_too_large", Value::Null);
                    let msg = format!("message larger than {} bytes", self.opts.max_message_bytes);
                    self.send_client(message::error_response(None, code::INVALID_REQUEST, &msg));
                }
                Some(Event::Client(Line::Eof)) => {
                    // The client is done: close the server's stdin, then
                    // escalate if it does not exit.
                    self.client_closed = true;
                    self.close_child();
                    if shutdown_at.is_none() {
                        *shutdown_at = Some((Instant::now() + self.step_grace(), 0));
                    }
                }
                Some(Event::Child(Line::Data(bytes))) => self.server_line(&bytes),
                Some(Event::Child(Line::TooLong)) => {
                    self.anomaly("server", "message_too_large", Value::Null);
                }
                Some(Event::Child(Line::Eof)) => return true,
                Some(Event::Evidence(w)) => self.written(w),
                Some(Event::Tty { id, yes }) => self.answered_ask(&id, "tty", yes, false),
                Some(Event::Signal(signal)) => self.stop(signal, shutdown_at),
                None => {}
            }
        }
        false
    }

    /// How long each step of the shutdown waits for the server.
    pub(super) fn step_grace(&self) -> Duration {
        match self.signals {
            0 => self.opts.shutdown_grace,
            1 => self.opts.shutdown_grace.min(SIGNAL_GRACE),
            _ => Duration::ZERO,
        }
    }

    /// Closes the server's stdin after sending what waited for the log.
    pub(super) fn close_child(&mut self) {
        self.flush_evidence();
        self.to_child.sink.close();
        self.child_closed = true;
    }

    /// A stop signal: the first starts the shutdown (or shortens the one
    /// under way), a second kills the server at once.
    pub(super) fn stop(&mut self, signal: i32, shutdown_at: &mut Option<(Instant, u8)>) {
        self.signals += 1;
        let now = Instant::now();
        if self.stop_signal.is_none() {
            self.stop_signal = Some(signal);
            self.diag.say(format!(
                "vouch wrap: {} received: ending the session",
                signal_name(signal)
            ));
            self.close_child();
            let grace = self.step_grace();
            *shutdown_at = Some(match *shutdown_at {
                None => (now + grace, 0),
                Some((at, step)) => (at.min(now + grace), step),
            });
        } else {
            self.diag.say(format!(
                "vouch wrap: {} received again: stopping the server now",
                signal_name(signal)
            ));
            *shutdown_at = Some((now, 1));
        }
    }

    pub(super) fn after_loop(
        &mut self,
        events: &Receiver<Event>,
        child: &mut Child,
    ) -> Option<ExitStatus> {
        // The server's stdout is closed (or it was killed): collect it.
        let status = wait_until(child, Instant::now() + self.step_grace()).or_else(|| {
            signal_group(child, "TERM");
            wait_until(child, Instant::now() + self.step_grace())
        });
        let status = status.or_else(|| {
            signal_group(child, "KILL");
            child.wait().ok()
        });
        // Drain evidence reports still queued so the outbox can flush.
        while let Ok(e) = events.try_recv() {
            match e {
                Event::Evidence(w) => self.written(w),
                Event::Signal(_) => self.signals += 1,
                _ => {}
            }
        }
        status
    }

    pub(super) fn finish(mut self, status: Option<ExitStatus>) -> crate::Result<i32> {
        // Calls decided but not yet written to the server are resolved
        // first (its stdin is closed: they are recorded as undelivered).
        self.flush_evidence();
        self.to_child.sink.abandon();
        self.child_closed = true;
        // What the server never read (it is gone): a call whose line was
        // still in its stdin pipe was not delivered, whatever the
        // decision's `forwarded` says.
        let read = self.to_child.read_by_server();
        let unread_bytes = self.to_child.sink.written().saturating_sub(read);
        let mut undelivered: Vec<Value> = self
            .cancelled_open
            .iter()
            .filter(|(_, end)| **end > read)
            .map(|(id, _)| id.to_value())
            .collect();
        // Every request still open gets an answer: the server is gone.
        let open: Vec<Id> = self.from_client.keys().cloned().collect();
        for id in open {
            if let Some(req) = self.from_client.remove(&id) {
                if let ClientReq::Call(call) = &req {
                    if matches!(call.stage, Stage::Forwarded) {
                        if call.sent_end > read {
                            undelivered.push(id.to_value());
                            self.outcome(&id, call, "undelivered", None, false, None);
                        } else if !call.cancelled {
                            self.outcome(&id, call, "server_exited", None, false, None);
                        }
                    } else {
                        // Held or being asked when the session ended: it
                        // was never sent, and the log says so.
                        let _ = self.decide_record(
                            &id,
                            call,
                            "cancelled",
                            "session_ended",
                            "the session ended before the call was decided",
                            None,
                            false,
                        );
                    }
                }
                // The client may have closed its stdin and still read
                // stdout: every open request is answered.
                self.send_client(message::error_response(
                    Some(&id),
                    code::SERVER_UNAVAILABLE,
                    "the MCP server exited",
                ));
            }
        }
        self.flush_evidence();
        let code = exit_code(status);
        self.session("end", {
            let mut d = serde_json::Map::new();
            let reason = if self.stop_signal.is_some() {
                "signal"
            } else if self.client_closed {
                "client_closed"
            } else {
                "server_exited"
            };
            d.insert("reason".into(), Value::String(reason.into()));
            if let Some(signal) = self.stop_signal {
                d.insert("signal".into(), Value::String(signal_name(signal).into()));
            }
            d.insert("exit_code".into(), Value::from(code));
            if unread_bytes > 0 {
                d.insert("unread_bytes".into(), Value::from(unread_bytes));
            }
            if !undelivered.is_empty() {
                d.insert("undelivered".into(), Value::Array(undelivered));
            }
            d.insert("calls".into(), Value::from(self.calls));
            d.insert("anomalies".into(), Value::from(self.anomalies));
            d
        });
        let result = self.evidence.finish();
        // Whatever waited for durability can go now (or is replaced).
        if let Err(failure) = &result {
            self.evidence_failure = Some(failure.clone());
            self.durable = None;
        } else {
            self.durable = Some(u64::MAX);
        }
        self.flush_outbox();
        // The last answers (the log is complete already): briefly after a
        // signal, when the host will not wait long.
        let drain = if self.signals > 0 {
            SIGNAL_GRACE / 2
        } else {
            self.opts.shutdown_grace
        };
        self.to_client.drain_for(drain);
        self.to_client.close();
        match result {
            Ok(()) => Ok(code),
            Err(source) => Err(super::super::EnforceError::Evidence {
                path: self.log.clone(),
                source,
            }
            .into()),
        }
    }

    pub(super) fn next_deadline(&self, shutdown: Option<Instant>) -> Option<Instant> {
        let mut d = shutdown;
        let mut consider = |t: Instant| {
            d = Some(d.map_or(t, |x| x.min(t)));
        };
        if let Some(f) = &self.fetch {
            consider(f.deadline);
        }
        if let Some(t) = self.evidence.checkpoint_due() {
            consider(t);
        }
        for req in self.from_client.values() {
            if let ClientReq::Call(c) = req
                && let Stage::Asking { deadline, .. } = c.stage
            {
                consider(deadline);
            }
        }
        d
    }

    pub(super) fn timeouts(&mut self) {
        let now = Instant::now();
        if self.evidence.checkpoint_due().is_some_and(|t| now >= t) {
            self.flush_evidence();
            if let Err(e) = self.evidence.checkpoint() {
                self.evidence_failed(e);
            }
        }
        if self.fetch.as_ref().is_some_and(|f| now >= f.deadline) {
            let fetch = self.fetch.take();
            if let Some(f) = fetch {
                self.child_out(message::notification(
                    "notifications/cancelled",
                    &serde_json::json!({"requestId": f.id.to_value(), "reason": "timed out"}),
                ));
            }
            self.fetch_failed("the server did not list its tools in time");
        }
        let expired: Vec<Id> = self
            .from_client
            .iter()
            .filter_map(|(id, r)| match r {
                ClientReq::Call(c) => match c.stage {
                    Stage::Asking { deadline, .. } if now >= deadline => Some(id.clone()),
                    _ => None,
                },
                _ => None,
            })
            .collect();
        for id in expired {
            let via = match self.from_client.get(&id) {
                Some(ClientReq::Call(c)) => match c.stage {
                    Stage::Asking { via, .. } => via,
                    _ => "tty",
                },
                _ => "tty",
            };
            // Withdraw the question put to the client.
            let own: Vec<Id> = self
                .own_to_client
                .iter()
                .filter(|(_, call)| **call == id)
                .map(|(own, _)| own.clone())
                .collect();
            for o in own {
                self.own_to_client.remove(&o);
                self.send_client(message::notification(
                    "notifications/cancelled",
                    &serde_json::json!({"requestId": o.to_value(), "reason": "timed out"}),
                ));
            }
            self.answered_ask(&id, via, false, true);
        }
    }

    // ---- evidence -------------------------------------------------------
}
