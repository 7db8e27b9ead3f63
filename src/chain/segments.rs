//! Which files make up a log: the one segment rule (docs/FORMAT.md §12).
//!
//! A log may be split over several files: the live file `NAME` and the
//! segments rotated away from it, `NAME.N` or `NAME-N` with `N` all ASCII
//! digits (logrotate's numeric and `dateext` styles, size-based segments).
//! Nothing else beside the log is a segment: `NAME.bak`, `NAME.old`,
//! `NAME.1.gz` and `NAME-2026-11-29` are other files. Both the writer
//! (which continues the chain of, and signs the tree over, every segment)
//! and the directory walk of `vouch verify` use this rule, so they always
//! agree on what the log is.
//!
//! Which of the segments actually belong to a log is decided by the origin
//! of their records, never by their names.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The extension of a log file.
pub const LOG_EXTENSION: &str = ".jsonl";

/// True when `suffix` (what follows a log's file name) names a rotated
/// segment: `.N` or `-N` with `N` one or more ASCII digits.
pub fn is_segment_suffix(suffix: &str) -> bool {
    let mut chars = suffix.bytes();
    matches!(chars.next(), Some(b'.' | b'-'))
        && suffix.len() > 1
        && chars.all(|b| b.is_ascii_digit())
}

/// True when `name` is a segment rotated away from the log file named
/// `base` (`base.N` or `base-N`, `N` all digits).
pub fn is_segment_of(base: &str, name: &str) -> bool {
    name.strip_prefix(base).is_some_and(is_segment_suffix)
}

/// True when a file named `name` is read as a log when walking a
/// directory: `*.jsonl`, or a segment of one (`*.jsonl.N`, `*.jsonl-N`).
pub fn is_log_name(name: &str) -> bool {
    match name.rfind(LOG_EXTENSION) {
        Some(i) if i > 0 => {
            let rest = &name[i + LOG_EXTENSION.len()..];
            rest.is_empty() || is_segment_suffix(rest)
        }
        _ => false,
    }
}

/// The live file's name a segment named `name` was rotated away from:
/// `NAME` for `NAME.N` and `NAME-N` (the inverse of [`is_segment_of`]).
pub fn live_name_of(name: &str) -> Option<&str> {
    let cut = name.rfind(['.', '-'])?;
    let base = &name[..cut];
    (!base.is_empty() && is_segment_of(base, name)).then_some(base)
}

/// The directory `path` is in (`.` for a bare name) and its file name.
pub(crate) fn dir_and_name(path: &Path) -> Option<(PathBuf, &str)> {
    let name = path.file_name()?.to_str()?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    Some((dir, name))
}

/// Every rotated segment in `dir`, by the name of the live file it was
/// rotated away from: regular files (or symlinks to them, followed as the
/// verifier's directory walk does), each list sorted. One listing serves
/// every live file of the directory. An unreadable directory has none.
pub(crate) fn rotated_in(dir: &Path) -> HashMap<String, Vec<PathBuf>> {
    let mut out: HashMap<String, Vec<PathBuf>> = HashMap::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let Some(live) = e
            .file_name()
            .to_str()
            .and_then(live_name_of)
            .map(str::to_owned)
        else {
            continue;
        };
        if std::fs::metadata(e.path()).is_ok_and(|m| m.is_file()) {
            out.entry(live).or_default().push(dir.join(e.file_name()));
        }
    }
    out.values_mut().for_each(|v| v.sort());
    out
}

/// The regular files (or symlinks to them) beside `path` that are
/// segments rotated away from it ([`is_segment_of`]), sorted by name. An
/// unreadable directory has none.
pub fn rotated_siblings(path: &Path) -> Vec<PathBuf> {
    let Some((dir, name)) = dir_and_name(path) else {
        return Vec::new();
    };
    rotated_in(&dir).remove(name).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_numeric_suffixes_are_segments() {
        for name in ["app.jsonl.1", "app.jsonl-20261129", "app.jsonl.10"] {
            assert!(is_segment_of("app.jsonl", name), "{name}");
            assert!(is_log_name(name), "{name}");
        }
        for name in [
            "app.jsonl",
            "app.jsonl.",
            "app.jsonl-",
            "app.jsonl.bak",
            "app.jsonl.old",
            "app.jsonl.1.gz",
            "app.jsonl-2026-11-29",
            "app.jsonl.1a",
            "app.jsonlx.1",
            "app.jsonl..1",
        ] {
            assert!(!is_segment_of("app.jsonl", name), "{name}");
        }
        for name in ["app.jsonl.bak", "app.jsonl.old", "app.jsonl.1.gz", ".jsonl"] {
            assert!(!is_log_name(name), "{name}");
        }
        assert!(is_log_name("app.jsonl"));
    }

    #[test]
    fn writer_and_walker_agree_on_every_sibling_of_a_jsonl_log() {
        // Whatever the suffix, a sibling is a segment of app.jsonl exactly
        // when the directory walk reads it as a log.
        for suffix in [
            "",
            ".1",
            "-1",
            ".bak",
            ".old",
            ".1.gz",
            "-2026-11-29",
            ".",
            "-",
            "..1",
            ".12x",
        ] {
            let name = format!("app.jsonl{suffix}");
            if !suffix.is_empty() {
                assert_eq!(
                    is_segment_of("app.jsonl", &name),
                    is_log_name(&name),
                    "{name}"
                );
            }
        }
    }
}
