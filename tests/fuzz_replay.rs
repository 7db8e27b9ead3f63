//! Replays the corpora of the parser fuzz targets (fuzz/corpus/NAME), and
//! truncations and byte flips of every file, through the same properties
//! the fuzz targets check (fuzz/props.rs, shared with them), so what the
//! fuzzers found stays fixed without cargo-fuzz.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../fuzz/props.rs"]
mod props;

use vouch::drift::config::Format;

/// Feeds every file of corpus `name`, with cuts and flips of each, to
/// `check`; the corpus must hold at least `min` files, and at least one
/// must be accepted as it is (so the round trip is exercised, not only
/// the refusals).
fn replay(name: &str, min: usize, check: impl Fn(&[u8]) -> bool) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(name);
    let (mut n, mut accepted) = (0, 0);
    for entry in std::fs::read_dir(&dir).unwrap() {
        let data = std::fs::read(entry.unwrap().path()).unwrap();
        accepted += usize::from(check(&data));
        let step = (data.len() / 64).max(1);
        for cut in (0..data.len()).step_by(step) {
            check(&data[..cut]);
        }
        for i in (0..data.len()).step_by(step) {
            let mut d = data.clone();
            d[i] ^= 0x41;
            check(&d);
        }
        n += 1;
    }
    assert!(
        n >= min,
        "{}: {n} files, want at least {min}",
        dir.display()
    );
    assert!(accepted > 0, "{}: no file is accepted", dir.display());
}

#[test]
fn stamp_receipt() {
    replay("stamp_receipt", 3, props::stamp_receipt);
}

#[test]
fn stamp_proof() {
    replay("stamp_proof", 3, props::stamp_proof);
}

#[test]
fn mtree_import() {
    replay("mtree_import", 3, props::mtree_import);
}

#[test]
fn drift_rules() {
    replay("drift_rules", 3, props::drift_rules);
}

#[test]
fn drift_config_json() {
    replay("drift_config_json", 3, |d| {
        props::drift_config(d, Format::Json)
    });
}

#[test]
fn drift_config_yaml() {
    replay("drift_config_yaml", 3, |d| {
        props::drift_config(d, Format::Yaml)
    });
}

#[test]
fn drift_config_toml() {
    replay("drift_config_toml", 3, |d| {
        props::drift_config(d, Format::Toml)
    });
}

#[test]
fn policy_parse() {
    replay("policy_parse", 3, props::policy_parse);
}

#[test]
fn mcp_message() {
    replay("mcp_message", 3, props::mcp_message);
}

#[test]
fn vet_listing() {
    replay("vet_listing", 3, props::vet_listing);
}

#[test]
fn drift_snapshot() {
    replay("drift_snapshot", 3, props::drift_snapshot);
}

#[test]
fn verify_state() {
    replay("verify_state", 3, props::verify_state);
}

#[test]
fn anchor_state() {
    replay("anchor_state", 3, props::anchor_state);
}

#[test]
fn record_fast() {
    replay("record_fast", 5, props::record_fast);
}
