//! The last resort for a Service server-side apply cannot mend: one another manager changed so that our apply, merged
//! with its entries, is invalid. A hunt's case: `kubectl patch svc --type merge` replaced the Service's ports with one
//! named `http` on another port; server-side apply merges `ports` by port and protocol, so our port `http` joined
//! theirs and the API server refused the duplicate name (422) at every retry, leaving the service broken until
//! someone deleted the Service by hand.
//!
//! Only a Service, whose keyed `ports` list is where such merges happen (an HTTPRoute's and a ScaledObject's lists
//! are atomic: a 422 there is our rendering refused, by a policy or a CRD rule), and only when our rendering alone is
//! valid: a dry-run create of it must fail with `AlreadyExists` (409), which the API server answers after admission
//! and validation, so a 422 from a ValidatingAdmissionPolicy or a CEL rule keeps the running Service and reports the
//! error (a review's finding: an HTTPRoute a policy refused was deleted and could not be created again). The Service
//! is then deleted, with the UID the reconcile read as precondition, and created again with a create-only apply: it
//! gets a new cluster IP (its DNS name is unchanged). A Service with someone's finalizer stays terminating until that
//! is removed: the create is refused as existing meanwhile, reported as `Ready=False, ReconcileError` and retried with
//! backoff. Deployments, Jobs, HTTPRoutes, ScaledObjects and InterceptorRoutes are never deleted for this: the error
//! stays on `Ready=False, ReconcileError`.

use k8s_openapi::api::core::v1::ObjectReference;
use kube::api::{DeleteParams, DynamicObject, PostParams, Preconditions, PropagationPolicy};
use kube::runtime::events::Recorder;
use kube::{Client, ResourceExt};
use serde_json::Value;

use super::apply::{CREATE_ONLY_VERSION, Child, FIELD_MANAGER, dynamic_api, send};
use super::children::ChildCaches;
use super::error::{Cause, Error, Result};
use super::events;

/// The reason of the Warning Event [`announce`] posts.
pub const RECREATED_EVENT_REASON: &str = "Recreated";

/// The kinds a refused apply deletes and creates again.
pub const RECREATED_KINDS: &[&str] = &["Service"];

/// Whether `error`, from applying `child` over an existing object, may be an invalid merge that recreating mends: a
/// 422 for a kind in [`RECREATED_KINDS`] ([`recreate`] checks the rendering alone first).
pub fn may_mend(child: &Child, error: &Error) -> bool {
    matches!(
        error,
        Error::Apply { source: Cause::Kube(kube::Error::Api(status)), .. } if status.code == 422
    ) && RECREATED_KINDS.contains(&child.resource.kind.as_str())
}

/// When `desired` (the rendering of `child`) alone is valid, deletes `live` (the existing child; its UID as
/// precondition) and creates `desired` again with a create-only apply; else returns `refused`, the error of the apply.
///
/// # Errors
/// `refused` when the dry-run create of `desired` is refused other than with `AlreadyExists`; [`Error::Apply`] when
/// the dry run, the delete (other than 404 or 409: gone, or replaced since the read) or the create fails (a 409 while
/// the old object still finalizes: the next reconcile waits for it).
pub async fn recreate(
    client: &Client,
    caches: &ChildCaches,
    (child, live): (&Child, &DynamicObject),
    desired: &Value,
    refused: Error,
) -> Result<DynamicObject> {
    let api = dynamic_api(client, &child.resource, &child.namespace);
    let apply_error = |source: kube::Error| Error::Apply {
        child: child.display(),
        source: Cause::Kube(source),
    };
    let object: DynamicObject =
        serde_json::from_value(desired.clone()).map_err(|source| Error::Apply {
            child: child.display(),
            source: Cause::Serialization(source),
        })?;
    let dry_run = PostParams {
        dry_run: true,
        field_manager: Some(FIELD_MANAGER.to_owned()),
    };
    match api.create(&dry_run, &object).await {
        // `AlreadyExists` by name: a webhook may deny with 409 too, which is no proof of a valid rendering.
        Err(kube::Error::Api(status)) if status.code == 409 && status.reason == "AlreadyExists" => {
        }
        Err(kube::Error::Api(_)) | Ok(_) => return Err(refused),
        Err(other) => return Err(apply_error(other)),
    }
    tracing::warn!(
        child = %child.display(),
        namespace = %child.namespace,
        "server-side apply cannot mend the child another manager changed; deleting it and creating it again"
    );
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
        Err(kube::Error::Api(status)) if status.code == 404 || status.code == 409 => {}
        Err(source) => return Err(apply_error(source)),
    }
    let mut create = desired.clone();
    create["metadata"]["resourceVersion"] = Value::from(CREATE_ONLY_VERSION);
    send(client, caches, child, &create).await
}

/// Posts a Warning Event `Recreated` about `regarding` (the owner) saying that `child` was deleted and created again
/// ([`recreate`]), so the disruption (a Service's new cluster IP) is told where `kubectl describe` shows it, not only
/// in the operator's log. Best effort, as every Event ([`events`]).
pub async fn announce(recorder: &Recorder, regarding: &ObjectReference, child: &Child) {
    events::warning(
        recorder,
        regarding,
        RECREATED_EVENT_REASON,
        "Recreate",
        format!(
            "deleted {} and created it again: another manager changed it so that server-side apply could not mend it \
             (422); a Service gets a new cluster IP",
            child.display()
        ),
    )
    .await;
}
