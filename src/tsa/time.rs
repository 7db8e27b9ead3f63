//! genTime: GeneralizedTime with the fractional seconds real TSAs send
//! (certificate times are `x509_cert`'s). The DER syntax checks live here; the calendar
//! rules and the conversion to [`Timestamp`] are `crate::time`'s.

use super::error::TsaError;
pub use crate::time::Timestamp;

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
}
