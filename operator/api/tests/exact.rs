//! [`Exact`]'s checked arithmetic and its decimal text against arbitrary-precision rationals (num-rational's
//! `BigRational`): every value it returns is the exact one, it refuses (`None`) only when a step of the exact
//! computation leaves `i128`, and its text is the value, or the value rounded up at the fourth place and marked `...`.

use model_fleet_api::capacity::Exact;
use num_bigint::BigInt;
use num_rational::BigRational;
use proptest::prelude::*;

fn big(e: Exact) -> BigRational {
    BigRational::new(BigInt::from(e.numer()), BigInt::from(e.denom()))
}

/// Whether an integer is a part `Exact` can hold: in `i128` and not `i128::MIN`.
fn holds(n: &BigInt) -> bool {
    i128::try_from(n).is_ok_and(|n| n != i128::MIN)
}

/// Whether a rational in lowest terms fits `Exact`.
fn fits(r: &BigRational) -> bool {
    holds(r.numer()) && holds(r.denom())
}

/// Numerators: small, at the edges of i128, and powers of two and ten (the denominators of GiB and decimals).
fn arb_part() -> impl Strategy<Value = i128> {
    prop_oneof![
        -1000i128..1000,
        (i128::MIN + 1)..=i128::MAX,
        (0u32..127).prop_map(|p| 1i128 << p),
        (0u32..39).prop_map(|p| 10i128.pow(p)),
        Just(i128::MAX),
        Just(i128::MIN + 1),
    ]
}

fn arb_exact() -> impl Strategy<Value = Exact> {
    (arb_part(), arb_part(), any::<bool>()).prop_map(|(numer, denom, negative)| {
        let denom = denom.checked_abs().filter(|d| *d != 0).unwrap_or(1);
        let numer = if negative { -numer } else { numer };
        Exact::new(numer, denom)
    })
}

/// The value of `Display`'s text, without its `...` mark.
fn parse_text(text: &str) -> BigRational {
    let text = text.trim_end_matches("...");
    let (negative, text) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (whole, frac) = text.split_once('.').unwrap_or((text, ""));
    let digits: BigInt = format!("{whole}{frac}").parse().unwrap();
    let value = BigRational::new(digits, BigInt::from(10).pow(frac.len() as u32));
    if negative { -value } else { value }
}

proptest! {
    #[test]
    fn sums_are_exact_or_refused_beyond_i128(a in arb_exact(), b in arb_exact()) {
        let exact = big(a) + big(b);
        match a.checked_add(b) {
            Some(sum) => prop_assert_eq!(big(sum), exact),
            None => {
                // The sum is formed over the least common denominator before it is reduced: refused when a term of
                // that form, their sum or the denominator leaves i128, though the reduced result may not.
                let lcd = lcm(a.denom(), b.denom());
                let left = BigInt::from(a.numer()) * (&lcd / BigInt::from(a.denom()));
                let right = BigInt::from(b.numer()) * (&lcd / BigInt::from(b.denom()));
                let sum = &left + &right;
                prop_assert!(
                    [left, right, sum, lcd].iter().any(|n| !holds(n)),
                    "{a:?} + {b:?} = {exact} was refused though every step fits i128"
                );
            }
        }
    }

    #[test]
    fn products_and_quotients_are_exact_or_refused_only_beyond_i128(a in arb_exact(), b in arb_exact()) {
        let product = big(a) * big(b);
        match a.checked_mul(b) {
            Some(p) => prop_assert_eq!(big(p), product),
            // Common factors cancel crosswise first, so the parts multiplied are the result's lowest terms.
            None => prop_assert!(!fits(&product), "{a:?} x {b:?}"),
        }
        if b == Exact::ZERO {
            prop_assert_eq!(a.checked_div(b), None);
        } else {
            let quotient = big(a) / big(b);
            match a.checked_div(b) {
                Some(q) => prop_assert_eq!(big(q), quotient),
                None => prop_assert!(!fits(&quotient), "{a:?} / {b:?}"),
            }
        }
    }

    #[test]
    fn text_is_the_value_or_rounded_away_from_zero_at_four_places(a in arb_exact()) {
        let text = a.to_string();
        let shown = parse_text(&text);
        let value = big(a);
        if text.ends_with("...") {
            let step = BigRational::new(BigInt::from(1), BigInt::from(10_000));
            let (shown, value) = (magnitude(shown), magnitude(value));
            prop_assert!(shown > value && shown - value < step, "{a:?} shown as {text}");
        } else {
            prop_assert_eq!(shown, value, "{:?} shown as {}", a, text);
        }
        // Order agrees with the exact values.
        prop_assert_eq!(a.cmp(&Exact::ZERO), big(a).cmp(&BigRational::from_integer(BigInt::from(0))));
    }

    #[test]
    fn order_is_exact(a in arb_exact(), b in arb_exact()) {
        prop_assert_eq!(a.cmp(&b), big(a).cmp(&big(b)));
    }
}

fn magnitude(r: BigRational) -> BigRational {
    if r < BigRational::from_integer(BigInt::from(0)) {
        -r
    } else {
        r
    }
}

/// Least common multiple of two positive denominators.
fn lcm(a: i128, b: i128) -> BigInt {
    let (a, b) = (BigInt::from(a), BigInt::from(b));
    let mut g = (a.clone(), b.clone());
    while g.1 != BigInt::from(0) {
        g = (g.1.clone(), &g.0 % &g.1);
    }
    a * b / g.0
}
