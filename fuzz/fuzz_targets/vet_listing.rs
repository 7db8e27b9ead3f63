//! Fuzzes `vet_listing` (see fuzz/props.rs, `props::vet_listing`, shared with
//! tests/fuzz_replay.rs). Property: never panics, and a parsed listing holds at most MAX_TOOLS tools, each scanned
//! once, and the verdict counts add up.
#![no_main]

#[path = "../props.rs"]
mod props;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    props::vet_listing(data);
});
