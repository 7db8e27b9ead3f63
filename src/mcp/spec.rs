//! Which server to start: a command line, or a named entry of an MCP host's
//! configuration file.

use super::error::{CommandProblem, McpError};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// The largest host configuration file read (VS Code settings files can be
/// large, but not this large).
const MAX_HOST_CONFIG_BYTES: u64 = 16 << 20;

/// How to start a stdio MCP server. The child inherits vouch's environment,
/// with `env` set on top of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSpec {
    pub program: String,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub cwd: Option<PathBuf>,
}

impl ServerSpec {
    /// The `PATH` the server is started with: the entry's own, if it sets
    /// one (the last assignment wins), else `None` (the process's).
    pub fn path_var(&self) -> Option<&str> {
        self.env
            .iter()
            .rev()
            .find(|(k, _)| k == "PATH")
            .map(|(_, v)| v.as_str())
    }

    /// Splits a command line like `npx -y @modelcontextprotocol/server-everything`
    /// into program and arguments, as a POSIX shell splits words: white
    /// space separates words; `'…'` is literal; in `"…"` a backslash escapes
    /// only `"`, `\`, `$`, `` ` `` and a newline; elsewhere a backslash
    /// escapes the next character (backslash-newline is removed). Nothing
    /// is expanded (no variables, globs, `~` or command substitution) and
    /// no shell runs.
    pub fn parse_command(line: &str) -> Result<ServerSpec, McpError> {
        let words = split_words(line).map_err(|problem| McpError::InvalidCommand { problem })?;
        let mut words = words.into_iter();
        let program = words.next().ok_or(McpError::InvalidCommand {
            problem: CommandProblem::Empty,
        })?;
        Ok(ServerSpec {
            program,
            args: words.collect(),
            env: Vec::new(),
            cwd: None,
        })
    }

    /// The server `name` of an MCP host's configuration file:
    ///
    /// * Claude Desktop, Cursor: `{"mcpServers": {NAME: {command, args, env}}}`;
    /// * VS Code `.vscode/mcp.json`: `{"servers": {NAME: {"type": "stdio", command, args, env, cwd}}}`;
    /// * VS Code `settings.json`: `{"mcp": {"servers": …}}` (or the key `"mcp.servers"`).
    ///
    /// Comments (`//`, `/* */`) and trailing commas, which VS Code allows,
    /// are accepted. Entries with a `url` or a `type` other than `stdio`
    /// are refused ([`McpError::HostConfigNotStdio`]), and so are values
    /// holding host variables such as `${workspaceFolder}` or an `envFile`,
    /// which only the host can resolve. A relative `cwd` is taken relative
    /// to the directory holding the file.
    pub fn from_host_config(path: &Path, name: &str) -> Result<ServerSpec, McpError> {
        let doc = read_host_config(path)?;
        let sections = host_sections(path, &doc)?;
        let Some(entry) = sections.iter().find_map(|s| s.get(name)) else {
            let mut available: Vec<String> =
                sections.iter().flat_map(|s| s.keys().cloned()).collect();
            available.sort();
            available.dedup();
            return Err(McpError::HostConfigUnknownServer {
                path: path.to_path_buf(),
                name: name.to_owned(),
                available,
            });
        };
        entry_to_spec(path, name, entry)
    }

    /// A stable one-line description used as the target name: program and
    /// arguments, each quoted for a POSIX shell when needed (so
    /// [`ServerSpec::parse_command`] reads it back), joined by spaces.
    /// Environment and working directory are not part of it. Control
    /// characters (a newline, say) are written as `\u{…}` escapes inside
    /// the quotes to keep the line one line; such a word does not read
    /// back unchanged.
    pub fn display(&self) -> String {
        std::iter::once(&self.program)
            .chain(&self.args)
            .map(|w| shell_quote(w))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// One server of a host configuration: its name, and how to start it or
/// why it cannot be.
pub type HostEntry = (String, Result<ServerSpec, McpError>);

/// Every server of an MCP host's configuration file (the formats of
/// [`ServerSpec::from_host_config`]), in name order, each converted or
/// with the reason it cannot be (a remote or non-stdio entry, say).
pub fn host_config_servers(path: &Path) -> Result<Vec<HostEntry>, McpError> {
    let doc = read_host_config(path)?;
    let sections = host_sections(path, &doc)?;
    let mut names: Vec<&String> = sections.iter().flat_map(|s| s.keys()).collect();
    names.sort();
    names.dedup();
    Ok(names
        .into_iter()
        .map(|n| {
            let entry = sections.iter().find_map(|s| s.get(n));
            let spec = match entry {
                Some(e) => entry_to_spec(path, n, e),
                None => Err(McpError::HostConfigUnknownServer {
                    path: path.to_path_buf(),
                    name: n.clone(),
                    available: Vec::new(),
                }),
            };
            (n.clone(), spec)
        })
        .collect())
}

fn read_host_config(path: &Path) -> Result<Value, McpError> {
    let bytes = crate::fs::read_bounded(path, MAX_HOST_CONFIG_BYTES).map_err(|e| {
        McpError::HostConfigRead {
            path: path.to_path_buf(),
            message: e.to_string(),
        }
    })?;
    let json_err = |message: String| McpError::HostConfigJson {
        path: path.to_path_buf(),
        message,
    };
    let text = std::str::from_utf8(&bytes).map_err(|e| json_err(e.to_string()))?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let plain = strip_jsonc(text).map_err(|m| json_err(m.to_owned()))?;
    let doc: Value = serde_json::from_str(&plain).map_err(|e| json_err(e.to_string()))?;
    Ok(doc)
}

fn host_sections<'a>(path: &Path, doc: &'a Value) -> Result<Vec<&'a Map<String, Value>>, McpError> {
    let mut sections: Vec<&Map<String, Value>> = Vec::new();
    if let Some(top) = doc.as_object() {
        if let Some(Value::Object(m)) = top.get("mcpServers") {
            sections.push(m);
        }
        if let Some(Value::Object(m)) = top.get("servers") {
            sections.push(m);
        }
        if let Some(Value::Object(mcp)) = top.get("mcp")
            && let Some(Value::Object(m)) = mcp.get("servers")
        {
            sections.push(m);
        }
        if let Some(Value::Object(m)) = top.get("mcp.servers") {
            sections.push(m);
        }
    }
    if sections.is_empty() {
        return Err(McpError::HostConfigNoServers {
            path: path.to_path_buf(),
        });
    }
    Ok(sections)
}

fn shell_quote(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "@%+=:,./_-".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        return word.to_owned();
    }
    let mut out = String::with_capacity(word.len() + 2);
    out.push('\'');
    for c in word.chars() {
        match c {
            '\'' => out.push_str("'\\''"),
            c if c.is_control() => out.push_str(&c.escape_unicode().to_string()),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

fn split_words(line: &str) -> Result<Vec<String>, CommandProblem> {
    let mut words = Vec::new();
    let mut word = String::new();
    // A word has started (an empty quoted word `''` is still a word).
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' | '\r' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return Err(CommandProblem::UnterminatedQuote),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => word.push(c),
                            Some('\n') => {}
                            Some(c) => {
                                word.push('\\');
                                word.push(c);
                            }
                            None => return Err(CommandProblem::UnterminatedQuote),
                        },
                        Some(c) => word.push(c),
                        None => return Err(CommandProblem::UnterminatedQuote),
                    }
                }
            }
            '\\' => match chars.next() {
                Some('\n') => {}
                Some(c) => {
                    in_word = true;
                    word.push(c);
                }
                None => return Err(CommandProblem::TrailingBackslash),
            },
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    if words.is_empty() {
        return Err(CommandProblem::Empty);
    }
    Ok(words)
}

/// JSON with comments and trailing commas (VS Code's "JSONC") to JSON:
/// comments become spaces (newlines kept, so serde_json's line numbers
/// still point into the file) and a comma followed only by white space or
/// comments before `}` or `]` is dropped. Strings are copied untouched.
fn strip_jsonc(text: &str) -> Result<String, &'static str> {
    let b = text.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(b.len());
    let mut i = 0;
    // Index in `out` of a comma that may turn out to be trailing.
    let mut pending_comma: Option<usize> = None;
    while i < b.len() {
        match b[i] {
            b'"' => {
                pending_comma = None;
                let start = i;
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                if i >= b.len() {
                    return Err("a string is not closed");
                }
                i += 1;
                out.extend_from_slice(&b[start..i]);
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    out.push(b' ');
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let Some(len) = memchr::memmem::find(&b[i + 2..], b"*/") else {
                    return Err("a /* comment is not closed");
                };
                for &c in &b[i..i + 2 + len + 2] {
                    out.push(if c == b'\n' { b'\n' } else { b' ' });
                }
                i += len + 4;
            }
            b',' => {
                pending_comma = Some(out.len());
                out.push(b',');
                i += 1;
            }
            b'}' | b']' => {
                if let Some(at) = pending_comma.take() {
                    out[at] = b' ';
                }
                out.push(b[i]);
                i += 1;
            }
            c => {
                if !c.is_ascii_whitespace() {
                    pending_comma = None;
                }
                out.push(c);
                i += 1;
            }
        }
    }
    // Only ASCII was replaced, at ASCII positions: still UTF-8.
    String::from_utf8(out).map_err(|_| "not UTF-8")
}

fn entry_to_spec(path: &Path, name: &str, entry: &Value) -> Result<ServerSpec, McpError> {
    let bad = |field: &str, problem: &'static str| McpError::HostConfigEntry {
        path: path.to_path_buf(),
        name: name.to_owned(),
        field: field.to_owned(),
        problem,
    };
    let Some(obj) = entry.as_object() else {
        return Err(bad("the entry", "is not an object"));
    };
    let transport = match obj.get("type").or_else(|| obj.get("transport")) {
        None => None,
        Some(Value::String(t)) => Some(t.as_str()),
        Some(_) => return Err(bad("type", "is not a string")),
    };
    match transport {
        Some("stdio") | None if obj.contains_key("command") => {}
        Some(t) if t != "stdio" => {
            return Err(McpError::HostConfigNotStdio {
                path: path.to_path_buf(),
                name: name.to_owned(),
                transport: t.to_owned(),
            });
        }
        _ if obj.contains_key("url") || obj.contains_key("serverUrl") => {
            return Err(McpError::HostConfigNotStdio {
                path: path.to_path_buf(),
                name: name.to_owned(),
                transport: "url (remote)".to_owned(),
            });
        }
        _ => return Err(bad("command", "is missing")),
    }
    let variable = |s: &str| -> Result<(), McpError> {
        if let Some(at) = s.find("${") {
            let rest = &s[at..];
            let end = rest.find('}').map_or(rest.len(), |e| e + 1);
            return Err(McpError::HostConfigVariable {
                path: path.to_path_buf(),
                name: name.to_owned(),
                variable: rest[..end].to_owned(),
            });
        }
        Ok(())
    };
    let program = match obj.get("command") {
        Some(Value::String(c)) if !c.is_empty() => c.clone(),
        Some(Value::String(_)) => return Err(bad("command", "is empty")),
        _ => return Err(bad("command", "is not a string")),
    };
    variable(&program)?;
    let mut args = Vec::new();
    match obj.get("args") {
        None | Some(Value::Null) => {}
        Some(Value::Array(a)) => {
            for v in a {
                let Value::String(s) = v else {
                    return Err(bad("args", "has an element that is not a string"));
                };
                variable(s)?;
                args.push(s.clone());
            }
        }
        Some(_) => return Err(bad("args", "is not an array")),
    }
    let mut env = Vec::new();
    match obj.get("env") {
        None | Some(Value::Null) => {}
        Some(Value::Object(m)) => {
            for (k, v) in m {
                let Value::String(s) = v else {
                    return Err(bad("env", "has a value that is not a string"));
                };
                variable(s)?;
                env.push((k.clone(), s.clone()));
            }
        }
        Some(_) => return Err(bad("env", "is not an object")),
    }
    if obj.contains_key("envFile") {
        return Err(bad(
            "envFile",
            "is not supported (vouch does not read env files); use env",
        ));
    }
    let cwd = match obj.get("cwd") {
        None | Some(Value::Null) => None,
        Some(Value::String(c)) => {
            variable(c)?;
            let c = Path::new(c);
            Some(if c.is_relative() {
                path.parent().unwrap_or(Path::new("")).join(c)
            } else {
                c.to_path_buf()
            })
        }
        Some(_) => return Err(bad("cwd", "is not a string")),
    };
    Ok(ServerSpec {
        program,
        args,
        env,
        cwd,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        split_words(s).unwrap()
    }

    #[test]
    fn splits_like_a_shell() {
        assert_eq!(words("a  b\tc"), ["a", "b", "c"]);
        assert_eq!(words(r#"a 'b c' "d e""#), ["a", "b c", "d e"]);
        assert_eq!(words(r#"a\ b"#), ["a b"]);
        assert_eq!(words(r#""a\"b" 'c\d'"#), ["a\"b", "c\\d"]);
        assert_eq!(words(r#""\x\$""#), ["\\x$"]);
        assert_eq!(words(r#"a'b'"c" '' """#), ["abc", "", ""]);
        assert_eq!(words("a \\\nb"), ["a", "b"]);
        assert_eq!(words("$HOME ~ *"), ["$HOME", "~", "*"]);
        assert_eq!(split_words("  "), Err(CommandProblem::Empty));
        assert_eq!(split_words("'a"), Err(CommandProblem::UnterminatedQuote));
        assert_eq!(split_words("\"a\\"), Err(CommandProblem::UnterminatedQuote));
        assert_eq!(split_words("a\\"), Err(CommandProblem::TrailingBackslash));
    }

    #[test]
    fn display_reads_back() {
        for args in [
            vec!["-y", "@modelcontextprotocol/server-everything"],
            vec!["it's", "a b", "", "$x", "\"q\"", "back\\slash", "ü"],
        ] {
            let spec = ServerSpec {
                program: "npx".into(),
                args: args.iter().map(|s| s.to_string()).collect(),
                env: vec![],
                cwd: None,
            };
            let shown = spec.display();
            assert_eq!(ServerSpec::parse_command(&shown).unwrap(), spec, "{shown}");
        }
        let spec = ServerSpec::parse_command("x 'a\nb'").unwrap();
        assert_eq!(spec.display(), "x 'a\\u{a}b'");
    }

    #[test]
    fn jsonc() {
        let s = strip_jsonc("{\"a\": [1, 2, ], // c\n \"b\": \"//x,}\" /* y\n */, }").unwrap();
        let v: Value = serde_json::from_str(&s).unwrap();
        assert_eq!(v, serde_json::json!({"a": [1, 2], "b": "//x,}"}));
    }
}
