//! Bounded reads of the small files vouch takes as input: keys, keysets,
//! checkpoints, proofs, receipts, record lines, TSA tokens and roots.
//!
//! [`read_bounded`] opens the path without blocking (`O_NONBLOCK`, so that
//! opening a FIFO returns at once instead of waiting for a writer), checks the
//! type of the *opened* handle (no window between the check and the read in
//! which the path could be swapped), refuses anything but a regular file, and
//! reads at most `max + 1` bytes, so a file that grows while it is read is
//! still refused rather than read without bound. [`open_regular`] is the
//! same open for inputs read as a stream (logs, receipts, snapshots).
//!
//! [`save_atomic`] replaces a file vouch keeps for itself (a verify or
//! anchor state, the writer's tree cache): it refuses a path that names
//! anything but a regular file (a FIFO there would block the write, a
//! device would swallow it), writes a temporary file of the run's own that
//! is created exclusively (never an existing FIFO or link planted under
//! that name), syncs it and renames it over the path.

use crate::{Error, Result};
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// What a path that is not a regular file turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FileKind {
    #[error("a directory")]
    Directory,
    #[error("a FIFO")]
    Fifo,
    #[error("a socket")]
    Socket,
    #[error("a character device")]
    CharDevice,
    #[error("a block device")]
    BlockDevice,
    #[error("not a regular file")]
    Other,
}

impl FileKind {
    pub(crate) fn of(t: std::fs::FileType) -> Self {
        if t.is_dir() {
            FileKind::Directory
        } else if t.is_fifo() {
            FileKind::Fifo
        } else if t.is_socket() {
            FileKind::Socket
        } else if t.is_char_device() {
            FileKind::CharDevice
        } else if t.is_block_device() {
            FileKind::BlockDevice
        } else {
            FileKind::Other
        }
    }
}

/// Reads all of the regular file at `path`, at most `max` bytes.
///
/// Errors: [`Error::NotARegularFile`] for a FIFO, device, socket or
/// directory (a FIFO never blocks the call), [`Error::TooLarge`] when the
/// file holds more than `max` bytes, [`Error::Io`] otherwise.
pub fn read_bounded(path: &Path, max: u64) -> Result<Vec<u8>> {
    let file = open_regular(path)?;
    let meta = file.metadata().map_err(|e| Error::io(path, e))?;
    if meta.len() > max {
        return Err(too_large(path, max));
    }
    // The size is only a hint (the file may grow): read at most max + 1.
    let mut buf = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(max.saturating_add(1))
        .read_to_end(&mut buf)
        .map_err(|e| Error::io(path, e))?;
    if buf.len() as u64 > max {
        return Err(too_large(path, max));
    }
    Ok(buf)
}

/// Opens the regular file at `path` for reading, as [`read_bounded`] does
/// (without blocking on a FIFO; anything but a regular file is refused),
/// for inputs that are read as a stream with their own bounds.
pub fn open_regular(path: &Path) -> Result<std::fs::File> {
    open_regular_meta(path).map(|(file, _)| file)
}

/// [`open_regular`], and the metadata it read to check the file's type (one
/// `fstat` for callers that also need the size).
pub(crate) fn open_regular_meta(path: &Path) -> Result<(std::fs::File, std::fs::Metadata)> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| Error::io(path, e))?;
    let meta = file.metadata().map_err(|e| Error::io(path, e))?;
    if !meta.file_type().is_file() {
        return Err(Error::NotARegularFile {
            path: path.to_path_buf(),
            kind: FileKind::of(meta.file_type()),
        });
    }
    Ok((file, meta))
}

/// [`open_regular`] for callers that report an [`std::io::Error`] beside
/// the path themselves: anything but a regular file is an error saying
/// what it is ("not a regular file (a FIFO)").
pub(crate) fn open_regular_io(path: &Path) -> std::io::Result<std::fs::File> {
    open_regular_io_meta(path).map(|(file, _)| file)
}

/// [`open_regular_io`] with the file's metadata ([`open_regular_meta`]).
pub(crate) fn open_regular_io_meta(
    path: &Path,
) -> std::io::Result<(std::fs::File, std::fs::Metadata)> {
    open_regular_meta(path).map_err(|e| match e {
        Error::Io { source, .. } => source,
        Error::NotARegularFile { kind, .. } => {
            std::io::Error::other(format!("not a regular file ({kind})"))
        }
        other => std::io::Error::other(other.to_string()),
    })
}

/// Reads the regular file at `path` as [`read_bounded`] does; a path where
/// nothing is is `Ok(None)`. A link that points nowhere is an error, not
/// "nothing there" (a state on an unmounted volume must not start over).
pub fn read_bounded_if_exists(path: &Path, max: u64) -> Result<Option<Vec<u8>>> {
    match read_bounded(path, max) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(Error::Io { source, .. })
            if source.kind() == std::io::ErrorKind::NotFound
                && std::fs::symlink_metadata(path)
                    .is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound) =>
        {
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// Checks that `path` can be replaced by a regular file: it is one (a link
/// to one counts), or nothing is there yet.
///
/// Errors: [`Error::NotARegularFile`] for a FIFO, device, socket or
/// directory, [`Error::Io`] when it cannot be examined.
pub fn check_replaceable(path: &Path) -> Result<()> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => Ok(()),
        Ok(m) => Err(Error::NotARegularFile {
            path: path.to_path_buf(),
            kind: FileKind::of(m.file_type()),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io(path, e)),
    }
}

/// Replaces the file at `path` with `bytes` atomically: after
/// [`check_replaceable`], a temporary file of this run's own in the same
/// directory (`NAME.PID-RANDOM.tmp`, created exclusively, so nothing
/// planted under a name can be opened in its place), written, synced and
/// renamed over `path`. On failure the temporary file is removed and
/// `path` is left as it was.
pub fn save_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    check_replaceable(path)?;
    let mut nonce = [0u8; 8];
    // The exclusive create is what keeps the name ours; the random part
    // only keeps concurrent runs apart, so a failure to get it is no error.
    let _ = getrandom::fill(&mut nonce);
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(
        ".{}-{}.tmp",
        std::process::id(),
        crate::hex::encode(&nonce)
    ));
    let tmp = std::path::PathBuf::from(tmp);
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
            .open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    };
    write().map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::io(path, e)
    })
}

fn too_large(path: &Path, max: u64) -> Error {
    Error::TooLarge {
        path: path.to_path_buf(),
        max,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_within_the_bound() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, b"hello").unwrap();
        assert_eq!(read_bounded(&p, 5).unwrap(), b"hello");
        assert_eq!(read_bounded(&p, 100).unwrap(), b"hello");
        match read_bounded(&p, 4) {
            Err(Error::TooLarge { max: 4, .. }) => {}
            other => panic!("{other:?}"),
        }
        std::fs::write(&p, b"").unwrap();
        assert_eq!(read_bounded(&p, 0).unwrap(), b"");
    }

    #[test]
    fn refuses_what_is_not_a_regular_file() {
        let dir = tempfile::tempdir().unwrap();
        match read_bounded(dir.path(), 100) {
            Err(e @ Error::NotARegularFile { .. }) => {
                assert_eq!(e.code(), "not_a_regular_file");
                assert!(e.to_string().contains("a directory"), "{e}");
            }
            other => panic!("{other:?}"),
        }
        let fifo = dir.path().join("fifo");
        let ok = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success();
        assert!(ok);
        // Returns at once (no writer is ever attached).
        match read_bounded(&fifo, 100) {
            Err(Error::NotARegularFile {
                kind: FileKind::Fifo,
                ..
            }) => {}
            other => panic!("{other:?}"),
        }
        match read_bounded(Path::new("/dev/null"), 100) {
            Err(Error::NotARegularFile {
                kind: FileKind::CharDevice,
                ..
            }) => {}
            other => panic!("{other:?}"),
        }
        match read_bounded(&dir.path().join("missing"), 100) {
            Err(Error::Io { source, .. }) => {
                assert_eq!(source.kind(), std::io::ErrorKind::NotFound)
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_missing_file_is_none_and_a_fifo_is_still_refused() {
        let dir = tempfile::tempdir().unwrap();
        assert!(
            read_bounded_if_exists(&dir.path().join("missing"), 10)
                .unwrap()
                .is_none()
        );
        let fifo = dir.path().join("fifo");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        match read_bounded_if_exists(&fifo, 10) {
            Err(Error::NotARegularFile {
                kind: FileKind::Fifo,
                ..
            }) => {}
            other => panic!("{other:?}"),
        }
        let dangling = dir.path().join("dangling");
        std::os::unix::fs::symlink(dir.path().join("nowhere"), &dangling).unwrap();
        match read_bounded_if_exists(&dangling, 10) {
            Err(Error::Io { source, .. }) => {
                assert_eq!(source.kind(), std::io::ErrorKind::NotFound)
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn save_atomic_replaces_a_regular_file_and_refuses_anything_else() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("state");
        save_atomic(&p, b"one").unwrap();
        save_atomic(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        // Nothing but the file is left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        let fifo = dir.path().join("fifo");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        // Returns at once, and the FIFO is still there.
        match save_atomic(&fifo, b"x") {
            Err(Error::NotARegularFile {
                kind: FileKind::Fifo,
                ..
            }) => {}
            other => panic!("{other:?}"),
        }
        assert!(
            std::fs::symlink_metadata(&fifo)
                .unwrap()
                .file_type()
                .is_fifo()
        );
        match save_atomic(dir.path(), b"x") {
            Err(Error::NotARegularFile {
                kind: FileKind::Directory,
                ..
            }) => {}
            other => panic!("{other:?}"),
        }
        match save_atomic(Path::new("/dev/null"), b"x") {
            Err(Error::NotARegularFile {
                kind: FileKind::CharDevice,
                ..
            }) => {}
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn follows_a_symlink_to_a_regular_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, b"key").unwrap();
        let l = dir.path().join("l");
        std::os::unix::fs::symlink(&p, &l).unwrap();
        assert_eq!(read_bounded(&l, 10).unwrap(), b"key");
    }
}
