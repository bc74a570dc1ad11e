//! The last resort for a child server-side apply cannot mend: one another manager changed so that our apply, merged
//! with its entries, is invalid. A hunt's case: `kubectl patch svc --type merge` replaced the Service's ports with one
//! named `http` on another port; server-side apply merges lists keyed by port, so our port `http` joined theirs and
//! the API server refused the duplicate name (422) at every retry, leaving the service broken until someone deleted
//! the Service by hand.
//!
//! A child of a kind that holds no running workload ([`RECREATED_KINDS`]) is then deleted, with the UID the reconcile
//! read as precondition, and created again from the rendering with a create-only apply: a Service gets a new cluster
//! IP (its DNS name is unchanged), an HTTPRoute or ScaledObject is back within the reconcile. A Deployment or Job is
//! never deleted for this (its pods would go): its error stays on `Ready=False, ReconcileError` for someone to fix.

use kube::api::{DeleteParams, DynamicObject, Preconditions, PropagationPolicy};
use kube::{Client, ResourceExt};
use serde_json::Value;

use super::apply::{CREATE_ONLY_VERSION, Child, dynamic_api, send};
use super::children::ChildCaches;
use super::error::{Cause, Error, Result};

/// The kinds a refused apply deletes and creates again.
pub const RECREATED_KINDS: &[&str] = &["Service", "HTTPRoute", "ScaledObject"];

/// Whether `error`, from applying `child` over an existing object, is an invalid merge that recreating mends: a 422
/// for a kind in [`RECREATED_KINDS`].
pub fn mends(child: &Child, error: &Error) -> bool {
    matches!(
        error,
        Error::Apply { source: Cause::Kube(kube::Error::Api(status)), .. } if status.code == 422
    ) && RECREATED_KINDS.contains(&child.resource.kind.as_str())
}

/// Deletes `live` (the existing `child`; its UID as precondition) and creates `desired` again with a create-only
/// apply.
///
/// # Errors
/// [`Error::Prune`] when the delete fails (other than 404: already gone); the errors of the apply, e.g. a 409 while
/// the old object still finalizes (the reconcile is retried and creates it then).
pub async fn recreate(
    client: &Client,
    caches: &ChildCaches,
    child: &Child,
    live: &DynamicObject,
    desired: &Value,
) -> Result<DynamicObject> {
    tracing::warn!(
        child = %child.display(),
        namespace = %child.namespace,
        "server-side apply cannot mend the child another manager changed; deleting it and creating it again"
    );
    let api = dynamic_api(client, &child.resource, &child.namespace);
    let params = DeleteParams {
        preconditions: live.uid().map(|uid| Preconditions {
            uid: Some(uid),
            resource_version: None,
        }),
        propagation_policy: Some(PropagationPolicy::Background),
        ..DeleteParams::default()
    };
    match api.delete(&child.name, &params).await {
        Ok(_) => {}
        Err(kube::Error::Api(status)) if status.code == 404 => {}
        Err(source) => {
            return Err(Error::Prune {
                child: child.display(),
                source,
            });
        }
    }
    let mut create = desired.clone();
    create["metadata"]["resourceVersion"] = Value::from(CREATE_ONLY_VERSION);
    send(client, caches, child, &create).await
}
