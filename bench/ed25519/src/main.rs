//! What one log's checkpoint signature costs, per log, with 10,000 keys:
//! the key's decompression (done when the keyset is loaded), the strict
//! check vouch uses (`verify_strict`), the crate's cofactorless `verify`
//! (the cheapest check of the same equation: no decompression of R), and
//! ring's verification (key parsed per call). Paired: each round runs every
//! variant once in turn; medians of the rounds.
use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};
use std::time::Instant;

fn main() {
    let n: usize = 10_000;
    let rounds = 7;
    let msg = b"bench.example/fleet-00001\n270\nq8HkZQ2k9d7Wc6r2oY0sQb1iXx9mW2Jt4H6uV0aL3eE=\n";
    let mut keys = Vec::with_capacity(n);
    let mut sigs = Vec::with_capacity(n);
    for i in 0..n {
        let mut seed = [7u8; 32];
        seed[..8].copy_from_slice(&(i as u64).to_le_bytes());
        let sk = SigningKey::from_bytes(&seed);
        keys.push(sk.verifying_key().to_bytes());
        sigs.push(Signature::from_bytes(&sk.sign(msg).to_bytes()));
    }
    let mut runs: [Vec<f64>; 4] = Default::default();
    for _ in 0..rounds {
        let t = Instant::now();
        let vks: Vec<VerifyingKey> = keys.iter().map(|k| VerifyingKey::from_bytes(k).unwrap()).collect();
        runs[0].push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        assert!(vks.iter().zip(&sigs).all(|(k, s)| k.verify_strict(msg, s).is_ok()));
        runs[1].push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        assert!(vks.iter().zip(&sigs).all(|(k, s)| k.verify(msg, s).is_ok()));
        runs[2].push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        assert!(keys.iter().zip(&sigs).all(|(k, s)| {
            ring::signature::UnparsedPublicKey::new(&ring::signature::ED25519, k)
                .verify(msg, &s.to_bytes())
                .is_ok()
        }));
        runs[3].push(t.elapsed().as_secs_f64());
    }
    let med = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2] * 1e6 / n as f64
    };
    let [a, b, c, d] = runs.map(|mut v| med(&mut v));
    println!("per log, {n} keys, median of {rounds} paired rounds (microseconds):");
    println!("  key decompression (keyset load)         {a:6.2}");
    println!("  verify_strict (what vouch runs)         {b:6.2}   key + check {:6.2}", a + b);
    println!("  verify, cofactorless, no R decompress   {c:6.2}   key + check {:6.2}  ({:.2}x vouch's)", a + c, (a + c) / (a + b));
    println!("  ring 0.17 verify (parses the key)       {d:6.2}                      ({:.2}x vouch's)", d / (a + b));
}
