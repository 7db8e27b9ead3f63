//! Building blocks of `vouch stamp`: DSSE envelopes, ECDSA P-256 keys, and the Sigstore bundle and trusted-root export.

pub mod dsse;
pub mod ecdsa_key;
pub mod sigstore;
