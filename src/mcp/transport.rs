//! The child process and its three pipes: newline-delimited messages on
//! stdin and stdout (MCP stdio transport), stderr kept in a small ring.
//!
//! stdout and stderr are read on their own threads, so a server that writes
//! a lot of log output never blocks on a full pipe, and the caller waits
//! with a deadline. Lines are handed over a bounded channel; a line longer
//! than the limit ends reading (it is never buffered whole). The threads are
//! never joined: they end when the pipes close, which killing the child's
//! process group brings about.

use super::error::{McpError, StderrTail};
use super::spec::ServerSpec;
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How much of the server's stderr is kept for error messages.
const STDERR_RING_BYTES: usize = 8 << 10;
/// Lines waiting between the stdout thread and the caller.
const LINE_QUEUE: usize = 8;
/// How long a server may take to exit once its stdin is closed, and again
/// after SIGTERM, before the next step.
const EXIT_GRACE: Duration = Duration::from_millis(1000);

/// What the stdout thread saw.
pub(crate) enum Event {
    /// One line (1-based number), without its `\n` and a `\r` before it.
    Line { no: u64, bytes: Vec<u8> },
    /// Line `no` is longer than the limit; reading stopped.
    TooLong { no: u64 },
    /// stdout closed (or could not be read).
    Closed,
}

/// Why [`Transport::recv`] returned without a line.
pub(crate) enum RecvError {
    Timeout,
    Closed,
}

pub(crate) struct Transport {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Event>,
    stderr: Arc<Mutex<VecDeque<u8>>>,
    /// Set by the stderr thread at end of file.
    stderr_done: Arc<AtomicBool>,
    closed: bool,
    reaped: Option<ExitStatus>,
}

impl Transport {
    /// Starts the server in its own process group (so that a wrapper such
    /// as `npx` and the server it starts are stopped together).
    pub(crate) fn spawn(spec: &ServerSpec, max_line: usize) -> Result<Transport, McpError> {
        let spawn_err = |message: String| McpError::Spawn {
            program: spec.program.clone(),
            message,
        };
        // Never the wrapper itself: it would write its session into its
        // log. A `vouch wrap ... -- SERVER` entry starts SERVER directly.
        let argv: Vec<String> = std::iter::once(spec.program.clone())
            .chain(spec.args.iter().cloned())
            .collect();
        let classified =
            super::wrapped::classify_program(&argv, spec.cwd.as_deref(), spec.path_var());
        let (program, args, wrap_env) = match classified {
            Ok(None) => (spec.program.clone(), spec.args.clone(), Vec::new()),
            Ok(Some(inv)) => match inv.server.split_first() {
                Some((program, args)) => (program.clone(), args.to_vec(), inv.env),
                None => return Err(spawn_err("no server command".into())),
            },
            Err(problem) => {
                return Err(McpError::RunsVouch {
                    program: spec.program.clone(),
                    problem,
                });
            }
        };
        let mut cmd = Command::new(&program);
        cmd.args(&args)
            .envs(spec.env.iter().map(|(k, v)| (k, v)))
            .envs(wrap_env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(cwd) = &spec.cwd {
            cmd.current_dir(cwd);
        }
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            cmd.process_group(0);
        }
        let mut child = cmd.spawn().map_err(|e| spawn_err(e.to_string()))?;
        let (stdin, stdout, stderr) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take());
        let (Some(stdin), Some(stdout), Some(stderr)) = (stdin, stdout, stderr) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(spawn_err("the child's pipes are missing".to_owned()));
        };
        let ring = Arc::new(Mutex::new(VecDeque::with_capacity(STDERR_RING_BYTES)));
        let (tx, rx) = sync_channel(LINE_QUEUE);
        let done = Arc::new(AtomicBool::new(false));
        let mut transport = Transport {
            child,
            stdin: Some(stdin),
            lines: rx,
            stderr: Arc::clone(&ring),
            stderr_done: Arc::clone(&done),
            closed: false,
            reaped: None,
        };
        let started = std::thread::Builder::new()
            .name("mcp-stdout".into())
            .spawn(move || read_lines(stdout, max_line, tx))
            .and_then(|_| {
                std::thread::Builder::new()
                    .name("mcp-stderr".into())
                    .spawn(move || drain_stderr(stderr, ring, done))
            });
        if let Err(e) = started {
            transport.shutdown();
            return Err(spawn_err(format!("cannot start a reader thread: {e}")));
        }
        Ok(transport)
    }

    /// Writes one message and a newline. Errors are the write's.
    pub(crate) fn send(&mut self, message: &[u8]) -> std::io::Result<()> {
        let Some(stdin) = self.stdin.as_mut() else {
            return Err(std::io::ErrorKind::BrokenPipe.into());
        };
        let mut buf = Vec::with_capacity(message.len() + 1);
        buf.extend_from_slice(message);
        buf.push(b'\n');
        stdin.write_all(&buf)?;
        stdin.flush()
    }

    /// The next line, waiting until `deadline` at most.
    pub(crate) fn recv(&mut self, deadline: Instant) -> Result<Event, RecvError> {
        if self.closed {
            return Err(RecvError::Closed);
        }
        let wait = deadline.saturating_duration_since(Instant::now());
        match self.lines.recv_timeout(wait) {
            Ok(Event::Closed) | Err(RecvTimeoutError::Disconnected) => {
                self.closed = true;
                Err(RecvError::Closed)
            }
            Ok(ev) => Ok(ev),
            Err(RecvTimeoutError::Timeout) => Err(RecvError::Timeout),
        }
    }

    /// The child's exit status, waiting up to `wait` for it to exit.
    pub(crate) fn exit_status(&mut self, wait: Duration) -> Option<ExitStatus> {
        if self.reaped.is_none() {
            self.reaped = wait_until(&mut self.child, Instant::now() + wait);
        }
        self.reaped
    }

    /// The last lines of the server's stderr, once it has closed it or
    /// after `wait` (an exited server's last words may still be in the pipe).
    pub(crate) fn stderr_tail_after(&self, wait: Duration) -> StderrTail {
        let deadline = Instant::now() + wait;
        while !self.stderr_done.load(Ordering::Acquire) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        self.stderr_tail()
    }

    /// The last lines of the server's stderr.
    pub(crate) fn stderr_tail(&self) -> StderrTail {
        let ring = self.stderr.lock().unwrap_or_else(|p| p.into_inner());
        let (a, b) = ring.as_slices();
        let mut bytes = Vec::with_capacity(a.len() + b.len());
        bytes.extend_from_slice(a);
        bytes.extend_from_slice(b);
        drop(ring);
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<String> = text
            .lines()
            .map(str::trim_end)
            .filter(|l| !l.is_empty())
            .map(|l| {
                let mut s: String = l.chars().take(300).collect();
                if s.len() < l.len() {
                    s.push('…');
                }
                s
            })
            .collect();
        let skip = lines.len().saturating_sub(StderrTail::MAX_LINES);
        StderrTail(lines.into_iter().skip(skip).collect())
    }

    /// Stops the server: close its stdin, wait, SIGTERM its process group,
    /// wait, SIGKILL it, and reap the child. Bounded by about twice
    /// [`EXIT_GRACE`]. Idempotent. Signals go to the group only while the
    /// child is not reaped (its pid, the group id, cannot be reused until
    /// then); a group member that outlives a leader which exited by itself
    /// is left alone (it has lost its stdin too).
    pub(crate) fn shutdown(&mut self) {
        drop(self.stdin.take());
        if self.reaped.is_some() {
            return;
        }
        if let Some(status) = wait_until(&mut self.child, Instant::now() + EXIT_GRACE) {
            self.reaped = Some(status);
            return;
        }
        self.signal_group("TERM");
        if let Some(status) = wait_until(&mut self.child, Instant::now() + EXIT_GRACE) {
            self.reaped = Some(status);
            return;
        }
        self.signal_group("KILL");
        let _ = self.child.kill();
        self.reaped = self.child.wait().ok();
    }

    /// Sends a signal to the child's process group with kill(1) (the crate
    /// forbids `unsafe`, so no libc::kill). Only called while the child is
    /// not reaped.
    fn signal_group(&self, signal: &str) {
        #[cfg(unix)]
        {
            let group = format!("-{}", self.child.id());
            let _ = Command::new("kill")
                .args([&format!("-{signal}"), "--", &group])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
        #[cfg(not(unix))]
        let _ = signal;
    }
}

impl Drop for Transport {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn wait_until(child: &mut Child, deadline: Instant) -> Option<ExitStatus> {
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) => {}
            Err(_) => return None,
        }
        let now = Instant::now();
        if now >= deadline {
            return None;
        }
        std::thread::sleep((deadline - now).min(Duration::from_millis(10)));
    }
}

fn read_lines(stdout: impl Read, max_line: usize, tx: SyncSender<Event>) {
    let mut reader = BufReader::with_capacity(64 << 10, stdout);
    let mut line: Vec<u8> = Vec::new();
    let mut no: u64 = 1;
    loop {
        let buf = match reader.fill_buf() {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Ok([]) | Err(_) => {
                // A last line without a newline still counts as a message.
                if !line.is_empty() {
                    strip_cr(&mut line);
                    let _ = tx.send(Event::Line {
                        no,
                        bytes: std::mem::take(&mut line),
                    });
                }
                let _ = tx.send(Event::Closed);
                return;
            }
            Ok(buf) => buf,
        };
        let (chunk, done) = match memchr::memchr(b'\n', buf) {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        // `\r` of a `\r\n` may be the last byte allowed past the limit.
        if line.len() + chunk.len() > max_line.saturating_add(1) {
            let _ = tx.send(Event::TooLong { no });
            return;
        }
        line.extend_from_slice(chunk);
        let used = done.unwrap_or(buf.len());
        reader.consume(used);
        if done.is_some() {
            strip_cr(&mut line);
            if line.len() > max_line {
                let _ = tx.send(Event::TooLong { no });
                return;
            }
            let bytes = std::mem::take(&mut line);
            if tx.send(Event::Line { no, bytes }).is_err() {
                return;
            }
            no += 1;
        }
    }
}

fn strip_cr(line: &mut Vec<u8>) {
    if line.last() == Some(&b'\r') {
        line.pop();
    }
}

fn drain_stderr(mut stderr: impl Read, ring: Arc<Mutex<VecDeque<u8>>>, done: Arc<AtomicBool>) {
    let mut buf = [0u8; 4096];
    loop {
        match stderr.read(&mut buf) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Ok(0) | Err(_) => {
                done.store(true, Ordering::Release);
                return;
            }
            Ok(n) => {
                let mut ring = ring.lock().unwrap_or_else(|p| p.into_inner());
                let chunk = &buf[..n];
                let chunk = &chunk[chunk.len().saturating_sub(STDERR_RING_BYTES)..];
                let overflow = (ring.len() + chunk.len()).saturating_sub(STDERR_RING_BYTES);
                ring.drain(..overflow);
                ring.extend(chunk);
            }
        }
    }
}
