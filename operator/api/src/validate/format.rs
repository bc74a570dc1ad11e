//! The `format` of string fields, checked as the API server checks it: the generated CRDs use `date-time` (RFC 3339,
//! on `spec.schedule.expiresAt`), and `int32` / `int64` on integers. The API server checks formats of strings only
//! (kube-openapi `validate/formats.go`: a format validator applies to `reflect.String`), so `int32` and `int64` are
//! not checked here either: every `int32` field of the Model Fleet API has a `minimum` and `maximum` inside the
//! int32 range, and the `int64` ones (`tolerationSeconds`, `records`) take any JSON integer the API server decodes.
//! Any other format is not checked (none is generated today).

use std::fmt;
use std::sync::OnceLock;

use k8s_openapi::jiff::Timestamp;

use super::patterns;
use crate::names;

/// An example of the `date-time` format, for error messages.
pub const DATE_TIME_EXAMPLE: &str = "2026-12-31T18:00:00Z";

/// A text the API server refuses as `format: date-time` (RFC 3339 as kube-openapi's `strfmt.IsDateTime` checks it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotDateTime;

impl fmt::Display for NotDateTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "must be an RFC 3339 date-time: a date, 'T', a time with seconds and an offset (Z or +HH:MM), e.g. \
             {DATE_TIME_EXAMPLE}"
        )
    }
}

impl std::error::Error for NotDateTime {}

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

/// Reads `spec.schedule.expiresAt` as the operator uses it: `Ok(Some(instant))`, or `Ok(None)` for an instant after
/// the last one the operator represents (jiff's `Timestamp::MAX`, 9999-12-30T22:00:00.999999999Z), which no clock
/// reaches, so the schedule never suspends. Fraction digits past the ninth are dropped (RFC 3339 allows any number;
/// Kubernetes times are nanoseconds). `t` and `z` read as `T` and `Z`, as the API server reads them. Deliberately
/// looser than the CRD's `pattern` ([`names::DATE_TIME_PATTERN`]): a `,` before the fraction and offsets of 24:00 to
/// 25:59, which objects stored before the pattern may hold, are read as they always were.
///
/// Errors: [`NotDateTime`] for a text the API server's `format: date-time` refuses ([`is_openapi_date_time`]), and
/// for the rare one it takes that no RFC 3339 parser reads (`x5` before the fraction, `+99:99`; the pattern refuses
/// both at `kubectl apply`).
pub fn parse_date_time(text: &str) -> Result<Option<Timestamp>, NotDateTime> {
    if !is_openapi_date_time(text) {
        return Err(NotDateTime);
    }
    let mut upper = text.to_ascii_uppercase();
    // After the format check, a '.' or ',' can only stand before the fraction, and the digits after it are ASCII.
    if let Some(mark) = upper.find(['.', ',']) {
        let digits = upper[mark + 1..]
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count();
        if digits > 9 {
            upper.replace_range(mark + 10..mark + 1 + digits, "");
        }
    }
    match upper.parse::<Timestamp>() {
        Ok(at) => Ok(Some(at)),
        // Every field of a text of the pattern is in range: only an instant past `Timestamp::MAX` fails.
        Err(_) if patterns::is_match(names::DATE_TIME_PATTERN, text) == Some(true) => Ok(None),
        Err(_) => Err(NotDateTime),
    }
}

/// Checks `text` against a schema `format` as the API server does (`date-time`: [`is_openapi_date_time`]; the CRD's
/// `pattern` beside it refuses the rest the operator could not read); `Ok` for formats that are not checked (see the
/// module doc). Errors: the rule broken, in words that end with an example to write instead.
pub fn check(format: &str, text: &str) -> Result<(), String> {
    match format {
        "date-time" if !is_openapi_date_time(text) => Err(NotDateTime.to_string()),
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
        let at = |t: &str| t.parse::<Timestamp>().unwrap();
        for text in [
            "2026-12-31T18:00:00Z",
            "2026-12-31t18:00:00z",
            "2026-12-31T19:00:00+01:00",
            "2026-12-31T18:00:00.000000000000Z",
        ] {
            assert_eq!(
                parse_date_time(text),
                Ok(Some(at("2026-12-31T18:00:00Z"))),
                "{text:?}"
            );
        }
        assert_eq!(
            parse_date_time("2026-12-31T18:00:00.1234567891Z"),
            Ok(Some(at("2026-12-31T18:00:00.123456789Z"))),
            "past nine fraction digits, dropped"
        );
        for never in ["9999-12-31T18:00:00Z", "9999-12-31T00:00:00+01:00"] {
            assert_eq!(
                parse_date_time(never),
                Ok(None),
                "{never:?}: after Timestamp::MAX"
            );
        }
        assert_eq!(
            parse_date_time("9999-12-30T18:00:00Z"),
            Ok(Some(at("9999-12-30T18:00:00Z")))
        );
        let refused = check("date-time", "tomorrow").unwrap_err();
        assert!(
            refused.contains("RFC 3339") && refused.ends_with(DATE_TIME_EXAMPLE),
            "{refused}"
        );
        // The API server's format takes these; no parser reads them, and the CRD's pattern now refuses them.
        for text in [
            "2026-12-31T18:00:00+99:99",
            "2026-12-31T18:00:00x5Z",
            "2026-12-31T18:00:00ZT",
        ] {
            assert_eq!(
                check("date-time", text),
                Ok(()),
                "{text:?}: the format alone"
            );
            assert_eq!(
                patterns::is_match(names::DATE_TIME_PATTERN, text),
                Some(false),
                "{text:?}"
            );
            assert_eq!(parse_date_time(text), Err(NotDateTime), "{text:?}");
        }
        // Read as always for an object stored before the pattern (a reviewer's finding), refused at `kubectl apply`
        // from now on.
        for (text, at_utc) in [
            ("2026-12-31T18:00:00,5Z", "2026-12-31T18:00:00.5Z"),
            ("2026-12-31T18:00:00+24:00", "2026-12-30T18:00:00Z"),
            (
                "2026-12-31T18:00:00,1234567891Z",
                "2026-12-31T18:00:00.123456789Z",
            ),
        ] {
            assert_eq!(parse_date_time(text), Ok(Some(at(at_utc))), "{text:?}");
            assert_eq!(
                patterns::is_match(names::DATE_TIME_PATTERN, text),
                Some(false),
                "{text:?}"
            );
        }
        assert_eq!(check("int32", "x"), Ok(()));
    }
}
