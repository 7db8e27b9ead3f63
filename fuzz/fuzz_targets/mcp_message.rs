//! Fuzzes `mcp_message`: never panics, and the property documented on
//! `props::mcp_message` (fuzz/props.rs, shared with tests/fuzz_replay.rs) holds.
#![no_main]

#[path = "../props.rs"]
mod props;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    props::mcp_message(data);
});
