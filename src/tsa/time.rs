//! ASN.1 times: UTCTime and GeneralizedTime (with the fractional seconds
//! real TSAs send in genTime). The DER syntax checks live here; the calendar
//! rules and the conversion to [`Timestamp`] are `crate::time`'s.

use super::error::TsaError;
pub use crate::time::Timestamp;

/// Parses a UTCTime (RFC 5280 §4.1.2.5.1: YYMMDDHHMMSSZ).
pub(crate) fn parse_utc_time(v: &[u8], part: &'static str) -> Result<Timestamp, TsaError> {
    let bad = TsaError::Malformed { part };
    if v.len() != 13 || v[12] != b'Z' || !v[..12].iter().all(u8::is_ascii_digit) {
        return Err(bad);
    }
    let n = |i: usize| (v[i] - b'0') * 10 + (v[i + 1] - b'0');
    let yy = i32::from(n(0));
    let year = if yy < 50 { 2000 + yy } else { 1900 + yy };
    Timestamp::from_civil(year, n(2), n(4), n(6), n(8), n(10), 0).map_err(|_| bad)
}

/// Parses a GeneralizedTime: YYYYMMDDHHMMSS[.fff]Z. Fractional seconds are
/// accepted (RFC 3161 §2.4.2 allows them in genTime; Microsoft sends them).
pub(crate) fn parse_generalized_time(v: &[u8], part: &'static str) -> Result<Timestamp, TsaError> {
    let bad = TsaError::Malformed { part };
    if v.len() < 15 || v[v.len() - 1] != b'Z' || !v[..14].iter().all(u8::is_ascii_digit) {
        return Err(bad);
    }
    let n = |i: usize| (v[i] - b'0') * 10 + (v[i + 1] - b'0');
    let year = i32::from(n(0)) * 100 + i32::from(n(2));
    let mut nanos = 0;
    if v.len() > 15 {
        if v[14] != b'.' {
            return Err(bad);
        }
        // DER forbids trailing zeros in the fraction; tolerate them.
        nanos = crate::time::fraction_nanos(&v[15..v.len() - 1]).ok_or(bad.clone())?;
    }
    Timestamp::from_civil(year, n(4), n(6), n(8), n(10), n(12), nanos).map_err(|_| bad)
}

/// Reads an X.509 `Time` (UTCTime or GeneralizedTime).
pub(crate) fn parse_time(tag: u8, v: &[u8], part: &'static str) -> Result<Timestamp, TsaError> {
    use der::Decode;
    match der::Tag::from_der(&[tag]) {
        Ok(der::Tag::UtcTime) => parse_utc_time(v, part),
        Ok(der::Tag::GeneralizedTime) => parse_generalized_time(v, part),
        _ => Err(TsaError::Malformed { part }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generalized_time_with_fraction() {
        let t = parse_generalized_time(b"20240621071205.884Z", "t").unwrap();
        assert_eq!(t.to_rfc3339(), "2024-06-21T07:12:05.884Z");
        assert!(parse_generalized_time(b"20240621071205.Z", "t").is_err());
        assert!(parse_generalized_time(b"20240231071205Z", "t").is_err());
        assert!(parse_generalized_time(b"20240621240000Z", "t").is_err());
        assert!(parse_generalized_time(b"20240621071205.1234567890Z", "t").is_err());
    }

    #[test]
    fn utc_time_century_window() {
        assert_eq!(
            parse_utc_time(b"491231235959Z", "t").unwrap().to_rfc3339(),
            "2049-12-31T23:59:59Z"
        );
        assert_eq!(
            parse_utc_time(b"500101000000Z", "t").unwrap().to_rfc3339(),
            "1950-01-01T00:00:00Z"
        );
        assert!(parse_utc_time(b"260231000000Z", "t").is_err());
    }
}
