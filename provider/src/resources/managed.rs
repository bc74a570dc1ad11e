//! Which parts of an object's `spec` belong to us: the server-side apply field sets
//! (`metadata.managedFields[].fieldsV1`) of our field manager.
//!
//! Reading only managed fields keeps fields added by other managers (kubectl, controllers) out of
//! Terraform state, where they would otherwise plan a removal that server-side apply cannot
//! perform (we do not own them), i.e. a permanent diff.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry;
use serde_json::{Map, Value as Json};

/// The union of the `f:spec` field sets that `manager` owns (any operation), or `None` when it
/// owns nothing under `spec`.
pub fn owned_spec_fields(entries: &[ManagedFieldsEntry], manager: &str) -> Option<Json> {
    let mut union: Option<Json> = None;
    for entry in entries
        .iter()
        .filter(|e| e.manager.as_deref() == Some(manager))
    {
        let Some(spec) = entry.fields_v1.as_ref().and_then(|f| f.0.get("f:spec")) else {
            continue;
        };
        union = Some(match union {
            None => spec.clone(),
            Some(existing) => merge(existing, spec),
        });
    }
    union
}

fn merge(mut a: Json, b: &Json) -> Json {
    if let (Json::Object(am), Json::Object(bm)) = (&mut a, b) {
        for (k, v) in bm {
            let merged = match am.remove(k) {
                Some(existing) => merge(existing, v),
                None => v.clone(),
            };
            am.insert(k.clone(), merged);
        }
    }
    a
}

/// Keeps the parts of `value` listed in the field set `owned` (`{"f:name": {...}}`). A set with
/// no `f:` children owns the whole value (leaves, atomic lists and structs).
pub fn prune(value: &Json, owned: &Json) -> Json {
    let children: Map<String, Json> = owned
        .as_object()
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| {
                    k.strip_prefix("f:")
                        .map(|name| (name.to_string(), v.clone()))
                })
                .collect()
        })
        .unwrap_or_default();
    match value {
        Json::Object(fields) if !children.is_empty() => Json::Object(
            fields
                .iter()
                .filter_map(|(k, v)| children.get(k).map(|set| (k.clone(), prune(v, set))))
                .collect(),
        ),
        _ => value.clone(),
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::FieldsV1;
    use serde_json::json;

    use super::*;

    fn entry(manager: &str, fields: Json) -> ManagedFieldsEntry {
        ManagedFieldsEntry {
            manager: Some(manager.into()),
            operation: Some("Apply".into()),
            fields_v1: Some(FieldsV1(fields)),
            ..ManagedFieldsEntry::default()
        }
    }

    #[test]
    fn keeps_only_our_fields() {
        let spec = json!({
            "version": "3",
            "description": "added by kubectl",
            "source": {"uri": "s3://x", "digest": "sha256:1"},
            "splits": {"train": {"uri": "s3://t"}, "extra": {"uri": "s3://e"}},
            "allowedServiceAccounts": ["a", "b"]
        });
        let entries = [
            entry(
                "terraform-modelfleet",
                json!({"f:spec": {
                "f:version": {}, "f:source": {"f:uri": {}},
                "f:splits": {"f:train": {".": {}, "f:uri": {}}}}}),
            ),
            entry(
                "terraform-modelfleet",
                json!({"f:spec": {"f:allowedServiceAccounts": {}}}),
            ),
            entry(
                "kubectl-edit",
                json!({"f:spec": {"f:description": {}, "f:source": {"f:digest": {}}}}),
            ),
        ];
        let owned = owned_spec_fields(&entries, "terraform-modelfleet").unwrap();
        assert_eq!(
            prune(&spec, &owned),
            json!({
                "version": "3",
                "source": {"uri": "s3://x"},
                "splits": {"train": {"uri": "s3://t"}},
                "allowedServiceAccounts": ["a", "b"]
            })
        );
        assert_eq!(owned_spec_fields(&entries, "nobody"), None);
    }
}
