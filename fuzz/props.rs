//! The properties the parser fuzz targets check, one function per target.
//! Shared, unchanged, by the fuzz targets (`fuzz_targets/*.rs`) and by the
//! corpus replay in the normal test suite (`tests/fuzz_replay.rs`), so the
//! two can never check different things.
//!
//! Every function takes arbitrary bytes, must never panic on them, and
//! asserts an invariant or round trip of what the parser accepts; it
//! returns whether the parser accepted the input (and the property was
//! checked).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;
use std::path::Path;
use vouch::stamp::{receipt, statement::Statement, verify as stamp_verify};

/// `stamp_receipt`: [`receipt::parse`]. An accepted receipt holds as many
/// entries as its header says, in strictly increasing path order, and
/// re-encoded ([`receipt::encode`]) parses back to the same thing.
pub fn stamp_receipt(data: &[u8]) -> bool {
    let Ok((header, entries)) = receipt::parse(data) else {
        return false;
    };
    assert_eq!(header.entries, entries.len() as u64);
    assert!(entries.windows(2).all(|w| w[0].path < w[1].path));
    let mut out = Vec::new();
    receipt::encode(&mut out, &header, &entries).expect("a parsed receipt re-encodes");
    let again = receipt::parse(&out).expect("a re-encoded receipt parses");
    assert_eq!(again, (header, entries));
    true
}

/// `stamp_proof`: a per-file proof through [`receipt::parse`], the
/// statement in its envelope and [`stamp_verify::check_extract`]. An
/// accepted proof holds one entry at an index below the signed count, with
/// an audit path no longer than a tree of 2^64 leaves is tall, and the same
/// proof for an altered entry is refused.
pub fn stamp_proof(data: &[u8]) -> bool {
    let Ok((header, entries)) = receipt::parse(data) else {
        return false;
    };
    let Some(x) = &header.extract else {
        return false;
    };
    let Ok(payload) = header.envelope.decode_payload() else {
        return false;
    };
    let Ok(st) = Statement::parse(&payload) else {
        return false;
    };
    let Ok(root) = st.root() else { return false };
    if stamp_verify::check_extract(&entries, x, &st, &root).is_err() {
        return false;
    }
    assert_eq!(entries.len(), 1);
    assert!(x.index < st.predicate.count);
    assert!(x.hashes.len() <= 64);
    let mut altered = entries.clone();
    altered[0].size ^= 1;
    assert!(stamp_verify::check_extract(&altered, x, &st, &root).is_err());
    true
}

/// `mtree_import`: [`vouch::drift::mtree::import`]. What it accepts and
/// [`vouch::drift::mtree::export`] can write must import again, and
/// exporting that gives the same bytes (a spec is stable after one trip).
pub fn mtree_import(data: &[u8]) -> bool {
    use vouch::drift::mtree;
    let Ok(entries) = mtree::import(data) else {
        return false;
    };
    let mut first = Vec::new();
    if mtree::export(&entries, &mut first).is_err() {
        return false;
    }
    let again = mtree::import(&first).expect("an exported spec imports");
    assert_eq!(again.len(), entries.len());
    let mut second = Vec::new();
    mtree::export(&again, &mut second).expect("an imported export exports");
    assert_eq!(first, second);
    true
}

/// `drift_rules`: [`vouch::drift::rules::Rules::parse`]. Accepted rules
/// compile again from their own JSON form (what a snapshot stores) to the
/// same spec and digest.
pub fn drift_rules(data: &[u8]) -> bool {
    use vouch::drift::rules::{Rules, RulesSpec};
    let Ok(text) = std::str::from_utf8(data) else {
        return false;
    };
    let Ok(rules) = Rules::parse(text) else {
        return false;
    };
    let spec: RulesSpec =
        serde_json::from_value(rules.to_json()).expect("the JSON form is a rules spec");
    let again = Rules::compile(spec).expect("the JSON form compiles");
    assert_eq!(again.spec(), rules.spec());
    assert_eq!(again.digest(), rules.digest());
    true
}

/// `drift_config_{json,yaml,toml}`: [`vouch::drift::config::parse`] in one
/// language. Every accepted value has canonical (RFC 8785) bytes that the
/// JCS validator accepts and that parse, as JSON, to a value with the
/// same canonical bytes.
pub fn drift_config(data: &[u8], format: vouch::drift::config::Format) -> bool {
    use vouch::drift::config::{self, Format};
    let Ok(value) = config::parse(data, format) else {
        return false;
    };
    let bytes = config::canonical(&value).expect("a parsed config has canonical bytes");
    // The canonical form may nest one level deeper than the validator's
    // default allows only if the parser let it: it must not.
    assert!(vouch::jcs::validate(&bytes, config::MAX_DEPTH + 1, |_, _| {}).is_ok());
    // Not `again == value`: `1.0` parses as a float and is written `1`,
    // which reads back as an integer; numbers are compared by value
    // (`json::diff::number_key`), so the canonical bytes must agree.
    let again = config::parse(&bytes, Format::Json).expect("canonical bytes parse as JSON");
    assert_eq!(config::canonical(&again).expect("canonical again"), bytes);
    true
}

/// `policy_parse`: [`vouch::enforce::policy::Policy::parse`] of the text
/// before the first NUL byte, then `decide` for the tool named between the
/// first and second NUL with the `--args` object after it (as `vouch
/// policy test` reads them). Parsing is deterministic (same digest), the
/// summary serialises, and a decision is the same twice from fresh rates.
pub fn policy_parse(data: &[u8]) -> bool {
    use vouch::enforce::policy::{Policy, RateState};
    let mut parts = data.splitn(3, |&b| b == 0);
    let text = parts.next().unwrap_or_default();
    let tool = parts.next().unwrap_or(b"read_file");
    let args = parts.next().unwrap_or(b"{}");
    let Ok(text) = std::str::from_utf8(text) else {
        return false;
    };
    let path = Path::new("policy.toml");
    let Ok(policy) = Policy::parse(text, path) else {
        return false;
    };
    let again = Policy::parse(text, path).expect("a policy parses twice");
    assert_eq!(again.digest(), policy.digest());
    assert!(serde_json::to_value(policy.summary()).is_ok());
    let tool = String::from_utf8_lossy(tool);
    let args = match serde_json::from_slice::<Value>(args) {
        Ok(v @ Value::Object(_)) => v,
        _ => return false,
    };
    let now = std::time::Instant::now();
    let a = policy.decide(&tool, &args, &mut RateState::default(), now);
    let b = policy.decide(&tool, &args, &mut RateState::default(), now);
    assert_eq!(a, b);
    true
}

/// `mcp_message`: [`vouch::mcp::message::parse`] of one line. A
/// request's or response's id written back as JSON decodes to the same id,
/// and a request re-built from what was read parses to the same method and
/// id.
pub fn mcp_message(data: &[u8]) -> bool {
    use vouch::mcp::message::{self, Kind};
    let Ok(kind) = message::parse(data) else {
        return false;
    };
    let id = match &kind {
        Kind::Request { id, .. } | Kind::Response { id, .. } => Some(id.clone()),
        Kind::Notification { .. } => None,
    };
    if let Some(id) = &id {
        let raw = serde_json::value::RawValue::from_string(id.to_json()).unwrap();
        assert_eq!(message::decode_id(&raw).as_ref(), Ok(id));
    }
    if let Kind::Request {
        id, method, params, ..
    } = &kind
    {
        // Params kept raw may hold numbers no `Value` holds (`1e400`).
        let Ok(params) = params.map_or(Ok(Value::Null), |p| serde_json::from_str(p.get())) else {
            return true;
        };
        let line = message::request(id, method, &params);
        match message::parse(&line) {
            Ok(Kind::Request {
                id: id2,
                method: m2,
                ..
            }) => {
                assert_eq!(&id2, id);
                assert_eq!(&m2, method);
            }
            other => panic!("a re-built request is {other:?}"),
        }
    }
    true
}

/// `vet_listing`: [`vouch::vet::report::parse_saved`] of a saved tools
/// listing, then [`vouch::vet::report::scan_listing`] over what it holds.
/// At most [`vouch::vet::report::MAX_TOOLS`] tools come back, every tool
/// gets one verdict, and the verdict counts add up.
pub fn vet_listing(data: &[u8]) -> bool {
    use vouch::vet::report::{self, MAX_TOOLS};
    use vouch::vet::scan::Severity;
    let Ok((tools, instructions)) = report::parse_saved("fuzz", data) else {
        return false;
    };
    assert!(tools.len() <= MAX_TOOLS);
    let scan = report::scan_listing(
        "fuzz",
        "fuzz",
        &tools,
        instructions.as_deref(),
        Severity::High,
    );
    let s = &scan.summary;
    assert_eq!(s.tools, tools.len() as u64);
    assert_eq!(s.pass + s.flagged + s.blocked, s.tools);
    assert_eq!(scan.tools.len(), tools.len());
    assert!(serde_json::to_vec(&scan).is_ok());
    true
}

/// `drift_snapshot`: [`vouch::drift::snapshot::parse`] of a snapshot file,
/// checked against its own digest and the target and kind its first line
/// names. An accepted snapshot re-encoded ([`vouch::drift::snapshot::encode`])
/// parses back (against the new digest), and encodes again to the same
/// bytes.
pub fn drift_snapshot(data: &[u8]) -> bool {
    use vouch::drift::snapshot::{self, TargetKind};
    let digest = snapshot::digest_text(&vouch::files::sha256(data));
    let first = data.split(|&b| b == b'\n').next().unwrap_or_default();
    let Ok(Value::Object(h)) = serde_json::from_slice::<Value>(first) else {
        return false;
    };
    let target = h.get("target").and_then(Value::as_str).unwrap_or("");
    let kind = match h.get("kind").and_then(Value::as_str) {
        Some("config") => TargetKind::Config,
        Some("mcp") => TargetKind::Mcp,
        _ => TargetKind::Dir,
    };
    let Ok(snap) = snapshot::parse(data, &digest, 1, target, kind) else {
        return false;
    };
    assert_eq!(snap.items.kind(), kind);
    // Items are read back only in the order vouch writes them.
    if let snapshot::Items::Mcp(items) = &snap.items {
        assert!(items.windows(2).all(|w| w[0].order() < w[1].order()));
    }
    // Re-encoded, it parses back; encoded again, the bytes are the same
    // (compared as bytes: the reader refuses lines not in RFC 8785 form,
    // which once let `2.0` and integers past 2^64 through).
    let encode = |snap: &snapshot::Snapshot| {
        let mut out = Vec::new();
        snapshot::encode(&mut out, snap, Path::new("fuzz")).expect("a parsed snapshot re-encodes");
        out
    };
    let out = encode(&snap);
    let digest = snapshot::digest_text(&vouch::files::sha256(&out));
    let again =
        snapshot::parse(&out, &digest, 1, target, kind).expect("a re-encoded snapshot parses");
    assert_eq!(again.items.kind(), kind);
    assert_eq!(encode(&again), out);
    true
}

/// `verify_state`: [`vouch::chain::state::VerifyState::parse`]. An
/// accepted state re-serialised (as `save` writes it) parses back equal.
pub fn verify_state(data: &[u8]) -> bool {
    use vouch::chain::state::VerifyState;
    let Ok(state) = VerifyState::parse(data) else {
        return false;
    };
    let out = serde_json::to_vec(&state).expect("a state serialises");
    assert_eq!(VerifyState::parse(&out), Ok(state));
    true
}

/// `anchor_state`: [`vouch::anchor::state::AnchorState::parse`]. An
/// accepted state re-serialised (as `save` writes it) parses back equal.
pub fn anchor_state(data: &[u8]) -> bool {
    use vouch::anchor::state::AnchorState;
    let Ok(state) = AnchorState::parse(data) else {
        return false;
    };
    let out = serde_json::to_vec(&state).expect("a state serialises");
    assert_eq!(AnchorState::parse(&out), Ok(state));
    true
}

/// `record_fast`: the verifier's fast paths against their references, on
/// every line of the input (split at `\n`) and on the whole input.
/// [`vouch::chain::record::parse_line`] (fast path, then the reference
/// for the reason) returns exactly what
/// [`vouch::chain::record::parse_line_reference`] returns, the same view
/// or the same error; the fast path accepts exactly the lines the
/// reference accepts; and [`vouch::jcs::is_canonical_fast`] agrees with
/// [`vouch::jcs::validate`] at the default depth and at depth 2.
pub fn record_fast(data: &[u8]) -> bool {
    use vouch::chain::record::{parse_line, parse_line_fast, parse_line_reference};
    use vouch::jcs;
    let mut accepted = false;
    for text in std::iter::once(data).chain(data.split(|&b| b == b'\n')) {
        let reference = parse_line_reference(text);
        assert_eq!(parse_line(text), reference);
        assert_eq!(parse_line_fast(text).is_some(), reference.is_ok());
        accepted |= reference.is_ok();
        for depth in [jcs::DEFAULT_MAX_DEPTH, 2] {
            assert_eq!(
                jcs::is_canonical_fast(text, depth),
                jcs::validate(text, depth, |_, _| {}).is_ok()
            );
        }
    }
    accepted
}
