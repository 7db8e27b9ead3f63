//! Fuzzes `mcp_message` (see fuzz/props.rs, `props::mcp_message`, shared with
//! tests/fuzz_replay.rs). Property: never panics, and a parsed request's or response's id re-encoded decodes to the
//! same id, and a request re-built from what was read parses to the same
//! id and method.
#![no_main]

#[path = "../props.rs"]
mod props;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    props::mcp_message(data);
});
