//! Differential fuzzing of the verifier's hot path: the fast record parser
//! and canonical-JSON scanner must agree with the reference
//! implementations on every input (fuzz/props.rs, `record_fast`).
#![no_main]

#[path = "../props.rs"]
mod props;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    props::record_fast(data);
});
