//! CLI for `vouch stamp`, `vouch stamp verify` and `vouch stamp extract`.

use crate::error;
use crate::output::{self, EXIT_ERROR, EXIT_REJECTED, EXIT_VERIFIED, Format};
use comfy_table::{Cell, Color};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use vouch::chain::keys;
use vouch::stamp::verify::{Check, FileStatus, StampVerifyOptions};
use vouch::stamp::{self, Input, StampOptions, Subjects};
use vouch::{Error, Result};

const STAMP_HELP: &str = "Paths: each file is recorded relative to --base (default: the current directory), normalised; a PATH outside the base is refused. A file named like a subcommand is given as ./verify. Directories are walked recursively; symlinks are recorded as links (--follow-symlinks stamps a link to a regular file as that file); FIFOs, sockets and devices met in a walk are skipped with a warning.\n\nStreams: `-` stamps stdin as it passes through to stdout unchanged, as tee(1) does (the report goes to stderr), so a stamp can sit in a pipeline: `some-agent | vouch stamp - --name out.json --key KEY --out out.receipt | next-step`; --tee FILE also writes the stream to FILE. A reader downstream that quits early leaves the stream unstamped (exit 2).\n\nExit codes: 0 every file stamped; 2 an error: a file named explicitly could not be stamped, a file could not be read, the TSA failed (then nothing is recorded in the log and the receipt has no token). The receipt holds only the files stamped, and names those left out.";

/// `vouch stamp PATH...`, `vouch stamp verify`, `vouch stamp extract`.
#[derive(clap::Args)]
#[command(
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    after_help = STAMP_HELP
)]
pub struct StampCmd {
    #[command(subcommand)]
    sub: Option<StampSub>,
    #[command(flatten)]
    make: MakeArgs,
}

#[derive(clap::Subcommand)]
enum StampSub {
    /// Verify a stamp receipt or per-file proof: re-hash the files, check
    /// the signature, the tree, the token and the chain record.
    Verify(VerifyArgs),
    /// Cut a per-file proof (FILE.vouch) out of a run's receipt, or a
    /// minisign signature for the file.
    Extract(ExtractArgs),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Default)]
enum SubjectsArg {
    /// Every file for runs of at most 1000 files, else only the root.
    #[default]
    Auto,
    Files,
    Root,
}

#[derive(clap::Args)]
struct MakeArgs {
    /// Files and directories to stamp, or `-` for stdin (with --name).
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// The stamping key (the chain's Ed25519 key, `vouch keygen`).
    #[arg(long, value_name = "KEY", required = true)]
    key: Option<PathBuf>,
    /// Record the stamp in this log (covered at once by a new checkpoint).
    #[arg(long, value_name = "LOG")]
    log: Option<PathBuf>,
    /// Get one RFC 3161 token for the run from this TSA.
    #[arg(long, value_name = "URL", requires = "tsa_ca")]
    tsa: Option<String>,
    /// TSA root certificates (PEM) the token must verify against.
    #[arg(long, value_name = "ROOTS", requires = "tsa")]
    tsa_ca: Option<PathBuf>,
    /// Signed run metadata (agent, run, model, command...), repeatable.
    #[arg(long = "meta", value_name = "KEY=VALUE")]
    meta: Vec<String>,
    /// Where to write the receipt (default: stamp-<root>.vouch).
    #[arg(long, value_name = "RECEIPT")]
    out: Option<PathBuf>,
    /// Record paths relative to this directory.
    #[arg(long, value_name = "DIR")]
    base: Option<PathBuf>,
    /// Which subjects the signed in-toto statement lists.
    #[arg(long, value_enum, default_value_t)]
    subjects: SubjectsArg,
    /// Stamp a symlink to a regular file as that file.
    #[arg(long)]
    follow_symlinks: bool,
    /// With `-`: the path to record the stream under.
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
    /// With `-`: write the stream to this file as it is hashed.
    #[arg(long, value_name = "FILE")]
    tee: Option<PathBuf>,
    /// Also write the run as a Sigstore bundle v0.3 (needs --tsa).
    #[arg(long, value_name = "FILE", requires = "tsa")]
    sigstore: Option<PathBuf>,
    /// Sign the Sigstore export with this ECDSA P-256 key (PKCS#8 PEM)
    /// instead of the Ed25519 key: cosign 3 cannot verify Ed25519.
    #[arg(long, value_name = "KEY.pem", requires = "sigstore")]
    sigstore_key: Option<PathBuf>,
    /// Also write the Sigstore TrustedRoot naming the TSA (its certificate
    /// and the --tsa-ca root that issued it), for cosign --trusted-root.
    #[arg(long, value_name = "FILE", requires = "sigstore")]
    sigstore_trusted_root: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
    #[command(flatten)]
    quiet: output::Quiet,
}

#[derive(clap::Args)]
#[command(
    after_help = "Each file is reported as ok, modified, missing, extra (in a stamped directory, not stamped) or not_stamped (a PATH the receipt does not hold). Exit 0: every check made passed and every file is ok; 1: a file does not match or the evidence is invalid; 2: the receipt or a file could not be read. Recorded paths are resolved under --base (default: the current directory) and never outside it: absolute paths and '..' are refused, and no symlinked directory is followed."
)]
struct VerifyArgs {
    /// The receipt (a run's, or a per-file proof).
    receipt: PathBuf,
    /// Check only these files or directories.
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Resolve recorded paths under this directory.
    #[arg(long, value_name = "DIR")]
    base: Option<PathBuf>,
    /// Trusted public key file or keyset (repeatable).
    #[arg(long = "pub", value_name = "KEY.pub", required = true)]
    pubkeys: Vec<PathBuf>,
    /// TSA root certificates (PEM) for the time-stamp token.
    #[arg(long, value_name = "ROOTS")]
    tsa_ca: Option<PathBuf>,
    /// List every file, not only those that are not ok (all are counted).
    #[arg(long)]
    all: bool,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Default)]
enum ExtractFormat {
    /// A per-file vouch proof (`vouch stamp verify FILE.vouch`).
    #[default]
    Vouch,
    /// A minisign signature of the file, made with --key.
    Minisign,
}

#[derive(clap::Args)]
struct ExtractArgs {
    /// The run's receipt.
    receipt: PathBuf,
    /// The stamped file (its recorded path, or a path under --base).
    file: PathBuf,
    /// Where to write the proof.
    #[arg(long, value_name = "FILE", required = true)]
    out: PathBuf,
    /// What to write: a per-file proof or a minisign signature.
    #[arg(
        long = "proof-format",
        alias = "format",
        value_enum,
        default_value_t,
        value_name = "FORMAT"
    )]
    format: ExtractFormat,
    /// With --proof-format minisign: the stamping key to sign with.
    #[arg(long, value_name = "KEY")]
    key: Option<PathBuf>,
    /// Resolve FILE under this directory.
    #[arg(long, value_name = "DIR")]
    base: Option<PathBuf>,
}

pub fn run(cmd: StampCmd) -> ExitCode {
    match cmd.sub {
        Some(StampSub::Verify(a)) => verify(a),
        Some(StampSub::Extract(a)) => extract(a),
        None => make(cmd.make),
    }
}

fn canonical_base(base: Option<&Path>) -> Result<PathBuf> {
    let b = base.map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    std::fs::canonicalize(&b).map_err(|e| Error::io(&b, e))
}

fn make(args: MakeArgs) -> ExitCode {
    let format = args.format;
    let result = (|| {
        let key_path = args.key.as_deref().ok_or(Error::MissingOption {
            option: "--key KEY",
            needed_for: "stamp",
        })?;
        let key = keys::read_signer_key(key_path)?;
        let base = canonical_base(args.base.as_deref())?;
        let meta = stamp::statement::parse_meta(&args.meta).map_err(|(pair, problem)| {
            Error::InvalidArgument {
                option: "--meta",
                text: format!("{pair} ({problem})"),
                expected: "KEY=VALUE, KEY of a-z 0-9 _ . -",
            }
        })?;
        let roots = args
            .tsa_ca
            .as_deref()
            .map(vouch::anchor::timestamp::load_roots)
            .transpose()?;
        let stream = args.paths.iter().any(|p| p.as_os_str() == "-");
        let input = if stream {
            if args.paths.len() != 1 {
                return Err(Error::Usage("`-` (stdin) is stamped on its own".into()));
            }
            let name = match (&args.name, &args.tee) {
                (Some(n), _) => n.as_bytes().to_vec(),
                (None, Some(t)) => vouch::files::path::relative_to(&base, t)
                    .ok()
                    .flatten()
                    .ok_or_else(|| {
                        Error::Usage(format!(
                            "--tee {}: not under the base; give --name",
                            t.display()
                        ))
                    })?,
                (None, None) => {
                    return Err(Error::MissingOption {
                        option: "--name NAME",
                        needed_for: "stamping stdin (-)",
                    });
                }
            };
            Input::Stream {
                name,
                tee: args.tee.clone(),
                // In a pipeline, as tee(1) does: the stream goes on to
                // stdout unchanged, and the report goes to stderr.
                pass: Some(Box::new(std::io::stdout())),
                reader: Box::new(std::io::stdin()),
            }
        } else {
            if args.name.is_some() || args.tee.is_some() {
                return Err(Error::Usage("--name and --tee go with `-` (stdin)".into()));
            }
            Input::Paths(args.paths.clone())
        };
        let p256 = match &args.sigstore_key {
            Some(p) => Some(vouch::stamp::ecdsa_key::EcdsaP256Key::load(p)?),
            None => None,
        };
        let sign_p256 = |msg: &[u8]| -> Result<Vec<u8>> {
            Ok(p256.as_ref().map(|k| k.sign(msg)).unwrap_or_default())
        };
        let outcome = stamp::stamp(StampOptions {
            base,
            input,
            key: &key,
            log: args.log.clone(),
            tsa: match (&args.tsa, &roots) {
                (Some(u), Some(r)) => Some((u.clone(), r)),
                _ => None,
            },
            meta,
            subjects: match args.subjects {
                SubjectsArg::Auto => Subjects::Auto,
                SubjectsArg::Files => Subjects::Files,
                SubjectsArg::Root => Subjects::Root,
            },
            follow_symlinks: args.follow_symlinks,
            export_signer: p256.as_ref().map(|k| stamp::ExportSigner {
                spki_der: k.spki_der(),
                public_pem: k.public_key_pem(),
                sign: &sign_p256,
            }),
            protected: vec![key_path.to_path_buf()],
            out: args.out.clone(),
        })?;
        if let Some(path) = &args.sigstore
            && outcome.tsa_failure.is_none()
        {
            let trusted_root = match (&args.sigstore_trusted_root, &args.tsa_ca, &roots) {
                (Some(tr), Some(ca), Some(roots)) => Some((tr.as_path(), ca.as_path(), roots)),
                _ => None,
            };
            vouch::stamp::export::write_sigstore(
                &outcome.header,
                &key.verifier().public_key(),
                &vouch::stamp::export::SigstoreOutputs {
                    bundle: path,
                    trusted_root,
                },
            )?;
        }
        Ok(outcome)
    })();
    let outcome = match result {
        Ok(o) => o,
        Err(e) => return error::report(&e, format),
    };
    if args.quiet.quiet {
        if !outcome.skipped.is_empty() {
            eprintln!(
                "vouch: warning: {} skipped (FIFOs, sockets, devices; listed without --quiet)",
                output::count(outcome.skipped.len() as u64, "special file")
            );
        }
    } else {
        for s in &outcome.skipped {
            eprintln!(
                "vouch: warning: {}: skipped ({})",
                vouch::files::path::display(&s.path),
                s.kind
            );
        }
    }
    for l in &outcome.left_out {
        eprintln!(
            "vouch: error: {}: not stamped: {}",
            vouch::files::path::display(&l.path),
            l.problem
        );
    }
    if let Some(f) = &outcome.tsa_failure {
        eprintln!(
            "vouch: error: no time-stamp token: {f}; nothing was recorded in the log, and the receipt has no token"
        );
    }
    let bundle = args
        .sigstore
        .as_deref()
        .filter(|_| outcome.tsa_failure.is_none());
    let report = outcome.report(args.log.as_deref(), bundle);
    // A stream stamped in a pipeline went to stdout: the report goes to
    // stderr.
    let piped = args.paths.iter().any(|p| p.as_os_str() == "-");
    let print = |text: &str| {
        if piped {
            eprintln!("{}", text.trim_end_matches('\n'));
        } else {
            output::print_stdout(text);
        }
    };
    match format {
        Format::Json => print(&serde_json::to_string_pretty(&report).unwrap_or_default()),
        Format::Table => {
            let mut t = output::table();
            t.add_row(vec!["receipt", &report.receipt]);
            t.add_row(vec![
                "files".to_string(),
                format!("{} ({} bytes)", report.files, report.bytes),
            ]);
            t.add_row(vec!["root", &report.root]);
            t.add_row(vec!["signed by", &report.signer]);
            t.add_row(vec![
                "time".to_string(),
                match &report.gen_time {
                    Some(g) => format!("{g} (RFC 3161 token, verified)"),
                    None => format!("{} (the signer's clock; no token)", report.signed_at),
                },
            ]);
            if let Some(r) = &report.recorded {
                t.add_row(vec![
                    "recorded".to_string(),
                    format!(
                        "{} seq {} (checkpoint size {})",
                        r.log, r.seq, r.checkpoint_size
                    ),
                ]);
            }
            if let Some(b) = &report.sigstore_bundle {
                t.add_row(vec!["sigstore bundle", b]);
            }
            if !report.left_out.is_empty() {
                t.add_row(vec![
                    "left out".to_string(),
                    report.left_out.len().to_string(),
                ]);
            }
            print(&t.to_string());
        }
    }
    output::finish(ExitCode::from(if outcome.failed() {
        EXIT_ERROR
    } else {
        EXIT_VERIFIED
    }))
}

fn verify(args: VerifyArgs) -> ExitCode {
    let format = args.format;
    let result = (|| {
        let trusted = keys::load_trusted_keys(&args.pubkeys)?;
        let roots = args
            .tsa_ca
            .as_deref()
            .map(vouch::anchor::timestamp::load_roots)
            .transpose()?;
        let base = canonical_base(args.base.as_deref())?;
        stamp::verify(
            &args.receipt,
            &StampVerifyOptions {
                base,
                paths: args.paths.clone(),
                keys: &trusted,
                tsa_roots: roots.as_ref(),
                list_ok: args.all,
            },
        )
    })();
    let report = match result {
        Ok(r) => r,
        Err(e) => return error::report(&e, format),
    };
    match format {
        Format::Json => output::print_json(&report),
        Format::Table => {
            let mut checks = output::table();
            checks.set_header(vec!["check", "result", "detail"]);
            for p in &report.checks {
                let (label, color, detail) = match &p.check {
                    Check::Verified { detail } => ("ok", Color::Green, detail.clone()),
                    Check::NotChecked { code, why } => (*code, Color::Yellow, why.clone()),
                    Check::Failed { code, reason } => (*code, Color::Red, reason.clone()),
                };
                checks.add_row(vec![
                    Cell::new(p.name),
                    Cell::new(label).fg(color),
                    Cell::new(detail),
                ]);
            }
            let mut files = output::table();
            files.set_header(vec!["file", "status", "detail"]);
            let mut shown = 0;
            for f in &report.files {
                shown += 1;
                let color = match f.status {
                    FileStatus::Ok => Color::Green,
                    FileStatus::Error => Color::Yellow,
                    _ => Color::Red,
                };
                let status = serde_json::to_value(f.status)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default();
                files.add_row(vec![
                    Cell::new(&f.path),
                    Cell::new(status).fg(color),
                    Cell::new(f.detail.clone().unwrap_or_default()),
                ]);
            }
            let s = &report.summary;
            let mut text = format!("{checks}\n");
            if shown > 0 {
                text.push_str(&format!("{files}\n"));
            }
            text.push_str(&format!(
                "files: {} ok, {} modified, {} missing, {} extra, {} not stamped, {} errors\n",
                s.ok, s.modified, s.missing, s.extra, s.not_stamped, s.errors
            ));
            if s.missing > 0 && s.ok + s.modified + s.errors == 0 {
                let base = args.base.as_ref().map_or_else(
                    || "the current directory".to_owned(),
                    |b| b.display().to_string(),
                );
                text.push_str(&format!(
                    "hint: none of the stamped files is under {base}; run from the directory they were stamped in, or give --base DIR\n"
                ));
            }
            if let Some(t) = &report.trusted_time {
                text.push_str(&format!("trusted time: {} (TSA {})\n", t.gen_time, t.tsa));
            }
            for n in &report.not_proven {
                text.push_str(&format!("not proven: {n}\n"));
            }
            let verdict = serde_json::to_value(report.verdict)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default();
            text.push_str(&format!("verdict: {verdict}"));
            output::print_stdout(&text);
        }
    }
    output::finish(ExitCode::from(report.exit_code()))
}

fn extract(args: ExtractArgs) -> ExitCode {
    let result = (|| -> Result<u8> {
        let loaded = match stamp::extract::load(&args.receipt)? {
            Ok(l) => l,
            Err(e) => {
                eprintln!(
                    "vouch: {}: rejected: {e} ({})",
                    args.receipt.display(),
                    e.code()
                );
                return Ok(EXIT_REJECTED);
            }
        };
        let base = canonical_base(args.base.as_deref())?;
        let given = args.file.as_os_str().as_bytes();
        let given = given.strip_prefix(b"./").unwrap_or(given);
        let found = loaded.find(given).or_else(|| {
            vouch::files::path::relative_to(&base, &args.file)
                .ok()
                .flatten()
                .and_then(|rel| loaded.find(&rel))
        });
        let Some((index, entry)) = found else {
            return Err(Error::Usage(format!(
                "{}: the receipt holds no such file",
                args.file.display()
            )));
        };
        match args.format {
            ExtractFormat::Vouch => {
                loaded.write_extract(index, &args.out)?;
                eprintln!(
                    "vouch: wrote {} ({}, leaf {index} of {})",
                    args.out.display(),
                    entry.display(),
                    loaded.entries.len()
                );
            }
            ExtractFormat::Minisign => {
                let key_path = args.key.as_deref().ok_or(Error::MissingOption {
                    option: "--key KEY",
                    needed_for: "--proof-format minisign",
                })?;
                let key = keys::read_signer_key(key_path)?;
                let p = &loaded.statement.predicate;
                if stamp::run::keyid(&key) != p.signer {
                    return Err(Error::Usage(format!(
                        "{}: not the key that signed this stamp ({})",
                        key_path.display(),
                        p.signer
                    )));
                }
                let own = vouch::chain::TrustedKeys::new([key.verifier()])?;
                if let Err(e) = loaded.signed_by(&own) {
                    eprintln!(
                        "vouch: {}: rejected: {e} ({}); nothing signed",
                        args.receipt.display(),
                        e.code()
                    );
                    return Ok(EXIT_REJECTED);
                }
                let file = vouch::files::path::under(&base, &entry.path);
                let comment = vouch::stamp::export::minisign_comment(p, entry, None);
                let sig = vouch::stamp::export::minisign_signature(&key, &file, entry, &comment)?;
                vouch::chain::keys::write_new_file(&args.out, sig.as_bytes(), 0o644)?;
                eprintln!(
                    "vouch: wrote {} (minisign signature of {}; public key: vouch key export {}.pub --key-format minisign)",
                    args.out.display(),
                    entry.display(),
                    key_path.display()
                );
            }
        }
        Ok(EXIT_VERIFIED)
    })();
    match result {
        Ok(code) => output::finish(ExitCode::from(code)),
        Err(e) => error::report(&e, Format::Table),
    }
}
