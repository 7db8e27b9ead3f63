//! Temporary stand-in for the scanner (replaced by the real ruleset).
#![allow(missing_docs)]
use serde::Serialize;
use std::sync::LazyLock;

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Low,
    Medium,
    High,
    Critical,
}
impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
            Severity::Critical => "critical",
        }
    }
    pub fn parse(s: &str) -> Option<Severity> {
        Some(match s {
            "low" => Severity::Low,
            "medium" => Severity::Medium,
            "high" => Severity::High,
            "critical" => Severity::Critical,
            _ => return None,
        })
    }
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    Injection,
    Steering,
    Concealment,
    Exfiltration,
    Credentials,
    SecretField,
    HiddenUnicode,
    EncodedBlob,
}
impl Family {
    pub fn as_str(self) -> &'static str {
        match self {
            Family::Injection => "injection",
            Family::Steering => "steering",
            Family::Concealment => "concealment",
            Family::Exfiltration => "exfiltration",
            Family::Credentials => "credentials",
            Family::SecretField => "secret_field",
            Family::HiddenUnicode => "hidden_unicode",
            Family::EncodedBlob => "encoded_blob",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct RuleInfo {
    pub id: &'static str,
    pub family: Family,
    pub severity: Severity,
    pub advisory: bool,
    pub rationale: &'static str,
}

pub struct Ruleset {
    rules: Vec<RuleInfo>,
    digest: String,
}

static BUILTIN: LazyLock<Ruleset> = LazyLock::new(|| {
    let rules = vec![
        RuleInfo {
            id: "VET-INJ-001",
            family: Family::Injection,
            severity: Severity::High,
            advisory: false,
            rationale: "asks the model to ignore its instructions",
        },
        RuleInfo {
            id: "VET-UNI-001",
            family: Family::HiddenUnicode,
            severity: Severity::Critical,
            advisory: false,
            rationale: "tag characters hide text",
        },
        RuleInfo {
            id: "VET-SEC-001",
            family: Family::SecretField,
            severity: Severity::Medium,
            advisory: false,
            rationale: "a parameter named like a secret",
        },
    ];
    let mut r = Ruleset {
        rules,
        digest: String::new(),
    };
    let c = crate::jcs::to_canonical_vec(&r.canonical()).unwrap_or_default();
    use sha2::Digest;
    r.digest = format!("sha256:{}", crate::hex::encode(&sha2::Sha256::digest(&c)));
    r
});

impl Ruleset {
    pub fn builtin() -> &'static Ruleset {
        &BUILTIN
    }
    pub fn version(&self) -> &'static str {
        "stub"
    }
    pub fn digest(&self) -> &str {
        &self.digest
    }
    pub fn rules(&self) -> &[RuleInfo] {
        &self.rules
    }
    pub fn rule(&self, id: &str) -> Option<&RuleInfo> {
        self.rules.iter().find(|r| r.id == id)
    }
    pub fn canonical(&self) -> serde_json::Value {
        serde_json::json!({"version": "stub", "rules": self.rules})
    }
    pub fn scan_tool(&self, def: &serde_json::Value) -> Vec<Finding> {
        let mut out = Vec::new();
        walk(self, def, &mut String::new(), &mut out);
        out.sort_by(|a, b| (&a.pointer, a.rule).cmp(&(&b.pointer, b.rule)));
        out.dedup();
        out
    }
    pub fn scan_text(&self, text: &str) -> Vec<Finding> {
        let mut out = Vec::new();
        text_findings(self, text, "", &mut out);
        out
    }
}

fn finding(r: &RuleInfo, pointer: &str, excerpt: &str) -> Finding {
    Finding {
        rule: r.id,
        family: r.family,
        severity: r.severity,
        advisory: r.advisory,
        pointer: pointer.into(),
        excerpt: excerpt.chars().take(120).collect(),
        decoded: false,
    }
}

fn text_findings(rs: &Ruleset, s: &str, p: &str, out: &mut Vec<Finding>) {
    let l = s.to_lowercase();
    if l.contains("ignore previous instructions") || l.contains("ignore all previous instructions")
    {
        out.push(finding(&rs.rules[0], p, s));
    }
    if s.chars().any(|c| ('\u{E0000}'..='\u{E007F}').contains(&c)) {
        out.push(finding(&rs.rules[1], p, &s.escape_unicode().to_string()));
    }
}

fn walk(rs: &Ruleset, v: &serde_json::Value, p: &mut String, out: &mut Vec<Finding>) {
    match v {
        serde_json::Value::String(s) => text_findings(rs, s, p, out),
        serde_json::Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                let n = p.len();
                p.push('/');
                p.push_str(&i.to_string());
                walk(rs, x, p, out);
                p.truncate(n);
            }
        }
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                let n = p.len();
                crate::drift::jsondiff::push_token(p, k);
                if p.ends_with(&format!("/properties/{k}"))
                    && ["api_key", "password", "secret"].contains(&k.as_str())
                {
                    out.push(finding(&rs.rules[2], p, k));
                }
                walk(rs, x, p, out);
                p.truncate(n);
            }
        }
        _ => {}
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub rule: &'static str,
    pub family: Family,
    pub severity: Severity,
    pub advisory: bool,
    pub pointer: String,
    pub excerpt: String,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub decoded: bool,
}

pub fn blocks(findings: &[Finding], block_at: Severity) -> bool {
    findings
        .iter()
        .any(|f| !f.advisory && f.severity >= block_at)
}
pub fn flags(findings: &[Finding]) -> bool {
    findings.iter().any(|f| !f.advisory)
}
