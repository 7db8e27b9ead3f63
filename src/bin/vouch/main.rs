//! The `vouch` command: parse arguments, call one library function, render
//! the result, map it to an exit code (0 verified, 1 rejected, 2 error).
//! No verification logic lives here.
#![forbid(unsafe_code)]

mod anchor;
mod chain;
mod drift;
mod error;
mod key;
mod output;
mod policy;
mod receipt;
mod stamp;
mod tsa;
mod vet;
mod wrap;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

/// vouch: tamper-evident logs, signed checkpoints and offline verification.
#[derive(Parser)]
#[command(name = "vouch", about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Generate an Ed25519 signing key pair for a log origin.
    Keygen(chain::KeygenArgs),
    /// Public keys in other tools' formats: `key export KEY.pub --key-format minisign`.
    Key(key::KeyCmd),
    /// Append records to a log (one, or one per stdin line).
    Append(chain::AppendArgs),
    /// Sign a checkpoint over every record and append it to the log.
    Checkpoint(chain::CheckpointArgs),
    /// Rotate a log's signing key (signed by the old and the new key).
    Rotate(chain::RotateArgs),
    /// Remove an incomplete final line left by a crash.
    Repair(chain::RepairArgs),
    /// Verify logs offline: links, canonical form, Merkle roots, signatures.
    Verify(chain::VerifyArgs),
    /// Export an inclusion proof (C2SP tlog-proof) for one record.
    Prove(chain::ProveArgs),
    /// Verify an inclusion proof offline.
    VerifyProof(chain::VerifyProofArgs),
    /// Verify that a log's newer checkpoint extends one kept earlier.
    VerifyConsistency(chain::VerifyConsistencyArgs),
    /// Anchor checkpoints to WORM storage; `anchor verify`, `anchor doctor`.
    Anchor(anchor::AnchorCmd),
    /// Make a self-contained evidence receipt for a record; `receipt verify`.
    Receipt(receipt::ReceiptCmd),
    /// Stamp files, trees or a stream in one signed batch; `stamp verify`,
    /// `stamp extract`.
    Stamp(stamp::StampCmd),
    /// Detect drift in file trees, configuration and MCP tool definitions,
    /// with the baseline and every acceptance in the signed chain.
    Drift(drift::DriftCmd),
    /// Run an MCP stdio server behind a policy, every decision in the chain.
    Wrap(wrap::WrapArgs),
    /// Check and test `vouch wrap` policies.
    Policy(policy::PolicyCmd),
    /// Scan MCP tool definitions for poisoning (a file, a config, a server).
    Scan(vet::ScanArgs),
    /// Review, approve and revoke the tool pins `vouch wrap` keeps in a log.
    Pins(vet::PinsCmd),
    /// RFC 3161 time stamps: request, verify, show.
    #[command(subcommand)]
    Tsa(tsa::TsaCommand),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    #[command(
        after_help = "Install, e.g.: `vouch completions bash > ~/.local/share/bash-completion/completions/vouch`, `vouch completions zsh > \"${fpath[1]}/_vouch\"`, `vouch completions fish > ~/.config/fish/completions/vouch.fish`."
    )]
    Completions(CompletionsArgs),
    /// Print the man page vouch(1) (roff), or write one page per subcommand.
    Man(ManArgs),
}

#[derive(clap::Args)]
struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

#[derive(clap::Args)]
struct ManArgs {
    /// Write vouch.1 and one page per subcommand (vouch-verify.1, ...) into
    /// this existing directory instead of printing vouch(1).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

/// The enabled cargo features of this build.
const FEATURES: &[(&str, bool)] = &[("s3", cfg!(feature = "s3"))];

/// `--version`: `0.1.0 (<commit>[-dirty] <date>; features: s3)`; the
/// commit is taken at build time by build.rs.
fn version() -> &'static str {
    static VERSION: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    VERSION.get_or_init(|| {
        let features: Vec<&str> = FEATURES
            .iter()
            .filter(|(_, on)| *on)
            .map(|(name, _)| *name)
            .collect();
        let features = if features.is_empty() {
            "none".to_owned()
        } else {
            features.join(", ")
        };
        format!(
            "{} ({}; features: {features})",
            env!("CARGO_PKG_VERSION"),
            env!("VOUCH_COMMIT")
        )
    })
}

/// The whole command line interface, with the build's version.
fn command() -> clap::Command {
    Cli::command().version(version())
}

fn completions(args: CompletionsArgs) -> ExitCode {
    let mut cmd = command();
    // Generated in memory: clap_complete panics on a failed write, and a
    // closed pipe is quiet here as everywhere (see `output::finish`).
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "vouch", &mut script);
    output::write_stdout(|out| out.write_all(&script));
    ExitCode::from(output::EXIT_VERIFIED)
}

fn man(args: ManArgs) -> ExitCode {
    let cmd = command();
    match args.out {
        None => {
            let mut page = Vec::new();
            if let Err(e) = clap_mangen::Man::new(cmd).render(&mut page) {
                eprintln!("vouch: error: cannot render the man page: {e}");
                return ExitCode::from(output::EXIT_ERROR);
            }
            output::write_stdout(|out| out.write_all(&page));
            ExitCode::from(output::EXIT_VERIFIED)
        }
        Some(dir) => {
            if !dir.is_dir() {
                eprintln!("vouch: error: --out {}: not a directory", dir.display());
                return ExitCode::from(output::EXIT_ERROR);
            }
            match clap_mangen::generate_to(cmd, &dir) {
                Ok(()) => {
                    eprintln!("wrote the man pages into {}", dir.display());
                    ExitCode::from(output::EXIT_VERIFIED)
                }
                Err(e) => {
                    eprintln!("vouch: error: --out {}: {e}", dir.display());
                    ExitCode::from(output::EXIT_ERROR)
                }
            }
        }
    }
}

fn main() -> ExitCode {
    let cli = match Cli::from_arg_matches(&command().get_matches()) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    let code = match cli.command {
        Command::Keygen(a) => chain::keygen(a),
        Command::Append(a) => chain::append(a),
        Command::Checkpoint(a) => chain::checkpoint(a),
        Command::Rotate(a) => chain::rotate(a),
        Command::Repair(a) => chain::repair(a),
        Command::Verify(a) => chain::verify(a),
        Command::Prove(a) => chain::prove(a),
        Command::VerifyProof(a) => chain::verify_proof(a),
        Command::VerifyConsistency(a) => chain::verify_consistency(a),
        Command::Key(a) => key::run(a),
        Command::Anchor(a) => anchor::run(a),
        Command::Stamp(a) => stamp::run(a),
        Command::Receipt(a) => receipt::run(a),
        Command::Drift(a) => drift::run(a),
        Command::Wrap(a) => wrap::run(a),
        Command::Policy(a) => policy::run(a),
        Command::Scan(a) => vet::scan(a),
        Command::Pins(a) => vet::pins(a),
        Command::Tsa(cmd) => tsa::run(cmd),
        Command::Completions(a) => completions(a),
        Command::Man(a) => man(a),
    };
    // A failed write of the report (other than a closed pipe) is exit 2.
    output::finish(code)
}
