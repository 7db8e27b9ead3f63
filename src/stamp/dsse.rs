//! DSSE envelopes (github.com/secure-systems-lab/dsse, protocol v1).
//!
//! The signature is over the pre-authentication encoding
//! `PAE(type, body) = "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body`,
//! LEN in ASCII decimal, so a signature over one payload type can never be
//! read as one over another.

use base64::Engine;
use serde::{Deserialize, Serialize};

/// DSSE's pre-authentication encoding of `payload` of `payload_type`.
pub fn pae(payload_type: &str, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + payload_type.len() + 32);
    out.extend_from_slice(b"DSSEv1 ");
    out.extend_from_slice(payload_type.len().to_string().as_bytes());
    out.push(b' ');
    out.extend_from_slice(payload_type.as_bytes());
    out.push(b' ');
    out.extend_from_slice(payload.len().to_string().as_bytes());
    out.push(b' ');
    out.extend_from_slice(payload);
    out
}

/// A DSSE envelope in its JSON form.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Envelope {
    /// Standard base64 of the payload bytes.
    pub payload: String,
    #[serde(rename = "payloadType")]
    pub payload_type: String,
    pub signatures: Vec<Signature>,
}

/// One signature of an envelope.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Signature {
    pub keyid: String,
    /// Standard base64 of the signature bytes.
    pub sig: String,
}

impl Envelope {
    /// The payload bytes, `None` when `payload` is not standard base64.
    pub fn payload_bytes(&self) -> Option<Vec<u8>> {
        base64::engine::general_purpose::STANDARD
            .decode(&self.payload)
            .ok()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn pae_matches_the_dsse_spec_example() {
        // protocol.md's worked example: type "http://example.com/HelloWorld",
        // body "hello world".
        assert_eq!(
            super::pae("http://example.com/HelloWorld", b"hello world"),
            b"DSSEv1 29 http://example.com/HelloWorld 11 hello world".to_vec()
        );
    }
}
