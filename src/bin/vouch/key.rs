//! CLI for `vouch key export`.

use crate::error;
use crate::output::{self, EXIT_VERIFIED, Format};
use std::path::PathBuf;
use std::process::ExitCode;
use vouch::Result;
use vouch::chain::keys;
use vouch::stamp::minisign;

/// `vouch key SUBCOMMAND`.
#[derive(clap::Args)]
pub struct KeyCmd {
    #[command(subcommand)]
    sub: KeySub,
}

#[derive(clap::Subcommand)]
enum KeySub {
    /// Write a public key in another tool's format (the key stays the same).
    Export(ExportArgs),
}

#[derive(clap::Args)]
#[command(
    after_help = "minisign: a public key file for `minisign -V -p FILE` (its second line is what `minisign -V -P` takes). The 8-byte minisign key id is derived from the vouch key: the first 8 bytes of SHA-256(name || 0x0A || 0x01 || public key), whose first 4 are the note key id. minisign prints it byte-reversed, as a little-endian number."
)]
struct ExportArgs {
    /// The public key file (KEY.pub), holding exactly one key.
    key: PathBuf,
    /// The key format to write.
    #[arg(
        long = "key-format",
        alias = "format",
        value_enum,
        value_name = "FORMAT"
    )]
    format: ExportFormat,
    /// Write to this new file (never replaced) instead of stdout.
    #[arg(long)]
    out: Option<PathBuf>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum ExportFormat {
    /// A minisign public key file.
    Minisign,
    /// The Ed25519 public key as SPKI PEM (for Sigstore verifiers).
    Pem,
}

/// Runs `vouch key ...`.
pub fn run(cmd: KeyCmd) -> ExitCode {
    match cmd.sub {
        KeySub::Export(a) => export(a),
    }
}

fn export(args: ExportArgs) -> ExitCode {
    let result = (|| -> Result<ExitCode> {
        let key = keys::read_verifier_key(&args.key)?;
        let text = match args.format {
            ExportFormat::Minisign => minisign::public_key(&key),
            ExportFormat::Pem => vouch::stamp::sigstore::ed25519_public_key_pem(&key.public_key()),
        };
        match &args.out {
            Some(out) => {
                keys::write_new_file(out, text.as_bytes(), 0o644)?;
                match args.format {
                    ExportFormat::Minisign => eprintln!(
                        "wrote {} (minisign public key {} for {})",
                        out.display(),
                        minisign::display_key_id(minisign::key_id(&key)),
                        key.name()
                    ),
                    ExportFormat::Pem => eprintln!(
                        "wrote {} (Ed25519 public key of {})",
                        out.display(),
                        key.name()
                    ),
                }
            }
            None => output::print_stdout(&text),
        }
        Ok(ExitCode::from(EXIT_VERIFIED))
    })();
    result.unwrap_or_else(|e| error::report(&e, Format::Table))
}
