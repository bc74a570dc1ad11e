//! Which changes of an InferenceService start a reconcile (issue 17).
//!
//! Every status write of the operator is itself a change of the object, and without a filter each one queues a
//! reconcile that reads every child again to find nothing to do (about one wasted reconcile per write). The filter
//! is controller-runtime's `GenerationChangedPredicate` widened to every input a reconcile reads from the object:
//! the UID (an object deleted and created again under the same name is new), `metadata.generation` (the spec),
//! labels, annotations, the deletion timestamp, and `status.idle` (the record idle suspension decides from: the
//! reconcile that writes `suspendedAt` is followed by the one that suspends). A change of
//! anything else in the status (its conditions, URL, replica counts: outputs only) starts nothing; a status edited by
//! someone else is rewritten at the next resync or child change. An object that does not deserialize passes on every
//! change (its `resourceVersion`), so its Warning Event is kept current.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use kube::Resource;
use kube::core::DeserializeGuard;
use model_fleet_api::InferenceService;

/// Hash of the reconcile inputs of `guard` for kube's `predicate_filter`: a reconcile starts when it differs from the
/// hash of the last version seen (always for the first).
pub fn inputs(guard: &DeserializeGuard<InferenceService>) -> Option<u64> {
    let meta = guard.meta();
    let mut hasher = DefaultHasher::new();
    // The UID too: an object deleted and created again with the same name and spec (generation 1 both times) must
    // pass as new. kube 5 already keys the filter's memory by namespace, name and UID; hashing the UID keeps that
    // true whatever the key.
    meta.uid.hash(&mut hasher);
    meta.generation.hash(&mut hasher);
    meta.labels.hash(&mut hasher);
    meta.annotations.hash(&mut hasher);
    meta.deletion_timestamp.is_some().hash(&mut hasher);
    match &guard.0 {
        Ok(isvc) => {
            let idle = isvc.status.as_ref().and_then(|s| s.idle.as_ref());
            idle.map(|i| (&i.since, &i.suspended_at, i.generation))
                .hash(&mut hasher);
        }
        Err(_) => meta.resource_version.hash(&mut hasher),
    }
    Some(hasher.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use model_fleet_api::{IdleStatus, InferenceServiceStatus};

    fn service() -> DeserializeGuard<InferenceService> {
        let mut isvc: InferenceService =
            serde_yaml::from_str(include_str!("../../../../examples/inference-kind.yaml"))
                .expect("the example is a valid InferenceService");
        isvc.metadata.generation = Some(1);
        isvc.metadata.resource_version = Some("10".into());
        DeserializeGuard(Ok(isvc))
    }

    fn with(change: impl FnOnce(&mut InferenceService)) -> DeserializeGuard<InferenceService> {
        let mut guard = service();
        if let Ok(isvc) = guard.0.as_mut() {
            change(isvc);
            isvc.metadata.resource_version = Some("11".into());
        }
        guard
    }

    #[test]
    fn a_status_write_of_outputs_starts_nothing() {
        let written = with(|isvc| {
            isvc.status = Some(InferenceServiceStatus {
                url: Some("http://chat.example".into()),
                ..InferenceServiceStatus::default()
            });
        });
        assert_eq!(inputs(&service()), inputs(&written));
    }

    #[test]
    fn spec_labels_annotations_deletion_and_idle_start_a_reconcile() {
        let before = inputs(&service());
        let changes: [fn(&mut InferenceService); 5] = [
            |isvc| isvc.metadata.generation = Some(2),
            |isvc| isvc.metadata.labels = Some([("team".into(), "a".into())].into()),
            |isvc| isvc.metadata.annotations = Some([("note".into(), "x".into())].into()),
            |isvc| {
                isvc.metadata.deletion_timestamp =
                    Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                        k8s_openapi::jiff::Timestamp::UNIX_EPOCH,
                    ))
            },
            |isvc| {
                isvc.status = Some(InferenceServiceStatus {
                    idle: Some(IdleStatus {
                        suspended_at: Some("2026-12-04T10:00:00Z".into()),
                        ..IdleStatus::default()
                    }),
                    ..InferenceServiceStatus::default()
                })
            },
        ];
        for (i, change) in changes.into_iter().enumerate() {
            assert_ne!(
                before,
                inputs(&with(change)),
                "change {i} must start a reconcile"
            );
        }
    }

    #[test]
    fn the_same_object_created_again_under_its_name_starts_a_reconcile() {
        let first = with(|isvc| isvc.metadata.uid = Some("uid-1".into()));
        let again = with(|isvc| isvc.metadata.uid = Some("uid-2".into()));
        assert_ne!(inputs(&first), inputs(&again));
    }

    #[test]
    fn an_object_that_does_not_deserialize_passes_every_change() {
        let broken = |rv: &str| {
            let error = serde_json::from_str::<InferenceService>("{}").unwrap_err();
            let mut guard: DeserializeGuard<InferenceService> =
                DeserializeGuard(Err(kube::core::error_boundary::InvalidObject {
                    error: error.to_string(),
                    metadata: Default::default(),
                }));
            if let Err(invalid) = guard.0.as_mut() {
                invalid.metadata.resource_version = Some(rv.into());
            }
            guard
        };
        assert_ne!(inputs(&broken("1")), inputs(&broken("2")));
    }
}
