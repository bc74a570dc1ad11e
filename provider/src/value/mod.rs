//! cty values as Terraform exchanges them in `DynamicValue` (tfplugin5 `DynamicValue.msgpack` and
//! `.json`).
//!
//! * [`Type`]: the cty type system and its JSON type-constraint encoding (schema attribute types).
//! * [`Number`]: an exact decimal (cty numbers are arbitrary precision; never squeezed through `f64`).
//! * [`Value`]: a value of some [`Type`], including unknown and null.
//! * [`msgpack`]: the wire codec of plan/apply/read requests.
//! * [`json`]: the JSON form of stored state (UpgradeResourceState `RawState.json`).
//!
//! Decoding is guided by the expected type (the wire format alone is ambiguous: an array may be a
//! list, a set or a tuple). Malformed input is an [`Error`], never a panic.

pub mod json;
pub mod msgpack;
mod number;
mod types;

use std::collections::BTreeMap;

pub use number::Number;
pub use types::Type;

/// A cty value.
///
/// Collections hold their elements in wire order (`Set` included: cty sorts set elements
/// canonically on the wire, we keep what we were sent). `Object` and `Map` are keyed by attribute
/// name / map key.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// Not known until apply (msgpack extension type; cty uses ext 0, refined unknowns ext 12).
    Unknown,
    /// Absent / null.
    Null,
    /// `bool`.
    Bool(bool),
    /// `number`, exact.
    Number(Number),
    /// `string`.
    String(String),
    /// `list(T)` (also list nested blocks).
    List(Vec<Value>),
    /// `set(T)` (also set nested blocks).
    Set(Vec<Value>),
    /// `tuple([...])`.
    Tuple(Vec<Value>),
    /// `map(T)` (also map nested blocks).
    Map(BTreeMap<String, Value>),
    /// `object({...})` (resource roots and nested block bodies).
    Object(BTreeMap<String, Value>),
}

impl Value {
    /// Whether this is `Null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// Whether this is `Unknown` (only the top level; see [`Value::is_wholly_known`]).
    pub fn is_unknown(&self) -> bool {
        matches!(self, Value::Unknown)
    }

    /// Whether no unknown appears anywhere inside this value.
    pub fn is_wholly_known(&self) -> bool {
        match self {
            Value::Unknown => false,
            Value::List(items) | Value::Set(items) | Value::Tuple(items) => {
                items.iter().all(Value::is_wholly_known)
            }
            Value::Map(entries) | Value::Object(entries) => {
                entries.values().all(Value::is_wholly_known)
            }
            _ => true,
        }
    }

    /// This value with every unknown replaced by the value at the same place in `known` (`Null` where `known` has
    /// none): objects and maps by name, lists and tuples by index; a set with an unknown inside is `known`'s whole
    /// (its elements have no places). What apply sends: the planned state, whose unknowns the configuration, wholly
    /// known at apply time, fills.
    pub fn fill_unknowns(&self, known: &Value) -> Value {
        match (self, known) {
            (Value::Unknown, _) => known.clone(),
            (Value::Object(entries), _) | (Value::Map(entries), _) => {
                let filled = entries
                    .iter()
                    .map(|(name, v)| {
                        let there = match known {
                            Value::Object(k) | Value::Map(k) => k.get(name),
                            _ => None,
                        };
                        (name.clone(), v.fill_unknowns(there.unwrap_or(&Value::Null)))
                    })
                    .collect();
                if matches!(self, Value::Object(_)) {
                    Value::Object(filled)
                } else {
                    Value::Map(filled)
                }
            }
            (Value::List(items), _) | (Value::Tuple(items), _) => {
                let there = |i: usize| match known {
                    Value::List(k) | Value::Tuple(k) => k.get(i),
                    _ => None,
                };
                let filled = items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| v.fill_unknowns(there(i).unwrap_or(&Value::Null)))
                    .collect();
                if matches!(self, Value::List(_)) {
                    Value::List(filled)
                } else {
                    Value::Tuple(filled)
                }
            }
            (Value::Set(_), _) if !self.is_wholly_known() => known.clone(),
            _ => self.clone(),
        }
    }

    /// The attribute `name` of an object; `None` for non-objects and missing attributes.
    pub fn get(&self, name: &str) -> Option<&Value> {
        match self {
            Value::Object(attrs) => attrs.get(name),
            _ => None,
        }
    }

    /// The string inside a known `String`, else `None`.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The bool inside a known `Bool`, else `None`.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// A `String` value.
    pub fn string(s: impl Into<String>) -> Value {
        Value::String(s.into())
    }

    /// The null value of an object type with every attribute null: convenient for building states.
    pub fn null_object(ty: &Type) -> Value {
        match ty {
            Type::Object(attrs) => {
                Value::Object(attrs.keys().map(|k| (k.clone(), Value::Null)).collect())
            }
            _ => Value::Null,
        }
    }
}

/// Why a value could not be decoded or encoded. The message names the position (a dotted path)
/// where that helps.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum Error {
    /// Input ended in the middle of a value.
    #[error("unexpected end of input")]
    UnexpectedEof,
    /// Input continues after the top-level value.
    #[error("{0} trailing bytes after the value")]
    TrailingBytes(usize),
    /// The wire value does not fit the expected type.
    #[error("at {path}: expected {expected}, found {found}")]
    TypeMismatch {
        /// Dotted path of the offending value (`.` is the root).
        path: String,
        /// What the type required.
        expected: String,
        /// What the input held.
        found: String,
    },
    /// An object carried an attribute its type does not have.
    #[error("at {path}: unsupported attribute {name:?}")]
    UnsupportedAttribute {
        /// Dotted path of the object.
        path: String,
        /// The attribute name.
        name: String,
    },
    /// A number could not be parsed or is not finite.
    #[error("at {path}: invalid number {text:?}")]
    InvalidNumber {
        /// Dotted path of the number.
        path: String,
        /// The text or float seen.
        text: String,
    },
    /// A string was not UTF-8.
    #[error("at {0}: string is not valid UTF-8")]
    InvalidUtf8(String),
    /// A JSON type constraint could not be understood.
    #[error("invalid type constraint: {0}")]
    InvalidType(String),
    /// JSON input was not valid JSON.
    #[error("invalid JSON: {0}")]
    Json(String),
    /// The encoder's writer failed (cannot happen for in-memory buffers).
    #[error("write failed: {0}")]
    Write(String),
}

/// Joins a path and a child step for error messages (`.` root, `.spec.splits["train"]`).
pub(crate) fn child_path(parent: &str, step: &str) -> String {
    if parent == "." {
        format!(".{step}")
    } else if step.starts_with('[') {
        format!("{parent}{step}")
    } else {
        format!("{parent}.{step}")
    }
}

#[cfg(test)]
mod tests {
    use super::Value;

    fn object(entries: &[(&str, Value)]) -> Value {
        Value::Object(
            entries
                .iter()
                .map(|(k, v)| ((*k).to_owned(), v.clone()))
                .collect(),
        )
    }

    // What apply sends: the planned state, its unknowns taken from the configuration.
    #[test]
    fn fill_unknowns_takes_each_unknown_from_the_same_place() {
        let planned = object(&[
            ("name", Value::string("m")),
            ("image", Value::Unknown),
            (
                "args",
                Value::List(vec![Value::string("a"), Value::Unknown]),
            ),
            ("env", Value::Unknown),
            (
                "labels",
                Value::Map([("k".to_owned(), Value::Unknown)].into()),
            ),
            ("tags", Value::Set(vec![Value::Unknown])),
            ("kept", Value::string("prior")),
        ]);
        let config = object(&[
            ("name", Value::string("m")),
            ("image", Value::string("img:2")),
            (
                "args",
                Value::List(vec![Value::string("a"), Value::string("b")]),
            ),
            ("env", Value::List(vec![Value::string("E")])),
            (
                "labels",
                Value::Map([("k".to_owned(), Value::string("v"))].into()),
            ),
            ("tags", Value::Set(vec![Value::string("t")])),
            ("kept", Value::Null),
        ]);
        let filled = planned.fill_unknowns(&config);
        assert!(filled.is_wholly_known());
        assert_eq!(filled.get("image"), Some(&Value::string("img:2")));
        assert_eq!(filled.get("args"), config.get("args"));
        assert_eq!(filled.get("env"), config.get("env"));
        assert_eq!(filled.get("labels"), config.get("labels"));
        assert_eq!(
            filled.get("tags"),
            config.get("tags"),
            "a set with an unknown is the configuration's"
        );
        assert_eq!(
            filled.get("kept"),
            Some(&Value::string("prior")),
            "known planned values stay"
        );
        // An unknown with nothing at its place in the configuration is null.
        let short = object(&[("args", Value::List(vec![Value::Unknown, Value::Unknown]))]);
        let one = object(&[("args", Value::List(vec![Value::string("x")]))]);
        assert_eq!(
            short.fill_unknowns(&one).get("args"),
            Some(&Value::List(vec![Value::string("x"), Value::Null]))
        );
    }
}
