//! RFC 8785 (JCS) vectors, a generated property/tamper test, the fuzz corpus
//! replay and a throughput measurement for `vouch::jcs`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Map, Number, Value};
use vouch::jcs::{self, JcsError, NonCanonical};

fn vectors() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors/jcs")
}

fn canonical(v: &Value) -> Vec<u8> {
    jcs::to_canonical_vec(v).unwrap()
}

/// The differential check: an accepted input is reproduced exactly by
/// serde_json parsing plus `write_canonical` (the fuzz target's assertion).
fn assert_round_trip(bytes: &[u8]) {
    let value: Value = serde_json::from_slice(bytes).unwrap();
    let mut out = Vec::new();
    jcs::write_canonical(&value, &mut out).unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out),
        String::from_utf8_lossy(bytes),
        "accepted input is not its own canonical form"
    );
}

fn not_canonical(result: Result<(), JcsError>, input: &[u8]) -> NonCanonical {
    match result {
        Err(JcsError::NotCanonical { why, .. }) => why,
        other => panic!(
            "expected NotCanonical, got {other:?}: {}",
            String::from_utf8_lossy(input)
        ),
    }
}

#[test]
fn input_output_pairs() {
    let dir = vectors().join("pairs");
    let mut count = 0;
    for entry in fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        let Some(stem) = name.strip_suffix(".input.json") else {
            continue;
        };
        let input = fs::read(&path).unwrap();
        let expected = fs::read(dir.join(format!("{stem}.canonical.json"))).unwrap();
        let value: Value = serde_json::from_slice(&input).unwrap();
        assert_eq!(
            String::from_utf8(canonical(&value)).unwrap(),
            String::from_utf8(expected.clone()).unwrap(),
            "{name}"
        );
        assert_eq!(
            jcs::is_canonical(&expected),
            Ok(()),
            "{stem}.canonical.json"
        );
        if input == expected {
            assert_round_trip(&input);
        } else {
            assert!(jcs::is_canonical(&input).is_err(), "{name} accepted");
        }
        assert_round_trip(&expected);
        count += 1;
    }
    assert_eq!(count, 8, "vector files missing");
}

fn number_vectors(file: &str) -> Vec<(f64, Option<String>)> {
    fs::read_to_string(vectors().join("numbers").join(file))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let (hex, expected) = l.split_once(',').unwrap();
            let bits = u64::from_str_radix(hex, 16).unwrap();
            let expected = (expected != "error").then(|| expected.to_owned());
            (f64::from_bits(bits), expected)
        })
        .collect()
}

#[test]
fn numbers_rfc8785_appendix_b_and_es6_sample() {
    let mut all = number_vectors("rfc8785-appendix-b.csv");
    assert_eq!(all.len(), 26);
    all.extend(number_vectors("cyberphone-es6-sample.csv"));
    for (value, expected) in all {
        let Some(expected) = expected else {
            assert!(!value.is_finite());
            assert!(Number::from_f64(value).is_none());
            continue;
        };
        let v = Value::Number(Number::from_f64(value).unwrap());
        assert_eq!(String::from_utf8(canonical(&v)).unwrap(), expected);
        assert_eq!(jcs::is_canonical(expected.as_bytes()), Ok(()), "{expected}");
        assert_eq!(expected.parse::<f64>().unwrap(), value);
        assert_round_trip(expected.as_bytes());
    }
}

#[test]
fn fuzz_corpus_replay() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/jcs_validate");
    let mut count = 0;
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        let data = fs::read(&path).unwrap();
        let result = jcs::validate(&data, jcs::DEFAULT_MAX_DEPTH, |_, _| {});
        if result.is_ok() {
            assert_round_trip(&data);
        }
        // Seed names state the expected outcome; other files (found by the
        // fuzzer) only need the round-trip property.
        if name.starts_with("ok-") {
            assert_eq!(result, Ok(()), "{name}");
        } else if name.starts_with("bad-") {
            assert!(result.is_err(), "{name}");
        }
        count += 1;
    }
    assert!(count >= 12);
}

/// SplitMix64: a small deterministic PRNG, so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn char(&mut self) -> char {
        const SPECIAL: &[char] = &[
            '"',
            '\\',
            '/',
            '\u{7f}',
            '\u{80}',
            '\u{2028}',
            'é',
            '€',
            '\u{d7ff}',
            '\u{e000}',
            '\u{fb33}',
            '\u{ffff}',
            '😀',
            '\u{10000}',
            '\u{10ffff}',
        ];
        match self.below(10) {
            0 => char::from(self.below(0x20) as u8),
            1 | 2 => SPECIAL[self.below(SPECIAL.len() as u64) as usize],
            3 => char::from_u32(0xE000 + self.below(0x2000) as u32).unwrap(),
            4 => char::from_u32(0x1_0000 + self.below(0x10_0000) as u32).unwrap(),
            5 => char::from_u32(0x80 + self.below(0xD000) as u32).unwrap_or('x'),
            _ => char::from(0x20 + self.below(0x5f) as u8),
        }
    }
    fn string(&mut self, max: u64) -> String {
        (0..self.below(max + 1)).map(|_| self.char()).collect()
    }
    fn number(&mut self) -> Number {
        match self.below(4) {
            0 => Number::from(self.next() as i64 >> (11 + self.below(53))),
            1 => Number::from(self.below(1000)),
            2 => loop {
                if let Some(n) = Number::from_f64(f64::from_bits(self.next())) {
                    break n;
                }
            },
            _ => {
                let mantissa = self.below(1_000_000) as f64;
                let scale = 10f64.powi(self.below(40) as i32 - 20);
                Number::from_f64(mantissa * scale).unwrap()
            }
        }
    }
    fn value(&mut self, depth: u32) -> Value {
        let kinds = if depth >= 6 { 4 } else { 6 };
        match self.below(kinds) {
            0 => {
                [Value::Null, Value::Bool(true), Value::Bool(false)][self.below(3) as usize].clone()
            }
            1 => Value::Number(self.number()),
            2 | 3 => Value::String(self.string(12)),
            4 => (0..self.below(5)).map(|_| self.value(depth + 1)).collect(),
            _ => Value::Object(self.object(depth + 1, 0)),
        }
    }
    fn object(&mut self, depth: u32, min: u64) -> Map<String, Value> {
        let mut map = Map::new();
        let want = min + self.below(6);
        while (map.len() as u64) < want {
            let key = self.string(4);
            let value = self.value(depth);
            map.insert(key, value);
        }
        map
    }
}

/// Offsets just after structural characters (outside strings).
fn structural_positions(doc: &[u8]) -> Vec<usize> {
    let mut out = Vec::new();
    let mut in_string = false;
    let mut i = 0;
    while i < doc.len() {
        match (in_string, doc[i]) {
            (true, b'\\') => i += 1,
            (_, b'"') => in_string = !in_string,
            (false, b'{' | b'[' | b',' | b':') => out.push(i + 1),
            _ => {}
        }
        i += 1;
    }
    out
}

fn json_str(s: &str) -> String {
    String::from_utf8(canonical(&Value::String(s.to_owned()))).unwrap()
}

#[test]
fn generated_values_validate_and_tampering_is_caught() {
    let mut rng = Rng(0x5EED_F7C5);
    for round in 0..3000 {
        let doc = if round % 2 == 0 {
            Value::Object(rng.object(1, 0))
        } else {
            rng.value(0)
        };
        let bytes = canonical(&doc);
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert_eq!(jcs::is_canonical(&bytes), Ok(()), "{text}");
        assert_round_trip(&bytes);

        // Insert a space after a structural character, or at either end.
        let spots = structural_positions(&bytes);
        let at = match rng.below(spots.len() as u64 + 2) as usize {
            0 => 0,
            1 => bytes.len(),
            k => spots[k - 2],
        };
        let mut spaced = bytes.clone();
        spaced.insert(at, [b' ', b'\n', b'\t', b'\r'][rng.below(4) as usize]);
        assert_eq!(
            jcs::is_canonical(&spaced),
            Err(JcsError::NotCanonical {
                offset: at,
                why: NonCanonical::Whitespace
            }),
            "{text}"
        );

        // Swap two members of an object with at least two.
        let map = rng.object(1, 2);
        let mut members: Vec<String> = {
            let sorted = canonical(&Value::Object(map.clone()));
            let reparsed: Value = serde_json::from_slice(&sorted).unwrap();
            let _ = reparsed;
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
            keys.iter()
                .map(|k| {
                    format!(
                        "{}:{}",
                        json_str(k),
                        String::from_utf8(canonical(&map[k.as_str()])).unwrap()
                    )
                })
                .collect()
        };
        assert_eq!(
            format!("{{{}}}", members.join(",")).as_bytes(),
            canonical(&Value::Object(map.clone()))
        );
        let i = rng.below(members.len() as u64 - 1) as usize;
        let j = i + 1 + rng.below((members.len() - i - 1) as u64) as usize;
        members.swap(i, j);
        let swapped = format!("{{{}}}", members.join(","));
        assert_eq!(
            not_canonical(jcs::is_canonical(swapped.as_bytes()), swapped.as_bytes()),
            NonCanonical::KeyOrder,
            "{swapped}"
        );
        // Repeat a member: a duplicate.
        let dup = format!("{{{},{}}}", members[0], members[0]);
        assert_eq!(
            not_canonical(jcs::is_canonical(dup.as_bytes()), dup.as_bytes()),
            NonCanonical::DuplicateKey,
            "{dup}"
        );

        // Replace a literal character with its \u escape.
        let s: String = rng.string(6) + "a" + &rng.string(6);
        let quoted = json_str(&s);
        let mut literal_at = Vec::new();
        let mut chars = quoted.char_indices().skip(1).peekable();
        while let Some((k, c)) = chars.next() {
            if c == '\\' {
                let skip = if chars.next().map(|(_, e)| e) == Some('u') {
                    4
                } else {
                    0
                };
                for _ in 0..skip {
                    chars.next();
                }
            } else if c != '"' {
                literal_at.push((k, c));
            }
        }
        let (k, c) = literal_at[rng.below(literal_at.len() as u64) as usize];
        let mut units = [0u16; 2];
        let escaped: String = c
            .encode_utf16(&mut units)
            .iter()
            .map(|u| format!("\\u{u:04x}"))
            .collect();
        let tampered = format!(
            "[{text},{}{escaped}{}]",
            &quoted[..k],
            &quoted[k + c.len_utf8()..]
        );
        assert_eq!(
            not_canonical(jcs::is_canonical(tampered.as_bytes()), tampered.as_bytes()),
            NonCanonical::StringEscape,
            "{tampered}"
        );

        // Uppercase the hex digit of a \u escape.
        let ctl = char::from(
            [0x0b, 0x0e, 0x0f, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f][rng.below(9) as usize],
        );
        let quoted = json_str(&format!("{}{ctl}{}", rng.string(3), rng.string(3)));
        let hex_at = quoted.find(&format!("\\u{:04x}", ctl as u32)).unwrap() + 5;
        let mut upper = quoted.into_bytes();
        upper[hex_at] = upper[hex_at].to_ascii_uppercase();
        let tampered = [b"[", &bytes[..], b",", &upper[..], b"]"].concat();
        assert_eq!(
            not_canonical(jcs::is_canonical(&tampered), &tampered),
            NonCanonical::StringEscape
        );

        // Append ".0" to an integer; write -0.
        let int = rng.next() as i64 >> (11 + rng.below(53));
        for bad in [format!("[{text},{int}.0]"), format!("[{text},-0]")] {
            assert_eq!(
                not_canonical(jcs::is_canonical(bad.as_bytes()), bad.as_bytes()),
                NonCanonical::NumberForm,
                "{bad}"
            );
        }
    }
}

#[test]
fn random_doubles_format_and_validate() {
    let mut rng = Rng(42);
    let mut buf = Vec::new();
    for _ in 0..20_000 {
        let value = f64::from_bits(rng.next());
        let Some(n) = Number::from_f64(value) else {
            continue;
        };
        buf.clear();
        jcs::write_canonical(&Value::Number(n), &mut buf).unwrap();
        assert_eq!(jcs::is_canonical(&buf), Ok(()));
        let text = std::str::from_utf8(&buf).unwrap();
        let back: f64 = text.parse().unwrap();
        assert!(back == value, "{value:e} -> {text}");
        assert_round_trip(&buf);
    }
}

/// Throughput on ~100 MB of record-like canonical JSON Lines.
/// Run with `cargo test --release --test jcs -- --ignored --nocapture`.
#[test]
#[ignore = "throughput measurement; run in release"]
fn throughput() {
    let mut rng = Rng(7);
    let mut log = Vec::new();
    let mut lines = Vec::new();
    let mut seq = 0u64;
    while log.len() < 100_000_000 {
        let msg: String = (0..200)
            .map(|_| char::from(b' ' + rng.below(0x5f) as u8))
            .filter(|&c| c != '"' && c != '\\')
            .collect();
        let prev: String = (0..4).map(|_| format!("{:016x}", rng.next())).collect();
        let record = serde_json::json!({
            "body": {"msg": msg},
            "kind": "note",
            "origin": "example.com/log",
            "prev": prev,
            "seq": seq,
            "ts": "2026-11-29T15:58:05.123Z",
            "v": 1,
        });
        let start = log.len();
        jcs::write_canonical(&record, &mut log).unwrap();
        lines.push(start..log.len());
        log.push(b'\n');
        seq += 1;
    }
    let mut best = f64::MAX;
    for _ in 0..5 {
        let t = std::time::Instant::now();
        let mut members = 0usize;
        for r in &lines {
            jcs::validate(&log[r.clone()], jcs::DEFAULT_MAX_DEPTH, |_, _| members += 1).unwrap();
        }
        assert_eq!(members, lines.len() * 7);
        best = best.min(t.elapsed().as_secs_f64());
    }
    println!(
        "jcs::validate: {} lines, {:.1} MB in {:.3} s: {:.0} MB/s",
        lines.len(),
        log.len() as f64 / 1e6,
        best,
        log.len() as f64 / 1e6 / best
    );
}
