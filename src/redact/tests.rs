//! Unit tests of the private detectors (the vectors are `tests/enforce_redact.rs`).

use super::*;
use serde_json::json;

fn r(v: Value) -> Value {
    redact(&v).value
}

#[test]
fn names() {
    assert_eq!(field_of("password"), Some(Field::Secret));
    assert_eq!(field_of("DB_PASSWORD"), Some(Field::Secret));
    assert_eq!(field_of("clientSecret"), Some(Field::Secret));
    assert_eq!(field_of("X-Api-Key"), Some(Field::Secret));
    assert_eq!(field_of("APIKey"), Some(Field::Secret));
    assert_eq!(field_of("Authorization"), Some(Field::Header));
    assert_eq!(field_of("token_count"), None);
    assert_eq!(field_of("password_hint"), None);
    assert_eq!(field_of("max_tokens"), None);
    assert_eq!(field_of("GITHUB_TOKEN_FILE"), None);
    assert_eq!(field_of("keyboard"), None);
}

#[test]
fn every_vendor_row_is_reachable() {
    // A row shadowed by an earlier row with a prefix of its prefix and
    // the same first byte would never match.
    for (i, a) in VENDOR_PREFIXES.iter().enumerate() {
        for b in &VENDOR_PREFIXES[..i] {
            assert!(
                !a.prefix.starts_with(b.prefix) || a.prefix == b.prefix,
                "{} shadowed by {}",
                a.prefix,
                b.prefix
            );
        }
    }
    assert!(VENDOR_PREFIXES.len() <= 64);
}

#[test]
fn wordish_cases() {
    assert!(wordish(b"getUserAccountSettingsForTenant"));
    assert!(wordish(b"v2"));
    assert!(!wordish(b"wJalrXUtnFEMI"));
    assert!(!wordish(b"K7MDENG"));
}

#[test]
fn markers_are_left_alone() {
    let v = json!({"password": "[REDACTED:secret_field]", "note": "Bearer [REDACTED:jwt]"});
    assert_eq!(redact(&v).masked, vec![]);
    assert_eq!(r(v.clone()), v);
}

#[test]
fn key_collisions_get_suffixes() {
    let a = format!("ghp_{}", "A1b2C3d4E5".repeat(4));
    let b = format!("ghp_{}", "Z9y8X7w6V5".repeat(4));
    let v = json!({ a: 1, b: 2, "[REDACTED:github_token]#2": 3 });
    let out = redact(&v);
    let obj = out.value.as_object().cloned().unwrap_or_default();
    assert_eq!(obj.len(), 3);
    assert!(obj.contains_key("[REDACTED:github_token]"));
    assert!(obj.contains_key("[REDACTED:github_token]#3"));
}

#[test]
fn too_deep() {
    let mut v = json!("x");
    for _ in 0..(MAX_DEPTH + 5) {
        v = json!([v]);
    }
    let out = redact(&v);
    assert_eq!(out.masked.len(), 1);
    assert_eq!(out.masked[0].kind, SecretKind::TooDeep);
    assert_eq!(out.masked[0].pointer.matches('/').count(), MAX_DEPTH);
    assert_eq!(redact(&out.value).value, out.value);
}

#[test]
fn truncation() {
    let items: Vec<Value> = (0..MAX_MASKED + 10)
        .map(|_| json!("password=hunter2"))
        .collect();
    let out = redact(&Value::Array(items));
    assert_eq!(out.masked.len(), MAX_MASKED + 1);
    assert_eq!(out.masked[MAX_MASKED].kind, SecretKind::Truncated);
    assert_eq!(out.masked[MAX_MASKED].pointer, "");
}
