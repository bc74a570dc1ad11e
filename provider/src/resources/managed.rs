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

/// The parts of `live` at the paths where `prior` (the state's spec as JSON) holds a value: objects are followed key
/// by key, anything else (scalars, lists) is taken whole; null values and empty lists in `prior` hold nothing.
///
/// A field Terraform set that another manager then changed is no longer in our field set, but it is still ours to
/// show: it is read at the path the state holds. A field another manager added beside ours (a key the state never
/// held) is not, because an apply cannot remove it (a permanent diff).
pub fn held(live: &Json, prior: &Json) -> Option<Json> {
    match (live, prior) {
        (Json::Object(live), Json::Object(prior)) => Some(Json::Object(
            prior
                .iter()
                .filter(|(_, value)| {
                    !value.is_null() && value.as_array().is_none_or(|a| !a.is_empty())
                })
                .filter_map(|(key, value)| Some((key.clone(), held(live.get(key)?, value)?)))
                .collect(),
        )),
        _ => Some(live.clone()),
    }
}

/// What a refresh shows of the live `spec`: the fields in our field set `owned` ([`prune`]) and those the state's
/// spec `prior` holds ([`held`]), merged.
pub fn visible(spec: &Json, owned: Option<&Json>, prior: &Json) -> Map<String, Json> {
    let mut shown = owned.map_or_else(|| Json::Object(Map::new()), |set| prune(spec, set));
    if let Some(held) = held(spec, prior) {
        shown = merge(shown, &held);
    }
    match shown {
        Json::Object(fields) => fields,
        _ => Map::new(),
    }
}

/// Removes from `body` (the planned spec an apply is about to send) every field the configuration's spec
/// `configured` does not set (absent or null; an empty list is set) that our field set `owned` does not hold either.
/// Such a field is in the plan only because `lifecycle { ignore_changes }` kept its prior value: sent while we own it,
/// it stays (left out, server-side apply would remove it); sent while another manager owns it (after an import, or
/// after it took the field with `--force-conflicts`), it would make us a co-owner that the other manager then
/// conflicts with. Objects (structs and maps, whose field sets list each key) are followed key by key, configured or
/// not; anything else (scalars, lists) is kept whole when it is configured or owned.
pub fn drop_unconfigured(body: &mut Json, configured: &Json, owned: Option<&Json>) {
    let Json::Object(fields) = body else {
        return;
    };
    fields.retain(|key, value| {
        let set = owned.and_then(|o| o.get(format!("f:{key}")));
        let there = configured.get(key).filter(|c| !c.is_null());
        if value.is_object() {
            drop_unconfigured(value, there.unwrap_or(&Json::Null), set);
        }
        there.is_some() || set.is_some()
    });
}

/// The dotted paths (`model.servedName`) of object keys in the live `spec` that the applied `desired` spec leaves out:
/// fields other managers own, which a server-side apply keeps (it removes only fields its own manager set before).
/// Lists are compared as wholes elsewhere and are not entered.
pub fn kept_by_others(spec: &Json, desired: &Json) -> Vec<String> {
    let mut kept = Vec::new();
    collect_kept(spec, desired, "", &mut kept);
    kept
}

fn collect_kept(live: &Json, desired: &Json, at: &str, kept: &mut Vec<String>) {
    let (Json::Object(live), Json::Object(desired)) = (live, desired) else {
        return;
    };
    for (key, value) in live {
        let path = if at.is_empty() {
            key.clone()
        } else {
            format!("{at}.{key}")
        };
        match desired.get(key) {
            None | Some(Json::Null) => kept.push(path),
            Some(wanted) => collect_kept(value, wanted, &path, kept),
        }
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::FieldsV1;
    use serde_json::json;

    use super::*;

    // A hunt's finding: with the body taken from the plan, an ignored field the configuration does not set was sent
    // after an import, making us a co-owner of a field another manager owns.
    #[test]
    fn fields_the_configuration_leaves_out_are_sent_only_while_we_own_them() {
        let body = json!({"intent": "active", "model": {"name": "m", "revision": "r"},
            "replicas": {"min": 1, "max": 3}, "container": {"image": "i", "resources": {"requests": {"cpu": "1"}}}});
        let configured = json!({"model": {"name": "m"}, "replicas": {"max": 3},
            "container": {"image": "i", "resources": {"requests": {}}}});
        // After an import: we own nothing, so only what the configuration sets is sent.
        let mut after_import = body.clone();
        drop_unconfigured(&mut after_import, &configured, None);
        assert_eq!(
            after_import,
            json!({"model": {"name": "m"}, "replicas": {"max": 3}, "container": {"image": "i",
                "resources": {"requests": {}}}})
        );
        // We wrote intent, model.revision and requests.cpu before: they stay in the body, so they stay on the object.
        let owned = json!({"f:intent": {}, "f:model": {"f:name": {}, "f:revision": {}},
            "f:replicas": {"f:max": {}}, "f:container": {"f:image": {}, "f:resources": {"f:requests": {"f:cpu": {}}}}});
        let mut ours = body.clone();
        drop_unconfigured(&mut ours, &configured, Some(&owned));
        assert_eq!(
            ours,
            json!({"intent": "active", "model": {"name": "m", "revision": "r"}, "replicas": {"max": 3},
                "container": {"image": "i", "resources": {"requests": {"cpu": "1"}}}})
        );
        // A reviewer's findings: a configured empty list is set (`args = []` must reach the object on create), and
        // an unconfigured object we own only part of is followed key by key (another manager took `max`).
        let mut empty = json!({"container": {"image": "i", "args": []}});
        drop_unconfigured(
            &mut empty,
            &json!({"container": {"image": "i", "args": []}}),
            None,
        );
        assert_eq!(empty, json!({"container": {"image": "i", "args": []}}));
        let mut partly = json!({"replicas": {"min": 1, "max": 5}});
        drop_unconfigured(
            &mut partly,
            &json!({}),
            Some(&json!({"f:replicas": {"f:min": {}}})),
        );
        assert_eq!(partly, json!({"replicas": {"min": 1}}));
        // A list we own is kept whole, whatever its field set lists inside.
        let mut list = json!({"env": [{"name": "A", "value": "1"}]});
        let owned = json!({"f:env": {"k:{\"name\":\"A\"}": {"f:value": {}}}});
        drop_unconfigured(&mut list, &json!({}), Some(&owned));
        assert_eq!(list, json!({"env": [{"name": "A", "value": "1"}]}));
    }

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

    #[test]
    fn a_field_another_manager_added_beside_ours_is_not_shown() {
        // Terraform set model.name; kubectl added model.servedName (the trial's import of an object made by hand).
        let spec =
            json!({"model": {"name": "m", "servedName": "legacy"}, "container": {"image": "i"}});
        let owned = json!({"f:model": {"f:name": {}}, "f:container": {"f:image": {}}});
        let prior = json!({"model": {"name": "m"}, "container": {"image": "i"}});
        assert_eq!(
            Json::Object(visible(&spec, Some(&owned), &prior)),
            json!({"model": {"name": "m"}, "container": {"image": "i"}})
        );
        // A field Terraform set that kubectl changed (so kubectl owns it now) is still shown: drift.
        let taken = json!({"f:container": {"f:image": {}}});
        let changed = json!({"model": {"name": "other", "servedName": "legacy"}, "container": {"image": "i"}});
        assert_eq!(
            Json::Object(visible(&changed, Some(&taken), &prior)),
            json!({"model": {"name": "other"}, "container": {"image": "i"}})
        );
        // Lists are held whole; nulls and empty lists in the state hold nothing.
        let spec = json!({"args": ["a", "b"], "env": [{"name": "X"}], "intent": "suspended"});
        let prior = json!({"args": ["a"], "env": [], "intent": null});
        assert_eq!(
            Json::Object(visible(&spec, None, &prior)),
            json!({"args": ["a", "b"]})
        );
    }

    #[test]
    fn an_apply_names_the_fields_other_managers_keep() {
        let live = json!({"model": {"name": "m", "servedName": "legacy"}, "intent": "suspended",
                          "args": ["x"], "container": {"image": "i"}});
        let desired = json!({"model": {"name": "m"}, "args": ["y"], "container": {"image": "i"}});
        assert_eq!(
            kept_by_others(&live, &desired),
            vec!["intent".to_owned(), "model.servedName".to_owned()]
        );
        assert!(kept_by_others(&desired, &desired).is_empty());
    }
}
