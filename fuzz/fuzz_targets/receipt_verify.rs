//! Fuzzes receipt parsing and offline verification: any input must parse
//! and verify or be rejected, never panic, hang or allocate without bound.
#![no_main]

use libfuzzer_sys::fuzz_target;

/// Offline: no TSA roots, no targets.
const OFFLINE: vouch::anchor::check::CheckContext<'static> = vouch::anchor::check::CheckContext {
    tsa_roots: None,
    online: None,
};

/// The test-only key the seed receipts in corpus/receipt_verify are signed
/// with (corpus/receipt_verify/README.md).
const KEY: &str = include_str!("../corpus/receipt_verify/fuzz.key.pub");

fuzz_target!(|data: &[u8]| {
    let Ok(key) = vouch::note::VerifierKey::from_text(KEY.trim()) else {
        return;
    };
    if let Ok(receipt) = vouch::receipt::parse(data) {
        if let Ok(keys) = vouch::chain::TrustedKeys::new([key]) {
            let _ = vouch::receipt::verify(&receipt, &keys, &OFFLINE, None);
        }
    }
});
