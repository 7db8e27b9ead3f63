//! Regression tests for issue 8, through the real binary: invalid dates are
//! refused (not rolled over into the next month), a FIFO given where a small
//! file is expected fails at once instead of blocking forever, a write error
//! on stdout is exit 2 with a message, and a closed pipe is quiet.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};
use support::{DIGEST, ROOT, TOKEN, code, command, stderr, vector};

/// Waits for `child` at most 20 s; kills it and fails the test if it hangs.
fn wait_or_kill(child: Child, what: &str) -> (ExitStatus, String) {
    wait_or_kill_after(child, what, Duration::from_secs(20))
}

/// Waits for `child` at most `limit`; kills it and fails the test if it hangs.
fn wait_or_kill_after(mut child: Child, what: &str, limit: Duration) -> (ExitStatus, String) {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                e.read_to_string(&mut err).unwrap();
            }
            return (status, err);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: still running after {limit:?} (blocked?)");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs `vouch args` with stdout discarded, under the hang guard.
fn run_guarded(args: &[&str]) -> (i32, String) {
    let child = command()
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (status, err) = wait_or_kill(child, &args.join(" "));
    (status.code().unwrap_or(-1), err)
}

struct Work {
    dir: tempfile::TempDir,
}

impl Work {
    fn new() -> Self {
        Work {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn s(&self, name: &str) -> String {
        self.path(name).to_str().unwrap().to_owned()
    }

    /// A FIFO that no process ever opens for writing.
    fn fifo(&self, name: &str) -> String {
        let p = self.path(name);
        let ok = Command::new("mkfifo").arg(&p).status().unwrap().success();
        assert!(ok, "mkfifo");
        p.to_str().unwrap().to_owned()
    }

    /// A key pair (`key`, `key.pub`) and a log of one record.
    fn log(&self) {
        let o = command()
            .args([
                "keygen",
                "--origin",
                "example.com/io",
                "--out",
                &self.s("key"),
            ])
            .output()
            .unwrap();
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let o = command()
            .args(["append", &self.s("log"), "--key", &self.s("key"), "{}"])
            .output()
            .unwrap();
        assert_eq!(code(&o), 0, "{}", stderr(&o));
    }
}

// --- invalid dates ---------------------------------------------------------

#[test]
fn retain_until_an_impossible_date_is_refused_not_rolled_over() {
    let w = Work::new();
    w.log();
    std::fs::create_dir(w.path("worm")).unwrap();
    let target = format!("dir:{}", w.s("worm"));
    for bad in [
        "2026-02-31",
        "2026-02-31T00:00:00Z",
        "2026-04-31",
        "2026-01-01T24:00:00Z",
        "2027-02-29",
        "2026-13-01",
        "next year",
        "2026-01-01T00:00:00+01:00",
    ] {
        let o = command()
            .args(["anchor", &w.s("log"), "--key", &w.s("key"), "--to", &target])
            .args(["--retain-until", bad])
            .output()
            .unwrap();
        assert_eq!(code(&o), 2, "{bad}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(err.contains("--retain-until") && err.contains(bad), "{err}");
        if bad.starts_with("2026-02-31") {
            assert!(err.contains("the day is out of range"), "{err}");
        }
        // Nothing was anchored or recorded.
        assert_eq!(std::fs::read_dir(w.path("worm")).unwrap().count(), 0);
    }
    let o = command()
        .args(["anchor", &w.s("log"), "--key", &w.s("key"), "--to", &target])
        .args(["--retain-until", "2028-02-29", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "a real leap day: {}", stderr(&o));
    let o = command()
        .args(["anchor", &w.s("log"), "--key", &w.s("key"), "--to", &target])
        .args(["--retain-until", "2026-02-31", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 2);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["error"]["code"], "invalid_time");
}

#[test]
fn tsa_verify_at_an_impossible_time_is_refused() {
    let o = command()
        .args(["tsa", "verify", &vector(TOKEN), "--digest", DIGEST])
        .args(["--tsa-ca", &vector(ROOT), "--at", "2026-02-30T12:00:00Z"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("--at"), "{}", stderr(&o));
}

// --- FIFOs and other non-regular files -------------------------------------

#[test]
fn fifo_as_pub_key_fails_promptly() {
    let w = Work::new();
    w.log();
    let fifo = w.fifo("pub.fifo");
    std::fs::write(w.path("proof"), "x").unwrap();
    std::fs::write(w.path("record"), "x").unwrap();
    std::fs::write(w.path("receipt.json"), "{}").unwrap();
    for args in [
        vec![
            "verify-proof".to_owned(),
            w.s("proof"),
            "--record".into(),
            w.s("record"),
            "--pub".into(),
            fifo.clone(),
        ],
        vec![
            "receipt".into(),
            "verify".into(),
            w.s("receipt.json"),
            "--pub".into(),
            fifo.clone(),
        ],
        vec![
            "anchor".into(),
            "verify".into(),
            w.s("log"),
            "--pub".into(),
            fifo.clone(),
        ],
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, err) = run_guarded(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains("not a regular file (a FIFO)"), "{err}");
        assert!(err.contains("pub.fifo"), "{err}");
    }
}

#[test]
fn fifo_as_verify_pub_or_checkpoint_fails_promptly() {
    let w = Work::new();
    w.log();
    let fifo = w.fifo("cp.fifo");
    for args in [
        vec![
            "verify".to_owned(),
            w.s("log"),
            "--pub".into(),
            fifo.clone(),
        ],
        vec![
            "verify".to_owned(),
            w.s("log"),
            "--pub".into(),
            w.s("key.pub"),
            "--checkpoint".into(),
            fifo.clone(),
        ],
        vec![
            "verify-consistency".to_owned(),
            w.s("log"),
            "--old".into(),
            fifo.clone(),
            "--pub".into(),
            w.s("key.pub"),
        ],
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, err) = run_guarded(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(
            err.contains("not a regular file (a FIFO)"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn fifo_as_receipt_or_record_fails_promptly() {
    let w = Work::new();
    w.log();
    let fifo = w.fifo("in.fifo");
    let (code, err) = run_guarded(&["receipt", "verify", &fifo, "--pub", &w.s("key.pub")]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not a regular file (a FIFO)"), "{err}");
}

#[test]
fn fifo_as_tsa_token_or_roots_fails_promptly() {
    let w = Work::new();
    let fifo = w.fifo("tsa.fifo");
    let token = vector(TOKEN);
    let root = vector(ROOT);
    for args in [
        vec![
            "tsa", "verify", &token, "--digest", DIGEST, "--tsa-ca", &fifo,
        ],
        vec![
            "tsa", "verify", &fifo, "--digest", DIGEST, "--tsa-ca", &root,
        ],
        vec!["tsa", "show", &fifo],
    ] {
        let (code, err) = run_guarded(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains("not a regular file (a FIFO)"), "{err}");
    }
    // A directory is refused the same way, by type.
    let (code, err) = run_guarded(&["tsa", "show", w.dir.path().to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not a regular file (a directory)"), "{err}");
}

#[test]
fn oversized_key_file_is_refused() {
    let w = Work::new();
    std::fs::write(w.path("big.pub"), vec![b'#'; (1 << 20) + 1]).unwrap();
    std::fs::write(w.path("receipt.json"), "{}").unwrap();
    let (code, err) = run_guarded(&[
        "receipt",
        "verify",
        &w.s("receipt.json"),
        "--pub",
        &w.s("big.pub"),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("larger than 1048576 bytes"), "{err}");
}

// --- stdout errors ---------------------------------------------------------

fn to_dev_full(args: &[&str]) -> Output {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    command().args(args).stdout(full).output().unwrap()
}

#[test]
fn a_full_disk_on_stdout_is_exit_2_with_a_message() {
    if !Path::new("/dev/full").exists() {
        eprintln!("skipping: no /dev/full");
        return;
    }
    let token = vector(TOKEN);
    let root = vector(ROOT);
    for args in [
        vec!["tsa", "show", &token],
        vec!["tsa", "show", &token, "--format", "json"],
        vec![
            "tsa", "verify", &token, "--digest", DIGEST, "--tsa-ca", &root,
        ],
        vec![
            "tsa", "verify", &token, &token, "--digest", DIGEST, "--tsa-ca", &root,
        ],
    ] {
        let o = to_dev_full(&args);
        assert_eq!(code(&o), 2, "{args:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(err.contains("cannot write the report to stdout"), "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    // A rejection (exit 1) whose JSON report cannot be written: exit 2, an
    // operational failure, not a verdict nobody could read.
    let wrong = format!("sha384:{}", "00".repeat(48));
    let args = [
        "tsa", "verify", &token, "--digest", &wrong, "--tsa-ca", &root,
    ];
    let o = command()
        .args(args)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let o = to_dev_full(&[&args[..], &["--format", "json"]].concat());
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("cannot write the report to stdout"));
}

/// `vouch keygen > /dev/full`: the key files are the result and are written
/// first; the public key line then cannot be printed. Exit 2, and stderr
/// says the files were written, so nobody thinks nothing happened.
#[test]
fn keygen_to_a_full_disk_says_the_key_files_were_written() {
    if !Path::new("/dev/full").exists() {
        eprintln!("skipping: no /dev/full");
        return;
    }
    let w = Work::new();
    let key = w.s("key");
    let o = to_dev_full(&["keygen", "--origin", "example.com/full", "--out", &key]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("cannot write the report to stdout"), "{err}");
    assert!(err.contains("were written"), "{err}");
    assert!(
        err.contains(&key) && err.contains(&format!("{key}.pub")),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    // The files are there and usable: the key signs a record.
    assert!(w.path("key").is_file() && w.path("key.pub").is_file());
    let o = command()
        .args(["append", &w.s("log"), "--key", &key, "{}"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
}

#[test]
fn a_closed_pipe_is_quiet_and_keeps_the_verdict() {
    let token = vector(TOKEN);
    let root = vector(ROOT);
    // Enough rows (about 150 bytes each) to overflow any pipe buffer, so the
    // write fails whether or not the reader is gone before it starts.
    let mut args = vec!["tsa".to_owned(), "verify".to_owned()];
    args.extend(std::iter::repeat_n(token, 2000));
    args.extend(["--digest".into(), DIGEST.into(), "--tsa-ca".into(), root]);
    for format in ["table", "json"] {
        let mut child = command()
            .args(&args)
            .args(["--format", format])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let (status, err) = wait_or_kill(child, "tsa verify | (closed)");
        assert_ne!(status.code(), Some(101), "{err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(err.is_empty(), "a closed pipe is quiet: {err}");
        assert_eq!(status.code(), Some(0), "the verdict (all valid) is kept");
    }
}

// --- issue 21: every small input, and every state, through one open ---------

/// What is put where a small input (a state, key, checkpoint, proof,
/// receipt, policy, rules or targets file) is expected.
#[derive(Clone, Copy, Debug)]
enum NotAFile {
    Fifo,
    DevNull,
    Directory,
}

impl NotAFile {
    /// The words of the message that say what it is.
    fn kind(self) -> &'static str {
        match self {
            NotAFile::Fifo => "not a regular file (a FIFO)",
            NotAFile::DevNull => "not a regular file (a character device)",
            NotAFile::Directory => "not a regular file (a directory)",
        }
    }
}

/// Every file the matrix needs, made by the real binary: a key pair, a
/// log with two checkpoints, a kept checkpoint, inclusion and consistency
/// proofs, the record line, a receipt, a stamp receipt, a drift log with a
/// baseline, a policy, rules, a dir: target and a targets file.
fn issue21_fixture() -> Work {
    let w = Work::new();
    w.log();
    let ok = |args: &[&str]| {
        let o = command()
            .args(args)
            .current_dir(w.dir.path())
            .output()
            .unwrap();
        assert_eq!(code(&o), 0, "{args:?}: {}", stderr(&o));
        o
    };
    let o = ok(&["checkpoint", "log", "--key", "key", "--out", "cp"]);
    assert!(!o.stdout.is_empty());
    ok(&["append", "log", "--key", "key", "{\"n\":2}"]);
    ok(&["checkpoint", "log", "--key", "key"]);
    ok(&["prove", "log", "--seq", "0", "--out", "proof"]);
    ok(&["prove", "log", "--consistency-from", "1", "--out", "cons"]);
    let first = std::fs::read_to_string(w.path("log")).unwrap();
    std::fs::write(w.path("record"), first.lines().next().unwrap()).unwrap();
    ok(&["receipt", "log", "--seq", "0", "--out", "receipt.json"]);
    std::fs::write(w.path("data.txt"), "stamped\n").unwrap();
    ok(&["stamp", "data.txt", "--key", "key", "--out", "run.vouch"]);
    std::fs::create_dir(w.path("tree")).unwrap();
    std::fs::write(w.path("tree/a"), "a\n").unwrap();
    ok(&["drift", "snapshot", "tree", "--log", "dlog", "--key", "key"]);
    std::fs::write(w.path("conf.json"), "{\"a\":1}\n").unwrap();
    std::fs::write(w.path("rules.toml"), "exclude = [\"cache\"]\n").unwrap();
    std::fs::write(w.path("policy.toml"), "version = 1\ndefault = \"allow\"\n").unwrap();
    // An empty target: an anchor would leave an immutable file (as root)
    // that the temporary directory could not remove.
    std::fs::create_dir(w.path("worm")).unwrap();
    std::fs::write(w.path("targets"), format!("dir:{}\n", w.s("worm"))).unwrap();
    w
}

/// The commands and flags that take a small input, `@` standing for it.
/// Whatever is put there, the command must stop at once with exit 2 and a
/// message that names the path and says what it is.
fn issue21_cases() -> Vec<(&'static str, Vec<&'static str>)> {
    vec![
        (
            "verify --state",
            vec!["verify", "log", "--pub", "key.pub", "--state", "@"],
        ),
        ("verify --pub", vec!["verify", "log", "--pub", "@"]),
        (
            "verify --checkpoint",
            vec!["verify", "log", "--pub", "key.pub", "--checkpoint", "@"],
        ),
        (
            "verify-proof PROOF",
            vec![
                "verify-proof",
                "@",
                "--record",
                "record",
                "--pub",
                "key.pub",
            ],
        ),
        (
            "verify-proof --record",
            vec!["verify-proof", "proof", "--record", "@", "--pub", "key.pub"],
        ),
        (
            "verify-proof --pub",
            vec!["verify-proof", "proof", "--record", "record", "--pub", "@"],
        ),
        (
            "verify-consistency PROOF",
            vec!["verify-consistency", "@", "--old", "cp", "--pub", "key.pub"],
        ),
        (
            "verify-consistency --old",
            vec![
                "verify-consistency",
                "cons",
                "--old",
                "@",
                "--pub",
                "key.pub",
            ],
        ),
        ("append --key", vec!["append", "log", "--key", "@", "{}"]),
        ("checkpoint --key", vec!["checkpoint", "log", "--key", "@"]),
        (
            "rotate --key",
            vec!["rotate", "log", "--key", "@", "--new-key", "key"],
        ),
        (
            "rotate --new-key",
            vec!["rotate", "log", "--key", "key", "--new-key", "@"],
        ),
        (
            "anchor --key",
            vec!["anchor", "log", "--key", "@", "--to", "dir:worm"],
        ),
        (
            "anchor verify --pub",
            vec!["anchor", "verify", "log", "--pub", "@"],
        ),
        (
            "anchor verify --state",
            vec![
                "anchor", "verify", "log", "--pub", "key.pub", "--from", "dir:worm", "--state", "@",
            ],
        ),
        (
            "anchor verify --targets",
            vec![
                "anchor",
                "verify",
                "log",
                "--pub",
                "key.pub",
                "--targets",
                "@",
            ],
        ),
        (
            "anchor verify --tsa-ca",
            vec![
                "anchor", "verify", "log", "--pub", "key.pub", "--from", "dir:worm", "--tsa-ca",
                "@",
            ],
        ),
        (
            "receipt verify RECEIPT",
            vec!["receipt", "verify", "@", "--pub", "key.pub"],
        ),
        (
            "receipt verify --pub",
            vec!["receipt", "verify", "receipt.json", "--pub", "@"],
        ),
        (
            "receipt verify --record",
            vec![
                "receipt",
                "verify",
                "receipt.json",
                "--pub",
                "key.pub",
                "--record",
                "@",
            ],
        ),
        (
            "receipt verify --tsa-ca",
            vec![
                "receipt",
                "verify",
                "receipt.json",
                "--pub",
                "key.pub",
                "--tsa-ca",
                "@",
            ],
        ),
        (
            "receipt verify --targets",
            vec![
                "receipt",
                "verify",
                "receipt.json",
                "--pub",
                "key.pub",
                "--online",
                "--targets",
                "@",
            ],
        ),
        (
            "stamp --key",
            vec!["stamp", "data.txt", "--key", "@", "--out", "new.vouch"],
        ),
        (
            "stamp verify RECEIPT",
            vec!["stamp", "verify", "@", "--pub", "key.pub"],
        ),
        (
            "stamp verify --pub",
            vec!["stamp", "verify", "run.vouch", "--pub", "@"],
        ),
        (
            "stamp verify --tsa-ca",
            vec![
                "stamp",
                "verify",
                "run.vouch",
                "--pub",
                "key.pub",
                "--tsa-ca",
                "@",
            ],
        ),
        (
            "stamp extract --key",
            vec![
                "stamp",
                "extract",
                "run.vouch",
                "data.txt",
                "--out",
                "x.minisig",
                "--proof-format",
                "minisign",
                "--key",
                "@",
            ],
        ),
        (
            "drift snapshot --key",
            vec!["drift", "snapshot", "tree", "--log", "dlog", "--key", "@"],
        ),
        (
            "drift snapshot --rules",
            vec![
                "drift", "snapshot", "tree", "--log", "dlog", "--key", "key", "--rules", "@",
            ],
        ),
        (
            "drift check --pub",
            vec!["drift", "check", "tree", "--log", "dlog", "--pub", "@"],
        ),
        (
            "drift check --rules",
            vec![
                "drift", "check", "tree", "--log", "dlog", "--pub", "key.pub", "--rules", "@",
            ],
        ),
        (
            "drift accept --key",
            vec![
                "drift", "accept", "tree", "--log", "dlog", "--key", "@", "--reason", "r",
            ],
        ),
        (
            "drift import --from",
            vec![
                "drift",
                "import",
                "tree",
                "--log",
                "dlog",
                "--key",
                "key",
                "--from",
                "@",
                "--spec-format",
                "mtree",
            ],
        ),
        (
            "drift history --pub",
            vec!["drift", "history", "--log", "dlog", "--pub", "@"],
        ),
        (
            "wrap --policy",
            vec![
                "wrap", "--policy", "@", "--log", "wlog", "--key", "key", "--id", "s", "--", "true",
            ],
        ),
        (
            "wrap --key",
            vec![
                "wrap",
                "--policy",
                "policy.toml",
                "--log",
                "wlog",
                "--key",
                "@",
                "--id",
                "s",
                "--",
                "true",
            ],
        ),
        ("policy check", vec!["policy", "check", "@"]),
        ("policy test", vec!["policy", "test", "@", "--tool", "t"]),
        ("scan FILE", vec!["scan", "@"]),
        ("scan --config", vec!["scan", "--config", "@"]),
        (
            "pins status --pub",
            vec!["pins", "status", "--id", "s", "--log", "log", "--pub", "@"],
        ),
        (
            "pins status --key",
            vec!["pins", "status", "--id", "s", "--log", "log", "--key", "@"],
        ),
        (
            "key export",
            vec!["key", "export", "@", "--key-format", "pem"],
        ),
        ("tsa show", vec!["tsa", "show", "@"]),
    ]
}

/// Issue 21: `vouch verify --state FIFO` blocked forever. Every command
/// that takes a small input refuses a FIFO, /dev/null and a directory at
/// once (each run under a hang guard), with exit 2 and a message naming
/// the path and what it is; nothing is written through them.
#[test]
fn every_small_input_refuses_a_fifo_a_device_and_a_directory_promptly() {
    let w = issue21_fixture();
    let fifo = w.fifo("in.fifo");
    std::fs::create_dir(w.path("a-dir")).unwrap();
    let mut failed = Vec::new();
    for kind in [NotAFile::Fifo, NotAFile::DevNull, NotAFile::Directory] {
        let bad = match kind {
            NotAFile::Fifo => fifo.clone(),
            NotAFile::DevNull => "/dev/null".to_owned(),
            NotAFile::Directory => w.s("a-dir"),
        };
        for (what, template) in issue21_cases() {
            let args: Vec<String> = template
                .iter()
                .map(|a| {
                    if *a == "@" {
                        bad.clone()
                    } else {
                        (*a).to_owned()
                    }
                })
                .collect();
            let child = command()
                .args(&args)
                .current_dir(w.dir.path())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let (status, err) = wait_or_kill_after(child, what, Duration::from_secs(5));
            let code = status.code().unwrap_or(-1);
            if code != 2 || !err.contains(&bad) || !err.contains(kind.kind()) {
                failed.push(format!("{what} with {kind:?}: exit {code}: {err}"));
            }
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    // The FIFO is still a FIFO: nothing replaced or wrote through it.
    use std::os::unix::fs::FileTypeExt;
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );
}

/// Issue 21: a state or cache that vouch writes is never written through
/// a FIFO planted at its name or at the name of its temporary file (the
/// fixed `NAME.tmp` of earlier versions blocked `checkpoint` and `verify
/// --state` forever). The run completes; the FIFOs are left as they are.
#[test]
fn a_fifo_planted_where_a_state_or_cache_is_written_is_never_opened() {
    let w = Work::new();
    w.log();
    let st = w.s("st");
    let planted = [
        w.fifo("log.vouch-tree"),
        w.fifo("log.vouch-tree.tmp"),
        w.fifo("st.tmp"),
    ];
    let (code, err) = run_guarded(&["checkpoint", &w.s("log"), "--key", &w.s("key")]);
    assert_eq!(code, 0, "{err}");
    let (code, err) = run_guarded(&[
        "verify",
        &w.s("log"),
        "--pub",
        &w.s("key.pub"),
        "--state",
        &st,
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(w.path("st").is_file());
    // And again, resuming from the state just written.
    let (code, err) = run_guarded(&[
        "verify",
        &w.s("log"),
        "--pub",
        &w.s("key.pub"),
        "--state",
        &st,
    ]);
    assert_eq!(code, 0, "{err}");
    use std::os::unix::fs::FileTypeExt;
    for p in planted {
        assert!(
            std::fs::symlink_metadata(&p).unwrap().file_type().is_fifo(),
            "{p}"
        );
    }
}
