//! BSD mtree specs: a baseline exported as a spec, and a spec imported as a baseline.

use super::*;

/// The name a target argument has in the chain, whether or not it exists now.
pub(super) fn name_of(arg: &str, name: Option<&str>) -> Result<String> {
    match resolve(arg, name) {
        Ok(t) => Ok(t.name),
        Err(Error::DriftTarget {
            problem: TargetProblem::Missing,
            ..
        }) => Ok(name.map_or_else(|| absolute(arg), str::to_owned)),
        Err(e) => Err(e),
    }
}

/// `drift export --spec-format mtree`: the accepted baseline of a directory
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
    super::super::mtree::export(entries, &mut out).map_err(|e| Error::io(log, e))?;
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

/// `drift import --spec-format mtree`: makes a BSD mtree spec (every entry
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
    let mut entries = super::super::mtree::import(spec)
        .map_err(|e| target_err(&name, TargetProblem::Mtree(Box::new(e))))?;
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
