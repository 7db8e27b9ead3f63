//! Fuzzes `drift_snapshot` (see fuzz/props.rs, `props::drift_snapshot`, shared with
//! tests/fuzz_replay.rs). Property: never panics, and a snapshot accepted against its own digest and the target and
//! kind its header names re-encodes to one that parses back and encodes
//! to the same bytes again.
#![no_main]

#[path = "../props.rs"]
mod props;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    props::drift_snapshot(data);
});
