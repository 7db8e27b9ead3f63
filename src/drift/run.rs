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
    target_err(
        target,
        TargetProblem::Mcp {
            code: e.code(),
            message: e.to_string(),
        },
    )
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
                let message = if target.name == shown {
                    e.to_string()
                } else {
                    format!("{shown}: {e}")
                };
                target_err(
                    &target.name,
                    TargetProblem::Config {
                        code: e.code(),
                        message,
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

fn item_kind(kind: &str) -> Option<ItemKind> {
    Some(match kind {
        "tool" => ItemKind::Tool,
        "prompt" => ItemKind::Prompt,
        "resource" => ItemKind::Resource,
        "resource_template" => ItemKind::ResourceTemplate,
        _ => return None,
    })
}

fn op_kind(op: json::diff::Op) -> ChangeKind {
    match op {
        json::diff::Op::Added => ChangeKind::Added,
        json::diff::Op::Removed => ChangeKind::Removed,
        json::diff::Op::Changed => ChangeKind::Changed,
    }
}

fn keyed_change(item: String, kind: ChangeKind, fields: Vec<Field>) -> Change {
    Change {
        key: item.as_bytes().to_vec(),
        item,
        item_b64: None,
        change: kind,
        from: None,
        severity: None,
        expected: false,
        fields,
        from_key: None,
    }
}

fn config_changes(a: &Value, b: &Value) -> Vec<Change> {
    json::diff::diff(a, b)
        .into_iter()
        .map(|c| {
            let item = if c.pointer.is_empty() {
                "/".to_owned()
            } else {
                c.pointer.clone()
            };
            let mut ch = keyed_change(
                item,
                op_kind(c.op),
                vec![Field::plain("value", c.before, c.after)],
            );
            ch.key = c.pointer.into_bytes();
            ch
        })
        .collect()
}

fn mcp_changes(
    a: &[McpItem],
    b: &[McpItem],
    base_meta: &Map<String, Value>,
    now_meta: &Map<String, Value>,
) -> Vec<Change> {
    let mut out = Vec::new();
    for kind in [
        ItemKind::Tool,
        ItemKind::Prompt,
        ItemKind::Resource,
        ItemKind::ResourceTemplate,
    ] {
        let defs = |items: &[McpItem]| -> Vec<Value> {
            items
                .iter()
                .filter(|i| item_kind(&i.kind) == Some(kind))
                .map(|i| i.definition.clone())
                .collect()
        };
        for c in defdiff::diff_items(kind, &defs(a), &defs(b)) {
            let item = format!("{}:{}", kind.as_str(), c.key);
            let (ck, from) = match &c.change {
                ItemChangeKind::Added => (ChangeKind::Added, None),
                ItemChangeKind::Removed => (ChangeKind::Removed, None),
                ItemChangeKind::Changed => (ChangeKind::Changed, None),
                ItemChangeKind::Renamed { from } => (
                    ChangeKind::Renamed,
                    Some(format!("{}:{from}", kind.as_str())),
                ),
            };
            let fields = c
                .fields
                .iter()
                .map(|f| Field {
                    field: f.pointer.clone(),
                    before: f.before.clone(),
                    after: f.after.clone(),
                    reason: Some(f.reason.to_owned()),
                    severity: Some(severity_text(f.severity).to_owned()),
                    words: f.words.as_deref().map(json::diff::render_words),
                })
                .collect();
            let mut ch = keyed_change(item, ck, fields);
            ch.severity = Some(severity_text(c.severity).to_owned());
            ch.from_key = from.as_ref().map(|f| f.as_bytes().to_vec());
            ch.from = from;
            out.push(ch);
        }
    }
    // What the server says about itself: its instructions reach the model.
    let text = |m: &Map<String, Value>| {
        m.get("instructions")
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let (ia, ib) = (text(base_meta), text(now_meta));
    if ia != ib {
        let words = match (&ia, &ib) {
            (Some(x), Some(y)) => Some(json::diff::render_words(&json::diff::word_diff(x, y))),
            _ => None,
        };
        let kind = match (&ia, &ib) {
            (None, _) => ChangeKind::Added,
            (_, None) => ChangeKind::Removed,
            _ => ChangeKind::Changed,
        };
        let mut ch = keyed_change(
            "server:instructions".into(),
            kind,
            vec![Field {
                words,
                reason: Some("instructions_changed".into()),
                severity: Some("high".into()),
                ..Field::plain("instructions", ia.map(Value::String), ib.map(Value::String))
            }],
        );
        ch.severity = Some("high".into());
        out.push(ch);
    }
    for (member, item) in [("server_info", "server:info"), ("era", "server:protocol")] {
        let (x, y) = (base_meta.get(member), now_meta.get(member));
        if !jsondiff_eq(x, y) {
            let fields = json::diff::diff(x.unwrap_or(&Value::Null), y.unwrap_or(&Value::Null))
                .into_iter()
                .map(|c| Field {
                    severity: Some("low".into()),
                    ..Field::plain(
                        if c.pointer.is_empty() {
                            "/".into()
                        } else {
                            c.pointer
                        },
                        c.before,
                        c.after,
                    )
                })
                .collect();
            let mut ch = keyed_change(item.into(), ChangeKind::Changed, fields);
            ch.severity = Some("low".into());
            out.push(ch);
        }
    }
    out
}

fn jsondiff_eq(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a, b) {
        (Some(x), Some(y)) => json::diff::json_eq(x, y),
        (None, None) => true,
        _ => false,
    }
}

fn severity_text(s: defdiff::Severity) -> &'static str {
    match s {
        defdiff::Severity::Low => "low",
        defdiff::Severity::Medium => "medium",
        defdiff::Severity::High => "high",
    }
}

/// The differences from `base` to `now`.
pub fn compare(target: &Target, base: &Snapshot, now: &Now, rules: &Rules) -> Vec<Change> {
    match (&target.spec, &base.items, &now.snapshot.items) {
        (TargetSpec::Dir(root), Items::Dir(a), Items::Dir(b)) => {
            dirdiff::compare(a, b, &now.problems, rules, root)
        }
        (_, Items::Config(a), Items::Config(b)) => config_changes(a, b),
        (_, Items::Mcp(a), Items::Mcp(b)) => mcp_changes(a, b, &base.meta, &now.snapshot.meta),
        _ => Vec::new(),
    }
}

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

/// What `drift accept` did.
#[derive(Debug, Clone, Serialize)]
pub struct AcceptReport {
    pub format: &'static str,
    pub target: String,
    pub kind: TargetKind,
    pub previous: BaselineInfo,
    /// The new baseline.
    pub snapshot: String,
    pub count: u64,
    pub accepted: Vec<Change>,
    pub counts: Counts,
    /// Differences not accepted (still drift).
    pub remaining: u64,
    pub reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub record: Option<Written>,
    pub unchecked: Vec<Unchecked>,
}

/// `drift accept`: makes the target as it is now (or only the differences
/// selected by `only`) the new baseline, recorded with `reason`. With new
/// `--rules`, every difference is accepted (no `only`).
pub fn accept(
    opts: &DriftOptions<'_>,
    key: &SignerKey,
    only: &[String],
    reason: &str,
) -> Result<AcceptReport> {
    if reason.trim().is_empty() {
        return Err(Error::MissingOption {
            option: "--reason TEXT",
            needed_for: "drift accept",
        });
    }
    let keys = signer_keys(key)?;
    let history = record::history(opts.log, &keys)?;
    let target = resolve_for_baseline(opts, &history)?;
    let (baseline, base) = read_baseline(opts.log, &history, &target)?;
    let old_rules = rules_of(&base, &target.name)?;
    let new_rules = load_rules(opts.rules)?;
    let rules_change = new_rules
        .as_ref()
        .is_some_and(|r| r.digest() != old_rules.digest());
    if rules_change && !only.is_empty() {
        return Err(target_err(&target.name, TargetProblem::RulesWithOnly));
    }
    let rules = new_rules.unwrap_or(old_rules);
    let now = take(&target, &rules, opts.progress)?;
    let changes = compare(&target, &base, &now, &rules);
    let picked: Vec<&Change> = if only.is_empty() {
        changes.iter().collect()
    } else {
        let keys: Vec<Vec<u8>> = only.iter().map(|o| only_key(target.kind(), o)).collect();
        for (o, k) in only.iter().zip(&keys) {
            let hit = changes.iter().any(|c| {
                dirdiff::selected(&c.key, std::slice::from_ref(k))
                    || c.from_key
                        .as_ref()
                        .is_some_and(|f| dirdiff::selected(f, std::slice::from_ref(k)))
            });
            if !hit {
                return Err(target_err(
                    &target.name,
                    TargetProblem::NoSuchChange(o.clone()),
                ));
            }
        }
        changes
            .iter()
            .filter(|c| {
                dirdiff::selected(&c.key, &keys)
                    || c.from_key
                        .as_ref()
                        .is_some_and(|f| dirdiff::selected(f, &keys))
            })
            .collect()
    };
    let accepted: Vec<Change> = picked.iter().map(|c| (*c).clone()).collect();
    let counts = change::count(&accepted);
    let remaining = change::count(&changes).total() - counts.total();
    let mut report = AcceptReport {
        format: DRIFT_FORMAT,
        target: target.name.clone(),
        kind: target.kind(),
        previous: BaselineInfo::from(&baseline),
        snapshot: baseline.snapshot.clone(),
        count: baseline.count,
        accepted,
        counts,
        remaining,
        reason: reason.to_owned(),
        record: None,
        unchecked: unchecked(&now.problems),
    };
    if picked.is_empty() && !rules_change {
        return Ok(report);
    }
    let items = match (&base.items, &now.snapshot.items) {
        (Items::Dir(a), Items::Dir(b)) => {
            let mut merged = dirdiff::apply(a, b, &picked);
            merged.retain(|e| rules.records(&e.path));
            Items::Dir(merged)
        }
        (Items::Config(a), Items::Config(b)) => Items::Config(apply_config(a, b, &picked)),
        (Items::Mcp(a), Items::Mcp(b)) => Items::Mcp(apply_mcp(a, b, &picked)),
        (_, other) => other.clone(),
    };
    // What a server says about itself is accepted only when selected.
    let keep_meta = target.kind() == TargetKind::Mcp
        && !only.is_empty()
        && !picked.iter().any(|c| c.key.starts_with(b"server:"));
    let new = Snapshot {
        target: target.name.clone(),
        meta: if keep_meta {
            base.meta.clone()
        } else {
            now.snapshot.meta.clone()
        },
        items,
    };
    let digest = snapshot::write(opts.log, &new)?;
    let body = AcceptBody {
        target: target.name.clone(),
        kind: target.kind(),
        snapshot: digest.clone(),
        count: new.items.count(),
        previous: baseline.snapshot.clone(),
        reason: reason.to_owned(),
        only: (!only.is_empty()).then(|| only.to_vec()),
        accepted: counts,
    };
    let (seq, covered) = record::append(
        opts.log,
        key,
        record::KIND_ACCEPT,
        to_value(&body)?,
        history.records,
        &target.name,
    )?;
    report.snapshot = digest;
    report.count = body.count;
    report.record = Some(Written {
        seq,
        checkpoint_size: covered.checkpoint.checkpoint.size,
    });
    Ok(report)
}

/// A `--only` value as the raw key it selects: a path relative to the
/// target (without `./` or a trailing `/`); a JSON Pointer (a leading `/`
/// added if missing); `KIND:KEY` for MCP (a bare name is a tool).
fn only_key(kind: TargetKind, o: &str) -> Vec<u8> {
    match kind {
        TargetKind::Dir => {
            let t = o.trim_start_matches("./");
            let t = t.strip_suffix('/').unwrap_or(t);
            t.as_bytes().to_vec()
        }
        TargetKind::Config if o.starts_with('/') || o.is_empty() => o.as_bytes().to_vec(),
        TargetKind::Config => format!("/{o}").into_bytes(),
        TargetKind::Mcp => {
            let known = [
                "tool:",
                "prompt:",
                "resource:",
                "resource_template:",
                "server:",
            ];
            if known.iter().any(|k| o.starts_with(k)) {
                o.as_bytes().to_vec()
            } else {
                format!("tool:{o}").into_bytes()
            }
        }
    }
}

/// The baseline document with the values at the accepted pointers taken
/// from now.
fn apply_config(base: &Value, now: &Value, accept: &[&Change]) -> Value {
    let mut doc = base.clone();
    let mut picked: Vec<&[u8]> = accept.iter().map(|c| c.key.as_slice()).collect();
    // Deepest first within a container, so array removals do not shift
    // the indexes of later ones; then each pointer is set or removed.
    picked.sort_by(|a, b| b.cmp(a));
    for key in picked {
        let Ok(ptr) = std::str::from_utf8(key) else {
            continue;
        };
        if ptr.is_empty() {
            doc = now.clone();
            continue;
        }
        let new = now.pointer(ptr).cloned();
        set_pointer(&mut doc, ptr, new);
    }
    doc
}

fn set_pointer(doc: &mut Value, ptr: &str, new: Option<Value>) {
    let Some(tokens) = pointer::split_pointer(ptr) else {
        return;
    };
    let Some((last, parents)) = tokens.split_last() else {
        return;
    };
    let mut cur = doc;
    for t in parents {
        cur = match cur {
            Value::Object(m) => match m.get_mut(t) {
                Some(v) => v,
                None => return,
            },
            Value::Array(a) => match t.parse::<usize>().ok().and_then(|i| a.get_mut(i)) {
                Some(v) => v,
                None => return,
            },
            _ => return,
        };
    }
    match (cur, new) {
        (Value::Object(m), Some(v)) => {
            m.insert(last.clone(), v);
        }
        (Value::Object(m), None) => {
            m.remove(last);
        }
        (Value::Array(a), Some(v)) => match last.parse::<usize>() {
            Ok(i) if i < a.len() => a[i] = v,
            Ok(i) if i == a.len() => a.push(v),
            _ => {}
        },
        (Value::Array(a), None) => {
            if let Ok(i) = last.parse::<usize>()
                && i < a.len()
            {
                a.remove(i);
            }
        }
        _ => {}
    }
}

/// The baseline definitions with the accepted ones taken from now.
fn apply_mcp(base: &[McpItem], now: &[McpItem], accept: &[&Change]) -> Vec<McpItem> {
    let key = |i: &McpItem| format!("{}:{}", i.kind, i.key).into_bytes();
    let mut map: std::collections::BTreeMap<Vec<u8>, McpItem> =
        base.iter().map(|i| (key(i), i.clone())).collect();
    let now_by: std::collections::HashMap<Vec<u8>, &McpItem> =
        now.iter().map(|i| (key(i), i)).collect();
    for c in accept {
        for k in std::iter::once(&c.key).chain(c.from_key.as_ref()) {
            match now_by.get(k) {
                Some(i) => {
                    map.insert(k.clone(), (*i).clone());
                }
                None => {
                    map.remove(k);
                }
            }
        }
    }
    let mut items: Vec<McpItem> = map.into_values().collect();
    items.sort_by(|a, b| a.order().cmp(&b.order()));
    items
}

/// One row of `drift history`.
#[derive(Debug, Clone, Serialize)]
pub struct HistoryRow {
    pub seq: u64,
    pub ts: String,
    pub record: &'static str,
    pub target: String,
    pub kind: TargetKind,
    pub snapshot: String,
    pub count: u64,
    /// Snapshot: whether it became the baseline. Check: its result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<CheckResult>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counts: Option<Counts>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub only: Option<Vec<String>>,
}

/// A target and its accepted baseline.
#[derive(Debug, Clone, Serialize)]
pub struct TargetBaseline {
    pub target: String,
    pub baseline: BaselineInfo,
}

/// What `drift history` shows.
#[derive(Debug, Clone, Serialize)]
pub struct HistoryReport {
    pub format: &'static str,
    pub rows: Vec<HistoryRow>,
    /// The accepted baseline of each target shown.
    pub baselines: Vec<TargetBaseline>,
    pub chain: ChainInfo,
}

/// `drift history`: the covered drift records of a verified log.
pub fn history(log: &Path, keys: &TrustedKeys, target: Option<&str>) -> Result<HistoryReport> {
    let h = record::history(log, keys)?;
    let mut rows = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for d in &h.events {
        if target.is_some_and(|t| t != d.event.target()) {
            continue;
        }
        if !names.iter().any(|n| n == d.event.target()) {
            names.push(d.event.target().to_owned());
        }
        let mut row = HistoryRow {
            seq: d.seq,
            ts: d.ts.clone(),
            record: d.event.kind_name(),
            target: d.event.target().to_owned(),
            kind: TargetKind::Dir,
            snapshot: String::new(),
            count: 0,
            baseline: None,
            result: None,
            counts: None,
            reason: None,
            only: None,
        };
        match &d.event {
            record::Event::Snapshot(b) => {
                row.kind = b.kind;
                row.snapshot.clone_from(&b.snapshot);
                row.count = b.count;
                row.baseline = Some(b.baseline);
            }
            record::Event::Accept(b) => {
                row.kind = b.kind;
                row.snapshot.clone_from(&b.snapshot);
                row.count = b.count;
                row.counts = Some(b.accepted);
                row.reason = Some(b.reason.clone());
                row.only.clone_from(&b.only);
            }
            record::Event::Check(b) => {
                row.kind = b.kind;
                row.snapshot.clone_from(&b.snapshot);
                row.count = b.count;
                row.result = Some(b.result);
                row.counts = Some(b.counts);
            }
        }
        rows.push(row);
    }
    let mut baselines = Vec::new();
    for n in names {
        if let Some(b) = h.baseline(&n)? {
            baselines.push(TargetBaseline {
                target: n,
                baseline: BaselineInfo::from(&b),
            });
        }
    }
    Ok(HistoryReport {
        format: DRIFT_FORMAT,
        rows,
        baselines,
        chain: ChainInfo::from(&h),
    })
}

/// The last line of `drift check --format ndjson`.
#[derive(Debug, Clone, Serialize)]
pub struct CheckSummary<'a> {
    pub format: &'static str,
    pub summary: bool,
    pub target: &'a str,
    pub result: CheckResult,
    pub counts: Counts,
    pub baseline: &'a BaselineInfo,
    pub unchecked: usize,
    pub items: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub record: Option<&'a Written>,
}

impl<'a> CheckSummary<'a> {
    pub fn of(r: &'a CheckReport) -> Self {
        CheckSummary {
            format: DRIFT_FORMAT,
            summary: true,
            target: &r.target,
            result: r.result,
            counts: r.counts,
            baseline: &r.baseline,
            unchecked: r.unchecked.len(),
            items: r.items,
            record: r.record.as_ref(),
        }
    }
}

/// The name a target argument has in the chain, whether or not it exists now.
fn name_of(arg: &str, name: Option<&str>) -> Result<String> {
    match resolve(arg, name) {
        Ok(t) => Ok(t.name),
        Err(Error::DriftTarget {
            problem: TargetProblem::Missing,
            ..
        }) => Ok(name.map_or_else(|| absolute(arg), str::to_owned)),
        Err(e) => Err(e),
    }
}

/// `drift export --format mtree`: the accepted baseline of a directory
/// target as a BSD mtree spec, after verifying the chain with `keys`.
pub fn export_mtree(
    log: &Path,
    keys: &TrustedKeys,
    arg: &str,
    name: Option<&str>,
) -> Result<Vec<u8>> {
    let history = record::history(log, keys)?;
    let name = name_of(arg, name)?;
    let Some(b) = history.baseline(&name)? else {
        return Err(target_err(&name, TargetProblem::NoBaseline));
    };
    if b.kind != TargetKind::Dir {
        return Err(target_err(
            &name,
            TargetProblem::KindChanged {
                found: "dir",
                baseline: b.kind.as_str(),
            },
        ));
    }
    let snap = snapshot::read(log, &b.snapshot, b.seq, &name, b.kind)?;
    let Items::Dir(entries) = &snap.items else {
        return Err(target_err(&name, TargetProblem::Unsupported));
    };
    let mut out = Vec::new();
    super::mtree::export(entries, &mut out).map_err(|e| Error::io(log, e))?;
    Ok(out)
}

/// What `drift import` did.
#[derive(Debug, Clone, Serialize)]
pub struct ImportReport {
    pub target: String,
    pub snapshot: String,
    pub count: u64,
    /// The baseline it replaced (none: it is the first).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous: Option<BaselineInfo>,
    pub record: Written,
}

/// `drift import --format mtree`: makes a BSD mtree spec (every entry
/// with type, mode, uid, gid; files with size and SHA-256) the baseline of
/// a directory target: its first baseline, or an acceptance with `reason`.
pub fn import_mtree(
    opts: &DriftOptions<'_>,
    key: &SignerKey,
    spec: &[u8],
    reason: Option<&str>,
) -> Result<ImportReport> {
    let name = name_of(opts.target, opts.name)?;
    let rules = load_rules(opts.rules)?.unwrap_or_default();
    let mut entries = super::mtree::import(spec).map_err(|e| {
        target_err(
            &name,
            TargetProblem::Config {
                code: e.code(),
                message: format!("mtree spec: {e}"),
            },
        )
    })?;
    entries.retain(|e| rules.records(&e.path));
    let keys = signer_keys(key)?;
    let history = record::history_or_empty(opts.log, &keys)?;
    let previous = history.baseline(&name)?;
    let mut meta = Map::new();
    meta.insert("rules".into(), rules.to_json());
    meta.insert("rules_digest".into(), rules.digest().into());
    meta.insert("imported".into(), "mtree".into());
    let snap = Snapshot {
        target: name.clone(),
        meta,
        items: Items::Dir(entries),
    };
    let count = snap.items.count();
    let (kind, body) = match &previous {
        None => (
            record::KIND_SNAPSHOT,
            to_value(&SnapshotBody {
                target: name.clone(),
                kind: TargetKind::Dir,
                snapshot: String::new(),
                count,
                baseline: true,
            })?,
        ),
        Some(p) => {
            let Some(reason) = reason.filter(|r| !r.trim().is_empty()) else {
                return Err(Error::MissingOption {
                    option: "--reason TEXT",
                    needed_for: "importing over an existing baseline",
                });
            };
            if p.kind != TargetKind::Dir {
                return Err(target_err(
                    &name,
                    TargetProblem::KindChanged {
                        found: "dir",
                        baseline: p.kind.as_str(),
                    },
                ));
            }
            (
                record::KIND_ACCEPT,
                to_value(&AcceptBody {
                    target: name.clone(),
                    kind: TargetKind::Dir,
                    snapshot: String::new(),
                    count,
                    previous: p.snapshot.clone(),
                    reason: reason.to_owned(),
                    only: None,
                    accepted: Counts::default(),
                })?,
            )
        }
    };
    let digest = snapshot::write(opts.log, &snap)?;
    let mut body = body;
    body["snapshot"] = Value::String(digest.clone());
    let (seq, covered) = record::append(opts.log, key, kind, body, history.records, &name)?;
    Ok(ImportReport {
        target: name,
        snapshot: digest,
        count,
        previous: previous.as_ref().map(BaselineInfo::from),
        record: Written {
            seq,
            checkpoint_size: covered.checkpoint.checkpoint.size,
        },
    })
}
