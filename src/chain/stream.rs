//! `vouch append` without a body: one JSON body per line of a stream,
//! appended in batches of what is already buffered, so interactive input
//! is written line by line and bulk input in large batches (one lock and
//! one fsync each). Each batch is acknowledged as soon as it is durable.

use super::record::{self, MAX_LINE_LEN};
use super::writer::{self, Appended, BodySource};
use crate::note::SignerKey;
use crate::{Error, Result};
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// Most records appended as one batch.
pub const MAX_BATCH: usize = 4096;

/// Appends every body of `input` (one JSON value per line; blank lines
/// skipped) to `log` as records of `kind`, calling `acked` with each batch
/// once it is written and synced. A line that is not a usable body, or
/// longer than a record line may be, ends the run with its error after
/// the lines before it were appended; returns how many were.
pub fn append_lines<R: Read>(
    log: &Path,
    key: &SignerKey,
    kind: &str,
    input: &mut BufReader<R>,
    acked: &mut dyn FnMut(&[Appended]),
) -> Result<u64> {
    let mut line_no = 0u64;
    let mut appended = 0u64;
    let mut raw = Vec::new();
    loop {
        let mut batch: Vec<serde_json::Value> = Vec::new();
        let mut bad: Option<Error> = None;
        loop {
            raw.clear();
            let n = (&mut *input)
                .take(MAX_LINE_LEN as u64 + 2)
                .read_until(b'\n', &mut raw)
                .map_err(|e| Error::io("<stdin>", e))?;
            if n == 0 {
                break;
            }
            line_no += 1;
            if raw.len() > MAX_LINE_LEN + 1 {
                bad = Some(Error::InputLineTooLong {
                    line: line_no,
                    max: MAX_LINE_LEN,
                });
                break;
            }
            let text = raw.strip_suffix(b"\n").unwrap_or(&raw);
            let text = text.strip_suffix(b"\r").unwrap_or(text);
            if text.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match record::parse_body(text) {
                Ok(v) => batch.push(v),
                Err(problem) => {
                    bad = Some(Error::Body {
                        at: BodySource::StdinLine(line_no),
                        problem,
                    });
                    break;
                }
            }
            // Nothing more buffered: write what there is now rather than
            // wait for input that may come much later.
            if batch.len() >= MAX_BATCH || !input.buffer().contains(&b'\n') {
                break;
            }
        }
        if !batch.is_empty() {
            let records: Vec<(&str, &serde_json::Value)> =
                batch.iter().map(|b| (kind, b)).collect();
            let done = writer::append(log, key, &records)?;
            appended += done.len() as u64;
            acked(&done);
        }
        if let Some(e) = bad {
            return Err(e);
        }
        if batch.is_empty() {
            return Ok(appended);
        }
    }
}
