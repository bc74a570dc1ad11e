//! Codec tests: fixed wire bytes as cty writes them, round trips, and property tests proving that
//! arbitrary (malformed) input is an error and never a panic.

use std::collections::BTreeMap;

use proptest::prelude::*;
use rmpv::Value as Rmpv;

use super::*;

fn obj(pairs: &[(&str, Value)]) -> Value {
    Value::Object(
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect(),
    )
}

fn rmpv_bytes(value: &Rmpv) -> Vec<u8> {
    let mut out = Vec::new();
    rmpv::encode::write_value(&mut out, value).unwrap();
    out
}

fn resource_type() -> Type {
    Type::Object(BTreeMap::from([
        ("id".into(), Type::String),
        ("count".into(), Type::Number),
        ("enabled".into(), Type::Bool),
        ("tags".into(), Type::list(Type::String)),
        ("labels".into(), Type::map(Type::String)),
        (
            "splits".into(),
            Type::map(Type::Object(BTreeMap::from([
                ("uri".into(), Type::String),
                ("records".into(), Type::Number),
            ]))),
        ),
        ("ports".into(), Type::set(Type::Number)),
        ("pair".into(), Type::Tuple(vec![Type::String, Type::Bool])),
        ("anything".into(), Type::Dynamic),
    ]))
}

#[test]
fn unknown_is_fixext1_type_0_and_null_is_nil() {
    assert_eq!(
        encode(&Value::Unknown, &Type::String).unwrap(),
        vec![0xd4, 0, 0]
    );
    assert_eq!(encode(&Value::Null, &Type::String).unwrap(), vec![0xc0]);
}

#[test]
fn objects_carry_every_attribute_sorted() {
    let ty = Type::Object(BTreeMap::from([
        ("b".into(), Type::String),
        ("a".into(), Type::Bool),
    ]));
    let bytes = encode(&obj(&[("b", Value::string("x"))]), &ty).unwrap();
    assert_eq!(bytes, vec![0x82, 0xa1, b'a', 0xc0, 0xa1, b'b', 0xa1, b'x']);
}

#[test]
fn every_extension_type_is_unknown() {
    // ext 0 (plain unknown) and ext 12 with a refinement payload (refined unknown string).
    for ext in [
        Rmpv::Ext(0, vec![0]),
        Rmpv::Ext(
            12,
            rmpv_bytes(&Rmpv::Map(vec![(Rmpv::from(1), Rmpv::Boolean(true))])),
        ),
        Rmpv::Ext(-3, vec![]),
        Rmpv::Ext(7, vec![0; 300]),
    ] {
        assert_eq!(
            decode(&rmpv_bytes(&ext), &Type::String).unwrap(),
            Value::Unknown
        );
    }
}

#[test]
fn numbers_arrive_as_int_float_or_decimal_string() {
    let n = |s: &str| Value::Number(Number::parse(s).unwrap());
    let cases = [
        (Rmpv::from(42u8), n("42")),
        (Rmpv::from(-7i64), n("-7")),
        (Rmpv::from(u64::MAX), n("18446744073709551615")),
        (Rmpv::F64(0.5), n("0.5")),
        (Rmpv::F32(1.5), n("1.5")),
        (
            Rmpv::from("123456789012345678901234567890.5"),
            n("123456789012345678901234567890.5"),
        ),
    ];
    for (wire, want) in cases {
        assert_eq!(decode(&rmpv_bytes(&wire), &Type::Number).unwrap(), want);
    }
    let bad = decode(&rmpv_bytes(&Rmpv::from("12abc")), &Type::Number);
    assert!(matches!(bad, Err(Error::InvalidNumber { .. })), "{bad:?}");
    let nan = decode(&rmpv_bytes(&Rmpv::F64(f64::NAN)), &Type::Number);
    assert!(matches!(nan, Err(Error::InvalidNumber { .. })), "{nan:?}");
}

#[test]
fn big_numbers_round_trip_exactly() {
    for text in [
        "9007199254740993",
        "0.1",
        "1e400",
        "-123.000000000000000000000001",
    ] {
        let value = Value::Number(Number::parse(text).unwrap());
        let bytes = encode(&value, &Type::Number).unwrap();
        assert_eq!(decode(&bytes, &Type::Number).unwrap(), value, "{text}");
    }
    // Integers go out as msgpack ints, inexact decimals as strings.
    assert_eq!(
        encode(&Value::Number(1i64.into()), &Type::Number).unwrap(),
        vec![1]
    );
    let bytes = encode(
        &Value::Number(Number::parse("0.10000000000000000001").unwrap()),
        &Type::Number,
    )
    .unwrap();
    assert_eq!(bytes[0] & 0xe0, 0xa0, "fixstr expected: {bytes:?}");
}

#[test]
fn round_trip_of_a_resource_object() {
    let value = obj(&[
        ("id", Value::Unknown),
        ("count", Value::Number(3i64.into())),
        ("enabled", Value::Bool(true)),
        (
            "tags",
            Value::List(vec![Value::string("a"), Value::Unknown]),
        ),
        (
            "labels",
            Value::Map(BTreeMap::from([("k".into(), Value::string("v"))])),
        ),
        (
            "splits",
            Value::Map(BTreeMap::from([(
                "train".into(),
                obj(&[("uri", Value::string("s3://x")), ("records", Value::Null)]),
            )])),
        ),
        ("ports", Value::Set(vec![Value::Number(80i64.into())])),
        (
            "pair",
            Value::Tuple(vec![Value::string("x"), Value::Bool(false)]),
        ),
        ("anything", obj(&[("nested", Value::string("dyn"))])),
    ]);
    let ty = resource_type();
    let bytes = encode(&value, &ty).unwrap();
    assert_eq!(decode(&bytes, &ty).unwrap(), value);
}

#[test]
fn malformed_input_is_an_error() {
    let ty = resource_type();
    assert_eq!(decode(&[], &ty), Err(Error::UnexpectedEof));
    assert_eq!(decode(&[0xc0, 0xc0], &ty), Err(Error::TrailingBytes(1)));
    // A map claiming 2^32-1 entries with no data must fail fast, not allocate.
    assert_eq!(
        decode(&[0xdf, 0xff, 0xff, 0xff, 0xff], &ty),
        Err(Error::UnexpectedEof)
    );
    // Unknown attribute.
    let bytes = rmpv_bytes(&Rmpv::Map(vec![(Rmpv::from("nope"), Rmpv::Nil)]));
    assert!(matches!(
        decode(&bytes, &ty),
        Err(Error::UnsupportedAttribute { .. })
    ));
    // Wrong kind.
    let bytes = rmpv_bytes(&Rmpv::from(true));
    assert!(matches!(
        decode(&bytes, &Type::String),
        Err(Error::TypeMismatch { .. })
    ));
    // Invalid UTF-8.
    assert!(matches!(
        decode(&[0xa1, 0xff], &Type::String),
        Err(Error::InvalidUtf8(_))
    ));
    // Value not matching the type on encode.
    assert!(encode(&Value::Bool(true), &Type::String).is_err());
}

#[test]
fn missing_object_attributes_decode_as_null() {
    let ty = Type::Object(BTreeMap::from([("a".into(), Type::String)]));
    assert_eq!(decode(&[0x80], &ty).unwrap(), obj(&[("a", Value::Null)]));
}

/// Strategy: a type (bounded depth) and a value conforming to it.
fn arb_type() -> impl Strategy<Value = Type> {
    let leaf = prop_oneof![Just(Type::Bool), Just(Type::Number), Just(Type::String)];
    leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            inner.clone().prop_map(Type::list),
            inner.clone().prop_map(Type::set),
            inner.clone().prop_map(Type::map),
            prop::collection::btree_map("[a-z_]{1,6}", inner.clone(), 0..4).prop_map(Type::Object),
            prop::collection::vec(inner, 0..3).prop_map(Type::Tuple),
        ]
    })
}

fn arb_number() -> impl Strategy<Value = Number> {
    prop_oneof![
        any::<i64>().prop_map(Number::from),
        any::<u64>().prop_map(Number::from),
        any::<f64>().prop_filter_map("finite", Number::from_f64),
        "-?[0-9]{1,40}(\\.[0-9]{1,40})?".prop_map(|s| Number::parse(&s).unwrap()),
    ]
}

fn arb_value(ty: Type) -> BoxedStrategy<Value> {
    let special = prop_oneof![Just(Value::Null), Just(Value::Unknown)];
    let known: BoxedStrategy<Value> = match ty {
        Type::Bool => any::<bool>().prop_map(Value::Bool).boxed(),
        Type::Number => arb_number().prop_map(Value::Number).boxed(),
        Type::String | Type::Dynamic => ".{0,12}".prop_map(Value::String).boxed(),
        Type::List(elem) => prop::collection::vec(arb_value(*elem), 0..4)
            .prop_map(Value::List)
            .boxed(),
        Type::Set(elem) => prop::collection::vec(arb_value(*elem), 0..4)
            .prop_map(Value::Set)
            .boxed(),
        Type::Map(elem) => prop::collection::btree_map(".{0,5}", arb_value(*elem), 0..4)
            .prop_map(Value::Map)
            .boxed(),
        Type::Object(attrs) => {
            let parts: Vec<_> = attrs
                .into_iter()
                .map(|(name, attr_ty)| arb_value(attr_ty).prop_map(move |v| (name.clone(), v)))
                .collect();
            parts
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect()))
                .boxed()
        }
        Type::Tuple(elems) => elems
            .into_iter()
            .map(arb_value)
            .collect::<Vec<_>>()
            .prop_map(Value::Tuple)
            .boxed(),
    };
    prop_oneof![1 => special, 6 => known].boxed()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256), ty in arb_type()) {
        let _ = decode(&bytes, &ty);
        let _ = decode(&bytes, &Type::Dynamic);
        let _ = decode(&bytes, &resource_type());
    }

    #[test]
    fn truncated_and_mutated_encodings_never_panic(
        (ty, value) in arb_type().prop_flat_map(|ty| (Just(ty.clone()), arb_value(ty))),
        cut in any::<prop::sample::Index>(),
        flip in any::<prop::sample::Index>(),
        byte in any::<u8>(),
    ) {
        let bytes = encode(&value, &ty).unwrap();
        let cut_at = cut.index(bytes.len() + 1);
        let _ = decode(&bytes[..cut_at], &ty);
        let mut mutated = bytes.clone();
        if !mutated.is_empty() {
            let i = flip.index(mutated.len());
            mutated[i] = byte;
            let _ = decode(&mutated, &ty);
        }
    }

    #[test]
    fn values_round_trip((ty, value) in arb_type().prop_flat_map(|ty| (Just(ty.clone()), arb_value(ty)))) {
        let bytes = encode(&value, &ty).unwrap();
        prop_assert_eq!(decode(&bytes, &ty).unwrap(), value);
    }

    #[test]
    fn rmpv_agrees_on_structure((ty, value) in arb_type().prop_flat_map(|ty| (Just(ty.clone()), arb_value(ty)))) {
        // An independent msgpack reader must accept our encoding as one complete value.
        let bytes = encode(&value, &ty).unwrap();
        let mut cursor = bytes.as_slice();
        rmpv::decode::read_value(&mut cursor).unwrap();
        prop_assert!(cursor.is_empty());
    }
}
