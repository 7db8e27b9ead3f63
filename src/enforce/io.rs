//! The wrapper's pipes: bounded line readers and writer threads.
//!
//! A reader hands over whole lines (without `\n` and a `\r` before it) of
//! at most `limit` bytes; a longer line is skipped to its end without being
//! buffered and reported as [`Line::TooLong`]. Writers take whole messages
//! and add the newline; a write error ends the writer (the peer is gone).

use std::io::{BufRead, Read, Write};
use std::sync::mpsc::Sender;

/// What a reader saw.
#[derive(Debug)]
pub enum Line {
    Data(Vec<u8>),
    TooLong,
    Eof,
}

/// Reads lines from `input` until end of file, sending each through `send`.
pub fn read_lines<R: Read, E>(input: R, limit: usize, tx: Sender<E>, wrap: impl Fn(Line) -> E) {
    let mut reader = std::io::BufReader::with_capacity(64 << 10, input);
    let mut line = Vec::new();
    let mut skipping = false;
    loop {
        let buf = match reader.fill_buf() {
            Ok([]) => break,
            Ok(buf) => buf,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        let (chunk, end) = match memchr::memchr(b'\n', buf) {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        if !skipping {
            if line.len() + chunk.len() > limit.saturating_add(1) {
                skipping = true;
                line = Vec::new();
            } else {
                line.extend_from_slice(chunk);
            }
        }
        let used = end.unwrap_or(buf.len());
        reader.consume(used);
        if end.is_some() {
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            let event = if skipping || line.len() > limit {
                Line::TooLong
            } else if line.iter().all(u8::is_ascii_whitespace) {
                line.clear();
                continue;
            } else {
                Line::Data(std::mem::take(&mut line))
            };
            skipping = false;
            line.clear();
            if tx.send(wrap(event)).is_err() {
                return;
            }
        }
    }
    // A last line without a newline is incomplete: not a message.
    let _ = tx.send(wrap(Line::Eof));
}

/// Copies the child's stderr to ours, line by line, as it comes.
pub fn pass_stderr<R: Read>(input: R) {
    let mut reader = std::io::BufReader::new(input);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                let mut err = std::io::stderr().lock();
                let _ = err.write_all(&buf);
                let _ = err.flush();
            }
        }
    }
}

/// Where messages to one side go: written at once by the loop (a pipe
/// write blocks only while the peer does not read, which is the
/// backpressure the peer asked for). A failed write closes the outlet: the
/// peer is gone.
pub struct Outlet(Option<Box<dyn Write + Send>>);

impl Outlet {
    pub fn new(out: impl Write + Send + 'static) -> Outlet {
        Outlet(Some(Box::new(out)))
    }

    pub fn send(&mut self, mut message: Vec<u8>) {
        let Some(out) = &mut self.0 else {
            return;
        };
        message.push(b'\n');
        if out.write_all(&message).and_then(|()| out.flush()).is_err() {
            self.0 = None;
        }
    }

    /// Closes the outlet (for the server: its stdin, so it sees the end).
    pub fn close(&mut self) {
        self.0 = None;
    }
}
