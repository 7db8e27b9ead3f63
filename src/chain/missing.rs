//! Logs that should be there and are not: an auditor checkpoint whose log
//! is gone, and a pinned log (incremental state) that vanished, was
//! emptied or replaced. Each is reported as a failed log of its own.

use super::error::{ChainError, NamedBy};
use super::options::VerifyOptions;
use super::report::{Failure, LogReport, LogStatus};
use super::state::VerifyState;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// An auditor checkpoint whose origin matches no log means a whole log is
/// gone: that is reported as a failed log of its own.
pub(super) fn add_missing_logs(logs: &mut Vec<LogReport>, opts: &VerifyOptions) {
    let mut seen: HashSet<String> = logs.iter().filter_map(|l| l.origin.clone()).collect();
    for c in &opts.checkpoints {
        let origin = &c.checkpoint().origin;
        if !seen.insert(origin.clone()) {
            continue;
        }
        logs.push(missing_log_row(c.source(), origin, NamedBy::Checkpoint));
    }
}

/// Every log remembered in the state must be found again: a pinned log
/// that vanished, or whose file is now empty, a fragment or another log, is
/// reported (`truncated` when its file holds no records any more,
/// `missing_log` otherwise).
pub(super) fn add_missing_pins(logs: &mut Vec<LogReport>, previous: &VerifyState) {
    // Indexed once: a state of many logs is matched in linear time (a
    // search of every row per remembered log took minutes at 150,000).
    let present: HashSet<String> = logs.iter().filter_map(|l| l.origin.clone()).collect();
    let mut unnamed: HashMap<PathBuf, usize> = HashMap::new();
    for (i, l) in logs.iter().enumerate() {
        if l.origin.is_none() && l.status != LogStatus::Error {
            unnamed.entry(l.path.clone()).or_insert(i);
        }
    }
    for (origin, saved) in &previous.logs {
        if present.contains(origin) {
            continue;
        }
        let failure = |path: &Path, error| Failure {
            path: path.to_path_buf(),
            line: 0,
            offset: 0,
            seq: None,
            error,
            changed: None,
        };
        // The first row (in report order) of a pinned path that holds no
        // origin any more; each row is claimed by one remembered log.
        let claimed = saved
            .segments
            .iter()
            .filter_map(|s| unnamed.get(s.path.as_path()).copied())
            .min();
        if let Some(i) = claimed {
            let row = &mut logs[i];
            unnamed.remove(&row.path);
            row.status = LogStatus::Invalid;
            row.origin = Some(origin.clone());
            row.failure = Some(failure(
                &row.path,
                ChainError::Truncated {
                    records: row.records,
                    checkpoint_size: saved.records,
                },
            ));
            row.verified = None;
            continue;
        }
        let path = saved
            .segments
            .first()
            .map_or_else(PathBuf::new, |s| s.path.clone());
        logs.push(missing_log_row(&path, origin, NamedBy::State));
    }
}

/// The row of a log that should be there and is not (`missing_log`).
pub(super) fn missing_log_row(path: &Path, origin: &str, named_by: NamedBy) -> LogReport {
    LogReport {
        path: path.to_path_buf(),
        segments: Vec::new(),
        origin: Some(origin.to_owned()),
        status: LogStatus::Invalid,
        bytes: 0,
        records: 0,
        covered: 0,
        checkpoints: 0,
        failure: Some(Failure {
            path: path.to_path_buf(),
            line: 0,
            offset: 0,
            seq: None,
            error: ChainError::MissingLog {
                origin: origin.to_owned(),
                named_by,
            },
            changed: None,
        }),
        torn_tail: None,
        error: None,
        verified: None,
        resumed_from: None,
    }
}

/// `verify_bytes` checks one log: an auditor checkpoint of
/// another origin, or of this one when the log holds no records, fails it.
pub(super) fn mark_missing_origin(report: &mut LogReport, name: &Path, opts: &VerifyOptions) {
    let Some(missing) = opts
        .checkpoints
        .iter()
        .map(|c| &c.checkpoint().origin)
        .find(|origin| report.origin.as_deref() != Some(origin.as_str()))
        .cloned()
    else {
        return;
    };
    // The one log given has no records, or another origin.
    let size = opts
        .checkpoints
        .iter()
        .find(|c| c.checkpoint().origin == missing)
        .map_or(0, |c| c.checkpoint().size);
    let error = if report.records == 0 && size > 0 {
        ChainError::Truncated {
            records: 0,
            checkpoint_size: size,
        }
    } else {
        ChainError::MissingLog {
            origin: missing,
            named_by: super::error::NamedBy::Checkpoint,
        }
    };
    report.status = LogStatus::Invalid;
    report.failure.get_or_insert(Failure {
        path: name.to_path_buf(),
        line: 0,
        offset: 0,
        seq: None,
        error,
        changed: None,
    });
    report.verified = None;
}
