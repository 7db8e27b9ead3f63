//! The machine-readable anchor verify report (vouch-anchor-verify JSON), built from the verdicts.

use super::*;

/// The `vouch anchor verify --format json` document, rendered by the binary.
#[derive(Debug, Clone, Serialize)]
pub struct AnchorVerifyReport {
    pub format: &'static str,
    pub logs: Vec<AnchoredLogDocument>,
    pub missing_logs: Vec<MissingLog>,
    pub problems: Vec<PathProblem>,
    /// With `--state`: whether it was saved (a state that could not be
    /// saved makes the exit code 2 unless something was rejected).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state_saved: Option<bool>,
    pub exit_code: u8,
}

/// A path that could not be examined.
#[derive(Debug, Clone, Serialize)]
pub struct PathProblem {
    pub path: String,
    pub message: String,
}

/// One log in an [`AnchorVerifyReport`].
#[derive(Debug, Clone, Serialize)]
pub struct AnchoredLogDocument {
    pub log: AnchoredLogReport,
    pub verdict: AnchorVerdict,
    pub truncation_checked: bool,
    pub not_established: Vec<String>,
    pub listed: Vec<ListedTargetReport>,
    pub anchors: Vec<AnchorCheckReport>,
    pub exit_code: u8,
}

/// One listed target in an [`AnchoredLogDocument`].
#[derive(Debug, Clone, Serialize)]
pub struct ListedTargetReport {
    pub target: String,
    pub listed: bool,
    pub objects: usize,
    pub reason: Option<&'static str>,
    pub message: Option<String>,
}

/// The log part of an [`AnchoredLogDocument`].
#[derive(Debug, Clone, Serialize)]
pub struct AnchoredLogReport {
    pub path: String,
    pub segments: Vec<String>,
    pub origin: Option<String>,
    pub status: LogStatus,
    pub records: u64,
    pub reason: Option<&'static str>,
    pub failure: Option<LogFailureReport>,
    pub error: Option<String>,
}

/// Where the log first failed, in an [`AnchoredLogReport`].
#[derive(Debug, Clone, Serialize)]
pub struct LogFailureReport {
    pub reason: &'static str,
    pub seq: Option<u64>,
    pub message: String,
}

/// One checked anchor, in an [`AnchoredLogDocument`].
#[derive(Debug, Clone, Serialize)]
pub struct AnchorCheckReport {
    /// `record` or `listing`.
    pub source: &'static str,
    pub record_seq: Option<u64>,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub location: String,
    pub size: Option<u64>,
    /// Hex root.
    pub root: Option<String>,
    pub found: BTreeMap<&'static str, String>,
    /// `verified`, `not_checked`, `rejected` or `error`.
    pub status: &'static str,
    pub reason: Option<&'static str>,
    pub message: String,
}

impl From<&AnchorCheck> for AnchorCheckReport {
    fn from(c: &AnchorCheck) -> Self {
        AnchorCheckReport {
            source: c.source.as_str(),
            record_seq: c.source.record_seq(),
            kind: c.kind,
            location: c.location.clone(),
            size: c.size,
            root: c.root.map(|r| crate::hex::encode(&r)),
            found: c.outcome.found().iter().cloned().collect(),
            status: c.outcome.status(),
            reason: c.outcome.reason(),
            message: c.outcome.message(),
        }
    }
}

impl From<&AnchorReport> for AnchoredLogDocument {
    fn from(r: &AnchorReport) -> Self {
        AnchoredLogDocument {
            log: AnchoredLogReport {
                path: r.log.path.display().to_string(),
                segments: r
                    .log
                    .segments
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect(),
                origin: r.log.origin.clone(),
                status: r.log.status,
                records: r.log.records,
                reason: r.log.reason(),
                failure: r.log.failure.as_ref().map(|f| LogFailureReport {
                    reason: f.error.code(),
                    seq: f.seq,
                    message: f.error.to_string(),
                }),
                error: r.log.error.clone(),
            },
            verdict: r.verdict(),
            truncation_checked: r.truncation_checked(),
            not_established: r.not_established(),
            listed: r
                .listed
                .iter()
                .map(|l| ListedTargetReport {
                    target: l.target.clone(),
                    listed: l.error.is_none(),
                    objects: l.objects,
                    reason: l.error.as_ref().map(Error::code),
                    message: l.error.as_ref().map(Error::to_string),
                })
                .collect(),
            anchors: r.checks.iter().map(AnchorCheckReport::from).collect(),
            exit_code: r.exit_code(),
        }
    }
}

impl From<&AnchorFleet> for AnchorVerifyReport {
    fn from(f: &AnchorFleet) -> Self {
        AnchorVerifyReport {
            format: ANCHOR_VERIFY_FORMAT,
            logs: f.logs.iter().map(AnchoredLogDocument::from).collect(),
            missing_logs: f.missing.clone(),
            state_saved: None,
            problems: f
                .problems
                .iter()
                .map(|(p, m)| PathProblem {
                    path: p.display().to_string(),
                    message: m.clone(),
                })
                .collect(),
            exit_code: f.exit_code(),
        }
    }
}
