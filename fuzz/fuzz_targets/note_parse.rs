//! Fuzzes `vouch::note::parse`: it must never panic, and whatever it accepts
//! must re-encode to the exact input bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(note) = vouch::note::parse(data) {
        assert_eq!(note.to_text().as_bytes(), data);
        // Opening with no trusted keys must fail cleanly.
        assert!(vouch::note::open(data, &[]).is_err());
    }
});
