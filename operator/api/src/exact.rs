//! Exact rationals: the one number type behind Kubernetes quantities ([`crate::quantity`]) and the GPU fit budget
//! ([`crate::capacity`]). No floats, so class boundaries never drift (case O-10) and `0.5` equals `500m` exactly
//! (case P-01).
//!
//! Values are `numer / denom` in `i128`, kept in lowest terms. Parsing bounds the inputs (at most 18 fraction digits,
//! exponents that fit `i128`), and comparison never multiplies, so it cannot overflow whatever the operands.

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

/// Most fraction digits [`Exact::parse_decimal`] accepts (10^18 keeps sums and products of a few values in `i128`).
pub const MAX_FRACTION_DIGITS: usize = 18;

impl Exact {
    /// Zero.
    pub const ZERO: Exact = Exact { numer: 0, denom: 1 };

    /// `numer / denom`. Panics when `denom` is 0 (never reachable from parsed input).
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

    /// Parses an optionally signed decimal with an optional exponent (`54`, `-13.5`, `.5`, `5.`, `1e3`, `2.5E-1`):
    /// the number part of a Kubernetes quantity and every JSON number literal. `None` for anything else, more than
    /// [`MAX_FRACTION_DIGITS`] effective fraction digits, or values beyond `i128`.
    pub fn parse_decimal(text: &str) -> Option<Exact> {
        let (negative, rest) = match text.strip_prefix('-') {
            Some(r) => (true, r),
            None => (false, text.strip_prefix('+').unwrap_or(text)),
        };
        let (mantissa, exponent) = match rest.find(['e', 'E']) {
            Some(i) => (&rest[..i], rest[i + 1..].parse::<i32>().ok()?),
            None => (rest, 0),
        };
        let (whole, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let all_digits = whole
            .chars()
            .chain(frac.chars())
            .all(|c| c.is_ascii_digit());
        if (whole.is_empty() && frac.is_empty()) || !all_digits {
            return None;
        }
        let digits: i128 = format!("{whole}{frac}").parse().ok()?;
        let digits = if negative { -digits } else { digits };
        let scale = exponent.checked_sub(i32::try_from(frac.len()).ok()?)?;
        if scale >= 0 {
            Some(Exact::int(
                digits.checked_mul(10i128.checked_pow(scale.unsigned_abs())?)?,
            ))
        } else if scale.unsigned_abs() as usize <= MAX_FRACTION_DIGITS {
            Some(Exact::new(digits, 10i128.pow(scale.unsigned_abs())))
        } else {
            None
        }
    }

    /// Reads a non-negative `serde_json::Number` exactly (integers directly; floats through their shortest
    /// round-trip text, which is the literal the user wrote when it came from YAML or JSON). `None` for negatives.
    pub fn from_json(n: &serde_json::Number) -> Option<Exact> {
        if let Some(u) = n.as_u64() {
            return Some(Exact::int(i128::from(u)));
        }
        Exact::parse_decimal(&n.to_string()).filter(|e| *e >= Exact::ZERO)
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

    /// `self x factor` for an integer factor, `None` on `i128` overflow (quantity suffixes up to `Ei`).
    pub fn checked_scale(self, factor: i128) -> Option<Exact> {
        Some(Exact::new(self.numer.checked_mul(factor)?, self.denom))
    }

    /// `self / divisor` for a positive integer divisor, `None` on `i128` overflow (quantity suffixes down to `n`).
    pub fn checked_divide(self, divisor: i128) -> Option<Exact> {
        Some(Exact::new(self.numer, self.denom.checked_mul(divisor)?))
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
        // Lowest terms with a positive denominator: equal values have equal parts.
        self.numer == other.numer && self.denom == other.denom
    }
}

impl Eq for Exact {}

impl PartialOrd for Exact {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Exact {
    /// Compares `a/b` with `c/d` by their integer parts, then by the reciprocals of the remainders (Euclid's
    /// algorithm): exact, and no product that could overflow.
    fn cmp(&self, other: &Self) -> Ordering {
        compare(self.numer, self.denom, other.numer, other.denom)
    }
}

/// `a/b` against `c/d` with `b, d > 0`.
fn compare(a: i128, b: i128, c: i128, d: i128) -> Ordering {
    let (qa, ra) = (a.div_euclid(b), a.rem_euclid(b));
    let (qc, rc) = (c.div_euclid(d), c.rem_euclid(d));
    match qa.cmp(&qc) {
        Ordering::Equal => match (ra == 0, rc == 0) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            // ra/b < rc/d  <=>  d/rc < b/ra
            (false, false) => compare(d, rc, b, ra),
        },
        unequal => unequal,
    }
}

impl fmt::Display for Exact {
    /// Decimal text: exact when the expansion ends within 4 places (`50.6`), else rounded up at 4 places and marked
    /// with a trailing `...`.
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
    fn parses_decimals_exactly() {
        assert_eq!(Exact::parse_decimal("13.5"), Some(Exact::new(27, 2)));
        assert_eq!(Exact::parse_decimal("0.1"), Some(Exact::new(1, 10)));
        assert_eq!(Exact::parse_decimal("1e3"), Some(Exact::int(1000)));
        assert_eq!(Exact::parse_decimal("25E-1"), Some(Exact::new(5, 2)));
        assert_eq!(Exact::parse_decimal(".5"), Some(Exact::new(1, 2)));
        assert_eq!(Exact::parse_decimal("-1"), Some(Exact::int(-1)));
        assert_eq!(Exact::parse_decimal("abc"), None);
        assert_eq!(Exact::parse_decimal("1.2.3"), None);
        assert_eq!(Exact::parse_decimal(""), None);
        assert_eq!(Exact::parse_decimal("1e999"), None);
        assert_eq!(Exact::parse_decimal("1e-30"), None);
        let n: serde_json::Number = serde_json::from_str("53.9").unwrap();
        assert_eq!(Exact::from_json(&n), Some(Exact::new(539, 10)));
        let negative: serde_json::Number = serde_json::from_str("-0.5").unwrap();
        assert_eq!(Exact::from_json(&negative), None);
    }

    #[test]
    fn displays_and_rounds() {
        assert_eq!(Exact::new(506, 10).to_string(), "50.6");
        assert_eq!(Exact::int(54).to_string(), "54");
        assert_eq!(Exact::new(1, 3).to_string(), "0.3334...");
        assert_eq!(Exact::new(506, 10).ceil(), 51);
        assert_eq!(Exact::int(51).ceil(), 51);
    }

    #[test]
    fn compares_without_overflow() {
        let huge = Exact::new(i128::MAX - 1, i128::MAX);
        let other = Exact::new(i128::MAX - 2, i128::MAX - 1);
        assert_eq!(huge.cmp(&other), Ordering::Greater);
        assert!(Exact::new(-1, 3) < Exact::ZERO);
        assert!(Exact::new(1, 3) < Exact::new(1, 2));
        assert_eq!(Exact::new(2, 4).cmp(&Exact::new(1, 2)), Ordering::Equal);
    }
}
