//! Fuzzes `stamp_receipt` (see fuzz/props.rs, `props::stamp_receipt`, shared with
//! tests/fuzz_replay.rs). Property: never panics, and an accepted receipt holds the entry count its header says, in
//! strictly increasing path order, and re-encoded parses back equal.
#![no_main]

#[path = "../props.rs"]
mod props;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    props::stamp_receipt(data);
});
