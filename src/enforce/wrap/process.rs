//! The server process and stop signals: spawning it in its own process
//! group, catching SIGTERM/SIGINT/SIGHUP, signalling and reaping it.

use super::*;

pub(super) fn exit_code(status: Option<ExitStatus>) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    match status {
        Some(s) => s.code().unwrap_or_else(|| 128 + s.signal().unwrap_or(0)),
        None => 2,
    }
}

pub(super) fn spawn_error(opts: &WrapOptions, message: String) -> crate::Error {
    super::super::EnforceError::Spawn {
        program: opts.program.to_string_lossy().into_owned(),
        message,
    }
    .into()
}

/// Starts the server with its stdin on a pipe of the wrapper's own
/// ([`ServerStdin`]): the write end, and a second handle on the read end.
pub(super) fn spawn(
    opts: &WrapOptions,
) -> crate::Result<(Child, std::io::PipeWriter, std::io::PipeReader)> {
    let pipe = std::io::pipe().and_then(|(reader, to)| {
        let unread = reader.try_clone()?;
        Ok((reader, to, unread))
    });
    let (reader, to, unread) =
        pipe.map_err(|e| spawn_error(opts, format!("cannot make a pipe: {e}")))?;
    let mut cmd = Command::new(&opts.program);
    cmd.args(&opts.args)
        .stdin(Stdio::from(reader))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    let child = cmd.spawn().map_err(|e| spawn_error(opts, e.to_string()))?;
    Ok((child, to, unread))
}

/// The signals that end a session gracefully.
pub(super) const STOP_SIGNALS: [i32; 3] = [
    signal_hook::consts::SIGTERM,
    signal_hook::consts::SIGINT,
    signal_hook::consts::SIGHUP,
];

/// SIGTERM, SIGINT and SIGHUP, caught from the moment [`StopSignals::watch`]
/// returns (from then on they no longer end the process by themselves):
/// the binary calls it before it loads anything, and [`run`] turns them
/// into events of the loop (one that came before is delivered at once).
pub struct StopSignals {
    signals: signal_hook::iterator::Signals,
    /// Set by the handler itself: a write waiting for a peer gives up.
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// The last stop signal's number, set by the handler itself: the loop
    /// starts the shutdown before it handles anything read after the
    /// signal, even before the signal's event reaches it.
    which: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl StopSignals {
    pub fn watch() -> crate::Result<StopSignals> {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let which = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let caught = (|| {
            for signal in STOP_SIGNALS {
                signal_hook::flag::register(signal, stop.clone())?;
                let number = usize::try_from(signal).unwrap_or(0);
                signal_hook::flag::register_usize(signal, which.clone(), number)?;
            }
            signal_hook::iterator::Signals::new(STOP_SIGNALS)
        })();
        let signals = caught.map_err(super::super::EnforceError::Signals)?;
        Ok(StopSignals {
            signals,
            stop,
            which,
        })
    }

    #[allow(clippy::type_complexity)]
    pub(super) fn forward(
        self,
        tx: Sender<Event>,
    ) -> std::io::Result<(
        std::sync::Arc<std::sync::atomic::AtomicBool>,
        std::sync::Arc<std::sync::atomic::AtomicUsize>,
    )> {
        let mut signals = self.signals;
        std::thread::Builder::new()
            .name("wrap-signals".into())
            .spawn(move || {
                for signal in signals.forever() {
                    if tx.send(Event::Signal(signal)).is_err() {
                        return;
                    }
                }
            })?;
        Ok((self.stop, self.which))
    }
}

pub(super) fn signal_name(signal: i32) -> &'static str {
    match signal {
        signal_hook::consts::SIGTERM => "SIGTERM",
        signal_hook::consts::SIGINT => "SIGINT",
        signal_hook::consts::SIGHUP => "SIGHUP",
        _ => "signal",
    }
}

/// Sends SIGTERM or SIGKILL to the child's process group with kill(1)
/// (the crate forbids `unsafe`, so no libc::kill).
pub(super) fn signal_group(child: &Child, signal: &str) {
    let _ = Command::new("kill")
        .arg(format!("-{signal}"))
        .arg("--")
        .arg(format!("-{}", child.id()))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

pub(super) fn wait_until(child: &mut Child, deadline: Instant) -> Option<ExitStatus> {
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(5));
            }
            _ => return None,
        }
    }
}
