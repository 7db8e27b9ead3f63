//! How a failed command ends: the library's error, rendered in the
//! chosen format, and its exit code (1 when evidence was examined and
//! rejected, 2 for an operational error; docs/FORMAT.md).

use crate::output::{EXIT_ERROR, EXIT_REJECTED, Format, print_json};
use std::process::ExitCode;

/// Reports `err` (on stderr for people, as the JSON report on stdout for
/// machines) and returns its exit code.
pub fn report(err: &vouch::Error, format: Format) -> ExitCode {
    let code = if err.is_rejection() {
        EXIT_REJECTED
    } else {
        EXIT_ERROR
    };
    match format {
        Format::Json => print_json(&vouch::error::ErrorReport::new(err, code)),
        // "error" is kept for exit 2 (the check could not be done);
        // evidence that was checked and failed is "rejected" (exit 1).
        Format::Table if code == EXIT_REJECTED => eprintln!("vouch: rejected: {err}"),
        Format::Table => eprintln!("vouch: error: {err}"),
    }
    ExitCode::from(code)
}

/// The command's own exit code, or its error reported ([`report`]).
pub fn or_report(result: vouch::Result<ExitCode>, format: Format) -> ExitCode {
    result.unwrap_or_else(|e| report(&e, format))
}
