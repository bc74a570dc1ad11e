//! Exact decimal numbers for cty's arbitrary-precision `number` type.

use std::fmt;

/// Largest decimal exponent accepted when parsing (`1e10000`); beyond it the digits would not fit
/// in memory sensibly, and no Terraform configuration needs it.
const MAX_EXPONENT: i64 = 4096;

/// An exact decimal number in canonical text form: an optional `-`, integer digits without leading
/// zeros, and a fraction without trailing zeros (`0`, `-12.5`, `100000000000000000000001`).
/// Canonical form makes `1`, `1.0` and `1e0` equal with derived `PartialEq`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Number(String);

impl Number {
    /// Parses decimal text: `[+-]digits[.digits][(e|E)[+-]digits]`, as JSON, Go's `big.Float` text
    /// and HCL write it. Returns `None` for anything else (including `NaN`/`Inf`) and for exponents
    /// above 4096 in magnitude.
    pub fn parse(text: &str) -> Option<Number> {
        let bytes = text.as_bytes();
        let mut i = 0;
        let negative = match bytes.first() {
            Some(b'-') => {
                i += 1;
                true
            }
            Some(b'+') => {
                i += 1;
                false
            }
            _ => false,
        };
        let int_start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        let int_digits = &text[int_start..i];
        let mut frac_digits = "";
        if i < bytes.len() && bytes[i] == b'.' {
            i += 1;
            let start = i;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            frac_digits = &text[start..i];
        }
        if int_digits.is_empty() && frac_digits.is_empty() {
            return None;
        }
        let mut exponent: i64 = 0;
        if i < bytes.len() && (bytes[i] == b'e' || bytes[i] == b'E') {
            i += 1;
            let exp_text = &text[i..];
            if exp_text.is_empty()
                || !exp_text
                    .trim_start_matches(['+', '-'])
                    .bytes()
                    .all(|b| b.is_ascii_digit())
            {
                return None;
            }
            exponent = exp_text.parse::<i64>().ok()?;
            if exponent.abs() > MAX_EXPONENT {
                return None;
            }
            i = bytes.len();
        }
        if i != bytes.len() {
            return None;
        }
        Some(Self::from_parts(
            negative,
            int_digits,
            frac_digits,
            exponent,
        ))
    }

    /// Builds the canonical form of `±int_digits.frac_digits × 10^exponent`.
    fn from_parts(negative: bool, int_digits: &str, frac_digits: &str, exponent: i64) -> Number {
        let mut digits: String = format!("{int_digits}{frac_digits}");
        // Position of the decimal point within `digits`.
        let mut point = int_digits.len() as i64 + exponent;
        if point < 0 {
            digits = "0".repeat(point.unsigned_abs() as usize) + &digits;
            point = 0;
        }
        let point = point as usize;
        if point > digits.len() {
            digits.push_str(&"0".repeat(point - digits.len()));
        }
        let (int_part, frac_part) = digits.split_at(point);
        let int_part = int_part.trim_start_matches('0');
        let frac_part = frac_part.trim_end_matches('0');
        let int_part = if int_part.is_empty() { "0" } else { int_part };
        let is_zero = int_part == "0" && frac_part.is_empty();
        let mut out = String::new();
        if negative && !is_zero {
            out.push('-');
        }
        out.push_str(int_part);
        if !frac_part.is_empty() {
            out.push('.');
            out.push_str(frac_part);
        }
        Number(out)
    }

    /// The canonical decimal text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The value as `i64` when it is an integer in range.
    pub fn as_i64(&self) -> Option<i64> {
        self.0.parse().ok()
    }

    /// The value as `u64` when it is a non-negative integer in range.
    pub fn as_u64(&self) -> Option<u64> {
        self.0.parse().ok()
    }

    /// The value as `f64` when that is exact (formatting the float gives back the same number).
    pub fn as_exact_f64(&self) -> Option<f64> {
        let float: f64 = self.0.parse().ok()?;
        (float.is_finite() && Number::from_f64(float).as_ref() == Some(self)).then_some(float)
    }

    /// The nearest `f64` (round half to even, as Go's `big.Float.Float64` and Terraform's plugin framework do for
    /// Float64 attributes), `None` when the magnitude is beyond `f64`'s range.
    pub fn nearest_f64(&self) -> Option<f64> {
        self.0.parse::<f64>().ok().filter(|f| f.is_finite())
    }

    /// The exact value of a finite float (`None` for NaN and infinities).
    pub fn from_f64(float: f64) -> Option<Number> {
        // Rust's `Display` for f64 prints the shortest text that round-trips, never with an
        // exponent, so it parses back to exactly this float.
        float
            .is_finite()
            .then(|| Number::parse(&format!("{float}")))?
    }
}

impl From<i64> for Number {
    fn from(value: i64) -> Self {
        Number(value.to_string())
    }
}

impl From<u64> for Number {
    fn from(value: u64) -> Self {
        Number(value.to_string())
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_forms() {
        let cases = [
            ("0", "0"),
            ("-0", "0"),
            ("+7", "7"),
            ("007", "7"),
            ("1.50", "1.5"),
            ("1e3", "1000"),
            ("1.25E-2", "0.0125"),
            (".5", "0.5"),
            ("5.", "5"),
            ("-0.000", "0"),
            (
                "123456789012345678901234567890.000000000000000000001",
                "123456789012345678901234567890.000000000000000000001",
            ),
        ];
        for (input, want) in cases {
            assert_eq!(
                Number::parse(input).map(|n| n.0),
                Some(want.to_string()),
                "{input}"
            );
        }
    }

    #[test]
    fn rejects_garbage() {
        for input in [
            "", "-", ".", "e5", "1e", "1e+", "NaN", "inf", "1.2.3", "1x", " 1", "1e99999",
        ] {
            assert_eq!(Number::parse(input), None, "{input:?}");
        }
    }

    #[test]
    fn floats_are_exact() {
        assert_eq!(Number::from_f64(0.1).unwrap().as_str(), "0.1");
        assert_eq!(
            Number::from_f64(1e21).unwrap().as_str(),
            "1000000000000000000000"
        );
        assert_eq!(Number::from_f64(f64::NAN), None);
        assert_eq!(Number::parse("0.1").unwrap().as_exact_f64(), Some(0.1));
        assert_eq!(
            Number::parse("0.10000000000000000000001")
                .unwrap()
                .as_exact_f64(),
            None
        );
        // Terraform's 0.1 + 0.2 (exact at 512 bits) rounds to the f64 nearest 0.3, as the plugin framework does.
        let sum = Number::parse(
            "0.3000000000000000000000000000000000000000000000000000000000000000000000000001",
        )
        .unwrap();
        assert_eq!(sum.nearest_f64(), Some(0.3));
        assert_eq!(Number::parse("1e400").unwrap().nearest_f64(), None);
    }
}
