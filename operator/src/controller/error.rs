//! The one error type of every reconciler: one variant per reconcile step (DESIGN.md section 1: fetch -> validate ->
//! render -> apply/prune -> status), each with what it was doing and the cause. `/metrics` counts failures by
//! `step` and by `error` class (STYLE.md: controller-rs' `metric_label` habit), so a failing prune and a failing
//! status write are told apart, and a conflict from a refused field.

use std::fmt;

use model_fleet_api::conditions::Reason;
use model_fleet_api::ownership::ForeignChild;
use model_fleet_api::render::RenderError;

/// A step of the reconcile pipeline: the `step` label of `model_fleet_reconcile_errors_total`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Step {
    /// Reading the object's children and references (Jobs, Datasets, pods, Gateways, discovery).
    Fetch,
    /// Checking the object itself (keys the API server always sets; the `DeserializeGuard`).
    Validate,
    /// Building the children (pure): a spec that cannot be rendered.
    Render,
    /// Writing children (server-side apply, the replica hand-over, Job suspend, the Dataset finalizer).
    Apply,
    /// Deleting children that are no longer rendered.
    Prune,
    /// Writing the status subresource.
    Status,
}

impl Step {
    /// The label value (`fetch`, `validate`, `render`, `apply`, `prune`, `status`).
    pub fn as_str(self) -> &'static str {
        match self {
            Step::Fetch => "fetch",
            Step::Validate => "validate",
            Step::Render => "render",
            Step::Apply => "apply",
            Step::Prune => "prune",
            Step::Status => "status",
        }
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a reconcile error names a kube error in `Ready`'s message and the log: an API server refusal in its own
/// words with its code and reason (`Service "svc" is invalid: spec.ports[1].name: Duplicate value: "http" (422
/// Invalid)`), not kube's `Display`, which appends the whole `Status` in Rust's debug form (a hunt's finding); other
/// errors (connection, TLS, decoding) as kube says them.
pub fn words(error: &kube::Error) -> String {
    let kube::Error::Api(status) = error else {
        return error.to_string();
    };
    let code = match status.reason.as_str() {
        "" => status.code.to_string(),
        reason => format!("{} {reason}", status.code),
    };
    match status.message.as_str() {
        "" => format!("the API server refused it ({code})"),
        message => format!("{message} ({code})"),
    }
}

/// Why a write failed: the API server, or turning our object into JSON (a bug in render or the types).
#[derive(Debug, thiserror::Error)]
pub enum Cause {
    /// A request to the API server failed (network, 4xx/5xx, conflict).
    #[error("{}", words(.0))]
    Kube(#[from] kube::Error),
    /// Serializing or deserializing an object failed.
    #[error("serializing: {0}")]
    Serialization(#[from] serde_json::Error),
}

/// What the validate step found wrong with the object itself.
#[derive(Debug, thiserror::Error)]
pub enum Invalid {
    /// A field the API server always sets is absent (name, namespace, uid).
    #[error("the object has no {0}")]
    MissingKey(&'static str),
    /// The stored object does not deserialize into our type (kube's `DeserializeGuard` caught it).
    #[error("the object does not match the schema: {0}")]
    Schema(String),
}

/// Everything a reconcile can fail with, by step.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// fetch: reading `what` failed.
    #[error("fetch {what}: {}", words(.source))]
    Fetch {
        /// What was read, e.g. `Jobs of ml/ft-1`.
        what: String,
        /// The API error.
        #[source]
        source: kube::Error,
    },
    /// validate: the object itself is unusable.
    #[error("validate: {0}")]
    Validate(#[from] Invalid),
    /// render: the spec cannot be rendered; reported as a condition, retrying does not help until the spec changes.
    #[error("render: {0}")]
    Render(RenderError),
    /// apply: writing `child` failed.
    #[error("apply {child}: {source}")]
    Apply {
        /// `Kind/name` of the child (or the object's own field written, e.g. its finalizers).
        child: String,
        /// Why.
        #[source]
        source: Cause,
    },
    /// apply: `child` exists but is not owned by the object being reconciled (someone else's, or a previous object's
    /// of the same name still being deleted). It is never adopted, overwritten or deleted; the reconcile waits.
    #[error(transparent)]
    Foreign(ForeignChild),
    /// apply: a create-only apply of `child` ([`apply::Live::Unseen`](super::apply::Live::Unseen)) found it
    /// existing and ours: the child cache had not seen it yet. Retried on fresh data like a status conflict.
    #[error("apply {child}: it exists, but the child cache had not seen it yet")]
    Unseen {
        /// `Kind/name` of the child.
        child: String,
    },
    /// apply: `object` was deleted, re-created under its name or given a new generation since the reconcile read it
    /// from the cache, found by a fresh read right before a child is created
    /// ([`Owner::confirm_current`](super::reconcile::Owner::confirm_current)). Nothing is created from the outdated
    /// read; retried on fresh data like a status conflict.
    #[error(
        "{object} was deleted or changed since it was read: nothing is created from the outdated read"
    )]
    Outdated {
        /// `Kind/namespace/name` of the object.
        object: String,
    },
    /// prune: deleting (or listing for deletion) `child` failed.
    #[error("prune {child}: {}", words(.source))]
    Prune {
        /// `Kind/name` of the child, or `Kind` when the list failed.
        child: String,
        /// The API error.
        #[source]
        source: kube::Error,
    },
    /// status: writing the status of `object` failed.
    #[error("status of {object}: {source}")]
    Status {
        /// `Kind/name` of the object.
        object: String,
        /// Why.
        #[source]
        source: Cause,
    },
}

impl Error {
    /// A fetch failure.
    pub fn fetch(what: impl Into<String>, source: kube::Error) -> Self {
        Error::Fetch {
            what: what.into(),
            source,
        }
    }

    /// An apply failure.
    pub fn apply(child: impl Into<String>, source: impl Into<Cause>) -> Self {
        Error::Apply {
            child: child.into(),
            source: source.into(),
        }
    }

    /// The same error with `note` appended to what it names (the `what` of [`Error::Fetch`], the `child` of
    /// [`Error::Apply`]): context the step knows and the API server's words lack, such as where a namespace came
    /// from. Other errors are returned unchanged.
    pub fn noting(self, note: &str) -> Self {
        match self {
            Error::Fetch { what, source } => Error::Fetch {
                what: what + note,
                source,
            },
            Error::Apply { child, source } => Error::Apply {
                child: child + note,
                source,
            },
            other => other,
        }
    }

    /// A prune failure.
    pub fn prune(child: impl Into<String>, source: kube::Error) -> Self {
        Error::Prune {
            child: child.into(),
            source,
        }
    }

    /// A status write failure.
    pub fn status(object: impl Into<String>, source: impl Into<Cause>) -> Self {
        Error::Status {
            object: object.into(),
            source: source.into(),
        }
    }

    /// The step that failed (the `step` metric label).
    pub fn step(&self) -> Step {
        match self {
            Error::Fetch { .. } => Step::Fetch,
            Error::Validate(_) => Step::Validate,
            Error::Render(_) => Step::Render,
            Error::Apply { .. }
            | Error::Foreign(_)
            | Error::Unseen { .. }
            | Error::Outdated { .. } => Step::Apply,
            Error::Prune { .. } => Step::Prune,
            Error::Status { .. } => Step::Status,
        }
    }

    /// Stable, low-cardinality error class (the `error` metric label, `snake_case`, never user data): the API
    /// error class for API failures (`kube_conflict`, `kube_invalid`, `kube_forbidden`, `kube_not_found`,
    /// `kube_api`, `kube_transport`), else `serialization`, `missing_object_key`, `invalid_object`, `invalid_spec`,
    /// `foreign_object`.
    pub fn metric_label(&self) -> &'static str {
        match self {
            Error::Fetch { source, .. } | Error::Prune { source, .. } => kube_class(source),
            Error::Apply { source, .. } | Error::Status { source, .. } => match source {
                Cause::Kube(e) => kube_class(e),
                Cause::Serialization(_) => "serialization",
            },
            Error::Validate(Invalid::MissingKey(_)) => "missing_object_key",
            Error::Validate(Invalid::Schema(_)) => "invalid_object",
            Error::Render(_) => "invalid_spec",
            Error::Foreign(_) => "foreign_object",
            Error::Unseen { .. } | Error::Outdated { .. } => "kube_conflict",
        }
    }

    /// The `Ready=False` reason of the condition that reports this error: `ForeignObject` for [`Error::Foreign`],
    /// `ReconcileError` for everything else.
    pub fn reason(&self) -> Reason {
        match self {
            Error::Foreign(_) => ForeignChild::REASON,
            _ => Reason::ReconcileError,
        }
    }

    /// Whether the reconcile waits on something outside it ([`Error::Foreign`]) rather than failed: retried at a
    /// steady interval, without the exponential backoff of failures.
    pub fn is_wait(&self) -> bool {
        matches!(self, Error::Foreign(_))
    }

    /// Whether the error is a 404 from the API server (the object or its kind does not exist).
    pub fn is_not_found(&self) -> bool {
        self.api_code() == Some(404)
    }

    /// Whether the reconcile worked from an outdated read: a status write refused with 409 Conflict (the object
    /// changed since it was read: the write's `resourceVersion` precondition failed), [`Error::Unseen`] or
    /// [`Error::Outdated`]. Retried soon on fresh data, neither reported in the status nor backed off from. (A 409 on
    /// a plain child apply is another field manager's conflict: a real failure; applies are forced, so it does not
    /// happen today.)
    pub fn is_conflict(&self) -> bool {
        matches!(self, Error::Unseen { .. } | Error::Outdated { .. })
            || (matches!(self, Error::Status { .. }) && self.api_code() == Some(409))
    }

    /// The HTTP status of an error the API server answered, if it is one.
    fn api_code(&self) -> Option<u16> {
        let kube = match self {
            Error::Fetch { source, .. } | Error::Prune { source, .. } => Some(source),
            Error::Apply { source, .. } | Error::Status { source, .. } => match source {
                Cause::Kube(e) => Some(e),
                Cause::Serialization(_) => None,
            },
            Error::Validate(_)
            | Error::Render(_)
            | Error::Foreign(_)
            | Error::Unseen { .. }
            | Error::Outdated { .. } => None,
        };
        match kube {
            Some(kube::Error::Api(status)) => Some(status.code),
            _ => None,
        }
    }
}

/// The class of an API error by its HTTP status.
fn kube_class(error: &kube::Error) -> &'static str {
    match error {
        kube::Error::Api(status) => match status.code {
            409 => "kube_conflict",
            400 | 422 => "kube_invalid",
            401 | 403 => "kube_forbidden",
            404 => "kube_not_found",
            _ => "kube_api",
        },
        _ => "kube_transport",
    }
}

/// Result alias of the controller module.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    fn api(code: u16) -> kube::Error {
        let status = kube::core::Status::failure("boom", "Reason").with_code(code);
        kube::Error::Api(Box::new(status))
    }

    #[test]
    fn labels_name_the_step_and_the_api_error_class() {
        let cases = [
            (
                Error::apply("Deployment/a", api(409)),
                "apply",
                "kube_conflict",
            ),
            (
                Error::apply("Deployment/a", api(422)),
                "apply",
                "kube_invalid",
            ),
            (
                Error::prune("ScaledObject/a", api(500)),
                "prune",
                "kube_api",
            ),
            (
                Error::status("InferenceService/a", api(403)),
                "status",
                "kube_forbidden",
            ),
            (Error::fetch("Jobs", api(404)), "fetch", "kube_not_found"),
            (
                Error::Validate(Invalid::MissingKey("metadata.uid")),
                "validate",
                "missing_object_key",
            ),
            (
                Error::Validate(Invalid::Schema("x".into())),
                "validate",
                "invalid_object",
            ),
            (
                Error::Render(RenderError::NoGateway),
                "render",
                "invalid_spec",
            ),
        ];
        for (error, step, class) in cases {
            assert_eq!(
                (error.step().as_str(), error.metric_label()),
                (step, class),
                "{error}"
            );
        }
        // An API server refusal reads in its own words, not as kube's debug dump of the Status (a hunt's finding).
        assert_eq!(
            Error::apply("Service/a", api(422)).to_string(),
            "apply Service/a: boom (422 Reason)"
        );
        assert_eq!(
            Error::prune("Service/a", api(500)).to_string(),
            "prune Service/a: boom (500 Reason)"
        );
        assert_eq!(
            Error::fetch("Jobs", api(404)).to_string(),
            "fetch Jobs: boom (404 Reason)"
        );
        let bare = kube::Error::Api(Box::new(kube::core::Status::failure("", "").with_code(500)));
        assert_eq!(words(&bare), "the API server refused it (500)");
        let serde = serde_json::from_str::<u8>("x").unwrap_err();
        let err = Error::apply("Deployment/a", serde);
        assert_eq!(err.metric_label(), "serialization");
        assert_eq!(
            err.to_string(),
            "apply Deployment/a: serializing: expected value at line 1 column 1"
        );
    }

    #[test]
    fn not_found_is_only_a_404_and_conflicts_are_outdated_reads() {
        assert!(Error::status("x", api(404)).is_not_found());
        assert!(!Error::status("x", api(409)).is_not_found());
        assert!(Error::status("x", api(409)).is_conflict());
        assert!(!Error::apply("Deployment/a", api(409)).is_conflict());
        assert!(!Error::status("x", api(404)).is_conflict());
        let unseen = Error::Unseen {
            child: "Service/a".into(),
        };
        assert!(unseen.is_conflict() && !unseen.is_wait());
        assert_eq!(
            (unseen.step(), unseen.metric_label()),
            (Step::Apply, "kube_conflict")
        );
        let outdated = Error::Outdated {
            object: "TrainingRun/ml/ft".into(),
        };
        assert!(outdated.is_conflict() && !outdated.is_wait() && !outdated.is_not_found());
        assert_eq!(
            (outdated.step(), outdated.metric_label()),
            (Step::Apply, "kube_conflict")
        );
        assert!(!Error::Render(RenderError::NoGateway).is_not_found());
    }
}
