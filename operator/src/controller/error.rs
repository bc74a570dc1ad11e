//! The one error type of every reconciler, with a stable `metric_label` per variant (STYLE.md: controller-rs habit),
//! so `model_fleet_reconcile_errors_total{error=...}` says *which* failure rises.

/// Everything a reconcile can fail with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A request to the API server failed (network, 4xx/5xx, conflict).
    #[error("Kubernetes API request failed: {0}")]
    Kube(#[from] kube::Error),

    /// Turning a rendered object into JSON (or back) failed; a bug in render or the types.
    #[error("serializing {what}: {source}")]
    Serialization {
        /// What was being (de)serialized, e.g. `Deployment foo`.
        what: String,
        /// The serde error.
        #[source]
        source: serde_json::Error,
    },

    /// The object is missing a field the API server always sets (name, namespace, uid).
    #[error("object has no {0}")]
    MissingObjectKey(&'static str),

    /// The stored object could not be deserialized into our type (the `DeserializeGuard` caught it).
    #[error("invalid object: {0}")]
    InvalidObject(String),

    /// The spec is valid for the API server but cannot be rendered (e.g. the GPU budget fits no class).
    /// Reported as a condition; retrying does not help until the spec changes.
    #[error("invalid spec: {0}")]
    InvalidSpec(String),

    /// A CRD the object needs (KEDA `ScaledObject`, Gateway API `HTTPRoute`) is not installed.
    #[error("dependency missing: {0}")]
    DependencyMissing(String),

    /// Leader election could not talk to its Lease.
    #[error("leader election failed: {0}")]
    Lease(#[from] kube_lease_manager::LeaseManagerError),
}

impl Error {
    /// Stable, low-cardinality label for the error metric (`snake_case`, never contains user data).
    pub fn metric_label(&self) -> &'static str {
        match self {
            Error::Kube(kube::Error::Api(status)) if status.code == 409 => "kube_conflict",
            Error::Kube(kube::Error::Api(status)) if status.code == 422 || status.code == 400 => {
                "kube_invalid"
            }
            Error::Kube(_) => "kube_api",
            Error::Serialization { .. } => "serialization",
            Error::MissingObjectKey(_) => "missing_object_key",
            Error::InvalidObject(_) => "invalid_object",
            Error::InvalidSpec(_) => "invalid_spec",
            Error::DependencyMissing(_) => "dependency_missing",
            Error::Lease(_) => "lease",
        }
    }

    /// Whether the error is a 404 from the API server (the object or its kind does not exist).
    pub fn is_not_found(&self) -> bool {
        matches!(self, Error::Kube(kube::Error::Api(status)) if status.code == 404)
    }
}

/// Result alias of the controller module.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    fn api_error(code: u16) -> Error {
        let status = kube::core::Status::failure("boom", "Reason").with_code(code);
        Error::Kube(kube::Error::Api(Box::new(status)))
    }

    #[test]
    fn metric_labels_are_stable_and_distinguish_api_failures() {
        assert_eq!(api_error(409).metric_label(), "kube_conflict");
        assert_eq!(api_error(422).metric_label(), "kube_invalid");
        assert_eq!(api_error(500).metric_label(), "kube_api");
        assert_eq!(
            Error::InvalidSpec("x".into()).metric_label(),
            "invalid_spec"
        );
        assert_eq!(
            Error::InvalidObject("x".into()).metric_label(),
            "invalid_object"
        );
        assert_eq!(
            Error::MissingObjectKey("uid").metric_label(),
            "missing_object_key"
        );
        assert_eq!(
            Error::DependencyMissing("keda".into()).metric_label(),
            "dependency_missing"
        );
        let serde = serde_json::from_str::<u8>("x").unwrap_err();
        let err = Error::Serialization {
            what: "Deployment a".into(),
            source: serde,
        };
        assert_eq!(err.metric_label(), "serialization");
    }

    #[test]
    fn not_found_is_only_a_404() {
        assert!(api_error(404).is_not_found());
        assert!(!api_error(409).is_not_found());
        assert!(!Error::InvalidSpec("x".into()).is_not_found());
    }
}
