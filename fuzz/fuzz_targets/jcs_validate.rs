//! Fuzzes the RFC 8785 validator: it must never panic, and whatever it
//! accepts must be reproduced byte for byte by serde_json + write_canonical.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vouch::jcs;

fuzz_target!(|data: &[u8]| {
    if jcs::validate(data, jcs::DEFAULT_MAX_DEPTH, |_, _| {}).is_ok() {
        let value: serde_json::Value =
            serde_json::from_slice(data).expect("accepted input must be JSON");
        let out = jcs::to_canonical_vec(&value).expect("accepted input must canonicalize");
        assert_eq!(out, data, "accepted input must be its own canonical form");
    }
});
