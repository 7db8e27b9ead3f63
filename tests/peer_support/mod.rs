//! The external verifiers the export tests run: the Sigstore JavaScript
//! verifier (tests/peers/sigstore/verify.mjs, installed by
//! scripts/setup-node-peers.sh) and Debian's `minisign`. Without them a
//! test prints a notice and passes, except under `CI=true`, where it fails.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

fn missing(test: &str, why: &str) -> bool {
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("{test}: {why}; required when CI=true");
    }
    eprintln!("NOTICE: {test} skipped: {why}");
    false
}

pub fn sigstore_peer_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/sigstore")
}

/// True when node and the installed Sigstore peer are there.
pub fn sigstore_peer_or_skip(test: &str) -> bool {
    let node = Command::new("node")
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    let installed = sigstore_peer_dir()
        .join("node_modules/@sigstore/verify/package.json")
        .is_file();
    match (node, installed) {
        (true, true) => true,
        (false, _) => missing(test, "node is not installed"),
        (true, false) => missing(
            test,
            "the Sigstore peer is not installed (run scripts/setup-node-peers.sh)",
        ),
    }
}

/// What the Sigstore peer said: its exit code and its output line.
pub struct PeerResult {
    pub code: i32,
    pub line: String,
}

pub fn run_sigstore_peer(args: &[&str]) -> PeerResult {
    let out = Command::new("node")
        .arg(sigstore_peer_dir().join("verify.mjs"))
        .args(args)
        .output()
        .expect("run node");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    PeerResult {
        code: out.status.code().unwrap_or(-1),
        line: text.trim().to_owned(),
    }
}

/// True when the `minisign` CLI can be run.
pub fn minisign_or_skip(test: &str) -> bool {
    let ok = Command::new("minisign")
        .arg("-v")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    ok || missing(
        test,
        "the minisign CLI is not available (scripts/setup-test-env.sh installs it)",
    )
}
