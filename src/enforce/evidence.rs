//! The wrapper's evidence: the records it writes (`tool_call` decisions,
//! `tool_result` outcomes, `mcp_session` events; FORMAT.md §18) and the
//! thread that writes them.
//!
//! Durability: the wrapper hands each record to [`Evidence::submit`] and
//! gets a ticket. The writer thread takes every record waiting, appends
//! them with one write and one fsync ([`SessionWriter`], group commit
//! across concurrent calls), and reports the highest ticket now durable.
//! The wrapper holds back whatever the client may see of a decision (the
//! call's result or its refusal) until the decision's ticket is durable,
//! while the call itself may already run at the server. A checkpoint is
//! signed every `checkpoint_every` records or `checkpoint_interval`,
//! whichever comes first, and when the session ends. If a write fails the
//! thread reports it and stops; the wrapper then refuses every call.

use crate::chain::writer::SessionWriter;
use serde::Serialize;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::{Duration, Instant};

/// Record kinds the wrapper writes.
pub const KIND_DECISION: &str = "tool_call";
pub const KIND_OUTCOME: &str = "tool_result";
pub const KIND_SESSION: &str = "mcp_session";

/// The decision record (`tool_call`).
#[derive(Debug, Clone, Serialize)]
pub struct DecisionRecord {
    /// The operator's `--id` for the server.
    pub server: String,
    /// The protocol revision in use (`2025-11-25`, `2026-07-28`, ...), or
    /// `unknown` before the handshake.
    pub protocol: String,
    pub request_id: serde_json::Value,
    pub tool: String,
    /// SHA-256 (hex) of the exact bytes of `params.arguments` as received
    /// (of the empty string when the call has no arguments).
    pub arguments_sha256: String,
    /// SHA-256 (hex) of the exact message forwarded to the server (or of
    /// the message received, when it was not forwarded).
    pub message_sha256: String,
    /// The arguments with secrets masked ([`super::redact`]); `null` when
    /// they are larger than [`MAX_REDACTED_BYTES`].
    pub arguments: serde_json::Value,
    pub masked: Vec<super::redact::Masked>,
    /// `allow`, `block`, or `cancelled` (the client withdrew the call
    /// before it was decided).
    pub decision: &'static str,
    pub rule: String,
    pub reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub asked: Option<Asked>,
    /// `sha256:HEX` of the policy file.
    pub policy: String,
    /// Whether the call was sent to the server.
    pub forwarded: bool,
}

/// How an `ask` was put to a person and what came back.
#[derive(Debug, Clone, Serialize)]
pub struct Asked {
    /// `elicitation`, `input_required` or `tty`.
    pub via: &'static str,
    /// `yes`, `no`, `timeout`, `cancelled`, `unanswerable`.
    pub answer: &'static str,
}

/// The outcome record (`tool_result`) of a call that was forwarded.
#[derive(Debug, Clone, Serialize)]
pub struct OutcomeRecord {
    pub server: String,
    /// The seq of the call's `tool_call` record.
    pub decision_seq: u64,
    pub request_id: serde_json::Value,
    pub tool: String,
    /// `result`, `error` (a JSON-RPC error), `input_required`,
    /// `cancelled` (the client cancelled; any later response was
    /// dropped), `server_exited`, `withheld` (the decision could not be
    /// made durable, so the result was not delivered).
    pub outcome: &'static str,
    /// SHA-256 (hex) of the exact response line from the server.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_sha256: Option<String>,
    /// The result's `isError`.
    pub is_error: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<i64>,
    /// From forwarding the call to the response, in microseconds.
    pub duration_us: u64,
}

/// The session record (`mcp_session`).
#[derive(Debug, Clone, Serialize)]
pub struct SessionRecord {
    pub server: String,
    /// `start`, `protocol`, `tools`, `anomaly`, `end`.
    pub event: &'static str,
    #[serde(flatten)]
    pub detail: serde_json::Map<String, serde_json::Value>,
}

/// The most bytes of redacted arguments copied into a decision record.
pub const MAX_REDACTED_BYTES: usize = 64 << 10;

/// A record waiting to be written. An outcome names its decision by the
/// decision's ticket; the writer fills in the seq.
pub enum Pending {
    Decision(Box<DecisionRecord>),
    Outcome {
        decision: u64,
        record: Box<OutcomeRecord>,
    },
    Session(SessionRecord),
}

/// What the writer thread reports.
#[derive(Debug)]
pub enum Written {
    /// Every ticket up to and including `through` is durable; `seqs` maps
    /// the tickets of this batch to their seqs.
    Durable { through: u64, seqs: Vec<(u64, u64)> },
    /// A write failed; nothing after `through` is durable and nothing more
    /// will be.
    Failed { through: u64, message: String },
}

enum Job {
    Record(u64, Pending),
    Finish(Sender<Result<(), String>>),
}

/// Settings of the writer thread.
#[derive(Debug, Clone, Copy)]
pub struct Cadence {
    pub checkpoint_every: u64,
    pub checkpoint_interval: Duration,
}

/// The handle the wrapper holds.
pub struct Evidence {
    jobs: Sender<Job>,
    next_ticket: u64,
}

impl Evidence {
    /// Starts the writer thread; it reports to `report` through `wrap`
    /// (which turns a [`Written`] into the wrapper's own event type).
    pub fn start<E: Send + 'static>(
        writer: SessionWriter,
        cadence: Cadence,
        report: Sender<E>,
        wrap: fn(Written) -> E,
    ) -> Evidence {
        let (jobs, rx) = channel();
        std::thread::spawn(move || run(writer, cadence, rx, report, wrap));
        Evidence {
            jobs,
            next_ticket: 1,
        }
    }

    /// Queues a record; returns its ticket (tickets count from 1).
    pub fn submit(&mut self, record: Pending) -> u64 {
        let ticket = self.next_ticket;
        self.next_ticket += 1;
        // A send fails only when the thread has stopped after a failure,
        // which it has already reported.
        let _ = self.jobs.send(Job::Record(ticket, record));
        ticket
    }

    /// Writes what is queued, signs a last checkpoint and waits for it.
    pub fn finish(&self) -> Result<(), String> {
        let (tx, rx) = channel();
        if self.jobs.send(Job::Finish(tx)).is_err() {
            return Err("the evidence writer has stopped".into());
        }
        rx.recv()
            .unwrap_or_else(|_| Err("the evidence writer has stopped".into()))
    }
}

fn run<E>(
    mut writer: SessionWriter,
    cadence: Cadence,
    jobs: Receiver<Job>,
    report: Sender<E>,
    wrap: fn(Written) -> E,
) {
    let mut seqs: std::collections::HashMap<u64, u64> = std::collections::HashMap::new();
    let mut durable = 0u64;
    let mut last_checkpoint = Instant::now();
    let mut failed: Option<String> = None;
    loop {
        let first = if writer.uncovered() > 0 {
            let due = last_checkpoint + cadence.checkpoint_interval;
            match jobs.recv_timeout(due.saturating_duration_since(Instant::now())) {
                Ok(job) => Some(job),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => return,
            }
        } else {
            match jobs.recv() {
                Ok(job) => Some(job),
                Err(_) => return,
            }
        };
        let mut batch = Vec::new();
        let mut finish = None;
        if let Some(job) = first {
            push(job, &mut batch, &mut finish);
            while finish.is_none()
                && let Ok(job) = jobs.try_recv()
            {
                push(job, &mut batch, &mut finish);
            }
        }
        if let Some(message) = &failed {
            if let Some(done) = finish {
                let _ = done.send(Err(message.clone()));
            }
            continue;
        }
        let through = batch.last().map_or(durable, |(t, _)| *t);
        let checkpoint = finish.is_some()
            || writer.uncovered() + batch.len() as u64 >= cadence.checkpoint_every
            || last_checkpoint.elapsed() >= cadence.checkpoint_interval;
        let result = writer.append_with(checkpoint, |next_seq| {
            let mut records = Vec::with_capacity(batch.len());
            let mut assigned = Vec::with_capacity(batch.len());
            for (i, (ticket, pending)) in batch.iter().enumerate() {
                let seq = next_seq + i as u64;
                assigned.push((*ticket, seq));
                let (kind, body) = match pending {
                    Pending::Decision(d) => (KIND_DECISION, to_value(d)?),
                    Pending::Outcome { decision, record } => {
                        let mut record = (**record).clone();
                        record.decision_seq = seqs
                            .get(decision)
                            .copied()
                            .or_else(|| {
                                assigned
                                    .iter()
                                    .find(|(t, _)| t == decision)
                                    .map(|(_, s)| *s)
                            })
                            .unwrap_or(u64::MAX);
                        (KIND_OUTCOME, to_value(&record)?)
                    }
                    Pending::Session(s) => (KIND_SESSION, to_value(s)?),
                };
                records.push((kind, body));
            }
            Ok((records, assigned))
        });
        match result {
            Ok((_, checkpoint_seq, assigned)) => {
                if checkpoint_seq.is_some() || checkpoint {
                    last_checkpoint = Instant::now();
                }
                for (ticket, seq) in &assigned {
                    // Only decisions are looked up later; keep the map small.
                    if matches!(batch.iter().find(|(t, _)| t == ticket), Some((_, Pending::Decision(_)))) {
                        seqs.insert(*ticket, *seq);
                    }
                }
                if seqs.len() > 100_000 {
                    // Outcomes arrive soon after their decision; drop the oldest half.
                    let cut = durable.saturating_sub(50_000);
                    seqs.retain(|t, _| *t > cut);
                }
                durable = through;
                if !batch.is_empty() {
                    let _ = report.send(wrap(Written::Durable {
                        through,
                        seqs: assigned,
                    }));
                }
                if let Some(done) = finish {
                    let _ = done.send(Ok(()));
                }
            }
            Err(e) => {
                let message = e.to_string();
                let _ = report.send(wrap(Written::Failed {
                    through: durable,
                    message: message.clone(),
                }));
                if let Some(done) = finish {
                    let _ = done.send(Err(message.clone()));
                }
                failed = Some(message);
            }
        }
    }
}

fn push(job: Job, batch: &mut Vec<(u64, Pending)>, finish: &mut Option<Sender<Result<(), String>>>) {
    match job {
        Job::Record(ticket, pending) => batch.push((ticket, pending)),
        Job::Finish(done) => *finish = Some(done),
    }
}

fn to_value<T: Serialize>(value: &T) -> crate::Result<serde_json::Value> {
    serde_json::to_value(value).map_err(|source| crate::Error::Serialize {
        what: "a wrapper record",
        source,
    })
}
