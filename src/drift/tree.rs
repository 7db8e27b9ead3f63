//! Taking a directory snapshot: a walk that never follows symlinks and
//! hashes every regular file on all cores.
//!
//! Each file is hashed through the handle it was opened as (`O_NOFOLLOW`)
//! and compared, before and after the read, with what the walk saw
//! ([`crate::files::hash_file`]): a file replaced or modified while
//! it was read is a problem reported for that path, never a silently torn
//! hash. A file or directory that cannot be read is reported per path and
//! the walk goes on; the caller decides the exit code.

use super::entry::{EntryKind, TreeEntry};
use super::rules::{Attr, Rules};
use crate::files::path;
use crate::files::{FileProblem, hash_file, read_link};
use rayon::prelude::*;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// A path that could not be examined, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub path: Vec<u8>,
    pub problem: FileProblem,
}

/// A directory as it is now.
#[derive(Debug, Default)]
pub struct Taken {
    /// Sorted by path bytes.
    pub entries: Vec<TreeEntry>,
    /// Paths that could not be examined (sorted).
    pub problems: Vec<Problem>,
    /// Bytes of regular files hashed.
    pub bytes: u64,
}

struct Candidate {
    entry: TreeEntry,
    dev: u64,
    ino: u64,
    problem: Option<FileProblem>,
    failed: bool,
}

fn entry_of(rel: Vec<u8>, m: &std::fs::Metadata, rules: &Rules) -> TreeEntry {
    let kind = EntryKind::of(m.file_type());
    TreeEntry {
        path: rel,
        kind,
        size: None,
        mode: m.mode() & 0o7777,
        uid: m.uid(),
        gid: m.gid(),
        link: None,
        sha256: None,
        mtime: (rules.wants(Attr::Mtime) && kind != EntryKind::Dir)
            .then(|| (m.mtime(), u32::try_from(m.mtime_nsec()).unwrap_or(0))),
        inode: rules.wants(Attr::Inode).then(|| m.ino()),
        nlink: (kind != EntryKind::Dir).then(|| m.nlink()),
    }
}

/// Walks `root` (a directory) and hashes what the rules record.
/// `progress` is called with the bytes of each file hashed.
pub fn take(root: &Path, rules: &Rules, progress: Option<&(dyn Fn(u64) + Sync)>) -> Taken {
    let mut found: Vec<Candidate> = Vec::new();
    let mut problems: Vec<Problem> = Vec::new();
    // Each directory is opened (`O_NOFOLLOW | O_DIRECTORY`) and must be the
    // directory its parent's listing showed (device and inode): a
    // directory swapped for a symlink, or a symlink swapped in above it,
    // between listing and reading is a problem, not a silent detour. It is
    // then listed, and its entries lstat'ed, through that handle
    // (/proc/self/fd), so what is recorded is what that directory held.
    let root_id = match std::fs::symlink_metadata(root) {
        Ok(m) => (m.dev(), m.ino()),
        Err(e) => {
            return Taken {
                problems: vec![Problem {
                    path: Vec::new(),
                    problem: of_io(&e),
                }],
                ..Taken::default()
            };
        }
    };
    let mut stack: Vec<(Vec<u8>, (u64, u64))> = vec![(Vec::new(), root_id)];
    while let Some((dir, id)) = stack.pop() {
        let abs = if dir.is_empty() {
            root.to_path_buf()
        } else {
            path::under(root, &dir)
        };
        let handle = match open_dir(&abs, id) {
            Ok(h) => h,
            Err(problem) => {
                problems.push(Problem { path: dir, problem });
                continue;
            }
        };
        let via = handle.via();
        let rd = match std::fs::read_dir(&via) {
            Ok(r) => r,
            Err(e) => {
                problems.push(Problem {
                    path: dir,
                    problem: of_io(&e),
                });
                continue;
            }
        };
        for e in rd {
            let e = match e {
                Ok(e) => e,
                Err(err) => {
                    problems.push(Problem {
                        path: dir.clone(),
                        problem: of_io(&err),
                    });
                    break;
                }
            };
            let name = e.file_name();
            let rel = if dir.is_empty() {
                name.as_bytes().to_vec()
            } else {
                path::join(Some(&dir), name.as_bytes())
            };
            if let Err(p) = path::check(&rel) {
                problems.push(Problem {
                    path: rel,
                    problem: FileProblem::Path(p.to_string()),
                });
                continue;
            }
            let m = match std::fs::symlink_metadata(via.join(&name)) {
                Ok(m) => m,
                Err(err) => {
                    problems.push(Problem {
                        path: rel,
                        problem: of_io(&err),
                    });
                    continue;
                }
            };
            if m.is_dir() {
                if !rules.descend(&rel) {
                    continue;
                }
                if rules.records(&rel) {
                    found.push(Candidate {
                        entry: entry_of(rel.clone(), &m, rules),
                        dev: m.dev(),
                        ino: m.ino(),
                        problem: None,
                        failed: false,
                    });
                }
                stack.push((rel, (m.dev(), m.ino())));
            } else if rules.records(&rel) {
                found.push(Candidate {
                    entry: entry_of(rel, &m, rules),
                    dev: m.dev(),
                    ino: m.ino(),
                    problem: None,
                    failed: false,
                });
            }
        }
        // Without /proc, the directory must still be the one opened.
        if !handle.pinned && dir_id(&abs) != Some(id) {
            problems.push(Problem {
                path: dir,
                problem: FileProblem::Changed("replaced"),
            });
        }
    }
    // Hashed in place and then kept in place (the in-place collect reuses
    // the candidates' allocation): a large tree is held once, not twice.
    found.shrink_to_fit();
    let bytes = AtomicU64::new(0);
    found
        .par_iter_mut()
        .for_each(|c| finish(root, c, &bytes, progress));
    for c in &mut found {
        if let Some(problem) = c.problem.take() {
            problems.push(Problem {
                path: std::mem::take(&mut c.entry.path),
                problem,
            });
            c.failed = true;
        }
    }
    let mut entries: Vec<TreeEntry> = found
        .into_iter()
        .filter_map(|c| (!c.failed).then_some(c.entry))
        .collect();
    entries.par_sort_unstable_by(|a, b| a.path.cmp(&b.path));
    problems.sort_by(|a, b| a.path.cmp(&b.path));
    Taken {
        entries,
        problems,
        bytes: bytes.into_inner(),
    }
}

fn finish(
    root: &Path,
    c: &mut Candidate,
    bytes: &AtomicU64,
    progress: Option<&(dyn Fn(u64) + Sync)>,
) {
    let e = &mut c.entry;
    let abs = path::under(root, &e.path);
    match e.kind {
        EntryKind::File => match hash_file(&abs, false, Some((c.dev, c.ino))) {
            Ok((n, digest)) => {
                e.size = Some(n);
                e.sha256 = Some(digest);
                bytes.fetch_add(n, Ordering::Relaxed);
                if let Some(p) = progress {
                    p(n);
                }
            }
            Err(p) => c.problem = Some(p),
        },
        EntryKind::Symlink => match read_link(&abs, c.dev, c.ino) {
            Ok(target) => {
                e.size = Some(target.len() as u64);
                e.link = Some(target.into_vec());
            }
            Err(p) => c.problem = Some(p),
        },
        _ => {}
    }
}

/// An open directory and the path that reads it.
struct DirHandle {
    file: std::fs::File,
    abs: std::path::PathBuf,
    pinned: bool,
}

impl DirHandle {
    /// The path through which the opened directory itself is read.
    fn via(&self) -> std::path::PathBuf {
        use std::os::fd::AsRawFd;
        if self.pinned {
            std::path::PathBuf::from(format!("/proc/self/fd/{}", self.file.as_raw_fd()))
        } else {
            self.abs.clone()
        }
    }
}

fn dir_id(abs: &Path) -> Option<(u64, u64)> {
    std::fs::symlink_metadata(abs)
        .ok()
        .filter(std::fs::Metadata::is_dir)
        .map(|m| (m.dev(), m.ino()))
}

fn open_dir(abs: &Path, id: (u64, u64)) -> Result<DirHandle, FileProblem> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(abs)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) | Some(libc::ENOTDIR) => FileProblem::Changed("replaced"),
            _ => of_io(&e),
        })?;
    let m = file.metadata().map_err(|e| of_io(&e))?;
    if (m.dev(), m.ino()) != id {
        return Err(FileProblem::Changed("replaced"));
    }
    let pinned = Path::new("/proc/self/fd").is_dir();
    Ok(DirHandle {
        file,
        abs: abs.to_path_buf(),
        pinned,
    })
}

fn of_io(e: &std::io::Error) -> FileProblem {
    if e.kind() == std::io::ErrorKind::NotFound {
        FileProblem::Missing
    } else {
        FileProblem::Unreadable(e.to_string())
    }
}

/// SHA-256 of the first `len` bytes of the regular file at `abs` (for the
/// growing rule); `None` when it cannot be read or is shorter.
pub fn prefix_sha256(abs: &Path, len: u64) -> Option<[u8; 32]> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(abs)
        .ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
    let mut taken = file.take(len);
    let mut buf = vec![0u8; 1 << 20];
    let mut n = 0u64;
    loop {
        let k = taken.read(&mut buf).ok()?;
        if k == 0 {
            break;
        }
        ctx.update(&buf[..k]);
        n += k as u64;
    }
    if n != len {
        return None;
    }
    ctx.finish().as_ref().try_into().ok()
}
