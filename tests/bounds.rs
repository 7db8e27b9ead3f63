//! Issue 22, "bounded work and memory on every input": the three inputs
//! that made vouch abort or stall, each through the binary as an attacker
//! would hand them over, and hostile inputs at the documented limits
//! (docs/FORMAT.md, "Input limits").
//!
//! Memory is bounded by the OS: each command runs under `ulimit -v` (its
//! whole address space, so a generous figure: the binary, its threads'
//! stacks and the allocator's arenas count too), and the peak RSS the
//! kernel reports (`VmHWM`, sampled while it runs) is checked against a
//! smaller bound. Work is checked by doubling the input: the wall time of
//! the larger run (best of three) may be at most about three times the
//! smaller's (twice, with room for a loaded machine), where a quadratic
//! path would take four.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod anchor_support;
mod tsa_support;

use anchor_support::{code, json, stderr, stdout, vouch};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Address space each command may use (`ulimit -v`), in KiB.
const ADDRESS_SPACE_KB: u64 = 1 << 20; // 1 GiB

struct Run {
    out: Output,
    elapsed: Duration,
    /// Peak resident set size seen, in KiB.
    peak_kb: u64,
}

/// Runs vouch under `ulimit -v`, sampling its peak RSS from /proc.
fn limited(args: &[&str]) -> Run {
    let exe = env!("CARGO_BIN_EXE_vouch");
    let start = Instant::now();
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v {ADDRESS_SPACE_KB} && exec \"$0\" \"$@\""
        ))
        .arg(exe)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = format!("/proc/{}/status", child.id());
    let mut peak_kb = 0;
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

/// Best of three wall times of `args`.
fn best_of_three(args: &[&str], want: i32) -> Duration {
    (0..3)
        .map(|_| {
            let r = limited(args);
            assert_eq!(code(&r.out), want, "{}", stderr(&r.out));
            r.elapsed
        })
        .min()
        .unwrap()
}

fn at_most_about_twice(small: Duration, large: Duration, what: &str) {
    // Twice the work, with room for a loaded machine and process start-up.
    assert!(
        large <= small * 3 + Duration::from_millis(150),
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
        "--format",
        "mtree",
    ]);
    assert_eq!(code(&o), 2, "{}", stdout(&o));
    assert!(stderr(&o).contains("lists nothing"), "{}", stderr(&o));
    assert!(!Path::new(&w.log).exists(), "nothing was written");
}
