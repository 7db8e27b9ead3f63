//! Fuzzes the RFC 3161 response/token decoder and the verifier: any input
//! must decode or be rejected, never panic, hang or allocate without bound.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = vouch::tsa::show(data);
    let expected = vouch::tsa::Expected::imprint(vouch::tsa::ExpectedImprint::Data(
        vouch::tsa::DataDigests::from_bytes(b"hello"),
    ));
    let _ = vouch::tsa::verify_token(
        data,
        &expected,
        &vouch::tsa::TrustStore::new(),
        &vouch::tsa::VerifyOptions::default(),
    );
});
