//! Whether a write takes over the fields other field managers own (server-side apply with `force`), from what the
//! resource's private state ([`super::private_state`]) records and from the object's managed fields.
//!
//! `terraform import` is the user's word that Terraform now manages the object, so the first write after it takes
//! over the fields it writes rather than failing on a conflict with the manager that created them (kubectl, a CI
//! job). A change of the provider's `field_manager` is the same: the new manager owns nothing yet. So is an object
//! deleted and created again outside Terraform (a restore, a re-create from a dump: a new UID) where our manager
//! owns nothing. After that, a field another manager took from Terraform (`kubectl apply --server-side
//! --force-conflicts`) is a conflict, as the provider's `force_conflicts = false` promises, however many fields were
//! taken.
//!
//! A forced write moves to us only the fields whose value it changes; a field it sends unchanged stays shared with
//! the manager that set it, and a later change of it conflicts with that manager although nobody took it from
//! Terraform. [`only_shared_conflicts`] tells such a conflict apart, and the write is then sent again with force.
//!
//! Three keys record this: `imported` (`true` from `ImportResourceState` until the first write), `field_manager` (the
//! manager of the last write) and `uid` (the UID of the object it wrote). A state written before these keys existed
//! has none of them: its write is forced only when our field manager owns no `spec` field of the object, the rule this
//! provider used before.

use kube::core::Status;
use serde_json::Value as Json;

use super::private_state;

/// The key marking a resource imported and not written since.
pub const IMPORTED_KEY: &str = "imported";

/// The key of the field manager that last wrote the object.
pub const WRITER_KEY: &str = "field_manager";

/// The key of the UID of the object the last write wrote.
pub const UID_KEY: &str = "uid";

/// What the private state says of forcing the next write (the provider's `force_conflicts` forces every write
/// besides).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Takeover {
    /// Imported and not written since, or last written by another field manager: force.
    Force,
    /// Last written by this field manager, to the object of UID `uid` (when recorded): a conflict is an error.
    Conflict {
        /// The UID of the object written; another UID is an object created again since.
        uid: Option<String>,
    },
    /// Nothing recorded (a state from an older provider): force only when our manager owns no `spec` field.
    WhenUnowned,
}

impl Takeover {
    /// Whether the write is forced, given the live object's UID and whether our field manager owns any `spec` field
    /// of it.
    pub fn forces(&self, live_uid: Option<&str>, owns_spec_fields: bool) -> bool {
        match self {
            Takeover::Force => true,
            Takeover::Conflict { uid: Some(uid) } if live_uid.is_some_and(|live| live != uid) => {
                !owns_spec_fields
            }
            Takeover::Conflict { .. } => false,
            Takeover::WhenUnowned => !owns_spec_fields,
        }
    }
}

/// What `private` says of the next write by `manager`.
pub fn decide(private: &[u8], manager: &str) -> Takeover {
    let object = private_state::object(private);
    if object.get(IMPORTED_KEY) == Some(&Json::Bool(true)) {
        return Takeover::Force;
    }
    match object.get(WRITER_KEY).and_then(Json::as_str) {
        Some(writer) if writer == manager => Takeover::Conflict {
            uid: object
                .get(UID_KEY)
                .and_then(Json::as_str)
                .map(str::to_owned),
        },
        Some(_) => Takeover::Force,
        None => Takeover::WhenUnowned,
    }
}

/// `private` of a resource just imported: its first write takes over.
pub fn imported(private: &[u8]) -> Vec<u8> {
    private_state::edited(private, |object| {
        object.remove(WRITER_KEY);
        object.remove(UID_KEY);
        object.insert(IMPORTED_KEY.to_owned(), Json::Bool(true));
    })
}

/// `private` after `manager` wrote the object of UID `uid`: no longer a fresh import, and `manager` is its writer.
pub fn written(private: &[u8], manager: &str, uid: Option<&str>) -> Vec<u8> {
    private_state::edited(private, |object| {
        object.remove(IMPORTED_KEY);
        object.insert(WRITER_KEY.to_owned(), Json::String(manager.to_owned()));
        match uid {
            Some(uid) => object.insert(UID_KEY.to_owned(), Json::String(uid.to_owned())),
            None => object.remove(UID_KEY),
        };
    })
}

/// Whether the server-side apply refusal `status` is a field manager conflict on fields our field set `ours` (the
/// `f:spec` field set of our manager, [`super::managed::owned_spec_fields`]) holds as well: fields shared with the
/// manager that set them before an import or a `field_manager` change, which nobody took from Terraform. A conflict
/// the API server does not name the fields of, or on a field we do not hold, is not.
///
/// The fields come from the refusal's `details.causes[].field` (`.spec.container.image`: reason
/// `FieldManagerConflict`); the CRDs' lists are atomic, so the paths hold field names only. A map key may hold dots
/// (`nvidia.com/gpu`), so the path is matched against the field set's keys rather than split.
pub fn only_shared_conflicts(status: &Status, ours: Option<&Json>) -> bool {
    let (Some(ours), Some(details)) = (ours, status.details.as_ref()) else {
        return false;
    };
    let conflicts: Vec<&str> = details
        .causes
        .iter()
        .filter(|cause| cause.reason == "FieldManagerConflict")
        .map(|cause| cause.field.as_str())
        .collect();
    status.is_conflict()
        && !conflicts.is_empty()
        && conflicts.iter().all(|field| {
            field
                .strip_prefix(".spec")
                .is_some_and(|rest| holds(ours, rest))
        })
}

/// Whether the field set `set` holds the field at `path` (`.a.b`, relative to the set; empty: the set itself).
fn holds(set: &Json, path: &str) -> bool {
    if path.is_empty() {
        return true;
    }
    let (Some(rest), Some(fields)) = (path.strip_prefix('.'), set.as_object()) else {
        return false;
    };
    fields.iter().any(|(key, child)| {
        key.strip_prefix("f:")
            .and_then(|name| rest.strip_prefix(name))
            .is_some_and(|after| {
                (after.is_empty() || after.starts_with('.')) && holds(child, after)
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::core::response::{StatusCause, StatusDetails};
    use serde_json::json;

    #[test]
    fn an_import_forces_its_first_write_only() {
        let fresh = imported(
            br#"{"cluster_uid": "u", "field_manager": "terraform-modelfleet", "uid": "o"}"#,
        );
        assert_eq!(decide(&fresh, "terraform-modelfleet"), Takeover::Force);
        assert_eq!(private_state::object(&fresh)["cluster_uid"], "u");
        let after = written(&fresh, "terraform-modelfleet", Some("o"));
        let conflict = decide(&after, "terraform-modelfleet");
        assert_eq!(
            conflict,
            Takeover::Conflict {
                uid: Some("o".into())
            }
        );
        assert!(
            !conflict.forces(Some("o"), false),
            "everything taken by others is still a conflict"
        );
        assert_eq!(private_state::object(&after)["cluster_uid"], "u");
    }

    #[test]
    fn an_object_created_again_outside_terraform_is_taken_over_when_we_own_nothing() {
        let ours = written(b"", "m", Some("old"));
        let conflict = decide(&ours, "m");
        assert!(conflict.forces(Some("new"), false));
        assert!(!conflict.forces(Some("new"), true));
        assert!(!conflict.forces(None, false));
        assert!(!decide(&written(b"", "m", None), "m").forces(Some("new"), false));
    }

    #[test]
    fn another_manager_takes_over_and_old_states_keep_the_old_rule() {
        let ours = written(b"", "terraform-modelfleet", Some("o"));
        assert_eq!(decide(&ours, "terraform-platform"), Takeover::Force);
        assert_eq!(decide(b"", "terraform-modelfleet"), Takeover::WhenUnowned);
        assert_eq!(
            decide(br#"{"cluster_uid": "u"}"#, "m"),
            Takeover::WhenUnowned
        );
        assert!(Takeover::WhenUnowned.forces(Some("o"), false));
        assert!(!Takeover::WhenUnowned.forces(Some("o"), true));
        assert!(Takeover::Force.forces(Some("o"), true));
        // A second write by the same manager leaves the bytes as they were.
        assert_eq!(written(&ours, "terraform-modelfleet", Some("o")), ours);
    }

    fn conflict(fields: &[&str]) -> Status {
        Status {
            code: 409,
            reason: "Conflict".into(),
            details: Some(StatusDetails {
                causes: fields
                    .iter()
                    .map(|field| StatusCause {
                        reason: "FieldManagerConflict".into(),
                        message: "conflict with \"ops\"".into(),
                        field: (*field).into(),
                    })
                    .collect(),
                name: "taken".into(),
                group: "modelfleet.io".into(),
                kind: "inferenceservices".into(),
                uid: String::new(),
                retry_after_seconds: 0,
            }),
            ..Default::default()
        }
    }

    #[test]
    fn a_conflict_on_fields_we_hold_too_is_shared() {
        let ours = json!({
            "f:container": {"f:image": {}, "f:args": {}, "f:resources": {"f:limits": {"f:nvidia.com/gpu": {}}}},
            "f:replicas": {"f:max": {}},
        });
        let shared = |fields: &[&str]| only_shared_conflicts(&conflict(fields), Some(&ours));
        assert!(shared(&[".spec.container.image", ".spec.replicas.max"]));
        assert!(shared(&[".spec.container.args"]));
        assert!(shared(&[".spec.container.resources.limits.nvidia.com/gpu"]));
        assert!(
            !shared(&[".spec.container.image", ".spec.replicas.min"]),
            "min was taken from us"
        );
        assert!(!shared(&[".spec.container.resources.limits.nvidia.com"]));
        assert!(
            !shared(&[".spec.container.imagePullPolicy"]),
            "a prefix of a name is not the name"
        );
        assert!(!shared(&[]), "a conflict without fields is not judged");
        assert!(!only_shared_conflicts(
            &conflict(&[".spec.container.image"]),
            None
        ));
        let mut unnamed = conflict(&[".spec.container.image"]);
        unnamed.details.as_mut().unwrap().causes[0].reason = "FieldValueInvalid".into();
        assert!(!only_shared_conflicts(&unnamed, Some(&ours)));
    }
}
