//! RFC 3339 UTC timestamps: formatting the current time and checking the
//! syntax of a timestamp field without allocating.

use std::time::{SystemTime, UNIX_EPOCH};

/// The current time as RFC 3339 UTC with millisecond precision,
/// e.g. `2026-11-29T15:58:05.123Z`.
pub fn now_rfc3339() -> String {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    format_unix_millis(since.as_millis())
}

/// Formats milliseconds since the Unix epoch as RFC 3339 UTC.
pub fn format_unix_millis(millis: u128) -> String {
    let secs = (millis / 1000) as i64;
    let ms = (millis % 1000) as u32;
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{ms:03}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

/// (year, month 1-12, day 1-31) in the proleptic Gregorian calendar to
/// days since 1970-01-01 (Howard Hinnant's `days_from_civil`). Does not
/// check the ranges.
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y2 = if m <= 2 { y - 1 } else { y };
    let era = y2.div_euclid(400);
    let yoe = y2 - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian
/// calendar (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// Checks that `text` is an RFC 3339 UTC timestamp in the form vouch writes:
/// `YYYY-MM-DDTHH:MM:SS[.fraction]Z`, 1 to 9 fraction digits, field ranges
/// checked (seconds up to 60 for a leap second; day-of-month not checked
/// against the month's length).
pub fn is_rfc3339_utc(text: &[u8]) -> bool {
    fn num(t: &[u8], range: std::ops::Range<usize>) -> Option<u32> {
        let mut v = 0u32;
        for &c in t.get(range)? {
            if !c.is_ascii_digit() {
                return None;
            }
            v = v * 10 + u32::from(c - b'0');
        }
        Some(v)
    }
    if text.len() < 20 || text.last() != Some(&b'Z') {
        return false;
    }
    let seps = [(4, b'-'), (7, b'-'), (10, b'T'), (13, b':'), (16, b':')];
    if seps.iter().any(|&(i, c)| text[i] != c) {
        return false;
    }
    let fields = (
        num(text, 0..4),
        num(text, 5..7),
        num(text, 8..10),
        num(text, 11..13),
        num(text, 14..16),
        num(text, 17..19),
    );
    let (Some(_), Some(mo), Some(d), Some(h), Some(mi), Some(s)) = fields else {
        return false;
    };
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 60 {
        return false;
    }
    match &text[19..text.len() - 1] {
        [] => true,
        [b'.', digits @ ..] => {
            (1..=9).contains(&digits.len()) && digits.iter().all(u8::is_ascii_digit)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_instants() {
        assert_eq!(format_unix_millis(0), "1970-01-01T00:00:00.000Z");
        // 2000-02-29T12:34:56.789Z (leap day)
        assert_eq!(
            format_unix_millis(951_827_696_789),
            "2000-02-29T12:34:56.789Z"
        );
        assert_eq!(
            format_unix_millis(4_102_444_799_999),
            "2099-12-31T23:59:59.999Z"
        );
    }

    #[test]
    fn days_round_trip() {
        for days in [-719_468i64, -1, 0, 1, 11_016, 20_000, 2_932_896] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, i64::from(m), i64::from(d)), days);
        }
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
    }

    #[test]
    fn syntax_check() {
        assert!(is_rfc3339_utc(b"2026-11-29T15:58:05.123Z"));
        assert!(is_rfc3339_utc(b"2026-11-29T15:58:05Z"));
        assert!(is_rfc3339_utc(b"2016-12-31T23:59:60.5Z"));
        for bad in [
            &b"2026-11-29 15:58:05Z"[..],
            b"2026-13-29T15:58:05Z",
            b"2026-11-29T24:58:05Z",
            b"2026-11-29T15:58:05+00:00",
            b"2026-11-29T15:58:05.Z",
            b"2026-11-29T15:58:05.1234567890Z",
            b"2026-11-29T15:58:0aZ",
            b"",
        ] {
            assert!(!is_rfc3339_utc(bad), "{}", String::from_utf8_lossy(bad));
        }
    }
}
