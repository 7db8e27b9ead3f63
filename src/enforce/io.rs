//! The wrapper's pipes: bounded line readers and writer threads.
//!
//! A reader hands over whole lines (without `\n` and a `\r` before it) of
//! at most `limit` bytes; a longer line is skipped to its end without being
//! buffered and reported as [`Line::TooLong`]. Writers take whole messages
//! and add the newline; a write error ends the writer (the peer is gone).

use std::io::{BufRead, Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
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

    /// Writes one message; false when it could not be written (the outlet
    /// is closed, or the write failed and closed it).
    pub fn send(&mut self, mut message: Vec<u8>) -> bool {
        let Some(out) = &mut self.0 else {
            return false;
        };
        message.push(b'\n');
        if out.write_all(&message).and_then(|()| out.flush()).is_err() {
            self.0 = None;
            return false;
        }
        true
    }

    /// Closes the outlet (for the server: its stdin, so it sees the end).
    pub fn close(&mut self) {
        self.0 = None;
    }
}

/// The server's stdin, as the wrapper writes it: a pipe whose write end is
/// non-blocking (a full pipe is waited on with poll(2), so a server that is
/// gone cannot hang the wrapper) and whose read end the wrapper keeps a
/// handle on, so that once the server is gone it can tell how many of the
/// bytes written the server never read (FIONREAD). Every message's end
/// offset in the stream is known, so "the server read this call" is exact
/// at the level of the pipe.
pub struct ServerStdin {
    to: Option<std::io::PipeWriter>,
    unread: std::io::PipeReader,
    written: u64,
    /// Set when the server's stdout closed: a full pipe will not drain.
    gone: Arc<AtomicBool>,
}

impl ServerStdin {
    pub fn new(
        to: std::io::PipeWriter,
        unread: std::io::PipeReader,
        gone: Arc<AtomicBool>,
    ) -> std::io::Result<ServerStdin> {
        rustix::io::ioctl_fionbio(&to, true)?;
        Ok(ServerStdin {
            to: Some(to),
            unread,
            written: 0,
            gone,
        })
    }

    /// Writes one message and a newline; the offset in the stream just
    /// after them, or `None` when they could not be written whole (the
    /// stdin is closed, or the server is gone), which closes it.
    pub fn send(&mut self, message: &[u8]) -> Option<u64> {
        let out = self.to.as_mut()?;
        let mut line = Vec::with_capacity(message.len() + 1);
        line.extend_from_slice(message);
        line.push(b'\n');
        let mut rest = &line[..];
        while !rest.is_empty() {
            match out.write(rest) {
                Ok(0) => break,
                Ok(n) => {
                    self.written += n as u64;
                    rest = &rest[n..];
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    if self.gone.load(Ordering::SeqCst) {
                        break;
                    }
                    let mut fds = [rustix::event::PollFd::new(
                        &*out,
                        rustix::event::PollFlags::OUT,
                    )];
                    let wait = rustix::event::Timespec {
                        tv_sec: 0,
                        tv_nsec: 50_000_000,
                    };
                    let _ = rustix::event::poll(&mut fds, Some(&wait));
                }
                Err(_) => break,
            }
        }
        if rest.is_empty() {
            Some(self.written)
        } else {
            self.to = None;
            None
        }
    }

    /// Closes the write end (the server sees the end of its input).
    pub fn close(&mut self) {
        self.to = None;
    }

    /// How many bytes were written.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// How many bytes of the stream the server has read: every byte
    /// written less those still in the pipe. Final once the server is gone.
    pub fn read_by_server(&self) -> u64 {
        let left = rustix::io::ioctl_fionread(&self.unread).unwrap_or(0);
        self.written.saturating_sub(left)
    }
}
