//! Conversions between Terraform values of the spec attributes and the custom resource's `spec` JSON. Null and
//! empty stay absent in the object (the CRDs carry no defaults, the spec stays exactly as written), and reading maps
//! only the properties the schema knows.

use serde_json::{Map, Value as Json};

use super::{Field, FieldKind};
use crate::diag::{AttrPath, Diagnostics};
use crate::value::{Number, Type, Value};

fn scalar_to_json(value: &Value, ty: &Type, path: &AttrPath) -> Result<Json, Diagnostics> {
    match (value, ty) {
        (Value::String(s), Type::String) => Ok(Json::String(s.clone())),
        (Value::Bool(b), Type::Bool) => Ok(Json::Bool(*b)),
        (Value::Number(n), Type::Number) => number_to_json(n, path),
        _ => Err(Diagnostics::error_at(
            path.clone(),
            "Unexpected value",
            format!("expected a known {}, got {value:?}", ty.friendly_name()),
        )),
    }
}

/// A Terraform number as JSON: integers exactly; anything else as the nearest `f64` (a Kubernetes object holds JSON
/// numbers as float64, so `1 - 0.99` or `var.total * 0.1` is rounded the way the plugin framework rounds Float64
/// attributes, terraform#36367, plugin-framework#815). Only a magnitude beyond `f64` is an error.
fn number_to_json(n: &Number, path: &AttrPath) -> Result<Json, Diagnostics> {
    if let Some(i) = n.as_i64() {
        return Ok(Json::from(i));
    }
    if let Some(u) = n.as_u64() {
        return Ok(Json::from(u));
    }
    n.nearest_f64()
        .and_then(serde_json::Number::from_f64)
        .map(Json::Number)
        .ok_or_else(|| {
            Diagnostics::error_at(
                path.clone(),
                "Number out of range",
                format!("{n} is beyond the range of a Kubernetes object's numbers (float64): use a smaller value"),
            )
        })
}

/// The error of a JSON attribute whose text does not parse.
fn invalid_json(path: &AttrPath, error: &serde_json::Error) -> Diagnostics {
    Diagnostics::error_at(
        path.clone(),
        "Invalid JSON",
        format!("This attribute takes a JSON document (use jsonencode()): {error}."),
    )
}

fn unknown_error(path: &AttrPath) -> Diagnostics {
    Diagnostics::error_at(
        path.clone(),
        "Value not known at apply time",
        "This attribute is still unknown; Terraform should resolve it before apply.",
    )
}

/// What a conversion does with an unknown value.
enum Unknowns {
    /// Refuse it (apply time: everything must be known).
    Refuse,
    /// Leave it out and remember where it was (validate time).
    Skip(Vec<AttrPath>),
}

impl Unknowns {
    fn meet(&mut self, at: &AttrPath) -> Result<(), Diagnostics> {
        match self {
            Unknowns::Refuse => Err(unknown_error(at)),
            Unknowns::Skip(paths) => {
                paths.push(at.clone());
                Ok(())
            }
        }
    }
}

/// Builds the JSON object for `fields` from a Terraform object value (`spec` from the resource).
///
/// # Errors
/// Diagnostics (with paths) for unknown values or invalid JSON text in free-form attributes.
pub fn to_json(
    fields: &[Field],
    value: &Value,
    path: &AttrPath,
) -> Result<Map<String, Json>, Diagnostics> {
    object_to_json(fields, value, path, &mut Unknowns::Refuse)
}

/// Like [`to_json`] for a configuration that may hold unknown values: they are left out, and their paths returned
/// (validation must not judge what it cannot see).
///
/// # Errors
/// Invalid JSON text in a free-form attribute, a value that does not fit the schema.
pub fn to_known_json(
    fields: &[Field],
    value: &Value,
) -> Result<(Map<String, Json>, Vec<AttrPath>), Diagnostics> {
    let mut unknowns = Unknowns::Skip(Vec::new());
    let json = object_to_json(fields, value, &AttrPath::root(), &mut unknowns)?;
    let Unknowns::Skip(paths) = unknowns else {
        unreachable!("constructed as Skip")
    };
    Ok((json, paths))
}

fn object_to_json(
    fields: &[Field],
    value: &Value,
    path: &AttrPath,
    unknowns: &mut Unknowns,
) -> Result<Map<String, Json>, Diagnostics> {
    let mut out = Map::new();
    for field in fields {
        let here = path.attr(&field.tf_name);
        let item = value.get(&field.tf_name).unwrap_or(&Value::Null);
        if let Some(json) = field_to_json(field, item, &here, unknowns)? {
            out.insert(field.json_name.clone(), json);
        }
    }
    Ok(out)
}

/// The JSON of one field's value, `None` when it stays absent (null, unknown when skipped, or an empty list or map
/// block).
fn field_to_json(
    field: &Field,
    item: &Value,
    here: &AttrPath,
    unknowns: &mut Unknowns,
) -> Result<Option<Json>, Diagnostics> {
    if item.is_unknown() {
        unknowns.meet(here)?;
        return Ok(None);
    }
    let json = match (&field.kind, item) {
        (_, Value::Null) => return Ok(None),
        (FieldKind::List(_), Value::List(items)) if items.is_empty() => return Ok(None),
        (FieldKind::Map(_), Value::Map(entries)) if entries.is_empty() => return Ok(None),
        (FieldKind::Scalar(t), v) => scalar_to_json(v, t, here)?,
        (FieldKind::IntOrString, v) => scalar_to_json(v, &Type::String, here)?,
        (FieldKind::Json, Value::String(text)) => {
            serde_json::from_str(text).map_err(|e| invalid_json(here, &e))?
        }
        (FieldKind::ScalarList(t), Value::List(items)) => {
            let mut out = Vec::new();
            for (i, v) in items.iter().enumerate() {
                if v.is_unknown() {
                    unknowns.meet(&here.index(i))?;
                } else {
                    out.push(scalar_to_json(v, t, &here.index(i))?);
                }
            }
            Json::Array(out)
        }
        (FieldKind::ScalarMap(t), Value::Map(entries)) => {
            let mut out = Map::new();
            for (k, v) in entries {
                if v.is_unknown() {
                    unknowns.meet(&here.key(k))?;
                } else {
                    out.insert(k.clone(), scalar_to_json(v, t, &here.key(k))?);
                }
            }
            Json::Object(out)
        }
        (FieldKind::Single(children), v @ Value::Object(_)) => {
            Json::Object(object_to_json(children, v, here, unknowns)?)
        }
        (FieldKind::List(children), Value::List(items)) => {
            let mut out = Vec::new();
            for (i, v) in items.iter().enumerate() {
                if v.is_unknown() {
                    unknowns.meet(&here.index(i))?;
                } else {
                    let json = object_to_json(children, v, &here.index(i), unknowns)?;
                    out.push(Json::Object(json));
                }
            }
            Json::Array(out)
        }
        (FieldKind::Map(children), Value::Map(entries)) => {
            let mut out = Map::new();
            for (k, v) in entries {
                if v.is_unknown() {
                    unknowns.meet(&here.key(k))?;
                } else {
                    let json = object_to_json(children, v, &here.key(k), unknowns)?;
                    out.insert(k.clone(), Json::Object(json));
                }
            }
            Json::Object(out)
        }
        (_, other) => {
            return Err(Diagnostics::error_at(
                here.clone(),
                "Unexpected value",
                format!("value {other:?} does not fit the schema"),
            ));
        }
    };
    Ok(Some(json))
}

fn scalar_from_json(json: &Json, ty: &Type) -> Value {
    match (json, ty) {
        (Json::String(s), Type::String) => Value::String(s.clone()),
        (Json::Number(n), Type::String) => Value::String(n.to_string()),
        (Json::Bool(b), Type::Bool) => Value::Bool(*b),
        (Json::Number(n), Type::Number) => {
            Number::parse(&n.to_string()).map_or(Value::Null, Value::Number)
        }
        (Json::String(s), Type::Number) => Number::parse(s).map_or(Value::Null, Value::Number),
        _ => Value::Null,
    }
}

/// Reads the Terraform object value for `fields` from a JSON object (absent = null, or empty for
/// list and map blocks, which Terraform never sees as null). Properties not in `fields` are
/// ignored; values of the wrong JSON kind read as null (the CRD schema prevents them).
pub fn from_json(fields: &[Field], json: &Map<String, Json>) -> Value {
    let mut out = std::collections::BTreeMap::new();
    for field in fields {
        let item = json.get(&field.json_name).unwrap_or(&Json::Null);
        let value = match (&field.kind, item) {
            (FieldKind::List(_), Json::Null) => Value::List(vec![]),
            (FieldKind::Map(_), Json::Null) => Value::Map(Default::default()),
            (_, Json::Null) => Value::Null,
            (FieldKind::Scalar(t), j) => scalar_from_json(j, t),
            (FieldKind::IntOrString, j) => scalar_from_json(j, &Type::String),
            (FieldKind::Json, j) => Value::String(j.to_string()),
            (FieldKind::ScalarList(t), Json::Array(items)) => {
                Value::List(items.iter().map(|j| scalar_from_json(j, t)).collect())
            }
            (FieldKind::ScalarMap(t), Json::Object(entries)) => Value::Map(
                entries
                    .iter()
                    .map(|(k, j)| (k.clone(), scalar_from_json(j, t)))
                    .collect(),
            ),
            (FieldKind::Single(children), Json::Object(obj)) => from_json(children, obj),
            (FieldKind::List(children), Json::Array(items)) => Value::List(
                items
                    .iter()
                    .map(|j| from_json(children, j.as_object().unwrap_or(&Map::new())))
                    .collect(),
            ),
            (FieldKind::Map(children), Json::Object(entries)) => Value::Map(
                entries
                    .iter()
                    .map(|(k, j)| {
                        (
                            k.clone(),
                            from_json(children, j.as_object().unwrap_or(&Map::new())),
                        )
                    })
                    .collect(),
            ),
            (FieldKind::List(_), _) => Value::List(vec![]),
            (FieldKind::Map(_), _) => Value::Map(Default::default()),
            _ => Value::Null,
        };
        out.insert(field.tf_name.clone(), value);
    }
    Value::Object(out)
}
