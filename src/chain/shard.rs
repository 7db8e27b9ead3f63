//! A fleet verified as N shards, and the shards merged back into the one
//! report a single run prints (docs/FORMAT.md §21).
//!
//! The engine that runs the shards (a Kubernetes Indexed Job, an AWS Batch
//! array job, a Slurm job array) schedules and retries them; vouch makes
//! each shard deterministic and the merge complete:
//!
//! - **Partition** ([`select`]): every shard lists the whole fleet and
//!   takes its share. Files are grouped into *units* by their log name
//!   (`NAME.jsonl` with its rotated segments `NAME.jsonl.N`/`-N`, in one
//!   folder), so a log's segments stay together; units are dealt out
//!   largest first to the shard with the fewest bytes so far (ties: the
//!   lower index), a deterministic function of the listing.
//! - **Proof of completeness**: each shard's report carries the digest of
//!   the whole listing it saw (every input's name), how many inputs, and a
//!   digest of the options and keys that decide verdicts. The merge
//!   refuses a missing shard, a shard given twice, shards of different N,
//!   options or keys, and shards that saw different listings; then it
//!   checks that the files named by the shards' rows are the listing's,
//!   each exactly once, so a log that two shards partitioned differently
//!   (it grew between their runs) cannot vanish or count twice.
//! - **What only the whole fleet can tell**: a log an auditor checkpoint
//!   names that no shard found (`missing_log`) is decided at the merge:
//!   each shard hands the rows of the origins it did not find, and the
//!   merge keeps those no shard found.
//!
//! Incremental audits (`--state`) are not sharded: a shard sees only its
//! share, so it cannot tell a pinned log that vanished from one that
//! another shard verified.

use super::files::Found;
use super::missing::missing_log_row;
use super::options::VerifyOptions;
use super::report::{
    FleetReport, FleetSummary, LogReport, LogRow, VERIFY_FORMAT, VerifyMode, authenticated_of,
    exit_code_of, summarize,
};
pub use super::report::{MergedFrom, ShardInfo};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BinaryHeap, HashSet};
use std::path::PathBuf;

/// Most shards of one fleet (AWS Batch arrays hold 10,000 children).
pub const MAX_SHARDS: u32 = 100_000;

/// Why shards cannot be run or merged. Every one is an operational error
/// (exit 2): nothing was rejected, the fleet's verdict is not known.
#[derive(Debug, thiserror::Error)]
pub enum ShardError {
    #[error("--shard {text:?}: expected I/N with 0 <= I < N <= {MAX_SHARDS}")]
    BadSpec { text: String },
    #[error(
        "--shard with --state: a shard sees only its share of the fleet, so it cannot keep the fleet's pins; verify incrementally without --shard"
    )]
    WithState,
    #[error("{}: not a vouch verify JSON report: {source}", path.display())]
    Unreadable {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("{}: a report of format {format:?}, not {VERIFY_FORMAT:?}", path.display())]
    Format { path: PathBuf, format: String },
    #[error("{}: the row of {row} contradicts itself ({why}): not a report vouch wrote", path.display())]
    BadRow {
        path: PathBuf,
        row: String,
        why: &'static str,
    },
    #[error("{}: its mode is {top:?} but its shard's is {shard:?}", path.display())]
    ModeMismatch {
        path: PathBuf,
        top: VerifyMode,
        shard: VerifyMode,
    },
    #[error("{}: not a shard report (made without --shard)", path.display())]
    NotAShard { path: PathBuf },
    #[error("{}: shard {index} of {count}: the index is out of range", path.display())]
    OutOfRange {
        path: PathBuf,
        index: u32,
        count: u32,
    },
    #[error("{}: a shard of {count}, the others are of {expected}", path.display())]
    CountMismatch {
        path: PathBuf,
        count: u32,
        expected: u32,
    },
    #[error(
        "{}: made with other options or keys than {} (the digests differ): shards merge only when run alike",
        path.display(), first.display()
    )]
    OptionsMismatch { path: PathBuf, first: PathBuf },
    #[error(
        "{}: saw another listing of the fleet than {} (a log was added or removed between the shard runs): run the shards again",
        path.display(), first.display()
    )]
    ListingMismatch { path: PathBuf, first: PathBuf },
    #[error("shard {index} is given twice: {} and {}", first.display(), second.display())]
    Duplicate {
        index: u32,
        first: PathBuf,
        second: PathBuf,
    },
    #[error("{} of {count} shards missing: {}", missing.len(), show_indexes(missing))]
    Missing { missing: Vec<u32>, count: u32 },
    #[error(
        "{name} was verified by two shards: the shards partitioned the fleet differently (a log grew between their runs?); run them again"
    )]
    Overlap { name: String },
    #[error(
        "the shards' logs are not the listing they saw ({got} of {expected} inputs, or other names): a log grew or was replaced between the shard runs; run them again"
    )]
    Incomplete { expected: u64, got: u64 },
}

fn show_indexes(v: &[u32]) -> String {
    let mut s: Vec<String> = v.iter().take(10).map(u32::to_string).collect();
    if v.len() > 10 {
        s.push("…".to_owned());
    }
    s.join(", ")
}

impl ShardError {
    /// A stable snake_case code.
    pub fn code(&self) -> &'static str {
        match self {
            ShardError::BadSpec { .. } => "bad_shard",
            ShardError::WithState => "shard_with_state",
            ShardError::Unreadable { .. } => "bad_shard_report",
            ShardError::Format { .. } => "bad_shard_report",
            ShardError::BadRow { .. } => "bad_shard_report",
            ShardError::ModeMismatch { .. } => "bad_shard_report",
            ShardError::NotAShard { .. } => "not_a_shard_report",
            ShardError::OutOfRange { .. } => "shard_out_of_range",
            ShardError::CountMismatch { .. } => "shard_count_mismatch",
            ShardError::OptionsMismatch { .. } => "shard_options_mismatch",
            ShardError::ListingMismatch { .. } => "shard_listing_mismatch",
            ShardError::Duplicate { .. } => "shard_duplicate",
            ShardError::Missing { .. } => "shard_missing",
            ShardError::Overlap { .. } => "shard_overlap",
            ShardError::Incomplete { .. } => "shard_incomplete",
        }
    }
}

/// Shard `index` of `count` (0-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShardSpec {
    pub index: u32,
    pub count: u32,
}

impl std::str::FromStr for ShardSpec {
    type Err = ShardError;

    /// `I/N`, decimal, 0 <= I < N <= [`MAX_SHARDS`].
    fn from_str(text: &str) -> Result<ShardSpec, ShardError> {
        let bad = || ShardError::BadSpec {
            text: text.to_owned(),
        };
        let (i, n) = text.split_once('/').ok_or_else(bad)?;
        let digits =
            |s: &str| !s.is_empty() && s.len() <= 6 && s.bytes().all(|b| b.is_ascii_digit());
        if !digits(i) || !digits(n) {
            return Err(bad());
        }
        let (index, count) = (
            i.parse::<u32>().map_err(|_| bad())?,
            n.parse::<u32>().map_err(|_| bad())?,
        );
        if count == 0 || count > MAX_SHARDS || index >= count {
            return Err(bad());
        }
        Ok(ShardSpec { index, count })
    }
}

/// The share of one shard.
#[derive(Debug)]
pub struct Selected {
    /// The inputs this shard verifies (and, for shard 0, the paths that
    /// could not be examined).
    pub found: Found,
    pub listing: String,
    pub inputs: u64,
}

/// The names of all inputs: files, then paths that could not be examined.
fn input_names(found: &Found) -> Vec<String> {
    found
        .files
        .iter()
        .map(|s| s.name().display().to_string())
        .chain(found.problems.iter().map(|(p, _)| p.display().to_string()))
        .collect()
}

/// SHA-256 over the sorted names (each length-prefixed), and their number.
fn listing_digest(mut names: Vec<String>) -> (String, u64) {
    names.sort_unstable();
    let mut h = Sha256::new();
    for n in &names {
        h.update((n.len() as u64).to_be_bytes());
        h.update(n.as_bytes());
    }
    (crate::hex::encode(&h.finalize()), names.len() as u64)
}

/// The unit a file is dealt out with: its folder and log name without a
/// rotation suffix (`a/x.jsonl.3` → `a/x.jsonl`).
fn unit_of(name: &str) -> &str {
    let base = name.rfind('/').map_or(0, |i| i + 1);
    match name[base..].rfind(super::segments::LOG_EXTENSION) {
        Some(i) if super::segments::is_log_name(&name[base..]) => {
            &name[..base + i + super::segments::LOG_EXTENSION.len()]
        }
        _ => name,
    }
}

/// Shard `spec`'s share of `found` (see the module doc).
pub fn select(found: &Found, spec: ShardSpec) -> Selected {
    let (listing, inputs) = listing_digest(input_names(found));
    // Sizes of local files are stat'ed on the pool (a fleet is many files).
    let sized: Vec<(String, u64)> = {
        use rayon::prelude::*;
        found
            .files
            .par_iter()
            .map(|s| (s.name().display().to_string(), s.size()))
            .collect()
    };
    let mut units: BTreeMap<&str, (u64, Vec<usize>)> = BTreeMap::new();
    for (i, (name, size)) in sized.iter().enumerate() {
        let unit = units.entry(unit_of(name)).or_default();
        unit.0 += size;
        unit.1.push(i);
    }
    let mut order: Vec<(&&str, &(u64, Vec<usize>))> = units.iter().collect();
    order.sort_by(|a, b| b.1.0.cmp(&a.1.0).then_with(|| a.0.cmp(b.0)));
    // Least-loaded shard first: (bytes, index), smallest on top.
    let mut loads: BinaryHeap<std::cmp::Reverse<(u64, u32)>> =
        (0..spec.count).map(|i| std::cmp::Reverse((0, i))).collect();
    let mut mine: Vec<usize> = Vec::new();
    for (_, (bytes, files)) in order {
        let Some(std::cmp::Reverse((load, shard))) = loads.pop() else {
            break;
        };
        if shard == spec.index {
            mine.extend(files);
        }
        // At least one per unit, so empty files still spread out.
        loads.push(std::cmp::Reverse((load + bytes.max(&1), shard)));
    }
    mine.sort_unstable();
    Selected {
        found: Found {
            files: mine.into_iter().map(|i| found.files[i].clone()).collect(),
            problems: if spec.index == 0 {
                found.problems.clone()
            } else {
                Vec::new()
            },
            #[cfg(feature = "s3")]
            store: found.store.clone(),
        },
        listing,
        inputs,
    }
}

/// The digest of what decides verdicts (see [`ShardInfo::options`]).
pub fn options_digest(opts: &VerifyOptions, mode: VerifyMode, strict: bool) -> String {
    #[derive(Serialize)]
    struct Decides<'a> {
        format: &'static str,
        keys: String,
        checkpoints: Vec<(String, &'a str, u64, String)>,
        mode: VerifyMode,
        strict: bool,
    }
    let d = Decides {
        format: VERIFY_FORMAT,
        keys: opts.trusted.fingerprint(),
        checkpoints: opts
            .checkpoints
            .iter()
            .map(|c| {
                let cp = c.checkpoint();
                (
                    c.source().display().to_string(),
                    cp.origin.as_str(),
                    cp.size,
                    crate::hex::encode(&cp.root),
                )
            })
            .collect(),
        mode,
        strict,
    };
    let bytes = serde_json::to_vec(&d).unwrap_or_default();
    crate::hex::encode(&Sha256::digest(&bytes))
}

/// Verifies shard `spec` of the fleet `found`: its share, with the logs
/// the auditor's checkpoints name that it did not find left to the merge.
pub fn verify_shard(
    found: &Found,
    spec: ShardSpec,
    opts: &VerifyOptions,
    mode: VerifyMode,
    strict: bool,
    on_log: &(dyn Fn(&LogReport) + Sync),
) -> Result<(FleetReport, ShardInfo), ShardError> {
    if opts.state.is_some() || opts.save_state {
        return Err(ShardError::WithState);
    }
    let share = select(found, spec);
    let report = super::verify::verify_found_with(&share.found, opts, on_log, false);
    let present: HashSet<&str> = report
        .logs
        .iter()
        .filter_map(|l| l.origin.as_deref())
        .collect();
    let mut named = HashSet::new();
    let missing = opts
        .checkpoints
        .iter()
        .filter(|c| {
            let o = c.checkpoint().origin.as_str();
            !present.contains(o) && named.insert(o)
        })
        .map(|c| {
            missing_log_row(
                c.source(),
                &c.checkpoint().origin,
                super::error::NamedBy::Checkpoint,
            )
            .row()
        })
        .collect();
    let info = ShardInfo {
        index: spec.index,
        count: spec.count,
        listing: share.listing,
        inputs: share.inputs,
        options: options_digest(opts, mode, strict),
        mode,
        strict,
        missing,
    };
    Ok((report, info))
}

/// A `vouch verify --format json` document, as read back.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReportDocument {
    pub format: String,
    pub mode: VerifyMode,
    pub authenticated: bool,
    pub logs: Vec<LogRow>,
    pub summary: FleetSummary,
    #[serde(default)]
    pub state: Option<serde_json::Value>,
    #[serde(default)]
    pub shard: Option<ShardInfo>,
    #[serde(default)]
    pub merged: Option<MergedFrom>,
    #[serde(default)]
    pub transfer: Option<crate::objstore::Transfer>,
    pub exit_code: u8,
}

/// Reads a shard's JSON report.
pub fn parse_report(path: &std::path::Path, bytes: &[u8]) -> Result<ReportDocument, ShardError> {
    let doc: ReportDocument =
        serde_json::from_slice(bytes).map_err(|source| ShardError::Unreadable {
            path: path.to_path_buf(),
            source,
        })?;
    if doc.format != VERIFY_FORMAT {
        return Err(ShardError::Format {
            path: path.to_path_buf(),
            format: doc.format,
        });
    }
    Ok(doc)
}

/// The fleet's report, merged from all its shards.
#[derive(Debug, Clone)]
pub struct Merged {
    /// Every log's row, sorted by path as a single run sorts them.
    pub rows: Vec<LogRow>,
    pub mode: VerifyMode,
    pub strict: bool,
    pub from: MergedFrom,
    /// What the shards read from object stores, summed (each shard lists
    /// the whole fleet, so requests exceed a single run's).
    pub transfer: Option<crate::objstore::Transfer>,
}

impl Merged {
    pub fn summary(&self) -> FleetSummary {
        summarize(self.rows.iter().map(|r| (&r.status, r.records, r.bytes)))
    }

    /// The exit code a single run over the whole fleet gives.
    pub fn exit_code(&self) -> u8 {
        exit_code_of(self.rows.iter().map(|r| &r.status), self.strict, self.mode)
    }

    pub fn authenticated(&self) -> bool {
        authenticated_of(self.rows.iter().map(|r| &r.status), self.mode)
    }
}

/// Merges the reports of all N shards of one run (see the module doc).
pub fn merge(reports: Vec<(PathBuf, ReportDocument)>) -> Result<Merged, ShardError> {
    let mut shards: Vec<(PathBuf, ShardInfo, Vec<LogRow>)> = Vec::with_capacity(reports.len());
    let mut transfer: Option<crate::objstore::Transfer> = None;
    for (path, doc) in reports {
        let Some(info) = doc.shard else {
            return Err(ShardError::NotAShard { path });
        };
        if doc.mode != info.mode {
            return Err(ShardError::ModeMismatch {
                path,
                top: doc.mode,
                shard: info.mode,
            });
        }
        if let Some((row, why)) = doc
            .logs
            .iter()
            .find_map(|r| row_contradiction(r).map(|w| (r, w)))
        {
            return Err(ShardError::BadRow {
                row: row.path.clone(),
                path,
                why,
            });
        }
        if info.index >= info.count || info.count > MAX_SHARDS {
            return Err(ShardError::OutOfRange {
                path,
                index: info.index,
                count: info.count,
            });
        }
        if let Some(t) = doc.transfer {
            let sum = transfer.get_or_insert(crate::objstore::Transfer::default());
            sum.requests += t.requests;
            sum.bytes += t.bytes;
        }
        shards.push((path, info, doc.logs));
    }
    let Some((first_path, first, _)) = shards.first() else {
        return Err(ShardError::Missing {
            missing: Vec::new(),
            count: 0,
        });
    };
    let (first_path, first) = (first_path.clone(), first.clone());
    let mut seen: BTreeMap<u32, PathBuf> = BTreeMap::new();
    for (path, info, _) in &shards {
        if info.count != first.count {
            return Err(ShardError::CountMismatch {
                path: path.clone(),
                count: info.count,
                expected: first.count,
            });
        }
        if info.options != first.options || info.mode != first.mode || info.strict != first.strict {
            return Err(ShardError::OptionsMismatch {
                path: path.clone(),
                first: first_path.clone(),
            });
        }
        if info.listing != first.listing || info.inputs != first.inputs {
            return Err(ShardError::ListingMismatch {
                path: path.clone(),
                first: first_path.clone(),
            });
        }
        if let Some(before) = seen.insert(info.index, path.clone()) {
            return Err(ShardError::Duplicate {
                index: info.index,
                first: before,
                second: path.clone(),
            });
        }
    }
    let missing: Vec<u32> = (0..first.count).filter(|i| !seen.contains_key(i)).collect();
    if !missing.is_empty() {
        return Err(ShardError::Missing {
            missing,
            count: first.count,
        });
    }
    // Every input of the listing in exactly one shard's rows.
    let mut names: HashSet<&str> = HashSet::new();
    let mut all: Vec<String> = Vec::new();
    for (_, _, rows) in &shards {
        for name in rows.iter().flat_map(|r| r.segments.iter()) {
            if !names.insert(name) {
                return Err(ShardError::Overlap { name: name.clone() });
            }
            all.push(name.clone());
        }
    }
    let got = all.len() as u64;
    if listing_digest(all) != (first.listing.clone(), first.inputs) {
        return Err(ShardError::Incomplete {
            expected: first.inputs,
            got,
        });
    }
    let mut rows: Vec<LogRow> = Vec::new();
    let mut candidates: Vec<LogRow> = Vec::new();
    for (_, info, shard_rows) in shards {
        rows.extend(shard_rows);
        candidates.extend(info.missing);
    }
    reject_split_origins(&mut rows);
    let mut present: HashSet<String> = rows.iter().filter_map(|r| r.origin.clone()).collect();
    for row in candidates {
        if let Some(origin) = &row.origin
            && present.insert(origin.clone())
        {
            rows.push(row);
        }
    }
    rows.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(Merged {
        rows,
        mode: first.mode,
        strict: first.strict,
        from: MergedFrom {
            shards: first.count,
            listing: first.listing,
            inputs: first.inputs,
            options: first.options,
        },
        transfer,
    })
}

/// Why a row read back from a shard report cannot be one vouch wrote, if
/// it cannot: a verdict its own fields contradict (a `valid` row with a
/// failure, a rejected row without a reason), or a name that is not one of
/// its files.
fn row_contradiction(row: &LogRow) -> Option<&'static str> {
    use super::report::LogStatus;
    if !row.segments.contains(&row.path) {
        return Some("its path is not one of its segments");
    }
    if row.failure.is_some() != (row.status == LogStatus::Invalid) {
        return Some("a failure is given exactly when a log is invalid");
    }
    match row.status {
        LogStatus::Valid if row.reason.is_some() || row.error.is_some() => {
            Some("valid, with a reason")
        }
        LogStatus::Valid if row.root.is_none() => Some("valid, without a root"),
        LogStatus::Invalid
            if row.reason.as_deref() != row.failure.as_ref().map(|f| f.reason.as_str()) =>
        {
            Some("invalid, with a reason that is not its failure's")
        }
        LogStatus::Partial | LogStatus::Unauthenticated | LogStatus::Error
            if row.reason.is_none() =>
        {
            Some("rejected or partial, without a reason")
        }
        _ => None,
    }
}

/// The merge's one check of what a single run decides across shards: one
/// origin's files are one log. A shard groups the files of its own share
/// by origin, but two files of one origin named as two logs (`a.jsonl`,
/// `b.jsonl`) may fall in two shards. If the later part continues the
/// first, its shard already rejected it (`seq_gap`); if both start at
/// seq 0 (a copy, or a fork signed with the log's key), each passes alone,
/// while the single run, reading them as one log, rejects the second
/// start. Every row of an origin that appears in more than one row is
/// therefore rejected here (`split_origin`): a merged report never accepts
/// what the single run rejects.
fn reject_split_origins(rows: &mut [LogRow]) {
    use super::report::LogStatus;
    let mut count: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for row in rows.iter() {
        if let Some(origin) = &row.origin {
            count.entry(origin).or_default().push(&row.path);
        }
    }
    let split: BTreeMap<String, Vec<String>> = count
        .into_iter()
        .filter(|(_, paths)| paths.len() > 1)
        .map(|(o, paths)| (o.to_owned(), paths.into_iter().map(str::to_owned).collect()))
        .collect();
    for row in rows.iter_mut() {
        let Some(paths) = row.origin.as_ref().and_then(|o| split.get(o)) else {
            continue;
        };
        if matches!(row.status, LogStatus::Invalid | LogStatus::Error) {
            continue;
        }
        let others: Vec<&str> = paths
            .iter()
            .map(String::as_str)
            .filter(|p| *p != row.path)
            .collect();
        let first = row
            .segments
            .first()
            .cloned()
            .unwrap_or_else(|| row.path.clone());
        row.status = LogStatus::Invalid;
        row.reason = Some(SPLIT_ORIGIN.to_owned());
        row.failure = Some(super::report::FailureRow {
            between: None,
            changed: None,
            line: 1,
            message: format!(
                "records of origin {:?} are also in {}, which another shard verified: a single run verifies one origin's files as one log, and these parts do not continue one another",
                row.origin.as_deref().unwrap_or_default(),
                others.join(", ")
            ),
            offset: 0,
            path: first,
            reason: SPLIT_ORIGIN.to_owned(),
            seq: None,
        });
    }
}

/// The reason code of [`reject_split_origins`].
pub const SPLIT_ORIGIN: &str = "split_origin";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::source::Source;

    #[test]
    fn specs() {
        let s: ShardSpec = "2/5".parse().unwrap();
        assert_eq!((s.index, s.count), (2, 5));
        for bad in [
            "5/5", "0/0", "-1/3", "1", "a/3", "1/100001", "01/3x", "/3", "1/",
        ] {
            assert!(bad.parse::<ShardSpec>().is_err(), "{bad}");
        }
    }

    #[test]
    fn units_keep_segments_together() {
        assert_eq!(unit_of("a/x.jsonl.3"), "a/x.jsonl");
        assert_eq!(unit_of("a/x.jsonl-20260101"), "a/x.jsonl");
        assert_eq!(unit_of("a/x.jsonl"), "a/x.jsonl");
        assert_eq!(unit_of("s3://b/p/y.jsonl.1"), "s3://b/p/y.jsonl");
        assert_eq!(unit_of("a/x.jsonl.bak"), "a/x.jsonl.bak");
        assert_eq!(unit_of("a.jsonl/x.log"), "a.jsonl/x.log");
    }

    fn fleet(sizes: &[(&str, u64)]) -> (tempfile::TempDir, Found) {
        let d = tempfile::tempdir().unwrap();
        let mut files = Vec::new();
        for (name, size) in sizes {
            let p = d.path().join(name);
            std::fs::write(&p, vec![b'x'; *size as usize]).unwrap();
            files.push(Source::Local(p));
        }
        files.sort_by_key(|s| s.name());
        (
            d,
            Found {
                files,
                problems: vec![(PathBuf::from("/nowhere/z.jsonl"), "gone".into())],
                #[cfg(feature = "s3")]
                store: None,
            },
        )
    }

    #[test]
    fn every_file_in_exactly_one_shard_and_balanced() {
        let sizes: Vec<(String, u64)> = (0..40)
            .map(|i| (format!("l{i}.jsonl"), 100 + (i * 37 % 13) * 50))
            .chain([
                ("l3.jsonl.1".to_owned(), 900),
                ("l3.jsonl-2".to_owned(), 10),
            ])
            .collect();
        let refs: Vec<(&str, u64)> = sizes.iter().map(|(n, s)| (n.as_str(), *s)).collect();
        let (_d, found) = fleet(&refs);
        for n in [1u32, 2, 3, 7, 50] {
            let mut seen = std::collections::HashMap::new();
            let mut loads = Vec::new();
            for i in 0..n {
                let s = select(&found, ShardSpec { index: i, count: n });
                assert_eq!(s.inputs, found.files.len() as u64 + 1);
                loads.push(s.found.files.iter().map(Source::size).sum::<u64>());
                for f in &s.found.files {
                    assert!(seen.insert(f.name(), i).is_none(), "{:?} twice", f.name());
                }
                assert_eq!(s.found.problems.len(), usize::from(i == 0));
            }
            assert_eq!(seen.len(), found.files.len());
            // Segments of l3 together.
            let l3: HashSet<u32> = seen
                .iter()
                .filter(|(k, _)| k.to_string_lossy().contains("l3.jsonl"))
                .map(|(_, v)| *v)
                .collect();
            assert_eq!(l3.len(), 1);
            // Greedy balance: no shard exceeds the mean by more than the
            // largest unit.
            let total: u64 = loads.iter().sum();
            let max = *loads.iter().max().unwrap();
            if n <= 7 {
                assert!(max <= total / u64::from(n) + 1820, "{loads:?}");
            }
        }
    }

    #[test]
    fn listing_digest_is_order_free_and_name_exact() {
        let a = listing_digest(vec!["a".into(), "b".into()]);
        assert_eq!(a, listing_digest(vec!["b".into(), "a".into()]));
        assert_ne!(a, listing_digest(vec!["ab".into()]));
        assert_ne!(a, listing_digest(vec!["a".into(), "b".into(), "c".into()]));
    }
}
