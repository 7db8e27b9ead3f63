//! Path arguments against the policy's roots.
//!
//! A string is inside the roots only when every way of reading it lands
//! inside some root; anything that cannot be read as an absolute path is
//! outside (fail closed):
//!
//! - a relative path, `~` or `~/x` (the server's working directory and home
//!   are not known here) is outside;
//! - `file://` is stripped; a `file:` URL must also be inside when read by
//!   the WHATWG URL parser (percent-decoded, `%2e%2e` as `..`), and a
//!   `file://HOST/...` URL is outside (`HOST/...` is relative);
//! - `.` and `..` are resolved lexically (what `path.resolve` in a Node
//!   server does), then the symbolic links of the longest existing prefix
//!   are resolved (`std::fs::canonicalize`) and the rest appended;
//! - the path is also walked as the kernel walks it (each symbolic link
//!   resolved where it is met, `..` applied to the resolved directory), and
//!   that reading must be inside too;
//! - an entry that exists but cannot be resolved (a dangling or looping
//!   symbolic link, a directory we may not search) makes the path outside;
//! - comparison is by whole components: `/srv/project2` is not inside
//!   `/srv/project`; a root is inside itself.
//!
//! Paths longer than [`MAX_PATH_BYTES`] or with more than
//! [`MAX_COMPONENTS`] components are outside (bounded work per call).
//! The answer is as of the call: a link changed later is not seen.

use std::ffi::OsString;
use std::io::ErrorKind;
use std::path::{Component, Path, PathBuf};

/// Longest path argument examined.
pub(crate) const MAX_PATH_BYTES: usize = 4096;
/// Most components of a path argument examined.
pub(crate) const MAX_COMPONENTS: usize = 256;

/// A root as given in the policy: absolute; canonicalised when it exists,
/// else lexically normalised.
pub(crate) fn root(text: &str) -> Result<PathBuf, &'static str> {
    let path = Path::new(text);
    if !path.is_absolute() {
        return Err("a root must be an absolute path");
    }
    let lexical = lexical(path);
    Ok(std::fs::canonicalize(&lexical).unwrap_or(lexical))
}

/// True when `text` is a path inside some of `roots` in every reading.
pub(crate) fn is_inside(text: &str, roots: &[PathBuf]) -> bool {
    if roots.is_empty() || text.len() > MAX_PATH_BYTES {
        return false;
    }
    let Some(candidates) = readings(text) else {
        return false;
    };
    candidates.iter().all(|p| {
        if p.components().count() > MAX_COMPONENTS {
            return false;
        }
        let inside = |resolved: Option<PathBuf>| {
            resolved.is_some_and(|r| roots.iter().any(|root| r.starts_with(root)))
        };
        inside(prefix_resolved(&lexical(p))) && inside(walked(p))
    })
}

/// The absolute paths `text` may stand for, or `None` when one of them is
/// not absolute.
fn readings(text: &str) -> Option<Vec<PathBuf>> {
    if let Some(rest) = text.strip_prefix("file://") {
        let literal = PathBuf::from(rest);
        let url = url::Url::parse(text).ok()?;
        let decoded = url.to_file_path().ok()?;
        if !literal.is_absolute() || !decoded.is_absolute() {
            return None;
        }
        return Some(vec![literal, decoded]);
    }
    let path = PathBuf::from(text);
    path.is_absolute().then(|| vec![path])
}

/// `.` and `..` resolved without looking at the file system (`..` at the
/// root stays at the root).
pub(crate) fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for c in path.components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::ParentDir => {
                out.pop();
            }
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

/// The longest existing prefix of a lexically normal path canonicalised,
/// the rest appended; `None` when an existing entry cannot be resolved.
fn prefix_resolved(path: &Path) -> Option<PathBuf> {
    let mut existing = path.to_path_buf();
    let mut rest: Vec<OsString> = Vec::new();
    loop {
        match std::fs::canonicalize(&existing) {
            Ok(mut resolved) => {
                for name in rest.iter().rev() {
                    resolved.push(name);
                }
                return Some(resolved);
            }
            Err(_) if std::fs::symlink_metadata(&existing).is_ok() => return None,
            Err(_) => {
                let name = existing.file_name()?.to_os_string();
                rest.push(name);
                existing.pop();
            }
        }
    }
}

/// The path as the kernel walks it: a symbolic link is resolved where it is
/// met and a `..` after it applies to its target. Missing entries are taken
/// as written. `None` when an existing entry cannot be resolved.
fn walked(path: &Path) -> Option<PathBuf> {
    let mut current = PathBuf::from("/");
    for c in path.components() {
        match c {
            Component::Normal(name) => {
                let next = current.join(name);
                match std::fs::symlink_metadata(&next) {
                    Ok(meta) if meta.file_type().is_symlink() => {
                        current = std::fs::canonicalize(&next).ok()?;
                    }
                    Ok(_) => current = next,
                    Err(e)
                        if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) =>
                    {
                        current = next;
                    }
                    Err(_) => return None,
                }
            }
            Component::ParentDir => {
                current.pop();
            }
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    Some(current)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn lexical_resolves_dots_and_clamps_at_root() {
        assert_eq!(lexical(Path::new("/a/./b/../c")), PathBuf::from("/a/c"));
        assert_eq!(lexical(Path::new("/../../etc")), PathBuf::from("/etc"));
        assert_eq!(lexical(Path::new("//a//b/")), PathBuf::from("/a/b"));
    }

    #[test]
    fn walking_follows_a_link_before_dotdot() {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let root = base.join("root");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::create_dir_all(base.join("elsewhere/deep")).unwrap();
        std::os::unix::fs::symlink(base.join("elsewhere/deep"), root.join("link")).unwrap();
        let roots = vec![root.clone()];
        // Lexically `root/link/../x` is `root/x`; the kernel reads
        // `elsewhere/x`.
        let p = format!("{}/link/../x", root.display());
        assert!(!is_inside(&p, &roots));
        assert!(is_inside(&format!("{}/sub/../x", root.display()), &roots));
    }

    #[test]
    fn dangling_link_is_outside() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::os::unix::fs::symlink("/nonexistent/target", root.join("dangling")).unwrap();
        let roots = vec![root.clone()];
        assert!(!is_inside(&format!("{}/dangling", root.display()), &roots));
        assert!(is_inside(&format!("{}/new-file", root.display()), &roots));
    }

    #[test]
    fn file_urls_are_read_both_ways() {
        let roots = vec![PathBuf::from("/nonexistent-vouch-root")];
        assert!(is_inside("file:///nonexistent-vouch-root/a", &roots));
        assert!(!is_inside(
            "file:///nonexistent-vouch-root/%2e%2e/etc",
            &roots
        ));
        assert!(!is_inside("file://host/nonexistent-vouch-root/a", &roots));
        assert!(!is_inside(
            "file://localhost/nonexistent-vouch-root/a",
            &roots
        ));
    }

    #[test]
    fn bounds_make_a_path_outside() {
        let roots = vec![PathBuf::from("/")];
        assert!(is_inside("/a", &roots));
        assert!(!is_inside(
            &format!("/{}", "a".repeat(MAX_PATH_BYTES)),
            &roots
        ));
        assert!(!is_inside(&"/a".repeat(MAX_COMPONENTS + 1), &roots));
        assert!(!is_inside("/a", &[]));
    }
}
