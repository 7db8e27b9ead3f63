//! Fuzzes `vet_listing`: never panics, and the property documented on
//! `props::vet_listing` (fuzz/props.rs, shared with tests/fuzz_replay.rs) holds.
#![no_main]

#[path = "../props.rs"]
mod props;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    props::vet_listing(data);
});
