//! Shared rendering and exit-code plumbing for every subcommand.

use std::io::Write;
use std::process::ExitCode;

/// Exit code: everything verified.
pub const EXIT_VERIFIED: u8 = 0;
/// Exit code: evidence examined and rejected (or drift found).
pub const EXIT_REJECTED: u8 = 1;
/// Exit code: operational error (usage, unreadable file, network).
pub const EXIT_ERROR: u8 = 2;

/// Output format for reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Default)]
pub enum Format {
    /// A table for people.
    #[default]
    Table,
    /// One JSON document for machines.
    Json,
}

/// Writes `text` to stdout; a closed pipe (e.g. `| head`) is not an error.
pub fn print_stdout(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    if !text.ends_with('\n') {
        let _ = out.write_all(b"\n");
    }
    let _ = out.flush();
}

/// Writes a value as pretty JSON to stdout.
pub fn print_json(value: &impl serde::Serialize) {
    match serde_json::to_string_pretty(value) {
        Ok(text) => print_stdout(&text),
        Err(e) => eprintln!("vouch: error: cannot render JSON: {e}"),
    }
}

/// Writes a value as one line of compact JSON to stdout (ndjson).
pub fn print_json_line(value: &impl serde::Serialize) {
    match serde_json::to_string(value) {
        Ok(text) => print_stdout(&text),
        Err(e) => eprintln!("vouch: error: cannot render JSON: {e}"),
    }
}

/// Streams a (possibly large) value as compact JSON to stdout.
pub fn print_json_compact(value: &impl serde::Serialize) {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let _ = serde_json::to_writer(&mut out, value)
        .map_err(std::io::Error::from)
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush());
}

/// Reports a library error in the chosen format and returns its exit code:
/// 1 when the evidence was rejected, 2 for an operational error.
pub fn report_error(err: &vouch::Error, format: Format) -> ExitCode {
    let code = if err.is_rejection() {
        EXIT_REJECTED
    } else {
        EXIT_ERROR
    };
    match format {
        Format::Json => print_json(&serde_json::json!({
            "error": { "code": err.code(), "message": err.to_string() },
            "exit_code": code,
        })),
        Format::Table => eprintln!("vouch: error: {err}"),
    }
    ExitCode::from(code)
}
