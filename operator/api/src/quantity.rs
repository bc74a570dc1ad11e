//! Kubernetes resource quantities (`500m`, `0.5`, `1.5Gi`, `1e3`) as exact values ([`Exact`]): the one
//! implementation behind the operator's "does the live child still match" check and the provider's plan (case P-01:
//! a semantically equal quantity written differently shows no diff).
//!
//! Grammar (the `Quantity` type of `k8s.io/apimachinery`): an optional sign, a decimal number (`1`, `1.5`, `.5`,
//! `5.`) and a suffix: binary `Ki`..`Ei` (powers of 1024), decimal `n`, `u`, `m`, (none), `k`, `M`, `G`, `T`, `P`,
//! `E` (powers of 1000), or a decimal exponent `e<n>` / `E<n>`.

use crate::exact::Exact;

/// The suffixes and their factors as `(base, power)`: the amount is `number x base^power`.
const SUFFIXES: &[(&str, i128, i32)] = &[
    ("Ki", 2, 10),
    ("Mi", 2, 20),
    ("Gi", 2, 30),
    ("Ti", 2, 40),
    ("Pi", 2, 50),
    ("Ei", 2, 60),
    ("n", 10, -9),
    ("u", 10, -6),
    ("m", 10, -3),
    ("k", 10, 3),
    ("M", 10, 6),
    ("G", 10, 9),
    ("T", 10, 12),
    ("P", 10, 15),
    ("E", 10, 18),
];

/// The amount of a quantity; `None` for text that is not a quantity or overflows `i128` arithmetic.
pub fn parse(text: &str) -> Option<Exact> {
    let text = text.trim();
    // A decimal exponent (`1e3`) is part of the number; `E` alone is the exa suffix.
    if let Some(value) = Exact::parse_decimal(text) {
        return Some(value);
    }
    let (suffix, base, power) = SUFFIXES
        .iter()
        .copied()
        .find(|(suffix, _, _)| text.ends_with(suffix))?;
    let number = Exact::parse_decimal(&text[..text.len() - suffix.len()])?;
    let factor = Exact::int(base.checked_pow(power.unsigned_abs())?);
    if power >= 0 {
        number.checked_mul(factor)
    } else {
        number.checked_div(factor)
    }
}

/// Whether two quantity texts mean the same amount (`0.5` and `500m`, `1.5Gi` and `1536Mi`). Texts that do not
/// parse are equal only when identical.
pub fn same_amount(a: &str, b: &str) -> bool {
    a == b || matches!((parse(a), parse(b)), (Some(x), Some(y)) if x == y)
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
            ("1Gi", "1024Mi"),
        ] {
            assert!(same_amount(a, b), "{a} == {b}");
        }
    }

    #[test]
    fn different_amounts_and_non_quantities() {
        for (a, b) in [
            ("0.5", "600m"),
            ("1Gi", "1G"),
            ("1k", "1Ki"),
            ("-1", "1"),
            ("abc", "abd"),
            ("1x", "1"),
            ("vllm", "vllm2"),
        ] {
            assert!(!same_amount(a, b), "{a} != {b}");
        }
        assert!(same_amount("abc", "abc"));
        assert_eq!(parse("main"), None);
        assert_eq!(parse("1.2.3"), None);
        assert_eq!(parse(""), None);
        assert_eq!(parse("1e999"), None);
        assert_eq!(parse("128Mi"), Some(Exact::int(134_217_728)));
    }
}
