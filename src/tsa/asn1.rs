//! A small, bounded ASN.1 reader (DER, tolerating the BER forms real TSAs
//! send) and the few DER writers the request builder needs.
//!
//! Why not `der`: RFC 3161 tokens in the wild use BER indefinite lengths,
//! certificate SETs that are not in DER order and fractional-second
//! GeneralizedTime, and CMS signatures must be checked over the signed
//! attributes *exactly as received*. A reader that hands out the original
//! bytes of every element, and never sorts or re-encodes, makes those rules
//! easy to keep. Every read is bounded by the input length and a nesting
//! depth limit.

use super::error::TsaError;

/// Deepest nesting the reader follows when it has to scan BER
/// indefinite-length content.
const MAX_DEPTH: usize = 32;

pub(crate) const TAG_BOOLEAN: u8 = 0x01;
pub(crate) const TAG_INTEGER: u8 = 0x02;
pub(crate) const TAG_BIT_STRING: u8 = 0x03;
pub(crate) const TAG_OCTET_STRING: u8 = 0x04;
pub(crate) const TAG_NULL: u8 = 0x05;
pub(crate) const TAG_OID: u8 = 0x06;
pub(crate) const TAG_UTC_TIME: u8 = 0x17;
pub(crate) const TAG_GENERALIZED_TIME: u8 = 0x18;
pub(crate) const TAG_SEQUENCE: u8 = 0x30;
pub(crate) const TAG_SET: u8 = 0x31;

/// Context-specific constructed tag `[n]`.
pub(crate) const fn ctx_cons(n: u8) -> u8 {
    0xa0 | n
}

/// Context-specific primitive tag `[n]`.
pub(crate) const fn ctx_prim(n: u8) -> u8 {
    0x80 | n
}

/// One decoded element: its tag, its content octets and all its octets
/// (header, content and, for indefinite lengths, the end-of-contents).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Tlv<'a> {
    pub tag: u8,
    pub value: &'a [u8],
    pub raw: &'a [u8],
}

impl<'a> Tlv<'a> {
    /// A reader over the element's content.
    pub fn reader(&self) -> Reader<'a> {
        Reader::new(self.value)
    }

    /// The content of a primitive element of `tag`, or a decoding error.
    pub fn expect(&self, tag: u8, part: &'static str) -> Result<&'a [u8], TsaError> {
        if self.tag == tag {
            Ok(self.value)
        } else {
            Err(TsaError::Malformed { part })
        }
    }
}

/// Reads consecutive elements out of a byte slice.
#[derive(Clone, Debug)]
pub(crate) struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Reader { data, pos: 0 }
    }

    pub fn is_empty(&self) -> bool {
        self.pos >= self.data.len()
    }

    pub fn peek_tag(&self) -> Option<u8> {
        self.data.get(self.pos).copied()
    }

    /// Reads the next element; `part` names what is being decoded for the error.
    pub fn read(&mut self, part: &'static str) -> Result<Tlv<'a>, TsaError> {
        let rest = &self.data[self.pos..];
        let (tag, header, content, total) =
            element_bounds(rest, 0).ok_or(TsaError::Malformed { part })?;
        let tlv = Tlv {
            tag,
            value: &rest[header..header + content],
            raw: &rest[..total],
        };
        self.pos += total;
        Ok(tlv)
    }

    /// Reads the next element and requires its tag.
    pub fn read_tag(&mut self, tag: u8, part: &'static str) -> Result<Tlv<'a>, TsaError> {
        let tlv = self.read(part)?;
        if tlv.tag != tag {
            return Err(TsaError::Malformed { part });
        }
        Ok(tlv)
    }

    /// Reads the next element if it has `tag`.
    pub fn optional(&mut self, tag: u8, part: &'static str) -> Result<Option<Tlv<'a>>, TsaError> {
        if self.peek_tag() == Some(tag) {
            self.read(part).map(Some)
        } else {
            Ok(None)
        }
    }

    /// Requires that nothing is left.
    pub fn finish(&self, part: &'static str) -> Result<(), TsaError> {
        if self.is_empty() {
            Ok(())
        } else {
            Err(TsaError::Malformed { part })
        }
    }
}

/// Parses one element at the start of `data`: (tag, header length, content
/// length, total length including any end-of-contents octets). Only
/// low-number tags are accepted (all RFC 3161/5652/5280 tags are).
fn element_bounds(data: &[u8], depth: usize) -> Option<(u8, usize, usize, usize)> {
    if depth > MAX_DEPTH {
        return None;
    }
    let tag = *data.first()?;
    if tag & 0x1f == 0x1f {
        return None;
    }
    let first = *data.get(1)? as usize;
    if first < 0x80 {
        let end = 2usize.checked_add(first)?;
        (end <= data.len()).then_some((tag, 2, first, end))
    } else if first == 0x80 {
        // BER indefinite length: constructed only; children until 00 00.
        if tag & 0x20 == 0 {
            return None;
        }
        let mut pos = 2;
        loop {
            let rest = data.get(pos..)?;
            if rest.len() >= 2 && rest[0] == 0 && rest[1] == 0 {
                return Some((tag, 2, pos - 2, pos + 2));
            }
            let (_, _, _, child) = element_bounds(rest, depth + 1)?;
            pos += child;
        }
    } else {
        let n = first & 0x7f;
        if n > 4 {
            return None;
        }
        let bytes = data.get(2..2 + n)?;
        let len = bytes.iter().fold(0usize, |acc, b| (acc << 8) | *b as usize);
        let end = (2 + n).checked_add(len)?;
        (end <= data.len()).then_some((tag, 2 + n, len, end))
    }
}

/// Decodes a whole buffer as exactly one element (trailing bytes rejected).
pub(crate) fn single<'a>(data: &'a [u8], part: &'static str) -> Result<Tlv<'a>, TsaError> {
    let mut r = Reader::new(data);
    let tlv = r.read(part)?;
    r.finish(part)?;
    Ok(tlv)
}

/// The content octets of an OCTET STRING, primitive or (BER) constructed.
pub(crate) fn octet_string_bytes(tlv: &Tlv<'_>, part: &'static str) -> Result<Vec<u8>, TsaError> {
    match tlv.tag {
        TAG_OCTET_STRING => Ok(tlv.value.to_vec()),
        0x24 => {
            let mut out = Vec::new();
            let mut r = tlv.reader();
            while !r.is_empty() {
                let chunk = r.read(part)?;
                out.extend(octet_string_bytes(&chunk, part)?);
            }
            Ok(out)
        }
        _ => Err(TsaError::Malformed { part }),
    }
}

/// Renders an OBJECT IDENTIFIER's content octets in dotted form.
pub(crate) fn oid_string(value: &[u8], part: &'static str) -> Result<String, TsaError> {
    if value.is_empty() || value.len() > 64 || value[value.len() - 1] & 0x80 != 0 {
        return Err(TsaError::Malformed { part });
    }
    let mut arcs: Vec<u128> = Vec::new();
    let mut acc: u128 = 0;
    let mut start = true;
    for &b in value {
        if start && b == 0x80 {
            return Err(TsaError::Malformed { part });
        }
        acc = acc
            .checked_mul(128)
            .and_then(|a| a.checked_add(u128::from(b & 0x7f)))
            .ok_or(TsaError::Malformed { part })?;
        start = b & 0x80 == 0;
        if start {
            arcs.push(acc);
            acc = 0;
        }
    }
    let first = arcs[0];
    let (a, b) = if first < 40 {
        (0, first)
    } else if first < 80 {
        (1, first - 40)
    } else {
        (2, first - 80)
    };
    let mut s = format!("{a}.{b}");
    for arc in &arcs[1..] {
        s.push('.');
        s.push_str(&arc.to_string());
    }
    Ok(s)
}

/// Reads an OBJECT IDENTIFIER element as dotted text.
pub(crate) fn read_oid(r: &mut Reader<'_>, part: &'static str) -> Result<String, TsaError> {
    let tlv = r.read_tag(TAG_OID, part)?;
    oid_string(tlv.value, part)
}

/// Checks an INTEGER's content (non-empty) and returns it.
pub(crate) fn integer_bytes<'a>(tlv: &Tlv<'a>, part: &'static str) -> Result<&'a [u8], TsaError> {
    if tlv.tag != TAG_INTEGER || tlv.value.is_empty() {
        return Err(TsaError::Malformed { part });
    }
    Ok(tlv.value)
}

/// A small non-negative INTEGER (versions, counts).
pub(crate) fn small_uint(tlv: &Tlv<'_>, part: &'static str) -> Result<u64, TsaError> {
    let v = integer_bytes(tlv, part)?;
    if v[0] & 0x80 != 0 {
        return Err(TsaError::Malformed { part });
    }
    let v = strip_leading_zeros(v);
    if v.len() > 8 {
        return Err(TsaError::Malformed { part });
    }
    Ok(v.iter().fold(0u64, |acc, b| (acc << 8) | u64::from(*b)))
}

/// Two's complement integer bytes with redundant sign octets removed, so
/// that two encodings of one value compare equal.
pub(crate) fn normalize_int(v: &[u8]) -> &[u8] {
    let mut v = v;
    while v.len() > 1 && ((v[0] == 0 && v[1] & 0x80 == 0) || (v[0] == 0xff && v[1] & 0x80 != 0)) {
        v = &v[1..];
    }
    v
}

/// Magnitude bytes of an unsigned big-endian number, leading zeros removed.
pub(crate) fn strip_leading_zeros(v: &[u8]) -> &[u8] {
    let n = v.iter().take_while(|b| **b == 0).count();
    &v[n..]
}

// ---------------------------------------------------------------- writing

/// DER tag-length-value with a definite, minimal length.
pub(crate) fn der(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    let len = content.len();
    if len < 0x80 {
        out.push(len as u8);
    } else {
        let bytes = len.to_be_bytes();
        let skip = bytes.iter().take_while(|b| **b == 0).count();
        out.push(0x80 | (bytes.len() - skip) as u8);
        out.extend_from_slice(&bytes[skip..]);
    }
    out.extend_from_slice(content);
    out
}

/// DER INTEGER from unsigned big-endian magnitude bytes.
pub(crate) fn der_uint(magnitude: &[u8]) -> Vec<u8> {
    let m = strip_leading_zeros(magnitude);
    let mut content = Vec::with_capacity(m.len() + 1);
    if m.is_empty() || m[0] & 0x80 != 0 {
        content.push(0);
    }
    content.extend_from_slice(m);
    der(TAG_INTEGER, &content)
}

/// DER OBJECT IDENTIFIER from dotted text.
pub(crate) fn der_oid(dotted: &str) -> Option<Vec<u8>> {
    let arcs: Vec<u128> = dotted
        .split('.')
        .map(|a| a.parse().ok())
        .collect::<Option<_>>()?;
    if arcs.len() < 2 || arcs[0] > 2 || (arcs[0] < 2 && arcs[1] >= 40) {
        return None;
    }
    let mut content = Vec::new();
    let first = arcs[0].checked_mul(40)?.checked_add(arcs[1])?;
    for arc in std::iter::once(first).chain(arcs[2..].iter().copied()) {
        let mut tmp = vec![(arc & 0x7f) as u8];
        let mut a = arc >> 7;
        while a > 0 {
            tmp.push((a & 0x7f) as u8 | 0x80);
            a >>= 7;
        }
        tmp.reverse();
        content.extend(tmp);
    }
    Some(der(TAG_OID, &content))
}

/// Concatenation helper for building SEQUENCEs.
pub(crate) fn der_seq(parts: &[&[u8]]) -> Vec<u8> {
    der(TAG_SEQUENCE, &parts.concat())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oid_round_trip() {
        for s in [
            "1.2.840.113549.1.9.16.1.4",
            "2.16.840.1.101.3.4.2.1",
            "1.3.6.1.4.1.57264.2",
        ] {
            let der = der_oid(s).unwrap();
            let tlv = single(&der, "oid").unwrap();
            assert_eq!(oid_string(tlv.value, "oid").unwrap(), s);
        }
    }

    #[test]
    fn indefinite_length_is_read() {
        // SEQUENCE (indefinite) { INTEGER 5 } EOC, then trailing INTEGER.
        let data = [0x30, 0x80, 0x02, 0x01, 0x05, 0x00, 0x00, 0x02, 0x01, 0x07];
        let mut r = Reader::new(&data);
        let seq = r.read("t").unwrap();
        assert_eq!(seq.value, &[0x02, 0x01, 0x05]);
        assert_eq!(seq.raw.len(), 7);
        assert_eq!(small_uint(&r.read("t").unwrap(), "t").unwrap(), 7);
    }

    #[test]
    fn truncated_and_huge_lengths_fail() {
        assert!(single(&[0x30, 0x05, 0x02], "t").is_err());
        assert!(single(&[0x30, 0x89, 1, 1, 1, 1, 1, 1, 1, 1, 1], "t").is_err());
        assert!(single(&[0x30, 0x80, 0x30, 0x80], "t").is_err());
    }

    #[test]
    fn integers_normalize() {
        assert_eq!(normalize_int(&[0, 0, 0x7f]), &[0x7f]);
        assert_eq!(normalize_int(&[0xff, 0x80]), &[0x80]);
        assert_eq!(normalize_int(&[0, 0x80]), &[0, 0x80]);
        assert_eq!(der_uint(&[0x80]), vec![2, 2, 0, 0x80]);
    }
}
