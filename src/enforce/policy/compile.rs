//! Reading a policy: TOML positions for errors, and the compiler from the parsed spec to rules, globs, regexes and limits.

use super::*;

/// Turns byte spans into the file's line and column.
#[derive(Clone, Copy)]
pub(super) struct Locator<'a> {
    pub(super) text: &'a str,
    pub(super) path: &'a Path,
}

impl Locator<'_> {
    pub(super) fn error(&self, span: Option<Range<usize>>, problem: PolicyProblem) -> PolicyError {
        let (line, column) = match span {
            Some(span) => {
                let (l, c) = position(self.text, span.start);
                (Some(l), Some(c))
            }
            None => (None, None),
        };
        PolicyError {
            path: self.path.to_path_buf(),
            line,
            column,
            problem,
        }
    }

    pub(super) fn at<T>(&self, spanned: &Spanned<T>, problem: PolicyProblem) -> PolicyError {
        self.error(Some(spanned.span()), problem)
    }
}

/// 1-based line and column (in characters) of byte `offset`.
pub(super) fn position(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

pub(super) struct Compiler<'a> {
    pub(super) at: Locator<'a>,
    pub(super) regexes: usize,
}

impl Compiler<'_> {
    pub(super) fn policy(
        mut self,
        spec: spec::PolicySpec,
        text: &str,
    ) -> Result<Policy, PolicyError> {
        if *spec.version.get_ref() != 1 {
            return Err(self.at.at(
                &spec.version,
                PolicyProblem::UnsupportedVersion {
                    found: *spec.version.get_ref(),
                },
            ));
        }
        let default = spec.default.map_or(Action::Block, |d| *d.get_ref());
        let roots = self.roots(&spec.roots)?;
        let egress = match spec.egress {
            None => None,
            Some(e) => {
                let mut allow = Vec::new();
                for host in &e.allow {
                    allow.push(HostPattern::parse(host.get_ref()).map_err(|m| {
                        self.at.at(
                            host,
                            PolicyProblem::Invalid(format!(
                                "egress host {:?}: {m}",
                                host.get_ref()
                            )),
                        )
                    })?);
                }
                let tools = match &e.tools {
                    Some(t) => self.tools(t, "egress.tools")?,
                    None => Tools {
                        globs: vec!["*".to_owned()],
                        set: glob_set(&["*"])
                            .map_err(|m| self.at.error(None, PolicyProblem::Invalid(m)))?,
                    },
                };
                Some(Egress {
                    allow_text: e.allow.iter().map(|h| h.get_ref().clone()).collect(),
                    allow,
                    tools,
                })
            }
        };
        let mut ids = HashSet::new();
        let mut rules = Vec::new();
        for r in spec.rule {
            self.id(&r.id, &mut ids, "rule")?;
            rules.push(self.rule(r, &roots)?);
        }
        let mut limit_ids = HashSet::new();
        let mut limits = Vec::new();
        for l in spec.limit {
            self.id(&l.id, &mut limit_ids, "limit")?;
            limits.push(self.limit(l)?);
        }
        let mut vet = crate::vet::gate::VetOptions::default();
        if let Some(v) = &spec.vet {
            if let Some(b) = &v.block_at {
                vet.block_at = crate::vet::scan::Severity::parse(b.get_ref()).ok_or_else(|| {
                    self.at.at(
                        b,
                        PolicyProblem::Invalid(format!(
                            "vet.block_at {:?}: use low, medium, high or critical",
                            b.get_ref()
                        )),
                    )
                })?;
            }
            if let Some(c) = &v.on_change {
                vet.on_change = match c.get_ref().as_str() {
                    "withhold" => crate::vet::record::OnChange::Withhold,
                    "block_server" => crate::vet::record::OnChange::BlockServer,
                    other => {
                        return Err(self.at.at(
                            c,
                            PolicyProblem::Invalid(format!(
                                "vet.on_change {other:?}: use withhold or block_server"
                            )),
                        ));
                    }
                };
            }
            vet.require_approval = v.require_approval.unwrap_or(false);
        }
        Ok(Policy {
            digest: format!("sha256:{}", crate::hex::encode(&sha256(text.as_bytes()))),
            default,
            roots,
            egress,
            rules,
            limits,
            vet,
        })
    }

    pub(super) fn id(
        &self,
        id: &Spanned<String>,
        seen: &mut HashSet<String>,
        what: &'static str,
    ) -> Result<(), PolicyError> {
        let text = id.get_ref();
        let valid = !text.is_empty()
            && text.len() <= 64
            && text
                .bytes()
                .all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'_' | b'.' | b'-'));
        if !valid {
            return Err(self.at.at(
                id,
                PolicyProblem::Invalid(format!("{what} id {text:?}: use 1-64 of a-z 0-9 _ . -")),
            ));
        }
        if what == "rule" && (text == "default" || text == "egress") {
            return Err(self.at.at(
                id,
                PolicyProblem::Invalid(format!("rule id {text:?} is reserved")),
            ));
        }
        if !seen.insert(text.clone()) {
            return Err(self.at.at(
                id,
                PolicyProblem::DuplicateId {
                    what,
                    id: text.clone(),
                },
            ));
        }
        Ok(())
    }

    pub(super) fn roots(&self, roots: &[Spanned<String>]) -> Result<Vec<PathBuf>, PolicyError> {
        roots
            .iter()
            .map(|r| {
                paths::root(r.get_ref()).map_err(|m| {
                    self.at.at(
                        r,
                        PolicyProblem::Invalid(format!("root {:?}: {m}", r.get_ref())),
                    )
                })
            })
            .collect()
    }

    pub(super) fn tools(
        &self,
        tools: &Spanned<Vec<Spanned<String>>>,
        what: &str,
    ) -> Result<Tools, PolicyError> {
        if tools.get_ref().is_empty() {
            return Err(self.at.at(
                tools,
                PolicyProblem::Invalid(format!("{what} must name at least one tool glob")),
            ));
        }
        let mut builder = GlobSetBuilder::new();
        for g in tools.get_ref() {
            let glob = GlobBuilder::new(g.get_ref())
                .literal_separator(false)
                .build()
                .map_err(|e| {
                    self.at.at(
                        g,
                        PolicyProblem::BadGlob {
                            glob: g.get_ref().clone(),
                            message: e.kind().to_string(),
                        },
                    )
                })?;
            builder.add(glob);
        }
        let set = builder.build().map_err(|e| {
            self.at
                .at(tools, PolicyProblem::Invalid(format!("{what}: {e}")))
        })?;
        Ok(Tools {
            globs: tools
                .get_ref()
                .iter()
                .map(|g| g.get_ref().clone())
                .collect(),
            set,
        })
    }

    pub(super) fn pointer(
        &self,
        p: &Spanned<String>,
        wildcard: Wildcard,
    ) -> Result<Pointer, PolicyError> {
        Pointer::parse(p.get_ref(), wildcard).map_err(|message| {
            self.at.at(
                p,
                PolicyProblem::BadPointer {
                    pointer: p.get_ref().clone(),
                    message,
                },
            )
        })
    }

    pub(super) fn path_pointers(
        &self,
        ps: &[Spanned<String>],
    ) -> Result<Vec<Pointer>, PolicyError> {
        ps.iter()
            .map(|p| {
                let pointer = self.pointer(p, Wildcard::Allowed)?;
                if pointer.is_root() {
                    return Err(self.at.at(
                        p,
                        PolicyProblem::BadPointer {
                            pointer: String::new(),
                            message: "the whole arguments object is not a path".to_owned(),
                        },
                    ));
                }
                Ok(pointer)
            })
            .collect()
    }

    pub(super) fn rule(
        &mut self,
        r: spec::RuleSpec,
        top_roots: &[PathBuf],
    ) -> Result<Rule, PolicyError> {
        let tools = self.tools(&r.tools, "tools")?;
        let reason = match &r.reason {
            Some(text) => {
                let t = text.get_ref();
                if t.chars().any(char::is_control) || t.len() > 500 {
                    return Err(self.at.at(
                        text,
                        PolicyProblem::Invalid(
                            "a reason is one line of at most 500 bytes".to_owned(),
                        ),
                    ));
                }
                Some(t.clone())
            }
            None => None,
        };
        let path_outside = self.path_pointers(&r.path_outside)?;
        let path_inside = self.path_pointers(&r.path_inside)?;
        let roots = match &r.roots {
            Some(rs) => Some(self.roots(rs)?),
            None => None,
        };
        let effective = roots.as_deref().unwrap_or(top_roots);
        if effective.is_empty()
            && let Some(p) = r.path_outside.first().or(r.path_inside.first())
        {
            return Err(self.at.at(
                p,
                PolicyProblem::Invalid(format!(
                    "rule {:?} has path matchers but no roots (give `roots` at the top or in the rule)",
                    r.id.get_ref()
                )),
            ));
        }
        let mut matches = Vec::new();
        for (p, re) in &r.matches {
            let pointer = self.pointer(p, Wildcard::Refused)?;
            matches.push((pointer, self.regex(re)?));
        }
        let mut equals = Vec::new();
        for (p, v) in &r.equals {
            let pointer = self.pointer(p, Wildcard::Refused)?;
            let json = toml_to_json(v.get_ref()).map_err(|m| {
                self.at.at(
                    v,
                    PolicyProblem::Invalid(format!("equals {:?}: {m}", p.get_ref())),
                )
            })?;
            equals.push((pointer, json));
        }
        let exists = r
            .exists
            .iter()
            .map(|p| self.pointer(p, Wildcard::Refused))
            .collect::<Result<_, _>>()?;
        Ok(Rule {
            id: r.id.into_inner(),
            tools,
            action: r.action,
            reason,
            path_outside,
            path_inside,
            roots,
            matches,
            equals,
            exists,
        })
    }

    pub(super) fn regex(&mut self, re: &Spanned<String>) -> Result<regex::Regex, PolicyError> {
        self.regexes += 1;
        if self.regexes > MAX_REGEXES {
            return Err(self.at.at(
                re,
                PolicyProblem::Invalid(format!("more than {MAX_REGEXES} regexes")),
            ));
        }
        regex::RegexBuilder::new(re.get_ref())
            .size_limit(REGEX_SIZE_LIMIT)
            .dfa_size_limit(REGEX_DFA_LIMIT)
            .build()
            .map_err(|e| {
                let message = match e {
                    regex::Error::CompiledTooBig(limit) => {
                        format!("compiles to more than the {limit}-byte limit")
                    }
                    other => other
                        .to_string()
                        .lines()
                        .last()
                        .unwrap_or("does not compile")
                        .trim()
                        .to_owned(),
                };
                self.at.at(
                    re,
                    PolicyProblem::BadRegex {
                        regex: re.get_ref().clone(),
                        message,
                    },
                )
            })
    }

    pub(super) fn limit(&self, l: spec::LimitSpec) -> Result<Limit, PolicyError> {
        let tools = self.tools(&l.tools, "tools")?;
        let max = *l.max.get_ref();
        if !(0..=MAX_LIMIT).contains(&max) {
            return Err(self.at.at(
                &l.max,
                PolicyProblem::Invalid(format!("max must be 0 to {MAX_LIMIT}")),
            ));
        }
        let per = parse_window(l.per.get_ref()).ok_or_else(|| {
            self.at.at(
                &l.per,
                PolicyProblem::Invalid(format!(
                    "per {:?}: expected a positive number and s, m or h (\"30s\", \"1m\", \"2h\")",
                    l.per.get_ref()
                )),
            )
        })?;
        Ok(Limit {
            id: l.id.into_inner(),
            tools,
            max: usize::try_from(max).unwrap_or(usize::MAX),
            per,
            per_text: l.per.into_inner(),
        })
    }
}

pub(super) fn glob_set(globs: &[&str]) -> Result<GlobSet, String> {
    let mut b = GlobSetBuilder::new();
    for g in globs {
        b.add(
            GlobBuilder::new(g)
                .literal_separator(false)
                .build()
                .map_err(|e| e.to_string())?,
        );
    }
    b.build().map_err(|e| e.to_string())
}

/// `Ns`, `Nm`, `Nh` with N a positive integer (at most 1000 days).
pub(super) fn parse_window(text: &str) -> Option<Duration> {
    let unit = match text.as_bytes().last()? {
        b's' => 1,
        b'm' => 60,
        b'h' => 3600,
        _ => return None,
    };
    let digits = &text[..text.len() - 1];
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u64 = digits.parse().ok()?;
    let secs = n.checked_mul(unit)?;
    (secs > 0 && secs <= 1000 * 86_400).then(|| Duration::from_secs(secs))
}

pub(super) fn toml_to_json(v: &toml::Value) -> Result<serde_json::Value, &'static str> {
    use serde_json::Value;
    Ok(match v {
        toml::Value::String(s) => Value::String(s.clone()),
        toml::Value::Integer(i) => Value::from(*i),
        toml::Value::Float(f) => serde_json::Number::from_f64(*f)
            .map(Value::Number)
            .ok_or("nan and inf are not JSON")?,
        toml::Value::Boolean(b) => Value::Bool(*b),
        toml::Value::Datetime(_) => return Err("a TOML date-time is not a JSON value"),
        toml::Value::Array(items) => {
            Value::Array(items.iter().map(toml_to_json).collect::<Result<_, _>>()?)
        }
        toml::Value::Table(t) => Value::Object(
            t.iter()
                .map(|(k, v)| Ok::<_, &str>((k.clone(), toml_to_json(v)?)))
                .collect::<Result<_, _>>()?,
        ),
    })
}

pub(super) fn sha256(bytes: &[u8]) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(bytes).into()
}
