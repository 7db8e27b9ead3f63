//! The `dir:` target: a local write-once directory.
//!
//! Each anchored checkpoint becomes `<dir>/<origin, escaped>/<size>-<root hex>.note`,
//! created exclusively (never overwritten), written, fsynced, made read-only
//! (0444) and its directory fsynced. When vouch runs as root on a file
//! system that supports it, the file also gets the immutable attribute
//! (`chattr +i`), which even root must remove before changing or deleting
//! it; the anchor record says whether it was set.
//!
//! This is weaker than S3 Object Lock: root on the machine can undo it. Its
//! use is a copy on a separate disk or mount the log writer cannot reach.

use super::TargetProblem;
use super::error::ListedObjectProblem;
use super::record::DirAnchor;
pub use super::record::{escape_origin, object_name, origin_folder, unescape_origin};
use crate::fs::FileKind;
use crate::note::checkpoint::Checkpoint;
use crate::{Error, Result};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Largest anchored note read back.
const MAX_NOTE: u64 = 1 << 20;

fn target_error(path: &Path, problem: TargetProblem) -> Error {
    Error::AnchorTarget {
        path: path.to_path_buf(),
        problem,
    }
}

/// Every entry of every origin's folder below a `dir:` target, and every
/// `*.note` file elsewhere below it, by origin, from one pass over every
/// folder at any depth below the target (and the target itself; links are
/// not followed).
///
/// In an origin's folder (`<target>/<origin folder>/`) every entry is
/// listed: a regular file is an [`ListedEntry::Object`] of that origin
/// (its name and note are judged by the verifier); a directory, a link, a
/// FIFO or device, or a file over 1 MiB is a [`ListedEntry::Bad`] of that
/// origin. A note lying anywhere but in its origin's folder, e.g. in a
/// folder that was renamed (chattr +i protects the files, not their
/// folder's name), is a `Moved` entry of the origin its first line names,
/// never silently skipped (in another origin's folder it is also that
/// origin's entry). Something other than a folder named like an origin's
/// folder is a `Bad` entry of that origin.
pub type Index = std::collections::BTreeMap<String, Vec<ListedEntry>>;

/// Most entries read from one `dir:` target.
const MAX_INDEXED: usize = 250_000;
/// Deepest folder read below a `dir:` target.
const MAX_DEPTH: usize = 32;

/// Builds the [`Index`] of the target `dir` (which must exist).
pub fn index(dir: &Path) -> Result<Index> {
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(target_error(dir, TargetProblem::NotADirectory)),
        Err(e) => return Err(Error::io(dir, e)),
    }
    let mut out = Index::new();
    let mut count = 0usize;
    let too_many = || {
        Error::io(
            dir,
            std::io::Error::other(format!("more than {MAX_INDEXED} entries")),
        )
    };
    // Every folder at any depth below the target (links are not followed):
    // a folder moved one level deeper is still read. Only `<target>/<origin
    // folder>/` is where a note belongs.
    let mut folders: Vec<(PathBuf, Option<String>)> = Vec::new();
    let mut pending = vec![(dir.to_path_buf(), 0usize)];
    while let Some((here, depth)) = pending.pop() {
        folders.push((
            here.clone(),
            (depth == 1)
                .then(|| here.file_name().map(|n| n.to_string_lossy().into_owned()))
                .flatten(),
        ));
        if depth >= MAX_DEPTH {
            return Err(Error::io(
                &here,
                std::io::Error::other(format!("folders nested deeper than {MAX_DEPTH}")),
            ));
        }
        for entry in std::fs::read_dir(&here).map_err(|e| Error::io(&here, e))? {
            let entry = entry.map_err(|e| Error::io(&here, e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = entry.path();
            match std::fs::symlink_metadata(&path) {
                Ok(m) if m.is_dir() => {
                    count += 1;
                    if count > MAX_INDEXED {
                        return Err(too_many());
                    }
                    pending.push((path, depth + 1));
                }
                Ok(m) if depth == 0 => {
                    if let Some(origin) = unescape_origin(&name) {
                        let problem = if m.file_type().is_symlink() {
                            ListedObjectProblem::Symlink
                        } else {
                            ListedObjectProblem::NotAFolder(FileKind::of(m.file_type()))
                        };
                        out.entry(origin)
                            .or_default()
                            .push(ListedEntry::Bad { path, problem });
                    }
                }
                _ => {}
            }
        }
    }
    folders.sort();
    for (folder, name) in folders {
        let folder_origin = name.as_deref().and_then(unescape_origin);
        let mut names = Vec::new();
        for entry in std::fs::read_dir(&folder).map_err(|e| Error::io(&folder, e))? {
            let entry = entry.map_err(|e| Error::io(&folder, e))?;
            // In an origin's folder every entry counts; elsewhere, notes.
            if folder_origin.is_some() || entry.file_name().to_string_lossy().ends_with(".note") {
                names.push(entry.path());
            }
        }
        names.sort();
        for path in names {
            count += 1;
            if count > MAX_INDEXED {
                return Err(too_many());
            }
            match &folder_origin {
                Some(origin) => index_in_origin_folder(&mut out, origin, path),
                None => index_elsewhere(&mut out, path),
            }
        }
    }
    Ok(out)
}

/// The origin a note names on its first line, if any.
fn named_origin(bytes: &[u8]) -> Option<String> {
    bytes
        .split(|b| *b == b'\n')
        .next()
        .and_then(|l| std::str::from_utf8(l).ok())
        .filter(|o| !o.is_empty())
        .map(str::to_owned)
}

/// An entry of `origin`'s folder: an object (judged by the verifier: its
/// name, its note, the trust rule), or why it cannot be one.
fn index_in_origin_folder(out: &mut Index, origin: &str, path: PathBuf) {
    let bad = |problem| ListedEntry::Bad {
        path: path.clone(),
        problem,
    };
    let entry = match std::fs::symlink_metadata(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
        Err(e) => ListedEntry::Error {
            error: Error::io(&path, e),
            path: path.clone(),
        },
        Ok(m) if m.is_dir() => bad(ListedObjectProblem::Directory),
        Ok(m) if m.file_type().is_symlink() => bad(ListedObjectProblem::Symlink),
        Ok(m) if !m.is_file() => bad(ListedObjectProblem::NotAFile(FileKind::of(m.file_type()))),
        Ok(_) => match read_object(&path) {
            Ok(Some(obj)) => {
                // A note of another origin here is that origin's too (as
                // a note outside its folder), and this origin's entry.
                if let Some(other) = named_origin(&obj.bytes).filter(|o| o != origin) {
                    out.entry(other.clone())
                        .or_default()
                        .push(ListedEntry::Moved {
                            problem: ListedObjectProblem::OutsideItsFolder {
                                folder: escape_origin(&other),
                                origin: other,
                            },
                            obj: obj.clone(),
                        });
                }
                ListedEntry::Object(obj)
            }
            Ok(None) => return,
            Err(e) => match listed_problem(&e) {
                Some(problem) => bad(problem),
                None => ListedEntry::Error {
                    path: path.clone(),
                    error: e,
                },
            },
        },
    };
    out.entry(origin.to_owned()).or_default().push(entry);
}

/// A `*.note` file outside every origin's folder: a `Moved` entry of the
/// origin its first line names (one naming none belongs to nobody).
fn index_elsewhere(out: &mut Index, path: PathBuf) {
    let Ok(Some(obj)) = read_object(&path) else {
        return;
    };
    if let Some(origin) = named_origin(&obj.bytes) {
        out.entry(origin.clone())
            .or_default()
            .push(ListedEntry::Moved {
                problem: ListedObjectProblem::OutsideItsFolder {
                    folder: escape_origin(&origin),
                    origin,
                },
                obj,
            });
    }
}

/// The problem of the entry when `e` says it cannot be a note vouch wrote.
fn listed_problem(e: &Error) -> Option<ListedObjectProblem> {
    match e {
        Error::TooLarge { max, .. } => Some(ListedObjectProblem::TooLarge { max: *max }),
        Error::NotARegularFile { kind, .. } => Some(ListedObjectProblem::NotAFile(*kind)),
        Error::AnchorTarget {
            problem: TargetProblem::Symlink,
            ..
        } => Some(ListedObjectProblem::Symlink),
        Error::AnchorTarget {
            problem: TargetProblem::NotAFile,
            ..
        } => Some(ListedObjectProblem::NotAFile(FileKind::Other)),
        _ => None,
    }
}

/// Writes `note` for `cp` below `dir`. Idempotent: if the file already
/// holds exactly these bytes, it is reused.
pub fn put(dir: &Path, cp: &Checkpoint, note: &str) -> Result<DirAnchor> {
    let dir = std::path::absolute(dir).map_err(|e| Error::io(dir, e))?;
    let meta = std::fs::metadata(&dir).map_err(|e| Error::io(&dir, e))?;
    if !meta.is_dir() {
        return Err(target_error(&dir, TargetProblem::NotADirectory));
    }
    let name = object_name(cp);
    let path = dir.join(&name);
    let folder = dir.join(origin_folder(&cp.origin));
    if std::fs::symlink_metadata(&folder).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(target_error(&folder, TargetProblem::Symlink));
    }
    if !folder.exists() {
        std::fs::create_dir(&folder)
            .or_else(|e| {
                if e.kind() == std::io::ErrorKind::AlreadyExists {
                    Ok(())
                } else {
                    Err(e)
                }
            })
            .map_err(|e| Error::io(&folder, e))?;
        sync_dir(&dir)?;
    }
    let created = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o444)
        .open(&path);
    match created {
        Ok(mut file) => {
            let written = file
                .write_all(note.as_bytes())
                .and_then(|()| file.sync_all());
            if let Err(e) = written {
                drop(file);
                let _ = std::fs::remove_file(&path);
                return Err(Error::io(&path, e));
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let existing = read_limited(&path)?;
            if existing != note.as_bytes() {
                return Err(target_error(&path, TargetProblem::ExistsWithOtherContent));
            }
        }
        Err(e) => return Err(Error::io(&path, e)),
    }
    // Read-only even if a umask or an earlier writer left it writable.
    let meta = std::fs::metadata(&path).map_err(|e| Error::io(&path, e))?;
    if meta.permissions().mode() & 0o222 != 0 {
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444))
            .map_err(|e| Error::io(&path, e))?;
    }
    sync_dir(&folder)?;
    let immutable = is_immutable(&path) || (meta.uid() == 0 && set_immutable(&path));
    let mode = std::fs::metadata(&path)
        .map_err(|e| Error::io(&path, e))?
        .permissions()
        .mode()
        & 0o7777;
    // A file that stays writable is no write-once anchor: not recorded.
    if mode & 0o222 != 0 {
        return Err(target_error(&path, TargetProblem::StaysWritable));
    }
    Ok(DirAnchor {
        dir: dir.to_string_lossy().into_owned(),
        file: name,
        mode,
        immutable,
    })
}

fn sync_dir(dir: &Path) -> Result<()> {
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| Error::io(dir, e))
}

fn read_limited(path: &Path) -> Result<Vec<u8>> {
    crate::fs::read_bounded(path, MAX_NOTE)
}

/// Sets the immutable attribute with `chattr +i` (no safe Rust API exists
/// for FS_IOC_SETFLAGS). Returns whether it is now set.
fn set_immutable(path: &Path) -> bool {
    let ok = Command::new("chattr")
        .arg("+i")
        .arg("--")
        .arg(path)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    ok && is_immutable(path)
}

/// Whether the immutable attribute is set (read with `lsattr -d`); false
/// when it cannot be read.
pub fn is_immutable(path: &Path) -> bool {
    let Ok(out) = Command::new("lsattr")
        .arg("-d")
        .arg("--")
        .arg(path)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
    else {
        return false;
    };
    if !out.status.success() {
        return false;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    text.split_whitespace()
        .next()
        .is_some_and(|flags| flags.contains('i'))
}

/// What is found at a `dir:` anchor's location now.
#[derive(Debug, Clone)]
pub struct DirObject {
    pub path: PathBuf,
    pub bytes: Vec<u8>,
    pub mode: u32,
    pub immutable: bool,
}

/// Reads `file` (a confined relative path, [`DirAnchor::confined`]) below
/// the auditor's directory `base`. A missing file is `Ok(None)`.
///
/// [`DirAnchor::confined`]: super::record::DirAnchor::confined
pub fn fetch_at(base: &Path, file: &str) -> Result<Option<DirObject>> {
    // The auditor's directory must be there: one that is gone (unmounted)
    // cannot be asked, which is not the same as an anchor that is missing.
    match std::fs::metadata(base) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(target_error(base, TargetProblem::NotADirectory)),
        Err(e) => return Err(Error::io(base, e)),
    }
    // No component below the auditor's directory may be a link: the bytes
    // read are the ones stored in that directory.
    let mut path = base.to_path_buf();
    let parts: Vec<&str> = file.split('/').collect();
    for (i, part) in parts.iter().enumerate() {
        path.push(part);
        match std::fs::symlink_metadata(&path) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(target_error(&path, TargetProblem::Symlink));
            }
            Ok(m) if i + 1 < parts.len() && !m.is_dir() => {
                return Err(target_error(&path, TargetProblem::NotADirectory));
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io(&path, e)),
        }
    }
    read_object(&path)
}

fn read_object(path: &Path) -> Result<Option<DirObject>> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(path, e)),
    };
    if !meta.is_file() {
        return Err(target_error(path, TargetProblem::NotAFile));
    }
    Ok(Some(DirObject {
        path: path.to_path_buf(),
        bytes: read_limited(path)?,
        mode: meta.permissions().mode() & 0o7777,
        // Only a file named as a note can be one: junk is reported as junk
        // without a look at its attributes (one `lsattr` per entry would let
        // whoever fills the folder make every audit slow).
        immutable: named_as_note(path) && is_immutable(path),
    }))
}

/// Whether the file name has a note's shape (`<20 digits>-<64 lowercase
/// hex>.note`).
fn named_as_note(path: &Path) -> bool {
    let Some(stem) = path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_suffix(".note"))
    else {
        return false;
    };
    stem.split_once('-').is_some_and(|(size, root)| {
        size.len() == 20
            && size.bytes().all(|b| b.is_ascii_digit())
            && root.len() == 64
            && root.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
}

/// One entry of a [`list`]ing: the object, or why this entry cannot be a
/// note vouch wrote (`Bad`), or why it could not be read (`Error`).
#[derive(Debug)]
pub enum ListedEntry {
    Object(DirObject),
    /// A note lying outside its origin's folder ([`index`]).
    Moved {
        obj: DirObject,
        problem: ListedObjectProblem,
    },
    Bad {
        path: PathBuf,
        problem: ListedObjectProblem,
    },
    Error {
        path: PathBuf,
        error: Error,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_keeps_safe_bytes_and_escapes_the_rest() {
        assert_eq!(escape_origin("example.com/audit"), "example.com%2Faudit");
        assert_eq!(escape_origin("a:b_c-d"), "a%3Ab_c-d");
        assert_eq!(escape_origin("%"), "%25");
    }

    #[test]
    fn object_name_is_content_addressed() {
        let cp = Checkpoint {
            origin: "o/x".into(),
            size: 7,
            root: [0xab; 32],
            extensions: vec![],
        };
        let name = object_name(&cp);
        assert_eq!(name, format!("o%2Fx/{:020}-{}.note", 7, "ab".repeat(32)));
    }

    #[test]
    fn put_is_exclusive_and_idempotent() {
        let dir = tempfile::tempdir().unwrap();
        let cp = Checkpoint {
            origin: "o".into(),
            size: 1,
            root: [1; 32],
            extensions: vec![],
        };
        let a = put(dir.path(), &cp, "o\nnote one\n").unwrap();
        assert_eq!(a.mode & 0o222, 0, "read-only");
        let b = put(dir.path(), &cp, "o\nnote one\n").unwrap();
        assert_eq!(a.file, b.file);
        let err = put(dir.path(), &cp, "o\nanother note\n").unwrap_err();
        assert_eq!(err.code(), "anchor_exists");
        let found = index(dir.path()).unwrap().remove("o").unwrap();
        assert_eq!(found.len(), 1);
        let ListedEntry::Object(obj) = &found[0] else {
            panic!("{:?}", found[0]);
        };
        assert_eq!(obj.bytes, b"o\nnote one\n");
        unset_immutable(&obj.path);
    }

    fn unset_immutable(path: &Path) {
        let _ = Command::new("chattr").arg("-i").arg(path).status();
    }
}
