//! One entry of a directory snapshot: what drift records per path.

use serde::{Deserialize, Serialize};

/// The type of a directory entry. Symlinks are never followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EntryKind {
    File,
    Dir,
    Symlink,
    Fifo,
    Socket,
    Char,
    Block,
}

impl EntryKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EntryKind::File => "file",
            EntryKind::Dir => "dir",
            EntryKind::Symlink => "symlink",
            EntryKind::Fifo => "fifo",
            EntryKind::Socket => "socket",
            EntryKind::Char => "char",
            EntryKind::Block => "block",
        }
    }

    pub fn of(ft: std::fs::FileType) -> Self {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_symlink() {
            EntryKind::Symlink
        } else if ft.is_dir() {
            EntryKind::Dir
        } else if ft.is_file() {
            EntryKind::File
        } else if ft.is_fifo() {
            EntryKind::Fifo
        } else if ft.is_socket() {
            EntryKind::Socket
        } else if ft.is_char_device() {
            EntryKind::Char
        } else {
            EntryKind::Block
        }
    }
}

/// What a snapshot holds for one path below the target.
///
/// `path` is relative to the target, `/`-separated, never empty except for
/// the target directory itself (which is not an entry), without `.` or
/// `..` components (see [`crate::files::path::check`]); it may be any bytes
/// but `/` and NUL in a component (non-UTF-8 names are kept exactly).
/// Directories carry type, mode and owner only (no size, no hash), so that
/// adding a file is one change, not two.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeEntry {
    pub path: Vec<u8>,
    pub kind: EntryKind,
    /// Regular files: the length in bytes. Symlinks: the target's length.
    pub size: Option<u64>,
    /// Permission bits with setuid, setgid and sticky (`0o7777` mask).
    pub mode: u32,
    pub uid: u32,
    pub gid: u32,
    /// Symlinks: the target, exactly as stored.
    pub link: Option<Vec<u8>>,
    /// Regular files: SHA-256 of the content.
    pub sha256: Option<[u8; 32]>,
    /// Optional (rules `attributes`): modification time, seconds and nanoseconds.
    pub mtime: Option<(i64, u32)>,
    /// Optional (rules `attributes`): the inode number.
    pub inode: Option<u64>,
    /// Regular files and devices: the number of hard links (mtree `nlink`; not compared).
    pub nlink: Option<u64>,
}
