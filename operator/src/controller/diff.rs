//! Pure "does this need a write?" checks behind the zero-writes rule (DESIGN.md section 5: a reconcile of an
//! unchanged object performs zero writes, counted in the audit log).
//!
//! Server-side apply of an unchanged object is a no-op for etcd but still a PATCH request, so the operator must not
//! send it. Two checks together decide, both on JSON:
//! - [`applied_hash`]: a hash of the desired object, stored in the child's [`APPLIED_HASH_ANNOTATION`]. A different
//!   hash means our intent changed (including fields we stopped setting, which only an apply removes).
//! - [`is_subset`]: every field we set is still present with an equal value in the live object (someone editing a
//!   field we own, e.g. `kubectl scale` on fixed replicas, is repaired). Fields the API server adds (defaults,
//!   status, managedFields) are ignored; absent equals `null`, `[]` and `{}` (Go's `omitempty`); quantities compare
//!   by value (`0.5` equals `500m`, `1Gi` equals `1024Mi`: [`model_fleet_api::quantity`], exact).

use model_fleet_api::quantity;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// Annotation holding [`applied_hash`] of the last object the operator applied.
pub const APPLIED_HASH_ANNOTATION: &str = "modelfleet.io/applied-hash";

/// Hex SHA-256 (first 16 bytes) of the canonical JSON of `desired` (serde_json maps are sorted, so the encoding is
/// stable across runs and restarts).
pub fn applied_hash(desired: &Value) -> String {
    let canonical = serde_json::to_vec(desired).unwrap_or_default();
    let digest = Sha256::digest(&canonical);
    digest[..16].iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether an apply of `desired` (which carries its hash annotation) must be sent, given the live object.
pub fn needs_apply(desired: &Value, live: Option<&Value>) -> bool {
    let Some(live) = live else { return true };
    let wanted = desired.pointer(&annotation_pointer());
    let have = live.pointer(&annotation_pointer());
    wanted.is_none() || wanted != have || !is_subset(desired, live)
}

fn annotation_pointer() -> String {
    format!(
        "/metadata/annotations/{}",
        APPLIED_HASH_ANNOTATION
            .replace('~', "~0")
            .replace('/', "~1")
    )
}

/// Whether every field set in `desired` has an equal value in `live` (see the module docs for the equalities).
/// Arrays must have the same length and match element by element.
pub fn is_subset(desired: &Value, live: &Value) -> bool {
    match (desired, live) {
        (Value::Object(want), Value::Object(have)) => {
            want.iter().all(|(key, value)| match have.get(key) {
                Some(other) => is_subset(value, other),
                None => is_empty(value),
            })
        }
        (Value::Object(want), Value::Null) => want.values().all(is_empty),
        (Value::Array(want), Value::Array(have)) => {
            want.len() == have.len() && want.iter().zip(have).all(|(w, h)| is_subset(w, h))
        }
        (Value::Array(want), Value::Null) => want.is_empty(),
        (Value::Null, _) => true,
        (Value::String(a), Value::String(b)) => quantity::same_amount(a, b),
        (Value::Number(a), Value::Number(b)) => a == b || a.as_f64() == b.as_f64(),
        (a, b) => a == b,
    }
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Array(items) => items.is_empty(),
        Value::Object(map) => map.values().all(is_empty),
        _ => false,
    }
}

/// Whether a status must be written: `desired` and `current` differ once condition `lastTransitionTime`s are
/// ignored and absent fields are treated like `null`. A missing current status always needs a write.
pub fn status_differs(current: Option<&Value>, desired: &Value) -> bool {
    let Some(current) = current else { return true };
    normalize_status(current) != normalize_status(desired)
}

fn normalize_status(status: &Value) -> Value {
    match status {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| {
                    if k == "conditions" {
                        (k.clone(), strip_transition_times(v))
                    } else {
                        (k.clone(), normalize_status(v))
                    }
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

fn strip_transition_times(conditions: &Value) -> Value {
    match conditions {
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|c| match c {
                    Value::Object(map) => Value::Object(
                        map.iter()
                            .filter(|(k, v)| k.as_str() != "lastTransitionTime" && !v.is_null())
                            .map(|(k, v)| (k.clone(), v.clone()))
                            .collect(),
                    ),
                    other => other.clone(),
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn server_added_fields_and_omitempty_do_not_count_as_changes() {
        let desired = json!({"spec": {"template": {"spec": {
            "containers": [{"name": "main", "image": "vllm:1", "args": [], "env": null}],
            "volumes": []
        }}}});
        let live = json!({"metadata": {"resourceVersion": "7"}, "spec": {"progressDeadlineSeconds": 600,
            "template": {"spec": {
                "containers": [{"name": "main", "image": "vllm:1", "imagePullPolicy": "IfNotPresent"}],
                "dnsPolicy": "ClusterFirst"
            }}}, "status": {"replicas": 1}});
        assert!(is_subset(&desired, &live));
    }

    #[test]
    fn a_changed_or_missing_value_or_list_length_counts() {
        let desired = json!({"spec": {"replicas": 2, "list": [1, 2]}});
        assert!(!is_subset(
            &desired,
            &json!({"spec": {"replicas": 4, "list": [1, 2]}})
        ));
        assert!(!is_subset(&desired, &json!({"spec": {"list": [1, 2]}})));
        assert!(!is_subset(
            &desired,
            &json!({"spec": {"replicas": 2, "list": [1, 2, 3]}})
        ));
        assert!(is_subset(
            &desired,
            &json!({"spec": {"replicas": 2, "list": [1, 2]}})
        ));
    }

    #[test]
    fn quantities_compare_by_value() {
        let desired = json!({"resources": {"limits": {"cpu": "0.5", "memory": "1Gi"}}});
        let live = json!({"resources": {"limits": {"cpu": "500m", "memory": "1024Mi"}}});
        assert!(is_subset(&desired, &live));
        let other = json!({"resources": {"limits": {"cpu": "600m", "memory": "1Gi"}}});
        assert!(!is_subset(&desired, &other));
        assert!(!is_subset(
            &json!({"image": "vllm"}),
            &json!({"image": "vllm2"})
        ));
    }

    #[test]
    fn needs_apply_when_hash_differs_or_owned_field_drifted() {
        let hash_of = |v: &Value| applied_hash(v);
        let mut desired =
            json!({"metadata": {"name": "a", "annotations": {}}, "spec": {"replicas": 2}});
        let hash = hash_of(&desired);
        desired["metadata"]["annotations"][APPLIED_HASH_ANNOTATION] = json!(hash);
        assert!(needs_apply(&desired, None));
        let live = desired.clone();
        assert!(!needs_apply(&desired, Some(&live)));
        let mut scaled = live.clone();
        scaled["spec"]["replicas"] = json!(4);
        assert!(needs_apply(&desired, Some(&scaled)));
        let mut old_hash = live.clone();
        old_hash["metadata"]["annotations"][APPLIED_HASH_ANNOTATION] = json!("0000");
        assert!(needs_apply(&desired, Some(&old_hash)));
    }

    #[test]
    fn hash_is_stable_and_key_order_independent() {
        let a = json!({"b": 1, "a": [1, 2]});
        let b: Value = serde_json::from_str(r#"{"a": [1, 2], "b": 1}"#).unwrap();
        assert_eq!(applied_hash(&a), applied_hash(&b));
        assert_eq!(applied_hash(&a).len(), 32);
        assert_ne!(
            applied_hash(&a),
            applied_hash(&json!({"b": 2, "a": [1, 2]}))
        );
    }

    #[test]
    fn status_diff_ignores_transition_times_and_nulls() {
        let current = json!({"observedGeneration": 2, "url": null, "conditions": [
            {"type": "Ready", "status": "False", "reason": "Progressing", "message": "",
             "lastTransitionTime": "2026-01-01T00:00:00Z", "observedGeneration": 2}]});
        let same = json!({"observedGeneration": 2, "conditions": [
            {"type": "Ready", "status": "False", "reason": "Progressing", "message": "",
             "lastTransitionTime": "2026-02-02T00:00:00Z", "observedGeneration": 2}]});
        assert!(!status_differs(Some(&current), &same));
        let mut changed = same.clone();
        changed["conditions"][0]["reason"] = json!("Unschedulable");
        assert!(status_differs(Some(&current), &changed));
        let mut new_generation = same.clone();
        new_generation["observedGeneration"] = json!(3);
        assert!(status_differs(Some(&current), &new_generation));
        assert!(status_differs(None, &same));
    }
}
