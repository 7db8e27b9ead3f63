//! Placeholder until the ECDSA P-256 module lands.

/// Verifies `sig` over `msg` with the SPKI PEM key; returns the SPKI DER.
pub fn verify_pem(_pem: &str, _msg: &[u8], _sig: &[u8]) -> Result<Vec<u8>, ()> {
    Err(())
}
