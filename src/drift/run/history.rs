//! The drift history of a log (every snapshot, check and acceptance) and the one-line summary of a check.

use super::*;

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
    // The target by the name the other drift commands give it (a relative
    // path is the canonical absolute path), unless it is recorded as given.
    let wanted = match target {
        None => None,
        Some(t) if h.events.iter().any(|d| d.event.target() == t) => Some(t.to_owned()),
        Some(t) => Some(super::mtree_io::name_of(t, None).unwrap_or_else(|_| t.to_owned())),
    };
    let target = wanted.as_deref();
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
    if let Some(t) = target
        && rows.is_empty()
    {
        let mut recorded: Vec<&str> = h.events.iter().map(|d| d.event.target()).collect();
        recorded.sort_unstable();
        recorded.dedup();
        return Err(target_err(
            t,
            TargetProblem::NotRecorded {
                recorded: recorded.len(),
            },
        ));
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
