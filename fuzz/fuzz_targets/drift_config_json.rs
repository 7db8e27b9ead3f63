//! Fuzzes `drift_config_json`: never panics, and the property documented on
//! `props::drift_config` (fuzz/props.rs, shared with tests/fuzz_replay.rs) holds.
#![no_main]

#[path = "../props.rs"]
mod props;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    props::drift_config(data, vouch::drift::config::Format::Json);
});
