//! Redaction of tool-call arguments (`vouch::redact`): the vectors
//! in `tests/vectors/redact/`, every vendor-table row in every position, and
//! property-style checks (no panics, valid output, idempotence, bounded work)
//! over generated inputs.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use vouch::redact::{Charset, Masked, SecretKind, Shape, VENDOR_PREFIXES, VendorPrefix, redact};

#[derive(serde::Deserialize)]
struct Vector {
    name: String,
    input: Value,
    expect: Value,
    kinds: Vec<String>,
    #[serde(default)]
    pointers: Option<Vec<String>>,
}

fn load_vectors() -> Vec<Vector> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/vectors/redact/vectors.json"
    );
    let text = std::fs::read_to_string(path).expect("read vectors.json");
    serde_json::from_str(&text).expect("parse vectors.json")
}

#[test]
fn vectors() {
    let vectors = load_vectors();
    assert!(vectors.len() >= 60, "only {} vectors", vectors.len());
    let mut names = std::collections::HashSet::new();
    let mut failures = Vec::new();
    for v in &vectors {
        assert!(
            names.insert(v.name.clone()),
            "duplicate vector name {}",
            v.name
        );
        let out = redact(&v.input);
        let kinds: Vec<&str> = out.masked.iter().map(|m| m.kind.as_str()).collect();
        if out.value != v.expect {
            failures.push(format!(
                "{}: value\n  got    {}\n  expect {}",
                v.name,
                serde_json::to_string(&out.value).unwrap_or_default(),
                serde_json::to_string(&v.expect).unwrap_or_default()
            ));
        }
        if kinds != v.kinds {
            failures.push(format!(
                "{}: kinds {:?}, expect {:?}",
                v.name, kinds, v.kinds
            ));
        }
        if let Some(pointers) = &v.pointers {
            let got: Vec<&str> = out.masked.iter().map(|m| m.pointer.as_str()).collect();
            if &got != pointers {
                failures.push(format!(
                    "{}: pointers {:?}, expect {:?}",
                    v.name, got, pointers
                ));
            }
        }
        // Every pointer resolves in the redacted value.
        for m in &out.masked {
            if out.value.pointer(&m.pointer).is_none() {
                failures.push(format!(
                    "{}: pointer {:?} does not resolve",
                    v.name, m.pointer
                ));
            }
        }
        if redact(&out.value).value != out.value {
            failures.push(format!("{}: not idempotent", v.name));
        }
        let is_negative = v.name.starts_with("neg_");
        if is_negative && (out.value != v.input || !out.masked.is_empty()) {
            failures.push(format!("{}: negative vector was changed", v.name));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_kind_has_a_positive_vector() {
    let vectors = load_vectors();
    for kind in vouch::redact::kinds() {
        if matches!(kind, SecretKind::TooDeep | SecretKind::Truncated) {
            continue;
        }
        assert!(
            vectors
                .iter()
                .any(|v| v.kinds.iter().any(|k| k == kind.as_str())),
            "no vector for {kind}"
        );
    }
}

#[test]
fn kind_names_round_trip() {
    for &kind in vouch::redact::kinds() {
        let json = serde_json::to_value(kind).expect("serialize kind");
        assert_eq!(json, Value::String(kind.as_str().to_owned()));
        assert_eq!(SecretKind::from_name(kind.as_str()), Some(kind));
        assert_eq!(kind.marker(), format!("[REDACTED:{kind}]"));
    }
}

// ---------------------------------------------------------------- generated

/// A tiny deterministic PRNG (xorshift64*), to need no extra crate.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

fn alphabet(charset: Charset) -> Vec<u8> {
    (0u8..128)
        .filter(|&c| charset.contains(c) && c != b'.')
        .collect()
}

/// A fabricated token for one table row, `extra` bytes longer than the
/// shortest body (for rows with a fixed length `extra` is ignored).
fn token(row: &VendorPrefix, rng: &mut Rng, extra: usize) -> String {
    let alpha = alphabet(row.charset);
    let len = if row.min_len == row.max_len {
        row.min_len
    } else {
        row.min_len + extra
    };
    let mut body = |n: usize| -> String {
        loop {
            let s: String = (0..n).map(|_| *rng.pick(&alpha) as char).collect();
            let classes = [
                s.bytes().any(|c| c.is_ascii_uppercase()),
                s.bytes().any(|c| c.is_ascii_lowercase()),
                s.bytes().any(|c| c.is_ascii_digit()),
            ];
            let mixed = classes.iter().filter(|&&x| x).count() >= 2;
            let alnum_ends = s.bytes().next().is_some_and(|c| c.is_ascii_alphanumeric())
                && s.bytes().last().is_some_and(|c| c.is_ascii_alphanumeric());
            if (mixed || row.charset == Charset::UpperDigit || row.charset == Charset::Hex)
                && alnum_ends
            {
                return s;
            }
        }
    };
    let b = match row.shape {
        Shape::DotPair => format!("{}.{}", body(22), body(43)),
        _ => body(len),
    };
    format!("{}{}", row.prefix, b)
}

fn assert_masked_once(input: &Value, secret: &str, pointer: &str, kind: SecretKind, what: &str) {
    let out = redact(input);
    let text = serde_json::to_string(&out.value).expect("serialize");
    assert!(!text.contains(secret), "{what}: secret left in {text}");
    let prefix_free = &secret[secret.len() - 12..];
    assert!(
        !text.contains(prefix_free),
        "{what}: part of the secret left in {text}"
    );
    assert_eq!(
        out.masked,
        vec![Masked {
            pointer: pointer.to_owned(),
            kind
        }],
        "{what}: {text}"
    );
    assert!(
        out.value.pointer(pointer).is_some(),
        "{what}: pointer does not resolve"
    );
    assert_eq!(
        redact(&out.value).value,
        out.value,
        "{what}: not idempotent"
    );
}

#[test]
fn every_vendor_row_in_every_position() {
    let mut rng = Rng(0x05EE_D0F7_AB1E);
    for row in VENDOR_PREFIXES {
        for extra in [0, 1, 17] {
            let t = token(row, &mut rng, extra);
            let marker = row.kind.marker();
            let what = |pos: &str| format!("{} ({}) {pos}: {t}", row.prefix, row.kind);
            // Whole string, start, middle, end.
            assert_masked_once(&json!({ "a": t }), &t, "/a", row.kind, &what("whole"));
            let out = redact(&json!({ "a": t }));
            assert_eq!(out.value, json!({ "a": marker }), "{}", what("whole"));
            for (s, expect) in [
                (
                    format!("{t} and then some words"),
                    format!("{marker} and then some words"),
                ),
                (format!("see ({t}), ok"), format!("see ({marker}), ok")),
                (
                    format!("it ends with {t}"),
                    format!("it ends with {marker}"),
                ),
                (
                    format!("line one\n{t}\nline three"),
                    format!("line one\n{marker}\nline three"),
                ),
            ] {
                let v = json!({ "note": s });
                assert_masked_once(&v, &t, "/note", row.kind, &what(&s));
                assert_eq!(
                    redact(&v).value,
                    json!({ "note": expect }),
                    "{}",
                    what("text")
                );
            }
            // Nested in objects and arrays.
            let v = json!({ "x": [1, { "y/z": ["a", format!("deep {t}")] }] });
            assert_masked_once(&v, &t, "/x/1/y~1z/1", row.kind, &what("nested"));
            // As an object key.
            let v = json!({ "outer": { t.clone(): "value" } });
            let pointer = format!("/outer/[REDACTED:{}]", row.kind);
            assert_masked_once(&v, &t, &pointer, row.kind, &what("key"));
            assert_eq!(
                redact(&v).value,
                json!({ "outer": { marker.clone(): "value" } })
            );
            // Glued to a preceding letter or digit: not a token.
            let glued = format!("x{t}");
            let out = redact(&json!(glued));
            assert!(
                out.masked
                    .iter()
                    .all(|m| m.kind != row.kind || row.kind == SecretKind::SlackWebhook),
                "{}: {:?}",
                what("glued"),
                out.masked
            );
        }
    }
}

/// Fragments that steer random strings towards the detectors' edges.
const FRAGMENTS: &[&str] = &[
    "password=",
    "PASSWORD=",
    "token",
    "_TOKEN=",
    "Bearer ",
    "basic ",
    "Authorization: ",
    "\"authorization\": \"",
    "eyJ",
    "eyJhbGciOiJIUzI1NiJ9",
    ".",
    "-----BEGIN PRIVATE KEY-----",
    "-----END PRIVATE KEY-----",
    "-----BEGIN CERTIFICATE-----",
    "-----END ",
    "PuTTY-User-Key-File-2",
    "Private-MAC: ",
    "://",
    "https://",
    "@",
    ":",
    "?token=",
    "&key=",
    "=",
    "AKIA",
    "ASIA",
    "ghp_",
    "github_pat_",
    "sk-",
    "sk-ant-",
    "xoxb-",
    "SG.",
    "SK",
    "AIza",
    "aws_secret_access_key = ",
    "[REDACTED:jwt]",
    "[REDACTED:",
    "]",
    "\"",
    "'",
    "\n",
    " ",
    "$",
    "\\",
    "é",
    "日本語",
    "🦀",
    "\u{301}",
    "\u{0}",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "QWxhZGRpbjpvcGVuIHNlc2FtZQ==",
];

fn random_string(rng: &mut Rng) -> String {
    let mut s = String::new();
    let n = rng.below(24);
    for _ in 0..n {
        match rng.below(4) {
            0 => {
                let fragment = FRAGMENTS[rng.below(FRAGMENTS.len())];
                s.push_str(fragment);
            }
            1 => {
                for _ in 0..rng.below(40) {
                    s.push((b'!' + rng.below(94) as u8) as char);
                }
            }
            2 => {
                for _ in 0..rng.below(48) {
                    let c = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=_-";
                    s.push(*rng.pick(c) as char);
                }
            }
            _ => {
                let c = char::from_u32(rng.below(0x11_0000) as u32).unwrap_or('\u{fffd}');
                s.push(c);
            }
        }
    }
    s
}

fn random_value(rng: &mut Rng, depth: usize) -> Value {
    match rng.below(if depth >= 4 { 3 } else { 6 }) {
        0 => json!(rng.below(1000)),
        1 | 2 => Value::String(random_string(rng)),
        3 => Value::Array(
            (0..rng.below(5))
                .map(|_| random_value(rng, depth + 1))
                .collect(),
        ),
        _ => {
            let mut m = serde_json::Map::new();
            for _ in 0..rng.below(5) {
                let key = match rng.below(3) {
                    0 => (*rng.pick(&[
                        "password",
                        "token",
                        "Authorization",
                        "api_key",
                        "note",
                        "token_count",
                    ]))
                    .to_owned(),
                    _ => random_string(rng),
                };
                m.insert(key, random_value(rng, depth + 1));
            }
            Value::Object(m)
        }
    }
}

#[test]
fn random_inputs_never_panic_and_are_idempotent() {
    let mut rng = Rng(0x0DDB_1A5E_5BAD_5EED);
    for case in 0..3000 {
        let v = random_value(&mut rng, 0);
        let out = redact(&v);
        let text = serde_json::to_string(&out.value).expect("serialize redacted");
        let back: Value = serde_json::from_str(&text).expect("redacted value is valid JSON");
        assert_eq!(back, out.value);
        for m in &out.masked {
            assert!(
                out.value.pointer(&m.pointer).is_some(),
                "case {case}: pointer {:?}",
                m.pointer
            );
        }
        let again = redact(&out.value);
        assert_eq!(
            again.value,
            out.value,
            "case {case}: not idempotent\n input {}\n once  {}",
            serde_json::to_string(&v).unwrap_or_default(),
            text
        );
        assert!(
            again.masked.is_empty(),
            "case {case}: second pass masked {:?}",
            again.masked
        );
    }
}

#[test]
fn large_inputs_complete() {
    const SIZE: usize = 16 << 20;
    let chunk = "user=bob password=hunter2 https://u:p@h/x?token=abc eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl \
                 AKIAIOSFODNN7EXAMPLE Bearer abc123def456 /home/user/src/main.rs e3b0c44298fc1c149afbf4c8996fb924 ";
    let patterns = [
        chunk.repeat(SIZE / chunk.len()),
        "sk-".repeat(SIZE / 3),
        "token=".repeat(SIZE / 6),
        "eyJ.".repeat(SIZE / 4),
        "-----BEGIN CERTIFICATE-----".repeat(SIZE / 27),
        "a_token='".repeat(SIZE / 9),
        "\"password\":\"".repeat(SIZE / 12),
        "Authorization: ".repeat(SIZE / 15),
        "aB3/".repeat(SIZE / 4),
        "é".repeat(SIZE / 2),
    ];
    for s in patterns {
        let out = redact(&Value::String(s));
        assert!(out.masked.len() <= vouch::redact::MAX_MASKED + 1);
    }
    // A 16 MiB key and a string under it.
    let mut m = serde_json::Map::new();
    m.insert("k".repeat(SIZE), json!("password=x ".repeat(2000)));
    let out = redact(&Value::Object(m));
    assert_eq!(
        out.masked.last().map(|m| m.kind),
        Some(SecretKind::Truncated)
    );
}

#[test]
fn deep_values_are_capped() {
    let mut v = json!({"password": "x"});
    for i in 0..300 {
        v = if i % 2 == 0 {
            json!([v])
        } else {
            json!({ "a": v })
        };
    }
    let out = redact(&v);
    assert_eq!(out.masked.len(), 1);
    assert_eq!(out.masked[0].kind, SecretKind::TooDeep);
    assert_eq!(
        out.value.pointer(&out.masked[0].pointer),
        Some(&json!("[REDACTED:too_deep]"))
    );
    assert_eq!(redact(&out.value).value, out.value);
}
