//! Fuzzes `policy_parse` (see fuzz/props.rs, `props::policy_parse`, shared with
//! tests/fuzz_replay.rs). Property: never panics, and POLICY \0 TOOL \0 ARGS: a policy parses to the same digest
//! twice, its summary serialises, and `decide` gives the same decision
//! twice from fresh rate state.
#![no_main]

#[path = "../props.rs"]
mod props;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    props::policy_parse(data);
});
