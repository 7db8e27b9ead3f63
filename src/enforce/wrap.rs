//! `vouch wrap`: the MCP stdio wrapper.
//!
//! One thread (the loop in [`run`]) owns every piece of state; the pipes
//! are read and written by their own threads, the evidence by its writer
//! thread ([`super::evidence`]), and terminal questions by short-lived
//! threads, all reporting to the loop through one channel. So waiting for
//! a person, for the server or for the disk never stops other traffic.
//!
//! What the loop guarantees:
//! - **Bytes.** A message is forwarded exactly as received, except those
//!   the wrapper answers itself (`tools/list` from its vetted snapshot,
//!   blocked calls, protocol errors) and a 2026-07-28 retry carrying the
//!   wrapper's own `requestState`, from which it strips its own fields.
//!   Every message forwarded was parsed first ([`super::message`]): no
//!   duplicate member names, UTF-8, within the size limit; the policy
//!   decides on the parsed value of exactly the bytes forwarded.
//! - **Ids.** Pending requests are kept per direction by decoded id. A
//!   response is delivered only to a request that was sent that way and
//!   is still unanswered, once; anything else is dropped and recorded. The
//!   wrapper's own ids carry a random per-session prefix and any id from
//!   either side with that prefix is refused, so they cannot collide.
//! - **Order.** Messages to the server go through one FIFO, so a
//!   `notifications/cancelled` follows its call; a cancel for a call that
//!   was blocked, answered locally or is still held is swallowed.
//! - **Evidence.** A decision is queued for the log before the call is
//!   forwarded; the call's result (or its refusal) reaches the client only
//!   after the decision is durable. If the log cannot be written, every
//!   later call is refused. A call is sent to the server with its decision
//!   record however the events of one turn fall (a cancel in the same read
//!   writes the decision and sends the call first), so what the log says
//!   was forwarded was written to the server's stdin; a write that fails
//!   (the server is gone) is recorded as `undelivered`.
//! - **Shutdown.** The session ends when the client closes its side, when
//!   the server exits, or on SIGTERM, SIGINT or SIGHUP. Either way the
//!   wrapper closes the server's stdin, waits, then sends SIGTERM and
//!   SIGKILL to the server's process group (the MCP stdio shutdown), fails
//!   whatever is still in flight, and writes the `mcp_session` end record
//!   and a covering checkpoint before it exits. After a signal each wait is
//!   at most [`SIGNAL_GRACE`] (hosts send SIGKILL about 2 s after SIGTERM);
//!   a second signal kills the server at once. Signals arrive as events of
//!   the loop, never inside a write, so no line is torn.

use super::evidence::{
    Asked, Cadence, DecisionRecord, Evidence, KIND_DECISION, KIND_OUTCOME, KIND_SESSION,
    OutcomeRecord, SessionRecord, Written,
};
use super::io::{Diag, Line, ServerStdin, Sink};
use super::message::{self, Id, Invalid, Kind, code};
use super::policy::{Action, Policy, RateState};
use crate::chain::writer::SessionWriter;
use crate::note::SignerKey;
use crate::vet::gate::{self, VetOptions};
use crate::vet::pins::PinState;
use crate::vet::record::{
    KIND_PIN, KIND_VERDICT, Launch, PIN_PAYLOAD_TYPE, Reason, Status, TextVerdict,
    VERDICT_PAYLOAD_TYPE, VerdictBody, digest_of, sign_body,
};
use crate::vet::scan::Ruleset;
use serde_json::Value;
use serde_json::value::RawValue;
use std::collections::{HashMap, HashSet, VecDeque};
use std::ffi::OsString;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::{Duration, Instant};

/// The protocol revision that removed the `initialize` handshake.
pub const MODERN: &str = "2026-07-28";
/// `_meta` keys of the 2026-07-28 revision.
const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_CAPS: &str = "io.modelcontextprotocol/clientCapabilities";
/// The `inputRequests` key of the wrapper's own approval question.
const APPROVE_KEY: &str = "vouch.approve";
/// How many anomalies a session records one by one (the rest are counted).
const MAX_ANOMALY_RECORDS: u64 = 100;
/// How many locally answered ids are remembered (to swallow their cancels).
const ANSWERED_MEMORY: usize = 4096;
/// After a signal, the most the wrapper waits for the server at each step
/// of the shutdown (stdin closed, then SIGTERM), so the end record is
/// written before a host's SIGKILL.
pub const SIGNAL_GRACE: Duration = Duration::from_millis(500);
/// How soon the loop tries again to write to a peer that is slow to read.
const BACKLOG_RETRY: Duration = Duration::from_millis(10);
/// Bounds on the wrapper's own listing of the server's tools.
const MAX_LIST_PAGES: usize = 100;
const MAX_TOOLS: usize = 10_000;

/// How `vouch wrap` runs.
pub struct WrapOptions {
    /// The operator's name for the server (`--id`), recorded with every
    /// decision; never the server's self-reported name.
    pub server_id: String,
    pub program: OsString,
    pub args: Vec<OsString>,
    pub policy: Policy,
    /// The largest message accepted from either side.
    pub max_message_bytes: usize,
    pub cadence: Cadence,
    /// List the server's tools again before every call (off by default).
    pub relist_before_call: bool,
    /// How long an `ask` waits for an answer before it counts as no.
    pub ask_timeout: Duration,
    /// Whether `ask` may fall back to the controlling terminal.
    pub tty: bool,
    /// How long the wrapper waits for its own `tools/list`.
    pub list_timeout: Duration,
    /// How long the server may take to exit after its stdin is closed, and
    /// again after SIGTERM.
    pub shutdown_grace: Duration,
    /// No first-use pinning: every tool waits for `vouch pins approve`
    /// (also `[vet] require_approval` in the policy).
    pub require_approval: bool,
}

enum Event {
    Client(Line),
    Child(Line),
    Evidence(Written),
    Tty {
        id: Id,
        yes: bool,
    },
    /// SIGTERM, SIGINT or SIGHUP.
    Signal(i32),
}

fn evidence_event(w: Written) -> Event {
    Event::Evidence(w)
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Era {
    Unknown,
    Legacy(String),
    Modern,
}

/// A tool definition as the server listed it.
struct Tool {
    raw: Box<RawValue>,
    /// SHA-256 of the definition's RFC 8785 form.
    digest: [u8; 32],
}

struct Snapshot {
    /// Which fetch made it.
    generation: u64,
    /// The tools the vetting allowed, in the server's order.
    tools: Vec<(String, Tool)>,
    /// Every tool listed (name, digest), for the next listing's diff.
    listed: Vec<(String, [u8; 32])>,
    /// Tools listed but withheld, and why.
    withheld: HashMap<String, Reason>,
    /// The evidence ticket the client's answer waits for (the verdict, or
    /// the first-use pin after it).
    ticket: u64,
    /// Members of the first page's result other than `tools`/`nextCursor`.
    extra: Vec<(String, Box<RawValue>)>,
}

impl Snapshot {
    fn find(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|(n, _)| n == name).map(|(_, t)| t)
    }
}

struct Fetch {
    generation: u64,
    id: Id,
    pages: usize,
    cursors: HashSet<String>,
    tools: Vec<(String, Tool)>,
    extra: Option<Vec<(String, Box<RawValue>)>>,
    deadline: Instant,
}

/// A `tools/call` being decided or run.
struct Call {
    tool: String,
    /// The exact line received (and forwarded, unless rebuilt).
    line: Vec<u8>,
    args: Value,
    args_sha256: String,
    meta: Option<Value>,
    protocol: String,
    /// The snapshot generation the call must be checked against.
    needs_generation: u64,
    stage: Stage,
    /// The rule that asked, while a person is asked.
    ask_rule: String,
    /// The decision's ticket and seq, once decided.
    ticket: u64,
    decision_seq: u64,
    forwarded_at: Option<Instant>,
    /// The offset in the server's stdin just after the call's line, once
    /// written.
    sent_end: u64,
    /// The order it came in: calls that waited for a listing are decided
    /// (and forwarded) in the order the client sent them.
    arrival: u64,
    cancelled: bool,
}

/// Something for the server, in order.
enum ToServer {
    Line(Vec<u8>),
    /// A forwarded call: its line, once its decision is written. The line
    /// travels here (not looked up later), so a cancel handled in the same
    /// turn cannot unsend a call whose decision says it was sent.
    Call(Id, Vec<u8>),
}

enum Stage {
    /// Waiting for a tool list.
    Held,
    /// Waiting for a person (legacy elicitation or the terminal).
    Asking {
        via: &'static str,
        deadline: Instant,
    },
    Forwarded,
}

/// A client request the wrapper has not answered yet.
enum ClientReq {
    /// Forwarded, not a call.
    Plain {
        method: String,
    },
    /// `tools/list`, answered from the snapshot when there is one.
    List {
        needs_generation: u64,
        cursor: bool,
        /// The order it came in, among requests that wait for a listing.
        arrival: u64,
    },
    Call(Box<Call>),
}

/// Something for the client, held until its decision is durable.
struct Out {
    ticket: u64,
    bytes: Vec<u8>,
    /// Sent instead when the decision could not be made durable.
    instead: Option<Vec<u8>>,
}

struct State {
    opts: WrapOptions,
    /// The evidence log (for messages).
    log: std::path::PathBuf,
    policy_digest: String,
    rates: RateState,
    evidence: Evidence,
    /// Highest durable ticket; `None` once a write failed.
    durable: Option<u64>,
    evidence_failure: Option<super::EvidenceFailure>,
    outbox: VecDeque<Out>,
    to_client: Sink,
    to_child: ServerStdin,
    /// Diagnostics for stderr (never written by the loop itself).
    diag: Diag,
    to_server: Vec<ToServer>,
    events: Sender<Event>,
    era: Era,
    client_elicitation: bool,
    server_has_tools: bool,
    initialize_id: Option<Id>,
    handshake_done: bool,
    /// The `_meta` of the last modern request (for the wrapper's own).
    modern_meta: Option<Value>,
    id_prefix: String,
    next_own_id: u64,
    hmac: ring::hmac::Key,
    used_nonces: HashSet<String>,
    from_client: HashMap<Id, ClientReq>,
    from_server: HashSet<Id>,
    /// The wrapper's own elicitation requests to the client → the call.
    own_to_client: HashMap<Id, Id>,
    answered: VecDeque<Id>,
    answered_set: HashSet<Id>,
    /// Forwarded calls the client cancelled that the server has not
    /// answered: their ids stay taken, so a late answer cannot reach a new
    /// request that reuses the id. With the offset in the server's stdin
    /// just after the call's line.
    cancelled_open: HashMap<Id, u64>,
    snapshot: Option<Snapshot>,
    fetch: Option<Fetch>,
    fetch_again: bool,
    /// The next fetch's generation.
    next_generation: u64,
    /// The generation a call must be checked against (raised by
    /// `list_changed`).
    required_generation: u64,
    anomalies: u64,
    calls: u64,
    /// Requests that may wait for a listing, counted as they come.
    arrivals: u64,
    client_closed: bool,
    /// The first stop signal, once one came.
    stop_signal: Option<i32>,
    /// How many stop signals came.
    signals: u32,
    /// The number of the last stop signal, set by the signal handler.
    stop_which: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    /// The shutdown started from `stop_which` before the signal's event
    /// came (that event is then not a second signal).
    stop_early: bool,
    /// The server's stdin is closed: nothing more reaches it.
    child_closed: bool,
    vet: Vet,
}

/// The vetting side of a session (`crate::vet`).
struct Vet {
    opts: VetOptions,
    ruleset: &'static Ruleset,
    pins: PinState,
    launch: Launch,
    /// Signs verdict and pin records (the log's key).
    key: SignerKey,
    /// The server's instructions and their verdict, once seen.
    instructions: Option<(String, TextVerdict)>,
    /// A first-use session: the server had no pin record at all when the
    /// wrapper started (`crate::vet::gate`, step 6).
    first_use: bool,
    /// What the last verdict recorded judged (listing, pin, instructions),
    /// and its ticket.
    last: Option<VerdictKey>,
    last_ticket: u64,
}

type VerdictKey = (String, String, Option<(String, Reason)>);

/// Runs the wrapper until the client closes its side and the server has
/// exited (or the server exits). Returns the exit code to use: the
/// server's.
pub fn run(
    opts: WrapOptions,
    log: &std::path::Path,
    key: SignerKey,
    signals: StopSignals,
) -> crate::Result<i32> {
    // Compiling the ruleset takes about 0.2 s: do it while the server
    // starts, not when its first listing arrives.
    let _ = std::thread::Builder::new()
        .name("wrap-ruleset".into())
        .spawn(|| {
            Ruleset::builtin();
        });
    // Signals are events from the start: one that comes while the session
    // is set up is handled by the loop's first turn (an orderly end).
    let (events_tx, events) = channel::<Event>();
    let (stop, stop_which) = signals
        .forward(events_tx.clone())
        .map_err(|e| spawn_error(&opts, format!("cannot watch signals: {e}")))?;
    // Pins first: a log that does not verify starts nothing.
    let keys =
        crate::chain::TrustedKeys::new([key.verifier()]).map_err(crate::Error::ConflictingKeys)?;
    let pins = crate::vet::pins::load(log, &keys, &opts.server_id)?;
    let mut vet_opts = opts.policy.vet();
    vet_opts.require_approval |= opts.require_approval;
    let vet = Vet {
        first_use: pins.first_contact(),
        opts: vet_opts,
        ruleset: Ruleset::builtin(),
        pins,
        launch: Launch::of(&opts.program, &opts.args),
        key: key.clone(),
        instructions: None,
        last: None,
        last_ticket: 0,
    };
    let writer = SessionWriter::open(log, key)?;
    let (mut child, child_in, unread) = spawn(&opts)?;
    let limit = opts.max_message_bytes;
    let server_gone = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let to_child = ServerStdin::new(child_in, unread, stop.clone(), server_gone.clone());
    let stdout = {
        use std::os::fd::AsFd;
        std::io::stdout().as_fd().try_clone_to_owned()
    };
    let to_client = match stdout {
        Ok(fd) => Sink::new(fd, stop.clone(), std::sync::Arc::default()),
        Err(e) => {
            signal_group(&child, "KILL");
            let _ = child.wait();
            return Err(spawn_error(&opts, format!("cannot use stdout: {e}")));
        }
    };

    let (Some(child_out), Some(child_err)) = (child.stdout.take(), child.stderr.take()) else {
        let _ = child.kill();
        let _ = child.wait();
        return Err(spawn_error(&opts, "the child's pipes are missing".into()));
    };
    let threads = (|| -> std::io::Result<()> {
        let tx = events_tx.clone();
        std::thread::Builder::new()
            .name("wrap-from-server".into())
            .spawn(move || {
                super::io::read_lines(child_out, limit, tx, Event::Child);
                server_gone.store(true, std::sync::atomic::Ordering::SeqCst);
            })?;
        let tx = events_tx.clone();
        std::thread::Builder::new()
            .name("wrap-from-client".into())
            .spawn(move || super::io::read_lines(std::io::stdin(), limit, tx, Event::Client))?;
        std::thread::Builder::new()
            .name("wrap-server-stderr".into())
            .spawn(move || super::io::pass_stderr(child_err))?;
        Ok(())
    })();
    if let Err(e) = threads {
        let _ = child.kill();
        let _ = child.wait();
        return Err(spawn_error(&opts, format!("cannot start a thread: {e}")));
    }

    let evidence = Evidence::start(writer, opts.cadence, events_tx.clone(), evidence_event);
    let rng = ring::rand::SystemRandom::new();
    let hmac = ring::hmac::Key::generate(ring::hmac::HMAC_SHA256, &rng)
        .map_err(|_| spawn_error(&opts, "no randomness for the session key".into()))?;
    let mut nonce = [0u8; 8];
    ring::rand::SecureRandom::fill(&rng, &mut nonce)
        .map_err(|_| spawn_error(&opts, "no randomness for the session id".into()))?;
    let policy_digest = opts.policy.digest().to_owned();
    let mut st = State {
        log: log.to_path_buf(),
        policy_digest,
        rates: RateState::default(),
        evidence,
        durable: Some(0),
        evidence_failure: None,
        outbox: VecDeque::new(),
        to_client,
        diag: Diag::start(),
        to_child,
        to_server: Vec::new(),
        events: events_tx,
        era: Era::Unknown,
        client_elicitation: false,
        server_has_tools: false,
        initialize_id: None,
        handshake_done: false,
        modern_meta: None,
        id_prefix: format!("vouch-wrap-{}-", crate::hex::encode(&nonce)),
        next_own_id: 1,
        hmac,
        used_nonces: HashSet::new(),
        from_client: HashMap::new(),
        from_server: HashSet::new(),
        own_to_client: HashMap::new(),
        answered: VecDeque::new(),
        answered_set: HashSet::new(),
        cancelled_open: HashMap::new(),
        snapshot: None,
        fetch: None,
        fetch_again: false,
        next_generation: 1,
        required_generation: 1,
        anomalies: 0,
        calls: 0,
        arrivals: 0,
        client_closed: false,
        stop_signal: None,
        signals: 0,
        stop_which,
        stop_early: false,
        child_closed: false,
        vet,
        opts,
    };
    st.session("start", {
        let mut d = serde_json::Map::new();
        let mut command = vec![Value::String(
            st.opts.program.to_string_lossy().into_owned(),
        )];
        command.extend(
            st.opts
                .args
                .iter()
                .map(|a| Value::String(a.to_string_lossy().into_owned())),
        );
        d.insert("command".into(), Value::Array(command));
        d.insert("policy".into(), Value::String(st.policy_digest.clone()));
        d.insert(
            "vouch".into(),
            Value::String(env!("CARGO_PKG_VERSION").into()),
        );
        d.insert("pid".into(), Value::from(std::process::id()));
        d
    });

    let status = st.main_loop(&events, &mut child);
    st.finish(status)
}

fn spawn_error(opts: &WrapOptions, message: String) -> crate::Error {
    super::EnforceError::Spawn {
        program: opts.program.to_string_lossy().into_owned(),
        message,
    }
    .into()
}

/// Starts the server with its stdin on a pipe of the wrapper's own
/// ([`ServerStdin`]): the write end, and a second handle on the read end.
fn spawn(opts: &WrapOptions) -> crate::Result<(Child, std::io::PipeWriter, std::io::PipeReader)> {
    let pipe = std::io::pipe().and_then(|(reader, to)| {
        let unread = reader.try_clone()?;
        Ok((reader, to, unread))
    });
    let (reader, to, unread) =
        pipe.map_err(|e| spawn_error(opts, format!("cannot make a pipe: {e}")))?;
    let mut cmd = Command::new(&opts.program);
    cmd.args(&opts.args)
        .stdin(Stdio::from(reader))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    let child = cmd.spawn().map_err(|e| spawn_error(opts, e.to_string()))?;
    Ok((child, to, unread))
}

/// The signals that end a session gracefully.
const STOP_SIGNALS: [i32; 3] = [
    signal_hook::consts::SIGTERM,
    signal_hook::consts::SIGINT,
    signal_hook::consts::SIGHUP,
];

/// SIGTERM, SIGINT and SIGHUP, caught from the moment [`StopSignals::watch`]
/// returns (from then on they no longer end the process by themselves):
/// the binary calls it before it loads anything, and [`run`] turns them
/// into events of the loop (one that came before is delivered at once).
pub struct StopSignals {
    signals: signal_hook::iterator::Signals,
    /// Set by the handler itself: a write waiting for a peer gives up.
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// The last stop signal's number, set by the handler itself: the loop
    /// starts the shutdown before it handles anything read after the
    /// signal, even before the signal's event reaches it.
    which: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl StopSignals {
    pub fn watch() -> crate::Result<StopSignals> {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let which = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let caught = (|| {
            for signal in STOP_SIGNALS {
                signal_hook::flag::register(signal, stop.clone())?;
                let number = usize::try_from(signal).unwrap_or(0);
                signal_hook::flag::register_usize(signal, which.clone(), number)?;
            }
            signal_hook::iterator::Signals::new(STOP_SIGNALS)
        })();
        let signals = caught.map_err(super::EnforceError::Signals)?;
        Ok(StopSignals {
            signals,
            stop,
            which,
        })
    }

    #[allow(clippy::type_complexity)]
    fn forward(
        self,
        tx: Sender<Event>,
    ) -> std::io::Result<(
        std::sync::Arc<std::sync::atomic::AtomicBool>,
        std::sync::Arc<std::sync::atomic::AtomicUsize>,
    )> {
        let mut signals = self.signals;
        std::thread::Builder::new()
            .name("wrap-signals".into())
            .spawn(move || {
                for signal in signals.forever() {
                    if tx.send(Event::Signal(signal)).is_err() {
                        return;
                    }
                }
            })?;
        Ok((self.stop, self.which))
    }
}

fn signal_name(signal: i32) -> &'static str {
    match signal {
        signal_hook::consts::SIGTERM => "SIGTERM",
        signal_hook::consts::SIGINT => "SIGINT",
        signal_hook::consts::SIGHUP => "SIGHUP",
        _ => "signal",
    }
}

fn sha256(bytes: &[u8]) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(bytes).into()
}

fn sha256_hex(bytes: &[u8]) -> String {
    crate::hex::encode(&sha256(bytes))
}

/// Sends SIGTERM or SIGKILL to the child's process group with kill(1)
/// (the crate forbids `unsafe`, so no libc::kill).
fn signal_group(child: &Child, signal: &str) {
    let _ = Command::new("kill")
        .arg(format!("-{signal}"))
        .arg("--")
        .arg(format!("-{}", child.id()))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

fn wait_until(child: &mut Child, deadline: Instant) -> Option<ExitStatus> {
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(5));
            }
            _ => return None,
        }
    }
}

impl State {
    fn main_loop(&mut self, events: &Receiver<Event>, child: &mut Child) -> Option<ExitStatus> {
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
    fn handle(&mut self, event: Event, shutdown_at: &mut Option<(Instant, u8)>) -> bool {
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
    fn step_grace(&self) -> Duration {
        match self.signals {
            0 => self.opts.shutdown_grace,
            1 => self.opts.shutdown_grace.min(SIGNAL_GRACE),
            _ => Duration::ZERO,
        }
    }

    /// Closes the server's stdin after sending what waited for the log.
    fn close_child(&mut self) {
        self.flush_evidence();
        self.to_child.sink.close();
        self.child_closed = true;
    }

    /// A stop signal: the first starts the shutdown (or shortens the one
    /// under way), a second kills the server at once.
    fn stop(&mut self, signal: i32, shutdown_at: &mut Option<(Instant, u8)>) {
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

    fn after_loop(&mut self, events: &Receiver<Event>, child: &mut Child) -> Option<ExitStatus> {
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

    fn finish(mut self, status: Option<ExitStatus>) -> crate::Result<i32> {
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
            Err(source) => Err(super::EnforceError::Evidence {
                path: self.log.clone(),
                source,
            }
            .into()),
        }
    }

    fn next_deadline(&self, shutdown: Option<Instant>) -> Option<Instant> {
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

    fn timeouts(&mut self) {
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

    fn session(&mut self, event: &'static str, detail: serde_json::Map<String, Value>) {
        let record = SessionRecord {
            server: self.opts.server_id.clone(),
            event,
            detail,
        };
        if let Err(e) = self.evidence.queue(KIND_SESSION, &record) {
            self.evidence_failed(e);
        }
    }

    fn evidence_failed(&mut self, failure: super::EvidenceFailure) {
        self.durable = None;
        if self.evidence_failure.is_none() {
            self.diag.say(format!("vouch wrap: the evidence log cannot be written ({failure}); refusing every call from now on"));
            self.evidence_failure = Some(failure);
        }
    }

    fn anomaly(&mut self, from: &'static str, what: &str, detail: Value) {
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

    fn written(&mut self, w: Written) {
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

    fn flush_outbox(&mut self) {
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
    fn send_client(&mut self, bytes: Vec<u8>) {
        self.send_client_after(0, bytes, None);
    }

    fn send_client_after(&mut self, ticket: u64, bytes: Vec<u8>, instead: Option<Vec<u8>>) {
        self.outbox.push_back(Out {
            ticket,
            bytes,
            instead,
        });
        self.flush_outbox();
    }

    fn remember_answered(&mut self, id: Id) {
        if self.answered_set.insert(id.clone()) {
            self.answered.push_back(id);
            if self.answered.len() > ANSWERED_MEMORY
                && let Some(old) = self.answered.pop_front()
            {
                self.answered_set.remove(&old);
            }
        }
    }

    fn own_id(&mut self) -> Id {
        let id = Id::Str(format!("{}{}", self.id_prefix, self.next_own_id));
        self.next_own_id += 1;
        id
    }

    fn is_reserved(&self, id: &Id) -> bool {
        matches!(id, Id::Str(s) if s.starts_with(&self.id_prefix))
    }

    fn protocol(&self, meta: Option<&Value>) -> String {
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

    fn is_modern(&self) -> bool {
        self.era == Era::Modern
    }

    // ---- from the client ------------------------------------------------

    fn client_line(&mut self, bytes: &[u8]) {
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

    fn invalid_from_client(&mut self, invalid: &Invalid) {
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

    fn forward_request(&mut self, id: Id, method: &str, bytes: &[u8]) {
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

    fn client_cancel(&mut self, bytes: &[u8], params: Option<&RawValue>) {
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

    fn client_list(&mut self, id: Id, params: Option<&RawValue>) {
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
    fn start_fetch(&mut self) {
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

    fn can_list(&self) -> bool {
        if self.child_closed {
            return false;
        }
        match self.era {
            Era::Modern => self.modern_meta.is_some(),
            Era::Legacy(_) => self.handshake_done,
            Era::Unknown => self.modern_meta.is_some(),
        }
    }

    fn send_list_page(&mut self, id: &Id, cursor: Option<&str>) {
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

    fn list_page(&mut self, result: Option<&RawValue>, error: Option<&RawValue>) {
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

    fn fetch_done(&mut self, fetch: Fetch) {
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
    fn vet_listing(&mut self, listing: &[(String, Value)]) -> (u64, VerdictBody) {
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
            self.vet.ruleset,
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
    fn rejudge_instructions(&mut self) {
        if let Some((text, _)) = self.vet.instructions.take() {
            let v = gate::judge_instructions(
                self.vet.ruleset,
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
    fn vet_instructions(&mut self, bytes: &[u8], result: &Value) -> Vec<u8> {
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
            self.vet.ruleset,
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

    fn fetch_failed(&mut self, why: &str) {
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
    fn progress(&mut self) {
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

    fn answer_list(&mut self, id: &Id, cursor: bool) {
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

    fn call(&mut self, id: Id, bytes: &[u8], params: Option<&RawValue>, meta: Option<Value>) {
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
    fn policy_decision(
        &mut self,
        call: &Call,
    ) -> Result<super::policy::Decision, (String, String)> {
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
    fn decide(&mut self, id: Id, call: Call) {
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
    fn decide_record(
        &mut self,
        id: &Id,
        call: &Call,
        decision: &'static str,
        rule: &str,
        reason: &str,
        asked: Option<Asked>,
        forwarded: bool,
    ) -> Result<u64, super::EvidenceFailure> {
        let redacted = super::redact::redact(&call.args);
        let size = serde_json::to_vec(&redacted.value).map_or(usize::MAX, |v| v.len());
        let (arguments, masked) = if size <= super::evidence::MAX_REDACTED_BYTES {
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

    fn refuse(&mut self, id: &Id, call: Call, rule: &str, reason: &str, asked: Option<Asked>) {
        let text = format!("vouch blocked this call to {}: {rule}: {reason}", call.tool);
        let bytes = self.tool_error(id, &text);
        self.refuse_with(id, call, rule, reason, asked, bytes);
    }

    /// Records a `block` decision and answers `answer` once it is durable.
    fn refuse_with(
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
    fn tool_error(&self, id: &Id, text: &str) -> Vec<u8> {
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

    fn forward_call(
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
    fn not_sent(&mut self, id: &Id, call: &Call, asked: Option<Asked>) {
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
    fn child_out(&mut self, bytes: Vec<u8>) {
        self.to_server.push(ToServer::Line(bytes));
    }

    /// Writes the queued records, then sends what waited for them to the
    /// server, in order.
    fn flush_evidence(&mut self) {
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
    fn undelivered(&mut self, id: &Id) {
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

    fn outcome(
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

    fn ask(&mut self, id: Id, mut call: Call, rule: &str, reason: &str) {
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
                let r = super::redact::redact(&call.args);
                let mut s = r.value.to_string();
                if s.len() > 2000 {
                    let mut cut = 2000;
                    while !s.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    s.truncate(cut);
                    s.push('…');
                }
                crate::stamp::path::display(s.as_bytes())
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
    fn answered_ask(&mut self, id: &Id, via: &'static str, yes: bool, timeout: bool) {
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
    fn input_required(&mut self, id: &Id, call: &Call, question: &str, server_state: Option<&str>) {
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

    fn seal_state(&self, call: &Call, server_state: Option<&str>) -> String {
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
    fn own_request_state(
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

    fn retry(
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

    fn server_line(&mut self, bytes: &[u8]) {
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

    fn child_response(
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

    fn set_era(&mut self, era: Era) {
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

/// A response with `result.instructions` removed (parsed before, so it is
/// JSON; if it were not, nothing of it is sent).
fn without_instructions(bytes: &[u8]) -> Vec<u8> {
    let Ok(mut msg) = serde_json::from_slice::<Value>(bytes) else {
        return Vec::new();
    };
    if let Some(r) = msg.get_mut("result").and_then(Value::as_object_mut) {
        r.remove("instructions");
    }
    serde_json::to_vec(&msg).unwrap_or_default()
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn exit_code(status: Option<ExitStatus>) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    match status {
        Some(s) => s.code().unwrap_or_else(|| 128 + s.signal().unwrap_or(0)),
        None => 2,
    }
}

fn approval_schema() -> Value {
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
fn approved(response: &[u8]) -> bool {
    serde_json::from_slice::<Value>(response)
        .ok()
        .and_then(|v| v.get("result").cloned())
        .is_some_and(|r| {
            r.get("action").and_then(Value::as_str) == Some("accept")
                && r.pointer("/content/approve") == Some(&Value::Bool(true))
        })
}

fn args_digest(args: &Value) -> String {
    crate::jcs::to_canonical_vec(args).map_or_else(|_| String::new(), |c| sha256_hex(&c))
}

fn tty_available() -> bool {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
        .is_ok()
}

/// Asks on the controlling terminal; anything but an explicit yes is no.
fn ask_tty(prompt: &str) -> bool {
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
