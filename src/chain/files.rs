//! Which files a verification run reads: the paths given, directories
//! walked for log files, and the rule that names log files and rotated
//! segments.
//!
//! Symlinks: a path given on the command line is followed. In a walk,
//! symlinks to files and directories are followed too, with loop
//! protection (a directory already visited, by any name, is not walked
//! again); a dangling link, an unreadable directory or entry, and a
//! non-regular file named like a log are reported as a problem of its own
//! (an `error` row), never skipped silently, and the walk goes on. One file
//! reached by several names (symlinks, hard links) is verified once, under
//! the first name in sorted order, preferring a name with rotated segments
//! beside it, then one that is not a symlink ([`one_name_each`]).
//!
//! `s3://BUCKET/PREFIX` names the objects of a bucket (docs/FORMAT.md §21):
//! a prefix is listed like a directory is walked, with the same naming
//! rule; a location that is exactly one object's key names that object, as
//! a path names a file.

use super::segments::is_log_name;
use super::source::Source;
use crate::objstore::S3Connection;
use crate::{Error, Result};
use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Files found, and paths that could not be looked at.
#[derive(Debug, Clone, Default)]
pub struct Found {
    /// Regular files (sorted, each file once), then objects (sorted by
    /// location).
    pub files: Vec<Source>,
    /// Paths that could not be examined, with why; reported per path.
    pub problems: Vec<(PathBuf, String)>,
    /// The store objects are read from, when an input was an `s3://`
    /// location.
    #[cfg(feature = "s3")]
    pub store: Option<std::sync::Arc<crate::objstore::ObjectStore>>,
}

impl Found {
    /// What was read from object stores so far.
    pub fn transfer(&self) -> Option<crate::objstore::Transfer> {
        #[cfg(feature = "s3")]
        if let Some(store) = &self.store {
            return Some(store.transfer());
        }
        None
    }
}

/// Finds the log files named by `paths` ([`collect_log_files`]), and the
/// objects named by `s3://` locations among them, listed through `s3` (an
/// empty prefix is a problem of its own: an `error` row, never a clean
/// pass). A missing bucket or a denied listing fails the run, as a missing
/// path does.
pub fn collect_inputs(paths: &[PathBuf], s3: &S3Connection) -> Result<Found> {
    let (remote, local): (Vec<&PathBuf>, Vec<&PathBuf>) = paths
        .iter()
        .partition(|p| p.to_str().is_some_and(crate::objstore::S3Url::is_s3));
    let local: Vec<PathBuf> = local.into_iter().cloned().collect();
    let mut found = if local.is_empty() {
        Found::default()
    } else {
        collect_log_files(&local)?
    };
    if remote.is_empty() {
        return Ok(found);
    }
    collect_objects(&remote, s3, &mut found)?;
    Ok(found)
}

#[cfg(not(feature = "s3"))]
fn collect_objects(_: &[&PathBuf], _: &S3Connection, _: &mut Found) -> Result<()> {
    Err(Error::FeatureDisabled {
        feature: "s3",
        needed_for: "verifying s3:// locations",
    })
}

#[cfg(feature = "s3")]
fn collect_objects(remote: &[&PathBuf], s3: &S3Connection, found: &mut Found) -> Result<()> {
    use crate::objstore::{ObjectStore, S3Url};
    use std::sync::Arc;
    let store = Arc::new(ObjectStore::connect(s3)?);
    let mut objects = std::collections::BTreeMap::new();
    for path in remote {
        let text = path.to_str().unwrap_or_default();
        let url = S3Url::parse(text).ok_or_else(|| Error::InvalidArgument {
            option: "PATH",
            text: text.to_owned(),
            expected: "s3://BUCKET[/PREFIX], BUCKET 3 to 63 of a-z 0-9 . -",
        })?;
        // A location that is exactly one object's key names that object
        // (whatever its name, as a file named on the command line). Unlike
        // a file system, a bucket can also hold objects under `KEY/`: the
        // folder is verified too, so an object copied to a folder's name
        // cannot hide the folder's logs.
        // Log objects this location holds, counted before duplicates are
        // merged: a location named twice is not empty the second time.
        let mut held = 0usize;
        let named = if !url.prefix.is_empty() && !url.prefix.ends_with('/') {
            store.head(&url.bucket, &url.prefix)?
        } else {
            None
        };
        let is_object = named.is_some();
        if let Some(object) = named {
            objects.insert(object.url(), object);
        }
        // A folder: `s3://b/logs` lists `logs/`.
        let mut folder = url.clone();
        if !folder.prefix.is_empty() && !folder.prefix.ends_with('/') {
            folder.prefix.push('/');
        }
        let listed = store.list(&folder)?;
        for object in listed {
            let rel = &object.key[folder.prefix.len()..];
            let hidden = rel.split('/').any(|c| c.starts_with('.'));
            let name = rel.rsplit('/').next().unwrap_or_default();
            if !hidden && is_log_name(name) {
                held += 1;
                objects.insert(object.url(), object);
            }
        }
        if !is_object && held == 0 {
            found.problems.push((
                PathBuf::from(folder.to_string()),
                "no log objects under this prefix".to_owned(),
            ));
        }
    }
    found.files.extend(objects.into_values().map(|object| {
        Source::Object(Box::new(super::source::RemoteObject {
            store: store.clone(),
            object,
        }))
    }));
    found.problems.sort();
    found.problems.dedup();
    found.store = Some(store);
    Ok(())
}

/// One name for each file (device, inode), sorted: the first in sorted
/// order, except that a file reached by several names is named where its
/// rotated segments are (docs/FORMAT.md §12: a live file with no record
/// yet belongs to their log), then by a name that is not a symlink.
fn one_name_each(mut candidates: Vec<(PathBuf, u64, u64)>) -> Vec<PathBuf> {
    candidates.sort_by(|a, b| (a.1, a.2, &a.0).cmp(&(b.1, b.2, &b.0)));
    let mut out = Vec::with_capacity(candidates.len());
    for names in candidates.chunk_by(|a, b| (a.1, a.2) == (b.1, b.2)) {
        let best = match names {
            [(only, _, _)] => only,
            _ => {
                &names
                    .iter()
                    .min_by_key(|(path, _, _)| {
                        let no_segments = super::segments::rotated_siblings(path).is_empty();
                        let symlink = std::fs::symlink_metadata(path)
                            .is_ok_and(|m| m.file_type().is_symlink());
                        (no_segments, symlink, path.clone())
                    })
                    .unwrap_or(&names[0])
                    .0
            }
        };
        out.push(best.clone());
    }
    out.sort();
    out
}

/// Finds the log files named by `paths`: files as given, directories walked
/// recursively for files named `*.jsonl` or rotated segments `*.jsonl.N`,
/// `*.jsonl-N` (hidden entries skipped). Fails only when nothing at all was
/// found (no file and no problem to report).
pub fn collect_log_files(paths: &[PathBuf]) -> Result<Found> {
    let mut found = Found::default();
    let mut candidates = Vec::new();
    let mut visited = HashSet::new();
    for path in paths {
        match std::fs::metadata(path) {
            Err(e) => {
                // A path the auditor named that is not there is an input
                // error of the whole run.
                return Err(Error::io(path, e));
            }
            Ok(meta) if meta.is_dir() => walk(
                path,
                &meta,
                &mut visited,
                &mut candidates,
                &mut found.problems,
            ),
            Ok(meta) if meta.is_file() => candidates.push((path.clone(), meta.dev(), meta.ino())),
            Ok(_) => found
                .problems
                .push((path.clone(), "not a regular file (refused)".to_owned())),
        }
    }
    found.files = one_name_each(candidates)
        .into_iter()
        .map(Source::Local)
        .collect();
    found.problems.sort();
    found.problems.dedup();
    if found.files.is_empty() && found.problems.is_empty() {
        let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        return Err(Error::NoLogFiles {
            paths: shown.join(", "),
        });
    }
    Ok(found)
}

fn walk(
    dir: &Path,
    meta: &std::fs::Metadata,
    visited: &mut HashSet<(u64, u64)>,
    out: &mut Vec<(PathBuf, u64, u64)>,
    problems: &mut Vec<(PathBuf, String)>,
) {
    if !visited.insert((meta.dev(), meta.ino())) {
        return;
    }
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            problems.push((dir.to_path_buf(), format!("cannot read directory: {e}")));
            return;
        }
    };
    for entry in entries {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                problems.push((dir.to_path_buf(), format!("cannot read directory: {e}")));
                return;
            }
        };
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') {
            continue;
        }
        let path = entry.path();
        // The entry's own type costs no system call; only symlinks (and
        // file systems that do not report types) are followed with a stat.
        let own = entry.file_type().ok();
        if let Some(t) = own
            && t.is_file()
        {
            if is_log_name(&name) {
                use std::os::unix::fs::DirEntryExt;
                out.push((path, meta.dev(), entry.ino()));
            }
            continue;
        }
        let meta = match std::fs::metadata(&path) {
            Ok(m) => m,
            Err(e) => {
                let is_link = own.is_some_and(|t| t.is_symlink());
                if is_link && e.kind() == std::io::ErrorKind::NotFound {
                    if is_log_name(&name) {
                        problems.push((path, "dangling symlink".to_owned()));
                    }
                } else {
                    problems.push((path, e.to_string()));
                }
                continue;
            }
        };
        if meta.is_dir() {
            walk(&path, &meta, visited, out, problems);
        } else if is_log_name(&name) {
            if meta.is_file() {
                out.push((path, meta.dev(), meta.ino()));
            } else {
                problems.push((path, "not a regular file (refused)".to_owned()));
            }
        }
    }
}
