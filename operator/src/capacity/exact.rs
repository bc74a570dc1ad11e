//! Exact non-negative rationals for the fit budget: no floats, so class boundaries never drift
//! (case O-10). Values are `numer / denom` in `i128`; inputs are bounded by the CRD schema
//! (at most 65536 GiB per module, at most 32 modules), far from overflow.

use std::cmp::Ordering;
use std::fmt;

/// An exact rational number `numer / denom` with `denom > 0`, kept in lowest terms.
#[derive(Clone, Copy, Debug)]
pub struct Exact {
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

impl Exact {
    /// Zero.
    pub const ZERO: Exact = Exact { numer: 0, denom: 1 };

    /// `numer / denom`. Panics when `denom` is 0 (never reachable from validated input).
    pub fn new(numer: i128, denom: i128) -> Exact {
        assert!(denom != 0, "denominator must not be zero");
        let sign = if denom < 0 { -1 } else { 1 };
        let g = gcd(numer, denom);
        Exact {
            numer: sign * numer / g,
            denom: sign * denom / g,
        }
    }

    /// A whole number.
    pub fn int(n: i128) -> Exact {
        Exact::new(n, 1)
    }

    /// Parses a JSON number literal (`54`, `13.5`, `1e3`, `2.5E-1`) exactly. `None` for anything
    /// else, for negatives, and for more than 18 decimal places.
    pub fn parse(text: &str) -> Option<Exact> {
        let text = text.trim();
        let (mantissa, exponent) = match text.find(['e', 'E']) {
            Some(i) => (&text[..i], text[i + 1..].parse::<i32>().ok()?),
            None => (text, 0),
        };
        let (whole, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        if whole.is_empty() && frac.is_empty() {
            return None;
        }
        if !whole
            .chars()
            .chain(frac.chars())
            .all(|c| c.is_ascii_digit())
        {
            return None;
        }
        let digits: i128 = format!("{whole}{frac}").parse().ok()?;
        let scale = exponent - i32::try_from(frac.len()).ok()?;
        if scale >= 0 {
            Some(Exact::int(
                digits.checked_mul(10i128.checked_pow(scale.unsigned_abs())?)?,
            ))
        } else if scale >= -18 {
            Some(Exact::new(digits, 10i128.pow(scale.unsigned_abs())))
        } else {
            None
        }
    }

    /// Reads a `serde_json::Number` exactly (integers directly; floats through their shortest
    /// round-trip text, which is the literal the user wrote).
    pub fn from_json(n: &serde_json::Number) -> Option<Exact> {
        if let Some(u) = n.as_u64() {
            return Some(Exact::int(i128::from(u)));
        }
        Exact::parse(&n.to_string())
    }

    /// Sum.
    pub fn plus(self, other: Exact) -> Exact {
        Exact::new(
            self.numer * other.denom + other.numer * self.denom,
            self.denom * other.denom,
        )
    }

    /// Product.
    pub fn times(self, other: Exact) -> Exact {
        Exact::new(self.numer * other.numer, self.denom * other.denom)
    }

    /// Quotient; `None` when dividing by zero.
    pub fn over(self, other: Exact) -> Option<Exact> {
        (other.numer != 0).then(|| Exact::new(self.numer * other.denom, self.denom * other.numer))
    }

    /// Smallest integer not below the value.
    pub fn ceil(self) -> i128 {
        let q = self.numer.div_euclid(self.denom);
        if self.numer.rem_euclid(self.denom) == 0 {
            q
        } else {
            q + 1
        }
    }

    /// Numerator in lowest terms.
    pub fn numer(self) -> i128 {
        self.numer
    }

    /// Denominator in lowest terms (always positive).
    pub fn denom(self) -> i128 {
        self.denom
    }
}

impl PartialEq for Exact {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Exact {}

impl PartialOrd for Exact {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Exact {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.numer * other.denom).cmp(&(other.numer * self.denom))
    }
}

impl fmt::Display for Exact {
    /// Decimal text: exact when the expansion ends within 4 places (`50.6`), else rounded up at
    /// 4 places and marked with a trailing `...`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scaled = Exact::new(self.numer * 10_000, self.denom);
        let ceil = scaled.ceil();
        let exact = scaled.numer().rem_euclid(scaled.denom()) == 0;
        let (whole, frac) = (ceil / 10_000, ceil % 10_000);
        let mut frac_text = format!("{frac:04}");
        while frac_text.ends_with('0') {
            frac_text.pop();
        }
        if frac_text.is_empty() {
            write!(f, "{whole}")?;
        } else {
            write!(f, "{whole}.{frac_text}")?;
        }
        if !exact {
            write!(f, "...")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_json_literals_exactly() {
        assert_eq!(Exact::parse("13.5"), Some(Exact::new(27, 2)));
        assert_eq!(Exact::parse("0.1"), Some(Exact::new(1, 10)));
        assert_eq!(Exact::parse("1e3"), Some(Exact::int(1000)));
        assert_eq!(Exact::parse("25E-1"), Some(Exact::new(5, 2)));
        assert_eq!(Exact::parse("-1"), None);
        assert_eq!(Exact::parse("abc"), None);
        let n: serde_json::Number = serde_json::from_str("53.9").unwrap();
        assert_eq!(Exact::from_json(&n), Some(Exact::new(539, 10)));
    }

    #[test]
    fn displays_and_rounds() {
        assert_eq!(Exact::new(506, 10).to_string(), "50.6");
        assert_eq!(Exact::int(54).to_string(), "54");
        assert_eq!(Exact::new(1, 3).to_string(), "0.3334...");
        assert_eq!(Exact::new(506, 10).ceil(), 51);
        assert_eq!(Exact::int(51).ceil(), 51);
    }
}
