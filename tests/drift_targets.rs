//! `vouch drift` on configuration files and MCP servers, end to end
//! through the binary: reformatting is no drift, a changed value is one
//! change at its JSON Pointer, invalid files are exit 2 with their
//! position; real MCP servers from npm snapshot without false drift, and
//! the suite's own server's changes are caught with the right paths and
//! severities, accepted selectively, and a server that fails is exit 2.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use support::{code, json, stderr, stdout, vouch};

struct W {
    _dir: tempfile::TempDir,
    root: PathBuf,
    key: String,
    pubkey: String,
    log: String,
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

impl W {
    fn new() -> W {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        let key = root.join("k");
        let o = vouch(&["keygen", "--origin", "example.com/drift", "--out", s(&key)]);
        assert_eq!(code(&o), 0);
        W {
            key: s(&key).to_owned(),
            pubkey: format!("{}.pub", s(&key)),
            log: s(&root.join("log.jsonl")).to_owned(),
            root,
            _dir: dir,
        }
    }
    fn run(&self, verb: &str, target: &str, extra: &[&str]) -> std::process::Output {
        let mut a = vec!["drift", verb, target, "--log", &self.log];
        if verb == "check" {
            a.extend(["--pub", &self.pubkey, "--format", "json"]);
        } else {
            a.extend(["--key", &self.key]);
        }
        a.extend_from_slice(extra);
        vouch(&a)
    }
}

fn changes(rep: &Value) -> Vec<(String, String)> {
    rep["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["item"].as_str().unwrap().to_owned(),
                c["change"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn config_reformatting_is_no_drift_and_a_changed_value_is_one_change_at_its_pointer() {
    let w = W::new();
    let cases: [(&str, &str, &str, &str); 3] = [
        (
            "app.json",
            "{\"server\": {\"port\": 8080, \"hosts\": [\"a\", \"b\"]}, \"debug\": false}",
            "{\n  \"debug\": false,\n  \"server\": {\n    \"hosts\": [\"a\",\"b\"],\n    \"port\": 8080.0\n  }\n}\n",
            "{\"debug\": false, \"server\": {\"hosts\": [\"a\", \"c\"], \"port\": 8080}}",
        ),
        (
            "app.yaml",
            "server:\n  port: 8080\n  hosts: [a, b]\ndebug: false\n",
            "debug: false   # comment\nserver: {hosts: [a, b], port: 8080}\n",
            "server:\n  port: 8080\n  hosts: [a, c]\ndebug: false\n",
        ),
        (
            "app.toml",
            "debug = false\n[server]\nport = 8080\nhosts = [\"a\", \"b\"]\n",
            "server = { hosts = [\"a\", \"b\"], port = 8080 }\ndebug = false\n",
            "debug = false\n[server]\nport = 8080\nhosts = [\"a\", \"c\"]\n",
        ),
    ];
    for (name, first, reformatted, changed) in cases {
        let p = w.root.join(name);
        std::fs::write(&p, first).unwrap();
        let o = w.run("snapshot", s(&p), &[]);
        assert_eq!(code(&o), 0, "{name}: {}", stderr(&o));
        std::fs::write(&p, reformatted).unwrap();
        let o = w.run("check", s(&p), &[]);
        assert_eq!(code(&o), 0, "{name}: {}", stdout(&o));
        assert_eq!(json(&o)["kind"], "config");
        std::fs::write(&p, changed).unwrap();
        let o = w.run("check", s(&p), &[]);
        assert_eq!(code(&o), 1, "{name}: {}", stdout(&o));
        let rep = json(&o);
        assert_eq!(
            changes(&rep),
            [("/server/hosts/1".to_owned(), "changed".to_owned())],
            "{name}"
        );
        assert_eq!(rep["changes"][0]["fields"][0]["before"], "b");
        assert_eq!(rep["changes"][0]["fields"][0]["after"], "c");
        // Accept only that pointer; no drift after.
        let o = w.run(
            "accept",
            s(&p),
            &["--only", "/server/hosts/1", "--reason", "new host"],
        );
        assert_eq!(code(&o), 0, "{name}: {}", stderr(&o));
        assert_eq!(code(&w.run("check", s(&p), &[])), 0, "{name}");
    }
}

#[test]
fn an_invalid_config_file_is_exit_2_with_file_and_position() {
    let w = W::new();
    let cases = [
        (
            "bad.json",
            "{\n  \"a\": 1,\n  \"a\": 2\n}\n",
            "duplicate_key",
            "line 3",
        ),
        (
            "bad.yaml",
            "a: 1\nb: [1, 2\nc: 3\n",
            "invalid_syntax",
            "line",
        ),
        ("bad.toml", "a = 1\nb = = 2\n", "invalid_syntax", "line 2"),
        ("bad2.json", "{\"a\": tru}", "invalid_syntax", "line 1"),
    ];
    for (name, text, want_code, want_pos) in cases {
        let p = w.root.join(name);
        std::fs::write(&p, text).unwrap();
        let o = w.run("snapshot", s(&p), &["--format", "json"]);
        assert_eq!(code(&o), 2, "{name}: {}", stdout(&o));
        let e = &json(&o)["error"];
        assert_eq!(e["code"], want_code, "{name}: {e}");
        let msg = e["message"].as_str().unwrap();
        assert!(
            msg.contains(name) && msg.contains(want_pos),
            "{name}: {msg}"
        );
        // Issue 22: the path was printed twice.
        assert_eq!(msg.matches(name).count(), 1, "{msg}");
    }
    assert!(!Path::new(&w.log).exists(), "nothing was written");
    // A config that becomes invalid after its baseline is exit 2 on check.
    let p = w.root.join("ok.yaml");
    std::fs::write(&p, "a: 1\n").unwrap();
    assert_eq!(code(&w.run("snapshot", s(&p), &[])), 0);
    std::fs::write(&p, "a: [\n").unwrap();
    assert_eq!(code(&w.run("check", s(&p), &[])), 2);
}

fn peers() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/mcp")
}

fn peers_or_skip(test: &str) -> bool {
    let ok = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
        && peers()
            .join("node_modules/.bin/mcp-server-everything")
            .exists();
    if !ok {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{test}: node and the MCP peers (scripts/setup-node-peers.sh) are required when CI=true"
        );
        eprintln!("NOTICE: {test} skipped: node or the MCP peers are missing");
    }
    ok
}

fn server(variant: &str) -> String {
    format!(
        "mcp:node {} {variant}",
        s(&peers().join("drift-server.mjs"))
    )
}

/// The official servers, snapshotted and checked again: no false drift.
#[test]
fn official_servers_snapshot_without_false_drift() {
    if !peers_or_skip("official_servers_snapshot_without_false_drift") {
        return;
    }
    let w = W::new();
    let bin = peers().join("node_modules/.bin");
    for (target, tools) in [
        (format!("mcp:{}", s(&bin.join("mcp-server-everything"))), 13),
        (
            format!(
                "mcp:{} {}",
                s(&bin.join("mcp-server-filesystem")),
                s(&peers())
            ),
            14,
        ),
    ] {
        let o = w.run("snapshot", &target, &["--format", "json"]);
        assert_eq!(code(&o), 0, "{target}: {}{}", stdout(&o), stderr(&o));
        for _ in 0..2 {
            let o = w.run("check", &target, &[]);
            assert_eq!(code(&o), 0, "{target}: {}", stdout(&o));
            let rep = json(&o);
            assert_eq!(rep["result"], "no_drift");
            let n = rep["items"].as_u64().unwrap();
            assert!(n >= tools, "{target}: {n} items");
        }
    }
}

/// Each change the suite's own server can make between runs is caught
/// with its item, JSON Pointer, reason and severity.
#[test]
fn mcp_definition_changes_are_caught_with_paths_and_severities() {
    if !peers_or_skip("mcp_definition_changes_are_caught_with_paths_and_severities") {
        return;
    }
    let w = W::new();
    let o = w.run("snapshot", &server("base"), &["--name", "notes-server"]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    let check = |variant: &str| {
        let o = w.run("check", &server(variant), &["--name", "notes-server"]);
        (code(&o), json(&o))
    };
    let (c, rep) = check("base");
    assert_eq!(c, 0, "{rep:#}");
    // (variant, item, change, severity, a field pointer, its reason)
    let cases = [
        (
            "desc-changed",
            "tool:search_notes",
            "changed",
            "high",
            "/description",
            "description_changed",
        ),
        (
            "param-added",
            "tool:search_notes",
            "changed",
            "medium",
            "/inputSchema/properties/tag",
            "optional_parameter_added",
        ),
        (
            "enum-widened",
            "tool:set_theme",
            "changed",
            "high",
            "/inputSchema/properties/mode/enum",
            "enum_widened",
        ),
        (
            "required-dropped",
            "tool:search_notes",
            "changed",
            "high",
            "/inputSchema/required",
            "required_dropped",
        ),
        (
            "annotation-changed",
            "tool:delete_note",
            "changed",
            "high",
            "/annotations/destructiveHint",
            "annotation_changed",
        ),
    ];
    for (variant, item, change, severity, pointer, reason) in cases {
        let (c, rep) = check(variant);
        assert_eq!(c, 1, "{variant}: {rep:#}");
        let ch = &rep["changes"];
        assert_eq!(ch.as_array().unwrap().len(), 1, "{variant}: {rep:#}");
        assert_eq!(ch[0]["item"], item, "{variant}");
        assert_eq!(ch[0]["change"], change, "{variant}");
        assert_eq!(ch[0]["severity"], severity, "{variant}: {rep:#}");
        let f = ch[0]["fields"].as_array().unwrap();
        assert!(
            f.iter()
                .any(|f| f["field"] == pointer && f["reason"] == reason),
            "{variant}: {rep:#}"
        );
        if variant == "desc-changed" {
            let words = f[0]["words"].as_str().unwrap();
            assert!(words.contains("{+"), "{words}");
        }
    }
    let (c, rep) = check("renamed");
    assert_eq!(c, 1);
    assert_eq!(rep["changes"][0]["item"], "tool:download_url", "{rep:#}");
    assert_eq!(rep["changes"][0]["change"], "renamed");
    assert_eq!(rep["changes"][0]["from"], "tool:fetch_url");
    assert_eq!(rep["changes"].as_array().unwrap().len(), 1);
    let (c, rep) = check("removed");
    assert_eq!(c, 1);
    assert_eq!(
        changes(&rep),
        [("tool:get_time".to_owned(), "removed".to_owned())]
    );
    // Accept one variant's change selectively, with a reason.
    let o = w.run(
        "accept",
        &server("enum-widened"),
        &[
            "--name",
            "notes-server",
            "--only",
            "set_theme",
            "--reason",
            "theme v2 reviewed",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(check("enum-widened").0, 0);
    assert_eq!(check("base").0, 1, "the old enum is now drift");
    // The modern era server lists the same definitions: only the protocol differs.
    let o = w.run(
        "check",
        &format!("{} --era modern", server("enum-widened")),
        &["--name", "notes-server"],
    );
    let rep = json(&o);
    assert!(
        rep["changes"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["item"] == "server:protocol"),
        "{rep:#}"
    );
}

#[test]
fn an_mcp_server_that_fails_is_exit_2_and_writes_nothing() {
    if !peers_or_skip("an_mcp_server_that_fails_is_exit_2_and_writes_nothing") {
        return;
    }
    let w = W::new();
    for (target, want) in [
        (
            "mcp:/nonexistent/vouch-no-such-server".to_owned(),
            "spawn_failed",
        ),
        (server("garbage"), "not_json"),
        (server("exit-mid-listing"), "server_exited"),
        (server("dup-keys"), "duplicate_key"),
    ] {
        let o = w.run("snapshot", &target, &["--format", "json"]);
        assert_eq!(code(&o), 2, "{target}: {}", stdout(&o));
        assert_eq!(json(&o)["error"]["code"], want, "{target}: {}", stdout(&o));
    }
    assert!(!Path::new(&w.log).exists());
}

/// A server entry of a host config file (Claude Desktop shape) is a
/// target named by the config file and the entry, not by its command.
#[test]
fn a_host_config_entry_is_a_target() {
    if !peers_or_skip("a_host_config_entry_is_a_target") {
        return;
    }
    let w = W::new();
    let cfg = w.root.join("claude_desktop_config.json");
    let entry = |variant: &str| {
        serde_json::json!({"mcpServers": {"notes": {
            "command": "node",
            "args": [s(&peers().join("drift-server.mjs")), variant]
        }}})
        .to_string()
    };
    std::fs::write(&cfg, entry("base")).unwrap();
    let target = format!("mcp:{}#notes", s(&cfg));
    let o = w.run("snapshot", &target, &["--format", "json"]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    let name = json(&o)["target"].as_str().unwrap().to_owned();
    assert!(
        name.starts_with("mcp:") && name.ends_with("claude_desktop_config.json#notes"),
        "{name}"
    );
    assert_eq!(code(&w.run("check", &target, &[])), 0);
    // The config now launches a server whose tool description changed.
    std::fs::write(&cfg, entry("desc-changed")).unwrap();
    let o = w.run("check", &target, &[]);
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    assert_eq!(json(&o)["changes"][0]["item"], "tool:search_notes");
    // An entry that is not there is exit 2, naming the entries present.
    let o = w.run("check", &format!("mcp:{}#nope", s(&cfg)), &[]);
    assert_eq!(code(&o), 2);
    assert!(stdout(&o).contains("notes"), "{}", stdout(&o));
}
