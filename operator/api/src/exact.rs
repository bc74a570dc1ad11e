//! Exact rationals: the one number type behind Kubernetes quantities ([`crate::quantity`]) and the GPU fit budget
//! ([`crate::capacity`]). No floats, so class boundaries never drift (case O-10) and `0.5` equals `500m` exactly
//! (case P-01).
//!
//! Values are `numer / denom` in `i128`, kept in lowest terms. Parsing bounds the inputs (at most 18 fraction digits,
//! exponents that fit `i128`); arithmetic is checked (`None` on overflow, never a panic or a wrapped value), and
//! comparison and display never multiply, so they cannot overflow whatever the operands.

use std::cmp::Ordering;
use std::fmt;

/// An exact rational number `numer / denom` with `denom > 0`, kept in lowest terms.
#[derive(Clone, Copy, Debug)]
pub struct Exact {
    numer: i128,
    denom: i128,
}

/// Greatest common divisor of the magnitudes, at least 1 (so `gcd(0, 0)` divides safely). Neither may be `i128::MIN`.
fn gcd(a: i128, b: i128) -> i128 {
    let (mut a, mut b) = (a.abs(), b.abs());
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

    /// `numer / denom` in lowest terms. Panics when `denom` is 0 or either part is `i128::MIN` (whose magnitude
    /// `i128` cannot hold); arithmetic goes through [`Exact::reduced`] instead, which refuses them.
    pub fn new(numer: i128, denom: i128) -> Exact {
        Exact::reduced(numer, denom)
            .expect("denominator must not be zero and neither part may be i128::MIN")
    }

    /// `numer / denom` in lowest terms with a positive denominator; `None` when `denom` is 0 or either part is
    /// `i128::MIN`.
    fn reduced(numer: i128, denom: i128) -> Option<Exact> {
        if denom == 0 || numer == i128::MIN || denom == i128::MIN {
            return None;
        }
        let g = gcd(numer, denom);
        let sign = denom.signum();
        Some(Exact {
            numer: sign * (numer / g),
            denom: sign * (denom / g),
        })
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

    /// Sum; `None` when a step of it leaves `i128`. Adds over the least common denominator, so sums of values whose
    /// denominators share factors (decimals, GiB fractions) stay far from the bound; a sum whose cross terms
    /// overflow is refused even when its lowest terms would fit (terms of opposite sign near the bound).
    pub fn checked_add(self, other: Exact) -> Option<Exact> {
        let g = gcd(self.denom, other.denom);
        let (b, d) = (self.denom / g, other.denom / g);
        // a/(g b) + c/(g d) = (a d + c b) / (g b d)
        let numer = self
            .numer
            .checked_mul(d)?
            .checked_add(other.numer.checked_mul(b)?)?;
        Exact::reduced(numer, self.denom.checked_mul(d)?)
    }

    /// Product; `None` exactly when its lowest terms do not fit `i128`: common factors cancel crosswise first, so
    /// the parts multiplied are the result's own.
    pub fn checked_mul(self, other: Exact) -> Option<Exact> {
        let g1 = gcd(self.numer, other.denom);
        let g2 = gcd(other.numer, self.denom);
        Exact::reduced(
            (self.numer / g1).checked_mul(other.numer / g2)?,
            (self.denom / g2).checked_mul(other.denom / g1)?,
        )
    }

    /// Quotient; `None` when dividing by zero or when its lowest terms do not fit `i128`.
    pub fn checked_div(self, other: Exact) -> Option<Exact> {
        self.checked_mul(Exact::reduced(other.denom, other.numer)?)
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
    /// Decimal text: exact when the expansion ends within 4 places (`50.6`), else rounded away from zero at 4 places
    /// and marked with a trailing `...` (`0.3334...`, `-0.3334...`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.numer < 0 {
            // `numer` is never i128::MIN, so its negation fits.
            let magnitude = Exact {
                numer: -self.numer,
                denom: self.denom,
            };
            return write!(f, "-{magnitude}");
        }
        // Long division of the remainder, one digit at a time, so no step can overflow.
        let mut whole = self.numer / self.denom;
        let mut rem = self.numer % self.denom;
        let mut digits = [0u8; 4];
        for digit in &mut digits {
            (*digit, rem) = ten_times_divmod(rem, self.denom);
        }
        let exact = rem == 0;
        if !exact {
            // Round up at the last place, carrying into the whole part.
            let carried = digits.iter_mut().rev().all(|d| {
                *d = (*d + 1) % 10;
                *d == 0
            });
            if carried {
                whole += 1;
            }
        }
        let mut frac_text: String = digits.iter().map(|d| char::from(b'0' + d)).collect();
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

/// `(10 r) / d` and `(10 r) % d` for `0 <= r < d`, by ten modular additions (no product that could overflow).
fn ten_times_divmod(r: i128, d: i128) -> (u8, i128) {
    let (mut quotient, mut acc) = (0u8, 0i128);
    for _ in 0..10 {
        // acc + r, reduced mod d, without forming a sum that could exceed i128 (acc, r < d).
        if acc >= d - r {
            acc -= d - r;
            quotient += 1;
        } else {
            acc += r;
        }
    }
    (quotient, acc)
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
        assert_eq!(Exact::new(-1, 3).to_string(), "-0.3334...");
        assert_eq!(Exact::new(99_999, 100_000).to_string(), "1...");
        assert_eq!(Exact::new(-27, 2).to_string(), "-13.5");
        // Display never multiplies: the largest parts print without overflow.
        assert_eq!(Exact::int(i128::MAX).to_string(), i128::MAX.to_string());
        assert_eq!(Exact::new(i128::MAX - 1, i128::MAX).to_string(), "1...");
        assert_eq!(Exact::new(506, 10).ceil(), 51);
        assert_eq!(Exact::int(51).ceil(), 51);
    }

    #[test]
    fn arithmetic_is_exact() {
        let (half, third) = (Exact::new(1, 2), Exact::new(1, 3));
        assert_eq!(half.checked_add(third), Some(Exact::new(5, 6)));
        assert_eq!(half.checked_mul(third), Some(Exact::new(1, 6)));
        assert_eq!(half.checked_div(third), Some(Exact::new(3, 2)));
        assert_eq!(half.checked_div(Exact::ZERO), None);
        assert_eq!(Exact::new(-1, 2).checked_add(half), Some(Exact::ZERO));
    }

    // The fuzz case that once panicked in `plus` (attempt to multiply with overflow): i64::MAX GiB plus a decimal
    // with nine fraction digits.
    #[test]
    fn arithmetic_refuses_overflow_instead_of_panicking() {
        let huge = Exact::int(i128::from(i64::MAX));
        let fraction = Exact::parse_decimal("780998.389051993").unwrap();
        let sum = huge.checked_add(fraction).unwrap();
        assert!(sum > huge);
        assert_eq!(sum.checked_mul(sum).and_then(|s| s.checked_mul(sum)), None);
        assert_eq!(Exact::int(i128::MAX).checked_add(Exact::int(1)), None);
        assert_eq!(Exact::int(i128::MAX).checked_mul(Exact::int(-2)), None);
        assert_eq!(Exact::new(1, i128::MAX).checked_div(Exact::int(2)), None);
        // A result of exactly i128::MIN has no magnitude in i128: refused, not a panic in the reduction.
        assert_eq!(Exact::int(-(1 << 126)).checked_mul(Exact::int(2)), None);
        // Common factors cancel first, so products and sums with a shared scale stay in range.
        let tiny = Exact::new(1, 1_000_000_000_000_000_000);
        assert_eq!(
            Exact::int(1_000_000_000_000_000_000).checked_mul(tiny),
            Some(Exact::int(1))
        );
        assert_eq!(
            Exact::new(i128::MAX / 4, 1 << 100).checked_add(Exact::new(1, 1 << 100)),
            Some(Exact::new(i128::MAX / 4 + 1, 1 << 100))
        );
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
