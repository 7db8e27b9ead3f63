//! Where a log file's bytes come from: a local file, or an object in an
//! S3-compatible store. Both are read the same way, by offset
//! ([`ReadAt`]), so planning, scanning, re-checks and blame do not care
//! which it is: an object is verified exactly as the same bytes on disk.

use std::fs::File;
use std::path::{Path, PathBuf};

#[cfg(feature = "s3")]
use crate::objstore::{ListedObject, ObjectStore};
#[cfg(feature = "s3")]
use std::sync::Arc;

/// The scan's read block for a local file: 256 KiB, which the kernel fills
/// from the page cache in one copy and which stays in L2 while the line
/// parser and SHA-256 walk it.
pub(crate) const LOCAL_BLOCK: usize = 256 << 10;
/// The scan's read block for an object: one ranged GET each, so large.
#[cfg(feature = "s3")]
pub(crate) const OBJECT_BLOCK: usize = 2 << 20;

/// Reading by offset, as `pread` does.
pub(crate) trait ReadAt: Sync {
    /// Reads up to `buf.len()` bytes at `offset`; 0 at the end.
    fn pread(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize>;

    /// How much one read should ask for when scanning: small enough that
    /// the block stays in the core's cache while it is parsed and hashed
    /// (a local file), large where each read is a request (an object).
    fn block_size(&self) -> usize {
        LOCAL_BLOCK
    }

    /// Fills `buf` from `offset`, or fails with `UnexpectedEof`.
    fn pread_exact(&self, mut buf: &mut [u8], mut offset: u64) -> std::io::Result<()> {
        while !buf.is_empty() {
            match self.pread(buf, offset)? {
                0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
                n => {
                    buf = &mut buf[n..];
                    offset += n as u64;
                }
            }
        }
        Ok(())
    }
}

impl ReadAt for File {
    fn pread(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
        std::os::unix::fs::FileExt::read_at(self, buf, offset)
    }
}

/// An object as listed, with the store it is read from.
#[cfg(feature = "s3")]
#[derive(Debug, Clone)]
pub struct RemoteObject {
    pub store: Arc<ObjectStore>,
    pub object: ListedObject,
}

/// One input file of a verification run.
#[derive(Debug, Clone)]
pub enum Source {
    /// A local file.
    Local(PathBuf),
    /// An object of an S3-compatible store, as its listing saw it (size,
    /// ETag): every read of it is pinned to that version.
    #[cfg(feature = "s3")]
    Object(Box<RemoteObject>),
}

impl Source {
    /// The name reports give it: the path, or `s3://BUCKET/KEY`.
    pub fn name(&self) -> PathBuf {
        match self {
            Source::Local(p) => p.clone(),
            #[cfg(feature = "s3")]
            Source::Object(o) => PathBuf::from(o.object.url()),
        }
    }

    /// The size a listing gave (objects); `None` for a local file (its size
    /// is taken when it is opened).
    pub fn listed_size(&self) -> Option<u64> {
        match self {
            Source::Local(_) => None,
            #[cfg(feature = "s3")]
            Source::Object(o) => Some(o.object.size),
        }
    }

    /// Its size as listed, or a local file's size now (0 when it cannot
    /// be stat'ed): for progress and for dealing out shards.
    pub fn size(&self) -> u64 {
        match (self.listed_size(), self.local_path()) {
            (Some(n), _) => n,
            (None, Some(p)) => std::fs::metadata(p).map_or(0, |m| m.len()),
            (None, None) => 0,
        }
    }

    /// The object's ETag (objects only).
    pub fn etag(&self) -> Option<&str> {
        match self {
            Source::Local(_) => None,
            #[cfg(feature = "s3")]
            Source::Object(o) => o.object.etag.as_deref(),
        }
    }

    /// The local path, for a local file.
    pub fn local_path(&self) -> Option<&Path> {
        match self {
            Source::Local(p) => Some(p),
            #[cfg(feature = "s3")]
            Source::Object(_) => None,
        }
    }

    /// Opens it for reading: a local file must still be a regular file (a
    /// FIFO swapped in since the walk is refused without blocking).
    pub(crate) fn open(&self) -> std::io::Result<Opened> {
        match self {
            Source::Local(p) => Ok(Opened::File(crate::fs::open_regular_io(p)?)),
            #[cfg(feature = "s3")]
            Source::Object(o) => Ok(Opened::Object(RemoteObject::clone(o))),
        }
    }
}

/// An input opened for reading.
pub(crate) enum Opened {
    File(File),
    #[cfg(feature = "s3")]
    Object(RemoteObject),
}

impl ReadAt for Opened {
    fn pread(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
        match self {
            Opened::File(f) => f.pread(buf, offset),
            #[cfg(feature = "s3")]
            Opened::Object(o) => o.store.read_at(&o.object, buf, offset),
        }
    }

    fn block_size(&self) -> usize {
        match self {
            Opened::File(_) => LOCAL_BLOCK,
            #[cfg(feature = "s3")]
            Opened::Object(_) => OBJECT_BLOCK,
        }
    }
}

/// Reads an input front to back from `offset` (for the blame search, which
/// reads a log as a stream).
pub(crate) struct SeqReader {
    inner: Opened,
    pos: u64,
}

impl SeqReader {
    pub(crate) fn new(inner: Opened, pos: u64) -> SeqReader {
        SeqReader { inner, pos }
    }
}

impl std::io::Read for SeqReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.pread(buf, self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}
