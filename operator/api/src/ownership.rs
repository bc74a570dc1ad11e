//! The never-adopt rule (issue 18; knative/serving#7556, kubeflow/trainer PR #399): a live object holding a child's
//! name is the resource's only when it carries the UID the rendered child's ownerReferences name. Anything else
//! (someone else's object, or a deleted resource's child still terminating) is a [`ForeignChild`]: never applied
//! over or adopted, and reported as `Ready=False, ForeignObject`. It is never deleted either, with one exception:
//! a child whose only owner is a deleted predecessor of the resource ([`predecessor_uid`]) and that the garbage
//! collector has not marked for deletion is garbage by Kubernetes' own rules, and the operator deletes it as the
//! collector would. Pure: the controllers pass what they read.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use serde_json::Value;

use crate::conditions::Reason;

/// `metadata.resourceVersion` of a create-only apply. A server-side apply whose body carries a `resourceVersion` is
/// refused with 409 Conflict unless the live object has exactly that version, and creates the object when none
/// exists (Kubernetes server-side apply: a `resourceVersion` in the applied configuration is a precondition). No
/// object has this version: it is `i64::MAX`, beyond any etcd revision, and still a valid version for storage
/// layers that keep revisions as signed 64-bit integers (kine, used by k3s and MicroK8s). The operator creates
/// children with it, and the provider creates resources with it (a second resource of the same name fails instead of
/// taking the first one's object over).
pub const CREATE_ONLY_VERSION: &str = "9223372036854775807";

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

/// When the live object's only owner shares kind and name (and API version) with the owner `desired` names but
/// carries another UID, that owner's UID: the live object is a child of a deleted predecessor (a resource deleted and
/// created again under its name; a name is unique per namespace and kind, so while the owner we render for exists,
/// the predecessor does not). Such an object is garbage by Kubernetes' ownership rules; the garbage collector
/// normally removes it within a second, and the operator removes it itself when the collector has not (it missed the
/// deletion across an API server restart in the drills). `None` for any other owner (someone else's object).
pub fn predecessor_uid(desired: &Value, live_owners: &[OwnerReference]) -> Option<String> {
    let ours = desired["metadata"]["ownerReferences"].as_array()?.first()?;
    let [live] = live_owners else {
        return None;
    };
    let same = |field: &str, value: &str| ours[field].as_str() == Some(value);
    (same("apiVersion", &live.api_version)
        && same("kind", &live.kind)
        && same("name", &live.name)
        && !same("uid", &live.uid))
    .then(|| live.uid.clone())
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

    #[test]
    fn only_a_sole_owner_of_the_same_kind_and_name_is_a_predecessor() {
        let desired = json!({"metadata": {"ownerReferences": [{"apiVersion": "modelfleet.io/v1alpha1",
            "kind": "InferenceService", "name": "owner", "uid": "u1"}]}});
        let predecessor = |owners: &[OwnerReference]| predecessor_uid(&desired, owners);
        assert_eq!(predecessor(&[owner("u0")]).as_deref(), Some("u0"));
        assert_eq!(predecessor(&[owner("u1")]), None, "ours");
        assert_eq!(predecessor(&[]), None, "no owner: someone else's");
        assert_eq!(predecessor(&[owner("u0"), owner("u2")]), None, "shared");
        let renamed = OwnerReference {
            name: "other".into(),
            ..owner("u0")
        };
        assert_eq!(predecessor(&[renamed]), None, "another resource's");
        let other_kind = OwnerReference {
            kind: "TrainingRun".into(),
            ..owner("u0")
        };
        assert_eq!(predecessor(&[other_kind]), None);
        assert_eq!(predecessor_uid(&json!({}), &[owner("u0")]), None);
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
