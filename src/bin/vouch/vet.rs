//! CLI for `vouch scan` (the static scan of MCP tool definitions) and
//! `vouch pins` (the operator's review of a server's pins). Library:
//! `vouch::vet`.

use crate::error;
use crate::output::{self, EXIT_ERROR, EXIT_REJECTED, EXIT_VERIFIED};
use clap::{Args, Subcommand, ValueEnum};
use comfy_table::{Cell, Color};
use std::ffi::OsString;
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use vouch::chain::keys;
use vouch::mcp::{self, ServerSpec, wrapped};
use vouch::vet::report::{Sarif, ScanReport, ServerScan, Verdict, parse_saved, scan_listing};
use vouch::vet::review::{self, Action, ChangeKind, Review};
use vouch::vet::scan::{Finding, Ruleset, Severity};
use vouch::vet::{VetError, pins};

const SCAN_HELP: &str = "\
Scans MCP tool definitions with vouch's ruleset, the same scan `vouch wrap`
applies to every listing before the client sees it; no pins are read or
written here. One source:
  vouch scan FILE                  a saved tools/list result ({\"tools\": [...]}), an
                                   initialize result (\"instructions\"), or a JSON-RPC
                                   response holding one
  vouch scan --config PATH         every stdio server of a Claude Desktop / Cursor
                                   (mcpServers) or VS Code (servers) config, each
                                   started, listed (all pages) and stopped
  vouch scan -- COMMAND ARGS...    one server started with this command

A scan writes no evidence. An entry (or COMMAND) that runs `vouch wrap
--log LOG ... -- SERVER ARGS` is scanned by listing SERVER ARGS directly,
never by starting the wrapper (which would pin the tools in LOG), and the
report says by which log, policy, key and id it is wrapped. A command
line that runs vouch in another way (a wrap whose options do not parse,
no `--`, `vouch wrap` behind npx, sudo or `sh -c`, another subcommand) is
not started: the server is reported as not scanned, with the reason.

Each tool (every string and every property name in its definition) and the
server's instructions get a verdict: blocked (a finding at or above
--block-at, default high), flagged (findings below it), or pass. Advisory
findings are reported and never count. Exit 1 when anything is blocked, 2
when a server could not be listed (or was not started) and nothing was
blocked, else 0.

Rule families: injection, steering (cross-tool), concealment, exfiltration,
credentials (sensitive paths), secret_field (secret-shaped parameters),
hidden_unicode (tag characters, bidi controls, zero-width characters, NFKC
look-alikes), encoded_blob (base64/hex decoded and scanned again). `vouch
scan --rules` lists every rule with its severity and rationale, and the
ruleset's version and digest (recorded with every verdict of `vouch wrap`).
A rule-based scan catches the phrasings it has rules for; it does not
understand intent, and a server's code can misbehave whatever its
descriptions say.";

const PINS_HELP: &str = "\
Pins are kept in the chain LOG as signed `tool_pin` records, so they
survive restarts and are verified like every record: a record the log's key
did not sign, or one replayed out of order, is ignored (and shown).

  vouch pins status  --id ID --log LOG (--key KEY | --pub KEY.pub)
  vouch pins approve --id ID --log LOG --key KEY [--tool NAME]... [--reason TEXT]
  vouch pins revoke  --id ID --log LOG --key KEY [--tool NAME]... [--reason TEXT]

status shows the pins and the last verdict `vouch wrap` signed after them:
each withheld tool with its change field by field (words added and removed
in descriptions, schema values before -> after), its findings, then the
full old and new definitions. Exit 1 when something waits for review.

approve pins exactly what that verdict showed (all of it, or only --tool
NAME), findings included; revoke withholds the server (or --tool NAME)
until approved again. Both need an interactive terminal and typing the
action and id (e.g. `approve filesystem`); the record names the pins it
replaces, and if another change landed first it has no effect and the
command says so (exit 2). A running wrapper applies pins at its next start.";

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Default)]
pub enum ScanFormat {
    #[default]
    Table,
    Json,
    /// SARIF 2.1.0 (code-scanning dashboards).
    Sarif,
}

#[derive(Args)]
#[command(after_long_help = SCAN_HELP)]
pub struct ScanArgs {
    /// A saved tools/list (or initialize) result.
    #[arg(conflicts_with_all = ["config", "command"])]
    file: Option<PathBuf>,
    /// Every server of an MCP host's configuration file.
    #[arg(long, value_name = "PATH", conflicts_with = "command")]
    config: Option<PathBuf>,
    /// Findings at or above this severity block (low, medium, high, critical).
    #[arg(long, default_value = "high", value_parser = parse_severity)]
    block_at: Severity,
    #[arg(long, value_enum, default_value_t)]
    format: ScanFormat,
    /// List the ruleset instead of scanning.
    #[arg(long)]
    rules: bool,
    /// How long to wait for a server's answers, in seconds.
    #[arg(long, default_value_t = 30, value_name = "SECONDS")]
    timeout: u64,
    /// The server to run, after `--`.
    #[arg(last = true, num_args = 1.., value_name = "COMMAND")]
    command: Vec<OsString>,
}

fn parse_severity(s: &str) -> Result<Severity, String> {
    Severity::parse(s).ok_or_else(|| "use low, medium, high or critical".into())
}

#[derive(Args)]
#[command(after_long_help = PINS_HELP)]
pub struct PinsCmd {
    #[command(subcommand)]
    cmd: PinsSub,
}

#[derive(Subcommand)]
enum PinsSub {
    /// Show a server's pins and what waits for review (exit 1 if anything).
    Status(StatusArgs),
    /// Pin what the last verdict showed (interactive terminal only).
    Approve(ChangeArgs),
    /// Withhold a server or some of its tools until approved (interactive).
    Revoke(ChangeArgs),
}

#[derive(Args)]
struct StatusArgs {
    /// The operator's id of the server (`vouch wrap --id`).
    #[arg(long)]
    id: String,
    #[arg(long)]
    log: PathBuf,
    /// The log's signing key (its public half is what is trusted).
    #[arg(long, conflicts_with = "pub_keys")]
    key: Option<PathBuf>,
    /// Public keys trusted for the log (repeatable).
    #[arg(long = "pub", value_name = "KEY.pub")]
    pub_keys: Vec<PathBuf>,
    #[arg(long, value_enum, default_value_t)]
    format: output::Format,
}

#[derive(Args)]
struct ChangeArgs {
    #[arg(long)]
    id: String,
    #[arg(long)]
    log: PathBuf,
    /// The log's signing key (signs the pin record).
    #[arg(long)]
    key: PathBuf,
    /// Only these tools (repeatable); default: the whole server.
    #[arg(long = "tool", value_name = "NAME")]
    tools: Vec<String>,
    /// Why, recorded with the pin.
    #[arg(long)]
    reason: Option<String>,
}

// ---- scan -----------------------------------------------------------------

pub fn scan(a: ScanArgs) -> ExitCode {
    if a.rules {
        return rules(a.format);
    }
    let r = (|| -> vouch::Result<ScanReport> {
        let opts = mcp::ListOptions {
            timeout: std::time::Duration::from_secs(a.timeout.max(1)),
            ..mcp::ListOptions::default()
        };
        let servers = if let Some(file) = &a.file {
            let bytes = vouch::fs::read_bounded(file, 64 << 20)?;
            let shown = file.display().to_string();
            let (tools, instructions) = parse_saved(&shown, &bytes)?;
            vec![scan_listing(
                &shown,
                &shown,
                &tools,
                instructions.as_deref(),
                a.block_at,
            )]
        } else if let Some(config) = &a.config {
            let entries = mcp::host_config_servers(config).map_err(|e| VetError::Listing {
                source_name: config.display().to_string(),
                problem: e.to_string(),
            })?;
            entries
                .into_iter()
                .map(|(name, spec)| {
                    let source = format!("{}#{name}", config.display());
                    match spec {
                        Ok(spec) => scan_server(&name, &source, &spec, &opts, a.block_at),
                        Err(e) => ServerScan::failed(&name, &source, e.code(), e.to_string()),
                    }
                })
                .collect()
        } else if !a.command.is_empty() {
            let mut words = Vec::new();
            for w in &a.command {
                words.push(
                    w.to_str()
                        .ok_or_else(|| vouch::Error::Usage("the command is not UTF-8".into()))?
                        .to_owned(),
                );
            }
            let spec = ServerSpec {
                program: words[0].clone(),
                args: words[1..].to_vec(),
                env: Vec::new(),
                cwd: None,
            };
            let shown = spec.display();
            vec![scan_server(&shown, &shown, &spec, &opts, a.block_at)]
        } else {
            return Err(vouch::Error::Usage(
                "give FILE, --config PATH or -- COMMAND (see vouch scan --help)".into(),
            ));
        };
        Ok(ScanReport::new(a.block_at, servers))
    })();
    let report = match r {
        Ok(r) => r,
        Err(e) => {
            let f = match a.format {
                ScanFormat::Table => output::Format::Table,
                _ => output::Format::Json,
            };
            return error::report(&e, f);
        }
    };
    match a.format {
        ScanFormat::Json => output::print_json(&report),
        ScanFormat::Sarif => output::print_json(&Sarif::from_report(&report)),
        ScanFormat::Table => render_scan(&report),
    }
    ExitCode::from(if report.blocked {
        EXIT_REJECTED
    } else if report.has_errors() {
        EXIT_ERROR
    } else {
        EXIT_VERIFIED
    })
}

/// Lists and scans one server, never starting vouch itself: a `vouch
/// wrap` command line is scanned through the server it wraps (which
/// inherits the entry's environment and working directory, as it would
/// from the wrapper), and any other command line that runs vouch is not
/// started (`vouch::mcp::wrapped`).
fn scan_server(
    name: &str,
    source: &str,
    spec: &ServerSpec,
    opts: &mcp::ListOptions,
    block_at: Severity,
) -> ServerScan {
    let argv: Vec<String> = std::iter::once(&spec.program)
        .chain(&spec.args)
        .cloned()
        .collect();
    match wrapped::classify_program(&argv, spec.cwd.as_deref(), spec.path_var()) {
        Ok(None) => list_and_scan(name, source, spec, opts, block_at),
        Ok(Some(inv)) => {
            let mut words = inv.server.into_iter();
            let inner = ServerSpec {
                program: words.next().unwrap_or_default(),
                args: words.collect(),
                env: spec.env.iter().cloned().chain(inv.env).collect(),
                cwd: spec.cwd.clone(),
            };
            list_and_scan(name, source, &inner, opts, block_at).through(inv.wrapped)
        }
        Err(e) => ServerScan::failed(name, source, e.code(), format!("not started: {e}")),
    }
}

fn list_and_scan(
    name: &str,
    source: &str,
    spec: &ServerSpec,
    opts: &mcp::ListOptions,
    block_at: Severity,
) -> ServerScan {
    match mcp::list(spec, opts) {
        Ok(l) => scan_listing(name, source, &l.tools, l.instructions.as_deref(), block_at),
        Err(e) => ServerScan::failed(name, source, e.code(), e.to_string()),
    }
}

fn rules(format: ScanFormat) -> ExitCode {
    let r = Ruleset::builtin();
    if format != ScanFormat::Table {
        output::print_json(&r.canonical());
        return ExitCode::from(EXIT_VERIFIED);
    }
    let mut t = output::table();
    t.set_header(["rule", "family", "severity", "rationale"]);
    for rule in r.rules() {
        let sev = if rule.advisory {
            format!("{} (advisory)", rule.severity.as_str())
        } else {
            rule.severity.as_str().to_owned()
        };
        t.add_row([rule.id, rule.family.as_str(), &sev, rule.rationale]);
    }
    output::print_stdout(&format!("ruleset {} {}\n{t}\n", r.version(), r.digest()));
    ExitCode::from(EXIT_VERIFIED)
}

fn verdict_cell(v: Verdict) -> Cell {
    let c = Cell::new(v.as_str());
    match v {
        Verdict::Blocked => c.fg(Color::Red),
        Verdict::Flagged => c.fg(Color::Yellow),
        Verdict::Pass => c.fg(Color::Green),
    }
}

fn findings_text(f: &[Finding]) -> String {
    f.iter()
        .map(|f| {
            format!(
                "{} {}{} {}: {}",
                f.rule,
                f.severity.as_str(),
                if f.advisory { " advisory" } else { "" },
                if f.pointer.is_empty() {
                    "/"
                } else {
                    &f.pointer
                },
                visible(&f.excerpt)
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn render_scan(r: &ScanReport) {
    let mut out = format!(
        "ruleset {} {} · block at {}\n",
        r.ruleset.version,
        r.ruleset.digest,
        r.block_at.as_str()
    );
    for s in &r.servers {
        out.push_str(&format!(
            "\n{} ({})\n",
            visible(&s.server),
            visible(&s.source)
        ));
        if let Some(w) = &s.wrapped {
            out.push_str(&format!(
                "  wrapped by {} wrap: id {}, log {}, policy {}, key {}; the wrapped server was scanned (the wrapper was not started)\n",
                visible(&w.vouch),
                visible(&w.id),
                visible(&w.log),
                visible(&w.policy),
                visible(&w.key)
            ));
        }
        if let Some(e) = &s.error {
            if e.starts_with("not started") {
                out.push_str(&format!("  {}\n", visible(e)));
            } else {
                out.push_str(&format!("  not listed: {}\n", visible(e)));
            }
            continue;
        }
        let mut clip = output::Clip::default();
        let mut t = output::table();
        t.set_header(["tool", "verdict", "findings"]);
        if let Some(i) = &s.instructions {
            t.add_row([
                Cell::new("(instructions)"),
                verdict_cell(i.verdict),
                Cell::new(clip.cell(&findings_text(&i.findings))),
            ]);
        }
        for tool in &s.tools {
            t.add_row([
                Cell::new(clip.cell(&visible(&tool.name))),
                verdict_cell(tool.verdict),
                Cell::new(clip.cell(&findings_text(&tool.findings))),
            ]);
        }
        out.push_str(&format!("{t}\n"));
        out.extend(clip.note());
        out.push_str(&format!(
            "  {}: {} pass, {} flagged, {} blocked\n",
            output::count(s.summary.tools, "tool"),
            s.summary.pass,
            s.summary.flagged,
            s.summary.blocked
        ));
    }
    output::print_stdout(&out);
}

/// Text for a terminal: control, format and invisible characters as
/// `\u{XXXX}`, so a reviewer sees what a model would read.
fn visible(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        let hidden = c.is_control() && c != '\n'
            || matches!(c as u32,
                0x00AD | 0x034F | 0x061C | 0x115F | 0x1160 | 0x17B4 | 0x17B5 | 0x180B..=0x180F
                | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x206F | 0x3164 | 0xFE00..=0xFE0F
                | 0xFEFF | 0xFFA0 | 0xFFF0..=0xFFFB | 0x1D173..=0x1D17A | 0xE0000..=0xE0FFF);
        if hidden {
            out.push_str(&format!("\\u{{{:04X}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

// ---- pins -----------------------------------------------------------------

pub fn pins(cmd: PinsCmd) -> ExitCode {
    match cmd.cmd {
        PinsSub::Status(a) => status(a),
        PinsSub::Approve(a) => change(a, Action::Approve),
        PinsSub::Revoke(a) => change(a, Action::Revoke),
    }
}

fn status(a: StatusArgs) -> ExitCode {
    let r = (|| {
        let keys = match &a.key {
            Some(k) => vouch::chain::TrustedKeys::new([keys::read_signer_key(k)?.verifier()])
                .map_err(vouch::Error::ConflictingKeys)?,
            None => keys::load_trusted_keys(&a.pub_keys)?,
        };
        // A log that is not there is a mistake here (the wrapper creates
        // it; status only reads).
        std::fs::metadata(&a.log).map_err(|e| vouch::Error::io(&a.log, e))?;
        let state = pins::load(&a.log, &keys, &a.id)?;
        if state.head.is_none() && state.last_verdict.is_none() && state.ignored.is_empty() {
            return Err(VetError::Nothing {
                server: a.id.clone(),
                problem: "no tool_vet or tool_pin record in the log names this id".into(),
            }
            .into());
        }
        Ok::<_, vouch::Error>(review::review(&state))
    })();
    let rev = match r {
        Ok(r) => r,
        Err(e) => return error::report(&e, a.format),
    };
    match a.format {
        output::Format::Json => output::print_json(&rev),
        output::Format::Table => output::print_stdout(&render_review(&rev)),
    }
    ExitCode::from(if rev.needs_attention() {
        EXIT_REJECTED
    } else {
        EXIT_VERIFIED
    })
}

fn short(d: &str) -> String {
    let hex = d.strip_prefix("sha256:").unwrap_or(d);
    format!(
        "sha256:{}…",
        visible(&hex.chars().take(16).collect::<String>())
    )
}

fn json_text(v: &Option<serde_json::Value>) -> String {
    match v {
        None => "-".into(),
        Some(serde_json::Value::String(s)) => visible(s),
        Some(v) => visible(&v.to_string()),
    }
}

/// A launch command as a JSON array (each argument quoted, so two
/// commands that differ show differently) and its digest.
fn argv(l: &vouch::vet::record::Launch) -> String {
    format!(
        "{} ({})",
        visible(&serde_json::to_string(&l.argv).unwrap_or_default()),
        short(&l.digest)
    )
}

fn render_review(r: &Review) -> String {
    let mut out = String::new();
    out.push_str(&format!("server {}\n", visible(&r.server)));
    match &r.head {
        None => out.push_str("  pins: none (never pinned)\n"),
        Some(h) => out.push_str(&format!(
            "  pins: record {} ({}, {}), {} pinned, {}\n  launch: {}\n",
            h.seq,
            h.event.as_str(),
            if h.ts.is_empty() { "-" } else { &h.ts },
            output::count(r.pinned.len() as u64, "tool"),
            short(&h.digest),
            argv(&h.launch)
        )),
    }
    if r.server_revoked {
        out.push_str("  the server is REVOKED: every tool is withheld until approved\n");
    }
    if !r.revoked.is_empty() {
        out.push_str(&format!(
            "  revoked tools: {}\n",
            visible(&r.revoked.join(", "))
        ));
    }
    for i in &r.ignored {
        out.push_str(&format!(
            "  ignored record {} ({}): {}: {}\n",
            i.seq,
            i.kind,
            i.why,
            visible(&i.detail)
        ));
    }
    let Some(p) = &r.pending else {
        out.push_str("  no verdict since the pins (nothing to review)\n");
        return out;
    };
    out.push_str(&format!(
        "  last verdict: record {} ({}), ruleset {} {}: {} allowed, {} withheld, score {}{}\n",
        p.seq,
        p.ts,
        p.ruleset.version,
        short(&p.ruleset.digest),
        p.allowed,
        p.withheld,
        p.score,
        p.server_blocked
            .map(|b| format!(", server blocked ({})", b.as_str()))
            .unwrap_or_default()
    ));
    if let Some((old, new)) = &r.launch_change {
        out.push_str(&format!(
            "  LAUNCH COMMAND CHANGED (identity):\n    pinned: {}\n    now:    {}\n",
            argv(old),
            argv(new)
        ));
    }
    if let Some(i) = &r.instructions_change {
        out.push_str(&format!(
            "  instructions withheld ({})\n",
            i.reason.as_str()
        ));
        for f in &i.findings {
            out.push_str(&format!(
                "    {} {}: {}\n",
                f.rule,
                f.severity.as_str(),
                visible(&f.excerpt)
            ));
        }
        if let (Some(b), Some(a)) = (&i.before, &i.after) {
            let ops = vouch::json::diff::word_diff(b, a);
            out.push_str(&format!(
                "    {}\n",
                visible(&vouch::json::diff::render_words(&ops))
            ));
        } else if let Some(a) = &i.after {
            out.push_str(&format!("    text: {}\n", visible(a)));
        }
    }
    if r.tools.is_empty() {
        out.push_str("  every listed tool is allowed as pinned\n");
        return out;
    }
    let mut clip = output::Clip::default();
    let mut t = output::table();
    t.set_header(["tool", "change", "why", "findings", "fields"]);
    for tool in &r.tools {
        let change = match tool.change {
            ChangeKind::Added => "added",
            ChangeKind::Changed => "changed",
            ChangeKind::Renamed => "renamed",
            ChangeKind::Removed => "removed",
            ChangeKind::Withheld => "withheld",
        };
        let mut fields = Vec::new();
        if let Some(f) = &tool.from {
            fields.push(format!("from {}", visible(f)));
        }
        for f in &tool.fields {
            let d = match &f.words {
                Some(w) => format!(
                    "{}: {}",
                    f.pointer,
                    visible(&vouch::json::diff::render_words(w))
                ),
                None => format!(
                    "{}: {} -> {}",
                    f.pointer,
                    json_text(&f.before),
                    json_text(&f.after)
                ),
            };
            fields.push(format!("{d} ({})", f.reason));
        }
        let findings = tool
            .findings
            .iter()
            .map(|f| {
                format!(
                    "{} {} {}: {}",
                    f.rule,
                    f.severity.as_str(),
                    f.pointer,
                    visible(&f.excerpt)
                )
            })
            .collect::<Vec<_>>()
            .join("\n");
        t.add_row([
            Cell::new(clip.cell(&visible(&tool.name))),
            Cell::new(change).fg(Color::Magenta),
            Cell::new(tool.reason.map_or("-", |r| r.as_str())),
            Cell::new(clip.cell(&findings)),
            Cell::new(clip.cell(&fields.join("\n"))),
        ]);
    }
    out.push_str(&format!("{t}\n"));
    out.extend(clip.note());
    out.push_str("\nFull definitions (old = pinned, new = listed):\n");
    for tool in &r.tools {
        for (label, v) in [("old", &tool.before), ("new", &tool.after)] {
            let text = match v {
                Some(v) => serde_json::to_string_pretty(v).unwrap_or_default(),
                None => "(none)".into(),
            };
            out.push_str(&format!(
                "--- {} {label}\n{}\n",
                visible(&tool.name),
                visible(&text)
            ));
        }
    }
    out
}

fn change(a: ChangeArgs, action: Action) -> ExitCode {
    let r = (|| -> vouch::Result<u64> {
        if !(std::io::stdin().is_terminal() && std::io::stdout().is_terminal()) {
            return Err(VetError::NoTerminal {
                action: action.as_str(),
            }
            .into());
        }
        let key = keys::read_signer_key(&a.key)?;
        let trusted = vouch::chain::TrustedKeys::new([key.verifier()])
            .map_err(vouch::Error::ConflictingKeys)?;
        let state = pins::load(&a.log, &trusted, &a.id)?;
        let body = review::plan(&state, action, &a.tools, a.reason.as_deref())?;
        let rev = review::review(&state);
        let expected = format!("{} {}", action.as_str(), a.id);
        let mut out = std::io::stdout().lock();
        let _ = write!(
            out,
            "{}\n{} {} ({}).\nType \"{expected}\" to confirm, anything else aborts: ",
            render_review(&rev),
            match action {
                Action::Approve => "This pins",
                Action::Revoke => "This revokes",
            },
            if a.tools.is_empty() {
                "the whole server as shown above".to_owned()
            } else {
                format!("only {}", a.tools.join(", "))
            },
            visible(&a.id),
        );
        let _ = out.flush();
        drop(out);
        let mut line = String::new();
        std::io::stdin()
            .lock()
            .read_line(&mut line)
            .map_err(|e| vouch::Error::io("stdin", e))?;
        if line.trim_end_matches(['\n', '\r']) != expected {
            return Err(VetError::NotConfirmed { expected }.into());
        }
        review::commit(&a.log, &key, &body)
    })();
    match r {
        Ok(seq) => {
            output::print_stdout(&format!(
                "{}d {}: pin record {seq} written and covered by a checkpoint\n",
                action.as_str(),
                a.id
            ));
            ExitCode::from(EXIT_VERIFIED)
        }
        Err(e) => error::report(&e, output::Format::Table),
    }
}
