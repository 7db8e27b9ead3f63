//! `vouch::mcp::list` against real MCP stdio servers: the official
//! server-everything and server-filesystem (legacy era, v1 SDK), a server on
//! the v2 SDK (modern era), and the suite's own tests/peers/mcp/drift-server.mjs
//! in both eras, with its definition variants and hostile variants.
//! The peers are installed by scripts/setup-node-peers.sh; without node or
//! them a test prints a notice and passes, except under `CI=true`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use vouch::mcp::{Era, ListOptions, Listing, McpError, ServerSpec, list};

fn peer_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/mcp")
}

fn missing(test: &str, why: &str) -> bool {
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("{test}: {why}; required when CI=true");
    }
    eprintln!("NOTICE: {test} skipped: {why}");
    false
}

/// True when node and the installed MCP peers are there.
fn peers_or_skip(test: &str) -> bool {
    let node = Command::new("node")
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    let installed = peer_dir()
        .join("node_modules/@modelcontextprotocol/server/package.json")
        .is_file()
        && peer_dir()
            .join("node_modules/.bin/mcp-server-everything")
            .exists();
    match (node, installed) {
        (true, true) => true,
        (false, _) => missing(test, "node is not installed"),
        (true, false) => missing(
            test,
            "the MCP peers are not installed (run scripts/setup-node-peers.sh)",
        ),
    }
}

fn node(script: &str, args: &[&str]) -> ServerSpec {
    ServerSpec {
        program: "node".into(),
        args: std::iter::once(peer_dir().join(script).to_string_lossy().into_owned())
            .chain(args.iter().map(|s| s.to_string()))
            .collect(),
        env: vec![],
        cwd: None,
    }
}

fn drift_server(variant: &str, era: &str) -> ServerSpec {
    node("drift-server.mjs", &[variant, "--era", era])
}

/// Short timings for the suite's own server (it answers at once).
fn quick() -> ListOptions {
    ListOptions {
        timeout: Duration::from_secs(10),
        settle: Duration::from_millis(150),
        ..ListOptions::default()
    }
}

fn names(items: &[Value], field: &str) -> Vec<String> {
    items
        .iter()
        .map(|t| t[field].as_str().unwrap().to_owned())
        .collect()
}

fn tool<'a>(l: &'a Listing, name: &str) -> &'a Value {
    l.tools.iter().find(|t| t["name"] == name).unwrap()
}

fn expect_err(spec: &ServerSpec, opts: &ListOptions, code: &str, within: Duration) -> McpError {
    let start = Instant::now();
    let err = list(spec, opts).expect_err("listing must fail");
    let took = start.elapsed();
    assert_eq!(err.code(), code, "{err}");
    assert!(
        took < within,
        "{code} took {took:?} (limit {within:?}): {err}"
    );
    err
}

#[test]
fn server_everything_lists_13_tools_twice_identically() {
    if !peers_or_skip("server_everything_lists_13_tools_twice_identically") {
        return;
    }
    let spec = ServerSpec {
        program: peer_dir()
            .join("node_modules/.bin/mcp-server-everything")
            .to_string_lossy()
            .into_owned(),
        args: vec![],
        env: vec![],
        cwd: None,
    };
    let opts = ListOptions::default();
    let a = list(&spec, &opts).unwrap();
    let b = list(&spec, &opts).unwrap();
    assert_eq!(
        a.era,
        Era::Legacy {
            protocol_version: "2025-11-25".into()
        }
    );
    assert_eq!(
        a.server_info.as_ref().unwrap()["name"],
        "mcp-servers/everything"
    );
    assert_eq!(a.client_capabilities, json!({}));
    let tools = names(&a.tools, "name");
    assert_eq!(tools.len(), 13, "{tools:?}");
    for expected in ["echo", "get-env", "get-sum", "simulate-research-query"] {
        assert!(
            tools.iter().any(|t| t == expected),
            "{expected} not in {tools:?}"
        );
    }
    // Tools that need client capabilities vouch does not declare are absent.
    assert!(!tools.iter().any(|t| t == "get-roots-list"), "{tools:?}");
    // Unknown-to-rmcp fields survive: `execution` is kept as sent.
    assert_eq!(
        tool(&a, "simulate-research-query")["execution"]["taskSupport"],
        "required"
    );
    assert_eq!(
        serde_json::to_string(&a.tools).unwrap(),
        serde_json::to_string(&b.tools).unwrap()
    );
    assert_eq!(a.prompts, b.prompts);
    assert_eq!(a.resources, b.resources);
    assert_eq!(a.resource_templates, b.resource_templates);
    eprintln!(
        "server-everything: {} tools, {} prompts, {} resources, {} templates; notes {:?}",
        a.tools.len(),
        a.prompts.len(),
        a.resources.len(),
        a.resource_templates.len(),
        a.notes
    );
}

#[test]
fn server_filesystem_lists_14_tools_twice_identically() {
    if !peers_or_skip("server_filesystem_lists_14_tools_twice_identically") {
        return;
    }
    let spec = ServerSpec {
        program: peer_dir()
            .join("node_modules/.bin/mcp-server-filesystem")
            .to_string_lossy()
            .into_owned(),
        args: vec![peer_dir().to_string_lossy().into_owned()],
        env: vec![],
        cwd: None,
    };
    let opts = ListOptions::default();
    let a = list(&spec, &opts).unwrap();
    let b = list(&spec, &opts).unwrap();
    assert_eq!(a.era.protocol_version(), "2025-11-25");
    assert!(matches!(a.era, Era::Legacy { .. }));
    assert_eq!(
        a.server_info.as_ref().unwrap()["name"],
        "secure-filesystem-server"
    );
    let tools = names(&a.tools, "name");
    assert_eq!(tools.len(), 14, "{tools:?}");
    for expected in [
        "read_text_file",
        "write_file",
        "edit_file",
        "move_file",
        "list_allowed_directories",
    ] {
        assert!(
            tools.iter().any(|t| t == expected),
            "{expected} not in {tools:?}"
        );
    }
    assert_eq!(
        serde_json::to_string(&a.tools).unwrap(),
        serde_json::to_string(&b.tools).unwrap()
    );
    assert!(a.prompts.is_empty() && a.resources.is_empty());
}

#[test]
fn sdk_v2_server_is_listed_in_the_modern_era() {
    if !peers_or_skip("sdk_v2_server_is_listed_in_the_modern_era") {
        return;
    }
    let l = list(&node("sdk-v2-server.mjs", &[]), &quick()).unwrap();
    assert_eq!(
        l.era,
        Era::Modern {
            protocol_version: "2026-07-28".into()
        }
    );
    assert_eq!(
        l.server_info.as_ref().unwrap()["name"],
        "vouch-sdk-v2-test-server"
    );
    assert_eq!(names(&l.tools, "name"), ["echo", "add", "set_mode"]);
    assert_eq!(
        tool(&l, "add")["inputSchema"]["properties"]["b"]["default"],
        0.5
    );
    assert_eq!(names(&l.prompts, "name"), ["greet"]);
    assert_eq!(names(&l.resources, "uri"), ["test://readme"]);
    assert!(l.resource_templates.is_empty());
    assert!(l.notes.is_empty(), "{:?}", l.notes);
}

const BASE_TOOLS: [&str; 6] = [
    "search_notes",
    "set_theme",
    "delete_note",
    "summarize",
    "fetch_url",
    "get_time",
];

/// Lists every definition variant of the suite's server in one era and
/// checks each differs from `base` exactly where it should.
fn variants_in(era: &str) {
    let variants = [
        "base",
        "desc-changed",
        "param-added",
        "enum-widened",
        "required-dropped",
        "renamed",
        "removed",
        "annotation-changed",
    ];
    let listings: Vec<(&str, Listing)> = std::thread::scope(|s| {
        let handles: Vec<_> = variants
            .iter()
            .map(|v| s.spawn(move || (*v, list(&drift_server(v, era), &quick()))))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                let (v, r) = h.join().unwrap();
                (v, r.unwrap_or_else(|e| panic!("{v} ({era}): {e}")))
            })
            .collect()
    });
    let base = &listings[0].1;
    match era {
        "modern" => {
            assert_eq!(
                base.era,
                Era::Modern {
                    protocol_version: "2026-07-28".into()
                }
            );
            assert!(base.notes.is_empty(), "{:?}", base.notes);
        }
        _ => {
            assert_eq!(
                base.era,
                Era::Legacy {
                    protocol_version: "2025-11-25".into()
                }
            );
            assert_eq!(
                base.notes,
                ["server/discover: error -32601 (Method not found); legacy handshake"]
            );
        }
    }
    assert_eq!(
        base.server_info,
        Some(json!({"name": "vouch-drift-test-server", "version": "1.0.0"}))
    );
    assert_eq!(
        base.instructions.as_deref(),
        Some("Notes server for vouch tests.")
    );
    assert_eq!(base.client_capabilities, json!({}));
    assert_eq!(
        base.server_capabilities,
        json!({"tools": {"listChanged": true}, "prompts": {}, "resources": {}})
    );
    // Three pages of two tools, followed to the end, in server order.
    assert_eq!(names(&base.tools, "name"), BASE_TOOLS);
    assert_eq!(
        names(&base.prompts, "name"),
        ["summarize_notes", "daily_review"]
    );
    assert_eq!(
        names(&base.resources, "uri"),
        ["notes://index", "notes://settings"]
    );
    assert_eq!(
        names(&base.resource_templates, "uriTemplate"),
        ["notes://note/{id}"]
    );
    let delete = tool(base, "delete_note");
    assert_eq!(delete["execution"], json!({"taskSupport": "forbidden"}));
    assert_eq!(delete["annotations"]["destructiveHint"], true);
    let summarize = serde_json::to_string(tool(base, "summarize")).unwrap();
    assert!(summarize.contains(r#""default":0.7"#), "{summarize}");
    // No list metadata leaks into the items.
    assert!(base.tools.iter().all(|t| t.get("ttlMs").is_none()));

    for (variant, l) in &listings[1..] {
        let changed: Vec<String> = l
            .tools
            .iter()
            .filter(|t| !base.tools.contains(t))
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect();
        let gone: Vec<String> = base
            .tools
            .iter()
            .filter(|t| !l.tools.contains(t))
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(l.prompts, base.prompts, "{variant}");
        assert_eq!(l.resources, base.resources, "{variant}");
        let (want_changed, want_gone): (&[&str], &[&str]) = match *variant {
            "desc-changed" | "param-added" | "required-dropped" => {
                (&["search_notes"], &["search_notes"])
            }
            "enum-widened" => (&["set_theme"], &["set_theme"]),
            "annotation-changed" => (&["delete_note"], &["delete_note"]),
            "renamed" => (&["download_url"], &["fetch_url"]),
            "removed" => (&[], &["get_time"]),
            other => panic!("unexpected variant {other}"),
        };
        assert_eq!(changed, want_changed, "{variant} ({era})");
        assert_eq!(gone, want_gone, "{variant} ({era})");
    }
    let by = |v: &str| &listings.iter().find(|(n, _)| *n == v).unwrap().1;
    assert!(
        tool(by("desc-changed"), "search_notes")["description"]
            .as_str()
            .unwrap()
            .contains("notes@example.net")
    );
    assert_eq!(
        tool(by("param-added"), "search_notes")["inputSchema"]["properties"]["tag"]["type"],
        "string"
    );
    assert_eq!(
        tool(by("enum-widened"), "set_theme")["inputSchema"]["properties"]["mode"]["enum"],
        json!(["light", "dark", "system"])
    );
    assert!(
        tool(by("required-dropped"), "search_notes")["inputSchema"]
            .get("required")
            .is_none()
    );
    let mut renamed = tool(by("renamed"), "download_url").clone();
    renamed["name"] = json!("fetch_url");
    assert_eq!(&renamed, tool(base, "fetch_url"));
    assert_eq!(by("removed").tools.len(), 5);
    assert_eq!(
        tool(by("annotation-changed"), "delete_note")["annotations"]["destructiveHint"],
        false
    );
}

#[test]
fn own_server_variants_legacy_era() {
    if peers_or_skip("own_server_variants_legacy_era") {
        variants_in("legacy");
    }
}

#[test]
fn own_server_variants_modern_era() {
    if peers_or_skip("own_server_variants_modern_era") {
        variants_in("modern");
    }
}

#[test]
fn list_changed_burst_and_mid_listing_change_are_settled() {
    if !peers_or_skip("list_changed_burst_and_mid_listing_change_are_settled") {
        return;
    }
    let base = list(&drift_server("base", "legacy"), &quick()).unwrap();
    let a = list(&drift_server("burst", "legacy"), &quick()).unwrap();
    assert_eq!(
        serde_json::to_string(&a.tools).unwrap(),
        serde_json::to_string(&base.tools).unwrap()
    );
    assert_eq!(a.notes.len(), 3, "{:?}", a.notes);
    assert!(
        a.notes[1].contains("3 notifications/tools/list_changed before listing"),
        "{:?}",
        a.notes
    );
    assert!(
        a.notes[2].contains("1 notifications/tools/list_changed during listing 1; listed again"),
        "{:?}",
        a.notes
    );
}

#[test]
fn server_requests_are_answered_and_late_probe_answers_dropped() {
    if !peers_or_skip("server_requests_are_answered_and_late_probe_answers_dropped") {
        return;
    }
    // The server pings and asks for roots before answering tools/list, and
    // exits with status 5 on a wrong answer.
    let l = list(&drift_server("asks", "legacy"), &quick()).unwrap();
    assert_eq!(names(&l.tools, "name"), BASE_TOOLS);
    // The -32601 to the probe comes after the probe timeout, while vouch
    // waits for initialize (id 2): it must not be taken for that answer.
    let opts = ListOptions {
        probe_timeout: Duration::from_millis(200),
        ..quick()
    };
    let l = list(&drift_server("slow-probe", "legacy"), &opts).unwrap();
    assert_eq!(l.era.protocol_version(), "2025-11-25");
    assert_eq!(
        l.notes,
        ["server/discover unanswered after 200 ms; legacy handshake"]
    );
    assert_eq!(names(&l.tools, "name"), BASE_TOOLS);
}

#[test]
fn hostile_servers_fail_fast_with_the_right_code() {
    if !peers_or_skip("hostile_servers_fail_fast_with_the_right_code") {
        return;
    }
    let limit = Duration::from_secs(5);
    std::thread::scope(|s| {
        s.spawn(|| {
            let e = expect_err(&drift_server("garbage", "legacy"), &quick(), "not_json", limit);
            assert!(matches!(&e, McpError::NotJson { line: 1, excerpt, .. } if excerpt.starts_with("drift-server: ready")), "{e:?}");
        });
        s.spawn(|| {
            // Never answers, ignores stdin EOF and SIGTERM: only SIGKILL ends it.
            let opts = ListOptions {
                timeout: Duration::from_millis(600),
                probe_timeout: Duration::from_millis(300),
                ..quick()
            };
            let e = expect_err(&drift_server("hang", "legacy"), &opts, "timeout", Duration::from_secs(6));
            assert!(matches!(&e, McpError::Timeout { method, millis: 600, .. } if method == "initialize"), "{e:?}");
        });
        s.spawn(|| {
            let e = expect_err(
                &drift_server("exit-mid-listing", "legacy"),
                &quick(),
                "server_exited",
                limit,
            );
            let McpError::Exited {
                step, code, stderr, ..
            } = &e
            else {
                panic!("{e:?}")
            };
            assert_eq!(step, "tools/list");
            assert_eq!(*code, Some(3));
            assert!(
                stderr.0.iter().any(|l| l.contains("exiting in the middle")),
                "{stderr:?}"
            );
        });
        s.spawn(|| {
            let e = expect_err(
                &drift_server("dup-keys", "legacy"),
                &quick(),
                "duplicate_key",
                limit,
            );
            assert!(e.to_string().contains("description"), "{e}");
        });
        s.spawn(|| {
            let e = expect_err(&drift_server("repeat-cursor", "modern"), &quick(), "repeated_cursor", limit);
            assert!(matches!(&e, McpError::RepeatedCursor { method, cursor } if method == "tools/list" && cursor == "c2"), "{e:?}");
        });
        s.spawn(|| {
            expect_err(
                &drift_server("bad-utf8", "legacy"),
                &quick(),
                "invalid_utf8",
                limit,
            );
        });
    });
}

#[test]
fn limits_are_errors() {
    if !peers_or_skip("limits_are_errors") {
        return;
    }
    let limit = Duration::from_secs(5);
    std::thread::scope(|s| {
        s.spawn(|| {
            let opts = ListOptions {
                max_message_bytes: 300,
                ..quick()
            };
            expect_err(
                &drift_server("base", "legacy"),
                &opts,
                "message_too_large",
                limit,
            );
        });
        s.spawn(|| {
            let opts = ListOptions {
                max_pages: 2,
                ..quick()
            };
            expect_err(
                &drift_server("base", "modern"),
                &opts,
                "too_many_pages",
                limit,
            );
        });
        s.spawn(|| {
            let opts = ListOptions {
                max_items: 5,
                ..quick()
            };
            expect_err(
                &drift_server("base", "legacy"),
                &opts,
                "too_many_items",
                limit,
            );
        });
    });
}

#[test]
fn a_missing_program_is_a_spawn_error() {
    let spec = ServerSpec::parse_command("/nonexistent/vouch-no-such-mcp-server --stdio").unwrap();
    let e = expect_err(&spec, &quick(), "spawn_failed", Duration::from_secs(2));
    assert!(
        e.to_string()
            .contains("/nonexistent/vouch-no-such-mcp-server"),
        "{e}"
    );
}

#[test]
fn a_program_that_exits_at_once_is_reported_with_its_status() {
    let spec = ServerSpec::parse_command("sh -c 'echo broken config >&2; exit 7'").unwrap();
    let e = expect_err(&spec, &quick(), "server_exited", Duration::from_secs(3));
    let McpError::Exited {
        step, code, stderr, ..
    } = &e
    else {
        panic!("{e:?}")
    };
    assert_eq!(step, "server/discover");
    assert_eq!(*code, Some(7));
    assert_eq!(stderr.0, ["broken config"]);
}

#[test]
fn parse_command_quoting() {
    let p = |s: &str| {
        let spec = ServerSpec::parse_command(s).unwrap();
        std::iter::once(spec.program)
            .chain(spec.args)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        p("npx -y @modelcontextprotocol/server-everything"),
        ["npx", "-y", "@modelcontextprotocol/server-everything"]
    );
    assert_eq!(
        p(r#"node 'my server.js' "--name=a b" c\ d"#),
        ["node", "my server.js", "--name=a b", "c d"]
    );
    assert_eq!(
        p(r#"x "a\"b" 'it'\''s' $HOME"#),
        ["x", "a\"b", "it's", "$HOME"]
    );
    assert_eq!(p("  uvx\tmcp-server-git  "), ["uvx", "mcp-server-git"]);
    for (bad, code) in [
        ("", "invalid_command"),
        ("   ", "invalid_command"),
        ("node 'x", "invalid_command"),
        ("node x\\", "invalid_command"),
    ] {
        assert_eq!(
            ServerSpec::parse_command(bad).unwrap_err().code(),
            code,
            "{bad:?}"
        );
    }
    let spec = ServerSpec::parse_command(r#"node "my server.js" --flag 'it'\''s'"#).unwrap();
    assert_eq!(spec.display(), r#"node 'my server.js' --flag 'it'\''s'"#);
    assert_eq!(ServerSpec::parse_command(&spec.display()).unwrap(), spec);
}

#[test]
fn host_config_files() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let claude = write(
        "claude_desktop_config.json",
        r#"{"mcpServers": {
            "everything": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"]},
            "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"], "env": {"DEBUG": "1"}},
            "remote": {"url": "https://mcp.example.com/mcp"}
        }}"#,
    );
    let s = ServerSpec::from_host_config(&claude, "fs").unwrap();
    assert_eq!(s.program, "npx");
    assert_eq!(
        s.args,
        ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]
    );
    assert_eq!(s.env, [("DEBUG".to_owned(), "1".to_owned())]);
    assert_eq!(
        s.display(),
        "npx -y @modelcontextprotocol/server-filesystem /tmp"
    );
    let e = ServerSpec::from_host_config(&claude, "remote").unwrap_err();
    assert_eq!(e.code(), "host_config_not_stdio", "{e}");
    let e = ServerSpec::from_host_config(&claude, "nope").unwrap_err();
    assert_eq!(e.code(), "host_config_unknown_server");
    assert!(
        matches!(&e, McpError::HostConfigUnknownServer { available, .. } if available == &["everything", "fs", "remote"]),
        "{e:?}"
    );
    assert!(e.to_string().contains("everything, fs, remote"), "{e}");

    let vscode = write(
        "mcp.json",
        r#"{
            // VS Code allows comments and trailing commas
            "servers": {
                "git": {"type": "stdio", "command": "uvx", "args": ["mcp-server-git"], "cwd": "sub",},
                "web": {"type": "http", "url": "https://example.com/mcp"},
                "ws": {"type": "stdio", "command": "node", "args": ["${workspaceFolder}/server.js"]},
            },
        }"#,
    );
    let s = ServerSpec::from_host_config(&vscode, "git").unwrap();
    assert_eq!(
        (s.program.as_str(), s.args.as_slice()),
        ("uvx", &["mcp-server-git".to_owned()][..])
    );
    assert_eq!(s.cwd.as_deref(), Some(dir.path().join("sub").as_path()));
    let e = ServerSpec::from_host_config(&vscode, "web").unwrap_err();
    assert!(
        matches!(&e, McpError::HostConfigNotStdio { transport, .. } if transport == "http"),
        "{e:?}"
    );
    let e = ServerSpec::from_host_config(&vscode, "ws").unwrap_err();
    assert!(
        matches!(&e, McpError::HostConfigVariable { variable, .. } if variable == "${workspaceFolder}"),
        "{e:?}"
    );

    let settings = write(
        "settings.json",
        r#"{"editor.fontSize": 12, "mcp": {"servers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}}}}"#,
    );
    assert_eq!(
        ServerSpec::from_host_config(&settings, "time")
            .unwrap()
            .args,
        ["mcp-server-time"]
    );

    let none = write("other.json", r#"{"editor.fontSize": 12}"#);
    assert_eq!(
        ServerSpec::from_host_config(&none, "x").unwrap_err().code(),
        "host_config_no_servers"
    );
    let bad = write("bad.json", r#"{"mcpServers": {"#);
    assert_eq!(
        ServerSpec::from_host_config(&bad, "x").unwrap_err().code(),
        "host_config_invalid_json"
    );
    let entry = write(
        "entry.json",
        r#"{"mcpServers": {"x": {"command": "a", "args": "b c"}}}"#,
    );
    assert_eq!(
        ServerSpec::from_host_config(&entry, "x")
            .unwrap_err()
            .code(),
        "host_config_bad_entry"
    );
    assert_eq!(
        ServerSpec::from_host_config(&dir.path().join("absent.json"), "x")
            .unwrap_err()
            .code(),
        "host_config_unreadable"
    );
}

/// The MCP client never starts `vouch wrap` itself (it would write its
/// session into its log): a wrap entry's server is listed directly, and
/// any other command line that runs vouch is refused before anything
/// starts. So neither `vouch scan` nor a drift check of an MCP server
/// changes evidence.
#[test]
fn a_vouch_wrap_command_is_taken_apart_and_never_started() {
    if !peers_or_skip("a_vouch_wrap_command_is_taken_apart_and_never_started") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("prod.jsonl");
    let server = peer_dir().join("drift-server.mjs");
    // The real binary: if the client started it, the log would appear.
    let vouch = support::BIN;
    let wrap = ServerSpec {
        program: vouch.into(),
        args: [
            "wrap",
            "--policy",
            "p.toml",
            "--log",
            log.to_str().unwrap(),
            "--key",
            "k",
            "--id",
            "srv",
            "--",
            "node",
            server.to_str().unwrap(),
            "base",
            "--era",
            "legacy",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
        env: vec![],
        cwd: None,
    };
    let direct = list(&drift_server("base", "legacy"), &quick()).unwrap();
    let through = list(&wrap, &quick()).unwrap();
    assert_eq!(direct.tools, through.tools);
    assert!(!log.exists(), "the wrapper was started");
    // vouch under another name is still vouch: a symlink, a copy (another
    // install), /proc/self/exe of the client's own process.
    let link = dir.path().join("mytool");
    std::os::unix::fs::symlink(vouch, &link).unwrap();
    let copy = dir.path().join("copied-tool");
    std::fs::copy(vouch, &copy).unwrap();
    for program in [
        link.to_str().unwrap(),
        copy.to_str().unwrap(),
        "/proc/self/exe",
    ] {
        let renamed = ServerSpec {
            program: program.into(),
            ..wrap.clone()
        };
        let through = list(&renamed, &quick()).unwrap();
        assert_eq!(direct.tools, through.tools, "{program}");
        assert!(!log.exists(), "the wrapper was started as {program}");
    }
    // A bare name found on the entry's PATH.
    let bare = ServerSpec {
        program: "mytool".into(),
        env: vec![(
            "PATH".into(),
            format!(
                "{}:{}",
                dir.path().display(),
                std::env::var("PATH").unwrap()
            ),
        )],
        ..wrap.clone()
    };
    let through = list(&bare, &quick()).unwrap();
    assert_eq!(direct.tools, through.tools);
    assert!(!log.exists(), "the wrapper was started from PATH");
    // Other forms that would run vouch are refused, never started.
    for (args, code) in [
        (
            vec!["append", log.to_str().unwrap(), "--key", "k", "{}"],
            "vouch_not_a_server",
        ),
        (
            vec![
                "wrap",
                "--policy",
                "p",
                "--log",
                log.to_str().unwrap(),
                "--key",
                "k",
                "--id",
                "x",
            ],
            "wrap_no_separator",
        ),
    ] {
        let spec = ServerSpec {
            program: vouch.into(),
            args: args.iter().map(|s| s.to_string()).collect(),
            env: vec![],
            cwd: None,
        };
        let e = expect_err(&spec, &quick(), code, Duration::from_secs(2));
        assert!(matches!(e, McpError::RunsVouch { .. }), "{e:?}");
    }
    let sh = ServerSpec::parse_command(&format!(
        "sh -c '{vouch} wrap --policy p --log {} --key k --id x -- node {}'",
        log.display(),
        server.display()
    ))
    .unwrap();
    expect_err(&sh, &quick(), "wrap_launcher", Duration::from_secs(2));
    assert!(!log.exists());
}
