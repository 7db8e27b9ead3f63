//! Issue 22, "bounded work and memory on every input": the three inputs
//! that made vouch abort or stall, each through the binary as an attacker
//! would hand them over, and hostile inputs at the documented limits
//! (docs/FORMAT.md, "Input limits").
//!
//! Memory is bounded by the OS: each command runs under `ulimit -v` (its
//! whole address space, so a generous figure: the binary, its threads'
//! stacks and the allocator's arenas count too), and the peak RSS the
//! kernel reports (`VmHWM`, sampled while it runs) is checked against a
//! smaller bound. Work is checked by doubling the input: the CPU time of
//! the larger run (best of three, read from /proc like the RSS; wall time
//! on a loaded two-core CI machine once varied fivefold) may be at most
//! about three times the smaller's (twice, with room for cache effects),
//! where a quadratic path would take four.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};
use support::{code, json, stderr, stdout, vouch};

/// Address space each command may use (`ulimit -v`), in KiB.
const ADDRESS_SPACE_KB: u64 = 1 << 20; // 1 GiB

struct Run {
    out: Output,
    elapsed: Duration,
    /// CPU time (user + system) the process used, as last sampled (at
    /// most a few milliseconds before it exited): the measure of work in
    /// the doubling tests, which wall time on a loaded machine is not.
    cpu: Duration,
    /// Peak resident set size seen, in KiB.
    peak_kb: u64,
}

/// Runs vouch under `ulimit -v`, sampling its peak RSS from /proc.
fn limited(args: &[&str]) -> Run {
    limited_in(args, None)
}

/// [`limited`], with stdin read from `input` (else empty).
fn limited_in(args: &[&str], input: Option<&Path>) -> Run {
    let exe = support::BIN;
    let stdin = match input {
        Some(p) => Stdio::from(std::fs::File::open(p).unwrap()),
        None => Stdio::null(),
    };
    let start = Instant::now();
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v {ADDRESS_SPACE_KB} && exec \"$0\" \"$@\""
        ))
        .arg(exe)
        .args(args)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = format!("/proc/{}/status", child.id());
    let stat = format!("/proc/{}/stat", child.id());
    let mut peak_kb = 0;
    let mut ticks = 0;
    // Read the pipes on threads so that a large report cannot block.
    let mut so = child.stdout.take().unwrap();
    let mut se = child.stderr.take().unwrap();
    let t_out = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut so, &mut v).unwrap();
        v
    });
    let t_err = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut se, &mut v).unwrap();
        v
    });
    let exit = loop {
        if let Ok(text) = std::fs::read_to_string(&status)
            && let Some(kb) = text
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        {
            peak_kb = peak_kb.max(kb);
        }
        // utime and stime: fields 14 and 15, counted after the command
        // name (which may hold spaces) ends with `)`.
        if let Ok(text) = std::fs::read_to_string(&stat)
            && let Some((_, rest)) = text.rsplit_once(')')
        {
            let f: Vec<&str> = rest.split_whitespace().collect();
            if let (Some(u), Some(s)) = (f.get(11), f.get(12))
                && let (Ok(u), Ok(s)) = (u.parse::<u64>(), s.parse::<u64>())
            {
                ticks = ticks.max(u + s);
            }
        }
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let elapsed = start.elapsed();
    Run {
        out: Output {
            status: exit,
            stdout: t_out.join().unwrap(),
            stderr: t_err.join().unwrap(),
        },
        elapsed,
        // Linux counts in USER_HZ, 100 a second.
        cpu: Duration::from_millis(ticks * 10),
        peak_kb,
    }
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

struct W {
    _dir: tempfile::TempDir,
    root: PathBuf,
    key: String,
    pubkey: String,
    log: String,
}

impl W {
    fn new() -> W {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        let key = root.join("k");
        let o = vouch(&["keygen", "--origin", "example.com/bounds", "--out", s(&key)]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        W {
            key: s(&key).to_owned(),
            pubkey: format!("{}.pub", s(&key)),
            log: s(&root.join("log.jsonl")).to_owned(),
            root,
            _dir: dir,
        }
    }

    fn snapshot(&self, target: &Path) -> Output {
        vouch(&[
            "drift",
            "snapshot",
            s(target),
            "--log",
            &self.log,
            "--key",
            &self.key,
        ])
    }

    fn check(&self, target: &Path, extra: &[&str]) -> Run {
        let mut a = vec![
            "drift",
            "check",
            s(target),
            "--log",
            &self.log,
            "--pub",
            &self.pubkey,
        ];
        a.extend_from_slice(extra);
        limited(&a)
    }
}

fn many_keys(n: usize) -> String {
    let members: Vec<String> = (0..n).map(|i| format!("\"k{i}\":1")).collect();
    format!("{{{}}}", members.join(","))
}

/// Repro 1: 15,000 changed keys printed a 656 MB table (every row padded
/// to the whole new document) and aborted.
#[test]
fn many_changed_keys_give_a_bounded_table() {
    let w = W::new();
    let c = w.root.join("c.json");
    std::fs::write(&c, "{\"a\":1}\n").unwrap();
    assert_eq!(code(&w.snapshot(&c)), 0);
    std::fs::write(&c, many_keys(15_000)).unwrap();
    let r = w.check(&c, &[]);
    assert_eq!(code(&r.out), 1, "{}", stderr(&r.out));
    let table = stdout(&r.out);
    assert!(
        table.contains("DRIFT"),
        "{}",
        &table[..200.min(table.len())]
    );
    assert!(table.contains("--format json has them in full"));
    // 10,001 rows of at most 160 characters of details.
    assert!(table.len() < 8 << 20, "{} bytes", table.len());
    let widest = table.lines().map(|l| l.chars().count()).max().unwrap();
    assert!(widest < 260, "a line of {widest} characters");
    assert!(r.peak_kb < 200 << 10, "peak RSS {} KiB", r.peak_kb);
    assert!(r.elapsed < Duration::from_secs(20), "{:?}", r.elapsed);
    // JSON has every value in full, the summary's whole document included.
    let r = w.check(&c, &["--format", "json"]);
    assert_eq!(code(&r.out), 1);
    let rep = json(&r.out);
    let changes = rep["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 10_001);
    let last = &changes[10_000]["fields"][0]["after"];
    assert_eq!(last.as_object().unwrap().len(), 15_000);
}

/// Repro 1 through YAML aliases: every alias of a long anchored string is
/// a long value in its own row. Thirty thousand of them now expand past
/// the alias budget (2 bytes of strings per input byte, plus 1 MiB) and
/// are refused; fewer give a table of short lines.
#[test]
fn yaml_aliases_of_a_long_value_are_bounded() {
    let w = W::new();
    let c = w.root.join("c.yaml");
    std::fs::write(&c, "a: 1\n").unwrap();
    assert_eq!(code(&w.snapshot(&c)), 0);
    let doc = |n: usize| {
        let mut d = format!("x: &l \"{}\"\n", "long ".repeat(400));
        for i in 0..n {
            d.push_str(&format!("k{i}: *l\n"));
        }
        d
    };
    std::fs::write(&c, doc(30_000)).unwrap();
    let r = w.check(&c, &["--format", "json"]);
    assert_eq!(code(&r.out), 2, "{}", stdout(&r.out));
    assert_eq!(json(&r.out)["error"]["code"], "alias_expansion");
    assert!(r.peak_kb < 100 << 10, "peak RSS {} KiB", r.peak_kb);
    std::fs::write(&c, doc(300)).unwrap();
    let r = w.check(&c, &[]);
    assert_eq!(code(&r.out), 1, "{}", stderr(&r.out));
    let table = stdout(&r.out);
    let widest = table.lines().map(|l| l.chars().count()).max().unwrap();
    assert!(widest < 260, "a line of {widest} characters");
}

fn deep_flow(levels: usize, open: &str, close: &str) -> String {
    format!("a: {}1{}\n", open.repeat(levels), close.repeat(levels))
}

/// Repro 2: `a: [[[[...]]]]` of 100,000 levels took 18.5 s before the
/// depth limit was reported; snapshot, check and accept all read it.
#[test]
fn deep_yaml_is_refused_at_once() {
    let w = W::new();
    let c = w.root.join("deep.yaml");
    for (open, close) in [("[", "]"), ("{a: ", "}")] {
        std::fs::write(&c, deep_flow(100_000, open, close)).unwrap();
        let start = Instant::now();
        let o = vouch(&[
            "drift",
            "snapshot",
            s(&c),
            "--log",
            &w.log,
            "--key",
            &w.key,
            "--format",
            "json",
        ]);
        assert_eq!(code(&o), 2, "{}", stdout(&o));
        assert_eq!(json(&o)["error"]["code"], "too_deep");
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
    }
    // Check and accept read the file the same way.
    std::fs::write(&c, "a: 1\n").unwrap();
    assert_eq!(code(&w.snapshot(&c)), 0);
    std::fs::write(&c, deep_flow(100_000, "[", "]")).unwrap();
    let r = w.check(&c, &["--format", "json"]);
    assert_eq!(code(&r.out), 2);
    assert_eq!(json(&r.out)["error"]["code"], "too_deep");
    assert!(r.elapsed < Duration::from_secs(5), "{:?}", r.elapsed);
    let start = Instant::now();
    let o = vouch(&[
        "drift",
        "accept",
        s(&c),
        "--log",
        &w.log,
        "--key",
        &w.key,
        "--reason",
        "x",
    ]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("nested deeper than 64"),
        "{}",
        stderr(&o)
    );
    assert!(start.elapsed() < Duration::from_secs(5));
}

/// Best of three CPU times of `args`.
fn best_of_three(args: &[&str], want: i32) -> Duration {
    (0..3)
        .map(|_| {
            let r = limited(args);
            assert_eq!(code(&r.out), want, "{}", stderr(&r.out));
            r.cpu
        })
        .min()
        .unwrap()
}

fn at_most_about_twice(small: Duration, large: Duration, what: &str) {
    eprintln!("{what}: CPU {small:?} for the input, {large:?} for twice the input");
    // Twice the work (CPU time, counted in 10 ms ticks), with room for
    // cache effects of a loaded machine and for process start-up.
    assert!(
        large <= small * 3 + Duration::from_millis(100),
        "{what}: {small:?} then {large:?} for twice the input"
    );
}

/// YAML at the depth limit, many times over: twice the input, about
/// twice the time (the quadratic path cost four times).
#[test]
fn yaml_flow_nesting_at_the_limit_is_linear() {
    let w = W::new();
    let doc = |copies: usize| {
        let mut d = String::new();
        for i in 0..copies {
            // 1 (the mapping) + 63 flow levels = the 64 allowed.
            d.push_str(&format!("k{i}: {}1{}\n", "[".repeat(63), "]".repeat(63)));
        }
        d
    };
    let small = w.root.join("small.yaml");
    let large = w.root.join("large.yaml");
    // 4,000 × 64 values: within the 2^18 a file may hold.
    std::fs::write(&small, doc(2_000)).unwrap();
    std::fs::write(&large, doc(4_000)).unwrap();
    for p in [&small, &large] {
        assert_eq!(code(&w.snapshot(p)), 0);
    }
    let t = |p: &Path| {
        best_of_three(
            &["drift", "check", s(p), "--log", &w.log, "--pub", &w.pubkey],
            0,
        )
    };
    at_most_about_twice(t(&small), t(&large), "yaml");
}

fn tools(n: usize) -> String {
    let list: Vec<String> = (0..n).map(|i| format!("{{\"name\":\"t{i}\"}}")).collect();
    format!("{{\"tools\":[{}]}}", list.join(","))
}

/// Repro 3: a list of 600,000 small tools peaked at 882 MB; 2,000,000
/// aborted. A listing holds at most 10,000 tools, like a live list.
#[test]
fn a_huge_tools_list_is_refused_with_little_memory() {
    let w = W::new();
    let f = w.root.join("tools.json");
    std::fs::write(&f, tools(600_000)).unwrap();
    let r = limited(&["scan", s(&f), "--format", "json"]);
    assert_eq!(code(&r.out), 2, "{}", stdout(&r.out));
    assert_eq!(json(&r.out)["error"]["code"], "too_many_tools");
    assert!(r.peak_kb < 100 << 10, "peak RSS {} KiB", r.peak_kb);
    assert!(r.elapsed < Duration::from_secs(10), "{:?}", r.elapsed);
    // At the limit: scanned, in bounded memory and linear time.
    let small = w.root.join("small.json");
    let large = w.root.join("large.json");
    std::fs::write(&small, tools(5_000)).unwrap();
    std::fs::write(&large, tools(10_000)).unwrap();
    let r = limited(&["scan", s(&large)]);
    assert_eq!(code(&r.out), 0, "{}", stderr(&r.out));
    assert!(r.peak_kb < 200 << 10, "peak RSS {} KiB", r.peak_kb);
    at_most_about_twice(
        best_of_three(&["scan", s(&small), "--format", "json"], 0),
        best_of_three(&["scan", s(&large), "--format", "json"], 0),
        "scan",
    );
}

/// Hostile inputs at the value limits: the most memory per byte (objects
/// of one member) stays within a stated bound.
#[test]
fn value_limits_bound_memory() {
    let w = W::new();
    // A listing just under 2^19 values.
    let n = (1 << 19) / 2 - 16;
    let objs = vec!["{\"\":0}"; n].join(",");
    let f = w.root.join("listing.json");
    std::fs::write(
        &f,
        format!("{{\"tools\":[{{\"name\":\"t\",\"x\":[{objs}]}}]}}"),
    )
    .unwrap();
    let r = limited(&["scan", s(&f), "--format", "json"]);
    assert!(matches!(code(&r.out), 0 | 1), "{}", stderr(&r.out));
    assert!(r.peak_kb < 512 << 10, "scan: peak RSS {} KiB", r.peak_kb);
    std::fs::write(
        &f,
        format!("{{\"tools\":[{{\"name\":\"t\",\"x\":[{objs},{objs}]}}]}}"),
    )
    .unwrap();
    let r = limited(&["scan", s(&f), "--format", "json"]);
    assert_eq!(code(&r.out), 2);
    assert_eq!(json(&r.out)["error"]["code"], "too_many_values");
    // A configuration file just under 2^18 values, checked against a
    // baseline of the same size: two documents and the change summary.
    let n = (1 << 18) / 2 - 16;
    let c = w.root.join("c.json");
    std::fs::write(&c, format!("[{}]", vec!["{\"\":0}"; n].join(","))).unwrap();
    assert_eq!(code(&w.snapshot(&c)), 0);
    std::fs::write(&c, format!("[{}]", vec!["{\"\":1}"; n].join(","))).unwrap();
    let r = w.check(&c, &["--format", "json"]);
    assert_eq!(code(&r.out), 1, "{}", stderr(&r.out));
    assert!(r.peak_kb < 512 << 10, "check: peak RSS {} KiB", r.peak_kb);
    let bigger = format!("[{}]", vec!["{\"\":1}"; 2 * n].join(","));
    std::fs::write(&c, bigger).unwrap();
    let r = w.check(&c, &["--format", "json"]);
    assert_eq!(code(&r.out), 2);
    assert_eq!(json(&r.out)["error"]["code"], "too_many_values");
}

/// `drift import` of an empty spec made a baseline of nothing.
#[test]
fn an_empty_mtree_spec_is_refused() {
    let w = W::new();
    let t = w.root.join("t");
    std::fs::create_dir(&t).unwrap();
    let spec = w.root.join("empty.mtree");
    std::fs::write(&spec, "#mtree\n").unwrap();
    let o = vouch(&[
        "drift",
        "import",
        s(&t),
        "--log",
        &w.log,
        "--key",
        &w.key,
        "--from",
        s(&spec),
        "--spec-format",
        "mtree",
    ]);
    assert_eq!(code(&o), 2, "{}", stdout(&o));
    assert!(stderr(&o).contains("lists nothing"), "{}", stderr(&o));
    assert!(!Path::new(&w.log).exists(), "nothing was written");
}

// ---- every other input at its limit ---------------------------------------

/// One log line far past the 1 MiB limit, with and without its newline:
/// refused (`line_too_long`) without holding the line.
#[test]
fn an_overlong_log_line_is_never_held() {
    let w = W::new();
    for (name, tail) in [("term.jsonl", "\n"), ("unterm.jsonl", "")] {
        let f = w.root.join(name);
        let mut text = String::from("{\"a\":\"");
        text.push_str(&"x".repeat(64 << 20));
        text.push_str(tail);
        std::fs::write(&f, text).unwrap();
        let r = limited(&["verify", s(&f), "--pub", &w.pubkey, "--format", "json"]);
        assert_eq!(code(&r.out), 1, "{name}: {}", stderr(&r.out));
        let rep = json(&r.out);
        let log = &rep["logs"][0];
        assert_eq!(log["status"], "invalid", "{name}: {log}");
        assert!(
            log.to_string().contains("line_too_long") || log.to_string().contains("torn"),
            "{name}: {log}"
        );
        assert!(r.peak_kb < 48 << 10, "{name}: peak RSS {} KiB", r.peak_kb);
    }
}

fn state_of(logs: &str) -> String {
    format!("{{\"format\":\"vouch-verify-state/2\",\"keys\":\"x\",\"logs\":{{{logs}}}}}")
}

fn saved_log(origin: &str, ranges: &str, digest: &str) -> String {
    format!(
        "\"{origin}\":{{\"origin\":\"{origin}\",\"segments\":[],\"ranges\":[{ranges}],\
         \"records\":0,\"covered\":0,\"checkpoints\":0,\"last_leaf\":\"\",\
         \"last_is_checkpoint\":false,\"tree\":[{digest}],\"rotations\":[],\
         \"last_checkpoint\":null,\"recheck_cursor\":0,\"resume\":null}}"
    )
}

/// The chain state file (`verify --state`, up to 1 GiB): a hash list of
/// short strings cost 30 times its text (a 64 MiB file held 1.9 GB); now
/// it is refused as it is read. Legitimately shaped but hostile ones cost
/// a few times their size, and a state of many logs is matched against
/// the logs given in linear time (150,000 took 400 s).
#[test]
fn a_state_file_costs_a_few_times_its_size() {
    let w = W::new();
    let log = w.root.join("l.jsonl");
    std::fs::write(&log, "").unwrap();
    let state = w.root.join("state.json");
    let shorts = vec!["\"a\""; (32 << 20) / 4].join(",");
    std::fs::write(&state, state_of(&saved_log("a", "", &shorts))).unwrap();
    let st = s(&state);
    let r = limited(&["verify", s(&log), "--pub", &w.pubkey, "--state", st]);
    assert_eq!(code(&r.out), 2, "{}", stdout(&r.out));
    assert!(
        stderr(&r.out).contains("lowercase hex"),
        "{}",
        stderr(&r.out)
    );
    assert!(r.peak_kb < 96 << 10, "peak RSS {} KiB", r.peak_kb);
    // 32 MiB of the smallest ranges a state may hold.
    let range = "{\"segment\":0,\"start\":0,\"end\":0,\"lines\":0,\"digest\":[]}";
    let ranges = vec![range; (32 << 20) / (range.len() + 1)].join(",");
    std::fs::write(&state, state_of(&saved_log("a", &ranges, ""))).unwrap();
    let r = limited(&["verify", s(&log), "--pub", &w.pubkey, "--state", st]);
    assert_eq!(code(&r.out), 1, "{}", stderr(&r.out));
    assert!(r.peak_kb < 6 * (32 << 10), "peak RSS {} KiB", r.peak_kb);
    // Many remembered logs, all gone: each reported missing, in linear time.
    let many = |n: usize| {
        let logs: Vec<String> = (0..n)
            .map(|i| saved_log(&format!("o{i}"), "", ""))
            .collect();
        state_of(&logs.join(","))
    };
    let small = w.root.join("small.json");
    let large = w.root.join("large.json");
    // Large enough that process start-up and 10 ms ticks are noise (at
    // 20,000 logs a loaded CI machine once measured 110 ms then 440 ms).
    std::fs::write(&small, many(60_000)).unwrap();
    std::fs::write(&large, many(120_000)).unwrap();
    // The state is only read (`--state` writes it back: give copies).
    let run = |p: &Path| {
        let args = [
            "verify",
            s(&log),
            "--pub",
            &w.pubkey,
            "--state",
            s(p),
            "--format",
            "json",
        ];
        let r = limited(&args);
        assert_eq!(code(&r.out), 1, "{}", stderr(&r.out));
        let rep = json(&r.out);
        let missing = rep["logs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|l| l.to_string().contains("missing_log"))
            .count();
        (r.cpu, missing)
    };
    let best = |p: &Path, n: usize| {
        (0..3)
            .map(|_| {
                let (t, missing) = run(p);
                assert_eq!(missing, n);
                t
            })
            .min()
            .unwrap()
    };
    at_most_about_twice(best(&small, 60_000), best(&large, 120_000), "state");
}

fn regex_policy(n: usize) -> String {
    let mut p = String::from("version = 1\ndefault = \"block\"\n");
    for i in 0..n {
        // Unicode \w five times: close to the compiled-size limit of one
        // regex, applied to every string anywhere in the arguments.
        p.push_str(&format!(
            "[[rule]]\nid = \"r{i}\"\ntools = [\"*\"]\naction = \"block\"\n\
             [rule.match]\n\"\" = \"\\\\w{{5}}x{i}\"\n"
        ));
    }
    p
}

/// A policy at its limits (256 regexes, each near the compiled-size
/// limit): checked and applied to a large call in bounded memory, with
/// the work linear in the number of regexes; the 257th is refused.
#[test]
fn a_policy_at_its_regex_limit() {
    let w = W::new();
    let small = w.root.join("p128.toml");
    let large = w.root.join("p256.toml");
    let over = w.root.join("p257.toml");
    std::fs::write(&small, regex_policy(128)).unwrap();
    std::fs::write(&large, regex_policy(256)).unwrap();
    std::fs::write(&over, regex_policy(257)).unwrap();
    // 30,000 characters of mixed scripts, three times over (the biggest
    // argument the OS passes is 128 KiB).
    let text: String = "aé中ж1_ ".chars().cycle().take(10_000).collect();
    let args = serde_json::json!({"a": text, "b": [text, text]}).to_string();
    let test = |p: &Path| {
        limited(&[
            "policy",
            "test",
            s(p),
            "--tool",
            "t",
            "--args",
            &args,
            "--format",
            "json",
        ])
    };
    let r = test(&large);
    assert_eq!(code(&r.out), 0, "{}", stderr(&r.out));
    assert_eq!(json(&r.out)["action"], "block");
    assert!(r.peak_kb < 320 << 10, "peak RSS {} KiB", r.peak_kb);
    let r = limited(&["policy", "check", s(&over)]);
    assert_eq!(code(&r.out), 2);
    assert!(
        stderr(&r.out).contains("more than 256 regexes"),
        "{}",
        stderr(&r.out)
    );
    let best = |p: &Path| {
        (0..3)
            .map(|_| {
                let r = test(p);
                assert_eq!(code(&r.out), 0);
                r.cpu
            })
            .min()
            .unwrap()
    };
    at_most_about_twice(best(&small), best(&large), "policy");
}

fn mtree_spec(n: usize) -> String {
    let mut spec = String::from("#mtree\n. type=dir mode=0755 uid=0 gid=0\n");
    let digest = "a".repeat(64);
    for i in 0..n {
        spec.push_str(&format!(
            "./f{i} type=file mode=0644 uid=0 gid=0 size=1 sha256digest={digest}\n"
        ));
    }
    spec
}

/// `drift import`: a spec line past 64 KiB is refused; a large spec is
/// read in time and memory linear in its entries.
#[test]
fn an_mtree_spec_is_read_in_linear_time() {
    let w = W::new();
    let t = w.root.join("t");
    std::fs::create_dir(&t).unwrap();
    let import = |spec: &Path, log: &str| {
        limited(&[
            "drift",
            "import",
            s(&t),
            "--log",
            log,
            "--key",
            &w.key,
            "--from",
            s(spec),
            "--spec-format",
            "mtree",
        ])
    };
    let spec = w.root.join("long.mtree");
    std::fs::write(
        &spec,
        format!(
            "#mtree\n. type=dir mode=0755 uid=0 gid=0\n./{} type=file\n",
            "x".repeat(65 << 10)
        ),
    )
    .unwrap();
    let r = import(&spec, &w.log);
    assert_eq!(code(&r.out), 2);
    assert!(stderr(&r.out).contains("line"), "{}", stderr(&r.out));
    assert!(!Path::new(&w.log).exists());
    let small = w.root.join("small.mtree");
    let large = w.root.join("large.mtree");
    std::fs::write(&small, mtree_spec(50_000)).unwrap();
    std::fs::write(&large, mtree_spec(100_000)).unwrap();
    let mut times = Vec::new();
    for (spec, n) in [(&small, 50_000u64), (&large, 100_000)] {
        let mut best = Duration::MAX;
        for i in 0..3 {
            let log = w.root.join(format!("l{n}-{i}.jsonl"));
            let r = import(spec, s(&log));
            assert_eq!(code(&r.out), 0, "{}", stderr(&r.out));
            // Each entry is held once (path, modes, digest): well under
            // 1 KiB an entry.
            assert!(r.peak_kb < 16 * 1024 + n, "peak RSS {} KiB", r.peak_kb);
            best = best.min(r.cpu);
        }
        times.push(best);
    }
    at_most_about_twice(times[0], times[1], "mtree import");
}

/// Stamp receipts: an entry line past 16 KiB and a header past 16 MiB
/// are refused without being held; verifying a receipt is linear in its
/// entries and holds them one at a time.
#[test]
fn stamp_receipts_are_read_line_by_line() {
    let w = W::new();
    let make = |n: usize| {
        let d = w.root.join(format!("d{n}"));
        std::fs::create_dir(&d).unwrap();
        for i in 0..n {
            std::fs::write(d.join(format!("f{i}")), i.to_string()).unwrap();
        }
        let out = w.root.join(format!("r{n}.vouch-stamp"));
        let o = vouch(&[
            "stamp",
            s(&d),
            "--key",
            &w.key,
            "--out",
            s(&out),
            "--base",
            s(&w.root),
        ]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        out
    };
    let small = make(10_000);
    let large = make(20_000);
    let verify = |r: &Path| {
        limited(&[
            "stamp",
            "verify",
            s(r),
            "--pub",
            &w.pubkey,
            "--base",
            s(&w.root),
            "--format",
            "json",
        ])
    };
    let r = verify(&large);
    assert_eq!(code(&r.out), 0, "{}", stderr(&r.out));
    assert_eq!(json(&r.out)["summary"]["ok"], 20_000);
    assert!(r.peak_kb < 48 << 10, "peak RSS {} KiB", r.peak_kb);
    let best = |p: &Path| {
        (0..3)
            .map(|_| {
                let r = verify(p);
                assert_eq!(code(&r.out), 0);
                r.cpu
            })
            .min()
            .unwrap()
    };
    at_most_about_twice(best(&small), best(&large), "stamp verify");
    let text = std::fs::read_to_string(&small).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let pad = |line: &str, n: usize| {
        format!(
            "{},\"pad\":\"{}\"}}",
            &line[..line.len() - 1],
            "x".repeat(n)
        )
    };
    for (i, n, want) in [
        (3, 17 << 10, "longer than 16384 bytes"),
        (0, 17 << 20, "longer than 16777216 bytes"),
    ] {
        let orig = lines[i].clone();
        lines[i] = pad(&orig, n);
        let bad = w.root.join("bad.vouch-stamp");
        std::fs::write(&bad, lines.join("\n") + "\n").unwrap();
        lines[i] = orig;
        let r = verify(&bad);
        assert_eq!(code(&r.out), 1, "{}", stderr(&r.out));
        assert!(stdout(&r.out).contains(want), "{}", stdout(&r.out));
        assert!(r.peak_kb < 48 << 10, "peak RSS {} KiB", r.peak_kb);
    }
}

/// `vouch wrap`: a client message four times the 16 MiB default is
/// dropped with an error answer (never forwarded, never held whole), the
/// session goes on, and the log records the anomaly and verifies.
#[test]
fn an_oversized_mcp_message_is_never_held() {
    let w = W::new();
    let policy = w.root.join("p.toml");
    std::fs::write(&policy, "version = 1\ndefault = \"allow\"\n").unwrap();
    let input = w.root.join("in.jsonl");
    let got = w.root.join("got");
    let mut text =
        String::from("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"pad\":\"");
    text.push_str(&"x".repeat(64 << 20));
    text.push_str("\"}}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n");
    std::fs::write(&input, text).unwrap();
    let server = format!("cat > '{}'", s(&got));
    let r = limited_in(
        &[
            "wrap",
            "--policy",
            s(&policy),
            "--log",
            &w.log,
            "--key",
            &w.key,
            "--id",
            "big",
            "--",
            "sh",
            "-c",
            &server,
        ],
        Some(&input),
    );
    let out = stdout(&r.out);
    assert!(
        out.contains("message larger than 16777216 bytes"),
        "{out}\n{}",
        stderr(&r.out)
    );
    // Only the second message reached the server.
    let forwarded = std::fs::read_to_string(&got).unwrap();
    assert_eq!(forwarded.lines().count(), 1, "{forwarded}");
    assert!(forwarded.contains("\"id\":2"));
    assert!(r.peak_kb < 96 << 10, "peak RSS {} KiB", r.peak_kb);
    let log = std::fs::read_to_string(&w.log).unwrap();
    assert!(log.contains("message_too_large"));
    let o = vouch(&["verify", &w.log, "--pub", &w.pubkey]);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
}
