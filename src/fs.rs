//! Bounded reads of the small files vouch takes as input: keys, keysets,
//! checkpoints, proofs, receipts, record lines, TSA tokens and roots.
//!
//! [`read_bounded`] opens the path without blocking (`O_NONBLOCK`, so that
//! opening a FIFO returns at once instead of waiting for a writer), checks the
//! type of the *opened* handle (no window between the check and the read in
//! which the path could be swapped), refuses anything but a regular file, and
//! reads at most `max + 1` bytes, so a file that grows while it is read is
//! still refused rather than read without bound.

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
    Ok(file)
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
    fn follows_a_symlink_to_a_regular_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, b"key").unwrap();
        let l = dir.path().join("l");
        std::os::unix::fs::symlink(&p, &l).unwrap();
        assert_eq!(read_bounded(&l, 10).unwrap(), b"key");
    }
}
