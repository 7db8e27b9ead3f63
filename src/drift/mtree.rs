//! BSD mtree(5) specifications of directory snapshots: [`export`] writes a
//! snapshot's [`TreeEntry`]s as a spec that Debian's `mtree` (package
//! `mtree-netbsd`) checks with `mtree -f SPEC -p DIR`, and [`import`] reads a
//! spec (ours, `mtree -c`, `mtree -C`, or hand-written) back into entries.
//!
//! # What export writes
//! One line per entry in the full-path layout of `mtree -C`, after a
//! `#mtree` signature line and a `.` line for the target itself (the root
//! is not an entry, so that line carries `type=dir` only):
//!
//! ```text
//! #mtree
//! . type=dir
//! ./bin type=dir mode=0755 uid=0 gid=0
//! ./bin/a\040b type=file mode=0644 uid=0 gid=0 size=3 sha256digest=98ea…7be4 time=1796110859.754105844
//! ./bin/l type=link mode=0777 uid=0 gid=0 link=a\040b
//! ```
//!
//! - Keywords: `type`, `mode` (octal, with setuid/setgid/sticky), `uid`,
//!   `gid` on every entry; `size` and `sha256digest` on regular files;
//!   `link` on symlinks; `time=S.NNNNNNNNN` on non-directories that have an
//!   mtime. Directories get `type`, `mode`, `uid`, `gid` only: no `time`,
//!   so a round trip drops a directory's mtime. `nlink`, inode numbers and
//!   device numbers are never written. No `/set` line: every line stands
//!   alone.
//! - Names and link targets are vis(3)-encoded: every byte that is not an
//!   ASCII letter or digit or one of `- . _ + , : @ ~ %` is written as a
//!   three-digit octal escape `\ooo` (so space is `\040`, `#` is `\043`,
//!   `\` is `\134`, newline `\012`, a non-UTF-8 byte `\377`). Escaping
//!   `* ? [` keeps mtree from reading a name as an fnmatch(3) pattern.
//! - `sha256digest` is the spelling every mtree reads (NetBSD, FreeBSD,
//!   libarchive); `mtree-netbsd` also reads `sha256`.
//! - Entries are written sorted by path bytes (the input is sorted if it is
//!   not), so every directory comes before what it holds: `mtree` refuses a
//!   full path whose parent it has not seen. Export refuses
//!   ([`std::io::ErrorKind::InvalidInput`]) an entry whose parent is not a
//!   directory entry, a duplicate path, a path that
//!   [`crate::files::path::check`] rejects, a file without `size` or
//!   `sha256`, and a symlink without `link`.
//!
//! # What `mtree -f SPEC -p DIR` then checks, and what it does not
//! Measured with `mtree-netbsd` 20180822 (Debian 12):
//! - exit 2, with a line per difference, for changed content (`size`,
//!   `sha256`), mode, owner or group, symlink target, type, and mtime (to
//!   the microsecond only, when `time` was written);
//! - a file **added** (`extra: PATH`) or **removed** (`missing: ./PATH`) is
//!   only reported on stdout: the exit status stays 0, so a caller that
//!   needs a status must look for those lines (or use `vouch drift check`);
//! - symlinks are not followed (`-P` is the default), hard-link counts,
//!   inode numbers, device numbers, xattrs and ACLs are not checked;
//! - a spec of a partial snapshot (rules that exclude paths) reports every
//!   excluded file as `extra:`; run `mtree -e` to silence that.
//!
//! # What import reads
//! - Both layouts: nested (a directory line, the entries inside it, `..`),
//!   as `mtree -c` writes, and full-path lines (`./a/b`), as `mtree -C` and
//!   export write, mixed as mtree(8) allows (after a full path, relative
//!   names go into that directory if it is one, else into its parent).
//! - `/set` and `/unset` (`/unset all`), `\` line continuations, comment
//!   lines and unescaped `#` comments, blank lines.
//! - vis(3) escapes in names and `link`: `\ooo`, `\xHH`, `\M-c`, `\M^c`,
//!   `\^c`, `\n \r \t \b \a \v \f \s \E`, `\\`, `\` before any other
//!   printable character (so `\#`), and the empty escapes `\$` and
//!   `\`-newline. A name that decodes to contain `/` or NUL is an error.
//! - Required: `type` (`file dir link fifo socket char block`), `mode`
//!   (octal only; symbolic modes are a [`MtreeError::BadValue`]), `uid`,
//!   `gid`, on the line or by `/set`; files also need `size` and `sha256`
//!   (or `sha256digest`); symlinks need `link`. A missing one is
//!   [`MtreeError::MissingKeyword`] naming it and the line.
//! - `time=S.N` fills `mtime`, with N read as a count of nanoseconds as
//!   mtree(8) reads it (so write nine digits); `nlink` fills `nlink` on
//!   files and devices. A symlink's `size` is its target's length, whatever
//!   the spec says.
//! - Ignored: `cksum`, `device`, `flags`, `uname`, `gname`, `tags`,
//!   `ignore`, `optional`, `md5`, `sha1`, `rmd160`, `sha384`, `sha512` (and
//!   their `…digest` spellings) and any other keyword. `ignore` and
//!   `optional` change what mtree checks; import keeps the entry as is.
//! - The `.` line is the target itself and yields no entry (it must be a
//!   directory if it has a `type`).
//! - Entries come back sorted by path bytes. Unlike mtree(8), which lets a
//!   later line for the same path override an earlier one, a duplicate path
//!   is an error, and so is an entry whose parent is not a directory entry.
//!
//! # Bounds
//! [`Limits::DEFAULT`]: a logical line (after joining continuations) of at
//! most 64 KiB, 10,000,000 entries, [`MAX_COMPONENTS`] (2,048) path
//! components, paths of at most [`crate::files::path::MAX_PATH_BYTES`]
//! each and 1 GiB in all (nested specs make paths longer than their
//! lines). Crossing one is its own error. A spec with no entry and no `.`
//! line (empty, or only comments) is refused (`mtree_empty`). Every spec
//! export writes is within these bounds. No input makes import panic.

use super::entry::{EntryKind, TreeEntry};
use crate::files::path::{self, PathProblem};
use std::io::{self, Write};

/// Most components of one path: as many as a path of
/// [`crate::files::path::MAX_PATH_BYTES`] bytes can have (`a/a/…/a`), so
/// import takes every path that a snapshot holds and export writes.
pub const MAX_COMPONENTS: usize = path::MAX_PATH_BYTES / 2;

/// The bounds [`import_with`] enforces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Longest logical line, in bytes, after joining `\` continuations.
    pub max_line_bytes: usize,
    /// Most entries in one spec (the `.` lines not counted).
    pub max_entries: usize,
    /// Most `/`-separated components in one path.
    pub max_depth: usize,
    /// Most bytes of all the entries' paths together.
    pub max_total_path_bytes: usize,
}

impl Limits {
    pub const DEFAULT: Limits = Limits {
        max_line_bytes: 64 * 1024,
        max_entries: 10_000_000,
        max_depth: MAX_COMPONENTS,
        max_total_path_bytes: 1 << 30,
    };
}

impl Default for Limits {
    fn default() -> Self {
        Limits::DEFAULT
    }
}

/// Why a spec was not imported. Every variant names the 1-based line where
/// the logical line (or, for continuations, its first physical line) begins.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MtreeError {
    #[error("line {line}: longer than {limit} bytes")]
    LineTooLong { line: usize, limit: usize },
    #[error("line {line}: more than {limit} entries")]
    TooManyEntries { line: usize, limit: usize },
    #[error("line {line}: a path of more than {limit} components")]
    TooDeep { line: usize, limit: usize },
    #[error("line {line}: the paths total more than {limit} bytes")]
    TooLarge { line: usize, limit: usize },
    #[error("line {line}: a `\\` continuation runs past the end of the input")]
    UnterminatedContinuation { line: usize },
    #[error("line {line}: a malformed vis(3) escape")]
    BadEscape { line: usize },
    #[error("line {line}: not a relative path: {problem}")]
    BadPath { line: usize, problem: PathProblem },
    #[error("line {line}: a name that decodes to contain '/'")]
    SlashInName { line: usize },
    #[error("line {line}: `..` above the root")]
    AscendAboveRoot { line: usize },
    #[error("line {line}: the root `.` is not a directory")]
    RootNotDir { line: usize },
    #[error("line {line}: keyword `{keyword}` has no value")]
    MissingValue { line: usize, keyword: &'static str },
    #[error("line {line}: a bad value for `{keyword}`")]
    BadValue { line: usize, keyword: &'static str },
    #[error("line {line}: keyword `{keyword}` is missing")]
    MissingKeyword { line: usize, keyword: &'static str },
    #[error("line {line}: {} is listed again (first on line {first_line})", path::display(.path))]
    DuplicatePath {
        line: usize,
        first_line: usize,
        path: Vec<u8>,
    },
    #[error("line {line}: the parent of {} is not a directory of the spec", path::display(.path))]
    MissingParent { line: usize, path: Vec<u8> },
    /// No entry and no `.` line: an empty or comment-only input is not a
    /// spec (`line` is the last line read, 1 for an empty input).
    #[error("line {line}: the spec lists nothing, not even its root `.`")]
    Empty { line: usize },
}

impl MtreeError {
    /// The stable reason code (snake_case).
    pub fn code(&self) -> &'static str {
        match self {
            MtreeError::LineTooLong { .. } => "mtree_line_too_long",
            MtreeError::TooManyEntries { .. } => "mtree_too_many_entries",
            MtreeError::TooDeep { .. } => "mtree_too_deep",
            MtreeError::TooLarge { .. } => "mtree_too_large",
            MtreeError::UnterminatedContinuation { .. } => "mtree_unterminated_continuation",
            MtreeError::BadEscape { .. } => "mtree_bad_escape",
            MtreeError::BadPath { .. } => "mtree_bad_path",
            MtreeError::SlashInName { .. } => "mtree_slash_in_name",
            MtreeError::AscendAboveRoot { .. } => "mtree_ascend_above_root",
            MtreeError::RootNotDir { .. } => "mtree_root_not_dir",
            MtreeError::MissingValue { .. } => "mtree_missing_value",
            MtreeError::BadValue { .. } => "mtree_bad_value",
            MtreeError::MissingKeyword { .. } => "mtree_missing_keyword",
            MtreeError::DuplicatePath { .. } => "mtree_duplicate_path",
            MtreeError::MissingParent { .. } => "mtree_missing_parent",
            MtreeError::Empty { .. } => "mtree_empty",
        }
    }

    /// The 1-based line the error is about.
    pub fn line(&self) -> usize {
        match self {
            MtreeError::LineTooLong { line, .. }
            | MtreeError::TooManyEntries { line, .. }
            | MtreeError::TooDeep { line, .. }
            | MtreeError::TooLarge { line, .. }
            | MtreeError::UnterminatedContinuation { line }
            | MtreeError::BadEscape { line }
            | MtreeError::BadPath { line, .. }
            | MtreeError::SlashInName { line }
            | MtreeError::AscendAboveRoot { line }
            | MtreeError::RootNotDir { line }
            | MtreeError::MissingValue { line, .. }
            | MtreeError::BadValue { line, .. }
            | MtreeError::MissingKeyword { line, .. }
            | MtreeError::Empty { line }
            | MtreeError::DuplicatePath { line, .. }
            | MtreeError::MissingParent { line, .. } => *line,
        }
    }
}

// ---------------------------------------------------------------- export

/// Bytes written as themselves in names and link targets; all others are
/// `\ooo`.
fn is_plain(b: u8) -> bool {
    b.is_ascii_alphanumeric()
        || matches!(
            b,
            b'-' | b'.' | b'_' | b'+' | b',' | b':' | b'@' | b'~' | b'%'
        )
}

/// Appends `bytes` vis(3)-encoded; `/` stays as is when `keep_slash`.
fn vis_into(out: &mut Vec<u8>, bytes: &[u8], keep_slash: bool) {
    for &b in bytes {
        if is_plain(b) || (keep_slash && b == b'/') {
            out.push(b);
        } else {
            out.extend_from_slice(&[
                b'\\',
                b'0' + (b >> 6),
                b'0' + ((b >> 3) & 7),
                b'0' + (b & 7),
            ]);
        }
    }
}

fn invalid(entry: &TreeEntry, why: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("mtree export: {}: {why}", path::display(&entry.path)),
    )
}

fn parent_of(p: &[u8]) -> Option<&[u8]> {
    memchr::memrchr(b'/', p).map(|i| &p[..i])
}

fn mtree_type(kind: EntryKind) -> &'static str {
    match kind {
        EntryKind::File => "file",
        EntryKind::Dir => "dir",
        EntryKind::Symlink => "link",
        EntryKind::Fifo => "fifo",
        EntryKind::Socket => "socket",
        EntryKind::Char => "char",
        EntryKind::Block => "block",
    }
}

/// Writes `entries` as an mtree spec (see the module docs for the layout
/// and keywords). Fails with [`io::ErrorKind::InvalidInput`] on entries
/// mtree could not check as given, before writing anything.
pub fn export(entries: &[TreeEntry], out: &mut dyn Write) -> io::Result<()> {
    let mut order: Vec<&TreeEntry> = entries.iter().collect();
    if !order.is_sorted_by(|a, b| a.path <= b.path) {
        order.sort_by(|a, b| a.path.cmp(&b.path));
    }
    for (i, e) in order.iter().enumerate() {
        if let Err(problem) = path::check(&e.path) {
            return Err(invalid(e, &problem.to_string()));
        }
        if i > 0 && order[i - 1].path == e.path {
            return Err(invalid(e, "listed twice"));
        }
        if let Some(parent) = parent_of(&e.path) {
            let found = order
                .binary_search_by(|x| x.path.as_slice().cmp(parent))
                .ok()
                .map(|j| order[j].kind);
            if found != Some(EntryKind::Dir) {
                return Err(invalid(e, "its parent is not a directory entry"));
            }
        }
        match e.kind {
            EntryKind::File if e.size.is_none() || e.sha256.is_none() => {
                return Err(invalid(e, "a file without size or sha256"));
            }
            EntryKind::Symlink if e.link.is_none() => {
                return Err(invalid(e, "a symlink without a target"));
            }
            _ => {}
        }
    }

    let mut buf: Vec<u8> = Vec::with_capacity(128 * 1024);
    buf.extend_from_slice(b"#mtree\n. type=dir\n");
    for e in order {
        buf.extend_from_slice(b"./");
        vis_into(&mut buf, &e.path, true);
        // `write!` into a Vec cannot fail.
        let _ = write!(
            buf,
            " type={} mode=0{:o} uid={} gid={}",
            mtree_type(e.kind),
            e.mode & 0o7777,
            e.uid,
            e.gid
        );
        if let (EntryKind::File, Some(size), Some(sha)) = (e.kind, e.size, e.sha256) {
            let _ = write!(buf, " size={size} sha256digest={}", crate::hex::Hex(&sha));
        }
        if let (EntryKind::Symlink, Some(link)) = (e.kind, &e.link) {
            buf.extend_from_slice(b" link=");
            vis_into(&mut buf, link, true);
        }
        if let (false, Some((s, ns))) = (e.kind == EntryKind::Dir, e.mtime) {
            let _ = write!(buf, " time={s}.{ns:09}");
        }
        buf.push(b'\n');
        if buf.len() >= 64 * 1024 {
            out.write_all(&buf)?;
            buf.clear();
        }
    }
    out.write_all(&buf)?;
    out.flush()
}

// ---------------------------------------------------------------- import

/// Reads an mtree spec with [`Limits::DEFAULT`].
pub fn import(text: &[u8]) -> Result<Vec<TreeEntry>, MtreeError> {
    import_with(text, &Limits::DEFAULT)
}

/// The keywords import gives meaning to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kw {
    Type,
    Mode,
    Uid,
    Gid,
    Size,
    Link,
    Sha256,
    Time,
    Nlink,
}

impl Kw {
    fn of(name: &[u8]) -> Option<Kw> {
        Some(match name {
            b"type" => Kw::Type,
            b"mode" => Kw::Mode,
            b"uid" => Kw::Uid,
            b"gid" => Kw::Gid,
            b"size" => Kw::Size,
            b"link" => Kw::Link,
            b"sha256" | b"sha256digest" => Kw::Sha256,
            b"time" => Kw::Time,
            b"nlink" => Kw::Nlink,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Kw::Type => "type",
            Kw::Mode => "mode",
            Kw::Uid => "uid",
            Kw::Gid => "gid",
            Kw::Size => "size",
            Kw::Link => "link",
            Kw::Sha256 => "sha256",
            Kw::Time => "time",
            Kw::Nlink => "nlink",
        }
    }
}

/// Keyword values in force for a line: `/set` values overlaid with the
/// line's own.
#[derive(Debug, Clone, Default)]
struct Attrs {
    kind: Option<EntryKind>,
    mode: Option<u32>,
    uid: Option<u32>,
    gid: Option<u32>,
    size: Option<u64>,
    link: Option<Vec<u8>>,
    sha256: Option<[u8; 32]>,
    time: Option<(i64, u32)>,
    nlink: Option<u64>,
}

impl Attrs {
    fn unset(&mut self, kw: Kw) {
        match kw {
            Kw::Type => self.kind = None,
            Kw::Mode => self.mode = None,
            Kw::Uid => self.uid = None,
            Kw::Gid => self.gid = None,
            Kw::Size => self.size = None,
            Kw::Link => self.link = None,
            Kw::Sha256 => self.sha256 = None,
            Kw::Time => self.time = None,
            Kw::Nlink => self.nlink = None,
        }
    }

    /// Parses `key=value` tokens into `self`; unknown keywords are skipped.
    fn apply(&mut self, tokens: &[&[u8]], line: usize) -> Result<(), MtreeError> {
        for tok in tokens {
            let (key, value) = match memchr::memchr(b'=', tok) {
                Some(i) => (&tok[..i], Some(&tok[i + 1..])),
                None => (*tok, None),
            };
            let Some(kw) = Kw::of(key) else { continue };
            let Some(v) = value else {
                return Err(MtreeError::MissingValue {
                    line,
                    keyword: kw.name(),
                });
            };
            let bad = || MtreeError::BadValue {
                line,
                keyword: kw.name(),
            };
            match kw {
                Kw::Type => self.kind = Some(parse_type(v).ok_or_else(bad)?),
                Kw::Mode => {
                    let m = parse_radix(v, 8).filter(|m| *m <= 0o7777).ok_or_else(bad)?;
                    self.mode = Some(m as u32);
                }
                Kw::Uid => self.uid = Some(parse_u32(v).ok_or_else(bad)?),
                Kw::Gid => self.gid = Some(parse_u32(v).ok_or_else(bad)?),
                Kw::Size => self.size = Some(parse_radix(v, 10).ok_or_else(bad)?),
                Kw::Nlink => self.nlink = Some(parse_radix(v, 10).ok_or_else(bad)?),
                Kw::Link => {
                    self.link = Some(unvis(v).ok_or(MtreeError::BadEscape { line })?);
                }
                Kw::Sha256 => {
                    let s = std::str::from_utf8(v).map_err(|_| bad())?;
                    let bytes = crate::hex::decode_any(s).ok_or_else(bad)?;
                    self.sha256 = Some(bytes.try_into().map_err(|_| bad())?);
                }
                Kw::Time => self.time = Some(parse_time(v).ok_or_else(bad)?),
            }
        }
        Ok(())
    }
}

fn parse_type(v: &[u8]) -> Option<EntryKind> {
    Some(match v {
        b"file" => EntryKind::File,
        b"dir" => EntryKind::Dir,
        b"link" => EntryKind::Symlink,
        b"fifo" => EntryKind::Fifo,
        b"socket" => EntryKind::Socket,
        b"char" => EntryKind::Char,
        b"block" => EntryKind::Block,
        _ => return None,
    })
}

/// Digits only (no sign, no `0x`), at least one, no overflow.
fn parse_radix(v: &[u8], radix: u32) -> Option<u64> {
    if v.is_empty() {
        return None;
    }
    let mut n: u64 = 0;
    for &c in v {
        let d = char::from(c).to_digit(radix)?;
        n = n.checked_mul(u64::from(radix))?.checked_add(u64::from(d))?;
    }
    Some(n)
}

fn parse_u32(v: &[u8]) -> Option<u32> {
    parse_radix(v, 10).and_then(|n| u32::try_from(n).ok())
}

/// `S` or `S.N`, S possibly negative, N a nanosecond count (as mtree's own
/// `strtol` reads it) below one second.
fn parse_time(v: &[u8]) -> Option<(i64, u32)> {
    let (secs, nanos) = match memchr::memchr(b'.', v) {
        Some(i) => (&v[..i], Some(&v[i + 1..])),
        None => (v, None),
    };
    let (neg, digits) = match secs.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, secs),
    };
    let s = i64::try_from(parse_radix(digits, 10)?).ok()?;
    let s = if neg { -s } else { s };
    let ns = match nanos {
        Some(n) => u32::try_from(parse_radix(n, 10)?)
            .ok()
            .filter(|n| *n < 1_000_000_000)?,
        None => 0,
    };
    Some((s, ns))
}

fn ctrl(c: u8) -> u8 {
    if c == b'?' { 0x7f } else { c & 0x1f }
}

/// Decodes vis(3) escapes (see the module docs); `None` when malformed.
fn unvis(raw: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        let c = raw[i];
        i += 1;
        if c != b'\\' {
            out.push(c);
            continue;
        }
        let e = *raw.get(i)?;
        i += 1;
        match e {
            b'0'..=b'7' => {
                let mut v = u32::from(e - b'0');
                for _ in 0..2 {
                    match raw.get(i) {
                        Some(&d @ b'0'..=b'7') => {
                            v = v * 8 + u32::from(d - b'0');
                            i += 1;
                        }
                        _ => break,
                    }
                }
                out.push(u8::try_from(v).ok()?);
            }
            b'x' => {
                let mut v: u8 = 0;
                let mut n = 0;
                while n < 2 {
                    match raw.get(i).and_then(|d| char::from(*d).to_digit(16)) {
                        Some(d) => {
                            v = v * 16 + d as u8;
                            i += 1;
                            n += 1;
                        }
                        None => break,
                    }
                }
                if n == 0 {
                    return None;
                }
                out.push(v);
            }
            b'M' => {
                let (m, c2) = (*raw.get(i)?, *raw.get(i + 1)?);
                i += 2;
                match m {
                    b'-' => out.push(c2 | 0x80),
                    b'^' => out.push(ctrl(c2) | 0x80),
                    _ => return None,
                }
            }
            b'^' => {
                out.push(ctrl(*raw.get(i)?));
                i += 1;
            }
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'b' => out.push(0x08),
            b'a' => out.push(0x07),
            b'v' => out.push(0x0b),
            b'f' => out.push(0x0c),
            b's' => out.push(b' '),
            b'E' => out.push(0x1b),
            b'$' | b'\n' => {}
            c2 if c2.is_ascii_graphic() => out.push(c2),
            _ => return None,
        }
    }
    Some(out)
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r')
}

/// Where an unescaped `#` starts a comment, as fparseln(3) finds it.
fn comment_start(line: &[u8]) -> Option<usize> {
    let mut i = 0;
    while i < line.len() {
        match line[i] {
            b'\\' => i += 2,
            b'#' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// True when the physical line ends in an odd run of `\` (a continuation).
fn continues(line: &[u8]) -> bool {
    line.iter().rev().take_while(|b| **b == b'\\').count() % 2 == 1
}

struct Parser<'l> {
    limits: &'l Limits,
    globals: Attrs,
    /// The directory relative names go into; empty for the root.
    cwd: Vec<u8>,
    entries: Vec<(TreeEntry, usize)>,
    total_path_bytes: usize,
    /// A `.` line was read.
    root: bool,
}

impl Parser<'_> {
    fn line(&mut self, text: &[u8], line: usize) -> Result<(), MtreeError> {
        let text = match comment_start(text) {
            Some(i) => &text[..i],
            None => text,
        };
        let tokens: Vec<&[u8]> = text
            .split(|b| is_space(*b))
            .filter(|t| !t.is_empty())
            .collect();
        let Some((&first, rest)) = tokens.split_first() else {
            return Ok(());
        };
        match first {
            b"/set" => return self.globals.apply(rest, line),
            b"/unset" => {
                for kw in rest {
                    if *kw == b"all" {
                        self.globals = Attrs::default();
                    } else if let Some(k) = Kw::of(kw) {
                        self.globals.unset(k);
                    }
                }
                return Ok(());
            }
            b".." => {
                if self.cwd.is_empty() {
                    return Err(MtreeError::AscendAboveRoot { line });
                }
                let up = parent_of(&self.cwd).map_or(0, <[u8]>::len);
                self.cwd.truncate(up);
                return Ok(());
            }
            _ => {}
        }

        let mut attrs = self.globals.clone();
        attrs.apply(rest, line)?;
        if first == b"." {
            if attrs.kind.is_some_and(|k| k != EntryKind::Dir) {
                return Err(MtreeError::RootNotDir { line });
            }
            self.cwd.clear();
            self.root = true;
            return Ok(());
        }

        let full = memchr::memchr(b'/', first).is_some();
        let mut p = Vec::with_capacity(first.len() + if full { 0 } else { self.cwd.len() + 1 });
        let components: &[u8] = if full {
            if first[0] == b'/' {
                return Err(MtreeError::BadPath {
                    line,
                    problem: PathProblem::Absolute,
                });
            }
            first.strip_prefix(b"./").unwrap_or(first)
        } else {
            p.extend_from_slice(&self.cwd);
            first
        };
        for comp in components.split(|b| *b == b'/') {
            let name = unvis(comp).ok_or(MtreeError::BadEscape { line })?;
            if name.contains(&b'/') {
                return Err(MtreeError::SlashInName { line });
            }
            if !p.is_empty() {
                p.push(b'/');
            }
            p.extend_from_slice(&name);
            if p.len() > path::MAX_PATH_BYTES {
                return Err(MtreeError::BadPath {
                    line,
                    problem: PathProblem::TooLong,
                });
            }
        }
        path::check(&p).map_err(|problem| MtreeError::BadPath { line, problem })?;
        if memchr::memchr_iter(b'/', &p).count() >= self.limits.max_depth {
            return Err(MtreeError::TooDeep {
                line,
                limit: self.limits.max_depth,
            });
        }
        if self.entries.len() >= self.limits.max_entries {
            return Err(MtreeError::TooManyEntries {
                line,
                limit: self.limits.max_entries,
            });
        }
        self.total_path_bytes += p.len();
        if self.total_path_bytes > self.limits.max_total_path_bytes {
            return Err(MtreeError::TooLarge {
                line,
                limit: self.limits.max_total_path_bytes,
            });
        }

        let entry = build(p, attrs, line)?;
        if entry.kind == EntryKind::Dir {
            self.cwd.clone_from(&entry.path);
        } else if full {
            self.cwd.clear();
            self.cwd
                .extend_from_slice(parent_of(&entry.path).unwrap_or(b""));
        }
        self.entries.push((entry, line));
        Ok(())
    }
}

fn build(path: Vec<u8>, a: Attrs, line: usize) -> Result<TreeEntry, MtreeError> {
    let missing = |kw: Kw| MtreeError::MissingKeyword {
        line,
        keyword: kw.name(),
    };
    let kind = a.kind.ok_or(missing(Kw::Type))?;
    let mode = a.mode.ok_or(missing(Kw::Mode))?;
    let uid = a.uid.ok_or(missing(Kw::Uid))?;
    let gid = a.gid.ok_or(missing(Kw::Gid))?;
    let mut e = TreeEntry {
        path,
        kind,
        size: None,
        mode,
        uid,
        gid,
        link: None,
        sha256: None,
        mtime: a.time,
        inode: None,
        nlink: None,
    };
    match kind {
        EntryKind::File => {
            e.size = Some(a.size.ok_or(missing(Kw::Size))?);
            e.sha256 = Some(a.sha256.ok_or(missing(Kw::Sha256))?);
            e.nlink = a.nlink;
        }
        EntryKind::Symlink => {
            let link = a.link.ok_or(missing(Kw::Link))?;
            e.size = Some(link.len() as u64);
            e.link = Some(link);
        }
        EntryKind::Char | EntryKind::Block => e.nlink = a.nlink,
        EntryKind::Dir | EntryKind::Fifo | EntryKind::Socket => {}
    }
    Ok(e)
}

/// Reads an mtree spec under `limits` (see the module docs).
pub fn import_with(text: &[u8], limits: &Limits) -> Result<Vec<TreeEntry>, MtreeError> {
    let mut parser = Parser {
        limits,
        globals: Attrs::default(),
        cwd: Vec::new(),
        entries: Vec::new(),
        total_path_bytes: 0,
        root: false,
    };
    let mut joined: Vec<u8> = Vec::new();
    let mut start = 0usize; // line where `joined` began, 0 when empty
    let mut rest = text;
    let mut lineno = 0usize;
    while !rest.is_empty() {
        lineno += 1;
        let (phys, next) = match memchr::memchr(b'\n', rest) {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, &rest[rest.len()..]),
        };
        rest = next;
        let first = if start == 0 { lineno } else { start };
        if joined.len() + phys.len() > limits.max_line_bytes {
            return Err(MtreeError::LineTooLong {
                line: first,
                limit: limits.max_line_bytes,
            });
        }
        if continues(phys) {
            if start == 0 {
                start = lineno;
            }
            joined.extend_from_slice(&phys[..phys.len() - 1]);
            if rest.is_empty() {
                return Err(MtreeError::UnterminatedContinuation { line: first });
            }
            continue;
        }
        if start == 0 {
            parser.line(phys, lineno)?;
        } else {
            joined.extend_from_slice(phys);
            let logical = std::mem::take(&mut joined);
            parser.line(&logical, first)?;
            joined = logical;
            joined.clear();
            start = 0;
        }
    }

    if parser.entries.is_empty() && !parser.root {
        // Nothing but comments, blank lines and `/set`: not the spec of an
        // empty directory (export writes `. type=dir` for that), and never
        // a baseline of no entries.
        return Err(MtreeError::Empty {
            line: lineno.max(1),
        });
    }
    let mut entries = parser.entries;
    entries.sort_by(|a, b| a.0.path.cmp(&b.0.path));
    for w in entries.windows(2) {
        if w[0].0.path == w[1].0.path {
            let (first_line, line) = (w[0].1.min(w[1].1), w[0].1.max(w[1].1));
            return Err(MtreeError::DuplicatePath {
                line,
                first_line,
                path: w[1].0.path.clone(),
            });
        }
    }
    for (e, line) in &entries {
        if let Some(parent) = parent_of(&e.path) {
            let is_dir = entries
                .binary_search_by(|x| x.0.path.as_slice().cmp(parent))
                .is_ok_and(|j| entries[j].0.kind == EntryKind::Dir);
            if !is_dir {
                return Err(MtreeError::MissingParent {
                    line: *line,
                    path: e.path.clone(),
                });
            }
        }
    }
    Ok(entries.into_iter().map(|(e, _)| e).collect())
}

#[cfg(test)]
mod tests;
