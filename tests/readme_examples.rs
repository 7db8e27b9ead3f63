//! The README's fenced `sh` examples, run as written: each block in an
//! empty directory (with `scripts/` of this checkout beside it, for the
//! local TSA of docs/TSA.md), `vouch` on PATH, under `bash -euo pipefail`,
//! so a command that fails or an example that names a file no step made
//! fails the test. A block the tests cannot run (it installs vouch, needs a
//! host's own tools) is preceded by an HTML comment
//! `<!-- not run by tests/readme_examples.rs: WHY -->`, and says where it
//! is tested instead.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

const SKIP: &str = "<!-- not run by tests/readme_examples.rs:";

/// The `sh` blocks: (first line number, text, skipped).
fn blocks(readme: &str) -> Vec<(usize, String, bool)> {
    let lines: Vec<&str> = readme.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim_end() == "```sh" {
            let skipped = i > 0 && lines[i - 1].starts_with(SKIP);
            let start = i + 1;
            let mut j = start;
            while j < lines.len() && lines[j].trim_end() != "```" {
                j += 1;
            }
            out.push((start + 1, lines[start..j].join("\n"), skipped));
            i = j;
        }
        i += 1;
    }
    out
}

#[test]
fn readme_examples_run_as_written() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let all = blocks(&readme);
    let run: Vec<_> = all.iter().filter(|b| !b.2).collect();
    // Not vacuous: the tour and the local stamp example at least.
    assert!(run.len() >= 2, "{} blocks run of {}", run.len(), all.len());
    let bin = Path::new(env!("CARGO_BIN_EXE_vouch")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for (line, text, _) in run {
        let dir = support::workdir();
        std::os::unix::fs::symlink(root.join("scripts"), dir.path().join("scripts")).unwrap();
        let script = format!("set -euo pipefail\n{text}\n");
        let child = Command::new("bash")
            .arg("-c")
            .arg(&script)
            .current_dir(dir.path())
            .env("PATH", &path)
            .env("HOME", dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let o = support::wait_timeout(child, Duration::from_secs(120))
            .unwrap_or_else(|o| panic!("README.md:{line}: ran past 120 s\n{}", support::both(&o)));
        assert_eq!(
            support::code(&o),
            0,
            "README.md:{line}: the example failed\n{text}\n--- output\n{}",
            support::both(&o)
        );
    }
}
