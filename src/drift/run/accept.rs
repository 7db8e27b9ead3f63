//! Accepting differences into a new baseline: all of them, or only some (--only), applied to the baseline's items.

use super::*;

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
pub(super) fn only_key(kind: TargetKind, o: &str) -> Vec<u8> {
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
pub(super) fn apply_config(base: &Value, now: &Value, accept: &[&Change]) -> Value {
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

pub(super) fn set_pointer(doc: &mut Value, ptr: &str, new: Option<Value>) {
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
pub(super) fn apply_mcp(base: &[McpItem], now: &[McpItem], accept: &[&Change]) -> Vec<McpItem> {
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
