//! The wrapper's pipes: bounded line readers, and writers that never block
//! the wrapper's loop.
//!
//! A reader hands over whole lines (without `\n` and a `\r` before it) of
//! at most `limit` bytes; a longer line is skipped to its end without being
//! buffered and reported as [`Line::TooLong`].
//!
//! A [`Sink`] takes whole messages, adds the newline and writes what the
//! peer takes without blocking; the rest waits in a backlog that the loop
//! pumps on every turn. So a peer that stops reading (a client that no
//! longer reads stdout, a server busy on a long call) never stops the loop:
//! signals, the checkpoint cadence and the other side go on. Only a
//! backlog past its cap makes `send` wait for the peer (the backpressure
//! the peer asked for), and then only until a stop signal comes. A write
//! error closes the sink (the peer is gone). Diagnostics go to stderr
//! through [`Diag`], a thread of their own, for the same reason.

use std::io::{BufRead, Read, Write};
use std::os::fd::AsFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Sender, SyncSender, TrySendError, sync_channel};

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

/// The most bytes a sink holds for a peer that does not read before
/// `send` waits for it.
pub const BACKLOG_CAP: usize = 64 << 20;

/// Messages to one peer, written without blocking the loop.
pub struct Sink {
    out: Option<std::fs::File>,
    /// Whether `out` is non-blocking (a pipe or socket); a terminal or a
    /// file is written with blocking writes (they do not stall on a peer).
    nonblocking: bool,
    backlog: Vec<u8>,
    /// How much of `backlog` is written.
    done: usize,
    /// Bytes queued since the start: the stream offset after the last one.
    queued: u64,
    /// Bytes written since the start.
    written: u64,
    /// Close once the backlog is written.
    closing: bool,
    /// A stop signal came: stop waiting for the peer.
    stop: Arc<AtomicBool>,
    /// The peer is known to be gone (the server's stdout closed).
    gone: Arc<AtomicBool>,
}

impl Sink {
    /// A sink on `out`, made non-blocking when it is a pipe or a socket
    /// (only then: O_NONBLOCK on a terminal would be shared with the
    /// shell).
    pub fn new(out: std::os::fd::OwnedFd, stop: Arc<AtomicBool>, gone: Arc<AtomicBool>) -> Sink {
        use std::os::unix::fs::FileTypeExt;
        let out = std::fs::File::from(out);
        let nonblocking = out
            .metadata()
            .is_ok_and(|m| m.file_type().is_fifo() || m.file_type().is_socket())
            && rustix::io::ioctl_fionbio(&out, true).is_ok();
        Sink {
            out: Some(out),
            nonblocking,
            backlog: Vec::new(),
            done: 0,
            queued: 0,
            written: 0,
            closing: false,
            stop,
            gone,
        }
    }

    /// Queues one message and a newline and writes what the peer takes;
    /// the stream offset just after them, or `None` when the sink is
    /// closed (nothing queued).
    pub fn send(&mut self, message: &[u8]) -> Option<u64> {
        if self.out.is_none() || self.closing {
            return None;
        }
        self.backlog.extend_from_slice(message);
        self.backlog.push(b'\n');
        self.queued += message.len() as u64 + 1;
        let end = self.queued;
        self.pump();
        while self.out.is_some() && self.backlog.len() - self.done > BACKLOG_CAP {
            if !self.wait_writable() {
                break;
            }
            self.pump();
        }
        Some(end)
    }

    /// Writes what the peer takes now; true while a backlog remains.
    pub fn pump(&mut self) -> bool {
        while let Some(out) = &mut self.out
            && self.done < self.backlog.len()
        {
            match out.write(&self.backlog[self.done..]) {
                Ok(0) => self.out = None,
                Ok(n) => {
                    self.done += n;
                    self.written += n as u64;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(_) => self.out = None,
            }
        }
        if self.done == self.backlog.len() || self.out.is_none() {
            self.backlog.clear();
            self.done = 0;
            if self.closing {
                self.out = None;
            }
        } else if self.done > (1 << 20) {
            self.backlog.drain(..self.done);
            self.done = 0;
        }
        self.pending()
    }

    /// Waits (at most 50 ms) until the peer can take more; false when
    /// waiting makes no sense (a stop signal, the peer gone, not a pipe).
    fn wait_writable(&self) -> bool {
        let Some(out) = &self.out else {
            return false;
        };
        if !self.nonblocking || self.stop.load(Ordering::SeqCst) || self.gone.load(Ordering::SeqCst)
        {
            return false;
        }
        let mut fds = [rustix::event::PollFd::new(
            out,
            rustix::event::PollFlags::OUT,
        )];
        let wait = rustix::event::Timespec {
            tv_sec: 0,
            tv_nsec: 50_000_000,
        };
        let _ = rustix::event::poll(&mut fds, Some(&wait));
        true
    }

    /// Whether bytes wait for the peer.
    pub fn pending(&self) -> bool {
        self.out.is_some() && self.done < self.backlog.len()
    }

    /// Writes the backlog for at most `limit` (the session's end).
    pub fn drain_for(&mut self, limit: std::time::Duration) {
        let deadline = std::time::Instant::now() + limit;
        while self.pump() && std::time::Instant::now() < deadline {
            if !self.wait_writable() {
                break;
            }
        }
    }

    /// Closes the sink once its backlog is written (the peer then sees the
    /// end of its input).
    pub fn close(&mut self) {
        self.closing = true;
        self.pump();
    }

    /// Closes the sink now, dropping what the peer has not taken.
    pub fn abandon(&mut self) {
        self.out = None;
        self.backlog = Vec::new();
        self.done = 0;
    }

    /// Whether the sink is open (not closed, not closing).
    pub fn is_open(&self) -> bool {
        self.out.is_some() && !self.closing
    }

    /// Bytes written since the start.
    pub fn written(&self) -> u64 {
        self.written
    }
}

/// The server's stdin: a [`Sink`] on a pipe whose read end the wrapper
/// keeps a handle on, so that once the server is gone it can tell how many
/// of the bytes written the server never read (FIONREAD). Every message's
/// end offset in the stream is known, so "the server read this call" is
/// exact at the level of the pipe.
pub struct ServerStdin {
    pub sink: Sink,
    unread: std::io::PipeReader,
}

impl ServerStdin {
    pub fn new(
        to: std::io::PipeWriter,
        unread: std::io::PipeReader,
        stop: Arc<AtomicBool>,
        gone: Arc<AtomicBool>,
    ) -> ServerStdin {
        ServerStdin {
            sink: Sink::new(std::os::fd::OwnedFd::from(to), stop, gone),
            unread,
        }
    }

    /// How many bytes of the stream the server has read: every byte
    /// written less those still in the pipe. Final once the server is gone.
    pub fn read_by_server(&self) -> u64 {
        let left = rustix::io::ioctl_fionread(self.unread.as_fd()).unwrap_or(0);
        self.sink.written().saturating_sub(left)
    }
}

/// Diagnostics for stderr, written by a thread of their own: a host that
/// does not read the wrapper's stderr never stops its loop (lines past a
/// small queue are dropped, and counted).
#[derive(Clone)]
pub struct Diag {
    tx: SyncSender<String>,
    dropped: Arc<std::sync::atomic::AtomicU64>,
}

impl Diag {
    pub fn start() -> Diag {
        let (tx, rx) = sync_channel::<String>(256);
        let _ = std::thread::Builder::new()
            .name("wrap-diagnostics".into())
            .spawn(move || {
                for line in rx {
                    let mut err = std::io::stderr().lock();
                    let _ = writeln!(err, "{line}");
                    let _ = err.flush();
                }
            });
        Diag {
            tx,
            dropped: Arc::default(),
        }
    }

    /// Queues one line (without its newline).
    pub fn say(&self, line: String) {
        if let Err(TrySendError::Full(_)) = self.tx.try_send(line) {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }
}
