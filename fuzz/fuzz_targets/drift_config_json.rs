//! Fuzzes `drift_config_json` (see fuzz/props.rs, `props::drift_config`, shared with
//! tests/fuzz_replay.rs). Property: never panics, and an accepted JSON config has RFC 8785 bytes the JCS validator
//! accepts and that parse, as JSON, to a value with the same bytes.
#![no_main]

#[path = "../props.rs"]
mod props;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    props::drift_config(data, vouch::drift::config::Format::Json);
});
