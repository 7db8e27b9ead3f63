//! The one test-support module of the integration tests: run the real
//! binary (with stdin closed and S3 credentials for moto in the
//! environment), read its output, and build a work directory with a key and
//! a log through the CLI.
//!
//! Every integration test declares `mod support;`; the domain helpers
//! (`anchor_support`, `tsa_support`, `soundness_support`, `mcp_support`)
//! run the binary through this module (`crate::support`) too.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_vouch");

/// The real-world RFC 3161 vectors.
pub const REALWORLD: &str = "tests/vectors/tsa/realworld";
/// A valid real-world response, its imprint and its root (manifest case
/// `sigstage-sha384-digest`), relative to [`REALWORLD`].
pub const TOKEN: &str = "rfc3161-client/sigstage/response-sha384.tsr";
pub const DIGEST: &str = "sha384:59e1748777448c69de6b800d7a33bbfb9ff1b463e44354c3553bcdb9c666fa90125a3c79f90397bdf5f6a13de828684f";
pub const ROOT: &str = "rfc3161-client/sigstage/ts_chain.root.pem";

/// The absolute path of a real-world vector (`rel` under [`REALWORLD`]).
pub fn vector(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(REALWORLD)
        .join(rel)
        .to_str()
        .unwrap()
        .to_owned()
}

/// The origin of [`Work`]'s log.
pub const ORIGIN: &str = "example.com/anchor-test";

/// A command for the binary with the test environment: S3 credentials for
/// moto (never a real account or the instance metadata service) and stdin
/// closed. Callers add arguments, a working directory or other stdio.
pub fn command() -> Command {
    let mut cmd = Command::new(BIN);
    cmd.env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", "testing")
        .env("AWS_REGION", "us-east-1")
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .env("AWS_CONFIG_FILE", "/nonexistent/vouch-test")
        .env("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/vouch-test")
        .stdin(Stdio::null());
    cmd
}

/// Runs `vouch ARGS` and waits for it.
pub fn vouch(args: &[&str]) -> Output {
    vouch_env(args, &[])
}

/// Runs `vouch ARGS` with extra environment variables.
pub fn vouch_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = command();
    cmd.args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run vouch")
}

/// Runs `vouch ARGS` in working directory `dir`.
pub fn vouch_at(args: &[&str], dir: &Path) -> Output {
    command()
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run vouch")
}

/// Runs `vouch ARGS` with `input` on stdin.
pub fn vouch_in(args: &[&str], input: &[u8]) -> Output {
    let mut cmd = command();
    cmd.args(args);
    with_stdin(cmd, input)
}

/// Runs `vouch ARGS` in `dir` with `input` on stdin.
pub fn vouch_at_in(args: &[&str], dir: &Path, input: &[u8]) -> Output {
    let mut cmd = command();
    cmd.args(args).current_dir(dir);
    with_stdin(cmd, input)
}

fn with_stdin(mut cmd: Command, input: &[u8]) -> Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run vouch");
    // The command may refuse before reading its input: a closed pipe is fine.
    let _ = child.stdin.take().unwrap().write_all(input);
    child.wait_with_output().expect("wait for vouch")
}

/// Runs `vouch ARGS` in `dir` with a wall-clock guard: kills it and fails
/// the test if it has not finished after `limit` (blocked on a FIFO, say).
pub fn vouch_timeout(args: &[&str], dir: &Path, limit: Duration) -> Output {
    let child = command()
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run vouch");
    wait_timeout(child, limit).unwrap_or_else(|o| {
        panic!(
            "vouch {args:?} hung for more than {limit:?} (killed): {}",
            both(&o)
        )
    })
}

/// Waits at most `limit` for `child` (stdout and stderr piped, read on
/// threads so a full pipe cannot block it); `Err` with what it wrote if it
/// had to be killed.
pub fn wait_timeout(mut child: Child, limit: Duration) -> Result<Output, Output> {
    let out = child.stdout.take();
    let err = child.stderr.take();
    let drain = |p: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            if let Some(mut p) = p {
                let _ = p.read_to_end(&mut v);
            }
            v
        })
    };
    let t_out = drain(out.map(|p| Box::new(p) as Box<dyn Read + Send>));
    let t_err = drain(err.map(|p| Box::new(p) as Box<dyn Read + Send>));
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Ok(Output {
                status,
                stdout: t_out.join().unwrap(),
                stderr: t_err.join().unwrap(),
            });
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let status = child.wait().unwrap();
            return Err(Output {
                status,
                stdout: t_out.join().unwrap(),
                stderr: t_err.join().unwrap(),
            });
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

pub fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Exit code, stdout and stderr, for assertion messages.
pub fn both(o: &Output) -> String {
    format!(
        "exit {}\n--- stdout\n{}\n--- stderr\n{}",
        code(o),
        stdout(o),
        stderr(o)
    )
}

/// Stdout parsed as JSON; fails the test with both streams if it is not.
pub fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", stdout(o), stderr(o)))
}

/// A fresh temporary work directory.
pub fn workdir() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}

/// A temporary directory holding a key pair (`key`, `key.pub`, origin
/// [`ORIGIN`]) and a log (`log.jsonl`), all made through the CLI; on drop,
/// removes the immutable attribute from anything below it (dir anchor
/// targets set it) so it can be deleted.
pub struct Work {
    pub dir: tempfile::TempDir,
    pub key: PathBuf,
    pub pubkey: PathBuf,
    pub log: PathBuf,
}

impl Drop for Work {
    fn drop(&mut self) {
        let _ = Command::new("chattr")
            .args(["-R", "-i"])
            .arg(self.dir.path())
            .stderr(Stdio::null())
            .stdout(Stdio::null())
            .status();
    }
}

impl Work {
    /// A key and a log of `n` event records.
    pub fn new(n: usize) -> Work {
        let dir = workdir();
        let key = dir.path().join("key");
        let o = vouch(&["keygen", "--origin", ORIGIN, "--out", key.to_str().unwrap()]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let w = Work {
            pubkey: dir.path().join("key.pub"),
            log: dir.path().join("log.jsonl"),
            key,
            dir,
        };
        w.append(n);
        w
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    pub fn s(p: &Path) -> &str {
        p.to_str().unwrap()
    }

    /// Appends `n` event records `{"i":0}`, `{"i":1}`, ...
    pub fn append(&self, n: usize) {
        for i in 0..n {
            let o = vouch(&[
                "append",
                Self::s(&self.log),
                "--key",
                Self::s(&self.key),
                &format!("{{\"i\":{i}}}"),
            ]);
            assert_eq!(code(&o), 0, "{}", stderr(&o));
        }
    }

    pub fn checkpoint(&self) {
        let o = vouch(&[
            "checkpoint",
            Self::s(&self.log),
            "--key",
            Self::s(&self.key),
        ]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
    }

    /// The log's lines.
    pub fn lines(&self) -> Vec<String> {
        std::fs::read_to_string(&self.log)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// The kinds of the log's records.
    pub fn kinds(&self) -> Vec<String> {
        self.lines()
            .iter()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                v["kind"].as_str().unwrap().to_owned()
            })
            .collect()
    }

    /// Cuts the log back to its first `n` lines.
    pub fn truncate_to(&self, n: usize) {
        let mut text = self.lines()[..n].join("\n");
        text.push('\n');
        std::fs::write(&self.log, text).unwrap();
    }

    /// `vouch anchor LOG --key KEY <extra...> --format json`.
    pub fn anchor(&self, extra: &[&str]) -> Output {
        let mut args = vec![
            "anchor",
            Self::s(&self.log),
            "--key",
            Self::s(&self.key),
            "--format",
            "json",
        ];
        args.extend_from_slice(extra);
        vouch(&args)
    }

    /// `vouch anchor verify LOG --pub KEY.pub <extra...> --format json`.
    pub fn verify(&self, extra: &[&str]) -> Output {
        let mut args = vec![
            "anchor",
            "verify",
            Self::s(&self.log),
            "--pub",
            Self::s(&self.pubkey),
            "--format",
            "json",
        ];
        args.extend_from_slice(extra);
        vouch(&args)
    }
}
