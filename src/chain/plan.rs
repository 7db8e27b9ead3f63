//! Planning a verification run: which files form which log, and how each
//! file is cut into byte ranges.
//!
//! A log may be one file or several *segments* (rotated by size, or renamed
//! by logrotate). Files are grouped by the origin of their first record and
//! ordered by that record's seq, so segment names never matter: a missing
//! segment shows up as a `seq_gap` where the chain resumes, and segments
//! renamed out of order are put back in order. A live file that holds no
//! complete line yet (empty after logrotate's `create`, or one torn line)
//! has no origin of its own: it joins the log of the segments rotated away
//! from it, last, so its tail is judged against that log's last record.
//! Files are not held open
//! between planning and scanning (a fleet can be larger than the process's
//! file-descriptor limit): each range is scanned with its own open.

use super::record::{self, MAX_LINE_LEN};
use super::segments;
use super::source::{Opened, ReadAt, Source};
use std::collections::{BTreeMap, HashMap};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// One file as found at the start of the run.
#[derive(Debug, Clone)]
pub(crate) struct FilePlan {
    /// The name reports give it (the path, or `s3://BUCKET/KEY`).
    pub path: PathBuf,
    pub source: Source,
    /// Size at the start of the run; bytes appended later are not verified.
    pub len: u64,
    pub dev: u64,
    pub ino: u64,
    /// An object's ETag as listed (objects only).
    pub etag: Option<String>,
    /// Origin and seq of the first record, when the first line is a record.
    pub head: Option<(String, u64)>,
    /// The whole file was read and holds no newline: empty, or one
    /// unterminated (torn) line.
    pub no_line: bool,
    /// Why the file could not be read.
    pub error: Option<String>,
}

/// One log: one or more segment files, in chain order.
#[derive(Debug, Clone)]
pub(crate) struct LogPlan {
    pub origin: Option<String>,
    pub segments: Vec<FilePlan>,
}

/// Stats the file (or takes the object's listed size and ETag) and reads
/// its first line.
pub(crate) fn plan_file(source: &Source) -> FilePlan {
    let mut plan = FilePlan {
        path: source.name(),
        source: source.clone(),
        len: 0,
        dev: 0,
        ino: 0,
        etag: source.etag().map(str::to_owned),
        head: None,
        no_line: false,
        error: None,
    };
    let result = (|| -> std::io::Result<()> {
        // Not blocking on a FIFO swapped in since the walk saw a file.
        // The type check's own `fstat` gives the size and identity.
        let file = match source.local_path() {
            Some(path) => {
                let (file, meta) = crate::fs::open_regular_io_meta(path)?;
                plan.len = meta.len();
                plan.dev = meta.dev();
                plan.ino = meta.ino();
                Opened::File(file)
            }
            None => {
                plan.len = source.listed_size().unwrap_or(0);
                source.open()?
            }
        };
        let mut buf = vec![0u8; plan.len.min(4 << 10) as usize];
        loop {
            let n = read_full(&file, &mut buf)?;
            let got = &buf[..n];
            if let Some(end) = memchr::memchr(b'\n', got) {
                if let Ok(rec) = record::parse_line(&got[..end]) {
                    plan.head = Some((rec.origin_str().to_owned(), rec.seq));
                }
                return Ok(());
            }
            if n < buf.len() || buf.len() as u64 >= plan.len {
                // Read to the end (or to the size taken at the start).
                plan.no_line = true;
                return Ok(());
            }
            if buf.len() > MAX_LINE_LEN {
                return Ok(());
            }
            buf.resize(
                (buf.len() * 4).min(MAX_LINE_LEN + 1).min(plan.len as usize),
                0,
            );
        }
    })();
    if let Err(e) = result {
        plan.error = Some(e.to_string());
    }
    plan
}

/// Reads from offset 0 until `buf` is full or the input ends (an object is
/// read in one request; a file may return less per call).
fn read_full(file: &Opened, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match file.pread(&mut buf[got..], got as u64)? {
            0 => break,
            n => got += n,
        }
    }
    Ok(got)
}

/// Groups planned files into logs: same origin → segments of one log,
/// ordered by first seq (then path). A file with no complete line joins,
/// as the last segment, the log made of exactly the segments rotated away
/// from it ([`joined_origin`], docs/FORMAT.md §12). Every other file
/// without a readable first record is a log of its own.
pub(crate) fn group(plans: Vec<FilePlan>) -> Vec<LogPlan> {
    let mut by_origin: BTreeMap<String, Vec<FilePlan>> = Default::default();
    let mut logs = Vec::new();
    let mut headless = Vec::new();
    for p in plans {
        match &p.head {
            Some((origin, _)) if p.error.is_none() => {
                by_origin.entry(origin.clone()).or_default().push(p)
            }
            _ if p.error.is_none() && p.no_line => headless.push(p),
            _ => logs.push(LogPlan {
                origin: None,
                segments: vec![p],
            }),
        }
    }
    // Origin → its live file with no complete line.
    let mut live: HashMap<String, FilePlan> = HashMap::new();
    if !headless.is_empty() {
        let mut index = Index::new(&by_origin);
        for p in headless {
            match index.joined_origin(&p) {
                // One live file per log (the same file given under two
                // names gives two; the second stays a log of its own).
                Some(origin) if !live.contains_key(origin) => {
                    live.insert(origin.to_owned(), p);
                }
                _ => logs.push(LogPlan {
                    origin: None,
                    segments: vec![p],
                }),
            }
        }
    }
    for (origin, mut segments) in by_origin {
        segments.sort_by(|a, b| {
            let sa = a.head.as_ref().map_or(0, |h| h.1);
            let sb = b.head.as_ref().map_or(0, |h| h.1);
            sa.cmp(&sb).then_with(|| a.path.cmp(&b.path))
        });
        if let Some(file) = live.remove(&origin) {
            segments.push(file);
        }
        // Held for the whole run, one per log: a fleet of one-file logs
        // would otherwise keep room for four plans in each.
        segments.shrink_to_fit();
        logs.push(LogPlan {
            origin: Some(origin),
            segments,
        });
    }
    logs
}

/// The grouped files, indexed for [`Index::joined_origin`] (built only
/// when some file has no complete line: after a fleet-wide logrotate every
/// live file is empty).
struct Index<'a> {
    by_origin: &'a BTreeMap<String, Vec<FilePlan>>,
    /// Device and inode of a local file → its origin.
    by_id: HashMap<(u64, u64), &'a str>,
    /// (directory, live file name) of an object named as a segment → the
    /// origin of such objects (`None` when two) and how many there are.
    by_live: HashMap<(&'a Path, &'a str), (Option<&'a str>, usize)>,
    /// A local directory's rotated segments, listed once.
    dirs: HashMap<PathBuf, HashMap<String, Vec<PathBuf>>>,
}

impl<'a> Index<'a> {
    fn new(by_origin: &'a BTreeMap<String, Vec<FilePlan>>) -> Self {
        let mut index = Index {
            by_origin,
            by_id: HashMap::new(),
            by_live: HashMap::new(),
            dirs: HashMap::new(),
        };
        for (origin, files) in by_origin {
            for f in files {
                if f.source.local_path().is_some() {
                    index.by_id.insert((f.dev, f.ino), origin);
                    continue;
                }
                let (Some(dir), Some(name)) = (f.path.parent(), f.path.file_name()) else {
                    continue;
                };
                let Some(live) = name.to_str().and_then(segments::live_name_of) else {
                    continue;
                };
                let slot = index
                    .by_live
                    .entry((dir, live))
                    .or_insert((Some(origin), 0));
                if slot.0 != Some(origin.as_str()) {
                    slot.0 = None;
                }
                slot.1 += 1;
            }
        }
        index
    }

    /// The origin of the log a file with no complete line continues: the
    /// one log whose files are exactly the non-empty segments rotated away
    /// from it. For a local file those are the files `vouch repair` and the
    /// writer read (the rule of [`segments::rotated_siblings`]), compared
    /// by device and inode so that no spelling of a path matters: both
    /// commands judge its torn line against the same record. An object's
    /// are the objects beside it named as its segments. Anything else (no
    /// such segments, some of them not given, other files of their origin,
    /// two origins) joins nothing.
    fn joined_origin(&mut self, p: &FilePlan) -> Option<&'a str> {
        let (origin, count) = match p.source.local_path() {
            Some(path) => {
                let (dir, name) = segments::dir_and_name(path)?;
                let siblings = self
                    .dirs
                    .entry(dir)
                    .or_insert_with_key(|dir| segments::rotated_in(dir))
                    .get(name)?;
                let mut on_disk: Vec<(u64, u64)> = siblings
                    .iter()
                    .filter_map(|f| std::fs::metadata(f).ok())
                    .filter(|m| m.len() > 0)
                    .map(|m| (m.dev(), m.ino()))
                    .collect();
                on_disk.sort_unstable();
                on_disk.dedup();
                let origin = *self.by_id.get(on_disk.first()?)?;
                let one_log = on_disk.iter().all(|id| self.by_id.get(id) == Some(&origin));
                (one_log.then_some(origin)?, on_disk.len())
            }
            None => {
                let key = (p.path.parent()?, p.path.file_name()?.to_str()?);
                let (origin, count) = *self.by_live.get(&key)?;
                (origin?, count)
            }
        };
        (self.by_origin.get(origin).map(Vec::len) == Some(count)).then_some(origin)
    }
}

/// Cuts `[start, len)` into ranges of about `chunk` bytes.
pub(crate) fn ranges(start: u64, len: u64, chunk: u64) -> Vec<(u64, u64)> {
    let chunk = chunk.max(1 << 12);
    if start >= len {
        return vec![(start, len.max(start))];
    }
    let mut out = Vec::new();
    let mut s = start;
    while s < len {
        let e = (s + chunk).min(len);
        out.push((s, e));
        s = e;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_cover_exactly() {
        assert_eq!(
            ranges(0, 10_000, 4096),
            vec![(0, 4096), (4096, 8192), (8192, 10_000)]
        );
        assert_eq!(ranges(0, 0, 4096), vec![(0, 0)]);
        assert_eq!(ranges(5000, 5000, 4096), vec![(5000, 5000)]);
        assert_eq!(ranges(100, 5000, 4096), vec![(100, 4196), (4196, 5000)]);
    }
}
