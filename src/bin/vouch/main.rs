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
    /// Generate an Ed25519 signing key pair for a log origin.
    Keygen(chain::KeygenArgs),
    /// Public keys in other tools' formats: `key export KEY.pub --format minisign`.
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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
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
    };
    // A failed write of the report (other than a closed pipe) is exit 2.
    output::finish(code)
}
