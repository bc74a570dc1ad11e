//! Schema validation without an API server: walks a manifest against the generated CRD's
//! structural schema (types, required, enums, ranges, lengths, patterns, formats, unknown fields, and the
//! resource-requirements rules of [`resources`]) and
//! reports errors in the API server's words and field paths, e.g.
//! `spec.replicas.min: Invalid value: -1: spec.replicas.min in body should be greater than or equal to 0`.
//! The CRDs' CEL rules (`x-kubernetes-validations`) are evaluated by [`cel`] (a CEL runtime, `kube-cel`), after
//! this walk passes; both are pure, so the operator's `render -f` and the provider's `terraform validate` / `plan`
//! use them. The API server stays the authority.

pub mod cel;
pub mod format;
pub mod patterns;
pub mod resources;

use std::fmt;
use std::sync::OnceLock;

use serde_json::Value;

/// One invalid field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    /// Field path as the API server writes it (`spec.volumes[0].name`).
    pub path: String,
    /// What is wrong, e.g. `Required value`, `Unsupported value: "x": supported values: ...`.
    pub message: String,
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// The CRDs' openAPIV3Schemas by kind, embedded at build time from the checked-in CRDs (see `build.rs`: the same
/// schemas the types generate, in a fraction of the time).
fn schemas() -> &'static Vec<(String, Value)> {
    static SCHEMAS: OnceLock<Vec<(String, Value)>> = OnceLock::new();
    SCHEMAS.get_or_init(|| {
        let embedded: serde_json::Map<String, Value> =
            serde_json::from_str(include_str!(concat!(env!("OUT_DIR"), "/schemas.json")))
                .expect("build.rs writes a JSON object");
        embedded.into_iter().collect()
    })
}

/// The openAPIV3Schema of `kind` (`InferenceService`, `TrainingRun`, `Dataset`) as JSON.
pub fn schema_of(kind: &str) -> Option<&'static Value> {
    schemas().iter().find(|(k, _)| k == kind).map(|(_, s)| s)
}

/// Validates a whole manifest's structure (`apiVersion`, `kind`, `metadata.name`, `spec` against
/// the schema: types, required, enums, ranges, lengths, patterns, unknown fields). `status` is
/// ignored, as on create. An empty result means valid.
pub fn validate_schema(manifest: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let kind = manifest
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let Some(schema) = schema_of(kind) else {
        errs.push(FieldError {
            path: "kind".into(),
            message: format!("Unsupported value: {kind:?}: supported values: \"InferenceService\", \"TrainingRun\", \"Dataset\""),
        });
        return errs;
    };
    if manifest.get("apiVersion").and_then(Value::as_str) != Some(crate::API_VERSION) {
        errs.push(FieldError {
            path: "apiVersion".into(),
            message: format!(
                "Unsupported value: {}: supported values: \"{}\"",
                manifest.get("apiVersion").unwrap_or(&Value::Null),
                crate::API_VERSION
            ),
        });
    }
    if manifest
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        errs.push(FieldError {
            path: "metadata.name".into(),
            message: "Required value: name is required".into(),
        });
    }
    match (manifest.get("spec"), schema.pointer("/properties/spec")) {
        (Some(spec), Some(spec_schema)) => walk(spec_schema, spec, "spec", &mut errs),
        (None, _) => errs.push(FieldError {
            path: "spec".into(),
            message: "Required value".into(),
        }),
        _ => {}
    }
    errs
}

/// Validates `value` against `schema` (a structural schema node) at `path`.
pub fn validate_value(schema: &Value, value: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    walk(schema, value, path, &mut errs);
    errs
}

fn invalid(path: &str, value: &Value, detail: String) -> FieldError {
    FieldError {
        path: path.to_string(),
        message: format!("Invalid value: {value}: {detail}"),
    }
}

fn type_matches(t: &str, v: &Value) -> bool {
    match t {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "integer" => v.is_i64() || v.is_u64(),
        "number" => v.is_number(),
        "boolean" => v.is_boolean(),
        _ => true,
    }
}

fn walk(schema: &Value, value: &Value, path: &str, errs: &mut Vec<FieldError>) {
    if value.is_null() {
        if schema.get("nullable") != Some(&Value::Bool(true)) {
            errs.push(invalid(
                path,
                value,
                format!("{path} in body must not be null"),
            ));
        }
        return;
    }
    if schema.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) {
        check_quantity(schema, value, path, errs);
        return;
    }
    if let Some(t) = schema.get("type").and_then(Value::as_str)
        && !type_matches(t, value)
    {
        errs.push(invalid(
            path,
            value,
            format!("{path} in body must be of type {t}"),
        ));
        return;
    }
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
        && !allowed.contains(value)
    {
        let list: Vec<String> = allowed.iter().map(Value::to_string).collect();
        errs.push(FieldError {
            path: path.into(),
            message: format!(
                "Unsupported value: {value}: supported values: {}",
                list.join(", ")
            ),
        });
    }
    if let Some(n) = value.as_f64() {
        check_number(schema, value, n, path, errs);
    }
    if let Some(s) = value.as_str() {
        check_string(schema, value, s, path, errs);
    }
    if let Some(items) = value.as_array() {
        check_array(schema, value, items, path, errs);
    }
    if let Some(obj) = value.as_object() {
        check_object(schema, obj, path, errs);
    }
}

/// `minimum`, `maximum`.
fn check_number(schema: &Value, value: &Value, n: f64, path: &str, errs: &mut Vec<FieldError>) {
    if let Some(min) = schema
        .get("minimum")
        .and_then(Value::as_f64)
        .filter(|m| n < *m)
    {
        errs.push(invalid(
            path,
            value,
            format!("{path} in body should be greater than or equal to {min}"),
        ));
    }
    if let Some(max) = schema
        .get("maximum")
        .and_then(Value::as_f64)
        .filter(|m| n > *m)
    {
        errs.push(invalid(
            path,
            value,
            format!("{path} in body should be less than or equal to {max}"),
        ));
    }
}

/// An int-or-string field: every one of the Model Fleet API is a Kubernetes quantity (resources, `sizeLimit`). The
/// grammar is the API server's own ([`crate::quantity::check`]), so what passes here decodes there; each is an amount
/// Kubernetes refuses below zero on the pod (`ValidateResourceQuantityValue`, and `sizeLimit`'s "must be a valid
/// resource quantity"). The CRD states a looser form of both (`pattern` [`crate::names::QUANTITY_PATTERN`],
/// `minimum: 0`): when one of those fails too, the message starts with the API server's words for it.
fn check_quantity(schema: &Value, value: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let (text, api_server) = match value {
        Value::String(text) => {
            let pattern = schema.get("pattern").and_then(Value::as_str);
            let refused = pattern.filter(|p| patterns::is_match(p, text) == Some(false));
            (
                text.clone(),
                refused.map(|p| format!("in body should match '{p}'")),
            )
        }
        _ if value.is_i64() || value.is_u64() => {
            let minimum = schema.get("minimum").and_then(Value::as_f64);
            let below = minimum.filter(|m| value.as_f64().is_some_and(|v| v < *m));
            (
                value.to_string(),
                below.map(|m| format!("in body should be greater than or equal to {m}")),
            )
        }
        _ => {
            errs.push(invalid(
                path,
                value,
                format!("{path} in body must be of type integer or string"),
            ));
            return;
        }
    };
    let ours = match crate::quantity::check(&text) {
        Err(err) => Some(format!(
            "must be a Kubernetes quantity such as 500m, 2, 1.5Gi or 1e3: {err}"
        )),
        Ok(()) if crate::quantity::is_negative(&text) => Some(
            "must not be negative (Kubernetes refuses it on the pod): use 0 or more".to_owned(),
        ),
        Ok(()) => None,
    };
    let detail = match (api_server, ours) {
        (None, None) => return,
        (Some(words), Some(ours)) => format!("{path} {words}: {ours}"),
        (None, Some(ours)) => format!("{path} {ours}"),
        // Not expected (a unit test holds the pattern to taking every quantity not negative), but the API server is
        // the authority: its refusal is reported.
        (Some(words), None) => {
            format!("{path} {words}: a Kubernetes quantity, not negative, e.g. 500m, 2 or 16Gi")
        }
    };
    errs.push(invalid(path, value, detail));
}

/// `minLength`, `maxLength`, `format` ([`format::check`]: `date-time`), else `pattern`.
fn check_string(schema: &Value, value: &Value, s: &str, path: &str, errs: &mut Vec<FieldError>) {
    let len = s.chars().count() as u64;
    if let Some(min) = schema
        .get("minLength")
        .and_then(Value::as_u64)
        .filter(|m| len < *m)
    {
        errs.push(invalid(
            path,
            value,
            format!("{path} in body should be at least {min} chars long"),
        ));
    }
    if let Some(max) = schema
        .get("maxLength")
        .and_then(Value::as_u64)
        .filter(|m| len > *m)
    {
        errs.push(FieldError {
            path: path.into(),
            message: format!("Too long: may not be more than {max} bytes"),
        });
    }
    // One error for a text that breaks both (`expiresAt: tomorrow`): the format's, which says what to write; the API
    // server lists both.
    if let Some(f) = schema.get("format").and_then(Value::as_str)
        && let Err(why) = format::check(f, s)
    {
        errs.push(invalid(path, value, format!("{path} {why}")));
    } else if let Some(p) = schema.get("pattern").and_then(Value::as_str)
        && patterns::is_match(p, s) == Some(false)
    {
        // The API server's words, then what the regex asks for ([`patterns::meaning`]).
        let meaning = patterns::meaning(p).map_or_else(String::new, |m| format!(": {m}"));
        errs.push(invalid(
            path,
            value,
            format!("{path} in body should match '{p}'{meaning}"),
        ));
    }
}

/// `minItems`, `maxItems`, then every item.
fn check_array(
    schema: &Value,
    value: &Value,
    items: &[Value],
    path: &str,
    errs: &mut Vec<FieldError>,
) {
    if let Some(min) = schema
        .get("minItems")
        .and_then(Value::as_u64)
        .filter(|m| (items.len() as u64) < *m)
    {
        errs.push(invalid(
            path,
            value,
            format!("{path} in body should have at least {min} items"),
        ));
    }
    if let Some(max) = schema
        .get("maxItems")
        .and_then(Value::as_u64)
        .filter(|m| items.len() as u64 > *m)
    {
        errs.push(FieldError {
            path: path.into(),
            message: format!("Too many: {}: must have at most {max} items", items.len()),
        });
    }
    if let Some(item_schema) = schema.get("items") {
        for (i, item) in items.iter().enumerate() {
            walk(item_schema, item, &format!("{path}[{i}]"), errs);
        }
    }
}

/// `maxProperties`, `required`, then every property (unknown ones refused unless the schema preserves them), then
/// the resource-requirements rules of [`resources`] on a `requests`/`limits` object.
fn check_object(
    schema: &Value,
    obj: &serde_json::Map<String, Value>,
    path: &str,
    errs: &mut Vec<FieldError>,
) {
    if let Some(max) = schema
        .get("maxProperties")
        .and_then(Value::as_u64)
        .filter(|m| obj.len() as u64 > *m)
    {
        errs.push(FieldError {
            path: path.into(),
            message: format!("Too many: {}: must have at most {max} items", obj.len()),
        });
    }
    for req in schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        if !obj.contains_key(req) {
            errs.push(FieldError {
                path: format!("{path}.{req}"),
                message: "Required value".into(),
            });
        }
    }
    let props = schema.get("properties").and_then(Value::as_object);
    let additional = schema.get("additionalProperties").filter(|a| a.is_object());
    for (key, v) in obj {
        let child_path = format!("{path}.{key}");
        if let Some(s) = props.and_then(|p| p.get(key)) {
            walk(s, v, &child_path, errs);
        } else if let Some(s) = additional {
            walk(s, v, &child_path, errs);
        } else if schema.get("x-kubernetes-preserve-unknown-fields") != Some(&Value::Bool(true)) {
            errs.push(FieldError {
                path: child_path.clone(),
                message: format!("unknown field \"{child_path}\""),
            });
        }
    }
    resources::check(schema, obj, path, errs);
    resources::check_gpu(schema, obj, path, errs);
}
