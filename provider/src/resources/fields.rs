//! Terraform schema derived from a custom resource's OpenAPI v3 schema (the CRD generated from the
//! shared API types), and the conversions between Terraform values and the object's `spec` JSON.
//!
//! Mapping (DESIGN.md section 6: one-to-one, snake_case, nested blocks):
//! * `string` / `integer` / `number` / `boolean` properties become attributes;
//!   `x-kubernetes-int-or-string` becomes a string attribute;
//! * arrays of scalars become `list(T)` attributes, arrays of objects become list blocks;
//! * objects with properties become single blocks (required ones with `min_items = 1`);
//! * maps (`additionalProperties`) of scalars become `map(T)` attributes, maps of objects become
//!   map blocks (`splits "train" { ... }`);
//! * anything else (free-form JSON) becomes a string attribute holding JSON text.
//!
//! Null and empty stay absent in the object (the CRDs carry no defaults, the spec stays exactly
//! as written), and reading maps only the properties the schema knows.

use serde_json::{Map, Value as Json};

use crate::diag::{AttrPath, Diagnostics};
use crate::schema::{Attribute, Block, NestedBlock, Nesting};
use crate::value::{Number, Type, Value};

/// One property of the custom resource, as Terraform sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    /// Terraform (snake_case) name.
    pub tf_name: String,
    /// Kubernetes (camelCase) JSON name.
    pub json_name: String,
    /// Shape.
    pub kind: FieldKind,
    /// Whether the API requires it.
    pub required: bool,
    /// From the OpenAPI description.
    pub description: String,
}

/// The Terraform shape of a property.
#[derive(Clone, Debug, PartialEq)]
pub enum FieldKind {
    /// A scalar attribute (`string`, `number` or `bool`).
    Scalar(Type),
    /// `int-or-string`: a string attribute that also accepts JSON numbers on read.
    IntOrString,
    /// `list(T)` attribute of scalars.
    ScalarList(Type),
    /// `map(T)` attribute of scalars.
    ScalarMap(Type),
    /// Free-form JSON, held as a JSON string attribute.
    Json,
    /// Single nested block.
    Single(Vec<Field>),
    /// List nested block.
    List(Vec<Field>),
    /// Map nested block.
    Map(Vec<Field>),
}

/// camelCase to snake_case; runs of capitals stay one word (`perGpuMemoryGiB` ->
/// `per_gpu_memory_gib`, `claimName` -> `claim_name`, `URI` -> `uri`).
pub fn snake_case(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::new();
    for (i, c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() {
            let prev_lower =
                i > 0 && (chars[i - 1].is_ascii_lowercase() || chars[i - 1].is_ascii_digit());
            // A capital that starts a word after an acronym (`HTTPRoute` -> `http_route`).
            let acronym_end = i > 0
                && chars[i - 1].is_ascii_uppercase()
                && chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase())
                && chars.get(i + 2).is_some_and(|n| n.is_ascii_lowercase());
            if (prev_lower && !is_unit_suffix(&chars, i)) || acronym_end {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(*c);
        }
    }
    out
}

/// `GiB`/`MiB` style units stay one word with the capital before them (`memoryGiB` -> `memory_gib`:
/// the `B` after `Gi` does not start a word).
fn is_unit_suffix(chars: &[char], i: usize) -> bool {
    chars[i] == 'B' && i >= 2 && chars[i - 1] == 'i' && chars[i - 2].is_ascii_uppercase()
}

fn scalar_type(schema: &Json) -> Option<Type> {
    if schema.get("x-kubernetes-int-or-string") == Some(&Json::Bool(true)) {
        return None;
    }
    match schema.get("type")?.as_str()? {
        "string" => Some(Type::String),
        "integer" | "number" => Some(Type::Number),
        "boolean" => Some(Type::Bool),
        _ => None,
    }
}

fn has_properties(schema: &Json) -> bool {
    schema
        .get("properties")
        .and_then(Json::as_object)
        .is_some_and(|p| !p.is_empty())
}

/// Derives the fields of an object schema (`properties` + `required`).
pub fn fields_from_openapi(schema: &Json) -> Vec<Field> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Json::as_array)
        .map(|r| r.iter().filter_map(Json::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = schema.get("properties").and_then(Json::as_object) else {
        return Vec::new();
    };
    properties
        .iter()
        .map(|(json_name, prop)| Field {
            tf_name: snake_case(json_name),
            json_name: json_name.clone(),
            kind: kind_of(prop),
            required: required.contains(&json_name.as_str()),
            description: prop
                .get("description")
                .and_then(Json::as_str)
                .unwrap_or_default()
                .to_string(),
        })
        .collect()
}

fn kind_of(prop: &Json) -> FieldKind {
    if prop.get("x-kubernetes-int-or-string") == Some(&Json::Bool(true)) {
        return FieldKind::IntOrString;
    }
    if let Some(t) = scalar_type(prop) {
        return FieldKind::Scalar(t);
    }
    match prop.get("type").and_then(Json::as_str) {
        Some("array") => {
            let items = prop.get("items").unwrap_or(&Json::Null);
            if let Some(t) = scalar_type(items) {
                FieldKind::ScalarList(t)
            } else if items.get("x-kubernetes-int-or-string") == Some(&Json::Bool(true)) {
                FieldKind::ScalarList(Type::String)
            } else if has_properties(items) {
                FieldKind::List(fields_from_openapi(items))
            } else {
                FieldKind::Json
            }
        }
        Some("object") if has_properties(prop) => FieldKind::Single(fields_from_openapi(prop)),
        Some("object") => match prop.get("additionalProperties") {
            // Maps of `int-or-string` (resource quantities): `map(string)`.
            Some(values) if values.get("x-kubernetes-int-or-string") == Some(&Json::Bool(true)) => {
                FieldKind::ScalarMap(Type::String)
            }
            Some(values) if scalar_type(values).is_some() => {
                FieldKind::ScalarMap(scalar_type(values).unwrap_or(Type::String))
            }
            Some(values) if has_properties(values) => FieldKind::Map(fields_from_openapi(values)),
            _ => FieldKind::Json,
        },
        _ => FieldKind::Json,
    }
}

/// The Terraform schema of `fields`: attributes and nested blocks, appended to `block`.
pub fn add_to_block(block: &mut Block, fields: &[Field]) {
    for field in fields {
        let attr = |ty: Type| {
            if field.required {
                Attribute::required(&field.tf_name, ty, &field.description)
            } else {
                Attribute::optional(&field.tf_name, ty, &field.description)
            }
        };
        let nested = |nesting: Nesting, children: &[Field]| {
            let mut body = Block {
                description: field.description.clone(),
                ..Block::default()
            };
            add_to_block(&mut body, children);
            NestedBlock {
                type_name: field.tf_name.clone(),
                block: body,
                nesting,
                // Terraform requires min == max (0 or 1) for single blocks, and 0/0 for maps.
                min_items: i64::from(field.required && nesting == Nesting::Single),
                max_items: i64::from(field.required && nesting == Nesting::Single),
            }
        };
        match &field.kind {
            FieldKind::Scalar(t) => block.attributes.push(attr(t.clone())),
            FieldKind::IntOrString | FieldKind::Json => block.attributes.push(attr(Type::String)),
            FieldKind::ScalarList(t) => block.attributes.push(attr(Type::list(t.clone()))),
            FieldKind::ScalarMap(t) => block.attributes.push(attr(Type::map(t.clone()))),
            FieldKind::Single(children) => block.blocks.push(nested(Nesting::Single, children)),
            FieldKind::List(children) => block.blocks.push(nested(Nesting::List, children)),
            FieldKind::Map(children) => block.blocks.push(nested(Nesting::Map, children)),
        }
    }
}

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

fn number_to_json(n: &Number, path: &AttrPath) -> Result<Json, Diagnostics> {
    if let Some(i) = n.as_i64() {
        return Ok(Json::from(i));
    }
    if let Some(u) = n.as_u64() {
        return Ok(Json::from(u));
    }
    n.as_exact_f64()
        .and_then(serde_json::Number::from_f64)
        .map(Json::Number)
        .ok_or_else(|| {
            Diagnostics::error_at(
                path.clone(),
                "Number out of range",
                format!("{n} cannot be represented exactly in a Kubernetes object"),
            )
        })
}

fn unknown_error(path: &AttrPath) -> Diagnostics {
    Diagnostics::error_at(
        path.clone(),
        "Value not known at apply time",
        "This attribute is still unknown; Terraform should resolve it before apply.",
    )
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
    let mut out = Map::new();
    for field in fields {
        let here = path.attr(&field.tf_name);
        let item = value.get(&field.tf_name).unwrap_or(&Value::Null);
        if item.is_unknown() {
            return Err(unknown_error(&here));
        }
        let json = match (&field.kind, item) {
            (_, Value::Null) => continue,
            (FieldKind::Scalar(t), v) => scalar_to_json(v, t, &here)?,
            (FieldKind::IntOrString, v) => scalar_to_json(v, &Type::String, &here)?,
            (FieldKind::Json, Value::String(text)) => serde_json::from_str(text)
                .map_err(|e| Diagnostics::error_at(here.clone(), "Invalid JSON", e.to_string()))?,
            (FieldKind::ScalarList(t), Value::List(items)) => Json::Array(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| {
                        if v.is_unknown() {
                            return Err(unknown_error(&here.index(i)));
                        }
                        scalar_to_json(v, t, &here.index(i))
                    })
                    .collect::<Result<_, _>>()?,
            ),
            (FieldKind::ScalarMap(t), Value::Map(entries)) => Json::Object(
                entries
                    .iter()
                    .map(|(k, v)| {
                        if v.is_unknown() {
                            return Err(unknown_error(&here.key(k)));
                        }
                        Ok((k.clone(), scalar_to_json(v, t, &here.key(k))?))
                    })
                    .collect::<Result<_, Diagnostics>>()?,
            ),
            (FieldKind::Single(children), v @ Value::Object(_)) => {
                Json::Object(to_json(children, v, &here)?)
            }
            (FieldKind::List(children), Value::List(items)) => {
                if items.is_empty() {
                    continue;
                }
                Json::Array(
                    items
                        .iter()
                        .enumerate()
                        .map(|(i, v)| to_json(children, v, &here.index(i)).map(Json::Object))
                        .collect::<Result<_, _>>()?,
                )
            }
            (FieldKind::Map(children), Value::Map(entries)) => {
                if entries.is_empty() {
                    continue;
                }
                Json::Object(
                    entries
                        .iter()
                        .map(|(k, v)| {
                            Ok((k.clone(), Json::Object(to_json(children, v, &here.key(k))?)))
                        })
                        .collect::<Result<_, Diagnostics>>()?,
                )
            }
            (_, other) => {
                return Err(Diagnostics::error_at(
                    here,
                    "Unexpected value",
                    format!("value {other:?} does not fit the schema"),
                ));
            }
        };
        out.insert(field.json_name.clone(), json);
    }
    Ok(out)
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

/// Maps a Kubernetes field path under the object (`spec.source.uri`, `spec.splits[train].uri`)
/// to the Terraform attribute path, when `fields` (rooted at `spec`) know it.
pub fn attr_path_for(fields: &[Field], k8s_path: &str) -> Option<AttrPath> {
    let rest = k8s_path.strip_prefix("spec.")?;
    let mut path = AttrPath::root();
    let mut current = fields;
    for segment in rest.split('.') {
        let (name, key) = match segment.split_once('[') {
            Some((n, k)) => (n, Some(k.trim_end_matches(']'))),
            None => (segment, None),
        };
        let field = current.iter().find(|f| f.json_name == name)?;
        path = path.attr(&field.tf_name);
        if let Some(key) = key {
            path = match key.parse::<usize>() {
                Ok(i) if matches!(field.kind, FieldKind::List(_) | FieldKind::ScalarList(_)) => {
                    path.index(i)
                }
                _ => path.key(key.trim_matches('"')),
            };
        }
        current = match &field.kind {
            FieldKind::Single(c) | FieldKind::List(c) | FieldKind::Map(c) => c,
            _ => &[],
        };
    }
    Some(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snake_case_names() {
        for (camel, snake) in [
            ("allowedServiceAccounts", "allowed_service_accounts"),
            ("claimName", "claim_name"),
            ("perGpuMemoryGiB", "per_gpu_memory_gib"),
            ("runtimeGiB", "runtime_gib"),
            ("uri", "uri"),
            ("HTTPRoute", "http_route"),
            ("pathPrefix", "path_prefix"),
            ("ttlSecondsAfterFinished", "ttl_seconds_after_finished"),
            ("idleReplicaCount", "idle_replica_count"),
        ] {
            assert_eq!(snake_case(camel), snake, "{camel}");
        }
    }

    fn sample_schema() -> Json {
        serde_json::json!({
            "type": "object",
            "required": ["version", "source"],
            "properties": {
                "version": {"type": "string", "description": "v"},
                "source": {"type": "object", "required": ["uri"], "properties": {
                    "uri": {"type": "string"}, "digest": {"type": "string", "nullable": true}}},
                "splits": {"type": "object", "additionalProperties": {"type": "object", "required": ["uri"], "properties": {
                    "uri": {"type": "string"}, "records": {"type": "integer", "format": "int64"}}}},
                "allowedServiceAccounts": {"type": "array", "items": {"type": "string"}},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "cpu": {"x-kubernetes-int-or-string": true},
                "ports": {"type": "array", "items": {"type": "object", "properties": {"port": {"type": "integer"}}}},
                "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
            }
        })
    }

    #[test]
    fn derives_attributes_and_blocks() {
        let fields = fields_from_openapi(&sample_schema());
        let mut block = Block::default();
        add_to_block(&mut block, &fields);
        assert!(block.attribute("version").unwrap().required);
        assert_eq!(
            block.attribute("allowed_service_accounts").unwrap().ty,
            Type::list(Type::String)
        );
        assert_eq!(
            block.attribute("labels").unwrap().ty,
            Type::map(Type::String)
        );
        assert_eq!(block.attribute("cpu").unwrap().ty, Type::String);
        assert_eq!(block.attribute("extra").unwrap().ty, Type::String);
        let source = block.nested("source").unwrap();
        assert_eq!(
            (source.nesting, source.min_items, source.max_items),
            (Nesting::Single, 1, 1)
        );
        assert!(source.block.attribute("uri").unwrap().required);
        assert!(source.block.attribute("digest").unwrap().optional);
        assert_eq!(block.nested("splits").unwrap().nesting, Nesting::Map);
        assert_eq!(block.nested("ports").unwrap().nesting, Nesting::List);
        assert_eq!(block.invariant_violations(""), Vec::<String>::new());
    }

    #[test]
    fn json_round_trip_keeps_absent_fields_absent() {
        let fields = fields_from_openapi(&sample_schema());
        let spec = serde_json::json!({
            "version": "3",
            "source": {"uri": "s3://b/x"},
            "splits": {"train": {"uri": "s3://b/train", "records": 12345678901i64}},
            "allowedServiceAccounts": ["trainer"],
            "cpu": 2,
            "extra": {"a": [1, 2]}
        });
        let value = from_json(&fields, spec.as_object().unwrap());
        assert_eq!(value.get("ports"), Some(&Value::List(vec![])));
        assert_eq!(value.get("labels"), Some(&Value::Null));
        assert_eq!(value.get("cpu"), Some(&Value::string("2")));
        let back = to_json(&fields, &value, &AttrPath::root()).unwrap();
        let mut expected = spec.as_object().unwrap().clone();
        expected.insert("cpu".into(), Json::String("2".into()));
        assert_eq!(back, expected);
    }

    #[test]
    fn unknown_at_apply_is_reported_with_its_path() {
        let fields = fields_from_openapi(&sample_schema());
        let mut value = from_json(
            &fields,
            serde_json::json!({"version": "1"}).as_object().unwrap(),
        );
        if let Value::Object(attrs) = &mut value {
            attrs.insert(
                "allowed_service_accounts".into(),
                Value::List(vec![Value::Unknown]),
            );
        }
        let err = to_json(&fields, &value, &AttrPath::root()).unwrap_err();
        assert_eq!(
            err.0[0].path.as_ref().unwrap().to_string(),
            "allowed_service_accounts[0]"
        );
    }

    #[test]
    fn kubernetes_paths_map_to_attribute_paths() {
        let fields = fields_from_openapi(&sample_schema());
        assert_eq!(
            attr_path_for(&fields, "spec.source.uri")
                .unwrap()
                .to_string(),
            "source.uri"
        );
        assert_eq!(
            attr_path_for(&fields, "spec.splits[train].uri")
                .unwrap()
                .to_string(),
            "splits[\"train\"].uri"
        );
        assert_eq!(
            attr_path_for(&fields, "spec.allowedServiceAccounts[0]")
                .unwrap()
                .to_string(),
            "allowed_service_accounts[0]"
        );
        assert_eq!(attr_path_for(&fields, "metadata.name"), None);
    }
}
