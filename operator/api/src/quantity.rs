//! Kubernetes resource quantities (`500m`, `0.5`, `1.5Gi`, `1e3`) as exact values ([`Exact`]): the one
//! implementation behind the operator's "does the live child still match" check, the provider's plan (case P-01:
//! a semantically equal quantity written differently shows no diff) and the schema check of every quantity field.
//!
//! Grammar: the `Quantity` of `k8s.io/apimachinery` (`pkg/api/resource/quantity.go`, `ParseQuantity` and
//! `parseQuantityString`, v0.35.4), as the API server applies it when it decodes a rendered Deployment or Job:
//! `<sign><number><suffix>` where the sign is optional `+` or `-`, the number is digits with at most one `.`
//! (`1`, `1.5`, `.5`, `5.`; never an exponent of its own) and the suffix is exactly one of: a binary SI suffix
//! `Ki`..`Ei` (powers of 1024), a decimal SI suffix `n`, `u`, `m`, (none), `k`, `M`, `G`, `T`, `P`, `E` (powers of
//! 1000), or a decimal exponent `e<n>` / `E<n>` (`<n>` a signed 64-bit integer). So `1e3` is a quantity and `1e3m`
//! is not. Leading and trailing whitespace is ignored, as `Quantity.UnmarshalJSON` trims it. Kubernetes' quirks are
//! kept so that nothing the cluster takes is refused here: the number may have no digits at all (`+`, `.`, `m`,
//! `Ki` mean 0), except before an exponent below `e-10`, which Kubernetes refuses ("unable to parse numeric part").
//!
//! Amounts round as Kubernetes stores them: a non-zero amount rounds away from zero to a whole number of nano units
//! (`1.5n` is `2n`). Kubernetes caps binary amounts at 2^63-1; here amounts beyond `i128` arithmetic have no value.

use std::fmt;

use crate::exact::Exact;

/// The SI suffixes and their factors as `(suffix, base, power)`: the amount is `number x base^power`.
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
    ("", 10, 0),
    ("k", 10, 3),
    ("M", 10, 6),
    ("G", 10, 9),
    ("T", 10, 12),
    ("P", 10, 15),
    ("E", 10, 18),
];

/// The suffix characters Kubernetes scans before an exponent's sign and digits (`parseQuantityString`).
const SUFFIX_CHARS: &[u8] = b"eEinumkKMGTP";

/// Why a text is not a Kubernetes quantity; its `Display` names the rule broken.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum QuantityError {
    /// Empty (or only whitespace).
    Empty,
    /// Not `<sign><number><suffix>`: a character out of place, a second `.`, or a suffix after an exponent (`1e3m`).
    /// Kubernetes: "quantities must match the regular expression ...".
    Format(String),
    /// The part after the number is no known suffix (`1K`, `1Mi3`). Kubernetes: "unable to parse quantity's suffix".
    Suffix(String),
    /// A number without digits before an exponent below `e-9` (`e-12`). Kubernetes: "unable to parse numeric part
    /// of quantity".
    Numeric(String),
}

impl fmt::Display for QuantityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const SUFFIX_RULE: &str = "one suffix: Ki, Mi, Gi, Ti, Pi, Ei (powers of 1024), n, u, m, k, M, G, T, P, E \
                                   (powers of 1000) or a decimal exponent e<n>, never an exponent and a suffix \
                                   together";
        match self {
            QuantityError::Empty => write!(f, "a quantity must not be empty"),
            QuantityError::Format(text) => write!(
                f,
                "{text:?} is not <sign><number><suffix>: the number is digits with at most one '.' and no \
                 exponent of its own, followed by at most {SUFFIX_RULE}"
            ),
            QuantityError::Suffix(suffix) => {
                write!(f, "unknown suffix {suffix:?}: use at most {SUFFIX_RULE}")
            }
            QuantityError::Numeric(text) => write!(
                f,
                "{text:?} has no digits before its exponent: write a number such as 1{}",
                text.trim_start_matches(['+', '-', '.'])
            ),
        }
    }
}

impl std::error::Error for QuantityError {}

/// Whether `text` is a quantity below zero: a `-` before a number with a non-zero digit (`-1`, `-1e99999`,
/// `-0.0000000000000000001`), as Kubernetes reads the sign, also where [`parse`] has no exact value. `false` for
/// text that is not a quantity ([`check`]) and for a negative zero (`-0`, `-`).
pub fn is_negative(text: &str) -> bool {
    split(text)
        .is_ok_and(|p| p.negative && p.whole.bytes().chain(p.frac.bytes()).any(|b| b != b'0'))
}

/// A quantity split into its parts: sign, the number's whole and fraction digits, and the factor `base^power`.
struct Parts<'a> {
    negative: bool,
    whole: &'a str,
    frac: &'a str,
    base: i128,
    power: i64,
}

/// Splits `text` as Kubernetes' `parseQuantityString` and `ParseQuantity` do; errors as [`QuantityError`].
fn split(text: &str) -> Result<Parts<'_>, QuantityError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(QuantityError::Empty);
    }
    let (negative, rest) = match text.as_bytes()[0] {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let digits = |s: &str| s.bytes().take_while(u8::is_ascii_digit).count();
    let (whole, rest) = rest.split_at(digits(rest));
    let (frac, suffix) = match rest.strip_prefix('.') {
        Some(after) => after.split_at(digits(after)),
        None => ("", rest),
    };
    let letters = suffix
        .bytes()
        .take_while(|b| SUFFIX_CHARS.contains(b))
        .count();
    let tail = &suffix[letters..];
    let tail = tail.strip_prefix(['+', '-']).unwrap_or(tail);
    if !tail.bytes().all(|b| b.is_ascii_digit()) {
        return Err(QuantityError::Format(text.to_string()));
    }
    let (base, power) =
        if let Some((_, base, power)) = SUFFIXES.iter().find(|(s, _, _)| *s == suffix) {
            (*base, i64::from(*power))
        } else {
            let exponent = suffix
                .strip_prefix(['e', 'E'])
                .filter(|n| !n.is_empty())
                .and_then(|n| n.parse::<i64>().ok())
                .ok_or_else(|| QuantityError::Suffix(suffix.to_string()))?;
            if exponent < -9 && whole.is_empty() && frac.is_empty() {
                return Err(QuantityError::Numeric(text.to_string()));
            }
            (10, exponent)
        };
    Ok(Parts {
        negative,
        whole,
        frac,
        base,
        power,
    })
}

/// Checks that `text` is a Kubernetes quantity, exactly as the API server decides (see the module doc). Errors:
/// [`QuantityError`], naming the rule broken.
pub fn check(text: &str) -> Result<(), QuantityError> {
    split(text).map(|_| ())
}

/// The amount of a quantity, rounded as Kubernetes stores it (away from zero to whole nano units); `None` for text
/// that is not a quantity ([`check`] says why), more than 18 fraction digits, or an amount beyond `i128` arithmetic.
pub fn parse(text: &str) -> Option<Exact> {
    let parts = split(text).ok()?;
    let sign = if parts.negative { "-" } else { "" };
    let number = if parts.whole.is_empty() && parts.frac.is_empty() {
        Exact::ZERO
    } else {
        // Digits only, so `parse_decimal` sees no exponent.
        Exact::parse_decimal(&format!("{sign}{}.{}", parts.whole, parts.frac))?
    };
    let factor = Exact::int(
        parts
            .base
            .checked_pow(u32::try_from(parts.power.unsigned_abs()).ok()?)?,
    );
    let amount = if parts.power >= 0 {
        number.checked_mul(factor)?
    } else {
        number.checked_div(factor)?
    };
    round_to_nano(amount)
}

/// Rounds away from zero to a whole number of nano units (`ParseQuantity`: `amount.Round(Nano, inf.RoundUp)`).
fn round_to_nano(amount: Exact) -> Option<Exact> {
    const NANO: i128 = 1_000_000_000;
    if NANO % amount.denom() == 0 {
        return Some(amount);
    }
    let scaled = amount.checked_mul(Exact::int(NANO))?;
    let units = if scaled >= Exact::ZERO {
        scaled.ceil()
    } else {
        -Exact::new(-scaled.numer(), scaled.denom()).ceil()
    };
    Some(Exact::new(units, NANO))
}

/// Whether two quantity texts mean the same amount (`0.5` and `500m`, `1.5Gi` and `1536Mi`). Texts that do not
/// parse are equal only when identical.
pub fn same_amount(a: &str, b: &str) -> bool {
    a == b || matches!((parse(a), parse(b)), (Some(x), Some(y)) if x == y)
}

#[cfg(test)]
mod tests;
