//! Recognising `vouch wrap` in a server's command line, so that neither
//! `vouch scan` nor a drift check of an MCP server ever starts the wrapper
//! (the MCP client's transport applies [`classify`] to every command it
//! starts: a wrap entry's server is started directly, any other vouch
//! command line is refused).
//!
//! A host configuration whose entry is `vouch wrap --log prod.jsonl --key
//! mcp.key ... -- SERVER ARGS` would, if scanned by running it, have the
//! wrapper pin every tool and write its session into the production log
//! before anyone reviewed anything. A scan must not change evidence, so
//! [`classify`] looks at the command line first:
//!
//! - `vouch wrap OPTIONS -- SERVER ARGS`, where the program's file name is
//!   `vouch` (`/usr/local/bin/vouch`, `vouch.exe`), optionally behind `env
//!   NAME=VALUE...`: the options are parsed as `vouch wrap` parses them
//!   (every flag it has, `--flag VALUE` and `--flag=VALUE`, required ones
//!   present, none twice) and the scan lists SERVER ARGS directly, with the
//!   entry's environment and working directory (the wrapper's child
//!   inherits both). [`WrapInvocation::wrapped`] says by which log,
//!   policy, key and id the entry is wrapped.
//! - Anything else that runs vouch: the program is `vouch` with a
//!   subcommand other than `wrap` (none of them is an MCP server, and some
//!   append to logs), or the words `vouch` and then `wrap` appear anywhere
//!   in the command line, also inside one argument such as `sh -c "vouch
//!   wrap ..."` or behind `npx`, `sudo` or `env -i`: refused
//!   ([`WrapEntryError`]), never started.
//! - Everything else is an ordinary server: `Ok(None)`.
//!
//! What is not caught: a wrapper reached under another name (a symlink
//! or script not called `vouch`, a shell alias). The refusal is
//! deliberately broad: a server whose arguments merely mention a path
//! ending in `/vouch` and, later, the word `wrap` is not scanned either
//! (scan its command with `vouch scan -- ...` after renaming, or a saved
//! listing).
//!
//! The parser mirrors the binary's clap definition of `vouch wrap`
//! (`src/bin/vouch/wrap.rs`), whose tests check every flag against
//! [`VALUE_OPTIONS`] and [`SWITCHES`] and a table of command lines
//! against clap's own parse.

use serde::Serialize;

/// The options of `vouch wrap` that take a value.
pub const VALUE_OPTIONS: &[&str] = &[
    "policy",
    "log",
    "key",
    "id",
    "max-message-bytes",
    "checkpoint-every",
    "checkpoint-interval",
    "ask-timeout",
    "list-timeout",
];

/// The options of `vouch wrap` that take none.
pub const SWITCHES: &[&str] = &["relist-before-call", "no-tty", "require-approval"];

/// The options `vouch wrap` requires.
const REQUIRED: &[&str] = &["policy", "log", "key", "id"];

/// What the report says about a wrapped entry: where its evidence goes.
/// Paths are as written in the configuration (relative ones are relative
/// to the host's working directory).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Wrapped {
    /// The wrapper program as configured (`vouch`, `/usr/local/bin/vouch`).
    pub vouch: String,
    pub log: String,
    pub policy: String,
    pub key: String,
    pub id: String,
}

/// A parsed `vouch wrap` command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrapInvocation {
    pub wrapped: Wrapped,
    /// The server's command line, after `--`: what a scan starts instead.
    pub server: Vec<String>,
    /// `NAME=VALUE` words of an `env` in front of vouch: the server
    /// inherits them through the wrapper.
    pub env: Vec<(String, String)>,
}

/// Why a command line that runs vouch is not started by a scan.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WrapEntryError {
    /// `vouch wrap` with no `--` before the server command.
    #[error("runs `vouch wrap` but has no `--` before the server command")]
    NoSeparator,
    /// Nothing after `--`.
    #[error("runs `vouch wrap` with no server command after `--`")]
    NoServer,
    /// A required option is missing (the wrapper would not start).
    #[error("runs `vouch wrap` without --{option}")]
    MissingOption { option: &'static str },
    /// An option that takes a value has none.
    #[error("runs `vouch wrap` with no value for --{option}")]
    MissingValue { option: String },
    /// A value given to an option that takes none.
    #[error("runs `vouch wrap` with a value for --{option}, which takes none")]
    UnexpectedValue { option: String },
    /// An option `vouch wrap` does not have.
    #[error("runs `vouch wrap` with an option it does not have: {option}")]
    UnknownOption { option: String },
    /// An option given twice.
    #[error("runs `vouch wrap` with --{option} twice")]
    Repeated { option: String },
    /// A word before `--` that is not an option.
    #[error("runs `vouch wrap` with an unexpected argument before `--`: {word:?}")]
    Unexpected { word: String },
    /// `--help`: prints and exits.
    #[error("runs `vouch wrap {flag}`, which starts no server")]
    Help { flag: String },
    /// vouch with another subcommand.
    #[error("runs `vouch {subcommand}`, which is not an MCP server")]
    NotAServer { subcommand: String },
    /// `vouch ... wrap` somewhere in a command line of another form.
    #[error(
        "runs `vouch wrap` through {launcher:?}, a form vouch scan does not take apart (starting it would write to the wrapper's log); scan the server's own command with `vouch scan -- SERVER ARGS`"
    )]
    Launcher { launcher: String },
    /// The wrapped server is itself a vouch command line.
    #[error("the server vouch wrap runs is itself vouch: {inner}")]
    Nested { inner: Box<WrapEntryError> },
}

impl WrapEntryError {
    /// The stable reason code (in `vouch scan --format json`).
    pub fn code(&self) -> &'static str {
        match self {
            WrapEntryError::NoSeparator => "wrap_no_separator",
            WrapEntryError::NoServer => "wrap_no_server",
            WrapEntryError::MissingOption { .. } => "wrap_missing_option",
            WrapEntryError::MissingValue { .. } => "wrap_missing_value",
            WrapEntryError::UnexpectedValue { .. } => "wrap_unexpected_value",
            WrapEntryError::UnknownOption { .. } => "wrap_unknown_option",
            WrapEntryError::Repeated { .. } => "wrap_repeated_option",
            WrapEntryError::Unexpected { .. } => "wrap_unexpected_argument",
            WrapEntryError::Help { .. } => "wrap_help",
            WrapEntryError::NotAServer { .. } => "vouch_not_a_server",
            WrapEntryError::Launcher { .. } => "wrap_launcher",
            WrapEntryError::Nested { .. } => "wrap_nested",
        }
    }
}

/// The file name of a program path (either separator).
fn file_name(word: &str) -> &str {
    word.rsplit(['/', '\\']).next().unwrap_or(word)
}

fn is_vouch(word: &str) -> bool {
    matches!(file_name(word), "vouch" | "vouch.exe")
}

/// Bytes every vouch binary holds (this constant): how a vouch reached
/// under another name (a symlink, a hard link, a copy, `/proc/self/exe`)
/// is still recognised.
const IDENTITY: &[u8] = b"vouch-binary-identity/1:mcp-never-start-the-wrapper";

/// The largest program file searched for [`IDENTITY`].
const MAX_IDENTITY_SCAN: u64 = 1 << 30;

/// [`classify`] of the command line a server entry would start, with the
/// program itself identified by what it is, not by its name: when the
/// program (or the one after `env NAME=VALUE...`) resolves, through `cwd`
/// and `PATH`, to the running vouch binary or to any file holding vouch's
/// identity bytes, it is classified as `vouch`. What is still not caught:
/// a script or another program that runs vouch itself (`sh srv.sh`).
pub fn classify_program(
    argv: &[String],
    cwd: Option<&std::path::Path>,
    path_var: Option<&str>,
) -> Result<Option<WrapInvocation>, WrapEntryError> {
    let mut argv = argv.to_vec();
    let mut at = 0;
    if argv.first().is_some_and(|p| file_name(p) == "env") {
        at = 1;
        while argv.get(at).and_then(|w| assignment(w)).is_some() {
            at += 1;
        }
    }
    if let Some(program) = argv.get(at)
        && !is_vouch(program)
        && resolve(program, cwd, path_var).is_some_and(|p| is_vouch_binary(&p))
    {
        argv[at] = "vouch".to_owned();
    }
    classify(&argv)
}

/// Where `program` would be found (a path with a `/` as is, relative to
/// `cwd`; a bare name on `PATH`).
fn resolve(
    program: &str,
    cwd: Option<&std::path::Path>,
    path_var: Option<&str>,
) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let runnable = |p: &std::path::Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        let p = std::path::Path::new(program);
        let p = match cwd {
            Some(dir) if p.is_relative() => dir.join(p),
            _ => p.to_path_buf(),
        };
        return runnable(&p).then_some(p);
    }
    let path = path_var
        .map(str::to_owned)
        .or_else(|| std::env::var("PATH").ok())?;
    path.split(':')
        .filter(|d| !d.is_empty())
        .map(|d| std::path::Path::new(d).join(program))
        .find(|p| runnable(p))
}

/// Whether the file at `path` is vouch: the running binary (same file), or
/// a file holding [`IDENTITY`] (read in bounded chunks; results cached by
/// device, inode, size and modification time).
fn is_vouch_binary(path: &std::path::Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    if !meta.is_file() || meta.len() > MAX_IDENTITY_SCAN {
        return false;
    }
    if let Ok(me) = std::env::current_exe().and_then(std::fs::metadata)
        && (me.dev(), me.ino()) == (meta.dev(), meta.ino())
    {
        return true;
    }
    type Key = (u64, u64, u64, i64, i64);
    static SEEN: std::sync::Mutex<Vec<(Key, bool)>> = std::sync::Mutex::new(Vec::new());
    let key: Key = (
        meta.dev(),
        meta.ino(),
        meta.len(),
        meta.mtime(),
        meta.mtime_nsec(),
    );
    if let Ok(seen) = SEEN.lock()
        && let Some((_, found)) = seen.iter().find(|(k, _)| *k == key)
    {
        return *found;
    }
    let found = holds_identity(path);
    if let Ok(mut seen) = SEEN.lock()
        && seen.len() < 1024
    {
        seen.push((key, found));
    }
    found
}

fn holds_identity(path: &std::path::Path) -> bool {
    use std::io::Read;
    let Ok(file) = crate::fs::open_regular(path) else {
        return false;
    };
    let mut file = file.take(MAX_IDENTITY_SCAN);
    let finder = memchr::memmem::Finder::new(IDENTITY);
    let mut buf = vec![0u8; 1 << 20];
    let mut keep = 0;
    loop {
        match file.read(&mut buf[keep..]) {
            Ok(0) | Err(_) => return false,
            Ok(n) => {
                let end = keep + n;
                if finder.find(&buf[..end]).is_some() {
                    return true;
                }
                // Keep the tail: the identity may straddle two reads.
                let tail = IDENTITY.len().min(end);
                buf.copy_within(end - tail..end, 0);
                keep = tail;
            }
        }
    }
}

/// `NAME=VALUE` with a shell variable name.
fn assignment(word: &str) -> Option<(String, String)> {
    let (name, value) = word.split_once('=')?;
    let mut chars = name.chars();
    let first = chars.next()?;
    let valid = (first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    valid.then(|| (name.to_owned(), value.to_owned()))
}

/// Whether the words, also split at white space and shell punctuation
/// inside each argument, contain a `vouch` program followed later by
/// `wrap`.
fn mentions_vouch_wrap(argv: &[String]) -> bool {
    let mut seen_vouch = false;
    for word in argv {
        for token in word.split(|c: char| c.is_whitespace() || "'\"`;&|()<>$=".contains(c)) {
            if token.is_empty() {
                continue;
            }
            if seen_vouch && token == "wrap" {
                return true;
            }
            if is_vouch(token) {
                seen_vouch = true;
            }
        }
    }
    false
}

/// Whether `argv` (program and arguments) runs `vouch wrap`, and if so
/// what it wraps (see the module docs). `Ok(None)`: an ordinary server.
pub fn classify(argv: &[String]) -> Result<Option<WrapInvocation>, WrapEntryError> {
    let Some(program) = argv.first() else {
        return Ok(None);
    };
    // `env NAME=VALUE... vouch ...`: the assignments reach the server.
    let (env, at) = if file_name(program) == "env" {
        let mut env = Vec::new();
        let mut at = 1;
        while let Some(kv) = argv.get(at).and_then(|w| assignment(w)) {
            env.push(kv);
            at += 1;
        }
        (env, at)
    } else {
        (Vec::new(), 0)
    };
    match argv.get(at) {
        Some(vouch) if is_vouch(vouch) => {
            let rest = &argv[at + 1..];
            match rest.first().map(String::as_str) {
                Some("wrap") => {}
                Some(sub) => {
                    return Err(WrapEntryError::NotAServer {
                        subcommand: sub.to_owned(),
                    });
                }
                None => {
                    return Err(WrapEntryError::NotAServer {
                        subcommand: String::new(),
                    });
                }
            }
            let inv = parse_wrap(vouch, &rest[1..], env)?;
            // The wrapped server must not be vouch either.
            if mentions_vouch_wrap(&inv.server) || inv.server.first().is_some_and(|p| is_vouch(p)) {
                let inner = match classify(&inv.server) {
                    Err(e) => e,
                    Ok(_) => WrapEntryError::Launcher {
                        launcher: inv.server.first().cloned().unwrap_or_default(),
                    },
                };
                return Err(WrapEntryError::Nested {
                    inner: Box::new(inner),
                });
            }
            Ok(Some(inv))
        }
        _ if mentions_vouch_wrap(argv) => Err(WrapEntryError::Launcher {
            launcher: program.clone(),
        }),
        _ => Ok(None),
    }
}

/// The arguments of `vouch wrap` (after `wrap`), as the binary's clap
/// definition reads them.
fn parse_wrap(
    vouch: &str,
    args: &[String],
    env: Vec<(String, String)>,
) -> Result<WrapInvocation, WrapEntryError> {
    let mut values: Vec<(&'static str, String)> = Vec::new();
    let mut switches: Vec<&'static str> = Vec::new();
    let mut i = 0;
    let server = loop {
        let Some(word) = args.get(i) else {
            return Err(WrapEntryError::NoSeparator);
        };
        i += 1;
        if word == "--" {
            break &args[i..];
        }
        if word == "-h" || word == "--help" {
            return Err(WrapEntryError::Help { flag: word.clone() });
        }
        let Some(long) = word.strip_prefix("--") else {
            return Err(if word.starts_with('-') && word.len() > 1 {
                WrapEntryError::UnknownOption {
                    option: word.clone(),
                }
            } else if !args[i..].iter().any(|w| w == "--") {
                // The server command without the `--` before it.
                WrapEntryError::NoSeparator
            } else {
                WrapEntryError::Unexpected { word: word.clone() }
            });
        };
        let (name, inline) = match long.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (long, None),
        };
        if let Some(&option) = VALUE_OPTIONS.iter().find(|o| **o == name) {
            let value = match inline {
                Some(v) => v.to_owned(),
                None => {
                    // clap takes a following word that looks like a flag
                    // for a missing value.
                    match args.get(i) {
                        Some(v) if !v.starts_with('-') => {
                            i += 1;
                            v.clone()
                        }
                        _ => {
                            return Err(WrapEntryError::MissingValue {
                                option: name.to_owned(),
                            });
                        }
                    }
                }
            };
            if value.is_empty() {
                return Err(WrapEntryError::MissingValue {
                    option: name.to_owned(),
                });
            }
            if values.iter().any(|(o, _)| *o == option) {
                return Err(WrapEntryError::Repeated {
                    option: name.to_owned(),
                });
            }
            values.push((option, value));
        } else if let Some(&switch) = SWITCHES.iter().find(|o| **o == name) {
            if inline.is_some() {
                return Err(WrapEntryError::UnexpectedValue {
                    option: name.to_owned(),
                });
            }
            if switches.contains(&switch) {
                return Err(WrapEntryError::Repeated {
                    option: name.to_owned(),
                });
            }
            switches.push(switch);
        } else {
            return Err(WrapEntryError::UnknownOption {
                option: word.clone(),
            });
        }
    };
    let get = |option: &'static str| -> Result<String, WrapEntryError> {
        values
            .iter()
            .find(|(o, _)| *o == option)
            .map(|(_, v)| v.clone())
            .ok_or(WrapEntryError::MissingOption { option })
    };
    for option in REQUIRED {
        get(option)?;
    }
    if server.is_empty() {
        return Err(WrapEntryError::NoServer);
    }
    Ok(WrapInvocation {
        wrapped: Wrapped {
            vouch: vouch.to_owned(),
            log: get("log")?,
            policy: get("policy")?,
            key: get("key")?,
            id: get("id")?,
        },
        server: server.to_vec(),
        env,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    const WRAP: &str = "wrap --policy p.toml --log prod.jsonl --key mcp.key --id fs";

    #[test]
    fn ordinary_servers_are_not_wrapped() {
        for cmd in [
            "npx -y @modelcontextprotocol/server-filesystem /srv",
            "node server.js --wrap",
            "uvx vouch-like-server wrap",
            "/opt/vouched/bin/server wrap",
        ] {
            assert_eq!(classify(&words(cmd)), Ok(None), "{cmd}");
        }
        assert_eq!(classify(&[]), Ok(None));
    }

    #[test]
    fn a_wrap_entry_names_its_server_and_evidence() {
        for program in ["vouch", "/usr/local/bin/vouch", "C:\\tools\\vouch.exe"] {
            let inv = classify(&words(&format!(
                "{program} {WRAP} --no-tty --checkpoint-every=10 -- npx -y server --flag"
            )))
            .unwrap()
            .unwrap();
            assert_eq!(inv.server, words("npx -y server --flag"));
            assert_eq!(
                inv.wrapped,
                Wrapped {
                    vouch: program.into(),
                    log: "prod.jsonl".into(),
                    policy: "p.toml".into(),
                    key: "mcp.key".into(),
                    id: "fs".into(),
                }
            );
            assert!(inv.env.is_empty());
        }
        // `--` inside the server's own arguments stays there.
        let inv = classify(&words(&format!("vouch {WRAP} -- srv -- x")))
            .unwrap()
            .unwrap();
        assert_eq!(inv.server, words("srv -- x"));
        // Behind `env NAME=VALUE`.
        let inv = classify(&words(&format!(
            "/usr/bin/env A=1 B_2=x=y vouch {WRAP} -- srv"
        )))
        .unwrap()
        .unwrap();
        assert_eq!(
            inv.env,
            vec![("A".into(), "1".into()), ("B_2".into(), "x=y".into())]
        );
        assert_eq!(inv.server, words("srv"));
    }

    #[test]
    fn malformed_wrap_entries_are_refused() {
        let cases: &[(&str, &str)] = &[
            (
                "vouch wrap --policy p --log l --key k --id i srv",
                "wrap_no_separator",
            ),
            (
                "vouch wrap --policy p --log l --key k --id i srv -- x",
                "wrap_unexpected_argument",
            ),
            (
                "vouch wrap --policy p --log l --key k --id i",
                "wrap_no_separator",
            ),
            (
                "vouch wrap --policy p --log l --key k --id i --",
                "wrap_no_server",
            ),
            (
                "vouch wrap --policy p --log l --key k -- srv",
                "wrap_missing_option",
            ),
            (
                "vouch wrap --policy p --log --key k --id i -- srv",
                "wrap_missing_value",
            ),
            (
                "vouch wrap --policy p --log= --key k --id i -- srv",
                "wrap_missing_value",
            ),
            (
                "vouch wrap --policy p --log l --key k --id",
                "wrap_missing_value",
            ),
            (
                "vouch wrap --policy p --log l --key k --id i --no-tty=1 -- srv",
                "wrap_unexpected_value",
            ),
            (
                "vouch wrap --policy p --log l --key k --id i --fast -- srv",
                "wrap_unknown_option",
            ),
            (
                "vouch wrap -p p --log l --key k --id i -- srv",
                "wrap_unknown_option",
            ),
            (
                "vouch wrap --log a --policy p --log l --key k --id i -- srv",
                "wrap_repeated_option",
            ),
            ("vouch wrap --help -- srv", "wrap_help"),
            ("vouch append --log l", "vouch_not_a_server"),
            ("vouch", "vouch_not_a_server"),
            ("npx vouch wrap --log l -- srv", "wrap_launcher"),
            (
                "sudo -u mcp /usr/bin/vouch wrap --log l -- srv",
                "wrap_launcher",
            ),
            ("env -i vouch wrap --log l -- srv", "wrap_launcher"),
            ("sh -c \"exec vouch wrap --log l -- srv\"", "wrap_launcher"),
            (
                "vouch wrap --policy p --log l --key k --id i -- vouch wrap --policy p --log m --key k --id j -- srv",
                "wrap_nested",
            ),
            (
                "vouch wrap --policy p --log l --key k --id i -- sh -c 'vouch wrap -- srv'",
                "wrap_nested",
            ),
        ];
        for (cmd, code) in cases {
            let argv: Vec<String> = if cmd.starts_with("sh -c") {
                vec![
                    "sh".into(),
                    "-c".into(),
                    "exec vouch wrap --log l -- srv".into(),
                ]
            } else {
                words(cmd)
            };
            let got = classify(&argv);
            assert_eq!(
                got.as_ref().err().map(WrapEntryError::code),
                Some(*code),
                "{cmd}: {got:?}"
            );
        }
    }
}
