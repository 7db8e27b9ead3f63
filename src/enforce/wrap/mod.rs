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
//!   Every message forwarded was parsed first ([`crate::mcp::message`]): no
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
use super::policy::{Action, Policy, RateState};
use crate::chain::writer::SessionWriter;
use crate::mcp::message::{self, Id, Invalid, Kind, code};
use crate::mcp::protocol::{
    META_CAPABILITIES as META_CAPS, META_VERSION, MODERN_VERSION as MODERN,
};
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

mod ask;
mod calls;
mod client;
mod lifecycle;
mod listing;
mod outbox;
mod process;
mod server;

use ask::approved;
pub use process::StopSignals;
use process::*;

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

fn sha256(bytes: &[u8]) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(bytes).into()
}

fn sha256_hex(bytes: &[u8]) -> String {
    crate::hex::encode(&sha256(bytes))
}
