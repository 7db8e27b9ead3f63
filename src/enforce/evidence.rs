//! The wrapper's evidence: the records it writes (`tool_call` decisions,
//! `tool_result` outcomes, `mcp_session` events; FORMAT.md §18) and the
//! thread that writes them.
//!
//! Durability: the wrapper queues the records of what it handled
//! ([`Evidence::queue`], a ticket each) and, before it forwards anything
//! that came in meanwhile, writes them with one write(2) under the log's
//! lock ([`Evidence::flush`]), so a decision is in the file (and survives
//! the wrapper being killed) before its call reaches the server. The sync
//! thread fsyncs once for every ticket written since its last sync (group
//! commit across concurrent calls) and reports the highest ticket durable.
//! The wrapper holds back whatever the client may see of a decision (the
//! call's result or its refusal) until the decision's ticket is durable,
//! while the call itself already runs at the server. If a write or a sync
//! fails, the wrapper refuses every call from then on.
//!
//! Cadence: a checkpoint is signed when `checkpoint_every` of this
//! session's records are uncovered, when the oldest of them has waited
//! `checkpoint_interval`, and when the session ends. The clock starts at
//! this session's own first uncovered record, so other writers of the same
//! log (several wrappers share one log) neither delay it nor reset it: only
//! a checkpoint record that is the log's last record when this session
//! next takes the lock counts as covering its records
//! ([`SessionWriter`]).

use super::EvidenceFailure;
use crate::chain::writer::SessionWriter;
use serde::Serialize;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
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
    pub masked: Vec<crate::redact::Masked>,
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

/// What the sync thread reports.
#[derive(Debug)]
pub enum Written {
    /// Every ticket up to and including `through` is durable.
    Durable { through: u64 },
    /// A sync failed; nothing after `through` is durable and nothing more
    /// will be.
    Failed {
        through: u64,
        failure: EvidenceFailure,
    },
}

enum Job {
    Sync(u64, std::fs::File),
    Finish(Sender<Result<(), EvidenceFailure>>),
}

/// Settings of the writer.
#[derive(Debug, Clone, Copy)]
pub struct Cadence {
    pub checkpoint_every: u64,
    pub checkpoint_interval: Duration,
}

/// What the sync thread and the wrapper share: the highest durable
/// ticket, and the ticket the wrapper waits for (0: none). The sync thread
/// reports only when the wrapper waits, so a call whose decision is synced
/// before its result arrives costs the wrapper no extra wake-up.
#[derive(Default)]
pub struct Progress {
    pub durable: AtomicU64,
    pub wanted: AtomicU64,
}

/// The wrapper's evidence writer.
pub struct Evidence {
    pub progress: Arc<Progress>,
    writer: SessionWriter,
    cadence: Cadence,
    jobs: Sender<Job>,
    next_ticket: u64,
    queued: Vec<(u64, &'static str, serde_json::Value)>,
    /// When the oldest record of this session that no checkpoint is known
    /// to cover was written.
    uncovered_since: Option<Instant>,
    failed: Option<EvidenceFailure>,
}

impl Evidence {
    /// Starts the sync thread; it reports to `report` through `wrap`
    /// (which turns a [`Written`] into the wrapper's own event type).
    pub fn start<E: Send + 'static>(
        writer: SessionWriter,
        cadence: Cadence,
        report: Sender<E>,
        wrap: fn(Written) -> E,
    ) -> Evidence {
        let (jobs, rx) = channel();
        let progress = Arc::new(Progress::default());
        let shared = Arc::clone(&progress);
        std::thread::spawn(move || sync_loop(rx, &shared, report, wrap));
        Evidence {
            progress,
            writer,
            cadence,
            jobs,
            next_ticket: 1,
            queued: Vec::new(),
            uncovered_since: None,
            failed: None,
        }
    }

    /// Why the log cannot be written, once it cannot.
    pub fn failure(&self) -> Option<&EvidenceFailure> {
        self.failed.as_ref()
    }

    /// Queues one record; returns its ticket. Nothing is written before
    /// [`Evidence::flush`].
    pub fn queue<T: Serialize>(
        &mut self,
        kind: &'static str,
        body: &T,
    ) -> Result<u64, EvidenceFailure> {
        if let Some(f) = &self.failed {
            return Err(f.clone());
        }
        let value = to_value(body).map_err(EvidenceFailure::write)?;
        let ticket = self.next_ticket;
        self.next_ticket += 1;
        self.queued.push((ticket, kind, value));
        Ok(ticket)
    }

    /// Writes every queued record with one write (not yet synced: the sync
    /// thread does that) and a checkpoint when one is due; returns each
    /// record's (ticket, seq).
    pub fn flush(&mut self) -> Result<Vec<(u64, u64)>, EvidenceFailure> {
        if self.queued.is_empty() {
            return Ok(Vec::new());
        }
        if let Some(f) = &self.failed {
            self.queued.clear();
            return Err(f.clone());
        }
        let batch = std::mem::take(&mut self.queued);
        let due = self.writer.uncovered() + batch.len() as u64 >= self.cadence.checkpoint_every
            || self
                .uncovered_since
                .is_some_and(|t| t.elapsed() >= self.cadence.checkpoint_interval);
        let tickets: Vec<u64> = batch.iter().map(|(t, _, _)| *t).collect();
        let records: Vec<(&'static str, serde_json::Value)> =
            batch.into_iter().map(|(_, k, v)| (k, v)).collect();
        match self.writer.append_with(due, |_| Ok((records, ()))) {
            Ok((appended, _, ())) => {
                self.note_coverage();
                let through = tickets.last().copied().unwrap_or(0);
                if let Some(file) = self.writer.sync_handle() {
                    let _ = self.jobs.send(Job::Sync(through, file));
                }
                Ok(tickets
                    .into_iter()
                    .zip(appended.iter().map(|a| a.seq))
                    .collect())
            }
            Err(e) => {
                let failure = EvidenceFailure::write(e);
                self.failed = Some(failure.clone());
                Err(failure)
            }
        }
    }

    /// Starts or stops the cadence clock after a write.
    fn note_coverage(&mut self) {
        if self.writer.uncovered() == 0 {
            self.uncovered_since = None;
        } else if self.uncovered_since.is_none() {
            self.uncovered_since = Some(Instant::now());
        }
    }

    /// When the next checkpoint is due (records are waiting for one).
    pub fn checkpoint_due(&self) -> Option<Instant> {
        if self.failed.is_some() || self.writer.uncovered() == 0 {
            return None;
        }
        self.uncovered_since
            .map(|t| t + self.cadence.checkpoint_interval)
    }

    /// Signs a checkpoint now if records are waiting for one.
    pub fn checkpoint(&mut self) -> Result<(), EvidenceFailure> {
        if self.failed.is_some() || self.writer.uncovered() == 0 {
            return Ok(());
        }
        match self.writer.append_with(true, |_| Ok((Vec::new(), ()))) {
            Ok(_) => {
                self.note_coverage();
                let ticket = self.next_ticket;
                self.next_ticket += 1;
                if let Some(file) = self.writer.sync_handle() {
                    let _ = self.jobs.send(Job::Sync(ticket, file));
                }
                Ok(())
            }
            Err(e) => {
                let failure = EvidenceFailure::write(e);
                self.failed = Some(failure.clone());
                Err(failure)
            }
        }
    }

    /// Writes what is queued, signs a last checkpoint, syncs, and waits
    /// for the sync.
    pub fn finish(&mut self) -> Result<(), EvidenceFailure> {
        self.flush()?;
        self.checkpoint()?;
        let (tx, rx) = channel();
        if self.jobs.send(Job::Finish(tx)).is_err() {
            return Err(EvidenceFailure::SyncStopped);
        }
        rx.recv().unwrap_or(Err(EvidenceFailure::SyncStopped))
    }
}

fn sync_loop<E>(
    jobs: Receiver<Job>,
    progress: &Progress,
    report: Sender<E>,
    wrap: fn(Written) -> E,
) {
    let mut durable = 0u64;
    let mut failed: Option<EvidenceFailure> = None;
    while let Ok(first) = jobs.recv() {
        let mut last: Option<(u64, std::fs::File)> = None;
        let mut finish = None;
        let mut take = |job: Job, last: &mut Option<(u64, std::fs::File)>| match job {
            Job::Sync(t, f) => *last = Some((t, f)),
            Job::Finish(done) => finish = Some(done),
        };
        take(first, &mut last);
        while let Ok(job) = jobs.try_recv() {
            take(job, &mut last);
        }
        if let Some(failure) = &failed {
            if let Some(done) = finish {
                let _ = done.send(Err(failure.clone()));
            }
            continue;
        }
        if let Some((through, file)) = last {
            // One fdatasync covers every write before it to this file
            // (a rotated log's writes were synced by the batch before).
            match file.sync_data() {
                Ok(()) => {
                    durable = through;
                    progress.durable.store(through, Ordering::SeqCst);
                    let wanted = progress.wanted.load(Ordering::SeqCst);
                    if wanted != 0 && wanted <= through {
                        let _ = report.send(wrap(Written::Durable { through }));
                    }
                }
                Err(e) => {
                    let failure = EvidenceFailure::Sync(Arc::new(e));
                    let _ = report.send(wrap(Written::Failed {
                        through: durable,
                        failure: failure.clone(),
                    }));
                    failed = Some(failure);
                }
            }
        }
        if let Some(done) = finish {
            let _ = done.send(failed.clone().map_or(Ok(()), Err));
        }
    }
}

fn to_value<T: Serialize>(value: &T) -> crate::Result<serde_json::Value> {
    serde_json::to_value(value).map_err(|source| crate::Error::Serialize {
        what: "a wrapper record",
        source,
    })
}
