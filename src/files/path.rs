//! Stamped paths: relative, normalised, stored losslessly.
//!
//! A stamped path is a sequence of bytes (Unix file names need not be
//! UTF-8) of one or more `/`-separated components, none of them empty,
//! `.` or `..`, with no leading `/` and no NUL. In JSON a path that is
//! UTF-8 is written as `"path"`; any other is written as `"path_b64"`
//! (standard base64 of the raw bytes), so no name is altered or lost.
//! People see [`display`]: the UTF-8 text with control characters and
//! invalid bytes escaped as `\xNN` (and `\` as `\\`).

use base64::Engine;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// Longest stamped path accepted, in bytes (Linux `PATH_MAX`).
pub const MAX_PATH_BYTES: usize = 4096;

/// Why bytes are not a stamped path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PathProblem {
    #[error("the path is empty")]
    Empty,
    #[error("the path is absolute")]
    Absolute,
    #[error("the path has an empty, '.' or '..' component")]
    NotNormal,
    #[error("the path holds a NUL byte")]
    Nul,
    #[error("the path is longer than {MAX_PATH_BYTES} bytes")]
    TooLong,
}

impl PathProblem {
    pub fn code(&self) -> &'static str {
        match self {
            PathProblem::Empty => "empty_path",
            PathProblem::Absolute => "absolute_path",
            PathProblem::NotNormal => "path_not_normal",
            PathProblem::Nul => "path_nul",
            PathProblem::TooLong => "path_too_long",
        }
    }
}

/// Checks that `bytes` is a stamped path (see the module docs).
pub fn check(bytes: &[u8]) -> Result<(), PathProblem> {
    if bytes.is_empty() {
        return Err(PathProblem::Empty);
    }
    if bytes.len() > MAX_PATH_BYTES {
        return Err(PathProblem::TooLong);
    }
    if bytes[0] == b'/' {
        return Err(PathProblem::Absolute);
    }
    if bytes.contains(&0) {
        return Err(PathProblem::Nul);
    }
    if bytes
        .split(|b| *b == b'/')
        .any(|c| c.is_empty() || c == b"." || c == b"..")
    {
        return Err(PathProblem::NotNormal);
    }
    Ok(())
}

/// The path as people see it: UTF-8 text, with `\`, control characters and
/// bytes that are not UTF-8 escaped (`\\`, `\xNN`).
pub fn display(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                c if c.is_control() => {
                    let mut buf = [0u8; 4];
                    for b in c.encode_utf8(&mut buf).bytes() {
                        out.push_str(&format!("\\x{b:02x}"));
                    }
                }
                c => out.push(c),
            }
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

/// The JSON form of a path: `(Some(text), None)` when it is UTF-8, else
/// `(None, Some(base64))`.
pub fn to_json(bytes: &[u8]) -> (Option<String>, Option<String>) {
    match std::str::from_utf8(bytes) {
        Ok(s) => (Some(s.to_owned()), None),
        Err(_) => (
            None,
            Some(base64::engine::general_purpose::STANDARD.encode(bytes)),
        ),
    }
}

/// Reads the JSON form back: exactly one of `path` and `path_b64`, and
/// `path_b64` only for bytes that are not UTF-8 (one path, one spelling).
pub fn from_json(path: Option<&str>, b64: Option<&str>) -> Option<Vec<u8>> {
    match (path, b64) {
        (Some(p), None) => Some(p.as_bytes().to_vec()),
        (None, Some(b)) => {
            let raw = base64::engine::general_purpose::STANDARD.decode(b).ok()?;
            std::str::from_utf8(&raw).is_err().then_some(raw)
        }
        _ => None,
    }
}

/// The file-system path of stamped path `rel` under `base`.
pub fn under(base: &Path, rel: &[u8]) -> PathBuf {
    base.join(OsStr::from_bytes(rel))
}

/// Removes `.` components and resolves `..` against earlier components,
/// purely lexically; `None` when `..` would leave the root.
fn lexical(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::RootDir | Component::Prefix(_) => out.push(c.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() || out.as_os_str().is_empty() {
                    return None;
                }
            }
            Component::Normal(n) => out.push(n),
        }
    }
    Some(out)
}

/// Why a PATH given on the command line cannot be stamped under the base.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RelativeError {
    #[error("it is outside the base directory {}", base.display())]
    OutsideBase { base: PathBuf },
    #[error("{0}")]
    Bad(PathProblem),
    #[error("cannot resolve its directory: {0}")]
    Resolve(String),
}

/// The stamped path of `given` (as typed, relative to the current
/// directory or absolute) relative to `base` (already canonical).
/// Directories above the last component are resolved (symlinks included,
/// with `realpath`), the last component is not, so a symlink named on the
/// command line is stamped as a link. `Ok(None)` means `given` is the base
/// itself.
pub fn relative_to(base: &Path, given: &Path) -> Result<Option<Vec<u8>>, RelativeError> {
    let cwd = std::env::current_dir().map_err(|e| RelativeError::Resolve(e.to_string()))?;
    let abs = lexical(&cwd.join(given)).ok_or(RelativeError::OutsideBase {
        base: base.to_path_buf(),
    })?;
    let (parent, name) = match (abs.parent(), abs.file_name()) {
        (Some(p), Some(n)) => (p, Some(n)),
        _ => (abs.as_path(), None),
    };
    let parent = std::fs::canonicalize(parent)
        .map_err(|e| RelativeError::Resolve(format!("{}: {e}", parent.display())))?;
    let full = match name {
        Some(n) => parent.join(n),
        None => parent,
    };
    if full == base {
        return Ok(None);
    }
    let rel = full
        .strip_prefix(base)
        .map_err(|_| RelativeError::OutsideBase {
            base: base.to_path_buf(),
        })?;
    let bytes = rel.as_os_str().as_bytes().to_vec();
    check(&bytes).map_err(RelativeError::Bad)?;
    Ok(Some(bytes))
}

/// Joins a directory's stamped path and a child name.
pub fn join(dir: Option<&[u8]>, name: &[u8]) -> Vec<u8> {
    match dir {
        None => name.to_vec(),
        Some(d) => {
            let mut v = Vec::with_capacity(d.len() + 1 + name.len());
            v.extend_from_slice(d);
            v.push(b'/');
            v.extend_from_slice(name);
            v
        }
    }
}

/// True when `path` is `dir` itself or lies below it.
pub fn is_within(path: &[u8], dir: &[u8]) -> bool {
    path == dir || (path.len() > dir.len() && path.starts_with(dir) && path[dir.len()] == b'/')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_paths_only() {
        assert!(check(b"a/b.txt").is_ok());
        assert!(check("ünï/cödé".as_bytes()).is_ok());
        assert!(check(b"\xff\xfe").is_ok());
        for (bad, code) in [
            (&b""[..], "empty_path"),
            (b"/etc/passwd", "absolute_path"),
            (b"../x", "path_not_normal"),
            (b"a/../x", "path_not_normal"),
            (b"./a", "path_not_normal"),
            (b"a//b", "path_not_normal"),
            (b"a/", "path_not_normal"),
            (b"a\0b", "path_nul"),
        ] {
            assert_eq!(check(bad).unwrap_err().code(), code, "{bad:?}");
        }
        assert_eq!(check(&[b'a'; 4097]).unwrap_err().code(), "path_too_long");
    }

    #[test]
    fn json_form_is_lossless_and_has_one_spelling() {
        for raw in [&b"plain.txt"[..], b"caf\xc3\xa9", b"bad\xff\xfename"] {
            let (p, b) = to_json(raw);
            assert_eq!(from_json(p.as_deref(), b.as_deref()).unwrap(), raw);
        }
        // UTF-8 bytes spelled as base64 are refused: one path, one spelling.
        let b64 = base64::engine::general_purpose::STANDARD.encode(b"plain");
        assert!(from_json(None, Some(&b64)).is_none());
        assert!(from_json(Some("a"), Some(&b64)).is_none());
        assert!(from_json(None, None).is_none());
    }

    #[test]
    fn display_escapes_what_a_terminal_would_interpret() {
        assert_eq!(display(b"a\xffb"), "a\\xffb");
        assert_eq!(display(b"a\x1b[31mred"), "a\\x1b[31mred");
        assert_eq!(display(b"new\nline"), "new\\x0aline");
        assert_eq!(display(b"back\\slash"), "back\\\\slash");
        assert_eq!(display("é".as_bytes()), "é");
    }

    #[test]
    fn within() {
        assert!(is_within(b"a/b", b"a"));
        assert!(is_within(b"a", b"a"));
        assert!(!is_within(b"ab", b"a"));
        assert!(!is_within(b"a", b"a/b"));
    }
}
