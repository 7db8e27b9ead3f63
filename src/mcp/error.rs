//! Why a listing could not be made.

use std::fmt;
use std::path::PathBuf;

/// The last lines a server wrote to stderr before a failure (at most the
/// last 8 KiB it wrote, at most [`StderrTail::MAX_LINES`] lines), shown
/// after the error so that the user sees the server's own complaint.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StderrTail(pub Vec<String>);

impl StderrTail {
    /// The most lines kept.
    pub const MAX_LINES: usize = 8;
}

impl fmt::Display for StderrTail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return Ok(());
        }
        f.write_str("; server stderr: ")?;
        f.write_str(&self.0.join(" | "))
    }
}

/// What is wrong with a command line given to
/// [`ServerSpec::parse_command`](super::ServerSpec::parse_command).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandProblem {
    /// Nothing but white space.
    Empty,
    /// A `'` or `"` that is never closed.
    UnterminatedQuote,
    /// A backslash as the last character.
    TrailingBackslash,
}

impl fmt::Display for CommandProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CommandProblem::Empty => "the command is empty",
            CommandProblem::UnterminatedQuote => "a quote is not closed",
            CommandProblem::TrailingBackslash => "it ends with a backslash",
        })
    }
}

/// The step of the conversation during which a server exited or went quiet.
pub type Step = String;

/// Why [`list`](super::list) (or building a [`ServerSpec`](super::ServerSpec))
/// failed. Every variant has a stable reason code ([`McpError::code`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// The command line cannot be split into words.
    #[error("cannot parse the server command: {problem}")]
    InvalidCommand { problem: CommandProblem },
    /// The server program could not be started.
    #[error("cannot start MCP server {program:?}: {message}")]
    Spawn { program: String, message: String },
    /// The command runs vouch in a form that is not a plain `vouch wrap
    /// ... -- SERVER` (which would be taken apart and its server started
    /// directly): starting it could write to a log, so it is not started.
    #[error("not starting {program:?}: it {problem}")]
    RunsVouch {
        program: String,
        problem: super::wrapped::WrapEntryError,
    },
    /// The server closed its stdout or exited before answering.
    #[error(
        "MCP server exited during {step} ({}){stderr}",
        match (code, signal) {
            (Some(c), _) => format!("exit status {c}"),
            (None, Some(s)) => format!("killed by signal {s}"),
            (None, None) => "stdout closed, still running".to_owned(),
        }
    )]
    Exited {
        step: Step,
        code: Option<i32>,
        signal: Option<i32>,
        stderr: StderrTail,
    },
    /// No answer to a request within the time allowed.
    #[error("MCP server did not answer {method} within {millis} ms{stderr}")]
    Timeout {
        method: String,
        millis: u128,
        stderr: StderrTail,
    },
    /// The server wrote a line longer than the limit on its stdout.
    #[error("stdout line {line} of the MCP server is longer than {limit} bytes")]
    MessageTooLarge { line: u64, limit: usize },
    /// A line on stdout is not UTF-8.
    #[error("stdout line {line} of the MCP server is not UTF-8 (byte {offset})")]
    InvalidUtf8 { line: u64, offset: usize },
    /// A line on stdout is not JSON (a banner or log line on the wrong stream).
    #[error("stdout line {line} of the MCP server is not JSON (byte {offset}): {excerpt}")]
    NotJson {
        line: u64,
        offset: usize,
        excerpt: String,
    },
    /// A message nested deeper than the limit.
    #[error("stdout line {line} of the MCP server is nested deeper than {max} levels")]
    TooDeep { line: u64, max: u32 },
    /// A message has an object with two members of one name: a parser would
    /// keep one of them, so what the server meant is unknown.
    #[error("stdout line {line} of the MCP server has the member {path} twice")]
    DuplicateKey { line: u64, path: String },
    /// A number RFC 8785 would write as another value (it could not be
    /// recorded and hashed faithfully).
    #[error(
        "stdout line {line} of the MCP server has the number {literal} at {path}, which RFC 8785 cannot write exactly"
    )]
    InexactNumber {
        line: u64,
        path: String,
        literal: String,
    },
    /// JSON, but not a JSON-RPC 2.0 message of a kind a server may send.
    #[error("stdout line {line} of the MCP server is not a JSON-RPC message ({why}): {excerpt}")]
    NotJsonRpc {
        line: u64,
        why: &'static str,
        excerpt: String,
    },
    /// A result that does not have the shape its method requires.
    #[error("the MCP server's {method} result is invalid: {why}")]
    InvalidResult { method: String, why: String },
    /// The server answered a request with a JSON-RPC error.
    #[error("the MCP server answered {method} with error {code}: {message}")]
    ServerError {
        method: String,
        code: i64,
        message: String,
    },
    /// The server speaks no protocol revision vouch speaks.
    #[error("the MCP server offers protocol version {offered}, which vouch does not speak")]
    UnsupportedVersion { offered: String },
    /// A `nextCursor` the server had already given in this listing.
    #[error("the MCP server repeated the cursor {cursor:?} in {method}")]
    RepeatedCursor { method: String, cursor: String },
    /// More pages than [`ListOptions::max_pages`](super::ListOptions::max_pages).
    #[error("{method} has more than {max} pages")]
    TooManyPages { method: String, max: usize },
    /// More items than [`ListOptions::max_items`](super::ListOptions::max_items).
    #[error("{method} lists more than {max} items")]
    TooManyItems { method: String, max: usize },
    /// Two tools or prompts of one name, or two resources of one uri.
    #[error("{method} lists {name:?} twice")]
    DuplicateName { method: String, name: String },
    /// The server kept announcing list changes.
    #[error("the MCP server's lists kept changing: still changing after {rounds} listings")]
    Unsettled { rounds: usize },
    /// A request could not be written to the server's stdin (it was alive).
    #[error("cannot write {method} to the MCP server: {message}")]
    Write { method: String, message: String },
    /// A host configuration file could not be read.
    #[error("cannot read MCP host configuration {}: {message}", path.display())]
    HostConfigRead { path: PathBuf, message: String },
    /// A host configuration file is not JSON (comments and trailing commas
    /// are allowed).
    #[error("MCP host configuration {} is not JSON: {message}", path.display())]
    HostConfigJson { path: PathBuf, message: String },
    /// No `mcpServers`, `servers` or `mcp.servers` object in the file.
    #[error(
        "MCP host configuration {} has no servers (looked for \"mcpServers\", \"servers\" and \"mcp\".\"servers\")",
        path.display()
    )]
    HostConfigNoServers { path: PathBuf },
    /// No server of that name; `available` lists the names present.
    #[error(
        "MCP host configuration {} has no server {name:?} (it has: {})",
        path.display(),
        available.join(", ")
    )]
    HostConfigUnknownServer {
        path: PathBuf,
        name: String,
        available: Vec<String>,
    },
    /// The entry is not a local (stdio) server.
    #[error(
        "server {name:?} in {} is a {transport} server; vouch lists stdio servers only",
        path.display()
    )]
    HostConfigNotStdio {
        path: PathBuf,
        name: String,
        transport: String,
    },
    /// A field of the entry is missing or of the wrong type.
    #[error("server {name:?} in {}: {field} {problem}", path.display())]
    HostConfigEntry {
        path: PathBuf,
        name: String,
        field: String,
        problem: &'static str,
    },
    /// The entry uses a host variable (`${workspaceFolder}`, `${input:…}`)
    /// that only the host can expand.
    #[error(
        "server {name:?} in {} uses {variable}, which only the host expands; write the value out",
        path.display()
    )]
    HostConfigVariable {
        path: PathBuf,
        name: String,
        variable: String,
    },
}

impl McpError {
    /// Stable snake_case reason code.
    pub fn code(&self) -> &'static str {
        match self {
            McpError::InvalidCommand { .. } => "invalid_command",
            McpError::Spawn { .. } => "spawn_failed",
            McpError::RunsVouch { problem, .. } => problem.code(),
            McpError::Exited { .. } => "server_exited",
            McpError::Timeout { .. } => "timeout",
            McpError::MessageTooLarge { .. } => "message_too_large",
            McpError::InvalidUtf8 { .. } => "invalid_utf8",
            McpError::NotJson { .. } => "not_json",
            McpError::TooDeep { .. } => "too_deep",
            McpError::DuplicateKey { .. } => "duplicate_key",
            McpError::InexactNumber { .. } => "inexact_number",
            McpError::NotJsonRpc { .. } => "not_jsonrpc",
            McpError::InvalidResult { .. } => "invalid_result",
            McpError::ServerError { .. } => "server_error",
            McpError::UnsupportedVersion { .. } => "unsupported_version",
            McpError::RepeatedCursor { .. } => "repeated_cursor",
            McpError::TooManyPages { .. } => "too_many_pages",
            McpError::TooManyItems { .. } => "too_many_items",
            McpError::DuplicateName { .. } => "duplicate_name",
            McpError::Unsettled { .. } => "list_unsettled",
            McpError::Write { .. } => "write_failed",
            McpError::HostConfigRead { .. } => "host_config_unreadable",
            McpError::HostConfigJson { .. } => "host_config_invalid_json",
            McpError::HostConfigNoServers { .. } => "host_config_no_servers",
            McpError::HostConfigUnknownServer { .. } => "host_config_unknown_server",
            McpError::HostConfigNotStdio { .. } => "host_config_not_stdio",
            McpError::HostConfigEntry { .. } => "host_config_bad_entry",
            McpError::HostConfigVariable { .. } => "host_config_variable",
        }
    }

    /// True for the variants that say the server broke the protocol (as
    /// opposed to exiting, timing out, or vouch not being able to start it).
    pub fn is_protocol_violation(&self) -> bool {
        matches!(
            self,
            McpError::MessageTooLarge { .. }
                | McpError::InvalidUtf8 { .. }
                | McpError::NotJson { .. }
                | McpError::TooDeep { .. }
                | McpError::DuplicateKey { .. }
                | McpError::InexactNumber { .. }
                | McpError::NotJsonRpc { .. }
                | McpError::InvalidResult { .. }
                | McpError::RepeatedCursor { .. }
                | McpError::DuplicateName { .. }
        )
    }
}

/// A short, escaped excerpt of a stdout line for error messages: at most
/// 60 characters, quotes, backslashes and control characters escaped.
pub(crate) fn excerpt(bytes: &[u8]) -> String {
    const MAX: usize = 60;
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::new();
    for (count, c) in text.chars().enumerate() {
        if count == MAX {
            out.push('…');
            break;
        }
        out.extend(c.escape_debug());
    }
    out
}
