//! JSON form of cty values: what Terraform stores in state and hands back in
//! `UpgradeResourceState.Request.raw_state.json` (go-cty `json` package).
//!
//! Same shape as msgpack without unknowns: null is `null`, numbers are JSON numbers (kept exact:
//! we read their source text through [`RawValue`], never via `f64`), objects carry attributes by
//! name, `dynamic` is `{"value": ..., "type": ...}`.

use std::collections::BTreeMap;

use serde_json::value::RawValue;

use super::{Error, Number, Type, Value, child_path};

/// Decodes JSON `bytes` as type `ty`. Attributes missing from an object decode as null (state
/// written by an older schema lacks newer attributes); attributes the type does not have are an
/// error (the caller upgrades old states before decoding, or drops them knowingly).
///
/// # Errors
/// [`Error::Json`] for invalid JSON, the other [`Error`]s for type mismatches.
pub fn decode(bytes: &[u8], ty: &Type) -> Result<Value, Error> {
    let raw: &RawValue = serde_json::from_slice(bytes).map_err(|e| Error::Json(e.to_string()))?;
    decode_raw(raw, ty, ".")
}

fn json_err(e: serde_json::Error) -> Error {
    Error::Json(e.to_string())
}

fn kind_of(text: &str) -> &'static str {
    match text.as_bytes().first() {
        Some(b'n') => "null",
        Some(b't' | b'f') => "bool",
        Some(b'"') => "string",
        Some(b'[') => "array",
        Some(b'{') => "object",
        _ => "number",
    }
}

fn decode_raw(raw: &RawValue, ty: &Type, path: &str) -> Result<Value, Error> {
    let text = raw.get().trim();
    if text == "null" {
        return Ok(Value::Null);
    }
    let mismatch = || Error::TypeMismatch {
        path: path.to_string(),
        expected: ty.friendly_name(),
        found: kind_of(text).to_string(),
    };
    match ty {
        Type::Bool => match text {
            "true" => Ok(Value::Bool(true)),
            "false" => Ok(Value::Bool(false)),
            _ => Err(mismatch()),
        },
        Type::Number => {
            // cty also accepts numbers written as JSON strings.
            let number_text = if text.starts_with('"') {
                serde_json::from_str::<String>(text).map_err(json_err)?
            } else if kind_of(text) == "number" {
                text.to_string()
            } else {
                return Err(mismatch());
            };
            Number::parse(&number_text)
                .map(Value::Number)
                .ok_or_else(|| Error::InvalidNumber {
                    path: path.to_string(),
                    text: number_text,
                })
        }
        Type::String => {
            if !text.starts_with('"') {
                return Err(mismatch());
            }
            Ok(Value::String(serde_json::from_str(text).map_err(json_err)?))
        }
        Type::List(_) | Type::Set(_) | Type::Tuple(_) => {
            if !text.starts_with('[') {
                return Err(mismatch());
            }
            let items: Vec<&RawValue> = serde_json::from_str(text).map_err(json_err)?;
            let elem_type = |i: usize| -> Result<&Type, Error> {
                match ty {
                    Type::List(elem) | Type::Set(elem) => Ok(elem),
                    Type::Tuple(elems) if elems.len() == items.len() => Ok(&elems[i]),
                    _ => Err(mismatch()),
                }
            };
            let values = items
                .iter()
                .enumerate()
                .map(|(i, item)| {
                    decode_raw(item, elem_type(i)?, &child_path(path, &format!("[{i}]")))
                })
                .collect::<Result<Vec<_>, _>>()?;
            if let Type::Tuple(elems) = ty
                && elems.len() != values.len()
            {
                return Err(mismatch());
            }
            Ok(match ty {
                Type::List(_) => Value::List(values),
                Type::Set(_) => Value::Set(values),
                _ => Value::Tuple(values),
            })
        }
        Type::Map(elem) => {
            if !text.starts_with('{') {
                return Err(mismatch());
            }
            let entries: BTreeMap<String, &RawValue> =
                serde_json::from_str(text).map_err(json_err)?;
            entries
                .into_iter()
                .map(|(k, v)| {
                    let child = child_path(path, &format!("[{k:?}]"));
                    Ok((k, decode_raw(v, elem, &child)?))
                })
                .collect::<Result<_, Error>>()
                .map(Value::Map)
        }
        Type::Object(attrs) => {
            if !text.starts_with('{') {
                return Err(mismatch());
            }
            let entries: BTreeMap<String, &RawValue> =
                serde_json::from_str(text).map_err(json_err)?;
            if let Some(extra) = entries.keys().find(|k| !attrs.contains_key(*k)) {
                return Err(Error::UnsupportedAttribute {
                    path: path.to_string(),
                    name: extra.clone(),
                });
            }
            attrs
                .iter()
                .map(|(name, attr_ty)| {
                    let value = match entries.get(name) {
                        Some(raw) => decode_raw(raw, attr_ty, &child_path(path, name))?,
                        None => Value::Null,
                    };
                    Ok((name.clone(), value))
                })
                .collect::<Result<_, Error>>()
                .map(Value::Object)
        }
        Type::Dynamic => {
            #[derive(serde::Deserialize)]
            struct Typed<'a> {
                #[serde(borrow)]
                value: &'a RawValue,
                #[serde(borrow, rename = "type")]
                ty: &'a RawValue,
            }
            let typed: Typed<'_> = serde_json::from_str(text).map_err(json_err)?;
            let inner = Type::from_json_bytes(typed.ty.get().as_bytes())?;
            if inner == Type::Dynamic {
                return Err(Error::InvalidType("dynamic inside dynamic".into()));
            }
            decode_raw(typed.value, &inner, path)
        }
    }
}

/// Encodes a wholly known value as JSON text (numbers written exactly). Unknown values have no
/// JSON form and are an error; `dynamic` attributes are not supported by this encoder.
///
/// # Errors
/// [`Error::TypeMismatch`] for unknowns or values that do not fit the type.
pub fn encode(value: &Value, ty: &Type) -> Result<String, Error> {
    let mut out = String::new();
    write(&mut out, value, ty, ".")?;
    Ok(out)
}

fn write(out: &mut String, value: &Value, ty: &Type, path: &str) -> Result<(), Error> {
    let mismatch = || Error::TypeMismatch {
        path: path.to_string(),
        expected: ty.friendly_name(),
        found: format!("{value:?}"),
    };
    let quote = |s: &str| serde_json::to_string(s).map_err(json_err);
    match (value, ty) {
        (Value::Null, _) => out.push_str("null"),
        (Value::Bool(b), Type::Bool) => out.push_str(if *b { "true" } else { "false" }),
        (Value::Number(n), Type::Number) => out.push_str(n.as_str()),
        (Value::String(s), Type::String) => out.push_str(&quote(s)?),
        (Value::List(items), Type::List(elem)) | (Value::Set(items), Type::Set(elem)) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(out, item, elem, &child_path(path, &format!("[{i}]")))?;
            }
            out.push(']');
        }
        (Value::Tuple(items), Type::Tuple(elems)) if items.len() == elems.len() => {
            out.push('[');
            for (i, (item, elem)) in items.iter().zip(elems).enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(out, item, elem, &child_path(path, &format!("[{i}]")))?;
            }
            out.push(']');
        }
        (Value::Map(entries), Type::Map(elem)) => {
            out.push('{');
            for (i, (key, item)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&quote(key)?);
                out.push(':');
                write(out, item, elem, &child_path(path, &format!("[{key:?}]")))?;
            }
            out.push('}');
        }
        (Value::Object(attrs), Type::Object(attr_types)) => {
            out.push('{');
            for (i, (name, attr_ty)) in attr_types.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&quote(name)?);
                out.push(':');
                let item = attrs.get(name).unwrap_or(&Value::Null);
                write(out, item, attr_ty, &child_path(path, name))?;
            }
            out.push('}');
        }
        _ => return Err(mismatch()),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn state_type() -> Type {
        Type::Object(BTreeMap::from([
            ("name".into(), Type::String),
            ("records".into(), Type::Number),
            ("flags".into(), Type::list(Type::Bool)),
            ("labels".into(), Type::map(Type::String)),
        ]))
    }

    #[test]
    fn decodes_state_json_exactly() {
        let json = br#"{"name":"d","records":123456789012345678901234567890.25,"flags":[true,false],"labels":{"a":"b"}}"#;
        let value = decode(json, &state_type()).unwrap();
        assert_eq!(
            value.get("records"),
            Some(&Value::Number(
                Number::parse("123456789012345678901234567890.25").unwrap()
            ))
        );
        let text = encode(&value, &state_type()).unwrap();
        assert_eq!(decode(text.as_bytes(), &state_type()).unwrap(), value);
    }

    #[test]
    fn missing_attributes_are_null_and_extra_ones_rejected() {
        let value = decode(br#"{"name":"d"}"#, &state_type()).unwrap();
        assert_eq!(value.get("labels"), Some(&Value::Null));
        assert!(matches!(
            decode(br#"{"name":"d","gone":1}"#, &state_type()),
            Err(Error::UnsupportedAttribute { .. })
        ));
    }

    #[test]
    fn dynamic_values_carry_their_type() {
        let value = decode(
            br#"{"value":["a"],"type":["list","string"]}"#,
            &Type::Dynamic,
        )
        .unwrap();
        assert_eq!(value, Value::List(vec![Value::string("a")]));
    }

    #[test]
    fn malformed_json_is_an_error() {
        for bad in [
            "",
            "{",
            r#"{"name":1}"#,
            r#"{"records":"x"}"#,
            "[]",
            r#"{"flags":[1]}"#,
        ] {
            assert!(decode(bad.as_bytes(), &state_type()).is_err(), "{bad}");
        }
    }

    proptest! {
        #[test]
        fn arbitrary_text_never_panics(text in ".{0,200}") {
            let _ = decode(text.as_bytes(), &state_type());
            let _ = decode(text.as_bytes(), &Type::Dynamic);
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
            let _ = decode(&bytes, &state_type());
        }
    }
}
