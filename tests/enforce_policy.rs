//! `vouch::enforce::policy` and `vouch policy check|test`: the decision truth
//! table (generated), path normalisation, matchers, egress, rate limits,
//! errors with their line, and the CLI end to end.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use support::vouch;
use vouch::enforce::policy::{Action, Decision, Policy, RateState};

fn parse(text: &str) -> Policy {
    Policy::parse(text, Path::new("test.toml")).unwrap_or_else(|e| panic!("{e}\n---\n{text}"))
}

fn decide(p: &Policy, tool: &str, args: Value) -> Decision {
    p.decide(tool, &args, &mut RateState::default(), Instant::now())
}

fn action_str(a: Action) -> &'static str {
    match a {
        Action::Allow => "allow",
        Action::Ask => "ask",
        Action::Block => "block",
    }
}

const ACTIONS: [Action; 3] = [Action::Allow, Action::Ask, Action::Block];

// ------------------------------------------------------------ truth table

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EgressCase {
    /// No `[egress]` section; the call has a URL that would be refused.
    NoSection,
    /// A section; the call has no URL.
    Plain,
    /// A section; the call's URL is allowed.
    Allowed,
    /// A section; the call's URL is refused.
    Refused,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LimitCase {
    None,
    /// A limit with room left.
    Room,
    /// A limit already at max (max = 0).
    Exhausted,
}

/// Every sequence of 0..=3 matching rule actions (with repetition), in order.
fn rule_sequences() -> Vec<Vec<Action>> {
    let mut out = vec![vec![]];
    let mut last = vec![vec![]];
    for _ in 0..3 {
        let mut next = Vec::new();
        for seq in &last {
            for a in ACTIONS {
                let mut s = seq.clone();
                s.push(a);
                next.push(s);
            }
        }
        out.extend(next.iter().cloned());
        last = next;
    }
    out
}

fn policy_text(default: Action, rules: &[Action], egress: EgressCase, limit: LimitCase) -> String {
    let mut t = format!("version = 1\ndefault = \"{}\"\n", action_str(default));
    if egress != EgressCase::NoSection {
        t += "[egress]\nallow = [\"ok.example\"]\n";
    }
    // Noise that must never decide: another tool, and a matcher that fails.
    t += "[[rule]]\nid = \"other-tool\"\ntools = [\"other\"]\naction = \"block\"\n";
    t += "[[rule]]\nid = \"unmet\"\ntools = [\"*\"]\naction = \"block\"\nexists = [\"/nope\"]\n";
    let globs = ["t", "*", "t*", "{t,u}"];
    for (i, a) in rules.iter().enumerate() {
        t += &format!(
            "[[rule]]\nid = \"r{i}\"\ntools = [\"{}\"]\naction = \"{}\"\n",
            globs[i % globs.len()],
            action_str(*a)
        );
    }
    match limit {
        LimitCase::None => {}
        LimitCase::Room => t += "[[limit]]\nid = \"l\"\ntools = [\"t\"]\nmax = 5\nper = \"1m\"\n",
        LimitCase::Exhausted => {
            t += "[[limit]]\nid = \"l\"\ntools = [\"t*\"]\nmax = 0\nper = \"1h\"\n"
        }
    }
    t
}

/// The model the decision must follow (the module docs' table).
fn expected(
    default: Action,
    rules: &[Action],
    egress: EgressCase,
    limit: LimitCase,
) -> (Action, String) {
    if egress == EgressCase::Refused {
        return (Action::Block, "egress".into());
    }
    let base = match rules.iter().max() {
        Some(strongest) => {
            let i = rules.iter().position(|a| a == strongest).unwrap();
            (*strongest, format!("r{i}"))
        }
        None => (default, "default".into()),
    };
    if base.0 != Action::Block && limit == LimitCase::Exhausted {
        return (Action::Block, "limit:l".into());
    }
    base
}

#[test]
fn truth_table_default_rules_egress_limits() {
    let mut cases = 0;
    let mut seen = std::collections::HashSet::new();
    for default in ACTIONS {
        for rules in rule_sequences() {
            for egress in [
                EgressCase::NoSection,
                EgressCase::Plain,
                EgressCase::Allowed,
                EgressCase::Refused,
            ] {
                for limit in [LimitCase::None, LimitCase::Room, LimitCase::Exhausted] {
                    let text = policy_text(default, &rules, egress, limit);
                    let policy = parse(&text);
                    let args = match egress {
                        EgressCase::Plain => json!({"q": "no url here"}),
                        EgressCase::Allowed => json!({"u": "https://ok.example/a"}),
                        EgressCase::NoSection | EgressCase::Refused => {
                            json!({"nested": ["see https://bad.example/x"]})
                        }
                    };
                    let got = decide(&policy, "t", args);
                    let (action, rule) = expected(default, &rules, egress, limit);
                    assert_eq!(
                        (got.action, got.rule.as_str()),
                        (action, rule.as_str()),
                        "default {default:?}, rules {rules:?}, {egress:?}, {limit:?}\n{text}"
                    );
                    assert!(!got.reason.contains('\n'), "{}", got.reason);
                    seen.insert((action, rule.starts_with('r'), rule.clone()));
                    cases += 1;
                }
            }
        }
    }
    assert_eq!(cases, 3 * 40 * 4 * 3);
    // Every outcome kind occurs: each action from a rule, from the default,
    // egress and limit blocks.
    for outcome in ["egress", "limit:l", "default", "r0", "r1", "r2"] {
        assert!(
            seen.iter().any(|(_, _, r)| r == outcome),
            "{outcome} never decided"
        );
    }
}

#[test]
fn allow_rule_beats_block_default_and_first_strongest_is_reported() {
    let p = parse(
        "version = 1\n[[rule]]\nid = \"a\"\ntools = [\"*\"]\naction = \"ask\"\n\
         [[rule]]\nid = \"b1\"\ntools = [\"x\"]\naction = \"block\"\nreason = \"no x\"\n\
         [[rule]]\nid = \"b2\"\ntools = [\"x\"]\naction = \"block\"\n\
         [[rule]]\nid = \"ok\"\ntools = [\"y\"]\naction = \"allow\"\n",
    );
    assert_eq!(p.default_action(), Action::Block);
    let d = decide(&p, "x", json!({}));
    assert_eq!((d.action, d.rule.as_str()), (Action::Block, "b1"));
    assert!(d.reason.starts_with("no x"), "{}", d.reason);
    let d = decide(&p, "y", json!({}));
    assert_eq!((d.action, d.rule.as_str()), (Action::Ask, "a"));
    let d = decide(&p, "zzz", json!({}));
    assert_eq!((d.action, d.rule.as_str()), (Action::Ask, "a"));
    let p = parse("version = 1\n[[rule]]\nid = \"ok\"\ntools = [\"y\"]\naction = \"allow\"\n");
    assert_eq!(decide(&p, "y", json!({})).action, Action::Allow);
    let d = decide(&p, "n", json!({}));
    assert_eq!((d.action, d.rule.as_str()), (Action::Block, "default"));
}

// ------------------------------------------------------------ paths

struct Tree {
    _dir: tempfile::TempDir,
    base: PathBuf,
    root: PathBuf,
}

fn tree() -> Tree {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let root = base.join("project");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/a.txt"), "a").unwrap();
    std::fs::create_dir_all(base.join("project2")).unwrap();
    std::fs::create_dir_all(base.join("outside")).unwrap();
    std::fs::write(base.join("outside/secret"), "s").unwrap();
    std::os::unix::fs::symlink(base.join("outside"), root.join("escape")).unwrap();
    std::os::unix::fs::symlink(root.join("src"), root.join("alias")).unwrap();
    Tree {
        _dir: dir,
        base,
        root,
    }
}

fn path_policy(root: &Path) -> Policy {
    parse(&format!(
        r#"version = 1
default = "ask"
roots = ["{}"]
[[rule]]
id = "read-inside"
tools = ["read_*"]
action = "allow"
path_inside = ["/path", "/paths/*"]
[[rule]]
id = "outside"
tools = ["*"]
action = "block"
path_outside = ["/path", "/paths/*"]
"#,
        root.display()
    ))
}

#[test]
fn path_normalisation() {
    let t = tree();
    let p = path_policy(&t.root);
    let r = t.root.display().to_string();
    let b = t.base.display().to_string();
    let cases: Vec<(Value, Action, &str)> = vec![
        (
            json!({"path": format!("{r}/src/a.txt")}),
            Action::Allow,
            "read-inside",
        ),
        (
            json!({"path": format!("{r}/src/new-file")}),
            Action::Allow,
            "read-inside",
        ),
        (
            json!({"path": format!("{r}/./src/../src/a.txt")}),
            Action::Allow,
            "read-inside",
        ),
        (json!({"path": r.clone()}), Action::Allow, "read-inside"),
        (
            json!({"path": format!("{r}/alias/a.txt")}),
            Action::Allow,
            "read-inside",
        ),
        (
            json!({"path": format!("file://{r}/src/a.txt")}),
            Action::Allow,
            "read-inside",
        ),
        // `..` escape.
        (
            json!({"path": format!("{r}/../outside/secret")}),
            Action::Block,
            "outside",
        ),
        (
            json!({"path": format!("{r}/src/../../outside")}),
            Action::Block,
            "outside",
        ),
        // A link inside the root pointing outside.
        (
            json!({"path": format!("{r}/escape/secret")}),
            Action::Block,
            "outside",
        ),
        (
            json!({"path": format!("{r}/escape/not-yet")}),
            Action::Block,
            "outside",
        ),
        // A sibling sharing the root's name as a prefix.
        (
            json!({"path": format!("{b}/project2/x")}),
            Action::Block,
            "outside",
        ),
        // Relative paths and `~` are outside (fail closed).
        (json!({"path": "src/a.txt"}), Action::Block, "outside"),
        (json!({"path": "~/x"}), Action::Block, "outside"),
        (json!({"path": "~"}), Action::Block, "outside"),
        (
            json!({"path": format!("file://{b}/outside/secret")}),
            Action::Block,
            "outside",
        ),
        (
            json!({"path": format!("file://{r}/%2e%2e/outside")}),
            Action::Block,
            "outside",
        ),
        // Not a string: path_outside holds.
        (json!({"path": 7}), Action::Block, "outside"),
        (
            json!({"path": [format!("{r}/src")]}),
            Action::Block,
            "outside",
        ),
        // A pointer resolving to nothing holds for neither matcher.
        (json!({}), Action::Ask, "default"),
        (json!({"other": "/etc/passwd"}), Action::Ask, "default"),
        // Every element of the array.
        (
            json!({"paths": [format!("{r}/src"), format!("{r}/alias")]}),
            Action::Allow,
            "read-inside",
        ),
        (
            json!({"paths": [format!("{r}/src"), "/etc/passwd"]}),
            Action::Block,
            "outside",
        ),
        (json!({"paths": []}), Action::Ask, "default"),
    ];
    for (args, action, rule) in cases {
        let d = decide(&p, "read_file", args.clone());
        assert_eq!(
            (d.action, d.rule.as_str()),
            (action, rule),
            "{args}: {}",
            d.reason
        );
    }
    // The reason names the rule and pointer, never the value.
    let d = decide(&p, "write", json!({"path": "/etc/shadow"}));
    assert_eq!(d.rule, "outside");
    assert!(
        d.reason.contains("/path") && d.reason.contains("outside the allowed roots"),
        "{}",
        d.reason
    );
    assert!(!d.reason.contains("shadow"), "{}", d.reason);
}

#[test]
fn rule_roots_replace_the_top_level_roots() {
    let t = tree();
    let p = parse(&format!(
        "version = 1\ndefault = \"allow\"\nroots = [\"{}\"]\n[[rule]]\nid = \"w\"\ntools = [\"write\"]\naction = \"block\"\nroots = [\"{}/outside\"]\npath_outside = [\"/path\"]\n",
        t.root.display(),
        t.base.display()
    ));
    let inside_root = json!({"path": format!("{}/src/a.txt", t.root.display())});
    let inside_other = json!({"path": format!("{}/outside/secret", t.base.display())});
    assert_eq!(decide(&p, "write", inside_root).action, Action::Block);
    assert_eq!(decide(&p, "write", inside_other).action, Action::Allow);
    let s = p.summary();
    assert_eq!(s.rules[0].roots.as_ref().unwrap().len(), 1);
    assert_eq!(s.roots, vec![t.root.display().to_string()]);
}

// ------------------------------------------------------------ matchers

#[test]
fn match_equals_exists() {
    let p = parse(
        r#"version = 1
default = "allow"
[[rule]]
id = "rm"
tools = ["run"]
action = "block"
[rule.match]
"/command" = "\\brm\\s+-rf\\b"
[[rule]]
id = "anywhere"
tools = ["*"]
action = "ask"
[rule.match]
"" = "BEGIN PRIVATE"
[[rule]]
id = "overwrite"
tools = ["write"]
action = "ask"
[rule.equals]
"/mode" = "overwrite"
"/n" = 1
[[rule]]
id = "force"
tools = ["write"]
action = "block"
exists = ["/force"]
[rule.equals]
"/opts" = { deep = [true, 2.5] }
"#,
    );
    let cases: Vec<(&str, Value, Action, &str)> = vec![
        ("run", json!({"command": "rm -rf /"}), Action::Block, "rm"),
        (
            "run",
            json!({"command": "echo; rm  -rf ~"}),
            Action::Block,
            "rm",
        ),
        (
            "run",
            json!({"command": "rm -rfx"}),
            Action::Allow,
            "default",
        ),
        (
            "run",
            json!({"command": "farm -rf"}),
            Action::Allow,
            "default",
        ),
        // Not a string at the pointer: `match` does not hold.
        (
            "run",
            json!({"command": ["rm", "-rf"]}),
            Action::Allow,
            "default",
        ),
        (
            "other",
            json!({"command": "rm -rf /"}),
            Action::Allow,
            "default",
        ),
        // "" = any string anywhere.
        (
            "x",
            json!({"a": [{"b": "-----BEGIN PRIVATE KEY"}]}),
            Action::Ask,
            "anywhere",
        ),
        ("x", json!({"BEGIN PRIVATE": 1}), Action::Allow, "default"),
        // equals: all entries must hold; numbers by value.
        (
            "write",
            json!({"mode": "overwrite", "n": 1}),
            Action::Ask,
            "overwrite",
        ),
        (
            "write",
            json!({"mode": "overwrite", "n": 1.0}),
            Action::Ask,
            "overwrite",
        ),
        (
            "write",
            json!({"mode": "overwrite", "n": 2}),
            Action::Allow,
            "default",
        ),
        (
            "write",
            json!({"mode": "append", "n": 1}),
            Action::Allow,
            "default",
        ),
        (
            "write",
            json!({"mode": "overwrite"}),
            Action::Allow,
            "default",
        ),
        // exists AND equals (a table value).
        (
            "write",
            json!({"force": false, "opts": {"deep": [true, 2.5]}}),
            Action::Block,
            "force",
        ),
        (
            "write",
            json!({"force": null, "opts": {"deep": [true, 2.5]}}),
            Action::Block,
            "force",
        ),
        (
            "write",
            json!({"opts": {"deep": [true, 2.5]}}),
            Action::Allow,
            "default",
        ),
        (
            "write",
            json!({"force": 1, "opts": {"deep": [true]}}),
            Action::Allow,
            "default",
        ),
    ];
    for (tool, args, action, rule) in cases {
        let d = decide(&p, tool, args.clone());
        assert_eq!(
            (d.action, d.rule.as_str()),
            (action, rule),
            "{tool} {args}: {}",
            d.reason
        );
    }
    let d = decide(&p, "run", json!({"command": "rm -rf /secret-dir"}));
    assert!(d.reason.contains("/command"), "{}", d.reason);
    assert!(!d.reason.contains("secret-dir"), "{}", d.reason);
}

// ------------------------------------------------------------ egress

fn egress_policy(allow: &str, tools: Option<&str>) -> Policy {
    let tools = tools.map(|t| format!("tools = {t}\n")).unwrap_or_default();
    parse(&format!(
        "version = 1\ndefault = \"allow\"\n[egress]\nallow = {allow}\n{tools}"
    ))
}

#[test]
fn egress_hosts() {
    let p = egress_policy(
        r#"["api.github.com", "*.githubusercontent.com", "127.0.0.1", "[::1]"]"#,
        None,
    );
    let allowed = [
        "https://api.github.com/repos/x",
        "https://API.GitHub.com./x",
        "https://raw.githubusercontent.com/a",
        "https://a.b.githubusercontent.com/a",
        "http://127.0.0.1:8080/x",
        "http://[::1]:3000/",
        "no url at all",
        "www.evil.com is not a URL",
        "file:///etc/passwd",
        // userinfo: the url crate (WHATWG) reads the host after the `@`.
        "https://evil.com@api.github.com/",
        "see (https://api.github.com/x).",
    ];
    for u in allowed {
        let d = decide(&p, "fetch", json!({"url": u}));
        assert_eq!(d.action, Action::Allow, "{u}: {}", d.reason);
    }
    // What the real host of a userinfo URL is, as the url crate parses it.
    let parsed = url::Url::parse("https://evil.com@good.com/").unwrap();
    assert_eq!(parsed.host_str(), Some("good.com"));
    assert_eq!(parsed.username(), "evil.com");

    let refused = [
        ("https://githubusercontent.com/a", "githubusercontent.com"),
        ("https://evil.com/", "evil.com"),
        (
            "https://api.github.com.evil.com/",
            "api.github.com.evil.com",
        ),
        ("https://api.github.com@evil.com/", "evil.com"),
        ("http://127.0.0.2/", "127.0.0.2"),
        (
            "ok https://api.github.com then https://evil.com/x",
            "evil.com",
        ),
        ("https://api.github.com/?next=https://evil.com", "evil.com"),
        ("{\"u\":\"https://evil.com\"}", "evil.com"),
    ];
    for (u, host) in refused {
        let d = decide(&p, "fetch", json!({"deep": {"list": [1, u]}}));
        assert_eq!(
            (d.action, d.rule.as_str()),
            (Action::Block, "egress"),
            "{u}"
        );
        assert!(
            d.reason.contains(&format!("host {host} ")),
            "{u}: {}",
            d.reason
        );
    }
    let d = decide(&p, "fetch", json!({"u": "https://user:hunter2@evil.com/"}));
    assert!(!d.reason.contains("hunter2"), "{}", d.reason);
    // Unparsable: blocked (fail closed).
    for u in [
        "https://",
        "http://[::1",
        "://nohost",
        "https://exa mple.com",
    ] {
        let d = decide(&p, "fetch", json!({"u": u}));
        if u == "https://exa mple.com" {
            // Split at whitespace: `https://exa` is a URL with host `exa`.
            assert_eq!(d.rule, "egress", "{u}");
            continue;
        }
        assert_eq!(
            (d.action, d.rule.as_str()),
            (Action::Block, "egress"),
            "{u}"
        );
        assert!(d.reason.contains("no host"), "{u}: {}", d.reason);
    }
    // Member names are checked too.
    assert_eq!(
        decide(&p, "f", json!({"https://evil.com": 1})).action,
        Action::Block
    );
}

#[test]
fn egress_empty_list_and_tools() {
    let p = egress_policy("[]", None);
    assert_eq!(
        decide(&p, "x", json!({"u": "https://api.github.com"})).action,
        Action::Block
    );
    assert_eq!(
        decide(&p, "x", json!({"u": "plain text"})).action,
        Action::Allow
    );
    let p = egress_policy("[]", Some(r#"["fetch*"]"#));
    assert_eq!(
        decide(&p, "fetch_url", json!({"u": "https://a.com"})).action,
        Action::Block
    );
    assert_eq!(
        decide(&p, "read", json!({"u": "https://a.com"})).action,
        Action::Allow
    );
    // Egress beats an allow rule.
    let p = parse(
        "version = 1\n[egress]\nallow = []\n[[rule]]\nid = \"all\"\ntools = [\"*\"]\naction = \"allow\"\n",
    );
    let d = decide(&p, "x", json!({"u": "https://a.com"}));
    assert_eq!((d.action, d.rule.as_str()), (Action::Block, "egress"));
}

// ------------------------------------------------------------ rate limits

#[test]
fn rate_limit_sliding_window() {
    let p = parse(
        "version = 1\ndefault = \"allow\"\n\
         [[rule]]\nid = \"deny-x\"\ntools = [\"fetch\"]\naction = \"block\"\nexists = [\"/x\"]\n\
         [[rule]]\nid = \"ask-y\"\ntools = [\"fetch\"]\naction = \"ask\"\nexists = [\"/y\"]\n\
         [[limit]]\nid = \"fetch-rate\"\ntools = [\"fetch\", \"get\"]\nmax = 2\nper = \"1m\"\n",
    );
    let mut rates = RateState::default();
    let t0 = Instant::now();
    let at = |s: u64| t0 + Duration::from_secs(s);
    let mut call = |tool: &str, args: Value, s: u64| {
        let d = p.decide(tool, &args, &mut rates, at(s));
        (d.action, d.rule)
    };
    // Blocked calls are not counted.
    for s in 0..5 {
        assert_eq!(
            call("fetch", json!({"x": 1}), s),
            (Action::Block, "deny-x".into())
        );
    }
    assert_eq!(
        call("fetch", json!({}), 10),
        (Action::Allow, "default".into())
    );
    // Ask counts too; tools of one limit are counted together.
    assert_eq!(
        call("get", json!({"y": 1}), 20),
        (Action::Allow, "default".into())
    );
    assert_eq!(
        call("fetch", json!({"y": 1}), 30),
        (Action::Block, "limit:fetch-rate".into())
    );
    assert_eq!(
        call("fetch", json!({}), 69),
        (Action::Block, "limit:fetch-rate".into())
    );
    // Other tools are not limited.
    assert_eq!(
        call("other", json!({}), 69),
        (Action::Allow, "default".into())
    );
    // At 70 s the call at 10 s has left the window.
    assert_eq!(
        call("fetch", json!({"y": 1}), 70),
        (Action::Ask, "ask-y".into())
    );
    assert_eq!(
        call("fetch", json!({}), 79),
        (Action::Block, "limit:fetch-rate".into())
    );
    assert_eq!(
        call("fetch", json!({}), 80),
        (Action::Allow, "default".into())
    );
    let s = p.summary();
    assert_eq!((s.limits[0].max, s.limits[0].per_seconds), (2, 60));
}

#[test]
fn every_matching_limit_must_have_room_and_none_counts_a_refusal() {
    let p = parse(
        "version = 1\ndefault = \"allow\"\n\
         [[limit]]\nid = \"wide\"\ntools = [\"*\"]\nmax = 3\nper = \"1h\"\n\
         [[limit]]\nid = \"narrow\"\ntools = [\"a\"]\nmax = 1\nper = \"1h\"\n",
    );
    let mut rates = RateState::default();
    let now = Instant::now();
    let mut go = |tool: &str| p.decide(tool, &json!({}), &mut rates, now).rule;
    assert_eq!(go("a"), "default");
    assert_eq!(go("a"), "limit:narrow"); // not counted against "wide"
    assert_eq!(go("b"), "default");
    assert_eq!(go("b"), "default");
    assert_eq!(go("b"), "limit:wide");
}

// ------------------------------------------------------------ errors

fn error_of(text: &str) -> vouch::enforce::PolicyError {
    match Policy::parse(text, Path::new("p.toml")) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e,
    }
}

#[test]
fn errors_name_their_line() {
    let rule = "[[rule]]\nid = \"r\"\ntools = [\"*\"]\naction = \"allow\"\n";
    let cases: Vec<(String, usize, &str)> = vec![
        ("version = 1\n\nbogus = 1\n".into(), 3, "policy_syntax"),
        (format!("version = 1\n{rule}colour = \"red\"\n"), 6, "policy_syntax"),
        ("version = 1\n[egress]\nallow = []\nextra = 1\n".into(), 4, "policy_syntax"),
        (format!("version = 1\n{rule}[rule.match]\n\"/a\" = \"x\"\n[rule.bogus]\n"), 8, "policy_syntax"),
        ("version = 1\ndefault = \"maybe\"\n".into(), 2, "policy_syntax"),
        ("version = 2\n".into(), 1, "policy_unsupported_version"),
        ("\n\nversion = 0\n".into(), 3, "policy_unsupported_version"),
        ("version = 1\n[[rule]]\nid = \"r\"\ntools = [\"ok\", \"a[b\"]\naction = \"allow\"\n".into(), 4, "policy_bad_glob"),
        (format!("version = 1\n{rule}[rule.match]\n\"/a\" = \"x\"\n\"/b\" = \"(\"\n"), 8, "policy_bad_regex"),
        (format!("version = 1\n{rule}[rule.match]\n\"/a\" = \"\\\\w{{1000}}{{1000}}\"\n"), 7, "policy_bad_regex"),
        (format!("version = 1\n{rule}exists = [\"/ok\", \"nope\"]\n"), 6, "policy_bad_pointer"),
        (format!("version = 1\n{rule}exists = [\"/a~2\"]\n"), 6, "policy_bad_pointer"),
        (format!("version = 1\n{rule}[rule.match]\n\"/a/*\" = \"x\"\n"), 7, "policy_bad_pointer"),
        (format!("version = 1\nroots = [\"/\"]\n{rule}path_inside = [\"\"]\n"), 7, "policy_bad_pointer"),
        (format!("version = 1\n{rule}{rule}"), 7, "policy_duplicate_id"),
        ("version = 1\n[[limit]]\nid = \"l\"\ntools = [\"*\"]\nmax = 1\nper = \"1m\"\n[[limit]]\nid = \"l\"\ntools = [\"*\"]\nmax = 1\nper = \"1m\"\n".into(), 8, "policy_duplicate_id"),
        ("version = 1\n[[rule]]\nid = \"Bad Id\"\ntools = [\"*\"]\naction = \"allow\"\n".into(), 3, "policy_invalid"),
        ("version = 1\n[[rule]]\nid = \"default\"\ntools = [\"*\"]\naction = \"allow\"\n".into(), 3, "policy_invalid"),
        ("version = 1\n[[rule]]\nid = \"r\"\ntools = []\naction = \"allow\"\n".into(), 4, "policy_invalid"),
        ("version = 1\nroots = [\"/ok\", \"relative\"]\n".into(), 2, "policy_invalid"),
        (format!("version = 1\n{rule}path_outside = [\"/p\"]\n"), 6, "policy_invalid"),
        (format!("version = 1\n{rule}reason = \"two\\nlines\"\n"), 6, "policy_invalid"),
        (format!("version = 1\n{rule}[rule.equals]\n\"/d\" = 1979-05-27\n"), 7, "policy_invalid"),
        ("version = 1\n[egress]\nallow = [\"ok.com\", \"a*.com\"]\n".into(), 3, "policy_invalid"),
        ("version = 1\n[[limit]]\nid = \"l\"\ntools = [\"*\"]\nmax = 1\nper = \"1d\"\n".into(), 6, "policy_invalid"),
        ("version = 1\n[[limit]]\nid = \"l\"\ntools = [\"*\"]\nmax = -1\nper = \"1m\"\n".into(), 5, "policy_invalid"),
        ("version = 1\nversion = 1\n".into(), 2, "policy_syntax"),
    ];
    for (text, line, code) in cases {
        let e = error_of(&text);
        assert_eq!((e.line, e.code()), (Some(line), code), "{e}\n---\n{text}");
        assert!(e.column.is_some(), "{e}");
        assert!(e.to_string().starts_with(&format!("p.toml:{line}:")), "{e}");
        assert!(!e.to_string().contains('\n'), "{e:?}");
    }
    // A missing version: an error (wherever toml puts it).
    assert_eq!(error_of("default = \"allow\"\n").code(), "policy_syntax");
    // Columns count characters from the start of the line.
    let e = error_of("version = 1\n  bogus = 1\n");
    assert_eq!((e.line, e.column), (Some(2), Some(3)));
}

#[test]
fn regex_size_is_limited() {
    // Small text, huge automaton.
    let text = "version = 1\n[[rule]]\nid = \"r\"\ntools = [\"*\"]\naction = \"block\"\n[rule.match]\n\"\" = \"(\\\\w{100}){100}\"\n";
    let e = error_of(text);
    assert_eq!(e.code(), "policy_bad_regex");
    assert!(e.to_string().contains("limit"), "{e}");
}

#[test]
fn digest_and_summary() {
    let text = "version = 1\ndefault = \"ask\"\n[[rule]]\nid = \"r\"\ntools = [\"a\", \"b*\"]\naction = \"block\"\nexists = [\"/f\"]\n";
    let p = parse(text);
    use sha2::Digest;
    let want: String = sha2::Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(p.digest(), format!("sha256:{want}"));
    let s = p.summary();
    assert_eq!(s.default, Action::Ask);
    assert_eq!(s.rules[0].tools, vec!["a", "b*"]);
    assert_eq!(s.rules[0].conditions, vec!["exists \"/f\""]);
    let j = serde_json::to_value(&s).unwrap();
    assert_eq!(j["rules"][0]["action"], "block");
    assert_eq!(j["default"], "ask");
    assert!(j["egress"].is_null());
}

#[test]
fn load_reads_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("p.toml");
    std::fs::write(&f, "version = 1\n").unwrap();
    assert_eq!(Policy::load(&f).unwrap().default_action(), Action::Block);
    std::fs::write(&f, b"version = 1\n\xff\n").unwrap();
    let e = Policy::load(&f).unwrap_err();
    assert_eq!(e.code(), "policy_syntax");
    assert!(Policy::load(&dir.path().join("missing.toml")).is_err());
}

// ------------------------------------------------------------ CLI

const CLI_POLICY: &str = r#"# vouch wrap policy
version = 1
default = "block"
roots = ["/srv/vouch-test-project"]

[egress]
allow = ["api.github.com"]

[[rule]]
id = "fs-read"
tools = ["read_*"]
action = "allow"
reason = "reads inside the project are fine"
path_inside = ["/path"]

[[rule]]
id = "fs-outside"
tools = ["*"]
action = "block"
path_outside = ["/path"]

[[limit]]
id = "fetch-rate"
tools = ["fetch"]
max = 10
per = "1m"
"#;

fn write_policy(dir: &Path, text: &str) -> String {
    let f = dir.join("policy.toml");
    std::fs::write(&f, text).unwrap();
    f.display().to_string()
}

#[test]
fn cli_check_table_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let f = write_policy(dir.path(), CLI_POLICY);
    let out = vouch(&["policy", "check", &f]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    for want in [
        "fs-read",
        "fs-outside",
        "read_*",
        "path_inside /path",
        "sha256:",
        "api.github.com",
        "fetch-rate",
        "/srv/vouch-test-project",
        "conditions",
    ] {
        assert!(text.contains(want), "{want} missing:\n{text}");
    }
    let out = vouch(&["policy", "check", &f, "--format", "json"]);
    assert_eq!(out.status.code(), Some(0));
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["default"], "block");
    assert_eq!(j["rules"][1]["id"], "fs-outside");
    assert_eq!(j["rules"][0]["reason"], "reads inside the project are fine");
    assert_eq!(j["limits"][0]["per_seconds"], 60);
    assert_eq!(j["egress"]["tools"][0], "*");
    assert_eq!(j["digest"], Policy::load(Path::new(&f)).unwrap().digest());
}

#[test]
fn cli_test_decisions_and_expect() {
    let dir = tempfile::tempdir().unwrap();
    let f = write_policy(dir.path(), CLI_POLICY);
    let args = r#"{"path":"/srv/vouch-test-project/a.txt"}"#;
    let out = vouch(&["policy", "test", &f, "--tool", "read_file", "--args", args]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("allow") && text.contains("fs-read"), "{text}");
    assert!(text.contains("reads inside the project are fine"), "{text}");

    let out = vouch(&[
        "policy",
        "test",
        &f,
        "--tool",
        "read_file",
        "--args",
        args,
        "--expect",
        "allow",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let out = vouch(&[
        "policy",
        "test",
        &f,
        "--tool",
        "read_file",
        "--args",
        args,
        "--expect",
        "block",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("expected block"));

    let out = vouch(&[
        "policy",
        "test",
        &f,
        "--tool",
        "write_file",
        "--args",
        r#"{"path":"/etc/passwd"}"#,
        "--format",
        "json",
        "--expect",
        "block",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (j["action"].as_str(), j["rule"].as_str()),
        (Some("block"), Some("fs-outside"))
    );

    let out = vouch(&[
        "policy",
        "test",
        &f,
        "--tool",
        "fetch",
        "--args",
        r#"{"url":"https://evil.com"}"#,
        "--format",
        "json",
    ]);
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["rule"], "egress");
    // No --args: `{}`, so the default decides.
    let out = vouch(&["policy", "test", &f, "--tool", "noop", "--format", "json"]);
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["rule"], "default");

    for bad in ["[1]", "not json", "\"s\""] {
        let out = vouch(&["policy", "test", &f, "--tool", "x", "--args", bad]);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("--args") && err.contains("JSON object"),
            "{err}"
        );
    }
}

#[test]
fn cli_invalid_policy_exits_2_with_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let f = write_policy(
        dir.path(),
        "version = 1\n\n[[rule]]\nid = \"r\"\ntool = [\"x\"]\n",
    );
    for sub in [
        vec!["check", f.as_str()],
        vec!["test", f.as_str(), "--tool", "x"],
    ] {
        let mut args = vec!["policy"];
        args.extend(sub);
        let out = vouch(&args);
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&format!("{f}:5:")), "{err}");
        assert!(err.starts_with("vouch: "), "{err}");
    }
    let out = vouch(&["policy", "check", &f, "--format", "json"]);
    assert_eq!(out.status.code(), Some(2));
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["error"]["code"], "policy_syntax");
    let out = vouch(&[
        "policy",
        "check",
        &dir.path().join("none.toml").display().to_string(),
    ]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn cli_help_has_the_example_and_the_truth_table() {
    let out = vouch(&["policy", "--help"]);
    assert_eq!(out.status.code(), Some(0));
    let help = String::from_utf8(out.stdout).unwrap();
    for want in [
        "[[rule]]",
        "[[limit]]",
        "[egress]",
        "path_outside",
        "limit:ID",
        "block > ask > allow",
        "vouch wrap --log",
    ] {
        assert!(help.contains(want), "{want} missing from --help");
    }
    // The example in --help is itself a valid policy.
    let start = help.find("  version = 1").unwrap();
    let end = help[start..].find("\n\nAll matchers").unwrap() + start;
    let example: String = help[start..end]
        .lines()
        .map(|l| l.strip_prefix("  ").unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n");
    let p = parse(&example);
    assert_eq!(p.summary().rules.len(), 4);
    let out = vouch(&["--help"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("Check and test `vouch wrap` policies"));
}

#[test]
fn egress_refuses_urls_a_whatwg_parser_reads_without_slashes() {
    let policy = vouch::enforce::policy::Policy::parse(
        "version = 1\ndefault = \"allow\"\n[egress]\nallow = [\"good.com\"]\n",
        std::path::Path::new("p.toml"),
    )
    .unwrap();
    let mut rates = vouch::enforce::policy::RateState::default();
    let now = std::time::Instant::now();
    for url in [
        "https:evil.com",
        "https:/evil.com/x",
        "https:\\\\evil.com",
        "//evil.com/x",
        "see HTTPS:evil.com now",
    ] {
        let d = policy.decide("fetch", &serde_json::json!({"url": url}), &mut rates, now);
        assert_eq!(d.action, vouch::enforce::policy::Action::Block, "{url}");
        assert_eq!(d.rule, "egress", "{url}");
    }
    let d = policy.decide(
        "fetch",
        &serde_json::json!({"k": {"https://evil.com/x": 1}}),
        &mut rates,
        now,
    );
    assert_eq!(
        d.action,
        vouch::enforce::policy::Action::Block,
        "a URL as an object key"
    );
    for fine in [
        "https://good.com/x",
        "ratio 3:1",
        "time 10:30",
        "a//b",
        "http: is a scheme",
    ] {
        let d = policy.decide("fetch", &serde_json::json!({"q": fine}), &mut rates, now);
        assert_eq!(d.action, vouch::enforce::policy::Action::Allow, "{fine}");
    }
}
