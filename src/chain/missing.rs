//! Logs that should be there and are not: an auditor checkpoint whose log
//! is gone, and a pinned log (incremental state) that vanished, was
//! emptied or replaced. Each is reported as a failed log of its own.

use super::error::ChainError;
use super::options::VerifyOptions;
use super::report::{Failure, LogReport, LogStatus};
use super::state::VerifyState;
use std::path::{Path, PathBuf};

/// An auditor checkpoint whose origin matches no log means a whole log is
/// gone: that is reported as a failed log of its own.
pub(super) fn add_missing_logs(logs: &mut Vec<LogReport>, opts: &VerifyOptions) {
    let mut seen = Vec::new();
    for c in &opts.checkpoints {
        let origin = &c.checkpoint().origin;
        if seen.contains(origin)
            || logs
                .iter()
                .any(|l| l.origin.as_deref() == Some(origin.as_str()))
        {
            continue;
        }
        seen.push(origin.clone());
        logs.push(missing_log_row(c.source(), origin));
    }
}

/// Every log remembered in the state must be found again: a pinned log
/// that vanished, or whose file is now empty, a fragment or another log, is
/// reported (`truncated` when its file holds no records any more,
/// `missing_log` otherwise).
pub(super) fn add_missing_pins(logs: &mut Vec<LogReport>, previous: &VerifyState) {
    for (origin, saved) in &previous.logs {
        if logs
            .iter()
            .any(|l| l.origin.as_deref() == Some(origin.as_str()))
        {
            continue;
        }
        let pinned_paths: Vec<&Path> = saved.segments.iter().map(|s| s.path.as_path()).collect();
        let failure = |path: &Path, error| Failure {
            path: path.to_path_buf(),
            line: 0,
            offset: 0,
            seq: None,
            error,
        };
        if let Some(row) = logs.iter_mut().find(|l| {
            l.origin.is_none()
                && l.status != LogStatus::Error
                && pinned_paths.contains(&l.path.as_path())
        }) {
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
        let path = pinned_paths
            .first()
            .map_or_else(PathBuf::new, |p| p.to_path_buf());
        logs.push(missing_log_row(&path, origin));
    }
}

/// The row of a log that should be there and is not (`missing_log`).
fn missing_log_row(path: &Path, origin: &str) -> LogReport {
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
            },
        }),
        torn_tail: None,
        error: None,
        verified: None,
        resumed_from: None,
    }
}
