//! Finding and hashing the files of a stamp, in parallel.
//!
//! Directories are walked without following symlinks (a symlink is an
//! entry of its own, holding its target). Special files met in a walk
//! (FIFOs, sockets, devices) are skipped with a warning and never opened
//! in a way that could block; named explicitly, they are an error. Each
//! file is hashed through the handle it was opened as (`O_NOFOLLOW`), and
//! its identity, size, mtime and ctime are compared before and after the
//! read, and with what the walk saw: a file that changed or was replaced
//! while it was hashed is reported, never stamped as a torn read (the
//! hashing itself is [`crate::files::hash_file`]).

use super::entry::{Entry, EntryType};
use crate::files::{FileProblem, hash_file, path, read_link};
use crate::fs::FileKind;
use rayon::prelude::*;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// A file that was not stamped, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeftOut {
    /// The stamped path it would have had (the PATH as given when it has
    /// none).
    pub path: Vec<u8>,
    pub problem: FileProblem,
    /// Named on the command line (an error for the run) rather than met in
    /// a walk.
    pub explicit: bool,
}

/// A special file met in a walk, skipped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    pub path: Vec<u8>,
    pub kind: FileKind,
}

/// A PATH of the run, as the statement records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputRoot {
    /// `None`: the base directory itself.
    pub path: Option<Vec<u8>>,
    pub is_dir: bool,
}

struct Candidate {
    path: Box<[u8]>,
    link: bool,
    follow: bool,
    dev: u64,
    ino: u64,
    explicit: bool,
}

/// What a walk found.
#[derive(Default)]
pub struct Found {
    candidates: Vec<Candidate>,
    pub roots: Vec<InputRoot>,
    pub skipped: Vec<Skipped>,
    pub left_out: Vec<LeftOut>,
}

impl Found {
    /// How many files are to be hashed.
    pub fn len(&self) -> usize {
        self.candidates.len()
    }

    pub fn is_empty(&self) -> bool {
        self.candidates.is_empty()
    }
}

/// Walks `given` (stamped paths under `base`; `None` = the base itself).
/// With `follow`, a symlink to a regular file is stamped as that file.
pub fn walk(base: &Path, given: &[Option<Vec<u8>>], follow: bool) -> Found {
    let mut found = Found::default();
    for g in given {
        let abs = match g {
            Some(p) => path::under(base, p),
            None => base.to_path_buf(),
        };
        let shown = g.clone().unwrap_or_default();
        match std::fs::symlink_metadata(&abs) {
            Err(e) => found.left_out.push(LeftOut {
                path: shown,
                problem: FileProblem::of_io(&e),
                explicit: true,
            }),
            Ok(m) if m.is_dir() => {
                found.roots.push(InputRoot {
                    path: g.clone(),
                    is_dir: true,
                });
                walk_dir(base, g.as_deref(), follow, &mut found);
            }
            Ok(m) => {
                found.roots.push(InputRoot {
                    path: g.clone(),
                    is_dir: false,
                });
                // A PATH that is the base itself is a directory (above).
                let rel = shown.into_boxed_slice();
                add_file(base, rel, &m, follow, true, &mut found);
            }
        }
    }
    // One entry per path, in byte order: a file named twice (or inside a
    // directory also named) is stamped once.
    found
        .candidates
        .par_sort_unstable_by(|a, b| a.path.cmp(&b.path));
    found.candidates.dedup_by(|a, b| {
        if a.path == b.path {
            b.explicit |= a.explicit;
            true
        } else {
            false
        }
    });
    found.roots.sort_by(|a, b| a.path.cmp(&b.path));
    found.roots.dedup();
    found
}

fn add_file(
    base: &Path,
    rel: Box<[u8]>,
    m: &std::fs::Metadata,
    follow: bool,
    explicit: bool,
    found: &mut Found,
) {
    let t = m.file_type();
    if t.is_file() {
        found.candidates.push(Candidate {
            path: rel,
            link: false,
            follow: false,
            dev: m.dev(),
            ino: m.ino(),
            explicit,
        });
    } else if t.is_symlink() {
        // Followed only to a regular file inside the base, as verify
        // follows it.
        let abs = path::under(base, &rel);
        let target = follow
            .then(|| {
                std::fs::canonicalize(&abs)
                    .ok()
                    .filter(|c| c.starts_with(base))
                    .and_then(|_| std::fs::metadata(&abs).ok())
            })
            .flatten()
            .filter(|t| t.is_file());
        let (dev, ino, link) = match &target {
            Some(t) => (t.dev(), t.ino(), false),
            None => (m.dev(), m.ino(), true),
        };
        found.candidates.push(Candidate {
            path: rel,
            link,
            follow: !link,
            dev,
            ino,
            explicit,
        });
    } else {
        let kind = FileKind::of(t);
        if explicit {
            found.left_out.push(LeftOut {
                path: rel.into_vec(),
                problem: FileProblem::Special(kind),
                explicit,
            });
        } else {
            found.skipped.push(Skipped {
                path: rel.into_vec(),
                kind,
            });
        }
    }
}

fn walk_dir(base: &Path, root: Option<&[u8]>, follow: bool, found: &mut Found) {
    visit(base, root, &mut |v| match v {
        Visit::Entry(rel, m) => add_file(base, rel.into_boxed_slice(), &m, follow, false, found),
        Visit::Problem(rel, problem) => found.left_out.push(LeftOut {
            path: rel,
            problem,
            explicit: false,
        }),
    });
}

/// What a walk meets below a directory, other than directories.
pub enum Visit {
    /// A file, symlink or special file (never followed), with its lstat.
    Entry(Vec<u8>, std::fs::Metadata),
    /// A directory or entry that could not be read.
    Problem(Vec<u8>, FileProblem),
}

/// Walks below `root` (a stamped path; `None` = the base) without
/// following symlinks and without holding what it found: each entry goes
/// to `sink` as it is met.
pub fn visit(base: &Path, root: Option<&[u8]>, sink: &mut dyn FnMut(Visit)) {
    let mut stack: Vec<Option<Vec<u8>>> = vec![root.map(<[u8]>::to_vec)];
    while let Some(dir) = stack.pop() {
        let abs = match &dir {
            Some(d) => path::under(base, d),
            None => base.to_path_buf(),
        };
        let entries = match std::fs::read_dir(&abs) {
            Ok(e) => e,
            Err(e) => {
                sink(Visit::Problem(
                    dir.unwrap_or_default(),
                    FileProblem::of_io(&e),
                ));
                continue;
            }
        };
        for e in entries {
            let e = match e {
                Ok(e) => e,
                Err(err) => {
                    sink(Visit::Problem(
                        dir.clone().unwrap_or_default(),
                        FileProblem::of_io(&err),
                    ));
                    break;
                }
            };
            let rel = path::join(dir.as_deref(), e.file_name().as_bytes());
            if let Err(p) = path::check(&rel) {
                sink(Visit::Problem(rel, FileProblem::Path(p.to_string())));
                continue;
            }
            // lstat: a symlink is never followed in a walk.
            match std::fs::symlink_metadata(e.path()) {
                Err(err) => sink(Visit::Problem(rel, FileProblem::of_io(&err))),
                Ok(m) if m.is_dir() => stack.push(Some(rel)),
                Ok(m) => sink(Visit::Entry(rel, m)),
            }
        }
    }
}

/// Hashes every file found, on all cores. Returns the entries stamped (in
/// path order) and adds the files that could not be stamped to
/// `found.left_out`.
pub fn hash_all(base: &Path, found: &mut Found) -> Vec<Entry> {
    let candidates = std::mem::take(&mut found.candidates);
    // `Result<Entry, Box<LeftOut>>` has the size of an `Entry`, so the
    // entries are collected in place, in the results' own allocation: a
    // million files are held once, not twice.
    let results: Vec<Result<Entry, Box<LeftOut>>> = candidates
        .into_par_iter()
        .with_min_len(16)
        .map(|c| hash_candidate(base, c))
        .collect();
    let left_out = &mut found.left_out;
    let mut entries: Vec<Entry> = results
        .into_iter()
        .filter_map(|r| match r {
            Ok(e) => Some(e),
            Err(l) => {
                left_out.push(*l);
                None
            }
        })
        .collect();
    entries.shrink_to_fit();
    found.left_out.sort_by(|a, b| a.path.cmp(&b.path));
    entries
}

fn hash_candidate(base: &Path, c: Candidate) -> Result<Entry, Box<LeftOut>> {
    let abs = path::under(base, &c.path);
    let r = if c.link {
        read_link(&abs, c.dev, c.ino).map(|t| {
            (
                EntryType::Link,
                t.len() as u64,
                crate::files::sha256(&t),
                Some(t),
            )
        })
    } else {
        hash_file(&abs, c.follow, Some((c.dev, c.ino)))
            .map(|(size, sha256)| (EntryType::File, size, sha256, None))
    };
    match r {
        Ok((kind, size, sha256, target)) => Ok(Entry {
            path: c.path,
            kind,
            size,
            sha256,
            target,
        }),
        Err(problem) => Err(Box::new(LeftOut {
            path: c.path.into_vec(),
            problem,
            explicit: c.explicit,
        })),
    }
}
