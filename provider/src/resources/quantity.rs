//! Kubernetes resource quantities (`500m`, `0.5`, `1.5Gi`, `1e3`) compared by value, so a
//! semantically equal quantity written differently outside Terraform shows no diff (case P-01).
//!
//! Grammar (the `Quantity` description in the CRD, from `k8s.io/apimachinery`): an optional sign,
//! a decimal number (`1`, `1.5`, `.5`, `5.`) and a suffix: binary `Ki`..`Ei` (powers of 1024),
//! decimal `n`, `u`, `m`, ``, `k`, `M`, `G`, `T`, `P`, `E` (powers of 1000), or a decimal
//! exponent `e<n>` / `E<n>`. Values are exact rationals in `i128` (no floats); anything that
//! overflows or does not parse is `None` and then only compares equal as identical text.
//!
//! [`keep_written`] walks a state value along the CRD's OpenAPI schema and keeps the prior
//! (user-written) text of every `int-or-string` leaf whose new value is equal by value.

use serde_json::Value as Json;

use super::fields::snake_case;
use crate::value::Value;

/// An exact quantity `numer / denom` in lowest terms (`denom > 0`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quantity {
    numer: i128,
    denom: i128,
}

fn gcd(mut a: i128, mut b: i128) -> i128 {
    a = a.abs();
    b = b.abs();
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.max(1)
}

impl Quantity {
    fn new(numer: i128, denom: i128) -> Quantity {
        let g = gcd(numer, denom);
        Quantity {
            numer: numer / g,
            denom: denom / g,
        }
    }

    /// Parses a quantity; `None` for malformed text or values beyond `i128` arithmetic.
    pub fn parse(text: &str) -> Option<Quantity> {
        let (negative, rest) = match text.strip_prefix('-') {
            Some(r) => (true, r),
            None => (false, text.strip_prefix('+').unwrap_or(text)),
        };
        let number_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (number, suffix) = rest.split_at(number_len);
        let (whole, frac) = number.split_once('.').unwrap_or((number, ""));
        if (whole.is_empty() && frac.is_empty()) || frac.contains('.') || frac.len() > 30 {
            return None;
        }
        let digits: i128 = format!("{whole}{frac}").parse().ok()?;
        let mut numer = if negative { -digits } else { digits };
        let mut denom = 10i128.checked_pow(u32::try_from(frac.len()).ok()?)?;
        let (base, power): (i128, i32) = match suffix {
            "" => (10, 0),
            "Ki" => (2, 10),
            "Mi" => (2, 20),
            "Gi" => (2, 30),
            "Ti" => (2, 40),
            "Pi" => (2, 50),
            "Ei" => (2, 60),
            "n" => (10, -9),
            "u" => (10, -6),
            "m" => (10, -3),
            "k" => (10, 3),
            "M" => (10, 6),
            "G" => (10, 9),
            "T" => (10, 12),
            "P" => (10, 15),
            "E" => (10, 18),
            exp if exp.starts_with(['e', 'E']) => {
                let n: i32 = exp[1..].parse().ok()?;
                (10, n)
            }
            _ => return None,
        };
        let factor = base.checked_pow(power.unsigned_abs())?;
        if power >= 0 {
            numer = numer.checked_mul(factor)?;
        } else {
            denom = denom.checked_mul(factor)?;
        }
        Some(Quantity::new(numer, denom))
    }
}

/// Whether two quantity texts mean the same amount (`0.5` and `500m`, `1.5Gi` and `1536Mi`).
/// Texts that do not parse are equal only when identical.
pub fn same_amount(a: &str, b: &str) -> bool {
    a == b
        || matches!(
            (Quantity::parse(a), Quantity::parse(b)),
            (Some(x), Some(y)) if x == y
        )
}

/// Replaces, in `new`, every `int-or-string` leaf (per the OpenAPI `schema` the value was derived
/// from, Terraform names in snake_case) that is the same amount as the leaf at the same place in
/// `prior` with the prior text. `prior` is the state as the user wrote it; `new` is what the
/// cluster holds.
pub fn keep_written(schema: &Json, prior: &Value, new: &mut Value) {
    if schema.get("x-kubernetes-int-or-string") == Some(&Json::Bool(true)) {
        if let (Value::String(before), Value::String(now)) = (prior, &*new)
            && before != now
            && same_amount(before, now)
        {
            *new = prior.clone();
        }
        return;
    }
    if let Some(properties) = schema.get("properties").and_then(Json::as_object) {
        if let (Value::Object(before), Value::Object(now)) = (prior, new) {
            for (json_name, sub) in properties {
                let tf_name = snake_case(json_name);
                if let (Some(b), Some(n)) = (before.get(&tf_name), now.get_mut(&tf_name)) {
                    keep_written(sub, b, n);
                }
            }
        }
        return;
    }
    if let Some(items) = schema.get("items") {
        if let (Value::List(before), Value::List(now)) = (prior, new) {
            for (b, n) in before.iter().zip(now.iter_mut()) {
                keep_written(items, b, n);
            }
        }
        return;
    }
    if let Some(values) = schema.get("additionalProperties")
        && let (Value::Map(before), Value::Map(now)) = (prior, new)
    {
        for (key, n) in now.iter_mut() {
            if let Some(b) = before.get(key) {
                keep_written(values, b, n);
            }
        }
    }
}

/// Whether `a` and `b` (values of the spec attributes `spec_schema` describes, at the resource's
/// top level) are equal once quantities are compared by amount.
pub fn spec_equal(spec_schema: &Json, a: &Value, b: &Value) -> bool {
    let mut b = b.clone();
    keep_written(spec_schema, a, &mut b);
    let Some(properties) = spec_schema.get("properties").and_then(Json::as_object) else {
        return true;
    };
    properties.keys().map(|k| snake_case(k)).all(|name| {
        let empty = |v: Option<&Value>| match v {
            None | Some(Value::Null) => true,
            Some(Value::List(l)) => l.is_empty(),
            Some(Value::Map(m)) => m.is_empty(),
            _ => false,
        };
        let (x, y) = (a.get(&name), b.get(&name));
        x == y || (empty(x) && empty(y))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_amounts() {
        for (a, b) in [
            ("0.5", "500m"),
            ("1.5Gi", "1536Mi"),
            ("1000", "1k"),
            ("1e3", "1k"),
            ("1E3", "1000"),
            (".5", "0.5"),
            ("2", "2000m"),
            ("1Ki", "1024"),
            ("+1", "1"),
            ("1E", "1000P"),
            ("100u", "100000n"),
        ] {
            assert!(same_amount(a, b), "{a} == {b}");
        }
    }

    #[test]
    fn different_amounts() {
        for (a, b) in [
            ("0.5", "600m"),
            ("1Gi", "1G"),
            ("1k", "1Ki"),
            ("-1", "1"),
            ("abc", "abd"),
            ("1x", "1"),
        ] {
            assert!(!same_amount(a, b), "{a} != {b}");
        }
        assert!(same_amount("abc", "abc"));
        assert_eq!(Quantity::parse("1.2.3"), None);
        assert_eq!(Quantity::parse(""), None);
        assert_eq!(Quantity::parse("1e999"), None);
    }

    fn schema() -> Json {
        serde_json::json!({"type": "object", "properties": {
            "image": {"type": "string"},
            "container": {"type": "object", "properties": {
                "resources": {"type": "object", "properties": {
                    "requests": {"type": "object", "additionalProperties": {"x-kubernetes-int-or-string": true}}
                }}
            }},
            "volumes": {"type": "array", "items": {"type": "object", "properties": {
                "sizeLimit": {"x-kubernetes-int-or-string": true}}}}
        }})
    }

    fn state(cpu: &str, size: &str, image: &str) -> Value {
        let requests = Value::Map([("cpu".to_string(), Value::string(cpu))].into());
        let resources = Value::Object([("requests".to_string(), requests)].into());
        let container = Value::Object([("resources".to_string(), resources)].into());
        let volume = Value::Object([("size_limit".to_string(), Value::string(size))].into());
        Value::Object(
            [
                ("image".to_string(), Value::string(image)),
                ("container".to_string(), container),
                ("volumes".to_string(), Value::List(vec![volume])),
            ]
            .into(),
        )
    }

    #[test]
    fn keeps_the_written_form_of_equal_quantities_only() {
        let prior = state("0.5", "1Gi", "a");
        let mut read = state("500m", "1024Mi", "a");
        keep_written(&schema(), &prior, &mut read);
        assert_eq!(read, prior);
        let mut changed = state("600m", "1024Mi", "a");
        keep_written(&schema(), &prior, &mut changed);
        assert_eq!(changed, state("600m", "1Gi", "a"));
        // Only int-or-string leaves are compared by amount.
        let prior = state("1", "1Gi", "1");
        let mut read = state("1", "1Gi", "1.0");
        keep_written(&schema(), &prior, &mut read);
        assert_eq!(read, state("1", "1Gi", "1.0"));
    }

    #[test]
    fn spec_equality_by_amount() {
        assert!(spec_equal(
            &schema(),
            &state("0.5", "1Gi", "a"),
            &state("500m", "1Gi", "a")
        ));
        assert!(!spec_equal(
            &schema(),
            &state("0.5", "1Gi", "a"),
            &state("0.5", "1Gi", "b")
        ));
    }
}
