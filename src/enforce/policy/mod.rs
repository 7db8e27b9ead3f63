//! The wrap policy: which MCP `tools/call` requests `vouch wrap` allows,
//! asks about, or blocks.
//!
//! A policy is one TOML file (at most 1 MiB). Unknown keys anywhere are
//! errors, and every error names the file, line and column.
//!
//! ```toml
//! version = 1                      # required, must be 1
//! default = "block"                # allow | ask | block for a call no rule decides (default "block")
//! roots = ["/srv/project"]         # absolute roots for path_inside / path_outside
//!
//! [egress]                         # optional: the hosts of URLs in the arguments
//! allow = ["api.github.com", "*.githubusercontent.com"]  # exact, or "*.suffix" (sub-domains only); [] blocks every URL
//! tools = ["*"]                    # tools the check applies to (default: all)
//!
//! [[rule]]
//! id = "fs-read"                   # unique, [a-z0-9_.-]+ ("default" and "egress" are reserved)
//! tools = ["read_*", "list_directory"]   # tool-name globs (`*` matches any name)
//! action = "allow"                 # allow | ask | block
//! reason = "reads inside the project are fine"   # optional, one line, shown to the model
//! path_inside = ["/path"]          # every pointed value is a path inside a root (and one exists)
//!
//! [[rule]]
//! id = "fs-outside"
//! tools = ["*"]
//! action = "block"
//! path_outside = ["/path", "/paths/*"]   # some pointed value is outside every root, or not a string
//!
//! [[rule]]
//! id = "no-rm-rf"
//! tools = ["run_command"]
//! action = "block"
//! [rule.match]                     # pointer -> regex on the string there ("" = any string anywhere)
//! "/command" = "\\brm\\s+-rf\\b"
//!
//! [[limit]]
//! id = "fetch-rate"
//! tools = ["fetch"]
//! max = 10                         # calls of these tools, counted together
//! per = "1m"                       # sliding window: Ns, Nm or Nh
//! ```
//!
//! A rule's matchers (`path_outside`, `path_inside`, `match`, `equals`,
//! `exists`) must all hold for it to apply; a rule without matchers applies
//! to every call of its tools. Pointers are RFC 6901; `*` as a segment
//! (`/paths/*`) means every element of an array and is accepted only by the
//! path matchers. `roots` in a rule replace the top-level roots for it; a
//! rule with path matchers and no roots at all is an error. How paths are
//! read (relative paths and `~` are outside, symbolic links are followed)
//! is documented in the `paths` submodule; which strings count as URLs,
//! in the `egress` submodule.
//!
//! # Decision
//!
//! In this order, the first step that decides wins:
//!
//! | step | when | action | `rule` |
//! |---|---|---|---|
//! | 1 | `[egress]` applies to the tool and a URL's host is not allowed (or cannot be read) | block | `egress` |
//! | 2 | some rules match the tool and all their matchers hold | the strongest of theirs (block > ask > allow) | the first such rule in the file with that action |
//! | 3 | no rule applies | `default` | `default` |
//! | 4 | the result of 2 or 3 is allow or ask, and a `[[limit]]` of the tool already counts `max` calls in its window | block | `limit:ID` |
//!
//! So egress beats everything, a matching rule beats the default (an
//! allow rule allows under `default = "block"`), block beats ask beats
//! allow among matching rules, and a limit can only make a decision
//! stricter. A call is counted against its limits (in the [`RateState`])
//! exactly when the decision is not block.
//!
//! Reasons are one line, name the rule and the pointer, and never repeat
//! argument values (egress names the refused host).
//!
//! What is trusted: the policy file and the clock given to
//! [`Policy::decide`]. What is not checked: what a server does with an
//! allowed call, and paths or hosts in arguments no matcher points at.

mod egress;
mod paths;
mod pointer;
mod spec;

use super::error::{PolicyError, PolicyProblem};
use egress::HostPattern;
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use pointer::{Pointer, Wildcard};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet, VecDeque};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use toml::Spanned;

mod compile;
use compile::*;

/// Largest policy file read.
pub const MAX_POLICY_BYTES: u64 = 1 << 20;
/// Compiled size limit of one `[rule.match]` regex (bytes).
pub const REGEX_SIZE_LIMIT: usize = 1 << 18;
/// Lazy-DFA cache limit of one regex (bytes).
pub const REGEX_DFA_LIMIT: usize = 1 << 18;
/// Most `[rule.match]` regexes in one policy (with the limits above, this
/// bounds what a hostile policy can make us allocate).
pub const MAX_REGEXES: usize = 256;
/// Largest `max` of a `[[limit]]` (the window keeps one instant per call).
pub const MAX_LIMIT: i64 = 1_000_000;

/// What the policy says about one call. Ordered by strength:
/// `Allow < Ask < Block` (precedence BLOCK > ASK > ALLOW).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    Allow,
    Ask,
    Block,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Allow => "allow",
            Action::Ask => "ask",
            Action::Block => "block",
        }
    }
}

impl std::fmt::Display for Action {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
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

/// Calls counted for rate limits, kept by the wrapper for one policy:
/// per `[[limit]]` id, the instants of the calls in its window.
#[derive(Debug, Default)]
pub struct RateState {
    calls: HashMap<String, VecDeque<Instant>>,
}

/// A parsed, validated policy.
#[derive(Debug)]
pub struct Policy {
    digest: String,
    default: Action,
    roots: Vec<PathBuf>,
    egress: Option<Egress>,
    rules: Vec<Rule>,
    limits: Vec<Limit>,
    vet: crate::vet::gate::VetOptions,
}

#[derive(Debug)]
struct Tools {
    globs: Vec<String>,
    set: GlobSet,
}

#[derive(Debug)]
struct Egress {
    allow_text: Vec<String>,
    allow: Vec<HostPattern>,
    tools: Tools,
}

#[derive(Debug)]
struct Rule {
    id: String,
    tools: Tools,
    action: Action,
    reason: Option<String>,
    path_outside: Vec<Pointer>,
    path_inside: Vec<Pointer>,
    roots: Option<Vec<PathBuf>>,
    matches: Vec<(Pointer, regex::Regex)>,
    equals: Vec<(Pointer, serde_json::Value)>,
    exists: Vec<Pointer>,
}

#[derive(Debug)]
struct Limit {
    id: String,
    tools: Tools,
    max: usize,
    per: Duration,
    per_text: String,
}

/// What `vouch policy check` shows: the policy as understood.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PolicySummary {
    pub version: u32,
    /// `sha256:HEX` over the file's bytes.
    pub digest: String,
    pub default: Action,
    /// The top-level roots as compared (canonical where they exist).
    pub roots: Vec<String>,
    pub egress: Option<EgressSummary>,
    pub rules: Vec<RuleSummary>,
    pub limits: Vec<LimitSummary>,
    pub vet: VetSummary,
}

/// The `[vet]` section as understood (defaults filled in).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VetSummary {
    pub block_at: crate::vet::scan::Severity,
    pub on_change: crate::vet::record::OnChange,
    pub require_approval: bool,
    pub ruleset: crate::vet::record::RulesetRef,
}

/// The `[egress]` section as understood.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EgressSummary {
    pub allow: Vec<String>,
    pub tools: Vec<String>,
}

/// One `[[rule]]` as understood.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RuleSummary {
    pub id: String,
    pub tools: Vec<String>,
    pub action: Action,
    /// The matchers, one per entry (`path_outside /path`,
    /// `match /command =~ REGEX`, ...); empty: every call of the tools.
    pub conditions: Vec<String>,
    pub reason: Option<String>,
    /// The rule's own roots, when it has them.
    pub roots: Option<Vec<String>>,
}

/// One `[[limit]]` as understood.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LimitSummary {
    pub id: String,
    pub tools: Vec<String>,
    pub max: usize,
    /// As written (`1m`).
    pub per: String,
    pub per_seconds: u64,
}

impl Policy {
    /// Reads and parses a policy file.
    pub fn load(path: &Path) -> crate::Result<Policy> {
        let bytes = crate::fs::read_bounded(path, MAX_POLICY_BYTES)?;
        let text = String::from_utf8(bytes).map_err(|_| {
            crate::Error::from(super::EnforceError::Policy(PolicyError {
                path: path.to_path_buf(),
                line: None,
                column: None,
                problem: PolicyProblem::Syntax("not UTF-8".into()),
            }))
        })?;
        Policy::parse(&text, path).map_err(|e| super::EnforceError::Policy(e).into())
    }

    /// Parses policy text read from `path` (named in errors).
    pub fn parse(text: &str, path: &Path) -> Result<Policy, PolicyError> {
        let at = Locator { text, path };
        let spec: spec::PolicySpec = toml::from_str(text).map_err(|e| {
            at.error(
                e.span(),
                PolicyProblem::Syntax(one_line(e.message()).to_owned()),
            )
        })?;
        Compiler { at, regexes: 0 }.policy(spec, text)
    }

    /// `sha256:HEX` over the policy file's bytes, recorded with every decision.
    pub fn digest(&self) -> &str {
        &self.digest
    }

    /// How tool definitions are vetted (`[vet]`).
    pub fn vet(&self) -> crate::vet::gate::VetOptions {
        self.vet
    }

    /// The action for a call no rule decides.
    pub fn default_action(&self) -> Action {
        self.default
    }

    /// The policy as understood, for `vouch policy check`.
    pub fn summary(&self) -> PolicySummary {
        let shown = |roots: &[PathBuf]| roots.iter().map(|r| r.display().to_string()).collect();
        PolicySummary {
            version: 1,
            digest: self.digest.clone(),
            default: self.default,
            roots: shown(&self.roots),
            egress: self.egress.as_ref().map(|e| EgressSummary {
                allow: e.allow_text.clone(),
                tools: e.tools.globs.clone(),
            }),
            rules: self
                .rules
                .iter()
                .map(|r| RuleSummary {
                    id: r.id.clone(),
                    tools: r.tools.globs.clone(),
                    action: r.action,
                    conditions: r.conditions(),
                    reason: r.reason.clone(),
                    roots: r.roots.as_deref().map(shown),
                })
                .collect(),
            limits: self
                .limits
                .iter()
                .map(|l| LimitSummary {
                    id: l.id.clone(),
                    tools: l.tools.globs.clone(),
                    max: l.max,
                    per: l.per_text.clone(),
                    per_seconds: l.per.as_secs(),
                })
                .collect(),
            vet: VetSummary {
                block_at: self.vet.block_at,
                on_change: self.vet.on_change,
                require_approval: self.vet.require_approval,
                ruleset: crate::vet::record::RulesetRef::builtin(),
            },
        }
    }

    /// The decision for a call of `tool` with `args` (the call's
    /// `arguments` object, or `{}` when it has none) at `now`; counts the
    /// call in `rates` unless the decision is block. See the module docs
    /// for the order of the steps.
    pub fn decide(
        &self,
        tool: &str,
        args: &serde_json::Value,
        rates: &mut RateState,
        now: Instant,
    ) -> Decision {
        // 1. Egress.
        if let Some(egress) = &self.egress
            && egress.tools.set.is_match(tool)
            && let Some(refusal) = egress::check(args, &egress.allow)
        {
            let reason = match refusal {
                egress::Refusal::Host(host) => {
                    format!("egress: host {host} is not in the egress allow list")
                }
                egress::Refusal::Unparsable => {
                    "egress: a URL in the arguments has no host that can be read".to_owned()
                }
            };
            return Decision {
                action: Action::Block,
                rule: "egress".to_owned(),
                reason,
            };
        }

        // 2. The strongest matching rule, the first of its action; 3. default.
        let mut decided: Option<(&Rule, Vec<String>)> = None;
        for rule in &self.rules {
            if decided
                .as_ref()
                .is_some_and(|(d, _)| d.action >= rule.action)
            {
                continue;
            }
            if !rule.tools.set.is_match(tool) {
                continue;
            }
            if let Some(notes) = rule.holds(args, &self.roots) {
                decided = Some((rule, notes));
            }
        }
        let decision = match decided {
            Some((rule, notes)) => Decision {
                action: rule.action,
                rule: rule.id.clone(),
                reason: rule.reason_for(&notes),
            },
            None => Decision {
                action: self.default,
                rule: "default".to_owned(),
                reason: format!("no rule applies; the policy default is {}", self.default),
            },
        };
        if decision.action == Action::Block {
            return decision;
        }

        // 4. Rate limits, then count the call.
        let matching: Vec<&Limit> = self
            .limits
            .iter()
            .filter(|l| l.tools.set.is_match(tool))
            .collect();
        for limit in &matching {
            let window = rates.calls.entry(limit.id.clone()).or_default();
            while window.front().is_some_and(|t| {
                now.checked_duration_since(*t)
                    .is_some_and(|d| d >= limit.per)
            }) {
                window.pop_front();
            }
            if window.len() >= limit.max {
                return Decision {
                    action: Action::Block,
                    rule: format!("limit:{}", limit.id),
                    reason: format!(
                        "limit {}: at most {} calls of these tools per {}",
                        limit.id, limit.max, limit.per_text
                    ),
                };
            }
        }
        for limit in matching {
            rates
                .calls
                .entry(limit.id.clone())
                .or_default()
                .push_back(now);
        }
        decision
    }
}

impl Rule {
    /// `Some(notes)` when every matcher holds: one short note per matcher
    /// kind, naming pointers only.
    fn holds(&self, args: &serde_json::Value, top_roots: &[PathBuf]) -> Option<Vec<String>> {
        let roots = self.roots.as_deref().unwrap_or(top_roots);
        let mut notes = Vec::new();
        if !self.path_outside.is_empty() {
            let mut held = None;
            'pointers: for p in &self.path_outside {
                for v in p.resolve(args) {
                    let note = match v.as_str() {
                        None => "is not a string",
                        Some(s) if !paths::is_inside(s, roots) => "is outside the allowed roots",
                        Some(_) => continue,
                    };
                    held = Some(format!("path {} {note}", p.as_str()));
                    break 'pointers;
                }
            }
            notes.push(held?);
        }
        if !self.path_inside.is_empty() {
            let mut any = false;
            for p in &self.path_inside {
                for v in p.resolve(args) {
                    any = true;
                    if !v.as_str().is_some_and(|s| paths::is_inside(s, roots)) {
                        return None;
                    }
                }
            }
            if !any {
                return None;
            }
            notes.push(format!(
                "{} inside the allowed roots",
                join_pointers(&self.path_inside)
            ));
        }
        for (p, re) in &self.matches {
            let hit = if p.is_root() {
                pointer::strings(args).into_iter().any(|s| re.is_match(s))
            } else {
                p.resolve(args)
                    .first()
                    .and_then(|v| v.as_str())
                    .is_some_and(|s| re.is_match(s))
            };
            if !hit {
                return None;
            }
            notes.push(if p.is_root() {
                "an argument matches the rule's pattern".to_owned()
            } else {
                format!("{} matches the rule's pattern", p.as_str())
            });
        }
        for (p, expected) in &self.equals {
            if !p
                .resolve(args)
                .first()
                .is_some_and(|v| json_equal(v, expected))
            {
                return None;
            }
            notes.push(format!("{} equals the rule's value", display_pointer(p)));
        }
        for p in &self.exists {
            if p.resolve(args).is_empty() {
                return None;
            }
            notes.push(format!("{} is given", display_pointer(p)));
        }
        Some(notes)
    }

    fn reason_for(&self, notes: &[String]) -> String {
        let what = if notes.is_empty() {
            format!("rule {} applies to every call of its tools", self.id)
        } else {
            format!("rule {}: {}", self.id, notes.join("; "))
        };
        match &self.reason {
            Some(r) => format!("{r} ({what})"),
            None => what,
        }
    }

    fn conditions(&self) -> Vec<String> {
        let mut out = Vec::new();
        for p in &self.path_outside {
            out.push(format!("path_outside {}", p.as_str()));
        }
        for p in &self.path_inside {
            out.push(format!("path_inside {}", p.as_str()));
        }
        for (p, re) in &self.matches {
            out.push(format!("match {:?} =~ {}", p.as_str(), re.as_str()));
        }
        for (p, v) in &self.equals {
            out.push(format!("equals {:?} == {v}", p.as_str()));
        }
        for p in &self.exists {
            out.push(format!("exists {:?}", p.as_str()));
        }
        out
    }
}

fn display_pointer(p: &Pointer) -> &str {
    if p.is_root() {
        "the arguments"
    } else {
        p.as_str()
    }
}

fn join_pointers(ps: &[Pointer]) -> String {
    ps.iter()
        .map(Pointer::as_str)
        .collect::<Vec<_>>()
        .join(", ")
}

/// JSON equality with numbers compared by value (`1` equals `1.0`).
fn json_equal(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value;
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i128(), y.as_i128()) {
            (Some(i), Some(j)) => i == j,
            _ => x.as_f64().is_some_and(|f| y.as_f64() == Some(f)),
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_equal(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
    }
}

/// The first line of a message, trimmed.
fn one_line(message: &str) -> &str {
    message
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn windows() {
        assert_eq!(parse_window("30s"), Some(Duration::from_secs(30)));
        assert_eq!(parse_window("2m"), Some(Duration::from_secs(120)));
        assert_eq!(parse_window("1h"), Some(Duration::from_secs(3600)));
        for bad in [
            "",
            "s",
            "0s",
            "1d",
            "-1s",
            "1.5m",
            "99999999999999999999h",
            "1001000h",
        ] {
            assert_eq!(parse_window(bad), None, "{bad}");
        }
    }

    #[test]
    fn positions_count_characters() {
        assert_eq!(position("ab\ncd", 0), (1, 1));
        assert_eq!(position("ab\ncd", 4), (2, 2));
        assert_eq!(position("é\nx", 3), (2, 1));
        assert_eq!(position("éx", 2), (1, 2));
    }

    #[test]
    fn numbers_compare_by_value() {
        use serde_json::json;
        assert!(json_equal(&json!(1), &json!(1.0)));
        assert!(json_equal(&json!({"a": [1]}), &json!({"a": [1.0]})));
        assert!(!json_equal(&json!(1), &json!("1")));
        assert!(!json_equal(&json!([1, 2]), &json!([1])));
    }
}
