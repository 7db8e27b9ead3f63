//! The `vouch` command: parse arguments, call one library function, render
//! the result, map it to an exit code (0 verified, 1 rejected, 2 error).
//! No verification logic lives here.
#![forbid(unsafe_code)]

mod output;
mod tsa;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// vouch: tamper-evident logs, signed checkpoints and offline verification.
#[derive(Parser)]
#[command(name = "vouch", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// RFC 3161 time stamps: request, verify, show.
    #[command(subcommand)]
    Tsa(tsa::TsaCommand),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Tsa(cmd) => tsa::run(cmd),
    }
}
