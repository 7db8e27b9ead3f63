//! Hashing files and reading links without following or tearing them.
//!
//! A file is hashed through the handle it was opened as (`O_NOFOLLOW`
//! unless asked to follow), and its identity, size, mtime and ctime are
//! compared before and after the read, and with what the caller saw: a
//! file that changed or was replaced while it was hashed is a
//! [`FileProblem`], never a torn digest. Large files are read by one thread
//! while another hashes. Used by `stamp` (walking and verifying stamped
//! trees) and `drift` (tree snapshots).

use crate::fs::FileKind;
use crate::merkle::Hash;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

/// Why a file was not stamped (or, on verify, could not be checked).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FileProblem {
    #[error("no such file")]
    Missing,
    #[error("cannot read it: {0}")]
    Unreadable(String),
    #[error("it is {0}, not a regular file, directory or symlink")]
    Special(FileKind),
    #[error("it changed while it was hashed ({0})")]
    Changed(&'static str),
    #[error("a directory above it is a symlink or not a directory: {0}")]
    UnsafeParent(String),
    #[error("{0}")]
    Path(String),
}

impl FileProblem {
    pub fn code(&self) -> &'static str {
        match self {
            FileProblem::Missing => "missing",
            FileProblem::Unreadable(_) => "unreadable",
            FileProblem::Special(_) => "special_file",
            FileProblem::Changed(_) => "changed_while_hashed",
            FileProblem::UnsafeParent(_) => "unsafe_parent",
            FileProblem::Path(_) => "bad_path",
        }
    }

    pub fn of_io(e: &std::io::Error) -> Self {
        if e.kind() == std::io::ErrorKind::NotFound {
            FileProblem::Missing
        } else {
            FileProblem::Unreadable(e.to_string())
        }
    }
}

/// SHA-256 of bytes.
pub fn sha256(data: &[u8]) -> Hash {
    let d = ring::digest::digest(&ring::digest::SHA256, data);
    let mut out = [0u8; 32];
    out.copy_from_slice(d.as_ref());
    out
}

/// Reads a symlink's target, checking it is still the link the walk saw.
pub fn read_link(abs: &Path, dev: u64, ino: u64) -> Result<Box<[u8]>, FileProblem> {
    let t = std::fs::read_link(abs).map_err(|e| FileProblem::of_io(&e))?;
    let m = std::fs::symlink_metadata(abs).map_err(|e| FileProblem::of_io(&e))?;
    if !m.file_type().is_symlink() || m.dev() != dev || m.ino() != ino {
        return Err(FileProblem::Changed("replaced"));
    }
    Ok(t.as_os_str().as_bytes().to_vec().into_boxed_slice())
}

const CHUNK: usize = 1 << 20;

thread_local! {
    static BUF: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Hashes the regular file at `abs` (not following a final symlink unless
/// `follow`). With `expect`, the file must be the one (device, inode) seen
/// before. Returns its size and SHA-256.
pub fn hash_file(
    abs: &Path,
    follow: bool,
    expect: Option<(u64, u64)>,
) -> Result<(u64, Hash), FileProblem> {
    let mut flags = libc::O_NONBLOCK | libc::O_NOCTTY;
    if !follow {
        flags |= libc::O_NOFOLLOW;
    }
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags)
        .open(abs)
        .map_err(|e| {
            if e.raw_os_error() == Some(libc::ELOOP) {
                FileProblem::Changed("replaced by a symlink")
            } else {
                FileProblem::of_io(&e)
            }
        })?;
    let before = file.metadata().map_err(|e| FileProblem::of_io(&e))?;
    if !before.is_file() {
        return Err(FileProblem::Special(FileKind::of(before.file_type())));
    }
    if expect.is_some_and(|(d, i)| (d, i) != (before.dev(), before.ino())) {
        return Err(FileProblem::Changed("replaced"));
    }
    let (n, digest) = if before.len() >= PIPELINE_MIN {
        hash_pipelined(&mut file)?
    } else {
        hash_buffered(&mut file, before.len())?
    };
    let after = file.metadata().map_err(|e| FileProblem::of_io(&e))?;
    if n != before.len() || after.len() != before.len() {
        return Err(FileProblem::Changed("size"));
    }
    if (after.mtime(), after.mtime_nsec()) != (before.mtime(), before.mtime_nsec())
        || (after.ctime(), after.ctime_nsec()) != (before.ctime(), before.ctime_nsec())
    {
        return Err(FileProblem::Changed("modified"));
    }
    // The path must still name the file that was read.
    let now = if follow {
        std::fs::metadata(abs)
    } else {
        std::fs::symlink_metadata(abs)
    };
    match now {
        Ok(m) if (m.dev(), m.ino()) == (before.dev(), before.ino()) => Ok((n, digest)),
        _ => Err(FileProblem::Changed("renamed or replaced")),
    }
}

/// Hashes a file in one thread through a reused buffer.
fn hash_buffered(file: &mut std::fs::File, len: u64) -> Result<(u64, Hash), FileProblem> {
    BUF.with(|b| {
        let mut buf = b.borrow_mut();
        if buf.len() < CHUNK {
            buf.resize(CHUNK, 0);
        }
        // Small files in one read of their size (plus one to see EOF).
        let want = usize::try_from(len)
            .unwrap_or(CHUNK)
            .saturating_add(1)
            .min(CHUNK);
        let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
        let mut n: u64 = 0;
        loop {
            match file.read(&mut buf[..want]) {
                Ok(0) => break,
                Ok(k) => {
                    ctx.update(&buf[..k]);
                    n += k as u64;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(FileProblem::Unreadable(e.to_string())),
            }
        }
        let mut out = [0u8; 32];
        out.copy_from_slice(ctx.finish().as_ref());
        Ok((n, out))
    })
}

/// Files at least this large are read by one thread while another hashes.
const PIPELINE_MIN: u64 = 32 << 20;

/// Hashes a large file with reading and hashing overlapped: a scoped reader
/// thread fills buffers (two in flight) while this thread hashes, so the
/// copy out of the page cache is not on the hashing core's time.
fn hash_pipelined(file: &mut std::fs::File) -> Result<(u64, Hash), FileProblem> {
    use std::sync::mpsc::sync_channel;
    let (full_tx, full_rx) = sync_channel::<std::io::Result<(Vec<u8>, usize)>>(2);
    let (empty_tx, empty_rx) = sync_channel::<Vec<u8>>(3);
    for _ in 0..3 {
        let _ = empty_tx.send(vec![0u8; CHUNK]);
    }
    std::thread::scope(|scope| {
        scope.spawn(move || {
            while let Ok(mut buf) = empty_rx.recv() {
                let r = loop {
                    match file.read(&mut buf) {
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        other => break other,
                    }
                };
                let done = !matches!(r, Ok(k) if k > 0);
                if full_tx.send(r.map(|k| (buf, k))).is_err() || done {
                    return;
                }
            }
        });
        let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
        let mut n = 0u64;
        loop {
            match full_rx.recv() {
                Ok(Ok((_, 0))) | Err(_) => break,
                Ok(Ok((buf, k))) => {
                    ctx.update(&buf[..k]);
                    n += k as u64;
                    // The reader may have stopped; then this is the end.
                    let _ = empty_tx.send(buf);
                }
                Ok(Err(e)) => return Err(FileProblem::Unreadable(e.to_string())),
            }
        }
        drop(empty_tx);
        let mut out = [0u8; 32];
        out.copy_from_slice(ctx.finish().as_ref());
        Ok((n, out))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pipelined_and_buffered_hashes_agree_with_a_one_shot_digest() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("big");
        // Not a multiple of the chunk size, above the pipelining threshold.
        let data: Vec<u8> = (0..PIPELINE_MIN as usize + CHUNK / 3 + 7)
            .map(|i| (i % 251) as u8)
            .collect();
        std::fs::write(&p, &data).unwrap();
        let want = sha256(&data);
        let mut f = std::fs::File::open(&p).unwrap();
        assert_eq!(hash_pipelined(&mut f).unwrap(), (data.len() as u64, want));
        let mut f = std::fs::File::open(&p).unwrap();
        assert_eq!(
            hash_buffered(&mut f, data.len() as u64).unwrap(),
            (data.len() as u64, want)
        );
        assert_eq!(
            hash_file(&p, false, None).unwrap(),
            (data.len() as u64, want)
        );
        // A small file, and an empty one.
        std::fs::write(&p, b"abc").unwrap();
        assert_eq!(hash_file(&p, false, None).unwrap(), (3, sha256(b"abc")));
        std::fs::write(&p, b"").unwrap();
        assert_eq!(hash_file(&p, false, None).unwrap(), (0, sha256(b"")));
    }
}
