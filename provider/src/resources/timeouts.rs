//! The `timeouts {}` block and Go-style duration strings (`30s`, `5m`, `1h30m`).

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
            &format!("How long to wait for {what}, e.g. `30s`, `5m`, `1h30m`."),
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

/// Parses `1h30m`, `45s`, `500ms`, `2m0s`: one or more number+unit pairs (`ms`, `s`, `m`, `h`).
pub fn parse_duration(text: &str) -> Option<Duration> {
    let mut total = Duration::ZERO;
    let mut rest = text.trim();
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        let amount: u64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let (unit, len) = if rest.starts_with("ms") {
            (Duration::from_millis(1), 2)
        } else if rest.starts_with('s') {
            (Duration::from_secs(1), 1)
        } else if rest.starts_with('m') {
            (Duration::from_secs(60), 1)
        } else if rest.starts_with('h') {
            (Duration::from_secs(3600), 1)
        } else {
            return None;
        };
        rest = &rest[len..];
        total = total.checked_add(unit.checked_mul(u32::try_from(amount).ok()?)?)?;
    }
    Some(total)
}

/// Validates the durations in a resource's `timeouts` block.
pub fn validate(resource: &Value) -> Diagnostics {
    let mut diags = Diagnostics::new();
    let Some(Value::Object(timeouts)) = resource.get("timeouts") else {
        return diags;
    };
    for (name, value) in timeouts {
        if let Value::String(text) = value
            && parse_duration(text).is_none()
        {
            diags.push_error(
                Some(AttrPath::attrs(&["timeouts", name])),
                "Invalid duration",
                format!("{text:?} is not a duration such as 30s, 5m or 1h30m."),
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
        .and_then(parse_duration)
        .unwrap_or(default)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30s"), Some(Duration::from_secs(30)));
        assert_eq!(parse_duration("1h30m"), Some(Duration::from_secs(5400)));
        assert_eq!(parse_duration("2m0s"), Some(Duration::from_secs(120)));
        assert_eq!(parse_duration("250ms"), Some(Duration::from_millis(250)));
        for bad in ["", "5", "m", "5x", "-5s", "1.5s"] {
            assert_eq!(parse_duration(bad), None, "{bad}");
        }
    }
}
