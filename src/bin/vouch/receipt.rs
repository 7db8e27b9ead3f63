//! CLI for `vouch receipt` and `vouch receipt verify`.

use crate::error;
use crate::output::{self, EXIT_REJECTED, EXIT_VERIFIED, Format};
use comfy_table::{Cell, Color};
use std::path::PathBuf;
use std::process::ExitCode;
use vouch::Error;
use vouch::anchor::check::{CheckContext, Online};
use vouch::chain::keys;
use vouch::fs::read_bounded;
use vouch::receipt::{self, PieceResult, ReceiptVerifyReport, Verdict};

/// `vouch receipt LOG --seq N`, or `vouch receipt verify FILE`.
#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct ReceiptCmd {
    #[command(subcommand)]
    sub: Option<ReceiptSub>,
    #[command(flatten)]
    make: MakeArgs,
}

#[derive(clap::Subcommand)]
enum ReceiptSub {
    /// Verify a receipt offline: record, proof, checkpoint signature, anchors.
    Verify(VerifyArgs),
}

#[derive(clap::Args)]
struct MakeArgs {
    /// The log.
    #[arg(required = true)]
    log: Option<PathBuf>,
    /// The record to make a receipt for.
    #[arg(long, required = true)]
    seq: Option<u64>,
    /// Write the receipt here instead of stdout.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Keep only the record's leaf hash, not the line itself.
    #[arg(long)]
    hash_only: bool,
}

#[derive(clap::Args)]
#[command(
    after_help = "Verdicts (docs/FORMAT.md §10.1): complete (exit 0): the record, its inclusion under a checkpoint signed by a key you trust, and at least one anchor verified (a time-stamp token against --tsa-ca, or with --online an S3 or dir object at a target you name); anchor claimed, not checked (exit 1, 0 with --allow-unanchored): anchors bound to the log but none checked (offline, an S3 or dir anchor proves nothing); signed, not anchored (exit 1, 0 with --allow-unanchored); record not checked (exit 1): a hash-only receipt without --record; rejected (exit 1). Exit 2: the receipt file cannot be read, or a target could not be asked and nothing else decided the verdict."
)]
struct VerifyArgs {
    /// The receipt file.
    file: PathBuf,
    /// Trusted public key file or keyset (repeatable).
    #[arg(long = "pub", value_name = "KEY.pub", required = true)]
    pubkeys: Vec<PathBuf>,
    /// TSA root certificates (PEM) for checking time-stamp anchors.
    #[arg(long, value_name = "ROOTS")]
    tsa_ca: Option<PathBuf>,
    /// A file holding the record line (required for a hash-only receipt).
    #[arg(long)]
    record: Option<PathBuf>,
    /// Also fetch each S3 or dir anchor inside your targets (--from) and
    /// check it as `vouch anchor verify` does; offline, they prove nothing.
    #[arg(long)]
    online: bool,
    /// With --online: a target of yours (s3://BUCKET/PREFIX or dir:/PATH,
    /// repeatable); anchors elsewhere are not followed.
    #[arg(long = "from", value_name = "TARGET", requires = "online")]
    from: Vec<String>,
    /// With --online: a file of targets, one per line.
    #[arg(long, value_name = "FILE", requires = "online")]
    targets: Option<PathBuf>,
    #[command(flatten)]
    s3: crate::anchor::S3Args,
    /// Exit 0 for a valid receipt whose anchors are absent or not checked
    /// ("signed, not anchored", "anchor claimed, not checked").
    #[arg(long)]
    allow_unanchored: bool,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

/// Runs `vouch receipt ...`.
pub fn run(cmd: ReceiptCmd) -> ExitCode {
    match cmd.sub {
        Some(ReceiptSub::Verify(a)) => verify(a),
        None => make(cmd.make),
    }
}

fn make(args: MakeArgs) -> ExitCode {
    error::or_report(
        (|| {
            let (Some(log), Some(seq)) = (&args.log, args.seq) else {
                return Err(Error::Usage("give LOG and --seq".into()));
            };
            let r = receipt::build(log, seq, !args.hash_only)?;
            let text = serde_json::to_string_pretty(&r).map_err(|source| Error::Serialize {
                what: "the receipt",
                source,
            })?;
            match &args.out {
                Some(out) => {
                    std::fs::write(out, format!("{text}\n")).map_err(|e| Error::io(out, e))?
                }
                None => output::print_stdout(&text),
            }
            if r.anchors.is_empty() {
                eprintln!(
                    "vouch: note: record {seq} is signed, not anchored (no anchor of a checkpoint covering it); run `vouch anchor` and make the receipt again"
                );
            }
            Ok(ExitCode::from(EXIT_VERIFIED))
        })(),
        Format::Table,
    )
}

fn verify(args: VerifyArgs) -> ExitCode {
    let format = args.format;
    error::or_report(
        (|| {
            let trusted = keys::load_trusted_keys(&args.pubkeys)?;
            let r = match receipt::load(&args.file)? {
                Ok(r) => r,
                Err(e) => {
                    match format {
                        Format::Json => output::print_json(&ReceiptVerifyReport::not_a_receipt(&e)),
                        Format::Table => output::print_stdout(&format!(
                            "{}: {e}\nverdict: rejected ({})",
                            args.file.display(),
                            e.code()
                        )),
                    }
                    return Ok(ExitCode::from(1));
                }
            };
            let given = match &args.record {
                Some(p) => Some(read_bounded(
                    p,
                    vouch::chain::record::MAX_LINE_LEN as u64 + 2,
                )?),
                None => None,
            };
            let roots = args
                .tsa_ca
                .as_deref()
                .map(vouch::anchor::timestamp::load_roots)
                .transpose()?;
            let online = if args.online {
                let targets =
                    crate::anchor::auditor_targets(&args.from, args.targets.as_deref(), &args.s3)?;
                if targets.is_empty() {
                    return Err(Error::MissingOption {
                        option: "--from TARGET",
                        needed_for: "--online (the buckets and directories you allow vouch to read)",
                    });
                }
                Some(Online::new(targets))
            } else {
                None
            };
            let ctx = CheckContext {
                tsa_roots: roots.as_ref(),
                online: online.as_ref(),
            };
            let report = receipt::verify(&r, &trusted, &ctx, given.as_deref());
            let code = report.exit_code(args.allow_unanchored);
            match format {
                Format::Json => output::print_json(&ReceiptVerifyReport::new(
                    &r,
                    &report,
                    args.allow_unanchored,
                )),
                Format::Table => {
                    let mut table = output::table();
                    table.set_header(vec!["piece", "result", "detail"]);
                    for p in report.pieces() {
                        let color = match p.result {
                            PieceResult::Verified(_) => Color::Green,
                            PieceResult::NotChecked { .. } => Color::Yellow,
                            PieceResult::Failed(_) | PieceResult::Error(_) => Color::Red,
                        };
                        let label = p.result.reason().unwrap_or("ok");
                        table.add_row(vec![
                            Cell::new(&p.name),
                            Cell::new(label).fg(color),
                            Cell::new(p.result.detail()),
                        ]);
                    }
                    let hint = match report.verdict() {
                        Verdict::SignedNotAnchored if code == EXIT_REJECTED => {
                            "\nhint: the record and its signed checkpoint verify, but no anchor shows when the checkpoint existed; add --allow-unanchored to accept a signed receipt without one (exit 0)"
                        }
                        Verdict::AnchorNotChecked if code == EXIT_REJECTED => {
                            "\nhint: the record and its signed checkpoint verify; the anchors were not checked (give --tsa-ca for a time-stamp token, --online for S3 or dir anchors), or add --allow-unanchored to accept it without (exit 0)"
                        }
                        _ => "",
                    };
                    output::print_stdout(&format!(
                        "{table}\nverdict: {}{}{hint}\nnot checked: key rotations after this checkpoint (offline, only the keys given are trusted)",
                        report.verdict().as_str(),
                        report
                            .reason()
                            .map(|r| format!(" ({r})"))
                            .unwrap_or_default()
                    ));
                }
            }
            Ok(ExitCode::from(code))
        })(),
        format,
    )
}
