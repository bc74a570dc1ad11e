//! The `format` of string fields, checked as the API server checks it: the generated CRDs use `date-time` (RFC 3339,
//! on `spec.schedule.expiresAt`), and `int32` / `int64` on integers. The API server checks formats of strings only
//! (kube-openapi `validate/formats.go`: a format validator applies to `reflect.String`), so `int32` and `int64` are
//! not checked here either: every `int32` field of the Model Fleet API has a `minimum` and `maximum` inside the
//! int32 range, and the `int64` ones (`tolerationSeconds`, `records`) take any JSON integer the API server decodes.
//! Any other format is not checked (none is generated today).

use std::fmt;
use std::sync::OnceLock;

use k8s_openapi::jiff::Timestamp;

/// An example of the `date-time` format, for error messages.
pub const DATE_TIME_EXAMPLE: &str = "2026-12-31T18:00:00Z";

/// Why a text is not a `date-time` the API server takes and the operator reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DateTimeError {
    /// Not RFC 3339 as the API server checks it (kube-openapi `strfmt.IsDateTime`).
    NotRfc3339,
    /// Taken by the API server (whose check is looser than RFC 3339: any character before the fraction, any
    /// offset, more than 9 fraction digits) but not a time the operator can read, so the schedule would be ignored.
    Unreadable(String),
}

impl fmt::Display for DateTimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DateTimeError::NotRfc3339 => write!(
                f,
                "must be an RFC 3339 date-time: a date, 'T', a time with seconds and an offset (Z or +HH:MM), \
                 e.g. {DATE_TIME_EXAMPLE}"
            ),
            DateTimeError::Unreadable(why) => write!(
                f,
                "is not a time the operator can read ({why}): write an RFC 3339 date-time such as \
                 {DATE_TIME_EXAMPLE}"
            ),
        }
    }
}

impl std::error::Error for DateTimeError {}

/// The time part of kube-openapi's `strfmt.DateTimePattern`, verbatim (its `.` matches any character).
const TIME_PATTERN: &str =
    r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$";

/// Whether the API server takes `text` as `format: date-time`: a port of kube-openapi's `strfmt.IsDateTime` (the
/// version apiextensions-apiserver v0.35.4 uses): at least 4 characters; lower-cased and split at every `t`, the
/// first part a `2006-01-02` date Go's `time.Parse` takes (a real day of its month), the second matching
/// [`TIME_PATTERN`] with hours at most 23 and minutes and seconds at most 59.
pub fn is_openapi_date_time(text: &str) -> bool {
    static TIME: OnceLock<regex::Regex> = OnceLock::new();
    if text.len() < 4 {
        return false;
    }
    let lower = text.to_lowercase();
    let mut parts = lower.split('t');
    let (Some(date), Some(time)) = (parts.next(), parts.next()) else {
        return false;
    };
    let time_re = TIME.get_or_init(|| regex::Regex::new(TIME_PATTERN).expect("valid pattern"));
    let Some(caps) = time_re.captures(time) else {
        return false;
    };
    is_full_date(date) && &caps[1] <= "23" && &caps[2] <= "59" && &caps[3] <= "59"
}

/// Go's `time.Parse("2006-01-02", s)`: four-digit year, two-digit month 01-12, two-digit day within the month.
fn is_full_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let number = |r: std::ops::Range<usize>| {
        b[r.clone()]
            .iter()
            .all(u8::is_ascii_digit)
            .then(|| s[r].parse::<u32>().ok())
            .flatten()
    };
    let (Some(year), Some(month), Some(day)) = (number(0..4), number(5..7), number(8..10)) else {
        return false;
    };
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// Parses a `date-time` field (`spec.schedule.expiresAt`) as the API server checks it and the operator reads it:
/// [`is_openapi_date_time`], then jiff's `Timestamp` parser (RFC 3339 / RFC 9557, upper-cased so `t` and `z`
/// read as the API server reads them). Errors: [`DateTimeError::NotRfc3339`] for what the API server refuses,
/// [`DateTimeError::Unreadable`] for the rare text it takes that no RFC 3339 parser reads (`+99:99`, ten fraction
/// digits, `18:00:00x5Z`): refused here on purpose, since the operator would ignore such a schedule.
pub fn parse_date_time(text: &str) -> Result<Timestamp, DateTimeError> {
    if !is_openapi_date_time(text) {
        return Err(DateTimeError::NotRfc3339);
    }
    text.to_ascii_uppercase()
        .parse::<Timestamp>()
        .map_err(|e| DateTimeError::Unreadable(e.to_string()))
}

/// Checks `text` against a schema `format`; `Ok` for formats that are not checked (see the module doc). Errors: the
/// rule broken, in words that end with an example to write instead.
pub fn check(format: &str, text: &str) -> Result<(), String> {
    match format {
        "date-time" => parse_date_time(text).map(|_| ()).map_err(|e| e.to_string()),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The texts and what kube-openapi's `strfmt.IsDateTime` answered for them (checked with a Go program).
    #[test]
    fn date_times_as_the_api_server_takes_them() {
        for (text, api_server) in [
            ("2026-12-31T18:00:00Z", true),
            ("2026-12-31t18:00:00z", true),
            ("2026-12-31T18:00:00.5Z", true),
            ("2026-12-31T18:00:00+01:00", true),
            ("2026-12-31T18:00:00-05:30", true),
            ("2024-02-29T00:00:00Z", true),
            ("2026-12-31T18:00:00x5Z", true),
            ("2026-12-31T18:00:00+99:99", true),
            ("2026-12-31T18:00:00.1234567891Z", true),
            ("2026-12-31T18:00:00ZT", true),
            ("0000-01-01T00:00:00Z", true),
            ("tomorrow", false),
            ("2026-12-31", false),
            ("2026-12-31 18:00:00Z", false),
            ("2026-12-31T18:00Z", false),
            ("2026-12-31T18:00:00", false),
            ("2026-12-31T18:00:00+0100", false),
            ("2026-12-31T24:00:00Z", false),
            ("2026-12-31T18:60:00Z", false),
            ("2026-12-31T18:00:60Z", false),
            ("2026-02-29T00:00:00Z", false),
            ("2026-13-01T00:00:00Z", false),
            ("+002026-12-31T18:00:00Z", false),
            ("2026-12-31T18:00:00Z[Europe/Paris]", false),
            ("1767204000", false),
            ("", false),
            ("2026-1-01T00:00:00Z", false),
        ] {
            assert_eq!(is_openapi_date_time(text), api_server, "{text:?}");
        }
    }

    #[test]
    fn parse_takes_what_both_read_and_names_the_fix() {
        for text in [
            "2026-12-31T18:00:00Z",
            "2026-12-31t18:00:00z",
            "2026-12-31T19:00:00+01:00",
        ] {
            assert_eq!(
                parse_date_time(text).unwrap(),
                "2026-12-31T18:00:00Z".parse::<Timestamp>().unwrap(),
                "{text:?}"
            );
        }
        let refused = check("date-time", "tomorrow").unwrap_err();
        assert!(
            refused.contains("RFC 3339") && refused.ends_with(DATE_TIME_EXAMPLE),
            "{refused}"
        );
        for unreadable in [
            "2026-12-31T18:00:00+99:99",
            "2026-12-31T18:00:00x5Z",
            "2026-12-31T18:00:00ZT",
        ] {
            let err = parse_date_time(unreadable).unwrap_err();
            assert!(
                matches!(err, DateTimeError::Unreadable(_)),
                "{unreadable:?}: {err}"
            );
        }
        assert_eq!(check("int32", "x"), Ok(()));
    }
}
