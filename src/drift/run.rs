//! The drift operations: snapshot, check, accept, history, mtree export
//! and import. Each reads the chain through [`super::record::history`]
//! (the trust path of `vouch verify`) before it uses a baseline, and
//! writes through the covered writer (a record and its checkpoint under
//! one lock, compare-and-swap against the log the baseline was read from).

use super::change::{self, Change, ChangeKind, Field};
use super::config;
use super::dirdiff;
use super::error::{DriftError, TargetProblem};
use super::record::{
    self, AcceptBody, Baseline, CheckBody, CheckResult, Counts, History, SnapshotBody,
};
use super::rules::{Rules, RulesSpec};
use super::snapshot::{self, Items, McpItem, Snapshot, TargetKind};
use super::tree::{self, Problem};
use crate::chain::TrustedKeys;
use crate::json::{self, pointer};
use crate::mcp;
use crate::mcp::defdiff::{self, ItemChangeKind, ItemKind};
use crate::note::SignerKey;
use crate::{Error, Result};
use serde::Serialize;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

mod accept;
mod compare;
mod history;
mod mtree_io;
pub use accept::*;
pub use compare::*;
pub use history::*;
pub use mtree_io::*;

/// What a target argument names.
#[derive(Debug, Clone)]
pub enum TargetSpec {
    Dir(PathBuf),
    Config(PathBuf, config::Format),
    Mcp(mcp::ServerSpec),
}

/// A resolved target: its name in the chain and what to examine.
#[derive(Debug, Clone)]
pub struct Target {
    pub name: String,
    pub spec: TargetSpec,
}

impl Target {
    pub fn kind(&self) -> TargetKind {
        match self.spec {
            TargetSpec::Dir(_) => TargetKind::Dir,
            TargetSpec::Config(..) => TargetKind::Config,
            TargetSpec::Mcp(_) => TargetKind::Mcp,
        }
    }
}

fn target_err(target: &str, problem: TargetProblem) -> Error {
    Error::DriftTarget {
        target: target.to_owned(),
        problem,
    }
}

fn mcp_err(target: &str, e: &mcp::McpError) -> Error {
    target_err(target, TargetProblem::Mcp(Box::new(e.clone())))
}

/// `mcp:CONFIG.json#NAME`: a host config file's server entry.
fn host_entry(rest: &str) -> Option<(PathBuf, &str)> {
    let (file, entry) = rest.rsplit_once('#')?;
    if entry.is_empty() || entry.chars().any(char::is_whitespace) || !file.ends_with(".json") {
        return None;
    }
    let file = match file.strip_prefix("~/") {
        Some(r) => PathBuf::from(std::env::var_os("HOME")?).join(r),
        None => PathBuf::from(file),
    };
    file.is_file().then_some((file, entry))
}

/// Resolves a TARGET argument: `mcp:COMMAND` or `mcp:CONFIG.json#NAME`, a
/// configuration file (by extension), or a directory. Directories and
/// files are named by their canonical absolute path, MCP servers by
/// `mcp:` and their command (shell-quoted) or `mcp:CONFIG#NAME`, unless
/// `name` is given.
pub fn resolve(arg: &str, name: Option<&str>) -> Result<Target> {
    if let Some(rest) = arg.strip_prefix("mcp:") {
        let (spec, derived) = match host_entry(rest) {
            Some((file, entry)) => {
                let spec = mcp::ServerSpec::from_host_config(&file, entry)
                    .map_err(|e| mcp_err(arg, &e))?;
                let abs = std::fs::canonicalize(&file).unwrap_or(file);
                (spec, format!("mcp:{}#{entry}", abs.display()))
            }
            None => {
                let spec = mcp::ServerSpec::parse_command(rest).map_err(|e| mcp_err(arg, &e))?;
                let d = format!("mcp:{}", spec.display());
                (spec, d)
            }
        };
        return Ok(Target {
            name: name.map_or(derived, str::to_owned),
            spec: TargetSpec::Mcp(spec),
        });
    }
    let p = Path::new(arg);
    let m = match std::fs::metadata(p) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(target_err(arg, TargetProblem::Missing));
        }
        Err(e) => return Err(target_err(arg, TargetProblem::Unreadable(e.to_string()))),
    };
    let abs = std::fs::canonicalize(p)
        .map_err(|e| target_err(arg, TargetProblem::Unreadable(e.to_string())))?;
    let name = name.map_or_else(|| abs.display().to_string(), str::to_owned);
    if m.is_dir() {
        return Ok(Target {
            name,
            spec: TargetSpec::Dir(abs),
        });
    }
    match config::detect(&abs) {
        Some(f) if m.is_file() => Ok(Target {
            name,
            spec: TargetSpec::Config(abs, f),
        }),
        _ => Err(target_err(arg, TargetProblem::Unsupported)),
    }
}

/// What drift commands share.
pub struct DriftOptions<'a> {
    pub log: &'a Path,
    /// TARGET as given.
    pub target: &'a str,
    /// `--name`: the target's name in the chain (default: derived).
    pub name: Option<&'a str>,
    /// `--rules FILE` (directory targets).
    pub rules: Option<&'a Path>,
    /// Called with the bytes of each file hashed (progress display).
    pub progress: Option<&'a (dyn Fn(u64) + Sync)>,
}

/// A path that could not be examined, as reported.
#[derive(Debug, Clone, Serialize)]
pub struct Unchecked {
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path_b64: Option<String>,
    pub reason: &'static str,
    pub message: String,
}

fn unchecked(problems: &[Problem]) -> Vec<Unchecked> {
    problems
        .iter()
        .map(|p| Unchecked {
            path: std::str::from_utf8(&p.path)
                .map_or_else(|_| crate::files::path::display(&p.path), str::to_owned),
            path_b64: crate::files::path::to_json(&p.path).1,
            reason: p.problem.code(),
            message: p.problem.to_string(),
        })
        .collect()
}

/// A target as it is now.
pub struct Now {
    pub snapshot: Snapshot,
    pub problems: Vec<Problem>,
    /// Bytes read (regular files hashed).
    pub bytes: u64,
}

fn load_rules(path: Option<&Path>) -> Result<Option<Rules>> {
    let Some(p) = path else { return Ok(None) };
    let bytes = crate::fs::read_bounded(p, 1 << 20)?;
    let text = String::from_utf8(bytes).map_err(|_| {
        target_err(
            &p.display().to_string(),
            TargetProblem::Rules("not UTF-8".into()),
        )
    })?;
    Rules::parse(&text)
        .map(Some)
        .map_err(|e| target_err(&p.display().to_string(), TargetProblem::Rules(e)))
}

fn rules_of(snap: &Snapshot, target: &str) -> Result<Rules> {
    let spec: RulesSpec = match snap.meta.get("rules") {
        None => RulesSpec::default(),
        Some(v) => serde_json::from_value(v.clone()).map_err(|e| {
            target_err(
                target,
                TargetProblem::Rules(format!("the baseline's rules: {e}")),
            )
        })?,
    };
    Rules::compile(spec).map_err(|e| target_err(target, TargetProblem::Rules(e)))
}

/// Examines `target` now.
pub fn take(
    target: &Target,
    rules: &Rules,
    progress: Option<&(dyn Fn(u64) + Sync)>,
) -> Result<Now> {
    match &target.spec {
        TargetSpec::Dir(root) => {
            match std::fs::symlink_metadata(root) {
                Ok(m) if m.is_dir() => {}
                Ok(_) => {
                    return Err(target_err(
                        &target.name,
                        TargetProblem::KindChanged {
                            found: "non-directory",
                            baseline: "dir",
                        },
                    ));
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    return Err(target_err(&target.name, TargetProblem::Missing));
                }
                Err(e) => {
                    return Err(target_err(
                        &target.name,
                        TargetProblem::Unreadable(e.to_string()),
                    ));
                }
            }
            let t = tree::take(root, rules, progress);
            let mut meta = Map::new();
            meta.insert("rules".into(), rules.to_json());
            meta.insert("rules_digest".into(), rules.digest().into());
            Ok(Now {
                snapshot: Snapshot {
                    target: target.name.clone(),
                    meta,
                    items: Items::Dir(t.entries),
                },
                problems: t.problems,
                bytes: t.bytes,
            })
        }
        TargetSpec::Config(path, format) => {
            let bytes = match crate::fs::read_bounded(path, MAX_CONFIG) {
                Ok(b) => b,
                Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                    return Err(target_err(&target.name, TargetProblem::Missing));
                }
                Err(e) => return Err(e),
            };
            let doc = config::parse(&bytes, *format).map_err(|e| {
                // The error already names the target; the file only when
                // the target goes by another name (`--name`).
                let shown = path.display().to_string();
                target_err(
                    &target.name,
                    TargetProblem::Config {
                        file: (target.name != shown).then_some(shown),
                        problem: Box::new(e),
                    },
                )
            })?;
            let mut meta = Map::new();
            meta.insert("syntax".into(), format.as_str().into());
            Ok(Now {
                bytes: bytes.len() as u64,
                snapshot: Snapshot {
                    target: target.name.clone(),
                    meta,
                    items: Items::Config(doc),
                },
                problems: Vec::new(),
            })
        }
        TargetSpec::Mcp(spec) => {
            let listing = mcp::list(spec, &mcp::ListOptions::default())
                .map_err(|e| mcp_err(&target.name, &e))?;
            let mut items = Vec::new();
            for (kind, defs) in [
                (ItemKind::Tool, &listing.tools),
                (ItemKind::Prompt, &listing.prompts),
                (ItemKind::Resource, &listing.resources),
                (ItemKind::ResourceTemplate, &listing.resource_templates),
            ] {
                for d in defs {
                    let key = defdiff::item_key(kind, d).unwrap_or_else(|| {
                        format!("sha256:{}", crate::hex::encode(&defdiff::full_hash(d)))
                    });
                    items.push(McpItem {
                        kind: kind.as_str().to_owned(),
                        key,
                        definition: d.clone(),
                    });
                }
            }
            items.sort_by(|a, b| a.order().cmp(&b.order()));
            let mut meta = Map::new();
            meta.insert("era".into(), to_value(&listing.era)?);
            meta.insert(
                "client_capabilities".into(),
                listing.client_capabilities.clone(),
            );
            meta.insert(
                "server_capabilities".into(),
                listing.server_capabilities.clone(),
            );
            meta.insert(
                "server_info".into(),
                listing.server_info.clone().unwrap_or(Value::Null),
            );
            meta.insert(
                "instructions".into(),
                listing
                    .instructions
                    .clone()
                    .map_or(Value::Null, Value::String),
            );
            Ok(Now {
                bytes: 0,
                snapshot: Snapshot {
                    target: target.name.clone(),
                    meta,
                    items: Items::Mcp(items),
                },
                problems: Vec::new(),
            })
        }
    }
}

/// Configuration files larger than this are refused.
const MAX_CONFIG: u64 = 64 << 20;

fn signer_keys(key: &SignerKey) -> Result<TrustedKeys> {
    Ok(TrustedKeys::new([key.verifier()])?)
}

fn read_baseline(log: &Path, history: &History, target: &Target) -> Result<(Baseline, Snapshot)> {
    let Some(b) = history.baseline(&target.name)? else {
        return Err(target_err(&target.name, TargetProblem::NoBaseline));
    };
    if b.kind != target.kind() {
        return Err(target_err(
            &target.name,
            TargetProblem::KindChanged {
                found: target.kind().as_str(),
                baseline: b.kind.as_str(),
            },
        ));
    }
    let snap = snapshot::read(log, &b.snapshot, b.seq, &target.name, b.kind)?;
    if snap.items.count() != b.count {
        return Err(Error::Drift(DriftError::SnapshotMismatch {
            seq: b.seq,
            digest: b.snapshot.clone(),
            problem: format!(
                "it holds {} items, the record says {}",
                snap.items.count(),
                b.count
            ),
        }));
    }
    Ok((b, snap))
}

/// The record a drift command wrote.
#[derive(Debug, Clone, Serialize)]
pub struct Written {
    pub seq: u64,
    /// The checkpoint covering it: its tree size.
    pub checkpoint_size: u64,
}

/// What `drift snapshot` did.
#[derive(Debug, Clone, Serialize)]
pub struct SnapshotReport {
    pub target: String,
    pub kind: TargetKind,
    pub snapshot: String,
    pub count: u64,
    /// True when it became the baseline (there was none).
    pub baseline: bool,
    pub record: Written,
    pub unchecked: Vec<Unchecked>,
    pub bytes: u64,
}

/// `drift snapshot`: records a snapshot; it becomes the baseline if the
/// target has none.
pub fn snapshot_target(opts: &DriftOptions<'_>, key: &SignerKey) -> Result<SnapshotReport> {
    let target = resolve(opts.target, opts.name)?;
    let keys = signer_keys(key)?;
    let history = record::history_or_empty(opts.log, &keys)?;
    let baseline = history.baseline(&target.name)?;
    let rules = load_rules(opts.rules)?.unwrap_or_default();
    let now = take(&target, &rules, opts.progress)?;
    let digest = snapshot::write(opts.log, &now.snapshot)?;
    let body = SnapshotBody {
        target: target.name.clone(),
        kind: target.kind(),
        snapshot: digest.clone(),
        count: now.snapshot.items.count(),
        baseline: baseline.is_none(),
    };
    let (seq, covered) = record::append(
        opts.log,
        key,
        record::KIND_SNAPSHOT,
        to_value(&body)?,
        history.records,
        &target.name,
    )?;
    Ok(SnapshotReport {
        target: target.name,
        kind: body.kind,
        snapshot: digest,
        count: body.count,
        baseline: body.baseline,
        record: Written {
            seq,
            checkpoint_size: covered.checkpoint.checkpoint.size,
        },
        unchecked: unchecked(&now.problems),
        bytes: now.bytes,
    })
}

fn to_value(v: &impl Serialize) -> Result<Value> {
    serde_json::to_value(v).map_err(|source| Error::Serialize {
        what: "drift record",
        source,
    })
}

/// The baseline a check or acceptance compared with, as reported.
#[derive(Debug, Clone, Serialize)]
pub struct BaselineInfo {
    pub seq: u64,
    pub ts: String,
    pub snapshot: String,
    pub count: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl From<&Baseline> for BaselineInfo {
    fn from(b: &Baseline) -> Self {
        BaselineInfo {
            seq: b.seq,
            ts: b.ts.clone(),
            snapshot: b.snapshot.clone(),
            count: b.count,
            reason: b.reason.clone(),
        }
    }
}

/// What the chain said, as reported.
#[derive(Debug, Clone, Serialize)]
pub struct ChainInfo {
    pub records: u64,
    pub covered: u64,
    /// Drift records after the last trusted checkpoint: not used.
    pub uncovered_drift_records: Vec<u64>,
}

impl From<&History> for ChainInfo {
    fn from(h: &History) -> Self {
        ChainInfo {
            records: h.records,
            covered: h.covered,
            uncovered_drift_records: h.uncovered.clone(),
        }
    }
}

pub const DRIFT_FORMAT: &str = "vouch-drift/1";

/// What `drift check` found.
#[derive(Debug, Clone, Serialize)]
pub struct CheckReport {
    pub format: &'static str,
    pub target: String,
    pub kind: TargetKind,
    pub result: CheckResult,
    pub counts: Counts,
    pub baseline: BaselineInfo,
    pub chain: ChainInfo,
    pub changes: Vec<Change>,
    pub unchecked: Vec<Unchecked>,
    /// This run's snapshot digest (recorded with `--record`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub record: Option<Written>,
    /// Items examined now, and bytes read.
    pub items: u64,
    pub bytes: u64,
}

/// `drift check`: verifies the chain with `keys`, reads the accepted
/// baseline, compares the target with it; with `record`, appends the
/// result as a `drift_check` record.
pub fn check(
    opts: &DriftOptions<'_>,
    keys: &TrustedKeys,
    record_with: Option<&SignerKey>,
) -> Result<CheckReport> {
    let history = record::history(opts.log, keys)?;
    let target = resolve_for_baseline(opts, &history)?;
    let (baseline, base) = read_baseline(opts.log, &history, &target)?;
    let rules = rules_of(&base, &target.name)?;
    if let Some(given) = load_rules(opts.rules)?
        && given.digest() != rules.digest()
    {
        return Err(target_err(
            &target.name,
            TargetProblem::RulesDiffer {
                given: given.digest(),
                baseline: rules.digest(),
            },
        ));
    }
    let now = take(&target, &rules, opts.progress)?;
    let changes = compare(&target, &base, &now, &rules);
    let counts = change::count(&changes);
    let result = if counts.total() > 0 {
        CheckResult::Drift
    } else if !now.problems.is_empty() {
        CheckResult::Incomplete
    } else {
        CheckResult::NoDrift
    };
    let mut report = CheckReport {
        format: DRIFT_FORMAT,
        target: target.name.clone(),
        kind: target.kind(),
        result,
        counts,
        baseline: BaselineInfo::from(&baseline),
        chain: ChainInfo::from(&history),
        changes,
        unchecked: unchecked(&now.problems),
        snapshot: None,
        record: None,
        items: now.snapshot.items.count(),
        bytes: now.bytes,
    };
    if let Some(key) = record_with {
        // The writer must hold the log: its checkpoints verify with this
        // key (the chain writer itself checks links, not signatures), and
        // the log is still the one just compared with.
        let own = record::history(opts.log, &signer_keys(key)?)?;
        if own.records != history.records {
            return Err(target_err(&target.name, TargetProblem::Raced));
        }
        let digest = snapshot::write(opts.log, &now.snapshot)?;
        let body = CheckBody {
            target: target.name.clone(),
            kind: target.kind(),
            baseline: baseline.snapshot.clone(),
            snapshot: digest.clone(),
            count: now.snapshot.items.count(),
            result,
            counts,
            unchecked: now.problems.len() as u64,
        };
        let (seq, covered) = record::append(
            opts.log,
            key,
            record::KIND_CHECK,
            to_value(&body)?,
            history.records,
            &target.name,
        )?;
        report.snapshot = Some(digest);
        report.record = Some(Written {
            seq,
            checkpoint_size: covered.checkpoint.checkpoint.size,
        });
    }
    Ok(report)
}

/// A target that is gone still has its name: a missing directory whose
/// name has a baseline is reported as missing (exit 2), not unsupported.
fn resolve_for_baseline(opts: &DriftOptions<'_>, history: &History) -> Result<Target> {
    match resolve(opts.target, opts.name) {
        Err(Error::DriftTarget {
            problem: TargetProblem::Missing,
            ..
        }) => {
            let name = opts
                .name
                .map_or_else(|| absolute(opts.target), str::to_owned);
            // A gone target with a baseline is "missing"; one that never
            // had a baseline is reported the same way, with its name.
            history.baseline(&name)?;
            Err(target_err(&name, TargetProblem::Missing))
        }
        other => other,
    }
}

fn absolute(arg: &str) -> String {
    std::path::absolute(arg).map_or_else(|_| arg.to_owned(), |p| p.display().to_string())
}
