//! The never-adopt rule (issue 18; knative/serving#7556, kubeflow/trainer PR #399): a live object holding a child's
//! name is the resource's only when it carries the UID the rendered child's ownerReferences name. Anything else
//! (someone else's object, or a deleted resource's child still terminating) is a [`ForeignChild`]: never applied
//! over, adopted or deleted, and reported as `Ready=False, ForeignObject`. Pure: the controllers pass what they read.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use serde_json::Value;

use crate::conditions::Reason;

/// A child's name taken by an object this resource does not own.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "apply {child}: it already exists and is not owned by this object ({owners}): Model Fleet never adopts, \
     overwrites or deletes an object it did not create; delete or rename that object (this resource recovers on its \
     own once it is gone)"
)]
pub struct ForeignChild {
    /// `Kind/name` of the child.
    pub child: String,
    /// Who owns the live object, e.g. `owned by TrainingRun/ft-1 (uid 1234), being deleted` or `no owner`.
    pub owners: String,
}

impl ForeignChild {
    /// The `Ready=False` reason that reports it.
    pub const REASON: Reason = Reason::ForeignObject;

    /// The foreign child `child` (`Kind/name`) when the live object's `live_owners` lack every UID of `desired`'s
    /// ownerReferences; `None` when it is ours, or when `desired` names no owner to compare. `deleting`: the live
    /// object has a deletionTimestamp (said in the message).
    pub fn detect(
        child: &str,
        desired: &Value,
        live_owners: &[OwnerReference],
        deleting: bool,
    ) -> Option<ForeignChild> {
        let ours: Vec<&str> = desired["metadata"]["ownerReferences"]
            .as_array()?
            .iter()
            .filter_map(|owner| owner["uid"].as_str())
            .collect();
        if ours.is_empty() || live_owners.iter().any(|o| ours.contains(&o.uid.as_str())) {
            return None;
        }
        let owners = if live_owners.is_empty() {
            "no owner".to_owned()
        } else {
            let list: Vec<String> = live_owners
                .iter()
                .map(|o| format!("{}/{} (uid {})", o.kind, o.name, o.uid))
                .collect();
            format!("owned by {}", list.join(", "))
        };
        Some(ForeignChild {
            child: child.to_owned(),
            owners: if deleting {
                format!("{owners}, being deleted")
            } else {
                owners
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn owner(uid: &str) -> OwnerReference {
        OwnerReference {
            uid: uid.into(),
            name: "owner".into(),
            kind: "InferenceService".into(),
            api_version: "modelfleet.io/v1alpha1".into(),
            ..Default::default()
        }
    }

    // A live object is ours only when it carries the UID of the owner we render; anything else is described.
    #[test]
    fn a_child_name_taken_by_another_owner_is_foreign() {
        let desired = json!({"metadata": {"ownerReferences": [{"uid": "u1", "kind": "InferenceService", "name": "m"}]}});
        let detect = |owners: &[OwnerReference], deleting| {
            ForeignChild::detect("Deployment/m", &desired, owners, deleting).map(|f| f.owners)
        };
        assert_eq!(detect(&[owner("u1")], false), None);
        assert_eq!(
            detect(&[owner("u2")], false).as_deref(),
            Some("owned by InferenceService/owner (uid u2)")
        );
        assert_eq!(detect(&[], false).as_deref(), Some("no owner"));
        assert_eq!(
            detect(&[owner("u0")], true).as_deref(),
            Some("owned by InferenceService/owner (uid u0), being deleted")
        );
        assert_eq!(
            ForeignChild::detect("Deployment/m", &json!({"metadata": {}}), &[], false),
            None
        );
        let foreign = ForeignChild::detect("Deployment/m", &desired, &[], false).unwrap();
        assert!(foreign.to_string().starts_with(
            "apply Deployment/m: it already exists and is not owned by this object (no owner): Model Fleet never adopts"
        ));
    }
}
