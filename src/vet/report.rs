//! `vouch scan`: the static scan alone, over a saved listing, a running
//! server or every server of a host configuration, as a report (table,
//! JSON, or SARIF 2.1.0). No pins are read or written, and no log: an
//! entry that runs `vouch wrap` is scanned by listing the server it wraps
//! ([`super::wrapped`]), and one that runs vouch in any other way is not
//! started at all.

use super::VetError;
use super::record::{RulesetRef, digest_of};
use super::scan::{Finding, Ruleset, Severity, blocks, flags};
use crate::mcp::wrapped::Wrapped;
use serde::Serialize;
use serde_json::Value;

/// A scan's verdict on one tool or text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// No finding that is not advisory.
    Pass,
    /// Findings below `block_at`.
    Flagged,
    /// A finding at or above `block_at`.
    Blocked,
}

impl Verdict {
    pub fn of(findings: &[Finding], block_at: Severity) -> Verdict {
        if blocks(findings, block_at) {
            Verdict::Blocked
        } else if flags(findings) {
            Verdict::Flagged
        } else {
            Verdict::Pass
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Flagged => "flagged",
            Verdict::Blocked => "blocked",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TextScan {
    pub verdict: Verdict,
    pub findings: Vec<Finding>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolScan {
    pub name: String,
    pub digest: String,
    pub verdict: Verdict,
    pub findings: Vec<Finding>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    pub tools: u64,
    pub pass: u64,
    pub flagged: u64,
    pub blocked: u64,
}

/// One server (or saved listing).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServerScan {
    /// The config's server name, the file, or the command.
    pub server: String,
    /// Where it came from (`FILE`, `CONFIG#NAME`, the command).
    pub source: String,
    /// Why it could not be listed, or was not started (nothing was
    /// scanned).
    pub error: Option<String>,
    /// The stable reason code of `error` (`spawn_failed`,
    /// `wrap_no_separator`, `wrap_launcher`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<&'static str>,
    /// The entry runs the server through `vouch wrap`: the server it wraps
    /// was listed directly (the wrapper was not started, so its log was
    /// not touched), and this says where the wrapper's evidence goes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wrapped: Option<Wrapped>,
    pub instructions: Option<TextScan>,
    pub tools: Vec<ToolScan>,
    pub summary: Summary,
}

impl ServerScan {
    /// Nothing scanned, for the reason `error` (code `code`).
    pub fn failed(server: &str, source: &str, code: &'static str, error: String) -> ServerScan {
        ServerScan {
            server: server.to_owned(),
            source: source.to_owned(),
            error: Some(error),
            error_code: Some(code),
            wrapped: None,
            instructions: None,
            tools: Vec::new(),
            summary: Summary::default(),
        }
    }

    /// The same scan, of the server a `vouch wrap` entry wraps.
    pub fn through(mut self, wrapped: Wrapped) -> ServerScan {
        self.wrapped = Some(wrapped);
        self
    }

    pub fn blocked(&self) -> bool {
        self.summary.blocked > 0
            || self
                .instructions
                .as_ref()
                .is_some_and(|i| i.verdict == Verdict::Blocked)
    }
}

/// The whole report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScanReport {
    pub ruleset: RulesetRef,
    pub block_at: Severity,
    /// Something was blocked (exit 1).
    pub blocked: bool,
    pub servers: Vec<ServerScan>,
}

impl ScanReport {
    pub fn new(block_at: Severity, servers: Vec<ServerScan>) -> ScanReport {
        ScanReport {
            ruleset: RulesetRef::builtin(),
            block_at,
            blocked: servers.iter().any(ServerScan::blocked),
            servers,
        }
    }

    /// A server could not be listed.
    pub fn has_errors(&self) -> bool {
        self.servers.iter().any(|s| s.error.is_some())
    }
}

/// Scans a listing: each tool as listed, and the instructions.
pub fn scan_listing(
    server: &str,
    source: &str,
    tools: &[Value],
    instructions: Option<&str>,
    block_at: Severity,
) -> ServerScan {
    let ruleset = Ruleset::builtin();
    let mut summary = Summary::default();
    let mut out = Vec::with_capacity(tools.len());
    for (i, def) in tools.iter().enumerate() {
        let findings = ruleset.scan_tool(def);
        let verdict = Verdict::of(&findings, block_at);
        summary.tools += 1;
        match verdict {
            Verdict::Pass => summary.pass += 1,
            Verdict::Flagged => summary.flagged += 1,
            Verdict::Blocked => summary.blocked += 1,
        }
        out.push(ToolScan {
            name: def
                .get("name")
                .and_then(Value::as_str)
                .map_or_else(|| format!("#{i}"), str::to_owned),
            digest: digest_of(def),
            verdict,
            findings,
        });
    }
    let instructions = instructions.map(|t| {
        let findings = ruleset.scan_text(t);
        TextScan {
            verdict: Verdict::of(&findings, block_at),
            findings,
        }
    });
    ServerScan {
        server: server.to_owned(),
        source: source.to_owned(),
        error: None,
        error_code: None,
        wrapped: None,
        instructions,
        tools: out,
        summary,
    }
}

/// Most tools one saved listing may hold: the default bound on one live
/// list ([`crate::mcp::ListOptions::max_items`]).
pub const MAX_TOOLS: usize = 10_000;

/// Most JSON values (scalars and containers) one saved listing may hold.
/// A `serde_json::Value` costs up to about 700 bytes per value, so this,
/// not the file's size, bounds the memory of a scan.
pub const MAX_LISTING_VALUES: usize = 1 << 19;

/// Nesting allowed in a saved listing.
pub const MAX_LISTING_DEPTH: u32 = 100;

/// A saved listing: a `tools/list` result (`{"tools": [...]}`), an
/// `initialize` result (`instructions`), both merged, or a JSON-RPC
/// response whose `result` is one of those. Returns tools and
/// instructions.
///
/// Bounds: the text is checked first (syntax, duplicate names, nesting at
/// most [`MAX_LISTING_DEPTH`], at most [`MAX_LISTING_VALUES`] values,
/// `too_many_values`) without building anything; then tools are read one
/// by one, and the [`MAX_TOOLS`]+1st ends the reading (`too_many_tools`).
pub fn parse_saved(name: &str, bytes: &[u8]) -> Result<(Vec<Value>, Option<String>), VetError> {
    let bad = |problem: &str| VetError::Listing {
        source_name: name.to_owned(),
        problem: problem.to_owned(),
    };
    let values = crate::jcs::check_unique_keys_counted(bytes, MAX_LISTING_DEPTH)
        .map_err(|e| bad(&format!("not JSON without duplicate keys: {e}")))?;
    let read = |build: bool| {
        let mut de = serde_json::Deserializer::from_slice(bytes);
        let seed = ListingSeed {
            nested: false,
            build,
        };
        match serde::de::DeserializeSeed::deserialize(seed, &mut de)
            .and_then(|top| de.end().map(|()| top))
        {
            Ok(top) => Ok(top),
            Err(e) if e.to_string().starts_with(TOO_MANY_TOOLS) => Err(VetError::TooManyTools {
                source_name: name.to_owned(),
                max: MAX_TOOLS,
            }),
            Err(e) => Err(bad(&e.to_string())),
        }
    };
    if values > MAX_LISTING_VALUES {
        // Too many tools is the clearer message when it is also true:
        // count them without building anything.
        read(false)?;
        return Err(VetError::TooManyValues {
            source_name: name.to_owned(),
            max: MAX_LISTING_VALUES,
        });
    }
    let top = read(true)?;
    let Saved::Object(mut obj) = top else {
        return Err(bad("not a JSON object"));
    };
    if obj.jsonrpc {
        obj = match obj.result.take() {
            Some(r) => match *r {
                Saved::Object(o) => o,
                Saved::Other => return Err(bad("not a JSON object")),
            },
            None => return Err(bad("a JSON-RPC message without a result")),
        };
    }
    let tools = match obj.tools {
        None => Vec::new(),
        Some(Some(a)) => a,
        Some(None) => return Err(bad("\"tools\" is not an array")),
    };
    let instructions = match obj.instructions {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s),
        Some(_) => return Err(bad("\"instructions\" is not a string")),
    };
    if tools.is_empty() && instructions.is_none() && !obj.has_tools {
        return Err(bad(
            "neither \"tools\" nor \"instructions\": not a saved listing",
        ));
    }
    Ok((tools, instructions))
}

/// The error message that carries `too_many_tools` out of serde.
const TOO_MANY_TOOLS: &str = "vouch: too many tools";

/// What a saved listing's object (or its JSON-RPC `result`) held.
#[derive(Default)]
struct SavedObject {
    jsonrpc: bool,
    has_tools: bool,
    /// `Some(None)`: a `tools` member that is not an array.
    tools: Option<Option<Vec<Value>>>,
    instructions: Option<Value>,
    result: Option<Box<Saved>>,
}

enum Saved {
    Object(SavedObject),
    Other,
}

/// Reads a listing object member by member; `tools` element by element.
struct ListingSeed {
    /// Inside `result`: its own `result` is not looked into.
    nested: bool,
    /// Build the tools (else only count them).
    build: bool,
}

impl<'de> serde::de::DeserializeSeed<'de> for ListingSeed {
    type Value = Saved;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Saved, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for ListingSeed {
    type Value = Saved;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a saved listing")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Saved, A::Error> {
        use serde::de::IgnoredAny;
        let mut o = SavedObject::default();
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            match key.as_ref() {
                "tools" => {
                    o.has_tools = true;
                    o.tools = Some(map.next_value_seed(ToolsSeed { build: self.build })?);
                }
                "instructions" => o.instructions = Some(map.next_value()?),
                "jsonrpc" => {
                    o.jsonrpc = true;
                    map.next_value::<IgnoredAny>()?;
                }
                "result" if !self.nested => {
                    o.result = Some(Box::new(map.next_value_seed(ListingSeed {
                        nested: true,
                        build: self.build,
                    })?));
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Saved::Object(o))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Saved, A::Error> {
        while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
        Ok(Saved::Other)
    }
    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Saved, E> {
        Ok(Saved::Other)
    }
    fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Saved, E> {
        Ok(Saved::Other)
    }
    fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Saved, E> {
        Ok(Saved::Other)
    }
    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Saved, E> {
        Ok(Saved::Other)
    }
    fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Saved, E> {
        Ok(Saved::Other)
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<Saved, E> {
        Ok(Saved::Other)
    }
}

/// `tools`: an array read one definition at a time, at most [`MAX_TOOLS`]
/// (`None` when it is not an array); without `build`, counted only.
struct ToolsSeed {
    build: bool,
}

impl<'de> serde::de::DeserializeSeed<'de> for ToolsSeed {
    type Value = Option<Vec<Value>>;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for ToolsSeed {
    type Value = Option<Vec<Value>>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an array of tools")
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut tools = Vec::new();
        let mut count = 0usize;
        loop {
            let more = if self.build {
                seq.next_element::<Value>()?.map(|t| tools.push(t))
            } else {
                seq.next_element::<serde::de::IgnoredAny>()?.map(drop)
            };
            if more.is_none() {
                return Ok(Some(tools));
            }
            count += 1;
            if count > MAX_TOOLS {
                return Err(serde::de::Error::custom(TOO_MANY_TOOLS));
            }
        }
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map
            .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
            .is_some()
        {}
        Ok(None)
    }
    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
}

// ---- SARIF 2.1.0 --------------------------------------------------------

/// A SARIF 2.1.0 log of a report: one run, the ruleset as the driver's
/// rules, one result per finding (level `error` when it blocks, `warning`
/// when it flags, `note` when advisory), located by logical location
/// `SERVER/TOOL` and the finding's JSON Pointer.
#[derive(Debug, Clone, Serialize)]
pub struct Sarif {
    #[serde(rename = "$schema")]
    pub schema: &'static str,
    pub version: &'static str,
    pub runs: Vec<SarifRun>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SarifRun {
    pub tool: SarifTool,
    pub results: Vec<SarifResult>,
    #[serde(rename = "invocations")]
    pub invocations: Vec<SarifInvocation>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SarifTool {
    pub driver: SarifDriver,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SarifDriver {
    pub name: &'static str,
    pub version: &'static str,
    pub semantic_version: &'static str,
    pub rules: Vec<SarifRule>,
    pub properties: SarifRulesetProps,
}

#[derive(Debug, Clone, Serialize)]
pub struct SarifRulesetProps {
    pub ruleset_version: String,
    pub ruleset_digest: String,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SarifRule {
    pub id: &'static str,
    pub short_description: SarifText,
    pub default_configuration: SarifConfig,
    pub properties: SarifRuleProps,
}

#[derive(Debug, Clone, Serialize)]
pub struct SarifText {
    pub text: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct SarifConfig {
    pub level: &'static str,
}

#[derive(Debug, Clone, Serialize)]
pub struct SarifRuleProps {
    pub family: &'static str,
    pub severity: Severity,
    pub advisory: bool,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SarifResult {
    pub rule_id: String,
    pub level: &'static str,
    pub message: SarifText,
    pub locations: Vec<SarifLocation>,
    pub properties: SarifResultProps,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SarifLocation {
    pub logical_locations: Vec<SarifLogical>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SarifLogical {
    pub fully_qualified_name: String,
    pub kind: &'static str,
}

#[derive(Debug, Clone, Serialize)]
pub struct SarifResultProps {
    pub server: String,
    pub source: String,
    pub pointer: String,
    pub excerpt: String,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub decoded: bool,
    /// The server was scanned behind this `vouch wrap` entry.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wrapped: Option<Wrapped>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SarifInvocation {
    pub execution_successful: bool,
    pub tool_execution_notifications: Vec<SarifNotification>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SarifNotification {
    pub level: &'static str,
    pub message: SarifText,
}

fn level(f: &Finding, block_at: Severity) -> &'static str {
    if f.advisory {
        "note"
    } else if f.severity >= block_at {
        "error"
    } else {
        "warning"
    }
}

impl Sarif {
    pub fn from_report(r: &ScanReport) -> Sarif {
        let ruleset = Ruleset::builtin();
        let rules = ruleset
            .rules()
            .iter()
            .map(|rule| SarifRule {
                id: rule.id,
                short_description: SarifText {
                    text: rule.rationale.to_owned(),
                },
                default_configuration: SarifConfig {
                    level: if rule.advisory {
                        "note"
                    } else if rule.severity >= r.block_at {
                        "error"
                    } else {
                        "warning"
                    },
                },
                properties: SarifRuleProps {
                    family: rule.family.as_str(),
                    severity: rule.severity,
                    advisory: rule.advisory,
                },
            })
            .collect();
        let mut results = Vec::new();
        let mut notes = Vec::new();
        for s in &r.servers {
            if let Some(e) = &s.error {
                notes.push(SarifNotification {
                    level: "error",
                    message: SarifText {
                        text: format!("{}: {e}", s.source),
                    },
                });
            }
            if let Some(w) = &s.wrapped {
                notes.push(SarifNotification {
                    level: "note",
                    message: SarifText {
                        text: format!(
                            "{}: runs the server through vouch wrap (id {}, log {}, policy {}); the wrapped server was scanned directly and the wrapper not started",
                            s.source, w.id, w.log, w.policy
                        ),
                    },
                });
            }
            let mut push = |what: String, kind: &'static str, f: &Finding| {
                results.push(SarifResult {
                    rule_id: f.rule.to_owned(),
                    level: level(f, r.block_at),
                    message: SarifText {
                        text: format!(
                            "{what}: {} ({} {})",
                            ruleset.rule(f.rule).map_or("", |x| x.rationale),
                            f.family.as_str(),
                            f.severity.as_str()
                        ),
                    },
                    locations: vec![SarifLocation {
                        logical_locations: vec![SarifLogical {
                            fully_qualified_name: what.clone(),
                            kind,
                        }],
                    }],
                    properties: SarifResultProps {
                        server: s.server.clone(),
                        source: s.source.clone(),
                        pointer: f.pointer.clone(),
                        excerpt: f.excerpt.clone(),
                        decoded: f.decoded,
                        wrapped: s.wrapped.clone(),
                    },
                });
            };
            if let Some(i) = &s.instructions {
                for f in &i.findings {
                    push(format!("{}/instructions", s.server), "member", f);
                }
            }
            for t in &s.tools {
                for f in &t.findings {
                    push(format!("{}/{}", s.server, t.name), "function", f);
                }
            }
        }
        Sarif {
            schema: "https://json.schemastore.org/sarif-2.1.0.json",
            version: "2.1.0",
            runs: vec![SarifRun {
                tool: SarifTool {
                    driver: SarifDriver {
                        name: "vouch",
                        version: env!("CARGO_PKG_VERSION"),
                        semantic_version: env!("CARGO_PKG_VERSION"),
                        rules,
                        properties: SarifRulesetProps {
                            ruleset_version: r.ruleset.version.clone(),
                            ruleset_digest: r.ruleset.digest.clone(),
                        },
                    },
                },
                results,
                invocations: vec![SarifInvocation {
                    execution_successful: !r.has_errors(),
                    tool_execution_notifications: notes,
                }],
            }],
        }
    }
}
