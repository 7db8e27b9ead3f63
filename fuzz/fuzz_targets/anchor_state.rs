//! Fuzzes `anchor_state` (see fuzz/props.rs, `props::anchor_state`, shared with
//! tests/fuzz_replay.rs). Property: never panics, and an accepted anchor state re-serialised parses back equal.
#![no_main]

#[path = "../props.rs"]
mod props;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    props::anchor_state(data);
});
