//! Fuzzes `drift_rules` (see fuzz/props.rs, `props::drift_rules`, shared with
//! tests/fuzz_replay.rs). Property: never panics, and accepted rules compile again from their JSON form (what a
//! snapshot stores) to the same spec and digest.
#![no_main]

#[path = "../props.rs"]
mod props;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    props::drift_rules(data);
});
