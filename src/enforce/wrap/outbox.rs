//! What the wrapper says and when: session records and anomalies, and the
//! outbox that holds answers to the client until their evidence is
//! durable.

use super::*;

impl State {
    pub(super) fn session(&mut self, event: &'static str, detail: serde_json::Map<String, Value>) {
        let record = SessionRecord {
            server: self.opts.server_id.clone(),
            event,
            detail,
        };
        if let Err(e) = self.evidence.queue(KIND_SESSION, &record) {
            self.evidence_failed(e);
        }
    }

    pub(super) fn evidence_failed(&mut self, failure: super::super::EvidenceFailure) {
        self.durable = None;
        if self.evidence_failure.is_none() {
            self.diag.say(format!("vouch wrap: the evidence log cannot be written ({failure}); refusing every call from now on"));
            self.evidence_failure = Some(failure);
        }
    }

    pub(super) fn anomaly(&mut self, from: &'static str, what: &str, detail: Value) {
        self.anomalies += 1;
        self.diag.say(format!(
            "vouch wrap: dropped a message from the {from}: {what}"
        ));
        if self.anomalies <= MAX_ANOMALY_RECORDS {
            let mut d = serde_json::Map::new();
            d.insert("from".into(), Value::String(from.into()));
            d.insert("what".into(), Value::String(what.into()));
            if !detail.is_null() {
                d.insert("detail".into(), detail);
            }
            self.session("anomaly", d);
        }
    }

    pub(super) fn written(&mut self, w: Written) {
        match w {
            Written::Durable { through } => {
                if let Some(d) = &mut self.durable {
                    *d = (*d).max(through);
                }
            }
            Written::Failed { through, failure } => {
                let _ = through;
                self.evidence_failed(failure);
                self.durable = None;
            }
        }
        self.flush_outbox();
    }

    pub(super) fn flush_outbox(&mut self) {
        use std::sync::atomic::Ordering;
        while let Some(head) = self.outbox.front() {
            if let Some(d) = &mut self.durable
                && head.ticket > *d
            {
                let progress = &self.evidence.progress;
                progress.wanted.store(head.ticket, Ordering::SeqCst);
                *d = (*d).max(progress.durable.load(Ordering::SeqCst));
                if head.ticket <= *d {
                    progress.wanted.store(0, Ordering::SeqCst);
                }
            }
            match self.durable {
                Some(d) if head.ticket <= d => {
                    if let Some(out) = self.outbox.pop_front() {
                        self.to_client.send(&out.bytes);
                    }
                }
                Some(_) => break,
                None => {
                    if let Some(out) = self.outbox.pop_front() {
                        if let Some(instead) = out.instead {
                            self.to_client.send(&instead);
                        } else if out.ticket == 0 {
                            self.to_client.send(&out.bytes);
                        }
                    }
                }
            }
        }
    }

    /// Queues a message for the client behind everything queued before it.
    pub(super) fn send_client(&mut self, bytes: Vec<u8>) {
        self.send_client_after(0, bytes, None);
    }

    pub(super) fn send_client_after(
        &mut self,
        ticket: u64,
        bytes: Vec<u8>,
        instead: Option<Vec<u8>>,
    ) {
        self.outbox.push_back(Out {
            ticket,
            bytes,
            instead,
        });
        self.flush_outbox();
    }
}
