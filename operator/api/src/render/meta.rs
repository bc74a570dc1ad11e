//! Labels, owner references and object metadata shared by every child.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::{Resource, ResourceExt};

use crate::names::label_value;

/// Field manager of the operator's server-side applies.
pub const FIELD_MANAGER: &str = "model-fleet-operator";
/// `app.kubernetes.io/managed-by` value.
pub const MANAGED_BY: &str = "model-fleet-operator";
/// Selector label of an InferenceService's pods (value: the resource name as a label value).
pub const LABEL_INFERENCE: &str = "modelfleet.io/inference-service";
/// Label of a TrainingRun's pods (value: the resource name as a label value).
pub const LABEL_TRAINING: &str = "modelfleet.io/training-run";

/// The owner's identity needed for children.
pub(crate) struct Owner {
    pub name: String,
    pub namespace: Option<String>,
    pub reference: OwnerReference,
}

impl Owner {
    /// Owner data of `obj`; `uid` is empty when the object never came from an API server
    /// (`render -f`).
    pub fn of<K: Resource<DynamicType = ()>>(obj: &K) -> Owner {
        Owner {
            name: obj.name_any(),
            namespace: obj.namespace(),
            reference: OwnerReference {
                api_version: K::api_version(&()).into_owned(),
                kind: K::kind(&()).into_owned(),
                name: obj.name_any(),
                uid: obj.uid().unwrap_or_default(),
                controller: Some(true),
                block_owner_deletion: Some(true),
            },
        }
    }
}

/// Labels on every child and pod: Kubernetes recommended labels plus `selector`.
pub(crate) fn labels(
    owner: &Owner,
    component: &str,
    selector: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let mut l = BTreeMap::from([
        (
            "app.kubernetes.io/name".to_string(),
            format!("model-fleet-{component}"),
        ),
        (
            "app.kubernetes.io/instance".to_string(),
            label_value(&owner.name),
        ),
        (
            "app.kubernetes.io/component".to_string(),
            component.to_string(),
        ),
        (
            "app.kubernetes.io/part-of".to_string(),
            "model-fleet".to_string(),
        ),
        (
            "app.kubernetes.io/managed-by".to_string(),
            MANAGED_BY.to_string(),
        ),
    ]);
    l.extend(selector.clone());
    l
}

/// Metadata of a child named `name`.
pub(crate) fn child_meta(
    owner: &Owner,
    name: String,
    labels: BTreeMap<String, String>,
) -> ObjectMeta {
    ObjectMeta {
        name: Some(name),
        namespace: owner.namespace.clone(),
        labels: Some(labels),
        owner_references: Some(vec![owner.reference.clone()]),
        ..Default::default()
    }
}
