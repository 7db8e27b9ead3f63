//! The policy file as written (TOML, `deny_unknown_fields` everywhere),
//! with the spans that errors point at.

use super::Action;
use serde::Deserialize;
use std::collections::BTreeMap;
use toml::Spanned;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PolicySpec {
    pub version: Spanned<i64>,
    #[serde(default)]
    pub default: Option<Spanned<Action>>,
    #[serde(default)]
    pub roots: Vec<Spanned<String>>,
    #[serde(default)]
    pub egress: Option<EgressSpec>,
    #[serde(default)]
    pub rule: Vec<RuleSpec>,
    #[serde(default)]
    pub limit: Vec<LimitSpec>,
    #[serde(default)]
    pub vet: Option<VetSpec>,
}

/// `[vet]`: how tool definitions are vetted (docs/FORMAT.md §19).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct VetSpec {
    #[serde(default)]
    pub block_at: Option<Spanned<String>>,
    #[serde(default)]
    pub on_change: Option<Spanned<String>>,
    #[serde(default)]
    pub require_approval: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct EgressSpec {
    pub allow: Vec<Spanned<String>>,
    #[serde(default)]
    pub tools: Option<Spanned<Vec<Spanned<String>>>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RuleSpec {
    pub id: Spanned<String>,
    pub tools: Spanned<Vec<Spanned<String>>>,
    pub action: Action,
    #[serde(default)]
    pub reason: Option<Spanned<String>>,
    #[serde(default)]
    pub path_outside: Vec<Spanned<String>>,
    #[serde(default)]
    pub path_inside: Vec<Spanned<String>>,
    #[serde(default)]
    pub roots: Option<Vec<Spanned<String>>>,
    #[serde(default, rename = "match")]
    pub matches: BTreeMap<Spanned<String>, Spanned<String>>,
    #[serde(default)]
    pub equals: BTreeMap<Spanned<String>, Spanned<toml::Value>>,
    #[serde(default)]
    pub exists: Vec<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LimitSpec {
    pub id: Spanned<String>,
    pub tools: Spanned<Vec<Spanned<String>>>,
    pub max: Spanned<i64>,
    pub per: Spanned<String>,
}
