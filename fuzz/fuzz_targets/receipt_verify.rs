//! Fuzzes receipt parsing and offline verification: any input must parse
//! and verify or be rejected, never panic, hang or allocate without bound.
#![no_main]

use libfuzzer_sys::fuzz_target;

/// The key the seed receipts in corpus/receipt_verify are signed with.
/// Offline: no TSA roots, no targets.
const OFFLINE: vouch::anchor::check::CheckContext<'static> = vouch::anchor::check::CheckContext {
    tsa_roots: None,
    online: None,
};

const KEY: &str = "example.com/fuzz+504fa413+AVCs9qsOgBOcgANSzYcFmSfV5bKJ81fWUHD7cYrw9ps0";

fuzz_target!(|data: &[u8]| {
    let Ok(key) = vouch::note::VerifierKey::from_text(KEY) else {
        return;
    };
    if let Ok(receipt) = vouch::receipt::parse(data) {
        if let Ok(keys) = vouch::chain::TrustedKeys::new([key]) {
            let _ = vouch::receipt::verify(&receipt, &keys, &OFFLINE, None);
        }
    }
});
