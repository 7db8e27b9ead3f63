//! An MCP stdio client that lists a server's definitions (tools, prompts,
//! resources, resource templates) for drift snapshots.
//!
//! # What is spoken
//! The stdio transport of both MCP eras: newline-delimited JSON-RPC 2.0 on
//! the child's stdin and stdout (a `\r` before the `\n` is dropped).
//!
//! 1. **Era probe.** `server/discover` with the 2026-07-28 `_meta`
//!    (`io.modelcontextprotocol/protocolVersion` = `2026-07-28`,
//!    `…/clientCapabilities`, `…/clientInfo`). A `DiscoverResult` offering
//!    2026-07-28 selects the **modern** era, and every later request carries
//!    the same `_meta`. Any error or no answer within
//!    [`ListOptions::probe_timeout`] selects the **legacy** era, as
//!    `basic/transports/stdio` (2026-07-28, Backward Compatibility) asks; the
//!    fallback is not tied to one error code. A `-32022` whose supported
//!    versions include a legacy one also falls back.
//! 2. **Legacy handshake.** `initialize` asking for 2025-11-25, then
//!    `notifications/initialized`. The server may answer 2025-11-25,
//!    2025-06-18, 2025-03-26 or 2024-11-05; anything else is
//!    [`McpError::UnsupportedVersion`].
//! 3. **Settling.** vouch waits until the server has been quiet for
//!    [`ListOptions::settle`] (servers such as server-everything announce
//!    `notifications/tools/list_changed` one to five times right after
//!    start), then lists.
//! 4. **Listing.** `tools/list` if the server declared `tools`,
//!    `prompts/list` if `prompts`, `resources/list` and
//!    `resources/templates/list` if `resources`, each followed through
//!    `nextCursor` to the end. "Method not found" for a declared list is an
//!    empty list and a note.
//! 5. **Relisting.** A `list_changed` notification during the listing or
//!    within `settle` after it starts the listing again, all lists, at most
//!    five times ([`McpError::Unsettled`] after that: a list that keeps
//!    changing cannot be snapshotted reproducibly). A modern server sends
//!    those notifications only on a `subscriptions/listen` stream, which
//!    vouch does not open; one that sends them anyway is handled alike.
//! 6. **Shutdown.** stdin closed, up to 1 s for the server to exit, SIGTERM
//!    to its process group (it is started in a group of its own, so that
//!    `npx` and the server it runs stop together), 1 s more, SIGKILL; the
//!    child is always reaped.
//!
//! vouch declares **no client capabilities** (`{}`), in both eras, and
//! records that in [`Listing::client_capabilities`]: a server's lists can
//! depend on them (server-everything lists 13 tools to `{}` and 17 to a
//! client with roots, sampling and elicitation). Requests the server sends
//! anyway get an answer in the legacy era (`ping` → `{}`, anything else →
//! `-32601`), so it is never left waiting; in the modern era a server must
//! not send them and a client must not answer, so they are noted. Other
//! notifications (logging, progress) are ignored. vouch uses its own
//! integer ids, never reused, and matches responses by the id's decoded
//! value; a late answer to a timed-out probe matches nothing and is dropped.
//!
//! # What is trusted
//! Nothing the server says. Each tool, prompt, resource and template is
//! kept exactly as parsed (every field, unknown ones such as `execution`
//! included, numbers as written thanks to serde_json's `float_roundtrip`),
//! in server order, to be recorded and hashed elsewhere
//! (`crate::jcs`); nothing here hashes or interprets them.
//!
//! # What is checked
//! Every stdout line is UTF-8 JSON with no duplicate member names (any
//! depth) and no number that RFC 8785 would write as another value
//! ([`crate::jcs::check_exact`]; the second rule is there because the
//! definitions are hashed in RFC 8785 form, and every JavaScript server
//! passes it), nested at most 100 levels, and a JSON-RPC 2.0 request,
//! notification or response; anything else (a banner on stdout, say) ends
//! the listing with an error naming the line. Lists must have the right
//! array, items their `name` (`uri`, `uriTemplate`), with no name twice;
//! cursors must not repeat.
//!
//! # What is not checked
//! That definitions follow the MCP schema (an `inputSchema` is not
//! validated); `ttlMs`, `cacheScope` and `_meta` of list results (dropped);
//! the server's stderr (kept, last 8 KiB, for error messages only).
//!
//! # Bounds
//! Every request has [`ListOptions::timeout`] and the probe
//! [`ListOptions::probe_timeout`]; settling waits at most `timeout`. A
//! stdout line longer than [`ListOptions::max_message_bytes`] is an error
//! before it is buffered whole, and at most eight lines wait between the
//! reader thread and the conversation. Pages and items per list are bounded
//! by [`ListOptions::max_pages`] and [`ListOptions::max_items`].

use super::{McpError, ServerSpec, client, transport};
use serde::Serialize;
use serde_json::Value;
use std::time::Duration;

/// Limits and timings of one [`list`] call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListOptions {
    /// Longest wait for the answer to one request (default 30 s).
    pub timeout: Duration,
    /// Longest wait for the answer to the `server/discover` probe before
    /// falling back to the legacy handshake (default 10 s). It runs from
    /// the start of the process, so it includes the server's start-up: at
    /// 3 s, Node servers on a loaded 2-core machine were taken for legacy
    /// ones before they had read the probe. Legacy servers answer the
    /// probe with an error at once (JSON-RPC requires an answer), so the
    /// long default costs nothing with them.
    pub probe_timeout: Duration,
    /// Quiet time after the handshake, and after a listing, before a list
    /// counts (default 500 ms).
    pub settle: Duration,
    /// Most pages of one list (default 100).
    pub max_pages: usize,
    /// Most items of one list (default 10 000).
    pub max_items: usize,
    /// Longest stdout line (default 16 MiB; the TypeScript SDK's limit is
    /// 10 MiB).
    pub max_message_bytes: usize,
}

impl Default for ListOptions {
    fn default() -> Self {
        ListOptions {
            timeout: Duration::from_secs(30),
            probe_timeout: Duration::from_secs(10),
            settle: Duration::from_millis(500),
            max_pages: 100,
            max_items: 10_000,
            max_message_bytes: 16 << 20,
        }
    }
}

/// The protocol era a server was spoken to in, with the negotiated version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "era", rename_all = "lowercase")]
pub enum Era {
    /// `initialize` handshake (2025-11-25 and earlier).
    Legacy { protocol_version: String },
    /// `server/discover` and per-request `_meta` (2026-07-28).
    Modern { protocol_version: String },
}

impl Era {
    /// The negotiated protocol version.
    pub fn protocol_version(&self) -> &str {
        match self {
            Era::Legacy { protocol_version } | Era::Modern { protocol_version } => protocol_version,
        }
    }
}

/// What a server listed, as sent.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Listing {
    pub era: Era,
    /// `serverInfo` of the `initialize` result, or
    /// `_meta["io.modelcontextprotocol/serverInfo"]` of the `DiscoverResult`.
    pub server_info: Option<Value>,
    pub instructions: Option<String>,
    /// The fixed capability set vouch declared (`{}`).
    pub client_capabilities: Value,
    pub server_capabilities: Value,
    /// Each tool exactly as sent, all pages, in server order.
    pub tools: Vec<Value>,
    pub prompts: Vec<Value>,
    pub resources: Vec<Value>,
    pub resource_templates: Vec<Value>,
    /// What happened on the way (fallback, list_changed bursts, relistings).
    pub notes: Vec<String>,
}

/// Starts the server, lists its definitions, and stops it (see the module
/// docs for the conversation). The server is always stopped and reaped,
/// also on error.
pub fn list(spec: &ServerSpec, opts: &ListOptions) -> Result<Listing, McpError> {
    let t = transport::Transport::spawn(spec, opts.max_message_bytes)?;
    client::Session::new(t, opts).run()
}
