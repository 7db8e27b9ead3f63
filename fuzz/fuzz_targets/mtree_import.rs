//! Fuzzes `mtree_import` (see fuzz/props.rs, `props::mtree_import`, shared with
//! tests/fuzz_replay.rs). Property: never panics, and an imported spec that exports imports again, and the second
//! export is byte for byte the first.
#![no_main]

#[path = "../props.rs"]
mod props;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    props::mtree_import(data);
});
