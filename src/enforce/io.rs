//! The wrapper's pipes: bounded line readers and writer threads.
//!
//! A reader hands over whole lines (without `\n` and a `\r` before it) of
//! at most `limit` bytes; a longer line is skipped to its end without being
//! buffered and reported as [`Line::TooLong`]. Writers take whole messages
//! and add the newline; a write error ends the writer (the peer is gone).

use std::io::{BufRead, Read, Write};
use std::sync::mpsc::{Receiver, Sender, SyncSender};

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

/// Writes each message and a newline to `out`, flushing after the queue
/// is empty; ends at the first write error or when every sender is gone.
pub fn write_lines<W: Write>(mut out: W, rx: Receiver<Vec<u8>>) {
    while let Ok(first) = rx.recv() {
        let mut buf = first;
        buf.push(b'\n');
        if out.write_all(&buf).is_err() {
            return;
        }
        while let Ok(mut more) = rx.try_recv() {
            more.push(b'\n');
            if out.write_all(&more).is_err() {
                return;
            }
        }
        if out.flush().is_err() {
            return;
        }
    }
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

/// A writer thread's queue; sending to a stopped writer is ignored.
#[derive(Clone)]
pub struct Outlet(pub Option<SyncSender<Vec<u8>>>);

impl Outlet {
    pub fn send(&self, message: Vec<u8>) {
        if let Some(tx) = &self.0 {
            let _ = tx.send(message);
        }
    }

    /// Closes the queue: the writer ends after what is queued.
    pub fn close(&mut self) {
        self.0 = None;
    }
}
