//! `vouch wrap`: the MCP stdio wrapper (library: `vouch::enforce::wrap`).

use crate::error;
use crate::output::{self, Format};
use clap::Args;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;
use vouch::chain::keys;
use vouch::enforce::evidence::Cadence;
use vouch::enforce::policy::Policy;
use vouch::enforce::wrap::{self, WrapOptions};

const WRAP_HELP: &str = "\
Put `vouch wrap` where an MCP client (Claude Desktop, Cursor, VS Code, Claude
Code) expects the server's command. It starts the real server (the words
after `--`) as its child and speaks MCP on its own stdin/stdout: every
message is forwarded byte for byte, except that each `tools/call` is decided
by the policy first (allow / ask / block; `vouch policy check --help` has
the format) and `tools/list` is answered from the wrapper's own listing of
the server's tools. Every decision, and the outcome of every call it
forwarded, is a record in the signed chain LOG (`vouch verify LOG`,
`vouch receipt LOG --seq N`). A decision is on disk (fsync) before the
client sees the call's result or its refusal; if the log cannot be
written, calls are refused. Nothing but MCP messages is written to stdout;
diagnostics and the server's stderr go to stderr. The exit code is the
server's.

Shutdown: when the client closes stdin, the server exits, or the wrapper
gets SIGTERM, SIGINT or SIGHUP, it closes the server's stdin, waits, then
sends SIGTERM and SIGKILL to the server (2 s per step, 0.5 s after a
signal; a second signal kills the server at once), answers what is still
in flight with an error, and writes the session's end record and a
checkpoint before it exits.

Vetting: every listing is scanned (`vouch scan --help` has the ruleset) and
judged against the server's pins, kept in LOG as signed `tool_pin` records.
On first contact the tools that pass the scan are pinned (trust on first
use; with `--require-approval` nothing is, and every tool waits for `vouch
pins approve`). Afterwards a tool whose definition changed, a new or renamed
tool, and one with a finding at `[vet] block_at` (default high) is withheld
from the client and its calls are blocked, without taking the other tools
down (`[vet] on_change = \"block_server\"` withholds them all). A changed
server command under the same --id is an identity change: everything waits
for approval. Review with `vouch pins status --id ID --log LOG --key KEY`.

Example (Claude Desktop / Cursor `mcpServers` entry):
  \"filesystem\": {
    \"command\": \"vouch\",
    \"args\": [\"wrap\", \"--policy\", \"/etc/vouch/fs.toml\", \"--log\", \"/var/log/vouch/fs.log\",
             \"--key\", \"/etc/vouch/mcp.key\", \"--id\", \"filesystem\",
             \"--require-approval\", \"--\", \"npx\", \"-y\", \"@modelcontextprotocol/server-filesystem\", \"/srv/project\"]
  }";

#[derive(Args)]
#[command(after_long_help = WRAP_HELP)]
pub struct WrapArgs {
    /// The policy (TOML; `vouch policy check --help`).
    #[arg(long)]
    policy: PathBuf,
    /// The chain log decisions are appended to (created if missing).
    #[arg(long)]
    log: PathBuf,
    /// The log's signing key (`vouch keygen`).
    #[arg(long)]
    key: PathBuf,
    /// The operator's name for this server, recorded with every decision.
    #[arg(long)]
    id: String,
    /// The largest message accepted from either side, in bytes (the
    /// TypeScript SDK accepts 10 MiB).
    #[arg(long, default_value_t = 16 << 20, value_name = "BYTES")]
    max_message_bytes: usize,
    /// Sign a checkpoint once this many of the session's records are
    /// uncovered...
    #[arg(long, default_value_t = 1000, value_name = "N")]
    checkpoint_every: u64,
    /// ...or once the oldest of them has waited this many seconds (other
    /// writers of the same log do not delay it).
    #[arg(long, default_value_t = 5.0, value_name = "SECONDS")]
    checkpoint_interval: f64,
    /// List the server's tools again before every call (costs one round
    /// trip to the server per call; off by default: the wrapper re-lists
    /// when the server announces a change).
    #[arg(long)]
    relist_before_call: bool,
    /// How long an `ask` waits for an answer before it counts as no.
    #[arg(long, default_value_t = 120.0, value_name = "SECONDS")]
    ask_timeout: f64,
    /// Never ask on the controlling terminal (ask only through the client;
    /// when it cannot be asked, block).
    #[arg(long)]
    no_tty: bool,
    /// How long the wrapper waits for the server to list its tools.
    #[arg(long, default_value_t = 30.0, value_name = "SECONDS")]
    list_timeout: f64,
    /// Pin nothing on first contact: every tool waits for `vouch pins
    /// approve` (also `[vet] require_approval = true` in the policy).
    #[arg(long)]
    require_approval: bool,
    /// The server to run, after `--`.
    #[arg(last = true, required = true, num_args = 1.., value_name = "COMMAND")]
    command: Vec<OsString>,
}

fn seconds(option: &'static str, value: f64) -> vouch::Result<Duration> {
    Duration::try_from_secs_f64(value).map_err(|_| vouch::Error::InvalidArgument {
        option,
        text: value.to_string(),
        expected: "a non-negative number of seconds",
    })
}

pub fn run(a: WrapArgs) -> ExitCode {
    let r = (|| {
        // Before anything is loaded: a host may stop the wrapper at once.
        let signals = wrap::StopSignals::watch()?;
        let policy = Policy::load(&a.policy)?;
        let key = keys::read_signer_key(&a.key)?;
        let mut command = a.command.into_iter();
        let Some(program) = command.next() else {
            return Err(vouch::Error::Usage("no server command after --".into()));
        };
        if a.max_message_bytes < 1024 {
            return Err(vouch::Error::InvalidArgument {
                option: "--max-message-bytes",
                text: a.max_message_bytes.to_string(),
                expected: "at least 1024",
            });
        }
        let opts = WrapOptions {
            server_id: a.id,
            program,
            args: command.collect(),
            policy,
            max_message_bytes: a.max_message_bytes,
            cadence: Cadence {
                checkpoint_every: a.checkpoint_every.max(1),
                checkpoint_interval: seconds("--checkpoint-interval", a.checkpoint_interval)?,
            },
            relist_before_call: a.relist_before_call,
            ask_timeout: seconds("--ask-timeout", a.ask_timeout)?,
            tty: !a.no_tty,
            list_timeout: seconds("--list-timeout", a.list_timeout)?,
            shutdown_grace: Duration::from_secs(2),
            require_approval: a.require_approval,
        };
        wrap::run(opts, &a.log, key, signals)
    })();
    match r {
        Ok(code) => ExitCode::from(u8::try_from(code).unwrap_or(output::EXIT_ERROR)),
        Err(e) => error::report(&e, Format::Table),
    }
}

#[cfg(test)]
mod tests {
    //! `vouch scan` recognises `vouch wrap` command lines without starting
    //! them (`vouch::mcp::wrapped`), with a parser of its own: these tests
    //! hold it to this file's clap definition.
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::WrapArgs;
    use clap::{Args, Command, FromArgMatches};
    use vouch::mcp::wrapped::{self, SWITCHES, VALUE_OPTIONS};

    fn command() -> Command {
        WrapArgs::augment_args(Command::new("wrap").no_binary_name(true))
    }

    #[test]
    fn the_scanner_knows_every_option_of_wrap() {
        let cmd = command();
        for arg in cmd.get_arguments() {
            let Some(long) = arg.get_long() else {
                continue;
            };
            if arg.get_action().takes_values() {
                assert!(VALUE_OPTIONS.contains(&long), "--{long} takes a value");
            } else {
                assert!(SWITCHES.contains(&long), "--{long} is a switch");
            }
        }
        for option in VALUE_OPTIONS.iter().chain(SWITCHES) {
            assert!(
                cmd.get_arguments().any(|a| a.get_long() == Some(option)),
                "--{option} is not an option of vouch wrap"
            );
        }
    }

    #[test]
    fn the_scanner_reads_wrap_as_clap_does() {
        let base = "--policy p.toml --log l.jsonl --key k --id fs";
        let lines = [
            format!("{base} -- npx -y srv"),
            format!("{base} --no-tty --require-approval --relist-before-call -- srv a -- b"),
            "--policy=p --log=l --key=k --id=fs --checkpoint-every=5 --ask-timeout 2.5 -- srv".into(),
            "--id fs --key k --log l --policy p --max-message-bytes 2048 --list-timeout 1 --checkpoint-interval 9 -- srv".into(),
            format!("{base} srv"),
            base.to_string(),
            format!("{base} --"),
            "--policy p --log l --key k -- srv".into(),
            "--policy p --log --key k --id fs -- srv".into(),
            format!("{base} --no-tty=true -- srv"),
            format!("{base} --bogus -- srv"),
            format!("{base} -x -- srv"),
            format!("{base} --log again -- srv"),
            format!("{base} --no-tty --no-tty -- srv"),
            format!("{base} --help -- srv"),
            format!("-h {base} -- srv"),
            format!("{base} --id -- srv"),
        ];
        for line in &lines {
            let words: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
            let by_clap = command()
                .try_get_matches_from(&words)
                .and_then(|m| WrapArgs::from_arg_matches(&m));
            let argv: Vec<String> = ["vouch".to_owned(), "wrap".to_owned()]
                .into_iter()
                .chain(words.iter().cloned())
                .collect();
            match (by_clap, wrapped::classify(&argv)) {
                (Ok(a), Ok(Some(inv))) => {
                    assert_eq!(a.log.to_str(), Some(inv.wrapped.log.as_str()), "{line}");
                    assert_eq!(
                        a.policy.to_str(),
                        Some(inv.wrapped.policy.as_str()),
                        "{line}"
                    );
                    assert_eq!(a.key.to_str(), Some(inv.wrapped.key.as_str()), "{line}");
                    assert_eq!(a.id, inv.wrapped.id, "{line}");
                    let server: Vec<String> = a
                        .command
                        .iter()
                        .map(|w| w.to_str().unwrap().to_owned())
                        .collect();
                    assert_eq!(server, inv.server, "{line}");
                }
                (Err(_), Err(_)) => {}
                (clap, ours) => panic!("{line}: clap {:?}, vouch scan {ours:?}", clap.map(|_| ())),
            }
        }
    }
}
