//! CLI for the chain commands: keygen, append, checkpoint, rotate, repair,
//! verify, prove, verify-proof. Each parses, calls one library function,
//! renders and returns an exit code.

use crate::error;
use crate::output::{self, EXIT_REJECTED, EXIT_VERIFIED, Format};
use comfy_table::{Cell, Color, ContentArrangement};
use std::path::PathBuf;
use std::process::ExitCode;
use vouch::chain::proof::{ConsistencyDetails, InclusionDetails, ProofReport};
use vouch::chain::report::{
    FleetSummary, LogRow, StateOutcome, VERIFY_FORMAT, VerifyDocument, VerifySummaryLine,
};
use vouch::chain::shard::{self, ShardError, ShardSpec, verify_shard};
use vouch::chain::state::{Recheck, VerifyState};
use vouch::chain::{self, LogReport, LogStatus, RepairOutcome, VerifyMode, keys, verify, writer};
use vouch::{Error, Result};

#[derive(clap::Args)]
pub struct KeygenArgs {
    /// The log origin the key signs for (also the key's name), e.g. example.com/audit.
    #[arg(long)]
    origin: String,
    /// Where to write the private key (mode 0600); the public key goes to OUT.pub.
    #[arg(long)]
    out: PathBuf,
    #[command(flatten)]
    quiet: output::Quiet,
}

#[derive(clap::Args)]
pub struct AppendArgs {
    /// The log file (created if missing).
    log: PathBuf,
    /// The private key; its name is the log's origin.
    #[arg(long)]
    key: PathBuf,
    /// The record kind. Kinds vouch gives meaning to (checkpoint, key_rotation,
    /// anchor, stamp, drift_*, tool_*) are written only by their own commands.
    #[arg(long, default_value = "event")]
    kind: String,
    /// The record body as JSON. Without it, one record per line of stdin.
    body: Option<String>,
    /// Output format for the acknowledgements.
    #[arg(long, value_enum, default_value_t)]
    format: Format,
    #[command(flatten)]
    quiet: output::Quiet,
}

#[derive(clap::Args)]
pub struct CheckpointArgs {
    log: PathBuf,
    #[arg(long)]
    key: PathBuf,
    /// Also write the signed checkpoint note to FILE (for auditors to keep).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Sign the current tree without appending a checkpoint record.
    #[arg(long)]
    detached: bool,
}

#[derive(clap::Args)]
pub struct RotateArgs {
    log: PathBuf,
    /// The current private key.
    #[arg(long)]
    key: PathBuf,
    /// The new private key (same name).
    #[arg(long)]
    new_key: PathBuf,
}

#[derive(clap::Args)]
pub struct RepairArgs {
    log: PathBuf,
}

#[derive(clap::Args)]
#[command(
    after_help = "Exit codes: 0 every log is valid, or partial (records after its last checkpoint), and authenticated by a key given with --pub for its origin; 1 a log is invalid, or unauthenticated (no key given for its origin: anyone could have written and signed it), or with --strict partial; 2 a log or an input could not be read. Without --pub every log is unauthenticated (exit 1) unless --chain-only says that the hash chain and tree are all you want checked. A shard (--shard) exits for its own logs; --merge exits with the code one run over the whole fleet gives, or 2 when the reports are not one complete, consistent set of shards (each index once, the same N, options, keys and listing)."
)]
pub struct VerifyArgs {
    /// Log files or directories (every *.jsonl below them), or
    /// s3://BUCKET/PREFIX (every *.jsonl object under the prefix; one
    /// object's key names that object).
    #[arg(required_unless_present = "merge")]
    paths: Vec<PathBuf>,
    #[command(flatten)]
    s3: crate::anchor::S3Args,
    /// Verify only shard I of N (0-based) of the fleet: a log's segments
    /// stay together, shards balanced by bytes. Merge the shards'
    /// --format json reports with --merge. Not with --state.
    #[arg(long, value_name = "I/N", conflicts_with = "state")]
    shard: Option<ShardSpec>,
    /// Merge the --format json reports of all N shards of one run into the
    /// fleet's report, with the exit code a single run would give; refuses
    /// (exit 2) a missing or repeated shard, and shards run with other
    /// options, keys or listings.
    #[arg(long, value_name = "REPORT", num_args = 1.., conflicts_with_all = ["paths", "pubkeys", "chain_only", "checkpoint", "strict", "state", "reset_pin", "shard", "threads"])]
    merge: Vec<PathBuf>,
    /// Trusted public key file or keyset (repeatable). A log of an origin
    /// no key is given for is unauthenticated (exit 1).
    #[arg(long = "pub", value_name = "KEY.pub")]
    pubkeys: Vec<PathBuf>,
    /// Check the hash chain and tree only; no key is trusted, so nothing
    /// is authenticated: a log that is internally consistent exits 0 as
    /// unauthenticated (the report says chain_only). Not with --pub,
    /// --checkpoint or --strict.
    #[arg(long, conflicts_with_all = ["pubkeys", "checkpoint", "strict"])]
    chain_only: bool,
    /// A checkpoint kept earlier: the log must contain and extend it (repeatable).
    #[arg(long)]
    checkpoint: Vec<PathBuf>,
    /// table for people, json (one document), ndjson (one line per log as it finishes, then a summary line).
    #[arg(long, value_enum, default_value_t)]
    format: VerifyFormat,
    /// Also fail (exit 1) on partial logs (records after the last
    /// checkpoint, or a torn final line).
    #[arg(long)]
    strict: bool,
    /// Incremental audit: remember verified logs in FILE and verify only what is new next time.
    #[arg(long, value_name = "FILE")]
    state: Option<PathBuf>,
    /// With --state: how much of the already-verified part to re-check.
    #[arg(long, value_enum, default_value_t = RecheckArg::Rolling)]
    recheck: RecheckArg,
    /// Worker threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// With --state: forget what was remembered about the log ORIGIN, so it
    /// is verified afresh and pinned again (after the auditor has looked
    /// into why it was rejected). Repeatable.
    #[arg(long, value_name = "ORIGIN")]
    reset_pin: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Default)]
pub enum VerifyFormat {
    #[default]
    Table,
    Json,
    Ndjson,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum RecheckArg {
    /// The last verified range and a rolling window as large as the new data.
    Rolling,
    /// Everything verified before.
    All,
}

#[derive(clap::Args)]
pub struct ProveArgs {
    log: PathBuf,
    /// Inclusion proof (C2SP tlog-proof) for this record.
    #[arg(
        long,
        conflicts_with = "consistency_from",
        required_unless_present = "consistency_from"
    )]
    seq: Option<u64>,
    /// Consistency proof from this tree size to the log's latest checkpoint.
    #[arg(long, value_name = "OLD_SIZE")]
    consistency_from: Option<u64>,
    /// Write the proof here instead of stdout.
    #[arg(long)]
    out: Option<PathBuf>,
}

#[derive(clap::Args)]
pub struct VerifyConsistencyArgs {
    /// The consistency proof file (`vouch prove --consistency-from`).
    proof: PathBuf,
    /// The older signed checkpoint, as kept by the auditor.
    #[arg(long)]
    old: PathBuf,
    #[arg(long = "pub", value_name = "KEY.pub", required = true)]
    pubkeys: Vec<PathBuf>,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

pub fn verify_consistency(args: VerifyConsistencyArgs) -> ExitCode {
    let format = args.format;
    error::or_report(
        (|| {
            let trusted = keys::load_trusted_keys(&args.pubkeys)?;
            let proof = vouch::fs::read_bounded(&args.proof, 2 << 20)?;
            let old = vouch::fs::read_bounded(&args.old, 1 << 20)?;
            let result = chain::proof::verify_consistency_proof(&proof, &old, &trusted);
            let code = if result.is_ok() {
                EXIT_VERIFIED
            } else {
                EXIT_REJECTED
            };
            match (format, &result) {
                (Format::Json, _) => {
                    output::print_json(&ProofReport::<ConsistencyDetails>::from(&result))
                }
                (Format::Table, Ok(v)) => output::print_stdout(&format!(
                    "verified: {} at size {} extends the checkpoint at size {}\n\
                     not checked: key rotations after the newer checkpoint (only the keys given are trusted)",
                    v.old().origin,
                    v.new_checkpoint().size,
                    v.old().size
                )),
                (Format::Table, Err(e)) => eprintln!("vouch: rejected ({}): {e}", e.code()),
            }
            Ok(ExitCode::from(code))
        })(),
        format,
    )
}

#[derive(clap::Args)]
pub struct VerifyProofArgs {
    /// The tlog-proof file.
    proof: PathBuf,
    /// A file holding the record's line.
    #[arg(long)]
    record: PathBuf,
    #[arg(long = "pub", value_name = "KEY.pub", required = true)]
    pubkeys: Vec<PathBuf>,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

pub fn keygen(args: KeygenArgs) -> ExitCode {
    error::or_report(
        (|| {
            // The key files are the result: written first, then the public
            // key is printed. If stdout then fails (exit 2), stderr says the
            // files were written, so nobody runs keygen again thinking
            // nothing happened.
            let (pub_path, key) = keys::write_new_keypair(&args.origin, &args.out)?;
            if !args.quiet.quiet {
                eprintln!(
                    "wrote {} (private, mode 0600) and {}",
                    args.out.display(),
                    pub_path.display()
                );
            }
            output::note_if_stdout_fails(format!(
                "the key files {} and {} were written; only the public key on stdout was lost (it is in {})",
                args.out.display(),
                pub_path.display(),
                pub_path.display()
            ));
            output::print_stdout(&key.to_text());
            Ok(ExitCode::from(EXIT_VERIFIED))
        })(),
        Format::Table,
    )
}

pub fn append(args: AppendArgs) -> ExitCode {
    let format = args.format;
    let quiet = args.quiet.quiet;
    error::or_report(
        (|| {
            if chain::record::is_reserved_kind(&args.kind) {
                return Err(Error::ReservedKind {
                    kind: args.kind.clone(),
                });
            }
            let key = keys::read_signer_key(&args.key)?;
            if let Some(text) = &args.body {
                let body =
                    chain::record::parse_body(text.as_bytes()).map_err(|problem| Error::Body {
                        at: chain::BodySource::Argument,
                        problem,
                    })?;
                let done = writer::append(&args.log, &key, &[(&args.kind, &body)])?;
                if !quiet {
                    ack(&done, format);
                }
                return Ok(ExitCode::from(EXIT_VERIFIED));
            }
            let mut input = std::io::BufReader::with_capacity(4 << 20, std::io::stdin().lock());
            chain::stream::append_lines(&args.log, &key, &args.kind, &mut input, &mut |done| {
                if !quiet {
                    ack(done, format);
                }
            })?;
            Ok(ExitCode::from(EXIT_VERIFIED))
        })(),
        format,
    )
}

/// One line per record appended: `appended seq N`, or (JSON lines) the
/// record's seq and leaf hash.
fn ack(done: &[writer::Appended], format: Format) {
    #[derive(serde::Serialize)]
    struct Ack {
        seq: u64,
        leaf: String,
    }
    for a in done {
        match format {
            Format::Json => output::print_json_line(&Ack {
                seq: a.seq,
                leaf: vouch::hex::encode(&a.leaf),
            }),
            Format::Table => output::print_stdout(&format!("appended seq {}\n", a.seq)),
        }
    }
}

pub fn checkpoint(args: CheckpointArgs) -> ExitCode {
    error::or_report(
        (|| {
            let key = keys::read_signer_key(&args.key)?;
            let signed = writer::checkpoint(&args.log, &key, !args.detached)?;
            if let Some(out) = &args.out {
                std::fs::write(out, signed.note.as_bytes()).map_err(|e| Error::io(out, e))?;
            }
            output::print_stdout(&signed.note);
            Ok(ExitCode::from(EXIT_VERIFIED))
        })(),
        Format::Table,
    )
}

pub fn rotate(args: RotateArgs) -> ExitCode {
    error::or_report(
        (|| {
            let old = keys::read_signer_key(&args.key)?;
            let new = keys::read_signer_key(&args.new_key)?;
            let signed = writer::rotate(&args.log, &old, &new)?;
            eprintln!(
                "rotated to {} at seq {}",
                new.verifier().to_text(),
                signed.record_seq.unwrap_or(0)
            );
            output::print_stdout(&signed.note);
            Ok(ExitCode::from(EXIT_VERIFIED))
        })(),
        Format::Table,
    )
}

pub fn repair(args: RepairArgs) -> ExitCode {
    error::or_report(
        (|| {
            match writer::repair(&args.log)? {
                RepairOutcome::NothingToDo { .. } => {
                    output::print_stdout(&format!(
                        "{}: ends with a complete record; nothing removed",
                        args.log.display()
                    ));
                }
                RepairOutcome::RemovedTornTail {
                    offset,
                    bytes,
                    removed,
                } => {
                    let shown = String::from_utf8_lossy(&removed);
                    let more = if bytes > removed.len() as u64 {
                        "…"
                    } else {
                        ""
                    };
                    output::print_stdout(&format!(
                        "{}: removed an incomplete final line of {bytes} bytes at offset {offset}: {shown:?}{more}",
                        args.log.display()
                    ));
                }
            }
            Ok(ExitCode::from(EXIT_VERIFIED))
        })(),
        Format::Table,
    )
}

pub fn verify(args: VerifyArgs) -> ExitCode {
    let format = match args.format {
        VerifyFormat::Table => Format::Table,
        VerifyFormat::Json | VerifyFormat::Ndjson => Format::Json,
    };
    if !args.merge.is_empty() {
        return error::or_report(merge(&args), format);
    }
    error::or_report(
        (|| {
            let trusted = keys::load_trusted_keys(&args.pubkeys)?;
            let checkpoints = args
                .checkpoint
                .iter()
                .map(|p| verify::load_auditor_checkpoint(p, &trusted))
                .collect::<Result<Vec<_>>>()?;
            let state = match &args.state {
                Some(_) if args.shard.is_some() => {
                    return Err(ShardError::WithState.into());
                }
                Some(p) => {
                    let mut state = VerifyState::load(p)?;
                    for origin in &args.reset_pin {
                        if state.logs.remove(origin).is_none() {
                            return Err(Error::NoSuchPin {
                                origin: origin.clone(),
                            });
                        }
                    }
                    Some(std::sync::Arc::new(state))
                }
                None if !args.reset_pin.is_empty() => {
                    return Err(Error::Usage("--reset-pin needs --state".into()));
                }
                None => None,
            };
            let found =
                verify::collect_inputs(&args.paths, &args.s3.connection().with_env_endpoint())?;
            let bar = progress_bar(&found.files, args.format);
            let mut opts = chain::VerifyOptions {
                trusted,
                checkpoints,
                save_state: args.state.is_some(),
                state,
                recheck: match args.recheck {
                    RecheckArg::Rolling => Recheck::Rolling,
                    RecheckArg::All => Recheck::All,
                },
                ..Default::default()
            };
            if let Some(bar) = &bar {
                let bar = bar.clone();
                opts.progress = Some(verify::Progress(std::sync::Arc::new(move |n| bar.inc(n))));
            }
            let mode = if args.chain_only {
                VerifyMode::ChainOnly
            } else {
                VerifyMode::Authenticated
            };
            let streaming = args.format == VerifyFormat::Ndjson;
            let on_log = |log: &LogReport| {
                if streaming {
                    output::print_json_line(log);
                }
            };
            let run = || match args.shard {
                Some(spec) => verify_shard(&found, spec, &opts, mode, args.strict, &on_log)
                    .map(|(report, info)| (report, Some(info))),
                None => Ok((verify::verify_found(&found, &opts, &on_log), None)),
            };
            // Reading objects waits on the network more than on the CPU:
            // more workers than cores keep requests in flight.
            let threads = args.threads.or_else(|| {
                found
                    .transfer()
                    .map(|_| std::thread::available_parallelism().map_or(4, |n| n.get()) * 8)
            });
            let (report, shard) = match threads {
                Some(n) => rayon::ThreadPoolBuilder::new()
                    .num_threads(n.max(1))
                    .build()
                    .map_err(|e| Error::Threads {
                        threads: n,
                        message: e.to_string(),
                    })?
                    .install(run),
                None => run(),
            }?;
            if let Some(bar) = bar {
                bar.finish_and_clear();
            }
            let mut code = report.exit_code(args.strict, mode);
            // A state that cannot be saved does not hide the verdict: the
            // report is printed, rejected evidence keeps exit 1.
            let state = args.state.as_ref().map(|p| match report.state.save(p) {
                Ok(()) => StateOutcome {
                    saved: true,
                    error: None,
                },
                Err(e) => {
                    eprintln!("vouch: the state was NOT saved: {e}");
                    if code == EXIT_VERIFIED {
                        code = output::EXIT_ERROR;
                    }
                    StateOutcome {
                        saved: false,
                        error: Some(e.to_string()),
                    }
                }
            });
            let transfer = found.transfer();
            match args.format {
                VerifyFormat::Json => output::print_json_compact(&VerifyDocument {
                    format: VERIFY_FORMAT,
                    mode,
                    authenticated: report.authenticated(mode),
                    logs: &report.logs,
                    summary: report.summary(),
                    state,
                    shard,
                    merged: None,
                    transfer,
                    exit_code: code,
                }),
                VerifyFormat::Ndjson => output::print_json_line(&VerifySummaryLine {
                    mode,
                    merged: None,
                    transfer,
                    authenticated: report.authenticated(mode),
                    summary: report.summary(),
                    state,
                    exit_code: code,
                }),
                VerifyFormat::Table => {
                    let rows: Vec<LogRow> = report.logs.iter().map(LogReport::row).collect();
                    let mut text = fleet_table(&rows, report.summary(), mode);
                    if let Some(s) = &shard {
                        text.push_str(&format!(
                            "\nshard {} of {} (0-based): its share of {} input(s); merge the shards' --format json reports with `vouch verify --merge`",
                            s.index, s.count, s.inputs
                        ));
                    }
                    if let Some(StateOutcome {
                        saved: false,
                        error,
                    }) = &state
                    {
                        text.push_str(&format!(
                            "\nstate NOT saved: {}",
                            error.as_deref().unwrap_or("")
                        ));
                    }
                    output::print_stdout(&text)
                }
            }
            Ok(ExitCode::from(code))
        })(),
        format,
    )
}

/// Largest shard report read by `--merge` (a fleet of about two million
/// logs).
const MAX_SHARD_REPORT: u64 = 1 << 30;

/// `verify --merge`: the fleet's report from its shards' reports.
fn merge(args: &VerifyArgs) -> Result<ExitCode> {
    let docs = args
        .merge
        .iter()
        .map(|p| {
            let bytes = vouch::fs::read_bounded(p, MAX_SHARD_REPORT)?;
            Ok((p.clone(), shard::parse_report(p, &bytes)?))
        })
        .collect::<Result<Vec<_>>>()?;
    let merged = shard::merge(docs)?;
    let (summary, code, mode) = (merged.summary(), merged.exit_code(), merged.mode);
    match args.format {
        VerifyFormat::Json => output::print_json_compact(&VerifyDocument {
            format: VERIFY_FORMAT,
            mode,
            authenticated: merged.authenticated(),
            logs: &merged.rows,
            summary,
            state: None,
            shard: None,
            merged: Some(merged.from.clone()),
            transfer: merged.transfer,
            exit_code: code,
        }),
        VerifyFormat::Ndjson => {
            for row in &merged.rows {
                output::print_json_line(row);
            }
            output::print_json_line(&VerifySummaryLine {
                mode,
                merged: Some(merged.from.clone()),
                transfer: merged.transfer,
                authenticated: merged.authenticated(),
                summary,
                state: None,
                exit_code: code,
            })
        }
        VerifyFormat::Table => {
            let mut text = fleet_table(&merged.rows, summary, mode);
            text.push_str(&format!(
                "\nmerged from {} shards; every input of the listing they saw verified by exactly one",
                merged.from.shards
            ));
            output::print_stdout(&text)
        }
    }
    Ok(ExitCode::from(code))
}

/// A byte-count progress bar on stderr, only for people at a terminal.
fn progress_bar(
    files: &[chain::source::Source],
    format: VerifyFormat,
) -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal;
    if format != VerifyFormat::Table || !std::io::stderr().is_terminal() {
        return None;
    }
    let total: u64 = files.iter().map(chain::source::Source::size).sum();
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(total),
        indicatif::ProgressDrawTarget::stderr(),
    );
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{spinner} verifying {bytes}/{total_bytes} [{wide_bar}] {bytes_per_sec} eta {eta}",
    ) {
        bar.set_style(style);
    }
    Some(bar)
}

fn status_cell(status: LogStatus) -> Cell {
    let color = match status {
        LogStatus::Valid => Color::Green,
        LogStatus::Invalid | LogStatus::Error => Color::Red,
        LogStatus::Partial | LogStatus::Unauthenticated => Color::Yellow,
    };
    Cell::new(status.as_str()).fg(color)
}

fn detail(log: &LogRow) -> String {
    if let Some(f) = &log.failure {
        let at = match (f.between, f.seq) {
            (Some([a, b]), _) => format!("between records {a} and {b}"),
            (None, Some(seq)) => format!("seq {seq}"),
            (None, None) if f.line > 0 => format!("line {}", f.line),
            (None, None) => String::new(),
        };
        let changed = match (f.between, f.changed) {
            (_, Some(c)) => format!(
                "; record {} was changed: the checkpoint signed at size {} holds its earlier hash",
                c.seq, c.checkpoint_size
            ),
            (Some([a, b]), None) => format!(
                "; record {a}'s content or record {b}'s prev was changed (no trusted checkpoint past the break tells which)"
            ),
            (None, None) => String::new(),
        };
        return format!("{} {at}: {}{changed}", f.reason, f.message)
            .trim()
            .to_owned();
    }
    if let Some(e) = &log.error {
        return e.clone();
    }
    match (log.status, log.torn_tail_bytes) {
        (LogStatus::Partial, Some(b)) => {
            format!("torn_tail: incomplete final line of {b} bytes (vouch repair)")
        }
        (LogStatus::Partial, None) => {
            format!(
                "{} after the last checkpoint",
                output::count(log.records.saturating_sub(log.covered), "record")
            )
        }
        (LogStatus::Unauthenticated, _)
            if log.reason.as_deref() == Some("no_signed_checkpoint") =>
        {
            format!(
                "no_signed_checkpoint: {}, none covered by a checkpoint signed by a trusted key",
                output::count(log.records, "record")
            )
        }
        (LogStatus::Unauthenticated, _) => format!(
            "no_trusted_key: no --pub key for this origin; chain and tree checked, {} checkpoint signature(s) not checked",
            log.checkpoints
        ),
        _ => String::new(),
    }
}

fn fleet_table(rows: &[LogRow], s: FleetSummary, mode: VerifyMode) -> String {
    let mut table = output::table();
    table.set_content_arrangement(ContentArrangement::Dynamic);
    table.set_header(vec![
        "log", "origin", "status", "records", "covered", "detail",
    ]);
    for log in rows {
        let name = match log.segments.len() {
            0 | 1 => log.path.clone(),
            n => format!("{} (+{})", log.path, output::count(n as u64 - 1, "segment")),
        };
        table.add_row(vec![
            Cell::new(name),
            Cell::new(log.origin.as_deref().unwrap_or("-")),
            status_cell(log.status),
            Cell::new(log.records),
            Cell::new(log.covered),
            Cell::new(detail(log)),
        ]);
    }
    let mut summary = format!(
        "{}: {} valid, {} invalid, {} partial, {} unauthenticated",
        output::count(s.logs as u64, "log"),
        s.valid,
        s.invalid,
        s.partial,
        s.unauthenticated
    );
    if s.error > 0 {
        summary.push_str(&format!(", {} unreadable", s.error));
    }
    // The verdict claims only what was checked.
    let trust = match mode {
        VerifyMode::ChainOnly => "\nchain only: the hash chain and the Merkle tree were checked; no key is trusted, so nothing is authenticated".to_owned(),
        VerifyMode::Authenticated if s.unauthenticated > 0 => format!(
            "\n{} log(s) unauthenticated (rejected): no trusted key for their origin, so anyone could have written them; give --pub KEY.pub, or --chain-only to check only the hash chain and tree",
            s.unauthenticated
        ),
        VerifyMode::Authenticated => String::new(),
    };
    format!(
        "{table}\n{summary}; {}{trust}",
        output::count(s.records, "record")
    )
}

pub fn prove(args: ProveArgs) -> ExitCode {
    error::or_report(
        (|| {
            let text = match (args.seq, args.consistency_from) {
                (Some(seq), _) => chain::proof::prove_inclusion(&args.log, seq)?.to_text(),
                (None, Some(old)) => chain::proof::prove_consistency(&args.log, old)?.to_text(),
                (None, None) => {
                    return Err(Error::Usage("give --seq or --consistency-from".into()));
                }
            };
            match &args.out {
                Some(out) => std::fs::write(out, text.as_bytes()).map_err(|e| Error::io(out, e))?,
                None => output::print_stdout(&text),
            }
            Ok(ExitCode::from(EXIT_VERIFIED))
        })(),
        Format::Table,
    )
}

pub fn verify_proof(args: VerifyProofArgs) -> ExitCode {
    let format = args.format;
    error::or_report(
        (|| {
            let trusted = keys::load_trusted_keys(&args.pubkeys)?;
            let proof = vouch::fs::read_bounded(&args.proof, 1 << 20)?;
            let record =
                vouch::fs::read_bounded(&args.record, chain::record::MAX_LINE_LEN as u64 + 2)?;
            let result = chain::proof::verify_inclusion_proof(&proof, &record, &trusted);
            let code = if result.is_ok() {
                EXIT_VERIFIED
            } else {
                EXIT_REJECTED
            };
            match format {
                Format::Json => output::print_json(&ProofReport::<InclusionDetails>::from(&result)),
                Format::Table => match &result {
                    Ok(v) => output::print_stdout(&format!(
                        "verified: record {} is included in {} at tree size {} (signed by {})\n\
                         not checked: key rotations after this checkpoint (only the keys given are trusted)",
                        v.index(),
                        v.checkpoint().origin,
                        v.checkpoint().size,
                        v.signed_by()
                            .iter()
                            .map(|(n, id)| format!("{n}+{id:08x}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )),
                    Err(e) => eprintln!("vouch: rejected ({}): {e}", e.code()),
                },
            }
            Ok(ExitCode::from(code))
        })(),
        format,
    )
}
