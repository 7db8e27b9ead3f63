//! The reports of `vouch tsa verify` and `vouch tsa request`, rendered by
//! the binary (`vouch tsa show` renders [`super::TokenInfo`] itself).

use super::info::TokenInfo;
use super::request::TimeStampRequest;
use super::time::Timestamp;
use super::verify::VerifiedTimestamp;
use serde::Serialize;
use std::path::Path;

/// `vouch tsa verify TOKEN --format json` for one token that verified.
#[derive(Debug, Clone, Serialize)]
pub struct TokenVerifyReport<'a> {
    /// Always true: a token that fails is reported as an error.
    pub valid: bool,
    pub token: String,
    pub timestamp: &'a VerifiedTimestamp,
}

impl<'a> TokenVerifyReport<'a> {
    /// The report on the token read from `path`.
    pub fn new(path: &Path, timestamp: &'a VerifiedTimestamp) -> Self {
        TokenVerifyReport {
            valid: true,
            token: path.display().to_string(),
            timestamp,
        }
    }
}

/// One token of a batch `vouch tsa verify A B ...`.
#[derive(Debug, Clone, Serialize)]
pub struct BatchRow {
    pub token: String,
    pub valid: bool,
    /// For a valid token: its genTime and the signer's subject.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gen_time: Option<Timestamp>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tsa: Option<String>,
    /// For a token that failed: the reason code and message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// 0 valid, 1 rejected, 2 could not be checked (e.g. unreadable).
    #[serde(skip)]
    pub exit_code: u8,
}

impl BatchRow {
    /// The row for the token at `path` and what checking it gave.
    pub fn new(path: &Path, result: &Result<VerifiedTimestamp, crate::Error>) -> Self {
        let token = path.display().to_string();
        match result {
            Ok(v) => BatchRow {
                token,
                valid: true,
                gen_time: Some(v.gen_time()),
                tsa: Some(v.signer().subject.clone()),
                code: None,
                message: None,
                exit_code: 0,
            },
            Err(e) => BatchRow {
                token,
                valid: false,
                gen_time: None,
                tsa: None,
                code: Some(e.code()),
                message: Some(e.to_string()),
                exit_code: if e.is_rejection() { 1 } else { 2 },
            },
        }
    }
}

/// `vouch tsa verify A B ... --format json`: one row per token, in the
/// order given; the worst row decides the exit code.
#[derive(Debug, Clone, Serialize)]
pub struct BatchReport {
    pub results: Vec<BatchRow>,
    pub exit_code: u8,
}

impl BatchReport {
    pub fn new(results: Vec<BatchRow>) -> Self {
        let exit_code = results.iter().map(|r| r.exit_code).max().unwrap_or(0);
        BatchReport { results, exit_code }
    }
}

/// `vouch tsa request --format json`: what was written.
#[derive(Debug, Clone, Serialize)]
pub struct RequestReport {
    /// Where the response was written.
    pub out: String,
    /// Whether the response was verified before it was written.
    pub verified: bool,
    pub gen_time: Option<Timestamp>,
    /// The nonce sent (hex), if any.
    pub nonce: Option<String>,
    pub serial: Option<String>,
}

impl RequestReport {
    /// The report on the response `info` to `request`, written to `out`.
    pub fn new(out: &Path, verified: bool, request: &TimeStampRequest, info: &TokenInfo) -> Self {
        RequestReport {
            out: out.display().to_string(),
            verified,
            gen_time: info.tst_info.as_ref().map(|t| t.gen_time),
            nonce: request.nonce().map(crate::hex::encode),
            serial: info.tst_info.as_ref().map(|t| t.serial.clone()),
        }
    }
}
