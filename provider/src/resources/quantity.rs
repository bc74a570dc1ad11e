//! Kubernetes resource quantities (`500m`, `0.5`, `1.5Gi`, `1e3`) compared by amount in Terraform values, so a
//! semantically equal quantity written differently outside Terraform shows no diff (case P-01). The amounts come
//! from [`model_fleet_api::quantity`] (exact; the operator uses the same implementation).
//!
//! [`keep_written`] walks a state value along the CRD's OpenAPI schema and keeps the prior (user-written) form of
//! every `int-or-string` leaf whose new value is the same amount, and of every `number` leaf whose new value is the
//! same float64 (the object holds `0.3` for a configured `0.1 + 0.2`, case 4 of issue 24). [`keep_live`] does the
//! reverse before an update: the spec about to be applied takes the stored form of every leaf the plan found equal.

use std::borrow::Cow;

use serde_json::Value as Json;

use model_fleet_api::quantity::same_amount;

use super::fields::snake_case;
use crate::value::Value;

/// Replaces, in `new`, every `int-or-string` leaf (per the OpenAPI `schema` the value was derived
/// from, Terraform names in snake_case) that is the same amount as the leaf at the same place in
/// `prior` with the prior text. `prior` is the state as the user wrote it; `new` is what the
/// cluster holds.
pub fn keep_written(schema: &Json, prior: &Value, new: &mut Value) {
    keep_equal(schema, prior, new);
}

/// Replaces, in `body` (a spec as JSON, about to be applied by server-side apply), every `int-or-string` leaf (per
/// the OpenAPI `schema`, JSON names) that is the same amount as the leaf at the same place in `live` (the spec the
/// object holds) with the live JSON value, and every `number` leaf that is the same float64 with the live number.
///
/// The API server keeps what it was sent, and to server-side apply `"1"` and `1` differ: an object created from YAML
/// with `cpu: 1`, then imported, would see the configured `"1"` as a change the plan rightly did not show. That
/// change is a conflict with the field's owner, and on a TrainingRun, whose `container` is immutable, a refusal of
/// every update (a new user's trial, P-01's other direction).
pub fn keep_live(schema: &Json, live: &Json, body: &mut Json) {
    keep_equal(schema, live, body);
}

/// A value tree [`keep_equal`] walks along an OpenAPI schema: a Terraform value (attribute names in snake_case) or
/// JSON (the API's names).
trait Tree: Clone + PartialEq {
    /// A `number` leaf's nearest float64 (`None`: not a number, or beyond float64).
    fn float64(&self) -> Option<f64>;
    /// An `int-or-string` leaf's text (a JSON number's too).
    fn text(&self) -> Option<Cow<'_, str>>;
    /// The schema property `json_name` of an object.
    fn property(&self, json_name: &str) -> Option<&Self>;
    /// The schema property `json_name` of an object, to change.
    fn property_mut(&mut self, json_name: &str) -> Option<&mut Self>;
    /// A list's items.
    fn items(&self) -> Option<&[Self]>;
    /// A list's items, to change.
    fn items_mut(&mut self) -> Option<&mut [Self]>;
    /// A map's value at `key`.
    fn entry(&self, key: &str) -> Option<&Self>;
    /// A map's entries, to change.
    fn entries_mut(&mut self) -> Option<Vec<(&str, &mut Self)>>;
}

impl Tree for Value {
    fn float64(&self) -> Option<f64> {
        match self {
            Value::Number(n) => n.nearest_f64(),
            _ => None,
        }
    }
    fn text(&self) -> Option<Cow<'_, str>> {
        match self {
            Value::String(s) => Some(Cow::Borrowed(s)),
            _ => None,
        }
    }
    fn property(&self, json_name: &str) -> Option<&Self> {
        self.get(&snake_case(json_name))
    }
    fn property_mut(&mut self, json_name: &str) -> Option<&mut Self> {
        match self {
            Value::Object(attrs) => attrs.get_mut(&snake_case(json_name)),
            _ => None,
        }
    }
    fn items(&self) -> Option<&[Self]> {
        match self {
            Value::List(items) => Some(items),
            _ => None,
        }
    }
    fn items_mut(&mut self) -> Option<&mut [Self]> {
        match self {
            Value::List(items) => Some(items),
            _ => None,
        }
    }
    fn entry(&self, key: &str) -> Option<&Self> {
        match self {
            Value::Map(entries) => entries.get(key),
            _ => None,
        }
    }
    fn entries_mut(&mut self) -> Option<Vec<(&str, &mut Self)>> {
        match self {
            Value::Map(entries) => Some(entries.iter_mut().map(|(k, v)| (k.as_str(), v)).collect()),
            _ => None,
        }
    }
}

impl Tree for Json {
    fn float64(&self) -> Option<f64> {
        self.as_number().and_then(serde_json::Number::as_f64)
    }
    fn text(&self) -> Option<Cow<'_, str>> {
        match self {
            Json::String(s) => Some(Cow::Borrowed(s)),
            Json::Number(n) => Some(Cow::Owned(n.to_string())),
            _ => None,
        }
    }
    fn property(&self, json_name: &str) -> Option<&Self> {
        self.as_object()?.get(json_name)
    }
    fn property_mut(&mut self, json_name: &str) -> Option<&mut Self> {
        self.as_object_mut()?.get_mut(json_name)
    }
    fn items(&self) -> Option<&[Self]> {
        self.as_array().map(Vec::as_slice)
    }
    fn items_mut(&mut self) -> Option<&mut [Self]> {
        self.as_array_mut().map(Vec::as_mut_slice)
    }
    fn entry(&self, key: &str) -> Option<&Self> {
        self.as_object()?.get(key)
    }
    fn entries_mut(&mut self) -> Option<Vec<(&str, &mut Self)>> {
        let entries = self.as_object_mut()?;
        Some(entries.iter_mut().map(|(k, v)| (k.as_str(), v)).collect())
    }
}

/// Walks `schema` through `kept` and `target` together, replacing in `target` every `number` leaf that differs from
/// `kept`'s but is the same float64, and every `int-or-string` leaf that differs but is the same amount
/// ([`same_amount`]), with `kept`'s form. Lists are matched by index, maps and objects by name; what only one side
/// has is left alone.
fn keep_equal<T: Tree>(schema: &Json, kept: &T, target: &mut T) {
    let same = if schema.get("type").and_then(Json::as_str) == Some("number") {
        kept != target && matches!((kept.float64(), target.float64()), (Some(a), Some(b)) if a == b)
    } else if schema.get("x-kubernetes-int-or-string") == Some(&Json::Bool(true)) {
        kept != target
            && matches!((kept.text(), target.text()), (Some(a), Some(b)) if same_amount(&a, &b))
    } else {
        false
    };
    if same {
        *target = kept.clone();
    } else if let Some(properties) = schema.get("properties").and_then(Json::as_object) {
        for (name, sub) in properties {
            if let (Some(k), Some(t)) = (kept.property(name), target.property_mut(name)) {
                keep_equal(sub, k, t);
            }
        }
    } else if let Some(items) = schema.get("items") {
        if let (Some(k), Some(t)) = (kept.items(), target.items_mut()) {
            for (k, t) in k.iter().zip(t.iter_mut()) {
                keep_equal(items, k, t);
            }
        }
    } else if let Some(values) = schema.get("additionalProperties")
        && let Some(entries) = target.entries_mut()
    {
        for (key, t) in entries {
            if let Some(k) = kept.entry(key) {
                keep_equal(values, k, t);
            }
        }
    }
}

/// Whether `a` and `b` (values of the spec attributes `spec_schema` describes, at the resource's
/// top level) are equal once quantities are compared by amount.
pub fn spec_equal(spec_schema: &Json, a: &Value, b: &Value) -> bool {
    let mut b = b.clone();
    keep_written(spec_schema, a, &mut b);
    let Some(properties) = spec_schema.get("properties").and_then(Json::as_object) else {
        return true;
    };
    properties.keys().map(|k| snake_case(k)).all(|name| {
        let empty = |v: Option<&Value>| match v {
            None | Some(Value::Null) => true,
            Some(Value::List(l)) => l.is_empty(),
            Some(Value::Map(m)) => m.is_empty(),
            _ => false,
        };
        let (x, y) = (a.get(&name), b.get(&name));
        x == y || (empty(x) && empty(y))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> Json {
        serde_json::json!({"type": "object", "properties": {
            "image": {"type": "string"},
            "container": {"type": "object", "properties": {
                "resources": {"type": "object", "properties": {
                    "requests": {"type": "object", "additionalProperties": {"x-kubernetes-int-or-string": true}}
                }}
            }},
            "volumes": {"type": "array", "items": {"type": "object", "properties": {
                "sizeLimit": {"x-kubernetes-int-or-string": true}}}}
        }})
    }

    fn state(cpu: &str, size: &str, image: &str) -> Value {
        let requests = Value::Map([("cpu".to_string(), Value::string(cpu))].into());
        let resources = Value::Object([("requests".to_string(), requests)].into());
        let container = Value::Object([("resources".to_string(), resources)].into());
        let volume = Value::Object([("size_limit".to_string(), Value::string(size))].into());
        Value::Object(
            [
                ("image".to_string(), Value::string(image)),
                ("container".to_string(), container),
                ("volumes".to_string(), Value::List(vec![volume])),
            ]
            .into(),
        )
    }

    #[test]
    fn keeps_the_written_form_of_equal_quantities_only() {
        let prior = state("0.5", "1Gi", "a");
        let mut read = state("500m", "1024Mi", "a");
        keep_written(&schema(), &prior, &mut read);
        assert_eq!(read, prior);
        let mut changed = state("600m", "1024Mi", "a");
        keep_written(&schema(), &prior, &mut changed);
        assert_eq!(changed, state("600m", "1Gi", "a"));
        // Only int-or-string leaves are compared by amount.
        let prior = state("1", "1Gi", "1");
        let mut read = state("1", "1Gi", "1.0");
        keep_written(&schema(), &prior, &mut read);
        assert_eq!(read, state("1", "1Gi", "1.0"));
    }

    #[test]
    fn numbers_equal_as_float64_keep_the_written_form() {
        let schema =
            serde_json::json!({"type": "object", "properties": {"runtimeGiB": {"type": "number"}}});
        let number = |text: &str| {
            let n = crate::value::Number::parse(text).unwrap();
            Value::Object([("runtime_gib".to_string(), Value::Number(n))].into())
        };
        let written =
            number("0.3000000000000000000000000000000000000000000000000000000000000000001");
        let mut live = number("0.3");
        keep_written(&schema, &written, &mut live);
        assert_eq!(live, written);
        let mut other = number("0.31");
        keep_written(&schema, &written, &mut other);
        assert_eq!(other, number("0.31"));
    }

    // A new user's trial: a TrainingRun created from YAML with `cpu: 1` (a JSON number), imported, could not be
    // updated: the configured "1" changed the immutable container. The body takes the stored form of equal leaves.
    #[test]
    fn the_applied_spec_keeps_the_stored_form_of_equal_leaves() {
        let schema = serde_json::json!({"type": "object", "properties": {
            "container": {"type": "object", "properties": {"resources": {"type": "object", "properties": {
                "requests": {"type": "object", "additionalProperties": {"x-kubernetes-int-or-string": true}}}}}},
            "volumes": {"type": "array", "items": {"type": "object", "properties": {
                "sizeLimit": {"x-kubernetes-int-or-string": true}}}},
            "runtimeGiB": {"type": "number"},
            "image": {"type": "string"}}});
        let spec = |cpu: Json, memory: Json, size: Json, runtime: Json, image: &str| {
            serde_json::json!({"container": {"resources": {"requests": {"cpu": cpu, "memory": memory}}},
                "volumes": [{"sizeLimit": size}], "runtimeGiB": runtime, "image": image})
        };
        let live = spec(
            serde_json::json!(1),
            serde_json::json!("1Gi"),
            serde_json::json!("1024Mi"),
            serde_json::json!(15),
            "a",
        );
        let mut body = spec(
            serde_json::json!("1"),
            serde_json::json!("2Gi"),
            serde_json::json!("1Gi"),
            serde_json::json!(15.0),
            "b",
        );
        keep_live(&schema, &live, &mut body);
        // Equal amounts take the stored form; a different amount and other leaves stay as configured.
        assert_eq!(
            body,
            spec(
                serde_json::json!(1),
                serde_json::json!("2Gi"),
                serde_json::json!("1024Mi"),
                serde_json::json!(15),
                "b"
            )
        );
    }

    #[test]
    fn spec_equality_by_amount() {
        assert!(spec_equal(
            &schema(),
            &state("0.5", "1Gi", "a"),
            &state("500m", "1Gi", "a")
        ));
        assert!(!spec_equal(
            &schema(),
            &state("0.5", "1Gi", "a"),
            &state("0.5", "1Gi", "b")
        ));
    }
}
