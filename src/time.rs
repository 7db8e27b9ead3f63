//! Time, in one place for the whole crate: RFC 3339 parsing and formatting
//! (backed by the `time` crate), the calendar rules that every date parser in
//! vouch shares (RFC 3339 input, the records' `ts` field, the ASN.1
//! UTCTime/GeneralizedTime values of `tsa`), and the allocation-free syntax
//! check of a record's `ts` on the verifier hot path.
//!
//! One set of rules: a date must exist in the proleptic Gregorian calendar
//! (`2026-02-31` does not), hours are 00-23, and a second of 60 (a leap
//! second) is accepted only as the last second of a month, 23:59:60 UTC. A
//! leap second is read as 23:59:59.999999999, as the `time` crate does.

use ::time::format_description::well_known::Rfc3339;
use ::time::{Date, Month, OffsetDateTime, Time};

/// A point in time, UTC, with sub-second precision. Serialises as RFC 3339.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp {
    /// Seconds since 1970-01-01T00:00:00Z.
    pub unix: i64,
    /// Nanoseconds within that second.
    pub nanos: u32,
}

/// Why a date or time was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TimeError {
    /// Not the RFC 3339 shape at all.
    #[error("not a date or time in the accepted form")]
    Syntax,
    /// The shape is right but the date or time does not exist, e.g.
    /// `2026-02-31` or `24:00:00`.
    #[error("no such date or time: the {component} is out of range")]
    OutOfRange {
        /// `year`, `month`, `day`, `hour`, `minute`, `second` or `offset`.
        component: &'static str,
    },
    /// A UTC time (ending in `Z`) was required and an offset was given.
    #[error("not UTC: give the time with a trailing Z")]
    NotUtc,
}

impl TimeError {
    /// A stable snake_case code.
    pub fn code(&self) -> &'static str {
        match self {
            TimeError::Syntax => "time_syntax",
            TimeError::OutOfRange { .. } => "time_out_of_range",
            TimeError::NotUtc => "time_not_utc",
        }
    }
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

    /// A UTC civil date and time, checked against the calendar (see the
    /// module docs for the leap-second rule). Shared by every parser that
    /// reads calendar fields (RFC 3339 and the ASN.1 times of `tsa`).
    pub fn from_civil(
        year: i32,
        month: u8,
        day: u8,
        hour: u8,
        minute: u8,
        second: u8,
        nanos: u32,
    ) -> Result<Self, TimeError> {
        let out_of_range = |e: ::time::error::ComponentRange| TimeError::OutOfRange {
            component: e.name(),
        };
        let month = Month::try_from(month).map_err(out_of_range)?;
        let date = Date::from_calendar_date(year, month, day).map_err(out_of_range)?;
        let (second, nanos) = if second == 60 {
            if hour != 23 || minute != 59 || day != month.length(year) {
                return Err(TimeError::OutOfRange {
                    component: "second",
                });
            }
            (59, 999_999_999)
        } else {
            (second, nanos)
        };
        let time = Time::from_hms_nano(hour, minute, second, nanos).map_err(out_of_range)?;
        let t = date.with_time(time).assume_utc();
        Ok(Timestamp {
            unix: t.unix_timestamp(),
            nanos: t.nanosecond(),
        })
    }

    /// Parses RFC 3339 (§5.6 `date-time`): `2025-01-01T00:00:00Z`, with an
    /// optional fraction and a `Z` or `±HH:MM` offset (`T` may be `t` or a
    /// space, `Z` may be `z`).
    pub fn parse_rfc3339(text: &str) -> Result<Self, TimeError> {
        // The `time` crate takes any byte as the date/time separator.
        if !matches!(text.as_bytes().get(10), Some(b'T' | b't' | b' ')) {
            return Err(TimeError::Syntax);
        }
        let t = OffsetDateTime::parse(text, &Rfc3339).map_err(parse_error)?;
        Ok(Timestamp {
            unix: t.unix_timestamp(),
            nanos: t.nanosecond(),
        })
    }

    /// Parses a UTC date given by a user: `YYYY-MM-DD` (midnight UTC) or an
    /// RFC 3339 time in UTC (`...Z`).
    pub fn parse_utc_date_or_time(text: &str) -> Result<Self, TimeError> {
        let b = text.as_bytes();
        if b.len() == 10 {
            if b[4] != b'-' || b[7] != b'-' {
                return Err(TimeError::Syntax);
            }
            let (Some(y), Some(m), Some(d)) = (digits(b, 0, 4), digits(b, 5, 2), digits(b, 8, 2))
            else {
                return Err(TimeError::Syntax);
            };
            return Self::from_civil(y as i32, m as u8, d as u8, 0, 0, 0, 0);
        }
        let t = Self::parse_rfc3339(text)?;
        if !matches!(b.last(), Some(b'Z' | b'z')) {
            return Err(TimeError::NotUtc);
        }
        Ok(t)
    }

    /// RFC 3339 in UTC, with a fraction only when there is one (trailing
    /// zeros dropped), e.g. `2025-07-21T00:00:00Z`. A time outside years
    /// 0000-9999, which no parser here produces, is written `@<unix>`.
    pub fn to_rfc3339(&self) -> String {
        self.to_offset_date_time()
            .and_then(|t| t.format(&Rfc3339).ok())
            .unwrap_or_else(|| format!("@{}", self.unix))
    }

    fn to_offset_date_time(self) -> Option<OffsetDateTime> {
        let t = OffsetDateTime::from_unix_timestamp(self.unix).ok()?;
        t.replace_nanosecond(self.nanos).ok()
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

fn parse_error(e: ::time::error::Parse) -> TimeError {
    use ::time::error::{Parse, TryFromParsed};
    match e {
        Parse::TryFromParsed(TryFromParsed::ComponentRange(c)) => TimeError::OutOfRange {
            component: c.name(),
        },
        _ => TimeError::Syntax,
    }
}

/// Seconds since the Unix epoch now.
pub fn now_unix() -> i64 {
    Timestamp::now().unix
}

/// The current time as RFC 3339 UTC with millisecond precision,
/// e.g. `2026-11-29T15:58:05.123Z` (the record `ts` vouch writes).
pub fn now_rfc3339() -> String {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    format_unix_millis(since.as_millis())
}

/// Formats milliseconds since the Unix epoch as RFC 3339 UTC with exactly
/// three fraction digits. Past year 9999 (not a real clock) it clamps to
/// 9999-12-31T23:59:59.999Z.
pub fn format_unix_millis(millis: u128) -> String {
    let secs = i64::try_from(millis / 1000).unwrap_or(i64::MAX);
    let (t, ms) = match OffsetDateTime::from_unix_timestamp(secs) {
        Ok(t) => (t, (millis % 1000) as u16),
        Err(_) => (
            Date::MAX.with_time(Time::MAX).assume_utc(),
            999, // clamped
        ),
    };
    let (y, m, d) = t.to_calendar_date();
    let (hh, mm, ss) = t.to_hms();
    format!(
        "{y:04}-{:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}.{ms:03}Z",
        u8::from(m)
    )
}

/// Nanoseconds from 1 to 9 fraction digits (`"5"` is 500 ms); `None` for an
/// empty, longer or non-digit fraction.
pub(crate) fn fraction_nanos(digits: &[u8]) -> Option<u32> {
    if !(1..=9).contains(&digits.len()) {
        return None;
    }
    let mut n = digits_value(digits)?;
    for _ in digits.len()..9 {
        n *= 10;
    }
    Some(n)
}

/// The value of `len` ASCII digits at `start`.
fn digits(text: &[u8], start: usize, len: usize) -> Option<u32> {
    digits_value(text.get(start..start + len)?)
}

fn digits_value(text: &[u8]) -> Option<u32> {
    let mut v = 0u32;
    for &c in text {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v * 10 + u32::from(c - b'0');
    }
    Some(v)
}

/// Days in `month` (1-12) of `year`, proleptic Gregorian; 0 for a month
/// that does not exist.
const fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400) => {
            29
        }
        2 => 28,
        _ => 0,
    }
}

/// Checks that `text` is an RFC 3339 UTC timestamp in the form vouch writes:
/// `YYYY-MM-DDTHH:MM:SS[.fraction]Z` with 1 to 9 fraction digits, uppercase
/// `T` and `Z`, and a date and time that exist (the module's rules: no
/// `2026-02-31`, no `24:00:00`, a leap second only at 23:59:60 on the last
/// day of a month).
///
/// This runs once per record on the verifier's hot path: a byte-level check
/// that does not allocate. It accepts exactly what
/// [`Timestamp::parse_rfc3339`] accepts among strings of this form.
pub fn is_rfc3339_utc(text: &[u8]) -> bool {
    if text.len() < 20 || text.last() != Some(&b'Z') {
        return false;
    }
    let seps = [(4, b'-'), (7, b'-'), (10, b'T'), (13, b':'), (16, b':')];
    if seps.iter().any(|&(i, c)| text[i] != c) {
        return false;
    }
    let fields = (
        digits(text, 0, 4),
        digits(text, 5, 2),
        digits(text, 8, 2),
        digits(text, 11, 2),
        digits(text, 14, 2),
        digits(text, 17, 2),
    );
    let (Some(y), Some(mo), Some(d), Some(h), Some(mi), Some(s)) = fields else {
        return false;
    };
    let month_days = days_in_month(y, mo);
    if d == 0 || d > month_days || h > 23 || mi > 59 {
        return false;
    }
    if s > 60 || (s == 60 && (h != 23 || mi != 59 || d != month_days)) {
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
        assert_eq!(format_unix_millis(u128::MAX), "9999-12-31T23:59:59.999Z");
        assert!(is_rfc3339_utc(now_rfc3339().as_bytes()));
    }

    #[test]
    fn syntax_check() {
        assert!(is_rfc3339_utc(b"2026-11-29T15:58:05.123Z"));
        assert!(is_rfc3339_utc(b"2026-11-29T15:58:05Z"));
        assert!(is_rfc3339_utc(b"2016-12-31T23:59:60.5Z"));
        assert!(is_rfc3339_utc(b"2024-02-29T00:00:00Z"));
        assert!(is_rfc3339_utc(b"2000-02-29T00:00:00Z"));
        assert!(is_rfc3339_utc(b"2026-04-30T23:59:59.999999999Z"));
        for bad in [
            &b"2026-11-29 15:58:05Z"[..],
            b"2026-13-29T15:58:05Z",
            b"2026-00-29T15:58:05Z",
            b"2026-11-00T15:58:05Z",
            b"2026-11-29T24:58:05Z",
            b"2026-11-29T24:00:00Z",
            b"2026-11-29T15:60:05Z",
            b"2026-11-29T15:58:61Z",
            b"2026-02-31T00:00:00Z",
            b"2026-02-29T00:00:00Z",
            b"1900-02-29T00:00:00Z",
            b"2026-04-31T00:00:00Z",
            b"2026-11-29T15:58:60Z",
            b"2016-12-30T23:59:60Z",
            b"2026-11-29T15:58:05+00:00",
            b"2026-11-29T15:58:05z",
            b"2026-11-29t15:58:05Z",
            b"2026-11-29T15:58:05.Z",
            b"2026-11-29T15:58:05.1234567890Z",
            b"2026-11-29T15:58:0aZ",
            b"+026-11-29T15:58:05Z",
            b"",
        ] {
            assert!(!is_rfc3339_utc(bad), "{}", String::from_utf8_lossy(bad));
        }
    }

    /// The hot-path check and the crate-backed parser agree on the form
    /// vouch writes, over every day of a leap and a common year and
    /// boundary times.
    #[test]
    fn syntax_check_agrees_with_parser() {
        for year in [1900, 2000, 2024, 2026] {
            for month in 1..=13 {
                for day in 0..=32 {
                    for time in ["00:00:00", "23:59:59.5", "23:59:60", "24:00:00"] {
                        let text = format!("{year:04}-{month:02}-{day:02}T{time}Z");
                        assert_eq!(
                            is_rfc3339_utc(text.as_bytes()),
                            Timestamp::parse_rfc3339(&text).is_ok(),
                            "{text}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn rfc3339_round_trip() {
        let t = Timestamp::parse_rfc3339("2025-07-21T00:00:00Z").unwrap();
        assert_eq!(t.unix, 1_753_056_000);
        assert_eq!(t.to_rfc3339(), "2025-07-21T00:00:00Z");
        let o = Timestamp::parse_rfc3339("2025-07-21T02:00:00+02:00").unwrap();
        assert_eq!(o, t);
        let f = Timestamp::parse_rfc3339("2024-06-21T07:12:05.884Z").unwrap();
        assert_eq!(f.nanos, 884_000_000);
        assert_eq!(f.to_rfc3339(), "2024-06-21T07:12:05.884Z");
        assert_eq!(
            Timestamp::parse_rfc3339("2025-07-21"),
            Err(TimeError::Syntax)
        );
        assert_eq!(
            Timestamp::parse_rfc3339("2025-07-21x00:00:00Z"),
            Err(TimeError::Syntax)
        );
        assert_eq!(
            Timestamp::parse_rfc3339("2026-02-31T00:00:00Z"),
            Err(TimeError::OutOfRange { component: "day" })
        );
        assert_eq!(
            Timestamp::parse_rfc3339("2026-01-01T24:00:00Z"),
            Err(TimeError::OutOfRange { component: "hour" })
        );
        assert_eq!(
            Timestamp {
                unix: i64::MAX,
                nanos: 0
            }
            .to_rfc3339(),
            format!("@{}", i64::MAX)
        );
    }

    #[test]
    fn user_dates() {
        let p = Timestamp::parse_utc_date_or_time;
        assert_eq!(p("1970-01-01").map(|t| t.unix), Ok(0));
        assert_eq!(p("2000-03-01T00:00:01Z").map(|t| t.unix), Ok(951_868_801));
        assert_eq!(
            p("2026-11-29T16:22:14.5Z").map(|t| t.unix),
            Ok(1_795_969_334)
        );
        assert_eq!(
            p("2026-13-01"),
            Err(TimeError::OutOfRange { component: "month" })
        );
        assert_eq!(
            p("2026-02-31"),
            Err(TimeError::OutOfRange { component: "day" })
        );
        assert_eq!(
            p("2026-02-31T00:00:00Z"),
            Err(TimeError::OutOfRange { component: "day" })
        );
        assert_eq!(p("2026-11-29T16:22:14+01:00"), Err(TimeError::NotUtc));
        assert_eq!(p("2026/11/29"), Err(TimeError::Syntax));
        assert_eq!(p("tomorrow"), Err(TimeError::Syntax));
    }

    #[test]
    fn civil_fields() {
        assert_eq!(
            Timestamp::from_civil(2000, 3, 1, 0, 0, 0, 0).map(|t| t.unix),
            Ok(951_868_800)
        );
        assert!(Timestamp::from_civil(2026, 2, 29, 0, 0, 0, 0).is_err());
        assert!(Timestamp::from_civil(2026, 1, 1, 24, 0, 0, 0).is_err());
        let leap = Timestamp::from_civil(2016, 12, 31, 23, 59, 60, 0).unwrap();
        assert_eq!((leap.unix, leap.nanos), (1_483_228_799, 999_999_999));
        assert!(Timestamp::from_civil(2016, 12, 30, 23, 59, 60, 0).is_err());
        assert_eq!(fraction_nanos(b"5"), Some(500_000_000));
        assert_eq!(fraction_nanos(b"123456789"), Some(123_456_789));
        assert_eq!(fraction_nanos(b""), None);
        assert_eq!(fraction_nanos(b"1234567890"), None);
        assert_eq!(fraction_nanos(b"1a"), None);
    }
}
