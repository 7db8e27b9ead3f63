//! Fuzzes `stamp_proof` (see fuzz/props.rs, `props::stamp_proof`, shared with
//! tests/fuzz_replay.rs). Property: never panics, and an accepted per-file proof holds one entry at an index below the
//! signed count with at most 64 hashes, and the same proof for an altered
//! entry is refused.
#![no_main]

#[path = "../props.rs"]
mod props;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    props::stamp_proof(data);
});
