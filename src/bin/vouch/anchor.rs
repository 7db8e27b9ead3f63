//! CLI for `vouch anchor`, `vouch anchor verify` and `vouch anchor doctor`.

use crate::error;
use crate::output::{self, Format};
use comfy_table::{Cell, Color};
use std::path::PathBuf;
use std::process::ExitCode;
use vouch::anchor::check::AuditorTargets;
use vouch::anchor::state::StateFile;
use vouch::anchor::verify::{
    AnchorReport, AnchorVerdict, AnchorVerifyReport, CheckOutcome, CheckSource,
};
use vouch::anchor::{self, AnchorOutcomeReport, LockMode, S3Connection, S3LockOptions, Target};
use vouch::chain::keys;
use vouch::{Error, Result};

/// `vouch anchor LOG --key KEY --to TARGET...`, or a subcommand.
#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct AnchorCmd {
    #[command(subcommand)]
    sub: Option<AnchorSub>,
    #[command(flatten)]
    run: AnchorArgs,
}

#[derive(clap::Subcommand)]
enum AnchorSub {
    /// Check every anchor of a log against its target, and the log against every anchored checkpoint.
    Verify(VerifyArgs),
    /// Preflight an S3 bucket: versioning, Object Lock, and a canary that must not be deletable.
    Doctor(DoctorArgs),
}

#[derive(clap::Args)]
pub(crate) struct S3Args {
    /// S3 endpoint URL (an S3-compatible server); default: AWS, or
    /// AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL when verifying.
    #[arg(long)]
    endpoint: Option<String>,
    /// S3 region; default: from the AWS environment/profile, else us-east-1.
    #[arg(long)]
    region: Option<String>,
}

impl S3Args {
    pub(crate) fn connection(&self) -> S3Connection {
        S3Connection {
            endpoint: self.endpoint.clone(),
            region: self.region.clone(),
        }
    }
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum ModeArg {
    Compliance,
    Governance,
}

#[derive(clap::Args)]
struct AnchorArgs {
    /// The log whose latest checkpoint to anchor (a new one is signed if records follow it).
    #[arg(required = true)]
    log: Option<PathBuf>,
    /// The log's private key.
    #[arg(long, required = true)]
    key: Option<PathBuf>,
    /// Target: s3://BUCKET/PREFIX, dir:/PATH or tsa:URL (repeatable).
    #[arg(long = "to", required = true, value_name = "TARGET")]
    to: Vec<String>,
    #[command(flatten)]
    s3: S3Args,
    /// S3 Object Lock mode.
    #[arg(long, value_enum, default_value = "compliance")]
    mode: ModeArg,
    /// S3 retention: this many days from now.
    #[arg(long, conflicts_with = "retain_until")]
    retain_days: Option<u32>,
    /// S3 retention: until this date (YYYY-MM-DD or RFC 3339 UTC).
    #[arg(long)]
    retain_until: Option<String>,
    /// Also place an S3 legal hold.
    #[arg(long)]
    legal_hold: bool,
    /// TSA root certificates (PEM) that a tsa: token must chain to.
    #[arg(long, value_name = "ROOTS")]
    tsa_ca: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
    #[command(flatten)]
    quiet: output::Quiet,
}

#[derive(clap::Args)]
#[command(
    after_help = "Verdicts (docs/FORMAT.md §9.3): consistent (exit 0): every anchor checked verified, at least one of your targets holds anchors of the log, and the log extends every anchored checkpoint found; incomplete (exit 1): something was not checked (a location outside your targets, no --tsa-ca, an anchor record no checkpoint covers yet) or no target of yours holds anchors of this log, so truncation after the last anchor record cannot be detected; no_anchors (exit 1); rejected (exit 1); error (exit 2): a target could not be asked. Locations and endpoints recorded in the log are never followed."
)]
struct VerifyArgs {
    /// The log: a file (its rotated segments are read with it), several
    /// files, or a directory of logs.
    #[arg(required = true, value_name = "LOG")]
    logs: Vec<PathBuf>,
    /// Trusted public key file or keyset (repeatable).
    #[arg(long = "pub", value_name = "KEY.pub", required = true)]
    pubkeys: Vec<PathBuf>,
    /// A target of yours (s3://BUCKET/PREFIX or dir:/PATH, repeatable):
    /// recorded anchors are checked only inside your targets, and each is
    /// listed for anchors whose records were cut off the log.
    #[arg(long = "from", value_name = "TARGET")]
    from: Vec<String>,
    /// A file of targets, one per line (# comments).
    #[arg(long, value_name = "FILE")]
    targets: Option<PathBuf>,
    /// TSA root certificates (PEM) for checking tsa: anchors.
    #[arg(long, value_name = "ROOTS")]
    tsa_ca: Option<PathBuf>,
    #[command(flatten)]
    s3: S3Args,
    /// Remember verified downloads here: later runs HEAD old S3 anchors
    /// and download only new ones (and those older than --recheck-days).
    #[arg(long, value_name = "FILE")]
    state: Option<PathBuf>,
    /// With --state: download an anchor again once its last download is
    /// this many days old.
    #[arg(long, default_value_t = 30, value_name = "DAYS")]
    recheck_days: u32,
    /// S3 listing page size (testing pagination).
    #[arg(long, hide = true)]
    page_size: Option<i32>,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

#[derive(clap::Args)]
struct DoctorArgs {
    /// s3://BUCKET[/PREFIX]
    target: String,
    #[command(flatten)]
    s3: S3Args,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

/// Runs `vouch anchor ...`.
pub fn run(cmd: AnchorCmd) -> ExitCode {
    match cmd.sub {
        Some(AnchorSub::Verify(a)) => verify(a),
        Some(AnchorSub::Doctor(a)) => doctor(a),
        None => anchor(cmd.run),
    }
}

fn lock_options(args: &AnchorArgs, needs_s3: bool) -> Result<S3LockOptions> {
    let mode = match args.mode {
        ModeArg::Compliance => LockMode::Compliance,
        ModeArg::Governance => LockMode::Governance,
    };
    let retain_until_unix = match (&args.retain_until, args.retain_days) {
        (Some(text), _) => {
            vouch::time::Timestamp::parse_utc_date_or_time(text)
                .map_err(|problem| Error::InvalidTime {
                    what: "--retain-until",
                    text: text.clone(),
                    problem,
                    expected: "YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS[.fraction]Z",
                })?
                .unix
        }
        (None, Some(days)) => vouch::time::now_unix() + i64::from(days) * 86_400,
        (None, None) if needs_s3 => {
            return Err(Error::MissingOption {
                option: "--retain-days N or --retain-until DATE",
                needed_for: "an s3:// target (its Object Lock retention)",
            });
        }
        (None, None) => 0,
    };
    if needs_s3 && retain_until_unix <= vouch::time::now_unix() {
        return Err(Error::RetentionInPast {
            until: vouch::time::Timestamp {
                unix: retain_until_unix,
                nanos: 0,
            }
            .to_rfc3339(),
        });
    }
    Ok(S3LockOptions {
        mode,
        retain_until_unix,
        legal_hold: args.legal_hold,
    })
}

fn anchor(args: AnchorArgs) -> ExitCode {
    let format = args.format;
    error::or_report(
        (|| {
            let (Some(log), Some(key_path)) = (&args.log, &args.key) else {
                return Err(Error::Usage("give LOG and --key".into()));
            };
            let targets = args
                .to
                .iter()
                .map(|t| Target::parse(t))
                .collect::<Result<Vec<_>>>()?;
            let needs_s3 = targets.iter().any(|t| matches!(t, Target::S3 { .. }));
            let opts = anchor::AnchorOptions {
                s3: args.s3.connection(),
                lock: lock_options(&args, needs_s3)?,
                tsa_roots: args
                    .tsa_ca
                    .as_deref()
                    .map(anchor::timestamp::load_roots)
                    .transpose()?,
            };
            let key = keys::read_signer_key(key_path)?;
            let outcome = anchor::anchor(log, &key, &targets, &opts)?;
            let code = outcome.exit_code();
            match format {
                Format::Json => output::print_json(&AnchorOutcomeReport::from(&outcome)),
                Format::Table => {
                    for a in outcome.anchors.iter().filter(|_| !args.quiet.quiet) {
                        output::print_stdout(&format!(
                            "anchored {} size {} at {}",
                            outcome.checkpoint.origin,
                            outcome.checkpoint.size,
                            a.location()
                        ));
                    }
                    if let Some(seq) = outcome.record_seq {
                        output::print_stdout(&format!(
                            "recorded anchor record seq {seq}{}",
                            outcome
                                .covering_seq
                                .map(|c| format!(", covered by checkpoint seq {c}"))
                                .unwrap_or_default()
                        ));
                    }
                    for f in &outcome.failures {
                        eprintln!("vouch: error: {}: {}", f.target, f.error);
                    }
                    if outcome.record_seq.is_none() {
                        eprintln!("vouch: no target accepted the checkpoint; nothing recorded");
                    }
                }
            }
            Ok(ExitCode::from(code))
        })(),
        format,
    )
}

fn report_table(r: &AnchorReport) -> String {
    let mut table = output::table();
    table.set_header(vec!["from", "type", "location", "size", "status", "detail"]);
    for c in &r.checks {
        let color = match c.outcome {
            CheckOutcome::Verified(_) => Color::Green,
            CheckOutcome::NotChecked(_) => Color::Yellow,
            CheckOutcome::Rejected(_) | CheckOutcome::Error(_) => Color::Red,
        };
        let detail = match c.outcome.reason() {
            Some(code) => format!("{code}: {}", c.outcome.message()),
            None => c
                .outcome
                .found()
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(" "),
        };
        table.add_row(vec![
            Cell::new(match c.source {
                CheckSource::Record { seq } => format!("record {seq}"),
                CheckSource::Listing => "listing".into(),
            }),
            Cell::new(c.kind),
            Cell::new(&c.location),
            Cell::new(c.size.map_or("-".into(), |s| s.to_string())),
            Cell::new(c.outcome.status()).fg(color),
            Cell::new(detail),
        ]);
    }
    let mut lines = vec![format!("{}", r.log.path.display())];
    if !r.checks.is_empty() {
        lines.push(table.to_string());
    }
    for l in &r.listed {
        lines.push(match &l.error {
            None => format!("listed {}: {} object(s) of this log", l.target, l.objects),
            Some(e) => format!("could not list {}: {} ({})", l.target, e, e.code()),
        });
    }
    lines.push(match (&r.log.failure, &r.log.error) {
        (Some(f), _) => format!(
            "log {}: {} ({})",
            r.log.status.as_str(),
            f.error.code(),
            f.error
        ),
        (None, Some(e)) => format!("log unreadable: {e}"),
        (None, None) => match r.log.reason() {
            Some(reason) => format!(
                "log {}: {} ({reason})",
                r.log.status.as_str(),
                output::count(r.log.records, "record")
            ),
            None => format!(
                "log {}: {}",
                r.log.status.as_str(),
                output::count(r.log.records, "record")
            ),
        },
    });
    let verdict = r.verdict();
    lines.push(match verdict {
        AnchorVerdict::Consistent => {
            "verdict: consistent: the log extends every anchored checkpoint found in it and at your targets".to_owned()
        }
        AnchorVerdict::NoAnchors => "verdict: no_anchors: no anchor found for this log".to_owned(),
        v => format!("verdict: {}", v.as_str()),
    });
    for n in r.not_established() {
        lines.push(format!("not established: {n}"));
    }
    lines.join("\n")
}

/// The auditor's targets: `--from` and `--targets FILE`, reached through
/// the endpoint given with `--endpoint` or in the environment
/// (`AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL`), never one named by a log or
/// receipt.
pub(crate) fn auditor_targets(
    from: &[String],
    file: Option<&std::path::Path>,
    s3: &S3Args,
) -> Result<AuditorTargets> {
    let mut targets = from
        .iter()
        .map(|t| Target::parse(t))
        .collect::<Result<Vec<_>>>()?;
    if let Some(file) = file {
        targets.extend(AuditorTargets::parse_file(file)?);
    }
    let mut conn = s3.connection();
    if conn.endpoint.is_none() {
        conn.endpoint = ["AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"]
            .iter()
            .find_map(|v| std::env::var(v).ok().filter(|s| !s.is_empty()));
    }
    AuditorTargets::new(targets, conn)
}

fn verify(args: VerifyArgs) -> ExitCode {
    let format = args.format;
    error::or_report(
        (|| {
            let trusted = keys::load_trusted_keys(&args.pubkeys)?;
            let targets = auditor_targets(&args.from, args.targets.as_deref(), &args.s3)?;
            let state = args
                .state
                .as_deref()
                .map(|p| StateFile::load(p, args.recheck_days))
                .transpose()?;
            let mut opts = anchor::verify::VerifyAnchorsOptions {
                trusted,
                targets,
                tsa_roots: args
                    .tsa_ca
                    .as_deref()
                    .map(anchor::timestamp::load_roots)
                    .transpose()?,
                state,
                page_size: args.page_size,
            };
            let fleet = anchor::verify::verify_anchors(&args.logs, &mut opts)?;
            // A state that cannot be saved never hides the verdict: the
            // report is printed, and the run exits 2 unless it rejected.
            let mut code = fleet.exit_code();
            let mut state_saved = None;
            if let Some(state) = &opts.state {
                let saved = state.save();
                if let Err(e) = &saved {
                    eprintln!("vouch: error: the state was not saved: {e}");
                    if code == 0 {
                        code = 2;
                    }
                }
                state_saved = Some(saved.is_ok());
            }
            match format {
                Format::Json => {
                    let mut doc = AnchorVerifyReport::from(&fleet);
                    doc.state_saved = state_saved;
                    doc.exit_code = code;
                    output::print_json(&doc)
                }
                Format::Table => {
                    let mut parts: Vec<String> = fleet.logs.iter().map(report_table).collect();
                    for m in &fleet.missing {
                        parts.push(format!(
                            "missing log: {} has anchors at {} (size {} at {}) but no log of it was given (missing_log)",
                            m.origin, m.target, m.size, m.location
                        ));
                    }
                    for (p, why) in &fleet.problems {
                        parts.push(format!("{}: error: {why}", p.display()));
                    }
                    output::print_stdout(&parts.join("\n\n"));
                }
            }
            Ok(ExitCode::from(code))
        })(),
        format,
    )
}

#[cfg(feature = "s3")]
fn doctor(args: DoctorArgs) -> ExitCode {
    let format = args.format;
    error::or_report(
        (|| {
            let Target::S3 { bucket, prefix } = Target::parse(&args.target)? else {
                return Err(Error::Target {
                    target: args.target.clone(),
                    problem: anchor::TargetError::NotS3,
                });
            };
            let checks = anchor::s3::doctor(&args.s3.connection(), &bucket, &prefix)?;
            let report = anchor::DoctorReport::new(&bucket, checks);
            match format {
                Format::Json => output::print_json(&report),
                Format::Table => {
                    let mut table = output::table();
                    table.set_header(vec!["check", "result", "detail"]);
                    for c in &report.checks {
                        table.add_row(vec![
                            Cell::new(c.name),
                            if c.ok {
                                Cell::new("ok").fg(Color::Green)
                            } else {
                                Cell::new("FAILED").fg(Color::Red)
                            },
                            Cell::new(&c.detail),
                        ]);
                    }
                    let verdict = if report.suitable {
                        format!("s3://{bucket}: suitable for anchoring")
                    } else {
                        format!("s3://{bucket}: NOT suitable for anchoring")
                    };
                    output::print_stdout(&format!("{table}\n{verdict}"));
                }
            }
            Ok(ExitCode::from(report.exit_code))
        })(),
        format,
    )
}

#[cfg(not(feature = "s3"))]
fn doctor(args: DoctorArgs) -> ExitCode {
    error::report(
        &Error::FeatureDisabled {
            feature: "s3",
            needed_for: "anchor doctor",
        },
        args.format,
    )
}
