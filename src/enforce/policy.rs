//! The wrap policy: which tool calls are allowed, asked about, or blocked.
//! (Skeleton: the parser and evaluation are being written.)

use super::error::PolicyError;
use serde::Serialize;
use std::path::Path;
use std::time::Instant;

/// What the policy says about one call. Ordered by strength:
/// `Allow < Ask < Block` (precedence BLOCK > ASK > ALLOW).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    Allow,
    Ask,
    Block,
}

/// The decision for one call and the rule that made it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Decision {
    pub action: Action,
    /// The id of the deciding rule, or `default`, `egress`, `limit:ID`.
    pub rule: String,
    /// One line for the model and the operator.
    pub reason: String,
}

/// Per-tool call counts for rate limits, kept by the wrapper.
#[derive(Debug, Default)]
pub struct RateState {}

/// A parsed, validated policy.
#[derive(Debug)]
pub struct Policy {
    digest: String,
}

impl Policy {
    /// Reads and parses a policy file.
    pub fn load(path: &Path) -> crate::Result<Policy> {
        let bytes = crate::fs::read_bounded(path, 1 << 20)?;
        let text = String::from_utf8(bytes).map_err(|_| {
            crate::Error::from(super::EnforceError::Policy(PolicyError {
                path: path.to_path_buf(),
                line: None,
                column: None,
                problem: super::PolicyProblem::Syntax("not UTF-8".into()),
            }))
        })?;
        Policy::parse(&text, path).map_err(|e| super::EnforceError::Policy(e).into())
    }

    /// Parses policy text read from `path` (named in errors).
    pub fn parse(text: &str, path: &Path) -> Result<Policy, PolicyError> {
        let _ = path;
        Ok(Policy {
            digest: format!("sha256:{}", crate::hex::encode(&sha256(text.as_bytes()))),
        })
    }

    /// `sha256:HEX` over the policy file's bytes, recorded with every decision.
    pub fn digest(&self) -> &str {
        &self.digest
    }

    /// The decision for a call of `tool` with `args` (the call's
    /// `arguments` object, or `{}` when it has none) at `now`.
    pub fn decide(
        &self,
        tool: &str,
        args: &serde_json::Value,
        rates: &mut RateState,
        now: Instant,
    ) -> Decision {
        let _ = (tool, args, rates, now);
        Decision {
            action: Action::Allow,
            rule: "default".into(),
            reason: "skeleton".into(),
        }
    }
}

fn sha256(bytes: &[u8]) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(bytes).into()
}
