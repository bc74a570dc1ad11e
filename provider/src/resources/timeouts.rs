//! The `timeouts {}` block and Go-style duration strings (`30s`, `5m`, `1h30m`, `1.5h`: Go's `time.ParseDuration`).

use std::time::Duration;

use crate::diag::{AttrPath, Diagnostics};
use crate::schema::{Attribute, Block, NestedBlock, Nesting};
use crate::value::{Type, Value};

/// Default wait for a delete to finish.
pub const DEFAULT_DELETE: Duration = Duration::from_secs(300);

/// The `timeouts` nested block: optional `create`, `update`, `delete` durations.
pub fn block() -> NestedBlock {
    let attr = |name: &str, what: &str| {
        Attribute::optional(
            name,
            Type::String,
            &format!(
                "How long to wait for {what}, a Go duration, e.g. `30s`, `5m`, `1h30m`, `1.5h`."
            ),
        )
    };
    NestedBlock {
        type_name: "timeouts".into(),
        block: Block {
            attributes: vec![
                attr("create", "a create"),
                attr("update", "an update"),
                attr("delete", "a delete (finalizers) to finish"),
            ],
            blocks: vec![],
            description: "Operation timeouts.".into(),
        },
        nesting: Nesting::Single,
        min_items: 0,
        max_items: 0,
    }
}

/// Why a `timeouts` text is not a duration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    /// Not Go's duration syntax.
    #[error("is not a duration such as 30s, 5m, 1h30m or 1.5h")]
    Syntax,
    /// A negative duration (Go takes `-5m`; a wait cannot be negative).
    #[error("is negative: a wait takes a duration of 0s or more")]
    Negative,
    /// Longer than Go's largest duration (2^63-1 ns, about 292 years).
    #[error("is longer than the largest duration, 2562047h47m16.854775807s (about 292 years)")]
    TooLong,
}

/// Nanoseconds per unit of Go's `time.ParseDuration`.
const UNITS: &[(&str, u128)] = &[
    ("ns", 1),
    ("us", 1_000),
    ("\u{b5}s", 1_000),
    ("\u{3bc}s", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("m", 60_000_000_000),
    ("h", 3_600_000_000_000),
];

/// Parses a duration as Go's `time.ParseDuration` does (the syntax of every Terraform provider's `timeouts`): `0`,
/// or one or more decimal numbers, each with an optional fraction and a unit `ns`, `us` (`µs`), `ms`, `s`, `m`, `h`,
/// e.g. `30s`, `1h30m`, `1.5h`, `2m0s`, `250ms`. A leading `+` is allowed.
///
/// # Errors
/// [`DurationError::Syntax`] for anything else, [`DurationError::Negative`] for a `-` duration other than zero,
/// [`DurationError::TooLong`] beyond 2^63-1 ns (Go's limit).
pub fn parse_duration(text: &str) -> Result<Duration, DurationError> {
    let (negative, mut rest) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    if rest == "0" {
        return Ok(Duration::ZERO);
    }
    if rest.is_empty() {
        return Err(DurationError::Syntax);
    }
    let mut nanos: u128 = 0;
    while !rest.is_empty() {
        let whole_len = rest.bytes().take_while(u8::is_ascii_digit).count();
        let (whole, after) = rest.split_at(whole_len);
        let (fraction, after) = match after.strip_prefix('.') {
            Some(after) => after.split_at(after.bytes().take_while(u8::is_ascii_digit).count()),
            None => ("", after),
        };
        if whole.is_empty() && fraction.is_empty() {
            return Err(DurationError::Syntax);
        }
        let (unit, per_unit) = UNITS
            .iter()
            .filter(|(unit, _)| after.starts_with(unit))
            .max_by_key(|(unit, _)| unit.len())
            .ok_or(DurationError::Syntax)?;
        rest = &after[unit.len()..];
        let whole: u128 = if whole.is_empty() {
            0
        } else {
            whole.parse().map_err(|_| DurationError::TooLong)?
        };
        // The fraction, to the nanosecond: Go drops what lies below it too.
        let (digits, scale) = fraction
            .bytes()
            .take(18)
            .fold((0u128, 1u128), |(n, scale), b| {
                (n * 10 + u128::from(b - b'0'), scale * 10)
            });
        let part = whole
            .checked_mul(*per_unit)
            .and_then(|n| n.checked_add(digits * per_unit / scale))
            .ok_or(DurationError::TooLong)?;
        nanos = nanos.checked_add(part).ok_or(DurationError::TooLong)?;
    }
    let nanos = i64::try_from(nanos).map_err(|_| DurationError::TooLong)?;
    if negative && nanos > 0 {
        return Err(DurationError::Negative);
    }
    Ok(Duration::from_nanos(nanos.unsigned_abs()))
}

/// Validates the durations in a resource's `timeouts` block.
pub fn validate(resource: &Value) -> Diagnostics {
    let mut diags = Diagnostics::new();
    let Some(Value::Object(timeouts)) = resource.get("timeouts") else {
        return diags;
    };
    for (name, value) in timeouts {
        if let Value::String(text) = value
            && let Err(why) = parse_duration(text)
        {
            diags.push_error(
                Some(AttrPath::attrs(&["timeouts", name])),
                "Invalid duration",
                format!("{text:?} {why}."),
            );
        }
    }
    diags
}

/// The `name` timeout from a resource value, or `default`.
pub fn get(resource: &Value, name: &str, default: Duration) -> Duration {
    resource
        .get("timeouts")
        .and_then(|t| t.get(name))
        .and_then(Value::as_str)
        .and_then(|text| parse_duration(text).ok())
        .unwrap_or(default)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_as_go_parses_them() {
        for (text, nanos) in [
            ("30s", 30_000_000_000u64),
            ("1h30m", 5_400_000_000_000),
            ("2m0s", 120_000_000_000),
            ("250ms", 250_000_000),
            ("1.5h", 5_400_000_000_000),
            (".5s", 500_000_000),
            ("1.s", 1_000_000_000),
            ("0", 0),
            ("+5s", 5_000_000_000),
            ("-0s", 0),
            ("1us", 1_000),
            ("1\u{b5}s", 1_000),
            ("3ns", 3),
            ("1.0000000001s", 1_000_000_000),
            ("2562047h47m16.854775807s", i64::MAX as u64),
        ] {
            assert_eq!(
                parse_duration(text),
                Ok(Duration::from_nanos(nanos)),
                "{text}"
            );
        }
        for bad in ["", "5", "m", "5x", "1.5", ".s", "1 s", "1s ", "5S", "-"] {
            assert_eq!(parse_duration(bad), Err(DurationError::Syntax), "{bad:?}");
        }
        assert_eq!(parse_duration("-5s"), Err(DurationError::Negative));
        for long in [
            "2562047h47m16.854775808s",
            "9999999999h",
            "99999999999999999999999999999999999999999h",
        ] {
            assert_eq!(parse_duration(long), Err(DurationError::TooLong), "{long}");
        }
    }

    #[test]
    fn validate_says_what_is_wrong_on_the_attribute() {
        let resource = |text: &str| {
            Value::Object(
                [(
                    "timeouts".to_owned(),
                    Value::Object([("create".to_owned(), Value::string(text))].into()),
                )]
                .into(),
            )
        };
        assert!(validate(&resource("1.5h")).0.is_empty());
        let diags = validate(&resource("9999999999h"));
        assert_eq!(
            diags.0[0].path,
            Some(AttrPath::attrs(&["timeouts", "create"]))
        );
        assert!(
            diags.0[0]
                .detail
                .contains("longer than the largest duration"),
            "{diags:?}"
        );
        let diags = validate(&resource("5 minutes"));
        assert!(
            diags.0[0].detail.contains("is not a duration such as 30s"),
            "{diags:?}"
        );
    }
}
