//! Small helpers over the `der` crate shared by the token, certificate and
//! algorithm readers: readers with the encoding rules each input gets, tags
//! of context-specific fields, and integer byte normalisation.

use super::error::TsaError;
use der::{Encode, EncodingRules, SliceReader, Tag, TagNumber};

/// A reader over `bytes` under BER (`ber == true`: indefinite lengths,
/// constructed strings, SETs kept in received order) or DER rules.
pub(crate) fn reader(bytes: &[u8], ber: bool) -> der::Result<SliceReader<'_>> {
    let rules = if ber {
        EncodingRules::Ber
    } else {
        EncodingRules::Der
    };
    SliceReader::new_with_encoding_rules(bytes, rules)
}

/// The tag of a constructed context-specific field `[n]`.
pub(crate) const fn ctx_tag(n: u8) -> Tag {
    Tag::ContextSpecific {
        constructed: true,
        number: TagNumber(n as u32),
    }
}

/// The tag of a primitive context-specific field `[n]`.
pub(crate) const fn ctx_prim_tag(n: u8) -> Tag {
    Tag::ContextSpecific {
        constructed: false,
        number: TagNumber(n as u32),
    }
}

/// The DER of an element that was read as DER (so the bytes are the ones
/// received).
pub(crate) fn raw_der(value: &impl Encode) -> Result<Vec<u8>, TsaError> {
    value
        .to_der()
        .map_err(|_| TsaError::Malformed { part: "encoding" })
}

/// A decoding error of `part`.
pub(crate) fn malformed(part: &'static str) -> impl Fn(der::Error) -> TsaError {
    move |_| TsaError::Malformed { part }
}

/// Magnitude bytes of an unsigned big-endian number, leading zeros removed.
pub(crate) fn strip_leading_zeros(v: &[u8]) -> &[u8] {
    let n = v.iter().take_while(|b| **b == 0).count();
    &v[n..]
}
