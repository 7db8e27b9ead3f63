//! The signed statement of a stamp run (docs/FORMAT.md §16.3): an in-toto
//! Statement v1 whose predicate (`https://vouch.dev/stamp/v1`) carries the
//! Merkle root over the run's files, their count, the leaf scheme, the
//! run's metadata and, when the run was recorded, the chain log and seq.
//! It travels in a DSSE envelope (payload type
//! `application/vnd.in-toto+json`), signed over the DSSE PAE.

use super::entry::{Entry, LEAF_SCHEME};
use crate::files::path;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub const STATEMENT_TYPE: &str = "https://in-toto.io/Statement/v1";
pub const PREDICATE_TYPE: &str = "https://vouch.dev/stamp/v1";
pub const PAYLOAD_TYPE: &str = "application/vnd.in-toto+json";
/// The subject's name when the statement lists only the root.
pub const ROOT_SUBJECT: &str = "vouch-stamp-root";
/// Runs of at most this many files list every file as a subject by
/// default (`--subjects auto`); larger runs list only the root.
pub const AUTO_SUBJECTS_MAX: usize = 1000;
/// Most metadata pairs, and the longest key and value.
pub const MAX_META: usize = 64;
pub const MAX_META_KEY: usize = 64;
pub const MAX_META_VALUE: usize = 4096;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Statement {
    #[serde(rename = "_type")]
    pub type_: String,
    pub subject: Vec<Subject>,
    #[serde(rename = "predicateType")]
    pub predicate_type: String,
    pub predicate: Predicate,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Subject {
    pub name: String,
    pub digest: BTreeMap<String, String>,
}

/// Which subjects a statement lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SubjectMode {
    /// One subject per stamped entry: its path and SHA-256.
    Files,
    /// One subject, [`ROOT_SUBJECT`], whose digest is the Merkle root.
    Root,
}

/// A PATH of the run: its stamped path (absent for the base itself) and
/// whether it was a directory (whose later additions `stamp verify`
/// reports as `extra`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputJson {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_b64: Option<String>,
    #[serde(rename = "type")]
    pub kind: InputKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InputKind {
    Dir,
    File,
    Stream,
}

/// The chain record this statement was written as.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogRef {
    pub origin: String,
    pub seq: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Predicate {
    /// `vouch-stamp-leaf/1`.
    pub leaf_scheme: String,
    /// Hex RFC 6962 root over the entries' leaves.
    pub root: String,
    /// Number of entries (leaves).
    pub count: u64,
    pub subjects: SubjectMode,
    pub inputs: Vec<InputJson>,
    /// Paths under the inputs that the run itself writes (its receipt, its
    /// log and the log's tree cache): never stamped, never `extra`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub excluded: Vec<InputJson>,
    /// The run stamped symlinks to regular files as those files
    /// (`--follow-symlinks`); verify then follows such a link, inside the
    /// base only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub follow_symlinks: bool,
    /// Files that were meant to be stamped and could not be (the receipt
    /// names them).
    pub left_out: u64,
    pub meta: BTreeMap<String, String>,
    /// The signer's clock when it signed: a claim, not a proven time.
    pub signed_at: String,
    /// The signing key, `<name>+<%08x key id>`; its name is the origin.
    pub signer: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<LogRef>,
    /// Hex SHA-256 of the SPKI DER of the ECDSA P-256 key whose signature
    /// the time-stamp token covers, when the run was exported with
    /// `--sigstore-key` (that key is pinned by this signed statement).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sigstore_key: Option<String>,
    /// The vouch version that made it.
    pub tool: String,
}

/// Why a metadata pair is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MetaProblem {
    #[error("expected KEY=VALUE")]
    NoEquals,
    #[error("the key must be 1-{MAX_META_KEY} of a-z 0-9 _ . -")]
    BadKey,
    #[error("the value must be at most {MAX_META_VALUE} bytes with no control characters")]
    BadValue,
    #[error("the key is given twice")]
    Duplicate,
    #[error("more than {MAX_META} pairs")]
    TooMany,
}

/// Parses `--meta KEY=VALUE` pairs.
pub fn parse_meta(pairs: &[String]) -> Result<BTreeMap<String, String>, (String, MetaProblem)> {
    let mut out = BTreeMap::new();
    if pairs.len() > MAX_META {
        return Err((String::new(), MetaProblem::TooMany));
    }
    for p in pairs {
        let fail = |m| (p.clone(), m);
        let (k, v) = p
            .split_once('=')
            .ok_or_else(|| fail(MetaProblem::NoEquals))?;
        check_meta(k, v).map_err(fail)?;
        if out.insert(k.to_owned(), v.to_owned()).is_some() {
            return Err(fail(MetaProblem::Duplicate));
        }
    }
    Ok(out)
}

fn check_meta(k: &str, v: &str) -> Result<(), MetaProblem> {
    if k.is_empty()
        || k.len() > MAX_META_KEY
        || !k
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"_.-".contains(&b))
    {
        return Err(MetaProblem::BadKey);
    }
    if v.len() > MAX_META_VALUE || v.chars().any(char::is_control) {
        return Err(MetaProblem::BadValue);
    }
    Ok(())
}

/// The subjects of a statement over `entries` (sorted) with `root`.
pub fn subjects(mode: SubjectMode, entries: &[Entry], root: &[u8; 32]) -> Vec<Subject> {
    match mode {
        SubjectMode::Root => vec![Subject {
            name: ROOT_SUBJECT.into(),
            digest: BTreeMap::from([("sha256".into(), crate::hex::encode(root))]),
        }],
        SubjectMode::Files => entries
            .iter()
            .map(|e| Subject {
                name: path::display(&e.path),
                digest: BTreeMap::from([("sha256".into(), crate::hex::encode(&e.sha256))]),
            })
            .collect(),
    }
}

/// What is wrong with a statement's content.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StatementProblem {
    #[error("the payload is not a statement: {0}")]
    Json(String),
    #[error("{field} is {found:?}, expected {expected:?}")]
    Constant {
        field: &'static str,
        found: String,
        expected: &'static str,
    },
    #[error("the root is not 64 lowercase hex digits")]
    Root,
    #[error("the metadata pair {key:?} is not well formed: {problem}")]
    Meta { key: String, problem: MetaProblem },
    #[error("an input path is not usable")]
    Input,
    #[error("the subjects do not match the entries ({0})")]
    Subjects(String),
    #[error("the statement names {signer:?} as its signer, but is signed as {keyid:?}")]
    Signer { signer: String, keyid: String },
}

impl Statement {
    /// Parses and checks a payload: the in-toto and vouch constants, the
    /// root's form, the metadata and the inputs.
    pub fn parse(payload: &[u8]) -> Result<Self, StatementProblem> {
        let s: Statement =
            serde_json::from_slice(payload).map_err(|e| StatementProblem::Json(e.to_string()))?;
        let constant = |field, found: &str, expected| {
            if found == expected {
                Ok(())
            } else {
                Err(StatementProblem::Constant {
                    field,
                    found: found.to_owned(),
                    expected,
                })
            }
        };
        constant("_type", &s.type_, STATEMENT_TYPE)?;
        constant("predicateType", &s.predicate_type, PREDICATE_TYPE)?;
        constant("leafScheme", &s.predicate.leaf_scheme, LEAF_SCHEME)?;
        s.root()?;
        if !crate::time::is_rfc3339_utc(s.predicate.signed_at.as_bytes()) {
            return Err(StatementProblem::Constant {
                field: "signedAt",
                found: s.predicate.signed_at.clone(),
                expected: "an RFC 3339 UTC time",
            });
        }
        if s.predicate.meta.len() > MAX_META {
            return Err(StatementProblem::Meta {
                key: String::new(),
                problem: MetaProblem::TooMany,
            });
        }
        for (k, v) in &s.predicate.meta {
            check_meta(k, v).map_err(|problem| StatementProblem::Meta {
                key: k.clone(),
                problem,
            })?;
        }
        for i in s.predicate.inputs.iter().chain(&s.predicate.excluded) {
            input_path(i)?;
        }
        Ok(s)
    }

    pub fn root(&self) -> Result<[u8; 32], StatementProblem> {
        crate::hex::decode_lower::<32>(self.predicate.root.as_bytes()).ok_or(StatementProblem::Root)
    }

    /// Checks the subjects against the entries (all of them, sorted) and
    /// the root: exactly what [`subjects`] would list.
    pub fn check_subjects(
        &self,
        entries: &[Entry],
        root: &[u8; 32],
    ) -> Result<(), StatementProblem> {
        let want = subjects(self.predicate.subjects, entries, root);
        if want.len() != self.subject.len() {
            return Err(StatementProblem::Subjects(format!(
                "{} subjects for {} entries",
                self.subject.len(),
                want.len()
            )));
        }
        if let Some(i) = (0..want.len()).find(|&i| want[i] != self.subject[i]) {
            return Err(StatementProblem::Subjects(format!(
                "subject {i} is {:?}, the entries say {:?}",
                self.subject[i].name, want[i].name
            )));
        }
        Ok(())
    }
}

/// An input's stamped path (`None`: the base).
pub fn input_path(i: &InputJson) -> Result<Option<Vec<u8>>, StatementProblem> {
    if i.path.is_none() && i.path_b64.is_none() {
        return Ok(None);
    }
    let p =
        path::from_json(i.path.as_deref(), i.path_b64.as_deref()).ok_or(StatementProblem::Input)?;
    path::check(&p).map_err(|_| StatementProblem::Input)?;
    Ok(Some(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_pairs() {
        let m = parse_meta(&["agent=claude".into(), "run.id=42".into(), "cmd=a=b".into()]).unwrap();
        assert_eq!(m["cmd"], "a=b");
        for (bad, want) in [
            ("novalue", MetaProblem::NoEquals),
            ("Agent=x", MetaProblem::BadKey),
            ("=x", MetaProblem::BadKey),
            ("a=line\nbreak", MetaProblem::BadValue),
        ] {
            assert_eq!(parse_meta(&[bad.into()]).unwrap_err().1, want, "{bad}");
        }
        assert_eq!(
            parse_meta(&["a=1".into(), "a=2".into()]).unwrap_err().1,
            MetaProblem::Duplicate
        );
    }
}
