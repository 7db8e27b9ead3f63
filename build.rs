//! Build script: records the git commit the binary is built from, for
//! `vouch --version` (`VOUCH_COMMIT`: `<short hash>[-dirty] <commit date>`,
//! or `unknown commit` when there is no git or no `.git`, e.g. a build from
//! a crate tarball).

use std::path::{Path, PathBuf};
use std::process::Command;

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=VOUCH_COMMIT");
    let dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let commit = describe(&dir).unwrap_or_else(|| "unknown commit".to_owned());
    println!("cargo:rustc-env=VOUCH_COMMIT={commit}");
}

/// `<hash>[-dirty] <date>` of HEAD, only when this package's own directory
/// holds `.git` (a directory, or the file of a worktree): an unpacked
/// tarball inside some other repository must not report that one's commit.
fn describe(dir: &Path) -> Option<String> {
    if let Some(given) = std::env::var_os("VOUCH_COMMIT") {
        return given.into_string().ok();
    }
    if !dir.join(".git").exists() {
        return None;
    }
    // Rebuild when HEAD moves: HEAD itself (a branch switch) and the ref it
    // names (a commit), wherever a worktree keeps them.
    if let Some(head) = git(dir, &["rev-parse", "--git-path", "HEAD"]) {
        println!("cargo:rerun-if-changed={}", dir.join(head).display());
    }
    if let Some(r) = git(dir, &["symbolic-ref", "-q", "HEAD"])
        && let Some(path) = git(dir, &["rev-parse", "--git-path", &r])
    {
        println!("cargo:rerun-if-changed={}", dir.join(path).display());
    }
    if let Some(packed) = git(dir, &["rev-parse", "--git-path", "packed-refs"]) {
        println!("cargo:rerun-if-changed={}", dir.join(packed).display());
    }
    let hash = git(dir, &["rev-parse", "--short=12", "HEAD"])?;
    let date = git(dir, &["log", "-1", "--format=%cs"])?;
    // Tracked files changed since HEAD (as of this build script's run).
    let dirty = git(
        dir,
        &[
            "status",
            "--porcelain",
            "--untracked-files=no",
            "--ignore-submodules",
        ],
    )
    .is_some();
    Some(format!(
        "{hash}{} {date}",
        if dirty { "-dirty" } else { "" }
    ))
}
