//! Quantity grammar and amounts, against what `k8s.io/apimachinery` v0.35.4 `ParseQuantity` answers for the same
//! texts (checked with a Go program against that module).

use super::*;

#[test]
fn equal_amounts() {
    for (a, b) in [
        ("0.5", "500m"),
        ("1.5Gi", "1536Mi"),
        ("1000", "1k"),
        ("1e3", "1k"),
        ("1E3", "1000"),
        ("1e+3", "1k"),
        ("1E-3", "1m"),
        (".5", "0.5"),
        ("5.", "5"),
        ("2", "2000m"),
        ("1Ki", "1024"),
        ("+1", "1"),
        ("1E", "1000P"),
        ("100u", "100000n"),
        ("1Gi", "1024Mi"),
        ("1.5n", "2n"),
        ("-1.5n", "-2n"),
        ("1e-12", "1n"),
        ("m", "0"),
        (".", "0"),
        (" 1 ", "1"),
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
        // An exponent with a suffix is no quantity, so never the amount 1 (it was, when the number took an exponent).
        ("1e3m", "1"),
        ("1E3Mi", "1000Mi"),
    ] {
        assert!(!same_amount(a, b), "{a} != {b}");
    }
    assert!(same_amount("abc", "abc"));
    assert_eq!(parse("main"), None);
    assert_eq!(parse("1.2.3"), None);
    assert_eq!(parse(""), None);
    assert_eq!(parse("128Mi"), Some(Exact::int(134_217_728)));
}

/// Texts Kubernetes accepts, including its quirks (a number without digits is 0), and huge amounts that are
/// quantities even where `parse` has no exact value for them.
const ACCEPTED: &[&str] = &[
    "1e3",
    "1E3",
    "1.5Gi",
    "+1",
    ".5",
    "5.",
    "-1",
    "1.G",
    "1E",
    "1Ei",
    "1E-3",
    "1e+3",
    "0",
    "00",
    "-0",
    "+",
    "-",
    ".",
    "+.",
    "e3",
    "Ki",
    "m",
    ".Ki",
    "1n",
    "1.5n",
    "1e-12",
    "1.e-12",
    "0e-12",
    "+.5e-10",
    "99999999999999999999999",
    "1e999",
    "1e9223372036854775807",
    "1.0000000000000000000001",
    " 1",
    "1Gi ",
];

#[test]
fn kubernetes_accepts() {
    for text in ACCEPTED {
        assert_eq!(check(text), Ok(()), "{text:?}");
    }
}

#[test]
fn kubernetes_refuses() {
    for (text, error) in [
        ("", QuantityError::Empty),
        ("  ", QuantityError::Empty),
        ("1e3m", QuantityError::Format("1e3m".into())),
        ("1E3Mi", QuantityError::Format("1E3Mi".into())),
        ("1..5", QuantityError::Format("1..5".into())),
        ("1.5.", QuantityError::Format("1.5.".into())),
        ("0x1", QuantityError::Format("0x1".into())),
        ("1e--3", QuantityError::Format("1e--3".into())),
        ("1e3.5", QuantityError::Format("1e3.5".into())),
        ("main", QuantityError::Format("main".into())),
        ("1 Gi", QuantityError::Format("1 Gi".into())),
        ("1e", QuantityError::Suffix("e".into())),
        ("1ee3", QuantityError::Suffix("ee3".into())),
        ("1Ki5", QuantityError::Suffix("Ki5".into())),
        ("1k3", QuantityError::Suffix("k3".into())),
        ("1K", QuantityError::Suffix("K".into())),
        ("1i", QuantityError::Suffix("i".into())),
        ("1kk", QuantityError::Suffix("kk".into())),
        ("1e-", QuantityError::Suffix("e-".into())),
        ("+-5", QuantityError::Suffix("-5".into())),
        ("1M-3", QuantityError::Suffix("M-3".into())),
        (
            "1e99999999999999999999",
            QuantityError::Suffix("e99999999999999999999".into()),
        ),
        ("e-12", QuantityError::Numeric("e-12".into())),
        ("-e-10", QuantityError::Numeric("-e-10".into())),
    ] {
        assert_eq!(check(text), Err(error), "{text:?}");
        assert_eq!(parse(text), None, "{text:?}");
    }
}

#[test]
fn errors_name_the_rule() {
    let format = check("1e3m").unwrap_err().to_string();
    assert!(
        format.contains("never an exponent and a suffix together"),
        "{format}"
    );
    assert!(format.contains("no exponent of its own"), "{format}");
    let suffix = check("1K").unwrap_err().to_string();
    assert!(suffix.starts_with("unknown suffix \"K\""), "{suffix}");
    assert_eq!(
        check("e-12").unwrap_err().to_string(),
        "\"e-12\" has no digits before its exponent: write a number such as 1e-12"
    );
}

/// The CRD's pattern ([`crate::names::QUANTITY_PATTERN`]) takes every text `check` takes that is not negative, so the
/// API server never refuses what `render -f` and the provider let through, and refuses words and negative amounts.
#[test]
fn the_crd_pattern_takes_what_check_takes_unless_negative() {
    let pattern = regex::Regex::new(crate::names::QUANTITY_PATTERN).unwrap();
    let more = [
        "-0.0Gi",
        "\u{a0}2\u{3000}",
        "-e3",
        "-0e-20",
        // Negative, though `parse` has no exact value for them (a reviewer's finding).
        "-1e39",
        "-1e-40",
        "-0.0000000000000000001",
        "-99999999999999999999999999999999999999999",
    ];
    for text in ACCEPTED.iter().chain(&more) {
        let below_zero = parse(text).is_some_and(|a| a < Exact::ZERO);
        assert!(!below_zero || is_negative(text), "{text:?}");
    }
    let not_negative = ACCEPTED
        .iter()
        .chain(&more)
        .filter(|text| !is_negative(text));
    for text in not_negative {
        assert_eq!(check(text), Ok(()), "{text:?}");
        assert!(pattern.is_match(text), "{text:?}");
    }
    for text in more.iter().filter(|text| is_negative(text)) {
        assert_eq!(check(text), Ok(()), "{text:?}");
        assert!(!pattern.is_match(text), "{text:?}");
    }
    for text in [
        "-1", "-0.5", "-1Gi", "abc", "1 Gi", "2 cores", "1e3m", "1K", "1kk", "1e", "0x1", "1..5",
        "", "  ",
    ] {
        assert!(!pattern.is_match(text), "{text:?}");
    }
}
