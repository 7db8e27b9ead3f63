//! CLI for `vouch drift`: snapshot, check, accept, history, export, import.

use crate::error;
use crate::output::{self, EXIT_ERROR, EXIT_REJECTED, EXIT_VERIFIED};
use comfy_table::{Cell, Color, Table};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use vouch::Result;
use vouch::chain::keys;
use vouch::drift::change::{Change, ChangeKind};
use vouch::drift::record::CheckResult;
use vouch::drift::run::{self, DriftOptions};

pub const RULES_HELP: &str = "\
TARGET is a directory, a configuration file (.json, .yaml, .yml, .toml) or an MCP server (mcp:COMMAND, or mcp:CONFIG.json#NAME for a server entry of a Claude Desktop / Cursor / VS Code config). A target is named in the chain by its canonical absolute path (mcp: targets by their command) unless --name is given.

Rules file (directory targets, TOML; stored in the snapshot, so a check uses the baseline's rules):
  include = [\"etc/**\", \"bin/*\"]     # default: everything
  exclude = [\"cache\", \"**/*.tmp\"]   # an excluded directory is not descended into
  attributes = [\"mtime\", \"inode\"]   # optional extra attributes (default: none)
  growing = [\"log/*.log\"]           # may only grow; the old content must stay a prefix
  rotate = [\"log/app.log*\"]         # a rotated file is one rename, not removed + added
  [[ignore]]                        # attributes not compared for some paths
  paths = [\"tmp/**\"]
  attributes = [\"mode\", \"uid\", \"gid\"]
Globs are relative to TARGET: `*` and `?` stay within a path component, `**` crosses them. Attributes: type, size, mode, uid, gid, link, sha256, mtime, inode. Unknown keys are errors.";

const CHECK_HELP: &str = "Exit codes: 0 no drift; 1 drift, or the log or a snapshot does not verify (checked before any comparison); 2 an error (target missing, files unreadable without drift, bad rules). With --aide-exit-codes: AIDE's bitmask 1 added + 2 removed + 4 changed; 18 an error; 24 the evidence was rejected.";

/// `vouch drift ...`
#[derive(clap::Args)]
#[command(after_help = RULES_HELP)]
pub struct DriftCmd {
    #[command(subcommand)]
    sub: DriftSub,
}

#[derive(clap::Subcommand)]
enum DriftSub {
    /// Record a snapshot of TARGET; it becomes the baseline if there is none.
    #[command(after_help = RULES_HELP)]
    Snapshot(SnapshotArgs),
    /// Compare TARGET with the accepted baseline in a verified chain.
    #[command(after_help = CHECK_HELP)]
    Check(CheckArgs),
    /// Accept all or some current differences as the new baseline.
    Accept(AcceptArgs),
    /// Snapshots, checks and acceptances recorded in a verified chain.
    History(HistoryArgs),
    /// Write a directory target's accepted baseline as a BSD mtree spec.
    Export(ExportArgs),
    /// Make a BSD mtree spec a directory target's baseline.
    Import(ImportArgs),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum SpecFormat {
    /// BSD mtree (checked by `mtree -f SPEC -p DIR`).
    Mtree,
}

#[derive(clap::Args)]
#[command(
    after_help = "The spec lists type, mode, uid, gid, size, link and sha256digest per entry (time when the snapshot has mtime); check it with `mtree -f SPEC -p TARGET` (exit 0 match, 2 mismatch)."
)]
struct ExportArgs {
    /// The directory target (its name in the chain, or the directory).
    target: String,
    #[arg(long, value_name = "LOG")]
    log: PathBuf,
    /// Trusted public key file or keyset (repeatable).
    #[arg(long = "pub", value_name = "KEY.pub", required = true)]
    pubkeys: Vec<PathBuf>,
    /// The target's name in the chain, if not derived from TARGET.
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
    /// The spec's file format.
    #[arg(
        long = "spec-format",
        alias = "format",
        value_enum,
        value_name = "FORMAT"
    )]
    format: SpecFormat,
    /// Write the spec here (default: stdout); an existing file is not replaced.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

#[derive(clap::Args)]
#[command(
    after_help = "Every entry needs type, mode, uid and gid (directly or by /set); files need size and sha256 (sha256digest); links need link. Over an existing baseline, --reason is required and the import is recorded as an acceptance."
)]
struct ImportArgs {
    #[command(flatten)]
    common: Common,
    /// The log's signing key.
    #[arg(long, value_name = "KEY")]
    key: PathBuf,
    /// The spec to import.
    #[arg(long, value_name = "SPEC")]
    from: PathBuf,
    /// The spec's file format.
    #[arg(
        long = "spec-format",
        alias = "format",
        value_enum,
        value_name = "FORMAT"
    )]
    format: SpecFormat,
    /// Why (required over an existing baseline).
    #[arg(long, value_name = "TEXT")]
    reason: Option<String>,
}

#[derive(clap::Args)]
struct Common {
    /// A directory, a configuration file, or mcp:COMMAND.
    target: String,
    /// The chain log holding the baseline.
    #[arg(long, value_name = "LOG")]
    log: PathBuf,
    /// The target's name in the chain (default: its canonical path or command).
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
    /// Rules file (TOML; see `vouch drift --help`).
    #[arg(long, value_name = "FILE")]
    rules: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Default)]
enum Fmt {
    #[default]
    Table,
    Json,
    Ndjson,
}

impl Fmt {
    fn out(self) -> output::Format {
        match self {
            Fmt::Table => output::Format::Table,
            _ => output::Format::Json,
        }
    }
}

#[derive(clap::Args)]
struct SnapshotArgs {
    #[command(flatten)]
    common: Common,
    /// The log's signing key.
    #[arg(long, value_name = "KEY")]
    key: PathBuf,
    #[arg(long, value_enum, default_value_t)]
    format: Fmt,
}

#[derive(clap::Args)]
struct CheckArgs {
    #[command(flatten)]
    common: Common,
    /// Trusted public key file or keyset (repeatable).
    #[arg(long = "pub", value_name = "KEY.pub", required = true)]
    pubkeys: Vec<PathBuf>,
    /// Append this run's snapshot digest and result to the log (needs --key).
    #[arg(long, requires = "key")]
    record: bool,
    /// The log's signing key, for --record.
    #[arg(long, value_name = "KEY")]
    key: Option<PathBuf>,
    /// Exit with AIDE's bitmask (1 added, 2 removed, 4 changed).
    #[arg(long)]
    aide_exit_codes: bool,
    #[arg(long, value_enum, default_value_t)]
    format: Fmt,
}

#[derive(clap::Args)]
struct AcceptArgs {
    #[command(flatten)]
    common: Common,
    /// The log's signing key.
    #[arg(long, value_name = "KEY")]
    key: PathBuf,
    /// Accept only this path (and what is below it), key path or tool (repeatable).
    #[arg(long, value_name = "PATH_OR_TOOL")]
    only: Vec<String>,
    /// Why the differences are accepted (recorded in the chain).
    #[arg(long, value_name = "TEXT", required = true)]
    reason: String,
    #[arg(long, value_enum, default_value_t)]
    format: Fmt,
    #[command(flatten)]
    quiet: output::Quiet,
}

#[derive(clap::Args)]
struct HistoryArgs {
    /// The chain log.
    #[arg(long, value_name = "LOG")]
    log: PathBuf,
    /// Trusted public key file or keyset (repeatable).
    #[arg(long = "pub", value_name = "KEY.pub", required = true)]
    pubkeys: Vec<PathBuf>,
    /// Only this target (its name as recorded).
    #[arg(long, value_name = "NAME")]
    target: Option<String>,
    #[arg(long, value_enum, default_value_t)]
    format: Fmt,
}

pub fn run(cmd: DriftCmd) -> ExitCode {
    match cmd.sub {
        DriftSub::Snapshot(a) => snapshot(a),
        DriftSub::Check(a) => check(a),
        DriftSub::Accept(a) => accept(a),
        DriftSub::History(a) => history(a),
        DriftSub::Export(a) => export(a),
        DriftSub::Import(a) => import(a),
    }
}

/// Progress on stderr, only when it is a terminal and only for a run that
/// lasts: the bar stays hidden for its first second.
struct Progress {
    bar: Option<indicatif::ProgressBar>,
    start: std::time::Instant,
    shown: std::sync::atomic::AtomicBool,
}

impl Progress {
    fn new() -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let pb = indicatif::ProgressBar::with_draw_target(
                None,
                indicatif::ProgressDrawTarget::hidden(),
            );
            if let Ok(style) = indicatif::ProgressStyle::with_template(
                "{spinner} hashed {decimal_bytes} ({decimal_bytes_per_sec}) {elapsed}",
            ) {
                pb.set_style(style);
            }
            pb
        });
        Progress {
            bar,
            start: std::time::Instant::now(),
            shown: std::sync::atomic::AtomicBool::new(false),
        }
    }
    fn tick(&self, n: u64) {
        let Some(pb) = &self.bar else { return };
        pb.inc(n);
        if self.start.elapsed() >= std::time::Duration::from_secs(1)
            && !self.shown.swap(true, std::sync::atomic::Ordering::Relaxed)
        {
            pb.set_draw_target(indicatif::ProgressDrawTarget::stderr_with_hz(4));
        }
    }
    fn done(&self) {
        if let Some(pb) = &self.bar {
            pb.finish_and_clear();
        }
    }
}

fn with_opts<T>(c: &Common, f: impl FnOnce(&DriftOptions<'_>) -> Result<T>) -> Result<T> {
    let progress = Progress::new();
    let tick = |n: u64| progress.tick(n);
    let opts = DriftOptions {
        log: &c.log,
        target: &c.target,
        name: c.name.as_deref(),
        rules: c.rules.as_deref(),
        progress: progress
            .bar
            .as_ref()
            .map(|_| &tick as &(dyn Fn(u64) + Sync)),
    };
    let r = f(&opts);
    progress.done();
    r
}

fn snapshot(a: SnapshotArgs) -> ExitCode {
    let r = keys::read_signer_key(&a.key)
        .and_then(|key| with_opts(&a.common, |o| run::snapshot_target(o, &key)));
    let rep = match r {
        Ok(r) => r,
        Err(e) => return error::report(&e, a.format.out()),
    };
    match a.format {
        Fmt::Table => {
            let role = if rep.baseline {
                "it is the baseline"
            } else {
                "baseline unchanged (use `vouch drift accept` to change it)"
            };
            output::print_stdout(&format!(
                "snapshot of {} ({}): {}, {}; record {} covered by checkpoint {}; {role}\n",
                esc(&rep.target),
                rep.kind.as_str(),
                output::count(rep.count as u64, "item"),
                rep.snapshot,
                rep.record.seq,
                rep.record.checkpoint_size
            ));
            warn_unchecked(&rep.unchecked);
        }
        _ => output::print_json(&rep),
    }
    ExitCode::from(if rep.unchecked.is_empty() {
        EXIT_VERIFIED
    } else {
        EXIT_ERROR
    })
}

fn warn_unchecked(u: &[run::Unchecked]) {
    for p in u {
        eprintln!(
            "vouch: warning: {}: not examined: {}",
            esc(&p.path),
            esc(&p.message)
        );
    }
}

fn aide_bits(rep: &run::CheckReport) -> u8 {
    let c = rep.counts;
    let mut bits = 0;
    if c.added > 0 {
        bits |= 1;
    }
    if c.removed > 0 {
        bits |= 2;
    }
    if c.changed > 0 || c.renamed > 0 {
        bits |= 4;
    }
    bits
}

fn check(a: CheckArgs) -> ExitCode {
    let r = keys::load_trusted_keys(&a.pubkeys).and_then(|trusted| {
        let signer = match &a.key {
            Some(k) if a.record => Some(keys::read_signer_key(k)?),
            _ => None,
        };
        with_opts(&a.common, |o| run::check(o, &trusted, signer.as_ref()))
    });
    let rep = match r {
        Ok(r) => r,
        Err(e) => {
            let code = error::report(&e, a.format.out());
            if a.aide_exit_codes {
                return ExitCode::from(if e.is_rejection() { 24 } else { 18 });
            }
            return code;
        }
    };
    match a.format {
        Fmt::Table => render_check(&rep),
        Fmt::Json => output::print_json(&rep),
        Fmt::Ndjson => {
            for c in &rep.changes {
                output::print_json_line(c);
            }
            for u in &rep.unchecked {
                output::print_json_line(u);
            }
            output::print_json_line(&run::CheckSummary::of(&rep));
        }
    }
    let code = match rep.result {
        CheckResult::Drift => EXIT_REJECTED,
        CheckResult::Incomplete => EXIT_ERROR,
        CheckResult::NoDrift => EXIT_VERIFIED,
    };
    if a.aide_exit_codes {
        return ExitCode::from(match rep.result {
            CheckResult::Drift => aide_bits(&rep),
            CheckResult::Incomplete => 18,
            CheckResult::NoDrift => 0,
        });
    }
    ExitCode::from(code)
}

fn summary_line(rep: &run::CheckReport) -> String {
    let c = rep.counts;
    let what = match rep.result {
        CheckResult::NoDrift => "no drift".to_owned(),
        CheckResult::Drift => format!(
            "DRIFT: {} added, {} removed, {} changed, {} renamed",
            c.added, c.removed, c.changed, c.renamed
        ),
        CheckResult::Incomplete => {
            "no drift found, but some paths could not be examined".to_owned()
        }
    };
    let mut s = format!(
        "{}: {what} ({} now; baseline record {} of {}{})",
        esc(&rep.target),
        output::count(rep.items, "item"),
        rep.baseline.seq,
        rep.baseline.ts,
        rep.baseline
            .reason
            .as_deref()
            .map(|r| format!(", accepted: {}", esc(r)))
            .unwrap_or_default()
    );
    if c.expected > 0 {
        s.push_str(&format!("; {} expected (grown/rotated)", c.expected));
    }
    if !rep.unchecked.is_empty() {
        s.push_str(&format!("; {} not examined", rep.unchecked.len()));
    }
    if !rep.chain.uncovered_drift_records.is_empty() {
        s.push_str(&format!(
            "; {} drift record(s) after the last trusted checkpoint ignored",
            rep.chain.uncovered_drift_records.len()
        ));
    }
    if let Some(w) = &rep.record {
        s.push_str(&format!("; recorded as record {}", w.seq));
    }
    s
}

/// Text from the target (paths, names, descriptions) as a terminal may
/// show it: `\\`, control characters and non-UTF-8 bytes escaped (§16.1),
/// so a file name cannot move the cursor or fake a line.
fn esc(s: &str) -> String {
    vouch::files::path::display(s.as_bytes())
}

/// A change's item: the raw bytes when the path is not UTF-8.
fn item_text(c: &Change) -> String {
    use base64::Engine;
    match c
        .item_b64
        .as_deref()
        .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok())
    {
        Some(raw) => vouch::files::path::display(&raw),
        None => esc(&c.item),
    }
}

/// The JSON type's name: `null`, `boolean`, `number`, `string`, `array`
/// or `object`.
fn json_type(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "boolean",
        serde_json::Value::Number(_) => "number",
        serde_json::Value::String(_) => "string",
        serde_json::Value::Array(_) => "array",
        serde_json::Value::Object(_) => "object",
    }
}

fn value_text(v: &Option<serde_json::Value>) -> String {
    esc(&value_raw(v))
}

fn value_raw(v: &Option<serde_json::Value>) -> String {
    match v {
        None => "-".into(),
        // A SHA-256 reads as its first 16 digits in a table (JSON has all).
        Some(serde_json::Value::String(s))
            if s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit()) =>
        {
            format!("{}…", &s[..16])
        }
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
    }
}

fn change_table(changes: &[Change], clip: &mut output::Clip) -> Table {
    let mut t = output::table();
    t.set_header(["item", "change", "details"]);
    for c in changes {
        let color = match (c.expected, c.change) {
            (true, _) => Color::DarkGrey,
            (_, ChangeKind::Added) => Color::Yellow,
            (_, ChangeKind::Removed) => Color::Red,
            _ => Color::Magenta,
        };
        let mut details: Vec<String> = Vec::new();
        if let Some(f) = &c.from {
            details.push(format!("from {}", esc(f)));
        }
        if let Some(s) = &c.severity {
            details.push(format!("severity {s}"));
        }
        for f in &c.fields {
            let mut d = match (&f.words, f.before.is_some() || f.after.is_some()) {
                (Some(w), _) => format!("{}: {w}", f.field),
                (None, true) => match (&f.before, &f.after) {
                    // A value that changed type (1 -> "1") is shown as
                    // JSON, with the types: as text the two read the same.
                    (Some(b), Some(a)) if json_type(b) != json_type(a) => format!(
                        "{}: {} → {} ({} → {})",
                        f.field,
                        esc(&b.to_string()),
                        esc(&a.to_string()),
                        json_type(b),
                        json_type(a)
                    ),
                    _ => format!(
                        "{}: {} → {}",
                        f.field,
                        value_text(&f.before),
                        value_text(&f.after)
                    ),
                },
                (None, false) => f.field.clone(),
            };
            if let Some(r) = &f.reason {
                d.push_str(&format!(" ({r})"));
            }
            details.push(d);
        }
        let kind = if c.expected {
            format!("{} (expected)", c.change.as_str())
        } else {
            c.change.as_str().to_owned()
        };
        t.add_row([
            Cell::new(clip.cell(&item_text(c))),
            Cell::new(kind).fg(color),
            Cell::new(clip.cell(&details.join("\n"))),
        ]);
    }
    t
}

fn render_check(rep: &run::CheckReport) {
    let mut text = summary_line(rep);
    text.push('\n');
    if !rep.changes.is_empty() {
        let mut clip = output::Clip::default();
        text.push_str(&change_table(&rep.changes, &mut clip).to_string());
        text.push('\n');
        text.extend(clip.note());
    }
    output::print_stdout(&text);
    warn_unchecked(&rep.unchecked);
}

fn accept(a: AcceptArgs) -> ExitCode {
    let r = keys::read_signer_key(&a.key)
        .and_then(|key| with_opts(&a.common, |o| run::accept(o, &key, &a.only, &a.reason)));
    let rep = match r {
        Ok(r) => r,
        Err(e) => return error::report(&e, a.format.out()),
    };
    match a.format {
        Fmt::Table => {
            let mut s = match &rep.record {
                None => format!(
                    "{}: no differences to accept; nothing recorded\n",
                    esc(&rep.target)
                ),
                Some(w) => format!(
                    "{}: accepted {} as the new baseline {} ({}), record {}; {} remaining\n",
                    esc(&rep.target),
                    output::count(rep.accepted.len() as u64, "difference"),
                    rep.snapshot,
                    output::count(rep.count as u64, "item"),
                    w.seq,
                    rep.remaining
                ),
            };
            if !rep.accepted.is_empty() && !a.quiet.quiet {
                let mut clip = output::Clip::default();
                s.push_str(&change_table(&rep.accepted, &mut clip).to_string());
                s.push('\n');
                s.extend(clip.note());
            }
            output::print_stdout(&s);
            warn_unchecked(&rep.unchecked);
        }
        _ => output::print_json(&rep),
    }
    ExitCode::from(EXIT_VERIFIED)
}

fn history(a: HistoryArgs) -> ExitCode {
    let r = keys::load_trusted_keys(&a.pubkeys)
        .and_then(|k| run::history(&a.log, &k, a.target.as_deref()));
    let rep = match r {
        Ok(r) => r,
        Err(e) => return error::report(&e, a.format.out()),
    };
    match a.format {
        Fmt::Table if rep.rows.is_empty() => {
            output::print_stdout(&format!(
                "{}: no drift records (no target was snapshotted in this log)\n",
                a.log.display()
            ));
        }
        Fmt::Table => {
            let mut clip = output::Clip::default();
            let mut t = output::table();
            t.set_header(["seq", "time", "record", "target", "result", "details"]);
            for r in &rep.rows {
                let result = match (r.record, r.baseline, r.result) {
                    ("drift_snapshot", Some(true), _) => "baseline".to_owned(),
                    ("drift_snapshot", _, _) => "snapshot".to_owned(),
                    ("drift_accept", _, _) => "accepted".to_owned(),
                    (_, _, Some(res)) => res.as_str().to_owned(),
                    _ => "-".to_owned(),
                };
                let mut d = Vec::new();
                if let Some(c) = r.counts {
                    d.push(format!(
                        "+{} -{} ~{} ↻{}",
                        c.added, c.removed, c.changed, c.renamed
                    ));
                }
                if let Some(reason) = &r.reason {
                    d.push(format!("reason: {}", esc(reason)));
                }
                if let Some(only) = &r.only {
                    d.push(format!("only: {}", esc(&only.join(", "))));
                }
                d.push(format!(
                    "{}, {}",
                    output::count(r.count, "item"),
                    short(&r.snapshot)
                ));
                t.add_row([
                    r.seq.to_string(),
                    r.ts.clone(),
                    r.record.to_owned(),
                    clip.cell(&esc(&r.target)),
                    result,
                    clip.cell(&d.join("\n")),
                ]);
            }
            let mut s = format!("{t}\n");
            s.extend(clip.note());
            if !rep.chain.uncovered_drift_records.is_empty() {
                s.push_str(&format!(
                    "{} after the last trusted checkpoint not shown: {}\n",
                    output::count(
                        rep.chain.uncovered_drift_records.len() as u64,
                        "drift record"
                    ),
                    rep.chain
                        .uncovered_drift_records
                        .iter()
                        .map(u64::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            output::print_stdout(&s);
        }
        _ => output::print_json(&rep),
    }

    ExitCode::from(EXIT_VERIFIED)
}

fn short(d: &str) -> String {
    d.get(..19)
        .map_or_else(|| d.to_owned(), |s| format!("{s}…"))
}

fn export(a: ExportArgs) -> ExitCode {
    let SpecFormat::Mtree = a.format;
    let r = keys::load_trusted_keys(&a.pubkeys)
        .and_then(|k| run::export_mtree(&a.log, &k, &a.target, a.name.as_deref()));
    let spec = match r {
        Ok(s) => s,
        Err(e) => return error::report(&e, output::Format::Table),
    };
    match &a.out {
        Some(p) => {
            if let Err(e) = keys::write_new_file(p, &spec, 0o644) {
                return error::report(&e, output::Format::Table);
            }
        }
        None => output::write_stdout(|w| w.write_all(&spec)),
    }
    ExitCode::from(EXIT_VERIFIED)
}

fn import(a: ImportArgs) -> ExitCode {
    let SpecFormat::Mtree = a.format;
    let r = keys::read_signer_key(&a.key).and_then(|key| {
        let spec = vouch::fs::read_bounded(&a.from, 1 << 32)?;
        with_opts(&a.common, |o| {
            run::import_mtree(o, &key, &spec, a.reason.as_deref())
        })
    });
    match r {
        Ok(rep) => {
            output::print_stdout(&format!(
                "{}: imported {} as the baseline {} (record {}{})\n",
                esc(&rep.target),
                output::count(rep.count, "entry"),
                rep.snapshot,
                rep.record.seq,
                rep.previous
                    .as_ref()
                    .map(|p| format!(", replacing record {}", p.seq))
                    .unwrap_or_default()
            ));
            ExitCode::from(EXIT_VERIFIED)
        }
        Err(e) => error::report(&e, output::Format::Table),
    }
}
