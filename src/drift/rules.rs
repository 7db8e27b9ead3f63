//! The rules file of a directory target (TOML), and its matching.
//!
//! ```toml
//! # Paths are relative to the target, `/`-separated. Globs: `*` and `?`
//! # stay within one component, `**` crosses them, `[abc]`, `{a,b}`.
//! include = ["etc/**", "bin/*"]      # default: everything
//! exclude = ["cache", "**/*.tmp"]    # an excluded directory is not descended into
//! attributes = ["mtime", "inode"]    # extra attributes to record and compare (default: none)
//! growing = ["log/*.log"]            # may only grow: the old content must stay a prefix
//! rotate = ["log/app.log*"]          # a rotated file is one rename, not a removal and an addition
//!
//! [[ignore]]                         # attributes not compared for some paths
//! paths = ["tmp/**"]
//! attributes = ["mode", "uid", "gid"]
//! ```
//!
//! Attributes: `type`, `size`, `mode`, `uid`, `gid`, `link` (symlink
//! target), `sha256` (content), and the optional `mtime` and `inode`.
//! Unknown keys, unknown attributes and bad globs are errors with their
//! line. The rules are part of the snapshot (its header holds them, in the
//! canonical form this module writes), so a check compares with the rules
//! the baseline was taken with.

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};
use serde::{Deserialize, Serialize};
use std::os::unix::ffi::OsStrExt;

/// An attribute of a directory entry that drift compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Attr {
    Type,
    Size,
    Mode,
    Uid,
    Gid,
    Link,
    Sha256,
    Mtime,
    Inode,
}

impl Attr {
    pub fn as_str(self) -> &'static str {
        match self {
            Attr::Type => "type",
            Attr::Size => "size",
            Attr::Mode => "mode",
            Attr::Uid => "uid",
            Attr::Gid => "gid",
            Attr::Link => "link",
            Attr::Sha256 => "sha256",
            Attr::Mtime => "mtime",
            Attr::Inode => "inode",
        }
    }
}

/// The rules as written (and as stored in a snapshot's header).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RulesSpec {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub include: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attributes: Vec<Attr>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub growing: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rotate: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignore: Vec<IgnoreSpec>,
}

/// Attributes not compared below some paths.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IgnoreSpec {
    pub paths: Vec<String>,
    pub attributes: Vec<Attr>,
}

/// Compiled rules.
#[derive(Debug, Clone)]
pub struct Rules {
    spec: RulesSpec,
    include: Option<GlobSet>,
    exclude: GlobSet,
    growing: GlobSet,
    rotate: GlobSet,
    ignore: Vec<(GlobSet, Vec<Attr>)>,
}

impl Default for Rules {
    fn default() -> Self {
        // An empty spec always compiles.
        Rules::compile(RulesSpec::default()).unwrap_or_else(|_| unreachable_rules())
    }
}

fn unreachable_rules() -> Rules {
    Rules {
        spec: RulesSpec::default(),
        include: None,
        exclude: GlobSet::empty(),
        growing: GlobSet::empty(),
        rotate: GlobSet::empty(),
        ignore: Vec::new(),
    }
}

fn glob(pattern: &str) -> Result<Glob, String> {
    let p = pattern.trim_start_matches("./").trim_start_matches('/');
    let p = p.strip_suffix('/').unwrap_or(p);
    if p.is_empty() {
        return Err(format!("empty glob {pattern:?}"));
    }
    GlobBuilder::new(p)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map_err(|e| format!("bad glob {pattern:?}: {}", e.kind()))
}

fn set(what: &str, patterns: &[String]) -> Result<GlobSet, String> {
    let mut b = GlobSetBuilder::new();
    for p in patterns {
        b.add(glob(p).map_err(|e| format!("{what}: {e}"))?);
    }
    b.build().map_err(|e| format!("{what}: {e}"))
}

impl Rules {
    /// Parses a rules file (TOML).
    pub fn parse(text: &str) -> Result<Rules, String> {
        let spec: RulesSpec = toml::from_str(text).map_err(|e| e.to_string().trim().to_owned())?;
        Rules::compile(spec)
    }

    /// Compiles a spec (from a rules file or a snapshot's header).
    pub fn compile(mut spec: RulesSpec) -> Result<Rules, String> {
        spec.attributes.sort();
        spec.attributes.dedup();
        if let Some(a) = spec
            .attributes
            .iter()
            .find(|a| !matches!(a, Attr::Mtime | Attr::Inode))
        {
            return Err(format!(
                "attributes: {:?} is always recorded; only \"mtime\" and \"inode\" are optional",
                a.as_str()
            ));
        }
        let include = if spec.include.is_empty() {
            None
        } else {
            Some(set("include", &spec.include)?)
        };
        let mut ignore = Vec::new();
        for (i, ig) in spec.ignore.iter_mut().enumerate() {
            ig.attributes.sort();
            ig.attributes.dedup();
            ignore.push((
                set(&format!("ignore[{i}].paths"), &ig.paths)?,
                ig.attributes.clone(),
            ));
        }
        Ok(Rules {
            include,
            exclude: set("exclude", &spec.exclude)?,
            growing: set("growing", &spec.growing)?,
            rotate: set("rotate", &spec.rotate)?,
            ignore,
            spec,
        })
    }

    pub fn spec(&self) -> &RulesSpec {
        &self.spec
    }

    /// The rules as canonical JSON (RFC 8785): what a snapshot records.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(&self.spec).unwrap_or(serde_json::Value::Null)
    }

    /// SHA-256 over [`Rules::to_json`] in RFC 8785 form, `sha256:HEX`.
    pub fn digest(&self) -> String {
        let bytes = crate::jcs::to_canonical_vec(&self.to_json()).unwrap_or_default();
        format!(
            "sha256:{}",
            crate::hex::encode(&crate::files::sha256(&bytes))
        )
    }

    fn path(rel: &[u8]) -> &std::path::Path {
        std::path::Path::new(std::ffi::OsStr::from_bytes(rel))
    }

    /// Whether a directory is walked into.
    pub fn descend(&self, rel: &[u8]) -> bool {
        !self.exclude.is_match(Self::path(rel))
    }

    /// Whether an entry is recorded.
    pub fn records(&self, rel: &[u8]) -> bool {
        let p = Self::path(rel);
        !self.exclude.is_match(p) && self.include.as_ref().is_none_or(|s| s.is_match(p))
    }

    pub fn wants(&self, attr: Attr) -> bool {
        self.spec.attributes.contains(&attr)
    }

    pub fn growing(&self, rel: &[u8]) -> bool {
        self.growing.is_match(Self::path(rel))
    }

    pub fn rotates(&self, rel: &[u8]) -> bool {
        self.rotate.is_match(Self::path(rel))
    }

    /// Whether `attr` is compared for `rel`.
    pub fn compares(&self, rel: &[u8], attr: Attr) -> bool {
        let p = Self::path(rel);
        !self
            .ignore
            .iter()
            .any(|(s, attrs)| attrs.contains(&attr) && s.is_match(p))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn globs_stay_within_components_unless_double_star() {
        let r = Rules::parse(
            "exclude = [\"cache\", \"**/*.tmp\"]\ninclude = [\"etc/*\", \"cache/**\", \"a/**\"]",
        )
        .unwrap();
        assert!(!r.descend(b"cache"));
        assert!(r.descend(b"etc"));
        assert!(r.records(b"etc/passwd"));
        assert!(!r.records(b"etc/ssh/sshd_config"));
        assert!(!r.records(b"a/b/c.tmp"));
        assert!(r.records(b"a/b/c"));
    }

    #[test]
    fn unknown_keys_and_attributes_are_errors_with_their_line() {
        let e = Rules::parse("include = []\nexclud = [\"x\"]\n").unwrap_err();
        assert!(e.contains("line 2"), "{e}");
        assert!(e.contains("exclud"), "{e}");
        let e =
            Rules::parse("[[ignore]]\npaths = [\"x\"]\nattributes = [\"colour\"]\n").unwrap_err();
        assert!(e.contains("line 3"), "{e}");
        let e = Rules::parse("exclude = [\"a[\"]").unwrap_err();
        assert!(e.contains("bad glob"), "{e}");
        let e = Rules::parse("attributes = [\"mode\"]").unwrap_err();
        assert!(e.contains("always recorded"), "{e}");
    }

    #[test]
    fn the_digest_ignores_order_of_attributes_and_formatting() {
        let a = Rules::parse("attributes = [\"mtime\", \"inode\"]").unwrap();
        let b = Rules::parse("attributes=[ \"inode\",\"mtime\" ]\n# c\n").unwrap();
        assert_eq!(a.digest(), b.digest());
        assert_ne!(a.digest(), Rules::default().digest());
    }

    #[test]
    fn ignore_applies_per_path_and_attribute() {
        let r = Rules::parse("[[ignore]]\npaths = [\"tmp/**\"]\nattributes = [\"mode\"]").unwrap();
        assert!(!r.compares(b"tmp/x", Attr::Mode));
        assert!(r.compares(b"tmp/x", Attr::Sha256));
        assert!(r.compares(b"etc/x", Attr::Mode));
    }
}
