//! `vouch wrap` end to end against real MCP peers: the official
//! server-everything and server-filesystem driven by the official
//! TypeScript SDK client (v1), a v2-SDK server and client in the 2026-07-28
//! era, a v2 client against a legacy server (probe, error, fallback), the
//! suite's own hostile server (tests/peers/mcp/hostile-server.mjs), raw
//! protocol edge cases written byte by byte, and kill -9 of the wrapper.
//! Every run's log is checked with `vouch verify`.
//! The peers are installed by scripts/setup-node-peers.sh; without node or
//! them a test prints a notice and passes, except under `CI=true`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use std::time::{Duration, Instant};

mod mcp_support;
mod support;
use mcp_support::*;

const ALLOW_ALL: &str = "version = 1\ndefault = \"allow\"\n";

#[test]
fn server_everything_behaves_as_without_the_wrapper() {
    if !peers_or_skip("server_everything_behaves_as_without_the_wrapper") {
        return;
    }
    let env = Env::new();
    env.policy(ALLOW_ALL);
    // server-everything registers one tool after the handshake (and says
    // so with list_changed): list once it has, so both runs see it.
    let script = json!({"steps": [
        {"op": "sleep", "ms": 1000},
        {"op": "list"},
        {"op": "call", "name": "echo", "arguments": {"message": "hello through vouch"}},
        {"op": "call", "name": "get-sum", "arguments": {"a": 2, "b": 40}},
        {"op": "ping"},
        {"op": "list_prompts"},
        {"op": "list_resources"},
    ]});
    let direct = sdk("sdk-client.mjs", &env, script.clone(), &everything());
    let wrapped = sdk(
        "sdk-client.mjs",
        &env,
        script,
        &env.wrap("e.log", &[], &everything()),
    );
    assert_eq!(steps(&direct), steps(&wrapped));
    assert_eq!(direct["serverVersion"], wrapped["serverVersion"]);
    assert_eq!(direct["instructions"], wrapped["instructions"]);
    assert_eq!(wrapped["transportErrors"], json!([]));
    assert_eq!(
        wrapped["steps"][1]["result"]["tools"]
            .as_array()
            .unwrap()
            .len(),
        13
    );
    let v = env.verify("e.log");
    assert_eq!(v["exit"], 0, "{v}");
    let decisions = env.of_kind("e.log", "tool_call");
    let tools: Vec<&str> = decisions
        .iter()
        .map(|d| d["tool"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["echo", "get-sum"]);
    assert!(
        decisions
            .iter()
            .all(|d| d["decision"] == "allow" && d["forwarded"] == true)
    );
    let outcomes = env.of_kind("e.log", "tool_result");
    assert_eq!(outcomes.len(), 2);
    for (d, o) in decisions.iter().zip(&outcomes) {
        assert_eq!(
            o["decision_seq"], d["_seq"],
            "outcome links to its decision"
        );
        assert_eq!(o["outcome"], "result");
    }
    // The decision names the exact argument bytes the client sent.
    assert_eq!(decisions[1]["arguments"], json!({"a": 2, "b": 40}));
    assert_eq!(decisions[0]["protocol"], "2025-11-25");
}

#[test]
fn filesystem_writes_outside_the_allowed_prefix_never_reach_the_server() {
    if !peers_or_skip("filesystem_writes_outside_the_allowed_prefix_never_reach_the_server") {
        return;
    }
    let env = Env::new();
    let root = env.path("root");
    let allowed = root.join("allowed");
    std::fs::create_dir_all(&allowed).unwrap();
    let root = root.canonicalize().unwrap();
    let allowed = allowed.canonicalize().unwrap();
    env.policy(&format!(
        r#"version = 1
default = "allow"
roots = ["{}"]

[[rule]]
id = "fs-write-outside"
tools = ["write_file", "edit_file", "create_directory", "move_file"]
action = "block"
reason = "writes stay inside the project"
path_outside = ["/path", "/source", "/destination"]
"#,
        allowed.display()
    ));
    // The server itself may write anywhere under root: only the policy
    // keeps writes inside root/allowed.
    let server = node_script(
        "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js",
        &[&root.display().to_string()],
    );
    let inside = allowed.join("note.txt");
    let outside = root.join("outside.txt");
    let escape = format!("{}/../escape.txt", allowed.display());
    let script = json!({"steps": [
        {"op": "list"},
        {"op": "call", "name": "write_file", "arguments": {"path": inside, "content": "inside"}},
        {"op": "call", "name": "write_file", "arguments": {"path": outside, "content": "outside"}},
        {"op": "call", "name": "write_file", "arguments": {"path": escape, "content": "escape"}},
        {"op": "call", "name": "read_text_file", "arguments": {"path": inside}},
    ]});
    let direct_list = sdk(
        "sdk-client.mjs",
        &env,
        json!({"steps": [{"op": "list"}]}),
        &server,
    );
    let wrapped = sdk(
        "sdk-client.mjs",
        &env,
        script,
        &env.wrap("fs.log", &[], &server),
    );
    let s = steps(&wrapped);
    assert_eq!(s[0], steps(&direct_list)[0], "the listing is the server's");
    assert_eq!(s[0]["result"]["tools"].as_array().unwrap().len(), 14);
    assert_eq!(s[1]["result"].get("isError"), None, "{}", s[1]);
    assert_eq!(std::fs::read_to_string(&inside).unwrap(), "inside");
    for blocked in [&s[2], &s[3]] {
        assert_eq!(blocked["result"]["isError"], true, "{blocked}");
        let text = blocked["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("fs-write-outside"), "{text}");
    }
    assert!(!outside.exists(), "a blocked write reached the server");
    assert!(
        !root.join("escape.txt").exists(),
        "a `..` escape reached the server"
    );
    assert_eq!(s[4]["result"]["content"][0]["text"], "inside");
    assert_eq!(env.verify("fs.log")["exit"], 0);
    let decisions = env.of_kind("fs.log", "tool_call");
    let summary: Vec<(String, String)> = decisions
        .iter()
        .map(|d| {
            (
                d["decision"].as_str().unwrap().into(),
                d["rule"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(summary[1], ("block".into(), "fs-write-outside".into()));
    assert_eq!(summary[2], ("block".into(), "fs-write-outside".into()));
    assert_eq!(decisions[1]["forwarded"], false);
    assert_eq!(
        env.of_kind("fs.log", "tool_result").len(),
        2,
        "outcomes only of forwarded calls"
    );
}

#[test]
fn modern_era_v2_client_and_server_through_the_wrapper() {
    if !peers_or_skip("modern_era_v2_client_and_server_through_the_wrapper") {
        return;
    }
    let env = Env::new();
    env.policy("version = 1\ndefault = \"allow\"\n[[rule]]\nid = \"no-mode\"\ntools = [\"set_mode\"]\naction = \"block\"\n");
    let server = node_script("sdk-v2-server.mjs", &[]);
    let script = json!({"probe": "inplace", "steps": [
        {"op": "list"},
        {"op": "call", "name": "echo", "arguments": {"text": "modern"}},
        {"op": "call", "name": "add", "arguments": {"a": 1.25}},
        {"op": "call", "name": "set_mode", "arguments": {"mode": "fast"}},
    ]});
    let direct = sdk("sdk-v2-client.mjs", &env, script.clone(), &server);
    let wrapped = sdk(
        "sdk-v2-client.mjs",
        &env,
        script,
        &env.wrap("m.log", &[], &server),
    );
    assert_eq!(wrapped["era"], "modern", "{wrapped}");
    assert_eq!(wrapped["protocolVersion"], "2026-07-28");
    let (d, w) = (steps(&direct), steps(&wrapped));
    assert_eq!(
        d[..3],
        w[..3],
        "listing and allowed calls as without the wrapper"
    );
    assert_eq!(w[3]["result"]["isError"], true, "{}", w[3]);
    assert_eq!(env.verify("m.log")["exit"], 0);
    let decisions = env.of_kind("m.log", "tool_call");
    assert_eq!(decisions.len(), 3);
    assert!(decisions.iter().all(|d| d["protocol"] == "2026-07-28"));
    assert_eq!(decisions[2]["rule"], "no-mode");
    // The v2 client's default probe runs on a second connection (a second
    // wrapper on the same log): this one learns the era from the requests.
    let script = json!({"steps": [
        {"op": "call", "name": "echo", "arguments": {"text": "sibling"}},
        {"op": "call", "name": "set_mode", "arguments": {"mode": "fast"}},
    ]});
    let wrapped = sdk(
        "sdk-v2-client.mjs",
        &env,
        script,
        &env.wrap("m2.log", &[], &server),
    );
    assert_eq!(wrapped["era"], "modern", "{wrapped}");
    let w = steps(&wrapped);
    assert_eq!(w[0]["result"]["content"][0]["text"], "sibling", "{}", w[0]);
    assert_eq!(w[1]["result"]["isError"], true, "{}", w[1]);
    assert_eq!(env.verify("m2.log")["exit"], 0);
    let decisions = env.of_kind("m2.log", "tool_call");
    assert!(
        decisions.iter().all(|d| d["protocol"] == "2026-07-28"),
        "{decisions:?}"
    );
}

#[test]
fn v2_client_falls_back_to_legacy_through_the_wrapper() {
    if !peers_or_skip("v2_client_falls_back_to_legacy_through_the_wrapper") {
        return;
    }
    let env = Env::new();
    env.policy(ALLOW_ALL);
    let received = env.path("received.jsonl");
    let script = json!({"probe": "inplace", "probeTimeoutMs": 20000, "steps": [
        {"op": "call", "name": "echo", "arguments": {"text": "legacy"}},
    ]});
    let wrapped = sdk(
        "sdk-v2-client.mjs",
        &env,
        script,
        &env.wrap("f.log", &[], &hostile("honest", &received)),
    );
    assert_eq!(wrapped["era"], "legacy", "{wrapped}");
    // The probe passed through unchanged and its error came straight back:
    // a swallowed probe would cost the 20 s probe timeout.
    assert!(
        wrapped["connectMs"].as_f64().unwrap() < 10_000.0,
        "{wrapped}"
    );
    let lines = std::fs::read_to_string(&received).unwrap();
    assert!(
        lines.lines().next().unwrap().contains("server/discover"),
        "{lines}"
    );
    assert_eq!(steps(&wrapped)[0]["result"]["content"][0]["text"], "legacy");
    assert_eq!(env.verify("f.log")["exit"], 0);
}

// ---- the hostile server -------------------------------------------------

fn anomalies(env: &Env, log: &str) -> Vec<String> {
    env.of_kind(log, "mcp_session")
        .iter()
        .filter(|s| s["event"] == "anomaly")
        .map(|s| s["what"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn forged_responses_to_unsent_ids_are_dropped_and_recorded() {
    if !peers_or_skip("forged_responses_to_unsent_ids_are_dropped_and_recorded") {
        return;
    }
    let env = Env::new();
    env.policy(ALLOW_ALL);
    let received = env.path("r.jsonl");
    let script = json!({"steps": [
        {"op": "list"},
        {"op": "call", "name": "echo", "arguments": {"text": "real"}},
        {"op": "call", "name": "echo", "arguments": {"text": "real 2"}},
    ]});
    let direct = sdk(
        "sdk-client.mjs",
        &env,
        script.clone(),
        &hostile("forge", &received),
    );
    assert_ne!(
        direct["transportErrors"],
        json!([]),
        "the direct client sees forgeries"
    );
    let wrapped = sdk(
        "sdk-client.mjs",
        &env,
        script,
        &env.wrap("g.log", &[], &hostile("forge", &received)),
    );
    let s = steps(&wrapped);
    let names: Vec<&str> = s[0]["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        !names.contains(&"evil"),
        "a forged tools/list reached the client: {names:?}"
    );
    assert_eq!(s[1]["result"]["content"][0]["text"], "real");
    assert_eq!(s[2]["result"]["content"][0]["text"], "real 2");
    assert_eq!(wrapped["transportErrors"], json!([]), "{wrapped}");
    let a = anomalies(&env, "g.log");
    assert!(a.iter().any(|w| w == "response_to_unknown_id"), "{a:?}");
    assert_eq!(env.verify("g.log")["exit"], 0);
}

#[test]
fn a_rug_pull_is_relisted_before_the_new_tool_can_be_called() {
    if !peers_or_skip("a_rug_pull_is_relisted_before_the_new_tool_can_be_called") {
        return;
    }
    let env = Env::new();
    env.policy(ALLOW_ALL);
    let received = env.path("r.jsonl");
    let script = json!({"steps": [
        {"op": "list"},
        {"op": "sleep", "ms": 600},
        {"op": "call", "name": "exfiltrate", "arguments": {}},
        {"op": "list"},
    ]});
    let wrapped = sdk(
        "sdk-client.mjs",
        &env,
        script,
        &env.wrap("rug.log", &[], &hostile("rugpull", &received)),
    );
    let s = steps(&wrapped);
    let listed: Vec<&str> = s[3]["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    // Vetting withholds the new tool and the changed one (tests/vet_wrap.rs).
    assert_eq!(listed, ["write_note"], "{listed:?}");
    // The wrapper listed again on list_changed and recorded the change
    // before the new tool could be decided.
    let change = env
        .of_kind("rug.log", "mcp_session")
        .into_iter()
        .find(|s| s["event"] == "tools" && s["added"] == json!(["exfiltrate"]))
        .unwrap_or_else(|| panic!("no change record: {:?}", env.records("rug.log")));
    assert_eq!(change["changed"], json!(["echo"]));
    let decision = env
        .of_kind("rug.log", "tool_call")
        .into_iter()
        .find(|d| d["tool"] == "exfiltrate")
        .unwrap();
    assert!(decision["_seq"].as_u64() > change["_seq"].as_u64());
    assert_eq!(decision["rule"], "vet.new");
    assert_eq!(env.verify("rug.log")["exit"], 0);
}

#[test]
fn hostile_messages_are_dropped_and_the_session_goes_on() {
    if !peers_or_skip("hostile_messages_are_dropped_and_the_session_goes_on") {
        return;
    }
    for (mode, anomaly) in [
        ("dupkeys", "duplicate_key"),
        ("huge", "message_too_large"),
        ("batch", "batch"),
        ("badutf8", "not_utf8"),
    ] {
        let env = Env::new();
        env.policy(ALLOW_ALL);
        let received = env.path("r.jsonl");
        let script = json!({"steps": [
            {"op": "call", "name": "echo", "arguments": {"text": "one"}, "timeoutMs": 3000},
            {"op": "call", "name": "echo", "arguments": {"text": "two"}, "timeoutMs": 3000},
        ]});
        let log = format!("{mode}.log");
        let wrapped = sdk(
            "sdk-client.mjs",
            &env,
            script,
            &env.wrap(
                &log,
                &["--max-message-bytes", "1048576"],
                &hostile(mode, &received),
            ),
        );
        let s = steps(&wrapped);
        assert!(
            wrapped.get("connectError").is_none(),
            "{mode}: the wrapper must stay up: {wrapped}"
        );
        if mode == "dupkeys" {
            // Every answer has duplicate keys: none is delivered.
            assert_eq!(s[0]["ok"], false, "{mode}: {}", s[0]);
        } else {
            assert_eq!(
                s[1]["result"]["content"][0]["text"], "two",
                "{mode}: {}",
                s[1]
            );
        }
        let a = anomalies(&env, &log);
        assert!(a.iter().any(|w| w == anomaly), "{mode}: {a:?}");
        assert_eq!(env.verify(&log)["exit"], 0, "{mode}");
    }
}

#[test]
fn a_server_that_dies_mid_call_ends_the_session_cleanly() {
    if !peers_or_skip("a_server_that_dies_mid_call_ends_the_session_cleanly") {
        return;
    }
    let env = Env::new();
    env.policy(ALLOW_ALL);
    let received = env.path("r.jsonl");
    let script = json!({"steps": [{"op": "call", "name": "echo", "arguments": {"text": "x"}, "timeoutMs": 10000}]});
    let wrapped = sdk(
        "sdk-client.mjs",
        &env,
        script,
        &env.wrap("die.log", &[], &hostile("die", &received)),
    );
    assert_eq!(steps(&wrapped)[0]["ok"], false);
    assert_eq!(
        wrapped["childExit"]["code"], 3,
        "the server's exit code: {wrapped}"
    );
    assert_eq!(env.verify("die.log")["exit"], 0);
    let outcomes = env.of_kind("die.log", "tool_result");
    assert_eq!(outcomes.len(), 1);
    assert_eq!(outcomes[0]["outcome"], "server_exited");
    let end: Vec<Value> = env
        .of_kind("die.log", "mcp_session")
        .into_iter()
        .filter(|s| s["event"] == "end")
        .collect();
    assert_eq!(end[0]["reason"], "server_exited");
    assert_eq!(end[0]["exit_code"], 3);
}

#[test]
fn a_cancel_follows_its_call_and_a_silent_server_does_not_stall_the_wrapper() {
    if !peers_or_skip("a_cancel_follows_its_call_and_a_silent_server_does_not_stall_the_wrapper") {
        return;
    }
    let env = Env::new();
    env.policy(ALLOW_ALL);
    let received = env.path("r.jsonl");
    let script = json!({"steps": [
        {"op": "cancel_call", "name": "echo", "arguments": {"text": "slow"}, "afterMs": 50},
        {"op": "ping"},
    ]});
    let wrapped = sdk(
        "sdk-client.mjs",
        &env,
        script,
        &env.wrap("c.log", &[], &hostile("slowcall", &received)),
    );
    let s = steps(&wrapped);
    assert_eq!(s[0]["ok"], false, "{}", s[0]);
    assert_eq!(s[1]["ok"], true, "other traffic goes on: {}", s[1]);
    let lines: Vec<Value> = std::fs::read_to_string(&received)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let call = lines
        .iter()
        .position(|m| m["method"] == "tools/call")
        .unwrap();
    let cancel = lines
        .iter()
        .position(|m| m["method"] == "notifications/cancelled")
        .unwrap();
    assert!(call < cancel, "the cancel overtook its call: {lines:?}");
    assert_eq!(lines[cancel]["params"]["requestId"], lines[call]["id"]);
    let outcomes = env.of_kind("c.log", "tool_result");
    assert_eq!(outcomes[0]["outcome"], "cancelled");
    assert_eq!(env.verify("c.log")["exit"], 0);
}

#[test]
fn server_requests_are_routed_back_to_the_server() {
    if !peers_or_skip("server_requests_are_routed_back_to_the_server") {
        return;
    }
    let env = Env::new();
    env.policy(ALLOW_ALL);
    let received = env.path("r.jsonl");
    let script =
        json!({"roots": ["file:///tmp"], "steps": [{"op": "sleep", "ms": 700}, {"op": "ping"}]});
    let wrapped = sdk(
        "sdk-client.mjs",
        &env,
        script,
        &env.wrap("s.log", &[], &hostile("serverreq", &received)),
    );
    assert!(wrapped.get("connectError").is_none(), "{wrapped}");
    let lines: Vec<Value> = std::fs::read_to_string(&received)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let roots = lines
        .iter()
        .find(|m| m["id"] == 1 && m.get("method").is_none());
    assert!(
        roots.is_some_and(|r| r["result"]["roots"].is_array()),
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|m| m["id"] == "s1" && m.get("method").is_none()),
        "{lines:?}"
    );
    assert_eq!(env.verify("s.log")["exit"], 0);
}

// ---- raw protocol ---------------------------------------------------------

#[test]
fn ids_batches_and_malformed_messages_from_the_client() {
    if !peers_or_skip("ids_batches_and_malformed_messages_from_the_client") {
        return;
    }
    let env = Env::new();
    env.policy("version = 1\ndefault = \"allow\"\n[[rule]]\nid = \"no-notes\"\ntools = [\"write_note\"]\naction = \"block\"\n");
    let received = env.path("r.jsonl");
    let mut raw = Raw::start(&env.wrap(
        "raw.log",
        &["--max-message-bytes", "4096"],
        &hostile("slowcall", &received),
    ));
    raw.handshake("2025-11-25");
    // 0 and "" are real ids.
    raw.send(br#"{"jsonrpc":"2.0","id":0,"method":"ping"}"#);
    raw.expect(|v| v["id"] == 0 && v["result"].is_object());
    raw.send(br#"{"jsonrpc":"2.0","id":"","method":"ping"}"#);
    raw.expect(|v| v["id"] == "" && v["result"].is_object());
    // Float ids and ids beyond 2^53-1 are refused, not forwarded.
    raw.send(br#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#);
    raw.expect(|v| v["error"]["code"] == -32600 && v["id"].is_null());
    raw.send(br#"{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}"#);
    raw.expect(|v| v["error"]["code"] == -32600 && v["id"].is_null());
    // A pending id cannot be reused (the slow call is still running).
    raw.send(br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a"}}}"#);
    raw.send(br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"b"}}}"#);
    raw.expect(|v| v["id"] == 7 && v["error"]["code"] == -32600);
    raw.expect(|v| v["id"] == 7 && v["result"]["content"][0]["text"] == "a");
    // Duplicate keys: refused, never forwarded.
    raw.send(br#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo","name":"write_note","arguments":{}}}"#);
    raw.expect(|v| v["error"]["code"] == -32600);
    // A batch (2025-11-25): one error, id null.
    raw.send(
        br#"[{"jsonrpc":"2.0","id":20,"method":"ping"},{"jsonrpc":"2.0","id":21,"method":"ping"}]"#,
    );
    raw.expect(|v| v["error"]["code"] == -32600 && v["id"].is_null());
    // Invalid UTF-8 and oversize: errors, and the session goes on.
    raw.send(b"{\"jsonrpc\":\"2.0\",\"id\":30,\"method\":\"p\xffing\"}");
    raw.expect(|v| v["error"]["code"] == -32700);
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":31,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(5000)
    );
    raw.send(big.as_bytes());
    raw.expect(|v| v["error"]["code"] == -32600);
    // A blocked call is answered locally; its cancel is swallowed.
    raw.send(br#"{"jsonrpc":"2.0","id":40,"method":"tools/call","params":{"name":"write_note","arguments":{"path":"/tmp/x","text":"t"}}}"#);
    let blocked = raw.expect(|v| v["id"] == 40);
    assert_eq!(blocked["result"]["isError"], true);
    raw.send(br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":40}}"#);
    // A tool the server did not list is refused without asking it, with
    // the protocol's answer to an unknown tool (a JSON-RPC error, -32602).
    raw.send(br#"{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"not-a-tool","arguments":{}}}"#);
    let unlisted = raw.expect(|v| v["id"] == 41);
    assert_eq!(unlisted["error"]["code"], -32602, "{unlisted}");
    assert_eq!(unlisted["error"]["message"], "Unknown tool: not-a-tool");
    assert!(unlisted.get("result").is_none(), "{unlisted}");
    // A call sent as a notification (no id) is not forwarded ungated.
    raw.send(br#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"write_note","arguments":{"path":"/tmp/x","text":"notif-call-marker"}}}"#);
    // A response to a request the server never sent is dropped.
    raw.send(br#"{"jsonrpc":"2.0","id":"never-sent","result":{}}"#);
    raw.send(br#"{"jsonrpc":"2.0","id":50,"method":"ping"}"#);
    raw.expect(|v| v["id"] == 50);
    drop(raw.stdin);
    let status = raw.child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    let got = received_lines(&received).join("\n");
    for absent in [
        "1.5",
        "9007199254740993",
        "\"id\":8",
        "\"id\":20",
        "\"id\":30",
        "\"id\":31",
        "\"id\":40",
        "\"id\":41",
        "notif-call-marker",
        "never-sent",
        "\"b\"",
    ] {
        assert!(!got.contains(absent), "{absent} reached the server: {got}");
    }
    assert_eq!(env.verify("raw.log")["exit"], 0);
}

#[test]
fn batches_get_one_error_per_request_in_2025_03_26() {
    if !peers_or_skip("batches_get_one_error_per_request_in_2025_03_26") {
        return;
    }
    let env = Env::new();
    env.policy(ALLOW_ALL);
    let received = env.path("r.jsonl");
    let mut raw = Raw::start(&env.wrap("b.log", &[], &hostile("honest", &received)));
    raw.handshake("2025-03-26");
    raw.send(br#"[{"jsonrpc":"2.0","id":20,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"},{"jsonrpc":"2.0","id":"21","method":"ping"}]"#);
    let v = raw.expect(|v| v.is_array());
    let ids: Vec<Value> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].clone())
        .collect();
    assert_eq!(ids, vec![json!(20), json!("21")]);
    assert!(
        v.as_array()
            .unwrap()
            .iter()
            .all(|e| e["error"]["code"] == -32600)
    );
    drop(raw.stdin);
    raw.child.wait().unwrap();
    assert!(!received_lines(&received).join("\n").contains("\"id\":20"));
}

#[test]
fn kill_9_mid_session_leaves_every_forwarded_decision_in_a_log_that_verifies() {
    if !peers_or_skip("kill_9_mid_session_leaves_every_forwarded_decision_in_a_log_that_verifies") {
        return;
    }
    let env = Env::new();
    env.policy(ALLOW_ALL);
    let received = env.path("r.jsonl");
    let mut raw = Raw::start(&env.wrap(
        "kill.log",
        &["--checkpoint-every", "3"],
        &hostile("honest", &received),
    ));
    raw.handshake("2025-11-25");
    for i in 0..200 {
        let m = json!({"jsonrpc":"2.0","id":i,"method":"tools/call","params":{"name":"echo","arguments":{"text": format!("n{i}")}}});
        raw.send(m.to_string().as_bytes());
    }
    // Wait until some calls reached the server, then kill mid-stream.
    let deadline = Instant::now() + Duration::from_secs(10);
    while received_lines(&received)
        .iter()
        .filter(|l| l.contains("tools/call"))
        .count()
        < 20
    {
        assert!(Instant::now() < deadline, "calls never reached the server");
        std::thread::sleep(Duration::from_millis(5));
    }
    raw.child.kill().unwrap();
    raw.child.wait().unwrap();
    let forwarded: Vec<i64> = received_lines(&received)
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|m| m["method"] == "tools/call")
        .map(|m| m["id"].as_i64().unwrap())
        .collect();
    let v = env.verify("kill.log");
    let status = v["report"]["logs"][0]["status"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    assert!(status == "valid" || status == "partial", "{v}");
    let decided: std::collections::HashSet<i64> = env
        .of_kind("kill.log", "tool_call")
        .iter()
        .map(|d| d["request_id"].as_i64().unwrap())
        .collect();
    for id in &forwarded {
        assert!(
            decided.contains(id),
            "call {id} reached the server without its decision in the log"
        );
    }
}

#[test]
fn two_wrappers_share_one_log() {
    if !peers_or_skip("two_wrappers_share_one_log") {
        return;
    }
    let env = Env::new();
    env.policy(ALLOW_ALL);
    let script = json!({"steps": (0..20).map(|i| json!({"op": "call", "name": "echo", "arguments": {"text": format!("{i}")}})).collect::<Vec<_>>()});
    let a_cmd = env.wrap(
        "shared.log",
        &["--checkpoint-every", "4"],
        &hostile("honest", &env.path("a.jsonl")),
    );
    let b_cmd = env.wrap(
        "shared.log",
        &["--checkpoint-every", "4"],
        &hostile("honest", &env.path("b.jsonl")),
    );
    let (ea, sa) = (
        Env {
            dir: tempfile::tempdir().unwrap(),
        },
        script.clone(),
    );
    let t = std::thread::spawn(move || sdk("sdk-client.mjs", &ea, sa, &a_cmd));
    let b = sdk("sdk-client.mjs", &env, script, &b_cmd);
    let a = t.join().unwrap();
    assert!(
        steps(&a)
            .iter()
            .chain(steps(&b).iter())
            .all(|s| s["ok"] == true)
    );
    assert_eq!(env.verify("shared.log")["exit"], 0);
    assert_eq!(env.of_kind("shared.log", "tool_call").len(), 40);
}

#[test]
fn ask_goes_to_the_client_and_only_a_yes_lets_the_call_through() {
    if !peers_or_skip("ask_goes_to_the_client_and_only_a_yes_lets_the_call_through") {
        return;
    }
    let env = Env::new();
    env.policy("version = 1\ndefault = \"allow\"\n[[rule]]\nid = \"ask-notes\"\ntools = [\"write_note\"]\naction = \"ask\"\n");
    for (elicitation, expect_ok) in [
        (json!("accept"), true),
        (json!("decline"), false),
        (Value::Null, false),
    ] {
        let received = env.path(&format!("r-{elicitation}.jsonl"));
        let note = env.path(&format!("note-{}.txt", rand_suffix()));
        let script = json!({"elicitation": elicitation, "steps": [
            {"op": "call", "name": "write_note", "arguments": {"path": note, "text": "asked"}},
        ]});
        let log = format!("ask-{}.log", rand_suffix());
        let wrapped = sdk(
            "sdk-client.mjs",
            &env,
            script,
            &env.wrap(&log, &[], &hostile("honest", &received)),
        );
        let s = steps(&wrapped);
        assert_eq!(
            s[0]["result"].get("isError").is_none(),
            expect_ok,
            "{elicitation}: {}",
            s[0]
        );
        assert_eq!(note.exists(), expect_ok, "{elicitation}");
        let d = &env.of_kind(&log, "tool_call")[0];
        assert_eq!(d["rule"], "ask-notes", "{d}");
        let via = if elicitation.is_null() {
            "none"
        } else {
            "elicitation"
        };
        assert_eq!(d["asked"]["via"], via, "{d}");
        assert_eq!(d["decision"], if expect_ok { "allow" } else { "block" });
        if !elicitation.is_null() {
            assert_eq!(
                wrapped["elicitations"].as_array().unwrap().len(),
                1,
                "{wrapped}"
            );
        }
        assert_eq!(env.verify(&log)["exit"], 0);
    }
}

#[test]
fn near_miss_method_names_and_a_pipelined_first_call() {
    if !peers_or_skip("near_miss_method_names_and_a_pipelined_first_call") {
        return;
    }
    let env = Env::new();
    env.policy("version = 1\ndefault = \"allow\"\n[[rule]]\nid = \"no-notes\"\ntools = [\"write_note\"]\naction = \"block\"\n");
    let received = env.path("r.jsonl");
    let mut raw = Raw::start(&env.wrap("nm.log", &[], &hostile("honest", &received)));
    // initialize, initialized and a call, all before any answer.
    raw.send(br#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#);
    raw.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    raw.send(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"early"}}}"#);
    raw.expect(|v| v["id"] == 1 && v["result"]["content"][0]["text"] == "early");
    for (id, method) in [(2, "Tools/Call"), (3, "tools/call "), (4, "tools//call")] {
        let m = json!({"jsonrpc":"2.0","id":id,"method":method,"params":{"name":"write_note","arguments":{"path":"/tmp/nm","text":"nearmiss"}}});
        raw.send(m.to_string().as_bytes());
        raw.expect(|v| v["id"] == id && v["error"]["code"] == -32601);
    }
    drop(raw.stdin);
    raw.child.wait().unwrap();
    assert!(!received_lines(&received).join("\n").contains("nearmiss"));
    assert_eq!(env.verify("nm.log")["exit"], 0);
}

#[test]
fn ask_in_2026_07_28_is_an_input_required_result_with_the_wrappers_own_state() {
    if !peers_or_skip("ask_in_2026_07_28_is_an_input_required_result_with_the_wrappers_own_state") {
        return;
    }
    let env = Env::new();
    env.policy("version = 1\ndefault = \"allow\"\n[[rule]]\nid = \"ask-mode\"\ntools = [\"set_mode\"]\naction = \"ask\"\n");
    let server = node_script("sdk-v2-server.mjs", &[]);
    for (answer, expect_ok) in [("accept", true), ("decline", false)] {
        let log = format!("mask-{answer}.log");
        let script = json!({"probe": "inplace", "elicitation": answer, "steps": [
            {"op": "call", "name": "set_mode", "arguments": {"mode": "fast"}},
        ]});
        let wrapped = sdk(
            "sdk-v2-client.mjs",
            &env,
            script,
            &env.wrap(&log, &[], &server),
        );
        assert_eq!(wrapped["era"], "modern", "{wrapped}");
        let s = steps(&wrapped);
        assert_eq!(s[0]["ok"], true, "{}", s[0]);
        if expect_ok {
            assert_eq!(s[0]["result"]["content"][0]["text"], "ok", "{}", s[0]);
        } else {
            assert_eq!(s[0]["result"]["isError"], true, "{}", s[0]);
        }
        assert_eq!(
            wrapped["elicitations"].as_array().unwrap().len(),
            1,
            "{wrapped}"
        );
        let d = &env.of_kind(&log, "tool_call")[0];
        assert_eq!(d["asked"]["via"], "input_required", "{d}");
        assert_eq!(d["rule"], "ask-mode");
        assert_eq!(d["forwarded"], expect_ok);
        assert_eq!(
            env.of_kind(&log, "tool_result").len(),
            usize::from(expect_ok)
        );
        assert_eq!(env.verify(&log)["exit"], 0);
    }
}
