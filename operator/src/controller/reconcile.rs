//! The frame every reconcile shares, around each kind's own steps ([`Reconcile::pipeline`]):
//! time it (`model_fleet_reconcile_duration_seconds`), report an object that does not deserialize
//! (Warning Event, `invalid_object` metric, no requeue: its next edit triggers a reconcile), leave
//! a deleting object to garbage collection where the kind has no finalizer, reset the object's
//! error backoff on success, record a failure in the status (best effort), and requeue a failure
//! with per-object exponential backoff ([`error_policy`]).

use std::fmt::Debug;
use std::future::Future;
use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::DeserializeGuard;
use kube::core::NamespaceResourceScope;
use kube::runtime::controller::{Action, Error as ControllerError};
use kube::{Api, Client, Resource};
use serde::de::DeserializeOwned;

use super::context::Context;
use super::error::{Error, Invalid, Result};
use super::events;

/// The identity facts every step of a reconcile needs, present on any object the API server
/// returns (`metadata.name`, `namespace`, `uid`, `generation`).
#[derive(Clone, Debug)]
pub struct Owner {
    /// `metadata.name`.
    pub name: String,
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.uid`: children carry it in their ownerReference; pruning matches it.
    pub uid: String,
    /// `metadata.generation`: becomes the status' and conditions' `observedGeneration`.
    pub generation: Option<i64>,
    /// `metadata.resourceVersion` as read: the precondition of the status write, so a status computed from an
    /// outdated read (an earlier object of the same name, or an older generation) is refused with 409 Conflict.
    pub resource_version: Option<String>,
}

impl Owner {
    /// validate (pure): `object` carries the keys the steps need. Spec validation is the API
    /// server's (schema and CEL) and render's (datasets, fit budget, gateway) job.
    ///
    /// # Errors
    /// [`Error::Validate`] naming the absent field.
    pub fn of<K: Resource>(object: &K) -> Result<Owner> {
        let meta = object.meta();
        let key = |value: &Option<String>, field: &'static str| {
            value
                .clone()
                .ok_or(Error::Validate(Invalid::MissingKey(field)))
        };
        Ok(Owner {
            name: key(&meta.name, "metadata.name")?,
            namespace: key(&meta.namespace, "metadata.namespace")?,
            uid: key(&meta.uid, "metadata.uid")?,
            generation: meta.generation,
            resource_version: meta.resource_version.clone(),
        })
    }

    /// Whether one of `child`'s `metadata.ownerReferences` names this owner's UID (a child of an earlier object of
    /// the same name, or someone else's object, does not count).
    pub fn owns(&self, child: &ObjectMeta) -> bool {
        child
            .owner_references
            .iter()
            .flatten()
            .any(|reference| reference.uid == self.uid)
    }

    /// Whether `live` (the object's metadata as the API server has it now) is the object this reconcile read: the
    /// same incarnation (`metadata.uid`), not being deleted, at the same `metadata.generation` (a status write does
    /// not change it, so the operator's own writes never make a read outdated).
    pub fn is_current(&self, live: &ObjectMeta) -> bool {
        live.uid.as_deref() == Some(self.uid.as_str())
            && live.deletion_timestamp.is_none()
            && live.generation == self.generation
    }

    /// Confirms, with a fresh metadata-only read from the API server, that the object this reconcile read from the
    /// cache is still current ([`Owner::is_current`]). A step calls it right before creating a child whose creation
    /// has effects of its own (a Job starts pods): the API server never checks that an ownerReference names a live
    /// object, so a reconcile from an outdated cache (after a stalled watch, or when a child's deletion arrives
    /// before its owner's) would otherwise create a child for a deleted object, which the garbage collector then
    /// removes. What is left is the create request's own transit time.
    ///
    /// # Errors
    /// [`Error::Outdated`] when the object is gone or changed (an outdated read: [`Error::is_conflict`], retried on
    /// fresh data); [`Error::Fetch`] when the read fails.
    pub async fn confirm_current<K>(&self, client: &Client) -> Result<()>
    where
        K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
            + Clone
            + DeserializeOwned
            + Debug,
    {
        let object = format!("{}/{}/{}", K::kind(&()), self.namespace, self.name);
        let live = Api::<K>::namespaced(client.clone(), &self.namespace)
            .get_metadata_opt(&self.name)
            .await
            .map_err(|e| Error::fetch(object.clone(), e))?;
        match live {
            Some(live) if self.is_current(&live.metadata) => Ok(()),
            _ => Err(Error::Outdated { object }),
        }
    }
}

/// One kind's reconcile logic, framed by [`reconcile`] and [`error_policy`].
pub trait Reconcile: Resource<DynamicType = ()> + Debug + Send + Sync + 'static {
    /// Kind name in metrics, logs and Events, e.g. `InferenceService`.
    const KIND: &'static str;

    /// Whether a deleting object is left alone: its children carry ownerReferences, so garbage
    /// collection removes them, with no finalizer and no writes (case O-03). False for a kind that
    /// holds a finalizer and must release it (Dataset).
    const SKIP_DELETING: bool;

    /// The kind's own steps (fetch, validate, render, apply/prune, status).
    ///
    /// # Errors
    /// Any [`Error`] of the steps; the frame reports it and requeues with backoff.
    fn pipeline(&self, ctx: &Context) -> impl Future<Output = Result<Action>> + Send;

    /// After a failed step, records the error in the status (best effort; the default does
    /// nothing).
    fn report_error(&self, ctx: &Context, error: &Error) -> impl Future<Output = ()> + Send {
        let _ = (ctx, error);
        async {}
    }
}

/// The reconcile function given to `kube::runtime::Controller::run` for kind `K`.
///
/// # Errors
/// The [`Error`] of `K`'s [`Reconcile::pipeline`], after [`Reconcile::report_error`].
pub async fn reconcile<K: Reconcile>(
    object: Arc<DeserializeGuard<K>>,
    ctx: Arc<Context>,
) -> Result<Action> {
    let _timer = ctx.metrics.reconcile_started(K::KIND);
    let resource = match &object.0 {
        Ok(resource) => resource,
        Err(invalid) => {
            return Ok(events::report_invalid(&ctx, K::KIND, object.as_ref(), invalid).await);
        }
    };
    // The cache may still hold the version the last own status write replaced: work from the written one.
    let fresher = ctx.status_writes.fresher(resource);
    let resource = fresher.as_deref().unwrap_or(resource);
    if K::SKIP_DELETING && resource.meta().deletion_timestamp.is_some() {
        return Ok(Action::await_change());
    }
    match resource.pipeline(&ctx).await {
        Ok(action) => {
            ctx.reconcile_succeeded(K::KIND, resource);
            Ok(action)
        }
        Err(error) => {
            // A conflict is an outdated read, retried at once: nothing to tell the user.
            if !error.is_conflict() {
                resource.report_error(&ctx, &error).await;
            }
            Err(error)
        }
    }
}

/// The `error_policy` given to `Controller::run` for kind `K`: counts the error by its
/// `metric_label` and requeues with the object's exponential backoff.
pub fn error_policy<K: Reconcile>(
    object: Arc<DeserializeGuard<K>>,
    error: &Error,
    ctx: Arc<Context>,
) -> Action {
    ctx.reconcile_failed(K::KIND, object.as_ref(), error)
}

/// Reports one item of a `Controller::run` stream for kind `K`. Reconcile failures were already reported by
/// [`reconcile`] and [`error_policy`] (status, event, metric); what only the stream carries is logged here: a
/// watch or list that fails (most often `Forbidden`, when the operator's ClusterRole lacks `list`/`watch` on a
/// kind it watches, or a CRD removed while watched). The controller retries those with backoff, so they are
/// warnings, not a reason to exit.
pub async fn report_stream_item<E, Q>(
    kind: &'static str,
    item: std::result::Result<impl Debug, ControllerError<E, Q>>,
) where
    E: std::error::Error + 'static,
    Q: std::error::Error + 'static,
{
    match item {
        Ok(_) | Err(ControllerError::ReconcilerFailed(..)) => {}
        // A child's event for a parent deleted meanwhile (or not in the cache yet at start): nothing to reconcile.
        Err(ControllerError::ObjectNotFound(object)) => {
            tracing::debug!(kind, object = %object, "event for an object not in the cache: skipped");
        }
        Err(ControllerError::QueueError(error)) => {
            tracing::warn!(kind, error = %error, "watch of {kind} or its children failed; retrying with backoff");
        }
        Err(error) => tracing::warn!(kind, error = %error, "controller stream error"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    fn meta(uid: &str, generation: i64) -> ObjectMeta {
        ObjectMeta {
            name: Some("ft".into()),
            namespace: Some("ml".into()),
            uid: Some(uid.into()),
            generation: Some(generation),
            resource_version: Some("7".into()),
            ..ObjectMeta::default()
        }
    }

    #[test]
    fn a_read_is_current_only_for_the_same_live_incarnation_and_generation() {
        let owner = Owner {
            name: "ft".into(),
            namespace: "ml".into(),
            uid: "u1".into(),
            generation: Some(2),
            resource_version: Some("5".into()),
        };
        // A newer resourceVersion of the same generation (a status write) keeps the read current.
        assert!(owner.is_current(&meta("u1", 2)));
        // Re-created under the name, a new generation, or being deleted: outdated.
        assert!(!owner.is_current(&meta("u2", 2)));
        assert!(!owner.is_current(&meta("u1", 3)));
        let deleting = ObjectMeta {
            deletion_timestamp: Some(Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH)),
            ..meta("u1", 2)
        };
        assert!(!owner.is_current(&deleting));
    }
}
