//! Fuzzes `vouch::note::checkpoint::parse`: it must never panic, and whatever
//! it accepts must re-encode to the exact input text.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data)
        && let Ok(checkpoint) = vouch::note::checkpoint::parse(text)
    {
        assert_eq!(checkpoint.to_text(), text);
    }
});
