//! Fuzzes `vouch::note::proof::parse`: it must never panic, and whatever it
//! accepts must re-encode to the exact input bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(proof) = vouch::note::proof::parse(data) {
        assert_eq!(proof.to_text().as_bytes(), data);
    }
});
