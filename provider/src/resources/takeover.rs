//! Whether a write takes over the fields other field managers own (server-side apply with `force`), from what the
//! resource's private state ([`super::private_state`]) records.
//!
//! `terraform import` is the user's word that Terraform now manages the object, so the first write after it takes
//! over the fields it writes rather than failing on a conflict with the manager that created them (kubectl, a CI
//! job). A change of the provider's `field_manager` is the same: the new manager owns nothing yet. After that, a field
//! another manager took from Terraform (`kubectl apply --server-side --force-conflicts`) is a conflict, as the
//! provider's `force_conflicts = false` promises, however many fields were taken.
//!
//! Two keys record this: `imported` (`true` from `ImportResourceState` until the first write) and `field_manager`
//! (the manager of the last write). A state written before these keys existed has neither: its write is forced only
//! when our field manager owns no `spec` field of the object, the rule this provider used before.

use serde_json::Value as Json;

use super::private_state;

/// The key marking a resource imported and not written since.
pub const IMPORTED_KEY: &str = "imported";

/// The key of the field manager that last wrote the object.
pub const WRITER_KEY: &str = "field_manager";

/// What the private state says of forcing the next write (the provider's `force_conflicts` forces every write
/// besides).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Takeover {
    /// Imported and not written since, or last written by another field manager: force.
    Force,
    /// Last written by this field manager: a conflict is an error.
    Conflict,
    /// Nothing recorded (a state from an older provider): force only when our manager owns no `spec` field.
    WhenUnowned,
}

impl Takeover {
    /// Whether the write is forced, given whether our field manager owns any `spec` field of the live object.
    pub fn forces(self, owns_spec_fields: bool) -> bool {
        match self {
            Takeover::Force => true,
            Takeover::Conflict => false,
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
        Some(writer) if writer == manager => Takeover::Conflict,
        Some(_) => Takeover::Force,
        None => Takeover::WhenUnowned,
    }
}

/// `private` of a resource just imported: its first write takes over.
pub fn imported(private: &[u8]) -> Vec<u8> {
    private_state::edited(private, |object| {
        object.remove(WRITER_KEY);
        object.insert(IMPORTED_KEY.to_owned(), Json::Bool(true));
    })
}

/// `private` after `manager` wrote the object: no longer a fresh import, and `manager` is its writer.
pub fn written(private: &[u8], manager: &str) -> Vec<u8> {
    private_state::edited(private, |object| {
        object.remove(IMPORTED_KEY);
        object.insert(WRITER_KEY.to_owned(), Json::String(manager.to_owned()));
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_import_forces_its_first_write_only() {
        let fresh = imported(br#"{"cluster_uid": "u", "field_manager": "terraform-modelfleet"}"#);
        assert_eq!(decide(&fresh, "terraform-modelfleet"), Takeover::Force);
        assert_eq!(private_state::object(&fresh)["cluster_uid"], "u");
        let after = written(&fresh, "terraform-modelfleet");
        assert_eq!(decide(&after, "terraform-modelfleet"), Takeover::Conflict);
        assert!(
            !Takeover::Conflict.forces(false),
            "everything taken by others is still a conflict"
        );
        assert_eq!(private_state::object(&after)["cluster_uid"], "u");
    }

    #[test]
    fn another_manager_takes_over_and_old_states_keep_the_old_rule() {
        let ours = written(b"", "terraform-modelfleet");
        assert_eq!(decide(&ours, "terraform-platform"), Takeover::Force);
        assert_eq!(decide(b"", "terraform-modelfleet"), Takeover::WhenUnowned);
        assert_eq!(
            decide(br#"{"cluster_uid": "u"}"#, "m"),
            Takeover::WhenUnowned
        );
        assert!(Takeover::WhenUnowned.forces(false));
        assert!(!Takeover::WhenUnowned.forces(true));
        assert!(Takeover::Force.forces(true));
        // A second write by the same manager leaves the bytes as they were.
        assert_eq!(written(&ours, "terraform-modelfleet"), ours);
    }
}
