//! Raw signature-verification cost of the crypto crates vouch uses, for
//! `bench/tsa-verify.sh` (ignored by default; run with `--ignored` in
//! release mode). Reads `pub.der` (SubjectPublicKeyInfo), `msg` and `sig`
//! (made by `openssl dgst -sha256 -sign`) from `$TSA_BENCH_DIR`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[test]
#[ignore = "benchmark helper: run from bench/tsa-verify.sh"]
fn raw_signature_verification_cost() {
    use rsa::pkcs8::DecodePublicKey;
    use sha2::Digest;
    let dir = std::path::PathBuf::from(std::env::var("TSA_BENCH_DIR").unwrap());
    let spki = std::fs::read(dir.join("pub.der")).unwrap();
    let msg = std::fs::read(dir.join("msg")).unwrap();
    let sig = std::fs::read(dir.join("sig")).unwrap();
    let rounds = 2000;
    let start = std::time::Instant::now();
    if let Ok(key) = rsa::PublicKey::from_public_key_der(&spki) {
        for _ in 0..rounds {
            let h = sha2::Sha256::digest(&msg);
            key.verify(rsa::Pkcs1v15Sign::new::<sha2::Sha256>(), &h, &sig)
                .unwrap();
        }
    } else {
        use ecdsa::signature::hazmat::PrehashVerifier;
        // An uncompressed P-256 point is the last 65 bytes of the SPKI.
        let key = p256::ecdsa::VerifyingKey::from_sec1_bytes(&spki[spki.len() - 65..]).unwrap();
        let sig = p256::ecdsa::Signature::from_der(&sig).unwrap();
        for _ in 0..rounds {
            let h = sha2::Sha256::digest(&msg);
            key.verify_prehash(&h, &sig).unwrap();
        }
    }
    let us = start.elapsed().as_secs_f64() * 1e6 / f64::from(rounds);
    println!("RAW_VERIFY_US {us:.1}");
}
