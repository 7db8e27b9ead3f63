//! Times: ASN.1 UTCTime / GeneralizedTime (with the fractional seconds real
//! TSAs send in genTime) and RFC 3339, as seconds since the Unix epoch.

use super::error::TsaError;
/// A point in time, UTC, with sub-second precision. Serialises as RFC 3339.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp {
    /// Seconds since 1970-01-01T00:00:00Z.
    pub unix: i64,
    /// Nanoseconds within that second.
    pub nanos: u32,
}

impl Timestamp {
    /// The current system time.
    pub fn now() -> Self {
        let d = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        Timestamp {
            unix: i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
            nanos: d.subsec_nanos(),
        }
    }

    /// Parses RFC 3339 (`2025-01-01T00:00:00Z`, offsets and fractions allowed).
    pub fn parse_rfc3339(text: &str) -> Option<Self> {
        let b = text.as_bytes();
        if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
            return None;
        }
        if b[13] != b':' || b[16] != b':' {
            return None;
        }
        let num = |r: std::ops::Range<usize>| -> Option<i64> {
            let s = text.get(r)?;
            s.bytes()
                .all(|c| c.is_ascii_digit())
                .then(|| s.parse().ok())?
        };
        let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
        let (h, mi, s) = (num(11..13)?, num(14..16)?, num(17..19)?);
        let mut pos = 19;
        let mut nanos = 0u32;
        if b[pos] == b'.' {
            let start = pos + 1;
            pos = start;
            while pos < b.len() && b[pos].is_ascii_digit() {
                pos += 1;
            }
            nanos = fraction_nanos(&text[start..pos])?;
        }
        let offset = match b.get(pos)? {
            b'Z' | b'z' if pos + 1 == b.len() => 0,
            c @ (b'+' | b'-') if pos + 6 == b.len() && b[pos + 3] == b':' => {
                let oh = num(pos + 1..pos + 3)?;
                let om = num(pos + 4..pos + 6)?;
                let off = oh * 3600 + om * 60;
                if *c == b'+' { off } else { -off }
            }
            _ => return None,
        };
        let unix = civil_to_unix(y, mo, d, h, mi, s)? - offset;
        Some(Timestamp { unix, nanos })
    }

    /// RFC 3339 in UTC, with the fraction only when there is one.
    pub fn to_rfc3339(&self) -> String {
        let days = self.unix.div_euclid(86_400);
        let secs = self.unix.rem_euclid(86_400);
        let (y, m, d) = days_to_civil(days);
        let mut s = format!(
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
            secs / 3600,
            secs / 60 % 60,
            secs % 60
        );
        if self.nanos != 0 {
            let frac = format!("{:09}", self.nanos);
            s.push('.');
            s.push_str(frac.trim_end_matches('0'));
        }
        s.push('Z');
        s
    }
}

impl serde::Serialize for Timestamp {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_rfc3339())
    }
}

impl std::fmt::Display for Timestamp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_rfc3339())
    }
}

fn fraction_nanos(digits: &str) -> Option<u32> {
    if digits.is_empty() || digits.len() > 9 || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let mut n: u32 = digits.parse().ok()?;
    for _ in digits.len()..9 {
        n *= 10;
    }
    Some(n)
}

/// Parses a UTCTime (RFC 5280 §4.1.2.5.1: YYMMDDHHMMSSZ).
pub(crate) fn parse_utc_time(v: &[u8], part: &'static str) -> Result<Timestamp, TsaError> {
    let bad = TsaError::Malformed { part };
    if v.len() != 13 || v[12] != b'Z' || !v[..12].iter().all(u8::is_ascii_digit) {
        return Err(bad);
    }
    let n = |i: usize| i64::from(v[i] - b'0') * 10 + i64::from(v[i + 1] - b'0');
    let yy = n(0);
    let year = if yy < 50 { 2000 + yy } else { 1900 + yy };
    let unix = civil_to_unix(year, n(2), n(4), n(6), n(8), n(10)).ok_or(bad)?;
    Ok(Timestamp { unix, nanos: 0 })
}

/// Parses a GeneralizedTime: YYYYMMDDHHMMSS[.fff]Z. Fractional seconds are
/// accepted (RFC 3161 §2.4.2 allows them in genTime; Microsoft sends them).
pub(crate) fn parse_generalized_time(v: &[u8], part: &'static str) -> Result<Timestamp, TsaError> {
    let bad = TsaError::Malformed { part };
    if v.len() < 15 || v[v.len() - 1] != b'Z' || !v[..14].iter().all(u8::is_ascii_digit) {
        return Err(bad);
    }
    let n = |i: usize| i64::from(v[i] - b'0') * 10 + i64::from(v[i + 1] - b'0');
    let year = n(0) * 100 + n(2);
    let mut nanos = 0;
    if v.len() > 15 {
        if v[14] != b'.' {
            return Err(bad);
        }
        let digits = std::str::from_utf8(&v[15..v.len() - 1]).map_err(|_| bad.clone())?;
        // DER forbids trailing zeros in the fraction; tolerate them.
        nanos = fraction_nanos(digits).ok_or(bad.clone())?;
    }
    let unix = civil_to_unix(year, n(4), n(6), n(8), n(10), n(12)).ok_or(bad)?;
    Ok(Timestamp { unix, nanos })
}

/// Reads an X.509 `Time` (UTCTime or GeneralizedTime).
pub(crate) fn parse_time(tag: u8, v: &[u8], part: &'static str) -> Result<Timestamp, TsaError> {
    match tag {
        super::asn1::TAG_UTC_TIME => parse_utc_time(v, part),
        super::asn1::TAG_GENERALIZED_TIME => parse_generalized_time(v, part),
        _ => Err(TsaError::Malformed { part }),
    }
}

fn civil_to_unix(y: i64, m: i64, d: i64, h: i64, mi: i64, s: i64) -> Option<i64> {
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let mdays = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if !(1..=12).contains(&m) || d < 1 || d > mdays[(m - 1) as usize] {
        return None;
    }
    // 60 allows a leap second; it is folded into the next minute.
    if h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let days = crate::time::days_from_civil(y, m, d);
    Some(days * 86_400 + h * 3600 + mi * 60 + s)
}

fn days_to_civil(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
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
    }

    #[test]
    fn rfc3339_round_trip() {
        let t = Timestamp::parse_rfc3339("2025-07-21T00:00:00Z").unwrap();
        assert_eq!(t.unix, 1_753_056_000);
        assert_eq!(t.to_rfc3339(), "2025-07-21T00:00:00Z");
        let o = Timestamp::parse_rfc3339("2025-07-21T02:00:00+02:00").unwrap();
        assert_eq!(o, t);
        assert!(Timestamp::parse_rfc3339("2025-07-21").is_none());
        assert_eq!(
            parse_utc_time(b"491231235959Z", "t").unwrap().to_rfc3339(),
            "2049-12-31T23:59:59Z"
        );
        assert_eq!(
            parse_utc_time(b"500101000000Z", "t").unwrap().to_rfc3339(),
            "1950-01-01T00:00:00Z"
        );
    }
}
