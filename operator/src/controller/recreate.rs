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
//! backoff. A Service the operator re-created is not re-created again within [`RECREATE_COOLDOWN`]: a manager that
//! keeps putting its change back gets the error reported instead of a new Service at every reconcile. Deployments, Jobs, HTTPRoutes, ScaledObjects and InterceptorRoutes are never deleted for this: the error
//! stays on `Ready=False, ReconcileError`.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ObjectReference;
use kube::api::{DeleteParams, DynamicObject, PostParams, Preconditions, PropagationPolicy};
use kube::{Client, ResourceExt};
use serde_json::Value;

use super::apply::{CREATE_ONLY_VERSION, Child, FIELD_MANAGER, dynamic_api, send};
use super::children::ChildCaches;
use super::error::{Cause, Error, Result};
use super::events;
use super::events::EventRecorder;

/// The reason of the Warning Event [`announce`] posts.
pub const RECREATED_EVENT_REASON: &str = "Recreated";

/// How long after re-creating a child the operator will not re-create it again (seconds: 600). A manager that keeps
/// putting its change back (a GitOps tool re-applying a bad port) would otherwise cost a delete and a create, and a
/// new cluster IP, at every reconcile; within this time the apply's error is reported instead, naming the fight.
pub const RECREATE_COOLDOWN: Duration = Duration::from_secs(600);

/// The objects [`recreate`] created lately, by UID, with when; entries older than [`RECREATE_COOLDOWN`] are forgotten
/// at the next record. Keyed by the created object's UID, not its name: a Service of the same name created otherwise
/// (its InferenceService deleted and created again) is another object and may be re-created (a review's finding).
/// Process memory: a restarted operator may re-create once more.
#[derive(Debug, Default)]
pub struct RecentRecreates(Mutex<HashMap<String, Instant>>);

impl RecentRecreates {
    /// Whether the object with `uid` is one [`recreate`] created within [`RECREATE_COOLDOWN`] before `now`.
    pub fn within_cooldown(&self, uid: &str, now: Instant) -> bool {
        let recent = self.0.lock().unwrap_or_else(|e| e.into_inner());
        recent
            .get(uid)
            .is_some_and(|at| now.saturating_duration_since(*at) < RECREATE_COOLDOWN)
    }

    /// Records that [`recreate`] created the object with `uid` at `now`, forgetting those older than the cooldown.
    pub fn record(&self, uid: String, now: Instant) {
        let mut recent = self.0.lock().unwrap_or_else(|e| e.into_inner());
        recent.retain(|_, at| now.saturating_duration_since(*at) < RECREATE_COOLDOWN);
        recent.insert(uid, now);
    }
}

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
    if live
        .uid()
        .is_some_and(|uid| caches.recreated.within_cooldown(&uid, Instant::now()))
    {
        return Err(fighting(refused));
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
    let created = send(client, caches, child, &create).await?;
    if let Some(uid) = created.uid() {
        caches.recreated.record(uid, Instant::now());
    }
    Ok(created)
}

/// The apply's error, naming the re-creation and what to do: another manager keeps making the child invalid. The
/// words stay the same from one retry to the next (no "N s ago"), so the status is not rewritten at each.
fn fighting(refused: Error) -> Error {
    refused.noting(&format!(
        " (re-created by the operator within the last {} minutes already: another manager keeps changing it; stop \
         that manager, or delete the child and the operator creates it again)",
        RECREATE_COOLDOWN.as_secs() / 60
    ))
}

/// Posts a Warning Event `Recreated` about `regarding` (the owner) saying that `child` was deleted and created again
/// ([`recreate`]), so the disruption (a Service's new cluster IP) is told where `kubectl describe` shows it, not only
/// in the operator's log. Best effort, as every Event ([`events`]).
pub async fn announce(recorder: &EventRecorder, regarding: &ObjectReference, child: &Child) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_object_is_recreated_at_most_once_per_cooldown() {
        let recent = RecentRecreates::default();
        let start = Instant::now();
        assert!(!recent.within_cooldown("a", start));
        recent.record("a".into(), start);
        let later = start + Duration::from_secs(30);
        assert!(recent.within_cooldown("a", later));
        assert!(!recent.within_cooldown("b", later), "per object");
        let after = start + RECREATE_COOLDOWN;
        assert!(!recent.within_cooldown("a", after));
        recent.record("b".into(), after);
        assert_eq!(
            recent.0.lock().unwrap().len(),
            1,
            "the old entry is forgotten"
        );
    }

    #[test]
    fn the_refusal_names_the_fight_and_the_fix() {
        let refused = Error::apply(
            "Service/a",
            kube::Error::Api(Box::new(
                kube::core::Status::failure("duplicate", "Invalid").with_code(422),
            )),
        );
        let message = fighting(refused).to_string();
        assert!(
            message.contains("within the last 10 minutes")
                && message.contains("another manager keeps changing it"),
            "{message}"
        );
    }
}
