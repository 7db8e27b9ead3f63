//! Shared rendering and exit-code plumbing for every subcommand.

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;
use std::sync::{Mutex, MutexGuard, PoisonError};

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

/// A new table in the one style every command uses (Unicode boxes,
/// condensed rows). Every table of the CLI starts here.
pub fn table() -> comfy_table::Table {
    let mut t = comfy_table::Table::new();
    t.load_style(comfy_table::presets::UTF8_FULL_CONDENSED);
    t
}

/// `-q/--quiet`, the same flag (name and help) in every command that prints
/// one line per item: without those lines; the verdict or summary and the
/// errors are still printed, and the exit code is the same.
#[derive(clap::Args, Clone, Copy, Debug, Default)]
pub struct Quiet {
    /// Print no line per item; the summary and errors still are.
    #[arg(short, long)]
    pub quiet: bool,
}

// Report output goes to stdout only through this module. The first write or
// flush error is kept, nothing more is written after it, and `main` passes
// the command's exit code through [`finish`], which flushes stdout and
// decides:
//
// - no error: the command's own exit code;
// - a closed pipe (EPIPE, e.g. `vouch verify ... | head`): quiet, and still
//   the command's own exit code. Every command decides its verdict before it
//   renders, so the verdict is never lost to a reader that stopped early
//   (ripgrep exits 0 here; a verifier keeps its verdict so that
//   `set -o pipefail` scripts still see a rejection);
// - any other error (ENOSPC on a full disk, EIO): a message on stderr and
//   exit 2, never a silent 0 with a cut-off report.

/// The first error writing to stdout, if any.
static STDOUT_ERROR: Mutex<Option<io::Error>> = Mutex::new(None);

fn stdout_error() -> MutexGuard<'static, Option<io::Error>> {
    STDOUT_ERROR.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What a command already did, for stderr should its report then fail to
/// be written (see [`note_if_stdout_fails`]).
static DONE_ANYWAY: Mutex<Option<String>> = Mutex::new(None);

/// Records what the command has already done (e.g. written key files), so
/// that if the report cannot be written to stdout the error on stderr is
/// followed by this note, and nobody takes the exit 2 for "nothing done".
pub fn note_if_stdout_fails(note: String) {
    *DONE_ANYWAY.lock().unwrap_or_else(PoisonError::into_inner) = Some(note);
}

/// Runs `render` with a buffered stdout, flushes it, and keeps the first
/// error for [`finish`]. After an error nothing more is written.
///
/// This is the one way to write report output; streaming renderers (e.g. a
/// large JSON document written one log at a time) write into the given
/// writer and return its errors with `?`.
pub fn write_stdout(render: impl FnOnce(&mut dyn Write) -> io::Result<()>) {
    if stdout_error().is_some() {
        return;
    }
    let mut out = BufWriter::new(io::stdout().lock());
    let result = render(&mut out).and_then(|()| out.flush());
    if let Err(e) = result {
        stdout_error().get_or_insert(e);
    }
}

/// Writes `text` and a final newline (unless it has one) to stdout.
pub fn print_stdout(text: &str) {
    write_stdout(|out| {
        out.write_all(text.as_bytes())?;
        if !text.ends_with('\n') {
            out.write_all(b"\n")?;
        }
        Ok(())
    });
}

/// Writes a value as pretty JSON and a newline to stdout.
pub fn print_json(value: &impl serde::Serialize) {
    write_stdout(|out| {
        serde_json::to_writer_pretty(&mut *out, value)?;
        out.write_all(b"\n")
    });
}

/// Flushes stdout and maps a failed write to the exit code (see above).
/// `main` calls it once, with the code the command returned.
pub fn finish(code: ExitCode) -> ExitCode {
    let flushed = io::stdout().lock().flush();
    let error = stdout_error().take().or(flushed.err());
    match error {
        None => code,
        Some(e) if e.kind() == io::ErrorKind::BrokenPipe => code,
        Some(e) => {
            eprintln!("vouch: error: cannot write the report to stdout: {e}");
            let done = DONE_ANYWAY
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            if let Some(done) = done {
                eprintln!("vouch: note: {done}");
            }
            ExitCode::from(EXIT_ERROR)
        }
    }
}

/// Writes a value as one line of compact JSON to stdout (ndjson).
pub fn print_json_line(value: &impl serde::Serialize) {
    write_stdout(|out| {
        serde_json::to_writer(&mut *out, value)?;
        out.write_all(b"\n")
    });
}

/// Streams a (possibly large) value as compact JSON to stdout: serde writes
/// it piece by piece (a fleet report, one log at a time).
pub fn print_json_compact(value: &impl serde::Serialize) {
    print_json_line(value);
}

/// The most characters one line of a table cell shows. A table pads every
/// row to its widest line, so one long value (a whole configuration file,
/// a tool name of a megabyte) would otherwise be paid for once per row; a
/// table is then bounded by its rows times this width, whatever the input.
/// The JSON formats always carry the full values.
pub const CELL_CHARS: usize = 160;

/// Shortens the lines of table cells to [`CELL_CHARS`] characters (the
/// last one shown as `…`) and remembers whether it did, so that a table
/// can say so under itself ([`Clip::note`]).
#[derive(Debug, Default)]
pub struct Clip {
    clipped: bool,
}

impl Clip {
    /// `text` with each line cut to [`CELL_CHARS`] characters.
    pub fn cell(&mut self, text: &str) -> String {
        let mut out = String::with_capacity(text.len().min(4 * CELL_CHARS));
        for (i, line) in text.split('\n').enumerate() {
            if i > 0 {
                out.push('\n');
            }
            match line.char_indices().nth(CELL_CHARS) {
                None => out.push_str(line),
                Some(_) => {
                    self.clipped = true;
                    let cut = line
                        .char_indices()
                        .nth(CELL_CHARS - 1)
                        .map_or(line.len(), |(at, _)| at);
                    out.push_str(&line[..cut]);
                    out.push('…');
                }
            }
        }
        out
    }

    /// A line for under the table when some value was shortened.
    pub fn note(&self) -> Option<String> {
        self.clipped.then(|| {
            format!(
                "(values longer than {CELL_CHARS} characters are shortened here; --format json has them in full)\n"
            )
        })
    }
}

/// `n` and the noun, singular for 1: `1 log`, `2 logs`, `0 entries`.
pub fn count(n: impl Into<u64>, noun: &str) -> String {
    vouch::error::count(n.into(), noun)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_cuts_each_line_by_characters() {
        let mut c = Clip::default();
        assert_eq!(c.cell("short\nlines"), "short\nlines");
        assert!(c.note().is_none());
        let exact = "é".repeat(CELL_CHARS);
        assert_eq!(c.cell(&exact), exact);
        assert!(c.note().is_none());
        let long = format!("{}\nok", "é".repeat(CELL_CHARS + 1));
        let cut = c.cell(&long);
        assert_eq!(cut, format!("{}…\nok", "é".repeat(CELL_CHARS - 1)));
        assert!(c.note().is_some());
    }
}
