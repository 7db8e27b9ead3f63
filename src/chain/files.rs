//! Which files a verification run reads: the paths given, directories
//! walked for log files, and the rule that names log files and rotated
//! segments.
//!
//! Symlinks: a path given on the command line is followed. In a walk,
//! symlinks to files and directories are followed too, with loop
//! protection (a directory already visited, by any name, is not walked
//! again); a dangling link, an unreadable directory or entry, and a
//! non-regular file named like a log are reported as a problem of its own
//! (an `error` row), never skipped silently, and the walk goes on. One file
//! reached by several names (symlinks, hard links) is verified once, under
//! the first name in sorted order.

use super::segments::is_log_name;
use crate::{Error, Result};
use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Files found, and paths that could not be looked at.
#[derive(Debug, Clone, Default)]
pub struct Found {
    /// Regular files, sorted, each file once.
    pub files: Vec<PathBuf>,
    /// Paths that could not be examined, with why; reported per path.
    pub problems: Vec<(PathBuf, String)>,
}

/// Finds the log files named by `paths`: files as given, directories walked
/// recursively for files named `*.jsonl` or rotated segments `*.jsonl.N`,
/// `*.jsonl-N` (hidden entries skipped). Fails only when nothing at all was
/// found (no file and no problem to report).
pub fn collect_log_files(paths: &[PathBuf]) -> Result<Found> {
    let mut found = Found::default();
    let mut candidates = Vec::new();
    let mut visited = HashSet::new();
    for path in paths {
        match std::fs::metadata(path) {
            Err(e) => {
                // A path the auditor named that is not there is an input
                // error of the whole run.
                return Err(Error::io(path, e));
            }
            Ok(meta) if meta.is_dir() => walk(
                path,
                &meta,
                &mut visited,
                &mut candidates,
                &mut found.problems,
            ),
            Ok(meta) if meta.is_file() => candidates.push((path.clone(), meta.dev(), meta.ino())),
            Ok(_) => found
                .problems
                .push((path.clone(), "not a regular file (refused)".to_owned())),
        }
    }
    candidates.sort();
    let mut seen = HashSet::new();
    for (path, dev, ino) in candidates {
        if seen.insert((dev, ino)) {
            found.files.push(path);
        }
    }
    found.problems.sort();
    found.problems.dedup();
    if found.files.is_empty() && found.problems.is_empty() {
        let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        return Err(Error::NoLogFiles {
            paths: shown.join(", "),
        });
    }
    Ok(found)
}

fn walk(
    dir: &Path,
    meta: &std::fs::Metadata,
    visited: &mut HashSet<(u64, u64)>,
    out: &mut Vec<(PathBuf, u64, u64)>,
    problems: &mut Vec<(PathBuf, String)>,
) {
    if !visited.insert((meta.dev(), meta.ino())) {
        return;
    }
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            problems.push((dir.to_path_buf(), format!("cannot read directory: {e}")));
            return;
        }
    };
    for entry in entries {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                problems.push((dir.to_path_buf(), format!("cannot read directory: {e}")));
                return;
            }
        };
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') {
            continue;
        }
        let path = entry.path();
        // The entry's own type costs no system call; only symlinks (and
        // file systems that do not report types) are followed with a stat.
        let own = entry.file_type().ok();
        if let Some(t) = own
            && t.is_file()
        {
            if is_log_name(&name) {
                use std::os::unix::fs::DirEntryExt;
                out.push((path, meta.dev(), entry.ino()));
            }
            continue;
        }
        let meta = match std::fs::metadata(&path) {
            Ok(m) => m,
            Err(e) => {
                let is_link = own.is_some_and(|t| t.is_symlink());
                if is_link && e.kind() == std::io::ErrorKind::NotFound {
                    if is_log_name(&name) {
                        problems.push((path, "dangling symlink".to_owned()));
                    }
                } else {
                    problems.push((path, e.to_string()));
                }
                continue;
            }
        };
        if meta.is_dir() {
            walk(&path, &meta, visited, out, problems);
        } else if is_log_name(&name) {
            if meta.is_file() {
                out.push((path, meta.dev(), meta.ino()));
            } else {
                problems.push((path, "not a regular file (refused)".to_owned()));
            }
        }
    }
}
