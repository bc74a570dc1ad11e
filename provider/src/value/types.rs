//! The cty type system and its JSON encoding (schema `Attribute.type` bytes, dynamic values).

use std::collections::BTreeMap;

use serde_json::Value as Json;

use super::Error;

/// A cty type. Encoded in JSON as cty's type constraints: `"string"`, `"number"`, `"bool"`,
/// `"dynamic"`, `["list", T]`, `["set", T]`, `["map", T]`, `["object", {name: T}]`,
/// `["tuple", [T...]]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Type {
    /// `bool`.
    Bool,
    /// `number` (arbitrary precision).
    Number,
    /// `string`.
    String,
    /// `dynamic`: the type travels with the value.
    Dynamic,
    /// `list(T)`.
    List(Box<Type>),
    /// `set(T)`.
    Set(Box<Type>),
    /// `map(T)` (string keys).
    Map(Box<Type>),
    /// `object({...})`.
    Object(BTreeMap<String, Type>),
    /// `tuple([...])`.
    Tuple(Vec<Type>),
}

impl Type {
    /// `list(T)`.
    pub fn list(elem: Type) -> Type {
        Type::List(Box::new(elem))
    }

    /// `set(T)`.
    pub fn set(elem: Type) -> Type {
        Type::Set(Box::new(elem))
    }

    /// `map(T)`.
    pub fn map(elem: Type) -> Type {
        Type::Map(Box::new(elem))
    }

    /// The JSON type constraint, as a JSON value.
    pub fn to_json(&self) -> Json {
        match self {
            Type::Bool => Json::from("bool"),
            Type::Number => Json::from("number"),
            Type::String => Json::from("string"),
            Type::Dynamic => Json::from("dynamic"),
            Type::List(t) => Json::Array(vec!["list".into(), t.to_json()]),
            Type::Set(t) => Json::Array(vec!["set".into(), t.to_json()]),
            Type::Map(t) => Json::Array(vec!["map".into(), t.to_json()]),
            Type::Object(attrs) => Json::Array(vec![
                "object".into(),
                Json::Object(
                    attrs
                        .iter()
                        .map(|(k, t)| (k.clone(), t.to_json()))
                        .collect(),
                ),
            ]),
            Type::Tuple(elems) => Json::Array(vec![
                "tuple".into(),
                Json::Array(elems.iter().map(Type::to_json).collect()),
            ]),
        }
    }

    /// The JSON type constraint as bytes (what `Schema.Attribute.type` carries).
    pub fn to_json_bytes(&self) -> Vec<u8> {
        self.to_json().to_string().into_bytes()
    }

    /// Parses a JSON type constraint.
    ///
    /// # Errors
    /// [`Error::InvalidType`] for anything that is not one of the forms above (including the
    /// optional-attribute form `["object", {...}, [...]]`, which never appears on the wire to a
    /// provider).
    pub fn from_json(json: &Json) -> Result<Type, Error> {
        let bad = || Error::InvalidType(json.to_string());
        match json {
            Json::String(s) => match s.as_str() {
                "bool" => Ok(Type::Bool),
                "number" => Ok(Type::Number),
                "string" => Ok(Type::String),
                "dynamic" => Ok(Type::Dynamic),
                _ => Err(bad()),
            },
            Json::Array(parts) if parts.len() == 2 => {
                let kind = parts[0].as_str().ok_or_else(bad)?;
                match (kind, &parts[1]) {
                    ("list", t) => Ok(Type::list(Type::from_json(t)?)),
                    ("set", t) => Ok(Type::set(Type::from_json(t)?)),
                    ("map", t) => Ok(Type::map(Type::from_json(t)?)),
                    ("object", Json::Object(attrs)) => Ok(Type::Object(
                        attrs
                            .iter()
                            .map(|(k, t)| Ok((k.clone(), Type::from_json(t)?)))
                            .collect::<Result<_, Error>>()?,
                    )),
                    ("tuple", Json::Array(elems)) => Ok(Type::Tuple(
                        elems
                            .iter()
                            .map(Type::from_json)
                            .collect::<Result<_, _>>()?,
                    )),
                    _ => Err(bad()),
                }
            }
            _ => Err(bad()),
        }
    }

    /// Parses JSON type-constraint bytes.
    ///
    /// # Errors
    /// [`Error::Json`] for invalid JSON, [`Error::InvalidType`] for an unknown form.
    pub fn from_json_bytes(bytes: &[u8]) -> Result<Type, Error> {
        let json: Json = serde_json::from_slice(bytes).map_err(|e| Error::Json(e.to_string()))?;
        Type::from_json(&json)
    }

    /// A short human name (`list(string)`), for error messages.
    pub fn friendly_name(&self) -> String {
        match self {
            Type::Bool => "bool".into(),
            Type::Number => "number".into(),
            Type::String => "string".into(),
            Type::Dynamic => "dynamic".into(),
            Type::List(t) => format!("list({})", t.friendly_name()),
            Type::Set(t) => format!("set({})", t.friendly_name()),
            Type::Map(t) => format!("map({})", t.friendly_name()),
            Type::Object(_) => "object".into(),
            Type::Tuple(_) => "tuple".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_round_trip() {
        let ty = Type::Object(BTreeMap::from([
            ("a".to_string(), Type::list(Type::String)),
            ("b".to_string(), Type::map(Type::set(Type::Number))),
            (
                "c".to_string(),
                Type::Tuple(vec![Type::Bool, Type::Dynamic]),
            ),
        ]));
        let bytes = ty.to_json_bytes();
        assert_eq!(
            String::from_utf8(bytes.clone()).unwrap(),
            r#"["object",{"a":["list","string"],"b":["map",["set","number"]],"c":["tuple",["bool","dynamic"]]}]"#
        );
        assert_eq!(Type::from_json_bytes(&bytes).unwrap(), ty);
    }

    #[test]
    fn rejects_unknown_forms() {
        for bad in [
            r#""int""#,
            r#"["list"]"#,
            r#"["object",[]]"#,
            "42",
            "[1,2]",
            "{",
        ] {
            assert!(Type::from_json_bytes(bad.as_bytes()).is_err(), "{bad}");
        }
    }
}
